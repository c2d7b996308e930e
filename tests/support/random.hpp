#pragma once
// Reproducible random test data.

#include <random>
#include <vector>

namespace gcnlab::test {

inline std::vector<float> random_vector(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> v(n);
  for (auto& x : v) x = u(gen);
  return v;
}

}  // namespace gcnlab::test
