/* csc.c — NV12/I420 -> RGB/BGR colour conversion kernels (plain C, AVX2).
 *
 * Both versions compute exactly floor((1164(Y-16) + k·chroma + 500)/1000),
 * clamped, as docs/m2i-engine.md derives: chroma terms are precomputed per
 * chroma sample as a quotient and remainder of 1000, so the per-pixel work
 * fits 16-bit lanes. The AVX2 version keeps its terms arrays in "block order"
 * (per 32 pixels: 0-7,16-23,8-15,24-31) so that byte unpacking of Y and the
 * final packus need no lane-crossing shuffles.
 */
#include "engine-private.h"

#include <base/m2i-cpu.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define HAVE_X86 1
#endif

gsize
m2i_csc_terms_stride (const CscKernels *k, gint n)
{
  gint b = k->block;
  return (gsize) ((n + b - 1) / b * b);
}

/* ---- plain C ------------------------------------------------------------ */

static void
prep_nv12_c (const guint8 *uv, gint n_chroma, gint16 *t, gsize ts)
{
  for (gint c = 0; c < n_chroma; c++) {
    gint16 k[CSC_N_TERMS];
    m2i_csc_chroma_terms (uv[2 * c] - 128, uv[2 * c + 1] - 128, k);
    for (int j = 0; j < CSC_N_TERMS; j++)
      t[j * ts + 2 * c] = t[j * ts + 2 * c + 1] = k[j];
  }
}

static void
prep_i420_c (const guint8 *u, const guint8 *v, gint n_chroma, gint16 *t, gsize ts)
{
  for (gint c = 0; c < n_chroma; c++) {
    gint16 k[CSC_N_TERMS];
    m2i_csc_chroma_terms (u[c] - 128, v[c] - 128, k);
    for (int j = 0; j < CSC_N_TERMS; j++)
      t[j * ts + 2 * c] = t[j * ts + 2 * c + 1] = k[j];
  }
}

static void
prep_444_c (const guint8 *u, const guint8 *v, gint n, gint16 *t, gsize ts)
{
  for (gint i = 0; i < n; i++) {
    gint16 k[CSC_N_TERMS];
    m2i_csc_chroma_terms (u[i] - 128, v[i] - 128, k);
    for (int j = 0; j < CSC_N_TERMS; j++)
      t[j * ts + i] = k[j];
  }
}

static m2i_f16 u8_f16_table[256];

static void
init_tables (void)
{
  for (int i = 0; i < 256; i++)
    u8_f16_table[i] = m2i_f32_to_f16 ((float) i);
}

static void
u8_to_f16_c (const guint8 *src, m2i_f16 *dst, gint n)
{
  for (gint i = 0; i < n; i++)
    dst[i] = u8_f16_table[src[i]];
}

static inline void
store_fp (const CscOutSpec *spec, guint8 *const dst[3], int c, gint i, guint8 x)
{
  float f = (float) x;
  if (spec->norm)
    f = (f - spec->sub[c]) * spec->mul[c] + spec->add[c];
  if (spec->mode == CSC_OUT_PL_F16)
    ((m2i_f16 *) dst[c])[i] = spec->norm ? m2i_f32_to_f16 (f) : u8_f16_table[x];
  else
    ((float *) dst[c])[i] = f;
}

static void
row_c (const guint8 *y, const gint16 *t, gsize ts, gint n, guint8 *const dst[3],
    const CscOutSpec *spec)
{
  const gint16 *qr = t + CSC_QR * ts, *rr = t + CSC_RR * ts;
  const gint16 *qg = t + CSC_QG * ts, *rg = t + CSC_RG * ts;
  const gint16 *qb = t + CSC_QB * ts, *rb = t + CSC_RB * ts;
  switch (spec->mode) {
    case CSC_OUT_IL_U8: {
      guint8 *o = dst[0];
      int ir = spec->bgr ? 2 : 0, ib = 2 - ir;
      for (gint i = 0; i < n; i++) {
        o[3 * i + ir] = m2i_csc_pixel (y[i], qr[i], rr[i]);
        o[3 * i + 1] = m2i_csc_pixel (y[i], qg[i], rg[i]);
        o[3 * i + ib] = m2i_csc_pixel (y[i], qb[i], rb[i]);
      }
      break;
    }
    case CSC_OUT_PL_U8:
      for (gint i = 0; i < n; i++) {
        dst[0][i] = m2i_csc_pixel (y[i], qr[i], rr[i]);
        dst[1][i] = m2i_csc_pixel (y[i], qg[i], rg[i]);
        dst[2][i] = m2i_csc_pixel (y[i], qb[i], rb[i]);
      }
      break;
    default:
      for (gint i = 0; i < n; i++) {
        store_fp (spec, dst, 0, i, m2i_csc_pixel (y[i], qr[i], rr[i]));
        store_fp (spec, dst, 1, i, m2i_csc_pixel (y[i], qg[i], rg[i]));
        store_fp (spec, dst, 2, i, m2i_csc_pixel (y[i], qb[i], rb[i]));
      }
      break;
  }
}

