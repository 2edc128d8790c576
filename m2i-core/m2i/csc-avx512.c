/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* csc-avx512.c — the csc kernels with AVX-512 (F, BW, DQ, VL), and with
 * AVX-512 VBMI for the interleaved stores and the float pair path's loads.
 *
 * The integer kernels are csc-avx2.c's at twice the width (64 pixels a
 * step, even and odd pixels apart).
 */
#include "csc-kernels.h"

#ifdef HAVE_X86
#include <immintrin.h>

/* ---- integer csc: 64 pixels a step, even and odd pixels apart ------------- */

#define AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2,f16c,fma")))
#define AVX512I __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2,f16c,fma"), always_inline))
#define VBMIF __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512vbmi,avx2,f16c,fma")))
#define VBMIFI __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512vbmi,avx2,f16c,fma"), always_inline))
#define BLK 64

/* As in csc-avx2.c: multipliers hidden from the compiler, which would make
 * shift/add chains of them. */
typedef struct {
  __m512i k409, k208, k100, k1596, k1000, k813, k391, k18, k164, kdiv, lo8;
} Consts;

static AVX512I inline __m512i
hidden16 (short v)
{
  __m512i x = _mm512_set1_epi16 (v);
  __asm__ ("" : "+v" (x));
  return x;
}

static AVX512I inline void
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
  k->lo8 = _mm512_set1_epi16 (0xff);
}

/* The six terms (m2i_csc_chroma_terms) of 32 chroma samples, w = U + 256 V
 * per 16-bit lane. */
static AVX512I inline void
terms32 (__m512i w, const Consts *k, __m512i t[CSC_N_TERMS])
{
  __m512i u = _mm512_and_si512 (w, k->lo8), v = _mm512_srli_epi16 (w, 8);
  __m512i a = _mm512_mulhi_epu16 (w, k->k409);
  t[CSC_QR] = _mm512_sub_epi16 (a, _mm512_set1_epi16 (225));
  t[CSC_RR] = _mm512_add_epi16 (_mm512_sub_epi16 (_mm512_mullo_epi16 (v, k->k1596),
          _mm512_mullo_epi16 (a, k->k1000)), _mm512_set1_epi16 (2588));
  __m512i s = _mm512_add_epi16 (_mm512_mulhi_epu16 (w, k->k208),
      _mm512_mulhi_epu16 (_mm512_slli_epi16 (w, 8), k->k100));
  t[CSC_QG] = _mm512_sub_epi16 (_mm512_set1_epi16 (127), s);
  t[CSC_RG] = _mm512_add_epi16 (_mm512_sub_epi16 (_mm512_sub_epi16 (_mm512_mullo_epi16 (s, k->k1000),
              _mm512_mullo_epi16 (v, k->k813)), _mm512_mullo_epi16 (u, k->k391)),
      _mm512_set1_epi16 (8988));
  t[CSC_QB] = _mm512_sub_epi16 (_mm512_add_epi16 (u, u), _mm512_set1_epi16 (277));
  t[CSC_RB] = _mm512_add_epi16 (_mm512_mullo_epi16 (u, k->k18), _mm512_set1_epi16 (572));
}

static AVX512I inline __m512i
channel32 (__m512i y, __m512i t164, __m512i q, __m512i r, const Consts *k)
{
  __m512i d = _mm512_srli_epi16 (_mm512_mulhi_epu16 (_mm512_add_epi16 (t164, r), k->kdiv), 9);
  return _mm512_add_epi16 (_mm512_add_epi16 (y, q), d);
}

/* R, G, B of 64 pixels as 16-bit values, out[c][0] of the even pixels,
 * out[c][1] of the odd ones (csc-avx2.c, csc32). */
static AVX512I inline void
csc64 (const guint8 *y, const __m512i te[CSC_N_TERMS], const __m512i to[CSC_N_TERMS],
    const Consts *k, __m512i out[3][2])
{
  __m512i yw = _mm512_loadu_si512 ((const void *) y);
  __m512i ye = _mm512_and_si512 (yw, k->lo8), yo = _mm512_srli_epi16 (yw, 8);
  __m512i me = _mm512_mullo_epi16 (ye, k->k164), mo = _mm512_mullo_epi16 (yo, k->k164);
  for (int c = 0; c < 3; c++) {
    out[c][0] = channel32 (ye, me, te[2 * c], te[2 * c + 1], k);
    out[c][1] = channel32 (yo, mo, to[2 * c], to[2 * c + 1], k);
  }
}

static AVX512I inline __m512i
bcast16 (const guint8 *m)
{
  return _mm512_broadcast_i32x4 (_mm_loadu_si128 ((const __m128i *) m));
}

/* Interleaved store of 64 pixels from the even/odd values of the channels
 * first (f), second (g) and third (s) in memory: per 128-bit lane as
 * csc-avx2.c's store_il32, then the 48-byte lane results moved into three
 * 64-byte vectors. */
