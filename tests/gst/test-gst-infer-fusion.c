/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-gst-infer-fusion.c — m2iinfer (GstHarness): the fused chain
 * m2icolorconvert ! m2iresize ! m2inorm ! m2iinfer: identical outputs fused,
 * with fusion off, broken by identity and with m2iinfer's own pre-
 * processing; equal to the IR runtime on the reference path's input, with
 * torch's labels.
 *
 * Expected values come from outside the element: torch's outputs and
 * predictions (tests/data/fashion-mnist), reference data (tests/data/ppp),
 * the IR runtime run directly on the input the core's reference path
 * makes, and arithmetic written here.
 */
#include "gst-infer-test-util.h"

/* Fashion-MNIST test image @i (of the first 64) as NV12 FM_W x FM_W: drawn
 * FM_SCALE times larger, Y = round(16 + p*219/255), U = V = 128. */
static void
fm_nv12 (TestImage *t, GBytes *images, guint i)
{
  const guint8 *img = (const guint8 *) g_bytes_get_data (images, NULL) + i * FM_SIDE * FM_SIDE;
  test_image_alloc (t, M2I_FORMAT_SP_NV12_8, FM_W, FM_W);
  for (gint y = 0; y < FM_W; y++)
    for (gint x = 0; x < FM_W; x++) {
      guint p = img[(y / FM_SCALE) * FM_SIDE + x / FM_SCALE];
      t->img.data[0][(gsize) y * t->img.stride[0] + x] = (guint8) ((16 * 255 + p * 219 + 127) / 255);
    }
  memset (t->img.data[1], 128, (gsize) t->img.stride[1] * (FM_W / 2));
}

#define N_CHAIN 6

typedef struct {
  float prob[N_CHAIN][10];
  gint label[N_CHAIN];
  gchar *out_caps;
  gchar *fused;
  M2iDeviceCounters counters;
} ChainRun;

static void
run_fm_chain (const char *launch, ChainRun *r)
{
  GBytes *images = test_read_data ("fashion-mnist/first64.images.u8");
  GstHarness *h = harness (launch, NV12_CAPS);
  M2iDevice *dev = m2i_device_get_default ();
  m2i_device_reset_counters (dev);
  for (guint i = 0; i < N_CHAIN; i++) {
    TestImage in;
    fm_nv12 (&in, images, i);
    fail_unless_equals_int (gst_harness_push (h, test_image_to_buffer (&in, 0)), GST_FLOW_OK);
    GstBuffer *o = gst_harness_pull (h);
    memcpy (r->prob[i], output_tensor (o, "prob")->data, sizeof r->prob[i]);
    GstStructure *s = nth_roi (o, 0)->params->data;
    gst_structure_get_int (s, "label_id", &r->label[i]);
    gst_buffer_unref (o);
    test_image_free (&in);
  }
  m2i_device_get_counters (dev, &r->counters);
  GstCaps *caps = gst_pad_get_current_caps (h->sinkpad);
  r->out_caps = gst_caps_to_string (caps);
  gst_caps_unref (caps);
  r->fused = test_harness_fused (h, "inf");
  gst_harness_teardown (h);
  g_bytes_unref (images);
}

static void
chain_run_clear (ChainRun *r)
{
  g_free (r->out_caps);
  g_free (r->fused);
}

