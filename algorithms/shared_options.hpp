#pragma once
// Options that more than one strategy declares, written once: an option name
// means the same thing wherever it appears (the registry checks it).

#include "algorithms/registry.hpp"

namespace gcnlab {

// The 1.5D layout's replication factor (1.5d, sa-1.5d; common/dist/replicated_rows.hpp).
inline StrategyOption replication_option() {
  return {"replication", "c", StrategyOption::Kind::integer, "0", {}, 1, "replication factor (instead of --grid)"};
}

// Graph attention's communication eliding (1d, 1d-ring, mggcn-1d, sa-1d, 1.5d, sa-1.5d, 2d, split-3d;
// common/dist/gathered_attention.hpp; plexus-3d: algorithms/plexus-3d/attention.hpp).
inline StrategyOption elide_option() {
  return {"elide", "MODE", StrategyOption::Kind::on_off, "on", {"on", "off"}, 0,
          "graph attention: the backward's SDDMM reuses the Z gathered in the forward (default on; off: gathered "
          "again, one buffer for all layers)"};
}

// The SUMMA layers of 2d and split-3d (algorithms/split-3d/split_summa.hpp).
inline std::vector<StrategyOption> summa_options() {
  return {
      {"block", "b", StrategyOption::Kind::integer, "0", {}, 0, "SUMMA blocking, at most b vertices per stage (0: none)"},
      {"dw-reduce", "MODE", StrategyOption::Kind::text, "summa", {"summa", "allreduce"}, 0,
       "dW by CAGNET's dense SUMMA + all-gather (summa, Eq. 4) or one all-reduce of the f x f matrix over all ranks "
       "(default summa)"},
      {"softmax", "MODE", StrategyOption::Kind::text, "allgather", {"allgather", "allreduce"}, 0,
       "the logits' rows all-gathered over the process row (CAGNET, Eq. 2) or their row max and sum all-reduced "
       "(default allgather)"},
      elide_option(),
  };
}

// The 3D PMM of plexus-3d and scalegnn-4d (algorithms/plexus-3d).
inline std::vector<StrategyOption> pmm_options() {
  return {
      {"permutation", "P", StrategyOption::Kind::text, "", {}, 0,
       "vertex permutation for load balance: none | single | double (uniformly random, Plexus Sec. 5.1) | "
       "single-balanced | double-balanced (gcnlab's weight-balanced bisection); plexus-3d's default is the best the "
       "model allows: double, single for gat, none for sage, gin, scalegnn and mini-batches; scalegnn-4d: none"},
      {"agg-blocks", "K", StrategyOption::Kind::integer, "1", {}, 1,
       "blocked aggregation, K row blocks each all-reduced nonblocking while the next multiplies (1: off)"},
      {"gemm-order", "ORDER", StrategyOption::Kind::text, "auto", {"auto", "direct", "reversed"}, 0,
       "dW = Hᵀ dQ or (dQᵀ H)ᵀ (Plexus Sec. 5.3); auto: the backend's fixed rule, reversed on CUDA and direct on the "
       "CPU, never a timing (default auto)"},
  };
}

}  // namespace gcnlab
