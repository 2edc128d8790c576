/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* row-x86.h — AVX-512 helpers shared by kernels that work on rows of 16
 * values: loads of 16 strided row elements (pooling and depthwise
 * convolution planes) and a 16×16 transpose in registers (Transpose's
 * tiles, the small-plane convolution's write-out) (not installed).
 *
 * Those layers compute 16 adjacent outputs at once, each reading row element
 * p0 + lane·sw (lane 0..15) for every kernel tap. Stride 1 is one load,
 * stride 2 two loads and a permute (most networks), others a gather. Include
 * only from code compiled for x86-64 with GCC or clang.
 */
#pragma once

#include <glib.h>
#include <immintrin.h>

/* Returns the elements row[p0 + lane·sw] for the lanes in @m whose position
 * lies in [0, w) — *ok gets those lanes — and 0 elsewhere. With @fast the
 * caller promises every lane in @m is inside the row and that reading
 * 16 (stride 1) or 32 (stride 2) elements from row + p0 stays inside the
 * buffer; the lanes past @m then hold whatever follows and must be
 * ignored. */
static inline __attribute__ ((always_inline, target ("avx512f,avx512vl,avx512bw,avx512dq")))
__m512
ir_k_load_row16 (const float *row, gint64 p0, gint64 sw, gint64 w, gboolean fast,
    __mmask16 m, __mmask16 *ok)
{
  const __m512i lane = _mm512_setr_epi32 (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512i even = _mm512_setr_epi32 (0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26,
      28, 30);
  const __m512i zero = _mm512_setzero_si512 (), width = _mm512_set1_epi32 ((gint32) w);
  if (fast && sw <= 2) {
    *ok = m;
    if (sw == 1)
      return _mm512_loadu_ps (row + p0);
    return _mm512_permutex2var_ps (_mm512_loadu_ps (row + p0), even,
        _mm512_loadu_ps (row + p0 + 16));
  }
  __m512i pos = _mm512_add_epi32 (_mm512_set1_epi32 ((gint32) p0),
      _mm512_mullo_epi32 (lane, _mm512_set1_epi32 ((gint32) sw)));
  *ok = m & _mm512_cmpge_epi32_mask (pos, zero) & _mm512_cmplt_epi32_mask (pos, width);
  if (!*ok)
    return _mm512_setzero_ps ();
  if (sw == 1)
    return _mm512_maskz_loadu_ps (*ok, row + p0);
  if (sw == 2) {
    /* Raw elements p0 .. p0 + 31, those inside the row; the permute then
     * picks the even ones, and lanes outside it are zeroed. */
    __m512i r0 = _mm512_add_epi32 (_mm512_set1_epi32 ((gint32) p0), lane);
    __m512i r1 = _mm512_add_epi32 (r0, _mm512_set1_epi32 (16));
    __mmask16 k0 = _mm512_cmpge_epi32_mask (r0, zero) & _mm512_cmplt_epi32_mask (r0, width);
    __mmask16 k1 = _mm512_cmpge_epi32_mask (r1, zero) & _mm512_cmplt_epi32_mask (r1, width);
    __m512 v = _mm512_permutex2var_ps (_mm512_maskz_loadu_ps (k0, row + p0), even,
        _mm512_maskz_loadu_ps (k1, row + p0 + 16));
    return _mm512_maskz_mov_ps (*ok, v);
  }
  return _mm512_mask_i32gather_ps (_mm512_setzero_ps (), *ok, pos, row, 4);
}

/* Transposes the 16×16 block r[0..15] (row i in r[i]) in place: four
 * rounds of interleaving (32-bit, 64-bit, then 128-bit lanes twice). The
 * bits move untouched, so any 4-byte element type goes through it. */
static inline __attribute__ ((always_inline, target ("avx512f")))
void
ir_k_transpose16 (__m512 r[16])
{
  __m512 t[16];
#pragma GCC unroll 8
  for (gint i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps (r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps (r[i], r[i + 1]);
  }
  /* r[4i + j]: column 4k + j of rows 4i .. 4i + 3 in 128-bit lane k */
#pragma GCC unroll 4
  for (gint i = 0; i < 16; i += 4) {
    __m512d a = _mm512_castps_pd (t[i]), b = _mm512_castps_pd (t[i + 1]);
    __m512d c = _mm512_castps_pd (t[i + 2]), d = _mm512_castps_pd (t[i + 3]);
    r[i] = _mm512_castpd_ps (_mm512_unpacklo_pd (a, c));
    r[i + 1] = _mm512_castpd_ps (_mm512_unpackhi_pd (a, c));
    r[i + 2] = _mm512_castpd_ps (_mm512_unpacklo_pd (b, d));
    r[i + 3] = _mm512_castpd_ps (_mm512_unpackhi_pd (b, d));
  }
#pragma GCC unroll 4
  for (gint j = 0; j < 4; j++) {
    __m512 a0 = _mm512_shuffle_f32x4 (r[j], r[4 + j], 0x88);
    __m512 a1 = _mm512_shuffle_f32x4 (r[j], r[4 + j], 0xdd);
    __m512 b0 = _mm512_shuffle_f32x4 (r[8 + j], r[12 + j], 0x88);
    __m512 b1 = _mm512_shuffle_f32x4 (r[8 + j], r[12 + j], 0xdd);
    t[j] = _mm512_shuffle_f32x4 (a0, b0, 0x88);
    t[4 + j] = _mm512_shuffle_f32x4 (a1, b1, 0x88);
    t[8 + j] = _mm512_shuffle_f32x4 (a0, b0, 0xdd);
    t[12 + j] = _mm512_shuffle_f32x4 (a1, b1, 0xdd);
  }
#pragma GCC unroll 16
  for (gint i = 0; i < 16; i++)
    r[i] = t[i];
}
