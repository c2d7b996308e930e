#include "planning/perf_model.hpp"

#include "algorithms/registry.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
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
// rooflines (datasheet: 1555 GB/s HBM2, 19.5 TFLOP/s FP32), each kind at the
// bytes its unit must move at least — an SpMM's or SDDMM's nonzero·column
// gathers one 4-byte element, an edge pass reads and writes one edge-head
// value (8 B; an SpMM with per-edge values reads its value from cache per head's columns), an element-wise element reads two and writes one (12 B), a
// reduction reads one (4 B), the loss reads a logit and writes its gradient
// (8 B), Adam reads w, g, m, v and writes w, m, v (28 B) — and a GEMM's
// multiply-add at 2 flops. No per-call latency (the paper gives none).
MachineProfile perlmutter() {
  MachineProfile m;
  m.name = "perlmutter";
  m.source = "Plexus SC'25 Sec. 6.1 (4 x A100 per node, 4 x 25 GB/s NICs) and Sec. 4.1 (Eq. 4.4 fit of "
             "sqrt(NNZ*D) as printed, ms converted to s); intra-node NVLink 3 300 GB/s, HBM2 1555 GB/s (SpMM "
             "roofline 1555e9/4 nonzero-columns/s) and 19.5 TFLOP/s FP32 from the A100 datasheet";
  m.gpus_per_node = 4;
  m.device_memory = 40e9;  // A100 40 GB (Perlmutter's GPU nodes)
  m.intra_bandwidth = 300e9;
  m.inter_bandwidth = 4 * 25e9;
  m.k_flops = 7.8e-4 * 1e-3;
  m.k_fwd = 7.8e-10 * 1e-3;
  m.k_bwd = -2.6e-10 * 1e-3;
  m.per_gpu_flops = false;
  constexpr double hbm = 1555e9;
  m.kernels[static_cast<int>(Kernel::spmm)].rate = hbm / 4;
  m.kernels[static_cast<int>(Kernel::spmm_edges)].rate = hbm / 4;
  m.kernels[static_cast<int>(Kernel::sddmm)].rate = hbm / 4;
  m.kernels[static_cast<int>(Kernel::edge)].rate = hbm / 8;
  m.kernels[static_cast<int>(Kernel::gemm)].rate = 19.5e12 / 2;
  m.kernels[static_cast<int>(Kernel::elementwise)].rate = hbm / 12;
  m.kernels[static_cast<int>(Kernel::reduction)].rate = hbm / 4;
  m.kernels[static_cast<int>(Kernel::loss)].rate = hbm / 8;
  m.kernels[static_cast<int>(Kernel::optimizer)].rate = hbm / 28;
  return m;
}

