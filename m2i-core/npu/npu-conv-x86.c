/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* x86 micro-kernels of the convolution: int8 with AVX-512 VNNI (vpdpbusd on
 * u8 = x + 128, corrected by the folded weight sums) or AVX2 (vpmaddwd on
 * s16 = x - z: exact, where vpmaddubsw's saturating pair sums would not
 * be), fp16 with FMA on fp32 (AVX-512 or AVX2) and F16C for the output.
 *
 * A kernel computes M output pixels × NZ vectors of output channels for one
 * tile: for every tap and input block, NZ weight vectors are loaded once and
 * each pixel's activations are broadcast against them. M and NZ are
 * compile-time constants of each instantiation so the accumulators stay in
 * registers (M*NZ + NZ + 1 <= 32 zmm, or 16 ymm).
 */
#include "npu-private.h"

#include <base/m2i-cpu.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <immintrin.h>

#define T_AVX2 __attribute__((target("avx2")))
#define T_AVX2_FMA __attribute__((target("avx2,fma,f16c")))
/* M2I_CPU_AVX512F means F, BW, DQ and VL. */
#define T_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2")))
#define T_VNNI __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512vnni,avx2")))
#define T_AVX512_FMA __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma,f16c")))
#define INLINE static inline __attribute__((always_inline))

/* ---- int8 epilogue ------------------------------------------------------------
 *
 * The vector forms of round_shift (npu-conv.c) / npu_mbqm, bit-identical to them:
 * SHIFT: floor(v / 2^r) plus the rounding bump; MULTIPLIER: Sat32(v·2^l),
 * then (x·m + 2^30) >> 31 on even and odd lanes in 64 bits, then the
 * rounding divide by 2^r. The result is clamped to [act_min - zo,
 * act_max - zo] and zo added (the same as clamping after adding zo). The
 * per-channel vectors are loaded once per tile. PReLU: lanes whose
 * accumulator is negative take the negative branch's multiplier and
 * shifts before the same steps (a multiplier of either sign works: the
 * products are signed 64-bit and the floor is a shift). */

typedef struct {
  __m256i bias, mult, lsh, rsh;
  __m256i nmult, nlsh, nrsh;     /* PReLU */
} Requant8;

INLINE T_AVX2 Requant8
requant8_load (const NpuTileArgs *A, gint k)
{
  Requant8 q;
  q.bias = _mm256_loadu_si256 ((const __m256i *) (A->bias + k));
  q.mult = _mm256_loadu_si256 ((const __m256i *) (A->mult + k));
  q.lsh = _mm256_loadu_si256 ((const __m256i *) (A->lshift + k));
  q.rsh = _mm256_loadu_si256 ((const __m256i *) (A->rshift + k));
  q.nmult = q.nlsh = q.nrsh = _mm256_setzero_si256 ();
  if (A->nmult) {
    q.nmult = _mm256_loadu_si256 ((const __m256i *) (A->nmult + k));
    q.nlsh = _mm256_loadu_si256 ((const __m256i *) (A->nlshift + k));
    q.nrsh = _mm256_loadu_si256 ((const __m256i *) (A->nrshift + k));
  }
  return q;
}

