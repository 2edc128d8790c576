/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-decode-yolo.c — the YOLO v5/v8/v10 decoders (decode-yolo.c).
 *
 * On the real reference outputs of ../shared/models/external/reference
 * (skipped when absent): the raw output tensors of yolov8n-int8,
 * yolov8n-pose-int8 and yolov5n, decoded here, against the detections
 * Ultralytics' own non_max_suppression made from the same tensors (same
 * classes, scores within 0.01, IoU >= 0.9 in photo pixels through the
 * documented letterbox, keypoints within 1 photo pixel). On hand-made
 * tensors: no box above the threshold, all boxes overlapping, boxes past the
 * border, a letterboxed non-square source, max detections, NaN and Inf,
 * objectness, end-to-end rows, stable order, shape checks.
 */
#include "decode-test-util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- the real references ------------------------------------------------------ */

typedef struct {
  gint class_id;
  float score;
  float photo[4];                 /* x1 y1 x2 y2 in photo pixels */
} RefDet;

/* The "class name score x1 y1 x2 y2 | x1 y1 x2 y2" lines of a detections file. */
static GArray *
read_ref_detections (const char *relative)
{
  g_autofree gchar *path = test_shared_path (relative);
  g_autofree gchar *text = NULL;
  if (!path || !g_file_get_contents (path, &text, NULL, NULL))
    return NULL;
  GArray *a = g_array_new (FALSE, TRUE, sizeof (RefDet));
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  for (gchar **l = lines; *l; l++) {
    if (**l == '#' || !**l)
      continue;
    RefDet d;
    char name[64];
    float in[4];
    g_assert_cmpint (sscanf (*l, "%d %63s %f %f %f %f %f | %f %f %f %f", &d.class_id, name,
            &d.score, &in[0], &in[1], &in[2], &in[3], &d.photo[0], &d.photo[1], &d.photo[2],
            &d.photo[3]), ==, 11);
    g_array_append_val (a, d);
  }
  return a;
}

static void
check_against_reference (const InferDecoderClass *row, const char *model_path,
    const char *output_path, M2iShape shape, const char *dets_path, M2iInferGeometry g,
    float conf, float iou)
{
  M2iIrModel *model = test_load_shared_model (model_path);
  float *raw = test_shared_f32 (output_path, (gsize) m2i_shape_numel (&shape));
  GArray *ref = read_ref_detections (dets_path);
  if (!model || !raw || !ref) {
    g_test_skip ("../shared/models/external (models and reference outputs) is not here");
    goto out;
  }
  M2iDecoderOptions o;
  test_options_init (&o);
  o.confidence_threshold = conf;
  o.iou_threshold = iou;
  GError *error = NULL;
  TestDecoder *d = test_decoder_new (row, model, &o, &error);
  g_assert_no_error (error);
  M2iTensor t = { M2I_ET_F32, shape, raw };
  g_assert_true (test_decoder_decode (d, &t, 1, &g, &error));
  g_assert_no_error (error);
  M2iInferResult *r = d->result;
  g_assert_cmpuint (r->n_detections, ==, ref->len);
  for (guint i = 0; i < ref->len; i++) {
    const RefDet *e = &g_array_index (ref, RefDet, i);
    const M2iInferDetection *det = &r->detections[i];
    double ov = test_iou (det->x_min, det->y_min, det->x_max, det->y_max, e->photo[0],
        e->photo[1], e->photo[2], e->photo[3]);
    g_test_message ("class %d %.4f (%.1f, %.1f)-(%.1f, %.1f); reference %d %.4f, IoU %.4f",
        det->class_id, det->confidence, det->x_min, det->y_min, det->x_max, det->y_max,
        e->class_id, e->score, ov);
    g_assert_cmpint (det->class_id, ==, e->class_id);
    g_assert_cmpfloat_with_epsilon (det->confidence, e->score, 0.01);
    g_assert_cmpfloat (ov, >=, 0.9);
    /* clamped to the photo */
    g_assert_cmpfloat (det->x_min, >=, 0);
    g_assert_cmpfloat (det->y_min, >=, 0);
    g_assert_cmpfloat (det->x_max, <=, g.source_width);
    g_assert_cmpfloat (det->y_max, <=, g.source_height);
  }
  g_assert_false (r->truncated);
  test_decoder_free (d);
out:
  if (model)
    m2i_ir_model_unref (model);
  g_free (raw);
  if (ref)
    g_array_unref (ref);
}

