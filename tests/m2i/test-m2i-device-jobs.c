/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The device's jobs (m2i_device_submit_job): run on an engine thread, their
 * callback and fence carry the job's error; jobs still queued behind busy
 * engines are cancelled; the counters say how many jobs ran and failed,
 * how long the engines were busy and how deep the queue got. Run with one
 * and with two engine threads (meson.build). */
#include <m2i-core/base/m2i-error.h>
#include <m2i-core/m2i/m2i-device.h>

typedef struct {
  gint64 us;                   /* how long it works */
  gboolean fail;
  GThread *ran_on;
  gint done;                   /* callbacks (atomic) */
  gint cancelled;
  GMutex *gate;                /* held by the test until the job may end */
} Job;

static gboolean
run_job (gpointer data, GError **error)
{
  Job *j = data;
  j->ran_on = g_thread_self ();
  if (j->gate) {
    g_mutex_lock (j->gate);
    g_mutex_unlock (j->gate);
  }
  gint64 until = g_get_monotonic_time () + j->us;
  while (g_get_monotonic_time () < until)
    ;
  if (j->fail)
    g_set_error (error, M2I_ERROR, M2I_ERROR_FAILED, "job says no");
  return !j->fail;
}

static void
job_done (M2iFence *fence, const GError *error, gpointer data)
{
  Job *j = data;
  if (g_error_matches (error, M2I_ERROR, M2I_ERROR_CANCELLED))
    g_atomic_int_inc (&j->cancelled);
  g_atomic_int_inc (&j->done);
}

static void
test_jobs (void)
{
  M2iDevice *dev = m2i_device_get_default ();
  guint engines = m2i_device_n_engines (dev);
  m2i_device_reset_counters (dev);
  /* a gate holds every engine busy, so that what follows waits in the queue */
  GMutex gate;
  g_mutex_init (&gate);
  g_mutex_lock (&gate);
  Job *blockers = g_new0 (Job, engines);
  M2iFence **bf = g_new0 (M2iFence *, engines);
  for (guint i = 0; i < engines; i++) {
    blockers[i].gate = &gate;
    blockers[i].us = 2000;
    bf[i] = m2i_device_submit_job (dev, run_job, &blockers[i], job_done, &blockers[i]);
  }
  Job ok = { .us = 1000 }, bad = { .us = 0, .fail = TRUE }, late = { 0 };
  M2iFence *fo = m2i_device_submit_job (dev, run_job, &ok, job_done, &ok);
  M2iFence *fb = m2i_device_submit_job (NULL, run_job, &bad, job_done, &bad);
  M2iFence *fl = m2i_device_submit_job (dev, run_job, &late, job_done, &late);
  /* the three wait behind the blockers (which may not all have started) */
  M2iDeviceCounters c;
  m2i_device_get_counters (dev, &c);
  g_assert_cmpuint (c.queue_depth, >=, 3);
  g_assert_cmpuint (c.max_queue_depth, >=, 3);
  g_assert_true (m2i_fence_cancel (fl));
  g_assert_cmpint (late.cancelled, ==, 1);
  g_assert_null (late.ran_on);
  g_mutex_unlock (&gate);
  GError *err = NULL;
  for (guint i = 0; i < engines; i++) {
    g_assert_true (m2i_fence_wait (bf[i], -1, &err));
    m2i_fence_unref (bf[i]);
  }
  g_assert_true (m2i_fence_wait (fo, -1, &err));
  g_assert_no_error (err);
  g_assert_false (m2i_fence_wait (fb, -1, &err));
  g_assert_error (err, M2I_ERROR, M2I_ERROR_FAILED);
  g_assert_nonnull (strstr (err->message, "job says no"));
  g_clear_error (&err);
  g_assert_false (m2i_fence_wait (fl, 0, &err));
  g_assert_error (err, M2I_ERROR, M2I_ERROR_CANCELLED);
  g_clear_error (&err);
  g_assert_true (ok.ran_on != NULL && ok.ran_on != g_thread_self ());
  g_assert_cmpint (ok.done, ==, 1);
  g_assert_cmpint (bad.done, ==, 1);
  m2i_device_get_counters (dev, &c);
  g_assert_cmpuint (c.jobs, ==, engines + 1);
  g_assert_cmpuint (c.failed, ==, 1);
  g_assert_cmpuint (c.cancelled, ==, 1);
  g_assert_cmpuint (c.queue_depth, ==, 0);
  /* the blockers worked 2 ms after the gate, ok 1 ms */
  g_assert_cmpuint (c.busy_ns, >=, (guint64) (engines * 2000 + 1000) * 1000);
  m2i_fence_unref (fo);
  m2i_fence_unref (fb);
  m2i_fence_unref (fl);
  g_free (bf);
  g_free (blockers);
  g_mutex_clear (&gate);
  /* a reset keeps what waits now, forgets the rest */
  m2i_device_reset_counters (dev);
  m2i_device_get_counters (dev, &c);
  g_assert_cmpuint (c.jobs + c.busy_ns + c.max_queue_depth + c.queue_depth, ==, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/m2i/device/jobs", test_jobs);
  return g_test_run ();
}
