/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* team.c — one inference's threads: a fork-join team that hands a layer's
 * slices to the other cores in well under a microsecond.
 *
 * An inference runs one layer after another, many of them in tens of
 * microseconds; handing each layer's slices to the process-wide pool
 * (m2i_parallel_for) wakes a sleeping worker every time, which costs as
 * much as the slices themselves. So an inference on N threads takes
 * N - 1 pool workers once, for its whole length (ir_k_team_run): they
 * stay in a spin loop between layers, and ir_k_parallel_for publishes a
 * layer's slices through one atomic word that every member takes slices
 * from. The thread that called infer() (the master) runs the layers and
 * takes slices too, so a helper that is late — descheduled on a busy
 * machine, or never started because the pool is busy — costs nothing but
 * its share: the master simply takes every slice.
 *
 * Protocol. A job (a layer's parallel loop) is published as one 64-bit
 * word: its number (32 bits), its slice count and the next slice to take
 * (16 bits each), stored after the job's description. A member takes slice
 * s by moving the word from s to s + 1 (compare-and-swap); the count is in
 * the word itself, so a member that lags behind can never take a slice of
 * a job that is over, and one that did take a slice knows the description
 * is that job's: the master writes the next one only after every slice of
 * this one is done. So members need no other handshake: helpers come and
 * go as they are scheduled, and the master only waits for slices that
 * were taken.
 */
#include "kernels-private.h"
#include <base/m2i-parallel.h>

#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define CPU_RELAX() _mm_pause ()
#else
#define CPU_RELAX() do { } while (0)
#endif

#define TEAM_MAX 64
/* A helper spins this long without work before it also yields its core
 * at every check (other processes may want it). */
#define SPIN_BEFORE_YIELD_US 200

#define WORD(job, slices, next) ((guint64) (job) << 32 | (guint64) (slices) << 16 | (next))
#define WORD_SLICES(w) ((gint) ((w) >> 16 & 0xffff))
#define WORD_NEXT(w) ((gint) ((w) & 0xffff))

struct _M2iKTeam {
  gint n_helpers;
  guint64 word __attribute__ ((aligned (64)));   /* see the protocol above; atomic */
  gint done __attribute__ ((aligned (64)));      /* slices of the job finished, atomic */
  gint closed;                                   /* the inference is over, atomic */
  /* The job: written by the master before it publishes the job. */
  M2iParallelFunc func;
  gpointer data;
  gint n;
  guint64 published;                   /* when (monotonic ns) */
  guint32 job;                         /* the master's last job number */
  /* The hand-over: a helper's delay from a job's publication to its
   * taking a slice (ns; sample and job number written by the helper,
   * atomic), smoothed by the master (0: none seen yet). */
  gint64 handover_sample;
  guint32 handover_job;
  gint64 handover_ns;
  gboolean handover_fixed;             /* ir_k_team_fix_handover_ns */
  gboolean alone;                      /* this run's loops all run on the master */
  void (*body) (gpointer);
  gpointer body_data;
  /* Each member's scratch for the slices it runs (ir_k_slice_scratch), or
   * NULL: one block, n_helpers + 1 areas of area_bytes. */
  gpointer areas_raw;
  guint8 *areas;
  gsize area_bytes;
};

/* The team whose master this thread is, while ir_k_team_run runs its
 * body (NULL while the master runs a slice: loops asked for there run
 * alone), and the team whose master this thread is, throughout.
 * Initial-exec: static TLS even when libm2icore is loaded by dlopen (the
 * GStreamer plugin in a program that does not link it), whose dynamic TLS
 * blocks LeakSanitizer's tracer cannot walk; two pointers fit glibc's
 * surplus for that. */
static __thread M2iKTeam *current_team __attribute__ ((tls_model ("initial-exec")));
static __thread M2iKTeam *master_of __attribute__ ((tls_model ("initial-exec")));
/* While a member runs a slice of a team with scratch areas: its own area
 * (ir_k_slice_scratch), else NULL. */
static __thread guint8 *slice_area __attribute__ ((tls_model ("initial-exec")));
static __thread gsize slice_area_bytes __attribute__ ((tls_model ("initial-exec")));

/* M2I_TEAM_HANDOVER_NS, read once: a hand-over every team takes as its
 * own, not measured (to run either placement's paths anywhere); 0 when
 * unset. */
static gint64
handover_forced (void)
{
  static gint64 forced = -1;
  gint64 f = __atomic_load_n (&forced, __ATOMIC_RELAXED);
  if (f < 0) {
    const char *e = g_getenv ("M2I_TEAM_HANDOVER_NS");
    f = e ? CLAMP (g_ascii_strtoll (e, NULL, 10), 0, G_MAXINT32) : 0;
    __atomic_store_n (&forced, f, __ATOMIC_RELAXED);
  }
  return f;
}

M2iKTeam *
ir_k_team_new (gint n_threads)
{
  gint n_helpers = CLAMP (n_threads, 1, TEAM_MAX) - 1;
  /* its words sit on cache lines of their own: 64-byte aligned */
  M2iKTeam *t = g_aligned_alloc0 (1, sizeof (M2iKTeam), G_ALIGNOF (M2iKTeam));
  t->n_helpers = n_helpers;
  ir_k_team_fix_handover_ns (t, handover_forced ());
  return t;
}

void
ir_k_team_free (M2iKTeam *team)
{
  if (team)
    g_free (team->areas_raw);
  g_aligned_free (team);
}

gboolean
ir_k_team_set_slice_scratch (M2iKTeam *team, gsize bytes)
{
  g_free (team->areas_raw);
  team->areas_raw = NULL;
  team->areas = NULL;
  team->area_bytes = 0;
  gsize members = (gsize) team->n_helpers + 1;
  /* whole cache lines, and not a multiple of 4 KiB apart (the members'
   * areas would share L1 sets) */
  gsize area = (bytes + 63) / 64 * 64 + 64;
  if (bytes == 0 || team->n_helpers == 0)
    return TRUE;
  if (area < bytes || area > (G_MAXSIZE - 64) / members)
    return FALSE;
  team->areas_raw = g_try_malloc (area * members + 64);
  if (!team->areas_raw)
    return FALSE;
  team->areas = (guint8 *) (((guintptr) team->areas_raw + 63) & ~(guintptr) 63);
  team->area_bytes = area;
  return TRUE;
}

gsize
ir_k_team_slice_scratch_bytes (void)
{
  return current_team ? current_team->area_bytes : 0;
}

gpointer
ir_k_slice_scratch (gpointer fallback, gsize bytes)
{
  return slice_area && bytes <= slice_area_bytes ? slice_area : fallback;
}

static guint64
now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (guint64) ts.tv_sec * 1000000000u + ts.tv_nsec;
}

