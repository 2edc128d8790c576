/* libFuzzer harness over what the inference module reads from a model
 * file: the rt_info metadata, the labels parser, and each decoder's match,
 * prepare and decode.
 *
 * An input is an IR .xml text (no weights). When it loads: the model info
 * must read (warnings allowed) and describe itself; every decoder row is
 * asked as AUTO and as a named type; one that prepares decodes twice, on
 * outputs filled from the input's bytes (NaN and infinities included) and
 * on zeros, within its result's capacities. The same bytes also go through
 * the labels parser in its three formats. Nothing may crash, hang, leak or
 * read out of bounds. */
#include <infer/decode-extra.h>

#include <stdint.h>
#include <string.h>

/* Outputs decoded at most (bytes per output, all outputs). */
#define MAX_OUTPUT_BYTES (4u << 20)
#define MAX_TOTAL_BYTES (16u << 20)
#define MAX_RESULT_ITEMS (1u << 20)

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static const InferDecoderRow *const rows[] = {
  &infer_decoder_yolo_v5, &infer_decoder_yolo_v8, &infer_decoder_yolo_v10,
  &infer_decoder_region_yolo, &infer_decoder_detection_nms, &infer_decoder_segmentation,
  &infer_decoder_multi_label, &infer_decoder_multi_head,
};

static void
quiet_log (const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer user_data)
{
}

/* A result with @s's capacities (as m2i_infer_result_new() makes it). */
static M2iInferResult *
result_new (const InferResultSize *s)
{
  M2iInferResult *r = g_new0 (M2iInferResult, 1);
  r->detections = g_new0 (M2iInferDetection, MAX (s->max_detections, 1));
  r->detections_capacity = s->max_detections;
  r->keypoints = g_new0 (M2iInferKeypoint, MAX (s->max_keypoints, 1));
  r->keypoints_capacity = s->max_keypoints;
  r->heads = g_new0 (M2iInferHead, MAX (s->n_heads, 1));
  r->heads_capacity = s->n_heads;
  for (guint i = 0; i < s->n_heads; i++) {
    r->heads[i].classes = g_new0 (M2iInferClass, MAX (s->max_classes, 1));
    r->heads[i].classes_capacity = s->max_classes;
    r->heads[i].values = g_new0 (float, MAX (s->max_values, 1));
    r->heads[i].values_capacity = s->max_values;
  }
  gsize px = (gsize) s->mask_width * s->mask_height;
  r->mask.class_map = g_new0 (guint16, MAX (px, 1));
  r->mask.confidence = g_new0 (float, MAX (px, 1));
  r->mask.capacity = px;
  return r;
}

static void
result_free (M2iInferResult *r)
{
  for (guint i = 0; i < r->heads_capacity; i++) {
    g_free (r->heads[i].classes);
    g_free (r->heads[i].values);
  }
  g_free (r->heads);
  g_free (r->detections);
  g_free (r->keypoints);
  g_free (r->mask.class_map);
  g_free (r->mask.confidence);
  g_free (r);
}

static gboolean
small_enough (const InferResultSize *s)
{
  guint64 items = (guint64) s->max_detections + s->max_keypoints
      + (guint64) s->n_heads * ((guint64) s->max_classes + s->max_values)
      + (guint64) s->mask_width * s->mask_height;
  return items <= MAX_RESULT_ITEMS;
}

