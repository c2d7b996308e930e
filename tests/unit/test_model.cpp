// The model math: softmax cross-entropy and the full GCN gradients against
// finite differences of an independent double-precision implementation.

#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <unordered_map>

#include "backends/factory.hpp"
#include "common/core/rng.hpp"
#include "common/core/threads.hpp"
#include "common/data/graph.hpp"
#include "common/model/loss.hpp"
#include "tests/support/harness.hpp"

using namespace gcnlab;

namespace {

// mean over training rows of -log softmax(z_i)[y_i], in double
double xent_double(const std::vector<double>& z, std::int64_t rows, std::int64_t cols,
                   const std::vector<std::int32_t>& y, const std::vector<std::uint8_t>& split, double n_train) {
  double loss = 0;
  for (std::int64_t i = 0; i < rows; ++i) {
    if (split[i] != ew::kTrain) continue;
    double m = -1e300, s = 0;
    for (std::int64_t c = 0; c < cols; ++c) m = std::max(m, z[i * cols + c]);
    for (std::int64_t c = 0; c < cols; ++c) s += std::exp(z[i * cols + c] - m);
    loss -= z[i * cols + y[i]] - m - std::log(s);
  }
  return loss / n_train;
}

}  // namespace

TEST_CASE("softmax cross-entropy gradient against finite differences", "[model][loss]") {
  auto be = make_backend("cpu", {1});
  Ledger ledger;
  const std::int64_t rows = 6, cols = 5;
  std::mt19937 gen(1);
  std::uniform_real_distribution<float> u(-3.f, 3.f);
  std::vector<float> z(rows * cols);
  for (auto& v : z) v = u(gen);
  const std::vector<std::int32_t> y = {0, 4, 2, 2, 1, 3};
  const std::vector<std::uint8_t> split = {ew::kTrain, ew::kTrain, ew::kVal, ew::kTrain, ew::kTest, ew::kTrain};
  const double n_train = 4;
  Dense dz = make_dense(*be, rows, cols, z), g(*be, rows, cols);
  auto dy = make_buffer<std::int32_t>(*be, y);
  auto ds = make_buffer<std::uint8_t>(*be, split);
  LossWorkspace ws;
  const XentSums sums = softmax_cross_entropy(*be, ledger, ClassSplit{}, dz, 0, dy.data(), ds.data(), n_train, ws, g);

  std::vector<double> zd(z.begin(), z.end());
  CHECK(sums.loss / n_train == Approx(xent_double(zd, rows, cols, y, split, n_train)).epsilon(1e-6));
  CHECK(sums.counted[ew::kTrain] == 4);
  CHECK(sums.counted[ew::kVal] == 1);
  const auto grad = g.download();
  const double h = 1e-6;
  for (std::int64_t k = 0; k < rows * cols; ++k) {
    auto plus = zd, minus = zd;
    plus[k] += h, minus[k] -= h;
    const double fd = (xent_double(plus, rows, cols, y, split, n_train) - xent_double(minus, rows, cols, y, split, n_train)) / (2 * h);
    REQUIRE(grad[k] == Approx(fd).margin(1e-5));
  }

  SECTION("classes split over two column blocks give the same loss and gradient") {
    // Simulate a class group of two ranks by hand: max and sum combined between passes.
    const std::int64_t c0 = 2;  // block A: cols [0,2), block B: [2,5)
    std::vector<float> za(rows * c0), zb(rows * (cols - c0));
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t c = 0; c < cols; ++c) (c < c0 ? za[i * c0 + c] : zb[i * (cols - c0) + c - c0]) = z[i * cols + c];
    Dense a = make_dense(*be, rows, c0, za), b = make_dense(*be, rows, cols - c0, zb);
    Dense ga(*be, rows, c0), gb(*be, rows, cols - c0);
    std::vector<float> ma(rows), mb(rows), sa(rows), sb(rows);
    be->row_max(a, ma.data());
    be->row_max(b, mb.data());
    for (std::int64_t i = 0; i < rows; ++i) ma[i] = mb[i] = std::max(ma[i], mb[i]);
    be->row_sum_exp(a, ma.data(), sa.data());
    be->row_sum_exp(b, mb.data(), sb.data());
    for (std::int64_t i = 0; i < rows; ++i) sa[i] = sb[i] = sa[i] + sb[i];
    const XentSums ra = be->softmax_xent(a, 0, ma.data(), sa.data(), dy.data(), ds.data(), 1 / 4.f, ga);
    const XentSums rb = be->softmax_xent(b, c0, mb.data(), sb.data(), dy.data(), ds.data(), 1 / 4.f, gb);
    CHECK(ra.loss + rb.loss == Approx(sums.loss).epsilon(1e-6));
    CHECK(ra.counted[ew::kTrain] + rb.counted[ew::kTrain] == 4);  // each row counted by exactly one block
    CHECK(ra.correct[ew::kTrain] + rb.correct[ew::kTrain] == sums.correct[ew::kTrain]);
    const auto gA = ga.download(), gB = gb.download();
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t c = 0; c < cols; ++c)
        REQUIRE((c < c0 ? gA[i * c0 + c] : gB[i * (cols - c0) + c - c0]) == Approx(grad[i * cols + c]).margin(1e-7));
    // labels untouched by the pass (the Plexus cross_entropy.py bug overwrote them)
    CHECK(dy.download() == y);
  }
}

