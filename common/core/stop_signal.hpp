#pragma once
// A scheduler's stop request (issue 47): SIGTERM (Slurm at the time limit and
// on preemption, KillWait before SIGKILL), SIGUSR1 (what `#SBATCH
// --signal=B:USR1@T` asks for, forwarded by mpirun and srun) and one chosen by
// --stop-signal are caught; the handler only records the first signal. The
// training loop asks `requested()` at every epoch boundary, the ranks agree on
// it there (never inside a collective), write a checkpoint and their results
// and exit with kStoppedExit.
//
//   signal ──> handler: records it, arms alarm(grace)
//   epoch boundary: allreduce(max) of requested() ──> checkpoint, results, exit 75
//   a second signal ──> the default action (the process ends, as without a handler);
//                       the first one again within 2 s counts once (delivered twice)
//   grace passed without an exit ──> one line on rank 0's stderr, _exit(kAbortedExit) on every rank
//
// Everything the handlers do is async-signal-safe (a sig_atomic_t, alarm,
// clock_gettime, signal, raise, write, _exit).

#include <string>
#include <vector>

namespace gcnlab::stop {

// The exit status of a run that stopped on the signal after writing what it
// could: EX_TEMPFAIL of <sysexits.h>, "try again later". The sweep's Slurm
// scripts requeue a run that exits with it.
inline constexpr int kStoppedExit = 75;
// The exit status when the ranks did not reach a stop within the grace.
inline constexpr int kAbortedExit = 1;

// Catches SIGTERM, SIGUSR1 and `extra` (0: none). `grace_s` > 0: a process that
// has not exited that many seconds after the first signal ends itself (`rank`
// 0 says so: a scheduler signals every rank, and their deadlines pass together).
// Idempotent; the previous handlers are not restored (the process ends soon after).
void install(int extra, int grace_s, int rank);

// The first signal caught (0: none).
int requested();

// "USR2", "SIGUSR2" or "12" -> the signal number; throws naming the choices.
int parse(const std::string& name);
// 10 -> "SIGUSR1".
std::string name(int signal);

}  // namespace gcnlab::stop
