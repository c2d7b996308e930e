#pragma once
// Communicator over MPI. Owns its MPI_Comm (freed in the destructor unless it
// wraps MPI_COMM_WORLD/SELF) and sets MPI_ERRORS_RETURN on it so that every
// failure becomes a gcnlab::Error instead of an abort deep inside MPI.

#include <mpi.h>

#include "common/comm/communicator.hpp"

namespace gcnlab {

// Throws gcnlab::Error with MPI's error string when `rc` is not MPI_SUCCESS.
void check_mpi(int rc, const char* what);
#define GCNLAB_MPI(call) ::gcnlab::check_mpi((call), #call)

class NcclCommunicator;
class StagedCommunicator;

class MpiCommunicator final : public Communicator {
 public:
  // Wraps `comm`; takes ownership (MPI_Comm_free) when `owned`.
  MpiCommunicator(MPI_Comm comm, Ledger& ledger, bool owned);
  ~MpiCommunicator() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  MPI_Comm native() const { return comm_; }

  std::unique_ptr<Communicator> split(int color, int key) const override;

 protected:
  friend class NcclCommunicator;    // host buffers of an NCCL communicator go over MPI
  friend class StagedCommunicator;  // device buffers staged through host memory (--gpu-comm mpi)
  void do_broadcast(void* buf, std::size_t count, DType t, int root) override;
  void do_allreduce(void* buf, std::size_t count, DType t, ReduceOp op) override;
  void do_allgather(const void* send, void* recv, std::size_t count, DType t) override;
  void do_allgatherv(const void* send, void* recv, const std::int64_t* counts, DType t) override;
  void do_reduce_scatter(const void* send, void* recv, std::size_t count, DType t) override;
  void do_reduce_scatterv(const void* send, void* recv, const std::int64_t* counts, DType t) override;
  void do_alltoallv(const void* send, const std::int64_t* send_counts,
                    const std::int64_t* send_displs, void* recv, const std::int64_t* recv_counts,
                    const std::int64_t* recv_displs, DType t) override;
  void do_exchange(const std::vector<Message<const void>>& sends, const std::vector<Message<void>>& recvs,
                   DType t) override;
  void do_barrier() override;
  std::unique_ptr<Request> do_iallreduce(void* buf, std::size_t count, DType t, ReduceOp op) override;
  std::unique_ptr<Request> do_ibroadcast(void* buf, std::size_t count, DType t, int root) override;
  std::unique_ptr<Request> do_iexchange(const std::vector<Message<const void>>& sends,
                                        const std::vector<Message<void>>& recvs, DType t) override;

 private:
  MPI_Comm comm_;
  bool owned_;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace gcnlab
