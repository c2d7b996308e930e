#pragma once
// How the ranks of one node share its CUDA devices: the CUDA backend's decision,
// made before any NCCL call, as a plain function (unit-tested without a GPU).
//
// Local rank k takes device k mod devices. More ranks than devices is allowed
//   - over MPI (--gpu-comm mpi): staged copies, no NCCL;
//   - over NCCL only in its one-GPU test mode: every rank of the node has an
//     NCCL_HOSTID of its own. NCCL refuses two ranks on one device only when
//     their host hashes agree ("Duplicate GPU detected"), and NCCL_HOSTID sets
//     that hash; each rank is then an NCCL node of its own and every collective
//     takes NCCL's network transport (sockets over loopback with
//     NCCL_SOCKET_IFNAME=lo NCCL_IB_DISABLE=1): NCCL's real code path, exact
//     and slow (docs/clusters.md).
// Otherwise the job is refused in one line that names both ways out.

#include <string>
#include <vector>

namespace gcnlab {

enum class DeviceSharing {
  exclusive,  // at most one rank per device
  mpi,        // --gpu-comm mpi: ranks share devices
  nccl_test,  // --gpu-comm nccl: ranks share devices, each an NCCL node of its own
};

struct DevicePlacement {
  DeviceSharing sharing = DeviceSharing::exclusive;
  int device = 0;
  // What the node's first rank prints once (empty: nothing to say): shared devices
  // make times that are not a GPU-count scaling.
  std::string note;
};

// `nccl_host_ids`: the NCCL_HOSTID of every rank on the node, by local rank ("" where
// unset; its size is the node's rank count). `over_mpi`: --gpu-comm mpi. Throws
// gcnlab::Error where the node's ranks cannot share its `devices` (>= 1).
DevicePlacement place_on_devices(int local_rank, int devices, const std::vector<std::string>& nccl_host_ids,
                                 bool over_mpi);

}  // namespace gcnlab
