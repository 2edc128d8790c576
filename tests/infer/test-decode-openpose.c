/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-decode-openpose.c — the OpenPose decoder (decode-openpose.c).
 *
 * Hand-made heatmaps and part affinity fields (Gaussian blobs at chosen
 * cells, unit vectors along the chosen limbs): two people come out as two
 * people with the keypoints placed, in source pixels through the geometry;
 * nothing above the peak threshold, or too few keypoints, gives nobody; a
 * keypoint on the grid's border is found there; a peak's quarter-cell
 * refinement; NaN and Inf values; shapes refused with a message.
 *
 * human-pose-estimation-0001 (../shared, skipped when absent) on the
 * astronaut: from ONNX Runtime's reference outputs and from the IR
 * runtime's own run of the reference input, one person whose keypoints
 * with a reference peak >= 0.1 lie within one heatmap cell (8 input
 * pixels) of the reference's argmax, and whose keypoints under 0.05 are
 * missing.
 */
#include "decode-test-util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define GW 32
#define GH 24
#define STRIDE 8                /* model 256x192 */
#define NK 18
#define PLANE (GW * GH)

typedef struct {
  float *heat;                  /* [19, GH, GW] */
  float *paf;                   /* [38, GH, GW] */
} Maps;

static Maps
maps_new (void)
{
  return (Maps) { g_new0 (float, 19 * PLANE), g_new0 (float, 38 * PLANE) };
}

static void
maps_free (Maps *m)
{
  g_free (m->heat);
  g_free (m->paf);
}

/* A Gaussian blob of height @peak (sigma 1 cell) at cell (@x, @y) of
 * keypoint @k, keeping the higher value where blobs meet. */
static void
blob (Maps *m, guint k, gint x, gint y, float peak)
{
  for (gint yy = 0; yy < GH; yy++)
    for (gint xx = 0; xx < GW; xx++) {
      float d2 = (float) ((xx - x) * (xx - x) + (yy - y) * (yy - y));
      float v = peak * expf (-d2 / 2);
      float *c = &m->heat[k * PLANE + yy * GW + xx];
      *c = MAX (*c, v);
    }
}

/* The field of the limb whose x channel is @ch: the unit vector from cell
 * (@ax, @ay) to (@bx, @by) on every cell within one cell of the segment. */
static void
limb (Maps *m, guint ch, gint ax, gint ay, gint bx, gint by)
{
  float vx = (float) (bx - ax), vy = (float) (by - ay), len = sqrtf (vx * vx + vy * vy);
  for (gint yy = 0; yy < GH; yy++)
    for (gint xx = 0; xx < GW; xx++) {
      float px = (float) (xx - ax), py = (float) (yy - ay);
      float t = CLAMP ((px * vx + py * vy) / (len * len), 0.0f, 1.0f);
      float dx = px - t * vx, dy = py - t * vy;
      if (dx * dx + dy * dy <= 1.0f) {
        m->paf[ch * PLANE + yy * GW + xx] = vx / len;
        m->paf[(ch + 1) * PLANE + yy * GW + xx] = vy / len;
      }
    }
}

/* The COCO-18 indices and OpenPose's PAF channels of the limbs drawn here
 * (the training's: neck-r_shoulder 12, neck-l_shoulder 20, neck-nose 28). */
enum { NOSE = 0, NECK = 1, R_SHOULDER = 2, L_SHOULDER = 5 };
#define PAF_NECK_RSH 12
#define PAF_NECK_LSH 20
#define PAF_NECK_NOSE 28

/* A person: nose, neck and both shoulders at cells around (@x, @y) (the
 * neck), peaks of height @peak, and the fields of the three limbs. */
typedef struct {
  gint kx[NK], ky[NK];          /* -1: absent */
} Person;

