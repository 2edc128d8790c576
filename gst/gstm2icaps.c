/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gstm2icaps.c — caps formats of the m2i elements, see gstm2icaps.h. */
#include "gstm2icaps.h"
#include "gstm2ideferred.h"

#include <m2i-core/base/m2i-error.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  gboolean tensor;
  const char *name;              /* video format or tensor type */
  M2iLayout layout;
  M2iDataType dtype;
  M2iFormat video_format;        /* video only */
  GstVideoFormat gst_format;     /* video only */
  const char *describe;
} CapsFormatDesc;

static const CapsFormatDesc cf_desc[GST_M2I_CF_COUNT] = {
  [GST_M2I_CF_NV12] = { FALSE, "NV12", M2I_LAYOUT_YUV, M2I_DTYPE_U8,
      M2I_FORMAT_SP_NV12_8, GST_VIDEO_FORMAT_NV12, "NV12" },
  [GST_M2I_CF_I420] = { FALSE, "I420", M2I_LAYOUT_YUV, M2I_DTYPE_U8,
      M2I_FORMAT_PL_YUV420_8, GST_VIDEO_FORMAT_I420, "I420" },
  [GST_M2I_CF_RGB] = { FALSE, "RGB", M2I_LAYOUT_INTERLEAVED, M2I_DTYPE_U8,
      M2I_FORMAT_IL_RGB888, GST_VIDEO_FORMAT_RGB, "RGB" },
  [GST_M2I_CF_BGR] = { FALSE, "BGR", M2I_LAYOUT_INTERLEAVED, M2I_DTYPE_U8,
      M2I_FORMAT_IL_BGR888, GST_VIDEO_FORMAT_BGR, "BGR" },
  [GST_M2I_CF_RGBP] = { FALSE, "RGBP", M2I_LAYOUT_PLANAR, M2I_DTYPE_U8,
      M2I_FORMAT_PL_RGB24, GST_VIDEO_FORMAT_RGBP, "RGBP" },
  [GST_M2I_CF_BGRP] = { FALSE, "BGRP", M2I_LAYOUT_PLANAR, M2I_DTYPE_U8,
      M2I_FORMAT_PL_BGR24, GST_VIDEO_FORMAT_BGRP, "BGRP" },
  [GST_M2I_CF_F16_PLANAR] = { TRUE, "float16", M2I_LAYOUT_PLANAR, M2I_DTYPE_F16,
      M2I_FORMAT_UNKNOWN, GST_VIDEO_FORMAT_UNKNOWN, "planar fp16 tensor" },
  [GST_M2I_CF_F32_PLANAR] = { TRUE, "float32", M2I_LAYOUT_PLANAR, M2I_DTYPE_F32,
      M2I_FORMAT_UNKNOWN, GST_VIDEO_FORMAT_UNKNOWN, "planar fp32 tensor" },
  [GST_M2I_CF_F16_INTERLEAVED] = { TRUE, "float16", M2I_LAYOUT_INTERLEAVED, M2I_DTYPE_F16,
      M2I_FORMAT_UNKNOWN, GST_VIDEO_FORMAT_UNKNOWN, "interleaved fp16 tensor" },
  [GST_M2I_CF_F32_INTERLEAVED] = { TRUE, "float32", M2I_LAYOUT_INTERLEAVED, M2I_DTYPE_F32,
      M2I_FORMAT_UNKNOWN, GST_VIDEO_FORMAT_UNKNOWN, "interleaved fp32 tensor" },
  [GST_M2I_CF_GRAY8] = { FALSE, "GRAY8", M2I_LAYOUT_PLANAR, M2I_DTYPE_U8,
      M2I_FORMAT_PL_GRAY8, GST_VIDEO_FORMAT_GRAY8, "GRAY8" },
  [GST_M2I_CF_RGBx] = { FALSE, "RGBx", M2I_LAYOUT_INTERLEAVED, M2I_DTYPE_U8,
      M2I_FORMAT_IL_RGBX8888, GST_VIDEO_FORMAT_RGBx, "RGBx" },
  [GST_M2I_CF_BGRx] = { FALSE, "BGRx", M2I_LAYOUT_INTERLEAVED, M2I_DTYPE_U8,
      M2I_FORMAT_IL_BGRX8888, GST_VIDEO_FORMAT_BGRx, "BGRx" },
  [GST_M2I_CF_xRGB] = { FALSE, "xRGB", M2I_LAYOUT_INTERLEAVED, M2I_DTYPE_U8,
      M2I_FORMAT_IL_XRGB8888, GST_VIDEO_FORMAT_xRGB, "xRGB" },
  [GST_M2I_CF_xBGR] = { FALSE, "xBGR", M2I_LAYOUT_INTERLEAVED, M2I_DTYPE_U8,
      M2I_FORMAT_IL_XBGR8888, GST_VIDEO_FORMAT_xBGR, "xBGR" },
  [GST_M2I_CF_RGBA] = { FALSE, "RGBA", M2I_LAYOUT_INTERLEAVED, M2I_DTYPE_U8,
      M2I_FORMAT_IL_RGBX8888, GST_VIDEO_FORMAT_RGBA, "RGBA" },
  [GST_M2I_CF_BGRA] = { FALSE, "BGRA", M2I_LAYOUT_INTERLEAVED, M2I_DTYPE_U8,
      M2I_FORMAT_IL_BGRX8888, GST_VIDEO_FORMAT_BGRA, "BGRA" },
  [GST_M2I_CF_ARGB] = { FALSE, "ARGB", M2I_LAYOUT_INTERLEAVED, M2I_DTYPE_U8,
      M2I_FORMAT_IL_XRGB8888, GST_VIDEO_FORMAT_ARGB, "ARGB" },
  [GST_M2I_CF_ABGR] = { FALSE, "ABGR", M2I_LAYOUT_INTERLEAVED, M2I_DTYPE_U8,
      M2I_FORMAT_IL_XBGR8888, GST_VIDEO_FORMAT_ABGR, "ABGR" },
};

