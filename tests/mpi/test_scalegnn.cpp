// scalegnn-4d (ScaleGNN, Wei et al. 2026): the sampler (Sec. III-D, Eq. 20-25)
// against its definition, the mini-batch model against the serial oracle on
// every D x X x Y x Z grid, and measured bytes against the model.

#include <catch2/catch.hpp>

#include <cmath>
#include <optional>
#include <set>

#include "common/core/fingerprint.hpp"
#include "common/data/graph.hpp"
#include "common/data/sampling.hpp"
#include "algorithms/plexus-3d/decomposition.hpp"
#include "common/comm/process_grid.hpp"
#include "models/registry.hpp"
#include "tests/support/harness.hpp"
#include "tests/support/random.hpp"

using namespace gcnlab;
using namespace gcnlab::test;

namespace {

// n = 1001, f = 19, 13, 5: no rank count 2..8 divides them.
const char* kUndirected = "sbm:nodes=1001,classes=5,avg-degree=8,features=19,seed=3";
const char* kDirected = "sbm:nodes=1001,classes=5,avg-degree=6,features=19,seed=4,directed=1";

// 6 and 8 ranks have 10-20 grids each: one graph and one variant there keep the suite short.
bool many_grids() { return world_size() > 4; }

RunSpec spec_for(const std::string& algo, std::int64_t batch, float dropout) {
  RunSpec s;
  s.algo = algo;
  s.model.layers = 3;
  s.model.hidden = 13;
  s.model.dropout = dropout;
  s.model.weight_decay = 5e-4f;
  s.model.seed = 7;
  s.train.epochs = 4;
  s.train.batch_size = batch;
  return s;
}

}  // namespace

TEST_CASE("uniform samples: B distinct sorted positions, a pure function of (seed, step, group)", "[scalegnn-4d][unit]") {
  const Sample s = uniform_sample(1000, 37, 9, 4, 0);
  REQUIRE(s.size() == 37);
  CHECK(std::is_sorted(s.positions.begin(), s.positions.end()));
  CHECK(std::set<std::int64_t>(s.positions.begin(), s.positions.end()).size() == 37);
  CHECK(s.positions.front() >= 0);
  CHECK(s.positions.back() < 1000);
  CHECK(s.inclusion == Approx(36.0 / 999.0));
  CHECK(uniform_sample(1000, 37, 9, 4, 0).positions == s.positions);
  CHECK(uniform_sample(1000, 37, 9, 5, 0).positions != s.positions);  // the next step
  CHECK(uniform_sample(1000, 37, 9, 4, 1).positions != s.positions);  // another data-parallel group
  CHECK(uniform_sample(1000, 37, 10, 4, 0).positions != s.positions);
  const Sample all = uniform_sample(50, 50, 1, 0);
  CHECK(all.inclusion == 1.0);
  for (std::int64_t q = 0; q < 50; ++q) CHECK(all.positions[q] == q);
  CHECK(error_message([] { uniform_sample(10, 11, 1, 0); }).find("--batch-size") != std::string::npos);
  CHECK(error_message([] { uniform_sample(10, 0, 1, 0); }).find("--batch-size") != std::string::npos);
}

TEST_CASE("uniform samples include every vertex with probability B/N", "[scalegnn-4d][unit]") {
  // 20000 draws of B = 6 of N = 30: each count ~ Binomial(20000, 0.2), sd 56.6;
  // 5 sd is a false alarm rate of 1e-5 per position.
  constexpr int kN = 30, kB = 6, kDraws = 20000;
  std::vector<int> count(kN, 0);
  for (int t = 0; t < kDraws; ++t)
    for (const std::int64_t q : uniform_sample(kN, kB, 3, static_cast<std::uint64_t>(t)).positions) ++count[q];
  const double mean = static_cast<double>(kDraws) * kB / kN, sd = std::sqrt(mean * (1.0 - static_cast<double>(kB) / kN));
  for (int q = 0; q < kN; ++q) {
    INFO("position " << q);
    CHECK(std::abs(count[q] - mean) < 5 * sd);
  }
}

