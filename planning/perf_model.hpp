#pragma once
// Plexus's performance model (Ranjan et al., SC'25, Sec. 4): predicted epoch
// time of every Gx x Gy x Gz factorisation of G, to pick the grid
// (`gcnlab plan`, `--grid auto`).
//
// Communication (Sec. 4.2): every collective of plexus::epoch_collectives
// (the strategy's own list, so the model and the byte counts agree) costs its
// ring wire bytes (Eq. 4.5) over the bandwidth of its axis. Ranks are placed
// Y innermost, then X, then Z; a group whose ranks span at most one node runs
// at the intra-node bandwidth, otherwise at inter / min(GPUs per node, stride)
// where stride is the rank distance of the group's members (Eq. 4.6: for Z,
// stride Gx Gy).
//
// Computation (Sec. 4.1, Eq. 4.4), summed over the SpMMs of an epoch:
//   F = nnz · f_l / G                 (flops per GPU; the paper's NNZ · D^L0
//                                      does not change with G, so a profile
//                                      fitted at one G could not predict another)
//   fwd_penalty = (n / G_a) · (G_b / f_l)   common dimension over a, F's columns over b
//   bwd_penalty = (n / G_c) · (G_b / f_l)   Aᵀ dH: common dimension over c
//   t_spmm = k_flops √F + k_fwd √F fwd_penalty + k_bwd √F bwd_penalty
// with k fitted by least squares to measured runs (`gcnlab plan --calibrate`).
// Dense GEMMs and the loss are neglected, as in the paper.

#include <string>
#include <vector>

#include "algorithms/plexus-3d/decomposition.hpp"

namespace gcnlab::plexus {

struct MachineProfile {
  std::string name;
  std::string source;  // where every number comes from
  int gpus_per_node = 4;
  double intra_bandwidth = 0;  // bytes/s per rank inside a node
  double inter_bandwidth = 0;  // bytes/s per node between nodes
  double k_flops = 0, k_fwd = 0, k_bwd = 0;  // seconds per unit of Eq. 4.4's terms
};

// Built-in profiles by name ("local", "perlmutter"), else a JSON file written by --calibrate.
MachineProfile machine_profile(const std::string& name_or_file);
std::vector<std::string> builtin_profiles();
std::string profile_json(const MachineProfile& m);

struct Problem {
  std::int64_t n = 0, nnz = 0;      // vertices, nonzeros of Â
  std::vector<std::int64_t> dims;   // f_0 .. f_L
  bool learn_features = false;
};

struct Prediction {
  Grid grid{};
  double spmm_s = 0, comm_s = 0;
  std::array<double, 3> comm_axis_s{};  // x, y, z
  double wire_bytes = 0;                // per rank and epoch (the largest blocks, coordinate 0)
  double total_s() const { return spmm_s + comm_s; }
};

Prediction predict(const Problem& p, const Grid& g, const MachineProfile& m);
// The three Eq. 4.4 terms summed over the epoch's SpMMs (the regressors of the fit).
std::array<double, 3> spmm_terms(const Problem& p, const Grid& g);

// Every factorisation of G, fastest first.
std::vector<Prediction> rank_grids(const Problem& p, int G, const MachineProfile& m);

// One measured run for calibration and validation.
struct Observation {
  Problem problem;
  Grid grid{};
  double spmm_s = 0, comm_s = 0, epoch_s = 0;
  std::string label;
};

// Least-squares fit of k_flops, k_fwd, k_bwd to the SpMM times and of one
// bandwidth (intra = inter: the runs share a node) to the communication times.
MachineProfile calibrate(const std::vector<Observation>& runs, const std::string& name, const std::string& source);

// Spearman rank correlation of two equally long series.
double spearman(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace gcnlab::plexus
