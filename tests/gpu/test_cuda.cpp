// GPU tests: every CUDA backend kernel against the CPU backend on the same
// data, and strategies run with --backend cuda (NCCL) against `serial` on the
// CPU. Skipped (exit 77) where there is no device.

#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <random>

#include "backends/factory.hpp"
#include "common/comm/process_grid.hpp"
#include "common/dist/row_attention.hpp"
#include "tests/support/harness.hpp"
#include "tests/support/random.hpp"

using namespace gcnlab;
using gcnlab::test::random_vector;

namespace gcnlab::test {
extern std::string job_gpu_comm;  // nccl, or mpi where the job's ranks share a GPU (gpu_main.cpp)
}

namespace {

// One row of the device table (rank 0 prints it; `ctest -V -L gpu` and the test's own
// output show it): the largest |loss - serial on the CPU| over the epochs, relative,
// and whether every rank's measured bytes equal its model in every category.
void table_row(const std::string& run, const RunResult& reference, const RunResult& r) {
  double worst = 0;
  for (std::size_t e = 0; e < r.epochs.size() && e < reference.epochs.size(); ++e)
    worst = std::max(worst, std::abs(r.epochs[e].loss - reference.epochs[e].loss) / std::abs(reference.epochs[e].loss));
  double bytes = 0;
  for (const RankReport& rr : r.ranks)
    for (int c = 0; c < kNumCategories; ++c)
      if (is_communication(static_cast<Category>(c))) bytes += rr.per_epoch[c].wire_bytes;
  if (test::world_rank() == 0)
    std::printf("gpu-table | %s | %d | %.2e | %.0f | %s |\n", run.c_str(), test::world_size(), worst, bytes,
                test::measured_equals_model(r) ? "yes" : "NO");
}

void require_close(const std::vector<float>& a, const std::vector<float>& b, float tol = 1e-5f) {
  REQUIRE(a.size() == b.size());
  for (std::size_t k = 0; k < a.size(); ++k) REQUIRE(a[k] == Approx(b[k]).margin(tol));
}

}  // namespace

