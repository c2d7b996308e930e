// gcnlab prepare: a dataset written once as a .gcl file, or as K x K shards of
// every adjacency version its vertex layout needs (Plexus Sec. 5.4). At P > 1
// ranks, what partitioners/prepare_ranks.hpp prepares is prepared across them
// (no rank holds the graph whole), as is a PT-Scotch layout at any P; anything
// else is loaded by every rank and written by rank 0, but a METIS layout,
// which needs the whole graph in one process, only at one rank.
#include <chrono>
#include <span>
#include <utility>

#include <fmt/format.h>

#include "apps/gcnlab/commands.hpp"
#include "common/comm/process_grid.hpp"
#include "common/core/host_memory.hpp"
#include "common/data/dataset.hpp"
#include "common/data/graph.hpp"
#include "common/data/shards.hpp"
#include "partitioners/partition.hpp"
#include "partitioners/prepare.hpp"
#include "partitioners/prepare_ranks.hpp"

namespace gcnlab::cli {

int prepare(Args& args, MpiCommunicator& world) {
  collectively(world, [&] {
    const std::string spec = args.value_or("--dataset", kDefaultDataset);
    const auto out = args.value("--out");
    GCNLAB_CHECK(out.has_value(), "prepare needs --out FILE.gcl (or --shards KxK --out DIR)");
    std::vector<int> shards;
    if (auto s = args.value("--shards")) shards = parse_grid(*s);
    GCNLAB_CHECK(shards.empty() || (shards.size() == 2 && shards[0] == shards[1]), "--shards takes KxK (e.g. 8x8)");
    VertexPlan plan;
    plan.partitioner = args.value_or("--partitioner", "block");
    plan.parts = static_cast<int>(args.integer("--parts", 0, 0));
    plan.permutation = parse_permutation(args.value_or("--permutation", "none"));
    plan.seed = static_cast<std::uint64_t>(args.integer("--seed", 1, 0));
    const std::int64_t chunk = args.integer("--round", std::int64_t{1} << 18, 1);
    args.finish();
    GCNLAB_CHECK(!shards.empty() || (plan.partitioner == "block" && plan.parts == 0 &&
                                     plan.permutation.kind == Permutation::none),
                 "--partitioner, --parts and --permutation lay out a sharded dataset: add --shards KxK");
    const bool across = !shards.empty() && prepares_across_ranks(spec, plan);
    GCNLAB_CHECK(world.size() == 1 || !partition_needs_graph(plan.partitioner),
                 "--partitioner {} needs the whole graph in one process: prepare it at one rank, or at {} ranks with "
                 "--partitioner ptscotch (distributed), block-nnz or random",
                 plan.partitioner, world.size());
    GCNLAB_CHECK(plan.partitioner != "ptscotch" || across,
                 "--partitioner ptscotch needs --shards KxK and --parts K, and a dataset prepare reads in parts (rmat:, "
                 "edges:, mtx:); for others, prepare with --partitioner block, partition the directory with `gcnlab "
                 "partition --method ptscotch --out FILE`, and prepare again with --partitioner FILE");
    const auto t0 = std::chrono::steady_clock::now();
    if (across && (world.size() > 1 || plan.partitioner == "ptscotch")) {
      const ShardMeta m = prepare_across_ranks(world, spec, plan, shards[0], *out, chunk);
      double peak = host_peak_bytes();
      world.allreduce(std::span<double>(&peak, 1), ReduceOp::max, Category::allreduce);
      log(world, fmt::format("wrote {} ({} nodes, {} nnz) as {}x{} shards to {}, prepared by {} ranks: partitioner {}{}, "
                             "permutation {}, seed {} ({:.1f} s, peak {:.1f} MiB a rank)",
                             m.name, m.nodes, m.nnz, shards[0], shards[0], *out, world.size(), m.layout.partitioner,
                             m.layout.parts ? fmt::format(" ({} parts)", m.layout.parts) : "", m.layout.permutation,
                             m.layout.seed,
                             std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
                             peak / (1 << 20)));
      return;
    }
    Dataset d = load_dataset(spec);
    GCNLAB_CHECK(!d.shards, "'{}' is already prepared", spec);
    if (world.rank() != 0) return;
    if (shards.empty()) {
      write_gcl(d, *out);
      fmt::print(stderr, "wrote {} ({} nodes, {} nnz) to {}\n", d.name, d.nodes(), d.adj.nnz(), *out);
      return;
    }
    // One vertex layout for every strategy (partitioners/prepare.hpp), written as
    // K x K shards of every adjacency version it needs (Plexus Sec. 5.4).
    // The adjacency is handed over to be normalised in its own storage: the graph is held once.
    const DatasetInfo info = dataset_info(d);
    const std::string fingerprint = dataset_fingerprint(d);
    const PreparedGraph g = prepare_graph(std::exchange(d.adj, {}), d.directed, plan);
    write_shards(d, info, fingerprint, *g.graph, shards[0],
                 g.partitioned ? partition_report(g.quality, g.partition_seconds) : nlohmann::json(), *out);
    const GraphLayout& l = g.graph->layout();
    fmt::print(stderr,
               "wrote {} ({} nodes, {} nnz) as {}x{} shards of {} adjacency version(s) to {}: partitioner {}{}, "
               "permutation {}, seed {} ({:.1f} s, peak {:.1f} MiB)\n",
               d.name, info.nodes, info.nnz, shards[0], shards[0], l.versions.size(), *out, l.partitioner,
               l.parts ? fmt::format(" ({} parts)", l.parts) : "", l.permutation, l.seed,
               std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
               host_peak_bytes() / (1 << 20));
  });
  return 0;
}

}  // namespace gcnlab::cli
