// gcnlab: distributed full-graph GCN training under interchangeable strategies.
// Errors: one "gcnlab: error: ..." line and a non-zero exit on every rank.

#include <mpi.h>

#include <cstdio>

#include "apps/gcnlab/commands.hpp"
#include "common/comm/mpi_communicator.hpp"
#include "common/core/progress.hpp"

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int rc = 0;
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  try {
    gcnlab::Ledger ledger;
    gcnlab::MpiCommunicator world(MPI_COMM_WORLD, ledger, /*owned=*/false);
    std::vector<std::string> args(argv + 1, argv + argc);
    const std::string command = args.empty() ? "--help" : args.front();
    if (!args.empty()) args.erase(args.begin());
    // bench KIND [options]
    std::string kind;
    if (command == "bench" && !args.empty() && args.front().rfind("--", 0) != 0) {
      kind = args.front();
      args.erase(args.begin());
    }
    gcnlab::cli::Args a(args);
    // progress of long loading, partitioning and shard writing on rank 0's stderr (every command)
    gcnlab::enable_progress(world.rank() == 0 && !a.flag("--quiet"));
    using gcnlab::cli::collectively;
    if (command == "train") rc = gcnlab::cli::train(a, world);
    else if (command == "info") rc = gcnlab::cli::info(a, world);
    else if (command == "prepare") rc = gcnlab::cli::prepare(a, world);
    else if (command == "compare") rc = gcnlab::cli::compare(a, world);
    else if (command == "partition") rc = gcnlab::cli::partition(a, world);
    else if (command == "plan") rc = gcnlab::cli::plan(a, world);
    else if (command == "simulate") rc = gcnlab::cli::simulate(a, world);
    else if (command == "bench") rc = gcnlab::cli::bench(kind, a, world);
    else if (command == "--help" || command == "-h" || command == "help") {
      if (world.rank() == 0) std::fputs(gcnlab::cli::usage().c_str(), stdout);
    } else {
      collectively(world, [&] {
        gcnlab::fail("unknown command '{}' (expected train, info, prepare, partition, plan, simulate, bench or compare; see gcnlab --help)", command);
      });
    }
  } catch (const gcnlab::cli::ReportedError&) {
    rc = 1;
  } catch (const std::exception& e) {
    // Not agreed collectively: the other ranks may be waiting in a collective.
    std::fprintf(stderr, "gcnlab: error: %s\n", e.what());
    std::fflush(stderr);
    if (size > 1) MPI_Abort(MPI_COMM_WORLD, 1);
    rc = 1;
  }
  MPI_Finalize();
  return rc;
}
