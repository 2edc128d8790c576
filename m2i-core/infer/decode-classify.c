/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* decode-classify.c — the classifier: output 0 is [1,C] or [1,C,1,1] class
 * scores; the top-k classes, best first, as probabilities (a stable softmax
 * of the scores when the model does not end in SoftMax, which makes them
 * logits). One head. */
#include "decode-private.h"

#include <base/m2i-error.h>
#include <string.h>

/* Classes a result holds at most: top-k past this is not a ranking. */
#define MAX_CLASSES 1024

typedef struct {
  guint n_classes;
  gboolean softmax;
} Classify;

/* The class count of output 0 when it is [1,C] or [1,C,1,1] float, C >= 2;
 * 0 otherwise. */
static gint64
class_count (M2iIrModel *model)
{
  if (m2i_ir_model_get_n_outputs (model) < 1)
    return 0;
  const M2iIrIoInfo *io = m2i_ir_model_get_output (model, 0);
  const M2iShape *s = &io->shape;
  if (io->type != M2I_ET_F32 && io->type != M2I_ET_F16)
    return 0;
  gint64 c = 0;
  if (s->rank == 2 && s->dims[0] == 1)
    c = s->dims[1];
  else if (s->rank == 4 && s->dims[0] == 1 && s->dims[2] == 1 && s->dims[3] == 1)
    c = s->dims[1];
  return c >= 2 && c <= G_MAXINT ? c : 0;
}

static gboolean
classify_match (M2iIrModel *model, const M2iDecoderOptions *opts, gboolean named, gchar **why,
    GError **error)
{
  gint64 c = class_count (model);
  const M2iIrIoInfo *io = m2i_ir_model_get_output (model, 0);
  if (!c) {
    if (named)
      infer_output_mismatch (model, 0, "a classifier's is f32/f16 [1,C] or [1,C,1,1] with "
          "C >= 2", error);
    return FALSE;
  }
  const char *producer = infer_output_producer_type (model, 0);
  *why = g_strdup_printf ("output '%s' has %" G_GINT64_FORMAT " class scores%s", io->name, c,
      strcmp (producer, "SoftMax") ? " (logits: softmax applied)" : " from SoftMax");
  if (opts->labels && opts->n_labels != (guint64) c) {
    gchar *w = g_strdup_printf ("%s; but the labels file has %u labels", *why, opts->n_labels);
    g_free (*why);
    *why = w;
  }
  return TRUE;
}

static gboolean
classify_prepare (M2iDecoder *dec, GError **error)
{
  Classify *c = g_new0 (Classify, 1);
  c->n_classes = (guint) class_count (dec->model);
  c->softmax = strcmp (infer_output_producer_type (dec->model, 0), "SoftMax") != 0;
  dec->state = c;
  dec->capacity.n_heads = 1;
  dec->capacity.max_classes = MIN (c->n_classes, MAX_CLASSES);
  return TRUE;
}

static gboolean
classify_decode (M2iDecoder *dec, const M2iTensor *outputs, guint n_outputs,
    const M2iInferGeometry *geometry, M2iInferResult *r, GError **error)
{
  const Classify *c = dec->state;
  if (!infer_output_check_f32 (outputs, n_outputs, 0, c->n_classes, "classifier", error))
    return FALSE;
  M2iInferHead *h = &r->heads[0];
  h->output_name = m2i_ir_model_get_output (dec->model, 0)->name;
  h->kind = M2I_INFER_HEAD_CLASSES;
  h->labels = dec->opts.labels;
  h->n_labels = dec->opts.n_labels;
  guint k = MIN (dec->opts.top_k, h->classes_capacity);
  h->n_classes = infer_top_classes (outputs[0].data, c->n_classes, c->softmax, k, h->classes);
  r->n_heads = 1;
  return TRUE;
}

const InferDecoderClass infer_decoder_classify = {
  .type = M2I_MODEL_TYPE_CLASSIFIER,
  .match = classify_match,
  .prepare = classify_prepare,
  .decode = classify_decode,
  .free = g_free,
};
