// CPU backend kernels against naive loops; element-wise functors; init and
// dropout independence of the grid.

#include <catch2/catch.hpp>
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include "backends/counting_backend.hpp"
#include "backends/cpu/blas_kernels.hpp"
#include "backends/cpu/sgemm.hpp"
#include "backends/cpu/spmm.hpp"
#include "backends/factory.hpp"
#include "common/backend/backend.hpp"
#include "common/backend/elementwise.hpp"
#include "common/dist/row_attention.hpp"
#include "common/matrix/buffer.hpp"
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

std::unique_ptr<Backend> cpu_backend() { return make_backend("cpu", {2}); }

// A CPU backend of `threads` threads whose GEMMs run `library` (GCNLAB_CPU_GEMM
// is read when the backend is made; the variable is put back before returning).
std::unique_ptr<Backend> cpu_backend_with_gemm(const char* library, int threads = 2) {
  struct Restore {  // the variable as it was, also when make_backend throws
    const char* before = std::getenv("GCNLAB_CPU_GEMM");
    std::string saved = before ? before : "";
    ~Restore() { before ? setenv("GCNLAB_CPU_GEMM", saved.c_str(), 1) : unsetenv("GCNLAB_CPU_GEMM"); }
  } restore;
  setenv("GCNLAB_CPU_GEMM", library, 1);
  return make_backend("cpu", {threads});
}

// What f(backend) returns on a CPU backend of 1 thread and on one of 2.
template <class F>
std::array<std::vector<float>, 2> at_1_and_2_threads(F f) {
  std::array<std::vector<float>, 2> got;
  for (const int threads : {1, 2}) got[threads - 1] = f(*make_backend("cpu", {threads}));
  return got;
}

}  // namespace

