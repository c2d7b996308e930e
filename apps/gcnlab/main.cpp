// gcnlab: distributed full-graph GCN training under interchangeable strategies.
// Errors: one "gcnlab: error: ..." line and a non-zero exit on every rank
// (2 for usage mistakes, 1 for everything else).

#include <mpi.h>

#include <cstdio>
#include <optional>

#include <fmt/format.h>

#include "apps/gcnlab/commands.hpp"
#include "backends/cpu/blas_kernels.hpp"
#include "backends/cpu/sgemm.hpp"
#include "common/comm/mpi_communicator.hpp"
#include "common/core/progress.hpp"
#include "gcnlab_config.hpp"

int main(int argc, char** argv) {
  gcnlab::cpu::use_the_cpus_blas_kernels(argv);  // may start this process again, with OPENBLAS_CORETYPE set
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int rc = 0;
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  namespace cli = gcnlab::cli;
  try {
    gcnlab::Ledger ledger;
    gcnlab::MpiCommunicator world(MPI_COMM_WORLD, ledger, /*owned=*/false);
    std::vector<std::string> args(argv + 1, argv + argc);
    const std::string command = args.empty() ? "--help" : args.front();
    if (!args.empty()) args.erase(args.begin());
    if (command == "--help" || command == "-h" || command == "help") {
      if (world.rank() == 0) std::fputs(cli::usage().c_str(), stdout);
    } else if (command == "--version") {
      if (world.rank() == 0)
        fmt::print("gcnlab {} (git {})\ncpu gemm: {}\nblas kernels: {}\n", GCNLAB_VERSION, GCNLAB_GIT_SHA,
                   gcnlab::cpu::gemm_description(gcnlab::cpu::gemm_library_from_environment()),
                   gcnlab::cpu::blas_kernels());
    } else {
      // bench KIND [options]
      std::string kind;
      if (command == "bench" && !args.empty() && args.front().rfind("-", 0) != 0) {
        kind = args.front();
        args.erase(args.begin());
      }
      std::optional<cli::Args> a;
      cli::collectively(world, [&] {  // every rank parses the same line: one message, every rank exits 2
        const cli::CommandSpec* spec = cli::find_command(command);
        if (!spec)
          throw cli::UsageError(fmt::format("unknown command '{}' (expected train, info, prepare, partition, plan, strategies, models, "
                                            "simulate, bench or compare; see gcnlab --help)", command));
        a.emplace(*spec, cli::with_config(*spec, args));
      });
      // progress of long loading, partitioning and shard writing on rank 0's stderr (every command);
      // --quiet is read on every rank (Args::finish checks that every given option was read)
      const bool quiet = a->flag("--quiet");
      gcnlab::enable_progress(world.rank() == 0 && !quiet);
      if (command == "train") rc = cli::train(*a, world);
      else if (command == "info") rc = cli::info(*a, world);
      else if (command == "prepare") rc = cli::prepare(*a, world);
      else if (command == "compare") rc = cli::compare(*a, world);
      else if (command == "strategies") rc = cli::strategies(*a, world);
      else if (command == "models") rc = cli::models(*a, world);
      else if (command == "partition") rc = cli::partition(*a, world);
      else if (command == "plan") rc = cli::plan(*a, world);
      else if (command == "simulate") rc = cli::simulate(*a, world);
      else if (command == "bench") rc = cli::bench(kind, *a, world);
    }
  } catch (const cli::HelpRequested& h) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) std::fputs(h.text.c_str(), stdout);
    rc = 0;
  } catch (const cli::ReportedError& e) {
    rc = e.code;
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
