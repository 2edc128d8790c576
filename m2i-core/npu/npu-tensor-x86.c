/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* x86 kernel of the fp16 layout conversion (the CPU/device boundary of
 * split execution): eight NCHW channel rows of eight pixels, f32 narrowed
 * by F16C's vcvtps2ph (round to nearest even, as m2i_f32_to_f16) or f16 as
 * they are, become eight blocked pixels by an 8×8 transpose of 16-bit
 * values — and the same transpose takes blocked pixels back to rows, then
 * widened by vcvtph2ps (exact). */
#include "npu-private.h"

#include <base/m2i-cpu.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <immintrin.h>

#define T_F16C __attribute__((target("avx2,f16c")))
#define INLINE static inline __attribute__((always_inline))

/* r[l] holds 8 values of row l; afterwards r[x] holds the 8 rows' values
 * at column x. */
INLINE T_F16C void
transpose8x16 (__m128i r[8])
{
  __m128i a[8], b[8];
  for (int k = 0; k < 4; k++) {
    a[2 * k] = _mm_unpacklo_epi16 (r[2 * k], r[2 * k + 1]);
    a[2 * k + 1] = _mm_unpackhi_epi16 (r[2 * k], r[2 * k + 1]);
  }
  for (int k = 0; k < 2; k++) {
    b[4 * k] = _mm_unpacklo_epi32 (a[4 * k], a[4 * k + 2]);
    b[4 * k + 1] = _mm_unpackhi_epi32 (a[4 * k], a[4 * k + 2]);
    b[4 * k + 2] = _mm_unpacklo_epi32 (a[4 * k + 1], a[4 * k + 3]);
    b[4 * k + 3] = _mm_unpackhi_epi32 (a[4 * k + 1], a[4 * k + 3]);
  }
  for (int k = 0; k < 4; k++) {
    r[2 * k] = _mm_unpacklo_epi64 (b[k], b[k + 4]);
    r[2 * k + 1] = _mm_unpackhi_epi64 (b[k], b[k + 4]);
  }
}

static T_F16C void
layout_row_f16c (const NpuLayoutRow *r)
{
  gint x = 0;
  if (r->to_blocked) {
    for (; x + 8 <= r->w; x += 8) {
      __m128i v[8];
      for (gint l = 0; l < 8; l++) {
        if (l >= r->lanes)
          v[l] = _mm_setzero_si128 ();
        else if (r->f32)
          v[l] = _mm256_cvtps_ph (_mm256_loadu_ps ((const float *) r->nchw + l * r->plane + x),
              _MM_FROUND_TO_NEAREST_INT);
        else
          v[l] = _mm_loadu_si128 ((const __m128i *) ((const m2i_f16 *) r->nchw + l * r->plane + x));
      }
      transpose8x16 (v);
      for (gint p = 0; p < 8; p++)
        _mm_storeu_si128 ((__m128i *) (r->blocked + (gint64) (x + p) * 8), v[p]);
    }
  } else {
    for (; x + 8 <= r->w; x += 8) {
      __m128i v[8];
      for (gint p = 0; p < 8; p++)
        v[p] = _mm_loadu_si128 ((const __m128i *) (r->blocked + (gint64) (x + p) * 8));
      transpose8x16 (v);
      for (gint l = 0; l < r->lanes; l++) {
        if (r->f32)
          _mm256_storeu_ps ((float *) r->nchw + l * r->plane + x, _mm256_cvtph_ps (v[l]));
        else
          _mm_storeu_si128 ((__m128i *) ((m2i_f16 *) r->nchw + l * r->plane + x), v[l]);
      }
    }
  }
  npu_layout_row_tail (r, x);
}

NpuLayoutRowFunc
npu_x86_layout_row_func (void)
{
  M2iCpuFlags need = M2I_CPU_AVX2 | M2I_CPU_F16C;
  return (m2i_cpu_flags () & need) == need ? layout_row_f16c : NULL;
}

#else

NpuLayoutRowFunc
npu_x86_layout_row_func (void)
{
  return NULL;
}

#endif