/* astronaut.png (512x512) letterboxed to 640x640: scale 1.25, no pad. */
static void
test_v8_reference (void)
{
  check_against_reference (&infer_decoder_yolo_v8, "yolov8n-int8/yolov8n.xml",
      "reference/yolov8n-int8.astronaut.output.f32", TEST_SHAPE (1, 84, 8400),
      "reference/yolov8n-int8.astronaut.detections.txt",
      test_geometry (512, 512, 640, 640, 1.25, 1.25, 0, 0), 0.25f, 0.7f);
}

/* chelsea.png (451x300) letterboxed to 416x416: scale 416/451, 277 rows
 * from row 69. */
static void
test_v5_reference (void)
{
  double s = 416.0 / 451.0;
  check_against_reference (&infer_decoder_yolo_v5, "yolov5n/yolov5n.xml",
      "reference/yolov5n.chelsea.output.f32", TEST_SHAPE (1, 10647, 85),
      "reference/yolov5n.chelsea.detections.txt",
      test_geometry (451, 300, 416, 416, s, s, 0, 69), 0.25f, 0.45f);
}

static void
test_pose_reference (void)
{
  M2iIrModel *model = test_load_shared_model ("yolov8n-pose-int8/yolov8n-pose.xml");
  float *raw = test_shared_f32 ("reference/yolov8n-pose-int8.astronaut.output.f32", 56 * 8400);
  g_autofree gchar *path = test_shared_path ("reference/yolov8n-pose-int8.astronaut.keypoints.txt");
  g_autofree gchar *text = NULL;
  if (!model || !raw || !path || !g_file_get_contents (path, &text, NULL, NULL)) {
    g_test_skip ("../shared/models/external (yolov8n-pose-int8 and its reference) is not here");
    if (model)
      m2i_ir_model_unref (model);
    g_free (raw);
    return;
  }
  M2iDecoderOptions o;
  test_options_init (&o);
  o.confidence_threshold = 0.25f;
  o.iou_threshold = 0.7f;
  GError *error = NULL;
  TestDecoder *d = test_decoder_new (&infer_decoder_yolo_v8, model, &o, &error);
  g_assert_no_error (error);
  /* the model's metadata (one label, "person") leaves 51 rows: 17 keypoints */
  g_assert_nonnull (strstr (d->describe, "17 keypoints"));
  M2iInferGeometry g = test_geometry (512, 512, 640, 640, 1.25, 1.25, 0, 0);
  M2iTensor t = { M2I_ET_F32, TEST_SHAPE (1, 56, 8400), raw };
  g_assert_true (test_decoder_decode (d, &t, 1, &g, &error));
  M2iInferResult *r = d->result;
  g_assert_cmpuint (r->n_detections, ==, 1);
  const M2iInferDetection *det = &r->detections[0];
  g_assert_cmpint (det->class_id, ==, 0);
  g_assert_cmpfloat_with_epsilon (det->confidence, 0.8944, 0.01);
  g_assert_cmpfloat (test_iou (det->x_min, det->y_min, det->x_max, det->y_max, 25.76 / 1.25,
          19.61 / 1.25, 456.77 / 1.25, 636.72 / 1.25), >=, 0.9);
  g_assert_cmpuint (det->n_keypoints, ==, 17);
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  guint k = 0;
  for (gchar **l = lines; *l; l++) {
    char name[32];
    float x, y, v;
    if (sscanf (*l, " %31s %f %f %f", name, &x, &y, &v) != 4 || !strcmp (name, "person"))
      continue;
    const M2iInferKeypoint *kp = &r->keypoints[det->first_keypoint + k++];
    g_test_message ("%-10s (%.2f, %.2f) %.4f; reference (%.2f, %.2f) %.4f", name, kp->x, kp->y,
        kp->confidence, x / 1.25, y / 1.25, v);
    g_assert_cmpfloat (fabs (kp->x - x / 1.25), <=, 1.0);
    g_assert_cmpfloat (fabs (kp->y - y / 1.25), <=, 1.0);
    g_assert_cmpfloat_with_epsilon (kp->confidence, v, 0.01);
  }
  g_assert_cmpuint (k, ==, 17);
  test_decoder_free (d);
  m2i_ir_model_unref (model);
  g_free (raw);
}

