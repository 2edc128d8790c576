/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* conv-dw-avx512.c — the direct convolution's row kernels with AVX-512
 * (conv-dw.h): 16 outputs a vector, stride 2 as two loads and a permute,
 * the row's ends by masked loads and stores. */
#include "conv-dw.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define DW_TARGET "avx512f,avx512vl,avx512bw,avx512dq,fma"

/* Lanes [lo, hi) of 16 (either bound may lie outside [0, 16]). */
static inline __attribute__ ((always_inline)) __mmask16
range16 (gint64 lo, gint64 hi)
{
  lo = CLAMP (lo, 0, 16);
  hi = CLAMP (hi, 0, 16);
  return hi <= lo ? 0 : (__mmask16) (((1u << hi) - 1) & ~((1u << lo) - 1));
}

static inline __attribute__ ((always_inline, target (DW_TARGET))) __m512
load_s2 (const float *p)
{
  const __m512i even = _mm512_setr_epi32 (0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26,
      28, 30);
  return _mm512_permutex2var_ps (_mm512_loadu_ps (p), even, _mm512_loadu_ps (p + 16));
}

static inline __attribute__ ((always_inline, target (DW_TARGET))) __m512
load_s2_part (const float *p, __mmask16 m0, __mmask16 m1)
{
  const __m512i even = _mm512_setr_epi32 (0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26,
      28, 30);
  return _mm512_permutex2var_ps (_mm512_maskz_loadu_ps (m0, p), even,
      _mm512_maskz_loadu_ps (m1, p + 16));
}

#define DW_NAME(x) avx512_##x
#define DW_VEC __m512
#define DW_W 16
#define DW_ZERO() _mm512_setzero_ps ()
#define DW_SET1(x) _mm512_set1_ps (x)
#define DW_LOAD(p) _mm512_loadu_ps (p)
#define DW_FMA(a, b, c) _mm512_fmadd_ps (a, b, c)
#define DW_ADD(a, b) _mm512_add_ps (a, b)
#define DW_MAX(a, b) _mm512_max_ps (a, b)
#define DW_STORE(p, v) _mm512_storeu_ps (p, v)
#define DW_LOAD_S2(p) load_s2 (p)
#define DW_MASK __mmask16
#define DW_RANGE(lo, hi) range16 (lo, hi)
#define DW_LOAD_PART(p, m) _mm512_maskz_loadu_ps (m, (p))
#define DW_LOAD_S2_PART(p, m0, m1) load_s2_part (p, m0, m1)
#define DW_STORE_PART(p, v, n) _mm512_mask_storeu_ps (p, range16 (0, n), v)
#include "conv-dw-rows.h"

IrDwRows
ir_dw_rows_avx512 (const IrDwGeom *g)
{
  return avx512_pick (g);
}

/* ---- The plane kernel (conv-dw.h: IrDwPlane) ---------------------------- */

#define PL_INL static inline __attribute__ ((always_inline, target (DW_TARGET)))

/* The input plane @in into the slot planes at @slots (conv-dw.h). Stride
 * 1: the image with the pads inserted by expanding loads (fill[]). Stride
 * 2: each slot row from masked loads of its image row (zeros outside it)
 * and permutes, whole vectors, so a row's last vector spills into the
 * next row, which is written after it, and the last row's into the slack
 * (which ir_dw_run () zeroed: it only ever holds finite values). */
PL_INL void
plane_slots (const IrDwGeom *g, const float *in, float *slots, const gint64 S)
{
  if (S == 1) {
    /* the image with its pads inserted: each vector of the slot plane
     * expanded from the next pixels of the image */
    for (gint64 v = 0; v < g->nf; v++) {
      __mmask16 m = g->fill[v];
      _mm512_storeu_ps (slots + v * 16, _mm512_maskz_expandloadu_ps (m, in));
      in += __builtin_popcount (m);
    }
    return;
  }
  const gint64 gw = g->gw, gh = g->gh, iw = g->w, ih = g->h, pt = g->pt, pl = g->pl;
  const gint64 slot = g->slot, chunks = (gw + 15) / 16;
  const __m512i even = _mm512_setr_epi32 (0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26,
      28, 30);
  const __m512i odd = _mm512_add_epi32 (even, _mm512_set1_epi32 (1));
  /* the lanes of each chunk of 32 columns inside the image row, the same
   * for every row */
  __mmask16 m0[IR_DW_PLANE_CHUNKS], m1[IR_DW_PLANE_CHUNKS];
  for (gint64 c = 0; c < chunks; c++) {
    gint64 c0 = c * 32 - pl;           /* the image column of lane 0 (slot d = 0) */
    m0[c] = range16 (-c0, iw - c0);
    m1[c] = range16 (-c0 - 16, iw - c0 - 16);
  }
  for (gint64 b = 0; b < 2; b++) {
    float *d0 = slots + b * 2 * slot, *d1 = d0 + slot;
    for (gint64 r = 0; r < gh; r++, d0 += gw, d1 += gw) {
      gint64 iy = r * 2 + b - pt;
      if (iy < 0 || iy >= ih) {
        for (gint64 c = 0; c < chunks; c++) {
          _mm512_storeu_ps (d0 + c * 16, _mm512_setzero_ps ());
          _mm512_storeu_ps (d1 + c * 16, _mm512_setzero_ps ());
        }
        continue;
      }
      const float *src = in + iy * iw - pl;
      for (gint64 c = 0; c < chunks; c++) {
        __m512 a = _mm512_maskz_loadu_ps (m0[c], src + c * 32);
        __m512 h = _mm512_maskz_loadu_ps (m1[c], src + c * 32 + 16);
        _mm512_storeu_ps (d0 + c * 16, _mm512_permutex2var_ps (a, even, h));
        _mm512_storeu_ps (d1 + c * 16, _mm512_permutex2var_ps (a, odd, h));
      }
    }
  }
}

