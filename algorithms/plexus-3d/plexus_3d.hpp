#pragma once
// plexus-3d: Plexus's 3D tensor-parallel full-graph GCN (Ranjan et al.,
// SC'25, Sec. 3 and 5) on a Gx x Gy x Gz grid (`--grid XxYxZ`).
//
// Per layer l (axes (a, b, c) rotated l times; geometry in decomposition.hpp):
//   forward, Alg. 1                          backward, Alg. 2
//   F  <- all-gather over c (layer 0 only)   dW <- Hᵀ dQ, reduce-scatter over c   (lines 2-3)
//   H  =  A F,  all-reduce over a            dH =  dQ Wᵀ, all-reduce over a       (lines 5-6)
//   W  <- all-gather over c                  dF =  Aᵀ dH, all-reduce over c       (lines 7-8;
//   Q  =  H W,  all-reduce over b                layer 0: reduce-scatter, learned features only)
// The adjacency shards of three planes are cycled with period 3 (Sec. 3.2)
// and, with the double permutation, in two permuted versions (Sec. 5.1).
// Options: --permutation none|single|double (default double), --agg-blocks K
// (blocked aggregation, Sec. 5.2: the forward SpMM in K row blocks, each
// all-reduced with a nonblocking all-reduce while the next block multiplies),
// --gemm-order auto|direct|reversed (Sec. 5.3: dW = Hᵀ dQ or (dQᵀ H)ᵀ; auto
// times both on each layer's shapes at setup and keeps the faster),
// --comm-precision fp32|bf16 (ScaleGNN Sec. V-B: the four partial-sum
// all-reduces H, Q, dH, dF sent in bf16; common/dist/partial_sums.hpp).
//
// Deviation from Alg. 2 line 4: the all-gathered W of the forward pass is
// kept for the backward pass instead of being gathered again (weights are
// small; it saves one all-gather per layer and epoch).
//
// Per rank and epoch the wire bytes are exactly the sum over
// plexus::epoch_collectives (ring all-reduce 2(p-1)/p M, all-gather and
// reduce-scatter (p-1) m, the Eq. 4.5 terms with this rank's block sizes).
//
// --model scalegnn (ScaleGNN Sec. IV-C4; decomposition.hpp): the input
// projection and output head as Eq. 28's GEMM with its all-reduce over b
// (and W gathered over c, dW reduce-scattered over c, dX = dQ Wᵀ all-reduced
// over a), RMSNorm's row sums over the columns' axis, dL/dγ over the rows'
// axis, the residual resharded between the planes of consecutive layers.
//
// --model gat (graph attention; attention.hpp, the geometry in
// decomposition.hpp): Z = X W reduce-scattered over b (W's rows over b, its
// columns whole), the edge tensors on the adjacency shards, dW all-reduced over
// the a-c plane. It needs one vertex ordering for every layer (--permutation
// none or single; single is its default) and Plexus's GCN-specific options at
// their defaults (--agg-blocks 1, --gemm-order auto or direct, --comm-precision fp32).
//
// Mini-batches (used by scalegnn-4d, which is this 3D PMM inside each of its
// data-parallel groups): cut(sample) cuts the sampled, rescaled adjacency
// blocks out of this rank's full ones, kept on the host for that (ScaleGNN
// Alg. 2; --permutation none, so that a rank's rows of the sample lie inside
// its rows of the full graph), restrict_to(cut) uploads them and the same
// code runs on them; restrict_to(nullptr) returns to the full graph (evaluation).

#include <array>
#include <map>
#include <tuple>

#include "algorithms/plexus-3d/attention.hpp"
#include "algorithms/plexus-3d/decomposition.hpp"
#include "common/model/strategy.hpp"
#include "common/comm/process_grid.hpp"
#include "common/dist/partial_sums.hpp"

namespace gcnlab {

class Plexus3DStrategy final : public Strategy {
 public:
  Plexus3DStrategy(const StrategyOptions& opts, const StrategyContext& ctx);

