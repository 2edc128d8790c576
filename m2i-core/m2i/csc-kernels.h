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

/* Luma and chroma byte offsets of tap column x (and x + 1): NV12 U at
 * x & ~1 (V one byte further), I420 U and V at x >> 1. */
static inline gint
fpair_coff (gint x, gboolean nv12)
{
  return nv12 ? (x & ~1) : x >> 1;
}

/* Source bytes of outputs i .. i+15 as floats, for blocks the SIMD loads
 * cannot take (the tail, narrow rows): luma taps of rows @y0 (ya0, ya1) and
 * @y1 (yb0, yb1), chroma taps u0, u1, v0, v1. Lanes past t->n repeat the
 * last column (xs is padded), so every read stays inside the rows. */
typedef struct {
  float ya0[16], ya1[16], yb0[16], yb1[16], u0[16], u1[16], v0[16], v1[16];
} FPairLanes;

void m2i_csc_fpair_fill (const FPairTable *t, gint i, const guint8 *y0, const guint8 *y1,
    const guint8 *c1, const guint8 *c2, FPairLanes *l);

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
