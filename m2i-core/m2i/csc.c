/* csc.c — NV12/I420 -> RGB/BGR colour conversion kernels (plain C, AVX2,
 * AVX-512, AVX-512 VBMI).
 *
 * The integer kernels compute exactly floor((1164(Y-16) + k·chroma + 500)/1000),
 * clamped, as docs/m2i-engine.md derives: chroma terms are precomputed per
 * chroma sample as a quotient and remainder of 1000, so the per-pixel work
 * fits 16-bit lanes. The AVX2 version keeps its terms arrays in "block order"
 * (per 32 pixels: 0-7,16-23,8-15,24-31) so that byte unpacking of Y and the
 * final packus need no lane-crossing shuffles. The float pair kernels (two-tap
 * resizes of the SIMD levels) get the same integers from an fp32 evaluation
 * whose error provably stays below the distance to the next integer (see
 * FP_CY), and fuse the horizontal and vertical passes of the resize.
 */
#include "engine-private.h"

#include <base/m2i-align.h>
#include <base/m2i-cpu.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define HAVE_X86 1
#endif

gsize
m2i_csc_terms_stride (const CscKernels *k, gint n)
{
  return m2i_align_up (n, k->block);
}

/* ---- plain C ------------------------------------------------------------ */

static void
prep_nv12_c (const guint8 *uv, gint n_chroma, gint16 *t, gsize ts)
{
  for (gint c = 0; c < n_chroma; c++) {
    gint16 k[CSC_N_TERMS];
    m2i_csc_chroma_terms (uv[2 * c] - 128, uv[2 * c + 1] - 128, k);
    for (int j = 0; j < CSC_N_TERMS; j++)
      t[j * ts + 2 * c] = t[j * ts + 2 * c + 1] = k[j];
  }
}

static void
prep_i420_c (const guint8 *u, const guint8 *v, gint n_chroma, gint16 *t, gsize ts)
{
  for (gint c = 0; c < n_chroma; c++) {
    gint16 k[CSC_N_TERMS];
    m2i_csc_chroma_terms (u[c] - 128, v[c] - 128, k);
    for (int j = 0; j < CSC_N_TERMS; j++)
      t[j * ts + 2 * c] = t[j * ts + 2 * c + 1] = k[j];
  }
}

static void
prep_444_c (const guint8 *u, const guint8 *v, gint n, gint16 *t, gsize ts)
{
  for (gint i = 0; i < n; i++) {
    gint16 k[CSC_N_TERMS];
    m2i_csc_chroma_terms (u[i] - 128, v[i] - 128, k);
    for (int j = 0; j < CSC_N_TERMS; j++)
      t[j * ts + i] = k[j];
  }
}

/* Gathers of listed columns: cy[k] = y[xs[k]] (skipped if @y is NULL)
 * and, if @c1 is set, the chroma of column xs[k] from an NV12 UV row (@c2
 * NULL) or I420 U, V rows. @wy and @wc are the luma and chroma row lengths
 * in bytes: the SIMD versions read 4 bytes at min(offset, w - 4) and shift,
 * so they never read outside the rows. */
