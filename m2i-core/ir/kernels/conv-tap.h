/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* conv-tap.h — direct kernels for stride-1 convolutions whose taps lie in
 * a line, 1×K or K×1, padded to keep the plane's size (not installed).
 *
 * license-plate-recognition's 1×3 and 3×1 layers (64×11×90, 32×22×92)
 * ran through the GEMM with B read in place (conv-edges.h): every column
 * panel that touches a row's end (half of them on 90-wide rows) copied
 * two thirds of its B rows to zero the pad lanes, a tenth of the 1×3
 * layers' time. Here the tile reads the input directly instead:
 *
 *   out[co][q] = Σ_{ci} Σ_{t} w[co][ci][t] · in[ci][q + toff[t]]
 *
 * for output pixel q of the plane (the output plane is the input's, h × w),
 * toff[t] = (kh·dh − pt)·w + kw·dw − pl of tap t, a lane that falls on a
 * pad reading 0. Output pixels run along the vector (a column panel of the
 * GEMM's width: 48 with AVX-512, 24 with AVX2, 8 in plain C), output
 * channels down the register tile (the GEMM's packed weights, MR rows a
 * panel), summed in the GEMM's order (ci, then the taps), then + bias and
 * ReLU when fused. Panels whose lanes all read inside the image load
 * plainly; the others mask each tap's vectors (conv-edges.h's lane bits),
 * nothing copied, and skip the taps that read only pads there (the row
 * above a panel of the first row: a third of a 3×1 layer's first and
 * last panels). The input channels go in blocks whose panel lines fit
 * the first-level cache (IrTapGeom.cin_block), each block through every
 * row block of the panel, the sums kept in the output between blocks:
 * a 3×1 layer of 64 channels reads three rows of each, 48 KiB a panel.
 *
 * The tile kernels exist in plain C (conv-tap.c: the reference, used with
 * the plain-C GEMM), AVX2 (conv-tap-avx2.c) and AVX-512
 * (conv-tap-avx512.c), the instruction set the GEMM family's (the packed
 * weights are laid out for its tile); tests/ir/kernels/test-conv.c checks
 * each against a naive loop.
 */
#pragma once

#include "conv-edges.h"
#include "gemm.h"

G_BEGIN_DECLS

/* Taps a layer may have on this path (1×K or K×1, K at most this). */
#define IR_TAP_MAX 7

typedef struct {
  IrEdgeGeom edge;                     /* oh == h, ow == w */
  gsize plane;                         /* h · w, floats between input channels */
  gint cin_g, taps;                    /* K = cin_g · taps */
  gint cin_block;                      /* input channels a pass of the tiles takes */
  gint32 toff[IR_TAP_MAX];
  gint mr, nr;                         /* the packed weights' panel rows; panel width */
} IrTapGeom;

/* Output pixels [n0, n0 + ncols) (ncols <= g->nr) of @rows output channels:
 * @a the packed weights of the first (panels of g->mr rows, [k][mr]
 * each, as ir_gemm_pack_a () lays them out), @in the group's first input
 * channel, @out that first output channel's plane (planes @ldc apart),
 * @bias its bias (+ bias[i] on row i) or NULL, then max (·, 0) when @relu. */
typedef void (*IrTapPanel) (const IrTapGeom *g, const float *a, gint rows, const float *in,
    gint64 n0, gint ncols, float *out, gsize ldc, const float *bias, gboolean relu);

/* TRUE when a convolution runs on this path: strides 1, the output plane
 * the input's (oh == h, ow == w), a kernel of 1×K or K×1 with 2 <= K <=
 * IR_TAP_MAX, K·cin_g (@k) at most M2I_GEMM_MAX_KC. */
gboolean ir_tap_applies (gint64 h, gint64 w, gint64 oh, gint64 ow, gint64 kh, gint64 kw,
    gint64 sh, gint64 sw, gint64 k);

/* Fills @g for a layer ir_tap_applies () accepted, with @arch's tile. */
void ir_tap_geom_init (IrTapGeom *g, const IrEdgeGeom *e, gint64 cin_g,
    const M2iGemmArch *arch);

/* The tile kernel matching @arch (whose packed weights it reads): AVX-512,
 * AVX2 or plain C. Never NULL. */
IrTapPanel ir_tap_panel_for (const M2iGemmArch *arch);

/* The plain-C kernel (any tile) and the instruction-set ones (NULL where
 * not compiled; for @arch's avx512 and avx2 tiles only). */
void ir_tap_panel_c (const IrTapGeom *g, const float *a, gint rows, const float *in,
    gint64 n0, gint ncols, float *out, gsize ldc, const float *bias, gboolean relu);
IrTapPanel ir_tap_panel_avx2 (void);
IrTapPanel ir_tap_panel_avx512 (void);

G_END_DECLS
