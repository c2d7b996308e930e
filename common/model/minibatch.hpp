#pragma once
// ScaleGNN's mini-batch schedule (Sec. III-D, Alg. 1; Sec. V-A). Step k trains
// on a uniform sample of B vertices, the same on every rank of a data-parallel
// group: a pure function of (seed, k, group) (Alg. 1 line 1), cut by the
// strategy into this rank's blocks (Alg. 2 lines 2-17). With prefetch, the next
// step's sample is drawn and cut on a helper thread while this step trains (the
// same samples either way); the part of its work the trainer did not wait for
// is recorded as hidden sampling time.

#include <cstdint>
#include <future>
#include <memory>
#include <utility>

#include "common/comm/ledger.hpp"
#include "common/model/config.hpp"
#include "common/model/strategy.hpp"

namespace gcnlab {

class MinibatchSchedule {
 public:
  // n: the graph's vertices; the batch size, steps per epoch and prefetch come from `train`.
  MinibatchSchedule(const Strategy& strategy, Ledger& ledger, std::int64_t n, const TrainConfig& train,
                    std::uint64_t seed);

  int steps_per_epoch() const { return steps_per_epoch_; }
  // Step `step`'s cut: the prefetched one when it is that step's, else made now.
  // Then (prefetch) starts the next step's, across epoch boundaries too.
  std::unique_ptr<SampleCut> cut(int step);

 private:
  using Timed = std::pair<std::unique_ptr<SampleCut>, double>;  // a cut and its seconds of work
  Timed make(int step) const;

  const Strategy& strategy_;
  Ledger& ledger_;
  std::int64_t n_, batch_size_;
  std::uint64_t seed_;
  bool prefetch_;
  int steps_per_epoch_ = 1, total_steps_ = 0;
  int next_step_ = -1;  // the step being cut on the helper thread (-1: none)
  std::future<Timed> next_;
};

}  // namespace gcnlab
