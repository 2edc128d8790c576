/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Helpers shared by the compute kernels: checks, constant inputs, window
 * geometry of convolution and pooling, and broadcasting iteration. */
#include "kernels-private.h"

#include <stdarg.h>
#include <base/m2i-parallel.h>

#include <math.h>
#include <string.h>

gboolean
ir_k_check_arity (const M2iOpContext *ctx, gint min_in, gint max_in,
    gint min_out, gint max_out, GError **error)
{
  if (ctx->n_inputs < min_in || ctx->n_inputs > max_in) {
    if (min_in == max_in)
      m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
          "expects %d inputs, has %d", min_in, ctx->n_inputs);
    else
      m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
          "expects %d to %d inputs, has %d", min_in, max_in, ctx->n_inputs);
    return FALSE;
  }
  if (ctx->n_outputs < min_out || ctx->n_outputs > max_out) {
    if (min_out == max_out)
      m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
          "expects %d outputs, has %d", min_out, ctx->n_outputs);
    else
      m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
          "expects %d to %d outputs, has %d", min_out, max_out, ctx->n_outputs);
    return FALSE;
  }
  return TRUE;
}

gboolean
ir_k_check_type (const M2iOpContext *ctx, gint i, const M2iElementType *allowed,
    gint n, GError **error)
{
  M2iElementType t = ctx->inputs[i].type;
  for (gint k = 0; k < n; k++)
    if (allowed[k] == t)
      return TRUE;
  GString *list = g_string_new (NULL);
  for (gint k = 0; k < n; k++)
    g_string_append_printf (list, "%s%s", k ? ", " : "",
        m2i_element_type_to_string (allowed[k]));
  m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, ctx->node,
      "input %d has element type %s; this kernel supports %s", i,
      m2i_element_type_to_string (t), list->str);
  g_string_free (list, TRUE);
  return FALSE;
}

gboolean
ir_k_check_f32 (const M2iOpContext *ctx, gint i, GError **error)
{
  static const M2iElementType f32[] = { M2I_ET_F32 };
  return ir_k_check_type (ctx, i, f32, 1, error);
}

gboolean
ir_k_check_rank (const M2iOpContext *ctx, gint i, gint min, gint max,
    GError **error)
{
  const M2iShape *s = &ctx->inputs[i].shape;
  if (s->rank >= min && s->rank <= max)
    return TRUE;
  if (min == max)
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "input %d has shape %s; expected rank %d", i, ir_k_shape_str (s, 0), min);
  else
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "input %d has shape %s; expected rank %d to %d", i,
        ir_k_shape_str (s, 0), min, max);
  return FALSE;
}

static gboolean
const_input (const M2iOpContext *ctx, gint i, gint max, gint *n, GError **error)
{
  const M2iTensor *t = &ctx->inputs[i];
  /* An empty tensor is known even when no data pointer comes with it. */
  if (!t->data && m2i_shape_numel (&t->shape) != 0) {
    m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, ctx->node,
        "input %d must be a constant (known when the model is compiled)", i);
    return FALSE;
  }
  if (t->shape.rank > 1) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "input %d has shape %s; expected a 1-D tensor or a scalar", i,
        ir_k_shape_str (&t->shape, 0));
    return FALSE;
  }
  gint64 numel = m2i_shape_numel (&t->shape);
  if (numel < 0 || numel > max) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "input %d has %" G_GINT64_FORMAT " values; at most %d are supported",
        i, numel, max);
    return FALSE;
  }
  *n = (gint) numel;
  return TRUE;
}

/* Reads element @k of @t as a double (integer and float types). */
static gboolean
element_as_double (const M2iTensor *t, gint64 k, double *out)
{
  const guint8 *p = t->data;
  switch (t->type) {
    case M2I_ET_BOOLEAN:
    case M2I_ET_U8: *out = p[k]; return TRUE;
    case M2I_ET_I8: *out = ((const gint8 *) p)[k]; return TRUE;
    case M2I_ET_U16: *out = ((const guint16 *) p)[k]; return TRUE;
    case M2I_ET_I16: *out = ((const gint16 *) p)[k]; return TRUE;
    case M2I_ET_U32: *out = ((const guint32 *) p)[k]; return TRUE;
    case M2I_ET_I32: *out = ((const gint32 *) p)[k]; return TRUE;
    case M2I_ET_U64: *out = (double) ((const guint64 *) p)[k]; return TRUE;
    case M2I_ET_I64: *out = (double) ((const gint64 *) p)[k]; return TRUE;
    case M2I_ET_F32: *out = ((const float *) p)[k]; return TRUE;
    case M2I_ET_F64: *out = ((const double *) p)[k]; return TRUE;
    default: return FALSE;
  }
}