static const CscKernels kernels_c = {
  "c", 1, prep_nv12_c, prep_i420_c, prep_444_c, row_c, u8_to_f16_c,
};

/* ---- AVX2 --------------------------------------------------------------- */

#ifdef HAVE_X86
#define AVX2 __attribute__((target("avx2,f16c,fma")))
#define BLK 32

static guint8 il_masks[3][3][16];   /* [output vector][channel][byte] */

static void
init_il_masks (void)
{
  for (int k = 0; k < 3; k++)
    for (int c = 0; c < 3; c++)
      for (int j = 0; j < 16; j++) {
        int J = 16 * k + j;
        il_masks[k][c][j] = (J % 3 == c) ? (guint8) (J / 3) : 0x80;
      }
}

static AVX2 inline __m256i
div1000 (__m256i z)
{
  return _mm256_srli_epi16 (_mm256_mulhi_epu16 (z, _mm256_set1_epi16 (-31981 /* 33555 */)), 9);
}

/* Terms of 16 chroma samples (u', v' in 16-bit lanes). */
static AVX2 inline void
terms16 (__m256i u, __m256i v, __m256i out[CSC_N_TERMS])
{
  const __m256i one = _mm256_set1_epi16 (1), k1000 = _mm256_set1_epi16 (1000);
  __m256i vodd = _mm256_and_si256 (v, one), uodd = _mm256_and_si256 (u, one);
  __m256i vh = _mm256_srai_epi16 (v, 1), uh = _mm256_srai_epi16 (u, 1);
  /* R */
  __m256i s = _mm256_add_epi16 (_mm256_add_epi16 (_mm256_mullo_epi16 (vodd, _mm256_set1_epi16 (500)),
          _mm256_mullo_epi16 (v, _mm256_set1_epi16 (96))), _mm256_set1_epi16 (13000));
  __m256i q = div1000 (s);
  out[CSC_QR] = _mm256_add_epi16 (_mm256_add_epi16 (v, vh), _mm256_sub_epi16 (q, _mm256_set1_epi16 (16)));
  out[CSC_RR] = _mm256_add_epi16 (_mm256_sub_epi16 (s, _mm256_mullo_epi16 (q, k1000)), _mm256_set1_epi16 (3500));
  /* G */
  __m256i sv = _mm256_add_epi16 (_mm256_mullo_epi16 (v, _mm256_set1_epi16 (187)), _mm256_set1_epi16 (24000));
  __m256i qv = div1000 (sv);
  __m256i su = _mm256_add_epi16 (_mm256_sub_epi16 (_mm256_mullo_epi16 (u, _mm256_set1_epi16 (109)),
          _mm256_mullo_epi16 (uodd, _mm256_set1_epi16 (500))), _mm256_set1_epi16 (15000));
  __m256i qu = div1000 (su);
  out[CSC_QG] = _mm256_sub_epi16 (_mm256_add_epi16 (qv, qu),
      _mm256_add_epi16 (_mm256_add_epi16 (v, uh), _mm256_set1_epi16 (42)));
  out[CSC_RG] = _mm256_add_epi16 (_mm256_add_epi16 (_mm256_sub_epi16 (sv, _mm256_mullo_epi16 (qv, k1000)),
          _mm256_sub_epi16 (su, _mm256_mullo_epi16 (qu, k1000))), _mm256_set1_epi16 (3500));
  /* B */
  __m256i sb = _mm256_add_epi16 (_mm256_mullo_epi16 (u, _mm256_set1_epi16 (18)), _mm256_set1_epi16 (3000));
  __m256i qb = div1000 (sb);
  out[CSC_QB] = _mm256_add_epi16 (_mm256_add_epi16 (u, u), _mm256_sub_epi16 (qb, _mm256_set1_epi16 (6)));
  out[CSC_RB] = _mm256_add_epi16 (_mm256_sub_epi16 (sb, _mm256_mullo_epi16 (qb, k1000)), _mm256_set1_epi16 (3500));
}

