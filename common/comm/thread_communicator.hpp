#pragma once
// A Communicator whose ranks are threads of one process: every collective is
// a rendezvous of the group's threads over shared memory (publish pointers,
// barrier, copy or reduce from the others' buffers, barrier). It moves the
// same data as MpiCommunicator and records the same wire bytes, so a strategy's
// distribution, model and byte counts can be computed for thousands of ranks
// on one machine (gcnlab simulate, planning/simulate.hpp). Reductions add the
// members' contributions in rank order: results are deterministic.
//
// A rank that throws aborts the run: the others leave their next (or current)
// rendezvous with an error instead of waiting forever, and run_ranks rethrows
// the first error. A rank that fails inside a collective (after its opening
// rendezvous) still waits there until its peers have read its buffers.

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "common/comm/communicator.hpp"

namespace gcnlab {

struct ThreadGroup;  // the shared state of one group (thread_communicator.cpp)

class ThreadCommunicator final : public Communicator {
 public:
  // `members`: the group's ranks in the numbering of the run's world group.
  ThreadCommunicator(std::shared_ptr<ThreadGroup> group, int rank, Members members, Ledger& ledger);
  ~ThreadCommunicator() override;

  int rank() const override { return rank_; }
  int size() const override;
  std::unique_ptr<Communicator> split(int color, int key) const override;

  // Whether the run's collectives move data (on at the start). Off, every call
  // records its bytes and neither meets its group nor copies or reduces: a
  // traced step (planning/simulate.hpp) runs at thousands of ranks without
  // touching the buffers it would fill or waiting on the others. (A barrier
  // and split still meet.) Collective over the world group.
  void move_data(bool on);

 protected:
  void do_broadcast(void* buf, std::size_t count, DType t, int root) override;
  void do_allreduce(void* buf, std::size_t count, DType t, ReduceOp op) override;
  void do_allgather(const void* send, void* recv, std::size_t count, DType t) override;
  void do_allgatherv(const void* send, void* recv, const std::int64_t* counts, DType t) override;
  void do_reduce_scatter(const void* send, void* recv, std::size_t count, DType t) override;
  void do_reduce_scatterv(const void* send, void* recv, const std::int64_t* counts, DType t) override;
  void do_alltoallv(const void* send, const std::int64_t* send_counts, const std::int64_t* send_displs, void* recv,
                    const std::int64_t* recv_counts, const std::int64_t* recv_displs, DType t) override;
  void do_exchange(const std::vector<Message<const void>>& sends, const std::vector<Message<void>>& recvs,
                   DType t) override;
  void do_barrier() override;

 private:
  std::shared_ptr<ThreadGroup> group_;
  int rank_;
};

// Asked every 20 ms while the ranks run: an error message ends the run (as a
// rank's error would; every allocation fails until the ranks have ended, so
// ranks between two rendezvous stop too), nothing lets it go on.
using Watchdog = std::function<std::optional<std::string>()>;

// Runs body(rank's communicator) on `ranks` threads, each with a ledger of its
// own, and returns when all have finished; rethrows the first error.
void run_ranks(int ranks, const std::function<void(ThreadCommunicator&)>& body, const Watchdog& watchdog = {});

}  // namespace gcnlab
