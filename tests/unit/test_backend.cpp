// CPU backend kernels against naive loops; element-wise functors; init and
// dropout independence of the grid.

#include <catch2/catch.hpp>
#include <cmath>
#include <random>

#include "backends/factory.hpp"
#include "common/backend/backend.hpp"
#include "common/model/init.hpp"
#include "tests/support/random.hpp"

using namespace gcnlab;
using gcnlab::test::random_vector;

namespace {

// rows x cols with ~density nonzeros, row 0 empty, row 1 dense, last row empty.
HostCsr random_csr(std::int64_t rows, std::int64_t cols, double density, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::bernoulli_distribution keep(density);
  std::vector<Coo> e;
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) {
      if (i == 0 || i == rows - 1) continue;
      if (i == 1 || keep(gen)) e.push_back({i, j, u(gen)});
    }
  return csr_from_coo(rows, cols, std::move(e), false);
}

std::unique_ptr<Backend> cpu() { return make_backend("cpu", {2}); }

}  // namespace

TEST_CASE("spmm matches a naive loop, with full and compressed rows", "[backend][spmm]") {
  auto be = cpu();
  // the last shape is hypersparse: most rows empty, stored with compressed rows
  for (auto [rows, cols, f, density] : {std::tuple{37, 23, 5, 0.2}, std::tuple{8, 40, 1, 0.2}, std::tuple{50, 50, 17, 0.2},
                                        std::tuple{300, 40, 6, 0.004}})
    for (RowStorage storage : {RowStorage::full, RowStorage::sparse_if_smaller}) {
      const HostCsr h = random_csr(rows, cols, density, rows * 31 + cols);
      const std::size_t before = be->current_bytes();
      const Csr a = upload(*be, h, storage);
      CHECK(a.compressed == (storage == RowStorage::sparse_if_smaller && density < 0.01));
      CHECK(static_cast<double>(be->current_bytes() - before) == csr_bytes(a));
      const auto x = random_vector(cols * f, 1), y0 = random_vector(rows * f, 2);
      for (float beta : {0.f, 1.f, 0.5f}) {
        Dense dx = make_dense(*be, cols, f, x), dy = make_dense(*be, rows, f, y0);
        be->spmm(a, dx, dy, beta);
        const auto y = dy.download();
        for (std::int64_t i = 0; i < rows; ++i)
          for (std::int64_t j = 0; j < f; ++j) {
            double ref = beta * y0[i * f + j];
            for (std::int64_t k = h.rowptr[i]; k < h.rowptr[i + 1]; ++k) ref += h.val[k] * x[h.col[k] * f + j];
            REQUIRE(y[i * f + j] == Approx(ref).margin(1e-5));
          }
      }
    }
}

TEST_CASE("spmm writes into a column block of a wider matrix (view with ld)", "[backend][spmm]") {
  auto be = cpu();
  const HostCsr h = random_csr(9, 6, 0.5, 3);
  const Csr a = upload(*be, h);
  const auto x = random_vector(6 * 4, 4);
  Dense dx = make_dense(*be, 6, 4, x);
  Dense wide = make_dense(*be, 9, 10, std::vector<float>(90, 7.f));
  View block{wide.data() + 3, 9, 4, 10};
  be->spmm(a, dx, block, 0.f);
  const auto y = wide.download();
  for (std::int64_t i = 0; i < 9; ++i)
    for (std::int64_t j = 0; j < 10; ++j) {
      if (j < 3 || j >= 7) {
        REQUIRE(y[i * 10 + j] == 7.f);
        continue;
      }
      double ref = 0;
      for (std::int64_t k = h.rowptr[i]; k < h.rowptr[i + 1]; ++k) ref += h.val[k] * x[h.col[k] * 4 + j - 3];
      REQUIRE(y[i * 10 + j] == Approx(ref).margin(1e-5));
    }
}

TEST_CASE("gemm with every transpose combination", "[backend][gemm]") {
  auto be = cpu();
  const std::int64_t m = 7, n = 5, k = 9;
  for (Op oa : {Op::N, Op::T})
    for (Op ob : {Op::N, Op::T}) {
      const auto a = random_vector(m * k, 5), b = random_vector(k * n, 6), c0 = random_vector(m * n, 7);
      Dense da = oa == Op::N ? make_dense(*be, m, k, a) : make_dense(*be, k, m, a);
      Dense db = ob == Op::N ? make_dense(*be, k, n, b) : make_dense(*be, n, k, b);
      Dense dc = make_dense(*be, m, n, c0);
      be->gemm(oa, ob, 1.5f, da, db, 0.5f, dc);
      const auto c = dc.download();
      for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < n; ++j) {
          double ref = 0.5 * c0[i * n + j];
          for (std::int64_t p = 0; p < k; ++p) {
            const double av = oa == Op::N ? a[i * k + p] : a[p * m + i];
            const double bv = ob == Op::N ? b[p * n + j] : b[j * k + p];
            ref += 1.5 * av * bv;
          }
          INFO("op_a " << (oa == Op::N ? "N" : "T") << " op_b " << (ob == Op::N ? "N" : "T"));
          REQUIRE(c[i * n + j] == Approx(ref).margin(1e-5));
        }
    }
}

TEST_CASE("gemm with an empty inner dimension scales C", "[backend][gemm]") {
  auto be = cpu();
  Dense a(*be, 3, 0), b(*be, 0, 2);
  Dense c = make_dense(*be, 3, 2, std::vector<float>(6, 2.f));
  be->gemm(Op::N, Op::N, 1.f, a, b, 0.5f, c);
  for (float v : c.download()) REQUIRE(v == 1.f);
}

