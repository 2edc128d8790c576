/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ir-kernels-structural.c — the ops that move, view or describe data rather
 * than compute on it: Parameter, Const, Result, Reshape, Squeeze, Unsqueeze,
 * Concat, Transpose, Convert, ShapeOf, StridedSlice, Gather. Each follows
 * its OpenVINO opset specification; all element types are handled. */
#include "ir-private.h"
#include "kernels/indices.h"
#include "kernels/kernels-private.h"
#include <base/m2i-error.h>

#include <string.h>

/* ---- helpers ------------------------------------------------------------ */

static gboolean
check_n_inputs (const M2iOpContext *ctx, gint min, gint max, GError **error)
{
  if (ctx->n_inputs < min || ctx->n_inputs > max) {
    if (min == max)
      m2i_ir_node_set_error (error, M2I_ERROR_MALFORMED, ctx->node,
          "expects %d input%s, has %d", min, min == 1 ? "" : "s", ctx->n_inputs);
    else
      m2i_ir_node_set_error (error, M2I_ERROR_MALFORMED, ctx->node,
          "expects %d to %d inputs, has %d", min, max, ctx->n_inputs);
    return FALSE;
  }
  if (ctx->n_outputs != 1) {
    m2i_ir_node_set_error (error, M2I_ERROR_MALFORMED, ctx->node,
        "expects one output port, has %d", ctx->n_outputs);
    return FALSE;
  }
  return TRUE;
}

/* Reads the integer values of constant input @i (a scalar or a 1-D tensor)
 * into @out (at most @max); *n receives the count. */
static gboolean
const_ints (const M2iOpContext *ctx, gint i, const char *what, gint64 *out, gint max,
    gint *n, GError **error)
{
  const M2iTensor *t = &ctx->inputs[i];
  if (!t->data) {
    m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, ctx->node,
        "input %d (%s) is computed at run time; only a constant %s is supported "
        "(static shapes)", i, what, what);
    return FALSE;
  }
  if (!ir_k_is_integer_type (t->type) || t->shape.rank > 1) {
    g_autofree gchar *s = m2i_shape_to_string (&t->shape);
    m2i_ir_node_set_error (error, M2I_ERROR_MALFORMED, ctx->node,
        "input %d (%s) must be a scalar or 1-D integer tensor, not %s %s", i, what,
        m2i_element_type_to_string (t->type), s);
    return FALSE;
  }
  gint64 count = m2i_shape_numel (&t->shape);
  if (count > max) {
    m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, ctx->node,
        "input %d (%s) has %" G_GINT64_FORMAT " values, more than %d", i, what, count, max);
    return FALSE;
  }
  ir_convert_elements (t->data, t->type, out, M2I_ET_I64, count);
  *n = (gint) count;
  return TRUE;
}

/* Normalizes a possibly negative @axis against @rank. */
static gboolean
norm_axis (const M2iOpContext *ctx, gint64 axis, gint rank, gint *out, GError **error)
{
  if (axis < -rank || axis >= rank) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "axis %" G_GINT64_FORMAT " is out of range for rank %d", axis, rank);
    return FALSE;
  }
  *out = (gint) (axis < 0 ? axis + rank : axis);
  return TRUE;
}

static gboolean
set_output (M2iOpContext *ctx, M2iElementType type, const M2iShape *shape, GError **error)
{
  if (m2i_shape_numel (shape) < 0) {
    m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, ctx->node,
        "output has too many elements");
    return FALSE;
  }
  ctx->outputs[0].type = type;
  ctx->outputs[0].shape = *shape;
  return TRUE;
}

/* Views: the planner usually gives the output the input's buffer. */
static gboolean
copy_execute (M2iOpContext *ctx, GError **error)
{
  if (ctx->outputs[0].data != ctx->inputs[0].data)
    memmove (ctx->outputs[0].data, ctx->inputs[0].data, m2i_tensor_nbytes (&ctx->outputs[0]));
  return TRUE;
}

/* ---- Parameter, Const, Result ----------------------------------------- */

