/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Resize tables and kernels against the specification.
 *
 * - tables + row kernels (m2i_resize_image_rows) == the direct 2-D
 *   evaluation of the Interpolate formulas (m2i_resize_spec_image), for
 *   every mode, coordinate mode, nearest mode, antialias, cube_coeff, u8 /
 *   fp16 / fp32 data, 1-4 channels and many sizes. u8 must be identical
 *   except where the fp32 sum lies within 1e-3 of a rounding boundary
 *   (the tables sum in fp32, the spec in double); fp16 within one ulp;
 *   fp32 within 2e-6 of the input's range per unit of filter mass.
 * - hand-computed values for the rounding rules and the pillow filters.
 * - table invariants, parameter strings, and errors for bad requests.
 */
#include <m2i/resize-private.h>
#include "m2i-test-util.h"
#include <base/m2i-error.h>
#include <base/m2i-fp16.h>
#include <math.h>
#include <string.h>

static const M2iResizeMode all_modes[] = {
  M2I_RESIZE_NEAREST, M2I_RESIZE_LINEAR, M2I_RESIZE_LINEAR_ONNX, M2I_RESIZE_CUBIC,
  M2I_RESIZE_BILINEAR_PILLOW, M2I_RESIZE_BICUBIC_PILLOW,
};

/* Deterministic pseudo-random numbers (xorshift), so failures reproduce. */
static guint32 rng_state = 2463534242u;
static guint32
rng (void)
{
  return test_xorshift32 (&rng_state);
}

/* ---- strings and defaults ---------------------------------------------- */

static void
test_strings (void)
{
  for (guint m = 0; m <= M2I_RESIZE_BICUBIC_PILLOW; m++) {
    M2iResizeMode back;
    const char *s = m2i_resize_mode_to_string (m);
    g_assert_nonnull (s);
    g_assert_true (m2i_resize_mode_from_string (s, &back));
    g_assert_cmpint (back, ==, m);
  }
  for (guint m = 0; m <= M2I_COORD_ALIGN_CORNERS; m++) {
    M2iCoordMode back;
    g_assert_true (m2i_coord_mode_from_string (m2i_coord_mode_to_string (m), &back));
    g_assert_cmpint (back, ==, m);
  }
  for (guint m = 0; m <= M2I_NEAREST_SIMPLE; m++) {
    M2iNearestMode back;
    g_assert_true (m2i_nearest_mode_from_string (m2i_nearest_mode_to_string (m), &back));
    g_assert_cmpint (back, ==, m);
  }
  /* The spec's spellings. */
  g_assert_cmpstr (m2i_resize_mode_to_string (M2I_RESIZE_LINEAR_ONNX), ==, "linear_onnx");
  g_assert_cmpstr (m2i_resize_mode_to_string (M2I_RESIZE_BICUBIC_PILLOW), ==, "bicubic_pillow");
  g_assert_cmpstr (m2i_coord_mode_to_string (M2I_COORD_TF_HALF_PIXEL_FOR_NN), ==,
      "tf_half_pixel_for_nn");
  g_assert_cmpstr (m2i_nearest_mode_to_string (M2I_NEAREST_ROUND_PREFER_CEIL), ==,
      "round_prefer_ceil");
  M2iResizeMode m = M2I_RESIZE_CUBIC;
  g_assert_false (m2i_resize_mode_from_string ("bilinear", &m));
  g_assert_false (m2i_resize_mode_from_string (NULL, &m));
  g_assert_cmpint (m, ==, M2I_RESIZE_CUBIC);      /* left alone */
  g_assert_null (m2i_resize_mode_to_string ((M2iResizeMode) 42));
  g_assert_null (m2i_coord_mode_to_string ((M2iCoordMode) -1));
  g_assert_null (m2i_nearest_mode_to_string ((M2iNearestMode) 5));

  M2iResizeParams p;
  m2i_resize_params_init (&p, 224, 112);
  g_assert_cmpint (p.out_width, ==, 224);
  g_assert_cmpint (p.out_height, ==, 112);
  g_assert_cmpint (p.coord, ==, M2I_COORD_HALF_PIXEL);
  g_assert_cmpint (p.nearest, ==, M2I_NEAREST_ROUND_PREFER_FLOOR);
  g_assert_false (p.antialias);
  g_assert_cmpfloat (p.cube_coeff, ==, -0.75f);
}