static AVX512 void
store_il64 (guint8 *o, const __m512i f[2], const __m512i g[2], const __m512i s[2])
{
  __m512i p1 = _mm512_packus_epi16 (f[0], s[0]), p2 = _mm512_packus_epi16 (g[0], f[1]);
  __m512i p3 = _mm512_packus_epi16 (g[1], s[1]);
  __m512i a = _mm512_shuffle_epi8 (_mm512_unpacklo_epi8 (p1, p2), bcast16 (csc_il_shuf[0]));
  __m512i b = _mm512_shuffle_epi8 (_mm512_unpackhi_epi8 (p1, p2), bcast16 (csc_il_shuf[1]));
  __m512i c = _mm512_shuffle_epi8 (p3, bcast16 (csc_il_shuf[2]));
  const __mmask32 m1 = 0x92929292u, m2 = 0x24242424u;
  __m512i v0 = _mm512_mask_blend_epi16 (m2, _mm512_mask_blend_epi16 (m1, a, b), c);
  __m512i v1 = _mm512_mask_blend_epi16 (m2, _mm512_mask_blend_epi16 (m1, c, a), b);
  __m512i v2 = _mm512_mask_blend_epi16 (m2, _mm512_mask_blend_epi16 (m1, b, c), a);
  /* 12 chunks of 16 bytes, chunk 3L + k is lane L of vk; qword indices
   * (2 per chunk) into (first, second) source of each permute */
  __m512i z0 = _mm512_permutex2var_epi64 (v0, _mm512_setr_epi64 (0, 1, 8, 9, 0, 0, 2, 3), v1);
  __m512i z1 = _mm512_permutex2var_epi64 (v1, _mm512_setr_epi64 (2, 3, 0, 0, 12, 13, 4, 5), v0);
  __m512i z2 = _mm512_permutex2var_epi64 (v0, _mm512_setr_epi64 (0, 0, 6, 7, 14, 15, 0, 0), v1);
  /* the holes from v2: z0 chunk 2 = v2 lane 0, z1 chunk 1 = lane 1, z2
   * chunks 0 and 3 = lanes 2 and 3 */
  z0 = _mm512_mask_permutexvar_epi64 (z0, 0x30, _mm512_setr_epi64 (0, 0, 0, 0, 0, 1, 0, 0), v2);
  z1 = _mm512_mask_permutexvar_epi64 (z1, 0x0c, _mm512_setr_epi64 (0, 0, 2, 3, 0, 0, 0, 0), v2);
  z2 = _mm512_mask_permutexvar_epi64 (z2, 0xc3, _mm512_setr_epi64 (4, 5, 0, 0, 0, 0, 6, 7), v2);
  _mm512_storeu_si512 ((void *) o, z0);
  _mm512_storeu_si512 ((void *) (o + 64), z1);
  _mm512_storeu_si512 ((void *) (o + 128), z2);
}

/* With VBMI: each 64-byte output vector is one two-source byte permute of
 * the packs of (f, s) and (g, f) of even pixels and one merging permute of
 * (g, s) of the odd ones; indices from m2i_csc_init_avx512(). */
typedef struct {
  guint8 idx[3][64], idx3[3][64];
  guint64 from3[3];
} VbmiIndex;

static VbmiIndex vbmi_index;

void
m2i_csc_init_avx512 (void)
{
  VbmiIndex *t = &vbmi_index;
  for (int k = 0; k < 3; k++) {
    t->from3[k] = 0;
    for (int b = 0; b < 64; b++) {
      /* byte n of the 192 output bytes: channel c (memory order) of pixel x */
      int n = 64 * k + b, x = n / 3, c = n % 3, j = x / 2, odd = x & 1;
      int lane = 16 * (j / 8) + j % 8;
      /* pack 0 = [f even | s even], pack 1 = [g even | f odd], pack 2 = [g odd | s odd] */
      int pack = odd ? (c == 0 ? 1 : 2) : (c == 1 ? 1 : 0);
      int hi = odd ? c != 1 : c == 2;
      int byte = lane + 8 * hi;
      t->idx[k][b] = (guint8) (pack == 2 ? 0 : byte + 64 * pack);
      t->idx3[k][b] = (guint8) (pack == 2 ? byte : 0);
      if (pack == 2)
        t->from3[k] |= G_GUINT64_CONSTANT (1) << b;
    }
  }
}

static VBMIF void
store_il64_vbmi (guint8 *o, const __m512i f[2], const __m512i g[2], const __m512i s[2])
{
  __m512i p1 = _mm512_packus_epi16 (f[0], s[0]), p2 = _mm512_packus_epi16 (g[0], f[1]);
  __m512i p3 = _mm512_packus_epi16 (g[1], s[1]);
  for (int k = 0; k < 3; k++) {
    __m512i x = _mm512_permutex2var_epi8 (p1,
        _mm512_loadu_si512 ((const void *) vbmi_index.idx[k]), p2);
    x = _mm512_mask_permutexvar_epi8 (x, vbmi_index.from3[k],
        _mm512_loadu_si512 ((const void *) vbmi_index.idx3[k]), p3);
    _mm512_storeu_si512 ((void *) (o + 64 * k), x);
  }
}

typedef void (*StoreIl64) (guint8 *o, const __m512i f[2], const __m512i g[2], const __m512i s[2]);

/* One channel's 64 bytes in pixel order from its even/odd values. */
static AVX512I inline __m512i
natural64 (const __m512i v[2])
{
  return _mm512_shuffle_epi8 (_mm512_packus_epi16 (v[0], v[1]), bcast16 (csc_eo_to_natural));
}

static AVX512I inline void
store_fp16q (const CscOutSpec *spec, int c, guint8 *dst, int q, __m128i bytes16)
{
  __m512 f = _mm512_cvtepi32_ps (_mm512_cvtepu8_epi32 (bytes16));
  if (spec->norm)
    f = _mm512_add_ps (_mm512_mul_ps (_mm512_sub_ps (f, _mm512_set1_ps (spec->sub[c])),
            _mm512_set1_ps (spec->mul[c])), _mm512_set1_ps (spec->add[c]));
  if (spec->mode == CSC_OUT_PL_F16) {
    __m256i h = _mm512_cvtps_ph (f, _MM_FROUND_TO_NEAREST_INT);
    M2I_F16_REG (h);
    _mm256_storeu_si256 ((__m256i *) (dst + 32 * q), h);
  } else {
    _mm512_storeu_ps ((float *) dst + 16 * q, f);
  }
}