namespace {

// Independent dense GCN in double: Z_l = Âᵀ H_l W_l, H_{l+1} = ReLU(Z_l), loss = mean CE;
// or (scalegnn) ScaleGNN's model, Eq. 4-12: H = X W_in; per GNN layer
// H += ReLU(γ ⊙ Z / sqrt(mean(Z²) + ε)) with Z = Âᵀ H W_l; logits H W_out.
// w holds the W's, then (scalegnn) the γ's.
struct Reference {
  std::int64_t n;
  std::vector<std::vector<double>> at;  // dense Âᵀ
  std::vector<std::vector<double>> x;   // features
  std::vector<std::int32_t> y;
  std::vector<std::uint8_t> split;
  double n_train;
  std::vector<std::int64_t> dims;
  bool scalegnn = false;
  double eps = 0;

  using Matrix = std::vector<std::vector<double>>;
  Matrix times(const Matrix& a, const std::vector<double>& w, std::int64_t fin, std::int64_t fout) const {
    Matrix z(a.size(), std::vector<double>(fout, 0));
    for (std::size_t i = 0; i < a.size(); ++i)
      for (std::int64_t c = 0; c < fin; ++c)
        for (std::int64_t d = 0; d < fout; ++d) z[i][d] += a[i][c] * w[c * fout + d];
    return z;
  }
  Matrix aggregate(const Matrix& h) const {
    Matrix t(n, std::vector<double>(h[0].size(), 0));
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t k = 0; k < n; ++k)
        if (at[i][k] != 0)
          for (std::size_t c = 0; c < h[0].size(); ++c) t[i][c] += at[i][k] * h[k][c];
    return t;
  }
  double xent(const Matrix& z) const {
    std::vector<double> flat;
    for (auto& row : z) flat.insert(flat.end(), row.begin(), row.end());
    return xent_double(flat, n, dims.back(), y, split, n_train);
  }
  double scalegnn_loss(const std::vector<std::vector<double>>& w) const {
    const std::size_t L = dims.size() - 1;  // weight layers: input projection, L - 2 GNN layers, head
    Matrix h = times(x, w[0], dims[0], dims[1]);
    for (std::size_t l = 1; l + 1 < L; ++l) {
      const Matrix z = times(aggregate(h), w[l], dims[l], dims[l + 1]);
      const std::vector<double>& gamma = w[L + l - 1];
      for (std::int64_t i = 0; i < n; ++i) {
        double sq = 0;
        for (double v : z[i]) sq += v * v;
        const double inv = 1 / std::sqrt(sq / static_cast<double>(z[i].size()) + eps);
        for (std::size_t c = 0; c < z[i].size(); ++c) h[i][c] += std::max(0.0, z[i][c] * gamma[c] * inv);
      }
    }
    return xent(times(h, w[L - 1], dims[L - 1], dims[L]));
  }

  double loss(const std::vector<std::vector<double>>& w) const {
    if (scalegnn) return scalegnn_loss(w);
    std::vector<std::vector<double>> h = x;
    for (std::size_t l = 0; l + 1 < dims.size(); ++l) {
      const auto fin = dims[l], fout = dims[l + 1];
      std::vector<std::vector<double>> t(n, std::vector<double>(fin, 0)), z(n, std::vector<double>(fout, 0));
      for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t k = 0; k < n; ++k)
          if (at[i][k] != 0)
            for (std::int64_t c = 0; c < fin; ++c) t[i][c] += at[i][k] * h[k][c];
      for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t c = 0; c < fin; ++c)
          for (std::int64_t d = 0; d < fout; ++d) z[i][d] += t[i][c] * w[l][c * fout + d];
      if (l + 2 < dims.size())
        for (auto& row : z)
          for (auto& v : row) v = std::max(v, 0.0);
      h = z;
    }
    std::vector<double> flat;
    for (auto& row : h) flat.insert(flat.end(), row.begin(), row.end());
    return xent_double(flat, n, dims.back(), y, split, n_train);
  }
};

