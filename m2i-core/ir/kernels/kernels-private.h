/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* kernels-private.h — the compute kernels of the IR runtime and the helpers
 * they share (not installed).
 *
 * Every kernel follows its OpenVINO operation specification and is driven
 * through M2iOpContext (see m2i-ir-op.h): infer() checks the layer and sets
 * the outputs, packing constant weights into ctx->state; execute() computes
 * without allocating. Float kernels compute in f32 (the runtime widens f16
 * models to f32 before they reach a kernel).
 */
#pragma once

#include <ir/ir-private.h>
#include <base/m2i-cpu.h>
#include <base/m2i-error.h>
#include <base/m2i-parallel.h>

G_BEGIN_DECLS

/* ---- The kernels (registered by ir_register_compute_kernels) ------- */

extern const M2iOpKernel ir_kernel_convolution;
extern const M2iOpKernel ir_kernel_group_convolution;
extern const M2iOpKernel ir_kernel_matmul;
extern const M2iOpKernel ir_kernel_add;
extern const M2iOpKernel ir_kernel_subtract;
extern const M2iOpKernel ir_kernel_multiply;
extern const M2iOpKernel ir_kernel_divide;
extern const M2iOpKernel ir_kernel_relu;
extern const M2iOpKernel ir_kernel_prelu;
extern const M2iOpKernel ir_kernel_clamp;
extern const M2iOpKernel ir_kernel_sigmoid;
extern const M2iOpKernel ir_kernel_exp;
extern const M2iOpKernel ir_kernel_max_pool;
extern const M2iOpKernel ir_kernel_avg_pool;
extern const M2iOpKernel ir_kernel_reduce_mean;
extern const M2iOpKernel ir_kernel_softmax;
extern const M2iOpKernel ir_kernel_batch_norm;
extern const M2iOpKernel ir_kernel_interpolate;
extern const M2iOpKernel ir_kernel_nv12_to_rgb;
extern const M2iOpKernel ir_kernel_nv12_to_bgr;
extern const M2iOpKernel ir_kernel_i420_to_rgb;
extern const M2iOpKernel ir_kernel_i420_to_bgr;
extern const M2iOpKernel ir_kernel_fake_quantize;
extern const M2iOpKernel ir_kernel_prior_box_clustered;
extern const M2iOpKernel ir_kernel_detection_output;
extern const M2iOpKernel ir_kernel_maximum;
extern const M2iOpKernel ir_kernel_minimum;
extern const M2iOpKernel ir_kernel_squared_difference;
extern const M2iOpKernel ir_kernel_mod;
extern const M2iOpKernel ir_kernel_floor_mod;
extern const M2iOpKernel ir_kernel_power;
extern const M2iOpKernel ir_kernel_swish;
extern const M2iOpKernel ir_kernel_hswish;
extern const M2iOpKernel ir_kernel_hsigmoid;
extern const M2iOpKernel ir_kernel_hard_sigmoid;
extern const M2iOpKernel ir_kernel_mish;
extern const M2iOpKernel ir_kernel_gelu;
extern const M2iOpKernel ir_kernel_elu;
extern const M2iOpKernel ir_kernel_selu;
extern const M2iOpKernel ir_kernel_softplus;
extern const M2iOpKernel ir_kernel_softsign;
extern const M2iOpKernel ir_kernel_tanh;
extern const M2iOpKernel ir_kernel_erf;
extern const M2iOpKernel ir_kernel_abs;
extern const M2iOpKernel ir_kernel_negative;
extern const M2iOpKernel ir_kernel_sign;
extern const M2iOpKernel ir_kernel_floor;
extern const M2iOpKernel ir_kernel_ceiling;
extern const M2iOpKernel ir_kernel_round;
extern const M2iOpKernel ir_kernel_sqrt;
extern const M2iOpKernel ir_kernel_log;
extern const M2iOpKernel ir_kernel_sin;
extern const M2iOpKernel ir_kernel_cos;
extern const M2iOpKernel ir_kernel_tan;
extern const M2iOpKernel ir_kernel_asin;
extern const M2iOpKernel ir_kernel_acos;
extern const M2iOpKernel ir_kernel_atan;
extern const M2iOpKernel ir_kernel_sinh;
extern const M2iOpKernel ir_kernel_cosh;
extern const M2iOpKernel ir_kernel_asinh;
extern const M2iOpKernel ir_kernel_acosh;
extern const M2iOpKernel ir_kernel_atanh;
extern const M2iOpKernel ir_kernel_equal;
extern const M2iOpKernel ir_kernel_not_equal;
extern const M2iOpKernel ir_kernel_less;
extern const M2iOpKernel ir_kernel_less_equal;
extern const M2iOpKernel ir_kernel_greater;
extern const M2iOpKernel ir_kernel_greater_equal;
extern const M2iOpKernel ir_kernel_logical_and;
extern const M2iOpKernel ir_kernel_logical_or;
extern const M2iOpKernel ir_kernel_logical_xor;
extern const M2iOpKernel ir_kernel_logical_not;
extern const M2iOpKernel ir_kernel_select;
extern const M2iOpKernel ir_kernel_reduce_sum;
extern const M2iOpKernel ir_kernel_reduce_prod;
extern const M2iOpKernel ir_kernel_reduce_max;
extern const M2iOpKernel ir_kernel_reduce_min;
extern const M2iOpKernel ir_kernel_reduce_l1;
extern const M2iOpKernel ir_kernel_reduce_l2;
extern const M2iOpKernel ir_kernel_reduce_logical_and;
extern const M2iOpKernel ir_kernel_reduce_logical_or;
extern const M2iOpKernel ir_kernel_log_softmax;
extern const M2iOpKernel ir_kernel_mvn;
extern const M2iOpKernel ir_kernel_normalize_l2;
extern const M2iOpKernel ir_kernel_lrn;
extern const M2iOpKernel ir_kernel_split;
extern const M2iOpKernel ir_kernel_variadic_split;
extern const M2iOpKernel ir_kernel_tile;
extern const M2iOpKernel ir_kernel_broadcast;
extern const M2iOpKernel ir_kernel_pad;
extern const M2iOpKernel ir_kernel_range;
extern const M2iOpKernel ir_kernel_slice;