/* ---- errors ------------------------------------------------------------ */

static void
expect_plan_error (const M2iResizeParams *p, gint w, gint h)
{
  GError *err = NULL;
  M2iResizePlan *plan = m2i_resize_plan_new (p, w, h, &err);
  g_assert_null (plan);
  g_assert_error (err, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT);
  g_assert_true (strstr (err->message, "resize") != NULL);
  g_clear_error (&err);
}

static void
test_errors (void)
{
  M2iResizeParams p;
  m2i_resize_params_init (&p, 8, 8);
  expect_plan_error (NULL, 4, 4);
  expect_plan_error (&p, 0, 4);
  expect_plan_error (&p, 4, -1);
  expect_plan_error (&p, M2I_RESIZE_MAX_SIZE + 1, 4);
  p.out_width = 0;
  expect_plan_error (&p, 4, 4);
  p.out_width = 8;
  p.out_height = -3;
  expect_plan_error (&p, 4, 4);
  p.out_height = 8;
  p.mode = (M2iResizeMode) 6;
  expect_plan_error (&p, 4, 4);
  p.mode = M2I_RESIZE_CUBIC;
  p.coord = (M2iCoordMode) 5;
  expect_plan_error (&p, 4, 4);
  p.coord = M2I_COORD_ASYMMETRIC;
  p.nearest = (M2iNearestMode) -1;
  expect_plan_error (&p, 4, 4);
  p.nearest = M2I_NEAREST_CEIL;
  p.cube_coeff = NAN;
  expect_plan_error (&p, 4, 4);
  p.cube_coeff = INFINITY;
  expect_plan_error (&p, 4, 4);
  p.cube_coeff = -0.5f;

  /* Image-level argument errors. */
  GError *err = NULL;
  M2iResizePlan *plan = m2i_resize_plan_new (&p, 4, 4, &err);
  g_assert_no_error (err);
  guint8 src[4 * 4 * 4] = { 0 }, dst[8 * 8 * 4];
  g_assert_false (m2i_resize_image_rows (plan, M2I_RESIZE_DATA_U8, 5, src, 20, dst, 40, 0, 8,
          NULL, &err));
  g_assert_error (err, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT);
  g_clear_error (&err);
  g_assert_false (m2i_resize_image_rows (plan, M2I_RESIZE_DATA_U8, 3, src, 11, dst, 24, 0, 8,
          NULL, &err));
  g_assert_error (err, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT);
  g_clear_error (&err);
  g_assert_false (m2i_resize_image_rows (plan, M2I_RESIZE_DATA_U8, 1, src, 4, dst, 8, 3, 9,
          NULL, &err));
  g_assert_error (err, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT);
  g_clear_error (&err);
  g_assert_false (m2i_resize_image_rows (plan, M2I_RESIZE_DATA_F32, 1, src, 18, dst, 32, 0, 8,
          NULL, &err));   /* stride not a multiple of 4 bytes */
  g_assert_error (err, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT);
  g_clear_error (&err);
  g_assert_false (m2i_resize_image_rows (plan, M2I_RESIZE_DATA_U8, 1, NULL, 4, dst, 8, 0, 8,
          NULL, &err));
  g_assert_error (err, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT);
  g_clear_error (&err);
  g_assert_false (m2i_resize_spec_image (&p, 4, 4, M2I_RESIZE_DATA_U8, 0, src, 4, dst, 8, &err));
  g_assert_error (err, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT);
  g_clear_error (&err);
  p.out_width = 0;
  g_assert_false (m2i_resize_spec_image (&p, 4, 4, M2I_RESIZE_DATA_U8, 1, src, 4, dst, 8, &err));
  g_assert_error (err, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT);
  g_clear_error (&err);
  m2i_resize_plan_free (plan);
  m2i_resize_plan_free (NULL);
}