static gboolean
type_and_shape_from_attrs (M2iOpContext *ctx, GError **error)
{
  const char *et = m2i_ir_node_get_attr (ctx->node, "element_type");
  const char *sh = m2i_ir_node_get_attr (ctx->node, "shape");
  M2iElementType type;
  M2iShape shape;
  GError *e = NULL;
  if (!et || !sh || !ir_parse_element_type (et, &type, &e) || !m2i_shape_parse (sh, &shape, &e)) {
    m2i_ir_node_set_error (error, M2I_ERROR_MALFORMED, ctx->node, "%s",
        e ? e->message : "needs element_type and shape attributes");
    g_clear_error (&e);
    return FALSE;
  }
  if (!check_n_inputs (ctx, 0, 0, error))
    return FALSE;
  return set_output (ctx, type == M2I_ET_F16 ? M2I_ET_F32 : type, &shape, error);
}

static gboolean
result_infer (M2iOpContext *ctx, GError **error)
{
  if (ctx->n_inputs != 1) {
    m2i_ir_node_set_error (error, M2I_ERROR_MALFORMED, ctx->node, "expects one input");
    return FALSE;
  }
  return TRUE;
}

static const M2iOpKernel parameter_kernel = { "Parameter", "opset1", type_and_shape_from_attrs };
static const M2iOpKernel const_kernel = { "Const", "opset1", type_and_shape_from_attrs };
static const M2iOpKernel result_kernel = { "Result", "opset1", result_infer };

/* ---- Reshape-1 ---------------------------------------------------------- */

static gboolean
reshape_infer (M2iOpContext *ctx, GError **error)
{
  if (!check_n_inputs (ctx, 2, 2, error))
    return FALSE;
  gboolean special_zero;
  gint64 target[M2I_MAX_RANK];
  gint n;
  if (!m2i_ir_node_attr_bool (ctx->node, "special_zero", FALSE, &special_zero, error) ||
      !const_ints (ctx, 1, "target shape", target, M2I_MAX_RANK, &n, error))
    return FALSE;
  const M2iTensor *in = &ctx->inputs[0];
  M2iShape out = { n };
  gint minus_one = -1;
  gint64 known = 1;
  for (gint i = 0; i < n; i++) {
    gint64 d = target[i];
    if (d == 0 && special_zero) {
      if (i >= in->shape.rank) {
        m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
            "special_zero copies dimension %d, but the input has rank %d", i, in->shape.rank);
        return FALSE;
      }
      d = in->shape.dims[i];
    } else if (d == -1) {
      if (minus_one >= 0) {
        m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
            "target shape has more than one -1");
        return FALSE;
      }
      minus_one = i;
      continue;
    } else if (d < 0) {
      m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
          "target shape has a negative dimension %" G_GINT64_FORMAT, d);
      return FALSE;
    }
    out.dims[i] = d;
    if (d && known > G_MAXINT64 / d) {
      m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
          "target shape is too large");
      return FALSE;
    }
    known *= d;
  }
  gint64 numel = m2i_shape_numel (&in->shape);
  if (minus_one >= 0) {
    if (known == 0 || numel % known) {
      g_autofree gchar *s = m2i_shape_to_string (&in->shape);
      m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
          "cannot infer the -1 dimension: %" G_GINT64_FORMAT " elements of %s do not "
          "divide by %" G_GINT64_FORMAT, numel, s, known);
      return FALSE;
    }
    out.dims[minus_one] = numel / known;
  } else if (known != numel) {
    g_autofree gchar *s1 = m2i_shape_to_string (&in->shape);
    g_autofree gchar *s2 = m2i_shape_to_string (&out);
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "cannot reshape %s (%" G_GINT64_FORMAT " elements) to %s", s1, numel, s2);
    return FALSE;
  }
  return set_output (ctx, in->type, &out, error);
}

static const M2iOpKernel reshape_kernel = { "Reshape", "opset1", reshape_infer, copy_execute };

/* ---- Squeeze-1, Unsqueeze-1 --------------------------------------------- */

