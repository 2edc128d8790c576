/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* SoftMax-1 (axis in [0, rank)) and SoftMax-8 (axis in [-rank, rank)), f32:
 * y = exp(x - max) / Σ exp(x - max) along the axis; LogSoftMax-5 (axis in
 * [-rank, rank)): y = (x - max) - log Σ exp(x - max). The data is seen as
 * [outer, axis, inner]; the inner axis is walked contiguously, so a
 * softmax over channels of an NCHW tensor vectorizes across pixels. */
#include "kernels-private.h"
#include "vmath.h"
#include <base/m2i-align.h>
#include <base/m2i-parallel.h>

#include <math.h>

/* Rows of a softmax along the last axis (inner = 1) are taken this many
 * at a time, transposed, when the axis is at most ROWS_MAX_N long (SSD's
 * two-class [1, 10112, 2] confidences): the loops then run across rows in
 * vectors instead of one scalar row at a time (0.135 -> 0.03 ms). */
#define ROWS_BLOCK 64
#define ROWS_MAX_N 16

typedef struct {
  gint64 outer, n, inner;
  gint slices;
  gboolean log;                        /* LogSoftmax */
  gboolean rows;                       /* inner = 1, n <= ROWS_MAX_N: rows transposed */
  gsize slice_floats;                  /* scratch per slice, whole cache lines */
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
  const SoftmaxState *s = j->s;
  float *mx = j->scratch + slice * s->slice_floats;
  if (!s->rows) {
    softmax_rows (s, j->x, j->y, mx, mx + s->inner, begin, end);
    return;
  }
  /* Up to ROWS_BLOCK rows of n as n rows of r (inner = r), the same sums
   * in the same order for each row. */
  gint64 n = s->n;
  float *tx = mx + 2 * ROWS_BLOCK, *ty = tx + n * ROWS_BLOCK;
  for (gint64 o = begin; o < end; o += ROWS_BLOCK) {
    gint64 r = MIN (ROWS_BLOCK, end - o);
    const float *x = j->x + o * n;
    float *y = j->y + o * n;
    for (gint64 i = 0; i < r; i++)
      for (gint64 a = 0; a < n; a++)
        tx[a * r + i] = x[i * n + a];
    SoftmaxState t = { 1, n, r, 1, s->log, FALSE, 0 };
    softmax_rows (&t, tx, ty, mx, mx + r, 0, 1);
    for (gint64 i = 0; i < r; i++)
      for (gint64 a = 0; a < n; a++)
        y[i * n + a] = ty[a * r + i];
  }
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
  s->rows = s->inner == 1 && s->n <= ROWS_MAX_N;
  /* each slice's on cache lines of its own (two slices writing one line
   * took 0.30 ms where one thread took 0.135) */
  s->slice_floats = m2i_align_up (s->rows ? 2 * ROWS_BLOCK * (1 + s->n) : 2 * s->inner, 16);
  ctx->scratch_bytes = s->slices * s->slice_floats * sizeof (float);
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