// This development machine (2 cores, OpenMPI over shared memory, every rank on
// one node). Eq. 4.4's k: experiments/plexus_model.sh (`gcnlab plan
// --calibrate` on the 9 plexus-3d factorisations of 2 and 4 ranks, sbm 20000
// nodes, dims 64-128-128-8, 2026-11-22; Spearman 0.81 on the 10 of 8 ranks).
// Bandwidth, each collective's time per byte and each kernel kind's prices
// (one thread per rank): experiments/plan_strategies.sh (`gcnlab plan
// --calibrate`, NNLS, on the 144 runs of gcn, sage, gin and gat under 1d,
// 1.5d, 2d, sa-1d and plexus-3d on every grid of 2 ranks, sbm 20000 nodes
// three times and 40000 nodes once, 3 layers of 64, 2026-11-28; validated on
// the 516 runs at 2, 4 and 8 ranks of the 20000-node graph: docs/planning.md,
// experiments/plan-results/2026-11-28-local).
MachineProfile local() {
  MachineProfile m;
  m.name = "local";
  m.source = "the 2-core development machine: Eq. 4.4 k from experiments/plexus_model.sh (2026-11-22, sbm 20000 "
             "nodes), bandwidth, collectives' and kernel prices from experiments/plan_strategies.sh (2026-11-28, 144 "
             "runs of 4 models at 2 ranks on sbm 20000 and 40000 nodes), one thread per rank";
  m.gpus_per_node = 1024;  // one node: every group is intra-node
  m.intra_bandwidth = 2.809e+09;
  m.inter_bandwidth = 2.809e+09;
  m.k_flops = 5.01e-6;
  m.k_fwd = 4.996e-9;
  m.k_bwd = 0;  // the 2026-11-22 least-squares fit's -5.323e-9 clamped: NNLS keeps every k >= 0
  // seconds per byte inside the node: a reduce-scatter's bytes are also reduced, an all-to-all's only copied
  const std::array<std::pair<Category, double>, 7> per_byte = {
      {{Category::allgather, 3.413e-10},
       {Category::reduce_scatter, 8.44e-10},
       {Category::allreduce, 4.896e-10},
       {Category::alltoall, 1.795e-10},
       {Category::bcast_dense, 1.98e-10},
       {Category::bcast_sparse, 6.549e-10},
       {Category::p2p, 1.281e-10}}};
  for (const auto& [c, sec] : per_byte) m.intra_byte_s[static_cast<std::size_t>(c)] = sec;
  // (rate per second, latency per call in s, s per nonzero, s per row element)
  const std::array<std::pair<Kernel, KernelRate>, 9> kernels = {
      {{Kernel::spmm, {1.282e+10, 0, 1.904e-09, 4.473e-10}},
       {Kernel::spmm_edges, {5.327e+09, 0, 2.005e-10, 0}},
       {Kernel::sddmm, {1.197e+10, 0, 1.696e-08, 3.694e-11}},
       {Kernel::edge, {7.525e+08, 0, 0, 7.365e-10}},
       {Kernel::gemm, {2.949e+10, 0, 0, 0}},
       {Kernel::elementwise, {5.449e+09, 4.508e-05, 0, 0}},
       {Kernel::reduction, {8.799e+08, 0, 0, 0}},
       {Kernel::loss, {2.296e+08, 0.0001072, 0, 0}},
       {Kernel::optimizer, {2.09e+08, 1.052e-06, 0, 0}}}};
  for (const auto& [k, r] : kernels) m.kernels[static_cast<int>(k)] = r;
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
    m.device_memory = j.value("device_memory", 0.0);
    m.k_flops = j.at("k_flops").get<double>();
    m.k_fwd = j.at("k_fwd").get<double>();
    m.k_bwd = j.at("k_bwd").get<double>();
    m.per_gpu_flops = j.value("per_gpu_flops", true);
    const nlohmann::json kernels = j.value("kernels", nlohmann::json::object());
    for (const auto& [kind, price] : kernels.items()) {
      const auto k = kernel_from_string(kind);
      GCNLAB_CHECK(k.has_value(), "machine profile '{}': unknown kernel kind '{}'", name_or_file, kind);
      const KernelRate r{price.at("rate").get<double>(), price.value("latency_s", 0.0), price.value("nonzero_s", 0.0),
                         price.value("row_element_s", 0.0)};
      GCNLAB_CHECK(r.rate >= 0 && r.latency_s >= 0 && r.nonzero_s >= 0 && r.row_element_s >= 0,
                   "machine profile '{}': kernel '{}' has a negative price", name_or_file, kind);
      m.kernels[static_cast<int>(*k)] = r;
    }
    const nlohmann::json per_byte = j.value("intra_byte_s", nlohmann::json::object());
    for (const auto& [name, sec] : per_byte.items()) {
      const auto c = category_from_string(name);
      GCNLAB_CHECK(c.has_value() && is_communication(*c), "machine profile '{}': '{}' is not a communication category",
                   name_or_file, name);
      GCNLAB_CHECK(sec.get<double>() >= 0, "machine profile '{}': {} has a negative time per byte", name_or_file, name);
      m.intra_byte_s[static_cast<std::size_t>(*c)] = sec.get<double>();
    }
    GCNLAB_CHECK(m.gpus_per_node >= 1 && m.intra_bandwidth > 0 && m.inter_bandwidth > 0 && m.device_memory >= 0,
                 "machine profile '{}': gpus_per_node and bandwidths must be positive, device_memory >= 0",
                 name_or_file);
    return m;
  } catch (const nlohmann::json::exception& e) {
    fail("machine profile '{}' is not a valid profile ({})", name_or_file, e.what());
  }
}

