#pragma once
// What a training run writes beside its results: the weights files
// (--weights-in/--weights-out), checkpoints (--checkpoint: rank 0 writes the
// gathered state, every rank stages its rows of learned features), and the
// test of a results file a stop must not replace.

#include <string>

#include <nlohmann/json.hpp>

#include "apps/gcnlab/train_run.hpp"

namespace gcnlab::cli {

// <name>.npy per parameter of the model (Model::parameters: W<l> for weight
// layer l, then the model's others, e.g. --model scalegnn's S<k>, the
// RMSNorm scale of GNN layer k), in Weights order. Reading, the weight layers'
// files are required and the others optional, all or none.
Weights read_weights(const std::string& dir, const Model& model, const ModelConfig& config, const Architecture& arch);
void write_weights(const std::string& dir, const Model& model, const ModelConfig& config, const Architecture& arch,
                   const Weights& w);

// --checkpoint: the global state, gathered on every rank, written by rank 0
// (outside the epoch's timing and byte accounting: Phase::report) with the
// run's history and, at the last epoch, its `results`; learned features are
// written by every rank, its own rows. Returns the epoch directory (every rank).
std::string save_checkpoint(MpiCommunicator& world, TrainRun& run, Trainer& trainer,
                            const nlohmann::json& results = nullptr);

// A results file that holds a run's complete results (not one a stop left: status "stopped").
bool complete_results(const std::string& path);

}  // namespace gcnlab::cli
