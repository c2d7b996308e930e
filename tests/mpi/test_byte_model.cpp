// Measured wire bytes per category equal each strategy's analytic model
// exactly, on every grid; and the models agree with CAGNET's formulas
// (Sec. IV-A, IV-B) where those apply (even blocks).

#include <catch2/catch.hpp>

#include "common/comm/process_grid.hpp"
#include "common/comm/wire.hpp"
#include "common/data/graph.hpp"
#include "partitioners/prepare.hpp"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <set>
#include "common/core/blocks.hpp"
#include "tests/support/harness.hpp"

using namespace gcnlab;
using namespace gcnlab::test;

namespace {

constexpr int kBcast = static_cast<int>(Category::bcast_dense);
constexpr int kAllreduce = static_cast<int>(Category::allreduce);

RunSpec small_spec(const std::string& algo, const std::vector<int>& grid) {
  RunSpec spec;
  spec.algo = algo;
  spec.grid = grid;
  spec.model.layers = 2;
  spec.model.hidden = 7;
  spec.train.epochs = 3;
  spec.order = "aggregate";  // CAGNET's (ÂᵀX)W, which its closed forms count
  return spec;
}

Dataset small_graph(std::int64_t n, bool directed = false) {
  return load_dataset(
      fmt::format("sbm:nodes={},classes=4,avg-degree=6,features=10,seed=5,directed={}", n, directed ? 1 : 0));
}

const std::vector<std::int64_t> kDims = {10, 7, 4};  // f_0, f_1, f_2 of small_spec

}  // namespace

TEST_CASE("measured bytes equal the model for every strategy and grid", "[bytes]") {
  const int p = world_size();
  for (const bool directed : {false, true})
    for (const StrategyInfo& s : strategies())  // every registered strategy, each grid of the job
      for (const auto& grid : job_grids(s.name, p)) {
        const std::string& algo = s.name;
        INFO(algo << " grid " << format_grid(grid) << (directed ? " directed" : ""));
        RunSpec spec = small_spec(algo, grid);
        if (!s.caps.full_graph) spec.train.batch_size = 300, spec.train.eval_every = 1;  // mini-batch steps
        require_measured_equals_model(run(MPI_COMM_WORLD, spec, small_graph(1001, directed)));
        if (s.caps.any_order) {  // Âᵀ(XW): narrower products
          spec.order = "transform,aggregate";
          require_measured_equals_model(run(MPI_COMM_WORLD, spec, small_graph(1001, directed)));
          spec.order = "aggregate";
        }
        if (declares(algo, "block")) {  // blocked stages, both dW and softmax variants
          spec.options["block"] = "64";
          require_measured_equals_model(run(MPI_COMM_WORLD, spec, small_graph(1001, directed)));
          spec.options["dw-reduce"] = spec.options["softmax"] = "allreduce";
          require_measured_equals_model(run(MPI_COMM_WORLD, spec, small_graph(1001, directed)));
        }
      }
}

TEST_CASE("1d: bytes are CAGNET's (P-1)/P n f words per SpMM", "[bytes][1d]") {
  const int p = world_size();
  for (const std::int64_t n : {std::int64_t{1200}, std::int64_t{1001}}) {
    DYNAMIC_SECTION("n = " << n) {
      const RunResult r = run(MPI_COMM_WORLD, small_spec("1d", {}), small_graph(n));
      const auto off = block_offsets(n, p);
      for (const RankReport& rr : r.ranks) {
        // independent count: every rank receives all block rows but its own, per SpMM; every
        // layer has a forward and a backward SpMM but layer 0, whose dW_0 = T_0ᵀ G_0 needs none
        const double rows = static_cast<double>(n - (off[rr.rank + 1] - off[rr.rank]));
        auto spmm_widths = [](int l) { return static_cast<double>(kDims[l] + (l > 0 ? kDims[l + 1] : 0)); };
        double expected = 0;
        for (int l = 0; l < 2; ++l) expected += rows * spmm_widths(l) * 4;
        CHECK(rr.per_epoch[kBcast].wire_bytes == expected);
        CHECK(rr.per_epoch[kBcast].calls == (2 * 2 - 1) * p);  // 2L - 1 SpMMs x P stages
        if (n % p == 0) {
          double cagnet = 0;  // Sec. IV-A: (P-1)/P n f words per SpMM, over those 2L - 1 SpMMs
          for (int l = 0; l < 2; ++l) cagnet += (p - 1.0) / p * n * spmm_widths(l) * 4;
          CHECK(rr.per_epoch[kBcast].wire_bytes == Approx(cagnet).epsilon(1e-12));
        }
      }
    }
  }
}

