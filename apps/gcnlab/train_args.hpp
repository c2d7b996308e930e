#pragma once
// train's command line (start_train's first phase).

#include <optional>
#include <string>
#include <utility>

#include "apps/gcnlab/train_run.hpp"

namespace gcnlab::cli {

// What train's command line names beyond the run's configurations.
struct TrainArgs {
  std::string dataset_spec, machine;
  bool auto_grid = false;  // --grid auto
  std::optional<std::string> partitioner, weights_in, resume_from;
  int local_rank = 0, ranks_on_node = 1;  // on the node
  std::string gpu_comm = "nccl";           // --gpu-comm (--backend cuda)
  int stop_signal = 0, stop_grace = 60;  // --stop-signal (0: SIGTERM and SIGUSR1 only), --stop-grace
};

// train's flags: the configurations and outputs into `run`, the rest returned;
// their checks. `node`: this rank's node_position.
TrainArgs read_train_args(Args& args, const MpiCommunicator& world, std::pair<int, int> node, int default_epochs,
                          bool stop_signals, TrainRun& run);

}  // namespace gcnlab::cli
