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
 *   acc     = Σ q · k                                       (int32, exact)
 *   y[o]    = acc · (s_x · s_w[o]) + (bias[o] - s_x · s_w[o] · z · Σ q[o])
 *             then ReLU when fused
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

typedef struct {
  M2iKConvGeom g;
  const gint8 *weights;        /* [c_out][c_in/groups][kh][kw] codes */
  const float *w_scale;        /* c_out scales */
  gint levels;                 /* 2 .. 256 */
  /* The quantizer: levels of x over [in_lo, in_hi], whose real values are
   * out_lo + k·(out_hi - out_lo)/(L-1). n_ranges entries each: 1, or
   * c_in (one per input channel: depthwise layers only). */
  gint64 n_ranges;
  const float *in_lo, *in_hi, *out_lo, *out_hi;
  const float *bias;           /* c_out, or NULL */
  gboolean relu;
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

/* out (f32 NCHW, batch × c_out × oh × ow) = the layer applied to in (f32
 * NCHW); @scratch: ir_k_conv_int8_scratch_bytes(), 64-byte aligned. Splits
 * the work over up to @slices (ir_k_parallel_for), at most the n_threads
 * it was made for. Allocates nothing. */
void ir_k_conv_int8_run (const M2iKConvInt8 *c, const float *in, float *out,
    gpointer scratch, gint slices);

/* The kernel family in use ("vnni", "avx2", "c"; depthwise "vnni-dw",
 * "c-dw"): for tests and benchmarks. */
const char *ir_k_conv_int8_kernel_name (const M2iKConvInt8 *c);

/* TRUE when a depthwise layer of this geometry has a fast integer kernel on
 * this CPU (the C kernel is the reference, slower than the f32 one): the
 * low-precision pass leaves other depthwise layers in f32. */
gboolean ir_k_conv_int8_dw_fast (const M2iKConvGeom *g);

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

/* One row of a source quad: pixel x < n (4 bytes) holds, in byte j, the
 * level of rows[j][x0 + x·sw] — z where that column is outside [0, w) —
 * or fill[j] for every pixel when rows[j] is NULL (a padding row, or a
 * channel past the group's). The C loop, and AVX-512's (NULL without). */
typedef void (*M2iKI8CopyRow) (const M2iKI8Quant *q, const float *const *rows,
    const guint8 *fill, gint64 x0, gint64 sw, gint64 w, gint64 n, guint8 *d);
void ir_k_i8_copy_row_c (const M2iKI8Quant *q, const float *const *rows, const guint8 *fill,
    gint64 x0, gint64 sw, gint64 w, gint64 n, guint8 *d);
M2iKI8CopyRow ir_k_i8_copy_row_avx512 (void);

/* d[i] = the level of x[i], i < n: the same quantizer, one channel. */
typedef void (*M2iKI8QuantRow) (const M2iKI8Quant *q, const float *x, gint64 n, guint8 *d);
void ir_k_i8_quant_row_c (const M2iKI8Quant *q, const float *x, gint64 n, guint8 *d);
M2iKI8QuantRow ir_k_i8_quant_row_avx512 (void);

/* Where a GEMM tile's results go: row r (output channel o0 + r, r < rows)
 * of grid columns [0, NR): y = acc · mul[r] + add[r], then max (y, 0) when
 * relu. Columns come in 3 groups of 16; lane l of run q (bit l of
 * run_mask[q]) goes to out + r·ldo + run_at[q] + l, for q in
 * [run_start[g], run_start[g + 1]) of group g. */
typedef struct {
  float *out;
  gsize ldo;
  gint rows;
  const float *mul, *add;
  gboolean relu;
  const guint8 *run_start;             /* 4 entries */
  const guint16 *run_mask;
  const gint32 *run_at;
} M2iKI8Store;

/* acc[r][n] = Σ_{p < k4} Σ_{j < 4} a[(p·MR + r)·4 + j] · b[off[p] + n·4 + j]
 * with a the packed weights (int8, or int16 for the kernels that ask for
 * them) and b u8 (the source), then stored as @st says. */
typedef void (*M2iKI8Micro) (gint k4, const void *a, const guint8 *b, const gint64 *off,
    const M2iKI8Store *st);

M2iKI8Micro ir_k_i8_micro_vnni (void);   /* NULL without AVX-512 VNNI; int8 weights */
M2iKI8Micro ir_k_i8_micro_avx2 (void);   /* NULL without AVX2; int16 weights */

/* Stores row @r's results @v (NR floats: acc · mul + add, before ReLU) as
 * @st says — the scalar epilogue every kernel's stores must equal. */
void ir_k_i8_store_row (const float *v, gint r, const M2iKI8Store *st);

/* Range @i's zero point (real 0 as a code, maybe between two), and its
 * quantizer (z: the nearest code, within [0, levels - 1]). */
double ir_k_i8_zero_point (const M2iKConvInt8Params *p, gint64 i);
M2iKI8Quant ir_k_i8_quantizer (const M2iKConvInt8Params *p, gint64 i, double *z);

/* Padding correction of @channels output planes (@out, oh·ow apart): each
 * output whose window reaches into the padding gets coef[c] times the sum
 * of tap_sum[c][t] over its padded taps t (kh·kw per channel); then ReLU
 * over the planes when @relu. */
void ir_k_i8_pad_fix (const M2iKConvGeom *g, gint64 channels, const float *tap_sum,
    const float *coef, float *out, gboolean relu);

/* The depthwise layers (conv-int8-dw.c). */
typedef struct _M2iKI8Dw M2iKI8Dw;
M2iKI8Dw *ir_k_i8_dw_new (const M2iKConvInt8Params *p, gint slices);
void ir_k_i8_dw_free (M2iKI8Dw *d);
gsize ir_k_i8_dw_scratch_bytes (const M2iKI8Dw *d);
const char *ir_k_i8_dw_kernel_name (const M2iKI8Dw *d);
void ir_k_i8_dw_run (const M2iKI8Dw *d, const float *in, float *out, gpointer scratch,
    gint slices);

/* One output row of a depthwise channel: out[x] = acc · mul + add (then
 * ReLU) for x < n, acc = Σ_ky Σ_g Σ_j w[(ky·n_g + g)·4 + j] ·
 * rows[ky][x·sw + (4g + j)·dw], n_g = ceil (kw / 4) groups of 4 taps (the
 * weights past kw are 0). Rows have their padding and at least 64 bytes
 * of slack after what the taps read. */
typedef struct {
  const guint8 *const *rows;           /* kh rows of codes, at the row's x = 0 */
  gint kh, n_g;
  gint64 sw, dw;
  const gint8 *w;
  float mul, add;
  gboolean relu;
  float *out;
  gint64 n;
} M2iKI8DwRow;
typedef void (*M2iKI8DwRowFunc) (const M2iKI8DwRow *r);
void ir_k_i8_dw_row_c (const M2iKI8DwRow *r);
/* VNNI (with AVX-512 BW byte shuffles) for sw 1 or 2 and dw 1; NULL
 * otherwise. */
M2iKI8DwRowFunc ir_k_i8_dw_row_vnni (gint64 sw, gint64 dw);

G_END_DECLS
