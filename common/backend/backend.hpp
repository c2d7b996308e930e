#pragma once
// Backend: the local kernels of one rank, as a runtime object (Ginkgo's
// executor). Strategies and the model call these coarse operations — a whole
// SpMM, a whole GEMM, one element-wise pass — and never mention a device.
// The CPU backend lives in backends/cpu, the CUDA backend in backends/cuda.

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "common/backend/allocator.hpp"
#include "common/backend/edge_ops.hpp"
#include "common/backend/elementwise.hpp"
#include "common/matrix/csr.hpp"
#include "common/matrix/dense.hpp"

namespace gcnlab {

enum class Op { N, T };

struct DropoutParams {
  std::uint64_t seed, stream;
  float p;
  float scale() const { return p < 1.f ? 1.f / (1.f - p) : 0.f; }
};

// Sums of one softmax cross-entropy pass, indexed by ew::Split.
struct XentSums {
  double loss = 0;
  std::array<double, 4> correct{};
  std::array<double, 4> counted{};
};

// A term on a product's own output rows: (scale + plus[0]) r, plus one value in
// backend memory (a trained scalar: no host round trip) or null.
struct RowTerm {
  ConstView r;
  float scale = 0.f;
  const float* plus = nullptr;
};

class Backend : public Allocator {
 public:
  virtual std::string name() const = 0;
  // The libraries and device behind the kernels, for the results' provenance:
  // (what, version) pairs, e.g. {"blas", "OpenBLAS 0.3.21 ..."}, {"gpu", "NVIDIA H100"}.
  virtual std::vector<std::pair<std::string, std::string>> versions() const = 0;
  // Wait for all queued work (no-op on the CPU).
  virtual void sync() = 0;

  // Y = A X + beta Y  (A: rows x cols CSR; X: cols x f; Y: rows x f)
  void spmm(const Csr& a, ConstView x, View y, float beta) { spmm(a, x, y, beta, Progress{}); }
  // The same, calling `progress` (when set) every few thousand nonzeros on the
  // calling thread while the product runs: it drives nonblocking collectives
  // that advance only inside MPI calls (OpenMPI's shared-memory broadcasts), so
  // that they overlap with the product (MG-GCN Sec. 4.3). Device backends,
  // whose collectives progress on their own stream, ignore it.
  using Progress = std::function<void()>;
  virtual void spmm(const Csr& a, ConstView x, View y, float beta, const Progress& progress) = 0;
  // Y = A X + (t.scale + t.plus[0]) t.r: a term on Y's own rows (t.r: Y's rows
  // and columns) added in the product's output pass where the backend can (the
  // CPU's), after it elsewhere; the bits of spmm followed by axpy_plus (t.plus
  // set) or axpy (GIN's (1 + ε) h_i: Primitives::aggregate_plus).
  virtual void spmm_plus(const Csr& a, ConstView x, const RowTerm& t, View y) = 0;
  // Work memory spmm and spmm_plus use for inputs X of up to `rows` rows at
  // the widths given (the CPU's packed column slabs, backends/cpu/spmm.hpp):
  // its bytes, a term of the analytic memory need (none by default). The
  // caller allocates it and lends it (set_spmm_scratch; null: take it back).
  // A product whose X has more rows runs without it, with the same bits.
  virtual double spmm_scratch_bytes(std::int64_t rows, std::span<const std::int64_t> widths) const {
    (void)rows, (void)widths;
    return 0;
  }
  virtual void set_spmm_scratch(float* data, std::int64_t rows) { (void)data, (void)rows; }
  // y += (t.scale + t.plus[0]) t.r in its own pass: axpy_plus, or axpy where t.plus is null.
  void add_term(const RowTerm& t, View y) {
    if (t.plus) axpy_plus(t.scale, t.plus, t.r, y);
    else axpy(t.scale, t.r, y);
  }
  // C = alpha op(A) op(B) + beta C, row-major.
  virtual void gemm(Op op_a, Op op_b, float alpha, ConstView a, ConstView b, float beta, View c) = 0;
  // Whether C = Aᵀ B is better computed as (Bᵀ A)ᵀ on this backend: the fix
  // Plexus (Sec. 5.3, "reversing the multiplication order") applies to dW on GPU
  // BLAS libraries, whose transposed-A modes can be much slower. A fixed
  // property of the backend, never measured at run time: a choice made by a
  // clock would let the load decide the bits (the two orders round differently).
  virtual bool prefers_reversed_tn_gemm() const { return false; }

