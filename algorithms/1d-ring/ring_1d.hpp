#pragma once
// 1d-ring: CAGNET's 1D block rows (Tripathy et al. SC'20, Sec. IV-A, Alg. 1)
// with the dense blocks passed around a ring instead of broadcast: the pattern
// of NCCL's ring collectives (and of Cannon-style shifts), with the same volume.
//
// Rank i holds block row i of Âᵀ (and of Â unless Â = Âᵀ), split into P column
// blocks Âᵀ_ij, block row i of every activation and gradient, and all of W.
// For an SpMM T_i = Σ_j Âᵀ_ij X_j, P steps; at step s rank i holds
// X_{(i-s) mod P}:
//
//    step s:   send the held block to i+1, receive X_{(i-s-1) mod P} from i-1   (p2p, nonblocking)
//              T_i += Âᵀ_{i,(i-s)} X_{(i-s)}                                      (spmm, while it travels)
//              wait; the received block is held next
//
// the last step sends nothing. Two receive buffers alternate: the block being
// sent is never the one being received. The rest of the layer is 1d's:
// Z_i = T_i W; backward U_i = Σ_j Â_ij G_j by the same ring, dW = ALLREDUCE(X_iᵀ U_i),
// dX_i = U_i Wᵀ (common/dist/block_rows.hpp).
//
// Per rank and epoch, exactly (every other rank's block arrives once per SpMM):
//   p2p        Σ_l Σ_{j≠i} n_j (a_l + b_l) · 4 bytes   (a_l, b_l: the widths of 1d's formula)
//   allreduce  Σ_l 2 (P-1)/P · f_l f_{l+1} · 4 bytes
// i.e. 1d's received volume, in P-1 point-to-point steps of one block each
// instead of P broadcasts.
// --model gat (common/dist/gathered_attention.hpp): the scores and Z gathered
// around the same ring (P-1 steps, each rank's block passed on: p2p
// (n - n_i) w · 4 at width w), and βᵀG and ds returned by a ring
// reduce-scatter: block b's partial sum starts at rank b+1, each rank adds its
// own and passes it right, rank b adds its own last; rank i receives every
// block's but block i-1's: p2p (n - n_{i-1}) w · 4.

#include "algorithms/1d/one_d.hpp"

namespace gcnlab {

// Graph attention's exchange around the ring (above): every position.
class RingColumns final : public ColumnExchange {
 public:
  RingColumns(Backend& backend, Communicator& group, std::vector<std::int64_t> offsets, std::int64_t widest);
  const std::vector<std::int64_t>& positions() const override { return positions_; }
  void gather(ConstView local, View all) override;
  void scatter_sum(View partial, View local) override;
  void gather_bytes(std::int64_t width, ByteModel& m) const override;
  void scatter_sum_bytes(std::int64_t width, ByteModel& m) const override;
  double bytes() const override { return bytes_of<float>(arriving_.size()); }

 private:
  std::int64_t rows_of(int r) const { return offsets_[r + 1] - offsets_[r]; }

  Backend* backend_;
  Communicator* group_;
  std::vector<std::int64_t> offsets_, positions_;
  Buffer<float> arriving_;  // the partial sum that arrives in scatter_sum: largest block x widest
};

class Ring1DStrategy final : public OneDStrategy {
 public:
  using OneDStrategy::OneDStrategy;

  std::string describe() const override;
  void setup(const Graph& g, const Architecture& arch) override;
  void aggregate_bytes(int l, Direction d, std::int64_t cols, ByteModel& m) const override;
  MemoryNeed memory_need() const override;

 private:
  // out = Σ_j A_j in_j over the ring: `stages` as 1d's (stage j: the block of rank j's rows).
  void row_spmm(const std::vector<BroadcastStage>& stages, ConstView in, View out) override;
  // Bytes this rank receives in one ring SpMM of width f.
  double ring_bytes(std::int64_t f) const;
  std::unique_ptr<ColumnExchange> attention_exchange(std::int64_t widest) override;

  Buffer<float> second_;  // the other receive buffer (1d's stage_ is the first)
};

}  // namespace gcnlab
