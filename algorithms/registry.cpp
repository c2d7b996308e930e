#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "algorithms/1.5d/one_half_d.hpp"
#include "algorithms/1d/one_d.hpp"
#include "algorithms/2d/two_d.hpp"
#include "algorithms/mggcn-1d/mggcn_1d.hpp"
#include "algorithms/sa-1.5d/sa_one_half_d.hpp"
#include "algorithms/sa-1d/sa_one_d.hpp"
#include "algorithms/plexus-3d/plexus_3d.hpp"
#include "algorithms/scalegnn-4d/scalegnn_4d.hpp"
#include "algorithms/split-3d/split_3d.hpp"
#include "algorithms/serial/serial.hpp"
#include "algorithms/registry.hpp"
#include "common/dist/partial_sums.hpp"

namespace gcnlab {

namespace {

struct Entry {
  const char* name;
  std::unique_ptr<Strategy> (*make)(const StrategyOptions&, const StrategyContext&);
  bool any_order = false;  // --order transform: W applied before the SpMM (block-row strategies)
  int grid_axes = 1;       // the factors of its --grid
};

const Entry kStrategies[] = {
    {"serial", [](const StrategyOptions& o, const StrategyContext& c) -> std::unique_ptr<Strategy> {
       return std::make_unique<SerialStrategy>(o, c);
     }, true},
    {"1d", [](const StrategyOptions& o, const StrategyContext& c) -> std::unique_ptr<Strategy> {
       return std::make_unique<OneDStrategy>(o, c);
     }, true},
    {"1.5d", [](const StrategyOptions& o, const StrategyContext& c) -> std::unique_ptr<Strategy> {
       return std::make_unique<OneHalfDStrategy>(o, c);
     }, true, 2},
    {"sa-1d", [](const StrategyOptions& o, const StrategyContext& c) -> std::unique_ptr<Strategy> {
       return std::make_unique<SaOneDStrategy>(o, c);
     }, true},
    {"sa-1.5d", [](const StrategyOptions& o, const StrategyContext& c) -> std::unique_ptr<Strategy> {
       return std::make_unique<SaOneHalfDStrategy>(o, c);
     }, true, 2},
    {"2d", [](const StrategyOptions& o, const StrategyContext& c) -> std::unique_ptr<Strategy> {
       return std::make_unique<TwoDStrategy>(o, c);
     }, false, 2},
    {"split-3d", [](const StrategyOptions& o, const StrategyContext& c) -> std::unique_ptr<Strategy> {
       return std::make_unique<Split3DStrategy>(o, c);
     }, false, 3},
    {"mggcn-1d", [](const StrategyOptions& o, const StrategyContext& c) -> std::unique_ptr<Strategy> {
       return std::make_unique<MgGcn1DStrategy>(o, c);
     }, true},
    {"plexus-3d", [](const StrategyOptions& o, const StrategyContext& c) -> std::unique_ptr<Strategy> {
       return std::make_unique<Plexus3DStrategy>(o, c);
     }, false, 3},
    {"scalegnn-4d", [](const StrategyOptions& o, const StrategyContext& c) -> std::unique_ptr<Strategy> {
       return std::make_unique<ScaleGnn4DStrategy>(o, c);
     }, false, 4},
};

}  // namespace

std::vector<std::string> strategy_names() {
  std::vector<std::string> names;
  for (const auto& e : kStrategies) names.emplace_back(e.name);
  return names;
}

std::vector<std::string> order_strategies() {
  std::vector<std::string> names;
  for (const auto& e : kStrategies)
    if (e.any_order) names.emplace_back(e.name);
  return names;
}

int grid_axes(const std::string& algo) {
  for (const auto& e : kStrategies)
    if (algo == e.name) return e.grid_axes;
  fail("unknown --algo '{}'", algo);
}

std::unique_ptr<Strategy> make_strategy(const StrategyOptions& opts, const StrategyContext& ctx) {
  for (const auto& e : kStrategies) {
    if (opts.algo != e.name) continue;
    GCNLAB_CHECK(opts.batch_size == 0 || opts.algo == "serial" || opts.algo == "scalegnn-4d",
                 "--batch-size (mini-batch training) is for scalegnn-4d and its oracle serial; --algo {} trains on "
                 "the full graph", opts.algo);
    GCNLAB_CHECK(opts.dp_groups == 1 || opts.algo == "serial",
                 "--dp-groups is for the serial oracle of scalegnn-4d (whose D comes from --grid DxXxYxZ)");
    parse_comm_precision(opts.comm_precision);
    GCNLAB_CHECK(opts.comm_precision == "fp32" || opts.algo == "plexus-3d" || opts.algo == "scalegnn-4d",
                 "--comm-precision bf16 is for the 3D PMM of plexus-3d and scalegnn-4d (ScaleGNN Sec. V-B); --algo {} "
                 "communicates in fp32", opts.algo);
    GCNLAB_CHECK(opts.variant == ModelVariant::gcn || opts.algo == "serial" || opts.algo == "plexus-3d" ||
                     opts.algo == "scalegnn-4d",
                 "--model scalegnn (input projection, RMSNorm, residuals: ScaleGNN Sec. III) runs on serial, "
                 "plexus-3d and scalegnn-4d; --algo {} trains the plain GCN (--model gcn)", opts.algo);
    GCNLAB_CHECK(opts.variant == ModelVariant::gcn || opts.order == "auto",
                 "--order is for the plain GCN's convolutions; --model scalegnn aggregates first");
    const auto orders = parse_orders(opts.order);  // the syntax here, the layers at setup
    if (!e.any_order) {
      const bool aggregate = std::all_of(orders.begin(), orders.end(),
                                         [](ProductOrder o) { return o == ProductOrder::aggregate_first; });
      GCNLAB_CHECK(opts.order == "auto" || aggregate,
                   "--algo {} computes (ÂᵀX)W in every layer, as its paper does: --order {} is for {}", opts.algo,
                   opts.order, fmt::join(order_strategies(), ", "));
    }
    return e.make(opts, ctx);
  }
  fail("unknown --algo '{}' (available: {})", opts.algo, fmt::join(strategy_names(), ", "));
}

}  // namespace gcnlab