static void
gather_c (const guint8 *y, gint wy, const guint8 *c1, const guint8 *c2, gint wc,
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

static void
gather_pairs_c (const guint8 *y, gint wy, const guint8 *c1, const guint8 *c2, gint wc,
    const gint32 *xs, gint n, guint8 *cy, guint8 *cu, guint8 *cv)
{
  gather_pairs_from (y, c1, c2, xs, 0, n, n, cy, cu, cv);
}

/* The horizontal resize pass over expanded columns (fused.c): @p holds the
 * three channel planes of K = T * n values, each plane tap block after tap
 * block (value of tap t for output i at [t * n + i]); @wt the weights in the
 * same order. dst[c * n + i] = sum over t of wt[t*n + i] * p_c[t*n + i],
 * evaluated as the resize contract says: fp32, from 0.0f, taps in table
 * order, no FMA (the build uses -ffp-contract=off). Written once, compiled
 * for plain x86-64 and for AVX2 (vectorized over i); both give the same bits. */
static inline __attribute__((always_inline)) void
hpass_expanded_body (const float *wt, gint T, gint n, const guint8 *p, gint K, float *dst)
{
  for (int c = 0; c < 3; c++) {
    const guint8 *restrict v = p + (gsize) c * K;
    float *restrict d = dst + (gsize) c * n;
    if (T == 2) {
      const float *restrict w0 = wt, *restrict w1 = wt + n;
      const guint8 *restrict v1 = v + n;
      for (gint i = 0; i < n; i++)
        d[i] = (0.0f + w0[i] * (float) v[i]) + w1[i] * (float) v1[i];
      continue;
    }
    for (gint i = 0; i < n; i++)
      d[i] = 0.0f + wt[i] * (float) v[i];
    for (gint t = 1; t < T; t++) {
      const float *restrict w = wt + (gsize) t * n;
      const guint8 *restrict vt = v + (gsize) t * n;
      for (gint i = 0; i < n; i++)
        d[i] = d[i] + w[i] * (float) vt[i];
    }
  }
}

static void
hpass_expanded_c (const float *wt, gint T, gint n, const guint8 *p, gint K, float *dst)
{
  hpass_expanded_body (wt, T, n, p, K, dst);
}

/* Finishing of an fp16 chain with norm, in one pass: the resize sum rounded
 * to fp16 (the data type), then norm in fp32 on that value (the fast
 * formula, same operation order everywhere), rounded to fp16. */
static void
finish_f16_norm_c (const float *v, const float *sub, const float *mul, const float *add,
    gint n, m2i_f16 *out)
{
  for (gint i = 0; i < n; i++) {
    float x = m2i_f16_to_f32 (m2i_f32_to_f16 (v[i]));
    out[i] = m2i_f32_to_f16 ((x - sub[i]) * mul[i] + add[i]);
  }
}

/* op-by-op norm of fp16 data (the fast formula) */
static void
norm_f16_c (const m2i_f16 *in, m2i_f16 *out, gint n, float sub, float mul, float add)
{
  for (gint i = 0; i < n; i++)
    out[i] = m2i_f32_to_f16 ((m2i_f16_to_f32 (in[i]) - sub) * mul + add);
}

static m2i_f16 u8_f16_table[256];

static void
init_tables (void)
{
  for (int i = 0; i < 256; i++)
    u8_f16_table[i] = m2i_f32_to_f16 ((float) i);
}

static void
u8_to_f16_c (const guint8 *src, m2i_f16 *dst, gint n)
{
  for (gint i = 0; i < n; i++)
    dst[i] = u8_f16_table[src[i]];
}

static inline void
store_fp (const CscOutSpec *spec, guint8 *const dst[3], int c, gint i, guint8 x)
{
  float f = (float) x;
  if (spec->norm)
    f = (f - spec->sub[c]) * spec->mul[c] + spec->add[c];
  if (spec->mode == CSC_OUT_PL_F16)
    ((m2i_f16 *) dst[c])[i] = spec->norm ? m2i_f32_to_f16 (f) : u8_f16_table[x];
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
    if (c2)
      prep_i420_c (c1 + i / 2, c2 + i / 2, m / 2, t, CHUNK);
    else
      prep_nv12_c (c1 + i, m / 2, t, CHUNK);
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

static const CscKernels kernels_c = {
  "c", 1, prep_444_c, row_c, pair_c, u8_to_f16_c, gather_c, gather_pairs_c,
  hpass_expanded_c, finish_f16_norm_c, NULL, FALSE, NULL, norm_f16_c,
};

/* ---- float pair path: tables and the scalar fill ---------------------------- */

/* The csc of the float pair path, in fp32 (docs/m2i-engine.md):
 *   p = Y·1.164 + K,  K_R = V·1.596 + c_R,  K_G = (V·-0.813 + c_G) + U·-0.391,
 *   K_B = U·2.018 + c_B,  out = clamp (floor (p), 0, 255)
 * on raw bytes Y, U, V, where c_* fold the offsets, the +500 and half of the
 * next unit: the exact value (1164(Y-16) + k·(C-128) + 500.5) / 1000 is at
 * least 0.0005 away from an integer, and the fp32 evaluation (with or
 * without FMA) stays within 0.00013 of it, so floor() gives exactly the
 * integer formula — checked on all 256³ triples by test-m2i-csc. */
#define FP_CY 1.164f
#define FP_CVR 1.596f
#define FP_CVG (-0.813f)
#define FP_CUG (-0.391f)
#define FP_CUB 2.018f
#define FP_KR ((float) ((-18624.0 - 204288.0 + 500.5) / 1000.0))
#define FP_KG ((float) ((-18624.0 + 104064.0 + 50048.0 + 500.5) / 1000.0))
#define FP_KB ((float) ((-18624.0 - 258304.0 + 500.5) / 1000.0))

void
m2i_fpair_table_free (FPairTable *t)
{
  if (!t)
    return;
  g_free (t->xs);
  g_free (t->w0);
  g_free (t->w1);
  g_free (t->load);
  g_free (t->ybase);
  g_free (t->cbase);
  g_free (t->yidx);
  g_free (t->cidx);
  g_free (t);
}

/* Luma and chroma byte offsets of tap column x (and x + 1): NV12 U at
 * x & ~1 (V one byte further), I420 U and V at x >> 1. */
static inline gint
fpair_coff (gint x, gboolean nv12)
{
  return nv12 ? (x & ~1) : x >> 1;
}

/* Permute windows of block b (outputs 8b .. 8b+7): 128 bytes of the luma
 * row; chroma: 128 bytes of the NV12 UV row, or 64 bytes of the I420 U row
 * and the same 64 of the V row (so one permute fetches U and V there too).
 * FALSE if the block's bytes do not fit. */
static gboolean
fpair_block_windows (FPairTable *t, gint b)
{
  const gint32 *x = t->xs + 8 * b;
  gint ylo = G_MAXINT, yhi = 0, clo = G_MAXINT, chi = 0;
  for (int j = 0; j < 8; j++) {
    ylo = MIN (ylo, x[j]);
    yhi = MAX (yhi, x[j] + 1);
    clo = MIN (clo, fpair_coff (x[j], t->nv12));
    chi = MAX (chi, fpair_coff (x[j] + 1, t->nv12) + (t->nv12 ? 1 : 0));
  }
  gint cwin = t->nv12 ? 128 : 64;
  if (t->wy < 128 || t->wc < cwin || yhi - ylo >= 128 || chi - clo >= cwin)
    return FALSE;
  gint yb = MIN (ylo, t->wy - 128), cb = MIN (clo, t->wc - cwin);
  t->ybase[b] = yb;
  t->cbase[b] = cb;
  /* block b fills dword lanes 8 (b % 2) .. +7 of its 16-output group: luma
   * bytes Y(x), Y(x + 1); chroma U(x), V(x), U(x + 1), V(x + 1) (V: the byte
   * after U in NV12, the second table for I420) */
  guint8 *yi = t->yidx + 64 * b, *ci = t->cidx + 64 * b;
  memset (yi, 0, 64);
  memset (ci, 0, 64);
  for (int j = 0; j < 8; j++) {
    gint k = 8 * (b % 2) + j;
    yi[4 * k] = (guint8) (x[j] - yb);
    yi[4 * k + 1] = (guint8) (x[j] + 1 - yb);
    for (int tap = 0; tap < 2; tap++) {
      gint co = fpair_coff (x[j] + tap, t->nv12) - cb;
      ci[4 * k + 2 * tap] = (guint8) co;
      ci[4 * k + 2 * tap + 1] = (guint8) (t->nv12 ? co + 1 : 64 + co);
    }
  }
  return TRUE;
}

FPairTable *
m2i_fpair_table_new (const gint32 *xs, const float *w0, const float *w1, gint n, gint wy,
    gboolean nv12, gboolean bgr, gboolean vbmi)
{
  FPairTable *t = g_new0 (FPairTable, 1);
  gint np = n + 16, nb16 = (n + 15) / 16;
  t->n = n;
  t->nv12 = nv12;
  t->wy = wy;
  t->wc = nv12 ? wy : wy / 2;
  t->plane_of[0] = bgr ? 2 : 0;
  t->plane_of[1] = 1;
  t->plane_of[2] = bgr ? 0 : 2;
  t->xs = g_new (gint32, np);
  t->w0 = g_new0 (float, np);
  t->w1 = g_new0 (float, np);
  for (gint i = 0; i < np; i++)
    t->xs[i] = xs[MIN (i, n - 1)];
  memcpy (t->w0, w0, n * sizeof (float));
  memcpy (t->w1, w1, n * sizeof (float));
  t->load = g_new0 (guint8, nb16);
  if (vbmi) {
    gint nb8 = 2 * nb16;
    t->ybase = g_new0 (gint32, nb8);
    t->cbase = g_new0 (gint32, nb8);
    t->yidx = g_new0 (guint8, (gsize) nb8 * 64);
    t->cidx = g_new0 (guint8, (gsize) nb8 * 64);
  }
  for (gint b = 0; b < nb16; b++) {
    if (16 * (b + 1) > n)
      continue;                        /* the tail goes through the scalar fill */
    if (vbmi && fpair_block_windows (t, 2 * b) && fpair_block_windows (t, 2 * b + 1)) {
      t->load[b] = FP_LOAD_PERMUTE;
      continue;
    }
    /* 4-byte gathers at x (luma) and at the chroma offset of x */
    gboolean ok = TRUE;
    for (gint i = 16 * b; i < 16 * (b + 1); i++)
      ok = ok && xs[i] + 4 <= t->wy && fpair_coff (xs[i], nv12) + 4 <= t->wc;
    t->load[b] = ok ? FP_LOAD_GATHER : FP_LOAD_FILL;
  }
  return t;
}

/* Source bytes of outputs i .. i+15 as floats, for blocks the SIMD loads
 * cannot take (the tail, narrow rows): luma taps of rows @y0 (ya0, ya1) and
 * @y1 (yb0, yb1), chroma taps u0, u1, v0, v1. Lanes past t->n repeat the
 * last column (xs is padded), so every read stays inside the rows. */
typedef struct {
  float ya0[16], ya1[16], yb0[16], yb1[16], u0[16], u1[16], v0[16], v1[16];
} FPairLanes;

static void
fpair_fill (const FPairTable *t, gint i, const guint8 *y0, const guint8 *y1,
    const guint8 *c1, const guint8 *c2, FPairLanes *l)
{
  for (int k = 0; k < 16; k++) {
    gint x = t->xs[i + k];
    l->ya0[k] = y0[x];
    l->ya1[k] = y0[x + 1];
    l->yb0[k] = y1 ? y1[x] : 0;
    l->yb1[k] = y1 ? y1[x + 1] : 0;
    gint o0 = fpair_coff (x, t->nv12), o1 = fpair_coff (x + 1, t->nv12);
    l->u0[k] = c1[o0];
    l->u1[k] = c1[o1];
    l->v0[k] = t->nv12 ? c1[o0 + 1] : c2[o0];
    l->v1[k] = t->nv12 ? c1[o1 + 1] : c2[o1];
  }
}

/* Output planes of R, G, B for rows h0 (d[0]) and h1 (d[1]). */
static inline void
fp_planes (const FPairTable *t, float *h0, float *h1, float *d[2][3])
{
  for (int c = 0; c < 3; c++) {
    d[0][c] = h0 + (gsize) t->plane_of[c] * t->n;
    d[1][c] = h1 ? h1 + (gsize) t->plane_of[c] * t->n : NULL;
  }
}

/* ---- AVX2 --------------------------------------------------------------- */

/* Where one output block of @blk pixels starting at pixel @i goes: straight
 * into @dst, or for the last, partial block (@m < @blk) into @tmp
 * (3 · 4 · blk bytes), copied out by emit_tail(). */
static inline guint
out_bps (const CscOutSpec *spec)
{
  return spec->mode == CSC_OUT_PL_F16 ? 2 : spec->mode == CSC_OUT_PL_F32 ? 4 : 1;
}

static inline void
emit_targets (guint8 *const dst[3], gint i, gint m, gint blk, const CscOutSpec *spec,
    guint8 *tmp, guint8 *o[3])
{
  guint bps = out_bps (spec);
  for (int c = 0; c < 3; c++)
    o[c] = m < blk ? tmp + (gsize) c * blk * 4
        : spec->mode == CSC_OUT_IL_U8 ? (c ? NULL : dst[0] + 3 * i) : dst[c] + bps * i;
}

static inline void
emit_tail (guint8 *const dst[3], gint i, gint m, gint blk, const CscOutSpec *spec,
    guint8 *const o[3])
{
  guint bps = out_bps (spec);
  if (m == blk)
    return;
  if (spec->mode == CSC_OUT_IL_U8)
    memcpy (dst[0] + 3 * i, o[0], (gsize) m * 3);
  else
    for (int c = 0; c < 3; c++)
      memcpy (dst[c] + bps * i, o[c], (gsize) m * bps);
}


/* Source pointers of one block of a pair kernel. For the last, partial
 * block (m < blk pixels) they are redirected to padded copies in @tmp
 * (4 · blk bytes: Y padded with 16, chroma with 128), so full-width loads
 * stay inside the caller's rows. */
typedef struct {
  const guint8 *y0, *y1, *c, *v;
} PairSrc;

static inline void
pair_src (PairSrc *s, const guint8 *y0, const guint8 *y1, const guint8 *c1,
    const guint8 *c2, gint i, gint m, gint blk, guint8 *tmp)
{
  s->y0 = y0 + i;
  s->y1 = y1 ? y1 + i : NULL;
  s->c = c2 ? c1 + i / 2 : c1 + i;
  s->v = c2 ? c2 + i / 2 : NULL;
  if (m == blk)
    return;
  guint8 *t0 = tmp, *t1 = tmp + blk, *tc = tmp + 2 * blk, *tv = tmp + 3 * blk;
  memset (t0, 16, (gsize) blk);
  memcpy (t0, s->y0, (gsize) m);
  s->y0 = t0;
  if (s->y1) {
    memset (t1, 16, (gsize) blk);
    memcpy (t1, s->y1, (gsize) m);
    s->y1 = t1;
  }
  memset (tc, 128, (gsize) blk);
  memcpy (tc, s->c, c2 ? (gsize) m / 2 : (gsize) m);
  s->c = tc;
  if (s->v) {
    memset (tv, 128, (gsize) blk);
    memcpy (tv, s->v, (gsize) m / 2);
    s->v = tv;
  }
}


#ifdef HAVE_X86
#define AVX2 __attribute__((target("avx2,f16c,fma")))
#define AVX2I __attribute__((target("avx2,f16c,fma"), always_inline))
#define BLK 32

static guint8 il_masks[3][3][16];   /* [output vector][channel][byte] */

static void
init_il_masks (void)
{
  for (int k = 0; k < 3; k++)
    for (int c = 0; c < 3; c++)
      for (int j = 0; j < 16; j++) {
        int J = 16 * k + j;
        il_masks[k][c][j] = (J % 3 == c) ? (guint8) (J / 3) : 0x80;
      }
}

static AVX2I inline __m256i
div1000 (__m256i z)
{
  return _mm256_srli_epi16 (_mm256_mulhi_epu16 (z, _mm256_set1_epi16 (-31981 /* 33555 */)), 9);
}

/* Terms of 16 chroma samples (u', v' in 16-bit lanes). */
static AVX2I inline void
terms16 (__m256i u, __m256i v, __m256i out[CSC_N_TERMS])
{
  const __m256i one = _mm256_set1_epi16 (1), k1000 = _mm256_set1_epi16 (1000);
  __m256i vodd = _mm256_and_si256 (v, one), uodd = _mm256_and_si256 (u, one);
  __m256i vh = _mm256_srai_epi16 (v, 1), uh = _mm256_srai_epi16 (u, 1);
  /* R */
  __m256i s = _mm256_add_epi16 (_mm256_add_epi16 (_mm256_mullo_epi16 (vodd, _mm256_set1_epi16 (500)),
          _mm256_mullo_epi16 (v, _mm256_set1_epi16 (96))), _mm256_set1_epi16 (13000));
  __m256i q = div1000 (s);
  out[CSC_QR] = _mm256_add_epi16 (_mm256_add_epi16 (v, vh), _mm256_sub_epi16 (q, _mm256_set1_epi16 (16)));
  out[CSC_RR] = _mm256_add_epi16 (_mm256_sub_epi16 (s, _mm256_mullo_epi16 (q, k1000)), _mm256_set1_epi16 (3500));
  /* G */
  __m256i sv = _mm256_add_epi16 (_mm256_mullo_epi16 (v, _mm256_set1_epi16 (187)), _mm256_set1_epi16 (24000));
  __m256i qv = div1000 (sv);
  __m256i su = _mm256_add_epi16 (_mm256_sub_epi16 (_mm256_mullo_epi16 (u, _mm256_set1_epi16 (109)),
          _mm256_mullo_epi16 (uodd, _mm256_set1_epi16 (500))), _mm256_set1_epi16 (15000));
  __m256i qu = div1000 (su);
  out[CSC_QG] = _mm256_sub_epi16 (_mm256_add_epi16 (qv, qu),
      _mm256_add_epi16 (_mm256_add_epi16 (v, uh), _mm256_set1_epi16 (42)));
  out[CSC_RG] = _mm256_add_epi16 (_mm256_add_epi16 (_mm256_sub_epi16 (sv, _mm256_mullo_epi16 (qv, k1000)),
          _mm256_sub_epi16 (su, _mm256_mullo_epi16 (qu, k1000))), _mm256_set1_epi16 (3500));
  /* B */
  __m256i sb = _mm256_add_epi16 (_mm256_mullo_epi16 (u, _mm256_set1_epi16 (18)), _mm256_set1_epi16 (3000));
  __m256i qb = div1000 (sb);
  out[CSC_QB] = _mm256_add_epi16 (_mm256_add_epi16 (u, u), _mm256_sub_epi16 (qb, _mm256_set1_epi16 (6)));
  out[CSC_RB] = _mm256_add_epi16 (_mm256_sub_epi16 (sb, _mm256_mullo_epi16 (qb, k1000)), _mm256_set1_epi16 (3500));
}

static AVX2 void
prep_444_avx2 (const guint8 *pu, const guint8 *pv, gint n, gint16 *t, gsize ts)
{
  const __m256i k128 = _mm256_set1_epi16 (128), zero = _mm256_setzero_si256 ();
  for (gint i = 0; i < n; i += BLK) {
    __m256i a, b;
    if (i + BLK <= n) {
      a = _mm256_loadu_si256 ((const __m256i *) (pu + i));
      b = _mm256_loadu_si256 ((const __m256i *) (pv + i));
    } else {
      guint8 tu[BLK] = { 0 }, tv[BLK] = { 0 };
      memcpy (tu, pu + i, (gsize) (n - i));
      memcpy (tv, pv + i, (gsize) (n - i));
      a = _mm256_loadu_si256 ((const __m256i *) tu);
      b = _mm256_loadu_si256 ((const __m256i *) tv);
    }
    __m256i k[CSC_N_TERMS];
    terms16 (_mm256_sub_epi16 (_mm256_unpacklo_epi8 (a, zero), k128),
        _mm256_sub_epi16 (_mm256_unpacklo_epi8 (b, zero), k128), k);
    for (int j = 0; j < CSC_N_TERMS; j++)
      _mm256_storeu_si256 ((__m256i *) (t + j * ts + i), k[j]);
    terms16 (_mm256_sub_epi16 (_mm256_unpackhi_epi8 (a, zero), k128),
        _mm256_sub_epi16 (_mm256_unpackhi_epi8 (b, zero), k128), k);
    for (int j = 0; j < CSC_N_TERMS; j++)
      _mm256_storeu_si256 ((__m256i *) (t + j * ts + i + 16), k[j]);
  }
}

static AVX2I inline __m256i
channel16 (__m256i yy, __m256i t164, __m256i q, __m256i r)
{
  return _mm256_add_epi16 (_mm256_add_epi16 (yy, q), div1000 (_mm256_add_epi16 (t164, r)));
}

/* 32 pixels' R, G, B bytes in natural order, from the terms of pixels
 * 0-7,16-23 (ka) and 8-15,24-31 (kb). */
static AVX2I inline void
block32_regs (const guint8 *y, const __m256i ka[CSC_N_TERMS], const __m256i kb[CSC_N_TERMS],
    __m256i *r8, __m256i *g8, __m256i *b8)
{
  const __m256i zero = _mm256_setzero_si256 (), k16 = _mm256_set1_epi16 (16),
      k164 = _mm256_set1_epi16 (164);
  __m256i yv = _mm256_loadu_si256 ((const __m256i *) y);
  __m256i ya = _mm256_sub_epi16 (_mm256_unpacklo_epi8 (yv, zero), k16);
  __m256i yb = _mm256_sub_epi16 (_mm256_unpackhi_epi8 (yv, zero), k16);
  __m256i ta = _mm256_mullo_epi16 (ya, k164), tb = _mm256_mullo_epi16 (yb, k164);
  *r8 = _mm256_packus_epi16 (channel16 (ya, ta, ka[CSC_QR], ka[CSC_RR]),
      channel16 (yb, tb, kb[CSC_QR], kb[CSC_RR]));
  *g8 = _mm256_packus_epi16 (channel16 (ya, ta, ka[CSC_QG], ka[CSC_RG]),
      channel16 (yb, tb, kb[CSC_QG], kb[CSC_RG]));
  *b8 = _mm256_packus_epi16 (channel16 (ya, ta, ka[CSC_QB], ka[CSC_RB]),
      channel16 (yb, tb, kb[CSC_QB], kb[CSC_RB]));
}

static AVX2I inline void
block32 (const guint8 *y, const gint16 *t, gsize ts, __m256i *r8, __m256i *g8, __m256i *b8)
{
  __m256i ka[CSC_N_TERMS], kb[CSC_N_TERMS];
  for (int j = 0; j < CSC_N_TERMS; j++) {
    ka[j] = _mm256_loadu_si256 ((const __m256i *) (t + j * ts));
    kb[j] = _mm256_loadu_si256 ((const __m256i *) (t + j * ts + 16));
  }
  block32_regs (y, ka, kb, r8, g8, b8);
}

static AVX2I inline void
store_il (guint8 *o, __m256i c0, __m256i c1, __m256i c2)
{
  __m256i v[3];
  for (int k = 0; k < 3; k++) {
    __m256i m0 = _mm256_broadcastsi128_si256 (_mm_loadu_si128 ((const __m128i *) il_masks[k][0]));
    __m256i m1 = _mm256_broadcastsi128_si256 (_mm_loadu_si128 ((const __m128i *) il_masks[k][1]));
    __m256i m2 = _mm256_broadcastsi128_si256 (_mm_loadu_si128 ((const __m128i *) il_masks[k][2]));
    v[k] = _mm256_or_si256 (_mm256_or_si256 (_mm256_shuffle_epi8 (c0, m0),
            _mm256_shuffle_epi8 (c1, m1)), _mm256_shuffle_epi8 (c2, m2));
  }
  _mm256_storeu_si256 ((__m256i *) o, _mm256_permute2x128_si256 (v[0], v[1], 0x20));
  _mm256_storeu_si256 ((__m256i *) (o + 32), _mm256_permute2x128_si256 (v[2], v[0], 0x30));
  _mm256_storeu_si256 ((__m256i *) (o + 64), _mm256_permute2x128_si256 (v[1], v[2], 0x31));
}

static AVX2I inline void
store_fp8 (const CscOutSpec *spec, int c, guint8 *dst, gint i, __m128i bytes8)
{
  __m256 f = _mm256_cvtepi32_ps (_mm256_cvtepu8_epi32 (bytes8));
  if (spec->norm)
    f = _mm256_add_ps (_mm256_mul_ps (_mm256_sub_ps (f, _mm256_set1_ps (spec->sub[c])),
            _mm256_set1_ps (spec->mul[c])), _mm256_set1_ps (spec->add[c]));
  if (spec->mode == CSC_OUT_PL_F16)
    _mm_storeu_si128 ((__m128i *) (dst + 2 * i), _mm256_cvtps_ph (f, _MM_FROUND_TO_NEAREST_INT));
  else
    _mm256_storeu_ps ((float *) dst + i, f);
}

static AVX2I inline void
store_fp32px (const CscOutSpec *spec, int c, guint8 *dst, __m256i x)
{
  __m128i lo = _mm256_castsi256_si128 (x), hi = _mm256_extracti128_si256 (x, 1);
  store_fp8 (spec, c, dst, 0, lo);
  store_fp8 (spec, c, dst, 8, _mm_srli_si128 (lo, 8));
  store_fp8 (spec, c, dst, 16, hi);
  store_fp8 (spec, c, dst, 24, _mm_srli_si128 (hi, 8));
}

/* Stores one block of 32 pixels (m valid) at pixel offset i of @dst. */
static AVX2I inline void
emit32 (__m256i r8, __m256i g8, __m256i b8, guint8 *const dst[3], gint i, gint m,
    const CscOutSpec *spec)
{
  guint8 otmp[BLK * 3 * 4];
  guint8 *o[3];
  emit_targets (dst, i, m, BLK, spec, otmp, o);
  switch (spec->mode) {
    case CSC_OUT_IL_U8:
      if (spec->bgr)
        store_il (o[0], b8, g8, r8);
      else
        store_il (o[0], r8, g8, b8);
      break;
    case CSC_OUT_PL_U8:
      _mm256_storeu_si256 ((__m256i *) o[0], r8);
      _mm256_storeu_si256 ((__m256i *) o[1], g8);
      _mm256_storeu_si256 ((__m256i *) o[2], b8);
      break;
    default:
      store_fp32px (spec, 0, o[0], r8);
      store_fp32px (spec, 1, o[1], g8);
      store_fp32px (spec, 2, o[2], b8);
      break;
  }
  emit_tail (dst, i, m, BLK, spec, o);
}

static AVX2 void
row_avx2 (const guint8 *y, const gint16 *t, gsize ts, gint n, guint8 *const dst[3],
    const CscOutSpec *spec)
{
  for (gint i = 0; i < n; i += BLK) {
    gint m = MIN (BLK, n - i);
    const guint8 *yp = y + i;
    guint8 ytmp[BLK];
    if (m < BLK) {
      memset (ytmp, 16, sizeof ytmp);
      memcpy (ytmp, yp, (gsize) m);
      yp = ytmp;
    }
    __m256i r8, g8, b8;
    block32 (yp, t + i, ts, &r8, &g8, &b8);
    emit32 (r8, g8, b8, dst, i, m, spec);
  }
}

/* Two luma rows sharing one chroma row (y1 may be NULL): the chroma terms
 * stay in registers, computed once for both rows. c1 is the NV12 UV row
 * (c2 NULL) or the I420 U row (c2 the V row). */
static AVX2 void
pair_avx2 (const guint8 *y0, const guint8 *y1, const guint8 *c1, const guint8 *c2, gint n,
    guint8 *const d0[3], guint8 *const d1[3], const CscOutSpec *spec)
{
  const __m256i k128 = _mm256_set1_epi16 (128), lo = _mm256_set1_epi16 (0xff);
  for (gint i = 0; i < n; i += BLK) {
    gint m = MIN (BLK, n - i);
    guint8 tmp[4 * BLK];
    PairSrc ps;
    pair_src (&ps, y0, y1, c1, c2, i, m, BLK, tmp);
    const guint8 *p0 = ps.y0, *p1 = ps.y1, *pc = ps.c, *pv = ps.v;
    __m256i u, v;
    if (c2) {
      u = _mm256_cvtepu8_epi16 (_mm_loadu_si128 ((const __m128i *) pc));
      v = _mm256_cvtepu8_epi16 (_mm_loadu_si128 ((const __m128i *) pv));
    } else {
      __m256i x = _mm256_loadu_si256 ((const __m256i *) pc);
      u = _mm256_and_si256 (x, lo);
      v = _mm256_srli_epi16 (x, 8);
    }
    __m256i k[CSC_N_TERMS], ka[CSC_N_TERMS], kb[CSC_N_TERMS];
    terms16 (_mm256_sub_epi16 (u, k128), _mm256_sub_epi16 (v, k128), k);
    for (int j = 0; j < CSC_N_TERMS; j++) {
      ka[j] = _mm256_unpacklo_epi16 (k[j], k[j]);
      kb[j] = _mm256_unpackhi_epi16 (k[j], k[j]);
    }
    __m256i r8, g8, b8;
    block32_regs (p0, ka, kb, &r8, &g8, &b8);
    emit32 (r8, g8, b8, d0, i, m, spec);
    if (p1) {
      block32_regs (p1, ka, kb, &r8, &g8, &b8);
      emit32 (r8, g8, b8, d1, i, m, spec);
    }
  }
}

static AVX2 void
u8_to_f16_avx2 (const guint8 *src, m2i_f16 *dst, gint n)
{
  gint i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 f = _mm256_cvtepi32_ps (_mm256_cvtepu8_epi32 (_mm_loadl_epi64 ((const __m128i *) (src + i))));
    _mm_storeu_si128 ((__m128i *) (dst + i), _mm256_cvtps_ph (f, _MM_FROUND_TO_NEAREST_INT));
  }
  for (; i < n; i++)
    dst[i] = u8_f16_table[src[i]];
}

/* Bytes at clamped offsets: 8 dwords read at min(o, w - 4), shifted so the
 * wanted byte (and the next ones) come first. */
static AVX2I inline __m256i
gather8 (const guint8 *base, __m256i o, __m256i wmax)
{
  __m256i oc = _mm256_min_epi32 (o, wmax);
  __m256i g = _mm256_i32gather_epi32 ((const int *) base, oc, 1);
  return _mm256_srlv_epi32 (g, _mm256_slli_epi32 (_mm256_sub_epi32 (o, oc), 3));
}

/* Low byte of each dword -> 8 bytes at dst. */
static AVX2I inline void
store_b8 (guint8 *dst, __m256i g)
{
  const __m256i b0 = _mm256_setr_epi8 (0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
      0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
  g = _mm256_permutevar8x32_epi32 (_mm256_shuffle_epi8 (g, b0), _mm256_setr_epi32 (0, 4, 0, 0, 0, 0, 0, 0));
  _mm_storel_epi64 ((__m128i *) dst, _mm256_castsi256_si128 (g));
}

static AVX2 void
gather_avx2 (const guint8 *y, gint wy, const guint8 *c1, const guint8 *c2, gint wc,
    const gint32 *xs, gint K, guint8 *restrict cy, guint8 *restrict cu, guint8 *restrict cv)
{
  gint k = 0;
  if (wy >= 4 && wc >= 4) {
    const __m256i ymax = _mm256_set1_epi32 (wy - 4), cmax = _mm256_set1_epi32 (wc - 4);
    for (; k + 8 <= K; k += 8) {
      __m256i x = _mm256_loadu_si256 ((const __m256i *) (xs + k));
      if (y)
        store_b8 (cy + k, gather8 (y, x, ymax));
      if (c1 && !c2) {
        __m256i g = gather8 (c1, _mm256_and_si256 (x, _mm256_set1_epi32 (~1)), cmax);
        store_b8 (cu + k, g);
        store_b8 (cv + k, _mm256_srli_epi32 (g, 8));
      } else if (c1) {
        __m256i h = _mm256_srli_epi32 (x, 1);
        store_b8 (cu + k, gather8 (c1, h, cmax));
        store_b8 (cv + k, gather8 (c2, h, cmax));
      }
    }
  }
  gather_c (y, wy, c1, c2, wc, xs + k, K - k, cy + k, cu + k, cv + k);
}

static AVX2 void
hpass_expanded_avx2 (const float *w, gint T, gint n, const guint8 *p, gint K, float *dst)
{
  hpass_expanded_body (w, T, n, p, K, dst);
}

static AVX2 void
finish_f16_norm_avx2 (const float *v, const float *sub, const float *mul, const float *add,
    gint n, m2i_f16 *out)
{
  gint i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 x = _mm256_cvtph_ps (_mm256_cvtps_ph (_mm256_loadu_ps (v + i), _MM_FROUND_TO_NEAREST_INT));
    __m256 y = _mm256_add_ps (_mm256_mul_ps (_mm256_sub_ps (x, _mm256_loadu_ps (sub + i)),
            _mm256_loadu_ps (mul + i)), _mm256_loadu_ps (add + i));
    _mm_storeu_si128 ((__m128i *) (out + i), _mm256_cvtps_ph (y, _MM_FROUND_TO_NEAREST_INT));
  }
  finish_f16_norm_c (v + i, sub + i, mul + i, add + i, n - i, out + i);
}

/* Float pair path, AVX2: 8 outputs per step, without FMA (mul, then add:
 * exact too, see FP_CY). Lanes: one register per tap of 8 outputs. */
typedef struct {
  __m256 ya0, ya1, yb0, yb1, u0, u1, v0, v1;
} FPair8;

static AVX2I inline void
fp_terms8 (__m256 u, __m256 v, __m256 k[3])
{
  k[0] = _mm256_add_ps (_mm256_mul_ps (v, _mm256_set1_ps (FP_CVR)), _mm256_set1_ps (FP_KR));
  k[1] = _mm256_add_ps (_mm256_add_ps (_mm256_mul_ps (v, _mm256_set1_ps (FP_CVG)),
          _mm256_set1_ps (FP_KG)), _mm256_mul_ps (u, _mm256_set1_ps (FP_CUG)));
  k[2] = _mm256_add_ps (_mm256_mul_ps (u, _mm256_set1_ps (FP_CUB)), _mm256_set1_ps (FP_KB));
}

static AVX2I inline __m256
fp_csc8 (__m256 y, __m256 k)
{
  __m256 p = _mm256_floor_ps (_mm256_add_ps (_mm256_mul_ps (y, _mm256_set1_ps (FP_CY)), k));
  return _mm256_min_ps (_mm256_max_ps (p, _mm256_setzero_ps ()), _mm256_set1_ps (255.0f));
}

/* Three planes of 8 sums (m valid) at output i from lanes l. */
static AVX2I inline void
fp_block8 (const FPairTable *t, gint i, gint m, const FPair8 *l, float *const d[2][3])
{
  __m256 k0[3], k1[3];
  fp_terms8 (l->u0, l->v0, k0);
  fp_terms8 (l->u1, l->v1, k1);
  __m256 w0 = _mm256_loadu_ps (t->w0 + i), w1 = _mm256_loadu_ps (t->w1 + i);
  for (int r = 0; r < (d[1][0] ? 2 : 1); r++) {
    __m256 y0 = r ? l->yb0 : l->ya0, y1 = r ? l->yb1 : l->ya1;
    for (int c = 0; c < 3; c++) {
      __m256 v = _mm256_add_ps (_mm256_mul_ps (w0, fp_csc8 (y0, k0[c])),
          _mm256_mul_ps (w1, fp_csc8 (y1, k1[c])));
      if (m == 8) {
        _mm256_storeu_ps (d[r][c] + i, v);
      } else {
        float tmp[8];
        _mm256_storeu_ps (tmp, v);
        memcpy (d[r][c] + i, tmp, (gsize) m * sizeof (float));
      }
    }
  }
}

static AVX2I inline __m256
fp_byte8 (__m256i g, int shift)
{
  return _mm256_cvtepi32_ps (_mm256_and_si256 (_mm256_srli_epi32 (g, shift),
          _mm256_set1_epi32 (0xff)));
}

/* Lanes of outputs i .. i+7 by 4-byte gathers (t->load says they stay
 * inside the rows). */
static AVX2I inline void
fp_gather8 (const FPairTable *t, gint i, const guint8 *y0, const guint8 *y1,
    const guint8 *c1, const guint8 *c2, FPair8 *l)
{
  const __m256i one = _mm256_set1_epi32 (1);
  __m256i x = _mm256_loadu_si256 ((const __m256i *) (t->xs + i));
  __m256i g = _mm256_i32gather_epi32 ((const int *) y0, x, 1);
  l->ya0 = fp_byte8 (g, 0);
  l->ya1 = fp_byte8 (g, 8);
  if (y1) {
    g = _mm256_i32gather_epi32 ((const int *) y1, x, 1);
    l->yb0 = fp_byte8 (g, 0);
    l->yb1 = fp_byte8 (g, 8);
  }
  __m256i odd = _mm256_and_si256 (x, one);
  if (t->nv12) {
    /* U V of x, then of x + 1: the next pair when x is odd */
    g = _mm256_i32gather_epi32 ((const int *) c1, _mm256_andnot_si256 (one, x), 1);
    l->u0 = fp_byte8 (g, 0);
    l->v0 = fp_byte8 (g, 8);
    g = _mm256_srlv_epi32 (g, _mm256_slli_epi32 (odd, 4));
    l->u1 = fp_byte8 (g, 0);
    l->v1 = fp_byte8 (g, 8);
  } else {
    __m256i h = _mm256_srli_epi32 (x, 1), sh = _mm256_slli_epi32 (odd, 3);
    __m256i gu = _mm256_i32gather_epi32 ((const int *) c1, h, 1);
    __m256i gv = _mm256_i32gather_epi32 ((const int *) c2, h, 1);
    l->u0 = fp_byte8 (gu, 0);
    l->v0 = fp_byte8 (gv, 0);
    l->u1 = fp_byte8 (_mm256_srlv_epi32 (gu, sh), 0);
    l->v1 = fp_byte8 (_mm256_srlv_epi32 (gv, sh), 0);
  }
}

static AVX2I inline void
fp_lanes8 (const FPairLanes *s, int half, FPair8 *l)
{
  gint o = 8 * half;
  l->ya0 = _mm256_loadu_ps (s->ya0 + o);
  l->ya1 = _mm256_loadu_ps (s->ya1 + o);
  l->yb0 = _mm256_loadu_ps (s->yb0 + o);
  l->yb1 = _mm256_loadu_ps (s->yb1 + o);
  l->u0 = _mm256_loadu_ps (s->u0 + o);
  l->u1 = _mm256_loadu_ps (s->u1 + o);
  l->v0 = _mm256_loadu_ps (s->v0 + o);
  l->v1 = _mm256_loadu_ps (s->v1 + o);
}

static AVX2 void
fpair_rows_avx2 (const FPairTable *t, const guint8 *y0, const guint8 *y1, const guint8 *c1,
    const guint8 *c2, float *h0, float *h1)
{
  const gint n = t->n;
  float *d[2][3];
  fp_planes (t, h0, h1, d);
  for (gint i = 0; i < n; i += 16) {
    FPair8 l = { 0 };
    if (t->load[i / 16] != FP_LOAD_FILL) {       /* (no permutes at this level) */
      for (int half = 0; half < 2; half++) {
        fp_gather8 (t, i + 8 * half, y0, y1, c1, c2, &l);
        fp_block8 (t, i + 8 * half, 8, &l, d);
      }
      continue;
    }
    FPairLanes s;
    fpair_fill (t, i, y0, y1, c1, c2, &s);
    for (int half = 0; half < 2 && i + 8 * half < n; half++) {
      fp_lanes8 (&s, half, &l);
      fp_block8 (t, i + 8 * half, MIN (8, n - i - 8 * half), &l, d);
    }
  }
}

static AVX2 void
vfinish_f16_avx2 (const float *h0, const float *h1, float wy0, float wy1, gint n,
    const float *sub, const float *mul, const float *add, m2i_f16 *const out[3])
{
  const __m256 w0 = _mm256_set1_ps (wy0), w1 = _mm256_set1_ps (wy1);
  for (int c = 0; c < 3; c++) {
    const float *p = h0 + (gsize) c * n, *q = h1 + (gsize) c * n;
    for (gint i = 0; i < n; i += 8) {
      gint m = MIN (8, n - i);
      __m256 a, b;
      if (m == 8) {
        a = _mm256_loadu_ps (p + i);
        b = _mm256_loadu_ps (q + i);
      } else {
        float ta[8] = { 0 }, tb[8] = { 0 };
        memcpy (ta, p + i, (gsize) m * sizeof (float));
        memcpy (tb, q + i, (gsize) m * sizeof (float));
        a = _mm256_loadu_ps (ta);
        b = _mm256_loadu_ps (tb);
      }
      __m128i hv = _mm256_cvtps_ph (_mm256_add_ps (_mm256_mul_ps (w0, a), _mm256_mul_ps (w1, b)),
          _MM_FROUND_TO_NEAREST_INT);
      if (sub) {
        __m256 x = _mm256_add_ps (_mm256_mul_ps (_mm256_sub_ps (_mm256_cvtph_ps (hv),
                    _mm256_set1_ps (sub[c])), _mm256_set1_ps (mul[c])), _mm256_set1_ps (add[c]));
        hv = _mm256_cvtps_ph (x, _MM_FROUND_TO_NEAREST_INT);
      }
      if (m == 8) {
        _mm_storeu_si128 ((__m128i *) (out[c] + i), hv);
      } else {
        m2i_f16 th[8];
        _mm_storeu_si128 ((__m128i *) th, hv);
        memcpy (out[c] + i, th, (gsize) m * sizeof (m2i_f16));
      }
    }
  }
}

static AVX2 void
norm_f16_avx2 (const m2i_f16 *in, m2i_f16 *out, gint n, float sub, float mul, float add)
{
  const __m256 s = _mm256_set1_ps (sub), m = _mm256_set1_ps (mul), a = _mm256_set1_ps (add);
  gint i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 x = _mm256_cvtph_ps (_mm_loadu_si128 ((const __m128i *) (in + i)));
    x = _mm256_add_ps (_mm256_mul_ps (_mm256_sub_ps (x, s), m), a);
    _mm_storeu_si128 ((__m128i *) (out + i), _mm256_cvtps_ph (x, _MM_FROUND_TO_NEAREST_INT));
  }
  norm_f16_c (in + i, out + i, n - i, sub, mul, add);
}

