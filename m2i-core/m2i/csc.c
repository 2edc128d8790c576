/* csc.c — NV12/I420 -> RGB/BGR colour conversion kernels (plain C, AVX2).
 *
 * Both versions compute exactly floor((1164(Y-16) + k·chroma + 500)/1000),
 * clamped, as docs/m2i-engine.md derives: chroma terms are precomputed per
 * chroma sample as a quotient and remainder of 1000, so the per-pixel work
 * fits 16-bit lanes. The AVX2 version keeps its terms arrays in "block order"
 * (per 32 pixels: 0-7,16-23,8-15,24-31) so that byte unpacking of Y and the
 * final packus need no lane-crossing shuffles.
 */
#include "engine-private.h"

#include <base/m2i-cpu.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define HAVE_X86 1
#endif

gsize
m2i_csc_terms_stride (const CscKernels *k, gint n)
{
  gint b = k->block;
  return (gsize) ((n + b - 1) / b * b);
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
  "c", 1, prep_444_c, row_c, pair_c, u8_to_f16_c, gather_c, gather_pairs_c, NULL,
  hpass_expanded_c, finish_f16_norm_c,
};

/* ---- pair windows ---------------------------------------------------------- */

PairWindows *
m2i_pair_windows_new (const gint32 *xs, gint n, gint wy, gboolean nv12)
{
  PairWindows *pw = g_new0 (PairWindows, 1);
  gint nb = n / 8;
  gint wc = nv12 ? wy : wy / 2, cwin = nv12 ? 128 : 64;
  pw->n_blocks = nb;
  pw->ybase = g_new0 (gint32, MAX (nb, 1));
  pw->cbase = g_new0 (gint32, MAX (nb, 1));
  pw->yidx = g_new0 (guint8, (gsize) MAX (nb, 1) * 64);
  pw->cidx = g_new0 (guint8, (gsize) MAX (nb, 1) * 64);
  pw->ok = g_new0 (guint8, MAX (nb, 1));
  for (gint b = 0; b < nb; b++) {
    const gint32 *x = xs + 8 * b;
    gint ylo = G_MAXINT, yhi = 0, clo = G_MAXINT, chi = 0;
    for (int j = 0; j < 8; j++) {
      ylo = MIN (ylo, x[j]);
      yhi = MAX (yhi, x[j] + 1);
      gint c0 = nv12 ? (x[j] & ~1) : x[j] >> 1;
      gint c1 = nv12 ? ((x[j] + 1) & ~1) + 1 : (x[j] + 1) >> 1;
      clo = MIN (clo, c0);
      chi = MAX (chi, c1);
    }
    if (wy < 128 || wc < cwin || yhi - ylo >= 128 || chi - clo >= cwin)
      continue;
    gint yb = MIN (ylo, wy - 128), cb = MIN (clo, wc - cwin);
    pw->ybase[b] = yb;
    pw->cbase[b] = cb;
    guint8 *yi = pw->yidx + 64 * b, *ci = pw->cidx + 64 * b;
    for (int j = 0; j < 8; j++) {
      yi[j] = (guint8) (x[j] - yb);
      yi[8 + j] = (guint8) (x[j] + 1 - yb);
      if (nv12) {
        ci[j] = (guint8) ((x[j] & ~1) - cb);                 /* U of x */
        ci[8 + j] = (guint8) (((x[j] + 1) & ~1) - cb);       /* U of x+1 */
        ci[16 + j] = (guint8) ((x[j] & ~1) + 1 - cb);        /* V of x */
        ci[24 + j] = (guint8) (((x[j] + 1) & ~1) + 1 - cb);  /* V of x+1 */
      } else {
        ci[j] = (guint8) ((x[j] >> 1) - cb);
        ci[8 + j] = (guint8) (((x[j] + 1) >> 1) - cb);
      }
    }
    pw->ok[b] = 1;
  }
  return pw;
}

