// The registry entry of scalegnn-4d (algorithms/registry.cpp).
#include "algorithms/scalegnn-4d/scalegnn_4d.hpp"
#include "algorithms/shared_options.hpp"

namespace gcnlab {

StrategyInfo scalegnn_4d_strategy() {
  StrategyInfo s;
  s.name = "scalegnn-4d";
  s.summary = "ScaleGNN 4D mini-batch: D data-parallel groups of a 3D PMM (Wei et al. 2026)";
  s.grid_axes = 4;
  s.grids = factor_grids<4>;
  s.caps.minibatch = s.caps.bf16_comm = s.caps.norm_blocks = true;
  s.caps.full_graph = false;  // --batch-size B (B = N: the whole graph)
  s.caps.plan = false;  // mini-batch steps; its full-graph step is plexus-3d in each group
  s.options = pmm_options();
  s.make = make<ScaleGnn4DStrategy>;
  return s;
}

}  // namespace gcnlab
