/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* x86 kernels of fp16 pooling, add and PReLU: one channel block (8 lanes) of a pixel is
 * one 128-bit load widened by F16C's vcvtph2ps, so a window costs a load, a
 * conversion and a max or add per tap instead of eight scalar conversions.
 *
 * Bit-identical to the scalar loops of npu-ops.c: each lane is reduced in
 * the same (y, x) order from the same start (-inf, +0), vmaxps(f, acc)
 * returns acc when f is NaN or both are zeros, exactly as f > acc ? f : acc
 * does, the mean is one IEEE division by the count, and vcvtps2ph with
 * round-to-nearest-even is m2i_f32_to_f16 (NaN stays NaN).
 *
 * AVX-512 computes two output pixels per instruction (their two blocks in
 * one zmm) when their windows have the same width, which all do but the
 * clipped ones at the edges.
 */
#include "npu-private.h"

#include <base/m2i-cpu.h>
#include <math.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <immintrin.h>

#define T_AVX2 __attribute__((target("avx2,f16c")))
#define T_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2,f16c")))
#define INLINE static inline __attribute__((always_inline))

INLINE T_AVX2 __m256
load8 (const m2i_f16 *s)
{
  return _mm256_cvtph_ps (_mm_loadu_si128 ((const __m128i *) s));
}

/* One output pixel: window columns [vx0, vx1), rows [vy0, vy1). */
INLINE T_AVX2 __m256
pool_pixel8 (const NpuPoolRow *r, gint vx0, gint vx1, const gboolean is_max)
{
  __m256 acc = is_max ? _mm256_set1_ps (-INFINITY) : _mm256_setzero_ps ();
  for (gint y = r->vy0; y < r->vy1; y++) {
    const m2i_f16 *s = r->src + y * r->in_row + (gint64) vx0 * 8;
    for (gint x = vx0; x < vx1; x++, s += 8)
      acc = is_max ? _mm256_max_ps (load8 (s), acc) : _mm256_add_ps (acc, load8 (s));
  }
  return acc;
}

INLINE T_AVX2 gint
pool_count (const NpuPoolRow *r, gint x0, gint x1, gint vx0, gint vx1)
{
  return r->p->exclude_pad ? (r->vy1 - r->vy0) * (vx1 - vx0) : r->wy * (x1 - x0);
}

/* Output pixel @ox, whose window spans columns [x0, x1), [vx0, vx1) of them
 * inside the input, pooled and stored. */
INLINE T_AVX2 void
pool_store8 (const NpuPoolRow *r, gint ox, gint x0, gint x1, gint vx0, gint vx1,
    const gboolean is_max)
{
  __m256 acc = pool_pixel8 (r, vx0, vx1, is_max);
  if (!is_max)
    acc = _mm256_div_ps (acc, _mm256_set1_ps ((float) pool_count (r, x0, x1, vx0, vx1)));
  _mm_storeu_si128 ((__m128i *) (r->dst + (gint64) ox * 8),
      _mm256_cvtps_ph (acc, _MM_FROUND_TO_NEAREST_INT));
}

INLINE T_AVX2 void
pool_row8 (const NpuPoolRow *r, const gboolean is_max)
{
  const M2iNpuPoolParams *p = r->p;
  for (gint ox = 0; ox < r->ow; ox++) {
    gint x0, x1, vx0, vx1;
    npu_pool_window (ox, p->stride_w, p->pad_left, p->pad_right, p->kernel_w, r->in_w,
        &x0, &x1, &vx0, &vx1);
    pool_store8 (r, ox, x0, x1, vx0, vx1, is_max);
  }
}

static T_AVX2 void
pool_row_avx2 (const NpuPoolRow *r)
{
  if (r->p->kind == M2I_NPU_POOL_MAX)
    pool_row8 (r, TRUE);
  else
    pool_row8 (r, FALSE);
}

/* Blocks of output pixels ox and ox + 1 (windows starting at columns a and
 * b, both w wide) in one zmm: lanes 0..7 the first, 8..15 the second. */
INLINE T_AVX512 __m512
pool_pair16 (const NpuPoolRow *r, gint a, gint b, gint w, const gboolean is_max)
{
  __m512 acc = is_max ? _mm512_set1_ps (-INFINITY) : _mm512_setzero_ps ();
  for (gint y = r->vy0; y < r->vy1; y++) {
    const m2i_f16 *sa = r->src + y * r->in_row + (gint64) a * 8;
    const m2i_f16 *sb = r->src + y * r->in_row + (gint64) b * 8;
    for (gint k = 0; k < w; k++) {
      __m256i h = _mm256_inserti128_si256 (_mm256_castsi128_si256 (
              _mm_loadu_si128 ((const __m128i *) (sa + k * 8))),
          _mm_loadu_si128 ((const __m128i *) (sb + k * 8)), 1);
      __m512 f = _mm512_cvtph_ps (h);
      acc = is_max ? _mm512_max_ps (f, acc) : _mm512_add_ps (acc, f);
    }
  }
  return acc;
}

