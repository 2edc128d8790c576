/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* chan-fetch-avx2.c — the pixel-chain row kernels (chan-fetch.h) at AVX2
 * (with F16C): 8 outputs per step, 4-byte tap pixels by dword permutes of
 * up to four 8-pixel chunks, others by a gather (byte-wise near the row
 * end). Same bits as chan-fetch.c. */
#include "chan-fetch.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#include <string.h>

#define AVX2 __attribute__((target("avx2,f16c")))
#define AVX2I __attribute__((target("avx2,f16c"), always_inline))

/* The tap pixels of outputs 16 b + 8 h .. + 7 as dwords. */
static inline AVX2I __m256i
fetch8 (const ChanFetch *t, const guint8 *row, gint tap, gint b, gint h)
{
  gsize tb = (gsize) tap * t->nb + b, o = (gsize) tap * t->np + 16 * b + 8 * h;
  switch (t->mode[tb]) {
    case CF_PERM: {
      const guint8 *w = row + 4 * (gsize) t->base[2 * tb + h];
      gint chunks = t->chunks[2 * tb + h];
      __m256i idx = _mm256_loadu_si256 ((const __m256i *) (t->idx + o));
      __m256i p = _mm256_permutevar8x32_epi32 (_mm256_loadu_si256 ((const __m256i *) w), idx);
      for (gint k = 1; k < chunks; k++) {
        __m256i q = _mm256_permutevar8x32_epi32 (
            _mm256_loadu_si256 ((const __m256i *) (w + 32 * k)), idx);
        p = _mm256_blendv_epi8 (p, q, _mm256_cmpgt_epi32 (idx, _mm256_set1_epi32 (8 * k - 1)));
      }
      return p;
    }
    case CF_GATHER:
      return _mm256_i32gather_epi32 ((const int *) row,
          _mm256_loadu_si256 ((const __m256i *) (t->off + o)), 1);
    default: {
      guint32 l[16];
      m2i_chan_fetch_fill (t, row, tap, b, l);
      return _mm256_loadu_si256 ((const __m256i *) (l + 8 * h));
    }
  }
}

/* pshufb mask taking byte @coff of each dword to its low byte (zero above). */
static inline AVX2I __m256i
byte_mask (guint coff)
{
  const gint m = (gint) (0x80808000u | coff);
  return _mm256_setr_epi32 (m, m + 4, m + 8, m + 12, m, m + 4, m + 8, m + 12);
}

/* One source row, @NCH channels and @TT taps (0: t->T). */
static inline AVX2I void
hrow_body (const ChanFetch *t, const guint8 *row, float *dst, const guint NCH, const gint TT)
{
  const gint T = TT ? TT : t->T;
  const __m256i m0 = byte_mask (t->coff[0]), m1 = byte_mask (t->coff[NCH > 1 ? 1 : 0]),
      m2 = byte_mask (t->coff[NCH > 1 ? 2 : 0]);
  float *d0 = dst, *d1 = dst + t->np, *d2 = dst + 2 * (gsize) t->np;
  for (gint b = 0; b < t->nb; b++)
    for (gint h = 0; h < 2; h++) {
      __m256 a0 = _mm256_setzero_ps (), a1 = a0, a2 = a0;
      for (gint tap = 0; tap < T; tap++) {
        __m256i p = fetch8 (t, row, tap, b, h);
        __m256 w = _mm256_loadu_ps (t->w + (gsize) tap * t->np + 16 * b + 8 * h);
        a0 = _mm256_add_ps (a0, _mm256_mul_ps (w, _mm256_cvtepi32_ps (_mm256_shuffle_epi8 (p, m0))));
        if (NCH == 3) {
          a1 = _mm256_add_ps (a1, _mm256_mul_ps (w, _mm256_cvtepi32_ps (_mm256_shuffle_epi8 (p, m1))));
          a2 = _mm256_add_ps (a2, _mm256_mul_ps (w, _mm256_cvtepi32_ps (_mm256_shuffle_epi8 (p, m2))));
        }
      }
      _mm256_storeu_ps (d0 + 16 * b + 8 * h, a0);
      if (NCH == 3) {
        _mm256_storeu_ps (d1 + 16 * b + 8 * h, a1);
        _mm256_storeu_ps (d2 + 16 * b + 8 * h, a2);
      }
    }
}

static AVX2 void
hrow_avx2 (const ChanFetch *t, const guint8 *row, float *dst)
{
  CHAN_FETCH_SPECIALISE_HROW (hrow_body, t, row, dst);
}

/* One output row from @TT (0: @T) rows of horizontal sums. */
static inline AVX2I void
vrow_body (const ChanFetch *t, const float *const *rows, const float *wy, gint T,
    guint8 *const dst[3], const gint TT)
{
  const gint n = t->n, nt = TT ? TT : T;
  const gboolean round16 = t->round16, out16 = t->out16;
  for (guint c = 0; c < t->n_ch; c++) {
    const __m256 s = _mm256_set1_ps (t->sub[c]), m = _mm256_set1_ps (t->mul[c]),
        a = _mm256_set1_ps (t->add[c]);
    const float *r0 = rows[0] + (gsize) c * t->np, *r1 = nt > 1 ? rows[1] + (gsize) c * t->np : NULL;
    const __m256 w0 = _mm256_set1_ps (wy[0]), w1 = _mm256_set1_ps (nt > 1 ? wy[1] : 0.0f);
    float *d32 = (float *) dst[c];
    m2i_f16 *d16 = (m2i_f16 *) dst[c];
    for (gint i = 0; i < n; i += 8) {
      __m256 acc = _mm256_add_ps (_mm256_setzero_ps (), _mm256_mul_ps (w0, _mm256_loadu_ps (r0 + i)));
      if (TT == 2)
        acc = _mm256_add_ps (acc, _mm256_mul_ps (w1, _mm256_loadu_ps (r1 + i)));
      else
        for (gint k = 1; k < nt; k++)
          acc = _mm256_add_ps (acc, _mm256_mul_ps (_mm256_set1_ps (wy[k]),
                  _mm256_loadu_ps (rows[k] + (gsize) c * t->np + i)));
      if (round16)
        acc = _mm256_cvtph_ps (_mm256_cvtps_ph (acc, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
      acc = _mm256_add_ps (_mm256_mul_ps (_mm256_sub_ps (acc, s), m), a);
      gint left = n - i;
      if (out16) {
        __m128i h = _mm256_cvtps_ph (acc, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        if (left >= 8) {
          _mm_storeu_si128 ((__m128i *) (d16 + i), h);
        } else {
          m2i_f16 tmp[8];
          _mm_storeu_si128 ((__m128i *) tmp, h);
          memcpy (d16 + i, tmp, (gsize) left * 2);
        }
      } else if (left >= 8) {
        _mm256_storeu_ps (d32 + i, acc);
      } else {
        float tmp[8];
        _mm256_storeu_ps (tmp, acc);
        memcpy (d32 + i, tmp, (gsize) left * 4);
      }
    }
  }
}

static AVX2 void
vrow_avx2 (const ChanFetch *t, const float *const *rows, const float *wy, gint T,
    guint8 *const dst[3])
{
  CHAN_FETCH_SPECIALISE_VROW (vrow_body, t, rows, wy, T, dst);
}

const ChanFetchKernels m2i_chan_fetch_avx2 = { "avx2", hrow_avx2, vrow_avx2 };
#endif