TEST_CASE("CUDA kernels match the CPU backend", "[gpu]") {
  auto cpu = make_backend("cpu", {1, 0});
  auto gpu = make_backend("cuda", {1, 0});
  const std::int64_t n = 57, f = 13;
  std::vector<Coo> e;
  std::mt19937 gen(4);
  for (std::int64_t i = 1; i < n; ++i)
    for (int k = 0; k < 5; ++k) e.push_back({i, static_cast<std::int64_t>(gen() % n), 0.5f});
  const HostCsr h = csr_from_coo(n, n, e, true);
  std::vector<Coo> few;  // every 7th row: stored with compressed rows (the cuSPARSE-free path)
  for (const Coo& c : e)
    if (c.row % 7 == 3) few.push_back(c);
  const HostCsr hyper = csr_from_coo(n, n, few, true);
  const auto x = random_vector(n * f, 1), y0 = random_vector(n * f, 2), w = random_vector(f * 7, 3);
  for (const HostCsr* m : {&h, &hyper})
    for (float beta : {0.f, 1.f, 0.5f}) {
      std::vector<float> out[2];
      int k = 0;
      for (Backend* be : {cpu.get(), gpu.get()}) {
        const Csr a = upload(*be, *m, RowStorage::sparse_if_smaller);
        REQUIRE(a.compressed == (m == &hyper));
        Dense dx = make_dense(*be, n, f, x), dy = make_dense(*be, n, f, y0);
        be->spmm(a, dx, dy, beta);
        out[k++] = dy.download();
      }
      require_close(out[0], out[1]);
    }
  for (Op oa : {Op::N, Op::T})
    for (Op ob : {Op::N, Op::T}) {
      std::vector<float> out[2];
      int k = 0;
      for (Backend* be : {cpu.get(), gpu.get()}) {
        Dense a = oa == Op::N ? make_dense(*be, n, f, x) : make_dense(*be, f, n, x);
        Dense b = ob == Op::N ? make_dense(*be, f, 7, w) : make_dense(*be, 7, f, w);
        Dense c(*be, n, 7);
        be->fill(c, 1.f);
        be->gemm(oa, ob, 1.f, a, b, 0.5f, c);
        out[k++] = c.download();
      }
      require_close(out[0], out[1], 1e-4f);
    }
  // element-wise functors, dropout masks and the loss
  std::vector<std::int64_t> ids(n);
  std::vector<std::int32_t> labels(n);
  std::vector<std::uint8_t> split(n);
  for (std::int64_t i = 0; i < n; ++i) ids[i] = 3 * i, labels[i] = static_cast<std::int32_t>(i % f), split[i] = i % 4;
  std::vector<float> out[2][6];
  std::vector<bf16> packed[2];
  XentSums sums[2];
  int k = 0;
  for (Backend* be : {cpu.get(), gpu.get()}) {
    Dense dx = make_dense(*be, n, f, x), dz = make_dense(*be, n, f, y0), o(*be, n, f), g(*be, n, f);
    auto dids = make_buffer<std::int64_t>(*be, ids);
    auto dl = make_buffer<std::int32_t>(*be, labels);
    auto ds = make_buffer<std::uint8_t>(*be, split);
    be->relu(dz, o);
    out[k][0] = o.download();
    be->relu_backward(dx, dz, o);
    out[k][1] = o.download();
    be->dropout(dx, o, dids.data(), 5, {9, 2, 0.4f});
    out[k][2] = o.download();
    Buffer<float> mx(*be, n), sm(*be, n);
    be->row_max(dz, mx.data());
    be->row_sum_exp(dz, mx.data(), sm.data());
    sums[k] = be->softmax_xent(dz, 0, mx.data(), sm.data(), dl.data(), ds.data(), 0.1f, g);
    out[k][3] = g.download();
    Dense t(*be, f, n);
    be->transpose(dx, t);
    out[k][4] = t.download();
    Buffer<bf16> wire(*be, static_cast<std::size_t>(n * f));
    be->pack_bf16(dx, wire.data());
    packed[k] = wire.download();
    be->unpack_bf16(wire.data(), o);
    out[k][5] = o.download();
    ++k;
  }
  for (int t = 0; t < 6; ++t) require_close(out[0][t], out[1][t]);
  for (std::size_t i = 0; i < packed[0].size(); ++i) REQUIRE(packed[0][i].bits == packed[1][i].bits);
  CHECK(sums[1].loss == Approx(sums[0].loss).epsilon(1e-5));
  CHECK(sums[1].correct == sums[0].correct);
  CHECK(sums[1].counted == sums[0].counted);
}

namespace {

const char* kUndirected = "sbm:nodes=1001,classes=5,avg-degree=8,features=19,seed=3";
const char* kDirected = "sbm:nodes=1001,classes=5,avg-degree=6,features=19,seed=4,directed=1";

test::RunSpec spec_for(const std::string& algo) {
  test::RunSpec s;
  s.algo = algo;
  s.model.hidden = 13;
  s.model.dropout = 0.5f;  // Adam (the default optimiser), feature dropout on every layer
  s.model.weight_decay = 5e-4f;
  s.train.epochs = 5;
  return s;
}

}  // namespace

