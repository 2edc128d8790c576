/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Pad-1 and Pad-12: extend (or, in -12, with negative pads, crop) the data
 * on each axis by the constant pads_begin / pads_end inputs; output dim d
 * is max(pads_begin[d] + dim + pads_end[d], 0). Any element type.
 *
 * pad_mode constant (the optional 4th input, a scalar constant or a value
 * known at run time; 0 without it), edge (the border element), reflect
 * (mirrored without repeating the border: pads at most dim − 1), symmetric
 * (mirrored with it: pads at most dim). Output index o on an axis reads
 * data index o − pads_begin, mirrored or clamped into the whole data (so
 * reflections stay relative to the data also where the other side is
 * cropped, as the spec's mixed-pads example shows). execute() walks output
 * rows: a row whose outer index is padding is the pad value, otherwise its
 * interior is one memcpy and its borders are mapped element by element.
 */
#include "kernels-private.h"

#include <string.h>

typedef enum { PAD_CONSTANT, PAD_EDGE, PAD_REFLECT, PAD_SYMMETRIC } PadMode;

typedef struct {
  PadMode mode;
  gint rank;
  gsize es;
  gint64 in_dims[M2I_MAX_RANK], out_dims[M2I_MAX_RANK];
  gint64 in_strides[M2I_MAX_RANK];
  gint64 begin[M2I_MAX_RANK];          /* pads_begin */
  gint64 copy_begin, copy_len;         /* last axis: the run copied straight */
  guint8 value[8];                     /* the pad value, when constant */
  gboolean value_at_run_time;
} PadState;

/* The source index of output index @o on an axis of @n with @begin pads. */
static gint64
source_index (PadMode mode, gint64 o, gint64 begin, gint64 n)
{
  gint64 i = o - begin;
  if (i >= 0 && i < n)
    return i;
  switch (mode) {
    case PAD_EDGE: return i < 0 ? 0 : n - 1;
    case PAD_REFLECT: return i < 0 ? -i : 2 * (n - 1) - i;
    case PAD_SYMMETRIC: return i < 0 ? -i - 1 : 2 * n - 1 - i;
    default: return -1;
  }
}

static gboolean
pad_infer (M2iOpContext *ctx, GError **error)
{
  static const char *const modes[] = { "constant", "edge", "reflect", "symmetric", NULL };
  gboolean v12 = ir_k_op_version (ctx) >= 12;
  gint mode;
  if (!ir_k_check_arity (ctx, 3, 4, 1, 1, error) ||
      !m2i_ir_node_attr_enum (ctx->node, "pad_mode", "constant", modes, &mode, error))
    return FALSE;
  const M2iTensor *data = &ctx->inputs[0];
  const M2iShape *in = &data->shape;
  gint64 pb[M2I_MAX_RANK], pe[M2I_MAX_RANK];
  gint nb, ne;
  if (!ir_k_const_ints (ctx, 1, pb, M2I_MAX_RANK, &nb, error) ||
      !ir_k_const_ints (ctx, 2, pe, M2I_MAX_RANK, &ne, error))
    return FALSE;
  if (nb != in->rank || ne != in->rank) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "pads_begin and pads_end have %d and %d values; the data %s has rank %d", nb, ne,
        ir_k_shape_str (in, 0), in->rank);
    return FALSE;
  }
  PadState *s = g_new0 (PadState, 1);
  s->mode = mode;
  s->rank = in->rank;
  s->es = m2i_element_type_size (data->type);
  M2iShape out = { in->rank };
  gint64 stride = 1;
  for (gint d = in->rank - 1; d >= 0; d--) {
    gint64 n = in->dims[d];
    gint64 limit = mode == PAD_REFLECT ? n - 1 : mode == PAD_SYMMETRIC ? n : G_MAXINT32;
    if ((!v12 && (pb[d] < 0 || pe[d] < 0)) || pb[d] > limit || pe[d] > limit ||
        pb[d] < -n || pe[d] < -n || pb[d] > G_MAXINT32 || pe[d] > G_MAXINT32) {
      m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
          "pads %" G_GINT64_FORMAT " and %" G_GINT64_FORMAT " on axis %d of %s: %s", pb[d], pe[d],
          d, ir_k_shape_str (in, 0),
          !v12 && (pb[d] < 0 || pe[d] < 0) ? "Pad-1 takes no negative pads (Pad-12 crops)" :
          mode == PAD_REFLECT ? "reflect needs pads of at most dim - 1" :
          mode == PAD_SYMMETRIC ? "symmetric needs pads of at most dim" :
          "out of range");
      g_free (s);
      return FALSE;
    }
    out.dims[d] = MAX (pb[d] + n + pe[d], 0);
    s->in_dims[d] = n;
    s->out_dims[d] = out.dims[d];
    s->in_strides[d] = stride;
    s->begin[d] = pb[d];
    stride *= n;
  }
  if (in->rank > 0) {
    gint l = in->rank - 1;
    s->copy_begin = CLAMP (pb[l], 0, out.dims[l]);
    s->copy_len = CLAMP (MIN (in->dims[l] + MIN (pb[l], 0), out.dims[l] - s->copy_begin), 0,
        out.dims[l]);
  }
  if (mode == PAD_CONSTANT && ctx->n_inputs == 4) {
    const M2iTensor *v = &ctx->inputs[3];
    if (v->type != data->type || m2i_shape_numel (&v->shape) != 1) {
      m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
          "pad_value (input 3) must be one %s value; it is %s %s",
          m2i_element_type_to_string (data->type), m2i_element_type_to_string (v->type),
          ir_k_shape_str (&v->shape, 0));
      g_free (s);
      return FALSE;
    }
    if (v->data)
      memcpy (s->value, v->data, s->es);
    else
      s->value_at_run_time = TRUE;
  }
  ctx->outputs[0].type = data->type;
  ctx->outputs[0].shape = out;
  ctx->state = s;
  return TRUE;
}

