/* SoftMax-1 (axis in [0, rank)) and SoftMax-8 (axis in [-rank, rank)), f32:
 * y = exp(x - max) / Σ exp(x - max) along the axis. The data is seen as
 * [outer, axis, inner]; the inner axis is walked contiguously, so a
 * softmax over channels of an NCHW tensor vectorizes across pixels. */
#include "kernels-private.h"
#include <base/m2i-parallel.h>

#include <math.h>

typedef struct {
  gint64 outer, n, inner;
  gint slices;
} SoftmaxState;

typedef struct {
  const SoftmaxState *s;
  const float *x;
  float *y, *scratch;                  /* per slice: 2 · inner floats */
} SoftmaxJob;

static void
softmax_slice (gint begin, gint end, gint slice, gpointer data)
{
  const SoftmaxJob *j = data;
  const SoftmaxState *s = j->s;
  gint64 inner = s->inner;
  float *mx = j->scratch + slice * 2 * inner, *sum = mx + inner;
  for (gint o = begin; o < end; o++) {
    const float *x = j->x + o * s->n * inner;
    float *y = j->y + o * s->n * inner;
    for (gint64 i = 0; i < inner; i++) {
      mx[i] = x[i];
      sum[i] = 0.0f;
    }
    for (gint64 a = 1; a < s->n; a++)
      for (gint64 i = 0; i < inner; i++)
        mx[i] = x[a * inner + i] > mx[i] ? x[a * inner + i] : mx[i];
    for (gint64 a = 0; a < s->n; a++)
      for (gint64 i = 0; i < inner; i++) {
        float e = expf (x[a * inner + i] - mx[i]);
        y[a * inner + i] = e;
        sum[i] += e;
      }
    for (gint64 a = 0; a < s->n; a++)
      for (gint64 i = 0; i < inner; i++)
        y[a * inner + i] /= sum[i];
  }
}

static gboolean
softmax_infer (M2iOpContext *ctx, GError **error)
{
  if (!ir_k_check_arity (ctx, 1, 1, 1, 1, error) || !ir_k_check_f32 (ctx, 0, error))
    return FALSE;
  const M2iShape *in = &ctx->inputs[0].shape;
  gboolean v8 = ir_k_op_version (ctx) >= 8;
  gint64 axis;
  if (!m2i_ir_node_attr_int (ctx->node, "axis", 1, &axis, error) ||
      !ir_k_axis (ctx, axis, MAX (in->rank, 1), v8, "axis", &axis, error))
    return FALSE;
  SoftmaxState *s = g_new0 (SoftmaxState, 1);
  s->outer = s->inner = 1;
  for (gint d = 0; d < in->rank; d++) {
    if (d < axis)
      s->outer *= in->dims[d];
    else if (d > axis)
      s->inner *= in->dims[d];
  }
  s->n = in->rank ? in->dims[axis] : 1;
  s->slices = ir_k_threads (ctx);
  ctx->scratch_bytes = s->slices * 2 * s->inner * sizeof (float);
  ctx->outputs[0].type = M2I_ET_F32;
  ctx->outputs[0].shape = *in;
  ctx->state = s;
  return TRUE;
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
