#pragma once
// Performance models for `gcnlab plan` and `--grid auto`.
//
// 1. Plexus's model (Ranjan et al., SC'25, Sec. 4) of plexus-3d: predicted
//    epoch time of every Gx x Gy x Gz factorisation of G.
//
//    Communication (Sec. 4.2): every collective of plexus::epoch_collectives
//    (the strategy's own list, so the model and the byte counts agree) costs
//    its ring wire bytes (Eq. 4.5) over the bandwidth of its axis. Ranks are
//    placed Y innermost, then X, then Z; a group whose ranks span at most one
//    node runs at the intra-node bandwidth, otherwise at
//    inter / min(GPUs per node, stride) where stride is the rank distance of
//    the group's members (Eq. 4.6: for Z, stride Gx Gy).
//
//    Computation (Sec. 4.1, Eq. 4.4), summed over the SpMMs of an epoch:
//      F = nnz · f_l / G                 (flops per GPU in our fits; the
//                                         paper's NNZ · D^L0 does not change
//                                         with G, see per_gpu_flops)
//      fwd_penalty = (n / G_a) · (G_b / f_l)   common dimension over a, F's columns over b
//      bwd_penalty = (n / G_c) · (G_b / f_l)   Aᵀ dH: common dimension over c
//      t_spmm = k_flops √F + k_fwd √F fwd_penalty + k_bwd √F bwd_penalty
//    with k fitted by least squares to measured runs (`gcnlab plan
//    --calibrate`). The paper's own fit (the perlmutter profile) is of
//    √(NNZ·D) as Eq. 4.4 is printed, and is used so at every G. Dense GEMMs
//    and the loss are neglected, as in the paper.
//
// 2. Every strategy and model (planning/plan.hpp): each rank's kernels' work,
//    traced from the model's own epoch (common/comm/work.hpp; simulate's, or a
//    run's own per_rank[].work), priced per kernel kind at the profile's rate
//    and per-call latency, and each rank's modelled bytes (ByteModel terms,
//    each with its group) priced at its groups' bandwidths: Eq. 4.6 for any
//    group (byte_model.hpp's link_sharing).

#include <cmath>
#include <string>
#include <vector>

#include "algorithms/plexus-3d/decomposition.hpp"
#include "common/comm/byte_model.hpp"
#include "common/comm/ledger.hpp"

