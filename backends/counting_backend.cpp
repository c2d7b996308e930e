#include "backends/counting_backend.hpp"

namespace gcnlab {

namespace {
constexpr double kFloat = sizeof(float), kId = sizeof(std::int64_t);
double elements(ConstView v) { return static_cast<double>(v.size()); }
double bytes(ConstView v) { return kFloat * elements(v); }
double height(ConstView v) { return static_cast<double>(v.rows); }
double width(ConstView v) { return static_cast<double>(v.cols); }
// Per-vertex or per-edge vectors of `heads` floats: n of them.
double vectors(std::int64_t n, int heads) { return kFloat * static_cast<double>(n) * heads; }
// An output Y = ... + beta Y: written, and read where beta is not 0.
double output(ConstView y, float beta) { return bytes(y) * (beta != 0.f ? 2 : 1); }
}  // namespace

void CountingBackend::copy_to_device(void* dst, const void* src, std::size_t bytes) {
  const auto b = static_cast<double>(bytes);
  if (count(Kernel::to_device, b, b)) inner_->copy_to_device(dst, src, bytes);
}
void CountingBackend::copy_to_host(void* dst, const void* src, std::size_t bytes) {
  const auto b = static_cast<double>(bytes);
  count(Kernel::to_host, b, b);
  inner_->copy_to_host(dst, src, bytes);
}
void CountingBackend::copy_on_device(void* dst, const void* src, std::size_t bytes) {
  const auto b = static_cast<double>(bytes);
  if (count(Kernel::elementwise, b / sizeof(float), 2 * b))  // in float elements, as copy()
    inner_->copy_on_device(dst, src, bytes);
}

void CountingBackend::spmm(const Csr& a, ConstView x, View y, float beta, const Progress& progress) {
  if (count_sparse(Kernel::spmm, a, x.cols, bytes(x) + output(y, beta), Reads::pattern_and_values))
    inner_->spmm(a, x, y, beta, progress);
}
void CountingBackend::spmm_plus(const Csr& a, ConstView x, const RowTerm& t, View y) {
  // the term's rows read in the output pass (its scalar too where it lives on the backend)
  const double term = bytes(t.r) + (t.plus ? kFloat : 0.0);
  if (count_sparse(Kernel::spmm, a, x.cols, bytes(x) + bytes(y) + term, Reads::pattern_and_values))
    inner_->spmm_plus(a, x, t, y);
}
void CountingBackend::gemm(Op op_a, Op op_b, float alpha, ConstView a, ConstView b, float beta, View c) {
  const std::int64_t k = op_a == Op::N ? a.cols : a.rows;
  if (count(Kernel::gemm, elements(c) * static_cast<double>(k), bytes(a) + bytes(b) + output(c, beta)))
    inner_->gemm(op_a, op_b, alpha, a, b, beta, c);
}
void CountingBackend::fill(View y, float value) {
  if (count(Kernel::elementwise, elements(y), bytes(y))) inner_->fill(y, value);
}
void CountingBackend::copy(ConstView x, View y) {
  if (count(Kernel::elementwise, elements(y), bytes(x) + bytes(y))) inner_->copy(x, y);
}
void CountingBackend::transpose(ConstView x, View y) {
  if (count(Kernel::elementwise, elements(y), bytes(x) + bytes(y))) inner_->transpose(x, y);
}
void CountingBackend::axpy(float a, ConstView x, View y) {
  if (count(Kernel::elementwise, elements(y), bytes(x) + 2 * bytes(y))) inner_->axpy(a, x, y);
}
void CountingBackend::axpy_plus(float a, const float* s, ConstView x, View y) {
  if (count(Kernel::elementwise, elements(y), bytes(x) + 2 * bytes(y) + kFloat)) inner_->axpy_plus(a, s, x, y);
}
void CountingBackend::column_sums(ConstView x, float* out) {
  if (count(Kernel::reduction, elements(x), bytes(x) + kFloat * width(x))) inner_->column_sums(x, out);
}
void CountingBackend::inner_product(ConstView x, ConstView y, float* out) {
  if (count(Kernel::reduction, 2 * elements(x), bytes(x) + bytes(y) + kFloat)) inner_->inner_product(x, y, out);
}
void CountingBackend::gather_rows(ConstView x, const std::int64_t* rows, View out) {
  if (count(Kernel::elementwise, elements(out), 2 * bytes(out) + kId * height(out)))
    inner_->gather_rows(x, rows, out);
}
void CountingBackend::pack_bf16(ConstView x, bf16* out) {
  if (count(Kernel::elementwise, elements(x), bytes(x) + sizeof(bf16) * elements(x))) inner_->pack_bf16(x, out);
}
void CountingBackend::unpack_bf16(const bf16* in, View y) {
  if (count(Kernel::elementwise, elements(y), sizeof(bf16) * elements(y) + bytes(y))) inner_->unpack_bf16(in, y);
}
void CountingBackend::relu(ConstView z, View h) {
  if (count(Kernel::elementwise, elements(h), bytes(z) + bytes(h))) inner_->relu(z, h);
}
void CountingBackend::relu_backward(ConstView dh, ConstView z, View g) {
  if (count(Kernel::elementwise, elements(g), bytes(dh) + bytes(z) + bytes(g))) inner_->relu_backward(dh, z, g);
}
void CountingBackend::dropout(ConstView x, View y, const std::int64_t* row_ids, std::int64_t col0,
                              const DropoutParams& p) {
  if (count(Kernel::elementwise, elements(y), bytes(x) + bytes(y) + kId * height(y)))
    inner_->dropout(x, y, row_ids, col0, p);
}
void CountingBackend::relu_dropout(ConstView z, View x, const std::int64_t* row_ids, std::int64_t col0,
                                   const DropoutParams& p) {
  if (count(Kernel::elementwise, elements(x), bytes(z) + bytes(x) + kId * height(x)))
    inner_->relu_dropout(z, x, row_ids, col0, p);
}
void CountingBackend::dropout_relu_backward(ConstView dx, ConstView x, float scale, View g) {
  if (count(Kernel::elementwise, elements(g), bytes(dx) + bytes(x) + bytes(g)))
    inner_->dropout_relu_backward(dx, x, scale, g);
}
void CountingBackend::add_row(const float* b, View y) {
  if (count(Kernel::elementwise, elements(y), 2 * bytes(y) + kFloat * width(y))) inner_->add_row(b, y);
}
void CountingBackend::bias_relu(ConstView z, ConstView r, const float* b, View h) {
  if (count(Kernel::elementwise, elements(h), bytes(z) + (r.data ? bytes(r) : 0) + bytes(h) + kFloat * width(z)))
    inner_->bias_relu(z, r, b, h);
}
void CountingBackend::bias_relu_dropout(ConstView z, ConstView r, const float* b, View x, const std::int64_t* row_ids,
                                        std::int64_t col0, const DropoutParams& p) {
  const double read = bytes(z) + (r.data ? bytes(r) : 0) + kFloat * width(z) + kId * height(x);
  if (count(Kernel::elementwise, elements(x), read + bytes(x))) inner_->bias_relu_dropout(z, r, b, x, row_ids, col0, p);
}
void CountingBackend::relu_backward_sums(ConstView dh, ConstView z, View g, float* sums) {
  if (count(Kernel::elementwise, elements(g), bytes(dh) + bytes(z) + bytes(g) + kFloat * width(g)))
    inner_->relu_backward_sums(dh, z, g, sums);
}
void CountingBackend::dropout_relu_backward_sums(ConstView dx, ConstView x, float scale, View g, float* sums) {
  if (count(Kernel::elementwise, elements(g), bytes(dx) + bytes(x) + bytes(g) + kFloat * width(g)))
    inner_->dropout_relu_backward_sums(dx, x, scale, g, sums);
}
void CountingBackend::bias_elu(ConstView z, const float* b, View h) {
  if (count(Kernel::elementwise, elements(h), bytes(z) + bytes(h) + kFloat * width(z))) inner_->bias_elu(z, b, h);
}
void CountingBackend::bias_elu_dropout(ConstView z, const float* b, View x, const std::int64_t* row_ids,
                                       std::int64_t col0, const DropoutParams& p) {
  if (count(Kernel::elementwise, elements(x), bytes(z) + kFloat * width(z) + bytes(x) + kId * height(x)))
    inner_->bias_elu_dropout(z, b, x, row_ids, col0, p);
}
// g and its column sums written; the bias read in either operand form (ew::EluSlope computes both slopes and
// selects one, so that the element loop vectorises)
void CountingBackend::elu_backward_sums(ConstView dh, ConstView z, const float* b, ew::EluOperand of, View g,
                                        float* sums) {
  const double bias = kFloat * width(z);
  if (count(Kernel::elementwise, elements(g), bytes(dh) + bytes(z) + bias + bytes(g) + kFloat * width(g)))
    inner_->elu_backward_sums(dh, z, b, of, g, sums);
}
void CountingBackend::dropout_elu_backward_sums(ConstView dx, ConstView z, const float* b, ew::EluOperand of,
                                                const std::int64_t* row_ids, std::int64_t col0,
                                                const DropoutParams& p, View g, float* sums) {
  const double read = bytes(dx) + bytes(z) + kFloat * width(z) + kId * height(g);  // b in either form, as above
  if (count(Kernel::elementwise, elements(g), read + bytes(g) + kFloat * width(g)))
    inner_->dropout_elu_backward_sums(dx, z, b, of, row_ids, col0, p, g, sums);
}
void CountingBackend::row_sum_squares(ConstView z, float* sumsq) {
  if (count(Kernel::reduction, elements(z), bytes(z) + kFloat * height(z))) inner_->row_sum_squares(z, sumsq);
}
void CountingBackend::norm_relu_dropout_add(ConstView z, const float* sumsq, const float* gamma, ew::NormParams n,
                                            const std::int64_t* row_ids, std::int64_t col0, const DropoutParams& p,
                                            View y) {
  const double per_row_col = kFloat * (height(z) + width(z)) + kId * height(z);  // sumsq, gamma, row ids
  if (count(Kernel::elementwise, elements(y), bytes(z) + 2 * bytes(y) + per_row_col))
    inner_->norm_relu_dropout_add(z, sumsq, gamma, n, row_ids, col0, p, y);
}
void CountingBackend::norm_relu_dropout_backward(ConstView dy, ConstView z, const float* sumsq, const float* gamma,
                                                 ew::NormParams n, const std::int64_t* row_ids, std::int64_t col0,
                                                 const DropoutParams& p, View g, float* dgamma, float* rowdot) {
  // sumsq and rowdot per row, gamma and dgamma per column, row ids
  const double per_row_col = kFloat * 2 * (height(z) + width(z)) + kId * height(z);
  if (count(Kernel::elementwise, elements(g), bytes(dy) + bytes(z) + bytes(g) + per_row_col))
    inner_->norm_relu_dropout_backward(dy, z, sumsq, gamma, n, row_ids, col0, p, g, dgamma, rowdot);
}
void CountingBackend::norm_backward(ConstView z, const float* sumsq, const float* gamma, const float* rowdot,
                                    ew::NormParams n, View g) {
  const double per_row_col = kFloat * (2 * height(z) + width(z));  // sumsq, rowdot, gamma
  if (count(Kernel::elementwise, elements(g), bytes(z) + 2 * bytes(g) + per_row_col))
    inner_->norm_backward(z, sumsq, gamma, rowdot, n, g);
}
// The edge kernels read a's pattern (not its values); edge tensors are a.nnz vectors of `heads` floats,
// per-vertex ones a.rows (targets) or a.cols (sources) vectors.
void CountingBackend::edge_scores(const Csr& a, int heads, const float* src, const float* dst, float slope, float* e) {
  const double moved = vectors(a.cols + a.rows + a.nnz, heads);  // src, dst read; e written
  if (count_sparse(Kernel::edge, a, heads, moved, Reads::pattern)) inner_->edge_scores(a, heads, src, dst, slope, e);
}
void CountingBackend::edge_row_max(const Csr& a, int heads, const float* e, float* max) {
  if (count_sparse(Kernel::edge, a, heads, vectors(a.nnz + a.rows, heads), Reads::pattern))
    inner_->edge_row_max(a, heads, e, max);
}
void CountingBackend::edge_exp_row_sum(const Csr& a, int heads, const float* max, float* e, float* sum) {
  if (count_sparse(Kernel::edge, a, heads, vectors(2 * a.nnz + 2 * a.rows, heads), Reads::pattern))  // e in place
    inner_->edge_exp_row_sum(a, heads, max, e, sum);
}
void CountingBackend::edge_scale_rows(const Csr& a, int heads, const float* sum, float* e) {
  if (count_sparse(Kernel::edge, a, heads, vectors(2 * a.nnz + a.rows, heads), Reads::pattern))
    inner_->edge_scale_rows(a, heads, sum, e);
}
void CountingBackend::edge_softmax(const Csr& a, int heads, const float* src, const float* dst, float slope, float* e,
                                   float* max, float* sum) {
  // The four passes' work; the bytes of one walk: the pattern, src and dst read, e written once (a row's
  // values stay in cache between the passes), max and sum written.
  const bool run = count_sparse(Kernel::edge, a, heads, vectors(a.cols + a.rows + a.nnz, heads), Reads::pattern);
  count_sparse(Kernel::edge, a, heads, vectors(a.rows, heads), Reads::nothing);  // the rows' max
  count_sparse(Kernel::edge, a, heads, vectors(a.rows, heads), Reads::nothing);  // exp, the rows' sums
  count_sparse(Kernel::edge, a, heads, 0, Reads::nothing);                       // the scaling
  if (run) inner_->edge_softmax(a, heads, src, dst, slope, e, max, sum);
}
void CountingBackend::edge_dropout(const Csr& a, int heads, const float* in, float* out, const std::int64_t* row_ids,
                                   const std::int64_t* col_ids, const DropoutParams& p) {
  const double moved = vectors(2 * a.nnz, heads) + kId * static_cast<double>(a.rows + a.cols);
  if (count_sparse(Kernel::edge, a, heads, moved, Reads::pattern))
    inner_->edge_dropout(a, heads, in, out, row_ids, col_ids, p);
}
void CountingBackend::spmm_edges(const Csr& a, int heads, ew::HeadSplit hs, const float* v, const std::int64_t* perm,
                                 ConstView x, View y) {
  const double moved = vectors(a.nnz, heads) + (perm ? kId * static_cast<double>(a.nnz) : 0.0) + bytes(x) + bytes(y);
  if (count_sparse(Kernel::spmm_edges, a, x.cols, moved, Reads::pattern))
    inner_->spmm_edges(a, heads, hs, v, perm, x, y);
}
void CountingBackend::sddmm(const Csr& a, int heads, ew::HeadSplit hs, ConstView g, ConstView z, float* out) {
  if (count_sparse(Kernel::sddmm, a, g.cols, bytes(g) + bytes(z) + vectors(a.nnz, heads), Reads::pattern))
    inner_->sddmm(a, heads, hs, g, z, out);
}
void CountingBackend::spmm_sddmm_edges(const Csr& a, const Csr& t, const std::int64_t* perm, int heads,
                                       ew::HeadSplit hs, const float* v, ConstView g, ConstView z, View y,
                                       float* dots) {
  // The work of both products, as the two calls'; the bytes of the one walk over t: its pattern, perm, the
  // values, G and βᵀG with the SpMM, Z and the dots with the SDDMM (a's pattern and G are not read again).
  const double spmm_moved = vectors(t.nnz, heads) + kId * static_cast<double>(t.nnz) + bytes(g) + bytes(y);
  const bool spmm = count_sparse(Kernel::spmm_edges, t, g.cols, spmm_moved, Reads::pattern);
  if (count_sparse(Kernel::sddmm, a, g.cols, bytes(z) + vectors(a.nnz, heads), Reads::nothing) && spmm)
    inner_->spmm_sddmm_edges(a, t, perm, heads, hs, v, g, z, y, dots);
}
void CountingBackend::edge_row_dot(const Csr& a, int heads, const float* x, const float* y, float* out) {
  if (count_sparse(Kernel::edge, a, heads, vectors(2 * a.nnz + a.rows, heads), Reads::pattern))
    inner_->edge_row_dot(a, heads, x, y, out);
}
void CountingBackend::edge_softmax_backward(const Csr& a, int heads, const float* alpha, const float* rowdot,
                                            const float* src, const float* dst, float slope, float* d) {
  // alpha read, d in place, rowdot and dst per row, src per column
  const double moved = vectors(3 * a.nnz + 2 * a.rows + a.cols, heads);
  if (count_sparse(Kernel::edge, a, heads, moved, Reads::pattern))
    inner_->edge_softmax_backward(a, heads, alpha, rowdot, src, dst, slope, d);
}
void CountingBackend::edge_row_sums(const Csr& a, int heads, const float* v, const std::int64_t* perm, float* out) {
  const double moved = vectors(a.nnz + a.rows, heads) + (perm ? kId * static_cast<double>(a.nnz) : 0.0);
  if (count_sparse(Kernel::edge, a, heads, moved, Reads::pattern)) inner_->edge_row_sums(a, heads, v, perm, out);
}
void CountingBackend::edge_softmax_grad(const Csr& a, int heads, const float* alpha, const float* src,
                                        const float* dst, float slope, float* d, float* rowdot, float* dd) {
  // The three passes' work; the bytes of one walk: the pattern, alpha and d read, d written, src and dst read,
  // rowdot and dd written.
  const double moved = vectors(3 * a.nnz + 3 * a.rows + a.cols, heads);
  const bool run = count_sparse(Kernel::edge, a, heads, moved, Reads::pattern);  // the rows' dots
  count_sparse(Kernel::edge, a, heads, 0, Reads::nothing);                        // the softmax's backward
  count_sparse(Kernel::edge, a, heads, 0, Reads::nothing);                        // the rows' sums
  if (run) inner_->edge_softmax_grad(a, heads, alpha, src, dst, slope, d, rowdot, dd);
}
void CountingBackend::head_dots(ConstView z, const float* a_src, const float* a_dst, ew::HeadSplit hs, View s,
                                View d) {
  // Z and the two vectors read, s and d written: a reduction of Z's rows per head
  if (count(Kernel::reduction, elements(z), bytes(z) + 2 * kFloat * width(z) + bytes(s) + bytes(d)))
    inner_->head_dots(z, a_src, a_dst, hs, s, d);
}
void CountingBackend::head_dots_backward(ConstView ds, ConstView dd, const float* a_src, const float* a_dst,
                                         ew::HeadSplit hs, ConstView z, View dz, float* da_src, float* da_dst) {
  // the adjoint: dZ in place, ds, dd and the two vectors read; the column dots: a reduction of Z's
  // rows (two products and two sums an element), Z read once, a float a column of each gradient written
  const bool run =
      count(Kernel::elementwise, elements(dz), 2 * bytes(dz) + 2 * kFloat * width(dz) + bytes(ds) + bytes(dd));
  count(Kernel::reduction, 4 * elements(z), bytes(z) + 2 * kFloat * width(z));
  if (run) inner_->head_dots_backward(ds, dd, a_src, a_dst, hs, z, dz, da_src, da_dst);
}
void CountingBackend::adam(View w, ConstView g, View m, View v, const ew::AdamParams& p) {
  if (count(Kernel::optimizer, elements(w), 7 * bytes(w))) inner_->adam(w, g, m, v, p);  // g; w, m, v in place
}
void CountingBackend::sgd(View w, ConstView g, float lr) {
  if (count(Kernel::optimizer, elements(w), 3 * bytes(w))) inner_->sgd(w, g, lr);
}
void CountingBackend::row_max(ConstView z, float* max) {
  if (count(Kernel::reduction, elements(z), bytes(z) + kFloat * height(z))) inner_->row_max(z, max);
}
void CountingBackend::row_sum_exp(ConstView z, const float* max, float* sum) {
  if (count(Kernel::reduction, elements(z), bytes(z) + 2 * kFloat * height(z))) inner_->row_sum_exp(z, max, sum);
}
XentSums CountingBackend::softmax_xent(ConstView z, std::int64_t col0, const float* max, const float* sum,
                                       const std::int32_t* label, const std::uint8_t* split, float scale, View g) {
  // z read, g written; max, sum and the label per row (4 B each), the split mask (1 B)
  const double moved = bytes(z) + bytes(g) + (3 * kFloat + 1) * height(z);
  if (!count(Kernel::loss, elements(z), moved)) return {};
  return inner_->softmax_xent(z, col0, max, sum, label, split, scale, g);
}

}  // namespace gcnlab
