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
  // columns wide (concatenated; dims[l+1] wide where head_mean averages them), LeakyReLU's negative slope in its scores, and
  // whether training drops attention coefficients (the strategy then keeps
  // β = dropout(α) beside α). Strategies with StrategyCaps::attention lay out
  // its edge tensors (Primitives::attention).
  std::vector<int> heads;
  float attention_slope = 0.2f;
  bool attention_dropout = false;
  // Per weight layer, whether its heads are averaged (PyG's GATConv(concat=False);
  // the GAT paper's output layers) instead of concatenated (empty: none).
  // Such a layer's Z = X W is heads x dims[l+1] wide (transformed(l)) and
  // class-major — column c·H + h is head h of output column c — so that a
  // rank holding output columns F holds all their heads' columns of Z, W and
  // the attention vectors, contiguous ([H·min F, H·(max F + 1))); its output
  // column c is the mean over h (common/backend/edge_ops.hpp, HeadSplit).
  std::vector<bool> head_mean;

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
  // The heads layer l averages: H where it averages more than one, else 1
  // (one head's mean is the head: the concatenated layout, unchanged).
  int averaged(int l) const {
    const bool mean = !head_mean.empty() && head_mean[static_cast<std::size_t>(l)];
    return mean && heads_of(l) > 1 ? heads_of(l) : 1;
  }
  // The width of Z_l = X_l W_l (W_l's columns): f_{l+1}, or H f_{l+1} where layer l averages H heads.
  std::int64_t transformed(int l) const { return dims[static_cast<std::size_t>(l + 1)] * averaged(l); }
  // transformed(l) of every weight layer: W_l's columns.
  std::vector<std::int64_t> weight_cols() const {
    std::vector<std::int64_t> w;
    for (int l = 0; l < weight_layers(); ++l) w.push_back(transformed(l));
    return w;
  }
  // Whether any layer averages more than one head.
  bool averages() const {
    for (int l = 0; l < weight_layers(); ++l)
      if (averaged(l) > 1) return true;
    return false;
  }
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
