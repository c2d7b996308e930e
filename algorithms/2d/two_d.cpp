#include "algorithms/2d/two_d.hpp"

namespace gcnlab {

namespace {
std::vector<int> two_d_grid(const StrategyOptions& opts, int p) {
  if (opts.grid.empty()) return default_grid(p, 2);
  GCNLAB_CHECK(opts.grid.size() == 2, "--algo 2d needs --grid RxC (got {})", format_grid(opts.grid));
  return opts.grid;
}
}  // namespace

TwoDStrategy::TwoDStrategy(const StrategyOptions& opts, const StrategyContext& ctx)
    : SplitSummaStrategy(opts, ctx, two_d_grid(opts, ctx.world.size())) {}

std::string TwoDStrategy::describe() const {
  return fmt::format("2d (CAGNET Alg. 3, SUMMA): grid {} (R x C); Âᵀ and activations in 2D blocks, W replicated, "
                     "{}; {}",
                     grid_.shape(), variant_description(), layout_description());
}

}  // namespace gcnlab
