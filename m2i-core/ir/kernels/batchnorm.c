/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* BatchNormInference-1 and -5, f32, channel axis 1:
 * y = (x − mean) / sqrt(var + ε) · γ + β.
 * The two versions take the same five inputs in different orders:
 * opset1 (γ, β, data, mean, var), opset5 (data, γ, β, mean, var). */
#include "kernels-private.h"
#include <base/m2i-parallel.h>

#include <math.h>

typedef struct {
  gint data, gamma, beta, mean, var;   /* input ports */
  float eps;
  gint64 batch, c, inner;
} BnState;

typedef struct {
  const BnState *s;
  const float *x, *gamma, *beta, *mean, *var;
  float *y;
} BnJob;

M2I_K_INLINE void
bn_row_body (const float *x, float *y, gint64 n, float mean, float denom, float gamma,
    float beta)
{
  for (gint64 i = 0; i < n; i++)
    y[i] = (x[i] - mean) / denom * gamma + beta;
}
M2I_K_SIMD_CLONES (bn_row, (const float *x, float *y, gint64 n, float mean, float denom,
        float gamma, float beta), (x, y, n, mean, denom, gamma, beta))

static void
bn_slice (gint begin, gint end, gint slice, gpointer data)
{
  const BnJob *j = data;
  const BnState *s = j->s;
  for (gint p = begin; p < end; p++) {
    gint64 c = p % s->c;
    float denom = sqrtf (j->var[c] + s->eps);
    bn_row (j->x + p * s->inner, j->y + p * s->inner, s->inner, j->mean[c], denom,
        j->gamma[c], j->beta[c]);
  }
}

static gboolean
bn_infer (M2iOpContext *ctx, GError **error)
{
  if (!ir_k_check_arity (ctx, 5, 5, 1, 1, error))
    return FALSE;
  BnState s = { 0 };
  if (ir_k_op_version (ctx) < 5) {
    s = (BnState) { .gamma = 0, .beta = 1, .data = 2, .mean = 3, .var = 4 };
  } else {
    s = (BnState) { .data = 0, .gamma = 1, .beta = 2, .mean = 3, .var = 4 };
  }
  for (gint i = 0; i < 5; i++)
    if (!ir_k_check_f32 (ctx, i, error))
      return FALSE;
  if (!ir_k_check_rank (ctx, s.data, 2, M2I_MAX_RANK, error))
    return FALSE;
  const M2iShape *in = &ctx->inputs[s.data].shape;
  static const char *const names[] = { "gamma", "beta", "mean", "variance" };
  gint ports[] = { s.gamma, s.beta, s.mean, s.var };
  for (gint i = 0; i < 4; i++) {
    const M2iShape *p = &ctx->inputs[ports[i]].shape;
    if (p->rank != 1 || p->dims[0] != in->dims[1]) {
      m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
          "%s (input %d) has shape %s; expected [%" G_GINT64_FORMAT "], one value per "
          "channel of data %s", names[i], ports[i], ir_k_shape_str (p, 0), in->dims[1],
          ir_k_shape_str (in, 1));
      return FALSE;
    }
  }
  double eps;
  if (!m2i_ir_node_attr_float (ctx->node, "epsilon", NAN, &eps, error))
    return FALSE;
  if (!(eps >= 0)) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "attribute epsilon is required and must be >= 0");
    return FALSE;
  }
  s.eps = (float) eps;
  s.batch = in->dims[0];
  s.c = in->dims[1];
  s.inner = 1;
  for (gint d = 2; d < in->rank; d++)
    s.inner *= in->dims[d];
  ctx->state = g_memdup2 (&s, sizeof s);
  ctx->outputs[0].type = M2I_ET_F32;
  ctx->outputs[0].shape = *in;
  return TRUE;
}

static gboolean
bn_execute (M2iOpContext *ctx, GError **error)
{
  const BnState *s = ctx->state;
  BnJob j = { s, ctx->inputs[s->data].data, ctx->inputs[s->gamma].data,
    ctx->inputs[s->beta].data, ctx->inputs[s->mean].data, ctx->inputs[s->var].data,
    ctx->outputs[0].data };
  gint64 planes = s->batch * s->c;
  gint slices = planes * s->inner >= 32768 ? ir_k_threads (ctx) : 1;
  ir_k_parallel_for ((gint) planes, slices, 1, bn_slice, &j);
  return TRUE;
}

const M2iOpKernel ir_kernel_batch_norm = {
  "BatchNormInference", "opset1 opset5", bn_infer, bn_execute, g_free,
};
