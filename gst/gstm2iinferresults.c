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

#include <gst/video/gstvideometa.h>
#include <math.h>

gchar *
gst_m2i_classification_name (const char *output_name)
{
  gchar *name = g_strdup_printf ("classification_layer_name:%s", output_name);
  /* GstStructure names must be valid: keep letters, digits and "_-:/." */
  g_strcanon (name, G_CSET_a_2_z G_CSET_A_2_Z G_CSET_DIGITS "_-:/.", '_');
  return name;
}

const char *
gst_m2i_result_label (const GstM2iResultContext *ctx, gint id, char *buf, gsize buf_size)
{
  if (ctx->labels && id >= 0 && (guint) id < ctx->n_labels)
    return ctx->labels[id];
  g_snprintf (buf, buf_size, "class-%d", id);
  return buf;
}

static double
clamp01 (double v)
{
  return v < 0.0 ? 0.0 : v > 1.0 ? 1.0 : v;
}

/* A detection's corners normalised to the frame. */
static void
frame_box (const GstM2iFrameMap *map, const GstM2iDetection *d, double box[4])
{
  box[0] = clamp01 ((d->x_min - map->x0) / map->sx);
  box[1] = clamp01 ((d->y_min - map->y0) / map->sy);
  box[2] = clamp01 ((d->x_max - map->x0) / map->sx);
  box[3] = clamp01 ((d->y_max - map->y0) / map->sy);
}

/* Pixel rectangle of a normalised box: corners rounded to the nearest
 * pixel edge. */
static void
pixel_rect (const GstM2iFrameMap *map, const double box[4], guint *x, guint *y, guint *w,
    guint *h)
{
  double x0 = floor (box[0] * map->width + 0.5), y0 = floor (box[1] * map->height + 0.5);
  double x1 = floor (box[2] * map->width + 0.5), y1 = floor (box[3] * map->height + 0.5);
  *x = (guint) x0;
  *y = (guint) y0;
  *w = (guint) (x1 - x0);
  *h = (guint) (y1 - y0);
}

static GstStructure *
classification_structure (const GstM2iResultContext *ctx, const GstM2iClass *classes, guint n)
{
  char buf[32];
  GstStructure *s = gst_structure_new (ctx->classification_name,
      "label", G_TYPE_STRING, gst_m2i_result_label (ctx, classes[0].class_id, buf, sizeof buf),
      "label_id", G_TYPE_INT, classes[0].class_id,
      "confidence", G_TYPE_DOUBLE, (double) classes[0].confidence,
      "layer_name", G_TYPE_STRING, ctx->output_name,
      "model_name", G_TYPE_STRING, ctx->model_name, NULL);
  if (n > 1) {
    GValue labels = G_VALUE_INIT, ids = G_VALUE_INIT, confs = G_VALUE_INIT;
    gst_value_array_init (&labels, n);
    gst_value_array_init (&ids, n);
    gst_value_array_init (&confs, n);
    for (guint i = 0; i < n; i++) {
      GValue v = G_VALUE_INIT;
      g_value_init (&v, G_TYPE_STRING);
      g_value_set_string (&v, gst_m2i_result_label (ctx, classes[i].class_id, buf, sizeof buf));
      gst_value_array_append_and_take_value (&labels, &v);
      g_value_init (&v, G_TYPE_INT);
      g_value_set_int (&v, classes[i].class_id);
      gst_value_array_append_and_take_value (&ids, &v);
      g_value_init (&v, G_TYPE_DOUBLE);
      g_value_set_double (&v, classes[i].confidence);
      gst_value_array_append_and_take_value (&confs, &v);
    }
    gst_structure_take_value (s, "top_labels", &labels);
    gst_structure_take_value (s, "top_label_ids", &ids);
    gst_structure_take_value (s, "top_confidences", &confs);
  }
  return s;
}

void
gst_m2i_attach_classification (GstBuffer *buf, const GstM2iResultContext *ctx,
    const GstM2iFrameMap *map, const GstM2iClass *classes, guint n)
{
  if (n == 0 || map->width <= 0 || map->height <= 0)
    return;
  char lbuf[32];
  GstVideoRegionOfInterestMeta *roi = gst_buffer_add_video_region_of_interest_meta (buf,
      gst_m2i_result_label (ctx, classes[0].class_id, lbuf, sizeof lbuf), 0, 0,
      (guint) map->width, (guint) map->height);
  gst_video_region_of_interest_meta_add_param (roi,
      classification_structure (ctx, classes, n));
}

