/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* conv-dw-rows.h — the row kernels of the direct convolution (conv-dw.h),
 * written once and included by conv-dw-avx2.c and conv-dw-avx512.c
 * (deliberately no include guard). The includer defines:
 *   DW_TARGET            the target attribute string
 *   DW_NAME(x)           the instruction set's name for x
 *   DW_VEC, DW_W         the vector type and its floats
 *   DW_MASK              a mask of lanes (whatever the masked loads take)
 *   DW_ZERO, DW_SET1, DW_LOAD, DW_FMA, DW_ADD, DW_MAX, DW_STORE
 *   DW_LOAD_S2(p)        p[0], p[2], ... p[2W − 2] (reads p[0 .. 2W − 1])
 *   DW_RANGE(lo, hi)     the mask of elements [lo, hi) of W (any bounds)
 *   DW_LOAD_PART(p, m)   the lanes of m from p, the others 0; reads
 *                        nothing outside them
 *   DW_LOAD_S2_PART(p, m0, m1)  DW_LOAD_S2 of p[0 .. W) under m0 and
 *                        p[W .. 2W) under m1, the others 0
 *   DW_STORE_PART(p, v, n)      the first n lanes
 *
 * The outputs are taken four rows by one vector of W columns at a time:
 * independent sums, so the FMAs' latency is hidden whatever the plane's
 * width (a vector along a row would be one chain of kh·kw FMAs).
 * A vector whose taps all read inside their rows ([x_lo, x_hi), almost
 * all) uses plain loads; the few at the rows' ends masked loads, their
 * masks made once per vector column; kernel rows outside the image are
 * skipped. Each output's sum runs over ci, kh, kw in that order.
 */

#define DW_INL static inline __attribute__ ((always_inline, target (DW_TARGET)))

/* Rows per block: four independent sums. Eight were slower with AVX-512
 * (their row pointers no longer fit the general registers). */
#define DW_R 4

/* M (r) for each row of a block. */
#define DW_EACH(M) M (0) M (1) M (2) M (3)

/* The sums of DW_R output rows y0 .. (@rows of them are used) over one
 * vector of outputs from column x, into acc[]: kernel row kh of output row
 * r reads input row iy0 + r·sh + kh·dh. ALL: every one of those rows is
 * inside the image (no checks). MASKED: the loads take the masks m0 (and
 * m1) of each tap column, else plain loads. Each flag is a constant in
 * each call, so each combination is a loop of its own. The sums are
 * separate variables (a0, a1, ...): an array of vectors indexed in a loop
 * stays in memory.
 *
 * sums_sq: square strides (sh = sw = S), no dilation, KH and KW
 * constants, one input channel (depthwise) when CIN1: the input rows are
 * row pointers q[j] = input row iy0 + j, j = r·S + kh, so taps of several
 * output rows on the same input row load it once (the compiler merges the
 * loads). sums_any: everything else with column stride S. */
#define DW_LD(q, kw) (!MASKED ? (S == 1 ? DW_LOAD (q) : DW_LOAD_S2 (q)) : \
    (S == 1 ? DW_LOAD_PART (q, m0[kw]) : DW_LOAD_S2_PART (q, m0[kw], m1[kw])))
#define DW_DECL(r) DW_VEC a##r = DW_ZERO ();
#define DW_OUT(r) acc[r] = a##r;

DW_INL void
DW_NAME (sums_sq) (const IrDwGeom *g, const float *in, gsize in_plane, const float *w,
    gint64 iy0, gint64 rows, gint64 x, const DW_MASK *m0, const DW_MASK *m1, DW_VEC *acc,
    const gint64 KH, const gint64 KW, const gint64 S, const gboolean ALL, const gboolean MASKED,
    const gboolean CIN1)
{
  const gint64 iw = g->w, cin = CIN1 ? 1 : g->cin_g;
  DW_EACH (DW_DECL)
  for (gint64 ci = 0; ci < cin; ci++) {
    const float *row = in + ci * in_plane + iy0 * iw + x * S - g->pl;
    const float *q[(DW_R - 1) * 2 + 5];
    gboolean ok[(DW_R - 1) * 2 + 5];
#pragma GCC unroll 24
    for (gint64 j = 0; j < (DW_R - 1) * S + KH; j++) {
      q[j] = row + j * iw;
      /* rows past @rows read rows past the band: skipped too */
      ok[j] = ALL || (iy0 + j >= 0 && iy0 + j < g->h && j < (rows - 1) * S + KH);
    }
    const float *wc = w + ci * KH * KW;
#pragma GCC unroll 8
    for (gint64 kh = 0; kh < KH; kh++)
#pragma GCC unroll 8
      for (gint64 kw = 0; kw < KW; kw++) {
        DW_VEC wv = DW_SET1 (wc[kh * KW + kw]);
#define DW_TAP(r) \
        if (ok[r * S + kh]) \
          a##r = DW_FMA (wv, DW_LD (q[r * S + kh] + kw, kw), a##r);
        DW_EACH (DW_TAP)
#undef DW_TAP
      }
  }
  DW_EACH (DW_OUT)
}

