#include "backends/cpu/cpu_backend.hpp"

#include "backends/cpu/blas_kernels.hpp"
#include "backends/cpu/sgemm.hpp"
#include "backends/cpu/spmm.hpp"

#include <cblas.h>
#include <omp.h>
#include <sys/mman.h>
#include <xmmintrin.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <vector>

namespace gcnlab {

namespace {

// The generic launchers: one OpenMP loop per functor shape.
template <class F>
void for_each_2d(std::int64_t rows, std::int64_t cols, const F& f) {
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) f(i, j);
}

// Row functors (ew::Dropout::row and kin): one call per row.
template <class F>
void for_each_row(std::int64_t rows, std::int64_t cols, const F& f) {
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < rows; ++i) f.row(i, cols);
}

template <class F>
void for_each_1d(std::int64_t n, const F& f) {
#pragma omp parallel for schedule(static)
  for (std::int64_t k = 0; k < n; ++k) f(k);
}

constexpr std::size_t kAlign = 64;
constexpr std::size_t kHugePage = 2u << 20;

// Subnormal floats flushed to zero, as operands (DAZ) and as results (FTZ), in
// the MXCSR of the calling thread. An x86 core takes a microcode assist of
// about a hundred cycles for each subnormal operand or result; a saturated
// softmax's exp underflows into them, and GIN's gradients (sum aggregation, no
// normalisation) are full of them: its last layers' OpenBLAS GEMMs ran 20-60x
// slower than on the same shapes of normal numbers, a quarter of its epoch
// (docs/performance.md). The modes are architectural (SSE, the same on AMD and
// Intel, at every vector width), so the bits stay the same on every x86-64 host.
void flush_subnormals() {
#if defined(__SSE__)
  constexpr unsigned kFlushToZero = 0x8000, kDenormalsAreZero = 0x0040;
  _mm_setcsr(_mm_getcsr() | kFlushToZero | kDenormalsAreZero);
#endif
}

}  // namespace

// The kernels run on the constructing thread and on OpenMP's pool (oneDNN and
// OpenBLAS's OpenMP build share it), whose threads each have an MXCSR of their
// own; a thread the pool adds later inherits the creating thread's.
CpuBackend::CpuBackend(const BackendOptions& opts)
    : threads_(opts.threads), gemm_(cpu::gemm_library_from_environment()) {
  omp_set_num_threads(threads_);
  openblas_set_num_threads(threads_);
  flush_subnormals();
#pragma omp parallel num_threads(threads_)
  flush_subnormals();
}

std::vector<std::pair<std::string, std::string>> CpuBackend::versions() const {
  return {{"gemm", cpu::gemm_description(gemm_)},
          {"blas", openblas_get_config()},
          {"blas_kernels", cpu::blas_kernels()},
          {"openmp", std::to_string(_OPENMP)}};
}

