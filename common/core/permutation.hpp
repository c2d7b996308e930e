#pragma once
// Random permutations drawn from the counter-based generator: the same
// permutation on every rank for the same (seed, stream), no communication.

#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

#include "common/core/rng.hpp"

namespace gcnlab {

// A uniformly random permutation of 0..n-1 (Fisher-Yates); `variant` selects
// independent permutations of the same seed.
inline std::vector<std::int64_t> random_permutation(std::int64_t n, std::uint64_t seed, std::uint64_t variant = 0) {
  std::vector<std::int64_t> p(static_cast<std::size_t>(n));
  std::iota(p.begin(), p.end(), std::int64_t{0});
  for (std::int64_t i = n - 1; i > 0; --i) {
    const auto j = static_cast<std::int64_t>(rng::key(seed, rng::stream(rng::Stream::permutation, variant), static_cast<std::uint64_t>(i), 0) %
                                             static_cast<std::uint64_t>(i + 1));
    std::swap(p[i], p[j]);
  }
  return p;
}

}  // namespace gcnlab
