// MG-GCN's buffer plan (Balın et al. Sec. 4.2): with every width equal to d
// and equal block rows, a rank's activation-sized buffers (n_i x d floats)
// number L + 3 under mggcn-1d (one per layer, BC1, BC2, HW) against 1d's 2L + 3
// (Z_l, which ReLU turns into H_{l+1} in place, and dX_l, which ReLU's backward
// turns into G_{l-1}, per layer, but no dX_0; G_{L-1}; its one broadcast
// buffer, its product buffer and T_0 = Âᵀ X_0 kept for dW_0, which the shared
// plan does not keep) -- counted from the analytic model and from the
// allocator's measured peak.

#include <catch2/catch.hpp>

#include "tests/support/harness.hpp"

using namespace gcnlab;
using namespace gcnlab::test;

namespace {

constexpr std::int64_t kNodes = 840;  // divisible by every rank count the suite runs (1-4, 6, 8)
constexpr std::int64_t kWidth = 16;   // features = hidden = classes

struct BufferCount {
  double analytic, measured;
};

// Activation-sized buffers of each rank: everything but the graph blocks, the
// weights, the input features and the per-row vectors (dropout keys, labels,
// split; 1d's whole rows need no loss workspace), in units of n_i x d floats.
std::vector<BufferCount> buffer_counts(const RunResult& r, int layers) {
  const std::int64_t rows = kNodes / world_size();
  const double unit = static_cast<double>(rows * kWidth) * sizeof(float);
  const double per_row = rows * (layers * sizeof(std::int64_t) + sizeof(std::int32_t) + 1);
  std::vector<BufferCount> out;
  for (const RankReport& rr : r.ranks) {
    const double fixed = rr.memory.graph + rr.memory.weights + unit + per_row;
    out.push_back({(rr.memory.total() - fixed) / unit, (rr.peak_bytes - fixed) / unit});
  }
  return out;
}

}  // namespace

TEST_CASE("mggcn-1d holds L + 3 activation-sized buffers, 1d holds 2L + 3", "[memory][mggcn-1d]") {
  const Dataset data = load_dataset(
      fmt::format("sbm:nodes={},classes={},avg-degree=8,features={},seed=2", kNodes, kWidth, kWidth));
  for (const int layers : {2, 3, 5}) {
    RunSpec spec;
    spec.model.layers = layers;
    spec.model.hidden = kWidth;
    spec.train.epochs = 2;
    spec.algo = "1d";
    const RunResult one_d = run(MPI_COMM_WORLD, spec, data);
    spec.algo = "mggcn-1d";
    const RunResult mg = run(MPI_COMM_WORLD, spec, data);
    const auto one_d_count = buffer_counts(one_d, layers), mg_count = buffer_counts(mg, layers);
    for (std::size_t r = 0; r < mg.ranks.size(); ++r) {
      INFO(layers << " layers, rank " << r);
      CHECK(mg_count[r].analytic == Approx(layers + 3).epsilon(1e-12));
      CHECK(one_d_count[r].analytic == Approx(2 * layers + 3).epsilon(1e-12));
      // what the allocator saw at its peak: within 10 % of the count
      CHECK(mg_count[r].measured == Approx(layers + 3).epsilon(0.10));
      CHECK(one_d_count[r].measured == Approx(2 * layers + 3).epsilon(0.10));
      CHECK(mg.ranks[r].peak_bytes < one_d.ranks[r].peak_bytes);
    }
  }
}
