#include "partitioners/partitioner.hpp"

#include <numeric>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/core/error.hpp"
#include "common/core/rng.hpp"

namespace gcnlab {

std::vector<std::string> partitioner_names() { return {"block", "random"}; }

std::vector<std::int64_t> vertex_order(const std::string& partitioner, std::int64_t n, std::uint64_t seed) {
  std::vector<std::int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  if (partitioner == "block") return order;
  if (partitioner == "random") {
    // Fisher-Yates with counter-based draws: the same permutation on every rank.
    for (std::int64_t i = n - 1; i > 0; --i) {
      const auto j = static_cast<std::int64_t>(rng::key(seed, rng::kPermutation, i, 0) % static_cast<std::uint64_t>(i + 1));
      std::swap(order[i], order[j]);
    }
    return order;
  }
  fail("unknown --partitioner '{}' (available: {})", partitioner, fmt::join(partitioner_names(), ", "));
}

}  // namespace gcnlab
