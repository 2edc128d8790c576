/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "m2i-ops.h"
#include "engine-private.h"

#include <base/m2i-error.h>

#include <math.h>
#include <string.h>

void
m2i_op_list_init (M2iOpList *list)
{
  memset (list, 0, sizeof *list);
}

static M2iOp *
push (M2iOpList *list, M2iOpKind kind)
{
  if (list->n_ops >= M2I_MAX_OPS)
    return NULL;
  M2iOp *op = &list->ops[list->n_ops++];
  memset (op, 0, sizeof *op);
  op->kind = kind;
  return op;
}

gboolean
m2i_op_list_add_csc (M2iOpList *list, M2iChannelOrder order)
{
  if (order != M2I_ORDER_RGB && order != M2I_ORDER_BGR)
    return FALSE;
  M2iOp *op = push (list, M2I_OP_CSC);
  if (op)
    op->u.csc.order = order;
  return op != NULL;
}

gboolean
m2i_op_list_add_convert (M2iOpList *list, M2iDataType to)
{
  if (to != M2I_DTYPE_F16 && to != M2I_DTYPE_F32)
    return FALSE;
  M2iOp *op = push (list, M2I_OP_CONVERT);
  if (op)
    op->u.convert.to = to;
  return op != NULL;
}

gboolean
m2i_op_list_add_resize (M2iOpList *list, const M2iResizeParams *p)
{
  if (!p || p->out_width <= 0 || p->out_height <= 0)
    return FALSE;
  M2iOp *op = push (list, M2I_OP_RESIZE);
  if (op)
    op->u.resize = *p;
  return op != NULL;
}

gboolean
m2i_op_list_add_norm (M2iOpList *list, const M2iNormParams *p)
{
  if (!p)
    return FALSE;
  M2iOp *op = push (list, M2I_OP_NORM);
  if (op)
    op->u.norm = *p;
  return op != NULL;
}

gboolean
m2i_op_list_add_permute (M2iOpList *list)
{
  return push (list, M2I_OP_PERMUTE) != NULL;
}

gboolean
m2i_op_list_add_drop_alpha (M2iOpList *list)
{
  return push (list, M2I_OP_DROP_ALPHA) != NULL;
}

gboolean
m2i_op_list_add_gray (M2iOpList *list)
{
  return push (list, M2I_OP_GRAY) != NULL;
}

gboolean
m2i_op_list_append (M2iOpList *list, const M2iOpList *tail)
{
  if (list->n_ops + tail->n_ops > M2I_MAX_OPS)
    return FALSE;
  memcpy (&list->ops[list->n_ops], tail->ops, tail->n_ops * sizeof (M2iOp));
  list->n_ops += tail->n_ops;
  return TRUE;
}

gboolean
m2i_op_list_result (const M2iOpList *ops, M2iFormat in_format, gint width, gint height,
    M2iFormat *out_format, gint *out_width, gint *out_height, GError **error)
{
  M2iImage in = { .format = in_format, .width = width, .height = height };
  ChainShapes sh;
  if (!m2i_image_init (&in, in_format, width, height)) {
    /* let the validator word the error */
    in.format = in_format;
    in.width = width;
    in.height = height;
  }
  if (ops->n_ops == 0) {
    /* nothing to do: the input as it is */
    if (!m2i_image_check (&in, "input", FALSE, error))
      return FALSE;
    *out_format = in_format;
    *out_width = width;
    *out_height = height;
    return TRUE;
  }
  if (!m2i_chain_validate (&in, ops->ops, ops->n_ops, NULL, &sh, error))
    return FALSE;
  guint last = ops->n_ops - 1;
  *out_format = sh.format[last];
  *out_width = sh.width[last];
  *out_height = sh.height[last];
  return TRUE;
}

static gboolean
op_equal (const M2iOp *a, const M2iOp *b)
{
  if (a->kind != b->kind)
    return FALSE;
  switch (a->kind) {
    case M2I_OP_CSC:
      return a->u.csc.order == b->u.csc.order;
    case M2I_OP_CONVERT:
      return a->u.convert.to == b->u.convert.to;
    case M2I_OP_RESIZE: {
      const M2iResizeParams *p = &a->u.resize, *q = &b->u.resize;
      return p->mode == q->mode && p->coord == q->coord && p->nearest == q->nearest
          && !p->antialias == !q->antialias && p->cube_coeff == q->cube_coeff
          && p->out_width == q->out_width && p->out_height == q->out_height;
    }
    case M2I_OP_NORM:
      return !memcmp (&a->u.norm, &b->u.norm, sizeof a->u.norm);
    case M2I_OP_PERMUTE:
    case M2I_OP_DROP_ALPHA:
    case M2I_OP_GRAY:
      return TRUE;
  }
  return FALSE;
}

gboolean
m2i_op_list_equal (const M2iOpList *a, const M2iOpList *b)
{
  if (a->n_ops != b->n_ops)
    return FALSE;
  for (guint i = 0; i < a->n_ops; i++)
    if (!op_equal (&a->ops[i], &b->ops[i]))
      return FALSE;
  return TRUE;
}

