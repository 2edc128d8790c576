/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The AVX-512 kernels of the integer convolution (conv-int8.h); the AVX2
 * ones are in conv-int8-avx2.c.
 *
 * GEMM tile, 8 output channels × 48 output pixels, summed over k4 steps of
 * 4 products:
 *  - AVX-512 VNNI: vpdpbusd multiplies 4 unsigned bytes (the activation
 *    codes of one pixel, 4 input channels) by 4 signed bytes (the weights,
 *    one broadcast dword per output channel) and adds the 4 products to an
 *    int32 lane, without intermediate saturation: 24 accumulators (8
 *    channels × 3 vectors of 16 pixels), 3 loads and 8 broadcasts a step.
 * Depthwise rows (VNNI): 4 taps of 16 pixels per vpdpbusd, the taps' codes
 * gathered by byte shuffles. Quantizing (AVX-512): the f32 operations of
 * the C loop, 16 values at a time.
 *
 * Every epilogue is the scalar one of conv-int8.c, lane for lane: float
 * (acc) · mul + add (two roundings, no FMA), + the padding term, the
 * activation (Swish: the Swish kernel's operations), then the f32 value or
 * its level, stored by masked stores.
 */
#include "conv-int8.h"

#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#include "row-x86.h"
#include "vmath-avx512.h"

#define MR M2I_K_I8_MR
#define NR M2I_K_I8_NR

#define AVX512_TARGET __attribute__ ((target ("avx512f,avx512bw,avx512vl,avx512dq,fma")))
#define VNNI_TARGET __attribute__ ((target ("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,fma")))
#define ALWAYS_INLINE inline __attribute__ ((always_inline))
#define ROUND_NEAREST (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)

/* acc += vpdpbusd (u, s). As inline assembly: GCC 12 gives the intrinsic
 * (whose result is tied to its accumulator input) a copy and a spill of
 * every accumulator per iteration; with "+v" the 24 accumulators stay in
 * registers. */
#define DPBUSD(acc, u, s) __asm__ ("vpdpbusd %2, %1, %0" : "+v" (acc) : "v" (u), "v" (s))

/* ---- quantizing and the epilogue (AVX-512) -------------------------------- */

/* The levels of 16 values, exactly as the C loop computes them:
 * nearbyint ((v - lo) / d · lm1) — then k >= 0 ? k : 0, which also sends
 * NaN to 0, and the range's ends. The division is the slow part, so
 * v · (lm1 / d) - lo · (lm1 / d) (one FMA) is computed instead; it is
 * within a few ulps of the exact value (|t| < 256·(1 + 2^-10) where it
 * matters), so the rounding can only differ where that lies within 1/1000
 * of a half: those vectors (about 3 in 100) are done again with the
 * division. */
AVX512_TARGET static ALWAYS_INLINE __m512i
quant16 (const M2iKI8Quant *q, __m512 v, __m512 inv)
{
  const __m512 zero = _mm512_setzero_ps (), lm1 = _mm512_set1_ps (q->lm1);
  __m512 t = _mm512_fmadd_ps (v, inv, _mm512_set1_ps (-q->lo * (q->lm1 / q->d)));
  __m512 k = _mm512_roundscale_ps (t, ROUND_NEAREST);
  __m512 off = _mm512_abs_ps (_mm512_sub_ps (t, k));
  __mmask16 tie = _mm512_cmp_ps_mask (off, _mm512_set1_ps (0.499f), _CMP_GT_OQ);
  if (G_UNLIKELY (tie)) {
    __m512 u = _mm512_sub_ps (v, _mm512_set1_ps (q->lo));
    k = _mm512_mask_roundscale_ps (k, tie, _mm512_mul_ps (_mm512_div_ps (u,
                _mm512_set1_ps (q->d)), lm1), ROUND_NEAREST);
  }
  if (q->d > 0.0f) {
    /* v <= lo gives k <= 0 and v > hi k >= L-1: the ends are the clamp
     * (max (NaN, 0) is 0) */
    k = _mm512_min_ps (_mm512_max_ps (k, zero), lm1);
  } else {
    k = _mm512_maskz_mov_ps (_mm512_cmp_ps_mask (k, zero, _CMP_GE_OQ), k);
    k = _mm512_mask_mov_ps (k, _mm512_cmp_ps_mask (v, _mm512_set1_ps (q->mx), _CMP_GT_OQ),
        lm1);
    k = _mm512_mask_mov_ps (k, _mm512_cmp_ps_mask (v, _mm512_set1_ps (q->mn), _CMP_LE_OQ),
        zero);
  }
  return _mm512_cvttps_epi32 (k);
}

/* Swish of 16 values: vmath-avx512.h's, bit for bit the Swish kernel's and
 * the C epilogue's. */
AVX512_TARGET static ALWAYS_INLINE __m512
swish16 (__m512 x, float beta)
{
  return ir_vm_swish16 (x, _mm512_set1_ps (beta));
}

/* The activation of 16 values of channel @c. */
AVX512_TARGET static ALWAYS_INLINE __m512
activate16 (const M2iKI8Out *o, gint64 c, __m512 v)
{
  switch (o->act) {
    case M2I_K_I8_ACT_RELU:
      return _mm512_max_ps (v, _mm512_setzero_ps ());   /* max (NaN, 0) = 0, as y > 0 ? y : 0 */
    case M2I_K_I8_ACT_PRELU:
      return _mm512_mask_mul_ps (v, _mm512_cmp_ps_mask (v, _mm512_setzero_ps (), _CMP_LT_OQ),
          v, _mm512_set1_ps (o->slope[c]));
    case M2I_K_I8_ACT_SWISH:
      return swish16 (v, o->beta);
    default:
      return v;
  }
}

/* A FakeQuantize's output of 16 values of channel @c (grid epilogue): the
 * level as quant16 finds it (exactly the kernel's), then the kernel's
 * k / (L-1) · (hi - lo) + lo with a true division, and its ends. */
AVX512_TARGET static ALWAYS_INLINE __m512
grid16 (const M2iKI8Out *o, gint64 c, __m512 v)
{
  const M2iKI8Quant *q = &o->oq[c];
  __m512 lo = _mm512_set1_ps (o->glo[c]), hi = _mm512_set1_ps (o->ghi[c]);
  __m512 k = _mm512_cvtepi32_ps (quant16 (q, v, _mm512_set1_ps (q->lm1 / q->d)));
  __m512 r = _mm512_add_ps (_mm512_mul_ps (_mm512_div_ps (k, _mm512_set1_ps (q->lm1)),
          _mm512_sub_ps (hi, lo)), lo);
  r = _mm512_mask_mov_ps (r, _mm512_cmp_ps_mask (v, _mm512_set1_ps (q->mx), _CMP_GT_OQ), hi);
  return _mm512_mask_mov_ps (r, _mm512_cmp_ps_mask (v, _mm512_set1_ps (q->mn), _CMP_LE_OQ), lo);
}

/* Stores the lanes @m of @v (acc · mul + add, + padding terms) after the
 * epilogue @o at element @at of @row (f32 or codes). */
AVX512_TARGET static ALWAYS_INLINE void
finish16 (const M2iKI8Out *o, gint64 c, __m512 v, gpointer row, gint64 at, __mmask16 m)
{
  v = activate16 (o, c, v);
  if (o->codes) {
    const M2iKI8Quant *oq = &o->oq[c];
    __m512i k = quant16 (oq, v, _mm512_set1_ps (oq->lm1 / oq->d));
    _mm_mask_storeu_epi8 ((guint8 *) row + at, m, _mm512_cvtepi32_epi8 (k));
  } else if (o->grid) {
    _mm512_mask_storeu_ps ((float *) row + at, m, grid16 (o, c, v));
  } else {
    _mm512_mask_storeu_ps ((float *) row + at, m, v);
  }
}

/* ---- GEMM tile, VNNI --------------------------------------------------------- */

/* Codes straight from the sum (ir_k_i8_direct): one FMA, the rounding, the
 * clamp — within a few ulps of the full epilogue's t, so the same level
 * except within 1/1000 of a half: such vectors take the full epilogue
 * (mul, add, ReLU, quant16), so the codes are exactly its. */
AVX512_TARGET static ALWAYS_INLINE __m128i
direct16 (__m512i acc, float dmul, float dadd, float mul, float add, const M2iKI8Out *o,
    gint64 c)
{
  const M2iKI8Quant *oq = &o->oq[c];
  __m512 f = _mm512_cvtepi32_ps (acc);
  __m512 t = _mm512_fmadd_ps (f, _mm512_set1_ps (dmul), _mm512_set1_ps (dadd));
  __m512 k = _mm512_roundscale_ps (t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __mmask16 tie = _mm512_cmp_ps_mask (_mm512_abs_ps (_mm512_sub_ps (t, k)),
      _mm512_set1_ps (0.499f), _CMP_GT_OQ);
  if (G_UNLIKELY (tie)) {
    __m512 v = _mm512_add_ps (_mm512_mul_ps (f, _mm512_set1_ps (mul)), _mm512_set1_ps (add));
    v = activate16 (o, c, v);
    return _mm512_cvtepi32_epi8 (quant16 (oq, v, _mm512_set1_ps (oq->lm1 / oq->d)));
  }
  k = _mm512_min_ps (_mm512_max_ps (k, _mm512_setzero_ps ()), _mm512_set1_ps (oq->lm1));
  return _mm512_cvtepi32_epi8 (_mm512_cvttps_epi32 (k));
}

/* The tile's epilogue, out of line: inlined into the kernel for each of its
 * 24 accumulators it made the kernel 28 KB of code. The runs (the same for
 * every row) and each row's factors are read into locals first: stores
 * through st->out could alias *st, and the compiler would read them again
 * after every store (thin layers, few sums per output, spend most of their
 * time here). */
VNNI_TARGET static __attribute__ ((noinline)) void
vnni_epilogue (const __m512i *acc, const M2iKI8Store *st)
{
  const gint rows = st->rows, n_runs = st->run_start[3];
  const gint64 c0 = st->c0;
  const M2iKI8Out *o = st->o;
  gint rs[4];
  gint32 at[NR];
  __mmask16 mk[NR];
  for (gint gi = 0; gi < 4; gi++)
    rs[gi] = st->run_start[gi];
  for (gint q = 0; q < n_runs; q++) {
    at[q] = st->run_at[q];
    mk[q] = st->run_mask[q];
  }
  if (st->dmul && !st->fix) {
    guint8 *out = st->out;
    const gsize ldo = st->ldo;
    for (gint r = 0; r < rows; r++) {
      guint8 *row = out + r * ldo;
      const float dmul = st->dmul[r], dadd = st->dadd[r], mul = st->mul[r], add = st->add[r];
      __m128i k[3];
      for (gint gi = 0; gi < 3; gi++)
        k[gi] = direct16 (acc[r * 3 + gi], dmul, dadd, mul, add, o, c0 + r);
      for (gint gi = 0; gi < 3; gi++)
        for (gint q = rs[gi]; q < rs[gi + 1]; q++)
          _mm_mask_storeu_epi8 (row + at[q], mk[q], k[gi]);
    }
    return;
  }
  gsize es = o->codes ? 1 : sizeof (float);
  for (gint r = 0; r < rows; r++) {
    gpointer row = (guint8 *) st->out + r * st->ldo * es;
    __m512 mul = _mm512_set1_ps (st->mul[r]), add = _mm512_set1_ps (st->add[r]);
    /* the row's three vectors side by side: three independent chains */
    __m512 v[3];
    for (gint gi = 0; gi < 3; gi++) {
      v[gi] = _mm512_add_ps (_mm512_mul_ps (_mm512_cvtepi32_ps (acc[r * 3 + gi]), mul), add);
      if (st->fix)
        v[gi] = _mm512_add_ps (v[gi], _mm512_loadu_ps (st->fix + r * NR + gi * 16));
      v[gi] = activate16 (o, c0 + r, v[gi]);
    }
    if (o->codes) {
      const M2iKI8Quant *oq = &o->oq[c0 + r];
      __m128i k[3];
      const __m512 inv = _mm512_set1_ps (oq->lm1 / oq->d);
      for (gint gi = 0; gi < 3; gi++)
        k[gi] = _mm512_cvtepi32_epi8 (quant16 (oq, v[gi], inv));
      for (gint gi = 0; gi < 3; gi++)
        for (gint q = rs[gi]; q < rs[gi + 1]; q++)
          _mm_mask_storeu_epi8 ((guint8 *) row + at[q], mk[q], k[gi]);
      continue;
    }
    if (o->grid)
      for (gint gi = 0; gi < 3; gi++)
        v[gi] = grid16 (o, c0 + r, v[gi]);
    for (gint gi = 0; gi < 3; gi++)
      for (gint q = rs[gi]; q < rs[gi + 1]; q++)
        _mm512_mask_storeu_ps ((float *) row + at[q], mk[q], v[gi]);
  }
}

VNNI_TARGET static void
micro_vnni (gint k4, const void *a, const guint8 *b, const gint64 *off, const M2iKI8Store *st)
{
  const gint32 *ib = st->ibias;
  __m512i c00 = _mm512_set1_epi32 (ib[0]), c01 = c00, c02 = c00;
  __m512i c10 = _mm512_set1_epi32 (ib[1]), c11 = c10, c12 = c10;
  __m512i c20 = _mm512_set1_epi32 (ib[2]), c21 = c20, c22 = c20;
  __m512i c30 = _mm512_set1_epi32 (ib[3]), c31 = c30, c32 = c30;
  __m512i c40 = _mm512_set1_epi32 (ib[4]), c41 = c40, c42 = c40;
  __m512i c50 = _mm512_set1_epi32 (ib[5]), c51 = c50, c52 = c50;
  __m512i c60 = _mm512_set1_epi32 (ib[6]), c61 = c60, c62 = c60;
  __m512i c70 = _mm512_set1_epi32 (ib[7]), c71 = c70, c72 = c70;
  const gint32 *ap = (const gint32 *) a;
  for (gint p = 0; p < k4; p++, ap += MR) {
    const guint8 *bp = b + off[p];
    __m512i b0 = _mm512_loadu_si512 (bp);
    __m512i b1 = _mm512_loadu_si512 (bp + 64);
    __m512i b2 = _mm512_loadu_si512 (bp + 128);
    __m512i w;
#define ROW(r) \
    w = _mm512_set1_epi32 (ap[r]); \
    DPBUSD (c##r##0, b0, w); \
    DPBUSD (c##r##1, b1, w); \
    DPBUSD (c##r##2, b2, w);
    ROW (0) ROW (1) ROW (2) ROW (3) ROW (4) ROW (5) ROW (6) ROW (7)
#undef ROW
  }
  __m512i acc[MR * 3] = { c00, c01, c02, c10, c11, c12, c20, c21, c22, c30, c31, c32,
    c40, c41, c42, c50, c51, c52, c60, c61, c62, c70, c71, c72 };
  vnni_epilogue (acc, st);
}

/* ---- narrow tile, VNNI ------------------------------------------------------- */

/* acc[i] (16 channels of pixel i, i < N) summed over k4 steps: the
 * weights of a step are the vector, pixel i's 4 codes a broadcast dword.
 * 16 accumulators, named (an array of them GCC 12 keeps on the stack,
 * stored and loaded again at every vpdpbusd): slot s sums pixel s mod N
 * over the steps p ≡ s / N (mod 16 / N), so fewer pixels still make 16
 * independent chains. N is 1, 2, 4, 8 or 16. */
VNNI_TARGET static ALWAYS_INLINE void
narrow_sums (gint k4, const gint8 *a, const guint8 *b, const gint64 *off, __m512i ib,
    const gint N, gint32 *t)
{
  const gint C = 16 / N;
  const __m512i z = _mm512_setzero_si512 ();
  __m512i a0 = ib, a1 = N > 1 ? ib : z, a2 = N > 2 ? ib : z, a3 = N > 3 ? ib : z;
  __m512i a4 = N > 4 ? ib : z, a5 = N > 5 ? ib : z, a6 = N > 6 ? ib : z, a7 = N > 7 ? ib : z;
  __m512i a8 = N > 8 ? ib : z, a9 = N > 9 ? ib : z, a10 = N > 10 ? ib : z, a11 = N > 11 ? ib : z;
  __m512i a12 = N > 12 ? ib : z, a13 = N > 13 ? ib : z, a14 = N > 14 ? ib : z;
  __m512i a15 = N > 15 ? ib : z;
#define CODES(q, i) _mm512_set1_epi32 (*(const gint32 *) (b + off[q] + 4 * (i)))
#define SLOT(s) \
  DPBUSD (a##s, CODES (p + (s) / N, (s) % N), \
      _mm512_loadu_si512 (a + (gsize) (p + (s) / N) * 64));
  gint p = 0;
  for (; p + C <= k4; p += C) {
    SLOT (0) SLOT (1) SLOT (2) SLOT (3) SLOT (4) SLOT (5) SLOT (6) SLOT (7)
    SLOT (8) SLOT (9) SLOT (10) SLOT (11) SLOT (12) SLOT (13) SLOT (14) SLOT (15)
  }
#undef SLOT
  /* the last k4 mod C steps, into the first chain */
#define TAIL(s) if ((s) < N) DPBUSD (a##s, CODES (p, s), w);
  for (; p < k4; p++) {
    __m512i w = _mm512_loadu_si512 (a + (gsize) p * 64);
    TAIL (0) TAIL (1) TAIL (2) TAIL (3) TAIL (4) TAIL (5) TAIL (6) TAIL (7)
    TAIL (8) TAIL (9) TAIL (10) TAIL (11) TAIL (12) TAIL (13) TAIL (14) TAIL (15)
  }
#undef TAIL
#undef CODES
  __m512i acc[16] = { a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15 };
  for (gint i = 0; i < N; i++) {
    __m512i sum = acc[i];
    for (gint c = 1; c < C; c++)
      sum = _mm512_add_epi32 (sum, acc[c * N + i]);
    _mm512_storeu_si512 (t + 16 * i, sum);
  }
}

VNNI_TARGET static void
narrow_vnni (gint k4, const gint8 *a, const guint8 *b, const gint64 *off, gint n,
    const M2iKI8Store *st0, const M2iKI8Store *st1)
{
  gint32 ibias[16] = { 0 };
  memcpy (ibias, st0->ibias, MR * sizeof (gint32));
  if (st1)
    memcpy (ibias + MR, st1->ibias, MR * sizeof (gint32));
  __m512i ib = _mm512_loadu_si512 (ibias);
  gint32 t[16 * 16];                   /* [pixel][channel] */
  if (n <= 1)
    narrow_sums (k4, a, b, off, ib, 1, t);
  else if (n <= 2)
    narrow_sums (k4, a, b, off, ib, 2, t);
  else if (n <= 4)
    narrow_sums (k4, a, b, off, ib, 4, t);
  else if (n <= 8)
    narrow_sums (k4, a, b, off, ib, 8, t);
  else
    narrow_sums (k4, a, b, off, ib, 16, t);
  /* each channel's pixels, as the tile's accumulators: the epilogue's
   * runs are in the first 16 columns only */
  const __m512i idx = _mm512_mullo_epi32 (_mm512_set_epi32 (15, 14, 13, 12, 11, 10, 9, 8, 7, 6,
          5, 4, 3, 2, 1, 0), _mm512_set1_epi32 (16));
  const __mmask16 px = (__mmask16) ((1u << MIN (n, 16)) - 1);
  __m512i acc[MR * 3];
  for (gint half = 0; half < 2; half++) {
    const M2iKI8Store *st = half ? st1 : st0;
    if (!st)
      break;
    for (gint r = 0; r < MR; r++) {
      acc[r * 3] = _mm512_mask_i32gather_epi32 (_mm512_setzero_si512 (), px, idx,
          t + half * MR + r, 4);
      acc[r * 3 + 1] = acc[r * 3 + 2] = _mm512_setzero_si512 ();
    }
    vnni_epilogue (acc, st);
  }
}

M2iKI8Narrow
ir_k_i8_narrow_vnni (M2iCpuFlags level)
{
  return (level & M2I_CPU_AVX512F) && (m2i_cpu_flags () & M2I_CPU_AVX512VNNI) ? narrow_vnni : NULL;
}

M2iKI8Micro
ir_k_i8_micro_vnni (M2iCpuFlags level)
{
  return (level & M2I_CPU_AVX512F) && (m2i_cpu_flags () & M2I_CPU_AVX512VNNI) ? micro_vnni : NULL;
}

/* ---- copying into channel quads (AVX-512) ------------------------------------- */

/* 16 codes row[p0 + lane·sw] (z outside [0, w) or the lanes of @m), as
 * int32 lanes: one load at stride 1, and at stride 2 the low bytes of 16
 * 16-bit loads; a gather otherwise. @fast: every lane of @m inside, and
 * 16·sw bytes readable from p0. */
AVX512_TARGET static ALWAYS_INLINE __m512i
load_codes16 (const guint8 *row, gint64 p0, gint64 sw, gint64 w, __mmask16 m, __m512i z,
    gboolean fast)
{
  if (fast && sw == 1)
    return _mm512_cvtepu8_epi32 (_mm_loadu_si128 ((const __m128i *) (row + p0)));
  if (fast && sw == 2)
    return _mm512_and_si512 (_mm512_cvtepu16_epi32 (_mm256_loadu_si256 ((const __m256i *)
                (row + p0))), _mm512_set1_epi32 (0xff));
  const __m512i lane = _mm512_setr_epi32 (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  __m512i pos = _mm512_add_epi32 (_mm512_set1_epi32 ((gint32) p0),
      _mm512_mullo_epi32 (lane, _mm512_set1_epi32 ((gint32) sw)));
  __mmask16 ok = m & _mm512_cmpge_epi32_mask (pos, _mm512_setzero_si512 ()) &
      _mm512_cmplt_epi32_mask (pos, _mm512_set1_epi32 ((gint32) w));
  if (sw == 1)
    return _mm512_mask_mov_epi32 (z, ok, _mm512_cvtepu8_epi32 (_mm_maskz_loadu_epi8 (ok,
                row + p0)));
  if (sw == 2) {
    /* bytes p0 .. p0 + 31 (those inside), the even ones */
    __mmask32 bytes = 0;
    for (gint l = 0; l < 16; l++)
      if (ok >> l & 1)
        bytes |= (__mmask32) 1 << (2 * l);
    __m256i raw = _mm256_maskz_loadu_epi8 (bytes, row + p0);
    __m512i even = _mm512_and_si512 (_mm512_cvtepu16_epi32 (raw), _mm512_set1_epi32 (0xff));
    return _mm512_mask_mov_epi32 (z, ok, even);
  }
  __m512i dwords = _mm512_mask_i32gather_epi32 (z, ok, pos, row, 1);
  return _mm512_mask_mov_epi32 (z, ok, _mm512_and_si512 (dwords, _mm512_set1_epi32 (0xff)));
}

/* 16 pixels per step: each channel's 16 levels (quantized from f32 read by
 * ir_k_load_row16, or codes as they are), the four channels packed into
 * the pixels' dwords (c0 | c1 << 8 | c2 << 16 | c3 << 24). */
AVX512_TARGET static ALWAYS_INLINE void
copy_row_any (const M2iKI8Quant *q, gconstpointer const *rows, const guint8 *fill, gint64 x0,
    gint64 sw, gint64 w, gint64 n, guint8 *d, gboolean codes)
{
  const __m512i z = _mm512_set1_epi32 (q->z);
  const __m512 inv = _mm512_set1_ps (q->lm1 / q->d);
  gint64 span = sw == 2 ? 32 : 16;
  for (gint64 x = 0; x < n; x += 16) {
    gint64 k = MIN (16, n - x);
    __mmask16 mask = (__mmask16) ((1u << k) - 1);
    gint64 p0 = x0 + x * sw;
    gboolean fast = p0 >= 0 && p0 + (k - 1) * sw < w && p0 + span <= w;
    __m512i px = _mm512_setzero_si512 ();
    for (gint j = 0; j < 4; j++) {
      __m512i code;
      if (!rows[j]) {
        code = _mm512_set1_epi32 (fill[j]);
      } else if (codes) {
        code = load_codes16 (rows[j], p0, sw, w, mask, z, fast);
      } else {
        __mmask16 ok;
        __m512 v = ir_k_load_row16 (rows[j], p0, sw, w, fast, mask, &ok);
        code = _mm512_mask_mov_epi32 (z, ok, quant16 (q, v, inv));
      }
      px = _mm512_or_si512 (px, _mm512_slli_epi32 (code, 8 * j));
    }
    _mm512_mask_storeu_epi32 (d + x * 4, mask, px);
  }
}

AVX512_TARGET static void
copy_row_avx512 (const M2iKI8Quant *q, gconstpointer const *rows, const guint8 *fill,
    gint64 x0, gint64 sw, gint64 w, gint64 n, guint8 *d)
{
  copy_row_any (q, rows, fill, x0, sw, w, n, d, FALSE);
}

AVX512_TARGET static void
copy_row_codes_avx512 (const M2iKI8Quant *q, gconstpointer const *rows, const guint8 *fill,
    gint64 x0, gint64 sw, gint64 w, gint64 n, guint8 *d)
{
  copy_row_any (q, rows, fill, x0, sw, w, n, d, TRUE);
}

M2iKI8CopyRow
ir_k_i8_copy_row_avx512 (M2iCpuFlags level, gboolean codes)
{
  if (!(level & m2i_cpu_flags () & M2I_CPU_AVX512F))
    return NULL;
  return codes ? copy_row_codes_avx512 : copy_row_avx512;
}

AVX512_TARGET static void
quant_row_avx512 (const M2iKI8Quant *q, const float *x, gint64 n, guint8 *d)
{
  const __m512 inv = _mm512_set1_ps (q->lm1 / q->d);
  for (gint64 i = 0; i < n; i += 16) {
    __mmask16 m = (__mmask16) ((1u << MIN (16, n - i)) - 1);
    __m512i code = quant16 (q, _mm512_maskz_loadu_ps (m, x + i), inv);
    _mm_mask_storeu_epi8 (d + i, m, _mm512_cvtepi32_epi8 (code));
  }
}

M2iKI8QuantRow
ir_k_i8_quant_row_avx512 (M2iCpuFlags level)
{
  return (level & m2i_cpu_flags () & M2I_CPU_AVX512F) ? quant_row_avx512 : NULL;
}

/* ---- depthwise rows (VNNI) -------------------------------------------------- */

/* Dword p of 16 output pixels is the 4 codes of taps (4g .. 4g+3) of
 * pixel p, bytes p·sw .. p·sw + 3 of a 64-byte window: vpermd gives each
 * 128-bit lane the dwords its 4 pixels read (lane L: from dword L, or 2L at
 * stride 2), vpshufb picks each pixel's 4 bytes within the lane. */
#define DW_ROW_VNNI(NAME, SW, PERMD, SHUFB) \
VNNI_TARGET static void \
NAME (const M2iKI8DwRow *r) \
{ \
  const __m512i perm = _mm512_setr_epi32 PERMD; \
  const __m512i shuf = _mm512_broadcast_i32x4 (_mm_setr_epi8 SHUFB); \
  const __m512 mul = _mm512_set1_ps (r->mul), add = _mm512_set1_ps (r->add); \
  for (gint64 x0 = 0; x0 < r->n; x0 += 16) { \
    __m512i acc = _mm512_set1_epi32 (r->ibias); \
    for (gint ky = 0; ky < r->kh; ky++) { \
      const guint8 *p = r->rows[ky] + x0 * SW; \
      const gint32 *w = (const gint32 *) (r->w + ky * r->n_g * 4); \
      for (gint g = 0; g < r->n_g; g++) { \
        __m512i win = _mm512_loadu_si512 (p + 4 * g); \
        __m512i quads = _mm512_shuffle_epi8 (_mm512_permutexvar_epi32 (perm, win), shuf); \
        __m512i wq = _mm512_set1_epi32 (w[g]); \
        DPBUSD (acc, quads, wq); \
      } \
    } \
    __mmask16 m = (__mmask16) ((1u << MIN (16, r->n - x0)) - 1); \
    if (r->direct && !r->fix) { \
      _mm_mask_storeu_epi8 ((guint8 *) r->out + x0, m, \
          direct16 (acc, r->dmul, r->dadd, r->mul, r->add, r->o, r->c)); \
      continue; \
    } \
    __m512 v = _mm512_add_ps (_mm512_mul_ps (_mm512_cvtepi32_ps (acc), mul), add); \
    if (r->fix) \
      v = _mm512_add_ps (v, _mm512_maskz_loadu_ps (m, r->fix + x0)); \
    finish16 (r->o, r->c, v, r->out, x0, m); \
  } \
}

DW_ROW_VNNI (dw_row_vnni_s1, 1, (0, 1, 2, 3, 1, 2, 3, 4, 2, 3, 4, 5, 3, 4, 5, 6),
    (0, 1, 2, 3, 1, 2, 3, 4, 2, 3, 4, 5, 3, 4, 5, 6))
DW_ROW_VNNI (dw_row_vnni_s2, 2, (0, 1, 2, 3, 2, 3, 4, 5, 4, 5, 6, 7, 6, 7, 8, 9),
    (0, 1, 2, 3, 2, 3, 4, 5, 4, 5, 6, 7, 6, 7, 8, 9))

M2iKI8DwRowFunc
ir_k_i8_dw_row_vnni (M2iCpuFlags level, gint64 sw, gint64 dw)
{
  if (!(level & M2I_CPU_AVX512F) || !(m2i_cpu_flags () & M2I_CPU_AVX512VNNI) || dw != 1)
    return NULL;
  return sw == 1 ? dw_row_vnni_s1 : sw == 2 ? dw_row_vnni_s2 : NULL;
}

#else

M2iKI8Micro
ir_k_i8_micro_vnni (M2iCpuFlags level)
{
  return NULL;
}

M2iKI8Narrow
ir_k_i8_narrow_vnni (M2iCpuFlags level)
{
  return NULL;
}

M2iKI8CopyRow
ir_k_i8_copy_row_avx512 (M2iCpuFlags level, gboolean codes)
{
  return NULL;
}

M2iKI8QuantRow
ir_k_i8_quant_row_avx512 (M2iCpuFlags level)
{
  return NULL;
}

M2iKI8DwRowFunc
ir_k_i8_dw_row_vnni (M2iCpuFlags level, gint64 sw, gint64 dw)
{
  return NULL;
}

#endif
