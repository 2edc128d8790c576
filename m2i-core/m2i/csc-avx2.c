/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* csc-avx2.c — the csc kernels with AVX2 (+F16C, FMA).
 *
 * The integer kernels take 32 pixels a step as 16-bit lanes of even and of
 * odd pixels (lane j: pixels 2j and 2j + 1, which share chroma sample j),
 * so the chroma terms need no duplication and nothing crosses 128-bit lanes
 * before the stores.
 */
#include "csc-kernels.h"

#include <base/m2i-cpu.h>

#ifdef HAVE_X86
#include <immintrin.h>

#define AVX2 M2I_CSC_AVX2
#define AVX2I __attribute__((target("avx2,f16c,fma"), always_inline))
#define BLK 32

/* ---- integer csc: 32 pixels a step, even and odd pixels apart ------------- */

/* Constants of the integer kernels. The multipliers go through an empty asm
 * statement: the compiler would otherwise turn each multiplication by a
 * constant into two or three shifts and adds, which cost more than the one
 * multiplication (shifts issue at the multipliers' rate, two per cycle). */
typedef struct {
  __m256i k409, k208, k100, k1596, k1000, k813, k391, k18, k164, kdiv, lo8;
} Consts;

static AVX2I inline __m256i
hidden16 (short v)
{
  __m256i x = _mm256_set1_epi16 (v);
  __asm__ ("" : "+x" (x));
  return x;
}

static AVX2I inline void
consts_init (Consts *k)
{
  k->k409 = hidden16 (409);
  k->k208 = hidden16 (208);
  k->k100 = hidden16 (100);
  k->k1596 = hidden16 (1596);
  k->k1000 = hidden16 (1000);
  k->k813 = hidden16 (813);
  k->k391 = hidden16 (391);
  k->k18 = hidden16 (18);
  k->k164 = hidden16 (164);
  k->kdiv = hidden16 (-31981);          /* 33555 as u16 */
  k->lo8 = _mm256_set1_epi16 (0xff);
}

/* The six terms (m2i_csc_chroma_terms) of 16 chroma samples, w = U + 256 V
 * per 16-bit lane. */
static AVX2I inline void
terms16 (__m256i w, const Consts *k, __m256i t[CSC_N_TERMS])
{
  __m256i u = _mm256_and_si256 (w, k->lo8), v = _mm256_srli_epi16 (w, 8);
  __m256i a = _mm256_mulhi_epu16 (w, k->k409);
  t[CSC_QR] = _mm256_sub_epi16 (a, _mm256_set1_epi16 (225));
  t[CSC_RR] = _mm256_add_epi16 (_mm256_sub_epi16 (_mm256_mullo_epi16 (v, k->k1596),
          _mm256_mullo_epi16 (a, k->k1000)), _mm256_set1_epi16 (2588));
  __m256i s = _mm256_add_epi16 (_mm256_mulhi_epu16 (w, k->k208),
      _mm256_mulhi_epu16 (_mm256_slli_epi16 (w, 8), k->k100));
  t[CSC_QG] = _mm256_sub_epi16 (_mm256_set1_epi16 (127), s);
  t[CSC_RG] = _mm256_add_epi16 (_mm256_sub_epi16 (_mm256_sub_epi16 (_mm256_mullo_epi16 (s, k->k1000),
              _mm256_mullo_epi16 (v, k->k813)), _mm256_mullo_epi16 (u, k->k391)),
      _mm256_set1_epi16 (8988));
  t[CSC_QB] = _mm256_sub_epi16 (_mm256_add_epi16 (u, u), _mm256_set1_epi16 (277));
  t[CSC_RB] = _mm256_add_epi16 (_mm256_mullo_epi16 (u, k->k18), _mm256_set1_epi16 (572));
}

static AVX2I inline __m256i
channel16 (__m256i y, __m256i t164, __m256i q, __m256i r, const Consts *k)
{
  __m256i d = _mm256_srli_epi16 (_mm256_mulhi_epu16 (_mm256_add_epi16 (t164, r), k->kdiv), 9);
  return _mm256_add_epi16 (_mm256_add_epi16 (y, q), d);
}

/* R, G, B of 32 pixels (bytes @y) as 16-bit values, out[c][0] of the even
 * pixels (lane j: pixel 2j), out[c][1] of the odd ones, from the terms of
 * the even (te) and odd (to) pixels. */
static AVX2I inline void
csc32 (const guint8 *y, const __m256i te[CSC_N_TERMS], const __m256i to[CSC_N_TERMS],
    const Consts *k, __m256i out[3][2])
{
  __m256i yw = _mm256_loadu_si256 ((const __m256i *) y);
  __m256i ye = _mm256_and_si256 (yw, k->lo8), yo = _mm256_srli_epi16 (yw, 8);
  __m256i me = _mm256_mullo_epi16 (ye, k->k164), mo = _mm256_mullo_epi16 (yo, k->k164);
  for (int c = 0; c < 3; c++) {
    out[c][0] = channel16 (ye, me, te[2 * c], te[2 * c + 1], k);
    out[c][1] = channel16 (yo, mo, to[2 * c], to[2 * c + 1], k);
  }
}

