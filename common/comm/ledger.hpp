#pragma once
// The accounting of one rank: time, payload bytes, wire bytes and calls per
// breakdown category (docs/design.md "Breakdown categories"), kept separately per
// phase so that one-off setup traffic never pollutes the per-epoch numbers.
//
// Communication is recorded by the Communicator wrapper (every collective goes
// through it); compute is recorded by scoped timers around local kernels.

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>

#include "common/comm/work.hpp"

namespace gcnlab {

enum class Category : int {
  // compute
  spmm, gemm, elementwise, loss, optimizer, pack, sampling,
  sddmm, edge_softmax,  // graph attention (GAT): the SDDMM and the edge softmax with its backward
  // communication
  bcast_dense, bcast_sparse, allreduce, allgather, reduce_scatter, alltoall, p2p,
  staging,  // a staged transport's copies between device buffers and its host buffers (--gpu-comm mpi)
  // epoch time not covered by the above
  other,
  count
};
inline constexpr int kNumCategories = static_cast<int>(Category::count);

std::string_view to_string(Category c);
std::optional<Category> category_from_string(std::string_view s);
bool is_communication(Category c);

enum class Phase : int {
  setup,   // distribution of the graph, index exchanges: once per run
  epoch,   // a training epoch: what the breakdown reports
  eval,    // inference passes for validation/test accuracy (dropout off)
  report,  // gathering results
  count
};
inline constexpr int kNumPhases = static_cast<int>(Phase::count);

struct Tally {
  double time_s = 0;  // for communication: the time the rank spent in it (exposed)
  double payload_bytes = 0;
  double wire_bytes = 0;
  std::int64_t calls = 0;
  // Nonblocking communication only: its wall time (post to completion) minus
  // the exposed time above, i.e. the part computation hid (MG-GCN Sec. 4.3).
  double hidden_s = 0;
  // Bytes a transport moved beyond wire_bytes to use a collective it has:
  // NCCL pads uneven all-gather / reduce-scatter blocks to the largest one.
  // wire_bytes stays the convention's (docs/design.md), equal on every transport.
  double padding_bytes = 0;

  Tally& operator+=(const Tally& o) {
    time_s += o.time_s;
    payload_bytes += o.payload_bytes;
    wire_bytes += o.wire_bytes;
    calls += o.calls;
    hidden_s += o.hidden_s;
    padding_bytes += o.padding_bytes;
    return *this;
  }
};

using CategoryTallies = std::array<Tally, kNumCategories>;
// The kernels' work by the compute category whose scope was open when they
// ran ("other" when none was): common/comm/work.hpp.
using CategoryWork = std::array<KernelWork, kNumCategories>;

inline CategoryWork& operator+=(CategoryWork& a, const CategoryWork& b) {
  for (int c = 0; c < kNumCategories; ++c) a[c] += b[c];
  return a;
}

class Ledger {
 public:
  using Clock = std::chrono::steady_clock;

  // `sync` is called before every clock read so that asynchronous devices
  // are charged to the right category (the CUDA backend synchronises its stream).
  void set_sync(std::function<void()> sync) { sync_ = std::move(sync); }
  void sync() const {
    if (sync_) sync_();
  }

  // Times one compute scope on a device: start() when the scope opens, stop()
  // returns the seconds the device spent in between (CUDA events on the
  // compute stream). Without one, a scope syncs and reads the host clock.
  class Stopwatch {
   public:
    virtual ~Stopwatch() = default;
    virtual void start() = 0;
    virtual double stop() = 0;
  };
  void set_stopwatch(std::function<std::unique_ptr<Stopwatch>()> make) { make_stopwatch_ = std::move(make); }

  // Marks a profiler's timeline with the categories the ledger times (NVTX
  // ranges in the CUDA build: Nsight Systems shows the breakdown's categories):
  // begin when a compute scope or a collective opens, end when it closes.
  class Marker {
   public:
    virtual ~Marker() = default;
    virtual void begin(Category c) = 0;
    virtual void end() = 0;
  };
  void set_marker(std::shared_ptr<Marker> m) { marker_ = std::move(m); }
  void mark_begin(Category c) const {
    if (marker_) marker_->begin(c);
  }
  void mark_end() const {
    if (marker_) marker_->end();
  }

  void set_phase(Phase p) { phase_ = p; }
  Phase phase() const { return phase_; }

  void record(Category c, const Tally& t) {
    tallies_[static_cast<int>(phase_)][static_cast<int>(c)] += t;
    lifetime_[static_cast<int>(c)] += t;
  }

  // A kernel's work, charged to the innermost open compute scope (backends/counting_backend.hpp).
  void record_work(Kernel k, const Work& call) {
    Work& w = work_[static_cast<int>(phase_)][static_cast<int>(open_)][static_cast<int>(k)];
    w.amount += call.amount;
    w.nonzeros += call.nonzeros;
    w.row_elements += call.row_elements;
    w.bytes += call.bytes;
    ++w.calls;
  }
  // Returns the work of `p` and clears it (with take(), once per epoch).
  CategoryWork take_work(Phase p) {
    CategoryWork out = work_[static_cast<int>(p)];
    work_[static_cast<int>(p)] = CategoryWork{};
    return out;
  }

  const CategoryTallies& tallies(Phase p) const { return tallies_[static_cast<int>(p)]; }
  // Everything recorded since construction, every phase (never cleared by take()).
  const CategoryTallies& lifetime() const { return lifetime_; }
  // Returns the tallies of `p` and clears them (used once per epoch).
  CategoryTallies take(Phase p);

  // RAII timer charging its lifetime to a compute category.
  class Scope {
   public:
    Scope(Ledger& l, Category c) : ledger_(l), category_(c), enclosing_(l.open_) {
      ledger_.open_ = c;
      ledger_.mark_begin(c);
      if (ledger_.make_stopwatch_) {
        watch_ = ledger_.make_stopwatch_();
        watch_->start();
        return;
      }
      ledger_.sync();
      start_ = Clock::now();
    }
    ~Scope() {
      Tally t;
      if (watch_) {
        t.time_s = watch_->stop();
      } else {
        ledger_.sync();
        t.time_s = std::chrono::duration<double>(Clock::now() - start_).count();
      }
      t.time_s = std::max(0.0, t.time_s - excluded_s_);
      t.calls = 1;
      ledger_.record(category_, t);
      ledger_.mark_end();
      ledger_.open_ = enclosing_;
    }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

    // Time spent inside the scope on something charged elsewhere (the
    // progress of a collective polled from inside a kernel).
    void exclude(double seconds) { excluded_s_ += seconds; }

   private:
    Ledger& ledger_;
    Category category_;
    Category enclosing_;  // the scope open around this one (its kernels' work is charged to the innermost)
    Clock::time_point start_;
    std::unique_ptr<Stopwatch> watch_;
    double excluded_s_ = 0;
  };
  Scope time(Category c) { return Scope(*this, c); }

 private:
  std::function<void()> sync_;
  std::function<std::unique_ptr<Stopwatch>()> make_stopwatch_;
  std::shared_ptr<Marker> marker_;
  Phase phase_ = Phase::setup;
  std::array<CategoryTallies, kNumPhases> tallies_{};
  CategoryTallies lifetime_{};
  Category open_ = Category::other;  // the innermost open compute scope
  std::array<CategoryWork, kNumPhases> work_{};
};

}  // namespace gcnlab
