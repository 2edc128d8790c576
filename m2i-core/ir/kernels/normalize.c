/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Normalisations, f32: MVN-1 (opset2), MVN-6, NormalizeL2-1 and LRN-1.
 *
 * MVN: y = (x − mean) / d over the reduction axes, d = 1 without
 * normalize_variance, else d = sqrt(var + eps) (eps_mode inside_sqrt) or
 * sqrt(var) + eps (outside_sqrt), var the mean of (x − mean)². MVN-1's
 * axes are 1.. (across_channels) or 2.. (per channel), or its
 * reduction_axes attribute; its eps goes inside the square root, as its
 * specification's formula and OpenVINO's reference say (OpenVINO's CPU
 * plugin turns MVN-1 into MVN-6 with outside_sqrt; the two differ by
 * ~eps/(2·var) relatively). MVN-6 reads its axes from a constant input.
 * NormalizeL2: y = x / sqrt(max(Σx², eps)) or sqrt(Σx² + eps) (eps_mode
 * max / add) over the axes of its constant second input (none: each
 * element by itself). Means, variances and sums are accumulated in double;
 * each output is one f32 subtraction and division.
 *
 * LRN: y = x / (bias + α/size^k · Σ x²)^β, the sum over a window of side
 * size centred on the element along each of the k axes of the constant
 * second input, clipped at the borders: [i − size/2, i + size/2] (integer
 * division), as the specification writes it. For odd sizes (all real
 * models) that is also OpenVINO's reference and torch's
 * local_response_norm; for an even size the reference takes (size−1)/2 on
 * each side instead.
 */
#include "kernels-private.h"

#include <math.h>
#include <string.h>

/* ---- MVN and NormalizeL2: statistics per group of reduced elements ------ */

typedef enum { N_MVN, N_L2 } NormKind;

typedef struct {
  NormKind kind;
  gboolean variance;                   /* MVN: normalize_variance */
  gboolean eps_inside;                 /* MVN: inside_sqrt; L2: add */
  double eps;
  gint64 count;                        /* elements per group */
  gint64 groups;
  gboolean trailing;                   /* each group one contiguous run */
  M2iBroadcast stat_plan;              /* operands: in, group */
  M2iBroadcast out_plan;               /* operands: in, group, out */
} NormState;

/* Per group: what to subtract and what to divide by. */
typedef struct {
  double sum, sq;
  float shift, div;
} NormStat;

static void
finish_stat (const NormState *s, NormStat *g)
{
  double n = (double) s->count;
  if (s->kind == N_L2) {
    double d = s->eps_inside ? g->sq + s->eps : MAX (g->sq, s->eps);
    g->shift = 0.0f;
    g->div = (float) sqrt (d);
    return;
  }
  double mean = n > 0 ? g->sum / n : 0.0;
  g->shift = (float) mean;
  g->div = 1.0f;
  if (s->variance) {
    double var = n > 0 ? g->sq / n : 0.0;
    g->div = (float) (s->eps_inside ? sqrt (var + s->eps) : sqrt (var) + s->eps);
  }
}

/* The loops of one contiguous group, compiled per instruction set. Sums
 * run in NORM_LANES double partial sums (lane l takes elements l, l +
 * NORM_LANES, ...), added lane by lane at the end: the same order at every
 * level, and no chain of dependent double additions per element. */
#define NORM_LANES 16

/* Σ (x[i] − mean)^pw over @n floats, pw 1 or 2 (in double). */
static inline double
norm_sum_body (const float *x, gint64 n, double mean, gint pw)
{
  double acc[NORM_LANES] = { 0 };
  gint64 i = 0;
  if (pw == 1) {
    for (; i + NORM_LANES <= n; i += NORM_LANES)
      for (gint l = 0; l < NORM_LANES; l++)
        acc[l] += (double) x[i + l];
  } else {
    for (; i + NORM_LANES <= n; i += NORM_LANES)
      for (gint l = 0; l < NORM_LANES; l++) {
        double d = (double) x[i + l] - mean;
        acc[l] += d * d;
      }
  }
  for (gint l = 0; i < n; i++, l++) {
    double d = (double) x[i] - mean;
    acc[l] += pw == 1 ? d : d * d;
  }
  double s = 0.0;
  for (gint l = 0; l < NORM_LANES; l++)
    s += acc[l];
  return s;
}

static inline void
norm_sum_wrap_body (const float *x, gint64 n, double mean, gint pw, double *out)
{
  *out = norm_sum_body (x, n, mean, pw);
}

