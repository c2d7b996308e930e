#pragma once
// serial: the oracle. One rank holds Âᵀ, Â, every activation and W; each
// primitive is one SpMM or GEMM, written as plainly as possible:
//   aggregate        out = Âᵀ in  /  Â in  (aggregate_plus: + a term on out's rows, in the SpMM's output pass)
//   linear           Z = X W
//   linear_backward  dW = Xᵀ G,  dX = G Wᵀ
// With --batch-size it is the mini-batch oracle of scalegnn-4d: each step's
// induced, rescaled subgraph (common/data/sampling.hpp) is cut out of the
// whole Âᵀ, kept on the host for that, and multiplied the same way. With
// --dp-groups D it draws the samples of D data-parallel groups per step and
// trains on the block-diagonal union of their subgraphs: one loss over all
// of them and dW summed over them is what scalegnn-4d's D groups compute.
// With --model scalegnn every layout is the same: RMSNorm needs no reduction
// and the residual is a copy. With --model gat the attention's edge tensors
// lie on Âᵀ, whose rows are whole (common/dist/row_attention.hpp).

#include "common/dist/row_attention.hpp"
#include "common/model/strategy.hpp"

namespace gcnlab {

class SerialStrategy final : public Strategy {
 public:
  SerialStrategy(const StrategyOptions& opts, const StrategyContext& ctx);

  std::string describe() const override;
  std::vector<int> grid() const override { return {1}; }
  std::vector<int> coords() const override { return {0}; }
  int partition_parts() const override { return 1; }
  std::array<int, 2> data_parallel() const override { return {dp_groups_, 0}; }
  void setup(const Graph& g, const Architecture& arch) override;
  const Layout& layout(int l) const override { return sampled_ ? sample_layouts_[l] : layouts_[l]; }
  Block weight_block(int l) const override { return {0, dims_[l], 0, wcols_[l]}; }
  void aggregate(int l, Direction d, ConstView in, View out) override;
  void aggregate_plus(int l, Direction d, ConstView in, const RowTerm& t, View out) override;
  bool local_linear() const override { return true; }  // linear_add, linear_backward_add
  void linear(int l, ConstView x, ConstView w, View z) override;
  void linear_backward(int l, ConstView x, ConstView g, ConstView w, View dw, View* dx) override;
  std::unique_ptr<SampleCut> cut(Sample s) const override;
  void restrict_to(const SampleCut* c) override;
  std::int64_t nnz_local() const override { return a_hat_t_.nnz; }
  void aggregate_bytes(int, Direction, std::int64_t, ByteModel&) const override {}  // one rank moves nothing
  void linear_backward_bytes(int, bool, ByteModel&) const override {}
  MemoryNeed memory_need() const override;
  std::vector<ProductOrder> orders(int) const override { return orders_; }
  void sum_over_columns(int, std::span<float>) override {}
  void sum_over_rows(int, View) override {}
  void reshard(int from, int to, ConstView x, View y, bool accumulate) override;
  void attention(int l, const Attention& a) override { attention_.forward(l, a); }
  void aggregate_attention(int l, ConstView z, View out) override { attention_.aggregate(l, z, out); }
  void attention_backward(int l, const Attention& a, ConstView g, ConstView z, View dz, View ds, View dd) override {
    attention_.backward(l, a, g, z, dz, ds, dd);
  }
  void attention_bytes(int, ByteModel&) const override {}
  void aggregate_attention_bytes(int, std::int64_t, ByteModel&) const override {}
  void attention_backward_bytes(int, ByteModel&) const override {}

 private:
  Backend& backend_;
  Ledger& ledger_;
  std::vector<std::int64_t> dims_;
  std::vector<std::int64_t> wcols_;  // W_l's columns (Architecture::weight_cols)
  std::string order_spec_;             // --order
  std::vector<ProductOrder> orders_;   // per layer, from order_spec_ and dims (setup)
  std::vector<Layout> layouts_;
  std::int64_t n_ = 0;
  bool asymmetric_ = false;
  Csr a_hat_t_, a_hat_;  // a_hat_ unused (empty) when Â = Âᵀ
  bool keep_host_;       // --batch-size: samples are cut out of the host copies
  int dp_groups_;        // --dp-groups: the groups whose samples a step unites
  HostCsr host_t_, host_;
  bool sampled_ = false;
  std::vector<Layout> sample_layouts_;
  Csr sample_t_, sample_;  // the current sample's Âᵀ_S and Â_S (Alg. 1 lines 2-3)
  RowAttention attention_;  // GAT's edge tensors on Âᵀ (whole rows: every softmax is local)

  const Csr& operand(Direction d) const;  // Âᵀ (forward) or Â, of the sample when one is installed
};

}  // namespace gcnlab