INLINE T_AVX512 void
pool_row16 (const NpuPoolRow *r, const gboolean is_max)
{
  const M2iNpuPoolParams *p = r->p;
  gint ox = 0;
  while (ox < r->ow) {
    gint x0, x1, vx0, vx1, y0, y1, wx0, wx1;
    npu_pool_window (ox, p->stride_w, p->pad_left, p->pad_right, p->kernel_w, r->in_w,
        &x0, &x1, &vx0, &vx1);
    if (ox + 1 < r->ow) {
      npu_pool_window (ox + 1, p->stride_w, p->pad_left, p->pad_right, p->kernel_w, r->in_w,
          &y0, &y1, &wx0, &wx1);
      gint c0 = pool_count (r, x0, x1, vx0, vx1), c1 = pool_count (r, y0, y1, wx0, wx1);
      if (vx1 - vx0 == wx1 - wx0) {
        __m512 acc = pool_pair16 (r, vx0, wx0, vx1 - vx0, is_max);
        if (!is_max)
          acc = _mm512_div_ps (acc, _mm512_insertf32x8 (_mm512_set1_ps ((float) c0),
                  _mm256_set1_ps ((float) c1), 1));
        _mm256_storeu_si256 ((__m256i *) (r->dst + (gint64) ox * 8),
            _mm512_cvtps_ph (acc, _MM_FROUND_TO_NEAREST_INT));
        ox += 2;
        continue;
      }
    }
    pool_store8 (r, ox, x0, x1, vx0, vx1, is_max);
    ox++;
  }
}

static T_AVX512 void
pool_row_avx512 (const NpuPoolRow *r)
{
  if (r->p->kind == M2I_NPU_POOL_MAX)
    pool_row16 (r, TRUE);
  else
    pool_row16 (r, FALSE);
}

/* ---- PReLU, fp16: v < 0 ? v·slope : v per lane, one pixel per ymm ------ */

static T_AVX2 void
prelu_f16_avx2 (const m2i_f16 *src, m2i_f16 *dst, gint64 n_px, const float *slope8)
{
  const __m256 s = _mm256_loadu_ps (slope8), zero = _mm256_setzero_ps ();
  for (gint64 p = 0; p < n_px; p++) {
    __m256 v = load8 (src + p * 8);
    v = _mm256_blendv_ps (v, _mm256_mul_ps (v, s), _mm256_cmp_ps (v, zero, _CMP_LT_OQ));
    _mm_storeu_si128 ((__m128i *) (dst + p * 8), _mm256_cvtps_ph (v, _MM_FROUND_TO_NEAREST_INT));
  }
}

NpuPreluF16Func
npu_x86_prelu_f16_func (void)
{
  M2iCpuFlags need = M2I_CPU_AVX2 | M2I_CPU_F16C;
  return (m2i_cpu_flags () & need) == need ? prelu_f16_avx2 : NULL;
}

/* ---- add, fp16 (with a fused PReLU) ---------------------------------------- */

INLINE T_AVX2 void
add_f16 (const m2i_f16 *a, const m2i_f16 *b, m2i_f16 *dst, gint64 n_px, float lo, float hi,
    const float *slope8, const gboolean prelu)
{
  const __m256 vlo = _mm256_set1_ps (lo), vhi = _mm256_set1_ps (hi), zero = _mm256_setzero_ps ();
  const __m256 s = prelu ? _mm256_loadu_ps (slope8) : zero;
  for (gint64 p = 0; p < n_px; p++) {
    __m256 v = _mm256_add_ps (load8 (a + p * 8), load8 (b + p * 8));
    if (prelu)
      v = _mm256_blendv_ps (v, _mm256_mul_ps (v, s), _mm256_cmp_ps (v, zero, _CMP_LT_OQ));
    /* v < lo ? lo : v > hi ? hi : v, NaN kept (as the C loop) */
    v = _mm256_blendv_ps (v, vlo, _mm256_cmp_ps (v, vlo, _CMP_LT_OQ));
    v = _mm256_blendv_ps (v, vhi, _mm256_cmp_ps (v, vhi, _CMP_GT_OQ));
    _mm_storeu_si128 ((__m128i *) (dst + p * 8), _mm256_cvtps_ph (v, _MM_FROUND_TO_NEAREST_INT));
  }
}

static T_AVX2 void
add_f16_avx2 (const m2i_f16 *a, const m2i_f16 *b, m2i_f16 *dst, gint64 n_px, float lo,
    float hi, const float *slope8)
{
  if (slope8)
    add_f16 (a, b, dst, n_px, lo, hi, slope8, TRUE);
  else
    add_f16 (a, b, dst, n_px, lo, hi, slope8, FALSE);
}

NpuAddF16Func
npu_x86_add_f16_func (void)
{
  M2iCpuFlags need = M2I_CPU_AVX2 | M2I_CPU_F16C;
  return (m2i_cpu_flags () & need) == need ? add_f16_avx2 : NULL;
}

NpuPoolRowFunc
npu_x86_pool_f16_func (void)
{
  M2iCpuFlags f = m2i_cpu_flags ();
  if (!(f & M2I_CPU_F16C))
    return NULL;
  if (f & M2I_CPU_AVX512F)
    return pool_row_avx512;
  if (f & M2I_CPU_AVX2)
    return pool_row_avx2;
  return NULL;
}

#else

NpuPoolRowFunc
npu_x86_pool_f16_func (void)
{
  return NULL;
}

NpuPreluF16Func
npu_x86_prelu_f16_func (void)
{
  return NULL;
}

NpuAddF16Func
npu_x86_add_f16_func (void)
{
  return NULL;
}

#endif
