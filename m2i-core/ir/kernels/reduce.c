/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reductions over the axes given by the second input (a constant integer
 * tensor; negative axes count from the end, repeats are merged; an empty
 * list leaves the data unchanged, as the specifications say — also for
 * L1, L2: no absolute value), keep_dims keeping the reduced axes as
 * 1: ReduceMean-1, ReduceSum-1, ReduceProd-1, ReduceMax-1, ReduceMin-1,
 * ReduceL1-4, ReduceL2-4 (f32, i32, i64; L2 f32 only) and
 * ReduceLogicalAnd-1, ReduceLogicalOr-1 (boolean).
 *
 * f32 sums, products and norms accumulate in double and round once;
 * integers accumulate in 64 bits (wrapping) and Mean divides with
 * truncation, as OpenVINO's reference does in the element type. Max and
 * Min keep the first of equal values (x > m ? x : m, so NaNs are passed
 * over unless they come first). Over an empty set of elements: Sum, L1,
 * L2 give 0, Prod 1, Mean NaN (0 for integers), Max the lowest value of
 * the type (−inf), Min the highest (+inf), And true, Or false.
 */
#include "kernels-private.h"

#include <math.h>
#include <string.h>

typedef enum { R_MEAN, R_SUM, R_PROD, R_MAX, R_MIN, R_L1, R_L2, R_AND, R_OR } RedOp;

typedef struct {
  RedOp op;
  M2iElementType type;
  M2iBroadcast plan;                   /* over the input: operands in, out */
  gint64 count;                        /* elements per result */
  gint64 out_numel;
  gboolean trailing;                   /* the reduced axes are the last ones */
  gboolean identity;                   /* no axes */
} ReduceState;

/* Accumulators: one 8-byte slot per result (double for f32, 64-bit
 * integers otherwise), started at the op's identity. */
typedef union {
  double d;
  guint64 u;
  gint64 i;
} Acc;

static void
acc_init (const ReduceState *s, Acc *a)
{
  gboolean f = s->type == M2I_ET_F32;
  switch (s->op) {
    case R_PROD: if (f) a->d = 1.0; else a->u = 1; break;
    case R_MAX: if (f) a->d = -INFINITY; else a->i = s->type == M2I_ET_I32 ? G_MININT32 : G_MININT64; break;
    case R_MIN: if (f) a->d = INFINITY; else a->i = s->type == M2I_ET_I32 ? G_MAXINT32 : G_MAXINT64; break;
    case R_AND: a->u = 1; break;
    default: if (f) a->d = 0.0; else a->u = 0; break;
  }
}

/* Folds @n elements (stride @si) into accumulators (stride @so; 0: all
 * into one). */
static void
acc_add_f32 (RedOp op, const float *x, gint64 si, Acc *acc, gint64 so, gint64 n)
{
  for (gint64 i = 0; i < n; i++) {
    double v = x[i * si], *a = &acc[i * so].d;
    switch (op) {
      case R_PROD: *a *= v; break;
      case R_MAX: *a = v > *a ? v : *a; break;
      case R_MIN: *a = v < *a ? v : *a; break;
      case R_L1: *a += fabs (v); break;
      case R_L2: *a += v * v; break;
      default: *a += v; break;
    }
  }
}

#define ACC_ADD_INT(T) \
  static void \
  acc_add_##T (RedOp op, const T *x, gint64 si, Acc *acc, gint64 so, gint64 n) \
  { \
    for (gint64 i = 0; i < n; i++) { \
      gint64 v = x[i * si]; \
      Acc *a = &acc[i * so]; \
      switch (op) { \
        case R_PROD: a->u *= (guint64) v; break; \
        case R_MAX: a->i = v > a->i ? v : a->i; break; \
        case R_MIN: a->i = v < a->i ? v : a->i; break; \
        case R_L1: a->u += v < 0 ? 0 - (guint64) v : (guint64) v; break; \
        default: a->u += (guint64) v; break; \
      } \
    } \
  }
ACC_ADD_INT (gint32)
ACC_ADD_INT (gint64)

static void
acc_add_bool (RedOp op, const guint8 *x, gint64 si, Acc *acc, gint64 so, gint64 n)
{
  for (gint64 i = 0; i < n; i++) {
    guint64 v = x[i * si] != 0;
    acc[i * so].u = op == R_AND ? (acc[i * so].u & v) : (acc[i * so].u | v);
  }
}