// Buffers of 2 MiB and more are mappings of their own, aligned to and advised for huge pages, and
// unmapped when freed: advised through malloc, the huge-page flag would outlive the buffer on heap
// memory that malloc hands out again, and every small allocation later placed there would fault in
// 2 MiB (simulate's thousands of ranks grew 8x so, grid after grid).
void* CpuBackend::do_allocate(std::size_t bytes) {
  if (bytes < kHugePage) {
    void* p = std::aligned_alloc(kAlign, (bytes + kAlign - 1) / kAlign * kAlign);
    GCNLAB_CHECK(p != nullptr, "out of host memory allocating {} bytes", bytes);
    return p;
  }
  const std::size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  void* m = mmap(nullptr, rounded + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  GCNLAB_CHECK(m != MAP_FAILED, "out of host memory allocating {} bytes", bytes);
  // keep the 2 MiB-aligned part, hand back the rest
  char* base = static_cast<char*>(m);
  char* p = base + (kHugePage - reinterpret_cast<std::uintptr_t>(base) % kHugePage) % kHugePage;
  if (p > base) munmap(base, static_cast<std::size_t>(p - base));
  if (const std::size_t tail = kHugePage - static_cast<std::size_t>(p - base); tail > 0) munmap(p + rounded, tail);
  madvise(p, rounded, MADV_HUGEPAGE);  // advisory; failure is harmless
  return p;
}

void CpuBackend::do_deallocate(void* p, std::size_t bytes) {
  if (bytes < kHugePage) return std::free(p);
  munmap(p, (bytes + kHugePage - 1) / kHugePage * kHugePage);
}

void CpuBackend::copy_to_device(void* dst, const void* src, std::size_t bytes) {
  std::memcpy(dst, src, bytes);
}
void CpuBackend::copy_to_host(void* dst, const void* src, std::size_t bytes) {
  std::memcpy(dst, src, bytes);
}
void CpuBackend::copy_on_device(void* dst, const void* src, std::size_t bytes) {
  std::memcpy(dst, src, bytes);
}

double CpuBackend::spmm_scratch_bytes(std::int64_t rows, std::span<const std::int64_t> widths) const {
  std::int64_t floats = 0;
  for (const std::int64_t f : widths) floats = std::max(floats, cpu::slab_floats(rows, f));
  return static_cast<double>(floats) * sizeof(float);
}

// The slab for one product, where no other holds it.
namespace {
struct SlabUse {
  std::atomic_flag& busy;
  cpu::Slab slab;
  SlabUse(std::atomic_flag& b, cpu::Slab s) : busy(b), slab(s.data && !b.test_and_set() ? s : cpu::Slab{}) {}
  ~SlabUse() {
    if (slab.data) busy.clear();
  }
};
}  // namespace

void CpuBackend::spmm(const Csr& a, ConstView x, View y, float beta, const Progress& progress) {
  const SlabUse use(slab_busy_, slab_);
  cpu::spmm(a, x, y, beta, progress, {}, use.slab);
}

void CpuBackend::spmm_plus(const Csr& a, ConstView x, const RowTerm& t, View y) {
  GCNLAB_ASSERT(t.r.rows == y.rows && t.r.cols == y.cols);
  const SlabUse use(slab_busy_, slab_);
  cpu::spmm(a, x, y, 0.f, {}, {t.r.data, t.r.ld, t.plus ? t.scale + t.plus[0] : t.scale},  // axpy_plus's a + s[0]
            use.slab);
}

void CpuBackend::gemm(Op op_a, Op op_b, float alpha, ConstView a, ConstView b, float beta, View c) {
  const std::int64_t m = op_a == Op::N ? a.rows : a.cols;
  const std::int64_t k = op_a == Op::N ? a.cols : a.rows;
  const std::int64_t kb = op_b == Op::N ? b.rows : b.cols;
  const std::int64_t n = op_b == Op::N ? b.cols : b.rows;
  GCNLAB_ASSERT(k == kb && c.rows == m && c.cols == n);
  if (m == 0 || n == 0) return;
  if (k == 0) {  // BLAS rejects k = 0 with some ld values; the product is empty
    if (beta == 0.f) fill(c, 0.f);
    else for_each_2d(m, n, [&](std::int64_t i, std::int64_t j) { c.data[i * c.ld + j] *= beta; });
    return;
  }
  auto sgemm = [&](std::int64_t rows, const float* a_rows, float* c_rows) {
    cpu::sgemm(gemm_, op_a == Op::T, op_b == Op::T, rows, n, k, alpha, a_rows, std::max<std::int64_t>(a.ld, 1), b.data,
               std::max<std::int64_t>(b.ld, 1), beta, c_rows, std::max<std::int64_t>(c.ld, 1));
  };
  // Tall products (T W, U Wᵀ: m = rows of a block, n and k = widths): each
  // thread multiplies its own rows with a single-threaded sgemm. OpenBLAS's own
  // threading reaches 1.4-1.6x on 2 threads for these shapes here, the split
  // 1.9-2.0x (`gcnlab bench gemm`).
  if (op_a == Op::N && threads_ > 1 && m >= 1024 * threads_) {
#pragma omp parallel num_threads(threads_)
    {
      const int t = omp_get_thread_num(), p = omp_get_num_threads();
      const std::int64_t r0 = m * t / p, r1 = m * (t + 1) / p;
      sgemm(r1 - r0, a.data + r0 * a.ld, c.data + r0 * c.ld);
    }
    return;
  }
  // Weight gradients (Xᵀ U: m, n = widths, k = rows of a block): each thread
  // multiplies its own slice of the k rows into a private m x n partial, and
  // the partials are added in thread order, so the bits depend on the thread
  // count only (a contract of docs/design.md), not on the library's own
  // partition. OpenBLAS's own threading reaches 1.2x on 2 threads for this shape here.
  if (op_a == Op::T && op_b == Op::N && threads_ > 1 && k >= 4096 * threads_ && m * n <= (1 << 20)) {
    std::vector<float> partial(static_cast<std::size_t>(threads_ * m * n));
#pragma omp parallel num_threads(threads_)
    {
      const int t = omp_get_thread_num(), p = omp_get_num_threads();
      const std::int64_t k0 = k * t / p, k1 = k * (t + 1) / p;
      cpu::sgemm(gemm_, true, false, m, n, k1 - k0, alpha, a.data + k0 * a.ld, a.ld, b.data + k0 * b.ld, b.ld, 0.f,
                 partial.data() + t * m * n, n);
    }
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        float sum = 0.f;
        for (int t = 0; t < threads_; ++t) sum += partial[static_cast<std::size_t>((t * m + i) * n + j)];
        float& cij = c.data[i * c.ld + j];
        cij = beta == 0.f ? sum : sum + beta * cij;
      }
    return;
  }
  sgemm(m, a.data, c.data);
}

