/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Activations: ReLU-1, Clamp-1 (f32, i32, i64), Sigmoid-1, Exp-1 (f32) and
 * PReLU-1 (f32, slope per channel or numpy-broadcast). Sigmoid and Exp use
 * vmath.h's vectorized e^x (within 2 ulp).
 *
 * Results follow the OpenVINO reference expressions, NaN included:
 * ReLU is x > 0 ? x : 0 (NaN gives 0), Clamp is min(max(x, lo), hi) with
 * the bounds rounded inward for integer types (NaN passes through), PReLU
 * is x < 0 ? slope·x : x.
 */
#include "kernels-private.h"
#include "vmath.h"
#if defined(__x86_64__) && defined(__GNUC__)
#include "vmath-avx512.h"
#endif
#include <base/m2i-parallel.h>

#include <math.h>

typedef enum { ACT_RELU, ACT_CLAMP, ACT_SIGMOID, ACT_EXP } ActOp;

typedef struct {
  ActOp op;
  M2iElementType type;
  gint64 numel;
  float lo, hi;                        /* Clamp on f32 */
  gint64 ilo, ihi;                     /* Clamp on integers */
} ActState;

M2I_K_INLINE void
relu_f32_body (const float *x, float *y, gint64 n)
{
  for (gint64 i = 0; i < n; i++)
    y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
M2I_K_SIMD_CLONES (relu_f32, (const float *x, float *y, gint64 n), (x, y, n))

M2I_K_INLINE void
clamp_f32_body (const float *x, float *y, gint64 n, float lo, float hi)
{
  for (gint64 i = 0; i < n; i++) {
    float v = x[i] < lo ? lo : x[i];   /* std::max (x, lo): NaN stays */
    y[i] = hi < v ? hi : v;            /* std::min (v, hi) */
  }
}
M2I_K_SIMD_CLONES (clamp_f32, (const float *x, float *y, gint64 n, float lo, float hi),
    (x, y, n, lo, hi))

/* 1 / (1 + e^-x), written as e^x / (1 + e^x) for negative x so that e^-x
 * cannot overflow and tiny results keep their value (vmath.h). */
M2I_K_INLINE void
sigmoid_f32_c_body (const float *x, float *y, gint64 n)
{
  for (gint64 i = 0; i < n; i++)
    y[i] = ir_vm_sigmoid (x[i]);
}
M2I_K_SIMD_CLONES (sigmoid_f32_c, (const float *x, float *y, gint64 n), (x, y, n))

#if defined(__x86_64__) && defined(__GNUC__)
/* The same with vmath-avx512.h's intrinsics (the same results). */
IR_VM_AVX512 static void
sigmoid_f32_avx512 (const float *x, float *y, gint64 n)
{
  gint64 i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps (y + i, ir_vm_sigmoid16 (_mm512_loadu_ps (x + i)));
  if (i < n) {
    __mmask16 m = (__mmask16) ((1u << (n - i)) - 1);
    _mm512_mask_storeu_ps (y + i, m, ir_vm_sigmoid16 (_mm512_maskz_loadu_ps (m, x + i)));
  }
}
#endif

static void
sigmoid_f32 (const float *x, float *y, gint64 n)
{
#if defined(__x86_64__) && defined(__GNUC__)
  if (m2i_cpu_flags () & M2I_CPU_AVX512F) {
    sigmoid_f32_avx512 (x, y, n);
    return;
  }
#endif
  sigmoid_f32_c (x, y, n);
}

M2I_K_INLINE void
exp_f32_body (const float *x, float *y, gint64 n)
{
  for (gint64 i = 0; i < n; i++)
    y[i] = ir_vm_exp (x[i]);
}
M2I_K_SIMD_CLONES (exp_f32, (const float *x, float *y, gint64 n), (x, y, n))

typedef struct {
  const ActState *s;
  const guint8 *x;
  guint8 *y;
} ActJob;

static void
act_chunk (gint64 first, gint64 n, gpointer data)
{
  const ActJob *j = data;
  const ActState *s = j->s;
  gsize es = m2i_element_type_size (s->type);
  const guint8 *xb = j->x + first * es;
  guint8 *yb = j->y + first * es;
  if (s->type == M2I_ET_F32) {
    const float *x = (const float *) xb;
    float *y = (float *) yb;
    switch (s->op) {
      case ACT_RELU: relu_f32 (x, y, n); break;
      case ACT_CLAMP: clamp_f32 (x, y, n, s->lo, s->hi); break;
      case ACT_SIGMOID: sigmoid_f32 (x, y, n); break;
      case ACT_EXP: exp_f32 (x, y, n); break;
    }
  } else if (s->type == M2I_ET_I32) {
    const gint32 *x = (const gint32 *) xb;
    gint32 *y = (gint32 *) yb;
    gint32 lo = s->op == ACT_RELU ? 0 : (gint32) s->ilo;
    gint32 hi = s->op == ACT_RELU ? G_MAXINT32 : (gint32) s->ihi;
    for (gint64 i = 0; i < n; i++)
      y[i] = CLAMP (x[i], lo, hi);
  } else {
    const gint64 *x = (const gint64 *) xb;
    gint64 *y = (gint64 *) yb;
    gint64 lo = s->op == ACT_RELU ? 0 : s->ilo;
    gint64 hi = s->op == ACT_RELU ? G_MAXINT64 : s->ihi;
    for (gint64 i = 0; i < n; i++)
      y[i] = CLAMP (x[i], lo, hi);
  }
}

static gboolean
act_infer (M2iOpContext *ctx, ActOp op, GError **error)
{
  static const M2iElementType any[] = { M2I_ET_F32, M2I_ET_I32, M2I_ET_I64 };
  gboolean float_only = op == ACT_SIGMOID || op == ACT_EXP;
  if (!ir_k_check_arity (ctx, 1, 1, 1, 1, error) ||
      !ir_k_check_type (ctx, 0, any, float_only ? 1 : G_N_ELEMENTS (any), error))
    return FALSE;
  ActState *s = g_new0 (ActState, 1);
  s->op = op;
  s->type = ctx->inputs[0].type;
  s->numel = m2i_shape_numel (&ctx->inputs[0].shape);
  if (op == ACT_CLAMP) {
    double lo, hi;
    if (!m2i_ir_node_attr_float (ctx->node, "min", NAN, &lo, error) ||
        !m2i_ir_node_attr_float (ctx->node, "max", NAN, &hi, error)) {
      g_free (s);
      return FALSE;
    }
    if (isnan (lo) || isnan (hi) || lo > hi) {
      m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
          "attributes min and max are required numbers with min <= max (min=\"%s\", max=\"%s\")",
          m2i_ir_node_get_attr (ctx->node, "min") ? m2i_ir_node_get_attr (ctx->node, "min") : "",
          m2i_ir_node_get_attr (ctx->node, "max") ? m2i_ir_node_get_attr (ctx->node, "max") : "");
      g_free (s);
      return FALSE;
    }
    s->lo = (float) lo;
    s->hi = (float) hi;
    /* Integers: the smallest integer >= min and the largest <= max, within
     * the type's range. */
    double tmin = s->type == M2I_ET_I32 ? G_MININT32 : -9.2233720368547758e18;
    double tmax = s->type == M2I_ET_I32 ? G_MAXINT32 : 9.2233720368547748e18;
    s->ilo = (gint64) CLAMP (ceil (lo), tmin, tmax);
    s->ihi = (gint64) CLAMP (floor (hi), tmin, tmax);
    if (s->type != M2I_ET_F32 && s->ilo > s->ihi) {
      m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
          "no integer lies between min=%g and max=%g", lo, hi);
      g_free (s);
      return FALSE;
    }
  }
  ctx->outputs[0].type = s->type;
  ctx->outputs[0].shape = ctx->inputs[0].shape;
  ctx->state = s;
  return TRUE;
}