TEST_CASE("1d with Âᵀ(XW): the forward broadcasts carry f_{l+1} columns", "[bytes][1d][order]") {
  const int p = world_size();
  const std::int64_t n = 1001;
  RunSpec spec = small_spec("1d", {});
  spec.order = "transform";
  const RunResult r = run(MPI_COMM_WORLD, spec, small_graph(n));
  const auto off = block_offsets(n, p);
  for (const RankReport& rr : r.ranks) {
    const double rows = static_cast<double>(n - (off[rr.rank + 1] - off[rr.rank]));
    double expected = 0;  // forward and backward both at f_{l+1}
    for (int l = 0; l < 2; ++l) expected += rows * static_cast<double>(2 * kDims[l + 1]) * 4;
    CHECK(rr.per_epoch[kBcast].wire_bytes == expected);
  }
}

TEST_CASE("mggcn-1d moves exactly 1d's broadcasts, overlapped or not", "[bytes][mggcn-1d]") {
  // MG-GCN changes when the bytes move, not which: per rank, call for call. With
  // learned features both run every layer's backward SpMM (without, 1d keeps T_0 for
  // dW_0 and mggcn-1d's shared plan does not: the case below).
  const Dataset data = small_graph(1001, true);
  RunSpec spec = small_spec("1d", {});
  spec.partitioner = "random";
  spec.model.learn_features = true;
  const RunResult one_d = run(MPI_COMM_WORLD, spec, data);
  spec.algo = "mggcn-1d";
  for (const bool overlap : {true, false}) {
    INFO("overlap " << overlap);
    spec.options["overlap"] = overlap ? "on" : "off";
    const RunResult mg = run(MPI_COMM_WORLD, spec, data);
    for (std::size_t r = 0; r < mg.ranks.size(); ++r)
      for (int c = 0; c < kNumCategories; ++c) {
        if (!is_communication(static_cast<Category>(c))) continue;
        CHECK(mg.ranks[r].per_epoch[c].wire_bytes == one_d.ranks[r].per_epoch[c].wire_bytes);
        CHECK(mg.ranks[r].per_epoch[c].calls == one_d.ranks[r].per_epoch[c].calls);
        // only nonblocking broadcasts have a wall time beyond their exposed time
        if (!overlap || c != kBcast) CHECK(mg.ranks[r].per_epoch[c].hidden_s == 0);
      }
  }
}

TEST_CASE("mggcn-1d's shared plan keeps no T_0: layer 0's backward SpMM is 1d's bytes and more", "[bytes][mggcn-1d]") {
  // fixed features: 1d takes dW_0 = T_0ᵀ G_0 (no SpMM), mggcn-1d computes U_0 = Â G_0
  // (P stages at f_1) rather than hold T_0 beside its L + 3 buffers
  const int p = world_size();
  const std::int64_t n = 1001;
  RunSpec spec = small_spec("1d", {});
  const RunResult one_d = run(MPI_COMM_WORLD, spec, small_graph(n));
  spec.algo = "mggcn-1d";
  const RunResult mg = run(MPI_COMM_WORLD, spec, small_graph(n));
  const auto off = block_offsets(n, p);
  for (std::size_t r = 0; r < mg.ranks.size(); ++r) {
    const double rows = static_cast<double>(n - (off[r + 1] - off[r]));
    CHECK(mg.ranks[r].per_epoch[kBcast].wire_bytes - one_d.ranks[r].per_epoch[kBcast].wire_bytes ==
          rows * static_cast<double>(kDims[1]) * 4);
    CHECK(mg.ranks[r].per_epoch[kBcast].calls - one_d.ranks[r].per_epoch[kBcast].calls == p);
  }
}

TEST_CASE("1d-ring receives exactly 1d's volume, in P-1 point-to-point steps per SpMM", "[bytes][1d-ring]") {
  // The ring changes the pattern (one block from the left neighbour per step), not the volume:
  // every rank receives every other rank's block once per SpMM, CAGNET's (P-1)/P n f words.
  const int p = world_size();
  constexpr int kP2p = static_cast<int>(Category::p2p);
  const Dataset data = small_graph(1001, true);
  for (const std::string order : {"aggregate", "transform"}) {
    INFO("order " << order);
    RunSpec spec = small_spec("1d", {});
    spec.order = order;
    const RunResult one_d = run(MPI_COMM_WORLD, spec, data);
    spec.algo = "1d-ring";
    const RunResult ring = run(MPI_COMM_WORLD, spec, data);
    for (std::size_t r = 0; r < ring.ranks.size(); ++r) {
      const auto& got = ring.ranks[r].per_epoch;
      const auto& ref = one_d.ranks[r].per_epoch;
      CHECK(got[kP2p].wire_bytes == ref[kBcast].wire_bytes);
      // L layers x (fwd + bwd) x (P-1) steps, less layer 0's backward after an aggregate-first forward
      CHECK(got[kP2p].calls == (order == "transform" ? 2 * 2 : 2 * 2 - 1) * (p - 1));
      CHECK(got[kBcast].wire_bytes == 0);
      CHECK(got[kAllreduce].wire_bytes == ref[kAllreduce].wire_bytes);
    }
  }
}

