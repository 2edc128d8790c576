/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* resize-plan.c — builds the separable filter tables of a resize.
 *
 * For every mode, the 2-D formula of OpenVINO's Interpolate specification is
 * a product of one factor per axis (docs/resize.md shows each derivation),
 * so one table per axis describes it, built from the one-axis formulas of
 * resize-formulas.c. Coordinates are computed in fp32 with the operations
 * and order of OpenVINO's reference implementation, because they decide
 * which source pixel "nearest" picks and where a filter sits; weights are
 * computed in double and stored as fp32.
 */
#include "resize-private.h"
#include "resize-internal.h"

#include <base/m2i-error.h>
#include <math.h>

/* What one axis needs to know to build its table. */
typedef struct {
  const M2iResizeParams *p;
  gint in, out;
  float scale;                   /* out / in in fp32, as OpenVINO's "sizes" mode */
  gboolean antialias;            /* "linear": antialias and some axis shrinks */
} AxisCtx;

static gint
clamp_index (gint64 j, gint in)
{
  return (gint) CLAMP (j, 0, (gint64) in - 1);
}

/* Fills idx[], w[] with the taps of output index @i (weights before dropping
 * zeros, normalised) and returns how many. Room for MAX (in, 4) + 1. */
static gint
axis_entry (const AxisCtx *c, gint i, gint32 *idx, double *w)
{
  const M2iResizeParams *p = c->p;
  gint in = c->in;
  float icoord = m2i_resize_source_coord (p->coord, (float) i, c->scale, (float) c->out,
      (float) in);

  switch (p->mode) {
    case M2I_RESIZE_NEAREST:{
      gint64 j = m2i_resize_nearest_index (p->nearest, icoord, c->scale < 1.0f);
      idx[0] = clamp_index (j, in);
      w[0] = 1.0;
      return 1;
    }
    case M2I_RESIZE_LINEAR:{
      /* Triangle filter; with antialias widened by 1/scale. Taps outside
       * the image are left out and the rest renormalised (the spec's
       * division by wsum). */
      float a = c->antialias ? c->scale : 1.0f;
      gint64 r = m2i_resize_linear_radius (c->scale, a);
      gint64 centre = (gint64) roundf (icoord);
      double sum = 0.0;
      gint n = 0;
      for (gint64 j = MAX (centre - r, 0); j <= centre + r && j < in; j++) {
        float t = m2i_resize_triangle (a, icoord - (float) j);
        if (t == 0.0f)
          continue;
        idx[n] = (gint32) j;
        w[n] = t;
        sum += t;
        n++;
      }
      if (n == 0) {
        /* No source pixel within reach: the spec's output is 0. */
        idx[0] = clamp_index (centre, in);
        w[0] = 0.0;
        return 1;
      }
      for (gint k = 0; k < n; k++)
        w[k] /= sum;
      return n;
    }
    case M2I_RESIZE_LINEAR_ONNX:{
      float x = fmaxf (0.0f, fminf (icoord, (float) (in - 1)));
      gint64 j1 = MIN ((gint64) x, (gint64) in - 1);
      gint64 j2 = MIN (j1 + 1, (gint64) in - 1);
      if (j1 == j2) {
        idx[0] = (gint32) j1;   /* the spec's 0.5 + 0.5 on one pixel */
        w[0] = 1.0;
        return 1;
      }
      idx[0] = (gint32) j1;
      w[0] = fabsf (x - (float) j2);
      idx[1] = (gint32) j2;
      w[1] = fabsf (x - (float) j1);
      return 2;
    }
    case M2I_RESIZE_CUBIC:{
      float fl = floorf (icoord);
      gint64 base = (gint64) fl;
      m2i_resize_cubic_coeffs (icoord - fl, p->cube_coeff, w);
      for (gint k = 0; k < 4; k++)
        idx[k] = clamp_index (base - 1 + k, in);
      return 4;
    }
    case M2I_RESIZE_BILINEAR_PILLOW:
    case M2I_RESIZE_BICUBIC_PILLOW:{
      M2iResizePillowWindow win;
      double ww = 0.0;
      m2i_resize_pillow_window (p->mode, in, c->out, i, &win);
      gint xmin = (gint) win.first, count = (gint) win.count;
      for (gint k = 0; k < count; k++) {
        w[k] = m2i_resize_pillow_filter (p->mode,
            (k + xmin - win.center + 0.5) * win.inv_filterscale, p->cube_coeff);
        idx[k] = xmin + k;
        ww += w[k];
      }
      if (count == 0) {
        idx[0] = clamp_index (xmin, in);
        w[0] = 0.0;
        return 1;
      }
      if (ww != 0.0)
        for (gint k = 0; k < count; k++)
          w[k] /= ww;
      return count;
    }
  }
  g_assert_not_reached ();
}

/* Converts an entry to fp32 and drops zero weights (keeping at least one). */
static gint
compact_entry (gint n, gint32 *idx, const double *w, float *wf)
{
  gint m = 0;
  for (gint k = 0; k < n; k++) {
    float f = (float) w[k];
    if (f == 0.0f)
      continue;
    idx[m] = idx[k];
    wf[m] = f;
    m++;
  }
  if (m == 0) {
    wf[0] = 0.0f;
    m = 1;
  }
  return m;
}

