#pragma once
// A training run set up in agreed phases (start_train.cpp), shared by train
// (train.cpp) and bench epoch (bench.cpp).

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "apps/gcnlab/commands.hpp"
#include "backends/factory.hpp"
#include "common/model/strategy.hpp"
#include "common/model/trainer.hpp"
#include "common/results/history.hpp"
#include "common/results/results.hpp"
#include "models/registry.hpp"

namespace gcnlab::cli {

// A training run set up from the train options: dataset loaded, strategy and
// trainer set up on every rank (this rank's shards only), no epoch run yet.
struct TrainRun {
  RunInfo info;
  ModelConfig model;
  TrainConfig train;
  StrategyOptions strategy_options;
  bool dry_run = false;
  std::optional<std::string> out, weights_out;
  std::optional<std::string> checkpoint_dir;  // --checkpoint: written every `checkpoint_every` epochs and at the end
  int checkpoint_every = 10;
  double checkpoint_seconds = 0;  // the longest checkpoint write so far (results config.checkpoint)
  // The run's segments and epochs so far: a resumed run's starts with its checkpoint's.
  RunHistory history;
  // --resume on a checkpoint of the last epoch: nothing to train (start_train
  // has said so and put the results in place); train exits 0.
  bool finished = false;
  // Test-only (GCNLAB_INJECT_SIGNAL=RANK:checkpoint-write:SIG): called at a named place of the run.
  std::function<void(std::string_view)> injection;
  std::unique_ptr<Backend> backend;
  std::unique_ptr<Communicator> device_world;  // NCCL for --backend cuda
  std::unique_ptr<Strategy> strategy;
  std::unique_ptr<Model> gnn;  // --model (models/registry.hpp)
  std::unique_ptr<Trainer> trainer;

  // The communicator the strategy runs on.
  Communicator& comm(Communicator& world) { return device_world ? *device_world : world; }
};
// `stop_signals`: catch a scheduler's stop signals from here on (train, whose
// epoch loop agrees on them; bench epoch, which does not, leaves them fatal).
TrainRun start_train(Args& args, MpiCommunicator& world, int default_epochs = 100, bool stop_signals = true);

}  // namespace gcnlab::cli
