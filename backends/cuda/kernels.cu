// The CUDA launchers of the element-wise functors: the same functors the CPU
// backend runs in OpenMP loops (common/backend/elementwise.hpp).

#include <algorithm>
#include <stdexcept>
#include <string>

#include "backends/cuda/kernels.hpp"

namespace gcnlab::cuda {

namespace {

constexpr int kThreads = 256;

int blocks_for(std::int64_t n) {
  return static_cast<int>(std::min<std::int64_t>((n + kThreads - 1) / kThreads, 65535 * 16));
}

template <class F>
__global__ void each_2d(std::int64_t rows, std::int64_t cols, F f) {
  const std::int64_t n = rows * cols;
  for (std::int64_t k = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; k < n;
       k += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    f(k / cols, k % cols);
}

template <class F>
__global__ void each_1d(std::int64_t n, F f) {
  for (std::int64_t k = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; k < n;
       k += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    f(k);
}

void check_launch() {
  const cudaError_t rc = cudaGetLastError();
  if (rc != cudaSuccess) throw std::runtime_error(std::string("CUDA kernel launch failed: ") + cudaGetErrorString(rc));
}

template <class F>
void launch_2d(cudaStream_t s, std::int64_t rows, std::int64_t cols, const F& f) {
  if (rows <= 0 || cols <= 0) return;
  each_2d<<<blocks_for(rows * cols), kThreads, 0, s>>>(rows, cols, f);
  check_launch();
}

template <class F>
void launch_1d(cudaStream_t s, std::int64_t n, const F& f) {
  if (n <= 0) return;
  each_1d<<<blocks_for(n), kThreads, 0, s>>>(n, f);
  check_launch();
}

struct XentToArrays {
  ew::SoftmaxXent f;
  double* loss;
  int* correct;
  int* counted;
  __device__ void operator()(std::int64_t i) const {
    const ew::XentRow r = f(i);
    loss[i] = r.loss;
    correct[i] = r.correct;
    counted[i] = r.counted;
  }
};

struct Narrow {
  const std::int64_t* in;
  std::int32_t* out;
  __device__ void operator()(std::int64_t i) const { out[i] = static_cast<std::int32_t>(in[i]); }
};

struct Scale {
  float* y;
  std::int64_t ld;
  float beta;
  __device__ void operator()(std::int64_t i, std::int64_t j) const { y[i * ld + j] *= beta; }
};

// y[row_ids[s]] += Σ_k val[k] x[col[k]] for stored row s of a compressed-row CSR;
// one thread per (stored row, column), so a warp reads consecutive columns.
struct SpmmRows {
  const std::int32_t* ids;
  const std::int64_t* rowptr;
  const std::int32_t* col;
  const float* val;
  const float* x;
  std::int64_t ldx;
  float* y;
  std::int64_t ldy;
  __device__ void operator()(std::int64_t s, std::int64_t j) const {
    float acc = 0.f;
    for (std::int64_t k = rowptr[s]; k < rowptr[s + 1]; ++k) acc += val[k] * x[col[k] * ldx + j];
    y[ids[s] * ldy + j] += acc;
  }
};

// --- Graph attention's edge passes (edge_ops.hpp): a warp per stored row, its
// lanes over the row's (edge, head) elements, flat q = k H + h from the row's
// first, 32 apart: consecutive lanes read consecutive values of the edge-major
// tensors, and a hub row of d edges costs d H / 32 steps of its warp instead of
// d H of one thread. A per-row, per-head sum is each lane's partial sum, then a
// butterfly over the lanes of one head (H | 32: lane l always holds head l mod H),
// a fixed tree: the same bits on every run, whatever the schedule. Other H:
// the row form on one lane (correct, not fast: GAT's heads are powers of two).
constexpr int kWarp = 32;
constexpr unsigned kFullMask = 0xffffffffu;

template <class F>
__global__ void rows_by_warp(std::int64_t stored, F f) {
  const int lane = static_cast<int>(threadIdx.x % kWarp);
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * (blockDim.x / kWarp);
  for (std::int64_t s = (blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x) / kWarp; s < stored;
       s += warps)
    f(s, lane);
}

template <class F>
void launch_rows_by_warp(cudaStream_t s, std::int64_t stored, const F& f) {
  if (stored <= 0) return;
  constexpr int per_block = kThreads / kWarp;
  const int blocks = static_cast<int>(std::min<std::int64_t>((stored + per_block - 1) / per_block, 65535 * 16));
  rows_by_warp<<<blocks, kThreads, 0, s>>>(stored, f);
  check_launch();
}

__device__ bool lanes_hold_heads(int heads) { return heads <= kWarp && kWarp % heads == 0; }

// each(k, h) for the row's elements, lane by lane (no 64-bit division: lane l's head
// is l mod H where H | 32, and its edges step by 32 / H).
template <class Each>
__device__ void row_elements(const ew::EdgeBlock& b, std::int64_t s, int lane, Each each) {
  const int H = b.heads;
  const std::int64_t k0 = b.begin(s), k1 = b.end(s);
  if (lanes_hold_heads(H)) {
    const int h = lane % H, step = kWarp / H;
    for (std::int64_t k = k0 + lane / H; k < k1; k += step) each(k, h);
  } else {
    const int n = static_cast<int>((k1 - k0) * H);  // a block row has < 2^31 elements
    for (int q = lane; q < n; q += kWarp) each(k0 + q / H, q % H);
  }
}

// A per-row, per-head reduction: each lane folds its elements' terms into `init` with `op`,
// then `op` over a butterfly of the lanes of one head; lanes < H write out[i H + lane].
// Other H: the functor's row form on one lane.
template <class F, class Term, class Op>
__device__ void reduce_row(const F& f, std::int64_t s, int lane, float init, Term term, Op op, float* out) {
  const int H = f.b.heads;
  if (!lanes_hold_heads(H)) {
    if (lane == 0) f(s);
    return;
  }
  const std::int64_t i = f.b.row_of(s);
  float acc = init;
  row_elements(f.b, s, lane, [&](std::int64_t k, int h) { acc = op(acc, term(i, k, h)); });
  for (int o = kWarp / 2; o >= H; o /= 2) acc = op(acc, __shfl_xor_sync(kFullMask, acc, o));
  if (lane < H) out[i * H + lane] = acc;
}

struct Sum {
  __device__ float operator()(float a, float b) const { return a + b; }
};
struct Max {
  __device__ float operator()(float a, float b) const { return b > a ? b : a; }  // inline (fmaxf: a libm call)
};

// f.at(i, k, h) on every element of the row: scores, scaling, the softmax's backward, the SDDMMs.
template <class F>
struct ElementsByWarp {
  F f;
  __device__ void operator()(std::int64_t s, int lane) const {
    const std::int64_t i = f.b.row_of(s);
    row_elements(f.b, s, lane, [&](std::int64_t k, int h) { f.at(i, k, h); });
  }
};

struct DropoutByWarp {
  ew::EdgeDropout f;
  __device__ void operator()(std::int64_t s, int lane) const {
    const std::uint64_t key = f.key(f.b.row_of(s));
    row_elements(f.b, s, lane, [&](std::int64_t k, int h) { f.at(key, k, h); });
  }
};

// out_i,h = Σ_k f.term(k, h): EdgeRowDot, EdgeRowSums.
template <class F>
struct RowSumsByWarp {
  F f;
  __device__ void operator()(std::int64_t s, int lane) const {
    reduce_row(f, s, lane, 0.f, [&](std::int64_t, std::int64_t k, int h) { return f.term(k, h); }, Sum{}, f.out);
  }
};

struct RowMaxByWarp {
  ew::EdgeRowMax f;
  __device__ void operator()(std::int64_t s, int lane) const {
    reduce_row(f, s, lane, -INFINITY, [&](std::int64_t, std::int64_t k, int h) { return f.e[k * f.b.heads + h]; },
               Max{}, f.max);
  }
};

struct ExpRowSumByWarp {  // writes e_ij = exp(e_ij - m_i) as it sums them
  ew::EdgeExpRowSum f;
  __device__ void operator()(std::int64_t s, int lane) const {
    reduce_row(f, s, lane, 0.f, [&](std::int64_t i, std::int64_t k, int h) { return f.at(i, k, h); }, Sum{}, f.sum);
  }
};

// The four passes on one row by one warp (ew::EdgeSoftmax): each pass's lanes
// as in its own kernel, so the same bits; between passes the warp's lanes meet
// (__syncwarp orders their writes of e, max and sum before the next pass's reads).
struct SoftmaxByWarp {
  ew::EdgeSoftmax f;
  __device__ void operator()(std::int64_t s, int lane) const {
    ElementsByWarp<ew::EdgeScores>{{f.b, f.src, f.dst, f.slope, f.e}}(s, lane);
    __syncwarp();
    RowMaxByWarp{{f.b, f.e, f.max}}(s, lane);
    __syncwarp();
    ExpRowSumByWarp{{f.b, f.max, f.e, f.sum}}(s, lane);
    __syncwarp();
    ElementsByWarp<ew::EdgeScaleRows>{{f.b, f.sum, f.e}}(s, lane);
  }
};

// The softmax's backward on one row by one warp (ew::EdgeSoftmaxGrad), as SoftmaxByWarp.
struct SoftmaxGradByWarp {
  ew::EdgeSoftmaxGrad f;
  __device__ void operator()(std::int64_t s, int lane) const {
    RowSumsByWarp<ew::EdgeRowDot>{{f.b, f.alpha, f.d, f.rowdot}}(s, lane);
    __syncwarp();
    ElementsByWarp<ew::EdgeSoftmaxBackward>{{f.b, f.alpha, f.rowdot, f.src, f.dst, f.slope, f.d}}(s, lane);
    __syncwarp();
    RowSumsByWarp<ew::EdgeRowSums>{{f.b, f.d, nullptr, f.dd}}(s, lane);
  }
};

// --- Column reductions (a bias's gradient Σ_i G_i, RMSNorm's dγ): out[c] = Σ_i
// f.term(i, c) in double. Block (x, y) sums rows [x C, x C + C) of columns
// [32 y, 32 y + 32), C = kColumnChunk, 8 row lanes a column in a fixed shared-memory
// tree; then one thread a column adds the chunks in order. The grid follows
// the shape only: the same bits on every run and every device.
constexpr int kColumnChunk = 2048, kColumnLanes = 8;

template <class F>
__global__ void column_partials(std::int64_t rows, std::int64_t cols, F f, double* partial) {
  __shared__ double tree[kColumnLanes][kWarp];
  const std::int64_t c = static_cast<std::int64_t>(blockIdx.y) * kWarp + threadIdx.x;
  const std::int64_t r0 = static_cast<std::int64_t>(blockIdx.x) * kColumnChunk;
  const std::int64_t r1 = r0 + kColumnChunk < rows ? r0 + kColumnChunk : rows;
  double acc = 0;
  if (c < cols)
    for (std::int64_t i = r0 + threadIdx.y; i < r1; i += kColumnLanes) acc += f.term(i, c);
  tree[threadIdx.y][threadIdx.x] = acc;
  __syncthreads();
  for (int w = kColumnLanes / 2; w > 0; w /= 2) {
    if (threadIdx.y < w) tree[threadIdx.y][threadIdx.x] += tree[threadIdx.y + w][threadIdx.x];
    __syncthreads();
  }
  if (threadIdx.y == 0 && c < cols) partial[blockIdx.x * cols + c] = tree[0][threadIdx.x];
}

__global__ void column_totals(std::int64_t chunks, std::int64_t cols, const double* partial, float* out) {
  const std::int64_t c = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (c >= cols) return;
  double acc = 0;
  for (std::int64_t b = 0; b < chunks; ++b) acc += partial[b * cols + c];
  out[c] = static_cast<float>(acc);
}

template <class F>
void column_reduce(cudaStream_t s, std::int64_t rows, std::int64_t cols, const F& f, float* out, double* partial) {
  if (cols <= 0) return;
  const std::int64_t chunks = column_chunks(rows);
  if (chunks > 0) {
    column_partials<<<dim3(static_cast<unsigned>(chunks), static_cast<unsigned>((cols + kWarp - 1) / kWarp)),
                      dim3(kWarp, kColumnLanes), 0, s>>>(rows, cols, f, partial);
    check_launch();
  }
  column_totals<<<static_cast<int>((cols + kThreads - 1) / kThreads), kThreads, 0, s>>>(chunks, cols, partial, out);
  check_launch();
}

}  // namespace

std::int64_t column_chunks(std::int64_t rows) { return (rows + kColumnChunk - 1) / kColumnChunk; }

void fill(cudaStream_t s, std::int64_t r, std::int64_t c, const ew::Fill& f) { launch_2d(s, r, c, f); }
void copy(cudaStream_t s, std::int64_t r, std::int64_t c, const ew::Copy& f) { launch_2d(s, r, c, f); }
void transpose(cudaStream_t s, std::int64_t r, std::int64_t c, const ew::Transpose& f) { launch_2d(s, r, c, f); }
void axpy(cudaStream_t s, std::int64_t r, std::int64_t c, const ew::Axpy& f) { launch_2d(s, r, c, f); }
void axpy_plus(cudaStream_t s, std::int64_t r, std::int64_t c, const ew::AxpyPlus& f) { launch_2d(s, r, c, f); }
void column_sums(cudaStream_t s, std::int64_t cols, const ew::ColumnSums& f, double* partial) {
  column_reduce(s, f.rows, cols, f, f.out, partial);
}
void gather_rows(cudaStream_t s, std::int64_t r, std::int64_t c, const ew::GatherRows& f) { launch_2d(s, r, c, f); }
void pack_bf16(cudaStream_t s, std::int64_t r, std::int64_t c, const ew::PackBf16& f) { launch_2d(s, r, c, f); }
void unpack_bf16(cudaStream_t s, std::int64_t r, std::int64_t c, const ew::UnpackBf16& f) { launch_2d(s, r, c, f); }
void relu(cudaStream_t s, std::int64_t r, std::int64_t c, const ew::Relu& f) { launch_2d(s, r, c, f); }
void relu_backward(cudaStream_t s, std::int64_t r, std::int64_t c, const ew::ReluBackward& f) { launch_2d(s, r, c, f); }
void dropout(cudaStream_t s, std::int64_t r, std::int64_t c, const ew::Dropout& f) { launch_2d(s, r, c, f); }
void relu_dropout(cudaStream_t s, std::int64_t r, std::int64_t c, const ew::ReluDropout& f) { launch_2d(s, r, c, f); }
void dropout_relu_backward(cudaStream_t s, std::int64_t r, std::int64_t c, const ew::DropoutReluBackward& f) {
  launch_2d(s, r, c, f);
}
void elu(cudaStream_t s, std::int64_t r, std::int64_t c, const ew::Elu& f) { launch_2d(s, r, c, f); }
void elu_backward(cudaStream_t s, std::int64_t r, std::int64_t c, const ew::EluBackward& f) { launch_2d(s, r, c, f); }
void elu_dropout(cudaStream_t s, std::int64_t r, std::int64_t c, const ew::EluDropout& f) { launch_2d(s, r, c, f); }
void dropout_elu_backward(cudaStream_t s, std::int64_t r, std::int64_t c, const ew::DropoutEluBackward& f) {
  launch_2d(s, r, c, f);
}
void edge_scores(cudaStream_t s, std::int64_t n, const ew::EdgeScores& f) {
  launch_rows_by_warp(s, n, ElementsByWarp<ew::EdgeScores>{f});
}
void edge_row_max(cudaStream_t s, std::int64_t n, const ew::EdgeRowMax& f) { launch_rows_by_warp(s, n, RowMaxByWarp{f}); }
void edge_exp_row_sum(cudaStream_t s, std::int64_t n, const ew::EdgeExpRowSum& f) {
  launch_rows_by_warp(s, n, ExpRowSumByWarp{f});
}
void edge_scale_rows(cudaStream_t s, std::int64_t n, const ew::EdgeScaleRows& f) {
  launch_rows_by_warp(s, n, ElementsByWarp<ew::EdgeScaleRows>{f});
}
void edge_softmax(cudaStream_t s, std::int64_t n, const ew::EdgeSoftmax& f) { launch_rows_by_warp(s, n, SoftmaxByWarp{f}); }
void edge_dropout(cudaStream_t s, std::int64_t n, const ew::EdgeDropout& f) { launch_rows_by_warp(s, n, DropoutByWarp{f}); }
void spmm_edges(cudaStream_t s, std::int64_t n, std::int64_t cols, const ew::SpmmEdges& f) { launch_2d(s, n, cols, f); }
void spmm_edges_mean(cudaStream_t s, std::int64_t n, std::int64_t cols, const ew::SpmmEdgesMean& f) {
  launch_2d(s, n, cols, f);
}
void spmm_edges_spread(cudaStream_t s, std::int64_t n, std::int64_t cols, const ew::SpmmEdgesSpread& f) {
  launch_2d(s, n, cols, f);
}
// The SDDMMs a lane per (edge, head), each the functor's ordered dot over the head's columns.
// Measured on an H200 (R-MAT 20, 4 x 32): 96 ms an epoch; a warp per edge with lanes over
// columns and a butterfly per head took 412 ms (a hub row's edges then run one after another).
void sddmm(cudaStream_t s, std::int64_t n, const ew::Sddmm& f) { launch_rows_by_warp(s, n, ElementsByWarp<ew::Sddmm>{f}); }
void sddmm_mean(cudaStream_t s, std::int64_t n, const ew::SddmmMean& f) {
  launch_rows_by_warp(s, n, ElementsByWarp<ew::SddmmMean>{f});
}
void edge_row_dot(cudaStream_t s, std::int64_t n, const ew::EdgeRowDot& f) {
  launch_rows_by_warp(s, n, RowSumsByWarp<ew::EdgeRowDot>{f});
}
void edge_softmax_backward(cudaStream_t s, std::int64_t n, const ew::EdgeSoftmaxBackward& f) {
  launch_rows_by_warp(s, n, ElementsByWarp<ew::EdgeSoftmaxBackward>{f});
}
void edge_row_sums(cudaStream_t s, std::int64_t n, const ew::EdgeRowSums& f) {
  launch_rows_by_warp(s, n, RowSumsByWarp<ew::EdgeRowSums>{f});
}
void edge_softmax_grad(cudaStream_t s, std::int64_t n, const ew::EdgeSoftmaxGrad& f) {
  launch_rows_by_warp(s, n, SoftmaxGradByWarp{f});
}
void head_dots(cudaStream_t s, std::int64_t rows, std::int64_t heads, const ew::HeadDots& f) {
  launch_2d(s, rows, heads, f);
}
void head_dots_adjoint(cudaStream_t s, std::int64_t rows, std::int64_t cols, const ew::HeadDotsAdjoint& f) {
  launch_2d(s, rows, cols, f);
}
void head_diagonal(cudaStream_t s, std::int64_t c, const ew::HeadDiagonal& f) { launch_1d(s, c, f); }
void row_sum_squares(cudaStream_t s, std::int64_t rows, const ew::RowSumSquares& f) { launch_1d(s, rows, f); }
void norm_relu_dropout_add(cudaStream_t s, std::int64_t r, std::int64_t c, const ew::NormReluDropoutAdd& f) {
  launch_2d(s, r, c, f);
}
void norm_relu_dropout_backward(cudaStream_t s, std::int64_t r, std::int64_t c,
                                const ew::NormReluDropoutBackward& f) {
  launch_2d(s, r, c, f);
}
void norm_scale_gradient(cudaStream_t s, std::int64_t cols, const ew::NormScaleGradient& f, double* partial) {
  column_reduce(s, f.rows, cols, f, f.out, partial);
}
void norm_row_dot(cudaStream_t s, std::int64_t rows, const ew::NormRowDot& f) { launch_1d(s, rows, f); }
void norm_backward(cudaStream_t s, std::int64_t r, std::int64_t c, const ew::NormBackward& f) { launch_2d(s, r, c, f); }
void adam(cudaStream_t s, std::int64_t n, const ew::Adam& f) { launch_1d(s, n, f); }
void sgd(cudaStream_t s, std::int64_t n, const ew::Sgd& f) { launch_1d(s, n, f); }
void row_max(cudaStream_t s, std::int64_t rows, const ew::RowMax& f) { launch_1d(s, rows, f); }
void row_sum_exp(cudaStream_t s, std::int64_t rows, const ew::RowSumExp& f) { launch_1d(s, rows, f); }
void softmax_xent(cudaStream_t s, std::int64_t rows, const ew::SoftmaxXent& f, double* loss, int* correct,
                  int* counted) {
  launch_1d(s, rows, XentToArrays{f, loss, correct, counted});
}
namespace {
constexpr int kSumThreads = 256, kMaxSumBlocks = 512;

__global__ void xent_sums_kernel(std::int64_t rows, const double* loss, const int* correct, const int* counted,
                                 const std::uint8_t* split, double* out) {
  __shared__ double tree[kXentSums][kSumThreads];
  double v[kXentSums] = {};
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kSumThreads;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kSumThreads + threadIdx.x; i < rows; i += stride) {
    const int k = split[i] & 3;
    v[0] += loss[i];
    v[1 + k] += correct[i];
    v[5 + k] += counted[i];
  }
  for (int j = 0; j < kXentSums; ++j) tree[j][threadIdx.x] = v[j];
  __syncthreads();
  for (int w = kSumThreads / 2; w > 0; w /= 2) {
    if (threadIdx.x < w)
      for (int j = 0; j < kXentSums; ++j) tree[j][threadIdx.x] += tree[j][threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x < kXentSums) out[blockIdx.x * kXentSums + threadIdx.x] = tree[threadIdx.x][0];
}
}  // namespace

int xent_blocks(std::int64_t rows) {
  return static_cast<int>(std::clamp<std::int64_t>((rows + kSumThreads - 1) / kSumThreads, 1, kMaxSumBlocks));
}
void xent_block_sums(cudaStream_t s, std::int64_t rows, const double* loss, const int* correct, const int* counted,
                     const std::uint8_t* split, double* out) {
  xent_sums_kernel<<<xent_blocks(rows), kSumThreads, 0, s>>>(rows, loss, correct, counted, split, out);
  check_launch();
}
void narrow_offsets(cudaStream_t s, std::int64_t n, const std::int64_t* in, std::int32_t* out) {
  launch_1d(s, n, Narrow{in, out});
}
void spmm_rows(cudaStream_t s, std::int64_t stored, std::int64_t f, const std::int32_t* ids, const std::int64_t* rowptr,
               const std::int32_t* col, const float* val, const float* x, std::int64_t ldx, float* y,
               std::int64_t ldy) {
  launch_2d(s, stored, f, SpmmRows{ids, rowptr, col, val, x, ldx, y, ldy});
}
void scale(cudaStream_t s, std::int64_t rows, std::int64_t cols, float* y, std::int64_t ld, float beta) {
  launch_2d(s, rows, cols, Scale{y, ld, beta});
}

}  // namespace gcnlab::cuda
