#pragma once
// Communicator: the one door through which every byte of a strategy moves.
//
// The public, non-virtual methods take typed spans and a breakdown category,
// time the call, and record payload and wire bytes (wire.hpp) in the rank's
// Ledger. Implementations (MPI here, NCCL in backends/cuda) override only the
// protected do_* hooks, so every transport is accounted identically.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "common/comm/ledger.hpp"
#include "common/comm/wire.hpp"
#include "common/core/bf16.hpp"
#include "common/core/error.hpp"


namespace gcnlab {

// bf16 is a wire format only (common/core/bf16.hpp): every transport sums it
// in fp32 and rounds each partial result back to bf16.
enum class DType { f32, f64, i32, i64, u8, bf16 };

// One point-to-point message of an exchange: `count` elements to or from `peer`.
template <class T>
struct Message {
  int peer;
  T* data;
  std::size_t count;
};
enum class ReduceOp { sum, max, min };

template <class T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<float>() { return DType::f32; }
template <> constexpr DType dtype_of<double>() { return DType::f64; }
template <> constexpr DType dtype_of<std::int32_t>() { return DType::i32; }
template <> constexpr DType dtype_of<std::int64_t>() { return DType::i64; }
template <> constexpr DType dtype_of<std::uint8_t>() { return DType::u8; }
template <> constexpr DType dtype_of<bf16>() { return DType::bf16; }

// The members of a communicator as ranks of the job's world communicator (the
// one every other is split from), in the communicator's rank order: which node
// each member sits on is what topology-aware models need (planning/perf_model).
// Every group of a process grid is an arithmetic progression, held as such;
// any other set is held as a list.
struct Members {
  int first = 0, stride = 1, count = 1;
  std::vector<int> list;  // non-empty only when the ranks are not a progression

  static Members of(std::vector<int> ranks);
  static Members world(int size) { return {0, 1, size, {}}; }
  int operator[](int i) const { return list.empty() ? first + i * stride : list[static_cast<std::size_t>(i)]; }
  bool operator==(const Members&) const = default;
};

class Communicator {
 public:
  explicit Communicator(Ledger& ledger) : ledger_(&ledger) {}
  virtual ~Communicator() = default;
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  Ledger& ledger() const { return *ledger_; }
  const Members& members() const { return members_; }

  // Collective split (as MPI_Comm_split); the child records into the same ledger.
  virtual std::unique_ptr<Communicator> split(int color, int key) const = 0;
  // The most host memory this transport and its splits held at once for
  // staging device buffers (StagedCommunicator; 0 for the others).
  virtual double staging_host_bytes() const { return 0; }

  template <class T>
  void broadcast(std::span<T> buf, int root, Category c) {
    const double m = static_cast<double>(buf.size_bytes());
    Timed t(*this, c, m, wire::broadcast(m, rank() == root));
    do_broadcast(buf.data(), buf.size(), dtype_of<T>(), root);
  }

  template <class T>
  void allreduce(std::span<T> buf, ReduceOp op, Category c) {
    const double m = static_cast<double>(buf.size_bytes());
    Timed t(*this, c, m, wire::allreduce(m, size()));
    do_allreduce(buf.data(), buf.size(), dtype_of<T>(), op);
  }

  // Every rank contributes `send`; `recv` holds size() * send.size() elements, rank order.
  template <class T>
  void allgather(std::span<const T> send, std::span<T> recv, Category c) {
    GCNLAB_ASSERT(recv.size() == send.size() * static_cast<std::size_t>(size()));
    const double m = static_cast<double>(send.size_bytes());
    Timed t(*this, c, m, wire::allgather(m, size()));
    do_allgather(send.data(), recv.data(), send.size(), dtype_of<T>());
  }

