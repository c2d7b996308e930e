#include "common/dist/gathered_attention.hpp"

#include <algorithm>

#include "common/comm/wire.hpp"
#include "common/core/error.hpp"

namespace gcnlab {

GatheredAttention::GatheredAttention(Backend& backend, Communicator& group, const Graph& g, const Architecture& a,
                                     const std::vector<std::int64_t>& offsets, bool elide)
    : backend_(&backend), group_(&group), offsets_(offsets), elide_(elide) {
  const int me = group.rank();
  const std::int64_t r0 = offsets[me], r1 = offsets[me + 1], n = offsets.back();
  const HostCsr pattern = g.block(Direction::forward, r0, r1, 0, n);
  block_ = std::make_unique<Csr>(upload(backend, pattern));
  rows_ = RowAttention(backend, group.ledger(), a, *block_, pattern, g.vertices(r0, r1), g.vertices(0, n));
  std::int64_t widest = 0;
  const int L = a.weight_layers();
  src_.resize(static_cast<std::size_t>(L));
  z_.resize(elide_ ? static_cast<std::size_t>(L) : 1);
  for (int l = 0; l < L; ++l) {
    heads_.push_back(a.heads_of(l));
    widths_.push_back(a.dims[static_cast<std::size_t>(l + 1)]);
    if (heads_.back() == 0) continue;
    widest = std::max({widest, widths_.back(), static_cast<std::int64_t>(heads_.back())});
    src_[static_cast<std::size_t>(l)] = Buffer<float>(backend, static_cast<std::size_t>(n * heads_.back()));
    Buffer<float>& z = z_[elide_ ? static_cast<std::size_t>(l) : 0];
    if (z.size() < static_cast<std::size_t>(n * widths_.back()))
      z = Buffer<float>(backend, static_cast<std::size_t>(n * widths_.back()));
  }
  partial_ = Buffer<float>(backend, static_cast<std::size_t>(n * widest));
}

double GatheredAttention::bytes() const {
  if (!backend_) return 0;
  double b = csr_bytes(*block_) + rows_.bytes() + bytes_of<float>(partial_.size());
  for (const Buffer<float>& v : src_) b += bytes_of<float>(v.size());
  for (const Buffer<float>& z : z_) b += bytes_of<float>(z.size());
  return b;
}

std::vector<std::int64_t> GatheredAttention::counts(std::int64_t width) const {
  std::vector<std::int64_t> c;
  for (std::size_t r = 0; r + 1 < offsets_.size(); ++r) c.push_back((offsets_[r + 1] - offsets_[r]) * width);
  return c;
}

View GatheredAttention::gathered_z(int l) {
  Buffer<float>& z = z_[elide_ ? static_cast<std::size_t>(l) : 0];  // per attention layer, or one for all
  const std::int64_t n = offsets_.back(), f = widths_[static_cast<std::size_t>(l)];
  return {z.data(), n, f, f};
}

View GatheredAttention::gathered_src(int l) {
  const std::int64_t n = offsets_.back(), H = heads_[static_cast<std::size_t>(l)];
  return {src_[static_cast<std::size_t>(l)].data(), n, H, H};
}

void GatheredAttention::gather(ConstView local, View all) {
  GCNLAB_ASSERT(local.ld == local.cols && all.ld == all.cols && local.cols == all.cols);
  group_->allgather(std::span<const float>(local.data, static_cast<std::size_t>(local.size())),
                    std::span<float>(all.data, static_cast<std::size_t>(all.size())), counts(local.cols),
                    Category::allgather);
}

void GatheredAttention::forward(int l, const Attention& a) {
  const View src = gathered_src(l);
  gather(a.src, src);
  rows_.forward(l, {src, a.dst, a.dropout});
}

void GatheredAttention::aggregate(int l, Direction d, ConstView in, View out) {
  if (d == Direction::forward) {
    const View z = gathered_z(l);
    gather(in, z);
    return rows_.aggregate(l, d, z, out);
  }
  const std::int64_t n = offsets_.back();
  const View partial{partial_.data(), n, in.cols, in.cols};
  rows_.aggregate(l, d, in, partial);  // βᵀ G over this rank's targets, for every source
  GCNLAB_ASSERT(out.ld == out.cols);
  group_->reduce_scatter(std::span<const float>(partial.data, static_cast<std::size_t>(partial.size())),
                         std::span<float>(out.data, static_cast<std::size_t>(out.size())), counts(out.cols),
                         Category::reduce_scatter);
}

void GatheredAttention::backward(int l, const Attention& a, ConstView g, ConstView z, View ds, View dd) {
  const int H = heads_[static_cast<std::size_t>(l)];
  const std::int64_t n = offsets_.back();
  const View z_all = gathered_z(l), partial{partial_.data(), n, H, H};
  if (!elide_) gather(z, z_all);  // the forward's gather of this layer was overwritten by later layers'
  rows_.backward(l, {gathered_src(l), a.dst, a.dropout}, g, z_all, partial, dd);
  group_->reduce_scatter(std::span<const float>(partial.data, static_cast<std::size_t>(partial.size())),
                         std::span<float>(ds.data, static_cast<std::size_t>(ds.size())), counts(H),
                         Category::reduce_scatter);
}

void GatheredAttention::forward_bytes(int l, ByteModel& m) const {
  const std::int64_t mine = offsets_[group_->rank() + 1] - offsets_[group_->rank()];
  m.add(Category::allgather, *group_,
        static_cast<double>(offsets_.back() - mine) * heads_[static_cast<std::size_t>(l)] * sizeof(float));
}

void GatheredAttention::aggregate_bytes(int l, Direction d, std::int64_t cols, ByteModel& m) const {
  (void)l;
  const std::int64_t mine = offsets_[group_->rank() + 1] - offsets_[group_->rank()];
  if (d == Direction::forward)
    m.add(Category::allgather, *group_, static_cast<double>(offsets_.back() - mine) * cols * sizeof(float));
  else
    m.add(Category::reduce_scatter, *group_,
          wire::reduce_scatter(static_cast<double>(mine) * cols * sizeof(float), group_->size()));
}

void GatheredAttention::backward_bytes(int l, ByteModel& m) const {
  const std::int64_t mine = offsets_[group_->rank() + 1] - offsets_[group_->rank()];
  const double others = static_cast<double>(offsets_.back() - mine);
  const int H = heads_[static_cast<std::size_t>(l)];
  if (!elide_) m.add(Category::allgather, *group_, others * widths_[static_cast<std::size_t>(l)] * sizeof(float));
  m.add(Category::reduce_scatter, *group_,
        wire::reduce_scatter(static_cast<double>(mine) * H * sizeof(float), group_->size()));
}

}  // namespace gcnlab
