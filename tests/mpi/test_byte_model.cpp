// Measured wire bytes per category equal each strategy's analytic model
// exactly, and the 1D model equals CAGNET's formula (Sec. IV-A):
// (P-1)/P · n · f words per distributed SpMM for the broadcasts.

#include <catch2/catch.hpp>

#include "partitioners/block.hpp"
#include "tests/support/harness.hpp"

using namespace gcnlab;
using namespace gcnlab::test;

namespace {

void require_measured_equals_model(const RunResult& r) {
  for (const RankReport& rr : r.ranks)
    for (int c = 0; c < kNumCategories; ++c) {
      if (!is_communication(static_cast<Category>(c))) continue;
      INFO("rank " << rr.rank << " category " << to_string(static_cast<Category>(c)));
      CHECK(rr.per_epoch[c].wire_bytes == Approx(rr.model[c]).epsilon(1e-12).margin(1e-9));
    }
}

}  // namespace

TEST_CASE("1d: measured bytes equal the model and CAGNET's formula", "[bytes][1d]") {
  const int p = world_size();
  // n divisible by every tested P (1, 2, 3, 4, 6) for the closed form; and an uneven n.
  for (const std::int64_t n : {std::int64_t{1200}, std::int64_t{1001}}) {
    DYNAMIC_SECTION("n = " << n) {
      const Dataset data = load_dataset(fmt::format("sbm:nodes={},classes=4,avg-degree=6,features=10,seed=5", n));
      RunSpec spec;
      spec.algo = "1d";
      spec.model.layers = 2;
      spec.model.hidden = 7;
      spec.train.epochs = 3;
      const RunResult r = run(MPI_COMM_WORLD, spec, data);
      require_measured_equals_model(r);

      const std::vector<std::int64_t> f = {10, 7, 4};  // f_0, f_1, f_2
      const auto off = block_offsets(n, p);
      const int bcast = static_cast<int>(Category::bcast_dense);
      for (const RankReport& rr : r.ranks) {
        // independent count: every rank receives all block rows but its own, per SpMM
        const double rows = static_cast<double>(n - (off[rr.rank + 1] - off[rr.rank]));
        double expected = 0;
        for (int l = 0; l < 2; ++l) expected += rows * static_cast<double>(f[l] + f[l + 1]) * 4;
        CHECK(rr.per_epoch[bcast].wire_bytes == expected);
        CHECK(rr.per_epoch[bcast].calls == 2 * 2 * p);  // L layers x (fwd + bwd) x P stages
        if (n % p == 0) {
          // CAGNET Sec. IV-A: (P-1)/P n f words per SpMM, summed over the 2L SpMMs
          double cagnet = 0;
          for (int l = 0; l < 2; ++l) cagnet += (p - 1.0) / p * n * static_cast<double>(f[l] + f[l + 1]) * 4;
          CHECK(rr.per_epoch[bcast].wire_bytes == Approx(cagnet).epsilon(1e-12));
        }
      }
    }
  }
}

TEST_CASE("serial moves no bytes", "[bytes][serial]") {
  const Dataset data = load_dataset("sbm:nodes=300,classes=3,avg-degree=4,features=6,seed=2");
  RunSpec spec;
  spec.train.epochs = 2;
  const RunResult r = run(MPI_COMM_SELF, spec, data);
  for (int c = 0; c < kNumCategories; ++c)
    if (is_communication(static_cast<Category>(c))) CHECK(r.ranks[0].per_epoch[c].wire_bytes == 0);
}
