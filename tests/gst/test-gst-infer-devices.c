/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-gst-infer-devices.c — m2iinfer (GstHarness): devices and
 * PrePostProcessor heads: the NV12 head on the CPU against the reference
 * data; CPU vs HETERO:M2I,CPU vs AUTO with the plan written by split-dir;
 * the head lowered to the M2I block.
 *
 * Expected values come from outside the element: torch's outputs and
 * predictions (tests/data/fashion-mnist), reference data (tests/data/ppp),
 * the IR runtime run directly on the input the core's reference path
 * makes, and arithmetic written here.
 */
#include "gst-infer-test-util.h"

#define PPP_W 64
#define PPP_H 48
#define PPP_CAPS "video/x-raw,format=NV12,width=64,height=48,framerate=30/1"

/* The PrePostProcessor model with its NV12 head. */
static gchar *
ppp_model (void)
{
  return test_models_path ("fashion-mnist-ppp/fashion-mnist-ppp.xml");
}

/* Reference case @name of tests/data/ppp: its PPP_W x PPP_H NV12 frame into
 * @frame (allocated here); returns the reference model's 10 class
 * probabilities (caller unrefs). */
static GBytes *
ppp_case (const char *name, TestImage *frame)
{
  gchar *nv = g_strdup_printf ("ppp/%s.nv12", name);
  gchar *pr = g_strdup_printf ("ppp/%s.prob.f32", name);
  GBytes *data = test_read_data (nv), *prob = test_read_data (pr);
  test_image_alloc (frame, M2I_FORMAT_SP_NV12_8, PPP_W, PPP_H);
  fail_unless_equals_int (g_bytes_get_size (data), frame->size);
  fail_unless_equals_int (g_bytes_get_size (prob), 10 * sizeof (float));
  memcpy (frame->mem, g_bytes_get_data (data, NULL), frame->size);
  g_bytes_unref (data);
  g_free (nv);
  g_free (pr);
  return prob;
}

/* Runs torch's 64 inputs through m2iinfer on @device; the probabilities
 * into @prob, the fused text into @fused. */
static void
run_fm_tensors (const char *device, const char *extra, float prob[64][10], gchar **fused)
{
  GBytes *inputs = test_read_data ("fashion-mnist/first64.input.f32");
  gchar *model = fm_model ();
  gchar *launch = g_strdup_printf ("m2iinfer name=inf model=%s device=%s %s", model, device,
      extra);
  GstHarness *h = harness (launch, F32_28_CAPS);
  const float *in = g_bytes_get_data (inputs, NULL);
  for (guint i = 0; i < 64; i++) {
    GstBuffer *b = gst_buffer_new_memdup (in + i * 2352, 9408);
    fail_unless_equals_int (gst_harness_push (h, b), GST_FLOW_OK);
    GstBuffer *o = gst_harness_pull (h);
    memcpy (prob[i], output_tensor (o, "prob")->data, sizeof prob[i]);
    gst_buffer_unref (o);
  }
  *fused = test_harness_fused (h, "inf");
  gst_harness_teardown (h);
  g_free (launch);
  g_free (model);
  g_bytes_unref (inputs);
}

GST_START_TEST (test_ppp_nv12_head)
{
  static const char *cases[] = { "t10k-0", "t10k-1", "gradient", "noise" };
  gchar *model = ppp_model ();
  gchar *launch = g_strdup_printf ("m2iinfer name=inf model=%s device=CPU", model);
  GstHarness *h = harness (launch, PPP_CAPS);
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    TestImage t;
    GBytes *prob = ppp_case (cases[i], &t);
    /* Padded strides with a GstVideoMeta: the planes are copied row by row. */
    fail_unless_equals_int (gst_harness_push (h, test_image_to_buffer (&t, i % 2 ? 16 : 0)),
        GST_FLOW_OK);
    GstBuffer *o = gst_harness_pull (h);
    const float *p = output_tensor (o, "prob")->data, *want = g_bytes_get_data (prob, NULL);
    for (int c = 0; c < 10; c++)
      fail_unless (fabsf (p[c] - want[c]) <= 1e-4f, "%s class %d: %g vs %g", cases[i], c, p[c],
          want[c]);
    guint best = test_argmax (p, 10);
    /* no labels=: the model's own, from its rt_info model_info/labels */
    static const char *const labels[] = { "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
      "Sandal", "Shirt", "Sneaker", "Bag", "Ankle_boot" };
    check_classification (o, PPP_W, PPP_H, labels[best], (gint) best, p[best]);
    gst_buffer_unref (o);
    test_image_free (&t);
    g_bytes_unref (prob);
  }
  gchar *fused = test_harness_fused (h, "inf");
  fail_unless (strstr (fused, "PrePostProcessor head") != NULL, "%s", fused);
  g_free (fused);
  gst_harness_teardown (h);
  g_free (launch);
  g_free (model);
}
GST_END_TEST;

/* CPU vs split between the device and the CPU (HETERO:M2I,CPU, and AUTO,
 * which picks it): the same top-1 on all 64 images, probabilities close
 * (the device computes in fp16), and torch's labels. The plan is written
 * with split-dir and loads back. */
