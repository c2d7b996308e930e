#pragma once
// mggcn-1d: MG-GCN (Balın, Sancak, Çatalyürek, ICPP'22), CAGNET's 1D block
// rows with three changes that the paper measures:
//
// 1. Overlap (Sec. 4.3). The P-round SpMM keeps the broadcast of tile s+1 in
//    flight while tile s is multiplied, into the second of two broadcast
//    buffers BC1 / BC2:
//
//        post bcast(0) -> BC1
//        round s:  wait bcast(s);  post bcast(s+1) -> BC[(s+1) mod 2];  Y += Âᵀ_is · BC[s mod 2]
//
//    bcast(s+1) may reuse the buffer round s-1 read because round s-1's SpMM
//    has finished when it is posted (CPU: the SpMM returned; CUDA: the
//    communication stream waits for the compute stream's event, as the paper's
//    stream 1 waits for stream 0). On the CPU, OpenMPI's shared-memory
//    nonblocking broadcasts advance only inside MPI calls, so the SpMM polls
//    the broadcast in flight between its row chunks (Backend::spmm's progress).
//    --overlap off runs CAGNET's blocking rounds on the same buffers.
// 2. Buffer reuse (Sec. 4.2, Fig. 1 and 4): ActivationPlan::shared, one buffer
//    per layer plus BC1, BC2 and HW (the product buffer between SpMM and GEMM):
//    L + 3 activation-sized buffers in all (+1 for a recomputed dropout input).
// 3. A random vertex permutation for load balance (Sec. 5.2): the default
//    --partitioner is `random` (contiguous equal blocks of a seeded random order).
//
// The products and the bytes are 1d's (the same broadcasts; CAGNET's
// (P-1)/P · n f words per SpMM); the product order by width (Sec. 4.4) is --order.

#include <array>

#include "algorithms/1d/one_d.hpp"

namespace gcnlab {

class MgGcn1DStrategy final : public OneDStrategy {
 public:
  MgGcn1DStrategy(const StrategyOptions& opts, const StrategyContext& ctx);

  std::string describe() const override;
  void setup(const Graph& g, const Architecture& arch) override;
  MemoryNeed memory_need() const override;
  std::string default_partitioner() const override { return "random"; }
  ActivationPlan activation_plan() const override { return ActivationPlan::shared; }

 protected:
  void row_spmm(const std::vector<BroadcastStage>& stages, ConstView in, View out) override;

 private:
  bool overlap_;
  Buffer<float> stage2_;  // BC2: the round in flight (BC1 is 1d's stage_)
};

}  // namespace gcnlab
