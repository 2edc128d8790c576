/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* infer-settings.c — the model's metadata as defaults for what the
 * application leaves unset: pre-processing (channel order, mean/scale,
 * resize type, pad value) and decoding (thresholds, NMS, top-k), each with
 * where it came from; see m2i_infer_settings_resolve() in m2i-infer.h. */
#include "infer-private.h"
#include "decode-private.h"

#include <string.h>

/* What an Ultralytics export without model_info says about itself
 * (framework/names, stride, imgsz, task: its ONNX metadata): its
 * pre-processing is fixed — RGB, pixels / 255, letterboxed with 114. */
static const char *
ultralytics_key (const M2iModelInfo *info)
{
  const M2iModelInfoOrigin *o[] = { &info->stride_from, &info->imgsz_from, &info->task_from,
    &info->kpt_shape_from };
  if (info->labels_from.source != M2I_MODEL_INFO_FRAMEWORK)
    return NULL;
  for (guint i = 0; i < G_N_ELEMENTS (o); i++)
    if (o[i]->source == M2I_MODEL_INFO_FRAMEWORK)
      return o[i]->key;
  return NULL;
}

/* An OpenPose model (named, or recognised as AUTO would) without
 * pre-processing metadata takes what Model API's OpenPose wrapper gives
 * it: BGR, the frame fitted at the top left. */
static const char *
openpose_key (const M2iInferModel *model, const M2iDecoderOptions *dec)
{
  if (dec->type == M2I_MODEL_TYPE_OPENPOSE
      || (dec->type == M2I_MODEL_TYPE_AUTO
          && infer_decoder_openpose.match (model->ir, dec, FALSE, NULL, NULL)))
    return "openpose";
  return NULL;
}

typedef struct {
  GString *text;
  guint given;
} Lines;

/* Ends a line with where its value came from. */
static void
origin (Lines *l, guint flag, const char *key, const char *note)
{
  if (l->given & flag)
    g_string_append (l->text, " (set)\n");
  else if (key)
    g_string_append_printf (l->text, " (%s%s%s)\n", key, note ? ": " : "", note ? note : "");
  else
    g_string_append (l->text, " (default)\n");
}

static void
append_channels (GString *s, const float v[3], guint n)
{
  g_string_append_c (s, '<');
  for (guint c = 0; c < n; c++)
    g_string_append_printf (s, "%s%g", c ? ", " : "", (double) v[c]);
  g_string_append_c (s, '>');
}

/* The model's per-channel values @v (@n of them: 1 for all, or one per
 * channel) into @dst, times @scale. */
static void
spread (float dst[3], const float *v, guint n, float scale)
{
  for (int c = 0; c < 3; c++)
    dst[c] = v[n == 1 ? 0 : MIN ((guint) c, n - 1)] * scale;
}

