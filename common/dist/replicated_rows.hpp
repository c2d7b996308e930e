#pragma once
// The 1.5D layout shared by CAGNET's 1.5D (Alg. 2) and SA's sparsity-aware
// 1.5D (Alg. 2): P = R x c ranks, R block rows each replicated on the c ranks
// of a process row; the R stages of a distributed SpMM are split among the c
// process columns, R/c each and the remainder to the last column (as CAGNET
// does when c² does not divide P).

#include <utility>
#include <vector>

#include "common/model/strategy.hpp"

namespace gcnlab {

// R x c from --grid RxC or --replication c (default: the largest c <= √P dividing P).
std::vector<int> replicated_grid(const StrategyOptions& opts, int ranks);

// Block rows [first, last) whose stages process column j runs.
inline std::pair<int, int> stage_range(int block_rows, int c, int j) {
  const int per = block_rows / c;
  return {j * per, j == c - 1 ? block_rows : (j + 1) * per};
}

}  // namespace gcnlab
