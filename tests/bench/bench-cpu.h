/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-cpu.h — CPU time of the whole process for the benchmarks.
 *
 * CLOCK_PROCESS_CPUTIME_ID sums the runtime the scheduler has accounted to
 * each thread; for the process's *other* running threads that happens only
 * at ticks (here every 4 ms) or when they stop, so a pool worker that spins
 * between frames shows up late and a short round looks cheaper than it was.
 * Reading a thread's own CPU clock brings its account up to date, so on
 * Linux this reads every live thread's clock first (/proc/self/task), then
 * the process clock (which also keeps the time of threads that exited).
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
  const char *name;
  while (d && (name = g_dir_read_name (d))) {
    /* glibc's pthread_getcpuclockid encoding: per thread, CPUCLOCK_SCHED */
    unsigned tid = (unsigned) atoi (name);
    clock_gettime ((clockid_t) ((~tid << 3) | 6), &t);
  }
  if (d)
    g_dir_close (d);
#endif
  clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double) t.tv_sec * 1e6 + (double) t.tv_nsec / 1e3;
}
