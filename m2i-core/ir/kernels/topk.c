/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* TopK-1, -3, -11: the k largest (mode max) or smallest (min) elements of
 * every slice along `axis`, and their indices (i32 or i64,
 * index_element_type).
 *
 * Ranking is one total order: by value, then the lower index first, so the
 * result is the stable one TopK-11's `stable` asks for, whatever that
 * attribute says (the specs leave ties undefined otherwise). NaN ranks
 * above every number, as in torch.topk: first with mode max, last with
 * min. sort = value orders the k results best first, sort = index by
 * ascending index; sort = none (undefined order) is taken as value. k
 * larger than the axis is clamped to it (OpenVINO's shape inference); k
 * must be a constant today (a k computed at run time needs the runtime's
 * dynamic shapes). Each slice keeps its k best in a heap (n log k), so
 * large slices with small k cost little; slices are split over threads.
 */
#include "kernels-private.h"
#include "heap-sort.h"

#include <math.h>
#include <string.h>

typedef struct {
  double key;                /* the value, negated for mode min */
  gint64 ikey;               /* i64 data: the exact value (~value for min); else 0 */
  gint64 idx;
  gint nan;                  /* 1: NaN ranks first, -1: last, 0: a number */
} TopEntry;

/* > 0 when @a ranks below @b (the heap keeps the worst on top). */
static int
top_worse (const TopEntry *a, const TopEntry *b)
{
  if (a->nan != b->nan)
    return a->nan < b->nan ? 1 : -1;
  if (a->key != b->key)
    return a->key < b->key ? 1 : -1;
  if (a->ikey != b->ikey)
    return a->ikey < b->ikey ? 1 : -1;
  return (a->idx > b->idx) - (a->idx < b->idx);
}

M2I_K_HEAP (top, TopEntry, top_worse)

static int
by_index (const TopEntry *a, const TopEntry *b)
{
  return (a->idx > b->idx) - (a->idx < b->idx);
}

M2I_K_HEAP (top_index, TopEntry, by_index)

typedef struct {
  gint64 outer, n, inner, k;
  gboolean max, by_value;
  M2iElementType index_type;
} TopKState;

static gboolean
topk_infer (M2iOpContext *ctx, GError **error)
{
  static const char *const modes[] = { "max", "min", NULL };
  static const char *const sorts[] = { "value", "index", "none", NULL };
  static const char *const itypes[] = { "i32", "i64", NULL };
  static const M2iElementType types[] = {
    M2I_ET_F32, M2I_ET_F64, M2I_ET_I8, M2I_ET_U8, M2I_ET_I16, M2I_ET_U16, M2I_ET_I32,
    M2I_ET_U32, M2I_ET_I64,
  };
  if (!ir_k_check_arity (ctx, 2, 2, 1, 2, error) ||
      !ir_k_check_type (ctx, 0, types, G_N_ELEMENTS (types), error))
    return FALSE;
  gint mode, sort, itype;
  gint64 axis;
  const M2iShape *in = &ctx->inputs[0].shape;
  if (!ir_k_require_attrs (ctx, error, "axis", "mode", "sort", NULL) ||
      !m2i_ir_node_attr_int (ctx->node, "axis", 0, &axis, error) ||
      !m2i_ir_node_attr_enum (ctx->node, "mode", "max", modes, &mode, error) ||
      !m2i_ir_node_attr_enum (ctx->node, "sort", "value", sorts, &sort, error) ||
      !m2i_ir_node_attr_enum (ctx->node, "index_element_type", "i32", itypes, &itype, error))
    return FALSE;
  if (in->rank < 1) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "the input must have rank 1 or more");
    return FALSE;
  }
  if (!ir_k_axis (ctx, axis, in->rank, TRUE, "axis", &axis, error))
    return FALSE;
  gint64 k;
  gint nk;
  if (!ctx->inputs[1].data && m2i_shape_numel (&ctx->inputs[1].shape) == 1) {
    m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, ctx->node,
        "k (input 1) is computed at run time; only a constant k is supported (the output "
        "size would depend on the data)");
    return FALSE;
  }
  if (!ir_k_const_ints (ctx, 1, &k, 1, &nk, error))
    return FALSE;
  if (nk != 1 || k < 0) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "k must be one non-negative integer");
    return FALSE;
  }
  TopKState *s = g_new0 (TopKState, 1);
  s->outer = s->inner = 1;
  for (gint a = 0; a < axis; a++)
    s->outer *= in->dims[a];
  for (gint a = (gint) axis + 1; a < in->rank; a++)
    s->inner *= in->dims[a];
  s->n = in->dims[axis];
  s->k = MIN (k, s->n);
  s->max = mode == 0;
  s->by_value = sort != 1;
  s->index_type = itype ? M2I_ET_I64 : M2I_ET_I32;
  ctx->state = s;
  ctx->scratch_bytes = (gsize) ir_k_threads (ctx) * MAX (s->k, 1) * sizeof (TopEntry);
  M2iShape out = *in;
  out.dims[axis] = s->k;
  ctx->outputs[0].type = ctx->inputs[0].type;
  ctx->outputs[0].shape = out;
  if (ctx->n_outputs > 1) {
    ctx->outputs[1].type = s->index_type;
    ctx->outputs[1].shape = out;
  }
  return TRUE;
}

