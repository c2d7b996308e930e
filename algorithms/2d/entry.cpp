// The registry entry of 2d (algorithms/registry.cpp).
#include "algorithms/2d/two_d.hpp"
#include "algorithms/shared_options.hpp"

namespace gcnlab {

StrategyInfo two_d_strategy() {
  StrategyInfo s;
  s.name = "2d";
  s.summary = "CAGNET 2D: SUMMA on an R x C grid (Tripathy et al. SC'20, Alg. 3)";
  s.grid_axes = 2;
  s.grids = factor_grids<2>;
  s.caps.attention = true;
  s.options = summa_options();
  s.make = make<TwoDStrategy>;
  return s;
}

}  // namespace gcnlab
