/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-decode-noalloc.c — after prepare, decoding allocates nothing: every
 * detection decoder on outputs with candidates for its NMS, the
 * segmentation decoder on tiny-seg's logits, multi-label and multi-head
 * models, OpenPose on noise. Skipped under a sanitizer (it owns malloc). */
#include "decode-test-util.h"
#include "../alloc-count.h"

#include <string.h>

/* Decodes @t once (warm-up), then five times counting allocations. */
static void
check (const InferDecoderClass *klass, const TestOutput *outs, guint n_outs, M2iTensor *t,
    const char *rt_info)
{
  M2iIrModel *m = test_model_new (outs, n_outs, rt_info);
  M2iDecoderOptions o;
  test_options_init (&o);
  o.confidence_threshold = 0.3f;
  GError *error = NULL;
  TestDecoder *d = test_decoder_new (klass, m, &o, &error);
  g_assert_no_error (error);
  M2iInferGeometry g = test_geometry (200, 100, 64, 64, 0.32, 0.32, 0, 16);
  g_assert_true (test_decoder_decode (d, t, n_outs, &g, &error));
  g_assert_no_error (error);
  guint found = d->result->n_detections + d->result->n_heads + d->result->has_mask;
  alloc_count_start_checked ();
  for (int i = 0; i < 5; i++)
    test_decoder_decode (d, t, n_outs, &g, NULL);
  gint n = alloc_count_stop ();
  g_test_message ("%s: %u results, %d allocations", d->describe, found, n);
  g_assert_cmpuint (found, >, 0);
  g_assert_cmpint (n, ==, 0);
  test_decoder_free (d);
  m2i_ir_model_unref (m);
}

/* Values in [0, 1) from a fixed sequence, boxes where there are boxes. */
static void
fill (float *p, gsize n, guint32 seed)
{
  for (gsize i = 0; i < n; i++)
    p[i] = (test_xorshift32 (&seed) % 1000) / 1000.0f;
}

