/* AVX2+FMA and AVX-512 micro-kernels of the GEMM (see gemm.h). Compiled
 * with per-function target attributes, so the library runs on any x86-64;
 * m2i_gemm_arch() only hands them out when the CPU has the extensions. */
#include "gemm.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* AVX2: 4 rows × 24 columns = 12 accumulators of 8 floats. A row of B is
 * three loads, each A value one broadcast. */
#define AVX2_MR 4
#define AVX2_NR 24

__attribute__ ((target ("avx2,fma")))
static void
micro_avx2 (gint kc, const float *a, const float *b, const gint32 *off,
    float *c, gsize ldc, gboolean accumulate)
{
  __m256 r[AVX2_MR][3];
  for (gint i = 0; i < AVX2_MR; i++)
    for (gint j = 0; j < 3; j++)
      r[i][j] = _mm256_setzero_ps ();
  for (gint p = 0; p < kc; p++) {
    const float *bp = b + off[p];
    __m256 b0 = _mm256_loadu_ps (bp);
    __m256 b1 = _mm256_loadu_ps (bp + 8);
    __m256 b2 = _mm256_loadu_ps (bp + 16);
    for (gint i = 0; i < AVX2_MR; i++) {
      __m256 ai = _mm256_broadcast_ss (a + i);
      r[i][0] = _mm256_fmadd_ps (ai, b0, r[i][0]);
      r[i][1] = _mm256_fmadd_ps (ai, b1, r[i][1]);
      r[i][2] = _mm256_fmadd_ps (ai, b2, r[i][2]);
    }
    a += AVX2_MR;
  }
  for (gint i = 0; i < AVX2_MR; i++) {
    float *row = c + i * ldc;
    for (gint j = 0; j < 3; j++) {
      __m256 v = r[i][j];
      if (accumulate)
        v = _mm256_add_ps (v, _mm256_loadu_ps (row + 8 * j));
      _mm256_storeu_ps (row + 8 * j, v);
    }
  }
}

static const M2iGemmArch arch_avx2 = { "avx2", AVX2_MR, AVX2_NR, 256, micro_avx2 };

/* AVX-512: 8 rows × 48 columns = 24 accumulators of 16 floats; with three
 * B vectors and a broadcast that is 28 of the 32 registers. Eight rows
 * divide the channel counts networks use, so few rows are wasted. */
#define AVX512_MR 8
#define AVX512_NR 48

__attribute__ ((target ("avx512f,avx512vl,fma")))
static void
micro_avx512 (gint kc, const float *a, const float *b, const gint32 *off,
    float *c, gsize ldc, gboolean accumulate)
{
  __m512 r[AVX512_MR][3];
  for (gint i = 0; i < AVX512_MR; i++)
    for (gint j = 0; j < 3; j++)
      r[i][j] = _mm512_setzero_ps ();
  for (gint p = 0; p < kc; p++) {
    const float *bp = b + off[p];
    __m512 b0 = _mm512_loadu_ps (bp);
    __m512 b1 = _mm512_loadu_ps (bp + 16);
    __m512 b2 = _mm512_loadu_ps (bp + 32);
    for (gint i = 0; i < AVX512_MR; i++) {
      __m512 ai = _mm512_set1_ps (a[i]);
      r[i][0] = _mm512_fmadd_ps (ai, b0, r[i][0]);
      r[i][1] = _mm512_fmadd_ps (ai, b1, r[i][1]);
      r[i][2] = _mm512_fmadd_ps (ai, b2, r[i][2]);
    }
    a += AVX512_MR;
  }
  for (gint i = 0; i < AVX512_MR; i++) {
    float *row = c + i * ldc;
    for (gint j = 0; j < 3; j++) {
      __m512 v = r[i][j];
      if (accumulate)
        v = _mm512_add_ps (v, _mm512_loadu_ps (row + 16 * j));
      _mm512_storeu_ps (row + 16 * j, v);
    }
  }
}

static const M2iGemmArch arch_avx512 = { "avx512", AVX512_MR, AVX512_NR, 256, micro_avx512 };

const M2iGemmArch *const m2i_gemm_arch_avx2_ptr = &arch_avx2;
const M2iGemmArch *const m2i_gemm_arch_avx512_ptr = &arch_avx512;

#else

const M2iGemmArch *const m2i_gemm_arch_avx2_ptr = NULL;
const M2iGemmArch *const m2i_gemm_arch_avx512_ptr = NULL;

#endif
