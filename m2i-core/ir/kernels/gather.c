/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* GatherND-5, GatherND-8 and GatherElements-6: gathers by index tuples and
 * by per-element indices, any element type (moved as bytes), indices of
 * any integer type read at run time.
 *
 * GatherND: after `batch_dims` leading dimensions shared by data and
 * indices (equal, or 1 on one side: broadcast), each tuple of the last
 * indices axis (length k) addresses a slice data[b..., i_0, ..., i_{k-1},
 * :, ...]; the output is indices.shape[:-1] + data.shape[batch_dims + k:],
 * with the batch dimensions kept (-8) or multiplied into one (-5).
 *
 * GatherElements: out[..., j, ...] = data[..., indices[..., j, ...], ...]
 * along `axis`; indices have data's shape except along the axis.
 *
 * Indices count from the end when negative (GatherND-8 and GatherElements
 * as OpenVINO's reference; -5 as an extension). An index outside the
 * dimension stops the inference with an error that names the layer and the
 * index: it is data, checked before it addresses memory.
 */
#include "indices.h"

#include <string.h>

/* ---- GatherND ------------------------------------------------------------ */

typedef struct {
  gint nb, k;
  gint64 bdims[M2I_MAX_RANK];          /* output batch dims */
  gint64 data_bstride[M2I_MAX_RANK];   /* elements; 0 where data is broadcast */
  gint64 idx_bstride[M2I_MAX_RANK];    /* tuples; 0 where indices are broadcast */
  gint64 batch;                        /* product of bdims */
  gint64 tuples;                       /* tuples per batch: prod indices.shape[nb:-1] */
  gint64 dim[M2I_MAX_RANK];            /* data dims nb .. nb+k-1 */
  gint64 stride[M2I_MAX_RANK];         /* and their element strides */
  gint64 slice;                        /* elements per gathered slice */
} GatherNDPlan;

static gboolean
gather_nd_infer (M2iOpContext *ctx, GError **error)
{
  if (!ir_k_check_arity (ctx, 2, 2, 1, 1, error) ||
      !ir_k_check_index_type (ctx, 1, "indices", error))
    return FALSE;
  const M2iShape *ds = &ctx->inputs[0].shape, *is = &ctx->inputs[1].shape;
  gint version = ir_k_op_version (ctx);
  gint64 b;
  if (!m2i_ir_node_attr_int (ctx->node, "batch_dims", 0, &b, error))
    return FALSE;
  if (ds->rank < 1 || is->rank < 1) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "data %s and indices %s must both have rank 1 or more",
        ir_k_shape_str (ds, 0), ir_k_shape_str (is, 1));
    return FALSE;
  }
  if (b < 0 || b >= MIN (ds->rank, is->rank)) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "batch_dims %" G_GINT64_FORMAT " must be in [0, %d) for data %s and indices %s", b,
        MIN (ds->rank, is->rank), ir_k_shape_str (ds, 0), ir_k_shape_str (is, 1));
    return FALSE;
  }
  GatherNDPlan p = { .nb = (gint) b, .batch = 1, .tuples = 1, .slice = 1 };
  gint64 k = is->dims[is->rank - 1];
  if (k < 1 || k > ds->rank - b) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "the last dimension of the indices %s (%" G_GINT64_FORMAT ") must be in [1, %"
        G_GINT64_FORMAT "] (data %s, batch_dims %" G_GINT64_FORMAT ")", ir_k_shape_str (is, 0),
        k, ds->rank - b, ir_k_shape_str (ds, 1), b);
    return FALSE;
  }
  p.k = (gint) k;
  gint64 dstride[M2I_MAX_RANK], istride[M2I_MAX_RANK];
  gint64 s = 1;
  for (gint a = ds->rank - 1; a >= 0; a--) {
    dstride[a] = s;
    s *= ds->dims[a];
  }
  s = 1;                               /* in tuples */
  for (gint a = is->rank - 2; a >= 0; a--) {
    istride[a] = s;
    s *= is->dims[a];
  }
  M2iShape out = { 0 };
  for (gint a = 0; a < p.nb; a++) {
    gint64 dd = ds->dims[a], id = is->dims[a];
    if (dd != id && dd != 1 && id != 1) {
      m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
          "batch dimension %d is %" G_GINT64_FORMAT " in the data %s and %" G_GINT64_FORMAT
          " in the indices %s: they must be equal or one of them 1", a, dd,
          ir_k_shape_str (ds, 0), id, ir_k_shape_str (is, 1));
      return FALSE;
    }
    p.bdims[a] = MAX (dd, id);
    if (dd == 0 || id == 0)
      p.bdims[a] = 0;
    p.data_bstride[a] = dd == 1 ? 0 : dstride[a];
    p.idx_bstride[a] = id == 1 ? 0 : istride[a];
    p.batch *= p.bdims[a];
  }
  if (version != 5) {            /* -8 (and custom versions): batch dims kept */
    for (gint a = 0; a < p.nb; a++)
      out.dims[out.rank++] = p.bdims[a];
  } else if (p.nb > 0) {
    out.dims[out.rank++] = p.batch;
  }
  for (gint a = p.nb; a < is->rank - 1; a++) {
    out.dims[out.rank++] = is->dims[a];
    p.tuples *= is->dims[a];
  }
  for (gint t = 0; t < p.k; t++) {
    p.dim[t] = ds->dims[p.nb + t];
    p.stride[t] = dstride[p.nb + t];
  }
  for (gint a = p.nb + p.k; a < ds->rank; a++) {
    if (out.rank == M2I_MAX_RANK) {
      m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, ctx->node,
          "output rank exceeds %d", M2I_MAX_RANK);
      return FALSE;
    }
    out.dims[out.rank++] = ds->dims[a];
    p.slice *= ds->dims[a];
  }
  ctx->outputs[0].type = ctx->inputs[0].type;
  ctx->outputs[0].shape = out;
  ctx->state = g_memdup2 (&p, sizeof p);
  return TRUE;
}

