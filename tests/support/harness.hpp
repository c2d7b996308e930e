#pragma once
// Test harness: run a strategy in-process on a communicator and compare runs
// in the "IsSameAsDense" style (Ginkgo): same data, one distributed run, one
// serial run on MPI_COMM_SELF, assert near.

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "algorithms/registry.hpp"
#include "common/model/strategy.hpp"
#include "common/comm/mpi_communicator.hpp"
#include "common/data/dataset.hpp"
#include "common/model/trainer.hpp"

namespace gcnlab::test {

struct RunSpec {
  std::string algo = "serial";
  std::vector<int> grid;
  std::string order = "auto";
  std::string comm_precision = "fp32";
  // The strategies' own options by name ("agg-blocks" -> "3"); the registry's defaults for the rest.
  std::map<std::string, std::string> options;
  int dp_groups = 1;  // serial --batch-size: the oracle of D data-parallel groups
  std::string partitioner = "block";
  std::string backend = "cpu";
  // --gpu-comm: "mpi" runs the strategies over the staged MPI transport (on the CPU
  // backend with memcpy for the device copies; on the CUDA backend ranks may share a GPU).
  std::string gpu_comm = "nccl";
  int threads = 1;         // per rank (--threads)
  bool misalign = false;   // every backend buffer off its usual alignment (Allocator::misalign_for_testing)
  ModelConfig model;
  TrainConfig train;
};

// Everything one in-process run needs, kept alive together.
class Job {
 public:
  // comm: MPI_COMM_WORLD or MPI_COMM_SELF
  Job(MPI_Comm comm, const RunSpec& spec);
  void setup(const Dataset& data, const Weights* initial = nullptr);
  RunResult train() { return trainer_->train(); }
  Trainer& trainer() { return *trainer_; }
  Strategy& strategy() { return *strategy_; }
  Communicator& comm() { return device_comm_ ? *device_comm_ : *comm_; }
  Ledger& ledger() { return ledger_; }

 private:
  RunSpec spec_;
  Ledger ledger_;
  std::unique_ptr<MpiCommunicator> comm_;
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<Communicator> device_comm_;  // NCCL for the CUDA backend
  std::unique_ptr<Strategy> strategy_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<Trainer> trainer_;
};

RunResult run(MPI_Comm comm, const RunSpec& spec, const Dataset& data);

// The strategy options a spec runs with.
StrategyOptions strategy_options(const RunSpec& spec);

// Per-epoch loss within `rel` relative error, final weights within rel + abs, and
// (`accuracy`) the training accuracy. `other` may be a resumed run: its epochs
// are compared with the reference's last ones.
void require_same_model(const RunResult& reference, const RunResult& other, double rel = 1e-4, bool accuracy = true);

// The same bits: every epoch's loss and accuracies, the final weights, and
// every rank's bytes and calls per communication category.
void require_bitwise_equal(const RunResult& a, const RunResult& b);

// Every rank's measured wire bytes per communication category equal its model
// (exactly, up to the double sums' rounding): asserted per category, or answered.
void require_measured_equals_model(const RunResult& r);
bool measured_equals_model(const RunResult& r);

// Every grid shape this strategy accepts on p ranks (its registry entry's grids).
std::vector<std::vector<int>> grids_for(const std::string& algo, int p);

// Whether the strategy runs on more than one rank (serial: no).
bool distributed(const std::string& algo);
// Whether the strategy declares `option` (its registry entry).
bool declares(const std::string& algo, const std::string& option);
// Its grids on p ranks whose processes are all the p ranks (serial's only at p = 1).
std::vector<std::vector<int>> job_grids(const std::string& algo, int p);

// The message of the gcnlab::Error `fn` throws ("no error" if none).
std::string error_message(const std::function<void()>& fn);

int world_size();
int world_rank();

}  // namespace gcnlab::test
