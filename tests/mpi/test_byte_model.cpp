// Measured wire bytes per category equal each strategy's analytic model
// exactly, on every grid; and the models agree with CAGNET's formulas
// (Sec. IV-A, IV-B) where those apply (even blocks).

#include <catch2/catch.hpp>

#include "common/comm/process_grid.hpp"
#include "common/data/graph.hpp"
#include "partitioners/prepare.hpp"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <set>
#include "partitioners/block.hpp"
#include "tests/support/harness.hpp"

using namespace gcnlab;
using namespace gcnlab::test;

namespace {

constexpr int kBcast = static_cast<int>(Category::bcast_dense);
constexpr int kAllreduce = static_cast<int>(Category::allreduce);

void require_measured_equals_model(const RunResult& r) {
  for (const RankReport& rr : r.ranks)
    for (int c = 0; c < kNumCategories; ++c) {
      if (!is_communication(static_cast<Category>(c))) continue;
      INFO("rank " << rr.rank << " category " << to_string(static_cast<Category>(c)));
      CHECK(rr.per_epoch[c].wire_bytes == Approx(rr.model[c]).epsilon(1e-12).margin(1e-9));
    }
}

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
    for (const std::string algo : {"1d", "1.5d", "2d", "split-3d", "sa-1d", "sa-1.5d", "mggcn-1d"})
      for (const auto& grid : grids_for(algo, p)) {
        INFO(algo << " grid " << format_grid(grid) << (directed ? " directed" : ""));
        RunSpec spec = small_spec(algo, grid);
        require_measured_equals_model(run(MPI_COMM_WORLD, spec, small_graph(1001, directed)));
        if (algo != "2d" && algo != "split-3d") {  // Âᵀ(XW): narrower products
          spec.order = "transform,aggregate";
          require_measured_equals_model(run(MPI_COMM_WORLD, spec, small_graph(1001, directed)));
          spec.order = "aggregate";
        }
        if (algo == "2d" || algo == "split-3d") {
          spec.block = 64;
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
        // independent count: every rank receives all block rows but its own, per SpMM
        const double rows = static_cast<double>(n - (off[rr.rank + 1] - off[rr.rank]));
        double expected = 0;
        for (int l = 0; l < 2; ++l) expected += rows * static_cast<double>(kDims[l] + kDims[l + 1]) * 4;
        CHECK(rr.per_epoch[kBcast].wire_bytes == expected);
        CHECK(rr.per_epoch[kBcast].calls == 2 * 2 * p);  // L layers x (fwd + bwd) x P stages
        if (n % p == 0) {
          double cagnet = 0;  // Sec. IV-A: (P-1)/P n f words per SpMM, over the 2L SpMMs
          for (int l = 0; l < 2; ++l) cagnet += (p - 1.0) / p * n * static_cast<double>(kDims[l] + kDims[l + 1]) * 4;
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
  // MG-GCN changes when the bytes move, not which: per rank, call for call
  const Dataset data = small_graph(1001, true);
  RunSpec spec = small_spec("1d", {});
  spec.partitioner = "random";
  const RunResult one_d = run(MPI_COMM_WORLD, spec, data);
  spec.algo = "mggcn-1d";
  for (const bool overlap : {true, false}) {
    INFO("overlap " << overlap);
    spec.overlap = overlap;
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

TEST_CASE("1.5d: c = 1 moves exactly 1d's bytes; even grids follow CAGNET's nf/c + nfc/P", "[bytes][1.5d]") {
  const int p = world_size();
  const Dataset data = small_graph(1200);
  const RunResult one_d = run(MPI_COMM_WORLD, small_spec("1d", {}), data);
  const RunResult c1 = run(MPI_COMM_WORLD, small_spec("1.5d", {p, 1}), data);
  for (int r = 0; r < p; ++r)
    for (int c = 0; c < kNumCategories; ++c) CHECK(c1.ranks[r].per_epoch[c].wire_bytes == one_d.ranks[r].per_epoch[c].wire_bytes);

  for (int c = 2; c * c <= p; ++c) {
    if (p % (c * c)) continue;  // CAGNET's formula assumes c² | P
    const int R = p / c;
    const std::int64_t n = 1200;
    REQUIRE(n % R == 0);
    const RunResult r = run(MPI_COMM_WORLD, small_spec("1.5d", {R, c}), data);
    for (const RankReport& rr : r.ranks) {
      const int i = rr.coords[0], j = rr.coords[1];
      double bcast = 0, allreduce = 0;
      for (int l = 0; l < 2; ++l) {
        const double f = static_cast<double>(kDims[l] + kDims[l + 1]);  // forward width + backward width
        // nf/c words: the P/c² broadcasts of this column, each of n c / P rows — minus the
        // rank's own block when its block row is in its column's chunk (it is the root).
        const bool own = i / (R / c) == j;
        bcast += (n * f / c - (own ? n * f * c / p : 0)) * 4;
        // nfc/P words once per SpMM in CAGNET; the ring all-reduce moves 2(c-1)/c times that
        allreduce += 2.0 * (c - 1) / c * n * f * c / p * 4 +
                     2.0 * (R - 1) / R * static_cast<double>(kDims[l] * kDims[l + 1]) * 4;
      }
      INFO("rank " << rr.rank << " = P(" << i << ", " << j << ") of " << R << "x" << c);
      CHECK(rr.per_epoch[kBcast].wire_bytes == Approx(bcast).epsilon(1e-12));
      // the trainer adds its 7-double metric reduction over all P ranks
      CHECK(rr.per_epoch[kAllreduce].wire_bytes == Approx(allreduce + 2.0 * (p - 1) / p * 56).epsilon(1e-12));
    }
  }
}

TEST_CASE("2d and split-3d on square/cube grids follow CAGNET's bandwidth terms", "[bytes][2d][split-3d]") {
  const int p = world_size();
  int q = 1;  // √P (2d) or ∛P (split-3d)
  std::vector<int> grid;
  if (p == 4) q = 2, grid = {2, 2};
  else if (p == 8) q = 2, grid = {2, 2, 2};
  else return;  // the closed forms need a square or cube grid
  const bool cube = grid.size() == 3;
  const std::int64_t n = 1200;  // divisible by every block count used
  const Dataset data = small_graph(n);
  RunSpec spec = small_spec(cube ? "split-3d" : "2d", grid);
  spec.model.hidden = 8;                       // widths 10, 8, 4: all even
  const std::vector<std::int64_t> dims = {10, 8, 4};
  const RunResult r = run(MPI_COMM_WORLD, spec, data);
  const NormalizedAdjacency g = normalized_graph(data);
  const int kSparse = static_cast<int>(Category::bcast_sparse), kRs = static_cast<int>(Category::reduce_scatter);
  for (const RankReport& rr : r.ranks) {
    const int i = rr.coords[0], j = rr.coords[1];
    // Dense: per SpMM of width f, the SUMMA receives (q-1) pieces of n/√P x f/√P (cube: n/P^{2/3}
    // rows) and the partial multiply (q-1) blocks of the same shape: CAGNET's 2nf/√P (2nf/P^{2/3})
    // words times (q-1)/q — CAGNET counts the rank's own block as moved.
    double dense = 0, rs = 0;
    const double rows_per_piece = cube ? n / 4.0 : n / 2.0;  // n/√P (2d), n/P^{2/3} (cube)
    for (int l = 0; l < 2; ++l)
      for (const std::int64_t f : {dims[l], dims[l + 1]}) {
        dense += 2 * (q - 1) * rows_per_piece * (f / q) * 4.0;
        if (cube) rs += (q - 1) * (n / 4.0) * (f / q) * 4.0;  // fiber: (Z-1) x the n/P^{2/3} x f/∛P output
      }
    CHECK(rr.per_epoch[kBcast].wire_bytes == Approx(dense).epsilon(1e-12));
    CHECK(rr.per_epoch[kRs].wire_bytes == Approx(rs).epsilon(1e-12).margin(1e-9));
    // Sparse: the pieces of Âᵀ[R_i, slab] this rank does not own (CAGNET: nnz/√P words in total,
    // here 8 bytes per nonzero plus each piece's row pointers), once per SpMM (Â = Âᵀ).
    const auto rows = block_offsets(n, q);
    double sparse = 0;
    const int k = cube ? rr.coords[2] : 0;
    for (int ip = 0; ip < q; ++ip) {          // stages: row pieces R_{i',k}
      const auto sub = block_offsets(rows[ip + 1] - rows[ip], cube ? q : 1);
      const std::int64_t c0 = rows[ip] + sub[k], c1 = rows[ip] + sub[k + 1];
      const int owner = ip;                   // slab split Y = q ways coincides with the row pieces here
      if (owner == j) continue;
      const HostCsr piece = extract_block(*g.a_hat_t, rows[i], rows[i + 1], c0, c1);
      sparse += (piece.rows + 1) * 8.0 + piece.nnz() * 8.0;
    }
    INFO("rank " << rr.rank);
    CHECK(rr.per_epoch[kSparse].wire_bytes == Approx(sparse * 2 * 2).epsilon(1e-12));  // 2 layers x (fwd + bwd)
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
        for (int l = 0; l < 2; ++l) expected += (fwd * kDims[l] + bwd * kDims[l + 1]) * 4;
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
        for (int l = 0; l < 2; ++l) expected += (fwd * kDims[l] + bwd * kDims[l + 1]) * 4;
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
