// gcnlab plan (planning/perf_model.hpp, planning/plan.hpp): Plexus's model of
// plexus-3d grids (Eq. 4.4-4.6, the paper's Perlmutter fit used as printed),
// the topology of any group (Eq. 4.6 generalised, checked against Eq. 4.6 on
// every Plexus axis), the strategy comparison on simulate's volumes, and the
// calibration of a profile from runs.

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <set>

#include "common/comm/process_grid.hpp"
#include "common/comm/uneven.hpp"
#include "planning/perf_model.hpp"
#include "planning/plan.hpp"
#include "planning/simulate.hpp"
#include "models/registry.hpp"
#include "tests/support/harness.hpp"

using namespace gcnlab;
using namespace gcnlab::test;
using planning::Grid;

TEST_CASE("plan: every factorisation, best first; all ranks on Y for a wide layer ranks below the best",
          "[plexus-3d][plan][unit]") {
  // ogbn-products-like shape (Plexus Table 4) with a wide hidden layer
  const planning::Problem p{2449029, 126167053, {100, 512, 512, 47}, false};
  for (const std::string machine : {"local", "perlmutter"}) {
    INFO("machine " << machine);
    const auto ranked = planning::rank_grids(p, 64, planning::machine_profile(machine));
    REQUIRE(ranked.size() == 28);  // ordered factorisations of 2^6 into 3 factors: C(8, 2)
    for (std::size_t i = 1; i < ranked.size(); ++i) CHECK(ranked[i - 1].total_s() <= ranked[i].total_s());
    std::size_t all_on_y = 0;
    for (std::size_t i = 0; i < ranked.size(); ++i)
      if (ranked[i].grid == Grid{1, 64, 1}) all_on_y = i;
    CHECK(all_on_y > ranked.size() / 2);
    CHECK(ranked.front().grid != Grid{1, 64, 1});
  }
  // --grid auto: a valid grid for every rank count 1..16
  const planning::Problem small{1001, 9000, {19, 13, 13, 5}, false};
  for (int G = 1; G <= 16; ++G) {
    const auto ranked = planning::rank_grids(small, G, planning::machine_profile("local"));
    REQUIRE_FALSE(ranked.empty());
    const auto g = ranked.front().grid;
    CHECK(g[0] * g[1] * g[2] == G);
  }
  CHECK(planning::factorisations(64, 3).size() == 28);
  CHECK(planning::factorisations(12, 2) ==
        std::vector<std::vector<int>>{{1, 12}, {2, 6}, {3, 4}, {4, 3}, {6, 2}, {12, 1}});
}

TEST_CASE("plan: Plexus's model prices graph convolutions only; linear layers add GEMMs, no SpMM; root terms GEMMs",
          "[plan][unit]") {
  ModelConfig gcn, scalegnn;
  gcn.layers = 4, gcn.hidden = 13;
  scalegnn.name = "scalegnn", scalegnn.layers = 2, scalegnn.hidden = 13;  // linear, 2 convolutions, linear
  const planning::Problem conv = planning::problem_of(1001, 9000, architecture(gcn, 19, 5), false);
  const planning::Problem mixed = planning::problem_of(1001, 9000, architecture(scalegnn, 19, 5), false);
  REQUIRE(conv.dims == mixed.dims);  // the same widths: only the layer kinds differ
  CHECK_FALSE(planning::rank_grids(conv, 8, planning::machine_profile("local")).empty());
  CHECK_THAT(error_message([&] { planning::rank_grids(mixed, 8, planning::machine_profile("local")); }),
             Catch::Contains("prices graph convolutions only and --model scalegnn has linear layers"));

  // GraphSAGE's root term and GAT's attention: Plexus's model refuses them too (plan prices them by their trace)
  ModelConfig sage = gcn;
  sage.name = "sage";
  const planning::Problem rooted = planning::problem_of(1001, 9000, architecture(sage, 19, 5), false);
  CHECK_THAT(error_message([&] { planning::rank_grids(rooted, 8, planning::machine_profile("local")); }),
             Catch::Contains("prices graph convolutions only and --model sage has a root term in each layer"));
  CHECK_FALSE(planning::prices_convolutions(rooted));
  ModelConfig gat;
  gat.name = "gat", gat.layers = 2, gat.hidden = 13, gat.heads = 3;
  const planning::Problem attending = planning::problem_of(1001, 9000, architecture(gat, 19, 5), false);
  CHECK_THAT(error_message([&] { planning::rank_grids(attending, 8, planning::machine_profile("local")); }),
             Catch::Contains("--model gat has graph attention"));
  CHECK(planning::prices_convolutions(conv));
}