TEST_CASE("element-wise functors", "[backend][elementwise]") {
  auto be = cpu();
  const auto z = random_vector(6 * 4, 8), d = random_vector(6 * 4, 9);
  Dense dz = make_dense(*be, 6, 4, z), dd = make_dense(*be, 6, 4, d), out(*be, 6, 4);
  be->relu(dz, out);
  auto h = out.download();
  for (std::size_t k = 0; k < z.size(); ++k) REQUIRE(h[k] == (z[k] > 0 ? z[k] : 0.f));
  be->relu_backward(dd, dz, out);
  h = out.download();
  for (std::size_t k = 0; k < z.size(); ++k) REQUIRE(h[k] == (z[k] > 0 ? d[k] : 0.f));
  be->copy(dz, out);
  REQUIRE(out.download() == z);
  be->axpy(2.f, dd, out);
  h = out.download();
  for (std::size_t k = 0; k < z.size(); ++k) REQUIRE(h[k] == Approx(z[k] + 2 * d[k]));
  be->fill(out, 3.f);
  for (float v : out.download()) REQUIRE(v == 3.f);
  Dense t(*be, 4, 6);
  be->transpose(dz, t);
  h = t.download();
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 4; ++j) REQUIRE(h[j * 6 + i] == z[i * 4 + j]);
}

TEST_CASE("dropout mask is a function of (seed, epoch, vertex, column) only", "[backend][dropout]") {
  auto be = cpu();
  const std::int64_t n = 200, f = 30;
  std::vector<float> x(n * f, 1.f);
  std::vector<std::int64_t> ids(n);
  for (std::int64_t i = 0; i < n; ++i) ids[i] = i;
  Dense dx = make_dense(*be, n, f, x), full(*be, n, f);
  Buffer<std::int64_t> dids = make_buffer<std::int64_t>(*be, ids);
  const DropoutParams p{11, 5, 0.3f};
  be->dropout(dx, full, dids.data(), 0, p);
  const auto y = full.download();
  std::int64_t kept = 0;
  for (float v : y) {
    REQUIRE((v == 0.f || v == Approx(1 / 0.7f)));
    kept += v != 0.f;
  }
  CHECK(static_cast<double>(kept) / (n * f) == Approx(0.7).margin(0.03));
  // A shard: rows {150, 3, 77} (any order), columns [10, 25) — as a rank of a 2D grid holds.
  const std::vector<std::int64_t> rows = {150, 3, 77};
  Buffer<std::int64_t> rid = make_buffer<std::int64_t>(*be, rows);
  Dense sx = make_dense(*be, 3, 15, std::vector<float>(45, 1.f)), sy(*be, 3, 15);
  be->dropout(sx, sy, rid.data(), 10, p);
  const auto s = sy.download();
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 15; ++j) REQUIRE(s[i * 15 + j] == y[rows[i] * f + 10 + j]);
  // another stream (epoch) gives another mask
  be->dropout(dx, full, dids.data(), 0, {11, 6, 0.3f});
  CHECK(full.download() != y);
}

TEST_CASE("Glorot init: any block equals the slice of the global matrix", "[init]") {
  const std::int64_t fin = 17, fout = 9;
  const auto global = glorot_block(3, 1, fin, fout, {0, fin, 0, fout});
  const float a = std::sqrt(6.f / (fin + fout));
  for (float w : global) REQUIRE(std::abs(w) <= a);
  const Block b{5, 7, 2, 6};
  const auto part = glorot_block(3, 1, fin, fout, b);
  for (std::int64_t i = 0; i < b.rows; ++i)
    for (std::int64_t j = 0; j < b.cols; ++j)
      REQUIRE(part[i * b.cols + j] == global[(b.row0 + i) * fout + b.col0 + j]);
  CHECK(glorot_block(3, 2, fin, fout, {0, fin, 0, fout}) != global);  // layers differ
}

TEST_CASE("one Adam step against hand computation", "[optimizer]") {
  auto be = cpu();
  const std::vector<float> w0 = {0.5f, -1.f, 2.f}, g = {0.1f, -0.2f, 0.f};
  Dense w = make_dense(*be, 1, 3, w0), dg = make_dense(*be, 1, 3, g);
  Dense m = make_dense(*be, 1, 3, std::vector<float>(3, 0.f)), v = make_dense(*be, 1, 3, std::vector<float>(3, 0.f));
  const float lr = 0.01f, b1 = 0.9f, b2 = 0.999f, eps = 1e-8f;
  be->adam(w, dg, m, v, {lr, b1, b2, eps, 1 - b1, 1 - b2});
  const auto out = w.download();
  for (int k = 0; k < 3; ++k) {
    // step 1: m = (1-b1) g, v = (1-b2) g², mhat = g, vhat = g² => w -= lr g / (|g| + eps)
    const double expected = w0[k] - (g[k] == 0 ? 0.0 : lr * g[k] / (std::abs(g[k]) + eps));
    REQUIRE(out[k] == Approx(expected).margin(1e-7));
  }
  // step 2 with the same gradient: m = (1-b1)(1+b1) g ... still lr * sign(g) after bias correction
  be->adam(w, dg, m, v, {lr, b1, b2, eps, 1 - b1 * b1, 1 - b2 * b2});
  const auto out2 = w.download();
  for (int k = 0; k < 3; ++k) REQUIRE(out2[k] == Approx(w0[k] - (g[k] == 0 ? 0 : 2 * lr * (g[k] > 0 ? 1 : -1))).margin(1e-6));
}
