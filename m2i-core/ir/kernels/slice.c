/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Slice-8: data[start:stop:step] on the axes of the optional `axes` input
 * (default 0, 1, ...; negative count from the end), the others whole, as
 * Python slices do: negative start/stop count from the end, values past
 * the ends are clamped (INT64_MAX / INT64_MIN mean "to the end"), a
 * negative step walks backwards, step 0 is an error. start, stop, step and
 * axes must be constant (they set the output's shape). Any element type.
 *
 * execute() walks output rows (all axes but the last); a row with step 1
 * on the last axis is one memcpy.
 */
#include "kernels-private.h"

#include <string.h>

typedef struct {
  gint rank;
  gsize es;
  gint64 count[M2I_MAX_RANK];          /* output dims */
  gint64 step[M2I_MAX_RANK];           /* input elements per output step */
  gint64 start;                        /* input element of output element 0 */
} SlicePlan;

static gboolean
slice_infer (M2iOpContext *ctx, GError **error)
{
  if (!ir_k_check_arity (ctx, 4, 5, 1, 1, error) ||
      !ir_k_check_rank (ctx, 0, 1, M2I_MAX_RANK, error))
    return FALSE;
  const M2iShape *in = &ctx->inputs[0].shape;
  gint64 start[M2I_MAX_RANK], stop[M2I_MAX_RANK], step[M2I_MAX_RANK], axes[M2I_MAX_RANK];
  gint ns, ne, np, na;
  if (!ir_k_const_ints (ctx, 1, start, M2I_MAX_RANK, &ns, error) ||
      !ir_k_const_ints (ctx, 2, stop, M2I_MAX_RANK, &ne, error) ||
      !ir_k_const_ints (ctx, 3, step, M2I_MAX_RANK, &np, error))
    return FALSE;
  if (ctx->n_inputs == 5) {
    if (!ir_k_const_ints (ctx, 4, axes, M2I_MAX_RANK, &na, error))
      return FALSE;
  } else {
    na = ns;
    for (gint i = 0; i < na; i++)
      axes[i] = i;
  }
  if (ns != ne || ns != np || ns != na || ns > in->rank) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "start, stop, step and axes have %d, %d, %d and %d values (must be equal, at most "
        "the data's rank %d)", ns, ne, np, na, in->rank);
    return FALSE;
  }
  SlicePlan p = { in->rank, m2i_element_type_size (ctx->inputs[0].type) };
  M2iShape out = *in;
  gint64 stride[M2I_MAX_RANK], s = 1;
  for (gint d = in->rank - 1; d >= 0; d--) {
    stride[d] = s;
    s *= in->dims[d];
    p.count[d] = in->dims[d];
    p.step[d] = stride[d];
  }
  gboolean seen[M2I_MAX_RANK] = { FALSE };
  for (gint i = 0; i < ns; i++) {
    gint64 a;
    if (!ir_k_axis (ctx, axes[i], in->rank, TRUE, "axis", &a, error))
      return FALSE;
    if (seen[a] || step[i] == 0) {
      m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node, seen[a] ?
          "axis %" G_GINT64_FORMAT " is sliced twice" :
          "step 0 on axis %" G_GINT64_FORMAT " (steps must not be 0)", axes[i]);
      return FALSE;
    }
    seen[a] = TRUE;
    gint64 dim = in->dims[a], b = start[i], e = stop[i], st = step[i], len;
    if (b < 0)
      b += dim;
    if (e < 0)
      e += dim;
    if (st > 0) {
      b = CLAMP (b, 0, dim);
      e = CLAMP (e, 0, dim);
      len = e > b ? (e - b - 1) / st + 1 : 0;
    } else {
      b = CLAMP (b, -1, dim - 1);
      e = CLAMP (e, -1, dim - 1);
      len = b > e ? (b - e - 1) / -st + 1 : 0;
    }
    out.dims[a] = len;
    p.count[a] = len;
    p.step[a] = st * stride[a];
    if (len)
      p.start += b * stride[a];
  }
  ctx->outputs[0].type = ctx->inputs[0].type;
  ctx->outputs[0].shape = out;
  ctx->state = g_memdup2 (&p, sizeof p);
  return TRUE;
}

static gboolean
slice_execute (M2iOpContext *ctx, GError **error)
{
  const SlicePlan *p = ctx->state;
  gint64 numel = m2i_shape_numel (&ctx->outputs[0].shape);
  if (numel == 0)
    return TRUE;
  gsize es = p->es;
  const guint8 *src = ctx->inputs[0].data;
  guint8 *dst = ctx->outputs[0].data;
  gint l = p->rank - 1;
  gint64 row = p->count[l], step = p->step[l];
  gint64 idx[M2I_MAX_RANK] = { 0 };
  gint64 off = p->start;
  for (gint64 r = 0; r < numel / row; r++, dst += row * es) {
    if (step == 1) {
      memcpy (dst, src + off * es, row * es);
    } else {
      for (gint64 i = 0; i < row; i++)
        memcpy (dst + i * es, src + (off + i * step) * es, es);
    }
    /* odometer over the outer output axes */
    for (gint d = l - 1; d >= 0; d--) {
      off += p->step[d];
      if (++idx[d] < p->count[d])
        break;
      off -= p->step[d] * p->count[d];
      idx[d] = 0;
    }
  }
  return TRUE;
}

const M2iOpKernel ir_kernel_slice = { "Slice", "opset8", slice_infer, slice_execute, g_free };
