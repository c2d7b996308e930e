// gcnlab partition: a vertex partition (METIS, PT-Scotch, ...) and its quality (cut, volumes, balance).
#include <algorithm>
#include <chrono>
#include <memory>
#include <numeric>

#include <fmt/format.h>

#include "apps/gcnlab/commands.hpp"
#include "common/data/dataset.hpp"
#include "common/data/graph.hpp"
#include "common/data/shards.hpp"
#include "partitioners/partition.hpp"
#include "partitioners/prepare.hpp"
#include "partitioners/ptscotch.hpp"

namespace gcnlab::cli {

int partition(Args& args, MpiCommunicator& world) {
  collectively(world, [&] {
    const std::string spec = args.value_or("--dataset", kDefaultDataset);
    const int parts = static_cast<int>(args.integer("--parts", 0, 1));
    GCNLAB_CHECK(parts >= 1, "partition needs --parts K");
    const std::string method = args.value_or("--method", "metis");
    const std::int64_t f = args.integer("--features", 0, 0);
    const auto out = args.value("--out");
    const std::uint64_t seed = static_cast<std::uint64_t>(args.integer("--seed", 1, 0));
    args.finish();
    const Dataset d = load_dataset(spec);
    const auto t0 = std::chrono::steady_clock::now();
    Partition p;
    std::int64_t distributed_cut = 0;
    if (method == "ptscotch") {  // every rank holds only its block of rows (of the shards, for gcl:DIR)
      const auto graph = d.shards ? std::shared_ptr<const Graph>(d.shards) : prepare_graph(d, {}).graph;
      const MPI_Comm comm = world.native();
      const PartitionBlock b = ptscotch_partition(*graph, parts, 0.03, seed, comm);
      distributed_cut = b.edge_cut;
      p = gather_partition(*graph, b, parts, comm);
    } else {
      GCNLAB_CHECK(!d.shards, "--method {} partitions a graph one process holds whole: give the dataset it was "
                   "prepared from, or --method ptscotch, which reads each rank's rows of the shards", method);
      p = make_partition(method, d.adj, parts, seed);
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (world.rank() != 0) return;
    if (out) write_partition(p, *out);
    if (d.shards) {  // a prepared directory: no process holds the graph to evaluate the volumes
      fmt::print("partition    {} of {} into {} parts{}\nedge cut     {}\ntime         {:.3f} s ({} ranks)\n", method,
                 d.name, parts, out ? " -> " + *out : "", distributed_cut, seconds, world.size());
      return;
    }
    const PartitionQuality q = evaluate_partition(d.adj, p);
    GCNLAB_ASSERT(method != "ptscotch" || q.edge_cut == distributed_cut);
    const double width = static_cast<double>(f > 0 ? f : d.features) * sizeof(float);
    const auto [nmin, nmax] = std::minmax_element(q.nnz.begin(), q.nnz.end());
    const double nnz_mean = std::accumulate(q.nnz.begin(), q.nnz.end(), 0.0) / parts;
    auto mb = [&](double rows) { return rows * width / 1e6; };
    fmt::print(
        "partition    {} of {} into {} parts{}\n"
        "edge cut     {}\n"
        "volume       {} rows = {:.3f} MB per SpMM at f = {} (connectivity - 1)\n"
        "send / part  max {:.0f} rows ({:.3f} MB), mean {:.1f} rows ({:.3f} MB), load imbalance {:.1f}%\n"
        "recv / part  max {:.0f} rows ({:.3f} MB), mean {:.1f} rows ({:.3f} MB)\n"
        "nnz / part   max {} min {} mean {:.1f} (max/mean {:.3f})\n"
        "time         {:.3f} s\n",
        method, d.name, parts, out ? " -> " + *out : "", q.edge_cut, q.total_volume, mb(q.total_volume),
        width / sizeof(float), q.send_max(), mb(q.send_max()), q.send_mean(), mb(q.send_mean()), q.imbalance_percent(),
        q.recv_max(), mb(q.recv_max()), q.recv_mean(), mb(q.recv_mean()), *nmax, *nmin, nnz_mean, *nmax / nnz_mean,
        seconds);
  });
  return 0;
}

}  // namespace gcnlab::cli