std::string profile_json(const MachineProfile& m) {
  nlohmann::json kernels = nlohmann::json::object();
  for (int k = 0; k < kNumKernels; ++k)
    if (const KernelRate& r = m.kernels[k]; r.priced())
      kernels[std::string(to_string(static_cast<Kernel>(k)))] = {
          {"rate", r.rate}, {"latency_s", r.latency_s}, {"nonzero_s", r.nonzero_s}, {"row_element_s", r.row_element_s}};
  nlohmann::json per_byte = nlohmann::json::object();
  for (int c = 0; c < kNumCategories; ++c)
    if (m.intra_byte_s[static_cast<std::size_t>(c)] > 0)
      per_byte[std::string(to_string(static_cast<Category>(c)))] = m.intra_byte_s[static_cast<std::size_t>(c)];
  const nlohmann::json j = {{"name", m.name},
                            {"source", m.source},
                            {"gpus_per_node", m.gpus_per_node},
                            {"intra_bandwidth", m.intra_bandwidth},
                            {"inter_bandwidth", m.inter_bandwidth},
                            {"intra_byte_s", per_byte},
                            {"device_memory", m.device_memory},
                            {"k_flops", m.k_flops},
                            {"k_fwd", m.k_fwd},
                            {"k_bwd", m.k_bwd},
                            {"per_gpu_flops", m.per_gpu_flops},
                            {"kernels", kernels}};
  return j.dump(1);
}

Problem problem_of(std::int64_t n, std::int64_t nnz, const Architecture& a, bool learn_features) {
  return {n, nnz, a.dims, learn_features, a.kinds, a.self_term, a.attends(), a.model, a.heads, a.weight_cols()};
}

bool prices_convolutions(const Problem& p) {
  return std::all_of(p.kinds.begin(), p.kinds.end(), [](LayerKind k) { return k == LayerKind::conv; }) &&
         !p.self_term && !p.attention;
}