void CpuBackend::fill(View y, float value) { for_each_2d(y.rows, y.cols, ew::Fill{y.data, y.ld, value}); }

void CpuBackend::copy(ConstView x, View y) {
  GCNLAB_ASSERT(x.rows == y.rows && x.cols == y.cols);
  for_each_2d(y.rows, y.cols, ew::Copy{x.data, x.ld, y.data, y.ld});
}

void CpuBackend::transpose(ConstView x, View y) {
  GCNLAB_ASSERT(x.rows == y.cols && x.cols == y.rows);
  for_each_2d(y.rows, y.cols, ew::Transpose{x.data, x.ld, y.data, y.ld});
}

void CpuBackend::axpy(float a, ConstView x, View y) {
  GCNLAB_ASSERT(x.rows == y.rows && x.cols == y.cols);
  for_each_2d(y.rows, y.cols, ew::Axpy{a, x.data, x.ld, y.data, y.ld});
}

void CpuBackend::axpy_plus(float a, const float* s, ConstView x, View y) {
  GCNLAB_ASSERT(x.rows == y.rows && x.cols == y.cols);
  for_each_2d(y.rows, y.cols, ew::AxpyPlus{a, s, x.data, x.ld, y.data, y.ld});
}

namespace {

// Column sums in double by blocks of kColumnBlock rows (row-major reads), the
// blocks added in order (the same bits at every thread count).
constexpr std::int64_t kColumnBlock = 256;

std::int64_t column_blocks(std::int64_t rows) { return (rows + kColumnBlock - 1) / kColumnBlock; }

// out[c] = Σ_b part[b * cols + c], the blocks in order.
void add_blocks(const std::vector<double>& part, std::int64_t blocks, std::int64_t cols, float* out) {
  for (std::int64_t c = 0; c < cols; ++c) {
    double s = 0;
    for (std::int64_t b = 0; b < blocks; ++b) s += part[static_cast<std::size_t>(b * cols + c)];
    out[c] = static_cast<float>(s);
  }
}

// part[b * cols + c] = Σ_i of row i's terms over block b's rows, rows in order:
// add_row(i, p) adds row i's term of column c to p[c] for every c.
template <class AddRow>
std::vector<double> block_row_partials(std::int64_t rows, std::int64_t cols, AddRow add_row) {
  const std::int64_t blocks = column_blocks(rows);
  std::vector<double> part(static_cast<std::size_t>(blocks * cols), 0.0);
#pragma omp parallel for schedule(static)
  for (std::int64_t b = 0; b < blocks; ++b) {
    double* p = &part[static_cast<std::size_t>(b * cols)];
    for (std::int64_t i = b * kColumnBlock; i < std::min(rows, (b + 1) * kColumnBlock); ++i) add_row(i, p);
  }
  return part;
}

// part[b * cols + c] = Σ_i term(i, c) over block b's rows.
template <class Term>
std::vector<double> block_partials(std::int64_t rows, std::int64_t cols, Term term) {
  return block_row_partials(rows, cols, [&](std::int64_t i, double* p) {
    for (std::int64_t c = 0; c < cols; ++c) p[c] += term(i, c);
  });
}

// out[c] = Σ_i term(i, c).
template <class Term>
void column_reduce(std::int64_t rows, std::int64_t cols, Term term, float* out) {
  add_blocks(block_partials(rows, cols, term), column_blocks(rows), cols, out);
}

// g = f (element by element), with out = column_sums(g) in the same pass: each
// block's rows written, then summed while in cache (column_reduce's bits).
template <class F>
void written_column_sums(View g, const F& f, float* out) {
  const std::int64_t blocks = column_blocks(g.rows);
  std::vector<double> part(static_cast<std::size_t>(blocks * g.cols), 0.0);
#pragma omp parallel for schedule(static)
  for (std::int64_t b = 0; b < blocks; ++b) {
    const std::int64_t first = b * kColumnBlock, end = std::min(g.rows, first + kColumnBlock);
    for (std::int64_t i = first; i < end; ++i) {
      if constexpr (requires { f.row(i, g.cols); }) f.row(i, g.cols);  // a dropout mask: its row key drawn once
      else for (std::int64_t c = 0; c < g.cols; ++c) f(i, c);
    }
    double* p = &part[static_cast<std::size_t>(b * g.cols)];
    for (std::int64_t i = first; i < end; ++i)
      for (std::int64_t c = 0; c < g.cols; ++c) p[c] += g.data[i * g.ld + c];
  }
  add_blocks(part, blocks, g.cols, out);
}

}  // namespace