static const CscKernels kernels_avx2 = {
  "avx2", BLK, prep_444_avx2, row_avx2, pair_avx2,
  u8_to_f16_avx2, gather_avx2, gather_pairs_c, hpass_expanded_avx2,
  finish_f16_norm_avx2, fpair_rows_avx2, FALSE, vfinish_f16_avx2, norm_f16_avx2,
};

/* ---- AVX-512 (F, BW): the pair kernel at twice the width ------------------ */

#define AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2,f16c,fma")))
#define AVX512I __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2,f16c,fma"), always_inline))
#define BLK5 64

static AVX512I inline __m512i
div1000_512 (__m512i z)
{
  return _mm512_srli_epi16 (_mm512_mulhi_epu16 (z, _mm512_set1_epi16 (-31981 /* 33555 */)), 9);
}

/* As terms16, 32 chroma samples. */
static AVX512I inline void
terms32 (__m512i u, __m512i v, __m512i out[CSC_N_TERMS])
{
  const __m512i one = _mm512_set1_epi16 (1), k1000 = _mm512_set1_epi16 (1000);
  __m512i vodd = _mm512_and_si512 (v, one), uodd = _mm512_and_si512 (u, one);
  __m512i vh = _mm512_srai_epi16 (v, 1), uh = _mm512_srai_epi16 (u, 1);
  __m512i s = _mm512_add_epi16 (_mm512_add_epi16 (_mm512_mullo_epi16 (vodd, _mm512_set1_epi16 (500)),
          _mm512_mullo_epi16 (v, _mm512_set1_epi16 (96))), _mm512_set1_epi16 (13000));
  __m512i q = div1000_512 (s);
  out[CSC_QR] = _mm512_add_epi16 (_mm512_add_epi16 (v, vh), _mm512_sub_epi16 (q, _mm512_set1_epi16 (16)));
  out[CSC_RR] = _mm512_add_epi16 (_mm512_sub_epi16 (s, _mm512_mullo_epi16 (q, k1000)), _mm512_set1_epi16 (3500));
  __m512i sv = _mm512_add_epi16 (_mm512_mullo_epi16 (v, _mm512_set1_epi16 (187)), _mm512_set1_epi16 (24000));
  __m512i qv = div1000_512 (sv);
  __m512i su = _mm512_add_epi16 (_mm512_sub_epi16 (_mm512_mullo_epi16 (u, _mm512_set1_epi16 (109)),
          _mm512_mullo_epi16 (uodd, _mm512_set1_epi16 (500))), _mm512_set1_epi16 (15000));
  __m512i qu = div1000_512 (su);
  out[CSC_QG] = _mm512_sub_epi16 (_mm512_add_epi16 (qv, qu),
      _mm512_add_epi16 (_mm512_add_epi16 (v, uh), _mm512_set1_epi16 (42)));
  out[CSC_RG] = _mm512_add_epi16 (_mm512_add_epi16 (_mm512_sub_epi16 (sv, _mm512_mullo_epi16 (qv, k1000)),
          _mm512_sub_epi16 (su, _mm512_mullo_epi16 (qu, k1000))), _mm512_set1_epi16 (3500));
  __m512i sb = _mm512_add_epi16 (_mm512_mullo_epi16 (u, _mm512_set1_epi16 (18)), _mm512_set1_epi16 (3000));
  __m512i qb = div1000_512 (sb);
  out[CSC_QB] = _mm512_add_epi16 (_mm512_add_epi16 (u, u), _mm512_sub_epi16 (qb, _mm512_set1_epi16 (6)));
  out[CSC_RB] = _mm512_add_epi16 (_mm512_sub_epi16 (sb, _mm512_mullo_epi16 (qb, k1000)), _mm512_set1_epi16 (3500));
}

