#include "models/gin/gin.hpp"

#include <fmt/format.h>

#include "common/core/error.hpp"

namespace gcnlab {

namespace {

// LayerBuffers::own: a convolution's (weight layer 2k) kSum, kRootThenGrad,
// kInputGrad; a linear layer's kLinearDx under the shared plan
enum Own { kSum, kRootThenGrad, kInputGrad, kLinearDx = kSum };

std::string eps_name(int l) { return fmt::format("eps{}", l / 2); }

// Whether convolution l's backward forms dA and D: for dX_l, or for dε.
bool input_side(bool input_gradient, const ModelConfig& c) { return input_gradient || c.train_eps; }

}  // namespace

Architecture GinModel::architecture(const ModelConfig& c, std::int64_t features, std::int64_t classes) const {
  const std::vector<std::int64_t> widths = LayerStack::widths(c, features, classes);
  std::vector<std::int64_t> dims{widths.front()};
  for (std::size_t k = 1; k < widths.size(); ++k) dims.insert(dims.end(), {widths[k], widths[k]});
  Architecture a = convolutions(dims, "gin");
  for (int l = 1; l < a.weight_layers(); l += 2) a.kinds[static_cast<std::size_t>(l)] = LayerKind::linear;
  a.values = EdgeValues::sum;
  a.self_term = true;
  return a;
}

bool GinModel::convolves(const Architecture&, int) const { return false; }  // composed below

std::vector<ParameterSpec> GinModel::parameters(const ModelConfig& c, const Architecture& a) const {
  std::vector<ParameterSpec> out = Model::parameters(c, a);  // W<l>
  for (int l = 0; l < a.weight_layers(); ++l) out.push_back(bias(l));
  if (c.train_eps)
    for (int l = 0; l < a.weight_layers(); l += 2) {
      ParameterSpec eps;
      eps.name = eps_name(l);
      eps.layer = l;
      eps.placement = ParameterSpec::Placement::scalar;
      eps.init = ParameterSpec::Init::constant;
      eps.constant = c.gin_eps;
      out.push_back(eps);
    }
  return out;
}

void GinModel::bind_layer(ActivationSlots& slots, const BufferPlan& p, int l, LayerBuffers& s) const {
  const Strategy& st = *p.strategy;
  s.own.assign(3, View{});
  if (!p.arch.conv(l)) {
    // MG-GCN's shared plan keeps G_l and dX_l in one buffer; a linear layer's
    // dX = G Wᵀ is one GEMM, which cannot read and write the same storage.
    if (p.shared() && p.input_gradient(l)) s.own[kLinearDx] = slots.take(st.layout(l));
    return;
  }
  const Layout aggregated = aggregated_layout(st, l);
  s.own[kSum] = slots.take(aggregated);
  s.own[kRootThenGrad] = slots.take(aggregated);
  // D is dA itself where the layouts agree (Pass::aligned_adjoint)
  if (input_side(p.input_gradient(l), p.config) && !st.same_rows()) s.own[kInputGrad] = slots.take(st.layout(l));
}

void GinModel::layer_forward(const Pass& p, int l, ConstView x) const {
  LayerBuffers& s = p.buf.layers[l];
  if (p.arch.conv(l)) {
    const View a = s.own[kSum], r = s.own[kRootThenGrad];
    p.primitives.aggregate_plus(l, Direction::forward, x, root(p, l, p.aligned(l, x, r)), a);  // Sᵀ X + (1 + ε) R
    p.primitives.linear(l, a, p.buf.params[l].value, s.z);
  } else {
    p.layer_forward(l, x);
  }
}

void GinModel::layer_backward(const Pass& p, int l, ConstView x, View* dx) const {
  LayerBuffers& s = p.buf.layers[l];
  if (!p.arch.conv(l)) {
    if (!dx || p.strategy.activation_plan() != ActivationPlan::shared) return p.layer_backward(l, x, dx);
    View own_dx = s.own[kLinearDx];
    p.layer_backward(l, x, &own_dx);
    return p.elementwise([&](Backend& b) { b.copy(own_dx, *dx); });
  }
  Parameter& w = p.buf.params[l];
  const bool input = input_side(p.input_gradient(l), p.config);
  View da = s.own[kRootThenGrad];
  p.primitives.linear_backward(l, s.own[kSum], s.g, w.value, w.grad, input ? &da : nullptr);
  if (!input) return;
  const ConstView d = p.aligned_adjoint(l, da, s.own[kInputGrad]);  // D = align'(dA)
  if (dx) p.primitives.aggregate_plus(l, Direction::backward, da, root(p, l, d), *dx);  // S dA + (1 + ε) D
  if (p.config.train_eps) {
    Parameter& e = p.buf.param(eps_name(l));
    p.elementwise([&](Backend& b) { b.inner_product(x, d, e.grad.data()); });  // <X, D> over this rank's block
    p.primitives.sum_over_layout(l, e.grad);
  }
}

RowTerm GinModel::root(const Pass& p, int l, ConstView x) {
  if (p.config.train_eps) return {x, 1.f, p.buf.param(eps_name(l)).value.data()};  // ε read on the device
  return {x, 1.f + p.config.gin_eps, nullptr};
}

}  // namespace gcnlab