gboolean
ir_k_const_ints (const M2iOpContext *ctx, gint i, gint64 *out, gint max,
    gint *n, GError **error)
{
  const M2iTensor *t = &ctx->inputs[i];
  if (!const_input (ctx, i, max, n, error))
    return FALSE;
  for (gint k = 0; k < *n; k++) {
    switch (t->type) {
      case M2I_ET_I64: out[k] = ((const gint64 *) t->data)[k]; break;
      case M2I_ET_I32: out[k] = ((const gint32 *) t->data)[k]; break;
      case M2I_ET_U64: {
        guint64 v = ((const guint64 *) t->data)[k];
        if (v > G_MAXINT64) {
          m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
              "input %d value %" G_GUINT64_FORMAT " is too large", i, v);
          return FALSE;
        }
        out[k] = (gint64) v;
        break;
      }
      case M2I_ET_U32: out[k] = ((const guint32 *) t->data)[k]; break;
      case M2I_ET_I16: out[k] = ((const gint16 *) t->data)[k]; break;
      case M2I_ET_U16: out[k] = ((const guint16 *) t->data)[k]; break;
      case M2I_ET_I8: out[k] = ((const gint8 *) t->data)[k]; break;
      case M2I_ET_U8: out[k] = ((const guint8 *) t->data)[k]; break;
      default:
        m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, ctx->node,
            "input %d has element type %s; expected an integer type", i,
            m2i_element_type_to_string (t->type));
        return FALSE;
    }
  }
  return TRUE;
}

gboolean
ir_k_const_floats (const M2iOpContext *ctx, gint i, float *out, gint max,
    gint *n, GError **error)
{
  const M2iTensor *t = &ctx->inputs[i];
  if (!const_input (ctx, i, max, n, error))
    return FALSE;
  for (gint k = 0; k < *n; k++) {
    double v;
    if (!element_as_double (t, k, &v)) {
      m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, ctx->node,
          "input %d has element type %s; expected a number type", i,
          m2i_element_type_to_string (t->type));
      return FALSE;
    }
    out[k] = (float) v;
  }
  return TRUE;
}

gboolean
ir_k_const_scalar (const M2iOpContext *ctx, gint i, const char *what, double *out,
    GError **error)
{
  const M2iTensor *t = &ctx->inputs[i];
  if (m2i_shape_numel (&t->shape) != 1) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "%s (input %d) must hold one value; its shape is %s", what, i,
        ir_k_shape_str (&t->shape, 0));
    return FALSE;
  }
  if (!t->data) {
    m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, ctx->node,
        "%s (input %d) must be a constant (known when the model is compiled)", what, i);
    return FALSE;
  }
  if (!element_as_double (t, 0, out)) {
    m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, ctx->node,
        "%s (input %d) has element type %s; expected a number type", what, i,
        m2i_element_type_to_string (t->type));
    return FALSE;
  }
  return TRUE;
}

gboolean
ir_k_axis (const M2iOpContext *ctx, gint64 axis, gint rank,
    gboolean allow_negative, const char *what, gint64 *out, GError **error)
{
  gint64 a = axis;
  if (allow_negative && a < 0)
    a += rank;
  if (a < 0 || a >= rank) {
    if (allow_negative)
      m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
          "%s %" G_GINT64_FORMAT " is out of range [%d, %d] for rank %d",
          what, axis, -rank, rank - 1, rank);
    else
      m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
          "%s %" G_GINT64_FORMAT " is out of range [0, %d] for rank %d",
          what, axis, rank - 1, rank);
    return FALSE;
  }
  *out = a;
  return TRUE;
}

