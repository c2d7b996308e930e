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
// along y serves both dX[R_{i,k}, F_j] += U_j' W[F_j, F_j']ᵀ and the weight
// gradient rows dW[F_j, F_j'] += X[R_{i,k}, F_j]ᵀ U_j' (CAGNET reuses ÂG);
// dW is then summed over all ranks (disjoint row blocks per y coordinate).
// The last layer's softmax is distributed: the trainer all-reduces the row
// max and row sum over the y group that splits the classes.

#include <functional>
#include <memory>

#include "common/model/strategy.hpp"
#include "common/comm/process_grid.hpp"

namespace gcnlab {

class SplitSummaStrategy : public Strategy {
 public:
  // grid: X x Y (2D, axes "x","y") or X x Y x Z (axes "x","y","z"); block: the
  // SUMMA blocking parameter b (max vertices per stage; 0 = no limit).
  SplitSummaStrategy(const StrategyContext& ctx, std::vector<int> dims, std::int64_t block);

  std::vector<int> grid() const override { return grid_.dims(); }
  std::vector<int> coords() const override { return grid_.coords(); }
  int partition_parts() const override { return world_.size(); }
  void setup(const Graph& g, const std::vector<std::int64_t>& dims) override;
  const Layout& layout(int l) const override { return layouts_[l]; }
  Block weight_block(int l) const override { return {0, dims_[l], 0, dims_[l + 1]}; }
  void forward(int l, ConstView x, ConstView w, View z) override;
  void backward(int l, ConstView x, ConstView g, ConstView w, View dw, View* dx) override;
  Communicator* class_group() override { return &row_; }
  std::int64_t nnz_local() const override { return nnz_local_; }
  ByteModel byte_model() const override;
  MemoryNeed memory_need() const override;

 protected:
  std::string layout_description() const;
  int X() const { return grid_.dims()[0]; }
  int Y() const { return grid_.dims()[1]; }
  int Z() const { return grid_.ndims() > 2 ? grid_.dims()[2] : 1; }

  ProcessGrid grid_;

 private:
  struct Stage {
    std::int64_t pos0, len;        // graph positions [pos0, pos0 + len), inside R_{i',k} and C_{j',k}
    int dense_root, sparse_root;   // i' (rank along x), j' (rank along y)
    std::int64_t h_row0;           // first row of the piece inside R_{i',k}
    std::int64_t nnz_fwd, nnz_bwd; // nnz of Âᵀ[R_i, piece] and Â[R_i, piece]
    int owned = -1;                // index into pieces_ when this rank is the sparse root
  };

  // T (local rows x F_j) = Âᵀ H (forward) or Â G (backward), in the layout of H.
  void spmm(bool backward, ConstView h, View t);
  // Broadcasts the Y column blocks of the local rows along y and hands each to fn.
  void for_each_column_block(ConstView local, std::int64_t f, const std::function<void(int, ConstView)>& fn);
  std::pair<std::int64_t, std::int64_t> features(std::int64_t f, int j) const;  // F_j = [first, first+count)
  double column_block_bytes(std::int64_t f) const;
  struct ScratchSizes {
    std::int64_t max_nnz = 0, max_len = 0, fmax_j = 0, fmax_any = 0;
  };
  ScratchSizes scratch_sizes() const;

  Communicator& world_;
  Communicator& row_;    // along y: P(i, :, k)
  Communicator& col_;    // along x: P(:, j, k)
  Communicator* fiber_;  // along z (null in 2D)
  Backend& backend_;
  Ledger& ledger_;
  std::int64_t block_;
  std::vector<std::int64_t> dims_;
  std::vector<Layout> layouts_;
  bool directed_ = false;
  std::int64_t rows_i_ = 0, rows_ik_ = 0;  // |R_i|, |R_{i,k}|
  std::vector<std::int64_t> sub_rows_;     // |R_{i,k'}| for k' = 0..Z-1
  std::vector<Stage> stages_;
  std::vector<Csr> pieces_fwd_, pieces_bwd_;  // owned pieces (bwd empty when undirected)
  std::int64_t nnz_local_ = 0;
  Csr sparse_scratch_;
  Buffer<float> dense_scratch_, partial_, work_;
};

// Default grids: the most square R x C (R >= C) and the most cube-like X x Y x Z.
std::vector<int> default_grid(int ranks, int ndims);

}  // namespace gcnlab