/* The vector c lanes right of @cur: its lanes c.. and then @next's (c a
 * constant 0 to 4 once unrolled; valignd takes an immediate). */
#define ALIGNR(cur, next, c) \
    _mm512_castsi512_ps (_mm512_alignr_epi32 (_mm512_castps_si512 (next), \
            _mm512_castps_si512 (cur), c))
#define SHIFTED(cur, next, c) ((c) == 0 ? (cur) : (c) == 1 ? ALIGNR (cur, next, 1) : \
    (c) == 2 ? ALIGNR (cur, next, 2) : (c) == 3 ? ALIGNR (cur, next, 3) : \
    ALIGNR (cur, next, 4))

/* NB vectors of the grid from vector v: the K·K taps of each, summed in
 * the order kh, kw, + bias, ReLU; lanes of keep[] stored, packed, at
 * out + *n. */
PL_INL void
plane_block (const IrDwGeom *g, const float *slots, const __m512 *wv, const float *bias,
    gboolean relu, float *out, gint64 *n, gint64 v, const gint64 K, const gint64 S,
    const gint NB)
{
  __m512 acc[8];
#pragma GCC unroll 8
  for (gint i = 0; i < NB; i++)
    acc[i] = _mm512_setzero_ps ();
  /* Per kernel row and slot column d: one load per vector (and one
   * past the block when a tap reads further right), the taps c columns
   * right of it by valignd from that vector and the next. */
#pragma GCC unroll 8
  for (gint64 kh = 0; kh < K; kh++)
#pragma GCC unroll 2
    for (gint64 d = 0; d < S; d++) {
      const float *p = slots + ((kh % S) * S + d) * g->slot + (kh / S) * g->gw + v * 16;
      const gint64 taps = (K - d + S - 1) / S;      /* kw = d, d + S, ... < K */
      __m512 cur = _mm512_loadu_ps (p);
#pragma GCC unroll 8
      for (gint i = 0; i < NB; i++) {
        __m512 next = taps > 1 ? _mm512_loadu_ps (p + (i + 1) * 16) : cur;
#pragma GCC unroll 5
        for (gint64 c = 0; c < taps; c++)
          acc[i] = _mm512_fmadd_ps (wv[kh * K + c * S + d], SHIFTED (cur, next, c), acc[i]);
        cur = taps > 1 ? next : (i + 1 < NB ? _mm512_loadu_ps (p + (i + 1) * 16) : cur);
      }
    }
#pragma GCC unroll 8
  for (gint i = 0; i < NB; i++) {
    __m512 o = acc[i];
    if (bias)
      o = _mm512_add_ps (o, _mm512_set1_ps (*bias));
    if (relu)
      o = _mm512_max_ps (o, _mm512_setzero_ps ());
    __mmask16 m = g->keep[v + i];
    gint c = __builtin_popcount (m);
    _mm512_mask_storeu_ps (out + *n, (__mmask16) ((1u << c) - 1), _mm512_maskz_compress_ps (m, o));
    *n += c;
  }
}

PL_INL void
plane_run (const IrDwGeom *g, const float *in, const float *w, const float *bias,
    gboolean relu, float *out, float *scratch, const gint64 K, const gint64 S)
{
  plane_slots (g, in, scratch, S);
  __m512 wv[25];
#pragma GCC unroll 25
  for (gint64 t = 0; t < K * K; t++)
    wv[t] = _mm512_set1_ps (w[t]);
  gint64 n = 0, v = 0;
  for (; v + 4 < g->nv; v += 8)
    plane_block (g, scratch, wv, bias, relu, out, &n, v, K, S, 8);
  for (; v < g->nv; v += 4)
    plane_block (g, scratch, wv, bias, relu, out, &n, v, K, S, 4);
}

/* In place (g->cols, 3×3): NB vectors of the output plane from vector v,
 * the input plane @in read at the taps' offsets (the taps right of a load
 * by valignd from it and the next vector), masked loads where a block
 * reaches past either end of the plane (@edge), masked multiply-adds for
 * the taps left and right of a row. Without the slot plane's copy and
 * the compress of the grid's extra columns: 720 × 19×19 59 → 53 µs,
 * 144 × 38×38 47 → 41, 108 × 75×75 134 → 102, 232 × 48×84 209 → 160
 * (bench-conv, one thread, Zen 5). */
