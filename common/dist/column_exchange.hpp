#pragma once
// How a block-row strategy moves the dense rows its block row's columns read
// (graph attention: common/dist/gathered_attention.hpp). Rank r holds the rows
// [offsets[r], offsets[r+1]) of every activation; its block row of Âᵀ reads
// the rows of the graph positions `positions()` (ascending; its own rows among
// them). Two operations, one the transpose of the other:
//
//   gather       all = in[positions()]: the rows every column of the block row reads
//   scatter_sum  local = Σ over ranks of their partial[rows of this rank]: each
//                rank's per-column partial sums (βᵀG, ds) summed at the rows' owner
//
// Where a rank holds part of each row (splits_rows), the per-row partial values
// (the softmax's max and sum, an SpMM's partial rows) are combined with
// reduce_rows over the ranks that hold the rest.
//
// AllGatherColumns (1d): every position; gather = ALL-GATHER, scatter_sum =
// REDUCE-SCATTER (CAGNET's 1D volume). NeededColumns (sa-1d): only the columns
// with nonzeros in the block row (SA's NnzCols, Mukhopadhyay et al. ICPP'24
// Alg. 1); gather = the ALLTOALLV of sa-1d's SpMM, scatter_sum = the reverse
// ALLTOALLV and a fixed-order sum at the owner. The 1d-ring strategy passes
// blocks around a ring, and 1.5d broadcasts its column's chunk (their folders).

#include <cstdint>
#include <memory>
#include <vector>

#include "common/comm/byte_model.hpp"
#include "common/comm/communicator.hpp"
#include "common/dist/needed_rows.hpp"
#include "common/model/strategy.hpp"

namespace gcnlab {

class ColumnExchange {
 public:
  virtual ~ColumnExchange() = default;
  // Graph positions of the gathered rows, ascending.
  virtual const std::vector<std::int64_t>& positions() const = 0;
  std::int64_t columns() const { return static_cast<std::int64_t>(positions().size()); }
  // all (columns() x width, ld = width) = the rows positions() of the row-split `local` (ld = width).
  virtual void gather(ConstView local, View all) = 0;
  // local = Σ over ranks of their `partial` (columns() x width) at this rank's rows; partial is clobbered.
  virtual void scatter_sum(View partial, View local) = 0;
  virtual void gather_bytes(std::int64_t width, ByteModel& m) const = 0;
  virtual void scatter_sum_bytes(std::int64_t width, ByteModel& m) const = 0;
  // Where other ranks hold the other columns of this rank's rows (1.5d's
  // process row): values (rows x width, ld = width) = their op over those
  // ranks' per-row partial values. A block-row layout holds whole rows: none.
  virtual bool splits_rows() const { return false; }
  virtual void reduce_rows(View values, ReduceOp op);
  virtual void reduce_rows_bytes(std::int64_t width, ByteModel& m) const;
  // Backend bytes of its buffers and index lists.
  virtual double bytes() const { return 0; }
};

// Every position: ALL-GATHER and REDUCE-SCATTER over `group`.
class AllGatherColumns final : public ColumnExchange {
 public:
  AllGatherColumns(Communicator& group, std::vector<std::int64_t> offsets);
  const std::vector<std::int64_t>& positions() const override { return positions_; }
  void gather(ConstView local, View all) override;
  void scatter_sum(View partial, View local) override;
  void gather_bytes(std::int64_t width, ByteModel& m) const override;
  void scatter_sum_bytes(std::int64_t width, ByteModel& m) const override;

 private:
  std::vector<std::int64_t> counts(std::int64_t width) const;  // elements of each rank's rows at `width`
  std::int64_t mine() const;

