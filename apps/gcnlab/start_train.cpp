// start_train: a training run set up in agreed phases (arguments, checkpoint,
// backend, admission, load, strategy, partition, weights, setup, restore), so
// that an error on any rank ends every rank with one line (issue 33).
#include <array>
#include <filesystem>
#include <functional>
#include <optional>

#include <fmt/format.h>

#include "algorithms/registry.hpp"
#include "apps/gcnlab/injection.hpp"
#include "apps/gcnlab/placement.hpp"
#include "common/comm/node.hpp"
#include "apps/gcnlab/staging.hpp"
#include "apps/gcnlab/train_args.hpp"
#include "common/core/atomic_file.hpp"
#include "common/core/stop_signal.hpp"
#include "common/data/dataset.hpp"
#include "common/data/graph.hpp"
#include "common/data/shards.hpp"
#include "common/results/checkpoint.hpp"
#include "partitioners/prepare.hpp"
#include "gcnlab_config.hpp"

namespace gcnlab::cli {

namespace {

// --resume: the checkpoint to continue from (none for `auto` on an empty --checkpoint DIR).
std::optional<Checkpoint> read_resume(const TrainArgs& a, const TrainRun& run) {
  if (!a.resume_from) return {};
  // auto: continue from --checkpoint DIR when it holds a checkpoint, else start
  // at epoch 0 (one command line for the first job and every requeue).
  GCNLAB_CHECK(*a.resume_from != "auto" || run.checkpoint_dir, "--resume auto needs --checkpoint DIR");
  const auto path = *a.resume_from == "auto" ? latest_checkpoint(*run.checkpoint_dir) : a.resume_from;
  std::optional<Checkpoint> resume;
  if (path) resume = read_checkpoint(*path);  // before loading: a bad checkpoint fails fast
  GCNLAB_CHECK(!resume || resume->state.epoch <= run.train.epochs,
               "checkpoint '{}' is at epoch {}, past --epochs {}: nothing to run (give --epochs {} or more)",
               resume ? resume->path : "", resume ? resume->state.epoch : 0, run.train.epochs,
               resume ? resume->state.epoch : 0);
  return resume;
}

// The history a checkpoint records (history.json).
RunHistory history_of(const Checkpoint& c) {
  try {
    return history_from_json(c.history);
  } catch (const nlohmann::json::exception& e) {
    fail("'{}/history.json' is not a run history ({})", c.path, e.what());
  }
}

// --resume on a checkpoint of the last epoch: a requeued job that had already
// finished (or a sweep's rerun). Nothing to train; --out is left as it is when
// it holds the complete results, else written from the checkpoint's record of
// them. One line on rank 0.
void finish_finished(const TrainRun& run, const Checkpoint& c, const MpiCommunicator& world) {
  if (world.rank() != 0) return;
  std::string what = "no --out";
  if (run.out && complete_results(*run.out)) {
    what = fmt::format("its results {} left as they are", *run.out);
  } else if (run.out) {
    GCNLAB_CHECK(!c.results.is_null(), "the run already finished (checkpoint '{}' is at epoch {} of --epochs {}) but "
                 "'{}' does not hold its results and the checkpoint does not record them (written before gcnlab "
                 "recorded them): rerun without --resume to get them", c.path, c.state.epoch, run.train.epochs, *run.out);
    write_file_atomically(*run.out, c.results.dump(1) + "\n");
    what = fmt::format("its results written to {} from the checkpoint", *run.out);
  }
  fmt::print(stderr, "gcnlab: the run already finished: checkpoint {} is at epoch {} of --epochs {}; {}; nothing to "
             "train\n", c.path, c.state.epoch, run.train.epochs, what);
  std::fflush(stderr);
}

// 1536 -> "1.5 KiB" (binary units, as the admission messages give them).
std::string binary_bytes(double b) {
  constexpr std::array<const char*, 7> units = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  std::size_t u = 0;
  for (; b >= 1024 && u + 1 < units.size(); ++u) b /= 1024;
  return fmt::format("{:.1f} {}", b, units[u]);
}

// Admission before loading: what the dataset's facts alone prove a rank
// needs, refused before anything graph-sized is allocated. Two lower bounds
// that hold for every strategy: loading an in-memory dataset holds its row
// offsets, labels and split (and stored features) whole on every rank; training
// holds each vertex's input features, label and split on some rank, so the
// fullest of P ranks holds at least 1/P of them. The strategy's exact need
// (Trainer::admit) is checked again once it holds its blocks.
void admit_before_loading(const TrainRun& run, const TrainArgs& a, int ranks) {
  const std::optional<DatasetFacts> facts = dataset_facts(a.dataset_spec);
  if (!facts || facts->nodes == 0) return;
  const double n = static_cast<double>(facts->nodes), f = static_cast<double>(facts->features);
  const double per_vertex = sizeof(std::int64_t) + sizeof(std::int32_t) + sizeof(std::uint8_t);  // offset, label, split
  double budget = run.train.memory_budget;
  std::string source = run.train.memory_budget_source;
  if (!facts->prepared && budget > 0) {
    const double load = n * (per_vertex + (facts->stored_features ? f * sizeof(float) : 0.0));
    GCNLAB_CHECK(load <= budget, "{} cannot be loaded here: its {} vertices need at least {} per rank to load (every "
                 "rank holds the whole graph's row offsets, labels and split{}) but a rank has {} ({}): prepare it as "
                 "shards (gcnlab prepare --shards) on a machine that holds it, or use a smaller graph",
                 a.dataset_spec, facts->nodes, binary_bytes(load), facts->stored_features ? " and features" : "",
                 binary_bytes(budget), source);
  }
  if (const auto free = run.backend->free_bytes(); free && (budget <= 0 || static_cast<double>(*free) < budget))
    budget = static_cast<double>(*free), source = "free device memory";
  if (budget <= 0) return;
  const double train = n * (f * sizeof(float) + sizeof(std::int32_t) + sizeof(std::uint8_t)) / ranks;
  GCNLAB_CHECK(train <= budget, "{} cannot be trained on {} rank(s) here: its {} vertices need at least {} per rank "
               "(each vertex's {} input features, label and split, spread over the ranks) but a rank has {} ({}): "
               "use more ranks or a smaller graph",
               a.dataset_spec, ranks, facts->nodes, binary_bytes(train), facts->features, binary_bytes(budget), source);
}

// The backend of the run (rank-local: a CUDA rank picks its device).
void open_backend(TrainRun& run, MpiCommunicator& world, const TrainArgs& a) {
  RunInfo& info = run.info;
  run.backend = make_backend(info.backend, {info.threads, a.node.local_rank, a.node.count, a.gpu_comm == "mpi", a.node.nccl_host_ids});
  for (const auto& [what, version] : run.backend->versions()) info.provenance["versions"][what] = version;
  attach_ledger(*run.backend, world.ledger());
}

// The backend's communicator, the strategy (its communicators split from the
// world: collective) and the trainer of a run on `data`.
void build_strategy(TrainRun& run, MpiCommunicator& world, const TrainArgs& a, const Dataset& data) {
  run.device_world = make_device_communicator(*run.backend, world, a.gpu_comm);
  Communicator& comm = run.comm(world);
  run.strategy = make_strategy(run.strategy_options, {comm, *run.backend});
  // A prepared dataset keeps the layout it was prepared with (checked in graph_for).
  run.info.partitioner = a.partitioner ? *a.partitioner : data.shards ? "block" : run.strategy->default_partitioner();
  run.gnn = make_model(run.model.name);
  run.trainer = std::make_unique<Trainer>(*run.strategy, *run.gnn, comm, *run.backend, run.model, run.train);
}

// The graph this strategy reads (an in-memory dataset is prepared here; a
// prepared directory is read block by block in setup) and the dataset's
// description, checked against the checkpoint's.
RunGraph run_graph(TrainRun& run, const Dataset& data, const std::optional<Checkpoint>& resume) {
  RunInfo& info = run.info;
  RunGraph graph = graph_for(data, *run.strategy, info.partitioner, run.model.seed);
  if (data.shards) info.partitioner = data.shards->meta().layout.partitioner;
  info.partition_quality = graph.partition;
  info = describe_dataset(info, data);
  info.model = run.model;
  if (run.checkpoint_dir || resume)  // of the kind the checkpoint recorded, to compare with it
    info.dataset_fingerprint = dataset_fingerprint(data, resume ? resume->identity.value("dataset", nlohmann::json::object()).value("fingerprint", "") : "");
  if (resume) check_identity(*resume, checkpoint_identity(info, architecture(run.model, data.features, data.classes).dims));
  return graph;
}

// The run's description in its results.
void describe_run(TrainRun& run, const MpiCommunicator& world) {
  RunInfo& info = run.info;
  info.algo = run.strategy_options.algo;
  info.permutation = run.strategy->permutation();
  info.strategy_options = declared_options_json(run.strategy_options);
  info.dp_groups = run.strategy->data_parallel()[0];
  info.comm_precision = run.strategy_options.comm_precision;
  info.activations = to_string(run.strategy->activation_plan());
  info.grid = run.strategy->grid();
  info.ranks = world.size();
  info.train = run.train;
  info.describe = run.strategy->describe();
  for (ProductOrder o : run.strategy->orders(run.model.layers)) info.order.push_back(to_string(o));
}


// --resume on a checkpoint of the last epoch: its model must be this run's.
// Known before loading: the model's hyper-parameters, and its widths but the
// dataset's (f_0, classes).
void check_finished_model(const ModelConfig& model, Checkpoint& resume) {
  const auto stored = resume.identity.at("model").at("dims").get<std::vector<std::int64_t>>();
  RunInfo probe;
  probe.model = model;
  nlohmann::json mine = checkpoint_identity(probe, architecture(model, stored.front(), stored.back()).dims).at("model");
  mine["variant"] = model.name;
  nlohmann::json& recorded = resume.identity["model"];  // not resumed from: compared only here
  recorded["variant"] = recorded.value("variant", "gcn");  // absent: gcn
  check_identity(resume, {{"model", {{"variant", mine["variant"]}}}});  // the model first, then its options
  check_identity(resume, {{"model", mine}});
}

// The run set up: its checkpointing and resumption in its description, and
// this segment begun in its history.
void begin_segment(TrainRun& run, const std::optional<Checkpoint>& resume, const MpiCommunicator& world) {
  RunInfo& info = run.info;
  if (run.checkpoint_dir) info.checkpoint = {{"dir", *run.checkpoint_dir}, {"every", run.checkpoint_every}};
  if (resume) {
    info.resumed_from = {{"path", resume->path}, {"epoch", resume->state.epoch}, {"run", resume->run}};
    log(world, fmt::format("resuming at epoch {} from {} (written by {} on {} rank(s))", resume->state.epoch,
                           resume->path, resume->run.value("algo", "?"), resume->run.value("ranks", nlohmann::json("?")).dump()));
  } else if (run.checkpoint_dir && std::filesystem::exists(*run.checkpoint_dir)) {
    log(world, fmt::format("no checkpoint in {}: starting at epoch 0", *run.checkpoint_dir));
  }
  describe_run(run, world);
  run.history.begin(resume ? resume->state.epoch : 0,
                    {{"started_utc", info.provenance.value("timestamp_utc", "")},
                     {"algo", info.algo},
                     {"grid", info.grid},
                     {"ranks", info.ranks},
                     {"threads", info.threads},
                     {"backend", info.backend},
                     {"git_sha", GCNLAB_GIT_SHA},
                     {"slurm_job_id", info.provenance.value("slurm_job_id", nlohmann::json())}});
  if (const std::string w = info.provenance["binding"]["warning"]; !w.empty()) log(world, "gcnlab: warning: " + w);
}

}  // namespace

TrainRun start_train(Args& args, MpiCommunicator& world, int default_epochs, bool stop_signals) {
  TrainRun run;
  TrainArgs a;
  Injection fault, signal;  // test-only: GCNLAB_INJECT_FAULT, GCNLAB_INJECT_SIGNAL
  std::optional<Checkpoint> resume;
  std::optional<Dataset> data;  // the whole dataset: freed once the trainer holds this rank's shards
  std::optional<RunGraph> graph;
  std::optional<Weights> initial;
  const NodeRanks node = node_ranks(world.native());  // collective: before any phase can fail on one rank
  // Each phase is agreed on by every rank before the next one's collectives, so
  // an error on one rank ends every rank with one line (issue 33).
  const auto phase = [&](const char* name, const std::function<void()>& fn) {
    collectively(world, [&] {
      fault.at(world.rank(), name);
      signal.at(world.rank(), name);
      fn();
    });
  };
  phase("arguments", [&] {
    fault = Injection::from_environment("GCNLAB_INJECT_FAULT");
    fault.at(world.rank(), "arguments");
    a = read_train_args(args, world, node, default_epochs, stop_signals, run);
    signal = Injection::from_environment("GCNLAB_INJECT_SIGNAL");
    run.train.between_passes = signal.between_passes(world.rank(), fault.between_passes(world.rank()));
    run.injection = [signal, rank = world.rank()](std::string_view place) { signal.at(rank, place); };
    // From here a scheduler's signal stops the run at an epoch boundary (common/core/stop_signal.hpp).
    if (stop_signals) stop::install(a.stop_signal, a.stop_grace, world.rank());
  });
  phase("checkpoint", [&] {  // before loading: a bad checkpoint fails fast
    resume = read_resume(a, run);
    if (resume && resume->state.epoch == run.train.epochs) {  // the run is finished: its model must be this one
      check_finished_model(run.model, *resume);
      run.finished = true;
    }
    run.history = resume && !resume->history.is_null() ? history_of(*resume) : RunHistory{};
  });
  if (run.finished) {
    collectively(world, [&] { finish_finished(run, *resume, world); });
    return run;
  }
  phase("backend", [&] { open_backend(run, world, a); });
  phase("admission", [&] { admit_before_loading(run, a, world.size()); });
  phase("load", [&] {
    data = load_dataset(a.dataset_spec);
    if (a.auto_grid) run.strategy_options.grid = auto_grid(*data, run.strategy_options, run.model, world.size(), a.machine);
  });
  phase("strategy", [&] { build_strategy(run, world, a, *data); });
  phase("partition", [&] { graph = run_graph(run, *data, resume); });
  phase("weights", [&] {
    if (a.weights_in)
      initial = read_weights(*a.weights_in, *run.gnn, run.model, run.gnn->architecture(run.model, data->features, data->classes));
  });
  phase("setup", [&] { run.trainer->setup(*data, *graph->graph, initial ? &*initial : nullptr); });
  graph.reset();
  data.reset();
  phase("restore", [&] {
    if (!resume) return;
    std::optional<FeatureBlock> features;  // this rank's rows of X, whatever layout wrote them
    if (run.model.learn_features) features = read_feature_rows(*resume, run.trainer->feature_layout());
    run.trainer->restore(resume->state, features ? &*features : nullptr);
  });
  begin_segment(run, resume, world);
  return run;
}

}  // namespace gcnlab::cli
