// Main of the GPU tests (label `gpu`): without a usable CUDA device the whole
// binary reports SKIP with the reason and exits 77, which ctest shows as
// skipped; otherwise it runs the Catch session on every rank and fails if any
// rank failed. The strategies' transport is the CUDA backend's own decision
// (backends/device_sharing.hpp): NCCL where every rank has a GPU of its own or,
// on shared GPUs, where every rank has an NCCL_HOSTID of its own (NCCL's test
// mode: gpu_nccl_np*, scripts/nccl_host_per_rank.sh); otherwise MPI (--gpu-comm
// mpi, staged), ranks sharing the devices. Rank 0 says which.
#include <string>

#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cuda_runtime_api.h>
#include <mpi.h>

#include <cstdio>

#include "backends/device_sharing.hpp"
#include "common/comm/node.hpp"
#include "common/core/error.hpp"

namespace gcnlab::test {
std::string job_gpu_comm = "nccl";  // the transport of the job's strategy runs (tests/gpu/test_cuda.cpp)
}

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  const gcnlab::NodeRanks node = gcnlab::node_ranks(MPI_COMM_WORLD);
  int none = rc != cudaSuccess || count == 0, over_mpi = 0;  // the same answers on every rank
  MPI_Allreduce(MPI_IN_PLACE, &none, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (none) {
    if (rank == 0)
      std::printf("SKIP: no usable CUDA device (%s)\n", rc == cudaSuccess ? "no device found" : cudaGetErrorString(rc));
    MPI_Finalize();
    return 77;
  }
  std::string note;
  try {
    note = gcnlab::place_on_devices(node.local_rank, count, node.nccl_host_ids, /*over_mpi=*/false).note;
  } catch (const gcnlab::Error&) {
    over_mpi = 1;  // NCCL would refuse these ranks: they share the GPUs over MPI
    note = gcnlab::place_on_devices(node.local_rank, count, node.nccl_host_ids, /*over_mpi=*/true).note;
  }
  MPI_Allreduce(MPI_IN_PLACE, &over_mpi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (over_mpi) gcnlab::test::job_gpu_comm = "mpi";
  if (rank == 0)
    std::printf("gpu-tests: %d rank%s, %d on this node with %d CUDA device%s: the strategies run over --gpu-comm %s%s%s\n",
                size, size == 1 ? "" : "s", node.count, count, count == 1 ? "" : "s",
                gcnlab::test::job_gpu_comm.c_str(), note.empty() ? "" : " (", note.empty() ? "" : (note + ")").c_str());
  Catch::Session session;
  int result = session.applyCommandLine(argc, argv);
  if (result == 0) result = session.run();
  int worst = result;
  MPI_Allreduce(&result, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst == 0 ? 0 : 1;
}
