/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* resize-spec.c — Interpolate evaluated straight from the specification.
 *
 * This is the independent check of the separable tables: it follows the
 * pseudo-code of the Interpolate-4 specification (and, for the pillow modes
 * of Interpolate-11, the two-pass Pillow algorithm OpenVINO's reference
 * implements) one output value at a time, in 2-D, summing in double. It
 * shares no code with resize-plan.c. Coordinates are fp32, as in OpenVINO's
 * reference (interpolate.cpp), because they decide which pixels are used.
 * Slow by design; tests use it on small images.
 */
#include "resize-internal.h"

#include <base/m2i-error.h>
#include <base/m2i-fp16.h>
#include <math.h>

typedef struct {
  const M2iResizeParams *p;
  gint in_w, in_h, out_w, out_h, C;
  M2iResizeData type;
  const guint8 *src;
  gsize src_stride;
  float scale_x, scale_y;        /* output / input, fp32 */
} Spec;

static double
pixel (const Spec *s, gint64 x, gint64 y, gint c)
{
  const guint8 *row = s->src + (gsize) y * s->src_stride;
  gsize k = (gsize) x * s->C + c;
  switch (s->type) {
    case M2I_RESIZE_DATA_U8:
      return row[k];
    case M2I_RESIZE_DATA_F16:
      return m2i_f16_to_f32 (((const guint16 *) row)[k]);
    default:
      return ((const float *) row)[k];
  }
}

/* GetOriginalCoordinate of the spec, with OpenVINO's shortcut for an axis
 * that keeps its size. */
static float
original_coordinate (M2iCoordMode mode, float x_resized, float x_scale,
    float length_resized, float length_original)
{
  if (x_scale == 1.0f || length_resized == length_original)
    return x_resized;
  if (mode == M2I_COORD_HALF_PIXEL)
    return ((x_resized + 0.5f) / x_scale) - 0.5f;
  if (mode == M2I_COORD_PYTORCH_HALF_PIXEL)
    return length_resized > 1 ? (x_resized + 0.5f) / x_scale - 0.5f : 0.0f;
  if (mode == M2I_COORD_ASYMMETRIC)
    return x_resized / x_scale;
  if (mode == M2I_COORD_TF_HALF_PIXEL_FOR_NN)
    return (x_resized + 0.5f) / x_scale;
  /* align_corners */
  return length_resized == 1 ? 0.0f
      : x_resized * (length_original - 1) / (length_resized - 1);
}

/* GetNearestPixel of the spec. */
static gint64
nearest_pixel (M2iNearestMode mode, float x_original, gboolean is_downsample)
{
  switch (mode) {
    case M2I_NEAREST_ROUND_PREFER_FLOOR:
      if (x_original == (float) (gint64) x_original + 0.5f)
        return (gint64) floor (x_original);
      return (gint64) round (x_original);
    case M2I_NEAREST_ROUND_PREFER_CEIL:
      return (gint64) round (x_original);
    case M2I_NEAREST_FLOOR:
      return (gint64) floor (x_original);
    case M2I_NEAREST_CEIL:
      return (gint64) ceil (x_original);
    case M2I_NEAREST_SIMPLE:
    default:
      return is_downsample ? (gint64) ceil (x_original) : (gint64) x_original;
  }
}

static gint64
clip_coord (gint64 c, gint len)
{
  return c < 0 ? 0 : c > len - 1 ? len - 1 : c;
}

static float
coord_x (const Spec *s, gint ox)
{
  return original_coordinate (s->p->coord, (float) ox, s->scale_x, (float) s->out_w,
      (float) s->in_w);
}

static float
coord_y (const Spec *s, gint oy)
{
  return original_coordinate (s->p->coord, (float) oy, s->scale_y, (float) s->out_h,
      (float) s->in_h);
}

static double
nearest_interpolation (const Spec *s, gint ox, gint oy, gint c)
{
  gint64 x = nearest_pixel (s->p->nearest, coord_x (s, ox), s->scale_x < 1.0f);
  gint64 y = nearest_pixel (s->p->nearest, coord_y (s, oy), s->scale_y < 1.0f);
  return pixel (s, clip_coord (x, s->in_w), clip_coord (y, s->in_h), c);
}

