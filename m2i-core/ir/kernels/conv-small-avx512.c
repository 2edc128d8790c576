/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* conv-small-avx512.c — the small-plane convolution's tiles with AVX-512
 * (conv-small.h): up to 6 pixels × 4 vectors of 16 output channels, 24
 * accumulators beside the four weight vectors and a broadcast (7 pixels
 * kept one accumulator on the stack, GCC not folding the broadcast into
 * the FMA: vehicle-attributes' 128→128 layers 0.029–0.030 ms against
 * 0.028, its 64→128 0.050 against 0.046). */
#include "conv-small.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include "row-x86.h"

#define T_TARGET "avx512f,avx512vl,avx512bw,avx512dq,fma"
#define T_VEC __m512
#define T_W 16
#define T_P 6
#define T_V 4
#define T_ZERO() _mm512_setzero_ps ()
#define T_SET1(x) _mm512_set1_ps (x)
#define T_LOAD(p) _mm512_loadu_ps (p)
#define T_FMA(a, b, c) _mm512_fmadd_ps (a, b, c)
#define T_STORE(p, v) _mm512_storeu_ps (p, v)
#include "conv-small-tile.h"

#define TILES_P(P) T_TILE (P, 1) T_TILE (P, 2) T_TILE (P, 3) T_TILE (P, 4)
TILES_P (1) TILES_P (2) TILES_P (3) TILES_P (4) TILES_P (5) TILES_P (6)
#define ROW(P) { tile_##P##_1, tile_##P##_2, tile_##P##_3, tile_##P##_4 }

static IrSmallTile
tile_for (gint np, gint nv)
{
  static const IrSmallTile tiles[T_P][T_V] = {
    ROW (1), ROW (2), ROW (3), ROW (4), ROW (5), ROW (6),
  };
  return tiles[np - 1][nv - 1];
}

/* Blocks of 16 pixels × 16 channels, transposed in registers; a last
 * block of fewer pixels loads zeros past them and stores masked. */
__attribute__ ((target (T_TARGET)))
static void
put_avx512 (const float *sums, gsize ld, gint64 pixels, gint c0, gint nc, const float *bias,
    gboolean relu, float *out)
{
  for (gint64 p0 = 0; p0 < pixels; p0 += 16) {
    gint np = (gint) MIN (16, pixels - p0);
    __mmask16 m = (__mmask16) ((1u << np) - 1);
    for (gint c = c0; c < c0 + nc; c += 16) {
      __m512 r[16];
      for (gint i = 0; i < 16; i++)
        r[i] = i < np ? _mm512_loadu_ps (sums + (p0 + i) * ld + c) : _mm512_setzero_ps ();
      ir_k_transpose16 (r);
      for (gint i = 0; i < MIN (16, c0 + nc - c); i++) {
        __m512 v = r[i];
        if (bias)
          v = _mm512_add_ps (v, _mm512_set1_ps (bias[c + i]));
        if (relu)
          v = _mm512_max_ps (v, _mm512_setzero_ps ());   /* max (NaN, 0) = 0 */
        _mm512_mask_storeu_ps (out + (c + i) * pixels + p0, m, v);
      }
    }
  }
}

static const IrSmallArch arch = { T_P, T_V, T_W, tile_for, put_avx512 };

const IrSmallArch *
ir_small_arch_avx512 (void)
{
  return &arch;
}

#else

const IrSmallArch *
ir_small_arch_avx512 (void)
{
  return NULL;
}

#endif
