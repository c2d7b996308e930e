#pragma once
// Sparsity-aware SpMM bookkeeping (SA, Mukhopadhyay et al. ICPP'24, Sec. 4):
// for a block row A_i and the column blocks of the other ranks, which rows of
// the dense operand each block actually needs — NnzCols(i, j), the nonzero
// columns of A_ij — and A_ij with its columns remapped onto those rows in
// the order they arrive, so the local SpMM reads the compact receive buffer
// directly (the reference code scatters them into a zero block of full size).

#include <cstdint>
#include <vector>

#include "common/comm/communicator.hpp"
#include "common/matrix/host_csr.hpp"

namespace gcnlab {

struct NeededRows {
  // per column block j: the needed rows of block j, local to it, sorted (NnzCols(i, j))
  std::vector<std::vector<std::int64_t>> rows;
  // per column block j: A_ij with column c -> position of c in rows[j]
  std::vector<HostCsr> compact;
};

// `a_rows`: block row A_i with global column positions; `offsets`: the column blocks.
NeededRows needed_rows(const HostCsr& a_rows, const std::vector<std::int64_t>& offsets);

// Sends group rank r the row ids wanted[r] (what this rank needs from r) and
// returns what every rank wants from this one: counts per rank and the row
// ids grouped by rank. Two all-to-alls (counts, then ids), category alltoall;
// done once at setup.
struct RowRequests {
  std::vector<std::int64_t> counts;
  std::vector<std::int64_t> rows;
};
RowRequests exchange_requests(Communicator& group, const std::vector<std::vector<std::int64_t>>& wanted);

// Concatenates compact blocks side by side (block j's columns shifted by the
// rows of the blocks before it), skipping `skip` (the rank's own block).
HostCsr concat_compact(const NeededRows& n, int skip);

}  // namespace gcnlab
