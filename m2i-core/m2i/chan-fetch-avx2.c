/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* chan-fetch-avx2.c — the pixel-chain row kernels (chan-fetch.h) at AVX2
 * (with F16C): 8 outputs per step, tap pixels by a dword gather (byte-wise
 * near the row end). Same bits as chan-fetch.c. */
#include "chan-fetch.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#include <string.h>

#define AVX2 __attribute__((target("avx2,f16c")))

static AVX2 void
hrow_avx2 (const ChanFetch *t, const guint8 *row, float *dst)
{
  const __m256i ff = _mm256_set1_epi32 (0xff);
  __m256i sh[3];
  for (guint c = 0; c < 3; c++)
    sh[c] = _mm256_set1_epi32 (8 * (gint) (c < t->n_ch ? t->coff[c] : 0));
  for (gint b = 0; b < t->nb; b++) {
    for (gint h = 0; h < 2; h++) {
      __m256 acc[3] = { _mm256_setzero_ps (), _mm256_setzero_ps (), _mm256_setzero_ps () };
      for (gint tap = 0; tap < t->T; tap++) {
        gsize o = (gsize) tap * t->np + 16 * b + 8 * h;
        __m256i p;
        if (t->mode[(gsize) tap * t->nb + b] == CF_FILL) {
          guint32 l[16];
          m2i_chan_fetch_fill (t, row, tap, b, l);
          p = _mm256_loadu_si256 ((const __m256i *) (l + 8 * h));
        } else {
          p = _mm256_i32gather_epi32 ((const int *) row,
              _mm256_loadu_si256 ((const __m256i *) (t->off + o)), 1);
        }
        __m256 w = _mm256_loadu_ps (t->w + o);
        for (guint c = 0; c < t->n_ch; c++) {
          __m256 v = _mm256_cvtepi32_ps (_mm256_and_si256 (_mm256_srlv_epi32 (p, sh[c]), ff));
          acc[c] = _mm256_add_ps (acc[c], _mm256_mul_ps (w, v));
        }
      }
      for (guint c = 0; c < t->n_ch; c++)
        _mm256_storeu_ps (dst + (gsize) c * t->np + 16 * b + 8 * h, acc[c]);
    }
  }
}

static AVX2 void
vrow_avx2 (const ChanFetch *t, const float *const *rows, const float *wy, gint T,
    guint8 *const dst[3])
{
  for (guint c = 0; c < t->n_ch; c++) {
    const __m256 s = _mm256_set1_ps (t->sub[c]), m = _mm256_set1_ps (t->mul[c]),
        a = _mm256_set1_ps (t->add[c]);
    gsize co = (gsize) c * t->np;
    for (gint i = 0; i < t->n; i += 8) {
      __m256 acc = _mm256_setzero_ps ();
      for (gint k = 0; k < T; k++)
        acc = _mm256_add_ps (acc, _mm256_mul_ps (_mm256_set1_ps (wy[k]),
                _mm256_loadu_ps (rows[k] + co + i)));
      if (t->round16)
        acc = _mm256_cvtph_ps (_mm256_cvtps_ph (acc, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
      acc = _mm256_add_ps (_mm256_mul_ps (_mm256_sub_ps (acc, s), m), a);
      gint left = t->n - i;
      if (t->out16) {
        __m128i h = _mm256_cvtps_ph (acc, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        if (left >= 8)
          _mm_storeu_si128 ((__m128i *) ((m2i_f16 *) dst[c] + i), h);
        else {
          m2i_f16 tmp[8];
          _mm_storeu_si128 ((__m128i *) tmp, h);
          memcpy ((m2i_f16 *) dst[c] + i, tmp, (gsize) left * 2);
        }
      } else if (left >= 8) {
        _mm256_storeu_ps ((float *) dst[c] + i, acc);
      } else {
        float tmp[8];
        _mm256_storeu_ps (tmp, acc);
        memcpy ((float *) dst[c] + i, tmp, (gsize) left * 4);
      }
    }
  }
}

const ChanFetchKernels m2i_chan_fetch_avx2 = { "avx2", hrow_avx2, vrow_avx2 };
#endif
