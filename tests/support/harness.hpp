#pragma once
// Test harness: run a strategy in-process on a communicator and compare runs
// in the "IsSameAsDense" style (Ginkgo): same data, one distributed run, one
// serial run on MPI_COMM_SELF, assert near.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/model/strategy.hpp"
#include "common/comm/mpi_communicator.hpp"
#include "common/data/dataset.hpp"
#include "common/model/trainer.hpp"

namespace gcnlab::test {

struct RunSpec {
  std::string algo = "serial";
  std::vector<int> grid;
  int replication = 0;
  std::int64_t block = 0;
  std::string permutation;  // empty: the strategy's default
  int agg_blocks = 1;
  std::string gemm_order = "auto";
  std::string order = "auto";
  bool overlap = true;
  std::string dw_reduce = "summa";
  std::string softmax = "allgather";
  std::string comm_precision = "fp32";
  int dp_groups = 1;  // serial --batch-size: the oracle of D data-parallel groups
  std::string partitioner = "block";
  std::string backend = "cpu";
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
  std::unique_ptr<Trainer> trainer_;
};

RunResult run(MPI_Comm comm, const RunSpec& spec, const Dataset& data);

// The strategy options a spec runs with.
StrategyOptions strategy_options(const RunSpec& spec);

// Per-epoch loss within `rel` relative error, final weights within rel + abs, and
// (`accuracy`) the training accuracy. `other` may be a resumed run: its epochs
// are compared with the reference's last ones.
void require_same_model(const RunResult& reference, const RunResult& other, double rel = 1e-4, bool accuracy = true);

// Every rank's measured wire bytes per communication category equal its model
// (exactly, up to the double sums' rounding).
void require_measured_equals_model(const RunResult& r);

// Every grid shape this strategy accepts on p ranks (all factorisations).
std::vector<std::vector<int>> grids_for(const std::string& algo, int p);

// The message of the gcnlab::Error `fn` throws ("no error" if none).
std::string error_message(const std::function<void()>& fn);

int world_size();
int world_rank();

}  // namespace gcnlab::test
