#pragma once
// Host-side CSR used while reading, generating, normalising and distributing
// graphs. Global column ids are 64-bit; the backend's Csr (csr.hpp) stores
// 32-bit local column ids, checked on upload.

#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace gcnlab {

struct HostCsr {
  std::int64_t rows = 0, cols = 0;
  std::vector<std::int64_t> rowptr{0};
  std::vector<std::int64_t> col;
  std::vector<float> val;

  std::int64_t nnz() const { return static_cast<std::int64_t>(col.size()); }
  bool operator==(const HostCsr&) const = default;
};

struct Coo {
  std::int64_t row, col;
  float val;
};

// Builds a CSR from triplets; duplicate entries are summed when
// `sum_duplicates`, else merged keeping one value; rows' columns sorted.
HostCsr csr_from_coo(std::int64_t rows, std::int64_t cols, std::vector<Coo> entries,
                     bool sum_duplicates);

// Adjacency of n vertices from directed edges (u, v), values 1: self-loops
// dropped, duplicates merged, each edge also v -> u with `symmetrize`.
// Counting sort straight into the CSR. `pass(emit)` calls emit(u, v) once per
// edge, in any order, from any number of OpenMP threads; it is called twice
// (count the rows, then fill them), so a source that can be read again — a
// file, a generator — never holds its edge list: the peak is the result plus
// its duplicates. Column and value arrays keep room for n more entries (the
// diagonal that normalisation inserts in place, graph.hpp).
using EdgeEmit = std::function<void(std::int64_t u, std::int64_t v)>;
using EdgePass = std::function<void(const EdgeEmit& emit)>;
HostCsr csr_from_edge_passes(std::int64_t n, const EdgePass& pass, bool symmetrize);
// csr_from_edge_passes's last step, for rows filled in any order: each row
// sorted and its duplicates dropped, values 1, and capacity for `room` more
// entries (the diagonal) kept.
void compact_rows(HostCsr& m, std::int64_t room);
// The same from edges in memory: a pair list, or two id lists, edge k =
// src[k] -> dst[k] (numpy's edge_index rows, scipy's coo row / col).
HostCsr csr_from_edges(std::int64_t n, const std::vector<std::array<std::int64_t, 2>>& edges, bool symmetrize);
HostCsr csr_from_edges(std::int64_t n, std::span<const std::int64_t> src, std::span<const std::int64_t> dst,
                       bool symmetrize);

// A copy whose column and value arrays have room for `extra` more entries.
HostCsr copy_with_room(const HostCsr& a, std::int64_t extra);

HostCsr transpose(const HostCsr& a);

// Block [r0, r1) x [c0, c1) with column ids shifted by -c0.
HostCsr extract_block(const HostCsr& a, std::int64_t r0, std::int64_t r1, std::int64_t c0,
                      std::int64_t c1);

// Rows [r0, r1), all columns kept.
HostCsr extract_rows(const HostCsr& a, std::int64_t r0, std::int64_t r1);

// The submatrix a[rows, C] for an arbitrary row list and column set: local
// row i is a's row rows[i]; a column c is kept as local column col_map[c]
// when col_map[c] >= 0 (col_map has a.cols entries). Columns sorted per row.
HostCsr extract_submatrix(const HostCsr& a, const std::vector<std::int64_t>& rows,
                          const std::vector<std::int64_t>& col_map, std::int64_t cols);

bool structurally_symmetric(const HostCsr& a);

// The union of the structures of rows [first, first + a.rows) of two
// matrices held as `a` and `b` (the same rows of A and Aᵀ: the symmetrised
// structure), columns sorted, each once, the diagonal dropped; values 1.
HostCsr union_rows(const HostCsr& a, const HostCsr& b, std::int64_t first);

}  // namespace gcnlab
