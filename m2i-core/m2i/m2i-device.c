/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* m2i-device.c — the process-wide simulated M2I device.
 *
 * One mutex guards the queue, the fences' states, the free list of fences
 * and the counters. Engine threads pop runs in FIFO order and execute them
 * (the plan's own lock keeps runs of one plan apart). A finished run calls
 * its callback first, then marks the fence done and wakes waiters, so a
 * waiter that returns may free whatever the callback used.
 */
#include "m2i-device.h"
#include "engine-private.h"

#include <base/m2i-error.h>
#include <base/base-parallel.h>
#include <base/m2i-parallel.h>
#include <stdlib.h>
#include <string.h>

enum { FENCE_QUEUED, FENCE_RUNNING, FENCE_DONE };

struct M2iFence {
  M2iFence *next;              /* queue or free-list link */
  gint ref;                    /* under dev.lock */
  gint state;
  M2iPlan *plan;               /* a plan run, or NULL for a job */
  M2iImage in, out;
  M2iDeviceJobFunc job;
  gpointer job_data;
  M2iFenceFunc func;
  gpointer user_data;
  GError *error;
  GCond cond;
};

struct M2iDevice {
  GMutex lock;
  GCond work;                  /* queue not empty */
  GCond idle;                  /* a run finished */
  M2iFence *head, *tail;
  M2iFence *free_list;
  M2iDeviceCounters c;
  guint n_engines;
  M2iFence *running[16];       /* what each engine runs, or NULL */
};

static M2iDevice device;

static gpointer engine_main (gpointer data);

M2iDevice *
m2i_device_get_default (void)
{
  static gsize once = 0;
  if (g_once_init_enter (&once)) {
    g_mutex_init (&device.lock);
    g_cond_init (&device.work);
    g_cond_init (&device.idle);
    const char *e = g_getenv ("M2I_DEVICE_ENGINES");
    gint n = e ? atoi (e) : m2i_parallel_n_cores ();
    device.n_engines = (guint) CLAMP (n, 1, (gint) G_N_ELEMENTS (device.running));
    for (guint i = 0; i < device.n_engines; i++)
      g_thread_unref (g_thread_new ("m2i-engine", engine_main, GUINT_TO_POINTER (i)));
    g_once_init_leave (&once, 1);
  }
  return &device;
}

guint
m2i_device_n_engines (M2iDevice *dev)
{
  return dev->n_engines;
}

void
m2i_device_get_counters (M2iDevice *dev, M2iDeviceCounters *out)
{
  g_mutex_lock (&dev->lock);
  *out = dev->c;
  g_mutex_unlock (&dev->lock);
}

void
m2i_device_reset_counters (M2iDevice *dev)
{
  g_mutex_lock (&dev->lock);
  guint depth = dev->c.queue_depth;
  memset (&dev->c, 0, sizeof dev->c);
  dev->c.queue_depth = dev->c.max_queue_depth = depth;
  g_mutex_unlock (&dev->lock);
}

void
m2i_device_account (guint n_device, guint n_cpu, guint64 bytes_read,
    guint64 bytes_written, guint64 cycles, gboolean failed)
{
  M2iDevice *dev = m2i_device_get_default ();
  g_mutex_lock (&dev->lock);
  if (failed) {
    dev->c.failed++;
  } else {
    dev->c.runs++;
    dev->c.tasks_total += n_device + n_cpu;
    dev->c.tasks_device += n_device;
    dev->c.tasks_cpu += n_cpu;
    dev->c.bytes_read += bytes_read;
    dev->c.bytes_written += bytes_written;
    dev->c.cycles += cycles;
  }
  g_mutex_unlock (&dev->lock);
}

void
m2i_device_account_work (M2iDevice *dev, M2iDeviceTarget target, guint n_tasks,
    guint64 bytes_read, guint64 bytes_written, guint64 cycles)
{
  if (target != M2I_DEVICE_TARGET_DEVICE && target != M2I_DEVICE_TARGET_CPU)
    return;
  if (!dev)
    dev = m2i_device_get_default ();
  g_mutex_lock (&dev->lock);
  dev->c.runs++;
  dev->c.tasks_total += n_tasks;
  if (target == M2I_DEVICE_TARGET_DEVICE) {
    dev->c.tasks_device += n_tasks;
    dev->c.cycles += cycles;
  } else {
    dev->c.tasks_cpu += n_tasks;
  }
  dev->c.bytes_read += bytes_read;
  dev->c.bytes_written += bytes_written;
  g_mutex_unlock (&dev->lock);
}

/* ---- fences ---------------------------------------------------------------- */

static void
unref_locked (M2iDevice *dev, M2iFence *f)
{
  if (--f->ref > 0)
    return;
  g_clear_error (&f->error);
  f->plan = NULL;
  f->next = dev->free_list;
  dev->free_list = f;
}

M2iFence *
m2i_fence_ref (M2iFence *fence)
{
  M2iDevice *dev = m2i_device_get_default ();
  g_mutex_lock (&dev->lock);
  fence->ref++;
  g_mutex_unlock (&dev->lock);
  return fence;
}

void
m2i_fence_unref (M2iFence *fence)
{
  if (!fence)
    return;
  M2iDevice *dev = m2i_device_get_default ();
  g_mutex_lock (&dev->lock);
  unref_locked (dev, fence);
  g_mutex_unlock (&dev->lock);
}

/* Completes @f (not in the queue any more): callback, then done + wake. */
static void
complete (M2iDevice *dev, M2iFence *f)
{
  if (f->func)
    f->func (f, f->error, f->user_data);
  g_mutex_lock (&dev->lock);
  f->state = FENCE_DONE;
  g_cond_broadcast (&f->cond);
  g_cond_broadcast (&dev->idle);
  unref_locked (dev, f);              /* the device's reference */
  g_mutex_unlock (&dev->lock);
}

/* A fence from the free list (or new), queued state, no work yet. */
static M2iFence *
new_fence_locked (M2iDevice *dev, M2iFenceFunc func, gpointer user_data)
{
  M2iFence *f = dev->free_list;
  if (f) {
    dev->free_list = f->next;
  } else {
    f = g_new0 (M2iFence, 1);
    g_cond_init (&f->cond);         /* fences live for the process */
  }
  f->next = NULL;
  f->ref = 2;                        /* caller + device */
  f->state = FENCE_QUEUED;
  f->plan = NULL;
  f->job = NULL;
  f->job_data = NULL;
  f->func = func;
  f->user_data = user_data;
  f->error = NULL;
  return f;
}

static void
enqueue_locked (M2iDevice *dev, M2iFence *f)
{
  if (dev->tail)
    dev->tail->next = f;
  else
    dev->head = f;
  dev->tail = f;
  dev->c.queue_depth++;
  dev->c.max_queue_depth = MAX (dev->c.max_queue_depth, dev->c.queue_depth);
  g_cond_signal (&dev->work);
}

M2iFence *
m2i_plan_submit (M2iPlan *plan, const M2iImage *in, M2iImage *out,
    M2iFenceFunc func, gpointer user_data, GError **error)
{
  M2iDevice *dev = m2i_device_get_default ();
  if (!plan) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, "no plan to submit");
    return NULL;
  }
  if (!m2i_plan_check_images (plan, in, out, error)) {
    m2i_device_account (0, 0, 0, 0, 0, TRUE);
    return NULL;
  }
  g_mutex_lock (&dev->lock);
  M2iFence *f = new_fence_locked (dev, func, user_data);
  f->plan = plan;
  f->in = *in;
  f->out = *out;
  enqueue_locked (dev, f);
  g_mutex_unlock (&dev->lock);
  return f;
}

