/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* m2i-npu.h — the device's int8 and fp16 compute engine.
 *
 * The engine computes as the AIE conv2d design does: activations in the
 * channel-blocked layout Y{C/8}X{C8} (with a batch dimension in front),
 * convolution weights in {O/8}{I/8}YX{I8}{O8}, int32 accumulation and
 * requantization to int8, or fp16 storage with fp32 accumulation.
 * docs/npu.md has the layouts in pictures, the requantization formulas and
 * the cost model.
 *
 * A layer is compiled once (m2i_npu_conv_new_*: validation, weight packing
 * into the kernels' format, folded biases) and run many times; running does
 * not allocate when the caller passes scratch memory. Outputs may be
 * channel views of a larger tensor (Concat without a copy).
 *
 * Errors are GErrors in the M2I_ERROR domain naming the argument at fault.
 */
#pragma once

#include <glib.h>
#include <m2i-core/base/m2i-export.h>
#include <m2i-core/base/m2i-fp16.h>
#include <m2i-core/mli/m2i-mli.h>

G_BEGIN_DECLS

typedef enum {
  M2I_NPU_INT8 = 0,        /* gint8 elements */
  M2I_NPU_FP16,            /* m2i_f16 elements */
} M2iNpuPrecision;

/*
 * Activations in the blocked layout N Y {C/8} X {C8}. Channel c of pixel
 * (b, y, x) is the element at
 *   data + b*batch_stride + y*row_stride + (c/8)*block_stride + x*8 + c%8
 * (in elements). Channels from c up to the next multiple of 8 are padding
 * lanes: the engine writes them with the output's zero (int8: the clamped
 * output zero point; fp16: 0) and never lets them affect a result.
 * Strides of 0 mean dense: block_stride = 8*w, row_stride =
 * ceil(c/8)*block_stride, batch_stride = h*row_stride. Non-zero strides
 * must nest (block >= 8w, row >= ceil(c/8)*block, batch >= h*row).
 */
typedef struct {
  M2iNpuPrecision precision;
  gpointer data;           /* borrowed; aligned to the element size */
  gsize capacity;          /* bytes available from data */
  gint n, c, h, w;
  gint64 block_stride, row_stride, batch_stride;
} M2iNpuTensor;

/* Bytes of a dense blocked tensor; 0 if a dimension is < 1. */
M2I_API gsize m2i_npu_tensor_bytes (M2iNpuPrecision p, gint n, gint c, gint h, gint w);

/* Describes a dense blocked tensor over @data (borrowed). */
M2I_API void m2i_npu_tensor_init (M2iNpuTensor *t, M2iNpuPrecision p, gint n, gint c,
    gint h, gint w, gpointer data, gsize capacity);

/* FALSE with a GError when @t is NULL, has NULL data, an unknown
 * precision, fp16 data at an odd address, a dimension outside [1, 2^20],
 * more than 2^31 rows of blocks,
 * a stride above 2^40 or strides that do not nest, or a capacity smaller
 * than its span. */
M2I_API gboolean m2i_npu_tensor_check (const M2iNpuTensor *t, GError **error);

/*
 * Makes @view the channels [@c0, @c0 + @nc) of @t (no copy), e.g. one input
 * of a channel Concat. @c0 must be a multiple of 8, and the view must end on
 * a multiple of 8 or at @t's last channel (so its padding lanes are not
 * another view's channels). FALSE with a GError otherwise; @view borrows
 * @t's buffer.
 */
M2I_API gboolean m2i_npu_tensor_channel_view (const M2iNpuTensor *t, gint c0, gint nc,
    M2iNpuTensor *view, GError **error);

/*
 * Layout converters between a rank-4 NCHW MLI tensor (any strides) and a
 * blocked tensor of the same N, C, H, W. int8 blocked tensors pair with
 * sa8 or fx8 MLI tensors (per-tensor quantization), fp16 with fp16; values
 * are copied unchanged. to_blocked fills padding lanes with the
 * representation of 0 (the sa8 zero point, else 0). FALSE with a GError
 * for invalid tensors, mismatched shapes or types. Threads: up to
 * @n_threads (<= 0: one per core).
 */
M2I_API gboolean m2i_npu_to_blocked (const M2iMliTensor *nchw, M2iNpuTensor *blocked,
    gint n_threads, GError **error);
M2I_API gboolean m2i_npu_from_blocked (const M2iNpuTensor *blocked, M2iMliTensor *nchw,
    gint n_threads, GError **error);

/*
 * The same with a type change in the same pass (the CPU/device boundary):
 * the blocked elements are of @type — sa8 or fx8 for an int8 tensor,
 * quantized per tensor by @q; fp16 for an fp16 tensor — and the NCHW tensor
 * any MLI type, per-tensor or per-axis. Values convert exactly as
 * m2i_mli_convert() does, with @round for ties and saturation. E.g. fp32
 * NCHW → int8 blocked quantized by a FakeQuantize's scale, and back.
 * to_blocked fills padding lanes with the code of 0. FALSE with a GError
 * for invalid tensors, mismatched shapes, a type that does not fit the
 * blocked precision, or strides above 2^31 elements.
 */
M2I_API gboolean m2i_npu_convert_to_blocked (const M2iMliTensor *nchw, M2iMliType type,
    const M2iMliQuant *q, M2iNpuTensor *blocked, M2iMliRound round,
    gint n_threads, GError **error);
M2I_API gboolean m2i_npu_convert_from_blocked (const M2iNpuTensor *blocked,
    M2iMliType type, const M2iMliQuant *q, M2iMliTensor *nchw,
    M2iMliRound round, gint n_threads, GError **error);

/*
 * Convolution weights: OIYX (out_channels × in_channels/groups × kh × kw,
 * as OpenVINO's Convolution and GroupConvolution flattened to O) into the
 * blocked layout {ceil(O/8)}{ceil(Ig/8)}YX{I8}{O8}, padding with zeros.
 * m2i_npu_weights_blocked_count() gives its element count (0 if a size is
 * < 1). @elem_size is 1 (int8) or 2 (fp16); other values do nothing.
 */
M2I_API gsize m2i_npu_weights_blocked_count (gint out_channels, gint in_per_group,
    gint kh, gint kw);
M2I_API void m2i_npu_weights_to_blocked (const void *oiyx, gsize elem_size,
    gint out_channels, gint in_per_group, gint kh, gint kw, void *blocked);

/* ---- convolution ------------------------------------------------------ */

typedef struct {
  gint in_channels, out_channels;
  gint groups;                       /* divides both channel counts */
  gint in_h, in_w;                   /* the input size the layer runs on */
  gint kernel_h, kernel_w;
  gint stride_h, stride_w;           /* >= 1 */
  gint dilation_h, dilation_w;       /* >= 1 */
  gint pad_top, pad_left, pad_bottom, pad_right;   /* >= 0 */
} M2iNpuConvGeometry;

/* Output size: (in + pads - ((k-1)*dilation + 1)) / stride + 1. FALSE with
 * a GError when a field is out of range or the output would be empty. */
M2I_API gboolean m2i_npu_conv_geometry_check (const M2iNpuConvGeometry *g,
    gint *out_h, gint *out_w, GError **error);

typedef enum {
  /* q = Round(acc / 2^shift), shift in [0, 31], rounding per `round`:
   * the AIE's shift-round-saturate (srs). */
  M2I_NPU_REQUANT_SHIFT = 0,
  /* TFLite's MultiplyByQuantizedMultiplier: with l = max(shift, 0),
   * r = max(-shift, 0), shift in [-31, 30], multiplier in [0, 2^31):
   *   x = Sat32(acc * 2^l)
   *   h = SaturatingRoundingDoublingHighMul(x, multiplier)
   *     = (x*multiplier + 2^30) >> 31 (with TFLite's nudge; never saturates
   *       because multiplier > -2^31)
   *   q = RoundingDivideByPOT(h, r)  (round half away from zero) */
  M2I_NPU_REQUANT_MULTIPLIER,
} M2iNpuRequantScheme;

/*
 * int8 output = Clamp(q + out_zero_point, act_min, act_max), q from the
 * scheme applied to acc = Σ (x - in_zero_point)·w + bias. ReLU is act_min =
 * out_zero_point; ReLU6 adds act_max = the int8 code of 6.
 *
 * PReLU (MULTIPLIER scheme only): with neg_multiplier and neg_shift set, an
 * accumulator below 0 (a negative real value; acc includes the bias) is
 * requantized with them instead:
 *   q = acc >= 0 ? MBQM(acc, multiplier, shift) : MBQM(acc, neg_multiplier, neg_shift)
 * where neg_multiplier · 2^(neg_shift - 31) = slope · s_in · s_w / s_out,
 * the slope's sign carried by the multiplier (neg_multiplier in
 * (-2^31, 2^31); m2i_npu_requant_set_prelu fills them from real slopes).
 * MBQM is the formula above with any multiplier sign: floor((x·m + 2^30) /
 * 2^31), then the rounding divide. Fields added at the end: zero them
 * (NULL) for no PReLU.
 */
typedef struct {
  M2iNpuRequantScheme scheme;
  gint n;                    /* entries in the arrays: 1 (per tensor) or out_channels */
  const gint32 *multiplier;  /* MULTIPLIER only */
  const gint8 *shift;
  M2iMliRound round;         /* SHIFT only */
  gint32 out_zero_point;     /* [-128, 127] */
  gint32 act_min, act_max;   /* -128 <= act_min <= act_max <= 127 */
  const gint32 *neg_multiplier;  /* PReLU's negative branch: n entries, or NULL */
  const gint8 *neg_shift;        /* [-31, 30]; n entries, or NULL */
} M2iNpuRequant;

/* TFLite's QuantizeMultiplier: @real = multiplier * 2^(shift - 31) with
 * multiplier in [2^30, 2^31) (0 and shift 0 for @real == 0). FALSE for a
 * negative, non-finite or out-of-range (shift outside [-31, 30]) @real. */
M2I_API gboolean m2i_npu_quantize_multiplier (double real, gint32 *multiplier,
    gint8 *shift);

/*
 * Fills @rq with the MULTIPLIER scheme for a layer whose input, weights and
 * output have the real scales @in_scale, @w_scales (@n_w entries: 1 or one
 * per output channel) and @out_scale: multiplier · 2^(shift - 31) =
 * in_scale · w_scale / out_scale, as TFLite computes it. @mult and @shift
 * are the caller's arrays of @n_w entries, which @rq then points to. The
 * clamp is the full int8 range, or [out_zero_point, 127] with @relu.
 * FALSE with a GError for a non-positive or non-finite scale, a zero point
 * outside [-128, 127], or a ratio no multiplier can express.
 */
M2I_API gboolean m2i_npu_requant_from_scales (double in_scale, const double *w_scales,
    gint n_w, double out_scale, gint32 out_zero_point, gboolean relu,
    gint32 *mult, gint8 *shift, M2iNpuRequant *rq, GError **error);

/*
 * Adds PReLU's negative branch to @rq (MULTIPLIER, made by
 * m2i_npu_requant_from_scales with the same scales and without @relu):
 * for each of @rq->n entries, neg_multiplier · 2^(neg_shift - 31) =
 * slope · in_scale · w_scale / out_scale, negative for a negative slope.
 * @slopes has @n_slopes entries (1, or rq->n); @w_scales has rq->n. @neg_mult
 * and @neg_shift are the caller's arrays of rq->n entries, which @rq then
 * points to. FALSE with a GError for a non-finite slope, a scheme other than
 * MULTIPLIER, mismatched counts or a ratio no multiplier can express.
 */
M2I_API gboolean m2i_npu_requant_set_prelu (M2iNpuRequant *rq, double in_scale,
    const double *w_scales, double out_scale, const float *slopes, gint n_slopes,
    gint32 *neg_mult, gint8 *neg_shift, GError **error);

typedef struct _M2iNpuConv M2iNpuConv;

/*
 * Compiles an int8 convolution. @weights: blocked int8
 * (m2i_npu_weights_to_blocked), symmetric (zero point 0), any values in
 * [-128, 127]; @bias: out_channels int32 or NULL; @in_zero_point in
 * [-128, 127] is the input's zero point, which is also the value of the
 * padding (so padding is real 0). Copies everything it needs; the caller
 * keeps ownership of its arrays. NULL with a GError for invalid geometry,
 * weights, zero point or requantization. Free with m2i_npu_conv_free().
 * The accumulator is 32-bit: results are exact while
 * (in_channels/groups)·kh·kw·255·128 + |bias| < 2^31.
 */
M2I_API M2iNpuConv *m2i_npu_conv_new_int8 (const M2iNpuConvGeometry *g,
    const gint8 *weights, const gint32 *bias, gint32 in_zero_point,
    const M2iNpuRequant *rq, GError **error);

/*
 * Compiles an fp16 convolution: fp16 weights (blocked), fp32 @bias
 * (out_channels or NULL), products accumulated in fp32, output clamped to
 * [@act_min, @act_max] (use -INFINITY/INFINITY for none, 0 for ReLU) and
 * rounded to fp16 (nearest even). NULL with a GError on invalid input.
 */
M2I_API M2iNpuConv *m2i_npu_conv_new_fp16 (const M2iNpuConvGeometry *g,
    const m2i_f16 *weights, const float *bias, float act_min, float act_max,
    GError **error);

/*
 * Fully-connected layer: out[o] = Σ_i x[i]·w[o][i] + bias[o], with x an
 * N×in_features×1×1 blocked tensor and the weights blocked as a 1×1 conv
 * ({O/8}{I/8}{I8}{O8}). Same rules and ownership as the conv constructors.
 */
M2I_API M2iNpuConv *m2i_npu_fc_new_int8 (gint in_features, gint out_features,
    const gint8 *weights, const gint32 *bias, gint32 in_zero_point,
    const M2iNpuRequant *rq, GError **error);
M2I_API M2iNpuConv *m2i_npu_fc_new_fp16 (gint in_features, gint out_features,
    const m2i_f16 *weights, const float *bias, float act_min, float act_max,
    GError **error);

/*
 * Gives an fp16 layer a PReLU epilogue: after the bias, v = v < 0 ?
 * v · slope[o] : v in fp32, then the clamp and the one rounding to fp16
 * (OpenVINO's PReLU-1: x < 0 ? slope·x : x). @slopes: @n_slopes floats,
 * 1 (shared) or out_channels, copied. Call before the layer runs (not
 * while it runs). FALSE with a GError for an int8 layer (its negative
 * branch is in M2iNpuRequant), a NULL or non-finite slope, or a count other
 * than 1 or out_channels.
 */
M2I_API gboolean m2i_npu_conv_set_prelu (M2iNpuConv *conv, const float *slopes,
    gint n_slopes, GError **error);

M2I_API void m2i_npu_conv_free (M2iNpuConv *conv);

M2I_API M2iNpuPrecision m2i_npu_conv_get_precision (const M2iNpuConv *conv);
/* The output height and width for the geometry the layer was made with. */
M2I_API void m2i_npu_conv_get_output_size (const M2iNpuConv *conv, gint *out_h, gint *out_w);
/* Which kernels run: "avx512-vnni", "avx2", "avx2-fma", "c", ... (static). */
M2I_API const char *m2i_npu_conv_get_path (const M2iNpuConv *conv);

/* Bytes of scratch one run needs (the padded input copy). */
M2I_API gsize m2i_npu_conv_get_scratch_size (const M2iNpuConv *conv);

/*
 * Runs the layer on @in (N×in_channels×in_h×in_w, blocked, the layer's
 * precision) into @out (N×out_channels×out_h×out_w; may be a channel
 * view; it must not overlap @in). @scratch: m2i_npu_conv_get_scratch_size()
 * bytes, or NULL to use a buffer the layer owns, allocated on the first such
 * run (then runs of the same layer must not overlap in time). @n_threads
 * slices of m2i_parallel_for (<= 0: one per core). FALSE with a GError when
 * a tensor is invalid or its shape or precision does not match; @out is
 * untouched then.
 */
M2I_API gboolean m2i_npu_conv_run (M2iNpuConv *conv, const M2iNpuTensor *in,
    M2iNpuTensor *out, gpointer scratch, gint n_threads, GError **error);

/*
 * The simulated device's cost of one run on a batch of @batch, from the
 * model in docs/npu.md: MACs as the engine performs them (channels padded
 * to 8), bytes moved, and cycles = max(MACs / MACs-per-cycle, bytes /
 * bytes-per-cycle) + a fixed setup.
 */
typedef struct {
  guint64 macs;
  guint64 bytes_in, bytes_out, bytes_weights;
  guint64 cycles;
} M2iNpuCost;

M2I_API void m2i_npu_conv_get_cost (const M2iNpuConv *conv, gint batch, M2iNpuCost *cost);

/* ---- pooling ------------------------------------------------------------ */

typedef enum { M2I_NPU_POOL_MAX = 0, M2I_NPU_POOL_AVG } M2iNpuPoolKind;

typedef struct {
  M2iNpuPoolKind kind;
  gint kernel_h, kernel_w, stride_h, stride_w;
  gint pad_top, pad_left, pad_bottom, pad_right;   /* each < its kernel size */
  /* Output size rounds up (OpenVINO rounding_type="ceil"); a last window
   * that would start in the end padding is dropped, as PyTorch does. */
  gboolean ceil_mode;
  /* AVG: divide by the number of input elements in the window (TRUE), or
   * by the window clipped to the padded input (FALSE; padding counts as 0). */
  gboolean exclude_pad;
  /* int8 AVG: out = z + Round(Σ(x - z) / count), rounding per @round; the
   * input and output share @zero_point (pooling keeps quantization). */
  M2iMliRound round;
  gint32 zero_point;
} M2iNpuPoolParams;

/* Output size for an @in_h × @in_w input; FALSE with a GError for invalid
 * parameters or an empty output. */
M2I_API gboolean m2i_npu_pool_output_size (const M2iNpuPoolParams *p, gint in_h,
    gint in_w, gint *out_h, gint *out_w, GError **error);

/* Pools @in into @out (same precision, N and C; H and W from
 * m2i_npu_pool_output_size). MAX ignores padding. FALSE with a GError on
 * invalid parameters or tensors. */
M2I_API gboolean m2i_npu_pool_run (const M2iNpuPoolParams *p, const M2iNpuTensor *in,
    M2iNpuTensor *out, gint n_threads, GError **error);

/* ---- element-wise add --------------------------------------------------- */

/*
 * int8 (TFLite's quantized Add): with MBQM the MULTIPLIER requantization,
 *   a' = MBQM((a - a_zero_point) * 2^left_shift, a_multiplier, a_shift)
 *   b' = MBQM((b - b_zero_point) * 2^left_shift, b_multiplier, b_shift)
 *   out = Clamp(MBQM(a' + b', out_multiplier, out_shift) + out_zero_point,
 *               act_min, act_max)
 * fp16: v = a + b in fp32; with f_slope (a fused PReLU, e.g. a residual
 * block's activation) v = v < 0 ? v · f_slope[c] : v; out = Clamp(v, f_min,
 * f_max) rounded to fp16.
 */
typedef struct {
  gint32 a_zero_point, b_zero_point, out_zero_point;
  gint left_shift;                                   /* [0, 20] */
  gint32 a_multiplier, b_multiplier, out_multiplier; /* [0, 2^31) */
  gint8 a_shift, b_shift, out_shift;                 /* [-31, 30] */
  gint32 act_min, act_max;
  float f_min, f_max;
  const float *f_slope;    /* fp16 PReLU: n_slope finite slopes, or NULL */
  gint n_slope;            /* 1 or the channel count */
} M2iNpuAddParams;

/* Fills the int8 fields from real scales as TFLite does (left_shift 20,
 * twice the larger input scale as the common scale) and sets the clamps
 * to the full range. FALSE with a GError for a non-positive scale or a
 * zero point outside [-128, 127]. */
M2I_API gboolean m2i_npu_add_params_from_scales (double a_scale, gint32 a_zero_point,
    double b_scale, gint32 b_zero_point, double out_scale,
    gint32 out_zero_point, M2iNpuAddParams *p, GError **error);

/* out = a + b element-wise; all three have the same precision and shape
 * (no broadcasting). FALSE with a GError otherwise. */
M2I_API gboolean m2i_npu_add_run (const M2iNpuAddParams *p, const M2iNpuTensor *a,
    const M2iNpuTensor *b, M2iNpuTensor *out, gint n_threads, GError **error);

/* ---- PReLU ---------------------------------------------------------------- */

/*
 * Standalone PReLU (OpenVINO's PReLU-1, x < 0 ? slope·x : x) on a blocked
 * tensor, per channel or with one slope:
 *  fp16: out = x < 0 ? x · slope[c] : x, in fp32, rounded to fp16.
 *  int8 (TFLite's quantized PReLU with the slope folded into the negative
 *  branch's multiplier, and TFLite Add's left shift so that the small
 *  differences keep their precision through the multiply), with
 *  d = (x - in_zero_point) · 2^left_shift:
 *    q = d >= 0 ? MBQM(d, pos_multiplier, pos_shift)
 *               : MBQM(d, neg_multiplier[c], neg_shift[c])
 *    out = Clamp(q + out_zero_point, act_min, act_max)
 *  pos_multiplier · 2^(pos_shift - 31) = s_in / (s_out · 2^left_shift), and
 *  neg_multiplier · 2^(neg_shift - 31) = slope · s_in / (s_out · 2^left_shift)
 *  (any sign; m2i_npu_prelu_params_from_scales fills them with left_shift
 *  20). MBQM as M2iNpuRequant's.
 */
typedef struct {
  gint n;                          /* slope entries: 1 or channels */
  const float *slope;              /* fp16 */
  gint32 in_zero_point, out_zero_point;   /* int8, [-128, 127] */
  gint left_shift;                 /* int8, [0, 22] */
  gint32 pos_multiplier;           /* [0, 2^31) */
  gint8 pos_shift;                 /* [-31, 30] */
  const gint32 *neg_multiplier;    /* n entries, (-2^31, 2^31) */
  const gint8 *neg_shift;          /* n entries, [-31, 30] */
  gint32 act_min, act_max;         /* int8 clamp */
} M2iNpuPreluParams;

/* Fills the int8 fields of @p from real scales and @n_slopes slopes (1 or
 * channels), @neg_mult and @neg_shift being the caller's arrays of
 * @n_slopes entries; the clamp is the full range. FALSE with a GError for a
 * non-positive scale, a non-finite slope, a zero point outside
 * [-128, 127] or a ratio no multiplier can express. */
M2I_API gboolean m2i_npu_prelu_params_from_scales (double in_scale, gint32 in_zero_point,
    double out_scale, gint32 out_zero_point, const float *slopes, gint n_slopes,
    gint32 *neg_mult, gint8 *neg_shift, M2iNpuPreluParams *p, GError **error);

/* out = PReLU(in); same precision and shape; @out may be @in (in place).
 * FALSE with a GError for invalid parameters or tensors, or a slope count
 * other than 1 or the channel count. */
M2I_API gboolean m2i_npu_prelu_run (const M2iNpuPreluParams *p, const M2iNpuTensor *in,
    M2iNpuTensor *out, gint n_threads, GError **error);

G_END_DECLS