/* Interleaved store of 32 pixels from the even/odd values of the channels
 * that come first (f), second (g) and third (s) in memory. Per 128-bit lane
 * (16 pixels, 48 bytes) the byte pairs (f,g) of even pixels, (s,f) of an
 * even and the next odd pixel and (g,s) of odd pixels cycle through the
 * output: they come from two byte packs and an unpack, are put into place by
 * one pshufb per kind (csc_il_shuf) and merged by word blends. */
static AVX2I inline void
store_il32 (guint8 *o, const __m256i f[2], const __m256i g[2], const __m256i s[2])
{
  __m256i p1 = _mm256_packus_epi16 (f[0], s[0]), p2 = _mm256_packus_epi16 (g[0], f[1]);
  __m256i p3 = _mm256_packus_epi16 (g[1], s[1]);
  __m256i a = _mm256_shuffle_epi8 (_mm256_unpacklo_epi8 (p1, p2),
      _mm256_broadcastsi128_si256 (_mm_loadu_si128 ((const __m128i *) csc_il_shuf[0])));
  __m256i b = _mm256_shuffle_epi8 (_mm256_unpackhi_epi8 (p1, p2),
      _mm256_broadcastsi128_si256 (_mm_loadu_si128 ((const __m128i *) csc_il_shuf[1])));
  __m256i c = _mm256_shuffle_epi8 (p3,
      _mm256_broadcastsi128_si256 (_mm_loadu_si128 ((const __m128i *) csc_il_shuf[2])));
  __m256i c0 = _mm256_blend_epi16 (_mm256_blend_epi16 (a, b, 0x92), c, 0x24);
  __m256i c1 = _mm256_blend_epi16 (_mm256_blend_epi16 (c, a, 0x92), b, 0x24);
  __m256i c2 = _mm256_blend_epi16 (_mm256_blend_epi16 (b, c, 0x92), a, 0x24);
  _mm256_storeu_si256 ((__m256i *) o, _mm256_permute2x128_si256 (c0, c1, 0x20));
  _mm256_storeu_si256 ((__m256i *) (o + 32), _mm256_permute2x128_si256 (c2, c0, 0x30));
  _mm256_storeu_si256 ((__m256i *) (o + 64), _mm256_permute2x128_si256 (c1, c2, 0x31));
}

/* One channel's 32 bytes in pixel order from its even/odd values. */
static AVX2I inline __m256i
natural32 (const __m256i v[2])
{
  return _mm256_shuffle_epi8 (_mm256_packus_epi16 (v[0], v[1]),
      _mm256_broadcastsi128_si256 (_mm_loadu_si128 ((const __m128i *) csc_eo_to_natural)));
}

static AVX2I inline void
store_fp8 (const CscOutSpec *spec, int c, guint8 *dst, gint i, __m128i bytes8)
{
  __m256 f = _mm256_cvtepi32_ps (_mm256_cvtepu8_epi32 (bytes8));
  if (spec->norm)
    f = _mm256_add_ps (_mm256_mul_ps (_mm256_sub_ps (f, _mm256_set1_ps (spec->sub[c])),
            _mm256_set1_ps (spec->mul[c])), _mm256_set1_ps (spec->add[c]));
  if (spec->mode == CSC_OUT_PL_F16) {
    __m128i h = _mm256_cvtps_ph (f, _MM_FROUND_TO_NEAREST_INT);
    M2I_F16_REG (h);
    _mm_storeu_si128 ((__m128i *) (dst + 2 * i), h);
  } else {
    _mm256_storeu_ps ((float *) dst + i, f);
  }
}

static AVX2I inline void
store_fp32px (const CscOutSpec *spec, int c, guint8 *dst, __m256i x)
{
  __m128i lo = _mm256_castsi256_si128 (x), hi = _mm256_extracti128_si256 (x, 1);
  store_fp8 (spec, c, dst, 0, lo);
  store_fp8 (spec, c, dst, 8, _mm_srli_si128 (lo, 8));
  store_fp8 (spec, c, dst, 16, hi);
  store_fp8 (spec, c, dst, 24, _mm_srli_si128 (hi, 8));
}

/* Stores one block of 32 pixels (m valid) at pixel offset i of @dst.
 * @mode and @bgr are constants where it is inlined (see CSC_BY_MODE). */
