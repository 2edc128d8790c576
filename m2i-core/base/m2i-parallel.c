#include "m2i-parallel.h"

#define MAX_SLICES 64

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
  gint pending;                 /* jobs not yet finished; under pool.lock */
  GCond done;
};

static struct {
  GMutex lock;
  GCond work;
  Job *head, *tail;             /* FIFO of jobs, intrusive (jobs live on callers' stacks) */
  gint n_workers;
} pool;

static GPrivate in_worker;

static Job *
pop_locked (void)
{
  Job *j = pool.head;
  if (j) {
    pool.head = j->next;
    if (!pool.head)
      pool.tail = NULL;
  }
  return j;
}

static void
finish_locked (Job *j)
{
  Call *c = j->call;
  if (--c->pending == 0)
    g_cond_broadcast (&c->done);
}

static gpointer
worker_main (gpointer data)
{
  g_private_set (&in_worker, GINT_TO_POINTER (1));
  g_mutex_lock (&pool.lock);
  for (;;) {
    Job *j = pop_locked ();
    if (!j) {
      g_cond_wait (&pool.work, &pool.lock);
      continue;
    }
    g_mutex_unlock (&pool.lock);
    j->call->func (j->begin, j->end, j->slice, j->call->user_data);
    g_mutex_lock (&pool.lock);
    finish_locked (j);
  }
  return NULL;
}

gint
m2i_parallel_n_cores (void)
{
  gint n = (gint) g_get_num_processors ();
  return n > 0 ? n : 1;
}

static void
ensure_workers_locked (gint wanted)
{
  wanted = MIN (wanted, MAX_SLICES - 1);
  while (pool.n_workers < wanted) {
    GThread *t = g_thread_new ("m2i-worker", worker_main, NULL);
    g_thread_unref (t);         /* workers live for the process */
    pool.n_workers++;
  }
}

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

  Job jobs[MAX_SLICES];
  Call call = { func, user_data, n_slices - 1 };
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
  g_cond_broadcast (&pool.work);
  g_mutex_unlock (&pool.lock);

  func (jobs[0].begin, jobs[0].end, 0, user_data);

  /* Help with queued jobs (ours or others') while ours are unfinished, so a
   * busy pool never stalls a caller. */
  g_mutex_lock (&pool.lock);
  while (call.pending > 0) {
    Job *j = pop_locked ();
    if (j) {
      g_mutex_unlock (&pool.lock);
      g_private_set (&in_worker, GINT_TO_POINTER (1));
      j->call->func (j->begin, j->end, j->slice, j->call->user_data);
      g_private_set (&in_worker, NULL);
      g_mutex_lock (&pool.lock);
      finish_locked (j);
    } else {
      g_cond_wait (&call.done, &pool.lock);
    }
  }
  g_mutex_unlock (&pool.lock);
  g_cond_clear (&call.done);
}
