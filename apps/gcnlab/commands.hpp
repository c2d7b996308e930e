#pragma once
// The gcnlab subcommands. Each runs on every rank of `world`, the MPI world the
// process started in (main makes it): the commands that need MPI itself (the node
// a rank runs on, NCCL set up from MPI, PT-Scotch) take it from there.

#include <functional>
#include <string>
#include <vector>

#include <memory>
#include <optional>

#include "apps/gcnlab/options.hpp"
#include "backends/factory.hpp"
#include "common/comm/communicator.hpp"
#include "common/comm/mpi_communicator.hpp"
#include "common/model/strategy.hpp"
#include "common/model/trainer.hpp"
#include "models/registry.hpp"
#include "common/results/history.hpp"
#include "common/results/results.hpp"

namespace gcnlab {
struct Dataset;
}  // namespace gcnlab

namespace gcnlab::cli {

// Thrown after a collective error check has printed the message once: every
// rank exits non-zero without printing again.
struct ReportedError {
  int code = 1;  // the exit status: 2 for usage mistakes (UsageError), 1 otherwise
};

// Runs `fn` on every rank and agrees on the outcome: if any rank failed, the
// lowest failing rank prints its message once and every rank throws
// ReportedError (so no rank is left waiting in a collective). The agreement
// runs on a duplicate of `world`: a rank that failed before a collective of `fn`
// which the others entered waits for them a few seconds, then prints its message
// and ends the job (MPI_Abort), so a partial error never hangs.
void collectively(MpiCommunicator& world, const std::function<void()>& fn);

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
// train's strategy options (all but --grid, which the caller reads) and model options.
StrategyOptions read_strategy_options(Args& args, const char* command);
ModelConfig read_model_config(Args& args);

int train(Args& args, MpiCommunicator& world);
int bench(const std::string& kind, Args& args, MpiCommunicator& world);  // bench.cpp: spmm | gemm | epoch
int info(Args& args, MpiCommunicator& world);
int prepare(Args& args, MpiCommunicator& world);
int partition(Args& args, MpiCommunicator& world);
int compare(Args& args, MpiCommunicator& world);
int strategies(Args& args, MpiCommunicator& world);  // the registry (--json for scripts)
int models(Args& args, MpiCommunicator& world);      // the models' registry (--json for scripts)
int plan(Args& args, MpiCommunicator& world);  // plan.cpp
int simulate(Args& args, MpiCommunicator& world);  // simulate.cpp

// --grid auto for plexus-3d: the grid the performance model ranks first (plan.cpp).
std::vector<int> auto_grid(const Dataset& data, const ModelConfig& model, int ranks, const std::string& machine);

}  // namespace gcnlab::cli