/* Swish-4 on @n floats (the Swish kernel's loop, vmath.h): y may be x. */
void ir_k_swish_f32 (const float *x, float *y, gint64 n, float beta);
extern const M2iOpKernel ir_kernel_gather_nd;
extern const M2iOpKernel ir_kernel_gather_elements;
extern const M2iOpKernel ir_kernel_scatter_update;
extern const M2iOpKernel ir_kernel_scatter_nd_update;
extern const M2iOpKernel ir_kernel_scatter_elements_update;
extern const M2iOpKernel ir_kernel_depth_to_space;
extern const M2iOpKernel ir_kernel_space_to_depth;
extern const M2iOpKernel ir_kernel_shuffle_channels;
extern const M2iOpKernel ir_kernel_convolution_backprop_data;
extern const M2iOpKernel ir_kernel_group_convolution_backprop_data;
extern const M2iOpKernel ir_kernel_topk;
extern const M2iOpKernel ir_kernel_non_max_suppression;
extern const M2iOpKernel ir_kernel_prior_box;
extern const M2iOpKernel ir_kernel_region_yolo;
extern const M2iOpKernel ir_kernel_reorg_yolo;
extern const M2iOpKernel ir_kernel_proposal;
extern const M2iOpKernel ir_kernel_roi_pooling;
extern const M2iOpKernel ir_kernel_roi_align;
extern const M2iOpKernel ir_kernel_ctc_greedy_decoder;
extern const M2iOpKernel ir_kernel_ctc_greedy_decoder_seq_len;
extern const M2iOpKernel ir_kernel_lstm_sequence;
extern const M2iOpKernel ir_kernel_gru_sequence;
extern const M2iOpKernel ir_kernel_rnn_sequence;
extern const M2iOpKernel ir_kernel_lstm_cell;
extern const M2iOpKernel ir_kernel_gru_cell;
extern const M2iOpKernel ir_kernel_rnn_cell;
extern const M2iOpKernel ir_kernel_non_zero;


