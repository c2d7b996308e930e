#pragma once
// scalegnn-4d: ScaleGNN's 4D mini-batch GCN (Wei et al., 2026) on a
// D x (X x Y x Z) grid (`--grid DxXxYxZ`, `--batch-size B`).
//
//   D   data-parallel groups (Sec. IV-A): each trains on its own uniform
//       vertex sample every step (Sec. III-D, Alg. 1; seed shared inside the
//       group, so sampling needs no communication) with replicated weights;
//       after the backward pass every dW block is all-reduced over D.
//   XYZ inside a group, the 3D PMM of Sec. IV-C: exactly plexus-3d's
//       decomposition, layer rotation and collectives (Eq. 27-28), run by a
//       plexus-3d strategy on the group's communicator, whose blocks of each
//       step's sampled subgraph every rank cuts out of its own full 2D shard
//       (Alg. 2; no graph communication).
// Evaluation runs the same 3D PMM on the full graph in every group; group 0's
// metrics count.
//
// The loss of a step is the mean over the training vertices of all D samples
// (the count is one 8-byte all-reduce), so the summed dW of the D groups is
// the gradient of the step's loss: D groups with samples S_1..S_D compute what
// one rank computes on the block-diagonal union of their induced subgraphs.
//
// --model scalegnn trains the paper's model (Sec. III-A/B: input projection,
// RMSNorm, ReLU, dropout, residuals, output head) with the 3D PMM's linear
// layers, norms and reshards of plexus-3d; dL/dγ is all-reduced over D as dW is.
// --comm-precision bf16 sends the PMM's partial sums in bf16 (Sec. V-B); the
// trainer cuts the next step's sample while this one trains (Sec. V-A).
//
// Per rank and step the wire bytes are plexus::epoch_collectives on the
// sample's blocks plus the ring all-reduce of every layer's dW block (and γ)
// over D.

#include <memory>

#include "algorithms/plexus-3d/plexus_3d.hpp"
#include "common/comm/process_grid.hpp"
#include "common/model/strategy.hpp"

namespace gcnlab {

class ScaleGnn4DStrategy final : public Strategy {
 public:
  ScaleGnn4DStrategy(const StrategyOptions& opts, const StrategyContext& ctx);

  std::string describe() const override;
  std::vector<int> grid() const override;
  std::vector<int> coords() const override;
  int partition_parts() const override { return pmm_->partition_parts(); }
  void setup(const Graph& g, const Architecture& arch) override;
  const Layout& layout(int l) const override { return pmm_->layout(l); }
  Block weight_block(int l) const override { return pmm_->weight_block(l); }
  void aggregate(int l, Direction d, ConstView in, View out) override { pmm_->aggregate(l, d, in, out); }
  void linear(int l, ConstView x, ConstView w, View z) override { pmm_->linear(l, x, w, z); }
  void linear_backward(int l, ConstView x, ConstView g, ConstView w, View dw, View* dx) override;
  BackwardOrder backward_order(int l) const override { return pmm_->backward_order(l); }
  std::string permutation() const override { return pmm_->permutation(); }
  std::unique_ptr<SampleCut> cut(Sample s) const override { return pmm_->cut(std::move(s)); }
  void restrict_to(const SampleCut* c) override;
  std::array<int, 2> data_parallel() const override { return {d_, grid_.coord("d")}; }
  ClassSplit class_split() override { return pmm_->class_split(); }
  bool counts_metrics() const override;
  bool first_copy(int l) const override;
  std::int64_t nnz_local() const override { return pmm_->nnz_local(); }
  // the PMM's, and (training steps, D > 1) the data-parallel all-reduces of dW and dL/dγ
  void aggregate_bytes(int l, Direction d, std::int64_t cols, ByteModel& m) const override {
    pmm_->aggregate_bytes(l, d, cols, m);
  }
  void linear_bytes(int l, ByteModel& m) const override { pmm_->linear_bytes(l, m); }
  void linear_backward_bytes(int l, bool dx, ByteModel& m) const override;
  void sum_over_columns_bytes(int l, ByteModel& m) const override { pmm_->sum_over_columns_bytes(l, m); }
  void sum_over_rows_bytes(int l, std::int64_t count, ByteModel& m) const override;
  void reshard_bytes(int from, int to, ByteModel& m) const override { pmm_->reshard_bytes(from, to, m); }
  void align_bytes(int l, Direction d, ByteModel& m) const override { pmm_->align_bytes(l, d, m); }
  MemoryNeed memory_need() const override { return pmm_->memory_need(); }
  void sum_over_columns(int l, std::span<float> per_row) override { pmm_->sum_over_columns(l, per_row); }
  void sum_over_rows(int l, View per_column) override;
  void reshard(int from, int to, ConstView x, View y, bool accumulate) override {
    pmm_->reshard(from, to, x, y, accumulate);
  }
  bool same_rows() const override { return false; }
  void align(int l, Direction d, ConstView in, View out) override { pmm_->align(l, d, in, out); }

 private:
  ScaleGnn4DStrategy(const std::pair<int, StrategyOptions>& split, const StrategyContext& ctx);
  Communicator& data_group() const { return grid_.along({"d"}); }

  int d_;
  ProcessGrid grid_;  // (d, pmm): the groups are consecutive ranks
  std::unique_ptr<Plexus3DStrategy> pmm_;
  std::vector<std::int64_t> dims_;
  bool sampled_ = false;
};

}  // namespace gcnlab
