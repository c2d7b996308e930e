#pragma once
// Typed access to the key=value arguments of a dataset SPEC, rejecting
// unknown keys and malformed numbers with a message naming the spec.

#include <charconv>
#include <set>
#include <string>

#include "common/core/error.hpp"
#include "common/data/dataset.hpp"

namespace gcnlab {

class SpecArgs {
 public:
  SpecArgs(const DatasetSpec& spec, std::set<std::string> allowed) : spec_(spec) {
    allowed.insert("path");
    for (const auto& [k, v] : spec.args)
      GCNLAB_CHECK(allowed.count(k), "{}: unknown argument '{}'", spec.kind, k);
  }

  bool has(const std::string& key) const { return spec_.args.count(key) > 0; }

  std::string str(const std::string& key) const {
    GCNLAB_CHECK(has(key), "{}: missing argument '{}'", spec_.kind, key);
    return spec_.args.at(key);
  }

  long long integer(const std::string& key, long long fallback, long long min = 0) const {
    if (!has(key)) return fallback;
    const std::string& s = spec_.args.at(key);
    long long v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    GCNLAB_CHECK(ec == std::errc() && p == s.data() + s.size(), "{}: '{}={}' is not an integer",
                 spec_.kind, key, s);
    GCNLAB_CHECK(v >= min, "{}: '{}={}' must be >= {}", spec_.kind, key, s, min);
    return v;
  }

  double real(const std::string& key, double fallback) const {
    if (!has(key)) return fallback;
    const std::string& s = spec_.args.at(key);
    try {
      std::size_t used = 0;
      const double v = std::stod(s, &used);
      if (used == s.size()) return v;
    } catch (const std::exception&) {
    }
    fail("{}: '{}={}' is not a number", spec_.kind, key, s);
  }

 private:
  const DatasetSpec& spec_;
};

}  // namespace gcnlab
