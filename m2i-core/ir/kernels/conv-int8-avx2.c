/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The AVX2 kernels of the integer convolution (conv-int8.h), for CPUs
 * without AVX-512 VNNI (or where the int8 family's level is AVX2).
 *
 * GEMM tile, 8 output channels × 48 output pixels: vpmaddubsw would
 * multiply the u8 codes by the i8 weights, but it adds pairs of products
 * into int16 with saturation, and 255·127 + 255·127 = 64770 does not fit;
 * so the codes are widened to int16 (vpmovzxbw) and the weights kept as
 * int16, and vpmaddwd adds pairs of int16 products into int32 exactly (at
 * most 2·255·128). Each pixel's 4 products then land in two adjacent
 * lanes, added together (vphaddd) at the end. Blocks of 4 channels × 8
 * pixels (8 accumulators, no spill), 12 of them per tile.
 *
 * Depthwise rows: vpmaddwd on pairs of taps — the int16 codes of taps
 * (kx, kx + 1) of 8 output pixels side by side (at stride 2 they are the
 * row's bytes as they are; at stride 1 a byte shuffle doubles them) times
 * the pair's two weights: 8 pixels × 2 taps per instruction.
 *
 * Quantizing and copying into channel quads: 8 values at a time.
 *
 * Every epilogue is the scalar one of conv-int8.c, lane for lane, as the
 * AVX-512 one is (conv-int8-x86.c): float (acc) · mul + add (two
 * roundings, no FMA), + the padding term, the activation (Swish: the Swish
 * kernel's operations), then the f32 value or its level.
 */
#include "conv-int8.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#include <string.h>

#define MR M2I_K_I8_MR
#define NR M2I_K_I8_NR

#define AVX2_TARGET __attribute__ ((target ("avx2,fma")))
#define ALWAYS_INLINE inline __attribute__ ((always_inline))
#define ROUND_NEAREST (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)

static gboolean
avx2_at (M2iCpuFlags level)
{
  M2iCpuFlags f = m2i_cpu_flags ();
  return (level & (M2I_CPU_AVX512F | M2I_CPU_AVX2)) && (f & M2I_CPU_AVX2) && (f & M2I_CPU_FMA);
}

/* ---- quantizing and the epilogue, 8 lanes --------------------------------- */

AVX2_TARGET static ALWAYS_INLINE __m256
abs8 (__m256 v)
{
  return _mm256_andnot_ps (_mm256_set1_ps (-0.0f), v);
}

/* The levels of 8 values, exactly as the C loop computes them (see
 * quant16, conv-int8-x86.c): one FMA with 1/d folded, the division again
 * for the lanes within 1/1000 of a half, then k >= 0 ? k : 0 (NaN to 0)
 * and the range's ends. */
AVX2_TARGET static ALWAYS_INLINE __m256i
quant8 (const M2iKI8Quant *q, __m256 v, __m256 inv)
{
  const __m256 zero = _mm256_setzero_ps (), lm1 = _mm256_set1_ps (q->lm1);
  __m256 t = _mm256_fmadd_ps (v, inv, _mm256_set1_ps (-q->lo * (q->lm1 / q->d)));
  __m256 k = _mm256_round_ps (t, ROUND_NEAREST);
  __m256 tie = _mm256_cmp_ps (abs8 (_mm256_sub_ps (t, k)), _mm256_set1_ps (0.499f), _CMP_GT_OQ);
  if (G_UNLIKELY (_mm256_movemask_ps (tie))) {
    __m256 u = _mm256_sub_ps (v, _mm256_set1_ps (q->lo));
    __m256 e = _mm256_round_ps (_mm256_mul_ps (_mm256_div_ps (u, _mm256_set1_ps (q->d)), lm1),
        ROUND_NEAREST);
    k = _mm256_blendv_ps (k, e, tie);
  }
  if (q->d > 0.0f) {
    /* v <= lo gives k <= 0 and v > hi k >= L-1: the ends are the clamp
     * (max (NaN, 0) is 0: vmaxps returns its second operand) */
    k = _mm256_min_ps (_mm256_max_ps (k, zero), lm1);
  } else {
    k = _mm256_and_ps (k, _mm256_cmp_ps (k, zero, _CMP_GE_OQ));
    k = _mm256_blendv_ps (k, lm1, _mm256_cmp_ps (v, _mm256_set1_ps (q->mx), _CMP_GT_OQ));
    k = _mm256_blendv_ps (k, zero, _mm256_cmp_ps (v, _mm256_set1_ps (q->mn), _CMP_LE_OQ));
  }
  return _mm256_cvttps_epi32 (k);
}

/* Swish of 8 values: ir_vm_swish (vmath.h) operation for operation (no
 * FMA), as swish16 of conv-int8-x86.c. */
AVX2_TARGET static ALWAYS_INLINE __m256
swish8 (__m256 x, float beta)
{
  const __m256 zero = _mm256_setzero_ps ();
  __m256 bx = _mm256_mul_ps (_mm256_set1_ps (beta), x);
  __m256 neg = _mm256_cmp_ps (bx, zero, _CMP_LT_OQ);
  __m256 a = _mm256_blendv_ps (_mm256_sub_ps (zero, bx), bx, neg);      /* bx < 0 ? bx : -bx */
  /* ir_vm_exp (a) */
  __m256 xc = _mm256_blendv_ps (a, _mm256_set1_ps (-104.0f),
      _mm256_cmp_ps (a, _mm256_set1_ps (-104.0f), _CMP_LT_OQ));
  xc = _mm256_blendv_ps (xc, _mm256_set1_ps (89.0f), _mm256_cmp_ps (xc, _mm256_set1_ps (89.0f),
          _CMP_GT_OQ));
  __m256 m = _mm256_add_ps (_mm256_mul_ps (xc, _mm256_set1_ps (1.44269504088896341f)),
      _mm256_set1_ps (12582912.0f));
  __m256 nf = _mm256_sub_ps (m, _mm256_set1_ps (12582912.0f));
  __m256i n = _mm256_sub_epi32 (_mm256_castps_si256 (m), _mm256_set1_epi32 (0x4B400000));
  __m256 r = _mm256_sub_ps (_mm256_sub_ps (xc, _mm256_mul_ps (nf, _mm256_set1_ps (0.693359375f))),
      _mm256_mul_ps (nf, _mm256_set1_ps (-2.12194440e-4f)));
  __m256 q = _mm256_set1_ps (1.381454058e-03f);
  q = _mm256_add_ps (_mm256_mul_ps (q, r), _mm256_set1_ps (8.368745446e-03f));
  q = _mm256_add_ps (_mm256_mul_ps (q, r), _mm256_set1_ps (4.166838899e-02f));
  q = _mm256_add_ps (_mm256_mul_ps (q, r), _mm256_set1_ps (1.666652113e-01f));
  q = _mm256_add_ps (_mm256_mul_ps (q, r), _mm256_set1_ps (4.999999404e-01f));
  __m256 p = _mm256_add_ps (_mm256_add_ps (_mm256_mul_ps (q, _mm256_mul_ps (r, r)), r),
      _mm256_set1_ps (1.0f));
  __m256i n1 = _mm256_srai_epi32 (n, 1), n2 = _mm256_sub_epi32 (n, n1);
  __m256 s1 = _mm256_castsi256_ps (_mm256_slli_epi32 (_mm256_add_epi32 (n1,
              _mm256_set1_epi32 (127)), 23));
  __m256 s2 = _mm256_castsi256_ps (_mm256_slli_epi32 (_mm256_add_epi32 (n2,
              _mm256_set1_epi32 (127)), 23));
  __m256 e = _mm256_mul_ps (_mm256_mul_ps (p, s1), s2);
  __m256 num = _mm256_blendv_ps (x, _mm256_mul_ps (x, e), neg);
  return _mm256_div_ps (num, _mm256_add_ps (_mm256_set1_ps (1.0f), e));
}

/* The activation of 8 values of channel @c. */
AVX2_TARGET static ALWAYS_INLINE __m256
activate8 (const M2iKI8Out *o, gint64 c, __m256 v)
{
  switch (o->act) {
    case M2I_K_I8_ACT_RELU:
      return _mm256_max_ps (v, _mm256_setzero_ps ());   /* max (NaN, 0) = 0, as y > 0 ? y : 0 */
    case M2I_K_I8_ACT_PRELU:
      return _mm256_blendv_ps (v, _mm256_mul_ps (v, _mm256_set1_ps (o->slope[c])),
          _mm256_cmp_ps (v, _mm256_setzero_ps (), _CMP_LT_OQ));
    case M2I_K_I8_ACT_SWISH:
      return swish8 (v, o->beta);
    default:
      return v;
  }
}

/* A FakeQuantize's output of 8 values of channel @c (grid epilogue): the
 * level as quant8 finds it, then k / (L-1) · (hi - lo) + lo with a true
 * division, and the range's ends. */
AVX2_TARGET static ALWAYS_INLINE __m256
grid8 (const M2iKI8Out *o, gint64 c, __m256 v)
{
  const M2iKI8Quant *q = &o->oq[c];
  __m256 lo = _mm256_set1_ps (o->glo[c]), hi = _mm256_set1_ps (o->ghi[c]);
  __m256 k = _mm256_cvtepi32_ps (quant8 (q, v, _mm256_set1_ps (q->lm1 / q->d)));
  __m256 r = _mm256_add_ps (_mm256_mul_ps (_mm256_div_ps (k, _mm256_set1_ps (q->lm1)),
          _mm256_sub_ps (hi, lo)), lo);
  r = _mm256_blendv_ps (r, hi, _mm256_cmp_ps (v, _mm256_set1_ps (q->mx), _CMP_GT_OQ));
  return _mm256_blendv_ps (r, lo, _mm256_cmp_ps (v, _mm256_set1_ps (q->mn), _CMP_LE_OQ));
}

/* Codes straight from the sum (ir_k_i8_direct): one FMA, the rounding,
 * the clamp; lanes within 1/1000 of a half take the full epilogue (mul,
 * add, the activation, quant8), so the codes are exactly its. */
AVX2_TARGET static ALWAYS_INLINE __m256i
direct8 (__m256 f, float dmul, float dadd, float mul, float add, const M2iKI8Out *o, gint64 c)
{
  const M2iKI8Quant *oq = &o->oq[c];
  __m256 t = _mm256_fmadd_ps (f, _mm256_set1_ps (dmul), _mm256_set1_ps (dadd));
  __m256 k = _mm256_round_ps (t, ROUND_NEAREST);
  __m256 tie = _mm256_cmp_ps (abs8 (_mm256_sub_ps (t, k)), _mm256_set1_ps (0.499f), _CMP_GT_OQ);
  if (G_UNLIKELY (_mm256_movemask_ps (tie))) {
    __m256 v = _mm256_add_ps (_mm256_mul_ps (f, _mm256_set1_ps (mul)), _mm256_set1_ps (add));
    v = activate8 (o, c, v);
    return quant8 (oq, v, _mm256_set1_ps (oq->lm1 / oq->d));
  }
  k = _mm256_min_ps (_mm256_max_ps (k, _mm256_setzero_ps ()), _mm256_set1_ps (oq->lm1));
  return _mm256_cvttps_epi32 (k);
}

/* The 16 levels (int32 lanes, 0 .. 255) of @a, @b as bytes in order. */
AVX2_TARGET static ALWAYS_INLINE __m128i
bytes16 (__m256i a, __m256i b)
{
  __m256i w = _mm256_permute4x64_epi64 (_mm256_packus_epi32 (a, b), _MM_SHUFFLE (3, 1, 2, 0));
  return _mm_packus_epi16 (_mm256_castsi256_si128 (w), _mm256_extracti128_si256 (w, 1));
}

/* The 8 levels of @a as the low 8 bytes. */
AVX2_TARGET static ALWAYS_INLINE __m128i
bytes8 (__m256i a)
{
  __m128i w = _mm_packus_epi32 (_mm256_castsi256_si128 (a), _mm256_extracti128_si256 (a, 1));
  return _mm_packus_epi16 (w, w);
}

/* Lanes [l0, l0 + len) of a mask, as the int32 lane mask of lanes @base ..
 * @base + 7. */
AVX2_TARGET static ALWAYS_INLINE __m256i
lane_mask8 (guint m, gint base)
{
  const __m256i bit = _mm256_setr_epi32 (1, 2, 4, 8, 16, 32, 64, 128);
  __m256i mm = _mm256_set1_epi32 ((gint32) (m >> base) & 0xff);
  return _mm256_cmpeq_epi32 (_mm256_and_si256 (mm, bit), bit);
}

/* Stores lanes @m (a contiguous run of bits) of 16 values @v0, @v1 at
 * element @at of @row. */
AVX2_TARGET static ALWAYS_INLINE void
store_f32_16 (float *row, gint64 at, guint m, __m256 v0, __m256 v1)
{
  if (m == 0xffff) {
    _mm256_storeu_ps (row + at, v0);
    _mm256_storeu_ps (row + at + 8, v1);
    return;
  }
  if (m & 0xff)
    _mm256_maskstore_ps (row + at, lane_mask8 (m, 0), v0);
  if (m & 0xff00)
    _mm256_maskstore_ps (row + at + 8, lane_mask8 (m, 8), v1);
}

AVX2_TARGET static ALWAYS_INLINE void
store_codes16 (guint8 *row, gint64 at, guint m, __m128i k)
{
  if (m == 0xffff) {
    _mm_storeu_si128 ((__m128i *) (row + at), k);
    return;
  }
  guint8 b[16];
  _mm_storeu_si128 ((__m128i *) b, k);
  gint l0 = __builtin_ctz (m), len = __builtin_popcount (m);
  memcpy (row + at + l0, b + l0, len);
}

/* ---- GEMM tile -------------------------------------------------------------- */

/* 8 int32 lanes [p0 p0 p1 p1 | p2 p2 p3 p3] and [p4 p4 p5 p5 | p6 p6 p7 p7]
 * (each pixel's two partial sums) → the 8 pixels' sums in order. */
AVX2_TARGET static ALWAYS_INLINE __m256i
pair_sums (__m256i lo, __m256i hi)
{
  __m256i h = _mm256_hadd_epi32 (lo, hi);     /* p0 p1 p4 p5 | p2 p3 p6 p7 */
  return _mm256_permute4x64_epi64 (h, _MM_SHUFFLE (3, 1, 2, 0));
}

/* acc += vpmaddwd (b, w), in place. As inline assembly: GCC 12 keeps the
 * product in a temporary and copies the sum back, and spills the loop's
 * pointers, about doubling the loop. */
#define MADD(acc_, codes_, w_, t_) \
  __asm__ ("vpmaddwd %[w], %[b], %[t]\n\tvpaddd %[t], %[a], %[a]" \
      : [a] "+x" (acc_), [t] "=&x" (t_) : [b] "x" (codes_), [w] "x" (w_))

/* Rows [r0, r0 + 4) × pixels [x0, x0 + 8) of the tile: their sums into
 * sums[r][x0 ..]. 8 accumulators, 2 vectors of codes, a weight and a
 * product: no spill. */
AVX2_TARGET static void
block_4x8 (gint k4, const gint16 *a16, const guint8 *b, const gint64 *off, gint r0, gint x0,
    gint32 sums[MR][NR])
{
  __m256i c00 = _mm256_setzero_si256 (), c01 = c00, c10 = c00, c11 = c00;
  __m256i c20 = c00, c21 = c00, c30 = c00, c31 = c00;
  const gint64 *wp = (const gint64 *) (a16 + r0 * 4);
  b += x0 * 4;
  for (gint p = 0; p < k4; p++, wp += MR) {
    const guint8 *bp = b + off[p];
    __m256i b0 = _mm256_cvtepu8_epi16 (_mm_loadu_si128 ((const __m128i *) bp));
    __m256i b1 = _mm256_cvtepu8_epi16 (_mm_loadu_si128 ((const __m128i *) (bp + 16)));
    __m256i w, t;
    w = _mm256_set1_epi64x (wp[0]);
    MADD (c00, b0, w, t);
    MADD (c01, b1, w, t);
    w = _mm256_set1_epi64x (wp[1]);
    MADD (c10, b0, w, t);
    MADD (c11, b1, w, t);
    w = _mm256_set1_epi64x (wp[2]);
    MADD (c20, b0, w, t);
    MADD (c21, b1, w, t);
    w = _mm256_set1_epi64x (wp[3]);
    MADD (c30, b0, w, t);
    MADD (c31, b1, w, t);
  }
  _mm256_storeu_si256 ((__m256i *) &sums[r0][x0], pair_sums (c00, c01));
  _mm256_storeu_si256 ((__m256i *) &sums[r0 + 1][x0], pair_sums (c10, c11));
  _mm256_storeu_si256 ((__m256i *) &sums[r0 + 2][x0], pair_sums (c20, c21));
  _mm256_storeu_si256 ((__m256i *) &sums[r0 + 3][x0], pair_sums (c30, c31));
}

/* The tile's epilogue (the VNNI one's, 8 lanes at a time): the runs and
 * each row's factors are read into locals first, as stores through st->out
 * could alias *st. */
AVX2_TARGET static __attribute__ ((noinline)) void
tile_epilogue (gint32 sums[MR][NR], const M2iKI8Store *st)
{
  const gint rows = st->rows, n_runs = st->run_start[3];
  const gint64 c0 = st->c0;
  const M2iKI8Out *o = st->o;
  gint rs[4];
  gint32 at[NR];
  guint mk[NR];
  for (gint gi = 0; gi < 4; gi++)
    rs[gi] = st->run_start[gi];
  for (gint q = 0; q < n_runs; q++) {
    at[q] = st->run_at[q];
    mk[q] = st->run_mask[q];
  }
  const gboolean direct = st->dmul && !st->fix;
  const gsize es = o->codes ? 1 : sizeof (float);
  for (gint r = 0; r < rows; r++) {
    guint8 *row = (guint8 *) st->out + r * st->ldo * es;
    const float mul = st->mul[r], add = st->add[r];
    const __m256i ib = _mm256_set1_epi32 (st->ibias[r]);
    const M2iKI8Quant *oq = o->codes || o->grid ? &o->oq[c0 + r] : NULL;
    __m256 f[NR / 8];
    for (gint x = 0; x < NR / 8; x++)
      f[x] = _mm256_cvtepi32_ps (_mm256_add_epi32 (ib,
              _mm256_loadu_si256 ((const __m256i *) &sums[r][8 * x])));
    if (direct) {
      const float dmul = st->dmul[r], dadd = st->dadd[r];
      for (gint gi = 0; gi < 3; gi++) {
        if (rs[gi] == rs[gi + 1])
          continue;
        __m128i k = bytes16 (direct8 (f[2 * gi], dmul, dadd, mul, add, o, c0 + r),
            direct8 (f[2 * gi + 1], dmul, dadd, mul, add, o, c0 + r));
        for (gint q = rs[gi]; q < rs[gi + 1]; q++)
          store_codes16 (row, at[q], mk[q], k);
      }
      continue;
    }
    const __m256 vm = _mm256_set1_ps (mul), va = _mm256_set1_ps (add);
    for (gint gi = 0; gi < 3; gi++) {
      if (rs[gi] == rs[gi + 1])
        continue;
      __m256 v[2];
      for (gint h = 0; h < 2; h++) {
        v[h] = _mm256_add_ps (_mm256_mul_ps (f[2 * gi + h], vm), va);
        if (st->fix)
          v[h] = _mm256_add_ps (v[h], _mm256_loadu_ps (st->fix + r * NR + gi * 16 + 8 * h));
        v[h] = activate8 (o, c0 + r, v[h]);
      }
      if (o->codes) {
        const __m256 inv = _mm256_set1_ps (oq->lm1 / oq->d);
        __m128i k = bytes16 (quant8 (oq, v[0], inv), quant8 (oq, v[1], inv));
        for (gint q = rs[gi]; q < rs[gi + 1]; q++)
          store_codes16 (row, at[q], mk[q], k);
        continue;
      }
      if (o->grid) {
        v[0] = grid8 (o, c0 + r, v[0]);
        v[1] = grid8 (o, c0 + r, v[1]);
      }
      for (gint q = rs[gi]; q < rs[gi + 1]; q++)
        store_f32_16 ((float *) row, at[q], mk[q], v[0], v[1]);
    }
  }
}

/* @a: the weights as int16, [k4][MR][4]. */
AVX2_TARGET static void
micro_avx2 (gint k4, const void *a, const guint8 *b, const gint64 *off, const M2iKI8Store *st)
{
  gint32 sums[MR][NR] __attribute__ ((aligned (32)));
  for (gint r0 = 0; r0 < MR; r0 += 4)
    for (gint x0 = 0; x0 < NR; x0 += 8)
      block_4x8 (k4, a, b, off, r0, x0, sums);
  tile_epilogue (sums, st);
}

M2iKI8Micro
ir_k_i8_micro_avx2 (M2iCpuFlags level)
{
  return avx2_at (level) ? micro_avx2 : NULL;
}

/* ---- quantizing rows, copying into channel quads ------------------------------- */

AVX2_TARGET static void
quant_row_avx2 (const M2iKI8Quant *q, const float *x, gint64 n, guint8 *d)
{
  const __m256 inv = _mm256_set1_ps (q->lm1 / q->d);
  gint64 i = 0;
  for (; i + 16 <= n; i += 16)
    _mm_storeu_si128 ((__m128i *) (d + i), bytes16 (quant8 (q, _mm256_loadu_ps (x + i), inv),
            quant8 (q, _mm256_loadu_ps (x + i + 8), inv)));
  for (; i < n; i++)
    d[i] = ir_k_i8_quant (q, x[i]);
}

M2iKI8QuantRow
ir_k_i8_quant_row_avx2 (M2iCpuFlags level)
{
  return avx2_at (level) ? quant_row_avx2 : NULL;
}

/* 8 pixels per step where every lane reads inside the row at stride 1
 * or 2: each channel's 8 levels (quantized, or codes as they are), the
 * four channels packed into the pixels' dwords (c0 | c1 << 8 | c2 << 16
 * | c3 << 24); the C loop for the row's ends and other strides. */
AVX2_TARGET static ALWAYS_INLINE void
copy_row_any (const M2iKI8Quant *q, gconstpointer const *rows, const guint8 *fill, gint64 x0,
    gint64 sw, gint64 w, gint64 n, guint8 *d, gboolean codes)
{
  if (sw > 2) {
    (codes ? ir_k_i8_copy_row_codes_c : ir_k_i8_copy_row_c) (q, rows, fill, x0, sw, w, n, d);
    return;
  }
  const __m256 inv = _mm256_set1_ps (q->lm1 / q->d);
  gint64 x = 0;
  while (x < n) {
    gint64 p0 = x0 + x * sw;
    /* reads 8·sw elements from p0 */
    if (x + 8 > n || p0 < 0 || p0 + 8 * sw > w) {
      /* one pixel the C way */
      (codes ? ir_k_i8_copy_row_codes_c : ir_k_i8_copy_row_c) (q, rows, fill, p0, sw, w, 1,
          d + x * 4);
      x++;
      continue;
    }
    __m256i px = _mm256_setzero_si256 ();
    for (gint j = 0; j < 4; j++) {
      __m256i code;
      if (!rows[j]) {
        code = _mm256_set1_epi32 (fill[j]);
      } else if (codes) {
        const guint8 *row = (const guint8 *) rows[j] + p0;
        if (sw == 1) {
          code = _mm256_cvtepu8_epi32 (_mm_loadl_epi64 ((const __m128i *) row));
        } else {
          __m128i raw = _mm_loadu_si128 ((const __m128i *) row);
          code = _mm256_cvtepu8_epi32 (_mm_shuffle_epi8 (raw, _mm_setr_epi8 (0, 2, 4, 6, 8,
                      10, 12, 14, -1, -1, -1, -1, -1, -1, -1, -1)));
        }
      } else {
        const float *row = (const float *) rows[j] + p0;
        __m256 v;
        if (sw == 1) {
          v = _mm256_loadu_ps (row);
        } else {
          /* elements 0 2 4 6 | 8 10 12 14 of two loads */
          __m256 a = _mm256_loadu_ps (row), b = _mm256_loadu_ps (row + 8);
          /* a0 a2 b0 b2 | a4 a6 b4 b6, then the middle quads swapped */
          __m256 s = _mm256_shuffle_ps (a, b, _MM_SHUFFLE (2, 0, 2, 0));
          v = _mm256_castpd_ps (_mm256_permute4x64_pd (_mm256_castps_pd (s),
                  _MM_SHUFFLE (3, 1, 2, 0)));
        }
        code = quant8 (q, v, inv);
      }
      px = _mm256_or_si256 (px, _mm256_slli_epi32 (code, 8 * j));
    }
    _mm256_storeu_si256 ((__m256i *) (d + x * 4), px);
    x += 8;
  }
}

AVX2_TARGET static void
copy_row_avx2 (const M2iKI8Quant *q, gconstpointer const *rows, const guint8 *fill,
    gint64 x0, gint64 sw, gint64 w, gint64 n, guint8 *d)
{
  copy_row_any (q, rows, fill, x0, sw, w, n, d, FALSE);
}

AVX2_TARGET static void
copy_row_codes_avx2 (const M2iKI8Quant *q, gconstpointer const *rows, const guint8 *fill,
    gint64 x0, gint64 sw, gint64 w, gint64 n, guint8 *d)
{
  copy_row_any (q, rows, fill, x0, sw, w, n, d, TRUE);
}

M2iKI8CopyRow
ir_k_i8_copy_row_avx2 (M2iCpuFlags level, gboolean codes)
{
  if (!avx2_at (level))
    return NULL;
  return codes ? copy_row_codes_avx2 : copy_row_avx2;
}

/* ---- depthwise rows ------------------------------------------------------------ */

/* The int16 codes of taps (k, k + 1) of output pixels x .. x + 7, pixel by
 * pixel (16 lanes), from @p = the row at x·sw + k. */
AVX2_TARGET static ALWAYS_INLINE __m256i
tap_pairs (const guint8 *p, gint64 sw)
{
  __m128i raw = _mm_loadu_si128 ((const __m128i *) p);
  if (sw == 1)
    raw = _mm_shuffle_epi8 (raw, _mm_setr_epi8 (0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8));
  return _mm256_cvtepu8_epi16 (raw);
}

/* The low @k bytes of @b to @out. */
AVX2_TARGET static ALWAYS_INLINE void
store_codes8 (guint8 *out, gint k, __m128i b)
{
  if (k == 8) {
    _mm_storel_epi64 ((__m128i *) out, b);
    return;
  }
  guint8 t[16];
  _mm_storeu_si128 ((__m128i *) t, b);
  memcpy (out, t, k);
}

/* The epilogue of 8 sums @acc into lanes [x0, x0 + k) of the row's output. */
AVX2_TARGET static ALWAYS_INLINE void
dw_finish8 (const M2iKI8DwRow *r, __m256i acc, gint64 x0, gint k)
{
  __m256 f = _mm256_cvtepi32_ps (acc);
  const M2iKI8Out *o = r->o;
  if (r->direct && !r->fix) {
    store_codes8 ((guint8 *) r->out + x0, k, bytes8 (direct8 (f, r->dmul, r->dadd, r->mul,
                r->add, o, r->c)));
    return;
  }
  __m256 v = _mm256_add_ps (_mm256_mul_ps (f, _mm256_set1_ps (r->mul)), _mm256_set1_ps (r->add));
  __m256i lanes = k == 8 ? _mm256_set1_epi32 (-1) : lane_mask8 ((1u << k) - 1, 0);
  if (r->fix)
    v = _mm256_add_ps (v, _mm256_maskload_ps (r->fix + x0, lanes));
  v = activate8 (o, r->c, v);
  if (o->codes) {
    const M2iKI8Quant *oq = &o->oq[r->c];
    store_codes8 ((guint8 *) r->out + x0, k, bytes8 (quant8 (oq, v,
                _mm256_set1_ps (oq->lm1 / oq->d))));
    return;
  }
  if (o->grid)
    v = grid8 (o, r->c, v);
  _mm256_maskstore_ps ((float *) r->out + x0, lanes, v);
}

/* @SW 1 or 2, dilation 1: 16 output pixels per step, each group of 4 taps
 * as two pairs. */
AVX2_TARGET static ALWAYS_INLINE void
dw_row_any (const M2iKI8DwRow *r, gint64 sw)
{
  /* the weight pairs, as int16 pairs in a dword: [ky][g][2] */
  gint32 wp[64 * 16 * 2];
  gint n_pairs = r->kh * r->n_g * 2;
  for (gint i = 0; i < n_pairs; i++)
    wp[i] = (gint32) (guint16) (gint16) r->w[2 * i] |
        (gint32) ((guint32) (guint16) (gint16) r->w[2 * i + 1] << 16);
  for (gint64 x0 = 0; x0 < r->n; x0 += 16) {
    __m256i a0 = _mm256_set1_epi32 (r->ibias), a1 = a0;
    for (gint ky = 0; ky < r->kh; ky++) {
      const guint8 *p = r->rows[ky] + x0 * sw;
      const gint32 *w = wp + ky * r->n_g * 2;
      for (gint i = 0; i < r->n_g * 2; i++) {
        __m256i wv = _mm256_set1_epi32 (w[i]);
        a0 = _mm256_add_epi32 (a0, _mm256_madd_epi16 (tap_pairs (p + 2 * i, sw), wv));
        a1 = _mm256_add_epi32 (a1, _mm256_madd_epi16 (tap_pairs (p + 8 * sw + 2 * i, sw), wv));
      }
    }
    gint64 k = r->n - x0;
    dw_finish8 (r, a0, x0, (gint) MIN (8, k));
    if (k > 8)
      dw_finish8 (r, a1, x0 + 8, (gint) MIN (8, k - 8));
  }
}

AVX2_TARGET static void
dw_row_avx2_s1 (const M2iKI8DwRow *r)
{
  dw_row_any (r, 1);
}

AVX2_TARGET static void
dw_row_avx2_s2 (const M2iKI8DwRow *r)
{
  dw_row_any (r, 2);
}

M2iKI8DwRowFunc
ir_k_i8_dw_row_avx2 (M2iCpuFlags level, gint64 sw, gint64 dw)
{
  if (!avx2_at (level) || dw != 1)
    return NULL;
  return sw == 1 ? dw_row_avx2_s1 : sw == 2 ? dw_row_avx2_s2 : NULL;
}

#else

M2iKI8Micro
ir_k_i8_micro_avx2 (M2iCpuFlags level)
{
  return NULL;
}

M2iKI8QuantRow
ir_k_i8_quant_row_avx2 (M2iCpuFlags level)
{
  return NULL;
}

M2iKI8CopyRow
ir_k_i8_copy_row_avx2 (M2iCpuFlags level, gboolean codes)
{
  return NULL;
}

M2iKI8DwRowFunc
ir_k_i8_dw_row_avx2 (M2iCpuFlags level, gint64 sw, gint64 dw)
{
  return NULL;
}

#endif