static AVX512I inline __m512i
channel32 (__m512i yy, __m512i t164, __m512i q, __m512i r)
{
  return _mm512_add_epi16 (_mm512_add_epi16 (yy, q), div1000_512 (_mm512_add_epi16 (t164, r)));
}

static AVX512I inline void
block64 (const guint8 *y, const __m512i ka[CSC_N_TERMS], const __m512i kb[CSC_N_TERMS],
    __m512i *r8, __m512i *g8, __m512i *b8)
{
  const __m512i zero = _mm512_setzero_si512 (), k16 = _mm512_set1_epi16 (16),
      k164 = _mm512_set1_epi16 (164);
  __m512i yv = _mm512_loadu_si512 ((const void *) y);
  __m512i ya = _mm512_sub_epi16 (_mm512_unpacklo_epi8 (yv, zero), k16);
  __m512i yb = _mm512_sub_epi16 (_mm512_unpackhi_epi8 (yv, zero), k16);
  __m512i ta = _mm512_mullo_epi16 (ya, k164), tb = _mm512_mullo_epi16 (yb, k164);
  *r8 = _mm512_packus_epi16 (channel32 (ya, ta, ka[CSC_QR], ka[CSC_RR]),
      channel32 (yb, tb, kb[CSC_QR], kb[CSC_RR]));
  *g8 = _mm512_packus_epi16 (channel32 (ya, ta, ka[CSC_QG], ka[CSC_RG]),
      channel32 (yb, tb, kb[CSC_QG], kb[CSC_RG]));
  *b8 = _mm512_packus_epi16 (channel32 (ya, ta, ka[CSC_QB], ka[CSC_RB]),
      channel32 (yb, tb, kb[CSC_QB], kb[CSC_RB]));
}