static gboolean
squeeze_infer (M2iOpContext *ctx, GError **error)
{
  if (!check_n_inputs (ctx, 1, 2, error))
    return FALSE;
  const M2iShape *in = &ctx->inputs[0].shape;
  gboolean drop[M2I_MAX_RANK] = { 0 };
  if (ctx->n_inputs == 2) {
    gint64 axes[M2I_MAX_RANK];
    gint n;
    if (!const_ints (ctx, 1, "axes", axes, M2I_MAX_RANK, &n, error))
      return FALSE;
    for (gint i = 0; i < n; i++) {
      gint a;
      if (!norm_axis (ctx, axes[i], in->rank, &a, error))
        return FALSE;
      if (in->dims[a] != 1) {
        m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
            "cannot squeeze axis %d of size %" G_GINT64_FORMAT " (only size 1)", a, in->dims[a]);
        return FALSE;
      }
      drop[a] = TRUE;
    }
  } else {
    for (gint a = 0; a < in->rank; a++)
      drop[a] = in->dims[a] == 1;
  }
  M2iShape out = { 0 };
  for (gint a = 0; a < in->rank; a++)
    if (!drop[a])
      out.dims[out.rank++] = in->dims[a];
  return set_output (ctx, ctx->inputs[0].type, &out, error);
}

static gboolean
unsqueeze_infer (M2iOpContext *ctx, GError **error)
{
  if (!check_n_inputs (ctx, 2, 2, error))
    return FALSE;
  const M2iShape *in = &ctx->inputs[0].shape;
  gint64 axes[M2I_MAX_RANK];
  gint n;
  if (!const_ints (ctx, 1, "axes", axes, M2I_MAX_RANK, &n, error))
    return FALSE;
  gint rank = in->rank + n;
  if (rank > M2I_MAX_RANK) {
    m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, ctx->node,
        "output rank %d exceeds %d", rank, M2I_MAX_RANK);
    return FALSE;
  }
  gboolean added[M2I_MAX_RANK] = { 0 };
  for (gint i = 0; i < n; i++) {
    gint a;
    if (!norm_axis (ctx, axes[i], rank, &a, error))
      return FALSE;
    if (added[a]) {
      m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
          "axis %d is given twice", a);
      return FALSE;
    }
    added[a] = TRUE;
  }
  M2iShape out = { rank };
  for (gint a = 0, j = 0; a < rank; a++)
    out.dims[a] = added[a] ? 1 : in->dims[j++];
  return set_output (ctx, ctx->inputs[0].type, &out, error);
}

static const M2iOpKernel squeeze_kernel = { "Squeeze", "opset1", squeeze_infer, copy_execute };
static const M2iOpKernel unsqueeze_kernel = { "Unsqueeze", "opset1", unsqueeze_infer, copy_execute };

/* ---- Concat-1 ----------------------------------------------------------- */

static gboolean
concat_infer (M2iOpContext *ctx, GError **error)
{
  if (!check_n_inputs (ctx, 1, G_MAXINT, error))
    return FALSE;
  gint64 axis64;
  gint axis;
  const M2iTensor *first = &ctx->inputs[0];
  if (!m2i_ir_node_attr_int (ctx->node, "axis", 0, &axis64, error))
    return FALSE;
  if (first->shape.rank == 0) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "cannot concatenate scalars");
    return FALSE;
  }
  if (!norm_axis (ctx, axis64, first->shape.rank, &axis, error))
    return FALSE;
  M2iShape out = first->shape;
  out.dims[axis] = 0;
  for (gint i = 0; i < ctx->n_inputs; i++) {
    const M2iTensor *t = &ctx->inputs[i];
    gboolean ok = t->type == first->type && t->shape.rank == first->shape.rank;
    for (gint a = 0; ok && a < out.rank; a++)
      ok = a == axis || t->shape.dims[a] == first->shape.dims[a];
    if (!ok) {
      g_autofree gchar *s0 = m2i_shape_to_string (&first->shape);
      g_autofree gchar *si = m2i_shape_to_string (&t->shape);
      m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
          "input %d (%s %s) does not fit input 0 (%s %s) along axis %d", i,
          m2i_element_type_to_string (t->type), si,
          m2i_element_type_to_string (first->type), s0, axis);
      return FALSE;
    }
    if (out.dims[axis] > G_MAXINT64 / 2 - t->shape.dims[axis]) {
      m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, ctx->node, "output is too large");
      return FALSE;
    }
    out.dims[axis] += t->shape.dims[axis];
  }
  ctx->state = GINT_TO_POINTER (axis);
  return set_output (ctx, first->type, &out, error);
}

