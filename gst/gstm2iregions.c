/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gstm2iregions.c — the region metas the analytics elements share, see
 * gstm2iregions.h. */
#include "gstm2iregions.h"

#include <math.h>
#include <string.h>

gboolean
gst_m2i_caps_frame_size (GstElement *el, GstCaps *caps, gint *width, gint *height)
{
  GstVideoInfo info;
  if (!gst_video_info_from_caps (&info, caps)) {
    GST_ELEMENT_ERROR (el, CORE, NEGOTIATION, ("%s cannot read the video caps %" GST_PTR_FORMAT,
            GST_ELEMENT_NAME (el), caps), ("upstream must give video/x-raw with width and "
            "height"));
    return FALSE;
  }
  *width = GST_VIDEO_INFO_WIDTH (&info);
  *height = GST_VIDEO_INFO_HEIGHT (&info);
  return TRUE;
}

GstStructure *
gst_m2i_region_detection (GstVideoRegionOfInterestMeta *roi)
{
  return gst_video_region_of_interest_meta_get_param (roi, "detection");
}

void
gst_m2i_region_box (GstVideoRegionOfInterestMeta *roi, gint width, gint height, double box[4])
{
  GstStructure *det = gst_m2i_region_detection (roi);
  double n[4];
  if (det && gst_structure_get_double (det, "x_min", &n[0])
      && gst_structure_get_double (det, "y_min", &n[1])
      && gst_structure_get_double (det, "x_max", &n[2])
      && gst_structure_get_double (det, "y_max", &n[3])) {
    box[0] = n[0] * width;
    box[1] = n[1] * height;
    box[2] = n[2] * width;
    box[3] = n[3] * height;
    return;
  }
  box[0] = roi->x;
  box[1] = roi->y;
  box[2] = (double) roi->x + roi->w;
  box[3] = (double) roi->y + roi->h;
}

gboolean
gst_m2i_region_get_object_id (GstVideoRegionOfInterestMeta *roi, gint *id)
{
  GstStructure *s = gst_video_region_of_interest_meta_get_param (roi, "object_id");
  gint v;
  if (!s || !gst_structure_get_int (s, "id", &v) || v <= 0)
    return FALSE;
  *id = v;
  return TRUE;
}

void
gst_m2i_region_set_object_id (GstVideoRegionOfInterestMeta *roi, gint id, gboolean predicted)
{
  GstStructure *s = gst_video_region_of_interest_meta_get_param (roi, "object_id");
  if (s)
    gst_structure_set (s, "id", G_TYPE_INT, id, "predicted", G_TYPE_BOOLEAN, predicted, NULL);
  else
    gst_video_region_of_interest_meta_add_param (roi, gst_structure_new ("object_id",
            "id", G_TYPE_INT, id, "predicted", G_TYPE_BOOLEAN, predicted, NULL));
}

gboolean
gst_m2i_structure_is_classification (const GstStructure *s)
{
  return gst_structure_has_field_typed (s, "label", G_TYPE_STRING)
      && gst_structure_has_field_typed (s, "model_name", G_TYPE_STRING);
}

/* The bytes of @s's "data_buffer" (a GVariant "ay") and their count, or
 * NULL. */
static const guint8 *
data_buffer (const GstStructure *s, gsize *size)
{
  const GValue *v = gst_structure_get_value (s, "data_buffer");
  if (!v || !G_VALUE_HOLDS_VARIANT (v))
    return NULL;
  GVariant *var = g_value_get_variant (v);
  if (!var || !g_variant_is_of_type (var, G_VARIANT_TYPE_BYTESTRING))
    return NULL;
  const guint8 *data = g_variant_get_fixed_array (var, size, 1);
  return data ? data : (const guint8 *) "";
}

