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

namespace {

int third(int a, int b) { return 3 - a - b; }

// The axes of every layer and matrix: a convolution takes its input (rows a,
// columns b) to (rows c, columns a); a linear layer takes (rows c, columns b)
// to (rows c, columns a).
struct Walk {
  std::vector<Axes> layers;
  std::vector<MatrixAxes> matrices;
};

Walk walk(const ModelShape& m) {
  Walk w;
  MatrixAxes in = m.layers() > 0 && m.kind(0) == LayerKind::linear ? MatrixAxes{0, 2} : MatrixAxes{0, 1};
  if (m.attention) in.minor = 2;  // GAT: rows over x, then z; columns over y on every layer
  for (int l = 0; l < m.layers(); ++l) {
    w.matrices.push_back(in);
    const int other = third(in.rows, in.cols);
    if (m.attention) {  // (a, b, c) -> (c, b, a)
      w.layers.push_back({in.rows, in.cols, in.minor});
      in = {in.minor, in.cols, in.rows};
    } else if (m.kind(l) == LayerKind::conv) {
      w.layers.push_back({in.rows, in.cols, other});
      in = {other, in.rows};
    } else {
      w.layers.push_back({other, in.cols, in.rows});
      in = {in.rows, other};
    }
  }
  w.matrices.push_back(in);
  return w;
}

}  // namespace

Axes axes_of(const ModelShape& m, int l) { return walk(m).layers.at(static_cast<std::size_t>(l)); }

MatrixAxes matrix_axes(const ModelShape& m, int l) { return walk(m).matrices.at(static_cast<std::size_t>(l)); }

InputBlock input_block(const RowSplit& rows, const ModelShape& m, const Grid& g, const Coords& k, int l) {
  const MatrixAxes ax = matrix_axes(m, l);
  InputBlock b{rows.block(g[ax.rows], k[ax.rows]), block_range(m.dims[l], g[ax.cols], k[ax.cols])};
  if (ax.minor >= 0) {
    b.rows = rows.sub_block(g[ax.rows], k[ax.rows], g[ax.minor], k[ax.minor]);
  } else if (l == 0 && m.kind(0) == LayerKind::conv) {  // sharded further over c (Sec. 3.1)
    const Axes a = axes_of(m, 0);
    b.rows = rows.sub_block(g[a.a], k[a.a], g[a.c], k[a.c]);
  }
  return b;
}

LayerBlocks layer_blocks(const RowSplit& rows, const ModelShape& m, const Grid& g, const Coords& k, int l) {
  LayerBlocks b;
  b.ax = axes_of(m, l);
  const auto [a, bb, c] = b.ax;
  const bool conv = m.kind(l) == LayerKind::conv;
  b.rows_in = conv ? rows.block(g[a], k[a]) : rows.block(g[c], k[c]);
  // layer 0's input sharded further over c (Sec. 3.1); GAT's every input
  b.x_rows = (l == 0 && conv) || m.attention ? rows.sub_block(g[a], k[a], g[c], k[c]) : b.rows_in;
  b.rows_out = rows.block(g[c], k[c]);
  b.cols_in = block_range(m.dims[l], g[bb], k[bb]);
  if (m.attention) {  // the geometry of GAT's matrices (decomposition.hpp)
    b.cols_out = block_range(m.dims[l + 1], g[bb], k[bb]);
    b.w_rows = b.cols_in;
    b.w_cols = {0, m.dims[l + 1] * m.averaged(l)};
    return b;
  }
  b.cols_out = block_range(m.dims[l + 1], g[a], k[a]);
  b.w_rows = sub_range(b.cols_in, g[c], k[c]);
  b.w_cols = b.cols_out;
  return b;
}

int grid_rank(const Grid& g, const Coords& k) { return (k[2] * g[0] + k[0]) * g[1] + k[1]; }

Coords grid_coords(const Grid& g, int rank) { return {(rank / g[1]) % g[0], rank % g[1], rank / (g[0] * g[1])}; }

Reshard residual_reshard(const RowSplit& rows, const ModelShape& m, const Grid& g, const Coords& k, int from, int to) {
  const int p = g[0] * g[1] * g[2];
  std::vector<Rect> src, dst;
  for (int r = 0; r < p; ++r) {
    const Coords c = grid_coords(g, r);
    const InputBlock f = input_block(rows, m, g, c, from), t = input_block(rows, m, g, c, to);
    src.push_back({f.rows, f.cols});
    dst.push_back({t.rows, t.cols});
  }
  return Reshard(src, dst, grid_rank(g, k));
}

Reshard align_reshard(const RowSplit& rows, const ModelShape& m, const Grid& g, const Coords& k, int l,
                      bool backward) {
  const int p = g[0] * g[1] * g[2];
  std::vector<Rect> input, aggregated;
  for (int r = 0; r < p; ++r) {
    const Coords c = grid_coords(g, r);
    const InputBlock x = input_block(rows, m, g, c, l), z = input_block(rows, m, g, c, l + 1);
    input.push_back({x.rows, x.cols});
    aggregated.push_back({z.rows, x.cols});
  }
  return backward ? Reshard(aggregated, input, grid_rank(g, k)) : Reshard(input, aggregated, grid_rank(g, k));
}