static void
acc_add (const ReduceState *s, const guint8 *x, gint64 si, Acc *acc, gint64 so, gint64 n)
{
  switch (s->type) {
    case M2I_ET_F32: acc_add_f32 (s->op, (const float *) x, si, acc, so, n); break;
    case M2I_ET_I32: acc_add_gint32 (s->op, (const gint32 *) x, si, acc, so, n); break;
    case M2I_ET_I64: acc_add_gint64 (s->op, (const gint64 *) x, si, acc, so, n); break;
    default: acc_add_bool (s->op, x, si, acc, so, n); break;
  }
}

/* Stores result @k from its accumulator. */
static void
acc_store (const ReduceState *s, const Acc *a, gpointer out, gint64 k)
{
  switch (s->type) {
    case M2I_ET_F32: {
      double v = a->d;
      if (s->op == R_MEAN)
        v = s->count ? v / (double) s->count : NAN;
      else if (s->op == R_L2)
        v = sqrt (v);
      ((float *) out)[k] = (float) v;
      break;
    }
    case M2I_ET_I32:
    case M2I_ET_I64: {
      gint64 v = a->i;
      if (s->op == R_MEAN)
        v = s->count ? v / s->count : 0;
      if (s->type == M2I_ET_I32)
        ((gint32 *) out)[k] = (gint32) v;
      else
        ((gint64 *) out)[k] = v;
      break;
    }
    default:
      ((guint8 *) out)[k] = (guint8) a->u;
      break;
  }
}

/* ---- the reduced axes are the trailing ones: one contiguous run each ---- */

/* f32 sums of @rows runs of @count floats, eight partial sums each (in
 * double), so the additions need not wait on each other; compiled per
 * instruction set (the partial sums are one vector). */
M2I_K_INLINE void
sum_rows_body (const float *x, gint64 rows, gint64 count, gboolean square, double *out)
{
  for (gint64 r = 0; r < rows; r++, x += count) {
    double part[8] = { 0 };
    gint64 i = 0;
    if (square) {
      for (; i + 8 <= count; i += 8)
        for (gint k = 0; k < 8; k++)
          part[k] += (double) x[i + k] * x[i + k];
      for (; i < count; i++)
        part[0] += (double) x[i] * x[i];
    } else {
      for (; i + 8 <= count; i += 8)
        for (gint k = 0; k < 8; k++)
          part[k] += x[i + k];
      for (; i < count; i++)
        part[0] += x[i];
    }
    out[r] = ((part[0] + part[1]) + (part[2] + part[3])) +
        ((part[4] + part[5]) + (part[6] + part[7]));
  }
}
M2I_K_SIMD_CLONES (sum_rows, (const float *x, gint64 rows, gint64 count, gboolean square,
        double *out), (x, rows, count, square, out))

typedef struct {
  const ReduceState *s;
  const guint8 *in;
  gpointer out;
} RunJob;

static void
run_slice (gint begin, gint end, gint slice, gpointer data)
{
  const RunJob *j = data;
  const ReduceState *s = j->s;
  gsize es = m2i_element_type_size (s->type);
  for (gint r = begin; r < end; r++) {
    const guint8 *x = j->in + (gsize) r * s->count * es;
    Acc a;
    if (s->type == M2I_ET_F32 && (s->op == R_MEAN || s->op == R_SUM || s->op == R_L2))
      sum_rows ((const float *) x, 1, s->count, s->op == R_L2, &a.d);
    else {
      acc_init (s, &a);
      acc_add (s, x, 1, &a, 0, s->count);
    }
    acc_store (s, &a, j->out, r);
  }
}

/* ---- the kernel ------------------------------------------------------------ */

typedef struct {
  const ReduceState *s;
  const guint8 *in;
  Acc *acc;
} StridedJob;

static void
strided_row (const gint64 *off, gint64 n, gpointer user)
{
  const StridedJob *j = user;
  const ReduceState *s = j->s;
  gint64 si = s->plan.strides[0][s->plan.rank - 1];
  gint64 so = s->plan.strides[1][s->plan.rank - 1];
  acc_add (s, j->in + off[0] * m2i_element_type_size (s->type), si, j->acc + off[1], so, n);
}

