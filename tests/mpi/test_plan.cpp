// gcnlab plan (planning/perf_model.hpp, planning/plan.hpp): Plexus's model of
// plexus-3d grids (Eq. 4.4-4.6, the paper's Perlmutter fit used as printed),
// the topology of any group (Eq. 4.6 generalised, checked against Eq. 4.6 on
// every Plexus axis), the strategy comparison on simulate's volumes, and the
// calibration of a profile from runs.

#include <catch2/catch.hpp>

#include <cmath>

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
  const auto all = planning::epoch_work(conv, "1d"), some = planning::epoch_work(mixed, "1d");
  CHECK(some.gemm == all.gemm);
  CHECK(some.spmm == 9000.0 * (13 + 13 + 13 + 13));  // the two convolutions, forward and backward, at width 13
  CHECK(all.spmm == 9000.0 * (19 + (13 + 13) + (13 + 13) + (13 + 5)));

  // GraphSAGE's root term: the same SpMMs as GCN's, each layer's GEMMs twice; Plexus's model refuses it
  ModelConfig sage = gcn;
  sage.name = "sage";
  const planning::Problem rooted = planning::problem_of(1001, 9000, architecture(sage, 19, 5), false);
  CHECK_THAT(error_message([&] { planning::rank_grids(rooted, 8, planning::machine_profile("local")); }),
             Catch::Contains("prices graph convolutions only and --model sage has a root term in each layer"));
  const auto rooted_work = planning::epoch_work(rooted, "1d");
  CHECK(rooted_work.spmm == all.spmm);
  CHECK(rooted_work.gemm == 2 * all.gemm);

  // GAT: each attention layer's edge work (aggregation, transpose, SDDMM at its
  // width; 8 passes of the edge softmax per head) and its score GEMMs beside
  // Z = XW's; Plexus's model refuses it
  ModelConfig gat;
  gat.name = "gat", gat.layers = 2, gat.hidden = 13, gat.heads = 3;
  const Architecture ga = architecture(gat, 19, 5);
  REQUIRE(ga.dims == std::vector<std::int64_t>{19, 39, 5});
  REQUIRE(ga.heads == std::vector<int>{3, 1});
  const planning::Problem attending = planning::problem_of(1001, 9000, ga, false);
  CHECK_THAT(error_message([&] { planning::rank_grids(attending, 8, planning::machine_profile("local")); }),
             Catch::Contains("--model gat has graph attention"));
  const auto gat_work = planning::epoch_work(attending, "1d");
  CHECK(gat_work.spmm == 9000.0 * 3 * 39 + 9000.0 * 3 * 5);
  CHECK(gat_work.edges == 9000.0 * 8 * 3 + 9000.0 * 8 * 1);
  CHECK(gat_work.gemm == 2 * 1001.0 * 19 * 39 * 2 + 12 * 1001.0 * 39 * 3 + 2 * 1001.0 * 39 * 5 * 3 + 12 * 1001.0 * 5);
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
        CHECK(s.intra == Approx(m.intra).epsilon(1e-12).margin(1e-9));
        CHECK(s.inter_weighted == Approx(m.inter_weighted).epsilon(1e-12).margin(1e-9));
        double total = 0;
        for (int c = 0; c < kNumCategories; ++c) total += real.ranks[static_cast<std::size_t>(r)].model[static_cast<std::size_t>(c)];
        // every byte is on one link; with 2 ranks per node some cross nodes from 4 ranks on
        CHECK(s.intra + s.inter_weighted >= total * (1 - 1e-12));
      }
    }
}

TEST_CASE("plan: strategies compared on simulate's volumes, priced per group", "[plan][unit]") {
  if (world_rank() != 0) return;
  const Dataset data = load_dataset("sbm:nodes=1200,classes=6,avg-degree=8,features=24,seed=5");
  ModelConfig model;
  model.hidden = 16;
  StrategyOptions base;
  base.options["gemm-order"] = "direct";
  planning::MachineProfile one_node{"one", "test", 1024, 1e9, 1e9, 0, 0, 0, true, 1e9, 1e10};
  std::vector<std::string> refused;
  const auto ranked = planning::compare_strategies(data, {"1d", "1.5d", "2d", "split-3d", "plexus-3d"}, base, model,
                                                   8, one_node, &refused);
  // every grid of each strategy, accepted or refused: 1 + 4 + 4 + 10 + 10
  CHECK(ranked.size() + refused.size() == 29);
  for (std::size_t i = 1; i < ranked.size(); ++i) CHECK(ranked[i - 1].total_s() <= ranked[i].total_s());
  const planning::Problem prob{1200, data.nnz() + 1200, architecture(model, data.features, data.classes).dims, false};
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
    const auto work = planning::epoch_work(prob, q.algo);
    const auto& slow = sim.ranks[static_cast<std::size_t>(q.slowest_rank)];
    double nnz_mean = 0, bytes = 0;
    for (const auto& r : sim.ranks) nnz_mean += static_cast<double>(r.nnz_local) / 8;
    for (int c = 0; c < kNumCategories; ++c) bytes += slow.model[c];
    CHECK(q.comm_s == Approx(bytes / 1e9).epsilon(1e-12));
    CHECK(q.compute_s ==
          Approx((work.spmm * static_cast<double>(slow.nnz_local) / nnz_mean / 1e9 + work.gemm / 1e10) / 8)
              .epsilon(1e-12));
  }
  // Two ranks per node and a slower link between nodes: communication can only get dearer.
  planning::MachineProfile nodes = one_node;
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
  CHECK_THROWS_WITH(planning::compare_strategies(data, {"scalegnn-4d"}, base, model, 8, one_node),
                    Catch::Contains("full-graph distributed strategies"));
  planning::MachineProfile no_rates = one_node;
  no_rates.spmm_rate = 0;
  CHECK_THROWS_WITH(planning::compare_strategies(data, {"1d"}, base, model, 8, no_rates), Catch::Contains("kernel rates"));
}

