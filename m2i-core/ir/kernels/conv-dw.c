/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* conv-dw.c — the direct depthwise / small-group convolution (conv-dw.h):
 * geometry, the plain-C row kernel (the reference the instruction-set
 * copies are tested against, and the kernel when neither AVX2 nor AVX-512
 * may be used), the choice of kernel, and the split over threads. */
#include "conv-dw.h"
#include "kernels-private.h"

#include <string.h>

gboolean
ir_dw_applies (gint64 groups, gint64 cin_g, gint64 cout_g)
{
  return cin_g == 1 || (groups > 1 && cin_g <= 8 && cout_g <= 8);
}

void
ir_dw_geom_init (IrDwGeom *g)
{
  /* Tap kw = 0 reads column x·sw − pl: inside from x_lo on. */
  g->x_lo = (g->pl + g->sw - 1) / g->sw;
  /* The last tap reads x·sw + (kw − 1)·dw − pl, and a stride-2 pair of
   * loads one element more: inside below x_hi. */
  gint64 last = g->w - 1 - (g->kw - 1) * g->dw + g->pl - (g->sw == 2 ? 1 : 0);
  g->x_hi = last < 0 ? 0 : MIN (g->ow, last / g->sw + 1);
}

/* Plain C: per output row, one tap at a time along the whole row (the inner
 * loop runs along x, so the compiler vectorizes it at stride 1); each
 * output's sum is still taken in the order ci, kh, kw. */
void
ir_dw_rows_c (const IrDwGeom *g, const float *in, gsize in_plane, const float *w,
    const float *bias, gboolean relu, float *out, gint64 y0, gint64 y1)
{
  for (gint64 y = y0; y < y1; y++) {
    float *o = out + y * g->ow;
    memset (o, 0, g->ow * sizeof (float));
    for (gint64 ci = 0; ci < g->cin_g; ci++)
      for (gint64 kh = 0; kh < g->kh; kh++) {
        gint64 ih = y * g->sh - g->pt + kh * g->dh;
        if (ih < 0 || ih >= g->h)
          continue;
        const float *row = in + ci * in_plane + ih * g->w;
        for (gint64 kw = 0; kw < g->kw; kw++) {
          float wv = w[(ci * g->kh + kh) * g->kw + kw];
          gint64 off = kw * g->dw - g->pl;
          /* Output columns whose input column x·sw + off is inside the row. */
          gint64 lo = off >= 0 ? 0 : (-off + g->sw - 1) / g->sw;
          gint64 hi = g->w - 1 - off < 0 ? -1 : (g->w - 1 - off) / g->sw;
          hi = MIN (hi, g->ow - 1);
          if (g->sw == 1) {
            const float *r = row + off;
            for (gint64 x = lo; x <= hi; x++)
              o[x] += wv * r[x];
          } else {
            gint64 sw = g->sw;
            for (gint64 x = lo; x <= hi; x++)
              o[x] += wv * row[x * sw + off];
          }
        }
      }
    if (bias)
      for (gint64 x = 0; x < g->ow; x++)
        o[x] = o[x] + *bias;
    if (relu)
      for (gint64 x = 0; x < g->ow; x++)
        o[x] = o[x] > 0.0f ? o[x] : 0.0f;
  }
}

/* One output whose kernel covers its whole input plane (a global
 * depthwise layer, person-reidentification-retail-0288's 16×8 one): a
 * dot product of the cin_g·h·w inputs and weights, in sixteen partial
 * sums (the compiler vectorizes them; the row kernels would take a
 * vector per tap for one output). */
void
ir_dw_rows_dot (const IrDwGeom *g, const float *in, gsize in_plane, const float *w,
    const float *bias, gboolean relu, float *out, gint64 y0, gint64 y1)
{
  if (y0 >= y1)
    return;
  gint64 n = g->cin_g * g->h * g->w, i = 0;
  float acc[16] = { 0 };
  for (; i + 16 <= n; i += 16)
    for (gint l = 0; l < 16; l++)
      acc[l] += w[i + l] * in[i + l];
  for (gint l = 0; i < n; i++, l++)
    acc[l] += w[i] * in[i];
  for (gint step = 8; step > 0; step /= 2)
    for (gint l = 0; l < step; l++)
      acc[l] += acc[l + step];
  float o = acc[0];
  if (bias)
    o = o + *bias;
  if (relu)
    o = o > 0.0f ? o : 0.0f;
  out[0] = o;
}

IrDwRows
ir_dw_rows_for (const IrDwGeom *g, M2iCpuFlags level)
{
  IrDwRows r = NULL;
  if (g->oh == 1 && g->ow == 1 && g->kh == g->h && g->kw == g->w && g->pt == 0 &&
      g->pl == 0 && g->dh == 1 && g->dw == 1)
    return ir_dw_rows_dot;
  M2iCpuFlags f = m2i_cpu_flags () & (level | M2I_CPU_FMA);
  if ((f & M2I_CPU_AVX512F) && (f & M2I_CPU_FMA))
    r = ir_dw_rows_avx512 (g);
  else if ((f & M2I_CPU_AVX2) && (f & M2I_CPU_FMA))
    r = ir_dw_rows_avx2 (g);
  return r ? r : ir_dw_rows_c;
}