gboolean
gst_m2i_caps_format_is_tensor (GstM2iCapsFormat cf)
{
  return cf < GST_M2I_CF_COUNT && cf_desc[cf].tensor;
}

const char *
gst_m2i_caps_format_name (GstM2iCapsFormat cf)
{
  return cf < GST_M2I_CF_COUNT ? cf_desc[cf].name : "unknown";
}

const char *
gst_m2i_caps_format_describe (GstM2iCapsFormat cf)
{
  return cf < GST_M2I_CF_COUNT ? cf_desc[cf].describe : "unknown";
}

M2iFormat
gst_m2i_caps_format_to_m2i (GstM2iCapsFormat cf, M2iChannelOrder order)
{
  if (cf >= GST_M2I_CF_COUNT)
    return M2I_FORMAT_UNKNOWN;
  if (!cf_desc[cf].tensor)
    return cf_desc[cf].video_format;
  return m2i_format_compose (cf_desc[cf].layout, cf_desc[cf].dtype, order);
}

GstM2iCapsFormat
gst_m2i_caps_format_from_m2i (M2iFormat f)
{
  for (guint cf = 0; cf < GST_M2I_CF_COUNT; cf++)
    if (f != M2I_FORMAT_UNKNOWN && (f == gst_m2i_caps_format_to_m2i (cf, M2I_ORDER_RGB)
            || f == gst_m2i_caps_format_to_m2i (cf, M2I_ORDER_BGR)))
      return (GstM2iCapsFormat) cf;
  return GST_M2I_CF_COUNT;
}

/* ---- reading structures ------------------------------------------------- */

/* Whether @v (a string or a list of strings) holds @want. */
static gboolean
value_has_string (const GValue *v, const char *want)
{
  if (G_VALUE_HOLDS_STRING (v))
    return g_strcmp0 (g_value_get_string (v), want) == 0;
  if (GST_VALUE_HOLDS_LIST (v)) {
    for (guint i = 0; i < gst_value_list_get_size (v); i++)
      if (value_has_string (gst_value_list_get_value (v, i), want))
        return TRUE;
  }
  return FALSE;
}

