/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* conv-winocol.h — 3×1 and 1×3 stride-1 convolutions by Winograd's
 * minimal filtering F(4, 3) along the kernel's axis (not installed).
 *
 * Four output rows of one column (3×1; or four output columns of one row,
 * 1×3: a tile) read six input rows (columns): y = Aᵀ [(G g) ⊙ (Bᵀ d)]. The 6 products of the middle step, summed over
 * input channels, are 6 matrix products M[ξ] = U[ξ] · V[ξ], U[ξ] the
 * transformed weights (C_out × C_in, packed once), V[ξ] the transformed
 * input (C_in × tiles, a GEMM column per tile): 6 multiply-adds per input
 * channel for 4 outputs instead of 12. 3×1: along a tile row the tiles
 * are the input's columns, so the transforms are element-wise over rows.
 * 1×3: a row's columns are split into their four phases (x mod 4) first,
 * and the outputs interleaved back. Plain C compiled per instruction set,
 * the same operations on each. The transforms' coefficients (±1, ±2, ±4, ±5, 8;
 * G's 1/4, 1/6, 1/12, 1/24, applied to the weights in double) round
 * differently from the direct sum: results agree to about 1e-6 of the
 * sums' magnitudes.
 *
 * Columns go in blocks of one GEMM column panel, as conv-winograd.h's
 * tiles: each block's V is transformed into the slice's scratch,
 * multiplied by blocks of output channels, and transformed back straight
 * into the output with the fused bias, ReLU or Swish.
 */
#pragma once

#include "gemm.h"
#include "kernels-private.h"

G_BEGIN_DECLS

typedef struct {
  const M2iGemmArch *arch;
  gboolean across;                     /* 1×3 (tiles along the rows), else 3×1 */
  gint64 c_in, c_out, h, w, pt, pl, oh, ow;
  /* tiles th × tw: 3×1 ceil(oh / 4) × w (4 output rows of a column each),
   * 1×3 h × ceil(ow / 4) (4 output columns of a row each) */
  gint64 th, tw, tiles;
  gint64 blocks;                       /* tile blocks, at most arch->nr tiles each */
  gint64 *block_start;                 /* first tile of each block, then the count */
  gint64 tail;                         /* the last block's tiles past its GEMM columns */
  gint64 vw;                           /* floats per row of V and M */
  gint32 *v_off;                       /* p · vw: V's row table for the GEMM */
  gint64 mb, m_blocks;                 /* output channels per GEMM block, blocks of them */
  float *u;                            /* 6 packed A, u_stride floats apart */
  gsize u_stride;
  gsize v_stride, m_stride;            /* floats between the 6 matrices of V, of M */
  gsize slice_floats;                  /* scratch per slice: V, M, a strip, a zero row, 3 spare rows */
} IrWinoCol;

/* Whether layers may take this path: M2I_CONV_WINOCOL=0 in the
 * environment (read at first use) turns it off; tests and benchmarks set
 * it to compare with the direct tiles. */
gboolean ir_winocol_enabled (void);
void ir_winocol_set_enabled (gboolean on);

/* TRUE when F(4, 3) is enabled and applies: a 3×1 kernel (no side
 * pads, the output as wide as the input) or a 1×3 kernel (no pads above
 * or below, at most 2 on each side), at stride 1 and dilation 1, one
 * group, and enough channels (K = C_in of the 6 products) and rows or
 * columns for the transforms to pay. */
gboolean ir_winocol_applies (gint64 kh, gint64 kw, gint64 sh, gint64 sw, gint64 dh,
    gint64 dw, gint64 groups, gint64 pt, gint64 pb, gint64 pl, gint64 pr, gint64 h, gint64 w,
    gint64 oh, gint64 ow, gint64 c_in, gint64 c_out);

/* Transforms and packs @weights ([C_out][C_in][3][1], or [1][3] when
 * @across) for a layer on h × w inputs with pads @pt (top) and @pl (left)
 * and an oh × ow output, to run on up to @slices threads. */
IrWinoCol *ir_winocol_new (const M2iGemmArch *arch, const float *weights, gint64 c_out,
    gint64 c_in, gint64 h, gint64 w, gint64 pt, gint64 pl, gint64 oh, gint64 ow,
    gboolean across, gint slices);

void ir_winocol_free (IrWinoCol *wc);

/* Bytes of scratch ir_winocol_run() needs for up to @slices slices. */
gsize ir_winocol_scratch_bytes (const IrWinoCol *wc, gint slices);

/* One image: @in (C_in × h × w) to @out (C_out × oh × ow), then what
 * @fused says, over up to @slices threads. @scratch:
 * ir_winocol_scratch_bytes(), 64-byte aligned. */
void ir_winocol_run (const IrWinoCol *wc, const float *in, float *out,
    const M2iKFusion *fused, gint slices, float *scratch);

G_END_DECLS
