#pragma once
// 2d: CAGNET's 2D algorithm (Tripathy et al. SC'20, Sec. IV-C, Alg. 3) on an
// R x C grid, rectangular allowed (`--grid RxC`, default the most square).
// Âᵀ, H and G in 2D blocks; the SpMM is SUMMA with sparse blocks of Âᵀ
// broadcast along process rows (bcast_sparse: row pointers, column ids,
// values) and dense blocks of H along process columns (bcast_dense); then the
// "partial SUMMA" with the replicated W broadcasts T's blocks along the row.
// The layer code is the Z = 1 case of the Block Split 3D layers in
// common/dist/split_summa.hpp, which draws the data movement.
//
// Per rank and epoch (the paper's Tcomm for a square grid, first phase:
// nnz/√P + 2nf/√P words), exactly:
//   bcast_sparse  Σ_stages not rooted here (|R_i|+1)·8 + nnz(piece)·8   (fwd Âᵀ, bwd Â)
//   bcast_dense   Σ_stages not rooted here len·|F_j|·4 + Σ_{j'≠j} |R_i|·|F_j'|·4  (f_l fwd, f_{l+1} bwd)
//   allreduce     2(P-1)/P · f_l f_{l+1} · 4   (dW, replicated W)
// CAGNET counts a sparse entry as one word; gcnlab counts its 4-byte column
// id and 4-byte value, plus the row pointers of each piece.

#include "common/dist/split_summa.hpp"

namespace gcnlab {

class TwoDStrategy final : public SplitSummaStrategy {
 public:
  TwoDStrategy(const StrategyOptions& opts, const StrategyContext& ctx);
  std::string describe() const override;
};

}  // namespace gcnlab
