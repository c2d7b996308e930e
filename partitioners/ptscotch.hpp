#pragma once
// PT-Scotch (Chevalier & Pellegrini 2008), the distributed partitioner: the
// ranks of an MPI communicator each hand it one block of rows of the
// symmetrised graph and compute a k-way partition that minimises the edge
// cut under a vertex balance, together; no rank holds more than its block
// (for a prepared dataset, gcl:DIR, not even while reading it: each rank
// reads its rows from the shards). ParMETIS is not packaged in Debian;
// PT-Scotch is (libptscotch-dev, its 64-bit-index build here).

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "common/core/blocks.hpp"
#include "common/data/graph.hpp"
#include "partitioners/partition.hpp"

namespace gcnlab {

// This rank's share of a distributed partition: the parts of positions
// `rows` of the graph's ordering 0, and the edge cut of the whole partition.
struct PartitionBlock {
  BlockRange rows;
  std::vector<std::int32_t> part;
  std::int64_t edge_cut = 0;  // undirected edges between parts (all ranks)
};

// Rank r of `comm` contributes positions block_range(n, P, r).
PartitionBlock ptscotch_partition(const Graph& g, int parts, double imbalance, std::uint64_t seed, MPI_Comm comm);
// The same from rows of the symmetrised structure without self-loops
// (union_rows) that the ranks hold: rank r's `rows` of n, runs that follow
// each other in rank order (prepare across ranks: its Owners' runs).
PartitionBlock ptscotch_partition(HostCsr sym, BlockRange rows, std::int64_t n, int parts, double imbalance,
                                  std::uint64_t seed, MPI_Comm comm);

// The whole partition by original vertex id, on rank 0 of `comm` (empty elsewhere).
Partition gather_partition(const Graph& g, const PartitionBlock& b, int parts, MPI_Comm comm);

}  // namespace gcnlab
