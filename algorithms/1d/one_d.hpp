#pragma once
// 1d: CAGNET's 1D block-row algorithm (Tripathy et al. SC'20, Sec. IV-A, Alg. 1).
//
// Rank i holds block row i of Âᵀ and of Â (n_i rows, split into P column
// blocks Âᵀ_ij), block row i of every activation and gradient, and all of W.
//
// Forward, layer l (Alg. 1):            for j = 0..P-1:
//       rank j                               BROADCAST(X_j)            bcast_dense
//    [ X_j ] --bcast--> all ranks            T_i += Âᵀ_ij X_j          spmm
//                                         Z_i = T_i W                  gemm
// Backward (Sec. IV-A.3, IV-A.4):       for j: BROADCAST(G_j); U_i += Â_ij G_j
//                                         dW = ALLREDUCE(X_iᵀ U_i)     gemm + allreduce
//                                         dX_i = U_i Wᵀ                gemm
// (layer 0 without dX: dW = ALLREDUCE(T_iᵀ G_i) from the forward's T_i, no SpMM)
// Per rank and epoch (the paper's Tcomm with exact uneven blocks):
//   bcast_dense  Σ_l (n - n_i)(a_l + b_l) · 4 bytes   (CAGNET: (P-1)/P · n f words per SpMM)
//   allreduce    Σ_l 2 (P-1)/P · f_l f_{l+1} · 4 bytes
// a_l, b_l: the widths layer l aggregates at, forward and backward
// (common/model/convolution.hpp: a_l = f_l, or f_{l+1} transform-first; b_l =
// f_{l+1}, and 0 at layer 0 without --learn-features: dW_0 = T_0ᵀ G_0).
// mggcn-1d derives from it, replacing the rounds of row_spmm.
// --model gat: the attention's edge tensors on the whole block row, Z and the
// scores all-gathered, βᵀG and ds reduce-scattered (common/dist/
// gathered_attention.hpp has the bytes; --elide keeps the forward's gathered Z
// for the backward's SDDMM).

#include "common/dist/broadcast_spmm.hpp"
#include "common/dist/gathered_attention.hpp"
#include "common/model/strategy.hpp"

namespace gcnlab {

class OneDStrategy : public Strategy {
 public:
  OneDStrategy(const StrategyOptions& opts, const StrategyContext& ctx);

  std::string describe() const override;
  std::vector<int> grid() const override { return {world_.size()}; }
  std::vector<int> coords() const override { return {world_.rank()}; }
  int partition_parts() const override { return world_.size(); }
  void setup(const Graph& g, const Architecture& arch) override;
  const Layout& layout(int l) const override { return layouts_[l]; }
  Block weight_block(int l) const override { return {0, dims_[l], 0, wcols_[l]}; }
  void aggregate(int l, Direction d, ConstView in, View out) override;
  bool local_linear() const override { return true; }  // linear_add, linear_backward_add
  void linear(int l, ConstView x, ConstView w, View z) override;
  void linear_backward(int l, ConstView x, ConstView g, ConstView w, View dw, View* dx) override;
  std::int64_t nnz_local() const override { return nnz_local_; }
  void aggregate_bytes(int l, Direction d, std::int64_t cols, ByteModel& m) const override;
  void linear_backward_bytes(int l, bool dx, ByteModel& m) const override;
  void sum_over_rows(int l, View per_column) override;
  void sum_over_rows_bytes(int l, std::int64_t count, ByteModel& m) const override;
  MemoryNeed memory_need() const override;
  std::vector<ProductOrder> orders(int) const override { return orders_; }
  // Graph attention (--model gat; 1d's caps): common/dist/gathered_attention.hpp.
  EdgeAttention* edge_attention() override { return &attention_; }

 protected:
  // Ranks, block rows, this rank's rows and nonzeros.
  std::string layout_summary() const;
  // out = Âᵀ_i in (forward stages) or Â_i in (backward): P broadcast stages.
  virtual void row_spmm(const std::vector<BroadcastStage>& stages, ConstView in, View out);
  // How graph attention gathers its block row's columns: all-gather and reduce-scatter.
  virtual std::unique_ptr<ColumnExchange> attention_exchange(std::int64_t widest);

  Communicator& world_;
  Backend& backend_;
  Ledger& ledger_;
  std::vector<std::int64_t> dims_;
  std::vector<std::int64_t> wcols_;  // W_l's columns (Architecture::weight_cols)
  std::string algo_;                   // --algo (1d, or a strategy built on it)
  std::string order_spec_;             // --order
  std::vector<ProductOrder> orders_;   // per layer, from order_spec_ and dims (setup)
  std::vector<std::int64_t> offsets_;  // block rows: rank j owns [offsets_[j], offsets_[j+1])
  std::vector<Layout> layouts_;
  bool asymmetric_ = false;
  std::int64_t nnz_local_ = 0;
  BlockRowStages stages_;     // Âᵀ_ij and Â_ij, j = 0..P-1; stage j: root j
  Buffer<float> stage_;       // received block: max_j n_j x max f
  bool elide_ = true;               // --elide (graph attention)
  GatheredAttention attention_;     // GAT's edge tensors on the block row (--model gat)
};

}  // namespace gcnlab
