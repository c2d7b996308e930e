#include "common/comm/mpi_communicator.hpp"

#include <array>
#include <climits>
#include <vector>

namespace gcnlab {

void check_mpi(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  fail("MPI call failed: {} ({})", std::string(msg, len), what);
}

namespace {

MPI_Datatype mpi_type(DType t) {
  switch (t) {
    case DType::f32: return MPI_FLOAT;
    case DType::f64: return MPI_DOUBLE;
    case DType::i32: return MPI_INT32_T;
    case DType::i64: return MPI_INT64_T;
    case DType::u8: return MPI_UINT8_T;
    case DType::bf16: return MPI_UINT16_T;  // reduced by the operations of bf16_op
  }
  return MPI_DATATYPE_NULL;
}

template <ReduceOp Op>
void bf16_reduce(void* in, void* inout, int* len, MPI_Datatype*) {
  reduce_bf16(static_cast<bf16*>(inout), static_cast<const bf16*>(in), static_cast<std::size_t>(*len), Op);
}

// MPI has no bf16 type: its elements travel as MPI_UINT16_T and are reduced by
// user operations (created once, after MPI_Init, on first use).
MPI_Op bf16_op(ReduceOp op) {
  static const std::array<MPI_Op, 3> ops = [] {
    std::array<MPI_Op, 3> o{};
    GCNLAB_MPI(MPI_Op_create(&bf16_reduce<ReduceOp::sum>, 1, &o[0]));
    GCNLAB_MPI(MPI_Op_create(&bf16_reduce<ReduceOp::max>, 1, &o[1]));
    GCNLAB_MPI(MPI_Op_create(&bf16_reduce<ReduceOp::min>, 1, &o[2]));
    return o;
  }();
  return ops[static_cast<int>(op)];
}

MPI_Op mpi_op(ReduceOp op, DType t) {
  if (t == DType::bf16) return bf16_op(op);
  switch (op) {
    case ReduceOp::sum: return MPI_SUM;
    case ReduceOp::max: return MPI_MAX;
    case ReduceOp::min: return MPI_MIN;
  }
  return MPI_OP_NULL;
}

// MPI-3 counts are int; larger messages must be split by the caller.
int as_count(std::int64_t n) {
  GCNLAB_CHECK(n >= 0 && n <= INT_MAX, "message of {} elements exceeds MPI's int count", n);
  return static_cast<int>(n);
}

std::vector<int> as_counts(const std::int64_t* v, int n) {
  std::vector<int> out(n);
  for (int i = 0; i < n; ++i) out[i] = as_count(v[i]);
  return out;
}

}  // namespace

MpiCommunicator::MpiCommunicator(MPI_Comm comm, Ledger& ledger, bool owned)
    : Communicator(ledger), comm_(comm), owned_(owned) {
  GCNLAB_MPI(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
  GCNLAB_MPI(MPI_Comm_rank(comm_, &rank_));
  GCNLAB_MPI(MPI_Comm_size(comm_, &size_));
  // members in MPI_COMM_WORLD's numbering (a local translation, no communication)
  MPI_Group mine, world;
  GCNLAB_MPI(MPI_Comm_group(comm_, &mine));
  GCNLAB_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world));
  std::vector<int> local(static_cast<std::size_t>(size_)), global(local.size());
  for (int r = 0; r < size_; ++r) local[static_cast<std::size_t>(r)] = r;
  GCNLAB_MPI(MPI_Group_translate_ranks(mine, size_, local.data(), world, global.data()));
  MPI_Group_free(&mine);
  MPI_Group_free(&world);
  members_ = Members::of(std::move(global));
}

MpiCommunicator::~MpiCommunicator() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (owned_ && !finalized) MPI_Comm_free(&comm_);
}

std::unique_ptr<Communicator> MpiCommunicator::split(int color, int key) const {
  MPI_Comm child;
  GCNLAB_MPI(MPI_Comm_split(comm_, color, key, &child));
  return std::make_unique<MpiCommunicator>(child, ledger(), true);
}

void MpiCommunicator::do_broadcast(void* buf, std::size_t count, DType t, int root) {
  GCNLAB_MPI(MPI_Bcast(buf, as_count(count), mpi_type(t), root, comm_));
}

void MpiCommunicator::do_allreduce(void* buf, std::size_t count, DType t, ReduceOp op) {
  GCNLAB_MPI(MPI_Allreduce(MPI_IN_PLACE, buf, as_count(count), mpi_type(t), mpi_op(op, t), comm_));
}

void MpiCommunicator::do_allgather(const void* send, void* recv, std::size_t count, DType t) {
  GCNLAB_MPI(MPI_Allgather(send, as_count(count), mpi_type(t), recv, as_count(count), mpi_type(t),
                           comm_));
}

