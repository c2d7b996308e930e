#include "common/dist/row_attention.hpp"

#include <algorithm>

#include "common/core/error.hpp"

namespace gcnlab {

HostCsr transpose_pattern(const HostCsr& a, std::vector<std::int64_t>& perm) {
  HostCsr t;
  t.rows = a.cols;
  t.cols = a.rows;
  t.rowptr.assign(static_cast<std::size_t>(t.rows + 1), 0);
  for (const std::int64_t c : a.col) ++t.rowptr[static_cast<std::size_t>(c + 1)];
  for (std::int64_t r = 0; r < t.rows; ++r) t.rowptr[r + 1] += t.rowptr[r];
  t.col.resize(a.col.size());
  t.val.assign(a.col.size(), 0.f);
  perm.resize(a.col.size());
  std::vector<std::int64_t> next(t.rowptr.begin(), t.rowptr.end() - 1);
  for (std::int64_t i = 0; i < a.rows; ++i)  // rows in order: each transposed row's columns ascend
    for (std::int64_t k = a.rowptr[i]; k < a.rowptr[i + 1]; ++k) {
      const std::int64_t at = next[static_cast<std::size_t>(a.col[k])]++;
      t.col[at] = i;
      perm[at] = k;
    }
  return t;
}

RowAttention::RowAttention(Backend& backend, Ledger& ledger, const Architecture& a, const Csr& block,
                           const HostCsr& pattern, std::span<const std::int64_t> row_ids,
                           std::span<const std::int64_t> col_ids, RowReduce reduce_rows,
                           std::span<const std::int64_t> col0)
    : backend_(&backend), ledger_(&ledger), block_(&block), reduce_rows_(std::move(reduce_rows)),
      slope_(a.attention_slope) {
  GCNLAB_ASSERT(pattern.nnz() == block.nnz && static_cast<std::int64_t>(row_ids.size()) == block.rows &&
                static_cast<std::int64_t>(col_ids.size()) == block.cols);
  std::vector<std::int64_t> perm;
  transposed_ = upload(backend, transpose_pattern(pattern, perm));
  perm_ = make_buffer<std::int64_t>(backend, perm);
  row_ids_ = make_buffer<std::int64_t>(backend, row_ids);
  col_ids_ = make_buffer<std::int64_t>(backend, col_ids);
  const auto edges = static_cast<std::size_t>(block.nnz);
  int widest = 0;
  layers_.resize(static_cast<std::size_t>(a.weight_layers()));
  for (int l = 0; l < a.weight_layers(); ++l) {
    Layer& t = layers_[static_cast<std::size_t>(l)];
    t.heads = a.heads_of(l);
    if (t.heads == 0) continue;
    t.split = head_split(a, l, col0.empty() ? 0 : col0[static_cast<std::size_t>(l)]);
    t.alpha = Buffer<float>(backend, edges * t.heads);
    if (a.attention_dropout) t.beta = Buffer<float>(backend, edges * t.heads);
    widest = std::max(widest, t.heads);
  }
  work_ = Buffer<float>(backend, edges * widest);
  const auto rows = static_cast<std::size_t>(std::max(block.rows, block.cols));
  row_a_ = Buffer<float>(backend, rows * widest);
  row_b_ = Buffer<float>(backend, rows * widest);
}

double RowAttention::bytes() const {
  if (!block_) return 0;  // no attention layers
  double b = csr_bytes(transposed_) + bytes_of<std::int64_t>(perm_.size() + row_ids_.size() + col_ids_.size()) +
             bytes_of<float>(work_.size() + row_a_.size() + row_b_.size());
  for (const Layer& t : layers_) b += bytes_of<float>(t.alpha.size() + t.beta.size());
  return b;
}

void RowAttention::reduce_rows(float* values, int heads, ReduceOp op) {
  if (reduce_rows_) reduce_rows_(View{values, block_->rows, heads, heads}, op);
}

void RowAttention::forward(int l, const Attention& a) {
  Layer& t = layers_[static_cast<std::size_t>(l)];
  GCNLAB_ASSERT(t.heads > 0 && a.src.ld == t.heads && a.dst.ld == t.heads);
  Backend& b = *backend_;
  const Csr& A = *block_;
  if (!reduce_rows_) {  // every row whole here: the softmax in one visit per row
    auto time = ledger_->time(Category::edge_softmax);
    b.edge_softmax(A, t.heads, a.src.data, a.dst.data, slope_, t.alpha.data(), row_a_.data(), row_b_.data());
  } else {  // rows split over ranks: their max and sum combined between the passes
    {
      auto time = ledger_->time(Category::edge_softmax);
      b.edge_scores(A, t.heads, a.src.data, a.dst.data, slope_, t.alpha.data());
      b.edge_row_max(A, t.heads, t.alpha.data(), row_a_.data());
    }
    reduce_rows(row_a_.data(), t.heads, ReduceOp::max);
    {
      auto time = ledger_->time(Category::edge_softmax);
      b.edge_exp_row_sum(A, t.heads, row_a_.data(), t.alpha.data(), row_b_.data());
    }
    reduce_rows(row_b_.data(), t.heads, ReduceOp::sum);
    auto time = ledger_->time(Category::edge_softmax);
    b.edge_scale_rows(A, t.heads, row_b_.data(), t.alpha.data());
  }
  t.dropped = a.dropout.p > 0;
  GCNLAB_ASSERT(!t.dropped || t.beta.size() == t.alpha.size());  // Architecture::attention_dropout
  if (t.dropped) {
    auto time = ledger_->time(Category::edge_softmax);
    b.edge_dropout(A, t.heads, t.alpha.data(), t.beta.data(), row_ids_.data(), col_ids_.data(), a.dropout);
  }
}

void RowAttention::aggregate(int l, ConstView z, View out) {
  const Layer& t = layers_[static_cast<std::size_t>(l)];
  auto time = ledger_->time(Category::spmm);
  backend_->spmm_edges(*block_, t.heads, t.split, t.values(), nullptr, z, out);
}

void RowAttention::backward(int l, const Attention& a, ConstView g, ConstView z, View dz, View ds, View dd) {
  const Layer& t = layers_[static_cast<std::size_t>(l)];
  GCNLAB_ASSERT(ds.ld == t.heads && dd.ld == t.heads);
  Backend& b = *backend_;
  const Csr& A = *block_;
  float* d = work_.data();
  {
    auto time = ledger_->time(Category::sddmm);
    // βᵀ G and dβ (partial dots where the heads' columns are split)
    b.spmm_sddmm_edges(A, transposed_, perm_.data(), t.heads, t.split, t.values(), g, z, dz, d);
  }
  {
    auto time = ledger_->time(Category::edge_softmax);
    if (t.dropped) b.edge_dropout(A, t.heads, d, d, row_ids_.data(), col_ids_.data(), a.dropout);  // dα
    if (!reduce_rows_) {  // every row whole here: D_i, dê and dd_i in one visit per row
      b.edge_softmax_grad(A, t.heads, t.alpha.data(), a.src.data, a.dst.data, slope_, d, row_a_.data(), dd.data);
      b.edge_row_sums(transposed_, t.heads, d, perm_.data(), ds.data);
      return;
    }
    b.edge_row_dot(A, t.heads, t.alpha.data(), d, row_a_.data());  // D_i; rows split over ranks: combined
  }
  reduce_rows(row_a_.data(), t.heads, ReduceOp::sum);
  {
    auto time = ledger_->time(Category::edge_softmax);
    b.edge_softmax_backward(A, t.heads, t.alpha.data(), row_a_.data(), a.src.data, a.dst.data, slope_, d);
    b.edge_row_sums(A, t.heads, d, nullptr, dd.data);
    b.edge_row_sums(transposed_, t.heads, d, perm_.data(), ds.data);
  }
  reduce_rows(dd.data, t.heads, ReduceOp::sum);
}

}  // namespace gcnlab