INLINE T_AVX2 __m256i
requant8 (const M2iNpuConv *c, __m256i v, const Requant8 *R)
{
  const __m256i one = _mm256_set1_epi32 (1);
  v = _mm256_add_epi32 (v, R->bias);
  __m256i mult = R->mult, lsh = R->lsh, rsh = R->rsh;
  if (c->prelu) {
    __m256i neg = _mm256_cmpgt_epi32 (_mm256_setzero_si256 (), v);
    mult = _mm256_blendv_epi8 (mult, R->nmult, neg);
    lsh = _mm256_blendv_epi8 (lsh, R->nlsh, neg);
    rsh = _mm256_blendv_epi8 (rsh, R->nrsh, neg);
  }
  __m256i mask = _mm256_sub_epi32 (_mm256_sllv_epi32 (one, rsh), one);
  __m256i q;
  if (c->scheme == M2I_NPU_REQUANT_SHIFT) {
    __m256i fl = _mm256_srav_epi32 (v, rsh);
    __m256i rem = _mm256_and_si256 (v, mask);
    __m256i half = _mm256_srli_epi32 (_mm256_add_epi32 (mask, one), 1);
    __m256i gt = _mm256_cmpgt_epi32 (rem, half);
    __m256i eq = _mm256_andnot_si256 (_mm256_cmpeq_epi32 (half, _mm256_setzero_si256 ()),
        _mm256_cmpeq_epi32 (rem, half));
    if (c->round == M2I_MLI_ROUND_HALF_EVEN)
      eq = _mm256_and_si256 (eq, _mm256_cmpeq_epi32 (_mm256_and_si256 (fl, one), one));
    q = _mm256_sub_epi32 (fl, _mm256_or_si256 (gt, eq));      /* masks are -1 */
  } else {
    __m256i x = v;
    if (c->any_lshift) {
      /* lanes whose shift loses bits take the bound of v's sign */
      x = _mm256_sllv_epi32 (v, lsh);
      __m256i kept = _mm256_cmpeq_epi32 (_mm256_srav_epi32 (x, lsh), v);
      __m256i bound = _mm256_xor_si256 (_mm256_srai_epi32 (v, 31), _mm256_set1_epi32 (G_MAXINT32));
      x = _mm256_blendv_epi8 (bound, x, kept);
    }
    const __m256i nudge = _mm256_set1_epi64x ((gint64) 1 << 30);
    __m256i pe = _mm256_add_epi64 (_mm256_mul_epi32 (x, mult), nudge);
    __m256i po = _mm256_add_epi64 (_mm256_mul_epi32 (_mm256_srli_epi64 (x, 32),
            _mm256_srli_epi64 (mult, 32)), nudge);
    /* bits 31..62: the low dword of pe >> 31, the high dword of po << 1 */
    __m256i h = _mm256_blend_epi32 (_mm256_srli_epi64 (pe, 31), _mm256_slli_epi64 (po, 1), 0xaa);
    __m256i rem = _mm256_and_si256 (h, mask);
    __m256i thr = _mm256_add_epi32 (_mm256_srli_epi32 (mask, 1), _mm256_srli_epi32 (h, 31));
    q = _mm256_sub_epi32 (_mm256_srav_epi32 (h, rsh), _mm256_cmpgt_epi32 (rem, thr));
  }
  q = _mm256_max_epi32 (q, _mm256_set1_epi32 (c->act_min - c->out_zero));
  q = _mm256_min_epi32 (q, _mm256_set1_epi32 (c->act_max - c->out_zero));
  return _mm256_add_epi32 (q, _mm256_set1_epi32 (c->out_zero));
}

/* Stores 8 int32 lanes already inside [-128, 127] as 8 bytes. */
INLINE T_AVX2 void
store8 (guint8 *dst, __m256i q)
{
  __m256i p = _mm256_packs_epi32 (q, q);
  p = _mm256_packs_epi16 (p, p);
  p = _mm256_permutevar8x32_epi32 (p, _mm256_setr_epi32 (0, 4, 0, 0, 0, 0, 0, 0));
  _mm_storel_epi64 ((__m128i *) dst, _mm256_castsi256_si128 (p));
}

typedef struct {
  __m512i bias, mult, lsh, rsh;
  __m512i nmult, nlsh, nrsh;     /* PReLU */
} Requant16;

INLINE T_AVX512 Requant16
requant16_load (const NpuTileArgs *A, gint k)
{
  Requant16 q;
  q.bias = _mm512_loadu_si512 (A->bias + k);
  q.mult = _mm512_loadu_si512 (A->mult + k);
  q.lsh = _mm512_loadu_si512 (A->lshift + k);
  q.rsh = _mm512_loadu_si512 (A->rshift + k);
  q.nmult = q.nlsh = q.nrsh = _mm512_setzero_si512 ();
  if (A->nmult) {
    q.nmult = _mm512_loadu_si512 (A->nmult + k);
    q.nlsh = _mm512_loadu_si512 (A->nlshift + k);
    q.nrsh = _mm512_loadu_si512 (A->nrshift + k);
  }
  return q;
}

