/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ScatterUpdate-3, ScatterNDUpdate-3/-15 and ScatterElementsUpdate-3/-12:
 * a copy of the data with slices or elements replaced (or combined, with
 * the -12 and -15 reductions) at positions given by indices.
 *
 * ScatterUpdate: data[..., indices[j...], ...] = updates[..., j..., ...]
 * along `axis` (a constant input); updates are data.shape[:axis] +
 * indices.shape + data.shape[axis+1:].
 * ScatterNDUpdate: each tuple of the last indices axis (length k) addresses
 * a slice data[i_0, ..., i_{k-1}, :, ...]; updates are indices.shape[:-1] +
 * data.shape[k:]. -15 combines with `reduction` none, sum, sub, prod, min,
 * max (on booleans sum, sub, prod are OR, XOR, AND).
 * ScatterElementsUpdate: output[..., indices[p], ...] (axis replaced) =
 * updates[p] for each position p of the indices; -12 adds `reduction`
 * none, sum, prod, min, max, mean and `use_init_val` (whether the data's
 * value takes part; with false, an element some index reaches starts from
 * its first update). The mean of integers rounds toward -inf.
 *
 * Updates apply in the order of the indices' elements, so with repeated
 * indices the last one wins (the specs leave the order undefined).
 * Negative indices count from the end; one outside the dimension stops the
 * inference with an error naming the layer and the element. Data may be
 * any element type without reduction; reductions take boolean, the 8- to
 * 64-bit integers, f32 and f64.
 */
#include "indices.h"

#include <math.h>
#include <string.h>

typedef enum {
  RED_NONE, RED_SUM, RED_SUB, RED_PROD, RED_MIN, RED_MAX, RED_MEAN,
} Reduction;

/* dst[i] = reduce (dst[i], src[i]) for @n elements of one type. */
#define REDUCE_LOOP(T, SUM, SUB, PROD, MIN_, MAX_) do { \
    T *d = dst; \
    const T *s = src; \
    for (gint64 i = 0; i < n; i++) { \
      T a = d[i], b = s[i]; \
      switch (red) { \
        case RED_SUM: case RED_MEAN: d[i] = SUM; break; \
        case RED_SUB: d[i] = SUB; break; \
        case RED_PROD: d[i] = PROD; break; \
        case RED_MIN: d[i] = MIN_; break; \
        case RED_MAX: d[i] = MAX_; break; \
        default: d[i] = b; break; \
      } \
    } \
  } while (0)

/* Integers wrap around, as the element-wise kernels: computed in an
 * unsigned type at least as wide as int (narrower ones would be promoted
 * to int, whose overflow is undefined). */
#define REDUCE_INT(T, U) REDUCE_LOOP (T, (T) ((U) a + (U) b), (T) ((U) a - (U) b), \
    (T) ((U) a * (U) b), MIN (a, b), MAX (a, b))
/* min and max take a NaN update (OpenVINO's reference, std::min/max,
 * leaves NaN to the order of the operands). */
#define REDUCE_FLOAT(T) REDUCE_LOOP (T, a + b, a - b, a * b, \
    isnan (b) || b < a ? b : a, isnan (b) || b > a ? b : a)

static void
reduce_into (gpointer dst, gconstpointer src, gint64 n, M2iElementType type, Reduction red)
{
  if (red == RED_NONE) {
    memcpy (dst, src, n * m2i_element_type_size (type));
    return;
  }
  switch (type) {
    case M2I_ET_F32: REDUCE_FLOAT (float); break;
    case M2I_ET_F64: REDUCE_FLOAT (double); break;
    case M2I_ET_I8: REDUCE_INT (gint8, guint32); break;
    case M2I_ET_U8: REDUCE_INT (guint8, guint32); break;
    case M2I_ET_I16: REDUCE_INT (gint16, guint32); break;
    case M2I_ET_U16: REDUCE_INT (guint16, guint32); break;
    case M2I_ET_I32: REDUCE_INT (gint32, guint32); break;
    case M2I_ET_U32: REDUCE_INT (guint32, guint32); break;
    case M2I_ET_I64: REDUCE_INT (gint64, guint64); break;
    case M2I_ET_U64: REDUCE_INT (guint64, guint64); break;
    case M2I_ET_BOOLEAN:
      REDUCE_LOOP (guint8, a || b, (a != 0) != (b != 0), a && b, a && b, a || b);
      break;
    default:
      g_assert_not_reached ();
  }
}

