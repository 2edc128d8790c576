/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gstm2idraw.c — drawing into video frames in place, see gstm2idraw.h. */
#include "gstm2idraw.h"

#include <math.h>

/* One component of a mapped frame. */
typedef struct {
  guint8 *data;                 /* sample (0, 0) */
  gint stride, pstride;
  guint wsub, hsub;             /* log2 of the subsampling */
} Comp;

static void
comp_get (GstVideoFrame *f, guint c, Comp *k)
{
  k->data = GST_VIDEO_FRAME_COMP_DATA (f, c);
  k->stride = GST_VIDEO_FRAME_COMP_STRIDE (f, c);
  k->pstride = GST_VIDEO_FRAME_COMP_PSTRIDE (f, c);
  k->wsub = GST_VIDEO_FORMAT_INFO_W_SUB (f->info.finfo, c);
  k->hsub = GST_VIDEO_FORMAT_INFO_H_SUB (f->info.finfo, c);
}

/* The samples of @k touching the pixels [x0, x1) x [y0, y1): [i0, i1] x [j0, j1]. */
static void
comp_range (const Comp *k, gint x0, gint y0, gint x1, gint y1, gint *i0, gint *i1, gint *j0,
    gint *j1)
{
  *i0 = x0 >> k->wsub;
  *i1 = (x1 - 1) >> k->wsub;
  *j0 = y0 >> k->hsub;
  *j1 = (y1 - 1) >> k->hsub;
}

static guint8 *
comp_at (const Comp *k, gint i, gint j)
{
  return k->data + (gssize) j * k->stride + (gssize) i * k->pstride;
}

/* @x, @y, @w x @h clipped to the frame as [x0, x1) x [y0, y1); FALSE when
 * nothing is left. */
static gboolean
clip (const GstVideoFrame *f, gint64 x, gint64 y, gint64 w, gint64 h, gint *x0, gint *y0,
    gint *x1, gint *y1)
{
  gint64 W = GST_VIDEO_FRAME_WIDTH (f), H = GST_VIDEO_FRAME_HEIGHT (f);
  gint64 a = MAX (x, 0), b = MAX (y, 0);
  gint64 c = MIN (x + MAX (w, 0), W), d = MIN (y + MAX (h, 0), H);
  if (a >= c || b >= d)
    return FALSE;
  *x0 = (gint) a;
  *y0 = (gint) b;
  *x1 = (gint) c;
  *y1 = (gint) d;
  return TRUE;
}

static guint8
round_u8 (double v)
{
  return (guint8) CLAMP (floor (v + 0.5), 0.0, 255.0);
}

void
gst_m2i_color_from_rgb (const GstVideoFormatInfo *finfo, guint8 r, guint8 g, guint8 b,
    GstM2iColor *out)
{
  if (!GST_VIDEO_FORMAT_INFO_IS_YUV (finfo)) {
    out->c[0] = r;
    out->c[1] = g;
    out->c[2] = b;
    return;
  }
  double y = 0.299 * r + 0.587 * g + 0.114 * b;
  out->c[0] = round_u8 (16.0 + 219.0 / 255.0 * y);
  out->c[1] = round_u8 (128.0 + 224.0 / 255.0 * (b - y) / 1.772);
  out->c[2] = round_u8 (128.0 + 224.0 / 255.0 * (r - y) / 1.402);
}

/* gst_m2i_draw_fill with coordinates that may lie far outside the frame. */
static void
fill64 (GstVideoFrame *f, gint64 x, gint64 y, gint64 w, gint64 h, const GstM2iColor *col)
{
  gint x0, y0, x1, y1;
  if (!clip (f, x, y, w, h, &x0, &y0, &x1, &y1))
    return;
  for (guint c = 0; c < 3; c++) {
    Comp k;
    comp_get (f, c, &k);
    gint i0, i1, j0, j1;
    comp_range (&k, x0, y0, x1, y1, &i0, &i1, &j0, &j1);
    for (gint j = j0; j <= j1; j++) {
      guint8 *p = comp_at (&k, i0, j);
      for (gint i = i0; i <= i1; i++, p += k.pstride)
        *p = col->c[c];
    }
  }
}

void
gst_m2i_draw_fill (GstVideoFrame *f, gint x, gint y, gint w, gint h, const GstM2iColor *col)
{
  fill64 (f, x, y, w, h, col);
}

void
gst_m2i_draw_outline (GstVideoFrame *f, gint x, gint y, gint w, gint h, gint t,
    const GstM2iColor *c)
{
  if (w <= 0 || h <= 0 || t <= 0)
    return;
  gint64 X = x, Y = y, Wd = w, Ht = h, T = t;
  if (2 * T >= Wd || 2 * T >= Ht) {
    fill64 (f, X, Y, Wd, Ht, c);
    return;
  }
  fill64 (f, X, Y, Wd, T, c);
  fill64 (f, X, Y + Ht - T, Wd, T, c);
  fill64 (f, X, Y + T, T, Ht - 2 * T, c);
  fill64 (f, X + Wd - T, Y + T, T, Ht - 2 * T, c);
}

