/* AVX2+FMA and AVX-512 micro-kernels of the GEMM (see gemm.h). Compiled
 * with per-function target attributes, so the library runs on any x86-64;
 * m2i_gemm_arch() only hands them out when the CPU has the extensions.
 *
 * Each instruction set has a full-width kernel and narrower ones (one and
 * two vectors of columns) for a last column panel that is only partly
 * used: a 14×14 output plane is 196 columns, four full 48-wide panels and
 * 4 columns, which a 16-wide kernel covers at a third of the cost. */
#include "gemm.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* The body of a micro-kernel: MR rows × NV vectors of W floats. Row p of B
 * is NV loads, each A value one broadcast, MR·NV FMAs. */
#define MICRO_BODY(VEC, W, MR, NV, ZERO, LOAD, STORE, ADD, SET1, FMA) \
  VEC r[MR][NV]; \
  for (gint i = 0; i < MR; i++) \
    for (gint j = 0; j < NV; j++) \
      r[i][j] = ZERO (); \
  for (gint p = 0; p < kc; p++) { \
    const float *bp = b + off[p]; \
    VEC bv[NV]; \
    for (gint j = 0; j < NV; j++) \
      bv[j] = LOAD (bp + W * j); \
    for (gint i = 0; i < MR; i++) { \
      VEC ai = SET1 (a[i]); \
      for (gint j = 0; j < NV; j++) \
        r[i][j] = FMA (ai, bv[j], r[i][j]); \
    } \
    a += MR; \
  } \
  for (gint i = 0; i < MR; i++) { \
    float *row = c + i * ldc; \
    for (gint j = 0; j < NV; j++) { \
      VEC v = r[i][j]; \
      if (accumulate) \
        v = ADD (v, LOAD (row + W * j)); \
      STORE (row + W * j, v); \
    } \
  }

/* One row against NV vectors of B columns, four rows of B at a time into
 * four sets of accumulators (FMA latency is four cycles). */
#define GEMV_BODY(VEC, W, NV, ZERO, LOAD, STORE, ADD, SET1, FMA) \
  VEC r[4][NV]; \
  for (gint u = 0; u < 4; u++) \
    for (gint j = 0; j < NV; j++) \
      r[u][j] = ZERO (); \
  gint p = 0; \
  for (; p + 4 <= kc; p += 4) \
    for (gint u = 0; u < 4; u++) { \
      const float *bp = b + off[p + u]; \
      VEC ap = SET1 (a[(p + u) * as]); \
      for (gint j = 0; j < NV; j++) \
        r[u][j] = FMA (ap, LOAD (bp + W * j), r[u][j]); \
    } \
  for (; p < kc; p++) { \
    const float *bp = b + off[p]; \
    VEC ap = SET1 (a[p * as]); \
    for (gint j = 0; j < NV; j++) \
      r[0][j] = FMA (ap, LOAD (bp + W * j), r[0][j]); \
  } \
  for (gint j = 0; j < NV; j++) { \
    VEC v = ADD (ADD (r[0][j], r[1][j]), ADD (r[2][j], r[3][j])); \
    if (accumulate) \
      v = ADD (v, LOAD (c + W * j)); \
    STORE (c + W * j, v); \
  }

/* Everything one instruction set needs: micro-kernels of 1, 2 and 3
 * vectors of columns, the one-row kernel and the arch table. The operand
 * list is VEC, W (floats per vector), then the intrinsics ZERO, LOAD,
 * STORE, ADD, SET1, FMA. */
#define DEF_MICRO(NAME, TARGET, MR, NV, VEC, W, ...) \
  __attribute__ ((target (TARGET))) \
  static void \
  micro_##NAME##_##NV (gint kc, const float *a, const float *b, const gint32 *off, \
      float *c, gsize ldc, gboolean accumulate) \
  { \
    MICRO_BODY (VEC, W, MR, NV, __VA_ARGS__) \
  }
#define DEF_ISA(NAME, TARGET, MR, VEC, W, ...) \
  DEF_MICRO (NAME, TARGET, MR, 1, VEC, W, __VA_ARGS__) \
  DEF_MICRO (NAME, TARGET, MR, 2, VEC, W, __VA_ARGS__) \
  DEF_MICRO (NAME, TARGET, MR, 3, VEC, W, __VA_ARGS__) \
  __attribute__ ((target (TARGET))) \
  static void \
  gemv_##NAME (gint kc, const float *a, gsize as, const float *b, const gint32 *off, \
      float *c, gboolean accumulate) \
  { \
    GEMV_BODY (VEC, W, 3, __VA_ARGS__) \
  } \
  static const M2iGemmArch arch_##NAME = { \
    #NAME, MR, 3 * W, 256, micro_##NAME##_3, W, \
    { NULL, micro_##NAME##_1, micro_##NAME##_2, micro_##NAME##_3 }, gemv_##NAME, \
  };

/* AVX2: 4 rows × 24 columns = 12 accumulators of 8 floats. */
DEF_ISA (avx2, "avx2,fma", 4, __m256, 8, _mm256_setzero_ps, _mm256_loadu_ps,
    _mm256_storeu_ps, _mm256_add_ps, _mm256_set1_ps, _mm256_fmadd_ps)

/* AVX-512: 8 rows × 48 columns = 24 accumulators of 16 floats; with three
 * B vectors and a broadcast that is 28 of the 32 registers. Eight rows
 * divide the channel counts networks use, so few rows are wasted. */
DEF_ISA (avx512, "avx512f,avx512vl,fma", 8, __m512, 16, _mm512_setzero_ps, _mm512_loadu_ps,
    _mm512_storeu_ps, _mm512_add_ps, _mm512_set1_ps, _mm512_fmadd_ps)

const M2iGemmArch *const m2i_gemm_arch_avx2_ptr = &arch_avx2;
const M2iGemmArch *const m2i_gemm_arch_avx512_ptr = &arch_avx512;

#else

const M2iGemmArch *const m2i_gemm_arch_avx2_ptr = NULL;
const M2iGemmArch *const m2i_gemm_arch_avx512_ptr = NULL;

#endif
