/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* conv-tap-avx512.c — the direct 1×K / K×1 convolution's tiles with
 * AVX-512 (conv-tap.h): 8 output channels × 48 pixels, a tap's pad lanes
 * by masked loads (nothing read there), a last short panel by masked
 * stores. */
#include "conv-tap.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define T_TARGET "avx512f,avx512vl,avx512bw,avx512dq,fma"
#define T_VEC __m512
#define T_W 16
#define T_MR 8
#define T_MASK_T __mmask16
#define T_ZERO() _mm512_setzero_ps ()
#define T_SET1(x) _mm512_set1_ps (x)
#define T_LOAD(p) _mm512_loadu_ps (p)
#define T_MLOAD(p, t, j) _mm512_maskz_loadu_ps (mk[(t) * 3 + (j)], p)
#define T_FMA(a, b, c) _mm512_fmadd_ps (a, b, c)
#define T_ADD(a, b) _mm512_add_ps (a, b)
#define T_MAX(a, b) _mm512_max_ps (a, b)
#define T_STORE(p, v) _mm512_storeu_ps (p, v)
#define T_LOAD_N(p, n) _mm512_maskz_loadu_ps ((__mmask16) ((1u << (n)) - 1), p)
#define T_STORE_N(p, v, n) _mm512_mask_storeu_ps (p, (__mmask16) ((1u << (n)) - 1), v)

#define T_MASKS(mk, t, valid) \
  for (gint j = 0; j < 3; j++) \
    (mk)[(t) * 3 + j] = (__mmask16) ((valid) >> (16 * j))
#define T_PANEL panel_avx512
#include "conv-tap-micro.h"

IrTapPanel
ir_tap_panel_avx512 (void)
{
  return panel_avx512;
}

#else

IrTapPanel
ir_tap_panel_avx512 (void)
{
  return NULL;
}

#endif