/* 64 pixels interleaved: 12 chunks of 16 bytes, chunk 3L+k is lane L of v[k]. */
static AVX512I inline void
store_il64 (guint8 *o, __m512i c0, __m512i c1, __m512i c2)
{
  __m512i v[3];
  for (int k = 0; k < 3; k++) {
    __m512i m0 = _mm512_broadcast_i32x4 (_mm_loadu_si128 ((const __m128i *) il_masks[k][0]));
    __m512i m1 = _mm512_broadcast_i32x4 (_mm_loadu_si128 ((const __m128i *) il_masks[k][1]));
    __m512i m2 = _mm512_broadcast_i32x4 (_mm_loadu_si128 ((const __m128i *) il_masks[k][2]));
    v[k] = _mm512_or_si512 (_mm512_or_si512 (_mm512_shuffle_epi8 (c0, m0),
            _mm512_shuffle_epi8 (c1, m1)), _mm512_shuffle_epi8 (c2, m2));
  }
  /* qword indices (2 per chunk) into (a, b) for the three output vectors */
  const __m512i i0 = _mm512_setr_epi64 (0, 1, 8, 9, 0, 0, 2, 3);      /* v0L0 v1L0 _ v0L1 */
  const __m512i i2 = _mm512_setr_epi64 (0, 0, 6, 7, 14, 15, 0, 0);    /* _ v0L3 v1L3 _ */
  __m512i z0 = _mm512_permutex2var_epi64 (v[0], i0, v[1]);
  __m512i z1 = _mm512_permutex2var_epi64 (v[1],
      _mm512_setr_epi64 (2, 3, 0, 0, 12, 13, 4, 5), v[0]);     /* v1L1 _ v0L2 v1L2 */
  __m512i z2 = _mm512_permutex2var_epi64 (v[0], i2, v[1]);
  /* fill the holes from v2: z0 chunk 2 = v2L0, z1 chunk 1 = v2L1,
   * z2 chunk 0 = v2L2, z2 chunk 3 = v2L3 */
  z0 = _mm512_mask_permutexvar_epi64 (z0, 0x30, _mm512_setr_epi64 (0, 0, 0, 0, 0, 1, 0, 0), v[2]);
  z1 = _mm512_mask_permutexvar_epi64 (z1, 0x0c, _mm512_setr_epi64 (0, 0, 2, 3, 0, 0, 0, 0), v[2]);
  z2 = _mm512_mask_permutexvar_epi64 (z2, 0xc3, _mm512_setr_epi64 (4, 5, 0, 0, 0, 0, 6, 7), v[2]);
  _mm512_storeu_si512 ((void *) o, z0);
  _mm512_storeu_si512 ((void *) (o + 64), z1);
  _mm512_storeu_si512 ((void *) (o + 128), z2);
}

