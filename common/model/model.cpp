#include "common/model/model.hpp"

#include "common/core/error.hpp"
#include "common/model/convolution.hpp"

namespace gcnlab {

std::vector<ParameterSpec> Model::parameters(const ModelConfig&, const Architecture& a) const {
  std::vector<ParameterSpec> out;
  for (int l = 0; l < a.weight_layers(); ++l) out.push_back(layer_weight(l));
  return out;
}

DropoutParams Pass::dropout(int l) const {
  return {config.seed, rng::stream(rng::Stream::dropout, static_cast<std::uint64_t>(epoch), static_cast<std::uint64_t>(l)),
          config.dropout};
}

void Pass::layer_forward(int l, ConstView x) const {
  LayerBuffers& s = buf.layers[l];
  const Dense& w = buf.params[l].value;
  if (!arch.conv(l)) primitives.linear(l, x, w, s.z);  // ScaleGNN Eq. 4, 11
  else convolution_forward(primitives, l, orders[l], x, w, s.z, s.conv);
}

void Pass::layer_backward(int l, ConstView x, View* dx) const {
  LayerBuffers& s = buf.layers[l];
  Parameter& w = buf.params[l];
  // dX = G Wᵀ is one GEMM: G and dX must not share storage (ActivationPlan::shared's)
  GCNLAB_ASSERT(arch.conv(l) || !dx || !dx->data || dx->data != s.g.data);
  if (!arch.conv(l)) primitives.linear_backward(l, x, s.g, w.value, w.grad, dx);  // Eq. 13-14, 18-19
  else convolution_backward(primitives, l, backward_orders[l], x, s.g, w.value, w.grad, dx, s.conv);
}

ConstView Pass::aligned(int l, ConstView in, View out) const {
  if (strategy.same_rows()) {
    GCNLAB_ASSERT(strategy.layout(l).vertices == strategy.layout(l + 1).vertices);
    return in;
  }
  primitives.align(l, Direction::forward, in, out);
  return out;
}

void Pass::add_aligned(int l, ConstView in, View out) const {
  if (!strategy.same_rows()) return primitives.align(l, Direction::backward, in, out);
  elementwise([&](Backend& b) { b.axpy(1.f, in, out); });
}

ConstView Pass::aligned_adjoint(int l, ConstView in, View out) const {
  if (strategy.same_rows()) return in;
  elementwise([&](Backend& b) { b.fill(out, 0.f); });
  primitives.align(l, Direction::backward, in, out);
  return out;
}

}  // namespace gcnlab
