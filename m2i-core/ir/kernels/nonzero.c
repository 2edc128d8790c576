/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* NonZero-3: the indices of the non-zero elements of a tensor of any type,
 * as a [rank, count] tensor of i64 or i32 (output_type), row-major order
 * (index k of the count walks the input in memory order). The count
 * depends on the data: the output is the runtime's simplest run-time
 * shape (m2i-ir-op.h: dynamic_outputs), bounded by [rank, numel]. A float
 * element is non-zero when it does not compare equal to 0 (NaN is
 * non-zero, -0.0 is zero); a scalar gives [0, count] as in ONNX. */
#include "kernels-private.h"

#include <string.h>

static gboolean
nonzero_infer (M2iOpContext *ctx, GError **error)
{
  if (!ir_k_check_arity (ctx, 1, 1, 1, 1, error))
    return FALSE;
  static const char *const types[] = { "i64", "i32", NULL };
  gint which;
  if (!m2i_ir_node_attr_enum (ctx->node, "output_type", "i64", types, &which, error))
    return FALSE;
  const M2iTensor *in = &ctx->inputs[0];
  if (in->type == M2I_ET_UNDEFINED || in->type == M2I_ET_F16 || in->type == M2I_ET_BF16) {
    m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, ctx->node,
        "input of type %s is not supported", m2i_element_type_to_string (in->type));
    return FALSE;
  }
  ctx->outputs[0].type = which ? M2I_ET_I32 : M2I_ET_I64;
  ctx->outputs[0].shape = (M2iShape) { 2, { in->shape.rank, m2i_shape_numel (&in->shape) } };
  ctx->dynamic_outputs = 1;
  return TRUE;
}

/* Whether element @i of @t is non-zero. */
static inline gboolean
nonzero_at (const M2iTensor *t, gint64 i)
{
  switch (t->type) {
    case M2I_ET_F32: return ((const float *) t->data)[i] != 0.0f;
    case M2I_ET_F64: return ((const double *) t->data)[i] != 0.0;
    default: break;
  }
  /* integers and booleans: any non-zero byte */
  gsize es = m2i_element_type_size (t->type);
  const guint8 *p = (const guint8 *) t->data + i * es;
  for (gsize b = 0; b < es; b++)
    if (p[b])
      return TRUE;
  return FALSE;
}

static gboolean
nonzero_execute (M2iOpContext *ctx, GError **error)
{
  const M2iTensor *in = &ctx->inputs[0];
  gint64 n = m2i_shape_numel (&in->shape), count = 0;
  for (gint64 i = 0; i < n; i++)
    count += nonzero_at (in, i);
  M2iShape shape = { 2, { in->shape.rank, count } };
  if (!m2i_op_context_set_output_shape (ctx, 0, &shape, error))
    return FALSE;
  gboolean i32 = ctx->outputs[0].type == M2I_ET_I32;
  gint32 *o32 = ctx->outputs[0].data;
  gint64 *o64 = ctx->outputs[0].data;
  gint rank = in->shape.rank;
  gint64 idx[M2I_MAX_RANK] = { 0 }, k = 0;
  for (gint64 i = 0; i < n; i++) {
    if (nonzero_at (in, i)) {
      for (gint d = 0; d < rank; d++) {
        if (i32)
          o32[d * count + k] = (gint32) idx[d];
        else
          o64[d * count + k] = idx[d];
      }
      k++;
    }
    for (gint d = rank - 1; d >= 0; d--) {           /* odometer, last axis fastest */
      if (++idx[d] < in->shape.dims[d])
        break;
      idx[d] = 0;
    }
  }
  return TRUE;
}

const M2iOpKernel ir_kernel_non_zero = {
  .type = "NonZero", .opsets = "opset3", .infer = nonzero_infer, .execute = nonzero_execute,
};
