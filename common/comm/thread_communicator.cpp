#include "common/comm/thread_communicator.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <mutex>
#include <thread>

namespace gcnlab {

namespace {

// What every group of a run shares: set when any rank fails (every rendezvous
// then throws), and whether collectives move data (ThreadCommunicator::move_data).
struct RunState {
  std::atomic<bool> flag{false};
  std::atomic<bool> move_data{true};
};

}  // namespace

struct ThreadGroup {
  ThreadGroup(int n, std::shared_ptr<RunState> a)
      : size(n), abort(std::move(a)), slot(static_cast<std::size_t>(n)), ints(2 * static_cast<std::size_t>(n)),
        child(static_cast<std::size_t>(n)) {}

  // Every member waits until all have arrived (a generation-counting barrier).
  void wait() {
    std::unique_lock lock(mutex);
    const std::uint64_t gen = generation;
    if (++arrived == size) {
      arrived = 0;
      ++generation;
      cv.notify_all();
      return;
    }
    while (generation == gen) {
      cv.wait_for(lock, std::chrono::milliseconds(20));
      GCNLAB_CHECK(!abort->flag.load(), "another simulated rank failed");
    }
  }

  const int size;
  std::shared_ptr<RunState> abort;
  bool moves_data() const { return abort->move_data.load(); }
  std::mutex mutex;
  std::condition_variable cv;
  int arrived = 0;
  std::uint64_t generation = 0;
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
  g.wait();
  std::vector<std::pair<int, int>> members;  // (key, rank) of my color
  for (int r = 0; r < g.size; ++r)
    if (g.ints[2 * r] == color) members.emplace_back(g.ints[2 * r + 1], r);
  std::sort(members.begin(), members.end());
  const int leader = members.front().second;
  const int me = static_cast<int>(std::find_if(members.begin(), members.end(),
                                               [&](const auto& m) { return m.second == rank_; }) -
                                  members.begin());
  if (leader == rank_) g.child[rank_] = std::make_shared<ThreadGroup>(static_cast<int>(members.size()), g.abort);
  g.wait();
  auto child = g.child[leader];
  g.wait();  // everyone holds its group before the slots are reused
  std::vector<int> world;
  for (const auto& m : members) world.push_back(members_[m.second]);
  return std::make_unique<ThreadCommunicator>(std::move(child), me, Members::of(std::move(world)), ledger());
}

void ThreadCommunicator::do_broadcast(void* buf, std::size_t count, DType t, int root) {
  ThreadGroup& g = *group_;
  g.slot[rank_].data = buf;
  g.wait();
  if (rank_ != root && g.moves_data()) copy_bytes(buf, g.slot[root].data, count * dtype_size(t));
  g.wait();
}

void ThreadCommunicator::do_allreduce(void* buf, std::size_t count, DType t, ReduceOp op) {
  ThreadGroup& g = *group_;
  const std::size_t n = count * dtype_size(t);
  g.slot[rank_].data = buf;
  g.wait();
  if (!g.moves_data()) {
    g.wait();
    return;
  }
  std::vector<char> acc(bytes(g.slot[0].data), bytes(g.slot[0].data) + n);
  for (int r = 1; r < g.size; ++r) reduce_into(acc.data(), g.slot[r].data, count, t, op);
  g.wait();  // all have read every buffer before any is overwritten
  copy_bytes(buf, acc.data(), n);
}

void ThreadCommunicator::do_allgather(const void* send, void* recv, std::size_t count, DType t) {
  std::vector<std::int64_t> counts(static_cast<std::size_t>(size()), static_cast<std::int64_t>(count));
  do_allgatherv(send, recv, counts.data(), t);
}

void ThreadCommunicator::do_allgatherv(const void* send, void* recv, const std::int64_t* counts, DType t) {
  ThreadGroup& g = *group_;
  g.slot[rank_].data = send;
  g.wait();
  char* out = static_cast<char*>(recv);
  for (int r = 0; r < g.size && g.moves_data(); ++r) {
    const std::size_t n = static_cast<std::size_t>(counts[r]) * dtype_size(t);
    copy_bytes(out, g.slot[r].data, n);
    out += n;
  }
  g.wait();
}

void ThreadCommunicator::do_reduce_scatter(const void* send, void* recv, std::size_t count, DType t) {
  std::vector<std::int64_t> counts(static_cast<std::size_t>(size()), static_cast<std::int64_t>(count));
  do_reduce_scatterv(send, recv, counts.data(), t);
}

void ThreadCommunicator::do_reduce_scatterv(const void* send, void* recv, const std::int64_t* counts, DType t) {
  ThreadGroup& g = *group_;
  g.slot[rank_].data = send;
  g.wait();
  std::size_t offset = 0;
  for (int r = 0; r < rank_; ++r) offset += static_cast<std::size_t>(counts[r]) * dtype_size(t);
  const auto count = static_cast<std::size_t>(counts[rank_]);
  if (g.moves_data()) {
    copy_bytes(recv, bytes(g.slot[0].data) + offset, count * dtype_size(t));
    for (int r = 1; r < g.size; ++r) reduce_into(recv, bytes(g.slot[r].data) + offset, count, t, ReduceOp::sum);
  }
  g.wait();
}

void ThreadCommunicator::do_alltoallv(const void* send, const std::int64_t* send_counts,
                                      const std::int64_t* send_displs, void* recv, const std::int64_t* recv_counts,
                                      const std::int64_t* recv_displs, DType t) {
  ThreadGroup& g = *group_;
  g.slot[rank_] = {send, send_counts, send_displs, nullptr};
  g.wait();
  const std::size_t e = dtype_size(t);
  for (int r = 0; r < g.size; ++r) {
    const auto& s = g.slot[r];
    GCNLAB_ASSERT(s.counts[rank_] == recv_counts[r]);
    if (g.moves_data())
      copy_bytes(static_cast<char*>(recv) + recv_displs[r] * e, bytes(s.data) + s.displs[rank_] * e,
                static_cast<std::size_t>(recv_counts[r]) * e);
  }
  g.wait();
}

void ThreadCommunicator::do_exchange(const std::vector<Message<const void>>& sends,
                                     const std::vector<Message<void>>& recvs, DType t) {
  // The k-th receive from a peer matches the k-th message that peer sends here (MPI's ordering).
  ThreadGroup& g = *group_;
  g.slot[rank_].sends = &sends;
  g.wait();
  std::vector<std::size_t> next(static_cast<std::size_t>(g.size), 0);
  for (const auto& m : recvs) {
    const auto& from = *g.slot[m.peer].sends;
    std::size_t& k = next[m.peer];
    while (k < from.size() && from[k].peer != rank_) ++k;
    GCNLAB_ASSERT(k < from.size() && from[k].count == m.count);
    if (g.moves_data()) copy_bytes(m.data, from[k].data, m.count * dtype_size(t));
    ++k;
  }
  g.wait();
}

void ThreadCommunicator::do_barrier() { group_->wait(); }

void ThreadCommunicator::move_data(bool on) {
  group_->wait();  // no collective of the run is under way while the switch changes
  group_->abort->move_data = on;
  group_->wait();
}

void run_ranks(int ranks, const std::function<void(ThreadCommunicator&)>& body) {
  GCNLAB_CHECK(ranks >= 1, "the number of simulated ranks must be >= 1 (got {})", ranks);
  auto abort = std::make_shared<RunState>();
  auto world = std::make_shared<ThreadGroup>(ranks, abort);
  std::exception_ptr first;
  std::mutex first_mutex;
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] {
      try {
        Ledger ledger;
        ThreadCommunicator comm(world, r, Members::world(ranks), ledger);
        body(comm);
      } catch (...) {
        std::lock_guard lock(first_mutex);
        if (!first && !abort->flag.load()) first = std::current_exception();
        abort->flag = true;
      }
    });
  for (auto& t : threads) t.join();
  if (first) std::rethrow_exception(first);
}

}  // namespace gcnlab
