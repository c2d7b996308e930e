#include "backends/cuda/cuda_backend.hpp"

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <memory>
#include <utility>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nvtx3/nvToolsExt.h>

#include "backends/cuda/check.hpp"
#include "backends/cuda/kernels.hpp"
#include "backends/device_sharing.hpp"
#include "backends/row_chunks.hpp"
#include "backends/factory.hpp"

namespace gcnlab {

namespace {
enum Slot { kXentRows = 0, kColumnPartials = 1 };

// What one sparse matrix keeps between SpMMs: its cuSPARSE descriptor over
// 32-bit row offsets (narrowed once; cuSPARSE wants equal index widths) and a
// work buffer per dense shape it has been multiplied with (cusparseSpMM_bufferSize
// depends on the dense operands). No cusparseSpMM_preprocess: NVIDIA documents
// its gains for CSR_ALG1/ALG3, and row-major operands use CSR_ALG2.
struct SpmmPlan {
  struct Work {
    std::int64_t cols, ldx, ldy;
    Buffer<std::uint8_t> buffer;
  };
  Buffer<std::int32_t> offsets;
  cusparseSpMatDescr_t a = nullptr;
  std::vector<Work> work;
  ~SpmmPlan() {
    if (a) cusparseDestroySpMat(a);
  }
};

// The edge passes' walk of a block for one head count (backends/row_chunks.hpp): its
// long rows, their chunks and the scratch of a reduction's chunk results, on the device.
struct WalkPlan {
  int heads = 0;
  Buffer<std::int64_t> rows, first;
  Buffer<std::int32_t> chunk_row;
  Buffer<float> partial;
  cuda::RowWalk walk;
};

// What the CUDA backend keeps with a sparse block (Csr::plan).
struct BlockPlans {
  std::unique_ptr<SpmmPlan> spmm;
  std::vector<std::unique_ptr<WalkPlan>> walks;
};

BlockPlans& plans_of(const Csr& a) {
  if (!a.plan) a.plan = std::make_shared<BlockPlans>();
  return *static_cast<BlockPlans*>(a.plan.get());
}

// A device buffer holding `v` (at least one element: a plan's empty lists need a pointer).
template <class T>
Buffer<T> upload_vector(CudaBackend& be, const std::vector<T>& v) {
  Buffer<T> b(be, std::max<std::size_t>(v.size(), 1));
  if (!v.empty()) be.copy_to_device(b.data(), v.data(), v.size() * sizeof(T));
  return b;
}
}  // namespace

std::unique_ptr<Backend> make_cuda_backend(const BackendOptions& opts) { return std::make_unique<CudaBackend>(opts); }

bool is_device_pointer(const void* p) {
  if (!p) return false;
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky error of an unregistered host pointer
    return false;
  }
  return attr.type == cudaMemoryTypeDevice;
}

