#pragma once
// 1.5d: CAGNET's 1.5D block-row algorithm (Tripathy et al. SC'20, Sec. IV-B, Alg. 2).
//
// P = R x c processes, R = P/c. Âᵀ, Â and the activations are cut into R
// block rows; block row i is replicated on the c processes of process row
// P(i, :). W is replicated. The R stages of a distributed SpMM are split
// among the c process columns (R/c each, the remainder to the last column,
// as CAGNET does); process column j runs its stages as broadcasts down the
// column, then each process row sums its c partial products.
//
//            process column j                       process row i
//   H_k (k in chunk j) --bcast P(:, j)--> all      T_i = ALLREDUCE(T_i^(j), P(i, :))
//   T_i^(j) += Âᵀ_ik H_k                           Z_i = T_i W
//
// Backward: U_i = ALLREDUCE(Σ_{k in chunk j} Â_ik G_k, P(i, :));
//           dW = ALLREDUCE(X_iᵀ U_i, P(:, j))  (one block row per process row);
//           dX_i = U_i Wᵀ.
// Per rank and epoch:
//   bcast_dense  Σ_l Σ_{k in chunk j, k != i} n_k (a_l + b_l) · 4
//   allreduce    Σ_l [2(c-1)/c n_i (a_l + b_l) + 2(R-1)/R f_l f_{l+1}] · 4
// a_l, b_l: the widths layer l aggregates at, forward and backward
// (common/model/convolution.hpp: a_l = f_l, or f_{l+1} transform-first; b_l =
// f_{l+1}, and 0 at layer 0 without --learn-features: dW_0 = T_0ᵀ G_0).
// CAGNET's Tcomm per SpMM: nf/c + nfc/P words; its all-reduce term nfc/P
// counts n_i f = nfc/P once, the ring convention charges 2(c-1)/c times that.
// c = 1 is exactly the 1d algorithm, byte for byte.
//
// --model gat (common/dist/gathered_attention.hpp): P(i, j) keeps the edge
// tensors of Âᵀ[R_i, K_j], K_j = the block rows of its column's stages, so
// each target's in-edges are split over the c ranks of P(i, :) (ChunkColumns):
//   scores s, Z    the stages' broadcasts down P(:, j), once per layer    bcast_dense  Σ_{k∈chunk j, k≠i} n_k w · 4
//   row max, sum   of the softmax (α's rows complete everywhere), the
//                  partial out_i, and the backward's D_i and dd_i:
//                  ALL-REDUCE over P(i, :)                               allreduce    2(c-1)/c n_i w · 4 each
//   βᵀG, ds        each stage's partial sums REDUCED to its root down
//                  P(:, j) (one reduce-scatter with the chunk's counts),
//                  then BROADCAST over P(i, :) from the column whose chunk
//                  holds i                                               reduce_scatter n_i w · 4 on
//                                                                        that column, bcast_dense n_i w · 4
//                                                                        on the others
// per attention layer of width F and H heads: gathers at H and F (+ F
// without --elide), reduce_rows at H twice, F, then H twice, scatter-sums
// at F and H. c = 1: 1d's volume, as broadcasts and reductions.

#include "common/comm/process_grid.hpp"
#include "common/model/strategy.hpp"
#include "common/dist/broadcast_spmm.hpp"
#include "common/dist/gathered_attention.hpp"
#include "common/dist/replicated_rows.hpp"

namespace gcnlab {

// Graph attention's exchange on the 1.5D layout (above): the columns of K_j.
// The row split's all-reduces and the row broadcast: common/dist/column_exchange.hpp's ChunkExchange.
class ChunkColumns final : public ChunkExchange {
 public:
  // k0, k1: this column's stages.
  ChunkColumns(Backend& backend, Communicator& row, Communicator& col, const std::vector<std::int64_t>& offsets,
               int k0, int k1);
  void gather(ConstView local, View all) override;
  void scatter_sum(View partial, View local) override;
  void gather_bytes(std::int64_t width, ByteModel& m) const override;
  void scatter_sum_bytes(std::int64_t width, ByteModel& m) const override;
};

class OneHalfDStrategy final : public Strategy {
 public:
  OneHalfDStrategy(const StrategyOptions& opts, const StrategyContext& ctx);

  std::string describe() const override;
  std::vector<int> grid() const override { return grid_.dims(); }
  std::vector<int> coords() const override { return grid_.coords(); }
  int partition_parts() const override { return grid_.dim("r"); }
  void setup(const Graph& g, const Architecture& arch) override;
  const Layout& layout(int l) const override { return layouts_[l]; }
  Block weight_block(int l) const override { return {0, dims_[l], 0, wcols_[l]}; }
  void aggregate(int l, Direction d, ConstView in, View out) override;
  bool local_linear() const override { return true; }  // linear_add, linear_backward_add
  void linear(int l, ConstView x, ConstView w, View z) override;
  void linear_backward(int l, ConstView x, ConstView g, ConstView w, View dw, View* dx) override;
  bool counts_metrics() const override { return grid_.coord("c") == 0; }
  bool first_copy(int) const override { return grid_.coord("c") == 0; }  // block row i on P(i, :)
  std::int64_t nnz_local() const override { return nnz_local_; }
  void aggregate_bytes(int l, Direction d, std::int64_t cols, ByteModel& m) const override;
  void linear_backward_bytes(int l, bool dx, ByteModel& m) const override;
  void sum_over_rows(int l, View per_column) override;
  void sum_over_rows_bytes(int l, std::int64_t count, ByteModel& m) const override;
  MemoryNeed memory_need() const override;
  std::vector<ProductOrder> orders(int) const override { return orders_; }
  // Graph attention (--model gat; 1.5d's caps): ChunkColumns above.
  EdgeAttention* edge_attention() override { return &attention_; }

 private:
  ProcessGrid grid_;
  Communicator& row_;  // P(i, :), c ranks
  Communicator& col_;  // P(:, j), R ranks
  Backend& backend_;
  Ledger& ledger_;
  std::vector<std::int64_t> dims_;
  std::vector<std::int64_t> wcols_;  // W_l's columns (Architecture::weight_cols)
  std::string order_spec_;             // --order
  std::vector<ProductOrder> orders_;   // per layer, from order_spec_ and dims (setup)
  std::vector<std::int64_t> offsets_;  // R block rows
  std::vector<Layout> layouts_;
  bool asymmetric_ = false;
  std::int64_t nnz_local_ = 0;
  BlockRowStages stages_;  // the blocks of this column's stages
  Buffer<float> stage_;
  bool elide_ = true;            // --elide (graph attention)
  GatheredAttention attention_;  // GAT's edge tensors on Âᵀ[R_i, K_j] (--model gat)
};

}  // namespace gcnlab
