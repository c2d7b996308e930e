#include "algorithms/plexus-3d/decomposition.hpp"

#include <algorithm>
#include <numeric>

#include "common/comm/wire.hpp"
#include "common/core/error.hpp"
#include "common/core/permutation.hpp"

namespace gcnlab::plexus {

Permutation parse_permutation(const std::string& text) {
  if (text == "none") return Permutation::none;
  if (text == "single") return Permutation::single;
  if (text == "double") return Permutation::dual;
  fail("unknown --permutation '{}' (expected none, single or double)", text);
}

std::string to_string(Permutation p) {
  switch (p) {
    case Permutation::none: return "none";
    case Permutation::single: return "single";
    case Permutation::dual: return "double";
  }
  return "?";
}

std::vector<std::int64_t> row_block_elements(std::int64_t rows, int p, std::int64_t width) {
  std::vector<std::int64_t> s(p);
  for (int k = 0; k < p; ++k) s[k] = block_range(rows, p, k).count * width;
  return s;
}

int ordering_id(Permutation p, int l) { return p == Permutation::dual ? l % 2 : 0; }

std::vector<std::array<int, 2>> adjacency_versions(Permutation p) {
  std::vector<std::array<int, 2>> versions;
  for (int l = 0; l < 2; ++l) {
    const std::array<int, 2> v{ordering_id(p, l + 1), ordering_id(p, l)};
    if (std::find(versions.begin(), versions.end(), v) == versions.end()) versions.push_back(v);
  }
  return versions;
}

namespace {

// Splits v[lo, hi) (heaviest first) into two halves of equal count (±1) and
// near-equal weight, in random order, and recurses; both halves stay heaviest first.
void bisect(std::vector<std::int64_t>& v, std::size_t lo, std::size_t hi, const std::vector<std::int64_t>& weight,
            const std::vector<std::uint64_t>& key, std::uint64_t salt) {
  if (hi - lo <= 16) {  // a leaf: random order
    std::sort(v.begin() + lo, v.begin() + hi, [&](std::int64_t a, std::int64_t b) { return key[a] < key[b]; });
    return;
  }
  std::vector<std::int64_t> half[2];
  const std::size_t room[2] = {(hi - lo + 1) / 2, (hi - lo) / 2};
  std::int64_t load[2] = {0, 0};
  for (std::size_t i = lo; i < hi; ++i) {
    int h = load[0] <= load[1] ? 0 : 1;
    if (half[h].size() == room[h]) h = 1 - h;
    load[h] += weight[v[i]];
    half[h].push_back(v[i]);
  }
  const int first = static_cast<int>(rng::key(salt, lo, hi, 0) & 1);
  std::copy(half[first].begin(), half[first].end(), v.begin() + lo);
  std::copy(half[1 - first].begin(), half[1 - first].end(), v.begin() + lo + half[first].size());
  const std::size_t mid = lo + half[first].size();
  bisect(v, lo, mid, weight, key, salt);
  bisect(v, mid, hi, weight, key, salt);
}

}  // namespace

std::vector<std::int64_t> balanced_permutation(const std::vector<std::int64_t>& weight, std::uint64_t seed,
                                               std::uint64_t variant) {
  const auto n = static_cast<std::int64_t>(weight.size());
  const std::uint64_t stream = rng::kPermutation + 16 + variant;
  std::vector<std::uint64_t> key(static_cast<std::size_t>(n));
  for (std::int64_t v = 0; v < n; ++v) key[v] = rng::key(seed, stream, static_cast<std::uint64_t>(v), 0);
  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), std::int64_t{0});
  std::sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
    return weight[a] != weight[b] ? weight[a] > weight[b] : key[a] < key[b];
  });
  bisect(order, 0, order.size(), weight, key, rng::key(seed, stream, 1, 1));
  return order;
}