const char *
m2i_op_kind_to_string (M2iOpKind kind)
{
  switch (kind) {
    case M2I_OP_CSC: return "csc";
    case M2I_OP_CONVERT: return "convertU8F16";
    case M2I_OP_RESIZE: return "resize";
    case M2I_OP_NORM: return "norm";
    case M2I_OP_PERMUTE: return "permute";
    case M2I_OP_DROP_ALPHA: return "dropAlpha";
    case M2I_OP_GRAY: return "gray";
  }
  return "unknown";
}

gchar *
m2i_op_to_string (const M2iOp *op)
{
  switch (op->kind) {
    case M2I_OP_CSC:
      return g_strdup (op->u.csc.order == M2I_ORDER_BGR ? "csc(BGR)" : "csc(RGB)");
    case M2I_OP_CONVERT:
      return g_strdup (op->u.convert.to == M2I_DTYPE_F32 ? "convertU8F32" : "convertU8F16");
    case M2I_OP_RESIZE: {
      const M2iResizeParams *p = &op->u.resize;
      const char *mode = m2i_resize_mode_to_string (p->mode);
      const char *coord = m2i_coord_mode_to_string (p->coord);
      GString *s = g_string_new (NULL);
      g_string_printf (s, "resize(%dx%d %s %s", p->out_width, p->out_height,
          mode ? mode : "?", coord ? coord : "?");
      if (p->mode == M2I_RESIZE_NEAREST) {
        const char *n = m2i_nearest_mode_to_string (p->nearest);
        g_string_append_printf (s, " %s", n ? n : "?");
      }
      if (p->mode == M2I_RESIZE_CUBIC || p->mode == M2I_RESIZE_BICUBIC_PILLOW)
        g_string_append_printf (s, " a=%g", (double) p->cube_coeff);
      if (p->antialias)
        g_string_append (s, " antialias");
      g_string_append_c (s, ')');
      return g_string_free (s, FALSE);
    }
    case M2I_OP_NORM: {
      const M2iNormParams *n = &op->u.norm;
      GString *s = g_string_new ("norm(");
      for (int c = 0; c < 3; c++)
        g_string_append_printf (s, "%s(x-%g)/%g*%g+%g", c ? "; " : "",
            (double) m2i_f16_to_f32 (n->b[c]), (double) m2i_f16_to_f32 (n->c[c]),
            (double) m2i_f16_to_f32 (n->a[c]), (double) m2i_f16_to_f32 (n->d[c]));
      g_string_append_c (s, ')');
      return g_string_free (s, FALSE);
    }
    case M2I_OP_PERMUTE:
    case M2I_OP_DROP_ALPHA:
    case M2I_OP_GRAY:
      return g_strdup (m2i_op_kind_to_string (op->kind));
  }
  return g_strdup ("unknown");
}

gchar *
m2i_op_list_to_string (const M2iOpList *list)
{
  if (list->n_ops == 0)
    return g_strdup ("(no ops)");
  GString *s = g_string_new (NULL);
  for (guint i = 0; i < list->n_ops; i++) {
    gchar *o = m2i_op_to_string (&list->ops[i]);
    g_string_append_printf (s, "%s%s", i ? " -> " : "", o);
    g_free (o);
  }
  return g_string_free (s, FALSE);
}

static gboolean
to_f16 (double v, m2i_f16 *out)
{
  if (!isfinite (v) || fabs (v) >= 65520.0)
    return FALSE;
  *out = m2i_f32_to_f16 ((float) v);
  return TRUE;
}

gboolean
m2i_norm_params_from_mean_std (M2iNormParams *p, const float mean[3],
    const float std[3], float in_scale)
{
  M2iNormParams n;
  if (!isfinite (in_scale) || in_scale <= 0.0f)
    return FALSE;
  for (int c = 0; c < 3; c++) {
    if (!isfinite (std[c]) || std[c] <= 0.0f || !isfinite (mean[c]))
      return FALSE;
    n.a[c] = m2i_f32_to_f16 (1.0f);
    n.d[c] = 0;
    if (!to_f16 ((double) mean[c] / in_scale, &n.b[c])
        || !to_f16 ((double) std[c] / in_scale, &n.c[c]) || n.c[c] == 0)
      return FALSE;
  }
  *p = n;
  return TRUE;
}

gboolean
m2i_norm_params_from_batchnorm (M2iNormParams *p, const float gamma[3],
    const float beta[3], const float mean[3], const float var[3], float eps)
{
  M2iNormParams n;
  for (int c = 0; c < 3; c++) {
    double ve = (double) var[c] + eps;
    if (!(ve > 0.0))
      return FALSE;
    if (!to_f16 (gamma[c], &n.a[c]) || !to_f16 (mean[c], &n.b[c])
        || !to_f16 (sqrt (ve), &n.c[c]) || !to_f16 (beta[c], &n.d[c]) || n.c[c] == 0)
      return FALSE;
  }
  *p = n;
  return TRUE;
}

void
m2i_norm_params_identity (M2iNormParams *p)
{
  for (int c = 0; c < 3; c++) {
    p->a[c] = p->c[c] = m2i_f32_to_f16 (1.0f);
    p->b[c] = p->d[c] = 0;
  }
}