static void
fill (guint8 *dst, const guint8 *value, gsize es, gint64 n)
{
  for (gint64 i = 0; i < n; i++)
    memcpy (dst + i * es, value, es);
}

/* Output elements [o0, o1) of a row of the last axis: from @src (the data
 * row) or the pad value. */
static void
border (const PadState *s, const guint8 *src, const guint8 *value, guint8 *out, gint64 o0,
    gint64 o1)
{
  gint l = s->rank - 1;
  gsize es = s->es;
  for (gint64 o = o0; o < o1; o++) {
    gint64 i = source_index (s->mode, o, s->begin[l], s->in_dims[l]);
    memcpy (out + o * es, i < 0 ? value : src + i * es, es);
  }
}

static gboolean
pad_execute (M2iOpContext *ctx, GError **error)
{
  const PadState *s = ctx->state;
  const guint8 *value = s->value_at_run_time ? ctx->inputs[3].data : s->value;
  const guint8 *in = ctx->inputs[0].data;
  guint8 *out = ctx->outputs[0].data;
  gsize es = s->es;
  if (m2i_shape_numel (&ctx->outputs[0].shape) == 0)
    return TRUE;
  if (s->rank == 0) {
    memcpy (out, in, es);
    return TRUE;
  }
  gint l = s->rank - 1;
  gint64 row = s->out_dims[l], rows = m2i_shape_numel (&ctx->outputs[0].shape) / row;
  gint64 idx[M2I_MAX_RANK] = { 0 };
  for (gint64 r = 0; r < rows; r++, out += row * es) {
    /* the source row, or -1 when an outer index is padding */
    gint64 base = 0;
    for (gint d = 0; d < l && base >= 0; d++) {
      gint64 i = source_index (s->mode, idx[d], s->begin[d], s->in_dims[d]);
      base = i < 0 ? -1 : base + i * s->in_strides[d];
    }
    if (base < 0) {
      fill (out, value, es, row);
    } else {
      const guint8 *src = in + base * es;
      border (s, src, value, out, 0, s->copy_begin);
      if (s->copy_len > 0)
        memcpy (out + s->copy_begin * es, src + (s->copy_begin - s->begin[l]) * es,
            s->copy_len * es);
      border (s, src, value, out, s->copy_begin + s->copy_len, row);
    }
    for (gint d = l - 1; d >= 0; d--) {
      if (++idx[d] < s->out_dims[d])
        break;
      idx[d] = 0;
    }
  }
  return TRUE;
}

const M2iOpKernel ir_kernel_pad = { "Pad", "opset1 opset12", pad_infer, pad_execute, g_free };