TEST_CASE("CUDA graph-attention edge kernels match the CPU backend, concatenated and averaged heads", "[gpu]") {
  // common/backend/edge_ops.hpp: the scores' softmax, the SpMMs with per-edge,
  // per-head values (forward and through the transpose's permutation), the
  // SDDMM, the softmax's backward and the edge sums; averaged heads
  // (HeadSplit::mean: Z class-major, the output the heads' mean) and
  // concatenated ones whose view starts inside a head; full and compressed rows.
  auto cpu = make_backend("cpu", {1, 0});
  auto gpu = make_backend("cuda", {1, 0});
  const int H = 3;
  const std::int64_t rows = 41, n = 37, cols = 5;
  std::mt19937 gen(6);
  std::vector<Coo> e;
  for (std::int64_t i = 0; i < rows; ++i)
    for (int k = 0; k < 4; ++k) e.push_back({i, static_cast<std::int64_t>(gen() % n), 0.f});
  std::vector<Coo> few;
  for (const Coo& c : e)
    if (c.row % 7 == 3) few.push_back(c);
  const auto src = random_vector(n * H, 1), dst = random_vector(rows * H, 2);
  for (const std::vector<Coo>* pattern : {&e, &few}) {
    const HostCsr h = csr_from_coo(rows, n, *pattern, true);
    std::vector<std::int64_t> perm;
    const HostCsr th = transpose_pattern(h, perm);
    for (const ew::HeadSplit hs : {ew::HeadSplit{2, cols, 0}, ew::HeadSplit{0, cols, H}}) {
      const std::int64_t zc = hs.mean ? cols * H : H * cols - 2, oc = hs.mean ? cols : zc;  // Z's, the output's
      const auto z = random_vector(n * zc, 3), g = random_vector(rows * oc, 4);
      std::vector<float> out[2][11];
      int k = 0;
      for (Backend* be : {cpu.get(), gpu.get()}) {
        const Csr a = upload(*be, h, RowStorage::sparse_if_smaller), t = upload(*be, th, RowStorage::sparse_if_smaller);
        const auto dperm = make_buffer<std::int64_t>(*be, perm);
        Dense ds = make_dense(*be, n, H, src), dd = make_dense(*be, rows, H, dst);
        Dense dz = make_dense(*be, n, zc, z), dg = make_dense(*be, rows, oc, g), y(*be, rows, oc), yt(*be, n, zc);
        Buffer<float> alpha(*be, static_cast<std::size_t>(h.nnz() * H)), d(*be, alpha.size()),
            m(*be, static_cast<std::size_t>(rows * H)), s(*be, m.size()), sums(*be, static_cast<std::size_t>(n * H));
        be->edge_scores(a, H, ds.data(), dd.data(), 0.2f, alpha.data());
        be->edge_row_max(a, H, alpha.data(), m.data());
        be->edge_exp_row_sum(a, H, m.data(), alpha.data(), s.data());
        be->edge_scale_rows(a, H, s.data(), alpha.data());
        be->spmm_edges(a, H, hs, alpha.data(), nullptr, dz, y);
        be->spmm_edges(t, H, hs, alpha.data(), dperm.data(), dg, yt);
        be->sddmm(a, H, hs, dg, dz, d.data());
        be->edge_row_dot(a, H, alpha.data(), d.data(), m.data());
        be->edge_softmax_backward(a, H, alpha.data(), m.data(), ds.data(), dd.data(), 0.2f, d.data());
        be->edge_row_sums(t, H, d.data(), dperm.data(), sums.data());
        out[k][0] = alpha.download(), out[k][1] = y.download(), out[k][2] = yt.download();
        out[k][3] = d.download(), out[k][4] = m.download(), out[k][5] = sums.download();
        // the attention's per-head dots of Z's rows and their adjoint (z's first columns as the two vectors)
        Dense hsrc(*be, n, H), hdst(*be, n, H);
        be->head_dots(dz, dz.data(), dz.data() + zc, hs, hsrc, hdst);
        // their backward: the adjoint into yt, the vectors' gradients (Z's column dots with hsrc and hdst)
        Buffer<float> da_src(*be, static_cast<std::size_t>(zc)), da_dst(*be, static_cast<std::size_t>(zc));
        be->head_dots_backward(hsrc, hdst, dz.data(), dz.data() + zc, hs, dz, yt, da_src.data(), da_dst.data());
        out[k][6] = hsrc.download(), out[k][7] = hdst.download(), out[k][8] = yt.download();
        out[k][9] = da_src.download(), out[k][10] = da_dst.download();
        ++k;
      }
      for (int q = 0; q < 11; ++q) {
        INFO("pattern " << (pattern == &e ? "full" : "compressed") << " heads " << (hs.mean ? "averaged" : "concatenated")
                        << " output " << q);
        require_close(out[0][q], out[1][q]);
      }
    }
  }
}

