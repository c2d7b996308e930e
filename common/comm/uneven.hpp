#pragma once
// Uneven all-gather / reduce-scatter on a transport that has only the even
// collectives (NCCL): how to move blocks of counts[r] elements.
//   equal   — every block has the same size: the collective itself;
//   padded  — every block padded to the largest, m, in a staging buffer, then
//             the collective on p·m elements; chosen when the padding adds at
//             most max_padding of the payload. The extra bytes a rank receives
//             are counted (Tally::padding_bytes): all-gather (p-1)·m minus the
//             others' blocks, reduce-scatter (p-1)·(m - own block);
//   grouped — otherwise, one grouped broadcast (reduce) per block: no padding.

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <span>

namespace gcnlab {

struct UnevenPlan {
  enum class Kind { equal, padded, grouped } kind = Kind::equal;
  std::int64_t block = 0;                 // m, the largest block
  std::int64_t allgather_padding = 0;     // elements received beyond the others' blocks
  std::int64_t reduce_scatter_padding = 0;
};

inline UnevenPlan plan_uneven(std::span<const std::int64_t> counts, int me, double max_padding = 0.125) {
  UnevenPlan plan;
  const auto p = static_cast<std::int64_t>(counts.size());
  const std::int64_t total = std::accumulate(counts.begin(), counts.end(), std::int64_t{0});
  plan.block = counts.empty() ? 0 : *std::max_element(counts.begin(), counts.end());
  if (std::all_of(counts.begin(), counts.end(), [&](std::int64_t c) { return c == plan.block; })) return plan;
  const std::int64_t padding = p * plan.block - total;
  if (static_cast<double>(padding) > max_padding * static_cast<double>(total)) {
    plan.kind = UnevenPlan::Kind::grouped;
    return plan;
  }
  plan.kind = UnevenPlan::Kind::padded;
  plan.allgather_padding = (p - 1) * plan.block - (total - counts[static_cast<std::size_t>(me)]);
  plan.reduce_scatter_padding = (p - 1) * (plan.block - counts[static_cast<std::size_t>(me)]);
  return plan;
}

}  // namespace gcnlab
