#include "common/model/model_buffers.hpp"

#include <algorithm>

namespace gcnlab {

namespace {

std::int64_t rows_of(const Layout& a) { return static_cast<std::int64_t>(a.vertices.size()); }
std::int64_t size_of(const Layout& a) { return rows_of(a) * a.cols; }
View shaped(float* p, const Layout& a) { return View{p, rows_of(a), a.cols, a.cols}; }

}  // namespace

void ModelBuffers::allocate(const BufferPlan& p, Allocator& activations, Allocator& weights) {
  Strategy& st = *p.strategy;
  const int L = p.weight_layers();
  const Layout& in = st.layout(0);
  layers.clear();
  layers.resize(static_cast<std::size_t>(L));
  slots_.clear();
  slots_from_ = &activations;
  features = Dense(activations, rows_of(in), in.cols);
  bind_activations(p, /*sampled=*/false);
  for (int l = 0; l < L; ++l) layers[l].row_ids = Buffer<std::int64_t>(activations, st.layout(l).vertices.size());
  params.clear();
  for (const ParameterSpec& spec : p.params) {
    const Block b = block_of(spec, st);
    Parameter& q = params.emplace_back();
    q.spec = spec;
    for (Dense* d : {&q.value, &q.grad, &q.m, &q.v}) *d = Dense(weights, b.rows, b.cols);
  }
  if (p.model.learn_features)
    for (Dense* d : {&feature_m, &feature_v}) *d = Dense(weights, rows_of(in), in.cols);
  const auto out_rows = st.layout(L).vertices.size();
  labels = Buffer<std::int32_t>(activations, out_rows);
  split = Buffer<std::uint8_t>(activations, out_rows);
  if (p.minibatch) sample_rows = Buffer<std::int64_t>(activations, in.vertices.size());
  reserve_workspace(loss, activations, st.class_split(), static_cast<std::int64_t>(out_rows));
}

Parameter& ModelBuffers::param(const std::string& name) {
  for (Parameter& q : params)
    if (q.spec.name == name) return q;
  fail("internal: the model has no parameter {}", name);
}

std::pair<double, double> ModelBuffers::bytes(const BufferPlan& p) {
  CountingAllocator activations, weights;
  ModelBuffers counted;
  counted.allocate(p, activations, weights);
  return {static_cast<double>(activations.peak_bytes()), static_cast<double>(weights.peak_bytes())};
}

void ModelBuffers::bind_activations(const BufferPlan& p, bool sampled) {
  const Strategy& st = *p.strategy;
  const int L = p.weight_layers();
  const std::vector<LayerKind>& kinds = p.arch.kinds;
  // Slots are taken in the same order on every call, so each buffer keeps its
  // slot between samples and evaluations; a slot grows only if it must.
  std::size_t next = 0;
  auto store = [&](std::int64_t elements) -> float* {
    if (next == slots_.size()) slots_.emplace_back(*slots_from_, 1, elements);
    else if (slots_[next].size() < elements) slots_[next] = Dense(*slots_from_, 1, elements);
    return slots_[next++].data();
  };
  for (LayerBuffers& s : layers)
    s.h = s.x = s.z = s.g = s.dx = View{}, s.conv = {}, s.sumsq = s.rowdot = nullptr;

  const Layout& in0 = st.layout(0);
  // a sample's rows of the features; the slot is taken on the full graph too
  float* sample_h0 = p.minibatch ? store(size_of(in0)) : nullptr;
  layers[0].h = sampled ? shaped(sample_h0, in0) : features.view();

  // The convolutions' intermediates (convolution.hpp): T_l in a slot of its own
  // where the backward reads it (BackwardOrder::transform_first); the others
  // one at a time in one work slot, as large as the largest a layer uses
  // (each is dead once its layer's forward or backward returns).
  const std::vector<ProductOrder> orders = st.orders(L);
  std::vector<bool> kept(static_cast<std::size_t>(L), false);
  std::int64_t work = 0;
  for (int l = 0; l < L; ++l) {
    if (kinds[l] != LayerKind::conv) continue;
    const Layout agg = aggregated_layout(st, l), trans = transformed_layout(st, l);
    const bool aggregate_first = orders[l] == ProductOrder::aggregate_first;
    kept[l] = convolution_backward_order(st, l, orders[l], p.input_gradient(l)) == BackwardOrder::transform_first;
    GCNLAB_ASSERT(!kept[l] || aggregate_first);  // T_l exists
    if (kept[l]) layers[l].conv.t = shaped(store(size_of(agg)), agg);
    if (aggregate_first && !kept[l]) work = std::max(work, size_of(agg));  // T_l
    if (!aggregate_first) work = std::max(work, size_of(trans));            // X_l W_l
    if (!kept[l]) work = std::max(work, size_of(trans));                    // U_l = Â G_l
    else if (p.input_gradient(l)) work = std::max(work, size_of(agg));      // dT_l
  }
  if (std::find(kinds.begin(), kinds.end(), LayerKind::conv) != kinds.end()) {
    float* w = store(work);  // may be empty: a rank whose column blocks are all empty (2d on a 1 x 8 grid)
    for (int l = 0; l < L; ++l) {
      if (kinds[l] != LayerKind::conv) continue;
      ConvolutionScratch& c = layers[l].conv;
      if (!kept[l]) c.t = shaped(w, aggregated_layout(st, l));
      c.dt = shaped(w, aggregated_layout(st, l));
      c.y = shaped(w, transformed_layout(st, l));
    }
  }
  if (p.residual()) {  // X_l, dX_l, Z_l, G_l, and a GNN layer's row statistics; no input dropout
    for (int l = 0; l < L; ++l) {
      LayerBuffers& s = layers[l];
      const Layout& in = st.layout(l);
      const Layout& out = st.layout(l + 1);
      const bool after_linear = l > 0 && kinds[l - 1] == LayerKind::linear;
      if (l > 0 && !after_linear) s.h = shaped(store(size_of(in)), in);
      if (l > 0) s.dx = shaped(store(size_of(in)), in);
      s.z = shaped(store(size_of(out)), out);
      if (kinds[l] != LayerKind::linear || l + 1 == L) s.g = shaped(store(size_of(out)), out);
      if (p.norm_block(l)) s.sumsq = store(rows_of(out)), s.rowdot = store(rows_of(out));
    }
    for (int l = 0; l + 1 < L; ++l)
      if (kinds[l] == LayerKind::linear) {  // X_h,0 = X_in W_in is the next input as it is (Eq. 4)
        layers[l + 1].h = layers[l].z;
        layers[l].g = layers[l + 1].dx;
      }
    return;
  }
  const bool drop = p.model.dropout > 0;
  if (!p.shared()) {  // H (l > 0), dropout(H), dX, Z, G
    for (int l = 0; l < L; ++l) {
      LayerBuffers& s = layers[l];
      const Layout& in = st.layout(l);
      const Layout& out = st.layout(l + 1);
      if (l > 0) s.h = shaped(store(size_of(in)), in);
      if (drop) s.x = shaped(store(size_of(in)), in);
      if (p.input_gradient(l)) s.dx = shaped(store(size_of(in)), in);
      s.z = shaped(store(size_of(out)), out);
      s.g = shaped(store(size_of(out)), out);
    }
    return;
  }
  // MG-GCN Sec. 4.2: layer l's buffer holds Z_l -> H_{l+1} (Eq. 18) -> G_l (19) -> dX_l (21).
  std::int64_t widest_input = 0;
  for (int l = 0; l < L; ++l) {
    LayerBuffers& s = layers[l];
    const Layout& in = st.layout(l);
    const Layout& out = st.layout(l + 1);
    float* a = store(std::max(size_of(out), p.input_gradient(l) ? size_of(in) : 0));
    s.z = s.g = shaped(a, out);
    if (l + 1 < L) layers[l + 1].h = shaped(a, out);
    if (p.input_gradient(l)) s.dx = shaped(a, in);
    widest_input = std::max(widest_input, size_of(in));
  }
  if (drop) {  // X_l = dropout(H_l), written before each forward and backward product of layer l
    float* x = store(widest_input);
    for (int l = 0; l < L; ++l) layers[l].x = shaped(x, st.layout(l));
  }
}

}  // namespace gcnlab