TEST_CASE("1.5d: c = 1 moves exactly 1d's bytes; every grid follows CAGNET's nf/c + nfc/P", "[bytes][1.5d]") {
  const int p = world_size();
  const Dataset data = small_graph(1200);
  const RunResult one_d = run(MPI_COMM_WORLD, small_spec("1d", {}), data);
  const RunResult c1 = run(MPI_COMM_WORLD, small_spec("1.5d", {p, 1}), data);
  for (int r = 0; r < p; ++r)
    for (int c = 0; c < kNumCategories; ++c) CHECK(c1.ranks[r].per_epoch[c].wire_bytes == one_d.ranks[r].per_epoch[c].wire_bytes);

  // Every replication c dividing P. CAGNET's Alg. 2 gives each of the c process
  // columns R/c = P/c² of the R stages; when c² does not divide P the remainder
  // goes to the last column (as CAGNET's code does), so column j runs
  // q_j = ⌊R/c⌋ stages, the last R - (c-1)⌊R/c⌋; with c² | P this is nf/c words.
  for (int c = 2; c <= p; ++c) {
    if (p % c) continue;
    const int R = p / c;
    const std::int64_t n = 1200;
    REQUIRE(n % R == 0);
    const RunResult r = run(MPI_COMM_WORLD, small_spec("1.5d", {R, c}), data);
    for (const RankReport& rr : r.ranks) {
      const int i = rr.coords[0], j = rr.coords[1];
      const int first = j * (R / c), q = j == c - 1 ? R - (c - 1) * (R / c) : R / c;
      const bool own = i >= first && i < first + q;  // its own block row is one of its column's stages: the root
      double bcast = 0, allreduce = 0;
      for (int l = 0; l < 2; ++l) {
        // forward width + backward width (layer 0 has no backward SpMM: dW_0 = T_0ᵀ G_0)
        const double f = static_cast<double>(kDims[l] + (l > 0 ? kDims[l + 1] : 0));
        // q_j broadcasts of n / R rows each, less its own (nf/c words when c² | P)
        bcast += (q - (own ? 1 : 0)) * static_cast<double>(n / R) * f * 4;
        // nfc/P = n f / R words once per SpMM in CAGNET; the ring all-reduce moves 2(c-1)/c times that
        allreduce += 2.0 * (c - 1) / c * static_cast<double>(n / R) * f * 4 +
                     2.0 * (R - 1) / R * static_cast<double>(kDims[l] * kDims[l + 1]) * 4;
      }
      INFO("rank " << rr.rank << " = P(" << i << ", " << j << ") of " << R << "x" << c);
      CHECK(rr.per_epoch[kBcast].wire_bytes == Approx(bcast).epsilon(1e-12).margin(1e-9));
      // the trainer adds its 7-double metric reduction over all P ranks
      CHECK(rr.per_epoch[kAllreduce].wire_bytes == Approx(allreduce + 2.0 * (p - 1) / p * 56).epsilon(1e-12));
    }
  }
}

