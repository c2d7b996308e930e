#pragma once
// Comparing strategies before running them (gcnlab plan --algo LIST|all).
//
// For each strategy and each grid it accepts at G ranks, simulate
// (planning/simulate.hpp) runs the strategy's own distribution, byte model
// and one traced training epoch of the model on G threads: every rank's
// modelled wire bytes, each term with the group that moves it, and the work
// of every kernel it runs (common/comm/work.hpp). A machine profile
// (perf_model.hpp) prices them, the same way for every strategy and model:
//   compute_r = Σ over kernel kinds of work_r,k / rate_k + calls_r,k · latency_k
//   comm_r    = Σ over the rank's terms of bytes / group_bandwidth   (Eq. 4.5, 4.6 for any group)
//   epoch     = max over ranks of compute_r + comm_r   (no overlap; Plexus Sec. 4.3)
// The volumes and the work are exact (the strategies' own byte models and
// the model's own epoch, equal to the measured bytes and to the kernels'
// inputs at the rank counts that ran); the times are a model: a kernel's
// time is linear in its work (no shape penalty, unlike Eq. 4.4, which `plan`
// without --algo uses for plexus-3d grids of GCN).

#include <string>
#include <vector>

#include "algorithms/registry.hpp"
#include "common/data/dataset.hpp"
#include "common/model/config.hpp"
#include "common/model/strategy.hpp"
#include "planning/perf_model.hpp"

namespace gcnlab::planning {

struct StrategyPrediction {
  std::string algo;
  std::vector<int> grid;
  double compute_s = 0, comm_s = 0;  // of the slowest rank
  int slowest_rank = 0;
  double wire_bytes_max = 0;         // modelled bytes of the rank that receives the most
  double inter_bytes_max = 0;        // ... of them crossing nodes (unweighted)
  double nnz_imbalance = 1;          // max / mean nonzeros per rank
  double memory_max = 0;             // analytic backend bytes of the largest rank
  int memory_rank = 0;               // which rank that is
  double total_s() const { return compute_s + comm_s; }
};

// Every grid of every strategy in `algos` at `ranks` ranks, fastest first.
// Grids a strategy refuses (too few rows, replication that does not divide,
// ...) and grids whose largest rank needs more than the machine's
// device_memory are left out; `refused` collects one line for each.
std::vector<StrategyPrediction> compare_strategies(const Dataset& data, const std::vector<std::string>& algos,
                                                   const StrategyOptions& base, const ModelConfig& model, int ranks,
                                                   const MachineProfile& m, std::vector<std::string>* refused = nullptr);

// Every ordered factorisation of `ranks` into `axes` factors.
inline std::vector<std::vector<int>> factorisations(int ranks, int axes) { return factor_grids(ranks, axes); }

}  // namespace gcnlab::planning
