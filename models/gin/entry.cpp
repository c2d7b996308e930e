// The registry entry of gin (models/registry.cpp).
#include "models/gin/gin.hpp"
#include "models/registry.hpp"

namespace gcnlab {

ModelInfo gin_model() {
  ModelInfo m;
  m.name = m.demands.name = "gin";
  m.summary = "GIN: (1 + ε) h_i plus the sum over in-neighbours, then a two-layer MLP, as PyG's GINConv "
              "(Xu et al., ICLR'19)";
  m.demands.title = "GIN convolutions";
  m.demands.full_graph_only = true;  // sum values: no sampled form
  m.demands.fixed_order = true;      // it aggregates first (the MLP follows the sum)
  m.demands.one_ordering = true;     // (1 + ε) h_i
  m.flags = {"--gin-eps", "--train-eps"};
  m.make = make<GinModel>;
  return m;
}

}  // namespace gcnlab
