#include "common/comm/thread_communicator.hpp"

#include "common/core/allocation_guard.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <exception>
#include <mutex>
#include <thread>

namespace gcnlab {

struct ThreadGroup;

namespace {

// What every group of a run shares: whether a rank failed (every group is then
// interrupted: see ThreadGroup::wait), and whether collectives move data
// (ThreadCommunicator::move_data).
struct RunState {
  std::atomic<bool> flag{false};
  std::atomic<bool> move_data{true};
  std::mutex mutex;  // guards groups
  std::vector<std::weak_ptr<ThreadGroup>> groups;

  std::shared_ptr<ThreadGroup> make_group(int size, std::shared_ptr<RunState> self);
  void abort();
};

}  // namespace

// A group's rendezvous: a generation-counting barrier on two atomics, each
// waiter asleep on the generation word (a futex), woken once by the last to
// arrive — at thousands of threads a mutex and a condition variable spend the
// run in the lock they all retake. The generation counts in steps of 2; bit 0
// says the run was aborted.
struct ThreadGroup {
  ThreadGroup(int n, std::shared_ptr<RunState> r)
      : size(n), run(std::move(r)), slot(static_cast<std::size_t>(n)), ints(2 * static_cast<std::size_t>(n)),
        child(static_cast<std::size_t>(n)) {}

  // Every member waits until all have arrived. An opening wait (the first of a
  // collective) throws once the run is aborted; a closing wait does not: every
  // member has passed the collective's opening wait and its middle does not
  // block, so all of them arrive, and none frees a buffer its peers still read.
  void wait(bool opening = true) {
    std::uint32_t seen = generation.load(std::memory_order_acquire);
    GCNLAB_CHECK(!opening || !run->flag.load(), "another simulated rank failed");
    if (arrived.fetch_add(1, std::memory_order_acq_rel) + 1 == size) {
      arrived.store(0, std::memory_order_relaxed);
      generation.fetch_add(2, std::memory_order_release);
      generation.notify_all();
      return;
    }
    for (;;) {
      generation.wait(seen, std::memory_order_acquire);
      const std::uint32_t now = generation.load(std::memory_order_acquire);
      if ((now | 1) != (seen | 1)) return;  // the next generation
      GCNLAB_CHECK(!opening || !(now & 1), "another simulated rank failed");
      seen = now;  // aborted during a closing wait: it still completes
    }
  }
  // Wakes every waiter of an aborted run.
  void interrupt() {
    generation.fetch_or(1, std::memory_order_release);
    generation.notify_all();
  }

  // A collective: the opening wait, `middle` (reading the others' published
  // buffers), the closing wait. A member whose middle throws still arrives at
  // the closing wait (its peers may be reading its buffers) and rethrows after.
  template <class Middle>
  void meet(Middle&& middle) {
    wait();
    std::exception_ptr failed;
    try {
      middle();
    } catch (...) {
      failed = std::current_exception();
    }
    wait(/*opening=*/false);
    if (failed) std::rethrow_exception(failed);
  }

