/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* NonMaxSuppression-5 and -9: greedy (or Soft-NMS) suppression per batch
 * and class, f32 boxes [B, N, 4] (corner: any two opposite corners
 * [y1, x1, y2, x2]; center: [xc, yc, w, h]) and scores [B, C, N].
 *
 * For each (batch, class): the boxes whose score is above score_threshold
 * (strictly, as OpenVINO's reference and CPU plugin do) go into a priority
 * queue (score descending, lower box index first); the best is taken and
 * compared with the boxes selected since its score was last updated: each
 * multiplies its score by exp(-0.5·iou²/sigma) (1 without Soft-NMS); an
 * IOU above iou_threshold suppresses it outright (-9: without Soft-NMS
 * only; -5: at or above the threshold, Soft-NMS or not), as OpenVINO's
 * reference does. A box whose score did not change is selected; one whose score
 * dropped goes back into the queue if still above the threshold. At most
 * max_output_boxes_per_class per class. Outputs: [batch, class, box]
 * triplets, [batch, class, score] (the possibly decayed score), and their
 * count; with sort_result_descending the triplets of all classes and
 * batches are ordered by score (ties: batch, class, box ascending), else
 * by batch, class, then selection order.
 *
 * When the model declares the rows dynamic ([?, 3], as OpenVINO writes
 * them), the outputs have exactly the selected rows (run-time shapes,
 * m2i_op_context_set_output_shape); when it declares a number, they have
 * the spec's upper bound of rows, min(N, max_output_boxes_per_class) · B ·
 * C, and rows past the count are -1 (the spec's rule for plugins without
 * dynamic outputs). Working memory is scratch sized in infer().
 */
#include "kernels-private.h"
#include "heap-sort.h"
#include "indices.h"

#include <math.h>
#include <string.h>

typedef struct {
  float y1, x1, y2, x2, area;
} NmsBox;

typedef struct {
  gint64 key;                /* the queue's order, see cand_key() */
  float score;
  gint32 box, cls, batch;
  gint32 begin;              /* selected boxes before this one were compared */
} NmsCand;

/* Higher score first, then the lower box index, as one integer: the
 * score's bits made monotonic (negative floats flipped), then the box
 * index reversed. Scores here are never NaN (they passed "> threshold"). */
static inline gint64
cand_key (float score, gint32 box)
{
  gint32 bits;
  memcpy (&bits, &score, sizeof bits);
  bits ^= (bits >> 31) & 0x7fffffff;
  return ((gint64) bits << 32) | (guint32) (G_MAXINT32 - box);
}

static inline int
cand_rank (const NmsCand *a, const NmsCand *b)
{
  return (a->key > b->key) - (a->key < b->key);
}

M2I_K_HEAP (queue, NmsCand, cand_rank)

/* The output order with sort_result_descending: score descending, then
 * batch, class, box ascending ("ascending by cmp" = best first). */
static int
out_rank (const NmsCand *a, const NmsCand *b)
{
  if (a->score != b->score)
    return a->score > b->score ? -1 : 1;
  if (a->batch != b->batch)
    return a->batch < b->batch ? -1 : 1;
  if (a->cls != b->cls)
    return a->cls < b->cls ? -1 : 1;
  return (a->box > b->box) - (a->box < b->box);
}

M2I_K_HEAP (outq, NmsCand, out_rank)

typedef struct {
  gint version;
  gboolean center, sort_desc;
  M2iElementType index_type;
  gint64 batches, classes, boxes;
  gint64 rows;                         /* output rows (the upper bound) */
} NmsState;

/* Scalar input @i (absent: @def) as a double, known at run time. */
static double
scalar_input (const M2iOpContext *ctx, gint i, double def)
{
  const M2iTensor *t = &ctx->inputs[i];
  if (i >= ctx->n_inputs || !t->data || m2i_shape_numel (&t->shape) < 1)
    return def;
  switch (t->type) {
    case M2I_ET_F32: return ((const float *) t->data)[0];
    case M2I_ET_F64: return ((const double *) t->data)[0];
    default: return (double) ir_k_index_at (t, 0);
  }
}

static gboolean
nms_infer (M2iOpContext *ctx, GError **error)
{
  static const char *const enc[] = { "corner", "center", NULL };
  static const char *const otypes[] = { "i64", "i32", NULL };
  if (!ir_k_check_arity (ctx, 2, 6, 1, 3, error) || !ir_k_check_f32 (ctx, 0, error) ||
      !ir_k_check_f32 (ctx, 1, error))
    return FALSE;
  gint encoding, otype;
  gboolean sort_desc;
  if (!m2i_ir_node_attr_enum (ctx->node, "box_encoding", "corner", enc, &encoding, error) ||
      !m2i_ir_node_attr_enum (ctx->node, "output_type", "i64", otypes, &otype, error) ||
      !m2i_ir_node_attr_bool (ctx->node, "sort_result_descending", TRUE, &sort_desc, error))
    return FALSE;
  const M2iShape *bs = &ctx->inputs[0].shape, *ss = &ctx->inputs[1].shape;
  if (bs->rank != 3 || bs->dims[2] != 4 || ss->rank != 3 || ss->dims[0] != bs->dims[0] ||
      ss->dims[2] != bs->dims[1]) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "boxes %s and scores %s must be [batches, boxes, 4] and [batches, classes, boxes]",
        ir_k_shape_str (bs, 0), ir_k_shape_str (ss, 1));
    return FALSE;
  }
  for (gint i = 2; i < ctx->n_inputs; i++)
    if (m2i_shape_numel (&ctx->inputs[i].shape) != 1) {
      m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
          "input %d must be a scalar or a one-element tensor, is %s", i,
          ir_k_shape_str (&ctx->inputs[i].shape, 0));
      return FALSE;
    }
  if (ctx->n_inputs > 2 && !ir_k_check_index_type (ctx, 2, "max_output_boxes_per_class", error))
    return FALSE;
  NmsState *s = g_new0 (NmsState, 1);
  s->version = ir_k_op_version (ctx);
  s->center = encoding == 1;
  s->sort_desc = sort_desc;
  s->index_type = otype ? M2I_ET_I32 : M2I_ET_I64;
  s->batches = bs->dims[0];
  s->classes = ss->dims[1];
  s->boxes = bs->dims[1];
  /* the bound: every box of every class, or max_output_boxes_per_class of
   * them when that is a constant */
  gint64 per_class = s->boxes;
  if (ctx->n_inputs > 2 && ctx->inputs[2].data)
    per_class = CLAMP ((gint64) scalar_input (ctx, 2, 0), 0, s->boxes);
  else if (ctx->n_inputs <= 2)
    per_class = 0;
  if (s->boxes > G_MAXINT32 || s->classes > G_MAXINT32 || s->batches > G_MAXINT32 ||
      (per_class && s->batches * s->classes > G_MAXINT32 / per_class)) {
    g_free (s);
    m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, ctx->node,
        "boxes %s and scores %s are too large", ir_k_shape_str (bs, 0), ir_k_shape_str (ss, 1));
    return FALSE;
  }
  s->rows = per_class * s->batches * s->classes;
  ctx->state = s;
  /* scratch: one class's queue and selection, every selected row, then
   * the normalised boxes of one batch */
  ctx->scratch_bytes = (gsize) s->boxes * 2 * sizeof (NmsCand) +
      (gsize) s->rows * sizeof (NmsCand) + (gsize) s->boxes * sizeof (NmsBox);
  M2iShape rows3 = { 2, { s->rows, 3 } };
  ctx->outputs[0].type = s->index_type;
  ctx->outputs[0].shape = rows3;
  if (ctx->n_outputs > 1) {
    ctx->outputs[1].type = M2I_ET_F32;
    ctx->outputs[1].shape = rows3;
  }
  if (ctx->n_outputs > 2) {
    ctx->outputs[2].type = s->index_type;
    ctx->outputs[2].shape = (M2iShape) { 1, { 1 } };
  }
  /* A model that declares the rows dynamic (OpenVINO's own shape, [?,3])
   * gets exactly the selected rows (the runtime's run-time shapes); one
   * that declares the bound gets it padded with -1. */
  const M2iShape *declared = m2i_ir_node_get_output_shape (ctx->node, 0);
  if (declared && declared->rank == 2 && declared->dims[0] == M2I_DIM_DYNAMIC)
    ctx->dynamic_outputs = ctx->n_outputs > 1 ? 0x3 : 0x1;
  return TRUE;
}

