#include "backends/cpu/sgemm.hpp"

#include <cblas.h>
#include <oneapi/dnnl/dnnl.h>

#include <cstdlib>
#include <string_view>

#include <fmt/format.h>

#include "backends/cpu/blas_kernels.hpp"
#include "common/core/error.hpp"

namespace gcnlab::cpu {

namespace {

constexpr const char* kVariable = "GCNLAB_CPU_GEMM";

std::string_view isa_name(dnnl_cpu_isa_t isa) {
  switch (isa) {
    case dnnl_cpu_isa_sse41: return "sse41";
    case dnnl_cpu_isa_avx: return "avx";
    case dnnl_cpu_isa_avx2: return "avx2";
    case dnnl_cpu_isa_avx2_vnni: return "avx2_vnni";
    case dnnl_cpu_isa_avx512_mic: return "avx512_mic";
    case dnnl_cpu_isa_avx512_mic_4ops: return "avx512_mic_4ops";
    case dnnl_cpu_isa_avx512_core: return "avx512_core";
    case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
    case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
    case dnnl_cpu_isa_avx512_core_amx: return "avx512_core_amx";
    default: return "unknown ISA";
  }
}

}  // namespace

GemmLibrary gemm_library(const char* value) {
  const std::string_view v = value ? value : "";
  if (v.empty() || v == "onednn") return GemmLibrary::onednn;
  if (v == "openblas") return GemmLibrary::openblas;
  throw Error(fmt::format("{}={}: not a GEMM library (onednn, the default, or openblas)", kVariable, v));
}

GemmLibrary gemm_library_from_environment() { return gemm_library(std::getenv(kVariable)); }

void sgemm(GemmLibrary lib, bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
           const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc) {
  if (lib == GemmLibrary::onednn) {
    const dnnl_status_t status =
        dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    GCNLAB_CHECK(status == dnnl_success, "oneDNN's sgemm failed (status {}) on {} x {} x {}", static_cast<int>(status),
                 m, n, k);
    return;
  }
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans,
              static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), alpha, a, static_cast<int>(lda), b,
              static_cast<int>(ldb), beta, c, static_cast<int>(ldc));
}

std::string gemm_description(GemmLibrary lib) {
  if (lib == GemmLibrary::openblas) return fmt::format("OpenBLAS ({})", blas_kernels());
  const dnnl_version_t* v = dnnl_version();
  return fmt::format("oneDNN {}.{}.{} ({})", v->major, v->minor, v->patch, isa_name(dnnl_get_effective_cpu_isa()));
}

}  // namespace gcnlab::cpu