/* 64 values of channel c to fp16/fp32 (+norm); immediates stay constants. */
static AVX512I inline void
store_fp16px (const CscOutSpec *spec, int c, guint8 *dst, __m512i x)
{
  store_fp16q (spec, c, dst, 0, _mm512_extracti32x4_epi32 (x, 0));
  store_fp16q (spec, c, dst, 1, _mm512_extracti32x4_epi32 (x, 1));
  store_fp16q (spec, c, dst, 2, _mm512_extracti32x4_epi32 (x, 2));
  store_fp16q (spec, c, dst, 3, _mm512_extracti32x4_epi32 (x, 3));
}

/* Stores one block of 64 pixels (m valid) at pixel offset i of @dst;
 * @mode and @bgr are constants where it is inlined (CSC_BY_MODE). */
static AVX512I inline void
emit64 (__m512i v[3][2], guint8 *const dst[3], gint i, gint m, const CscOutSpec *spec,
    StoreIl64 store_il, CscOutMode mode, gboolean bgr)
{
  guint8 otmp[BLK * 3 * 4];
  guint8 *o[3];
  emit_targets (dst, i, m, BLK, spec, otmp, o);
  if (mode == CSC_OUT_IL_U8) {
    if (bgr)
      store_il (o[0], v[2], v[1], v[0]);
    else
      store_il (o[0], v[0], v[1], v[2]);
  } else if (mode == CSC_OUT_PL_U8) {
    for (int c = 0; c < 3; c++)
      _mm512_storeu_si512 ((void *) o[c], natural64 (v[c]));
  } else {
    for (int c = 0; c < 3; c++)
      store_fp16px (spec, c, o[c], natural64 (v[c]));
  }
  emit_tail (dst, i, m, BLK, spec, o);
}

/* Terms arrays: per block of 64 pixels, the 32 even pixels' terms, then the
 * 32 odd ones'. */
static AVX512 void
prep_444_avx512 (const guint8 *pu, const guint8 *pv, gint n, gint16 *t, gsize ts)
{
  Consts k;
  consts_init (&k);
  for (gint i = 0; i < n; i += BLK) {
    __mmask64 m = i + BLK <= n ? ~G_GUINT64_CONSTANT (0)
        : (G_GUINT64_CONSTANT (1) << (n - i)) - 1;
    __m512i a = _mm512_maskz_loadu_epi8 (m, pu + i), b = _mm512_maskz_loadu_epi8 (m, pv + i);
    __m512i we = _mm512_or_si512 (_mm512_and_si512 (a, k.lo8), _mm512_slli_epi16 (b, 8));
    __m512i wo = _mm512_or_si512 (_mm512_srli_epi16 (a, 8), _mm512_andnot_si512 (k.lo8, b));
    __m512i te[CSC_N_TERMS], to[CSC_N_TERMS];
    terms32 (we, &k, te);
    terms32 (wo, &k, to);
    for (int j = 0; j < CSC_N_TERMS; j++) {
      _mm512_storeu_si512 ((void *) (t + j * ts + i), te[j]);
      _mm512_storeu_si512 ((void *) (t + j * ts + i + 32), to[j]);
    }
  }
}

static AVX512I inline void
row_block (const guint8 *y, const gint16 *t, gsize ts, gint i, gint m, guint8 *const dst[3],
    const CscOutSpec *spec, const Consts *k, StoreIl64 store_il, CscOutMode mode, gboolean bgr)
{
  __m512i te[CSC_N_TERMS], to[CSC_N_TERMS], v[3][2];
  for (int j = 0; j < CSC_N_TERMS; j++) {
    te[j] = _mm512_loadu_si512 ((const void *) (t + j * ts + i));
    to[j] = _mm512_loadu_si512 ((const void *) (t + j * ts + i + 32));
  }
  guint8 ytmp[BLK];
  if (m < BLK) {
    memset (ytmp, 0, sizeof ytmp);
    memcpy (ytmp, y + i, (gsize) m);
  }
  csc64 (m < BLK ? ytmp : y + i, te, to, k, v);
  emit64 (v, dst, i, m, spec, store_il, mode, bgr);
}

static AVX512I inline void
row_body (const guint8 *y, const gint16 *t, gsize ts, gint n, guint8 *const dst[3],
    const CscOutSpec *spec, StoreIl64 store_il, CscOutMode mode, gboolean bgr)
{
  Consts k;
  consts_init (&k);
  gint i = 0;
  for (; i + BLK <= n; i += BLK)
    row_block (y, t, ts, i, BLK, dst, spec, &k, store_il, mode, bgr);
  if (i < n)
    row_block (y, t, ts, i, n - i, dst, spec, &k, store_il, mode, bgr);
}

/* Two luma rows sharing one chroma row, as pair_avx2 (csc-avx2.c). */
static AVX512I inline void
pair_block (const guint8 *y0, const guint8 *y1, const guint8 *c1, const guint8 *c2, gint i,
    gint m, guint8 *const d0[3], guint8 *const d1[3], const CscOutSpec *spec, const Consts *k,
    StoreIl64 store_il, CscOutMode mode, gboolean bgr)
{
  guint8 tmp[4 * BLK];
  PairSrc ps;
  pair_src (&ps, y0, y1, c1, c2, i, m, BLK, tmp);
  __m512i w;
  if (c2)
    w = _mm512_or_si512 (_mm512_cvtepu8_epi16 (_mm256_loadu_si256 ((const __m256i *) ps.c)),
        _mm512_slli_epi16 (_mm512_cvtepu8_epi16 (_mm256_loadu_si256 ((const __m256i *) ps.v)), 8));
  else
    w = _mm512_loadu_si512 ((const void *) ps.c);
  __m512i t[CSC_N_TERMS], v[3][2];
  terms32 (w, k, t);
  csc64 (ps.y0, t, t, k, v);
  emit64 (v, d0, i, m, spec, store_il, mode, bgr);
  if (ps.y1) {
    csc64 (ps.y1, t, t, k, v);
    emit64 (v, d1, i, m, spec, store_il, mode, bgr);
  }
}

