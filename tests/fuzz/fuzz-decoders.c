/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer harness over what the inference module reads from a model
 * file: the rt_info metadata, the labels parser, and each decoder's match,
 * prepare and decode.
 *
 * An input is an IR .xml text (no weights). When it loads: the model info
 * must read (warnings allowed) and describe itself; a decoder is made for
 * AUTO and for every named type; one that is made decodes twice, on
 * outputs filled from the input's bytes (NaN and infinities included) and
 * on zeros, within its result's capacities. The same bytes also go through
 * the labels parser in its three formats. Nothing may crash, hang, leak or
 * read out of bounds. */
#include <infer/decode-private.h>

#include <stdint.h>
#include <string.h>

/* Outputs decoded at most (bytes per output, all outputs). */
#define MAX_OUTPUT_BYTES (4u << 20)
#define MAX_TOTAL_BYTES (16u << 20)
#define MAX_RESULT_ITEMS (1u << 20)

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static const M2iModelType types[] = {
  M2I_MODEL_TYPE_AUTO, M2I_MODEL_TYPE_CLASSIFIER, M2I_MODEL_TYPE_MULTI_LABEL, M2I_MODEL_TYPE_SSD,
  M2I_MODEL_TYPE_YOLO_V5, M2I_MODEL_TYPE_YOLO_V8, M2I_MODEL_TYPE_YOLO_V10,
  M2I_MODEL_TYPE_REGION_YOLO, M2I_MODEL_TYPE_DETECTION_NMS, M2I_MODEL_TYPE_SEGMENTATION,
  M2I_MODEL_TYPE_MULTI_HEAD, M2I_MODEL_TYPE_OPENPOSE,
};

static void
quiet_log (const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer user_data)
{
}

static gboolean
small_enough (const InferResultCapacity *s)
{
  guint64 items = (guint64) s->max_detections + s->max_keypoints
      + (guint64) s->n_heads * ((guint64) s->max_classes + s->max_values)
      + (guint64) s->mask_width * s->mask_height;
  return items <= MAX_RESULT_ITEMS;
}

/* The decoder of @type (AUTO: the dispatcher's choice) on @m, decoding
 * @outs twice: filled from the input's bytes, then zeros. */
static void
run_decoder (M2iModelType type, M2iIrModel *m, M2iTensor *outs, guint n_outs,
    const uint8_t *data, size_t size)
{
  M2iDecoderOptions o;
  m2i_decoder_options_init (&o);
  o.type = type;
  o.confidence_threshold = 0.25f;
  o.top_k = 3;
  o.max_detections = 100;
  const char *labels[] = { "a", "b", NULL };
  o.labels = labels;
  o.n_labels = 2;
  GError *error = NULL;
  M2iDecoder *dec = m2i_decoder_new (m, &o, &error);
  if (!dec) {
    g_assert (type != M2I_MODEL_TYPE_AUTO);      /* AUTO never fails */
    g_assert (error != NULL && error->message != NULL);
    g_error_free (error);
    return;
  }
  g_assert (m2i_decoder_describe (dec) != NULL);
  if (small_enough (&dec->capacity)) {
    M2iInferResult *r = m2i_decoder_new_result (dec);
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
      if (!m2i_decoder_decode (dec, outs, n_outs, &g, r, &error))
        g_clear_error (&error);
      g_assert (r->n_detections <= r->detections_capacity);
      g_assert (r->n_keypoints <= r->keypoints_capacity);
      g_assert (r->n_heads <= r->heads_capacity);
    }
    m2i_infer_result_free (r);
  }
  m2i_decoder_free (dec);
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
    for (guint k = 0; k < G_N_ELEMENTS (types); k++)
      run_decoder (types[k], m, outs, n_outs, data, size);
  for (guint i = 0; i < n_outs; i++)
    g_free (outs[i].data);
  g_free (outs);
  m2i_ir_model_unref (m);
  return 0;
}