/* ---- hand-made tensors -------------------------------------------------------- */

#define C8 3                      /* classes of the hand-made v8 model */
#define N8 32                     /* anchors */
#define D8 (4 + C8)

static TestDecoder *
v8_decoder (const M2iDecoderOptions *o)
{
  TestOutput out = { "output0", "Concat", NULL, M2I_ET_F32, TEST_SHAPE (1, D8, N8) };
  M2iIrModel *m = test_model_new (&out, 1, NULL);
  GError *error = NULL;
  TestDecoder *d = test_decoder_new (&infer_decoder_yolo_v8, m, o, &error);
  g_assert_no_error (error);
  m2i_ir_model_unref (m);
  return d;
}

/* Anchor @j of a [1,D8,N8] tensor: box (cx, cy, w, h), class @c scored @s. */
static void
set_anchor (float *p, guint j, float cx, float cy, float w, float h, guint c, float s)
{
  p[0 * N8 + j] = cx;
  p[1 * N8 + j] = cy;
  p[2 * N8 + j] = w;
  p[3 * N8 + j] = h;
  p[(4 + c) * N8 + j] = s;
}

static M2iInferResult *
decode_v8 (TestDecoder *d, float *p, const M2iInferGeometry *g)
{
  M2iTensor t = { M2I_ET_F32, TEST_SHAPE (1, D8, N8), p };
  GError *error = NULL;
  g_assert_true (test_decoder_decode (d, &t, 1, g, &error));
  g_assert_no_error (error);
  return d->result;
}

static void
test_none_above (void)
{
  M2iDecoderOptions o;
  test_options_init (&o);
  TestDecoder *d = v8_decoder (&o);
  float p[D8 * N8] = { 0 };
  for (guint j = 0; j < N8; j++)
    set_anchor (p, j, 10 + j, 10, 8, 8, j % C8, 0.49f);
  M2iInferGeometry g = test_geometry (64, 64, 64, 64, 1, 1, 0, 0);
  M2iInferResult *r = decode_v8 (d, p, &g);
  g_assert_cmpuint (r->n_detections, ==, 0);
  g_assert_false (r->truncated);
  /* at the threshold is in */
  set_anchor (p, 5, 20, 20, 8, 8, 1, 0.5f);
  r = decode_v8 (d, p, &g);
  g_assert_cmpuint (r->n_detections, ==, 1);
  g_assert_cmpint (r->detections[0].class_id, ==, 1);
  test_decoder_free (d);
}