static AVX512I inline void
pair_body (const guint8 *y0, const guint8 *y1, const guint8 *c1, const guint8 *c2, gint n,
    guint8 *const d0[3], guint8 *const d1[3], const CscOutSpec *spec, StoreIl64 store_il,
    CscOutMode mode, gboolean bgr)
{
  Consts k;
  consts_init (&k);
  gint i = 0;
  for (; i + BLK <= n; i += BLK)
    pair_block (y0, y1, c1, c2, i, BLK, d0, d1, spec, &k, store_il, mode, bgr);
  if (i < n)
    pair_block (y0, y1, c1, c2, i, n - i, d0, d1, spec, &k, store_il, mode, bgr);
}

static AVX512 void
row_avx512 (const guint8 *y, const gint16 *t, gsize ts, gint n, guint8 *const dst[3],
    const CscOutSpec *spec)
{
  CSC_BY_MODE (spec, row_body, y, t, ts, n, dst, spec, store_il64);
}

static AVX512 void
pair_avx512 (const guint8 *y0, const guint8 *y1, const guint8 *c1, const guint8 *c2, gint n,
    guint8 *const d0[3], guint8 *const d1[3], const CscOutSpec *spec)
{
  CSC_BY_MODE (spec, pair_body, y0, y1, c1, c2, n, d0, d1, spec, store_il64);
}

static VBMIF void
row_vbmi (const guint8 *y, const gint16 *t, gsize ts, gint n, guint8 *const dst[3],
    const CscOutSpec *spec)
{
  CSC_BY_MODE (spec, row_body, y, t, ts, n, dst, spec, store_il64_vbmi);
}

static VBMIF void
pair_vbmi (const guint8 *y0, const guint8 *y1, const guint8 *c1, const guint8 *c2, gint n,
    guint8 *const d0[3], guint8 *const d1[3], const CscOutSpec *spec)
{
  CSC_BY_MODE (spec, pair_body, y0, y1, c1, c2, n, d0, d1, spec, store_il64_vbmi);
}

static AVX512I inline __m512i
gather16 (const guint8 *base, __m512i o, __m512i wmax)
{
  __m512i oc = _mm512_min_epi32 (o, wmax);
  __m512i g = _mm512_i32gather_epi32 (oc, (const void *) base, 1);
  return _mm512_srlv_epi32 (g, _mm512_slli_epi32 (_mm512_sub_epi32 (o, oc), 3));
}

static AVX512I inline void
store_b16 (guint8 *dst, __m512i g)
{
  _mm_storeu_si128 ((__m128i *) dst, _mm512_cvtepi32_epi8 (g));
}

static AVX512 void
gather_avx512 (const guint8 *y, gint wy, const guint8 *c1, const guint8 *c2, gint wc,
    const gint32 *xs, gint K, guint8 *restrict cy, guint8 *restrict cu, guint8 *restrict cv)
{
  gint k = 0;
  if (wy >= 4 && wc >= 4) {
    const __m512i ymax = _mm512_set1_epi32 (wy - 4), cmax = _mm512_set1_epi32 (wc - 4);
    for (; k + 16 <= K; k += 16) {
      __m512i x = _mm512_loadu_si512 ((const void *) (xs + k));
      if (y)
        store_b16 (cy + k, gather16 (y, x, ymax));
      if (c1 && !c2) {
        __m512i g = gather16 (c1, _mm512_and_si512 (x, _mm512_set1_epi32 (~1)), cmax);
        store_b16 (cu + k, g);
        store_b16 (cv + k, _mm512_srli_epi32 (g, 8));
      } else if (c1) {
        __m512i h = _mm512_srli_epi32 (x, 1);
        store_b16 (cu + k, gather16 (c1, h, cmax));
        store_b16 (cv + k, gather16 (c2, h, cmax));
      }
    }
  }
  m2i_csc_gather_c (y, wy, c1, c2, wc, xs + k, K - k, cy + k, cu + k, cv + k);
}

/* hpass_expanded for two taps, 16 outputs per step; same operations in the
 * same order as hpass_expanded_body (mul, then add to 0.0f, mul, add). */
static AVX512 void
hpass_expanded_avx512 (const float *wt, gint T, gint n, const guint8 *p, gint K, float *dst)
{
  if (T != 2) {
    m2i_csc_hpass_expanded_avx2 (wt, T, n, p, K, dst);
    return;
  }
  const __m512 zero = _mm512_setzero_ps ();
  for (int c = 0; c < 3; c++) {
    const guint8 *v = p + (gsize) c * K;
    float *d = dst + (gsize) c * n;
    gint i = 0;
    for (; i + 16 <= n; i += 16) {
      __m512 x0 = _mm512_cvtepi32_ps (_mm512_cvtepu8_epi32 (_mm_loadu_si128 ((const __m128i *) (v + i))));
      __m512 x1 = _mm512_cvtepi32_ps (_mm512_cvtepu8_epi32 (_mm_loadu_si128 ((const __m128i *) (v + n + i))));
      __m512 acc = _mm512_add_ps (zero, _mm512_mul_ps (_mm512_loadu_ps (wt + i), x0));
      acc = _mm512_add_ps (acc, _mm512_mul_ps (_mm512_loadu_ps (wt + n + i), x1));
      _mm512_storeu_ps (d + i, acc);
    }
    for (; i < n; i++)
      d[i] = (0.0f + wt[i] * (float) v[i]) + wt[n + i] * (float) v[n + i];
  }
}