/* out = floor (out / count) for integers, out / count for floats. */
static void
mean_divide (gpointer out, gint64 i, gint64 count, M2iElementType type)
{
#define DIV_INT(T) do { \
    T *p = (T *) out + i; \
    gint64 v = (gint64) *p, q = v / count; \
    if ((v % count) && v < 0) \
      q--; \
    *p = (T) q; \
  } while (0)
  switch (type) {
    case M2I_ET_F32: ((float *) out)[i] /= (float) count; break;
    case M2I_ET_F64: ((double *) out)[i] /= (double) count; break;
    case M2I_ET_I8: DIV_INT (gint8); break;
    case M2I_ET_U8: DIV_INT (guint8); break;
    case M2I_ET_I16: DIV_INT (gint16); break;
    case M2I_ET_U16: DIV_INT (guint16); break;
    case M2I_ET_I32: DIV_INT (gint32); break;
    case M2I_ET_U32: DIV_INT (guint32); break;
    case M2I_ET_I64: DIV_INT (gint64); break;
    case M2I_ET_U64: ((guint64 *) out)[i] /= (guint64) count; break;
    default: g_assert_not_reached ();
  }
#undef DIV_INT
}

static const char *const reduction_names[] = {
  "none", "sum", "sub", "prod", "min", "max", "mean",
};

/* Reads the `reduction` attribute of ScatterNDUpdate-15 (@elements FALSE:
 * none sum sub prod min max) or ScatterElementsUpdate-12 (TRUE: none sum
 * prod min max mean) into *red; checks the data type supports it. */
static gboolean
reduction_attr (const M2iOpContext *ctx, gboolean elements, Reduction *red, GError **error)
{
  static const char *const nd[] = { "none", "sum", "sub", "prod", "min", "max", NULL };
  static const char *const el[] = { "none", "sum", "prod", "min", "max", "mean", NULL };
  static const Reduction nd_map[] = { RED_NONE, RED_SUM, RED_SUB, RED_PROD, RED_MIN, RED_MAX };
  static const Reduction el_map[] = { RED_NONE, RED_SUM, RED_PROD, RED_MIN, RED_MAX, RED_MEAN };
  gint which;
  if (!m2i_ir_node_attr_enum (ctx->node, "reduction", "none", elements ? el : nd, &which, error))
    return FALSE;
  *red = elements ? el_map[which] : nd_map[which];
  M2iElementType t = ctx->inputs[0].type;
  gboolean ok = *red == RED_NONE || t == M2I_ET_F32 || t == M2I_ET_F64 ||
      (t >= M2I_ET_U8 && t <= M2I_ET_I64) || (t == M2I_ET_BOOLEAN && *red != RED_MEAN);
  if (!ok) {
    m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, ctx->node,
        "reduction %s on %s data is not supported", reduction_names[*red],
        m2i_element_type_to_string (t));
    return FALSE;
  }
  return TRUE;
}

/* Data, updates of the data's type, integer indices. */
static gboolean
check_inputs (const M2iOpContext *ctx, gint updates, GError **error)
{
  if (!ir_k_check_index_type (ctx, 1, "indices", error))
    return FALSE;
  if (ctx->inputs[updates].type != ctx->inputs[0].type) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "updates are %s, the data %s: they must have the same element type",
        m2i_element_type_to_string (ctx->inputs[updates].type),
        m2i_element_type_to_string (ctx->inputs[0].type));
    return FALSE;
  }
  ctx->outputs[0].type = ctx->inputs[0].type;
  ctx->outputs[0].shape = ctx->inputs[0].shape;
  return TRUE;
}

static gboolean
updates_shape_error (const M2iOpContext *ctx, const M2iShape *want, GError **error)
{
  m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
      "updates have shape %s; data %s and indices %s need %s",
      ir_k_shape_str (&ctx->inputs[2].shape, 0), ir_k_shape_str (&ctx->inputs[0].shape, 1),
      ir_k_shape_str (&ctx->inputs[1].shape, 2), ir_k_shape_str (want, 3));
  return FALSE;
}

