#pragma once
// Contiguous blocks of n items in p parts whose sizes differ by at most one
// (the first n mod p parts get the extra item), as CAGNET's block rows do
// when P does not divide n. Used for vertex blocks, feature blocks and shards.

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace gcnlab {

// Part k: [first, first + count).
struct BlockRange {
  std::int64_t first = 0, count = 0;
  std::int64_t end() const { return first + count; }
};

inline BlockRange block_range(std::int64_t n, int p, int k) {
  const std::int64_t base = n / p, extra = n % p;
  return {k * base + std::min<std::int64_t>(k, extra), base + (k < extra ? 1 : 0)};
}

// The part of block_range(n, p, .) that holds item i (0 <= i < n).
inline int block_of(std::int64_t n, int p, std::int64_t i) {
  const std::int64_t base = n / p, extra = n % p, wide = extra * (base + 1);  // the first `extra` parts hold base + 1
  return static_cast<int>(i < wide ? i / (base + 1) : extra + (i - wide) / base);
}

// The p + 1 boundaries of block_range's parts: offsets[k] .. offsets[k+1] is part k.
inline std::vector<std::int64_t> block_offsets(std::int64_t n, int p) {
  std::vector<std::int64_t> off(p + 1, 0);
  for (int k = 0; k < p; ++k) off[k + 1] = block_range(n, p, k).end();
  return off;
}

// Rows of the smallest and the largest block of `off` (any boundaries, not only block_offsets').
inline std::pair<std::int64_t, std::int64_t> block_extent(const std::vector<std::int64_t>& off) {
  std::int64_t lo = off.size() > 1 ? off[1] - off[0] : 0, hi = lo;
  for (std::size_t k = 1; k + 1 < off.size(); ++k) {
    lo = std::min(lo, off[k + 1] - off[k]);
    hi = std::max(hi, off[k + 1] - off[k]);
  }
  return {lo, hi};
}

}  // namespace gcnlab
