// The registry entry of gat (models/registry.cpp).
#include "models/gat/gat.hpp"
#include "models/registry.hpp"

namespace gcnlab {

ModelInfo gat_model() {
  ModelInfo m;
  m.name = m.demands.name = "gat";
  m.summary = "GAT: multi-head attention over each vertex's in-neighbours and itself, ELU between layers, as PyG's "
              "GATConv (Veličković et al., ICLR'18)";
  m.demands.title = "graph attention";
  m.demands.attention = true;        // its edge values are the strategy's edge tensors
  m.demands.full_graph_only = true;  // the softmax is over every in-neighbour: no sampled form
  m.demands.fixed_order = true;      // it transforms first (the scores are dots with X W)
  m.flags = {"--heads", "--concat", "--output-heads", "--attention-dropout"};
  m.make = make<GatModel>;
  return m;
}

}  // namespace gcnlab
