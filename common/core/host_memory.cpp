#include "common/core/host_memory.hpp"

#include <sys/resource.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "common/core/error.hpp"

namespace gcnlab {

double host_peak_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) * 1024.0;  // Linux reports KiB
}

namespace {

// The first number in a file ("max" or absent: none).
std::optional<double> number_in(const std::string& path) {
  std::ifstream in(path);
  double x = 0;
  if (in >> x) return x;
  return std::nullopt;
}

std::optional<double> mem_available() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  double kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return std::nullopt;
}

}  // namespace

std::optional<MemoryBudget> host_memory_available() {
  std::optional<MemoryBudget> best;
  auto offer = [&](std::optional<double> bytes, const char* source) {
    if (bytes && *bytes >= 0 && (!best || *bytes < best->bytes)) best = MemoryBudget{*bytes, source};
  };
  offer(mem_available(), "MemAvailable");
  for (const auto& [limit, usage, name] :
       {std::tuple{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current", "cgroup memory.max - memory.current"},
        std::tuple{"/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes",
                   "cgroup memory.limit_in_bytes - usage"}}) {
    const auto l = number_in(limit), u = number_in(usage);
    if (l && u && *l < 1e18) offer(*l - *u, name);  // v1 reports "no limit" as ~2^63
  }
  return best;
}

double parse_bytes(const std::string& text, const std::string& what) {
  std::istringstream in(text);
  double x = 0;
  std::string unit;
  in >> x;
  GCNLAB_CHECK(!in.fail() && x >= 0 && std::isfinite(x), "{} '{}' is not a size (e.g. 512M, 2G)", what, text);
  in >> unit;
  double scale = 0;
  for (const auto& [u, s] : {std::pair{"", 1.0}, {"K", 0x1p10}, {"KiB", 0x1p10}, {"M", 0x1p20}, {"MiB", 0x1p20},
                             {"G", 0x1p30}, {"GiB", 0x1p30}, {"T", 0x1p40}, {"TiB", 0x1p40}})
    if (unit == u) scale = s;
  GCNLAB_CHECK(scale > 0 && in.peek() == std::char_traits<char>::eof(), "{} '{}' is not a size (e.g. 512M, 2G)", what,
               text);
  return x * scale;
}

}  // namespace gcnlab