/* ---- hand-computed values ---------------------------------------------- */

/* Resizes a u8 row image (height 1 → 1) and returns the output in @out. */
static void
resize_row_u8 (M2iResizeMode mode, const guint8 *in, gint in_w, gint out_w, guint8 *out)
{
  M2iResizeParams p;
  m2i_resize_params_init (&p, out_w, 1);
  p.mode = mode;
  p.cube_coeff = -0.5f;
  GError *err = NULL;
  M2iResizePlan *plan = m2i_resize_plan_new (&p, in_w, 1, &err);
  g_assert_no_error (err);
  g_assert_true (m2i_resize_image_rows (plan, M2I_RESIZE_DATA_U8, 1, in, in_w, out, out_w,
          0, 1, NULL, &err));
  g_assert_no_error (err);
  m2i_resize_plan_free (plan);
}

static void
test_hand_values (void)
{
  /* 2 → 3, half_pixel: source x = (i + 0.5) / 1.5 - 0.5 = -1/6, 1/2, 7/6;
   * the middle one is 127.5: "linear" rounds (std::round) to 128,
   * "linear_onnx" truncates (static_cast) to 127 in OpenVINO's reference. */
  const guint8 two[2] = { 0, 255 };
  guint8 out[8];
  resize_row_u8 (M2I_RESIZE_LINEAR, two, 2, 3, out);
  g_assert_cmpuint (out[0], ==, 0);
  g_assert_cmpuint (out[1], ==, 128);
  g_assert_cmpuint (out[2], ==, 255);
  resize_row_u8 (M2I_RESIZE_LINEAR_ONNX, two, 2, 3, out);
  g_assert_cmpuint (out[0], ==, 0);
  g_assert_cmpuint (out[1], ==, 127);
  g_assert_cmpuint (out[2], ==, 255);

  /* bilinear_pillow 4 → 2 (Pillow widens the triangle to support 2):
   * out0 = (0·3 + 100·3 + 200·1) / 7 = 71.43 → 71;
   * out1 = (100·1 + 200·3 + 255·3) / 7 = 209.29 → 209. */
  const guint8 four[4] = { 0, 100, 200, 255 };
  resize_row_u8 (M2I_RESIZE_BILINEAR_PILLOW, four, 4, 2, out);
  g_assert_cmpuint (out[0], ==, 71);
  g_assert_cmpuint (out[1], ==, 209);

  /* Cubic overshoot saturates instead of wrapping: a step 0,0,255,255
   * doubled with a = -0.75 rings below 0 and above 255. */
  const guint8 step[4] = { 0, 0, 255, 255 };
  M2iResizeParams p;
  m2i_resize_params_init (&p, 8, 1);
  p.mode = M2I_RESIZE_CUBIC;
  GError *err = NULL;
  M2iResizePlan *plan = m2i_resize_plan_new (&p, 4, 1, &err);
  float f[4] = { 0, 0, 255, 255 }, sums[8];
  m2i_resize_hpass_f32 (plan, f, 1, sums);
  g_assert_cmpfloat (sums[2], <, 0.0f);       /* the rings exist... */
  g_assert_cmpfloat (sums[5], >, 255.0f);
  m2i_resize_image_rows (plan, M2I_RESIZE_DATA_U8, 1, step, 4, out, 8, 0, 1, NULL, &err);
  g_assert_no_error (err);
  g_assert_cmpuint (out[2], ==, 0);           /* ...and saturate */
  g_assert_cmpuint (out[5], ==, 255);
  /* x = 1.25 → s = 0.25: weights a·s(s-1)², ... for a = -0.75 give
   * 255·(w2 + w3) = 255·(0.2265625 - 0.0380859375)·... computed directly: */
  double a = -0.75, s = 0.25;
  double w2 = (((-a - 2) * s + (2 * a + 3)) * s - a) * s, w3 = -a * s * s * (s - 1);
  g_assert_cmpfloat (fabs (sums[3] - 255.0 * (w2 + w3)), <, 1e-4);
  g_assert_cmpuint (out[3], ==, (guint) (255.0 * (w2 + w3)));
  m2i_resize_plan_free (plan);

  /* nearest: 5 → 3 asymmetric floor picks 0, 1 (5/3), 3 (10/3). */
  m2i_resize_params_init (&p, 3, 1);
  p.coord = M2I_COORD_ASYMMETRIC;
  p.nearest = M2I_NEAREST_FLOOR;
  plan = m2i_resize_plan_new (&p, 5, 1, &err);
  g_assert_cmpint (plan->x.taps, ==, 1);
  g_assert_cmpint (plan->x.index[0], ==, 0);
  g_assert_cmpint (plan->x.index[1], ==, 1);
  g_assert_cmpint (plan->x.index[2], ==, 3);
  m2i_resize_plan_free (plan);
  /* simple: ceil when shrinking (5/3 → 2, 10/3 → 4), truncation when growing. */
  p.nearest = M2I_NEAREST_SIMPLE;
  plan = m2i_resize_plan_new (&p, 5, 1, &err);
  g_assert_cmpint (plan->x.index[1], ==, 2);
  g_assert_cmpint (plan->x.index[2], ==, 4);
  m2i_resize_plan_free (plan);
  /* round_prefer_floor vs ceil on an exact half: 2 → 4 half_pixel gives
   * x = -0.25, 0.25, 0.75, 1.25; 3 → 2 gives x = 0.25, 1.75; 4 → 2 gives
   * x = 0.5, 2.5: floor picks 0, 2; ceil picks 1, 3. */
  m2i_resize_params_init (&p, 2, 1);
  plan = m2i_resize_plan_new (&p, 4, 1, &err);
  g_assert_cmpint (plan->x.index[0], ==, 0);
  g_assert_cmpint (plan->x.index[1], ==, 2);
  m2i_resize_plan_free (plan);
  p.nearest = M2I_NEAREST_ROUND_PREFER_CEIL;
  plan = m2i_resize_plan_new (&p, 4, 1, &err);
  g_assert_cmpint (plan->x.index[0], ==, 1);
  g_assert_cmpint (plan->x.index[1], ==, 3);
  m2i_resize_plan_free (plan);
  /* tf_half_pixel_for_nn: (i + 0.5) / 0.5 = 1, 3 → ceil stays 1, 3. */
  p.coord = M2I_COORD_TF_HALF_PIXEL_FOR_NN;
  p.nearest = M2I_NEAREST_CEIL;
  plan = m2i_resize_plan_new (&p, 4, 1, &err);
  g_assert_cmpint (plan->x.index[0], ==, 1);
  g_assert_cmpint (plan->x.index[1], ==, 3);
  m2i_resize_plan_free (plan);
  g_assert_no_error (err);
}