namespace {

// Plexus's model (Sec. 4) is of its GCN: every layer a graph convolution.
void check_convolutions(const Problem& p) {
  const bool convolutions =
      std::all_of(p.kinds.begin(), p.kinds.end(), [](LayerKind k) { return k == LayerKind::conv; });
  GCNLAB_CHECK(prices_convolutions(p),
               "Plexus's performance model (Sec. 4) prices graph convolutions only and --model {} has {}: "
               "plan and --grid auto price it by its traced epoch (planning/plan.hpp)",
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
    (sharing == 0 ? out.intra : out.inter_weighted)[static_cast<std::size_t>(c.category)] +=
        c.wire_bytes * std::max(1, sharing);
  }
  return out;
}

double MachineProfile::intra_seconds_per_byte(Category c) const {
  const double s = intra_byte_s[static_cast<std::size_t>(c)];
  return s > 0 ? s : 1 / intra_bandwidth;
}

double seconds(const LinkBytes& b, const MachineProfile& m) {
  double s = b.inter_weighted_total() / m.inter_bandwidth;
  for (int c = 0; c < kNumCategories; ++c)
    if (b.intra[static_cast<std::size_t>(c)] > 0)
      s += b.intra[static_cast<std::size_t>(c)] * m.intra_seconds_per_byte(static_cast<Category>(c));
  return s;
}

double group_bandwidth(const Members& group, int world_rank, const MachineProfile& m) {
  const int sharing = link_sharing(group, world_rank, m.gpus_per_node);
  return sharing == 0 ? m.intra_bandwidth : m.inter_bandwidth / sharing;
}

KernelWork by_kind(const CategoryWork& w) {
  KernelWork out{};
  for (const KernelWork& c : w) out += c;
  return out;
}

double compute_seconds(const KernelWork& w, const MachineProfile& m) {
  double s = 0;
  for (int k = 0; k < kNumKernels; ++k) {
    const auto kind = static_cast<Kernel>(k);
    if (!computes(kind) || w[k].calls == 0) continue;
    const KernelRate& r = m.rate(kind);
    GCNLAB_CHECK(r.priced() || w[k].amount == 0,
                 "machine profile '{}' has no rate for {} kernels, which this model's epoch runs: calibrate one with "
                 "`gcnlab plan --calibrate` on runs of a model that uses them",
                 m.name, to_string(kind));
    s += (r.rate > 0 ? w[k].amount / r.rate : 0.0) + static_cast<double>(w[k].calls) * r.latency_s +
         w[k].nonzeros * r.nonzero_s + w[k].row_elements * r.row_element_s;
  }
  return s;
}

RankTime slowest_rank(const std::vector<RankLoad>& ranks, const MachineProfile& m, double sharing) {
  RankTime worst;
  double compute_sum = 0, comm_sum = 0;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const RankTime t{compute_seconds(ranks[r].work, m), seconds(ranks[r].link, m), static_cast<int>(r)};
    if (r == 0 || t.total_s() > worst.total_s()) worst = t;
    compute_sum += t.compute_s;
    comm_sum += t.comm_s;
  }
  const double share = sharing / static_cast<double>(std::max<std::size_t>(ranks.size(), 1));
  if (sharing > 1 && share * (compute_sum + comm_sum) > worst.total_s())
    worst.compute_s = share * compute_sum, worst.comm_s = share * comm_sum;
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

Eigen::VectorXd nnls(const Eigen::MatrixXd& a, const Eigen::VectorXd& b) {
  const Eigen::Index n = a.cols();
  Eigen::VectorXd x = Eigen::VectorXd::Zero(n);
  std::vector<bool> passive(static_cast<std::size_t>(n), false);
  const double tol = 1e-12 * std::max(1.0, a.cwiseAbs().maxCoeff() * b.cwiseAbs().maxCoeff()) * static_cast<double>(n);
  auto solve_passive = [&] {  // least squares on the passive columns, zero elsewhere
    std::vector<Eigen::Index> cols;
    for (Eigen::Index j = 0; j < n; ++j)
      if (passive[static_cast<std::size_t>(j)]) cols.push_back(j);
    Eigen::MatrixXd sub = a(Eigen::all, cols);
    const Eigen::VectorXd u = least_squares(sub, b);
    Eigen::VectorXd z = Eigen::VectorXd::Zero(n);
    for (std::size_t i = 0; i < cols.size(); ++i) z(cols[i]) = u(static_cast<Eigen::Index>(i));
    return z;
  };
  for (Eigen::Index outer = 0; outer < 3 * n + 3; ++outer) {
    const Eigen::VectorXd w = a.transpose() * (b - a * x);  // the gradient's descent direction
    Eigen::Index best = -1;
    for (Eigen::Index j = 0; j < n; ++j)
      if (!passive[static_cast<std::size_t>(j)] && w(j) > tol && (best < 0 || w(j) > w(best))) best = j;
    if (best < 0) break;  // Kuhn-Tucker conditions hold
    passive[static_cast<std::size_t>(best)] = true;
    for (Eigen::Index inner = 0; inner <= n; ++inner) {
      const Eigen::VectorXd z = solve_passive();
      double alpha = 1;  // the longest step from x towards z that stays feasible
      for (Eigen::Index j = 0; j < n; ++j)
        if (passive[static_cast<std::size_t>(j)] && z(j) <= 0) alpha = std::min(alpha, x(j) / (x(j) - z(j)));
      x += alpha * (z - x);
      if (alpha == 1) break;
      for (Eigen::Index j = 0; j < n; ++j)
        if (passive[static_cast<std::size_t>(j)] && x(j) <= 0) passive[static_cast<std::size_t>(j)] = false, x(j) = 0;
    }
  }
  return x;
}

}  // namespace