static AVX2I inline void
emit32 (__m256i v[3][2], guint8 *const dst[3], gint i, gint m, const CscOutSpec *spec,
    CscOutMode mode, gboolean bgr)
{
  guint8 otmp[BLK * 3 * 4];
  guint8 *o[3];
  emit_targets (dst, i, m, BLK, spec, otmp, o);
  if (mode == CSC_OUT_IL_U8) {
    if (bgr)
      store_il32 (o[0], v[2], v[1], v[0]);
    else
      store_il32 (o[0], v[0], v[1], v[2]);
  } else if (mode == CSC_OUT_PL_U8) {
    for (int c = 0; c < 3; c++)
      _mm256_storeu_si256 ((__m256i *) o[c], natural32 (v[c]));
  } else {
    for (int c = 0; c < 3; c++)
      store_fp32px (spec, c, o[c], natural32 (v[c]));
  }
  emit_tail (dst, i, m, BLK, spec, o);
}

/* Terms arrays: per block of 32 pixels, the 16 even pixels' terms, then the
 * 16 odd ones'. */
static AVX2 void
prep_444_avx2 (const guint8 *pu, const guint8 *pv, gint n, gint16 *t, gsize ts)
{
  Consts k;
  consts_init (&k);
  for (gint i = 0; i < n; i += BLK) {
    __m256i a, b;
    if (i + BLK <= n) {
      a = _mm256_loadu_si256 ((const __m256i *) (pu + i));
      b = _mm256_loadu_si256 ((const __m256i *) (pv + i));
    } else {
      guint8 tu[BLK] = { 0 }, tv[BLK] = { 0 };
      memcpy (tu, pu + i, (gsize) (n - i));
      memcpy (tv, pv + i, (gsize) (n - i));
      a = _mm256_loadu_si256 ((const __m256i *) tu);
      b = _mm256_loadu_si256 ((const __m256i *) tv);
    }
    /* w = U + 256 V of the even pixels, then of the odd ones */
    __m256i we = _mm256_or_si256 (_mm256_and_si256 (a, k.lo8), _mm256_slli_epi16 (b, 8));
    __m256i wo = _mm256_or_si256 (_mm256_srli_epi16 (a, 8), _mm256_andnot_si256 (k.lo8, b));
    __m256i te[CSC_N_TERMS], to[CSC_N_TERMS];
    terms16 (we, &k, te);
    terms16 (wo, &k, to);
    for (int j = 0; j < CSC_N_TERMS; j++) {
      _mm256_storeu_si256 ((__m256i *) (t + j * ts + i), te[j]);
      _mm256_storeu_si256 ((__m256i *) (t + j * ts + i + 16), to[j]);
    }
  }
}

static AVX2I inline void
row_block (const guint8 *y, const gint16 *t, gsize ts, gint i, gint m, guint8 *const dst[3],
    const CscOutSpec *spec, const Consts *k, CscOutMode mode, gboolean bgr)
{
  const guint8 *yp = y + i;
  guint8 ytmp[BLK];
  if (m < BLK) {
    memset (ytmp, 0, sizeof ytmp);
    memcpy (ytmp, yp, (gsize) m);
    yp = ytmp;
  }
  __m256i te[CSC_N_TERMS], to[CSC_N_TERMS], v[3][2];
  for (int j = 0; j < CSC_N_TERMS; j++) {
    te[j] = _mm256_loadu_si256 ((const __m256i *) (t + j * ts + i));
    to[j] = _mm256_loadu_si256 ((const __m256i *) (t + j * ts + i + 16));
  }
  csc32 (yp, te, to, k, v);
  emit32 (v, dst, i, m, spec, mode, bgr);
}

static AVX2I inline void
row_loop (const guint8 *y, const gint16 *t, gsize ts, gint n, guint8 *const dst[3],
    const CscOutSpec *spec, CscOutMode mode, gboolean bgr)
{
  Consts k;
  consts_init (&k);
  gint i = 0;
  for (; i + BLK <= n; i += BLK)
    row_block (y, t, ts, i, BLK, dst, spec, &k, mode, bgr);
  if (i < n)
    row_block (y, t, ts, i, n - i, dst, spec, &k, mode, bgr);
}

static AVX2 void
row_avx2 (const guint8 *y, const gint16 *t, gsize ts, gint n, guint8 *const dst[3],
    const CscOutSpec *spec)
{
  CSC_BY_MODE (spec, row_loop, y, t, ts, n, dst, spec);
}

/* Two luma rows sharing one chroma row (y1 may be NULL): the terms of 16
 * chroma samples serve the even and the odd pixels of both rows. c1 is the
 * NV12 UV row (c2 NULL) or the I420 U row (c2 the V row). */
