/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* csc-c.c — the plain-C csc kernels: the reference every SIMD level is
 * tested against, and the fallback where none applies.
 *
 * They compute exactly floor((1164(Y-16) + k·chroma + 500)/1000), clamped,
 * as docs/m2i-engine.md derives: two terms per chroma sample and channel
 * (m2i_csc_chroma_terms), then a few 16-bit operations per pixel
 * (m2i_csc_pixel). Terms arrays are in pixel order (block 1).
 */
#include "csc-kernels.h"

/* Terms of n_chroma samples, each repeated for its two pixels: from an NV12
 * UV row (@c2 NULL) or I420 U, V rows. */
static void
prep_420_c (const guint8 *c1, const guint8 *c2, gint n_chroma, gint16 *t, gsize ts)
{
  for (gint c = 0; c < n_chroma; c++) {
    gint16 k[CSC_N_TERMS];
    m2i_csc_chroma_terms (c2 ? c1[c] : c1[2 * c], c2 ? c2[c] : c1[2 * c + 1], k);
    for (int j = 0; j < CSC_N_TERMS; j++)
      t[j * ts + 2 * c] = t[j * ts + 2 * c + 1] = k[j];
  }
}

static void
prep_444_c (const guint8 *u, const guint8 *v, gint n, gint16 *t, gsize ts)
{
  for (gint i = 0; i < n; i++) {
    gint16 k[CSC_N_TERMS];
    m2i_csc_chroma_terms (u[i], v[i], k);
    for (int j = 0; j < CSC_N_TERMS; j++)
      t[j * ts + i] = k[j];
  }
}

/* Gathers of listed columns: cy[k] = y[xs[k]] (skipped if @y is NULL)
 * and, if @c1 is set, the chroma of column xs[k] from an NV12 UV row (@c2
 * NULL) or I420 U, V rows. @wy and @wc are the luma and chroma row lengths
 * in bytes: the SIMD versions read 4 bytes at min(offset, w - 4) and shift,
 * so they never read outside the rows. */
void
m2i_csc_gather_c (const guint8 *y, gint wy, const guint8 *c1, const guint8 *c2, gint wc,
    const gint32 *xs, gint K, guint8 *restrict cy, guint8 *restrict cu, guint8 *restrict cv)
{
  if (y)
    for (gint k = 0; k < K; k++)
      cy[k] = y[xs[k]];
  if (!c1)
    return;
  if (!c2) {
    for (gint k = 0; k < K; k++) {
      gsize o = (gsize) (xs[k] & ~1);
      cu[k] = c1[o];
      cv[k] = c1[o + 1];
    }
  } else {
    for (gint k = 0; k < K; k++) {
      cu[k] = c1[xs[k] >> 1];
      cv[k] = c2[xs[k] >> 1];
    }
  }
}

/* The same for pairs of adjacent columns xs[i], xs[i] + 1, written to [i]
 * and [n + i] of each output (the expanded two-tap layout), for i0 <= i < i1. */
static void
gather_pairs_from (const guint8 *y, const guint8 *c1, const guint8 *c2, const gint32 *xs,
    gint i0, gint i1, gint n, guint8 *restrict cy, guint8 *restrict cu, guint8 *restrict cv)
{
  for (gint i = i0; i < i1; i++) {
    gint x = xs[i];
    if (y) {
      cy[i] = y[x];
      cy[n + i] = y[x + 1];
    }
    if (c1 && !c2) {
      cu[i] = c1[x & ~1];
      cv[i] = c1[(x & ~1) + 1];
      cu[n + i] = c1[(x + 1) & ~1];
      cv[n + i] = c1[((x + 1) & ~1) + 1];
    } else if (c1) {
      cu[i] = c1[x >> 1];
      cv[i] = c2[x >> 1];
      cu[n + i] = c1[(x + 1) >> 1];
      cv[n + i] = c2[(x + 1) >> 1];
    }
  }
}

void
m2i_csc_gather_pairs_c (const guint8 *y, gint wy, const guint8 *c1, const guint8 *c2, gint wc,
    const gint32 *xs, gint n, guint8 *cy, guint8 *cu, guint8 *cv)
{
  gather_pairs_from (y, c1, c2, xs, 0, n, n, cy, cu, cv);
}


static void
hpass_expanded_c (const float *wt, gint T, gint n, const guint8 *p, gint K, float *dst)
{
  hpass_expanded_body (wt, T, n, p, K, dst);
}

