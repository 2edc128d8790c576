/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-pingpong — which placement the two vCPUs are in: the median round
 * trip of a flag bounced between two threads pinned to CPU 0 and CPU 1.
 *
 * Usage: bench-pingpong [ROUNDS]   (a machine with at least two CPUs)
 *
 * On the 2-vCPU VM the docs' figures come from (docs/benchmarks.md,
 * "near" / "far"), the hypervisor places the two vCPUs so that a round
 * trip costs ~80–130 ns ("near") or ~350–390 ns ("far"); every two-thread
 * figure names the placement this prints. Prints one line per round
 * (1000 trips each, the median of 15 rounds last) and "near"/"far" by a
 * 250 ns cut.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define CPU_RELAX() _mm_pause ()
#else
#define CPU_RELAX() do { } while (0)
#endif

#define TRIPS 1000

static volatile int flag __attribute__ ((aligned (64)));
static volatile int stop;

static void
pin (int cpu)
{
  cpu_set_t set;
  CPU_ZERO (&set);
  CPU_SET (cpu, &set);
  pthread_setaffinity_np (pthread_self (), sizeof set, &set);
}

static void *
echo (void *arg)
{
  (void) arg;
  pin (1);
  while (!stop) {
    int f = flag;
    if (f & 1)
      flag = f + 1;
    else
      CPU_RELAX ();
  }
  return NULL;
}

static double
now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int
cmp (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

int
main (int argc, char **argv)
{
  int rounds = argc > 1 ? atoi (argv[1]) : 15;
  if (rounds < 1 || rounds > 1000)
    rounds = 15;
  double *ns = calloc (rounds, sizeof *ns);
  pthread_t t;
  pin (0);
  pthread_create (&t, NULL, echo, NULL);
  for (int r = 0; r < rounds; r++) {
    double t0 = now_ns ();
    for (int i = 0; i < TRIPS; i++) {
      int f = flag + 1;
      flag = f;
      while (flag == f)
        CPU_RELAX ();
    }
    ns[r] = (now_ns () - t0) / TRIPS;
  }
  stop = 1;
  flag = flag | 1;
  pthread_join (t, NULL);
  qsort (ns, rounds, sizeof *ns, cmp);
  double med = ns[rounds / 2];
  printf ("ping-pong round trip CPU0<->CPU1: median %.0f ns (min %.0f, max %.0f, %d x %d trips): %s\n",
      med, ns[0], ns[rounds - 1], rounds, TRIPS, med < 250 ? "near" : "far");
  free (ns);
  return 0;
}