PL_INL void
inplace_block (const IrDwGeom *g, const float *in, const __m512 *wv, const float *bias,
    gboolean relu, float *out, gint64 v, const gint64 K, const gint NB, gboolean edge)
{
  const gint64 hw = g->h * g->w;
  const guint16 *cols = g->cols + v * K, *rows = g->rows + v * K;
  __m512 acc[8];
#pragma GCC unroll 8
  for (gint i = 0; i < NB; i++)
    acc[i] = _mm512_setzero_ps ();
#pragma GCC unroll 3
  for (gint64 kh = 0; kh < K; kh++) {
    const gint64 off = v * 16 + (kh - (K / 2)) * g->w - (K / 2);
    const float *p = in + off;
    __m512 cur = edge ? _mm512_maskz_loadu_ps (_load_mask16 ((__mmask16 *) (rows + kh)), p) :
        _mm512_loadu_ps (p);
#pragma GCC unroll 8
    for (gint i = 0; i < NB; i++) {
      __m512 next = edge ? _mm512_maskz_loadu_ps (_load_mask16 ((__mmask16 *) (rows + (i + 1) * K
                  + kh)), p + (i + 1) * 16) : _mm512_loadu_ps (p + (i + 1) * 16);
#pragma GCC unroll 3
      for (gint64 c = 0; c < K; c++) {
        __m512 x = SHIFTED (cur, next, c);
        if (c == (K / 2))
          acc[i] = _mm512_fmadd_ps (wv[kh * K + c], x, acc[i]);
        else
          acc[i] = _mm512_mask3_fmadd_ps (wv[kh * K + c], x, acc[i],
              _load_mask16 ((__mmask16 *) (cols + i * K + c)));
      }
      cur = next;
    }
  }
#pragma GCC unroll 8
  for (gint i = 0; i < NB; i++) {
    const gint64 j = (v + i) * 16;
    if (j >= hw)
      break;
    __m512 o = acc[i];
    if (bias)
      o = _mm512_add_ps (o, _mm512_set1_ps (*bias));
    if (relu)
      o = _mm512_max_ps (o, _mm512_setzero_ps ());
    if (j + 16 <= hw)
      _mm512_storeu_ps (out + j, o);
    else
      _mm512_mask_storeu_ps (out + j, range16 (0, hw - j), o);
  }
}

PL_INL void
inplace_run (const IrDwGeom *g, const float *in, const float *w, const float *bias,
    gboolean relu, float *out, const gint64 K)
{
  const gint64 hw = g->h * g->w;
  __m512 wv[9];
#pragma GCC unroll 9
  for (gint64 t = 0; t < K * K; t++)
    wv[t] = _mm512_set1_ps (w[t]);
  /* A block of NB vectors from v reads from v·16 − w − 1 to
   * (v + NB + 1)·16 + w − 1: blocks of eight inside the plane, of four at
   * its ends, masked where they reach past them (a 19×19 plane: 4 + 8 +
   * 8 + 3 vectors, two of them masked, not 8 + 8 + 7 with two masked). */
  const gint64 lo = (K / 2) * g->w + (K / 2), hi = (K - 1 - (K / 2)) * g->w - (K / 2);
  gint64 v = 0;
  while (v < g->nv) {
    gboolean below = v * 16 < lo;
    if (v + 4 < g->nv && !below && (v + 9) * 16 + hi <= hw) {
      inplace_block (g, in, wv, bias, relu, out, v, K, 8, FALSE);
      v += 8;
    } else {
      if (!below && (v + 5) * 16 + hi <= hw)
        inplace_block (g, in, wv, bias, relu, out, v, K, 4, FALSE);
      else
        inplace_block (g, in, wv, bias, relu, out, v, K, 4, TRUE);
      v += 4;
    }
  }
}

#define PL_FN(NAME, K, S) \
  static void __attribute__ ((target (DW_TARGET))) \
  NAME (const IrDwGeom *g, const float *in, const float *w, const float *bias, \
      gboolean relu, float *out, float *scratch) \
  { \
    if (K == 3 && S == 1 && g->cols) \
      inplace_run (g, in, w, bias, relu, out, K); \
    else \
      plane_run (g, in, w, bias, relu, out, scratch, K, S); \
  }

PL_FN (plane_k3s1, 3, 1)
PL_FN (plane_k3s2, 3, 2)
PL_FN (plane_k5s1, 5, 1)
PL_FN (plane_k5s2, 5, 2)

IrDwPlane
ir_dw_plane_avx512 (const IrDwGeom *g)
{
  if (g->kw == 3)
    return g->sw == 1 ? plane_k3s1 : plane_k3s2;
  return g->sw == 1 ? plane_k5s1 : plane_k5s2;
}

#else

IrDwPlane
ir_dw_plane_avx512 (const IrDwGeom *g)
{
  return NULL;
}

IrDwRows
ir_dw_rows_avx512 (const IrDwGeom *g)
{
  return NULL;
}

#endif