/* Whether the optional int field @field of @s allows @want. */
static gboolean
field_allows_int (const GstStructure *s, const char *field, gint want)
{
  const GValue *v = gst_structure_get_value (s, field);
  if (!v)
    return TRUE;
  GValue w = G_VALUE_INIT;
  g_value_init (&w, G_TYPE_INT);
  g_value_set_int (&w, want);
  gboolean ok = gst_value_can_intersect (v, &w);
  g_value_unset (&w);
  return ok;
}

guint
gst_m2i_tensor_dims_parse (const char *str, gint64 max, gint64 dims[GST_M2I_MAX_DIMS])
{
  if (!str)
    return 0;
  gchar **parts = g_strsplit (str, ":", -1);
  guint n = g_strv_length (parts);
  gboolean ok = n >= 1 && n <= GST_M2I_MAX_DIMS;
  for (guint i = 0; ok && i < n; i++) {
    char *end = NULL;
    const char *p = g_strstrip (parts[i]);
    gint64 x = g_ascii_strtoll (p, &end, 10);
    if (end == p || *end != '\0' || x < 1 || x > max)
      ok = FALSE;
    else
      dims[i] = x;
  }
  g_strfreev (parts);
  return ok ? n : 0;
}

void
gst_m2i_tensor_dims_append (GString *out, const M2iShape *shape)
{
  if (shape->rank == 0)
    g_string_append (out, "1");
  for (gint i = shape->rank - 1; i >= 0; i--)
    g_string_append_printf (out, "%s%" G_GINT64_FORMAT, i == shape->rank - 1 ? "" : ":",
        shape->dims[i]);
}

static const struct {
  M2iElementType type;
  const char *name;
} tensor_types[] = {
  { M2I_ET_F32, "float32" }, { M2I_ET_F16, "float16" }, { M2I_ET_F64, "float64" },
  { M2I_ET_U8, "uint8" }, { M2I_ET_I8, "int8" }, { M2I_ET_U16, "uint16" },
  { M2I_ET_I16, "int16" }, { M2I_ET_U32, "uint32" }, { M2I_ET_I32, "int32" },
  { M2I_ET_U64, "uint64" }, { M2I_ET_I64, "int64" },
};

const char *
gst_m2i_tensor_type_name (M2iElementType t)
{
  for (guint i = 0; i < G_N_ELEMENTS (tensor_types); i++)
    if (tensor_types[i].type == t)
      return tensor_types[i].name;
  return NULL;
}

M2iElementType
gst_m2i_tensor_type_from_name (const char *s)
{
  for (guint i = 0; i < G_N_ELEMENTS (tensor_types); i++)
    if (!strcmp (s, tensor_types[i].name))
      return tensor_types[i].type;
  return M2I_ET_UNDEFINED;
}

/* An image tensor's dimensions, innermost first: "d0:d1:d2[:1...]", each
 * within the m2i size limit. Returns FALSE for anything else. */
static gboolean
parse_dims (const char *str, gint d[3])
{
  gint64 v[GST_M2I_MAX_DIMS];
  guint n = gst_m2i_tensor_dims_parse (str, GST_M2I_MAX_SIZE, v);
  if (n < 3)
    return FALSE;
  for (guint i = 3; i < n; i++)
    if (v[i] != 1)
      return FALSE;
  for (int i = 0; i < 3; i++)
    d[i] = (gint) v[i];
  return TRUE;
}

/* Layouts one dimensions string allows (bits of M2iLayout), with the size
 * per layout. */
static guint
dims_layouts (const char *str, gint pl_size[2], gint il_size[2])
{
  gint d[3];
  if (!parse_dims (str, d))
    return 0;
  guint layouts = 0;
  if (d[2] == 3) {
    layouts |= 1u << M2I_LAYOUT_PLANAR;
    pl_size[0] = d[0];
    pl_size[1] = d[1];
  }
  if (d[0] == 3) {
    layouts |= 1u << M2I_LAYOUT_INTERLEAVED;
    il_size[0] = d[1];
    il_size[1] = d[2];
  }
  return layouts;
}

