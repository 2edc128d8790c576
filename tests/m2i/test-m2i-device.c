/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The shared device: async runs equal sync ones, callbacks, many threads at
 * once, fences with timeouts, cancellation of queued runs, counters. Run with
 * one and with two engine threads (see meson.build). */
#include "m2i-test-util.h"

typedef struct {
  M2iPlan *plan;
  TestImage in, out, ref;
} Job;

static void
job_init (Job *j, gint w, gint h, guint32 seed, M2iProfile prof)
{
  GRand *rand = g_rand_new_with_seed (seed);
  M2iOpList ops;
  M2iResizeParams rp;
  M2iNormParams n;
  m2i_resize_params_init (&rp, w / 3, h / 3);
  rp.mode = M2I_RESIZE_LINEAR;
  m2i_norm_params_identity (&n);
  m2i_op_list_init (&ops);
  m2i_op_list_add_csc (&ops, M2I_ORDER_RGB);
  m2i_op_list_add_convert (&ops, M2I_DTYPE_F16);
  m2i_op_list_add_resize (&ops, &rp);
  m2i_op_list_add_permute (&ops);
  m2i_op_list_add_norm (&ops, &n);
  test_image_alloc_padded (&j->in, M2I_FORMAT_SP_NV12_8, w, h, 0, 0);
  test_image_pattern (&j->in, rand);
  test_image_alloc_padded (&j->out, M2I_FORMAT_PL_FP16_RGB, w / 3, h / 3, 0, 0);
  test_image_alloc_padded (&j->ref, M2I_FORMAT_PL_FP16_RGB, w / 3, h / 3, 0, 0);
  g_assert_true (m2i_reference_run (&j->in.img, &ops, &j->ref.img, NULL));
  M2iPlanOptions o = { prof, 1 };
  GError *err = NULL;
  j->plan = m2i_plan_new (&j->in.img, &ops, &j->out.img, &o, &err);
  g_assert_no_error (err);
  g_rand_free (rand);
}

static void
job_clear (Job *j)
{
  m2i_plan_free (j->plan);
  test_image_free (&j->in);
  test_image_free (&j->out);
  test_image_free (&j->ref);
}

static gboolean
job_correct (Job *j)
{
  return test_image_max_diff (&j->ref.img, &j->out.img) <= 1;
}

static void
count_cb (M2iFence *f, const GError *error, gpointer data)
{
  g_assert_no_error ((GError *) error);
  g_atomic_int_inc ((gint *) data);
}

static void
test_async_equals_sync (void)
{
  Job j;
  job_init (&j, 120, 90, 1, M2I_PROFILE_EXTENDED);
  M2iDevice *dev = m2i_device_get_default ();
  m2i_device_reset_counters (dev);
  gint calls = 0;
  GError *err = NULL;
  M2iFence *f = m2i_plan_submit (j.plan, &j.in.img, &j.out.img, count_cb, &calls, &err);
  g_assert_no_error (err);
  g_assert_true (m2i_fence_wait (f, -1, &err));
  g_assert_true (m2i_fence_is_done (f));
  g_assert_false (m2i_fence_cancel (f));       /* too late */
  m2i_fence_unref (f);
  g_assert_cmpint (g_atomic_int_get (&calls), ==, 1);
  g_assert_true (job_correct (&j));
  /* one run, one device task, the bytes the plan announced */
  M2iDeviceCounters c;
  m2i_device_get_counters (dev, &c);
  M2iTaskInfo t;
  m2i_plan_get_task (j.plan, 0, &t);
  g_assert_cmpuint (c.runs, ==, 1);
  g_assert_cmpuint (c.tasks_total, ==, 1);
  g_assert_cmpuint (c.tasks_device, ==, 1);
  g_assert_cmpuint (c.tasks_cpu, ==, 0);
  g_assert_cmpuint (c.bytes_read, ==, t.bytes_read);
  g_assert_cmpuint (c.bytes_written, ==, t.bytes_written);
  g_assert_cmpuint (c.cycles, ==, t.cycles);
  g_assert_cmpuint (c.cycles, >, 0);
  /* a sync run counts the same way; a bad submission counts as failed */
  memset (j.out.mem, 0, j.out.size);
  g_assert_true (m2i_plan_run (j.plan, &j.in.img, &j.out.img, &err));
  g_assert_true (job_correct (&j));
  M2iImage bad = j.out.img;
  bad.size[0] = 1;
  g_assert_null (m2i_plan_submit (j.plan, &j.in.img, &bad, NULL, NULL, &err));
  g_assert_error (err, M2I_ERROR, M2I_ERROR_BUFFER_TOO_SMALL);
  g_clear_error (&err);
  m2i_device_get_counters (dev, &c);
  g_assert_cmpuint (c.runs, ==, 2);
  g_assert_cmpuint (c.failed, ==, 1);
  m2i_device_reset_counters (dev);
  m2i_device_get_counters (dev, &c);
  g_assert_cmpuint (c.runs + c.tasks_total + c.bytes_read + c.cycles + c.failed, ==, 0);
  job_clear (&j);
}

