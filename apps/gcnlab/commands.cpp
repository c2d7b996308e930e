#include "backends/factory.hpp"
#include "apps/gcnlab/commands.hpp"
#include "common/core/atomic_file.hpp"
#include "common/core/fingerprint.hpp"
#include "common/core/host_memory.hpp"
#include "common/core/stop_signal.hpp"
#include "common/core/threads.hpp"

#include <algorithm>
#include <array>
#include <filesystem>
#include <numeric>
#include <fstream>
#include <cstdio>
#include <unistd.h>
#include <csignal>
#include <cstdlib>
#include <functional>
#include <limits>
#include <optional>
#include <thread>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <mpi.h>

#include "algorithms/registry.hpp"
#include "models/registry.hpp"
#include "common/comm/mpi_communicator.hpp"
#include "algorithms/plexus-3d/decomposition.hpp"
#include "common/comm/process_grid.hpp"
#include "common/data/dataset.hpp"
#include "common/data/graph.hpp"
#include "common/data/shards.hpp"
#include "common/model/trainer.hpp"
#include "common/results/checkpoint.hpp"
#include "common/results/npy.hpp"
#include "common/results/results.hpp"
#include "partitioners/partition.hpp"
#include "partitioners/prepare.hpp"
#include "partitioners/ptscotch.hpp"

#include <chrono>
#include <ctime>
#include "gcnlab_config.hpp"

