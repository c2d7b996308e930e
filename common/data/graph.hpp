#pragma once
// The normalised adjacency every strategy distributes (DESIGN.md "The model"):
//   Â = D^-1/2 (A + I) D^-1/2,  D = diag(row sums of A + I),
// self-loops added once (A carries none). A GCN layer computes Z = Âᵀ H W
// (CAGNET's notation), so the forward pass multiplies by Âᵀ and the backward
// pass by Â. For undirected graphs Â = Âᵀ and only one copy is kept.

#include <memory>

#include "common/data/dataset.hpp"
#include "common/matrix/host_csr.hpp"

namespace gcnlab {

class ShardStore;

struct Graph {
  std::int64_t n = 0;
  bool directed = false;
  // order[p] = original id of the vertex at position p of Â's rows/columns.
  // Strategies split positions into blocks; every result is reported in
  // original ids through this map.
  std::vector<std::int64_t> order;
  // Optional block rows from a partition: block k = positions [blocks[k], blocks[k+1]).
  // Strategies that cut K block rows use these when K matches; empty = equal blocks.
  std::vector<std::int64_t> blocks;
  std::shared_ptr<const HostCsr> a_hat;    // Â (backward)
  std::shared_ptr<const HostCsr> a_hat_t;  // Âᵀ (forward); same object when undirected
  // A sharded dataset (gcl:DIR) instead of the matrices above: strategies that
  // read shards (reads_shards()) take their blocks from it.
  std::shared_ptr<const ShardStore> shards;
};

Graph normalized_graph(const Dataset& d);

// The same graph with rows and columns permuted: position p holds original
// vertex order[p] (P Â Pᵀ). `order` must be a permutation of 0..n-1.
Graph permute(const Graph& g, const std::vector<std::int64_t>& order);

}  // namespace gcnlab