  Communicator* group_;
  std::vector<std::int64_t> offsets_, positions_;
};

// The positions [q0, q1): an exchange that gathers every column of a range.
std::vector<std::int64_t> position_range(std::int64_t q0, std::int64_t q1);
// The positions of block rows [k0, k1) of `offsets` that block row `own`
// reads: all of its own rows (where own is among them), need.rows[k] of the others.
std::vector<std::int64_t> needed_positions(const std::vector<std::int64_t>& offsets, int k0, int k1, int own,
                                           const NeededRows& need);

// local (rows x width) += Σ_k sent[k] at row rows_of_sent[k], in k's order
// (a fixed sum): the matrix (rows x |sent|) with a one at (rows_of_sent[k], k),
// for Backend::spmm with beta 1.
Csr ones_at_rows(Backend& backend, std::int64_t rows, const std::vector<std::int64_t>& rows_of_sent);

// The 1.5D layout's exchanges (1.5d, sa-1.5d; common/dist/replicated_rows.hpp):
// rank P(i, j) holds block row i's part in the columns of its column's chunk
// of stages K_j = block rows [k0, k1), so its rows are split over the c ranks
// of the process row P(i, :): reduce_rows ALL-REDUCES over it. A scatter_sum
// leaves block row i's sums on the column whose chunk holds i (its "owner"),
// which BROADCASTS them along the row (share_along_row).
class ChunkExchange : public ColumnExchange {
 public:
  const std::vector<std::int64_t>& positions() const override { return positions_; }
  bool splits_rows() const override { return row_->size() > 1; }
  void reduce_rows(View values, ReduceOp op) override;
  void reduce_rows_bytes(std::int64_t width, ByteModel& m) const override;

 protected:
  // `positions`: the chunk's columns this rank's block reads (ascending).
  ChunkExchange(Backend& backend, Communicator& row, Communicator& col, std::vector<std::int64_t> offsets, int k0,
                int k1, std::vector<std::int64_t> positions);
  void share_along_row(View local);
  void share_along_row_bytes(std::int64_t width, ByteModel& m) const;
  std::int64_t rows_of(int k) const { return offsets_[k + 1] - offsets_[k]; }
  bool in_chunk(int k) const { return k0_ <= k && k < k1_; }
  int block_row() const { return col_->rank(); }  // i: rank k of P(:, j) holds block row k

  Backend* backend_;
  Communicator* row_;  // P(i, :)
  Communicator* col_;  // P(:, j)
  std::vector<std::int64_t> offsets_, positions_;
  int k0_, k1_, owner_;  // owner_: the column whose chunk holds block row i
};

// The needed columns of the block row only (sparsity-aware). `plan`: the
// exchange sa-1d's SpMM uses (this rank's own rows excluded; widest: the
// widest row sent).
class NeededColumns final : public ColumnExchange {
 public:
  NeededColumns(Backend& backend, Communicator& group, const std::vector<std::int64_t>& offsets,
                const RowExchange& plan, const NeededRows& need, std::int64_t widest);
  const std::vector<std::int64_t>& positions() const override { return positions_; }
  void gather(ConstView local, View all) override;
  void scatter_sum(View partial, View local) override;
  void gather_bytes(std::int64_t width, ByteModel& m) const override;
  void scatter_sum_bytes(std::int64_t width, ByteModel& m) const override;
  double bytes() const override;

 private:
  // Per rank, in elements of `width`: the plan's counts, and the received rows'
  // displacements in the gathered buffer (this rank's own rows sit between).
  struct Counts {
    std::vector<std::int64_t> send, send_displs, recv, recv_displs;
  };
  Counts counts(std::int64_t width) const;

  Backend* backend_;
  Communicator* group_;
  RowExchange plan_;
  std::int64_t own0_ = 0, own_ = 0;  // this rank's rows inside the gathered buffer
  std::vector<std::int64_t> positions_;
  Buffer<std::int64_t> send_rows_;
  Csr owners_;          // scatter_sum's fixed-order sum: local row x sent row, ones
  Buffer<float> send_;  // sent rows (gather) / received partial sums (scatter_sum): plan.sent() x widest
};

}  // namespace gcnlab