TEST_CASE("CUDA edge kernels' row walk: power-of-two heads, lanes per row, a hub in chunks, reruns bitwise", "[gpu]") {
  // The edge kernels' fast path (H | 32: each lane holds one head, per-head sums in a
  // butterfly; backends/row_chunks.hpp's walk): a pattern with a hub row of 5000 edges
  // (a long row: 79 chunks of a warp at 4 heads, combined in order), rows of 1 and 31-33
  // edges (a warp's width ± 1 elements at 1 head-lane group), and empty rows, full and
  // compressed storage; a thin pattern of rows of 0-3 edges and one of 100 (groups of H
  // lanes, one a head; the 100-edge row long, in 2 and 4 chunks at 4 and 8 heads); a mid
  // pattern of rows of 10-14 edges and one of 300 (groups of 8 and 16 lanes at 4 and 8
  // heads, two lanes a head; the 300-edge row in 5 and 10 chunks).
  // Every output against the CPU, then a second device run bitwise equal to the first;
  // the one-visit softmax equal to the four passes.
  auto cpu = make_backend("cpu", {1, 0});
  auto gpu = make_backend("cuda", {1, 0});
  const std::int64_t rows = 300, n = 5003;
  std::mt19937 gen(11);
  std::vector<Coo> e;
  for (std::int64_t j = 0; j < 5000; ++j) e.push_back({7, j, 0.f});  // the hub
  for (std::int64_t i = 0; i < rows; ++i) {
    if (i == 7 || i % 5 == 0) continue;  // every fifth row empty
    const int degree = i % 11 == 1 ? 1 : static_cast<int>(31 + i % 3);  // 1, or 31, 32, 33
    for (int k = 0; k < degree; ++k) e.push_back({i, static_cast<std::int64_t>(gen() % n), 0.f});
  }
  std::vector<Coo> few;
  for (const Coo& c : e)
    if (c.row % 3 == 1) few.push_back(c);  // compressed rows, the hub among them
  std::vector<Coo> thin, mid;
  for (std::int64_t i = 0; i < rows; ++i) {
    for (int k = 0; k < (i == 9 ? 100 : static_cast<int>(i % 4)); ++k)
      thin.push_back({i, static_cast<std::int64_t>(gen() % n), 0.f});
    for (int k = 0; k < (i == 9 ? 300 : static_cast<int>(10 + i % 5)); ++k)
      mid.push_back({i, static_cast<std::int64_t>(gen() % n), 0.f});
  }
  struct Shape { int heads; ew::HeadSplit hs; std::int64_t zc, oc; };
  // Concatenated 4 x 32, 8 x 8, a rank's columns [32, 96) of 4 x 32 (heads 0 and 3 not
  // local: their SDDMM is 0); 8 averaged heads of 8.
  const std::vector<Shape> shapes = {{4, ew::HeadSplit{0, 32, 0}, 128, 128},
                                     {8, ew::HeadSplit{0, 8, 0}, 64, 64},
                                     {4, ew::HeadSplit{32, 32, 0}, 64, 64},
                                     {8, ew::HeadSplit{0, 8, 8}, 64, 8}};
  for (const std::vector<Coo>* pattern : {&e, &few, &thin, &mid}) {
    const HostCsr h = csr_from_coo(rows, n, *pattern, true);
    std::vector<std::int64_t> perm;
    const HostCsr th = transpose_pattern(h, perm);
    for (const Shape& sh : shapes) {
      const int H = sh.heads;
      const auto src = random_vector(n * H, 1), dst = random_vector(rows * H, 2);
      const auto z = random_vector(n * sh.zc, 3), g = random_vector(rows * sh.oc, 4);
      std::vector<float> out[3][7];
      Backend* order[3] = {cpu.get(), gpu.get(), gpu.get()};
      for (int k = 0; k < 3; ++k) {
        Backend* be = order[k];
        const Csr a = upload(*be, h, RowStorage::sparse_if_smaller), t = upload(*be, th, RowStorage::sparse_if_smaller);
        const auto dperm = make_buffer<std::int64_t>(*be, perm);
        std::vector<std::int64_t> ids(static_cast<std::size_t>(std::max(rows, n)));
        for (std::size_t q = 0; q < ids.size(); ++q) ids[q] = static_cast<std::int64_t>(q);
        const auto dids = make_buffer<std::int64_t>(*be, ids);
        Dense ds = make_dense(*be, n, H, src), dd = make_dense(*be, rows, H, dst);
        Dense dz = make_dense(*be, n, sh.zc, z), dg = make_dense(*be, rows, sh.oc, g), y(*be, rows, sh.oc),
              yt(*be, n, sh.zc);
        Buffer<float> alpha(*be, static_cast<std::size_t>(h.nnz() * H)), beta(*be, alpha.size()), d(*be, alpha.size()),
            m(*be, static_cast<std::size_t>(rows * H)), s(*be, m.size()), sums(*be, static_cast<std::size_t>(n * H));
        be->edge_scores(a, H, ds.data(), dd.data(), 0.2f, alpha.data());
        be->edge_row_max(a, H, alpha.data(), m.data());
        be->edge_exp_row_sum(a, H, m.data(), alpha.data(), s.data());
        be->edge_scale_rows(a, H, s.data(), alpha.data());
        {  // the four passes by one warp a row (SoftmaxByWarp)
          Buffer<float> e1(*be, alpha.size()), m1(*be, m.size()), s1(*be, s.size());
          be->edge_softmax(a, H, ds.data(), dd.data(), 0.2f, e1.data(), m1.data(), s1.data());
          CHECK(e1.download() == alpha.download());  // bitwise, on each backend
          CHECK(m1.download() == m.download());
          CHECK(s1.download() == s.download());
        }
        be->edge_dropout(a, H, alpha.data(), beta.data(), dids.data(), dids.data(), {5, 1, 0.3f});
        be->spmm_edges(a, H, sh.hs, beta.data(), nullptr, dz, y);
        be->spmm_edges(t, H, sh.hs, beta.data(), dperm.data(), dg, yt);
        be->sddmm(a, H, sh.hs, dg, dz, d.data());
        be->edge_row_dot(a, H, alpha.data(), d.data(), m.data());
        be->edge_softmax_backward(a, H, alpha.data(), m.data(), ds.data(), dd.data(), 0.2f, d.data());
        be->edge_row_sums(t, H, d.data(), dperm.data(), sums.data());
        out[k][0] = alpha.download(), out[k][1] = beta.download(), out[k][2] = y.download();
        out[k][3] = yt.download(), out[k][4] = d.download(), out[k][5] = m.download(), out[k][6] = sums.download();
      }
      for (int q = 0; q < 7; ++q) {
        INFO("pattern " << (pattern == &e ? "full" : pattern == &few ? "compressed" : pattern == &thin ? "thin" : "mid")
                        << " heads " << H << " output " << q);
        require_close(out[0][q], out[1][q], 1e-4f);
        CHECK(out[1][q] == out[2][q]);  // bitwise
      }
    }
  }
}