/* ---- Fusion ------------------------------------------------------------- */

/*
 * Lets a compiled Convolution, GroupConvolution or MatMul layer (f32, after
 * its infer()) also add a per-channel @bias and apply ReLU as it writes its
 * output, so a runtime that finds Conv → Add (constant bias) → ReLU, each
 * feeding only the next, can drop the Add and ReLU layers and their passes
 * over memory. @bias has one value per output channel — Convolution: axis
 * 1 of the output, MatMul: its last axis — and is copied; NULL for none.
 * The results are bit-identical to running the Add and ReLU layers (the
 * same float operations in the same order). FALSE with a GError naming the
 * layer when it is another op or @n_bias does not match; the layer is then
 * unchanged.
 */
gboolean ir_k_fuse_bias_relu (M2iOpContext *ctx, const float *bias, gint64 n_bias,
    gboolean relu, GError **error);

/*
 * Lets a compiled Convolution or GroupConvolution layer (f32, after its
 * infer() and any ir_k_fuse_bias_relu() without ReLU) also apply Swish-4,
 * y = x / (1 + e^(-beta·x)), to its results (after the bias), so the
 * runtime can drop a Swish layer that reads only it. Each output is
 * computed as the Swish kernel computes it (the same function on the same
 * value: bit-identical), right after the layer stores it — a GEMM column
 * panel, a Winograd tile run, a depthwise plane — while it is in cache.
 * FALSE with a GError naming the layer for another op or a layer with
 * ReLU fused; the layer is then unchanged.
 */
gboolean ir_k_fuse_swish (M2iOpContext *ctx, float beta, GError **error);

/*
 * Lets a compiled f32 Add layer (after its infer()) apply ReLU to its sums
 * as it stores them, so a runtime that finds Add → ReLU, the ReLU reading
 * only the Add, can drop the ReLU layer and its pass over memory (a
 * residual Add before its ReLU). Bit-identical to the two layers (ReLU's
 * expression on the same sum). FALSE with a GError naming the layer for
 * another op or type; the layer is then unchanged.
 */
gboolean ir_k_fuse_add_relu (M2iOpContext *ctx, GError **error);

/* TRUE when a compiled Add applies ReLU to its sums (ir_k_fuse_add_relu). */
gboolean ir_k_add_applies_relu (const M2iOpContext *ctx);

/*
 * Lets a compiled f32 Add or Multiply layer (after its infer(), and any
 * ir_k_fuse_add_relu()) also multiply its output by a per-channel @scale,
 * add a per-channel @shift and apply ReLU (@relu, only with @shift) as it
 * stores, so a runtime that finds Add → Multiply (constant [C,1,1]) → Add
 * (constant) [→ ReLU], each feeding only the next (a batch normalization
 * after a residual sum), can drop the later layers and their passes over
 * memory. @scale and @shift (either may be NULL, not both) have one value
 * per channel of axis 1 of the output and are copied. Bit-identical to
 * the layers (their expressions, in their order). FALSE with a GError
 * naming the layer otherwise; the layer is then unchanged.
 */
gboolean ir_k_fuse_channel_affine (M2iOpContext *ctx, const float *scale, const float *shift,
    gint64 channels, gboolean relu, GError **error);

/* A kernel path that can be turned off for measuring and tests: *@state is
 * -1 until the environment variable @var is read (its value "0" turns the
 * path off), then 0 or 1; ir_k_switch_set() overrides it. */
static inline gboolean
ir_k_switch_on (gint *state, const char *var)
{
  gint e = g_atomic_int_get (state);
  if (e < 0) {
    e = g_strcmp0 (g_getenv (var), "0") != 0;
    g_atomic_int_set (state, e);
  }
  return e;
}

static inline void
ir_k_switch_set (gint *state, gboolean on)
{
  g_atomic_int_set (state, on ? 1 : 0);
}

/* What a fused layer applies; part of the Convolution and MatMul states. */
typedef struct {
  float *bias;                         /* owned; NULL for none */
  gboolean relu;
  gboolean swish;                      /* Convolution only: Swish after the bias */
  float swish_beta;
} M2iKFusion;