  const int size;
  std::shared_ptr<RunState> run;
  bool moves_data() const { return run->move_data.load(); }
  std::atomic<int> arrived{0};
  std::atomic<std::uint32_t> generation{0};
  // What each member publishes for the current call.
  struct Slot {
    const void* data = nullptr;
    const std::int64_t* counts = nullptr;
    const std::int64_t* displs = nullptr;
    const std::vector<Message<const void>>* sends = nullptr;
  };
  std::vector<Slot> slot;
  std::vector<int> ints;                              // split: color, key per member
  std::vector<std::shared_ptr<ThreadGroup>> child;    // split: the group each leader made
};

namespace {

std::shared_ptr<ThreadGroup> RunState::make_group(int size, std::shared_ptr<RunState> self) {
  auto group = std::make_shared<ThreadGroup>(size, std::move(self));
  std::lock_guard lock(mutex);
  groups.push_back(group);
  return group;
}

void RunState::abort() {
  flag = true;  // before the interrupts: a wait that begins later sees it
  std::lock_guard lock(mutex);
  for (const auto& weak : groups)
    if (const auto group = weak.lock()) group->interrupt();
}

}  // namespace

namespace {

template <class T>
void reduce_into(T* acc, const T* x, std::size_t n, ReduceOp op) {
  for (std::size_t i = 0; i < n; ++i) acc[i] = combine(acc[i], x[i], op);
}

// acc (n elements) op= x, typed
void reduce_into(void* acc, const void* x, std::size_t n, DType t, ReduceOp op) {
  switch (t) {
    case DType::f32: return reduce_into(static_cast<float*>(acc), static_cast<const float*>(x), n, op);
    case DType::f64: return reduce_into(static_cast<double*>(acc), static_cast<const double*>(x), n, op);
    case DType::i32: return reduce_into(static_cast<std::int32_t*>(acc), static_cast<const std::int32_t*>(x), n, op);
    case DType::i64: return reduce_into(static_cast<std::int64_t*>(acc), static_cast<const std::int64_t*>(x), n, op);
    case DType::u8: return reduce_into(static_cast<std::uint8_t*>(acc), static_cast<const std::uint8_t*>(x), n, op);
    case DType::bf16: return reduce_bf16(static_cast<bf16*>(acc), static_cast<const bf16*>(x), n, op);
  }
}

const char* bytes(const void* p) { return static_cast<const char*>(p); }

// memcpy that allows the null pointers of empty buffers
void copy_bytes(void* dst, const void* src, std::size_t n) {
  if (n > 0) std::memcpy(dst, src, n);
}

}  // namespace

ThreadCommunicator::ThreadCommunicator(std::shared_ptr<ThreadGroup> group, int rank, Members members, Ledger& ledger)
    : Communicator(ledger), group_(std::move(group)), rank_(rank) {
  members_ = std::move(members);
}

ThreadCommunicator::~ThreadCommunicator() = default;

int ThreadCommunicator::size() const { return group_->size; }

std::unique_ptr<Communicator> ThreadCommunicator::split(int color, int key) const {
  ThreadGroup& g = *group_;
  g.ints[2 * rank_] = color, g.ints[2 * rank_ + 1] = key;
  std::vector<std::pair<int, int>> members;  // (key, rank) of my color
  std::shared_ptr<ThreadGroup> child;
  g.meet([&] {
    for (int r = 0; r < g.size; ++r)
      if (g.ints[2 * r] == color) members.emplace_back(g.ints[2 * r + 1], r);
    std::sort(members.begin(), members.end());
    if (members.front().second == rank_)
      g.child[rank_] = g.run->make_group(static_cast<int>(members.size()), g.run);
  });
  g.meet([&] { child = g.child[members.front().second]; });  // everyone holds its group before the slots are reused
  const int me = static_cast<int>(std::find_if(members.begin(), members.end(),
                                               [&](const auto& m) { return m.second == rank_; }) -
                                  members.begin());
  std::vector<int> world;
  for (const auto& m : members) world.push_back(members_[m.second]);
  return std::make_unique<ThreadCommunicator>(std::move(child), me, Members::of(std::move(world)), ledger());
}

// With data movement off (a traced step), a collective moves nothing, so its
// members need not meet: each records its bytes from its own arguments (the
// Communicator does) and goes on. The traced epoch of thousands of ranks is
// then no longer thousands of rendezvous of thousands of threads.

void ThreadCommunicator::do_broadcast(void* buf, std::size_t count, DType t, int root) {
  ThreadGroup& g = *group_;
  if (!g.moves_data()) return;
  g.slot[rank_].data = buf;
  g.meet([&] {
    if (rank_ != root) copy_bytes(buf, g.slot[root].data, count * dtype_size(t));
  });
}

void ThreadCommunicator::do_allreduce(void* buf, std::size_t count, DType t, ReduceOp op) {
  ThreadGroup& g = *group_;
  if (!g.moves_data()) return;
  const std::size_t n = count * dtype_size(t);
  g.slot[rank_].data = buf;
  std::vector<char> acc;
  g.meet([&] {  // all have read every buffer before any is overwritten
    acc.assign(bytes(g.slot[0].data), bytes(g.slot[0].data) + n);
    for (int r = 1; r < g.size; ++r) reduce_into(acc.data(), g.slot[r].data, count, t, op);
  });
  copy_bytes(buf, acc.data(), n);
}

void ThreadCommunicator::do_allgather(const void* send, void* recv, std::size_t count, DType t) {
  std::vector<std::int64_t> counts(static_cast<std::size_t>(size()), static_cast<std::int64_t>(count));
  do_allgatherv(send, recv, counts.data(), t);
}

void ThreadCommunicator::do_allgatherv(const void* send, void* recv, const std::int64_t* counts, DType t) {
  ThreadGroup& g = *group_;
  if (!g.moves_data()) return;
  g.slot[rank_].data = send;
  g.meet([&] {
    char* out = static_cast<char*>(recv);
    for (int r = 0; r < g.size; ++r) {
      const std::size_t n = static_cast<std::size_t>(counts[r]) * dtype_size(t);
      copy_bytes(out, g.slot[r].data, n);
      out += n;
    }
  });
}

void ThreadCommunicator::do_reduce_scatter(const void* send, void* recv, std::size_t count, DType t) {
  std::vector<std::int64_t> counts(static_cast<std::size_t>(size()), static_cast<std::int64_t>(count));
  do_reduce_scatterv(send, recv, counts.data(), t);
}

void ThreadCommunicator::do_reduce_scatterv(const void* send, void* recv, const std::int64_t* counts, DType t) {
  ThreadGroup& g = *group_;
  if (!g.moves_data()) return;
  g.slot[rank_].data = send;
  g.meet([&] {
    std::size_t offset = 0;
    for (int r = 0; r < rank_; ++r) offset += static_cast<std::size_t>(counts[r]) * dtype_size(t);
    const auto count = static_cast<std::size_t>(counts[rank_]);
    copy_bytes(recv, bytes(g.slot[0].data) + offset, count * dtype_size(t));
    for (int r = 1; r < g.size; ++r) reduce_into(recv, bytes(g.slot[r].data) + offset, count, t, ReduceOp::sum);
  });
}

void ThreadCommunicator::do_alltoallv(const void* send, const std::int64_t* send_counts,
                                      const std::int64_t* send_displs, void* recv, const std::int64_t* recv_counts,
                                      const std::int64_t* recv_displs, DType t) {
  ThreadGroup& g = *group_;
  if (!g.moves_data()) return;
  g.slot[rank_] = {send, send_counts, send_displs, nullptr};
  g.meet([&] {
    const std::size_t e = dtype_size(t);
    for (int r = 0; r < g.size; ++r) {
      const auto& s = g.slot[r];
      GCNLAB_ASSERT(s.counts[rank_] == recv_counts[r]);
      copy_bytes(static_cast<char*>(recv) + recv_displs[r] * e, bytes(s.data) + s.displs[rank_] * e,
                 static_cast<std::size_t>(recv_counts[r]) * e);
    }
  });
}

void ThreadCommunicator::do_exchange(const std::vector<Message<const void>>& sends,
                                     const std::vector<Message<void>>& recvs, DType t) {
  // The k-th receive from a peer matches the k-th message that peer sends here (MPI's ordering).
  ThreadGroup& g = *group_;
  if (!g.moves_data()) return;
  g.slot[rank_].sends = &sends;
  g.meet([&] {
    std::vector<std::size_t> next(static_cast<std::size_t>(g.size), 0);
    for (const auto& m : recvs) {
      const auto& from = *g.slot[m.peer].sends;
      std::size_t& k = next[m.peer];
      while (k < from.size() && from[k].peer != rank_) ++k;
      GCNLAB_ASSERT(k < from.size() && from[k].count == m.count);
      copy_bytes(m.data, from[k].data, m.count * dtype_size(t));
      ++k;
    }
  });
}

void ThreadCommunicator::do_barrier() { group_->wait(); }

void ThreadCommunicator::move_data(bool on) {
  // every rank is here, so no collective is under way while the switch changes
  group_->meet([&] { group_->run->move_data = on; });
}

void run_ranks(int ranks, const std::function<void(ThreadCommunicator&)>& body, const Watchdog& watchdog) {
  GCNLAB_CHECK(ranks >= 1, "the number of simulated ranks must be >= 1 (got {})", ranks);
  auto run = std::make_shared<RunState>();
  auto world = run->make_group(ranks, run);
  std::exception_ptr first;
  std::mutex first_mutex;
  std::atomic<int> finished{0};
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] {
      try {
        Ledger ledger;
        ThreadCommunicator comm(world, r, Members::world(ranks), ledger);
        body(comm);
      } catch (...) {
        {
          std::lock_guard lock(first_mutex);
          if (!first && !run->flag.load()) first = std::current_exception();
        }
        run->abort();
      }
      finished.fetch_add(1);
    });
  // The watchdog's error ends the run as a failing rank would: the ranks leave at their next rendezvous.
  while (watchdog && finished.load() < ranks && !run->flag.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (const auto error = watchdog()) {
      {
        std::lock_guard lock(first_mutex);
        if (!first) first = std::make_exception_ptr(Error(*error));
      }
      refuse_allocations(true);  // ranks between two rendezvous stop at their next allocation
      run->abort();
    }
  }
  for (auto& t : threads) t.join();
  refuse_allocations(false);
  if (first) std::rethrow_exception(first);
}

}  // namespace gcnlab