static AVX512 void
finish_f16_norm_avx512 (const float *v, const float *sub, const float *mul, const float *add,
    gint n, m2i_f16 *out)
{
  gint i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512 x = _mm512_cvtph_ps (_mm512_cvtps_ph (_mm512_loadu_ps (v + i), _MM_FROUND_TO_NEAREST_INT));
    __m512 y = _mm512_add_ps (_mm512_mul_ps (_mm512_sub_ps (x, _mm512_loadu_ps (sub + i)),
            _mm512_loadu_ps (mul + i)), _mm512_loadu_ps (add + i));
    __m256i h = _mm512_cvtps_ph (y, _MM_FROUND_TO_NEAREST_INT);
    M2I_F16_REG (h);
    _mm256_storeu_si256 ((__m256i *) (out + i), h);
  }
  m2i_csc_finish_f16_norm_avx2 (v + i, sub + i, mul + i, add + i, n - i, out + i);
}

/* ---- float pair path --------------------------------------------------------
 *
 * 16 outputs per step, one register per tap: the exact fp32 csc of
 * csc-kernels.h (t = Y·1.164 + K by FMA; u = t + (M − 0.5) is M + the
 * floor; the clamp to [M, M + 255] runs on integer pipes), the
 * horizontal pass fma (w, u, −w·M) + fma (w', u', −w'·M) (exactly w·c +
 * w'·c'), and in fpair_out the vertical pass and finishing in registers.
 * Each block first fetches its source bytes as dwords (luma Y(x) |
 * Y(x + 1) << 8, chroma U(x) | V(x) << 8 | U(x + 1) << 16 | V(x + 1) << 24):
 * the level's own way inline, blocks of another kind (the tail, windows
 * that do not fit) through fp_fetch_other16. */

/* K of the three channels (R, G, B) for chroma lanes u, v */
static AVX512I inline void
fp_terms16 (__m512 u, __m512 v, __m512 k[3])
{
  k[0] = _mm512_fmadd_ps (v, _mm512_set1_ps (FP_CVR), _mm512_set1_ps (FP_KR));
  k[1] = _mm512_fmadd_ps (u, _mm512_set1_ps (FP_CUG),
      _mm512_fmadd_ps (v, _mm512_set1_ps (FP_CVG), _mm512_set1_ps (FP_KG)));
  k[2] = _mm512_fmadd_ps (u, _mm512_set1_ps (FP_CUB), _mm512_set1_ps (FP_KB));
}

/* M + clamp (floor (Y·1.164 + K), 0, 255) */
static AVX512I inline __m512
fp_csc16 (__m512 y, __m512 k)
{
  __m512 u = _mm512_add_ps (_mm512_fmadd_ps (y, _mm512_set1_ps (FP_CY), k),
      _mm512_set1_ps (FP_MH));
  __m512i b = _mm512_max_epi32 (_mm512_castps_si512 (u), _mm512_set1_epi32 (FP_MBITS));
  return _mm512_castsi512_ps (_mm512_min_epi32 (b, _mm512_set1_epi32 (FP_MBITS + 255)));
}

static AVX512I inline __m512
fp_byte16 (__m512i g, int shift)
{
  return _mm512_cvtepi32_ps (_mm512_and_si512 (_mm512_srli_epi32 (g, shift),
          _mm512_set1_epi32 (0xff)));
}

/* Chroma terms of both taps, k[tap][channel], from chroma dwords */
typedef struct {
  __m512 k[2][3];
} FTerms16;

static AVX512I inline void
fp_chroma_terms16 (__m512i p, FTerms16 *k)
{
  fp_terms16 (fp_byte16 (p, 0), fp_byte16 (p, 8), k->k[0]);
  fp_terms16 (fp_byte16 (p, 16), _mm512_cvtepi32_ps (_mm512_srli_epi32 (p, 24)), k->k[1]);
}

typedef struct {
  __m512 w0, w1, m0, m1;
} FWeights16;

static AVX512I inline void
fp_weights16 (const FPairTable *t, gint i, FWeights16 *w)
{
  w->w0 = _mm512_load_ps (t->w0 + i);
  w->w1 = _mm512_load_ps (t->w1 + i);
  w->m0 = _mm512_load_ps (t->w0m + i);
  w->m1 = _mm512_load_ps (t->w1m + i);
}

/* The horizontal sums of one row from its luma dwords, channels R, G, B */
static AVX512I inline void
fp_hrow16 (__m512i p, const FTerms16 *k, const FWeights16 *w, __m512 h[3])
{
  __m512 y0 = fp_byte16 (p, 0), y1 = _mm512_cvtepi32_ps (_mm512_srli_epi32 (p, 8));
  for (int c = 0; c < 3; c++)
    h[c] = _mm512_add_ps (_mm512_fmadd_ps (w->w0, fp_csc16 (y0, k->k[0][c]), w->m0),
        _mm512_fmadd_ps (w->w1, fp_csc16 (y1, k->k[1][c]), w->m1));
}

/* Source dwords of blocks fetched by 16-byte windows (two blocks of 8, four
 * windows each: the unrolled fetch, without the window-count loop of
 * m2i_fpair_shuf8) or by the scalar fill */
