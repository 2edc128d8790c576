/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* model-info.c — a model's rt_info settings (see m2i-model-info.h). Every
 * value is text from the file: parsed with bounds, anything unreadable
 * becomes a warning and the setting keeps its default. */
#include "decode-private.h"

#include <math.h>
#include <string.h>

#define MAX_STRING 256            /* model_type, task, layout */

typedef struct {
  const M2iIrModel *model;
  M2iModelInfo *info;
  GPtrArray *warnings;
} Reader;

static const char *const resize_names[] = {
  [M2I_RESIZE_TYPE_STANDARD] = "standard",
  [M2I_RESIZE_TYPE_FIT_TO_WINDOW] = "fit_to_window",
  [M2I_RESIZE_TYPE_FIT_TO_WINDOW_LETTERBOX] = "fit_to_window_letterbox",
  [M2I_RESIZE_TYPE_CROP] = "crop",
};

const char *
m2i_resize_type_name (M2iResizeType type)
{
  return (guint) type < G_N_ELEMENTS (resize_names) ? resize_names[type] : "unknown";
}

gboolean
m2i_resize_type_from_name (const char *name, M2iResizeType *type)
{
  for (guint i = 0; name && i < G_N_ELEMENTS (resize_names); i++)
    if (!g_ascii_strcasecmp (name, resize_names[i])) {
      *type = (M2iResizeType) i;
      return TRUE;
    }
  return FALSE;
}

/* ---- reading values ------------------------------------------------------------ */

/* The first value found among @keys (tried in order), its origin in *@from. */
static const char *
lookup (Reader *r, const char *const *keys, M2iModelInfoOrigin *from)
{
  if (!r->model)
    return NULL;
  for (; *keys; keys++) {
    const char *v = m2i_ir_model_get_rt_info (r->model, *keys);
    if (!v)
      continue;
    M2iModelInfoSource src = g_str_has_prefix (*keys, "model_info/") ? M2I_MODEL_INFO_MODEL_INFO
        : g_str_has_prefix (*keys, "framework/") ? M2I_MODEL_INFO_FRAMEWORK
        : M2I_MODEL_INFO_CONVERSION;
    if (from)
      *from = (M2iModelInfoOrigin) { src, *keys };
    return v;
  }
  return NULL;
}

static void G_GNUC_PRINTF (4, 5)
warn (Reader *r, const char *key, const char *value, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  gchar *why = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  /* an excerpt of the value, printable whatever the file holds */
  gsize n = strnlen (value, 48);
  gchar *valid = g_utf8_make_valid (value, (gssize) n);
  gchar *shown = g_strescape (valid, NULL);
  g_ptr_array_add (r->warnings, g_strdup_printf ("%s = \"%s%s\": %s; ignored", key, shown,
      value[n] ? "..." : "", why));
  g_free (shown);
  g_free (valid);
  g_free (why);
}

static gboolean
parse_bool (const char *s, gboolean *out)
{
  gchar *t = g_strstrip (g_strndup (s, 16));
  static const char *const yes[] = { "YES", "True", "true", "TRUE", "yes", "1", NULL };
  static const char *const no[] = { "NO", "False", "false", "FALSE", "no", "0", NULL };
  gboolean ok = TRUE;
  if (g_strv_contains (yes, t))
    *out = TRUE;
  else if (g_strv_contains (no, t))
    *out = FALSE;
  else
    ok = FALSE;
  g_free (t);
  return ok;
}

/* A short printable string (model_type, task, layout), NULL when unreadable. */
static gchar *
read_string (Reader *r, const char *key, const char *value)
{
  gsize n = strnlen (value, MAX_STRING + 1);
  if (n > MAX_STRING) {
    warn (r, key, value, "longer than %d bytes", MAX_STRING);
    return NULL;
  }
  for (gsize i = 0; i < n; i++)
    if ((guchar) value[i] < 0x20 || !g_ascii_isprint (value[i])) {
      warn (r, key, value, "a name of printable ASCII characters was expected");
      return NULL;
    }
  gchar *s = g_strstrip (g_strndup (value, n));
  if (!*s) {
    g_free (s);
    return NULL;
  }
  return s;
}

#define KEYS(...) ((const char *const[]) { __VA_ARGS__, NULL })

