// The registry entry of mggcn-1d (algorithms/registry.cpp).
#include "algorithms/mggcn-1d/mggcn_1d.hpp"
#include "algorithms/shared_options.hpp"

namespace gcnlab {

StrategyInfo mggcn_1d_strategy() {
  StrategyInfo s;
  s.name = "mggcn-1d";
  s.summary = "MG-GCN: 1D with broadcasts overlapped and buffers shared across layers (Balın et al. ICPP'22, Sec. 4)";
  s.grids = one_grid;
  s.caps.any_order = s.caps.attention = true;  // GAT: 1d's edge tensors and exchanges (OneDStrategy)
  s.options = {{"overlap", "MODE", StrategyOption::Kind::on_off, "on", {"on", "off"}, 0,
                "broadcast of the next tile while the SpMM multiplies this one (default on)"},
               elide_option()};
  s.make = make<MgGcn1DStrategy>;
  return s;
}

}  // namespace gcnlab
