#pragma once
// Contiguous block partition of n items into p parts whose sizes differ by at
// most one (the first n mod p parts get the extra item), as CAGNET's block
// rows do when P does not divide n.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "common/core/blocks.hpp"
#include "common/core/error.hpp"
#include "common/data/graph.hpp"

namespace gcnlab {

// offsets[i] .. offsets[i+1] is part i; offsets has p + 1 entries.
inline std::vector<std::int64_t> block_offsets(std::int64_t n, int p) {
  std::vector<std::int64_t> off(p + 1, 0);
  for (int i = 0; i < p; ++i) off[i + 1] = block_range(n, p, i).end();
  return off;
}

// The k block rows a strategy cuts: the partition's parts when the graph was
// partitioned, else equal blocks of ordering 0.
inline std::vector<std::int64_t> row_blocks(const Graph& g, int k) {
  const GraphLayout& layout = g.layout();
  if (layout.parts == 0) return block_offsets(g.n(), k);
  GCNLAB_CHECK(layout.parts == k,
               "the graph was partitioned into {} parts (--partitioner {}) but this strategy cuts {} block rows; "
               "prepare it with --parts {}",
               layout.parts, layout.partitioner, k, k);
  return layout.blocks;
}

// Rows of the largest and smallest block.
inline std::pair<std::int64_t, std::int64_t> block_extent(const std::vector<std::int64_t>& off) {
  std::int64_t lo = off.size() > 1 ? off[1] - off[0] : 0, hi = lo;
  for (std::size_t k = 1; k + 1 < off.size(); ++k) {
    lo = std::min(lo, off[k + 1] - off[k]);
    hi = std::max(hi, off[k + 1] - off[k]);
  }
  return {lo, hi};
}

}  // namespace gcnlab
