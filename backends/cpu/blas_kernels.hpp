#pragma once
// OpenBLAS's kernels for the CPU that runs gcnlab, where GCNLAB_CPU_GEMM=openblas
// makes OpenBLAS the CPU backend's GEMM (sgemm.hpp; oneDNN's is the default).
//
// OpenBLAS built with DYNAMIC_ARCH (Debian's) picks its kernels once, when the
// library loads, from the CPU's vendor, family and model number. A model it
// does not know falls back to its oldest x86-64 kernels: 0.3.21 runs Prescott
// (SSE3) kernels on Intel's Emerald Rapids (family 6, model 0xCF), an AVX-512
// CPU, and every GEMM of an epoch there takes 2-3x its time with SkylakeX
// kernels (GIN on R-MAT 16, 2 threads: epoch 1313 -> 514 ms; docs/performance.md).
// OpenBLAS reads OPENBLAS_CORETYPE only at load, so the only way to choose for
// it is to start again: where the user left OPENBLAS_CORETYPE unset and
// OpenBLAS's choice lacks the vector units the CPU has, gcnlab re-executes
// itself with OPENBLAS_CORETYPE set to the kernels those units allow, before
// MPI and before any thread (apps/gcnlab/main.cpp). A CPU that OpenBLAS knows
// keeps OpenBLAS's choice (a Zen 4 EPYC keeps Cooperlake), so do runs that
// set OPENBLAS_CORETYPE (the golden test pins Haswell).

#include <optional>
#include <string>
#include <string_view>

namespace gcnlab::cpu {

// The vector units that decide which OpenBLAS kernels can run.
struct CpuVectorUnits {
  bool avx2_fma = false;  // AVX2 and FMA (OpenBLAS's Haswell kernels)
  bool avx512 = false;    // AVX-512 F, CD, BW, DQ, VL (its SkylakeX kernels)
};

// This CPU's, as the OS lets programs use them.
CpuVectorUnits host_vector_units();

// The kernels to ask OpenBLAS for instead of `chosen` (openblas_get_corename()),
// or none where `chosen` already uses the widest units OpenBLAS has kernels for
// on a known CPU (Haswell, Zen, SkylakeX, Cooperlake, SapphireRapids, Excavator)
// or the CPU has no AVX2: "SkylakeX" with AVX-512, else "Haswell".
std::optional<std::string> better_blas_kernels(std::string_view chosen, CpuVectorUnits units);

// Called first in main: where OPENBLAS_CORETYPE is unset and better_blas_kernels
// names other kernels, sets it, notes OpenBLAS's own choice in
// GCNLAB_OPENBLAS_FALLBACK and re-executes /proc/self/exe with `argv`. Returns
// (doing nothing) otherwise, or where the exec fails.
void use_the_cpus_blas_kernels(char** argv);

// The kernels this process runs and who chose them, e.g. "SkylakeX (gcnlab's
// choice: OpenBLAS took Prescott for this CPU)", "Haswell (OPENBLAS_CORETYPE)",
// "Zen (OpenBLAS's choice)": the results' provenance.versions.blas_kernels.
std::string blas_kernels();

}  // namespace gcnlab::cpu
