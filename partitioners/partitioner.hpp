#pragma once
// Vertex orderings applied before a strategy cuts the graph into blocks
// (`--partitioner NAME`). A strategy splits *positions* into contiguous
// blocks; the ordering decides which vertices share a block.
//   block   identity: contiguous original ids (CAGNET's default)
//   random  a uniformly random permutation drawn from the seed — CAGNET's and
//           MG-GCN's load-balancing device for skewed graphs; independent of P

#include <cstdint>
#include <string>
#include <vector>

#include "common/matrix/host_csr.hpp"

namespace gcnlab {

// order[p] = original vertex at position p.
std::vector<std::int64_t> vertex_order(const std::string& partitioner, std::int64_t n, std::uint64_t seed);

std::vector<std::string> partitioner_names();

}  // namespace gcnlab
