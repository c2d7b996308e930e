#include "common/core/threads.hpp"

#include <sched.h>

#include <algorithm>
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

int affinity_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace gcnlab