std::vector<double> nnls(const std::vector<std::vector<double>>& rows, const std::vector<double>& b) {
  GCNLAB_ASSERT(rows.size() == b.size());
  const auto m = static_cast<Eigen::Index>(rows.size()), n = static_cast<Eigen::Index>(rows.empty() ? 0 : rows[0].size());
  Eigen::MatrixXd a(m, n);
  for (Eigen::Index i = 0; i < m; ++i)
    for (Eigen::Index j = 0; j < n; ++j) a(i, j) = rows[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)];
  const Eigen::VectorXd x = nnls(a, Eigen::Map<const Eigen::VectorXd>(b.data(), m));
  return {x.data(), x.data() + x.size()};
}

namespace {

// The kernel kinds a rate is fitted for: every computing kind.
std::vector<Kernel> computing_kinds() {
  std::vector<Kernel> out;
  for (int k = 0; k < kNumKernels; ++k)
    if (computes(static_cast<Kernel>(k))) out.push_back(static_cast<Kernel>(k));
  return out;
}

bool compute_category(int c) {
  const auto cat = static_cast<Category>(c);
  return !is_communication(cat) && cat != Category::other;
}

// Rates, latencies and times per nonzero and per row element per kind by NNLS
// over (run, rank, compute category) rows:
//   t = Σ_k (amount_k / rate_k + calls_k · latency_k + nonzeros_k · nonzero_k + row_elements_k · row_element_k).
void fit_kernels(const std::vector<Observation>& runs, MachineProfile& m, std::vector<CategoryFit>* fits) {
  const std::vector<Kernel> kinds = computing_kinds();
  const auto K = static_cast<Eigen::Index>(kinds.size());
  constexpr Eigen::Index kTerms = 4;  // amount, calls, nonzeros, row elements
  std::vector<std::pair<Eigen::VectorXd, double>> rows;  // regressors (each term's K columns), seconds
  std::vector<int> row_category;
  for (const Observation& r : runs)
    for (std::size_t p = 0; p < r.work.size(); ++p)
      for (int c = 0; c < kNumCategories; ++c) {
        if (!compute_category(c)) continue;
        Eigen::VectorXd x = Eigen::VectorXd::Zero(kTerms * K);
        for (Eigen::Index i = 0; i < K; ++i) {
          const Work& w = r.work[p][c][static_cast<int>(kinds[static_cast<std::size_t>(i)])];
          x(i) = w.amount;
          x(K + i) = static_cast<double>(w.calls);
          x(2 * K + i) = w.nonzeros;
          x(3 * K + i) = w.row_elements;
        }
        if (x.sum() == 0) continue;  // no kernel ran in it
        rows.emplace_back(std::move(x), r.times[p][c]);
        row_category.push_back(c);
      }
  if (rows.empty()) return;
  Eigen::MatrixXd a(static_cast<Eigen::Index>(rows.size()), kTerms * K);
  Eigen::VectorXd t(a.rows());
  for (Eigen::Index i = 0; i < a.rows(); ++i) {
    a.row(i) = rows[static_cast<std::size_t>(i)].first;
    t(i) = rows[static_cast<std::size_t>(i)].second;
  }
  // Unit columns for conditioning; a column no run exercised stays out (its kind keeps the base price).
  Eigen::VectorXd scale = a.cwiseAbs().colwise().maxCoeff().transpose();
  for (Eigen::Index j = 0; j < scale.size(); ++j) scale(j) = scale(j) > 0 ? scale(j) : 1;
  const Eigen::VectorXd c = nnls(a * scale.cwiseInverse().asDiagonal(), t).cwiseQuotient(scale);
  for (Eigen::Index i = 0; i < K; ++i) {
    if (a.col(i).sum() == 0 && a.col(K + i).sum() == 0) continue;
    KernelRate& kr = m.kernels[static_cast<int>(kinds[static_cast<std::size_t>(i)])];
    kr.rate = c(i) > 0 ? 1 / c(i) : 0;  // 0 with a latency or a nonzero time: the width costs nothing measurable
    kr.latency_s = c(K + i);
    kr.nonzero_s = c(2 * K + i);
    kr.row_element_s = c(3 * K + i);
  }
  if (!fits) return;
  const Eigen::VectorXd predicted = a * c;
  for (int cat = 0; cat < kNumCategories; ++cat) {
    CategoryFit f{static_cast<Category>(cat)};
    for (std::size_t i = 0; i < rows.size(); ++i)
      if (row_category[i] == cat) f.add(t(static_cast<Eigen::Index>(i)), predicted(static_cast<Eigen::Index>(i)));
    if (f.rows > 0) fits->push_back(f);
  }
}

// Each communication category's seconds per byte inside a node: t_c = s_c · bytes_c by least squares through
// the origin (s_c = Σ t·b / Σ b²; non-negative as the times are) over the runs whose busiest rank moved every
// byte inside its node, on that rank (it waits least: its times are its transfers).
void fit_collectives(const std::vector<Observation>& runs, MachineProfile& m, std::vector<CategoryFit>* fits) {
  for (int c = 0; c < kNumCategories; ++c) {
    if (!is_communication(static_cast<Category>(c))) continue;
    double tb = 0, bb = 0;
    std::vector<std::pair<double, double>> rows;  // bytes, seconds
    for (const Observation& r : runs) {
      if (r.ranks.empty() || r.times.empty()) continue;
      const auto at = static_cast<std::size_t>(r.comm_rank);
      const LinkBytes& link = r.ranks[at].link;
      const double b = link.intra[static_cast<std::size_t>(c)], t = r.times[at][static_cast<std::size_t>(c)];
      if (link.inter_weighted_total() > 0 || b == 0) continue;
      tb += t * b, bb += b * b;
      rows.emplace_back(b, t);
    }
    if (bb == 0 || tb <= 0) continue;  // not moved, or not timed: base's price stands
    const double s = tb / bb;
    m.intra_byte_s[static_cast<std::size_t>(c)] = s;
    if (!fits) continue;
    CategoryFit f{static_cast<Category>(c)};
    for (const auto& [b, t] : rows) f.add(t, s * b);
    fits->push_back(f);
  }
}

}  // namespace

