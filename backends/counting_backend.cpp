#include "backends/counting_backend.hpp"

namespace gcnlab {

namespace {
double elements(ConstView v) { return static_cast<double>(v.size()); }
}  // namespace

void CountingBackend::copy_to_device(void* dst, const void* src, std::size_t bytes) {
  if (count(Kernel::to_device, static_cast<double>(bytes))) inner_->copy_to_device(dst, src, bytes);
}
void CountingBackend::copy_to_host(void* dst, const void* src, std::size_t bytes) {
  count(Kernel::to_host, static_cast<double>(bytes));
  inner_->copy_to_host(dst, src, bytes);
}
void CountingBackend::copy_on_device(void* dst, const void* src, std::size_t bytes) {
  if (count(Kernel::elementwise, static_cast<double>(bytes) / sizeof(float)))  // in float elements, as copy()
    inner_->copy_on_device(dst, src, bytes);
}

void CountingBackend::spmm(const Csr& a, ConstView x, View y, float beta, const Progress& progress) {
  if (count_sparse(Kernel::spmm, a, x.cols)) inner_->spmm(a, x, y, beta, progress);
}
void CountingBackend::gemm(Op op_a, Op op_b, float alpha, ConstView a, ConstView b, float beta, View c) {
  const std::int64_t k = op_a == Op::N ? a.cols : a.rows;
  if (count(Kernel::gemm, elements(c) * static_cast<double>(k))) inner_->gemm(op_a, op_b, alpha, a, b, beta, c);
}
void CountingBackend::fill(View y, float value) {
  if (count(Kernel::elementwise, elements(y))) inner_->fill(y, value);
}
void CountingBackend::copy(ConstView x, View y) {
  if (count(Kernel::elementwise, elements(y))) inner_->copy(x, y);
}
void CountingBackend::transpose(ConstView x, View y) {
  if (count(Kernel::elementwise, elements(y))) inner_->transpose(x, y);
}
void CountingBackend::axpy(float a, ConstView x, View y) {
  if (count(Kernel::elementwise, elements(y))) inner_->axpy(a, x, y);
}
void CountingBackend::axpy_plus(float a, const float* s, ConstView x, View y) {
  if (count(Kernel::elementwise, elements(y))) inner_->axpy_plus(a, s, x, y);
}
void CountingBackend::column_sums(ConstView x, float* out) {
  if (count(Kernel::reduction, elements(x))) inner_->column_sums(x, out);
}
void CountingBackend::gather_rows(ConstView x, const std::int64_t* rows, View out) {
  if (count(Kernel::elementwise, elements(out))) inner_->gather_rows(x, rows, out);
}
void CountingBackend::pack_bf16(ConstView x, bf16* out) {
  if (count(Kernel::elementwise, elements(x))) inner_->pack_bf16(x, out);
}
void CountingBackend::unpack_bf16(const bf16* in, View y) {
  if (count(Kernel::elementwise, elements(y))) inner_->unpack_bf16(in, y);
}
void CountingBackend::relu(ConstView z, View h) {
  if (count(Kernel::elementwise, elements(h))) inner_->relu(z, h);
}
void CountingBackend::relu_backward(ConstView dh, ConstView z, View g) {
  if (count(Kernel::elementwise, elements(g))) inner_->relu_backward(dh, z, g);
}
void CountingBackend::dropout(ConstView x, View y, const std::int64_t* row_ids, std::int64_t col0,
                              const DropoutParams& p) {
  if (count(Kernel::elementwise, elements(y))) inner_->dropout(x, y, row_ids, col0, p);
}
void CountingBackend::relu_dropout(ConstView z, View x, const std::int64_t* row_ids, std::int64_t col0,
                                   const DropoutParams& p) {
  if (count(Kernel::elementwise, elements(x))) inner_->relu_dropout(z, x, row_ids, col0, p);
}
void CountingBackend::dropout_relu_backward(ConstView dx, ConstView x, float scale, View g) {
  if (count(Kernel::elementwise, elements(g))) inner_->dropout_relu_backward(dx, x, scale, g);
}
void CountingBackend::elu(ConstView z, View h) {
  if (count(Kernel::elementwise, elements(h))) inner_->elu(z, h);
}
void CountingBackend::elu_backward(ConstView dh, ConstView z, ew::EluOperand of, View g) {
  if (count(Kernel::elementwise, elements(g))) inner_->elu_backward(dh, z, of, g);
}
void CountingBackend::elu_dropout(ConstView z, View x, const std::int64_t* row_ids, std::int64_t col0,
                                  const DropoutParams& p) {
  if (count(Kernel::elementwise, elements(x))) inner_->elu_dropout(z, x, row_ids, col0, p);
}
void CountingBackend::dropout_elu_backward(ConstView dx, ConstView z, ew::EluOperand of, const std::int64_t* row_ids,
                                           std::int64_t col0, const DropoutParams& p, View g) {
  if (count(Kernel::elementwise, elements(g))) inner_->dropout_elu_backward(dx, z, of, row_ids, col0, p, g);
}
void CountingBackend::row_sum_squares(ConstView z, float* sumsq) {
  if (count(Kernel::reduction, elements(z))) inner_->row_sum_squares(z, sumsq);
}
void CountingBackend::norm_relu_dropout_add(ConstView z, const float* sumsq, const float* gamma, ew::NormParams n,
                                            const std::int64_t* row_ids, std::int64_t col0, const DropoutParams& p,
                                            View y) {
  if (count(Kernel::elementwise, elements(y)))
    inner_->norm_relu_dropout_add(z, sumsq, gamma, n, row_ids, col0, p, y);
}
void CountingBackend::norm_relu_dropout_backward(ConstView dy, ConstView z, const float* sumsq, const float* gamma,
                                                 ew::NormParams n, const std::int64_t* row_ids, std::int64_t col0,
                                                 const DropoutParams& p, View g, float* dgamma, float* rowdot) {
  if (count(Kernel::elementwise, elements(g)))
    inner_->norm_relu_dropout_backward(dy, z, sumsq, gamma, n, row_ids, col0, p, g, dgamma, rowdot);
}
void CountingBackend::norm_backward(ConstView z, const float* sumsq, const float* gamma, const float* rowdot,
                                    ew::NormParams n, View g) {
  if (count(Kernel::elementwise, elements(g))) inner_->norm_backward(z, sumsq, gamma, rowdot, n, g);
}
void CountingBackend::edge_scores(const Csr& a, int heads, const float* src, const float* dst, float slope, float* e) {
  if (count_sparse(Kernel::edge, a, heads)) inner_->edge_scores(a, heads, src, dst, slope, e);
}
void CountingBackend::edge_row_max(const Csr& a, int heads, const float* e, float* max) {
  if (count_sparse(Kernel::edge, a, heads)) inner_->edge_row_max(a, heads, e, max);
}
void CountingBackend::edge_exp_row_sum(const Csr& a, int heads, const float* max, float* e, float* sum) {
  if (count_sparse(Kernel::edge, a, heads)) inner_->edge_exp_row_sum(a, heads, max, e, sum);
}
void CountingBackend::edge_scale_rows(const Csr& a, int heads, const float* sum, float* e) {
  if (count_sparse(Kernel::edge, a, heads)) inner_->edge_scale_rows(a, heads, sum, e);
}
void CountingBackend::edge_dropout(const Csr& a, int heads, const float* in, float* out, const std::int64_t* row_ids,
                                   const std::int64_t* col_ids, const DropoutParams& p) {
  if (count_sparse(Kernel::edge, a, heads)) inner_->edge_dropout(a, heads, in, out, row_ids, col_ids, p);
}
void CountingBackend::spmm_edges(const Csr& a, int heads, ew::HeadSplit hs, const float* v, const std::int64_t* perm,
                                 ConstView x, View y) {
  if (count_sparse(Kernel::spmm_edges, a, x.cols)) inner_->spmm_edges(a, heads, hs, v, perm, x, y);
}
void CountingBackend::sddmm(const Csr& a, int heads, ew::HeadSplit hs, ConstView g, ConstView z, float* out) {
  if (count_sparse(Kernel::sddmm, a, g.cols)) inner_->sddmm(a, heads, hs, g, z, out);
}
void CountingBackend::spmm_sddmm_edges(const Csr& a, const Csr& t, const std::int64_t* perm, int heads,
                                       ew::HeadSplit hs, const float* v, ConstView g, ConstView z, View y,
                                       float* dots) {
  const bool spmm = count_sparse(Kernel::spmm_edges, t, g.cols);  // the work of both products, as the two calls'
  if (count_sparse(Kernel::sddmm, a, g.cols) && spmm) inner_->spmm_sddmm_edges(a, t, perm, heads, hs, v, g, z, y, dots);
}
void CountingBackend::edge_row_dot(const Csr& a, int heads, const float* x, const float* y, float* out) {
  if (count_sparse(Kernel::edge, a, heads)) inner_->edge_row_dot(a, heads, x, y, out);
}
void CountingBackend::edge_softmax_backward(const Csr& a, int heads, const float* alpha, const float* rowdot,
                                            const float* src, const float* dst, float slope, float* d) {
  if (count_sparse(Kernel::edge, a, heads)) inner_->edge_softmax_backward(a, heads, alpha, rowdot, src, dst, slope, d);
}
void CountingBackend::edge_row_sums(const Csr& a, int heads, const float* v, const std::int64_t* perm, float* out) {
  if (count_sparse(Kernel::edge, a, heads)) inner_->edge_row_sums(a, heads, v, perm, out);
}
void CountingBackend::head_matrix(const float* a, std::int64_t cols, int heads, ew::HeadSplit hs, View m) {
  if (count(Kernel::elementwise, elements(m))) inner_->head_matrix(a, cols, heads, hs, m);
}
void CountingBackend::head_diagonal(ConstView q, ew::HeadSplit hs, float* out) {
  if (count(Kernel::elementwise, static_cast<double>(q.cols))) inner_->head_diagonal(q, hs, out);
}
void CountingBackend::adam(View w, ConstView g, View m, View v, const ew::AdamParams& p) {
  if (count(Kernel::optimizer, elements(w))) inner_->adam(w, g, m, v, p);
}
void CountingBackend::sgd(View w, ConstView g, float lr) {
  if (count(Kernel::optimizer, elements(w))) inner_->sgd(w, g, lr);
}
void CountingBackend::row_max(ConstView z, float* max) {
  if (count(Kernel::reduction, elements(z))) inner_->row_max(z, max);
}
void CountingBackend::row_sum_exp(ConstView z, const float* max, float* sum) {
  if (count(Kernel::reduction, elements(z))) inner_->row_sum_exp(z, max, sum);
}
XentSums CountingBackend::softmax_xent(ConstView z, std::int64_t col0, const float* max, const float* sum,
                                       const std::int32_t* label, const std::uint8_t* split, float scale, View g) {
  if (!count(Kernel::loss, elements(z))) return {};
  return inner_->softmax_xent(z, col0, max, sum, label, split, scale, g);
}

}  // namespace gcnlab
