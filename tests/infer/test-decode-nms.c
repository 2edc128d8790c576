/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-decode-nms.c — the shared NMS (nms.c) against a naive greedy
 * suppression written from torchvision's definition (sort by score, keep a
 * box unless a kept box of its class overlaps it by IoU > threshold), and
 * the NMS-inside detector decoder (decode-nms.c) on hand-made outputs. */
#include "decode-test-util.h"
#include "infer/nms.h"

#include <math.h>
#include <string.h>

/* ---- the NMS -------------------------------------------------------------------- */

static int
cmp_naive (const void *a, const void *b)
{
  const InferBox *x = a, *y = b;
  if (x->score != y->score)
    return x->score > y->score ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

static double
naive_iou (const InferBox *a, const InferBox *b)
{
  double aa = MAX (a->x2 - a->x1, 0.0) * MAX (a->y2 - a->y1, 0.0);
  double ab = MAX (b->x2 - b->x1, 0.0) * MAX (b->y2 - b->y1, 0.0);
  double w = MIN (a->x2, b->x2) - MAX (a->x1, b->x1), h = MIN (a->y2, b->y2) - MAX (a->y1, b->y1);
  if (w <= 0 || h <= 0)
    return 0;
  double u = aa + ab - w * h;
  return u > 0 ? w * h / u : 0;
}

/* Every box checked against every kept one, O(n^2); the kept indices. */
static guint
naive_nms (InferBox *boxes, guint n, float thr, gboolean agnostic, guint max, guint *kept)
{
  qsort (boxes, n, sizeof *boxes, cmp_naive);
  gboolean *dead = g_new0 (gboolean, n);
  guint k = 0;
  for (guint i = 0; i < n && k < max; i++) {
    if (dead[i])
      continue;
    kept[k++] = boxes[i].index;
    for (guint j = i + 1; j < n; j++)
      if ((agnostic || boxes[j].class_id == boxes[i].class_id)
          && naive_iou (&boxes[i], &boxes[j]) > thr)
        dead[j] = TRUE;
  }
  g_free (dead);
  return k;
}

static void
random_boxes (GRand *rnd, InferBox *b, guint n, guint classes, gboolean ties)
{
  for (guint i = 0; i < n; i++) {
    float x = (float) g_rand_double_range (rnd, 0, 100), y = (float) g_rand_double_range (rnd, 0, 100);
    float w = (float) g_rand_double_range (rnd, 0, 30), h = (float) g_rand_double_range (rnd, 0, 30);
    float s = ties ? (float) g_rand_int_range (rnd, 0, 8) / 8 : (float) g_rand_double (rnd);
    b[i] = (InferBox) { x, y, x + w, y + h, s, g_rand_int_range (rnd, 0, classes), i };
  }
}

static void
test_nms_against_naive (void)
{
  GRand *rnd = g_rand_new_with_seed (11);
  enum { MAXN = 400 };
  InferBox boxes[MAXN], copy[MAXN];
  guint kept[MAXN];
  InferNms nms;
  infer_nms_init (&nms, MAXN);
  for (guint trial = 0; trial < 300; trial++) {
    guint n = g_rand_int_range (rnd, 0, MAXN + 1);
    guint classes = g_rand_int_range (rnd, 1, 5);
    gboolean agnostic = trial % 3 == 0, ties = trial % 2 == 0;
    float thr = (float) g_rand_double_range (rnd, 0.05, 0.95);
    guint max = trial % 4 == 0 ? (guint) g_rand_int_range (rnd, 1, 20) : MAXN;
    random_boxes (rnd, boxes, n, classes, ties);
    /* added in a shuffled order: the result must not depend on it */
    memcpy (copy, boxes, n * sizeof *boxes);
    for (guint i = n; i > 1; i--) {
      guint j = g_rand_int_range (rnd, 0, i);
      InferBox t = copy[i - 1];
      copy[i - 1] = copy[j];
      copy[j] = t;
    }
    infer_nms_reset (&nms);
    for (guint i = 0; i < n; i++)
      infer_nms_add (&nms, &copy[i]);
    gboolean truncated;
    guint got = infer_nms_run (&nms, thr, agnostic, max, &truncated);
    guint want = naive_nms (boxes, n, thr, agnostic, MAXN, kept);
    g_assert_cmpuint (got, ==, MIN (want, max));
    g_assert_cmpint (truncated, ==, want > max);
    for (guint i = 0; i < got; i++)
      g_assert_cmpuint (nms.boxes[i].index, ==, kept[i]);
  }
  infer_nms_clear (&nms);
  g_rand_free (rnd);
}

/* A full store keeps the best candidates: the same result as running the
 * naive NMS on the best `capacity` of them. */
static void
test_nms_store_keeps_best (void)
{
  GRand *rnd = g_rand_new_with_seed (5);
  enum { N = 500, CAP = 64 };
  InferBox boxes[N];
  guint kept[N];
  InferNms nms;
  infer_nms_init (&nms, CAP);
  g_assert_cmpuint (nms.capacity, ==, CAP);
  for (guint trial = 0; trial < 50; trial++) {
    random_boxes (rnd, boxes, N, 3, trial % 2);
    infer_nms_reset (&nms);
    for (guint i = 0; i < N; i++)
      infer_nms_add (&nms, &boxes[i]);
    g_assert_true (nms.dropped);
    guint got = infer_nms_run (&nms, 0.5f, FALSE, N, NULL);
    qsort (boxes, N, sizeof *boxes, cmp_naive);
    guint want = naive_nms (boxes, CAP, 0.5f, FALSE, N, kept);
    g_assert_cmpuint (got, ==, want);
    for (guint i = 0; i < got; i++)
      g_assert_cmpuint (nms.boxes[i].index, ==, kept[i]);
  }
  infer_nms_clear (&nms);
  /* capacity bounds */
  infer_nms_init (&nms, 0);
  g_assert_cmpuint (nms.capacity, ==, 1);
  infer_nms_clear (&nms);
  infer_nms_init (&nms, G_MAXUINT);
  g_assert_cmpuint (nms.capacity, ==, INFER_NMS_MAX_CANDIDATES);
  infer_nms_clear (&nms);
  g_rand_free (rnd);
}

static void
test_nms_edges (void)
{
  InferNms nms;
  infer_nms_init (&nms, 8);
  /* degenerate boxes never overlap anything; IoU >= 1 keeps everything;
   * an empty store keeps nothing */
  InferBox b[] = {
    { 0, 0, 10, 10, 0.9f, 0, 0 },
    { 0, 0, 10, 10, 0.8f, 0, 1 },             /* identical: IoU 1 */
    { 5, 5, 5, 5, 0.7f, 0, 2 },               /* zero area */
    { 8, 8, 4, 4, 0.6f, 0, 3 },               /* inverted */
  };
  for (guint i = 0; i < G_N_ELEMENTS (b); i++)
    infer_nms_add (&nms, &b[i]);
  g_assert_cmpuint (infer_nms_run (&nms, 0.5f, FALSE, 10, NULL), ==, 3);
  g_assert_cmpuint (nms.boxes[1].index, ==, 2);
  infer_nms_reset (&nms);
  for (guint i = 0; i < G_N_ELEMENTS (b); i++)
    infer_nms_add (&nms, &b[i]);
  g_assert_cmpuint (infer_nms_run (&nms, 1.0f, FALSE, 10, NULL), ==, 4);
  g_assert_cmpfloat (infer_nms_iou (&b[0], &b[1]), ==, 1.0f);
  g_assert_cmpfloat (infer_nms_iou (&b[0], &b[2]), ==, 0.0f);
  g_assert_cmpfloat_with_epsilon (infer_nms_iou (&b[0], &(InferBox) { 5, 0, 15, 10 }), 1.0 / 3,
      1e-6);
  infer_nms_reset (&nms);
  g_assert_cmpuint (infer_nms_run (&nms, 0.5f, FALSE, 10, NULL), ==, 0);
  infer_nms_clear (&nms);
}

/* ---- NMS inside the model -------------------------------------------------------- */

static void
test_boxes_labels (void)
{
  enum { N = 6 };
  TestOutput outs[] = {
    { "labels", "Concat", NULL, M2I_ET_I64, TEST_SHAPE (1, N) },
    { "boxes", "Concat", NULL, M2I_ET_F32, TEST_SHAPE (1, N, 5) },
  };
  M2iIrModel *m = test_model_new (outs, 2, NULL);
  M2iDecoderOptions o;
  test_options_init (&o);
  GError *error = NULL;
  TestDecoder *d = test_decoder_new (&infer_decoder_detection_nms, m, &o, &error);
  g_assert_no_error (error);
  gint64 labels[N] = { 2, 0, 5, 1, -1, 3 };
  float boxes[N * 5] = {
    10, 10, 30, 30, 0.6f,
    12, 12, 32, 32, 0.9f,                 /* overlaps the first: both stay (NMS was done) */
    40, 40, 40.25f, 40.25f, 0.95f,        /* under one source pixel: dropped */
    -20, 20, 20, 40, 0.7f,                /* clamped at 0 */
    0, 0, 10, 10, 0.99f,                  /* label -1: padding */
    0, 0, 10, 10, 0.3f,                   /* below the threshold */
  };
  M2iTensor t[] = { { M2I_ET_I64, TEST_SHAPE (1, N), labels },
    { M2I_ET_F32, TEST_SHAPE (1, N, 5), boxes } };
  M2iInferGeometry g = test_geometry (128, 64, 64, 64, 0.5, 0.5, 0, 16);
  g_assert_true (test_decoder_decode (d, t, 2, &g, &error));
  g_assert_no_error (error);
  M2iInferResult *r = d->result;
  g_assert_cmpuint (r->n_detections, ==, 3);
  g_assert_cmpint (r->detections[0].class_id, ==, 0);
  g_assert_cmpfloat (r->detections[0].confidence, ==, 0.9f);
  g_assert_cmpfloat (r->detections[0].x_min, ==, 24);
  g_assert_cmpfloat (r->detections[0].y_min, ==, 0);      /* (12 - 16) * 2 clamped */
  g_assert_cmpfloat (r->detections[0].y_max, ==, 32);
  g_assert_cmpint (r->detections[1].class_id, ==, 1);
  g_assert_cmpfloat (r->detections[1].x_min, ==, 0);
  g_assert_cmpfloat (r->detections[1].x_max, ==, 40);
  g_assert_cmpint (r->detections[2].class_id, ==, 2);
  test_decoder_free (d);
  m2i_ir_model_unref (m);
}

static void
test_boxes_labels_scores (void)
{
  enum { N = 3 };
  /* unnamed outputs: told apart by shape and type */
  TestOutput outs[] = {
    { "out_a", "Concat", NULL, M2I_ET_F32, TEST_SHAPE (1, N, 4) },
    { "out_b", "Concat", NULL, M2I_ET_I32, TEST_SHAPE (1, N) },
    { "out_c", "Concat", NULL, M2I_ET_F32, TEST_SHAPE (1, N) },
  };
  M2iIrModel *m = test_model_new (outs, 3, NULL);
  M2iDecoderOptions o;
  test_options_init (&o);
  GError *error = NULL;
  TestDecoder *d = test_decoder_new (&infer_decoder_detection_nms, m, &o, &error);
  g_assert_no_error (error);
  float boxes[N * 4] = { 0.25f, 0.25f, 0.75f, 0.5f, 0.0f, 0.0f, 0.1f, 0.1f, 0, 0, 1, 1 };
  gint32 labels[N] = { 7, 1, 2 };
  float scores[N] = { 0.8f, NAN, 0.6f };
  M2iTensor t[] = { { M2I_ET_F32, TEST_SHAPE (1, N, 4), boxes },
    { M2I_ET_I32, TEST_SHAPE (1, N), labels }, { M2I_ET_F32, TEST_SHAPE (1, N), scores } };
  M2iInferGeometry g = test_geometry (200, 100, 200, 100, 1, 1, 0, 0);
  g_assert_true (test_decoder_decode (d, t, 3, &g, &error));
  M2iInferResult *r = d->result;
  g_assert_cmpuint (r->n_detections, ==, 2);
  g_assert_cmpint (r->detections[0].class_id, ==, 7);
  g_assert_cmpfloat (r->detections[0].x_min, ==, 50);
  g_assert_cmpfloat (r->detections[0].y_max, ==, 50);
  g_assert_cmpint (r->detections[1].class_id, ==, 2);
  g_assert_cmpfloat (r->detections[1].x_max, ==, 200);
  test_decoder_free (d);
  m2i_ir_model_unref (m);
}

static void
test_rows7 (void)
{
  enum { N = 4 };
  TestOutput out = { "detection_out", "Concat", NULL, M2I_ET_F32, TEST_SHAPE (1, 1, N, 7) };
  M2iIrModel *m = test_model_new (&out, 1, NULL);
  M2iDecoderOptions o;
  test_options_init (&o);
  o.max_detections = 1;
  GError *error = NULL;
  TestDecoder *d = test_decoder_new (&infer_decoder_detection_nms, m, &o, &error);
  g_assert_no_error (error);
  float rows[N * 7] = {
    0, 3, 0.7f, 0.1f, 0.1f, 0.2f, 0.2f,
    0, 4, 0.9f, 0.5f, 0.5f, 1.0f, 1.0f,
    -1, 0, 0, 0, 0, 0, 0,                 /* the end */
    0, 5, 0.99f, 0, 0, 1, 1,              /* after the end: not read */
  };
  M2iTensor t = { M2I_ET_F32, TEST_SHAPE (1, 1, N, 7), rows };
  M2iInferGeometry g = test_geometry (100, 100, 10, 10, 0.1, 0.1, 0, 0);
  g_assert_true (test_decoder_decode (d, &t, 1, &g, &error));
  M2iInferResult *r = d->result;
  g_assert_cmpuint (r->n_detections, ==, 1);
  g_assert_true (r->truncated);
  g_assert_cmpint (r->detections[0].class_id, ==, 4);
  g_assert_cmpfloat_with_epsilon (r->detections[0].x_min, 50, 1e-4);
  test_decoder_free (d);
  /* the same rows from a DetectionOutput layer are the SSD decoder's */
  m2i_ir_model_unref (m);
  out.type = "DetectionOutput";
  m = test_model_new (&out, 1, NULL);
  g_assert_null (test_decoder_new (&infer_decoder_detection_nms, m, &o, &error));
  g_assert_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  m2i_ir_model_unref (m);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/decode/nms/against-naive", test_nms_against_naive);
  g_test_add_func ("/decode/nms/store-keeps-best", test_nms_store_keeps_best);
  g_test_add_func ("/decode/nms/edges", test_nms_edges);
  g_test_add_func ("/decode/nms-inside/boxes-labels", test_boxes_labels);
  g_test_add_func ("/decode/nms-inside/boxes-labels-scores", test_boxes_labels_scores);
  g_test_add_func ("/decode/nms-inside/rows7", test_rows7);
  return g_test_run ();
}
