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

// Per column block j: the needed rows of block j, local to it, sorted (NnzCols(i, j)).
struct NeededRows {
  std::vector<std::vector<std::int64_t>> rows;
};

// `a_rows`: block row A_i with global column positions; `offsets`: the column
// blocks. One pass and one bit per column (setup only).
NeededRows needed_rows(const HostCsr& a_rows, const std::vector<std::int64_t>& offsets);

// A_i restricted to the column blocks `blocks` (ascending) side by side, each
// block's column c remapped to the position of c in need.rows[block] plus the
// needed rows of the blocks before it: the matrix that multiplies the
// concatenated receive buffer. Built in one pass, no per-block copies.
HostCsr compact_columns(const HostCsr& a_rows, const std::vector<std::int64_t>& offsets, const NeededRows& need,
                        const std::vector<int>& blocks);

// Sends group rank r the row ids wanted[r] (what this rank needs from r) and
// returns what every rank wants from this one: counts per rank and the row
// ids grouped by rank. Two all-to-alls (counts, then ids), category alltoall;
// done once at setup.
struct RowRequests {
  std::vector<std::int64_t> counts;
  std::vector<std::int64_t> rows;
};
RowRequests exchange_requests(Communicator& group, const std::vector<std::vector<std::int64_t>>& wanted);

// The personalised exchange of the needed rows over `group` (counts and
// displacements in rows, per rank): each rank sends the rows the others need
// of its block and receives need.rows[r] from every other rank r, grouped by
// rank in rank order. need.rows[group.rank()] is not exchanged. Built with
// exchange_requests (setup).
struct RowExchange {
  std::vector<std::int64_t> send_counts, send_displs, recv_counts, recv_displs;
  std::vector<std::int64_t> send_rows;  // local rows to pack, grouped by destination
  std::int64_t sent() const { return send_displs.back() + send_counts.back(); }
  std::int64_t received() const { return recv_displs.back() + recv_counts.back(); }
};
RowExchange plan_row_exchange(Communicator& group, const NeededRows& need);

}  // namespace gcnlab