/* 16 chroma samples in natural order -> 32 pixels' terms in block order. */
static AVX2 inline void
store_dup (const __m256i t[CSC_N_TERMS], gint16 *dst, gsize ts)
{
  for (int j = 0; j < CSC_N_TERMS; j++) {
    _mm256_storeu_si256 ((__m256i *) (dst + j * ts), _mm256_unpacklo_epi16 (t[j], t[j]));
    _mm256_storeu_si256 ((__m256i *) (dst + j * ts + 16), _mm256_unpackhi_epi16 (t[j], t[j]));
  }
}

static AVX2 void
prep_nv12_avx2 (const guint8 *uv, gint n_chroma, gint16 *t, gsize ts)
{
  const __m256i lo = _mm256_set1_epi16 (0xff), k128 = _mm256_set1_epi16 (128);
  gint c = 0;
  for (; c < n_chroma; c += 16) {
    __m256i x;
    if (c + 16 <= n_chroma) {
      x = _mm256_loadu_si256 ((const __m256i *) (uv + 2 * c));
    } else {
      guint8 tmp[32] = { 0 };
      memcpy (tmp, uv + 2 * c, (gsize) (n_chroma - c) * 2);
      x = _mm256_loadu_si256 ((const __m256i *) tmp);
    }
    __m256i u = _mm256_sub_epi16 (_mm256_and_si256 (x, lo), k128);
    __m256i v = _mm256_sub_epi16 (_mm256_srli_epi16 (x, 8), k128);
    __m256i k[CSC_N_TERMS];
    terms16 (u, v, k);
    store_dup (k, t + 2 * c, ts);
  }
}

static AVX2 void
prep_i420_avx2 (const guint8 *pu, const guint8 *pv, gint n_chroma, gint16 *t, gsize ts)
{
  const __m256i k128 = _mm256_set1_epi16 (128);
  for (gint c = 0; c < n_chroma; c += 16) {
    __m128i a, b;
    if (c + 16 <= n_chroma) {
      a = _mm_loadu_si128 ((const __m128i *) (pu + c));
      b = _mm_loadu_si128 ((const __m128i *) (pv + c));
    } else {
      guint8 tu[16] = { 0 }, tv[16] = { 0 };
      memcpy (tu, pu + c, (gsize) (n_chroma - c));
      memcpy (tv, pv + c, (gsize) (n_chroma - c));
      a = _mm_loadu_si128 ((const __m128i *) tu);
      b = _mm_loadu_si128 ((const __m128i *) tv);
    }
    __m256i k[CSC_N_TERMS];
    terms16 (_mm256_sub_epi16 (_mm256_cvtepu8_epi16 (a), k128),
        _mm256_sub_epi16 (_mm256_cvtepu8_epi16 (b), k128), k);
    store_dup (k, t + 2 * c, ts);
  }
}

static AVX2 void
prep_444_avx2 (const guint8 *pu, const guint8 *pv, gint n, gint16 *t, gsize ts)
{
  const __m256i k128 = _mm256_set1_epi16 (128), zero = _mm256_setzero_si256 ();
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
    __m256i k[CSC_N_TERMS];
    terms16 (_mm256_sub_epi16 (_mm256_unpacklo_epi8 (a, zero), k128),
        _mm256_sub_epi16 (_mm256_unpacklo_epi8 (b, zero), k128), k);
    for (int j = 0; j < CSC_N_TERMS; j++)
      _mm256_storeu_si256 ((__m256i *) (t + j * ts + i), k[j]);
    terms16 (_mm256_sub_epi16 (_mm256_unpackhi_epi8 (a, zero), k128),
        _mm256_sub_epi16 (_mm256_unpackhi_epi8 (b, zero), k128), k);
    for (int j = 0; j < CSC_N_TERMS; j++)
      _mm256_storeu_si256 ((__m256i *) (t + j * ts + i + 16), k[j]);
  }
}