static gboolean
concat_execute (M2iOpContext *ctx, GError **error)
{
  gint axis = GPOINTER_TO_INT (ctx->state);
  const M2iShape *os = &ctx->outputs[0].shape;
  gsize esize = m2i_element_type_size (ctx->outputs[0].type);
  gsize outer = 1, inner = esize;
  for (gint a = 0; a < axis; a++)
    outer *= os->dims[a];
  for (gint a = axis + 1; a < os->rank; a++)
    inner *= os->dims[a];
  gsize out_row = os->dims[axis] * inner, offset = 0;
  guint8 *out = ctx->outputs[0].data;
  for (gint i = 0; i < ctx->n_inputs; i++) {
    gsize row = ctx->inputs[i].shape.dims[axis] * inner;
    const guint8 *in = ctx->inputs[i].data;
    /* the planner may have had the producer write in place already */
    for (gsize o = 0; o < outer && row && in != out + offset; o++)
      memcpy (out + o * out_row + offset, in + o * row, row);
    offset += row;
  }
  return TRUE;
}

static const M2iOpKernel concat_kernel = { "Concat", "opset1", concat_infer, concat_execute };

/* ---- Transpose-1 ------------------------------------------------------- */

static gboolean
transpose_infer (M2iOpContext *ctx, GError **error)
{
  if (!check_n_inputs (ctx, 2, 2, error))
    return FALSE;
  const M2iShape *in = &ctx->inputs[0].shape;
  gint64 perm[M2I_MAX_RANK];
  gint n;
  if (!const_ints (ctx, 1, "permutation", perm, M2I_MAX_RANK, &n, error))
    return FALSE;
  if (n == 0) {                  /* empty: reverse the axes */
    n = in->rank;
    for (gint a = 0; a < n; a++)
      perm[a] = n - 1 - a;
  }
  gboolean seen[M2I_MAX_RANK] = { 0 };
  gboolean ok = n == in->rank;
  for (gint a = 0; ok && a < n; a++) {
    ok = perm[a] >= 0 && perm[a] < n && !seen[perm[a]];
    if (ok)
      seen[perm[a]] = TRUE;
  }
  if (!ok) {
    g_autofree gchar *s = m2i_shape_to_string (in);
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "the order input is not a permutation of the %d axes of %s", in->rank, s);
    return FALSE;
  }
  M2iShape out = { n };
  gint order[M2I_MAX_RANK];
  for (gint a = 0; a < n; a++) {
    out.dims[a] = in->dims[perm[a]];
    order[a] = (gint) perm[a];
  }
  IrKPerm *plan = g_new0 (IrKPerm, 1);
  ir_k_perm_plan (plan, n, in->dims, order, m2i_element_type_size (ctx->inputs[0].type));
  if (plan->rows > G_MAXINT) {
    g_free (plan);
    g_autofree gchar *s = m2i_shape_to_string (in);
    m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, ctx->node, "the tensor %s is too large",
        s);
    return FALSE;
  }
  ctx->state = plan;
  return set_output (ctx, ctx->inputs[0].type, &out, error);
}

static gboolean
transpose_execute (M2iOpContext *ctx, GError **error)
{
  ir_k_perm_run (ctx, ctx->state, ctx->inputs[0].data, ctx->outputs[0].data);
  return TRUE;
}

static const M2iOpKernel transpose_kernel = {
  "Transpose", "opset1", transpose_infer, transpose_execute, g_free
};

/* ---- Convert-1 --------------------------------------------------------- */

/* state: the destination type; f16 destinations compute in f32 rounded
 * through f16 (the runtime keeps f16 data in f32, see m2i-ir.h). */
static gboolean
convert_infer (M2iOpContext *ctx, GError **error)
{
  if (!check_n_inputs (ctx, 1, 1, error))
    return FALSE;
  const char *s = m2i_ir_node_get_attr (ctx->node, "destination_type");
  M2iElementType dt;
  GError *e = NULL;
  if (!s || !ir_parse_element_type (s, &dt, &e)) {
    m2i_ir_node_set_error (error, M2I_ERROR_MALFORMED, ctx->node, "destination_type: %s",
        e ? e->message : "missing");
    g_clear_error (&e);
    return FALSE;
  }
  ctx->state = GINT_TO_POINTER (dt);
  return set_output (ctx, dt == M2I_ET_F16 ? M2I_ET_F32 : dt, &ctx->inputs[0].shape, error);
}

