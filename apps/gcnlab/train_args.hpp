#pragma once
// train's command line (start_train's first phase).

#include <optional>
#include <string>
#include <utility>

#include "apps/gcnlab/train_run.hpp"
#include "common/comm/node.hpp"

namespace gcnlab::cli {

// What train's command line names beyond the run's configurations.
struct TrainArgs {
  std::string dataset_spec, machine;
  bool auto_grid = false;  // --grid auto
  std::optional<std::string> partitioner, weights_in, resume_from;
  NodeRanks node;                         // this rank's node (common/comm/node.hpp)
  std::string gpu_comm = "nccl";           // --gpu-comm (--backend cuda)
  int stop_signal = 0, stop_grace = 60;  // --stop-signal (0: SIGTERM and SIGUSR1 only), --stop-grace
};

// train's flags: the configurations and outputs into `run`, the rest returned;
// their checks. `node`: this rank's node (node_ranks).
TrainArgs read_train_args(Args& args, const MpiCommunicator& world, const NodeRanks& node, int default_epochs,
                          bool stop_signals, TrainRun& run);

}  // namespace gcnlab::cli