void CpuBackend::column_sums(ConstView x, float* out) {
  column_reduce(x.rows, x.cols, [&](std::int64_t i, std::int64_t c) { return double{x.data[i * x.ld + c]}; }, out);
}

void CpuBackend::inner_product(ConstView x, ConstView y, float* out) {
  GCNLAB_ASSERT(x.rows == y.rows && x.cols == y.cols);
  const ew::InnerProduct f{x.data, x.ld, y.data, y.ld, x.rows, out};
  double total = 0;  // the blocks in order, each block's columns in order
  for (const double p : block_partials(x.rows, x.cols, [&](std::int64_t i, std::int64_t c) { return f.term(i, c); }))
    total += p;
  out[0] = static_cast<float>(total);
}

void CpuBackend::gather_rows(ConstView x, const std::int64_t* rows, View out) {
  GCNLAB_ASSERT(x.cols == out.cols);
  for_each_2d(out.rows, out.cols, ew::GatherRows{x.data, x.ld, rows, out.data, out.ld});
}

void CpuBackend::pack_bf16(ConstView x, bf16* out) { for_each_2d(x.rows, x.cols, ew::PackBf16{x.data, x.ld, out, x.cols}); }

void CpuBackend::unpack_bf16(const bf16* in, View y) {
  for_each_2d(y.rows, y.cols, ew::UnpackBf16{in, y.cols, y.data, y.ld});
}

void CpuBackend::relu(ConstView z, View h) {
  GCNLAB_ASSERT(z.rows == h.rows && z.cols == h.cols);
  for_each_2d(h.rows, h.cols, ew::Relu{z.data, z.ld, h.data, h.ld});
}

void CpuBackend::relu_backward(ConstView dh, ConstView z, View g) {
  GCNLAB_ASSERT(dh.rows == g.rows && z.rows == g.rows && dh.cols == g.cols && z.cols == g.cols);
  for_each_2d(g.rows, g.cols, ew::ReluBackward{dh.data, dh.ld, z.data, z.ld, g.data, g.ld});
}

void CpuBackend::dropout(ConstView x, View y, const std::int64_t* row_ids, std::int64_t col0,
                         const DropoutParams& p) {
  GCNLAB_ASSERT(x.rows == y.rows && x.cols == y.cols);
  for_each_row(y.rows, y.cols,
               ew::Dropout{x.data, x.ld, y.data, y.ld, row_ids, col0, p.seed, p.stream, p.p, p.scale()});
}

void CpuBackend::relu_dropout(ConstView z, View x, const std::int64_t* row_ids, std::int64_t col0,
                              const DropoutParams& p) {
  GCNLAB_ASSERT(z.rows == x.rows && z.cols == x.cols);
  for_each_row(x.rows, x.cols,
               ew::ReluDropout{{z.data, z.ld, x.data, x.ld, row_ids, col0, p.seed, p.stream, p.p, p.scale()}});
}

void CpuBackend::dropout_relu_backward(ConstView dx, ConstView x, float scale, View g) {
  GCNLAB_ASSERT(dx.rows == g.rows && x.rows == g.rows && dx.cols == g.cols && x.cols == g.cols);
  for_each_2d(g.rows, g.cols, ew::DropoutReluBackward{dx.data, dx.ld, x.data, x.ld, g.data, g.ld, scale});
}

void CpuBackend::add_row(const float* b, View y) { for_each_2d(y.rows, y.cols, ew::AddRow{b, y.data, y.ld}); }

void CpuBackend::bias_relu(ConstView z, ConstView r, const float* b, View h) {
  GCNLAB_ASSERT(z.rows == h.rows && z.cols == h.cols && (!r.data || (r.rows == z.rows && r.cols == z.cols)));
  if (r.data) for_each_2d(h.rows, h.cols, ew::BiasRelu<true>{{z.data, z.ld, r.data, r.ld, b}, h.data, h.ld});
  else for_each_2d(h.rows, h.cols, ew::BiasRelu<false>{{z.data, z.ld, nullptr, 0, b}, h.data, h.ld});
}

void CpuBackend::bias_relu_dropout(ConstView z, ConstView r, const float* b, View x, const std::int64_t* row_ids,
                                   std::int64_t col0, const DropoutParams& p) {
  GCNLAB_ASSERT(z.rows == x.rows && z.cols == x.cols && (!r.data || (r.rows == z.rows && r.cols == z.cols)));
  const ew::Dropout d{z.data, z.ld, x.data, x.ld, row_ids, col0, p.seed, p.stream, p.p, p.scale()};
  if (r.data) for_each_row(x.rows, x.cols, ew::BiasReluDropout<true>{d, {z.data, z.ld, r.data, r.ld, b}});
  else for_each_row(x.rows, x.cols, ew::BiasReluDropout<false>{d, {z.data, z.ld, nullptr, 0, b}});
}