static AVX2I inline void
pair_block (const guint8 *y0, const guint8 *y1, const guint8 *c1, const guint8 *c2, gint i,
    gint m, guint8 *const d0[3], guint8 *const d1[3], const CscOutSpec *spec, const Consts *k,
    CscOutMode mode, gboolean bgr)
{
  guint8 tmp[4 * BLK];
  PairSrc ps;
  pair_src (&ps, y0, y1, c1, c2, i, m, BLK, tmp);
  __m256i w;
  if (c2)
    w = _mm256_or_si256 (_mm256_cvtepu8_epi16 (_mm_loadu_si128 ((const __m128i *) ps.c)),
        _mm256_slli_epi16 (_mm256_cvtepu8_epi16 (_mm_loadu_si128 ((const __m128i *) ps.v)), 8));
  else
    w = _mm256_loadu_si256 ((const __m256i *) ps.c);
  __m256i t[CSC_N_TERMS], v[3][2];
  terms16 (w, k, t);
  csc32 (ps.y0, t, t, k, v);
  emit32 (v, d0, i, m, spec, mode, bgr);
  if (ps.y1) {
    csc32 (ps.y1, t, t, k, v);
    emit32 (v, d1, i, m, spec, mode, bgr);
  }
}

/* Whole blocks, then the last, partial one (m constant in the loop, so its
 * padding code is compiled out there). */
static AVX2I inline void
pair_loop (const guint8 *y0, const guint8 *y1, const guint8 *c1, const guint8 *c2, gint n,
    guint8 *const d0[3], guint8 *const d1[3], const CscOutSpec *spec, CscOutMode mode,
    gboolean bgr)
{
  Consts k;
  consts_init (&k);
  gint i = 0;
  for (; i + BLK <= n; i += BLK)
    pair_block (y0, y1, c1, c2, i, BLK, d0, d1, spec, &k, mode, bgr);
  if (i < n)
    pair_block (y0, y1, c1, c2, i, n - i, d0, d1, spec, &k, mode, bgr);
}

static AVX2 void
pair_avx2 (const guint8 *y0, const guint8 *y1, const guint8 *c1, const guint8 *c2, gint n,
    guint8 *const d0[3], guint8 *const d1[3], const CscOutSpec *spec)
{
  CSC_BY_MODE (spec, pair_loop, y0, y1, c1, c2, n, d0, d1, spec);
}

AVX2 void
m2i_csc_u8_to_f16_avx2 (const guint8 *src, m2i_f16 *dst, gint n)
{
  gint i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 f = _mm256_cvtepi32_ps (_mm256_cvtepu8_epi32 (_mm_loadl_epi64 ((const __m128i *) (src + i))));
    __m128i h = _mm256_cvtps_ph (f, _MM_FROUND_TO_NEAREST_INT);
    M2I_F16_REG (h);
    _mm_storeu_si128 ((__m128i *) (dst + i), h);
  }
  for (; i < n; i++)
    dst[i] = m2i_csc_u8_f16[src[i]];
}

/* Bytes at clamped offsets: 8 dwords read at min(o, w - 4), shifted so the
 * wanted byte (and the next ones) come first. */
static AVX2I inline __m256i
gather8 (const guint8 *base, __m256i o, __m256i wmax)
{
  __m256i oc = _mm256_min_epi32 (o, wmax);
  __m256i g = _mm256_i32gather_epi32 ((const int *) base, oc, 1);
  return _mm256_srlv_epi32 (g, _mm256_slli_epi32 (_mm256_sub_epi32 (o, oc), 3));
}

/* Low byte of each dword -> 8 bytes at dst. */
static AVX2I inline void
store_b8 (guint8 *dst, __m256i g)
{
  const __m256i b0 = _mm256_setr_epi8 (0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
      0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
  g = _mm256_permutevar8x32_epi32 (_mm256_shuffle_epi8 (g, b0), _mm256_setr_epi32 (0, 4, 0, 0, 0, 0, 0, 0));
  _mm_storel_epi64 ((__m128i *) dst, _mm256_castsi256_si128 (g));
}

static AVX2 void
gather_avx2 (const guint8 *y, gint wy, const guint8 *c1, const guint8 *c2, gint wc,
    const gint32 *xs, gint K, guint8 *restrict cy, guint8 *restrict cu, guint8 *restrict cv)
{
  gint k = 0;
  if (wy >= 4 && wc >= 4) {
    const __m256i ymax = _mm256_set1_epi32 (wy - 4), cmax = _mm256_set1_epi32 (wc - 4);
    for (; k + 8 <= K; k += 8) {
      __m256i x = _mm256_loadu_si256 ((const __m256i *) (xs + k));
      if (y)
        store_b8 (cy + k, gather8 (y, x, ymax));
      if (c1 && !c2) {
        __m256i g = gather8 (c1, _mm256_and_si256 (x, _mm256_set1_epi32 (~1)), cmax);
        store_b8 (cu + k, g);
        store_b8 (cv + k, _mm256_srli_epi32 (g, 8));
      } else if (c1) {
        __m256i h = _mm256_srli_epi32 (x, 1);
        store_b8 (cu + k, gather8 (c1, h, cmax));
        store_b8 (cv + k, gather8 (c2, h, cmax));
      }
    }
  }
  m2i_csc_gather_c (y, wy, c1, c2, wc, xs + k, K - k, cy + k, cu + k, cv + k);
}

AVX2 void
m2i_csc_hpass_expanded_avx2 (const float *w, gint T, gint n, const guint8 *p, gint K, float *dst)
{
  hpass_expanded_body (w, T, n, p, K, dst);
}

AVX2 void
m2i_csc_finish_f16_norm_avx2 (const float *v, const float *sub, const float *mul, const float *add,
    gint n, m2i_f16 *out)
{
  gint i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 x = _mm256_cvtph_ps (_mm256_cvtps_ph (_mm256_loadu_ps (v + i), _MM_FROUND_TO_NEAREST_INT));
    __m256 y = _mm256_add_ps (_mm256_mul_ps (_mm256_sub_ps (x, _mm256_loadu_ps (sub + i)),
            _mm256_loadu_ps (mul + i)), _mm256_loadu_ps (add + i));
    __m128i h = _mm256_cvtps_ph (y, _MM_FROUND_TO_NEAREST_INT);
    M2I_F16_REG (h);
    _mm_storeu_si128 ((__m128i *) (out + i), h);
  }
  m2i_csc_finish_f16_norm_c (v + i, sub + i, mul + i, add + i, n - i, out + i);
}