/* Takes and runs slices of the published job until none is left. */
static void
take_slices (M2iKTeam *t, gint member)
{
  guint8 *area = t->areas ? t->areas + (gsize) member * t->area_bytes : NULL;
  for (;;) {
    guint64 w = __atomic_load_n (&t->word, __ATOMIC_ACQUIRE);
    gint s = WORD_NEXT (w), slices = WORD_SLICES (w);
    if (s >= slices)
      return;
    if (!__atomic_compare_exchange_n (&t->word, &w, w + 1, FALSE, __ATOMIC_ACQ_REL,
            __ATOMIC_ACQUIRE))
      continue;
    if (member && s == 1) {
      /* a helper's first slice of the job (the master takes slice 0
       * first): how long the hand-over took */
      __atomic_store_n (&t->handover_sample, (gint64) (now_ns () - t->published),
          __ATOMIC_RELAXED);
      __atomic_store_n (&t->handover_job, (guint32) (w >> 32), __ATOMIC_RELAXED);
    }
    gint begin = (gint) ((gint64) t->n * s / slices);
    gint end = (gint) ((gint64) t->n * (s + 1) / slices);
    /* A slice that asks for threads itself runs that loop alone: the
     * team is busy with this job (helpers are pool workers, whose calls
     * run inline anyway; see ir_k_parallel_for). */
    M2iKTeam *saved = current_team;
    current_team = NULL;
    slice_area = area;
    slice_area_bytes = t->area_bytes;
    t->func (begin, end, s, t->data);
    slice_area = NULL;
    current_team = saved;
    __atomic_add_fetch (&t->done, 1, __ATOMIC_RELEASE);
  }
}

static void
helper_main (M2iKTeam *t, gint member)
{
  /* The pool lets a thread waiting in m2i_parallel_for run queued jobs:
   * if that thread is this team's master (a plugin's kernel asked the pool
   * for threads), the helper job must not keep it, or the inference would
   * wait for itself. */
  if (master_of == t)
    return;
  if (t->alone) {
    /* Nothing to take: wait for the end yielding the core at each check,
     * so that other processes have it, but stay at hand for the next
     * run (a helper that returned would be asleep in the pool by then,
     * and late for a split run). */
    while (!__atomic_load_n (&t->closed, __ATOMIC_ACQUIRE))
      g_thread_yield ();
    return;
  }
  gint64 idle_since = 0;
  for (guint i = 0;; i++) {
    guint64 w = __atomic_load_n (&t->word, __ATOMIC_ACQUIRE);
    if (WORD_NEXT (w) < WORD_SLICES (w)) {
      take_slices (t, member);
      idle_since = 0;
      continue;
    }
    if ((i & 15) == 0 && __atomic_load_n (&t->closed, __ATOMIC_ACQUIRE))
      return;
    /* Spin for a while, then also yield the core at each check. */
    CPU_RELAX ();
    if (idle_since == 0)
      idle_since = g_get_monotonic_time ();
    else if ((i & 15) == 0 && g_get_monotonic_time () - idle_since > SPIN_BEFORE_YIELD_US)
      g_thread_yield ();
  }
}

