#pragma once
// Graph attention (Primitives::attention; GAT, models/gat) on a sparse block
// of Âᵀ: whole rows — every in-edge of its targets, so that each target's
// softmax is local (serial's whole graph, a block-row strategy's block row) —
// or a part of each row, the rest on other ranks (1.5d's column chunk): then
// `reduce_rows` completes the per-row values (the softmax's max and sum, the
// backward's D_i and dd_i) over the ranks that share the rows. Per attention layer it
// keeps α (and β = dropout(α) where attention dropout is on), nnz x heads
// floats in the block's edge order, from the forward pass to the backward;
// one work tensor of the widest layer serves every layer's backward.
//
//   forward   e = LeakyReLU(s_j + d_i); α = e's row softmax (max-subtracted); β = dropout(α)
//   aggregate out_i = Σ_j β_ij Z_j (the block)
//   backward  dZ_j = Σ_i β_ij G_i (the transpose, reading β through the
//             transpose's permutation: no atomics, the same bits on every run)
//             and dβ = SDDMM(G, Z), in one pass over the transpose
//             (Backend::spmm_sddmm_edges); dα = dropout'(dβ); D_i = Σ_j α_ij dα_ij;
//             dê = α (dα - D_i) LeakyReLU'; dd_i = Σ_j dê_ij; ds_j = Σ_i dê_ij (transpose)
//
// Timed as spmm (the forward's aggregation), sddmm (the backward's βᵀG and
// SDDMM) and edge_softmax (scores, softmax, dropout and their backward, the
// row sums).

#include <cstdint>
#include <functional>
#include <vector>

#include "common/model/strategy.hpp"

namespace gcnlab {

// The transpose of a's pattern (values 0) and perm: its edge k is a's edge perm[k].
HostCsr transpose_pattern(const HostCsr& a, std::vector<std::int64_t>& perm);

class RowAttention {
 public:
  RowAttention() = default;
  // `block`: the forward block on the device (rows: targets, columns: sources),
  // `pattern` its host copy; `row_ids`, `col_ids`: the global vertex ids of its
  // rows and columns (the attention dropout's keys).
  // `reduce_rows`: combines a rows x heads matrix of per-row partial values
  // with the other ranks holding these rows (empty: the block holds whole rows).
  // `col0`: per layer, the first of the output's feature columns that this
  // rank's activations hold (2d, split-3d split them; empty: all of them, from 0).
  // Where a rank holds part of a head's columns its SDDMM dots, and so its ds
  // and dd, are partial: the caller completes them (they are linear in dβ).
  using RowReduce = std::function<void(View, ReduceOp)>;
  RowAttention(Backend& backend, Ledger& ledger, const Architecture& a, const Csr& block, const HostCsr& pattern,
               std::span<const std::int64_t> row_ids, std::span<const std::int64_t> col_ids,
               RowReduce reduce_rows = {}, std::span<const std::int64_t> col0 = {});

  void forward(int l, const Attention& a);
  void aggregate(int l, ConstView z, View out);
  // dz, ds: the block's columns (partial sums where other ranks hold more of their rows).
  void backward(int l, const Attention& a, ConstView g, ConstView z, View dz, View ds, View dd);
  // Backend bytes of the transpose, the ids, the edge tensors and the row vectors.
  double bytes() const;

 private:
  struct Layer {
    int heads = 0;
    ew::HeadSplit split{0, 0};     // its heads over the local columns of Z (head_split)
    Buffer<float> alpha, beta;     // beta: dropout(alpha) (Architecture::attention_dropout), written when the step's is on
    bool dropped = false;          // this step's β differs from α
    const float* values() const { return dropped ? beta.data() : alpha.data(); }
  };

  void reduce_rows(float* values, int heads, ReduceOp op);  // a no-op on whole rows

  Backend* backend_ = nullptr;
  Ledger* ledger_ = nullptr;
  const Csr* block_ = nullptr;
  RowReduce reduce_rows_;
  float slope_ = 0.2f;
  Csr transposed_;
  Buffer<std::int64_t> perm_, row_ids_, col_ids_;
  std::vector<Layer> layers_;
  Buffer<float> work_;           // the backward's dβ -> dê (nnz x widest heads)
  Buffer<float> row_a_, row_b_;  // per-row max / sum / D (rows x widest heads)
};

}  // namespace gcnlab