std::vector<Collective> step_collectives(const RowSplit& rows, const ModelShape& m, const Grid& g, const Coords& k,
                                         int l, Step step, double sum_element_bytes) {
  constexpr double f4 = sizeof(float);
  std::vector<Collective> out;
  const bool bwd = step == Step::aggregate_backward || step == Step::linear_backward ||
                   step == Step::linear_backward_dx || step == Step::column_sums;
  auto add = [&](Category cat, int axis, double payload, double wire) {
    if (axis < 0 || g[axis] > 1) out.push_back({cat, axis, l, bwd, wire, payload});
  };
  auto allreduce = [&](int axis, double elements, double element_bytes) {
    const double bytes = element_bytes * elements;
    add(Category::allreduce, axis, bytes, wire::allreduce(bytes, g[axis]));
  };
  const LayerBlocks b = layer_blocks(rows, m, g, k, l);
  switch (step) {
    case Step::aggregate_forward:  // Alg. 1 lines 3-5: F gathered over c (layer 0), H = A F reduced over a
      if (l == 0)
        add(Category::allgather, b.ax.c, f4 * b.x_rows.count * b.cols_in.count,
            f4 * (b.rows_in.count - b.x_rows.count) * b.cols_in.count);
      allreduce(b.ax.a, b.rows_out.count * b.cols_in.count, sum_element_bytes);
      break;
    case Step::linear:  // lines 7-9: W gathered over c, Q = H W reduced over b
      add(Category::allgather, b.ax.c, f4 * b.w_rows.count * b.cols_out.count,
          f4 * (b.cols_in.count - b.w_rows.count) * b.cols_out.count);
      allreduce(b.ax.b, b.rows_out.count * b.cols_out.count, sum_element_bytes);
      break;
    case Step::linear_backward:  // Alg. 2 lines 2-3: dW reduce-scattered over c
    case Step::linear_backward_dx: {  // and lines 5-6: dH = dQ Wᵀ reduced over a
      const double dw = f4 * b.w_rows.count * b.cols_out.count;
      add(Category::reduce_scatter, b.ax.c, dw, wire::reduce_scatter(dw, g[b.ax.c]));
      if (step == Step::linear_backward_dx) allreduce(b.ax.a, b.rows_out.count * b.cols_in.count, sum_element_bytes);
      break;
    }
    case Step::aggregate_backward:  // lines 7-8: dF = Aᵀ dH reduced over c (layer 0: reduce-scattered)
      if (l > 0) {
        allreduce(b.ax.c, b.rows_in.count * b.cols_in.count, sum_element_bytes);
      } else {
        const double dx = f4 * b.x_rows.count * b.cols_in.count;
        add(Category::reduce_scatter, b.ax.c, dx, wire::reduce_scatter(dx, g[b.ax.c]));
      }
      break;
    case Step::row_sums:  // RMSNorm's row sums or row dots over Z's columns (Eq. 29)
      allreduce(b.ax.a, b.rows_out.count, f4);
      break;
    case Step::column_sums:  // dL/dγ over Z's rows
      allreduce(b.ax.c, b.cols_out.count, f4);
      break;
  }
  return out;
}

Collective reshard_collective(const RowSplit& rows, const ModelShape& m, const Grid& g, const Coords& k, int l,
                              bool backward) {
  const Reshard r = residual_reshard(rows, m, g, k, backward ? l + 1 : l, backward ? l : l + 1);
  return {Category::alltoall, -1, l, backward, r.wire_bytes(), r.sent_bytes()};
}

std::vector<Collective> epoch_collectives(const RowSplit& rows, const ModelShape& m, const Grid& g, const Coords& k,
                                          bool learn_features, double sum_element_bytes) {
  const int L = m.layers();
  std::vector<Collective> out;
  auto run = [&](int l, Step s) {
    for (const Collective& c : step_collectives(rows, m, g, k, l, s, sum_element_bytes)) out.push_back(c);
  };
  auto reshard = [&](int l, bool backward) {
    if (g[0] * g[1] * g[2] > 1) out.push_back(reshard_collective(rows, m, g, k, l, backward));
  };
  for (int l = 0; l < L; ++l) {  // forward, Alg. 1
    if (m.kind(l) == LayerKind::conv) run(l, Step::aggregate_forward);
    run(l, Step::linear);
    if (m.norm_after(l)) run(l, Step::row_sums), reshard(l, false);  // RMSNorm's row sums (Eq. 29), the residual
  }
  for (int l = L - 1; l >= 0; --l) {  // backward, Alg. 2
    if (m.norm_after(l)) run(l, Step::row_sums), run(l, Step::column_sums);  // row dots and dL/dγ
    const bool dx = l > 0 || learn_features;
    run(l, dx ? Step::linear_backward_dx : Step::linear_backward);
    if (!dx) continue;
    if (m.kind(l) == LayerKind::conv) run(l, Step::aggregate_backward);  // a linear layer's dX is dH
    if (m.norm_after(l)) reshard(l, true);
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