/* As OpenVINO's reference: 0 when either box is empty. */
static inline float
iou (const NmsBox *a, const NmsBox *b)
{
  if (a->area <= 0.0f || b->area <= 0.0f)
    return 0.0f;
  float ih = MIN (a->y2, b->y2) - MAX (a->y1, b->y1);
  float iw = MIN (a->x2, b->x2) - MAX (a->x1, b->x1);
  float inter = MAX (ih, 0.0f) * MAX (iw, 0.0f);
  return inter / (a->area + b->area - inter);
}

static void
store_index (M2iTensor *t, gint64 i, gint64 v)
{
  if (t->type == M2I_ET_I32)
    ((gint32 *) t->data)[i] = (gint32) v;
  else
    ((gint64 *) t->data)[i] = v;
}

static gboolean
nms_execute (M2iOpContext *ctx, GError **error)
{
  const NmsState *s = ctx->state;
  gint64 max_out = ctx->n_inputs > 2 ? (gint64) scalar_input (ctx, 2, 0) : 0;
  float iou_thr = (float) scalar_input (ctx, 3, 0);
  float score_thr = (float) scalar_input (ctx, 4, 0);
  float sigma = (float) scalar_input (ctx, 5, 0);
  /* a run-time max_output_boxes_per_class beyond the bound can select no
   * more than the bound (every box) anyway */
  max_out = CLAMP (max_out, 0, s->rows / MAX (s->batches * s->classes, 1));
  float scale = sigma > 0.0f ? -0.5f / sigma : 0.0f;
  gboolean soft = sigma > 0.0f;
  NmsCand *queue = ctx->scratch;
  NmsCand *sel = queue + s->boxes, *all = sel + s->boxes;
  NmsBox *boxes = (NmsBox *) (all + s->rows);
  gint64 n_all = 0;
  const float *bdata = ctx->inputs[0].data, *sdata = ctx->inputs[1].data;
  for (gint64 b = 0; b < s->batches && max_out > 0; b++) {
    for (gint64 i = 0; i < s->boxes; i++) {
      const float *p = bdata + (b * s->boxes + i) * 4;
      float y1, x1, y2, x2;
      if (s->center) {
        x1 = p[0] - p[2] / 2.0f;
        y1 = p[1] - p[3] / 2.0f;
        x2 = p[0] + p[2] / 2.0f;
        y2 = p[1] + p[3] / 2.0f;
      } else {
        y1 = p[0];
        x1 = p[1];
        y2 = p[2];
        x2 = p[3];
      }
      NmsBox *bx = &boxes[i];
      *bx = (NmsBox) { MIN (y1, y2), MIN (x1, x2), MAX (y1, y2), MAX (x1, x2) };
      bx->area = (bx->y2 - bx->y1) * (bx->x2 - bx->x1);
    }
    for (gint64 c = 0; c < s->classes; c++) {
      const float *sc = sdata + (b * s->classes + c) * s->boxes;
      gint64 nq = 0, ns = 0;
      for (gint64 i = 0; i < s->boxes; i++) {
        /* written always, kept when above the threshold: no branch to
         * mispredict on a third of a detector's scores */
        queue[nq] = (NmsCand) { cand_key (sc[i], (gint32) i), sc[i], (gint32) i, (gint32) c,
          (gint32) b, 0 };
        nq += sc[i] > score_thr;
      }
      for (gint64 root = nq / 2 - 1; root >= 0; root--)     /* heapify: O(n) */
        queue_sift_down (queue, root, nq);
      while (nq > 0 && ns < max_out) {
        NmsCand cand = queue_pop (queue, &nq);
        float original = cand.score;
        gboolean suppressed = FALSE;
        for (gint64 j = ns - 1; j >= cand.begin; j--) {
          float o = iou (&boxes[cand.box], &boxes[sel[j].box]);
          float w = soft ? expf (scale * o * o) : 1.0f;
          if (s->version == 5 || !soft)
            w = o <= iou_thr ? w : 0.0f;
          cand.score *= w;
          if (s->version == 5 ? o >= iou_thr : !soft && o > iou_thr) {
            suppressed = TRUE;
            break;
          }
          if (cand.score <= score_thr)
            break;
        }
        cand.begin = (gint32) ns;
        if (suppressed)
          continue;
        if (cand.score == original)
          sel[ns++] = cand;
        else if (cand.score > score_thr) {
          cand.key = cand_key (cand.score, cand.box);
          queue_push (queue, &nq, cand);
        }
      }
      memcpy (all + n_all, sel, ns * sizeof (NmsCand));
      n_all += ns;
    }
  }
  if (s->sort_desc)
    outq_sort (all, n_all);
  gint64 rows = s->rows;
  if (ctx->dynamic_outputs) {
    M2iShape actual = { 2, { n_all, 3 } };
    for (gint p = 0; p < 2; p++)
      if (((ctx->dynamic_outputs >> p) & 1) &&
          !m2i_op_context_set_output_shape (ctx, p, &actual, error))
        return FALSE;
    rows = n_all;
  }
  M2iTensor *idx = &ctx->outputs[0];
  float *scores = ctx->n_outputs > 1 ? ctx->outputs[1].data : NULL;
  for (gint64 r = 0; r < rows; r++) {
    gboolean valid = r < n_all;
    store_index (idx, r * 3, valid ? all[r].batch : -1);
    store_index (idx, r * 3 + 1, valid ? all[r].cls : -1);
    store_index (idx, r * 3 + 2, valid ? all[r].box : -1);
    if (scores) {
      scores[r * 3] = valid ? (float) all[r].batch : -1.0f;
      scores[r * 3 + 1] = valid ? (float) all[r].cls : -1.0f;
      scores[r * 3 + 2] = valid ? all[r].score : -1.0f;
    }
  }
  if (ctx->n_outputs > 2 && ctx->outputs[2].data)
    store_index (&ctx->outputs[2], 0, n_all);
  return TRUE;
}

const M2iOpKernel ir_kernel_non_max_suppression = {
  "NonMaxSuppression", "opset5 opset9", nms_infer, nms_execute, g_free
};