M2I_K_SIMD_CLONES (norm_sum_wrap, (const float *x, gint64 n, double mean, gint pw, double *out),
    (x, n, mean, pw, out))

static inline void
norm_out_body (const float *x, float *y, gint64 n, float shift, float div)
{
  for (gint64 i = 0; i < n; i++)
    y[i] = (x[i] - shift) / div;
}

M2I_K_SIMD_CLONES (norm_out, (const float *x, float *y, gint64 n, float shift, float div),
    (x, y, n, shift, div))

/* One contiguous group: statistics, then the outputs. */
static void
norm_run (const NormState *s, const float *x, float *y)
{
  NormStat g = { 0 };
  gint64 n = s->count;
  if (s->kind == N_L2) {
    norm_sum_wrap (x, n, 0.0, 2, &g.sq);
  } else {
    norm_sum_wrap (x, n, 0.0, 1, &g.sum);
    double mean = n > 0 ? g.sum / (double) n : 0.0;
    if (s->variance)
      norm_sum_wrap (x, n, mean, 2, &g.sq);
  }
  finish_stat (s, &g);
  norm_out (x, y, n, g.shift, g.div);
}

typedef struct {
  const NormState *s;
  const float *x;
  float *y;
  NormStat *stats;
  gint pass;                           /* strided: 0 sums, 1 squares, 2 outputs */
} NormJob;

static void
norm_slice (gint begin, gint end, gint slice, gpointer data)
{
  const NormJob *j = data;
  for (gint g = begin; g < end; g++)
    norm_run (j->s, j->x + (gsize) g * j->s->count, j->y + (gsize) g * j->s->count);
}

static void
norm_row (const gint64 *off, gint64 n, gpointer user)
{
  const NormJob *j = user;
  const M2iBroadcast *p = j->pass == 2 ? &j->s->out_plan : &j->s->stat_plan;
  gint r = p->rank - 1;
  gint64 si = p->strides[0][r], sg = p->strides[1][r];
  const float *x = j->x + off[0];
  NormStat *g = j->stats + off[1];
  if (j->pass == 0) {
    for (gint64 i = 0; i < n; i++)
      g[i * sg].sum += x[i * si];
  } else if (j->pass == 1) {
    for (gint64 i = 0; i < n; i++) {
      NormStat *t = &g[i * sg];
      double d = j->s->kind == N_L2 ? x[i * si] : x[i * si] - t->sum / (double) j->s->count;
      t->sq += d * d;
    }
  } else {
    float *y = j->y + off[2];
    for (gint64 i = 0; i < n; i++)
      y[i] = (x[i * si] - g[i * sg].shift) / g[i * sg].div;
  }
}

/* Plans a normalisation of input 0 over @reduced axes. */
static gboolean
norm_setup (M2iOpContext *ctx, NormState *s, const gboolean *reduced)
{
  const M2iShape *in = &ctx->inputs[0].shape;
  M2iShape kept = *in;
  s->count = 1;
  gint last_kept = -1, first_reduced = in->rank;
  for (gint d = 0; d < in->rank; d++) {
    if (reduced[d]) {
      s->count *= in->dims[d];
      kept.dims[d] = 1;
      if (in->dims[d] != 1)
        first_reduced = MIN (first_reduced, d);
    } else if (in->dims[d] != 1) {
      last_kept = d;
    }
  }
  s->groups = m2i_shape_numel (&kept);
  s->trailing = last_kept < first_reduced;
  const M2iShape *ops[3] = { in, &kept, in };
  ir_k_broadcast_plan (&s->stat_plan, in, ops, 2);
  ir_k_broadcast_plan (&s->out_plan, in, ops, 3);
  if (!s->trailing)
    ctx->scratch_bytes = s->groups * sizeof (NormStat);
  ctx->outputs[0].type = M2I_ET_F32;
  ctx->outputs[0].shape = *in;
  ctx->state = g_memdup2 (s, sizeof *s);
  return TRUE;
}

static gboolean
norm_execute (M2iOpContext *ctx, GError **error)
{
  const NormState *s = ctx->state;
  NormJob j = { s, ctx->inputs[0].data, ctx->outputs[0].data, ctx->scratch, 0 };
  gint64 numel = s->groups * s->count;
  if (numel == 0)
    return TRUE;
  if (s->trailing) {
    gint slices = numel >= 65536 ? ir_k_threads (ctx) : 1;
    ir_k_parallel_for ((gint) s->groups, slices, 1, norm_slice, &j);
    return TRUE;
  }
  memset (j.stats, 0, s->groups * sizeof (NormStat));
  /* groups share rows: one thread for the statistics */
  ir_k_broadcast_run (&s->stat_plan, 1, norm_row, &j);
  if (s->kind == N_L2 || s->variance) {
    j.pass = 1;
    ir_k_broadcast_run (&s->stat_plan, 1, norm_row, &j);
  }
  for (gint64 g = 0; g < s->groups; g++)
    finish_stat (s, &j.stats[g]);
  j.pass = 2;
  ir_k_broadcast_run (&s->out_plan, ir_k_threads (ctx), norm_row, &j);
  return TRUE;
}

