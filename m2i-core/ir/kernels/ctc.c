/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* CTCGreedyDecoder-1 and CTCGreedyDecoderSeqLen-6: best-path decoding of
 * per-step class scores, f32.
 *
 * At each step of a sequence the best class (the first of equal maxima)
 * is emitted unless it is the blank class or, with merge_repeated, the
 * same as the step before (a blank in between separates repeats).
 * CTCGreedyDecoder: data [T, N, C], the blank is C - 1, a sequence ends
 * at its first step whose sequence_mask [T, N] is 0; the output [N, T, 1,
 * 1] (f32) holds the classes, then -1. CTCGreedyDecoderSeqLen: data
 * [N, T, C], lengths [N] (at most T: data, checked at run time), blank
 * from input 2 (default C - 1); outputs the classes [N, T] (then -1) and
 * the decoded lengths [N], i32 or i64 each.
 */
#include "kernels-private.h"
#include "indices.h"

typedef struct {
  gboolean seq_len, merge;
  gint64 t, n, c;
  M2iElementType class_type, len_type;
} CtcState;

static gboolean
ctc_infer_common (M2iOpContext *ctx, gboolean seq_len, GError **error)
{
  static const char *const itypes[] = { "i32", "i64", NULL };
  if (!ir_k_check_arity (ctx, 2, seq_len ? 3 : 2, seq_len ? 1 : 1, seq_len ? 2 : 1, error) ||
      !ir_k_check_f32 (ctx, 0, error) || !ir_k_check_rank (ctx, 0, 3, 3, error))
    return FALSE;
  CtcState s = { seq_len };
  const M2iShape *d = &ctx->inputs[0].shape, *m = &ctx->inputs[1].shape;
  s.t = d->dims[seq_len ? 1 : 0];
  s.n = d->dims[seq_len ? 0 : 1];
  s.c = d->dims[2];
  gint ci = 0, li = 0;
  if (seq_len) {
    static const M2iElementType ints[] = { M2I_ET_I32, M2I_ET_I64 };
    if (!m2i_ir_node_attr_bool (ctx->node, "merge_repeated", TRUE, &s.merge, error) ||
        !m2i_ir_node_attr_enum (ctx->node, "classes_index_type", "i32", itypes, &ci, error) ||
        !m2i_ir_node_attr_enum (ctx->node, "sequence_length_type", "i32", itypes, &li, error) ||
        !ir_k_check_type (ctx, 1, ints, 2, error) ||
        (ctx->n_inputs > 2 && !ir_k_check_type (ctx, 2, ints, 2, error)))
      return FALSE;
    if (m->rank != 1 || m->dims[0] != s.n ||
        (ctx->n_inputs > 2 && m2i_shape_numel (&ctx->inputs[2].shape) != 1)) {
      m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
          "sequence_length %s must be [N] for data %s ([N, T, C]), blank_index one value",
          ir_k_shape_str (m, 0), ir_k_shape_str (d, 1));
      return FALSE;
    }
  } else {
    if (!m2i_ir_node_attr_bool (ctx->node, "ctc_merge_repeated", TRUE, &s.merge, error) ||
        !ir_k_check_f32 (ctx, 1, error))
      return FALSE;
    if (m->rank != 2 || m->dims[0] != s.t || m->dims[1] != s.n) {
      m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
          "sequence_mask %s must be [T, N] for data %s ([T, N, C])", ir_k_shape_str (m, 0),
          ir_k_shape_str (d, 1));
      return FALSE;
    }
  }
  s.class_type = seq_len ? (ci ? M2I_ET_I64 : M2I_ET_I32) : M2I_ET_F32;
  s.len_type = li ? M2I_ET_I64 : M2I_ET_I32;
  ctx->outputs[0].type = s.class_type;
  ctx->outputs[0].shape = seq_len ? (M2iShape) { 2, { s.n, s.t } } :
      (M2iShape) { 4, { s.n, s.t, 1, 1 } };
  if (ctx->n_outputs > 1) {
    ctx->outputs[1].type = s.len_type;
    ctx->outputs[1].shape = (M2iShape) { 1, { s.n } };
  }
  ctx->state = g_memdup2 (&s, sizeof s);
  return TRUE;
}

static gboolean
ctc_infer (M2iOpContext *ctx, GError **error)
{
  return ctc_infer_common (ctx, FALSE, error);
}

static gboolean
ctc_seq_len_infer (M2iOpContext *ctx, GError **error)
{
  return ctc_infer_common (ctx, TRUE, error);
}

static void
put (M2iTensor *t, gint64 i, gint64 v)
{
  switch (t->type) {
    case M2I_ET_F32: ((float *) t->data)[i] = (float) v; break;
    case M2I_ET_I32: ((gint32 *) t->data)[i] = (gint32) v; break;
    default: ((gint64 *) t->data)[i] = v; break;
  }
}

static gboolean
ctc_execute (M2iOpContext *ctx, GError **error)
{
  const CtcState *s = ctx->state;
  const float *data = ctx->inputs[0].data;
  gint64 blank = s->c - 1;
  if (s->seq_len && ctx->n_inputs > 2)
    blank = ir_k_index_at (&ctx->inputs[2], 0);
  M2iTensor *out = &ctx->outputs[0];
  for (gint64 b = 0; b < s->n; b++) {
    gint64 len = s->t;
    if (s->seq_len) {
      len = ir_k_index_at (&ctx->inputs[1], b);
      if (len < 0 || len > s->t) {
        m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
            "sequence_length[%" G_GINT64_FORMAT "] = %" G_GINT64_FORMAT " is outside [0, %"
            G_GINT64_FORMAT "]", b, len, s->t);
        return FALSE;
      }
    }
    gint64 n_out = 0, prev = -1;
    for (gint64 t = 0; t < len; t++) {
      if (!s->seq_len && ((const float *) ctx->inputs[1].data)[t * s->n + b] == 0.0f)
        break;
      const float *row = data + (s->seq_len ? b * s->t + t : t * s->n + b) * s->c;
      gint64 best = 0;
      for (gint64 k = 1; k < s->c; k++)
        if (row[k] > row[best])
          best = k;
      if (best != blank && !(s->merge && best == prev))
        put (out, b * s->t + n_out++, best);
      prev = best;
    }
    for (gint64 t = n_out; t < s->t; t++)
      put (out, b * s->t + t, -1);
    if (ctx->n_outputs > 1 && ctx->outputs[1].data)
      put (&ctx->outputs[1], b, n_out);
  }
  return TRUE;
}

const M2iOpKernel ir_kernel_ctc_greedy_decoder = {
  "CTCGreedyDecoder", "opset1", ctc_infer, ctc_execute, g_free
};

const M2iOpKernel ir_kernel_ctc_greedy_decoder_seq_len = {
  "CTCGreedyDecoderSeqLen", "opset6", ctc_seq_len_infer, ctc_execute, g_free
};
