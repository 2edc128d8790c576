/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* conv-small.h — direct convolution for layers whose output plane is a few
 * pixels (not installed).
 *
 * The GEMM path puts output pixels along the vector: on a 5×5 output
 * (vehicle-attributes' 128→128 3×3 layers) that is 25 columns, one full
 * vector and one of 9 lanes, or a tail kernel re-reading the weights.
 * Here output channels run along the vector instead (16 to an AVX-512
 * vector, 8 to an AVX2 one) and pixels down the register tile:
 *
 *   out[co][j] = Σ_{t} Σ_{ci} w[co][ci][t] · in[ci][pix (j, t)]
 *
 * summed taps outermost, then input channels, for each output pixel j of
 * the plane and tap t (kh, kw) reading input pixel pix (j, t), or a zero
 * where it falls on a pad. The weights are packed once, at compile time,
 * as [channel group][tap][ci][group] (a tile's channel vectors at fixed
 * offsets of one row, each tile's weights one sequential stream), and each tile keeps one pointer per pixel into the
 * input (NCHW, read in place: channels a plane apart), a pad tap pointing
 * into a plane of zeros the state owns instead. Nothing is copied per run;
 * bias and ReLU are applied when the tile's sums are written out, channel
 * by channel, into the NCHW output.
 *
 * The tile kernels exist in plain C (conv-small.c: the reference and the
 * level-0 path), AVX2 (conv-small-avx2.c) and AVX-512
 * (conv-small-avx512.c); tests/ir/kernels/test-conv.c checks each against
 * a naive loop.
 */
#pragma once

#include "kernels-private.h"

G_BEGIN_DECLS

/* Output pixels a layer may have on this path (ir_small_applies). */
#define IR_SMALL_MAX_PIXELS 256

typedef struct _IrSmallConv IrSmallConv;

/* One register tile: output pixels [p0, p0 + np) and @nv channel vectors
 * from output channel @c0, the sums written to @sums [pixel][ld] (at
 * sums[p · ld + c] for channel c, pixel p of the plane). */
typedef void (*IrSmallTile) (const IrSmallConv *s, const float *in, gint64 p0, gint np,
    gint c0, gint nv, float *sums, gsize ld);

/* Writes channels [c0, c0 + nc) of @sums ([pixels][ld]) to @out as
 * out[c · pixels + p] = sums[p · ld + c] (+ bias[c] when @bias, then
 * max (·, 0) when @relu); @c0 a multiple of the arch's lanes. */
typedef void (*IrSmallPut) (const float *sums, gsize ld, gint64 pixels, gint c0, gint nc,
    const float *bias, gboolean relu, float *out);

/* The tile shape of an instruction set: at most @pixels pixels by
 * @vectors vectors of @lanes channels. */
typedef struct {
  gint pixels, vectors, lanes;
  IrSmallTile (*tile) (gint np, gint nv);   /* np <= pixels, nv <= vectors */
  IrSmallPut put;
} IrSmallArch;

struct _IrSmallConv {
  gint64 c_in, h, w, c_out, oh, ow;
  gint64 taps, group, cpad;            /* kh · kw; channels of a tile (the arch's
                                        * vectors · lanes); C_out rounded up to that */
  float *wts;                          /* [cpad / group][taps][c_in][group], zero past c_out */
  gint32 *tab;                         /* [taps][oh · ow]: input offset in a plane, or -1 */
  float *zeros;                        /* c_in planes' worth of zeros (pad taps) */
  const IrSmallArch *arch;
};

/* Whether the path is on: the environment variable M2I_CONV_SMALL ("0"
 * turns it off), or what ir_small_set_enabled() set; for tests and
 * benchmarks comparing the paths. */
gboolean ir_small_enabled (void);
void ir_small_set_enabled (gboolean on);

/* TRUE when a layer of these sizes (its weights constant) takes this
 * path: one group, at most IR_SMALL_MAX_PIXELS output pixels, at least
 * 16 output channels, not pointwise at stride 1, not a line (conv-small.c
 * says what was measured). */
gboolean ir_small_applies (gint64 groups, gint64 c_in, gint64 h, gint64 w, gint64 c_out,
    gint64 oh, gint64 ow, gint64 kh, gint64 kw, gint64 sh, gint64 sw, gint64 pt, gint64 pl);

/* A layer's state: @weights [c_out][c_in][kh][kw] packed, the pixel table
 * made, for @level's tiles. Free with ir_small_free(). */
IrSmallConv *ir_small_new (M2iCpuFlags level, const float *weights, gint64 c_in, gint64 h,
    gint64 w, gint64 c_out, gint64 oh, gint64 ow, gint64 kh, gint64 kw, gint64 sh, gint64 sw,
    gint64 dh, gint64 dw, gint64 pt, gint64 pl);
void ir_small_free (IrSmallConv *s);

/* Bytes of scratch ir_small_run() needs. */
gsize ir_small_scratch_bytes (const IrSmallConv *s);

/* One image: @in [c_in][h][w] to @out [c_out][oh][ow], + bias[co] when
 * @bias, then max (·, 0) when @relu; the output channels split over up
 * to @slices slices. @scratch: ir_small_scratch_bytes(), 64-byte aligned.
 * Allocates nothing. */
void ir_small_run (const IrSmallConv *s, const float *in, float *out, const float *bias,
    gboolean relu, gint slices, float *scratch);

/* The instruction sets' tiles (NULL where not compiled). */
const IrSmallArch *ir_small_arch_avx512 (void);
const IrSmallArch *ir_small_arch_avx2 (void);

G_END_DECLS
