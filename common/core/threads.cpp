#include "common/core/threads.hpp"

#include <hwloc.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

#include <fmt/format.h>

#include "common/core/error.hpp"

namespace gcnlab {

namespace {

// The leading positive integer of `text` (OMP_NUM_THREADS may list one per nesting level).
int positive_count(const char* name, const std::string& text) {
  std::size_t used = 0;
  long value = 0;
  try {
    value = std::stol(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  GCNLAB_CHECK(used > 0 && value >= 1 && value <= 1 << 16 && (used == text.size() || text[used] == ','),
               "{}='{}' is not a positive thread count", name, text);
  return static_cast<int>(value);
}

}  // namespace

ThreadChoice choose_threads(std::optional<std::int64_t> flag, const std::function<const char*(const char*)>& env,
                            int affinity_cpus, int ranks_on_node) {
  if (flag) return {static_cast<int>(*flag), "--threads"};
  for (const char* name : {"OMP_NUM_THREADS", "SLURM_CPUS_PER_TASK"})
    if (const char* v = env(name); v && *v) {
      const int n = positive_count(name, v);
      return {n, fmt::format("{}={}", name, v)};
    }
  const int ranks = std::max(1, ranks_on_node);
  return {std::max(1, affinity_cpus / ranks),
          fmt::format("{} CPU(s) in the affinity mask / {} rank(s) on the node", affinity_cpus, ranks)};
}

CpuPlacement cpu_placement() {
  static const CpuPlacement placement = [] {
    CpuPlacement p;
    hwloc_topology_t topology = nullptr;
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (hwloc_topology_init(&topology) == 0 && hwloc_topology_load(topology) == 0 &&
        hwloc_get_cpubind(topology, set, HWLOC_CPUBIND_PROCESS) == 0) {
      p.pus = std::max(1, hwloc_bitmap_weight(set));
      const int cores = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_CORE);
      p.machine_cores = std::max(1, cores);
      int mine = 0;
      for (int k = 0; k < cores; ++k)
        mine += hwloc_bitmap_intersects(hwloc_get_obj_by_type(topology, HWLOC_OBJ_CORE, k)->cpuset, set);
      p.cores = std::max(1, cores > 0 ? mine : p.pus);
      char* list = nullptr;
      if (hwloc_bitmap_list_asprintf(&list, set) >= 0) p.cpus = list;
      std::free(list);
    } else {  // no topology: the hardware's count, unbound
      p.pus = p.cores = p.machine_cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    }
    hwloc_bitmap_free(set);
    if (topology) hwloc_topology_destroy(topology);
    return p;
  }();
  return placement;
}

int affinity_cpus() { return cpu_placement().pus; }

std::string binding_warning(int threads, const CpuPlacement& p) {
  if (threads <= p.cores) return "";
  return fmt::format("{} thread(s) share {} core(s) (CPUs {} of this process's binding; the machine has {}): give each "
                     "rank its threads' cores (mpirun --map-by slot:PE={} or --bind-to none; srun --cpus-per-task={})",
                     threads, p.cores, p.cpus, p.machine_cores, threads, threads);
}

}  // namespace gcnlab