DW_INL void
DW_NAME (sums_any) (const IrDwGeom *g, const float *in, gsize in_plane, const float *w,
    gint64 iy0, gint64 rows, gint64 x, const DW_MASK *m0, const DW_MASK *m1, DW_VEC *acc,
    const gint64 S, const gboolean MASKED)
{
  const gint64 dh = g->dh, dw = g->dw, iw = g->w, sh = g->sh, KH = g->kh, KW = g->kw;
  DW_EACH (DW_DECL)
  for (gint64 ci = 0; ci < g->cin_g; ci++) {
    const float *row = in + ci * in_plane + iy0 * iw + x * S - g->pl;
    const float *wc = w + ci * KH * KW;
    for (gint64 kh = 0; kh < KH; kh++) {
      const float *p = row + kh * dh * iw;
      gint64 y = iy0 + kh * dh;
#define DW_ROW(r) \
      gboolean ok##r = rows > r && y + r * sh >= 0 && y + r * sh < g->h;
      DW_EACH (DW_ROW)
#undef DW_ROW
      for (gint64 kw = 0; kw < KW; kw++) {
        DW_VEC wv = DW_SET1 (wc[kh * KW + kw]);
#define DW_TAP(r) \
        if (ok##r) \
          a##r = DW_FMA (wv, DW_LD (p + r * sh * iw + kw * dw, kw), a##r);
        DW_EACH (DW_TAP)
#undef DW_TAP
      }
    }
  }
  DW_EACH (DW_OUT)
}

#undef DW_LD
#undef DW_DECL
#undef DW_OUT

/* + bias, then ReLU (max (NaN, 0) = 0, as x > 0 ? x : 0), stored. */
DW_INL void
DW_NAME (put) (const IrDwGeom *g, DW_VEC v, const float *bias, gboolean relu, float *o,
    gint64 x)
{
  if (bias)
    v = DW_ADD (v, DW_SET1 (*bias));
  if (relu)
    v = DW_MAX (v, DW_ZERO ());
  if (x + DW_W <= g->ow)
    DW_STORE (o + x, v);
  else
    DW_STORE_PART (o + x, v, g->ow - x);
}

/* One vector column (from x) of rows [y0, y1), DW_R rows at a time down
 * the column; MASKED with the column's masks m0, m1. SQ: the square-stride
 * copies (sums_sq with KH, KW, S), else sums_any. */
DW_INL void
DW_NAME (column) (const IrDwGeom *g, const float *in, gsize in_plane, const float *w,
    const float *bias, gboolean relu, float *out, gint64 y0, gint64 y1, gint64 x,
    const DW_MASK *m0, const DW_MASK *m1, const gboolean SQ, const gint64 KH, const gint64 KW,
    const gint64 S, const gboolean MASKED)
{
  gboolean cin1 = g->cin_g == 1;
  for (gint64 y = y0; y < y1; y += DW_R) {
    gint64 rows = MIN (DW_R, y1 - y), iy0 = y * g->sh - g->pt;
    /* a block whose taps all read inside the image: most of them */
    gboolean all = rows == DW_R && iy0 >= 0 &&
        iy0 + (DW_R - 1) * g->sh + (g->kh - 1) * g->dh < g->h;
    DW_VEC acc[DW_R];
#define DW_SQ(ALL, CIN1) \
    DW_NAME (sums_sq) (g, in, in_plane, w, iy0, rows, x, m0, m1, acc, KH, KW, S, ALL, \
        MASKED, CIN1)
    if (SQ && cin1 && all)
      DW_SQ (TRUE, TRUE);
    else if (SQ && cin1)
      DW_SQ (FALSE, TRUE);
    else if (SQ)
      DW_SQ (FALSE, FALSE);
    else
      DW_NAME (sums_any) (g, in, in_plane, w, iy0, rows, x, m0, m1, acc, S, MASKED);
#undef DW_SQ
    float *o = out + y * g->ow;
#define DW_PUT(r) \
    if (r < rows) \
      DW_NAME (put) (g, acc[r], bias, relu, o + r * g->ow, x);
    DW_EACH (DW_PUT)
#undef DW_PUT
  }
}

/* Rows [y0, y1) of the plane, one vector column at a time: plain loads
 * inside [x_lo, x_hi), masked ones at the rows' ends, their masks made
 * once per column. */
DW_INL void
DW_NAME (rows) (const IrDwGeom *g, const float *in, gsize in_plane, const float *w,
    const float *bias, gboolean relu, float *out, gint64 y0, gint64 y1, const gboolean SQ,
    const gint64 KH, const gint64 KW, const gint64 S)
{
  const gint64 W = DW_W;
  for (gint64 x = 0; x < g->ow; x += W) {
    if (x >= g->x_lo && x + W <= g->x_hi) {
      DW_NAME (column) (g, in, in_plane, w, bias, relu, out, y0, y1, x, NULL, NULL, SQ, KH, KW,
          S, FALSE);
      continue;
    }
    /* per tap column, the lanes inside the row (raw element j of the load
     * at column c0 is column c0 + j) */
    DW_MASK m0[8], m1[8];
    for (gint64 kw = 0; kw < (SQ ? KW : g->kw); kw++) {
      gint64 c0 = x * S + kw * g->dw - g->pl;
      m0[kw] = DW_RANGE (-c0, g->w - c0);
      m1[kw] = DW_RANGE (-c0 - W, g->w - c0 - W);
    }
    DW_NAME (column) (g, in, in_plane, w, bias, relu, out, y0, y1, x, m0, m1, SQ, KH, KW, S,
        TRUE);
  }
}

#define DW_ROWS_FN(NAME, SQ, KH, KW, S) \
  static void __attribute__ ((target (DW_TARGET))) \
  NAME (const IrDwGeom *g, const float *in, gsize in_plane, const float *w, \
      const float *bias, gboolean relu, float *out, gint64 y0, gint64 y1) \
  { \
    DW_NAME (rows) (g, in, in_plane, w, bias, relu, out, y0, y1, SQ, KH, KW, S); \
  }

/* Square strides, no dilation: 3×3 and 5×5 unrolled. */
DW_ROWS_FN (DW_NAME (k3s1), TRUE, 3, 3, 1)
DW_ROWS_FN (DW_NAME (k3s2), TRUE, 3, 3, 2)
DW_ROWS_FN (DW_NAME (k5s1), TRUE, 5, 5, 1)
DW_ROWS_FN (DW_NAME (k5s2), TRUE, 5, 5, 2)
/* Anything else with column stride 1 or 2. */
DW_ROWS_FN (DW_NAME (anys1), FALSE, 0, 0, 1)
DW_ROWS_FN (DW_NAME (anys2), FALSE, 0, 0, 2)

/* The copy for @g, or NULL (column strides above 2, kernels more than 8
 * wide: plain C). */
static IrDwRows
DW_NAME (pick) (const IrDwGeom *g)
{
  if (g->sw > 2 || g->kw > 8)
    return NULL;
  gboolean square = g->sh == g->sw && g->dh == 1 && g->dw == 1;
  if (square && g->kh == 3 && g->kw == 3)
    return g->sw == 1 ? DW_NAME (k3s1) : DW_NAME (k3s2);
  if (square && g->kh == 5 && g->kw == 5)
    return g->sw == 1 ? DW_NAME (k5s1) : DW_NAME (k5s2);
  return g->sw == 1 ? DW_NAME (anys1) : DW_NAME (anys2);
}

#undef DW_INL
#undef DW_R
#undef DW_EACH
#undef DW_ROWS_FN
