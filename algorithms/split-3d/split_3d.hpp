#pragma once
// split-3d: CAGNET's Split-3D-SpMM (Tripathy et al. SC'20, Sec. IV-D) on an
// X x Y x Z grid (`--grid XxYxZ`, default the most cube-like; non-cube grids
// allowed). Block Split 3D distribution: each local Âᵀ block is
// n/X x n/(YZ) (n/∛P x n/∛P² on a cube); activations H[R_{i,k}, F_j]. Each
// layer k of the mesh runs 2D SUMMA over its slab of Âᵀ's columns, the
// partial sums are reduce-scattered along the fiber (reduce_scatter), and the
// partial 3D dense multiply with the replicated W broadcasts T's blocks along
// y. Layers: algorithms/split-3d/split_summa.hpp (drawn there).
//
// Per rank and epoch, exactly: the 2d terms on the layer's slab, plus
//   reduce_scatter  (Z-1) · |R_{i,k}| · |F_j| · 4  per SpMM (f_l fwd, f_{l+1} bwd; no
//                   backward SpMM at layer 0 without --learn-features)
// CAGNET's forward Tcomm: nnz/P^{2/3} + 2nf/P^{2/3} words (sparse, dense H,
// and the fiber reduction of nf/P^{2/3}-element partial sums).

#include "algorithms/split-3d/split_summa.hpp"

namespace gcnlab {

class Split3DStrategy final : public SplitSummaStrategy {
 public:
  Split3DStrategy(const StrategyOptions& opts, const StrategyContext& ctx);
  std::string describe() const override;
};

}  // namespace gcnlab