gboolean
ir_k_output_declared (const M2iOpContext *ctx, gint p, const M2iShape *shape, GError **error)
{
  const M2iShape *declared = m2i_ir_node_get_output_shape (ctx->node, p);
  if (!declared || ir_shape_fits (declared, shape))
    return TRUE;
  m2i_ir_node_set_error (error, M2I_ERROR_MALFORMED, ctx->node,
      "shape mismatch on output %d: the XML declares %s but the op computes %s from its "
      "inputs", p, ir_k_shape_str (declared, 0), ir_k_shape_str (shape, 1));
  return FALSE;
}

const char *
ir_k_shape_str (const M2iShape *s, gint slot)
{
  static GPrivate bufs = G_PRIVATE_INIT (g_free);
  gchar *b = g_private_get (&bufs);
  if (!b) {
    b = g_malloc (4 * 200);
    g_private_set (&bufs, b);
  }
  gchar *dst = b + 200 * CLAMP (slot, 0, 3);
  gsize off = 0;
  dst[off++] = '[';
  for (gint i = 0; i < s->rank && off < 180; i++)
    off += g_snprintf (dst + off, 200 - off, i ? ",%" G_GINT64_FORMAT : "%" G_GINT64_FORMAT,
        s->dims[i]);
  dst[off++] = ']';
  dst[off] = 0;
  return dst;
}

gboolean
ir_k_fuse_bias_relu (M2iOpContext *ctx, const float *bias, gint64 n_bias,
    gboolean relu, GError **error)
{
  const char *type = m2i_ir_node_get_type (ctx->node);
  gint64 channels = 0;
  M2iKFusion *f = NULL;
  if (!ctx->state)
    f = NULL;
  else if (!strcmp (type, "Convolution") || !strcmp (type, "GroupConvolution"))
    f = ir_k_conv_fusion (ctx, &channels);
  else if (!strcmp (type, "MatMul"))
    f = ir_k_matmul_fusion (ctx, &channels);
  if (!f) {
    m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, ctx->node,
        "a bias and ReLU can only be fused into a compiled f32 Convolution, "
        "GroupConvolution or MatMul");
    return FALSE;
  }
  if (bias && n_bias != channels) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "a fused bias needs %" G_GINT64_FORMAT " values (one per output channel), got %"
        G_GINT64_FORMAT, channels, n_bias);
    return FALSE;
  }
  g_free (f->bias);
  f->bias = bias ? g_memdup2 (bias, channels * sizeof (float)) : NULL;
  f->relu = relu;
  return TRUE;
}

gboolean
ir_k_fuse_swish (M2iOpContext *ctx, float beta, GError **error)
{
  const char *type = m2i_ir_node_get_type (ctx->node);
  gint64 channels;
  M2iKFusion *f = ctx->state && (!strcmp (type, "Convolution") ||
      !strcmp (type, "GroupConvolution")) ? ir_k_conv_fusion (ctx, &channels) : NULL;
  if (!f || f->relu) {
    m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, ctx->node,
        "Swish can only be fused into a compiled f32 Convolution or GroupConvolution "
        "without ReLU");
    return FALSE;
  }
  f->swish = TRUE;
  f->swish_beta = beta;
  return TRUE;
}

gint
ir_k_op_version (const M2iOpContext *ctx)
{
  gchar buf[16];
  const char *v = ir_opset_resolve (m2i_ir_node_get_type (ctx->node),
      m2i_ir_node_get_version (ctx->node), buf);
  if (!v || strncmp (v, "opset", 5) || !g_ascii_isdigit (v[5]))
    return 0;
  return (gint) g_ascii_strtoll (v + 5, NULL, 10);
}

gint
ir_k_threads (const M2iOpContext *ctx)
{
  return CLAMP (ctx->n_threads, 1, 64);
}

/* Multiply-adds a slice must have inside a team (see ir_k_slices_for). */
static gint64 team_work_per_slice = 100000;

gint64
ir_k_set_team_slice_work (gint64 work)
{
  gint64 old = team_work_per_slice;
  team_work_per_slice = MAX (work, 1);
  return old;
}

