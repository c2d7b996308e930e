#pragma once
// The graph convolutional network (Kipf & Welling, ICLR'17; CAGNET Eq. 1-3),
// --model gcn: L graph convolutions on Â = D^-1/2 (A + I) D^-1/2 with ReLU
// and dropout between them, f_0 -> hidden ... -> classes:
//   forward   X_l = dropout(H_l);  Z_l = Âᵀ X_l W_l (convolution.hpp);  H_{l+1} = ReLU(Z_l)
//   backward  dW_l, dX_l (convolution.hpp);  dH_l = dropout'(dX_l);  G_{l-1} = dH_l ⊙ ReLU'(Z_{l-1})
// Element-wise work is fused where it touches the same matrix: X_{l+1} =
// dropout(ReLU(Z_l)) in one pass (H_{l+1} is written only by the evaluation
// pass), and G_{l-1} from dX_l and X_l in one pass (ew::DropoutReluBackward).
// Under MG-GCN's shared activation plan (ActivationPlan::shared) Z_l, H_{l+1},
// G_l and dX_l take turns in one buffer per layer, ReLU runs in place and
// dropout(H_l) is recomputed from its keyed mask for the backward pass
// instead of being kept. With --learn-features, layer 0 computes dL/dX_0
// (the trainer's optimiser updates H_0 from it).

#include "common/model/model.hpp"

namespace gcnlab {

class GcnModel final : public Model {
 public:
  Architecture architecture(const ModelConfig& c, std::int64_t features, std::int64_t classes) const override;
  // Per layer, as CAGNET and DGL keep them (4-6 buffers a layer), or MG-GCN's
  // shared plan (Balın et al. Sec. 4.2, Eq. 16-21, Fig. 4): one buffer per
  // layer holds its output Z, then H' = ReLU(Z) in place, then G = dL/dZ,
  // then dX; dropout's input is recomputed from its keyed mask into one
  // shared buffer. With the strategy's broadcast buffers and the work slot
  // that is L + 3 buffers (+1 with dropout) beside the input features. G and
  // dX share storage: the backward reads G before it writes dX.
  void bind_activations(ActivationSlots& slots, const BufferPlan& p, std::vector<LayerBuffers>& layers) const override;
  void forward(Pass& p) const override;
  void backward(Pass& p) const override;

 private:
  // X_l = dropout(H_l) (forward, and the shared plan's backward).
  static void drop_input(const Pass& p, int l);
};

}  // namespace gcnlab