/* ---- float pair path --------------------------------------------------------
 *
 * csc-avx512.c's float pair kernels with 8 outputs per step and 16-byte
 * windows (no gathers). The arithmetic runs with FMA where the CPU has it
 * and with separate multiplies and adds where not: both are exact
 * (csc-kernels.h) and give the same bits; @fma is a constant of each
 * instantiation. AVX2 has 16 vector registers: the kernels keep the rows'
 * work apart (row a's sums, then row b's channel by channel, each finished
 * at once) and work on a local copy of the table, which no store can alias
 * (the build does not assume strict aliasing). */

static AVX2I inline __m256
fp_madd8 (__m256 a, __m256 b, __m256 c, gboolean fma)
{
  return fma ? _mm256_fmadd_ps (a, b, c) : _mm256_add_ps (_mm256_mul_ps (a, b), c);
}

static AVX2I inline __m256
fp_byte8 (__m256i g, int shift)
{
  return _mm256_cvtepi32_ps (_mm256_and_si256 (_mm256_srli_epi32 (g, shift),
          _mm256_set1_epi32 (0xff)));
}

/* K of the three channels for both taps, k[tap][channel], from chroma
 * dwords */
typedef struct {
  __m256 k[2][3];
} FTerms8;

static AVX2I inline void
fp_terms8 (__m256 u, __m256 v, __m256 k[3], gboolean fma)
{
  k[0] = fp_madd8 (v, _mm256_set1_ps (FP_CVR), _mm256_set1_ps (FP_KR), fma);
  k[1] = fp_madd8 (u, _mm256_set1_ps (FP_CUG),
      fp_madd8 (v, _mm256_set1_ps (FP_CVG), _mm256_set1_ps (FP_KG), fma), fma);
  k[2] = fp_madd8 (u, _mm256_set1_ps (FP_CUB), _mm256_set1_ps (FP_KB), fma);
}

static AVX2I inline void
fp_chroma_terms8 (__m256i p, FTerms8 *k, gboolean fma)
{
  fp_terms8 (fp_byte8 (p, 0), fp_byte8 (p, 8), k->k[0], fma);
  fp_terms8 (fp_byte8 (p, 16), _mm256_cvtepi32_ps (_mm256_srli_epi32 (p, 24)), k->k[1], fma);
}

static AVX2I inline void
fp_luma_lanes8 (__m256i p, __m256 y[2])
{
  y[0] = fp_byte8 (p, 0);
  y[1] = _mm256_cvtepi32_ps (_mm256_srli_epi32 (p, 8));
}

typedef struct {
  __m256 w0, w1, m0, m1;
} FWeights8;

static AVX2I inline void
fp_weights8 (const FPairTable *t, gint i, FWeights8 *w)
{
  w->w0 = _mm256_load_ps (t->w0 + i);
  w->w1 = _mm256_load_ps (t->w1 + i);
  w->m0 = _mm256_load_ps (t->w0m + i);
  w->m1 = _mm256_load_ps (t->w1m + i);
}

/* w·c for c = clamp (floor (Y·1.164 + K), 0, 255): with FMA as
 * fma (w, M + c, −w·M), else as w·((M + c) − M) */
static AVX2I inline __m256
fp_wcsc8 (__m256 y, __m256 k, __m256 w, __m256 wm, gboolean fma)
{
  __m256 u = _mm256_add_ps (fp_madd8 (y, _mm256_set1_ps (FP_CY), k, fma), _mm256_set1_ps (FP_MH));
  __m256i b = _mm256_max_epi32 (_mm256_castps_si256 (u), _mm256_set1_epi32 (FP_MBITS));
  __m256 cu = _mm256_castsi256_ps (_mm256_min_epi32 (b, _mm256_set1_epi32 (FP_MBITS + 255)));
  if (fma)
    return _mm256_fmadd_ps (w, cu, wm);
  return _mm256_mul_ps (w, _mm256_sub_ps (cu, _mm256_set1_ps (FP_M)));
}