// The reference of `data` (dense Âᵀ, features, labels, split) for widths `dims`.
Reference reference_for(const Dataset& data, std::vector<std::int64_t> dims) {
  Reference ref;
  ref.dims = std::move(dims);
  ref.n = data.nodes();
  const NormalizedAdjacency g = normalized_graph(data);
  ref.at.assign(ref.n, std::vector<double>(ref.n, 0));
  for (std::int64_t i = 0; i < ref.n; ++i)
    for (std::int64_t k = g.a_hat_t->rowptr[i]; k < g.a_hat_t->rowptr[i + 1]; ++k) ref.at[i][g.a_hat_t->col[k]] = g.a_hat_t->val[k];
  ref.x.assign(ref.n, std::vector<double>(data.features));
  for (std::int64_t v = 0; v < ref.n; ++v) {
    std::vector<float> row(data.features);
    data.feature_rows(std::span<const std::int64_t>(&v, 1), 0, data.features, row.data());
    ref.x[v].assign(row.begin(), row.end());
  }
  ref.y = data.labels;
  ref.split = data.split;
  ref.n_train = static_cast<double>(data.count(ew::kTrain));
  return ref;
}

// The trainer's loss at `at` equals the reference's, and its gradient of
// every parameter entry the reference's central difference.
void check_gradients(const Reference& ref, const Weights& at, double loss, const Weights& grads, double rel,
                     double abs) {
  std::vector<std::vector<double>> w;
  for (const auto& wl : at) w.emplace_back(wl.begin(), wl.end());
  CHECK(loss == Approx(ref.loss(w)).epsilon(1e-5));
  const double h = 1e-6;
  for (std::size_t l = 0; l < w.size(); ++l)
    for (std::size_t k = 0; k < w[l].size(); ++k) {
      auto plus = w, minus = w;
      plus[l][k] += h, minus[l][k] -= h;
      const double fd = (ref.loss(plus) - ref.loss(minus)) / (2 * h);
      INFO("parameter " << l << " entry " << k);
      REQUIRE(grads[l][k] == Approx(fd).epsilon(rel).margin(abs));
    }
}

}  // namespace

TEST_CASE("full GCN gradients against finite differences", "[model][gradcheck]") {
  // tiny directed graph: forward uses Âᵀ, backward Â — a transposition bug shows here
  const Dataset data = load_dataset("sbm:nodes=24,classes=3,avg-degree=3,features=4,seed=9,directed=1,train=0.6");
  REQUIRE(data.directed);
  test::RunSpec spec;
  spec.model.layers = 3;
  spec.model.hidden = 5;
  spec.model.seed = 4;
  spec.train.epochs = 1;
  test::Job job(MPI_COMM_SELF, spec);
  job.setup(data);
  const Weights w0 = job.trainer().gather_weights();
  const auto [loss, grads] = job.trainer().loss_and_gradients();

  const Reference ref = reference_for(data, {data.features, 5, 5, data.classes});
  check_gradients(ref, w0, loss, grads, 1e-3, 2e-6);
}

TEST_CASE("ScaleGNN model gradients against finite differences", "[model][gradcheck]") {
  // Eq. 13-19 and RMSNorm's backward, W and γ, on a directed graph; γ of mixed
  // signs so that ReLU' depends on it.
  const Dataset data = load_dataset("sbm:nodes=20,classes=3,avg-degree=3,features=4,seed=5,directed=1,train=0.6");
  test::RunSpec spec;
  spec.model.name = "scalegnn";
  spec.model.layers = 2;
  spec.model.hidden = 5;
  spec.model.seed = 7;
  spec.model.norm_eps = 1e-3f;
  spec.train.epochs = 1;
  Weights start = test::run(MPI_COMM_SELF, spec, data).initial_weights;
  REQUIRE(start.size() == 4 + 2);  // W_in, W_1, W_2, W_out, γ_1, γ_2
  for (std::size_t k = 4; k < start.size(); ++k)
    for (std::size_t c = 0; c < start[k].size(); ++c) start[k][c] = (c % 3 == 2 ? -0.7f : 1.3f) + 0.1f * c;
  test::Job job(MPI_COMM_SELF, spec);
  job.setup(data, &start);
  CHECK(job.trainer().gather_weights() == start);
  const auto [loss, grads] = job.trainer().loss_and_gradients();
  REQUIRE(grads.size() == start.size());

  Reference ref = reference_for(data, {data.features, 5, 5, 5, data.classes});
  ref.scalegnn = true;
  ref.eps = 1e-3;
  check_gradients(ref, start, loss, grads, 2e-3, 5e-6);
}

