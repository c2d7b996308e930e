#include "models/sage/sage.hpp"

#include <fmt/format.h>

namespace gcnlab {

namespace {

// LayerBuffers::own of a layer
enum Own { kRoot, kRootGrad, kRootProduct };

std::string root_name(int l) { return fmt::format("Wroot{}", l); }

// Whether the root term's GEMM adds R_l S_l into the convolution's Z_l
// (Primitives::linear_add): where the strategy's linear maps are local.
bool adds_root(const Strategy& st) { return st.local_linear(); }
// Whether its gradient's GEMM adds dR_l into the convolution's dX_l
// (linear_backward_add): also where G_l and dX_l have storage of their own
// (under MG-GCN's shared plan the convolution's dX_l overwrites G_l, which
// dR_l = G_l S_lᵀ reads first).
bool adds_root_gradient(const Strategy& st) {
  return adds_root(st) && st.activation_plan() == ActivationPlan::per_layer;
}

}  // namespace

Architecture SageModel::architecture(const ModelConfig& c, std::int64_t features, std::int64_t classes) const {
  Architecture a = convolutions(widths(c, features, classes), "sage");
  a.values = EdgeValues::mean;
  a.self_term = true;
  return a;
}

std::vector<ParameterSpec> SageModel::parameters(const ModelConfig& c, const Architecture& a) const {
  std::vector<ParameterSpec> out = Model::parameters(c, a);  // W<l>: the neighbour weights
  const int L = a.weight_layers();
  for (int l = 0; l < L; ++l) {
    ParameterSpec root = layer_weight(l);
    root.name = root_name(l);
    root.stream = L + l;  // its own Glorot draw
    out.push_back(root);
  }
  for (int l = 0; l < L; ++l) out.push_back(bias(l));
  return out;
}

void SageModel::bind_layer(ActivationSlots& slots, const BufferPlan& p, int l, LayerBuffers& s) const {
  const Strategy& st = *p.strategy;
  const Layout aggregated = aggregated_layout(st, l);
  const Layout& out = st.layout(l + 1);
  s.own.assign(3, View{});
  if (!st.same_rows()) s.own[kRoot] = slots.take(aggregated);  // else R_l is X_l (Pass::aligned)
  if (p.input_gradient(l) && !adds_root_gradient(st)) s.own[kRootGrad] = slots.take(aggregated);
  if (!adds_root(st)) s.own[kRootProduct] = slots.take(out);
}

void SageModel::layer_forward(const Pass& p, int l, ConstView x) const {
  LayerBuffers& s = p.buf.layers[l];
  p.layer_forward(l, x);  // Z = Mᵀ X W
  const ConstView r = p.aligned(l, x, s.own[kRoot]);
  const ConstView root = p.buf.param(root_name(l)).value;
  if (adds_root(p.strategy)) p.primitives.linear_add(l, r, root, s.z);  // Z += R S
  else p.primitives.linear(l, r, root, s.own[kRootProduct]);            // added in the activation's pass
}

// R_l S_l, where it has a buffer of its own (else in Z_l already: none)
ConstView SageModel::addend(const Pass& p, int l) const { return p.buf.layers[l].own[kRootProduct]; }

void SageModel::layer_backward(const Pass& p, int l, ConstView x, View* dx) const {
  LayerBuffers& s = p.buf.layers[l];
  Parameter& root = p.buf.param(root_name(l));
  // R_l again: the backward's X_l is the forward's (recomputed under the shared plan), the copy's source
  const ConstView r = p.strategy.same_rows() ? x : static_cast<ConstView>(s.own[kRoot]);
  if (adds_root_gradient(p.strategy)) {
    p.layer_backward(l, x, dx);
    if (dx) return p.primitives.linear_backward_add(l, r, s.g, root.value, root.grad, *dx);  // dX += G Sᵀ
    return p.primitives.linear_backward(l, r, s.g, root.value, root.grad, nullptr);
  }
  // G_l is read here, before the convolution's dX_l may overwrite it (shared plan)
  View root_grad = s.own[kRootGrad];
  p.primitives.linear_backward(l, r, s.g, root.value, root.grad, dx ? &root_grad : nullptr);
  p.layer_backward(l, x, dx);
  if (dx) p.add_aligned(l, root_grad, *dx);
}

}  // namespace gcnlab