/* Applies a fused Swish (when @f has one) to @n floats at @p. */
static inline void
ir_k_fusion_swish (const M2iKFusion *f, float *p, gint64 n)
{
  if (f->swish && n > 0)
    ir_k_swish_f32 (p, p, n, f->swish_beta);
}

/* The per-op halves of ir_k_fuse_bias_relu(): the fusion slot of a
 * compiled layer's state and its number of output channels, or NULL when
 * the state cannot take one. */
M2iKFusion *ir_k_conv_fusion (M2iOpContext *ctx, gint64 *channels);
M2iKFusion *ir_k_matmul_fusion (M2iOpContext *ctx, gint64 *channels);

/* Whether a one-row MatMul may keep large fp16-exact constant weights as
 * halves (same results, half the memory read): TRUE unless the
 * environment says M2I_MATMUL_HALF=0 or ir_k_matmul_half_set_enabled (FALSE)
 * was called (tests, timing). Read when a MatMul is compiled. */
gboolean ir_k_matmul_half_enabled (void);
void ir_k_matmul_half_set_enabled (gboolean on);
/* TRUE when the compiled MatMul keeps its weights as halves (tests). */
gboolean ir_k_matmul_half_b (M2iOpContext *ctx);

/* TRUE when the compiled Convolution layer runs as Winograd F(2×2, 3×3)
 * (conv-winograd.h); for tests and benchmarks. */
gboolean ir_k_conv_uses_winograd (const M2iOpContext *ctx);
/* TRUE when the compiled Convolution layer runs as Winograd F(4, 3)
 * along its 3×1 or 1×3 kernel (conv-winocol.h); for tests. */
gboolean ir_k_conv_uses_winocol (const M2iOpContext *ctx);

/* TRUE when the compiled Convolution layer runs directly (depthwise or
 * small groups, conv-dw.h); for tests and benchmarks. */
gboolean ir_k_conv_uses_direct (const M2iOpContext *ctx);

/* TRUE when it runs directly through the plane kernel (IrDwPlane,
 * conv-dw.h), whole planes a vector of pixels at a time. */
gboolean ir_k_conv_uses_dw_plane (const M2iOpContext *ctx);

/* TRUE when the compiled Convolution layer reads its padded input in place
 * (conv-edges.h); for tests and benchmarks. */
gboolean ir_k_conv_reads_in_place (const M2iOpContext *ctx);

/* TRUE when the compiled Convolution layer runs on the direct 1×K / K×1
 * tiles (conv-tap.h); for tests and benchmarks. */
gboolean ir_k_conv_uses_taps (const M2iOpContext *ctx);

/* TRUE when the compiled Convolution layer runs on the small-plane tiles
 * (conv-small.h); for tests and benchmarks. */
gboolean ir_k_conv_uses_small (const M2iOpContext *ctx);

/* ---- Permutations (permute.c) --------------------------------------------- */

#define IR_K_PERM_MAX_RANK (2 * M2I_MAX_RANK + 2)

/* How to move a tensor's elements into another order of its axes: output
 * axes after dropping unit ones and merging those contiguous in the input. */
typedef struct {
  gint rank;
  gint64 dims[IR_K_PERM_MAX_RANK];     /* output dims after merging */
  gint64 step[IR_K_PERM_MAX_RANK];     /* input element stride of each */
  gint64 out_stride[IR_K_PERM_MAX_RANK];
  gsize es;                            /* element size, bytes */
  gint64 numel, rows;                  /* rows: all dims but the last */
  gint unit;                           /* the input's contiguous axis; -1: the last */
  gint64 blocks;                       /* rows / dims[unit] */
} IrKPerm;

/* The plan for a tensor viewed as @in_dims (@rank of them, at most
 * IR_K_PERM_MAX_RANK) put in the order @perm (output axis a is input axis
 * perm[a]), elements of @es bytes. Callers check rows fits a gint. */
void ir_k_perm_plan (IrKPerm *p, gint rank, const gint64 *in_dims, const gint *perm, gsize es);

/* Moves @src's elements to @dst as @p says, over ctx's threads when large.
 * Allocates nothing. */