MachineProfile calibrate(const std::vector<Observation>& runs, const MachineProfile& base, const std::string& name,
                         const std::string& source, std::vector<CategoryFit>* fits) {
  GCNLAB_CHECK(!runs.empty(), "--calibrate needs results files");
  MachineProfile m = base;
  m.name = name;
  m.source = source;

  // Eq. 4.4 on the plexus-3d runs: non-negative least squares over the three terms, scaled to unit size for
  // conditioning (the paper's own fit has a negative k_bwd; a negative time per unit of work is not a rate).
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
    const Eigen::VectorXd k = nnls(x * scale.cwiseInverse().asDiagonal(), t);
    m.k_flops = k(0) / scale(0);
    m.k_fwd = k(1) / scale(1);
    m.k_bwd = k(2) / scale(2);
    m.per_gpu_flops = true;
  }

  fit_kernels(runs, m, fits);

  // Bandwidths: comm = intra / β_intra + inter_weighted / β_inter; the inter-node
  // term only when some run crossed nodes (else it is not identified).
  std::vector<std::array<double, 3>> comm;  // intra, inter_weighted, seconds
  int nodes_crossed = 0, largest_node = 0;
  for (const auto& r : runs) {
    if (r.ranks.empty()) continue;
    const LinkBytes& link = r.ranks[static_cast<std::size_t>(r.comm_rank)].link;
    if (link.intra_total() + link.inter_weighted_total() == 0) continue;  // one rank: nothing moved
    comm.push_back({link.intra_total(), link.inter_weighted_total(), r.comm_s});
    nodes_crossed += link.inter_weighted_total() > 0;
    largest_node = std::max(largest_node, r.ranks_per_node);
  }
  if (comm.empty()) {
    m.source += "; bandwidths not identified (no run communicated): the base profile's";
    return m;
  }
  double inv_intra = 0, inv_inter = 0;
  {
    const int terms = nodes_crossed > 0 ? 2 : 1;
    Eigen::MatrixXd x(comm.size(), terms);
    Eigen::VectorXd t(comm.size());
    for (std::size_t i = 0; i < comm.size(); ++i) {
      for (int k = 0; k < terms; ++k) x(i, k) = comm[i][k];
      t(i) = comm[i][2];
    }
    const Eigen::VectorXd inv = nnls(x, t);
    inv_intra = inv(0);
    if (terms == 2) inv_inter = inv(1);
  }
  GCNLAB_CHECK(inv_intra > 0 || inv_inter > 0,
               "--calibrate: the runs' communication times do not determine a bandwidth (no bytes or no time)");
  if (inv_intra > 0) m.intra_bandwidth = 1 / inv_intra;
  if (inv_inter > 0) m.inter_bandwidth = 1 / inv_inter;
  fit_collectives(runs, m, fits);
  if (nodes_crossed == 0) {  // the node size is not known either: base's stands
    m.inter_bandwidth = m.intra_bandwidth;
    m.source += "; inter-node bandwidth not identified (no run crossed nodes): set to the intra-node one";
  } else if (largest_node > 0) {
    m.gpus_per_node = largest_node;
  }
  return m;
}

