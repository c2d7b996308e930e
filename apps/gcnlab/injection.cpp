// Test-only faults and signals at named places of a run (injection.hpp).
#include "apps/gcnlab/injection.hpp"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/core/error.hpp"
#include "common/core/stop_signal.hpp"

namespace gcnlab::cli {

Injection Injection::from_environment(const char* variable) {
  Injection f;
  f.variable = variable;
  const char* spec = std::getenv(variable);
  if (!spec) return f;
  const bool signal = std::string_view(variable) == "GCNLAB_INJECT_SIGNAL";
  char what[32] = {}, sig[16] = {};
  GCNLAB_CHECK(std::sscanf(spec, "%d:%31[^:]:%15s", &f.rank, what, sig) == (signal ? 3 : 2),
               "{} takes RANK:EPOCH or RANK:PHASE{} (got '{}')", variable, signal ? " and :SIGNAL" : "", spec);
  if (signal) f.signal = stop::parse(sig);
  if (std::sscanf(what, "%d", &f.epoch) != 1) {
    f.where = what;
    GCNLAB_CHECK(std::find(kSetupPhases.begin(), kSetupPhases.end(), f.where) != kSetupPhases.end() ||
                     (signal && f.where == "checkpoint-write"),
                 "{}: no setup phase '{}' (one of {}{})", variable, f.where, fmt::join(kSetupPhases, ", "),
                 signal ? ", or checkpoint-write" : "");
  }
  return f;
}

void Injection::fire(int rank_now, const std::string& where_now) const {
  if (signal) std::raise(signal);
  else fail("injected fault ({}) on rank {} in {}", variable, rank_now, where_now);
}

void Injection::at(int rank_now, std::string_view place) const {
  if (rank_now == rank && where == place) fire(rank_now, fmt::format("setup phase {}", place));
}

std::function<void(int)> Injection::between_passes(int rank_now, std::function<void(int)> then) const {
  if (rank_now != rank || !where.empty()) return then;
  return [*this, rank_now, then](int epoch) {
    if (then) then(epoch);
    if (epoch == this->epoch) fire(rank_now, fmt::format("epoch {}", epoch));
  };
}

}  // namespace gcnlab::cli
