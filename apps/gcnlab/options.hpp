#pragma once
// A small command-line reader: "--name value" and "--flag" options, every
// option consumed exactly once, anything left over is an error.

#include <optional>
#include <string>
#include <vector>

namespace gcnlab::cli {

class Args {
 public:
  explicit Args(std::vector<std::string> args) : args_(std::move(args)), used_(args_.size(), false) {}

  std::optional<std::string> value(const std::string& name);
  std::string value_or(const std::string& name, const std::string& fallback) {
    return value(name).value_or(fallback);
  }
  long long integer(const std::string& name, long long fallback, long long min);
  double real(const std::string& name, double fallback);
  bool flag(const std::string& name);
  // Positional arguments (not starting with --), in order.
  std::vector<std::string> positional();
  // Throws if an argument was not consumed.
  void finish() const;

 private:
  std::vector<std::string> args_;
  std::vector<bool> used_;
};

}  // namespace gcnlab::cli
