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

}  // namespace

void fill(cudaStream_t s, std::int64_t r, std::int64_t c, const ew::Fill& f) { launch_2d(s, r, c, f); }
void copy(cudaStream_t s, std::int64_t r, std::int64_t c, const ew::Copy& f) { launch_2d(s, r, c, f); }
void transpose(cudaStream_t s, std::int64_t r, std::int64_t c, const ew::Transpose& f) { launch_2d(s, r, c, f); }
void axpy(cudaStream_t s, std::int64_t r, std::int64_t c, const ew::Axpy& f) { launch_2d(s, r, c, f); }
void axpy_plus(cudaStream_t s, std::int64_t r, std::int64_t c, const ew::AxpyPlus& f) { launch_2d(s, r, c, f); }
void column_sums(cudaStream_t s, std::int64_t c, const ew::ColumnSums& f) { launch_1d(s, c, f); }
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
void edge_scores(cudaStream_t s, std::int64_t n, const ew::EdgeScores& f) { launch_1d(s, n, f); }
void edge_row_max(cudaStream_t s, std::int64_t n, const ew::EdgeRowMax& f) { launch_1d(s, n, f); }
void edge_exp_row_sum(cudaStream_t s, std::int64_t n, const ew::EdgeExpRowSum& f) { launch_1d(s, n, f); }
void edge_scale_rows(cudaStream_t s, std::int64_t n, const ew::EdgeScaleRows& f) { launch_1d(s, n, f); }
void edge_dropout(cudaStream_t s, std::int64_t n, const ew::EdgeDropout& f) { launch_1d(s, n, f); }
void spmm_edges(cudaStream_t s, std::int64_t n, std::int64_t cols, const ew::SpmmEdges& f) { launch_2d(s, n, cols, f); }
void spmm_edges_mean(cudaStream_t s, std::int64_t n, std::int64_t cols, const ew::SpmmEdgesMean& f) {
  launch_2d(s, n, cols, f);
}
void spmm_edges_spread(cudaStream_t s, std::int64_t n, std::int64_t cols, const ew::SpmmEdgesSpread& f) {
  launch_2d(s, n, cols, f);
}
void sddmm(cudaStream_t s, std::int64_t n, const ew::Sddmm& f) { launch_1d(s, n, f); }
void sddmm_mean(cudaStream_t s, std::int64_t n, const ew::SddmmMean& f) { launch_1d(s, n, f); }
void edge_row_dot(cudaStream_t s, std::int64_t n, const ew::EdgeRowDot& f) { launch_1d(s, n, f); }
void edge_softmax_backward(cudaStream_t s, std::int64_t n, const ew::EdgeSoftmaxBackward& f) { launch_1d(s, n, f); }
void edge_row_sums(cudaStream_t s, std::int64_t n, const ew::EdgeRowSums& f) { launch_1d(s, n, f); }
void head_matrix(cudaStream_t s, std::int64_t c, std::int64_t h, const ew::HeadMatrix& f) { launch_2d(s, c, h, f); }
void head_diagonal(cudaStream_t s, std::int64_t c, const ew::HeadDiagonal& f) { launch_1d(s, c, f); }
void row_sum_squares(cudaStream_t s, std::int64_t rows, const ew::RowSumSquares& f) { launch_1d(s, rows, f); }
void norm_relu_dropout_add(cudaStream_t s, std::int64_t r, std::int64_t c, const ew::NormReluDropoutAdd& f) {
  launch_2d(s, r, c, f);
}
void norm_relu_dropout_backward(cudaStream_t s, std::int64_t r, std::int64_t c,
                                const ew::NormReluDropoutBackward& f) {
  launch_2d(s, r, c, f);
}
void norm_scale_gradient(cudaStream_t s, std::int64_t cols, const ew::NormScaleGradient& f) { launch_1d(s, cols, f); }
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
