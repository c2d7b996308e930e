#include "common/core/progress.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

namespace gcnlab {

namespace {

std::atomic<bool> g_enabled{false};
std::atomic<double> g_every{5.0};  // seconds between lines (the first after as long)

double seconds(std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

void enable_progress(bool on) {
  g_enabled = on;
  if (const char* every = std::getenv("GCNLAB_PROGRESS_EVERY")) g_every = std::max(0.0, std::atof(every));
}
bool progress_enabled() { return g_enabled; }

Progress::Progress(std::string what, double total, std::string unit, double scale, bool announce)
    : what_(std::move(what)), unit_(std::move(unit)), total_(total), scale_(scale), enabled_(g_enabled),
      start_(Clock::now()), last_(start_) {
  if (enabled_ && announce) {
    fmt::print(stderr, "{} ...\n", what_);
    std::fflush(stderr);
    printed_ = true;
  }
}

void Progress::maybe_print() {
  const auto now = Clock::now();
  if (seconds(now - last_) < g_every) return;
  last_ = now;
  printed_ = true;
  const double elapsed = seconds(now - start_), done = done_ / scale_, rate = done / elapsed;
  const std::string unit = unit_.empty() ? "" : " " + unit_;
  if (total_ > 0 && done > 0)
    fmt::print(stderr, "{}: {:.4g}/{:.4g}{} ({:.1f} %), {:.3g}{}/s, {:.0f} s left\n", what_, done, total_, unit,
               100 * done / total_, rate, unit, (total_ - done) / rate);
  else
    fmt::print(stderr, "{}: {:.4g}{}, {:.3g}{}/s, {:.0f} s so far\n", what_, done, unit, rate, unit, elapsed);
  std::fflush(stderr);
}

Progress::~Progress() {
  if (!enabled_) return;
  const double elapsed = seconds(Clock::now() - start_);
  if (!printed_ && elapsed < g_every) return;  // short work prints nothing
  const std::string amount = done_ > 0 ? fmt::format(", {:.4g}{}", done_ / scale_, unit_.empty() ? "" : " " + unit_) : "";
  fmt::print(stderr, "{}: done{} in {:.1f} s\n", what_, amount, elapsed);
  std::fflush(stderr);
}

}  // namespace gcnlab
