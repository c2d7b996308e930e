#include "common/model/minibatch.hpp"

#include <algorithm>
#include <chrono>

#include "common/core/error.hpp"
#include "common/data/sampling.hpp"

namespace gcnlab {

namespace {
using Clock = Ledger::Clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
}  // namespace

MinibatchSchedule::MinibatchSchedule(const Strategy& strategy, Ledger& ledger, std::int64_t n,
                                     const TrainConfig& train, std::uint64_t seed)
    : strategy_(strategy), ledger_(ledger), n_(n), batch_size_(train.batch_size), seed_(seed),
      prefetch_(train.prefetch) {
  GCNLAB_CHECK(batch_size_ <= n_, "--batch-size {} exceeds the graph's {} vertices", batch_size_, n_);
  const auto groups = static_cast<std::int64_t>(strategy_.data_parallel()[0]);
  // an epoch samples about N vertices over the D groups unless --steps-per-epoch says otherwise
  steps_per_epoch_ = train.steps_per_epoch > 0
                         ? train.steps_per_epoch
                         : static_cast<int>((n_ + batch_size_ * groups - 1) / (batch_size_ * groups));
  total_steps_ = train.epochs * steps_per_epoch_;
}

MinibatchSchedule::Timed MinibatchSchedule::make(int step) const {
  const auto t0 = Clock::now();
  auto c = strategy_.cut(
      uniform_sample(n_, batch_size_, seed_, static_cast<std::uint64_t>(step), strategy_.data_parallel()[1]));
  return {std::move(c), seconds_since(t0)};
}

std::unique_ptr<SampleCut> MinibatchSchedule::cut(int step) {
  std::unique_ptr<SampleCut> c;
  if (next_step_ == step) {
    const auto t0 = Clock::now();
    auto [cut, work_s] = next_.get();
    // the helper's work beyond what this thread waited for it was hidden by the previous step
    Tally hidden;
    hidden.hidden_s = std::max(0.0, work_s - seconds_since(t0));
    ledger_.record(Category::sampling, hidden);
    c = std::move(cut);
  } else {
    c = make(step).first;
  }
  next_step_ = -1;
  next_ = {};
  if (prefetch_ && step + 1 < total_steps_) {
    next_step_ = step + 1;
    next_ = std::async(std::launch::async, [this](int k) { return make(k); }, step + 1);
  }
  return c;
}

}  // namespace gcnlab
