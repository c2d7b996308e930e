#include "algorithms/split-3d/split_3d.hpp"

namespace gcnlab {

namespace {
std::vector<int> split_3d_grid(const StrategyOptions& opts, int p) {
  if (opts.grid.empty()) return default_grid(p, 3);
  GCNLAB_CHECK(opts.grid.size() == 3, "--algo split-3d needs --grid XxYxZ (got {})", format_grid(opts.grid));
  return opts.grid;
}
}  // namespace

Split3DStrategy::Split3DStrategy(const StrategyOptions& opts, const StrategyContext& ctx)
    : SplitSummaStrategy(opts, ctx, split_3d_grid(opts, ctx.world.size())) {}

std::string Split3DStrategy::describe() const {
  return fmt::format("split-3d (CAGNET Sec. IV-D): grid {} (X x Y x Z); Block Split 3D, SUMMA per layer, "
                     "fiber reduce-scatter, W replicated; {}; {}",
                     grid_.shape(), variant_description(), layout_description());
}

}  // namespace gcnlab