/* Layouts the tensor structure's dimensions allow (bits of M2iLayout), and
 * the sizes per layout when it names dimensions (a string, or a list of
 * spellings: the first that names a layout gives its size). */
static guint
tensor_layouts (const GstStructure *s, gint pl_size[2], gint il_size[2], gboolean *fixed)
{
  const GValue *v = gst_structure_get_value (s, "dimensions");
  *fixed = FALSE;
  if (!v)
    return (1u << M2I_LAYOUT_PLANAR) | (1u << M2I_LAYOUT_INTERLEAVED);
  guint layouts = 0;
  if (G_VALUE_HOLDS_STRING (v)) {
    layouts = dims_layouts (g_value_get_string (v), pl_size, il_size);
  } else if (GST_VALUE_HOLDS_LIST (v)) {
    for (guint i = 0; i < gst_value_list_get_size (v); i++) {
      const GValue *e = gst_value_list_get_value (v, i);
      gint pl[2], il[2];
      guint l = G_VALUE_HOLDS_STRING (e) ? dims_layouts (g_value_get_string (e), pl, il) : 0;
      if ((l & (1u << M2I_LAYOUT_PLANAR)) && !(layouts & (1u << M2I_LAYOUT_PLANAR)))
        memcpy (pl_size, pl, sizeof pl);
      if ((l & (1u << M2I_LAYOUT_INTERLEAVED)) && !(layouts & (1u << M2I_LAYOUT_INTERLEAVED)))
        memcpy (il_size, il, sizeof il);
      layouts |= l;
    }
  }
  *fixed = layouts != 0;
  return layouts;
}

guint
gst_m2i_structure_formats (const GstStructure *s)
{
  guint mask = 0;
  if (gst_structure_has_name (s, "video/x-raw")) {
    const GValue *f = gst_structure_get_value (s, "format");
    for (guint cf = 0; cf < GST_M2I_CF_COUNT; cf++)
      if (!cf_desc[cf].tensor && (!f || value_has_string (f, cf_desc[cf].name)))
        mask |= GST_M2I_CF_BIT (cf);
    return mask;
  }
  if (!gst_structure_has_name (s, "other/tensors"))
    return 0;
  const GValue *fmt = gst_structure_get_value (s, "format");
  if (fmt && !value_has_string (fmt, "static"))
    return 0;
  if (!field_allows_int (s, "num_tensors", 1))
    return 0;
  gint pl[2], il[2];
  gboolean fixed;
  guint layouts = tensor_layouts (s, pl, il, &fixed);
  const GValue *types = gst_structure_get_value (s, "types");
  for (guint cf = 0; cf < GST_M2I_CF_COUNT; cf++) {
    if (!cf_desc[cf].tensor || !(layouts & (1u << cf_desc[cf].layout)))
      continue;
    if (!types || value_has_string (types, cf_desc[cf].name))
      mask |= GST_M2I_CF_BIT (cf);
  }
  return mask;
}

static void
set_size_range (GValue *v)
{
  g_value_init (v, GST_TYPE_INT_RANGE);
  gst_value_set_int_range (v, 1, GST_M2I_MAX_SIZE);
}

static void
set_int (GValue *v, gint x)
{
  g_value_init (v, G_TYPE_INT);
  g_value_set_int (v, x);
}

gboolean
gst_m2i_structure_size (const GstStructure *s, GstM2iCapsFormat cf, GValue *width,
    GValue *height)
{
  if (!(gst_m2i_structure_formats (s) & GST_M2I_CF_BIT (cf)))
    return FALSE;
  if (!cf_desc[cf].tensor) {
    const GValue *w = gst_structure_get_value (s, "width");
    const GValue *h = gst_structure_get_value (s, "height");
    if (w) {
      g_value_init (width, G_VALUE_TYPE (w));
      g_value_copy (w, width);
    } else {
      set_size_range (width);
    }
    if (h) {
      g_value_init (height, G_VALUE_TYPE (h));
      g_value_copy (h, height);
    } else {
      set_size_range (height);
    }
    return TRUE;
  }
  gint pl[2], il[2];
  gboolean fixed;
  tensor_layouts (s, pl, il, &fixed);
  if (!fixed) {
    set_size_range (width);
    set_size_range (height);
  } else {
    const gint *sz = cf_desc[cf].layout == M2I_LAYOUT_PLANAR ? pl : il;
    set_int (width, sz[0]);
    set_int (height, sz[1]);
  }
  return TRUE;
}

