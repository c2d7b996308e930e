#pragma once
// The CPU backend's single-precision GEMM: oneDNN's (the default) or OpenBLAS's.
//
// An epoch's GEMMs are tall and skinny: X W and G Wᵀ with n rows and 32-256
// columns, and the weight gradients Xᵀ G, a reduction over n. On those shapes
// oneDNN's JIT sgemm (Debian's libdnnl 2.6.3, AVX-512 kernels on AVX-512
// CPUs) ran at 88-101 GFLOP/s a core on a Zen 4 EPYC, OpenBLAS 0.3.21's best
// kernels there (Cooperlake) at 71-85, of a measured 115 peak (one thread,
// 65 536 x 128 x 128, the three shapes; docs/performance.md has the epochs).
// OpenBLAS stays: GCNLAB_CPU_GEMM=openblas runs it, and the golden test pins
// it with its Haswell kernels, so that file's bits stay those of every
// earlier build.
//
// Both are one library call per thread's block (CpuBackend::gemm splits the
// rows or the reduction itself and adds the partials in thread order); neither
// library's result depends on a buffer's alignment or on timing, only on its
// kernels (the library, and oneDNN's instruction set or OpenBLAS's core type),
// which the results record (provenance.versions.gemm, docs/design.md).

#include <cstdint>
#include <string>

namespace gcnlab::cpu {

enum class GemmLibrary { onednn, openblas };

// The library GCNLAB_CPU_GEMM names: unset or empty, oneDNN; "onednn" or
// "openblas"; any other value is a gcnlab::Error that names the two.
GemmLibrary gemm_library(const char* value);

// GCNLAB_CPU_GEMM's, read from the environment.
GemmLibrary gemm_library_from_environment();

// C = alpha op(A) op(B) + beta C, row-major, op(A) m x k, op(B) k x n. k > 0.
// Called inside an OpenMP parallel region it runs on the calling thread;
// outside one, on the backend's threads (each library's own partition).
void sgemm(GemmLibrary lib, bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
           const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc);

// What runs, for provenance.versions.gemm and --version: "oneDNN 2.6.3
// (avx512_core_bf16)", "OpenBLAS 0.3.21 (Cooperlake, OpenBLAS's choice)".
std::string gemm_description(GemmLibrary lib);

}  // namespace gcnlab::cpu
