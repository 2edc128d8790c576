/* ReduceMean-1: the mean over the axes given by the second input (a
 * constant integer tensor; negative axes count from the end, repeats are
 * merged), keep_dims keeping the reduced axes as 1. An empty axes list
 * leaves the data unchanged. f32 sums in double; i32/i64 sum in 64 bits
 * and divide with truncation, as OpenVINO's reference does in the element
 * type. */
#include "kernels-private.h"

#include <math.h>
#include <string.h>

typedef struct {
  M2iElementType type;
  M2iBroadcast plan;                   /* over the input: operands in, out */
  gint64 count;                        /* elements per mean */
  gint64 out_numel;
  gboolean trailing;                   /* f32, the reduced axes are the last ones */
} ReduceState;

typedef struct {
  const ReduceState *s;
  const guint8 *in;
  gpointer acc;                        /* out_numel doubles or gint64s */
} ReduceJob;

static void
reduce_row (const gint64 *off, gint64 n, gpointer user)
{
  const ReduceJob *j = user;
  const ReduceState *s = j->s;
  gint64 si = s->plan.strides[0][s->plan.rank - 1];
  gint64 so = s->plan.strides[1][s->plan.rank - 1];
  switch (s->type) {
    case M2I_ET_F32: {
      const float *x = (const float *) j->in + off[0];
      double *acc = (double *) j->acc + off[1];
      if (so == 0 && si == 1) {
        /* A contiguous run into one sum (a global average pool): eight
         * partial sums, so the additions need not wait on each other. */
        double part[8] = { 0 };
        gint64 i = 0;
        for (; i + 8 <= n; i += 8)
          for (gint k = 0; k < 8; k++)
            part[k] += x[i + k];
        for (; i < n; i++)
          part[0] += x[i];
        acc[0] += ((part[0] + part[1]) + (part[2] + part[3])) +
            ((part[4] + part[5]) + (part[6] + part[7]));
      } else {
        for (gint64 i = 0; i < n; i++)
          acc[i * so] += x[i * si];
      }
      break;
    }
    case M2I_ET_I32: {
      const gint32 *x = (const gint32 *) j->in + off[0];
      guint64 *acc = (guint64 *) j->acc + off[1];
      for (gint64 i = 0; i < n; i++)
        acc[i * so] += (guint64) (gint64) x[i * si];
      break;
    }
    default: {
      const gint64 *x = (const gint64 *) j->in + off[0];
      guint64 *acc = (guint64 *) j->acc + off[1];
      for (gint64 i = 0; i < n; i++)
        acc[i * so] += (guint64) x[i * si];
      break;
    }
  }
}

/* Means of @rows contiguous runs of @count floats (the reduced axes are
 * the trailing ones: a global average pool), each summed in double with
 * eight partial sums, as reduce_row does (compiled per instruction set:
 * the partial sums are one vector). */
M2I_K_INLINE void
mean_rows_body (const float *x, gint64 rows, gint64 count, float *out)
{
  for (gint64 r = 0; r < rows; r++, x += count) {
    double part[8] = { 0 };
    gint64 i = 0;
    for (; i + 8 <= count; i += 8)
      for (gint k = 0; k < 8; k++)
        part[k] += x[i + k];
    for (; i < count; i++)
      part[0] += x[i];
    double sum = ((part[0] + part[1]) + (part[2] + part[3])) +
        ((part[4] + part[5]) + (part[6] + part[7]));
    out[r] = (float) (sum / (double) count);
  }
}
M2I_K_SIMD_CLONES (mean_rows, (const float *x, gint64 rows, gint64 count, float *out),
    (x, rows, count, out))

typedef struct {
  const ReduceState *s;
  const float *in;
  float *out;
} MeanJob;

static void
mean_slice (gint begin, gint end, gint slice, gpointer data)
{
  const MeanJob *j = data;
  mean_rows (j->in + (gsize) begin * j->s->count, end - begin, j->s->count, j->out + begin);
}

static gboolean
reduce_mean_infer (M2iOpContext *ctx, GError **error)
{
  static const M2iElementType types[] = { M2I_ET_F32, M2I_ET_I32, M2I_ET_I64 };
  if (!ir_k_check_arity (ctx, 2, 2, 1, 1, error) ||
      !ir_k_check_type (ctx, 0, types, G_N_ELEMENTS (types), error))
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
  s->type = ctx->inputs[0].type;
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
  /* Reduced axes after every kept one: each mean is a contiguous run. */
  gint last_kept = -1, first_reduced = in->rank;
  for (gint d = 0; d < in->rank; d++) {
    if (reduced[d] && in->dims[d] != 1)
      first_reduced = MIN (first_reduced, d);
    else if (!reduced[d] && in->dims[d] != 1)
      last_kept = d;
  }
  s->trailing = s->type == M2I_ET_F32 && last_kept < first_reduced && s->count > 0;
  const M2iShape *ops[2] = { in, &kept };
  ir_k_broadcast_plan (&s->plan, in, ops, 2);
  s->out_numel = m2i_shape_numel (&out);
  ctx->scratch_bytes = s->out_numel * 8;
  ctx->outputs[0].type = s->type;
  ctx->outputs[0].shape = out;
  ctx->state = s;
  return TRUE;
}

static gboolean
reduce_mean_execute (M2iOpContext *ctx, GError **error)
{
  const ReduceState *s = ctx->state;
  ReduceJob j = { s, ctx->inputs[0].data, ctx->scratch };
  if (s->out_numel == 0)
    return TRUE;
  if (s->trailing) {
    MeanJob mj = { s, ctx->inputs[0].data, ctx->outputs[0].data };
    gint slices = s->out_numel * s->count >= 65536 ? ir_k_threads (ctx) : 1;
    ir_k_parallel_for ((gint) s->out_numel, slices, 1, mean_slice, &mj);
    return TRUE;
  }
  memset (ctx->scratch, 0, s->out_numel * 8);
  if (s->count > 0 && s->out_numel > 0)
    ir_k_broadcast_run (&s->plan, 1, reduce_row, &j);   /* rows share sums */
  for (gint64 i = 0; i < s->out_numel; i++) {
    switch (s->type) {
      case M2I_ET_F32:
        ((float *) ctx->outputs[0].data)[i] = s->count ?
            (float) (((double *) ctx->scratch)[i] / (double) s->count) : NAN;
        break;
      case M2I_ET_I32:
        ((gint32 *) ctx->outputs[0].data)[i] = s->count ?
            (gint32) ((gint64) ((guint64 *) ctx->scratch)[i] / s->count) : 0;
        break;
      default:
        ((gint64 *) ctx->outputs[0].data)[i] = s->count ?
            (gint64) ((guint64 *) ctx->scratch)[i] / s->count : 0;
        break;
    }
  }
  return TRUE;
}

const M2iOpKernel ir_kernel_reduce_mean = {
  "ReduceMean", "opset1", reduce_mean_infer, reduce_mean_execute, g_free,
};
