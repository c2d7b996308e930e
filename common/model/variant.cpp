#include "common/model/variant.hpp"

#include "common/core/error.hpp"

namespace gcnlab {

ModelVariant parse_model_variant(const std::string& s) {
  if (s == "gcn") return ModelVariant::gcn;
  if (s == "scalegnn") return ModelVariant::scalegnn;
  fail("unknown --model '{}' (expected gcn or scalegnn)", s);
}

std::string to_string(ModelVariant v) { return v == ModelVariant::scalegnn ? "scalegnn" : "gcn"; }

std::vector<LayerKind> layer_kinds(ModelVariant v, int weight_layers) {
  std::vector<LayerKind> kinds(static_cast<std::size_t>(weight_layers), LayerKind::conv);
  if (v == ModelVariant::scalegnn && weight_layers >= 2) kinds.front() = kinds.back() = LayerKind::linear;
  return kinds;
}

}  // namespace gcnlab