static gboolean
act_execute (M2iOpContext *ctx, GError **error)
{
  const ActState *s = ctx->state;
  ActJob j = { s, ctx->inputs[0].data, ctx->outputs[0].data };
  ir_k_run_chunks (ctx, s->numel, 65536, act_chunk, &j);
  return TRUE;
}

static gboolean relu_infer (M2iOpContext *c, GError **e) { return act_infer (c, ACT_RELU, e); }
static gboolean clamp_infer (M2iOpContext *c, GError **e) { return act_infer (c, ACT_CLAMP, e); }
static gboolean sigmoid_infer (M2iOpContext *c, GError **e) { return act_infer (c, ACT_SIGMOID, e); }
static gboolean exp_infer (M2iOpContext *c, GError **e) { return act_infer (c, ACT_EXP, e); }

const M2iOpKernel ir_kernel_relu = { "ReLU", "opset1", relu_infer, act_execute, g_free };
const M2iOpKernel ir_kernel_clamp = { "Clamp", "opset1", clamp_infer, act_execute, g_free };
const M2iOpKernel ir_kernel_sigmoid = { "Sigmoid", "opset1", sigmoid_infer, act_execute, g_free };
const M2iOpKernel ir_kernel_exp = { "Exp", "opset1", exp_infer, act_execute, g_free };

