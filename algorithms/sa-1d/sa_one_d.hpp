#pragma once
// sa-1d: the sparsity-aware 1D algorithm (Mukhopadhyay et al. ICPP'24,
// Sec. 4.1, Alg. 1), on block rows of any sizes (a partitioner's parts).
//
// Setup: rank i computes NnzCols(i, j) — the nonzero columns of Âᵀ_ij, i.e.
// the rows of H_j it needs — and sends each list to rank j once (alltoall,
// counted in the setup phase). Âᵀ_ij's columns are remapped onto the compact
// receive buffer.
// Each distributed SpMM:
//   rank j: pack H_j[NnzCols(i, j)] for every i              pack
//   ALLTOALLV of the packed rows                               alltoall
//   T_i = Âᵀ_ii H_i + Âᵀ_i,remote · [received rows]            spmm (two local SpMMs)
//   Z_i = T_i W                                                 gemm
// Backward: the same with Â and its own lists on G (unless Â = Âᵀ, Graph::symmetric);
// dW = ALLREDUCE(X_iᵀ U_i); dX_i = U_i Wᵀ.
// Per rank and epoch: alltoall Σ_l Σ_{j≠i} (|NnzCols(i,j)| a_l + |NnzCols'(i,j)| b_l) · 4
// (a_l, b_l: the aggregation widths of 1d's formula)
// (NnzCols' for Â), allreduce Σ_l 2(P-1)/P f_l f_{l+1} · 4. A block-diagonal
// graph moves nothing.
// --model gat: the attention's edge tensors on the whole block row; the
// scores and Z of its needed columns exchanged as the SpMM's rows are, βᵀG
// and ds returned to the owners by the reverse exchange (common/dist/
// column_exchange.hpp; bytes in common/dist/gathered_attention.hpp; --elide
// keeps the forward's received Z for the backward's SDDMM).

#include "common/dist/gathered_attention.hpp"
#include "common/model/strategy.hpp"

namespace gcnlab {

class SaOneDStrategy final : public Strategy {
 public:
  SaOneDStrategy(const StrategyOptions& opts, const StrategyContext& ctx);

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
  // Graph attention (--model gat; sa-1d's caps): common/dist/gathered_attention.hpp.
  EdgeAttention* edge_attention() override { return &attention_; }

 private:
  // One direction (Âᵀ forward, Â backward): what to send, what arrives, the local blocks.
  struct Exchange {
    RowExchange rows;                // counts and displacements in rows (common/dist/needed_rows.hpp)
    Buffer<std::int64_t> send_rows;  // rows.send_rows on the backend
    Csr diagonal, remote;            // Â(ᵀ)_ii and the remapped off-diagonal part
  };
  // `rows`: block row A_i (global columns), `need`: its NnzCols (needed_rows).
  Exchange build(const HostCsr& rows, const NeededRows& need);
  void spmm(const Exchange& e, ConstView x, View y);

  Communicator& world_;
  Backend& backend_;
  Ledger& ledger_;
  std::vector<std::int64_t> dims_, offsets_;
  std::vector<std::int64_t> wcols_;  // W_l's columns (Architecture::weight_cols)
  std::string order_spec_;             // --order
  std::vector<ProductOrder> orders_;   // per layer, from order_spec_ and dims (setup)
  std::vector<Layout> layouts_;
  bool asymmetric_ = false;
  std::int64_t nnz_local_ = 0;
  Exchange fwd_, bwd_;  // bwd_ unused when Â = Âᵀ (Graph::symmetric)
  Buffer<float> send_, recv_;
  bool elide_ = true;             // --elide (graph attention)
  GatheredAttention attention_;   // GAT's edge tensors on the block row (--model gat)
};

}  // namespace gcnlab
