/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* chan-fetch-avx512.c — the pixel-chain row kernels (chan-fetch.h) at
 * AVX-512: 16 outputs per block; 4-byte pixels fetched by a dword permute
 * over two 32-pixel windows, others by a gather; masked stores at the row
 * end. Same bits as chan-fetch.c. */
#include "chan-fetch.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#define AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2,f16c")))
#define AVX512I __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2,f16c"), always_inline))

/* The tap pixels of block b as dwords. */
static inline AVX512I __m512i
fetch16 (const ChanFetch *t, const guint8 *row, gint tap, gint b)
{
  gsize tb = (gsize) tap * t->nb + b;
  switch (t->mode[tb]) {
    case CF_PERM: {
      const gint32 *base = t->base + 2 * tb;
      __m512i idx = _mm512_loadu_si512 (t->idx + (gsize) tap * t->np + 16 * b);
      const guint8 *w0 = row + 4 * (gsize) base[0], *w1 = row + 4 * (gsize) base[1];
      __m512i r0 = _mm512_permutex2var_epi32 (_mm512_loadu_si512 (w0), idx,
          _mm512_loadu_si512 (w0 + 64));
      __m512i r1 = _mm512_permutex2var_epi32 (_mm512_loadu_si512 (w1), idx,
          _mm512_loadu_si512 (w1 + 64));
      return _mm512_mask_blend_epi32 (0xff00, r0, r1);
    }
    case CF_GATHER:
      return _mm512_i32gather_epi32 (_mm512_loadu_si512 (t->off + (gsize) tap * t->np + 16 * b),
          row, 1);
    default: {
      guint32 l[16];
      m2i_chan_fetch_fill (t, row, tap, b, l);
      return _mm512_loadu_si512 (l);
    }
  }
}

/* pshufb mask taking byte @coff of each dword to its low byte (zero above). */
static inline AVX512I __m512i
byte_mask (guint coff)
{
  const gint m = (gint) (0x80808000u | coff);
  return _mm512_broadcast_i32x4 (_mm_setr_epi32 (m, m + 4, m + 8, m + 12));
}

/* One source row, @NCH channels and @TT taps (0: t->T), constants where
 * the callers below pass them. */
static inline AVX512I void
hrow_body (const ChanFetch *t, const guint8 *row, float *dst, const guint NCH, const gint TT)
{
  const gint T = TT ? TT : t->T;
  const __m512i m0 = byte_mask (t->coff[0]), m1 = byte_mask (t->coff[NCH > 1 ? 1 : 0]),
      m2 = byte_mask (t->coff[NCH > 1 ? 2 : 0]);
  float *d0 = dst, *d1 = dst + t->np, *d2 = dst + 2 * (gsize) t->np;
  for (gint b = 0; b < t->nb; b++) {
    __m512 a0 = _mm512_setzero_ps (), a1 = a0, a2 = a0;
    for (gint tap = 0; tap < T; tap++) {
      __m512i p = fetch16 (t, row, tap, b);
      __m512 w = _mm512_loadu_ps (t->w + (gsize) tap * t->np + 16 * b);
      a0 = _mm512_add_ps (a0, _mm512_mul_ps (w, _mm512_cvtepi32_ps (_mm512_shuffle_epi8 (p, m0))));
      if (NCH == 3) {
        a1 = _mm512_add_ps (a1, _mm512_mul_ps (w, _mm512_cvtepi32_ps (_mm512_shuffle_epi8 (p, m1))));
        a2 = _mm512_add_ps (a2, _mm512_mul_ps (w, _mm512_cvtepi32_ps (_mm512_shuffle_epi8 (p, m2))));
      }
    }
    _mm512_storeu_ps (d0 + 16 * b, a0);
    if (NCH == 3) {
      _mm512_storeu_ps (d1 + 16 * b, a1);
      _mm512_storeu_ps (d2 + 16 * b, a2);
    }
  }
}

static AVX512 void
hrow_avx512 (const ChanFetch *t, const guint8 *row, float *dst)
{
  CHAN_FETCH_SPECIALISE_HROW (hrow_body, t, row, dst);
}

/* One output row from @TT (0: @T) rows of horizontal sums. */
static inline AVX512I void
vrow_body (const ChanFetch *t, const float *const *rows, const float *wy, gint T,
    guint8 *const dst[3], const gint TT)
{
  const gint n = t->n, nt = TT ? TT : T;
  const gboolean round16 = t->round16, out16 = t->out16;
  for (guint c = 0; c < t->n_ch; c++) {
    const __m512 s = _mm512_set1_ps (t->sub[c]), m = _mm512_set1_ps (t->mul[c]),
        a = _mm512_set1_ps (t->add[c]);
    const float *r0 = rows[0] + (gsize) c * t->np, *r1 = nt > 1 ? rows[1] + (gsize) c * t->np : NULL;
    const __m512 w0 = _mm512_set1_ps (wy[0]), w1 = _mm512_set1_ps (nt > 1 ? wy[1] : 0.0f);
    float *d32 = (float *) dst[c];
    m2i_f16 *d16 = (m2i_f16 *) dst[c];
    for (gint i = 0; i < n; i += 16) {
      __m512 acc = _mm512_add_ps (_mm512_setzero_ps (), _mm512_mul_ps (w0, _mm512_loadu_ps (r0 + i)));
      if (TT == 2)
        acc = _mm512_add_ps (acc, _mm512_mul_ps (w1, _mm512_loadu_ps (r1 + i)));
      else
        for (gint k = 1; k < nt; k++)
          acc = _mm512_add_ps (acc, _mm512_mul_ps (_mm512_set1_ps (wy[k]),
                  _mm512_loadu_ps (rows[k] + (gsize) c * t->np + i)));
      if (round16)
        acc = _mm512_cvtph_ps (_mm512_cvtps_ph (acc, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
      acc = _mm512_add_ps (_mm512_mul_ps (_mm512_sub_ps (acc, s), m), a);
      __mmask16 k = n - i >= 16 ? 0xffff : (__mmask16) ((1u << (n - i)) - 1);
      if (out16)
        _mm256_mask_storeu_epi16 (d16 + i, k,
            _mm512_cvtps_ph (acc, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
      else
        _mm512_mask_storeu_ps (d32 + i, k, acc);
    }
  }
}

static AVX512 void
vrow_avx512 (const ChanFetch *t, const float *const *rows, const float *wy, gint T,
    guint8 *const dst[3])
{
  CHAN_FETCH_SPECIALISE_VROW (vrow_body, t, rows, wy, T, dst);
}

const ChanFetchKernels m2i_chan_fetch_avx512 = { "avx512", hrow_avx512, vrow_avx512 };
#endif
