/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* conv-tap-avx512.c — the direct 1×K / K×1 convolution's tiles with
 * AVX-512 (conv-tap.h): 8 output channels × 48 pixels, a tap's pad lanes
 * by masked loads (nothing read there), a last short panel by masked
 * stores. */
#include "conv-tap.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define T_TARGET "avx512f,avx512vl,avx512bw,avx512dq,fma"
#define T_VEC __m512
#define T_W 16
#define T_MR 8
#define T_MASK_T __mmask16
#define T_ZERO() _mm512_setzero_ps ()
#define T_SET1(x) _mm512_set1_ps (x)
#define T_LOAD(p) _mm512_loadu_ps (p)
#define T_MLOAD(p, t, j) _mm512_maskz_loadu_ps (mk[(t) * 3 + (j)], p)
#define T_FMA(a, b, c) _mm512_fmadd_ps (a, b, c)
#define T_ADD(a, b) _mm512_add_ps (a, b)
#define T_MAX(a, b) _mm512_max_ps (a, b)
#define T_STORE(p, v) _mm512_storeu_ps (p, v)
#define T_STORE_N(p, v, n) _mm512_mask_storeu_ps (p, (__mmask16) ((1u << (n)) - 1), v)

#define T_FN tile_plain
#define T_NV 3
#define T_MASKED 0
#include "conv-tap-micro.h"
#define T_FN tile_masked_1
#define T_NV 1
#define T_MASKED 1
#include "conv-tap-micro.h"
#define T_FN tile_masked_2
#define T_NV 2
#define T_MASKED 1
#include "conv-tap-micro.h"
#define T_FN tile_masked_3
#define T_NV 3
#define T_MASKED 1
#include "conv-tap-micro.h"

typedef void (*Tile) (const float *b, gsize plane, gint c_in, gint taps, const gint32 *toff,
    const void *mk, const float *a, float *c, gsize ldc, gint rows, gint ncols,
    const float *bias, gboolean relu);

static void
panel_avx512 (const IrTapGeom *g, const float *a, gint rows, const float *in, gint64 n0,
    gint ncols, float *out, gsize ldc, const float *bias, gboolean relu)
{
  static const Tile masked[4] = { NULL, tile_masked_1, tile_masked_2, tile_masked_3 };
  guint64 valid[IR_EDGE_MAX_TAPS];
  ir_edge_tap_lanes (&g->edge, n0, ncols, valid);
  guint64 full = ((guint64) 1 << ncols) - 1;     /* ncols <= 48 */
  gboolean clean = ncols == 3 * T_W;
  __mmask16 mk[IR_TAP_MAX * 3];
  for (gint t = 0; t < g->taps; t++) {
    clean = clean && valid[t] == full;
    for (gint j = 0; j < 3; j++)
      mk[t * 3 + j] = (__mmask16) (valid[t] >> (16 * j));
  }
  Tile tile = clean ? tile_plain : masked[(ncols + T_W - 1) / T_W];
  gsize k = (gsize) g->cin_g * g->taps;
  for (gint i0 = 0; i0 < rows; i0 += T_MR)
    tile (in + n0, g->plane, g->cin_g, g->taps, g->toff, mk, a + i0 * k, out + i0 * ldc + n0,
        ldc, MIN (T_MR, rows - i0), ncols, bias ? bias + i0 : NULL, relu);
}

IrTapPanel
ir_tap_panel_avx512 (void)
{
  return panel_avx512;
}

#else

IrTapPanel
ir_tap_panel_avx512 (void)
{
  return NULL;
}

#endif