TEST_CASE("induced blocks keep the sampled rows and columns, off-diagonal weights over p", "[scalegnn-4d][unit]") {
  // a dense 12 x 9 block at global offset (row 5, column 8) of a 20-vertex graph
  const std::int64_t r0 = 5, c0 = 8, rows = 12, cols = 9;
  std::vector<Coo> coo;
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j)
      if ((i * 7 + j * 3) % 4 != 0) coo.push_back({i, j, static_cast<float>(1 + i * cols + j)});
  const HostCsr a = csr_from_coo(rows, cols, coo, false);
  const std::vector<std::int64_t> sr{5, 8, 9, 12, 16}, sc{8, 9, 12, 15, 16};  // global positions
  const double p = 0.25;
  const HostCsr s = induced_block(a, r0, c0, sr, sc, p);
  REQUIRE(s.rows == 5);
  REQUIRE(s.cols == 5);
  for (std::int64_t i = 0; i < s.rows; ++i) {
    std::vector<float> dense(5, 0.f);
    for (std::int64_t e = s.rowptr[i]; e < s.rowptr[i + 1]; ++e) dense[s.col[e]] = s.val[e];
    for (std::int64_t j = 0; j < 5; ++j) {
      const std::int64_t li = sr[i] - r0, lj = sc[j] - c0;
      const bool present = (li * 7 + lj * 3) % 4 != 0;
      const float v = static_cast<float>(1 + li * cols + lj);
      const float expected = !present ? 0.f : sr[i] == sc[j] ? v : static_cast<float>(v / p);
      INFO("row " << sr[i] << " column " << sc[j]);
      CHECK(dense[j] == expected);
    }
  }
}

TEST_CASE("the rescaled sample aggregation is unbiased (Eq. 25); without rescaling it is not",
          "[scalegnn-4d][unit]") {
  // For every vertex v: the mean over the samples that contain v of
  // (Ã_S x_S)_v against the full (Âᵀ x)_v, within 5 standard errors of the
  // estimate (the spread of the samples, measured).
  const NormalizedAdjacency g = normalized_graph(load_dataset("sbm:nodes=120,classes=3,avg-degree=6,features=2,seed=2"));
  const HostCsr& at = *g.a_hat_t;
  const std::int64_t n = at.rows, B = 30;
  std::vector<double> x(static_cast<std::size_t>(n)), full(static_cast<std::size_t>(n), 0.0);
  for (std::int64_t v = 0; v < n; ++v) x[v] = 1.0 + std::sin(static_cast<double>(v));
  for (std::int64_t v = 0; v < n; ++v)
    for (std::int64_t e = at.rowptr[v]; e < at.rowptr[v + 1]; ++e) full[v] += at.val[e] * x[at.col[e]];
  auto worst_z = [&](bool rescale) {
    std::vector<double> sum(n, 0.0), sq(n, 0.0), seen(n, 0.0);
    for (int t = 0; t < 6000; ++t) {
      const Sample s = uniform_sample(n, B, 11, static_cast<std::uint64_t>(t));
      const HostCsr a = induced_block(at, 0, 0, s.positions, s.positions, rescale ? s.inclusion : 1.0);
      for (std::int64_t i = 0; i < a.rows; ++i) {
        double h = 0;
        for (std::int64_t e = a.rowptr[i]; e < a.rowptr[i + 1]; ++e) h += a.val[e] * x[s.positions[a.col[e]]];
        const std::int64_t v = s.positions[i];
        sum[v] += h, sq[v] += h * h, seen[v] += 1;
      }
    }
    double worst = 0;
    for (std::int64_t v = 0; v < n; ++v) {
      REQUIRE(seen[v] > 100);
      const double mean = sum[v] / seen[v], var = std::max(sq[v] / seen[v] - mean * mean, 1e-12);
      worst = std::max(worst, std::abs(mean - full[v]) / std::sqrt(var / seen[v]));
    }
    return worst;
  };
  CHECK(worst_z(true) < 5.0);
  CHECK(worst_z(false) > 20.0);  // the test can fail: the induced subgraph alone underestimates
}

