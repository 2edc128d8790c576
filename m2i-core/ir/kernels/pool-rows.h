/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* pool-rows.h — 2-D f32 MaxPool planes without indices by rows, for every
 * instruction set (not installed).
 *
 * The AVX-512 kernels of pool.c take 2-D max pooling whose windows they
 * know (max_plane_sep ()); elsewhere — AVX2, plain C, dilated columns,
 * other strides — MaxPool went through the per-tap row loop that also
 * tracks where each maximum came from, 30 times slower at the AVX2 level
 * on license-plate-recognition's three 3×3 MaxPools (1.8 ms of its 4.5).
 * Here each output row is two vectorizable passes: the maxima down the
 * window's rows of every input column it reads (pads -inf) into a row
 * buffer, then the maxima across the window's columns into the output
 * row. Each maximum is v > best ? v : best from -inf, which ignores NaN
 * as the scan does; outputs left at -inf (windows of only -inf, NaN or
 * pads) take the window's first element inside the input, as a scan
 * would. Compiled for AVX-512, AVX2 and plain C (M2I_K_SIMD_CLONES);
 * tests/ir/kernels/test-pool.c checks it against a naive loop at every
 * level.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
  gint64 h, w, oh, ow;                 /* input and output planes */
  gint64 kh, kw, sh, sw, dh, dw, pt, pl;
} IrPoolGeom;

/* Floats of the row buffer ir_pool_max_plane () needs. */
gsize ir_pool_rows_scratch (const IrPoolGeom *g);

/* @out (oh × ow) = the max pooling of @plane (h × w); @row: scratch of
 * ir_pool_rows_scratch () floats. */
void ir_pool_max_plane (const IrPoolGeom *g, const float *plane, float *out, float *row);

G_END_DECLS