  std::string describe() const override;
  std::vector<int> grid() const override { return {g_[0], g_[1], g_[2]}; }
  std::vector<int> coords() const override { return {k_[0], k_[1], k_[2]}; }
  int partition_parts() const override { return world_.size(); }
  void setup(const Graph& g, const Architecture& arch) override;
  const Layout& layout(int l) const override { return cur_->layouts[l]; }
  Block weight_block(int l) const override;
  // Alg. 1 lines 3-5 (forward: F gathered over c at layer 0, H = A F reduced
  // over a) and Alg. 2 lines 7-8 (backward: dF = Aᵀ dH reduced over c).
  void aggregate(int l, Direction d, ConstView in, View out) override;
  // Alg. 1 lines 7-9 (Eq. 28 for a linear layer) and Alg. 2 lines 2-6.
  void linear(int l, ConstView x, ConstView w, View z) override;
  void linear_backward(int l, ConstView x, ConstView g, ConstView w, View dw, View* dx) override;
  BackwardOrder backward_order(int) const override { return BackwardOrder::transform_first; }
  std::string permutation() const override { return to_string(permutation_); }
  std::unique_ptr<SampleCut> cut(Sample s) const override;
  void restrict_to(const SampleCut* c) override;
  ClassSplit class_split() override;
  bool counts_metrics() const override;
  bool first_copy(int l) const override;
  std::int64_t nnz_local() const override { return cur_->nnz; }
  // plexus::step_collectives of each primitive (the Eq. 4.5 terms with this rank's block sizes)
  void aggregate_bytes(int l, Direction d, std::int64_t cols, ByteModel& m) const override;
  void linear_bytes(int l, ByteModel& m) const override;
  void linear_backward_bytes(int l, bool dx, ByteModel& m) const override;
  void sum_over_columns_bytes(int l, ByteModel& m) const override;
  void sum_over_rows_bytes(int l, std::int64_t count, ByteModel& m) const override;
  void reshard_bytes(int from, int to, ByteModel& m) const override;
  void align_bytes(int l, Direction d, ByteModel& m) const override;
  MemoryNeed memory_need() const override;
  void sum_over_columns(int l, std::span<float> per_row) override;
  void sum_over_rows(int l, View per_column) override;
  void reshard(int from, int to, ConstView x, View y, bool accumulate) override;
  // X_l into its aggregated layout and back (align_reshard; the residual's machinery).
  bool same_rows() const override { return false; }
  void align(int l, Direction d, ConstView in, View out) override;
  EdgeAttention* edge_attention() override { return shape_.attention ? &attention_ : nullptr; }

 private:
  struct Shard {
    std::vector<Csr> row_blocks;  // A^(l) local block, cut into the aggregation row blocks
    Csr transposed;               // its transpose, for dF = Aᵀ dH
    std::vector<std::int64_t> block_rows;
    std::int64_t nnz = 0;
  };

  // This rank's blocks of one row split (the full graph, or a sample).
  struct Geometry {
    std::vector<Layout> layouts;
    std::vector<plexus::LayerBlocks> blocks;
    std::vector<Shard> shards;  // the distinct A^(l); layer l multiplies shards[shard_of_layer[l]]
    std::vector<int> shard_of_layer;  // -1: a linear layer
    std::int64_t nnz = 0;
  };

  enum class GemmOrder { direct, reversed };