static AVX512I inline __m512i
fp_raw16 (const FPairTable *t, gint i, int kind, const guint8 *r1, const guint8 *r2,
    const FPairShuf *sh, gboolean chroma)
{
  if (kind == FP_LOAD_SHUF)
    return _mm512_inserti64x4 (_mm512_castsi256_si512 (m2i_fpair_shuf8_w4 (r1, r2, sh + i / 8)),
        m2i_fpair_shuf8_w4 (r1, r2, sh + i / 8 + 1), 1);
  guint32 l[16];
  if (chroma)
    fpair_fill_chroma (t, i, r1, r2, l);
  else
    fpair_fill_luma (t, i, r1, l);
  return _mm512_loadu_si512 ((const void *) l);
}

/* The rows of one kernel call: luma a, b (b may be NULL in fpair_rows),
 * chroma of a (1, 2) and of b (NULL when a's serve) */
typedef struct {
  const guint8 *ya, *yb, *ca1, *ca2, *cb1, *cb2;
} FRows;

/* raw[0], raw[1]: luma of a and b; raw[2], raw[3]: chroma of a and b */
static AVX512 __attribute__((noinline)) void
fp_fetch_other16 (const FPairTable *t, gint i, const FRows *r, __m512i raw[4])
{
  int kind = t->load[i / 16];
  raw[0] = fp_raw16 (t, i, kind, r->ya, NULL, t->ysh, FALSE);
  raw[1] = r->yb ? fp_raw16 (t, i, kind, r->yb, NULL, t->ysh, FALSE) : raw[0];
  raw[2] = fp_raw16 (t, i, kind, r->ca1, r->ca2, t->csh, TRUE);
  raw[3] = r->cb1 ? fp_raw16 (t, i, kind, r->cb1, r->cb2, t->csh, TRUE) : raw[2];
}

static AVX512I inline void
fp_fetch_shuf16 (const FPairTable *t, gint i, const FRows *r, __m512i raw[4])
{
  raw[0] = fp_raw16 (t, i, FP_LOAD_SHUF, r->ya, NULL, t->ysh, FALSE);
  raw[1] = r->yb ? fp_raw16 (t, i, FP_LOAD_SHUF, r->yb, NULL, t->ysh, FALSE) : raw[0];
  raw[2] = fp_raw16 (t, i, FP_LOAD_SHUF, r->ca1, r->ca2, t->csh, TRUE);
  raw[3] = r->cb1 ? fp_raw16 (t, i, FP_LOAD_SHUF, r->cb1, r->cb2, t->csh, TRUE) : raw[2];
}

static AVX512I inline __mmask16
fp_mask16 (gint i, gint n)
{
  return i + 16 <= n ? 0xffff : (__mmask16) ((1u << (n - i)) - 1);
}

/* fpair_rows' arithmetic and stores for one block (@m: lanes to store) */
static AVX512I inline void
fp_rows_block16 (const FPairTable *t, gint i, const __m512i raw[4], gboolean two,
    float *const d[2][3], __mmask16 m)
{
  FTerms16 k;
  FWeights16 w;
  __m512 h[3];
  fp_chroma_terms16 (raw[2], &k);
  fp_weights16 (t, i, &w);
  for (int r = 0; r < (two ? 2 : 1); r++) {
    fp_hrow16 (raw[r], &k, &w, h);
    for (int c = 0; c < 3; c++) {
      if (m == 0xffff)
        _mm512_storeu_ps (d[r][c] + i, h[c]);
      else
        _mm512_mask_storeu_ps (d[r][c] + i, m, h[c]);
    }
  }
}

/* Per output channel (R, G, B): plane and norm coefficients */
typedef struct {
  m2i_f16 *o[3];
  float sub[3], mul[3], add[3];
} FOut;

static AVX512I inline void
fp_out_setup (const FPairTable *t, m2i_f16 *const out[3], const float *sub, const float *mul,
    const float *add, FOut *o)
{
  for (int c = 0; c < 3; c++) {
    int p = t->plane_of[c];
    o->o[c] = out[p];
    o->sub[c] = sub ? sub[p] : 0.0f;
    o->mul[c] = sub ? mul[p] : 1.0f;
    o->add[c] = sub ? add[p] : 0.0f;
  }
}

/* fpair_out's arithmetic and stores for one block: both rows' horizontal
 * sums, the vertical pass, fp16 rounding, @norm, store (@m lanes); row b
 * channel by channel, each finished at once (fewer live registers) */
static AVX512I inline void
fp_out_block16 (const FPairTable *t, gint i, const __m512i raw[4], gboolean share, __m512 vw0,
    __m512 vw1, const FOut *o, gboolean norm, __mmask16 m)
{
  FTerms16 k;
  FWeights16 w;
  __m512 ha[3];
  fp_weights16 (t, i, &w);
  fp_chroma_terms16 (raw[2], &k);
  fp_hrow16 (raw[0], &k, &w, ha);
  if (!share)
    fp_chroma_terms16 (raw[3], &k);
  __m512 y0 = fp_byte16 (raw[1], 0), y1 = _mm512_cvtepi32_ps (_mm512_srli_epi32 (raw[1], 8));
  for (int c = 0; c < 3; c++) {
    __m512 hb = _mm512_add_ps (_mm512_fmadd_ps (w.w0, fp_csc16 (y0, k.k[0][c]), w.m0),
        _mm512_fmadd_ps (w.w1, fp_csc16 (y1, k.k[1][c]), w.m1));
    __m256i hv = _mm512_cvtps_ph (_mm512_add_ps (_mm512_mul_ps (vw0, ha[c]),
            _mm512_mul_ps (vw1, hb)), _MM_FROUND_TO_NEAREST_INT);
    if (norm) {
      __m512 x = _mm512_add_ps (_mm512_mul_ps (_mm512_sub_ps (_mm512_cvtph_ps (hv),
                  _mm512_set1_ps (o->sub[c])), _mm512_set1_ps (o->mul[c])),
          _mm512_set1_ps (o->add[c]));
      hv = _mm512_cvtps_ph (x, _MM_FROUND_TO_NEAREST_INT);
    }
    M2I_F16_REG (hv);
    if (m == 0xffff)
      _mm256_storeu_si256 ((__m256i *) (o->o[c] + i), hv);
    else
      _mm256_mask_storeu_epi16 (o->o[c] + i, m, hv);
  }
}

