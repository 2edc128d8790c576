/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* AVX2+FMA and AVX-512 micro-kernels of the GEMM (see gemm.h). Compiled
 * with per-function target attributes, so the library runs on any x86-64;
 * ir_gemm_arch() only hands them out when the CPU has the extensions.
 *
 * Each instruction set has a full-width kernel and narrower ones (one and
 * two vectors of columns) for a last column panel that is only partly
 * used: a 14×14 output plane is 196 columns, four full 48-wide panels and
 * 4 columns, which a 16-wide kernel covers at a third of the cost. */
#include "gemm.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* One row against NV vectors of B columns, four rows of B at a time into
 * four sets of accumulators (FMA latency is four cycles). B's elements are
 * BT, read as vectors of floats by LOADB (LOAD for f32, a load and a
 * widening for halves): the sums are the same whichever it is. */
#define GEMV_BODY(VEC, W, NV, BT, LOADB, ZERO, LOAD, STORE, ADD, SET1, FMA) \
  VEC r[4][NV]; \
  for (gint u = 0; u < 4; u++) \
    for (gint j = 0; j < NV; j++) \
      r[u][j] = ZERO (); \
  gint p = 0; \
  for (; p + 4 <= kc; p += 4) \
    for (gint u = 0; u < 4; u++) { \
      const BT *bp = b + off[p + u]; \
      VEC ap = SET1 (a[(p + u) * as]); \
      for (gint j = 0; j < NV; j++) \
        r[u][j] = FMA (ap, LOADB (bp + W * j), r[u][j]); \
    } \
  for (; p < kc; p++) { \
    const BT *bp = b + off[p]; \
    VEC ap = SET1 (a[p * as]); \
    for (gint j = 0; j < NV; j++) \
      r[0][j] = FMA (ap, LOADB (bp + W * j), r[0][j]); \
  } \
  for (gint j = 0; j < NV; j++) { \
    VEC v = ADD (ADD (r[0][j], r[1][j]), ADD (r[2][j], r[3][j])); \
    if (accumulate) \
      v = ADD (v, LOAD (c + W * j)); \
    STORE (c + W * j, v); \
  }

/* Finishing a vector of an AVX2 tile row through runs (M2iGemmTile):
 * lane by lane, as AVX2's masked stores are slow on some CPUs. Whole
 * vectors (M2I_GEMM_PLAIN) and AVX-512's masked runs are done in the
 * template (gemm-micro.h). */
__attribute__ ((target ("avx2,fma")))
static inline __attribute__ ((always_inline)) void
finish_avx2 (float *row, gint i, __m256 v, gint g, const M2iGemmTile *t)
{
  float lanes[8];
  _mm256_storeu_ps (lanes, v);
  ir_gemm_finish_lanes (lanes, 8, row, i, g, t);
}

/* The micro-kernels of both instruction sets (gemm-micro.h), the one-row
 * kernels and the arch tables. */
#define K_TARGET "avx2,fma"
#define K_VEC __m256
#define K_W 8
#define K_MR 4
#define K_ZERO _mm256_setzero_ps
#define K_LOAD _mm256_loadu_ps
#define K_SET1 _mm256_set1_ps
#define K_FMA _mm256_fmadd_ps
#define K_ADD _mm256_add_ps
#define K_MAX _mm256_max_ps
#define K_STORE _mm256_storeu_ps
#define K_MASKED 0
#define K_FINISH finish_avx2
#define K_NV 1
#define K_FN micro_avx2_1
#include "gemm-micro.h"
#undef K_NV
#undef K_FN
#define K_NV 2
#define K_FN micro_avx2_2
#include "gemm-micro.h"
#undef K_NV
#undef K_FN
#define K_NV 3
#define K_FN micro_avx2_3
#include "gemm-micro.h"
#undef K_NV
#undef K_FN
#undef K_TARGET
#undef K_VEC
#undef K_W
#undef K_MR
#undef K_ZERO
#undef K_LOAD
#undef K_SET1
#undef K_FMA
#undef K_ADD
#undef K_MAX
#undef K_STORE
#undef K_MASKED
#undef K_FINISH