gint
ir_k_slices_for (const M2iOpContext *ctx, gint64 work)
{
  /* A team hands a slice over in well under a microsecond: a slice is
   * worth it from about 100 000 multiply-adds (half a microsecond here).
   * The pool wakes a sleeping worker (tens of microseconds). Where the
   * loops run inline anyway (a team's master alone), one slice: the
   * kernels cut no finer than they need. */
  if (ir_k_team_inline ())
    return 1;
  gint64 per_slice = ir_k_team_active () ? team_work_per_slice : 1000000;
  return (gint) CLAMP (work / per_slice, 1, ir_k_threads (ctx));
}

/* ---- Element-wise runs --------------------------------------------------- */

#define CHUNK 16384

typedef struct {
  gint64 numel;
  M2iKChunkFunc func;
  gpointer user;
} ChunkJob;

static void
chunk_slice (gint begin, gint end, gint slice, gpointer data)
{
  const ChunkJob *j = data;
  gint64 first = (gint64) begin * CHUNK;
  j->func (first, MIN ((gint64) end * CHUNK, j->numel) - first, j->user);
}

void
ir_k_run_chunks (const M2iOpContext *ctx, gint64 numel, gint64 per_thread, M2iKChunkFunc func,
    gpointer user)
{
  ChunkJob j = { numel, func, user };
  if (numel > 0)
    ir_k_parallel_for ((gint) ((numel + CHUNK - 1) / CHUNK),
        numel >= per_thread ? ir_k_threads (ctx) : 1, 1, chunk_slice, &j);
}

void
ir_k_outer_inner (const M2iShape *s, gint axis, gint64 *outer, gint64 *inner)
{
  *outer = *inner = 1;
  for (gint d = 0; d < s->rank; d++) {
    if (d < axis)
      *outer *= s->dims[d];
    else if (d > axis)
      *inner *= s->dims[d];
  }
}

/* ---- Window geometry --------------------------------------------------- */

static gboolean
window_list (const M2iOpContext *ctx, const char *key, gint n, gint64 def,
    gboolean required, gint64 min, gint64 *out, GError **error)
{
  gint64 v[M2I_MAX_RANK];
  gint got;
  if (!m2i_ir_node_attr_ints (ctx->node, key, v, M2I_MAX_RANK, &got, error))
    return FALSE;
  if (got < 0) {
    if (required) {
      m2i_ir_node_set_error (error, M2I_ERROR_MALFORMED, ctx->node,
          "attribute %s is required", key);
      return FALSE;
    }
    for (gint i = 0; i < n; i++)
      out[i] = def;
    return TRUE;
  }
  if (got != n) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "attribute %s=\"%s\" has %d values; the input has %d spatial axes",
        key, m2i_ir_node_get_attr (ctx->node, key), got, n);
    return FALSE;
  }
  for (gint i = 0; i < n; i++) {
    if (v[i] < min || v[i] > (1 << 24)) {
      m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
          "attribute %s=\"%s\": value %" G_GINT64_FORMAT " is out of range",
          key, m2i_ir_node_get_attr (ctx->node, key), v[i]);
      return FALSE;
    }
    out[i] = v[i];
  }
  return TRUE;
}

