#pragma once
// Counter-based random numbers: every value is a pure function of
// (seed, stream, row, col). Weights, synthetic features and dropout masks are
// drawn per *global* element, so a run does not depend on the number of ranks
// or on how a strategy lays out its shards (DESIGN.md principle 4).
//
// The mixer is SplitMix64's finaliser (Steele, Lea, Flood 2014) applied along
// the key; it passes BigCrush as a counter-based generator. C++17-clean for nvcc.

#include <cstdint>

#include "common/core/hd.hpp"

namespace gcnlab::rng {

GCNLAB_HD std::uint64_t mix(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// The key is a chain along (seed, stream, row, col); its first three links are
// the row's key, so a pass over a row mixes once per element (row_key once,
// then uniform_in_row per column) and gets the same values as uniform().
GCNLAB_HD std::uint64_t row_key(std::uint64_t seed, std::uint64_t stream, std::uint64_t row) {
  return mix(mix(mix(seed) ^ stream) ^ row);
}

GCNLAB_HD std::uint64_t key(std::uint64_t seed, std::uint64_t stream, std::uint64_t row,
                            std::uint64_t col) {
  return mix(row_key(seed, stream, row) ^ col);
}

// Uniform in [0, 1) with 24 random bits (exact in float), from a row key.
GCNLAB_HD float uniform_in_row(std::uint64_t row_key, std::uint64_t col) {
  return static_cast<float>(mix(row_key ^ col) >> 40) * (1.0f / 16777216.0f);
}

GCNLAB_HD float uniform(std::uint64_t seed, std::uint64_t stream, std::uint64_t row,
                        std::uint64_t col) {
  return uniform_in_row(row_key(seed, stream, row), col);
}

// Uniform in [0, 1) with 53 random bits.
GCNLAB_HD double uniform_double(std::uint64_t seed, std::uint64_t stream, std::uint64_t row,
                                std::uint64_t col) {
  return static_cast<double>(key(seed, stream, row, col) >> 11) * (1.0 / 9007199254740992.0);
}

// Named streams keep independent uses of the same seed apart.
enum Stream : std::uint64_t {
  kWeights = 0x100,      // + layer
  kFeatures = 0x200,     // synthetic features
  kDropout = 0x300,      // + epoch * 64 + layer
  kGraph = 0x400,        // generators' edges
  kLabels = 0x500,       // generators' labels and splits
  kPermutation = 0x600,  // random vertex permutations
  kSample = 0x700,       // mini-batch vertex samples (common/data/sampling.hpp)
};

}  // namespace gcnlab::rng
