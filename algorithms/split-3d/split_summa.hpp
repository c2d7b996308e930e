#pragma once
// SUMMA-based GCN layers on the Block Split 3D layout of an X x Y x Z grid
// (CAGNET Sec. IV-C Alg. 3 and Sec. IV-D; Z = 1 is the 2D block layout).
// Shared by the `2d` and `split-3d` strategies, which differ only in the grid.
//
// Layout. Positions 0..n-1 are cut into X block rows R_i, each cut into Z
// sub-blocks R_{i,k}; feature widths are cut into Y blocks F_j. Rank (i,j,k)
// holds activations H[R_{i,k}, F_j]. Layer k of the mesh multiplies by the
// columns of its slab S_k = ∪_i R_{i,k}: rank (i,j,k) stores Âᵀ[R_i, C_{j,k}],
// C_{j,k} = the j-th of Y slices of S_k (each local block is n/X x n/(YZ):
// n/∛P x n/∛P² on a cube, as Block Split 3D prescribes).
//
// SpMM T = Âᵀ H, stage s over a piece of S_k owned by row i' and column j':
//      Âᵀ[R_i, piece] --bcast along y from (i, j', k)--> P(i, :, k)     bcast_sparse
//      H[piece, F_j]  --bcast along x from (i', j, k)--> P(:, j, k)     bcast_dense
//      T^(k)[R_i, F_j] += Âᵀ[R_i, piece] H[piece, F_j]                  spmm
// then (Z > 1) the partial sums are reduce-scattered along the fiber:
//      T^(k)[R_i, F_j] --reduce-scatter along z--> T[R_{i,k}, F_j]     reduce_scatter
// Partial dense multiply with the replicated W (Alg. 3 lines 12-18):
//      T[R_{i,k}, F_j'] --bcast along y from (i, j', k)-->              bcast_dense
//      Z[R_{i,k}, F_j] += T[R_{i,k}, F_j'] W[F_j', F_j]                 gemm
// Backward: U = Â G by the same SUMMA; each U[R_{i,k}, F_j'] block broadcast
// along y gives dX[R_{i,k}, F_j] += U_j' W[F_j, F_j']ᵀ (the partial SUMMA of
// Eq. 3; skipped where no dX is needed). The weight gradient dW = Xᵀ U, --dw-reduce:
//   summa      CAGNET's (Sec. IV-C Eq. 4, IV-D Eq. 4): a dense SUMMA on the two
//              n x f operands. dW is cut into X x Y blocks dW[Φ_i, G_j] (Φ: X
//              slices of f_l, G: the Y slices of f_{l+1}); Xᵀ is first
//              redistributed ("transposed") so that rank (i,j,k) holds
//              Xᵀ[Φ_i, C_{j,k}], the operand layout of Âᵀ above:
//                X[rows, F_j' ∩ Φ_i] --p2p from (i', j', k)--> (i, j, k)         p2p
//              then over the same stages as the SpMM
//                Xᵀ[Φ_i, piece] --bcast along y from (i, j', k)-->               bcast_dense
//                U[piece, G_j]  --bcast along x from (i', j, k)-->               bcast_dense
//                dW^(k)[Φ_i, G_j] += Xᵀ[Φ_i, piece] U[piece, G_j]               gemm
//              and (Z > 1) the fiber's partial sums are reduce-scattered, then
//              every block is all-gathered to keep W replicated:
//                dW --reduce-scatter along z--> --allgather over all ranks-->  reduce_scatter, allgather
//              (2nf/√P + f² words per rank on a square grid, as Eq. 4 has it);
//   allreduce  each rank adds Xᵀ U_j' for the U blocks it receives for dX into
//              the rows F_j of a zeroed f_l x f_{l+1} matrix, summed with one
//              all-reduce over all ranks (2 f² words; cheaper when dX is computed
//              anyway, not the paper's).
// The last layer's softmax crosses the y group that splits the classes,
// --softmax allgather (CAGNET: the logits' rows gathered) or allreduce (row max
// and sum), see common/model/loss.hpp.
// Graph attention (--model gat) does not use the SUMMA stages: rank (i,j,k)
// keeps the edge tensors of the whole block row Âᵀ[R_{i,k}, :], gathers the
// column rows Z[:, F_j] from the ranks along x and z (all-gather; their sums
// back by reduce-scatter) and completes the partial dots over F_j along y
// (common/dist/gathered_attention.hpp, "split features", has the derivation
// and the bytes).

