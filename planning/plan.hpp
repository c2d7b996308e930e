#pragma once
// Comparing strategies before running them (gcnlab plan --algo LIST|all).
//
// For each strategy and each grid it accepts at G ranks, simulate
// (planning/simulate.hpp) runs the strategy's own distribution and byte model
// on G threads: every rank's modelled wire bytes, each term with the group
// that moves it, and its nonzeros. A machine profile (perf_model.hpp) prices
// them, the same way for every strategy:
//   compute_r = (SpMM work / spmm_rate + GEMM flops / gemm_rate) / G · nnz_r / mean nnz
//   comm_r    = Σ over the rank's terms of bytes / group_bandwidth   (Eq. 4.5, 4.6 for any group)
//   epoch     = max over ranks of compute_r + comm_r   (no overlap; Plexus Sec. 4.3)
// The volumes are exact (the strategies' own models, equal to the measured
// bytes at the rank counts that ran); the times are a model: SpMM time is
// proportional to nonzero·columns (no shape penalty, unlike Eq. 4.4, which
// `plan` without --algo uses for plexus-3d grids), and a rank's share of the
// SpMM work is taken as its share of the nonzeros.

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
  double total_s() const { return compute_s + comm_s; }
};

// Every grid of every strategy in `algos` at `ranks` ranks, fastest first.
// Grids a strategy refuses (too few rows, replication that does not divide,
// ...) are left out; `refused` collects one line for each.
std::vector<StrategyPrediction> compare_strategies(const Dataset& data, const std::vector<std::string>& algos,
                                                   const StrategyOptions& base, const ModelConfig& model, int ranks,
                                                   const MachineProfile& m, std::vector<std::string>* refused = nullptr);

// Every ordered factorisation of `ranks` into `axes` factors.
inline std::vector<std::vector<int>> factorisations(int ranks, int axes) { return factor_grids(ranks, axes); }

}  // namespace gcnlab::planning
