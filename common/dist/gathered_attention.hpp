#pragma once
// Graph attention (Primitives::attention; GAT) for a block-row strategy: rank
// r holds block row [offsets[r], offsets[r+1]) of Âᵀ — every in-edge of its
// targets, so each target's softmax stays local — and the same rows of every
// activation (1d). The edge tensors lie on the rank's whole block row (one
// block, all n columns: common/dist/row_attention.hpp); what crosses ranks is
// a source's data, moved with the group's collectives:
//
//   attention        s (n_r x H per rank) ALL-GATHERED: the block's columns' scores
//   aggregate fwd    Z (n_r x F)         ALL-GATHERED, then out_i = Σ_j β_ij Z_j locally
//   attention bwd    dβ_ij = G_i · Z_j on the gathered Z (kept from the forward:
//                    `elide`; or ALL-GATHERED again); ds_j over this rank's
//                    targets for every source j, REDUCE-SCATTERED to the owners
//   aggregate bwd    βᵀ G over this rank's targets for every source (n x F),
//                    REDUCE-SCATTERED to the owners
// Per rank r and attention layer (n = Σ n_r, F = the layer's width, H its heads):
//   allgather       (n - n_r)(H + F) · 4 bytes, + (n - n_r) F · 4 without `elide`
//                   (s is kept per layer for the backward: n x H, a small copy)
//   reduce_scatter  (P - 1) n_r (F + H) · 4 bytes
// The dense volume is CAGNET 1D's (Alg. 1: each rank receives every other
// block of Z forward and sends its share of every block of βᵀG backward);
// the per-vertex scores add H/F of it; `elide` saves the backward's second
// gather of Z — Bharadwaj et al.'s FusedMM replication reuse (IPDPS'22 Sec. V):
// one gather serves the SpMM and the SDDMM — at the memory of one gathered
// Z (n x F) per attention layer instead of one for all.

#include <cstdint>
#include <memory>
#include <vector>

#include "common/dist/row_attention.hpp"

namespace gcnlab {

class GatheredAttention {
 public:
  GatheredAttention() = default;
  GatheredAttention(Backend& backend, Communicator& group, const Graph& g, const Architecture& a,
                    const std::vector<std::int64_t>& offsets, bool elide);

  void forward(int l, const Attention& a);
  void aggregate(int l, Direction d, ConstView in, View out);
  void backward(int l, const Attention& a, ConstView g, ConstView z, View ds, View dd);
  // The byte companions of the three (Strategy::attention_bytes ...).
  void forward_bytes(int l, ByteModel& m) const;
  void aggregate_bytes(int l, Direction d, std::int64_t cols, ByteModel& m) const;
  void backward_bytes(int l, ByteModel& m) const;
  // Backend bytes: the block row, its edge tensors and the gathered buffers.
  double bytes() const;

 private:
  std::vector<std::int64_t> counts(std::int64_t width) const;  // elements of each rank's rows at `width`
  View gathered_z(int l);
  View gathered_src(int l);
  void gather(ConstView local, View all);

  Backend* backend_ = nullptr;
  Communicator* group_ = nullptr;
  std::vector<std::int64_t> offsets_;
  std::vector<int> heads_;
  std::vector<std::int64_t> widths_;  // F of each layer
  bool elide_ = true;
  std::unique_ptr<Csr> block_;  // this rank's block row of Âᵀ, n_r x n (on the heap: rows_ points to it)
  RowAttention rows_;           // its edge tensors
  std::vector<Buffer<float>> src_;   // the gathered s of each attention layer, n x H
  std::vector<Buffer<float>> z_;     // the gathered Z of each attention layer (elide), else one for all
  Buffer<float> partial_;            // this rank's share of βᵀG or ds for every source, n x widest F
};

}  // namespace gcnlab