std::vector<std::vector<std::int64_t>> make_orderings(const HostCsr& a, Permutation p, std::uint64_t seed) {
  const std::int64_t n = a.rows;
  if (p == Permutation::none) {
    std::vector<std::int64_t> id(static_cast<std::size_t>(n));
    std::iota(id.begin(), id.end(), std::int64_t{0});
    return {std::move(id)};
  }
  std::vector<std::int64_t> weight(static_cast<std::size_t>(n), 0);
  for (std::int64_t r = 0; r < n; ++r) {
    weight[r] += a.rowptr[r + 1] - a.rowptr[r];
    for (std::int64_t e = a.rowptr[r]; e < a.rowptr[r + 1]; ++e) ++weight[a.col[e]];
  }
  if (p == Permutation::single) return {balanced_permutation(weight, seed, 0)};
  return {balanced_permutation(weight, seed, 0), balanced_permutation(weight, seed, 1)};  // P_c, P_r
}

namespace {
Range sub_range(Range r, int p, int k) {
  Range s = block_range(r.count, p, k);
  s.first += r.first;
  return s;
}
}  // namespace

InputBlock input_block(std::int64_t n, const std::vector<std::int64_t>& dims, const Grid& g, const Coords& k, int l) {
  const Axes ax = layer_axes(l);
  InputBlock b{block_range(n, g[ax.a], k[ax.a]), block_range(dims[l], g[ax.b], k[ax.b])};
  if (l == 0) b.rows = sub_range(b.rows, g[ax.c], k[ax.c]);  // sharded further over c (Sec. 3.1)
  return b;
}

LayerBlocks layer_blocks(std::int64_t n, const std::vector<std::int64_t>& dims, const Grid& g, const Coords& k, int l) {
  LayerBlocks b;
  b.ax = layer_axes(l);
  const auto [a, bb, c] = b.ax;
  b.rows_in = block_range(n, g[a], k[a]);
  b.x_rows = l == 0 ? sub_range(b.rows_in, g[c], k[c]) : b.rows_in;
  b.rows_out = block_range(n, g[c], k[c]);
  b.cols_in = block_range(dims[l], g[bb], k[bb]);
  b.cols_out = block_range(dims[l + 1], g[a], k[a]);
  b.w_rows = sub_range(b.cols_in, g[c], k[c]);
  return b;
}

std::vector<Collective> epoch_collectives(std::int64_t n, const std::vector<std::int64_t>& dims, const Grid& g,
                                          const Coords& k, bool learn_features) {
  constexpr double f4 = sizeof(float);
  const int L = static_cast<int>(dims.size()) - 1;
  std::vector<Collective> out;
  auto add = [&](Category cat, int axis, int l, bool bwd, double payload, double wire) {
    if (g[axis] > 1) out.push_back({cat, axis, l, bwd, wire, payload});
  };
  auto allreduce = [&](int axis, int l, bool bwd, double m) {
    add(Category::allreduce, axis, l, bwd, m, wire::allreduce(m, g[axis]));
  };
  for (int l = 0; l < L; ++l) {  // forward, Alg. 1
    const LayerBlocks b = layer_blocks(n, dims, g, k, l);
    if (l == 0)
      add(Category::allgather, b.ax.c, l, false, f4 * b.x_rows.count * b.cols_in.count,
          f4 * (b.rows_in.count - b.x_rows.count) * b.cols_in.count);
    allreduce(b.ax.a, l, false, f4 * b.rows_out.count * b.cols_in.count);
    add(Category::allgather, b.ax.c, l, false, f4 * b.w_rows.count * b.cols_out.count,
        f4 * (b.cols_in.count - b.w_rows.count) * b.cols_out.count);
    allreduce(b.ax.b, l, false, f4 * b.rows_out.count * b.cols_out.count);
  }
  for (int l = L - 1; l >= 0; --l) {  // backward, Alg. 2
    const LayerBlocks b = layer_blocks(n, dims, g, k, l);
    const double dw = f4 * b.w_rows.count * b.cols_out.count;
    add(Category::reduce_scatter, b.ax.c, l, true, dw, wire::reduce_scatter(dw, g[b.ax.c]));
    if (l == 0 && !learn_features) continue;
    allreduce(b.ax.a, l, true, f4 * b.rows_out.count * b.cols_in.count);
    if (l > 0) {
      allreduce(b.ax.c, l, true, f4 * b.rows_in.count * b.cols_in.count);
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
  if (p == Permutation::dual)
    worst = std::max(worst, max_over_mean(shard_nnz(a_t, orders[ordering_id(p, 2)], orders[ordering_id(p, 1)], R, C)));
  return worst;
}

}  // namespace gcnlab::plexus
