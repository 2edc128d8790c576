/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* indices.c — reading and checking index tensors (indices.h). */
#include "indices.h"

gboolean
ir_k_check_index_type (const M2iOpContext *ctx, gint i, const char *what, GError **error)
{
  if (ir_k_is_integer_type (ctx->inputs[i].type))
    return TRUE;
  m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
      "input %d (%s) must have an integer element type, not %s", i, what,
      m2i_element_type_to_string (ctx->inputs[i].type));
  return FALSE;
}

gboolean
ir_k_norm_index (const M2iOpContext *ctx, gint64 v, gint64 dim, gboolean negative,
    const char *what, gint64 pos, gint64 *out, GError **error)
{
  gint64 a = negative && v < 0 ? v + dim : v;
  if (a >= 0 && a < dim) {
    *out = a;
    return TRUE;
  }
  if (negative)
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "%s %" G_GINT64_FORMAT " (element %" G_GINT64_FORMAT " of the indices) is outside "
        "[%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "]", what, v, pos, -dim, dim - 1);
  else
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "%s %" G_GINT64_FORMAT " (element %" G_GINT64_FORMAT " of the indices) is outside "
        "[0, %" G_GINT64_FORMAT "]", what, v, pos, dim - 1);
  return FALSE;
}

gboolean
ir_k_const_axis (const M2iOpContext *ctx, gint i, gint rank, gint64 *out, GError **error)
{
  gint64 v[1];
  gint n;
  if (!ir_k_const_ints (ctx, i, v, 1, &n, error))
    return FALSE;
  if (n != 1) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "input %d (axis) must hold one value, has %d", i, n);
    return FALSE;
  }
  return ir_k_axis (ctx, v[0], rank, TRUE, "axis", out, error);
}
