// gcnlab models: the models' registry and the strategies each runs on (--json for scripts).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "algorithms/registry.hpp"
#include "apps/gcnlab/commands.hpp"
#include "models/registry.hpp"

namespace gcnlab::cli {

namespace {

// The strategies that provide what a model demands (make_strategy's check).
std::vector<std::string> strategies_for(const ModelDemands& d) {
  std::vector<std::string> out;
  for (const StrategyInfo& s : gcnlab::strategies())
    if (provides(s.caps, d)) out.push_back(s.name);
  return out;
}

nlohmann::json models_json() {
  nlohmann::json all = nlohmann::json::array();
  for (const ModelInfo& m : gcnlab::models())
    all.push_back({{"name", m.name},
                   {"summary", m.summary},
                   {"demands",
                    {{"norm_blocks", m.demands.norm_blocks},
                     {"fixed_order", m.demands.fixed_order},
                     {"full_graph_only", m.demands.full_graph_only},
                     {"attention", m.demands.attention}}},
                   {"strategies", strategies_for(m.demands)}});
  return {{"schema", "gcnlab.models/1"}, {"models", all}};
}

std::string models_text() {
  std::string out;
  for (const ModelInfo& m : gcnlab::models())
    out += fmt::format("{:<10} {}\n{:<10} runs on: {}\n", m.name, m.summary, "",
                       fmt::join(strategies_for(m.demands), ", "));
  return out;
}

}  // namespace

int models(Args& args, MpiCommunicator& world) { return print_listing(args, world, models_json, models_text); }

}  // namespace gcnlab::cli