static void
test_all_overlapping (void)
{
  M2iDecoderOptions o;
  test_options_init (&o);
  TestDecoder *d = v8_decoder (&o);
  float p[D8 * N8] = { 0 };
  /* 24 near-identical boxes over two classes; class 0's best is anchor 7,
   * class 2's anchor 16 */
  for (guint j = 0; j < 24; j++)
    set_anchor (p, j, 30 + 0.1f * j, 30, 20, 20, j < 12 ? 0 : 2, 0.6f + 0.01f * (j % 12));
  set_anchor (p, 7, 30.7f, 30, 20, 20, 0, 0.95f);
  set_anchor (p, 16, 31.6f, 30, 20, 20, 2, 0.9f);
  M2iInferGeometry g = test_geometry (64, 64, 64, 64, 1, 1, 0, 0);
  M2iInferResult *r = decode_v8 (d, p, &g);
  g_assert_cmpuint (r->n_detections, ==, 2);
  g_assert_cmpint (r->detections[0].class_id, ==, 0);
  g_assert_cmpfloat (r->detections[0].confidence, ==, 0.95f);
  g_assert_cmpfloat_with_epsilon (r->detections[0].x_min, 30.7 - 10, 1e-4);
  g_assert_cmpint (r->detections[1].class_id, ==, 2);
  g_assert_cmpfloat (r->detections[1].confidence, ==, 0.9f);
  g_assert_cmpfloat_with_epsilon (r->detections[1].x_min, 31.6 - 10, 1e-4);
  test_decoder_free (d);
  /* class-agnostic: one box */
  o.class_agnostic_nms = TRUE;
  d = v8_decoder (&o);
  r = decode_v8 (d, p, &g);
  g_assert_cmpuint (r->n_detections, ==, 1);
  g_assert_cmpfloat (r->detections[0].confidence, ==, 0.95f);
  test_decoder_free (d);
}

static void
test_border_clamped (void)
{
  M2iDecoderOptions o;
  test_options_init (&o);
  TestDecoder *d = v8_decoder (&o);
  float p[D8 * N8] = { 0 };
  set_anchor (p, 0, 2, 3, 20, 30, 0, 0.9f);          /* past the top left */
  set_anchor (p, 1, 60, 62, 20, 10, 1, 0.8f);        /* past the bottom right */
  set_anchor (p, 2, 32, 32, 200, 200, 2, 0.7f);      /* over all of it */
  M2iInferGeometry g = test_geometry (64, 64, 64, 64, 1, 1, 0, 0);
  M2iInferResult *r = decode_v8 (d, p, &g);
  g_assert_cmpuint (r->n_detections, ==, 3);
  const M2iInferDetection *a = &r->detections[0], *b = &r->detections[1], *c = &r->detections[2];
  g_assert_cmpfloat (a->x_min, ==, 0);
  g_assert_cmpfloat (a->y_min, ==, 0);
  g_assert_cmpfloat (a->x_max, ==, 12);
  g_assert_cmpfloat (a->y_max, ==, 18);
  g_assert_cmpfloat (b->x_min, ==, 50);
  g_assert_cmpfloat (b->y_min, ==, 57);
  g_assert_cmpfloat (b->x_max, ==, 64);
  g_assert_cmpfloat (b->y_max, ==, 64);
  g_assert_cmpfloat (c->x_min, ==, 0);
  g_assert_cmpfloat (c->y_max, ==, 64);
  test_decoder_free (d);
}

/* A 200x100 source letterboxed into 64x64: scale 0.32, the image on rows
 * 16..48. Model box (16, 24)-(48, 40) is source (50, 25)-(150, 75); a box in
 * the bottom pad row clamps to the source's bottom edge. */