INLINE T_AVX512 __m512i
requant16 (const M2iNpuConv *c, __m512i v, const Requant16 *R)
{
  const __m512i one = _mm512_set1_epi32 (1);
  v = _mm512_add_epi32 (v, R->bias);
  __m512i mult = R->mult, lsh = R->lsh, rsh = R->rsh;
  if (c->prelu) {
    __mmask16 neg = _mm512_cmplt_epi32_mask (v, _mm512_setzero_si512 ());
    mult = _mm512_mask_blend_epi32 (neg, mult, R->nmult);
    lsh = _mm512_mask_blend_epi32 (neg, lsh, R->nlsh);
    rsh = _mm512_mask_blend_epi32 (neg, rsh, R->nrsh);
  }
  __m512i mask = _mm512_sub_epi32 (_mm512_sllv_epi32 (one, rsh), one);
  __m512i q;
  if (c->scheme == M2I_NPU_REQUANT_SHIFT) {
    __m512i fl = _mm512_srav_epi32 (v, rsh);
    __m512i rem = _mm512_and_si512 (v, mask);
    __m512i half = _mm512_srli_epi32 (_mm512_add_epi32 (mask, one), 1);
    __mmask16 eq = _mm512_cmpeq_epi32_mask (rem, half)
        & _mm512_test_epi32_mask (half, half);
    if (c->round == M2I_MLI_ROUND_HALF_EVEN)
      eq &= _mm512_test_epi32_mask (fl, one);
    __mmask16 bump = _mm512_cmpgt_epi32_mask (rem, half) | eq;
    q = _mm512_mask_add_epi32 (fl, bump, fl, one);
  } else {
    __m512i x = v;
    if (c->any_lshift) {
      x = _mm512_sllv_epi32 (v, lsh);
      __mmask16 kept = _mm512_cmpeq_epi32_mask (_mm512_srav_epi32 (x, lsh), v);
      __m512i bound = _mm512_xor_si512 (_mm512_srai_epi32 (v, 31), _mm512_set1_epi32 (G_MAXINT32));
      x = _mm512_mask_blend_epi32 (kept, bound, x);
    }
    const __m512i nudge = _mm512_set1_epi64 ((gint64) 1 << 30);
    __m512i pe = _mm512_add_epi64 (_mm512_mul_epi32 (x, mult), nudge);
    __m512i po = _mm512_add_epi64 (_mm512_mul_epi32 (_mm512_srli_epi64 (x, 32),
            _mm512_srli_epi64 (mult, 32)), nudge);
    __m512i h = _mm512_mask_blend_epi32 (0xaaaa, _mm512_srli_epi64 (pe, 31),
        _mm512_slli_epi64 (po, 1));
    __m512i rem = _mm512_and_si512 (h, mask);
    __m512i thr = _mm512_add_epi32 (_mm512_srli_epi32 (mask, 1), _mm512_srli_epi32 (h, 31));
    __m512i fl = _mm512_srav_epi32 (h, rsh);
    q = _mm512_mask_add_epi32 (fl, _mm512_cmpgt_epi32_mask (rem, thr), fl, one);
  }
  q = _mm512_max_epi32 (q, _mm512_set1_epi32 (c->act_min - c->out_zero));
  q = _mm512_min_epi32 (q, _mm512_set1_epi32 (c->act_max - c->out_zero));
  return _mm512_add_epi32 (q, _mm512_set1_epi32 (c->out_zero));
}

/* Stores 16 lanes (two output blocks) of pixel p, the second only if the
 * tile has it. */
INLINE T_AVX512 void
store16 (const NpuTileArgs *A, __m512i q, gint block, gint p)
{
  __m128i b = _mm512_cvtsepi32_epi8 (q);
  _mm_storel_epi64 ((__m128i *) (A->out + block * A->out_block + p * 8), b);
  if (block + 1 < A->nb)
    _mm_storel_epi64 ((__m128i *) (A->out + (block + 1) * A->out_block + p * 8),
        _mm_unpackhi_epi64 (b, b));
}

