#pragma once
// Host-callable launchers for the element-wise functors of
// common/backend/elementwise.hpp (implemented in kernels.cu). One generic
// grid-stride launcher per functor shape; every launch is checked.
// Plain pointers and sizes only: this header is C++17 and has no gcnlab types
// beyond the functors.

#include <cuda_runtime_api.h>

#include <cstdint>

#include "common/backend/edge_ops.hpp"
#include "common/backend/elementwise.hpp"

namespace gcnlab::cuda {

void fill(cudaStream_t s, std::int64_t rows, std::int64_t cols, const ew::Fill& f);
void copy(cudaStream_t s, std::int64_t rows, std::int64_t cols, const ew::Copy& f);
void transpose(cudaStream_t s, std::int64_t rows, std::int64_t cols, const ew::Transpose& f);
void axpy(cudaStream_t s, std::int64_t rows, std::int64_t cols, const ew::Axpy& f);
void axpy_plus(cudaStream_t s, std::int64_t rows, std::int64_t cols, const ew::AxpyPlus& f);
// Column reductions in double (ColumnSums; NormScaleGradient's term() summed the same
// way): fixed chunks of rows in a fixed tree, then the chunks in order (the same bits
// on every run); `partial` holds column_chunks(rows) x cols doubles of scratch.
std::int64_t column_chunks(std::int64_t rows);
void column_sums(cudaStream_t s, std::int64_t cols, const ew::ColumnSums& f, double* partial);
// <x, y>: column_sums' partials of the products, then all of them in one block's fixed tree.
void inner_product(cudaStream_t s, std::int64_t cols, const ew::InnerProduct& f, double* partial);
void gather_rows(cudaStream_t s, std::int64_t rows, std::int64_t cols, const ew::GatherRows& f);
void pack_bf16(cudaStream_t s, std::int64_t rows, std::int64_t cols, const ew::PackBf16& f);
void unpack_bf16(cudaStream_t s, std::int64_t rows, std::int64_t cols, const ew::UnpackBf16& f);
void relu(cudaStream_t s, std::int64_t rows, std::int64_t cols, const ew::Relu& f);
void relu_backward(cudaStream_t s, std::int64_t rows, std::int64_t cols, const ew::ReluBackward& f);
void dropout(cudaStream_t s, std::int64_t rows, std::int64_t cols, const ew::Dropout& f);
void relu_dropout(cudaStream_t s, std::int64_t rows, std::int64_t cols, const ew::ReluDropout& f);
void dropout_relu_backward(cudaStream_t s, std::int64_t rows, std::int64_t cols, const ew::DropoutReluBackward& f);
void add_row(cudaStream_t s, std::int64_t rows, std::int64_t cols, const ew::AddRow& f);
void bias_relu(cudaStream_t s, std::int64_t rows, std::int64_t cols, const ew::BiasRelu<false>& f);
void bias_relu(cudaStream_t s, std::int64_t rows, std::int64_t cols, const ew::BiasRelu<true>& f);
void bias_relu_dropout(cudaStream_t s, std::int64_t rows, std::int64_t cols, const ew::BiasReluDropout<false>& f);
void bias_relu_dropout(cudaStream_t s, std::int64_t rows, std::int64_t cols, const ew::BiasReluDropout<true>& f);
// G written by an activation's backward F and its column sums taken in one column reduction (column_sums'
// bits); instantiated for ReluBackward, DropoutReluBackward, EluBackward and DropoutEluBackward.
template <class F>
void written_column_sums(cudaStream_t s, std::int64_t rows, std::int64_t cols, const ew::WrittenColumnSums<F>& f,
                         double* partial);
void bias_elu(cudaStream_t s, std::int64_t rows, std::int64_t cols, const ew::BiasElu& f);
void bias_elu_dropout(cudaStream_t s, std::int64_t rows, std::int64_t cols, const ew::BiasEluDropout& f);
// Graph attention (edge_ops.hpp), walked as backends/row_chunks.hpp plans: a short
// row by a group of `lanes` lanes over its (edge, head) elements, a long row in chunks
// of a warp each; per-head sums in fixed butterflies, a long row's chunks combined in
// order (the same bits on every run). The plan's arrays on the device:
struct RowWalk {
  std::int64_t stored = 0;                  // the block's stored rows
  int lanes = 32;                           // lanes per short row
  std::int64_t short_edges = 0;             // a row with more edges is long
  std::int64_t chunk = 0;                   // edges per chunk of a long row
  std::int64_t long_rows = 0, chunks = 0;
  const std::int64_t* rows = nullptr;       // long_rows: the long rows
  const std::int64_t* first = nullptr;      // long_rows + 1: long row r's chunks [first[r], first[r + 1])
  const std::int32_t* chunk_row = nullptr;  // chunks: each chunk's long row
  float* partial = nullptr;                 // chunks x heads floats: a reduction's chunk results
};
void edge_scores(cudaStream_t s, const RowWalk& w, const ew::EdgeScores& f);
void edge_row_max(cudaStream_t s, const RowWalk& w, const ew::EdgeRowMax& f);
void edge_exp_row_sum(cudaStream_t s, const RowWalk& w, const ew::EdgeExpRowSum& f);
void edge_scale_rows(cudaStream_t s, const RowWalk& w, const ew::EdgeScaleRows& f);
void edge_softmax(cudaStream_t s, const RowWalk& w, const ew::EdgeSoftmax& f);
void edge_dropout(cudaStream_t s, const RowWalk& w, const ew::EdgeDropout& f);
void sddmm(cudaStream_t s, const RowWalk& w, const ew::Sddmm& f);
void sddmm_mean(cudaStream_t s, const RowWalk& w, const ew::SddmmMean& f);
void edge_row_dot(cudaStream_t s, const RowWalk& w, const ew::EdgeRowDot& f);
void edge_softmax_backward(cudaStream_t s, const RowWalk& w, const ew::EdgeSoftmaxBackward& f);
void edge_row_sums(cudaStream_t s, const RowWalk& w, const ew::EdgeRowSums& f);
void edge_softmax_grad(cudaStream_t s, const RowWalk& w, const ew::EdgeSoftmaxGrad& f);
// spmm_edges one thread per stored row and output column (as spmm_rows), the head
// matrices one per element.
void spmm_edges(cudaStream_t s, std::int64_t stored, std::int64_t cols, const ew::SpmmEdges& f);
void spmm_edges_mean(cudaStream_t s, std::int64_t stored, std::int64_t cols, const ew::SpmmEdgesMean& f);
void spmm_edges_spread(cudaStream_t s, std::int64_t stored, std::int64_t cols, const ew::SpmmEdgesSpread& f);
void head_dots(cudaStream_t s, std::int64_t rows, std::int64_t heads, const ew::HeadDots& f);
void head_dots_adjoint(cudaStream_t s, std::int64_t rows, std::int64_t cols, const ew::HeadDotsAdjoint& f);
void head_column_dots(cudaStream_t s, std::int64_t cols, const ew::HeadColumnDots& f, double* partial);
void row_sum_squares(cudaStream_t s, std::int64_t rows, const ew::RowSumSquares& f);
void norm_relu_dropout_add(cudaStream_t s, std::int64_t rows, std::int64_t cols, const ew::NormReluDropoutAdd& f);
void norm_relu_dropout_backward(cudaStream_t s, std::int64_t rows, std::int64_t cols,
                                const ew::NormReluDropoutBackward& f);
void norm_scale_gradient(cudaStream_t s, std::int64_t cols, const ew::NormScaleGradient& f, double* partial);
void norm_row_dot(cudaStream_t s, std::int64_t rows, const ew::NormRowDot& f);
void norm_backward(cudaStream_t s, std::int64_t rows, std::int64_t cols, const ew::NormBackward& f);
void adam(cudaStream_t s, std::int64_t n, const ew::Adam& f);
void sgd(cudaStream_t s, std::int64_t n, const ew::Sgd& f);
void row_max(cudaStream_t s, std::int64_t rows, const ew::RowMax& f);
void row_sum_exp(cudaStream_t s, std::int64_t rows, const ew::RowSumExp& f);
// Per-row results of ew::SoftmaxXent into loss[rows], correct[rows], counted[rows].
void softmax_xent(cudaStream_t s, std::int64_t rows, const ew::SoftmaxXent& f, double* loss, int* correct,
                  int* counted);
// Per-block sums of those arrays, kXentSums doubles per block: the loss, then the correct
// and the counted rows by split & 3. A fixed grid (xent_blocks(rows)) and a fixed
// shared-memory tree: the sums' bits are the same on every run (the determinism contract).
constexpr int kXentSums = 9;
int xent_blocks(std::int64_t rows);
void xent_block_sums(cudaStream_t s, std::int64_t rows, const double* loss, const int* correct, const int* counted,
                     const std::uint8_t* split, double* out);
// out[i] = in[i] (64-bit row offsets -> 32-bit for cuSPARSE, which needs equal index types).
void narrow_offsets(cudaStream_t s, std::int64_t n, const std::int64_t* in, std::int32_t* out);
// y[ids[s]] += A[s] x for the `stored` rows of a compressed-row CSR (common/matrix/csr.hpp).
void spmm_rows(cudaStream_t s, std::int64_t stored, std::int64_t f, const std::int32_t* ids, const std::int64_t* rowptr,
               const std::int32_t* col, const float* val, const float* x, std::int64_t ldx, float* y,
               std::int64_t ldy);
// y *= beta
void scale(cudaStream_t s, std::int64_t rows, std::int64_t cols, float* y, std::int64_t ld, float beta);

}  // namespace gcnlab::cuda
