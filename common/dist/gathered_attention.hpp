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

#include <cstdint>
#include <memory>
#include <vector>

#include "common/dist/column_exchange.hpp"
#include "common/dist/row_attention.hpp"

namespace gcnlab {

class Graph;

class GatheredAttention final : public EdgeAttention {
 public:
  GatheredAttention() = default;
  // `rows`: this rank's block of Âᵀ, its first row at position r0 and its
  // columns local to position c0; `exchange` gathers every column it has.
  GatheredAttention(Backend& backend, Ledger& ledger, const Graph& g, const Architecture& a, const HostCsr& rows,
                    std::int64_t r0, std::int64_t c0, std::unique_ptr<ColumnExchange> exchange, bool elide);
  // The widest row an exchange moves for architecture a (max over its attention layers of F and H).
  static std::int64_t widest(const Architecture& a);

  void forward(int l, const Attention& a) override;
  void aggregate(int l, Direction d, ConstView in, View out) override;
  void backward(int l, const Attention& a, ConstView g, ConstView z, View ds, View dd) override;
  void forward_bytes(int l, ByteModel& m) const override;
  void aggregate_bytes(int l, Direction d, std::int64_t cols, ByteModel& m) const override;
  void backward_bytes(int l, ByteModel& m) const override;
  // Backend bytes: the block row, its edge tensors, the gathered buffers and the exchange's.
  double bytes() const;

 private:
  View gathered_z(int l);
  View gathered_src(int l);

  std::unique_ptr<ColumnExchange> exchange_;
  std::vector<int> heads_;
  std::vector<std::int64_t> widths_;  // F of each layer
  bool elide_ = true;
  std::unique_ptr<Csr> block_;  // this rank's block row of Âᵀ, n_r x c (on the heap: rows_ points to it)
  RowAttention rows_;           // its edge tensors
  std::vector<Buffer<float>> src_;   // the gathered s of each attention layer, c x H
  std::vector<Buffer<float>> z_;     // the gathered Z of each attention layer (elide), else one for all
  Buffer<float> partial_;            // this rank's share of βᵀG or ds for each column, c x widest
};

}  // namespace gcnlab
