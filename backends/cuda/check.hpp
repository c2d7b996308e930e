#pragma once
// Throwing checks around every CUDA, cuBLAS, cuSPARSE and NCCL call (Ginkgo's
// exception_helpers): the message names the call and the library's own
// error string. Included by CUDA-backend sources only.

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusparse.h>
#include <nccl.h>

#include "common/core/error.hpp"

namespace gcnlab::cuda {

inline void check(cudaError_t rc, const char* call) {
  if (rc != cudaSuccess) fail("CUDA error: {} ({})", cudaGetErrorString(rc), call);
}
inline void check(cusparseStatus_t rc, const char* call) {
  if (rc != CUSPARSE_STATUS_SUCCESS) fail("cuSPARSE error: {} ({})", cusparseGetErrorString(rc), call);
}
inline void check(cublasStatus_t rc, const char* call) {
  if (rc != CUBLAS_STATUS_SUCCESS) fail("cuBLAS error: {} ({})", cublasGetStatusString(rc), call);
}
inline void check(ncclResult_t rc, const char* call) {
  if (rc != ncclSuccess) fail("NCCL error: {} ({})", ncclGetErrorString(rc), call);
}

}  // namespace gcnlab::cuda

#define GCNLAB_CUDA_CALL(call) ::gcnlab::cuda::check((call), #call)