  virtual void fill(View y, float value) = 0;
  virtual void copy(ConstView x, View y) = 0;
  // y = xᵀ (y: x.cols x x.rows)
  virtual void transpose(ConstView x, View y) = 0;
  virtual void axpy(float a, ConstView x, View y) = 0;
  // y += (a + s[0]) x, s one value in backend memory (no host round trip: GIN's trained ε).
  virtual void axpy_plus(float a, const float* s, ConstView x, View y) = 0;
  // out[c] = Σ_i x[i, c] for each of x.cols columns, accumulated in double (ew::ColumnSums).
  virtual void column_sums(ConstView x, float* out) = 0;
  // out[0] = <x, y> = Σ_i,c x[i, c] y[i, c], in double by column_sums' blocks (ew::InnerProduct).
  virtual void inner_product(ConstView x, ConstView y, float* out) = 0;
  // out (rows.size() x x.cols) = the rows `rows` (a backend array of out.rows ids) of x.
  virtual void gather_rows(ConstView x, const std::int64_t* rows, View out) = 0;
  // out (x.rows * x.cols, row-major) = x rounded to bf16; y = in widened to fp32.
  virtual void pack_bf16(ConstView x, bf16* out) = 0;
  virtual void unpack_bf16(const bf16* in, View y) = 0;
  virtual void relu(ConstView z, View h) = 0;
  virtual void relu_backward(ConstView dh, ConstView z, View g) = 0;
  // `row_ids` is a backend array of x.rows global vertex ids.
  virtual void dropout(ConstView x, View y, const std::int64_t* row_ids, std::int64_t col0,
                       const DropoutParams& p) = 0;
  // x = dropout(ReLU(z)) (ew::ReluDropout); g = x != 0 ? dx * scale : 0 (ew::DropoutReluBackward).
  virtual void relu_dropout(ConstView z, View x, const std::int64_t* row_ids, std::int64_t col0,
                            const DropoutParams& p) = 0;
  virtual void dropout_relu_backward(ConstView dx, ConstView x, float scale, View g) = 0;
  // A layer's bias in its activation's pass (LayerStack): relu / relu_dropout
  // of z + r + 1 bᵀ (r unless r.data is null: a model's addend; b: z.cols
  // values), z left as it is (ew::BiasRelu, ew::BiasReluDropout: ReLU's
  // backward reads their output); add_row without an activation (ew::AddRow). The
  // backwards with `sums` = Σ_i g_i, the bias's gradient, taken in the pass that
  // writes g, with column_sums' bits (ew::WrittenColumnSums).
  virtual void add_row(const float* b, View y) = 0;
  virtual void bias_relu(ConstView z, ConstView r, const float* b, View h) = 0;
  virtual void bias_relu_dropout(ConstView z, ConstView r, const float* b, View x, const std::int64_t* row_ids, std::int64_t col0,
                                 const DropoutParams& p) = 0;
  virtual void relu_backward_sums(ConstView dh, ConstView z, View g, float* sums) = 0;
  virtual void dropout_relu_backward_sums(ConstView dx, ConstView x, float scale, View g, float* sums) = 0;
  // ELU after a biased layer (GAT's activation; ew::BiasElu ... ew::DropoutEluBackward), the bias in
  // its pass as bias_relu has it: h = ELU(z + 1 bᵀ) and x = dropout(ELU(z + 1 bᵀ)), z left as it is;
  // g = dh ELU'(z + 1 bᵀ) and g = dropout'(dx) ELU'(z + 1 bᵀ), with `sums` = Σ_i g_i (the bias's
  // gradient, column_sums' bits). The backwards read z, or h in its place (`of`, ew::EluOperand: then b
  // is read, not used).
  virtual void bias_elu(ConstView z, const float* b, View h) = 0;
  virtual void bias_elu_dropout(ConstView z, const float* b, View x, const std::int64_t* row_ids, std::int64_t col0,
                                const DropoutParams& p) = 0;
  virtual void elu_backward_sums(ConstView dh, ConstView z, const float* b, ew::EluOperand of, View g,
                                 float* sums) = 0;
  virtual void dropout_elu_backward_sums(ConstView dx, ConstView z, const float* b, ew::EluOperand of,
                                         const std::int64_t* row_ids, std::int64_t col0, const DropoutParams& p,
                                         View g, float* sums) = 0;
  // RMSNorm (ScaleGNN Eq. 7, 29; ew::RowSumSquares ... ew::NormBackward).
  // `sumsq` and `rowdot` have a row's value over all its columns (combined by
  // the caller across the ranks that split the columns); vectors have one
  // entry per row (rows) or per local column (gamma, dgamma).
  virtual void row_sum_squares(ConstView z, float* sumsq) = 0;
  // y += dropout(ReLU(RMSNorm(z)))
  virtual void norm_relu_dropout_add(ConstView z, const float* sumsq, const float* gamma, ew::NormParams n,
                                     const std::int64_t* row_ids, std::int64_t col0, const DropoutParams& p,
                                     View y) = 0;
  // g = dL/dN from dy; dgamma = this rank's rows' dL/dγ; rowdot = Σ_j g γ z over this rank's columns.
  virtual void norm_relu_dropout_backward(ConstView dy, ConstView z, const float* sumsq, const float* gamma,
                                          ew::NormParams n, const std::int64_t* row_ids, std::int64_t col0,
                                          const DropoutParams& p, View g, float* dgamma, float* rowdot) = 0;
  // g = dL/dZ from dL/dN (in place) and the combined rowdot.
  virtual void norm_backward(ConstView z, const float* sumsq, const float* gamma, const float* rowdot,
                             ew::NormParams n, View g) = 0;
  // Graph attention on one sparse block (GAT; common/backend/edge_ops.hpp has
  // the math): edge tensors are a.nnz x heads floats, edge-major, in a's
  // storage order; per-vertex vectors have `heads` floats a row, indexed by
  // a's rows (targets) or columns (sources). Rows a compressed block does not
  // store get -inf (edge_row_max), 0 (the sums) or 0 rows (spmm_edges).
  // e = LeakyReLU(src_j + dst_i)
  virtual void edge_scores(const Csr& a, int heads, const float* src, const float* dst, float slope, float* e) = 0;
  virtual void edge_row_max(const Csr& a, int heads, const float* e, float* max) = 0;
  // e = exp(e - max_i), sum_i = Σ_j e
  virtual void edge_exp_row_sum(const Csr& a, int heads, const float* max, float* e, float* sum) = 0;
  virtual void edge_scale_rows(const Csr& a, int heads, const float* sum, float* e) = 0;  // e /= sum_i
  // The four above in one visit per row (ew::EdgeSoftmax; the same bits), for a block whose rows no other
  // rank shares: e = softmax_j LeakyReLU(src_j + dst_i), max and sum the rows'.
  virtual void edge_softmax(const Csr& a, int heads, const float* src, const float* dst, float slope, float* e,
                            float* max, float* sum) = 0;
  // out = dropout(in), keyed by the global ids of a's rows and columns (ew::EdgeDropout); in place allowed.
  virtual void edge_dropout(const Csr& a, int heads, const float* in, float* out, const std::int64_t* row_ids,
                            const std::int64_t* col_ids, const DropoutParams& p) = 0;
  // y = V x per head (V: a's pattern with values v, read through perm where set); y.cols = x.cols.
  virtual void spmm_edges(const Csr& a, int heads, ew::HeadSplit hs, const float* v, const std::int64_t* perm,
                          ConstView x, View y) = 0;
  // out[k] = g_i · z_j per head over the local columns (g: a.rows rows, z: a.cols rows).
  virtual void sddmm(const Csr& a, int heads, ew::HeadSplit hs, ConstView g, ConstView z, float* out) = 0;
  // The attention backward's two products over the same edges in one call
  // (FusedMM's fusion of an SDDMM with an SpMM, Rahman et al. IPDPS'21):
  //   y = spmm_edges(t, heads, hs, v, perm, g)   βᵀG over a's transpose t (t's edge k is a's perm[k])
  //   dots = sddmm(a, heads, hs, g, z)            dβ, in a's edge order
  // with those calls' results. The CPU walks t once for both where the heads
  // are concatenated: each edge's G row, read for βᵀG, also makes its dots
  // with the row's Z (the SDDMM's gathers of Z are gone).
  virtual void spmm_sddmm_edges(const Csr& a, const Csr& t, const std::int64_t* perm, int heads, ew::HeadSplit hs,
                                const float* v, ConstView g, ConstView z, View y, float* dots) = 0;
  virtual void edge_row_dot(const Csr& a, int heads, const float* x, const float* y, float* out) = 0;
  // d = α (d - rowdot_i) LeakyReLU'(src_j + dst_i)
  virtual void edge_softmax_backward(const Csr& a, int heads, const float* alpha, const float* rowdot,
                                     const float* src, const float* dst, float slope, float* d) = 0;
  virtual void edge_row_sums(const Csr& a, int heads, const float* v, const std::int64_t* perm, float* out) = 0;
  // edge_row_dot(alpha, d -> rowdot), edge_softmax_backward and edge_row_sums(d -> dd) in one visit per row
  // (ew::EdgeSoftmaxGrad; the same bits), for a block whose rows no other rank shares.
  virtual void edge_softmax_grad(const Csr& a, int heads, const float* alpha, const float* src, const float* dst,
                                 float slope, float* d, float* rowdot, float* dd) = 0;
  // s, d (z.rows x heads) = the per-head dots of Z's rows with a_src and a_dst (ew::HeadDots).
  virtual void head_dots(ConstView z, const float* a_src, const float* a_dst, ew::HeadSplit hs, View s, View d) = 0;
  // Their backward for ds, dd: dz += ds a_srcᵀ + dd a_dstᵀ per head (ew::HeadDotsAdjoint), and the
  // vectors' gradients da_src[c] = Σ_j ds_j,head(c) Z_j[c], da_dst[c] likewise with dd
  // (ew::HeadColumnDots: in double, by the blocks of column_sums). The CPU reads Z and dZ in one pass.
  virtual void head_dots_backward(ConstView ds, ConstView dd, const float* a_src, const float* a_dst,
                                  ew::HeadSplit hs, ConstView z, View dz, float* da_src, float* da_dst) = 0;
  virtual void adam(View w, ConstView g, View m, View v, const ew::AdamParams& p) = 0;
  virtual void sgd(View w, ConstView g, float lr) = 0;