CudaBackend::CudaBackend(const BackendOptions& opts) {
  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  GCNLAB_CHECK(rc == cudaSuccess && count > 0, "--backend cuda: no usable CUDA device ({})",
               rc == cudaSuccess ? "no device found" : cudaGetErrorString(rc));
  // One rank per GPU, unless the node's ranks share devices over MPI or in NCCL's test mode:
  // decided on every rank of the node alike, before any NCCL call (backends/device_sharing.hpp).
  std::vector<std::string> host_ids = opts.nccl_host_ids;
  if (host_ids.empty()) host_ids.assign(static_cast<std::size_t>(opts.ranks_on_node), "");
  const DevicePlacement place = place_on_devices(opts.local_rank, count, host_ids, opts.share_devices);
  if (!place.note.empty() && opts.local_rank == 0) std::fprintf(stderr, "gcnlab: note: %s\n", place.note.c_str());
  device_ = place.device;
  GCNLAB_CUDA_CALL(cudaSetDevice(device_));
  GCNLAB_CUDA_CALL(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  GCNLAB_CUDA_CALL(cudaStreamCreateWithFlags(&comm_stream_, cudaStreamNonBlocking));
  GCNLAB_CUDA_CALL(cublasCreate(&cublas_));
  GCNLAB_CUDA_CALL(cublasSetStream(cublas_, stream_));
  GCNLAB_CUDA_CALL(cusparseCreate(&cusparse_));
  GCNLAB_CUDA_CALL(cusparseSetStream(cusparse_, stream_));
}

std::pair<CUevent_st*, CUevent_st*> CudaBackend::acquire_events() {
  if (!free_events_.empty()) {
    const auto e = free_events_.back();
    free_events_.pop_back();
    return e;
  }
  cudaEvent_t a, b;
  GCNLAB_CUDA_CALL(cudaEventCreate(&a));
  GCNLAB_CUDA_CALL(cudaEventCreate(&b));
  return {a, b};
}

void CudaBackend::release_events(std::pair<CUevent_st*, CUevent_st*> e) { free_events_.push_back(e); }

namespace {

// Device time of a compute scope: events around it on the compute stream, so
// the scope neither waits for earlier queued work nor counts it.
class EventStopwatch final : public Ledger::Stopwatch {
 public:
  explicit EventStopwatch(CudaBackend& b) : backend_(b), events_(b.acquire_events()) {}
  ~EventStopwatch() override { backend_.release_events(events_); }
  void start() override { GCNLAB_CUDA_CALL(cudaEventRecord(events_.first, backend_.stream())); }
  double stop() override {
    GCNLAB_CUDA_CALL(cudaEventRecord(events_.second, backend_.stream()));
    GCNLAB_CUDA_CALL(cudaEventSynchronize(events_.second));
    float ms = 0;
    GCNLAB_CUDA_CALL(cudaEventElapsedTime(&ms, events_.first, events_.second));
    return ms * 1e-3;
  }

 private:
  CudaBackend& backend_;
  std::pair<CUevent_st*, CUevent_st*> events_;
};

}  // namespace

std::function<std::unique_ptr<Ledger::Stopwatch>()> cuda_stopwatch(Backend& backend) {
  auto* cuda = dynamic_cast<CudaBackend*>(&backend);
  GCNLAB_ASSERT(cuda != nullptr);
  return [cuda]() -> std::unique_ptr<Ledger::Stopwatch> { return std::make_unique<EventStopwatch>(*cuda); };
}

namespace {

// One NVTX range per ledger scope, named after its category (header-only NVTX 3).
class NvtxMarker final : public Ledger::Marker {
 public:
  void begin(Category c) override { nvtxRangePushA(std::string(to_string(c)).c_str()); }
  void end() override { nvtxRangePop(); }
};

}  // namespace

std::shared_ptr<Ledger::Marker> nvtx_marker() { return std::make_shared<NvtxMarker>(); }

CudaBackend::~CudaBackend() {
  for (const auto& [a, b] : free_events_) cudaEventDestroy(a), cudaEventDestroy(b);
  for (void* p : scratch_)
    if (p) cudaFree(p);
  if (cusparse_) cusparseDestroy(cusparse_);
  if (cublas_) cublasDestroy(cublas_);
  if (comm_stream_) cudaStreamDestroy(comm_stream_);
  if (stream_) cudaStreamDestroy(stream_);
}

std::vector<std::pair<std::string, std::string>> CudaBackend::versions() const {
  int runtime = 0, nccl = 0;
  cudaRuntimeGetVersion(&runtime);
  ncclGetVersion(&nccl);
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, device_);
  return {{"cuda_runtime", fmt::format("{}.{}", runtime / 1000, runtime % 1000 / 10)},
          {"nccl", fmt::format("{}.{}.{}", nccl / 10000, nccl / 100 % 100, nccl % 100)},
          {"gpu", prop.name}};
}

void CudaBackend::sync() { GCNLAB_CUDA_CALL(cudaStreamSynchronize(stream_)); }

std::optional<std::size_t> CudaBackend::free_bytes() const {
  std::size_t free = 0, total = 0;
  GCNLAB_CUDA_CALL(cudaMemGetInfo(&free, &total));
  return free;
}

void* CudaBackend::do_allocate(std::size_t bytes) {
  void* p = nullptr;
  GCNLAB_CUDA_CALL(cudaMalloc(&p, bytes));
  return p;
}

void CudaBackend::do_deallocate(void* p, std::size_t) { cudaFree(p); }

void* CudaBackend::scratch(int slot, std::size_t bytes) {
  if (bytes > scratch_bytes_[slot]) {
    sync();  // the old buffer may still be in use by queued work
    if (scratch_[slot]) GCNLAB_CUDA_CALL(cudaFree(scratch_[slot]));
    GCNLAB_CUDA_CALL(cudaMalloc(&scratch_[slot], bytes));
    scratch_bytes_[slot] = bytes;
  }
  return scratch_[slot];
}

