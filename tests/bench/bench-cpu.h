/* bench-cpu.h — CPU time of the whole process for the benchmarks.
 *
 * CLOCK_PROCESS_CPUTIME_ID adds the time of the process's *other* running
 * threads only when the scheduler accounts it (at ticks, here every 4 ms,
 * and when they stop running), so a pool worker that spins between frames
 * shows up late and a short round looks cheaper than it was. Each thread's
 * own CPU clock is exact, so on Linux this sums those over /proc/self/task
 * (threads that exit in between are lost; the benchmarks keep theirs).
 * Elsewhere it falls back to the process clock.
 */
#pragma once

#include <glib.h>
#include <stdlib.h>
#include <time.h>

/* Microseconds of CPU time used by all threads of this process so far. */
static inline double
bench_cpu_us (void)
{
  struct timespec t;
#ifdef __linux__
  GDir *d = g_dir_open ("/proc/self/task", 0, NULL);
  if (d) {
    double sum = 0;
    const char *name;
    while ((name = g_dir_read_name (d))) {
      /* glibc's pthread_getcpuclockid encoding: per thread, CPUCLOCK_SCHED */
      unsigned tid = (unsigned) atoi (name);
      clockid_t id = (clockid_t) ((~tid << 3) | 6);
      if (clock_gettime (id, &t) == 0)
        sum += (double) t.tv_sec * 1e6 + (double) t.tv_nsec / 1e3;
    }
    g_dir_close (d);
    return sum;
  }
#endif
  clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double) t.tv_sec * 1e6 + (double) t.tv_nsec / 1e3;
}