M2iFence *
m2i_device_submit_job (M2iDevice *dev, M2iDeviceJobFunc job, gpointer data, M2iFenceFunc func,
    gpointer user_data)
{
  if (!dev)
    dev = m2i_device_get_default ();
  g_mutex_lock (&dev->lock);
  M2iFence *f = new_fence_locked (dev, func, user_data);
  f->job = job;
  f->job_data = data;
  enqueue_locked (dev, f);
  g_mutex_unlock (&dev->lock);
  return f;
}

gboolean
m2i_fence_wait (M2iFence *fence, gint64 timeout_us, GError **error)
{
  M2iDevice *dev = m2i_device_get_default ();
  gint64 deadline = timeout_us >= 0 ? g_get_monotonic_time () + timeout_us : 0;
  g_mutex_lock (&dev->lock);
  while (fence->state != FENCE_DONE) {
    if (timeout_us < 0) {
      g_cond_wait (&fence->cond, &dev->lock);
    } else if (!g_cond_wait_until (&fence->cond, &dev->lock, deadline)
        && fence->state != FENCE_DONE) {
      g_mutex_unlock (&dev->lock);
      g_set_error (error, M2I_ERROR, M2I_ERROR_FAILED,
          "timed out after %" G_GINT64_FORMAT " us waiting for an M2I run", timeout_us);
      return FALSE;
    }
  }
  gboolean ok = fence->error == NULL;
  if (!ok && error)
    *error = g_error_copy (fence->error);
  g_mutex_unlock (&dev->lock);
  return ok;
}

gboolean
m2i_fence_is_done (M2iFence *fence)
{
  M2iDevice *dev = m2i_device_get_default ();
  g_mutex_lock (&dev->lock);
  gboolean done = fence->state == FENCE_DONE;
  g_mutex_unlock (&dev->lock);
  return done;
}