const char *
gst_m2i_tensor_dims (GstM2iCapsFormat cf, gint width, gint height, char *buf, gsize buf_size)
{
  if (cf_desc[cf].layout == M2I_LAYOUT_PLANAR)
    g_snprintf (buf, buf_size, "%d:%d:3:1", width, height);
  else
    g_snprintf (buf, buf_size, "3:%d:%d:1", width, height);
  return buf;
}

void
gst_m2i_tensor_dims_value (GstM2iCapsFormat cf, gint width, gint height, GValue *value)
{
  char dims[64];
  GValue v = G_VALUE_INIT;
  g_value_init (value, GST_TYPE_LIST);
  g_value_init (&v, G_TYPE_STRING);
  g_value_set_string (&v, gst_m2i_tensor_dims (cf, width, height, dims, sizeof dims));
  gst_value_list_append_value (value, &v);
  dims[strlen (dims) - 2] = '\0';          /* without the trailing ":1" */
  g_value_set_string (&v, dims);
  gst_value_list_append_value (value, &v);
  g_value_unset (&v);
}

GstStructure *
gst_m2i_structure_new (GstM2iCapsFormat cf, const GValue *width, const GValue *height,
    const GValue *framerate, const GValue *par)
{
  GstStructure *s;
  if (!cf_desc[cf].tensor) {
    s = gst_structure_new ("video/x-raw", "format", G_TYPE_STRING, cf_desc[cf].name, NULL);
    gst_structure_set_value (s, "width", width);
    gst_structure_set_value (s, "height", height);
    if (par)
      gst_structure_set_value (s, "pixel-aspect-ratio", par);
  } else {
    s = gst_structure_new ("other/tensors", "format", G_TYPE_STRING, "static",
        "num_tensors", G_TYPE_INT, 1, "types", G_TYPE_STRING, cf_desc[cf].name, NULL);
    if (G_VALUE_HOLDS_INT (width) && G_VALUE_HOLDS_INT (height)) {
      GValue dims = G_VALUE_INIT;
      gst_m2i_tensor_dims_value (cf, g_value_get_int (width), g_value_get_int (height), &dims);
      gst_structure_take_value (s, "dimensions", &dims);
    }
  }
  if (framerate)
    gst_structure_set_value (s, "framerate", framerate);
  else
    gst_structure_set (s, "framerate", GST_TYPE_FRACTION_RANGE, 0, 1, G_MAXINT, 1, NULL);
  return s;
}

GstStructure *
gst_m2i_structure_new_sized (GstM2iCapsFormat cf, gint width, gint height)
{
  GValue w = G_VALUE_INIT, h = G_VALUE_INIT;
  if (width > 0)
    set_int (&w, width);
  else
    set_size_range (&w);
  if (height > 0)
    set_int (&h, height);
  else
    set_size_range (&h);
  GstStructure *s = gst_m2i_structure_new (cf, &w, &h, NULL, NULL);
  g_value_unset (&w);
  g_value_unset (&h);
  return s;
}

/* ---- negotiated caps ------------------------------------------------------ */

gboolean
gst_m2i_caps_is_deferred (const GstCaps *caps, guint i)
{
  GstCapsFeatures *f = gst_caps_get_features (caps, i);
  return f && !gst_caps_features_is_any (f)
      && gst_caps_features_contains (f, GST_CAPS_FEATURE_MEMORY_M2I);
}

static gint
lowest_bit (guint mask)
{
  for (gint i = 0; i < 32; i++)
    if (mask & (1u << i))
      return i;
  return -1;
}

/* Sets @error (M2I_ERROR_INVALID_ARGUMENT) to @fmt with the text of @caps in
 * place of its one %s (g_set_error knows no GST_PTR_FORMAT). */
