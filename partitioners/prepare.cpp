#include "partitioners/prepare.hpp"

#include <chrono>
#include <numeric>

#include "common/core/error.hpp"
#include "common/core/permutation.hpp"
#include "common/data/shards.hpp"

namespace gcnlab {

PreparedGraph prepare_graph(const Dataset& d, const VertexPlan& plan) {
  GCNLAB_CHECK(!d.shards, "'{}' is already prepared", d.spec);
  return prepare_graph(copy_with_room(d.adj, d.adj.rows), d.directed, plan);
}

PreparedGraph prepare_graph(HostCsr a, bool directed, const VertexPlan& plan) {
  const std::int64_t n = a.rows;
  PreparedGraph out;
  GraphLayout layout;
  layout.partitioner = plan.partitioner;
  layout.seed = plan.seed;
  std::vector<std::int64_t> base;
  if (plan.parts == 0) {
    GCNLAB_CHECK(plan.partitioner == "block" || plan.partitioner == "random",
                 "--partitioner {} needs --parts K (the block rows the strategy will cut)", plan.partitioner);
    base = plan.partitioner == "random" ? random_permutation(n, plan.seed) : std::vector<std::int64_t>(n);
    if (plan.partitioner == "block") std::iota(base.begin(), base.end(), std::int64_t{0});
  } else {
    const auto t0 = std::chrono::steady_clock::now();
    const Partition part = make_partition(plan.partitioner, a, plan.parts, plan.seed);
    out.partition_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    out.quality = evaluate_partition(a, part);
    out.partitioned = true;
    base = part.order();
    layout.parts = plan.parts;
    layout.blocks = part.offsets();
  }

  NormalizedAdjacency adj = normalized_graph(std::move(a), directed);  // in a's storage
  std::vector<std::vector<std::int64_t>> orderings;
  layout.permutation = to_string(plan.permutation);
  layout.versions = adjacency_versions(plan.permutation);
  if (plan.permutation.kind == Permutation::none) {
    orderings.push_back(std::move(base));
  } else {
    // Plexus's permutations of the partition's ordering: positions of `base` reordered.
    std::vector<std::int64_t> weight(static_cast<std::size_t>(n));
    const std::vector<std::int64_t> w = ordering_weights(*adj.a_hat_t);
    for (std::int64_t q = 0; q < n; ++q) weight[q] = w[base[q]];
    for (auto& rel : make_orderings(weight, plan.permutation, plan.seed)) {
      for (auto& q : rel) q = base[q];
      orderings.push_back(std::move(rel));
    }
  }
  layout.orderings = static_cast<int>(orderings.size());
  out.graph = std::make_shared<const InMemoryGraph>(std::move(adj), std::move(layout), std::move(orderings));
  return out;
}

RunGraph graph_for(const Dataset& d, const Strategy& strategy, const std::string& partitioner, std::uint64_t seed) {
  if (d.shards) {
    GCNLAB_CHECK(partitioner == "block",
                 "a prepared dataset (gcl:DIR) keeps the vertex layout it was prepared with (--partitioner {}); "
                 "--partitioner {} does not apply: prepare it with --partitioner {}",
                 d.shards->meta().layout.partitioner, partitioner, partitioner);
    return {d.shards, d.shards->meta().partition};
  }
  const PreparedGraph p = prepare_graph(d, {partitioner, strategy.partition_parts(),
                                            parse_permutation(strategy.permutation()), seed});
  return {p.graph, p.partitioned ? partition_report(p.quality, p.partition_seconds) : nlohmann::json()};
}

}  // namespace gcnlab