TEST_CASE("plan: the traced work of GCN's epoch is CAGNET's count; GraphSAGE's root term doubles the GEMMs",
          "[plan][unit]") {
  if (world_rank() != 0) return;
  // One rank: each layer's SpMM forward and backward at its narrower width (serial's product order), and three
  // n·f_l·f_{l+1} GEMMs (Z = TW, dW, dX) but two in layer 0 (no dX: CAGNET Sec. III, Eq. 1-3).
  const Dataset data = load_dataset("sbm:nodes=1001,classes=5,avg-degree=8,features=19,seed=3");
  const double n = 1001, nnz = static_cast<double>(data.nnz() + data.nodes());
  ModelConfig gcn;
  gcn.layers = 4, gcn.hidden = 13;  // 19-13-13-13-5
  StrategyOptions serial;
  serial.algo = "serial";
  auto traced = [&](const ModelConfig& m) {
    serial.model = model_info(m.name).demands;
    return planning::by_kind(simulate(data, serial, m, 1).ranks[0].work);
  };
  const KernelWork w = traced(gcn);
  auto amount = [](const KernelWork& x, Kernel k) { return x[static_cast<int>(k)].amount; };
  CHECK(amount(w, Kernel::spmm) == nnz * 2 * (13 + 13 + 13 + 5));
  CHECK(amount(w, Kernel::gemm) == n * (2 * 19 * 13 + 3 * 13 * 13 + 3 * 13 * 13 + 3 * 13 * 5));
  CHECK(amount(w, Kernel::optimizer) == 19 * 13 + 13 * 13 + 13 * 13 + 13 * 5);  // every weight once (Adam)
  CHECK(amount(w, Kernel::loss) == n * 5);
  CHECK(w[static_cast<int>(Kernel::sddmm)].calls == 0);
  ModelConfig sage = gcn;
  sage.name = "sage";
  const KernelWork r = traced(sage);
  CHECK(amount(r, Kernel::spmm) == amount(w, Kernel::spmm));
  // the root term X S_l and its gradients; the bias is added in the ReLU's pass (element-wise, not a GEMM)
  CHECK(amount(r, Kernel::gemm) == 2 * amount(w, Kernel::gemm));
}

TEST_CASE("plan: the perlmutter profile is Eq. 4.4 as printed, with the paper's coefficients, at every G",
          "[plan][unit]") {
  // One layer (no backward SpMM): comp = 1e-3 s/ms · (7.8e-4 √(NNZ·D) + 7.8e-10 √(NNZ·D) · (N/Gx)(Gy/D)), Sec. 4.1.
  const double N = 2449029, NNZ = 126167053, D = 100;
  const planning::Problem p{2449029, 126167053, {100, 47}, false};
  const auto m = planning::machine_profile("perlmutter");
  for (const Grid g : {Grid{4, 4, 1}, Grid{2, 8, 4}, Grid{16, 4, 4}, Grid{1, 1, 256}}) {
    INFO("grid " << g[0] << "x" << g[1] << "x" << g[2]);
    const double root = std::sqrt(NNZ * D);
    const double printed = 1e-3 * (7.8e-4 * root + 7.8e-10 * root * (N / g[0]) * (g[1] / D));
    CHECK(planning::predict(p, g, m).spmm_s == Approx(printed).epsilon(1e-12));
  }
}

TEST_CASE("plan: a group's link is Plexus Eq. 4.6 on every axis of every grid", "[plan][unit]") {
  // Eq. 4.6 written from the paper: ranks placed Y innermost, then X, then Z;
  // an axis group is intra-node iff its span (stride x size) fits a node, else
  // its bandwidth is inter / min(G_node, stride).
  for (const int gpn : {1, 2, 4, 8, 64})
    for (const auto& f : planning::factorisations(64, 3)) {
      const int X = f[0], Y = f[1], Z = f[2];
      auto world_rank = [&](int x, int y, int z) { return z * X * Y + x * Y + y; };
      for (int axis = 0; axis < 3; ++axis) {
        const int stride = axis == 1 ? 1 : axis == 0 ? Y : X * Y, size = f[static_cast<std::size_t>(axis)];
        if (size == 1) continue;  // no traffic (Eq. 4.6 would call a lone rank of a full node inter-node)
        const int expected = stride * size <= gpn ? 0 : std::min(gpn, stride);
        for (int z = 0; z < Z; ++z)
          for (int x = 0; x < X; ++x)
            for (int y = 0; y < Y; ++y) {
              std::vector<int> members;  // the axis group through (x, y, z)
              for (int i = 0; i < size; ++i)
                members.push_back(axis == 0 ? world_rank(i, y, z) : axis == 1 ? world_rank(x, i, z) : world_rank(x, y, i));
              const Members m = Members::of(members);
              CHECK(m.list.empty());  // a progression
              INFO("gpn " << gpn << " grid " << X << "x" << Y << "x" << Z << " axis " << axis);
              REQUIRE(link_sharing(m, world_rank(x, y, z), gpn) == expected);
            }
      }
    }
  CHECK(Members::of({3, 1, 7}).list == std::vector<int>{3, 1, 7});
  CHECK(Members::of({5}) == Members{5, 1, 1, {}});
}