void CpuBackend::relu_backward_sums(ConstView dh, ConstView z, View g, float* sums) {
  GCNLAB_ASSERT(dh.rows == g.rows && z.rows == g.rows && dh.cols == g.cols && z.cols == g.cols);
  written_column_sums(g, ew::ReluBackward{dh.data, dh.ld, z.data, z.ld, g.data, g.ld}, sums);
}

void CpuBackend::dropout_relu_backward_sums(ConstView dx, ConstView x, float scale, View g, float* sums) {
  GCNLAB_ASSERT(dx.rows == g.rows && x.rows == g.rows && dx.cols == g.cols && x.cols == g.cols);
  written_column_sums(g, ew::DropoutReluBackward{dx.data, dx.ld, x.data, x.ld, g.data, g.ld, scale}, sums);
}

void CpuBackend::bias_elu(ConstView z, const float* b, View h) {
  GCNLAB_ASSERT(z.rows == h.rows && z.cols == h.cols);
  for_each_2d(h.rows, h.cols, ew::BiasElu{{z.data, z.ld, nullptr, 0, b}, h.data, h.ld});
}

void CpuBackend::bias_elu_dropout(ConstView z, const float* b, View x, const std::int64_t* row_ids, std::int64_t col0,
                                  const DropoutParams& p) {
  GCNLAB_ASSERT(z.rows == x.rows && z.cols == x.cols);
  const ew::Dropout d{nullptr, 0, x.data, x.ld, row_ids, col0, p.seed, p.stream, p.p, p.scale()};
  for_each_row(x.rows, x.cols, ew::BiasEluDropout{d, {z.data, z.ld, nullptr, 0, b}});
}

void CpuBackend::elu_backward_sums(ConstView dh, ConstView z, const float* b, ew::EluOperand of, View g, float* sums) {
  GCNLAB_ASSERT(dh.rows == g.rows && z.rows == g.rows && dh.cols == g.cols && z.cols == g.cols);
  written_column_sums(g, ew::EluBackward{dh.data, dh.ld, {z.data, z.ld, b, of}, g.data, g.ld}, sums);
}

void CpuBackend::dropout_elu_backward_sums(ConstView dx, ConstView z, const float* b, ew::EluOperand of,
                                           const std::int64_t* row_ids, std::int64_t col0, const DropoutParams& p,
                                           View g, float* sums) {
  GCNLAB_ASSERT(dx.rows == g.rows && z.rows == g.rows && dx.cols == g.cols && z.cols == g.cols);
  const ew::Dropout d{dx.data, dx.ld, nullptr, 0, row_ids, col0, p.seed, p.stream, p.p, p.scale()};
  written_column_sums(g, ew::DropoutEluBackward{d, {z.data, z.ld, b, of}, g.data, g.ld}, sums);
}

void CpuBackend::row_sum_squares(ConstView z, float* sumsq) {
  for_each_1d(z.rows, ew::RowSumSquares{z.data, z.ld, z.cols, sumsq});
}

void CpuBackend::norm_relu_dropout_add(ConstView z, const float* sumsq, const float* gamma, ew::NormParams n,
                                       const std::int64_t* row_ids, std::int64_t col0, const DropoutParams& p,
                                       View y) {
  GCNLAB_ASSERT(z.rows == y.rows && z.cols == y.cols);
  for_each_row(y.rows, y.cols,
               ew::NormReluDropoutAdd{{z.data, z.ld, y.data, y.ld, row_ids, col0, p.seed, p.stream, p.p, p.scale()},
                                      sumsq, gamma, n, p.p > 0});
}

void CpuBackend::norm_relu_dropout_backward(ConstView dy, ConstView z, const float* sumsq, const float* gamma,
                                            ew::NormParams n, const std::int64_t* row_ids, std::int64_t col0,
                                            const DropoutParams& p, View g, float* dgamma, float* rowdot) {
  GCNLAB_ASSERT(dy.rows == g.rows && z.rows == g.rows && dy.cols == g.cols && z.cols == g.cols);
  for_each_row(g.rows, g.cols,
               ew::NormReluDropoutBackward{
                   {dy.data, dy.ld, g.data, g.ld, row_ids, col0, p.seed, p.stream, p.p, p.scale()}, z.data, z.ld,
                   gamma, p.p > 0});
  for_each_1d(g.cols, ew::NormScaleGradient{g.data, g.ld, z.data, z.ld, g.rows, sumsq, n, dgamma});
  for_each_1d(g.rows, ew::NormRowDot{g.data, g.ld, z.data, z.ld, g.cols, gamma, rowdot});
}