gboolean
ir_k_window_attrs (const M2iOpContext *ctx, gint n, gboolean with_dilations,
    const char *kernel_attr, M2iWindow *w, GError **error)
{
  static const char *const pads[] = { "explicit", "same_upper", "same_lower",
    "valid", "notset", NULL };
  static const char *const rounding[] = { "floor", "ceil", "ceil_torch", NULL };
  memset (w, 0, sizeof *w);
  if (n < 1 || n > M2I_K_MAX_SPATIAL) {
    m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, ctx->node,
        "%d spatial axes are not supported (1 to %d)", n, M2I_K_MAX_SPATIAL);
    return FALSE;
  }
  w->n = n;
  gint pad_mode;
  if (!m2i_ir_node_attr_enum (ctx->node, "auto_pad", "explicit", pads, &pad_mode, error))
    return FALSE;
  w->auto_pad = pad_mode == 4 ? M2I_PAD_EXPLICIT : (M2iAutoPad) pad_mode;
  gboolean is_explicit = w->auto_pad == M2I_PAD_EXPLICIT;
  if (!window_list (ctx, "strides", n, 1, TRUE, 1, w->strides, error))
    return FALSE;
  if (with_dilations) {
    if (!window_list (ctx, "dilations", n, 1, FALSE, 1, w->dilations, error))
      return FALSE;
  } else {
    for (gint i = 0; i < n; i++)
      w->dilations[i] = 1;
  }
  /* Pads are ignored (and may be absent) unless auto_pad is explicit. */
  if (!window_list (ctx, "pads_begin", n, 0, is_explicit, 0, w->pads_begin, error) ||
      !window_list (ctx, "pads_end", n, 0, is_explicit, 0, w->pads_end, error))
    return FALSE;
  if (kernel_attr) {
    if (!window_list (ctx, kernel_attr, n, 1, TRUE, 1, w->kernel, error))
      return FALSE;
    gint r;
    if (!m2i_ir_node_attr_enum (ctx->node, "rounding_type", "floor", rounding, &r, error))
      return FALSE;
    w->ceil = r >= 1;
    w->ceil_torch = r == 2;
  }
  return TRUE;
}

gboolean
ir_k_window_output (const M2iOpContext *ctx, M2iWindow *w, const gint64 *in,
    gint64 *out, GError **error)
{
  for (gint i = 0; i < w->n; i++) {
    /* a convolution's kernel comes from its weights' dims: up to 2^40 */
    gint64 eff;
    if (w->kernel[i] < 1 || !ir_mul_i64 (w->kernel[i] - 1, w->dilations[i], &eff) ||
        eff > G_MAXINT64 / 4) {
      m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
          "spatial axis %d: kernel %" G_GINT64_FORMAT " with dilation %" G_GINT64_FORMAT
          " is no window", i, w->kernel[i], w->dilations[i]);
      return FALSE;
    }
    eff += 1;
    gint64 s = w->strides[i];
    switch (w->auto_pad) {
      case M2I_PAD_VALID:
        /* No pads; rounding_type still applies (MaxPool-8 spec, example 5). */
        w->pads_begin[i] = w->pads_end[i] = 0;
        if (in[i] < eff)
          out[i] = 0;
        else
          out[i] = (w->ceil ? (in[i] - eff + s - 1) / s : (in[i] - eff) / s) + 1;
        /* ceil_torch (pooling-14): the last window starts inside the input */
        if (w->ceil_torch && out[i] > 1 && (out[i] - 1) * s >= in[i])
          out[i]--;
        break;
      case M2I_PAD_SAME_UPPER:
      case M2I_PAD_SAME_LOWER: {
        out[i] = (in[i] + s - 1) / s;
        gint64 total = MAX ((out[i] - 1) * s + eff - in[i], 0);
        gint64 small = total / 2, big = total - small;
        w->pads_begin[i] = w->auto_pad == M2I_PAD_SAME_UPPER ? small : big;
        w->pads_end[i] = w->auto_pad == M2I_PAD_SAME_UPPER ? big : small;
        break;
      }
      default: {
        gint64 span = in[i] + w->pads_begin[i] + w->pads_end[i] - eff;
        if (span < 0)
          out[i] = 0;
        else if (w->ceil)
          out[i] = (span + s - 1) / s + 1;
        else
          out[i] = span / s + 1;
        if (w->ceil_torch && out[i] > 1 && (out[i] - 1) * s >= in[i] + w->pads_begin[i])
          out[i]--;
        break;
      }
    }
    if (out[i] < 1) {
      m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
          "spatial axis %d: a window of %" G_GINT64_FORMAT " (kernel %" G_GINT64_FORMAT
          ", dilation %" G_GINT64_FORMAT ") does not fit an input of %" G_GINT64_FORMAT
          " with pads %" G_GINT64_FORMAT "+%" G_GINT64_FORMAT, i, eff, w->kernel[i],
          w->dilations[i], in[i], w->pads_begin[i], w->pads_end[i]);
      return FALSE;
    }
  }
  return TRUE;
}

/* ---- auto_broadcast ------------------------------------------------------ */