namespace gcnlab::cli {

namespace {

}  // namespace

namespace {

// The communicator the ranks agree on: a duplicate of the world, made by the
// first agreement (main's, on the command line, which every rank reaches), so
// that an agreement never matches a collective of the phase on the world or its
// splits. It shares the world's ledger: its bytes count as the world's did.
// Never freed (MPI_Finalize does): the process holds one.
Communicator& agreement(MpiCommunicator& world) {
  static MpiCommunicator* dup = [&] {
    MPI_Comm c;
    GCNLAB_MPI(MPI_Comm_dup(world.native(), &c));
    return new MpiCommunicator(c, world.ledger(), /*owned=*/true);
  }();
  return *dup;
}

// How long a failed rank waits for the others to reach the agreement before it
// ends the job: they may be inside a collective of the phase it left.
constexpr auto kAgreementDeadline = std::chrono::seconds(5);

}  // namespace

void collectively(MpiCommunicator& world, const std::function<void()>& fn) {
  std::string message;
  std::int32_t code = 0;
  try {
    fn();
  } catch (const UsageError& e) {
    message = e.what(), code = 2;
  } catch (const std::exception& e) {
    message = e.what(), code = 1;
  }
  Communicator& agree = agreement(world);
  std::int32_t first = code ? agree.rank() : agree.size();
  {
    auto pending = agree.iallreduce(std::span<std::int32_t>(&first, 1), ReduceOp::min, Category::allreduce);
    if (code) {  // the others may be inside a collective this rank left: a deadline, then the whole job ends
      const auto deadline = std::chrono::steady_clock::now() + kAgreementDeadline;
      while (!pending.test()) {
        if (std::chrono::steady_clock::now() > deadline) {
          fmt::print(stderr, "gcnlab: error: {}\n", message);
          std::fflush(stderr);
          MPI_Abort(MPI_COMM_WORLD, code);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
    pending.wait();
  }
  if (first == agree.size()) return;
  if (first == agree.rank()) {
    fmt::print(stderr, "gcnlab: error: {}\n", message);
    std::fflush(stderr);
  }
  agree.broadcast(std::span<std::int32_t>(&code, 1), first, Category::bcast_dense);  // the reporting rank's status
  throw ReportedError{code};
}

namespace {

// This rank's place on its node: (index among the node's ranks, ranks on the node).
std::pair<int, int> node_position(const MpiCommunicator& world) {
  MPI_Comm node;
  GCNLAB_MPI(MPI_Comm_split_type(world.native(), MPI_COMM_TYPE_SHARED, world.rank(), MPI_INFO_NULL, &node));
  int local = 0, count = 1;
  MPI_Comm_rank(node, &local);
  MPI_Comm_size(node, &count);
  MPI_Comm_free(&node);
  return {local, count};
}

// The setup phases of train, in order; each ends in an agreement before the
// next one's collectives (start_train).
constexpr std::array<const char*, 10> kSetupPhases = {"arguments", "checkpoint", "backend", "admission", "load",
                                                      "strategy",  "partition",  "weights", "setup",     "restore"};

// Test-only injections (tests/cli/checkpoint.sh, phases.sh, stop.sh): on one rank,
//   GCNLAB_INJECT_FAULT=RANK:WHERE       throws (the other ranks must end with it);
//   GCNLAB_INJECT_SIGNAL=RANK:WHERE:SIG  raises SIG, as if the scheduler had sent it to that rank;
// WHERE is an epoch (between its forward and backward pass, TrainConfig::between_passes),
// a setup phase (at its start) or, for a signal, `checkpoint-write` (inside the first checkpoint write).
struct Injection {
  const char* variable = "";
  int rank = -1;
  std::string where;  // a setup phase or "checkpoint-write"; empty: an epoch
  int epoch = -1;
  int signal = 0;  // 0: a fault

  static Injection from_environment(const char* variable) {
    Injection f;
    f.variable = variable;
    const char* spec = std::getenv(variable);
    if (!spec) return f;
    const bool signal = std::string_view(variable) == "GCNLAB_INJECT_SIGNAL";
    char what[32] = {}, sig[16] = {};
    GCNLAB_CHECK(std::sscanf(spec, "%d:%31[^:]:%15s", &f.rank, what, sig) == (signal ? 3 : 2),
                 "{} takes RANK:EPOCH or RANK:PHASE{} (got '{}')", variable, signal ? " and :SIGNAL" : "", spec);
    if (signal) f.signal = stop::parse(sig);
    if (std::sscanf(what, "%d", &f.epoch) != 1) {
      f.where = what;
      GCNLAB_CHECK(std::find(kSetupPhases.begin(), kSetupPhases.end(), f.where) != kSetupPhases.end() ||
                       (signal && f.where == "checkpoint-write"),
                   "{}: no setup phase '{}' (one of {}{})", variable, f.where, fmt::join(kSetupPhases, ", "),
                   signal ? ", or checkpoint-write" : "");
    }
    return f;
  }
  void fire(int rank_now, const std::string& where_now) const {
    if (signal) std::raise(signal);
    else fail("injected fault ({}) on rank {} in {}", variable, rank_now, where_now);
  }
  // At the start of setup phase `place` (or in the checkpoint write).
  void at(int rank_now, std::string_view place) const {
    if (rank_now == rank && where == place) fire(rank_now, fmt::format("setup phase {}", place));
  }
  // This rank's epoch injection, for TrainConfig::between_passes (`then`: another one to run first).
  std::function<void(int)> between_passes(int rank_now, std::function<void(int)> then = {}) const {
    if (rank_now != rank || !where.empty()) return then;
    return [*this, rank_now, then](int epoch) {
      if (then) then(epoch);
      if (epoch == this->epoch) fire(rank_now, fmt::format("epoch {}", epoch));
    };
  }
};

// This process's command line as typed (from /proc/self/cmdline; arguments
// with spaces quoted). Under mpirun: the gcnlab part, the rank count is config.ranks.
std::string command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string line, arg;
  while (std::getline(in, arg, '\0')) {
    if (!line.empty()) line += ' ';
    line += arg.find_first_of(" \t'\"") == std::string::npos ? arg : fmt::format("'{}'", arg);
  }
  return line;
}

// Where, when and how the run was made (results "provenance", the same on every rank but rank 0's recorded).
nlohmann::json provenance(const Communicator& world, int ranks_on_node, const ThreadChoice& threads,
                          const CpuPlacement& place) {
  char when[32] = {};
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &utc);
  char mpi[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  MPI_Get_library_version(mpi, &len);
  std::string mpi_version(mpi, static_cast<std::size_t>(len));
  mpi_version = mpi_version.substr(0, mpi_version.find_first_of("\n,"));
  const int cores = place.machine_cores;
  const char* job = std::getenv("SLURM_JOB_ID");
  return {{"command_line", command_line()},
          {"timestamp_utc", when},
          {"versions", {{"gcnlab", GCNLAB_VERSION}, {"git_sha", GCNLAB_GIT_SHA}, {"mpi", mpi_version}}},
          {"slurm_job_id", job ? nlohmann::json(job) : nlohmann::json()},
          {"nodes", world.size() / std::max(1, ranks_on_node)},
          {"ranks_per_node", ranks_on_node},
          {"cores_per_node", cores},
          {"threads_source", threads.source},
          // more threads than cores on the node: timings are of time-shared cores
          {"oversubscribed", ranks_on_node * threads.threads > cores},
          // rank 0's binding (hwloc): the cores its threads may run on, and the warning when too few
          {"binding",
           {{"cpus", place.cpus},
            {"cores", place.cores},
            {"hardware_threads", place.pus},
            {"warning", binding_warning(threads.threads, place)}}}};
}

// <name>.npy per parameter of the model (Model::parameters: W<l> for weight
// layer l, then the model's others, e.g. --model scalegnn's S<k>, the
// RMSNorm scale of GNN layer k), in Weights order. Reading, the weight layers'
// files are required and the others optional, all or none.
Weights read_weights(const std::string& dir, const Model& model, const ModelConfig& config, const Architecture& arch) {
  const std::vector<ParameterSpec> params = model.parameters(config, arch);
  Weights w;
  for (std::size_t k = 0; k < params.size(); ++k) {
    const std::string path = fmt::format("{}/{}.npy", dir, params[k].name);
    const bool layer_weight = k < static_cast<std::size_t>(arch.weight_layers());
    if (!layer_weight && k == static_cast<std::size_t>(arch.weight_layers()) && !std::filesystem::exists(path)) break;
    NpyMatrix m = read_npy(path);
    const auto [rows, cols] = global_shape(params[k], arch);
    GCNLAB_CHECK(m.rows == rows && m.cols == cols, "'{}' is {} x {}, the model needs {} x {}", path, m.rows, m.cols,
                 rows, cols);
    w.push_back(std::move(m.data));
  }
  return w;
}

void write_weights(const std::string& dir, const Model& model, const ModelConfig& config, const Architecture& arch,
                   const Weights& w) {
  std::filesystem::create_directories(dir);
  const std::vector<ParameterSpec> params = model.parameters(config, arch);
  GCNLAB_ASSERT(params.size() == w.size());
  for (std::size_t k = 0; k < w.size(); ++k) {
    const auto [rows, cols] = global_shape(params[k], arch);
    write_npy(fmt::format("{}/{}.npy", dir, params[k].name), rows, cols, w[k]);
  }
}

void log(const Communicator& world, const std::string& line) {
  if (world.rank() == 0) {
    fmt::print(stderr, "{}\n", line);
    std::fflush(stderr);
  }
}

// --dry-run: the modelled wire bytes per category of every rank for one
// epoch, from the strategies' analytic models, without running an epoch.
void print_byte_model(Communicator& world, const Strategy& strategy, Trainer& trainer) {
  world.ledger().set_phase(Phase::report);
  const ByteModel mine = trainer.planned_byte_model();
  const int width = kNumCategories + 1;
  std::vector<double> local(mine.per_category().begin(), mine.per_category().end()), all(static_cast<std::size_t>(width) * world.size());
  local.push_back(static_cast<double>(strategy.nnz_local()));
  world.allgather(std::span<const double>(local), std::span<double>(all), Category::allgather);
  const auto coords = strategy.coords();
  std::vector<std::int32_t> c(coords.begin(), coords.end()), cs(coords.size() * world.size());
  world.allgather(std::span<const std::int32_t>(c), std::span<std::int32_t>(cs), Category::allgather);
  if (world.rank() != 0) return;
  std::vector<int> used;
  for (int k = 0; k < kNumCategories; ++k)
    for (int r = 0; r < world.size(); ++r)
      if (all[r * width + k] > 0) {
        used.push_back(k);
        break;
      }
  const std::string epoch = trainer.minibatch()
                                ? fmt::format("the first epoch: {} mini-batch steps, each on its own sample",
                                              trainer.steps_per_epoch())
                                : "epoch";
  std::string out = fmt::format("modelled wire bytes received per rank and {} (grid {}):\n{:<6} {:<10} {:>10}", epoch,
                                format_grid(strategy.grid()), "rank", "coords", "nnz");
  for (int k : used) out += fmt::format(" {:>15}", to_string(static_cast<Category>(k)));
  out += fmt::format(" {:>15}\n", "total");
  std::vector<double> sum(kNumCategories, 0.0), peak(kNumCategories, 0.0);
  for (int r = 0; r < world.size(); ++r) {
    std::vector<int> rc(cs.begin() + r * coords.size(), cs.begin() + (r + 1) * coords.size());
    out += fmt::format("{:<6} {:<10} {:>10.0f}", r, fmt::format("({})", fmt::join(rc, ",")), all[r * width + kNumCategories]);
    double total = 0;
    for (int k : used) {
      const double b = all[r * width + k];
      out += fmt::format(" {:>15.0f}", b);
      total += b, sum[k] += b, peak[k] = std::max(peak[k], b);
    }
    out += fmt::format(" {:>15.0f}\n", total);
  }
  out += fmt::format("{:<28}", "max");
  for (int k : used) out += fmt::format(" {:>15.0f}", peak[k]);
  out += fmt::format("\n{:<28}", "total");
  for (int k : used) out += fmt::format(" {:>15.0f}", sum[k]);
  fmt::print("{}\n", out);
}

// --learn-features: this rank's block of X (and its moments) written in place
// into the epoch's staging directory, which rank 0 creates at full size; a block
// that several ranks hold (replicas) is written by the lowest of them. Returns
// the staging directory.
std::string stage_learned_features(MpiCommunicator& world, const TrainRun& run, Trainer& trainer, int epoch) {
  std::int64_t token = ::getpid();  // rank 0's: the staging directory's name on every rank
  world.broadcast(std::span<std::int64_t>(&token, 1), 0, Category::bcast_dense);
  const std::string staging = checkpoint_staging(*run.checkpoint_dir, epoch, token);
  const FeatureBlock block = trainer.feature_block();
  Fingerprint signature;
  signature.add_values(std::span<const std::int64_t>(block.vertices)).add(fmt::format("{}:{}", block.col0, block.cols));
  const auto mine = static_cast<std::int64_t>(std::stoull(signature.hex().substr(5), nullptr, 16));
  std::vector<std::int64_t> all(static_cast<std::size_t>(world.size()));
  world.allgather(std::span<const std::int64_t>(&mine, 1), std::span<std::int64_t>(all), Category::allgather);
  const bool writes = std::find(all.begin(), all.end(), mine) - all.begin() == world.rank();
  double area = writes ? static_cast<double>(block.vertices.size()) * static_cast<double>(block.cols) : 0.0;
  world.allreduce(std::span<double>(&area, 1), ReduceOp::sum, Category::allreduce);
  const std::int64_t n = run.info.nodes, f = trainer.dims()[0];
  collectively(world, [&] {
    GCNLAB_CHECK(area == static_cast<double>(n) * static_cast<double>(f),
                 "the ranks' blocks of the learned features cover {} of its {} x {} values", area, n, f);
    if (world.rank() == 0) create_feature_files(staging, n, f, run.model.optimizer == "adam");
  });
  collectively(world, [&] {
    if (writes) write_feature_rows(staging, block);
  });
  return staging;
}

// --checkpoint: the global state, gathered on every rank, written by rank 0
// (outside the epoch's timing and byte accounting: Phase::report) with the
// run's history and, at the last epoch, its `results`; learned features are
// written by every rank, its own rows. Returns the epoch directory (every rank).
std::string save_checkpoint(MpiCommunicator& world, TrainRun& run, Trainer& trainer,
                            const nlohmann::json& results = nullptr) {
  const auto t0 = std::chrono::steady_clock::now();
  const Phase previous = world.ledger().phase();
  world.ledger().set_phase(Phase::report);
  const TrainingState state = trainer.state();
  std::string staging;
  try {
    if (run.model.learn_features) staging = stage_learned_features(world, run, trainer, state.epoch);
    collectively(world, [&] {
      if (run.injection) run.injection("checkpoint-write");
      if (world.rank() == 0)
        write_checkpoint(*run.checkpoint_dir, state, checkpoint_identity(run.info, trainer.dims()),
                         checkpoint_run(run.info), 2, staging, {history_json(run.history), results});
    });
  } catch (...) {  // a failed write leaves no staging directory (write_checkpoint removes its own)
    std::error_code ec;
    if (world.rank() == 0 && !staging.empty()) std::filesystem::remove_all(staging, ec);
    throw;
  }
  world.ledger().set_phase(previous);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  run.checkpoint_seconds = std::max(run.checkpoint_seconds, seconds);
  const std::string path = checkpoint_path(*run.checkpoint_dir, state.epoch);
  log(world, fmt::format("checkpoint: epoch {} -> {} ({:.1f} ms)", state.epoch, path, 1e3 * seconds));
  return path;
}

// The agreement at an epoch boundary: one allreduce(max) outside the epoch's
// accounting (Phase::report) of the stop signal any rank caught and of the
// epoch's times and wire bytes, which become the history's record (max over
// ranks). Returns the agreed signal (0: go on); `e` becomes the record.
int agree_at_boundary(MpiCommunicator& world, EpochMetrics& e) {
  const Phase previous = world.ledger().phase();
  world.ledger().set_phase(Phase::report);
  std::array<double, 3 + kNumCategories> v{};
  v[0] = stop::requested(), v[1] = e.time_s, v[2] = e.eval_time_s;
  std::copy(e.wire_bytes.begin(), e.wire_bytes.end(), v.begin() + 3);
  world.allreduce(std::span<double>(v), ReduceOp::max, Category::allreduce);
  e.time_s = v[1], e.eval_time_s = v[2];
  std::copy(v.begin() + 3, v.end(), e.wire_bytes.begin());
  world.ledger().set_phase(previous);
  return static_cast<int>(v[0]);
}

// The stop signal any rank caught (collective, Phase::report): after a checkpoint write.
int agree_on_stop(MpiCommunicator& world) {
  EpochMetrics none;
  return agree_at_boundary(world, none);
}

}  // namespace

StrategyOptions read_strategy_options(Args& args, const char* command) {
  StrategyOptions sopts;
  sopts.algo = args.value_or("--algo", "");
  GCNLAB_CHECK(!sopts.algo.empty(), "{} needs --algo (one of: {})", command, fmt::join(strategy_names(), ", "));
  sopts.order = args.value_or("--order", "auto");
  sopts.comm_precision = args.value_or("--comm-precision", "fp32");
  // Every registered strategy's options (the chosen one reads its own; the
  // others' are kept for plan --algo LIST, which builds several).
  for (const RegisteredOption& r : registered_options()) {
    const std::string flag = "--" + r.option.name;
    if (r.option.kind == StrategyOption::Kind::integer) {
      const long long v = args.integer(flag, std::numeric_limits<long long>::min(), r.option.min);
      if (v != std::numeric_limits<long long>::min()) sopts.options[r.option.name] = std::to_string(v);
    } else if (const auto v = args.value(flag)) {
      sopts.options[r.option.name] = *v;
    }
  }
  return sopts;
}

ModelConfig read_model_config(Args& args) {
  ModelConfig model;
  model.name = model_info(args.value_or("--model", "gcn")).name;
  model.layers = static_cast<int>(args.integer("--layers", 3, 1));
  model.hidden = args.integer("--hidden", 128, 1);
  model.optimizer = args.value_or("--optimizer", "adam");
  model.lr = static_cast<float>(args.real("--lr", 0.01));
  model.weight_decay = static_cast<float>(args.real("--weight-decay", 0));
  const std::string wd_layers = args.value_or("--weight-decay-layers", "all");
  GCNLAB_CHECK(wd_layers == "all" || wd_layers == "first", "--weight-decay-layers must be all or first");
  model.weight_decay_first_only = wd_layers == "first";
  model.dropout = static_cast<float>(args.real("--dropout", 0));
  model.seed = static_cast<std::uint64_t>(args.integer("--seed", 1, 0));
  model.learn_features = args.flag("--learn-features");
  // The flags one model reads (ModelInfo::flags), refused with any other.
  const ModelInfo& chosen = model_info(model.name);
  const auto owned = [&](const std::string& flag, bool given) {
    if (!given || std::find(chosen.flags.begin(), chosen.flags.end(), flag) != chosen.flags.end()) return;
    std::vector<std::string> owners;
    for (const ModelInfo& m : gcnlab::models())
      if (std::find(m.flags.begin(), m.flags.end(), flag) != m.flags.end()) owners.push_back("--model " + m.name);
    fail("{} is for {}; --model {} has no such setting", flag, fmt::join(owners, ", "), model.name);
  };
  owned("--gin-eps", args.value("--gin-eps").has_value());
  model.gin_eps = static_cast<float>(args.real("--gin-eps", 0));
  model.train_eps = args.flag("--train-eps");
  owned("--train-eps", model.train_eps);
  owned("--heads", args.value("--heads").has_value());
  model.heads = static_cast<int>(args.integer("--heads", 8, 1));
  owned("--concat", args.value("--concat").has_value());
  model.concat = args.value_or("--concat", "on") == "on";  // the spec's choices: on | off
  owned("--output-heads", args.value("--output-heads").has_value());
  model.output_heads = static_cast<int>(args.integer("--output-heads", 1, 1));
  owned("--attention-dropout", args.value("--attention-dropout").has_value());
  model.attention_dropout = static_cast<float>(args.real("--attention-dropout", 0));
  GCNLAB_CHECK(model.attention_dropout >= 0 && model.attention_dropout < 1,
               "--attention-dropout must be in [0, 1) (got {})", model.attention_dropout);
  return model;
}

namespace {

// What train's command line names beyond the run's configurations.
struct TrainArgs {
  std::string dataset_spec, machine;
  bool auto_grid = false;  // --grid auto
  std::optional<std::string> partitioner, weights_in, resume_from;
  int local_rank = 0, ranks_on_node = 1;  // on the node
  int stop_signal = 0, stop_grace = 60;  // --stop-signal (0: SIGTERM and SIGUSR1 only), --stop-grace
};

// train's flags: the configurations and outputs into `run`, the rest returned; their checks.
TrainArgs read_train_args(Args& args, const MpiCommunicator& world, std::pair<int, int> node, int default_epochs,
                          bool stop_signals, TrainRun& run) {
  TrainArgs a;
  RunInfo& info = run.info;
  ModelConfig& model = run.model;
  TrainConfig& tc = run.train;
  StrategyOptions& sopts = run.strategy_options;
  sopts = read_strategy_options(args, "train");
  const auto grid_text = args.value("--grid");
  a.auto_grid = grid_text == "auto";
  if (grid_text && !a.auto_grid) sopts.grid = parse_grid(*grid_text);
  a.machine = args.value_or("--machine", "local");
  a.dataset_spec = args.value_or("--dataset", kDefaultDataset);
  tc.epochs = static_cast<int>(args.integer("--epochs", default_epochs, 1));
  tc.eval_each_epoch = !args.flag("--no-eval");
  tc.batch_size = sopts.batch_size = args.integer("--batch-size", 0, 1);
  sopts.dp_groups = static_cast<int>(args.integer("--dp-groups", 1, 1));
  tc.steps_per_epoch = static_cast<int>(args.integer("--steps-per-epoch", 0, 1));
  tc.eval_every = static_cast<int>(args.integer("--eval-every", 0, 0));
  const std::string prefetch = args.value_or("--prefetch", "on");
  GCNLAB_CHECK(prefetch == "on" || prefetch == "off", "--prefetch takes on or off (got '{}')", prefetch);
  tc.prefetch = prefetch == "on";
  tc.target_acc = args.real("--target-acc", 0);
  model = read_model_config(args);
  sopts.learn_features = model.learn_features;
  sopts.model = model_info(model.name).demands;
  sopts.seed = model.seed;
  a.partitioner = args.value("--partitioner");
  info.backend = args.value_or("--backend", "cpu");
  const auto [local_rank, ranks_on_node] = node;
  a.local_rank = local_rank;
  a.ranks_on_node = ranks_on_node;
  const long long threads_flag = args.integer("--threads", 0, 1);  // 0: not given
  const ThreadChoice threads = choose_threads(threads_flag ? std::optional<std::int64_t>(threads_flag) : std::nullopt,
                                              [](const char* name) { return std::getenv(name); }, affinity_cpus(),
                                              ranks_on_node);
  info.threads = threads.threads;
  info.provenance = provenance(world, ranks_on_node, threads, cpu_placement());
  tc.ranks_per_node = ranks_on_node;
  const auto memory_limit = args.value("--memory-limit");
  if (memory_limit) {
    tc.memory_budget = parse_bytes(*memory_limit, "--memory-limit");
    tc.memory_budget_source = "--memory-limit";
  } else if (const auto host = host_memory_available(); host && info.backend == "cpu") {
    tc.memory_budget = host->bytes / ranks_on_node;
    tc.memory_budget_source = fmt::format("{} / {} rank(s) on the node", host->source, ranks_on_node);
  }
  run.dry_run = args.flag("--dry-run");
  args.value("--config");  // merged into the arguments before parsing (with_config)
  run.out = args.value("--out");
  run.weights_out = args.value("--weights-out");
  a.weights_in = args.value("--weights-in");
  run.checkpoint_dir = args.value("--checkpoint");
  const auto every = static_cast<int>(args.integer("--checkpoint-every", 0, 1));  // 0: not given
  if (every) run.checkpoint_every = every;
  a.resume_from = args.value("--resume");
  if (stop_signals) {  // train's options, not bench's
    const auto stop_signal = args.value("--stop-signal");
    a.stop_signal = stop_signal ? stop::parse(*stop_signal) : 0;
    a.stop_grace = static_cast<int>(args.integer("--stop-grace", 60, 0));
  }
  args.finish();
  GCNLAB_CHECK(!every || run.checkpoint_dir, "--checkpoint-every needs --checkpoint DIR");
  GCNLAB_CHECK(!(a.resume_from && a.weights_in), "--resume and --weights-in both set the weights: give one");
  GCNLAB_CHECK(!a.auto_grid || strategy_info(sopts.algo).caps.perf_model, "--grid auto is for {} (its performance "
               "model)", fmt::join(strategies_with(&StrategyCaps::perf_model), ", "));
  return a;
}

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

// A results file that holds a run's complete results (not one a stop left: status "stopped").
bool complete_results(const std::string& path) {
  std::ifstream in(path);
  if (!in.good()) return false;
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  return j.is_object() && j.value("schema", "") == "gcnlab.run/1" && j.value("status", "complete") == "complete";
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
  run.backend = make_backend(info.backend, {info.threads, a.local_rank, a.ranks_on_node});
  for (const auto& [what, version] : run.backend->versions()) info.provenance["versions"][what] = version;
  attach_ledger(*run.backend, world.ledger());
}

// The backend's communicator, the strategy (its communicators split from the
// world: collective) and the trainer of a run on `data`.
void build_strategy(TrainRun& run, MpiCommunicator& world, const TrainArgs& a, const Dataset& data) {
  run.device_world = make_device_communicator(*run.backend, world);
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

}  // namespace

TrainRun start_train(Args& args, MpiCommunicator& world, int default_epochs, bool stop_signals) {
  TrainRun run;
  TrainArgs a;
  Injection fault, signal;  // test-only: GCNLAB_INJECT_FAULT, GCNLAB_INJECT_SIGNAL
  std::optional<Checkpoint> resume;
  std::optional<Dataset> data;  // the whole dataset: freed once the trainer holds this rank's shards
  std::optional<RunGraph> graph;
  std::optional<Weights> initial;
  const auto node = node_position(world);  // collective: before any phase can fail on one rank
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
      // Known before loading: the model's hyper-parameters, and its widths but the dataset's (f_0, classes).
      const auto stored = resume->identity.at("model").at("dims").get<std::vector<std::int64_t>>();
      RunInfo probe;
      probe.model = run.model;
      nlohmann::json mine =
          checkpoint_identity(probe, architecture(run.model, stored.front(), stored.back()).dims).at("model");
      mine["variant"] = run.model.name;
      nlohmann::json& recorded = resume->identity["model"];  // not resumed from: compared only here
      recorded["variant"] = recorded.value("variant", "gcn");  // absent: gcn
      check_identity(*resume, {{"model", {{"variant", mine["variant"]}}}});  // the model first, then its options
      check_identity(*resume, {{"model", mine}});
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
    if (a.auto_grid) run.strategy_options.grid = auto_grid(*data, run.model, world.size(), a.machine);
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
  return run;
}

int train(Args& args, MpiCommunicator& world) {
  TrainRun run = start_train(args, world);
  if (run.finished) return 0;
  const RunInfo& info = run.info;
  const auto& out = run.out;
  const auto& weights_out = run.weights_out;
  Strategy* strategy = run.strategy.get();
  Trainer* trainer = run.trainer.get();
  log(world, fmt::format("gcnlab {}: {} on {} ({} nodes, {} nnz, {} features, {} classes), {} rank(s) x {} thread(s) "
                         "({}{})",
                         GCNLAB_VERSION, info.algo, info.dataset_name, info.nodes, info.nnz, info.features,
                         info.classes, world.size(), info.threads, info.provenance.value("threads_source", ""),
                         info.provenance.value("oversubscribed", false)
                             ? fmt::format("; oversubscribed: {} rank(s) x {} thread(s) on {} core(s) per node",
                                           info.provenance.value("ranks_per_node", 0), info.threads,
                                           info.provenance.value("cores_per_node", 0))
                             : ""));
  log(world, info.describe);

  if (run.dry_run) {
    print_byte_model(world, *strategy, *trainer);
    return 0;
  }

  // At every epoch boundary the ranks agree on a stop signal (common/core/stop_signal.hpp) and record the
  // epoch in the run's history; a periodic checkpoint is written there, and on a stop one at that epoch.
  // The last epoch's checkpoint is written after the results, which it records.
  const int epochs = info.train.epochs;
  int stopped_by = 0;
  std::string stop_checkpoint;  // the checkpoint a stop resumes from
  RunResult r = trainer->train([&](const EpochMetrics& mine) {
    EpochMetrics e = mine;
    int signal = agree_at_boundary(world, e);
    run.history.add(e);
    log(world, fmt::format("epoch {:4d}  loss {:.6f}  train {:.4f}  val {:.4f}  test {:.4f}  time {:.2f} ms",
                           e.epoch, e.loss, e.train_acc, e.val_acc, e.test_acc, e.time_s * 1e3));
    const int done = e.epoch + 1;
    if (done == epochs) return true;
    const bool periodic = run.checkpoint_dir && done % run.checkpoint_every == 0;
    if (periodic) {
      save_checkpoint(world, run, *trainer);
      if (!signal) signal = agree_on_stop(world);  // one that arrived while it was written
    }
    if (!signal) return true;
    if (run.checkpoint_dir) stop_checkpoint = periodic ? checkpoint_path(*run.checkpoint_dir, done)
                                                       : save_checkpoint(world, run, *trainer);
    stopped_by = signal;
    return false;
  });
  // The results: every epoch of the history (this segment's last), the timing of this segment's.
  r.segment_start = run.history.epochs.size() - r.epochs.size();
  r.epochs = run.history.epochs;
  run.info.segments = run.history.segments;
  if (run.checkpoint_dir && run.checkpoint_seconds > 0) run.info.checkpoint["write_seconds_max"] = run.checkpoint_seconds;
  if (stopped_by)
    run.info.stopped = {{"signal", stop::name(stopped_by)},
                        {"epochs_completed", r.epochs.back().epoch + 1},
                        {"checkpoint", stop_checkpoint.empty() ? nlohmann::json() : nlohmann::json(stop_checkpoint)},
                        {"exit_status", stop::kStoppedExit}};
  const nlohmann::json j = results_json(info, r);
  if (const auto& slow = j["summary"]["slow_epochs"]; !slow.empty())
    log(world, fmt::format("gcnlab: warning: epoch(s) {} took more than {}x the median epoch ({:.2f} ms): a burst of "
                           "load from outside the run; the epoch time leaves them out (summary.slow_epochs)",
                           slow.dump(), kSlowEpoch, j["summary"]["epoch_time_median_s"].get<double>() * 1e3));
  log(world, fmt::format("\nper-epoch breakdown over {} timed epoch(s) (time: max/mean over ranks; wire bytes "
                         "received per rank: max/total)\n{}",
                         r.timed_epochs, breakdown_table(r)));
  log(world, fmt::format("epoch time {:.2f} ms, final loss {:.6f}, test accuracy {:.2f}%, nnz per rank max/mean {:.3f}, "
                         "peak memory per rank {:.1f} MiB (backend; analytic {:.1f} MiB, measured/analytic max {:.3f}), "
                         "{:.1f} MiB (process)",
                         j["summary"]["epoch_time_s"].get<double>() * 1e3, r.epochs.back().loss,
                         100 * r.epochs.back().test_acc, j["load_balance"]["nnz_max_over_mean"].get<double>(),
                         j["memory"]["peak_bytes_max"].get<double>() / (1 << 20),
                         j["memory"]["analytic_bytes_max"].get<double>() / (1 << 20),
                         j["memory"]["peak_over_analytic_max"].get<double>(),
                         j["memory"]["host_peak_bytes_max"].get<double>() / (1 << 20)));
  if (!stopped_by && run.checkpoint_dir) save_checkpoint(world, run, *trainer, j);
  bool kept = false;  // a stop never replaces complete results
  collectively(world, [&] {
    if (world.rank() != 0) return;
    if (out && !(stopped_by && (kept = complete_results(*out)))) write_file_atomically(*out, j.dump(1) + "\n");
    if (weights_out && !stopped_by) {
      const Architecture arch = run.gnn->architecture(run.model, r.dims.front(), r.dims.back());
      write_weights(*weights_out + "/initial", *run.gnn, run.model, arch, r.initial_weights);
      write_weights(*weights_out + "/final", *run.gnn, run.model, arch, r.final_weights);
    }
  });
  if (!stopped_by) return 0;
  const std::string results = !out ? "no --out" : kept ? fmt::format("{} kept (it holds complete results)", *out)
                                                       : fmt::format("results so far in {} (status \"stopped\")", *out);
  log(world, stop_checkpoint.empty()
                 ? fmt::format("gcnlab: stopped by {} after {} of {} epochs, without --checkpoint: the run cannot "
                               "resume; {}; exit status {}",
                               stop::name(stopped_by), r.epochs.back().epoch + 1, epochs, results, stop::kStoppedExit)
                 : fmt::format("gcnlab: stopped by {} after {} of {} epochs: checkpoint {}; resume with --resume auto "
                               "--checkpoint {} (or --resume {}); {}; exit status {}",
                               stop::name(stopped_by), r.epochs.back().epoch + 1, epochs, stop_checkpoint,
                               *run.checkpoint_dir, stop_checkpoint, results, stop::kStoppedExit));
  return stop::kStoppedExit;
}

int info(Args& args, MpiCommunicator& world) {
  std::optional<Dataset> data;
  std::vector<int> shards;
  std::uint64_t seed = 1;
  collectively(world, [&] {
    const std::string spec = args.value_or("--dataset", kDefaultDataset);
    if (auto s = args.value("--shards")) shards = parse_grid(*s);
    GCNLAB_CHECK(shards.empty() || shards.size() == 2, "--shards takes RxC (e.g. 8x8)");
    seed = static_cast<std::uint64_t>(args.integer("--seed", 1, 0));
    args.finish();
    data = load_dataset(spec);
  });
  if (world.rank() != 0) return 0;
  const DatasetInfo s = dataset_info(*data);
  fmt::print(
      "dataset      {}\n"
      "name         {}\n"
      "nodes        {}\n"
      "nnz          {} (A, no self-loops); {} with self-loops (A + I)\n"
      "edges        {} undirected pairs\n"
      "directed     {}\n"
      "degree       min {}  mean {:.2f}  max {}  isolated {}\n"
      "features     {}{}\n"
      "classes      {}\n"
      "split        train {}  val {}  test {}\n",
      data->spec, data->name, s.nodes, s.nnz, s.nnz_with_self_loops, s.edges_undirected,
      data->directed ? "yes" : "no", s.degree_min, s.degree_mean, s.degree_max, s.isolated, data->features,
      data->synthetic_features ? " (synthetic)" : "", data->classes, data->count(ew::kTrain),
      data->count(ew::kVal), data->count(ew::kTest));
  if (data->shards) {
    const ShardMeta& m = data->shards->meta();
    const GraphLayout& l = m.layout;
    fmt::print("prepared     {}x{} shards; vertex layout: partitioner {}{}, permutation {}, seed {}\n", m.shards,
               m.shards, l.partitioner, l.parts ? fmt::format(" ({} parts)", l.parts) : "", l.permutation, l.seed);
  }
  if (!shards.empty()) {
    // Plexus Table 3: max/mean nonzeros over the R x C shards of the stored adjacency versions.
    GCNLAB_CHECK(!data->shards, "info --shards needs the whole graph: give the dataset it was prepared from");
    const NormalizedAdjacency g = normalized_graph(*data);
    std::string line;
    for (const Permutation p : all_permutations())
      line += fmt::format("  {} {:.3f}", p.kind == Permutation::none ? "original" : to_string(p),
                          plexus::shard_imbalance(*g.a_hat_t, p, seed, shards[0], shards[1]));
    fmt::print("shards       {}x{} of Â, nnz max/mean:{} (permutation seed {})\n", shards[0], shards[1], line, seed);
  }
  return 0;
}

int prepare(Args& args, MpiCommunicator& world) {
  collectively(world, [&] {
    const std::string spec = args.value_or("--dataset", kDefaultDataset);
    const auto out = args.value("--out");
    GCNLAB_CHECK(out.has_value(), "prepare needs --out FILE.gcl (or --shards KxK --out DIR)");
    std::vector<int> shards;
    if (auto s = args.value("--shards")) shards = parse_grid(*s);
    GCNLAB_CHECK(shards.empty() || (shards.size() == 2 && shards[0] == shards[1]), "--shards takes KxK (e.g. 8x8)");
    VertexPlan plan;
    plan.partitioner = args.value_or("--partitioner", "block");
    plan.parts = static_cast<int>(args.integer("--parts", 0, 0));
    plan.permutation = parse_permutation(args.value_or("--permutation", "none"));
    plan.seed = static_cast<std::uint64_t>(args.integer("--seed", 1, 0));
    args.finish();
    GCNLAB_CHECK(!shards.empty() || (plan.partitioner == "block" && plan.parts == 0 &&
                                     plan.permutation.kind == Permutation::none),
                 "--partitioner, --parts and --permutation lay out a sharded dataset: add --shards KxK");
    const auto t0 = std::chrono::steady_clock::now();
    Dataset d = load_dataset(spec);
    GCNLAB_CHECK(!d.shards, "'{}' is already prepared", spec);
    if (world.rank() != 0) return;
    if (shards.empty()) {
      write_gcl(d, *out);
      fmt::print(stderr, "wrote {} ({} nodes, {} nnz) to {}\n", d.name, d.nodes(), d.adj.nnz(), *out);
      return;
    }
    // One vertex layout for every strategy (partitioners/prepare.hpp), written as
    // K x K shards of every adjacency version it needs (Plexus Sec. 5.4).
    // The adjacency is handed over to be normalised in its own storage: the graph is held once.
    const DatasetInfo info = dataset_info(d);
    const std::string fingerprint = dataset_fingerprint(d);
    const PreparedGraph g = prepare_graph(std::exchange(d.adj, {}), d.directed, plan);
    write_shards(d, info, fingerprint, *g.graph, shards[0],
                 g.partitioned ? partition_report(g.quality, g.partition_seconds) : nlohmann::json(), *out);
    const GraphLayout& l = g.graph->layout();
    fmt::print(stderr,
               "wrote {} ({} nodes, {} nnz) as {}x{} shards of {} adjacency version(s) to {}: partitioner {}{}, "
               "permutation {}, seed {} ({:.1f} s, peak {:.1f} MiB)\n",
               d.name, info.nodes, info.nnz, shards[0], shards[0], l.versions.size(), *out, l.partitioner,
               l.parts ? fmt::format(" ({} parts)", l.parts) : "", l.permutation, l.seed,
               std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
               host_peak_bytes() / (1 << 20));
  });
  return 0;
}

int partition(Args& args, MpiCommunicator& world) {
  collectively(world, [&] {
    const std::string spec = args.value_or("--dataset", kDefaultDataset);
    const int parts = static_cast<int>(args.integer("--parts", 0, 1));
    GCNLAB_CHECK(parts >= 1, "partition needs --parts K");
    const std::string method = args.value_or("--method", "metis");
    const std::int64_t f = args.integer("--features", 0, 0);
    const auto out = args.value("--out");
    const std::uint64_t seed = static_cast<std::uint64_t>(args.integer("--seed", 1, 0));
    args.finish();
    const Dataset d = load_dataset(spec);
    const auto t0 = std::chrono::steady_clock::now();
    Partition p;
    std::int64_t distributed_cut = 0;
    if (method == "ptscotch") {  // every rank holds only its block of rows (of the shards, for gcl:DIR)
      const auto graph = d.shards ? std::shared_ptr<const Graph>(d.shards) : prepare_graph(d, {}).graph;
      const MPI_Comm comm = world.native();
      const PartitionBlock b = ptscotch_partition(*graph, parts, 0.03, seed, comm);
      distributed_cut = b.edge_cut;
      p = gather_partition(*graph, b, parts, comm);
    } else {
      GCNLAB_CHECK(!d.shards, "--method {} partitions a graph one process holds whole: give the dataset it was "
                   "prepared from, or --method ptscotch, which reads each rank's rows of the shards", method);
      p = make_partition(method, d.adj, parts, seed);
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (world.rank() != 0) return;
    if (out) write_partition(p, *out);
    if (d.shards) {  // a prepared directory: no process holds the graph to evaluate the volumes
      fmt::print("partition    {} of {} into {} parts{}\nedge cut     {}\ntime         {:.3f} s ({} ranks)\n", method,
                 d.name, parts, out ? " -> " + *out : "", distributed_cut, seconds, world.size());
      return;
    }
    const PartitionQuality q = evaluate_partition(d.adj, p);
    GCNLAB_ASSERT(method != "ptscotch" || q.edge_cut == distributed_cut);
    const double width = static_cast<double>(f > 0 ? f : d.features) * sizeof(float);
    const auto [nmin, nmax] = std::minmax_element(q.nnz.begin(), q.nnz.end());
    const double nnz_mean = std::accumulate(q.nnz.begin(), q.nnz.end(), 0.0) / parts;
    auto mb = [&](double rows) { return rows * width / 1e6; };
    fmt::print(
        "partition    {} of {} into {} parts{}\n"
        "edge cut     {}\n"
        "volume       {} rows = {:.3f} MB per SpMM at f = {} (connectivity - 1)\n"
        "send / part  max {:.0f} rows ({:.3f} MB), mean {:.1f} rows ({:.3f} MB), load imbalance {:.1f}%\n"
        "recv / part  max {:.0f} rows ({:.3f} MB), mean {:.1f} rows ({:.3f} MB)\n"
        "nnz / part   max {} min {} mean {:.1f} (max/mean {:.3f})\n"
        "time         {:.3f} s\n",
        method, d.name, parts, out ? " -> " + *out : "", q.edge_cut, q.total_volume, mb(q.total_volume),
        width / sizeof(float), q.send_max(), mb(q.send_max()), q.send_mean(), mb(q.send_mean()), q.imbalance_percent(),
        q.recv_max(), mb(q.recv_max()), q.recv_mean(), mb(q.recv_mean()), *nmax, *nmin, nnz_mean, *nmax / nnz_mean,
        seconds);
  });
  return 0;
}

int strategies(Args& args, MpiCommunicator& world) {
  bool json = false;
  collectively(world, [&] {
    json = args.flag("--json");
    args.finish();
  });
  if (world.rank() == 0) fmt::print("{}", json ? strategies_json().dump(1) + "\n" : strategies_text());
  return 0;
}

namespace {

// The strategies that provide what a model demands (make_strategy's check).
std::vector<std::string> strategies_for(const ModelDemands& d) {
  std::vector<std::string> out;
  for (const StrategyInfo& s : gcnlab::strategies())
    if (provides(s.caps, d)) out.push_back(s.name);
  return out;
}

nlohmann::json models_json() {
  nlohmann::json all = nlohmann::json::array();
  for (const ModelInfo& m : gcnlab::models())
    all.push_back({{"name", m.name},
                   {"summary", m.summary},
                   {"demands",
                    {{"norm_blocks", m.demands.norm_blocks},
                     {"fixed_order", m.demands.fixed_order},
                     {"full_graph_only", m.demands.full_graph_only},
                     {"attention", m.demands.attention}}},
                   {"strategies", strategies_for(m.demands)}});
  return {{"schema", "gcnlab.models/1"}, {"models", all}};
}

std::string models_text() {
  std::string out;
  for (const ModelInfo& m : gcnlab::models())
    out += fmt::format("{:<10} {}\n{:<10} runs on: {}\n", m.name, m.summary, "",
                       fmt::join(strategies_for(m.demands), ", "));
  return out;
}

}  // namespace

int models(Args& args, MpiCommunicator& world) {
  bool json = false;
  collectively(world, [&] {
    json = args.flag("--json");
    args.finish();
  });
  if (world.rank() == 0) fmt::print("{}", json ? models_json().dump(1) + "\n" : models_text());
  return 0;
}

int compare(Args& args, MpiCommunicator& world) {
  std::vector<nlohmann::json> runs;
  std::vector<std::string> files;
  std::optional<std::string> csv;
  collectively(world, [&] {
    csv = args.value("--csv");
    files = args.positional();
    args.finish();
    GCNLAB_CHECK(!files.empty(), "compare needs one or more results files");
    for (const auto& f : files) {
      std::ifstream in(f);
      GCNLAB_CHECK(in.good(), "cannot open '{}'", f);
      try {
        runs.push_back(nlohmann::json::parse(in));
        GCNLAB_CHECK(runs.back().value("schema", "") == "gcnlab.run/1", "'{}' is not a gcnlab results file", f);
      } catch (const nlohmann::json::exception& e) {
        fail("'{}' is not valid JSON ({})", f, e.what());
      }
    }
  });
  std::string table;
  collectively(world, [&] {
    try {
      table = comparison_table(runs);
    } catch (const nlohmann::json::exception& e) {
      fail("a results file lacks a field compare reads ({})", e.what());
    }
  });
  if (world.rank() == 0) fmt::print("{}", table);
  if (csv) {
    collectively(world, [&] {
      if (world.rank() == 0) write_file_atomically(*csv, runs_csv(runs, files));
    });
    log(world, fmt::format("wrote {} ({} run(s), one row each)", *csv, runs.size()));
  }
  return 0;
}

}  // namespace gcnlab::cli