static gboolean
gather_nd_execute (M2iOpContext *ctx, GError **error)
{
  const GatherNDPlan *p = ctx->state;
  const M2iTensor *idx = &ctx->inputs[1];
  gsize es = m2i_element_type_size (ctx->inputs[0].type);
  gsize row = p->slice * es;
  const guint8 *data = ctx->inputs[0].data;
  guint8 *out = ctx->outputs[0].data;
  for (gint64 bi = 0; bi < p->batch; bi++) {
    gint64 doff = 0, toff = 0, rem = bi;
    for (gint a = p->nb - 1; a >= 0; a--) {
      gint64 c = rem % p->bdims[a];
      rem /= p->bdims[a];
      doff += c * p->data_bstride[a];
      toff += c * p->idx_bstride[a];
    }
    for (gint64 j = 0; j < p->tuples; j++) {
      gint64 tuple = (toff + j) * p->k, off = doff;
      for (gint t = 0; t < p->k; t++) {
        gint64 v;
        if (!ir_k_norm_index (ctx, ir_k_index_at (idx, tuple + t), p->dim[t], TRUE,
                "index", tuple + t, &v, error))
          return FALSE;
        off += v * p->stride[t];
      }
      memcpy (out + (bi * p->tuples + j) * row, data + off * es, row);
    }
  }
  return TRUE;
}

const M2iOpKernel ir_kernel_gather_nd = {
  "GatherND", "opset5 opset8", gather_nd_infer, gather_nd_execute, g_free
};

/* ---- GatherElements ------------------------------------------------------ */

typedef struct {
  gint64 outer, n_idx, inner, axis_dim;
} GatherElementsPlan;

static gboolean
gather_elements_infer (M2iOpContext *ctx, GError **error)
{
  static const M2iElementType ints[] = { M2I_ET_I32, M2I_ET_I64 };
  if (!ir_k_check_arity (ctx, 2, 2, 1, 1, error) || !ir_k_check_type (ctx, 1, ints, 2, error))
    return FALSE;
  const M2iShape *ds = &ctx->inputs[0].shape, *is = &ctx->inputs[1].shape;
  gint64 axis;
  if (!ir_k_require_attrs (ctx, error, "axis", NULL) ||
      !m2i_ir_node_attr_int (ctx->node, "axis", 0, &axis, error))
    return FALSE;
  gboolean ok = ds->rank >= 1 && ds->rank == is->rank;
  if (ok && !ir_k_axis (ctx, axis, ds->rank, TRUE, "axis", &axis, error))
    return FALSE;
  for (gint a = 0; ok && a < ds->rank; a++)
    ok = a == axis || ds->dims[a] == is->dims[a];
  if (!ok) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "indices %s must have the rank (>= 1) and the dimensions of the data %s except "
        "along the axis", ir_k_shape_str (is, 0), ir_k_shape_str (ds, 1));
    return FALSE;
  }
  GatherElementsPlan p = { 1, is->dims[axis], 1, ds->dims[axis] };
  for (gint a = 0; a < axis; a++)
    p.outer *= ds->dims[a];
  for (gint a = (gint) axis + 1; a < ds->rank; a++)
    p.inner *= ds->dims[a];
  ctx->outputs[0].type = ctx->inputs[0].type;
  ctx->outputs[0].shape = *is;
  ctx->state = g_memdup2 (&p, sizeof p);
  return TRUE;
}

#define GATHER_ELEMENTS_LOOP(T) do { \
    const T *src = ctx->inputs[0].data; \
    T *dst = ctx->outputs[0].data; \
    for (gint64 o = 0; o < p->outer; o++) \
      for (gint64 j = 0; j < p->n_idx; j++) \
        for (gint64 i = 0; i < p->inner; i++) { \
          gint64 pos = (o * p->n_idx + j) * p->inner + i, v; \
          if (!ir_k_norm_index (ctx, ir_k_index_at (idx, pos), p->axis_dim, TRUE, \
                  "index", pos, &v, error)) \
            return FALSE; \
          dst[pos] = src[(o * p->axis_dim + v) * p->inner + i]; \
        } \
  } while (0)

static gboolean
gather_elements_execute (M2iOpContext *ctx, GError **error)
{
  const GatherElementsPlan *p = ctx->state;
  const M2iTensor *idx = &ctx->inputs[1];
  switch (m2i_element_type_size (ctx->inputs[0].type)) {
    case 1: GATHER_ELEMENTS_LOOP (guint8); break;
    case 2: GATHER_ELEMENTS_LOOP (guint16); break;
    case 4: GATHER_ELEMENTS_LOOP (guint32); break;
    default: GATHER_ELEMENTS_LOOP (guint64); break;
  }
  return TRUE;
}

const M2iOpKernel ir_kernel_gather_elements = {
  "GatherElements", "opset6", gather_elements_infer, gather_elements_execute, g_free
};
