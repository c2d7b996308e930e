// Main of the GPU tests (label `gpu`): without a usable CUDA device the whole
// binary reports SKIP with the reason and exits 77, which ctest shows as
// skipped; otherwise it runs the Catch session on every rank and fails if any
// rank failed. With more ranks on a node than devices (NCCL runs one rank per
// GPU) the strategies run over the MPI transport (--gpu-comm mpi), ranks
// sharing the devices, and say so on rank 0.
#include <string>

#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cuda_runtime_api.h>
#include <mpi.h>

#include <cstdio>

namespace gcnlab::test {
std::string job_gpu_comm = "nccl";  // the transport of the job's strategy runs (tests/gpu/test_cuda.cpp)
}

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int count = 0, on_node = 1;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Comm_size(node, &on_node);
  MPI_Comm_free(&node);
  int none = rc != cudaSuccess || count == 0, shared = count < on_node;  // the same answers on every rank
  MPI_Allreduce(MPI_IN_PLACE, &none, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &shared, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (none) {
    if (rank == 0)
      std::printf("SKIP: no usable CUDA device (%s)\n", rc == cudaSuccess ? "no device found" : cudaGetErrorString(rc));
    MPI_Finalize();
    return 77;
  }
  if (shared) {
    gcnlab::test::job_gpu_comm = "mpi";
    if (rank == 0)
      std::printf("gpu-tests: %d ranks on a node with %d CUDA device%s: the strategies run over --gpu-comm mpi "
                  "(ranks share a GPU; the NCCL transport's multi-rank checks need a GPU per rank)\n",
                  on_node, count, count == 1 ? "" : "s");
  }
  Catch::Session session;
  int result = session.applyCommandLine(argc, argv);
  if (result == 0) result = session.run();
  int worst = result;
  MPI_Allreduce(&result, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst == 0 ? 0 : 1;
}
