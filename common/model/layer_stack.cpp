#include "common/model/layer_stack.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "common/core/error.hpp"

namespace gcnlab {

std::vector<std::int64_t> LayerStack::widths(const ModelConfig& c, std::int64_t features, std::int64_t classes) {
  std::vector<std::int64_t> dims{features};
  for (int l = 1; l < c.layers; ++l) dims.push_back(c.hidden);
  dims.push_back(classes);
  return dims;
}

void LayerStack::bind_activations(ActivationSlots& slots, const BufferPlan& p, std::vector<LayerBuffers>& layers) const {
  const Strategy& st = *p.strategy;
  const int L = p.weight_layers();
  const auto drop = [&](int l) { return p.config.dropout > 0 && drops_input(p.arch, l); };
  if (!p.shared()) {  // Z_l (H_{l+1} or dropout(H_{l+1}) after ReLU), dX_l (G_{l-1} after ReLU'), G_{L-1}
    // ReLU's backward reads H_{l+1} (or X_{l+1} = dropout(H_{l+1}), which training writes instead of H),
    // never Z_l, so ReLU runs in place in Z_l's buffer, as an autograd framework frees Z once ReLU has run
    // (ELU's backward reads Z: H and X then have buffers of their own); the activation's backward writes
    // G_{l-1} over dX_l (input_gradient(l) for l > 0), read by nothing after.
    const bool relu = activation() == Activation::relu;
    for (int l = 0; l < L; ++l) {
      LayerBuffers& s = layers[l];
      const Layout& in = st.layout(l);
      if (l > 0) s.h = relu ? layers[l - 1].z : slots.take(in);
      if (drop(l)) s.x = relu && l > 0 ? layers[l - 1].z : slots.take(in);  // X_0 = dropout(features)
      if (p.input_gradient(l)) s.dx = slots.take(in);
      if (l > 0) layers[l - 1].g = s.dx;
      s.z = slots.take(st.layout(l + 1));
    }
    layers[L - 1].g = slots.take(st.layout(L));
    for (int l = 0; l < L; ++l) bind_layer(slots, p, l, layers[l]);
    return;
  }
  // MG-GCN Sec. 4.2: layer l's buffer holds Z_l -> H_{l+1} (Eq. 18) -> G_l (19) -> dX_l (21).
  std::int64_t widest_dropped = 0;
  bool any_dropped = false;
  for (int l = 0; l < L; ++l) {
    LayerBuffers& s = layers[l];
    const Layout& in = st.layout(l);
    const Layout& out = st.layout(l + 1);
    float* a = slots.take(std::max(size_of(out), p.input_gradient(l) ? size_of(in) : 0));
    s.z = s.g = shaped(a, out);
    if (l + 1 < L) layers[l + 1].h = shaped(a, out);
    if (p.input_gradient(l)) s.dx = shaped(a, in);
    if (drop(l)) widest_dropped = std::max(widest_dropped, size_of(in)), any_dropped = true;
  }
  if (any_dropped) {  // X_l = dropout(H_l), written before each forward and backward product of layer l
    float* x = slots.take(widest_dropped);
    for (int l = 0; l < L; ++l)
      if (drop(l)) layers[l].x = shaped(x, st.layout(l));
  }
  for (int l = 0; l < L; ++l) bind_layer(slots, p, l, layers[l]);
}

void LayerStack::drop_input(const Pass& p, int l) {
  p.elementwise([&](Backend& b) {
    LayerBuffers& s = p.buf.layers[l];
    b.dropout(s.h, s.x, s.row_ids.data(), p.strategy.layout(l).col0, p.dropout(l));
  });
}

void LayerStack::forward(Pass& p) const {
  const int L = p.arch.weight_layers();
  const bool shared = p.strategy.activation_plan() == ActivationPlan::shared;
  const auto drop = [&](int l) { return p.training && dropped(p, l); };
  for (int l = 0; l < L; ++l) {
    LayerBuffers& s = p.buf.layers[l];
    // X_0 = dropout(H_0); per layer, the later inputs come out of the fused ReLU below
    if (drop(l) && (l == 0 || shared)) drop_input(p, l);
    layer_forward(p, l, drop(l) ? s.x : s.h);
    const float* bias = biased() ? p.buf.param(LayerStack::bias(l).name).value.data() : nullptr;
    const ConstView extra = addend(p, l);
    GCNLAB_ASSERT(!extra.data || bias);
    const bool elu = activation() == Activation::elu;
    GCNLAB_ASSERT(!elu || (biased() && !extra.data));  // ELU follows a biased layer (Backend::bias_elu)
    if (l + 1 == L && (bias || extra.data)) {  // no activation: the logits
      p.elementwise([&](Backend& b) {
        if (extra.data) b.axpy(1.f, extra, s.z);
        if (bias) b.add_row(bias, s.z);
      });
    }
    if (l + 1 == L) break;
    p.elementwise([&](Backend& b) {
      LayerBuffers& next = p.buf.layers[l + 1];
      if (drop(l + 1) && !shared) {
        const std::int64_t col0 = p.strategy.layout(l + 1).col0;
        if (elu) b.bias_elu_dropout(s.z, bias, next.x, next.row_ids.data(), col0, p.dropout(l + 1));
        else if (bias) b.bias_relu_dropout(s.z, extra, bias, next.x, next.row_ids.data(), col0, p.dropout(l + 1));
        else b.relu_dropout(s.z, next.x, next.row_ids.data(), col0, p.dropout(l + 1));
      } else if (elu) {
        b.bias_elu(s.z, bias, next.h);  // in place under the shared plan
      } else if (bias) {
        b.bias_relu(s.z, extra, bias, next.h);  // in place under the shared plan
      } else {
        b.relu(s.z, next.h);
      }
    });
  }
}

void LayerStack::backward(Pass& p) const {
  const bool shared = p.strategy.activation_plan() == ActivationPlan::shared;
  for (int l = p.arch.weight_layers() - 1; l >= 0; --l) {
    LayerBuffers& s = p.buf.layers[l];
    const bool drop = dropped(p, l);
    if (shared && drop) drop_input(p, l);  // the forward's X_l was overwritten
    const bool input_gradient = p.input_gradient(l);
    View dx = input_gradient ? s.dx : View{};
    if (biased()) bias_backward(p, l);  // reads G_l before layer_backward may write dX_l over it (shared plan)
    layer_backward(p, l, drop ? s.x : s.h, input_gradient ? &dx : nullptr);
    if (!input_gradient) break;
    // G_{l-1}, and with a bias its column sums, the bias's gradient (bias_backward)
    float* sums = biased() && l > 0 ? p.buf.param(bias(l - 1).name).grad.data() : nullptr;
    p.elementwise([&](Backend& b) {
      if (l == 0) {  // the trained features: dropout's backward is the same mask and scale
        if (drop) b.dropout(s.dx, s.dx, s.row_ids.data(), p.strategy.layout(0).col0, p.dropout(0));
      } else if (activation() == Activation::elu) {  // prev.z holds ELU(Z + 1 bᵀ) under the shared plan (in place)
        const LayerBuffers& prev = p.buf.layers[l - 1];
        const ew::EluOperand of = shared ? ew::EluOperand::output : ew::EluOperand::input;
        const float* bias = p.buf.param(LayerStack::bias(l - 1).name).value.data();  // Z_{l-1} holds none
        if (drop)
          b.dropout_elu_backward_sums(s.dx, prev.z, bias, of, s.row_ids.data(), p.strategy.layout(l).col0,
                                      p.dropout(l), prev.g, sums);
        else
          b.elu_backward_sums(s.dx, prev.z, bias, of, prev.g, sums);
      } else if (drop) {
        const float scale = p.dropout(l).scale();
        if (sums) b.dropout_relu_backward_sums(s.dx, s.x, scale, p.buf.layers[l - 1].g, sums);
        else b.dropout_relu_backward(s.dx, s.x, scale, p.buf.layers[l - 1].g);
      } else if (sums) {  // ReLU' from H_l = ReLU(Z_{l-1} + ...): Z_{l-1} holds no bias (Backend::bias_relu)
        b.relu_backward_sums(s.dx, s.h, p.buf.layers[l - 1].g, sums);
      } else {
        b.relu_backward(s.dx, s.h, p.buf.layers[l - 1].g);
      }
    });
  }
}

ParameterSpec LayerStack::bias(int l) {
  ParameterSpec b;
  b.name = fmt::format("b{}", l);
  b.layer = l;
  b.placement = ParameterSpec::Placement::columns;
  b.init = ParameterSpec::Init::zeros;
  return b;
}

void LayerStack::bias_backward(const Pass& p, int l) const {
  Parameter& b = p.buf.param(bias(l).name);
  // this rank's rows of Σ_i G_i: taken with G_l by the activation's backward, or here
  const bool summed = l + 1 < p.arch.weight_layers();
  if (!summed) p.elementwise([&](Backend& be) { be.column_sums(p.buf.layers[l].g, b.grad.data()); });
  p.primitives.sum_over_rows(l + 1, b.grad);
}

}  // namespace gcnlab
