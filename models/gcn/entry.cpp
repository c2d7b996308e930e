// The registry entry of gcn (models/registry.cpp).
#include "models/gcn/gcn.hpp"
#include "models/registry.hpp"

namespace gcnlab {

ModelInfo gcn_model() {
  ModelInfo m;
  m.name = m.demands.name = "gcn";
  m.summary = "GCN: graph convolutions Z = ÂᵀXW with ReLU and dropout (Kipf & Welling, ICLR'17)";
  m.demands.title = "graph convolutions";
  m.make = make<GcnModel>;
  return m;
}

}  // namespace gcnlab
