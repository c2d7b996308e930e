/* Test runs only (LD_PRELOAD, tests/CMakeLists.txt): a waiting OpenMPI rank
 * sleeps instead of yield-polling while programs outside the job want the CPU.
 *
 * Oversubscribed OpenMPI ranks wait by polling and call sched_yield between
 * polls (mpi_yield_when_idle). Among the job's own ranks that hands the core
 * to a rank with work. Beside other work (a -j4 build) every waiting rank's
 * poll gives the core away for a whole time slice and every message waits for
 * the scheduler to come round to its receiver: measured here, strategies_np4
 * took 24-30 s quiet and more than 300 s beside four busy loops (timed out);
 * with this file, 144 s loaded and 32 s quiet. Sleeping always would cost the
 * quiet case more (55 s): a message waits for its receiver to wake up.
 *
 * So sched_yield looks, at most once a millisecond, at the number of runnable
 * tasks (/proc/loadavg's fourth field). Beyond this node's ranks
 * (OMPI_COMM_WORLD_LOCAL_SIZE) and two more (mpirun, a shell, a passing
 * daemon), work other than ours waits for a core: for the next 100 ms each
 * poll sleeps 50 us instead of yielding. Quiet, it yields as before (the quiet
 * figures above differ by the machine's noise and the moments a passing task
 * tips the count). Results never depend on it: it changes
 * only how long a rank takes to notice a message, never what it receives. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* Runnable tasks on the machine now (the "R" of "R/T" in /proc/loadavg), or -1. */
static int runnable_tasks(void) {
  char text[128];
  const int fd = open("/proc/loadavg", O_RDONLY);
  if (fd < 0) return -1;
  const ssize_t n = read(fd, text, sizeof text - 1);
  close(fd);
  if (n <= 0) return -1;
  text[n] = '\0';
  const char* field = text;
  for (int i = 0; i < 3 && field; ++i) field = strchr(field + 1, ' ');
  return field ? atoi(field + 1) : -1;
}

static int local_ranks = -1;
static long long sleep_until_ns, next_look_ns;

int sched_yield(void) {
  const long long now = now_ns();
  if (local_ranks < 0) {
    const char* size = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    local_ranks = size ? atoi(size) : 1;
  }
  if (now >= sleep_until_ns && now >= next_look_ns) {
    next_look_ns = now + 1000000;
    if (runnable_tasks() > local_ranks + 2) sleep_until_ns = now + 100000000;
  }
  if (now < sleep_until_ns) {
    const struct timespec t = {0, 50000};
    nanosleep(&t, NULL);
    return 0;
  }
  return (int)syscall(SYS_sched_yield);
}