static void
caps_error (GError **error, const char *fmt, const GstCaps *caps)
{
  if (!error)
    return;
  gchar *str = caps ? gst_caps_to_string (caps) : g_strdup ("(none)");
  g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, fmt, str);
  g_free (str);
}

gboolean
gst_m2i_caps_info_from_caps (GstM2iCapsInfo *info, const GstCaps *caps, GError **error)
{
  memset (info, 0, sizeof *info);
  if (!caps || gst_caps_get_size (caps) != 1 || !gst_caps_is_fixed (caps)) {
    caps_error (error, "caps %s are not fixed", caps);
    return FALSE;
  }
  const GstStructure *s = gst_caps_get_structure (caps, 0);
  gint cf = lowest_bit (gst_m2i_structure_formats (s));
  if (cf < 0) {
    caps_error (error, "caps %s are none of the m2i formats (NV12, I420, RGB, BGR, RGBP, "
        "BGRP, GRAY8, RGBx, BGRx, xRGB, xBGR, RGBA, BGRA, ARGB, ABGR video or one fp16/fp32 "
        "tensor with dimensions W:H:3:1 or 3:W:H:1)", caps);
    return FALSE;
  }
  info->cf = (GstM2iCapsFormat) cf;
  info->deferred = gst_m2i_caps_is_deferred (caps, 0);
  info->fps_n = 0;
  info->fps_d = 1;
  gst_structure_get_fraction (s, "framerate", &info->fps_n, &info->fps_d);
  M2iFormat f = gst_m2i_caps_format_to_m2i (info->cf, M2I_ORDER_RGB);
  if (!cf_desc[cf].tensor) {
    if (!gst_video_info_from_caps (&info->vinfo, caps)) {
      /* (GStreamer refuses a frame whose size overflows its layout) */
      caps_error (error, "cannot read the video caps %s (is the frame too large?)", caps);
      return FALSE;
    }
    info->width = GST_VIDEO_INFO_WIDTH (&info->vinfo);
    info->height = GST_VIDEO_INFO_HEIGHT (&info->vinfo);
    info->layout.format = f;
    info->layout.width = info->width;
    info->layout.height = info->height;
    for (guint p = 0; p < GST_VIDEO_INFO_N_PLANES (&info->vinfo) && p < M2I_MAX_PLANES; p++) {
      info->layout.stride[p] = GST_VIDEO_INFO_PLANE_STRIDE (&info->vinfo, p);
      info->offset[p] = GST_VIDEO_INFO_PLANE_OFFSET (&info->vinfo, p);
    }
    info->size = GST_VIDEO_INFO_SIZE (&info->vinfo);
    return TRUE;
  }
  GValue w = G_VALUE_INIT, h = G_VALUE_INIT;
  gst_m2i_structure_size (s, info->cf, &w, &h);
  gboolean fixed = G_VALUE_HOLDS_INT (&w) && G_VALUE_HOLDS_INT (&h);
  if (fixed) {
    info->width = g_value_get_int (&w);
    info->height = g_value_get_int (&h);
  }
  g_value_unset (&w);
  g_value_unset (&h);
  if (!fixed) {
    caps_error (error, "tensor caps %s have no dimensions", caps);
    return FALSE;
  }
  m2i_image_init (&info->layout, f, info->width, info->height);
  for (guint p = 0; p < m2i_format_n_planes (f); p++)
    info->offset[p] = p * info->layout.stride[p] * (gsize) info->height;
  info->size = m2i_image_wrap_size (f, info->width, info->height, 0);
  return TRUE;
}

gboolean
gst_m2i_caps_info_check_even (const GstM2iCapsInfo *info, const char *side, GError **error)
{
  if ((info->cf == GST_M2I_CF_NV12 || info->cf == GST_M2I_CF_I420)
      && (info->width % 2 || info->height % 2)) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "%s %s of %dx%d has an odd width or height; the M2I block reads 2x2 chroma blocks "
        "and needs even sizes. Scale or crop to an even size upstream.",
        cf_desc[info->cf].name, side, info->width, info->height);
    return FALSE;
  }
  return TRUE;
}