TEST_CASE("plan: groups and links of the real run equal the simulation's", "[plan][simulate]") {
  const Dataset data = load_dataset("sbm:nodes=701,classes=5,avg-degree=6,features=13,seed=8");
  const int p = world_size();
  for (const std::string algo : {"1.5d", "2d", "split-3d", "plexus-3d", "sa-1.5d"})
    for (const auto& grid : grids_for(algo, p)) {
      RunSpec spec;
      spec.algo = algo;
      spec.grid = grid;
      spec.model.hidden = 10;
      spec.train.epochs = 1;
      spec.train.ranks_per_node = 2;
      spec.partitioner = algo == "sa-1.5d" ? "metis" : "block";
      const RunResult real = run(MPI_COMM_WORLD, spec, data);
      if (world_rank() != 0) continue;
      const Simulation sim = simulate(data, strategy_options(spec), spec.model, p, spec.partitioner);
      for (int r = 0; r < p; ++r) {
        INFO(algo << " grid " << format_grid(grid) << " rank " << r);
        const LinkBytes s = link_bytes(sim.ranks[static_cast<std::size_t>(r)].model, r, 2);
        const LinkBytes& m = real.ranks[static_cast<std::size_t>(r)].model_link;
        for (int c = 0; c < kNumCategories; ++c) {
          CHECK(s.intra[c] == Approx(m.intra[c]).epsilon(1e-12).margin(1e-9));
          CHECK(s.inter_weighted[c] == Approx(m.inter_weighted[c]).epsilon(1e-12).margin(1e-9));
        }
        double total = 0;
        for (int c = 0; c < kNumCategories; ++c) total += real.ranks[static_cast<std::size_t>(r)].model[static_cast<std::size_t>(c)];
        // every byte is on one link; with 2 ranks per node some cross nodes from 4 ranks on
        CHECK(s.intra_total() + s.inter_weighted_total() >= total * (1 - 1e-12));
      }
    }
}

namespace {

// One node of bandwidth 1e9 B/s; every kernel kind at 1e9 units/s, GEMMs at 1e10, no latency.
planning::MachineProfile one_node() {
  planning::MachineProfile m;
  m.name = "one", m.source = "test";
  m.gpus_per_node = 1024;
  m.intra_bandwidth = m.inter_bandwidth = 1e9;
  for (int k = 0; k < kNumKernels; ++k) m.kernels[k].rate = k == static_cast<int>(Kernel::gemm) ? 1e10 : 1e9;
  return m;
}

}  // namespace

TEST_CASE("plan: the slowest rank bounds the epoch, or the cores when ranks time-share them", "[plan][unit]") {
  const planning::MachineProfile one = one_node();
  std::vector<planning::RankLoad> ranks;
  for (const double seconds : {1.0, 1.0, 1.0, 3.0}) {
    planning::RankLoad r;
    r.work[static_cast<int>(Kernel::spmm)] = {seconds * 1e9, 1};
    ranks.push_back(r);
  }
  ranks[0].link.intra[static_cast<int>(Category::allgather)] = 0.5e9;  // 0.5 s of communication on rank 0
  CHECK(planning::slowest_rank(ranks, one).total_s() == Approx(3.0));
  CHECK(planning::slowest_rank(ranks, one).rank == 3);
  // the cores do every rank's compute and copies: σ (6 + 0.5) / 4
  CHECK(planning::slowest_rank(ranks, one, 1.5).total_s() == Approx(3.0));  // 1.5 x 6.5 / 4 = 2.44 < 3
  CHECK(planning::slowest_rank(ranks, one, 2).total_s() == Approx(3.25));   // 2 x 6.5 / 4
  CHECK(planning::slowest_rank(ranks, one, 4).compute_s == Approx(6.0));
  CHECK(planning::slowest_rank(ranks, one, 4).comm_s == Approx(0.5));
}