/* Marks @n axes (negative count from the end; repeats refused) in @reduced. */
static gboolean
mark_axes (const M2iOpContext *ctx, const gint64 *axes, gint n, gint rank, gboolean *reduced,
    GError **error)
{
  memset (reduced, 0, sizeof (gboolean) * M2I_MAX_RANK);
  for (gint i = 0; i < n; i++) {
    gint64 a;
    if (!ir_k_axis (ctx, axes[i], rank, TRUE, "axis", &a, error))
      return FALSE;
    if (reduced[a]) {
      m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
          "axis %" G_GINT64_FORMAT " is given twice", axes[i]);
      return FALSE;
    }
    reduced[a] = TRUE;
  }
  return TRUE;
}

/* A required float attribute. */
static gboolean
required_float (const M2iOpContext *ctx, const char *key, double *out, GError **error)
{
  return ir_k_require_attrs (ctx, error, key, NULL) &&
      m2i_ir_node_attr_float (ctx->node, key, 0.0, out, error);
}

static gboolean
mvn_infer (M2iOpContext *ctx, GError **error)
{
  gboolean v6 = ir_k_op_version (ctx) >= 6;
  if (!ir_k_check_arity (ctx, v6 ? 2 : 1, v6 ? 2 : 1, 1, 1, error) ||
      !ir_k_check_f32 (ctx, 0, error))
    return FALSE;
  gint rank = ctx->inputs[0].shape.rank;
  NormState s = { N_MVN };
  if (!m2i_ir_node_attr_bool (ctx->node, "normalize_variance", TRUE, &s.variance, error) ||
      !required_float (ctx, "eps", &s.eps, error))
    return FALSE;
  gint64 axes[M2I_MAX_RANK * 2];
  gint n_axes;
  if (v6) {
    static const char *const modes[] = { "inside_sqrt", "outside_sqrt", NULL };
    gint mode;
    if (!m2i_ir_node_attr_enum (ctx->node, "eps_mode", "inside_sqrt", modes, &mode, error) ||
        !ir_k_const_ints (ctx, 1, axes, G_N_ELEMENTS (axes), &n_axes, error))
      return FALSE;
    s.eps_inside = mode == 0;
  } else {
    s.eps_inside = TRUE;
    if (!m2i_ir_node_attr_ints (ctx->node, "reduction_axes", axes, G_N_ELEMENTS (axes),
            &n_axes, error))
      return FALSE;
    gboolean across;
    if (n_axes >= 0 && m2i_ir_node_get_attr (ctx->node, "across_channels")) {
      m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
          "attributes across_channels and reduction_axes cannot both be given");
      return FALSE;
    }
    if (n_axes < 0) {
      if (!m2i_ir_node_attr_bool (ctx->node, "across_channels", FALSE, &across, error))
        return FALSE;
      n_axes = 0;
      for (gint d = across ? 1 : 2; d < rank; d++)
        axes[n_axes++] = d;
    }
  }
  gboolean reduced[M2I_MAX_RANK];
  if (!mark_axes (ctx, axes, n_axes, rank, reduced, error))
    return FALSE;
  return norm_setup (ctx, &s, reduced);
}

static gboolean
normalize_l2_infer (M2iOpContext *ctx, GError **error)
{
  static const char *const modes[] = { "add", "max", NULL };
  if (!ir_k_check_arity (ctx, 2, 2, 1, 1, error) || !ir_k_check_f32 (ctx, 0, error))
    return FALSE;
  NormState s = { N_L2 };
  gint mode;
  gint64 axes[M2I_MAX_RANK * 2];
  gint n_axes;
  if (!required_float (ctx, "eps", &s.eps, error) ||
      !m2i_ir_node_attr_enum (ctx->node, "eps_mode", "add", modes, &mode, error) ||
      !ir_k_const_ints (ctx, 1, axes, G_N_ELEMENTS (axes), &n_axes, error))
    return FALSE;
  s.eps_inside = mode == 0;
  gboolean reduced[M2I_MAX_RANK];
  if (!mark_axes (ctx, axes, n_axes, ctx->inputs[0].shape.rank, reduced, error))
    return FALSE;
  return norm_setup (ctx, &s, reduced);
}

