#pragma once
// The registry: the one place that knows which strategies exist and what each
// one can do (PETSc's KSPRegisterAll: one line per method in registry.cpp).
//
// Each strategy describes itself in its own folder, algorithms/<name>/, with a
// StrategyInfo: name, one line with its paper, factory, grid arity and the
// grids it accepts on P ranks, capabilities and its own options. The CLI
// (choices, help, parsing), the results' config, plan, simulate, --dry-run,
// `gcnlab strategies --json` (read by experiments/ and plots/) and the test
// harness all read it; no code outside algorithms/<name>/ branches on a
// strategy's name.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/model/strategy.hpp"

namespace gcnlab {

// One option of a strategy (`--name VALUE`). An option name means the same
// thing in every strategy that declares it: the registry refuses two entries
// that disagree on its kind, default or choices.
struct StrategyOption {
  enum class Kind { integer, text, on_off };
  std::string name;     // without "--": "agg-blocks"
  std::string metavar;  // "K"
  Kind kind = Kind::text;
  std::string default_value;          // as text; a text option's "" means "the strategy's own"
  std::vector<std::string> choices;   // the accepted values (on_off: on, off); empty: any of its kind
  std::int64_t min = 0;               // integer options: the least value accepted
  std::string help;                   // without the strategies' names (the CLI prefixes them)
};

// What a strategy supports beyond full-graph training of the plain GCN in
// (ÂᵀX)W order with fp32 communication.
struct StrategyCaps {
  bool any_order = false;       // --order transform / per-layer lists (W before the SpMM)
  bool minibatch = false;       // --batch-size (ScaleGNN Sec. III-D)
  bool full_graph = true;       // trains full-graph epochs (false: --batch-size is required)
  bool dp_oracle = false;       // --dp-groups: the oracle of D data-parallel groups
  bool bf16_comm = false;       // --comm-precision bf16 (ScaleGNN Sec. V-B)
  bool norm_blocks = false;     // norm blocks' collectives (ModelDemands::norm_blocks: --model scalegnn)
  bool attention = false;       // graph attention's edge tensors (ModelDemands::attention: --model gat)
  bool permutations = false;    // --permutation: its graph is prepared with a vertex permutation (Plexus Sec. 5.1)
  // Plexus's analytic performance model (Plexus Sec. 4, planning/perf_model)
  // describes its epochs: --grid auto, plan without --algo, Eq. 4.4's calibration.
  bool perf_model = false;
  bool plan = true;             // plan --algo all prices it (a distributed full-graph strategy)
};

struct StrategyInfo {
  std::string name;     // --algo NAME
  std::string summary;  // one line, with its paper
  int grid_axes = 1;    // the factors of its --grid
  // The grids it accepts on p ranks (what tests, sweeps and plan enumerate).
  std::vector<std::vector<int>> (*grids)(int p) = nullptr;
  StrategyCaps caps;
  std::vector<StrategyOption> options;
  std::unique_ptr<Strategy> (*make)(const StrategyOptions&, const StrategyContext&) = nullptr;
};

// Every registered strategy, in the registry's order.
const std::vector<StrategyInfo>& strategies();
// The entry of --algo NAME; an unknown name fails with the list.
const StrategyInfo& strategy_info(const std::string& name);
std::vector<std::string> strategy_names();
// The names of the strategies whose caps satisfy `has`.
std::vector<std::string> strategies_with(bool StrategyCaps::*has);
// Every option of every strategy, once (first declaration), with the strategies that declare it.
struct RegisteredOption {
  StrategyOption option;
  std::vector<std::string> strategies;
};
std::vector<RegisteredOption> registered_options();
// The number of factors of the strategy's --grid (1 for a 1D strategy).
int grid_axes(const std::string& algo);

// Checks the options against the strategy's capabilities, fills in the
// defaults of every registered option not given, and builds it.
std::unique_ptr<Strategy> make_strategy(StrategyOptions opts, const StrategyContext& ctx);
// Whether a strategy provides what a model demands (its norm blocks;
// full-graph training): the models make_strategy accepts on it.
bool provides(const StrategyCaps& caps, const ModelDemands& d);
// opts.options with every registered option's default filled in where not given.
StrategyOptions with_defaults(StrategyOptions opts);

// The strategy's declared options with their values, typed (integer, bool for
// on/off, string), keyed with '_' for '-': the results' config records them.
nlohmann::json declared_options_json(const StrategyOptions& opts);

// `gcnlab strategies --json`: every entry (schema gcnlab.strategies/1).
nlohmann::json strategies_json();
// `gcnlab strategies`: one line per strategy and its options.
std::string strategies_text();

// Grids for StrategyInfo::grids: {P}; every ordered factorisation into `axes` factors.
std::vector<std::vector<int>> one_grid(int p);
std::vector<std::vector<int>> factor_grids(int p, int axes);
template <int Axes>
std::vector<std::vector<int>> factor_grids(int p) {
  return factor_grids(p, Axes);
}

// The factory of a strategy class constructed from (options, context).
template <class S>
std::unique_ptr<Strategy> make(const StrategyOptions& o, const StrategyContext& c) {
  return std::make_unique<S>(o, c);
}

}  // namespace gcnlab