gboolean
ir_k_broadcast_spec (const M2iOpContext *ctx, const char *def, M2iKBroadcastSpec *spec,
    GError **error)
{
  static const char *const modes[] = { "numpy", "none", "explicit", "pdpd", NULL };
  gint mode;
  if (!m2i_ir_node_attr_enum (ctx->node, "auto_broadcast", def, modes, &mode, error))
    return FALSE;
  spec->mode = mode == 0 ? M2I_K_BCAST_NUMPY : mode == 3 ? M2I_K_BCAST_PDPD : M2I_K_BCAST_NONE;
  spec->axis = -1;
  if (spec->mode == M2I_K_BCAST_PDPD) {
    if (!m2i_ir_node_attr_int (ctx->node, "axis", -1, &spec->axis, error))
      return FALSE;
    if (spec->axis < -1) {
      m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
          "auto_broadcast=pdpd: axis %" G_GINT64_FORMAT " is negative (only -1, the "
          "default, may be)", spec->axis);
      return FALSE;
    }
  }
  return TRUE;
}

gboolean
ir_k_broadcast_pair (const M2iOpContext *ctx, const M2iKBroadcastSpec *spec,
    const M2iShape *a, gint ia, M2iShape *b, gint ib, gboolean one_way, M2iShape *out,
    GError **error)
{
  switch (spec->mode) {
    case M2I_K_BCAST_NONE:
      if (!m2i_shape_equal (a, b)) {
        m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
            "auto_broadcast=none needs equal shapes, got %s (input %d) and %s (input %d)",
            ir_k_shape_str (a, 0), ia, ir_k_shape_str (b, 1), ib);
        return FALSE;
      }
      *out = *a;
      return TRUE;
    case M2I_K_BCAST_PDPD: {
      M2iShape bt = *b;
      while (bt.rank > 0 && bt.dims[bt.rank - 1] == 1)
        bt.rank--;                     /* trailing 1-dims do not count */
      gint64 axis = spec->axis == -1 ? a->rank - b->rank : spec->axis;
      if (axis < 0 || axis > a->rank || axis + bt.rank > a->rank) {
        m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
            "auto_broadcast=pdpd: input %d %s does not fit into input %d %s from axis %"
            G_GINT64_FORMAT, ib, ir_k_shape_str (b, 0), ia, ir_k_shape_str (a, 1), axis);
        return FALSE;
      }
      M2iShape placed = { a->rank };
      for (gint d = 0; d < a->rank; d++) {
        gint64 k = d - axis;
        placed.dims[d] = k >= 0 && k < bt.rank ? bt.dims[k] : 1;
        if (placed.dims[d] != 1 && placed.dims[d] != a->dims[d]) {
          m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
              "auto_broadcast=pdpd: input %d %s does not match input %d %s from axis %"
              G_GINT64_FORMAT " (axis %d: %" G_GINT64_FORMAT " vs %" G_GINT64_FORMAT ")",
              ib, ir_k_shape_str (b, 0), ia, ir_k_shape_str (a, 1), axis, d,
              placed.dims[d], a->dims[d]);
          return FALSE;
        }
      }
      *b = placed;
      *out = *a;
      return TRUE;
    }
    default: {
      GError *local = NULL;
      if (!m2i_shape_broadcast (a, b, out, &local)) {
        m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
            "inputs %d and %d: %s", ia, ib, local->message);
        g_error_free (local);
        return FALSE;
      }
      if (one_way && !m2i_shape_equal (out, a)) {
        m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
            "input %d %s does not broadcast onto %s (it would grow the result to %s)",
            ib, ir_k_shape_str (b, 0), ir_k_shape_str (a, 1), ir_k_shape_str (out, 2));
        return FALSE;
      }
      return TRUE;
    }
  }
}

/* ---- Broadcasting ------------------------------------------------------ */