TEST_CASE("spmm matches a naive loop, with full and compressed rows", "[backend][spmm]") {
  auto be = cpu_backend();
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

namespace {

// Y = A X + beta Y by a plain host loop in double.
std::vector<double> spmm_naive(const HostCsr& h, const std::vector<float>& x, std::int64_t ldx,
                               const std::vector<float>& y0, std::int64_t ldy, std::int64_t f, float beta) {
  std::vector<double> y(static_cast<std::size_t>(h.rows * f));
  for (std::int64_t i = 0; i < h.rows; ++i)
    for (std::int64_t j = 0; j < f; ++j) {
      double r = beta == 0.f ? 0.0 : beta * static_cast<double>(y0[i * ldy + j]);
      for (std::int64_t k = h.rowptr[i]; k < h.rowptr[i + 1]; ++k) r += h.val[k] * static_cast<double>(x[h.col[k] * ldx + j]);
      y[i * f + j] = r;
    }
  return y;
}

// The kernel's order of summation, stated in scalar code (backends/cpu/spmm.cpp):
// a row's nonzeros at even and at odd offsets in two chains, added at the end,
// then beta. Every path of the kernel must give these bits on every ISA.
std::vector<float> spmm_in_order(const HostCsr& h, const std::vector<float>& x, std::int64_t ldx,
                                 const std::vector<float>& y0, std::int64_t ldy, std::int64_t f, float beta) {
  std::vector<float> y(static_cast<std::size_t>(h.rows * f));
  for (std::int64_t i = 0; i < h.rows; ++i)
    for (std::int64_t j = 0; j < f; ++j) {
      float chain[2] = {0.f, 0.f};
      for (std::int64_t k = h.rowptr[i]; k < h.rowptr[i + 1]; ++k)
        chain[(k - h.rowptr[i]) & 1] += h.val[k] * x[h.col[k] * ldx + j];
      const float r = chain[0] + chain[1];
      y[i * f + j] = beta == 0.f ? r : r + beta * y0[i * ldy + j];
    }
  return y;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// The SDDMM's order of summation (ew::ordered_dot), stated in scalar code:
// term t into lane t mod 8, each lane in order, the lanes added pairwise.
float dot_in_order(const float* a, const float* b, std::int64_t stride, std::int64_t n) {
  float lane[8] = {};
  for (std::int64_t t = 0; t < n; ++t) lane[t % 8] += a[t] * b[t * stride];
  return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

}  // namespace

TEST_CASE("spmm: every code path of the CPU kernel against a plain loop", "[backend][spmm]") {
  // Widths around each specialisation boundary (16-float vectors on AVX-512,
  // 8-float ones on AVX2, the 8- and 4-vector register blocks, the plain-loop
  // remainder; 256 and 300: X rows of 1 KiB or more, walked a row at a time through
  // every segment), every value bit for bit the stated order's; matrices large enough
  // for many thread chunks, hub rows, empty rows, hypersparse blocks stored with
  // compressed rows, beta 0 / 1 / other, contiguous and strided (unaligned) views.
  auto be = cpu_backend();
  std::mt19937 gen(5);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  const std::int64_t rows = 700, cols = 300;
  // power-law-ish rows: a few hubs, many short rows, a run of empty rows; both matrices with more than
  // 4096 nonzeros and stored rows, so that the threads share them in chunks (and segment-major passes)
  std::vector<Coo> e;
  for (std::int64_t i = 0; i < rows; ++i) {
    if (i >= 200 && i < 260) continue;
    const std::int64_t deg = i % 97 == 0 ? 250 : i % 9;
    for (std::int64_t d = 0; d < deg; ++d) e.push_back({i, (i * 7 + d * 13) % cols, u(gen)});
  }
  const HostCsr dense_rows = csr_from_coo(rows, cols, e, false);
  std::vector<Coo> sparse;
  for (std::int64_t i = 3; i < rows; i += 7)
    for (std::int64_t d = 0; d < 40; ++d) sparse.push_back({i, (i + d * 5) % cols, u(gen)});
  const HostCsr hyper = csr_from_coo(rows, cols, sparse, false);

  for (const HostCsr* h : {&dense_rows, &hyper})
    for (RowStorage storage : {RowStorage::full, RowStorage::sparse_if_smaller}) {
      const Csr a = upload(*be, *h, storage);
      for (std::int64_t f : {1, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 40, 48, 56, 63, 64, 65, 72, 112, 127, 128, 129, 143, 144, 200, 256, 300})
        for (std::int64_t pad : {0, 3}) {  // pad: views into wider matrices, rows not 64-byte aligned
          const std::int64_t ldx = f + pad, ldy = f + pad;
          const auto x = random_vector(cols * ldx, 11), y0 = random_vector(rows * ldy, 12);
          for (float beta : {0.f, 1.f, -0.75f}) {
            Dense dx = make_dense(*be, cols, ldx, x), dy = make_dense(*be, rows, ldy, y0);
            be->spmm(a, ConstView{dx.data(), cols, f, ldx}, View{dy.data(), rows, f, ldy}, beta);
            const auto y = dy.download();
            const auto ref = spmm_naive(*h, x, ldx, y0, ldy, f, beta);
            const auto in_order = spmm_in_order(*h, x, ldx, y0, ldy, f, beta);
            // the plain row loop (the benchmarks' reference) must agree too
            Dense dz = make_dense(*be, rows, ldy, y0);
            cpu::spmm_row_loop(a, ConstView{dx.data(), cols, f, ldx}, View{dz.data(), rows, f, ldy}, beta);
            const auto z = dz.download();
            double err = 0, err_loop = 0;
            bool padding_kept = true;
            std::int64_t other_bits = 0;  // values whose bits differ from the stated order's
            for (std::int64_t i = 0; i < rows; ++i) {
              for (std::int64_t j = 0; j < f; ++j) {
                other_bits += std::memcmp(&y[i * ldy + j], &in_order[i * f + j], sizeof(float)) != 0;
                err = std::max(err, std::abs(y[i * ldy + j] - ref[i * f + j]));
                err_loop = std::max(err_loop, std::abs(z[i * ldy + j] - ref[i * f + j]));
              }
              for (std::int64_t j = f; j < ldy; ++j) padding_kept &= y[i * ldy + j] == y0[i * ldy + j];
            }
            INFO("f " << f << " pad " << pad << " beta " << beta << " compressed " << a.compressed << " nnz " << a.nnz);
            REQUIRE(err < 1e-4);
            REQUIRE(other_bits == 0);
            REQUIRE(err_loop < 1e-4);
            REQUIRE(padding_kept);
          }
        }
    }
}

TEST_CASE("spmm: X's column slabs packed into the lent scratch give the unpacked bits", "[backend][spmm]") {
  // The segment-major walk packs each full register segment's columns into the
  // backend's scratch when X is over 8 MiB at a width of several segments
  // (cpu::slab_floats): 64 and 128 floats pack on AVX2, 200 on AVX-512. Against
  // the stated order and the kernel without a slab: beta 0 and other, a row
  // term (GIN's), compressed rows, a strided X, X larger than the slab (not
  // packed), the scratch taken back, and graph attention's aggregation.
  std::mt19937 gen(17);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::uniform_int_distribution<std::int64_t> col(0, 39999);
  const std::int64_t rows = 2500, cols = 40000;  // X: 40 000 rows, 10-31 MiB at these widths
  std::vector<Coo> e;
  for (std::int64_t i = 0; i < rows; ++i) {
    if (i % 11 == 5) continue;  // empty rows
    const std::int64_t deg = i % 250 == 0 ? 900 : 24 + i % 50;  // at least two gathers per X row in all
    for (std::int64_t d = 0; d < deg; ++d) e.push_back({i, col(gen), u(gen)});
  }
  const HostCsr h = csr_from_coo(rows, cols, e, true);
  REQUIRE(h.nnz() >= 2 * cols);
  auto be = cpu_backend();
  int packing_widths = 0;
  for (std::int64_t f : {64, 128, 200}) {
    const std::int64_t floats = cpu::slab_floats(cols, f);
    packing_widths += floats > 0;
    const std::int64_t ldx = f + 5;
    std::vector<float> slab(static_cast<std::size_t>(std::max<std::int64_t>(floats, 1)));
    const auto x = random_vector(cols * ldx, 41), y0 = random_vector(rows * f, 42), r = random_vector(rows * f, 43);
    for (RowStorage storage : {RowStorage::full, RowStorage::sparse_if_smaller})
      for (float beta : {0.f, -0.75f}) {
        const Csr a = upload(*be, h, storage);
        Dense dx = make_dense(*be, cols, ldx, x);
        const ConstView vx{dx.data(), cols, f, ldx};
        const cpu::RowAddend term{beta == 0.f ? r.data() : nullptr, f, 0.37f};
        auto run = [&](cpu::Slab s) {
          std::vector<float> y = y0;
          cpu::spmm(a, vx, View{y.data(), rows, f, f}, beta, {}, term, s);
          return y;
        };
        const auto plain = run({}), packed = run({slab.data(), cols}), too_small = run({slab.data(), cols - 1});
        INFO("f " << f << " compressed " << a.compressed << " beta " << beta);
        REQUIRE(same_bits(packed, plain));
        REQUIRE(same_bits(too_small, plain));
        if (!term.r) REQUIRE(same_bits(plain, spmm_in_order(h, x, ldx, y0, f, f, beta)));
        if (beta != 0.f) continue;
        // graph attention's aggregation (4 heads, per-edge values): the same walk, the same slab
        const auto v = random_vector(h.nnz() * 4, 44);
        auto run_edges = [&](cpu::Slab s) {
          std::vector<float> y(static_cast<std::size_t>(rows * f), 0.f);
          cpu::spmm_edge_values(a, 4, ew::HeadSplit{0, f / 4}, v.data(), nullptr, vx, View{y.data(), rows, f, f}, {},
                                s);
          return y;
        };
        REQUIRE(same_bits(run_edges({slab.data(), cols}), run_edges({})));
      }
    // through the backend: the scratch as the trainer lends it, and taken back
    REQUIRE(be->spmm_scratch_bytes(cols, std::vector<std::int64_t>{16, f}) == Approx(floats * 4.0));
    const Csr a = upload(*be, h, RowStorage::full);
    Dense dx = make_dense(*be, cols, ldx, x), lent(*be, rows, f), own(*be, rows, f);
    Buffer<float> scratch(*be, slab.size());
    be->set_spmm_scratch(scratch.data(), cols);
    be->spmm(a, ConstView{dx.data(), cols, f, ldx}, lent, 0.f);
    be->set_spmm_scratch(nullptr, 0);
    be->spmm(a, ConstView{dx.data(), cols, f, ldx}, own, 0.f);
    REQUIRE(same_bits(lent.download(), own.download()));
  }
  REQUIRE(packing_widths >= 1);  // some width packs on this ISA, so the test can fail
}

TEST_CASE("spmm_plus: a term on the output rows in the product's pass has the bits of spmm then axpy", "[backend][spmm]") {
  // GIN's (1 + ε) h_i in the aggregation's output pass: for every register
  // segment and the plain-loop remainder, full and compressed rows (the term on
  // the rows a compressed block skips too), strided views, a fixed scale (axpy)
  // and one read from backend memory (axpy_plus), at 1 and 2 threads.
  std::mt19937 gen(9);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  const std::int64_t rows = 500, cols = 500;
  std::vector<Coo> e;
  for (std::int64_t i = 0; i < rows; ++i) {
    if (i % 5 == 2) continue;  // empty rows
    const std::int64_t deg = i % 61 == 0 ? 120 : i % 4;
    for (std::int64_t d = 0; d < deg; ++d) e.push_back({i, (i * 11 + d * 7) % cols, u(gen)});
  }
  const HostCsr dense_rows = csr_from_coo(rows, cols, e, false);
  std::vector<Coo> sparse;
  for (std::int64_t i = 4; i < rows; i += 97) sparse.push_back({i, (i * 3) % cols, u(gen)});
  const HostCsr hyper = csr_from_coo(rows, cols, sparse, false);
  for (const int threads : {1, 2}) {
    auto be = make_backend("cpu", {threads});
    const auto eps = make_buffer<float>(*be, std::vector<float>{0.37f});
    for (const HostCsr* h : {&dense_rows, &hyper})
      for (RowStorage storage : {RowStorage::full, RowStorage::sparse_if_smaller}) {
        const Csr a = upload(*be, *h, storage);
        for (std::int64_t f : {1, 9, 16, 33, 64, 128, 129, 200, 300})  // 300: the walk by row
          for (std::int64_t pad : {0, 3}) {
            const std::int64_t ld = f + pad;
            const auto x = random_vector(cols * ld, 31), r = random_vector(rows * ld, 32);
            Dense dx = make_dense(*be, cols, ld, x), dr = make_dense(*be, rows, ld, r);
            const ConstView vx{dx.data(), cols, f, ld}, vr{dr.data(), rows, f, ld};
            for (const bool on_backend : {false, true}) {
              Dense fused = make_dense(*be, rows, ld, r), split = make_dense(*be, rows, ld, r);
              const View vf{fused.data(), rows, f, ld}, vs{split.data(), rows, f, ld};
              if (on_backend) {
                be->spmm_plus(a, vx, {vr, 1.f, eps.data()}, vf);
                be->spmm(a, vx, vs, 0.f);
                be->axpy_plus(1.f, eps.data(), vr, vs);
              } else {
                be->spmm_plus(a, vx, {vr, 1.25f, nullptr}, vf);
                be->spmm(a, vx, vs, 0.f);
                be->axpy(1.25f, vr, vs);
              }
              INFO("threads " << threads << " f " << f << " pad " << pad << " compressed " << a.compressed
                              << " on backend " << on_backend);
              REQUIRE(same_bits(fused.download(), split.download()));  // the padding too: untouched
            }
          }
      }
  }
}

TEST_CASE("inner_product: in double by blocks of 256 rows, any thread count, the exact sum rounded once",
          "[backend]") {
  // GIN's dL/dε = <X, D>: each product exact in double, per column by blocks of 256 rows
  // (column_sums' blocks), every block's columns then in order; the same bits at 1 and 2 threads.
  for (const auto [rows, cols, ld] : {std::tuple<std::int64_t, std::int64_t, std::int64_t>{1, 1, 1}, {37, 5, 7},
                                      {1000, 128, 128}, {5000, 3, 3}, {0, 4, 4}}) {
    const auto x = random_vector(rows * ld, 41), y = random_vector(rows * ld, 42);
    const auto got = at_1_and_2_threads([&](Backend& be) {
      Dense dx = make_dense(be, rows, ld, x), dy = make_dense(be, rows, ld, y);
      Buffer<float> out(be, 1);
      be.inner_product(ConstView{dx.data(), rows, cols, ld}, ConstView{dy.data(), rows, cols, ld}, out.data());
      return out.download();
    });
    CHECK(got[0] == got[1]);
    std::vector<double> part;  // the stated order
    long double exact = 0;
    for (std::int64_t b = 0; b < rows; b += 256)
      for (std::int64_t c = 0; c < cols; ++c) {
        double block = 0;
        for (std::int64_t i = b; i < std::min(rows, b + 256); ++i) {
          block += static_cast<double>(x[i * ld + c]) * static_cast<double>(y[i * ld + c]);
          exact += static_cast<long double>(x[i * ld + c]) * static_cast<long double>(y[i * ld + c]);
        }
        part.push_back(block);
      }
    double total = 0;
    for (const double p : part) total += p;
    const float want = static_cast<float>(total);
    INFO("rows " << rows << " cols " << cols);
    REQUIRE(std::memcmp(&got[0][0], &want, sizeof want) == 0);
    CHECK(got[0][0] == Approx(static_cast<double>(exact)).epsilon(1e-6).margin(1e-6));
  }
}

TEST_CASE("spmm on an empty block and on a block without nonzeros", "[backend][spmm]") {
  auto be = cpu_backend();
  for (RowStorage storage : {RowStorage::full, RowStorage::sparse_if_smaller}) {
    const Csr a = upload(*be, csr_from_coo(5000, 10, {}, false), storage);
    Dense x = make_dense(*be, 10, 16, random_vector(160, 1));
    for (float beta : {0.f, 1.f, 2.f}) {
      Dense y = make_dense(*be, 5000, 16, std::vector<float>(5000 * 16, 3.f));
      be->spmm(a, x, y, beta);
      for (float v : y.download()) REQUIRE(v == 3.f * beta);
    }
  }
}

TEST_CASE("spmm writes into a column block of a wider matrix (view with ld)", "[backend][spmm]") {
  auto be = cpu_backend();
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

TEST_CASE("OpenBLAS's kernels: a CPU it does not know gets the kernels of its vector units", "[backend][gemm]") {
  using cpu::better_blas_kernels;
  const cpu::CpuVectorUnits none, avx2{true, false}, avx512{true, true};
  // OpenBLAS 0.3.21 on Emerald Rapids (family 6, model 0xCF): Prescott
  CHECK(better_blas_kernels("Prescott", avx512) == "SkylakeX");
  CHECK(better_blas_kernels("Prescott", avx2) == "Haswell");
  CHECK(better_blas_kernels("Sandybridge", avx2) == "Haswell");  // AVX, no AVX2 kernels
  CHECK(better_blas_kernels("Nehalem", avx512) == "SkylakeX");
  // a CPU OpenBLAS knows keeps its choice, whatever its units (Zen 4 has AVX-512 and keeps Zen)
  for (const char* known : {"Haswell", "Zen", "SkylakeX", "Cooperlake", "SapphireRapids", "Excavator", "skylakex"})
    CHECK_FALSE(better_blas_kernels(known, avx512));
  // a CPU without AVX2: nothing wider to ask for
  CHECK_FALSE(better_blas_kernels("Prescott", none));
  CHECK_FALSE(better_blas_kernels("Core2", none));
}

TEST_CASE("GCNLAB_CPU_GEMM: oneDNN unless it names OpenBLAS; any other value is refused", "[backend][gemm]") {
  using cpu::GemmLibrary, cpu::gemm_library;
  CHECK(gemm_library(nullptr) == GemmLibrary::onednn);
  CHECK(gemm_library("") == GemmLibrary::onednn);
  CHECK(gemm_library("onednn") == GemmLibrary::onednn);
  CHECK(gemm_library("openblas") == GemmLibrary::openblas);
  for (const char* bad : {"OpenBLAS", "mkl", "onednn ", "blis"})
    CHECK_THROWS_WITH(gemm_library(bad), Catch::Contains("not a GEMM library (onednn, the default, or openblas)") &&
                                             Catch::Contains(std::string("GCNLAB_CPU_GEMM=") + bad));
  CHECK_THROWS_AS(cpu_backend_with_gemm("mkl"), Error);
  CHECK_THAT(cpu::gemm_description(GemmLibrary::onednn), Catch::StartsWith("oneDNN "));
  CHECK_THAT(cpu::gemm_description(GemmLibrary::openblas), Catch::StartsWith("OpenBLAS ("));
  for (const auto& [key, value] : cpu_backend_with_gemm("openblas")->versions())
    if (key == "gemm") CHECK_THAT(value, Catch::StartsWith("OpenBLAS ("));
}

TEST_CASE("gemm with every transpose combination", "[backend][gemm]") {
  const char* library = GENERATE("onednn", "openblas");
  auto be = cpu_backend_with_gemm(library);  // 2 threads: m = 2053 takes the row-split path (uneven halves)
  const std::int64_t n = 5, k = 9;
  for (const std::int64_t m : {7, 2053})
  for (Op oa : {Op::N, Op::T})
    for (Op ob : {Op::N, Op::T}) {
      const auto a = random_vector(m * k, 5), b = random_vector(k * n, 6), c0 = random_vector(m * n, 7);
      Dense da = oa == Op::N ? make_dense(*be, m, k, a) : make_dense(*be, k, m, a);
      Dense db = ob == Op::N ? make_dense(*be, k, n, b) : make_dense(*be, n, k, b);
      // C is columns [2, 2 + n) of a wider matrix (ld = n + 3), whose other columns stay untouched
      const std::int64_t ld = n + 3;
      std::vector<float> wide(static_cast<std::size_t>(m * ld), 9.f);
      for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < n; ++j) wide[i * ld + 2 + j] = c0[i * n + j];
      Dense dw = make_dense(*be, m, ld, wide);
      be->gemm(oa, ob, 1.5f, da, db, 0.5f, View{dw.data() + 2, m, n, ld});
      const auto out = dw.download();
      for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j : {0, 1, 7}) REQUIRE(out[i * ld + j] == 9.f);
      for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < n; ++j) {
          const float got = out[i * ld + 2 + j];
          double ref = 0.5 * c0[i * n + j];
          for (std::int64_t p = 0; p < k; ++p) {
            const double av = oa == Op::N ? a[i * k + p] : a[p * m + i];
            const double bv = ob == Op::N ? b[p * n + j] : b[j * k + p];
            ref += 1.5 * av * bv;
          }
          INFO(library << " m " << m << " op_a " << (oa == Op::N ? "N" : "T") << " op_b " << (ob == Op::N ? "N" : "T"));
          REQUIRE(got == Approx(ref).margin(1e-5));
        }
    }
}

TEST_CASE("gemm: an epoch's shapes, each library against a double reference, and the same bits wherever the "
          "operands lie", "[backend][gemm]") {
  const char* library = GENERATE("onednn", "openblas");
  auto be = cpu_backend_with_gemm(library);
  // X W (row split), G Wᵀ, and Xᵀ G (the reduction split: k >= 4096 per thread)
  const std::int64_t rows = 9001, f = 40, g = 24;
  const auto x = random_vector(rows * f, 11), w = random_vector(f * g, 12), gr = random_vector(rows * g, 13);
  struct Case { Op oa, ob; std::int64_t ar, ac, br, bc; const std::vector<float>* a; const std::vector<float>* b; };
  const Case cases[] = {{Op::N, Op::N, rows, f, f, g, &x, &w},     // X W: rows x g
                        {Op::N, Op::T, rows, g, f, g, &gr, &w},    // G Wᵀ: rows x f
                        {Op::T, Op::N, rows, f, rows, g, &x, &gr}};  // Xᵀ G: f x g
  for (const Case& cs : cases) {
    const std::int64_t m = cs.oa == Op::N ? cs.ar : cs.ac, k = cs.oa == Op::N ? cs.ac : cs.ar;
    const std::int64_t n = cs.ob == Op::N ? cs.bc : cs.br;
    std::vector<float> first;
    for (const std::int64_t shift : {0, 1, 3, 13}) {  // floats: 4-52 bytes off the buffers' alignment
      auto place = [&](std::int64_t r, std::int64_t c, const std::vector<float>& v) {
        std::vector<float> padded(static_cast<std::size_t>(shift), 0.f);
        padded.insert(padded.end(), v.begin(), v.end());
        return make_dense(*be, 1, r * c + shift, padded);
      };
      Dense da = place(cs.ar, cs.ac, *cs.a), db = place(cs.br, cs.bc, *cs.b);
      Dense dc = make_dense(*be, 1, m * n + shift, std::vector<float>(static_cast<std::size_t>(m * n + shift), 0.f));
      be->gemm(cs.oa, cs.ob, 1.f, ConstView{da.data() + shift, cs.ar, cs.ac, cs.ac},
               ConstView{db.data() + shift, cs.br, cs.bc, cs.bc}, 0.f, View{dc.data() + shift, m, n, n});
      auto out = dc.download();
      out.erase(out.begin(), out.begin() + shift);
      INFO(library << " op_a " << (cs.oa == Op::N ? "N" : "T") << " op_b " << (cs.ob == Op::N ? "N" : "T")
                   << " shift " << shift);
      if (first.empty()) {
        first = out;
        for (std::int64_t i = 0; i < m; i += 97)
          for (std::int64_t j = 0; j < n; ++j) {
            double ref = 0;
            for (std::int64_t p = 0; p < k; ++p) {
              const double av = cs.oa == Op::N ? (*cs.a)[i * k + p] : (*cs.a)[p * m + i];
              const double bv = cs.ob == Op::N ? (*cs.b)[p * n + j] : (*cs.b)[j * k + p];
              ref += av * bv;
            }
            REQUIRE(out[i * n + j] == Approx(ref).margin(2e-6 * static_cast<double>(k)));
          }
      } else {
        REQUIRE(std::memcmp(out.data(), first.data(), first.size() * sizeof(float)) == 0);
      }
    }
  }
}

TEST_CASE("gemm with an empty inner dimension scales C", "[backend][gemm]") {
  auto be = cpu_backend();
  Dense a(*be, 3, 0), b(*be, 0, 2);
  Dense c = make_dense(*be, 3, 2, std::vector<float>(6, 2.f));
  be->gemm(Op::N, Op::N, 1.f, a, b, 0.5f, c);
  for (float v : c.download()) REQUIRE(v == 1.f);
}

TEST_CASE("the CPU backend flushes subnormals to zero on every thread, operands and results", "[backend]") {
  // a subnormal operand (DAZ) and a product that underflows (FTZ), in OpenMP's
  // loops and in OpenBLAS's row-split GEMM, at 1 and 2 threads
  const std::int64_t rows = 4096;
  const float tiny = std::numeric_limits<float>::denorm_min() * 1000, small = std::ldexp(1.f, -70);
  REQUIRE(std::fpclassify(tiny) == FP_SUBNORMAL);
  REQUIRE(std::fpclassify(small * small) == FP_SUBNORMAL);  // the exact product underflows (folded at compile time)
  for (const int threads : {1, 2}) {
    auto be = make_backend("cpu", {threads});
    Dense x = make_dense(*be, rows, 16, std::vector<float>(rows * 16, tiny));
    Dense y = make_dense(*be, rows, 16, std::vector<float>(rows * 16, 0.f));
    be->axpy(1.f, x, y);
    for (float v : y.download()) REQUIRE(v == 0.f);
    Dense a = make_dense(*be, rows, 16, std::vector<float>(rows * 16, small));
    Dense b = make_dense(*be, 16, 16, std::vector<float>(16 * 16, small));
    be->gemm(Op::N, Op::N, 1.f, a, b, 0.f, y);
    for (float v : y.download()) REQUIRE(v == 0.f);
    be->gemm(Op::N, Op::N, 1.f, a, make_dense(*be, 16, 16, std::vector<float>(16 * 16, 1.f)), 0.f, y);
    for (float v : y.download()) REQUIRE(v == std::ldexp(1.f, -66));  // a normal result is kept (16 x 2^-70, exact)
  }
}

TEST_CASE("element-wise functors", "[backend][elementwise]") {
  auto be = cpu_backend();
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
  {  // y += (a + s) x with s in backend memory: axpy's bits with a + s formed on the host
    const auto eps = make_buffer<float>(*be, std::vector<float>{0.37f});
    Dense y1 = make_dense(*be, 6, 4, z), y2 = make_dense(*be, 6, 4, z);
    be->axpy_plus(1.f, eps.data(), dd, y1);
    be->axpy(1.f + 0.37f, dd, y2);
    REQUIRE(same_bits(y1.download(), y2.download()));
  }
  be->fill(out, 3.f);
  for (float v : out.download()) REQUIRE(v == 3.f);
  Dense t(*be, 4, 6);
  be->transpose(dz, t);
  h = t.download();
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 4; ++j) REQUIRE(h[j * 6 + i] == z[i * 4 + j]);
}