std::vector<RankingCheck> ranking_checks(const std::vector<Observation>& runs, const std::vector<double>& predicted) {
  GCNLAB_ASSERT(runs.size() == predicted.size());
  // Candidates in the order of their first run; repetitions of a configuration (model, ranks, strategy, grid)
  // are one candidate, measured and predicted as their means.
  struct Candidate {
    std::size_t first = 0;
    double measured = 0, predicted = 0, squares = 0;  // sums, then the means and the sample deviation
    int repetitions = 0;
  };
  using Configuration = std::pair<std::string, std::vector<int>>;  // strategy, grid
  std::map<std::pair<std::string, int>, std::vector<Candidate>> groups;  // (model, ranks) -> candidates
  std::map<std::pair<std::pair<std::string, int>, Configuration>, std::size_t> index;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const std::pair<std::string, int> group{runs[i].problem.model, static_cast<int>(runs[i].ranks.size())};
    auto& candidates = groups[group];
    const auto [at, added] = index.try_emplace({group, {runs[i].algo, runs[i].run_grid}}, candidates.size());
    if (added) candidates.push_back({i});
    Candidate& c = candidates[at->second];
    c.measured += runs[i].epoch_s, c.predicted += predicted[i], c.squares += runs[i].epoch_s * runs[i].epoch_s;
    ++c.repetitions;
  }
  std::vector<RankingCheck> out;
  for (auto& [key, candidates] : groups) {
    if (candidates.size() < 2) continue;
    for (Candidate& c : candidates) {
      const double n = c.repetitions;
      const double variance = n > 1 ? std::max(0.0, (c.squares - c.measured * c.measured / n) / (n - 1)) : 0.0;
      c.measured /= n, c.predicted /= n, c.squares = std::sqrt(variance);
    }
    const auto by = [](double Candidate::*field) {
      return [field](const Candidate& a, const Candidate& b) { return a.*field < b.*field; };
    };
    const Candidate& fastest = *std::min_element(candidates.begin(), candidates.end(), by(&Candidate::measured));
    const Candidate& pick = *std::min_element(candidates.begin(), candidates.end(), by(&Candidate::predicted));
    const auto place = [&](const Candidate& of) {
      int p = 1;
      for (const Candidate& c : candidates) p += c.predicted < of.predicted;
      return p;
    };
    RankingCheck check{key.first, key.second, runs[fastest.first].algo, runs[fastest.first].run_grid, place(fastest),
                       static_cast<int>(candidates.size()), pick.measured / fastest.measured - 1};
    check.tied_place = check.predicted_place;
    for (const Candidate& c : candidates)
      if (&c != &fastest && c.measured - fastest.measured <= c.squares + fastest.squares)
        ++check.tied, check.tied_place = std::min(check.tied_place, place(c));
    out.push_back(check);
  }
  return out;
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