static double
triangle_coeff (double dz)
{
  return fmax (0.0, 1.0 - fabs (dz));
}

static double
linear_interpolation (const Spec *s, gint ox, gint oy, gint c)
{
  gboolean is_downsample = s->scale_x < 1.0f || s->scale_y < 1.0f;
  gboolean antialias = is_downsample && s->p->antialias;
  float a[2] = { antialias ? s->scale_y : 1.0f, antialias ? s->scale_x : 1.0f };
  float scales[2] = { s->scale_y, s->scale_x };
  double prod_of_a = (double) a[0] * a[1];
  gint64 r[2];
  for (gint i = 0; i < 2; i++)
    r[i] = scales[i] > 1.0f ? 2 : (gint64) ceilf (2.0f / a[i]);

  float icoords[2] = { coord_y (s, oy), coord_x (s, ox) };
  gint64 icoords_r[2] = { (gint64) roundf (icoords[0]), (gint64) roundf (icoords[1]) };
  gint shape[2] = { s->in_h, s->in_w };

  double summa = 0.0, wsum = 0.0;
  for (gint64 iy = -r[0]; iy <= r[0]; iy++)
    for (gint64 ix = -r[1]; ix <= r[1]; ix++) {
      gint64 inner[2] = { iy + icoords_r[0], ix + icoords_r[1] };
      if (inner[0] < 0 || inner[0] >= shape[0] || inner[1] < 0 || inner[1] >= shape[1])
        continue;
      double w = prod_of_a;
      for (gint i = 0; i < 2; i++) {
        float dz = icoords[i] - (float) inner[i];
        w *= triangle_coeff ((double) (a[i] * dz));
      }
      wsum += w;
      summa += w * pixel (s, inner[1], inner[0], c);
    }
  return wsum == 0.0 ? 0.0 : summa / wsum;
}

/* One axis of onnx_linear_interpolation4D. */
static void
onnx_axis (float in_coord, gint len, gint64 *i1, gint64 *i2, double *d1, double *d2)
{
  double v = fmax (0.0, fmin (in_coord, (double) (len - 1)));
  *i1 = MAX (0, MIN ((gint64) v, len - 1));
  *i2 = MIN (*i1 + 1, len - 1);
  *d1 = fabs (v - *i1);
  *d2 = fabs (v - *i2);
  if (*i1 == *i2)
    *d1 = *d2 = 0.5;
}

static double
onnx_linear_interpolation (const Spec *s, gint ox, gint oy, gint c)
{
  gint64 y1, y2, x1, x2;
  double dy1, dy2, dx1, dx2;
  onnx_axis (coord_y (s, oy), s->in_h, &y1, &y2, &dy1, &dy2);
  onnx_axis (coord_x (s, ox), s->in_w, &x1, &x2, &dx1, &dx2);
  double x11 = pixel (s, x1, y1, c), x21 = pixel (s, x2, y1, c);
  double x12 = pixel (s, x1, y2, c), x22 = pixel (s, x2, y2, c);
  return dx2 * dy2 * x11 + dx1 * dy2 * x21 + dx2 * dy1 * x12 + dx1 * dy1 * x22;
}

/* Keys' cubic convolution weights for the 4 pixels around a point at
 * fractional offset s, written as the kernel evaluated at distances 1+s, s,
 * 1-s, 2-s (the spec's get_cubic_coeff expands the same polynomials). */
static void
cubic_coeffs (double s, double a, double coeff[4])
{
  double d[4] = { 1.0 + fabs (s), fabs (s), 1.0 - fabs (s), 2.0 - fabs (s) };
  for (gint k = 0; k < 4; k++) {
    double x = d[k];
    coeff[k] = x <= 1.0 ? ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
        : ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a;
  }
}

