#pragma once
// Glorot-uniform initialisation (Glorot & Bengio 2010), drawn per *global*
// element (seed, layer, i, j), so any block of W is the same slice whatever
// the grid: U(-a, a), a = sqrt(6 / (f_in + f_out)).

#include <cstdint>
#include <vector>

#include "common/core/rng.hpp"

namespace gcnlab {

struct Block {
  std::int64_t row0 = 0, rows = 0, col0 = 0, cols = 0;
};

std::vector<float> glorot_block(std::uint64_t seed, int layer, std::int64_t fan_in, std::int64_t fan_out,
                                const Block& b);

}  // namespace gcnlab
