#pragma once
// How many threads a rank's kernels use (OpenMP and BLAS), and why: the
// results record both, so that a run that oversubscribed its CPUs says so.
//
// The first that is set wins (the conventions of MPI + OpenMP jobs):
//   --threads N                 the command line
//   OMP_NUM_THREADS             what the job script exported (its first entry: "4,2" -> 4)
//   SLURM_CPUS_PER_TASK         what Slurm gave each task (srun --cpus-per-task)
//   affinity CPUs / ranks       the CPUs this process may run on, shared by the node's ranks

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace gcnlab {

struct ThreadChoice {
  int threads = 1;
  std::string source;  // e.g. "OMP_NUM_THREADS=1"
};

// `env` looks a variable up (nullptr: unset); a set variable that is not a
// positive integer is an error naming it.
ThreadChoice choose_threads(std::optional<std::int64_t> flag, const std::function<const char*(const char*)>& env,
                            int affinity_cpus, int ranks_on_node);

// Where this process may run, read with hwloc: its binding (the affinity
// mask an MPI launcher or Slurm set) against the machine's topology.
struct CpuPlacement {
  int pus = 1;             // hardware threads in the mask
  int cores = 1;           // cores with at least one of them in the mask (SMT siblings share one)
  int machine_cores = 1;   // cores of the whole machine
  std::string cpus;        // the mask as a list, e.g. "0-3,8"
};
CpuPlacement cpu_placement();

// CPUs in this process's affinity mask (cpu_placement().pus).
int affinity_cpus();

// One line when `threads` exceed the cores this process may run on (they
// time-share them: an MPI launcher's default binding of a lone rank to one
// core, srun without --cpus-per-task), naming the fix; empty otherwise.
std::string binding_warning(int threads, const CpuPlacement& p);

}  // namespace gcnlab
