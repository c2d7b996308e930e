#include "models/scalegnn/scalegnn.hpp"

#include <fmt/format.h>

#include "common/core/error.hpp"

namespace gcnlab {

namespace {

// Per-row values of a layer's output block (empty while tracing: no storage).
std::span<float> per_row(float* values, const View& z) {
  return values ? std::span<float>(values, static_cast<std::size_t>(z.rows)) : std::span<float>();
}

}  // namespace

Architecture ScaleGnnModel::architecture(const ModelConfig& c, std::int64_t features, std::int64_t classes) const {
  Architecture a;
  a.model = "scalegnn";
  const int weight_layers = c.layers + 2;  // input projection, L GNN layers, output head
  a.dims.push_back(features);
  for (int l = 1; l < weight_layers; ++l) a.dims.push_back(c.hidden);
  a.dims.push_back(classes);
  a.kinds.assign(static_cast<std::size_t>(weight_layers), LayerKind::conv);
  a.kinds.front() = a.kinds.back() = LayerKind::linear;
  for (const LayerKind k : a.kinds) a.norm_after.push_back(k == LayerKind::conv);
  return a;
}

std::vector<ParameterSpec> ScaleGnnModel::parameters(const ModelConfig& c, const Architecture& a) const {
  std::vector<ParameterSpec> out = Model::parameters(c, a);
  for (int l = 0; l < a.weight_layers(); ++l) {
    if (!a.norm_block(l)) continue;
    ParameterSpec gamma;
    gamma.name = fmt::format("S{}", l - 1);
    gamma.layer = l;
    gamma.placement = ParameterSpec::Placement::columns;
    gamma.init = ParameterSpec::Init::ones;
    gamma.decay = false;
    out.push_back(gamma);
  }
  return out;
}

Parameter& ScaleGnnModel::scale(const Pass& p, int l) { return p.buf.param(fmt::format("S{}", l - 1)); }

void ScaleGnnModel::check(const ModelConfig& c, ActivationPlan plan) const {
  GCNLAB_CHECK(!c.learn_features, "--model scalegnn does not train the input features");
  GCNLAB_CHECK(c.norm_eps > 0, "the RMSNorm epsilon must be > 0");
  GCNLAB_CHECK(plan != ActivationPlan::shared,
               "--model scalegnn keeps its activations per layer (not MG-GCN's shared plan)");
}

void ScaleGnnModel::bind_activations(ActivationSlots& slots, const BufferPlan& p,
                                     std::vector<LayerBuffers>& layers) const {
  const Strategy& st = *p.strategy;
  const int L = p.weight_layers();
  for (int l = 0; l < L; ++l) {
    LayerBuffers& s = layers[l];
    const Layout& in = st.layout(l);
    const Layout& out = st.layout(l + 1);
    const bool after_linear = l > 0 && !p.arch.conv(l - 1);
    if (l > 0 && !after_linear) s.h = slots.take(in);
    if (l > 0) s.dx = slots.take(in);
    s.z = slots.take(out);
    if (p.arch.conv(l) || l + 1 == L) s.g = slots.take(out);
    if (p.norm_block(l)) s.sumsq = slots.take(rows_of(out)), s.rowdot = slots.take(rows_of(out));
  }
  for (int l = 0; l + 1 < L; ++l)
    if (!p.arch.conv(l)) {  // X_h,0 = X_in W_in is the next input as it is (Eq. 4)
      layers[l + 1].h = layers[l].z;
      layers[l].g = layers[l + 1].dx;
    }
}

void ScaleGnnModel::forward(Pass& p) const {
  for (int l = 0; l < p.arch.weight_layers(); ++l) {
    p.layer_forward(l, p.buf.layers[l].h);
    if (p.arch.norm_block(l)) norm_forward(p, l);
  }
}

void ScaleGnnModel::backward(Pass& p) const {
  for (int l = p.arch.weight_layers() - 1; l >= 0; --l) {
    LayerBuffers& s = p.buf.layers[l];
    if (p.arch.norm_block(l)) norm_backward(p, l);  // G_l from dX_l+1 (a linear layer's G is dX_l+1 itself)
    View dx = s.dx;
    p.layer_backward(l, s.h, p.input_gradient(l) ? &dx : nullptr);
    if (l > 0 && p.arch.norm_block(l))
      p.primitives.reshard(l + 1, l, p.buf.layers[l + 1].dx, s.dx, /*accumulate=*/true);
  }
}

void ScaleGnnModel::norm_forward(const Pass& p, int l) {
  LayerBuffers& s = p.buf.layers[l];
  LayerBuffers& next = p.buf.layers[l + 1];
  const ew::NormParams norm{static_cast<float>(p.arch.dims[l + 1]), p.config.norm_eps};
  p.elementwise([&](Backend& b) { b.row_sum_squares(s.z, s.sumsq); });
  p.primitives.sum_over_columns(l + 1, per_row(s.sumsq, s.z));                // Eq. 29
  p.primitives.reshard(l, l + 1, s.h, next.h, /*accumulate=*/false);          // the residual X_h,l-1
  p.elementwise([&](Backend& b) {
    DropoutParams drop = p.dropout(l + 1);
    if (!p.training) drop.p = 0;
    b.norm_relu_dropout_add(s.z, s.sumsq, scale(p, l).value.data(), norm, next.row_ids.data(), p.strategy.layout(l + 1).col0,
                            drop, next.h);
  });
}

void ScaleGnnModel::norm_backward(const Pass& p, int l) {
  LayerBuffers& s = p.buf.layers[l];
  const LayerBuffers& next = p.buf.layers[l + 1];
  Parameter& gamma = scale(p, l);
  const ew::NormParams norm{static_cast<float>(p.arch.dims[l + 1]), p.config.norm_eps};
  p.elementwise([&](Backend& b) {
    b.norm_relu_dropout_backward(next.dx, s.z, s.sumsq, gamma.value.data(), norm, next.row_ids.data(),
                                 p.strategy.layout(l + 1).col0, p.dropout(l + 1), s.g, gamma.grad.data(), s.rowdot);
  });
  p.primitives.sum_over_columns(l + 1, per_row(s.rowdot, s.z));
  p.primitives.sum_over_rows(l + 1, gamma.grad);
  p.elementwise([&](Backend& b) { b.norm_backward(s.z, s.sumsq, gamma.value.data(), s.rowdot, norm, s.g); });
}

}  // namespace gcnlab