void ir_k_perm_run (const M2iOpContext *ctx, const IrKPerm *p, gconstpointer src, gpointer dst);

/* ---- Kernel levels per CPU (kernel-level.c) ------------------------------- */

/* The instruction-set level (M2I_CPU_AVX512F, M2I_CPU_AVX2 or 0) the IR
 * runtime's @family (M2I_KERNELS_GEMM, _WINOGRAD, _DWCONV) uses: what
 * m2i_cpu_kernel_level() says, or where the per-model table leaves it to a
 * measurement, the fastest level up to that one, measured once (the first
 * call; a few milliseconds) and kept for the process. */
M2iCpuFlags ir_k_level (M2iKernelFamily family);

/* The measurement: times @family's kernels at each level up to @bound that
 * m2i_cpu_flags() allows (AVX-512, AVX2) and returns the fastest (the
 * wider unless the narrower is 5 % faster); @seconds (NULL or two
 * doubles) gets the best sample of each candidate, widest first, 0 when
 * there was one candidate or none. Allocates; not for execute(). */
M2iCpuFlags ir_k_measure_level (M2iKernelFamily family, M2iCpuFlags bound, double *seconds);

/* ---- Threads ------------------------------------------------------------ */

/* An inference's team of threads (team.c): N - 1 pool workers held for the
 * length of one ir_k_team_run(), to which ir_k_parallel_for() hands a
 * layer's slices through one atomic word (well under a microsecond)
 * instead of waking pool workers for every layer. */
typedef struct _M2iKTeam M2iKTeam;

/* A team of @n_threads (the caller and n_threads - 1 helpers). Free with
 * ir_k_team_free(). */
M2iKTeam *ir_k_team_new (gint n_threads);
void ir_k_team_free (M2iKTeam *team);

/* Runs @body (data) on the calling thread with @team's helpers standing by:
 * ir_k_parallel_for() calls made by @body on this thread use them.
 * Helpers that the pool cannot start (busy with other work) are simply
 * not used; nothing waits for them. A NULL team, a team of one, or a call
 * from inside a team's run just calls @body. Allocates nothing. */
void ir_k_team_run (M2iKTeam *team, void (*body) (gpointer), gpointer data);

/* Runs @body (data) on the calling thread as ir_k_team_run() would with
 * ir_k_team_set_alone (TRUE): its loops run inline; the helpers wait
 * for its end yielding their cores. Allocates nothing. */
void ir_k_team_run_alone (M2iKTeam *team, void (*body) (gpointer), gpointer data);

/* TRUE on the thread running a team's body. */
gboolean ir_k_team_active (void);

/* On the thread running a team's body: while @alone, its loops run on it
 * alone (inline, as those asked for from inside a slice) and
 * ir_k_team_active() is FALSE; ir_k_team_set_alone (FALSE) hands them to
 * the team again (the runtime runs a whole inference alone when that has
 * been faster). Does nothing elsewhere. */
void ir_k_team_set_alone (gboolean alone);

/* TRUE on a team's master thread while its loops run inline (alone, or
 * inside a slice): ir_k_parallel_for() then runs any loop as one slice. */
gboolean ir_k_team_inline (void);

/* Gives each member of @team an area of @bytes of its own for the slices
 * it runs (ir_k_slice_scratch): a slice's temporaries then stay in the
 * cache of the core that uses them, layer after layer, where the same
 * bytes of one shared scratch would be another slice's in the next layer
 * and move between the cores. Allocates (not for execute()); FALSE when
 * it cannot (the slices then use their kernels' own scratch). */
gboolean ir_k_team_set_slice_scratch (M2iKTeam *team, gsize bytes);

/* On the thread running a team's body (its loops handed to the team): how
 * long the team's helpers have taken to pick up a published loop, ns,
 * smoothed over the last loops (on this project's 2-vCPU VM 70-100 ns with
 * the vCPUs placed near each other, ~400 far, where every line one core
 * wrote costs the other more too); 0 elsewhere or before any. */
gint64 ir_k_team_handover_ns (void);