namespace {

// CAGNET's per-rank volumes (Sec. IV-C, IV-D) for an X x Y x Z grid (Z = 1: 2D)
// when every block divides evenly, written from the layout's definition (block
// sizes), not from the strategy's stages. CAGNET drops the (1 - 1/q) factors
// (it counts a rank's own block as moved) and the transpose; here they are kept exact.
struct CagnetVolumes {
  double bcast_dense = 0, bcast_sparse = 0, reduce_scatter = 0, allgather = 0, allreduce = 0, p2p = 0;
};

CagnetVolumes cagnet_volumes(const HostCsr& a_t, std::int64_t n, const std::vector<std::int64_t>& dims,
                             const std::vector<int>& grid, const std::vector<int>& at, bool summa, bool gather) {
  const double X = grid[0], Y = grid[1], Z = grid.size() > 2 ? grid[2] : 1, P = X * Y * Z;
  const std::int64_t i = at[0], j = at[1], k = grid.size() > 2 ? at[2] : 0;
  const double N = static_cast<double>(n);
  CagnetVolumes v;
  auto interval = [](double a0, double a1, double b0, double b1) { return std::max(0.0, std::min(a1, b1) - std::max(a0, b0)); };
  for (std::size_t l = 0; l + 1 < dims.size(); ++l) {
    const double a = static_cast<double>(dims[l]), b = static_cast<double>(dims[l + 1]);
    // SpMM (Eq. 1 and 3): H / G rows of the slab from the other x ranks (no backward SpMM
    // at layer 0: dW_0 = T_0ᵀ G_0); the partial SUMMA's Y-1 blocks of T (forward) and U
    // (backward, only where dX exists: l > 0)
    for (const double f : l > 0 ? std::vector<double>{a, b} : std::vector<double>{a}) {
      v.bcast_dense += N / Z * (1 - 1 / X) * f / Y * 4;
      if (Z > 1) v.reduce_scatter += (Z - 1) * N / (X * Z) * f / Y * 4;
    }
    v.bcast_dense += N / (X * Z) * a * (1 - 1 / Y) * 4;
    if (l > 0 || !summa) v.bcast_dense += N / (X * Z) * b * (1 - 1 / Y) * 4;
    if (summa) {  // Eq. 4: dense SUMMA on Xᵀ (a/X columns, from the y ranks) and U (b/Y, from the x ranks)
      v.bcast_dense += N / Z * (1 - 1 / Y) * a / X * 4 + N / Z * (1 - 1 / X) * b / Y * 4;
      // the transpose: Xᵀ[Φ_i, C_{j,k}] less what this rank holds, X[R_{i,k} ∩ C_{j,k}, F_j ∩ Φ_i]
      const double own = interval(i * N / (X * Z), (i + 1) * N / (X * Z), j * N / (Y * Z), (j + 1) * N / (Y * Z)) *
                         interval(j * a / Y, (j + 1) * a / Y, i * a / X, (i + 1) * a / X);
      v.p2p += (N * a / P - own) * 4;
      if (Z > 1) v.reduce_scatter += (Z - 1) * a / (X * Z) * b / Y * 4;
      v.allgather += a * b * (1 - 1 / P) * 4;  // keeps W replicated: f² words
    } else {
      v.allreduce += 2 * (P - 1) / P * a * b * 4;
    }
  }
  const double classes = static_cast<double>(dims.back());  // Eq. 2: the logits' rows over the process row
  if (gather) v.allgather += N / (X * Z) * classes * (1 - 1 / Y) * 4;
  else if (Y > 1) v.allreduce += 2 * 2 * (Y - 1) / Y * N / (X * Z) * 4;
  v.allreduce += 2 * (P - 1) / P * 56;  // the trainer's 7-double metric reduction
  // Sparse (nnz/√P words): the pieces of Âᵀ[R_i, slab S_k] owned by other y ranks, each
  // cut where the row pieces R_{i',k} end; 8 bytes per nonzero plus |R_i| + 1 row pointers.
  // Once per SpMM: 2 per layer but layer 0 (Â = Âᵀ on an undirected graph).
  const std::int64_t Xi = grid[0], Zi = grid.size() > 2 ? grid[2] : 1, Yi = grid[1];
  const std::int64_t piece_rows = n / (Xi * Zi), slice = n / (Yi * Zi);
  for (std::int64_t jp = 0; jp < Yi; ++jp) {
    if (jp == j) continue;
    for (std::int64_t t = jp * slice; t < (jp + 1) * slice;) {  // slab positions
      const std::int64_t ip = t / piece_rows, end = std::min((ip + 1) * piece_rows, (jp + 1) * slice);
      const std::int64_t c0 = ip * (n / Xi) + k * piece_rows + (t - ip * piece_rows);  // graph position
      const HostCsr piece = extract_block(a_t, i * (n / Xi), (i + 1) * (n / Xi), c0, c0 + (end - t));
      v.bcast_sparse += (2.0 * static_cast<double>(dims.size() - 1) - 1) * ((n / Xi + 1) * 8.0 + piece.nnz() * 8.0);
      t = end;
    }
  }
  return v;
}

}  // namespace