TEST_CASE("every rank draws the same sample", "[scalegnn-4d][mpi]") {
  const Sample s = uniform_sample(100000, 777, 5, 42);
  const std::string h = Fingerprint().add_values(std::span<const std::int64_t>(s.positions)).hex();
  std::vector<char> all(h.size() * static_cast<std::size_t>(world_size()));
  MPI_Allgather(h.data(), static_cast<int>(h.size()), MPI_CHAR, all.data(), static_cast<int>(h.size()), MPI_CHAR,
                MPI_COMM_WORLD);
  for (int r = 0; r < world_size(); ++r) CHECK(std::string(all.data() + r * h.size(), h.size()) == h);
}

TEST_CASE("scalegnn-4d with B = N equals serial's full-graph epochs on every D x X x Y x Z grid",
          "[equivalence][scalegnn-4d]") {
  // The sample is the whole graph (p = 1) in every group; D groups then each
  // hold the full graph and the summed dW over D, under the loss normalised by
  // all D groups' training vertices, is the full-graph gradient: a missing or
  // averaging all-reduce over D would differ.
  for (const char* dataset : {kUndirected, kDirected}) {
    if (many_grids() && dataset == kUndirected) continue;
    const Dataset data = load_dataset(dataset);
    for (float dropout : {0.f, 0.5f}) {
      if (many_grids() && dropout == 0) continue;
      const RunResult serial = run(MPI_COMM_SELF, spec_for("serial", 0, dropout), data);
      for (const auto& grid : grids_for("scalegnn-4d", world_size())) {
        INFO("grid " << format_grid(grid) << " on " << dataset << " dropout " << dropout);
        RunSpec spec = spec_for("scalegnn-4d", data.nodes(), dropout);
        spec.grid = grid;
        // accuracy: without dropout a full-graph epoch reports the training pass's
        // (before the update), a mini-batch epoch its evaluation's (after)
        require_same_model(serial, run(MPI_COMM_WORLD, spec, data), 1e-4, dropout > 0);
      }
    }
  }
}

TEST_CASE("scalegnn-4d with B < N equals the serial mini-batch oracle on every X x Y x Z grid",
          "[equivalence][scalegnn-4d]") {
  // D = 1: the same seeded samples, 3 steps per epoch and an evaluation after
  // every step; serial cuts them from the whole Âᵀ, each rank from its own
  // shards. SGD shows the match at 1e-4; Adam's m / √v turns the rounding of
  // near-zero gradients of a 400-vertex sample into larger steps (1e-3).
  for (const char* dataset : {kUndirected, kDirected}) {
    if (many_grids() && dataset == kDirected) continue;
    const Dataset data = load_dataset(dataset);
    for (float dropout : {0.f, 0.5f})
    for (const bool adam : {false, true}) {
      if (many_grids() && (dropout == 0) == adam) continue;
      RunSpec oracle = spec_for("serial", 400, dropout);
      oracle.train.steps_per_epoch = 3;
      oracle.train.eval_every = 1;
      if (!adam) oracle.model.optimizer = "sgd", oracle.model.lr = 0.5f;
      const RunResult serial = run(MPI_COMM_SELF, oracle, data);
      CHECK(serial.steps_per_epoch == 3);
      CHECK(serial.epochs.back().loss < serial.epochs.front().loss);
      for (const auto& grid : grids_for("scalegnn-4d", world_size())) {
        if (grid[0] != 1) continue;
        INFO("grid " << format_grid(grid) << " on " << dataset << " dropout " << dropout << " adam " << adam);
        RunSpec spec = oracle;
        spec.algo = "scalegnn-4d";
        spec.grid = grid;
        require_same_model(serial, run(MPI_COMM_WORLD, spec, data), adam ? 1e-3 : 1e-4);
      }
    }
  }
}

