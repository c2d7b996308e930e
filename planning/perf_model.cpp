#include "planning/perf_model.hpp"

#include "algorithms/registry.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>

#include <Eigen/Dense>
#include <nlohmann/json.hpp>

#include "common/core/error.hpp"
#include "common/core/json.hpp"

namespace gcnlab::planning {

using plexus::Axes;
using plexus::Collective;

namespace {

// Perlmutter GPU nodes: 4 x A100 (Sec. 6.1). Inter-node: four NICs of 25 GB/s
// injection each (Sec. 6.1). Intra-node: NVLink 3, 300 GB/s per direction per
// A100 (NVIDIA's A100 datasheet; the paper gives no number). Eq. 4.4
// coefficients 7.8e-4, 7.8e-10, -2.6e-10 (Sec. 4.1) are the paper's fit in ms
// of √(NNZ·D) as printed (no G): used as they are at every G, converted to
// seconds only (per_gpu_flops = false).
// Kernel rates for comparing strategies (the paper gives none): an A100's
// 1555 GB/s HBM2 (datasheet) with every nonzero reading its 4-byte input
// element once from memory, 1555e9 / 4 nonzero·columns per second (a
// memory-roofline upper bound), and 19.5 TFLOP/s FP32 for dense products.
MachineProfile perlmutter() {
  MachineProfile m;
  m.name = "perlmutter";
  m.source = "Plexus SC'25 Sec. 6.1 (4 x A100 per node, 4 x 25 GB/s NICs) and Sec. 4.1 (Eq. 4.4 fit of "
             "sqrt(NNZ*D) as printed, ms converted to s); intra-node NVLink 3 300 GB/s, HBM2 1555 GB/s (SpMM "
             "roofline 1555e9/4 nonzero-columns/s) and 19.5 TFLOP/s FP32 from the A100 datasheet";
  m.gpus_per_node = 4;
  m.intra_bandwidth = 300e9;
  m.inter_bandwidth = 4 * 25e9;
  m.k_flops = 7.8e-4 * 1e-3;
  m.k_fwd = 7.8e-10 * 1e-3;
  m.k_bwd = -2.6e-10 * 1e-3;
  m.per_gpu_flops = false;
  m.spmm_rate = 1555e9 / 4;
  m.gemm_rate = 19.5e12;
  return m;
}

// This development machine (2 cores, OpenMPI over shared memory, every rank on
// one node). Eq. 4.4's k: experiments/plexus_model.sh (`gcnlab plan
// --calibrate` on the 9 plexus-3d factorisations of 2 and 4 ranks, sbm 20000
// nodes, dims 64-128-128-8, 2026-11-22; Spearman 0.81 on the 10 of 8 ranks).
// Bandwidth and kernel rates (one thread per rank): experiments/plan_strategies.sh
// (`gcnlab plan --calibrate` on 39 runs of the 8 full-graph strategies at 2 and
// 4 ranks, same graph and dims, 2026-11-24; Spearman 0.82 on their 35 runs at 8
// ranks).
MachineProfile local() {
  MachineProfile m;
  m.name = "local";
  m.source = "the 2-core development machine: Eq. 4.4 k from experiments/plexus_model.sh (2026-11-22), bandwidth "
             "and kernel rates from experiments/plan_strategies.sh (2026-11-24), both on sbm 20000 nodes at 2 and 4 "
             "ranks, one thread per rank";
  m.gpus_per_node = 1024;  // one node: every group is intra-node
  m.intra_bandwidth = 7.83e8;
  m.inter_bandwidth = 7.83e8;
  m.k_flops = 5.01e-6;
  m.k_fwd = 4.996e-9;
  m.k_bwd = -5.323e-9;
  m.spmm_rate = 5.43e9;
  m.gemm_rate = 3.93e10;
  return m;
}

// Eq. 4.6 for a Plexus axis (placement: y fastest, then x, then z): 0 when
// the axis group fits in a node, else the number of groups sharing its link.
int axis_sharing(const Grid& g, int axis, int gpus_per_node) {
  const int stride = axis == 1 ? 1 : axis == 0 ? g[1] : g[0] * g[1];
  return static_cast<long>(stride) * g[axis] <= gpus_per_node ? 0 : std::min(gpus_per_node, stride);
}

double bandwidth(const Grid& g, int axis, const MachineProfile& m) {
  const int sharing = axis_sharing(g, axis, m.gpus_per_node);
  return sharing == 0 ? m.intra_bandwidth : m.inter_bandwidth / sharing;
}

std::vector<double> ranks_of(const std::vector<double>& v) {
  std::vector<std::size_t> idx(v.size());
  std::iota(idx.begin(), idx.end(), std::size_t{0});
  std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (std::size_t i = 0; i < idx.size();) {
    std::size_t j = i;
    while (j + 1 < idx.size() && v[idx[j + 1]] == v[idx[i]]) ++j;
    for (std::size_t k = i; k <= j; ++k) r[idx[k]] = (static_cast<double>(i) + static_cast<double>(j)) / 2;  // ties share
    i = j + 1;
  }
  return r;
}

}  // namespace

std::vector<std::string> builtin_profiles() { return {"local", "perlmutter"}; }

MachineProfile machine_profile(const std::string& name_or_file) {
  if (name_or_file == "local") return local();
  if (name_or_file == "perlmutter") return perlmutter();
  std::ifstream in(name_or_file);
  GCNLAB_CHECK(in.good(), "--machine '{}' is neither a built-in profile (local, perlmutter) nor a readable file",
               name_or_file);
  try {
    const auto j = nlohmann::json::parse(in);
    MachineProfile m;
    m.name = j.at("name").get<std::string>();
    m.source = j.value("source", "");
    m.gpus_per_node = json_get<int>(j.at("gpus_per_node"));
    m.intra_bandwidth = j.at("intra_bandwidth").get<double>();
    m.inter_bandwidth = j.at("inter_bandwidth").get<double>();
    m.k_flops = j.at("k_flops").get<double>();
    m.k_fwd = j.at("k_fwd").get<double>();
    m.k_bwd = j.at("k_bwd").get<double>();
    m.per_gpu_flops = j.value("per_gpu_flops", true);
    m.spmm_rate = j.value("spmm_rate", 0.0);
    m.gemm_rate = j.value("gemm_rate", 0.0);
    GCNLAB_CHECK(m.gpus_per_node >= 1 && m.intra_bandwidth > 0 && m.inter_bandwidth > 0,
                 "machine profile '{}': gpus_per_node and bandwidths must be positive", name_or_file);
    return m;
  } catch (const nlohmann::json::exception& e) {
    fail("machine profile '{}' is not a valid profile ({})", name_or_file, e.what());
  }
}

std::string profile_json(const MachineProfile& m) {
  const nlohmann::json j = {{"name", m.name},
                            {"source", m.source},
                            {"gpus_per_node", m.gpus_per_node},
                            {"intra_bandwidth", m.intra_bandwidth},
                            {"inter_bandwidth", m.inter_bandwidth},
                            {"k_flops", m.k_flops},
                            {"k_fwd", m.k_fwd},
                            {"k_bwd", m.k_bwd},
                            {"per_gpu_flops", m.per_gpu_flops},
                            {"spmm_rate", m.spmm_rate},
                            {"gemm_rate", m.gemm_rate}};
  return j.dump(1);
}

Problem problem_of(std::int64_t n, std::int64_t nnz, const Architecture& a, bool learn_features) {
  return {n, nnz, a.dims, learn_features, a.kinds, a.self_term, a.attends(), a.model, a.heads, a.weight_cols()};
}

namespace {

// Plexus's model (Sec. 4) is of its GCN: every layer a graph convolution.
void check_convolutions(const Problem& p) {
  const bool convolutions =
      std::all_of(p.kinds.begin(), p.kinds.end(), [](LayerKind k) { return k == LayerKind::conv; });
  GCNLAB_CHECK(convolutions && !p.self_term && !p.attention,
               "Plexus's performance model (Sec. 4) prices graph convolutions only and --model {} has {}: "
               "compare strategies on their simulated bytes with plan --algo (and give plexus-3d a --grid)",
               p.model, !convolutions ? "linear layers" : p.self_term ? "a root term in each layer" : "graph attention");
}

}  // namespace

std::array<double, 3> spmm_terms(const Problem& p, const Grid& g, bool per_gpu_flops) {
  const int L = static_cast<int>(p.dims.size()) - 1;
  const double G = per_gpu_flops ? static_cast<double>(g[0]) * g[1] * g[2] : 1.0, n = static_cast<double>(p.n);
  std::array<double, 3> t{};
  for (int l = 0; l < L; ++l) {
    const Axes ax = plexus::layer_axes(l);
    const double f = static_cast<double>(p.dims[l]);
    const double root = std::sqrt(static_cast<double>(p.nnz) * f / G);
    t[0] += root;
    t[1] += root * (n / g[ax.a]) * (g[ax.b] / f);
    if (l > 0 || p.learn_features) t[2] += root * (n / g[ax.c]) * (g[ax.b] / f);  // Aᵀ dH
  }
  return t;
}

Prediction predict(const Problem& p, const Grid& g, const MachineProfile& m) {
  check_convolutions(p);
  Prediction out;
  out.grid = g;
  const auto t = spmm_terms(p, g, m.per_gpu_flops);
  out.spmm_s = m.k_flops * t[0] + m.k_fwd * t[1] + m.k_bwd * t[2];
  for (const Collective& c : plexus::epoch_collectives(p.n, p.dims, g, {0, 0, 0}, p.learn_features)) {
    out.comm_axis_s[c.axis] += c.wire_bytes / bandwidth(g, c.axis, m);
    out.wire_bytes += c.wire_bytes;
  }
  out.comm_s = out.comm_axis_s[0] + out.comm_axis_s[1] + out.comm_axis_s[2];
  return out;
}

std::vector<Prediction> rank_grids(const Problem& p, int G, const MachineProfile& m) {
  GCNLAB_CHECK(G >= 1, "--ranks must be >= 1");
  std::vector<Prediction> out;
  for (int x = 1; x <= G; ++x)
    for (int y = 1; x * y <= G; ++y)
      if (G % (x * y) == 0) {
        const Grid g{x, y, G / (x * y)};
        if (p.n < *std::max_element(g.begin(), g.end())) continue;  // some rank would hold no rows
        out.push_back(predict(p, g, m));
      }
  std::stable_sort(out.begin(), out.end(),
                   [](const Prediction& a, const Prediction& b) { return a.total_s() < b.total_s(); });
  return out;
}

LinkBytes plexus_link_bytes(const Problem& p, const Grid& g, int gpus_per_node) {
  check_convolutions(p);
  LinkBytes out;
  for (const Collective& c : plexus::epoch_collectives(p.n, p.dims, g, {0, 0, 0}, p.learn_features)) {
    const int sharing = axis_sharing(g, c.axis, gpus_per_node);
    (sharing == 0 ? out.intra : out.inter_weighted) += c.wire_bytes * std::max(1, sharing);
  }
  return out;
}

double seconds(const LinkBytes& b, const MachineProfile& m) {
  return b.intra / m.intra_bandwidth + b.inter_weighted / m.inter_bandwidth;
}

double group_bandwidth(const Members& group, int world_rank, const MachineProfile& m) {
  const int sharing = link_sharing(group, world_rank, m.gpus_per_node);
  return sharing == 0 ? m.intra_bandwidth : m.inter_bandwidth / sharing;
}

EpochWork epoch_work(const Problem& p, const std::string& algo) {
  EpochWork w;
  const double nnz = static_cast<double>(p.nnz), n = static_cast<double>(p.n);
  for (std::size_t l = 0; l + 1 < p.dims.size(); ++l) {
    const double fin = static_cast<double>(p.dims[l]), fout = static_cast<double>(p.dims[l + 1]);
    const bool dx = l > 0 || p.learn_features;
    const double heads = l < p.heads.size() ? static_cast<double>(p.heads[l]) : 0.0;
    if (heads > 0) {  // graph attention: Z = XW, then the edge tensors' work at Z's width
      const double fz = l < p.zdims.size() ? static_cast<double>(p.zdims[l]) : fout;
      w.spmm += 3 * nnz * fz;
      w.edges += 8 * nnz * heads;
      w.gemm += 2 * n * fin * fz * (dx ? 3 : 2) + 12 * n * fz * heads;
      continue;
    }
    const bool conv = p.kinds.empty() || p.kinds[l] == LayerKind::conv;
    if (conv) w.spmm += nnz * fin;
    if (conv && dx) w.spmm += nnz * fout;  // layer 0 without dX: dW_0 from the forward's T_0 (convolution.hpp)
    w.gemm += 2 * n * fin * fout * (dx ? 3 : 2) * (conv && p.self_term ? 2 : 1);  // the root term's X S_l
  }
  return w;
}

RankTime slowest_rank(const std::vector<RankLoad>& ranks, const EpochWork& work, const MachineProfile& m) {
  const auto P = static_cast<double>(ranks.size());
  RankTime worst;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const double edge_share = ranks[r].edge_share < 0 ? ranks[r].share : ranks[r].edge_share;
    const RankTime t{((work.spmm * ranks[r].share + work.edges * edge_share) / m.spmm_rate + work.gemm / m.gemm_rate) / P,
                     seconds(ranks[r].link, m), static_cast<int>(r)};
    if (r == 0 || t.total_s() > worst.total_s()) worst = t;
  }
  return worst;
}

