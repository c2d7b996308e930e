#pragma once
// CPU backend: OpenMP CSR SpMM, oneDNN's or OpenBLAS's sgemm (sgemm.hpp), element-wise functors in
// OpenMP loops. Memory is 64-byte aligned host memory; large arrays are
// advised onto transparent huge pages (fewer TLB misses in SpMM's gathers).

#include <atomic>

#include "backends/cpu/sgemm.hpp"
#include "backends/cpu/spmm.hpp"
#include "common/backend/backend.hpp"

namespace gcnlab {

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(const BackendOptions& opts);

  std::string name() const override { return "cpu"; }
  std::vector<std::pair<std::string, std::string>> versions() const override;
  void sync() override {}

  void copy_to_device(void* dst, const void* src, std::size_t bytes) override;
  void copy_to_host(void* dst, const void* src, std::size_t bytes) override;
  void copy_on_device(void* dst, const void* src, std::size_t bytes) override;

  using Backend::spmm;
  void spmm(const Csr& a, ConstView x, View y, float beta, const Progress& progress) override;
  void spmm_plus(const Csr& a, ConstView x, const RowTerm& t, View y) override;
  double spmm_scratch_bytes(std::int64_t rows, std::span<const std::int64_t> widths) const override;
  void set_spmm_scratch(float* data, std::int64_t rows) override { slab_ = {data, rows}; }
  void gemm(Op op_a, Op op_b, float alpha, ConstView a, ConstView b, float beta, View c) override;

  void fill(View y, float value) override;
  void copy(ConstView x, View y) override;
  void transpose(ConstView x, View y) override;
  void axpy(float a, ConstView x, View y) override;
  void axpy_plus(float a, const float* s, ConstView x, View y) override;
  void column_sums(ConstView x, float* out) override;
  void inner_product(ConstView x, ConstView y, float* out) override;
  void gather_rows(ConstView x, const std::int64_t* rows, View out) override;
  void pack_bf16(ConstView x, bf16* out) override;
  void unpack_bf16(const bf16* in, View y) override;
  void relu(ConstView z, View h) override;
  void relu_backward(ConstView dh, ConstView z, View g) override;
  void dropout(ConstView x, View y, const std::int64_t* row_ids, std::int64_t col0,
               const DropoutParams& p) override;
  void relu_dropout(ConstView z, View x, const std::int64_t* row_ids, std::int64_t col0,
                    const DropoutParams& p) override;
  void dropout_relu_backward(ConstView dx, ConstView x, float scale, View g) override;
  void add_row(const float* b, View y) override;
  void bias_relu(ConstView z, ConstView r, const float* b, View h) override;
  void bias_relu_dropout(ConstView z, ConstView r, const float* b, View x, const std::int64_t* row_ids, std::int64_t col0,
                         const DropoutParams& p) override;
  void relu_backward_sums(ConstView dh, ConstView z, View g, float* sums) override;
  void dropout_relu_backward_sums(ConstView dx, ConstView x, float scale, View g, float* sums) override;
  void bias_elu(ConstView z, const float* b, View h) override;
  void bias_elu_dropout(ConstView z, const float* b, View x, const std::int64_t* row_ids, std::int64_t col0,
                        const DropoutParams& p) override;
  void elu_backward_sums(ConstView dh, ConstView z, const float* b, ew::EluOperand of, View g, float* sums) override;
  void dropout_elu_backward_sums(ConstView dx, ConstView z, const float* b, ew::EluOperand of,
                                 const std::int64_t* row_ids, std::int64_t col0, const DropoutParams& p, View g,
                                 float* sums) override;
  void row_sum_squares(ConstView z, float* sumsq) override;
  void norm_relu_dropout_add(ConstView z, const float* sumsq, const float* gamma, ew::NormParams n,
                             const std::int64_t* row_ids, std::int64_t col0, const DropoutParams& p, View y) override;
  void norm_relu_dropout_backward(ConstView dy, ConstView z, const float* sumsq, const float* gamma, ew::NormParams n,
                                  const std::int64_t* row_ids, std::int64_t col0, const DropoutParams& p, View g,
                                  float* dgamma, float* rowdot) override;
  void norm_backward(ConstView z, const float* sumsq, const float* gamma, const float* rowdot, ew::NormParams n,
                     View g) override;
  void edge_scores(const Csr& a, int heads, const float* src, const float* dst, float slope, float* e) override;
  void edge_row_max(const Csr& a, int heads, const float* e, float* max) override;
  void edge_exp_row_sum(const Csr& a, int heads, const float* max, float* e, float* sum) override;
  void edge_scale_rows(const Csr& a, int heads, const float* sum, float* e) override;
  void edge_softmax(const Csr& a, int heads, const float* src, const float* dst, float slope, float* e, float* max,
                    float* sum) override;
  void edge_dropout(const Csr& a, int heads, const float* in, float* out, const std::int64_t* row_ids,
                    const std::int64_t* col_ids, const DropoutParams& p) override;
  void spmm_edges(const Csr& a, int heads, ew::HeadSplit hs, const float* v, const std::int64_t* perm, ConstView x,
                  View y) override;
  void sddmm(const Csr& a, int heads, ew::HeadSplit hs, ConstView g, ConstView z, float* out) override;
  void spmm_sddmm_edges(const Csr& a, const Csr& t, const std::int64_t* perm, int heads, ew::HeadSplit hs,
                        const float* v, ConstView g, ConstView z, View y, float* dots) override;
  void edge_row_dot(const Csr& a, int heads, const float* x, const float* y, float* out) override;
  void edge_softmax_backward(const Csr& a, int heads, const float* alpha, const float* rowdot, const float* src,
                             const float* dst, float slope, float* d) override;
  void edge_row_sums(const Csr& a, int heads, const float* v, const std::int64_t* perm, float* out) override;
  void edge_softmax_grad(const Csr& a, int heads, const float* alpha, const float* src, const float* dst, float slope,
                         float* d, float* rowdot, float* dd) override;
  void head_dots(ConstView z, const float* a_src, const float* a_dst, ew::HeadSplit hs, View s, View d) override;
  void head_dots_backward(ConstView ds, ConstView dd, const float* a_src, const float* a_dst, ew::HeadSplit hs,
                          ConstView z, View dz, float* da_src, float* da_dst) override;
  void adam(View w, ConstView g, View m, View v, const ew::AdamParams& p) override;
  void sgd(View w, ConstView g, float lr) override;

  void row_max(ConstView z, float* max) override;
  void row_sum_exp(ConstView z, const float* max, float* sum) override;
  XentSums softmax_xent(ConstView z, std::int64_t col0, const float* max, const float* sum,
                        const std::int32_t* label, const std::uint8_t* split, float scale,
                        View g) override;

 protected:
  void* do_allocate(std::size_t bytes) override;
  void do_deallocate(void* p, std::size_t bytes) override;

 private:
  int threads_;
  cpu::GemmLibrary gemm_;  // GCNLAB_CPU_GEMM's, read once
  // The SpMM's packed slab (lent: set_spmm_scratch), and whether a product holds it (a second product
  // running at the same time, on another thread, multiplies without it).
  cpu::Slab slab_;
  std::atomic_flag slab_busy_ = ATOMIC_FLAG_INIT;
};

}  // namespace gcnlab