TEST_CASE("plan: strategies compared on simulate's volumes and traced work, priced per group", "[plan][unit]") {
  if (world_rank() != 0) return;
  const Dataset data = load_dataset("sbm:nodes=1200,classes=6,avg-degree=8,features=24,seed=5");
  ModelConfig model;
  model.hidden = 16;
  StrategyOptions base;
  base.options["gemm-order"] = "direct";
  const planning::MachineProfile one = one_node();
  std::vector<std::string> refused;
  const auto ranked =
      planning::compare_strategies(data, {"1d", "1.5d", "2d", "split-3d", "plexus-3d"}, base, model, 8, one, &refused);
  // every grid of each strategy, accepted or refused: 1 + 4 + 4 + 10 + 10
  CHECK(ranked.size() + refused.size() == 29);
  for (std::size_t i = 1; i < ranked.size(); ++i) CHECK(ranked[i - 1].total_s() <= ranked[i].total_s());
  for (const auto& q : ranked) {
    INFO(q.algo << " " << format_grid(q.grid));
    // the volumes are simulate's, the times the profile's
    StrategyOptions o = base;
    o.algo = q.algo;
    o.grid = q.grid;
    const Simulation sim = simulate(data, o, model, 8);
    double wire = 0;
    for (const auto& r : sim.ranks) {
      double mine = 0;
      for (int c = 0; c < kNumCategories; ++c) mine += r.model[c];
      wire = std::max(wire, mine);
    }
    CHECK(q.wire_bytes_max == Approx(wire).epsilon(1e-12));
    CHECK(q.inter_bytes_max == 0);  // one node
    const auto& slow = sim.ranks[static_cast<std::size_t>(q.slowest_rank)];
    double bytes = 0, seconds = 0;
    for (int c = 0; c < kNumCategories; ++c) bytes += slow.model[c];
    for (const KernelWork& cat : slow.work)
      for (int k = 0; k < kNumKernels; ++k)
        if (computes(static_cast<Kernel>(k))) seconds += cat[k].amount / one.kernels[k].rate;
    CHECK(q.comm_s == Approx(bytes / 1e9).epsilon(1e-12));
    CHECK(q.compute_s == Approx(seconds).epsilon(1e-12));
    // the slowest rank is the one with the most compute + communication
    for (const auto& r : sim.ranks) {
      double mine = 0;
      for (int c = 0; c < kNumCategories; ++c) mine += r.model[c] / 1e9;
      CHECK(planning::compute_seconds(planning::by_kind(r.work), one) + mine <= q.total_s() * (1 + 1e-12));
    }
  }
  // A device that holds only some grids' largest rank: plan refuses the others, naming that rank's need.
  {
    std::vector<double> needs;
    for (const auto& q : ranked) needs.push_back(q.memory_max);
    std::sort(needs.begin(), needs.end());
    REQUIRE(needs.front() < needs.back());
    planning::MachineProfile small = one;
    small.device_memory = needs[needs.size() / 2];
    std::vector<std::string> too_big;
    const auto fits =
        planning::compare_strategies(data, {"1d", "1.5d", "2d", "split-3d", "plexus-3d"}, base, model, 8, small, &too_big);
    const auto over = static_cast<std::size_t>(
        std::count_if(needs.begin(), needs.end(), [&](double x) { return x > small.device_memory; }));
    CHECK(fits.size() == ranked.size() - over);
    CHECK(too_big.size() == refused.size() + over);
    for (const auto& q : fits) CHECK(q.memory_max <= small.device_memory);
    CHECK(std::count_if(too_big.begin(), too_big.end(), [](const std::string& line) {
            return line.find("MiB (analytic), more than") != std::string::npos;
          }) == static_cast<long>(over));
  }
  // Two ranks per node and a slower link between nodes: communication can only get dearer.
  planning::MachineProfile nodes = one;
  nodes.gpus_per_node = 2;
  nodes.inter_bandwidth = 2.5e8;
  const auto split = planning::compare_strategies(data, {"2d", "plexus-3d"}, base, model, 8, nodes);
  for (const auto& q : split) {
    const auto same = std::find_if(ranked.begin(), ranked.end(),
                                   [&](const auto& x) { return x.algo == q.algo && x.grid == q.grid; });
    REQUIRE(same != ranked.end());
    CHECK(q.comm_s >= same->comm_s * (1 - 1e-12));
    CHECK(q.inter_bytes_max > 0);
  }
  CHECK_THROWS_WITH(planning::compare_strategies(data, {"scalegnn-4d"}, base, model, 8, one),
                    Catch::Contains("full-graph distributed strategies"));
  planning::MachineProfile no_rates = one;
  no_rates.kernels[static_cast<int>(Kernel::spmm)].rate = 0;
  CHECK_THROWS_WITH(planning::compare_strategies(data, {"1d"}, base, model, 8, no_rates),
                    Catch::Contains("has no rate for spmm kernels"));
}

