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
    base = unpartitioned_order(plan, n);
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
  layout.permutation = to_string(plan.permutation);
  layout.versions = adjacency_versions(plan.permutation);
  std::vector<std::vector<std::int64_t>> orderings =
      plan.permutation.kind == Permutation::none
          ? std::vector<std::vector<std::int64_t>>{std::move(base)}
          : permuted_orderings(base, ordering_weights(*adj.a_hat_t), plan);
  layout.orderings = static_cast<int>(orderings.size());
  out.graph = std::make_shared<const InMemoryGraph>(std::move(adj), std::move(layout), std::move(orderings));
  return out;
}

std::vector<std::int64_t> unpartitioned_order(const VertexPlan& plan, std::int64_t n) {
  GCNLAB_CHECK(plan.partitioner == "block" || plan.partitioner == "random",
               "--partitioner {} needs --parts K (the block rows the strategy will cut)", plan.partitioner);
  if (plan.partitioner == "random") return random_permutation(n, plan.seed);
  std::vector<std::int64_t> base(static_cast<std::size_t>(n));
  std::iota(base.begin(), base.end(), std::int64_t{0});
  return base;
}

std::vector<std::vector<std::int64_t>> permuted_orderings(const std::vector<std::int64_t>& base,
                                                          const std::vector<std::int64_t>& weight,
                                                          const VertexPlan& plan) {
  // Plexus's permutations of the partition's ordering: positions of `base` reordered.
  const auto n = static_cast<std::int64_t>(base.size());
  std::vector<std::int64_t> at(static_cast<std::size_t>(n));
  for (std::int64_t q = 0; q < n; ++q) at[q] = weight[base[q]];
  std::vector<std::vector<std::int64_t>> orderings = make_orderings(at, plan.permutation, plan.seed);
  for (auto& rel : orderings)
    for (auto& q : rel) q = base[q];
  return orderings;
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