/* Liang-Barsky: clips the segment p + t d, t in [0, 1], to [0, w] x [0, h];
 * FALSE when nothing of it is inside. */
static gboolean
clip_segment (double w, double h, double *x0, double *y0, double *x1, double *y1)
{
  double dx = *x1 - *x0, dy = *y1 - *y0, t0 = 0.0, t1 = 1.0;
  const double p[4] = { -dx, dx, -dy, dy };
  const double q[4] = { *x0, w - *x0, *y0, h - *y0 };
  for (int i = 0; i < 4; i++) {
    if (p[i] == 0.0) {
      if (q[i] < 0.0)
        return FALSE;
      continue;
    }
    double r = q[i] / p[i];
    if (p[i] < 0.0)
      t0 = MAX (t0, r);
    else
      t1 = MIN (t1, r);
    if (t0 > t1)
      return FALSE;
  }
  double ax = *x0, ay = *y0;
  *x0 = ax + t0 * dx;
  *y0 = ay + t0 * dy;
  *x1 = ax + t1 * dx;
  *y1 = ay + t1 * dy;
  return TRUE;
}

void
gst_m2i_draw_line (GstVideoFrame *f, double x0, double y0, double x1, double y1, gint t,
    const GstM2iColor *c)
{
  if (t <= 0 || !isfinite (x0) || !isfinite (y0) || !isfinite (x1) || !isfinite (y1)
      || !clip_segment (GST_VIDEO_FRAME_WIDTH (f), GST_VIDEO_FRAME_HEIGHT (f), &x0, &y0, &x1,
          &y1))
    return;
  /* inside the frame now: at most width + height samples */
  gint64 n = (gint64) ceil (MAX (fabs (x1 - x0), fabs (y1 - y0)));
  gint64 half = (t - 1) / 2;
  for (gint64 i = 0; i <= n; i++) {
    double s = n ? (double) i / (double) n : 0.0;
    gint64 sx = (gint64) floor (x0 + s * (x1 - x0)), sy = (gint64) floor (y0 + s * (y1 - y0));
    fill64 (f, sx - half, sy - half, t, t, c);
  }
}

static guint8
mix (guint8 bg, guint8 fg, guint a)
{
  return (guint8) ((bg * (255u - a) + fg * a + 127u) / 255u);
}

void
gst_m2i_draw_coverage (GstVideoFrame *f, gint x, gint y, gint w, gint h,
    const guint8 *alpha, gint stride, const GstM2iColor *fg, const GstM2iColor *bg)
{
  gint x0, y0, x1, y1;
  if (!clip (f, x, y, w, h, &x0, &y0, &x1, &y1))
    return;
  for (guint c = 0; c < 3; c++) {
    Comp k;
    comp_get (f, c, &k);
    gint i0, i1, j0, j1;
    comp_range (&k, x0, y0, x1, y1, &i0, &i1, &j0, &j1);
    for (gint j = j0; j <= j1; j++) {
      gint py0 = MAX (j << k.hsub, y0), py1 = MIN ((j + 1) << k.hsub, y1);
      guint8 *p = comp_at (&k, i0, j);
      for (gint i = i0; i <= i1; i++, p += k.pstride) {
        gint px0 = MAX (i << k.wsub, x0), px1 = MIN ((i + 1) << k.wsub, x1);
        guint sum = 0, n = 0;
        for (gint py = py0; py < py1; py++)
          for (gint px = px0; px < px1; px++, n++)
            sum += alpha[(gsize) (py - y) * stride + (px - x)];
        *p = mix (bg->c[c], fg->c[c], (sum + n / 2) / n);
      }
    }
  }
}

void
gst_m2i_draw_mask (GstVideoFrame *f, gint x, gint y, gint w, gint h,
    const GstM2iMaskView *m, const GstM2iColor *palette, guint n_palette, guint alpha,
    guint *cols)
{
  gint x0, y0, x1, y1;
  if (n_palette == 0 || alpha == 0 || !clip (f, x, y, w, h, &x0, &y0, &x1, &y1))
    return;
  alpha = MIN (alpha, 255u);
  /* mask column of each frame column: floor((px - x + 0.5) W / w) */
  for (gint px = x0; px < x1; px++)
    cols[px - x0] = (guint) (((guint64) (2 * (gint64) (px - x) + 1) * m->width) / (2 * (guint64) w));
  for (guint c = 0; c < 3; c++) {
    Comp k;
    comp_get (f, c, &k);
    gint i0, i1, j0, j1;
    comp_range (&k, x0, y0, x1, y1, &i0, &i1, &j0, &j1);
    for (gint j = j0; j <= j1; j++) {
      gint py = MAX (j << k.hsub, y0);
      guint row = (guint) (((guint64) (2 * (gint64) (py - y) + 1) * m->height) / (2 * (guint64) h));
      const guint16 *map = m->class_map + (gsize) row * m->width;
      guint8 *p = comp_at (&k, i0, j);
      for (gint i = i0; i <= i1; i++, p += k.pstride) {
        gint px = MAX (i << k.wsub, x0);
        const GstM2iColor *col = &palette[map[cols[px - x0]] % n_palette];
        *p = mix (*p, col->c[c], alpha);
      }
    }
  }
}
