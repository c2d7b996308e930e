#pragma once
// Counter-based random numbers: every value is a pure function of
// (seed, stream, row, col). Weights, synthetic features and dropout masks are
// drawn per *global* element, so a run does not depend on the number of ranks
// or on how a strategy lays out its shards (docs/design.md principle 4).
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
// Converted through int32 (the same value: 24 bits are exact either way):
// x86 converts a vector of int32 to float in one instruction, but a uint64
// only one element at a time before AVX-512, which made dropout a quarter of
// an epoch on AVX2.
GCNLAB_HD float uniform_in_row(std::uint64_t row_key, std::uint64_t col) {
  return static_cast<float>(static_cast<std::int32_t>(mix(row_key ^ col) >> 40)) * (1.0f / 16777216.0f);
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

// Named streams keep independent uses of the same seed apart. A use's stream
// is a hash of its name and its indices, stream(Stream::dropout, step, layer),
// never an offset from another name: kDropout + 64 * epoch + layer once reached
// kGraph at epoch 4 (the mask of column 2e reused SBM's edge draws) and
// kLabels at epoch 8 (issue 33). The indices of a name are fixed by its use
// (unused ones 0); tests/unit/test_model.cpp enumerates the streams of a long
// run and checks that no two coincide.
enum class Stream : std::uint64_t {
  weights = 1,           // (layer)
  features,              // synthetic features
  class_signs,           // SBM's per-(class, column) feature signal
  dropout,               // (step, layer): the epoch, or the mini-batch step
  graph,                 // generators' edges
  labels,                // generators' labels
  split,                 // random train/val/test splits
  permutation,           // (variant): uniformly random vertex permutations
  balanced_permutation,  // (variant): weight-balanced bisections (partitioners/permutation.cpp)
  sample,                // mini-batch vertex samples (common/data/sampling.hpp)
  attention_dropout,     // (step, layer): GAT's dropout on attention coefficients (common/backend/edge_ops.hpp)
};

GCNLAB_HD std::uint64_t stream(Stream name, std::uint64_t i = 0, std::uint64_t j = 0) {
  return mix(mix(mix(static_cast<std::uint64_t>(name)) ^ i) ^ j);
}

}  // namespace gcnlab::rng