static void
copy_data (M2iOpContext *ctx)
{
  if (ctx->outputs[0].data != ctx->inputs[0].data)
    memcpy (ctx->outputs[0].data, ctx->inputs[0].data, m2i_tensor_nbytes (&ctx->outputs[0]));
}

/* ---- ScatterUpdate-3 ---------------------------------------------------- */

typedef struct {
  gint64 outer, n_idx, inner, axis_dim;
} ScatterPlan;

static gboolean
scatter_update_infer (M2iOpContext *ctx, GError **error)
{
  if (!ir_k_check_arity (ctx, 4, 4, 1, 1, error) || !check_inputs (ctx, 2, error))
    return FALSE;
  const M2iShape *ds = &ctx->inputs[0].shape, *is = &ctx->inputs[1].shape;
  gint64 axis;
  if (ds->rank < 1) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "data must have rank 1 or more");
    return FALSE;
  }
  if (!ir_k_const_axis (ctx, 3, ds->rank, &axis, error))
    return FALSE;
  M2iShape want = { 0 };
  if (ds->rank - 1 + is->rank > M2I_MAX_RANK) {
    m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, ctx->node,
        "updates of rank %d exceed %d", ds->rank - 1 + is->rank, M2I_MAX_RANK);
    return FALSE;
  }
  ScatterPlan p = { 1, 1, 1, ds->dims[axis] };
  for (gint a = 0; a < axis; a++) {
    want.dims[want.rank++] = ds->dims[a];
    p.outer *= ds->dims[a];
  }
  for (gint a = 0; a < is->rank; a++) {
    want.dims[want.rank++] = is->dims[a];
    p.n_idx *= is->dims[a];
  }
  for (gint a = (gint) axis + 1; a < ds->rank; a++) {
    want.dims[want.rank++] = ds->dims[a];
    p.inner *= ds->dims[a];
  }
  if (!m2i_shape_equal (&want, &ctx->inputs[2].shape))
    return updates_shape_error (ctx, &want, error);
  ctx->state = g_memdup2 (&p, sizeof p);
  return TRUE;
}

static gboolean
scatter_update_execute (M2iOpContext *ctx, GError **error)
{
  const ScatterPlan *p = ctx->state;
  const M2iTensor *idx = &ctx->inputs[1];
  gsize row = p->inner * m2i_element_type_size (ctx->inputs[0].type);
  const guint8 *upd = ctx->inputs[2].data;
  guint8 *out = ctx->outputs[0].data;
  /* check every index before writing anything */
  for (gint64 j = 0; j < p->n_idx; j++) {
    gint64 v;
    if (!ir_k_norm_index (ctx, ir_k_index_at (idx, j), p->axis_dim, TRUE, "index", j, &v,
            error))
      return FALSE;
  }
  copy_data (ctx);
  for (gint64 o = 0; o < p->outer; o++)
    for (gint64 j = 0; j < p->n_idx; j++) {
      gint64 v = ir_k_index_at (idx, j);
      if (v < 0)
        v += p->axis_dim;
      memcpy (out + (o * p->axis_dim + v) * row, upd + (o * p->n_idx + j) * row, row);
    }
  return TRUE;
}

const M2iOpKernel ir_kernel_scatter_update = {
  "ScatterUpdate", "opset3", scatter_update_infer, scatter_update_execute, g_free
};

/* ---- ScatterNDUpdate-3, -15 ---------------------------------------------- */

typedef struct {
  Reduction red;
  gint k;
  gint64 tuples, slice;
  gint64 dim[M2I_MAX_RANK], stride[M2I_MAX_RANK];
} ScatterNDPlan;

