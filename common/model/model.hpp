#pragma once
// Model: a GNN written once against the strategies' primitives (strategy.hpp).
//
// A model is one folder under models/ and a line in models/registry.cpp, as a
// strategy is one folder under algorithms/. It says which weight layers it has
// (its Architecture, which every strategy lays out) and computes its forward
// and backward pass from the primitives (aggregations, linear maps, the norm
// blocks' collectives) and the backend's element-wise kernels. The Trainer
// keeps what every model shares: the epochs and mini-batches, the softmax
// cross-entropy on the last layer's Z, the optimiser, checkpoints and reports.
//
// The same pass code gives the run's byte model: the Trainer runs it once more
// against the byte tracer (byte_trace.hpp) on buffers without data, with no
// backend, so element-wise work is skipped and every primitive adds its
// strategy's byte companion. A model therefore writes no byte model, and its
// traced bytes equal what its run moves under every strategy.

#include <cstdint>
#include <utility>
#include <vector>

#include "common/comm/ledger.hpp"
#include "common/model/architecture.hpp"
#include "common/model/config.hpp"
#include "common/model/model_buffers.hpp"

namespace gcnlab {

// One forward or backward pass of a model: what it computes on.
struct Pass {
  Primitives& primitives;   // the strategy, or the byte tracer
  const Strategy& strategy;  // the layouts (columns of a rank's block: dropout keys, norms)
  ModelBuffers& buf;         // the activations and weights (ModelBuffers: laid out for this model)
  const ModelConfig& config;
  const Architecture& arch;
  const std::vector<ProductOrder>& orders;             // each convolution's forward order
  const std::vector<BackwardOrder>& backward_orders;   // ... and its backward's (convolution.hpp)
  int epoch = 0;          // dropout masks are keyed by (seed, epoch, layer, vertex, column)
  bool training = true;   // false: evaluation (no dropout)
  Backend* backend = nullptr;  // null while tracing: no element-wise work
  Ledger* ledger = nullptr;

  bool tracing() const { return backend == nullptr; }
  // Runs f(backend) timed as element-wise work; nothing while tracing.
  template <class F>
  void elementwise(F&& f) const {
    if (!backend) return;
    auto t = ledger->time(Category::elementwise);
    f(*backend);
  }
  // Whether weight layer l computes dL/dX_l (every layer but the first, and
  // the first when the input features are trained).
  bool input_gradient(int l) const { return l > 0 || config.learn_features; }
  // The dropout of layer l's input: keyed masks, p = --dropout (the model
  // decides where it applies and skips it when evaluating).
  DropoutParams dropout(int l) const;

  // Weight layer l's product on s's buffers: a graph convolution
  // (convolution.hpp, in the layer's orders) or a linear map Z = X W; and its
  // backward, dW and (dx non-null) dX.
  void layer_forward(int l, ConstView x) const;
  void layer_backward(int l, ConstView x, View* dx) const;
  // X_l (layout(l)) in aggregated_layout(l): X_l itself where the strategy's
  // layers hold the same rows (Strategy::same_rows: the two layouts agree, no
  // copy is made), else the strategy's Primitives::align into `out`.
  ConstView aligned(int l, ConstView in, View out) const;
  // Its adjoint, out += align'(in) (out in layout(l)): a local axpy where they agree.
  void add_aligned(int l, ConstView in, View out) const;
  // align'(in) alone: `in` itself where they agree, else out = align'(in).
  ConstView aligned_adjoint(int l, ConstView in, View out) const;
};

class Model {
 public:
  virtual ~Model() = default;

  // The weight layers for `features` inputs and `classes` outputs.
  virtual Architecture architecture(const ModelConfig& c, std::int64_t features, std::int64_t classes) const = 0;
  // Its parameters, by name: params[l] is weight layer l's W (layer_weight(l),
  // what Pass::layer_forward computes with), any others after them.
  virtual std::vector<ParameterSpec> parameters(const ModelConfig& c, const Architecture& a) const;
  // Points every layer's activation views (H_l for l > 0, dropout's X_l, Z_l,
  // G_l, dX_l where input_gradient(l)) and the model's own per-layer storage
  // at slots, on the strategy's current layouts (ModelBuffers has bound H_0
  // and the convolutions' intermediates). The memory model counts the same
  // calls, so a model's analytic memory is its plan.
  virtual void bind_activations(ActivationSlots& slots, const BufferPlan& p,
                                std::vector<LayerBuffers>& layers) const = 0;
  // Whether weight layer l computes with Pass::layer_forward's graph
  // convolution (convolution.hpp), whose intermediates ModelBuffers binds; a
  // model that composes a conv layer from the primitives itself says no.
  virtual bool convolves(const Architecture& a, int l) const { return a.conv(l); }
  // Refuses settings the model does not support (one line each).
  virtual void check(const ModelConfig& c, ActivationPlan plan) const { (void)c, (void)plan; }

  // From H_0 (buf.layers[0].h) to the logits, the last layer's Z.
  virtual void forward(Pass& p) const = 0;
  // From the logits' gradient (the last layer's G, written by the loss) to
  // every weight layer's dW (and dX_0 with trained features).
  virtual void backward(Pass& p) const = 0;
};

}  // namespace gcnlab