static void
test_letterbox (void)
{
  M2iDecoderOptions o;
  test_options_init (&o);
  TestDecoder *d = v8_decoder (&o);
  float p[D8 * N8] = { 0 };
  set_anchor (p, 0, 32, 32, 32, 16, 0, 0.9f);
  set_anchor (p, 1, 10, 52, 8, 8, 1, 0.8f);
  M2iInferGeometry g = test_geometry (200, 100, 64, 64, 0.32, 0.32, 0, 16);
  M2iInferResult *r = decode_v8 (d, p, &g);
  g_assert_cmpuint (r->n_detections, ==, 2);
  const M2iInferDetection *a = &r->detections[0], *b = &r->detections[1];
  g_assert_cmpfloat_with_epsilon (a->x_min, 50, 1e-4);
  g_assert_cmpfloat_with_epsilon (a->y_min, 25, 1e-4);
  g_assert_cmpfloat_with_epsilon (a->x_max, 150, 1e-4);
  g_assert_cmpfloat_with_epsilon (a->y_max, 75, 1e-4);
  g_assert_cmpfloat_with_epsilon (b->x_min, 6 / 0.32, 1e-4);
  g_assert_cmpfloat_with_epsilon (b->y_min, (48 - 16) / 0.32, 1e-4);
  g_assert_cmpfloat (b->y_max, ==, 100);
  /* a crop origin moves everything */
  g.crop_x = 7;
  g.crop_y = 3;
  g.source_width = 400;
  g.source_height = 300;
  r = decode_v8 (d, p, &g);
  g_assert_cmpfloat_with_epsilon (r->detections[0].x_min, 57, 1e-4);
  g_assert_cmpfloat_with_epsilon (r->detections[0].y_max, 78, 1e-4);
  test_decoder_free (d);
}

static void
test_max_detections (void)
{
  M2iDecoderOptions o;
  test_options_init (&o);
  o.max_detections = 5;
  TestDecoder *d = v8_decoder (&o);
  g_assert_cmpuint (d->size->max_detections, ==, 5);
  float p[D8 * N8] = { 0 };
  /* 20 separate boxes, scores in a shuffled order */
  for (guint j = 0; j < 20; j++)
    set_anchor (p, j, 4 + 3 * j, 4 + 3 * j, 2, 2, j % C8, 0.6f + 0.01f * ((j * 7) % 20));
  M2iInferGeometry g = test_geometry (64, 64, 64, 64, 1, 1, 0, 0);
  M2iInferResult *r = decode_v8 (d, p, &g);
  g_assert_cmpuint (r->n_detections, ==, 5);
  g_assert_true (r->truncated);
  for (guint i = 0; i < 5; i++)
    g_assert_cmpfloat_with_epsilon (r->detections[i].confidence, 0.6 + 0.01 * (19 - i), 1e-6);
  /* thresholds change between decodes (m2i_decoder_set_options) */
  d->opts.confidence_threshold = 0.765f;
  r = decode_v8 (d, p, &g);
  g_assert_cmpuint (r->n_detections, ==, 3);
  g_assert_false (r->truncated);
  d->opts.max_detections = 2;
  r = decode_v8 (d, p, &g);
  g_assert_cmpuint (r->n_detections, ==, 2);
  g_assert_true (r->truncated);
  test_decoder_free (d);
  /* exactly as many as allowed: not truncated */
  o.max_detections = 20;
  d = v8_decoder (&o);
  r = decode_v8 (d, p, &g);
  g_assert_cmpuint (r->n_detections, ==, 20);
  g_assert_false (r->truncated);
  test_decoder_free (d);
}

static void
test_nan_inf (void)
{
  M2iDecoderOptions o;
  test_options_init (&o);
  TestDecoder *d = v8_decoder (&o);
  float p[D8 * N8] = { 0 };
  set_anchor (p, 0, 10, 10, 4, 4, 0, NAN);
  set_anchor (p, 1, 20, 10, 4, 4, 0, INFINITY);
  set_anchor (p, 2, 30, 10, 4, 4, 0, -INFINITY);
  set_anchor (p, 3, NAN, 10, 4, 4, 0, 0.9f);
  set_anchor (p, 4, 40, INFINITY, 4, 4, 0, 0.9f);
  set_anchor (p, 5, 50, 10, 4, 4, 1, 0.7f);            /* the one good box */
  set_anchor (p, 6, 50, 30, 4, 4, 0, NAN);             /* NaN beside a good class */
  p[(4 + 2) * N8 + 6] = 0.6f;
  M2iInferGeometry g = test_geometry (64, 64, 64, 64, 1, 1, 0, 0);
  M2iInferResult *r = decode_v8 (d, p, &g);
  g_assert_cmpuint (r->n_detections, ==, 2);
  g_assert_cmpint (r->detections[0].class_id, ==, 1);
  g_assert_cmpfloat (r->detections[0].confidence, ==, 0.7f);
  g_assert_cmpint (r->detections[1].class_id, ==, 2);
  g_assert_cmpfloat (r->detections[1].confidence, ==, 0.6f);
  test_decoder_free (d);
}

