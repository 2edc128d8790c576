/* gstm2iinferresults.c — region metas and bus messages of m2iinfer, see
 * gstm2iinferresults.h.
 *
 * The structures follow DL Streamer (gvaclassify / gvadetect), so tools
 * written for its metadata read ours:
 *   classification: "classification_layer_name:<output>" with label (string),
 *     label_id (int), confidence (double), layer_name, model_name;
 *   detection: "detection" with x_min, x_max, y_min, y_max (double,
 *     normalised to the frame), confidence (double), label_id (int), label.
 * The region meta's roi_type is the label.
 */
#include "gstm2iinferresults.h"
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

static GstStructure *
classification_structure (const GstM2iResultContext *ctx, const M2iInferHead *head)
{
  char buf[32], name[256];
  /* GstStructure names must be valid: keep letters, digits and "_-:/." */
  g_snprintf (name, sizeof name, "classification_layer_name:%s", head->output_name);
  g_strcanon (name, G_CSET_a_2_z G_CSET_A_2_Z G_CSET_DIGITS "_-:/.", '_');
  const M2iInferClass *c = head->classes;
  GstStructure *s = gst_structure_new (name,
      "label", G_TYPE_STRING, label (head->labels, head->n_labels, c[0].class_id, buf, sizeof buf),
      "label_id", G_TYPE_INT, c[0].class_id,
      "confidence", G_TYPE_DOUBLE, (double) c[0].confidence,
      "layer_name", G_TYPE_STRING, head->output_name,
      "model_name", G_TYPE_STRING, ctx->model_name, NULL);
  guint n = head->n_classes;
  if (n > 1) {
    GValue labels = G_VALUE_INIT, ids = G_VALUE_INIT, confs = G_VALUE_INIT;
    gst_value_array_init (&labels, n);
    gst_value_array_init (&ids, n);
    gst_value_array_init (&confs, n);
    for (guint i = 0; i < n; i++) {
      GValue v = G_VALUE_INIT;
      g_value_init (&v, G_TYPE_STRING);
      g_value_set_string (&v, label (head->labels, head->n_labels, c[i].class_id, buf,
              sizeof buf));
      gst_value_array_append_and_take_value (&labels, &v);
      g_value_init (&v, G_TYPE_INT);
      g_value_set_int (&v, c[i].class_id);
      gst_value_array_append_and_take_value (&ids, &v);
      g_value_init (&v, G_TYPE_DOUBLE);
      g_value_set_double (&v, c[i].confidence);
      gst_value_array_append_and_take_value (&confs, &v);
    }
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

/* The classification head, if the result has one with a class. */
static const M2iInferHead *
classes_head (const M2iInferResult *r)
{
  return r->n_heads > 0 && r->heads[0].kind == M2I_INFER_HEAD_CLASSES
      && r->heads[0].n_classes > 0 ? &r->heads[0] : NULL;
}

gboolean
gst_m2i_results_classify_region (GstVideoRegionOfInterestMeta *roi,
    const GstM2iResultContext *ctx, const M2iInferResult *r)
{
  guint n = 0;
  for (guint i = 0; i < r->n_heads; i++) {
    const M2iInferHead *head = &r->heads[i];
    if (head->kind == M2I_INFER_HEAD_REGRESSION || head->n_classes == 0)
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
  }
}

static void
attach_results (GstBuffer *buf, const GstM2iResultContext *ctx, const M2iInferResult *r)
{
  const M2iInferGeometry *g = &r->geometry;
  if (!ctx->has_frame || g->source_width <= 0 || g->source_height <= 0)
    return;
  char lbuf[32];
  const M2iInferHead *head = classes_head (r);
  if (head)
    gst_m2i_results_classify_region (gst_buffer_add_video_region_of_interest_meta (buf,
            label (head->labels, head->n_labels, head->classes[0].class_id, lbuf, sizeof lbuf),
            0, 0, (guint) g->source_width, (guint) g->source_height), ctx, r);
  gst_m2i_results_add_detections (buf, ctx, r, 0, 0);
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
      GValue v = G_VALUE_INIT;
      g_value_init (&v, GST_TYPE_STRUCTURE);
      g_value_take_boxed (&v, d);
      gst_value_list_append_and_take_value (&list, &v);
    }
    gst_structure_set (s, "n_objects", G_TYPE_UINT, r->n_detections, NULL);
    gst_structure_take_value (s, "objects", &list);
  }
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
