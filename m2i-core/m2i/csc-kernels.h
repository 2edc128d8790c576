/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* csc-kernels.h — what the kernel files of the csc (csc-c.c, csc-fpair.c,
 * csc-avx2.c, csc-avx512.c) share; nothing outside them includes it.
 *
 * Plain-C kernels the SIMD levels reuse for tails and narrow rows, the
 * constants of the float pair path, the tail handling and per-mode
 * instantiation of the SIMD pair and row kernels, and the shuffle masks of
 * their interleaved stores.
 */
#pragma once

#include "csc-private.h"

#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#define HAVE_X86 1
#include <immintrin.h>
#endif

G_BEGIN_DECLS

/* ---- plain C, shared (csc-c.c) --------------------------------------------- */

/* u8 -> fp16 bits of every byte value (filled by m2i_csc_init_tables). */
extern m2i_f16 m2i_csc_u8_f16[256];
void m2i_csc_init_tables (void);

void m2i_csc_gather_c (const guint8 *y, gint wy, const guint8 *c1, const guint8 *c2, gint wc,
    const gint32 *xs, gint K, guint8 *restrict cy, guint8 *restrict cu, guint8 *restrict cv);
void m2i_csc_gather_pairs_c (const guint8 *y, gint wy, const guint8 *c1, const guint8 *c2, gint wc,
    const gint32 *xs, gint n, guint8 *cy, guint8 *cu, guint8 *cv);
void m2i_csc_finish_f16_norm_c (const float *v, const float *sub, const float *mul,
    const float *add, gint n, m2i_f16 *out);
void m2i_csc_norm_f16_c (const m2i_f16 *in, m2i_f16 *out, gint n, float sub, float mul,
    float add);

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

/* ---- float pair path (csc-fpair.c) ------------------------------------------ */

/* The csc of the float pair path, in fp32 (docs/m2i-engine.md):
 *   t = Y·1.164 + K,  K_R = V·1.596 + c_R,  K_G = (V·-0.813 + c_G) + U·-0.391,
 *   K_B = U·2.018 + c_B
 * on raw bytes Y, U, V, where c_* fold the offsets, the +500 and half of the
 * next unit: the exact value (1164(Y-16) + k·(C-128) + 500.5) / 1000 is at
 * least 0.0005 away from an integer, and the fp32 evaluation (with or
 * without FMA) stays within 0.00013 of it, so floor (t) is exactly the
 * integer formula. The kernels take the floor by one addition,
 *   u = t + (M − 0.5),  M = 2^23,
 * rounded to nearest: where the sum is at least M the fp32 grid is 1, and
 * t − 0.5 is never within 0.00037 of a half integer, so u = M + floor (t);
 * below (t < 0.5) u < M + 1. Clamping u to [M, M + 255] (as integers: the
 * bits of positive floats order like the floats) gives M + DESIGN's value,
 * c. The horizontal pass takes w·c = fma (w, u, −w·M) exactly rounded (w·M
 * is exact), or without FMA (u − M)·w. Checked on all 256³ triples by
 * test-m2i-csc at every level. */
#define FP_CY 1.164f
#define FP_CVR 1.596f
#define FP_CVG (-0.813f)
#define FP_CUG (-0.391f)
#define FP_CUB 2.018f
#define FP_KR ((float) ((-18624.0 - 204288.0 + 500.5) / 1000.0))
#define FP_KG ((float) ((-18624.0 + 104064.0 + 50048.0 + 500.5) / 1000.0))
#define FP_KB ((float) ((-18624.0 - 258304.0 + 500.5) / 1000.0))
#define FP_M 8388608.0f
#define FP_MH 8388607.5f
#define FP_MBITS 0x4b000000

/* Luma and chroma byte offsets of tap column x (and x + 1): NV12 U at
 * x & ~1 (V one byte further), I420 U and V at x >> 1. */
static inline gint
fpair_coff (gint x, gboolean nv12)
{
  return nv12 ? (x & ~1) : x >> 1;
}