/* Equal scores come out in anchor order, whatever else is in between. */
static void
test_stable_order (void)
{
  M2iDecoderOptions o;
  test_options_init (&o);
  TestDecoder *d = v8_decoder (&o);
  float p[D8 * N8] = { 0 };
  for (guint j = 0; j < N8; j++)
    set_anchor (p, N8 - 1 - j, 1 + 2 * j, 1 + 2 * j, 1, 1, 0, j % 2 ? 0.75f : 0.8f);
  M2iInferGeometry g = test_geometry (64, 64, 64, 64, 1, 1, 0, 0);
  M2iInferResult *r = decode_v8 (d, p, &g);
  g_assert_cmpuint (r->n_detections, ==, N8);
  for (guint i = 1; i < N8; i++) {
    const M2iInferDetection *a = &r->detections[i - 1], *b = &r->detections[i];
    g_assert_cmpfloat (a->confidence, >=, b->confidence);
    /* anchor N8-1-j sits at 1+2j: a lower anchor index is further right */
    if (a->confidence == b->confidence)
      g_assert_cmpfloat (a->x_min, >, b->x_min);
  }
  test_decoder_free (d);
}

static void
test_v5_objectness (void)
{
  enum { N = 12, C = 2, D = 5 + C };
  TestOutput out = { "output0", "Concat", NULL, M2I_ET_F32, TEST_SHAPE (1, N, D) };
  M2iIrModel *m = test_model_new (&out, 1, NULL);
  M2iDecoderOptions o;
  test_options_init (&o);
  GError *error = NULL;
  TestDecoder *d = test_decoder_new (&infer_decoder_yolo_v5, m, &o, &error);
  g_assert_no_error (error);
  float p[N * D] = { 0 };
  float rows[][D] = {
    { 10, 10, 4, 4, 0.9f, 0.8f, 0.1f },   /* 0.72, class 0 */
    { 30, 10, 4, 4, 0.4f, 1.0f, 1.0f },   /* objectness below: out */
    { 50, 10, 4, 4, 0.8f, 0.5f, 0.7f },   /* 0.56, class 1 */
    { 10, 40, 4, 4, 0.9f, 0.5f, 0.5f },   /* 0.45: out */
    { 30, 40, 4, 4, NAN, 0.9f, 0.9f },    /* out */
  };
  memcpy (p, rows, sizeof rows);
  M2iTensor t = { M2I_ET_F32, TEST_SHAPE (1, N, D), p };
  M2iInferGeometry g = test_geometry (64, 64, 64, 64, 1, 1, 0, 0);
  g_assert_true (test_decoder_decode (d, &t, 1, &g, &error));
  M2iInferResult *r = d->result;
  g_assert_cmpuint (r->n_detections, ==, 2);
  g_assert_cmpint (r->detections[0].class_id, ==, 0);
  g_assert_cmpfloat_with_epsilon (r->detections[0].confidence, 0.72, 1e-6);
  g_assert_cmpfloat (r->detections[0].x_min, ==, 8);
  g_assert_cmpint (r->detections[1].class_id, ==, 1);
  g_assert_cmpfloat_with_epsilon (r->detections[1].confidence, 0.56, 1e-6);
  test_decoder_free (d);
  /* the v8 decoder refuses this shape ([1,12,7]: more rows than columns
   * would be anchors) */
  g_assert_null (test_decoder_new (&infer_decoder_yolo_v8, m, &o, &error));
  g_assert_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT);
  g_test_message ("%s", error->message);
  g_clear_error (&error);
  m2i_ir_model_unref (m);
}