TEST_CASE("bf16: round to nearest even, NaN stays NaN, overflow to infinity", "[backend][bf16]") {
  auto bits = [](float x) { return to_bf16(x).bits; };
  CHECK(bits(1.f) == 0x3f80);
  CHECK(bits(-2.f) == 0xc000);
  CHECK(bits(0.f) == 0x0000);
  CHECK(bits(-0.f) == 0x8000);
  // 1 + 2^-8 lies halfway between 1 and 1 + 2^-7: ties go to the even mantissa (1);
  // 1 + 3·2^-8 lies halfway between 1 + 2^-7 and 1 + 2^-6: to 1 + 2^-6.
  CHECK(to_float(to_bf16(1.f + 0x1p-8f)) == 1.f);
  CHECK(to_float(to_bf16(1.f + 3 * 0x1p-8f)) == 1.f + 0x1p-6f);
  CHECK(to_float(to_bf16(1.f + 0x1p-8f + 0x1p-20f)) == 1.f + 0x1p-7f);  // above halfway: up
  CHECK(std::isnan(to_float(to_bf16(std::nanf("")))));
  CHECK(std::isnan(to_float(to_bf16(float_of(0x7f800001u)))));  // a NaN whose payload would truncate to infinity
  CHECK(to_float(to_bf16(std::numeric_limits<float>::infinity())) == std::numeric_limits<float>::infinity());
  CHECK(to_float(to_bf16(std::numeric_limits<float>::max())) == std::numeric_limits<float>::infinity());
  // 8 significant bits: relative error at most half a step, 2^-8, over normal numbers
  for (float x : random_vector(1000, 3)) {
    const float y = x * 1e3f;
    CHECK(std::abs(to_float(to_bf16(y)) - y) <= std::abs(y) * 0x1p-8f);
  }
}

