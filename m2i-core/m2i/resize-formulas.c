/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* resize-formulas.c — Interpolate's one-axis formulas, in one place.
 *
 * The coordinate transformation, the nearest rounding, the linear
 * triangle, the cubic coefficients and Pillow's filters and windows, as
 * OpenVINO's reference computes them (coordinates in fp32, because they
 * decide which source pixel is used). The M2I engine's filter tables
 * (resize-plan.c) and the IR runtime's Interpolate kernel
 * (ir/kernels/interpolate.c) both build their tables from these, so a
 * model head the device takes over computes the same values on either
 * side. The spec reference of the tests (resize-spec.c) keeps its own
 * copy on purpose: it is the independent check of these.
 */
#include "resize-private.h"

#include <math.h>

float
m2i_resize_source_coord (M2iCoordMode mode, float x, float scale, float out_len,
    float in_len)
{
  /* OpenVINO's GetOriginalCoordinate returns the output coordinate unchanged
   * when the axis keeps its size (the spec's formulas agree except for
   * tf_half_pixel_for_nn, which would shift by half a pixel). */
  if (scale == 1.0f || out_len == in_len)
    return x;
  switch (mode) {
    case M2I_COORD_PYTORCH_HALF_PIXEL:
      return out_len > 1 ? (x + 0.5f) / scale - 0.5f : 0.0f;
    case M2I_COORD_ASYMMETRIC:
      return x / scale;
    case M2I_COORD_TF_HALF_PIXEL_FOR_NN:
      return (x + 0.5f) / scale;
    case M2I_COORD_ALIGN_CORNERS:
      return out_len == 1 ? 0.0f : x * (in_len - 1) / (out_len - 1);
    case M2I_COORD_HALF_PIXEL:
    default:
      return ((x + 0.5f) / scale) - 0.5f;
  }
}

gint64
m2i_resize_nearest_index (M2iNearestMode mode, float c, gboolean downsample)
{
  switch (mode) {
    case M2I_NEAREST_ROUND_PREFER_CEIL:
      return (gint64) roundf (c);                       /* halves away from zero */
    case M2I_NEAREST_FLOOR:
      return (gint64) floorf (c);
    case M2I_NEAREST_CEIL:
      return (gint64) ceilf (c);
    case M2I_NEAREST_SIMPLE:
      return downsample ? (gint64) ceilf (c) : (gint64) c;   /* c++ cast: toward zero */
    case M2I_NEAREST_ROUND_PREFER_FLOOR:
    default:
      if (c == (float) (gint64) c + 0.5f)
        return (gint64) floorf (c);
      return (gint64) roundf (c);
  }
}

gint64
m2i_resize_linear_radius (float scale, float a)
{
  return scale > 1.0f ? 2 : (gint64) ceilf (2.0f / a);
}

float
m2i_resize_triangle (float a, float d)
{
  return fmaxf (0.0f, 1.0f - fabsf (a * d));
}

void
m2i_resize_cubic_coeffs (float s, float a, double coeff[4])
{
  double x = fabs ((double) s), A = a;
  coeff[0] = A * (x - 1.0) * (x - 1.0) * x;
  coeff[1] = ((A + 2.0) * x - (A + 3.0)) * x * x + 1.0;
  coeff[2] = (((-A - 2.0) * x + (2.0 * A + 3.0)) * x - A) * x;
  coeff[3] = -A * x * x * (x - 1.0);
}

double
m2i_resize_pillow_filter (M2iResizeMode mode, double x, double a)
{
  x = fabs (x);
  if (mode == M2I_RESIZE_BILINEAR_PILLOW)
    return x < 1.0 ? 1.0 - x : 0.0;
  if (x < 1.0)
    return ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0;
  if (x < 2.0)
    return (((x - 5.0) * x + 8.0) * x - 4.0) * a;
  return 0.0;
}

double
m2i_resize_pillow_support (M2iResizeMode mode, gint64 in, gint64 out)
{
  double scale = (double) in / (double) out;
  return (mode == M2I_RESIZE_BILINEAR_PILLOW ? 1.0 : 2.0) * MAX (scale, 1.0);
}

void
m2i_resize_pillow_window (M2iResizeMode mode, gint64 in, gint64 out, gint64 i,
    M2iResizePillowWindow *w)
{
  /* Pillow's precompute_coeffs (as in OpenVINO's interpolate_pil.hpp): the
   * filter widens by the shrink factor, so downscaling always antialiases. */
  double scale = (double) in / (double) out;
  double filterscale = scale < 1.0 ? 1.0 : scale;
  double support = m2i_resize_pillow_support (mode, in, out);
  double c = (i + 0.5) * scale;
  gint64 lo = (gint64) (c - support + 0.5);
  gint64 hi = (gint64) (c + support + 0.5);
  if (lo < 0)
    lo = 0;
  if (hi > in)
    hi = in;
  w->first = lo;
  w->count = MAX (hi - lo, 0);
  w->center = c;
  w->inv_filterscale = 1.0 / filterscale;
}
