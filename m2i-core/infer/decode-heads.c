/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* decode-heads.c — classification and regression heads.
 *
 *   multi-label  one output [1,C] / [1,C,1,1] / [C]: independent
 *                probabilities — the values as they are when a Sigmoid makes
 *                them, else sigmoid(value) (Model API's multilabel) — every
 *                class at or above the confidence threshold, best first
 *   multi-head   one head per model output (age + gender, attributes,
 *                landmarks), in output order, each by the layer that makes
 *                it: SoftMax (2+ values) a classifier (top-k), Sigmoid
 *                multi-label (threshold), anything else regression (the
 *                values as they are: an age, landmark coordinates, an
 *                embedding)
 *
 * Labels: a multi-label head takes the options' labels; a multi-head
 * model's classifier heads take them when their class count equals the
 * labels' (so "female, male" names the gender head of age + gender).
 * Outputs named feature_vector or saliency_map (training extensions'
 * auxiliary outputs) are not heads. NaN values never enter a class list.
 */
#include "decode-private.h"

#include <base/m2i-error.h>
#include <math.h>
#include <string.h>

#define MAX_VALUES (1u << 20)
/* Classes a classifier head holds at most: top-k past this is no ranking. */
#define MAX_TOP_K 1024

typedef struct {
  gint out;
  const char *name;
  M2iShape shape;
  M2iInferHeadKind kind;
  guint n;                        /* values */
  gboolean apply_sigmoid;
} Head;

typedef struct {
  gboolean multi_head;
  Head *heads;
  guint n_heads;
} Heads;

/* The values of a [1,...,C,...,1] / [C] output: all dims but one are 1. */
static gboolean
vector_length (const M2iShape *s, guint *n)
{
  gint64 numel = m2i_shape_numel (s);
  if (s->rank < 1 || numel < 1 || numel > MAX_VALUES)
    return FALSE;
  gint big = 0;
  for (gint i = 0; i < s->rank; i++)
    big += s->dims[i] != 1;
  if (big > 1)
    return FALSE;
  *n = (guint) numel;
  return TRUE;
}

static void heads_free (gpointer state);

static const char *const kind_names[] = { "classes", "multi-label", "regression" };

/* The heads of @model; NULL (with @error when @named) when it has none or
 * (multi-head) an output is no vector. AUTO claims a multi-label model
 * whose only output is a vector from Sigmoid, and a multi-head model whose
 * two or more outputs are all vectors. */
static Heads *
find_heads (gboolean multi_head, M2iIrModel *model, gboolean named, GError **error)
{
  Heads *hs = g_new0 (Heads, 1);
  hs->multi_head = multi_head;
  gint n_out = m2i_ir_model_get_n_outputs (model);
  guint candidates = 0;
  hs->heads = g_new0 (Head, MAX (n_out, 1));
  for (gint i = 0; i < n_out; i++) {
    const M2iIrIoInfo *io = m2i_ir_model_get_output (model, i);
    Head h = { .out = i, .name = io->name, .shape = io->shape };
    if (infer_output_is_auxiliary (io->name))
      continue;
    candidates++;
    if (!vector_length (&io->shape, &h.n) || io->type == M2I_ET_UNDEFINED
        || io->type == M2I_ET_BF16) {
      if (!multi_head)
        continue;
      g_autofree gchar *got = m2i_shape_to_string (&io->shape);
      infer_no_match (named, error, "output '%s' is %s %s; a head is a vector ([1,C], "
          "[1,C,1,1]) of at most %u numbers", io->name, m2i_element_type_to_string (io->type),
          got, MAX_VALUES);
      heads_free (hs);
      return NULL;
    }
    const char *producer = infer_output_producer_type (model, i);
    gboolean is_float = m2i_element_type_is_float (io->type);
    if (!multi_head || (is_float && !strcmp (producer, "Sigmoid")))
      h.kind = M2I_INFER_HEAD_MULTI_LABEL;
    else if (is_float && !strcmp (producer, "SoftMax") && h.n >= 2)
      h.kind = M2I_INFER_HEAD_CLASSES;
    else
      h.kind = M2I_INFER_HEAD_REGRESSION;
    if (h.kind == M2I_INFER_HEAD_MULTI_LABEL && !is_float)
      continue;
    if (!multi_head && !named && (strcmp (producer, "Sigmoid") || h.n < 2))
      continue;
    h.apply_sigmoid = h.kind == M2I_INFER_HEAD_MULTI_LABEL && strcmp (producer, "Sigmoid");
    hs->heads[hs->n_heads++] = h;
    if (!multi_head)
      break;
  }
  if (!hs->n_heads || (!named && (multi_head ? candidates < 2 : candidates != 1))) {
    g_autofree gchar *got = infer_output_shape_string (model, 0);
    infer_no_match (named, error, "no float output shaped [1,C] or [1,C,1,1] (output 0 "
        "is %s)", got);
    heads_free (hs);
    return NULL;
  }
  return hs;
}

static gboolean
heads_match (gboolean multi_head, M2iIrModel *model, gboolean named, gchar **why,
    GError **error)
{
  Heads *hs = find_heads (multi_head, model, named, error);
  if (!hs)
    return FALSE;
  GString *s = g_string_new (NULL);
  for (guint i = 0; i < hs->n_heads; i++) {
    const Head *h = &hs->heads[i];
    g_string_append_printf (s, "%s'%s' %s (%u value%s%s)", i ? ", " : "", h->name,
        kind_names[h->kind], h->n, h->n == 1 ? "" : "s",
        h->apply_sigmoid ? ", sigmoid applied" : "");
  }
  *why = g_string_free (s, FALSE);
  heads_free (hs);
  return TRUE;
}

static gboolean
multi_label_match (M2iIrModel *model, const M2iDecoderOptions *opts, gboolean named,
    gchar **why, GError **error)
{
  return heads_match (FALSE, model, named, why, error);
}

static gboolean
multi_head_match (M2iIrModel *model, const M2iDecoderOptions *opts, gboolean named,
    gchar **why, GError **error)
{
  return heads_match (TRUE, model, named, why, error);
}

static gboolean
heads_prepare (gboolean multi_head, M2iDecoder *dec, GError **error)
{
  Heads *hs = find_heads (multi_head, dec->model, TRUE, error);
  if (!hs)
    return FALSE;
  InferResultCapacity *size = &dec->capacity;
  size->n_heads = hs->n_heads;
  for (guint i = 0; i < hs->n_heads; i++) {
    const Head *h = &hs->heads[i];
    if (h->kind == M2I_INFER_HEAD_REGRESSION)
      size->max_values = MAX (size->max_values, h->n);
    else
      size->max_classes = MAX (size->max_classes,
          h->kind == M2I_INFER_HEAD_CLASSES ? MIN (h->n, MAX_TOP_K) : h->n);
  }
  dec->state = hs;
  return TRUE;
}

static gboolean
multi_label_prepare (M2iDecoder *dec, GError **error)
{
  return heads_prepare (FALSE, dec, error);
}

static gboolean
multi_head_prepare (M2iDecoder *dec, GError **error)
{
  return heads_prepare (TRUE, dec, error);
}

static void
heads_free (gpointer state)
{
  Heads *hs = state;
  g_free (hs->heads);
  g_free (hs);
}

/* Inserts (@id, @v) into the best-first list @c of *@n entries and room for
 * @cap; equal values keep class order. */
static void
insert_best (M2iInferClass *c, guint *n, guint cap, gint id, float v)
{
  if (*n == cap && !(v > c[cap - 1].confidence))
    return;
  guint pos = *n < cap ? (*n)++ : cap - 1;
  while (pos > 0 && v > c[pos - 1].confidence) {
    c[pos] = c[pos - 1];
    pos--;
  }
  c[pos] = (M2iInferClass) { id, v };
}

static void
decode_head (const Heads *hs, const Head *h, const M2iDecoderOptions *opts, const M2iTensor *t,
    M2iInferHead *out, gboolean *truncated)
{
  out->output_name = h->name;
  out->kind = h->kind;
  /* a multi-label model's classes are the labels'; a multi-head model's
   * classifier head takes them when their counts agree */
  gboolean labelled = h->kind != M2I_INFER_HEAD_REGRESSION
      && (!hs->multi_head || opts->n_labels == h->n);
  out->labels = labelled ? opts->labels : NULL;
  out->n_labels = labelled ? opts->n_labels : 0;
  out->n_classes = 0;
  out->n_values = 0;
  if (h->kind == M2I_INFER_HEAD_REGRESSION) {
    guint n = MIN (h->n, out->values_capacity);
    for (guint i = 0; i < n; i++)
      out->values[i] = (float) infer_tensor_get (t, i);
    out->n_values = n;
    *truncated |= n < h->n;
    return;
  }
  const float *p = t->data;
  guint cap = h->kind == M2I_INFER_HEAD_CLASSES ? MIN (MAX (opts->top_k, 1u),
      out->classes_capacity) : out->classes_capacity;
  if (!cap)
    return;
  for (guint i = 0; i < h->n; i++) {
    float v = p[i];
    if (h->apply_sigmoid)
      v = 1.0f / (1.0f + expf (-v));
    if (isnan (v) || (h->kind == M2I_INFER_HEAD_MULTI_LABEL
            && !(v >= opts->confidence_threshold)))
      continue;
    if (out->n_classes == cap && h->kind == M2I_INFER_HEAD_MULTI_LABEL)
      *truncated = TRUE;
    insert_best (out->classes, &out->n_classes, cap, (gint) i, v);
  }
}

static gboolean
heads_decode (M2iDecoder *dec, const M2iTensor *outputs, guint n_outputs,
    const M2iInferGeometry *g, M2iInferResult *r, GError **error)
{
  Heads *hs = dec->state;
  const M2iDecoderOptions *opts = &dec->opts;
  for (guint i = 0; i < hs->n_heads; i++) {
    const Head *h = &hs->heads[i];
    if (!infer_check_output (outputs, n_outputs, (guint) h->out, h->name,
            h->kind == M2I_INFER_HEAD_REGRESSION ? M2I_ET_UNDEFINED : M2I_ET_F32, &h->shape,
            error))
      return FALSE;
  }
  guint n = MIN (hs->n_heads, r->heads_capacity);
  r->truncated |= n < hs->n_heads;
  for (guint i = 0; i < n; i++)
    decode_head (hs, &hs->heads[i], opts, &outputs[hs->heads[i].out], &r->heads[i],
        &r->truncated);
  r->n_heads = n;
  return TRUE;
}

const InferDecoderClass infer_decoder_multi_label = {
  .type = M2I_MODEL_TYPE_MULTI_LABEL,
  .match = multi_label_match,
  .prepare = multi_label_prepare,
  .decode = heads_decode,
  .free = heads_free,
};

const InferDecoderClass infer_decoder_multi_head = {
  .type = M2I_MODEL_TYPE_MULTI_HEAD,
  .match = multi_head_match,
  .prepare = multi_head_prepare,
  .decode = heads_decode,
  .free = heads_free,
};