namespace {

// Least squares through the origin, t ≈ X c, by Eigen's column-pivoting QR. A
// column the runs leave at zero determines nothing: its coefficient is 0 (QR's
// own rank test does not catch an all-zero matrix and would divide by its zero
// pivot); a dependent column gets 0 from the pivoting, as in a basic solution.
Eigen::VectorXd least_squares(const Eigen::MatrixXd& x, const Eigen::VectorXd& t) {
  std::vector<Eigen::Index> used;
  for (Eigen::Index k = 0; k < x.cols(); ++k)
    if (x.col(k).norm() > 0) used.push_back(k);
  Eigen::VectorXd c = Eigen::VectorXd::Zero(x.cols());
  if (used.empty()) return c;
  Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(x(Eigen::all, used));
  qr.setThreshold(1e-9);
  const Eigen::VectorXd u = qr.solve(t);
  for (std::size_t i = 0; i < used.size(); ++i) c(used[i]) = u(static_cast<Eigen::Index>(i));
  return c;
}

// One regressor: seconds = c x.
double fit_one(const std::vector<std::pair<double, double>>& xt) {
  if (xt.empty()) return 0;
  Eigen::MatrixXd x(xt.size(), 1);
  Eigen::VectorXd t(xt.size());
  for (std::size_t i = 0; i < xt.size(); ++i) x(i, 0) = xt[i].first, t(i) = xt[i].second;
  return least_squares(x, t)(0);
}

}  // namespace

