#pragma once
// Communicator over NCCL for device buffers, one rank per GPU (COSMA's
// nccl_utils pattern): rank 0 of the MPI group creates the ncclUniqueId, it
// is broadcast over MPI, every rank calls ncclCommInitRank. Blocking
// collectives run on the backend's compute stream, so they are ordered after
// the kernels that produced their input; the accounting wrapper synchronises
// the stream before reading the clock. Nonblocking all-reduces run on the
// backend's communication stream, as do nonblocking broadcasts. Host buffers (metric reductions, index lists
// exchanged at setup) go over the underlying MPI communicator; the bytes are
// recorded identically either way.

#include <memory>

#include "backends/cuda/cuda_backend.hpp"
#include "common/comm/mpi_communicator.hpp"

struct ncclComm;

namespace gcnlab {

class NcclCommunicator final : public Communicator {
 public:
  // Collective over `mpi`'s ranks; takes ownership of `mpi`.
  NcclCommunicator(std::unique_ptr<MpiCommunicator> mpi, CudaBackend& backend);
  ~NcclCommunicator() override;

  int rank() const override { return mpi_->rank(); }
  int size() const override { return mpi_->size(); }
  std::unique_ptr<Communicator> split(int color, int key) const override;

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
  // On the communication stream, after the compute stream's work so far; the
  // request makes the compute stream wait for it (no host synchronisation),
  // so SpMMs queued meanwhile overlap with it (blocked aggregation, MG-GCN's
  // overlapped broadcasts).
  std::unique_ptr<Request> do_iallreduce(void* buf, std::size_t count, DType t, ReduceOp op) override;
  std::unique_ptr<Request> do_ibroadcast(void* buf, std::size_t count, DType t, int root) override;

 private:
  bool on_device(const void* p) const;
  // Grow-only device memory for padded collectives (backend-allocated: in the peak).
  void* staging(std::size_t bytes);
  template <class F>
  std::unique_ptr<Request> on_comm_stream(F&& enqueue);

  std::unique_ptr<MpiCommunicator> mpi_;
  CudaBackend& backend_;
  ncclComm* comm_ = nullptr;
  void* staging_ = nullptr;
  std::size_t staging_bytes_ = 0;
};

}  // namespace gcnlab