/* ---- tables: invariants -------------------------------------------------- */

static void
check_axis (const M2iResizeAxis *ax, gint in, gint out, gboolean may_be_empty)
{
  g_assert_cmpint (ax->in_size, ==, in);
  g_assert_cmpint (ax->out_size, ==, out);
  g_assert_cmpint (ax->taps, >=, 1);
  for (gint i = 0; i < out; i++) {
    double sum = 0;
    gint32 lo = G_MAXINT32, hi = -1;
    for (gint t = 0; t < ax->taps; t++) {
      gint32 j = ax->index[i * ax->taps + t];
      float w = ax->weight[i * ax->taps + t];
      g_assert_cmpint (j, >=, 0);
      g_assert_cmpint (j, <, in);
      if (w != 0.0f || t == 0) {
        lo = MIN (lo, j);
        hi = MAX (hi, j);
      }
      sum += w;
    }
    g_assert_cmpint (ax->first[i], ==, lo);
    g_assert_cmpint (ax->last[i], ==, hi);
    /* Filters are normalised (cubic's clamped taps keep the sum 1 too). */
    if (!(may_be_empty && sum == 0.0))
      g_assert_cmpfloat (fabs (sum - 1.0), <, 1e-5);
  }
}

/* ---- tables + kernels == the spec ---------------------------------------- */