#define K_TARGET "avx512f,avx512vl,avx512bw,avx512dq,fma"
#define K_VEC __m512
#define K_W 16
#define K_MR 8
#define K_ZERO _mm512_setzero_ps
#define K_LOAD _mm512_loadu_ps
#define K_SET1 _mm512_set1_ps
#define K_FMA _mm512_fmadd_ps
#define K_ADD _mm512_add_ps
#define K_MAX _mm512_max_ps
#define K_STORE _mm512_storeu_ps
#define K_MASKED 1
#define K_MASK_LOAD(src, m, p) _mm512_mask_loadu_ps ((src), (__mmask16) (m), (p))
#define K_MASK_STORE(p, m, v) _mm512_mask_storeu_ps ((p), (__mmask16) (m), (v))
#define K_NV 1
#define K_FN micro_avx512_1
#include "gemm-micro.h"
#undef K_NV
#undef K_FN
#define K_NV 2
#define K_FN micro_avx512_2
#include "gemm-micro.h"
#undef K_NV
#undef K_FN
#define K_NV 3
#define K_FN micro_avx512_3
#include "gemm-micro.h"
#undef K_NV
#undef K_FN
#undef K_TARGET
#undef K_VEC
#undef K_W
#undef K_MR
#undef K_ZERO
#undef K_LOAD
#undef K_SET1
#undef K_FMA
#undef K_ADD
#undef K_MAX
#undef K_STORE
#undef K_MASKED
#undef K_MASK_LOAD
#undef K_MASK_STORE

/* AVX-512's tail kernel (M2iGemmArch.tail): a packed panel's 8 rows as one
 * 256-bit vector per column, or two panels' 16 rows as one 512-bit vector
 * (P = 2: half the FMAs and broadcasts of two single-panel passes); C
 * partial sums over p (p mod C) keep eight FMAs in flight whatever the
 * column count (C = 8 for one column, 4 for two, 2 for three to seven, 1
 * from eight on, each column its own sum), in the same order for P = 1
 * and 2. One copy per column count N and P (constants there: no tests in
 * the loop, every accumulator a register: up to M2I_GEMM_TAIL_CHUNK). */
#define TAIL_BODY(VEC, LOADW, SET1, FMA, ADD, LOAD, STORE) \
  const gint C = N == 1 ? 8 : N == 2 ? 4 : N < 8 ? 2 : 1; \
  VEC r[8][M2I_GEMM_TAIL_CHUNK]; \
  for (gint c = 0; c < C; c++) \
    for (gint j = 0; j < N; j++) \
      r[c][j] = SET1 (0.0f); \
  gint p = 0; \
  for (; p + C <= kc; p += C) \
    _Pragma ("GCC unroll 8") \
    for (gint c = 0; c < C; c++) { \
      VEC w = LOADW (p + c); \
      const float *x = b + (p + c) * ldb; \
      _Pragma ("GCC unroll 12") \
      for (gint j = 0; j < N; j++) \
        r[c][j] = FMA (w, SET1 (x[j]), r[c][j]); \
    } \
  for (; p < kc; p++) { \
    VEC w = LOADW (p); \
    for (gint j = 0; j < N; j++) \
      r[0][j] = FMA (w, SET1 (b[p * ldb + j]), r[0][j]); \
  } \
  for (gint j = 0; j < N; j++) { \
    /* pairwise, in a fixed order */ \
    for (gint step = 1; step < C; step *= 2) \
      for (gint c = 0; c + step < C; c += 2 * step) \
        r[c][j] = ADD (r[c][j], r[c + step][j]); \
    VEC v = r[0][j]; \
    if (accumulate) \
      v = ADD (v, LOAD (acc + j * (sizeof (VEC) / 4))); \
    STORE (acc + j * (sizeof (VEC) / 4), v); \
  }

__attribute__ ((target ("avx512f,avx512vl,fma"))) static inline __attribute__ ((always_inline))
void
tail1_avx512_body (gint kc, const float *a, const float *b, gint ldb, const gint N,
    gboolean accumulate, float *acc)
{
#define LOADW1(p) _mm256_loadu_ps (a + (p) * 8)
  TAIL_BODY (__m256, LOADW1, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_add_ps, _mm256_loadu_ps,
      _mm256_storeu_ps)
#undef LOADW1
}

__attribute__ ((target ("avx512f,avx512vl,avx512dq,fma"))) static inline
__attribute__ ((always_inline)) void
tail2_avx512_body (gint kc, const float *a, gsize a_next, const float *b, gint ldb,
    const gint N, gboolean accumulate, float *acc)
{
#define LOADW2(p) _mm512_insertf32x8 (_mm512_castps256_ps512 (_mm256_loadu_ps (a + (p) * 8)), \
      _mm256_loadu_ps (a + a_next + (p) * 8), 1)
  TAIL_BODY (__m512, LOADW2, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_add_ps, _mm512_loadu_ps,
      _mm512_storeu_ps)
#undef LOADW2
}

/* Four panels (32 rows, two 512-bit vectors per column): each broadcast
 * feeds two FMAs, so loads no longer bound the FMAs (with one vector per
 * column every FMA waits on its broadcast's load). The same C partial
 * sums per column count as one and two panels, in the same order: a
 * row's sum does not depend on how its panels were grouped. At most
 * M2I_GEMM_TAIL_CHUNK columns (2·N accumulators). */
