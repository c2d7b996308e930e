// The registry entry of scalegnn (models/registry.cpp).
#include "models/registry.hpp"
#include "models/scalegnn/scalegnn.hpp"

namespace gcnlab {

ModelInfo scalegnn_model() {
  ModelInfo m;
  m.name = m.demands.name = "scalegnn";
  m.summary = "ScaleGNN's model: input projection, graph convolutions with RMSNorm and residuals, output head "
              "(Wei et al. 2026, Sec. III)";
  m.demands.title = "input projection, RMSNorm, residuals: ScaleGNN Sec. III";
  m.demands.norm_blocks = true;
  m.demands.fixed_order = true;
  m.demands.one_ordering = true;  // the residuals
  m.make = make<ScaleGnnModel>;
  return m;
}

}  // namespace gcnlab