TEST_CASE("bf16 pack and unpack through views with a leading dimension", "[backend][bf16]") {
  auto be = cpu_backend();
  const auto z = random_vector(5 * 7, 4);
  Dense wide = make_dense(*be, 5, 7, z);
  const ConstView block{wide.data() + 2, 5, 3, 7};  // columns 2..4
  Buffer<bf16> wire(*be, 15);
  be->pack_bf16(block, wire.data());
  const std::vector<bf16> packed = wire.download();
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 3; ++j) REQUIRE(packed[i * 3 + j].bits == to_bf16(z[i * 7 + 2 + j]).bits);
  Dense back(*be, 5, 7);
  be->fill(back, -1.f);
  be->unpack_bf16(wire.data(), View{back.data() + 4, 5, 3, 7});
  const auto h = back.download();
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 7; ++j)
      REQUIRE(h[i * 7 + j] == (j >= 4 ? to_float(to_bf16(z[i * 7 + j - 2])) : -1.f));
}

TEST_CASE("fused element-wise passes equal the unfused ones exactly", "[backend][elementwise][dropout]") {
  auto be = cpu_backend();
  const std::int64_t n = 300, f = 37;
  const auto z = random_vector(n * f, 21), d = random_vector(n * f, 22);
  std::vector<std::int64_t> ids(n);
  for (std::int64_t i = 0; i < n; ++i) ids[i] = 3 * i + 1;
  Buffer<std::int64_t> dids = make_buffer<std::int64_t>(*be, ids);
  Dense dz = make_dense(*be, n, f, z), dd = make_dense(*be, n, f, d);
  Dense h(*be, n, f), x(*be, n, f), x2(*be, n, f), dh(*be, n, f), g(*be, n, f), g2(*be, n, f);
  for (float p : {0.1f, 0.5f, 0.9f}) {
    const DropoutParams dp{7, 99, p};
    // forward: dropout(relu(z)) in one pass
    be->relu(dz, h);
    be->dropout(h, x, dids.data(), 5, dp);
    be->relu_dropout(dz, x2, dids.data(), 5, dp);
    REQUIRE(x2.download() == x.download());
    // backward: relu'(z) * dropout'(d) from x alone
    be->dropout(dd, dh, dids.data(), 5, dp);
    be->relu_backward(dh, dz, g);
    be->dropout_relu_backward(dd, x, dp.scale(), g2);
    REQUIRE(g2.download() == g.download());
  }
  // the row form (CPU) draws the same mask as the element form (CUDA)
  const DropoutParams dp{3, 4, 0.4f};
  be->dropout(dz, x, dids.data(), 2, dp);
  const auto got = x.download();
  std::vector<float> want(n * f);
  const ew::Dropout el{z.data(), f, want.data(), f, ids.data(), 2, dp.seed, dp.stream, dp.p, dp.scale()};
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < f; ++j) el(i, j);
  REQUIRE(got == want);
  // a pinned value: masks do not change between versions (rng::key is the chain it was)
  CHECK(rng::key(1, 2, 3, 4) == rng::mix(rng::mix(rng::mix(rng::mix(1) ^ 2) ^ 3) ^ 4));
}

TEST_CASE("a bias in the activation's passes equals the rank-1 product and column_sums exactly",
          "[backend][elementwise][bias]") {
  auto be = cpu_backend();
  const std::int64_t n = 600, f = 37;  // more rows than one block of the column sums
  const auto z = random_vector(n * f, 23), d = random_vector(n * f, 24), bias = random_vector(f, 25);
  std::vector<std::int64_t> ids(n);
  for (std::int64_t i = 0; i < n; ++i) ids[i] = 2 * i + 3;
  Buffer<std::int64_t> dids = make_buffer<std::int64_t>(*be, ids);
  const Dense ones = make_dense(*be, n, 1, std::vector<float>(n, 1.f)), b = make_dense(*be, 1, f, bias);
  const auto product = [&] {  // Z + 1 bᵀ as the layers added it before
    Dense out = make_dense(*be, n, f, z);
    be->gemm(Op::N, Op::N, 1.f, ones, b, 1.f, out);
    return out;
  };
  const Dense zb = product();
  Dense z1 = make_dense(*be, n, f, z), h(*be, n, f), h1(*be, n, f);
  be->relu(zb, h);
  be->bias_relu(z1, {}, b.data(), h1);
  REQUIRE(z1.download() == z);  // Z is left as it is: ReLU's backward reads H
  REQUIRE(h1.download() == h.download());
  Dense in_place = make_dense(*be, n, f, z);  // the shared plan's ReLU in place (H over Z)
  be->bias_relu(in_place, {}, b.data(), in_place);
  REQUIRE(in_place.download() == h.download());
  Dense logits = make_dense(*be, n, f, z);
  be->add_row(b.data(), logits);
  REQUIRE(logits.download() == zb.download());
  const DropoutParams dp{7, 11, 0.3f};
  Dense x(*be, n, f), x1(*be, n, f), z2 = make_dense(*be, n, f, z);
  be->relu_dropout(zb, x, dids.data(), 4, dp);
  be->bias_relu_dropout(z2, {}, b.data(), x1, dids.data(), 4, dp);
  REQUIRE(z2.download() == z);
  REQUIRE(x1.download() == x.download());
  // with an addend R (GraphSAGE's root term): (Z + R) + 1 bᵀ, as axpy then the rank-1 product
  const auto r = random_vector(n * f, 26);
  const Dense dr = make_dense(*be, n, f, r);
  Dense zr = make_dense(*be, n, f, z), z3 = make_dense(*be, n, f, z), z4 = make_dense(*be, n, f, z);
  be->axpy(1.f, dr, zr);
  be->gemm(Op::N, Op::N, 1.f, ones, b, 1.f, zr);
  be->relu(zr, h);
  be->bias_relu(z3, dr, b.data(), h1);
  REQUIRE(z3.download() == z);
  REQUIRE(h1.download() == h.download());
  be->relu_dropout(zr, x, dids.data(), 4, dp);
  be->bias_relu_dropout(z4, dr, b.data(), x1, dids.data(), 4, dp);
  REQUIRE(z4.download() == z);
  REQUIRE(x1.download() == x.download());
  be->relu_dropout(zb, x, dids.data(), 4, dp);  // x and h1 again, as the backward below reads them
  be->bias_relu(z1, {}, b.data(), h1);
  // backward: G and Σ_i G_i in one pass, the bits of relu_backward then column_sums
  const Dense dd = make_dense(*be, n, f, d);
  Dense g(*be, n, f), g1(*be, n, f);
  Buffer<float> sums(*be, f), sums1(*be, f);
  be->relu_backward(dd, zb, g);
  be->column_sums(g, sums.data());
  be->relu_backward_sums(dd, h1, g1, sums1.data());  // h1 = ReLU(zb): ReLU' read from H is the same
  REQUIRE(g1.download() == g.download());
  REQUIRE(sums1.download() == sums.download());
  Dense shared = product();  // G written over Z (the shared plan)
  be->relu_backward_sums(dd, shared, shared, sums1.data());
  REQUIRE(shared.download() == g.download());
  REQUIRE(sums1.download() == sums.download());
  be->dropout_relu_backward(dd, x, dp.scale(), g);
  be->column_sums(g, sums.data());
  be->dropout_relu_backward_sums(dd, x, dp.scale(), g1, sums1.data());
  REQUIRE(g1.download() == g.download());
  REQUIRE(sums1.download() == sums.download());
}

