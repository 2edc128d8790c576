/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* conv-winocol.h — 3×1 stride-1 convolutions by Winograd's minimal
 * filtering F(4, 3) down the columns (not installed).
 *
 * Four output rows of one column (a tile) read six input rows:
 * y = Aᵀ [(G g) ⊙ (Bᵀ d)]. The 6 products of the middle step, summed over
 * input channels, are 6 matrix products M[ξ] = U[ξ] · V[ξ], U[ξ] the
 * transformed weights (C_out × C_in, packed once), V[ξ] the transformed
 * input (C_in × tiles, a GEMM column per tile: tile row ty, column x):
 * 6 multiply-adds per input channel for 4 outputs instead of 12. Along a
 * tile row the tiles are the input's columns, so the transforms are
 * element-wise over rows (plain C compiled per instruction set, the same
 * operations on each). The transforms' coefficients (±1, ±2, ±4, ±5, 8;
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
  gint64 c_in, c_out, h, w, pt, oh;    /* output oh × w */
  gint64 th, tiles;                    /* tile rows ceil(oh / 4); tiles th · w */
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

/* TRUE when F(4, 3) down the columns is enabled and applies: a 3×1
 * kernel at stride 1 and dilation 1, one group, no side pads, the output
 * as wide as the input, and enough channels (K = C_in of the 6 products)
 * and rows for the transforms to pay. */
gboolean ir_winocol_applies (gint64 kh, gint64 kw, gint64 sh, gint64 sw, gint64 dh,
    gint64 dw, gint64 groups, gint64 pl, gint64 pr, gint64 w, gint64 ow, gint64 c_in,
    gint64 c_out, gint64 oh);

/* Transforms and packs @weights ([C_out][C_in][3][1]) for a layer on h × w
 * inputs with top pad @pt and an oh × w output, to run on up to @slices
 * threads. */
IrWinoCol *ir_winocol_new (const M2iGemmArch *arch, const float *weights, gint64 c_out,
    gint64 c_in, gint64 h, gint64 w, gint64 pt, gint64 oh, gint slices);

void ir_winocol_free (IrWinoCol *wc);

/* Bytes of scratch ir_winocol_run() needs for up to @slices slices. */
gsize ir_winocol_scratch_bytes (const IrWinoCol *wc, gint slices);

/* One image: @in (C_in × h × w) to @out (C_out × oh × w), then what
 * @fused says, over up to @slices threads. @scratch:
 * ir_winocol_scratch_bytes(), 64-byte aligned. */
void ir_winocol_run (const IrWinoCol *wc, const float *in, float *out,
    const M2iKFusion *fused, gint slices, float *scratch);

G_END_DECLS
