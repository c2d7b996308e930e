// The registry entry of split-3d (algorithms/registry.cpp).
#include "algorithms/shared_options.hpp"
#include "algorithms/split-3d/split_3d.hpp"

namespace gcnlab {

StrategyInfo split_3d_strategy() {
  StrategyInfo s;
  s.name = "split-3d";
  s.summary = "CAGNET Split-3D-SpMM on an X x Y x Z grid (Tripathy et al. SC'20, Sec. IV-D)";
  s.grid_axes = 3;
  s.grids = factor_grids<3>;
  s.caps.attention = true;
  s.options = summa_options();
  s.make = make<Split3DStrategy>;
  return s;
}

}  // namespace gcnlab
