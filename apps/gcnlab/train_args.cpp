// train's command line: the run's configurations and outputs, and their checks.
#include "apps/gcnlab/train_args.hpp"

#include <cstdlib>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "algorithms/registry.hpp"
#include "backends/factory.hpp"
#include "apps/gcnlab/placement.hpp"
#include "apps/gcnlab/run_options.hpp"
#include "common/comm/process_grid.hpp"
#include "common/core/host_memory.hpp"
#include "common/core/stop_signal.hpp"
#include "common/core/threads.hpp"
#include "models/registry.hpp"

namespace gcnlab::cli {

// train's flags: the configurations and outputs into `run`, the rest returned; their checks.
TrainArgs read_train_args(Args& args, const MpiCommunicator& world, const NodeRanks& node, int default_epochs,
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
  if (const auto gpu_comm = args.value("--gpu-comm")) {
    GCNLAB_CHECK(info.backend == "cuda", "--gpu-comm {} needs --backend cuda (the CPU backend's ranks talk over MPI)",
                 *gpu_comm);
    a.gpu_comm = *gpu_comm;
  }
  a.node = node;
  const int ranks_on_node = node.count;
  const long long threads_flag = args.integer("--threads", 0, 1);  // 0: not given
  const ThreadChoice threads = choose_threads(threads_flag ? std::optional<std::int64_t>(threads_flag) : std::nullopt,
                                              [](const char* name) { return std::getenv(name); }, affinity_cpus(),
                                              ranks_on_node);
  info.threads = threads.threads;
  info.provenance = provenance(world, ranks_on_node, threads, cpu_placement());
  if (info.backend == "cuda")
    info.provenance["gpu_comm"] = a.gpu_comm == "nccl" ? "nccl" : "mpi (" + mpi_device_transport() + ")";
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

}  // namespace gcnlab::cli
