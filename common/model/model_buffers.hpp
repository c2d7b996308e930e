#pragma once
// The trainer's backend buffers, laid out in one place. ModelBuffers::allocate
// hands out every buffer the trainer computes in: the activations (the
// model's plan, Model::bind_activations: per layer, MG-GCN's shared plan,
// ScaleGNN's layers) with the convolutions' intermediate products, the
// model's parameters (parameters.hpp)
// with their gradients and optimiser state, and the vertex data (H_0,
// dropout keys, labels, split, the loss workspace). The memory model runs the same code on
// allocators that only count (ModelBuffers::bytes), so the analytic memory of
// every strategy is this plan, not a second formula kept beside it
// (tests: measured backend peak = analytic, test_prepared.cpp).

#include <cstdint>
#include <vector>

#include "common/backend/allocator.hpp"
#include "common/matrix/buffer.hpp"
#include "common/matrix/dense.hpp"
#include "common/model/config.hpp"
#include "common/model/convolution.hpp"
#include "common/model/loss.hpp"
#include "common/model/parameters.hpp"
#include "common/model/strategy.hpp"

namespace gcnlab {

class Model;

// One weight layer's buffers. The views point into ModelBuffers' activation
// slots (several views may share one slot under the shared plan).
struct LayerBuffers {
  View h;   // H_l (input activations); H_0 = features
  View x;   // dropout(H_l) when dropout > 0
  View z;   // Z_l
  View g;   // dL/dZ_l
  View dx;  // dL/dX_l (l > 0; l = 0 with learned features)
  ConvolutionScratch conv;  // a convolution's T_l, dT_l and X_l W_l / Â G_l (convolution.hpp)
  Buffer<std::int64_t> row_ids;  // global vertex ids of layout(l) rows (dropout keys)
  // Norm blocks (--model scalegnn's GNN layers): per row of layout(l+1) the
  // sum of squares of Z_l and the backward row dot.
  float* sumsq = nullptr;
  float* rowdot = nullptr;
  std::vector<View> own;  // the model's own buffers of this layer (LayerStack::bind_layer)
};

// One parameter of the model: this rank's block of its value, gradient and
// Adam moments (m, v: allocated under SGD too, unused).
struct Parameter {
  ParameterSpec spec;
  Dense value, grad, m, v;
};

// What the layout of the buffers depends on.
struct BufferPlan {
  Strategy* strategy = nullptr;  // its layouts and weight blocks (after Strategy::setup)
  const Model* model = nullptr;  // lays out its activations (Model::bind_activations)
  ModelConfig config;
  Architecture arch;       // the model's weight layers
  std::vector<ParameterSpec> params;  // the model's parameters (params[l]: weight layer l's W)
  bool minibatch = false;  // a sample's rows of H_0 are gathered into a buffer of their own

  int weight_layers() const { return arch.weight_layers(); }
  bool shared() const { return strategy->activation_plan() == ActivationPlan::shared; }
  bool norm_block(int l) const { return arch.norm_block(l); }
  bool input_gradient(int l) const { return l > 0 || config.learn_features; }
};

std::int64_t rows_of(const Layout& a);
std::int64_t size_of(const Layout& a);  // rows x columns
// A's rows and columns at p (row-major, leading dimension a.cols).
View shaped(float* p, const Layout& a);

// The storage activation views point into, taken in order: every bind takes
// the same slots in the same order, so each buffer keeps its slot between
// samples and evaluations; a slot grows only for a layout larger than the
// full graph's. The memory model counts them (ModelBuffers::bytes).
class ActivationSlots {
 public:
  ActivationSlots(Allocator& from, std::vector<Dense>& slots) : from_(from), slots_(slots) {}
  // The next slot, of at least `elements` floats (may be empty).
  float* take(std::int64_t elements);
  // The next slot as a view of a's rows and columns.
  View take(const Layout& a) { return shaped(take(size_of(a)), a); }

 private:
  Allocator& from_;
  std::vector<Dense>& slots_;
  std::size_t next_ = 0;
};

class ModelBuffers {
 public:
  // Every buffer, sized for the full graph's layouts: activations and vertex data
  // from `activations`, weights and optimiser state from `weights`. Contents are
  // left to the caller (Trainer::setup).
  void allocate(const BufferPlan& p, Allocator& activations, Allocator& weights);
  // Points the activation views at the strategy's current layouts (a mini-batch's
  // sample, `sampled`, or the full graph), reusing the slots allocate() made (a
  // slot grows only for a layout larger than the full graph's; see put()).
  void bind_activations(const BufferPlan& p, bool sampled);
  // Copies `host` into the front of `b` (a vertex-data buffer of this object),
  // first growing `b` if `host` is larger than planned: the serial oracle of D
  // data-parallel groups holds D samples at once, which may exceed the graph.
  template <class T>
  void put(Buffer<T>& b, std::span<const T> host) {
    if (host.size() > b.size()) b = Buffer<T>(*slots_from_, host.size());
    b.upload_front(host);
  }
  // The bytes allocate() takes (activations and vertex data, weights), counted
  // without allocating.
  static std::pair<double, double> bytes(const BufferPlan& p);

  std::vector<LayerBuffers> layers;
  std::vector<Parameter> params;  // in the model's order: params[l] is weight layer l's W
  // The parameter named `name` (an internal error if the model has none).
  Parameter& param(const std::string& name);
  Dense features;              // H_0 of the full graph's layout(0) (a sample's rows are gathered from it)
  Dense feature_m, feature_v;  // optimiser state of H_0 (--learn-features)
  Buffer<std::int32_t> labels;      // of layout(L)'s rows
  Buffer<std::uint8_t> split;       // ... their train/val/test split
  Buffer<std::int64_t> sample_rows;  // mini-batches: the sample's rows of H_0 in `features`
  LossWorkspace loss;  // the split-class softmax's row statistics or gathered rows

 private:
  Allocator* slots_from_ = nullptr;
  std::vector<Dense> slots_;  // the storage the activation views point into
};

// An allocator that hands out nothing and counts what it was asked for
// (ModelBuffers::bytes). Transfers are no-ops.
class CountingAllocator final : public Allocator {
 public:
  void copy_to_device(void*, const void*, std::size_t) override {}
  void copy_to_host(void*, const void*, std::size_t) override {}
  void copy_on_device(void*, const void*, std::size_t) override {}

 protected:
  void* do_allocate(std::size_t) override { return nullptr; }
  void do_deallocate(void*, std::size_t) override {}
};

}  // namespace gcnlab