void
gst_m2i_image_set_planes (M2iImage *img, const GstMapInfo *map,
    const gsize offset[M2I_MAX_PLANES])
{
  guint n = m2i_format_n_planes (img->format);
  for (guint p = 0; p < M2I_MAX_PLANES; p++) {
    if (p < n && offset[p] <= map->size) {
      img->data[p] = map->data + offset[p];
      img->size[p] = map->size - offset[p];
    } else {
      img->data[p] = p < n ? map->data : NULL;
      img->size[p] = 0;
    }
  }
}

gboolean
gst_m2i_image_from_buffer (const GstM2iCapsInfo *info, GstBuffer *buf,
    const GstMapInfo *map, M2iChannelOrder order, M2iImage *img,
    gsize offset[M2I_MAX_PLANES], GError **error)
{
  *img = info->layout;
  img->format = gst_m2i_caps_format_to_m2i (info->cf, order);
  guint n = m2i_format_n_planes (img->format);
  for (guint p = 0; p < M2I_MAX_PLANES; p++)
    offset[p] = p < n ? info->offset[p] : 0;
  GstVideoMeta *vmeta = cf_desc[info->cf].tensor ? NULL : gst_buffer_get_video_meta (buf);
  if (vmeta) {
    if (vmeta->format != cf_desc[info->cf].gst_format || (gint) vmeta->width != info->width
        || (gint) vmeta->height != info->height || vmeta->n_planes != n) {
      g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
          "the buffer's video meta (%s %ux%u, %u planes) does not describe the "
          "negotiated %s %dx%d frame", gst_video_format_to_string (vmeta->format),
          vmeta->width, vmeta->height, vmeta->n_planes, cf_desc[info->cf].name,
          info->width, info->height);
      return FALSE;
    }
    for (guint p = 0; p < n; p++) {
      if (vmeta->stride[p] <= 0) {
        g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
            "the buffer's video meta has a non-positive stride %d for plane %u",
            vmeta->stride[p], p);
        return FALSE;
      }
      img->stride[p] = (gsize) vmeta->stride[p];
      offset[p] = vmeta->offset[p];
    }
  }
  gst_m2i_image_set_planes (img, map, offset);
  return TRUE;
}

gboolean
gst_m2i_profile_accepts (M2iProfile profile, GstM2iCapsFormat cf, const char **why)
{
  if (profile == M2I_PROFILE_EXTENDED)
    return TRUE;
  if (cf == GST_M2I_CF_F16_INTERLEAVED) {
    *why = "the default profile (the seed's M2I block) writes fp16 only as planar data "
        "and cannot produce interleaved fp16 tensors (dimensions=3:W:H:1); ask for "
        "planar tensors (dimensions=W:H:3:1) or set profile=extended";
    return FALSE;
  }
  if (cf_desc[cf].dtype == M2I_DTYPE_F32) {
    *why = "the default profile (the seed's M2I block) has no fp32 data type; ask for "
        "types=float16 or set profile=extended";
    return FALSE;
  }
  return TRUE;
}

GstCaps *
gst_m2i_caps_keep_deferred (GstCaps *caps, gboolean deferred)
{
  if (deferred)
    return caps;
  GstCaps *plain = gst_caps_new_empty ();
  for (guint i = 0; i < gst_caps_get_size (caps); i++)
    if (!gst_m2i_caps_is_deferred (caps, i))
      gst_caps_append_structure (plain, gst_structure_copy (gst_caps_get_structure (caps, i)));
  gst_caps_unref (caps);
  return plain;
}

gboolean
gst_m2i_caps_refuse_once (GstElement *element, gchar **last_posted, const char *text,
    const char *debug)
{
  if (g_strcmp0 (*last_posted, text) == 0) {
    GST_DEBUG_OBJECT (element, "refused again: %s", text);
    return FALSE;
  }
  if (debug)
    GST_ELEMENT_ERROR (element, CORE, NEGOTIATION, ("%s", text), ("%s", debug));
  else
    GST_ELEMENT_ERROR (element, CORE, NEGOTIATION, ("%s", text), (NULL));
  g_free (*last_posted);
  *last_posted = g_strdup (text);
  return FALSE;
}
