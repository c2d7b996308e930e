#include "common/core/stop_signal.hpp"

#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <csignal>
#include <ctime>
#include <cstring>
#include <string_view>

#include "common/core/error.hpp"

namespace gcnlab::stop {

namespace {

// A process-directed signal goes to any thread that does not block it (MPI's and
// PMIx's threads among them), so two signals can be handled at once on two threads:
// the first request is claimed by compare-and-swap (lock-free atomics are
// async-signal-safe), and the loser is the second signal, whichever thread it is on.
std::atomic<int> g_requested{0};
std::atomic<std::int64_t> g_first_ns{0};  // when the first signal arrived (CLOCK_MONOTONIC); 0: being recorded
static_assert(std::atomic<int>::is_always_lock_free && std::atomic<std::int64_t>::is_always_lock_free);
int g_grace_s = 0;
int g_rank = 0;

// A repeat of the first signal this soon after it is the same request delivered
// twice (a task that receives SIGTERM from its step daemon and through srun, which
// forwards what it receives), not a second one.
constexpr std::int64_t kDuplicateWindowNs = 2'000'000'000;

std::int64_t now_ns() {
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
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
  const std::int64_t now = now_ns();
  int first = 0;
  if (!g_requested.compare_exchange_strong(first, sig)) {
    // The same signal again within the window (or while its first delivery, on another
    // thread, is still recording its time) is the same request.
    const std::int64_t at = g_first_ns.load();
    if (sig == first && (at == 0 || now - at < kDuplicateWindowNs)) return;
    std::signal(sig, SIG_DFL);  // a second signal: what it would have done without us
    std::raise(sig);
    return;
  }
  g_first_ns.store(now);
  if (g_grace_s > 0) ::alarm(static_cast<unsigned>(g_grace_s));
}

// `blocked`: the signals held back while the handler runs. The stop signals
// block each other on the handler's thread (a second one arriving inside on_stop's
// first call would otherwise interrupt it before its request is claimed); across
// threads the compare-and-swap above decides (two signals, one request: cli_stop
// caught each under load).
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

int requested() { return g_requested.load(); }

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
