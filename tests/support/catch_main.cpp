// Catch2 main for gcnlab: initialises MPI, runs the session on every rank and
// fails the test if it failed on *any* rank (a failure on rank 3 must not be
// hidden by a pass on rank 0). Ranks other than 0 report only failures.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <mpi.h>

#include <cstdio>

namespace {

int world_size() {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

// A failed REQUIRE (or an exception escaping a test) ends the test case on
// this rank only, and the other ranks would wait in its next collective until
// the ctest timeout. With more than one rank such a failure is printed here and
// the job aborted, so a test whose ranks diverge fails in seconds (CHECKs
// continue on every rank and need no guard).
class AbortOnDivergence : public Catch::TestEventListenerBase {
 public:
  using TestEventListenerBase::TestEventListenerBase;

  bool assertionEnded(const Catch::AssertionStats& stats) override {
    const Catch::AssertionResult& r = stats.assertionResult;
    const bool stops_test = (r.m_info.resultDisposition & Catch::ResultDisposition::ContinueOnFailure) == 0;
    if (r.isOk() || !stops_test || world_size() == 1) return true;
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const Catch::SourceLineInfo at = r.getSourceInfo();
    std::fprintf(stderr,
                 "rank %d: %s failed at %s:%zu in \"%s\": %s %s\n"
                 "aborting the job: the other ranks would wait for this one in the test's collectives\n",
                 rank, r.getTestMacroName().data(), at.file, at.line, currentTestCaseInfo->name.c_str(),
                 r.hasExpression() ? r.getExpandedExpression().c_str() : "", r.getMessage().c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    return true;
  }
};

}  // namespace

CATCH_REGISTER_LISTENER(AbortOnDivergence)

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
