#include "backends/cuda/nccl_communicator.hpp"

#include "backends/cuda/check.hpp"
#include "backends/factory.hpp"
#include "common/comm/uneven.hpp"

namespace gcnlab {

namespace {

ncclDataType_t nccl_type(DType t) {
  switch (t) {
    case DType::f32: return ncclFloat32;
    case DType::f64: return ncclFloat64;
    case DType::i32: return ncclInt32;
    case DType::i64: return ncclInt64;
    case DType::u8: return ncclUint8;
    case DType::bf16: return ncclBfloat16;
  }
  return ncclFloat32;
}

ncclRedOp_t nccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return ncclSum;
    case ReduceOp::max: return ncclMax;
    case ReduceOp::min: return ncclMin;
  }
  return ncclSum;
}

const char* at(const void* p, std::int64_t elements, DType t) {
  return static_cast<const char*>(p) + elements * static_cast<std::int64_t>(dtype_size(t));
}

}  // namespace

std::unique_ptr<Communicator> make_nccl_communicator(Backend& backend, const MpiCommunicator& world) {
  auto* cuda = dynamic_cast<CudaBackend*>(&backend);
  GCNLAB_ASSERT(cuda != nullptr);
  MPI_Comm dup;
  GCNLAB_MPI(MPI_Comm_dup(world.native(), &dup));
  return std::make_unique<NcclCommunicator>(std::make_unique<MpiCommunicator>(dup, world.ledger(), true), *cuda);
}

NcclCommunicator::NcclCommunicator(std::unique_ptr<MpiCommunicator> mpi, CudaBackend& backend)
    : Communicator(mpi->ledger()), mpi_(std::move(mpi)), backend_(backend) {
  members_ = mpi_->members();
  ncclUniqueId id;
  if (mpi_->rank() == 0) GCNLAB_CUDA_CALL(ncclGetUniqueId(&id));
  GCNLAB_MPI(MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, mpi_->native()));
  GCNLAB_CUDA_CALL(ncclCommInitRank(&comm_, mpi_->size(), id, mpi_->rank()));
}

NcclCommunicator::~NcclCommunicator() {
  if (comm_) ncclCommDestroy(comm_);
  backend_.deallocate(staging_, staging_bytes_);
}

std::unique_ptr<Communicator> NcclCommunicator::split(int color, int key) const {
  MPI_Comm child;
  GCNLAB_MPI(MPI_Comm_split(mpi_->native(), color, key, &child));
  return std::make_unique<NcclCommunicator>(std::make_unique<MpiCommunicator>(child, ledger(), true), backend_);
}

bool NcclCommunicator::on_device(const void* p) const { return is_device_pointer(p); }

// Host buffers take the MPI path through MpiCommunicator's do_* hooks (the
// public calls would account the bytes a second time).

void NcclCommunicator::do_broadcast(void* buf, std::size_t count, DType t, int root) {
  if (!on_device(buf)) return mpi_->do_broadcast(buf, count, t, root);
  GCNLAB_CUDA_CALL(ncclBroadcast(buf, buf, count, nccl_type(t), root, comm_, backend_.stream()));
}

void NcclCommunicator::do_allreduce(void* buf, std::size_t count, DType t, ReduceOp op) {
  if (!on_device(buf)) return mpi_->do_allreduce(buf, count, t, op);
  GCNLAB_CUDA_CALL(ncclAllReduce(buf, buf, count, nccl_type(t), nccl_op(op), comm_, backend_.stream()));
}

void NcclCommunicator::do_allgather(const void* send, void* recv, std::size_t count, DType t) {
  if (!on_device(recv)) return mpi_->do_allgather(send, recv, count, t);
  GCNLAB_CUDA_CALL(ncclAllGather(send, recv, count, nccl_type(t), comm_, backend_.stream()));
}

namespace {

// Completion of an all-reduce on the communication stream: wait() makes the
// compute stream wait for it.
class StreamRequest final : public Communicator::Request {
 public:
  StreamRequest(CUstream_st* compute, cudaEvent_t done) : compute_(compute), done_(done) {}
  ~StreamRequest() override { cudaEventDestroy(done_); }
  void wait() override { GCNLAB_CUDA_CALL(cudaStreamWaitEvent(compute_, done_, 0)); }
  bool test() override {  // NCCL progresses on its own stream; this only asks
    const cudaError_t e = cudaEventQuery(done_);
    if (e == cudaErrorNotReady) return false;
    GCNLAB_CUDA_CALL(e);
    return true;
  }

 private:
  CUstream_st* compute_;
  cudaEvent_t done_;
};

}  // namespace

