#include "planning/simulate.hpp"

#include <algorithm>

#include "algorithms/registry.hpp"
#include "backends/counting_backend.hpp"
#include "backends/factory.hpp"
#include "common/comm/thread_communicator.hpp"
#include "common/core/host_memory.hpp"
#include "common/model/trainer.hpp"
#include "models/registry.hpp"
#include "common/results/results.hpp"
#include "partitioners/prepare.hpp"

namespace gcnlab {

Simulation simulate(const Dataset& data, const StrategyOptions& options, const ModelConfig& model, int ranks,
                    const std::string& partitioner) {
  Simulation sim;
  sim.ranks.resize(static_cast<std::size_t>(ranks));
  RunGraph graph;  // prepared once, by rank 0, for every rank (read-only)
  // Traced from setup on: no kernel, fill or upload runs, so a simulated rank writes only its graph
  // blocks and index arrays; its buffers are allocated and never touched (their pages never become
  // resident). So no per-rank budget applies here: each rank's analytic need is what it would hold on
  // the target, which plan checks against the machine profile's device memory. What the ranks' graph
  // blocks hold here is watched instead: a simulation that would exhaust this host's memory (P ranks
  // each holding a replicated graph) ends in one line, not in the OOM killer.
  TrainConfig train;
  const auto start = host_memory_available();
  const double floor = start ? std::min(2048.0 * (1 << 20), 0.1 * start->bytes) : 0;
  const Watchdog memory = [&]() -> std::optional<std::string> {
    const auto now = start ? host_memory_available() : std::nullopt;
    if (!now || now->bytes >= floor) return std::nullopt;
    return fmt::format(
        "simulating {} ranks stopped: their graph blocks took {:.1f} of the {:.1f} GiB this host had ({}); use "
        "fewer ranks, a smaller graph or a strategy that replicates less of it",
        ranks, (start->bytes - now->bytes) / (1 << 30), start->bytes / (1 << 30), start->source);
  };
  run_ranks(ranks, [&](ThreadCommunicator& world) {
    const auto counted = make_backend("cpu", {1, 0});
    CountingBackend& backend = *counted;
    backend.count_into(&world.ledger());
    const auto strategy = make_strategy(options, {world, backend});
    const auto gnn = make_model(model.name);
    Trainer trainer(*strategy, *gnn, world, backend, model, train);
    if (world.rank() == 0) {
      const std::string method =
          !partitioner.empty() ? partitioner : data.shards ? "block" : strategy->default_partitioner();
      graph = graph_for(data, *strategy, method, model.seed);
    }
    world.barrier();
    backend.trace(true);
    trainer.setup(data, *graph.graph);
    SimulatedRank& mine = sim.ranks[static_cast<std::size_t>(world.rank())];
    // One training epoch traced: every kernel counted, none run, no collective moving data.
    world.move_data(false);
    mine.work = trainer.epoch_work();
    mine.coords = strategy->coords();
    mine.nnz_local = strategy->nnz_local();
    mine.edges_local = trainer.edges_local();
    mine.model = trainer.byte_model();
    mine.memory = trainer.memory_need();
    if (world.rank() == 0) {  // only rank 0 writes these
      sim.grid = strategy->grid();
      sim.dims = trainer.dims();
      sim.describe = strategy->describe();
      sim.permutation = strategy->permutation();
    }
    world.barrier();  // the graph stays alive until every rank has read its blocks
  }, memory);
  sim.partition = graph.partition;
  return sim;
}

nlohmann::json simulation_json(const Simulation& s, const StrategyOptions& options, const ModelConfig& model,
                               const std::string& dataset_spec) {
  using nlohmann::json;
  const auto P = static_cast<double>(s.ranks.size());
  json j;
  j["schema"] = "gcnlab.simulate/1";
  j["config"] = {{"algo", options.algo}, {"grid", s.grid},        {"ranks", s.ranks.size()},
                 {"dims", s.dims},       {"dataset", dataset_spec}, {"seed", model.seed},
                 {"permutation", s.permutation}, {"order", options.order}, {"describe", s.describe},
                 {"partition", s.partition}};
  const nlohmann::json declared = declared_options_json(options);
  for (const auto& [key, value] : declared.items())
    if (key != "permutation") j["config"][key] = value;  // the strategy's resolved permutation above
  json per_rank = json::array();
  std::vector<double> peak(kNumCategories, 0.0), total(kNumCategories, 0.0);
  double nnz_max = 0, nnz_sum = 0, mem_max = 0, wire_max = 0;
  for (std::size_t r = 0; r < s.ranks.size(); ++r) {
    const SimulatedRank& x = s.ranks[r];
    json bytes = json::object();
    double rank_total = 0;
    for (int c = 0; c < kNumCategories; ++c) {
      if (!is_communication(static_cast<Category>(c))) continue;
      bytes[std::string(to_string(static_cast<Category>(c)))] = x.model[c];
      peak[c] = std::max(peak[c], x.model[c]);
      total[c] += x.model[c];
      rank_total += x.model[c];
    }
    wire_max = std::max(wire_max, rank_total);
    nnz_max = std::max(nnz_max, static_cast<double>(x.nnz_local));
    nnz_sum += static_cast<double>(x.nnz_local);
    mem_max = std::max(mem_max, x.memory.total());
    per_rank.push_back({{"rank", r},
                        {"coords", x.coords},
                        {"nnz_local", x.nnz_local},
                        {"work", work_json(x.work)},
                        {"model_wire_bytes", bytes},
                        {"memory_need",
                         {{"graph", x.memory.graph},
                          {"buffers", x.memory.buffers},
                          {"activations", x.memory.activations},
                          {"weights", x.memory.weights},
                          {"total", x.memory.total()}}}});
  }
  json summary = {{"nnz_max_over_mean", nnz_sum > 0 ? nnz_max / (nnz_sum / P) : 1.0},
                  {"memory_need_max", mem_max}};
  for (int c = 0; c < kNumCategories; ++c) {
    if (!is_communication(static_cast<Category>(c))) continue;
    summary["wire_bytes"][std::string(to_string(static_cast<Category>(c)))] = {
        {"max", peak[c]}, {"mean", total[c] / P}, {"total", total[c]}};
  }
  summary["wire_bytes_max_rank"] = wire_max;
  j["ranks"] = per_rank;
  j["summary"] = summary;
  return j;
}

}  // namespace gcnlab