TEST_CASE("CUDA column sums: chunked, in double, against the CPU, reruns bitwise", "[gpu]") {
  // A bias's gradient over 1, 2047-2049 (one chunk ± 1) and 70 001 rows, 1, 37 and 130 columns;
  // RMSNorm's dγ through the same reduction.
  auto cpu = make_backend("cpu", {1, 0});
  auto gpu = make_backend("cuda", {1, 0});
  for (std::int64_t rows : {1, 2047, 2048, 2049, 70001})
    for (std::int64_t cols : {1, 37, 130}) {
      const auto x = random_vector(rows * cols, 5);
      std::vector<float> out[3];
      Backend* order[3] = {cpu.get(), gpu.get(), gpu.get()};
      for (int k = 0; k < 3; ++k) {
        Dense dx = make_dense(*order[k], rows, cols, x);
        Buffer<float> o(*order[k], static_cast<std::size_t>(cols));
        order[k]->column_sums(dx, o.data());
        out[k] = o.download();
      }
      INFO(rows << " x " << cols);
      require_close(out[0], out[1], 1e-5f * static_cast<float>(std::sqrt(static_cast<double>(rows))));
      CHECK(out[1] == out[2]);
    }
}

TEST_CASE("CUDA inner product and an SpMM with a row term against the CPU, reruns bitwise", "[gpu]") {
  // GIN's dε = <X, D> over 1, 2049 (one chunk + 1) and 70 001 rows; its (1 + ε) h_i
  // added to the aggregation (Backend::spmm_plus: after cuSPARSE's product on the device),
  // with a scale on the host and one in backend memory.
  auto cpu = make_backend("cpu", {1, 0});
  auto gpu = make_backend("cuda", {1, 0});
  for (std::int64_t rows : {1, 2049, 70001})
    for (std::int64_t cols : {1, 37, 130}) {
      const auto x = random_vector(rows * cols, 6), y = random_vector(rows * cols, 7);
      std::vector<float> out[3];
      Backend* order[3] = {cpu.get(), gpu.get(), gpu.get()};
      for (int k = 0; k < 3; ++k) {
        Dense dx = make_dense(*order[k], rows, cols, x), dy = make_dense(*order[k], rows, cols, y);
        Buffer<float> o(*order[k], 1);
        order[k]->inner_product(dx, dy, o.data());
        out[k] = o.download();
      }
      INFO(rows << " x " << cols);
      require_close(out[0], out[1], 1e-5f * static_cast<float>(std::sqrt(static_cast<double>(rows * cols))));
      CHECK(out[1] == out[2]);
    }
  const std::int64_t n = 300, f = 40;
  std::vector<Coo> e;
  std::mt19937 gen(8);
  for (std::int64_t i = 0; i < n; i += 2)
    for (int k = 0; k < 4; ++k) e.push_back({i, static_cast<std::int64_t>(gen() % n), 1.f});
  const HostCsr h = csr_from_coo(n, n, e, false);
  const auto x = random_vector(n * f, 9), r = random_vector(n * f, 10);
  for (const bool on_backend : {false, true}) {
    std::vector<float> out[2];
    int k = 0;
    for (Backend* be : {cpu.get(), gpu.get()}) {
      const Csr a = upload(*be, h, RowStorage::sparse_if_smaller);
      const auto eps = make_buffer<float>(*be, std::vector<float>{0.25f});
      Dense dx = make_dense(*be, n, f, x), dr = make_dense(*be, n, f, r), dy(*be, n, f);
      be->spmm_plus(a, dx, on_backend ? RowTerm{dr, 1.f, eps.data()} : RowTerm{dr, 1.5f, nullptr}, dy);
      out[k++] = dy.download();
    }
    require_close(out[0], out[1]);
  }
}

