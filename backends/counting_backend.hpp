#pragma once
// A Backend that counts the work of every call (common/comm/work.hpp) into a
// rank's ledger and hands the call to the backend it wraps. The factory wraps
// every backend in one (backends/factory.hpp), so a run records, per epoch and
// breakdown category, exactly what its kernels were given.
//
// Traced, it counts and runs nothing: the planner (planning/simulate.hpp) sets
// a strategy up on real data, then traces its training step — the same calls,
// on the same layouts, in the same product orders — without computing it. No
// step's control flow reads a value its kernels computed, so the shapes are
// all the count needs. Allocations and copies to the host pass through; an
// upload is counted and not run, so a traced rank writes none of its buffers
// (their pages never become resident: simulate holds thousands of ranks).

#include <memory>

#include "common/backend/backend.hpp"
#include "common/comm/ledger.hpp"

namespace gcnlab {

class CountingBackend final : public Backend {
 public:
  explicit CountingBackend(std::unique_ptr<Backend> inner) : inner_(std::move(inner)) {}

  // Where the counts go from now on (null: nowhere).
  void count_into(Ledger* ledger) { ledger_ = ledger; }
  // Traced: count the kernels and run none (a softmax cross-entropy returns zero sums).
  void trace(bool on) { traced_ = on; }
  Backend& inner() { return *inner_; }

  std::string name() const override { return inner_->name(); }
  std::vector<std::pair<std::string, std::string>> versions() const override { return inner_->versions(); }
  void sync() override { inner_->sync(); }
  std::optional<std::size_t> free_bytes() const override { return inner_->free_bytes(); }
  bool prefers_reversed_tn_gemm() const override { return inner_->prefers_reversed_tn_gemm(); }
  double spmm_scratch_bytes(std::int64_t rows, std::span<const std::int64_t> widths) const override {
    return inner_->spmm_scratch_bytes(rows, widths);
  }
  void set_spmm_scratch(float* data, std::int64_t rows) override { inner_->set_spmm_scratch(data, rows); }

  void copy_to_device(void* dst, const void* src, std::size_t bytes) override;
  void copy_to_host(void* dst, const void* src, std::size_t bytes) override;
  void copy_on_device(void* dst, const void* src, std::size_t bytes) override;

  using Backend::spmm;
  void spmm(const Csr& a, ConstView x, View y, float beta, const Progress& progress) override;
  void spmm_plus(const Csr& a, ConstView x, const RowTerm& t, View y) override;
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
  void dropout(ConstView x, View y, const std::int64_t* row_ids, std::int64_t col0, const DropoutParams& p) override;
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
  XentSums softmax_xent(ConstView z, std::int64_t col0, const float* max, const float* sum, const std::int32_t* label,
                        const std::uint8_t* split, float scale, View g) override;

 protected:
  void* do_allocate(std::size_t bytes) override { return inner_->allocate(bytes); }
  void do_deallocate(void* p, std::size_t bytes) override { inner_->deallocate(p, bytes); }

 private:
  // Counts a call of `amount` units moving `bytes` (Work::bytes); whether to run it.
  bool count(Kernel k, double amount, double bytes) { return record(k, {amount, 1, 0, 0, bytes}); }
  // What a sparse kernel reads of a's structure: its column ids and row
  // offsets, with or without its values, or nothing (the second product of a
  // fused call, whose one walk the first product's count holds).
  enum class Reads { pattern_and_values, pattern, nothing };
  // A sparse kernel over a's nonzeros and rows at `width` columns (or heads)
  // each, moving `bytes` besides what it `reads` of a's structure.
  bool count_sparse(Kernel k, const Csr& a, std::int64_t width, double bytes, Reads reads) {
    const auto nnz = static_cast<double>(a.nnz), w = static_cast<double>(width);
    const double structure = reads == Reads::nothing ? 0.0
                             : reads == Reads::pattern ? csr_bytes(a) - nnz * sizeof(float)
                                                       : csr_bytes(a);
    return record(k, {nnz * w, 1, nnz, static_cast<double>(a.stored_rows()) * w, bytes + structure});
  }
  bool record(Kernel k, const Work& call) {
    if (ledger_) ledger_->record_work(k, call);
    return !traced_;
  }
  std::unique_ptr<Backend> inner_;
  Ledger* ledger_ = nullptr;
  bool traced_ = false;
};

}  // namespace gcnlab