gboolean
gst_m2i_mask_structure_parse (const GstStructure *s, GstM2iMaskView *view)
{
  const gchar *format = gst_structure_get_string (s, "format");
  const gchar *precision = gst_structure_get_string (s, "precision");
  guint w, h, n;
  if (g_strcmp0 (format, "semantic_mask") != 0 || g_strcmp0 (precision, "U16") != 0
      || !gst_structure_get_uint (s, "width", &w) || !gst_structure_get_uint (s, "height", &h)
      || !gst_structure_get_uint (s, "n_classes", &n) || w == 0 || h == 0
      || w > G_MAXSIZE / 2 / h)
    return FALSE;
  gsize size;
  const guint8 *data = data_buffer (s, &size);
  if (!data || size != (gsize) w * h * 2 || ((guintptr) data & 1) != 0)
    return FALSE;
  view->width = w;
  view->height = h;
  view->n_classes = n;
  view->class_map = (const guint16 *) data;
  return TRUE;
}

#define MAX_KEYPOINTS 4096

/* @v is a GstValueArray of @n values of @type (any length when @n is 0). */
static gboolean
value_array_of (const GValue *v, GType type, guint n)
{
  if (!GST_VALUE_HOLDS_ARRAY (v))
    return FALSE;
  guint len = gst_value_array_get_size (v);
  if (n && len != n)
    return FALSE;
  for (guint i = 0; i < len; i++)
    if (!G_VALUE_HOLDS (gst_value_array_get_value (v, i), type))
      return FALSE;
  return TRUE;
}

gboolean
gst_m2i_keypoints_structure_parse (const GstStructure *s, GstM2iKeypointsView *view)
{
  if (g_strcmp0 (gst_structure_get_string (s, "type"), "keypoints") != 0)
    return FALSE;
  const GValue *dims = gst_structure_get_value (s, "dims");
  if (!dims || !value_array_of (dims, G_TYPE_UINT, 2))
    return FALSE;
  guint n = g_value_get_uint (gst_value_array_get_value (dims, 0));
  if (n == 0 || n > MAX_KEYPOINTS || g_value_get_uint (gst_value_array_get_value (dims, 1)) != 2)
    return FALSE;
  gsize size;
  const guint8 *data = data_buffer (s, &size);
  if (!data || size != (gsize) n * 2 * sizeof (float))
    return FALSE;
  const GValue *conf = gst_structure_get_value (s, "confidence");
  const GValue *names = gst_structure_get_value (s, "point_names");
  const GValue *pairs = gst_structure_get_value (s, "point_connections");
  if ((conf && !value_array_of (conf, G_TYPE_FLOAT, n))
      || (names && !value_array_of (names, G_TYPE_STRING, n))
      || (pairs && (!value_array_of (pairs, G_TYPE_UINT, 0)
              || gst_value_array_get_size (pairs) % 2 != 0)))
    return FALSE;
  *view = (GstM2iKeypointsView) { n, data, conf, names, pairs, gst_structure_get_string (s,
        "format") };
  return TRUE;
}

gboolean
gst_m2i_keypoint_get (const GstM2iKeypointsView *view, guint k, const double box[4],
    double *x, double *y, float *confidence)
{
  if (k >= view->n)
    return FALSE;
  float rel[2];
  memcpy (rel, view->xy + (gsize) k * sizeof rel, sizeof rel);
  *confidence = view->confidence
      ? g_value_get_float (gst_value_array_get_value (view->confidence, k)) : -1.0f;
  if (!isfinite (rel[0]) || !isfinite (rel[1]))
    return FALSE;
  *x = box[0] + rel[0] * (box[2] - box[0]);
  *y = box[1] + rel[1] * (box[3] - box[1]);
  return isfinite (*x) && isfinite (*y);
}

guint
gst_m2i_keypoints_n_pairs (const GstM2iKeypointsView *view)
{
  return view->connections ? gst_value_array_get_size (view->connections) / 2 : 0;
}

gboolean
gst_m2i_keypoints_pair (const GstM2iKeypointsView *view, guint i, guint *a, guint *b)
{
  if (i >= gst_m2i_keypoints_n_pairs (view))
    return FALSE;
  *a = g_value_get_uint (gst_value_array_get_value (view->connections, 2 * i));
  *b = g_value_get_uint (gst_value_array_get_value (view->connections, 2 * i + 1));
  return *a < view->n && *b < view->n;
}