TEST_CASE("every registered strategy on the CUDA backend matches serial on the CPU", "[gpu][equivalence]") {
  // Every strategy on its grid of the job's ranks (one rank per GPU), a directed and an
  // undirected graph, fp32 and, where the strategy has it, bf16 communication (NCCL's
  // ncclBfloat16): the model equal to the CPU's serial run, measured bytes equal to the model.
  // scalegnn-4d trains full-graph epochs with B = N (its equivalence to serial, test_scalegnn).
  for (const char* dataset : {kUndirected, kDirected}) {
    const Dataset data = load_dataset(dataset);
    const RunResult reference = test::run(MPI_COMM_SELF, spec_for("serial"), data);
    for (const StrategyInfo& s : strategies()) {
      const auto grids = test::job_grids(s.name, test::world_size());
      if (grids.empty()) continue;  // serial on more than one rank
      for (const char* precision : {"fp32", "bf16"}) {
        if (std::string(precision) == "bf16" && !s.caps.bf16_comm) continue;
        const std::string run = fmt::format("{} {} {} {}", s.name, format_grid(grids.front()),
                                            dataset == kDirected ? "directed" : "undirected", precision);
        INFO(run);
        test::RunSpec spec = spec_for(s.name);
        spec.grid = grids.front();
        spec.backend = "cuda";
        spec.gpu_comm = test::job_gpu_comm;
        spec.comm_precision = precision;
        if (!s.caps.full_graph) spec.train.batch_size = data.nodes();
        const RunResult r = test::run(MPI_COMM_WORLD, spec, data);
        table_row(run, reference, r);
        test::require_measured_equals_model(r);
        if (std::string(precision) == "fp32" || test::world_size() == 1) {
          test::require_same_model(reference, r);  // bf16 on one rank: nothing goes on the wire
        } else {
          for (std::size_t e = 0; e < r.epochs.size(); ++e)
            CHECK(r.epochs[e].loss == Approx(reference.epochs[e].loss).epsilon(1e-2));  // bf16 partial sums
        }
      }
    }
  }
}