/* ---- PReLU ------------------------------------------------------------- */

typedef struct {
  M2iBroadcast plan;                   /* operands: data, slope, output */
} PReluState;

M2I_K_INLINE void
prelu_body (const float *x, const float *slope, gint64 ss, float *y, gint64 n)
{
  if (ss) {
    for (gint64 i = 0; i < n; i++)
      y[i] = x[i] < 0.0f ? x[i] * slope[i] : x[i];
  } else {
    float a = slope[0];
    for (gint64 i = 0; i < n; i++)
      y[i] = x[i] < 0.0f ? x[i] * a : x[i];
  }
}
M2I_K_SIMD_CLONES (prelu, (const float *x, const float *slope, gint64 ss, float *y,
        gint64 n), (x, slope, ss, y, n))

typedef struct {
  const PReluState *s;
  const float *x, *slope;
  float *y;
} PReluJob;

static void
prelu_row (const gint64 *off, gint64 n, gpointer user)
{
  const PReluJob *j = user;
  const M2iBroadcast *p = &j->s->plan;
  prelu (j->x + off[0], j->slope + off[1], p->strides[1][p->rank - 1], j->y + off[2], n);
}

static gboolean
prelu_infer (M2iOpContext *ctx, GError **error)
{
  if (!ir_k_check_arity (ctx, 2, 2, 1, 1, error) || !ir_k_check_f32 (ctx, 0, error) ||
      !ir_k_check_f32 (ctx, 1, error))
    return FALSE;
  const M2iShape *x = &ctx->inputs[0].shape, *sl = &ctx->inputs[1].shape;
  /* A 1-D slope as long as the channel axis applies per channel; anything
   * else broadcasts with numpy rules onto the data shape. */
  M2iShape slope = *sl;
  if (sl->rank == 1 && x->rank >= 2 && sl->dims[0] == x->dims[1] && x->dims[1] != 1) {
    slope.rank = x->rank - 1;
    for (gint d = 0; d < slope.rank; d++)
      slope.dims[d] = d == 0 ? x->dims[1] : 1;
  }
  M2iShape out;
  if (!m2i_shape_broadcast (x, &slope, &out, NULL) || !m2i_shape_equal (&out, x)) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "slope %s does not broadcast onto data %s (per channel or numpy rules)",
        ir_k_shape_str (sl, 0), ir_k_shape_str (x, 1));
    return FALSE;
  }
  PReluState *s = g_new0 (PReluState, 1);
  const M2iShape *ops[3] = { x, &slope, x };
  ir_k_broadcast_plan (&s->plan, x, ops, 3);
  ctx->outputs[0].type = M2I_ET_F32;
  ctx->outputs[0].shape = *x;
  ctx->state = s;
  return TRUE;
}

static gboolean
prelu_execute (M2iOpContext *ctx, GError **error)
{
  PReluJob j = { ctx->state, ctx->inputs[0].data, ctx->inputs[1].data, ctx->outputs[0].data };
  if (m2i_shape_numel (&ctx->outputs[0].shape) > 0)
    ir_k_broadcast_run (&j.s->plan, ir_k_threads (ctx), prelu_row, &j);
  return TRUE;
}

const M2iOpKernel ir_kernel_prelu = { "PReLU", "opset1", prelu_infer, prelu_execute, g_free };
