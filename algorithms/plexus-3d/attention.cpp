#include "algorithms/plexus-3d/attention.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "common/comm/wire.hpp"
#include "common/core/error.hpp"
#include "common/data/graph.hpp"

namespace gcnlab {

using namespace plexus;

namespace {

// The offsets of block `r`'s q sub-blocks, relative to its first row.
std::vector<std::int64_t> sub_offsets(const RowSplit& rows, int p, int k, int q) {
  std::vector<std::int64_t> o{0};
  for (int j = 0; j < q; ++j) o.push_back(o.back() + rows.sub_block(p, k, q, j).count);
  return o;
}

// The rows R_{a,c} (rows over `major`, then `minor`) of each rank of the x-z
// plane through k, in the plane's rank order (its world ranks ascending: z
// outer, x inner; plexus::grid_rank), `width` columns wide.
std::vector<Rect> plane_rects(const RowSplit& rows, const Grid& g, const Coords& k, int major, int minor,
                              bool whole_block, std::int64_t width) {
  std::vector<Rect> out;
  for (int z = 0; z < g[2]; ++z)
    for (int x = 0; x < g[0]; ++x) {
      const Coords c{x, k[1], z};
      const Range r = whole_block ? rows.block(g[major], c[major])
                                  : rows.sub_block(g[major], c[major], g[minor], c[minor]);
      out.push_back({r, {0, width}});
    }
  return out;
}

// v summed (or op-ed) over `group`'s ranks, in place.
void allreduce(Communicator& group, View v, ReduceOp op = ReduceOp::sum) {
  if (group.size() > 1)
    group.allreduce(std::span<float>(v.data, static_cast<std::size_t>(v.size())), op, Category::allreduce);
}

View rows_of(Buffer<float>& b, std::int64_t rows, std::int64_t cols) {
  GCNLAB_ASSERT(static_cast<std::size_t>(rows * cols) <= b.size());
  return {b.data(), rows, cols, cols};
}

}  // namespace

PlexusAttention::PlexusAttention(Backend& backend, Ledger& ledger, const ProcessGrid& grid, const Graph& g,
                                 const Architecture& arch, const Grid& dims, const Coords& k,
                                 const std::vector<int>& orderings, bool elide)
    : backend_(&backend), grid_(&grid), plane_(&grid.along({"x", "z"})), elide_(elide) {
  const ModelShape shape(arch);
  const RowSplit rows(g.n());
  const int L = arch.weight_layers();
  GCNLAB_ASSERT(shape.attention && plane_->rank() == k[2] * dims[0] + k[0]);
  std::map<std::pair<int, int>, int> shard_of;  // (a, c) -> shard
  std::int64_t z_floats = 0, g_floats = 0, partial = 0, row_floats = 0;
  for (int l = 0; l < L; ++l) {
    Layer t;
    t.blocks = layer_blocks(rows, shape, dims, k, l);
    const LayerBlocks& b = t.blocks;
    const auto [a, bb, c] = b.ax;
    t.heads = arch.heads_of(l);
    GCNLAB_ASSERT(t.heads > 0);
    t.width = b.cols_out.count;
    t.averaged = arch.averaged(l);
    const auto [at, fresh] = shard_of.emplace(std::make_pair(a, c), static_cast<int>(shards_.size()));
    t.shard = at->second;
    if (fresh) {
      Shard s;
      const HostCsr pattern = g.block(Direction::forward, orderings[l + 1], b.rows_out.first, b.rows_out.end(),
                                      orderings[l], b.rows_in.first, b.rows_in.end());
      s.block = std::make_unique<Csr>(upload(backend, pattern));
      shards_.push_back(std::move(s));
      Architecture mine = arch;  // its layers' edge tensors only: the other layers' heads 0
      std::vector<std::int64_t> col0(static_cast<std::size_t>(L), 0);
      for (int o = 0; o < L; ++o) {
        const LayerBlocks other = layer_blocks(rows, shape, dims, k, o);
        col0[static_cast<std::size_t>(o)] = other.cols_out.first;
        if (other.ax.a != a || other.ax.c != c) mine.heads[static_cast<std::size_t>(o)] = 0;
      }
      shards_.back().edges = RowAttention(
          backend, ledger, mine, *shards_.back().block, pattern,
          g.vertices(orderings[l + 1], b.rows_out.first, b.rows_out.end()),
          g.vertices(orderings[l], b.rows_in.first, b.rows_in.end()),
          dims[a] > 1 ? RowAttention::RowReduce([&over_a = over(a)](View v, ReduceOp op) { allreduce(over_a, v, op); })
                      : RowAttention::RowReduce(),
          col0);
    }
    t.sources = std::make_unique<AllGatherColumns>(over(c), sub_offsets(rows, dims[a], k[a], dims[c]));
    t.targets = std::make_unique<AllGatherColumns>(over(a), sub_offsets(rows, dims[c], k[c], dims[a]));
    const auto own = plane_rects(rows, dims, k, a, c, false, t.heads);
    const auto targets = plane_rects(rows, dims, k, c, a, true, t.heads);
    t.to_targets = std::make_unique<Reshard>(own, targets, plane_->rank());
    t.from_targets = std::make_unique<Reshard>(targets, own, plane_->rank());
    t.src = Buffer<float>(backend, static_cast<std::size_t>(b.rows_in.count * t.heads));
    t.dst = Buffer<float>(backend, static_cast<std::size_t>(b.rows_out.count * t.heads));
    z_floats = elide_ ? z_floats : std::max(z_floats, b.rows_in.count * t.z_width());
    g_floats = std::max(g_floats, b.rows_out.count * t.width);
    partial = std::max({partial, b.rows_out.count * t.width, b.rows_in.count * (t.z_width() + t.heads)});
    row_floats = std::max({row_floats, b.x_rows.count * t.heads, b.rows_out.count * t.heads});
    if (elide_) z_.push_back(Buffer<float>(backend, static_cast<std::size_t>(b.rows_in.count * t.z_width())));
    layers_.push_back(std::move(t));
  }
  if (!elide_) z_.push_back(Buffer<float>(backend, static_cast<std::size_t>(z_floats)));
  g_ = Buffer<float>(backend, static_cast<std::size_t>(g_floats));
  partial_ = Buffer<float>(backend, static_cast<std::size_t>(partial));
  rows_ = Buffer<float>(backend, static_cast<std::size_t>(row_floats));
}

Communicator& PlexusAttention::over(int axis) const { return grid_->along({kAxisNames[axis]}); }

std::int64_t PlexusAttention::stored() const {
  std::int64_t e = 0;
  for (const Shard& s : shards_) e += s.block->nnz;
  return e;
}

std::int64_t PlexusAttention::edges() const {
  // Layer l's edge passes run over its own shard's nonzeros, H_l heads each
  // (its traced work): the heads-weighted mean of the layers' shards.
  double e = 0, heads = 0;
  for (const Layer& t : layers_) {
    e += static_cast<double>(shards_[static_cast<std::size_t>(t.shard)].block->nnz) * t.heads;
    heads += t.heads;
  }
  return heads > 0 ? std::llround(e / heads) : 0;
}

double PlexusAttention::bytes() const {
  double b = bytes_of<float>(g_.size() + partial_.size() + rows_.size());
  for (const Shard& s : shards_) b += csr_bytes(*s.block) + s.edges.bytes();
  for (const Layer& t : layers_) b += bytes_of<float>(t.src.size() + t.dst.size());
  for (const Buffer<float>& z : z_) b += bytes_of<float>(z.size());
  std::int64_t staging = 0;
  for (const Layer& t : layers_)
    staging = std::max({staging, t.to_targets->staging_elements(), t.from_targets->staging_elements()});
  return b + bytes_of<float>(staging);
}

void PlexusAttention::allreduce_over_b_bytes(std::int64_t elements, ByteModel& m) const {
  Communicator& over_b = over(1);
  if (over_b.size() > 1)
    m.add(Category::allreduce, over_b, wire::allreduce(bytes_of<float>(elements), over_b.size()));
}

void PlexusAttention::reduce_rows_bytes(const Layer& t, ByteModel& m) const {
  Communicator& over_a = over(t.blocks.ax.a);
  if (over_a.size() > 1)
    m.add(Category::allreduce, over_a, 2 * wire::allreduce(bytes_of<float>(target_rows(t) * t.heads), over_a.size()));
}

View PlexusAttention::gathered_z(int l) {
  const Layer& t = layers_[static_cast<std::size_t>(l)];
  return rows_of(z_[elide_ ? static_cast<std::size_t>(l) : 0], sources_rows(t), t.z_width());
}

void PlexusAttention::forward(int l, const Attention& a) {
  Layer& t = layers_[static_cast<std::size_t>(l)];
  const View own = rows_of(rows_, own_rows(t), t.heads);
  const View src = rows_of(t.src, sources_rows(t), t.heads), dst = rows_of(t.dst, target_rows(t), t.heads);
  backend_->copy(a.src, own);
  allreduce(over(1), own);  // the dots over F_b completed
  t.sources->gather(own, src);
  backend_->copy(a.dst, own);
  allreduce(over(1), own);
  t.to_targets->run(*plane_, *backend_, own, dst, false, staging_);
  shards_[static_cast<std::size_t>(t.shard)].edges.forward(l, {src, dst, a.dropout});
}

void PlexusAttention::aggregate(int l, ConstView z, View out) {
  Layer& t = layers_[static_cast<std::size_t>(l)];
  const View all = gathered_z(l), partial = rows_of(partial_, target_rows(t), t.width);
  t.sources->gather(z, all);
  shards_[static_cast<std::size_t>(t.shard)].edges.aggregate(l, all, partial);
  t.targets->scatter_sum(partial, out);
}

void PlexusAttention::backward(int l, const Attention& a, ConstView g, ConstView z, View dz, View ds, View dd) {
  Layer& t = layers_[static_cast<std::size_t>(l)];
  const View g_all = rows_of(g_, target_rows(t), t.width), z_all = gathered_z(l);
  t.targets->gather(g, g_all);
  if (!elide_) t.sources->gather(z, z_all);  // the forward's gather of this layer was overwritten by later layers'
  // the shard's shares of βᵀ G and ds (its sources' rows), side by side in partial_
  const std::int64_t rows = sources_rows(t), f = t.z_width();
  GCNLAB_ASSERT(static_cast<std::size_t>(rows * (f + t.heads)) <= partial_.size());
  const View dz_part{partial_.data(), rows, f, f}, ds_part{partial_.data() + rows * f, rows, t.heads, t.heads};
  const View dd_rows = rows_of(rows_, target_rows(t), t.heads);
  shards_[static_cast<std::size_t>(t.shard)].edges.backward(
      l, {rows_of(t.src, sources_rows(t), t.heads), rows_of(t.dst, target_rows(t), t.heads), a.dropout}, g_all, z_all,
      dz_part, ds_part, dd_rows);
  t.sources->scatter_sum(ds_part, ds);
  t.from_targets->run(*plane_, *backend_, dd_rows, dd, false, staging_);
  allreduce(over(1), ds);  // sums over F_b's partial dots (the backward is linear in dβ)
  allreduce(over(1), dd);
  t.sources->scatter_sum(dz_part, dz);
}

void PlexusAttention::forward_bytes(int l, ByteModel& m) const {
  const Layer& t = layers_[static_cast<std::size_t>(l)];
  allreduce_over_b_bytes(own_rows(t) * t.heads, m);  // s
  t.sources->gather_bytes(t.heads, m);
  allreduce_over_b_bytes(own_rows(t) * t.heads, m);  // d
  if (plane_->size() > 1) m.add(Category::alltoall, *plane_, t.to_targets->wire_bytes());
  reduce_rows_bytes(t, m);  // the row max and sum
}

void PlexusAttention::aggregate_bytes(int l, std::int64_t cols, ByteModel& m) const {
  const Layer& t = layers_[static_cast<std::size_t>(l)];  // cols: Z's (the output's times the heads it averages)
  t.sources->gather_bytes(cols, m);
  t.targets->scatter_sum_bytes(cols / t.averaged, m);
}

void PlexusAttention::backward_bytes(int l, ByteModel& m) const {
  const Layer& t = layers_[static_cast<std::size_t>(l)];
  t.targets->gather_bytes(t.width, m);
  if (!elide_) t.sources->gather_bytes(t.z_width(), m);
  reduce_rows_bytes(t, m);  // D and dd
  t.sources->scatter_sum_bytes(t.heads, m);
  if (plane_->size() > 1) m.add(Category::alltoall, *plane_, t.from_targets->wire_bytes());
  allreduce_over_b_bytes(own_rows(t) * t.heads, m);  // ds
  allreduce_over_b_bytes(own_rows(t) * t.heads, m);  // dd
  t.sources->scatter_sum_bytes(t.z_width(), m);      // βᵀ G
}

}  // namespace gcnlab