static Person
person (Maps *m, gint x, gint y, float peak)
{
  Person p;
  for (guint k = 0; k < NK; k++)
    p.kx[k] = p.ky[k] = -1;
  p.kx[NECK] = x, p.ky[NECK] = y;
  p.kx[NOSE] = x, p.ky[NOSE] = y - 3;
  p.kx[R_SHOULDER] = x - 2, p.ky[R_SHOULDER] = y;
  p.kx[L_SHOULDER] = x + 2, p.ky[L_SHOULDER] = y;
  for (guint k = 0; k < NK; k++)
    if (p.kx[k] >= 0)
      blob (m, k, p.kx[k], p.ky[k], peak);
  limb (m, PAF_NECK_RSH, x, y, p.kx[R_SHOULDER], p.ky[R_SHOULDER]);
  limb (m, PAF_NECK_LSH, x, y, p.kx[L_SHOULDER], p.ky[L_SHOULDER]);
  limb (m, PAF_NECK_NOSE, x, y, p.kx[NOSE], p.ky[NOSE]);
  return p;
}

/* The model: PAFs first, as human-pose-estimation-0001 has them. */
static M2iIrModel *
pose_model (void)
{
  const TestOutput outs[] = {
    { "pafs", "Add", NULL, M2I_ET_F32, TEST_SHAPE (1, 38, GH, GW) },
    { "heatmaps", "Add", NULL, M2I_ET_F32, TEST_SHAPE (1, 19, GH, GW) },
  };
  return test_model_new (outs, 2, NULL);
}

static TestDecoder *
pose_decoder (M2iIrModel *model)
{
  M2iDecoderOptions o;
  test_options_init (&o);
  o.confidence_threshold = 0.3f;
  GError *error = NULL;
  TestDecoder *d = test_decoder_new (&infer_decoder_openpose, model, &o, &error);
  g_assert_no_error (error);
  return d;
}

static gboolean
decode (TestDecoder *d, Maps *m, const M2iInferGeometry *g, GError **error)
{
  M2iTensor t[2] = {
    { M2I_ET_F32, TEST_SHAPE (1, 38, GH, GW), m->paf },
    { M2I_ET_F32, TEST_SHAPE (1, 19, GH, GW), m->heat },
  };
  return test_decoder_decode (d, t, 2, g, error);
}

/* Detection @i of @r has @p's keypoints (cell centres through a 2x
 * downscale: source = (cell + 0.5) * STRIDE * 2 + @dx, ...) with
 * confidence @peak, the others missing, and the box of their extent. */
static void
assert_person (const M2iInferResult *r, guint i, const Person *p, float peak, float dx, float dy)
{
  const M2iInferDetection *d = &r->detections[i];
  g_assert_cmpint (d->class_id, ==, 0);
  g_assert_cmpuint (d->n_keypoints, ==, NK);
  g_assert_cmpfloat_with_epsilon (d->confidence, peak, 1e-5);
  float x0 = INFINITY, y0 = INFINITY, x1 = -INFINITY, y1 = -INFINITY;
  for (guint k = 0; k < NK; k++) {
    const M2iInferKeypoint *kp = &r->keypoints[d->first_keypoint + k];
    if (p->kx[k] < 0) {
      g_assert_cmpfloat (kp->confidence, <, 0);
      g_assert_true (isnan (kp->x) && isnan (kp->y));
      continue;
    }
    float x = (p->kx[k] + 0.5f) * STRIDE * 2 + dx, y = (p->ky[k] + 0.5f) * STRIDE * 2 + dy;
    g_assert_cmpfloat_with_epsilon (kp->confidence, peak, 1e-5);
    g_assert_cmpfloat_with_epsilon (kp->x, x, 1e-3);
    g_assert_cmpfloat_with_epsilon (kp->y, y, 1e-3);
    x0 = MIN (x0, x), y0 = MIN (y0, y), x1 = MAX (x1, x), y1 = MAX (y1, y);
  }
  g_assert_cmpfloat_with_epsilon (d->x_min, x0, 1e-3);
  g_assert_cmpfloat_with_epsilon (d->y_min, y0, 1e-3);
  g_assert_cmpfloat_with_epsilon (d->x_max, x1, 1e-3);
  g_assert_cmpfloat_with_epsilon (d->y_max, y1, 1e-3);
}

/* model 256x192 is the 512x384 source at half scale */
static M2iInferGeometry
half_geometry (void)
{
  return test_geometry (GW * STRIDE * 2, GH * STRIDE * 2, GW * STRIDE, GH * STRIDE, 0.5, 0.5,
      0, 0);
}