static void
run_decoder (const InferDecoderRow *row, M2iIrModel *m, M2iTensor *outs, guint n_outs,
    const uint8_t *data, size_t size)
{
  M2iDecoderOptions o = { .type = row->type, .confidence_threshold = 0.25f,
    .iou_threshold = 0.5f, .top_k = 3, .max_detections = 100 };
  const char *labels[] = { "a", "b", NULL };
  o.labels = labels;
  o.n_labels = 2;
  gchar *why = NULL;
  if (row->match (m, &o, FALSE, &why, NULL))
    g_free (why);
  why = NULL;
  GError *error = NULL;
  if (!row->match (m, &o, TRUE, &why, &error)) {
    g_assert (error != NULL && error->message != NULL);
    g_error_free (error);
    return;
  }
  g_assert (why != NULL);
  g_free (why);
  InferResultSize s = { 0 };
  gpointer state = row->prepare (m, &o, &s, &error);
  if (!state) {
    g_assert (error != NULL);
    g_error_free (error);
    return;
  }
  if (small_enough (&s)) {
    M2iInferResult *r = result_new (&s);
    M2iInferGeometry g = { .model_width = 64, .model_height = 48, .source_width = 640,
      .source_height = 480, .scale_x = 0.1, .scale_y = 0.1, .pad_x = 0, .pad_y = 0 };
    for (gint pass = 0; pass < 2; pass++) {
      for (guint i = 0; i < n_outs; i++) {
        gsize nb = m2i_tensor_nbytes (&outs[i]);
        if (pass == 0)
          for (gsize k = 0; k < nb; k++)
            ((guint8 *) outs[i].data)[k] = size ? data[k % size] : 0;
        else
          memset (outs[i].data, 0, nb);
      }
      r->n_detections = r->n_keypoints = r->n_heads = 0;
      r->has_mask = r->truncated = FALSE;
      if (!row->decode (state, &o, outs, n_outs, &g, r, &error))
        g_clear_error (&error);
      g_assert (r->n_detections <= r->detections_capacity);
      g_assert (r->n_keypoints <= r->keypoints_capacity);
      g_assert (r->n_heads <= r->heads_capacity);
    }
    result_free (r);
  }
  row->free (state);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static gboolean init;
  if (!init) {
    g_log_set_default_handler (quiet_log, NULL);
    init = TRUE;
  }
  for (gint f = 0; f < 3; f++) {
    GError *error = NULL;
    gchar **labels = m2i_labels_parse ((const char *) data, (gssize) size, (M2iLabelsFormat) f,
        &error);
    g_assert ((labels == NULL) == (error != NULL));
    g_strfreev (labels);
    g_clear_error (&error);
  }
  GError *error = NULL;
  M2iIrModel *m = m2i_ir_model_load_from_memory ((const char *) data, size, NULL, "fuzz.xml",
      &error);
  if (!m) {
    g_error_free (error);
    return 0;
  }
  M2iModelInfo *info = m2i_model_info_new (m);
  g_free (m2i_model_info_describe (info));
  InferAutoCandidate c[INFER_AUTO_MAX_CANDIDATES];
  const char *key;
  g_assert (infer_auto_candidates (info, c, &key) <= INFER_AUTO_MAX_CANDIDATES);
  m2i_model_info_free (info);

  /* the outputs as the runtime delivers them: f32 for float outputs */
  guint n_outs = (guint) m2i_ir_model_get_n_outputs (m);
  M2iTensor *outs = g_new0 (M2iTensor, MAX (n_outs, 1));
  gsize total = 0;
  gboolean ok = TRUE;
  for (guint i = 0; i < n_outs && ok; i++) {
    const M2iIrIoInfo *io = m2i_ir_model_get_output (m, i);
    outs[i].type = m2i_element_type_is_float (io->type) ? M2I_ET_F32 : io->type;
    outs[i].shape = io->shape;
    gsize nb = m2i_tensor_nbytes (&outs[i]);
    ok = m2i_shape_numel (&io->shape) >= 0 && nb <= MAX_OUTPUT_BYTES
        && (total += nb) <= MAX_TOTAL_BYTES;
    if (ok)
      outs[i].data = g_malloc0 (MAX (nb, 1));
  }
  if (ok)
    for (guint k = 0; k < G_N_ELEMENTS (rows); k++)
      run_decoder (rows[k], m, outs, n_outs, data, size);
  for (guint i = 0; i < n_outs; i++)
    g_free (outs[i].data);
  g_free (outs);
  m2i_ir_model_unref (m);
  return 0;
}
