#pragma once
// The layer stack of Kipf & Welling's GCN, which GraphSAGE and other
// message-passing models share: L weight layers f_0 -> hidden ... -> classes
// with ReLU and dropout between them,
//   forward   X_l = dropout(H_l);  Z_l = layer_l(X_l);  H_{l+1} = ReLU(Z_l) (or ELU: activation())
//             (a model may keep dropout off some layers' inputs: drops_input)
//   backward  layer_l's parameter gradients and dX_l;  dH_l = dropout'(dX_l);
//             G_{l-1} = dH_l ⊙ ReLU'(Z_{l-1})
// A model says what layer_l is (layer_forward, layer_backward: by default
// one graph convolution Z = Âᵀ X W, convolution.hpp) and which buffers of
// its own a layer needs (bind_layer); the stack keeps the activations, the
// dropout and the ReLU.
//
// Element-wise work is fused where it touches the same matrix: X_{l+1} =
// dropout(ReLU(Z_l + 1 b_lᵀ)) in one pass (H_{l+1} is written only by the
// evaluation pass), and G_{l-1} from dX_l and X_l in one pass
// (ew::DropoutReluBackward) that also sums G_{l-1}'s columns for the bias.
// Per layer, H_{l+1} = ReLU(Z_l) (or X_{l+1}) runs in Z_l's buffer and G_{l-1} in dX_l's.
// Under MG-GCN's shared activation plan (ActivationPlan::shared) Z_l, H_{l+1},
// G_l and dX_l take turns in one buffer per layer, ReLU runs in place and
// dropout(H_l) is recomputed from its keyed mask for the backward pass
// instead of being kept. With --learn-features, layer 0 computes dL/dX_0
// (the trainer's optimiser updates H_0 from it).

#include "common/model/model.hpp"

namespace gcnlab {

// The activation between weight layers.
enum class Activation { relu, elu };

class LayerStack : public Model {
 public:
  // Per layer (two buffers a layer: Z_l, which ReLU turns into H_{l+1}, or in
  // training X_{l+1} = dropout(H_{l+1}), in place, as an autograd framework
  // frees Z once ReLU has run, and dX_l, which ReLU's backward turns into
  // G_{l-1} in place; ELU, whose backward reads Z, keeps H and X apart), or
  // MG-GCN's shared plan (Balın et al. Sec. 4.2, Eq. 16-21, Fig. 4): one buffer per
  // layer holds its output Z, then H' = ReLU(Z) in place, then G = dL/dZ,
  // then dX; dropout's input is recomputed from its keyed mask into one
  // shared buffer. With the strategy's broadcast buffers and the work slot
  // that is L + 3 buffers (+1 with dropout) beside the input features. G and
  // dX share storage: the backward reads G before it writes dX. Then each
  // layer's own buffers (bind_layer).
  void bind_activations(ActivationSlots& slots, const BufferPlan& p, std::vector<LayerBuffers>& layers) const override;
  void forward(Pass& p) const override;
  void backward(Pass& p) const override;

 protected:
  // f_0 = features, --layers - 1 hidden widths, classes.
  static std::vector<std::int64_t> widths(const ModelConfig& c, std::int64_t features, std::int64_t classes);
  // Z_l (buf.layers[l].z) from X_l.
  virtual void layer_forward(const Pass& p, int l, ConstView x) const { p.layer_forward(l, x); }
  // From G_l (buf.layers[l].g): layer l's parameter gradients and, unless dx
  // is null, dX_l. G_l may share storage with dX_l: read it before writing dX_l.
  virtual void layer_backward(const Pass& p, int l, ConstView x, View* dx) const { p.layer_backward(l, x, dx); }
  // Layer l's own buffers (LayerBuffers::own), taken after the stack's.
  virtual void bind_layer(ActivationSlots& slots, const BufferPlan& p, int l, LayerBuffers& s) const {
    (void)slots, (void)p, (void)l, (void)s;
  }
  // ReLU (GCN, SAGE, GIN) or ELU (GAT; biased() layers only). ELU's backward
  // reads Z_{l-1} and b_{l-1}, or, under MG-GCN's shared plan, which applies it
  // in place, its output (ew::EluOperand: ELU' = h + 1 where h <= 0).
  virtual Activation activation() const { return Activation::relu; }
  // Whether --dropout applies to layer l's input (every layer's by default;
  // GIN: each GIN layer's, not its MLP's hidden layer).
  virtual bool drops_input(const Architecture& a, int l) const {
    (void)a, (void)l;
    return true;
  }

  // Whether every layer has a bias on its output, Z_l += 1 b_lᵀ, as PyG's
  // layers add it: parameter b<l> (bias(l): 1 x f_{l+1}, zeros, decayed; the
  // model lists it in parameters()), its columns on the ranks that hold
  // layout(l+1)'s. The stack adds it after layer_forward, in the activation's
  // pass (Backend::bias_relu, Backend::bias_elu; Backend::add_row on the logits),
  // Z_l left unbiased, and takes dL/db_l = Σ_i G_i (in double;
  // Primitives::sum_over_rows) before layer_backward, its column sums in the
  // pass of the activation's backward that writes G_l.
  virtual bool biased() const { return false; }
  // A matrix (layout(l+1)) the stack adds to Z_l after layer_forward, in the
  // same pass, before the bias (GraphSAGE's root term R_l S_l; biased models
  // only); none (data null) by default.
  virtual ConstView addend(const Pass& p, int l) const {
    (void)p, (void)l;
    return {};
  }
  static ParameterSpec bias(int l);

 private:
  // X_l = dropout(H_l) (forward, and the shared plan's backward).
  static void drop_input(const Pass& p, int l);
  // dL/db_l (biased()): its local sums (here, or taken with G_l) summed over the ranks.
  void bias_backward(const Pass& p, int l) const;
  bool dropped(const Pass& p, int l) const { return p.config.dropout > 0 && drops_input(p.arch, l); }
};

}  // namespace gcnlab
