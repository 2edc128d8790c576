/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Split-1 and VariadicSplit-1: cut the data along one axis (a constant
 * scalar input, negative counting from the end) into num_splits equal
 * parts, or into the lengths of a constant 1-D input (one of them may be
 * -1: the rest of the axis; 0 gives an empty output). Any element type.
 * An output no layer reads (data == NULL, see m2i-ir-op.h) is skipped.
 *
 * The data is seen as [outer, axis, inner]: output k takes, from each
 * outer block, one contiguous run of length_k · inner elements — with
 * batch 1 and a channel split (YOLO's C2f blocks), one memcpy per output.
 */
#include "kernels-private.h"

#include <string.h>

#define MAX_SPLITS 1024

typedef struct {
  gint n;
  gint64 outer, axis_dim, inner;
  gint64 lengths[];
} SplitState;

static gboolean
split_infer_any (M2iOpContext *ctx, gboolean variadic, GError **error)
{
  if (!ir_k_check_arity (ctx, variadic ? 3 : 2, variadic ? 3 : 2, 1, MAX_SPLITS, error))
    return FALSE;
  const M2iShape *in = &ctx->inputs[0].shape;
  gint64 axis;
  gint n;
  if (m2i_shape_numel (&ctx->inputs[1].shape) != 1) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "axis (input 1) must be a scalar; its shape is %s", ir_k_shape_str (&ctx->inputs[1].shape, 0));
    return FALSE;
  }
  if (!ir_k_const_ints (ctx, 1, &axis, 1, &n, error) ||
      !ir_k_axis (ctx, axis, in->rank, TRUE, "axis", &axis, error))
    return FALSE;
  gint64 dim = in->dims[axis];
  SplitState *s = g_malloc0 (sizeof (SplitState) + ctx->n_outputs * sizeof (gint64));
  s->n = ctx->n_outputs;
  if (variadic) {
    gint got;
    gint64 *len = g_new (gint64, MAX_SPLITS);
    if (!ir_k_const_ints (ctx, 2, len, MAX_SPLITS, &got, error)) {
      g_free (len);
      g_free (s);
      return FALSE;
    }
    gint minus = -1;
    gint64 sum = 0;
    gboolean bad = got != ctx->n_outputs;
    for (gint k = 0; k < got && !bad; k++) {
      if (len[k] == -1 && minus < 0)
        minus = k;
      else if (len[k] < 0 || len[k] > dim)
        bad = TRUE;
      else
        sum += len[k];
    }
    if (!bad && minus >= 0 && sum <= dim)
      len[minus] = dim - sum;
    else if (!bad && sum != dim)
      bad = TRUE;
    if (bad) {
      GString *list = g_string_new (NULL);
      for (gint k = 0; k < got; k++)
        g_string_append_printf (list, "%s%" G_GINT64_FORMAT, k ? "," : "", len[k]);
      m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
          "split_lengths [%s] do not cut axis %" G_GINT64_FORMAT " of %s (length %"
          G_GINT64_FORMAT ") into %d outputs (lengths >= 0 that add up to it, at most one -1)",
          list->str, axis, ir_k_shape_str (in, 0), dim, ctx->n_outputs);
      g_string_free (list, TRUE);
      g_free (len);
      g_free (s);
      return FALSE;
    }
    memcpy (s->lengths, len, ctx->n_outputs * sizeof (gint64));
    g_free (len);
  } else {
    gint64 parts;
    if (!m2i_ir_node_attr_int (ctx->node, "num_splits", -1, &parts, error)) {
      g_free (s);
      return FALSE;
    }
    if (parts != ctx->n_outputs || parts < 1 || dim % parts) {
      m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
          "num_splits=\"%s\" must be the number of outputs (%d) and divide axis %"
          G_GINT64_FORMAT " of %s (length %" G_GINT64_FORMAT ")",
          m2i_ir_node_get_attr (ctx->node, "num_splits") ?
          m2i_ir_node_get_attr (ctx->node, "num_splits") : "", ctx->n_outputs, axis,
          ir_k_shape_str (in, 0), dim);
      g_free (s);
      return FALSE;
    }
    for (gint k = 0; k < s->n; k++)
      s->lengths[k] = dim / parts;
  }
  ir_k_outer_inner (in, (gint) axis, &s->outer, &s->inner);
  s->axis_dim = dim;
  for (gint k = 0; k < s->n; k++) {
    ctx->outputs[k].type = ctx->inputs[0].type;
    ctx->outputs[k].shape = *in;
    ctx->outputs[k].shape.dims[axis] = s->lengths[k];
  }
  ctx->state = s;
  return TRUE;
}

/* @rows runs of @run bytes, @src_stride apart, to consecutive places at
 * @dst. Short runs of whole words (YOLO's [.., 85] split into 2, 2, 81)
 * are copied by a loop the compiler inlines, not one memcpy call each. */
static void
copy_runs (guint8 *dst, const guint8 *src, gsize run, gsize src_stride, gint64 rows)
{
  if (run <= 64 && ((guintptr) dst | (guintptr) src | run | src_stride) % 4 == 0) {
    gsize words = run / 4;
    for (gint64 o = 0; o < rows; o++) {
      guint32 *d = (guint32 *) (dst + o * run);
      const guint32 *sw = (const guint32 *) (src + o * src_stride);
      for (gsize w = 0; w < words; w++)
        d[w] = sw[w];
    }
    return;
  }
  for (gint64 o = 0; o < rows; o++)
    memcpy (dst + o * run, src + o * src_stride, run);
}

static gboolean
split_execute (M2iOpContext *ctx, GError **error)
{
  const SplitState *s = ctx->state;
  gsize es = m2i_element_type_size (ctx->inputs[0].type);
  const guint8 *in = ctx->inputs[0].data;
  gsize in_block = (gsize) (s->axis_dim * s->inner) * es;
  gsize at = 0;                        /* bytes into an outer block */
  for (gint k = 0; k < s->n; k++) {
    gsize run = (gsize) (s->lengths[k] * s->inner) * es;
    guint8 *out = ctx->outputs[k].data;
    if (out && run)
      copy_runs (out, in + at, run, in_block, s->outer);
    at += run;
  }
  return TRUE;
}

static gboolean split_infer (M2iOpContext *c, GError **e) { return split_infer_any (c, FALSE, e); }
static gboolean variadic_infer (M2iOpContext *c, GError **e) { return split_infer_any (c, TRUE, e); }

const M2iOpKernel ir_kernel_split = { "Split", "opset1", split_infer, split_execute, g_free };
const M2iOpKernel ir_kernel_variadic_split = {
  "VariadicSplit", "opset1", variadic_infer, split_execute, g_free,
};