/* Default profile: the same chain is two device tasks (norm not fused). */
static void
test_counts_default_profile (void)
{
  Job j;
  job_init (&j, 60, 30, 2, M2I_PROFILE_DEFAULT);
  M2iDevice *dev = m2i_device_get_default ();
  m2i_device_reset_counters (dev);
  g_assert_true (m2i_plan_run (j.plan, &j.in.img, &j.out.img, NULL));
  M2iDeviceCounters c;
  m2i_device_get_counters (dev, &c);
  g_assert_cmpuint (c.tasks_device, ==, 2);
  g_assert_cmpuint (c.tasks_total, ==, 2);
  g_assert_true (job_correct (&j));
  job_clear (&j);
}

#define N_THREADS 6
#define N_FRAMES 20

static gpointer
worker (gpointer data)
{
  guint id = GPOINTER_TO_UINT (data);
  Job j;
  job_init (&j, 66 + 6 * (gint) id, 48, id + 10, id & 1);
  gint calls = 0;
  for (int i = 0; i < N_FRAMES; i++) {
    memset (j.out.mem, 0xff, j.out.size);
    if (i & 1) {
      g_assert_true (m2i_plan_run (j.plan, &j.in.img, &j.out.img, NULL));
    } else {
      M2iFence *f = m2i_plan_submit (j.plan, &j.in.img, &j.out.img, count_cb, &calls, NULL);
      g_assert_true (m2i_fence_wait (f, -1, NULL));
      m2i_fence_unref (f);
    }
    g_assert_true (job_correct (&j));
  }
  g_assert_cmpint (g_atomic_int_get (&calls), ==, N_FRAMES / 2);
  job_clear (&j);
  return NULL;
}

static void
test_many_threads (void)
{
  M2iDevice *dev = m2i_device_get_default ();
  m2i_device_reset_counters (dev);
  GThread *t[N_THREADS];
  for (guint i = 0; i < N_THREADS; i++)
    t[i] = g_thread_new ("user", worker, GUINT_TO_POINTER (i));
  for (guint i = 0; i < N_THREADS; i++)
    g_thread_join (t[i]);
  M2iDeviceCounters c;
  m2i_device_get_counters (dev, &c);
  g_assert_cmpuint (c.runs, ==, N_THREADS * N_FRAMES);
  /* odd ids use the extended profile (1 task), even ones default (2) */
  g_assert_cmpuint (c.tasks_device, ==, N_FRAMES * (N_THREADS / 2) * 3);
  g_assert_cmpuint (c.tasks_cpu, ==, 0);
}

/* Blocks an engine inside a callback until released. */
typedef struct {
  GMutex lock;
  GCond cond;
  gboolean entered, release;
} Gate;

static void
gate_cb (M2iFence *f, const GError *error, gpointer data)
{
  Gate *g = data;
  g_mutex_lock (&g->lock);
  g->entered = TRUE;
  g_cond_broadcast (&g->cond);
  while (!g->release)
    g_cond_wait (&g->cond, &g->lock);
  g_mutex_unlock (&g->lock);
}

static void
cancelled_cb (M2iFence *f, const GError *error, gpointer data)
{
  g_assert_error ((GError *) error, M2I_ERROR, M2I_ERROR_CANCELLED);
  g_atomic_int_inc ((gint *) data);
}

