#pragma once
// Test-only faults and signals at named places of a training run
// (tests/cli/checkpoint.sh, phases.sh, stop.sh): on one rank,
//   GCNLAB_INJECT_FAULT=RANK:WHERE       throws (the other ranks must end with it);
//   GCNLAB_INJECT_SIGNAL=RANK:WHERE:SIG  raises SIG, as if the scheduler had sent it to that rank;
// WHERE is an epoch (between its forward and backward pass, TrainConfig::between_passes),
// a setup phase (at its start) or, for a signal, `checkpoint-write` (inside the first checkpoint write).

#include <array>
#include <functional>
#include <string>
#include <string_view>

namespace gcnlab::cli {

// The setup phases of train, in order; each ends in an agreement before the
// next one's collectives (start_train).
constexpr std::array<const char*, 10> kSetupPhases = {"arguments", "checkpoint", "backend", "admission", "load",
                                                      "strategy",  "partition",  "weights", "setup",     "restore"};

struct Injection {
  const char* variable = "";
  int rank = -1;
  std::string where;  // a setup phase or "checkpoint-write"; empty: an epoch
  int epoch = -1;
  int signal = 0;  // 0: a fault

  // The injection `variable` (GCNLAB_INJECT_FAULT or GCNLAB_INJECT_SIGNAL) names; none if it is unset.
  static Injection from_environment(const char* variable);
  void fire(int rank_now, const std::string& where_now) const;
  // At the start of setup phase `place` (or in the checkpoint write).
  void at(int rank_now, std::string_view place) const;
  // This rank's epoch injection, for TrainConfig::between_passes (`then`: another one to run first).
  std::function<void(int)> between_passes(int rank_now, std::function<void(int)> then = {}) const;
};

}  // namespace gcnlab::cli
