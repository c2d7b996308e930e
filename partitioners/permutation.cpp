#include "partitioners/permutation.hpp"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "common/core/error.hpp"
#include "common/core/permutation.hpp"
#include "common/core/rng.hpp"

namespace gcnlab {

std::vector<Permutation> all_permutations() {
  return {Permutation::none,
          Permutation::single,
          Permutation::dual,
          {Permutation::single, Permutation::balanced},
          {Permutation::dual, Permutation::balanced}};
}

std::string to_string(Permutation p) {
  const char* kind = p.kind == Permutation::none ? "none" : p.kind == Permutation::single ? "single" : "double";
  return p.kind != Permutation::none && p.draw == Permutation::balanced ? fmt::format("{}-balanced", kind) : kind;
}

Permutation parse_permutation(const std::string& text) {
  for (const Permutation p : all_permutations())
    if (to_string(p) == text) return p;
  fail("unknown --permutation '{}' (expected none, single, double — uniformly random, as Plexus Sec. 5.1 — or "
       "single-balanced, double-balanced)", text);
}

int ordering_id(Permutation p, int l) { return p.kind == Permutation::dual ? l % 2 : 0; }

std::vector<std::array<int, 2>> adjacency_versions(Permutation p) {
  std::vector<std::array<int, 2>> versions;
  for (int l = 0; l < 2; ++l) {
    const std::array<int, 2> v{ordering_id(p, l + 1), ordering_id(p, l)};
    if (std::find(versions.begin(), versions.end(), v) == versions.end()) versions.push_back(v);
  }
  return versions;
}

namespace {

// Plexus's uniform permutations: streams apart from the random partitioner's (variant 0).
constexpr std::uint64_t kUniformVariant = 4;

// Splits v[lo, hi) (heaviest first) into two halves of equal count (±1) and
// near-equal weight, in random order, and recurses; both halves stay heaviest first.
void bisect(std::vector<std::int64_t>& v, std::size_t lo, std::size_t hi, const std::vector<std::int64_t>& weight,
            const std::vector<std::uint64_t>& key, std::uint64_t salt) {
  if (hi - lo <= 16) {  // a leaf: random order
    std::sort(v.begin() + lo, v.begin() + hi, [&](std::int64_t a, std::int64_t b) { return key[a] < key[b]; });
    return;
  }
  std::vector<std::int64_t> half[2];
  const std::size_t room[2] = {(hi - lo + 1) / 2, (hi - lo) / 2};
  std::int64_t load[2] = {0, 0};
  for (std::size_t i = lo; i < hi; ++i) {
    int h = load[0] <= load[1] ? 0 : 1;
    if (half[h].size() == room[h]) h = 1 - h;
    load[h] += weight[v[i]];
    half[h].push_back(v[i]);
  }
  const int first = static_cast<int>(rng::key(salt, lo, hi, 0) & 1);
  std::copy(half[first].begin(), half[first].end(), v.begin() + lo);
  std::copy(half[1 - first].begin(), half[1 - first].end(), v.begin() + lo + half[first].size());
  const std::size_t mid = lo + half[first].size();
  bisect(v, lo, mid, weight, key, salt);
  bisect(v, mid, hi, weight, key, salt);
}

}  // namespace

std::vector<std::int64_t> balanced_permutation(const std::vector<std::int64_t>& weight, std::uint64_t seed,
                                               std::uint64_t variant) {
  const auto n = static_cast<std::int64_t>(weight.size());
  const std::uint64_t stream = rng::stream(rng::Stream::balanced_permutation, variant);
  std::vector<std::uint64_t> key(static_cast<std::size_t>(n));
  for (std::int64_t v = 0; v < n; ++v) key[v] = rng::key(seed, stream, static_cast<std::uint64_t>(v), 0);
  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), std::int64_t{0});
  std::sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
    return weight[a] != weight[b] ? weight[a] > weight[b] : key[a] < key[b];
  });
  bisect(order, 0, order.size(), weight, key, rng::key(seed, stream, 1, 1));
  return order;
}

std::vector<std::int64_t> ordering_weights(const HostCsr& a) {
  std::vector<std::int64_t> weight(static_cast<std::size_t>(a.rows), 0);
  for (std::int64_t r = 0; r < a.rows; ++r) {
    weight[r] += a.rowptr[r + 1] - a.rowptr[r];
    for (std::int64_t e = a.rowptr[r]; e < a.rowptr[r + 1]; ++e) ++weight[a.col[e]];
  }
  return weight;
}

std::vector<std::vector<std::int64_t>> make_orderings(const std::vector<std::int64_t>& weight, Permutation p,
                                                      std::uint64_t seed) {
  const auto n = static_cast<std::int64_t>(weight.size());
  if (p.kind == Permutation::none) {
    std::vector<std::int64_t> id(weight.size());
    std::iota(id.begin(), id.end(), std::int64_t{0});
    return {std::move(id)};
  }
  auto draw = [&](std::uint64_t variant) {  // P (or P_c): variant 0, P_r: variant 1
    return p.draw == Permutation::balanced ? balanced_permutation(weight, seed, variant)
                                           : random_permutation(n, seed, kUniformVariant + variant);
  };
  if (p.kind == Permutation::single) return {draw(0)};
  return {draw(0), draw(1)};  // P_c, P_r
}

std::vector<std::vector<std::int64_t>> make_orderings(const HostCsr& a, Permutation p, std::uint64_t seed) {
  return make_orderings(ordering_weights(a), p, seed);
}

}  // namespace gcnlab