/* Makes @ns the hand-over ir_k_team_handover_ns() says inside @team's
 * runs, not measured (to test both placements' paths anywhere); 0
 * measures it again, from nothing. Not while the team runs. */
void ir_k_team_fix_handover_ns (M2iKTeam *team, gint64 ns);

/* On the thread running a team's body (its loops handed to the team): the
 * bytes of each member's area (ir_k_team_set_slice_scratch), which a
 * slice of its loops gets from ir_k_slice_scratch(); 0 elsewhere. */
gsize ir_k_team_slice_scratch_bytes (void);

/* For a slice's temporaries of @bytes: inside a team's slice, the running
 * member's own area when the team has areas that large, else @fallback
 * (the kernel's place for this slice in ctx->scratch). Only for the slice
 * itself: loops it runs inline get @fallback. */
gpointer ir_k_slice_scratch (gpointer fallback, gsize bytes);

/* m2i_parallel_for() for kernels: the same contract, but inside a team's
 * run on its master thread the slices go to the team (any member may run
 * any slice; @slice still tells them apart, for scratch). */
void ir_k_parallel_for (gint n, gint n_slices, gint min_grain, M2iParallelFunc func,
    gpointer data);

/* ---- Checks used by infer() ------------------------------------------- */

/* TRUE when the layer has between @min_in and @max_in inputs and between
 * @min_out and @max_out outputs; otherwise FALSE with a GError naming the
 * layer and the counts. */
gboolean ir_k_check_arity (const M2iOpContext *ctx, gint min_in, gint max_in,
    gint min_out, gint max_out, GError **error);

/* TRUE when input @i has one of the @n types in @allowed; otherwise FALSE
 * with a GError naming the input, its type and the allowed ones. */
gboolean ir_k_check_type (const M2iOpContext *ctx, gint i,
    const M2iElementType *allowed, gint n, GError **error);

/* TRUE when the layer has every attribute named in the NULL-terminated
 * list; otherwise FALSE with a GError (M2I_ERROR_MALFORMED) naming the
 * first one missing. For attributes the spec marks required. */
gboolean ir_k_require_attrs (const M2iOpContext *ctx, GError **error, ...)
    G_GNUC_NULL_TERMINATED;

/* Shorthand: input @i must be f32. */
gboolean ir_k_check_f32 (const M2iOpContext *ctx, gint i, GError **error);

/* TRUE when input @i has a rank in [@min, @max]. */
gboolean ir_k_check_rank (const M2iOpContext *ctx, gint i, gint min, gint max,
    GError **error);

/* Reads input @i, which must be a constant 1-D (or scalar) tensor of an
 * integer type, into @out (at most @max values; *n gets the count). FALSE
 * with a GError when it is not constant, not integer, or too long. */
gboolean ir_k_const_ints (const M2iOpContext *ctx, gint i, gint64 *out,
    gint max, gint *n, GError **error);

/* The same for a constant tensor of any real type (integers are converted). */
gboolean ir_k_const_floats (const M2iOpContext *ctx, gint i, float *out,
    gint max, gint *n, GError **error);

/* Reads input @i, a constant holding exactly one value (any rank, any
 * real type; boolean reads as 0/1), as a double. FALSE with a GError naming
 * @what when it is not constant, has another number of values or is not a
 * number. */
gboolean ir_k_const_scalar (const M2iOpContext *ctx, gint i, const char *what,
    double *out, GError **error);

/* Normalizes @axis (negative counts from the end when @allow_negative) to
 * [0, rank); FALSE with a GError naming @what when out of range. */
gboolean ir_k_axis (const M2iOpContext *ctx, gint64 axis, gint rank,
    gboolean allow_negative, const char *what, gint64 *out, GError **error);

/* infer(): TRUE when the @shape a kernel computed for output @p fits the one
 * the layer's XML declares (or it declares none: free-standing layers);
 * else FALSE with the runtime's "shape mismatch" error. A kernel that sizes
 * tables on its output calls this before allocating them, so that they are
 * bounded by sizes the runtime has checked against its memory limit. */
gboolean ir_k_output_declared (const M2iOpContext *ctx, gint p, const M2iShape *shape,
    GError **error);