/* Finishing of an fp16 chain with norm, in one pass: the resize sum rounded
 * to fp16 (the data type), then norm in fp32 on that value (the fast
 * formula, same operation order everywhere), rounded to fp16. */
void
m2i_csc_finish_f16_norm_c (const float *v, const float *sub, const float *mul, const float *add,
    gint n, m2i_f16 *out)
{
  for (gint i = 0; i < n; i++) {
    float x = m2i_f16_to_f32 (m2i_f32_to_f16 (v[i]));
    out[i] = m2i_f32_to_f16 ((x - sub[i]) * mul[i] + add[i]);
  }
}

/* op-by-op norm of fp16 data (the fast formula) */
void
m2i_csc_norm_f16_c (const m2i_f16 *in, m2i_f16 *out, gint n, float sub, float mul, float add)
{
  for (gint i = 0; i < n; i++)
    out[i] = m2i_f32_to_f16 ((m2i_f16_to_f32 (in[i]) - sub) * mul + add);
}

m2i_f16 m2i_csc_u8_f16[256];

void
m2i_csc_init_tables (void)
{
  for (int i = 0; i < 256; i++)
    m2i_csc_u8_f16[i] = m2i_f32_to_f16 ((float) i);
}

static void
u8_to_f16_c (const guint8 *src, m2i_f16 *dst, gint n)
{
  for (gint i = 0; i < n; i++)
    dst[i] = m2i_csc_u8_f16[src[i]];
}

static inline void
store_fp (const CscOutSpec *spec, guint8 *const dst[3], int c, gint i, guint8 x)
{
  float f = (float) x;
  if (spec->norm)
    f = (f - spec->sub[c]) * spec->mul[c] + spec->add[c];
  if (spec->mode == CSC_OUT_PL_F16)
    ((m2i_f16 *) dst[c])[i] = spec->norm ? m2i_f32_to_f16 (f) : m2i_csc_u8_f16[x];
  else
    ((float *) dst[c])[i] = f;
}

static void
row_c (const guint8 *y, const gint16 *t, gsize ts, gint n, guint8 *const dst[3],
    const CscOutSpec *spec)
{
  const gint16 *qr = t + CSC_QR * ts, *rr = t + CSC_RR * ts;
  const gint16 *qg = t + CSC_QG * ts, *rg = t + CSC_RG * ts;
  const gint16 *qb = t + CSC_QB * ts, *rb = t + CSC_RB * ts;
  switch (spec->mode) {
    case CSC_OUT_IL_U8: {
      guint8 *o = dst[0];
      int ir = spec->bgr ? 2 : 0, ib = 2 - ir;
      for (gint i = 0; i < n; i++) {
        o[3 * i + ir] = m2i_csc_pixel (y[i], qr[i], rr[i]);
        o[3 * i + 1] = m2i_csc_pixel (y[i], qg[i], rg[i]);
        o[3 * i + ib] = m2i_csc_pixel (y[i], qb[i], rb[i]);
      }
      break;
    }
    case CSC_OUT_PL_U8:
      for (gint i = 0; i < n; i++) {
        dst[0][i] = m2i_csc_pixel (y[i], qr[i], rr[i]);
        dst[1][i] = m2i_csc_pixel (y[i], qg[i], rg[i]);
        dst[2][i] = m2i_csc_pixel (y[i], qb[i], rb[i]);
      }
      break;
    default:
      for (gint i = 0; i < n; i++) {
        store_fp (spec, dst, 0, i, m2i_csc_pixel (y[i], qr[i], rr[i]));
        store_fp (spec, dst, 1, i, m2i_csc_pixel (y[i], qg[i], rg[i]));
        store_fp (spec, dst, 2, i, m2i_csc_pixel (y[i], qb[i], rb[i]));
      }
      break;
  }
}

