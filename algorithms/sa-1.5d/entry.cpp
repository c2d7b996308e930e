// The registry entry of sa-1.5d (algorithms/registry.cpp).
#include "algorithms/sa-1.5d/sa_one_half_d.hpp"
#include "algorithms/shared_options.hpp"

namespace gcnlab {

StrategyInfo sa_one_half_d_strategy() {
  StrategyInfo s;
  s.name = "sa-1.5d";
  s.summary = "sparsity-aware 1.5D on an R x c grid (Mukhopadhyay et al. ICPP'24, Alg. 2)";
  s.grid_axes = 2;
  s.grids = factor_grids<2>;
  s.caps.any_order = s.caps.attention = true;
  s.options = {replication_option(), elide_option()};
  s.make = make<SaOneHalfDStrategy>;
  return s;
}

}  // namespace gcnlab
