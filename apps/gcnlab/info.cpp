// gcnlab info: a dataset's facts; with --shards, Plexus's Table 3 (shard imbalance per permutation).
#include <optional>

#include <fmt/format.h>

#include "algorithms/plexus-3d/decomposition.hpp"
#include "apps/gcnlab/commands.hpp"
#include "common/comm/process_grid.hpp"
#include "common/data/dataset.hpp"
#include "common/data/graph.hpp"
#include "common/data/shards.hpp"
#include "partitioners/prepare.hpp"

namespace gcnlab::cli {

int info(Args& args, MpiCommunicator& world) {
  std::optional<Dataset> data;
  std::vector<int> shards;
  std::uint64_t seed = 1;
  collectively(world, [&] {
    const std::string spec = args.value_or("--dataset", kDefaultDataset);
    if (auto s = args.value("--shards")) shards = parse_grid(*s);
    GCNLAB_CHECK(shards.empty() || shards.size() == 2, "--shards takes RxC (e.g. 8x8)");
    seed = static_cast<std::uint64_t>(args.integer("--seed", 1, 0));
    args.finish();
    data = load_dataset(spec);
  });
  if (world.rank() != 0) return 0;
  const DatasetInfo s = dataset_info(*data);
  fmt::print(
      "dataset      {}\n"
      "name         {}\n"
      "nodes        {}\n"
      "nnz          {} (A, no self-loops); {} with self-loops (A + I)\n"
      "edges        {} undirected pairs\n"
      "directed     {}\n"
      "degree       min {}  mean {:.2f}  max {}  isolated {}\n"
      "features     {}{}\n"
      "classes      {}\n"
      "split        train {}  val {}  test {}\n",
      data->spec, data->name, s.nodes, s.nnz, s.nnz_with_self_loops, s.edges_undirected,
      data->directed ? "yes" : "no", s.degree_min, s.degree_mean, s.degree_max, s.isolated, data->features,
      data->synthetic_features ? " (synthetic)" : "", data->classes, data->count(ew::kTrain),
      data->count(ew::kVal), data->count(ew::kTest));
  if (data->shards) {
    const ShardMeta& m = data->shards->meta();
    const GraphLayout& l = m.layout;
    fmt::print("prepared     {}x{} shards; vertex layout: partitioner {}{}, permutation {}, seed {}\n", m.shards,
               m.shards, l.partitioner, l.parts ? fmt::format(" ({} parts)", l.parts) : "", l.permutation, l.seed);
  }
  if (!shards.empty()) {
    // Plexus Table 3: max/mean nonzeros over the R x C shards of the stored adjacency versions.
    GCNLAB_CHECK(!data->shards, "info --shards needs the whole graph: give the dataset it was prepared from");
    const NormalizedAdjacency g = normalized_graph(*data);
    std::string line;
    for (const Permutation p : all_permutations())
      line += fmt::format("  {} {:.3f}", p.kind == Permutation::none ? "original" : to_string(p),
                          plexus::shard_imbalance(*g.a_hat_t, p, seed, shards[0], shards[1]));
    fmt::print("shards       {}x{} of Â, nnz max/mean:{} (permutation seed {})\n", shards[0], shards[1], line, seed);
  }
  return 0;
}

}  // namespace gcnlab::cli
