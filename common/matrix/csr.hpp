#pragma once
// A local sparse block in backend memory: CSR with 64-bit row offsets and
// 32-bit column ids (local to the block, checked on upload).
//
// Hypersparse blocks (most rows empty: the column blocks of 1D/1.5D and the
// remote blocks of the sparsity-aware strategies at large P) are stored with
// compressed rows (DCSR, Buluç & Gilbert): only the non-empty rows, each with
// its row index, so a block costs O(nnz) and not O(rows) memory and time.

#include <cstdint>
#include <memory>

#include "common/matrix/buffer.hpp"
#include "common/matrix/host_csr.hpp"

namespace gcnlab {

struct Csr {
  std::int64_t rows = 0, cols = 0, nnz = 0;
  bool compressed = false;       // only the non-empty rows are stored, with their ids
  Buffer<std::int64_t> rowptr;   // stored_rows() + 1 offsets
  Buffer<std::int32_t> row_ids;  // compressed: the row of each stored row, ascending
  Buffer<std::int32_t> col;
  Buffer<float> val;
  // Backend-private state kept per matrix and released with it (the CUDA
  // backend's cuSPARSE descriptor, 32-bit row offsets and SpMM work buffers).
  mutable std::shared_ptr<void> plan;

  std::int64_t stored_rows() const { return compressed ? static_cast<std::int64_t>(row_ids.size()) : rows; }
};

enum class RowStorage {
  full,            // every row has an offset (the layout some strategies broadcast)
  sparse_if_smaller  // compressed rows when that takes less memory (12 B per stored row vs 8 B per row)
};

Csr upload(Allocator& a, const HostCsr& host, RowStorage storage = RowStorage::full);

// Storage of a block: 8 B per nonzero (32-bit column, value) plus 8 B per row
// offset, or 12 B per stored row when compressed.
double csr_bytes(const Csr& a);

}  // namespace gcnlab