/* Horizontal sum of channel c of one row: luma lanes y, terms k */
static AVX2I inline __m256
fp_hsum8 (const __m256 y[2], const FTerms8 *k, int c, const FWeights8 *w, gboolean fma)
{
  return _mm256_add_ps (fp_wcsc8 (y[0], k->k[0][c], w->w0, w->m0, fma),
      fp_wcsc8 (y[1], k->k[1][c], w->w1, w->m1, fma));
}

/* The source dwords of one block of 8 outputs (csc-avx512.c, fp_fetch16):
 * raw[0], raw[1] luma of rows a and b, raw[2], raw[3] chroma of a and b
 * (@yb NULL: raw[1] = raw[0]; @cb1 NULL: raw[3] = raw[2]). Blocks of
 * FP_LOAD_SHUF inline; the others (the tail, one output per window, no
 * window) out of line. */
typedef struct {
  const guint8 *ya, *yb, *ca1, *ca2, *cb1, *cb2;
} FRows8;

static AVX2 __attribute__((noinline)) void
fp_fetch_other8 (const FPairTable *t, gint i, const FRows8 *r, __m256i raw[4])
{
  const guint8 *rows[4][2] = { { r->ya, NULL }, { r->yb, NULL }, { r->ca1, r->ca2 },
    { r->cb1, r->cb2 } };
  for (int k = 0; k < 4; k++) {
    if (!rows[k][0]) {
      raw[k] = raw[k - 1];
      continue;
    }
    if (t->load[i / 16] != FP_LOAD_FILL) {
      raw[k] = m2i_fpair_shuf8 (rows[k][0], rows[k][1], (k < 2 ? t->ysh : t->csh) + i / 8);
      continue;
    }
    guint32 l[16];
    if (k < 2)
      fpair_fill_luma (t, i & ~15, rows[k][0], l);
    else
      fpair_fill_chroma (t, i & ~15, rows[k][0], rows[k][1], l);
    raw[k] = _mm256_loadu_si256 ((const __m256i *) (l + (i & 8)));
  }
}

static AVX2I inline void
fp_fetch8 (const FPairTable *t, gint i, const FRows8 *r, __m256i raw[4])
{
  if (t->load[i / 16] != FP_LOAD_SHUF) {
    fp_fetch_other8 (t, i, r, raw);
    return;
  }
  raw[0] = m2i_fpair_shuf8_w4 (r->ya, NULL, t->ysh + i / 8);
  raw[1] = r->yb ? m2i_fpair_shuf8_w4 (r->yb, NULL, t->ysh + i / 8) : raw[0];
  raw[2] = m2i_fpair_shuf8_w4 (r->ca1, r->ca2, t->csh + i / 8);
  raw[3] = r->cb1 ? m2i_fpair_shuf8_w4 (r->cb1, r->cb2, t->csh + i / 8) : raw[2];
}

/* Three planes of 8 sums (the last block: @m of them) */
static AVX2I inline void
fp_store_h8 (float *d, gint i, gint m, __m256 h)
{
  if (m == 8) {
    _mm256_storeu_ps (d + i, h);
  } else {
    float tmp[8];
    _mm256_storeu_ps (tmp, h);
    memcpy (d + i, tmp, (gsize) m * sizeof (float));
  }
}

static AVX2I inline void
fp_rows8 (const FPairTable *tab, const guint8 *y0, const guint8 *y1, const guint8 *c1,
    const guint8 *c2, float *h0, float *h1, gboolean fma)
{
  const FPairTable tl = *tab, *t = &tl;
  float *d[2][3];
  FRows8 rows = { y0, y1, c1, c2, NULL, NULL };
  fp_planes (t, h0, h1, d);
  for (gint i = 0; i < t->n; i += 8) {
    __m256i raw[4];
    FTerms8 k;
    FWeights8 w;
    __m256 l[2];
    gint m = MIN (8, t->n - i);
    fp_fetch8 (t, i, &rows, raw);
    fp_chroma_terms8 (raw[2], &k, fma);
    fp_weights8 (t, i, &w);
    for (int r = 0; r < (y1 ? 2 : 1); r++) {
      fp_luma_lanes8 (raw[r], l);
      for (int c = 0; c < 3; c++)
        fp_store_h8 (d[r][c], i, m, fp_hsum8 (l, &k, c, &w, fma));
    }
  }
}

/* Per output channel (R, G, B): plane and norm coefficients */
typedef struct {
  m2i_f16 *o[3];
  float sub[3], mul[3], add[3];
} FOut8;

/* fpair_out's arithmetic for one block: row a's sums, then row b's, and
 * the vertical sums v[c] */