void CpuBackend::norm_backward(ConstView z, const float* sumsq, const float* gamma, const float* rowdot,
                               ew::NormParams n, View g) {
  GCNLAB_ASSERT(z.rows == g.rows && z.cols == g.cols);
  for_each_2d(g.rows, g.cols, ew::NormBackward{g.data, g.ld, z.data, z.ld, sumsq, gamma, rowdot, n});
}

// --- Graph attention: one call per stored row (edge_ops.hpp), in dynamic chunks
// of 64 rows (a power-law hub row does not hold up one thread's static share);
// rows a compressed block does not store are filled first.
namespace {

// The row loop for a head count the compiler knows (KH > 0: the functors'
// per-edge loops over b.heads become fixed-width vector code), or any (0).
template <int KH, class F>
void stored_rows(std::int64_t rows, const F& f) {
#pragma omp parallel for schedule(dynamic, 64)
  for (std::int64_t s = 0; s < rows; ++s) {
    if (KH > 0 && f.b.heads != KH) __builtin_unreachable();
    f(s);
  }
}

template <class F>
void for_each_stored_row(const Csr& a, const F& f) {
  const std::int64_t rows = a.stored_rows();
  switch (f.b.heads) {
    case 1: return stored_rows<1>(rows, f);
    case 2: return stored_rows<2>(rows, f);
    case 4: return stored_rows<4>(rows, f);
    case 8: return stored_rows<8>(rows, f);
    default: return stored_rows<0>(rows, f);
  }
}

void fill_unstored(const Csr& a, float* v, std::int64_t width, float value) {
  if (!a.compressed) return;
  std::fill(v, v + a.rows * width, value);
}

}  // namespace

void CpuBackend::edge_scores(const Csr& a, int heads, const float* src, const float* dst, float slope, float* e) {
  for_each_stored_row(a, ew::EdgeScores{edge_block(a, heads), src, dst, slope, e});
}

void CpuBackend::edge_row_max(const Csr& a, int heads, const float* e, float* max) {
  fill_unstored(a, max, heads, -INFINITY);
  for_each_stored_row(a, ew::EdgeRowMax{edge_block(a, heads), e, max});
}

void CpuBackend::edge_exp_row_sum(const Csr& a, int heads, const float* max, float* e, float* sum) {
  fill_unstored(a, sum, heads, 0.f);
  for_each_stored_row(a, ew::EdgeExpRowSum{edge_block(a, heads), max, e, sum});
}

void CpuBackend::edge_scale_rows(const Csr& a, int heads, const float* sum, float* e) {
  for_each_stored_row(a, ew::EdgeScaleRows{edge_block(a, heads), sum, e});
}

void CpuBackend::edge_softmax(const Csr& a, int heads, const float* src, const float* dst, float slope, float* e,
                              float* max, float* sum) {
  fill_unstored(a, max, heads, -INFINITY);
  fill_unstored(a, sum, heads, 0.f);
  for_each_stored_row(a, ew::EdgeSoftmax{edge_block(a, heads), src, dst, slope, e, max, sum});
}

void CpuBackend::edge_dropout(const Csr& a, int heads, const float* in, float* out, const std::int64_t* row_ids,
                              const std::int64_t* col_ids, const DropoutParams& p) {
  for_each_stored_row(a, ew::EdgeDropout{edge_block(a, heads), in, out, row_ids, col_ids, p.seed, p.stream, p.p,
                                         p.scale()});
}

void CpuBackend::spmm_edges(const Csr& a, int heads, ew::HeadSplit hs, const float* v, const std::int64_t* perm,
                            ConstView x, View y) {
  GCNLAB_ASSERT(y.rows == a.rows && x.rows == a.cols);
  if (a.compressed) fill(y, 0.f);
  const ew::EdgeBlock b = edge_block(a, heads);
  if (hs.mean == 0) {
    GCNLAB_ASSERT(x.cols == y.cols);
    const SlabUse use(slab_busy_, slab_);
    cpu::spmm_edge_values(a, heads, hs, v, perm, x, y, {}, use.slab);  // ew::SpmmEdges's bits, register-blocked
  } else if (x.cols == y.cols * hs.mean) {  // Z -> the heads' mean
    for_each_stored_row(a, ew::SpmmEdgesMean{{b, v, perm, hs, x.data, x.ld, y.data, y.ld, y.cols}});
  } else {  // G -> every head's share
    GCNLAB_ASSERT(y.cols == x.cols * hs.mean);
    for_each_stored_row(a, ew::SpmmEdgesSpread{{b, v, perm, hs, x.data, x.ld, y.data, y.ld, x.cols}});
  }
}