static void
test_v10_end_to_end (void)
{
  enum { N = 6, D = 6 };
  TestOutput out = { "output0", "Concat", NULL, M2I_ET_F32, TEST_SHAPE (1, N, D) };
  M2iIrModel *m = test_model_new (&out, 1, NULL);
  M2iDecoderOptions o;
  test_options_init (&o);
  GError *error = NULL;
  TestDecoder *d = test_decoder_new (&infer_decoder_yolo_v10, m, &o, &error);
  g_assert_no_error (error);
  float p[N * D] = {
    10, 10, 30, 30, 0.9f, 3,
    11, 11, 31, 31, 0.8f, 3,              /* overlaps the first, same class: kept (no NMS) */
    40, 40, 50, 50, 0.3f, 1,              /* below */
    50, 50, 40, 40, 0.7f, 2,              /* corners swapped */
    0, 0, 5, 5, 0.95f, NAN,               /* no class */
    0, 0, 5, 5, 0.6f, -1,                 /* negative class */
  };
  M2iTensor t = { M2I_ET_F32, TEST_SHAPE (1, N, D), p };
  M2iInferGeometry g = test_geometry (32, 32, 64, 64, 2, 2, 0, 0);
  g_assert_true (test_decoder_decode (d, &t, 1, &g, &error));
  M2iInferResult *r = d->result;
  g_assert_cmpuint (r->n_detections, ==, 3);
  g_assert_cmpfloat (r->detections[0].confidence, ==, 0.9f);
  g_assert_cmpint (r->detections[0].class_id, ==, 3);
  g_assert_cmpfloat (r->detections[0].x_min, ==, 5);
  g_assert_cmpfloat (r->detections[0].y_max, ==, 15);
  g_assert_cmpfloat (r->detections[1].confidence, ==, 0.8f);
  g_assert_cmpint (r->detections[2].class_id, ==, 2);
  g_assert_cmpfloat (r->detections[2].x_min, ==, 20);
  g_assert_cmpfloat (r->detections[2].x_max, ==, 25);
  test_decoder_free (d);
  m2i_ir_model_unref (m);
}

static void
test_bad_outputs (void)
{
  M2iDecoderOptions o;
  test_options_init (&o);
  TestDecoder *d = v8_decoder (&o);
  float p[D8 * N8] = { 0 };
  GError *error = NULL;
  M2iInferGeometry g = test_geometry (64, 64, 64, 64, 1, 1, 0, 0);
  /* a tensor of another shape, no tensor, another type, a bad geometry */
  M2iTensor t = { M2I_ET_F32, TEST_SHAPE (1, D8, N8 - 1), p };
  g_assert_false (test_decoder_decode (d, &t, 1, &g, &error));
  g_assert_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT);
  g_test_message ("%s", error->message);
  g_clear_error (&error);
  g_assert_false (test_decoder_decode (d, &t, 0, &g, &error));
  g_assert_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  t = (M2iTensor) { M2I_ET_I32, TEST_SHAPE (1, D8, N8), p };
  g_assert_false (test_decoder_decode (d, &t, 1, &g, &error));
  g_clear_error (&error);
  t.type = M2I_ET_F32;
  g.scale_x = 0;
  g_assert_false (test_decoder_decode (d, &t, 1, &g, &error));
  g_assert_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  test_decoder_free (d);
  /* models the YOLO decoders refuse */
  TestOutput outs[] = {
    { "a", "Concat", NULL, M2I_ET_F32, TEST_SHAPE (1, 1000) },
    { "b", "Concat", NULL, M2I_ET_I64, TEST_SHAPE (1, 84, 8400) },
  };
  M2iIrModel *m = test_model_new (outs, 2, NULL);
  const InferDecoderClass *rows[] = { &infer_decoder_yolo_v5, &infer_decoder_yolo_v8,
    &infer_decoder_yolo_v10 };
  for (guint i = 0; i < G_N_ELEMENTS (rows); i++) {
    g_assert_null (test_decoder_new (rows[i], m, &o, &error));
    g_assert_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT);
    g_test_message ("%s", error->message);
    g_clear_error (&error);
  }
  m2i_ir_model_unref (m);
}