static void
read_text (Reader *r, const char *const *keys, gchar **out, M2iModelInfoOrigin *from)
{
  M2iModelInfoOrigin o;
  const char *v = lookup (r, keys, &o);
  if (v && (*out = read_string (r, o.key, v)))
    *from = o;
}

static void
read_bool (Reader *r, const char *const *keys, gboolean *out, M2iModelInfoOrigin *from)
{
  M2iModelInfoOrigin o;
  const char *v = lookup (r, keys, &o);
  if (!v)
    return;
  if (parse_bool (v, out))
    *from = o;
  else
    warn (r, o.key, v, "expected True/False (or YES/NO)");
}

/* A number in [@lo, @hi]; an integer when @integer. */
static gboolean
read_number (Reader *r, const char *const *keys, double lo, double hi, gboolean integer,
    double *out, M2iModelInfoOrigin *from)
{
  M2iModelInfoOrigin o;
  const char *v = lookup (r, keys, &o);
  if (!v)
    return FALSE;
  double d;
  guint n;
  /* Ultralytics writes some single values as one-element lists ("[255.0]") */
  if (!infer_parse_numbers (v, &d, 1, &n) || n != 1 || d < lo || d > hi || (integer && d != floor (d))) {
    warn (r, o.key, v, "expected %s %g..%g", integer ? "an integer" : "a number", lo, hi);
    return FALSE;
  }
  *out = d;
  *from = o;
  return TRUE;
}

/* Up to @max numbers in [@lo, @hi] into @out (floats). */
static gboolean
read_floats (Reader *r, const char *const *keys, double lo, double hi, float *out, guint max,
    guint *n_out, M2iModelInfoOrigin *from)
{
  M2iModelInfoOrigin o;
  const char *v = lookup (r, keys, &o);
  if (!v)
    return FALSE;
  double d[M2I_MODEL_INFO_MAX_ANCHORS];
  guint n;
  g_assert (max <= G_N_ELEMENTS (d));
  if (!infer_parse_numbers (v, d, max, &n)) {
    warn (r, o.key, v, "expected a list of at most %u numbers", max);
    return FALSE;
  }
  for (guint i = 0; i < n; i++)
    if (d[i] < lo || d[i] > hi) {
      warn (r, o.key, v, "value %g is outside %g..%g", d[i], lo, hi);
      return FALSE;
    }
  for (guint i = 0; i < n; i++)
    out[i] = (float) d[i];
  *n_out = n;
  *from = o;
  return TRUE;
}

/* Per-channel mean or scale: 0, 1 or 3..4 values; a scale of 0 is refused. */
static void
read_channels (Reader *r, const char *const *keys, gboolean is_scale, float *out, guint *n,
    M2iModelInfoOrigin *from)
{
  M2iModelInfoOrigin o = { 0 };
  float v[M2I_MODEL_INFO_MAX_CHANNELS];
  guint k = 0;
  if (!read_floats (r, keys, -1e6, 1e6, v, M2I_MODEL_INFO_MAX_CHANNELS, &k, &o))
    return;
  for (guint i = 0; i < k; i++)
    if (is_scale && v[i] == 0.0f) {
      warn (r, o.key, lookup (r, keys, NULL), "a scale of 0 divides by zero");
      return;
    }
  if (k == 2) {
    warn (r, o.key, lookup (r, keys, NULL), "1 value or one per channel (3 or 4) was expected");
    return;
  }
  memcpy (out, v, k * sizeof (float));
  *n = k;
  *from = o;
}

static void
read_labels (Reader *r, M2iModelInfo *info)
{
  static const struct { const char *key; M2iLabelsFormat format; } src[] = {
    { "model_info/labels", M2I_LABELS_WORDS },
    { "framework/names", M2I_LABELS_AUTO },
  };
  for (guint i = 0; i < G_N_ELEMENTS (src); i++) {
    M2iModelInfoOrigin o;
    const char *v = lookup (r, (const char *const[]) { src[i].key, NULL }, &o);
    if (!v)
      continue;
    GError *e = NULL;
    gchar **labels = m2i_labels_parse (v, -1, src[i].format, &e);
    if (!labels) {
      warn (r, o.key, v, "%s", e->message);
      g_error_free (e);
      continue;
    }
    info->labels = labels;
    info->n_labels = g_strv_length (labels);
    info->labels_from = o;
    return;
  }
}

