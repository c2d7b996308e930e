#pragma once
// The broadcast-stage SpMM shared by CAGNET's 1D (Alg. 1) and 1.5D (Alg. 2)
// algorithms: in each stage one rank of `group` broadcasts its block of the
// dense operand and every rank multiplies it by its matching sparse block.
//
//   stage s, root r_s:     M_{r_s} --bcast over group--> all      (bcast_dense)
//                          Y += A_s · M_{r_s}                      (spmm)
//
// The root multiplies its own rows in place (no copy); the others receive
// into `scratch`, sized for the largest block once at setup.

#include <vector>

#include "common/backend/backend.hpp"
#include "common/comm/communicator.hpp"
#include "common/data/graph.hpp"
#include "common/model/strategy.hpp"

namespace gcnlab {

struct BroadcastStage {
  int root;               // rank in the group that owns the dense block
  std::int64_t rows;      // rows of the dense block
  const Csr* block;       // this rank's sparse block for the stage (block->cols == rows)
};

// The stages of block row [r0, r1) of Âᵀ (forward) and Â (backward) over the
// column blocks k in [k0, k1) of `offsets`; stage k's root is group rank k
// (1d: all blocks over the world; 1.5d: one column's chunk over the column).
struct BlockRowStages {
  std::vector<Csr> forward_blocks, backward_blocks;  // backward_blocks empty when Â = Âᵀ (Graph::symmetric)
  std::vector<BroadcastStage> forward, backward;     // point into the blocks
  std::int64_t nnz = 0;                              // nonzeros of the forward blocks
  double bytes() const;                              // storage of all blocks (csr_bytes)
};
BlockRowStages block_row_stages(Backend& backend, const Graph& g, const std::vector<std::int64_t>& offsets,
                                std::int64_t r0, std::int64_t r1, int k0, int k1);

// Y = Σ_s A_s · M_{root_s}; `local` is this rank's own dense block (sent when it is the root).
// With no stages Y is zeroed.
void broadcast_spmm(Communicator& group, Backend& backend, const std::vector<BroadcastStage>& stages,
                    ConstView local, View y, Buffer<float>& scratch);

// 1d / 1.5d memory: the stages' blocks and a receive block of the largest
// block row at the widest f.
MemoryNeed broadcast_spmm_memory(const BlockRowStages& stages, const std::vector<std::int64_t>& offsets,
                                 const std::vector<std::int64_t>& dims);

// Wire bytes this rank receives in broadcast_spmm for a dense width f.
double broadcast_spmm_bytes(const Communicator& group, const std::vector<BroadcastStage>& stages, std::int64_t f);

}  // namespace gcnlab