/* The plane kernel's grid (conv-dw.h). Stride 1: rows as wide as the
 * image plus its larger pad, the left pad first: a tap reading past a
 * row's end wraps onto the next row's left pad, which reads as zero
 * (gw ≥ ow + k − 1 − pl), and nothing of the image is cut (gw ≥ pl + w).
 * Stride 2: rows of the ow + (k − 1) / 2 columns some tap reads, no
 * wrapping. */
static gboolean
dw_plane_grid (IrDwGeom *g)
{
  gint64 s = g->sw, k = g->kw;
  if (g->cin_g != 1 || g->sh != s || g->kh != k || g->dh != 1 || g->dw != 1 ||
      (s != 1 && s != 2) || (k != 3 && k != 5) || g->pl >= k || g->pt >= k)
    return FALSE;
  gint64 gw = s == 1 ? MAX (MAX (g->w + g->pl, g->ow + k - 1 - g->pl), g->ow) :
      g->ow + (k - 1) / 2;
  if (g->ow > 1024 || g->oh > 1024 || gw > 16 * IR_DW_PLANE_CHUNKS ||
      (g->oh + 4) * gw > 16 * IR_DW_PLANE_VECTORS)
    return FALSE;
  g->gw = gw;
  g->gh = g->oh + (k - 1) / s;
  g->nv = (g->oh * gw + 15) / 16;
  /* the last block of eight vectors reads up to seven vectors past the
   * grid, each tap up to (k − 1) / s rows and columns further */
  g->slot = (g->gh * gw + 8 * 16 + 16 + 16 + 15) / 16 * 16;
  /* Where it computes no fewer vectors than the row kernels it was not
   * faster (16 × 64×32 planes: 7.0 against 6.4 µs); at stride 2 its four
   * slot planes must stay in the first-level cache (48 KB on Zen 5): 96
   * × 96×168 → 48×84 took 243 µs against 207, 72 × 150×150 → 75×75 about
   * the same, 108 × 75×75 → 38×38 82 against 93
   * (pedestrian-detection-adas-0002, face-detection-retail-0005). Nor on
   * grids of a vector or two at stride 2, where the four slot planes cost
   * more than the sums (120 × 6×11 → 3×6: 6.4–7.6 µs against 5.9), or of
   * one vector at stride 1 (512 × 3×3: 10.1 against 9.7). */
  /* A 3×3 layer keeping the plane's size reads it in place (conv-dw.h),
   * on a grid as wide as the image. 3×3 only: 5×5's 25 weights and 8
   * sums do not fit the registers with the masks (96 × 40×40: 64 µs
   * through the slot planes, 97 in place). */
  gboolean inplace = s == 1 && k == 3 && g->oh == g->h && g->ow == g->w && g->pt == 1 &&
      g->pl == 1;
  if (inplace) {
    g->gw = g->w;
    g->gh = g->h;
    g->nv = (g->h * g->w + 15) / 16;
    g->slot = g->nf = 0;
  }
  if (g->nv >= g->oh * ((g->ow + 15) / 16) || (s == 2 && 4 * g->slot > 12 * 1024) ||
      g->nv < (s == 1 ? 2 : 3))
    return FALSE;
  if (inplace) {
    gint64 hw = g->h * g->w;
    g->cols = g_new0 (guint16, (g->nv + 9) * k);
    g->rows = g_new0 (guint16, (g->nv + 9) * k);
    for (gint64 v = 0; v < g->nv + 9; v++)
      for (gint l = 0; l < 16; l++) {
        gint64 x = (v * 16 + l) % g->w;
        for (gint64 c = 0; c < k; c++) {
          gint64 at = v * 16 + l + (c - g->pt) * g->w - g->pl;
          if (v < g->nv && x + c - g->pl >= 0 && x + c - g->pl < g->w)
            g->cols[v * k + c] |= 1u << l;
          if (at >= 0 && at < hw)
            g->rows[v * k + c] |= 1u << l;
        }
      }
    return TRUE;
  }
  g->nf = s == 1 ? (g->gh * gw + 15) / 16 : 0;
  g->keep = g_new0 (guint16, g->nv + 8);
  g->fill = g_new0 (guint16, g->nf + 1);
  for (gint64 v = 0; v < g->nv; v++)
    for (gint l = 0; l < 16; l++) {
      gint64 j = v * 16 + l;
      if (j < g->oh * gw && j % gw < g->ow)
        g->keep[v] |= 1u << l;
    }
  for (gint64 v = 0; v < g->nf; v++)
    for (gint l = 0; l < 16; l++) {
      gint64 p = v * 16 + l, y = p / gw - g->pt, x = p % gw - g->pl;
      if (y >= 0 && y < g->h && x >= 0 && x < g->w)
        g->fill[v] |= 1u << l;
    }
  return TRUE;
}

