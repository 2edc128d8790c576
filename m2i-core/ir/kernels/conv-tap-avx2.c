/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* conv-tap-avx2.c — the direct 1×K / K×1 convolution's tiles with AVX2
 * and FMA (conv-tap.h): 4 output channels × 24 pixels, a tap's pad lanes
 * by masked loads (vmaskmovps: nothing read there) in the panels that
 * have any, plain loads in the others; a last short vector stored lane by
 * lane (AVX2's masked stores are slow on some CPUs). */
#include "conv-tap.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define T_TARGET "avx2,fma"
#define T_VEC __m256
#define T_W 8
#define T_MR 4
#define T_MASK_T __m256i
#define T_ZERO() _mm256_setzero_ps ()
#define T_SET1(x) _mm256_set1_ps (x)
#define T_LOAD(p) _mm256_loadu_ps (p)
#define T_MLOAD(p, t, j) _mm256_maskload_ps (p, mk[(t) * 3 + (j)])
#define T_FMA(a, b, c) _mm256_fmadd_ps (a, b, c)
#define T_ADD(a, b) _mm256_add_ps (a, b)
#define T_MAX(a, b) _mm256_max_ps (a, b)
#define T_STORE(p, v) _mm256_storeu_ps (p, v)
#define T_STORE_N(p, v, n) store_n (p, v, n)
#define T_LOAD_N(p, n) load_n (p, n)

__attribute__ ((target (T_TARGET)))
static inline __attribute__ ((always_inline)) void
store_n (float *p, __m256 v, gint n)
{
  float lanes[8];
  _mm256_storeu_ps (lanes, v);
  for (gint l = 0; l < n; l++)
    p[l] = lanes[l];
}

__attribute__ ((target (T_TARGET)))
static inline __attribute__ ((always_inline)) __m256
load_n (const float *p, gint n)
{
  float lanes[8] = { 0 };
  for (gint l = 0; l < n; l++)
    lanes[l] = p[l];
  return _mm256_loadu_ps (lanes);
}

/* lane l of mask j of tap t: all ones when bit 8·j + l of its lane bits
 * is set (vmaskmovps reads the lanes whose sign bit is set) */
#define T_MASKS(mk, t, valid) \
  for (gint j = 0; j < 3; j++) { \
    const __m256i lane = _mm256_setr_epi32 (1, 2, 4, 8, 16, 32, 64, 128); \
    __m256i bits = _mm256_set1_epi32 ((gint) ((valid) >> (8 * j) & 0xff)); \
    (mk)[(t) * 3 + j] = _mm256_cmpeq_epi32 (_mm256_and_si256 (bits, lane), lane); \
  }
#define T_PANEL panel_avx2
#include "conv-tap-micro.h"

IrTapPanel
ir_tap_panel_avx2 (void)
{
  return panel_avx2;
}

#else

IrTapPanel
ir_tap_panel_avx2 (void)
{
  return NULL;
}

#endif
