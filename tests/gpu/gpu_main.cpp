// Main of the GPU tests (label `gpu`): without a usable CUDA device the whole
// binary reports SKIP with the reason and exits 77, which ctest shows as
// skipped; otherwise it runs the Catch session on every rank and fails if any
// rank failed.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cuda_runtime_api.h>
#include <mpi.h>

#include <cstdio>

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess || count == 0) {
    if (rank == 0)
      std::printf("SKIP: no usable CUDA device (%s)\n", rc == cudaSuccess ? "no device found" : cudaGetErrorString(rc));
    MPI_Finalize();
    return 77;
  }
  Catch::Session session;
  int result = session.applyCommandLine(argc, argv);
  if (result == 0) result = session.run();
  int worst = result;
  MPI_Allreduce(&result, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst == 0 ? 0 : 1;
}