TEST_CASE("the model's and the trainer's options on the CUDA backend match the CPU", "[gpu][equivalence]") {
  // Each once: ScaleGNN's model, learned input features, mini-batch sampling with the
  // prefetch thread, and Plexus's blocked aggregation overlapped on the second stream.
  const Dataset data = load_dataset(kDirected);
  struct Case {
    std::string name;
    std::function<void(test::RunSpec&)> set;
  };
  const std::vector<Case> cases = {
      {"--model scalegnn", [](test::RunSpec& s) {
         s.model.name = "scalegnn";
         s.model.layers = 2;
       }},
      {"--learn-features", [](test::RunSpec& s) { s.model.learn_features = true; }},
      {"--model sage", [](test::RunSpec& s) { s.model.name = "sage"; }},
      {"--model gin --train-eps", [](test::RunSpec& s) {
         s.model.name = "gin";
         s.model.train_eps = true;
       }},
      {"--model gat --heads 4", [](test::RunSpec& s) {
         s.model.name = "gat";
         s.model.heads = 4;
         s.model.optimizer = "sgd", s.model.lr = 0.5f;  // as test_models: Adam magnifies GAT's rounding
       }},
      {"--model gat --heads 4 --concat off --output-heads 3", [](test::RunSpec& s) {
         s.model.name = "gat";
         s.model.heads = 4;
         s.model.optimizer = "sgd", s.model.lr = 0.5f;
         s.model.concat = false;
         s.model.output_heads = 3;
       }},
      {"--batch-size 300 --prefetch on", [](test::RunSpec& s) {
         s.train.batch_size = 300;
         s.train.prefetch = true;
       }},
  };
  for (const Case& c : cases) {
    test::RunSpec serial = spec_for("serial");
    c.set(serial);
    const RunResult reference = test::run(MPI_COMM_SELF, serial, data);
    for (const std::string algo : {"serial", "plexus-3d", "scalegnn-4d"}) {
      const auto grids = test::job_grids(algo, test::world_size());
      if (grids.empty()) continue;
      const bool minibatch = serial.train.batch_size > 0;
      if ((algo == "plexus-3d" && minibatch) || (algo == "scalegnn-4d" && serial.model.learn_features)) continue;
      if (algo == "scalegnn-4d" && serial.model.name != "gcn" && serial.model.name != "scalegnn")
        continue;  // sage, gin and gat: full-graph only (ModelDemands)
      test::RunSpec spec = serial;
      spec.algo = algo;
      spec.grid = grids.front();
      spec.backend = "cuda";
      spec.gpu_comm = test::job_gpu_comm;
      if (algo == "scalegnn-4d" && !minibatch) spec.train.batch_size = data.nodes();
      if (algo == "plexus-3d" && serial.model.name == "scalegnn")
        spec.options["permutation"] = "none";  // its residuals are resharded in one vertex ordering
      const std::string run = fmt::format("{} {} {}", algo, format_grid(grids.front()), c.name);
      INFO(run);
      const RunResult r = test::run(MPI_COMM_WORLD, spec, data);
      table_row(run, reference, r);
      test::require_measured_equals_model(r);
      test::require_same_model(reference, r);
    }
  }
  const RunResult reference = test::run(MPI_COMM_SELF, spec_for("serial"), data);
  for (const char* blocks : {"1", "3"}) {
    test::RunSpec spec = spec_for("plexus-3d");
    spec.grid = test::job_grids("plexus-3d", test::world_size()).front();
    spec.backend = "cuda";
    spec.gpu_comm = test::job_gpu_comm;
    spec.options["agg-blocks"] = blocks;  // 3: the blocks' all-reduces on the communication stream
    const std::string run = fmt::format("plexus-3d {} --agg-blocks {}", format_grid(spec.grid), blocks);
    INFO(run);
    const RunResult r = test::run(MPI_COMM_WORLD, spec, data);
    table_row(run, reference, r);
    test::require_measured_equals_model(r);
    test::require_same_model(reference, r);
  }
}