TEST_CASE("prefetching the next sample on a helper thread changes nothing but the time (Sec. V-A)",
          "[equivalence][scalegnn-4d]") {
  // The cut of step t+1 runs while step t trains, across epoch boundaries and
  // around the evaluations; samples are pure functions of (seed, step, group),
  // so the runs are bit-identical.
  const Dataset data = load_dataset(kDirected);
  const std::vector<int> grid = grids_for("scalegnn-4d", world_size()).back();  // the largest D
  for (const std::string algo : {"serial", "scalegnn-4d"}) {
    INFO(algo);
    RunSpec spec = spec_for(algo, 300, 0.5f);
    if (algo != "serial") spec.grid = grid;
    spec.train.steps_per_epoch = 3;
    spec.train.eval_every = 2;
    spec.train.prefetch = false;
    const RunResult inline_cut = run(algo == "serial" ? MPI_COMM_SELF : MPI_COMM_WORLD, spec, data);
    spec.train.prefetch = true;
    const RunResult prefetched = run(algo == "serial" ? MPI_COMM_SELF : MPI_COMM_WORLD, spec, data);
    REQUIRE(prefetched.epochs.size() == inline_cut.epochs.size());
    for (std::size_t e = 0; e < inline_cut.epochs.size(); ++e) {
      CHECK(prefetched.epochs[e].loss == inline_cut.epochs[e].loss);
      CHECK(prefetched.epochs[e].val_acc == inline_cut.epochs[e].val_acc);
    }
    CHECK(prefetched.final_weights == inline_cut.final_weights);
  }
}

TEST_CASE("scalegnn-4d with D > 1 groups and B < N equals the serial oracle of D groups on every grid",
          "[equivalence][scalegnn-4d]") {
  // serial --dp-groups D trains each step on the block-diagonal union of the D
  // groups' samples (a vertex in two samples is two rows): one loss over all
  // their training vertices, dW summed over them. D groups of a 3D PMM with
  // dW all-reduced over D must compute exactly that, on every grid inside the
  // groups. 300 x D can exceed n = 1001: the union is then larger than the graph.
  const int p = world_size();
  const Dataset data = load_dataset(kDirected);
  for (int d = 2; d <= p; ++d) {
    if (p % d) continue;
    RunSpec oracle = spec_for("serial", 300, 0.5f);
    oracle.dp_groups = d;
    oracle.model.optimizer = "sgd", oracle.model.lr = 0.5f;
    oracle.train.eval_every = 1;
    const RunResult serial = run(MPI_COMM_SELF, oracle, data);
    CHECK(serial.steps_per_epoch == (1001 + 300 * d - 1) / (300 * d));
    RunSpec one_group = oracle;  // the same steps without the other groups' samples differ
    one_group.dp_groups = 1;
    one_group.train.steps_per_epoch = serial.steps_per_epoch;
    CHECK(run(MPI_COMM_SELF, one_group, data).epochs.back().loss !=
          Approx(serial.epochs.back().loss).epsilon(1e-4));
    for (const auto& grid : grids_for("scalegnn-4d", p)) {
      if (grid[0] != d) continue;
      INFO("grid " << format_grid(grid));
      RunSpec spec = oracle;
      spec.algo = "scalegnn-4d";
      spec.grid = grid;
      spec.dp_groups = 1;
      require_same_model(serial, run(MPI_COMM_WORLD, spec, data));
    }
  }
}

TEST_CASE("scalegnn-4d: measured bytes equal the model on every grid, with the D-group dW all-reduce",
          "[bytes][scalegnn-4d]") {
  for (const char* dataset : {kUndirected, kDirected}) {
    if (many_grids() && dataset == kUndirected) continue;
    const Dataset data = load_dataset(dataset);
    for (const auto& grid : grids_for("scalegnn-4d", world_size()))
      for (const std::string precision : {"fp32", "bf16"}) {  // bf16: the PMM's partial sums, not dW over D
        INFO("grid " << format_grid(grid) << " on " << dataset << ", --comm-precision " << precision);
        RunSpec spec = spec_for("scalegnn-4d", 250, 0.f);
        spec.grid = grid;
        spec.train.steps_per_epoch = 2;
        spec.comm_precision = precision;
        require_measured_equals_model(run(MPI_COMM_WORLD, spec, data));
      }
  }
}