INLINE T_AVX2_FMA void
finish_block_fp16 (const NpuTileArgs *A, __m256 acc, gint block, gint p)
{
  const M2iNpuConv *c = A->conv;
  __m256 v = _mm256_add_ps (acc, _mm256_loadu_ps (A->fbias + block * 8));
  if (A->fslope) {            /* PReLU: v < 0 ? v·slope : v (-0 and NaN kept) */
    __m256 neg = _mm256_cmp_ps (v, _mm256_setzero_ps (), _CMP_LT_OQ);
    v = _mm256_blendv_ps (v, _mm256_mul_ps (v, _mm256_loadu_ps (A->fslope + block * 8)), neg);
  }
  /* max(lo, v), min(hi, .): NaN passes through, as in the C kernel */
  v = _mm256_min_ps (_mm256_set1_ps (c->f_max), _mm256_max_ps (_mm256_set1_ps (c->f_min), v));
  _mm_storeu_si128 ((__m128i *) (A->out + block * A->out_block + p * 16),
      _mm256_cvtps_ph (v, _MM_FROUND_TO_NEAREST_INT));
}

static inline gint32
load_i32 (const guint8 *p)
{
  gint32 v;
  memcpy (&v, p, sizeof v);
  return v;
}

/* ---- int8, AVX-512 VNNI: 16 channels per zmm, 4 input channels per lane --- */

INLINE T_VNNI void
vnni_tile (const NpuTileArgs *A, const int M, const int NZ)
{
  const M2iNpuConv *c = A->conv;
  __m512i acc[NPU_AVX512_MAX_M][2];
#pragma GCC unroll 16
  for (int p = 0; p < M; p++)
    acc[p][0] = acc[p][1] = _mm512_setzero_si512 ();
  const gint8 *w = A->w;
  for (gint t = 0; t < c->taps; t++) {
    const guint8 *a = A->a + c->tap_off[t];
    for (gint cb = 0; cb < A->ncb; cb++, a += A->cb_pitch) {
#pragma GCC unroll 2
      for (int h = 0; h < 2; h++) {
        __m512i w0 = _mm512_loadu_si512 (w);
        __m512i w1 = NZ > 1 ? _mm512_loadu_si512 (w + 64) : _mm512_setzero_si512 ();
        w += 64 * NZ;
#pragma GCC unroll 16
        for (int p = 0; p < M; p++) {
          __m512i b = _mm512_set1_epi32 (load_i32 (a + p * 8 + h * 4));
          acc[p][0] = _mm512_dpbusd_epi32 (acc[p][0], b, w0);
          if (NZ > 1)
            acc[p][1] = _mm512_dpbusd_epi32 (acc[p][1], b, w1);
        }
      }
    }
  }
  Requant16 R[2];
#pragma GCC unroll 2
  for (int z = 0; z < NZ; z++)
    R[z] = requant16_load (A, 16 * z);
#pragma GCC unroll 16
  for (int p = 0; p < M; p++) {
    if (p >= A->m)
      break;
#pragma GCC unroll 2
    for (int z = 0; z < NZ; z++)
      if (2 * z < A->nb)
        store16 (A, requant16 (c, acc[p][z], &R[z]), 2 * z, p);
  }
}

/* ---- int8, AVX2: 8 channels per ymm, pairs of s16 inputs per lane --------- */