/* Keypoints from an unnamed 2-class model told by framework/kpt_shape; v8
 * pose layout with 2 values per keypoint (no visibility). */
static void
test_keypoints_from_metadata (void)
{
  enum { C = 2, K = 3, D = 4 + C + 2 * K, N = 16 };
  TestOutput out = { "output0", "Concat", NULL, M2I_ET_F32, TEST_SHAPE (1, D, N) };
  M2iIrModel *m = test_model_new (&out, 1,
      "<framework><kpt_shape value=\"[3, 2]\"/></framework>");
  M2iDecoderOptions o;
  test_options_init (&o);
  GError *error = NULL;
  TestDecoder *d = test_decoder_new (&infer_decoder_yolo_v8, m, &o, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (d->size->max_keypoints, ==, N * K);    /* at most N detections */
  float p[D * N] = { 0 };
  guint j = 9;
  p[0 * N + j] = 20;
  p[1 * N + j] = 20;
  p[2 * N + j] = 10;
  p[3 * N + j] = 10;
  p[(4 + 1) * N + j] = 0.9f;
  for (guint k = 0; k < K; k++) {
    p[(4 + C + 2 * k) * N + j] = 16 + k;
    p[(4 + C + 2 * k + 1) * N + j] = 40 + k;
  }
  M2iTensor t = { M2I_ET_F32, TEST_SHAPE (1, D, N), p };
  M2iInferGeometry g = test_geometry (128, 64, 64, 64, 0.5, 0.5, 0, 16);
  g_assert_true (test_decoder_decode (d, &t, 1, &g, &error));
  M2iInferResult *r = d->result;
  g_assert_cmpuint (r->n_detections, ==, 1);
  g_assert_cmpint (r->detections[0].class_id, ==, 1);
  g_assert_cmpuint (r->detections[0].n_keypoints, ==, K);
  for (guint k = 0; k < K; k++) {
    const M2iInferKeypoint *kp = &r->keypoints[r->detections[0].first_keypoint + k];
    g_assert_cmpfloat (kp->x, ==, (16 + k) * 2);
    g_assert_cmpfloat (kp->y, ==, (40 + k - 16) * 2);
    g_assert_cmpfloat (kp->confidence, <, 0);
  }
  test_decoder_free (d);
  m2i_ir_model_unref (m);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/decode/yolo/v8-reference-astronaut", test_v8_reference);
  g_test_add_func ("/decode/yolo/v5-reference-chelsea", test_v5_reference);
  g_test_add_func ("/decode/yolo/v8-pose-reference-astronaut", test_pose_reference);
  g_test_add_func ("/decode/yolo/none-above-threshold", test_none_above);
  g_test_add_func ("/decode/yolo/all-overlapping", test_all_overlapping);
  g_test_add_func ("/decode/yolo/border-clamped", test_border_clamped);
  g_test_add_func ("/decode/yolo/letterbox", test_letterbox);
  g_test_add_func ("/decode/yolo/max-detections", test_max_detections);
  g_test_add_func ("/decode/yolo/nan-inf", test_nan_inf);
  g_test_add_func ("/decode/yolo/stable-order", test_stable_order);
  g_test_add_func ("/decode/yolo/v5-objectness", test_v5_objectness);
  g_test_add_func ("/decode/yolo/v10-end-to-end", test_v10_end_to_end);
  g_test_add_func ("/decode/yolo/bad-outputs", test_bad_outputs);
  g_test_add_func ("/decode/yolo/keypoints-from-metadata", test_keypoints_from_metadata);
  return g_test_run ();
}
