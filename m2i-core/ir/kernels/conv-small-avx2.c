/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* conv-small-avx2.c — the small-plane convolution's tiles with AVX2 and
 * FMA (conv-small.h): up to 4 pixels × 3 vectors of 8 output channels,
 * 12 accumulators of the 16 registers. */
#include "conv-small.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define T_TARGET "avx2,fma"
#define T_VEC __m256
#define T_W 8
#define T_P 4
#define T_V 3
#define T_ZERO() _mm256_setzero_ps ()
#define T_SET1(x) _mm256_set1_ps (x)
#define T_LOAD(p) _mm256_loadu_ps (p)
#define T_FMA(a, b, c) _mm256_fmadd_ps (a, b, c)
#define T_STORE(p, v) _mm256_storeu_ps (p, v)
#include "conv-small-tile.h"

#define TILES_P(P) T_TILE (P, 1) T_TILE (P, 2) T_TILE (P, 3)
TILES_P (1) TILES_P (2) TILES_P (3) TILES_P (4)
#define ROW(P) { tile_##P##_1, tile_##P##_2, tile_##P##_3 }

static IrSmallTile
tile_for (gint np, gint nv)
{
  static const IrSmallTile tiles[T_P][T_V] = { ROW (1), ROW (2), ROW (3), ROW (4) };
  return tiles[np - 1][nv - 1];
}

/* r[i] (row i, 8 floats) becomes column i: pairs of rows, pairs of
 * pairs within each 128-bit lane, then the lanes. */
__attribute__ ((target (T_TARGET)))
static inline __attribute__ ((always_inline)) void
transpose8 (__m256 r[8])
{
  __m256 t[8];
  for (gint i = 0; i < 4; i++) {
    t[2 * i] = _mm256_unpacklo_ps (r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_ps (r[2 * i], r[2 * i + 1]);
  }
  for (gint i = 0; i < 2; i++) {
    __m256d a = _mm256_castps_pd (t[4 * i]), b = _mm256_castps_pd (t[4 * i + 1]);
    __m256d c = _mm256_castps_pd (t[4 * i + 2]), d = _mm256_castps_pd (t[4 * i + 3]);
    r[4 * i] = _mm256_castpd_ps (_mm256_unpacklo_pd (a, c));
    r[4 * i + 1] = _mm256_castpd_ps (_mm256_unpackhi_pd (a, c));
    r[4 * i + 2] = _mm256_castpd_ps (_mm256_unpacklo_pd (b, d));
    r[4 * i + 3] = _mm256_castpd_ps (_mm256_unpackhi_pd (b, d));
  }
  /* r[4i + j] holds, in 128-bit lane L, column 4L + j of rows 4i .. 4i + 3 */
  for (gint j = 0; j < 4; j++) {
    t[j] = _mm256_permute2f128_ps (r[j], r[4 + j], 0x20);
    t[4 + j] = _mm256_permute2f128_ps (r[j], r[4 + j], 0x31);
  }
  for (gint i = 0; i < 8; i++)
    r[i] = t[i];
}

/* Blocks of 8 pixels × 8 channels, transposed in registers; a last block
 * of fewer pixels loads zeros past them and stores lane by lane. */
__attribute__ ((target (T_TARGET)))
static void
put_avx2 (const float *sums, gsize ld, gint64 pixels, gint c0, gint nc, const float *bias,
    gboolean relu, float *out)
{
  for (gint64 p0 = 0; p0 < pixels; p0 += 8) {
    gint np = (gint) MIN (8, pixels - p0);
    for (gint c = c0; c < c0 + nc; c += 8) {
      __m256 r[8];
      for (gint i = 0; i < 8; i++)
        r[i] = i < np ? _mm256_loadu_ps (sums + (p0 + i) * ld + c) : _mm256_setzero_ps ();
      transpose8 (r);
      for (gint i = 0; i < MIN (8, c0 + nc - c); i++) {
        __m256 v = r[i];
        if (bias)
          v = _mm256_add_ps (v, _mm256_set1_ps (bias[c + i]));
        if (relu)
          v = _mm256_max_ps (v, _mm256_setzero_ps ());   /* max (NaN, 0) = 0 */
        float *o = out + (c + i) * pixels + p0;
        if (np == 8) {
          _mm256_storeu_ps (o, v);
        } else {
          float lanes[8];
          _mm256_storeu_ps (lanes, v);
          for (gint l = 0; l < np; l++)
            o[l] = lanes[l];
        }
      }
    }
  }
}

static const IrSmallArch arch = { T_P, T_V, T_W, tile_for, put_avx2 };

const IrSmallArch *
ir_small_arch_avx2 (void)
{
  return &arch;
}

#else

const IrSmallArch *
ir_small_arch_avx2 (void)
{
  return NULL;
}

#endif
