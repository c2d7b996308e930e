#include "backends/cpu/blas_kernels.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>

extern "C" char* openblas_get_corename(void);

namespace gcnlab::cpu {

namespace {

constexpr const char* kFallbackVariable = "GCNLAB_OPENBLAS_FALLBACK";

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

const char* set(const char* variable) {
  const char* v = std::getenv(variable);
  return v && *v ? v : nullptr;
}

}  // namespace

CpuVectorUnits host_vector_units() {
  __builtin_cpu_init();  // libgcc's: the OS's saved vector state (XCR0) included
  CpuVectorUnits u;
  u.avx2_fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  u.avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
             __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
             __builtin_cpu_supports("avx512vl");
  return u;
}

std::optional<std::string> better_blas_kernels(std::string_view chosen, CpuVectorUnits units) {
  // OpenBLAS 0.3.21's kernel sets with AVX2 or wider, by openblas_get_corename()
  static constexpr std::array<std::string_view, 6> kWide = {"haswell",    "zen",            "skylakex",
                                                            "cooperlake", "sapphirerapids", "excavator"};
  if (!units.avx2_fma || std::find(kWide.begin(), kWide.end(), lower(chosen)) != kWide.end()) return std::nullopt;
  return units.avx512 ? "SkylakeX" : "Haswell";
}

void use_the_cpus_blas_kernels(char** argv) {
  if (set("OPENBLAS_CORETYPE")) return;  // the user's choice, or this is the re-executed process
  const std::string chosen = openblas_get_corename();
  const std::optional<std::string> better = better_blas_kernels(chosen, host_vector_units());
  if (!better) return;
  setenv("OPENBLAS_CORETYPE", better->c_str(), 1);
  setenv(kFallbackVariable, chosen.c_str(), 1);
  execv("/proc/self/exe", argv);
  unsetenv("OPENBLAS_CORETYPE");  // no exec: OpenBLAS's kernels, and nothing claims otherwise
  unsetenv(kFallbackVariable);
}

std::string blas_kernels() {
  const std::string core = openblas_get_corename();
  if (const char* fallback = set(kFallbackVariable))
    return core + " (gcnlab's choice: OpenBLAS took " + fallback + " for this CPU)";
  if (set("OPENBLAS_CORETYPE")) return core + " (OPENBLAS_CORETYPE)";
  return core + " (OpenBLAS's choice)";
}

}  // namespace gcnlab::cpu
