#pragma once
// What a strategy lays out for a model (common/model/model.hpp): the widths
// f_0..f_K, the kind of each of the K weight layers, and after which of them
// the model normalises rows and adds a residual (ScaleGNN's RMSNorm block,
// Sec. III-B). A strategy reads it at setup and provides the primitives those
// layers call on its layouts (Strategy, common/model/strategy.hpp); it never
// learns which model it runs.

#include <cstdint>
#include <string>
#include <vector>

#include "common/data/edge_values.hpp"

namespace gcnlab {

enum class LayerKind {
  conv,    // Z = Âᵀ X W: an aggregation and a linear map (common/model/convolution.hpp)
  linear,  // Z = X W: rows stay where they are (ScaleGNN's input projection and head, Eq. 4, 11)
};

struct Architecture {
  std::string model;                // --model NAME, for messages
  std::vector<std::int64_t> dims;   // f_0 .. f_K: input features, hidden widths, classes
  std::vector<LayerKind> kinds;     // weight layer l maps f_l -> f_{l+1}
  std::vector<bool> norm_after;     // layer l's output goes through RMSNorm and a residual add (Eq. 7-10)
  // The values every convolution aggregates with (common/data/edge_values.hpp):
  // the strategy reads its blocks with them.
  EdgeValues values = EdgeValues::gcn;
  // Each convolution also reads its own input rows beside the aggregate
  // (GraphSAGE's root weight W_s h_i, GIN's (1 + ε) h_i): X_l goes into
  // aggregated_layout(l), which a strategy whose layers' rows differ moves
  // (Primitives::align; plexus-3d's layer rotation).
  bool self_term = false;
  // Graph attention (GAT, models/gat): per weight layer, the number of heads
  // whose softmax-normalised edge values it aggregates with instead of
  // `values` (0: none; empty: no layer attends), each head dims[l+1] / heads
  // columns wide (concatenated), LeakyReLU's negative slope in its scores, and
  // whether training drops attention coefficients (the strategy then keeps
  // β = dropout(α) beside α). Strategies with StrategyCaps::attention lay out
  // its edge tensors (Primitives::attention).
  std::vector<int> heads;
  float attention_slope = 0.2f;
  bool attention_dropout = false;

  int weight_layers() const { return static_cast<int>(kinds.size()); }
  bool conv(int l) const { return kinds[static_cast<std::size_t>(l)] == LayerKind::conv; }
  bool norm_block(int l) const { return norm_after[static_cast<std::size_t>(l)]; }
  // Whether any layer is followed by a norm block (the strategy then provides
  // the row and column sums and the residual's reshard).
  bool residual() const {
    for (const bool b : norm_after)
      if (b) return true;
    return false;
  }
  int heads_of(int l) const { return heads.empty() ? 0 : heads[static_cast<std::size_t>(l)]; }
  bool attends() const {
    for (const int h : heads)
      if (h > 0) return true;
    return false;
  }
  bool any_conv() const {
    for (const LayerKind k : kinds)
      if (k == LayerKind::conv) return true;
    return false;
  }
};

// Every layer a graph convolution, none normalised: the plain GCN of widths
// `dims` (Plexus's and CAGNET's model; what tests of a strategy's layouts use).
inline Architecture convolutions(std::vector<std::int64_t> dims, std::string model = "gcn") {
  Architecture a;
  a.model = std::move(model);
  const std::size_t layers = dims.size() - 1;
  a.dims = std::move(dims);
  a.kinds.assign(layers, LayerKind::conv);
  a.norm_after.assign(layers, false);
  return a;
}

}  // namespace gcnlab
