#include "algorithms/plexus-3d/decomposition.hpp"

#include <algorithm>
#include <numeric>

#include "common/comm/wire.hpp"
#include "common/core/error.hpp"

namespace gcnlab::plexus {

std::vector<std::int64_t> row_block_elements(std::int64_t rows, int p, std::int64_t width) {
  std::vector<std::int64_t> s(p);
  for (int k = 0; k < p; ++k) s[k] = block_range(rows, p, k).count * width;
  return s;
}

namespace {
Range sub_range(Range r, int p, int k) {
  Range s = block_range(r.count, p, k);
  s.first += r.first;
  return s;
}
}  // namespace

std::int64_t RowSplit::rows() const { return sample_ ? sample_->size() : n_; }

Range RowSplit::block(int p, int k) const { return restrict(block_range(n_, p, k)); }

Range RowSplit::sub_block(int p, int k, int q, int j) const {
  return restrict(sub_range(block_range(n_, p, k), q, j));
}

std::vector<std::int64_t> RowSplit::sub_block_elements(int p, int k, int q, std::int64_t width) const {
  std::vector<std::int64_t> s(static_cast<std::size_t>(q));
  for (int j = 0; j < q; ++j) s[j] = sub_block(p, k, q, j).count * width;
  return s;
}

InputBlock input_block(const RowSplit& rows, const std::vector<std::int64_t>& dims, const Grid& g, const Coords& k,
                       int l) {
  const Axes ax = layer_axes(l);
  InputBlock b{rows.block(g[ax.a], k[ax.a]), block_range(dims[l], g[ax.b], k[ax.b])};
  if (l == 0) b.rows = rows.sub_block(g[ax.a], k[ax.a], g[ax.c], k[ax.c]);  // sharded further over c (Sec. 3.1)
  return b;
}

LayerBlocks layer_blocks(const RowSplit& rows, const std::vector<std::int64_t>& dims, const Grid& g, const Coords& k,
                         int l) {
  LayerBlocks b;
  b.ax = layer_axes(l);
  const auto [a, bb, c] = b.ax;
  b.rows_in = rows.block(g[a], k[a]);
  b.x_rows = l == 0 ? rows.sub_block(g[a], k[a], g[c], k[c]) : b.rows_in;
  b.rows_out = rows.block(g[c], k[c]);
  b.cols_in = block_range(dims[l], g[bb], k[bb]);
  b.cols_out = block_range(dims[l + 1], g[a], k[a]);
  b.w_rows = sub_range(b.cols_in, g[c], k[c]);
  return b;
}

std::vector<Collective> epoch_collectives(const RowSplit& rows, const std::vector<std::int64_t>& dims, const Grid& g,
                                          const Coords& k, bool learn_features, double sum_element_bytes) {
  constexpr double f4 = sizeof(float);
  const int L = static_cast<int>(dims.size()) - 1;
  std::vector<Collective> out;
  auto add = [&](Category cat, int axis, int l, bool bwd, double payload, double wire) {
    if (g[axis] > 1) out.push_back({cat, axis, l, bwd, wire, payload});
  };
  auto allreduce = [&](int axis, int l, bool bwd, double elements) {  // a partial sum (PartialSums)
    const double m = sum_element_bytes * elements;
    add(Category::allreduce, axis, l, bwd, m, wire::allreduce(m, g[axis]));
  };
  for (int l = 0; l < L; ++l) {  // forward, Alg. 1
    const LayerBlocks b = layer_blocks(rows, dims, g, k, l);
    if (l == 0)
      add(Category::allgather, b.ax.c, l, false, f4 * b.x_rows.count * b.cols_in.count,
          f4 * (b.rows_in.count - b.x_rows.count) * b.cols_in.count);
    allreduce(b.ax.a, l, false, b.rows_out.count * b.cols_in.count);
    add(Category::allgather, b.ax.c, l, false, f4 * b.w_rows.count * b.cols_out.count,
        f4 * (b.cols_in.count - b.w_rows.count) * b.cols_out.count);
    allreduce(b.ax.b, l, false, b.rows_out.count * b.cols_out.count);
  }
  for (int l = L - 1; l >= 0; --l) {  // backward, Alg. 2
    const LayerBlocks b = layer_blocks(rows, dims, g, k, l);
    const double dw = f4 * b.w_rows.count * b.cols_out.count;
    add(Category::reduce_scatter, b.ax.c, l, true, dw, wire::reduce_scatter(dw, g[b.ax.c]));
    if (l == 0 && !learn_features) continue;
    allreduce(b.ax.a, l, true, b.rows_out.count * b.cols_in.count);
    if (l > 0) {
      allreduce(b.ax.c, l, true, b.rows_in.count * b.cols_in.count);
    } else {
      const double dx = f4 * b.x_rows.count * b.cols_in.count;
      add(Category::reduce_scatter, b.ax.c, l, true, dx, wire::reduce_scatter(dx, g[b.ax.c]));
    }
  }
  return out;
}

std::vector<std::int64_t> shard_nnz(const HostCsr& a, const std::vector<std::int64_t>& row_order,
                                    const std::vector<std::int64_t>& col_order, int R, int C) {
  const std::int64_t n = a.rows;
  GCNLAB_ASSERT(a.cols == n && static_cast<std::int64_t>(row_order.size()) == n &&
                static_cast<std::int64_t>(col_order.size()) == n);
  // block of each position along rows and columns
  auto blocks_of = [n](const std::vector<std::int64_t>& order, int parts) {
    std::vector<int> blk(static_cast<std::size_t>(n));
    for (int p = 0; p < parts; ++p) {
      const Range r = block_range(n, parts, p);
      for (std::int64_t q = r.first; q < r.first + r.count; ++q) blk[order[q]] = p;
    }
    return blk;
  };
  const auto rb = blocks_of(row_order, R), cb = blocks_of(col_order, C);
  std::vector<std::int64_t> nnz(static_cast<std::size_t>(R) * C, 0);
  for (std::int64_t r = 0; r < n; ++r)
    for (std::int64_t e = a.rowptr[r]; e < a.rowptr[r + 1]; ++e) ++nnz[rb[r] * C + cb[a.col[e]]];
  return nnz;
}

double max_over_mean(const std::vector<std::int64_t>& v) {
  if (v.empty()) return 1.0;
  const double sum = static_cast<double>(std::accumulate(v.begin(), v.end(), std::int64_t{0}));
  if (sum == 0) return 1.0;
  return static_cast<double>(*std::max_element(v.begin(), v.end())) / (sum / static_cast<double>(v.size()));
}

double shard_imbalance(const HostCsr& a_t, Permutation p, std::uint64_t seed, int R, int C) {
  const auto orders = make_orderings(a_t, p, seed);
  // A^(l) = Π_{l+1} Âᵀ Π_lᵀ: rows in ordering l+1, columns in ordering l.
  double worst = max_over_mean(shard_nnz(a_t, orders[ordering_id(p, 1)], orders[ordering_id(p, 0)], R, C));
  if (p.kind == Permutation::dual)
    worst = std::max(worst, max_over_mean(shard_nnz(a_t, orders[ordering_id(p, 2)], orders[ordering_id(p, 1)], R, C)));
  return worst;
}

}  // namespace gcnlab::plexus
