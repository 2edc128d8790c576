/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* resize-kernels-x86.c — AVX2 and AVX-512 row kernels of a resize.
 *
 * They give the same bits as the plain C kernels (resize-kernels.c): each
 * vector lane is one output value and runs the C loop's operations in the
 * C loop's order (acc = 0; acc = acc + w*x per tap, separate multiply and
 * add, no FMA). The horizontal pass gathers source values through the
 * expanded per-channel-count table (resize-internal.h); a block whose 32-bit
 * gathers could read past the end of a u8 or fp16 row is done by the C code.
 * Compiled with per-function target attributes and chosen at run time.
 */
#include "resize-internal.h"

#if defined(__x86_64__) && defined(__GNUC__)

#include <immintrin.h>
#include <string.h>

#define AVX2 __attribute__ ((target ("avx2,f16c")))
#define AVX512 __attribute__ ((target ("avx512f,avx512bw,avx512dq,avx512vl,avx2,f16c")))

/* ---- AVX2: 8 lanes ------------------------------------------------------ */

AVX2 static inline __m256
gather8_u8 (const void *src, __m256i off)
{
  __m256i g = _mm256_i32gather_epi32 ((const int *) src, off, 1);
  return _mm256_cvtepi32_ps (_mm256_and_si256 (g, _mm256_set1_epi32 (0xff)));
}

AVX2 static inline __m256
gather8_f16 (const void *src, __m256i off)
{
  __m256i g = _mm256_i32gather_epi32 ((const int *) src, off, 2);
  g = _mm256_and_si256 (g, _mm256_set1_epi32 (0xffff));
  /* Pack to 16 bits in each 128-bit lane, then bring the two quarter
   * results together: qwords 0 and 2. */
  __m256i p = _mm256_permute4x64_epi64 (_mm256_packus_epi32 (g, g), 0x08);
  return _mm256_cvtph_ps (_mm256_castsi256_si128 (p));
}

AVX2 static inline __m256
gather8_f32 (const void *src, __m256i off)
{
  return _mm256_i32gather_ps ((const float *) src, off, 4);
}

