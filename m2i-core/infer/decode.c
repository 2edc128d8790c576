/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* decode.c — the decoder dispatcher: model type names, choosing a decoder
 * (named, or AUTO in the table's priority order, RAW last), and the helpers
 * decoders share; see m2i-decode.h and decode-private.h. */
#include "decode-private.h"

#include <base/m2i-error.h>
#include <math.h>
#include <string.h>

/* ---- RAW: no decoding --------------------------------------------------------- */

static gboolean
raw_match (M2iIrModel *model, const M2iDecoderOptions *opts, gboolean named, gchar **why,
    GError **error)
{
  *why = g_strdup (named ? "raw tensors, as asked" : "no decoder recognises the outputs");
  return TRUE;
}

static gboolean
raw_decode (M2iDecoder *dec, const M2iTensor *outputs, guint n_outputs,
    const M2iInferGeometry *geometry, M2iInferResult *r, GError **error)
{
  return TRUE;
}

static const InferDecoderClass infer_decoder_raw = {
  .type = M2I_MODEL_TYPE_RAW,
  .match = raw_match,
  .decode = raw_decode,
};

/* AUTO's priority: detectors whose outputs are unmistakable first (a
 * producing layer's type, output names, YOLO layouts), then maps and heads,
 * the plain classifier's [1,C] late (many heads look like it), RAW last. A
 * new decoder adds its row here (docs/m2iinfer.md's table follows it). */
static const InferDecoderClass *const decoders[] = {
  &infer_decoder_ssd,
  &infer_decoder_region_yolo,
  &infer_decoder_detection_nms,
  &infer_decoder_yolo_v10,
  &infer_decoder_yolo_v5,
  &infer_decoder_yolo_v8,
  &infer_decoder_openpose,
  &infer_decoder_segmentation,
  &infer_decoder_multi_label,
  &infer_decoder_multi_head,
  &infer_decoder_classify,
  &infer_decoder_raw,
};

static const InferDecoderClass *
decoder_of_type (M2iModelType type)
{
  for (guint i = 0; i < G_N_ELEMENTS (decoders); i++)
    if (decoders[i]->type == type)
      return decoders[i];
  return NULL;
}

/* AUTO, step 1: the decoders the model's metadata names (decode-auto.c).
 * A name that stands for one layout matches as if the user had named it; a
 * family ("YOLO") only by AUTO's shape rules. When the metadata names a
 * type that does not fit, *@note says so and the shapes decide. */
static const InferDecoderClass *
match_metadata (M2iIrModel *model, const M2iDecoderOptions *opts, gchar **why, gchar **note)
{
  M2iModelInfo *info = m2i_model_info_new (model);
  InferAutoCandidate c[INFER_AUTO_MAX_CANDIDATES];
  const char *key = NULL;
  guint n = infer_auto_candidates (info, c, &key);
  const InferDecoderClass *klass = NULL;
  gchar *what = NULL;
  for (guint i = 0; i < n && !klass; i++) {
    const InferDecoderClass *k = decoder_of_type (c[i].type);
    GError *error = NULL;
    gchar *w = NULL;
    if (k && k->match (model, opts, !c[i].strict, &w, c[i].strict ? NULL : &error)) {
      klass = k;
      what = w;
    } else if (error && !*note) {
      *note = g_strdup_printf ("%s names %s, which does not fit (%s)", key,
          m2i_model_type_name (c[i].type), error->message);
    }
    g_clear_error (&error);
  }
  if (klass)
    *why = g_strdup_printf ("%s (named by %s)", what, key);
  g_free (what);
  m2i_model_info_free (info);
  return klass;
}

/* ---- names ------------------------------------------------------------------- */

static const struct {
  M2iModelType type;
  const char *name;
} type_names[] = {
  { M2I_MODEL_TYPE_AUTO, "auto" },
  { M2I_MODEL_TYPE_RAW, "raw" },
  { M2I_MODEL_TYPE_CLASSIFIER, "classifier" },
  { M2I_MODEL_TYPE_MULTI_LABEL, "multi-label" },
  { M2I_MODEL_TYPE_SSD, "ssd" },
  { M2I_MODEL_TYPE_YOLO_V5, "yolo-v5" },
  { M2I_MODEL_TYPE_YOLO_V8, "yolo-v8" },
  { M2I_MODEL_TYPE_YOLO_V10, "yolo-v10" },
  { M2I_MODEL_TYPE_REGION_YOLO, "region-yolo" },
  { M2I_MODEL_TYPE_DETECTION_NMS, "detection-nms" },
  { M2I_MODEL_TYPE_SEGMENTATION, "segmentation" },
  { M2I_MODEL_TYPE_MULTI_HEAD, "multi-head" },
  { M2I_MODEL_TYPE_OPENPOSE, "openpose" },
};

/* Model API's model_type values (and common spellings) for our types. */
static const struct {
  const char *alias;
  M2iModelType type;
} type_aliases[] = {
  { "classification", M2I_MODEL_TYPE_CLASSIFIER },
  { "label", M2I_MODEL_TYPE_CLASSIFIER },
  { "multilabel", M2I_MODEL_TYPE_MULTI_LABEL },
  { "yolo", M2I_MODEL_TYPE_YOLO_V5 },
  { "yolov5", M2I_MODEL_TYPE_YOLO_V5 },
  { "yolov7", M2I_MODEL_TYPE_YOLO_V5 },
  { "yolov8", M2I_MODEL_TYPE_YOLO_V8 },
  { "yolov9", M2I_MODEL_TYPE_YOLO_V8 },
  { "yolo11", M2I_MODEL_TYPE_YOLO_V8 },
  { "yolov11", M2I_MODEL_TYPE_YOLO_V8 },
  { "yolov10", M2I_MODEL_TYPE_YOLO_V10 },
  { "yolov3", M2I_MODEL_TYPE_REGION_YOLO },
  { "yolov4", M2I_MODEL_TYPE_REGION_YOLO },
  { "segmentation", M2I_MODEL_TYPE_SEGMENTATION },
  { "open_pose", M2I_MODEL_TYPE_OPENPOSE },
  { "human_pose_estimation", M2I_MODEL_TYPE_OPENPOSE },
};

const char *
m2i_model_type_name (M2iModelType type)
{
  for (guint i = 0; i < G_N_ELEMENTS (type_names); i++)
    if (type_names[i].type == type)
      return type_names[i].name;
  return "unknown";
}

gboolean
m2i_model_type_from_name (const char *name, M2iModelType *type)
{
  if (!name)
    return FALSE;
  for (guint i = 0; i < G_N_ELEMENTS (type_names); i++)
    if (!g_ascii_strcasecmp (name, type_names[i].name)) {
      *type = type_names[i].type;
      return TRUE;
    }
  for (guint i = 0; i < G_N_ELEMENTS (type_aliases); i++)
    if (!g_ascii_strcasecmp (name, type_aliases[i].alias)) {
      *type = type_aliases[i].type;
      return TRUE;
    }
  return FALSE;
}

void
m2i_decoder_options_init (M2iDecoderOptions *opts)
{
  memset (opts, 0, sizeof *opts);
  opts->type = M2I_MODEL_TYPE_AUTO;
  opts->confidence_threshold = 0.5f;
  opts->iou_threshold = 0.5f;
  opts->top_k = 1;
  opts->max_detections = 300;
}

/* ---- the decoder --------------------------------------------------------------- */

static void
decoder_free (M2iDecoder *dec)
{
  if (dec->state && dec->klass->free)
    dec->klass->free (dec->state);
  m2i_ir_model_unref (dec->model);
  g_free (dec->description);
  g_free (dec);
}

M2iDecoder *
m2i_decoder_new (M2iIrModel *model, const M2iDecoderOptions *opts, GError **error)
{
  M2iDecoderOptions defaults;
  if (!opts) {
    m2i_decoder_options_init (&defaults);
    opts = &defaults;
  }
  const InferDecoderClass *klass = NULL;
  gchar *why = NULL, *note = NULL;
  if (opts->type == M2I_MODEL_TYPE_AUTO) {
    klass = match_metadata (model, opts, &why, &note);
    for (guint i = 0; i < G_N_ELEMENTS (decoders) && !klass; i++)
      if (decoders[i]->match (model, opts, FALSE, &why, NULL))
        klass = decoders[i];
  } else {
    klass = decoder_of_type (opts->type);
    if (!klass) {
      g_set_error (error, M2I_ERROR, M2I_ERROR_UNSUPPORTED,
          "model type %s has no decoder in this build", m2i_model_type_name (opts->type));
      return NULL;
    }
    if (!klass->match (model, opts, TRUE, &why, error)) {
      g_prefix_error (error, "model type %s: ", m2i_model_type_name (opts->type));
      return NULL;
    }
  }
  M2iDecoder *dec = g_new0 (M2iDecoder, 1);
  dec->klass = klass;
  dec->model = m2i_ir_model_ref (model);
  dec->opts = *opts;
  dec->opts.type = klass->type;
  dec->description = g_strdup_printf ("%s: %s%s%s", m2i_model_type_name (klass->type), why,
      note ? "; " : "", note ? note : "");
  g_free (why);
  g_free (note);
  if (klass->prepare && !klass->prepare (dec, error)) {
    decoder_free (dec);
    return NULL;
  }
  return dec;
}

void
m2i_decoder_free (M2iDecoder *dec)
{
  if (dec)
    decoder_free (dec);
}

void
m2i_decoder_set_options (M2iDecoder *dec, const M2iDecoderOptions *opts)
{
  M2iModelType type = dec->opts.type;
  const char *const *labels = dec->opts.labels;
  guint n_labels = dec->opts.n_labels;
  dec->opts = *opts;
  dec->opts.type = type;
  dec->opts.labels = labels;
  dec->opts.n_labels = n_labels;
}

M2iModelType
m2i_decoder_get_model_type (const M2iDecoder *dec)
{
  return dec->opts.type;
}

const char *
m2i_decoder_describe (const M2iDecoder *dec)
{
  return dec->description;
}

const char *const *
m2i_decoder_get_default_labels (const M2iDecoder *dec, guint *n_labels)
{
  const char *const *labels = dec->klass->labels;
  if (n_labels)
    *n_labels = labels ? g_strv_length ((gchar **) labels) : 0;
  return labels;
}

M2iInferResult *
m2i_decoder_new_result (const M2iDecoder *dec)
{
  const InferResultCapacity *c = &dec->capacity;
  return m2i_infer_result_new (c->max_detections, c->max_keypoints, c->n_heads, c->max_classes,
      c->max_values, c->mask_width, c->mask_height);
}

gboolean
m2i_decoder_decode (M2iDecoder *dec, const M2iTensor *outputs, guint n_outputs,
    const M2iInferGeometry *geometry, M2iInferResult *result, GError **error)
{
  m2i_infer_result_clear (result);
  result->geometry = *geometry;
  return dec->klass->decode (dec, outputs, n_outputs, geometry, result, error);
}

/* ---- helpers for decoders ---------------------------------------------------- */

const char *
infer_output_producer_type (M2iIrModel *model, gint i)
{
  M2iIrNode *producer = infer_output_producer (model, i);
  return producer ? m2i_ir_node_get_type (producer) : "";
}

void
infer_output_mismatch (M2iIrModel *model, gint i, const char *expected, GError **error)
{
  const M2iIrIoInfo *io = m2i_ir_model_get_output (model, i);
  if (!io) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, "the model has no output %d; %s",
        i, expected);
    return;
  }
  gchar *shape = m2i_shape_to_string (&io->shape);
  const char *producer = infer_output_producer_type (model, i);
  g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, "output %d '%s' is %s %s%s%s%s; %s",
      i, io->name, m2i_element_type_to_string (io->type), shape, *producer ? " from \"" : "",
      producer, *producer ? "\"" : "", expected);
  g_free (shape);
}