static double
cubic_interpolation (const Spec *s, gint ox, gint oy, gint c)
{
  float in_x = coord_x (s, ox), in_y = coord_y (s, oy);
  gint64 bx = (gint64) floor (in_x), by = (gint64) floor (in_y);
  double cx[4], cy[4];
  cubic_coeffs ((double) (in_x - (float) bx), s->p->cube_coeff, cx);
  cubic_coeffs ((double) (in_y - (float) by), s->p->cube_coeff, cy);
  double summa = 0.0;
  for (gint j = 0; j < 4; j++)
    for (gint i = 0; i < 4; i++)
      summa += cy[j] * cx[i] * pixel (s, clip_coord (bx + i - 1, s->in_w),
          clip_coord (by + j - 1, s->in_h), c);
  return summa;
}

/* ---- output conversion -------------------------------------------------- */

static void
store (const Spec *s, guint8 *row, gint ox, gint c, double v, gboolean truncate)
{
  gsize k = (gsize) ox * s->C + c;
  switch (s->type) {
    case M2I_RESIZE_DATA_U8:{
      double x = v != v ? 0.0 : fmin (fmax (v, 0.0), 255.0);
      row[k] = (guint8) (truncate ? trunc (x) : round (x));
      break;
    }
    case M2I_RESIZE_DATA_F16:
      ((guint16 *) row)[k] = m2i_f32_to_f16 ((float) v);
      break;
    default:
      ((float *) row)[k] = (float) v;
  }
}

/* ---- pillow modes: the two-pass algorithm -------------------------------- */

static double
pillow_filter (M2iResizeMode mode, double x, double a)
{
  if (x < 0.0)
    x = -x;
  if (mode == M2I_RESIZE_BILINEAR_PILLOW)
    return x < 1.0 ? 1.0 - x : 0.0;
  if (x < 1.0)
    return ((a + 2.0) * x - (a + 3.0)) * x * x + 1;
  if (x < 2.0)
    return (((x - 5) * x + 8) * x - 4) * a;
  return 0.0;
}

/* Pillow's coefficient table of one axis: bounds[2*i] = first pixel,
 * bounds[2*i+1] = count, kk[i*ksize + k] = normalised weights. */
static gint
pillow_coeffs (M2iResizeMode mode, double a, gint in_size, gint out_size,
    gint **bounds_out, double **kk_out)
{
  double support = mode == M2I_RESIZE_BILINEAR_PILLOW ? 1.0 : 2.0;
  double scale = (double) ((float) in_size - 0.0f) / out_size;
  double filterscale = scale < 1.0 ? 1.0 : scale;
  support *= filterscale;
  gint ksize = (gint) ceil (support) * 2 + 1;
  gint *bounds = g_new0 (gint, 2 * out_size);
  double *kk = g_new0 (double, (gsize) out_size * ksize);
  for (gint xx = 0; xx < out_size; xx++) {
    double center = (xx + 0.5) * scale, ww = 0.0, ss = 1.0 / filterscale;
    gint xmin = (gint) (center - support + 0.5);
    gint xmax = (gint) (center + support + 0.5);
    if (xmin < 0)
      xmin = 0;
    if (xmax > in_size)
      xmax = in_size;
    xmax -= xmin;
    double *k = kk + (gsize) xx * ksize;
    for (gint x = 0; x < xmax; x++) {
      k[x] = pillow_filter (mode, (x + xmin - center + 0.5) * ss, a);
      ww += k[x];
    }
    for (gint x = 0; x < xmax; x++)
      if (ww != 0.0)
        k[x] /= ww;
    bounds[2 * xx] = xmin;
    bounds[2 * xx + 1] = xmax;
  }
  *bounds_out = bounds;
  *kk_out = kk;
  return ksize;
}

/* Rounds a pass result to the data type, as OpenVINO stores it in T. */
static double
to_type (M2iResizeData type, double v)
{
  if (type == M2I_RESIZE_DATA_U8) {
    gint64 r = (gint64) (v >= 0.0 ? v + 0.5 : v - 0.5);
    return (double) CLAMP (r, 0, 255);
  }
  if (type == M2I_RESIZE_DATA_F16)
    return m2i_f16_to_f32 (m2i_f32_to_f16 ((float) v));
  return (float) v;
}