INLINE T_AVX2 void
avx2_tile_int8 (const NpuTileArgs *A, const int M, const int NZ)
{
  const M2iNpuConv *c = A->conv;
  __m256i acc[NPU_AVX2_MAX_M][2];
#pragma GCC unroll 8
  for (int p = 0; p < M; p++)
    acc[p][0] = acc[p][1] = _mm256_setzero_si256 ();
  const gint16 *w = A->w;
  for (gint t = 0; t < c->taps; t++) {
    const guint8 *a = A->a + c->tap_off[t];
    for (gint cb = 0; cb < A->ncb; cb++, a += A->cb_pitch) {
#pragma GCC unroll 4
      for (int i2 = 0; i2 < 4; i2++) {
        __m256i w0 = _mm256_loadu_si256 ((const __m256i *) w);
        __m256i w1 = NZ > 1 ? _mm256_loadu_si256 ((const __m256i *) (w + 16)) : _mm256_setzero_si256 ();
        w += 16 * NZ;
#pragma GCC unroll 8
        for (int p = 0; p < M; p++) {
          __m256i b = _mm256_set1_epi32 (load_i32 (a + (p * 8 + i2 * 2) * 2));
          acc[p][0] = _mm256_add_epi32 (acc[p][0], _mm256_madd_epi16 (b, w0));
          if (NZ > 1)
            acc[p][1] = _mm256_add_epi32 (acc[p][1], _mm256_madd_epi16 (b, w1));
        }
      }
    }
  }
  Requant8 R[2];
#pragma GCC unroll 2
  for (int z = 0; z < NZ; z++)
    R[z] = requant8_load (A, 8 * z);
#pragma GCC unroll 8
  for (int p = 0; p < M; p++) {
    if (p >= A->m)
      break;
#pragma GCC unroll 2
    for (int z = 0; z < NZ; z++)
      if (z < A->nb)
        store8 (A->out + z * A->out_block + p * 8, requant8 (c, acc[p][z], &R[z]));
  }
}

/* ---- fp16, AVX-512: 16 channels per zmm ----------------------------------- */

INLINE T_AVX512_FMA void
avx512_tile_fp16 (const NpuTileArgs *A, const int M, const int NZ)
{
  const M2iNpuConv *c = A->conv;
  __m512 acc[NPU_AVX512_MAX_M][2];
#pragma GCC unroll 16
  for (int p = 0; p < M; p++)
    acc[p][0] = acc[p][1] = _mm512_setzero_ps ();
  const float *w = A->w;
  for (gint t = 0; t < c->taps; t++) {
    const guint8 *a = A->a + c->tap_off[t];
    for (gint cb = 0; cb < A->ncb; cb++, a += A->cb_pitch) {
      const float *x = (const float *) a;
#pragma GCC unroll 8
      for (int i = 0; i < 8; i++) {
        __m512 w0 = _mm512_loadu_ps (w);
        __m512 w1 = NZ > 1 ? _mm512_loadu_ps (w + 16) : _mm512_setzero_ps ();
        w += 16 * NZ;
#pragma GCC unroll 16
        for (int p = 0; p < M; p++) {
          __m512 b = _mm512_set1_ps (x[p * 8 + i]);
          acc[p][0] = _mm512_fmadd_ps (b, w0, acc[p][0]);
          if (NZ > 1)
            acc[p][1] = _mm512_fmadd_ps (b, w1, acc[p][1]);
        }
      }
    }
  }
#pragma GCC unroll 16
  for (int p = 0; p < M; p++) {
    if (p >= A->m)
      break;
#pragma GCC unroll 2
    for (int z = 0; z < NZ; z++) {
      if (2 * z < A->nb)
        finish_block_fp16 (A, _mm512_castps512_ps256 (acc[p][z]), 2 * z, p);
      if (2 * z + 1 < A->nb)
        finish_block_fp16 (A, _mm256_castpd_ps (_mm512_extractf64x4_pd (
                    _mm512_castps_pd (acc[p][z]), 1)), 2 * z + 1, p);
    }
  }
}

/* ---- fp16, AVX2 + FMA: 8 channels per ymm --------------------------------- */

