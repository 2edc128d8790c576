/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Range-1 and Range-4: start, start + step, ... up to but not including
 * stop. The three inputs are constant scalars (they set the output's
 * length: max(ceil((stop − start) / step), 0), computed in double).
 *
 * Range-1: the output has the inputs' (one) type, f32, i32 or i64; start,
 * stop and step must be finite and step non-zero. Range-4: the
 * `output_type` attribute (f32, i32, i64); the inputs (any number types)
 * are first cast to it (toward zero for integers, as C casts), then
 * value i = start + i·step, in double for f32 (rounded once) and in 64
 * bits for integers.
 */
#include "kernels-private.h"

#include <math.h>

typedef struct {
  M2iElementType type;
  double start, step;                  /* f32 */
  gint64 istart, istep;                /* integers */
  gint64 n;
} RangeState;

/* @v as the output type would hold it (integers: toward zero, saturated
 * to the type's range). */
static double
cast_to (M2iElementType t, double v)
{
  if (t == M2I_ET_F32)
    return (double) (float) v;
  double lim = t == M2I_ET_I32 ? 2147483647.0 : 9.2233720368547748e18;
  return isnan (v) ? v : CLAMP (trunc (v), -lim - 1.0, lim);
}

static gboolean
range_infer (M2iOpContext *ctx, GError **error)
{
  static const M2iElementType types[] = { M2I_ET_F32, M2I_ET_I32, M2I_ET_I64 };
  static const char *const names[] = { "start", "stop", "step" };
  gboolean v4 = ir_k_op_version (ctx) >= 4;
  if (!ir_k_check_arity (ctx, 3, 3, 1, 1, error))
    return FALSE;
  M2iElementType type = ctx->inputs[0].type;
  if (v4) {
    const char *t = m2i_ir_node_get_attr (ctx->node, "output_type");
    if (!t || !m2i_element_type_from_string (t, &type)) {
      m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
          "attribute output_type=\"%s\" is not an element type", t ? t : "");
      return FALSE;
    }
    if (type == M2I_ET_F16)
      type = M2I_ET_F32;               /* f16 models compute in f32 */
  }
  for (guint k = 0; k < G_N_ELEMENTS (types); k++)
    if (types[k] == type)
      goto type_ok;
  m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, ctx->node,
      "output type %s is not supported (f32, i32, i64 are)", m2i_element_type_to_string (type));
  return FALSE;
type_ok:;
  double v[3];
  for (gint i = 0; i < 3; i++) {
    if (!v4 && ctx->inputs[i].type != type) {
      m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
          "%s is %s; Range-1's inputs must all have one type (%s)", names[i],
          m2i_element_type_to_string (ctx->inputs[i].type), m2i_element_type_to_string (type));
      return FALSE;
    }
    if (!ir_k_const_scalar (ctx, i, names[i], &v[i], error))
      return FALSE;
    v[i] = cast_to (type, v[i]);
  }
  double span = (v[1] - v[0]) / v[2];
  if (!isfinite (v[0]) || !isfinite (v[1]) || !isfinite (v[2]) || v[2] == 0.0 ||
      ceil (span) > (double) (1 << 30)) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "start %g, stop %g, step %g: %s", v[0], v[1], v[2],
        v[2] == 0.0 ? "step is 0" : isfinite (span) ? "more than 2^30 values" :
        "values must be finite");
    return FALSE;
  }
  RangeState *s = g_new0 (RangeState, 1);
  s->type = type;
  s->start = v[0];
  s->step = v[2];
  if (type != M2I_ET_F32) {
    s->istart = (gint64) v[0];
    s->istep = (gint64) v[2];
  }
  s->n = span > 0 ? (gint64) ceil (span) : 0;
  ctx->outputs[0].type = type;
  ctx->outputs[0].shape = (M2iShape) { 1, { s->n } };
  ctx->state = s;
  return TRUE;
}

static gboolean
range_execute (M2iOpContext *ctx, GError **error)
{
  const RangeState *s = ctx->state;
  for (gint64 i = 0; i < s->n; i++) {
    /* integers wrap, as the output type's arithmetic would */
    guint64 iv = (guint64) s->istart + (guint64) i * (guint64) s->istep;
    switch (s->type) {
      case M2I_ET_F32:
        ((float *) ctx->outputs[0].data)[i] = (float) (s->start + (double) i * s->step);
        break;
      case M2I_ET_I32: ((gint32 *) ctx->outputs[0].data)[i] = (gint32) iv; break;
      default: ((gint64 *) ctx->outputs[0].data)[i] = (gint64) iv; break;
    }
  }
  return TRUE;
}

const M2iOpKernel ir_kernel_range = { "Range", "opset1 opset4", range_infer, range_execute, g_free };
