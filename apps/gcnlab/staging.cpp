// What a run writes beside its results: weights files, checkpoints (with the
// learned features staged by every rank), and the test of a complete results file.
#include "apps/gcnlab/staging.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "common/core/fingerprint.hpp"
#include "common/results/checkpoint.hpp"
#include "common/results/npy.hpp"

namespace gcnlab::cli {

namespace {

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

}  // namespace

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

// --checkpoint: the global state, gathered on every rank, written by rank 0
// (outside the epoch's timing and byte accounting: Phase::report) with the
// run's history and, at the last epoch, its `results`; learned features are
// written by every rank, its own rows. Returns the epoch directory (every rank).
std::string save_checkpoint(MpiCommunicator& world, TrainRun& run, Trainer& trainer,
                            const nlohmann::json& results) {
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

// A results file that holds a run's complete results (not one a stop left: status "stopped").
bool complete_results(const std::string& path) {
  std::ifstream in(path);
  if (!in.good()) return false;
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  return j.is_object() && j.value("schema", "") == "gcnlab.run/1" && j.value("status", "complete") == "complete";
}

}  // namespace gcnlab::cli