static gboolean
convert_execute (M2iOpContext *ctx, GError **error)
{
  M2iElementType declared = GPOINTER_TO_INT (ctx->state);
  const M2iTensor *in = &ctx->inputs[0];
  M2iTensor *out = &ctx->outputs[0];
  gsize n = m2i_shape_numel (&out->shape);
  if (declared == M2I_ET_F16 && out->type == M2I_ET_F32) {
    /* round to f16 precision: out = f32(f16(x)), through a small stack chunk */
    float *o = out->data;
    ir_convert_elements (in->data, in->type, o, M2I_ET_F32, n);
    guint16 chunk[256];
    for (gsize i = 0; i < n; i += G_N_ELEMENTS (chunk)) {
      gsize c = MIN (G_N_ELEMENTS (chunk), n - i);
      ir_convert_elements (o + i, M2I_ET_F32, chunk, M2I_ET_F16, c);
      ir_convert_elements (chunk, M2I_ET_F16, o + i, M2I_ET_F32, c);
    }
    return TRUE;
  }
  ir_convert_elements (in->data, in->type, out->data, out->type, n);
  return TRUE;
}

static const M2iOpKernel convert_kernel = { "Convert", "opset1", convert_infer, convert_execute };

/* ---- ShapeOf-1, ShapeOf-3 ----------------------------------------------- */

static gboolean
shapeof_infer (M2iOpContext *ctx, GError **error)
{
  if (!check_n_inputs (ctx, 1, 1, error))
    return FALSE;
  static const char *const types[] = { "i64", "i32", NULL };
  gint which = 0;
  if (!strcmp (m2i_ir_node_get_version (ctx->node), "opset3") &&
      !m2i_ir_node_attr_enum (ctx->node, "output_type", "i64", types, &which, error))
    return FALSE;
  M2iShape out = { 1, { ctx->inputs[0].shape.rank } };
  return set_output (ctx, which ? M2I_ET_I32 : M2I_ET_I64, &out, error);
}

static gboolean
shapeof_execute (M2iOpContext *ctx, GError **error)
{
  const M2iShape *s = &ctx->inputs[0].shape;
  ir_convert_elements (s->dims, M2I_ET_I64, ctx->outputs[0].data, ctx->outputs[0].type,
      s->rank);
  return TRUE;
}

static const M2iOpKernel shapeof_kernel = {
  "ShapeOf", "opset1 opset3", shapeof_infer, shapeof_execute
};

/* ---- StridedSlice-1 ------------------------------------------------------ */

/* A gather over at most 8 input axes: output axis k walks input offsets
 * start + i·step (step in elements, 0 for new axes). */
typedef struct {
  gint rank;
  gint64 count[M2I_MAX_RANK];
  gint64 step[M2I_MAX_RANK];
  gint64 start;                  /* input element offset of output element 0 */
} SlicePlan;

static gboolean
mask_bits (const M2iOpContext *ctx, const char *key, gboolean *bits, GError **error)
{
  gint64 v[M2I_MAX_RANK * 2];
  gint n;
  memset (bits, 0, sizeof (gboolean) * M2I_MAX_RANK * 2);
  if (!m2i_ir_node_attr_ints (ctx->node, key, v, G_N_ELEMENTS (v), &n, error))
    return FALSE;
  for (gint i = 0; i < n; i++)
    bits[i] = v[i] != 0;
  return TRUE;
}

