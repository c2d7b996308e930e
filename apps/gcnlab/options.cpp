#include "apps/gcnlab/options.hpp"

#include <charconv>

#include "common/core/error.hpp"

namespace gcnlab::cli {

std::optional<std::string> Args::value(const std::string& name) {
  std::optional<std::string> v;
  for (std::size_t i = 0; i < args_.size(); ++i) {
    if (used_[i] || args_[i] != name) continue;
    GCNLAB_CHECK(i + 1 < args_.size(), "option {} needs a value", name);
    GCNLAB_CHECK(!v, "option {} given twice", name);
    used_[i] = used_[i + 1] = true;
    v = args_[i + 1];
  }
  return v;
}

long long Args::integer(const std::string& name, long long fallback, long long min) {
  const auto v = value(name);
  if (!v) return fallback;
  long long x = 0;
  auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), x);
  GCNLAB_CHECK(ec == std::errc() && p == v->data() + v->size(), "{} '{}' is not an integer", name, *v);
  GCNLAB_CHECK(x >= min, "{} must be >= {} (got {})", name, min, x);
  return x;
}

double Args::real(const std::string& name, double fallback) {
  const auto v = value(name);
  if (!v) return fallback;
  try {
    std::size_t used = 0;
    const double x = std::stod(*v, &used);
    if (used == v->size()) return x;
  } catch (const std::exception&) {
  }
  fail("{} '{}' is not a number", name, *v);
}

bool Args::flag(const std::string& name) {
  bool seen = false;
  for (std::size_t i = 0; i < args_.size(); ++i)
    if (!used_[i] && args_[i] == name) used_[i] = true, seen = true;
  return seen;
}

std::vector<std::string> Args::positional() {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < args_.size(); ++i)
    if (!used_[i] && args_[i].rfind("--", 0) != 0) used_[i] = true, out.push_back(args_[i]);
  return out;
}

void Args::finish() const {
  for (std::size_t i = 0; i < args_.size(); ++i)
    GCNLAB_CHECK(used_[i], "unknown or misplaced argument '{}' (see gcnlab --help)", args_[i]);
}

}  // namespace gcnlab::cli
