/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* SoftMax-1 (axis in [0, rank)) and SoftMax-8 (axis in [-rank, rank)), f32:
 * y = exp(x - max) / Σ exp(x - max) along the axis; LogSoftMax-5 (axis in
 * [-rank, rank)): y = (x - max) - log Σ exp(x - max). The data is seen as
 * [outer, axis, inner]; the inner axis is walked contiguously, so a
 * softmax over channels of an NCHW tensor vectorizes across pixels. */
#include "kernels-private.h"
#include "vmath.h"
#include <base/m2i-parallel.h>

#include <math.h>

typedef struct {
  gint64 outer, n, inner;
  gint slices;
  gboolean log;                        /* LogSoftmax */
} SoftmaxState;

typedef struct {
  const SoftmaxState *s;
  const float *x;
  float *y, *scratch;                  /* per slice: 2 · inner floats */
} SoftmaxJob;

/* Outer blocks [begin, end): plain C compiled per instruction set, e^x
 * from vmath.h, so every loop runs along the inner axis in vectors. */
M2I_K_INLINE void
softmax_rows_body (const SoftmaxState *s, const float *xs, float *ys, float *mx, float *sum,
    gint begin, gint end)
{
  gint64 inner = s->inner;
  for (gint o = begin; o < end; o++) {
    const float *x = xs + o * s->n * inner;
    float *y = ys + o * s->n * inner;
    for (gint64 i = 0; i < inner; i++) {
      mx[i] = x[i];
      sum[i] = 0.0f;
    }
    for (gint64 a = 1; a < s->n; a++)
      for (gint64 i = 0; i < inner; i++)
        mx[i] = x[a * inner + i] > mx[i] ? x[a * inner + i] : mx[i];
    for (gint64 a = 0; a < s->n; a++)
      for (gint64 i = 0; i < inner; i++) {
        float e = ir_vm_exp (x[a * inner + i] - mx[i]);
        y[a * inner + i] = e;
        sum[i] += e;
      }
    if (s->log) {
      for (gint64 i = 0; i < inner; i++)
        sum[i] = logf (sum[i]);
      for (gint64 a = 0; a < s->n; a++)
        for (gint64 i = 0; i < inner; i++)
          y[a * inner + i] = (x[a * inner + i] - mx[i]) - sum[i];
      continue;
    }
    for (gint64 a = 0; a < s->n; a++)
      for (gint64 i = 0; i < inner; i++)
        y[a * inner + i] /= sum[i];
  }
}
M2I_K_SIMD_CLONES (softmax_rows, (const SoftmaxState *s, const float *xs, float *ys, float *mx,
        float *sum, gint begin, gint end), (s, xs, ys, mx, sum, begin, end))

static void
softmax_slice (gint begin, gint end, gint slice, gpointer data)
{
  const SoftmaxJob *j = data;
  float *mx = j->scratch + slice * 2 * j->s->inner;
  softmax_rows (j->s, j->x, j->y, mx, mx + j->s->inner, begin, end);
}

static gboolean
softmax_infer_any (M2iOpContext *ctx, gboolean log, GError **error)
{
  if (!ir_k_check_arity (ctx, 1, 1, 1, 1, error) || !ir_k_check_f32 (ctx, 0, error))
    return FALSE;
  const M2iShape *in = &ctx->inputs[0].shape;
  gboolean v8 = log || ir_k_op_version (ctx) >= 8;
  gint64 axis;
  if (!m2i_ir_node_attr_int (ctx->node, "axis", 1, &axis, error) ||
      !ir_k_axis (ctx, axis, MAX (in->rank, 1), v8, "axis", &axis, error))
    return FALSE;
  SoftmaxState *s = g_new0 (SoftmaxState, 1);
  ir_k_outer_inner (in, (gint) axis, &s->outer, &s->inner);
  s->n = in->rank ? in->dims[axis] : 1;
  s->log = log;
  s->slices = ir_k_threads (ctx);
  ctx->scratch_bytes = s->slices * 2 * s->inner * sizeof (float);
  ctx->outputs[0].type = M2I_ET_F32;
  ctx->outputs[0].shape = *in;
  ctx->state = s;
  return TRUE;
}

static gboolean
softmax_infer (M2iOpContext *ctx, GError **error)
{
  return softmax_infer_any (ctx, FALSE, error);
}

static gboolean
log_softmax_infer (M2iOpContext *ctx, GError **error)
{
  return softmax_infer_any (ctx, TRUE, error);
}

static gboolean
softmax_execute (M2iOpContext *ctx, GError **error)
{
  const SoftmaxState *s = ctx->state;
  SoftmaxJob j = { s, ctx->inputs[0].data, ctx->outputs[0].data, ctx->scratch };
  if (s->n == 0 || s->inner == 0)
    return TRUE;
  gint slices = s->outer * s->n * s->inner >= 16384 ? MIN (ir_k_threads (ctx), s->slices) : 1;
  ir_k_parallel_for ((gint) s->outer, slices, 1, softmax_slice, &j);
  return TRUE;
}

const M2iOpKernel ir_kernel_softmax = {
  "SoftMax", "opset1 opset8", softmax_infer, softmax_execute, g_free,
};

const M2iOpKernel ir_kernel_log_softmax = {
  "LogSoftmax", "opset5", log_softmax_infer, softmax_execute, g_free,
};