static void
test_two_people (void)
{
  M2iIrModel *model = pose_model ();
  TestDecoder *d = pose_decoder (model);
  g_assert_nonnull (strstr (d->describe, "openpose: heatmaps 'heatmaps' [1,19,24,32]"));
  Maps m = maps_new ();
  /* the weaker one first in the grid: the result is ordered by confidence */
  Person b = person (&m, 8, 8, 0.7f);
  Person a = person (&m, 22, 12, 0.9f);
  M2iInferGeometry g = half_geometry ();
  GError *error = NULL;
  g_assert_true (decode (d, &m, &g, &error));
  g_assert_no_error (error);
  const M2iInferResult *r = d->result;
  g_assert_cmpuint (r->n_detections, ==, 2);
  g_assert_false (r->truncated);
  assert_person (r, 0, &a, 0.9f, 0, 0);
  assert_person (r, 1, &b, 0.7f, 0, 0);
  /* a letterbox pad and a crop move every point */
  g.pad_x = 8;
  g.pad_y = 4;
  g.crop_x = 100;
  g.crop_y = 50;
  g_assert_true (decode (d, &m, &g, &error));
  g_assert_cmpuint (r->n_detections, ==, 2);
  assert_person (r, 0, &a, 0.9f, 100 - 8 * 2, 50 - 4 * 2);
  /* the threshold drops the weaker person; max_detections keeps the best */
  d->opts.confidence_threshold = 0.8f;
  g = half_geometry ();
  g_assert_true (decode (d, &m, &g, &error));
  g_assert_cmpuint (r->n_detections, ==, 1);
  assert_person (r, 0, &a, 0.9f, 0, 0);
  d->opts.confidence_threshold = 0.3f;
  d->opts.max_detections = 1;
  g_assert_true (decode (d, &m, &g, &error));
  g_assert_cmpuint (r->n_detections, ==, 1);
  g_assert_true (r->truncated);
  assert_person (r, 0, &a, 0.9f, 0, 0);
  maps_free (&m);
  test_decoder_free (d);
  m2i_ir_model_unref (model);
}

/* Without the fields, the same peaks make nobody (no limb, no person);
 * peaks at or under the threshold 0.1 are none; fewer than three
 * keypoints are no person. */
static void
test_nobody (void)
{
  M2iIrModel *model = pose_model ();
  TestDecoder *d = pose_decoder (model);
  M2iInferGeometry g = half_geometry ();
  GError *error = NULL;
  Maps m = maps_new ();
  g_assert_true (decode (d, &m, &g, &error));
  g_assert_cmpuint (d->result->n_detections, ==, 0);
  person (&m, 10, 10, 0.1f);
  g_assert_true (decode (d, &m, &g, &error));
  g_assert_cmpuint (d->result->n_detections, ==, 0);
  memset (m.heat, 0, 19 * PLANE * sizeof (float));
  person (&m, 10, 10, 0.9f);
  memset (m.paf, 0, 38 * PLANE * sizeof (float));
  g_assert_true (decode (d, &m, &g, &error));
  g_assert_cmpuint (d->result->n_detections, ==, 0);
  /* a neck and a nose joined: two keypoints */
  maps_free (&m);
  m = maps_new ();
  blob (&m, NECK, 10, 10, 0.9f);
  blob (&m, NOSE, 10, 7, 0.9f);
  limb (&m, PAF_NECK_NOSE, 10, 10, 10, 7);
  g_assert_true (decode (d, &m, &g, &error));
  g_assert_cmpuint (d->result->n_detections, ==, 0);
  /* the third keypoint makes a person */
  blob (&m, R_SHOULDER, 8, 10, 0.9f);
  limb (&m, PAF_NECK_RSH, 10, 10, 8, 10);
  g_assert_true (decode (d, &m, &g, &error));
  g_assert_cmpuint (d->result->n_detections, ==, 1);
  g_assert_no_error (error);
  maps_free (&m);
  test_decoder_free (d);
  m2i_ir_model_unref (model);
}

/* A person against the left and bottom border: the neck on column 0, the
 * nose three rows up, the shoulders on the last row — found where they
 * are (no refinement across the border). */
