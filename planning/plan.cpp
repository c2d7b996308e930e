#include "planning/plan.hpp"

#include "models/registry.hpp"

#include <malloc.h>

#include <algorithm>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "algorithms/registry.hpp"
#include "planning/simulate.hpp"

namespace gcnlab::planning {

namespace {

// The simulated ranks' loads — traced work, modelled bytes — priced as slowest_rank does for a measured run.
StrategyPrediction price(const Simulation& sim, const std::string& algo, const MachineProfile& m) {
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
    loads.push_back({by_kind(x.work), link_bytes(x.model, me, m.gpus_per_node)});
    double wire = 0, inter = 0;
    for (const ByteModel::Term& t : x.model.terms()) {
      wire += t.bytes;
      if (link_sharing(t.group, me, m.gpus_per_node) > 0) inter += t.bytes;
    }
    out.wire_bytes_max = std::max(out.wire_bytes_max, wire);
    out.inter_bytes_max = std::max(out.inter_bytes_max, inter);
    if (x.memory.total() > out.memory_max) out.memory_max = x.memory.total(), out.memory_rank = me;
  }
  const RankTime t = slowest_rank(loads, m);
  out.compute_s = t.compute_s, out.comm_s = t.comm_s, out.slowest_rank = t.rank;
  return out;
}

}  // namespace

std::vector<StrategyPrediction> compare_strategies(const Dataset& data, const std::vector<std::string>& algos,
                                                   const StrategyOptions& base, const ModelConfig& model, int ranks,
                                                   const MachineProfile& m, std::vector<std::string>* refused) {
  GCNLAB_CHECK(ranks >= 1, "--ranks must be >= 1");
  std::vector<StrategyPrediction> out;
  for (const std::string& algo : algos) {
    const StrategyInfo& info = strategy_info(algo);
    GCNLAB_CHECK(info.caps.plan,
                 "plan compares full-graph distributed strategies ({}); '{}' is not one (the serial oracle, or "
                 "mini-batch steps whose full-graph step is another strategy in each data-parallel group)",
                 fmt::join(strategies_with(&StrategyCaps::plan), ", "), algo);
    for (const auto& grid : info.grids(ranks)) {
      StrategyOptions o = base;
      o.algo = algo;
      o.grid = grid;
      std::optional<Simulation> sim;
      try {
        sim = simulate(data, o, model, ranks);
        malloc_trim(0);  // the simulated ranks' freed heap back to the system (glibc's arenas keep it otherwise)
      } catch (const Error& e) {
        if (refused) refused->push_back(fmt::format("{} {}: {}", algo, fmt::join(grid, "x"), e.what()));
        continue;
      }
      StrategyPrediction q = price(*sim, algo, m);  // a profile that cannot price the work is the user's error
      if (m.device_memory > 0 && q.memory_max > m.device_memory) {
        constexpr double MiB = 1 << 20;
        if (refused)
          refused->push_back(fmt::format("{} {}: rank {} needs {:.1f} MiB (analytic), more than {}'s {:.1f} MiB a device",
                                         algo, fmt::join(grid, "x"), q.memory_rank, q.memory_max / MiB, m.name,
                                         m.device_memory / MiB));
        continue;
      }
      out.push_back(std::move(q));
    }
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const StrategyPrediction& a, const StrategyPrediction& b) { return a.total_s() < b.total_s(); });
  return out;
}

}  // namespace gcnlab::planning