/* Source bytes of outputs i .. i+15 in the SIMD kernels' dword form, for
 * blocks no window takes (the tail, narrow rows, windows that do not fit):
 * luma Y(x) | Y(x + 1) << 8 of row @y; chroma U(x) | V(x) << 8 |
 * U(x + 1) << 16 | V(x + 1) << 24 (NV12 row @c1, or I420 rows @c1, @c2).
 * Lanes past t->n repeat the last column (xs is padded), so every read
 * stays inside the rows. */
static inline void
fpair_fill_luma (const FPairTable *t, gint i, const guint8 *y, guint32 l[16])
{
  for (int k = 0; k < 16; k++) {
    gint x = t->xs[i + k];
    l[k] = y[x] | (guint32) y[x + 1] << 8;
  }
}

static inline void
fpair_fill_chroma (const FPairTable *t, gint i, const guint8 *c1, const guint8 *c2, guint32 l[16])
{
  for (int k = 0; k < 16; k++) {
    gint x = t->xs[i + k], o0 = fpair_coff (x, t->nv12), o1 = fpair_coff (x + 1, t->nv12);
    guint32 v0 = t->nv12 ? c1[o0 + 1] : c2[o0], v1 = t->nv12 ? c1[o1 + 1] : c2[o1];
    l[k] = c1[o0] | v0 << 8 | (guint32) c1[o1] << 16 | v1 << 24;
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

/* ---- tails of the SIMD pair and row kernels ---------------------------------- */

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

/* Calls @loop (..., mode, bgr) with the output mode and channel order of
 * @spec as constants, so that an always-inline loop is compiled once per
 * case without per-block branches on them (fp16 and fp32 share a case: their
 * stores read the spec). */
#define CSC_BY_MODE(spec, loop, ...) \
  do { \
    if ((spec)->mode == CSC_OUT_IL_U8 && (spec)->bgr) \
      loop (__VA_ARGS__, CSC_OUT_IL_U8, TRUE); \
    else if ((spec)->mode == CSC_OUT_IL_U8) \
      loop (__VA_ARGS__, CSC_OUT_IL_U8, FALSE); \
    else if ((spec)->mode == CSC_OUT_PL_U8) \
      loop (__VA_ARGS__, CSC_OUT_PL_U8, FALSE); \
    else \
      loop (__VA_ARGS__, CSC_OUT_PL_F16, FALSE); \
  } while (0)

/* m2i_fpair_shuf8 for blocks of FP_LOAD_SHUF: four windows, two vectors */
static inline __attribute__((target("avx2"), always_inline)) __m256i
m2i_fpair_shuf8_w4 (const guint8 *row, const guint8 *row2, const FPairShuf *s)
{
  __m256i r = _mm256_shuffle_epi8 (_mm256_loadu2_m128i ((const __m128i *) (row + s->off[2]),
          (const __m128i *) (row + s->off[0])), _mm256_loadu_si256 ((const __m256i *) s->shuf[0]));
  r = _mm256_or_si256 (r, _mm256_shuffle_epi8 (_mm256_loadu2_m128i ((const __m128i *) (row
                  + s->off[3]), (const __m128i *) (row + s->off[1])),
          _mm256_loadu_si256 ((const __m256i *) s->shuf[1])));
  if (row2) {
    r = _mm256_or_si256 (r, _mm256_shuffle_epi8 (_mm256_loadu2_m128i ((const __m128i *) (row2
                    + s->off[2]), (const __m128i *) (row2 + s->off[0])),
            _mm256_loadu_si256 ((const __m256i *) s->shuf2[0])));
    r = _mm256_or_si256 (r, _mm256_shuffle_epi8 (_mm256_loadu2_m128i ((const __m128i *) (row2
                    + s->off[3]), (const __m128i *) (row2 + s->off[1])),
            _mm256_loadu_si256 ((const __m256i *) s->shuf2[1])));
  }
  return r;
}

/* Keeps a vcvtps2ph result in a register before its store: gcc otherwise
 * folds the store into the memory-destination form, which takes about two
 * cycles per instruction on AMD Zen 5 (1.5 at 512 bits) against under one
 * for the register form and a plain store (measured on this machine). */
#define M2I_F16_REG(x) __asm__ ("" : "+v" (x))

/* ---- per-level tables (csc-avx2.c, csc-avx512.c; NULL off x86) ------------ */

extern const CscKernels m2i_csc_kernels_c_table;
#ifdef HAVE_X86
extern const CscKernels m2i_csc_kernels_avx2_table, m2i_csc_kernels_avx512_table,
    m2i_csc_kernels_vbmi_table;
/* pshufb masks of the interleaved stores (per 128-bit lane, 16 pixels):
 * byte pairs of the three kinds (f,g of even pixels, s,f of an even and an
 * odd pixel, g,s of odd pixels; f, g, s the channels in memory order), word
 * k of a kind moved to word (3k + kind) mod 8, where the output holds it;
 * the g,s kind comes as [g of the 8 odd pixels | s of them]. */
#define CSC_IL_W(q, kind) ((3 * ((q) + 8 - (kind))) % 8)     /* inverse map */
#define CSC_IL_PAIR(q, kind) 2 * CSC_IL_W (q, kind), 2 * CSC_IL_W (q, kind) + 1
#define CSC_IL_SPLIT(q) CSC_IL_W (q, 2), 8 + CSC_IL_W (q, 2)
#define CSC_IL_8(M, ...) M (0, ##__VA_ARGS__), M (1, ##__VA_ARGS__), M (2, ##__VA_ARGS__), \
    M (3, ##__VA_ARGS__), M (4, ##__VA_ARGS__), M (5, ##__VA_ARGS__), M (6, ##__VA_ARGS__), \
    M (7, ##__VA_ARGS__)
static const guint8 csc_il_shuf[3][16] = {
  { CSC_IL_8 (CSC_IL_PAIR, 0) }, { CSC_IL_8 (CSC_IL_PAIR, 1) }, { CSC_IL_8 (CSC_IL_SPLIT) },
};
/* [8 even | 8 odd] bytes of 16 pixels to pixel order */
static const guint8 csc_eo_to_natural[16] = { 0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15 };

/* The dword lanes of one block of 8 outputs from its 16-byte windows
 * (csc-private.h, FPairShuf): @row the luma or NV12 UV row, or the I420 U
 * row with @row2 the V row (NULL otherwise). Used by the AVX2 float pair
 * kernel for blocks of FP_LOAD_SHUF_WIDE (blocks of FP_LOAD_SHUF take
 * m2i_fpair_shuf8_w4 at both levels). */
static inline __attribute__((target("avx2"), always_inline)) __m256i
m2i_fpair_shuf8 (const guint8 *row, const guint8 *row2, const FPairShuf *s)
{
  gint h = s->nwin / 2;
  __m256i r = _mm256_setzero_si256 ();
  for (gint k = 0; k < 4; k++) {
    if (k == h)
      break;
    __m256i x = _mm256_loadu2_m128i ((const __m128i *) (row + s->off[k + h]),
        (const __m128i *) (row + s->off[k]));
    r = _mm256_or_si256 (r, _mm256_shuffle_epi8 (x,
            _mm256_loadu_si256 ((const __m256i *) s->shuf[k])));
    if (row2) {
      x = _mm256_loadu2_m128i ((const __m128i *) (row2 + s->off[k + h]),
          (const __m128i *) (row2 + s->off[k]));
      r = _mm256_or_si256 (r, _mm256_shuffle_epi8 (x,
              _mm256_loadu_si256 ((const __m256i *) s->shuf2[k])));
    }
  }
  return r;
}

/* Fills the AVX-512 VBMI store's permute indices (once, before use). */
void m2i_csc_init_avx512 (void);

#define M2I_CSC_AVX2 __attribute__((target("avx2,f16c,fma")))
/* AVX2 kernels the AVX-512 levels reuse for tails and other tap counts */
M2I_CSC_AVX2 void m2i_csc_u8_to_f16_avx2 (const guint8 *src, m2i_f16 *dst, gint n);
M2I_CSC_AVX2 void m2i_csc_hpass_expanded_avx2 (const float *w, gint T, gint n, const guint8 *p,
    gint K, float *dst);
M2I_CSC_AVX2 void m2i_csc_finish_f16_norm_avx2 (const float *v, const float *sub,
    const float *mul, const float *add, gint n, m2i_f16 *out);
#endif

G_END_DECLS
