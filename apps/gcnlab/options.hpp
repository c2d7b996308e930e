#pragma once
// The command line: every subcommand's options are declared once
// (cli_spec.cpp, a table of OptionSpec); CLI11 parses them from that table and
// generates each subcommand's --help from it, so help and parser cannot
// drift. Commands then read the parsed values through Args, which converts
// and range-checks them with one message per mistake.
//
// Usage mistakes (an unknown option, a missing value, a value outside its
// choices, a malformed number) throw UsageError: one error line and exit
// status 2 on every rank. --help prints the subcommand's help and exits 0.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/core/error.hpp"

namespace gcnlab::cli {

struct UsageError : Error {
  using Error::Error;
};

// `gcnlab COMMAND --help`: the text to print (rank 0) before exiting 0.
struct HelpRequested {
  std::string text;
};

struct OptionSpec {
  std::string name;                  // "--epochs"
  std::string value;                 // its value's name ("N"); empty: a flag
  std::string help;
  std::vector<std::string> choices = {};  // the accepted values, when they are a fixed list
};

struct CommandSpec {
  std::string name, synopsis, description;
  std::vector<OptionSpec> options;
  std::string positional;  // name of the positional arguments ("RUN.json"), empty: none
  std::string footer;
};

// Every subcommand (cli_spec.cpp); nullptr for an unknown name.
const std::vector<CommandSpec>& command_specs();
const CommandSpec* find_command(const std::string& name);
// `gcnlab --help`: the commands and their synopses.
std::string usage();

// `train --config RUN.json [options]`: the recorded run's command line (its
// results file's provenance) followed by `args`, the recorded options that
// `args` gives again dropped (the ones given here win), and the recorded run's
// outputs and state (--out, --weights-out, --checkpoint, --resume) dropped so
// that a re-run never overwrites them. Without --config: `args` unchanged.
std::vector<std::string> with_config(const CommandSpec& spec, std::vector<std::string> args);

// "a,b,,c" -> {"a", "b", "", "c"}: an option's comma-separated list, empty items kept (for the caller to refuse).
std::vector<std::string> split_commas(const std::string& list);

class Args {
 public:
  // Parses `args` (without the program and command names) against `spec`;
  // throws UsageError or HelpRequested.
  Args(const CommandSpec& spec, std::vector<std::string> args);

  std::optional<std::string> value(const std::string& name);
  std::string value_or(const std::string& name, const std::string& fallback) {
    return value(name).value_or(fallback);
  }
  long long integer(const std::string& name, long long fallback, long long min);
  double real(const std::string& name, double fallback);
  bool flag(const std::string& name);
  // Positional arguments, in order.
  std::vector<std::string> positional();
  // An option that was given but that this use of the command does not read
  // (e.g. a bench kernel given --epochs) is a usage error too.
  void finish() const;

 private:
  const OptionSpec& declared(const std::string& name) const;

  const CommandSpec* spec_;
  std::map<std::string, std::string> values_;  // given options with a value
  std::set<std::string> flags_;                // given flags
  std::vector<std::string> positional_;
  std::set<std::string> read_;                 // options the command asked for
};

}  // namespace gcnlab::cli