INLINE T_AVX2_FMA void
avx2_tile_fp16 (const NpuTileArgs *A, const int M, const int NZ)
{
  const M2iNpuConv *c = A->conv;
  __m256 acc[NPU_AVX2_MAX_M][2];
#pragma GCC unroll 8
  for (int p = 0; p < M; p++)
    acc[p][0] = acc[p][1] = _mm256_setzero_ps ();
  const float *w = A->w;
  for (gint t = 0; t < c->taps; t++) {
    const guint8 *a = A->a + c->tap_off[t];
    for (gint cb = 0; cb < A->ncb; cb++, a += A->cb_pitch) {
      const float *x = (const float *) a;
#pragma GCC unroll 8
      for (int i = 0; i < 8; i++) {
        __m256 w0 = _mm256_loadu_ps (w);
        __m256 w1 = NZ > 1 ? _mm256_loadu_ps (w + 8) : _mm256_setzero_ps ();
        w += 8 * NZ;
#pragma GCC unroll 8
        for (int p = 0; p < M; p++) {
          __m256 b = _mm256_broadcast_ss (x + p * 8 + i);
          acc[p][0] = _mm256_fmadd_ps (b, w0, acc[p][0]);
          if (NZ > 1)
            acc[p][1] = _mm256_fmadd_ps (b, w1, acc[p][1]);
        }
      }
    }
  }
#pragma GCC unroll 8
  for (int p = 0; p < M; p++) {
    if (p >= A->m)
      break;
#pragma GCC unroll 2
    for (int z = 0; z < NZ; z++)
      if (z < A->nb)
        finish_block_fp16 (A, acc[p][z], z, p);
  }
}

/* ---- depthwise: pixels in lanes ----------------------------------------------
 *
 * Each lane meets only its own channel, so a vector holds channels of
 * consecutive pixels: 16 lanes = 2 pixels × 8 channels (zmm), 8 = one pixel
 * (ymm). Consecutive output pixels read consecutive buffer pixels for every
 * tap (stride phases), so both pixels come from one contiguous load. The
 * buffer's slack columns cover the second pixel of an odd tail. */

INLINE T_AVX512 __m512i
dup8_epi32 (const gint32 *p)
{
  return _mm512_broadcast_i32x8 (_mm256_loadu_si256 ((const __m256i *) p));
}

static T_AVX512 void
dw_int8_avx512 (const NpuTileArgs *A)
{
  const M2iNpuConv *c = A->conv;
  Requant16 R = { dup8_epi32 (A->bias), dup8_epi32 (A->mult), dup8_epi32 (A->lshift),
    dup8_epi32 (A->rshift), _mm512_setzero_si512 (), _mm512_setzero_si512 (),
    _mm512_setzero_si512 () };
  if (A->nmult) {
    R.nmult = dup8_epi32 (A->nmult);
    R.nlsh = dup8_epi32 (A->nlshift);
    R.nrsh = dup8_epi32 (A->nrshift);
  }
  for (gint p = 0; p < A->m; p += 2) {
    __m512i acc = _mm512_setzero_si512 ();
    const gint32 *w = A->w;
    for (gint t = 0; t < c->taps; t++, w += 8) {
      const gint16 *x = (const gint16 *) (A->a + c->tap_off[t]) + p * 8;
      __m512i xv = _mm512_cvtepi16_epi32 (_mm256_loadu_si256 ((const __m256i *) x));
      acc = _mm512_add_epi32 (acc, _mm512_mullo_epi32 (xv, dup8_epi32 (w)));
    }
    __m128i b = _mm512_cvtsepi32_epi8 (requant16 (c, acc, &R));
    if (p + 1 < A->m)
      _mm_storeu_si128 ((__m128i *) (A->out + p * 8), b);
    else
      _mm_storel_epi64 ((__m128i *) (A->out + p * 8), b);
  }
}

static T_AVX2 void
dw_int8_avx2 (const NpuTileArgs *A)
{
  const M2iNpuConv *c = A->conv;
  Requant8 R = requant8_load (A, 0);
  for (gint p = 0; p < A->m; p++) {
    __m256i acc = _mm256_setzero_si256 ();
    const gint32 *w = A->w;
    for (gint t = 0; t < c->taps; t++, w += 8) {
      const gint16 *x = (const gint16 *) (A->a + c->tap_off[t]) + p * 8;
      __m256i xv = _mm256_cvtepi16_epi32 (_mm_loadu_si128 ((const __m128i *) x));
      acc = _mm256_add_epi32 (acc, _mm256_mullo_epi32 (xv,
              _mm256_loadu_si256 ((const __m256i *) w)));
    }
    store8 (A->out + p * 8, requant8 (c, acc, &R));
  }
}

