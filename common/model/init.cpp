#include "common/model/init.hpp"

#include <cmath>

namespace gcnlab {

std::vector<float> glorot_block(std::uint64_t seed, int layer, std::int64_t fan_in, std::int64_t fan_out,
                                const Block& b) {
  const float a = std::sqrt(6.f / static_cast<float>(fan_in + fan_out));
  std::vector<float> w(b.rows * b.cols);
  for (std::int64_t i = 0; i < b.rows; ++i)
    for (std::int64_t j = 0; j < b.cols; ++j)
      w[i * b.cols + j] =
          (2.f * rng::uniform(seed, rng::stream(rng::Stream::weights, layer), b.row0 + i, b.col0 + j) - 1.f) * a;
  return w;
}

}  // namespace gcnlab
