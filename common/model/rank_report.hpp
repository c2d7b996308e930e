#pragma once
// What one rank reports at the end of a run, and its gathering to every rank.

#include <array>
#include <cstdint>
#include <vector>

#include "common/comm/byte_model.hpp"
#include "common/comm/communicator.hpp"
#include "common/comm/ledger.hpp"
#include "common/model/strategy.hpp"

namespace gcnlab {

struct RankReport {
  int rank = 0;
  std::vector<int> coords;
  std::int64_t nnz_local = 0;
  std::int64_t edges_local = 0;  // nonzeros of its attention edge tensors (EdgeAttention::edges; else nnz_local)
  double peak_bytes = 0;       // backend allocations (device memory on GPUs)
  double host_peak_bytes = 0;  // the process's peak resident set (includes loading the data)
  double staging_host_bytes = 0;  // --gpu-comm mpi: the peak of its host staging buffers (pinned; in host_peak_bytes)
  MemoryNeed memory;           // analytic backend bytes (strategy + trainer)
  CategoryTallies per_epoch{};  // averaged over the timed epochs; "other" = the rest of the epoch
  CategoryTallies setup{};      // whole setup phase
  CategoryWork work{};          // the kernels' work per epoch, averaged as per_epoch (common/comm/work.hpp)
  std::array<double, kNumCategories> model{};  // analytic wire bytes per epoch
  LinkBytes model_link;  // ... by the link they cross (TrainConfig::ranks_per_node)
};

// Every rank's report, in rank order, on every rank (one all-gather; collective).
std::vector<RankReport> gather_reports(Communicator& world, const RankReport& mine);

}  // namespace gcnlab
