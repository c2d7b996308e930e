#pragma once
// How much host memory this process may still use: the tightest of the
// cgroup's limit less its usage (v2 memory.max / memory.current, or v1
// memory.limit_in_bytes / memory.usage_in_bytes) and the kernel's MemAvailable.
// Used by memory admission (the trainer checks each rank's analytic need
// against its share before allocating).

#include <optional>
#include <string>

namespace gcnlab {

struct MemoryBudget {
  double bytes = 0;
  std::string source;  // where the figure came from, for the error message
};

std::optional<MemoryBudget> host_memory_available();

// Peak resident set size of this process so far, in bytes.
double host_peak_bytes();

// "512M", "2G", "1.5GiB", "1048576" -> bytes; throws naming `what` otherwise.
double parse_bytes(const std::string& text, const std::string& what);

}  // namespace gcnlab
