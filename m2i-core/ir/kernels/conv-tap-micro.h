/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* conv-tap-micro.h — the direct 1×K / K×1 convolution's tiles and panel
 * driver for one instruction set (conv-tap.h), included once by
 * conv-tap-avx2.c and conv-tap-avx512.c. The includer defines what
 * conv-tap-tile.h asks (but T_FN, T_NV, T_MASKED), and:
 *   T_PANEL   the panel function's name (an IrTapPanel)
 *   T_MASKS (mk, t, valid)  sets mk[3·t .. 3·t + 2] from the lane bits
 *             @valid of tap t (bit l: lane l reads inside the image)
 *
 * A panel whose every tap reads inside the image in every lane (and
 * which is whole) runs the tile with plain loads; the others the masked
 * tile of as many vectors as their columns take.
 */

#define T_FN tile_plain
#define T_NV 3
#define T_MASKED 0
#include "conv-tap-tile.h"
#define T_FN tile_masked_1
#define T_NV 1
#define T_MASKED 1
#include "conv-tap-tile.h"
#define T_FN tile_masked_2
#define T_NV 2
#define T_MASKED 1
#include "conv-tap-tile.h"
#define T_FN tile_masked_3
#define T_NV 3
#define T_MASKED 1
#include "conv-tap-tile.h"

typedef void (*Tile) (const float *b, gsize plane, gint c_in, gint nt, const gint32 *toff,
    const gint32 *tw, gsize a_ci, const void *mk, const float *a, float *c, gsize ldc, gint rows,
    gint ncols, gboolean acc, const float *bias, gboolean relu);

__attribute__ ((target (T_TARGET)))
static void
T_PANEL (const IrTapGeom *g, const float *a, gint rows, const float *in, gint64 n0,
    gint ncols, float *out, gsize ldc, const float *bias, gboolean relu)
{
  static const Tile masked[4] = { NULL, tile_masked_1, tile_masked_2, tile_masked_3 };
  guint64 valid[IR_EDGE_MAX_TAPS];
  ir_edge_tap_lanes (&g->edge, n0, ncols, valid);
  guint64 full = ((guint64) 1 << ncols) - 1;     /* ncols <= 3 · T_W <= 48 */
  gboolean clean = ncols == 3 * T_W;
  /* The taps reading inside the image in some lane; the others (the row
   * above on a panel of the first row) add only zeros. */
  gint32 toff[IR_TAP_MAX], tw[IR_TAP_MAX];
  gint nt = 0;
  T_MASK_T mk[IR_TAP_MAX * 3];
  for (gint t = 0; t < g->taps; t++) {
    clean = clean && valid[t] == full;
    if (!valid[t])
      continue;
    T_MASKS (mk, nt, valid[t]);
    toff[nt] = g->toff[t];
    tw[nt++] = t * T_MR;
  }
  Tile tile = clean ? tile_plain : masked[(ncols + T_W - 1) / T_W];
  gsize k = (gsize) g->cin_g * g->taps;
  /* Input channels in blocks of g->cin_block, every row block of the
   * panel through one before the next (their sums through C). */
  for (gint c0 = 0; c0 < g->cin_g; c0 += g->cin_block) {
    gint cn = MIN (g->cin_block, g->cin_g - c0);
    gboolean last = c0 + cn >= g->cin_g;
    for (gint i0 = 0; i0 < rows; i0 += T_MR)
      tile (in + n0 + (gsize) c0 * g->plane, g->plane, cn, nt, toff, tw,
          (gsize) g->taps * T_MR, mk, a + i0 * k + (gsize) c0 * g->taps * T_MR,
          out + i0 * ldc + n0, ldc, MIN (T_MR, rows - i0), ncols, c0 > 0,
          last && bias ? bias + i0 : NULL, last && relu);
  }
}