static void
read_resize (Reader *r, M2iModelInfo *info)
{
  M2iModelInfoOrigin o;
  const char *v = lookup (r, KEYS ("model_info/resize_type"), &o);
  if (!v)
    return;
  gchar *t = g_strstrip (g_strndup (v, 64));
  if (m2i_resize_type_from_name (t, &info->resize_type))
    info->resize_type_from = o;
  else
    warn (r, o.key, v, "expected standard, fit_to_window, fit_to_window_letterbox or crop");
  g_free (t);
}

static void
read_framework (Reader *r, M2iModelInfo *info)
{
  double d[2];
  guint n;
  M2iModelInfoOrigin o;
  const char *v = lookup (r, KEYS ("framework/imgsz"), &o);
  if (v) {
    if (infer_parse_numbers (v, d, 2, &n) && n >= 1 && d[0] >= 1 && d[0] <= 65536 && d[n - 1] >= 1
        && d[n - 1] <= 65536 && d[0] == floor (d[0]) && d[n - 1] == floor (d[n - 1])) {
      info->imgsz_height = (guint) d[0];
      info->imgsz_width = (guint) d[n - 1];
      info->imgsz_from = o;
    } else {
      warn (r, o.key, v, "expected a size or [height, width] of 1..65536");
    }
  }
  v = lookup (r, KEYS ("framework/stride"), &o);
  if (v) {
    double s[8];
    if (infer_parse_numbers (v, s, G_N_ELEMENTS (s), &n) && n >= 1) {
      double m = 0;
      for (guint i = 0; i < n; i++)
        m = MAX (m, s[i]);
      if (m >= 1 && m <= 4096 && m == floor (m)) {
        info->stride = (guint) m;
        info->stride_from = o;
      } else {
        warn (r, o.key, v, "expected a stride of 1..4096");
      }
    } else {
      warn (r, o.key, v, "expected a stride or a list of strides");
    }
  }
  v = lookup (r, KEYS ("framework/kpt_shape"), &o);
  if (v) {
    if (infer_parse_numbers (v, d, 2, &n) && n == 2 && d[0] >= 1 && d[0] <= 1000
        && (d[1] == 2 || d[1] == 3) && d[0] == floor (d[0])) {
      info->kpt_count = (guint) d[0];
      info->kpt_dims = (guint) d[1];
      info->kpt_shape_from = o;
    } else {
      warn (r, o.key, v, "expected [keypoints, 2 or 3]");
    }
  }
}

static void
read_converted (Reader *r, M2iModelInfo *info)
{
  M2iModelInfoOrigin mean = { 0 }, scale = { 0 }, reverse = { 0 };
  read_channels (r, KEYS ("conversion_parameters/mean_values", "meta_data/cli_parameters/mean_values"),
      FALSE, info->converted_mean_values, &info->n_converted_mean_values, &mean);
  read_channels (r, KEYS ("conversion_parameters/scale_values",
          "meta_data/cli_parameters/scale_values"), TRUE, info->converted_scale_values,
      &info->n_converted_scale_values, &scale);
  read_bool (r, KEYS ("conversion_parameters/reverse_input_channels",
          "meta_data/cli_parameters/reverse_input_channels"),
      &info->converted_reverse_input_channels, &reverse);
  /* "()" and False say that nothing was built in */
  info->converted_from = info->n_converted_mean_values ? mean
      : info->n_converted_scale_values ? scale
      : info->converted_reverse_input_channels ? reverse : (M2iModelInfoOrigin) { 0 };
}

