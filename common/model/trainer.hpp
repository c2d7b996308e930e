#pragma once
// The training loop every model shares (docs/design.md principle 1). The
// trainer owns the activations, weights and optimiser state in the strategy's
// layouts (ModelBuffers) and runs, per epoch or mini-batch step,
//   forward   the model's (common/model/model.hpp; models/<name>/), to the logits
//   loss      masked softmax cross-entropy over the global training vertices
//   backward  the model's, to every weight layer's dW
//   update    dW += λ W (L2 weight decay);  Adam or SGD
// and accounts every epoch per category (Phase::epoch), the dropout-free
// evaluation pass separately (Phase::eval). Its byte model is the model's
// step traced through the strategy's byte companions (byte_trace.hpp).

#include <array>
#include <functional>
#include <optional>
#include <vector>

#include "common/comm/ledger.hpp"
#include "common/model/strategy.hpp"
#include "common/data/dataset.hpp"
#include "common/model/config.hpp"
#include "common/model/loss.hpp"
#include "common/model/minibatch.hpp"
#include "common/model/model.hpp"
#include "common/model/model_buffers.hpp"
#include "common/model/rank_report.hpp"

namespace gcnlab {

struct EpochMetrics {
  int epoch = 0;
  double loss = 0, train_acc = 0, val_acc = 0, test_acc = 0;
  double time_s = 0;       // max over ranks
  double eval_time_s = 0;  // max over ranks (0 when no eval pass)
  // Wire bytes this rank received per category in the epoch (Phase::epoch);
  // the results' history records their max over ranks.
  std::array<double, kNumCategories> wire_bytes{};
  int segment = 0;  // the run segment (start or resume) it ran in: the results' history
};

// The trained parameters in the model's order (Model::parameters): W_l as
// f_l x f_{l+1} row-major for every weight layer, then the model's others
// (--model scalegnn: the RMSNorm scale γ of every GNN layer, 1 x hidden each).
using Weights = std::vector<std::vector<float>>;

// When the validation accuracy first reached TrainConfig::target_acc.
struct TargetReached {
  double epochs = 0;         // epochs trained (fractional for mini-batches: steps / steps per epoch)
  double train_seconds = 0;  // training time up to then (evaluation passes excluded), max over ranks
  double val_acc = 0;
};

// What training continues from (a checkpoint, common/results/checkpoint.hpp):
// defined on the global matrices, so it does not depend on the strategy or
// the rank count that produced it. Dropout masks are keyed by (seed, epoch,
// layer, vertex, column), so the epoch counter is the whole RNG position.
// A parameter as a checkpoint records it: its name and global shape.
struct ParameterShape {
  std::string name;
  std::int64_t rows = 0, cols = 0;
  bool operator==(const ParameterShape&) const = default;
};

struct TrainingState {
  int epoch = 0;    // completed epochs: the next one is `epoch`, its Adam step epoch + 1
  // The model's parameters (Model::parameters' order) and their values, and
  // Adam's first and second moments of them (empty under SGD). `params` may
  // be empty where a test writes bare matrices (a checkpoint then names them
  // as a GCN's, W<l>, from its identity's dims).
  std::vector<ParameterShape> params;
  Weights w, m, v;
  // Progress so far, carried across a resume: training seconds (evaluation
  // excluded, max over ranks) and when --target-acc was first reached.
  double train_seconds = 0;
  std::optional<TargetReached> target;
};

// One rank's block of the learned input features (--learn-features): the rows
// of its layout(0) (original vertex ids) x columns [col0, col0 + cols) of the
// n x f matrix X, with Adam's moments of them. Row-distributed: no rank holds
// more than its own block (checkpoints write and read them in place).
struct FeatureBlock {
  std::vector<std::int64_t> vertices;
  std::int64_t col0 = 0, cols = 0;
  std::vector<float> x, m, v;  // vertices.size() x cols, row-major; m, v empty under SGD
};

struct RunResult {
  std::vector<std::int64_t> dims;
  int steps_per_epoch = 1;  // 1: full-graph epochs
  std::optional<TargetReached> target;
  std::vector<EpochMetrics> epochs;
  // Where this segment's epochs begin in `epochs`: the train command puts a
  // resumed run's earlier epochs (its checkpoint's history) before them.
  std::size_t segment_start = 0;
  int timed_epochs = 0;  // epochs averaged in the breakdown (the first is excluded when E > 1)
  std::vector<RankReport> ranks;
  Weights initial_weights, final_weights;
  double setup_time_s = 0;
};

class Trainer {
 public:
  Trainer(Strategy& strategy, const Model& model, Communicator& world, Backend& backend, const ModelConfig& config,
          const TrainConfig& train);
  ~Trainer();  // takes the SpMM's scratch back from the backend