static gboolean
scatter_nd_infer (M2iOpContext *ctx, GError **error)
{
  static const M2iElementType ints[] = { M2I_ET_I32, M2I_ET_I64 };
  if (!ir_k_check_arity (ctx, 3, 3, 1, 1, error) || !check_inputs (ctx, 2, error) ||
      !ir_k_check_type (ctx, 1, ints, 2, error))
    return FALSE;
  const M2iShape *ds = &ctx->inputs[0].shape, *is = &ctx->inputs[1].shape;
  ScatterNDPlan p = { 0 };
  if (ir_k_op_version (ctx) != 3 && !reduction_attr (ctx, FALSE, &p.red, error))
    return FALSE;
  if (ds->rank < 1 || is->rank < 1 || is->dims[is->rank - 1] > ds->rank) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "data %s and indices %s must have rank 1 or more, the indices' last dimension at "
        "most the data's rank", ir_k_shape_str (ds, 0), ir_k_shape_str (is, 1));
    return FALSE;
  }
  p.k = (gint) is->dims[is->rank - 1];
  M2iShape want = { 0 };
  p.tuples = 1;
  p.slice = 1;
  for (gint a = 0; a < is->rank - 1; a++) {
    want.dims[want.rank++] = is->dims[a];
    p.tuples *= is->dims[a];
  }
  if (is->rank - 1 + ds->rank - p.k > M2I_MAX_RANK) {
    m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, ctx->node,
        "updates of rank %d exceed %d", is->rank - 1 + ds->rank - p.k, M2I_MAX_RANK);
    return FALSE;
  }
  for (gint a = p.k; a < ds->rank; a++) {
    want.dims[want.rank++] = ds->dims[a];
    p.slice *= ds->dims[a];
  }
  gint64 s = p.slice;
  for (gint a = p.k - 1; a >= 0; a--) {
    p.dim[a] = ds->dims[a];
    p.stride[a] = s;
    s *= ds->dims[a];
  }
  const M2iShape *us = &ctx->inputs[2].shape;
  /* "If expected updates rank is 0D it can be a tensor with single element" */
  if (!m2i_shape_equal (&want, us) && !(want.rank == 0 && m2i_shape_numel (us) == 1))
    return updates_shape_error (ctx, &want, error);
  ctx->state = g_memdup2 (&p, sizeof p);
  return TRUE;
}

static gboolean
scatter_nd_execute (M2iOpContext *ctx, GError **error)
{
  const ScatterNDPlan *p = ctx->state;
  const M2iTensor *idx = &ctx->inputs[1];
  M2iElementType type = ctx->inputs[0].type;
  gsize es = m2i_element_type_size (type);
  const guint8 *upd = ctx->inputs[2].data;
  guint8 *out = ctx->outputs[0].data;
  for (gint64 j = 0; j < p->tuples * p->k; j++) {
    gint64 v;
    if (!ir_k_norm_index (ctx, ir_k_index_at (idx, j), p->dim[j % p->k], TRUE, "index", j,
            &v, error))
      return FALSE;
  }
  copy_data (ctx);
  for (gint64 j = 0; j < p->tuples; j++) {
    gint64 off = 0;
    for (gint t = 0; t < p->k; t++) {
      gint64 v = ir_k_index_at (idx, j * p->k + t);
      off += (v < 0 ? v + p->dim[t] : v) * p->stride[t];
    }
    reduce_into (out + off * es, upd + j * p->slice * es, p->slice, type, p->red);
  }
  return TRUE;
}

const M2iOpKernel ir_kernel_scatter_nd_update = {
  "ScatterNDUpdate", "opset3 opset15", scatter_nd_infer, scatter_nd_execute, g_free
};

/* ---- ScatterElementsUpdate-3, -12 ---------------------------------------- */

typedef struct {
  Reduction red;
  gboolean use_init;
  gint rank, axis;
  gint64 udims[M2I_MAX_RANK];          /* updates (= indices) dims */
  gint64 dstride[M2I_MAX_RANK];        /* data element strides */
  gint64 axis_dim, n_updates, n_data;
  gboolean counts;                     /* scratch: n_data gint32 counts */
} ScatterElementsPlan;