static void
build_axis (const AxisCtx *c, M2iResizeAxis *ax)
{
  gint cap = MAX (c->in, 4) + 1;
  gint32 *idx = g_new (gint32, cap);
  double *w = g_new (double, cap);
  float *wf = g_new (float, cap);

  ax->in_size = c->in;
  ax->out_size = c->out;
  ax->taps = 1;
  for (gint i = 0; i < c->out; i++) {
    gint n = compact_entry (axis_entry (c, i, idx, w), idx, w, wf);
    ax->taps = MAX (ax->taps, n);
  }

  gint T = ax->taps;
  ax->index = g_new (gint32, (gsize) c->out * T);
  ax->weight = g_new (float, (gsize) c->out * T);
  ax->first = g_new (gint32, c->out);
  ax->last = g_new (gint32, c->out);
  for (gint i = 0; i < c->out; i++) {
    gint n = compact_entry (axis_entry (c, i, idx, w), idx, w, wf);
    gint32 lo = G_MAXINT32, hi = 0;
    for (gint t = 0; t < T; t++) {
      /* Unused taps repeat the last index with weight 0. */
      gint32 j = idx[MIN (t, n - 1)];
      ax->index[(gsize) i * T + t] = j;
      ax->weight[(gsize) i * T + t] = t < n ? wf[t] : 0.0f;
      if (t < n) {
        lo = MIN (lo, j);
        hi = MAX (hi, j);
      }
    }
    ax->first[i] = lo;
    ax->last[i] = hi;
  }
  g_free (idx);
  g_free (w);
  g_free (wf);
}

gboolean
m2i_resize_params_check (const M2iResizeParams *p, gint in_width,
    gint in_height, GError **error)
{
  if (p == NULL) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, "resize: no parameters given");
    return FALSE;
  }
  if (in_width <= 0 || in_height <= 0 || p->out_width <= 0 || p->out_height <= 0) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "resize: sizes must be positive (input %dx%d, output %dx%d)",
        in_width, in_height, p->out_width, p->out_height);
    return FALSE;
  }
  if (in_width > M2I_RESIZE_MAX_SIZE || in_height > M2I_RESIZE_MAX_SIZE
      || p->out_width > M2I_RESIZE_MAX_SIZE || p->out_height > M2I_RESIZE_MAX_SIZE) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "resize: sizes above %d are not supported (input %dx%d, output %dx%d)",
        M2I_RESIZE_MAX_SIZE, in_width, in_height, p->out_width, p->out_height);
    return FALSE;
  }
  if (m2i_resize_mode_to_string (p->mode) == NULL) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "resize: unknown mode %d (expected nearest, linear, linear_onnx, cubic, "
        "bilinear_pillow or bicubic_pillow)", (int) p->mode);
    return FALSE;
  }
  if (m2i_coord_mode_to_string (p->coord) == NULL) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "resize: unknown coordinate_transformation_mode %d (expected half_pixel, "
        "pytorch_half_pixel, asymmetric, tf_half_pixel_for_nn or align_corners)",
        (int) p->coord);
    return FALSE;
  }
  if (m2i_nearest_mode_to_string (p->nearest) == NULL) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "resize: unknown nearest_mode %d (expected round_prefer_floor, "
        "round_prefer_ceil, floor, ceil or simple)", (int) p->nearest);
    return FALSE;
  }
  if (!isfinite (p->cube_coeff)) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "resize: cube_coeff must be a finite number");
    return FALSE;
  }
  return TRUE;
}

static gboolean
resize_linear_antialias (const M2iResizeParams *p, gint in_width, gint in_height)
{
  /* The spec: antialias applies when any interpolated axis shrinks, and
   * then to every axis (with a = scale, which narrows a growing axis). */
  float sx = (float) p->out_width / (float) in_width;
  float sy = (float) p->out_height / (float) in_height;
  return p->mode == M2I_RESIZE_LINEAR && p->antialias && (sx < 1.0f || sy < 1.0f);
}

M2iResizePlan *
m2i_resize_plan_new (const M2iResizeParams *p, gint in_width, gint in_height,
    GError **error)
{
  if (!m2i_resize_params_check (p, in_width, in_height, error))
    return NULL;

  M2iResizePlan *plan = g_new0 (M2iResizePlan, 1);
  plan->params = *p;
  plan->params.antialias = p->antialias ? TRUE : FALSE;
  plan->in_width = in_width;
  plan->in_height = in_height;

  gboolean aa = resize_linear_antialias (p, in_width, in_height);
  AxisCtx cx = { p, in_width, p->out_width,
    (float) p->out_width / (float) in_width, aa };
  AxisCtx cy = { p, in_height, p->out_height,
    (float) p->out_height / (float) in_height, aa };
  build_axis (&cx, &plan->x);
  build_axis (&cy, &plan->y);

  plan->round_intermediate = p->mode == M2I_RESIZE_BILINEAR_PILLOW
      || p->mode == M2I_RESIZE_BICUBIC_PILLOW;
  plan->u8_round = (p->mode == M2I_RESIZE_LINEAR_ONNX || p->mode == M2I_RESIZE_CUBIC)
      ? M2I_RESIZE_ROUND_TRUNCATE : M2I_RESIZE_ROUND_HALF_AWAY;
  plan->simd = m2i_resize_simd_new ();
  return plan;
}

static void
axis_clear (M2iResizeAxis *ax)
{
  g_free (ax->index);
  g_free (ax->weight);
  g_free (ax->first);
  g_free (ax->last);
}

void
m2i_resize_plan_free (M2iResizePlan *plan)
{
  if (plan == NULL)
    return;
  m2i_resize_simd_free (plan->simd);
  axis_clear (&plan->x);
  axis_clear (&plan->y);
  g_free (plan);
}