/* The shape as text for messages; returns a static per-thread buffer that
 * the next call with the same @slot (0..3) overwrites. */
const char *ir_k_shape_str (const M2iShape *s, gint slot);

/* The op version of the layer as an opset number: its `version` resolved
 * the way the registry resolves it ("opset11" on MaxPool is MaxPool-8 → 8);
 * 0 when the version is not an opset name. */
gint ir_k_op_version (const M2iOpContext *ctx);

/* The number of worker slices a kernel may use (ctx->n_threads, at least 1,
 * at most 64). */
gint ir_k_threads (const M2iOpContext *ctx);

/* Slices for @work multiply-adds, at most ir_k_threads(): one per
 * 100 000 inside a team's run, one per million otherwise; below that,
 * handing work to another core costs more than it saves. */
gint ir_k_slices_for (const M2iOpContext *ctx, gint64 work);

/* Sets the multiply-adds per slice inside a team (1: split everything, as
 * bench-team does to measure); returns the previous value. Not for use
 * while inferences run. */
gint64 ir_k_set_team_slice_work (gint64 work);

/* ---- Element-wise runs ---------------------------------------------------- */

/* Elements [first, first + n) of an element-wise op's tensors. */
typedef void (*M2iKChunkFunc) (gint64 first, gint64 n, gpointer user);

/* Runs @func over @numel elements in chunks of 16384, shared out over
 * ir_k_threads() slices when there are at least @per_thread elements
 * (else on one). Allocates nothing. */
void ir_k_run_chunks (const M2iOpContext *ctx, gint64 numel, gint64 per_thread,
    M2iKChunkFunc func, gpointer user);

/* The elements before and after axis @axis of @s ([outer, dim, inner]). */
void ir_k_outer_inner (const M2iShape *s, gint axis, gint64 *outer, gint64 *inner);

/* ---- Spatial window geometry (convolution and pooling) ---------------- */

typedef enum {
  M2I_PAD_EXPLICIT,
  M2I_PAD_SAME_UPPER,
  M2I_PAD_SAME_LOWER,
  M2I_PAD_VALID,
} M2iAutoPad;

#define M2I_K_MAX_SPATIAL 3

typedef struct {
  gint n;                                  /* spatial rank */
  gint64 kernel[M2I_K_MAX_SPATIAL];
  gint64 strides[M2I_K_MAX_SPATIAL];
  gint64 dilations[M2I_K_MAX_SPATIAL];
  gint64 pads_begin[M2I_K_MAX_SPATIAL];
  gint64 pads_end[M2I_K_MAX_SPATIAL];
  M2iAutoPad auto_pad;
  gboolean ceil;                           /* rounding_type (pooling) */
  gboolean ceil_torch;                     /* rounding_type ceil_torch (pooling-14) */
} M2iWindow;

/* Reads strides, dilations (when @with_dilations, else 1), pads_begin,
 * pads_end and auto_pad for @n spatial axes; for pooling (@kernel_attr set)
 * also "kernel" and rounding_type. Each list must have exactly @n values. */
gboolean ir_k_window_attrs (const M2iOpContext *ctx, gint n,
    gboolean with_dilations, const char *kernel_attr, M2iWindow *w,
    GError **error);

/* Resolves auto_pad against the input spatial sizes @in (updating
 * pads_begin/pads_end) and computes the output sizes into @out. FALSE with
 * a GError when an output size would be < 1. */
gboolean ir_k_window_output (const M2iOpContext *ctx, M2iWindow *w,
    const gint64 *in, gint64 *out, GError **error);

/* ---- auto_broadcast of element-wise ops -------------------------------- */

typedef enum {
  M2I_K_BCAST_NUMPY,
  M2I_K_BCAST_NONE,                    /* also "explicit" */
  M2I_K_BCAST_PDPD,
} M2iKBroadcastMode;

typedef struct {
  M2iKBroadcastMode mode;
  gint64 axis;                         /* pdpd: where B starts in A; -1: right-aligned */
} M2iKBroadcastSpec;