/* The kernels' loops over blocks of 16 outputs: full blocks of the level's
 * own kind @MAIN through FETCH (t, i, &rows, raw) inline, the rest through
 * fp_fetch_other16; BLOCK (with i, raw, m) does the arithmetic. The fetch
 * of the next block is issued before the arithmetic of the current one,
 * which would otherwise wait for its load → permute → convert chain. */
#define FP_FETCH(MAIN, FETCH, i, raw) \
  do { \
    if (t->load[(i) / 16] == MAIN) \
      FETCH (t, i, &rows, raw); \
    else \
      fp_fetch_other16 (t, i, &rows, raw); \
  } while (0)

#define FP_BLOCKS(MAIN, FETCH, BLOCK) \
  do { \
    gint nfull = t->n & ~15; \
    __m512i next[4]; \
    if (nfull) \
      FP_FETCH (MAIN, FETCH, 0, next); \
    for (gint i = 0; i < nfull; i += 16) { \
      const __mmask16 m = 0xffff; \
      __m512i raw[4] = { next[0], next[1], next[2], next[3] }; \
      if (i + 16 < nfull) \
        FP_FETCH (MAIN, FETCH, i + 16, next); \
      BLOCK; \
    } \
    if (nfull < t->n) { \
      gint i = nfull; \
      __m512i raw[4]; \
      __mmask16 m = fp_mask16 (i, t->n); \
      fp_fetch_other16 (t, i, &rows, raw); \
      BLOCK; \
    } \
  } while (0)
#define FP_ROWS_LOOP(MAIN, FETCH) \
  do { \
    float *d[2][3]; \
    FRows rows = { y0, y1, c1, c2, NULL, NULL }; \
    fp_planes (t, h0, h1, d); \
    FP_BLOCKS (MAIN, FETCH, fp_rows_block16 (t, i, raw, y1 != NULL, d, m)); \
  } while (0)

#define FP_OUT_LOOP_NORM(MAIN, FETCH, NORM) \
  FP_BLOCKS (MAIN, FETCH, fp_out_block16 (t, i, raw, share, vw0, vw1, &o, NORM, m))

#define FP_OUT_LOOP(MAIN, FETCH) \
  do { \
    const __m512 vw0 = _mm512_set1_ps (wy0), vw1 = _mm512_set1_ps (wy1); \
    gboolean share = ca1 == cb1; \
    FRows rows = { ya, yb, ca1, ca2, share ? NULL : cb1, share ? NULL : cb2 }; \
    FOut o; \
    fp_out_setup (t, out, sub, mul, add, &o); \
    if (sub) \
      FP_OUT_LOOP_NORM (MAIN, FETCH, TRUE); \
    else \
      FP_OUT_LOOP_NORM (MAIN, FETCH, FALSE); \
  } while (0)

static AVX512 void
fpair_rows_avx512 (const FPairTable *t, const guint8 *y0, const guint8 *y1, const guint8 *c1,
    const guint8 *c2, float *h0, float *h1)
{
  FP_ROWS_LOOP (FP_LOAD_SHUF, fp_fetch_shuf16);
}

static AVX512 void
fpair_out_avx512 (const FPairTable *t, const guint8 *ya, const guint8 *ca1, const guint8 *ca2,
    const guint8 *yb, const guint8 *cb1, const guint8 *cb2, float wy0, float wy1,
    const float *sub, const float *mul, const float *add, m2i_f16 *const out[3])
{
  FP_OUT_LOOP (FP_LOAD_SHUF, fp_fetch_shuf16);
}

static AVX512 void
vfinish_f16_avx512 (const float *h0, const float *h1, float wy0, float wy1, gint n,
    const float *sub, const float *mul, const float *add, m2i_f16 *const out[3])
{
  const __m512 w0 = _mm512_set1_ps (wy0), w1 = _mm512_set1_ps (wy1);
  for (int c = 0; c < 3; c++) {
    const float *p = h0 + (gsize) c * n, *q = h1 + (gsize) c * n;
    for (gint i = 0; i < n; i += 16) {
      __mmask16 m = i + 16 <= n ? 0xffff : (__mmask16) ((1u << (n - i)) - 1);
      __m512 v = _mm512_add_ps (_mm512_mul_ps (w0, _mm512_maskz_loadu_ps (m, p + i)),
          _mm512_mul_ps (w1, _mm512_maskz_loadu_ps (m, q + i)));
      __m256i hv = _mm512_cvtps_ph (v, _MM_FROUND_TO_NEAREST_INT);
      if (sub) {
        __m512 x = _mm512_add_ps (_mm512_mul_ps (_mm512_sub_ps (_mm512_cvtph_ps (hv),
                    _mm512_set1_ps (sub[c])), _mm512_set1_ps (mul[c])), _mm512_set1_ps (add[c]));
        hv = _mm512_cvtps_ph (x, _MM_FROUND_TO_NEAREST_INT);
      }
      M2I_F16_REG (hv);
      if (m == 0xffff)
        _mm256_storeu_si256 ((__m256i *) (out[c] + i), hv);
      else
        _mm256_mask_storeu_epi16 (out[c] + i, m, hv);
    }
  }
}

