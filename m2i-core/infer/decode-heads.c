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
#include "decode-extra.h"

#include <base/m2i-error.h>
#include <math.h>
#include <string.h>

#define MAX_VALUES (1u << 20)

typedef struct {
  gint out;
  const char *name;
  M2iShape shape;
  M2iInferHeadKind kind;
  guint n;                        /* values */
  gboolean apply_sigmoid;
  const char *const *labels;
  guint n_labels;
} Head;

typedef struct {
  Head *heads;
  guint n_heads;
  float conf;
  guint top_k;
} Heads;

static gboolean
is_auxiliary (const char *name)
{
  return name && (strstr (name, "feature_vector") || strstr (name, "saliency_map"));
}

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

static void
describe_head (GString *describe, const Head *h, guint top_k, float conf)
{
  static const char *const kinds[] = { "classes", "multi-label", "regression" };
  g_string_append_printf (describe, " '%s' %s (%u value%s", h->name, kinds[h->kind], h->n,
      h->n == 1 ? "" : "s");
  if (h->kind == M2I_INFER_HEAD_CLASSES)
    g_string_append_printf (describe, ", top %u", top_k);
  if (h->kind == M2I_INFER_HEAD_MULTI_LABEL)
    g_string_append_printf (describe, ", >= %g%s", conf, h->apply_sigmoid ? " after sigmoid" : "");
  if (h->labels)
    g_string_append (describe, ", labelled");
  g_string_append (describe, ")");
}

static gpointer
heads_prepare (gboolean multi_head, M2iIrModel *model, const M2iDecoderOptions *opts,
    InferResultSize *size, GString *describe, GError **error)
{
  Heads *hs = g_new0 (Heads, 1);
  gint n_out = m2i_ir_model_get_n_outputs (model);
  hs->heads = g_new0 (Head, MAX (n_out, 1));
  hs->conf = opts->confidence_threshold;
  hs->top_k = MAX (opts->top_k, 1u);
  for (gint i = 0; i < n_out; i++) {
    const M2iIrIoInfo *io = m2i_ir_model_get_output (model, i);
    Head h = { .out = i, .name = io->name, .shape = io->shape };
    if (is_auxiliary (io->name))
      continue;
    if (!vector_length (&io->shape, &h.n) || io->type == M2I_ET_UNDEFINED
        || io->type == M2I_ET_BF16) {
      if (!multi_head)
        continue;
      gchar *got = m2i_shape_to_string (&io->shape);
      g_set_error (error, M2I_ERROR, M2I_ERROR_UNSUPPORTED,
          "multi-head: output '%s' is %s %s; a head is a vector ([1,C], [1,C,1,1]) of at most %u "
          "numbers", io->name, m2i_element_type_to_string (io->type), got, MAX_VALUES);
      g_free (got);
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
    h.apply_sigmoid = h.kind == M2I_INFER_HEAD_MULTI_LABEL && strcmp (producer, "Sigmoid");
    if (h.kind != M2I_INFER_HEAD_REGRESSION && opts->labels
        && (!multi_head || opts->n_labels == h.n)) {
      h.labels = opts->labels;
      h.n_labels = opts->n_labels;
    }
    hs->heads[hs->n_heads++] = h;
    if (!multi_head)
      break;
  }
  if (!hs->n_heads) {
    gchar *got = infer_output_shape_string (model, 0);
    g_set_error (error, M2I_ERROR, M2I_ERROR_UNSUPPORTED,
        "%s: no float output shaped [1,C] or [1,C,1,1] (output 0 is %s)",
        multi_head ? "multi-head" : "multi-label", got);
    g_free (got);
    heads_free (hs);
    return NULL;
  }
  *size = (InferResultSize) { .n_heads = hs->n_heads };
  g_string_append (describe, multi_head ? "multi-head:" : "multi-label:");
  for (guint i = 0; i < hs->n_heads; i++) {
    const Head *h = &hs->heads[i];
    if (h->kind == M2I_INFER_HEAD_REGRESSION)
      size->max_values = MAX (size->max_values, h->n);
    else
      size->max_classes = MAX (size->max_classes,
          h->kind == M2I_INFER_HEAD_CLASSES ? MIN (hs->top_k, h->n) : h->n);
    describe_head (describe, h, hs->top_k, hs->conf);
  }
  return hs;
}

static gpointer
multi_label_prepare (M2iIrModel *model, const M2iModelInfo *info, const M2iDecoderOptions *opts,
    InferResultSize *size, GString *describe, GError **error)
{
  (void) info;
  return heads_prepare (FALSE, model, opts, size, describe, error);
}

static gpointer
multi_head_prepare (M2iIrModel *model, const M2iModelInfo *info, const M2iDecoderOptions *opts,
    InferResultSize *size, GString *describe, GError **error)
{
  (void) info;
  return heads_prepare (TRUE, model, opts, size, describe, error);
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
decode_head (const Heads *hs, const Head *h, const M2iTensor *t, M2iInferHead *out,
    gboolean *truncated)
{
  out->output_name = h->name;
  out->kind = h->kind;
  out->labels = h->labels;
  out->n_labels = h->n_labels;
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
  guint cap = h->kind == M2I_INFER_HEAD_CLASSES ? MIN (hs->top_k, out->classes_capacity)
      : out->classes_capacity;
  if (!cap)
    return;
  for (guint i = 0; i < h->n; i++) {
    float v = p[i];
    if (h->apply_sigmoid)
      v = 1.0f / (1.0f + expf (-v));
    if (isnan (v) || (h->kind == M2I_INFER_HEAD_MULTI_LABEL && !(v >= hs->conf)))
      continue;
    if (out->n_classes == cap && h->kind == M2I_INFER_HEAD_MULTI_LABEL)
      *truncated = TRUE;
    insert_best (out->classes, &out->n_classes, cap, (gint) i, v);
  }
}

static gboolean
heads_decode (gpointer state, const M2iTensor *outputs, guint n_outputs,
    const M2iInferGeometry *g, M2iInferResult *r, GError **error)
{
  (void) g;
  Heads *hs = state;
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
    decode_head (hs, &hs->heads[i], &outputs[hs->heads[i].out], &r->heads[i], &r->truncated);
  r->n_heads = n;
  return TRUE;
}

const InferDecoderRow infer_decoder_multi_label = {
  M2I_MODEL_TYPE_MULTI_LABEL, multi_label_prepare, heads_decode, heads_free,
};
const InferDecoderRow infer_decoder_multi_head = {
  M2I_MODEL_TYPE_MULTI_HEAD, multi_head_prepare, heads_decode, heads_free,
};
