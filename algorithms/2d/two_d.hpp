#pragma once
// 2d: CAGNET's 2D algorithm (Tripathy et al. SC'20, Sec. IV-C, Alg. 3) on an
// R x C grid, rectangular allowed (`--grid RxC`, default the most square).
// Âᵀ, H and G in 2D blocks; the SpMM is SUMMA with sparse blocks of Âᵀ
// broadcast along process rows (bcast_sparse: row pointers, column ids,
// values) and dense blocks of H along process columns (bcast_dense); then the
// "partial SUMMA" with the replicated W broadcasts T's blocks along the row.
// The layer code is the Z = 1 case of the Block Split 3D layers in
// algorithms/split-3d/split_summa.hpp, which draws the data movement.
//
// Per rank and epoch (the paper's Tcomm for a square grid: nnz/√P + 2nf/√P
// words per SpMM phase, Eq. 2's nf/√P for the softmax and Eq. 4's 2nf/√P + f²
// for dW), exactly:
//   bcast_sparse  Σ_stages not rooted here (|R_i|+1)·8 + nnz(piece)·8   (fwd Âᵀ, bwd Â; no
//                 backward SpMM at layer 0 without --learn-features: dW_0 from the forward's T_0)
//   bcast_dense   Σ_stages not rooted here len·|F_j|·4 + Σ_{j'≠j} |R_i|·|F_j'|·4  (f_l fwd, f_{l+1} bwd;
//                 the second term only where dX is computed) + the dW SUMMA's len·(|Φ_i| + |G_j|)·4
//   p2p           the transpose of X: the pieces of Xᵀ[Φ_i, C_j] held elsewhere
//   allgather     f_l f_{l+1} · 4 less this rank's block (dW), and Σ_{j'≠j} |R_i|·|F_j'(C)|·4 (logits)
// With --dw-reduce allreduce the dW terms become one all-reduce 2(P-1)/P · f_l f_{l+1} · 4;
// with --softmax allreduce the logits' gather becomes two all-reduces of |R_i| floats.
// CAGNET counts a sparse entry as one word; gcnlab counts its 4-byte column
// id and 4-byte value, plus the row pointers of each piece.

#include "algorithms/split-3d/split_summa.hpp"

namespace gcnlab {

class TwoDStrategy final : public SplitSummaStrategy {
 public:
  TwoDStrategy(const StrategyOptions& opts, const StrategyContext& ctx);
  std::string describe() const override;
};

}  // namespace gcnlab