static gboolean
strided_slice_infer (M2iOpContext *ctx, GError **error)
{
  if (!check_n_inputs (ctx, 3, 4, error))
    return FALSE;
  const M2iShape *in = &ctx->inputs[0].shape;
  gint64 begin[M2I_MAX_RANK * 2], end[M2I_MAX_RANK * 2], stride[M2I_MAX_RANK * 2];
  gint nb, ne, ns;
  if (!const_ints (ctx, 1, "begin", begin, G_N_ELEMENTS (begin), &nb, error) ||
      !const_ints (ctx, 2, "end", end, G_N_ELEMENTS (end), &ne, error))
    return FALSE;
  if (ctx->n_inputs == 4) {
    if (!const_ints (ctx, 3, "stride", stride, G_N_ELEMENTS (stride), &ns, error))
      return FALSE;
  } else {
    ns = nb;
    for (gint i = 0; i < ns; i++)
      stride[i] = 1;
  }
  if (nb != ne || nb != ns) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "begin, end and stride have %d, %d and %d values (must be equal)", nb, ne, ns);
    return FALSE;
  }
  gboolean bmask[M2I_MAX_RANK * 2], emask[M2I_MAX_RANK * 2], newax[M2I_MAX_RANK * 2],
      shrink[M2I_MAX_RANK * 2], ellipsis[M2I_MAX_RANK * 2];
  if (!mask_bits (ctx, "begin_mask", bmask, error) || !mask_bits (ctx, "end_mask", emask, error) ||
      !mask_bits (ctx, "new_axis_mask", newax, error) ||
      !mask_bits (ctx, "shrink_axis_mask", shrink, error) ||
      !mask_bits (ctx, "ellipsis_mask", ellipsis, error))
    return FALSE;

  gint64 in_strides[M2I_MAX_RANK];
  gint64 s = 1;
  for (gint a = in->rank - 1; a >= 0; a--) {
    in_strides[a] = s;
    s *= in->dims[a];
  }
  /* how many input axes the entries after an ellipsis consume */
  gint n_ellipsis = 0, consuming = 0;
  for (gint j = 0; j < nb; j++) {
    n_ellipsis += ellipsis[j];
    if (!ellipsis[j] && !newax[j])
      consuming++;
  }
  if (n_ellipsis > 1 || consuming > in->rank) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node, n_ellipsis > 1 ?
        "more than one ellipsis in ellipsis_mask" :
        "begin/end address %d axes, the input has %d", consuming, in->rank);
    return FALSE;
  }
  SlicePlan plan = { 0 };
  M2iShape out = { 0 };
  gint a = 0;                    /* input axis */
  for (gint j = 0; j <= nb; j++) {
    gint whole = 0;              /* input axes copied whole at this point */
    if (j == nb)
      whole = in->rank - a;
    else if (ellipsis[j]) {
      /* entries after j that consume axes */
      gint after = 0;
      for (gint k = j + 1; k < nb; k++)
        after += !newax[k] && !ellipsis[k];
      whole = in->rank - a - after;
    }
    for (gint w = 0; w < whole; w++, a++) {
      if (out.rank == M2I_MAX_RANK)
        goto too_many;
      plan.count[out.rank] = in->dims[a];
      plan.step[out.rank] = in_strides[a];
      out.dims[out.rank++] = in->dims[a];
    }
    if (j == nb || ellipsis[j])
      continue;
    if (newax[j]) {
      if (out.rank == M2I_MAX_RANK)
        goto too_many;
      plan.count[out.rank] = 1;
      plan.step[out.rank] = 0;
      out.dims[out.rank++] = 1;
      continue;
    }
    gint64 dim = in->dims[a], st = stride[j];
    if (shrink[j]) {
      gint64 b = begin[j] < 0 ? begin[j] + dim : begin[j];
      if (b < 0 || b >= dim) {
        m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
            "shrunk axis %d: index %" G_GINT64_FORMAT " is outside [0,%" G_GINT64_FORMAT ")",
            a, begin[j], dim);
        return FALSE;
      }
      plan.start += b * in_strides[a];
      a++;
      continue;
    }
    if (st == 0) {
      m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node, "stride 0 on axis %d", a);
      return FALSE;
    }
    /* begin, end and stride come from the file: any gint64. The spans are
     * clamped to the axis first, and a length of 2 or more means |stride|
     * < dim, so nothing below can overflow. */
    gint64 b, e, len;
    if (st > 0) {
      b = bmask[j] ? 0 : begin[j] < 0 ? begin[j] + dim : begin[j];
      e = emask[j] ? dim : end[j] < 0 ? end[j] + dim : end[j];
      b = CLAMP (b, 0, dim);
      e = CLAMP (e, 0, dim);
      len = e > b ? 1 + (e - b - 1) / st : 0;
    } else {
      b = bmask[j] ? dim - 1 : begin[j] < 0 ? begin[j] + dim : begin[j];
      e = emask[j] ? -1 : end[j] < 0 ? end[j] + dim : end[j];
      b = CLAMP (b, -1, dim - 1);
      e = CLAMP (e, -1, dim - 1);
      len = b > e ? 1 + (b - e - 1) / (st == G_MININT64 ? G_MAXINT64 : -st) : 0;
    }
    if (out.rank == M2I_MAX_RANK)
      goto too_many;
    if (len)
      plan.start += b * in_strides[a];
    plan.count[out.rank] = len;
    plan.step[out.rank] = len > 1 ? st * in_strides[a] : 0;
    out.dims[out.rank++] = len;
    a++;
  }
  plan.rank = out.rank;
  ctx->state = g_memdup2 (&plan, sizeof plan);
  return set_output (ctx, ctx->inputs[0].type, &out, error);