gboolean
infer_output_check_f32 (const M2iTensor *outputs, guint n, guint i, gint64 numel,
    const char *what, GError **error)
{
  if (i >= n || outputs[i].type != M2I_ET_F32 || !outputs[i].data
      || m2i_shape_numel (&outputs[i].shape) != numel) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "%s decoder: output %u is not the f32 tensor of %" G_GINT64_FORMAT " values it was "
        "made for", what, i, numel);
    return FALSE;
  }
  return TRUE;
}

guint
infer_top_classes (const float *scores, guint n, gboolean softmax, guint k, M2iInferClass *out)
{
  if (k > n)
    k = n;
  float max = -INFINITY;
  double sum = 0.0;
  if (softmax) {
    for (guint i = 0; i < n; i++)
      max = MAX (max, scores[i]);
    for (guint i = 0; i < n; i++)
      sum += exp ((double) scores[i] - (double) max);
  }
  /* Insertion into the k best: k is small (top-k), n a few thousand at most. */
  guint have = 0;
  for (guint i = 0; i < n && k > 0; i++) {
    float v = scores[i];
    if (have == k && !(v > out[k - 1].confidence))
      continue;
    guint pos = have < k ? have++ : k - 1;
    while (pos > 0 && v > out[pos - 1].confidence) {
      out[pos] = out[pos - 1];
      pos--;
    }
    out[pos].class_id = (gint) i;
    out[pos].confidence = v;
  }
  if (softmax && sum > 0.0)
    for (guint i = 0; i < have; i++)
      out[i].confidence = (float) (exp ((double) out[i].confidence - (double) max) / sum);
  return have;
}