namespace gcnlab::planning {

using plexus::Grid;

// One kernel kind's price: an amount of work (in the kind's unit) over the
// rate, plus a latency per call, plus (sparse kinds) a time per nonzero and
// one per row element (Work::row_elements).
struct KernelRate {
  double rate = 0;           // units per second (0: not priced)
  double latency_s = 0;      // seconds per call
  double nonzero_s = 0;      // sparse kinds: seconds per nonzero visited, whatever the width (index and value)
  double row_element_s = 0;  // sparse kinds: seconds per row visited per column (its output or operand row)
  bool priced() const { return rate > 0 || latency_s > 0 || nonzero_s > 0 || row_element_s > 0; }
};

struct MachineProfile {
  std::string name;
  std::string source;  // where every number comes from
  int gpus_per_node = 4;
  double intra_bandwidth = 0;  // bytes/s per rank inside a node
  double inter_bandwidth = 0;  // bytes/s per node between nodes
  // Bytes a rank's device holds (0: not known, not checked): plan refuses a grid whose largest rank's
  // analytic need (Trainer::memory_need) exceeds it.
  double device_memory = 0;
  // Eq. 4.4: seconds per unit of its three terms; per_gpu_flops: the terms use
  // √(NNZ·D/G) (fits of this code), else √(NNZ·D) as printed (the paper's fit).
  double k_flops = 0, k_fwd = 0, k_bwd = 0;
  bool per_gpu_flops = true;
  // One rank's kernels, per kind (one rank per core or device): what plan --algo and --validate price.
  std::array<KernelRate, kNumKernels> kernels{};
  const KernelRate& rate(Kernel k) const { return kernels[static_cast<std::size_t>(k)]; }
  // Seconds per byte inside a node, per communication category (0: 1 / intra_bandwidth). Through shared
  // memory the collectives differ per byte: a reduce-scatter's byte is copied and reduced, an all-to-all's
  // copied only (on this machine's 2-rank runs 0.82 against 0.15 ns per byte).
  std::array<double, kNumCategories> intra_byte_s{};
  double intra_seconds_per_byte(Category c) const;
};

// Built-in profiles by name ("local", "perlmutter"), else a JSON file written by --calibrate.
MachineProfile machine_profile(const std::string& name_or_file);
std::vector<std::string> builtin_profiles();
std::string profile_json(const MachineProfile& m);

struct Problem {
  std::int64_t n = 0, nnz = 0;      // vertices, nonzeros of Â
  std::vector<std::int64_t> dims;   // f_0 .. f_L
  bool learn_features = false;
  // The model's layer kinds (empty: every layer a graph convolution) and its
  // name, for messages: Plexus's model (predict, rank_grids) prices graph
  // convolutions only; epoch_work counts a linear layer's GEMMs and no SpMM.
  std::vector<LayerKind> kinds;
  bool self_term = false;  // Architecture::self_term: each convolution also aligns and multiplies its input rows
  bool attention = false;  // Architecture::attends(): some layer aggregates with graph attention's edge tensors
  std::string model = "gcn";
  std::vector<int> heads;  // Architecture::heads: per layer, its attention heads (0 or empty: none)
  std::vector<std::int64_t> zdims;  // Architecture::weight_cols: per layer, Z = XW's width (empty: dims[l+1])
};
// The problem of a model of architecture `a` on a graph of n vertices and nnz nonzeros of Â.
Problem problem_of(std::int64_t n, std::int64_t nnz, const Architecture& a, bool learn_features);

// Seconds of a rank's modelled bytes: Σ_c intra[c] · intra_seconds_per_byte(c) + inter_weighted / β_inter.
double seconds(const LinkBytes& b, const MachineProfile& m);
// The bandwidth world rank `world_rank` sees in `group`: β_intra inside a
// node, else β_inter / link_sharing (Eq. 4.6 for any group).
double group_bandwidth(const Members& group, int world_rank, const MachineProfile& m);

// --- 1. Plexus's model of plexus-3d grids -----------------------------------

struct Prediction {
  Grid grid{};
  double spmm_s = 0, comm_s = 0;
  std::array<double, 3> comm_axis_s{};  // x, y, z
  double wire_bytes = 0;                // per rank and epoch (the largest blocks, coordinate 0)
  double total_s() const { return spmm_s + comm_s; }
};

Prediction predict(const Problem& p, const Grid& g, const MachineProfile& m);
// Whether Plexus's model describes the problem's model: every layer a graph
// convolution, no root term, no attention (predict and rank_grids refuse others).
bool prices_convolutions(const Problem& p);
// The three Eq. 4.4 terms summed over the epoch's SpMMs (the regressors of the fit).
std::array<double, 3> spmm_terms(const Problem& p, const Grid& g, bool per_gpu_flops = true);
// Eq. 4.5's bytes of rank (0, 0, 0) by the link Eq. 4.6 puts them on.
LinkBytes plexus_link_bytes(const Problem& p, const Grid& g, int gpus_per_node);

// Every factorisation of G, fastest first.
std::vector<Prediction> rank_grids(const Problem& p, int G, const MachineProfile& m);

// --- 2. every strategy ------------------------------------------------------

// A rank's work summed over the breakdown categories it ran in.
KernelWork by_kind(const CategoryWork& w);

// Seconds of a rank's kernels: Σ over the computing kinds of amount / rate +
// calls · latency. A kind with work and no rate in `m` is an error (the
// profile was calibrated without a model that uses it), named in one line.
double compute_seconds(const KernelWork& w, const MachineProfile& m);

// One rank's traced work and modelled bytes by link.
struct RankLoad {
  KernelWork work;
  LinkBytes link;
};

// compute_r = compute_seconds(work_r) and comm_r = seconds(link_r); the
// epoch is the slowest rank's compute_r + comm_r (no overlap, as Plexus Sec.
// 4.3). When ranks time-share cores — `sharing` σ = ranks per core > 1, e.g.
// 2 for 4 one-thread ranks on 2 cores — the cores bound it instead when that
// is longer: σ · mean_r (compute_r + comm_r). A waiting rank yields its core,
// so its kernels run at full speed, but the cores do every rank's work, and
// through shared memory a rank's communication is work too: the copies in
// and out of the transport's segments run on the ranks' cores.
struct RankTime {
  double compute_s = 0, comm_s = 0;
  int rank = 0;
  double total_s() const { return compute_s + comm_s; }
};
RankTime slowest_rank(const std::vector<RankLoad>& ranks, const MachineProfile& m, double sharing = 1);

// --- calibration and validation ---------------------------------------------

// One measured run (any strategy and model).
struct Observation {
  std::string label, algo;
  Problem problem;
  std::vector<int> run_grid;  // as the run recorded it
  Grid grid{};                // plexus-3d
  int ranks_per_node = 0;
  double sharing = 1;         // ranks per core: ranks_per_node · threads / cores_per_node, at least 1 (slowest_rank)
  double spmm_s = 0, comm_s = 0, epoch_s = 0;  // measured: the slowest rank's SpMM and communication, the epoch
  std::vector<RankLoad> ranks;  // the run's per-rank work (per_rank[].work, = simulate's trace) and bytes by link
  std::vector<CategoryWork> work;  // ... by breakdown category
  std::vector<std::array<double, kNumCategories>> times;  // per rank, measured seconds per category
  int comm_rank = 0;  // the rank whose measured communication time is comm_s: the one with the most compute
};

// How well the kernel rates fit one breakdown category's measured times.
struct CategoryFit {
  Category category = Category::other;
  double measured_s = 0, predicted_s = 0;  // summed over the runs' ranks
  double mean_abs_error = 0;               // mean over the rows of |predicted − measured| / measured
  int rows = 0;
  // One row's measured and fitted seconds, the mean error kept current.
  void add(double measured, double predicted) {
    const double error = measured > 0 ? std::abs(predicted - measured) / measured : 0;
    measured_s += measured, predicted_s += predicted;
    mean_abs_error += (error - mean_abs_error) / ++rows;
  }
};

// Fits, to the runs:
// - Eq. 4.4's k_flops, k_fwd, k_bwd to the SpMM times of the plexus-3d runs
//   by least squares (when there are 3 or more; else `base`'s);
// - a rate and a per-call latency per kernel kind, non-negative (NNLS,
//   Lawson and Hanson), to every rank's measured time in every compute
//   category against the work it traced there (calibrate on runs with a
//   core per rank: a time-shared core's kernel times carry its neighbours');
//   a kind no run used keeps `base`'s price; `fits`, when given, receives
//   each category's residual;
// - 1/β_intra and 1/β_inter, non-negative, to the communication time of each
//   run's busiest rank (the one that waits least) over its LinkBytes. When no
//   run crossed nodes, β_inter cannot be identified: it is set to β_intra and
//   the profile's source says so;
// - each communication category's seconds per byte inside a node
//   (intra_byte_s), by least squares through the origin, to the busiest
//   rank's time in that category over its bytes there, on the runs whose
//   busiest rank stays inside its node; `fits` receives each one's residual.
//   A category no such run moved keeps `base`'s.
// gpus_per_node: the largest ranks_per_node of the runs when some crossed
// nodes, else `base`'s.
MachineProfile calibrate(const std::vector<Observation>& runs, const MachineProfile& base, const std::string& name,
                         const std::string& source, std::vector<CategoryFit>* fits = nullptr);

// min ||A x − b||₂ subject to x ≥ 0 (Lawson and Hanson, "Solving Least Squares
// Problems", 1974, Ch. 23, Algorithm NNLS); A given by its rows. (No Eigen
// type crosses this header: the layers are built for different -march, and
// Eigen's alignment, so its allocator, follows it.)
std::vector<double> nnls(const std::vector<std::vector<double>>& a, const std::vector<double>& b);

// For each model and rank count of the runs (two configurations or more): the
// measured-fastest strategy and grid and its place (1 = first) in the order of
// `predicted` (one prediction per run, in the runs' order); and what following
// the prediction costs: the measured time of its first choice over the best.
// Repetitions of a configuration (the same model, ranks, strategy and grid)
// count as one, at their mean measured and predicted epoch; `runs` counts
// configurations. Where the repetitions leave the fastest undetermined —
// another configuration's mean exceeds its by at most the sum of the two
// sample standard deviations — `tied` counts those others and `tied_place` is
// the best place any of them (or the fastest) has in the prediction.
struct RankingCheck {
  std::string model;
  int ranks = 0;
  std::string algo;
  std::vector<int> grid;
  int predicted_place = 0;
  int runs = 0;  // configurations
  double regret = 0;  // the measured epoch of the predicted-fastest run over the measured-fastest's, less 1
  int tied = 0;
  int tied_place = 0;
};
std::vector<RankingCheck> ranking_checks(const std::vector<Observation>& runs, const std::vector<double>& predicted);

// Spearman rank correlation of two equally long series.
double spearman(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace gcnlab::planning
