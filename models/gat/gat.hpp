#pragma once
// GAT (Veličković et al., "Graph Attention Networks", ICLR'18, Eq. 1-6) as
// PyTorch Geometric 2.3.1's GATConv computes it (add_self_loops, bias,
// negative_slope 0.2), --model gat: the layer stack of common/model/
// layer_stack.hpp with ELU between the layers (the paper's) and dropout on
// every layer's input (--dropout), and each layer l an attention layer of H
// heads (--heads for the hidden layers, each --hidden wide, concatenated or,
// with --concat off, averaged; --output-heads for the output layer, averaged:
// one in the paper's Cora model, six in its PPI model, Eq. 6):
//
//   Z = X W                                           (linear; transformed_layout(l))
//   s_j = a_src,h · Z_j,h,  d_i = a_dst,h · Z_i,h      (per head, both in one pass over Z: Backend::head_dots)
//   α_ij = softmax_{j -> i} LeakyReLU(s_j + d_i)       (attention: the strategy's edge tensors, Eq. 3)
//   out_i = Σ_j dropout(α_ij) Z_j,h per head + b       (aggregate_attention, Eq. 5; --attention-dropout)
//           or its mean over h where the layer averages (Eq. 6; Architecture::head_mean)
//
// and its backward (G = dL/dout, layout(l+1)):
//   db = Σ_i G_i (the stack's: LayerStack::biased, sum_over_rows)
//   βᵀ G, ds, dd = attention_backward(G, Z): the aggregation's adjoint, the
//            SDDMM dβ_ij = G_i · Z_j (one pass over the edges for both), the
//            dropout's mask, the softmax's and LeakyReLU's backward, and the
//            edge sums over each source (ds) and target (dd)
//   dZ = βᵀ G + ds a_srcᵀ + dd a_dstᵀ per head  (head_dots_backward: one pass over dZ and Z
//   da_src = Σ_j ds_j Z_j per head, da_dst likewise   for all three; then sum_over_rows)
//   dW, dX (linear_backward)
// Parameters: W<l> (f_l x H C, Glorot), att_src<l>, att_dst<l> (1 x H C,
// Glorot over PyG's (1, H, C) shape), b<l> (zeros); weight decay on all of
// them, as an optimiser over PyG's model.parameters() applies it. An
// averaging layer's W and attention vectors are class-major (column c H + h;
// PyG's are head-major, h C + c), so that a feature split holds all heads of
// its columns; concatenated ones are PyG's order.

#include "common/model/layer_stack.hpp"

namespace gcnlab {

class GatModel final : public LayerStack {
 public:
  Architecture architecture(const ModelConfig& c, std::int64_t features, std::int64_t classes) const override;
  std::vector<ParameterSpec> parameters(const ModelConfig& c, const Architecture& a) const override;
  bool convolves(const Architecture&, int) const override { return false; }  // composed below

 protected:
  Activation activation() const override { return Activation::elu; }
  bool biased() const override { return true; }
  void layer_forward(const Pass& p, int l, ConstView x) const override;
  void layer_backward(const Pass& p, int l, ConstView x, View* dx) const override;
  // Z and dZ (transformed_layout(l)); s, d, ds, dd (its rows x H); the H x
  // columns product of da.
  void bind_layer(ActivationSlots& slots, const BufferPlan& p, int l, LayerBuffers& s) const override;
};

}  // namespace gcnlab