#include <functional>
#include <memory>

#include "common/comm/process_grid.hpp"
#include "common/dist/gathered_attention.hpp"
#include "common/model/convolution.hpp"
#include "common/model/strategy.hpp"

namespace gcnlab {

class SplitSummaStrategy : public Strategy {
 public:
  // grid: X x Y (2D, axes "x","y") or X x Y x Z (axes "x","y","z"); opts.block:
  // the SUMMA blocking parameter b (max vertices per stage; 0 = no limit);
  // opts.dw_reduce and opts.softmax: the variants above.
  SplitSummaStrategy(const StrategyOptions& opts, const StrategyContext& ctx, std::vector<int> dims);

  std::vector<int> grid() const override { return grid_.dims(); }
  std::vector<int> coords() const override { return grid_.coords(); }
  int partition_parts() const override { return world_.size(); }
  void setup(const Graph& g, const Architecture& arch) override;
  const Layout& layout(int l) const override { return layouts_[l]; }
  Block weight_block(int l) const override { return {0, dims_[l], 0, wcols_[l]}; }
  void aggregate(int l, Direction d, ConstView in, View out) override;
  void linear(int l, ConstView x, ConstView w, View z) override;
  // G is U = Â G_l (the backward is aggregate-first): dX by the partial SUMMA with Wᵀ, dW per --dw-reduce.
  void linear_backward(int l, ConstView x, ConstView g, ConstView w, View dw, View* dx) override;
  ClassSplit class_split() override;
  std::int64_t nnz_local() const override { return nnz_local_; }
  void aggregate_bytes(int l, Direction d, std::int64_t cols, ByteModel& m) const override;
  void linear_bytes(int l, ByteModel& m) const override;
  void linear_backward_bytes(int l, bool dx, ByteModel& m) const override;
  void sum_over_rows(int l, View per_column) override;
  void sum_over_rows_bytes(int l, std::int64_t count, ByteModel& m) const override;
  MemoryNeed memory_need() const override;
  EdgeAttention* edge_attention() override { return &attention_; }

 protected:
  std::string layout_description() const;
  std::string variant_description() const;
  int X() const { return grid_.dims()[0]; }
  int Y() const { return grid_.dims()[1]; }
  int Z() const { return grid_.ndims() > 2 ? grid_.dims()[2] : 1; }

  ProcessGrid grid_;

 private:
  enum class DwReduce { summa, allreduce };
  struct Stage {
    std::int64_t pos0, len;        // graph positions [pos0, pos0 + len), inside R_{i',k} and C_{j',k}
    int dense_root, sparse_root;   // i' (rank along x), j' (rank along y)
    std::int64_t h_row0;           // first row of the piece inside R_{i',k}
    std::int64_t a_row0;           // first row of the piece inside C_{j',k} (the Xᵀ operand)
    std::int64_t nnz_fwd, nnz_bwd; // nnz of Âᵀ[R_i, piece] and Â[R_i, piece]
    int owned = -1;                // index into pieces_ when this rank is the sparse root
  };