static inline double
value_at (const M2iTensor *t, gint64 i)
{
  switch (t->type) {
    case M2I_ET_F32: return ((const float *) t->data)[i];
    case M2I_ET_F64: return ((const double *) t->data)[i];
    case M2I_ET_I8: return ((const gint8 *) t->data)[i];
    case M2I_ET_U8: return ((const guint8 *) t->data)[i];
    case M2I_ET_I16: return ((const gint16 *) t->data)[i];
    case M2I_ET_U16: return ((const guint16 *) t->data)[i];
    case M2I_ET_I32: return ((const gint32 *) t->data)[i];
    case M2I_ET_U32: return ((const guint32 *) t->data)[i];
    default: return (double) ((const gint64 *) t->data)[i];
  }
}

typedef struct {
  const M2iOpContext *ctx;
  TopEntry *scratch;
} TopKJob;

static void
topk_slices (gint begin, gint end, gint slice, gpointer data)
{
  const TopKJob *j = data;
  const M2iOpContext *ctx = j->ctx;
  const TopKState *s = ctx->state;
  const M2iTensor *in = &ctx->inputs[0];
  gsize es = m2i_element_type_size (in->type);
  TopEntry *heap = j->scratch + (gsize) slice * MAX (s->k, 1);
  gboolean is64 = in->type == M2I_ET_I64;
  for (gint sl = begin; sl < end; sl++) {
    gint64 o = sl / s->inner, i = sl % s->inner;
    gint64 base = o * s->n * s->inner + i;
    gint64 count = 0;
    for (gint64 e = 0; e < s->n; e++) {
      gint64 pos = base + e * s->inner;
      TopEntry t = { 0, 0, e, 0 };
      double v = value_at (in, pos);
      if (isnan (v))
        t.nan = s->max ? 1 : -1;
      else
        t.key = s->max ? v : -v;
      if (is64) {
        /* a double holds i64 values to 2^53 only: ties of the key are
         * broken by the exact value (~v reverses the order for min) */
        gint64 x = ((const gint64 *) in->data)[pos];
        t.ikey = s->max ? x : ~x;
      }
      if (count < s->k)
        top_push (heap, &count, t);
      else if (top_worse (&t, &heap[0]) < 0) {
        heap[0] = t;
        top_sift_down (heap, 0, count);
      }
    }
    /* best first: the heap sort orders by top_worse ascending */
    top_sort (heap, count);
    if (!s->by_value)
      top_index_sort (heap, count);
    guint8 *vals = ctx->outputs[0].data;
    gpointer idx = ctx->n_outputs > 1 ? ctx->outputs[1].data : NULL;
    gint64 obase = o * s->k * s->inner + i;
    for (gint64 r = 0; r < count; r++) {
      gint64 op = obase + r * s->inner;
      memcpy (vals + op * es, (const guint8 *) in->data + (base + heap[r].idx * s->inner) * es,
          es);
      if (idx && s->index_type == M2I_ET_I32)
        ((gint32 *) idx)[op] = (gint32) heap[r].idx;
      else if (idx)
        ((gint64 *) idx)[op] = heap[r].idx;
    }
  }
}

static gboolean
topk_execute (M2iOpContext *ctx, GError **error)
{
  const TopKState *s = ctx->state;
  gint64 slices_total = s->outer * s->inner;
  if (slices_total == 0 || s->k == 0)
    return TRUE;
  if (slices_total > G_MAXINT) {
    m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, ctx->node, "too many slices");
    return FALSE;
  }
  TopKJob j = { ctx, ctx->scratch };
  gint slices = MIN (ir_k_slices_for (ctx, slices_total * s->n * 8), (gint) slices_total);
  ir_k_parallel_for ((gint) slices_total, slices, 1, topk_slices, &j);
  return TRUE;
}

const M2iOpKernel ir_kernel_topk = {
  "TopK", "opset1 opset3 opset11", topk_infer, topk_execute, g_free
};