static AVX512I inline void
store_fp16q (const CscOutSpec *spec, int c, guint8 *dst, int q, __m128i bytes16)
{
  __m512 f = _mm512_cvtepi32_ps (_mm512_cvtepu8_epi32 (bytes16));
  if (spec->norm)
    f = _mm512_add_ps (_mm512_mul_ps (_mm512_sub_ps (f, _mm512_set1_ps (spec->sub[c])),
            _mm512_set1_ps (spec->mul[c])), _mm512_set1_ps (spec->add[c]));
  if (spec->mode == CSC_OUT_PL_F16)
    _mm256_storeu_si256 ((__m256i *) (dst + 32 * q), _mm512_cvtps_ph (f, _MM_FROUND_TO_NEAREST_INT));
  else
    _mm512_storeu_ps ((float *) dst + 16 * q, f);
}

/* 64 values of channel c to fp16/fp32 (+norm); immediates stay constants. */
static AVX512I inline void
store_fp16px (const CscOutSpec *spec, int c, guint8 *dst, __m512i x)
{
  store_fp16q (spec, c, dst, 0, _mm512_extracti32x4_epi32 (x, 0));
  store_fp16q (spec, c, dst, 1, _mm512_extracti32x4_epi32 (x, 1));
  store_fp16q (spec, c, dst, 2, _mm512_extracti32x4_epi32 (x, 2));
  store_fp16q (spec, c, dst, 3, _mm512_extracti32x4_epi32 (x, 3));
}

static AVX512I inline void
emit64 (__m512i r8, __m512i g8, __m512i b8, guint8 *const dst[3], gint i, gint m,
    const CscOutSpec *spec)
{
  guint8 otmp[BLK5 * 3 * 4];
  guint8 *o[3];
  emit_targets (dst, i, m, BLK5, spec, otmp, o);
  switch (spec->mode) {
    case CSC_OUT_IL_U8:
      if (spec->bgr)
        store_il64 (o[0], b8, g8, r8);
      else
        store_il64 (o[0], r8, g8, b8);
      break;
    case CSC_OUT_PL_U8:
      _mm512_storeu_si512 ((void *) o[0], r8);
      _mm512_storeu_si512 ((void *) o[1], g8);
      _mm512_storeu_si512 ((void *) o[2], b8);
      break;
    default:
      store_fp16px (spec, 0, o[0], r8);
      store_fp16px (spec, 1, o[1], g8);
      store_fp16px (spec, 2, o[2], b8);
      break;
  }
  emit_tail (dst, i, m, BLK5, spec, o);
}

static AVX512 void
pair_avx512 (const guint8 *y0, const guint8 *y1, const guint8 *c1, const guint8 *c2, gint n,
    guint8 *const d0[3], guint8 *const d1[3], const CscOutSpec *spec)
{
  const __m512i k128 = _mm512_set1_epi16 (128), lo = _mm512_set1_epi16 (0xff);
  for (gint i = 0; i < n; i += BLK5) {
    gint m = MIN (BLK5, n - i);
    guint8 tmp[4 * BLK5];
    PairSrc ps;
    pair_src (&ps, y0, y1, c1, c2, i, m, BLK5, tmp);
    const guint8 *p0 = ps.y0, *p1 = ps.y1, *pc = ps.c, *pv = ps.v;
    __m512i u, v;
    if (c2) {
      u = _mm512_cvtepu8_epi16 (_mm256_loadu_si256 ((const __m256i *) pc));
      v = _mm512_cvtepu8_epi16 (_mm256_loadu_si256 ((const __m256i *) pv));
    } else {
      __m512i x = _mm512_loadu_si512 ((const void *) pc);
      u = _mm512_and_si512 (x, lo);
      v = _mm512_srli_epi16 (x, 8);
    }
    __m512i k[CSC_N_TERMS], ka[CSC_N_TERMS], kb[CSC_N_TERMS];
    terms32 (_mm512_sub_epi16 (u, k128), _mm512_sub_epi16 (v, k128), k);
    for (int j = 0; j < CSC_N_TERMS; j++) {
      ka[j] = _mm512_unpacklo_epi16 (k[j], k[j]);
      kb[j] = _mm512_unpackhi_epi16 (k[j], k[j]);
    }
    __m512i r8, g8, b8;
    block64 (p0, ka, kb, &r8, &g8, &b8);
    emit64 (r8, g8, b8, d0, i, m, spec);
    if (p1) {
      block64 (p1, ka, kb, &r8, &g8, &b8);
      emit64 (r8, g8, b8, d1, i, m, spec);
    }
  }
}

static AVX512I inline __m512i
gather16 (const guint8 *base, __m512i o, __m512i wmax)
{
  __m512i oc = _mm512_min_epi32 (o, wmax);
  __m512i g = _mm512_i32gather_epi32 (oc, (const void *) base, 1);
  return _mm512_srlv_epi32 (g, _mm512_slli_epi32 (_mm512_sub_epi32 (o, oc), 3));
}

static AVX512I inline void
store_b16 (guint8 *dst, __m512i g)
{
  _mm_storeu_si128 ((__m128i *) dst, _mm512_cvtepi32_epi8 (g));
}

static AVX512 void
gather_avx512 (const guint8 *y, gint wy, const guint8 *c1, const guint8 *c2, gint wc,
    const gint32 *xs, gint K, guint8 *restrict cy, guint8 *restrict cu, guint8 *restrict cv)
{
  gint k = 0;
  if (wy >= 4 && wc >= 4) {
    const __m512i ymax = _mm512_set1_epi32 (wy - 4), cmax = _mm512_set1_epi32 (wc - 4);
    for (; k + 16 <= K; k += 16) {
      __m512i x = _mm512_loadu_si512 ((const void *) (xs + k));
      if (y)
        store_b16 (cy + k, gather16 (y, x, ymax));
      if (c1 && !c2) {
        __m512i g = gather16 (c1, _mm512_and_si512 (x, _mm512_set1_epi32 (~1)), cmax);
        store_b16 (cu + k, g);
        store_b16 (cv + k, _mm512_srli_epi32 (g, 8));
      } else if (c1) {
        __m512i h = _mm512_srli_epi32 (x, 1);
        store_b16 (cu + k, gather16 (c1, h, cmax));
        store_b16 (cv + k, gather16 (c2, h, cmax));
      }
    }
  }
  gather_c (y, wy, c1, c2, wc, xs + k, K - k, cy + k, cu + k, cv + k);
}

/* hpass_expanded for two taps, 16 outputs per step; same operations in the
 * same order as hpass_expanded_body (mul, then add to 0.0f, mul, add). */
