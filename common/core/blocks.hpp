#pragma once
// Contiguous blocks of n items in p parts whose sizes differ by at most one
// (the first n mod p parts get the extra item), as CAGNET's block rows do
// when P does not divide n. Used for vertex blocks, feature blocks and shards.

#include <algorithm>
#include <cstdint>

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

}  // namespace gcnlab