  Communicator& along(int axis) const { return grid_.along({plexus::kAxisNames[axis]}); }
  // Adds the collectives of one primitive of layer l (plexus::step_collectives) to m.
  void add_step(int l, plexus::Step step, ByteModel& m) const;
  // The device copies of one local adjacency block: its aggregation row blocks and its transpose.
  Shard make_shard(const HostCsr& a);
  // dW (cols_in x cols_out) = Hᵀ G in the layer's order (Sec. 5.3); H is a linear layer's input.
  void weight_gradient(int l, ConstView h, ConstView g, View dw);
  // Per layer, from --gemm-order and the backend's rule; never from a clock.
  void choose_gemm_orders();
  // H = A F with the all-reduce over a, in row blocks (Sec. 5.2).
  void aggregate_blocks(const Shard& s, Communicator& group, ConstView f, View h);
  // setup's parts: the prepared graph fits the grid and this run's orderings; every
  // layer's layout; the adjacency shards; the gathered weights and partial-sum buffers.
  void check_graph(const Graph& g, const Architecture& arch) const;
  void lay_out(const Graph& g);
  void cut_shards(const Graph& g);
  void allocate_workspaces();
  // GAT's edge tensors and buffers (setup's part for --model gat).
  void setup_attention(const Graph& g, const Architecture& arch);
  // GAT's Z = X W and its backward (decomposition.hpp), and their bytes.
  void attention_linear(int l, ConstView x, ConstView w, View z);
  void attention_linear_backward(int l, ConstView x, ConstView g, ConstView w, View dw, View* dx);
  void attention_linear_bytes(int l, bool backward, ByteModel& m) const;
  // Zᵀ (or dZᵀ) of layer l: all f_{l+1} rows, and this rank's F_b (zt_full_, zt_mine_).
  std::array<View, 2> zt_views(int l);
  std::vector<std::int64_t> zt_blocks(int l) const;
  // The ranks that hold the other rows of matrix l's columns (its rows' axes).
  Communicator& over_rows(int l) const;
  bool conv(int l) const { return shape_.kind(l) == LayerKind::conv; }
  const Shard& shard(int l) const { return cur_->shards[cur_->shard_of_layer[l]]; }

  Communicator& world_;
  Backend& backend_;
  Ledger& ledger_;
  plexus::Grid g_{};
  plexus::Coords k_{};
  ProcessGrid grid_;
  Permutation permutation_;
  int agg_blocks_;
  std::string gemm_order_;
  std::vector<GemmOrder> dw_order_;  // per layer
  std::uint64_t seed_;
  bool learn_features_;
  bool elide_ = false;  // GAT: the backward's SDDMM reuses the forward's gathered Z (--elide)
  PartialSums sums_;  // the partial-sum all-reduces, in fp32 or bf16 (--comm-precision)

  bool keep_host_shards_;  // mini-batches will be cut out of them

  std::int64_t n_ = 0;
  std::vector<std::int64_t> dims_;
  plexus::ModelShape shape_{std::vector<std::int64_t>{}};
  Geometry full_, sampled_;
  const Geometry* cur_ = &full_;
  Sample sample_;                    // the current sample (cur_ == &sampled_)
  plexus::RowSplit rows_{0};         // n_, or sample_
  std::vector<HostCsr> host_shards_; // full_.shards on the host, in ordering-0 positions
  std::vector<std::array<plexus::Range, 2>> shard_ranges_;  // their rows and columns (positions)
  // Buffers sized for the full graph (a sample's blocks are never larger).
  // Per layer, each W it multiplies by (a root term's S_l too), all-gathered
  // over c by linear() and kept for linear_backward() (Primitives' contract).
  // Told apart by their parameter's storage, which the trainer keeps for the run.
  struct GatheredWeight {
    const float* source = nullptr;
    Dense full;
  };
  std::vector<std::vector<GatheredWeight>> w_full_;
  Dense& gathered(int l, const float* source);
  Dense f_full_, dw_part_, dw_t_, dx_part_;
  Dense reshard_staging_;  // the residual's and align's messages
  // GAT: the edge tensors, and Zᵀ (all of its columns, and this rank's) for
  // the reduce-scatter over b of Z = X W and the all-gather of dZ.
  PlexusAttention attention_;
  Dense zt_full_, zt_mine_;
};

}  // namespace gcnlab
