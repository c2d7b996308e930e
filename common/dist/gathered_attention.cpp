#include "common/dist/gathered_attention.hpp"

#include <algorithm>

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
    if (a.heads_of(l) > 0) w = std::max({w, a.dims[static_cast<std::size_t>(l + 1)], std::int64_t{a.heads_of(l)}});
  return w;
}

GatheredAttention::GatheredAttention(Backend& backend, Ledger& ledger, const Graph& g, const Architecture& a,
                                     const HostCsr& rows, std::int64_t r0, std::int64_t c0,
                                     std::unique_ptr<ColumnExchange> exchange, bool elide)
    : exchange_(std::move(exchange)), elide_(elide) {
  const std::vector<std::int64_t>& positions = exchange_->positions();
  const HostCsr pattern = onto_positions(rows, c0, positions);
  block_ = std::make_unique<Csr>(upload(backend, pattern));
  const std::vector<std::int64_t> ids = g.vertices(0, g.n());
  std::vector<std::int64_t> col_ids;
  for (const std::int64_t q : positions) col_ids.push_back(ids[static_cast<std::size_t>(q)]);
  RowAttention::RowReduce reduce;
  if (exchange_->splits_rows())
    reduce = [ex = exchange_.get()](View values, ReduceOp op) { ex->reduce_rows(values, op); };
  rows_ = RowAttention(backend, ledger, a, *block_, pattern, g.vertices(r0, r0 + rows.rows), col_ids, reduce);
  const std::int64_t c = exchange_->columns();
  const int L = a.weight_layers();
  src_.resize(static_cast<std::size_t>(L));
  z_.resize(elide_ ? static_cast<std::size_t>(L) : 1);
  for (int l = 0; l < L; ++l) {
    heads_.push_back(a.heads_of(l));
    widths_.push_back(a.dims[static_cast<std::size_t>(l + 1)]);
    if (heads_.back() == 0) continue;
    src_[static_cast<std::size_t>(l)] = Buffer<float>(backend, static_cast<std::size_t>(c * heads_.back()));
    Buffer<float>& z = z_[elide_ ? static_cast<std::size_t>(l) : 0];
    if (z.size() < static_cast<std::size_t>(c * widths_.back()))
      z = Buffer<float>(backend, static_cast<std::size_t>(c * widths_.back()));
  }
  partial_ = Buffer<float>(backend, static_cast<std::size_t>(c * widest(a)));
}

double GatheredAttention::bytes() const {
  if (!exchange_) return 0;
  double b = csr_bytes(*block_) + rows_.bytes() + bytes_of<float>(partial_.size()) + exchange_->bytes();
  for (const Buffer<float>& v : src_) b += bytes_of<float>(v.size());
  for (const Buffer<float>& z : z_) b += bytes_of<float>(z.size());
  return b;
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
  exchange_->gather(a.src, src);
  rows_.forward(l, {src, a.dst, a.dropout});
}

void GatheredAttention::aggregate(int l, Direction d, ConstView in, View out) {
  if (d == Direction::forward) {
    const View z = gathered_z(l);
    exchange_->gather(in, z);
    rows_.aggregate(l, d, z, out);
    if (exchange_->splits_rows()) exchange_->reduce_rows(out, ReduceOp::sum);
    return;
  }
  const View partial{partial_.data(), exchange_->columns(), in.cols, in.cols};
  rows_.aggregate(l, d, in, partial);  // βᵀ G over this rank's targets, for each column
  exchange_->scatter_sum(partial, out);
}

void GatheredAttention::backward(int l, const Attention& a, ConstView g, ConstView z, View ds, View dd) {
  const int H = heads_[static_cast<std::size_t>(l)];
  const View z_all = gathered_z(l), partial{partial_.data(), exchange_->columns(), H, H};
  if (!elide_) exchange_->gather(z, z_all);  // the forward's gather of this layer was overwritten by later layers'
  rows_.backward(l, {gathered_src(l), a.dst, a.dropout}, g, z_all, partial, dd);
  exchange_->scatter_sum(partial, ds);
}

void GatheredAttention::forward_bytes(int l, ByteModel& m) const {
  const int H = heads_[static_cast<std::size_t>(l)];
  exchange_->gather_bytes(H, m);
  if (exchange_->splits_rows()) exchange_->reduce_rows_bytes(H, m), exchange_->reduce_rows_bytes(H, m);  // max, sum
}

void GatheredAttention::aggregate_bytes(int, Direction d, std::int64_t cols, ByteModel& m) const {
  if (d == Direction::forward) {
    exchange_->gather_bytes(cols, m);
    if (exchange_->splits_rows()) exchange_->reduce_rows_bytes(cols, m);
  } else {
    exchange_->scatter_sum_bytes(cols, m);
  }
}

void GatheredAttention::backward_bytes(int l, ByteModel& m) const {
  const int H = heads_[static_cast<std::size_t>(l)];
  if (!elide_) exchange_->gather_bytes(widths_[static_cast<std::size_t>(l)], m);
  if (exchange_->splits_rows()) exchange_->reduce_rows_bytes(H, m), exchange_->reduce_rows_bytes(H, m);  // D, dd
  exchange_->scatter_sum_bytes(H, m);
}

}  // namespace gcnlab
