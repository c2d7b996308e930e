#pragma once
// Contiguous block partition of n items into p parts whose sizes differ by at
// most one (the first n mod p parts get the extra item), as CAGNET's block
// rows do when P does not divide n.

#include <cstdint>
#include <vector>

namespace gcnlab {

// offsets[i] .. offsets[i+1] is part i; offsets has p + 1 entries.
inline std::vector<std::int64_t> block_offsets(std::int64_t n, int p) {
  std::vector<std::int64_t> off(p + 1, 0);
  for (int i = 0; i < p; ++i) off[i + 1] = off[i] + n / p + (i < n % p ? 1 : 0);
  return off;
}

}  // namespace gcnlab