TEST_CASE("ELU with its bias in the activation's passes equals the separate passes exactly",
          "[backend][elementwise][bias]") {
  auto be = cpu_backend();
  const std::int64_t n = 600, f = 37;  // more rows than one block of the column sums
  auto z = random_vector(n * f, 33);
  for (float& v : z) v *= 3.f;  // both sides of 0, and below the Taylor range of expm1_negative
  const auto d = random_vector(n * f, 34), bias = random_vector(f, 35);
  std::vector<std::int64_t> ids(n);
  for (std::int64_t i = 0; i < n; ++i) ids[i] = 3 * i + 1;
  Buffer<std::int64_t> dids = make_buffer<std::int64_t>(*be, ids);
  const Dense b = make_dense(*be, 1, f, bias), dd = make_dense(*be, n, f, d);
  // what the separate passes computed: Z += 1 bᵀ (add_row), then ELU and its slope elementwise
  std::vector<float> zb(n * f), h(n * f), g_in(n * f), g_out(n * f);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < f; ++j) {
      const std::int64_t k = i * f + j;
      zb[k] = z[k] + bias[j];
      h[k] = ew::elu(zb[k]);
      g_in[k] = d[k] * ew::elu_slope(zb[k], ew::EluOperand::input);
      g_out[k] = d[k] * ew::elu_slope(h[k], ew::EluOperand::output);
    }
  const auto sums_of = [&](const std::vector<float>& g) {
    Buffer<float> out(*be, f);
    be->column_sums(make_dense(*be, n, f, g), out.data());
    return out.download();
  };
  Dense z1 = make_dense(*be, n, f, z), h1(*be, n, f);
  be->bias_elu(z1, b.data(), h1);
  REQUIRE(z1.download() == z);  // Z is left as it is: the backward adds b again
  REQUIRE(h1.download() == h);
  Dense in_place = make_dense(*be, n, f, z);  // the shared plan's ELU in place (H over Z)
  be->bias_elu(in_place, b.data(), in_place);
  REQUIRE(in_place.download() == h);
  // dropout(ELU(Z + 1 bᵀ)): Dropout's mask over H
  const DropoutParams dp{5, 9, 0.3f};
  std::vector<float> x(n * f), masked_d(n * f);
  const ew::Dropout on_h{h.data(), f, x.data(), f, ids.data(), 4, dp.seed, dp.stream, dp.p, dp.scale()};
  const ew::Dropout on_d{d.data(), f, masked_d.data(), f, ids.data(), 4, dp.seed, dp.stream, dp.p, dp.scale()};
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < f; ++j) on_h(i, j), on_d(i, j);
  Dense x1(*be, n, f);
  be->bias_elu_dropout(z1, b.data(), x1, dids.data(), 4, dp);
  REQUIRE(z1.download() == z);
  REQUIRE(x1.download() == x);
  // backward: G and Σ_i G_i in one pass, from unbiased Z and b, or from H
  Dense g1(*be, n, f), hd = make_dense(*be, n, f, h);
  Buffer<float> sums(*be, f);
  be->elu_backward_sums(dd, z1, b.data(), ew::EluOperand::input, g1, sums.data());
  REQUIRE(g1.download() == g_in);
  REQUIRE(sums.download() == sums_of(g_in));
  be->elu_backward_sums(dd, hd, b.data(), ew::EluOperand::output, g1, sums.data());
  REQUIRE(g1.download() == g_out);
  REQUIRE(sums.download() == sums_of(g_out));
  be->elu_backward_sums(dd, hd, b.data(), ew::EluOperand::output, hd, sums.data());  // G over H (the shared plan)
  REQUIRE(hd.download() == g_out);
  std::vector<float> gd_in(n * f);
  for (std::int64_t k = 0; k < n * f; ++k) gd_in[k] = masked_d[k] * ew::elu_slope(zb[k], ew::EluOperand::input);
  be->dropout_elu_backward_sums(dd, z1, b.data(), ew::EluOperand::input, dids.data(), 4, dp, g1, sums.data());
  REQUIRE(g1.download() == gd_in);
  REQUIRE(sums.download() == sums_of(gd_in));
}

TEST_CASE("softmax cross-entropy in one pass equals the three-pass form", "[backend][loss]") {
  auto be = cpu_backend();
  const std::int64_t n = 50, c = 7;
  const auto z = random_vector(n * c, 31);
  std::vector<std::int32_t> labels(n);
  std::vector<std::uint8_t> split(n);
  for (std::int64_t i = 0; i < n; ++i) labels[i] = static_cast<std::int32_t>(i % c), split[i] = static_cast<std::uint8_t>(i % 4);
  Dense dz = make_dense(*be, n, c, z), g1(*be, n, c), g3(*be, n, c);
  Buffer<std::int32_t> dl = make_buffer<std::int32_t>(*be, labels);
  Buffer<std::uint8_t> ds = make_buffer<std::uint8_t>(*be, split);
  Buffer<float> mx(*be, n), sm(*be, n);
  be->row_max(dz, mx.data());
  be->row_sum_exp(dz, mx.data(), sm.data());
  const XentSums three = be->softmax_xent(dz, 0, mx.data(), sm.data(), dl.data(), ds.data(), 0.1f, g3);
  const XentSums one = be->softmax_xent(dz, 0, nullptr, nullptr, dl.data(), ds.data(), 0.1f, g1);
  CHECK(one.loss == Approx(three.loss).epsilon(1e-6));
  CHECK(one.correct == three.correct);
  CHECK(one.counted == three.counted);
  const auto a = g1.download(), b = g3.download();
  for (std::size_t k = 0; k < a.size(); ++k) REQUIRE(a[k] == Approx(b[k]).margin(1e-7));
  // gradient rows sum to zero for training rows (softmax minus one-hot)
  for (std::int64_t i = 0; i < n; ++i) {
    double sum = 0;
    for (std::int64_t j = 0; j < c; ++j) sum += a[i * c + j];
    REQUIRE(sum == Approx(0).margin(1e-6));
  }
}

TEST_CASE("the softmax's exp is within 3e-7 of exp; the loss and gradient match a double reference", "[backend][loss]") {
  double worst = 0;
  for (int k = 0; k <= 200000; ++k) {
    const float x = -87.f + 87.f * static_cast<float>(k) / 200000.f;  // the softmax's range: z - max <= 0
    worst = std::max(worst, std::abs(ew::softmax_exp(x) / std::exp(static_cast<double>(x)) - 1));
  }
  CHECK(worst < 3e-7);
  for (float x : {1.f, 10.f, 80.f}) CHECK(ew::softmax_exp(x) == Approx(std::exp(x)).epsilon(3e-7));
  CHECK(ew::softmax_exp(0.f) == 1.f);
  CHECK(std::isnan(ew::softmax_exp(std::numeric_limits<float>::quiet_NaN())));
  const float tiny = ew::softmax_exp(-std::numeric_limits<float>::infinity());
  CHECK((tiny >= 0.f && tiny < 2e-38f));

  auto be = cpu_backend();
  const std::int64_t n = 40, c = 33;  // 33: a vector loop and its remainder
  std::vector<float> z = random_vector(n * c, 41);
  for (float& v : z) v *= 30.f;  // logits far apart: exps down to e^-60
  std::vector<std::int32_t> labels(n);
  std::vector<std::uint8_t> split(n, ew::kTrain);
  for (std::int64_t i = 0; i < n; ++i) labels[i] = static_cast<std::int32_t>((i * 7) % c);
  Dense dz = make_dense(*be, n, c, z), g(*be, n, c);
  Buffer<std::int32_t> dl = make_buffer<std::int32_t>(*be, labels);
  Buffer<std::uint8_t> ds = make_buffer<std::uint8_t>(*be, split);
  const float scale = 1.f / static_cast<float>(n);
  const XentSums got = be->softmax_xent(dz, 0, nullptr, nullptr, dl.data(), ds.data(), scale, g);
  const auto grad = g.download();
  double loss = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    double m = -INFINITY, sum = 0;
    for (std::int64_t j = 0; j < c; ++j) m = std::max(m, static_cast<double>(z[i * c + j]));
    for (std::int64_t j = 0; j < c; ++j) sum += std::exp(z[i * c + j] - m);
    loss -= z[i * c + labels[i]] - m - std::log(sum);
    for (std::int64_t j = 0; j < c; ++j) {
      const double ref = (std::exp(z[i * c + j] - m) / sum - (j == labels[i])) * scale;
      REQUIRE(grad[i * c + j] == Approx(ref).margin(1e-7));
    }
  }
  CHECK(got.loss == Approx(loss).epsilon(1e-6));
}

TEST_CASE("the loss's rows side by side give the bits of one row at a time, with G over Z too", "[backend][loss]") {
  // ew::running_max is glibc's fmaxf where the running max is not NaN: ±0 ties (x wins), NaN x, infinities
  auto bits = [](float v) {
    std::uint32_t b;
    std::memcpy(&b, &v, sizeof b);
    return b;
  };
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  for (float m : {-inf, -0.f, 0.f, -1.5f, 2.f})
    for (float x : {-0.f, 0.f, nan, inf, -inf, -1.5f, 2.f, 3.f}) REQUIRE(bits(ew::running_max(m, x)) == bits(std::fmax(m, x)));

  auto be = cpu_backend();
  // 2 blocks of 512 rows and 13 more (groups of 8 and the rest); 21 local columns of a row split at col0 = 4
  const std::int64_t n = 1037, c = 21, col0 = 4;
  std::vector<float> z = random_vector(n * c, 43);
  for (float& v : z) v *= 10.f;
  for (std::int64_t j = 0; j < c; ++j) z[3 * c + j] = j % 2 ? -0.f : 0.f;  // a row of ±0 ties
  z[5 * c + 2] = nan;                                                      // a NaN logit
  std::vector<std::int32_t> labels(n);
  std::vector<std::uint8_t> split(n);
  for (std::int64_t i = 0; i < n; ++i)
    labels[i] = static_cast<std::int32_t>((i * 5) % (c + 8)), split[i] = static_cast<std::uint8_t>(i % 4);
  split[5] = ew::kNone;  // the NaN row: no loss (its gradient row is compared by its bits)
  Buffer<std::int32_t> dl = make_buffer<std::int32_t>(*be, labels);
  Buffer<std::uint8_t> ds = make_buffer<std::uint8_t>(*be, split);
  Dense dz = make_dense(*be, n, c, z), g(*be, n, c);
  Buffer<float> mx(*be, n), sm(*be, n);
  be->row_max(dz, mx.data());
  be->row_sum_exp(dz, mx.data(), sm.data());
  for (const bool given : {false, true}) {  // max and sum computed in the pass, or given (a split row)
    const float* m = given ? mx.data() : nullptr;
    const float* s = given ? sm.data() : nullptr;
    // one row at a time, as the loss was written before its rows ran side by side
    std::vector<float> one_g(n * c);
    auto one_row = [&](std::int64_t i) {
      const float* zi = &z[i * c];
      float* gi = &one_g[i * c];
      const std::int64_t y = labels[i] - col0;
      const bool labelled = y >= 0 && y < c, train = split[i] == ew::kTrain;
      float mi = -inf, si = 0.f;
      if (given) mi = m[i], si = s[i];
      else
        for (std::int64_t j = 0; j < c; ++j) mi = std::fmax(mi, zi[j]);
      for (std::int64_t j = 0; j < c; ++j) gi[j] = ew::softmax_exp(zi[j] - mi);
      if (!given)
        for (std::int64_t j = 0; j < c; ++j) si += gi[j];
      const float inv = train ? 0.01f / si : 0.f;
      for (std::int64_t j = 0; j < c; ++j) gi[j] *= inv;
      if (train && labelled) gi[y] -= 0.01f;
      return train && labelled ? -(static_cast<double>(zi[y]) - mi - std::log(static_cast<double>(si))) : 0.0;
    };
    double loss = 0;  // the backend's order: rows in order within blocks of 512, then the blocks
    for (std::int64_t b0 = 0; b0 < n; b0 += 512) {
      double block = 0;
      for (std::int64_t i = b0; i < std::min(n, b0 + 512); ++i) block += one_row(i);
      loss += block;
    }
    const XentSums got = be->softmax_xent(dz, col0, m, s, dl.data(), ds.data(), 0.01f, g);
    CHECK(got.loss == loss);
    CHECK(got.counted[ew::kTrain] > 0);
    const auto gg = g.download();
    for (std::int64_t k = 0; k < n * c; ++k) REQUIRE(bits(gg[k]) == bits(one_g[k]));
    Dense over = make_dense(*be, n, c, z);  // G in Z's storage
    const XentSums in_place = be->softmax_xent(over, col0, m, s, dl.data(), ds.data(), 0.01f, over);
    CHECK(in_place.loss == loss);
    CHECK(in_place.correct == got.correct);
    CHECK(in_place.counted == got.counted);
    const auto og = over.download();
    for (std::int64_t k = 0; k < n * c; ++k) REQUIRE(bits(og[k]) == bits(gg[k]));
  }
}

