// The registry entry of sa-1d (algorithms/registry.cpp).
#include "algorithms/shared_options.hpp"
#include "algorithms/sa-1d/sa_one_d.hpp"

namespace gcnlab {

StrategyInfo sa_one_d_strategy() {
  StrategyInfo s;
  s.name = "sa-1d";
  s.summary = "sparsity-aware 1D: each rank receives only the rows its block needs (Mukhopadhyay et al. ICPP'24, Alg. 1)";
  s.grids = one_grid;
  s.caps.any_order = s.caps.attention = true;
  s.options = {elide_option()};
  s.make = make<SaOneDStrategy>;
  return s;
}

}  // namespace gcnlab
