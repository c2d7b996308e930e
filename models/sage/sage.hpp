#pragma once
// GraphSAGE (Hamilton et al., NeurIPS'17) as PyTorch Geometric 2.3.1's
// SAGEConv computes it with its defaults (aggr="mean", root_weight=True,
// bias on the neighbour term, normalize=False), --model sage: the layer stack
// of common/model/layer_stack.hpp (ReLU, dropout) with layer l
//
//   h'_i = W_n · mean_{j -> i} h_j + W_s · h_i + b     (a vertex without in-neighbours aggregates to 0)
//
// in gcnlab's row-vector notation, on the strategies' primitives:
//   forward   Z_l = Mᵀ X_l W_l + R_l S_l + 1 b_lᵀ,  R_l = align(X_l)
//             M: the mean values (EdgeValues::mean, 1 / d_in(i) on j -> i),
//             Mᵀ X W the graph convolution in its product orders
//             (common/model/convolution.hpp); R_l: X_l in aggregated_layout(l)
//             (Pass::aligned: X_l itself, or plexus-3d's reshard); R_l S_l
//             added into Z_l by its GEMM (linear_add) where the strategy's
//             linear maps are local, else by the stack in its activation's
//             pass with b_l (addend, biased)
//   backward  db_l = Σ_i G_i (the stack's);  dS_l = R_lᵀ G_l and
//             dR_l = G_l S_lᵀ (linear_backward);  dW_l and dX_l of the
//             convolution;  dX_l += align'(dR_l) (in dR_l's GEMM,
//             linear_backward_add, where Z_l's root term is and G_l and
//             dX_l have storage of their own: not MG-GCN's shared plan)
// Parameters: W<l> (the neighbour weight, f_l x f_{l+1}), Wroot<l> (the root
// weight S_l) and b<l> (1 x f_{l+1}, zeros); weight decay on all three, as
// an optimiser over PyG's model.parameters() applies it.

#include "common/model/layer_stack.hpp"

namespace gcnlab {

class SageModel final : public LayerStack {
 public:
  Architecture architecture(const ModelConfig& c, std::int64_t features, std::int64_t classes) const override;
  std::vector<ParameterSpec> parameters(const ModelConfig& c, const Architecture& a) const override;

 protected:
  bool biased() const override { return true; }
  // R_l S_l, added to Z_l with the bias in the activation's pass (none where linear_add adds it).
  ConstView addend(const Pass& p, int l) const override;
  void layer_forward(const Pass& p, int l, ConstView x) const override;
  void layer_backward(const Pass& p, int l, ConstView x, View* dx) const override;
  // R_l (where the layouts differ); dR_l (aggregated_layout(l)) and R_l S_l
  // (layout(l+1)), each where its GEMM does not add it in place.
  void bind_layer(ActivationSlots& slots, const BufferPlan& p, int l, LayerBuffers& s) const override;
};

}  // namespace gcnlab