M2iModelInfo *
m2i_model_info_new (const M2iIrModel *model)
{
  M2iModelInfo *info = g_new0 (M2iModelInfo, 1);
  Reader r = { .model = model, .info = info, .warnings = g_ptr_array_new () };
  double d;

  info->confidence_threshold = 0.5f;
  info->iou_threshold = 0.5f;
  info->topk = 1;

  read_text (&r, KEYS ("model_info/model_type"), &info->model_type, &info->model_type_from);
  read_text (&r, KEYS ("framework/task"), &info->task, &info->task_from);
  read_labels (&r, info);
  read_channels (&r, KEYS ("model_info/mean_values"), FALSE, info->mean_values,
      &info->n_mean_values, &info->mean_values_from);
  read_channels (&r, KEYS ("model_info/scale_values"), TRUE, info->scale_values,
      &info->n_scale_values, &info->scale_values_from);
  read_bool (&r, KEYS ("model_info/reverse_input_channels"), &info->reverse_input_channels,
      &info->reverse_input_channels_from);
  read_resize (&r, info);
  if (read_number (&r, KEYS ("model_info/pad_value"), 0, 255, TRUE, &d, &info->pad_value_from))
    info->pad_value = (gint) d;
  read_text (&r, KEYS ("model_info/layout", "conversion_parameters/layout",
          "meta_data/cli_parameters/layout"), &info->layout, &info->layout_from);

  if (read_number (&r, KEYS ("model_info/confidence_threshold"), 0, 1, FALSE, &d,
          &info->confidence_threshold_from))
    info->confidence_threshold = (float) d;
  if (read_number (&r, KEYS ("model_info/iou_threshold"), 0, 1, FALSE, &d,
          &info->iou_threshold_from))
    info->iou_threshold = (float) d;
  read_bool (&r, KEYS ("model_info/agnostic_nms"), &info->agnostic_nms, &info->agnostic_nms_from);
  read_bool (&r, KEYS ("model_info/multilabel"), &info->multilabel, &info->multilabel_from);
  read_bool (&r, KEYS ("model_info/output_raw_scores"), &info->output_raw_scores,
      &info->output_raw_scores_from);
  if (read_number (&r, KEYS ("model_info/topk"), 1, 100000, TRUE, &d, &info->topk_from))
    info->topk = (guint) d;
  M2iModelInfoOrigin o = { 0 };
  if (read_floats (&r, KEYS ("model_info/anchors"), 1e-6, 1e6, info->anchors,
          M2I_MODEL_INFO_MAX_ANCHORS, &info->n_anchors, &o)) {
    if (info->n_anchors % 2)
      warn (&r, o.key, lookup (&r, KEYS ("model_info/anchors"), NULL),
          "anchors are (width, height) pairs: an even count was expected");
    else
      info->anchors_from = o;
  }
  if (!info->anchors_from.key)
    info->n_anchors = 0;
  float masks[M2I_MODEL_INFO_MAX_MASKS];
  if (read_floats (&r, KEYS ("model_info/masks"), 0, M2I_MODEL_INFO_MAX_ANCHORS / 2 - 1, masks,
          M2I_MODEL_INFO_MAX_MASKS, &info->n_masks, &o)) {
    gboolean whole = TRUE;
    for (guint i = 0; i < info->n_masks; i++)
      whole = whole && masks[i] == floorf (masks[i]);
    if (whole) {
      for (guint i = 0; i < info->n_masks; i++)
        info->masks[i] = (gint) masks[i];
      info->masks_from = o;
    } else {
      warn (&r, o.key, lookup (&r, KEYS ("model_info/masks"), NULL),
          "masks are anchor pair indices: integers were expected");
      info->n_masks = 0;
    }
  }
  read_framework (&r, info);
  read_converted (&r, info);

  g_ptr_array_add (r.warnings, NULL);
  info->warnings = (gchar **) g_ptr_array_free (r.warnings, FALSE);
  return info;
}

void
m2i_model_info_free (M2iModelInfo *info)
{
  if (!info)
    return;
  g_free (info->model_type);
  g_free (info->task);
  g_strfreev (info->labels);
  g_free (info->layout);
  g_strfreev (info->warnings);
  g_free (info);
}

/* ---- describing ------------------------------------------------------------------ */

static void
append_floats (GString *s, const float *v, guint n)
{
  for (guint i = 0; i < n; i++)
    g_string_append_printf (s, "%s%g", i ? ", " : "", v[i]);
}

static void
line_end (GString *s, const M2iModelInfoOrigin *from)
{
  g_string_append_printf (s, " (from %s)\n", from->key);
}