TEST_CASE("--model scalegnn: plexus-3d and scalegnn-4d equal the serial oracle on every grid, bytes the model",
          "[equivalence][bytes][scalegnn-4d][model]") {
  // ScaleGNN's model (input projection, RMSNorm, ReLU, dropout, residual,
  // output head; Sec. III) in the 3D PMM (Sec. IV-C4): plexus-3d on the full
  // graph against serial, scalegnn-4d on every D x X x Y x Z grid against the
  // serial oracle of D groups, dropout on (its mask keyed by vertex and column
  // on every layout). The residual crosses planes on every grid with more
  // than one rank along two axes: its bytes are checked against the closed
  // form 4 (|to| - |to ∩ from|) per reshard (a rank receives what it does not
  // hold), which does not read the reshard's plan.
  const int p = world_size();
  const Dataset data = load_dataset(kDirected);
  auto model_spec = [](const std::string& algo, std::int64_t batch) {
    RunSpec s = spec_for(algo, batch, 0.5f);
    s.model.name = "scalegnn";
    s.model.layers = 2;
    s.model.optimizer = "sgd", s.model.lr = 0.2f;
    s.train.epochs = 3;
    s.train.eval_every = batch > 0 ? 1 : 0;
    return s;
  };
  auto residual_bytes = [&](const std::vector<int>& g3, const std::vector<int>& k3, std::int64_t rows) {
    const plexus::ModelShape shape(architecture(model_spec("plexus-3d", 0).model, data.features, data.classes));
    const plexus::Grid g{g3[0], g3[1], g3[2]};
    const plexus::Coords k{k3[0], k3[1], k3[2]};
    double bytes = 0;
    for (int l = 1; l <= 2; ++l)  // the GNN layers: X_l -> X_l+1 forward, back in the backward pass
      for (const auto& [from, to] : {std::pair{l, l + 1}, std::pair{l + 1, l}}) {
        const auto f = plexus::input_block(rows, shape, g, k, from), t = plexus::input_block(rows, shape, g, k, to);
        const auto common = [](BlockRange a, BlockRange b) {
          return std::max<std::int64_t>(0, std::min(a.end(), b.end()) - std::max(a.first, b.first));
        };
        bytes += 4.0 * (t.rows.count * t.cols.count - common(f.rows, t.rows) * common(f.cols, t.cols));
      }
    return bytes;
  };
  const RunResult serial = run(MPI_COMM_SELF, model_spec("serial", 0), data);
  CHECK(serial.epochs.back().loss < serial.epochs.front().loss);
  REQUIRE(serial.final_weights.size() == 4 + 2);  // γ of the two GNN layers trained too
  CHECK(serial.final_weights[4] != serial.initial_weights[4]);
  for (const auto& grid : grids_for("plexus-3d", p)) {
    INFO("plexus-3d grid " << format_grid(grid));
    RunSpec spec = model_spec("plexus-3d", 0);
    spec.grid = grid;
    spec.options["permutation"] = "none";
    const RunResult r = run(MPI_COMM_WORLD, spec, data);
    require_same_model(serial, r);
    require_measured_equals_model(r);
    for (const RankReport& rr : r.ranks)
      CHECK(rr.per_epoch[static_cast<int>(Category::alltoall)].wire_bytes ==
            Approx(residual_bytes(grid, rr.coords, data.nodes())).epsilon(1e-12).margin(1e-9));
  }
  for (int d = 1; d <= p; ++d) {
    if (p % d) continue;
    RunSpec oracle = model_spec("serial", 300);
    oracle.dp_groups = d;
    const RunResult mini = run(MPI_COMM_SELF, oracle, data);
    for (const auto& grid : grids_for("scalegnn-4d", p)) {
      if (grid[0] != d) continue;
      for (const std::string precision : {"fp32", "bf16"}) {
        if (precision == "bf16" && grid != grids_for("scalegnn-4d", p).back()) continue;
        INFO("scalegnn-4d grid " << format_grid(grid) << " --comm-precision " << precision);
        RunSpec spec = oracle;
        spec.algo = "scalegnn-4d";
        spec.grid = grid;
        spec.dp_groups = 1;
        spec.comm_precision = precision;
        const RunResult r = run(MPI_COMM_WORLD, spec, data);
        if (precision == "fp32") require_same_model(mini, r);
        else require_same_model(mini, r, 1e-2, false);  // bf16 partial sums: the same model, rounded
        require_measured_equals_model(r);
      }
    }
  }
}