too_many:
  m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, ctx->node,
      "output rank exceeds %d", M2I_MAX_RANK);
  return FALSE;
}

static gboolean
strided_slice_execute (M2iOpContext *ctx, GError **error)
{
  const SlicePlan *p = ctx->state;
  gint64 numel = m2i_shape_numel (&ctx->outputs[0].shape);
  gsize es = m2i_element_type_size (ctx->outputs[0].type);
  const guint8 *src = ctx->inputs[0].data;
  guint8 *dst = ctx->outputs[0].data;
  gint64 idx[M2I_MAX_RANK] = { 0 };
  gint64 off = p->start;
  for (gint64 o = 0; o < numel; o++) {
    memcpy (dst + o * es, src + off * es, es);
    /* odometer over the output axes, last fastest */
    for (gint k = p->rank - 1; k >= 0; k--) {
      off += p->step[k];
      if (++idx[k] < p->count[k])
        break;
      off -= p->step[k] * p->count[k];
      idx[k] = 0;
    }
  }
  return TRUE;
}

static const M2iOpKernel strided_slice_kernel = {
  "StridedSlice", "opset1", strided_slice_infer, strided_slice_execute, g_free
};

/* ---- Gather-1, -7, -8 ----------------------------------------------------- */

/* Indices are read at run time, any integer type; negative ones count from
 * the end (Gather-8's rule, which OpenVINO's reference applies to every
 * version). An index outside [-d, d) gives zeros in Gather-8 (its spec's
 * example 7) and stops the inference with an error in Gather-1 and -7,
 * whose specs leave it undefined. */
typedef struct {
  gint64 batch, outer, n_idx, inner, axis_dim;
  gboolean zero_out_of_range;
} GatherPlan;

static gboolean
gather_infer (M2iOpContext *ctx, GError **error)
{
  if (!check_n_inputs (ctx, 3, 3, error))
    return FALSE;
  const M2iTensor *data = &ctx->inputs[0], *indices = &ctx->inputs[1];
  if (!ir_k_is_integer_type (indices->type)) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "indices must be integers, not %s", m2i_element_type_to_string (indices->type));
    return FALSE;
  }
  gint64 axis_v[1], batch_dims64;
  gint n, axis, batch_dims;
  if (!const_ints (ctx, 2, "axis", axis_v, 1, &n, error))
    return FALSE;
  if (n != 1) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node, "axis must be one value");
    return FALSE;
  }
  gchar buf[16];
  const char *v = ir_opset_resolve ("Gather", m2i_ir_node_get_version (ctx->node), buf);
  gboolean v1 = !strcmp (v, "opset1"), v7 = !strcmp (v, "opset7");
  if (!m2i_ir_node_attr_int (ctx->node, "batch_dims", 0, &batch_dims64, error))
    return FALSE;
  if (v1)
    batch_dims64 = 0;
  if (!norm_axis (ctx, axis_v[0], data->shape.rank, &axis, error))
    return FALSE;
  gint lim = MIN (data->shape.rank, indices->shape.rank);
  if (batch_dims64 < -lim || batch_dims64 > lim) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "batch_dims %" G_GINT64_FORMAT " is outside [%d, %d] (data rank %d, indices rank %d)",
        batch_dims64, -lim, lim, data->shape.rank, indices->shape.rank);
    return FALSE;
  }
  if (batch_dims64 < 0)
    batch_dims64 += indices->shape.rank;
  if (batch_dims64 > axis) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "batch_dims %" G_GINT64_FORMAT " must not exceed the axis %d", batch_dims64, axis);
    return FALSE;
  }
  batch_dims = (gint) batch_dims64;
  GatherPlan plan = { 1, 1, 1, 1, data->shape.dims[axis], !v1 && !v7 };
  M2iShape out = { 0 };
  for (gint a = 0; a < batch_dims; a++) {
    if (data->shape.dims[a] != indices->shape.dims[a]) {
      g_autofree gchar *ds = m2i_shape_to_string (&data->shape);
      g_autofree gchar *is = m2i_shape_to_string (&indices->shape);
      m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
          "batch dimension %d differs between the data %s and the indices %s", a, ds, is);
      return FALSE;
    }
    plan.batch *= data->shape.dims[a];
  }
  for (gint a = batch_dims; a < axis; a++)
    plan.outer *= data->shape.dims[a];
  for (gint a = batch_dims; a < indices->shape.rank; a++)
    plan.n_idx *= indices->shape.dims[a];
  for (gint a = axis + 1; a < data->shape.rank; a++)
    plan.inner *= data->shape.dims[a];
  if (axis + (indices->shape.rank - batch_dims) + (data->shape.rank - axis - 1) > M2I_MAX_RANK) {
    m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, ctx->node,
        "output rank exceeds %d", M2I_MAX_RANK);
    return FALSE;
  }
  for (gint a = 0; a < axis; a++)
    out.dims[out.rank++] = data->shape.dims[a];
  for (gint a = batch_dims; a < indices->shape.rank; a++)
    out.dims[out.rank++] = indices->shape.dims[a];
  for (gint a = axis + 1; a < data->shape.rank; a++)
    out.dims[out.rank++] = data->shape.dims[a];
  ctx->state = g_memdup2 (&plan, sizeof plan);
  return set_output (ctx, data->type, &out, error);
}

