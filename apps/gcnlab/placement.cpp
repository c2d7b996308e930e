// Where a run executes: this rank's place on its node, and the provenance its results record.
#include "apps/gcnlab/placement.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <fstream>

#include <fmt/format.h>

#include "common/core/error.hpp"
#include "gcnlab_config.hpp"

namespace gcnlab::cli {

namespace {

// This process's command line as typed (from /proc/self/cmdline; arguments
// with spaces quoted). Under mpirun: the gcnlab part, the rank count is config.ranks.
std::string command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string line, arg;
  while (std::getline(in, arg, '\0')) {
    if (!line.empty()) line += ' ';
    line += arg.find_first_of(" \t'\"") == std::string::npos ? arg : fmt::format("'{}'", arg);
  }
  return line;
}

}  // namespace

// Where, when and how the run was made (results "provenance", the same on every rank but rank 0's recorded).
nlohmann::json provenance(const Communicator& world, int ranks_on_node, const ThreadChoice& threads,
                          const CpuPlacement& place) {
  char when[32] = {};
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &utc);
  char mpi[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  MPI_Get_library_version(mpi, &len);
  std::string mpi_version(mpi, static_cast<std::size_t>(len));
  mpi_version = mpi_version.substr(0, mpi_version.find_first_of("\n,"));
  const int cores = place.machine_cores;
  const char* job = std::getenv("SLURM_JOB_ID");
  return {{"command_line", command_line()},
          {"timestamp_utc", when},
          {"versions",
           {{"gcnlab", GCNLAB_VERSION},
            {"git_sha", GCNLAB_GIT_SHA},
            {"mpi", mpi_version},
            {"compiler", GCNLAB_COMPILER},
            {"march", GCNLAB_ARCH}}},
          {"slurm_job_id", job ? nlohmann::json(job) : nlohmann::json()},
          {"nodes", world.size() / std::max(1, ranks_on_node)},
          {"ranks_per_node", ranks_on_node},
          {"cores_per_node", cores},
          {"threads_source", threads.source},
          // more threads than cores on the node: timings are of time-shared cores
          {"oversubscribed", ranks_on_node * threads.threads > cores},
          // rank 0's binding (hwloc): the cores its threads may run on, and the warning when too few
          {"binding",
           {{"cpus", place.cpus},
            {"cores", place.cores},
            {"hardware_threads", place.pus},
            {"warning", binding_warning(threads.threads, place)}}}};
}

}  // namespace gcnlab::cli
