#include "common/dist/gathered_attention.hpp"

#include <algorithm>

#include "common/comm/wire.hpp"
#include "common/core/error.hpp"
#include "common/data/graph.hpp"

namespace gcnlab {

namespace {
// `rows` (columns local to c0) with each column renumbered to the index of its
// position in `positions` (ascending, holding every column).
HostCsr onto_positions(HostCsr rows, std::int64_t c0, const std::vector<std::int64_t>& positions) {
  for (std::int64_t& c : rows.col) {
    const auto at = std::lower_bound(positions.begin(), positions.end(), c0 + c);
    GCNLAB_ASSERT(at != positions.end() && *at == c0 + c);
    c = at - positions.begin();
  }
  rows.cols = static_cast<std::int64_t>(positions.size());
  return rows;
}
}  // namespace

std::int64_t GatheredAttention::widest(const Architecture& a) {
  std::int64_t w = 0;
  for (int l = 0; l < a.weight_layers(); ++l)
    if (a.heads_of(l) > 0) w = std::max({w, a.transformed(l), std::int64_t{a.heads_of(l)}});
  return w;
}

GatheredAttention::GatheredAttention(Backend& backend, Ledger& ledger, const Graph& g, const Architecture& a,
                                     const HostCsr& rows, std::int64_t r0, std::int64_t c0,
                                     std::unique_ptr<ColumnExchange> exchange, bool elide, FeatureSplit features)
    : backend_(&backend),
      exchange_(std::move(exchange)),
      features_(features.group && features.group->size() > 1 ? features.group : nullptr),
      rows_count_(rows.rows),
      elide_(elide) {
  const std::vector<std::int64_t>& positions = exchange_->positions();
  const HostCsr pattern = onto_positions(rows, c0, positions);
  block_ = std::make_unique<Csr>(upload(backend, pattern));
  const std::vector<std::int64_t> ids = g.vertices(0, g.n());
  std::vector<std::int64_t> col_ids;
  for (const std::int64_t q : positions) col_ids.push_back(ids[static_cast<std::size_t>(q)]);
  RowAttention::RowReduce reduce;
  if (exchange_->splits_rows())
    reduce = [ex = exchange_.get()](View values, ReduceOp op) { ex->reduce_rows(values, op); };
  rows_ = RowAttention(backend, ledger, a, *block_, pattern, g.vertices(r0, r0 + rows.rows), col_ids, reduce,
                       features.col0);
  const std::int64_t c = exchange_->columns();
  const int L = a.weight_layers();
  src_.resize(static_cast<std::size_t>(L));
  z_.resize(elide_ ? static_cast<std::size_t>(L) : 1);
  if (splits_features()) dst_.resize(static_cast<std::size_t>(L));
  std::int64_t partial_width = 0, heads = 0;  // partial_'s width: the widest local F + H
  for (int l = 0; l < L; ++l) {
    const auto at = static_cast<std::size_t>(l);
    heads_.push_back(a.heads_of(l));
    averaged_.push_back(a.averaged(l));
    widths_.push_back((features.cols.empty() ? a.dims[at + 1] : features.cols[at]) * averaged_.back());
    if (heads_.back() == 0) continue;
    const std::int64_t H = heads_.back();
    partial_width = std::max(partial_width, widths_.back() + H);
    heads = std::max(heads, H);
    src_[at] = Buffer<float>(backend, static_cast<std::size_t>(c * H));
    if (splits_features()) dst_[at] = Buffer<float>(backend, static_cast<std::size_t>(rows_count_ * H));
    Buffer<float>& z = z_[elide_ ? at : 0];
    if (z.size() < static_cast<std::size_t>(c * widths_.back()))
      z = Buffer<float>(backend, static_cast<std::size_t>(c * widths_.back()));
  }
  partial_ = Buffer<float>(backend, static_cast<std::size_t>(c * partial_width));
  if (splits_features()) score_ = Buffer<float>(backend, static_cast<std::size_t>(rows_count_ * heads));
}

double GatheredAttention::bytes() const {
  if (!exchange_) return 0;
  double b = csr_bytes(*block_) + rows_.bytes() + bytes_of<float>(partial_.size() + score_.size()) +
             exchange_->bytes();
  for (const auto* buffers : {&src_, &z_, &dst_})
    for (const Buffer<float>& v : *buffers) b += bytes_of<float>(v.size());
  return b;
}

ConstView GatheredAttention::complete(ConstView partial, float* into) {
  GCNLAB_ASSERT(partial.rows == rows_count_ && partial.ld == partial.cols);
  const View out{into, partial.rows, partial.cols, partial.cols};
  if (partial.data != into) backend_->copy(partial, out);
  features_->allreduce(std::span<float>(into, static_cast<std::size_t>(out.size())), ReduceOp::sum,
                       Category::allreduce);
  return out;
}

void GatheredAttention::complete_bytes(int heads, ByteModel& m) const {
  m.add(Category::allreduce, *features_,
        wire::allreduce(static_cast<double>(rows_count_) * heads * sizeof(float), features_->size()));
}

ConstView GatheredAttention::dst(int l, const Attention& a) const {
  if (!splits_features()) return a.dst;
  const std::int64_t H = heads_[static_cast<std::size_t>(l)];
  return {dst_[static_cast<std::size_t>(l)].data(), rows_count_, H, H};
}

View GatheredAttention::gathered_z(int l) {
  Buffer<float>& z = z_[elide_ ? static_cast<std::size_t>(l) : 0];  // per attention layer, or one for all
  const std::int64_t f = widths_[static_cast<std::size_t>(l)];
  return {z.data(), exchange_->columns(), f, f};
}

View GatheredAttention::gathered_src(int l) {
  const std::int64_t H = heads_[static_cast<std::size_t>(l)];
  return {src_[static_cast<std::size_t>(l)].data(), exchange_->columns(), H, H};
}

void GatheredAttention::forward(int l, const Attention& a) {
  const View src = gathered_src(l);
  ConstView own = a.src;
  if (splits_features()) {  // the model's dots are over this rank's columns F_j only
    own = complete(a.src, score_.data());
    complete(a.dst, dst_[static_cast<std::size_t>(l)].data());
  }
  exchange_->gather(own, src);
  rows_.forward(l, {src, dst(l, a), a.dropout});
}

void GatheredAttention::aggregate(int l, ConstView z, View out) {
  const View all = gathered_z(l);
  exchange_->gather(z, all);
  rows_.aggregate(l, all, out);
  if (exchange_->splits_rows()) exchange_->reduce_rows(out, ReduceOp::sum);
}

void GatheredAttention::backward(int l, const Attention& a, ConstView g, ConstView z, View dz, View ds, View dd) {
  const int H = heads_[static_cast<std::size_t>(l)];
  const std::int64_t c = exchange_->columns(), f = dz.cols;
  // this rank's targets' shares of βᵀ G and of ds, for each column
  const View z_all = gathered_z(l), dz_part{partial_.data(), c, f, f}, ds_part{partial_.data() + c * f, c, H, H};
  if (!elide_) exchange_->gather(z, z_all);  // the forward's gather of this layer was overwritten by later layers'
  rows_.backward(l, {gathered_src(l), dst(l, a), a.dropout}, g, z_all, dz_part, ds_part, dd);
  exchange_->scatter_sum(ds_part, ds);
  if (splits_features()) {  // sums over F_j's partial dots (the backward is linear in dβ)
    complete(ds, ds.data);
    complete(dd, dd.data);
  }
  exchange_->scatter_sum(dz_part, dz);
}

void GatheredAttention::forward_bytes(int l, ByteModel& m) const {
  const int H = heads_[static_cast<std::size_t>(l)];
  if (splits_features()) complete_bytes(H, m), complete_bytes(H, m);  // s, d
  exchange_->gather_bytes(H, m);
  if (exchange_->splits_rows()) exchange_->reduce_rows_bytes(H, m), exchange_->reduce_rows_bytes(H, m);  // max, sum
}

void GatheredAttention::aggregate_bytes(int l, std::int64_t cols, ByteModel& m) const {
  const int mean = averaged_[static_cast<std::size_t>(l)];  // cols: Z's, `mean` times the output's width
  exchange_->gather_bytes(cols, m);
  if (exchange_->splits_rows()) exchange_->reduce_rows_bytes(cols / mean, m);
}

void GatheredAttention::backward_bytes(int l, ByteModel& m) const {
  const int H = heads_[static_cast<std::size_t>(l)];
  if (!elide_) exchange_->gather_bytes(widths_[static_cast<std::size_t>(l)], m);
  if (exchange_->splits_rows()) exchange_->reduce_rows_bytes(H, m), exchange_->reduce_rows_bytes(H, m);  // D, dd
  exchange_->scatter_sum_bytes(H, m);
  if (splits_features()) complete_bytes(H, m), complete_bytes(H, m);  // ds, dd
  exchange_->scatter_sum_bytes(widths_[static_cast<std::size_t>(l)], m);  // βᵀ G, Z's width
}

}  // namespace gcnlab
