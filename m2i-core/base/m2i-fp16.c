/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "m2i-fp16.h"
#include "m2i-cpu.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define M2I_HAVE_X86 1
#endif

static void
f32_to_f16_c (const float *src, m2i_f16 *dst, gsize n)
{
  for (gsize i = 0; i < n; i++)
    dst[i] = m2i_f32_to_f16 (src[i]);
}

static void
f16_to_f32_c (const m2i_f16 *src, float *dst, gsize n)
{
  for (gsize i = 0; i < n; i++)
    dst[i] = m2i_f16_to_f32 (src[i]);
}

#ifdef M2I_HAVE_X86
__attribute__ ((target ("avx,f16c")))
static void
f32_to_f16_f16c (const float *src, m2i_f16 *dst, gsize n)
{
  gsize i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 v = _mm256_loadu_ps (src + i);
    _mm_storeu_si128 ((__m128i *) (dst + i),
        _mm256_cvtps_ph (v, _MM_FROUND_TO_NEAREST_INT));
  }
  for (; i < n; i++)
    dst[i] = m2i_f32_to_f16 (src[i]);
}

__attribute__ ((target ("avx,f16c")))
static void
f16_to_f32_f16c (const m2i_f16 *src, float *dst, gsize n)
{
  gsize i = 0;
  for (; i + 8 <= n; i += 8) {
    __m128i h = _mm_loadu_si128 ((const __m128i *) (src + i));
    _mm256_storeu_ps (dst + i, _mm256_cvtph_ps (h));
  }
  for (; i < n; i++)
    dst[i] = m2i_f16_to_f32 (src[i]);
}
#endif

void
m2i_f32_to_f16_n (const float *src, m2i_f16 *dst, gsize n)
{
#ifdef M2I_HAVE_X86
  if (m2i_cpu_flags () & M2I_CPU_F16C) {
    f32_to_f16_f16c (src, dst, n);
    return;
  }
#endif
  f32_to_f16_c (src, dst, n);
}

void
m2i_f16_to_f32_n (const m2i_f16 *src, float *dst, gsize n)
{
#ifdef M2I_HAVE_X86
  if (m2i_cpu_flags () & M2I_CPU_F16C) {
    f16_to_f32_f16c (src, dst, n);
    return;
  }
#endif
  f16_to_f32_c (src, dst, n);
}

guint
m2i_f16_ulp_distance (m2i_f16 a, m2i_f16 b)
{
  /* Map sign-magnitude to a monotonic integer line. */
  gint ia = (a & 0x8000) ? -(gint) (a & 0x7fff) : (gint) a;
  gint ib = (b & 0x8000) ? -(gint) (b & 0x7fff) : (gint) b;
  return (guint) ABS (ia - ib);
}
