#include "common/model/model_buffers.hpp"

#include <algorithm>

#include "common/model/model.hpp"

namespace gcnlab {

std::int64_t rows_of(const Layout& a) { return static_cast<std::int64_t>(a.vertices.size()); }
std::int64_t size_of(const Layout& a) { return rows_of(a) * a.cols; }
View shaped(float* p, const Layout& a) { return View{p, rows_of(a), a.cols, a.cols}; }

float* ActivationSlots::take(std::int64_t elements) {
  if (next_ == slots_.size()) slots_.emplace_back(from_, 1, elements);
  else if (slots_[next_].size() < elements) slots_[next_] = Dense(from_, 1, elements);
  return slots_[next_++].data();
}

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
    const Block b = block_of(spec, st, p.arch);
    Parameter& q = params.emplace_back();
    q.spec = spec;
    for (Dense* d : {&q.value, &q.grad, &q.m, &q.v}) *d = Dense(weights, b.rows, b.cols);
  }
  if (p.config.learn_features)
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
  ActivationSlots slots(*slots_from_, slots_);
  for (LayerBuffers& s : layers)
    s.h = s.x = s.z = s.g = s.dx = View{}, s.conv = {}, s.sumsq = s.rowdot = nullptr;

  const Layout& in0 = st.layout(0);
  // a sample's rows of the features; the slot is taken on the full graph too
  float* sample_h0 = p.minibatch ? slots.take(size_of(in0)) : nullptr;
  layers[0].h = sampled ? shaped(sample_h0, in0) : features.view();

  // The convolutions' intermediates (convolution.hpp): T_l in a slot of its own
  // where the backward reads it (BackwardOrder::transform_first); the others
  // one at a time in one work slot, as large as the largest a layer uses
  // (each is dead once its layer's forward or backward returns).
  const std::vector<ProductOrder> orders = st.orders(L);
  std::vector<bool> kept(static_cast<std::size_t>(L), false);
  std::int64_t work = 0;
  bool any = false;
  for (int l = 0; l < L; ++l) {
    if (!p.model->convolves(p.arch, l)) continue;
    any = true;
    const Layout agg = aggregated_layout(st, l), trans = transformed_layout(st, p.arch, l);
    const bool aggregate_first = orders[l] == ProductOrder::aggregate_first;
    kept[l] = convolution_backward_order(st, l, orders[l], p.input_gradient(l)) == BackwardOrder::transform_first;
    GCNLAB_ASSERT(!kept[l] || aggregate_first);  // T_l exists
    if (kept[l]) layers[l].conv.t = slots.take(agg);
    if (aggregate_first && !kept[l]) work = std::max(work, size_of(agg));  // T_l
    if (!aggregate_first) work = std::max(work, size_of(trans));            // X_l W_l
    if (!kept[l]) work = std::max(work, size_of(trans));                    // U_l = Â G_l
    else if (p.input_gradient(l)) work = std::max(work, size_of(agg));      // dT_l
  }
  if (any) {
    float* w = slots.take(work);  // may be empty: a rank whose column blocks are all empty (2d on a 1 x 8 grid)
    for (int l = 0; l < L; ++l) {
      if (!p.model->convolves(p.arch, l)) continue;
      ConvolutionScratch& c = layers[l].conv;
      if (!kept[l]) c.t = shaped(w, aggregated_layout(st, l));
      c.dt = shaped(w, aggregated_layout(st, l));
      c.y = shaped(w, transformed_layout(st, p.arch, l));
    }
  }
  p.model->bind_activations(slots, p, layers);  // H_l (l > 0), X_l, Z_l, G_l, dX_l and the model's own
}

}  // namespace gcnlab