static gint plane_enabled = -1;        /* unknown: M2I_DW_PLANE decides */

gboolean
ir_dw_plane_enabled (void)
{
  return ir_k_switch_on (&plane_enabled, "M2I_DW_PLANE");
}

void
ir_dw_plane_set_enabled (gboolean on)
{
  ir_k_switch_set (&plane_enabled, on);
}

IrDwPlane
ir_dw_plane_for (IrDwGeom *g, M2iCpuFlags level)
{
  M2iCpuFlags f = m2i_cpu_flags () & (level | M2I_CPU_FMA);
  g->gw = 0;
  if (!(f & M2I_CPU_AVX512F) || !(f & M2I_CPU_FMA) || !ir_dw_plane_enabled () ||
      !dw_plane_grid (g))
    return NULL;
  IrDwPlane p = ir_dw_plane_avx512 (g);
  if (!p)
    ir_dw_geom_clear (g);
  return p;
}

void
ir_dw_geom_clear (IrDwGeom *g)
{
  g_clear_pointer (&g->keep, g_free);
  g_clear_pointer (&g->fill, g_free);
  g_clear_pointer (&g->cols, g_free);
  g_clear_pointer (&g->rows, g_free);
  g->gw = 0;
}

gsize
ir_dw_scratch_floats (const IrDwGeom *g)
{
  return g->gw && !g->cols ? (gsize) (g->sw * g->sw * g->slot) : 0;
}

typedef struct {
  const IrDwGeom *g;
  IrDwRows rows;
  IrDwPlane plane;
  float *scratch;
  const float *in, *wts;
  const M2iKFusion *f;
  float *out;
  gint64 c_in, c_out, cout_g, bands;
} DwJob;

static void
dw_slice (gint begin, gint end, gint slice, gpointer data)
{
  const DwJob *j = data;
  const IrDwGeom *g = j->g;
  gsize hw = (gsize) g->h * g->w, ohw = (gsize) g->oh * g->ow;
  gint64 taps = g->cin_g * g->kh * g->kw;
  gsize scratch_floats = j->plane ? ir_dw_scratch_floats (g) : 0;
  /* the slice's own area in a team (its lines stay in its core's cache) */
  float *scratch = scratch_floats ? ir_k_slice_scratch (j->scratch + slice * scratch_floats,
      scratch_floats * sizeof (float)) : NULL;
  /* The slack after each slot plane's grid, read by the grid's last
   * vectors (whose lanes are dropped), made finite once. */
  if (j->plane && j->bands == 1 && scratch)
    for (gint64 s = 0; s < g->sw * g->sw; s++)
      memset (scratch + s * g->slot + g->gh * g->gw, 0,
          (g->slot - g->gh * g->gw) * sizeof (float));
  for (gint t = begin; t < end; t++) {
    gint64 band = t % j->bands, index = t / j->bands;
    gint64 co = index % j->c_out, n = index / j->c_out;
    gint64 first = n * j->c_in + co / j->cout_g * g->cin_g;   /* the group's first input */
    gint64 y0 = band * g->oh / j->bands, y1 = (band + 1) * g->oh / j->bands;
    float *out = j->out + (n * j->c_out + co) * ohw;
    if (j->plane && j->bands == 1) {
      j->plane (g, j->in + first * hw, j->wts + co * taps, j->f->bias ? j->f->bias + co : NULL,
          j->f->relu, out, scratch);
      ir_k_fusion_swish (j->f, out, ohw);
      continue;
    }
    j->rows (g, j->in + first * hw, hw, j->wts + co * taps,
        j->f->bias ? j->f->bias + co : NULL, j->f->relu, out, y0, y1);
    /* a fused Swish on the rows just written */
    ir_k_fusion_swish (j->f, out + y0 * g->ow, (y1 - y0) * g->ow);
  }
}

void
ir_dw_run (const IrDwGeom *g, IrDwRows rows, IrDwPlane plane, const float *in,
    const float *wts, const M2iKFusion *f, float *out, gint64 batch, gint64 c_in,
    gint64 c_out, gint64 cout_g, gint slices, float *scratch)
{
  /* Planes are the tasks; fewer planes than four per slice are cut into
   * bands of rows too, so the slices get even shares. */
  gint64 planes = batch * c_out, bands = 1;
  if (slices > 1 && planes < 4 * slices)
    bands = MIN (g->oh, (4 * slices + planes - 1) / planes);
  DwJob j = { g, rows, plane, scratch, in, wts, f, out, c_in, c_out, cout_g, bands };
  ir_k_parallel_for ((gint) (planes * bands), slices, 1, dw_slice, &j);
}