static AVX2I inline void
fp_out_sums8 (const FPairTable *t, gint i, const __m256i raw[4], gboolean share, __m256 vw0,
    __m256 vw1, __m256 v[3], gboolean fma)
{
  FTerms8 k;
  FWeights8 w;
  __m256 l[2], ha[3];
  fp_weights8 (t, i, &w);
  fp_chroma_terms8 (raw[2], &k, fma);
  fp_luma_lanes8 (raw[0], l);
  for (int c = 0; c < 3; c++)
    ha[c] = fp_hsum8 (l, &k, c, &w, fma);
  if (!share)
    fp_chroma_terms8 (raw[3], &k, fma);
  fp_luma_lanes8 (raw[1], l);
  for (int c = 0; c < 3; c++)
    v[c] = _mm256_add_ps (_mm256_mul_ps (vw0, ha[c]), _mm256_mul_ps (vw1, fp_hsum8 (l, &k, c,
                &w, fma)));
}

/* fp16 rounding, @norm and the store of @m outputs at @i */
static AVX2I inline void
fp_out_finish8 (const FOut8 *o, gint i, const __m256 v[3], gboolean norm, gint m)
{
  for (int c = 0; c < 3; c++) {
    __m128i hv = _mm256_cvtps_ph (v[c], _MM_FROUND_TO_NEAREST_INT);
    if (norm) {
      __m256 x = _mm256_add_ps (_mm256_mul_ps (_mm256_sub_ps (_mm256_cvtph_ps (hv),
                  _mm256_set1_ps (o->sub[c])), _mm256_set1_ps (o->mul[c])),
          _mm256_set1_ps (o->add[c]));
      hv = _mm256_cvtps_ph (x, _MM_FROUND_TO_NEAREST_INT);
    }
    M2I_F16_REG (hv);
    if (m == 8) {
      _mm_storeu_si128 ((__m128i *) (o->o[c] + i), hv);
    } else {
      m2i_f16 th[8];
      _mm_storeu_si128 ((__m128i *) th, hv);
      memcpy (o->o[c] + i, th, (gsize) m * sizeof (m2i_f16));
    }
  }
}

/* The blocks of one output row: full ones with the next block's source
 * fetched ahead and the previous block's finishing after this block's sums
 * (each would otherwise wait for a long chain: load → shuffle → convert,
 * and fp16 → fp32 → fp16), then the partial last one. */
static AVX2I inline void
fp_out_blocks8 (const FPairTable *t, const FRows8 *rows, gboolean share, __m256 vw0,
    __m256 vw1, const FOut8 *o, gboolean norm, gboolean fma)
{
  gint nfull = t->n & ~7;
  __m256i next[4];
  __m256 prev[3];
  if (nfull)
    fp_fetch8 (t, 0, rows, next);
  for (gint i = 0; i < nfull; i += 8) {
    __m256i raw[4] = { next[0], next[1], next[2], next[3] };
    __m256 v[3];
    if (i + 8 < nfull)
      fp_fetch8 (t, i + 8, rows, next);
    fp_out_sums8 (t, i, raw, share, vw0, vw1, v, fma);
    if (i)
      fp_out_finish8 (o, i - 8, prev, norm, 8);
    prev[0] = v[0];
    prev[1] = v[1];
    prev[2] = v[2];
  }
  if (nfull)
    fp_out_finish8 (o, nfull - 8, prev, norm, 8);
  if (nfull < t->n) {
    __m256i raw[4];
    __m256 v[3];
    fp_fetch8 (t, nfull, rows, raw);
    fp_out_sums8 (t, nfull, raw, share, vw0, vw1, v, fma);
    fp_out_finish8 (o, nfull, v, norm, t->n - nfull);
  }
}

static AVX2I inline void
fp_out8 (const FPairTable *tab, const guint8 *ya, const guint8 *ca1, const guint8 *ca2,
    const guint8 *yb, const guint8 *cb1, const guint8 *cb2, float wy0, float wy1,
    const float *sub, const float *mul, const float *add, m2i_f16 *const out[3], gboolean fma)
{
  const FPairTable tl = *tab, *t = &tl;
  const __m256 vw0 = _mm256_set1_ps (wy0), vw1 = _mm256_set1_ps (wy1);
  gboolean share = ca1 == cb1;
  FRows8 rows = { ya, yb, ca1, ca2, share ? NULL : cb1, share ? NULL : cb2 };
  FOut8 o;
  for (int c = 0; c < 3; c++) {
    int p = t->plane_of[c];
    o.o[c] = out[p];
    o.sub[c] = sub ? sub[p] : 0.0f;
    o.mul[c] = sub ? mul[p] : 1.0f;
    o.add[c] = sub ? add[p] : 0.0f;
  }
  if (sub)
    fp_out_blocks8 (t, &rows, share, vw0, vw1, &o, TRUE, fma);
  else
    fp_out_blocks8 (t, &rows, share, vw0, vw1, &o, FALSE, fma);
}