/* Reads the layer's auto_broadcast (default @def: "numpy" or "none") and,
 * for pdpd, its axis. FALSE with a GError on an unknown mode. */
gboolean ir_k_broadcast_spec (const M2iOpContext *ctx, const char *def,
    M2iKBroadcastSpec *spec, GError **error);

/* The output shape of an element-wise op over @a and @b under @spec:
 * numpy (both ways; with @one_way the result must be @a's shape), none
 * (equal shapes), pdpd (@b, its trailing 1-dims ignored, is a run of @a's
 * dims from spec->axis, each equal or 1; the result is @a's shape). @b is
 * rewritten to the shape ir_k_broadcast_plan() should see for it (pdpd:
 * @a's rank, 1 outside the run). @ia and @ib number the inputs in
 * messages. FALSE with a GError naming the layer and both shapes. */
gboolean ir_k_broadcast_pair (const M2iOpContext *ctx, const M2iKBroadcastSpec *spec,
    const M2iShape *a, gint ia, M2iShape *b, gint ib, gboolean one_way, M2iShape *out,
    GError **error);

/* ---- Broadcasting iteration for element-wise ops ---------------------- */

#define M2I_K_MAX_OPERANDS 6

/* An output of `rank` dims, with for each operand the element stride along
 * each output dim (0 where the operand is broadcast). Adjacent dims are
 * merged where every operand allows it, so the common cases end up as one
 * or two dims. */
typedef struct {
  gint rank;
  gint n_operands;
  gint64 dims[M2I_MAX_RANK];
  gint64 strides[M2I_K_MAX_OPERANDS][M2I_MAX_RANK];
} M2iBroadcast;

/* Plans numpy broadcasting of @n operand shapes into @out (the output
 * shape, which must be their broadcast). */
void ir_k_broadcast_plan (M2iBroadcast *b, const M2iShape *out,
    const M2iShape *const *operands, gint n);

/* Runs @row over the plan: for each index of all dims but the last, calls
 * @row with the operand offsets (in elements) and the innermost extent; the
 * innermost strides are b->strides[k][rank-1]. Rows are split over
 * @n_threads when the work is large enough. */
typedef void (*M2iBroadcastRow) (const gint64 *offsets, gint64 count,
    gpointer user);
void ir_k_broadcast_run (const M2iBroadcast *b, gint n_threads,
    M2iBroadcastRow row, gpointer user);

/* ---- Plain-C loops compiled for several instruction sets --------------- */

/* Defines `static void name params` that calls name##_body (a static inline
 * function the caller wrote) through a copy compiled for AVX-512, one for
 * AVX2 and a generic one, chosen by m2i_cpu_flags(). The copies are the same
 * C code, so they give identical results (no FMA contraction: the project
 * builds with -ffp-contract=off); only the vector width differs. */
#if defined(__x86_64__) && defined(__GNUC__)
#define M2I_K_TARGET_AVX2 __attribute__ ((target ("avx2,fma")))
/* GCC vectorizes with 256-bit registers under AVX-512 unless told
 * otherwise; clang has no such target option. */
#if defined(__clang__)
#define M2I_K_TARGET_AVX512 \
  __attribute__ ((target ("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")))
#else
#define M2I_K_TARGET_AVX512 \
  __attribute__ ((target ("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma,prefer-vector-width=512")))
#endif
#define M2I_K_SIMD_CLONES(name, params, args) \
  static void M2I_K_TARGET_AVX512 name##_avx512 params { name##_body args; } \
  static void M2I_K_TARGET_AVX2 name##_avx2 params { name##_body args; } \
  static void name##_generic params { name##_body args; } \
  static void name params \
  { \
    M2iCpuFlags f_ = m2i_cpu_flags (); \
    if (f_ & M2I_CPU_AVX512F) \
      name##_avx512 args; \
    else if (f_ & M2I_CPU_AVX2) \
      name##_avx2 args; \
    else \
      name##_generic args; \
  }
#else
#define M2I_K_SIMD_CLONES(name, params, args) \
  static void name params { name##_body args; }
#endif

#define M2I_K_INLINE static inline __attribute__ ((always_inline))

G_END_DECLS
