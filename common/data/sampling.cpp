#include "common/data/sampling.hpp"

#include <algorithm>
#include <numeric>
#include <unordered_set>

#include "common/core/error.hpp"
#include "common/core/rng.hpp"

namespace gcnlab {

BlockRange Sample::restrict(BlockRange full) const {
  const auto lo = std::lower_bound(positions.begin(), positions.end(), full.first);
  const auto hi = std::lower_bound(lo, positions.end(), full.end());
  return {lo - positions.begin(), hi - lo};
}

std::span<const std::int64_t> sampled_positions(const Sample& s, BlockRange full) {
  const BlockRange r = s.restrict(full);
  return std::span<const std::int64_t>(s.positions).subspan(static_cast<std::size_t>(r.first),
                                                            static_cast<std::size_t>(r.count));
}

Sample uniform_sample(std::int64_t n, std::int64_t b, std::uint64_t seed, std::uint64_t step, int group) {
  GCNLAB_CHECK(b >= 1 && b <= n, "--batch-size must be in [1, {}] (the graph's vertices), got {}", n, b);
  Sample s;
  s.n = n;
  s.seed = seed, s.step = step, s.group = group;
  s.inclusion = n > 1 ? static_cast<double>(b - 1) / static_cast<double>(n - 1) : 1.0;
  if (b == n) {
    s.positions.resize(static_cast<std::size_t>(n));
    std::iota(s.positions.begin(), s.positions.end(), std::int64_t{0});
    return s;
  }
  // Floyd's algorithm: for j = n-B .. n-1 draw t uniform in [0, j] and take t,
  // or j when t is taken already. Every B-subset is equally likely, in O(B).
  const std::uint64_t key = rng::key(seed, rng::stream(rng::Stream::sample), step, static_cast<std::uint64_t>(group));
  std::unordered_set<std::int64_t> taken;
  taken.reserve(static_cast<std::size_t>(2 * b));
  for (std::int64_t j = n - b; j < n; ++j) {
    const std::uint64_t bits = rng::mix(key ^ static_cast<std::uint64_t>(j));
    const auto t = static_cast<std::int64_t>((static_cast<unsigned __int128>(bits) * static_cast<std::uint64_t>(j + 1)) >> 64);
    if (!taken.insert(t).second) taken.insert(j);
  }
  s.positions.assign(taken.begin(), taken.end());
  std::sort(s.positions.begin(), s.positions.end());
  return s;
}

HostCsr induced_block(const HostCsr& a, std::int64_t row0, std::int64_t col0, std::span<const std::int64_t> rows,
                      std::span<const std::int64_t> cols, double inclusion) {
  GCNLAB_ASSERT(inclusion > 0 && inclusion <= 1);
  // Phase 3's compact remapping: local column -> sample column (a map over the
  // block's columns, not over all n vertices).
  std::vector<std::int32_t> col_map(static_cast<std::size_t>(a.cols), -1);
  for (std::size_t j = 0; j < cols.size(); ++j) {
    const std::int64_t c = cols[j] - col0;
    GCNLAB_ASSERT(c >= 0 && c < a.cols);
    col_map[static_cast<std::size_t>(c)] = static_cast<std::int32_t>(j);
  }
  HostCsr out;
  out.rows = static_cast<std::int64_t>(rows.size());
  out.cols = static_cast<std::int64_t>(cols.size());
  out.rowptr.reserve(rows.size() + 1);
  for (const std::int64_t global_row : rows) {  // phase 2: the sampled rows
    const std::int64_t r = global_row - row0;
    GCNLAB_ASSERT(r >= 0 && r < a.rows);
    for (std::int64_t e = a.rowptr[r]; e < a.rowptr[r + 1]; ++e) {
      const std::int32_t c = col_map[static_cast<std::size_t>(a.col[e])];
      if (c < 0) continue;  // phase 3: the column's vertex is not sampled
      out.col.push_back(c);
      // Eq. 24: off-diagonal weights over p, self-loops kept
      out.val.push_back(global_row == col0 + a.col[e] ? a.val[e] : static_cast<float>(a.val[e] / inclusion));
    }
    out.rowptr.push_back(out.nnz());
  }
  return out;
}

HostCsr block_diagonal(std::span<const HostCsr> blocks) {
  HostCsr out;
  for (const HostCsr& b : blocks) {
    for (std::int64_t i = 0; i < b.rows; ++i) {
      for (std::int64_t k = b.rowptr[i]; k < b.rowptr[i + 1]; ++k) {
        out.col.push_back(out.cols + b.col[k]);
        out.val.push_back(b.val[k]);
      }
      out.rowptr.push_back(out.nnz());
    }
    out.rows += b.rows;
    out.cols += b.cols;
  }
  return out;
}

}  // namespace gcnlab
