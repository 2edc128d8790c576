/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* plan-batch.c — several plans as one device submission (the regions of a
 * frame); see m2i_plan_run_batch() in m2i-plan.h. */
#include "engine-private.h"

#include <base/m2i-error.h>
#include <base/m2i-parallel.h>

typedef struct {
  M2iPlan *const *plans;
  const M2iImage *in;
  M2iImage *out;
} Batch;

static void
run_plans (gint begin, gint end, gint slice, gpointer data)
{
  Batch *b = data;
  for (gint i = begin; i < end; i++) {
    GMutex *lock = m2i_plan_lock (b->plans[i]);
    g_mutex_lock (lock);
    m2i_plan_execute (b->plans[i], &b->in[i], &b->out[i]);
    g_mutex_unlock (lock);
  }
}

gboolean
m2i_plan_run_batch (M2iPlan *const *plans, const M2iImage *in, M2iImage *out, guint n,
    GError **error)
{
  if (n == 0)
    return TRUE;
  if (!plans || !in || !out || n > G_MAXINT) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "no plans, inputs or outputs for a batch of %u", n);
    return FALSE;
  }
  guint n_device = 0, n_cpu = 0;
  guint64 read = 0, written = 0, cycles = 0;
  for (guint i = 0; i < n; i++) {
    GError *why = NULL;
    if (!plans[i] || !m2i_plan_check_images (plans[i], &in[i], &out[i], &why)) {
      g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, "plan %u of the batch: %s", i,
          why ? why->message : "no plan");
      g_clear_error (&why);
      m2i_device_account (0, 0, 0, 0, 0, TRUE);
      return FALSE;
    }
    for (guint t = 0; t < m2i_plan_n_tasks (plans[i]); t++) {
      M2iTaskInfo info;
      m2i_plan_get_task (plans[i], t, &info);
      if (info.target == M2I_TASK_DEVICE)
        n_device++;
      else
        n_cpu++;
      read += info.bytes_read;
      written += info.bytes_written;
      cycles += info.cycles;
    }
  }
  Batch b = { plans, in, out };
  m2i_parallel_for ((gint) n, 0, 1, run_plans, &b);
  m2i_device_account (n_device, n_cpu, read, written, cycles, FALSE);
  return TRUE;
}