static AVX512 void
norm_f16_avx512 (const m2i_f16 *in, m2i_f16 *out, gint n, float sub, float mul, float add)
{
  const __m512 s = _mm512_set1_ps (sub), ml = _mm512_set1_ps (mul), a = _mm512_set1_ps (add);
  for (gint i = 0; i < n; i += 16) {
    __mmask16 m = i + 16 <= n ? 0xffff : (__mmask16) ((1u << (n - i)) - 1);
    __m512 x = _mm512_cvtph_ps (_mm256_maskz_loadu_epi16 (m, in + i));
    x = _mm512_add_ps (_mm512_mul_ps (_mm512_sub_ps (x, s), ml), a);
    __m256i h = _mm512_cvtps_ph (x, _MM_FROUND_TO_NEAREST_INT);
    M2I_F16_REG (h);
    _mm256_mask_storeu_epi16 (out + i, m, h);
  }
}

/* ---- AVX-512 VBMI: the float pair path's loads as byte permutes ----------- */

/* Outputs 8b .. 8b+15 (blocks b, b + 1) as 16 dword lanes: each block's
 * byte permute over its 128-byte window (64 bytes at @lo + base, 64 at
 * @hi + base) fills its 8 lanes, @keep the bytes of each (luma: Y(x),
 * Y(x + 1); chroma: U, V of x, then of x + 1). */
static VBMIFI inline __m512i
fp_perm_pair (const guint8 *lo, const guint8 *hi, const gint32 *base, const guint8 *idx, gint b,
    __mmask64 keep)
{
  __m512i a = _mm512_maskz_permutex2var_epi8 (keep & 0xffffffffull,
      _mm512_loadu_si512 ((const void *) (lo + base[b])),
      _mm512_loadu_si512 ((const void *) (idx + 64 * b)),
      _mm512_loadu_si512 ((const void *) (hi + base[b])));
  __m512i c = _mm512_maskz_permutex2var_epi8 (keep & ~0xffffffffull,
      _mm512_loadu_si512 ((const void *) (lo + base[b + 1])),
      _mm512_loadu_si512 ((const void *) (idx + 64 * (b + 1))),
      _mm512_loadu_si512 ((const void *) (hi + base[b + 1])));
  return _mm512_or_si512 (a, c);
}

/* chroma: one permute per block of 8 for U and V of both columns (NV12:
 * 128 bytes of the UV row; I420: 64 bytes of the U row, then the same 64
 * of V) */
static VBMIFI inline void
fp_fetch_perm16 (const FPairTable *t, gint i, const FRows *r, __m512i raw[4])
{
  const __mmask64 luma = 0x3333333333333333ull;
  gint b = i / 8;
  raw[0] = fp_perm_pair (r->ya, r->ya + 64, t->ybase, t->yidx, b, luma);
  raw[1] = r->yb ? fp_perm_pair (r->yb, r->yb + 64, t->ybase, t->yidx, b, luma) : raw[0];
  raw[2] = fp_perm_pair (r->ca1, t->nv12 ? r->ca1 + 64 : r->ca2, t->cbase, t->cidx, b, ~0ull);
  raw[3] = r->cb1 ? fp_perm_pair (r->cb1, t->nv12 ? r->cb1 + 64 : r->cb2, t->cbase, t->cidx, b,
      ~0ull) : raw[2];
}

static VBMIF void
fpair_rows_vbmi (const FPairTable *t, const guint8 *y0, const guint8 *y1, const guint8 *c1,
    const guint8 *c2, float *h0, float *h1)
{
  FP_ROWS_LOOP (FP_LOAD_PERMUTE, fp_fetch_perm16);
}

static VBMIF void
fpair_out_vbmi (const FPairTable *t, const guint8 *ya, const guint8 *ca1, const guint8 *ca2,
    const guint8 *yb, const guint8 *cb1, const guint8 *cb2, float wy0, float wy1,
    const float *sub, const float *mul, const float *add, m2i_f16 *const out[3])
{
  FP_OUT_LOOP (FP_LOAD_PERMUTE, fp_fetch_perm16);
}

const CscKernels m2i_csc_kernels_avx512_table = {
  .name = "avx512", .block = BLK, .prep_444 = prep_444_avx512, .row = row_avx512,
  .pair = pair_avx512, .u8_to_f16 = m2i_csc_u8_to_f16_avx2, .gather = gather_avx512,
  .gather_pairs = m2i_csc_gather_pairs_c, .hpass_expanded = hpass_expanded_avx512,
  .finish_f16_norm = finish_f16_norm_avx512, .fpair_rows = fpair_rows_avx512,
  .fpair_fetch = FP_FETCH_SHUF, .vfinish_f16 = vfinish_f16_avx512, .fpair_out = fpair_out_avx512,
  .norm_f16 = norm_f16_avx512,
};

const CscKernels m2i_csc_kernels_vbmi_table = {
  .name = "avx512-vbmi", .block = BLK, .prep_444 = prep_444_avx512, .row = row_vbmi,
  .pair = pair_vbmi, .u8_to_f16 = m2i_csc_u8_to_f16_avx2, .gather = gather_avx512,
  .gather_pairs = m2i_csc_gather_pairs_c, .hpass_expanded = hpass_expanded_avx512,
  .finish_f16_norm = finish_f16_norm_avx512, .fpair_rows = fpair_rows_vbmi,
  .fpair_fetch = FP_FETCH_PERMUTE, .vfinish_f16 = vfinish_f16_avx512, .fpair_out = fpair_out_vbmi,
  .norm_f16 = norm_f16_avx512,
};
#endif