TEST_CASE("dropout mask is a function of (seed, epoch, vertex, column) only", "[backend][dropout]") {
  auto be = cpu_backend();
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
  auto be = cpu_backend();
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

TEST_CASE("graph attention's edge kernels against dense loops, with full and compressed rows", "[backend][attention]") {
  auto be = cpu_backend();
  // 12 heads: the row reductions' second group of ew::kHeadGroup accumulators
  for (const int H : {3, 12}) {
    const std::int64_t width = 11;  // columns per head (the SDDMM's 8 lanes and a tail); the view starts inside head 0
    const ew::HeadSplit hs{2, width};
    const std::int64_t cols = H * width - 2;  // local columns 2 .. H width - 1: head 0 partly, then heads 1 .. H - 1
    for (auto [rows, n, density] : {std::tuple{30, 25, 0.3}, std::tuple{300, 40, 0.004}}) {
      const HostCsr h = random_csr(rows, n, density, static_cast<unsigned>(rows + n));
      const Csr a = upload(*be, h, RowStorage::sparse_if_smaller);
      CHECK(a.compressed == (density < 0.01));
      const std::int64_t nnz = h.nnz();
      const auto src = random_vector(n * H, 3), dst = random_vector(rows * H, 4);
      const auto x = random_vector(n * cols, 5), g = random_vector(rows * cols, 6);
      Dense ds = make_dense(*be, n, H, src), dd = make_dense(*be, rows, H, dst);
      Buffer<float> e(*be, static_cast<std::size_t>(nnz * H)), m(*be, static_cast<std::size_t>(rows * H)),
          s(*be, static_cast<std::size_t>(rows * H));
      be->edge_scores(a, H, ds.data(), dd.data(), 0.2f, e.data());
      be->edge_row_max(a, H, e.data(), m.data());
      be->edge_exp_row_sum(a, H, m.data(), e.data(), s.data());
      be->edge_scale_rows(a, H, s.data(), e.data());
      const auto alpha = e.download();
      {  // the four passes in one visit per row: the same bits, the rows' max and sum too (unstored rows: -inf, 0)
        Buffer<float> e1(*be, e.size()), m1(*be, m.size()), s1(*be, s.size());
        be->edge_softmax(a, H, ds.data(), dd.data(), 0.2f, e1.data(), m1.data(), s1.data());
        CHECK(same_bits(e1.download(), alpha));
        CHECK(same_bits(m1.download(), m.download()));
        CHECK(same_bits(s1.download(), s.download()));
      }
      const auto head_of = [&](std::int64_t c) { return static_cast<int>((hs.col0 + c) / width); };
      for (std::int64_t i = 0; i < rows; ++i)
        for (int k = 0; k < H; ++k) {  // the row's softmax of LeakyReLU(src_j + dst_i)
          double total = 0;
          for (std::int64_t q = h.rowptr[i]; q < h.rowptr[i + 1]; ++q) {
            const double v = src[h.col[q] * H + k] + dst[i * H + k];
            total += std::exp(v > 0 ? v : 0.2 * v);
          }
          for (std::int64_t q = h.rowptr[i]; q < h.rowptr[i + 1]; ++q) {
            const double v = src[h.col[q] * H + k] + dst[i * H + k];
            REQUIRE(alpha[q * H + k] == Approx(std::exp(v > 0 ? v : 0.2 * v) / total).margin(1e-6));
          }
        }
      // Y = α X per head; the transpose's product through the permutation; the SDDMM
      Dense dx = make_dense(*be, n, cols, x), dg = make_dense(*be, rows, cols, g), y(*be, rows, cols), yt(*be, n, cols);
      be->spmm_edges(a, H, hs, e.data(), nullptr, dx, y);
      std::vector<std::int64_t> perm;
      const HostCsr th = transpose_pattern(h, perm);
      const Csr t = upload(*be, th, RowStorage::sparse_if_smaller);
      const auto dperm = make_buffer<std::int64_t>(*be, perm);
      be->spmm_edges(t, H, hs, e.data(), dperm.data(), dg, yt);
      Buffer<float> dots(*be, static_cast<std::size_t>(nnz * H)), rs(*be, static_cast<std::size_t>(n * H));
      be->sddmm(a, H, hs, dg, dx, dots.data());
      be->edge_row_sums(t, H, e.data(), dperm.data(), rs.data());
      const auto yv = y.download(), ytv = yt.download(), dv = dots.download(), rsv = rs.download();
      std::vector<double> ref(static_cast<std::size_t>(rows * cols)), reft(static_cast<std::size_t>(n * cols)),
          refd(static_cast<std::size_t>(nnz * H)), refs(static_cast<std::size_t>(n * H));
      for (std::int64_t i = 0; i < rows; ++i)
        for (std::int64_t q = h.rowptr[i]; q < h.rowptr[i + 1]; ++q) {
          const std::int64_t j = h.col[q];
          for (int k = 0; k < H; ++k) refs[j * H + k] += alpha[q * H + k];
          for (std::int64_t c = 0; c < cols; ++c) {
            const float w = alpha[q * H + head_of(c)];
            ref[i * cols + c] += w * x[j * cols + c];
            reft[j * cols + c] += w * g[i * cols + c];
            refd[q * H + head_of(c)] += static_cast<double>(g[i * cols + c]) * x[j * cols + c];
          }
        }
      for (std::size_t k = 0; k < ref.size(); ++k) REQUIRE(yv[k] == Approx(ref[k]).margin(1e-5));
      for (std::size_t k = 0; k < reft.size(); ++k) REQUIRE(ytv[k] == Approx(reft[k]).margin(1e-5));
      for (std::size_t k = 0; k < refd.size(); ++k) REQUIRE(dv[k] == Approx(refd[k]).margin(1e-5));
      for (std::size_t k = 0; k < refs.size(); ++k) REQUIRE(rsv[k] == Approx(refs[k]).margin(1e-5));
      for (std::int64_t i = 0; i < rows; ++i)  // the SDDMM's bits: its stated order, on every ISA
        for (std::int64_t q = h.rowptr[i]; q < h.rowptr[i + 1]; ++q)
          for (int k = 0; k < H; ++k) {
            const std::int64_t c0 = hs.first(k, cols), c1 = hs.last(k, cols);
            const float want = dot_in_order(&g[i * cols + c0], &x[h.col[q] * cols + c0], 1, c1 - c0);
            REQUIRE(std::memcmp(&dv[q * H + k], &want, sizeof want) == 0);
          }
    }
  }
}

TEST_CASE("the CPU's register-blocked attention SpMM, its fusion with the SDDMM and the one-visit softmax have the row forms' bits",
          "[backend][attention]") {
  // cpu::spmm_edge_values against ew::SpmmEdges's row loop (the order both
  // state), forward and through the transpose's permutation, and fused with
  // the SDDMM against the separate calls: heads aligned
  // with the SIMD vectors (32 columns), vectors spanning several heads (5),
  // a single head wider than one register segment (300: two tiles and a
  // tail); a hub row of every column, empty rows, compressed rows.
  auto be = cpu_backend();
  // the SDDMM's vector lanes (every head's local width a multiple of 8) in fours and singly: 4 x 32, 6 x 8, and
  // 3 x 16 from inside head 0; its plain loop: 7 x 5, 1 x 300
  for (auto [H, width, col0] : {std::tuple{4, 32, 0}, std::tuple{7, 5, 3}, std::tuple{1, 300, 0}, std::tuple{6, 8, 0},
                                std::tuple{3, 16, 8}})
    // the first: chunks over the threads (more than 4096 nonzeros and stored rows)
    for (auto [rows, n, density] : {std::tuple{40, 2000, 0.06}, std::tuple{3000, 40, 0.0005}}) {
      const ew::HeadSplit hs{col0, width};
      const std::int64_t cols = H * width - col0;
      const HostCsr h = random_csr(rows, n, density, static_cast<unsigned>(rows + H));  // row 1: every column
      std::vector<std::int64_t> perm;
      const HostCsr th = transpose_pattern(h, perm);
      const auto v = random_vector(h.nnz() * H, 11);
      const auto dv = make_buffer<float>(*be, v);
      const auto dperm = make_buffer<std::int64_t>(*be, perm);
      for (const bool transposed : {false, true}) {
        const HostCsr& hp = transposed ? th : h;
        const Csr a = upload(*be, hp, RowStorage::sparse_if_smaller);
        const auto x = random_vector(hp.cols * cols, 12);
        Dense dx = make_dense(*be, hp.cols, cols, x), y(*be, hp.rows, cols);
        be->spmm_edges(a, H, hs, dv.data(), transposed ? dperm.data() : nullptr, dx, y);
        std::vector<float> want(static_cast<std::size_t>(hp.rows * cols), 0.f);
        const ew::SpmmEdges row_form{
            {edge_block(a, H), dv.data(), transposed ? dperm.data() : nullptr, hs, dx.data(), cols, want.data(), cols,
             cols}};
        for (std::int64_t s = 0; s < a.stored_rows(); ++s) row_form(s);
        const auto got = y.download();
        REQUIRE(std::memcmp(got.data(), want.data(), want.size() * sizeof(float)) == 0);
      }
      // the backward's fused pass: βᵀG over the transpose and the SDDMM, each with its own call's bits
      const Csr a = upload(*be, h, RowStorage::sparse_if_smaller), t = upload(*be, th, RowStorage::sparse_if_smaller);
      Dense dg = make_dense(*be, rows, cols, random_vector(rows * cols, 13)),
            dz = make_dense(*be, n, cols, random_vector(n * cols, 14)), y(*be, n, cols), y_ref(*be, n, cols);
      Buffer<float> dots(*be, static_cast<std::size_t>(h.nnz() * H)), dots_ref(*be, dots.size());
      be->spmm_sddmm_edges(a, t, dperm.data(), H, hs, dv.data(), dg, dz, y, dots.data());
      be->spmm_edges(t, H, hs, dv.data(), dperm.data(), dg, y_ref);
      be->sddmm(a, H, hs, dg, dz, dots_ref.data());
      REQUIRE(std::memcmp(y.download().data(), y_ref.download().data(), y_ref.size() * sizeof(float)) == 0);
      REQUIRE(std::memcmp(dots.download().data(), dots_ref.download().data(), dots.size() * sizeof(float)) == 0);
      // the forward's softmax in one visit per row: the four passes' bits (heads 1, 3, 4, 6, 7: the specialised
      // and the generic row loops; a hub row, empty rows, compressed rows)
      Dense ds = make_dense(*be, n, H, random_vector(n * H, 15)), dd = make_dense(*be, rows, H, random_vector(rows * H, 16));
      Buffer<float> e(*be, dots.size()), m(*be, static_cast<std::size_t>(rows * H)), sum(*be, m.size()),
          e1(*be, dots.size()), m1(*be, m.size()), sum1(*be, m.size());
      be->edge_scores(a, H, ds.data(), dd.data(), 0.2f, e.data());
      be->edge_row_max(a, H, e.data(), m.data());
      be->edge_exp_row_sum(a, H, m.data(), e.data(), sum.data());
      be->edge_scale_rows(a, H, sum.data(), e.data());
      be->edge_softmax(a, H, ds.data(), dd.data(), 0.2f, e1.data(), m1.data(), sum1.data());
      REQUIRE(same_bits(e1.download(), e.download()));
      REQUIRE(same_bits(m1.download(), m.download()));
      REQUIRE(same_bits(sum1.download(), sum.download()));
    }
}

TEST_CASE("graph attention's averaged heads: the mean's SpMM, its adjoint and its SDDMM against dense loops",
          "[backend][attention]") {
  // Architecture::head_mean: Z is class-major (column c·H + h), the output is
  // the heads' mean (PyG's GATConv(concat=False)).
  auto be = cpu_backend();
  const int H = 3;
  const std::int64_t cols = 19;  // output columns (the SDDMM's 8 lanes twice and a tail); Z has cols·H
  const ew::HeadSplit hs{2 * H, cols, H};
  CHECK(hs.head(0) == 0);
  CHECK(hs.head(4) == 1);
  CHECK(hs.head(cols * H - 1) == H - 1);
  for (auto [rows, n, density] : {std::tuple{30, 25, 0.3}, std::tuple{300, 40, 0.004}}) {
    const HostCsr h = random_csr(rows, n, density, static_cast<unsigned>(rows + n));
    const Csr a = upload(*be, h, RowStorage::sparse_if_smaller);
    const std::int64_t nnz = h.nnz();
    const auto v = random_vector(nnz * H, 7), z = random_vector(n * cols * H, 8), g = random_vector(rows * cols, 9);
    const auto dv = make_buffer<float>(*be, v);
    Dense dz = make_dense(*be, n, cols * H, z), dg = make_dense(*be, rows, cols, g), y(*be, rows, cols),
          yt(*be, n, cols * H);
    be->spmm_edges(a, H, hs, dv.data(), nullptr, dz, y);  // Z -> the mean
    std::vector<std::int64_t> perm;
    const Csr t = upload(*be, transpose_pattern(h, perm), RowStorage::sparse_if_smaller);
    const auto dperm = make_buffer<std::int64_t>(*be, perm);
    be->spmm_edges(t, H, hs, dv.data(), dperm.data(), dg, yt);  // G -> each head's share
    Buffer<float> dots(*be, static_cast<std::size_t>(nnz * H));
    be->sddmm(a, H, hs, dg, dz, dots.data());
    std::vector<double> ref(static_cast<std::size_t>(rows * cols)), reft(static_cast<std::size_t>(n * cols * H)),
        refd(static_cast<std::size_t>(nnz * H));
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t q = h.rowptr[i]; q < h.rowptr[i + 1]; ++q) {
        const std::int64_t j = h.col[q];
        for (std::int64_t c = 0; c < cols; ++c)
          for (int k = 0; k < H; ++k) {
            const double w = v[q * H + k] / static_cast<double>(H);
            ref[i * cols + c] += w * z[(j * cols + c) * H + k];
            reft[(j * cols + c) * H + k] += w * g[i * cols + c];
            refd[q * H + k] += static_cast<double>(g[i * cols + c]) * z[(j * cols + c) * H + k] / H;
          }
      }
    const auto yv = y.download(), ytv = yt.download(), dd = dots.download();
    for (std::size_t k = 0; k < ref.size(); ++k) REQUIRE(yv[k] == Approx(ref[k]).margin(1e-5));
    for (std::size_t k = 0; k < reft.size(); ++k) REQUIRE(ytv[k] == Approx(reft[k]).margin(1e-5));
    for (std::size_t k = 0; k < refd.size(); ++k) REQUIRE(dd[k] == Approx(refd[k]).margin(1e-5));
    for (std::int64_t i = 0; i < rows; ++i)  // the SDDMM's bits: its stated order, on every ISA
      for (std::int64_t q = h.rowptr[i]; q < h.rowptr[i + 1]; ++q)
        for (int k = 0; k < H; ++k) {
          const float want = dot_in_order(&g[i * cols], &z[h.col[q] * cols * H + k], H, cols) / H;
          REQUIRE(std::memcmp(&dd[q * H + k], &want, sizeof want) == 0);
        }
  }
}

