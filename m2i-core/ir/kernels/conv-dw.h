/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* conv-dw.h — direct depthwise and small-group convolution (not installed).
 *
 * A GroupConvolution whose groups have few input channels (one: depthwise,
 * MobileNet's 3×3 layers; or a handful) does a few multiply-adds per output
 * per input channel: as a matrix product its tiles would be mostly empty.
 * It runs directly instead, one output plane at a time:
 *
 *   out[y][x] = Σ_{ci < cin_g} Σ_{kh, kw} w[ci][kh][kw] ·
 *               in[ci][y·sh + kh·dh − pt][x·sw + kw·dw − pl]
 *
 * (0 outside the image), summed in the order ci, kh, kw, then + bias, then
 * ReLU when fused (the float operations of the Add and ReLU layers), or a
 * fused Swish on the rows just written.
 * Lanes run along a row of outputs: for every tap a vector of W outputs
 * takes one load (stride 2: two loads and a permute) and one FMA; columns
 * whose taps all read inside the row (almost all) use plain loads, the
 * few at the row's ends masked ones, and kernel rows that fall outside
 * the image are skipped. 3×3 and 5×5 kernels at strides 1 and 2 have
 * their own unrolled copies; others run the same code with run-time
 * sizes, strides above 2 the plain-C kernel.
 *
 * Depthwise 3×3 and 5×5 layers whose rows waste most of a vector (short
 * rows late in a network) run through the plane kernel instead (IrDwPlane,
 * AVX-512): lanes along the whole plane. One output per plane over the
 * whole input plane is a dot product (ir_dw_rows_dot).
 *
 * The row kernels exist in plain C (conv-dw.c: the reference, used when
 * neither AVX2 nor AVX-512 may be), AVX2 (conv-dw-avx2.c) and AVX-512
 * (conv-dw-avx512.c); tests/ir/kernels/test-conv.c checks each against a
 * naive loop.
 */
#pragma once

#include "kernels-private.h"

G_BEGIN_DECLS

/* Grids of at most this many vectors of 16 run through the plane kernel
 * (a 150×150 plane at stride 1 is 1416), rows of at most IR_DW_PLANE_CHUNKS. */
#define IR_DW_PLANE_VECTORS 2048
#define IR_DW_PLANE_CHUNKS 16

/* The geometry of one layer (as ConvState's; 1-D layers have h = 1). */
typedef struct {
  gint64 h, w, oh, ow;                 /* input and output planes */
  gint64 kh, kw, sh, sw, dh, dw, pt, pl;
  gint64 cin_g;                        /* input planes each output plane reads */
  /* Output columns [x_lo, x_hi) read only inside their input row for every
   * tap, including the odd element a stride-2 pair of loads also reads:
   * a vector of outputs inside them needs no masks. */
  gint64 x_lo, x_hi;
  /* The plane kernel (IrDwPlane, below; gw = 0 when it does not apply):
   * the input copied into s² slot planes of gh rows of gw columns, `slot`
   * floats apart; the output computed on the gw-wide grid, nv vectors of
   * 16, keep[v] the lanes of vector v that are outputs (the others are
   * grid columns past ow; nv + 8 entries, zeros past nv). Stride 1:
   * fill[v] the lanes of the slot plane's vector v that are image pixels
   * (the others pads), for its nf vectors. keep and fill are owned
   * (ir_dw_geom_clear ()). */
  gint64 gw, gh, slot, nv, nf;
  guint16 *keep, *fill;
  /* 3×3 at stride 1 keeping the plane's size (oh = h, ow = w; pads 1 before
   * the rows and columns, after them by the size): the plane kernel
   * reads the input in place instead (no slot planes, no scratch), on the
   * grid of the output itself (gw = w); cols[v·k + c] the lanes of vector
   * v whose tap column c reads inside their row, rows[u·k + r] the lanes
   * inside the plane of the load of vector u's taps of kernel row r
   * (nv + 9 vectors each; owned, NULL for the slot planes). */
  guint16 *cols, *rows;
} IrDwGeom;

/* Rows [y0, y1) of one output plane @out (row stride ow). @in is the
 * first of the cin_g input planes, @in_plane floats apart; @w the output
 * channel's cin_g·kh·kw weights; @bias its bias or NULL; @relu applies
 * max (·, 0) last. */
typedef void (*IrDwRows) (const IrDwGeom *g, const float *in, gsize in_plane, const float *w,
    const float *bias, gboolean relu, float *out, gint64 y0, gint64 y1);

/* TRUE when a convolution of @groups groups of @cin_g input and @cout_g
 * output channels runs directly rather than as a matrix product: one
 * input channel per group, or a grouped layer whose groups are small. */
gboolean ir_dw_applies (gint64 groups, gint64 cin_g, gint64 cout_g);

/* Fills the derived fields of @g (x_lo, x_hi) from the others. */
void ir_dw_geom_init (IrDwGeom *g);

/* Frees what ir_dw_plane_for () allocated in @g. */
void ir_dw_geom_clear (IrDwGeom *g);

/* The row kernel for @g at the instruction set level @level (the dot
 * product below for one output covering the plane; else AVX-512 when
 * it has M2I_CPU_AVX512F, AVX2 when it has M2I_CPU_AVX2, else plain C),
 * never above what m2i_cpu_flags() allows (FMA included). Never NULL. */
IrDwRows ir_dw_rows_for (const IrDwGeom *g, M2iCpuFlags level);

/* The plain-C kernel (any geometry) and the instruction-set ones, which
 * return NULL for geometries they leave to plain C (strides above 2) and
 * where not compiled. */
void ir_dw_rows_c (const IrDwGeom *g, const float *in, gsize in_plane, const float *w,
    const float *bias, gboolean relu, float *out, gint64 y0, gint64 y1);
IrDwRows ir_dw_rows_avx2 (const IrDwGeom *g);

/* The kernel of a layer with one output per plane whose kernel covers
 * the whole input plane, without pads or dilation (any level). Relies
 * on the cin_g input planes being contiguous (in_plane = h·w). */
void ir_dw_rows_dot (const IrDwGeom *g, const float *in, gsize in_plane, const float *w,
    const float *bias, gboolean relu, float *out, gint64 y0, gint64 y1);
IrDwRows ir_dw_rows_avx512 (const IrDwGeom *g);

/* Small planes: a whole output plane at once, lanes along the plane rather
 * than along a row (a 19-pixel row is two vectors of 16, 59 % used; a
 * 19×19 plane 24 vectors, 94 %). The input plane is copied with its pads
 * into the slice's @scratch as s² slot planes of gw-column rows, slot
 * (b, d) holding padded pixel (s·r + b, s·x + d) at row r, column x, so
 * tap (kh, kw) of the output at grid position j = y·gw + x reads slot
 * (kh mod s, kw mod s) at j + (kh / s)·gw + kw / s: every tap is one
 * plain load at a fixed offset, with no row ends and no masks; the grid
 * columns past ow are dropped when storing. Depthwise layers only (one
 * input channel per output plane), strides 1 and 2, square kernels,
 * no dilation. Sums in the order kh, kw, + bias, ReLU, as IrDwRows.
 * A layer keeping the plane's size at stride 1 (g->cols) reads its input
 * in place instead: the grid is the output plane itself, the taps above
 * and below the image zeroed by masked loads at the plane's ends, those
 * left and right of a row (which wrap onto the row before or after)
 * left out of their sums by masked multiply-adds — the same sums, as
 * +0 or -0 added to a sum that is never -0 changes nothing. */
typedef void (*IrDwPlane) (const IrDwGeom *g, const float *in, const float *w,
    const float *bias, gboolean relu, float *out, float *scratch);

/* Fills g's plane fields and returns the plane kernel for @g at @level
 * (AVX-512 only), or NULL (and gw = 0) where it does not apply. Where it
 * applies it was faster than the row kernels on every plane measured,
 * 10×10 to 150×150 (docs/ir-runtime.md). */
IrDwPlane ir_dw_plane_for (IrDwGeom *g, M2iCpuFlags level);

/* Whether ir_dw_plane_for () may return a kernel: TRUE unless the
 * environment says M2I_DW_PLANE=0 (to time or test the row kernels on
 * every layer) or ir_dw_plane_set_enabled (FALSE) was called (tests). */
gboolean ir_dw_plane_enabled (void);
void ir_dw_plane_set_enabled (gboolean on);
IrDwPlane ir_dw_plane_avx512 (const IrDwGeom *g);

/* Floats of scratch one slice needs for the plane kernel of @g (0 when
 * it has none), a multiple of 16. The slack after each slot plane's grid
 * must hold finite values (ir_dw_run () zeroes it). */
gsize ir_dw_scratch_floats (const IrDwGeom *g);

/* Runs a whole layer: @batch images of @c_in input planes (@in) into
 * c_out = groups · cout_g output planes (@out), weights @wts as
 * GroupConvolution lays them out ([G][cout_g][cin_g][kh][kw]), the fused
 * bias and ReLU or Swish of @f, split over @slices of the inference's threads
 * (tasks: an output plane, or a band of its rows when planes are fewer
 * than the slices). Whole planes go to @plane when not NULL, with @scratch
 * (@slices · ir_dw_scratch_floats () floats, 64-byte aligned). Allocates
 * nothing. */
void ir_dw_run (const IrDwGeom *g, IrDwRows rows, IrDwPlane plane, const float *in,
    const float *wts, const M2iKFusion *f, float *out, gint64 batch, gint64 c_in,
    gint64 c_out, gint64 cout_g, gint slices, float *scratch);

G_END_DECLS