typedef struct {
  gint checked, near_ties;
  double max_f32_err;
} Stats;

static void
compare_case (const M2iResizeParams *p, gint in_w, gint in_h, gint C, Stats *st)
{
  GError *err = NULL;
  M2iResizePlan *plan = m2i_resize_plan_new (p, in_w, in_h, &err);
  g_assert_no_error (err);
  check_axis (&plan->x, in_w, p->out_width, p->mode == M2I_RESIZE_LINEAR);
  check_axis (&plan->y, in_h, p->out_height, p->mode == M2I_RESIZE_LINEAR);

  gint out_w = p->out_width, out_h = p->out_height;
  gsize n_in = (gsize) in_w * in_h * C, n_out = (gsize) out_w * out_h * C;
  /* Padded strides: one spare pixel per row. */
  gsize in_row = (gsize) (in_w + 1) * C, out_row = (gsize) (out_w + 1) * C;
  guint8 *u8 = g_new0 (guint8, in_row * in_h);
  guint16 *h16 = g_new0 (guint16, in_row * in_h);
  float *f32 = g_new0 (float, in_row * in_h);
  float *f32u = g_new0 (float, in_row * in_h);   /* the u8 values as floats */
  for (gint y = 0; y < in_h; y++)
    for (gint k = 0; k < in_w * C; k++) {
      gsize i = y * in_row + k;
      u8[i] = rng () & 0xff;
      f32u[i] = u8[i];
      f32[i] = ((gint) (rng () % 20001) - 10000) / 97.0f;
      h16[i] = m2i_f32_to_f16 (f32[i]);
    }
  (void) n_in;

  guint8 *o8 = g_new0 (guint8, out_row * out_h), *s8 = g_new0 (guint8, out_row * out_h);
  guint16 *o16 = g_new0 (guint16, out_row * out_h), *s16 = g_new0 (guint16, out_row * out_h);
  float *o32 = g_new0 (float, out_row * out_h), *s32 = g_new0 (float, out_row * out_h);
  float *o32u = g_new0 (float, out_row * out_h);

#define RUN(T, src, dst, es)                                                  \
  g_assert_true (m2i_resize_image_rows (plan, T, C, src, in_row * es, dst, out_row * es, \
          0, out_h, NULL, &err));                                             \
  g_assert_no_error (err)
#define SPEC(T, src, dst, es)                                                 \
  g_assert_true (m2i_resize_spec_image (p, in_w, in_h, T, C, src, in_row * es, dst, \
          out_row * es, &err));                                               \
  g_assert_no_error (err)

  RUN (M2I_RESIZE_DATA_U8, u8, o8, 1);
  SPEC (M2I_RESIZE_DATA_U8, u8, s8, 1);
  RUN (M2I_RESIZE_DATA_F16, h16, o16, 2);
  SPEC (M2I_RESIZE_DATA_F16, h16, s16, 2);
  RUN (M2I_RESIZE_DATA_F32, f32, o32, 4);
  SPEC (M2I_RESIZE_DATA_F32, f32, s32, 4);
  RUN (M2I_RESIZE_DATA_F32, f32u, o32u, 4);

  gboolean pillow = p->mode == M2I_RESIZE_BILINEAR_PILLOW || p->mode == M2I_RESIZE_BICUBIC_PILLOW;
  /* fp32 tolerance: 2e-6 of the data range (200 here) per unit of filter
   * mass (sum of |weights|, above 1 for cubic). */
  double mass = 1.0;
  if (p->mode == M2I_RESIZE_CUBIC || p->mode == M2I_RESIZE_BICUBIC_PILLOW)
    mass = 1.6;
  double tol32 = 2e-6 * 206.0 * mass * mass + 1e-6;

  for (gint y = 0; y < out_h; y++)
    for (gint k = 0; k < out_w * C; k++) {
      gsize i = y * out_row + k;
      st->checked++;
      /* fp32 */
      double e = fabs ((double) o32[i] - s32[i]);
      st->max_f32_err = MAX (st->max_f32_err, e);
      if (e > tol32)
        g_error ("%s %s %dx%d->%dx%d C=%d aa=%d: fp32 at row %d value %d: tables %.9g, "
            "spec %.9g", m2i_resize_mode_to_string (p->mode),
            m2i_coord_mode_to_string (p->coord), in_w, in_h, out_w, out_h, C,
            p->antialias, y, k, o32[i], s32[i]);
      /* fp16: within one ulp of the correctly rounded spec value, or within
       * the fp32 bound where cancellation leaves a result near 0 */
      double d16 = fabs (m2i_f16_to_f32 (o16[i]) - m2i_f16_to_f32 (s16[i]));
      if (m2i_f16_ulp_distance (o16[i], s16[i]) > 1 && d16 > tol32) {
        /* Pillow keeps the horizontal pass in fp16: where the fp32 and
         * double sums round to neighbouring halves (one ulp of the data,
         * 1/16 for |x| < 128) the output moves by that times a weight. */
        if (pillow && d16 <= mass / 16.0 + 1e-3) {
          st->near_ties++;
          continue;
        }
        g_error ("%s %dx%d->%dx%d C=%d: fp16 at row %d value %d: tables %g, spec %g",
            m2i_resize_mode_to_string (p->mode), in_w, in_h, out_w, out_h, C, y, k,
            m2i_f16_to_f32 (o16[i]), m2i_f16_to_f32 (s16[i]));
      }
      /* u8: identical unless the fp32 sum sits on a rounding boundary */
      if (o8[i] != s8[i]) {
        double v = o32u[i];
        double boundary = p->mode == M2I_RESIZE_LINEAR || pillow ? floor (v) + 0.5 : round (v);
        gboolean near = fabs (v - boundary) < 1e-3 && abs ((int) o8[i] - (int) s8[i]) == 1;
        /* Pillow rounds the intermediate rows too: one tie there moves the
         * output by at most one. */
        if (pillow && abs ((int) o8[i] - (int) s8[i]) == 1)
          near = TRUE;
        if (!near)
          g_error ("%s %s %s aa=%d %dx%d->%dx%d C=%d: u8 at row %d value %d: tables %u, "
              "spec %u (fp32 sum %.7f)", m2i_resize_mode_to_string (p->mode),
              m2i_coord_mode_to_string (p->coord), m2i_nearest_mode_to_string (p->nearest),
              p->antialias, in_w, in_h, out_w, out_h, C, y, k, o8[i], s8[i], v);
        st->near_ties++;
      }
    }
  (void) n_out;
  g_free (u8);
  g_free (h16);
  g_free (f32);
  g_free (f32u);
  g_free (o8);
  g_free (s8);
  g_free (o16);
  g_free (s16);
  g_free (o32);
  g_free (s32);
  g_free (o32u);
  m2i_resize_plan_free (plan);
}