// The collective `enqueue` puts on the communication stream once the compute
// stream's work so far (which produced the input) is complete (MG-GCN Sec. 4.3:
// a communication stream beside the compute stream, ordered by events).
template <class F>
std::unique_ptr<Communicator::Request> NcclCommunicator::on_comm_stream(F&& enqueue) {
  cudaEvent_t ready, done;
  GCNLAB_CUDA_CALL(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
  GCNLAB_CUDA_CALL(cudaEventRecord(ready, backend_.stream()));  // the input is complete
  GCNLAB_CUDA_CALL(cudaStreamWaitEvent(backend_.comm_stream(), ready, 0));
  cudaEventDestroy(ready);  // released once recorded work completes
  enqueue(backend_.comm_stream());
  GCNLAB_CUDA_CALL(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
  GCNLAB_CUDA_CALL(cudaEventRecord(done, backend_.comm_stream()));
  return std::make_unique<StreamRequest>(backend_.stream(), done);
}

std::unique_ptr<Communicator::Request> NcclCommunicator::do_iallreduce(void* buf, std::size_t count, DType t,
                                                                       ReduceOp op) {
  if (!on_device(buf)) return mpi_->do_iallreduce(buf, count, t, op);
  return on_comm_stream([&](cudaStream_t s) {
    GCNLAB_CUDA_CALL(ncclAllReduce(buf, buf, count, nccl_type(t), nccl_op(op), comm_, s));
  });
}

std::unique_ptr<Communicator::Request> NcclCommunicator::do_ibroadcast(void* buf, std::size_t count, DType t,
                                                                       int root) {
  if (!on_device(buf)) return mpi_->do_ibroadcast(buf, count, t, root);
  return on_comm_stream([&](cudaStream_t s) {
    GCNLAB_CUDA_CALL(ncclBroadcast(buf, buf, count, nccl_type(t), root, comm_, s));
  });
}

// NCCL has no all-gather with counts (common/comm/uneven.hpp): equal blocks
// take ncclAllGather; nearly equal ones are padded to the largest in a staging
// buffer for one ncclAllGather (the padding is counted); others take one
// grouped ncclBroadcast per contributor.
void NcclCommunicator::do_allgatherv(const void* send, void* recv, const std::int64_t* counts, DType t) {
  if (!on_device(recv)) return mpi_->do_allgatherv(send, recv, counts, t);
  const int p = size();
  const UnevenPlan plan = plan_uneven(std::span<const std::int64_t>(counts, static_cast<std::size_t>(p)), rank());
  const std::size_t es = dtype_size(t);
  cudaStream_t s = backend_.stream();
  if (plan.kind == UnevenPlan::Kind::equal) {
    GCNLAB_CUDA_CALL(ncclAllGather(send, recv, static_cast<std::size_t>(plan.block), nccl_type(t), comm_, s));
    return;
  }
  if (plan.kind == UnevenPlan::Kind::padded) {
    const std::size_t m = static_cast<std::size_t>(plan.block) * es;
    char* buf = static_cast<char*>(staging(static_cast<std::size_t>(p) * m));
    GCNLAB_CUDA_CALL(cudaMemcpyAsync(buf + static_cast<std::size_t>(rank()) * m, send,
                                     static_cast<std::size_t>(counts[rank()]) * es, cudaMemcpyDeviceToDevice, s));
    GCNLAB_CUDA_CALL(ncclAllGather(buf + static_cast<std::size_t>(rank()) * m, buf,
                                   static_cast<std::size_t>(plan.block), nccl_type(t), comm_, s));
    std::int64_t displ = 0;
    for (int r = 0; r < p; ++r) {
      GCNLAB_CUDA_CALL(cudaMemcpyAsync(const_cast<char*>(at(recv, displ, t)), buf + static_cast<std::size_t>(r) * m,
                                       static_cast<std::size_t>(counts[r]) * es, cudaMemcpyDeviceToDevice, s));
      displ += counts[r];
    }
    add_padding(static_cast<double>(plan.allgather_padding) * static_cast<double>(es));
    return;
  }
  std::int64_t displ = 0;
  GCNLAB_CUDA_CALL(ncclGroupStart());
  for (int r = 0; r < p; ++r) {
    char* dst = const_cast<char*>(at(recv, displ, t));
    GCNLAB_CUDA_CALL(ncclBroadcast(r == rank() ? send : dst, dst, counts[r], nccl_type(t), r, comm_, s));
    displ += counts[r];
  }
  GCNLAB_CUDA_CALL(ncclGroupEnd());
}

void NcclCommunicator::do_reduce_scatter(const void* send, void* recv, std::size_t count, DType t) {
  if (!on_device(recv)) return mpi_->do_reduce_scatter(send, recv, count, t);
  GCNLAB_CUDA_CALL(ncclReduceScatter(send, recv, count, nccl_type(t), ncclSum, comm_, backend_.stream()));
}

// NCCL has no reduce-scatter with counts: as do_allgatherv, with zeroed
// padding and ncclReduceScatter, else one grouped ncclReduce per block.
void NcclCommunicator::do_reduce_scatterv(const void* send, void* recv, const std::int64_t* counts, DType t) {
  if (!on_device(send)) return mpi_->do_reduce_scatterv(send, recv, counts, t);
  const int p = size();
  const UnevenPlan plan = plan_uneven(std::span<const std::int64_t>(counts, static_cast<std::size_t>(p)), rank());
  const std::size_t es = dtype_size(t);
  cudaStream_t s = backend_.stream();
  if (plan.kind == UnevenPlan::Kind::equal) {
    GCNLAB_CUDA_CALL(ncclReduceScatter(send, recv, static_cast<std::size_t>(plan.block), nccl_type(t), ncclSum, comm_, s));
    return;
  }
  if (plan.kind == UnevenPlan::Kind::padded) {
    const std::size_t m = static_cast<std::size_t>(plan.block) * es;
    char* buf = static_cast<char*>(staging((static_cast<std::size_t>(p) + 1) * m));  // p padded blocks, then the result
    GCNLAB_CUDA_CALL(cudaMemsetAsync(buf, 0, static_cast<std::size_t>(p) * m, s));
    std::int64_t displ = 0;
    for (int r = 0; r < p; ++r) {
      GCNLAB_CUDA_CALL(cudaMemcpyAsync(buf + static_cast<std::size_t>(r) * m, at(send, displ, t),
                                       static_cast<std::size_t>(counts[r]) * es, cudaMemcpyDeviceToDevice, s));
      displ += counts[r];
    }
    char* out = buf + static_cast<std::size_t>(p) * m;
    GCNLAB_CUDA_CALL(ncclReduceScatter(buf, out, static_cast<std::size_t>(plan.block), nccl_type(t), ncclSum, comm_, s));
    GCNLAB_CUDA_CALL(cudaMemcpyAsync(recv, out, static_cast<std::size_t>(counts[rank()]) * es, cudaMemcpyDeviceToDevice, s));
    add_padding(static_cast<double>(plan.reduce_scatter_padding) * static_cast<double>(es));
    return;
  }
  std::int64_t displ = 0;
  GCNLAB_CUDA_CALL(ncclGroupStart());
  for (int r = 0; r < p; ++r) {
    GCNLAB_CUDA_CALL(ncclReduce(at(send, displ, t), r == rank() ? recv : nullptr, counts[r], nccl_type(t), ncclSum, r,
                                comm_, s));
    displ += counts[r];
  }
  GCNLAB_CUDA_CALL(ncclGroupEnd());
}

void* NcclCommunicator::staging(std::size_t bytes) {
  if (bytes > staging_bytes_) {
    backend_.sync();  // the old buffer may still be read by queued copies
    backend_.deallocate(staging_, staging_bytes_);
    staging_ = backend_.allocate(bytes);
    staging_bytes_ = bytes;
  }
  return staging_;
}

// Personalised exchanges: grouped ncclSend / ncclRecv.
void NcclCommunicator::do_alltoallv(const void* send, const std::int64_t* send_counts, const std::int64_t* send_displs,
                                    void* recv, const std::int64_t* recv_counts, const std::int64_t* recv_displs,
                                    DType t) {
  if (!on_device(send) && !on_device(recv))
    return mpi_->do_alltoallv(send, send_counts, send_displs, recv, recv_counts, recv_displs, t);
  GCNLAB_CUDA_CALL(ncclGroupStart());
  for (int r = 0; r < size(); ++r) {
    if (send_counts[r] > 0)
      GCNLAB_CUDA_CALL(ncclSend(at(send, send_displs[r], t), send_counts[r], nccl_type(t), r, comm_, backend_.stream()));
    if (recv_counts[r] > 0)
      GCNLAB_CUDA_CALL(ncclRecv(const_cast<char*>(at(recv, recv_displs[r], t)), recv_counts[r], nccl_type(t), r, comm_,
                                backend_.stream()));
  }
  GCNLAB_CUDA_CALL(ncclGroupEnd());
}

void NcclCommunicator::do_exchange(const std::vector<Message<const void>>& sends, const std::vector<Message<void>>& recvs,
                                   DType t) {
  GCNLAB_CUDA_CALL(ncclGroupStart());
  for (const auto& m : recvs) GCNLAB_CUDA_CALL(ncclRecv(m.data, m.count, nccl_type(t), m.peer, comm_, backend_.stream()));
  for (const auto& m : sends) GCNLAB_CUDA_CALL(ncclSend(m.data, m.count, nccl_type(t), m.peer, comm_, backend_.stream()));
  GCNLAB_CUDA_CALL(ncclGroupEnd());
}

void NcclCommunicator::do_barrier() {
  backend_.sync();
  mpi_->barrier();
}

}  // namespace gcnlab
