#include "common/comm/process_grid.hpp"

#include <algorithm>
#include <charconv>
#include <climits>
#include <numeric>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace gcnlab {

ProcessGrid::ProcessGrid(Communicator& world, std::vector<int> dims, std::vector<std::string> names)
    : world_(world), dims_(std::move(dims)), names_(std::move(names)) {
  GCNLAB_ASSERT(dims_.size() == names_.size() && !dims_.empty() && dims_.size() <= 8);
  long long product = 1;
  for (int d : dims_) {
    GCNLAB_CHECK(d >= 1, "grid {} has a dimension < 1", format_grid(dims_));
    product *= d;
  }
  GCNLAB_CHECK(product == world_.size(), "grid {} has {} processes but the job has {} ranks",
               format_grid(dims_), product, world_.size());
  coords_ = coords_of(world_.rank());

  // One split per non-empty subset of axes: color = the coordinates *outside*
  // the subset (ranks that share them form the group), key = rank.
  const unsigned nsubsets = 1u << dims_.size();
  for (unsigned mask = 1; mask < nsubsets; ++mask) {
    int color = 0;
    for (int a = 0; a < ndims(); ++a) {
      if (mask & (1u << a)) continue;
      color = color * dims_[a] + coords_[a];
    }
    groups_[mask] = world_.split(color, world_.rank());
  }
}

int ProcessGrid::axis_index(const std::string& axis) const {
  for (int a = 0; a < ndims(); ++a)
    if (names_[a] == axis) return a;
  fail("internal error: grid has no axis '{}'", axis);
}

unsigned ProcessGrid::mask_of(const std::vector<std::string>& axes) const {
  unsigned mask = 0;
  for (const auto& a : axes) mask |= 1u << axis_index(a);
  GCNLAB_ASSERT(mask != 0);
  return mask;
}

Communicator& ProcessGrid::along(const std::vector<std::string>& axes) const {
  return *groups_.at(mask_of(axes));
}

int ProcessGrid::rank_of(const std::vector<int>& coords) const {
  int r = 0;
  for (int a = 0; a < ndims(); ++a) r = r * dims_[a] + coords[a];
  return r;
}

std::vector<int> ProcessGrid::coords_of(int rank) const {
  std::vector<int> c(dims_.size());
  for (int a = ndims() - 1; a >= 0; --a) {
    c[a] = rank % dims_[a];
    rank /= dims_[a];
  }
  return c;
}

std::string ProcessGrid::shape() const { return format_grid(dims_); }

std::vector<int> parse_grid(const std::string& text) {
  std::vector<int> dims;
  std::size_t start = 0;
  while (true) {
    const std::size_t x = text.find('x', start);
    const std::string part = text.substr(start, x == std::string::npos ? std::string::npos : x - start);
    int v = 0;
    auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    GCNLAB_CHECK(!part.empty() && ec == std::errc() && ptr == part.data() + part.size(),
                 "malformed --grid '{}' (expected e.g. 4, 2x3 or 2x2x2)", text);
    GCNLAB_CHECK(v >= 1, "--grid '{}' has a dimension < 1", text);
    dims.push_back(v);
    if (x == std::string::npos) break;
    start = x + 1;
  }
  return dims;
}

std::string format_grid(const std::vector<int>& dims) { return fmt::format("{}", fmt::join(dims, "x")); }

std::vector<int> default_grid(int p, int ndims) {
  std::vector<int> best;
  int best_spread = INT_MAX;
  for (int a = p; a >= 1; --a) {
    if (p % a) continue;
    if (ndims == 2) {
      const int b = p / a;
      if (a >= b && a - b < best_spread) best = {a, b}, best_spread = a - b;
      continue;
    }
    for (int b = p / a; b >= 1; --b) {
      if ((p / a) % b) continue;
      const int c = p / a / b;
      const int spread = std::max({a, b, c}) - std::min({a, b, c});
      if (a >= b && b >= c && spread < best_spread) best = {a, b, c}, best_spread = spread;
    }
  }
  return best;
}

}  // namespace gcnlab