gchar *
m2i_model_info_describe (const M2iModelInfo *info)
{
  GString *s = g_string_new (NULL);
  if (info->model_type_from.key) {
    g_string_append_printf (s, "model type = %s", info->model_type);
    line_end (s, &info->model_type_from);
  }
  if (info->task_from.key) {
    g_string_append_printf (s, "task = %s", info->task);
    line_end (s, &info->task_from);
  }
  if (info->labels_from.key) {
    g_string_append_printf (s, "labels = %u (%s%s)", info->n_labels, info->labels[0],
        info->n_labels > 1 ? ", ..." : "");
    line_end (s, &info->labels_from);
  }
  if (info->mean_values_from.key) {
    g_string_append (s, "mean = ");
    append_floats (s, info->mean_values, info->n_mean_values);
    line_end (s, &info->mean_values_from);
  }
  if (info->scale_values_from.key) {
    g_string_append (s, "scale = ");
    append_floats (s, info->scale_values, info->n_scale_values);
    line_end (s, &info->scale_values_from);
  }
  if (info->reverse_input_channels_from.key) {
    g_string_append_printf (s, "channel order = %s",
        info->reverse_input_channels ? "RGB" : "BGR");
    line_end (s, &info->reverse_input_channels_from);
  }
  if (info->resize_type_from.key) {
    g_string_append_printf (s, "resize = %s", m2i_resize_type_name (info->resize_type));
    line_end (s, &info->resize_type_from);
  }
  if (info->pad_value_from.key) {
    g_string_append_printf (s, "pad value = %d", info->pad_value);
    line_end (s, &info->pad_value_from);
  }
  if (info->layout_from.key) {
    g_string_append_printf (s, "layout = %s", info->layout);
    line_end (s, &info->layout_from);
  }
  if (info->confidence_threshold_from.key) {
    g_string_append_printf (s, "confidence threshold = %g", info->confidence_threshold);
    line_end (s, &info->confidence_threshold_from);
  }
  if (info->iou_threshold_from.key) {
    g_string_append_printf (s, "IoU threshold = %g", info->iou_threshold);
    line_end (s, &info->iou_threshold_from);
  }
  if (info->agnostic_nms_from.key) {
    g_string_append_printf (s, "class-agnostic NMS = %s", info->agnostic_nms ? "yes" : "no");
    line_end (s, &info->agnostic_nms_from);
  }
  if (info->multilabel_from.key) {
    g_string_append_printf (s, "multi-label = %s", info->multilabel ? "yes" : "no");
    line_end (s, &info->multilabel_from);
  }
  if (info->output_raw_scores_from.key) {
    g_string_append_printf (s, "raw scores = %s", info->output_raw_scores ? "yes" : "no");
    line_end (s, &info->output_raw_scores_from);
  }
  if (info->topk_from.key) {
    g_string_append_printf (s, "top-k = %u", info->topk);
    line_end (s, &info->topk_from);
  }
  if (info->anchors_from.key) {
    g_string_append (s, "anchors = ");
    append_floats (s, info->anchors, info->n_anchors);
    line_end (s, &info->anchors_from);
  }
  if (info->masks_from.key) {
    g_string_append (s, "masks =");
    for (guint i = 0; i < info->n_masks; i++)
      g_string_append_printf (s, " %d", info->masks[i]);
    line_end (s, &info->masks_from);
  }
  if (info->imgsz_from.key) {
    g_string_append_printf (s, "image size = %ux%u", info->imgsz_width, info->imgsz_height);
    line_end (s, &info->imgsz_from);
  }
  if (info->stride_from.key) {
    g_string_append_printf (s, "stride = %u", info->stride);
    line_end (s, &info->stride_from);
  }
  if (info->kpt_shape_from.key) {
    g_string_append_printf (s, "keypoints = %u x %u", info->kpt_count, info->kpt_dims);
    line_end (s, &info->kpt_shape_from);
  }
  if (info->converted_from.key) {
    g_string_append (s, "inside the model already (converter):");
    if (info->n_converted_mean_values) {
      g_string_append (s, " mean ");
      append_floats (s, info->converted_mean_values, info->n_converted_mean_values);
    }
    if (info->n_converted_scale_values) {
      g_string_append (s, " scale ");
      append_floats (s, info->converted_scale_values, info->n_converted_scale_values);
    }
    if (info->converted_reverse_input_channels)
      g_string_append (s, " channels reversed");
    line_end (s, &info->converted_from);
  }
  for (gchar **w = info->warnings; *w; w++)
    g_string_append_printf (s, "warning: %s\n", *w);
  return g_string_free (s, FALSE);
}