GST_START_TEST (test_devices_cpu_vs_hetero)
{
  static float cpu[64][10], het[64][10], aut[64][10];
  GBytes *preds = test_read_data ("fashion-mnist/t10k.torch-pred.u8");
  const guint8 *pred = g_bytes_get_data (preds, NULL);
  gchar *dir = g_dir_make_tmp ("m2iinfer-split-XXXXXX", NULL);
  gchar *extra = g_strdup_printf ("split-dir=%s", dir);
  gchar *fc, *fh, *fa;
  run_fm_tensors ("CPU", "", cpu, &fc);
  run_fm_tensors ("HETERO:M2I,CPU", extra, het, &fh);
  run_fm_tensors ("AUTO", "", aut, &fa);
  assert_contains (fc, "model on CPU");
  assert_contains (fh, "model on HETERO:M2I,CPU: 2 pieces, 1 on the device");
  assert_contains (fa, "model on HETERO:M2I,CPU");
  for (guint i = 0; i < 64; i++) {
    fail_unless_equals_int (test_argmax (het[i], 10), test_argmax (cpu[i], 10));
    fail_unless_equals_int (test_argmax (het[i], 10), pred[i]);
    fail_unless (memcmp (het[i], aut[i], sizeof het[i]) == 0, "image %u: AUTO != HETERO", i);
    for (int c = 0; c < 10; c++)
      fail_unless (fabsf (het[i][c] - cpu[i][c]) <= 1e-2f, "image %u class %d: %g vs %g", i, c,
          het[i][c], cpu[i][c]);
  }
  GError *err = NULL;
  M2iSplitPlan *plan = m2i_split_plan_load (dir, &err);
  fail_unless (plan != NULL, "%s", err ? err->message : "");
  fail_unless_equals_int (m2i_split_plan_get_n_pieces (plan), 2);
  m2i_split_plan_unref (plan);
  g_free (fc);
  g_free (fh);
  g_free (fa);
  g_free (extra);
  remove_dir (dir);
  g_bytes_unref (preds);
}
GST_END_TEST;

/* The PrePostProcessor model split: its head runs as the M2I task m2iinfer
 * plans (the model's own csc, resize and mean/scale), the network on the
 * device; results close to the reference data and the same class. A frame
 * twice the head's size goes through the same head ops (resize from
 * 128x96) and gives the same class. */
GST_START_TEST (test_ppp_head_on_device)
{
  static const char *cases[] = { "t10k-0", "t10k-1", "t10k-2", "t10k-4" };
  gchar *model = ppp_model ();
  gchar *launch = g_strdup_printf ("m2iinfer name=inf model=%s device=HETERO:M2I,CPU", model);
  GstHarness *h = harness (launch, PPP_CAPS);
  GstHarness *h2 = harness (launch, "video/x-raw,format=NV12,width=128,height=96,framerate=30/1");
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    TestImage t, big;
    GBytes *prob = ppp_case (cases[i], &t);
    const guint8 *f = t.mem;
    /* 2x nearest: each Y sample and each UV pair twice across and down */
    test_image_alloc (&big, M2I_FORMAT_SP_NV12_8, 128, 96);
    for (gint y = 0; y < 96; y++)
      for (gint x = 0; x < 128; x++)
        big.img.data[0][y * 128 + x] = f[(y / 2) * 64 + x / 2];
    for (gint y = 0; y < 48; y++)
      for (gint x = 0; x < 64; x++)
        big.img.data[1][y * 128 + 2 * x + 0] = f[3072 + (y / 2) * 64 + (x / 2) * 2],
        big.img.data[1][y * 128 + 2 * x + 1] = f[3072 + (y / 2) * 64 + (x / 2) * 2 + 1];
    fail_unless_equals_int (gst_harness_push (h, test_image_to_buffer (&t, 0)), GST_FLOW_OK);
    fail_unless_equals_int (gst_harness_push (h2, test_image_to_buffer (&big, 0)), GST_FLOW_OK);
    GstBuffer *o = gst_harness_pull (h), *o2 = gst_harness_pull (h2);
    const float *p = output_tensor (o, "prob")->data, *want = g_bytes_get_data (prob, NULL);
    const float *p2 = output_tensor (o2, "prob")->data;
    for (int c = 0; c < 10; c++)
      fail_unless (fabsf (p[c] - want[c]) <= 1e-2f, "%s class %d: %g vs %g", cases[i], c, p[c],
          want[c]);
    fail_unless_equals_int (test_argmax (p, 10), test_argmax (want, 10));
    fail_unless_equals_int (test_argmax (p2, 10), test_argmax (want, 10));
    gst_buffer_unref (o);
    gst_buffer_unref (o2);
    test_image_free (&t);
    test_image_free (&big);
    g_bytes_unref (prob);
  }
  gchar *fused = test_harness_fused (h, "inf");
  assert_contains (fused, "pre-processing head on the M2I block");
  assert_contains (fused, "inf: csc(RGB) -> convertU8F16 -> resize(28x28");
  g_free (fused);
  gst_harness_teardown (h);
  gst_harness_teardown (h2);
  g_free (launch);
  g_free (model);
}
GST_END_TEST;

static Suite *
m2i_infer_devices_suite (void)
{
  Suite *s = suite_create ("m2i-infer-devices");
  TCase *tc = tcase_create ("general");
  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_ppp_nv12_head);
  tcase_add_test (tc, test_devices_cpu_vs_hetero);
  tcase_add_test (tc, test_ppp_head_on_device);
  return s;
}

GST_CHECK_MAIN (m2i_infer_devices);