TEST_CASE("plan: GAT's edge work on each rank's edge tensors (a feature split's whole block row)", "[plan][unit]") {
  if (world_rank() != 0) return;
  const Dataset data = load_dataset("sbm:nodes=600,classes=4,avg-degree=6,features=12,seed=2");
  ModelConfig model;
  model.name = "gat", model.hidden = 8, model.heads = 2;
  const double nnz = static_cast<double>(data.nnz() + data.nodes());  // Âᵀ's pattern: A + I
  StrategyOptions base;
  base.model = model_info("gat").demands;
  for (const auto& q : planning::compare_strategies(data, {"1d", "2d", "plexus-3d"}, base, model, 4, one_node())) {
    INFO(q.algo << " " << format_grid(q.grid));
    StrategyOptions o;
    o.algo = q.algo;
    o.grid = q.grid;
    o.model = base.model;
    const Simulation sim = simulate(data, o, model, 4);
    double edges = 0;
    for (const auto& r : sim.ranks) edges += static_cast<double>(r.edges_local);
    // every edge on one rank per process row: Y copies (2d's Y = grid[1]; 1d: one); plexus-3d: each
    // layer's on its shard, Y copies along y (its heads-weighted mean over the layers, rounded per rank)
    CHECK(edges == Approx(nnz * (q.algo == "1d" ? 1 : q.grid[1])).margin(q.algo == "plexus-3d" ? 4 : 0));
    // each rank's edge passes run on its edge tensors: the traced edge work is edges_local x heads per pass
    for (const auto& r : sim.ranks) {
      const Work e = planning::by_kind(r.work)[static_cast<int>(Kernel::edge)];
      CHECK(e.calls > 0);
      if (q.algo != "plexus-3d") CHECK(std::fmod(e.amount, static_cast<double>(r.edges_local)) == 0);
    }
  }
}

namespace {

// Least squares on the columns `cols` of a (rows) by the normal equations, Gaussian elimination; empty if singular.
std::vector<double> least_squares_on(const std::vector<std::vector<double>>& a, const std::vector<double>& b,
                                     const std::vector<std::size_t>& cols) {
  const std::size_t k = cols.size();
  std::vector<std::vector<double>> m(k, std::vector<double>(k + 1, 0.0));
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t p = 0; p < k; ++p) {
      for (std::size_t q = 0; q < k; ++q) m[p][q] += a[i][cols[p]] * a[i][cols[q]];
      m[p][k] += a[i][cols[p]] * b[i];
    }
  for (std::size_t p = 0; p < k; ++p) {
    std::size_t pivot = p;
    for (std::size_t r = p + 1; r < k; ++r)
      if (std::abs(m[r][p]) > std::abs(m[pivot][p])) pivot = r;
    std::swap(m[p], m[pivot]);
    if (std::abs(m[p][p]) < 1e-12) return {};
    for (std::size_t r = 0; r < k; ++r) {
      if (r == p) continue;
      const double f = m[r][p] / m[p][p];
      for (std::size_t q = p; q <= k; ++q) m[r][q] -= f * m[p][q];
    }
  }
  std::vector<double> x(k);
  for (std::size_t p = 0; p < k; ++p) x[p] = m[p][k] / m[p][p];
  return x;
}

double residual(const std::vector<std::vector<double>>& a, const std::vector<double>& b, const std::vector<double>& x,
                const std::vector<std::size_t>& cols) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    double r = -b[i];
    for (std::size_t p = 0; p < cols.size(); ++p) r += a[i][cols[p]] * x[p];
    s += r * r;
  }
  return s;
}

}  // namespace