static const gint sizes[][4] = {
  /* in_w, in_h, out_w, out_h */
  { 8, 6, 8, 6 }, { 8, 6, 16, 12 }, { 7, 5, 13, 11 }, { 16, 12, 5, 3 },
  { 13, 11, 7, 4 }, { 6, 9, 9, 6 }, { 1, 1, 4, 3 }, { 5, 4, 1, 1 },
  { 3, 7, 1, 7 }, { 12, 2, 12, 5 }, { 31, 17, 9, 23 }, { 10, 10, 3, 3 },
  { 2, 2, 33, 19 }, { 24, 18, 10, 7 },
};

static void
test_tables_vs_spec (void)
{
  Stats st = { 0 };
  for (guint m = 0; m < G_N_ELEMENTS (all_modes); m++)
    for (gint coord = 0; coord <= M2I_COORD_ALIGN_CORNERS; coord++)
      for (gint nm = 0; nm <= M2I_NEAREST_SIMPLE; nm++)
        for (gint aa = 0; aa <= 1; aa++) {
          M2iResizeMode mode = all_modes[m];
          /* Options a mode ignores are covered once. */
          if (mode != M2I_RESIZE_NEAREST && nm > 0)
            continue;
          if (mode != M2I_RESIZE_LINEAR && aa)
            continue;
          if ((mode == M2I_RESIZE_BILINEAR_PILLOW || mode == M2I_RESIZE_BICUBIC_PILLOW)
              && coord > 0)
            continue;
          for (guint s = 0; s < G_N_ELEMENTS (sizes); s++) {
            M2iResizeParams p;
            m2i_resize_params_init (&p, sizes[s][2], sizes[s][3]);
            p.mode = mode;
            p.coord = coord;
            p.nearest = nm;
            p.antialias = aa;
            p.cube_coeff = (s % 3 == 0) ? -0.5f : (s % 3 == 1) ? -0.75f : -0.6f;
            compare_case (&p, sizes[s][0], sizes[s][1], 1 + s % 4, &st);
          }
        }
  g_test_message ("%d values compared; %d u8 values on a rounding boundary; "
      "largest fp32 difference %.3g", st.checked, st.near_ties, st.max_f32_err);
  /* Boundary cases must stay rare, or the rule is wrong rather than the sum. */
  g_assert_cmpint (st.near_ties * 200, <, st.checked);
}