static gboolean
gather_execute (M2iOpContext *ctx, GError **error)
{
  const GatherPlan *p = ctx->state;
  gsize es = m2i_element_type_size (ctx->outputs[0].type);
  gsize row = p->inner * es;
  const guint8 *data = ctx->inputs[0].data;
  const M2iTensor *indices = &ctx->inputs[1];
  guint8 *out = ctx->outputs[0].data;
  for (gint64 b = 0; b < p->batch; b++) {
    for (gint64 j = 0; j < p->n_idx; j++) {
      gint64 pos = b * p->n_idx + j, raw = ir_k_index_at (indices, pos), idx = raw;
      if (idx < 0)
        idx += p->axis_dim;
      gboolean inside = idx >= 0 && idx < p->axis_dim;
      if (!inside && !p->zero_out_of_range)
        return ir_k_norm_index (ctx, raw, p->axis_dim, TRUE, "index", pos, &idx, error);
      for (gint64 o = 0; o < p->outer; o++) {
        guint8 *dst = out + ((b * p->outer + o) * p->n_idx + j) * row;
        if (inside)
          memcpy (dst, data + ((b * p->outer + o) * p->axis_dim + idx) * row, row);
        else
          memset (dst, 0, row);
      }
    }
  }
  return TRUE;
}

static const M2iOpKernel gather_kernel = {
  "Gather", "opset1 opset7 opset8", gather_infer, gather_execute, g_free
};

/* ---- registration --------------------------------------------------------- */

void
ir_register_structural_kernels (M2iOpRegistry *r)
{
  static const M2iOpKernel *const all[] = {
    &parameter_kernel, &const_kernel, &result_kernel, &reshape_kernel, &squeeze_kernel,
    &unsqueeze_kernel, &concat_kernel, &transpose_kernel, &convert_kernel, &shapeof_kernel,
    &strided_slice_kernel, &gather_kernel,
  };
  for (guint i = 0; i < G_N_ELEMENTS (all); i++)
    m2i_op_registry_add (r, all[i]);
}

gboolean
ir_kernel_is_view (const M2iOpKernel *k, const M2iOpContext *ctx)
{
  if (k == &reshape_kernel || k == &squeeze_kernel || k == &unsqueeze_kernel)
    return TRUE;
  return k == &convert_kernel && ctx->inputs[0].type == ctx->outputs[0].type &&
      GPOINTER_TO_INT (ctx->state) != M2I_ET_F16;
}

gboolean
ir_kernel_is_concat (const M2iOpKernel *k)
{
  return k == &concat_kernel;
}

gboolean
ir_kernel_is_shape_only (const M2iOpKernel *k)
{
  return k == &shapeof_kernel;
}
