#pragma once
// A local sparse block in backend memory: CSR with 64-bit row offsets and
// 32-bit column ids (local to the block, checked on upload).

#include <cstdint>
#include <memory>

#include "common/matrix/buffer.hpp"
#include "common/matrix/host_csr.hpp"

namespace gcnlab {

struct Csr {
  std::int64_t rows = 0, cols = 0, nnz = 0;
  Buffer<std::int64_t> rowptr;
  Buffer<std::int32_t> col;
  Buffer<float> val;
  // Backend-private state kept per matrix and released with it (the CUDA
  // backend's cuSPARSE descriptor, 32-bit row offsets and SpMM work buffers).
  mutable std::shared_ptr<void> plan;
};

Csr upload(Allocator& a, const HostCsr& host);

}  // namespace gcnlab