void CpuBackend::sddmm(const Csr& a, int heads, ew::HeadSplit hs, ConstView g, ConstView z, float* out) {
  GCNLAB_ASSERT(z.cols == g.cols * (hs.mean ? hs.mean : 1) && g.rows == a.rows && z.rows == a.cols);
  const ew::EdgeBlock b = edge_block(a, heads);
  if (hs.mean) for_each_stored_row(a, ew::SddmmMean{{b, hs, g.data, g.ld, z.data, z.ld, g.cols, out}});
  else for_each_stored_row(a, ew::Sddmm{{b, hs, g.data, g.ld, z.data, z.ld, g.cols, out}});
}

void CpuBackend::spmm_sddmm_edges(const Csr& a, const Csr& t, const std::int64_t* perm, int heads, ew::HeadSplit hs,
                                  const float* v, ConstView g, ConstView z, View y, float* dots) {
  GCNLAB_ASSERT(t.rows == a.cols && t.cols == a.rows && t.nnz == a.nnz && y.rows == t.rows && z.rows == t.rows);
  if (hs.mean) {  // averaged heads: the two row loops
    spmm_edges(t, heads, hs, v, perm, g, y);
    sddmm(a, heads, hs, g, z, dots);
    return;
  }
  GCNLAB_ASSERT(y.cols == g.cols && z.cols == g.cols);
  if (t.compressed) fill(y, 0.f);
  cpu::spmm_edge_values(t, heads, hs, v, perm, g, y, {z, dots});
}

void CpuBackend::edge_row_dot(const Csr& a, int heads, const float* x, const float* y, float* out) {
  fill_unstored(a, out, heads, 0.f);
  for_each_stored_row(a, ew::EdgeRowDot{edge_block(a, heads), x, y, out});
}

void CpuBackend::edge_softmax_backward(const Csr& a, int heads, const float* alpha, const float* rowdot,
                                       const float* src, const float* dst, float slope, float* d) {
  for_each_stored_row(a, ew::EdgeSoftmaxBackward{edge_block(a, heads), alpha, rowdot, src, dst, slope, d});
}

namespace {
// EdgeRowSums through perm (a transposed block): edge k's values are the
// forward block's edge perm[k]'s, a random access into the edge tensor that no
// hardware prefetcher predicts, so the values kAhead edges on are fetched at
// each edge, across row ends. Fetching the next row's edges at the start of
// each row left a hub row's thousands unfetched and a one-edge row's one edge
// barely ahead: GAT's `edge_softmax` category (R-MAT 16, 4 x 32, AVX2) ~15 %
// faster so (32 and 64 edges ahead alike, within the noise).
struct PermRowSums {
  static constexpr std::int64_t kAhead = 32;
  ew::EdgeRowSums f;
  std::int64_t last;  // the block's last edge
  ew::EdgeBlock b = f.b;
  void operator()(std::int64_t s) const {
    const int H = b.heads;
    ew::fold_row_heads(b, s, 0.f, f.out + b.row_of(s) * H, [&](float a, std::int64_t k, int h) {
      if (h % ew::kHeadGroup == 0) __builtin_prefetch(f.v + f.perm[std::min(k + kAhead, last)] * H + h);
      return a + f.term(k, h);  // EdgeRowSums's fold: its bits
    });
  }
};
}  // namespace

void CpuBackend::edge_row_sums(const Csr& a, int heads, const float* v, const std::int64_t* perm, float* out) {
  fill_unstored(a, out, heads, 0.f);
  const ew::EdgeRowSums sums{edge_block(a, heads), v, perm, out};
  if (perm) for_each_stored_row(a, PermRowSums{sums, a.nnz - 1});
  else for_each_stored_row(a, sums);
}

void CpuBackend::edge_softmax_grad(const Csr& a, int heads, const float* alpha, const float* src, const float* dst,
                                   float slope, float* d, float* rowdot, float* dd) {
  fill_unstored(a, rowdot, heads, 0.f);
  fill_unstored(a, dd, heads, 0.f);
  for_each_stored_row(a, ew::EdgeSoftmaxGrad{edge_block(a, heads), alpha, src, dst, slope, d, rowdot, dd});
}

void CpuBackend::head_dots(ConstView z, const float* a_src, const float* a_dst, ew::HeadSplit hs, View s, View d) {
  GCNLAB_ASSERT(s.rows == z.rows && d.rows == z.rows && s.cols == d.cols && s.ld == s.cols && d.ld == d.cols);
  const auto heads = static_cast<int>(s.cols);
  for_each_1d(z.rows, ew::HeadDots{z.data, z.ld, z.cols, a_src, a_dst, hs, heads, s.data, d.data});
}

