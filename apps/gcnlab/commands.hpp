#pragma once
// The gcnlab subcommands, one file each (train.cpp, info.cpp, prepare.cpp,
// partition.cpp, compare.cpp, plan.cpp, simulate.cpp, bench.cpp, models.cpp,
// strategies.cpp), and what every one of them shares: the failure agreement
// (collectively.cpp). Each runs on every rank of `world`, the MPI world the
// process started in (main makes it): the commands that need MPI itself (the
// node a rank runs on, NCCL set up from MPI, PT-Scotch) take it from there.

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/gcnlab/options.hpp"
#include "common/comm/communicator.hpp"
#include "common/comm/mpi_communicator.hpp"
#include "common/model/trainer.hpp"

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

// One line on rank 0's stderr.
void log(const Communicator& world, const std::string& line);

// A registry's listing on rank 0 (strategies, models): `json` with --json (for scripts), else `text`.
int print_listing(Args& args, MpiCommunicator& world, const std::function<nlohmann::json()>& json,
                  const std::function<std::string()>& text);

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

// --grid auto for plexus-3d: the grid the performance model ranks first (plan.cpp): Plexus's for GCN,
// the traced model (simulate's work and bytes) for every other model.
std::vector<int> auto_grid(const Dataset& data, const StrategyOptions& options, const ModelConfig& model, int ranks,
                           const std::string& machine);

}  // namespace gcnlab::cli