GST_START_TEST (test_fused_unfused_identical)
{
  gchar *model = fm_model ();
  gchar *fused = g_strdup_printf ("m2icolorconvert ! m2iresize ! m2inorm " FM_NORM " ! "
      "m2iinfer name=inf model=%s device=CPU", model);
  gchar *off = g_strdup_printf ("m2icolorconvert fusion=false ! m2iresize fusion=false ! "
      "m2inorm fusion=false " FM_NORM " ! m2iinfer name=inf fusion=false model=%s device=CPU", model);
  gchar *broken = g_strdup_printf ("m2icolorconvert ! m2iresize ! m2inorm " FM_NORM " ! "
      "identity ! m2iinfer name=inf model=%s device=CPU", model);
  /* m2iinfer pre-processing the video itself: csc -> convert -> resize ->
   * permute -> norm, the same plan once permute is moved past the resize. */
  gchar *own = g_strdup_printf ("m2iinfer name=inf model=%s device=CPU " FM_NORM, model);
  ChainRun a, b, c, e;
  run_fm_chain (fused, &a);
  run_fm_chain (off, &b);
  run_fm_chain (broken, &c);
  run_fm_chain (own, &e);
  for (guint i = 0; i < N_CHAIN; i++) {
    fail_unless (memcmp (a.prob[i], b.prob[i], sizeof a.prob[i]) == 0, "frame %u: fused vs "
        "fusion=false", i);
    fail_unless (memcmp (a.prob[i], c.prob[i], sizeof a.prob[i]) == 0, "frame %u: fused vs "
        "identity", i);
    fail_unless (memcmp (a.prob[i], e.prob[i], sizeof a.prob[i]) == 0, "frame %u: fused vs "
        "m2iinfer's own pre-processing", i);
  }
  /* Fused: the source video leaves m2iinfer; one plan run per frame, on the
   * device (the default profile runs norm as a second device task). */
  fail_unless (g_str_has_prefix (a.out_caps, "video/x-raw"), "%s", a.out_caps);
  fail_unless (strstr (a.out_caps, "NV12") != NULL, "%s", a.out_caps);
  fail_unless (g_str_has_prefix (b.out_caps, "other/tensors"), "%s", b.out_caps);
  fail_unless_equals_uint64 (a.counters.runs, N_CHAIN);
  fail_unless_equals_uint64 (a.counters.tasks_device, 2 * N_CHAIN);
  fail_unless_equals_uint64 (a.counters.tasks_cpu, 0);
  fail_unless (strstr (a.fused, "m2icolorconvert0 + m2iresize0 + m2inorm0 + inf: csc(RGB)")
      != NULL, "%s", a.fused);
  fail_unless (strstr (a.fused, "(2 device tasks)") != NULL, "%s", a.fused);
  fail_unless (strstr (b.fused, "1 input tensor copied in") != NULL, "%s", b.fused);
  /* (the model's model_info/reverse_input_channels True: it takes RGB) */
  fail_unless (strstr (e.fused, "inf: csc(RGB) -> convertU8F16 -> resize(28x28") != NULL,
      "%s", e.fused);
  fail_unless (strstr (e.fused, "channel order = RGB (model_info/reverse_input_channels)")
      != NULL, "%s", e.fused);
  chain_run_clear (&a);
  chain_run_clear (&b);
  chain_run_clear (&c);
  chain_run_clear (&e);
  g_free (fused);
  g_free (off);
  g_free (broken);
  g_free (own);
  g_free (model);
}
GST_END_TEST;

/* The fused chain's outputs equal the runtime's on the reference path's
 * tensor for the same frame, and its labels are torch's. */
GST_START_TEST (test_fused_vs_reference)
{
  GBytes *images = test_read_data ("fashion-mnist/first64.images.u8");
  GBytes *preds = test_read_data ("fashion-mnist/t10k.torch-pred.u8");
  gchar *model = fm_model ();
  gchar *launch = g_strdup_printf ("m2icolorconvert ! m2iresize ! m2inorm " FM_NORM " ! "
      "m2iinfer name=inf model=%s device=CPU", model);
  ChainRun a;
  run_fm_chain (launch, &a);
  Direct d;
  direct_open (&d, model);
  M2iOpList ops;
  reference_ops (&ops, M2I_ORDER_RGB, TRUE, FM_SIDE, FM_SIDE, TRUE);
  for (guint i = 0; i < N_CHAIN; i++) {
    TestImage in;
    fm_nv12 (&in, images, i);
    reference_input (&in, &ops, FM_SIDE, FM_SIDE, FALSE,
        m2i_ir_infer_request_get_input (d.req, 0)->data);
    const float *ref = direct_run (&d)->data;
    /* The fused plan equals the reference path within one fp16 ulp. */
    for (int c = 0; c < 10; c++)
      fail_unless (fabsf (a.prob[i][c] - ref[c]) <= 2e-3f, "frame %u class %d: %g vs %g", i, c,
          a.prob[i][c], ref[c]);
    fail_unless_equals_int (a.label[i], test_argmax (ref, 10));
    fail_unless_equals_int (a.label[i], ((const guint8 *) g_bytes_get_data (preds, NULL))[i]);
    test_image_free (&in);
  }
  direct_close (&d);
  chain_run_clear (&a);
  g_free (launch);
  g_free (model);
  g_bytes_unref (images);
  g_bytes_unref (preds);
}
GST_END_TEST;

static Suite *
m2i_infer_fusion_suite (void)
{
  Suite *s = suite_create ("m2i-infer-fusion");
  TCase *tc = tcase_create ("general");
  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_fused_unfused_identical);
  tcase_add_test (tc, test_fused_vs_reference);
  return s;
}

GST_CHECK_MAIN (m2i_infer_fusion);
