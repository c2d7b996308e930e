// The registry entry of serial (algorithms/registry.cpp).
#include "algorithms/registry.hpp"
#include "algorithms/serial/serial.hpp"

namespace gcnlab {

StrategyInfo serial_strategy() {
  StrategyInfo s;
  s.name = "serial";
  s.summary = "the oracle: one rank holds the whole graph, one SpMM and GEMMs per layer (Kipf & Welling's GCN)";
  s.grids = [](int) { return std::vector<std::vector<int>>{{1}}; };
  s.caps.any_order = s.caps.minibatch = s.caps.dp_oracle = s.caps.norm_blocks = s.caps.attention = true;
  s.caps.plan = false;  // not distributed
  s.make = make<SerialStrategy>;
  return s;
}

}  // namespace gcnlab
