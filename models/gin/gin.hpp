#pragma once
// GIN (Xu et al., "How Powerful are Graph Neural Networks?", ICLR'19, Eq. 4.1)
// as PyTorch Geometric 2.3.1's GINConv computes it with a two-layer MLP,
// --model gin:
//
//   h'_i = MLP((1 + ε) h_i + Σ_{j -> i} h_j),  MLP = Linear, ReLU, Linear (each with a bias)
//
// ε fixed (--gin-eps, default 0) or learned, one per GIN layer (--train-eps;
// --gin-eps its initial value). --layers K GIN layers of widths f_0 -> hidden
// ... -> classes, ReLU and dropout between them (dropout on each GIN layer's
// input, none inside its MLP; the last MLP's output is the logits). Each GIN
// layer is two weight layers of the layer stack (common/model/layer_stack.hpp):
// weight layer 2k a convolution, 2k + 1 a linear layer, whose ReLU between
// them is the MLP's. In gcnlab's row-vector notation, on the strategies'
// primitives (S: the sum values, EdgeValues::sum, 1 per edge j -> i):
//
//   forward   A = Sᵀ X + (1 + ε) R,  R = align(X)        (aggregate_plus, Pass::aligned: X itself where the layouts agree)
//             Z_{2k} = A W_{2k} + 1 b_{2k}ᵀ              (linear: the MLP's first layer)
//             Z_{2k+1} = ReLU(Z_{2k}) W_{2k+1} + 1 b_{2k+1}ᵀ   (the stack's ReLU, a linear layer)
//   backward  db = Σ_i G_i (the stack's);  dW = Aᵀ G and dA = G Wᵀ (linear_backward)
//             D = align'(dA) (layout(l)): dε = <X, D> (Backend::inner_product, sum_over_layout)
//             dX = S dA + (1 + ε) D                       (aggregate_plus backward)
// The self term (1 + ε) R rides in the aggregation's output pass where the
// strategy's product covers whole output rows (serial), else an axpy after it.
//
// The convolution aggregates at its input's width first, as GINConv does (the
// sum must precede the MLP's first linear map when it is followed by others;
// --order stays auto). Parameters W<l>, b<l> of each weight layer l, and
// eps<k> of GIN layer k with --train-eps (1 x 1, on every rank); weight decay
// on all of them, as an optimiser over PyG's model.parameters() applies it.

#include "common/model/layer_stack.hpp"

namespace gcnlab {

class GinModel final : public LayerStack {
 public:
  Architecture architecture(const ModelConfig& c, std::int64_t features, std::int64_t classes) const override;
  std::vector<ParameterSpec> parameters(const ModelConfig& c, const Architecture& a) const override;
  bool convolves(const Architecture& a, int l) const override;

 protected:
  bool biased() const override { return true; }
  void layer_forward(const Pass& p, int l, ConstView x) const override;
  void layer_backward(const Pass& p, int l, ConstView x, View* dx) const override;
  // A (aggregated_layout(l)); R, then dA (aggregated_layout(l): R is dead
  // once A is formed); D (layout(l), where the layouts differ: else D is dA).
  void bind_layer(ActivationSlots& slots, const BufferPlan& p, int l, LayerBuffers& s) const override;
  bool drops_input(const Architecture& a, int l) const override { return a.conv(l); }

 private:
  // The term (1 + ε_l) x of the GIN layer whose convolution is weight layer l, which
  // the aggregation adds in its output pass (Primitives::aggregate_plus); a trained
  // ε is read where the kernel runs (no host round trip per layer and pass).
  static RowTerm root(const Pass& p, int l, ConstView x);
};

}  // namespace gcnlab