static GstStructure *
detection_structure (const GstM2iResultContext *ctx, const GstM2iDetection *d,
    const double box[4])
{
  char buf[32];
  return gst_structure_new ("detection",
      "x_min", G_TYPE_DOUBLE, box[0], "x_max", G_TYPE_DOUBLE, box[2],
      "y_min", G_TYPE_DOUBLE, box[1], "y_max", G_TYPE_DOUBLE, box[3],
      "confidence", G_TYPE_DOUBLE, (double) d->confidence,
      "label_id", G_TYPE_INT, d->class_id,
      "label", G_TYPE_STRING, gst_m2i_result_label (ctx, d->class_id, buf, sizeof buf), NULL);
}

void
gst_m2i_attach_detections (GstBuffer *buf, const GstM2iResultContext *ctx,
    const GstM2iFrameMap *map, const GstM2iDetection *dets, guint n)
{
  if (map->width <= 0 || map->height <= 0)
    return;
  for (guint i = 0; i < n; i++) {
    double box[4];
    guint x, y, w, h;
    char lbuf[32];
    frame_box (map, &dets[i], box);
    pixel_rect (map, box, &x, &y, &w, &h);
    GstVideoRegionOfInterestMeta *roi = gst_buffer_add_video_region_of_interest_meta (buf,
        gst_m2i_result_label (ctx, dets[i].class_id, lbuf, sizeof lbuf), x, y, w, h);
    roi->id = (gint) i;
    gst_video_region_of_interest_meta_add_param (roi, detection_structure (ctx, &dets[i], box));
  }
}

GstStructure *
gst_m2i_result_message (const GstM2iResultContext *ctx, const GstM2iFrameMap *map,
    guint64 frame, GstClockTime pts, const GstM2iClass *classes, const GstM2iDetection *dets,
    guint n)
{
  GstStructure *s = gst_structure_new ("m2iinfer",
      "frame", G_TYPE_UINT64, frame,
      "timestamp", G_TYPE_UINT64, (guint64) pts,
      "model", G_TYPE_STRING, ctx->model_name, NULL);
  if (classes && n > 0) {
    char buf[32];
    gst_structure_set (s,
        "label", G_TYPE_STRING, gst_m2i_result_label (ctx, classes[0].class_id, buf, sizeof buf),
        "label_id", G_TYPE_INT, classes[0].class_id,
        "confidence", G_TYPE_DOUBLE, (double) classes[0].confidence, NULL);
    if (n > 1) {
      GstStructure *c = classification_structure (ctx, classes, n);
      gst_structure_set_value (s, "top_labels", gst_structure_get_value (c, "top_labels"));
      gst_structure_set_value (s, "top_confidences",
          gst_structure_get_value (c, "top_confidences"));
      gst_structure_free (c);
    }
  }
  if (dets) {
    GValue list = G_VALUE_INIT;
    gst_value_list_init (&list, n);
    for (guint i = 0; i < n; i++) {
      double box[4];
      guint x = 0, y = 0, w = 0, h = 0;
      frame_box (map, &dets[i], box);
      GstStructure *d = detection_structure (ctx, &dets[i], box);
      if (map->width > 0 && map->height > 0) {
        pixel_rect (map, box, &x, &y, &w, &h);
        gst_structure_set (d, "x", G_TYPE_UINT, x, "y", G_TYPE_UINT, y, "width", G_TYPE_UINT, w,
            "height", G_TYPE_UINT, h, NULL);
      }
      GValue v = G_VALUE_INIT;
      g_value_init (&v, GST_TYPE_STRUCTURE);
      g_value_take_boxed (&v, d);
      gst_value_list_append_and_take_value (&list, &v);
    }
    gst_structure_set (s, "n_objects", G_TYPE_UINT, n, NULL);
    gst_structure_take_value (s, "objects", &list);
  }
  return s;
}
