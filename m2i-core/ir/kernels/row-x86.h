/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* row-x86.h — AVX-512 loads of 16 strided row elements, shared by the
 * pooling and depthwise convolution planes (not installed).
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
