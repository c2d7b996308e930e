#include "common/model/trainer.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <tuple>

#include "common/comm/wire.hpp"
#include "common/model/byte_trace.hpp"
#include "common/model/convolution.hpp"
#include "common/core/host_memory.hpp"

namespace gcnlab {

namespace {

using Clock = Ledger::Clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

constexpr int kMetrics = 7;  // loss, correct[train,val,test], counted[train,val,test]

}  // namespace

Trainer::Trainer(Strategy& strategy, const Model& model, Communicator& world, Backend& backend,
                 const ModelConfig& config, const TrainConfig& train)
    : strategy_(strategy), model_(model), world_(world), backend_(backend), ledger_(world.ledger()), config_(config),
      train_(train) {
  GCNLAB_CHECK(config_.layers >= 1, "--layers must be >= 1");
  GCNLAB_CHECK(config_.hidden >= 1, "--hidden must be >= 1");
  GCNLAB_CHECK(config_.dropout >= 0 && config_.dropout < 1, "--dropout must be in [0, 1)");
  GCNLAB_CHECK(config_.lr > 0, "--lr must be > 0");
  GCNLAB_CHECK(config_.weight_decay >= 0, "--weight-decay must be >= 0");
  GCNLAB_CHECK(config_.optimizer == "adam" || config_.optimizer == "sgd",
               "unknown --optimizer '{}' (expected adam or sgd)", config_.optimizer);
  GCNLAB_CHECK(train_.epochs >= 1, "--epochs must be >= 1");
  GCNLAB_CHECK(train_.batch_size >= 0 && train_.steps_per_epoch >= 0 && train_.eval_every >= 0,
               "--batch-size, --steps-per-epoch and --eval-every must be >= 0");
  GCNLAB_CHECK(train_.target_acc >= 0 && train_.target_acc <= 1, "--target-acc must be in [0, 1] (got {})",
               train_.target_acc);
  GCNLAB_CHECK(!minibatch() || !config_.learn_features,
               "--batch-size does not support --learn-features (the sampled rows of H_0 would need their own "
               "optimiser state)");
  GCNLAB_CHECK(minibatch() || (train_.steps_per_epoch == 0 && train_.eval_every == 0),
               "--steps-per-epoch and --eval-every are for mini-batch training: add --batch-size B");
}

void Trainer::setup(const Dataset& data, const Graph& graph, const Weights* initial) {
  ledger_.set_phase(Phase::setup);
  world_.barrier();
  const auto t0 = Clock::now();
  distribute(data, graph);
  const int L = weight_layers();
  n_ = data.nodes();
  sampled_ = false;
  schedule_.reset();
  if (minibatch()) schedule_ = std::make_unique<MinibatchSchedule>(strategy_, ledger_, n_, train_, config_.seed);
  admit();
  buf_.allocate(buffer_plan(), backend_, backend_);
  const std::int64_t scratch_rows = spmm_scratch_rows();
  backend_.set_spmm_scratch(nullptr, 0);
  spmm_scratch_ = Buffer<float>(
      backend_, static_cast<std::size_t>(backend_.spmm_scratch_bytes(scratch_rows, arch_.dims) / sizeof(float)));
  backend_.set_spmm_scratch(spmm_scratch_.data(), scratch_rows);  // none where its size is 0: a null slab
  const Layout& in = strategy_.layout(0);
  for (int l = 0; l < L; ++l) buf_.layers[l].row_ids.upload(strategy_.layout(l).vertices);
  for (Parameter& q : buf_.params) {
    const ParameterSpec& p = q.spec;
    if (p.init == ParameterSpec::Init::glorot) {
      const auto [rows, cols] = global_shape(p, arch_);
      // Drawn and uploaded a few rows at a time, as the features below.
      const Block b = block_of(p, strategy_, arch_);
      const std::int64_t step = std::max<std::int64_t>(1, (std::int64_t{1} << 18) / std::max<std::int64_t>(1, b.cols));
      for (std::int64_t r0 = 0; r0 < b.rows; r0 += step) {
        const Block part = {b.row0 + r0, std::min(step, b.rows - r0), b.col0, b.cols};
        const std::vector<float> w = glorot_block(config_.seed, p.stream, p.fan_in > 0 ? p.fan_in : rows,
                                                  p.fan_out > 0 ? p.fan_out : cols, part);
        backend_.copy_to_device(q.value.data() + r0 * b.cols, w.data(), w.size() * sizeof(float));
      }
    } else {
      backend_.fill(q.value, p.init == ParameterSpec::Init::ones       ? 1.f
                             : p.init == ParameterSpec::Init::constant ? p.constant
                                                                       : 0.f);
    }
    backend_.fill(q.m, 0.f);
    backend_.fill(q.v, 0.f);
  }
  if (initial) scatter(&Parameter::value, *initial, "initial W");
  first_epoch_ = completed_epochs_ = 0;

  // Vertex data for this rank only: feature columns of layout(0), labels of
  // layout(L). Features go up in chunks of rows, so the host copy stays under
  // 1 MiB (simulate's thousands of ranks set up at once).
  const std::size_t kChunk = std::max<std::size_t>(1, (std::size_t{1} << 18) / std::max<std::size_t>(1, in.cols));
  std::vector<float> h0;
  for (std::size_t r0 = 0; r0 < in.vertices.size(); r0 += kChunk) {
    const std::span<const std::int64_t> rows(in.vertices.data() + r0, std::min(kChunk, in.vertices.size() - r0));
    h0.resize(rows.size() * in.cols);
    data.feature_rows(rows, in.col0, in.col0 + in.cols, h0.data());
    backend_.copy_to_device(buf_.features.data() + r0 * in.cols, h0.data(), h0.size() * sizeof(float));
  }
  if (config_.learn_features) {
    backend_.fill(buf_.feature_m, 0.f);
    backend_.fill(buf_.feature_v, 0.f);
  }
  const Layout& out = strategy_.layout(L);
  std::vector<std::int32_t> labels = data.labels_of(out.vertices);
  std::vector<std::uint8_t> split = data.split_of(out.vertices);
  buf_.labels.upload(labels);
  buf_.split.upload(split);
  n_train_ = static_cast<double>(data.count(ew::kTrain));
  if (minibatch()) {  // what the samples' rows are gathered from
    full_in_ = in.vertices;
    full_out_ = out.vertices;
    full_labels_ = std::move(labels);
    full_split_ = std::move(split);
    full_train_ = n_train_;
  }
  backend_.sync();
  setup_time_s_ = seconds_since(t0);
}

void Trainer::distribute(const Dataset& data, const Graph& graph) {
  arch_ = model_.architecture(config_, data.features, data.classes);
  dims_ = arch_.dims;
  params_ = model_.parameters(config_, arch_);
  model_.check(config_, strategy_.activation_plan());
  GCNLAB_CHECK(!minibatch() || arch_.values == EdgeValues::gcn,
               "--batch-size rescales a sample's Â (ScaleGNN Eq. 24, GCN's values); --model {} aggregates with {} "
               "values: train it on the full graph",
               arch_.model, to_string(arch_.values));
  if (arch_.values == EdgeValues::gcn) {
    strategy_.setup(graph, arch_);
  } else {
    const ValuedGraph valued(graph, arch_.values);
    strategy_.setup(valued, arch_);
  }
  orders_ = strategy_.orders(weight_layers());
  backward_orders_.clear();
  for (int l = 0; l < weight_layers(); ++l)
    backward_orders_.push_back(convolution_backward_order(strategy_, l, orders_[l], input_gradient(l)));
  buf_ = {};
}

namespace {

// Where each of `part`'s vertices sits in `full`, `part` being one or more
// subsequences of `full` one after the other (a sample's rows of a layout
// inside the full graph's rows of it; the serial oracle of D groups: D samples).
std::vector<std::int64_t> subsequence(const std::vector<std::int64_t>& full, const std::vector<std::int64_t>& part) {
  std::vector<std::int64_t> at;
  at.reserve(part.size());
  auto next = full.begin();
  for (const std::int64_t v : part) {
    auto it = std::find(next, full.end(), v);
    if (it == full.end()) it = std::find(full.begin(), full.end(), v);  // the next subsequence starts
    GCNLAB_ASSERT(it != full.end());
    at.push_back(it - full.begin());
    next = it + 1;
  }
  return at;
}

}  // namespace

void Trainer::restrict_to_step(int step) {
  {
    auto t = ledger_.time(Category::sampling);
    sampled_ = step >= 0;
    strategy_.restrict_to(sampled_ ? schedule_->cut(step).get() : nullptr);
    buf_.bind_activations(buffer_plan(), sampled_);
    bind_vertex_data();
  }
  if (!sampled_) {
    n_train_ = full_train_;
    return;
  }
  // The loss is the mean over the training vertices of all groups' samples.
  const ClassSplit classes = strategy_.class_split();  // rows split by class are counted once, as the loss counts them
  const bool counts = strategy_.counts_metrics() && (!classes.group || classes.group->rank() == 0);
  double count = counts ? sample_train_ : 0;
  world_.allreduce(std::span<double>(&count, 1), ReduceOp::sum, Category::allreduce);
  n_train_ = std::max(count, 1.0);
}

void Trainer::bind_vertex_data() {
  // Into the buffers planned for the full graph (ModelBuffers): a sample's rows are their first ones.
  const int L = weight_layers();
  for (int l = 0; l < L; ++l) buf_.put(buf_.layers[l].row_ids, std::span(strategy_.layout(l).vertices));
  if (!sampled_) {
    buf_.put(buf_.labels, std::span<const std::int32_t>(full_labels_));
    buf_.put(buf_.split, std::span<const std::uint8_t>(full_split_));
    return;
  }
  // Alg. 2 line 18: X_S = X[S_r], Y_S = Y[S_r] from this rank's own rows.
  buf_.put(buf_.sample_rows, std::span<const std::int64_t>(subsequence(full_in_, strategy_.layout(0).vertices)));
  backend_.gather_rows(buf_.features, buf_.sample_rows.data(), buf_.layers[0].h);
  std::vector<std::int32_t> labels;
  std::vector<std::uint8_t> split;
  for (const std::int64_t i : subsequence(full_out_, strategy_.layout(L).vertices)) {
    labels.push_back(full_labels_[static_cast<std::size_t>(i)]);
    split.push_back(full_split_[static_cast<std::size_t>(i)]);
  }
  buf_.put(buf_.labels, std::span<const std::int32_t>(labels));
  buf_.put(buf_.split, std::span<const std::uint8_t>(split));
  sample_train_ = static_cast<double>(std::count(split.begin(), split.end(), std::uint8_t{ew::kTrain}));
}

void Trainer::admit() const {
  double budget = train_.memory_budget;
  std::string source = train_.memory_budget_source;
  if (const auto free = backend_.free_bytes()) {  // what the strategy holds already counts as available
    const double device = static_cast<double>(*free + backend_.current_bytes());
    if (budget <= 0 || device < budget) budget = device, source = "free device memory + this rank's allocations";
  }
  const MemoryNeed need = memory_need();
  constexpr double MiB = 1 << 20;
  GCNLAB_CHECK(budget <= 0 || need.total() <= budget,
               "rank {} needs {:.1f} MiB (analytic: graph {:.1f}, buffers {:.1f}, activations {:.1f}, weights {:.1f}) "
               "but has {:.1f} MiB ({}): use more ranks (the need per rank shrinks about as 1/P), a smaller --hidden "
               "or --layers, or mggcn-1d's shared activation buffers",
               world_.rank(), need.total() / MiB, need.graph / MiB, need.buffers / MiB, need.activations / MiB,
               need.weights / MiB, budget / MiB, source);
}

Pass Trainer::pass(Primitives& p, ModelBuffers& buf, int epoch, bool training, bool tracing) const {
  return Pass{p,        strategy_, buf,      config_, arch_, orders_, backward_orders_, epoch, training,
              tracing ? nullptr : &backend_, tracing ? nullptr : &ledger_};
}

ByteModel Trainer::traced_layers() const {
  // The trainer's buffers for the current layouts as shapes without data.
  CountingAllocator counting;
  ModelBuffers shapes;
  const BufferPlan plan = buffer_plan();
  shapes.allocate(plan, counting, counting);
  if (sampled_) shapes.bind_activations(plan, /*sampled=*/true);
  // The model's training step, every primitive counted by its byte companion.
  ByteTracer t(strategy_);
  Pass p = pass(t, shapes, 0, /*training=*/true, /*tracing=*/true);
  model_.forward(p);
  model_.backward(p);
  return t.bytes();
}

void Trainer::forward(int epoch, bool training) {
  Pass p = pass(strategy_, buf_, epoch, training, /*tracing=*/false);
  model_.forward(p);
}

void Trainer::backward(int epoch) {
  Pass p = pass(strategy_, buf_, epoch, /*training=*/true, /*tracing=*/false);
  model_.backward(p);
}

XentSums Trainer::loss() {
  LayerBuffers& last = buf_.layers.back();
  return softmax_cross_entropy(backend_, ledger_, strategy_.class_split(), last.z,
                               strategy_.layout(weight_layers()).col0, buf_.labels.data(), buf_.split.data(), n_train_,
                               buf_.loss, last.g);
}

void Trainer::update(int step) {
  auto t = ledger_.time(Category::optimizer);
  const ew::AdamParams p{config_.lr,
                         config_.beta1,
                         config_.beta2,
                         config_.eps,
                         1.f - std::pow(config_.beta1, static_cast<float>(step)),
                         1.f - std::pow(config_.beta2, static_cast<float>(step))};
  for (Parameter& q : buf_.params) {
    if (q.spec.decay && config_.weight_decay > 0 && (!config_.weight_decay_first_only || q.spec.layer == 0))
      backend_.axpy(config_.weight_decay, q.value, q.grad);  // d/dW of λ/2 ||W||²
    if (config_.optimizer == "adam") backend_.adam(q.value, q.grad, q.m, q.v, p);
    else backend_.sgd(q.value, q.grad, config_.lr);
  }
  if (config_.learn_features) {
    LayerBuffers& s = buf_.layers[0];
    if (config_.optimizer == "adam") backend_.adam(s.h, s.dx, buf_.feature_m, buf_.feature_v, p);
    else backend_.sgd(s.h, s.dx, config_.lr);
  }
}

std::array<double, kMetrics> Trainer::metrics_of(const XentSums& s) const {
  std::array<double, kMetrics> m{s.loss, s.correct[1], s.correct[2], s.correct[3],
                                 s.counted[1], s.counted[2], s.counted[3]};
  if (!strategy_.counts_metrics()) m.fill(0);
  return m;
}

std::array<double, kMetrics> Trainer::reduce(std::array<double, kMetrics> m) {
  world_.allreduce(std::span<double>(m), ReduceOp::sum, Category::allreduce);
  return m;
}

std::array<double, kMetrics> Trainer::evaluate(int epoch) {
  if (sampled_) restrict_to_step(-1);
  forward(epoch, /*training=*/false);
  return reduce_metrics(loss());
}

void Trainer::check_target(double val_acc, double epochs) {
  if (train_.target_acc <= 0 || target_ || val_acc < train_.target_acc) return;
  target_ = TargetReached{epochs, train_seconds_, val_acc};
}

std::array<double, kMetrics> Trainer::minibatch_epoch(int epoch, std::vector<double>& step_seconds, double& eval_s) {
  // Alg. 1 once per step; the loss of each step is normalised by its own
  // training count, and the epoch's loss is the mean over its steps.
  const int S = steps_per_epoch();
  std::array<double, kMetrics> sums{};
  for (int s = 0; s < S; ++s) {
    const int step = epoch * S + s;
    ledger_.set_phase(Phase::epoch);
    const auto t0 = Clock::now();
    restrict_to_step(step);
    forward(step, /*training=*/true);
    const XentSums x = loss();
    if (train_.between_passes) train_.between_passes(epoch);
    backward(step);
    update(step + 1);
    backend_.sync();
    const double seconds = seconds_since(t0);
    step_seconds.push_back(seconds);
    train_seconds_ += seconds;
    const auto m = metrics_of(x);
    sums[0] += m[0] / n_train_;
    for (int k = 1; k < kMetrics; ++k) sums[k] += m[k];
    if (accumulate_model_) {
      model_sum_ += step_model();
    }
    if (train_.eval_every > 0 && (step + 1) % train_.eval_every == 0 && s + 1 < S) {
      ledger_.set_phase(Phase::eval);
      const auto t1 = Clock::now();
      const auto acc = evaluate(epoch);
      check_target(acc[5] > 0 ? acc[2] / acc[5] : 0, static_cast<double>(step + 1) / S);
      eval_s += seconds_since(t1);
    }
  }
  return sums;
}

RunResult Trainer::train(const std::function<bool(const EpochMetrics&)>& on_epoch) {
  RunResult r;
  r.dims = dims_;
  r.setup_time_s = setup_time_s_;
  r.initial_weights = gather_weights();
  const int E = train_.epochs;
  const int first_timed = E - first_epoch_ > 1 ? first_epoch_ + 1 : first_epoch_;  // the first epoch run warms up
  TimedSums timed;  // over the timed epochs
  std::vector<double> epoch_time, eval_time;
  model_sum_ = {};
  model_epochs_ = 0;
  for (int e = first_epoch_; e < E; ++e) {
    EpochMetrics em = run_epoch(e, e >= first_timed, timed);
    epoch_time.push_back(em.time_s), eval_time.push_back(em.eval_time_s);
    r.epochs.push_back(em);
    r.timed_epochs += e >= first_timed;
    if (on_epoch && !on_epoch(em)) break;  // stopped: every rank's callback agreed
  }

  // --- report: times as max over ranks, per-rank tallies gathered everywhere
  ledger_.set_phase(Phase::report);
  world_.allreduce(std::span<double>(epoch_time), ReduceOp::max, Category::allreduce);
  world_.allreduce(std::span<double>(eval_time), ReduceOp::max, Category::allreduce);
  for (std::size_t i = 0; i < r.epochs.size(); ++i) r.epochs[i].time_s = epoch_time[i], r.epochs[i].eval_time_s = eval_time[i];
  r.steps_per_epoch = steps_per_epoch();
  if (target_) {  // every rank reached it at the same evaluation (the accuracy is reduced)
    world_.allreduce(std::span<double>(&target_->train_seconds, 1), ReduceOp::max, Category::allreduce);
    r.target = target_;
  }
  r.ranks = gather_reports(world_, rank_report(timed, r.timed_epochs));
  r.final_weights = gather_weights();
  return r;
}

EpochMetrics Trainer::run_epoch(int e, bool timed, TimedSums& timed_sum) {
  ledger_.set_phase(Phase::epoch);
  world_.barrier();
  EpochMetrics em;
  em.epoch = e;
  std::array<double, kMetrics> m{};
  if (minibatch()) {
    accumulate_model_ = timed;
    std::vector<double> steps;
    m = reduce(minibatch_epoch(e, steps, em.eval_time_s));
    em.time_s = std::accumulate(steps.begin(), steps.end(), 0.0);
    model_epochs_ += accumulate_model_;
  } else {
    const auto t0 = Clock::now();
    forward(e, /*training=*/true);
    const XentSums sums = loss();
    if (train_.between_passes) train_.between_passes(e);
    backward(e);
    update(e + 1);
    m = reduce_metrics(sums);
    m[0] /= n_train_;
    backend_.sync();
    em.time_s = seconds_since(t0);
    train_seconds_ += em.time_s;
  }
  completed_epochs_ = e + 1;
  CategoryTallies tallies = ledger_.take(Phase::epoch);
  const CategoryWork work = ledger_.take_work(Phase::epoch);
  for (int c = 0; c < kNumCategories; ++c) em.wire_bytes[c] = tallies[c].wire_bytes;

  if ((config_.dropout > 0 && train_.eval_each_epoch) || minibatch()) {  // mini-batches: accuracy of the full graph
    ledger_.set_phase(Phase::eval);
    const auto t1 = Clock::now();
    const auto acc = evaluate(e);
    for (int k = 1; k < kMetrics; ++k) m[k] = acc[k];
    backend_.sync();
    em.eval_time_s += seconds_since(t1);
  }

  double accounted = 0;
  for (int c = 0; c < kNumCategories; ++c) accounted += tallies[c].time_s;
  tallies[static_cast<int>(Category::other)].time_s = std::max(0.0, em.time_s - accounted);
  if (timed) {
    for (int c = 0; c < kNumCategories; ++c) timed_sum.tallies[c] += tallies[c];
    timed_sum.work += work;
  }

  auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
  em.loss = minibatch() ? m[0] / steps_per_epoch() : m[0];
  em.train_acc = ratio(m[1], m[4]);
  em.val_acc = ratio(m[2], m[5]);
  em.test_acc = ratio(m[3], m[6]);  // time_s is this rank's; train() replaces it by the max over ranks
  check_target(em.val_acc, e + 1);
  return em;
}

CategoryWork Trainer::epoch_work() {
  TimedSums one;
  run_epoch(completed_epochs_, /*timed=*/true, one);
  return one.work;
}

std::int64_t Trainer::edges_local() const {
  const EdgeAttention* edges = strategy_.edge_attention();
  return arch_.attends() && edges ? edges->edges() : strategy_.nnz_local();
}

RankReport Trainer::rank_report(const TimedSums& timed, int timed_epochs) const {
  RankReport rr;
  rr.rank = world_.rank();
  rr.coords = strategy_.coords();
  rr.nnz_local = strategy_.nnz_local();
  rr.edges_local = edges_local();
  rr.peak_bytes = static_cast<double>(backend_.peak_bytes());
  rr.host_peak_bytes = host_peak_bytes();
  rr.staging_host_bytes = world_.staging_host_bytes();
  rr.memory = memory_need();
  const ByteModel model = byte_model();
  rr.model_link = link_bytes(model, world_.members()[world_.rank()], train_.ranks_per_node);
  const CategoryTallies& setup = ledger_.tallies(Phase::setup);
  const double te = std::max(timed_epochs, 1);
  for (int c = 0; c < kNumCategories; ++c) {
    const Tally& t = timed.tallies[c];
    rr.per_epoch[c] = {t.time_s / te, t.payload_bytes / te, t.wire_bytes / te,
                       static_cast<std::int64_t>(std::llround(static_cast<double>(t.calls) / te)), t.hidden_s / te,
                       t.padding_bytes / te};
    rr.setup[c] = {setup[c].time_s, setup[c].payload_bytes, setup[c].wire_bytes, setup[c].calls};
    rr.model[c] = model[c];
    for (int k = 0; k < kNumKernels; ++k) {
      const Work& w = timed.work[c][k];
      rr.work[c][k] = {w.amount / te, static_cast<std::int64_t>(std::llround(static_cast<double>(w.calls) / te)),
                       w.nonzeros / te, w.row_elements / te, w.bytes / te};
    }
  }
  return rr;
}

ByteModel Trainer::step_model() const {
  ByteModel m = traced_layers();
  // the split-class softmax's collectives, and a sample's training count
  const ClassSplit classes = strategy_.class_split();
  const auto [category, bytes] = softmax_cross_entropy_bytes(
      classes, static_cast<std::int64_t>(strategy_.layout(weight_layers()).vertices.size()));
  if (classes.split()) m.add(category, *classes.group, bytes);
  if (sampled_) m.add(Category::allreduce, world_, wire::allreduce(sizeof(double), world_.size()));
  return m;
}

ByteModel Trainer::byte_model() const {
  // Mini-batches: the steps of the timed epochs, each on its own sample, averaged per epoch.
  ByteModel m = step_model();
  if (minibatch() && model_epochs_ > 0) {
    m = model_sum_;
    m *= 1.0 / model_epochs_;
  }
  // one reduction of the metrics per epoch
  m.add(Category::allreduce, world_, wire::allreduce(kMetrics * sizeof(double), world_.size()));
  return m;
}

ByteModel Trainer::planned_byte_model() {
  if (!minibatch()) return byte_model();
  ByteModel m;
  for (int s = 0; s < steps_per_epoch(); ++s) {
    restrict_to_step(first_epoch_ * steps_per_epoch() + s);
    m += step_model();
  }
  restrict_to_step(-1);
  m.add(Category::allreduce, world_, wire::allreduce(kMetrics * sizeof(double), world_.size()));
  return m;
}

BufferPlan Trainer::buffer_plan() const { return {&strategy_, &model_, config_, arch_, params_, minibatch()}; }

MemoryNeed Trainer::memory_need() const {
  // The trainer's buffers as ModelBuffers::allocate lays them out, counted.
  MemoryNeed m = strategy_.memory_need();
  const auto [activations, weights] = ModelBuffers::bytes(buffer_plan());
  m.activations += activations;
  m.weights += weights;
  m.buffers += backend_.spmm_scratch_bytes(spmm_scratch_rows(), arch_.dims);
  return m;
}

Trainer::~Trainer() { backend_.set_spmm_scratch(nullptr, 0); }

std::int64_t Trainer::spmm_scratch_rows() const {
  std::size_t rows = 0;
  for (int l = 0; l <= weight_layers(); ++l) rows = std::max(rows, strategy_.layout(l).vertices.size());
  return static_cast<std::int64_t>(rows);
}

std::pair<double, Weights> Trainer::loss_and_gradients(int epoch) {
  const Phase previous = ledger_.phase();
  ledger_.set_phase(Phase::eval);
  forward(epoch, /*training=*/true);
  const auto m = reduce_metrics(loss());
  backward(epoch);
  ledger_.set_phase(previous);
  return {m[0] / n_train_, gather(&Parameter::grad)};  // full graph: a mini-batch run's layouts are restored after each epoch
}

TrainingState Trainer::state() {
  TrainingState s;
  s.epoch = completed_epochs_;
  s.params = parameter_shapes();
  s.w = gather(&Parameter::value);
  if (config_.optimizer == "adam") s.m = gather(&Parameter::m), s.v = gather(&Parameter::v);
  std::array<double, 2> seconds = {train_seconds_, target_ ? target_->train_seconds : 0.0};
  world_.allreduce(std::span<double>(seconds), ReduceOp::max, Category::allreduce);
  s.train_seconds = seconds[0];
  if (target_) s.target = TargetReached{target_->epochs, seconds[1], target_->val_acc};
  return s;
}

std::vector<ParameterShape> Trainer::parameter_shapes() const {
  std::vector<ParameterShape> out;
  for (const ParameterSpec& p : params_) {
    const auto [rows, cols] = global_shape(p, arch_);
    out.push_back({p.name, rows, cols});
  }
  return out;
}

FeatureBlock Trainer::feature_layout() const {
  const Layout& in = strategy_.layout(0);
  FeatureBlock b;
  b.vertices = in.vertices;
  b.col0 = in.col0;
  b.cols = in.cols;
  return b;
}

FeatureBlock Trainer::feature_block() const {
  GCNLAB_ASSERT(config_.learn_features);
  FeatureBlock b = feature_layout();
  b.x = buf_.features.download();
  if (config_.optimizer == "adam") b.m = buf_.feature_m.download(), b.v = buf_.feature_v.download();
  return b;
}

void Trainer::restore(const TrainingState& s, const FeatureBlock* features) {
  GCNLAB_CHECK(s.epoch >= 0 && s.epoch < train_.epochs, "training resumes at epoch {}: --epochs {} leaves nothing to run",
               s.epoch, train_.epochs);
  const bool adam = config_.optimizer == "adam";
  GCNLAB_CHECK(s.m.empty() == !adam && s.v.empty() == !adam,
               "the training state {} Adam moments, the run's optimizer is {}", adam ? "lacks" : "has", config_.optimizer);
  GCNLAB_CHECK(!features == !config_.learn_features, "the training state {} learned features, the run {}",
               features ? "has" : "lacks", config_.learn_features ? "learns them (--learn-features)" : "does not learn them");
  if (!s.params.empty()) {
    const std::vector<ParameterShape> mine = parameter_shapes();
    auto listing = [](const std::vector<ParameterShape>& ps) {
      std::string out;
      for (const ParameterShape& p : ps) out += fmt::format("{}{} {}x{}", out.empty() ? "" : ", ", p.name, p.rows, p.cols);
      return out;
    };
    GCNLAB_CHECK(s.params == mine, "the training state's parameters are {}, the model's {}", listing(s.params),
                 listing(mine));
  }
  scatter(&Parameter::value, s.w, "W");
  if (adam) scatter(&Parameter::m, s.m, "Adam m of W"), scatter(&Parameter::v, s.v, "Adam v of W");
  if (features) {
    const FeatureBlock mine = feature_layout();
    const std::size_t size = mine.vertices.size() * static_cast<std::size_t>(mine.cols);
    GCNLAB_CHECK(features->vertices == mine.vertices && features->col0 == mine.col0 && features->cols == mine.cols &&
                     features->x.size() == size && features->m.size() == (adam ? size : 0) &&
                     features->v.size() == features->m.size(),
                 "the learned features restored are not this rank's block of X");
    buf_.features.upload(features->x);
    if (adam) buf_.feature_m.upload(features->m), buf_.feature_v.upload(features->v);
  }
  first_epoch_ = completed_epochs_ = s.epoch;
  train_seconds_ = s.train_seconds;
  target_ = s.target;
}

void Trainer::scatter(Dense Parameter::*member, const Weights& full, const char* what) {
  const std::vector<Parameter>& params = buf_.params;
  GCNLAB_CHECK(static_cast<int>(full.size()) == weight_layers() || full.size() == params.size(),
               "{} has {} matrices, the model {} weight matrices{}", what, full.size(), weight_layers(),
               params.size() > static_cast<std::size_t>(weight_layers())
                   ? fmt::format(" (and {} other parameters)", params.size() - weight_layers())
                   : std::string());
  for (std::size_t k = 0; k < full.size(); ++k) {
    const ParameterSpec& p = params[k].spec;
    const Block b = block_of(p, strategy_, arch_);
    const auto [rows, cols] = global_shape(p, arch_);
    GCNLAB_CHECK(static_cast<std::int64_t>(full[k].size()) == rows * cols, "{} {} has {} values, expected {} x {}",
                 what, p.name, full[k].size(), rows, cols);
    std::vector<float> block(static_cast<std::size_t>(b.rows * b.cols));
    for (std::int64_t i = 0; i < b.rows; ++i)
      for (std::int64_t j = 0; j < b.cols; ++j) block[i * b.cols + j] = full[k][(b.row0 + i) * cols + b.col0 + j];
    (buf_.params[k].*member).upload(block);
  }
}

Weights Trainer::gather(Dense Parameter::*member) {
  // Each rank adds its block into a zeroed global matrix; replicas are
  // averaged exactly (sums of identical floats are exact in double).
  const Phase previous = ledger_.phase();
  ledger_.set_phase(Phase::report);
  Weights out;
  for (Parameter& q : buf_.params) {
    const Block b = block_of(q.spec, strategy_, arch_);
    const auto [rows, cols] = global_shape(q.spec, arch_);
    const std::size_t total = static_cast<std::size_t>(rows * cols);
    std::vector<double> sum(2 * total, 0.0);  // values, then counts
    const std::vector<float> w = (q.*member).download();
    for (std::int64_t i = 0; i < b.rows; ++i)
      for (std::int64_t j = 0; j < b.cols; ++j) {
        const std::size_t k = static_cast<std::size_t>((b.row0 + i) * cols + b.col0 + j);
        sum[k] += w[i * b.cols + j];
        sum[total + k] += 1;
      }
    world_.allreduce(std::span<double>(sum), ReduceOp::sum, Category::allreduce);
    std::vector<float> full(total);
    for (std::size_t k = 0; k < total; ++k) {
      GCNLAB_ASSERT(sum[total + k] > 0);
      full[k] = static_cast<float>(sum[k] / sum[total + k]);
    }
    out.push_back(std::move(full));
  }
  ledger_.set_phase(previous);
  return out;
}

}  // namespace gcnlab
