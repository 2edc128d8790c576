/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* "No allocation per inference" for split execution: malloc and friends are
 * counted while runners of three plans run — Fashion-MNIST (compute engine
 * fp16 + CPU), the PrePostProcessor model (M2I head + engine + CPU, also
 * from a frame image and after the head) and the int8 model (engine int8 +
 * fp16 + CPU) — on one and two threads. After the first runs (which may
 * grow the worker pool) the count must stay at zero. Skipped under
 * sanitizers, which own malloc. */
#include "../ir/ir-test-util.h"
#include <split/m2i-split.h>

#include "../alloc-count.h"

typedef gboolean (*RunFunc) (M2iSplitRunner *r, gpointer data);

static gboolean
run_plain (M2iSplitRunner *r, gpointer data)
{
  return m2i_split_runner_run (r, NULL);
}

static gboolean
run_image (M2iSplitRunner *r, gpointer data)
{
  return m2i_split_runner_run_image (r, data, NULL);
}

static gboolean
run_after_head (M2iSplitRunner *r, gpointer data)
{
  return m2i_split_runner_run_after_head (r, NULL);
}

static void
count_runs (M2iSplitRunner *r, RunFunc fn, gpointer data, const char *what)
{
  for (gint i = 0; i < 3; i++)
    g_assert_true (fn (r, data));
  g_usleep (100000);
  alloc_count_start_checked ();
  gboolean ok = TRUE;
  for (gint i = 0; i < 20; i++)
    ok &= fn (r, data);
  gint n_allocs = alloc_count_stop ();
  g_test_message ("%s: %d allocations in 20 runs", what, n_allocs);
  g_assert_cmpint (n_allocs, ==, 0);
  g_assert_true (ok);
}

static void
check_model (const char *relative, gboolean head)
{
  g_autofree gchar *xml = test_models_path (relative);
  GError *error = NULL;
  M2iIrModel *m = m2i_ir_model_load (xml, NULL, &error);
  g_assert_no_error (error);
  M2iSplitPlan *plan = m2i_split_plan_new (m, NULL, &error);
  g_assert_no_error (error);
  for (gint threads = 1; threads <= 2; threads++) {
    M2iSplitRunOptions ro = { threads };
    M2iSplitRunner *r = m2i_split_runner_new (plan, &ro, &error);
    g_assert_no_error (error);
    for (gint i = 0; i < m2i_split_plan_get_n_inputs (plan); i++) {
      M2iTensor *t = m2i_split_runner_get_input (r, i);
      guint8 *d = t->data;
      for (gsize k = 0; k < m2i_tensor_nbytes (t); k++)
        d[k] = t->type == M2I_ET_U8 ? (guint8) (k * 37) : 0;
      if (t->type == M2I_ET_F32)
        for (gint64 k = 0; k < m2i_shape_numel (&t->shape); k++)
          ((float *) t->data)[k] = (float) (k % 13) / 13.0f;
    }
    g_autofree gchar *what = g_strdup_printf ("%s, %d thread(s)", relative, threads);
    count_runs (r, run_plain, NULL, what);
    if (head) {
      /* a frame with padded rows: its plan is made on the first run */
      gsize stride = 96;
      guint8 *buf = g_malloc0 (stride * 72);
      M2iImage img;
      g_assert_true (m2i_image_wrap (&img, M2I_FORMAT_SP_NV12_8, 64, 48, buf, stride * 72, stride,
              NULL));
      count_runs (r, run_image, &img, "from a frame");
      count_runs (r, run_after_head, NULL, "after the head");
      g_free (buf);
    }
    m2i_split_runner_free (r);
  }
  m2i_split_plan_unref (plan);
  m2i_ir_model_unref (m);
}

static void
test_no_allocation (void)
{
if (ALLOC_COUNT_SANITIZED) {
    g_test_skip ("sanitizers own malloc");
    return;
  }
  check_model ("fashion-mnist/fashion-mnist.xml", FALSE);
  check_model ("fashion-mnist-ppp/fashion-mnist-ppp.xml", TRUE);
  check_model ("fashion-mnist-int8/fashion-mnist-int8.xml", FALSE);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/split/no-allocation-per-run", test_no_allocation);
  return g_test_run ();
}
