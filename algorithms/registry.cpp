#include "algorithms/registry.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/dist/partial_sums.hpp"

namespace gcnlab {

// Every strategy, one line each (its entry is defined in algorithms/<name>/).
// Adding a strategy: a folder with its entry function, and one line here.
#define GCNLAB_STRATEGIES(X)  \
  X(serial_strategy)          \
  X(one_d_strategy)           \
  X(ring_1d_strategy)         \
  X(one_half_d_strategy)      \
  X(sa_one_d_strategy)        \
  X(sa_one_half_d_strategy)   \
  X(two_d_strategy)           \
  X(split_3d_strategy)        \
  X(mggcn_1d_strategy)        \
  X(plexus_3d_strategy)       \
  X(scalegnn_4d_strategy)

#define GCNLAB_DECLARE(entry) StrategyInfo entry();
GCNLAB_STRATEGIES(GCNLAB_DECLARE)
#undef GCNLAB_DECLARE

namespace {

// "a, b and c"
std::string listing(const std::vector<std::string>& names) {
  if (names.size() <= 1) return names.empty() ? "" : names.front();
  return fmt::format("{} and {}", fmt::join(names.begin(), names.end() - 1, ", "), names.back());
}

bool same_meaning(const StrategyOption& a, const StrategyOption& b) {
  return a.kind == b.kind && a.default_value == b.default_value && a.choices == b.choices && a.min == b.min;
}

std::vector<StrategyInfo> checked(std::vector<StrategyInfo> all) {
  for (std::size_t i = 0; i < all.size(); ++i) {
    const StrategyInfo& s = all[i];
    GCNLAB_ASSERT(s.make && s.grids && !s.name.empty() && s.grid_axes >= 1);
    for (std::size_t j = 0; j < i; ++j) GCNLAB_ASSERT(all[j].name != s.name);
    for (const StrategyOption& o : s.options)
      for (std::size_t j = 0; j < i; ++j)
        for (const StrategyOption& p : all[j].options)
          if (p.name == o.name && !same_meaning(p, o))
            fail("internal: option --{} of {} differs from {}'s declaration", o.name, s.name, all[j].name);
  }
  return all;
}

const char* kind_name(StrategyOption::Kind k) {
  switch (k) {
    case StrategyOption::Kind::integer: return "integer";
    case StrategyOption::Kind::on_off: return "on_off";
    case StrategyOption::Kind::text: break;
  }
  return "text";
}

}  // namespace

const std::vector<StrategyInfo>& strategies() {
#define GCNLAB_ENTRY(entry) entry(),
  static const std::vector<StrategyInfo> all = checked({GCNLAB_STRATEGIES(GCNLAB_ENTRY)});
#undef GCNLAB_ENTRY
  return all;
}

const StrategyInfo& strategy_info(const std::string& name) {
  for (const StrategyInfo& s : strategies())
    if (s.name == name) return s;
  fail("unknown --algo '{}' (available: {})", name, fmt::join(strategy_names(), ", "));
}

std::vector<std::string> strategy_names() {
  std::vector<std::string> names;
  for (const StrategyInfo& s : strategies()) names.push_back(s.name);
  return names;
}

std::vector<std::string> strategies_with(bool StrategyCaps::*has) {
  std::vector<std::string> names;
  for (const StrategyInfo& s : strategies())
    if (s.caps.*has) names.push_back(s.name);
  return names;
}

std::vector<RegisteredOption> registered_options() {
  std::vector<RegisteredOption> out;
  for (const StrategyInfo& s : strategies())
    for (const StrategyOption& o : s.options) {
      auto it = std::find_if(out.begin(), out.end(), [&](const RegisteredOption& r) { return r.option.name == o.name; });
      if (it == out.end()) out.push_back({o, {s.name}});
      else it->strategies.push_back(s.name);
    }
  return out;
}

int grid_axes(const std::string& algo) { return strategy_info(algo).grid_axes; }

StrategyOptions with_defaults(StrategyOptions opts) {
  for (const RegisteredOption& r : registered_options()) opts.options.try_emplace(r.option.name, r.option.default_value);
  return opts;
}

bool provides(const StrategyCaps& caps, const ModelDemands& d) {
  return (!d.norm_blocks || caps.norm_blocks) && (!d.full_graph_only || caps.full_graph) &&
         (!d.attention || caps.attention);
}

std::unique_ptr<Strategy> make_strategy(StrategyOptions opts, const StrategyContext& ctx) {
  const StrategyInfo& s = strategy_info(opts.algo);
  const StrategyCaps& caps = s.caps;
  GCNLAB_CHECK(opts.batch_size == 0 || caps.minibatch,
               "--batch-size (mini-batch training) is for {}; --algo {} trains on the full graph",
               listing(strategies_with(&StrategyCaps::minibatch)), opts.algo);
  GCNLAB_CHECK(opts.dp_groups == 1 || caps.dp_oracle,
               "--dp-groups is for the serial oracle of data-parallel groups ({}; a distributed strategy's D comes from "
               "its --grid)", listing(strategies_with(&StrategyCaps::dp_oracle)));
  parse_comm_precision(opts.comm_precision);
  GCNLAB_CHECK(opts.comm_precision == "fp32" || caps.bf16_comm,
               "--comm-precision bf16 is for the 3D PMM of {} (ScaleGNN Sec. V-B); --algo {} communicates in fp32",
               listing(strategies_with(&StrategyCaps::bf16_comm)), opts.algo);
  const ModelDemands& model = opts.model;
  GCNLAB_CHECK(!model.norm_blocks || caps.norm_blocks,
               "--model {} ({}) runs on {}; --algo {} provides no norm blocks (RMSNorm's row sums, "
               "the residuals' reshard)", model.name, model.title, listing(strategies_with(&StrategyCaps::norm_blocks)),
               opts.algo);
  GCNLAB_CHECK(!model.full_graph_only || caps.full_graph,
               "--model {} ({}) trains on the full graph; --algo {} trains on mini-batches only (strategies: {})",
               model.name, model.title, opts.algo, listing(strategies_with(&StrategyCaps::full_graph)));
  GCNLAB_CHECK(!model.attention || caps.attention,
               "--model {} ({}) runs on {}; --algo {} lays out no attention edge tensors (SDDMM, edge softmax) yet",
               model.name, model.title, listing(strategies_with(&StrategyCaps::attention)), opts.algo);
  GCNLAB_CHECK(opts.batch_size == 0 || !model.full_graph_only,
               "--model {} ({}) trains on the full graph: mini-batches rescale GCN's Â (ScaleGNN Eq. 24), not its "
               "edge values; drop --batch-size (strategies: {})",
               model.name, model.title, listing(strategies_with(&StrategyCaps::full_graph)));
  GCNLAB_CHECK(!model.fixed_order || opts.order == "auto",
               "--order is for the plain GCN's convolutions; --model {} fixes its product order", model.name);
  const auto orders = parse_orders(opts.order);  // the syntax here, the layers at setup
  if (!caps.any_order) {
    const bool aggregate = std::all_of(orders.begin(), orders.end(),
                                       [](ProductOrder o) { return o == ProductOrder::aggregate_first; });
    GCNLAB_CHECK(opts.order == "auto" || aggregate,
                 "--algo {} computes (ÂᵀX)W in every layer, as its paper does: --order {} is for {}", opts.algo,
                 opts.order, fmt::join(strategies_with(&StrategyCaps::any_order), ", "));
  }
  std::unique_ptr<Strategy> made = s.make(with_defaults(std::move(opts)), ctx);
  made->bind(ctx);
  return made;
}

nlohmann::json declared_options_json(const StrategyOptions& opts) {
  const StrategyOptions full = with_defaults(opts);
  nlohmann::json j = nlohmann::json::object();
  for (const StrategyOption& o : strategy_info(opts.algo).options) {
    std::string key = o.name;
    std::replace(key.begin(), key.end(), '-', '_');
    const std::string& v = full.option(o.name);
    if (o.kind == StrategyOption::Kind::integer) j[key] = full.integer_option(o.name);
    else if (o.kind == StrategyOption::Kind::on_off) j[key] = v == "on";
    else j[key] = v;
  }
  return j;
}

nlohmann::json strategies_json() {
  nlohmann::json list = nlohmann::json::array();
  for (const StrategyInfo& s : strategies()) {
    const StrategyCaps& c = s.caps;
    nlohmann::json options = nlohmann::json::array();
    for (const StrategyOption& o : s.options)
      options.push_back({{"name", o.name}, {"flag", "--" + o.name}, {"metavar", o.metavar},
                         {"kind", kind_name(o.kind)}, {"default", o.default_value}, {"choices", o.choices},
                         {"min", o.kind == StrategyOption::Kind::integer ? nlohmann::json(o.min) : nlohmann::json()},
                         {"help", o.help}});
    nlohmann::json grids = nlohmann::json::object();
    for (int p : {1, 2, 4, 8}) grids[std::to_string(p)] = s.grids(p);
    list.push_back({{"name", s.name},
                    {"summary", s.summary},
                    {"grid_axes", s.grid_axes},
                    {"distributed", s.grids(2) != std::vector<std::vector<int>>{{1}}},  // serial: one rank
                    {"grids", grids},
                    {"capabilities",
                     {{"any_order", c.any_order},
                      {"minibatch", c.minibatch},
                      {"full_graph", c.full_graph},
                      {"dp_oracle", c.dp_oracle},
                      {"bf16_comm", c.bf16_comm},
                      {"norm_blocks", c.norm_blocks},
                      {"attention", c.attention},
                      {"permutations", c.permutations},
                      {"perf_model", c.perf_model},
                      {"plan", c.plan}}},
                    {"options", options}});
  }
  return {{"schema", "gcnlab.strategies/1"}, {"strategies", list}};
}

std::string strategies_text() {
  std::string out;
  for (const StrategyInfo& s : strategies()) {
    out += fmt::format("{:<12} {}\n", s.name, s.summary);
    std::vector<std::string> flags;
    for (const StrategyOption& o : s.options) flags.push_back("--" + o.name);
    std::vector<std::string> grids;
    for (const auto& g : s.grids(4)) grids.push_back(fmt::format("{}", fmt::join(g, "x")));
    out += fmt::format("{:<12} grids at 4 ranks: {}{}{}\n", "", fmt::join(grids, " "),
                       flags.empty() ? "" : "; options: ", fmt::join(flags, " "));
  }
  return out;
}

std::vector<std::vector<int>> one_grid(int p) { return {{p}}; }

std::vector<std::vector<int>> factor_grids(int p, int axes) {
  if (axes <= 1) return {{p}};
  std::vector<std::vector<int>> out;
  for (int d = 1; d <= p; ++d)
    if (p % d == 0)
      for (auto rest : factor_grids(p / d, axes - 1)) {
        rest.insert(rest.begin(), d);
        out.push_back(std::move(rest));
      }
  return out;
}

}  // namespace gcnlab