void
m2i_pair_windows_free (PairWindows *pw)
{
  if (!pw)
    return;
  g_free (pw->ybase);
  g_free (pw->cbase);
  g_free (pw->yidx);
  g_free (pw->cidx);
  g_free (pw->ok);
  g_free (pw);
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
gather_pairs_avx2 (const guint8 *y, gint wy, const guint8 *c1, const guint8 *c2, gint wc,
    const gint32 *xs, gint n, guint8 *restrict cy, guint8 *restrict cu, guint8 *restrict cv)
{
  gint i = 0;
  if (wy >= 4 && wc >= 4) {
    const __m256i ymax = _mm256_set1_epi32 (wy - 4), cmax = _mm256_set1_epi32 (wc - 4);
    const __m256i one = _mm256_set1_epi32 (1);
    for (; i + 8 <= n; i += 8) {
      __m256i x = _mm256_loadu_si256 ((const __m256i *) (xs + i));
      if (y) {
        __m256i g = gather8 (y, x, ymax);                   /* Y[x], Y[x+1] */
        store_b8 (cy + i, g);
        store_b8 (cy + n + i, _mm256_srli_epi32 (g, 8));
      }
      if (!c1)
        continue;
      /* column x+1 uses the next chroma sample when x is odd */
      __m256i odd = _mm256_and_si256 (x, one);
      if (!c2) {
        __m256i g = gather8 (c1, _mm256_andnot_si256 (one, x), cmax);   /* U0 V0 U1 V1 */
        store_b8 (cu + i, g);
        store_b8 (cv + i, _mm256_srli_epi32 (g, 8));
        __m256i g1 = _mm256_srlv_epi32 (g, _mm256_slli_epi32 (odd, 4));
        store_b8 (cu + n + i, g1);
        store_b8 (cv + n + i, _mm256_srli_epi32 (g1, 8));
      } else {
        __m256i h = _mm256_srli_epi32 (x, 1);
        __m256i gu = gather8 (c1, h, cmax), gv = gather8 (c2, h, cmax);
        store_b8 (cu + i, gu);
        store_b8 (cv + i, gv);
        __m256i sh = _mm256_slli_epi32 (odd, 3);
        store_b8 (cu + n + i, _mm256_srlv_epi32 (gu, sh));
        store_b8 (cv + n + i, _mm256_srlv_epi32 (gv, sh));
      }
    }
  }
  gather_pairs_from (y, c1, c2, xs, i, n, n, cy, cu, cv);
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

static const CscKernels kernels_avx2 = {
  "avx2", BLK, prep_444_avx2, row_avx2, pair_avx2,
  u8_to_f16_avx2, gather_avx2, gather_pairs_avx2, NULL, hpass_expanded_avx2,
  finish_f16_norm_avx2,
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

static AVX512 void
gather_pairs_avx512 (const guint8 *y, gint wy, const guint8 *c1, const guint8 *c2, gint wc,
    const gint32 *xs, gint n, guint8 *restrict cy, guint8 *restrict cu, guint8 *restrict cv)
{
  gint i = 0;
  if (wy >= 4 && wc >= 4) {
    const __m512i ymax = _mm512_set1_epi32 (wy - 4), cmax = _mm512_set1_epi32 (wc - 4);
    const __m512i one = _mm512_set1_epi32 (1);
    for (; i + 16 <= n; i += 16) {
      __m512i x = _mm512_loadu_si512 ((const void *) (xs + i));
      if (y) {
        __m512i g = gather16 (y, x, ymax);
        store_b16 (cy + i, g);
        store_b16 (cy + n + i, _mm512_srli_epi32 (g, 8));
      }
      if (!c1)
        continue;
      __m512i odd = _mm512_and_si512 (x, one);
      if (!c2) {
        __m512i g = gather16 (c1, _mm512_andnot_si512 (one, x), cmax);
        store_b16 (cu + i, g);
        store_b16 (cv + i, _mm512_srli_epi32 (g, 8));
        __m512i g1 = _mm512_srlv_epi32 (g, _mm512_slli_epi32 (odd, 4));
        store_b16 (cu + n + i, g1);
        store_b16 (cv + n + i, _mm512_srli_epi32 (g1, 8));
      } else {
        __m512i h = _mm512_srli_epi32 (x, 1);
        __m512i gu = gather16 (c1, h, cmax), gv = gather16 (c2, h, cmax);
        store_b16 (cu + i, gu);
        store_b16 (cv + i, gv);
        __m512i sh = _mm512_slli_epi32 (odd, 3);
        store_b16 (cu + n + i, _mm512_srlv_epi32 (gu, sh));
        store_b16 (cv + n + i, _mm512_srlv_epi32 (gv, sh));
      }
    }
  }
  gather_pairs_from (y, c1, c2, xs, i, n, n, cy, cu, cv);
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

static const CscKernels kernels_avx512 = {
  "avx512", BLK, prep_444_avx512, row_avx512, pair_avx512, u8_to_f16_avx2, gather_avx512,
  gather_pairs_avx512, NULL, hpass_expanded_avx512, finish_f16_norm_avx512,
};

/* ---- AVX-512 VBMI: pair gathers as byte permutes over 128-byte windows --- */

#define VBMI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi")))

static VBMI void
gather_pairs_vbmi (const guint8 *y, const guint8 *c1, const guint8 *c2, const gint32 *xs,
    gint n, const PairWindows *pw, guint8 *restrict cy, guint8 *restrict cu,
    guint8 *restrict cv)
{
  for (gint b = 0; b < pw->n_blocks; b++) {
    gint i0 = 8 * b;
    if (!pw->ok[b]) {
      gather_pairs_from (y, c1, c2, xs, i0, i0 + 8, n, cy, cu, cv);
      continue;
    }
    if (y) {
      const guint8 *w = y + pw->ybase[b];
      __m512i idx = _mm512_castsi128_si512 (_mm_loadu_si128 ((const __m128i *) (pw->yidx + 64 * b)));
      __m128i r = _mm512_castsi512_si128 (_mm512_permutex2var_epi8 (
              _mm512_loadu_si512 ((const void *) w), idx, _mm512_loadu_si512 ((const void *) (w + 64))));
      _mm_storel_epi64 ((__m128i *) (cy + i0), r);
      _mm_storel_epi64 ((__m128i *) (cy + n + i0), _mm_unpackhi_epi64 (r, r));
    }
    if (!c1)
      continue;
    __m512i idx = _mm512_castsi256_si512 (_mm256_loadu_si256 ((const __m256i *) (pw->cidx + 64 * b)));
    if (!c2) {
      const guint8 *w = c1 + pw->cbase[b];
      __m512i r = _mm512_permutex2var_epi8 (_mm512_loadu_si512 ((const void *) w), idx,
          _mm512_loadu_si512 ((const void *) (w + 64)));
      __m128i uu = _mm512_castsi512_si128 (r), vv = _mm512_extracti32x4_epi32 (r, 1);
      _mm_storel_epi64 ((__m128i *) (cu + i0), uu);
      _mm_storel_epi64 ((__m128i *) (cu + n + i0), _mm_unpackhi_epi64 (uu, uu));
      _mm_storel_epi64 ((__m128i *) (cv + i0), vv);
      _mm_storel_epi64 ((__m128i *) (cv + n + i0), _mm_unpackhi_epi64 (vv, vv));
    } else {
      __m128i uu = _mm512_castsi512_si128 (_mm512_permutexvar_epi8 (idx,
              _mm512_loadu_si512 ((const void *) (c1 + pw->cbase[b]))));
      __m128i vv = _mm512_castsi512_si128 (_mm512_permutexvar_epi8 (idx,
              _mm512_loadu_si512 ((const void *) (c2 + pw->cbase[b]))));
      _mm_storel_epi64 ((__m128i *) (cu + i0), uu);
      _mm_storel_epi64 ((__m128i *) (cu + n + i0), _mm_unpackhi_epi64 (uu, uu));
      _mm_storel_epi64 ((__m128i *) (cv + i0), vv);
      _mm_storel_epi64 ((__m128i *) (cv + n + i0), _mm_unpackhi_epi64 (vv, vv));
    }
  }
  gather_pairs_from (y, c1, c2, xs, 8 * pw->n_blocks, n, n, cy, cu, cv);
}

static const CscKernels kernels_avx512_vbmi = {
  "avx512-vbmi", BLK, prep_444_avx512, row_avx512, pair_avx512, u8_to_f16_avx2, gather_avx512,
  gather_pairs_avx512, gather_pairs_vbmi, hpass_expanded_avx512, finish_f16_norm_avx512,
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

const CscKernels *
m2i_csc_kernels_c (void)
{
  init_once ();
  return &kernels_c;
}

const CscKernels *
m2i_csc_kernels (void)
{
  init_once ();
#ifdef HAVE_X86
  M2iCpuFlags f = m2i_cpu_flags ();
  if ((f & M2I_CPU_AVX512F) && (f & M2I_CPU_F16C)) {
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