TEST_CASE("two identical runs on the CUDA backend give the same bits", "[gpu][determinism]") {
  // The determinism contract on the device: cuSPARSE's SpMM (CSR_ALG2), cuBLAS, the
  // kernels and NCCL's reductions give the same bits on a rerun, the overlapped
  // blocked aggregation and the prefetched mini-batches included.
  const Dataset data = load_dataset(kDirected);
  for (const std::string model : {"sage", "gin", "gat"}) {  // every model's kernels, serial
    test::RunSpec spec = spec_for("serial");
    spec.backend = "cuda";
    spec.gpu_comm = test::job_gpu_comm;
    spec.model.name = model;
    spec.model.heads = 4;
    spec.model.train_eps = model == "gin";
    INFO(model);
    const RunResult a = test::run(MPI_COMM_WORLD, spec, data), b = test::run(MPI_COMM_WORLD, spec, data);
    // No host round trip inside an epoch: the backend interface copies nothing to the host
    // (the loss's sums come back inside softmax_xent, one copy of its per-block sums).
    for (const RankReport& rank : a.ranks)
      for (const KernelWork& category : rank.work) CHECK(category[static_cast<int>(Kernel::to_host)].calls == 0);
    const bool same = a.final_weights == b.final_weights;
    if (test::world_rank() == 0)
      std::printf("gpu-table | serial --model %s rerun | %d | bitwise %s |\n", model.c_str(), test::world_size(),
                  same ? "equal" : "DIFFERENT");
    test::require_bitwise_equal(a, b);
  }
  for (const std::string algo : {"serial", "1d", "2d", "plexus-3d", "scalegnn-4d"}) {
    const auto grids = test::job_grids(algo, test::world_size());
    if (grids.empty()) continue;
    test::RunSpec spec = spec_for(algo);
    spec.grid = grids.back();
    spec.backend = "cuda";
    spec.gpu_comm = test::job_gpu_comm;
    if (algo == "plexus-3d") spec.options["agg-blocks"] = "3";
    if (algo == "scalegnn-4d") spec.train.batch_size = 300;
    INFO(algo);
    const RunResult a = test::run(MPI_COMM_WORLD, spec, data), b = test::run(MPI_COMM_WORLD, spec, data);
    const bool same = a.final_weights == b.final_weights;
    if (test::world_rank() == 0)
      std::printf("gpu-table | %s %s rerun | %d | bitwise %s |\n", algo.c_str(), format_grid(spec.grid).c_str(),
                  test::world_size(), same ? "equal" : "DIFFERENT");
    test::require_bitwise_equal(a, b);
  }
}
