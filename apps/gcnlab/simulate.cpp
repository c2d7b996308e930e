// gcnlab simulate: a strategy's per-rank nonzeros, modelled wire bytes and
// analytic memory on P ranks, computed on one process (planning/simulate.hpp).
//
//   gcnlab simulate --algo NAME --ranks P [--grid G] [--dataset SPEC] [train's model and
//                   strategy options] [--partitioner NAME] [--out FILE.json]

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "apps/gcnlab/commands.hpp"
#include "apps/gcnlab/run_options.hpp"
#include "common/comm/process_grid.hpp"
#include "common/core/atomic_file.hpp"
#include "common/data/dataset.hpp"
#include "models/registry.hpp"
#include "planning/simulate.hpp"

namespace gcnlab::cli {

int simulate(Args& args, MpiCommunicator& world) {
  StrategyOptions options;
  ModelConfig model;
  std::string spec, partitioner;
  std::optional<std::string> out;
  int ranks = 0;
  collectively(world, [&] {
    GCNLAB_CHECK(world.size() == 1, "simulate runs on one process (its ranks are threads): run it without mpirun");
    options = read_strategy_options(args, "simulate");
    if (const auto grid = args.value("--grid")) options.grid = parse_grid(*grid);
    ranks = static_cast<int>(args.integer("--ranks", 0, 1));
    GCNLAB_CHECK(ranks >= 1 && ranks <= 4096, "simulate needs --ranks P with 1 <= P <= 4096");
    options.options.try_emplace("gemm-order", "direct");  // no GEMM timing: bytes do not depend on it
    spec = args.value_or("--dataset", kDefaultDataset);
    model = read_model_config(args);
    options.learn_features = model.learn_features;
    options.model = model_info(model.name).demands;
    options.seed = model.seed;
    partitioner = args.value_or("--partitioner", "");
    out = args.value("--out");
    args.finish();
  });
  Simulation sim;
  nlohmann::json j;
  collectively(world, [&] {
    const Dataset data = load_dataset(spec);
    sim = gcnlab::simulate(data, options, model, ranks, partitioner);
    j = simulation_json(sim, options, model, spec);
    if (out) write_file_atomically(*out, j.dump(1) + "\n");
  });
  fmt::print("{} on {} simulated rank(s), grid {}: {}\n", options.algo, ranks, format_grid(sim.grid), sim.describe);
  fmt::print("{:<22} {:>14} {:>14} {:>14}\n", "per epoch, per rank", "max", "mean", "total");
  for (const auto& [name, v] : j["summary"]["wire_bytes"].items()) {
    if (v["total"].get<double>() == 0) continue;
    fmt::print("{:<22} {:>14.0f} {:>14.0f} {:>14.0f}\n", name + " (B)", v["max"].get<double>(),
               v["mean"].get<double>(), v["total"].get<double>());
  }
  fmt::print("nnz max/mean {:.3f}, analytic memory per rank max {:.1f} MiB{}\n",
             j["summary"]["nnz_max_over_mean"].get<double>(), j["summary"]["memory_need_max"].get<double>() / (1 << 20),
             out ? fmt::format(", per rank in {}", *out) : "");
  return 0;
}

}  // namespace gcnlab::cli