static AVX512 void
hpass_expanded_avx512 (const float *wt, gint T, gint n, const guint8 *p, gint K, float *dst)
{
  if (T != 2) {
    hpass_expanded_avx2 (wt, T, n, p, K, dst);
    return;
  }
  const __m512 zero = _mm512_setzero_ps ();
  for (int c = 0; c < 3; c++) {
    const guint8 *v = p + (gsize) c * K;
    float *d = dst + (gsize) c * n;
    gint i = 0;
    for (; i + 16 <= n; i += 16) {
      __m512 x0 = _mm512_cvtepi32_ps (_mm512_cvtepu8_epi32 (_mm_loadu_si128 ((const __m128i *) (v + i))));
      __m512 x1 = _mm512_cvtepi32_ps (_mm512_cvtepu8_epi32 (_mm_loadu_si128 ((const __m128i *) (v + n + i))));
      __m512 acc = _mm512_add_ps (zero, _mm512_mul_ps (_mm512_loadu_ps (wt + i), x0));
      acc = _mm512_add_ps (acc, _mm512_mul_ps (_mm512_loadu_ps (wt + n + i), x1));
      _mm512_storeu_ps (d + i, acc);
    }
    for (; i < n; i++)
      d[i] = (0.0f + wt[i] * (float) v[i]) + wt[n + i] * (float) v[n + i];
  }
}

static AVX512 void
finish_f16_norm_avx512 (const float *v, const float *sub, const float *mul, const float *add,
    gint n, m2i_f16 *out)
{
  gint i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512 x = _mm512_cvtph_ps (_mm512_cvtps_ph (_mm512_loadu_ps (v + i), _MM_FROUND_TO_NEAREST_INT));
    __m512 y = _mm512_add_ps (_mm512_mul_ps (_mm512_sub_ps (x, _mm512_loadu_ps (sub + i)),
            _mm512_loadu_ps (mul + i)), _mm512_loadu_ps (add + i));
    _mm256_storeu_si256 ((__m256i *) (out + i), _mm512_cvtps_ph (y, _MM_FROUND_TO_NEAREST_INT));
  }
  finish_f16_norm_avx2 (v + i, sub + i, mul + i, add + i, n - i, out + i);
}

/* prep_444 at twice the width, writing the AVX2 block layout row_avx2 reads
 * (a zmm byte unpack yields the "a" halves of two AVX2 blocks). */
static AVX512 void
prep_444_avx512 (const guint8 *pu, const guint8 *pv, gint n, gint16 *t, gsize ts)
{
  const __m512i k128 = _mm512_set1_epi16 (128), zero = _mm512_setzero_si512 ();
  gint i = 0;
  for (; i + 64 <= n; i += 64) {
    __m512i a = _mm512_loadu_si512 ((const void *) (pu + i));
    __m512i b = _mm512_loadu_si512 ((const void *) (pv + i));
    __m512i lo[CSC_N_TERMS], hi[CSC_N_TERMS];
    terms32 (_mm512_sub_epi16 (_mm512_unpacklo_epi8 (a, zero), k128),
        _mm512_sub_epi16 (_mm512_unpacklo_epi8 (b, zero), k128), lo);
    terms32 (_mm512_sub_epi16 (_mm512_unpackhi_epi8 (a, zero), k128),
        _mm512_sub_epi16 (_mm512_unpackhi_epi8 (b, zero), k128), hi);
    for (int j = 0; j < CSC_N_TERMS; j++) {
      gint16 *d = t + j * ts + i;
      _mm256_storeu_si256 ((__m256i *) d, _mm512_castsi512_si256 (lo[j]));
      _mm256_storeu_si256 ((__m256i *) (d + 16), _mm512_castsi512_si256 (hi[j]));
      _mm256_storeu_si256 ((__m256i *) (d + 32), _mm512_extracti64x4_epi64 (lo[j], 1));
      _mm256_storeu_si256 ((__m256i *) (d + 48), _mm512_extracti64x4_epi64 (hi[j], 1));
    }
  }
  if (i < n)
    prep_444_avx2 (pu + i, pv + i, n - i, t + i, ts);
}

/* row at twice the width over the AVX2 terms layout: a zmm of "a" terms is
 * the a halves of two consecutive AVX2 blocks. */
static AVX512 void
row_avx512 (const guint8 *y, const gint16 *t, gsize ts, gint n, guint8 *const dst[3],
    const CscOutSpec *spec)
{
  gint i = 0;
  for (; i + BLK5 <= n; i += BLK5) {
    __m512i ka[CSC_N_TERMS], kb[CSC_N_TERMS];
    for (int j = 0; j < CSC_N_TERMS; j++) {
      const gint16 *p = t + j * ts + i;
      ka[j] = _mm512_inserti64x4 (_mm512_castsi256_si512 (_mm256_loadu_si256 ((const __m256i *) p)),
          _mm256_loadu_si256 ((const __m256i *) (p + 32)), 1);
      kb[j] = _mm512_inserti64x4 (_mm512_castsi256_si512 (_mm256_loadu_si256 ((const __m256i *) (p + 16))),
          _mm256_loadu_si256 ((const __m256i *) (p + 48)), 1);
    }
    __m512i r8, g8, b8;
    block64 (y + i, ka, kb, &r8, &g8, &b8);
    emit64 (r8, g8, b8, dst, i, BLK5, spec);
  }
  if (i < n) {
    guint bps = out_bps (spec);
    guint8 *d[3];
    for (int c = 0; c < 3; c++)
      d[c] = dst[c] ? dst[c] + (spec->mode == CSC_OUT_IL_U8 ? 3 : bps) * (gsize) i : NULL;
    row_avx2 (y + i, t + i, ts, n - i, d, spec);
  }
}

/* Float pair path, AVX-512 (with FMA): 16 outputs per step, one register
 * per tap. */
typedef struct {
  __m512 ya0, ya1, yb0, yb1, u0, u1, v0, v1;
} FPair16;

static AVX512I inline void
fp_terms16 (__m512 u, __m512 v, __m512 k[3])
{
  k[0] = _mm512_fmadd_ps (v, _mm512_set1_ps (FP_CVR), _mm512_set1_ps (FP_KR));
  k[1] = _mm512_fmadd_ps (u, _mm512_set1_ps (FP_CUG),
      _mm512_fmadd_ps (v, _mm512_set1_ps (FP_CVG), _mm512_set1_ps (FP_KG)));
  k[2] = _mm512_fmadd_ps (u, _mm512_set1_ps (FP_CUB), _mm512_set1_ps (FP_KB));
}

