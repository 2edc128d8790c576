/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* conv-dw-avx2.c — the direct convolution's row kernels with AVX2 and FMA
 * (conv-dw.h): 8 outputs a vector, stride 2 as two loads, a shuffle and a
 * lane permute, the row's ends by masked loads (maskload does not touch
 * masked-off elements) and partial stores through a buffer (AVX2's
 * masked stores are slow on some CPUs). */
#include "conv-dw.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#include <string.h>

#define DW_TARGET "avx2,fma"

/* The mask of lanes [lo, hi) of 8. */
static inline __attribute__ ((always_inline, target (DW_TARGET))) __m256i
range8 (gint64 lo, gint64 hi)
{
  const __m256i lane = _mm256_setr_epi32 (0, 1, 2, 3, 4, 5, 6, 7);
  lo = CLAMP (lo, 0, 8);
  hi = CLAMP (hi, 0, 8);
  return _mm256_andnot_si256 (_mm256_cmpgt_epi32 (_mm256_set1_epi32 ((gint32) lo), lane),
      _mm256_cmpgt_epi32 (_mm256_set1_epi32 ((gint32) hi), lane));
}

/* The even elements of a (8 floats) then b: [a0 a2 b0 b2 | a4 a6 b4 b6]
 * by the shuffle, the 64-bit quarters reordered 0 2 1 3. */
static inline __attribute__ ((always_inline, target (DW_TARGET))) __m256
evens (__m256 a, __m256 b)
{
  __m256 t = _mm256_shuffle_ps (a, b, _MM_SHUFFLE (2, 0, 2, 0));
  return _mm256_castpd_ps (_mm256_permute4x64_pd (_mm256_castps_pd (t), _MM_SHUFFLE (3, 1, 2, 0)));
}

static inline __attribute__ ((always_inline, target (DW_TARGET))) __m256
load_s2 (const float *p)
{
  return evens (_mm256_loadu_ps (p), _mm256_loadu_ps (p + 8));
}

static inline __attribute__ ((always_inline, target (DW_TARGET))) __m256
load_s2_part (const float *p, __m256i m0, __m256i m1)
{
  return evens (_mm256_maskload_ps (p, m0), _mm256_maskload_ps (p + 8, m1));
}

static inline __attribute__ ((always_inline, target (DW_TARGET))) void
store_part (float *p, __m256 v, gint64 n)
{
  float lanes[8];
  _mm256_storeu_ps (lanes, v);
  memcpy (p, lanes, n * sizeof (float));
}

#define DW_NAME(x) avx2_##x
#define DW_VEC __m256
#define DW_W 8
#define DW_ZERO() _mm256_setzero_ps ()
#define DW_SET1(x) _mm256_set1_ps (x)
#define DW_LOAD(p) _mm256_loadu_ps (p)
#define DW_FMA(a, b, c) _mm256_fmadd_ps (a, b, c)
#define DW_ADD(a, b) _mm256_add_ps (a, b)
#define DW_MAX(a, b) _mm256_max_ps (a, b)
#define DW_STORE(p, v) _mm256_storeu_ps (p, v)
#define DW_LOAD_S2(p) load_s2 (p)
#define DW_MASK __m256i
#define DW_RANGE(lo, hi) range8 (lo, hi)
#define DW_LOAD_PART(p, m) _mm256_maskload_ps ((p), m)
#define DW_LOAD_S2_PART(p, m0, m1) load_s2_part (p, m0, m1)
#define DW_STORE_PART(p, v, n) store_part (p, v, n)
#include "conv-dw-rows.h"

IrDwRows
ir_dw_rows_avx2 (const IrDwGeom *g)
{
  return avx2_pick (g);
}

#else

IrDwRows
ir_dw_rows_avx2 (const IrDwGeom *g)
{
  return NULL;
}

#endif