static void
test_noalloc (void)
{
  if (ALLOC_COUNT_SANITIZED) {
    g_test_skip ("a sanitizer owns malloc");
    return;
  }
  const M2iElementType F = M2I_ET_F32;
  static float v8[(4 + 3 + 51) * 400], v5[400 * 12], v10[100 * 6], boxes[50 * 5];
  static gint64 labels[50];
  fill (v8, G_N_ELEMENTS (v8), 1);
  for (guint j = 0; j < 400; j++)            /* boxes of the v8 layout: centre, size */
    for (guint k = 0; k < 4; k++)
      v8[k * 400 + j] = 8 + 48 * v8[k * 400 + j] * (k < 2 ? 1 : 0.3f);
  fill (v5, G_N_ELEMENTS (v5), 2);
  for (guint j = 0; j < 400; j++)
    for (guint k = 0; k < 4; k++)
      v5[j * 12 + k] = 8 + 48 * v5[j * 12 + k] * (k < 2 ? 1 : 0.3f);
  fill (v10, G_N_ELEMENTS (v10), 3);
  for (guint j = 0; j < 100; j++) {
    v10[j * 6 + 2] += 1;
    v10[j * 6 + 3] += 1;
    v10[j * 6 + 5] = j % 7;
  }
  fill (boxes, G_N_ELEMENTS (boxes), 4);
  for (guint j = 0; j < 50; j++) {       /* inside the letterboxed image (rows 16..48) */
    boxes[j * 5 + 0] = 4 + 40 * boxes[j * 5 + 0];
    boxes[j * 5 + 1] = 18 + 16 * boxes[j * 5 + 1];
    boxes[j * 5 + 2] = boxes[j * 5 + 0] + 12;
    boxes[j * 5 + 3] = boxes[j * 5 + 1] + 10;
    labels[j] = j % 3;
  }

  TestOutput pose = { "out", "Concat", NULL, F, TEST_SHAPE (1, 58, 400) };
  M2iTensor t = { F, pose.shape, v8 };
  check (&infer_decoder_yolo_v8, &pose, 1, &t, "<model_info><labels value=\"a b c\"/></model_info>");
  TestOutput o5 = { "out", "Concat", NULL, F, TEST_SHAPE (1, 400, 12) };
  t = (M2iTensor) { F, o5.shape, v5 };
  check (&infer_decoder_yolo_v5, &o5, 1, &t, NULL);
  TestOutput o10 = { "out", "Concat", NULL, F, TEST_SHAPE (1, 100, 6) };
  t = (M2iTensor) { F, o10.shape, v10 };
  check (&infer_decoder_yolo_v10, &o10, 1, &t, NULL);

  TestOutput bl[] = { { "boxes", "Concat", NULL, F, TEST_SHAPE (50, 5) },
    { "labels", "Concat", NULL, M2I_ET_I64, TEST_SHAPE (50) } };
  M2iTensor tb[] = { { F, bl[0].shape, boxes }, { M2I_ET_I64, bl[1].shape, labels } };
  check (&infer_decoder_detection_nms, bl, 2, tb, NULL);

  GBytes *r0 = test_read_data ("infer/region-yolo.v3.out0.f32");
  GBytes *r1 = test_read_data ("infer/region-yolo.v3.out1.f32");
  const char *attrs0 = "anchors=\"10,13,16,30,33,23,30,61,62,45,59,119\" classes=\"5\" "
      "coords=\"4\" num=\"6\" mask=\"3,4,5\"";
  const char *attrs1 = "anchors=\"10,13,16,30,33,23,30,61,62,45,59,119\" classes=\"5\" "
      "coords=\"4\" num=\"6\" mask=\"0,1,2\"";
  TestOutput ry[] = {
    { "r0", "RegionYolo", attrs0, F, TEST_SHAPE (1, 30, 4, 4), TEST_SHAPE (1, 30, 4, 4) },
    { "r1", "RegionYolo", attrs1, F, TEST_SHAPE (1, 30, 8, 8), TEST_SHAPE (1, 30, 8, 8) },
  };
  M2iTensor tr[] = { { F, ry[0].shape, (gpointer) g_bytes_get_data (r0, NULL) },
    { F, ry[1].shape, (gpointer) g_bytes_get_data (r1, NULL) } };
  check (&infer_decoder_region_yolo, ry, 2, tr, NULL);
  g_bytes_unref (r0);
  g_bytes_unref (r1);

  GBytes *logits = test_read_data ("infer/tiny-seg.synth0.logits.f32.gz");
  TestOutput seg = { "scores", "Add", NULL, F, TEST_SHAPE (1, 4, 48, 64) };
  t = (M2iTensor) { F, seg.shape, (gpointer) g_bytes_get_data (logits, NULL) };
  check (&infer_decoder_segmentation, &seg, 1, &t, NULL);
  g_bytes_unref (logits);

  static float attrs[8], prob[3], lm[10];
  fill (attrs, 8, 5);
  fill (prob, 3, 6);
  fill (lm, 10, 7);
  TestOutput ml = { "attrs", "Sigmoid", NULL, F, TEST_SHAPE (1, 8) };
  t = (M2iTensor) { F, ml.shape, attrs };
  check (&infer_decoder_multi_label, &ml, 1, &t, NULL);
  TestOutput mh[] = { { "prob", "SoftMax", NULL, F, TEST_SHAPE (1, 3, 1, 1) },
    { "attrs", "Sigmoid", NULL, F, TEST_SHAPE (1, 8) },
    { "landmarks", "Add", NULL, F, TEST_SHAPE (1, 10) } };
  M2iTensor th[] = { { F, mh[0].shape, prob }, { F, mh[1].shape, attrs },
    { F, mh[2].shape, lm } };
  check (&infer_decoder_multi_head, mh, 3, th, NULL);

  /* OpenPose: noise makes many peaks, limbs and people */
  static float pafs[38 * 16 * 20], heat[19 * 16 * 20];
  fill (pafs, G_N_ELEMENTS (pafs), 8);
  fill (heat, G_N_ELEMENTS (heat), 9);
  TestOutput op[] = { { "pafs", "Add", NULL, F, TEST_SHAPE (1, 38, 16, 20) },
    { "heatmaps", "Add", NULL, F, TEST_SHAPE (1, 19, 16, 20) } };
  M2iTensor to[] = { { F, op[0].shape, pafs }, { F, op[1].shape, heat } };
  check (&infer_decoder_openpose, op, 2, to, NULL);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/decode/noalloc", test_noalloc);
  return g_test_run ();
}