__attribute__ ((target ("avx512f,avx512vl,avx512dq,fma"))) static inline
__attribute__ ((always_inline)) void
tail4_avx512_body (gint kc, const float *a, gsize a_next, const float *b, gint ldb,
    const gint N, gboolean accumulate, float *acc)
{
#define LOADW4(p, q) _mm512_insertf32x8 (_mm512_castps256_ps512 (_mm256_loadu_ps (a + (q) * a_next \
          + (p) * 8)), _mm256_loadu_ps (a + ((q) + 1) * a_next + (p) * 8), 1)
  const gint C = N == 1 ? 8 : N == 2 ? 4 : N < 8 ? 2 : 1;
  __m512 r[8][2][M2I_GEMM_TAIL_CHUNK];
  for (gint c = 0; c < C; c++)
    for (gint j = 0; j < N; j++)
      r[c][0][j] = r[c][1][j] = _mm512_setzero_ps ();
  gint p = 0;
  for (; p + C <= kc; p += C)
    _Pragma ("GCC unroll 8")
    for (gint c = 0; c < C; c++) {
      __m512 w0 = LOADW4 (p + c, 0), w1 = LOADW4 (p + c, 2);
      const float *x = b + (p + c) * ldb;
      _Pragma ("GCC unroll 12")
      for (gint j = 0; j < N; j++) {
        __m512 v = _mm512_set1_ps (x[j]);
        r[c][0][j] = _mm512_fmadd_ps (w0, v, r[c][0][j]);
        r[c][1][j] = _mm512_fmadd_ps (w1, v, r[c][1][j]);
      }
    }
  for (; p < kc; p++) {
    __m512 w0 = LOADW4 (p, 0), w1 = LOADW4 (p, 2);
    for (gint j = 0; j < N; j++) {
      __m512 v = _mm512_set1_ps (b[p * ldb + j]);
      r[0][0][j] = _mm512_fmadd_ps (w0, v, r[0][0][j]);
      r[0][1][j] = _mm512_fmadd_ps (w1, v, r[0][1][j]);
    }
  }
  for (gint j = 0; j < N; j++)
    for (gint h = 0; h < 2; h++) {
      for (gint step = 1; step < C; step *= 2)
        for (gint c = 0; c + step < C; c += 2 * step)
          r[c][h][j] = _mm512_add_ps (r[c][h][j], r[c + step][h][j]);
      __m512 v = r[0][h][j];
      float *d = acc + j * 32 + h * 16;
      if (accumulate)
        v = _mm512_add_ps (v, _mm512_loadu_ps (d));
      _mm512_storeu_ps (d, v);
    }
#undef LOADW4
}

__attribute__ ((target ("avx512f,avx512vl,avx512dq,fma")))
static void
tail_avx512 (gint kc, const float *a, gsize a_next, gint panels, const float *b, gint ldb,
    gint n, gboolean accumulate, float *acc)
{
  G_STATIC_ASSERT (M2I_GEMM_TAIL_CHUNK == 12);
#define TAIL_CASES12(F, ...) \
  switch (n) { \
    case 1: F (__VA_ARGS__, 1, accumulate, acc); break; \
    case 2: F (__VA_ARGS__, 2, accumulate, acc); break; \
    case 3: F (__VA_ARGS__, 3, accumulate, acc); break; \
    case 4: F (__VA_ARGS__, 4, accumulate, acc); break; \
    case 5: F (__VA_ARGS__, 5, accumulate, acc); break; \
    case 6: F (__VA_ARGS__, 6, accumulate, acc); break; \
    case 7: F (__VA_ARGS__, 7, accumulate, acc); break; \
    case 8: F (__VA_ARGS__, 8, accumulate, acc); break; \
    case 9: F (__VA_ARGS__, 9, accumulate, acc); break; \
    case 10: F (__VA_ARGS__, 10, accumulate, acc); break; \
    case 11: F (__VA_ARGS__, 11, accumulate, acc); break; \
    default: F (__VA_ARGS__, 12, accumulate, acc); break; \
  }
  if (panels == 4)
    TAIL_CASES12 (tail4_avx512_body, kc, a, a_next, b, ldb)
  else if (panels == 2)
    TAIL_CASES12 (tail2_avx512_body, kc, a, a_next, b, ldb)
  else
    TAIL_CASES12 (tail1_avx512_body, kc, a, b, ldb)
#undef TAIL_CASES12
}
#undef TAIL_BODY

/* M2iGemmArch.tail_pack: each 16-column group of a row loaded with only
 * its kept lanes (nothing else read), compressed, stored where the row's
 * kept columns so far end (the store's spare lanes are overwritten next). */