static AVX2 void
fpair_rows_avx2 (const FPairTable *t, const guint8 *y0, const guint8 *y1, const guint8 *c1,
    const guint8 *c2, float *h0, float *h1)
{
  if (m2i_cpu_flags () & M2I_CPU_FMA)
    fp_rows8 (t, y0, y1, c1, c2, h0, h1, TRUE);
  else
    fp_rows8 (t, y0, y1, c1, c2, h0, h1, FALSE);
}

static AVX2 void
fpair_out_avx2 (const FPairTable *t, const guint8 *ya, const guint8 *ca1, const guint8 *ca2,
    const guint8 *yb, const guint8 *cb1, const guint8 *cb2, float wy0, float wy1,
    const float *sub, const float *mul, const float *add, m2i_f16 *const out[3])
{
  if (m2i_cpu_flags () & M2I_CPU_FMA)
    fp_out8 (t, ya, ca1, ca2, yb, cb1, cb2, wy0, wy1, sub, mul, add, out, TRUE);
  else
    fp_out8 (t, ya, ca1, ca2, yb, cb1, cb2, wy0, wy1, sub, mul, add, out, FALSE);
}

static AVX2 void
vfinish_f16_avx2 (const float *h0, const float *h1, float wy0, float wy1, gint n,
    const float *sub, const float *mul, const float *add, m2i_f16 *const out[3])
{
  const __m256 w0 = _mm256_set1_ps (wy0), w1 = _mm256_set1_ps (wy1);
  for (int c = 0; c < 3; c++) {
    const float *p = h0 + (gsize) c * n, *q = h1 + (gsize) c * n;
    for (gint i = 0; i < n; i += 8) {
      gint m = MIN (8, n - i);
      __m256 a, b;
      if (m == 8) {
        a = _mm256_loadu_ps (p + i);
        b = _mm256_loadu_ps (q + i);
      } else {
        float ta[8] = { 0 }, tb[8] = { 0 };
        memcpy (ta, p + i, (gsize) m * sizeof (float));
        memcpy (tb, q + i, (gsize) m * sizeof (float));
        a = _mm256_loadu_ps (ta);
        b = _mm256_loadu_ps (tb);
      }
      __m128i hv = _mm256_cvtps_ph (_mm256_add_ps (_mm256_mul_ps (w0, a), _mm256_mul_ps (w1, b)),
          _MM_FROUND_TO_NEAREST_INT);
      if (sub) {
        __m256 x = _mm256_add_ps (_mm256_mul_ps (_mm256_sub_ps (_mm256_cvtph_ps (hv),
                    _mm256_set1_ps (sub[c])), _mm256_set1_ps (mul[c])), _mm256_set1_ps (add[c]));
        hv = _mm256_cvtps_ph (x, _MM_FROUND_TO_NEAREST_INT);
      }
      M2I_F16_REG (hv);
      if (m == 8) {
        _mm_storeu_si128 ((__m128i *) (out[c] + i), hv);
      } else {
        m2i_f16 th[8];
        _mm_storeu_si128 ((__m128i *) th, hv);
        memcpy (out[c] + i, th, (gsize) m * sizeof (m2i_f16));
      }
    }
  }
}

static AVX2 void
norm_f16_avx2 (const m2i_f16 *in, m2i_f16 *out, gint n, float sub, float mul, float add)
{
  const __m256 s = _mm256_set1_ps (sub), m = _mm256_set1_ps (mul), a = _mm256_set1_ps (add);
  gint i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 x = _mm256_cvtph_ps (_mm_loadu_si128 ((const __m128i *) (in + i)));
    x = _mm256_add_ps (_mm256_mul_ps (_mm256_sub_ps (x, s), m), a);
    __m128i h = _mm256_cvtps_ph (x, _MM_FROUND_TO_NEAREST_INT);
    M2I_F16_REG (h);
    _mm_storeu_si128 ((__m128i *) (out + i), h);
  }
  m2i_csc_norm_f16_c (in + i, out + i, n - i, sub, mul, add);
}

const CscKernels m2i_csc_kernels_avx2_table = {
  .name = "avx2", .block = BLK, .prep_444 = prep_444_avx2, .row = row_avx2, .pair = pair_avx2,
  .u8_to_f16 = m2i_csc_u8_to_f16_avx2, .gather = gather_avx2,
  .gather_pairs = m2i_csc_gather_pairs_c, .hpass_expanded = m2i_csc_hpass_expanded_avx2,
  .finish_f16_norm = m2i_csc_finish_f16_norm_avx2, .fpair_rows = fpair_rows_avx2,
  .fpair_fetch = FP_FETCH_SHUF, .vfinish_f16 = vfinish_f16_avx2, .fpair_out = fpair_out_avx2,
  .norm_f16 = norm_f16_avx2,
};
#endif
