// The registry entry of sage (models/registry.cpp).
#include "models/registry.hpp"
#include "models/sage/sage.hpp"

namespace gcnlab {

ModelInfo sage_model() {
  ModelInfo m;
  m.name = m.demands.name = "sage";
  m.summary = "GraphSAGE: mean over in-neighbours, root weight and bias, as PyG's SAGEConv (Hamilton et al., NeurIPS'17)";
  m.demands.title = "GraphSAGE convolutions";
  m.demands.full_graph_only = true;  // mean values: no sampled form
  m.demands.one_ordering = true;     // the root term W_r h_i
  m.make = make<SageModel>;
  return m;
}

}  // namespace gcnlab