MachineProfile calibrate(const std::vector<Observation>& runs, const MachineProfile& base, const std::string& name,
                         const std::string& source) {
  GCNLAB_CHECK(!runs.empty(), "--calibrate needs results files");
  MachineProfile m = base;
  m.name = name;
  m.source = source;

  // Eq. 4.4 on the plexus-3d runs: least squares over the three terms, scaled to unit size for conditioning.
  std::vector<const Observation*> plexus_runs;
  for (const auto& r : runs)
    if (strategy_info(r.algo).caps.perf_model) plexus_runs.push_back(&r);
  if (plexus_runs.size() >= 3) {
    const auto n = static_cast<Eigen::Index>(plexus_runs.size());
    Eigen::MatrixXd x(n, 3);
    Eigen::VectorXd t(n);
    for (Eigen::Index i = 0; i < n; ++i) {
      const auto terms = spmm_terms(plexus_runs[i]->problem, plexus_runs[i]->grid, true);
      for (int k = 0; k < 3; ++k) x(i, k) = terms[k];
      t(i) = plexus_runs[i]->spmm_s;
    }
    Eigen::Vector3d scale = x.cwiseAbs().colwise().maxCoeff().transpose();  // unit columns, for conditioning
    for (int k = 0; k < 3; ++k) scale(k) = scale(k) > 0 ? scale(k) : 1;
    const Eigen::VectorXd k = least_squares(x * scale.cwiseInverse().asDiagonal(), t);
    m.k_flops = k(0) / scale(0);
    m.k_fwd = k(1) / scale(1);
    m.k_bwd = k(2) / scale(2);
    m.per_gpu_flops = true;
  }

  // Kernel rates: seconds = work / rate.
  std::vector<std::pair<double, double>> spmm, gemm;
  for (const auto& r : runs) {
    if (r.ranks.empty()) continue;
    double busiest = 0;
    for (const RankLoad& x : r.ranks) busiest = std::max(busiest, x.share);
    const auto P = static_cast<double>(r.ranks.size());
    if (r.work.spmm > 0 && r.spmm_s > 0) spmm.emplace_back(r.work.spmm * busiest / P, r.spmm_s);
    if (r.work.gemm > 0 && r.gemm_s > 0) gemm.emplace_back(r.work.gemm / P, r.gemm_s);
  }
  if (const double c = fit_one(spmm); c > 0) m.spmm_rate = 1 / c;
  if (const double c = fit_one(gemm); c > 0) m.gemm_rate = 1 / c;

  // Bandwidths: comm = intra / β_intra + inter_weighted / β_inter; the inter-node
  // term only when some run crossed nodes (else it is not identified).
  std::vector<std::array<double, 3>> comm;  // intra, inter_weighted, seconds
  int nodes_crossed = 0, largest_node = 0;
  for (const auto& r : runs) {
    if (r.ranks.empty()) continue;
    const LinkBytes& link = r.ranks[static_cast<std::size_t>(r.comm_rank)].link;
    comm.push_back({link.intra, link.inter_weighted, r.comm_s});
    nodes_crossed += link.inter_weighted > 0;
    largest_node = std::max(largest_node, r.ranks_per_node);
  }
  double inv_intra = 0, inv_inter = 0;
  if (!comm.empty()) {
    const int terms = nodes_crossed > 0 ? 2 : 1;
    Eigen::MatrixXd x(comm.size(), terms);
    Eigen::VectorXd t(comm.size());
    for (std::size_t i = 0; i < comm.size(); ++i) {
      for (int k = 0; k < terms; ++k) x(i, k) = comm[i][k];
      t(i) = comm[i][2];
    }
    const Eigen::VectorXd inv = least_squares(x, t);
    inv_intra = inv(0);
    if (terms == 2) inv_inter = inv(1);
  }
  GCNLAB_CHECK(inv_intra > 0 || inv_inter > 0,
               "--calibrate: the runs' communication times do not determine a bandwidth (no bytes or no time)");
  if (inv_intra > 0) m.intra_bandwidth = 1 / inv_intra;
  if (inv_inter > 0) m.inter_bandwidth = 1 / inv_inter;
  if (nodes_crossed == 0) {  // the node size is not known either: base's stands
    m.inter_bandwidth = m.intra_bandwidth;
    m.source += "; inter-node bandwidth not identified (no run crossed nodes): set to the intra-node one";
  } else if (largest_node > 0) {
    m.gpus_per_node = largest_node;
  }
  return m;
}

double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  GCNLAB_ASSERT(a.size() == b.size());
  const auto ra = ranks_of(a), rb = ranks_of(b);
  const double n = static_cast<double>(a.size());
  const double ma = std::accumulate(ra.begin(), ra.end(), 0.0) / n, mb = std::accumulate(rb.begin(), rb.end(), 0.0) / n;
  double sab = 0, saa = 0, sbb = 0;
  for (std::size_t i = 0; i < ra.size(); ++i) {
    sab += (ra[i] - ma) * (rb[i] - mb);
    saa += (ra[i] - ma) * (ra[i] - ma);
    sbb += (rb[i] - mb) * (rb[i] - mb);
  }
  return saa > 0 && sbb > 0 ? sab / std::sqrt(saa * sbb) : 0.0;
}

}  // namespace gcnlab::planning