void CpuBackend::head_dots_backward(ConstView ds, ConstView dd, const float* a_src, const float* a_dst,
                                    ew::HeadSplit hs, ConstView z, View dz, float* da_src, float* da_dst) {
  GCNLAB_ASSERT(ds.rows == dz.rows && dd.rows == dz.rows && z.rows == dz.rows && z.cols == dz.cols &&
                ds.cols == dd.cols && ds.ld == ds.cols && dd.ld == dd.cols);
  const auto heads = static_cast<int>(ds.cols);
  const std::int64_t cols = z.cols;
  const ew::HeadDotsAdjoint adjoint{ds.data, dd.data, heads, a_src, a_dst, hs, dz.data, dz.ld};
  // ew::HeadColumnDots's terms for ds (p[c]) and dd (p[cols + c]), row by row a head at a time (its
  // columns: a range, or every H-th for averaged heads), so that a head's value is broadcast over its
  // columns and the loop vectorises; each row's adjoint in the same visit
  std::vector<ew::HeadSplit::Columns> columns;
  for (int h = 0; h < heads; ++h) columns.push_back(hs.columns(h, cols));
  const std::vector<double> part = block_row_partials(z.rows, 2 * cols, [&](std::int64_t i, double* p) {
    adjoint.row(i, cols);
    const float* zi = z.data + i * z.ld;
    for (int h = 0; h < heads; ++h) {
      const double es = ds.data[i * heads + h], ed = dd.data[i * heads + h];
      const ew::HeadSplit::Columns k = columns[static_cast<std::size_t>(h)];
      for (std::int64_t t = 0, c = k.first; t < k.count; ++t, c += k.step) {
        const double zc = zi[c];
        p[c] += es * zc;
        p[cols + c] += ed * zc;
      }
    }
  });
  std::vector<float> both(static_cast<std::size_t>(2 * cols));
  add_blocks(part, column_blocks(z.rows), 2 * cols, both.data());
  std::copy(both.begin(), both.begin() + cols, da_src);
  std::copy(both.begin() + cols, both.end(), da_dst);
}

void CpuBackend::adam(View w, ConstView g, View m, View v, const ew::AdamParams& p) {
  GCNLAB_ASSERT(w.ld == w.cols && g.ld == g.cols && m.ld == m.cols && v.ld == v.cols);
  for_each_1d(w.size(), ew::Adam{w.data, g.data, m.data, v.data, p});
}

void CpuBackend::sgd(View w, ConstView g, float lr) {
  GCNLAB_ASSERT(w.ld == w.cols && g.ld == g.cols);
  for_each_1d(w.size(), ew::Sgd{w.data, g.data, lr});
}

void CpuBackend::row_max(ConstView z, float* max) {
  for_each_1d(z.rows, ew::RowMax{z.data, z.ld, z.cols, max});
}

void CpuBackend::row_sum_exp(ConstView z, const float* max, float* sum) {
  for_each_1d(z.rows, ew::RowSumExp{z.data, z.ld, z.cols, max, sum});
}

// The sums are combined in one fixed order whatever the thread count and
// schedule: rows in order within blocks of kXentBlock rows, then the blocks in
// order. (OpenMP's reduction(+) combines the threads' partials in an
// unspecified order: at 3 or more threads two identical runs reported losses
// that differed in the last bit; issue 35.)
XentSums CpuBackend::softmax_xent(ConstView z, std::int64_t col0, const float* max,
                                  const float* sum, const std::int32_t* label,
                                  const std::uint8_t* split, float scale, View g) {
  const ew::SoftmaxXent f{z.data, z.ld, z.cols, col0, max, sum, label, split, scale, g.data, g.ld};
  constexpr std::int64_t kXentBlock = 512;
  const std::int64_t blocks = (z.rows + kXentBlock - 1) / kXentBlock;
  std::vector<XentSums> part(static_cast<std::size_t>(blocks));
#pragma omp parallel for schedule(static)
  for (std::int64_t b = 0; b < blocks; ++b) {
    XentSums& p = part[b];
    const std::int64_t end = std::min(z.rows, (b + 1) * kXentBlock);
    constexpr int kGroup = 8;  // rows whose chains overlap (ew::SoftmaxXent::rows)
    ew::XentRow r[kGroup];
    for (std::int64_t i0 = b * kXentBlock; i0 < end; i0 += kGroup) {
      const auto n = static_cast<int>(std::min<std::int64_t>(kGroup, end - i0));
      if (n == kGroup) f.rows<kGroup>(i0, r);
      else
        for (int k = 0; k < n; ++k) r[k] = f(i0 + k);
      for (int k = 0; k < n; ++k) {  // in row order
        p.loss += r[k].loss;
        p.correct[split[i0 + k] & 3] += r[k].correct;
        p.counted[split[i0 + k] & 3] += r[k].counted;
      }
    }
  }
  XentSums s;
  for (const XentSums& p : part) {
    s.loss += p.loss;
    for (int k = ew::kTrain; k <= ew::kTest; ++k) s.correct[k] += p.correct[k], s.counted[k] += p.counted[k];
  }
  return s;
}

}  // namespace gcnlab