  // Uneven contributions: rank r contributes counts[r] elements (send.size() ==
  // counts[rank()]); recv holds Σ counts in rank order. Wire bytes: what
  // arrives from the others, Σ_{r≠me} counts[r] (= (p-1) m for equal blocks).
  template <class T>
  void allgather(std::span<const T> send, std::span<T> recv, std::span<const std::int64_t> counts, Category c) {
    GCNLAB_ASSERT(static_cast<int>(counts.size()) == size() && static_cast<std::int64_t>(send.size()) == counts[rank()]);
    double total = 0;
    for (std::int64_t n : counts) total += static_cast<double>(n);
    GCNLAB_ASSERT(recv.size() == static_cast<std::size_t>(total));
    const double m = static_cast<double>(send.size_bytes());
    Timed t(*this, c, m, (total - static_cast<double>(send.size())) * sizeof(T));
    do_allgatherv(send.data(), recv.data(), counts.data(), dtype_of<T>());
  }

  // A nonblocking collective in flight. Its bytes are recorded when it is
  // posted; the time charged to its category is the time spent posting it,
  // polling it (test()) and waiting for it, i.e. the communication that
  // compute did not hide; its wall time beyond that (post to the first test()
  // or wait() that finds it complete) is recorded as hidden (Tally::hidden_s).
  class Pending;
  // A transport's handle on a nonblocking operation.
  struct Request {
    virtual ~Request() = default;
    virtual void wait() = 0;
    // Drives the operation's progress; true once it has completed.
    virtual bool test() = 0;
  };
  template <class T>
  [[nodiscard]] Pending iallreduce(std::span<T> buf, ReduceOp op, Category c);
  template <class T>
  [[nodiscard]] Pending ibroadcast(std::span<T> buf, int root, Category c);

  // `send` holds size() * recv.size() elements; rank r receives the sum of block r.
  template <class T>
  void reduce_scatter(std::span<const T> send, std::span<T> recv, Category c) {
    GCNLAB_ASSERT(send.size() == recv.size() * static_cast<std::size_t>(size()));
    const double m = static_cast<double>(recv.size_bytes());
    Timed t(*this, c, m, wire::reduce_scatter(m, size()));
    do_reduce_scatter(send.data(), recv.data(), recv.size(), dtype_of<T>());
  }

  // Uneven blocks: rank r receives the sum of its counts[r] elements (send holds Σ counts,
  // blocks in rank order). Wire bytes: (p-1) · own output, as for equal blocks.
  template <class T>
  void reduce_scatter(std::span<const T> send, std::span<T> recv, std::span<const std::int64_t> counts, Category c) {
    GCNLAB_ASSERT(static_cast<int>(counts.size()) == size() && static_cast<std::int64_t>(recv.size()) == counts[rank()]);
    const double m = static_cast<double>(recv.size_bytes());
    Timed t(*this, c, m, wire::reduce_scatter(m, size()));
    do_reduce_scatterv(send.data(), recv.data(), counts.data(), dtype_of<T>());
  }

  // Personalised exchange: counts/displacements in elements, per peer.
  template <class T>
  void alltoallv(std::span<const T> send, std::span<const std::int64_t> send_counts,
                 std::span<const std::int64_t> send_displs, std::span<T> recv,
                 std::span<const std::int64_t> recv_counts,
                 std::span<const std::int64_t> recv_displs, Category c) {
    double payload = 0, wire = 0;
    for (int r = 0; r < size(); ++r) {
      payload += static_cast<double>(send_counts[r]) * sizeof(T);
      if (r != rank()) wire += static_cast<double>(recv_counts[r]) * sizeof(T);
    }
    Timed t(*this, c, payload, wire);
    do_alltoallv(send.data(), send_counts.data(), send_displs.data(), recv.data(),
                 recv_counts.data(), recv_displs.data(), dtype_of<T>());
  }

  // Nonblocking point-to-point: posts every receive and send, then waits for
  // all. Wire bytes: what arrives from other ranks.
  template <class T>
  void exchange(const std::vector<Message<const T>>& sends, const std::vector<Message<T>>& recvs, Category c) {
    double payload = 0, wire = 0;
    std::vector<Message<const void>> s;
    std::vector<Message<void>> r;
    for (const auto& m : sends) payload += m.count * sizeof(T), s.push_back({m.peer, m.data, m.count});
    for (const auto& m : recvs) {
      if (m.peer != rank()) wire += m.count * sizeof(T);
      r.push_back({m.peer, m.data, m.count});
    }
    Timed t(*this, c, payload, wire);
    do_exchange(s, r, dtype_of<T>());
  }