void CudaBackend::copy_to_device(void* dst, const void* src, std::size_t bytes) {
  GCNLAB_CUDA_CALL(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream_));
  sync();
}
void CudaBackend::copy_to_host(void* dst, const void* src, std::size_t bytes) {
  GCNLAB_CUDA_CALL(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream_));
  sync();
}
void CudaBackend::copy_on_device(void* dst, const void* src, std::size_t bytes) {
  GCNLAB_CUDA_CALL(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream_));
}

// Y = A X + beta Y with cuSPARSE's generic SpMM on row-major dense operands.
// cuSPARSE needs equal index types for offsets and columns: the 64-bit row
// offsets are narrowed into a reused 32-bit buffer (blocks have < 2^31 nnz).
void CudaBackend::spmm(const Csr& a, ConstView x, View y, float beta, const Progress&) {
  GCNLAB_ASSERT(a.rows == y.rows && a.cols == x.rows && x.cols == y.cols);
  if (y.rows == 0 || y.cols == 0) return;
  if (a.nnz == 0 || x.rows == 0) {
    if (beta == 0.f) fill(y, 0.f);
    else if (beta != 1.f) cuda::scale(stream_, y.rows, y.cols, y.data, y.ld, beta);
    return;
  }
  if (a.compressed) {  // hypersparse: only the stored rows, added after beta has been applied
    if (beta == 0.f) fill(y, 0.f);
    else if (beta != 1.f) cuda::scale(stream_, y.rows, y.cols, y.data, y.ld, beta);
    cuda::spmm_rows(stream_, a.stored_rows(), y.cols, a.row_ids.data(), a.rowptr.data(), a.col.data(), a.val.data(),
                    x.data, x.ld, y.data, y.ld);
    return;
  }
  GCNLAB_CHECK(a.nnz < (std::int64_t{1} << 31), "sparse block with {} nonzeros exceeds 32-bit cuSPARSE indices", a.nnz);
  std::unique_ptr<SpmmPlan>& slot = plans_of(a).spmm;
  if (!slot) {
    auto p = std::make_unique<SpmmPlan>();
    p->offsets = Buffer<std::int32_t>(*this, static_cast<std::size_t>(a.rows + 1));
    cuda::narrow_offsets(stream_, a.rows + 1, a.rowptr.data(), p->offsets.data());
    GCNLAB_CUDA_CALL(cusparseCreateCsr(&p->a, a.rows, a.cols, a.nnz, p->offsets.data(),
                                       const_cast<std::int32_t*>(a.col.data()), const_cast<float*>(a.val.data()),
                                       CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
    slot = std::move(p);
  }
  SpmmPlan* plan = slot.get();
  cusparseDnMatDescr_t mx, my;
  GCNLAB_CUDA_CALL(cusparseCreateDnMat(&mx, x.rows, x.cols, x.ld, const_cast<float*>(x.data), CUDA_R_32F, CUSPARSE_ORDER_ROW));
  GCNLAB_CUDA_CALL(cusparseCreateDnMat(&my, y.rows, y.cols, y.ld, y.data, CUDA_R_32F, CUSPARSE_ORDER_ROW));
  const float alpha = 1.f;
  auto work = std::find_if(plan->work.begin(), plan->work.end(), [&](const SpmmPlan::Work& w) {
    return w.cols == x.cols && w.ldx == x.ld && w.ldy == y.ld;
  });
  if (work == plan->work.end()) {
    std::size_t bytes = 0;
    GCNLAB_CUDA_CALL(cusparseSpMM_bufferSize(cusparse_, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                             &alpha, plan->a, mx, &beta, my, CUDA_R_32F, CUSPARSE_SPMM_CSR_ALG2, &bytes));
    plan->work.push_back({x.cols, x.ld, y.ld, Buffer<std::uint8_t>(*this, std::max<std::size_t>(bytes, 1))});
    work = plan->work.end() - 1;
  }
  GCNLAB_CUDA_CALL(cusparseSpMM(cusparse_, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha,
                                plan->a, mx, &beta, my, CUDA_R_32F, CUSPARSE_SPMM_CSR_ALG2, work->buffer.data()));
  cusparseDestroyDnMat(my);
  cusparseDestroyDnMat(mx);
}

// Row-major C = op(A) op(B) is column-major Cᵀ = op(B)ᵀ op(A)ᵀ: swap the operands.
void CudaBackend::gemm(Op op_a, Op op_b, float alpha, ConstView a, ConstView b, float beta, View c) {
  const std::int64_t m = op_a == Op::N ? a.rows : a.cols;
  const std::int64_t k = op_a == Op::N ? a.cols : a.rows;
  const std::int64_t n = op_b == Op::N ? b.cols : b.rows;
  GCNLAB_ASSERT(c.rows == m && c.cols == n && (op_b == Op::N ? b.rows : b.cols) == k);
  if (m == 0 || n == 0) return;
  if (k == 0) {
    if (beta == 0.f) fill(c, 0.f);
    else cuda::scale(stream_, c.rows, c.cols, c.data, c.ld, beta);
    return;
  }
  GCNLAB_CUDA_CALL(cublasSgemm(cublas_, op_b == Op::N ? CUBLAS_OP_N : CUBLAS_OP_T, op_a == Op::N ? CUBLAS_OP_N : CUBLAS_OP_T,
                               static_cast<int>(n), static_cast<int>(m), static_cast<int>(k), &alpha, b.data,
                               static_cast<int>(std::max<std::int64_t>(b.ld, 1)), a.data,
                               static_cast<int>(std::max<std::int64_t>(a.ld, 1)), &beta, c.data,
                               static_cast<int>(std::max<std::int64_t>(c.ld, 1))));
}

void CudaBackend::fill(View y, float value) { cuda::fill(stream_, y.rows, y.cols, {y.data, y.ld, value}); }
void CudaBackend::copy(ConstView x, View y) { cuda::copy(stream_, y.rows, y.cols, {x.data, x.ld, y.data, y.ld}); }
void CudaBackend::transpose(ConstView x, View y) {
  GCNLAB_ASSERT(x.rows == y.cols && x.cols == y.rows);
  cuda::transpose(stream_, y.rows, y.cols, {x.data, x.ld, y.data, y.ld});
}
void CudaBackend::axpy(float a, ConstView x, View y) { cuda::axpy(stream_, y.rows, y.cols, {a, x.data, x.ld, y.data, y.ld}); }
void CudaBackend::axpy_plus(float a, const float* s, ConstView x, View y) {
  cuda::axpy_plus(stream_, y.rows, y.cols, {a, s, x.data, x.ld, y.data, y.ld});
}
// cuSPARSE's product, then the term in its own pass (the bits of spmm and axpy_plus / axpy).
void CudaBackend::spmm_plus(const Csr& a, ConstView x, const RowTerm& t, View y) {
  GCNLAB_ASSERT(t.r.rows == y.rows && t.r.cols == y.cols);
  spmm(a, x, y, 0.f);
  add_term(t, y);
}
double* CudaBackend::column_partials(std::int64_t rows, std::int64_t cols) {
  const std::size_t n = static_cast<std::size_t>(std::max<std::int64_t>(cuda::column_chunks(rows) * cols, 1));
  return static_cast<double*>(scratch(kColumnPartials, n * sizeof(double)));
}
void CudaBackend::column_sums(ConstView x, float* out) {
  cuda::column_sums(stream_, x.cols, {x.data, x.ld, x.rows, out}, column_partials(x.rows, x.cols));
}
void CudaBackend::inner_product(ConstView x, ConstView y, float* out) {
  GCNLAB_ASSERT(x.rows == y.rows && x.cols == y.cols);
  cuda::inner_product(stream_, x.cols, {x.data, x.ld, y.data, y.ld, x.rows, out}, column_partials(x.rows, x.cols));
}
void CudaBackend::gather_rows(ConstView x, const std::int64_t* rows, View out) {
  cuda::gather_rows(stream_, out.rows, out.cols, {x.data, x.ld, rows, out.data, out.ld});
}
void CudaBackend::pack_bf16(ConstView x, bf16* out) { cuda::pack_bf16(stream_, x.rows, x.cols, {x.data, x.ld, out, x.cols}); }
void CudaBackend::unpack_bf16(const bf16* in, View y) {
  cuda::unpack_bf16(stream_, y.rows, y.cols, {in, y.cols, y.data, y.ld});
}
void CudaBackend::relu(ConstView z, View h) { cuda::relu(stream_, h.rows, h.cols, {z.data, z.ld, h.data, h.ld}); }
void CudaBackend::relu_backward(ConstView dh, ConstView z, View g) {
  cuda::relu_backward(stream_, g.rows, g.cols, {dh.data, dh.ld, z.data, z.ld, g.data, g.ld});
}
void CudaBackend::dropout(ConstView x, View y, const std::int64_t* row_ids, std::int64_t col0, const DropoutParams& p) {
  cuda::dropout(stream_, y.rows, y.cols, {x.data, x.ld, y.data, y.ld, row_ids, col0, p.seed, p.stream, p.p, p.scale()});
}
void CudaBackend::relu_dropout(ConstView z, View x, const std::int64_t* row_ids, std::int64_t col0,
                               const DropoutParams& p) {
  cuda::relu_dropout(stream_, x.rows, x.cols,
                     {{z.data, z.ld, x.data, x.ld, row_ids, col0, p.seed, p.stream, p.p, p.scale()}});
}
void CudaBackend::dropout_relu_backward(ConstView dx, ConstView x, float scale, View g) {
  cuda::dropout_relu_backward(stream_, g.rows, g.cols, {dx.data, dx.ld, x.data, x.ld, g.data, g.ld, scale});
}
void CudaBackend::add_row(const float* b, View y) { cuda::add_row(stream_, y.rows, y.cols, {b, y.data, y.ld}); }
void CudaBackend::bias_relu(ConstView z, ConstView r, const float* b, View h) {
  if (r.data) cuda::bias_relu(stream_, h.rows, h.cols, ew::BiasRelu<true>{{z.data, z.ld, r.data, r.ld, b}, h.data, h.ld});
  else cuda::bias_relu(stream_, h.rows, h.cols, ew::BiasRelu<false>{{z.data, z.ld, nullptr, 0, b}, h.data, h.ld});
}
void CudaBackend::bias_relu_dropout(ConstView z, ConstView r, const float* b, View x, const std::int64_t* row_ids,
                                    std::int64_t col0, const DropoutParams& p) {
  const ew::Dropout d{z.data, z.ld, x.data, x.ld, row_ids, col0, p.seed, p.stream, p.p, p.scale()};
  if (r.data) cuda::bias_relu_dropout(stream_, x.rows, x.cols, ew::BiasReluDropout<true>{d, {z.data, z.ld, r.data, r.ld, b}});
  else cuda::bias_relu_dropout(stream_, x.rows, x.cols, ew::BiasReluDropout<false>{d, {z.data, z.ld, nullptr, 0, b}});
}
void CudaBackend::relu_backward_sums(ConstView dh, ConstView z, View g, float* sums) {
  cuda::written_column_sums<ew::ReluBackward>(stream_, g.rows, g.cols,
                                              {{dh.data, dh.ld, z.data, z.ld, g.data, g.ld}, sums},
                                              column_partials(g.rows, g.cols));
}
void CudaBackend::dropout_relu_backward_sums(ConstView dx, ConstView x, float scale, View g, float* sums) {
  cuda::written_column_sums<ew::DropoutReluBackward>(stream_, g.rows, g.cols,
                                                     {{dx.data, dx.ld, x.data, x.ld, g.data, g.ld, scale}, sums},
                                                     column_partials(g.rows, g.cols));
}
void CudaBackend::bias_elu(ConstView z, const float* b, View h) {
  cuda::bias_elu(stream_, h.rows, h.cols, {{z.data, z.ld, nullptr, 0, b}, h.data, h.ld});
}
void CudaBackend::bias_elu_dropout(ConstView z, const float* b, View x, const std::int64_t* row_ids, std::int64_t col0,
                                   const DropoutParams& p) {
  const ew::Dropout d{nullptr, 0, x.data, x.ld, row_ids, col0, p.seed, p.stream, p.p, p.scale()};
  cuda::bias_elu_dropout(stream_, x.rows, x.cols, {d, {z.data, z.ld, nullptr, 0, b}});
}
void CudaBackend::elu_backward_sums(ConstView dh, ConstView z, const float* b, ew::EluOperand of, View g,
                                    float* sums) {
  cuda::written_column_sums<ew::EluBackward>(stream_, g.rows, g.cols,
                                             {{dh.data, dh.ld, {z.data, z.ld, b, of}, g.data, g.ld}, sums},
                                             column_partials(g.rows, g.cols));
}
void CudaBackend::dropout_elu_backward_sums(ConstView dx, ConstView z, const float* b, ew::EluOperand of,
                                            const std::int64_t* row_ids, std::int64_t col0, const DropoutParams& p,
                                            View g, float* sums) {
  const ew::Dropout d{dx.data, dx.ld, nullptr, 0, row_ids, col0, p.seed, p.stream, p.p, p.scale()};
  cuda::written_column_sums<ew::DropoutEluBackward>(stream_, g.rows, g.cols,
                                                    {{d, {z.data, z.ld, b, of}, g.data, g.ld}, sums},
                                                    column_partials(g.rows, g.cols));
}

void CudaBackend::fill_unstored(const Csr& a, float* v, int heads, float value) {
  if (a.compressed) fill(View{v, a.rows, heads, heads}, value);
}

const cuda::RowWalk& CudaBackend::row_walk(const Csr& a, int heads) {
  BlockPlans& plans = plans_of(a);
  for (const auto& w : plans.walks)
    if (w->heads == heads) return w->walk;
  std::vector<std::int64_t> rowptr(static_cast<std::size_t>(a.stored_rows() + 1));
  copy_to_host(rowptr.data(), a.rowptr.data(), rowptr.size() * sizeof(std::int64_t));
  const RowChunks chunks = plan_row_chunks(rowptr, heads);
  auto p = std::make_unique<WalkPlan>();
  p->heads = heads;
  p->rows = upload_vector(*this, chunks.rows);
  p->first = upload_vector(*this, chunks.first);
  p->chunk_row = upload_vector(*this, chunks.chunk_row);
  p->partial = Buffer<float>(*this, static_cast<std::size_t>(std::max<std::int64_t>(chunks.chunks() * heads, 1)));
  p->walk = {a.stored_rows(), chunks.lanes, chunks.short_edges, chunks.chunk,
             static_cast<std::int64_t>(chunks.rows.size()), chunks.chunks(), p->rows.data(), p->first.data(),
             p->chunk_row.data(), p->partial.data()};
  plans.walks.push_back(std::move(p));
  return plans.walks.back()->walk;
}
void CudaBackend::edge_scores(const Csr& a, int heads, const float* src, const float* dst, float slope, float* e) {
  cuda::edge_scores(stream_, row_walk(a, heads), {edge_block(a, heads), src, dst, slope, e});
}
void CudaBackend::edge_row_max(const Csr& a, int heads, const float* e, float* max) {
  fill_unstored(a, max, heads, -INFINITY);
  cuda::edge_row_max(stream_, row_walk(a, heads), {edge_block(a, heads), e, max});
}
void CudaBackend::edge_exp_row_sum(const Csr& a, int heads, const float* max, float* e, float* sum) {
  fill_unstored(a, sum, heads, 0.f);
  cuda::edge_exp_row_sum(stream_, row_walk(a, heads), {edge_block(a, heads), max, e, sum});
}
void CudaBackend::edge_scale_rows(const Csr& a, int heads, const float* sum, float* e) {
  cuda::edge_scale_rows(stream_, row_walk(a, heads), {edge_block(a, heads), sum, e});
}
void CudaBackend::edge_softmax(const Csr& a, int heads, const float* src, const float* dst, float slope, float* e,
                               float* max, float* sum) {
  fill_unstored(a, max, heads, -INFINITY);
  fill_unstored(a, sum, heads, 0.f);
  cuda::edge_softmax(stream_, row_walk(a, heads), {edge_block(a, heads), src, dst, slope, e, max, sum});
}
void CudaBackend::edge_dropout(const Csr& a, int heads, const float* in, float* out, const std::int64_t* row_ids,
                               const std::int64_t* col_ids, const DropoutParams& p) {
  cuda::edge_dropout(stream_, row_walk(a, heads),
                     {edge_block(a, heads), in, out, row_ids, col_ids, p.seed, p.stream, p.p, p.scale()});
}
void CudaBackend::spmm_edges(const Csr& a, int heads, ew::HeadSplit hs, const float* v, const std::int64_t* perm,
                             ConstView x, View y) {
  GCNLAB_ASSERT(y.rows == a.rows && x.rows == a.cols);
  if (a.compressed) fill(y, 0.f);
  const ew::EdgeBlock b = edge_block(a, heads);
  if (hs.mean == 0) {
    GCNLAB_ASSERT(x.cols == y.cols);
    cuda::spmm_edges(stream_, a.stored_rows(), y.cols, {{b, v, perm, hs, x.data, x.ld, y.data, y.ld, y.cols}});
  } else if (x.cols == y.cols * hs.mean) {  // Z -> the heads' mean
    cuda::spmm_edges_mean(stream_, a.stored_rows(), y.cols, {{b, v, perm, hs, x.data, x.ld, y.data, y.ld, y.cols}});
  } else {  // G -> every head's share
    GCNLAB_ASSERT(y.cols == x.cols * hs.mean);
    cuda::spmm_edges_spread(stream_, a.stored_rows(), y.cols, {{b, v, perm, hs, x.data, x.ld, y.data, y.ld, x.cols}});
  }
}
void CudaBackend::spmm_sddmm_edges(const Csr& a, const Csr& t, const std::int64_t* perm, int heads, ew::HeadSplit hs,
                                   const float* v, ConstView g, ConstView z, View y, float* dots) {
  spmm_edges(t, heads, hs, v, perm, g, y);  // two warp kernels (kernels.cu), one stream
  sddmm(a, heads, hs, g, z, dots);
}

void CudaBackend::sddmm(const Csr& a, int heads, ew::HeadSplit hs, ConstView g, ConstView z, float* out) {
  GCNLAB_ASSERT(z.cols == g.cols * (hs.mean ? hs.mean : 1) && g.rows == a.rows && z.rows == a.cols);
  const ew::EdgeBlock b = edge_block(a, heads);
  if (hs.mean) cuda::sddmm_mean(stream_, row_walk(a, heads), {{b, hs, g.data, g.ld, z.data, z.ld, g.cols, out}});
  else cuda::sddmm(stream_, row_walk(a, heads), {{b, hs, g.data, g.ld, z.data, z.ld, g.cols, out}});
}
void CudaBackend::edge_row_dot(const Csr& a, int heads, const float* x, const float* y, float* out) {
  fill_unstored(a, out, heads, 0.f);
  cuda::edge_row_dot(stream_, row_walk(a, heads), {edge_block(a, heads), x, y, out});
}
void CudaBackend::edge_softmax_backward(const Csr& a, int heads, const float* alpha, const float* rowdot,
                                        const float* src, const float* dst, float slope, float* d) {
  cuda::edge_softmax_backward(stream_, row_walk(a, heads), {edge_block(a, heads), alpha, rowdot, src, dst, slope, d});
}
void CudaBackend::edge_row_sums(const Csr& a, int heads, const float* v, const std::int64_t* perm, float* out) {
  fill_unstored(a, out, heads, 0.f);
  cuda::edge_row_sums(stream_, row_walk(a, heads), {edge_block(a, heads), v, perm, out});
}
void CudaBackend::edge_softmax_grad(const Csr& a, int heads, const float* alpha, const float* src, const float* dst,
                                    float slope, float* d, float* rowdot, float* dd) {
  fill_unstored(a, rowdot, heads, 0.f);
  fill_unstored(a, dd, heads, 0.f);
  cuda::edge_softmax_grad(stream_, row_walk(a, heads), {edge_block(a, heads), alpha, src, dst, slope, d, rowdot, dd});
}
void CudaBackend::head_dots(ConstView z, const float* a_src, const float* a_dst, ew::HeadSplit hs, View s, View d) {
  GCNLAB_ASSERT(s.rows == z.rows && d.rows == z.rows && s.cols == d.cols && s.ld == s.cols && d.ld == d.cols);
  const auto heads = static_cast<int>(s.cols);
  cuda::head_dots(stream_, z.rows, heads, {z.data, z.ld, z.cols, a_src, a_dst, hs, heads, s.data, d.data});
}
void CudaBackend::head_dots_backward(ConstView ds, ConstView dd, const float* a_src, const float* a_dst,
                                     ew::HeadSplit hs, ConstView z, View dz, float* da_src, float* da_dst) {
  GCNLAB_ASSERT(ds.rows == dz.rows && dd.rows == dz.rows && z.rows == dz.rows && z.cols == dz.cols &&
                ds.cols == dd.cols && ds.ld == ds.cols && dd.ld == dd.cols);
  cuda::head_dots_adjoint(stream_, dz.rows, dz.cols,
                          {ds.data, dd.data, static_cast<int>(ds.cols), a_src, a_dst, hs, dz.data, dz.ld});
  for (const auto& [e, out] : {std::pair{ds, da_src}, std::pair{dd, da_dst}})
    cuda::head_column_dots(stream_, z.cols, {e.data, e.ld, z.data, z.ld, hs, z.rows, out},
                           column_partials(z.rows, z.cols));
}

void CudaBackend::row_sum_squares(ConstView z, float* sumsq) {
  cuda::row_sum_squares(stream_, z.rows, {z.data, z.ld, z.cols, sumsq});
}
void CudaBackend::norm_relu_dropout_add(ConstView z, const float* sumsq, const float* gamma, ew::NormParams n,
                                        const std::int64_t* row_ids, std::int64_t col0, const DropoutParams& p,
                                        View y) {
  cuda::norm_relu_dropout_add(
      stream_, y.rows, y.cols,
      {{z.data, z.ld, y.data, y.ld, row_ids, col0, p.seed, p.stream, p.p, p.scale()}, sumsq, gamma, n, p.p > 0});
}
void CudaBackend::norm_relu_dropout_backward(ConstView dy, ConstView z, const float* sumsq, const float* gamma,
                                             ew::NormParams n, const std::int64_t* row_ids, std::int64_t col0,
                                             const DropoutParams& p, View g, float* dgamma, float* rowdot) {
  cuda::norm_relu_dropout_backward(
      stream_, g.rows, g.cols,
      {{dy.data, dy.ld, g.data, g.ld, row_ids, col0, p.seed, p.stream, p.p, p.scale()}, z.data, z.ld, gamma, p.p > 0});
  cuda::norm_scale_gradient(stream_, g.cols, {g.data, g.ld, z.data, z.ld, g.rows, sumsq, n, dgamma},
                            column_partials(g.rows, g.cols));
  cuda::norm_row_dot(stream_, g.rows, {g.data, g.ld, z.data, z.ld, g.cols, gamma, rowdot});
}
void CudaBackend::norm_backward(ConstView z, const float* sumsq, const float* gamma, const float* rowdot,
                                ew::NormParams n, View g) {
  cuda::norm_backward(stream_, g.rows, g.cols, {g.data, g.ld, z.data, z.ld, sumsq, gamma, rowdot, n});
}
void CudaBackend::adam(View w, ConstView g, View m, View v, const ew::AdamParams& p) {
  cuda::adam(stream_, w.size(), {w.data, g.data, m.data, v.data, p});
}
void CudaBackend::sgd(View w, ConstView g, float lr) { cuda::sgd(stream_, w.size(), {w.data, g.data, lr}); }
void CudaBackend::row_max(ConstView z, float* max) { cuda::row_max(stream_, z.rows, {z.data, z.ld, z.cols, max}); }
void CudaBackend::row_sum_exp(ConstView z, const float* max, float* sum) {
  cuda::row_sum_exp(stream_, z.rows, {z.data, z.ld, z.cols, max, sum});
}

XentSums CudaBackend::softmax_xent(ConstView z, std::int64_t col0, const float* max, const float* sum,
                                   const std::int32_t* label, const std::uint8_t* split, float scale, View g) {
  // Per-row results on the device, summed there per block by split (a fixed tree: the same
  // bits on every run); the host adds the blocks' sums in order. Copying the per-row arrays
  // instead (17 bytes a row) took 47 ms of a 134 ms epoch at 4 M vertices on an H200.
  const std::int64_t rows = z.rows;
  XentSums s;
  if (rows == 0) return s;
  const int blocks = cuda::xent_blocks(rows);
  const std::size_t bytes = rows * (sizeof(double) + 2 * sizeof(int)) + blocks * cuda::kXentSums * sizeof(double);
  auto* base = static_cast<char*>(scratch(kXentRows, bytes));
  auto* sums = reinterpret_cast<double*>(base);  // first: 8-byte aligned
  auto* loss = sums + blocks * cuda::kXentSums;
  auto* correct = reinterpret_cast<int*>(loss + rows);
  auto* counted = correct + rows;
  cuda::softmax_xent(stream_, rows, {z.data, z.ld, z.cols, col0, max, sum, label, split, scale, g.data, g.ld}, loss,
                     correct, counted);
  cuda::xent_block_sums(stream_, rows, loss, correct, counted, split, sums);
  std::vector<double> h(static_cast<std::size_t>(blocks) * cuda::kXentSums);
  copy_to_host(h.data(), sums, h.size() * sizeof(double));
  for (int b = 0; b < blocks; ++b) {
    const double* v = &h[static_cast<std::size_t>(b) * cuda::kXentSums];
    s.loss += v[0];
    for (int k = 0; k < 4; ++k) s.correct[k] += v[1 + k], s.counted[k] += v[5 + k];
  }
  s.correct[0] = s.counted[0] = 0;
  return s;
}

}  // namespace gcnlab