static void
test_border (void)
{
  M2iIrModel *model = pose_model ();
  TestDecoder *d = pose_decoder (model);
  Maps m = maps_new ();
  Person p;
  for (guint k = 0; k < NK; k++)
    p.kx[k] = p.ky[k] = -1;
  p.kx[NECK] = 0, p.ky[NECK] = GH - 1;
  p.kx[NOSE] = 0, p.ky[NOSE] = GH - 4;
  p.kx[L_SHOULDER] = 3, p.ky[L_SHOULDER] = GH - 1;
  for (guint k = 0; k < NK; k++)
    if (p.kx[k] >= 0)
      blob (&m, k, p.kx[k], p.ky[k], 0.8f);
  limb (&m, PAF_NECK_NOSE, 0, GH - 1, 0, GH - 4);
  limb (&m, PAF_NECK_LSH, 0, GH - 1, 3, GH - 1);
  M2iInferGeometry g = half_geometry ();
  GError *error = NULL;
  g_assert_true (decode (d, &m, &g, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (d->result->n_detections, ==, 1);
  assert_person (d->result, 0, &p, 0.8f, 0, 0);
  maps_free (&m);
  test_decoder_free (d);
  m2i_ir_model_unref (model);
}

/* A peak whose right (and lower) neighbour is higher than its left (upper)
 * one moves a quarter cell that way; NaN and Inf cells are no peaks and
 * break nothing. */
static void
test_refine_and_nonfinite (void)
{
  M2iIrModel *model = pose_model ();
  TestDecoder *d = pose_decoder (model);
  Maps m = maps_new ();
  Person p = person (&m, 12, 12, 0.9f);
  m.heat[NOSE * PLANE + 9 * GW + 13] += 0.05f;   /* right of the nose (12, 9) */
  m.heat[NOSE * PLANE + 8 * GW + 12] += 0.05f;   /* above it */
  m.heat[NECK * PLANE + 3 * GW + 3] = NAN;
  m.heat[NECK * PLANE + 3 * GW + 20] = INFINITY;
  m.paf[PAF_NECK_NOSE * PLANE + 0] = NAN;
  M2iInferGeometry g = half_geometry ();
  GError *error = NULL;
  g_assert_true (decode (d, &m, &g, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (d->result->n_detections, ==, 1);
  const M2iInferKeypoint *nose = &d->result->keypoints[d->result->detections[0].first_keypoint];
  g_assert_cmpfloat_with_epsilon (nose->x, (p.kx[NOSE] + 0.5f + 0.25f) * STRIDE * 2, 1e-3);
  g_assert_cmpfloat_with_epsilon (nose->y, (p.ky[NOSE] + 0.5f - 0.25f) * STRIDE * 2, 1e-3);
  maps_free (&m);
  test_decoder_free (d);
  m2i_ir_model_unref (model);
}

/* Named on outputs that are not OpenPose's: a message naming both shapes
 * wanted; outputs of another size than made for: refused at decode. */
static void
test_refused (void)
{
  const TestOutput bad[] = {
    { "pafs", "Add", NULL, M2I_ET_F32, TEST_SHAPE (1, 36, GH, GW) },
    { "heatmaps", "Add", NULL, M2I_ET_F32, TEST_SHAPE (1, 19, GH, GW) },
  };
  M2iIrModel *model = test_model_new (bad, 2, NULL);
  M2iDecoderOptions o;
  test_options_init (&o);
  GError *error = NULL;
  g_assert_null (test_decoder_new (&infer_decoder_openpose, model, &o, &error));
  g_assert_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "[1,19,H,W]"));
  g_assert_nonnull (strstr (error->message, "[1,36,24,32]"));
  g_clear_error (&error);
  m2i_ir_model_unref (model);
  const TestOutput grids[] = {
    { "pafs", "Add", NULL, M2I_ET_F32, TEST_SHAPE (1, 38, GH, GW) },
    { "heatmaps", "Add", NULL, M2I_ET_F32, TEST_SHAPE (1, 19, GH, GW + 1) },
  };
  model = test_model_new (grids, 2, NULL);
  g_assert_null (test_decoder_new (&infer_decoder_openpose, model, &o, &error));
  g_assert_nonnull (strstr (error->message, "not on the same grid"));
  g_clear_error (&error);
  m2i_ir_model_unref (model);

  model = pose_model ();
  TestDecoder *d = pose_decoder (model);
  Maps m = maps_new ();
  M2iTensor t[2] = {
    { M2I_ET_F32, TEST_SHAPE (1, 38, GH, GW), m.paf },
    { M2I_ET_F32, TEST_SHAPE (1, 19, GH - 1, GW), m.heat },
  };
  M2iInferGeometry g = half_geometry ();
  g_assert_false (test_decoder_decode (d, t, 2, &g, &error));
  g_assert_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_false (test_decoder_decode (d, t, 1, &g, &error));
  g_clear_error (&error);
  maps_free (&m);
  test_decoder_free (d);
  m2i_ir_model_unref (model);
}

/* ---- human-pose-estimation-0001 on the astronaut ------------------------------ */

#define HW 57
#define HH 32

typedef struct {
  char name[32];
  double value, x, y;           /* input pixels */
} RefPeak;

static gboolean
read_peaks (RefPeak *out)
{
  g_autofree gchar *path = test_shared_path ("reference/human-pose-estimation-0001.astronaut.peaks.txt");
  gchar *text;
  if (!path || !g_file_get_contents (path, &text, NULL, NULL))
    return FALSE;
  gchar **lines = g_strsplit (text, "\n", -1);
  guint n = 0;
  for (gchar **l = lines; *l; l++) {
    RefPeak p;
    int cx, cy;
    if (**l != '#' && n < NK && sscanf (*l, "%31s %lf %d %d | %lf %lf", p.name, &p.value, &cx,
            &cy, &p.x, &p.y) == 6)
      out[n++] = p;
  }
  g_strfreev (lines);
  g_free (text);
  g_assert_cmpuint (n, ==, NK);
  return TRUE;
}

/* Decodes @heat and @paf (f32, the model's shapes) of the astronaut
 * (512x512 fitted at the top left of 456x256: half scale) and checks the
 * one person against @ref; the worst distance in input pixels. */
static double
check_astronaut (M2iIrModel *model, const float *paf, const float *heat, const RefPeak *ref,
    const char *what)
{
  M2iDecoderOptions o;
  test_options_init (&o);
  o.confidence_threshold = 0.3f;
  GError *error = NULL;
  TestDecoder *d = test_decoder_new (&infer_decoder_openpose, model, &o, &error);
  g_assert_no_error (error);
  M2iTensor t[2] = {
    { M2I_ET_F32, TEST_SHAPE (1, 38, HH, HW), (gpointer) paf },
    { M2I_ET_F32, TEST_SHAPE (1, 19, HH, HW), (gpointer) heat },
  };
  M2iInferGeometry g = test_geometry (512, 512, 456, 256, 0.5, 0.5, 0, 0);
  g_assert_true (test_decoder_decode (d, t, 2, &g, &error));
  g_assert_no_error (error);
  const M2iInferResult *r = d->result;
  g_assert_cmpuint (r->n_detections, ==, 1);
  double worst = 0;
  for (guint k = 0; k < NK; k++) {
    const M2iInferKeypoint *kp = &r->keypoints[r->detections[0].first_keypoint + k];
    if (ref[k].value < 0.05) {
      g_assert_cmpfloat (kp->confidence, <, 0);
      g_assert_true (isnan (kp->x) && isnan (kp->y));
      continue;
    }
    if (ref[k].value < 0.1)
      continue;
    /* input pixels: the photo at half scale */
    double x = kp->x * 0.5, y = kp->y * 0.5;
    double e = MAX (fabs (x - ref[k].x), fabs (y - ref[k].y));
    g_test_message ("%s: %-10s (%.1f, %.1f) score %.3f, reference (%.1f, %.1f) %.3f", what,
        ref[k].name, x, y, kp->confidence, ref[k].x, ref[k].y, ref[k].value);
    /* within one heatmap cell; a weak peak (< 0.3, flat) may be the
     * neighbouring cell's — the integer kernels' outputs (an INT8 model's
     * levels one step from the emulation's here and there) move
     * l_elbow's (0.164) one cell down — so within 1.25 cells (the
     * quarter-cell refinement) + the half-pixel centre convention, as
     * test-gst-infer-models says for the same model */
    double tol = ref[k].value >= 0.3 ? STRIDE : 1.25 * STRIDE + 0.5;
    if (!(kp->confidence >= 0 && e <= tol))
      g_error ("%s: %s at (%.1f, %.1f) score %.3f, reference (%.1f, %.1f) %.3f", what,
          ref[k].name, x, y, kp->confidence, ref[k].x, ref[k].y, ref[k].value);
    g_assert_cmpfloat (fabs (kp->confidence - ref[k].value), <, 0.05);
    worst = MAX (worst, e);
  }
  g_test_message ("%s: worst keypoint %.2f input px from the reference's peak", what, worst);
  test_decoder_free (d);
  return worst;
}

static void
test_astronaut_reference (void)
{
  RefPeak ref[NK];
  M2iIrModel *model = test_load_shared_model ("human-pose-estimation-0001/human-pose-estimation-0001.xml");
  float *paf = test_shared_f32 ("reference/human-pose-estimation-0001.astronaut.output.0.f32",
      38 * HH * HW);
  float *heat = test_shared_f32 ("reference/human-pose-estimation-0001.astronaut.output.1.f32",
      19 * HH * HW);
  if (!model || !paf || !heat || !read_peaks (ref)) {
    g_test_skip ("../shared/models/external (human-pose-estimation-0001) is not here");
    goto out;
  }
  check_astronaut (model, paf, heat, ref, "reference outputs");
out:
  g_free (paf);
  g_free (heat);
  if (model)
    m2i_ir_model_unref (model);
}

/* The IR runtime's own outputs of the reference input. */
static void
test_astronaut_runtime (void)
{
  RefPeak ref[NK];
  M2iIrModel *model = test_load_shared_model ("human-pose-estimation-0001/human-pose-estimation-0001.xml");
  float *input = test_shared_f32 ("reference/human-pose-estimation-0001.astronaut.input.f32",
      3 * 256 * 456);
  if (!model || !input || !read_peaks (ref)) {
    g_test_skip ("../shared/models/external (human-pose-estimation-0001) is not here");
    g_free (input);
    if (model)
      m2i_ir_model_unref (model);
    return;
  }
  GError *error = NULL;
  M2iIrCompiledModel *cm = m2i_ir_compile (model, NULL, &error);
  g_assert_no_error (error);
  M2iIrInferRequest *req = m2i_ir_infer_request_new (cm, &error);
  g_assert_no_error (error);
  M2iTensor in = { M2I_ET_F32, TEST_SHAPE (1, 3, 256, 456), input };
  g_assert_true (m2i_ir_infer_request_set_input (req, 0, &in, &error));
  g_assert_true (m2i_ir_infer_request_infer (req, &error));
  g_assert_no_error (error);
  const M2iTensor *o0 = m2i_ir_infer_request_get_output (req, 0);
  const M2iTensor *o1 = m2i_ir_infer_request_get_output (req, 1);
  g_assert_cmpint (o0->type, ==, M2I_ET_F32);
  g_assert_cmpint (o1->type, ==, M2I_ET_F32);
  check_astronaut (model, o0->data, o1->data, ref, "IR runtime");
  m2i_ir_infer_request_free (req);
  m2i_ir_compiled_model_unref (cm);
  g_free (input);
  m2i_ir_model_unref (model);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/infer/decode/openpose/two-people", test_two_people);
  g_test_add_func ("/infer/decode/openpose/nobody", test_nobody);
  g_test_add_func ("/infer/decode/openpose/border", test_border);
  g_test_add_func ("/infer/decode/openpose/refine-nonfinite", test_refine_and_nonfinite);
  g_test_add_func ("/infer/decode/openpose/refused", test_refused);
  g_test_add_func ("/infer/decode/openpose/astronaut-reference", test_astronaut_reference);
  g_test_add_func ("/infer/decode/openpose/astronaut-runtime", test_astronaut_runtime);
  return g_test_run ();
}
