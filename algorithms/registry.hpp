#pragma once
// The registry: --algo NAME -> a strategy for this job.

#include <memory>
#include <string>
#include <vector>

#include "common/model/strategy.hpp"

namespace gcnlab {

// The strategies that take --order transform (W before the SpMM).
std::vector<std::string> order_strategies();

std::unique_ptr<Strategy> make_strategy(const StrategyOptions& opts, const StrategyContext& ctx);
std::vector<std::string> strategy_names();
// The number of factors of the strategy's --grid (1 for a 1D strategy).
int grid_axes(const std::string& algo);

}  // namespace gcnlab
