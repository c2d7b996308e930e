#pragma once
// Graph attention (Primitives::attention; GAT, models/gat) on Plexus's 3D grid.
// Plexus (Ranjan et al., SC'25) trains GCN only; this is its extension to
// GAT's SDDMM and edge softmax on the same adjacency shards. The geometry of
// GAT's matrices is in decomposition.hpp: layer l, axes (a, b, c), b = y on
// every layer. Rank (i, j, k) (a = i, b = j, c = k) holds
//
//   Z = X W, s, d, ds, dd   rows R_{i,k} (R_i's k-th sub-block) x columns F_j (s, d: one column per head)
//   shard A^(l)             Âᵀ[R_k, R_i]: targets R_k, sources R_i (replicated over b) and its edge tensors
//   the output and G        rows R_{k,i} x columns F_j
//
// so the shard splits each target's row over a (its softmax's max and sum
// are reduced over a, as 1.5D's), and the features over b (its SDDMM dots
// are partial over b, as 2D's feature split: common/dist/gathered_attention.hpp).
// Each of the Y ranks along b keeps the same edge tensors and computes the
// same α: no edge value moves. What does:
//
//   attention      s and d ALL-REDUCED over b (the dots over F_j completed); s ALL-GATHERED over c
//                  (R_{i,k} -> R_i, the shard's sources); d RESHARDED in the a-c plane (R_{i,k} ->
//                  R_k, its targets); the row max and sum ALL-REDUCED over a
//   aggregate fwd  Z ALL-GATHERED over c; β Z on the shard is partial over a: REDUCE-SCATTERED over a
//                  (R_k -> R_{k,i})
//   attention bwd  G ALL-GATHERED over a (R_{k,i} -> R_k); βᵀ G and dβ = G_i · Z_j in one pass on
//                  the Z of the forward (`elide`; else ALL-GATHERED again), dβ partial over b; D_i
//                  and dd ALL-REDUCED over a; ds REDUCE-SCATTERED over c (R_i -> R_{i,k}); dd
//                  RESHARDED back (R_k -> R_{i,k}); the softmax's backward is linear in dβ, so only
//                  ds and dd are ALL-REDUCED over b; βᵀ G on the shard is partial over c:
//                  REDUCE-SCATTERED over c
//
// Per rank and attention layer (H heads, F = |F_j|, n_x = |R_{i,k}|, n_a = |R_i|,
// n_c = |R_k|, n_o = |R_{k,i}|, grid X x Y x Z along (a, b, c); F_z = F, or H F
// where the layer averages its heads: Z's columns), in bytes:
//   all-reduce over b      4 · wire::allreduce(n_x H · 4, Y)         s, d, ds, dd
//   all-gather over c      (n_a - n_x)(H + F_z [+ F_z without elide]) · 4
//   reduce-scatter over c  (Z - 1) n_x (H + F_z) · 4
//   all-reduce over a      4 · wire::allreduce(n_c H · 4, X)         max, sum, D, dd
//   reduce-scatter over a  (X - 1) n_o F · 4;  all-gather over a  (n_c - n_o) F · 4
//   reshard (alltoall)     the rows of R_k outside R_{i,k}, and of R_{i,k} outside R_k, H wide · 4
// Memory: nnz H / (X Z) floats per edge tensor on every rank (the shard), and
// Y-fold edge-softmax work, as 2D's feature split.

#include <cstdint>
#include <memory>
#include <vector>

#include "algorithms/plexus-3d/decomposition.hpp"
#include "common/comm/process_grid.hpp"
#include "common/dist/column_exchange.hpp"
#include "common/dist/reshard.hpp"
#include "common/dist/row_attention.hpp"

namespace gcnlab {

class Graph;

class PlexusAttention final : public EdgeAttention {
 public:
  PlexusAttention() = default;
  // The edge tensors of every layer of `arch` (every layer attends) for
  // coordinate k of grid g; `ordering(l)`: the vertex ordering of layer l's rows.
  PlexusAttention(Backend& backend, Ledger& ledger, const ProcessGrid& grid, const Graph& g,
                  const Architecture& arch, const plexus::Grid& dims, const plexus::Coords& k,
                  const std::vector<int>& orderings, bool elide);

  void forward(int l, const Attention& a) override;
  void aggregate(int l, ConstView z, View out) override;
  void backward(int l, const Attention& a, ConstView g, ConstView z, View dz, View ds, View dd) override;
  void forward_bytes(int l, ByteModel& m) const override;
  void aggregate_bytes(int l, std::int64_t cols, ByteModel& m) const override;
  void backward_bytes(int l, ByteModel& m) const override;
  // Per layer, the nonzeros its edge softmax passes over (the heads-weighted
  // mean of the layers' shards); stored(): those of both shards.
  std::int64_t edges() const override;
  std::int64_t stored() const;
  // Backend bytes: the shards, their edge tensors and every buffer.
  double bytes() const;

 private:
  // One distinct shard (layers of the same parity share it) and its edge math.
  struct Shard {
    std::unique_ptr<Csr> block;  // on the heap: `edges` points to it
    RowAttention edges;          // the edge tensors of its layers only
  };
  struct Layer {
    plexus::LayerBlocks blocks;
    int heads = 0;
    std::int64_t width = 0;  // F = |F_j|
    int averaged = 1;        // the heads it averages (Architecture::averaged): Z is averaged x F wide
    std::int64_t z_width() const { return width * averaged; }
    int shard = 0;
    std::unique_ptr<AllGatherColumns> sources;  // over c: R_{i,k} <-> R_i
    std::unique_ptr<AllGatherColumns> targets;  // over a: R_{k,i} <-> R_k
    std::unique_ptr<Reshard> to_targets, from_targets;  // in the a-c plane: R_{i,k} -> R_k, and back
    Buffer<float> src, dst;  // the complete s on R_i, d on R_k (kept for the backward)
  };

  std::int64_t sources_rows(const Layer& t) const { return t.blocks.rows_in.count; }
  std::int64_t target_rows(const Layer& t) const { return t.blocks.rows_out.count; }
  std::int64_t own_rows(const Layer& t) const { return t.blocks.x_rows.count; }
  Communicator& over(int axis) const;
  void allreduce_over_b_bytes(std::int64_t elements, ByteModel& m) const;
  // The two per-row reductions of a step over a (max and sum; D and dd).
  void reduce_rows_bytes(const Layer& t, ByteModel& m) const;
  View gathered_z(int l);

  Backend* backend_ = nullptr;
  const ProcessGrid* grid_ = nullptr;
  Communicator* plane_ = nullptr;  // along x and z: the d and dd reshards
  bool elide_ = true;
  std::vector<Shard> shards_;
  std::vector<Layer> layers_;
  std::vector<Buffer<float>> z_;  // the gathered Z (c's R_i x F) of each layer (elide), else one for all
  Buffer<float> g_;               // the gathered G (R_k x F)
  Buffer<float> partial_;         // a shard's partial sums before their reduce-scatter (βᵀ G and ds side by side)
  Buffer<float> rows_;            // the completed s or d (R_{i,k} x H); dd on the targets (R_k x H)
  Dense staging_;                 // the reshards' messages
};

}  // namespace gcnlab
