#pragma once
// Vertex permutations for load balance (Plexus Sec. 5.1). Rows of layer l's
// input are in ordering π_l of the vertices; layer l multiplies by
// A^(l) = Π_{l+1} Âᵀ Π_lᵀ. none: π_l = id; single (Eq. 5.1/5.2): π_l = P;
// double (Eq. 5.3/5.4): π_l = P_c for even l, P_r for odd l, so A^(l)
// alternates P_r Âᵀ P_cᵀ and P_c Âᵀ P_rᵀ. Each permutation is drawn
//   uniform   uniformly at random, as the paper does (the default), or
//   balanced  by gcnlab's weight-balanced bisection (balanced_permutation),
// written single-balanced / double-balanced. They are orderings of the graph
// like a partition's, so they are made where the graph is prepared (in
// memory by `train`, on disk by `gcnlab prepare`), not by the strategy.

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "common/matrix/host_csr.hpp"

namespace gcnlab {

struct Permutation {
  enum Kind { none, single, dual };  // how many orderings
  enum Draw { uniform, balanced };   // how each is drawn
  Kind kind = none;
  Draw draw = uniform;
  Permutation(Kind k = none, Draw d = uniform) : kind(k), draw(d) {}
  bool operator==(const Permutation&) const = default;
};
// none | single | double | single-balanced | double-balanced
Permutation parse_permutation(const std::string& text);
std::string to_string(Permutation p);
// Every permutation, in the order of Plexus's Table 3 (original, single, double), uniform then balanced.
std::vector<Permutation> all_permutations();

// Id of the ordering of layer l's input rows: 0 = π for even l (id / P / P_c), 1 = P_r.
int ordering_id(Permutation p, int l);

// A random permutation whose contiguous blocks carry equal weight: recursive
// bisection of the vertices into halves of equal count, each vertex, heaviest
// first, joining the lighter half that has room (LPT with a count
// constraint), down to parts of ~16 vertices laid out in random order. Every
// power-of-two block count (2, 4, 8, ... the usual grid dimensions) is a level
// of the recursion and so is balanced in both vertices and weight; other
// counts are about as balanced as under a uniform permutation. Communities are
// scattered as by a uniform permutation (ties and halves are random), but
// heavy-tailed graphs no longer leave the blocks ~10% apart (R-MAT scale 16,
// 8x8 shards of Â: uniform 1.12, this ~1.01).
std::vector<std::int64_t> balanced_permutation(const std::vector<std::int64_t>& weight, std::uint64_t seed,
                                               std::uint64_t variant);

// The adjacency versions (row ordering, column ordering) that the layers of
// any depth multiply by: layer l uses (ordering_id(l+1), ordering_id(l)).
std::vector<std::array<int, 2>> adjacency_versions(Permutation p);

// The orderings as position lists: orderings[id][q] = position of row q. One
// entry (none, single) or two (double: P_c, P_r), balancing `weight` per block.
std::vector<std::vector<std::int64_t>> make_orderings(const std::vector<std::int64_t>& weight, Permutation p,
                                                      std::uint64_t seed);
// The weight of each vertex: row + column nonzeros of a.
std::vector<std::int64_t> ordering_weights(const HostCsr& a);
// make_orderings(ordering_weights(a), p, seed).
std::vector<std::vector<std::int64_t>> make_orderings(const HostCsr& a, Permutation p, std::uint64_t seed);

}  // namespace gcnlab