/* Unlinks @f from the queue; dev->lock held, f queued. */
static void
unlink_locked (M2iDevice *dev, M2iFence *f)
{
  M2iFence *prev = NULL;
  for (M2iFence *q = dev->head; q; prev = q, q = q->next) {
    if (q != f)
      continue;
    if (prev)
      prev->next = q->next;
    else
      dev->head = q->next;
    if (dev->tail == q)
      dev->tail = prev;
    q->next = NULL;
    dev->c.queue_depth--;
    return;
  }
}

static void
cancel_locked (M2iDevice *dev, M2iFence *f)
{
  unlink_locked (dev, f);
  f->state = FENCE_RUNNING;          /* out of the queue, completing */
  f->error = g_error_new (M2I_ERROR, M2I_ERROR_CANCELLED, f->plan ?
      "the M2I run was cancelled before it started" :
      "the device job was cancelled before it started");
  dev->c.cancelled++;
}

gboolean
m2i_fence_cancel (M2iFence *fence)
{
  M2iDevice *dev = m2i_device_get_default ();
  g_mutex_lock (&dev->lock);
  if (fence->state != FENCE_QUEUED) {
    g_mutex_unlock (&dev->lock);
    return FALSE;
  }
  cancel_locked (dev, fence);
  g_mutex_unlock (&dev->lock);
  complete (dev, fence);
  return TRUE;
}

/* Whether an engine runs @plan (anything if NULL). */
static gboolean
plan_running_locked (M2iDevice *dev, M2iPlan *plan)
{
  for (guint i = 0; i < dev->n_engines; i++)
    if (dev->running[i] && (!plan || dev->running[i]->plan == plan))
      return TRUE;
  return FALSE;
}

guint
m2i_device_cancel_plan (M2iDevice *dev, M2iPlan *plan)
{
  guint n = 0;
  for (;;) {
    g_mutex_lock (&dev->lock);
    M2iFence *f = dev->head;
    while (f && plan && f->plan != plan)
      f = f->next;
    if (!f) {
      while (plan_running_locked (dev, plan))
        g_cond_wait (&dev->idle, &dev->lock);
      g_mutex_unlock (&dev->lock);
      return n;
    }
    cancel_locked (dev, f);
    g_mutex_unlock (&dev->lock);
    complete (dev, f);
    n++;
  }
}

/* ---- engines ----------------------------------------------------------------- */

/* Runs @f (out of the queue) on this engine; returns its error or NULL. */
static GError *
execute (M2iFence *f)
{
  GError *error = NULL;
  if (f->job) {
    /* a frame of its own: the pool slices it only while cores are free */
    base_parallel_stream_enter ();
    if (!f->job (f->job_data, &error) && !error)
      error = g_error_new (M2I_ERROR, M2I_ERROR_FAILED, "a device job failed");
    base_parallel_stream_leave ();
    return error;
  }
  M2iPlan *plan = f->plan;
  g_mutex_lock (m2i_plan_lock (plan));
  m2i_plan_execute (plan, &f->in, &f->out);
  g_mutex_unlock (m2i_plan_lock (plan));
  m2i_plan_account (plan);
  return NULL;
}

static gpointer
engine_main (gpointer data)
{
  guint id = GPOINTER_TO_UINT (data);
  M2iDevice *dev = &device;
  g_mutex_lock (&dev->lock);
  for (;;) {
    /* The oldest run whose plan no other engine is running (runs of one
     * plan keep their submission order), or the oldest job. */
    M2iFence *f = dev->head;
    while (f && f->plan && plan_running_locked (dev, f->plan))
      f = f->next;
    if (!f) {
      g_cond_wait (&dev->work, &dev->lock);
      continue;
    }
    unlink_locked (dev, f);
    f->state = FENCE_RUNNING;
    dev->running[id] = f;
    g_mutex_unlock (&dev->lock);

    gint64 t0 = g_get_monotonic_time ();
    f->error = execute (f);
    gint64 busy = g_get_monotonic_time () - t0;
    /* counted before the callback: whoever it wakes sees the work counted */
    g_mutex_lock (&dev->lock);
    dev->c.busy_ns += (guint64) busy * 1000;
    if (f->job) {
      if (f->error)
        dev->c.failed++;
      else
        dev->c.jobs++;
    }
    g_mutex_unlock (&dev->lock);
    if (f->func)
      f->func (f, f->error, f->user_data);

    g_mutex_lock (&dev->lock);
    dev->running[id] = NULL;
    f->state = FENCE_DONE;
    g_cond_broadcast (&f->cond);
    g_cond_broadcast (&dev->idle);
    g_cond_broadcast (&dev->work);     /* runs held back for this plan */
    unref_locked (dev, f);
  }
  return NULL;
}