TEST_CASE("graph attention's per-head dots of Z and their backward's adjoint, concatenated and averaged heads",
          "[backend][attention]") {
  // s_j,h = Σ_{c in head h} a_src[c] Z_j[c] (and d with a_dst) in ew::ordered_dot's order over the head's
  // local columns; dZ_j[c] = (dZ_j[c] + ds_j,head(c) a_src[c]) + dd_j,head(c) a_dst[c]: bit for bit.
  auto be = cpu_backend();
  const int H = 3;
  const std::int64_t rows = 37;
  struct Layout { ew::HeadSplit hs; std::int64_t cols; };
  // concatenated heads of 11 columns from global column 2 (head 0 in part); averaged heads, class-major,
  // output columns from 2 (Z's local columns from 2 H)
  for (const Layout& lay : {Layout{{2, 11}, 31}, Layout{{2 * H, 0, H}, 19 * H}}) {
    const ew::HeadSplit hs = lay.hs;
    const std::int64_t cols = lay.cols;
    const auto z = random_vector(rows * cols, 11), as = random_vector(cols, 12), ad = random_vector(cols, 13);
    const auto dsv = random_vector(rows * H, 14), ddv = random_vector(rows * H, 15), dzv = random_vector(rows * cols, 16);
    const auto das = make_buffer<float>(*be, as), dad = make_buffer<float>(*be, ad);
    Dense dz = make_dense(*be, rows, cols, z), s(*be, rows, H), d(*be, rows, H);
    be->head_dots(dz, das.data(), dad.data(), hs, s, d);
    const auto sv = s.download(), dv = d.download();
    for (std::int64_t j = 0; j < rows; ++j)
      for (int h = 0; h < H; ++h) {
        std::vector<float> zh, ash, adh;  // head h's local columns in order
        for (std::int64_t c = 0; c < cols; ++c)
          if (hs.head(c) == h) {
            zh.push_back(z[j * cols + c]);
            ash.push_back(as[c]);
            adh.push_back(ad[c]);
          }
        const auto n = static_cast<std::int64_t>(zh.size());
        CHECK(n == hs.columns(h, cols).count);
        const float want_s = dot_in_order(zh.data(), ash.data(), 1, n), want_d = dot_in_order(zh.data(), adh.data(), 1, n);
        REQUIRE(std::memcmp(&sv[j * H + h], &want_s, sizeof want_s) == 0);
        REQUIRE(std::memcmp(&dv[j * H + h], &want_d, sizeof want_d) == 0);
      }
    Dense ds = make_dense(*be, rows, H, dsv), dd = make_dense(*be, rows, H, ddv), g = make_dense(*be, rows, cols, dzv);
    Buffer<float> da_src(*be, static_cast<std::size_t>(cols)), da_dst(*be, static_cast<std::size_t>(cols));
    be->head_dots_backward(ds, dd, das.data(), dad.data(), hs, dz, g, da_src.data(), da_dst.data());
    const auto gv = g.download();
    for (std::int64_t j = 0; j < rows; ++j)
      for (std::int64_t c = 0; c < cols; ++c) {
        const int h = hs.head(c);
        const float want = (dzv[j * cols + c] + dsv[j * H + h] * as[c]) + ddv[j * H + h] * ad[c];
        REQUIRE(std::memcmp(&gv[j * cols + c], &want, sizeof want) == 0);
      }
  }
}