/* Pairs in plain C: terms for a stretch of 64 pixels, then both rows. */
static void
pair_c (const guint8 *y0, const guint8 *y1, const guint8 *c1, const guint8 *c2, gint n,
    guint8 *const d0[3], guint8 *const d1[3], const CscOutSpec *spec)
{
  enum { CHUNK = 64 };
  gint16 t[CSC_N_TERMS * CHUNK];
  guint bps = spec->mode == CSC_OUT_PL_F16 ? 2 : spec->mode == CSC_OUT_PL_F32 ? 4 : 1;
  for (gint i = 0; i < n; i += CHUNK) {
    gint m = MIN (CHUNK, n - i);
    prep_420_c (c2 ? c1 + i / 2 : c1 + i, c2 ? c2 + i / 2 : NULL, m / 2, t, CHUNK);
    for (int r = 0; r < 2; r++) {
      const guint8 *yr = r ? y1 : y0;
      guint8 *const *dr = r ? d1 : d0;
      if (!yr)
        continue;
      guint8 *o[3];
      for (int c = 0; c < 3; c++)
        o[c] = dr[c] ? dr[c] + (spec->mode == CSC_OUT_IL_U8 ? 3 : bps) * (gsize) i : NULL;
      row_c (yr + i, t, CHUNK, m, o, spec);
    }
  }
}

/* ---- float pair path: the reference ---------------------------------------
 *
 * What the SIMD float pair kernels compute, written plainly: each tap's
 * colour by the integer formula (m2i_csc_chroma_terms, m2i_csc_pixel), the
 * horizontal and vertical sums as the resize contract evaluates them
 * (resize-private.h), the finishing as m2i_csc_finish_f16_norm_c. */

/* Colour (R, G, B) of column x + tap of row @y */
static void
fpair_colour (const FPairTable *t, const guint8 *y, const guint8 *c1, const guint8 *c2, gint x,
    int tap, float rgb[3])
{
  gint o = fpair_coff (x + tap, t->nv12);
  gint16 k[CSC_N_TERMS];
  m2i_csc_chroma_terms (c1[o], t->nv12 ? c1[o + 1] : c2[o], k);
  for (int c = 0; c < 3; c++)
    rgb[c] = m2i_csc_pixel (y[x + tap], k[2 * c], k[2 * c + 1]);
}

/* The horizontal sums of output i of row @y: h[c] for R, G, B */
static void
fpair_hsum (const FPairTable *t, const guint8 *y, const guint8 *c1, const guint8 *c2, gint i,
    float h[3])
{
  float a[3], b[3];
  fpair_colour (t, y, c1, c2, t->xs[i], 0, a);
  fpair_colour (t, y, c1, c2, t->xs[i], 1, b);
  for (int c = 0; c < 3; c++)
    h[c] = (0.0f + t->w0[i] * a[c]) + t->w1[i] * b[c];
}

static void
fpair_rows_c (const FPairTable *t, const guint8 *y0, const guint8 *y1, const guint8 *c1,
    const guint8 *c2, float *h0, float *h1)
{
  float *d[2][3];
  fp_planes (t, h0, h1, d);
  for (gint i = 0; i < t->n; i++)
    for (int r = 0; r < (y1 ? 2 : 1); r++) {
      float h[3];
      fpair_hsum (t, r ? y1 : y0, c1, c2, i, h);
      for (int c = 0; c < 3; c++)
        d[r][c][i] = h[c];
    }
}

static void
fpair_out_c (const FPairTable *t, const guint8 *ya, const guint8 *ca1, const guint8 *ca2,
    const guint8 *yb, const guint8 *cb1, const guint8 *cb2, float wy0, float wy1,
    const float *sub, const float *mul, const float *add, m2i_f16 *const out[3])
{
  for (gint i = 0; i < t->n; i++) {
    float a[3], b[3];
    fpair_hsum (t, ya, ca1, ca2, i, a);
    fpair_hsum (t, yb, cb1, cb2, i, b);
    for (int c = 0; c < 3; c++) {
      int p = t->plane_of[c];
      m2i_f16 v = m2i_f32_to_f16 ((0.0f + wy0 * a[c]) + wy1 * b[c]);
      if (sub)
        v = m2i_f32_to_f16 ((m2i_f16_to_f32 (v) - sub[p]) * mul[p] + add[p]);
      out[p][i] = v;
    }
  }
}

const CscKernels m2i_csc_kernels_c_table = {
  .name = "c", .block = 1, .prep_444 = prep_444_c, .row = row_c, .pair = pair_c,
  .u8_to_f16 = u8_to_f16_c, .gather = m2i_csc_gather_c, .gather_pairs = m2i_csc_gather_pairs_c,
  .hpass_expanded = hpass_expanded_c, .finish_f16_norm = m2i_csc_finish_f16_norm_c,
  .fpair_rows = fpair_rows_c, .fpair_fetch = FP_FETCH_SCALAR, .fpair_out = fpair_out_c,
  .norm_f16 = m2i_csc_norm_f16_c,
};
