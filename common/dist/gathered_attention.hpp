#pragma once
// Graph attention (Primitives::attention; GAT) for a block-row strategy: rank
// r holds block row [r0, r1) of Âᵀ — every in-edge of its targets, so each
// target's softmax stays local — and the same rows of every activation (1d,
// 1d-ring, sa-1d). The edge tensors lie on the rank's whole block row, its
// columns compacted onto the positions a ColumnExchange gathers
// (common/dist/column_exchange.hpp: every position for 1d and 1d-ring, the
// nonzero columns for sa-1d); the edge math is common/dist/row_attention.hpp.
// What crosses ranks is a source's data:
//
//   attention        s (n_r x H per rank) GATHERED: the block's columns' scores
//   aggregate fwd    Z (n_r x F)         GATHERED, then out_i = Σ_j β_ij Z_j locally
//   attention bwd    dβ_ij = G_i · Z_j on the gathered Z (kept from the forward:
//                    `elide`; or GATHERED again); ds_j over this rank's targets
//                    for each of its columns, SCATTER-SUMMED to the owners
//   aggregate bwd    βᵀ G over this rank's targets for each column (c x F),
//                    SCATTER-SUMMED to the owners
// Per rank and attention layer (F = the layer's width, H its heads), with the
// exchange's gather bytes g(w) and scatter-sum bytes r(w) at width w:
//   g(H) + g(F) [+ g(F) without `elide`] + r(F) + r(H)
// 1d:      g(w) = (n - n_r) w · 4 (allgather), r(w) = (P - 1) n_r w · 4 (reduce_scatter)
// 1d-ring: the same volume in P - 1 point-to-point steps (p2p; algorithms/1d-ring)
// sa-1d:   g(w) = |NnzCols(r)| w · 4, r(w) = Σ_j |NnzCols(j, r)| w · 4 (alltoall)
// The dense volume is the strategy's SpMM's (CAGNET Alg. 1, SA Alg. 1: each
// rank receives the column rows forward and returns its share of βᵀG
// backward); the per-vertex scores add H/F of it; `elide` saves the
// backward's second gather of Z — Bharadwaj et al.'s FusedMM replication reuse
// (IPDPS'22 Sec. V): one gather serves the SpMM and the SDDMM — at the memory
// of one gathered Z (c x F) per attention layer instead of one for all.
//
// Split features (2d, split-3d: rank (i, j[, k]) holds block row R_i[,k] of
// the activations in the feature columns F_j; FeatureSplit). The edge tensors
// of Âᵀ[R_i[,k], :] are kept whole on each of the Y ranks that split the
// row's features (P(i, :[, k]), along y), each computing the same α; the
// exchange runs over the ranks that hold the same F_j (along x [and z]) at
// width |F_j|, and the model's scores are partial dots over F_j. So:
//   attention        s and d ALL-REDUCED along y (the partial dots completed), then s gathered
//   aggregate fwd    Σ_j β_ij Z_j[F_j]: each head's columns where they lie (HeadSplit)
//   attention bwd    dβ_ij = G_i[F_j] · Z_j[F_j]: PARTIAL dots; the softmax's
//                    backward is linear in dβ (dα, D_i, dê, ds, dd), so it runs
//                    on the partial dots and only ds and dd are ALL-REDUCED along
//                    y (n_r H per rank instead of the nnz H partial dots)
// adding per rank and attention layer 4 · wire::allreduce(n_r H · 4, Y) to the
// exchange's g(H) + g(|F_j|) [+ g(|F_j|)] + r(|F_j|) + r(H) along x [and z].
// The alternative, SUMMA's (CAGNET Alg. 3), would keep α on Âᵀ's 2D blocks and
// broadcast each stage's nnz H values along the row with its pattern in both
// aggregations (≈ 2 nnz H / X values per rank and layer, Bharadwaj et al.'s 2D
// SDDMM the same again backward); replicating the row block's edge tensors
// over y moves no edge value at all, and its dense gathers are SUMMA's dense
// broadcasts exactly ((n - n_r) |F_j| · 4), at nnz H / X (split-3d: nnz H /
// (X Z)) floats of edge tensors per rank and Y-fold edge work.

#include <cstdint>
#include <memory>
#include <vector>

#include "common/dist/column_exchange.hpp"
#include "common/dist/row_attention.hpp"

namespace gcnlab {

class Graph;

// The feature columns [col0[l], col0[l] + cols[l]) of each layer l's output
// (layout(l + 1)'s) that this rank holds, and `group`: the ranks holding the
// other columns of the same rows. Default (no group): every column.
struct FeatureSplit {
  Communicator* group = nullptr;
  std::vector<std::int64_t> col0, cols;
};

class GatheredAttention final : public EdgeAttention {
 public:
  GatheredAttention() = default;
  // `rows`: this rank's block of Âᵀ, its first row at position r0 and its
  // columns local to position c0; `exchange` gathers every column it has.
  GatheredAttention(Backend& backend, Ledger& ledger, const Graph& g, const Architecture& a, const HostCsr& rows,
                    std::int64_t r0, std::int64_t c0, std::unique_ptr<ColumnExchange> exchange, bool elide,
                    FeatureSplit features = {});
  // The widest row an exchange moves for architecture a (max over its attention layers of Z's width and H).
  static std::int64_t widest(const Architecture& a);

  void forward(int l, const Attention& a) override;
  void aggregate(int l, ConstView z, View out) override;
  void backward(int l, const Attention& a, ConstView g, ConstView z, View dz, View ds, View dd) override;
  void forward_bytes(int l, ByteModel& m) const override;
  void aggregate_bytes(int l, std::int64_t cols, ByteModel& m) const override;
  void backward_bytes(int l, ByteModel& m) const override;
  std::int64_t edges() const override { return block_ ? block_->nnz : 0; }
  // Backend bytes: the block row, its edge tensors, the gathered buffers and the exchange's.
  double bytes() const;

 private:
  View gathered_z(int l);
  View gathered_src(int l);
  bool splits_features() const { return features_ != nullptr; }
  // `into` (rows x H) = the sum of `partial` over the feature split (all-reduced).
  ConstView complete(ConstView partial, float* into);
  void complete_bytes(int heads, ByteModel& m) const;
  ConstView dst(int l, const Attention& a) const;  // the complete d of layer l

  Backend* backend_ = nullptr;
  std::unique_ptr<ColumnExchange> exchange_;
  Communicator* features_ = nullptr;  // FeatureSplit::group (null: whole features)
  std::int64_t rows_count_ = 0;       // rows of the block
  std::vector<int> heads_;
  std::vector<int> averaged_;         // the heads each layer averages (Architecture::averaged)
  std::vector<std::int64_t> widths_;  // the local columns of each layer's Z (F, or |F_j|; times averaged)
  bool elide_ = true;
  std::unique_ptr<Csr> block_;  // this rank's block row of Âᵀ, n_r x c (on the heap: rows_ points to it)
  RowAttention rows_;           // its edge tensors
  std::vector<Buffer<float>> src_;   // the gathered s of each attention layer, c x H
  std::vector<Buffer<float>> z_;     // the gathered Z of each attention layer (elide), else one for all
  Buffer<float> partial_;            // this rank's share of βᵀG and ds for each column, c x (F + H), widest
  std::vector<Buffer<float>> dst_;   // split features: each layer's completed d (rows x H), kept for its backward
  Buffer<float> score_;              // split features: the completed s (rows x widest H) before its gather
};

}  // namespace gcnlab