TEST_CASE("2d and split-3d follow CAGNET's volumes on every grid, in both dW and softmax variants",
          "[bytes][2d][split-3d]") {
  const std::int64_t n = 1680;  // divisible by every block count of every grid of 1-8 ranks
  const Dataset data = load_dataset("sbm:nodes=1680,classes=24,avg-degree=6,features=48,seed=5");
  const std::vector<std::int64_t> dims = {48, 24, 24};  // divisible by X, Y and X·Z
  const NormalizedAdjacency g = normalized_graph(data);
  for (const std::string algo : {"2d", "split-3d"})
    for (const auto& grid : grids_for(algo, world_size()))
      for (const bool summa : {true, false}) {
        RunSpec spec = small_spec(algo, grid);
        spec.model.hidden = 24;
        spec.train.epochs = 2;
        spec.options["dw-reduce"] = summa ? "summa" : "allreduce";
        spec.options["softmax"] = summa ? "allgather" : "allreduce";
        const RunResult r = run(MPI_COMM_WORLD, spec, data);
        for (const RankReport& rr : r.ranks) {
          INFO(algo << " grid " << format_grid(grid) << " dw " << spec.options["dw-reduce"] << " rank " << rr.rank);
          const CagnetVolumes v = cagnet_volumes(*g.a_hat_t, n, dims, grid, rr.coords, summa, summa);
          auto measured = [&](Category c) { return rr.per_epoch[static_cast<int>(c)].wire_bytes; };
          CHECK(measured(Category::bcast_dense) == Approx(v.bcast_dense).epsilon(1e-12).margin(1e-9));
          CHECK(measured(Category::bcast_sparse) == Approx(v.bcast_sparse).epsilon(1e-12).margin(1e-9));
          CHECK(measured(Category::reduce_scatter) == Approx(v.reduce_scatter).epsilon(1e-12).margin(1e-9));
          CHECK(measured(Category::allgather) == Approx(v.allgather).epsilon(1e-12).margin(1e-9));
          CHECK(measured(Category::allreduce) == Approx(v.allreduce).epsilon(1e-12).margin(1e-9));
          CHECK(measured(Category::p2p) == Approx(v.p2p).epsilon(1e-12).margin(1e-9));
        }
      }
}

TEST_CASE("on a square grid the dW SUMMA moves CAGNET's 2nf/√P + f² words", "[bytes][2d]") {
  // Eq. 4 as printed, for P = 4 (√P = 2): (√P-1)/√P of each n x f operand's
  // column block and (P-1)/P of dW, beside the transpose's pairwise exchange.
  if (world_size() != 4) return;
  const std::int64_t n = 1680;
  const Dataset data = load_dataset("sbm:nodes=1680,classes=24,avg-degree=6,features=48,seed=5");
  RunSpec spec = small_spec("2d", {2, 2});
  spec.model.hidden = 24;
  spec.train.epochs = 2;
  RunSpec cheap = spec;
  cheap.options["dw-reduce"] = "allreduce";
  const RunResult r = run(MPI_COMM_WORLD, spec, data), c = run(MPI_COMM_WORLD, cheap, data);
  const double q = 2, P = 4;
  double eq4 = 0, allreduce = 0, partial_bwd_layer0 = n / q * (24 / q) * 4;  // U blocks for dW at layer 0
  for (const auto& [a, b] : {std::pair{48.0, 24.0}, std::pair{24.0, 24.0}}) {
    eq4 += ((q - 1) / q * (n * a / q + n * b / q) + (P - 1) / P * a * b) * 4;
    allreduce += 2 * (P - 1) / P * a * b * 4;
  }
  for (std::size_t rank = 0; rank < r.ranks.size(); ++rank) {
    const auto& s = r.ranks[rank].per_epoch;
    const auto& o = c.ranks[rank].per_epoch;
    auto at = [](const CategoryTallies& t, Category x) { return t[static_cast<int>(x)].wire_bytes; };
    // summa minus allreduce variant: Eq. 4's broadcasts and all-gather, no all-reduce of dW,
    // no partial SUMMA at layer 0 (no dX there)
    const double dense_and_gather = at(s, Category::bcast_dense) + at(s, Category::allgather) -
                                    (at(o, Category::bcast_dense) + at(o, Category::allgather));
    CHECK(dense_and_gather == Approx(eq4 - partial_bwd_layer0).epsilon(1e-12));
    CHECK(at(o, Category::allreduce) - at(s, Category::allreduce) == Approx(allreduce).epsilon(1e-12));
    const bool diagonal = r.ranks[rank].coords[0] == r.ranks[rank].coords[1];
    CHECK(at(s, Category::p2p) == (diagonal ? 0.0 : n / q * 48 / q * 4 + n / q * 24 / q * 4));  // (i,j) <-> (j,i)
  }
}

