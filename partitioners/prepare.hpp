#pragma once
// Graph preparation: the one place a dataset becomes the Graph the strategies
// read. A VertexPlan names the orderings a run needs — ordering 0 from a
// partitioner (`--partitioner`), Plexus's permutations on top of it
// (`--permutation`, Sec. 5.1) — and prepare_graph computes them once on the
// whole graph. `train` does this in memory for in-memory dataset specs;
// `gcnlab prepare` does it once and writes the result as shards
// (common/data/shards.hpp), so that `train` on a prepared directory does no
// whole-graph work at all.

#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "common/data/dataset.hpp"
#include "common/data/graph.hpp"
#include "common/model/strategy.hpp"
#include "partitioners/partition.hpp"
#include "partitioners/permutation.hpp"

namespace gcnlab {

struct VertexPlan {
  std::string partitioner = "block";  // a method of partition_methods() or a partition file
  // Parts of the partition: the block rows the strategy cuts. 0: an ordering
  // that any block count can cut (block: identity, random: a random permutation).
  int parts = 0;
  Permutation permutation = Permutation::none;
  std::uint64_t seed = 1;
};

struct PreparedGraph {
  std::shared_ptr<const InMemoryGraph> graph;
  bool partitioned = false;  // quality is set (parts >= 1)
  PartitionQuality quality;
  double partition_seconds = 0;
};

PreparedGraph prepare_graph(const Dataset& d, const VertexPlan& plan);
// The same with a dataset's adjacency A handed over (`gcnlab prepare`: moved out
// of the dataset, partitioned, then normalised in its own storage, so the graph
// is held once).
PreparedGraph prepare_graph(HostCsr a, bool directed, const VertexPlan& plan);

// prepare_graph's orderings, for preparers that hold no whole graph
// (prepare_ranks.hpp): ordering 0 of an unpartitioned plan (block: the
// identity; random: a seeded permutation), and Plexus's permutations of
// `base` from each vertex's weight (ordering_weights: its row and column
// lengths in Âᵀ).
std::vector<std::int64_t> unpartitioned_order(const VertexPlan& plan, std::int64_t n);
std::vector<std::vector<std::int64_t>> permuted_orderings(const std::vector<std::int64_t>& base,
                                                          const std::vector<std::int64_t>& weight,
                                                          const VertexPlan& plan);

// The graph a strategy reads in a run: a prepared directory as it was
// prepared (the strategy checks that its layout fits), or an in-memory
// dataset prepared here with the strategy's block rows and permutation.
// `partition`: the partition's quality report (null when not partitioned).
struct RunGraph {
  std::shared_ptr<const Graph> graph;
  nlohmann::json partition;
};
RunGraph graph_for(const Dataset& d, const Strategy& strategy, const std::string& partitioner, std::uint64_t seed);

}  // namespace gcnlab