__attribute__ ((target ("avx512f,avx512vl,avx512bw,avx512dq,fma")))
static void
tail_pack_avx512 (const float *b, const gint32 *off, gint kc, const guint32 *lanes, gint groups,
    gint n, float *t)
{
  for (gint p = 0; p < kc; p++) {
    const float *src = b + off[p];
    float *d = t + (gsize) p * n;
    for (gint g = 0; g < groups; g++) {
      __mmask16 m = (__mmask16) lanes[g];
      __m512 v = _mm512_maskz_compress_ps (m, _mm512_maskz_loadu_ps (m, src + g * 16));
      _mm512_storeu_ps (d, v);
      d += __builtin_popcount (m);
    }
  }
}

/* The one-row kernels (one to three vectors of columns, B in floats and
 * in halves) and the arch table of an instruction set. The operand list
 * is VEC, W (floats per vector), then the intrinsics ZERO, LOAD, STORE,
 * ADD, SET1, FMA; LOADH (p) loads W halves as floats. */
#define DEF_GEMV(NAME, TARGET, NV, BT, LOADB, VEC, W, ZERO, LOAD, ...) \
  __attribute__ ((target (TARGET))) \
  static void \
  gemv_##NAME##_##NV (gint kc, const float *a, gsize as, const BT *b, const gint32 *off, \
      float *c, gboolean accumulate) \
  { \
    GEMV_BODY (VEC, W, NV, BT, LOADB, ZERO, LOAD, __VA_ARGS__) \
  }
#define DEF_GEMVS(NAME, TARGET, BT, LOADB, ...) \
  DEF_GEMV (NAME, TARGET, 1, BT, LOADB, __VA_ARGS__) \
  DEF_GEMV (NAME, TARGET, 2, BT, LOADB, __VA_ARGS__) \
  DEF_GEMV (NAME, TARGET, 3, BT, LOADB, __VA_ARGS__)
#define DEF_ISA(NAME, TARGET, MR, KC, TAIL, TAIL_PACK, LOADH, VEC, W, ZERO, LOAD, ...) \
  DEF_GEMVS (NAME, TARGET, float, LOAD, VEC, W, ZERO, LOAD, __VA_ARGS__) \
  DEF_GEMVS (NAME##_h, TARGET ",f16c", guint16, LOADH, VEC, W, ZERO, LOAD, __VA_ARGS__) \
  static const M2iGemmArch arch_##NAME = { \
    #NAME, MR, 3 * W, KC, micro_##NAME##_3, W, \
    { NULL, micro_##NAME##_1, micro_##NAME##_2, micro_##NAME##_3 }, \
    { NULL, gemv_##NAME##_1, gemv_##NAME##_2, gemv_##NAME##_3 }, TAIL, TAIL_PACK, \
    { NULL, gemv_##NAME##_h_1, gemv_##NAME##_h_2, gemv_##NAME##_h_3 }, \
  };

#define LOADH_AVX2(p) _mm256_cvtph_ps (_mm_loadu_si128 ((const __m128i *) (p)))
#define LOADH_AVX512(p) _mm512_cvtph_ps (_mm256_loadu_si256 ((const __m256i *) (p)))

/* AVX2: 4 rows × 24 columns = 12 accumulators of 8 floats; K blocks of
 * 256 rows. */
DEF_ISA (avx2, "avx2,fma", 4, 256, NULL, NULL, LOADH_AVX2, __m256, 8, _mm256_setzero_ps, _mm256_loadu_ps,
    _mm256_storeu_ps, _mm256_add_ps, _mm256_set1_ps, _mm256_fmadd_ps)

/* AVX-512: 8 rows × 48 columns = 24 accumulators of 16 floats; with three
 * B vectors and a broadcast that is 28 of the 32 registers. Eight rows
 * divide the channel counts networks use, so few rows are wasted. K
 * blocks of up to 768 rows: a B panel (144 KiB) then lives in L2, not L1,
 * but every K block costs a pass of the tile's results through memory,
 * and on squeezenet1.1 (K up to 576) one block measured 3 % faster than
 * blocks of 256. */
DEF_ISA (avx512, "avx512f,avx512vl,avx512bw,avx512dq,fma", 8, 768, tail_avx512, tail_pack_avx512,
    LOADH_AVX512, __m512, 16, _mm512_setzero_ps,
    _mm512_loadu_ps, _mm512_storeu_ps, _mm512_add_ps, _mm512_set1_ps, _mm512_fmadd_ps)

const M2iGemmArch *const ir_gemm_arch_avx2_ptr = &arch_avx2;
const M2iGemmArch *const ir_gemm_arch_avx512_ptr = &arch_avx512;

#else

const M2iGemmArch *const ir_gemm_arch_avx2_ptr = NULL;
const M2iGemmArch *const ir_gemm_arch_avx512_ptr = NULL;

#endif
