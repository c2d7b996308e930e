#pragma once
// Training checkpoints (--checkpoint DIR, --resume DIR): the global weights,
// Adam's moments, the number of completed epochs and the run's configuration,
//   DIR/epoch-000050/W<l>.npy M<l>.npy V<l>.npy history.json [results.json] checkpoint.json
// (--learn-features: also X.npy XM.npy XV.npy, the n x f learned features, written row-distributed)
// one value and two moment files per parameter of the model, named by it
// (W<stem>, M<stem>, V<stem>: --model scalegnn's RMSNorm scale S<k> is WS<k>.npy
// MS<k>.npy VS<k>.npy); checkpoint.json lists the parameters with their shapes.
// An epoch directory is written under a temporary name and renamed into place
// once every file is synced, so DIR only ever holds whole checkpoints; the
// newest `keep` are kept. checkpoint.json, written last, records each file's
// size and xxHash fingerprint: a damaged file is an error naming it, never a silent
// restart from wrong weights. Everything in a checkpoint is defined on the
// global matrices (TrainingState), so it resumes under any strategy and rank
// count; what must match is the identity: the dataset and the model.

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "common/model/trainer.hpp"
#include "common/results/results.hpp"

namespace gcnlab {

struct Checkpoint {
  std::string path;         // the epoch directory
  TrainingState state;
  bool learned_features = false;  // X.npy (XM, XV): n x f, read row by row (read_feature_rows)
  nlohmann::json identity;  // dataset and model: what a resuming run must match
  nlohmann::json run;       // how it was written (algo, grid, ranks, dataset spec, version); informational
  // history.json: the run's segments and epochs so far (common/results/history.hpp);
  // null in checkpoints written before it. results.json: the results document
  // of the run that wrote its last epoch (null in the others).
  nlohmann::json history, results;
};

// The dataset (name, size, features, classes) and the model (dims and every
// hyper-parameter the trajectory depends on) of a run.
nlohmann::json checkpoint_identity(const RunInfo& info, const std::vector<std::int64_t>& dims);
// How a run was configured (recorded, not checked).
nlohmann::json checkpoint_run(const RunInfo& info);

// What a checkpoint records beside the state: the run's history and, for the
// checkpoint of its last epoch, its results (so that a requeued job that
// finished can write them again without training).
struct CheckpointRecords {
  nlohmann::json history;  // null: none (tests)
  nlohmann::json results;  // null: not the last epoch
};

// Writes DIR/epoch-<E>/ and removes all but the newest `keep` checkpoints of
// DIR; returns the epoch directory. `staging`: the temporary directory the
// learned features were written into (below); empty: one of its own. A write
// that fails removes its staging directory; a successful one removes what
// killed runs left behind.
std::string write_checkpoint(const std::string& dir, const TrainingState& state, const nlohmann::json& identity,
                             const nlohmann::json& run, int keep = 2, const std::string& staging = "",
                             const CheckpointRecords& records = {});

// DIR/epoch-<E>: where write_checkpoint puts the checkpoint of epoch E.
std::string checkpoint_path(const std::string& dir, int epoch);

// Learned features (--learn-features), row-distributed: X (n x f, original
// vertex order) and Adam's XM, XV, DIR/epoch-<E>/X.npy ... The epoch's
// temporary directory is one every rank names alike (`token`: the same on every
// rank); one rank creates it with the files at full size, every rank that owns
// a block writes its rows in place, then write_checkpoint (one rank) records
// them and commits. A resume reads each rank's own rows, for whatever strategy
// and rank count it runs (read_feature_rows).
std::string checkpoint_staging(const std::string& dir, int epoch, std::int64_t token);
void create_feature_files(const std::string& staging, std::int64_t n, std::int64_t f, bool adam);
void write_feature_rows(const std::string& staging, const FeatureBlock& block);
// `layout`'s rows and columns (Trainer::feature_layout) of X and its moments.
FeatureBlock read_feature_rows(const Checkpoint& c, FeatureBlock layout);

// The newest checkpoint in DIR, if any (DIR may not exist).
std::optional<std::string> latest_checkpoint(const std::string& dir);

// PATH: an epoch directory, or a checkpoint directory (its newest checkpoint).
// Every file is checked against its recorded size and hash, every matrix
// against the recorded model shape; any problem is one error naming the file.
Checkpoint read_checkpoint(const std::string& path);

// Throws naming the first field of `identity` the checkpoint differs in.
void check_identity(const Checkpoint& c, const nlohmann::json& identity);

}  // namespace gcnlab