static void
pillow_resize (const Spec *s, guint8 *dst, gsize dst_stride)
{
  gint *bx, *by;
  double *kx, *ky;
  M2iResizeMode mode = s->p->mode;
  gint ksx = pillow_coeffs (mode, s->p->cube_coeff, s->in_w, s->out_w, &bx, &kx);
  gint ksy = pillow_coeffs (mode, s->p->cube_coeff, s->in_h, s->out_h, &by, &ky);
  gboolean need_h = s->out_w != s->in_w, need_v = s->out_h != s->in_h;

  /* Horizontal pass over every input row into a double image of the data
   * type's values (skipped, as in Pillow, when the width does not change). */
  gint mid_w = need_h ? s->out_w : s->in_w;
  double *mid = g_new (double, (gsize) s->in_h * mid_w * s->C);
  for (gint y = 0; y < s->in_h; y++)
    for (gint xx = 0; xx < mid_w; xx++)
      for (gint c = 0; c < s->C; c++) {
        double ss = 0.0;
        if (need_h) {
          for (gint x = 0; x < bx[2 * xx + 1]; x++)
            ss += pixel (s, x + bx[2 * xx], y, c) * kx[(gsize) xx * ksx + x];
          ss = to_type (s->type, ss);
        } else {
          ss = pixel (s, xx, y, c);
        }
        mid[((gsize) y * mid_w + xx) * s->C + c] = ss;
      }

  for (gint yy = 0; yy < s->out_h; yy++) {
    guint8 *row = dst + (gsize) yy * dst_stride;
    for (gint xx = 0; xx < s->out_w; xx++)
      for (gint c = 0; c < s->C; c++) {
        double ss = 0.0;
        if (need_v) {
          for (gint y = 0; y < by[2 * yy + 1]; y++)
            ss += mid[((gsize) (y + by[2 * yy]) * mid_w + xx) * s->C + c]
                * ky[(gsize) yy * ksy + y];
        } else {
          ss = mid[((gsize) yy * mid_w + xx) * s->C + c];
        }
        store (s, row, xx, c, ss, FALSE);
      }
  }
  g_free (mid);
  g_free (bx);
  g_free (by);
  g_free (kx);
  g_free (ky);
}

gboolean
m2i_resize_spec_image (const M2iResizeParams *p, gint in_width, gint in_height,
    M2iResizeData type, gint channels, const void *src, gsize src_stride,
    void *dst, gsize dst_stride, GError **error)
{
  if (!m2i_resize_params_check (p, in_width, in_height, error)
      || !m2i_resize_image_args_check (in_width, in_height, p->out_width,
          p->out_height, type, channels, src, src_stride, dst, dst_stride, error))
    return FALSE;

  Spec s = { p, in_width, in_height, p->out_width, p->out_height, channels, type,
    src, src_stride,
    (float) p->out_width / (float) in_width, (float) p->out_height / (float) in_height };

  if (p->mode == M2I_RESIZE_BILINEAR_PILLOW || p->mode == M2I_RESIZE_BICUBIC_PILLOW) {
    pillow_resize (&s, dst, dst_stride);
    return TRUE;
  }

  for (gint oy = 0; oy < s.out_h; oy++) {
    guint8 *row = (guint8 *) dst + (gsize) oy * dst_stride;
    for (gint ox = 0; ox < s.out_w; ox++)
      for (gint c = 0; c < channels; c++) {
        double v;
        gboolean truncate = FALSE;
        switch (p->mode) {
          case M2I_RESIZE_NEAREST:
            v = nearest_interpolation (&s, ox, oy, c);
            break;
          case M2I_RESIZE_LINEAR:
            v = linear_interpolation (&s, ox, oy, c);
            break;
          case M2I_RESIZE_LINEAR_ONNX:
            v = onnx_linear_interpolation (&s, ox, oy, c);
            truncate = TRUE;
            break;
          default:
            v = cubic_interpolation (&s, ox, oy, c);
            truncate = TRUE;
            break;
        }
        store (&s, row, ox, c, v, truncate);
      }
  }
  return TRUE;
}
