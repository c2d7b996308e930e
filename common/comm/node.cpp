#include "common/comm/node.hpp"

#include <cstdlib>
#include <numeric>

#include "common/comm/mpi_communicator.hpp"

namespace gcnlab {

NodeRanks node_ranks(MPI_Comm comm) {
  int rank = 0;
  GCNLAB_MPI(MPI_Comm_rank(comm, &rank));
  MPI_Comm node;
  GCNLAB_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
  NodeRanks r;
  MPI_Comm_rank(node, &r.local_rank);
  MPI_Comm_size(node, &r.count);
  const char* env = std::getenv("NCCL_HOSTID");
  const std::string mine = env ? env : "";
  const int length = static_cast<int>(mine.size());
  std::vector<int> lengths(r.count), offsets(r.count, 0);
  MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, node);
  std::exclusive_scan(lengths.begin(), lengths.end(), offsets.begin(), 0);
  std::string all(static_cast<std::size_t>(offsets.back() + lengths.back()), '\0');
  MPI_Allgatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, node);
  MPI_Comm_free(&node);
  r.nccl_host_ids.clear();
  for (int k = 0; k < r.count; ++k) r.nccl_host_ids.push_back(all.substr(offsets[k], lengths[k]));
  return r;
}

}  // namespace gcnlab
