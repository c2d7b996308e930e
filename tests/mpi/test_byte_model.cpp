// Measured wire bytes per category equal each strategy's analytic model
// exactly, on every grid; and the models agree with CAGNET's formulas
// (Sec. IV-A, IV-B) where those apply (even blocks).

#include <catch2/catch.hpp>

#include "common/comm/process_grid.hpp"
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
    for (const std::string algo : {"1d", "1.5d", "2d", "split-3d"})
      for (const auto& grid : grids_for(algo, p)) {
        INFO(algo << " grid " << format_grid(grid) << (directed ? " directed" : ""));
        require_measured_equals_model(run(MPI_COMM_WORLD, small_spec(algo, grid), small_graph(1001, directed)));
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

TEST_CASE("serial moves no bytes", "[bytes][serial]") {
  RunSpec spec;
  spec.train.epochs = 2;
  const RunResult r = run(MPI_COMM_SELF, spec, small_graph(300));
  for (int c = 0; c < kNumCategories; ++c)
    if (is_communication(static_cast<Category>(c))) CHECK(r.ranks[0].per_epoch[c].wire_bytes == 0);
}
