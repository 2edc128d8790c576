/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gstm2iinferresults.c — region metas and bus messages of m2iinfer, see
 * gstm2iinferresults.h.
 *
 * The structures follow DL Streamer (gvaclassify / gvadetect), so tools
 * written for its metadata read ours:
 *   classification: "classification_layer_name:<output>" with label (string),
 *     label_id (int), confidence (double), layer_name, model_name — one per
 *     head of a multi-head model, on one full-frame region; a multi-label
 *     head's label is its classes joined by spaces, a regression head's the
 *     values as text (DL Streamer's "text" converter), with "values";
 *   detection: "detection" with x_min, x_max, y_min, y_max (double,
 *     normalised to the frame), confidence (double), label_id (int), label;
 *   keypoints (pose models): "keypoints" as DL Streamer's yolo pose
 *     converters write it — type and format strings, dims <K, 2>,
 *     precision 10 (FP32), data_buffer: K (x, y) floats relative to the
 *     box, confidence (floats), point_names and point_connections for
 *     COCO's 17 points;
 *   segmentation: "semantic_mask" (gstm2iregions.h) on the region of the
 *     frame the mask covers.
 * The region meta's roi_type is the label.
 */
#include "gstm2iinferresults.h"
#include "gstm2iregions.h"
#include "gstm2itensormeta.h"

#include <gst/video/gstvideometa.h>
#include <math.h>
#include <string.h>

/* The label of class @id: the labels file's line, else "class-<id>" written
 * into @buf. */
static const char *
label (const char *const *labels, guint n_labels, gint id, char *buf, gsize buf_size)
{
  if (labels && id >= 0 && (guint) id < n_labels)
    return labels[id];
  g_snprintf (buf, buf_size, "class-%d", id);
  return buf;
}

static double
clamp01 (double v)
{
  return v < 0.0 ? 0.0 : v > 1.0 ? 1.0 : v;
}

/* A detection's corners (source pixels) normalised to the frame. */
static void
frame_box (const M2iInferGeometry *g, const M2iInferDetection *d, double box[4])
{
  double w = MAX (g->source_width, 1), h = MAX (g->source_height, 1);
  box[0] = clamp01 (d->x_min / w);
  box[1] = clamp01 (d->y_min / h);
  box[2] = clamp01 (d->x_max / w);
  box[3] = clamp01 (d->y_max / h);
}

/* Pixel rectangle of a normalised box: corners rounded to the nearest
 * pixel edge. */
static void
pixel_rect (const M2iInferGeometry *g, const double box[4], guint *x, guint *y, guint *w,
    guint *h)
{
  double x0 = floor (box[0] * g->source_width + 0.5), y0 = floor (box[1] * g->source_height + 0.5);
  double x1 = floor (box[2] * g->source_width + 0.5), y1 = floor (box[3] * g->source_height + 0.5);
  *x = (guint) x0;
  *y = (guint) y0;
  *w = (guint) (x1 - x0);
  *h = (guint) (y1 - y0);
}

/* A GstValueArray of @n values made by @set (index, value to fill). */
static void
value_array (GValue *arr, guint n, GType type, void (*set) (GValue *, guint, gconstpointer),
    gconstpointer data)
{
  gst_value_array_init (arr, n);
  for (guint i = 0; i < n; i++) {
    GValue v = G_VALUE_INIT;
    g_value_init (&v, type);
    set (&v, i, data);
    gst_value_array_append_and_take_value (arr, &v);
  }
}

typedef struct {
  const M2iInferHead *head;
  char *buf;
} HeadLabels;

static void
set_head_label (GValue *v, guint i, gconstpointer data)
{
  const HeadLabels *hl = data;
  g_value_set_string (v, label (hl->head->labels, hl->head->n_labels,
          hl->head->classes[i].class_id, hl->buf, 32));
}

static void
set_class_id (GValue *v, guint i, gconstpointer data)
{
  g_value_set_int (v, ((const M2iInferHead *) data)->classes[i].class_id);
}

static void
set_class_conf (GValue *v, guint i, gconstpointer data)
{
  g_value_set_double (v, ((const M2iInferHead *) data)->classes[i].confidence);
}

static void
set_head_value (GValue *v, guint i, gconstpointer data)
{
  g_value_set_double (v, ((const M2iInferHead *) data)->values[i]);
}

/* Whether @head has something to say: classes, or values. */
static gboolean
head_has_result (const M2iInferHead *head)
{
  return head->kind == M2I_INFER_HEAD_REGRESSION ? head->n_values > 0 : head->n_classes > 0;
}

/* One head's structure: a classifier's best class (and, with more, its
 * top classes), a multi-label head's classes above the threshold (the
 * label joins them with spaces; none: "" with confidence 0), a regression
 * head's values. */
static GstStructure *
classification_structure (const GstM2iResultContext *ctx, const M2iInferHead *head)
{
  char buf[32], name[256];
  /* GstStructure names must be valid: keep letters, digits and "_-:/." */
  g_snprintf (name, sizeof name, "classification_layer_name:%s", head->output_name);
  g_strcanon (name, G_CSET_a_2_z G_CSET_A_2_Z G_CSET_DIGITS "_-:/.", '_');
  GstStructure *s = gst_structure_new (name, "layer_name", G_TYPE_STRING, head->output_name,
      "model_name", G_TYPE_STRING, ctx->model_name, NULL);
  if (head->kind == M2I_INFER_HEAD_REGRESSION) {
    GString *text = g_string_new (NULL);
    for (guint i = 0; i < head->n_values; i++)
      g_string_append_printf (text, "%s%.2f", i ? ", " : "", (double) head->values[i]);
    GValue arr = G_VALUE_INIT;
    value_array (&arr, head->n_values, G_TYPE_DOUBLE, set_head_value, head);
    gst_structure_set (s, "label", G_TYPE_STRING, text->str, NULL);
    gst_structure_take_value (s, "values", &arr);
    g_string_free (text, TRUE);
    return s;
  }
  const M2iInferClass *c = head->classes;
  guint n = head->n_classes;
  if (head->kind == M2I_INFER_HEAD_MULTI_LABEL) {
    GString *all = g_string_new (NULL);
    for (guint i = 0; i < n; i++)
      g_string_append_printf (all, "%s%s", i ? " " : "",
          label (head->labels, head->n_labels, c[i].class_id, buf, sizeof buf));
    gst_structure_set (s, "label", G_TYPE_STRING, all->str, "label_id", G_TYPE_INT,
        n ? c[0].class_id : -1, "confidence", G_TYPE_DOUBLE, n ? (double) c[0].confidence : 0.0,
        "multi_label", G_TYPE_BOOLEAN, TRUE, NULL);
    g_string_free (all, TRUE);
  } else {
    gst_structure_set (s,
        "label", G_TYPE_STRING, label (head->labels, head->n_labels, c[0].class_id, buf,
            sizeof buf),
        "label_id", G_TYPE_INT, c[0].class_id,
        "confidence", G_TYPE_DOUBLE, (double) c[0].confidence, NULL);
  }
  if (n > 1 || (head->kind == M2I_INFER_HEAD_MULTI_LABEL && n > 0)) {
    GValue labels = G_VALUE_INIT, ids = G_VALUE_INIT, confs = G_VALUE_INIT;
    HeadLabels hl = { head, buf };
    value_array (&labels, n, G_TYPE_STRING, set_head_label, &hl);
    value_array (&ids, n, G_TYPE_INT, set_class_id, head);
    value_array (&confs, n, G_TYPE_DOUBLE, set_class_conf, head);
    gst_structure_take_value (s, "top_labels", &labels);
    gst_structure_take_value (s, "top_label_ids", &ids);
    gst_structure_take_value (s, "top_confidences", &confs);
  }
  return s;
}

static GstStructure *
detection_structure (const GstM2iResultContext *ctx, const M2iInferDetection *d,
    const double box[4])
{
  char buf[32];
  return gst_structure_new ("detection",
      "x_min", G_TYPE_DOUBLE, box[0], "x_max", G_TYPE_DOUBLE, box[2],
      "y_min", G_TYPE_DOUBLE, box[1], "y_max", G_TYPE_DOUBLE, box[3],
      "confidence", G_TYPE_DOUBLE, (double) d->confidence,
      "label_id", G_TYPE_INT, d->class_id,
      "label", G_TYPE_STRING, label (ctx->labels, ctx->n_labels, d->class_id, buf, sizeof buf),
      NULL);
}

/* The first classifier head with a class (the one whose best class
 * names the frame). */
static const M2iInferHead *
classes_head (const M2iInferResult *r)
{
  for (guint i = 0; i < r->n_heads; i++)
    if (r->heads[i].kind == M2I_INFER_HEAD_CLASSES && r->heads[i].n_classes > 0)
      return &r->heads[i];
  return NULL;
}

/* Named keypoint sets: COCO's 17 body keypoints (Ultralytics' pose models)
 * as DL Streamer's "body-pose/coco-17" descriptor lists them, and
 * OpenPose's COCO-18 (the neck added second) in the same spelling, each
 * with its skeleton (pairs of keypoint indices: the limbs drawn). */
static const char *const coco17_names[] = { "nose", "eye_l", "eye_r", "ear_l", "ear_r",
  "shoulder_l", "shoulder_r", "elbow_l", "elbow_r", "wrist_l", "wrist_r", "hip_l", "hip_r",
  "knee_l", "knee_r", "ankle_l", "ankle_r" };
static const guint coco17_skeleton[] = { 0, 1, 0, 2, 1, 3, 2, 4, 3, 5, 4, 6, 5, 6, 5, 7, 6, 8,
  7, 9, 8, 10, 5, 11, 6, 12, 11, 12, 11, 13, 12, 14, 13, 15, 14, 16 };
static const char *const coco18_names[] = { "nose", "neck", "shoulder_r", "elbow_r", "wrist_r",
  "shoulder_l", "elbow_l", "wrist_l", "hip_r", "knee_r", "ankle_r", "hip_l", "knee_l",
  "ankle_l", "eye_r", "eye_l", "ear_r", "ear_l" };
/* OpenPose's rendered COCO pairs (its two ear-shoulder PAFs only help grouping) */
static const guint coco18_skeleton[] = { 1, 2, 1, 5, 2, 3, 3, 4, 5, 6, 6, 7, 1, 8, 8, 9, 9, 10,
  1, 11, 11, 12, 12, 13, 1, 0, 0, 14, 14, 16, 0, 15, 15, 17 };

static const struct {
  const char *format;
  const char *const *names;
  guint n;
  const guint *skeleton;
  guint n_skeleton;
} keypoint_sets[] = {
  { "body-pose/coco-17", coco17_names, G_N_ELEMENTS (coco17_names), coco17_skeleton,
    G_N_ELEMENTS (coco17_skeleton) },
  { "body-pose/coco-18", coco18_names, G_N_ELEMENTS (coco18_names), coco18_skeleton,
    G_N_ELEMENTS (coco18_skeleton) },
};

static void
set_kp_conf (GValue *v, guint i, gconstpointer data)
{
  g_value_set_float (v, ((const M2iInferKeypoint *) data)[i].confidence);
}

static void
set_string_item (GValue *v, guint i, gconstpointer data)
{
  g_value_set_string (v, ((const char *const *) data)[i]);
}

static void
set_uint_item (GValue *v, guint i, gconstpointer data)
{
  g_value_set_uint (v, ((const guint *) data)[i]);
}

/* The "keypoints" structure of detection @d (DL Streamer's layout):
 * positions relative to the box, confidences (-1: not found), names and
 * skeleton of COCO-17 (17 keypoints) or COCO-18 (18, OpenPose). */
static GstStructure *
keypoints_structure (const M2iInferResult *r, const M2iInferDetection *d)
{
  guint n = d->n_keypoints;
  const M2iInferKeypoint *kp = &r->keypoints[d->first_keypoint];
  float bw = d->x_max - d->x_min, bh = d->y_max - d->y_min;
  float *xy = g_new (float, 2 * (gsize) n);
  for (guint k = 0; k < n; k++) {
    xy[2 * k] = bw > 0 ? (kp[k].x - d->x_min) / bw : 0.0f;
    xy[2 * k + 1] = bh > 0 ? (kp[k].y - d->y_min) / bh : 0.0f;
  }
  gint set = -1;
  for (guint i = 0; i < G_N_ELEMENTS (keypoint_sets); i++)
    if (keypoint_sets[i].n == n)
      set = (gint) i;
  GstStructure *s = gst_structure_new ("keypoints", "type", G_TYPE_STRING, "keypoints",
      "format", G_TYPE_STRING, set >= 0 ? keypoint_sets[set].format : "keypoints",
      "precision", G_TYPE_INT, 10, NULL);
  const guint dims[2] = { n, 2 };
  GValue arr = G_VALUE_INIT;
  value_array (&arr, 2, G_TYPE_UINT, set_uint_item, dims);
  gst_structure_take_value (s, "dims", &arr);
  GVariant *v = g_variant_new_fixed_array (G_VARIANT_TYPE_BYTE, xy, 2 * (gsize) n * sizeof (float),
      1);
  gst_structure_set (s, "data_buffer", G_TYPE_VARIANT, v, NULL);
  value_array (&arr, n, G_TYPE_FLOAT, set_kp_conf, kp);
  gst_structure_take_value (s, "confidence", &arr);
  if (set >= 0) {
    value_array (&arr, n, G_TYPE_STRING, set_string_item, keypoint_sets[set].names);
    gst_structure_take_value (s, "point_names", &arr);
    value_array (&arr, keypoint_sets[set].n_skeleton, G_TYPE_UINT, set_uint_item,
        keypoint_sets[set].skeleton);
    gst_structure_take_value (s, "point_connections", &arr);
  }
  g_free (xy);
  return s;
}

/* The part of the frame the mask covers (the model input mapped back
 * through the resize, letterbox and crop, clipped to the frame) in frame
 * pixels *@rx..@rw, and the mask cells it holds (u0, v0, cw, ch). FALSE
 * when nothing of the mask lies in the frame. */
static gboolean
mask_window (const M2iInferGeometry *g, const M2iInferMask *m, guint rect[4], guint cells[4])
{
  double fx0 = g->crop_x + (0 - g->pad_x) / g->scale_x;
  double fy0 = g->crop_y + (0 - g->pad_y) / g->scale_y;
  double fx1 = g->crop_x + (g->model_width - g->pad_x) / g->scale_x;
  double fy1 = g->crop_y + (g->model_height - g->pad_y) / g->scale_y;
  fx0 = CLAMP (fx0, 0, g->source_width);
  fx1 = CLAMP (fx1, 0, g->source_width);
  fy0 = CLAMP (fy0, 0, g->source_height);
  fy1 = CLAMP (fy1, 0, g->source_height);
  /* back to mask cells: model pixel = (frame - crop) * scale + pad */
  double cx = (double) m->width / g->model_width, cy = (double) m->height / g->model_height;
  gint u0 = (gint) floor (((fx0 - g->crop_x) * g->scale_x + g->pad_x) * cx + 1e-6);
  gint v0 = (gint) floor (((fy0 - g->crop_y) * g->scale_y + g->pad_y) * cy + 1e-6);
  gint u1 = (gint) ceil (((fx1 - g->crop_x) * g->scale_x + g->pad_x) * cx - 1e-6);
  gint v1 = (gint) ceil (((fy1 - g->crop_y) * g->scale_y + g->pad_y) * cy - 1e-6);
  u0 = CLAMP (u0, 0, (gint) m->width);
  u1 = CLAMP (u1, 0, (gint) m->width);
  v0 = CLAMP (v0, 0, (gint) m->height);
  v1 = CLAMP (v1, 0, (gint) m->height);
  rect[0] = (guint) floor (fx0 + 0.5);
  rect[1] = (guint) floor (fy0 + 0.5);
  rect[2] = (guint) floor (fx1 + 0.5) - rect[0];
  rect[3] = (guint) floor (fy1 + 0.5) - rect[1];
  cells[0] = (guint) u0;
  cells[1] = (guint) v0;
  cells[2] = (guint) (u1 - u0);
  cells[3] = (guint) (v1 - v0);
  return rect[2] > 0 && rect[3] > 0 && cells[2] > 0 && cells[3] > 0;
}

/* The "semantic_mask" structure (gstm2iregions.h) of the mask's cells
 * @cells (u0, v0, w, h). */
static GstStructure *
mask_structure (const GstM2iResultContext *ctx, const M2iInferMask *m, const guint cells[4])
{
  gsize n = (gsize) cells[2] * cells[3];
  guint16 *map = g_new (guint16, n);
  for (guint v = 0; v < cells[3]; v++)
    memcpy (map + (gsize) v * cells[2], m->class_map + (gsize) (cells[1] + v) * m->width
        + cells[0], cells[2] * sizeof (guint16));
  GVariant *var = g_variant_new_fixed_array (G_VARIANT_TYPE_BYTE, map, n * 2, 1);
  g_free (map);
  GstStructure *s = gst_structure_new ("semantic_mask", "format", G_TYPE_STRING,
      "semantic_mask", "width", G_TYPE_UINT, cells[2], "height", G_TYPE_UINT, cells[3],
      "n_classes", G_TYPE_UINT, MAX (m->n_classes, ctx->n_labels), "precision",
      G_TYPE_STRING, "U16", "data_buffer", G_TYPE_VARIANT, var, "model_name", G_TYPE_STRING,
      ctx->model_name, NULL);
  return s;
}

gboolean
gst_m2i_results_classify_region (GstVideoRegionOfInterestMeta *roi,
    const GstM2iResultContext *ctx, const M2iInferResult *r)
{
  guint n = 0;
  for (guint i = 0; i < r->n_heads; i++) {
    const M2iInferHead *head = &r->heads[i];
    if (!head_has_result (head))
      continue;
    gst_video_region_of_interest_meta_add_param (roi, classification_structure (ctx, head));
    n++;
  }
  return n > 0;
}

void
gst_m2i_results_add_detections (GstBuffer *buf, const GstM2iResultContext *ctx,
    const M2iInferResult *r, gint first_id, gint parent_id)
{
  const M2iInferGeometry *g = &r->geometry;
  if (!ctx->has_frame || g->source_width <= 0 || g->source_height <= 0)
    return;
  char lbuf[32];
  for (guint i = 0; i < r->n_detections; i++) {
    const M2iInferDetection *d = &r->detections[i];
    double box[4];
    guint x, y, w, h;
    frame_box (g, d, box);
    pixel_rect (g, box, &x, &y, &w, &h);
    GstVideoRegionOfInterestMeta *roi = gst_buffer_add_video_region_of_interest_meta (buf,
        label (ctx->labels, ctx->n_labels, d->class_id, lbuf, sizeof lbuf), x, y, w, h);
    roi->id = first_id + (gint) i;
    roi->parent_id = parent_id;
    gst_video_region_of_interest_meta_add_param (roi, detection_structure (ctx, d, box));
    if (d->n_keypoints)
      gst_video_region_of_interest_meta_add_param (roi, keypoints_structure (r, d));
  }
}

static void
set_kp_x (GValue *v, guint i, gconstpointer data)
{
  g_value_set_double (v, ((const M2iInferKeypoint *) data)[i].x);
}

static void
set_kp_y (GValue *v, guint i, gconstpointer data)
{
  g_value_set_double (v, ((const M2iInferKeypoint *) data)[i].y);
}

static void
set_kp_c (GValue *v, guint i, gconstpointer data)
{
  g_value_set_double (v, ((const M2iInferKeypoint *) data)[i].confidence);
}

/* A message object's keypoints in frame pixels: keypoints_x, _y,
 * _confidence. */
static void
add_keypoint_arrays (GstStructure *obj, const M2iInferResult *r, const M2iInferDetection *d)
{
  const M2iInferKeypoint *kp = &r->keypoints[d->first_keypoint];
  GValue arr = G_VALUE_INIT;
  value_array (&arr, d->n_keypoints, G_TYPE_DOUBLE, set_kp_x, kp);
  gst_structure_take_value (obj, "keypoints_x", &arr);
  value_array (&arr, d->n_keypoints, G_TYPE_DOUBLE, set_kp_y, kp);
  gst_structure_take_value (obj, "keypoints_y", &arr);
  value_array (&arr, d->n_keypoints, G_TYPE_DOUBLE, set_kp_c, kp);
  gst_structure_take_value (obj, "keypoints_confidence", &arr);
}

/* The message's mask summary: the frame rectangle and the cells covering
 * it, and per class present its share of those cells (best first). */
static void
add_mask_summary (GstStructure *s, const GstM2iResultContext *ctx, const M2iInferMask *m,
    const guint rect[4], const guint cells[4])
{
  guint n_classes = MIN (MAX (m->n_classes, ctx->n_labels), 65536);
  guint *count = g_new0 (guint, MAX (n_classes, 1) + 1);
  gsize total = (gsize) cells[2] * cells[3];
  for (guint v = 0; v < cells[3]; v++)
    for (guint u = 0; u < cells[2]; u++) {
      guint c = m->class_map[(gsize) (cells[1] + v) * m->width + cells[0] + u];
      count[MIN (c, n_classes)]++;
    }
  GValue list = G_VALUE_INIT;
  gst_value_list_init (&list, 8);
  for (;;) {
    guint best = n_classes + 1;
    for (guint c = 0; c <= n_classes; c++)
      if (count[c] && (best > n_classes || count[c] > count[best]))
        best = c;
    if (best > n_classes)
      break;
    char buf[32];
    GstStructure *cs = gst_structure_new ("class", "label", G_TYPE_STRING,
        label (ctx->labels, ctx->n_labels, (gint) best, buf, sizeof buf), "label_id", G_TYPE_INT,
        (gint) best, "fraction", G_TYPE_DOUBLE, (double) count[best] / (double) total, NULL);
    count[best] = 0;
    GValue v = G_VALUE_INIT;
    g_value_init (&v, GST_TYPE_STRUCTURE);
    g_value_take_boxed (&v, cs);
    gst_value_list_append_and_take_value (&list, &v);
  }
  g_free (count);
  gst_structure_set (s, "mask_x", G_TYPE_UINT, rect[0], "mask_y", G_TYPE_UINT, rect[1],
      "mask_width", G_TYPE_UINT, rect[2], "mask_height", G_TYPE_UINT, rect[3],
      "mask_cells_width", G_TYPE_UINT, cells[2], "mask_cells_height", G_TYPE_UINT, cells[3],
      NULL);
  gst_structure_take_value (s, "mask_classes", &list);
}

static void
attach_results (GstBuffer *buf, const GstM2iResultContext *ctx, const M2iInferResult *r)
{
  const M2iInferGeometry *g = &r->geometry;
  if (!ctx->has_frame || g->source_width <= 0 || g->source_height <= 0)
    return;
  char lbuf[32];
  /* every head on one full-frame region, named by the first classifier's class */
  const M2iInferHead *head = classes_head (r);
  for (guint i = 0; i < r->n_heads; i++)
    if (head_has_result (&r->heads[i])) {
      gst_m2i_results_classify_region (gst_buffer_add_video_region_of_interest_meta (buf, head
              ? label (head->labels, head->n_labels, head->classes[0].class_id, lbuf,
                  sizeof lbuf) : ctx->model_name, 0, 0, (guint) g->source_width,
              (guint) g->source_height), ctx, r);
      break;
    }
  gst_m2i_results_add_detections (buf, ctx, r, 0, 0);
  guint rect[4], cells[4];
  if (r->has_mask && mask_window (g, &r->mask, rect, cells)) {
    GstVideoRegionOfInterestMeta *roi = gst_buffer_add_video_region_of_interest_meta (buf,
        "semantic_mask", rect[0], rect[1], rect[2], rect[3]);
    gst_video_region_of_interest_meta_add_param (roi, mask_structure (ctx, &r->mask, cells));
  }
}

static GstStructure *
result_message (const GstM2iResultContext *ctx, const M2iInferResult *r, guint64 frame,
    GstClockTime pts)
{
  GstStructure *s = gst_structure_new ("m2iinfer",
      "frame", G_TYPE_UINT64, frame,
      "timestamp", G_TYPE_UINT64, (guint64) pts,
      "model", G_TYPE_STRING, ctx->model_name, NULL);
  const M2iInferHead *head = classes_head (r);
  if (head) {
    char buf[32];
    const M2iInferClass *c = head->classes;
    gst_structure_set (s,
        "label", G_TYPE_STRING, label (head->labels, head->n_labels, c[0].class_id, buf,
            sizeof buf),
        "label_id", G_TYPE_INT, c[0].class_id,
        "confidence", G_TYPE_DOUBLE, (double) c[0].confidence, NULL);
    if (head->n_classes > 1) {
      GstStructure *cs = classification_structure (ctx, head);
      gst_structure_set_value (s, "top_labels", gst_structure_get_value (cs, "top_labels"));
      gst_structure_set_value (s, "top_confidences",
          gst_structure_get_value (cs, "top_confidences"));
      gst_structure_free (cs);
    }
  }
  if (ctx->detector) {
    const M2iInferGeometry *g = &r->geometry;
    GValue list = G_VALUE_INIT;
    gst_value_list_init (&list, r->n_detections);
    for (guint i = 0; i < r->n_detections; i++) {
      double box[4];
      guint x = 0, y = 0, w = 0, h = 0;
      frame_box (g, &r->detections[i], box);
      GstStructure *d = detection_structure (ctx, &r->detections[i], box);
      if (ctx->has_frame && g->source_width > 0 && g->source_height > 0) {
        pixel_rect (g, box, &x, &y, &w, &h);
        gst_structure_set (d, "x", G_TYPE_UINT, x, "y", G_TYPE_UINT, y, "width", G_TYPE_UINT, w,
            "height", G_TYPE_UINT, h, NULL);
      }
      if (r->detections[i].n_keypoints)
        add_keypoint_arrays (d, r, &r->detections[i]);
      GValue v = G_VALUE_INIT;
      g_value_init (&v, GST_TYPE_STRUCTURE);
      g_value_take_boxed (&v, d);
      gst_value_list_append_and_take_value (&list, &v);
    }
    gst_structure_set (s, "n_objects", G_TYPE_UINT, r->n_detections, NULL);
    gst_structure_take_value (s, "objects", &list);
  }
  /* heads beyond a plain classifier's: every head's structure */
  if (r->n_heads > 1 || (r->n_heads == 1 && r->heads[0].kind != M2I_INFER_HEAD_CLASSES)) {
    GValue list = G_VALUE_INIT;
    gst_value_list_init (&list, r->n_heads);
    for (guint i = 0; i < r->n_heads; i++) {
      if (!head_has_result (&r->heads[i]) && r->heads[i].kind != M2I_INFER_HEAD_MULTI_LABEL)
        continue;
      GValue v = G_VALUE_INIT;
      g_value_init (&v, GST_TYPE_STRUCTURE);
      g_value_take_boxed (&v, classification_structure (ctx, &r->heads[i]));
      gst_value_list_append_and_take_value (&list, &v);
    }
    gst_structure_take_value (s, "heads", &list);
  }
  guint rect[4], cells[4];
  if (r->has_mask && mask_window (&r->geometry, &r->mask, rect, cells))
    add_mask_summary (s, ctx, &r->mask, rect, cells);
  return s;
}

void
gst_m2i_result_context_init (GstM2iResultContext *ctx, M2iInferSession *session)
{
  M2iInferModel *m = m2i_infer_session_get_model (session);
  M2iIrModel *ir = m2i_infer_model_get_ir (m);
  gint n_out = m2i_ir_model_get_n_outputs (ir);
  ctx->model_name = m2i_infer_model_get_name (m);
  ctx->labels = m2i_infer_model_get_labels (m, &ctx->n_labels);
  if (!ctx->labels)               /* the decoder's own ("person" of openpose) */
    ctx->labels = m2i_decoder_get_default_labels (m2i_infer_session_get_decoder (session),
        &ctx->n_labels);
  ctx->output_names = g_new0 (const gchar *, MAX (n_out, 1));
  for (gint i = 0; i < n_out; i++)
    ctx->output_names[i] = m2i_ir_model_get_output (ir, i)->name;
  /* a decoder that can give detections lists them (even none) */
  ctx->detector = m2i_infer_session_get_result (session)->detections_capacity > 0;
  ctx->has_frame = TRUE;
}

void
gst_m2i_result_context_clear (GstM2iResultContext *ctx)
{
  g_free (ctx->output_names);
  memset (ctx, 0, sizeof *ctx);
}

void
gst_m2i_publish_results (GstElement *element, GstBuffer *buf, const GstM2iResultContext *ctx,
    M2iInferSession *session, guint64 frame, GstClockTime pts, gboolean post)
{
  const M2iInferResult *r = m2i_infer_session_get_result (session);
  if (buf) {
    guint n;
    const M2iTensor *outputs = m2i_infer_session_get_outputs (session, &n);
    gst_buffer_add_m2i_tensor_meta (buf, ctx->model_name, n, outputs, ctx->output_names);
    attach_results (buf, ctx, r);
  }
  if (post)
    gst_element_post_message (element, gst_message_new_element (GST_OBJECT (element),
            result_message (ctx, r, frame, pts)));
}
