// The registry entry of plexus-3d (algorithms/registry.cpp).
#include "algorithms/plexus-3d/plexus_3d.hpp"
#include "algorithms/shared_options.hpp"

namespace gcnlab {

StrategyInfo plexus_3d_strategy() {
  StrategyInfo s;
  s.name = "plexus-3d";
  s.summary = "Plexus 3D tensor parallelism on X x Y x Z, double permutation (Ranjan et al. SC'25)";
  s.grid_axes = 3;
  s.grids = factor_grids<3>;
  s.caps.bf16_comm = s.caps.norm_blocks = s.caps.permutations = s.caps.perf_model = true;
  s.caps.attention = true;  // GAT's edge tensors on the adjacency shards (attention.hpp)
  s.options = pmm_options();
  s.options.push_back(elide_option());
  s.make = make<Plexus3DStrategy>;
  return s;
}

}  // namespace gcnlab