static AVX512I inline __m512
fp_csc16 (__m512 y, __m512 k)
{
  __m512 p = _mm512_roundscale_ps (_mm512_fmadd_ps (y, _mm512_set1_ps (FP_CY), k),
      _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
  return _mm512_min_ps (_mm512_max_ps (p, _mm512_setzero_ps ()), _mm512_set1_ps (255.0f));
}

static AVX512I inline void
fp_block16 (const FPairTable *t, gint i, gint n, const FPair16 *l, float *const d[2][3])
{
  __m512 k0[3], k1[3];
  fp_terms16 (l->u0, l->v0, k0);
  fp_terms16 (l->u1, l->v1, k1);
  __m512 w0 = _mm512_loadu_ps (t->w0 + i), w1 = _mm512_loadu_ps (t->w1 + i);
  __mmask16 m = i + 16 <= n ? 0xffff : (__mmask16) ((1u << (n - i)) - 1);
  for (int r = 0; r < (d[1][0] ? 2 : 1); r++) {
    __m512 y0 = r ? l->yb0 : l->ya0, y1 = r ? l->yb1 : l->ya1;
    for (int c = 0; c < 3; c++) {
      __m512 v = _mm512_add_ps (_mm512_mul_ps (w0, fp_csc16 (y0, k0[c])),
          _mm512_mul_ps (w1, fp_csc16 (y1, k1[c])));
      if (m == 0xffff)
        _mm512_storeu_ps (d[r][c] + i, v);
      else
        _mm512_mask_storeu_ps (d[r][c] + i, m, v);
    }
  }
}

static AVX512I inline void
fp_lanes16 (const FPairTable *t, gint i, const guint8 *y0, const guint8 *y1,
    const guint8 *c1, const guint8 *c2, FPair16 *l)
{
  FPairLanes s;
  fpair_fill (t, i, y0, y1, c1, c2, &s);
  l->ya0 = _mm512_loadu_ps (s.ya0);
  l->ya1 = _mm512_loadu_ps (s.ya1);
  l->yb0 = _mm512_loadu_ps (s.yb0);
  l->yb1 = _mm512_loadu_ps (s.yb1);
  l->u0 = _mm512_loadu_ps (s.u0);
  l->u1 = _mm512_loadu_ps (s.u1);
  l->v0 = _mm512_loadu_ps (s.v0);
  l->v1 = _mm512_loadu_ps (s.v1);
}

static AVX512I inline __m512
fp_byte16 (__m512i g, int shift)
{
  return _mm512_cvtepi32_ps (_mm512_and_si512 (_mm512_srli_epi32 (g, shift),
          _mm512_set1_epi32 (0xff)));
}

/* Lanes of outputs i .. i+15 by 4-byte gathers (t->load says they stay
 * inside the rows). */
static AVX512I inline void
fp_gather16 (const FPairTable *t, gint i, const guint8 *y0, const guint8 *y1,
    const guint8 *c1, const guint8 *c2, FPair16 *l)
{
  const __m512i one = _mm512_set1_epi32 (1);
  __m512i x = _mm512_loadu_si512 ((const void *) (t->xs + i));
  __m512i g = _mm512_i32gather_epi32 (x, (const void *) y0, 1);
  l->ya0 = fp_byte16 (g, 0);
  l->ya1 = fp_byte16 (g, 8);
  l->yb0 = l->yb1 = _mm512_setzero_ps ();
  if (y1) {
    g = _mm512_i32gather_epi32 (x, (const void *) y1, 1);
    l->yb0 = fp_byte16 (g, 0);
    l->yb1 = fp_byte16 (g, 8);
  }
  __m512i odd = _mm512_and_si512 (x, one);
  if (t->nv12) {
    g = _mm512_i32gather_epi32 (_mm512_andnot_si512 (one, x), (const void *) c1, 1);
    l->u0 = fp_byte16 (g, 0);
    l->v0 = fp_byte16 (g, 8);
    g = _mm512_srlv_epi32 (g, _mm512_slli_epi32 (odd, 4));
    l->u1 = fp_byte16 (g, 0);
    l->v1 = fp_byte16 (g, 8);
  } else {
    __m512i h = _mm512_srli_epi32 (x, 1), sh = _mm512_slli_epi32 (odd, 3);
    __m512i gu = _mm512_i32gather_epi32 (h, (const void *) c1, 1);
    __m512i gv = _mm512_i32gather_epi32 (h, (const void *) c2, 1);
    l->u0 = fp_byte16 (gu, 0);
    l->v0 = fp_byte16 (gv, 0);
    l->u1 = fp_byte16 (_mm512_srlv_epi32 (gu, sh), 0);
    l->v1 = fp_byte16 (_mm512_srlv_epi32 (gv, sh), 0);
  }
}

static AVX512 void
fpair_rows_avx512 (const FPairTable *t, const guint8 *y0, const guint8 *y1, const guint8 *c1,
    const guint8 *c2, float *h0, float *h1)
{
  const gint n = t->n;
  float *d[2][3];
  fp_planes (t, h0, h1, d);
  for (gint i = 0; i < n; i += 16) {
    FPair16 l;
    if (t->load[i / 16] == FP_LOAD_FILL)
      fp_lanes16 (t, i, y0, y1, c1, c2, &l);
    else
      fp_gather16 (t, i, y0, y1, c1, c2, &l);
    fp_block16 (t, i, n, &l, d);
  }
}

static AVX512 void
vfinish_f16_avx512 (const float *h0, const float *h1, float wy0, float wy1, gint n,
    const float *sub, const float *mul, const float *add, m2i_f16 *const out[3])
{
  const __m512 w0 = _mm512_set1_ps (wy0), w1 = _mm512_set1_ps (wy1);
  for (int c = 0; c < 3; c++) {
    const float *p = h0 + (gsize) c * n, *q = h1 + (gsize) c * n;
    for (gint i = 0; i < n; i += 16) {
      __mmask16 m = i + 16 <= n ? 0xffff : (__mmask16) ((1u << (n - i)) - 1);
      __m512 v = _mm512_add_ps (_mm512_mul_ps (w0, _mm512_maskz_loadu_ps (m, p + i)),
          _mm512_mul_ps (w1, _mm512_maskz_loadu_ps (m, q + i)));
      __m256i hv = _mm512_cvtps_ph (v, _MM_FROUND_TO_NEAREST_INT);
      if (sub) {
        __m512 x = _mm512_add_ps (_mm512_mul_ps (_mm512_sub_ps (_mm512_cvtph_ps (hv),
                    _mm512_set1_ps (sub[c])), _mm512_set1_ps (mul[c])), _mm512_set1_ps (add[c]));
        hv = _mm512_cvtps_ph (x, _MM_FROUND_TO_NEAREST_INT);
      }
      if (m == 0xffff)               /* (a masked vcvtps2ph store is slow on Zen 4) */
        _mm256_storeu_si256 ((__m256i *) (out[c] + i), hv);
      else
        _mm256_mask_storeu_epi16 (out[c] + i, m, hv);
    }
  }
}

static AVX512 void
norm_f16_avx512 (const m2i_f16 *in, m2i_f16 *out, gint n, float sub, float mul, float add)
{
  const __m512 s = _mm512_set1_ps (sub), ml = _mm512_set1_ps (mul), a = _mm512_set1_ps (add);
  for (gint i = 0; i < n; i += 16) {
    __mmask16 m = i + 16 <= n ? 0xffff : (__mmask16) ((1u << (n - i)) - 1);
    __m512 x = _mm512_cvtph_ps (_mm256_maskz_loadu_epi16 (m, in + i));
    x = _mm512_add_ps (_mm512_mul_ps (_mm512_sub_ps (x, s), ml), a);
    _mm256_mask_storeu_epi16 (out + i, m, _mm512_cvtps_ph (x, _MM_FROUND_TO_NEAREST_INT));
  }
}

static const CscKernels kernels_avx512 = {
  "avx512", BLK, prep_444_avx512, row_avx512, pair_avx512, u8_to_f16_avx2, gather_avx512,
  gather_pairs_c, hpass_expanded_avx512, finish_f16_norm_avx512,
  fpair_rows_avx512, FALSE, vfinish_f16_avx512, norm_f16_avx512,
};

/* ---- AVX-512 VBMI: the float pair path's loads as byte permutes ----------- */

#define VBMIF __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512vbmi,avx2,f16c,fma")))
#define VBMIFI __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512vbmi,avx2,f16c,fma"), always_inline))

/* Outputs 8b .. 8b+15 (blocks b, b + 1) as 16 dword lanes: each block's
 * byte permute over its 128-byte window (64 bytes at @lo + base, 64 at
 * @hi + base) fills its 8 lanes, @keep the bytes of each (luma: Y(x),
 * Y(x + 1); chroma: U, V of x, then of x + 1). */
static VBMIFI inline __m512i
fp_perm_pair (const guint8 *lo, const guint8 *hi, const gint32 *base, const guint8 *idx, gint b,
    __mmask64 keep)
{
  __m512i a = _mm512_maskz_permutex2var_epi8 (keep & 0xffffffffull,
      _mm512_loadu_si512 ((const void *) (lo + base[b])),
      _mm512_loadu_si512 ((const void *) (idx + 64 * b)),
      _mm512_loadu_si512 ((const void *) (hi + base[b])));
  __m512i c = _mm512_maskz_permutex2var_epi8 (keep & ~0xffffffffull,
      _mm512_loadu_si512 ((const void *) (lo + base[b + 1])),
      _mm512_loadu_si512 ((const void *) (idx + 64 * (b + 1))),
      _mm512_loadu_si512 ((const void *) (hi + base[b + 1])));
  return _mm512_or_si512 (a, c);
}

static VBMIFI inline void
fp_load16_vbmi (const FPairTable *t, gint i, const guint8 *y0, const guint8 *y1,
    const guint8 *c1, const guint8 *c2, FPair16 *l)
{
  const __mmask64 b01 = 0x3333333333333333ull;
  if (t->load[i / 16] != FP_LOAD_PERMUTE) {
    if (t->load[i / 16] == FP_LOAD_GATHER)
      fp_gather16 (t, i, y0, y1, c1, c2, l);
    else
      fp_lanes16 (t, i, y0, y1, c1, c2, l);
    return;
  }
  gint b = i / 8;
  __m512i p = fp_perm_pair (y0, y0 + 64, t->ybase, t->yidx, b, b01);
  l->ya0 = fp_byte16 (p, 0);
  l->ya1 = _mm512_cvtepi32_ps (_mm512_srli_epi32 (p, 8));
  l->yb0 = l->yb1 = _mm512_setzero_ps ();
  if (y1) {
    p = fp_perm_pair (y1, y1 + 64, t->ybase, t->yidx, b, b01);
    l->yb0 = fp_byte16 (p, 0);
    l->yb1 = _mm512_cvtepi32_ps (_mm512_srli_epi32 (p, 8));
  }
  /* one permute per block for U and V of both columns (NV12: 128 bytes of
   * the UV row; I420: 64 bytes of the U row, then the same 64 of V) */
  p = fp_perm_pair (c1, t->nv12 ? c1 + 64 : c2, t->cbase, t->cidx, b, ~0ull);
  l->u0 = fp_byte16 (p, 0);
  l->v0 = fp_byte16 (p, 8);
  l->u1 = fp_byte16 (p, 16);
  l->v1 = _mm512_cvtepi32_ps (_mm512_srli_epi32 (p, 24));
}

/* Software-pipelined: the permutes of the next 16 outputs are issued before
 * the arithmetic of the current ones, which would otherwise wait for them
 * (a block's FP work depends on a long load → permute → convert chain). */
static VBMIF void
fpair_rows_vbmi (const FPairTable *t, const guint8 *y0, const guint8 *y1, const guint8 *c1,
    const guint8 *c2, float *h0, float *h1)
{
  const gint n = t->n;
  float *d[2][3];
  fp_planes (t, h0, h1, d);
  FPair16 next;
  fp_load16_vbmi (t, 0, y0, y1, c1, c2, &next);
  for (gint i = 0; i < n; i += 16) {
    FPair16 cur = next;
    if (i + 16 < n)
      fp_load16_vbmi (t, i + 16, y0, y1, c1, c2, &next);
    fp_block16 (t, i, n, &cur, d);
  }
}

static const CscKernels kernels_avx512_vbmi = {
  "avx512-vbmi", BLK, prep_444_avx512, row_avx512, pair_avx512, u8_to_f16_avx2, gather_avx512,
  gather_pairs_c, hpass_expanded_avx512, finish_f16_norm_avx512,
  fpair_rows_vbmi, TRUE, vfinish_f16_avx512, norm_f16_avx512,
};
#endif

static void
init_once (void)
{
  static gsize once = 0;
  if (g_once_init_enter (&once)) {
    init_tables ();
#ifdef HAVE_X86
    init_il_masks ();
#endif
    g_once_init_leave (&once, 1);
  }
}

/* Picked once: M2I_CPU_DISABLE is read at the first call (as m2i_cpu_flags
 * does), so callers may ask for the kernels per run. */
static const CscKernels *
choose_kernels (void)
{
  init_once ();
#ifdef HAVE_X86
  M2iCpuFlags f = m2i_cpu_flags ();
  if ((f & M2I_CPU_AVX512F) && (f & M2I_CPU_F16C) && (f & M2I_CPU_FMA)) {
    /* VBMI is not among m2i_cpu_flags(); "vbmi" in M2I_CPU_DISABLE hides it
     * here so tests can run the plain AVX-512 kernels too. */
    const char *off = g_getenv ("M2I_CPU_DISABLE");
    if (__builtin_cpu_supports ("avx512vbmi") && !(off && strstr (off, "vbmi")))
      return &kernels_avx512_vbmi;
    return &kernels_avx512;
  }
  if ((f & M2I_CPU_AVX2) && (f & M2I_CPU_F16C))
    return &kernels_avx2;
#endif
  return &kernels_c;
}

const CscKernels *
m2i_csc_kernels (void)
{
  static const CscKernels *chosen;
  static gsize once = 0;
  if (g_once_init_enter (&once)) {
    chosen = choose_kernels ();
    g_once_init_leave (&once, 1);
  }
  return chosen;
}