static void
master_main (M2iKTeam *t)
{
  /* This thread may already be another team's master: a pool job it took
   * while waiting in a pool call from that team's slice can run a team
   * of its own. It is that team's master again afterwards. */
  M2iKTeam *outer_master = master_of, *outer_current = current_team;
  master_of = t;
  current_team = t->alone ? NULL : t;
  t->body (t->body_data);
  master_of = outer_master;
  current_team = outer_current;
  __atomic_store_n (&t->closed, 1, __ATOMIC_RELEASE);
}

static void
team_slice (gint begin, gint end, gint slice, gpointer data)
{
  M2iKTeam *t = data;
  for (gint s = begin; s < end; s++) {
    if (s == 0)
      master_main (t);
    else
      helper_main (t, s);
  }
}

static void
team_start (M2iKTeam *team, gboolean alone, void (*body) (gpointer), gpointer data)
{
  /* No helper of an earlier run is left: m2i_parallel_for returned. */
  team->alone = alone;
  team->body = body;
  team->body_data = data;
  team->job = 0;
  /* job numbers start at 1: no earlier run's hand-over sample matches */
  __atomic_store_n (&team->handover_job, 0, __ATOMIC_RELAXED);
  __atomic_store_n (&team->word, 0, __ATOMIC_RELAXED);
  __atomic_store_n (&team->closed, 0, __ATOMIC_RELEASE);
  /* Slice 0 runs here (the caller's own slice comes first); the others
   * are the helpers, picked up by the pool's workers when they can. */
  m2i_parallel_for (team->n_helpers + 1, team->n_helpers + 1, 1, team_slice, team);
}

void
ir_k_team_run (M2iKTeam *team, void (*body) (gpointer), gpointer data)
{
  if (!team || team->n_helpers == 0 || current_team) {
    body (data);
    return;
  }
  team_start (team, FALSE, body, data);
}

void
ir_k_team_run_alone (M2iKTeam *team, void (*body) (gpointer), gpointer data)
{
  if (!team || team->n_helpers == 0 || current_team) {
    body (data);
    return;
  }
  /* The helpers are handed their jobs as in a split run and wait for its
   * end yielding their core (helper_main): other processes have it (a
   * helper spinning through an inference run alone took a core that
   * other processes wanted: 1.73 ms against 1.45 at one thread on a
   * loaded machine), and the helpers stay at hand for the next split
   * run. */
  team_start (team, TRUE, body, data);
}

gboolean
ir_k_team_active (void)
{
  return current_team != NULL;
}

gboolean
ir_k_team_inline (void)
{
  return master_of && !current_team;
}

void
ir_k_team_set_alone (gboolean alone)
{
  /* As while the master runs a slice: its loops run inline. */
  if (master_of)
    current_team = alone ? NULL : master_of;
}

void
ir_k_parallel_for (gint n, gint n_slices, gint min_grain, M2iParallelFunc func,
    gpointer data)
{
  M2iKTeam *t = current_team;
  if (!t) {
    /* Asked from a slice the master runs: alone, as a pool worker would
     * (handing it to the pool could give the master its own helper job);
     * from elsewhere: the pool. The slice's own scratch area is the
     * slice's, not these loops'. */
    guint8 *area = slice_area;
    slice_area = NULL;
    if (master_of) {
      if (n > 0)
        func (0, n, 0, data);
    } else {
      m2i_parallel_for (n, n_slices, min_grain, func, data);
    }
    slice_area = area;
    return;
  }
  if (n <= 0)
    return;
  gint slices = MIN (MIN (MAX (n_slices, 1), MAX (1, n / MAX (min_grain, 1))), 0xffff);
  if (slices <= 1) {
    func (0, n, 0, data);
    return;
  }
  guint32 k = ++t->job;
  t->func = func;
  t->data = data;
  t->n = n;
  t->published = now_ns ();
  __atomic_store_n (&t->done, 0, __ATOMIC_RELAXED);
  __atomic_store_n (&t->word, WORD (k, slices, 0), __ATOMIC_RELEASE);
  take_slices (t, 0);
  while (__atomic_load_n (&t->done, __ATOMIC_ACQUIRE) < slices)
    CPU_RELAX ();
  /* A helper took a slice of this job: smooth its hand-over in (an
   * eighth, at most 2 us: a descheduled helper says nothing of where
   * the threads are). */
  if (!t->handover_fixed && __atomic_load_n (&t->handover_job, __ATOMIC_RELAXED) == k) {
    gint64 x = MIN (__atomic_load_n (&t->handover_sample, __ATOMIC_RELAXED), 2000);
    t->handover_ns = t->handover_ns ? (7 * t->handover_ns + x) / 8 : MAX (x, 1);
  }
}

void
ir_k_team_fix_handover_ns (M2iKTeam *team, gint64 ns)
{
  team->handover_ns = MAX (ns, 0);
  team->handover_fixed = ns > 0;
}

gint64
ir_k_team_handover_ns (void)
{
  return current_team ? current_team->handover_ns : 0;
}