TEST_CASE("plan: NNLS equals the best of every active set, by brute force", "[plan][unit]") {
  std::mt19937 gen(3);
  std::normal_distribution<double> z;
  int clamped = 0;
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<std::vector<double>> a(12, std::vector<double>(4));
    std::vector<double> b(12);
    for (int i = 0; i < 12; ++i) {
      for (auto& v : a[static_cast<std::size_t>(i)]) v = z(gen);
      b[static_cast<std::size_t>(i)] = z(gen);
    }
    const std::vector<double> x = planning::nnls(a, b);
    REQUIRE(x.size() == 4);
    for (const double v : x) CHECK(v >= 0);
    clamped += std::count(x.begin(), x.end(), 0.0) > 0;
    // the optimum over x >= 0 is the least-squares solution on some set of free columns that is feasible
    double best = residual(a, b, {}, {});
    for (int mask = 1; mask < 16; ++mask) {
      std::vector<std::size_t> cols;
      for (std::size_t j = 0; j < 4; ++j)
        if (mask & (1 << j)) cols.push_back(j);
      const auto u = least_squares_on(a, b, cols);
      if (!u.empty() && *std::min_element(u.begin(), u.end()) >= 0) best = std::min(best, residual(a, b, u, cols));
    }
    CHECK(residual(a, b, x, {0, 1, 2, 3}) == Approx(best).epsilon(1e-9));
  }
  CHECK(clamped > 10);  // the constraint was active in many trials (else this tests least squares only)
}

