#include "common/core/stop_signal.hpp"

#include <unistd.h>

#include <array>
#include <csignal>
#include <ctime>
#include <cstring>
#include <string_view>

#include "common/core/error.hpp"

namespace gcnlab::stop {

namespace {

volatile std::sig_atomic_t g_requested = 0;
int g_grace_s = 0;
int g_rank = 0;
timespec g_first{};  // when the first signal arrived (CLOCK_MONOTONIC)

// A repeat of the first signal this soon after it is the same request delivered
// twice (a task that receives SIGTERM from its step daemon and through srun, which
// forwards what it receives), not a second one.
constexpr double kDuplicateWindowS = 2.0;

double seconds_since(const timespec& t) {
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<double>(now.tv_sec - t.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec - t.tv_nsec);
}

constexpr std::string_view kGraceMessage =
    "gcnlab: error: the run did not stop within --stop-grace seconds of the stop signal (a rank is held in a "
    "collective or a long step): ending the job without a checkpoint; resume from the last one\n";

void on_alarm(int) {
  if (g_rank == 0) {
    [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, kGraceMessage.data(), kGraceMessage.size());
  }
  ::_exit(kAbortedExit);
}

void on_stop(int sig) {
  if (g_requested != 0) {
    if (sig == g_requested && seconds_since(g_first) < kDuplicateWindowS) return;
    std::signal(sig, SIG_DFL);  // a second signal: what it would have done without us
    std::raise(sig);
    return;
  }
  ::clock_gettime(CLOCK_MONOTONIC, &g_first);
  g_requested = sig;
  if (g_grace_s > 0) ::alarm(static_cast<unsigned>(g_grace_s));
}

// `blocked`: the signals held back while the handler runs. The stop signals
// block each other: a second one arriving inside on_stop's first call would
// otherwise find no request recorded yet and be taken for the first (two
// signals, one request; cli_stop caught it under load).
void catch_signal(int sig, void (*handler)(int), const sigset_t& blocked) {
  struct sigaction sa {};
  sa.sa_handler = handler;
  sa.sa_mask = blocked;
  sa.sa_flags = SA_RESTART;  // reads, writes and waits continue: the loop looks at the flag at its boundary
  GCNLAB_CHECK(::sigaction(sig, &sa, nullptr) == 0, "cannot catch {} ({})", name(sig), std::strerror(errno));
}

struct Named {
  const char* name;
  int signal;
};
// The signals a scheduler can be asked to send that a process may catch.
constexpr std::array<Named, 6> kSignals = {{{"TERM", SIGTERM},
                                            {"USR1", SIGUSR1},
                                            {"USR2", SIGUSR2},
                                            {"INT", SIGINT},
                                            {"HUP", SIGHUP},
                                            {"URG", SIGURG}}};

}  // namespace

void install(int extra, int grace_s, int rank) {
  g_grace_s = grace_s;
  g_rank = rank;
  sigset_t stops;
  sigemptyset(&stops);
  for (const int sig : {SIGTERM, SIGUSR1, extra})
    if (sig) sigaddset(&stops, sig);
  for (const int sig : {SIGTERM, SIGUSR1, extra})
    if (sig) catch_signal(sig, on_stop, stops);
  sigset_t none;
  sigemptyset(&none);
  catch_signal(SIGALRM, on_alarm, none);
}

int requested() { return g_requested; }

int parse(const std::string& text) {
  std::string_view s = text;
  if (s.rfind("SIG", 0) == 0) s.remove_prefix(3);
  for (const Named& n : kSignals)
    if (s == n.name || s == std::to_string(n.signal)) return n.signal;
  fail("--stop-signal takes one of TERM, USR1, USR2, INT, HUP, URG (or its number; got '{}')", text);
}

std::string name(int signal) {
  for (const Named& n : kSignals)
    if (n.signal == signal) return std::string("SIG") + n.name;
  return "signal " + std::to_string(signal);
}

}  // namespace gcnlab::stop