TEST_CASE("--model scalegnn is refused where it is not built, with one clear message", "[scalegnn-4d][errors][model]") {
  const Dataset data = load_dataset(kUndirected);
  auto fails = [&](RunSpec spec, MPI_Comm comm = MPI_COMM_WORLD) {
    return error_message([&] { run(comm, spec, data); });
  };
  RunSpec s = spec_for("1d", 0, 0.f);
  s.model.name = "scalegnn";
  s.grid = {world_size()};
  CHECK(fails(s).find("--model scalegnn (input projection, RMSNorm, residuals: ScaleGNN Sec. III) runs on serial, "
                      "plexus-3d and scalegnn-4d") != std::string::npos);
  s.algo = "plexus-3d";
  s.grid = {};
  s.options["permutation"] = "double";
  CHECK(fails(s).find("--model scalegnn moves a layer's input rows into its output's layout (residuals, root terms) "
                      "in one vertex ordering") != std::string::npos);
  s.algo = "serial";
  s.options["permutation"] = "";
  s.model.learn_features = true;
  CHECK(fails(s, MPI_COMM_SELF).find("--model scalegnn does not train the input features") != std::string::npos);
}

TEST_CASE("scalegnn-4d refuses what it cannot run, with one clear message", "[scalegnn-4d][errors]") {
  const Dataset data = load_dataset(kUndirected);
  auto fails = [&](RunSpec spec) { return error_message([&] { run(MPI_COMM_WORLD, spec, data); }); };
  RunSpec s = spec_for("scalegnn-4d", 0, 0.f);
  CHECK(fails(s).find("--batch-size") != std::string::npos);
  s.train.batch_size = 100;
  s.options["permutation"] = "double";
  CHECK(fails(s).find("--permutation must be none") != std::string::npos);
  s.options["permutation"] = "";
  s.grid = {world_size(), 1, 1};
  CHECK(fails(s).find("DxXxYxZ") != std::string::npos);
  s.grid = {};
  s.train.batch_size = 5000;
  CHECK(fails(s).find("exceeds the graph's 1001 vertices") != std::string::npos);
  s.train.batch_size = 100;
  s.comm_precision = "fp16";
  CHECK(fails(s).find("--comm-precision takes fp32 or bf16") != std::string::npos);
  RunSpec full = spec_for("1d", 100, 0.f);
  full.grid = {world_size()};
  CHECK(fails(full).find("--batch-size (mini-batch training) is for serial and scalegnn-4d") != std::string::npos);
  RunSpec bf16 = spec_for("1d", 0, 0.f);
  bf16.grid = {world_size()};
  bf16.comm_precision = "bf16";
  CHECK(fails(bf16).find("--comm-precision bf16 is for the 3D PMM") != std::string::npos);
  RunSpec groups = spec_for("scalegnn-4d", 100, 0.f);
  groups.dp_groups = 2;
  CHECK(fails(groups).find("--dp-groups is for the serial oracle") != std::string::npos);
  groups.algo = "serial";
  groups.train.batch_size = 0;
  CHECK(error_message([&] { run(MPI_COMM_SELF, groups, data); }).find("needs --batch-size") != std::string::npos);
}
