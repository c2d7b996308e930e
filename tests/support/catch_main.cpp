// Catch2 main for gcnlab: initialises MPI, runs the session on every rank and
// fails the test if it failed on *any* rank (a failure on rank 3 must not be
// hidden by a pass on rank 0). Ranks other than 0 report only failures.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <mpi.h>

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  Catch::Session session;
  int rc = session.applyCommandLine(argc, argv);
  if (rc == 0) rc = session.run();
  int worst = rc;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0 && worst != 0 && rc == 0) std::fprintf(stderr, "a test failed on another rank (see its output)\n");
  MPI_Finalize();
  return worst == 0 ? 0 : 1;
}