/* A larger random sweep: random sizes up to 40, random options. */
static void
test_random_vs_spec (void)
{
  Stats st = { 0 };
  for (gint iter = 0; iter < 300; iter++) {
    M2iResizeParams p;
    m2i_resize_params_init (&p, 1 + rng () % 40, 1 + rng () % 40);
    p.mode = all_modes[rng () % G_N_ELEMENTS (all_modes)];
    p.coord = rng () % 5;
    p.nearest = rng () % 5;
    p.antialias = rng () & 1;
    p.cube_coeff = -0.4f - (rng () % 50) / 100.0f;
    compare_case (&p, 1 + rng () % 40, 1 + rng () % 40, 1 + rng () % 4, &st);
  }
  g_test_message ("%d values compared; %d on a rounding boundary; largest fp32 "
      "difference %.3g", st.checked, st.near_ties, st.max_f32_err);
  g_assert_cmpint (st.near_ties * 200, <, st.checked);
}

/* The row kernels used directly, as the fused engine does, give the same
 * bits as m2i_resize_image_rows. */
static void
test_row_kernels (void)
{
  M2iResizeParams p;
  m2i_resize_params_init (&p, 11, 7);
  p.mode = M2I_RESIZE_BICUBIC_PILLOW;
  p.cube_coeff = -0.5f;
  GError *err = NULL;
  gint in_w = 23, in_h = 17, C = 3;
  M2iResizePlan *plan = m2i_resize_plan_new (&p, in_w, in_h, &err);
  g_assert_no_error (err);
  g_assert_true (plan->round_intermediate);
  guint8 *src = g_new (guint8, in_w * in_h * C);
  for (gint i = 0; i < in_w * in_h * C; i++)
    src[i] = rng ();
  guint8 whole[11 * 7 * 3], mine[11 * 7 * 3];
  g_assert_true (m2i_resize_image_rows (plan, M2I_RESIZE_DATA_U8, C, src, in_w * C, whole,
          11 * C, 0, 7, NULL, &err));
  gint n = 11 * C, T = plan->y.taps;
  float *h = g_new (float, (gsize) in_h * n), sums[11 * 3];
  for (gint y = 0; y < in_h; y++) {
    m2i_resize_hpass_u8 (plan, src + y * in_w * C, C, h + (gsize) y * n);
    for (gint k = 0; k < n; k++)     /* pillow on u8: integral intermediate */
      g_assert_cmpfloat (h[y * n + k], ==, rintf (h[y * n + k]));
  }
  for (gint y = 0; y < 7; y++) {
    const float *rows[T];
    for (gint t = 0; t < T; t++)
      rows[t] = h + (gsize) plan->y.index[y * T + t] * n;
    m2i_resize_vpass (plan, y, rows, n, sums);
    m2i_resize_round_u8_row (plan, sums, mine + y * n, n);
  }
  g_assert_cmpmem (whole, sizeof whole, mine, sizeof mine);
  /* In bands: rows [0,3) and [3,7) with a caller's scratch. */
  float *scratch = g_new (float, m2i_resize_scratch_floats (plan, C));
  memset (mine, 0, sizeof mine);
  g_assert_true (m2i_resize_image_rows (plan, M2I_RESIZE_DATA_U8, C, src, in_w * C, mine,
          11 * C, 3, 7, scratch, &err));
  g_assert_true (m2i_resize_image_rows (plan, M2I_RESIZE_DATA_U8, C, src, in_w * C, mine,
          11 * C, 0, 3, scratch, &err));
  g_assert_cmpmem (whole, sizeof whole, mine, sizeof mine);
  g_free (scratch);
  g_free (h);
  g_free (src);
  m2i_resize_plan_free (plan);
}