  // Distributes the graph (strategy) and the vertex data (here). `initial`
  // (optional) replaces the Glorot initialisation. Afterwards `data` may be freed.
  void setup(const Dataset& data, const Graph& graph, const Weights* initial = nullptr);
  // Only the first step of setup: the strategy reads its blocks; nothing of the
  // trainer's is allocated. byte_model() and memory_need() are then defined
  // (gcnlab simulate, planning/simulate.hpp).
  void distribute(const Dataset& data, const Graph& graph);

  // Runs the epochs left: from 0, or from the restored state's epoch, to epochs - 1.
  // Full-graph epochs, or steps_per_epoch() mini-batch steps each (batch_size > 0).
  // `on_epoch` runs after each epoch on every rank (with this rank's times and
  // bytes); returning false stops training there (every rank must agree: a
  // stop signal, common/core/stop_signal.hpp) and the result holds the epochs run.
  RunResult train(const std::function<bool(const EpochMetrics&)>& on_epoch = {});

  // The global state after the epochs run so far (collective).
  TrainingState state();
  // This rank's block of the learned features (--learn-features) after the epochs so far.
  FeatureBlock feature_block() const;
  // The rows and columns of X this rank holds (a block with `vertices`, `col0` and `cols` only).
  FeatureBlock feature_layout() const;
  // After setup: continue from `s` (its weights and moments; the next epoch is
  // s.epoch) and, with --learn-features, from `features`, this rank's block of X
  // (as feature_layout() names it).
  void restore(const TrainingState& s, const FeatureBlock* features = nullptr);
  const std::vector<std::int64_t>& dims() const { return dims_; }
  bool minibatch() const { return train_.batch_size > 0; }
  int steps_per_epoch() const { return schedule_ ? schedule_->steps_per_epoch() : 1; }

  // Strategy model + the trainer's own traffic (metric reduction, split-class softmax).
  ByteModel byte_model() const;
  // Runs one training epoch (after setup) and returns its kernels' work: with
  // a traced backend (backends/counting_backend.hpp), what an epoch would give them.
  CategoryWork epoch_work();
  // --dry-run: the model of the first epoch train() will run, before it runs.
  // Full graph: byte_model(). Mini-batches: the sum over that epoch's steps of
  // each step's model on its own sample (cut, not trained; collective).
  ByteModel planned_byte_model();
  // Strategy's graph and buffers + the trainer's activations and weights + the
  // backend's SpMM scratch (this rank).
  MemoryNeed memory_need() const;
  // Nonzeros of this rank's graph-attention edge tensors (EdgeAttention::edges; the
  // edge softmax's work), or of its sparse blocks where no layer attends (nnz_local).
  std::int64_t edges_local() const;

  // Full weight matrices assembled from every rank's blocks (collective).
  Weights gather_weights() { return gather(&Parameter::value); }
  // The model's parameters in Weights order (after setup).
  const std::vector<ParameterSpec>& parameters() const { return params_; }
  // ... with their global shapes (after setup).
  std::vector<ParameterShape> parameter_shapes() const;

  // One forward + loss + backward at the current weights, without an update;
  // returns the loss and the full gradients dL/dW_l (for gradient checks).
  std::pair<double, Weights> loss_and_gradients(int epoch = 0);