static gboolean
scatter_elements_infer (M2iOpContext *ctx, GError **error)
{
  if (!ir_k_check_arity (ctx, 4, 4, 1, 1, error) || !check_inputs (ctx, 2, error))
    return FALSE;
  const M2iShape *ds = &ctx->inputs[0].shape, *is = &ctx->inputs[1].shape;
  ScatterElementsPlan p = { 0 };
  gboolean v12 = ir_k_op_version (ctx) != 3;
  p.use_init = TRUE;
  if (v12 && (!reduction_attr (ctx, TRUE, &p.red, error) ||
          !m2i_ir_node_attr_bool (ctx->node, "use_init_val", TRUE, &p.use_init, error)))
    return FALSE;
  if (ds->rank < 1) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "data must have rank 1 or more");
    return FALSE;
  }
  gint64 axis;
  if (!ir_k_const_axis (ctx, 3, ds->rank, &axis, error))
    return FALSE;
  gboolean ok = is->rank == ds->rank && m2i_shape_equal (is, &ctx->inputs[2].shape);
  for (gint a = 0; ok && a < ds->rank; a++)
    ok = a == axis || is->dims[a] <= ds->dims[a];
  if (!ok) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "indices %s and updates %s must have one shape, of the data's rank, no larger than "
        "the data %s except along the axis", ir_k_shape_str (is, 0),
        ir_k_shape_str (&ctx->inputs[2].shape, 1), ir_k_shape_str (ds, 2));
    return FALSE;
  }
  p.rank = ds->rank;
  p.axis = (gint) axis;
  p.axis_dim = ds->dims[axis];
  gint64 s = 1;
  for (gint a = ds->rank - 1; a >= 0; a--) {
    p.udims[a] = is->dims[a];
    p.dstride[a] = s;
    s *= ds->dims[a];
  }
  p.n_data = s;
  p.n_updates = m2i_shape_numel (is);
  p.counts = p.red != RED_NONE && (!p.use_init || p.red == RED_MEAN);
  if (p.counts) {
    if (p.n_data > G_MAXINT32) {
      m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, ctx->node, "data too large");
      return FALSE;
    }
    ctx->scratch_bytes = (gsize) p.n_data * sizeof (gint32);
  }
  ctx->state = g_memdup2 (&p, sizeof p);
  return TRUE;
}

static gboolean
scatter_elements_execute (M2iOpContext *ctx, GError **error)
{
  const ScatterElementsPlan *p = ctx->state;
  const M2iTensor *idx = &ctx->inputs[1];
  M2iElementType type = ctx->inputs[0].type;
  gsize es = m2i_element_type_size (type);
  const guint8 *upd = ctx->inputs[2].data;
  guint8 *out = ctx->outputs[0].data;
  gint32 *count = ctx->scratch;
  for (gint64 j = 0; j < p->n_updates; j++) {
    gint64 v;
    if (!ir_k_norm_index (ctx, ir_k_index_at (idx, j), p->axis_dim, TRUE, "index", j, &v,
            error))
      return FALSE;
  }
  copy_data (ctx);
  if (p->counts)
    memset (count, 0, p->n_data * sizeof (gint32));
  gint64 pos[M2I_MAX_RANK] = { 0 };
  gint64 base = 0;                     /* data offset of pos with pos[axis] = 0 */
  for (gint64 j = 0; j < p->n_updates; j++) {
    gint64 v = ir_k_index_at (idx, j);
    if (v < 0)
      v += p->axis_dim;
    gint64 off = base + v * p->dstride[p->axis];
    if (p->counts && count[off]++ == 0 && !p->use_init)
      memcpy (out + off * es, upd + j * es, es);      /* the first update starts it */
    else
      reduce_into (out + off * es, upd + j * es, 1, type, p->red);
    for (gint a = p->rank - 1; a >= 0; a--) {
      if (a != p->axis)
        base += p->dstride[a];
      if (++pos[a] < p->udims[a])
        break;
      if (a != p->axis)
        base -= p->dstride[a] * p->udims[a];
      pos[a] = 0;
    }
  }
  if (p->red == RED_MEAN)
    for (gint64 i = 0; i < p->n_data; i++)
      if (count[i])
        mean_divide (out, i, count[i] + (p->use_init ? 1 : 0), type);
  return TRUE;
}

const M2iOpKernel ir_kernel_scatter_elements_update = {
  "ScatterElementsUpdate", "opset3 opset12", scatter_elements_infer, scatter_elements_execute,
  g_free
};