/* Antialiased "linear" shrinking one axis and growing the other: the spec
 * narrows the growing axis' triangle to 1/scale, which can leave an output
 * with no source pixel in reach; its value is then 0 (wsum == 0). */
static void
test_linear_antialias_mixed (void)
{
  M2iResizeParams p;
  m2i_resize_params_init (&p, 8, 2);
  p.mode = M2I_RESIZE_LINEAR;
  p.antialias = TRUE;
  GError *err = NULL;
  M2iResizePlan *plan = m2i_resize_plan_new (&p, 2, 8, &err);
  g_assert_no_error (err);
  /* x scale 4: x = (i + 0.5)/4 - 0.5; i = 0 → -0.375, a·dz = -1.5 for
   * pixel 0: nothing in reach. i = 1 → -0.125: pixel 0 alone (weight 0.5,
   * normalised to 1). */
  g_assert_cmpfloat (plan->x.weight[0 * plan->x.taps], ==, 0.0f);
  g_assert_cmpfloat (plan->x.weight[1 * plan->x.taps], ==, 1.0f);
  guint8 src[2 * 8], dst[8 * 2], ref[8 * 2];
  memset (src, 200, sizeof src);
  m2i_resize_image_rows (plan, M2I_RESIZE_DATA_U8, 1, src, 2, dst, 8, 0, 2, NULL, &err);
  m2i_resize_spec_image (&p, 2, 8, M2I_RESIZE_DATA_U8, 1, src, 2, ref, 8, &err);
  g_assert_no_error (err);
  g_assert_cmpuint (dst[0], ==, 0);
  g_assert_cmpuint (ref[0], ==, 0);
  g_assert_cmpuint (dst[1], ==, 200);
  g_assert_cmpmem (dst, sizeof dst, ref, sizeof ref);
  m2i_resize_plan_free (plan);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/resize/strings", test_strings);
  g_test_add_func ("/resize/errors", test_errors);
  g_test_add_func ("/resize/hand-values", test_hand_values);
  g_test_add_func ("/resize/tables-vs-spec", test_tables_vs_spec);
  g_test_add_func ("/resize/random-vs-spec", test_random_vs_spec);
  g_test_add_func ("/resize/row-kernels", test_row_kernels);
  g_test_add_func ("/resize/linear-antialias-mixed", test_linear_antialias_mixed);
  return g_test_run ();
}
