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

/* Horizontal pass over whole 16-value blocks; @C_fallback does the others. */
#define HPASS_BODY(GATHER, LANES, VEC, ZERO, LOADI, LOADF, ADD, MUL)            \
  const M2iResizeXTable *xt = m2i_resize_xtable (plan, channels);               \
  gint T = xt->taps;                                                            \
  for (gint b = 0; b < xt->blocks; b++) {                                       \
    gint e0 = b * M2I_RESIZE_BLOCK;                                             \
    gint cnt = MIN (M2I_RESIZE_BLOCK, xt->n - e0);                              \
    if (xt->max_offset[b] > limit) {                                            \
      fallback (plan, src, channels, dst, e0, e0 + cnt);                        \
      continue;                                                                 \
    }                                                                           \
    const gint32 *o = xt->offset + (gsize) b * T * M2I_RESIZE_BLOCK;            \
    const float *w = xt->weight + (gsize) b * T * M2I_RESIZE_BLOCK;             \
    VEC acc[M2I_RESIZE_BLOCK / LANES];                                          \
    for (gint h = 0; h < M2I_RESIZE_BLOCK / LANES; h++)                         \
      acc[h] = ZERO;                                                            \
    for (gint t = 0; t < T; t++)                                                \
      for (gint h = 0; h < M2I_RESIZE_BLOCK / LANES; h++) {                     \
        gsize k = (gsize) t * M2I_RESIZE_BLOCK + h * LANES;                     \
        acc[h] = ADD (acc[h], MUL (LOADF (w + k), GATHER (src, LOADI (o + k)))); \
      }                                                                         \
    finish (plan, acc, dst + e0, cnt);                                          \
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

AVX2 static void
hpass_u8_avx2 (const M2iResizePlan *plan, const guint8 *src, gint channels, float *dst)
{
  gint32 limit = plan->in_width * channels - 4;   /* 4-byte gathers stay inside */
#define fallback m2i_resize_hvalues_u8_c
#define finish(plan, acc, d, cnt) finish8 (plan, SRC_U8, acc, d, cnt)
  HPASS_BODY (gather8_u8, 8, __m256, _mm256_setzero_ps (), loadi8, _mm256_loadu_ps,
      _mm256_add_ps, _mm256_mul_ps);
#undef fallback
#undef finish
}

AVX2 static void
hpass_f16_avx2 (const M2iResizePlan *plan, const guint16 *src, gint channels, float *dst)
{
  gint32 limit = plan->in_width * channels - 2;
#define fallback m2i_resize_hvalues_f16_c
#define finish(plan, acc, d, cnt) finish8 (plan, SRC_F16, acc, d, cnt)
  HPASS_BODY (gather8_f16, 8, __m256, _mm256_setzero_ps (), loadi8, _mm256_loadu_ps,
      _mm256_add_ps, _mm256_mul_ps);
#undef fallback
#undef finish
}

AVX2 static void
hpass_f32_avx2 (const M2iResizePlan *plan, const float *src, gint channels, float *dst)
{
  gint32 limit = G_MAXINT32;
#define fallback(...) g_assert_not_reached ()
#define finish(plan, acc, d, cnt) finish8 (plan, SRC_F32, acc, d, cnt)
  HPASS_BODY (gather8_f32, 8, __m256, _mm256_setzero_ps (), loadi8, _mm256_loadu_ps,
      _mm256_add_ps, _mm256_mul_ps);
#undef fallback
#undef finish
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

AVX512 static void
hpass_u8_avx512 (const M2iResizePlan *plan, const guint8 *src, gint channels, float *dst)
{
  gint32 limit = plan->in_width * channels - 4;
#define fallback m2i_resize_hvalues_u8_c
#define finish(plan, acc, d, cnt) finish16 (plan, SRC_U8, acc, d, cnt)
  HPASS_BODY (gather16_u8, 16, __m512, _mm512_setzero_ps (), loadi16, _mm512_loadu_ps,
      _mm512_add_ps, _mm512_mul_ps);
#undef fallback
#undef finish
}

AVX512 static void
hpass_f16_avx512 (const M2iResizePlan *plan, const guint16 *src, gint channels, float *dst)
{
  gint32 limit = plan->in_width * channels - 2;
#define fallback m2i_resize_hvalues_f16_c
#define finish(plan, acc, d, cnt) finish16 (plan, SRC_F16, acc, d, cnt)
  HPASS_BODY (gather16_f16, 16, __m512, _mm512_setzero_ps (), loadi16, _mm512_loadu_ps,
      _mm512_add_ps, _mm512_mul_ps);
#undef fallback
#undef finish
}

AVX512 static void
hpass_f32_avx512 (const M2iResizePlan *plan, const float *src, gint channels, float *dst)
{
  gint32 limit = G_MAXINT32;
#define fallback(...) g_assert_not_reached ()
#define finish(plan, acc, d, cnt) finish16 (plan, SRC_F32, acc, d, cnt)
  HPASS_BODY (gather16_f32, 16, __m512, _mm512_setzero_ps (), loadi16, _mm512_loadu_ps,
      _mm512_add_ps, _mm512_mul_ps);
#undef fallback
#undef finish
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