  // The nonblocking form of exchange: posts every receive and send and returns;
  // Pending::wait() completes them (the buffers stay untouched until then).
  // Bytes as exchange's, recorded when posted.
  template <class T>
  [[nodiscard]] Pending iexchange(const std::vector<Message<const T>>& sends, const std::vector<Message<T>>& recvs,
                                  Category c);

  // Not accounted (carries no data); used only around timed regions.
  void barrier() { do_barrier(); }

 protected:
  virtual void do_broadcast(void* buf, std::size_t count, DType t, int root) = 0;
  virtual void do_allreduce(void* buf, std::size_t count, DType t, ReduceOp op) = 0;
  virtual void do_allgather(const void* send, void* recv, std::size_t count, DType t) = 0;
  virtual void do_allgatherv(const void* send, void* recv, const std::int64_t* counts, DType t) = 0;
  virtual void do_reduce_scatter(const void* send, void* recv, std::size_t count, DType t) = 0;
  virtual void do_reduce_scatterv(const void* send, void* recv, const std::int64_t* counts, DType t) = 0;
  virtual void do_alltoallv(const void* send, const std::int64_t* send_counts,
                            const std::int64_t* send_displs, void* recv,
                            const std::int64_t* recv_counts, const std::int64_t* recv_displs,
                            DType t) = 0;
  virtual void do_exchange(const std::vector<Message<const void>>& sends, const std::vector<Message<void>>& recvs,
                           DType t) = 0;
  virtual void do_barrier() = 0;

  // Default: completes at once (a blocking all-reduce, which on a device
  // stream is already asynchronous to the host); MPI overrides it.
  virtual std::unique_ptr<Request> do_iallreduce(void* buf, std::size_t count, DType t, ReduceOp op) {
    do_allreduce(buf, count, t, op);
    return nullptr;
  }
  virtual std::unique_ptr<Request> do_ibroadcast(void* buf, std::size_t count, DType t, int root) {
    do_broadcast(buf, count, t, root);
    return nullptr;
  }
  // Default: the blocking exchange (the threaded communicator; NCCL's grouped
  // send/receive, already asynchronous to the host on its stream).
  virtual std::unique_ptr<Request> do_iexchange(const std::vector<Message<const void>>& sends,
                                                const std::vector<Message<void>>& recvs, DType t) {
    do_exchange(sends, recvs, t);
    return nullptr;
  }

  Members members_;  // set by each transport's constructor

  // For a transport inside a do_* hook: bytes it moves beyond the call's wire
  // bytes (Tally::padding_bytes).
  void add_padding(double bytes) {
    if (timed_) timed_->add_padding(bytes);
  }
  // For a staged transport inside a do_* hook: `seconds` spent copying `bytes`
  // between the call's device buffers and its host buffers, charged to
  // Category::staging (payload: the bytes copied) instead of the call.
  void add_staging(double seconds, double bytes);

 private:
  template <class F>
  Pending post(Category c, double payload, double wire, F&& start);

  // Times one call and records it on destruction.
  class Timed {
   public:
    Timed(Communicator& comm, Category c, double payload, double wire);
    ~Timed();
    Timed(const Timed&) = delete;
    Timed& operator=(const Timed&) = delete;
    void add_padding(double bytes) { tally_.padding_bytes += bytes; }
    void exclude(double seconds) { excluded_s_ += seconds; }

   private:
    Communicator& comm_;
    Ledger& ledger_;
    Category category_;
    Tally tally_;
    Ledger::Clock::time_point start_;
    double excluded_s_ = 0;  // add_staging's
  };