const M2iOpKernel ir_kernel_mvn = { "MVN", "opset2 opset6", mvn_infer, norm_execute, g_free };
const M2iOpKernel ir_kernel_normalize_l2 = {
  "NormalizeL2", "opset1", normalize_l2_infer, norm_execute, g_free,
};

/* ---- LRN --------------------------------------------------------------------- */

/* The window sums are separable: the squares are summed along one LRN axis
 * at a time (each line through a prefix sum, in double), so the cost is
 * numel × (number of axes) whatever the size. */
typedef struct {
  M2iShape shape;
  gboolean axis[M2I_MAX_RANK];
  gint64 half;                         /* size / 2 */
  float bias, scale, beta;             /* scale = α / size^k */
  gint64 numel, max_dim;
} LrnState;

/* Sums @sq (numel doubles) over the window along axis @a, in place; @line:
 * max_dim + 1 doubles. */
static void
lrn_axis_sums (const LrnState *s, gint a, double *sq, double *line)
{
  gint64 dim = s->shape.dims[a], outer, inner;
  ir_k_outer_inner (&s->shape, a, &outer, &inner);
  for (gint64 o = 0; o < outer; o++)
    for (gint64 i = 0; i < inner; i++) {
      double *p = sq + o * dim * inner + i;
      line[0] = 0.0;
      for (gint64 k = 0; k < dim; k++)
        line[k + 1] = line[k] + p[k * inner];           /* prefix sums */
      for (gint64 k = 0; k < dim; k++) {
        gint64 lo = MAX (k - s->half, 0), hi = MIN (k + s->half, dim - 1);
        p[k * inner] = line[hi + 1] - line[lo];
      }
    }
}

static gboolean
lrn_infer (M2iOpContext *ctx, GError **error)
{
  if (!ir_k_check_arity (ctx, 2, 2, 1, 1, error) || !ir_k_check_f32 (ctx, 0, error))
    return FALSE;
  const M2iShape *in = &ctx->inputs[0].shape;
  double alpha, beta, bias;
  gint64 size;
  gint64 axes[M2I_MAX_RANK * 2];
  gint n_axes;
  if (!required_float (ctx, "alpha", &alpha, error) ||
      !required_float (ctx, "beta", &beta, error) ||
      !required_float (ctx, "bias", &bias, error) ||
      !m2i_ir_node_attr_int (ctx->node, "size", 0, &size, error) ||
      !ir_k_const_ints (ctx, 1, axes, G_N_ELEMENTS (axes), &n_axes, error))
    return FALSE;
  if (size < 1 || size > G_MAXINT32) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "attribute size=\"%s\" must be a positive integer",
        m2i_ir_node_get_attr (ctx->node, "size") ? m2i_ir_node_get_attr (ctx->node, "size") : "");
    return FALSE;
  }
  LrnState *s = g_new0 (LrnState, 1);
  if (!mark_axes (ctx, axes, n_axes, in->rank, s->axis, error)) {
    g_free (s);
    return FALSE;
  }
  s->shape = *in;
  for (gint d = 0; d < in->rank; d++)
    s->max_dim = MAX (s->max_dim, in->dims[d]);
  s->half = size / 2;
  s->bias = (float) bias;
  s->beta = (float) beta;
  s->scale = (float) (alpha / pow ((double) size, n_axes));
  s->numel = m2i_shape_numel (in);
  ctx->scratch_bytes = (s->numel + s->max_dim + 1) * sizeof (double);
  ctx->outputs[0].type = M2I_ET_F32;
  ctx->outputs[0].shape = *in;
  ctx->state = s;
  return TRUE;
}

static gboolean
lrn_execute (M2iOpContext *ctx, GError **error)
{
  const LrnState *s = ctx->state;
  const float *x = ctx->inputs[0].data;
  float *y = ctx->outputs[0].data;
  double *sq = ctx->scratch, *line = sq + s->numel;
  for (gint64 i = 0; i < s->numel; i++)
    sq[i] = (double) x[i] * x[i];
  for (gint a = 0; a < s->shape.rank; a++)
    if (s->axis[a])
      lrn_axis_sums (s, a, sq, line);
  for (gint64 i = 0; i < s->numel; i++)
    y[i] = x[i] / powf (s->bias + s->scale * (float) sq[i], s->beta);
  return TRUE;
}

const M2iOpKernel ir_kernel_lrn = { "LRN", "opset1", lrn_infer, lrn_execute, g_free };