TEST_CASE("threads per rank: --threads, then OMP_NUM_THREADS, then SLURM_CPUS_PER_TASK, then the affinity mask",
          "[threads]") {
  std::map<std::string, std::string> vars;
  auto env = [&](const char* name) -> const char* {
    const auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
  auto choose = [&](std::optional<std::int64_t> flag) { return choose_threads(flag, env, 16, 4); };
  CHECK(choose(std::nullopt).threads == 4);  // 16 CPUs over 4 ranks
  CHECK(choose(std::nullopt).source == "16 CPU(s) in the affinity mask / 4 rank(s) on the node");
  CHECK(choose_threads(std::nullopt, env, 2, 8).threads == 1);  // never 0
  vars["SLURM_CPUS_PER_TASK"] = "3";
  CHECK(choose(std::nullopt).threads == 3);
  CHECK(choose(std::nullopt).source == "SLURM_CPUS_PER_TASK=3");
  vars["OMP_NUM_THREADS"] = "2,1";  // one entry per nesting level: the first
  CHECK(choose(std::nullopt).threads == 2);
  CHECK(choose(std::nullopt).source == "OMP_NUM_THREADS=2,1");
  CHECK(choose(std::int64_t{5}).threads == 5);
  CHECK(choose(std::int64_t{5}).source == "--threads");
  for (const char* bad : {"0", "-1", "two", "2x", "99999999"}) {
    vars["OMP_NUM_THREADS"] = bad;
    INFO(bad);
    CHECK_THROWS_WITH(choose(std::nullopt), Catch::Contains("is not a positive thread count"));
  }
  CHECK(affinity_cpus() >= 1);
}

// Issue 33: named streams were offsets (kDropout + 64 * epoch + layer reached kGraph at
// epoch 4, kLabels at 8); now each use hashes its name and indices (rng::stream).
TEST_CASE("random streams: no two uses of a long run share a stream", "[model][rng]") {
  std::unordered_map<std::uint64_t, std::string> seen;
  std::string collisions;
  auto use = [&](std::uint64_t s, const std::string& what) {
    const auto [it, fresh] = seen.emplace(s, what);
    if (!fresh && collisions.size() < 400) collisions += what + " = " + it->second + "; ";
  };
  using rng::Stream;
  // 1 000 epochs of 64 mini-batch steps (dropout's key is the step), 8 GCN layers plus
  // ScaleGNN's input projection and head (10 layer indices); weights and RMSNorm scales
  constexpr std::uint64_t kSteps = 1000 * 64, kLayers = 10;
  for (std::uint64_t step = 0; step < kSteps; ++step)
    for (std::uint64_t l = 0; l < kLayers; ++l) use(rng::stream(Stream::dropout, step, l), "dropout");
  for (std::uint64_t l = 0; l < 2 * kLayers; ++l) use(rng::stream(Stream::weights, l), "weights");
  for (std::uint64_t v = 0; v < 16; ++v) {  // permutation variants (plexus: one per adjacency version)
    use(rng::stream(Stream::permutation, v), "permutation");
    use(rng::stream(Stream::balanced_permutation, v), "balanced_permutation");
  }
  for (const auto& [s, what] : {std::pair{Stream::features, "features"}, std::pair{Stream::class_signs, "class_signs"},
                                std::pair{Stream::graph, "graph"}, std::pair{Stream::labels, "labels"},
                                std::pair{Stream::split, "split"}, std::pair{Stream::sample, "sample"}})
    use(rng::stream(s), what);
  INFO(collisions);
  CHECK(collisions.empty());
  CHECK(seen.size() == kSteps * kLayers + 2 * kLayers + 32 + 6);
}
