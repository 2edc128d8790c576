/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* m2i-parallel.c — the process-wide worker pool.
 *
 * Jobs (one per slice after the caller's own) go into a FIFO under one
 * mutex. Waking a sleeping thread costs a futex call on each side and, on a
 * busy machine, a scheduling delay of tens of microseconds — as long as a
 * whole slice of a 224x224 task. So both sides first spin briefly:
 *  - an idle worker watches the queue for up to `spin_us` before it sleeps
 *    on the condition variable; the budget adapts (doubled when a job came
 *    while spinning, halved when none did, between SPIN_MIN_US and
 *    SPIN_MAX_US), so back-to-back calls (a pipeline's frames) find a
 *    running worker while a pool that is idle for long, or fed at long
 *    intervals, spins next to nothing;
 *  - a caller whose own slice is done watches its pending count for up to
 *    WAIT_SPIN_US (the other slices are running and about as long) before it
 *    sleeps.
 * Condition variables are signalled only when someone sleeps on them, so a
 * call that finds spinning workers makes no system call at all.
 *
 * A call is split only when that pays (worth_splitting):
 *  - frames before slices: while as many threads as there are cores are
 *    callers inside the pool, or run device jobs (base_parallel_stream_*:
 *    each an inference of its own), a call runs on its caller alone — the
 *    cores already work on several frames, slicing one would only add
 *    hand-overs;
 *  - a worker that spins takes a slice for the price of a queue push;
 *  - waking a sleeping worker costs a futex call on each side and a
 *    scheduling delay, so it is done only for a caller whose calls are
 *    long enough to pay for it (WAKE_MIN_US on average) and come close
 *    together (the time between them, smoothed, shorter than the calls):
 *    when frames arrive far apart (a source slower than the pre-processing,
 *    a live camera), nothing waits for this frame to finish sooner, and
 *    the caller runs it alone instead of paying a wake-up per frame for no
 *    gain in throughput. Each calling thread keeps its own rhythm.
 */
#include "m2i-parallel.h"
#include "base-parallel.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define CPU_RELAX() _mm_pause ()
#else
#define CPU_RELAX() do { } while (0)
#endif

#define MAX_SLICES 64
#define SPIN_MAX_US 20          /* an idle worker spins at most this long, */
#define SPIN_MIN_US 1           /* and at least this long (to notice calls coming
                                   close together again) */
#define WAIT_SPIN_US 50         /* a caller spins this long for running slices */
#define WAKE_MIN_US 30          /* a caller's calls pay for waking a worker from this long */

typedef struct Job Job;
typedef struct Call Call;

struct Job {
  Job *next;
  Call *call;
  gint begin, end, slice;
};

struct Call {
  M2iParallelFunc func;
  gpointer user_data;
  gint pending;                 /* jobs not yet finished; written under pool.lock */
  gboolean sleeping;            /* the caller waits on done; under pool.lock */
  GCond done;
};

static struct {
  GMutex lock;
  GCond work;
  Job *head, *tail;             /* FIFO of jobs, intrusive (jobs live on callers' stacks) */
  gint n_workers;
  gint n_started;               /* workers that reached worker_main; under lock */
  GCond started;                /* signalled when n_started grows */
  gint n_sleeping;              /* workers waiting on `work`; under lock */
  gint queued;                  /* jobs in the FIFO; written under lock, read by spinners */
  gint spin_us;                 /* current spin budget of idle workers */
  gint n_spinning;              /* idle workers watching the queue (atomic) */
  gint callers;                 /* threads inside m2i_parallel_for as callers (atomic) */
  gint streams;                 /* threads running a device job (atomic) */
} pool = { .spin_us = SPIN_MAX_US };

/* When this thread calls and for how long (microseconds, smoothed 1/4). */
typedef struct {
  gint64 last_end;              /* 0: no call yet */
  gint64 work_avg, gap_avg;
} Rhythm;

static _Thread_local Rhythm rhythm;

static GPrivate in_worker;

static Job *
pop_locked (void)
{
  Job *j = pool.head;
  if (j) {
    pool.head = j->next;
    if (!pool.head)
      pool.tail = NULL;
    g_atomic_int_add (&pool.queued, -1);
  }
  return j;
}

/* Runs @j and reports it done. The call's memory may vanish as soon as the
 * lock is released after the last job, so nothing touches it afterwards. */
static void
run_job (Job *j)
{
  Call *c = j->call;
  c->func (j->begin, j->end, j->slice, c->user_data);
  g_mutex_lock (&pool.lock);
  g_atomic_int_add (&c->pending, -1);
  if (g_atomic_int_get (&c->pending) == 0 && c->sleeping)
    g_cond_signal (&c->done);
  g_mutex_unlock (&pool.lock);
}

/* Spins (without the lock) until a job is queued or the budget is spent;
 * adapts the budget. TRUE if a job showed up. */
static gboolean
spin_for_work (void)
{
  gint budget = g_atomic_int_get (&pool.spin_us);
  gint64 end = g_get_monotonic_time () + budget;
  gboolean found = FALSE;
  g_atomic_int_inc (&pool.n_spinning);
  for (guint i = 1;; i++) {
    if (g_atomic_int_get (&pool.queued) > 0) {
      g_atomic_int_set (&pool.spin_us, MIN (SPIN_MAX_US, 2 * budget));
      found = TRUE;
      break;
    }
    CPU_RELAX ();
    if ((i & 63) == 0 && g_get_monotonic_time () > end) {
      g_atomic_int_set (&pool.spin_us, MAX (SPIN_MIN_US, budget / 2));
      break;
    }
  }
  g_atomic_int_add (&pool.n_spinning, -1);
  return found;
}

static gpointer
worker_main (gpointer data)
{
  g_private_set (&in_worker, GINT_TO_POINTER (1));
  g_mutex_lock (&pool.lock);
  pool.n_started++;
  g_cond_broadcast (&pool.started);
  for (;;) {
    Job *j = pop_locked ();
    if (j) {
      g_mutex_unlock (&pool.lock);
      run_job (j);
      g_mutex_lock (&pool.lock);
      continue;
    }
    g_mutex_unlock (&pool.lock);
    gboolean found = spin_for_work ();
    g_mutex_lock (&pool.lock);
    if (found || pool.head)
      continue;
    pool.n_sleeping++;
    g_cond_wait (&pool.work, &pool.lock);
    pool.n_sleeping--;
  }
  return NULL;
}

gint
m2i_parallel_n_cores (void)
{
  /* asked once: g_get_num_processors() reads a sysfs file each time, which
   * costs more than a whole dispatch */
  static gint n_cores;
  static gsize once = 0;
  if (g_once_init_enter (&once)) {
    gint n = (gint) g_get_num_processors ();
    n_cores = n > 0 ? n : 1;
    g_once_init_leave (&once, 1);
  }
  return n_cores;
}

/* Grows the pool to @wanted workers and waits until every one has started:
 * a new thread allocates as it starts (GLib's thread setup creates its
 * per-thread key on first use), and that must happen inside the call that
 * grew the pool, not later in the middle of someone's allocation-free
 * steady state (a worker the scheduler started late once made
 * kernels-noalloc count an allocation). */
static void
ensure_workers_locked (gint wanted)
{
  wanted = MIN (wanted, MAX_SLICES - 1);
  while (pool.n_workers < wanted) {
    GThread *t = g_thread_new ("m2i-worker", worker_main, NULL);
    g_thread_unref (t);         /* workers live for the process */
    g_atomic_int_inc (&pool.n_workers);
  }
  while (pool.n_started < pool.n_workers)
    g_cond_wait (&pool.started, &pool.lock);
}

void
base_parallel_stream_enter (void)
{
  g_atomic_int_inc (&pool.streams);
}

void
base_parallel_stream_leave (void)
{
  g_atomic_int_add (&pool.streams, -1);
}

/* Whether the call of this thread starting at @now should be split (see
 * the top of the file); this thread is counted in pool.callers. */
static gboolean
worth_splitting (gint64 now)
{
  gint cores = m2i_parallel_n_cores ();
  if (g_atomic_int_get (&pool.callers) >= cores || g_atomic_int_get (&pool.streams) >= cores)
    return FALSE;
  if (g_atomic_int_get (&pool.n_spinning) > 0)
    return TRUE;
  return rhythm.last_end && rhythm.work_avg >= WAKE_MIN_US && rhythm.gap_avg < rhythm.work_avg;
}

/* Smooths this thread's rhythm with a call from @start to @end. */
static void
note_call (gint64 start, gint64 end)
{
  gint64 work = end - start, gap = rhythm.last_end ? start - rhythm.last_end : work;
  rhythm.work_avg = rhythm.last_end ? (3 * rhythm.work_avg + work) / 4 : work;
  rhythm.gap_avg = rhythm.last_end ? (3 * rhythm.gap_avg + gap) / 4 : gap;
  rhythm.last_end = end;
}

static void
split_call (gint n, gint n_slices, M2iParallelFunc func, gpointer user_data);

void
m2i_parallel_for (gint n, gint n_slices, gint min_grain,
    M2iParallelFunc func, gpointer user_data)
{
  if (n <= 0)
    return;
  if (n_slices <= 0)
    n_slices = m2i_parallel_n_cores ();
  if (min_grain < 1)
    min_grain = 1;
  n_slices = MIN (n_slices, MAX_SLICES);
  n_slices = MIN (n_slices, MAX (1, n / min_grain));
  if (n_slices <= 1 || g_private_get (&in_worker)) {
    func (0, n, 0, user_data);
    return;
  }
  /* the pool grows to what is asked for even when this call runs alone:
   * its allocations belong to the first call, not to a later steady state */
  if (g_atomic_int_get (&pool.n_workers) < MIN (n_slices - 1, m2i_parallel_n_cores ())) {
    g_mutex_lock (&pool.lock);
    ensure_workers_locked (MIN (n_slices - 1, m2i_parallel_n_cores ()));
    g_mutex_unlock (&pool.lock);
  }
  g_atomic_int_inc (&pool.callers);
  gint64 start = g_get_monotonic_time ();
  if (worth_splitting (start))
    split_call (n, n_slices, func, user_data);
  else
    func (0, n, 0, user_data);
  note_call (start, g_get_monotonic_time ());
  g_atomic_int_add (&pool.callers, -1);
}

static void
split_call (gint n, gint n_slices, M2iParallelFunc func, gpointer user_data)
{

  Job jobs[MAX_SLICES];
  Call call = { func, user_data, n_slices - 1, FALSE };
  g_cond_init (&call.done);
  for (gint s = 0; s < n_slices; s++) {
    jobs[s].next = NULL;
    jobs[s].call = &call;
    jobs[s].begin = (gint) ((gint64) n * s / n_slices);
    jobs[s].end = (gint) ((gint64) n * (s + 1) / n_slices);
    jobs[s].slice = s;
  }

  g_mutex_lock (&pool.lock);
  ensure_workers_locked (MIN (n_slices - 1, m2i_parallel_n_cores ()));
  for (gint s = 1; s < n_slices; s++) {
    if (pool.tail)
      pool.tail->next = &jobs[s];
    else
      pool.head = &jobs[s];
    pool.tail = &jobs[s];
  }
  g_atomic_int_add (&pool.queued, n_slices - 1);
  for (gint s = 0; s < MIN (pool.n_sleeping, n_slices - 1); s++)
    g_cond_signal (&pool.work);
  g_mutex_unlock (&pool.lock);

  func (jobs[0].begin, jobs[0].end, 0, user_data);

  /* Help with queued jobs (ours or others') while ours are unfinished, so a
   * busy pool never stalls a caller; then wait, spinning first. */
  gint64 spin_end = 0;
  for (guint i = 1; g_atomic_int_get (&call.pending) > 0; i++) {
    if (g_atomic_int_get (&pool.queued) > 0) {
      g_mutex_lock (&pool.lock);
      Job *j = pop_locked ();
      g_mutex_unlock (&pool.lock);
      if (j) {
        g_private_set (&in_worker, GINT_TO_POINTER (1));
        run_job (j);
        g_private_set (&in_worker, NULL);
        continue;
      }
    }
    if (spin_end == 0)
      spin_end = g_get_monotonic_time () + WAIT_SPIN_US;
    CPU_RELAX ();
    if ((i & 63) == 0 && g_get_monotonic_time () > spin_end) {
      g_mutex_lock (&pool.lock);
      call.sleeping = TRUE;
      while (g_atomic_int_get (&call.pending) > 0 && !pool.head)
        g_cond_wait (&call.done, &pool.lock);
      call.sleeping = FALSE;
      g_mutex_unlock (&pool.lock);
      spin_end = 0;
    }
  }
  /* The last job's run_job may still hold the lock with &call in hand. */
  g_mutex_lock (&pool.lock);
  g_mutex_unlock (&pool.lock);
  g_cond_clear (&call.done);
}