TEST_CASE("sa-1d moves exactly the needed rows: Σ_j |NnzCols(i, j)| f · 4", "[bytes][sa-1d]") {
  const int p = world_size();
  for (const bool directed : {false, true})
    for (const std::string method : {"block", "metis", "volume"}) {
      INFO(method << (directed ? " directed" : ""));
      const Dataset data = small_graph(1001, directed);
      const RunResult r = run(MPI_COMM_WORLD, [&] {
        RunSpec s = small_spec("sa-1d", {});
        s.partitioner = method;
        return s;
      }(), data);
      // independent count from the graph and the partition
      const Partition part = make_partition(method, data.adj, p, 1);
      const auto g = prepare_graph(data, {method, p, Permutation::none, 1}).graph;  // Â, Âᵀ in partition order
      const HostCsr a_t = g->block(Direction::forward, 0, g->n(), 0, g->n());
      const HostCsr a = g->block(Direction::backward, 0, g->n(), 0, g->n());
      const auto off = part.offsets();
      auto needed = [&](const HostCsr& a, int i) {  // distinct columns of block row i owned by other blocks
        std::set<std::int64_t> cols;
        for (std::int64_t row = off[i]; row < off[i + 1]; ++row)
          for (std::int64_t k = a.rowptr[row]; k < a.rowptr[row + 1]; ++k)
            if (a.col[k] < off[i] || a.col[k] >= off[i + 1]) cols.insert(a.col[k]);
        return static_cast<double>(cols.size());
      };
      for (const RankReport& rr : r.ranks) {
        const double fwd = needed(a_t, rr.rank), bwd = needed(a, rr.rank);
        double expected = 0;
        for (int l = 0; l < 2; ++l) expected += (fwd * kDims[l] + (l > 0 ? bwd * kDims[l + 1] : 0)) * 4;  // none: dW_0 = T_0ᵀ G_0
        CHECK(rr.per_epoch[static_cast<int>(Category::alltoall)].wire_bytes == expected);
        if (p > 1) CHECK(rr.setup[static_cast<int>(Category::alltoall)].calls == (directed ? 4 : 2));
      }
    }
}

TEST_CASE("sa-1.5d moves exactly the needed rows of its column's stages", "[bytes][sa-1.5d]") {
  const int p = world_size();
  for (const auto& grid : grids_for("sa-1.5d", p))
    for (const bool directed : {false, true}) {
      const int R = grid[0], c = grid[1];
      INFO("grid " << R << "x" << c << (directed ? " directed" : ""));
      const Dataset data = small_graph(1001, directed);
      RunSpec spec = small_spec("sa-1.5d", grid);
      spec.partitioner = "volume";
      const RunResult r = run(MPI_COMM_WORLD, spec, data);
      const Partition part = make_partition("volume", data.adj, R, 1);
      const auto g = prepare_graph(data, {"volume", R, Permutation::none, 1}).graph;
      const HostCsr a_t = g->block(Direction::forward, 0, g->n(), 0, g->n());
      const HostCsr a = g->block(Direction::backward, 0, g->n(), 0, g->n());
      const auto off = part.offsets();
      auto needed = [&](const HostCsr& a, int i, int k) {  // distinct columns of A_ik, k != i
        std::set<std::int64_t> cols;
        for (std::int64_t row = off[i]; row < off[i + 1]; ++row)
          for (std::int64_t e = a.rowptr[row]; e < a.rowptr[row + 1]; ++e)
            if (a.col[e] >= off[k] && a.col[e] < off[k + 1]) cols.insert(a.col[e]);
        return static_cast<double>(cols.size());
      };
      for (const RankReport& rr : r.ranks) {
        const int i = rr.coords[0], j = rr.coords[1];
        const int per = R / c, k0 = j * per, k1 = j == c - 1 ? R : (j + 1) * per;  // CAGNET's stage split
        double fwd = 0, bwd = 0;
        for (int k = k0; k < k1; ++k)
          if (k != i) fwd += needed(a_t, i, k), bwd += needed(a, i, k);
        double expected = 0;
        for (int l = 0; l < 2; ++l) expected += (fwd * kDims[l] + (l > 0 ? bwd * kDims[l + 1] : 0)) * 4;
        CHECK(rr.per_epoch[static_cast<int>(Category::p2p)].wire_bytes == expected);
      }
    }
}

TEST_CASE("sa-1d on a graph without off-diagonal nonzeros moves zero bytes", "[bytes][sa-1d]") {
  const int p = world_size();
  // intra = 1: every edge stays inside its class; one class per part
  const Dataset data = load_dataset(fmt::format("sbm:nodes=400,classes={},avg-degree=6,features=10,seed=5,intra=1", p));
  int pid = static_cast<int>(::getpid());  // rank 0's, so every rank names the same file
  MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
  const std::string file = fmt::format("/tmp/gcnlab_blockdiag_{}.part", pid);
  if (world_rank() == 0) {
    std::ofstream out(file);
    for (std::int32_t y : data.labels) out << y << "\n";
  }
  MPI_Barrier(MPI_COMM_WORLD);
  RunSpec spec = small_spec("sa-1d", {});
  spec.partitioner = file;
  const RunResult r = run(MPI_COMM_WORLD, spec, data);
  for (const RankReport& rr : r.ranks) CHECK(rr.per_epoch[static_cast<int>(Category::alltoall)].wire_bytes == 0);
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() == 0) std::remove(file.c_str());
}