static T_AVX512_FMA void
dw_fp16_avx512 (const NpuTileArgs *A)
{
  const M2iNpuConv *c = A->conv;
  const __m512 bias = _mm512_broadcast_f32x8 (_mm256_loadu_ps (A->fbias));
  const __m512 slope = A->fslope ? _mm512_broadcast_f32x8 (_mm256_loadu_ps (A->fslope))
      : _mm512_setzero_ps ();
  const __m512 lo = _mm512_set1_ps (c->f_min), hi = _mm512_set1_ps (c->f_max);
  for (gint p = 0; p < A->m; p += 2) {
    __m512 acc = _mm512_setzero_ps ();
    const float *w = A->w;
    for (gint t = 0; t < c->taps; t++, w += 8) {
      const float *x = (const float *) (A->a + c->tap_off[t]) + p * 8;
      acc = _mm512_fmadd_ps (_mm512_loadu_ps (x), _mm512_broadcast_f32x8 (_mm256_loadu_ps (w)), acc);
    }
    __m512 v = _mm512_add_ps (acc, bias);
    if (A->fslope)
      v = _mm512_mask_mul_ps (v, _mm512_cmp_ps_mask (v, _mm512_setzero_ps (), _CMP_LT_OQ), v,
          slope);
    v = _mm512_min_ps (hi, _mm512_max_ps (lo, v));
    __m256i h = _mm512_cvtps_ph (v, _MM_FROUND_TO_NEAREST_INT);
    if (p + 1 < A->m)
      _mm256_storeu_si256 ((__m256i *) (A->out + p * 16), h);
    else
      _mm_storeu_si128 ((__m128i *) (A->out + p * 16), _mm256_castsi256_si128 (h));
  }
}

static T_AVX2_FMA void
dw_fp16_avx2 (const NpuTileArgs *A)
{
  const M2iNpuConv *c = A->conv;
  for (gint p = 0; p < A->m; p++) {
    __m256 acc = _mm256_setzero_ps ();
    const float *w = A->w;
    for (gint t = 0; t < c->taps; t++, w += 8) {
      const float *x = (const float *) (A->a + c->tap_off[t]) + p * 8;
      acc = _mm256_fmadd_ps (_mm256_loadu_ps (x), _mm256_loadu_ps (w), acc);
    }
    finish_block_fp16 (A, acc, 0, p);
  }
}

NpuTileFunc
npu_x86_dw_func (NpuPath isa, M2iNpuPrecision p)
{
  if (isa == NPU_PATH_AVX512)
    return p == M2I_NPU_INT8 ? dw_int8_avx512 : dw_fp16_avx512;
  if (isa == NPU_PATH_AVX2)
    return p == M2I_NPU_INT8 ? dw_int8_avx2 : dw_fp16_avx2;
  return NULL;
}

/* ---- the padded copy ------------------------------------------------------------- */

/* One instruction per pixel: u8 = x ^ 0x80, s16 = x - z, f32 = fp16 widened. */
static T_AVX2_FMA void
convert_pixels_avx2 (const M2iNpuConv *c, guint8 *d, const guint8 *s,
    gint64 step, gint64 n)
{
  switch (c->pad_format) {
    case NPU_PAD_U8: {
      const __m128i flip = _mm_set1_epi8 ((char) 0x80);
      for (gint64 p = 0; p < n; p++)
        _mm_storel_epi64 ((__m128i *) (d + p * 8), _mm_xor_si128 (flip,
                _mm_loadl_epi64 ((const __m128i *) (s + p * step))));
      break;
    }
    case NPU_PAD_S16: {
      const __m128i z = _mm_set1_epi16 ((short) c->in_zero);
      for (gint64 p = 0; p < n; p++)
        _mm_storeu_si128 ((__m128i *) (d + p * 16), _mm_sub_epi16 (_mm_cvtepi8_epi16 (
                    _mm_loadl_epi64 ((const __m128i *) (s + p * step))), z));
      break;
    }
    case NPU_PAD_F32:
      for (gint64 p = 0; p < n; p++)
        _mm256_storeu_ps ((float *) (d + p * 32), _mm256_cvtph_ps (
                _mm_loadu_si128 ((const __m128i *) (s + p * step * 2))));
      break;
  }
}

