#pragma once
// This rank's node: its place among the node's ranks and what the node's ranks
// say about themselves that the CUDA backend decides its device placement from
// (backends/device_sharing.hpp). One collective over MPI_COMM_TYPE_SHARED.

#include <mpi.h>

#include <string>
#include <vector>

namespace gcnlab {

struct NodeRanks {
  int local_rank = 0;  // this rank's index among its node's ranks
  int count = 1;       // ranks on the node
  // Every node rank's NCCL_HOSTID, by local rank ("" where unset): NCCL takes two
  // ranks for one host exactly when these (or, unset, host name and boot id) agree.
  std::vector<std::string> nccl_host_ids = {""};
};

// Collective over `comm`.
NodeRanks node_ranks(MPI_Comm comm);

}  // namespace gcnlab
