// The registry entry of 1d-ring (algorithms/registry.cpp).
#include "algorithms/1d-ring/ring_1d.hpp"
#include "algorithms/shared_options.hpp"

namespace gcnlab {

StrategyInfo ring_1d_strategy() {
  StrategyInfo s;
  s.name = "1d-ring";
  s.summary = "1D block rows with the dense blocks passed around a ring in P-1 point-to-point steps, overlapped "
              "with the SpMM (CAGNET Alg. 1's volume, NCCL's ring pattern)";
  s.grids = one_grid;
  s.caps.any_order = s.caps.attention = true;
  s.options = {elide_option()};
  s.make = make<Ring1DStrategy>;
  return s;
}

}  // namespace gcnlab