TEST_CASE("serial moves no bytes", "[bytes][serial]") {
  RunSpec spec;
  spec.train.epochs = 2;
  const RunResult r = run(MPI_COMM_SELF, spec, small_graph(300));
  for (int c = 0; c < kNumCategories; ++c)
    if (is_communication(static_cast<Category>(c))) CHECK(r.ranks[0].per_epoch[c].wire_bytes == 0);
}

namespace {
// The GAT of the closed-form byte tests: 3 heads x 8, then one head of the 24
// classes, 2 epochs, on n = 1680 vertices (every grid of 1-8 ranks divides it).
constexpr std::int64_t kGatN = 1680;
constexpr const char* kGatData = "sbm:nodes=1680,classes=24,avg-degree=6,features=48,seed=5";
const std::vector<std::int64_t> kGatDims = {48, 24, 24}, kGatHeads = {3, 1};

RunSpec gat_bytes_spec(const std::string& algo, const std::vector<int>& grid, const std::string& elide) {
  RunSpec spec;
  spec.algo = algo;
  spec.grid = grid;
  spec.model.name = "gat";
  spec.model.layers = 2;
  spec.model.hidden = 8;
  spec.model.heads = 3;
  spec.train.epochs = 2;
  spec.options["elide"] = elide;
  return spec;
}
}  // namespace

TEST_CASE("GAT's bytes follow their closed forms under 1d, 2d and split-3d (the feature split), --elide on and off",
          "[bytes][models][2d][split-3d]") {
  // gathered_attention.hpp: over the G ranks that hold this rank's feature
  // columns F_j (1d: all P; 2d: the X of the process column; split-3d: X·Z),
  // n_r = n/G rows each, per attention layer of width F and H heads:
  //   allgather       (n - n_r)(H + |F_j|) · 4, + (n - n_r)|F_j| · 4 with --elide off
  //   reduce_scatter  (G - 1) n_r (|F_j| + H) · 4
  //   allreduce       4 · 2(Y-1)/Y · n_r H · 4 along y (s, d, ds, dd completed)
  // beside the layers' own all-reduces (dW over all ranks, b and a_src, a_dst
  // over the G ranks, the softmax's row max and sum along y, the trainer's 7
  // doubles). --dw-reduce allreduce and --softmax allreduce leave 2d's and
  // split-3d's GCN machinery no all-gather or reduce-scatter.
  const std::int64_t n = kGatN;
  const Dataset data = load_dataset(kGatData);
  const std::vector<std::int64_t>& dims = kGatDims;
  const std::vector<std::int64_t>& heads = kGatHeads;
  const double P = world_size();
  for (const std::string algo : {"1d", "2d", "split-3d"})
    for (const auto& grid : grids_for(algo, world_size()))
      for (const std::string elide : {"on", "off"}) {
        RunSpec spec = gat_bytes_spec(algo, grid, elide);
        if (algo != "1d") spec.options["dw-reduce"] = "allreduce", spec.options["softmax"] = "allreduce";
        const RunResult r = run(MPI_COMM_WORLD, spec, data);
        for (const RankReport& rr : r.ranks) {
          INFO(algo << " grid " << format_grid(grid) << " --elide " << elide << " rank " << rr.rank);
          const bool one_d = algo == "1d";
          const std::int64_t X = grid[0], Y = one_d ? 1 : grid[1];
          const std::int64_t Z = grid.size() > 2 ? grid[2] : 1, j = one_d ? 0 : rr.coords[1];
          const std::int64_t G = X * Z, rows = n / G;
          const auto share = [&](std::int64_t f) { return block_offsets(f, static_cast<int>(Y)); };
          double gather = 0, scatter = 0, reduce = wire::allreduce(56, world_size());
          for (std::size_t l = 0; l + 1 < dims.size(); ++l) {
            const auto off = share(dims[l + 1]);
            const double Fj = static_cast<double>(off[j + 1] - off[j]), H = static_cast<double>(heads[l]);
            gather += static_cast<double>(n - rows) * (H + Fj * (elide == "on" ? 1 : 2)) * 4;
            scatter += static_cast<double>(G - 1) * static_cast<double>(rows) * (Fj + H) * 4;
            reduce += 4 * wire::allreduce(static_cast<double>(rows) * H * 4, static_cast<int>(Y));
            reduce += 2 * (P - 1) / P * static_cast<double>(dims[l] * dims[l + 1]) * 4;  // dW
            for (int k = 0; k < 3; ++k)  // b, a_src, a_dst: over the ranks that hold F_j (split-3d: x, then z)
              reduce += wire::allreduce(Fj * 4, static_cast<int>(X)) + wire::allreduce(Fj * 4, static_cast<int>(Z));
          }
          reduce += 2 * wire::allreduce(static_cast<double>(rows) * 4, static_cast<int>(Y));  // softmax max, sum
          auto measured = [&](Category c) { return rr.per_epoch[static_cast<int>(c)].wire_bytes; };
          CHECK(measured(Category::allgather) == Approx(gather).epsilon(1e-12).margin(1e-9));
          CHECK(measured(Category::reduce_scatter) == Approx(scatter).epsilon(1e-12).margin(1e-9));
          CHECK(measured(Category::allreduce) == Approx(reduce).epsilon(1e-12).margin(1e-9));
        }
      }
}