/* Clamp to [0,255] and round half away from zero, as floats. */
AVX2 static inline __m256
round_half_away8 (__m256 v)
{
  v = _mm256_min_ps (_mm256_max_ps (v, _mm256_setzero_ps ()), _mm256_set1_ps (255.0f));
  __m256 t = _mm256_round_ps (v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  __m256 up = _mm256_cmp_ps (_mm256_sub_ps (v, t), _mm256_set1_ps (0.5f), _CMP_GE_OQ);
  return _mm256_add_ps (t, _mm256_and_ps (up, _mm256_set1_ps (1.0f)));
}

AVX2 static inline __m256
round_f16_8 (__m256 v)
{
  return _mm256_cvtph_ps (_mm256_cvtps_ph (v, _MM_FROUND_TO_NEAREST_INT));
}

typedef enum { SRC_U8, SRC_F16, SRC_F32 } SrcType;

/* The C kernel for values [e0, e1) of a row. */
static inline void
hvalues_c (const M2iResizePlan *plan, SrcType type, const void *src, gint C, float *dst,
    gint e0, gint e1)
{
  if (type == SRC_U8)
    m2i_resize_hvalues_u8_c (plan, src, C, dst, e0, e1);
  else if (type == SRC_F16)
    m2i_resize_hvalues_f16_c (plan, src, C, dst, e0, e1);
  else
    m2i_resize_hvalues_f32_c (plan, src, C, dst, e0, e1);
}

AVX2 static inline __m256i
loadi8 (const gint32 *p)
{
  return _mm256_loadu_si256 ((const __m256i *) p);
}

/* Intermediate rounding (pillow modes) and store of one block. */
AVX2 static inline void
finish8 (const M2iResizePlan *plan, SrcType type, __m256 *acc, float *dst, gint cnt)
{
  for (gint h = 0; h < 2; h++) {
    if (plan->round_intermediate && type == SRC_U8)
      acc[h] = round_half_away8 (acc[h]);
    else if (plan->round_intermediate && type == SRC_F16)
      acc[h] = round_f16_8 (acc[h]);
  }
  if (cnt == M2I_RESIZE_BLOCK) {
    _mm256_storeu_ps (dst, acc[0]);
    _mm256_storeu_ps (dst + 8, acc[1]);
  } else {
    float tmp[M2I_RESIZE_BLOCK];
    _mm256_storeu_ps (tmp, acc[0]);
    _mm256_storeu_ps (tmp + 8, acc[1]);
    memcpy (dst, tmp, (gsize) cnt * sizeof (float));
  }
}


/* 16 source values from @p converted to fp32, in two registers. */
AVX2 static inline void
window16 (SrcType type, const void *p, __m256 *w0, __m256 *w1)
{
  if (type == SRC_U8) {
    __m128i v = _mm_loadu_si128 ((const __m128i *) p);
    *w0 = _mm256_cvtepi32_ps (_mm256_cvtepu8_epi32 (v));
    *w1 = _mm256_cvtepi32_ps (_mm256_cvtepu8_epi32 (_mm_srli_si128 (v, 8)));
  } else if (type == SRC_F16) {
    __m256i v = _mm256_loadu_si256 ((const __m256i *) p);
    *w0 = _mm256_cvtph_ps (_mm256_castsi256_si128 (v));
    *w1 = _mm256_cvtph_ps (_mm256_extracti128_si256 (v, 1));
  } else {
    *w0 = _mm256_loadu_ps ((const float *) p);
    *w1 = _mm256_loadu_ps ((const float *) p + 8);
  }
}

AVX2 static inline __m256
gather8 (SrcType type, const void *src, __m256i off)
{
  return type == SRC_U8 ? gather8_u8 (src, off)
      : type == SRC_F16 ? gather8_f16 (src, off) : gather8_f32 (src, off);
}

/* The horizontal pass, 16 values per block, two halves of 8 lanes. A half
 * whose values all come from 16 consecutive source values loads them once
 * and permutes them per tap; otherwise it gathers. Blocks whose 32-bit
 * gathers could read past a u8 / fp16 row end run the C code. Every lane
 * computes ((0 + w0*x0) + w1*x1) + ... as the C kernel does. */
AVX2 static inline void
hpass_avx2 (const M2iResizePlan *plan, SrcType type, const void *src, gint channels,
    float *dst)
{
  const M2iResizeXTable *xt = m2i_resize_xtable (plan, channels);
  gint T = xt->taps, row_len = plan->in_width * channels;
  gsize es = type == SRC_U8 ? 1 : type == SRC_F16 ? 2 : 4;
  gint32 limit = type == SRC_U8 ? row_len - 4 : type == SRC_F16 ? row_len - 2 : G_MAXINT32;
  for (gint b = 0; b < xt->blocks; b++) {
    gint e0 = b * M2I_RESIZE_BLOCK;
    gint cnt = MIN (M2I_RESIZE_BLOCK, xt->n - e0);
    gboolean window[2];
    for (gint h = 0; h < 2; h++)
      window[h] = xt->span[2 * b + h] <= 16 && xt->lo[2 * b + h] + 16 <= row_len;
    if (!(window[0] && window[1]) && xt->max_offset[b] > limit) {
      hvalues_c (plan, type, src, channels, dst, e0, e0 + cnt);
      continue;
    }
    __m256 acc[2];
    for (gint h = 0; h < 2; h++) {
      const gint32 *o = xt->offset + (gsize) b * T * M2I_RESIZE_BLOCK + h * 8;
      const float *w = xt->weight + (gsize) b * T * M2I_RESIZE_BLOCK + h * 8;
      __m256 a = _mm256_setzero_ps ();
      if (window[h]) {
        gint32 lo = xt->lo[2 * b + h];
        __m256 w0, w1;
        window16 (type, (const guint8 *) src + (gsize) lo * es, &w0, &w1);
        __m256i base = _mm256_set1_epi32 (lo), seven = _mm256_set1_epi32 (7);
        for (gint t = 0; t < T; t++) {
          __m256i idx = _mm256_sub_epi32 (loadi8 (o + (gsize) t * M2I_RESIZE_BLOCK), base);
          __m256 x = _mm256_blendv_ps (_mm256_permutevar8x32_ps (w0, idx),
              _mm256_permutevar8x32_ps (w1, idx),
              _mm256_castsi256_ps (_mm256_cmpgt_epi32 (idx, seven)));
          a = _mm256_add_ps (a, _mm256_mul_ps (_mm256_loadu_ps (w + (gsize) t * M2I_RESIZE_BLOCK), x));
        }
      } else {
        for (gint t = 0; t < T; t++)
          a = _mm256_add_ps (a, _mm256_mul_ps (_mm256_loadu_ps (w + (gsize) t * M2I_RESIZE_BLOCK),
                  gather8 (type, src, loadi8 (o + (gsize) t * M2I_RESIZE_BLOCK))));
      }
      acc[h] = a;
    }
    finish8 (plan, type, acc, dst + e0, cnt);
  }
}

AVX2 static void
hpass_u8_avx2 (const M2iResizePlan *plan, const guint8 *src, gint channels, float *dst)
{
  hpass_avx2 (plan, SRC_U8, src, channels, dst);
}

AVX2 static void
hpass_f16_avx2 (const M2iResizePlan *plan, const guint16 *src, gint channels, float *dst)
{
  hpass_avx2 (plan, SRC_F16, src, channels, dst);
}

AVX2 static void
hpass_f32_avx2 (const M2iResizePlan *plan, const float *src, gint channels, float *dst)
{
  hpass_avx2 (plan, SRC_F32, src, channels, dst);
}

AVX2 static void
vpass_avx2 (const M2iResizePlan *plan, gint out_y, const float *const *rows, gint n,
    float *dst)
{
  gint T = plan->y.taps;
  const float *w = plan->y.weight + (gsize) out_y * T;
  gint e = 0;
  for (; e + 32 <= n; e += 32) {
    __m256 a0 = _mm256_setzero_ps (), a1 = a0, a2 = a0, a3 = a0;
    for (gint t = 0; t < T; t++) {
      __m256 wt = _mm256_set1_ps (w[t]);
      const float *r = rows[t] + e;
      a0 = _mm256_add_ps (a0, _mm256_mul_ps (wt, _mm256_loadu_ps (r)));
      a1 = _mm256_add_ps (a1, _mm256_mul_ps (wt, _mm256_loadu_ps (r + 8)));
      a2 = _mm256_add_ps (a2, _mm256_mul_ps (wt, _mm256_loadu_ps (r + 16)));
      a3 = _mm256_add_ps (a3, _mm256_mul_ps (wt, _mm256_loadu_ps (r + 24)));
    }
    _mm256_storeu_ps (dst + e, a0);
    _mm256_storeu_ps (dst + e + 8, a1);
    _mm256_storeu_ps (dst + e + 16, a2);
    _mm256_storeu_ps (dst + e + 24, a3);
  }
  for (; e + 8 <= n; e += 8) {
    __m256 a = _mm256_setzero_ps ();
    for (gint t = 0; t < T; t++)
      a = _mm256_add_ps (a, _mm256_mul_ps (_mm256_set1_ps (w[t]), _mm256_loadu_ps (rows[t] + e)));
    _mm256_storeu_ps (dst + e, a);
  }
  for (; e < n; e++) {
    float acc = 0.0f;
    for (gint t = 0; t < T; t++)
      acc += w[t] * rows[t][e];
    dst[e] = acc;
  }
}

AVX2 static void
round_u8_avx2 (const M2iResizePlan *plan, const float *src, guint8 *dst, gint n)
{
  gboolean trunc = plan->u8_round == M2I_RESIZE_ROUND_TRUNCATE;
  gint e = 0;
  for (; e + 8 <= n; e += 8) {
    __m256 v = _mm256_loadu_ps (src + e);
    if (trunc)
      v = _mm256_min_ps (_mm256_max_ps (v, _mm256_setzero_ps ()), _mm256_set1_ps (255.0f));
    else
      v = round_half_away8 (v);
    __m256i i = _mm256_cvttps_epi32 (v);
    __m128i p = _mm_packus_epi32 (_mm256_castsi256_si128 (i), _mm256_extracti128_si256 (i, 1));
    _mm_storel_epi64 ((__m128i *) (dst + e), _mm_packus_epi16 (p, p));
  }
  for (; e < n; e++) {
    float v = src[e];
    dst[e] = trunc ? (!(v > 0.0f) ? 0 : v >= 255.0f ? 255 : (guint8) (gint) v)
        : (guint8) m2i_resize_round_half_away_u8f (v);
  }
}

static const M2iResizeKernels kernels_avx2 = {
  "avx2", hpass_u8_avx2, hpass_f16_avx2, hpass_f32_avx2, vpass_avx2, round_u8_avx2,
};

const M2iResizeKernels *
m2i_resize_kernels_avx2 (void)
{
  return &kernels_avx2;
}

/* ---- AVX-512: 16 lanes -------------------------------------------------- */

AVX512 static inline __m512
gather16_u8 (const void *src, __m512i off)
{
  __m512i g = _mm512_i32gather_epi32 (off, src, 1);
  return _mm512_cvtepi32_ps (_mm512_and_si512 (g, _mm512_set1_epi32 (0xff)));
}

AVX512 static inline __m512
gather16_f16 (const void *src, __m512i off)
{
  __m512i g = _mm512_i32gather_epi32 (off, src, 2);
  return _mm512_cvtph_ps (_mm512_cvtepi32_epi16 (g));    /* keeps the low halves */
}

AVX512 static inline __m512
gather16_f32 (const void *src, __m512i off)
{
  return _mm512_i32gather_ps (off, src, 4);
}

AVX512 static inline __m512
round_half_away16 (__m512 v)
{
  v = _mm512_min_ps (_mm512_max_ps (v, _mm512_setzero_ps ()), _mm512_set1_ps (255.0f));
  __m512 t = _mm512_roundscale_ps (v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  __mmask16 up = _mm512_cmp_ps_mask (_mm512_sub_ps (v, t), _mm512_set1_ps (0.5f), _CMP_GE_OQ);
  return _mm512_mask_add_ps (t, up, t, _mm512_set1_ps (1.0f));
}

AVX512 static inline __m512i
loadi16 (const gint32 *p)
{
  return _mm512_loadu_si512 (p);
}

AVX512 static inline void
finish16 (const M2iResizePlan *plan, SrcType type, __m512 *acc, float *dst, gint cnt)
{
  __m512 v = acc[0];
  if (plan->round_intermediate && type == SRC_U8)
    v = round_half_away16 (v);
  else if (plan->round_intermediate && type == SRC_F16)
    v = _mm512_cvtph_ps (_mm512_cvtps_ph (v, _MM_FROUND_TO_NEAREST_INT));
  _mm512_mask_storeu_ps (dst, (__mmask16) ((1u << cnt) - 1), v);
}

/* 32 source values from @p (the first @span of them read, the rest 0:
 * masked loads, so never past the row end) as fp32. */
AVX512 static inline void
window32 (SrcType type, const void *p, gint span, __m512 *w0, __m512 *w1)
{
  __mmask16 m0 = span >= 16 ? 0xffff : (__mmask16) ((1u << span) - 1);
  __mmask16 m1 = span >= 32 ? 0xffff : span <= 16 ? 0 : (__mmask16) ((1u << (span - 16)) - 1);
  if (type == SRC_U8) {
    const guint8 *q = p;
    *w0 = _mm512_cvtepi32_ps (_mm512_cvtepu8_epi32 (_mm_maskz_loadu_epi8 (m0, q)));
    *w1 = _mm512_cvtepi32_ps (_mm512_cvtepu8_epi32 (_mm_maskz_loadu_epi8 (m1, q + 16)));
  } else if (type == SRC_F16) {
    const guint16 *q = p;
    *w0 = _mm512_cvtph_ps (_mm256_maskz_loadu_epi16 (m0, q));
    *w1 = _mm512_cvtph_ps (_mm256_maskz_loadu_epi16 (m1, q + 16));
  } else {
    const float *q = p;
    *w0 = _mm512_maskz_loadu_ps (m0, q);
    *w1 = _mm512_maskz_loadu_ps (m1, q + 16);
  }
}

AVX512 static inline __m512
gather16 (SrcType type, const void *src, __m512i off)
{
  return type == SRC_U8 ? gather16_u8 (src, off)
      : type == SRC_F16 ? gather16_f16 (src, off) : gather16_f32 (src, off);
}

/* Four whole source pixels (channels in lanes 4p..4p+3) at element offsets
 * off[0..3]: one 32-bit (u8) or 64-bit (fp16) gather, or four 128-bit loads
 * (fp32). Reads 4 values per pixel: the caller keeps off + 4 <= row length. */
AVX512 static inline __m512
pixels4 (SrcType type, const void *src, const gint32 *off)
{
  __m128i idx = _mm_loadu_si128 ((const __m128i *) off);
  if (type == SRC_U8)
    return _mm512_cvtepi32_ps (_mm512_cvtepu8_epi32 (
            _mm_i32gather_epi32 ((const int *) src, idx, 1)));
  if (type == SRC_F16)
    return _mm512_cvtph_ps (_mm256_i32gather_epi64 ((const long long *) src, idx, 2));
  const float *f = src;
  __m512 v = _mm512_castps128_ps512 (_mm_loadu_ps (f + off[0]));
  v = _mm512_insertf32x4 (v, _mm_loadu_ps (f + off[1]), 1);
  v = _mm512_insertf32x4 (v, _mm_loadu_ps (f + off[2]), 2);
  return _mm512_insertf32x4 (v, _mm_loadu_ps (f + off[3]), 3);
}

/* The horizontal pass by groups of 4 output pixels of 3 or 4 channels, for
 * shrink factors too large for windows: per tap, one gather of 4 whole
 * pixels instead of 12-16 single values. Lane 4p+c is pixel p, channel c
 * (for 3 channels lane 4p+3 is discarded), computed in the C order. */
AVX512 static inline void
hpass_pixels_avx512 (const M2iResizePlan *plan, const M2iResizeXTable *xt, SrcType type,
    const void *src, gint C, float *dst)
{
  gint T = xt->taps, row_len = plan->in_width * C;
  const __m512i spread = _mm512_set_epi32 (3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0);
  for (gint g = 0; g < xt->groups; g++) {
    gint e0 = g * 4 * C;
    if (xt->pix_max[g] + 4 > row_len) {
      hvalues_c (plan, type, src, C, dst, e0, e0 + 4 * C);
      continue;
    }
    const gint32 *o = xt->pix_offset + (gsize) g * T * 4;
    const float *w = xt->pix_weight + (gsize) g * T * 4;
    __m512 acc = _mm512_setzero_ps ();
    for (gint t = 0; t < T; t++) {
      __m512 wt = _mm512_permutexvar_ps (spread, _mm512_castps128_ps512 (_mm_loadu_ps (w + 4 * t)));
      acc = _mm512_add_ps (acc, _mm512_mul_ps (wt, pixels4 (type, src, o + 4 * t)));
    }
    if (plan->round_intermediate && type == SRC_U8)
      acc = round_half_away16 (acc);
    else if (plan->round_intermediate && type == SRC_F16)
      acc = _mm512_cvtph_ps (_mm512_cvtps_ph (acc, _MM_FROUND_TO_NEAREST_INT));
    if (C == 4)
      _mm512_storeu_ps (dst + e0, acc);
    else
      _mm512_mask_compressstoreu_ps (dst + e0, 0x7777, acc);
  }
  /* The last out_width % 4 pixels. */
  hvalues_c (plan, type, src, C, dst, xt->groups * 4 * C, xt->n);
}

/* As hpass_avx2, 16 lanes, with windows of 32 source values. */
AVX512 static inline void
hpass_avx512 (const M2iResizePlan *plan, SrcType type, const void *src, gint channels,
    float *dst)
{
  const M2iResizeXTable *xt = m2i_resize_xtable (plan, channels);
  if (xt->prefer_pixels) {
    hpass_pixels_avx512 (plan, xt, type, src, channels, dst);
    return;
  }
  gint T = xt->taps, row_len = plan->in_width * channels;
  gsize es = type == SRC_U8 ? 1 : type == SRC_F16 ? 2 : 4;
  gint32 limit = type == SRC_U8 ? row_len - 4 : type == SRC_F16 ? row_len - 2 : G_MAXINT32;
  for (gint b = 0; b < xt->blocks; b++) {
    gint e0 = b * M2I_RESIZE_BLOCK;
    gint cnt = MIN (M2I_RESIZE_BLOCK, xt->n - e0);
    gint32 lo = MIN (xt->lo[2 * b], xt->lo[2 * b + 1]);
    gint32 hi = MAX (xt->lo[2 * b] + xt->span[2 * b], xt->lo[2 * b + 1] + xt->span[2 * b + 1]);
    gint32 span = hi - lo;
    const gint32 *o = xt->offset + (gsize) b * T * M2I_RESIZE_BLOCK;
    const float *w = xt->weight + (gsize) b * T * M2I_RESIZE_BLOCK;
    __m512 acc = _mm512_setzero_ps ();
    if (span <= 32) {
      __m512 w0, w1;
      window32 (type, (const guint8 *) src + (gsize) lo * es, span, &w0, &w1);
      __m512i base = _mm512_set1_epi32 (lo);
      for (gint t = 0; t < T; t++) {
        __m512i idx = _mm512_sub_epi32 (loadi16 (o + (gsize) t * M2I_RESIZE_BLOCK), base);
        acc = _mm512_add_ps (acc, _mm512_mul_ps (_mm512_loadu_ps (w + (gsize) t * M2I_RESIZE_BLOCK),
                _mm512_permutex2var_ps (w0, idx, w1)));
      }
    } else if (xt->max_offset[b] <= limit) {
      for (gint t = 0; t < T; t++)
        acc = _mm512_add_ps (acc, _mm512_mul_ps (_mm512_loadu_ps (w + (gsize) t * M2I_RESIZE_BLOCK),
                gather16 (type, src, loadi16 (o + (gsize) t * M2I_RESIZE_BLOCK))));
    } else {
      hvalues_c (plan, type, src, channels, dst, e0, e0 + cnt);
      continue;
    }
    finish16 (plan, type, &acc, dst + e0, cnt);
  }
}

AVX512 static void
hpass_u8_avx512 (const M2iResizePlan *plan, const guint8 *src, gint channels, float *dst)
{
  hpass_avx512 (plan, SRC_U8, src, channels, dst);
}

AVX512 static void
hpass_f16_avx512 (const M2iResizePlan *plan, const guint16 *src, gint channels, float *dst)
{
  hpass_avx512 (plan, SRC_F16, src, channels, dst);
}

AVX512 static void
hpass_f32_avx512 (const M2iResizePlan *plan, const float *src, gint channels, float *dst)
{
  hpass_avx512 (plan, SRC_F32, src, channels, dst);
}

AVX512 static void
vpass_avx512 (const M2iResizePlan *plan, gint out_y, const float *const *rows, gint n,
    float *dst)
{
  gint T = plan->y.taps;
  const float *w = plan->y.weight + (gsize) out_y * T;
  gint e = 0;
  for (; e + 64 <= n; e += 64) {
    __m512 a0 = _mm512_setzero_ps (), a1 = a0, a2 = a0, a3 = a0;
    for (gint t = 0; t < T; t++) {
      __m512 wt = _mm512_set1_ps (w[t]);
      const float *r = rows[t] + e;
      a0 = _mm512_add_ps (a0, _mm512_mul_ps (wt, _mm512_loadu_ps (r)));
      a1 = _mm512_add_ps (a1, _mm512_mul_ps (wt, _mm512_loadu_ps (r + 16)));
      a2 = _mm512_add_ps (a2, _mm512_mul_ps (wt, _mm512_loadu_ps (r + 32)));
      a3 = _mm512_add_ps (a3, _mm512_mul_ps (wt, _mm512_loadu_ps (r + 48)));
    }
    _mm512_storeu_ps (dst + e, a0);
    _mm512_storeu_ps (dst + e + 16, a1);
    _mm512_storeu_ps (dst + e + 32, a2);
    _mm512_storeu_ps (dst + e + 48, a3);
  }
  for (; e < n; e += 16) {
    __mmask16 m = n - e >= 16 ? 0xffff : (__mmask16) ((1u << (n - e)) - 1);
    __m512 a = _mm512_setzero_ps ();
    for (gint t = 0; t < T; t++)
      a = _mm512_add_ps (a, _mm512_mul_ps (_mm512_set1_ps (w[t]),
              _mm512_maskz_loadu_ps (m, rows[t] + e)));
    _mm512_mask_storeu_ps (dst + e, m, a);
  }
}

AVX512 static void
round_u8_avx512 (const M2iResizePlan *plan, const float *src, guint8 *dst, gint n)
{
  gboolean trunc = plan->u8_round == M2I_RESIZE_ROUND_TRUNCATE;
  for (gint e = 0; e < n; e += 16) {
    __mmask16 m = n - e >= 16 ? 0xffff : (__mmask16) ((1u << (n - e)) - 1);
    __m512 v = _mm512_maskz_loadu_ps (m, src + e);
    if (trunc)
      v = _mm512_min_ps (_mm512_max_ps (v, _mm512_setzero_ps ()), _mm512_set1_ps (255.0f));
    else
      v = round_half_away16 (v);
    _mm512_mask_cvtusepi32_storeu_epi8 (dst + e, m, _mm512_cvttps_epi32 (v));
  }
}

static const M2iResizeKernels kernels_avx512 = {
  "avx512", hpass_u8_avx512, hpass_f16_avx512, hpass_f32_avx512, vpass_avx512,
  round_u8_avx512,
};

const M2iResizeKernels *
m2i_resize_kernels_avx512 (void)
{
  return &kernels_avx512;
}

#else /* not x86-64 */

const M2iResizeKernels *
m2i_resize_kernels_avx2 (void)
{
  return NULL;
}

const M2iResizeKernels *
m2i_resize_kernels_avx512 (void)
{
  return NULL;
}

#endif