TEST_CASE("plan: calibration recovers a profile from its own predictions; Spearman", "[plexus-3d][plan][unit]") {
  planning::MachineProfile truth;
  truth.gpus_per_node = 4;
  truth.intra_bandwidth = 2e9, truth.inter_bandwidth = 5e8;
  truth.k_flops = 3e-6, truth.k_fwd = 2e-9, truth.k_bwd = 1e-9;
  const std::array<std::pair<Kernel, planning::KernelRate>, 5> prices = {{{Kernel::spmm, {3e9, 2e-5, 1.5e-9, 4e-10}},
                                                                          {Kernel::gemm, {2e10, 0}},
                                                                          {Kernel::elementwise, {1e9, 5e-6}},
                                                                          {Kernel::loss, {4e8, 0}},
                                                                          {Kernel::optimizer, {6e8, 1e-6}}}};
  for (const auto& [k, r] : prices) truth.kernels[static_cast<int>(k)] = r;
  std::vector<planning::Observation> runs;
  int variant = 0;
  for (std::int64_t n : {5000, 20000})
    for (const Grid g : {Grid{1, 1, 8}, Grid{1, 8, 1}, Grid{8, 1, 1}, Grid{2, 2, 2}, Grid{1, 2, 4}, Grid{4, 1, 2},
                         Grid{1, 1, 4}, Grid{2, 2, 1}}) {
      planning::Observation o;
      o.algo = "plexus-3d";
      o.problem = {n, 20 * n, {64, 128, 8}, false};
      o.grid = g;
      o.run_grid = {g[0], g[1], g[2]};
      o.ranks_per_node = 4;
      ++variant;
      const auto pr = planning::predict(o.problem, g, truth);
      const int P = g[0] * g[1] * g[2];
      for (int r = 0; r < P; ++r) {
        // per rank: SpMMs and element-wise work in the spmm category, GEMMs and element-wise work in the gemm
        // one, loss, optimizer; amounts and calls that vary independently across ranks and runs
        const double x = static_cast<double>(n) * (1 + 0.1 * r) / P;
        CategoryWork w{};
        auto put = [&](Category c, Kernel k, double amount, std::int64_t calls, double nonzeros = 0,
                       double row_elements = 0) {
          w[static_cast<int>(c)][static_cast<int>(k)] = {amount, calls, nonzeros, row_elements};
        };
        // widths 64, 96, 128; rows visited 1 to 4 times (a split into stages)
        put(Category::spmm, Kernel::spmm, 20 * x * (64 + 32 * (r % 3)), 6 + r % 2, 20 * x,
            x * (64 + 32 * (r % 3)) * (1 + (r + variant) % 4));
        put(Category::spmm, Kernel::elementwise, x * 64, 1 + r % 3);
        put(Category::gemm, Kernel::gemm, x * 64 * 128 * (2 + r % 2), 5);
        put(Category::elementwise, Kernel::elementwise, x * 300 * (1 + variant % 2), 9 + r);
        put(Category::loss, Kernel::loss, x * 8, 1);
        put(Category::optimizer, Kernel::optimizer, 64 * 128 + 128 * 8 * (1 + r % 2), 2 + variant % 2);
        std::array<double, kNumCategories> times{};
        for (int c = 0; c < kNumCategories; ++c) times[c] = planning::compute_seconds(w[c], truth);
        o.work.push_back(w);
        o.times.push_back(times);
        o.ranks.push_back({planning::by_kind(w), planning::plexus_link_bytes(o.problem, g, 4)});
      }
      o.spmm_s = pr.spmm_s;  // Eq. 4.4 for the k's
      o.comm_s = planning::seconds(o.ranks[0].link, truth), o.comm_rank = 0;
      o.epoch_s = pr.total_s();
      runs.push_back(o);
    }
  std::vector<planning::CategoryFit> fits;
  const auto fit = planning::calibrate(runs, planning::machine_profile("local"), "fit", "test", &fits);
  CHECK(fit.gpus_per_node == 4);
  CHECK(fit.intra_bandwidth == Approx(2e9).epsilon(1e-9));
  CHECK(fit.inter_bandwidth == Approx(5e8).epsilon(1e-9));
  for (const auto& [k, r] : prices) {
    INFO(to_string(k));
    CHECK(fit.rate(k).rate == Approx(r.rate).epsilon(1e-6));
    CHECK(fit.rate(k).latency_s == Approx(r.latency_s).epsilon(1e-6).margin(1e-12));
    CHECK(fit.rate(k).nonzero_s == Approx(r.nonzero_s).epsilon(1e-6).margin(1e-15));
    CHECK(fit.rate(k).row_element_s == Approx(r.row_element_s).epsilon(1e-6).margin(1e-15));
  }
  CHECK(fit.rate(Kernel::edge).rate == planning::machine_profile("local").rate(Kernel::edge).rate);  // not exercised
  // the profile file round-trips every kind's price
  const std::string file = "test_plan_profile_" + std::to_string(world_rank()) + ".json";  // every rank runs this
  { std::ofstream(file) << planning::profile_json(fit); }
  const auto read = planning::machine_profile(file);
  std::remove(file.c_str());
  for (int k = 0; k < kNumKernels; ++k) {
    CHECK(read.kernels[k].rate == fit.kernels[k].rate);
    CHECK(read.kernels[k].latency_s == fit.kernels[k].latency_s);
    CHECK(read.kernels[k].nonzero_s == fit.kernels[k].nonzero_s);
    CHECK(read.kernels[k].row_element_s == fit.kernels[k].row_element_s);
  }
  REQUIRE(fits.size() == 5);
  for (const auto& f : fits) CHECK(f.mean_abs_error < 1e-6);
  for (const auto& r : runs) CHECK(planning::predict(r.problem, r.grid, fit).spmm_s == Approx(r.spmm_s).epsilon(1e-6));

  // one node: the inter-node bandwidth is not identified
  for (auto& r : runs) {
    r.ranks_per_node = 8;
    for (auto& x : r.ranks) x.link = planning::plexus_link_bytes(r.problem, r.grid, 8);
    r.comm_s = planning::seconds(r.ranks[0].link, truth);
  }
  const auto one = planning::calibrate(runs, planning::machine_profile("local"), "fit", "test");
  CHECK(one.intra_bandwidth == Approx(2e9).epsilon(1e-9));
  CHECK(one.inter_bandwidth == one.intra_bandwidth);
  CHECK(one.gpus_per_node == planning::machine_profile("local").gpus_per_node);
  CHECK_THAT(one.source, Catch::Contains("not identified"));

  // each collective's own price per byte inside the node: an all-reduce's and a reduce-scatter's bytes are
  // also reduced, an all-gather's only copied
  planning::MachineProfile per_byte = truth;
  per_byte.intra_byte_s[static_cast<int>(Category::allgather)] = 2e-10;
  per_byte.intra_byte_s[static_cast<int>(Category::reduce_scatter)] = 9e-10;
  per_byte.intra_byte_s[static_cast<int>(Category::allreduce)] = 6e-10;
  std::set<int> moved;
  for (auto& r : runs) {
    for (std::size_t p = 0; p < r.ranks.size(); ++p)
      for (int c = 0; c < kNumCategories; ++c)
        if (const double b = r.ranks[p].link.intra[c]; b > 0)
          r.times[p][c] = b * per_byte.intra_seconds_per_byte(static_cast<Category>(c)), moved.insert(c);
    r.comm_s = planning::seconds(r.ranks[0].link, per_byte);
  }
  CHECK(moved.size() >= 3);  // plexus-3d's all-gathers, reduce-scatters and all-reduces
  std::vector<planning::CategoryFit> collective_fits;
  const auto priced = planning::calibrate(runs, planning::machine_profile("local"), "fit", "test", &collective_fits);
  for (const int c : moved) {
    INFO(to_string(static_cast<Category>(c)));
    CHECK(priced.intra_seconds_per_byte(static_cast<Category>(c)) ==
          Approx(per_byte.intra_seconds_per_byte(static_cast<Category>(c))).epsilon(1e-9));
  }
  const auto p2p = static_cast<int>(Category::p2p);  // not moved: the base profile's
  CHECK(priced.intra_byte_s[p2p] == planning::machine_profile("local").intra_byte_s[p2p]);
  for (const auto& r : runs) CHECK(planning::seconds(r.ranks[0].link, priced) == Approx(r.comm_s).epsilon(1e-9));
  CHECK(collective_fits.size() == 5 + moved.size());
  for (const auto& f : collective_fits) CHECK(f.mean_abs_error < 1e-9);
  { std::ofstream(file) << planning::profile_json(priced); }
  const auto priced_read = planning::machine_profile(file);
  std::remove(file.c_str());
  CHECK(priced_read.intra_byte_s == priced.intra_byte_s);

  // ranking: per model and rank count, the measured-fastest run's place in the predictions
  std::vector<planning::Observation> three(runs.begin(), runs.begin() + 3);  // 8 ranks each, gcn
  three[0].epoch_s = 3, three[1].epoch_s = 1, three[2].epoch_s = 2;
  const auto checks = planning::ranking_checks(three, {1.0, 3.0, 2.0});
  REQUIRE(checks.size() == 1);
  CHECK(checks[0].ranks == 8);
  CHECK(checks[0].grid == std::vector<int>{1, 8, 1});  // run 1's
  CHECK(checks[0].runs == 3);
  CHECK(checks[0].predicted_place == 3);
  CHECK(checks[0].regret == Approx(3.0 / 1 - 1));  // plan's pick, run 0, measured 3 against the best's 1
  CHECK(planning::ranking_checks(three, {2.0, 1.0, 3.0})[0].predicted_place == 1);
  // a repetition of run 1 measured at 6: one candidate at the mean, 3.5, so run 2 (2) is the fastest
  auto four = three;
  four.push_back(three[1]);
  four[3].epoch_s = 6;
  const auto merged = planning::ranking_checks(four, {1.0, 3.0, 2.0, 5.0});  // run 1's prediction: mean 4
  REQUIRE(merged.size() == 1);
  CHECK(merged[0].runs == 3);
  CHECK(merged[0].grid == std::vector<int>{8, 1, 1});
  CHECK(merged[0].predicted_place == 2);  // predicted 1, 4, 2
  CHECK(merged[0].regret == Approx(3.0 / 2 - 1));
  // run 1's repetitions (1 and 6, sample deviation 3.54) leave it within their spread of run 2's 2; run 0's
  // single 3 is not (no spread)
  CHECK(merged[0].tied == 1);
  CHECK(merged[0].tied_place == 2);
  CHECK(planning::ranking_checks(four, {3.0, 1.0, 2.0, 1.0})[0].tied_place == 1);  // run 1 predicted first
  CHECK(checks[0].tied == 0);  // no repetitions: no spread

  CHECK(planning::spearman({1, 2, 3, 4}, {10, 20, 30, 40}) == Approx(1));
  CHECK(planning::spearman({1, 2, 3, 4}, {4, 3, 2, 1}) == Approx(-1));
  CHECK(planning::spearman({1, 2, 3}, {5, 5, 5}) == 0);
}

TEST_CASE("uneven all-gather / reduce-scatter on an even-only transport: equal, padded or grouped", "[unit]") {
  using Kind = UnevenPlan::Kind;
  const std::vector<std::int64_t> equal = {5, 5, 5, 5}, near = {8, 8, 8, 7}, far = {8, 1, 1, 1};
  CHECK(plan_uneven(equal, 2).kind == Kind::equal);
  CHECK(plan_uneven(equal, 2).block == 5);
  const UnevenPlan p = plan_uneven(near, 3);  // 1 element of padding on 31: 3 %
  CHECK(p.kind == Kind::padded);
  CHECK(p.block == 8);
  CHECK(p.allgather_padding == 3 * 8 - 24);    // rank 3 receives three blocks of 8, all real
  CHECK(plan_uneven(near, 0).allgather_padding == 1);  // rank 0 receives the padded 7
  CHECK(p.reduce_scatter_padding == 3 * (8 - 7));
  CHECK(plan_uneven(near, 0).reduce_scatter_padding == 0);
  CHECK(plan_uneven(far, 0).kind == Kind::grouped);  // 21 elements of padding on 11
  CHECK(plan_uneven(near, 3, 0.0).kind == Kind::grouped);
}
