#include "backends/row_chunks.hpp"

#include <algorithm>

#include "common/core/error.hpp"

namespace gcnlab {

namespace {

constexpr std::int64_t kWarp = RowChunks::kWarp;

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// The lane-steps of a long row of `edges` edges: each chunk a warp's steps over its
// elements (one at least), and one for the combine of its results.
std::int64_t long_row_cost(std::int64_t edges, std::int64_t chunk, int heads) {
  const std::int64_t full = edges / chunk, rest = edges % chunk;
  const std::int64_t steps = full * std::max<std::int64_t>(1, ceil_div(chunk * heads, kWarp)) +
                             (rest ? std::max<std::int64_t>(1, ceil_div(rest * heads, kWarp)) : 0);
  return kWarp * (steps + 1);
}

}  // namespace

RowChunks plan_row_chunks(std::span<const std::int64_t> rowptr, int heads) {
  GCNLAB_ASSERT(!rowptr.empty() && heads >= 1);
  RowChunks p;
  const auto stored = static_cast<std::int64_t>(rowptr.size()) - 1;
  if (heads > kWarp || kWarp % heads != 0) {
    p.short_edges = rowptr.back() - rowptr.front();  // every row short: a warp per row
    return p;
  }
  p.chunk = kWarp * RowChunks::kSteps / heads;
  // The lanes whose walk occupies the fewest lane-steps: a short row L lanes for
  // max(1, ceil(e H / L)) steps, a long row its chunks' warps; ties to more lanes.
  std::int64_t best = -1;
  for (int lanes = heads; lanes <= kWarp; lanes *= 2) {
    const std::int64_t short_edges = std::int64_t{lanes} * RowChunks::kSteps / heads;
    std::int64_t cost = 0;
    for (std::int64_t s = 0; s < stored; ++s) {
      const std::int64_t e = rowptr[s + 1] - rowptr[s];
      cost += e <= short_edges ? lanes * std::max<std::int64_t>(1, ceil_div(e * heads, lanes))
                               : long_row_cost(e, p.chunk, heads);
    }
    if (best < 0 || cost <= best) best = cost, p.lanes = lanes, p.short_edges = short_edges;
  }
  for (std::int64_t s = 0; s < stored; ++s) {
    const std::int64_t edges = rowptr[s + 1] - rowptr[s];
    if (edges <= p.short_edges) continue;
    const std::int64_t n = ceil_div(edges, p.chunk);
    p.chunk_row.insert(p.chunk_row.end(), static_cast<std::size_t>(n), static_cast<std::int32_t>(p.rows.size()));
    p.rows.push_back(s);
    p.first.push_back(p.first.back() + n);
  }
  return p;
}

}  // namespace gcnlab
