#pragma once
// sa-1.5d: the sparsity-aware 1.5D algorithm (Mukhopadhyay et al. ICPP'24,
// Sec. 4.2, Alg. 2) on the 1.5D layout (common/dist/replicated_rows.hpp):
// R x c ranks, block rows (a partitioner's parts) replicated along process rows.
//
// Setup: rank (i, j) sends NnzCols(i, k) to the root (k, j) of each of its
// column's stages k (alltoall inside the column, setup phase).
// Stage k of process column j (Alg. 2 lines 5-13):
//   root (k, j): ISend H_k[NnzCols(l, k)] to every (l, j)        pack + p2p
//   (i, j):      Recv  H_k[NnzCols(i, k)] from (k, j)              p2p
//                T_i^(j) += Âᵀ_ik (remapped onto the received rows)  spmm
// then T_i = ALLREDUCE(T_i^(j), P(i, :)) and Z_i = T_i W (line 15-16).
// Backward: the same with Â on G; dW = ALLREDUCE(X_iᵀ U_i, P(:, j)); dX_i = U_i Wᵀ.
// Per rank and epoch: p2p Σ_l Σ_{k in chunk j, k≠i} (|NnzCols(i,k)| a_l + |NnzCols'(i,k)| b_l)·4,
// allreduce as 1.5d: Σ_l [2(c-1)/c n_i (a_l + b_l) + 2(R-1)/R f_l f_{l+1}]·4 (a_l, b_l: 1d's widths).
//
// --model gat (SaChunkColumns): 1.5d's attention (algorithms/1.5d: the row
// softmax completed over P(i, :)) on the compacted block Âᵀ[R_i, K_j]: the
// scores and Z of the NnzCols rows arrive by the stages' point-to-point
// messages (all of the chunk's stages at once), p2p Σ_{k∈chunk j, k≠i}
// |NnzCols(i,k)| w · 4 at width w; βᵀG and ds return to each stage's root by
// the reverse messages, p2p Σ_l |NnzCols(l,i)| w · 4 on the column whose
// chunk holds i, summed there in column-rank order and broadcast along the row.

#include <utility>

#include "common/comm/process_grid.hpp"
#include "common/dist/gathered_attention.hpp"
#include "common/dist/needed_rows.hpp"
#include "common/model/strategy.hpp"

namespace gcnlab {

// Graph attention's exchange on sa-1.5d's layout (above).
class SaChunkColumns final : public ChunkExchange {
 public:
  // k0, k1: this column's stages; need: NnzCols(i, k) of block row i; requests:
  // what the column's ranks need of block row i (exchange_requests).
  SaChunkColumns(Backend& backend, Communicator& row, Communicator& col, const std::vector<std::int64_t>& offsets,
                 int k0, int k1, const NeededRows& need, const RowRequests& requests, std::int64_t widest);
  void gather(ConstView local, View all) override;
  void scatter_sum(View partial, View local) override;
  void gather_bytes(std::int64_t width, ByteModel& m) const override;
  void scatter_sum_bytes(std::int64_t width, ByteModel& m) const override;
  double bytes() const override;

 private:
  // The chunk's messages at width w, the same both ways: `stages`, the rows of
  // each stage k != i in `gathered` (with root k); `requests`, the rows of
  // block row i each column rank l needs, in sent_ (with l).
  struct Messages {
    std::vector<Message<float>> stages, requests;
  };
  Messages messages(float* gathered, std::int64_t w);

  std::vector<std::int64_t> segment_;  // first gathered row of each stage k (index k - k0), its rows
  std::vector<std::int64_t> rows_;
  std::vector<std::int64_t> send_counts_;  // i in the chunk: rows of block row i each column rank needs
  Buffer<std::int64_t> send_rows_;         // ... those rows, grouped by column rank
  Csr owners_;                             // scatter_sum's fixed-order sum at the root
  Buffer<float> sent_;                     // packed rows out / partial sums in: Σ send_counts_ x widest
};

class SaOneHalfDStrategy final : public Strategy {
 public:
  SaOneHalfDStrategy(const StrategyOptions& opts, const StrategyContext& ctx);

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
  // Graph attention (--model gat; sa-1.5d's caps): SaChunkColumns above.
  EdgeAttention* edge_attention() override { return &attention_; }

 private:
  struct Stage {
    int k;                                   // block row whose rows move (root: rank k of the column)
    Csr block;                               // Â(ᵀ)_ik, columns remapped onto the received rows (plain if k == i)
    std::int64_t recv_rows = 0;              // |NnzCols(i, k)| (0 when k == i)
    std::vector<std::int64_t> send_counts;   // root only: rows for each column rank l
    Buffer<std::int64_t> send_rows;          // root only: local rows to pack, grouped by l
    std::int64_t sent_rows() const;
  };
  // `rows`: block row i of Â(ᵀ) (global columns), `need` its NnzCols; the requests to this rank as a root.
  std::vector<Stage> build(const HostCsr& rows, const NeededRows& need, RowRequests& requests);
  // The most rows one stage sends and receives (the sizes of send_ and recv_).
  std::pair<std::int64_t, std::int64_t> largest_exchange() const;
  void spmm(std::vector<Stage>& stages, ConstView x, View y);

  ProcessGrid grid_;
  Communicator& row_;  // P(i, :)
  Communicator& col_;  // P(:, j)
  Backend& backend_;
  Ledger& ledger_;
  std::vector<std::int64_t> dims_, offsets_;
  std::vector<std::int64_t> wcols_;  // W_l's columns (Architecture::weight_cols)
  std::string order_spec_;             // --order
  std::vector<ProductOrder> orders_;   // per layer, from order_spec_ and dims (setup)
  std::vector<Layout> layouts_;
  bool asymmetric_ = false;
  std::int64_t nnz_local_ = 0;
  std::vector<Stage> fwd_, bwd_;
  Buffer<float> send_, recv_;
  bool elide_ = true;            // --elide (graph attention)
  GatheredAttention attention_;  // GAT's edge tensors on Âᵀ[R_i, K_j] (--model gat)
};

}  // namespace gcnlab
