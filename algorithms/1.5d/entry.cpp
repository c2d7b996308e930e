// The registry entry of 1.5d (algorithms/registry.cpp).
#include "algorithms/1.5d/one_half_d.hpp"
#include "algorithms/shared_options.hpp"

namespace gcnlab {

StrategyInfo one_half_d_strategy() {
  StrategyInfo s;
  s.name = "1.5d";
  s.summary = "CAGNET 1.5D: block rows replicated c times on an R x c grid (Tripathy et al. SC'20, Alg. 2)";
  s.grid_axes = 2;
  s.grids = factor_grids<2>;
  s.caps.any_order = s.caps.attention = true;
  s.options = {replication_option(), elide_option()};
  s.make = make<OneHalfDStrategy>;
  return s;
}

}  // namespace gcnlab
