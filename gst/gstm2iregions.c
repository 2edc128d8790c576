/* gstm2iregions.c — the region metas the analytics elements share, see
 * gstm2iregions.h. */
#include "gstm2iregions.h"

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
  const GValue *v = gst_structure_get_value (s, "data_buffer");
  if (!v || !G_VALUE_HOLDS_VARIANT (v))
    return FALSE;
  GVariant *var = g_value_get_variant (v);
  if (!var || !g_variant_is_of_type (var, G_VARIANT_TYPE_BYTESTRING))
    return FALSE;
  gsize size;
  const guint8 *data = g_variant_get_fixed_array (var, &size, 1);
  if (size != (gsize) w * h * 2 || ((guintptr) data & 1) != 0)
    return FALSE;
  view->width = w;
  view->height = h;
  view->n_classes = n;
  view->class_map = (const guint16 *) data;
  return TRUE;
}
