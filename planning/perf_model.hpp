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
// 2. Every strategy (planning/plan.hpp): local work from epoch_work at the
//    profile's kernel rates, and each rank's modelled bytes (ByteModel terms,
//    each with its group) priced at its groups' bandwidths: Eq. 4.6 for any
//    group (byte_model.hpp's link_sharing).

#include <string>
#include <vector>

#include "algorithms/plexus-3d/decomposition.hpp"
#include "common/comm/byte_model.hpp"

namespace gcnlab::planning {

using plexus::Grid;

struct MachineProfile {
  std::string name;
  std::string source;  // where every number comes from
  int gpus_per_node = 4;
  double intra_bandwidth = 0;  // bytes/s per rank inside a node
  double inter_bandwidth = 0;  // bytes/s per node between nodes
  // Eq. 4.4: seconds per unit of its three terms; per_gpu_flops: the terms use
  // √(NNZ·D/G) (fits of this code), else √(NNZ·D) as printed (the paper's fit).
  double k_flops = 0, k_fwd = 0, k_bwd = 0;
  bool per_gpu_flops = true;
  // Local kernel rates of one rank, for comparing strategies:
  double spmm_rate = 0;  // nonzero·columns per second: an SpMM of nnz nonzeros and width f takes nnz·f / rate
  double gemm_rate = 0;  // flop/s of a dense product
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

// Seconds of a rank's modelled bytes: intra / β_intra + inter_weighted / β_inter.
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
// The three Eq. 4.4 terms summed over the epoch's SpMMs (the regressors of the fit).
std::array<double, 3> spmm_terms(const Problem& p, const Grid& g, bool per_gpu_flops = true);
// Eq. 4.5's bytes of rank (0, 0, 0) by the link Eq. 4.6 puts them on.
LinkBytes plexus_link_bytes(const Problem& p, const Grid& g, int gpus_per_node);

// Every factorisation of G, fastest first.
std::vector<Prediction> rank_grids(const Problem& p, int G, const MachineProfile& m);

// --- 2. every strategy ------------------------------------------------------

// Local work of one epoch summed over all ranks (full graph, aggregation first):
// SpMM nonzero·columns nnz·f_l forward and nnz·f_{l+1} backward per layer, but
// no backward SpMM in layer 0 for plexus-3d (it keeps H = ÂF from the forward
// pass, Alg. 2) unless the features are learned; GEMM flops 2·n·f_l·f_{l+1} for
// Z = HW and for dW, and once more for dX where there is one.
// A graph-attention layer of H heads and width F (models/gat; F: Z's, H times
// the output's where it averages its heads): edge work in
// the same nonzero·column units, 3·nnz·F (the aggregation, its transpose, the
// SDDMM) + 8·nnz·H (the edge softmax's passes over the edges: scores, row max,
// exp and sum, scaling, dropout, row dot, the softmax's backward, the edge
// sums), and its GEMMs: Z = XW, dW (and dX) as above + 12·n·F·H (the scores
// s, d, their share of dZ, and da).
// spmm: nonzero·columns of the SpMMs (and an attention layer's SDDMM), split
// by the ranks' nonzeros; edges: nonzero·heads of the edge softmax's passes,
// on each rank's edge tensors (a feature split keeps a whole block row's on
// every rank of the process row: 2d, split-3d).
struct EpochWork {
  double spmm = 0, gemm = 0, edges = 0;
};
EpochWork epoch_work(const Problem& p, const std::string& algo);

// One rank's load: its share of the local work (its nonzeros over the mean),
// of the edge work (its edge tensors' nonzeros over the mean nonzeros; below
// 0: the same as share) and its modelled bytes by link.
struct RankLoad {
  double share = 1;
  LinkBytes link;
  double edge_share = -1;
};

// compute_r = ((work.spmm · share_r + work.edges · edge_share_r) / spmm_rate + work.gemm / gemm_rate) / P and
// comm_r = seconds(link_r); the epoch is the slowest rank's compute_r + comm_r
// (no overlap, as Plexus Sec. 4.3).
struct RankTime {
  double compute_s = 0, comm_s = 0;
  int rank = 0;
  double total_s() const { return compute_s + comm_s; }
};
RankTime slowest_rank(const std::vector<RankLoad>& ranks, const EpochWork& work, const MachineProfile& m);

// --- calibration and validation ---------------------------------------------

// One measured run (any strategy).
struct Observation {
  std::string label, algo;
  Problem problem;
  std::vector<int> run_grid;  // as the run recorded it
  Grid grid{};                // plexus-3d
  int ranks_per_node = 0;
  double spmm_s = 0, gemm_s = 0, comm_s = 0, epoch_s = 0;  // measured: the slowest rank's
  EpochWork work;               // of the run's model, all ranks
  std::vector<RankLoad> ranks;  // from the run's per-rank nonzeros and modelled bytes by link
  int comm_rank = 0;            // the rank with the longest measured communication time (comm_s)
};

// Least-squares fits, each through the origin, to the runs:
// - Eq. 4.4's k_flops, k_fwd, k_bwd to the SpMM times of the plexus-3d runs
//   (when there are 3 or more; else `base`'s);
// - spmm_rate and gemm_rate to the slowest rank's SpMM and GEMM times over
//   the busiest rank's work;
// - 1/β_intra and 1/β_inter to each run's longest communication time over
//   that rank's LinkBytes. When no run crossed nodes, β_inter cannot be
//   identified: it is set to β_intra and the profile's source says so.
// gpus_per_node: the largest ranks_per_node of the runs when some crossed
// nodes, else `base`'s.
MachineProfile calibrate(const std::vector<Observation>& runs, const MachineProfile& base, const std::string& name,
                         const std::string& source);

// Spearman rank correlation of two equally long series.
double spearman(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace gcnlab::planning
