#pragma once
// ScaleGNN's model (Wei et al., 2026, Sec. III-A/B, Fig. 2), --model scalegnn:
//   X_h,0 = X_in W_in                                          (Eq. 4, linear)
//   X_h,l = dropout(ReLU(RMSNorm(Âᵀ X_h,l-1 W_l))) + X_h,l-1   (Eq. 5-10, l = 1..L)
//   O     = X_h,L W_out                                        (Eq. 11, linear)
// with RMSNorm(x) = γ ⊙ x / sqrt(mean(x²) + ε) per row and a learned scale γ
// per layer (Eq. 7, 29); --layers is L, so the model has L + 2 weight
// matrices, all but the first hidden-wide. After each graph convolution (a
// norm block) the strategy moves RMSNorm's row statistics and dL/dγ and
// reshards the residual between its layouts (Strategy::sum_over_columns,
// sum_over_rows, reshard: Sec. IV-C4); backward
//   G_l = RMSNorm'(ReLU'(dropout'(dX_l+1))),  dX_l = strategy's dX_l + reshard(dX_l+1).

#include "common/model/model.hpp"

namespace gcnlab {

class ScaleGnnModel final : public Model {
 public:
  Architecture architecture(const ModelConfig& c, std::int64_t features, std::int64_t classes) const override;
  // W_l of every weight layer, then S<k>: RMSNorm's scale γ of GNN layer k
  // (weight layer k + 1), 1 x hidden, initialised to 1, not decayed.
  std::vector<ParameterSpec> parameters(const ModelConfig& c, const Architecture& a) const override;
  void check(const ModelConfig& c, ActivationPlan plan) const override;
  // X_l, dX_l, Z_l, G_l per layer and a norm block's row statistics; no input
  // dropout; a linear layer's output is the next layer's input as it is (Eq. 4).
  void bind_activations(ActivationSlots& slots, const BufferPlan& p, std::vector<LayerBuffers>& layers) const override;
  void forward(Pass& p) const override;
  void backward(Pass& p) const override;

 private:
  // Eq. 7-10 after layer l's Z, into layer l+1's input; and its backward pass into layer l's G.
  static void norm_forward(const Pass& p, int l);
  static void norm_backward(const Pass& p, int l);
  // γ of weight layer l's norm block.
  static Parameter& scale(const Pass& p, int l);
};

}  // namespace gcnlab