gchar *
m2i_infer_settings_resolve (const M2iInferModel *model, guint given, M2iInferPreprocess *pp,
    M2iDecoderOptions *dec)
{
  const M2iModelInfo *info = m2i_infer_model_get_info (model);
  Lines l = { g_string_new (NULL), given };
  const char *ultra = ultralytics_key (info);
  gboolean mi_pre = info->mean_values_from.key || info->scale_values_from.key
      || info->reverse_input_channels_from.key || info->resize_type_from.key;
  if (mi_pre)
    ultra = NULL;                 /* model_info speaks for itself */
  const char *ultra_note = "an Ultralytics export";
  const char *openpose = mi_pre || ultra ? NULL : openpose_key (model, dec);
  const char *openpose_note = "as Model API's OpenPose wrapper";
  guint channels = 3;
  M2iInferImageInput img;
  if (m2i_infer_model_get_image_input (model, &img))
    channels = (guint) img.channels;

  /* channel order */
  const char *key = NULL, *note = NULL;
  if (!(given & M2I_INFER_SET_CHANNEL_ORDER)) {
    if (info->reverse_input_channels_from.key) {
      pp->channel_order = info->reverse_input_channels ? M2I_ORDER_RGB : M2I_ORDER_BGR;
      key = info->reverse_input_channels_from.key;
    } else if (info->converted_from.key && info->converted_reverse_input_channels) {
      pp->channel_order = M2I_ORDER_BGR;
      key = info->converted_from.key;
      note = "the graph reverses its channels, so it takes BGR";
    } else if (ultra) {
      pp->channel_order = M2I_ORDER_RGB;
      key = ultra;
      note = ultra_note;
    } else if (openpose) {
      pp->channel_order = M2I_ORDER_BGR;
      key = openpose;
      note = openpose_note;
    }
  }
  if (channels == 3) {
    g_string_append_printf (l.text, "channel order = %s",
        pp->channel_order == M2I_ORDER_BGR ? "BGR" : "RGB");
    origin (&l, M2I_INFER_SET_CHANNEL_ORDER, key, note);
  }

  /* mean and scale: Model API's (pixel - mean) / scale in pixel units;
   * here (pixel * input_scale - mean) / std, so both scale with input_scale */
  float in_scale = pp->input_scale;
  key = note = NULL;
  if (!(given & M2I_INFER_SET_MEAN) && info->mean_values_from.key) {
    spread (pp->mean, info->mean_values, info->n_mean_values, in_scale);
    key = info->mean_values_from.key;
  }
  g_string_append (l.text, "mean = ");
  append_channels (l.text, pp->mean, channels);
  origin (&l, M2I_INFER_SET_MEAN, key, NULL);
  key = NULL;
  if (!(given & M2I_INFER_SET_STD)) {
    if (info->scale_values_from.key) {
      spread (pp->std, info->scale_values, info->n_scale_values, in_scale);
      key = info->scale_values_from.key;
    } else if (ultra) {
      const float s255 = 255.0f;
      spread (pp->std, &s255, 1, in_scale);
      key = ultra;
      note = ultra_note;
    }
  }
  g_string_append (l.text, "std = ");
  append_channels (l.text, pp->std, channels);
  origin (&l, M2I_INFER_SET_STD, key, note);
  g_string_append_printf (l.text, "input scale = %g", (double) pp->input_scale);
  origin (&l, M2I_INFER_SET_INPUT_SCALE, NULL, NULL);
  if (info->n_converted_mean_values || info->n_converted_scale_values) {
    g_string_append (l.text, "mean/scale inside the graph = ");
    append_channels (l.text, info->converted_mean_values, MIN (info->n_converted_mean_values, 3));
    g_string_append_c (l.text, '/');
    append_channels (l.text, info->converted_scale_values,
        MIN (info->n_converted_scale_values, 3));
    g_string_append_printf (l.text, " (%s: the model applies them, m2iinfer does not)\n",
        info->converted_from.key);
  }

  /* how the frame is fitted, and the padding */
  key = note = NULL;
  if (!(given & M2I_INFER_SET_RESIZE_TYPE)) {
    if (info->resize_type_from.key) {
      pp->resize_type = info->resize_type;
      key = info->resize_type_from.key;
    } else if (ultra) {
      pp->resize_type = M2I_RESIZE_TYPE_FIT_TO_WINDOW_LETTERBOX;
      key = ultra;
      note = ultra_note;
    } else if (openpose) {
      pp->resize_type = M2I_RESIZE_TYPE_FIT_TO_WINDOW;
      key = openpose;
      note = openpose_note;
    }
  }
  g_string_append_printf (l.text, "resize type = %s", m2i_resize_type_name (pp->resize_type));
  origin (&l, M2I_INFER_SET_RESIZE_TYPE, key, note);
  key = note = NULL;
  if (!(given & M2I_INFER_SET_PAD_VALUE)) {
    if (info->pad_value_from.key) {
      pp->pad_value = (float) info->pad_value;
      key = info->pad_value_from.key;
    } else if (ultra) {
      pp->pad_value = 114.0f;
      key = ultra;
      note = ultra_note;
    }
  }
  if (pp->resize_type == M2I_RESIZE_TYPE_FIT_TO_WINDOW
      || pp->resize_type == M2I_RESIZE_TYPE_FIT_TO_WINDOW_LETTERBOX) {
    g_string_append_printf (l.text, "pad value = %g", (double) pp->pad_value);
    origin (&l, M2I_INFER_SET_PAD_VALUE, key, note);
  }

  /* decoding */
  key = NULL;
  if (!(given & M2I_INFER_SET_THRESHOLD) && info->confidence_threshold_from.key) {
    dec->confidence_threshold = info->confidence_threshold;
    key = info->confidence_threshold_from.key;
  }
  g_string_append_printf (l.text, "threshold = %g", (double) dec->confidence_threshold);
  origin (&l, M2I_INFER_SET_THRESHOLD, key, NULL);
  key = NULL;
  if (!(given & M2I_INFER_SET_IOU_THRESHOLD) && info->iou_threshold_from.key) {
    dec->iou_threshold = info->iou_threshold;
    key = info->iou_threshold_from.key;
  }
  g_string_append_printf (l.text, "IoU threshold = %g", (double) dec->iou_threshold);
  origin (&l, M2I_INFER_SET_IOU_THRESHOLD, key, NULL);
  key = NULL;
  if (!(given & M2I_INFER_SET_CLASS_AGNOSTIC) && info->agnostic_nms_from.key) {
    dec->class_agnostic_nms = info->agnostic_nms;
    key = info->agnostic_nms_from.key;
  }
  g_string_append_printf (l.text, "class-agnostic NMS = %s",
      dec->class_agnostic_nms ? "yes" : "no");
  origin (&l, M2I_INFER_SET_CLASS_AGNOSTIC, key, NULL);
  key = NULL;
  if (!(given & M2I_INFER_SET_TOP_K) && info->topk_from.key) {
    dec->top_k = info->topk;
    key = info->topk_from.key;
  }
  g_string_append_printf (l.text, "top-k = %u", dec->top_k);
  origin (&l, M2I_INFER_SET_TOP_K, key, NULL);

  /* where the labels came from (chosen at load) */
  guint n_labels;
  const char *const *labels = m2i_infer_model_get_labels (model, &n_labels);
  if (labels) {
    g_string_append_printf (l.text, "labels = %u (%s%s)", n_labels, labels[0],
        n_labels > 1 ? ", ..." : "");
    if (model->labels_given)
      g_string_append (l.text, " (set)\n");
    else
      g_string_append_printf (l.text, " (%s)\n", info->labels_from.key);
  }
  for (gchar **w = info->warnings; *w; w++)
    g_string_append_printf (l.text, "warning: %s\n", *w);
  if (l.text->len && l.text->str[l.text->len - 1] == '\n')
    g_string_truncate (l.text, l.text->len - 1);
  return g_string_free (l.text, FALSE);
}
