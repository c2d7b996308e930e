#include "backends/device_sharing.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "common/core/error.hpp"

namespace gcnlab {

namespace {

// The refusal of NCCL with more ranks than devices, with the reason `why`.
[[noreturn]] void refuse(int ranks, int devices, const std::string& why) {
  fail("--backend cuda: {} ranks on this node and {} CUDA device{}: run one rank per GPU (at most {} ranks per node, "
       "e.g. mpiexec -n {} or srun --ntasks-per-node={} --gpus-per-task=1), or let ranks share a GPU with --gpu-comm "
       "mpi, or test NCCL on shared GPUs with an NCCL_HOSTID per rank (scripts/nccl_host_per_rank.sh; {})",
       ranks, devices, devices == 1 ? "" : "s", devices, devices, devices, why);
}

}  // namespace

DevicePlacement place_on_devices(int local_rank, int devices, const std::vector<std::string>& nccl_host_ids,
                                 bool over_mpi) {
  const int ranks = static_cast<int>(nccl_host_ids.size());
  GCNLAB_ASSERT(devices >= 1 && ranks >= 1 && local_rank >= 0 && local_rank < ranks);
  DevicePlacement p;
  p.device = local_rank % devices;
  if (ranks <= devices) return p;
  const std::string shared = fmt::format("{} ranks on this node share {} CUDA device{} (device = local rank mod "
                                         "devices)",
                                         ranks, devices, devices == 1 ? "" : "s");
  if (over_mpi) {
    p.sharing = DeviceSharing::mpi;
    p.note = fmt::format("--gpu-comm mpi: {}: times are not a GPU-count scaling", shared);
    return p;
  }
  std::map<std::string, int> first;  // host id -> the first local rank that has it
  if (std::all_of(nccl_host_ids.begin(), nccl_host_ids.end(), [](const std::string& id) { return id.empty(); }))
    refuse(ranks, devices, "no rank has one");
  for (int k = 0; k < ranks; ++k) {
    const std::string& id = nccl_host_ids[k];
    if (id.empty()) refuse(ranks, devices, fmt::format("local rank {} has no NCCL_HOSTID", k));
    if (const auto [at, fresh] = first.emplace(id, k); !fresh)
      refuse(ranks, devices, fmt::format("local ranks {} and {} have the same NCCL_HOSTID '{}'", at->second, k, id));
  }
  p.sharing = DeviceSharing::nccl_test;
  p.note = fmt::format("--gpu-comm nccl test mode: {}, each rank its own NCCL_HOSTID and so an NCCL node of its own "
                       "(NCCL's network transport): exact, but times are not a measurement",
                       shared);
  return p;
}

}  // namespace gcnlab