static AVX2 inline __m256i
channel16 (__m256i yy, __m256i t164, const gint16 *q, const gint16 *r)
{
  __m256i z = _mm256_add_epi16 (t164, _mm256_loadu_si256 ((const __m256i *) r));
  __m256i o = _mm256_add_epi16 (yy, _mm256_loadu_si256 ((const __m256i *) q));
  return _mm256_add_epi16 (o, div1000 (z));
}

/* 32 pixels' R, G, B bytes in natural order. */
static AVX2 inline void
block32 (const guint8 *y, const gint16 *t, gsize ts, __m256i *r8, __m256i *g8, __m256i *b8)
{
  const __m256i zero = _mm256_setzero_si256 (), k16 = _mm256_set1_epi16 (16),
      k164 = _mm256_set1_epi16 (164);
  __m256i yv = _mm256_loadu_si256 ((const __m256i *) y);
  __m256i ya = _mm256_sub_epi16 (_mm256_unpacklo_epi8 (yv, zero), k16);
  __m256i yb = _mm256_sub_epi16 (_mm256_unpackhi_epi8 (yv, zero), k16);
  __m256i ta = _mm256_mullo_epi16 (ya, k164), tb = _mm256_mullo_epi16 (yb, k164);
  *r8 = _mm256_packus_epi16 (channel16 (ya, ta, t + CSC_QR * ts, t + CSC_RR * ts),
      channel16 (yb, tb, t + CSC_QR * ts + 16, t + CSC_RR * ts + 16));
  *g8 = _mm256_packus_epi16 (channel16 (ya, ta, t + CSC_QG * ts, t + CSC_RG * ts),
      channel16 (yb, tb, t + CSC_QG * ts + 16, t + CSC_RG * ts + 16));
  *b8 = _mm256_packus_epi16 (channel16 (ya, ta, t + CSC_QB * ts, t + CSC_RB * ts),
      channel16 (yb, tb, t + CSC_QB * ts + 16, t + CSC_RB * ts + 16));
}

static AVX2 inline void
store_il (guint8 *o, __m256i c0, __m256i c1, __m256i c2)
{
  __m256i v[3];
  for (int k = 0; k < 3; k++) {
    __m256i m0 = _mm256_broadcastsi128_si256 (_mm_loadu_si128 ((const __m128i *) il_masks[k][0]));
    __m256i m1 = _mm256_broadcastsi128_si256 (_mm_loadu_si128 ((const __m128i *) il_masks[k][1]));
    __m256i m2 = _mm256_broadcastsi128_si256 (_mm_loadu_si128 ((const __m128i *) il_masks[k][2]));
    v[k] = _mm256_or_si256 (_mm256_or_si256 (_mm256_shuffle_epi8 (c0, m0),
            _mm256_shuffle_epi8 (c1, m1)), _mm256_shuffle_epi8 (c2, m2));
  }
  _mm256_storeu_si256 ((__m256i *) o, _mm256_permute2x128_si256 (v[0], v[1], 0x20));
  _mm256_storeu_si256 ((__m256i *) (o + 32), _mm256_permute2x128_si256 (v[2], v[0], 0x30));
  _mm256_storeu_si256 ((__m256i *) (o + 64), _mm256_permute2x128_si256 (v[1], v[2], 0x31));
}

static AVX2 inline void
store_fp8 (const CscOutSpec *spec, int c, guint8 *dst, gint i, __m128i bytes8)
{
  __m256 f = _mm256_cvtepi32_ps (_mm256_cvtepu8_epi32 (bytes8));
  if (spec->norm)
    f = _mm256_add_ps (_mm256_mul_ps (_mm256_sub_ps (f, _mm256_set1_ps (spec->sub[c])),
            _mm256_set1_ps (spec->mul[c])), _mm256_set1_ps (spec->add[c]));
  if (spec->mode == CSC_OUT_PL_F16)
    _mm_storeu_si128 ((__m128i *) (dst + 2 * i), _mm256_cvtps_ph (f, _MM_FROUND_TO_NEAREST_INT));
  else
    _mm256_storeu_ps ((float *) dst + i, f);
}

