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

#else

IrDwRows
ir_dw_rows_avx512 (const IrDwGeom *g)
{
  return NULL;
}

#endif
