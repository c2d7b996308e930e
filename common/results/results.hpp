#pragma once
// The results JSON (schema gcnlab.run/1, docs/results.md; JSON Schema in
// common/results/run.schema.json) and the human breakdown table.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/data/dataset.hpp"
#include "common/model/config.hpp"
#include "common/model/trainer.hpp"

namespace gcnlab {

struct RunInfo {
  std::string algo, backend, partitioner = "block", describe;
  std::string permutation = "none";     // the strategy's vertex permutation (Strategy::permutation)
  // The options the strategy declares (its registry entry), typed, keys with
  // '_' for '-' (declared_options_json): recorded in config beside the common keys.
  nlohmann::json strategy_options = nlohmann::json::object();
  std::string comm_precision = "fp32";           // --comm-precision
  std::string activations = "per-layer";  // the trainer's ActivationPlan
  std::vector<std::string> order;  // forward product order per layer: aggregate | transform
  std::vector<int> grid;
  int ranks = 1, threads = 1;
  int dp_groups = 1;  // data-parallel groups (scalegnn-4d's D)
  ModelConfig model;
  TrainConfig train;
  // dataset
  std::string dataset_spec, dataset_name;
  std::int64_t nodes = 0, nnz = 0, features = 0, classes = 0, n_train = 0, n_val = 0, n_test = 0;
  bool directed = false;
  std::string dataset_fingerprint;  // dataset_fingerprint(), computed for checkpoints only
  nlohmann::json partition_quality;  // null when not computed
  nlohmann::json checkpoint;    // {"dir", "every"} with --checkpoint, else null
  nlohmann::json resumed_from;  // {"path", "epoch", "run"} with --resume, else null
  nlohmann::json provenance;    // command line, UTC time, versions, Slurm job, ranks and cores per node (train)
  // The run's segments (common/results/history.hpp): the first start and each
  // resume; the results' epochs are those of all of them (RunResult::segment_start).
  nlohmann::json segments = nlohmann::json::array();
  // null: the run completed its epochs; else how it stopped on a signal
  // ({"signal", "epochs_completed", "checkpoint", "exit_status"}), results "status": "stopped".
  nlohmann::json stopped;
};

RunInfo describe_dataset(RunInfo info, const Dataset& d);

// Host name, CPU model and core count of this process's machine.
nlohmann::json this_machine();

// The kernels' work per epoch (RankReport::work): {category: {kernel: {amount, calls}}}, the kernels that ran.
nlohmann::json work_json(const CategoryWork& work);

nlohmann::json results_json(const RunInfo& info, const RunResult& r);
// The run's summary: epoch time (robust to bursts) of the current segment's
// epochs (from r.segment_start), losses, accuracies and target of all of them.
nlohmann::json summary_json(const RunResult& r);
// summary.slow_epochs: epochs slower than this many times the median timed epoch
// (left out of summary.epoch_time_s).
inline constexpr double kSlowEpoch = 2.0;

// Per-category table: time max/mean over ranks, wire bytes max/total (per epoch).
std::string breakdown_table(const RunResult& r);

// One CSV row per results file (pandas-ready; the columns of plots/common.py
// RUN_COLUMNS, then <category>.<field> for every breakdown category and
// field): `gcnlab compare --csv`.
std::string runs_csv(const std::vector<nlohmann::json>& runs, const std::vector<std::string>& files);

// Side-by-side comparison of several results files (rows: metrics and categories).
std::string comparison_table(const std::vector<nlohmann::json>& runs);

}  // namespace gcnlab