NpuConvertFunc
npu_x86_convert_func (void)
{
  M2iCpuFlags need = M2I_CPU_AVX2 | M2I_CPU_F16C;
  return (m2i_cpu_flags () & need) == need ? convert_pixels_avx2 : NULL;
}

/* ---- instantiations --------------------------------------------------------- */

#define INST(name, impl, target, M) \
  static target void name##_##M##_1 (const NpuTileArgs *a) { impl (a, M, 1); } \
  static target void name##_##M##_2 (const NpuTileArgs *a) { impl (a, M, 2); }

#define INST6(name, impl, target) \
  INST (name, impl, target, 1) INST (name, impl, target, 2) INST (name, impl, target, 3) \
  INST (name, impl, target, 4) INST (name, impl, target, 5) INST (name, impl, target, 6)

#define INST14(name, impl, target) \
  INST6 (name, impl, target) \
  INST (name, impl, target, 7) INST (name, impl, target, 8) INST (name, impl, target, 9) \
  INST (name, impl, target, 10) INST (name, impl, target, 11) INST (name, impl, target, 12) \
  INST (name, impl, target, 13) INST (name, impl, target, 14)

INST14 (vnni, vnni_tile, T_VNNI)
INST14 (f512, avx512_tile_fp16, T_AVX512_FMA)
INST6 (i256, avx2_tile_int8, T_AVX2)
INST6 (f256, avx2_tile_fp16, T_AVX2_FMA)

#define ROW(name, M) { name##_##M##_1, name##_##M##_2 }
#define TABLE6(name) ROW (name, 1), ROW (name, 2), ROW (name, 3), ROW (name, 4), \
  ROW (name, 5), ROW (name, 6)
#define TABLE14(name) TABLE6 (name), ROW (name, 7), ROW (name, 8), ROW (name, 9), \
  ROW (name, 10), ROW (name, 11), ROW (name, 12), ROW (name, 13), ROW (name, 14)

static const NpuTileFunc vnni_fns[NPU_AVX512_MAX_M][2] = { TABLE14 (vnni) };
static const NpuTileFunc f512_fns[NPU_AVX512_MAX_M][2] = { TABLE14 (f512) };
static const NpuTileFunc i256_fns[NPU_AVX2_MAX_M][2] = { TABLE6 (i256) };
static const NpuTileFunc f256_fns[NPU_AVX2_MAX_M][2] = { TABLE6 (f256) };

NpuTileFunc
npu_x86_tile_func (NpuPath path, M2iNpuPrecision p, gint M, gint nz)
{
  if (nz < 1 || nz > 2 || M < 1)
    return NULL;
  if (path == NPU_PATH_AVX512 && M <= NPU_AVX512_MAX_M)
    return (p == M2I_NPU_INT8 ? vnni_fns : f512_fns)[M - 1][nz - 1];
  if (path == NPU_PATH_AVX2 && M <= NPU_AVX2_MAX_M)
    return (p == M2I_NPU_INT8 ? i256_fns : f256_fns)[M - 1][nz - 1];
  return NULL;
}

#else

NpuTileFunc
npu_x86_tile_func (NpuPath path, M2iNpuPrecision p, gint M, gint nz)
{
  return NULL;
}

NpuTileFunc
npu_x86_dw_func (NpuPath isa, M2iNpuPrecision p)
{
  return NULL;
}

NpuConvertFunc
npu_x86_convert_func (void)
{
  return NULL;
}

#endif