static AVX2 inline void
store_fp32px (const CscOutSpec *spec, int c, guint8 *dst, __m256i x)
{
  __m128i lo = _mm256_castsi256_si128 (x), hi = _mm256_extracti128_si256 (x, 1);
  store_fp8 (spec, c, dst, 0, lo);
  store_fp8 (spec, c, dst, 8, _mm_srli_si128 (lo, 8));
  store_fp8 (spec, c, dst, 16, hi);
  store_fp8 (spec, c, dst, 24, _mm_srli_si128 (hi, 8));
}

static AVX2 void
row_avx2 (const guint8 *y, const gint16 *t, gsize ts, gint n, guint8 *const dst[3],
    const CscOutSpec *spec)
{
  guint bps = spec->mode == CSC_OUT_PL_F16 ? 2 : spec->mode == CSC_OUT_PL_F32 ? 4 : 1;
  for (gint i = 0; i < n; i += BLK) {
    gint m = MIN (BLK, n - i);
    const guint8 *yp = y + i;
    guint8 ytmp[BLK];
    guint8 otmp[BLK * 3 * 4];
    guint8 *o[3];
    if (m < BLK) {
      memset (ytmp, 16, sizeof ytmp);
      memcpy (ytmp, yp, (gsize) m);
      yp = ytmp;
      for (int c = 0; c < 3; c++)
        o[c] = otmp + c * BLK * 4;
    } else if (spec->mode == CSC_OUT_IL_U8) {
      o[0] = dst[0] + 3 * i;
    } else {
      for (int c = 0; c < 3; c++)
        o[c] = dst[c] + bps * i;
    }
    __m256i r8, g8, b8;
    block32 (yp, t + i, ts, &r8, &g8, &b8);
    switch (spec->mode) {
      case CSC_OUT_IL_U8:
        if (spec->bgr)
          store_il (o[0], b8, g8, r8);
        else
          store_il (o[0], r8, g8, b8);
        break;
      case CSC_OUT_PL_U8:
        _mm256_storeu_si256 ((__m256i *) o[0], r8);
        _mm256_storeu_si256 ((__m256i *) o[1], g8);
        _mm256_storeu_si256 ((__m256i *) o[2], b8);
        break;
      default:
        store_fp32px (spec, 0, o[0], r8);
        store_fp32px (spec, 1, o[1], g8);
        store_fp32px (spec, 2, o[2], b8);
        break;
    }
    if (m < BLK) {
      if (spec->mode == CSC_OUT_IL_U8)
        memcpy (dst[0] + 3 * i, o[0], (gsize) m * 3);
      else
        for (int c = 0; c < 3; c++)
          memcpy (dst[c] + bps * i, o[c], (gsize) m * bps);
    }
  }
}

static AVX2 void
u8_to_f16_avx2 (const guint8 *src, m2i_f16 *dst, gint n)
{
  gint i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 f = _mm256_cvtepi32_ps (_mm256_cvtepu8_epi32 (_mm_loadl_epi64 ((const __m128i *) (src + i))));
    _mm_storeu_si128 ((__m128i *) (dst + i), _mm256_cvtps_ph (f, _MM_FROUND_TO_NEAREST_INT));
  }
  for (; i < n; i++)
    dst[i] = u8_f16_table[src[i]];
}

static const CscKernels kernels_avx2 = {
  "avx2", BLK, prep_nv12_avx2, prep_i420_avx2, prep_444_avx2, row_avx2, u8_to_f16_avx2,
};
#endif

static void
init_once (void)
{
  static gsize once = 0;
  if (g_once_init_enter (&once)) {
    init_tables ();
#ifdef HAVE_X86
    init_il_masks ();
#endif
    g_once_init_leave (&once, 1);
  }
}

const CscKernels *
m2i_csc_kernels_c (void)
{
  init_once ();
  return &kernels_c;
}

const CscKernels *
m2i_csc_kernels (void)
{
  init_once ();
#ifdef HAVE_X86
  M2iCpuFlags f = m2i_cpu_flags ();
  if ((f & M2I_CPU_AVX2) && (f & M2I_CPU_F16C))
    return &kernels_avx2;
#endif
  return &kernels_c;
}