TEST_CASE("GAT's bytes under plexus-3d follow the closed forms of its attention geometry, --elide on and off",
          "[bytes][models]") {
  // algorithms/plexus-3d/attention.hpp and plexus.md: layer l with axes (a, c)
  // = (x, z), then (z, x); features over y (Y ranks, F = f_{l+1}/Y), rows
  // R_{a,c} (n_x = n/(XZ)), the shard's sources R_a and targets R_c. Written
  // from the rank's coordinates and the ranges alone, not from the code's
  // companions.
  const std::int64_t n = kGatN;
  const Dataset data = load_dataset(kGatData);
  const std::vector<std::int64_t>& dims = kGatDims;
  const std::vector<std::int64_t>& heads = kGatHeads;
  const int P = world_size();
  for (const auto& grid : grids_for("plexus-3d", P))
    for (const std::string elide : {"on", "off"}) {
      const RunResult r = run(MPI_COMM_WORLD, gat_bytes_spec("plexus-3d", grid, elide), data);
      for (const RankReport& rr : r.ranks) {
        INFO("plexus-3d grid " << format_grid(grid) << " --elide " << elide << " rank " << rr.rank);
        const int X = grid[0], Y = grid[1], Z = grid[2], Q = X * Z;
        const std::int64_t nx = n / Q;
        double gather = 0, scatter = 0, alltoall = 0, reduce = wire::allreduce(56, P);  // the trainer's doubles
        for (std::size_t l = 0; l + 1 < dims.size(); ++l) {
          const bool even = l % 2 == 0;
          const int Ga = even ? X : Z, Gc = even ? Z : X;
          const std::int64_t i = rr.coords[even ? 0 : 2], k = rr.coords[even ? 2 : 0];
          const std::int64_t na = n / Ga, nc = n / Gc;
          const BlockRange own{i * na + k * nx, nx}, targets{k * nc, nc};
          const std::int64_t overlap =
              std::max<std::int64_t>(0, std::min(own.end(), targets.end()) - std::max(own.first, targets.first));
          const double F = static_cast<double>(dims[l + 1] / Y), H = static_cast<double>(heads[l]);
          const double f = static_cast<double>(dims[l + 1]), xs = static_cast<double>(nx);
          gather += static_cast<double>(na - nx) * (H + F * (elide == "on" ? 1 : 2))  // s, Z [, Z again]
                    + static_cast<double>(nc - nx) * F                                  // G over a (n_o = n_x)
                    + (f - F) * xs;                                                     // dZ over b
          scatter += (Y - 1) * xs * F + (Ga - 1) * xs * F + (Gc - 1) * xs * (H + F);  // Z, out; ds, dZ
          alltoall += static_cast<double>((nc - overlap) + (nx - overlap)) * H;      // d to R_c, dd back
          reduce += 4 * wire::allreduce(xs * H * 4, Y) + 4 * wire::allreduce(static_cast<double>(nc) * H * 4, Ga);
          reduce += wire::allreduce(static_cast<double>(dims[l] / Y) * f * 4, Q);  // dW over the a-c plane
          reduce += 3 * wire::allreduce(F * 4, Q);                                // b, a_src, a_dst
        }
        reduce += 2 * wire::allreduce(static_cast<double>(nx) * 4, Y);  // the loss's softmax: max, sum over classes
        auto measured = [&](Category c) { return rr.per_epoch[static_cast<int>(c)].wire_bytes; };
        CHECK(measured(Category::allgather) == Approx(gather * 4).epsilon(1e-12).margin(1e-9));
        CHECK(measured(Category::reduce_scatter) == Approx(scatter * 4).epsilon(1e-12).margin(1e-9));
        CHECK(measured(Category::alltoall) == Approx(alltoall * 4).epsilon(1e-12).margin(1e-9));
        CHECK(measured(Category::allreduce) == Approx(reduce).epsilon(1e-12).margin(1e-9));
      }
    }
}