TEST_CASE("plan: GAT's edge work on each rank's edge tensors (a feature split's whole block row)", "[plan][unit]") {
  if (world_rank() != 0) return;
  const Dataset data = load_dataset("sbm:nodes=600,classes=4,avg-degree=6,features=12,seed=2");
  ModelConfig model;
  model.name = "gat", model.hidden = 8, model.heads = 2;
  planning::MachineProfile one_node{"one", "test", 1024, 1e9, 1e9, 0, 0, 0, true, 1e9, 1e10};
  const Architecture arch = architecture(model, data.features, data.classes);
  const double nnz = static_cast<double>(data.nnz() + data.nodes());  // Âᵀ's pattern: A + I
  const auto work = planning::epoch_work(planning::problem_of(data.nodes(), data.nnz() + data.nodes(), arch, false),
                                         "1d");
  for (const auto& q :
       planning::compare_strategies(data, {"1d", "2d", "plexus-3d"}, StrategyOptions{}, model, 4, one_node)) {
    INFO(q.algo << " " << format_grid(q.grid));
    StrategyOptions o;
    o.algo = q.algo;
    o.grid = q.grid;
    const Simulation sim = simulate(data, o, model, 4);
    double edges = 0;
    for (const auto& r : sim.ranks) edges += static_cast<double>(r.edges_local);
    // every edge on one rank per process row: Y copies (2d's Y = grid[1]; 1d: one); plexus-3d: each
    // layer's on its shard, Y copies along y (its heads-weighted mean over the layers, rounded per rank)
    CHECK(edges == Approx(nnz * (q.algo == "1d" ? 1 : q.grid[1])).margin(q.algo == "plexus-3d" ? 4 : 0));
    const auto& slow = sim.ranks[static_cast<std::size_t>(q.slowest_rank)];
    const double mean = nnz / 4;
    // (plexus-3d's nnz_local, its shards' nonzeros / Y, is rounded per rank: its mean is nnz / 4 to 1e-3)
    CHECK(q.compute_s == Approx(((work.spmm * static_cast<double>(slow.nnz_local) +
                                  work.edges * static_cast<double>(slow.edges_local)) / mean / 1e9 +
                                 work.gemm / 1e10) / 4)
                             .epsilon(q.algo == "plexus-3d" ? 1e-3 : 1e-12));
  }
}

TEST_CASE("plan: calibration recovers a profile from its own predictions; Spearman", "[plexus-3d][plan][unit]") {
  planning::MachineProfile truth;
  truth.gpus_per_node = 4;
  truth.intra_bandwidth = 2e9, truth.inter_bandwidth = 5e8;
  truth.k_flops = 3e-6, truth.k_fwd = 2e-9, truth.k_bwd = 1e-9;
  truth.spmm_rate = 3e9, truth.gemm_rate = 4e10;
  std::vector<planning::Observation> runs;
  for (std::int64_t n : {5000, 20000})
    for (const Grid g : {Grid{1, 1, 8}, Grid{1, 8, 1}, Grid{8, 1, 1}, Grid{2, 2, 2}, Grid{1, 2, 4}, Grid{4, 1, 2},
                         Grid{1, 1, 4}, Grid{2, 2, 1}}) {
      planning::Observation o;
      o.algo = "plexus-3d";
      o.problem = {n, 20 * n, {64, 128, 8}, false};
      o.grid = g;
      o.ranks_per_node = 4;
      const auto pr = planning::predict(o.problem, g, truth);
      o.work = planning::epoch_work(o.problem, o.algo);
      const int P = g[0] * g[1] * g[2];
      for (int r = 0; r < P; ++r) o.ranks.push_back({r == 0 ? 1.2 : 1.0, planning::plexus_link_bytes(o.problem, g, 4)});
      const auto t = planning::slowest_rank(o.ranks, o.work, truth);
      o.spmm_s = pr.spmm_s;  // Eq. 4.4 for the k's ...
      o.gemm_s = o.work.gemm / P / truth.gemm_rate;
      o.comm_s = t.comm_s, o.comm_rank = 0;
      o.epoch_s = pr.total_s();
      runs.push_back(o);
    }
  const auto fit = planning::calibrate(runs, planning::machine_profile("local"), "fit", "test");
  CHECK(fit.gpus_per_node == 4);
  CHECK(fit.intra_bandwidth == Approx(2e9).epsilon(1e-9));
  CHECK(fit.inter_bandwidth == Approx(5e8).epsilon(1e-9));
  CHECK(fit.gemm_rate == Approx(4e10).epsilon(1e-9));
  for (const auto& r : runs) CHECK(planning::predict(r.problem, r.grid, fit).spmm_s == Approx(r.spmm_s).epsilon(1e-6));
  // ... and the SpMM rate to the busiest rank's work
  for (auto& r : runs) r.spmm_s = r.work.spmm * 1.2 / static_cast<double>(r.ranks.size()) / 3e9;
  CHECK(planning::calibrate(runs, truth, "fit", "test").spmm_rate == Approx(3e9).epsilon(1e-9));

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
