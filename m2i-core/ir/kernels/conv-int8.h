/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* conv-int8.h — Convolution on integers, for INT8 models (not installed).
 *
 * A quantized convolution as OpenVINO's low-precision transformations run
 * it: the activations quantized to u8 codes on a FakeQuantize's grid, the
 * weights i8 codes with one scale per output channel, products summed in
 * int32, and the sum turned back into the layer's f32 output:
 *
 *   code k  = FakeQuantize level of x: x <= lo ? 0 : x > hi ? L-1
 *             : nearbyint ((x - lo) / (hi - lo) · (L-1))   (the spec's f32 ops)
 *   real(k) = s_x · (k - z),  s_x = (out_hi - out_lo) / (L-1),  z = -out_lo / s_x
 *   w       = s_w[o] · q[o][i][ky][kx],  q in [-128, 127]
 *   acc     = Σ q · (k - zc)                                (int32, exact)
 *   y[o]    = acc · (s_x · s_w[o]) + (bias[o] - s_x · s_w[o] · (z - zc) · Σ q[o])
 *             then the activation (ReLU, PReLU, Swish), then f32 or the
 *             next FakeQuantize's level
 *
 * with zc the code nearest to z: the zero-point term -zc · Σ q is an
 * integer, the accumulator's start, so the float epilogue does not cancel
 * two large terms (z = 128 would make acc · s_x · s_w a hundred times the
 * result).
 *
 * Padding holds the code nearest to z, zc; when z is no integer (a
 * calibrated range whose zero falls between two levels), the outputs whose
 * window reaches into the padding get s_x · s_w[o] · (z - zc) · Σ q over
 * the padded taps added, so that padding is exactly real 0 as the
 * convolution's definition wants. The result differs from the float
 * emulation (FakeQuantize as its formula, then an f32 convolution) only by
 * the emulation's own float rounding: the codes are the emulation's levels,
 * and the integer sums are exact.
 *
 * Two ways to compute:
 *  - GEMM (any layer whose groups have a multiple of 4 input channels, or
 *    one group; one quantizer for the tensor). The input is copied once per
 *    inference into channel quads — for each group of 4 input channels,
 *    planes of pixels of 4 bytes (one code per channel) — padded with zc,
 *    and for strides over 1 split into phase planes (pixels (ry + sh·i,
 *    rx + sw·j)), so that every kernel tap of every output pixel is a fixed
 *    offset from it (stride 1 again). The product is then a matrix product
 *    read in place: A the weights packed [K/4][MR][4] (K = quads × taps,
 *    each step 4 input channels of one tap), B row p the source quad plane
 *    shifted by off[p], 4 bytes per output pixel — exactly the operand
 *    layout of vpdpbusd (u8 × i8, 4 products per int32 lane).
 *  - Depthwise (one input and one output channel per group; a quantizer
 *    per channel allowed, as NNCF and POT put on depthwise inputs). Each
 *    channel's plane is quantized into a padded plane of codes, then each
 *    output row sums kernel rows of taps 4 at a time: the 4 codes of taps
 *    (kx .. kx+3) of 16 output pixels are gathered into dwords by byte
 *    shuffles and multiplied by the 4 weights with one vpdpbusd.
 *
 * The int32 accumulator is exact for up to 32000 products per output
 * (c_in/groups · kh · kw); larger layers stay f32.
 */
#pragma once

#include "kernels-private.h"

G_BEGIN_DECLS

/* The geometry of a 2-D (or 1-D as H = 1) convolution. */
typedef struct {
  gint64 batch, c_in, h, w;
  gint64 c_out, oh, ow;
  gint64 kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
  gint64 groups;
} M2iKConvGeom;

/* A compiled f32 Convolution / GroupConvolution layer's geometry (after its
 * infer(), pads resolved); FALSE when @ctx holds no such state. */
gboolean ir_k_conv_geometry (const M2iOpContext *ctx, M2iKConvGeom *g);

/* What a layer applies after its bias: nothing, ReLU (max (y, 0)), PReLU
 * (y < 0 ? y·slope[c] : y) or Swish (y · sigmoid (beta·y), computed as the
 * Swish kernel does: ir_vm_swish, vmath.h). */
typedef enum {
  M2I_K_I8_ACT_NONE,
  M2I_K_I8_ACT_RELU,
  M2I_K_I8_ACT_PRELU,
  M2I_K_I8_ACT_SWISH,
} M2iKI8Act;

typedef struct {
  M2iKConvGeom g;
  const gint8 *weights;        /* [c_out][c_in/groups][kh][kw] codes */
  const float *w_scale;        /* c_out scales */
  /* The input's levels: of x over [in_lo, in_hi] (FakeQuantize's input
   * range), with real values grid_lo + k·(grid_hi - grid_lo)/(L-1) (its
   * output range). n_ranges entries each: 1, or c_in (one per input
   * channel: depthwise layers only). With codes_in, the input holds the
   * levels themselves (u8) and in_lo, in_hi are not used. */
  gint levels;                 /* 2 .. 256 */
  gint64 n_ranges;
  const float *in_lo, *in_hi, *grid_lo, *grid_hi;
  gboolean codes_in;
  /* The epilogue: + bias, then the activation. */
  const float *bias;           /* c_out, or NULL */
  M2iKI8Act act;
  const float *slope;          /* PReLU: n_slope values, 1 or c_out */
  gint64 n_slope;
  float swish_beta;            /* Swish */
  /* With codes_out, the output is the levels (u8) of a FakeQuantize of
   * out_levels over [out_lo, out_hi] applied to the result: the next
   * layer's input codes. With grid_out, it is that FakeQuantize's f32
   * output instead, its levels mapped onto [grid_out_lo, grid_out_hi] as
   * the FakeQuantize kernel computes them (for readers that want values).
   * n_out_ranges entries each: 1, or c_out. */
  gboolean codes_out;
  gint out_levels;
  gint64 n_out_ranges;
  const float *out_lo, *out_hi;
  gboolean grid_out;
  const float *grid_out_lo, *grid_out_hi;
} M2iKConvInt8Params;

typedef struct _M2iKConvInt8 M2iKConvInt8;

/* Why a layer cannot run on integers, or NULL when it can: groups that are
 * neither depthwise nor of a multiple of 4 input channels, per-channel
 * ranges on a layer that is not depthwise, a range that is empty or not
 * finite, sizes past the int32 accumulator's exact range. A static string. */
const char *ir_k_conv_int8_unsupported (const M2iKConvInt8Params *p);

/* Compiles the layer (copies what it needs: packs the weights, folds the
 * zero-point term into the bias); NULL with @why set to the reason
 * (static) when ir_k_conv_int8_unsupported() says one. */
M2iKConvInt8 *ir_k_conv_int8_new (const M2iKConvInt8Params *p, gint n_threads,
    const char **why);
void ir_k_conv_int8_free (M2iKConvInt8 *c);

/* Scratch bytes ir_k_conv_int8_run() needs. */
gsize ir_k_conv_int8_scratch_bytes (const M2iKConvInt8 *c);

/* out (NCHW, batch × c_out × oh × ow; f32, or u8 codes with codes_out) =
 * the layer applied to in (NCHW, f32 or u8 codes with codes_in);
 * @scratch: ir_k_conv_int8_scratch_bytes(), 64-byte aligned. Splits the
 * work over up to @slices (ir_k_parallel_for), at most the n_threads it
 * was made for. Allocates nothing. */
void ir_k_conv_int8_run (const M2iKConvInt8 *c, gconstpointer in, gpointer out,
    gpointer scratch, gint slices);

/* The kernel family in use ("vnni", "avx2", "c"; depthwise "vnni-dw",
 * "avx2-dw", "c-dw"): for tests and benchmarks. */
const char *ir_k_conv_int8_kernel_name (const M2iKConvInt8 *c);

/* TRUE when a depthwise layer of this geometry has a fast integer kernel on
 * this CPU (the C kernel is the reference, slower than the f32 one): the
 * low-precision pass leaves other depthwise layers in f32. */
gboolean ir_k_conv_int8_dw_fast (const M2iKConvGeom *g);

/* TRUE when the int8 family's level (ir_k_level (M2I_KERNELS_INT8)) has
 * a vector GEMM tile (VNNI or AVX2): the plain-C tile takes 3 to 4 times
 * the f32 kernel's time on every layer shape measured (bench-conv-int8),
 * so the low-precision pass leaves GEMM layers in f32 without one. With
 * one, the pass chooses per layer by estimated time, the FakeQuantize
 * passes each choice keeps counted (ir_k_conv_int8_cost, docs/int8.md). */
gboolean ir_k_conv_int8_gemm_fast (void);

/* What the low-precision pass weighs per layer (conv-int8-cost.c):
 * estimated times in ns at the current levels of the int8 and f32
 * kernels, from rates fitted to per-layer timings of the INT8 model set.
 * Estimates, for choosing: not for anything that must be exact. */
typedef enum {
  M2I_K_I8_OUT_F32,                    /* the layer's f32 result */
  M2I_K_I8_OUT_CODES,                  /* the next layers' codes */
  M2I_K_I8_OUT_VALUES,                 /* a FakeQuantize's f32 values */
} M2iKI8OutKind;

typedef enum {
  M2I_K_F32_CONV_GEMM,                 /* im2col / shifted GEMM */
  M2I_K_F32_CONV_WINOGRAD,
  M2I_K_F32_CONV_DIRECT,               /* depthwise / small groups */
} M2iKF32ConvMode;

/* The work counted: products as defined and as the integer kernels pad
 * them, values in and out, bytes the integer layer writes into its
 * source (channel quads, or depthwise padded planes), weights. */
typedef struct {
  double macs, padded_macs, in, out, quad_bytes, weights;
} M2iKI8Work;
void ir_k_conv_int8_work (const M2iKConvGeom *g, M2iKI8Work *w);

/* The layer on integers, reading codes or f32 values, writing @out. */
double ir_k_conv_int8_cost (const M2iKConvGeom *g, gboolean codes_in, M2iKI8OutKind out);
/* The layer in f32, run as @mode. */
double ir_k_conv_f32_cost (const M2iKConvGeom *g, M2iKF32ConvMode mode);
/* A FakeQuantize pass over @numel values; an activation run as its own
 * layer (a PReLU an f32 convolution does not take in). */
double ir_k_fq_pass_cost (gint64 numel);
double ir_k_act_pass_cost (gint64 numel);

/* The op kernel of a compiled integer layer: execute() runs ctx->state (an
 * M2iKConvInt8) on input 0; infer() refuses (the layer is made by the
 * low-precision pass, ir-lowp.c, not by the registry). */
extern const M2iOpKernel ir_kernel_conv_int8;

/* ---- shared by conv-int8*.c ------------------------------------------- */

#define M2I_K_I8_MR 8                  /* output channels per tile */
#define M2I_K_I8_NR 48                 /* output pixels (grid columns) per tile */
#define M2I_K_I8_MAX_PHASES 16

/* The quantizer: FakeQuantize's level of x over [lo, lo + d] with
 * lm1 = levels - 1 (mn, mx: the range's ends in order), z the code of the
 * padding. */
typedef struct {
  float lo, d, lm1, mn, mx;
  guint8 z;
} M2iKI8Quant;

/* The level of @v, as FakeQuantize computes it (f32; NaN: 0). */
guint8 ir_k_i8_quant (const M2iKI8Quant *q, float v);

/* The epilogue after y = acc · mul + add: the activation, then the f32
 * result, or its level by oq[c] (codes), or that level's value on
 * [glo[c], ghi[c]] (grid: a FakeQuantize's output). */
typedef struct {
  M2iKI8Act act;
  const float *slope;                  /* PReLU: per output channel */
  float beta;                          /* Swish */
  gboolean codes, grid;
  const M2iKI8Quant *oq;               /* codes, grid: per output channel */
  const float *glo, *ghi;              /* grid: per output channel */
} M2iKI8Out;

/* The activation of one value of channel @c (the reference every vector
 * epilogue equals). */
float ir_k_i8_activate (const M2iKI8Out *o, gint64 c, float y);

/* One row of a source quad: pixel x < n (4 bytes) holds, in byte j, the
 * level of rows[j][x0 + x·sw] — z where that column is outside [0, w) —
 * or fill[j] for every pixel when rows[j] is NULL (a padding row, or a
 * channel past the group's). Rows of f32 values (quantized by @q), or of
 * u8 codes (copied: _codes). The C loops, AVX-512's (NULL below that
 * level) and AVX2's (conv-int8-avx2.c; NULL below AVX2). */
typedef void (*M2iKI8CopyRow) (const M2iKI8Quant *q, gconstpointer const *rows,
    const guint8 *fill, gint64 x0, gint64 sw, gint64 w, gint64 n, guint8 *d);
void ir_k_i8_copy_row_c (const M2iKI8Quant *q, gconstpointer const *rows, const guint8 *fill,
    gint64 x0, gint64 sw, gint64 w, gint64 n, guint8 *d);
void ir_k_i8_copy_row_codes_c (const M2iKI8Quant *q, gconstpointer const *rows,
    const guint8 *fill, gint64 x0, gint64 sw, gint64 w, gint64 n, guint8 *d);
M2iKI8CopyRow ir_k_i8_copy_row_avx512 (M2iCpuFlags level, gboolean codes);
M2iKI8CopyRow ir_k_i8_copy_row_avx2 (M2iCpuFlags level, gboolean codes);

/* d[i] = the level of x[i], i < n: the same quantizer, one channel. */
typedef void (*M2iKI8QuantRow) (const M2iKI8Quant *q, const float *x, gint64 n, guint8 *d);
void ir_k_i8_quant_row_c (const M2iKI8Quant *q, const float *x, gint64 n, guint8 *d);
M2iKI8QuantRow ir_k_i8_quant_row_avx512 (M2iCpuFlags level);
M2iKI8QuantRow ir_k_i8_quant_row_avx2 (M2iCpuFlags level);

/* Where a GEMM tile's results go: row r (output channel c0 + r, r < rows)
 * of grid columns [0, NR): y = acc · mul[r] + add[r] (+ fix[r][n]), then
 * the epilogue
 * @o (for channel c0 + r). Columns come in 3 groups of 16; lane l of run q
 * (bit l of run_mask[q]) goes to element r·ldo + run_at[q] + l of out
 * (f32, or u8 with codes), for q in [run_start[g], run_start[g + 1]) of
 * group g. */
typedef struct {
  gpointer out;
  gsize ldo;
  gint rows;
  gint64 c0;
  const gint32 *ibias;                 /* the accumulators' start, per row */
  const float *mul, *add;
  /* Codes straight from the sum, where the epilogue allows (see
   * ir_k_i8_direct): t = acc · dmul[r] + dadd[r], its level the rounded t
   * clamped to [0, L-1]. NULL: the full epilogue. Kernels may ignore it. */
  const float *dmul, *dadd;
  const float *fix;                    /* [MR][NR] padding terms added, or NULL */
  const M2iKI8Out *o;
  const guint8 *run_start;             /* 4 entries */
  const guint16 *run_mask;
  const gint32 *run_at;
} M2iKI8Store;

/* acc[r][n] = ibias[r] + Σ_{p < k4} Σ_{j < 4} a[(p·MR + r)·4 + j] · b[off[p] + n·4 + j]
 * with a the packed weights (int8, or int16 for the kernels that ask for
 * them) and b u8 (the source), then stored as @st says. */
typedef void (*M2iKI8Micro) (gint k4, const void *a, const guint8 *b, const gint64 *off,
    const M2iKI8Store *st);

/* The kernels of each instruction set, for @level (ir_k_level
 * (M2I_KERNELS_INT8), or a candidate being measured): VNNI at the AVX-512
 * level where the CPU has it, int8 weights; AVX2 at the AVX2 and AVX-512
 * levels, int16 weights (conv-int8-avx2.c); NULL otherwise (the C loops). */
M2iKI8Micro ir_k_i8_micro_vnni (M2iCpuFlags level);
M2iKI8Micro ir_k_i8_micro_avx2 (M2iCpuFlags level);

/* The narrow tile, for layers whose whole output grid is at most 16
 * pixels (a network's last layers, 1×1 outputs), where the tile's 48
 * columns would be mostly idle: 16 output channels (two MR blocks, @a
 * packed [k4][16][4]) × columns 0 .. n - 1 (n <= 16), the weights the
 * vector and each pixel's codes a broadcast. The sums as M2iKI8Micro's;
 * rows 0-7 stored as @st0 says, rows 8-15 as @st1 (NULL: none), whose
 * runs must lie in columns below n. VNNI at the AVX-512 level, else NULL. */
typedef void (*M2iKI8Narrow) (gint k4, const gint8 *a, const guint8 *b, const gint64 *off,
    gint n, const M2iKI8Store *st0, const M2iKI8Store *st1);
M2iKI8Narrow ir_k_i8_narrow_vnni (M2iCpuFlags level);

/* Stores row @r's results @v (NR floats: acc · mul + add, before the
 * activation) as @st says — the scalar epilogue every kernel's stores must
 * equal. */
void ir_k_i8_store_row (const float *v, gint r, const M2iKI8Store *st);

/* Range @i's zero point: real 0 as a code, maybe between two. */
double ir_k_i8_zero_point (const M2iKConvInt8Params *p, gint64 i);
/* TRUE when zero point @z is code @code but for the ranges' own rounding
 * (within 10^-4 of a step): padding with the code is then exact enough
 * that no correction is made. */
gboolean ir_k_i8_zero_is_code (double z, guint8 code);
/* The quantizer of @levels over [lo, hi], padding with the code nearest
 * to @z (within [0, levels - 1]). */
M2iKI8Quant ir_k_i8_quantizer (gint levels, float lo, float hi, double z);

/* The epilogue of @p (slopes expanded to one per channel); owned. */
M2iKI8Out *ir_k_i8_out_new (const M2iKConvInt8Params *p);
void ir_k_i8_out_free (M2iKI8Out *o);

/* For codes of channel @c whose epilogue is only the next quantizer's
 * affine map — no activation, or ReLU before levels over a range from 0
 * up (whose clamp does the same) — the level is round ((acc · mul + add -
 * lo) · (L-1)/d) clamped: one FMA from the sum, t = acc · *dmul + *dadd.
 * TRUE and the two factors then; FALSE when the epilogue is more. The
 * folded factors move t by a few ulps: a kernel using them takes the full
 * epilogue where t is that close to a half, so the codes are the same. */
gboolean ir_k_i8_direct (const M2iKI8Out *o, gint64 c, float mul, float add, float *dmul,
    float *dadd);

/* The epilogue of @n values @v (acc · mul + add) of channel @c into @out
 * (f32, or codes): the scalar reference. */
void ir_k_i8_finish_row (const M2iKI8Out *o, gint64 c, const float *v, gint64 n,
    gpointer out);

/* Padding correction: an output whose window reaches into the padding
 * gets coef[c] times the sum of tap_sum[c][t] over its padded taps t
 * (kh·kw per channel) added to acc · mul + add, before the activation.
 * _new copies @tap_sum and @coef (@channels entries); _row gives the term
 * of output row @y of channel @c (ow values into @v, 0 where none) and
 * returns FALSE when the whole row has none. */
typedef struct _M2iKI8PadFix M2iKI8PadFix;
M2iKI8PadFix *ir_k_i8_pad_fix_new (const M2iKConvGeom *g, gint64 channels,
    const float *tap_sum, const float *coef);
void ir_k_i8_pad_fix_free (M2iKI8PadFix *f);
gboolean ir_k_i8_pad_fix_row (const M2iKI8PadFix *f, gint64 c, gint64 y, float *v);
/* The terms of a GEMM panel: fix[r][n] for channels [c0, c0 + rows) and
 * grid columns n0 + n, n < NR, of a grid @wq wide (0 where the column is
 * no output). */
void ir_k_i8_pad_fix_panel (const M2iKI8PadFix *f, gint64 c0, gint rows, gint64 n0,
    gint64 wq, float *fix);

/* The GEMM layers (conv-int8-gemm.c). */
typedef struct _M2iKI8Gemm M2iKI8Gemm;
M2iKI8Gemm *ir_k_i8_gemm_new (const M2iKConvInt8Params *p, gint slices);
void ir_k_i8_gemm_free (M2iKI8Gemm *m);
gsize ir_k_i8_gemm_scratch_bytes (const M2iKI8Gemm *m);
const char *ir_k_i8_gemm_kernel_name (const M2iKI8Gemm *m);
void ir_k_i8_gemm_run (const M2iKI8Gemm *m, gconstpointer in, gpointer out, gpointer scratch,
    gint slices);

/* The depthwise layers (conv-int8-dw.c). */
typedef struct _M2iKI8Dw M2iKI8Dw;
M2iKI8Dw *ir_k_i8_dw_new (const M2iKConvInt8Params *p, gint slices);
void ir_k_i8_dw_free (M2iKI8Dw *d);
gsize ir_k_i8_dw_scratch_bytes (const M2iKI8Dw *d);
const char *ir_k_i8_dw_kernel_name (const M2iKI8Dw *d);
void ir_k_i8_dw_run (const M2iKI8Dw *d, gconstpointer in, gpointer out, gpointer scratch,
    gint slices);

/* One output row of a depthwise channel c: out[x] = the epilogue @o of
 * acc · mul + add (+ fix[x]) for x < n, acc = ibias + Σ_ky Σ_g Σ_j w[(ky·n_g + g)·4 + j] ·
 * rows[ky][x·sw + (4g + j)·dw], n_g = ceil (kw / 4) groups of 4 taps (the
 * weights past kw are 0). Rows have their padding and at least 64 bytes
 * of slack after what the taps read. */
typedef struct {
  const guint8 *const *rows;           /* kh rows of codes, at the row's x = 0 */
  gint kh, n_g;
  gint64 sw, dw;
  const gint8 *w;
  gint32 ibias;                        /* the accumulator's start */
  float mul, add;
  gboolean direct;                     /* codes straight from the sum (ir_k_i8_direct) */
  float dmul, dadd;
  const float *fix;                    /* n padding terms added, or NULL */
  const M2iKI8Out *o;
  gint64 c;
  gpointer out;                        /* f32, or u8 with o->codes */
  gint64 n;
} M2iKI8DwRow;
typedef void (*M2iKI8DwRowFunc) (const M2iKI8DwRow *r);
void ir_k_i8_dw_row_c (const M2iKI8DwRow *r);
/* VNNI (with AVX-512 BW byte shuffles) at the AVX-512 level, AVX2
 * (vpmaddwd on pairs of taps) at the AVX2 and AVX-512 levels, for sw 1 or
 * 2 and dw 1; NULL otherwise. */
M2iKI8DwRowFunc ir_k_i8_dw_row_vnni (M2iCpuFlags level, gint64 sw, gint64 dw);
M2iKI8DwRowFunc ir_k_i8_dw_row_avx2 (M2iCpuFlags level, gint64 sw, gint64 dw);

G_END_DECLS