  // T (local rows x F_j) = Âᵀ H (forward) or Â G (backward), in the layout of H.
  void spmm(bool backward, ConstView h, View t);
  // Broadcasts the Y column blocks of the local rows along y and hands each to fn.
  // The column blocks F_j of a matrix (j -> [first, first + count)).
  using ColumnBlocks = std::function<std::pair<std::int64_t, std::int64_t>(int)>;
  ColumnBlocks columns_of(std::int64_t f) const {
    return [this, f](int j) { return features(f, j); };
  }
  ColumnBlocks weight_columns(int l) const {
    return [this, l](int j) { return weight_features(l, j); };
  }
  void for_each_column_block(ConstView local, const ColumnBlocks& blocks, const std::function<void(int, ConstView)>& fn);
  std::pair<std::int64_t, std::int64_t> features(std::int64_t f, int j) const;  // F_j = [first, first+count)
  // W_l's and Z_l's columns of F_j (layer l's output columns F_j, each with
  // the heads it averages: Architecture::head_mean).
  std::pair<std::int64_t, std::int64_t> weight_features(int l, int j) const;
  std::pair<std::int64_t, std::int64_t> weight_rows(std::int64_t f, int i) const;  // Φ_i = [first, first+count)
  // Rows of dW[Φ_i, :] that fiber member k keeps after the reduce-scatter: [first, first+count) inside Φ_i.
  std::pair<std::int64_t, std::int64_t> fiber_rows(std::int64_t f, int i, int k) const;
  double column_block_bytes(const ColumnBlocks& blocks) const;
  // dW = Xᵀ U by CAGNET's dense SUMMA (summa) into the full dw.
  void weight_gradient_summa(int l, ConstView x, ConstView u, View dw);
  // Xᵀ[Φ_i, C_{j,k}] of this rank from the X blocks of layer k (the p2p redistribution).
  void transpose_input(int l, ConstView x);
  // The stages whose rows rank (dense_root, sparse_root, k) holds in H and in Xᵀ.
  const std::vector<const Stage*>& stages_between(int dense_root, int sparse_root) const {
    return stages_by_roots_[static_cast<std::size_t>(dense_root * Y() + sparse_root)];
  }
  void add_summa_dw_bytes(int l, ByteModel& m) const;
  struct DwSizes {
    std::int64_t cslice = 0;  // |C_{j,k}|: rows of the Xᵀ operand
    std::int64_t phi = 0, send = 0, block = 0, gathered = 0, kept = 0;
  };
  DwSizes dw_sizes() const;
  struct ScratchSizes {
    std::int64_t max_nnz = 0, max_len = 0, fmax_j = 0, fmax_any = 0;
  };
  ScratchSizes scratch_sizes() const;
  // setup's steps: the sub-blocks R_{ii,k'} of row block ii (positions); the
  // stages of this rank's layer k (returns the graph positions of the pieces of
  // column slice j it reads); reading them and learning the row's nnz; the buffers.
  std::vector<std::int64_t> sub_blocks(const std::vector<std::int64_t>& row_off, int ii) const;
  std::vector<Graph::ColumnRange> plan_stages(const std::vector<std::int64_t>& row_off, int j, int k);
  void read_pieces(const Graph& g, std::int64_t r0, std::int64_t r1, const std::vector<Graph::ColumnRange>& owned);
  void allocate_scratch();
  void setup_attention(const Graph& g, const Architecture& arch, const std::vector<std::int64_t>& row_off);

  Communicator& world_;
  Communicator& row_;    // along y: P(i, :, k)
  Communicator& col_;    // along x: P(:, j, k)
  Communicator* fiber_;  // along z (null in 2D)
  Backend& backend_;
  Ledger& ledger_;
  std::int64_t block_;
  DwReduce dw_reduce_;
  SoftmaxComm softmax_;
  std::vector<std::int64_t> dims_;
  std::vector<std::int64_t> wcols_;  // W_l's columns (Architecture::weight_cols)
  std::vector<int> averaged_;        // the heads each layer averages (Architecture::averaged)
  std::vector<Layout> layouts_;
  bool asymmetric_ = false;
  std::int64_t rows_i_ = 0, rows_ik_ = 0;  // |R_i|, |R_{i,k}|
  std::vector<std::int64_t> sub_rows_;     // |R_{i,k'}| for k' = 0..Z-1
  std::vector<Stage> stages_;
  std::vector<std::vector<const Stage*>> stages_by_roots_;  // [i' * Y + j']: the stages with those roots, in order
  std::vector<Csr> pieces_fwd_, pieces_bwd_;  // owned pieces (bwd empty when Â = Âᵀ: Graph::symmetric)
  std::int64_t nnz_local_ = 0;
  Csr sparse_scratch_;
  Buffer<float> dense_scratch_, partial_;
  // dw_reduce summa: Xᵀ[Φ_i, C_{j,k}] (row-major as |C_{j,k}| x |Φ_i|), the
  // redistribution's send/receive buffers, a received Xᵀ piece, the dW block,
  // its fiber slice and the all-gathered blocks.
  Buffer<float> xt_, xt_send_, xt_recv_, xt_piece_, dw_block_, dw_kept_, dw_gathered_;
  bool elide_ = true;            // --elide (graph attention)
  GatheredAttention attention_;  // GAT's edge tensors on Âᵀ[R_{i,k}, :], whole on each rank along y (--model gat)
};

}  // namespace gcnlab