  Ledger* ledger_;
  Timed* timed_ = nullptr;  // the blocking call in progress
};

class Communicator::Pending {
 public:
  Pending() = default;
  Pending(Pending&& o) noexcept { *this = std::move(o); }
  Pending& operator=(Pending&& o) noexcept {
    std::swap(request_, o.request_);
    std::swap(ledger_, o.ledger_);
    std::swap(category_, o.category_);
    std::swap(posted_, o.posted_);
    std::swap(post_s_, o.post_s_);
    std::swap(done_, o.done_);
    std::swap(polled_s_, o.polled_s_);
    return *this;
  }
  ~Pending() {
    try {
      wait();
    } catch (...) {  // an error was already reported by an explicit wait()
    }
  }

  // Drives progress (transports whose nonblocking collectives advance only
  // inside MPI calls need it while the rank computes); true once complete.
  bool test();
  // Seconds spent in test() so far: communication work done by the polling
  // thread, which a compute scope around the polls excludes (Ledger::Scope::exclude).
  double polled_s() const { return polled_s_; }
  // Completes the operation; charges the waiting time to its category and
  // records the hidden time.
  void wait();

 private:
  friend class Communicator;
  using Clock = Ledger::Clock;
  Pending(std::unique_ptr<Request> r, Ledger& l, Category c, Clock::time_point posted, double post_s)
      : request_(std::move(r)), ledger_(&l), category_(c), posted_(posted), post_s_(post_s) {}

  std::unique_ptr<Request> request_;
  Ledger* ledger_ = nullptr;
  Category category_ = Category::allreduce;
  Clock::time_point posted_{};
  double post_s_ = 0;             // time spent posting it
  std::optional<Clock::time_point> done_;  // when a test() first found it complete
  double polled_s_ = 0;           // time spent in test()
};

template <class F>
Communicator::Pending Communicator::post(Category c, double payload, double wire, F&& start) {
  const auto posted = Ledger::Clock::now();
  std::unique_ptr<Request> r;
  {
    Timed t(*this, c, payload, wire);
    r = start();
  }
  return Pending(std::move(r), ledger(), c, posted,
                 std::chrono::duration<double>(Ledger::Clock::now() - posted).count());
}

template <class T>
Communicator::Pending Communicator::iallreduce(std::span<T> buf, ReduceOp op, Category c) {
  const double m = static_cast<double>(buf.size_bytes());
  return post(c, m, wire::allreduce(m, size()),
              [&] { return do_iallreduce(buf.data(), buf.size(), dtype_of<T>(), op); });
}

template <class T>
Communicator::Pending Communicator::ibroadcast(std::span<T> buf, int root, Category c) {
  const double m = static_cast<double>(buf.size_bytes());
  return post(c, m, wire::broadcast(m, rank() == root),
              [&] { return do_ibroadcast(buf.data(), buf.size(), dtype_of<T>(), root); });
}

template <class T>
Communicator::Pending Communicator::iexchange(const std::vector<Message<const T>>& sends,
                                              const std::vector<Message<T>>& recvs, Category c) {
  double payload = 0, wire = 0;
  std::vector<Message<const void>> s;
  std::vector<Message<void>> r;
  for (const auto& m : sends) payload += m.count * sizeof(T), s.push_back({m.peer, m.data, m.count});
  for (const auto& m : recvs) {
    if (m.peer != rank()) wire += m.count * sizeof(T);
    r.push_back({m.peer, m.data, m.count});
  }
  return post(c, payload, wire, [&] { return do_iexchange(s, r, dtype_of<T>()); });
}

// Size of one element of `t` in bytes.
std::size_t dtype_size(DType t);

// One element of a reduction.
template <class T>
T combine(T a, T b, ReduceOp op) {
  if (op == ReduceOp::sum) return static_cast<T>(a + b);
  return op == ReduceOp::max ? (a < b ? b : a) : (b < a ? b : a);
}

// acc[i] = acc[i] op x[i] for bf16 elements: combined in fp32, rounded back to
// bf16 (what NCCL does per hop); for transports without a native bf16 reduction.
void reduce_bf16(bf16* acc, const bf16* x, std::size_t n, ReduceOp op);

}  // namespace gcnlab
