/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-time.h — the wall-clock timing and the command line the layer
 * benchmarks (bench-conv, bench-npu) share.
 *
 * M2I_BENCH_CLOCK=thread in the environment times with the calling
 * thread's CPU clock instead: on a machine loaded far beyond its cores the
 * wall clock of a run of milliseconds includes the time other processes
 * held the core, and no batch escapes it; the CPU clock does not count
 * that (it still counts what their cache traffic costs). Two-thread
 * figures are then the calling thread's share only. */
#pragma once

#include <glib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* One run of the code under test; FALSE (and @error set when non-NULL) on
 * failure. */
typedef gboolean (*BenchRunFunc) (gpointer ctx, GError **error);

static inline double
bench_now_s (void)
{
  static gint thread_clock = -1;
  if (thread_clock < 0)
    thread_clock = !g_strcmp0 (g_getenv ("M2I_BENCH_CLOCK"), "thread");
  if (thread_clock) {
    struct timespec ts;
    clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
  }
  return g_get_monotonic_time () / 1e6;
}

/* Runs @run in batches of about 2 ms until @min_ms have passed; returns
 * the seconds per run of the fastest batch (the machine is shared, so the
 * minimum is the figure least disturbed by other work). The first run
 * (warm-up, and the batch size) must succeed, else the program stops with
 * its error. */
static inline double
bench_time_runs (BenchRunFunc run, gpointer ctx, double min_ms)
{
  GError *error = NULL;
  if (!run (ctx, &error))
    g_error ("run failed: %s", error ? error->message : "(no message)");
  double t0 = bench_now_s ();
  run (ctx, NULL);
  double once = MAX (bench_now_s () - t0, 1e-7);
  gint batch = (gint) CLAMP (2e-3 / once, 1, 10000);
  double best = G_MAXDOUBLE, start = bench_now_s ();
  do {
    double b0 = bench_now_s ();
    for (gint i = 0; i < batch; i++)
      run (ctx, NULL);
    best = MIN (best, (bench_now_s () - b0) / batch);
  } while ((bench_now_s () - start) * 1e3 < min_ms);
  return best;
}

/* Reads [--min-ms N] [--filter SUBSTRING] into @min_ms and @filter (left
 * as they are when absent); on anything else prints the usage and returns
 * FALSE. */
static inline gboolean
bench_parse_args (int argc, char **argv, double *min_ms, const char **filter)
{
  for (int i = 1; i < argc; i++) {
    if (!strcmp (argv[i], "--min-ms") && i + 1 < argc)
      *min_ms = g_ascii_strtod (argv[++i], NULL);
    else if (!strcmp (argv[i], "--filter") && i + 1 < argc)
      *filter = argv[++i];
    else {
      fprintf (stderr, "usage: %s [--min-ms N] [--filter SUBSTRING]\n", argv[0]);
      return FALSE;
    }
  }
  return TRUE;
}