void MpiCommunicator::do_allgatherv(const void* send, void* recv, const std::int64_t* counts, DType t) {
  const auto c = as_counts(counts, size_);
  std::vector<int> displs(size_ + 1, 0);
  for (int r = 0; r < size_; ++r) displs[r + 1] = as_count(static_cast<std::int64_t>(displs[r]) + c[r]);
  GCNLAB_MPI(MPI_Allgatherv(send, c[rank_], mpi_type(t), recv, c.data(), displs.data(), mpi_type(t), comm_));
}

namespace {
struct MpiRequest final : Communicator::Request {
  MPI_Request request = MPI_REQUEST_NULL;
  void wait() override { GCNLAB_MPI(MPI_Wait(&request, MPI_STATUS_IGNORE)); }
  bool test() override {
    int done = 0;
    GCNLAB_MPI(MPI_Test(&request, &done, MPI_STATUS_IGNORE));
    return done != 0;
  }
};

// The receives and sends of one exchange, completed together.
struct MpiRequests final : Communicator::Request {
  std::vector<MPI_Request> requests;
  void wait() override {
    GCNLAB_MPI(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE));
  }
  bool test() override {
    int done = 0;
    GCNLAB_MPI(MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE));
    return done != 0;
  }
};

// Posts the receives, then the sends, of an exchange into `requests`.
void post_exchange(MPI_Comm comm, const std::vector<Message<const void>>& sends, const std::vector<Message<void>>& recvs,
                   MPI_Datatype type, std::vector<MPI_Request>& requests) {
  requests.assign(sends.size() + recvs.size(), MPI_REQUEST_NULL);
  std::size_t k = 0;
  for (const auto& m : recvs)
    GCNLAB_MPI(MPI_Irecv(m.data, as_count(static_cast<std::int64_t>(m.count)), type, m.peer, 0, comm, &requests[k++]));
  for (const auto& m : sends)
    GCNLAB_MPI(MPI_Isend(m.data, as_count(static_cast<std::int64_t>(m.count)), type, m.peer, 0, comm, &requests[k++]));
}
}  // namespace

std::unique_ptr<Communicator::Request> MpiCommunicator::do_iallreduce(void* buf, std::size_t count, DType t,
                                                                      ReduceOp op) {
  auto r = std::make_unique<MpiRequest>();
  GCNLAB_MPI(MPI_Iallreduce(MPI_IN_PLACE, buf, as_count(count), mpi_type(t), mpi_op(op, t), comm_, &r->request));
  return r;
}

std::unique_ptr<Communicator::Request> MpiCommunicator::do_ibroadcast(void* buf, std::size_t count, DType t,
                                                                      int root) {
  auto r = std::make_unique<MpiRequest>();
  GCNLAB_MPI(MPI_Ibcast(buf, as_count(count), mpi_type(t), root, comm_, &r->request));
  return r;
}

void MpiCommunicator::do_reduce_scatter(const void* send, void* recv, std::size_t count, DType t) {
  GCNLAB_MPI(MPI_Reduce_scatter_block(send, recv, as_count(count), mpi_type(t), mpi_op(ReduceOp::sum, t), comm_));
}

void MpiCommunicator::do_reduce_scatterv(const void* send, void* recv, const std::int64_t* counts, DType t) {
  const auto c = as_counts(counts, size_);
  GCNLAB_MPI(MPI_Reduce_scatter(send, recv, c.data(), mpi_type(t), mpi_op(ReduceOp::sum, t), comm_));
}

void MpiCommunicator::do_alltoallv(const void* send, const std::int64_t* send_counts,
                                   const std::int64_t* send_displs, void* recv,
                                   const std::int64_t* recv_counts,
                                   const std::int64_t* recv_displs, DType t) {
  const auto sc = as_counts(send_counts, size_), sd = as_counts(send_displs, size_);
  const auto rc = as_counts(recv_counts, size_), rd = as_counts(recv_displs, size_);
  GCNLAB_MPI(MPI_Alltoallv(send, sc.data(), sd.data(), mpi_type(t), recv, rc.data(), rd.data(),
                           mpi_type(t), comm_));
}

void MpiCommunicator::do_exchange(const std::vector<Message<const void>>& sends,
                                  const std::vector<Message<void>>& recvs, DType t) {
  MpiRequests r;
  post_exchange(comm_, sends, recvs, mpi_type(t), r.requests);
  r.wait();
}

std::unique_ptr<Communicator::Request> MpiCommunicator::do_iexchange(const std::vector<Message<const void>>& sends,
                                                                     const std::vector<Message<void>>& recvs, DType t) {
  auto r = std::make_unique<MpiRequests>();
  post_exchange(comm_, sends, recvs, mpi_type(t), r->requests);
  return r;
}

void MpiCommunicator::do_barrier() { GCNLAB_MPI(MPI_Barrier(comm_)); }

}  // namespace gcnlab