 private:
  int weight_layers() const { return arch_.weight_layers(); }
  // Memory admission: memory_need() against the budget (TrainConfig, the device's free memory).
  void admit() const;
  BufferPlan buffer_plan() const;
  // Mini-batches: restricts the strategy to step `step`'s sample of this rank's
  // data-parallel group (nullptr-like: step < 0 returns to the full graph) and
  // rebinds the activations, features, labels and training count to its layouts.
  void restrict_to_step(int step);
  // Vertex data of the current layouts: H_0 from the features, labels, split, dropout keys.
  void bind_vertex_data();
  // Epoch e (full graph, or its mini-batch steps) and its evaluation: its metrics
  // and this rank's times; a timed epoch adds its tallies and kernel work to `timed`.
  struct TimedSums {
    CategoryTallies tallies{};
    CategoryWork work{};
  };
  EpochMetrics run_epoch(int e, bool timed, TimedSums& timed_sum);
  // This rank's report: memory, the timed epochs' tallies and work averaged, the setup's, the models.
  RankReport rank_report(const TimedSums& timed, int timed_epochs) const;
  // One epoch of mini-batch steps; returns the summed metrics (loss normalised per step).
  std::array<double, 7> minibatch_epoch(int epoch, std::vector<double>& step_seconds, double& eval_s);
  // A full-graph pass without dropout: the metrics of the current weights.
  std::array<double, 7> evaluate(int epoch);
  // The model of one training step or full-graph epoch: the traced layers + softmax (+ the step's training count).
  ByteModel step_model() const;
  // Whether weight layer l computes dX (Pass::input_gradient).
  bool input_gradient(int l) const { return l > 0 || config_.learn_features; }
  // A pass of the model on `p` (the strategy, or the byte tracer) with buf's
  // buffers; tracing: no backend (no element-wise work).
  Pass pass(Primitives& p, ModelBuffers& buf, int epoch, bool training, bool tracing) const;
  // The wire bytes of forward() and backward() on the current layouts: the
  // model's pass run against the strategy's byte companions (byte_trace.hpp).
  ByteModel traced_layers() const;
  void forward(int epoch, bool training);
  XentSums loss();
  void backward(int epoch);
  void update(int step);
  std::array<double, 7> reduce_metrics(const XentSums& s) { return reduce(metrics_of(s)); }
  // loss, correct[train, val, test], counted[...] of this rank (zero on replicas).
  std::array<double, 7> metrics_of(const XentSums& s) const;
  std::array<double, 7> reduce(std::array<double, 7> m);
  Weights gather(Dense Parameter::*member);
  // This rank's block of each full matrix in `full` into `member` (γ may be left out: it keeps its value).
  void scatter(Dense Parameter::*member, const Weights& full, const char* what);

  Strategy& strategy_;
  const Model& model_;
  Communicator& world_;
  Backend& backend_;
  Ledger& ledger_;
  ModelConfig config_;
  TrainConfig train_;
  Architecture arch_;  // the model's weight layers (after distribute)
  std::vector<ParameterSpec> params_;  // ... and its parameters
  std::vector<std::int64_t> dims_;
  std::vector<ProductOrder> orders_;  // each convolution's forward order (the strategy's, after setup)
  std::vector<BackwardOrder> backward_orders_;  // ... and its backward's (convolution_backward_order)
  ModelBuffers buf_;  // every backend buffer: activations, weights, vertex data (model_buffers.hpp)
  // The backend's SpMM work memory (Backend::spmm_scratch_bytes), lent to it from setup on, sized
  // for inputs of the largest layout's rows at the model's widths.
  Buffer<float> spmm_scratch_;
  std::int64_t spmm_scratch_rows() const;
  double n_train_ = 0;  // training vertices of the graph (of the step's samples, summed over groups)
  // Mini-batches: the full layouts' vertices and vertex data on the host, and
  // the epoch's model (a sample's rows of H_0 are in buf_.sample_rows).
  std::int64_t n_ = 0;
  bool sampled_ = false;
  std::vector<std::int64_t> full_in_, full_out_;
  std::vector<std::int32_t> full_labels_;
  std::vector<std::uint8_t> full_split_;
  double full_train_ = 0, sample_train_ = 0;  // training vertices of the graph; of this rank's sampled rows
  std::unique_ptr<MinibatchSchedule> schedule_;  // mini-batches: the samples and their prefetch
  ByteModel model_sum_;  // over the timed epochs' steps
  int model_epochs_ = 0;
  bool accumulate_model_ = false;  // the current epoch is timed
  double train_seconds_ = 0;  // training time so far (this rank; evaluation excluded)
  std::optional<TargetReached> target_;
  // Records the first evaluation at or above --target-acc.
  void check_target(double val_acc, double epochs);
  double setup_time_s_ = 0;
  int first_epoch_ = 0;      // where train() starts (restore)
  int completed_epochs_ = 0;  // what state() reports
};

}  // namespace gcnlab