static void
test_cancel_and_timeout (void)
{
  M2iDevice *dev = m2i_device_get_default ();
  guint ne = m2i_device_n_engines (dev);
  Job *blockers = g_new0 (Job, ne);
  M2iFence **bf = g_new0 (M2iFence *, ne);
  Gate gate = { 0 };
  g_mutex_init (&gate.lock);
  g_cond_init (&gate.cond);
  /* occupy every engine (one plan each: runs of one plan never overlap) */
  for (guint i = 0; i < ne; i++) {
    job_init (&blockers[i], 30, 30, 100 + i, M2I_PROFILE_EXTENDED);
    g_mutex_lock (&gate.lock);
    gate.entered = FALSE;
    g_mutex_unlock (&gate.lock);
    bf[i] = m2i_plan_submit (blockers[i].plan, &blockers[i].in.img, &blockers[i].out.img,
        gate_cb, &gate, NULL);
    g_mutex_lock (&gate.lock);
    while (!gate.entered)
      g_cond_wait (&gate.cond, &gate.lock);
    g_mutex_unlock (&gate.lock);
  }
  m2i_device_reset_counters (dev);
  Job j;
  job_init (&j, 60, 30, 3, M2I_PROFILE_EXTENDED);
  gint cancelled = 0;
  M2iFence *f[4];
  for (int i = 0; i < 4; i++)
    f[i] = m2i_plan_submit (j.plan, &j.in.img, &j.out.img, cancelled_cb, &cancelled, NULL);
  /* nothing can run: a wait times out */
  GError *err = NULL;
  g_assert_false (m2i_fence_wait (f[0], 2000, &err));
  g_assert_error (err, M2I_ERROR, M2I_ERROR_FAILED);
  g_assert_nonnull (strstr (err->message, "timed out"));
  g_clear_error (&err);
  g_assert_false (m2i_fence_is_done (f[0]));
  /* cancel one, then the rest of the plan's queue */
  g_assert_true (m2i_fence_cancel (f[1]));
  g_assert_false (m2i_fence_cancel (f[1]));
  g_assert_cmpint (cancelled, ==, 1);
  g_assert_cmpuint (m2i_device_cancel_plan (dev, j.plan), ==, 3);
  g_assert_cmpint (cancelled, ==, 4);
  for (int i = 0; i < 4; i++) {
    g_assert_false (m2i_fence_wait (f[i], -1, &err));
    g_assert_error (err, M2I_ERROR, M2I_ERROR_CANCELLED);
    g_clear_error (&err);
    m2i_fence_unref (f[i]);
  }
  M2iDeviceCounters c;
  m2i_device_get_counters (dev, &c);
  g_assert_cmpuint (c.cancelled, ==, 4);
  g_assert_cmpuint (c.runs, ==, 0);
  /* a run queued behind the blockers, then freeing its plan cancels it */
  gint late = 0;
  M2iFence *lf = m2i_plan_submit (j.plan, &j.in.img, &j.out.img, cancelled_cb, &late, NULL);
  job_clear (&j);
  g_assert_cmpint (late, ==, 1);
  g_assert_true (m2i_fence_is_done (lf));
  m2i_fence_unref (lf);
  /* release the engines; the blocked runs complete normally */
  g_mutex_lock (&gate.lock);
  gate.release = TRUE;
  g_cond_broadcast (&gate.cond);
  g_mutex_unlock (&gate.lock);
  for (guint i = 0; i < ne; i++) {
    g_assert_true (m2i_fence_wait (bf[i], -1, NULL));
    m2i_fence_unref (bf[i]);
    g_assert_true (job_correct (&blockers[i]));
    job_clear (&blockers[i]);
  }
  g_free (blockers);
  g_free (bf);
  g_mutex_clear (&gate.lock);
  g_cond_clear (&gate.cond);
}

/* Many queued runs of one plan complete in submission order. */
typedef struct {
  gint next;
  gboolean in_order;
} Order;

typedef struct {
  Order *o;
  gint index;
} OrderTicket;

static void
order_cb (M2iFence *f, const GError *error, gpointer data)
{
  OrderTicket *t = data;
  if (t->index != t->o->next)
    t->o->in_order = FALSE;
  t->o->next++;
}

static void
test_fifo_per_plan (void)
{
  Job j;
  job_init (&j, 36, 24, 4, M2I_PROFILE_DEFAULT);
  Order o = { 0, TRUE };
  OrderTicket tickets[32];
  M2iFence *f[32];
  for (int i = 0; i < 32; i++) {
    tickets[i].o = &o;
    tickets[i].index = i;
    f[i] = m2i_plan_submit (j.plan, &j.in.img, &j.out.img, order_cb, &tickets[i], NULL);
  }
  for (int i = 0; i < 32; i++) {
    g_assert_true (m2i_fence_wait (f[i], -1, NULL));
    m2i_fence_unref (f[i]);
  }
  g_assert_true (o.in_order);
  g_assert_cmpint (o.next, ==, 32);
  g_assert_true (job_correct (&j));
  job_clear (&j);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/m2i/device/async-equals-sync", test_async_equals_sync);
  g_test_add_func ("/m2i/device/counts-default-profile", test_counts_default_profile);
  g_test_add_func ("/m2i/device/many-threads", test_many_threads);
  g_test_add_func ("/m2i/device/cancel-and-timeout", test_cancel_and_timeout);
  g_test_add_func ("/m2i/device/fifo-per-plan", test_fifo_per_plan);
  return g_test_run ();
}
