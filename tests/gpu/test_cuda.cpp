// GPU tests: every CUDA backend kernel against the CPU backend on the same
// data, and strategies run with --backend cuda (NCCL) against `serial` on the
// CPU. Skipped (exit 77) where there is no device.

#include <catch2/catch.hpp>

#include <random>

#include "backends/factory.hpp"
#include "tests/support/harness.hpp"
#include "tests/support/random.hpp"

using namespace gcnlab;
using gcnlab::test::random_vector;

namespace {

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

TEST_CASE("strategies on the CUDA backend match serial on the CPU", "[gpu][equivalence]") {
  const Dataset data = load_dataset("sbm:nodes=1001,classes=5,avg-degree=8,features=19,seed=3");
  test::RunSpec serial;
  serial.model.hidden = 13;
  serial.model.dropout = 0.5f;
  serial.train.epochs = 5;
  const RunResult reference = test::run(MPI_COMM_SELF, serial, data);
  for (const StrategyInfo& s : strategies()) {  // every registered distributed full-graph strategy
    if (!s.caps.full_graph || !test::distributed(s.name)) continue;
    const std::string& algo = s.name;
    INFO(algo);
    test::RunSpec spec = serial;
    spec.algo = algo;
    spec.backend = "cuda";
    const RunResult r = test::run(MPI_COMM_WORLD, spec, data);
    test::require_same_model(reference, r);
    test::require_measured_equals_model(r);
  }
  // bf16 partial sums on NCCL (ncclBfloat16): bytes equal the model, the loss within bf16 rounding
  test::RunSpec spec = serial;
  spec.algo = "plexus-3d";
  spec.backend = "cuda";
  spec.comm_precision = "bf16";
  const RunResult r = test::run(MPI_COMM_WORLD, spec, data);
  test::require_measured_equals_model(r);
  for (std::size_t e = 0; e < r.epochs.size(); ++e) CHECK(r.epochs[e].loss == Approx(reference.epochs[e].loss).epsilon(1e-2));
}
