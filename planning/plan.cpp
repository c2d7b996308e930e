#include "planning/plan.hpp"

#include "models/registry.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "algorithms/registry.hpp"
#include "planning/simulate.hpp"

namespace gcnlab::planning {

namespace {

// The simulated ranks' loads, priced as slowest_rank does for a measured run.
StrategyPrediction price(const Simulation& sim, const std::string& algo, const EpochWork& work,
                         const MachineProfile& m) {
  StrategyPrediction out;
  out.algo = algo;
  out.grid = sim.grid;
  double nnz_sum = 0, nnz_max = 0;
  for (const SimulatedRank& r : sim.ranks) {
    nnz_sum += static_cast<double>(r.nnz_local);
    nnz_max = std::max(nnz_max, static_cast<double>(r.nnz_local));
  }
  const double mean = nnz_sum / static_cast<double>(sim.ranks.size());
  out.nnz_imbalance = mean > 0 ? nnz_max / mean : 1;
  std::vector<RankLoad> loads;
  for (std::size_t r = 0; r < sim.ranks.size(); ++r) {
    const SimulatedRank& x = sim.ranks[r];
    const int me = static_cast<int>(r);  // simulate's world numbering
    loads.push_back({mean > 0 ? static_cast<double>(x.nnz_local) / mean : 1, link_bytes(x.model, me, m.gpus_per_node),
                     mean > 0 ? static_cast<double>(x.edges_local) / mean : 1});
    double wire = 0, inter = 0;
    for (const ByteModel::Term& t : x.model.terms()) {
      wire += t.bytes;
      if (link_sharing(t.group, me, m.gpus_per_node) > 0) inter += t.bytes;
    }
    out.wire_bytes_max = std::max(out.wire_bytes_max, wire);
    out.inter_bytes_max = std::max(out.inter_bytes_max, inter);
    out.memory_max = std::max(out.memory_max, x.memory.total());
  }
  const RankTime t = slowest_rank(loads, work, m);
  out.compute_s = t.compute_s, out.comm_s = t.comm_s, out.slowest_rank = t.rank;
  return out;
}

}  // namespace

std::vector<StrategyPrediction> compare_strategies(const Dataset& data, const std::vector<std::string>& algos,
                                                   const StrategyOptions& base, const ModelConfig& model, int ranks,
                                                   const MachineProfile& m, std::vector<std::string>* refused) {
  GCNLAB_CHECK(ranks >= 1, "--ranks must be >= 1");
  GCNLAB_CHECK(m.spmm_rate > 0 && m.gemm_rate > 0,
               "machine profile '{}' has no kernel rates (spmm_rate, gemm_rate) to compare strategies with; "
               "calibrate one with `gcnlab plan --calibrate`",
               m.name);
  const Problem p = problem_of(data.nodes(), data.nnz() + data.nodes(),
                               architecture(model, data.features, data.classes), model.learn_features);
  std::vector<StrategyPrediction> out;
  for (const std::string& algo : algos) {
    const StrategyInfo& info = strategy_info(algo);
    GCNLAB_CHECK(info.caps.plan,
                 "plan compares full-graph distributed strategies ({}); '{}' is not one (the serial oracle, or "
                 "mini-batch steps whose full-graph step is another strategy in each data-parallel group)",
                 fmt::join(strategies_with(&StrategyCaps::plan), ", "), algo);
    const EpochWork work = epoch_work(p, algo);
    for (const auto& grid : info.grids(ranks)) {
      StrategyOptions o = base;
      o.algo = algo;
      o.grid = grid;
      try {
        out.push_back(price(simulate(data, o, model, ranks), algo, work, m));
      } catch (const Error& e) {
        if (refused) refused->push_back(fmt::format("{} {}: {}", algo, fmt::join(grid, "x"), e.what()));
      }
    }
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const StrategyPrediction& a, const StrategyPrediction& b) { return a.total_s() < b.total_s(); });
  return out;
}

}  // namespace gcnlab::planning