void
ir_k_broadcast_plan (M2iBroadcast *b, const M2iShape *out,
    const M2iShape *const *operands, gint n)
{
  memset (b, 0, sizeof *b);
  b->n_operands = n;
  /* Full-rank strides first. */
  gint64 st[M2I_K_MAX_OPERANDS][M2I_MAX_RANK];
  for (gint k = 0; k < n; k++) {
    const M2iShape *s = operands[k];
    gint64 stride = 1;
    for (gint d = out->rank - 1; d >= 0; d--) {
      gint sd = d - (out->rank - s->rank);
      gint64 dim = sd >= 0 ? s->dims[sd] : 1;
      st[k][d] = dim == 1 ? 0 : stride;
      stride *= dim;
    }
  }
  /* Drop size-1 dims, then merge a dim into the next inner one when every
   * operand steps through both contiguously (or broadcasts both). */
  gint r = 0;
  for (gint d = 0; d < out->rank; d++) {
    if (out->dims[d] == 1)
      continue;
    gboolean merge = r > 0;
    for (gint k = 0; k < n && merge; k++) {
      gint64 outer = b->strides[k][r - 1], inner = st[k][d];
      if (!((outer == 0 && inner == 0) || (inner != 0 && outer == inner * out->dims[d])))
        merge = FALSE;
    }
    if (merge) {
      b->dims[r - 1] *= out->dims[d];
      for (gint k = 0; k < n; k++)
        b->strides[k][r - 1] = st[k][d];
    } else {
      b->dims[r] = out->dims[d];
      for (gint k = 0; k < n; k++)
        b->strides[k][r] = st[k][d];
      r++;
    }
  }
  if (r == 0) {                       /* a scalar or all-ones output */
    b->dims[0] = 1;
    r = 1;
  }
  b->rank = r;
}

typedef struct {
  const M2iBroadcast *b;
  M2iBroadcastRow row;
  gpointer user;
} BroadcastJob;

static void
broadcast_rows (gint begin, gint end, gint slice, gpointer data)
{
  const BroadcastJob *j = data;
  const M2iBroadcast *b = j->b;
  gint outer = b->rank - 1;
  for (gint r = begin; r < end; r++) {
    gint64 off[M2I_K_MAX_OPERANDS] = { 0 };
    gint64 rem = r;
    for (gint d = outer - 1; d >= 0; d--) {
      gint64 idx = rem % b->dims[d];
      rem /= b->dims[d];
      for (gint k = 0; k < b->n_operands; k++)
        off[k] += idx * b->strides[k][d];
    }
    j->row (off, b->dims[outer], j->user);
  }
}

void
ir_k_broadcast_run (const M2iBroadcast *b, gint n_threads, M2iBroadcastRow row,
    gpointer user)
{
  gint64 rows = 1;
  for (gint d = 0; d < b->rank - 1; d++)
    rows *= b->dims[d];
  gint64 inner = b->dims[b->rank - 1];
  BroadcastJob j = { b, row, user };
  /* Threads pay off only for tensors well beyond the L1 cache. */
  gint slices = rows * inner >= 32768 ? n_threads : 1;
  if (rows == 1 && slices > 1 && inner >= 65536) {
    /* One long row: split it into pieces by hand. */
    M2iBroadcast split = *b;
    gint64 pieces = slices * 4;
    while (inner % pieces)
      pieces--;
    if (pieces > 1 && b->rank < M2I_MAX_RANK) {
      split.rank = 2;
      split.dims[0] = pieces;
      split.dims[1] = inner / pieces;
      for (gint k = 0; k < b->n_operands; k++) {
        split.strides[k][1] = b->strides[k][0];
        split.strides[k][0] = b->strides[k][0] * split.dims[1];
      }
      BroadcastJob js = { &split, row, user };
      ir_k_parallel_for ((gint) pieces, slices, 1, broadcast_rows, &js);
      return;
    }
  }
  ir_k_parallel_for ((gint) rows, slices, 1, broadcast_rows, &j);
}

gboolean
ir_k_require_attrs (const M2iOpContext *ctx, GError **error, ...)
{
  va_list ap;
  va_start (ap, error);
  for (const char *key = va_arg (ap, const char *); key; key = va_arg (ap, const char *))
    if (!m2i_ir_node_get_attr (ctx->node, key)) {
      m2i_ir_node_set_error (error, M2I_ERROR_MALFORMED, ctx->node, "attribute %s is required",
          key);
      va_end (ap);
      return FALSE;
    }
  va_end (ap);
  return TRUE;
}