static gboolean
reduce_infer (M2iOpContext *ctx, RedOp op, GError **error)
{
  static const M2iElementType numbers[] = { M2I_ET_F32, M2I_ET_I32, M2I_ET_I64 };
  static const M2iElementType boolean[] = { M2I_ET_BOOLEAN };
  gboolean logical = op == R_AND || op == R_OR;
  if (!ir_k_check_arity (ctx, 2, 2, 1, 1, error) ||
      !ir_k_check_type (ctx, 0, logical ? boolean : numbers,
          logical ? 1 : op == R_L2 ? 1 : G_N_ELEMENTS (numbers), error))
    return FALSE;
  const M2iShape *in = &ctx->inputs[0].shape;
  gboolean keep;
  gint64 axes[M2I_MAX_RANK * 2];
  gint n_axes;
  if (!m2i_ir_node_attr_bool (ctx->node, "keep_dims", FALSE, &keep, error) ||
      !ir_k_const_ints (ctx, 1, axes, G_N_ELEMENTS (axes), &n_axes, error))
    return FALSE;
  gboolean reduced[M2I_MAX_RANK] = { FALSE };
  for (gint i = 0; i < n_axes; i++) {
    gint64 a;
    if (!ir_k_axis (ctx, axes[i], in->rank, TRUE, "axis", &a, error))
      return FALSE;
    reduced[a] = TRUE;
  }
  ReduceState *s = g_new0 (ReduceState, 1);
  s->op = op;
  s->type = ctx->inputs[0].type;
  s->identity = n_axes == 0;
  s->count = 1;
  M2iShape kept = *in, out = { 0 };
  for (gint d = 0; d < in->rank; d++) {
    if (reduced[d]) {
      s->count *= in->dims[d];
      kept.dims[d] = 1;
      if (keep)
        out.dims[out.rank++] = 1;
    } else {
      out.dims[out.rank++] = in->dims[d];
    }
  }
  /* Reduced axes after every kept one: each result is a contiguous run. */
  gint last_kept = -1, first_reduced = in->rank;
  for (gint d = 0; d < in->rank; d++) {
    if (reduced[d] && in->dims[d] != 1)
      first_reduced = MIN (first_reduced, d);
    else if (!reduced[d] && in->dims[d] != 1)
      last_kept = d;
  }
  s->trailing = last_kept < first_reduced;
  const M2iShape *ops[2] = { in, &kept };
  ir_k_broadcast_plan (&s->plan, in, ops, 2);
  s->out_numel = m2i_shape_numel (&out);
  if (!s->trailing)
    ctx->scratch_bytes = s->out_numel * sizeof (Acc);
  ctx->outputs[0].type = s->type;
  ctx->outputs[0].shape = out;
  ctx->state = s;
  return TRUE;
}

static gboolean
reduce_execute (M2iOpContext *ctx, GError **error)
{
  const ReduceState *s = ctx->state;
  if (s->out_numel == 0)
    return TRUE;
  if (s->identity) {
    memcpy (ctx->outputs[0].data, ctx->inputs[0].data, m2i_tensor_nbytes (&ctx->outputs[0]));
    return TRUE;
  }
  if (s->trailing) {
    RunJob j = { s, ctx->inputs[0].data, ctx->outputs[0].data };
    gint slices = s->out_numel * s->count >= 65536 ? ir_k_threads (ctx) : 1;
    ir_k_parallel_for ((gint) s->out_numel, slices, 1, run_slice, &j);
    return TRUE;
  }
  Acc *acc = ctx->scratch;
  for (gint64 i = 0; i < s->out_numel; i++)
    acc_init (s, &acc[i]);
  StridedJob j = { s, ctx->inputs[0].data, acc };
  if (s->count > 0)
    ir_k_broadcast_run (&s->plan, 1, strided_row, &j);   /* rows share results */
  for (gint64 i = 0; i < s->out_numel; i++)
    acc_store (s, &acc[i], ctx->outputs[0].data, i);
  return TRUE;
}

#define REDUCE_KERNEL(var, name, opsets, op) \
  static gboolean var##_infer (M2iOpContext *c, GError **e) { return reduce_infer (c, op, e); } \
  const M2iOpKernel ir_kernel_##var = { name, opsets, var##_infer, reduce_execute, g_free };

REDUCE_KERNEL (reduce_mean, "ReduceMean", "opset1", R_MEAN)
REDUCE_KERNEL (reduce_sum, "ReduceSum", "opset1", R_SUM)
REDUCE_KERNEL (reduce_prod, "ReduceProd", "opset1", R_PROD)
REDUCE_KERNEL (reduce_max, "ReduceMax", "opset1", R_MAX)
REDUCE_KERNEL (reduce_min, "ReduceMin", "opset1", R_MIN)
REDUCE_KERNEL (reduce_l1, "ReduceL1", "opset4", R_L1)
REDUCE_KERNEL (reduce_l2, "ReduceL2", "opset4", R_L2)
REDUCE_KERNEL (reduce_logical_and, "ReduceLogicalAnd", "opset1", R_AND)
REDUCE_KERNEL (reduce_logical_or, "ReduceLogicalOr", "opset1", R_OR)