  // Softmax cross-entropy pieces (see ew::SoftmaxXent); vectors have z.rows entries;
  // softmax_xent with max = sum = null computes them itself (whole rows local).
  virtual void row_max(ConstView z, float* max) = 0;
  virtual void row_sum_exp(ConstView z, const float* max, float* sum) = 0;
  virtual XentSums softmax_xent(ConstView z, std::int64_t col0, const float* max, const float* sum,
                                const std::int32_t* label, const std::uint8_t* split, float scale,
                                View g) = 0;
};

// A block's structure as the edge functors read it (common/backend/edge_ops.hpp).
inline ew::EdgeBlock edge_block(const Csr& a, int heads) {
  return {a.rowptr.data(), a.compressed ? a.row_ids.data() : nullptr, a.col.data(), heads};
}

// Threads a rank's kernels may use (OpenMP and BLAS); the rank's index on its
// node and the ranks on that node (common/comm/node.hpp). The CUDA backend gives
// local rank k device k mod devices, and refuses more ranks than devices unless
// they share them over MPI (share_devices: --gpu-comm mpi) or every rank of the
// node has an NCCL_HOSTID of its own (NCCL's one-GPU test mode): backends/device_sharing.hpp.
struct BackendOptions {
  int threads = 1;
  int local_rank = 0;
  int ranks_on_node = 1;
  bool share_devices = false;
  std::vector<std::string> nccl_host_ids = {};  // by local rank ("" unset); empty: ranks_on_node ranks without one
};

}  // namespace gcnlab
