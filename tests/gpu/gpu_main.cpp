// Main of the GPU tests (label `gpu`): without a usable CUDA device, or with
// more ranks on the node than devices (one rank per GPU: the backend refuses
// the run), the whole binary reports SKIP with the reason and exits 77, which
// ctest shows as skipped; otherwise it runs the Catch session on every rank and
// fails if any rank failed.
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
  int count = 0, on_node = 1;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Comm_size(node, &on_node);
  MPI_Comm_free(&node);
  int fewer = rc != cudaSuccess || count < on_node;  // the same answer on every rank
  MPI_Allreduce(MPI_IN_PLACE, &fewer, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (fewer) {
    if (rank == 0) {
      if (rc != cudaSuccess || count == 0)
        std::printf("SKIP: no usable CUDA device (%s)\n", rc == cudaSuccess ? "no device found" : cudaGetErrorString(rc));
      else
        std::printf("SKIP: %d ranks on this node and %d CUDA device%s: one rank per GPU\n", on_node, count,
                    count == 1 ? "" : "s");
    }
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
