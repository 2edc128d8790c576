/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-m2i-batch.c — m2i_plan_run_batch(): plans of different input
 * sizes, run as one submission, write exactly what the reference path
 * writes for each; the device counts one run of all their tasks; a bad
 * image anywhere in the batch runs nothing and names the plan. */
#include "m2i-test-util.h"

#define N 7

static void
make_ops (M2iOpList *ops, gint w, gint h)
{
  M2iResizeParams rp;
  m2i_op_list_init (ops);
  g_assert_true (m2i_op_list_add_csc (ops, M2I_ORDER_BGR));
  g_assert_true (m2i_op_list_add_convert (ops, M2I_DTYPE_F16));
  m2i_resize_params_init (&rp, w, h);
  rp.mode = M2I_RESIZE_LINEAR_ONNX;
  g_assert_true (m2i_op_list_add_resize (ops, &rp));
  g_assert_true (m2i_op_list_add_permute (ops));
}

static void
test_batch_equals_reference (void)
{
  GRand *rand = g_rand_new_with_seed (17);
  TestImage in[N], out[N], ref[N];
  M2iPlan *plans[N];
  M2iImage ins[N], outs[N];
  M2iOpList ops;
  GError *err = NULL;
  make_ops (&ops, 24, 40);
  guint64 tasks = 0, cycles = 0;
  for (guint i = 0; i < N; i++) {
    /* sizes from 2x2 up, padded rows; the last plan twice in the batch */
    gint w = 2 + 18 * (gint) (i % 6), h = 2 + 26 * (gint) (i % 6);
    if (i < N - 1) {
      test_image_alloc_padded (&in[i], i % 2 ? M2I_FORMAT_PL_YUV420_8 : M2I_FORMAT_SP_NV12_8, w,
          h, i, 0);
      test_image_pattern (&in[i], rand);
    } else {
      test_image_alloc_padded (&in[i], in[N - 2].img.format, in[N - 2].img.width,
          in[N - 2].img.height, N - 2, 0);
      test_image_randomize (&in[i], rand);
    }
    test_image_alloc (&out[i], M2I_FORMAT_PL_FP16_BGR, 24, 40);
    test_image_alloc (&ref[i], M2I_FORMAT_PL_FP16_BGR, 24, 40);
    g_assert_true (m2i_reference_run (&in[i].img, &ops, &ref[i].img, &err));
    M2iPlanOptions o = { M2I_PROFILE_DEFAULT, 1 };
    plans[i] = i < N - 1 ? m2i_plan_new (&in[i].img, &ops, &out[i].img, &o, &err) : plans[N - 2];
    g_assert_no_error (err);
    ins[i] = in[i].img;
    outs[i] = out[i].img;
    for (guint t = 0; t < m2i_plan_n_tasks (plans[i]); t++) {
      M2iTaskInfo info;
      m2i_plan_get_task (plans[i], t, &info);
      tasks++;
      cycles += info.cycles;
    }
  }
  M2iDevice *dev = m2i_device_get_default ();
  M2iDeviceCounters a, b;
  m2i_device_get_counters (dev, &a);
  g_assert_true (m2i_plan_run_batch (plans, ins, outs, N, &err));
  g_assert_no_error (err);
  m2i_device_get_counters (dev, &b);
  g_assert_cmpuint (b.runs - a.runs, ==, 1);
  g_assert_cmpuint (b.tasks_total - a.tasks_total, ==, tasks);
  g_assert_cmpuint (b.cycles - a.cycles, ==, cycles);
  for (guint i = 0; i < N; i++)
    g_assert_cmpuint (test_image_max_diff (&out[i].img, &ref[i].img), ==, 0);

  /* nothing to do */
  g_assert_true (m2i_plan_run_batch (plans, ins, outs, 0, &err));
  /* plan 3's input of another size: refused before anything runs */
  memset (out[0].mem, 0, out[0].size);
  ins[3].width += 2;
  m2i_device_get_counters (dev, &a);
  g_assert_false (m2i_plan_run_batch (plans, ins, outs, N, &err));
  g_assert_error (err, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT);
  g_assert_true (g_str_has_prefix (err->message, "plan 3 of the batch: "));
  g_clear_error (&err);
  m2i_device_get_counters (dev, &b);
  g_assert_cmpuint (b.runs, ==, a.runs);
  g_assert_cmpuint (b.failed - a.failed, ==, 1);
  for (gsize k = 0; k < out[0].size; k++)
    g_assert_cmpuint (out[0].mem[k], ==, 0);
  M2iPlan *kept = plans[2];
  plans[2] = NULL;
  ins[3].width -= 2;
  g_assert_false (m2i_plan_run_batch (plans, ins, outs, N, &err));
  g_assert_true (g_str_has_prefix (err->message, "plan 2 of the batch: no plan"));
  g_clear_error (&err);

  plans[2] = kept;
  for (guint i = 0; i < N; i++) {
    if (i < N - 1)
      m2i_plan_free (plans[i]);
    test_image_free (&in[i]);
    test_image_free (&out[i]);
    test_image_free (&ref[i]);
  }
  g_rand_free (rand);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/m2i/batch/equals-reference", test_batch_equals_reference);
  return g_test_run ();
}
