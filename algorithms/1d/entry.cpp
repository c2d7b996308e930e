// The registry entry of 1d (algorithms/registry.cpp).
#include "algorithms/1d/one_d.hpp"
#include "algorithms/shared_options.hpp"

namespace gcnlab {

StrategyInfo one_d_strategy() {
  StrategyInfo s;
  s.name = "1d";
  s.summary = "CAGNET 1D: block rows, P broadcasts per SpMM (Tripathy et al. SC'20, Alg. 1)";
  s.grids = one_grid;
  s.caps.any_order = s.caps.attention = true;
  s.options = {elide_option()};
  s.make = make<OneDStrategy>;
  return s;
}

}  // namespace gcnlab