TEST_CASE("the attention vectors' gradient as column dots: blocks of 256 rows in double, any thread count",
          "[backend][attention]") {
  // da[c] = Σ_j e_j,head(c) Z_j[c] (ew::HeadColumnDots) for e = ds and dd (head_dots_backward's two
  // gradients, one pass): each product exact in double, summed in double by blocks of 256 rows, the
  // blocks in order (column_sums' order), rounded once; the same bits at 1 and 2 threads;
  // concatenated heads from inside a head and averaged ones.
  const int H = 3;
  struct Layout { ew::HeadSplit hs; std::int64_t cols; };
  for (const Layout& lay : {Layout{{2, 11}, 31}, Layout{{2 * H, 0, H}, 19 * H}})
    for (const std::int64_t rows : {std::int64_t{37}, std::int64_t{1000}}) {  // one block; four, the last partial
      const std::int64_t cols = lay.cols;
      const auto z = random_vector(rows * cols, 21), es = random_vector(rows * H, 22), ed = random_vector(rows * H, 23);
      const auto a = random_vector(2 * cols, 24);
      const auto got = at_1_and_2_threads([&](Backend& be) {
        Dense dz = make_dense(be, rows, cols, z), ds = make_dense(be, rows, H, es), dd = make_dense(be, rows, H, ed);
        Dense g(be, rows, cols);
        be.fill(g, 0.f);
        const auto va = make_buffer<float>(be, a);
        Buffer<float> da_src(be, static_cast<std::size_t>(cols)), da_dst(be, static_cast<std::size_t>(cols));
        be.head_dots_backward(ds, dd, va.data(), va.data() + cols, lay.hs, dz, g, da_src.data(), da_dst.data());
        std::vector<float> both = da_src.download(), dst = da_dst.download();
        both.insert(both.end(), dst.begin(), dst.end());
        return both;
      });
      CHECK(got[0] == got[1]);
      for (int which = 0; which < 2; ++which) {
        const std::vector<float>& e = which == 0 ? es : ed;
        for (std::int64_t c = 0; c < cols; ++c) {
          const int h = lay.hs.head(c);
          double total = 0;
          long double exact = 0;
          for (std::int64_t b = 0; b < rows; b += 256) {
            double block = 0;
            for (std::int64_t i = b; i < std::min(rows, b + 256); ++i) {
              block += static_cast<double>(e[i * H + h]) * static_cast<double>(z[i * cols + c]);
              exact += static_cast<long double>(e[i * H + h]) * static_cast<long double>(z[i * cols + c]);
            }
            total += block;
          }
          const float want = static_cast<float>(total), have = got[0][which * cols + c];
          INFO((which == 0 ? "da_src" : "da_dst") << " column " << c);
          REQUIRE(std::memcmp(&have, &want, sizeof want) == 0);
          CHECK(have == Approx(static_cast<double>(exact)).epsilon(1e-6).margin(1e-6));
        }
      }
    }
}

TEST_CASE("column sums in double: independent of the thread count, the exact sum rounded once", "[backend]") {
  const std::int64_t rows = 5000, cols = 3;
  std::vector<float> x(static_cast<std::size_t>(rows * cols));
  for (std::int64_t i = 0; i < rows; ++i)  // columns that cancel: + and - alternate around a small mean
    for (std::int64_t c = 0; c < cols; ++c) x[i * cols + c] = (i % 2 ? -0.1428571f : 0.1428573f) * (1 + c);
  std::vector<float> sums[2];
  int k = 0;
  for (const int threads : {1, 2}) {
    auto be = make_backend("cpu", {threads});
    Dense d = make_dense(*be, rows, cols, x);
    Buffer<float> out(*be, cols);
    be->column_sums(d, out.data());
    sums[k++] = out.download();
  }
  CHECK(sums[0] == sums[1]);
  for (std::int64_t c = 0; c < cols; ++c) {
    double exact = 0;
    for (std::int64_t i = 0; i < rows; ++i) exact += x[i * cols + c];
    CHECK(sums[0][c] == static_cast<float>(exact));
  }
}

TEST_CASE("ELU and its slope without libm calls: within 6e-7 of expm1 and exp", "[backend][elementwise]") {
  for (double v = -20; v <= 2; v += 1.0 / 4096) {
    const auto x = static_cast<float>(v);
    const double elu = x > 0 ? x : std::expm1(static_cast<double>(x));
    const double slope = x > 0 ? 1.0 : std::exp(static_cast<double>(x));
    REQUIRE(std::abs(ew::elu(x) - elu) <= 6e-7 * std::abs(elu) + 1e-30);
    REQUIRE(std::abs(ew::elu_slope(x) - slope) <= 6e-7 * slope);
  }
}

TEST_CASE("the counting backend charges each kernel's work to the innermost open scope; traced, it runs none",
          "[backend][work]") {
  auto be = make_backend("cpu", {1});
  Ledger ledger;
  ledger.set_phase(Phase::epoch);
  attach_ledger(*be, ledger);
  Dense a = make_dense(*be, 3, 4, random_vector(12, 1)), b = make_dense(*be, 4, 5, random_vector(20, 2));
  Dense c = make_dense(*be, 3, 5, std::vector<float>(15, 7.f));
  {
    auto t = ledger.time(Category::gemm);
    be->gemm(Op::N, Op::N, 1.f, a, b, 0.f, c);  // 3 x 5 outputs, 4 multiply-adds each
    {
      auto inner = ledger.time(Category::elementwise);
      be->fill(c, 1.f);
    }
    be->axpy(2.f, c, c);  // the gemm scope again
  }
  be->relu(c, c);  // no scope open: other
  const CategoryWork w = ledger.take_work(Phase::epoch);
  auto at = [&](Category cat, Kernel k) { return w[static_cast<int>(cat)][static_cast<int>(k)]; };
  // bytes: each operand read once, each result written once (in place: twice), 4 B a float
  CHECK(at(Category::gemm, Kernel::gemm) == Work{60, 1, 0, 0, 4 * (12 + 20 + 15)});
  CHECK(at(Category::gemm, Kernel::elementwise) == Work{15, 1, 0, 0, 4 * (15 + 2 * 15)});  // axpy: x, y in place
  CHECK(at(Category::elementwise, Kernel::elementwise) == Work{15, 1, 0, 0, 4 * 15});      // fill
  CHECK(at(Category::other, Kernel::elementwise) == Work{15, 1, 0, 0, 4 * (15 + 15)});     // relu
  CHECK(ledger.take_work(Phase::epoch) == CategoryWork{});  // taken

  // A sparse kernel: nonzeros x width, its nonzeros, and the rows it visits x width (a compressed block's
  // stored rows only).
  for (const RowStorage storage : {RowStorage::full, RowStorage::sparse_if_smaller}) {
    const HostCsr h = random_csr(2000, 4, 0.0005, 7);
    const Csr s = upload(*be, h, storage);
    REQUIRE(s.compressed == (storage == RowStorage::sparse_if_smaller));
    Dense x = make_dense(*be, 4, 5, random_vector(20, 3)), y = make_dense(*be, 2000, 5, std::vector<float>(10000, 0.f));
    be->spmm(s, x, y, 0.f);
    const auto nnz = static_cast<double>(h.nnz());
    CHECK(ledger.take_work(Phase::epoch)[static_cast<int>(Category::other)][static_cast<int>(Kernel::spmm)] ==
          Work{nnz * 5, 1, nnz, static_cast<double>(s.stored_rows()) * 5, csr_bytes(s) + 4 * (20 + 10000)});
  }

  // Traced: counted the same, and c keeps relu(1 + 2 * 1) = 3; an upload is counted and not run either.
  Dense ata = make_dense(*be, 4, 4, std::vector<float>(16, 0.f));
  ledger.take_work(Phase::epoch);
  be->trace(true);
  be->fill(c, 5.f);
  be->gemm(Op::T, Op::N, 1.f, a, a, 0.f, ata);
  const std::vector<float> ones(16, 1.f);
  be->copy_to_device(ata.data(), ones.data(), ones.size() * sizeof(float));
  std::vector<float> host(15);
  be->copy_to_host(host.data(), c.data(), host.size() * sizeof(float));  // copies to the host still run
  CHECK(host == std::vector<float>(15, 3.f));
  CHECK(ata.download() == std::vector<float>(16, 0.f));
  const CategoryWork traced = ledger.take_work(Phase::epoch);
  CHECK(traced[static_cast<int>(Category::other)][static_cast<int>(Kernel::gemm)] ==
        Work{4 * 4 * 3, 1, 0, 0, 4 * (12 + 12 + 16)});
  CHECK(traced[static_cast<int>(Category::other)][static_cast<int>(Kernel::to_device)] == Work{64, 1, 0, 0, 64});
  CHECK(traced[static_cast<int>(Category::other)][static_cast<int>(Kernel::to_host)] ==
        Work{60 + 64, 2, 0, 0, 60 + 64});  // c and ata
}
