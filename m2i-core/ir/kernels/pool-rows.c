/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* pool-rows.c — 2-D f32 MaxPool planes without indices by rows (see
 * pool-rows.h). */
#include "pool-rows.h"
#include "kernels-private.h"

#include <math.h>

gsize
ir_pool_rows_scratch (const IrPoolGeom *g)
{
  return (gsize) ((g->ow - 1) * g->sw + (g->kw - 1) * g->dw + 1);
}

/* row[i] = the maximum of input column i − pl over rows iy0 + ky·dh
 * (ky < kh) inside the plane, -inf outside it, for i < n; then out[x] =
 * the maximum of row[x·sw + kx·dw] over kx. Stride 1 on its own, so the
 * compiler vectorizes it with plain loads. */
M2I_K_INLINE void
max_row_pair (const IrPoolGeom *g, const float *restrict plane, gint64 iy0,
    float *restrict row, gint64 n, float *restrict out, gint64 sw)
{
  /* the sizes in locals: stores through @out could otherwise alias @g */
  const gint64 h = g->h, w = g->w, ow = g->ow, kh = g->kh, kw = g->kw, dh = g->dh,
      dw = g->dw, pl = g->pl;
  gint64 lo = CLAMP (pl, 0, n), hi = CLAMP (pl + w, lo, n);
  for (gint64 i = 0; i < n; i++)
    row[i] = -INFINITY;
  for (gint64 ky = 0; ky < kh; ky++) {
    gint64 iy = iy0 + ky * dh;
    if (iy < 0 || iy >= h)
      continue;
    const float *restrict src = plane + iy * w - pl;
    for (gint64 i = lo; i < hi; i++)
      row[i] = src[i] > row[i] ? src[i] : row[i];
  }
  for (gint64 x = 0; x < ow; x++)
    out[x] = -INFINITY;
  for (gint64 kx = 0; kx < kw; kx++) {
    const float *restrict r = row + kx * dw;
    for (gint64 x = 0; x < ow; x++)
      out[x] = r[x * sw] > out[x] ? r[x * sw] : out[x];
  }
}

/* Outputs of row @oy left at -inf: the window's first element inside the
 * input (-inf, NaN, or -inf when the window is all pads). */
static void
first_in_windows (const IrPoolGeom *g, const float *plane, gint64 oy, float *out)
{
  for (gint64 x = 0; x < g->ow; x++) {
    if (out[x] != -INFINITY)
      continue;
    for (gint64 t = 0; t < g->kh * g->kw; t++) {
      gint64 iy = oy * g->sh - g->pt + t / g->kw * g->dh;
      gint64 ix = x * g->sw - g->pl + t % g->kw * g->dw;
      if (iy >= 0 && iy < g->h && ix >= 0 && ix < g->w) {
        out[x] = plane[iy * g->w + ix];
        break;
      }
    }
  }
}

M2I_K_INLINE void
max_plane_rows_body (const IrPoolGeom *g, const float *plane, float *out, float *row)
{
  gint64 n = (gint64) ir_pool_rows_scratch (g), ow = g->ow;
  for (gint64 oy = 0; oy < g->oh; oy++) {
    gint64 iy0 = oy * g->sh - g->pt;
    float *o = out + oy * ow;
    if (g->sw == 1)
      max_row_pair (g, plane, iy0, row, n, o, 1);
    else if (g->sw == 2)
      max_row_pair (g, plane, iy0, row, n, o, 2);
    else
      max_row_pair (g, plane, iy0, row, n, o, g->sw);
    gint stuck = 0;
    for (gint64 x = 0; x < ow; x++)
      stuck |= o[x] == -INFINITY;
    if (stuck)
      first_in_windows (g, plane, oy, o);
  }
}
M2I_K_SIMD_CLONES (max_plane_rows, (const IrPoolGeom *g, const float *plane, float *out,
        float *row), (g, plane, out, row))

void
ir_pool_max_plane (const IrPoolGeom *g, const float *plane, float *out, float *row)
{
  max_plane_rows (g, plane, out, row);
}
