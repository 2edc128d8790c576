/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "m2i-format.h"

#include <base/m2i-error.h>
#include <string.h>

typedef struct {
  const char *name;
  M2iLayout layout;
  M2iDataType dtype;
  M2iChannelOrder order;
  guint n_planes;
  guint pixel_bytes;          /* interleaved u8 formats with an X byte: 4 */
  guint channel_offset;       /* X first: 1 */
} FormatInfo;

static const FormatInfo formats[M2I_FORMAT_LAST] = {
  [M2I_FORMAT_UNKNOWN] = { "UNKNOWN", M2I_LAYOUT_YUV, M2I_DTYPE_U8, M2I_ORDER_RGB, 0 },
  [M2I_FORMAT_SP_NV12_8] = { "SP_NV12_8", M2I_LAYOUT_YUV, M2I_DTYPE_U8, M2I_ORDER_RGB, 2 },
  [M2I_FORMAT_PL_YUV420_8] = { "PL_YUV420_8", M2I_LAYOUT_YUV, M2I_DTYPE_U8, M2I_ORDER_RGB, 3 },
  [M2I_FORMAT_IL_RGB888] = { "IL_RGB888", M2I_LAYOUT_INTERLEAVED, M2I_DTYPE_U8, M2I_ORDER_RGB, 1 },
  [M2I_FORMAT_IL_BGR888] = { "IL_BGR888", M2I_LAYOUT_INTERLEAVED, M2I_DTYPE_U8, M2I_ORDER_BGR, 1 },
  [M2I_FORMAT_PL_RGB24] = { "PL_RGB24", M2I_LAYOUT_PLANAR, M2I_DTYPE_U8, M2I_ORDER_RGB, 3 },
  [M2I_FORMAT_PL_BGR24] = { "PL_BGR24", M2I_LAYOUT_PLANAR, M2I_DTYPE_U8, M2I_ORDER_BGR, 3 },
  [M2I_FORMAT_PL_FP16_RGB] = { "PL_FP16_RGB", M2I_LAYOUT_PLANAR, M2I_DTYPE_F16, M2I_ORDER_RGB, 3 },
  [M2I_FORMAT_PL_FP16_BGR] = { "PL_FP16_BGR", M2I_LAYOUT_PLANAR, M2I_DTYPE_F16, M2I_ORDER_BGR, 3 },
  [M2I_FORMAT_PL_FP32_RGB] = { "PL_FP32_RGB", M2I_LAYOUT_PLANAR, M2I_DTYPE_F32, M2I_ORDER_RGB, 3 },
  [M2I_FORMAT_PL_FP32_BGR] = { "PL_FP32_BGR", M2I_LAYOUT_PLANAR, M2I_DTYPE_F32, M2I_ORDER_BGR, 3 },
  [M2I_FORMAT_IL_FP16_RGB] = { "IL_FP16_RGB", M2I_LAYOUT_INTERLEAVED, M2I_DTYPE_F16, M2I_ORDER_RGB, 1 },
  [M2I_FORMAT_IL_FP16_BGR] = { "IL_FP16_BGR", M2I_LAYOUT_INTERLEAVED, M2I_DTYPE_F16, M2I_ORDER_BGR, 1 },
  [M2I_FORMAT_IL_FP32_RGB] = { "IL_FP32_RGB", M2I_LAYOUT_INTERLEAVED, M2I_DTYPE_F32, M2I_ORDER_RGB, 1 },
  [M2I_FORMAT_IL_FP32_BGR] = { "IL_FP32_BGR", M2I_LAYOUT_INTERLEAVED, M2I_DTYPE_F32, M2I_ORDER_BGR, 1 },
  [M2I_FORMAT_IL_RGBX8888] = { "IL_RGBX8888", M2I_LAYOUT_INTERLEAVED, M2I_DTYPE_U8, M2I_ORDER_RGB, 1, 4, 0 },
  [M2I_FORMAT_IL_BGRX8888] = { "IL_BGRX8888", M2I_LAYOUT_INTERLEAVED, M2I_DTYPE_U8, M2I_ORDER_BGR, 1, 4, 0 },
  [M2I_FORMAT_IL_XRGB8888] = { "IL_XRGB8888", M2I_LAYOUT_INTERLEAVED, M2I_DTYPE_U8, M2I_ORDER_RGB, 1, 4, 1 },
  [M2I_FORMAT_IL_XBGR8888] = { "IL_XBGR8888", M2I_LAYOUT_INTERLEAVED, M2I_DTYPE_U8, M2I_ORDER_BGR, 1, 4, 1 },
  [M2I_FORMAT_PL_GRAY8] = { "PL_GRAY8", M2I_LAYOUT_PLANAR, M2I_DTYPE_U8, M2I_ORDER_GRAY, 1 },
  [M2I_FORMAT_PL_FP16_GRAY] = { "PL_FP16_GRAY", M2I_LAYOUT_PLANAR, M2I_DTYPE_F16, M2I_ORDER_GRAY, 1 },
  [M2I_FORMAT_PL_FP32_GRAY] = { "PL_FP32_GRAY", M2I_LAYOUT_PLANAR, M2I_DTYPE_F32, M2I_ORDER_GRAY, 1 },
};

static const FormatInfo *
info (M2iFormat f)
{
  return (guint) f < M2I_FORMAT_LAST ? &formats[f] : &formats[0];
}

const char *
m2i_format_to_string (M2iFormat f)
{
  return info (f)->name;
}

M2iFormat
m2i_format_from_string (const char *s)
{
  if (!s)
    return M2I_FORMAT_UNKNOWN;
  for (guint f = 1; f < M2I_FORMAT_LAST; f++)
    if (!g_ascii_strcasecmp (s, formats[f].name))
      return (M2iFormat) f;
  return M2I_FORMAT_UNKNOWN;
}

guint m2i_format_n_planes (M2iFormat f) { return info (f)->n_planes; }
M2iLayout m2i_format_layout (M2iFormat f) { return info (f)->layout; }
M2iDataType m2i_format_dtype (M2iFormat f) { return info (f)->dtype; }
M2iChannelOrder m2i_format_order (M2iFormat f) { return info (f)->order; }

guint
m2i_format_bytes_per_sample (M2iFormat f)
{
  switch (info (f)->dtype) {
    case M2I_DTYPE_F16: return 2;
    case M2I_DTYPE_F32: return 4;
    default: return 1;
  }
}

gboolean
m2i_format_is_yuv (M2iFormat f)
{
  return f == M2I_FORMAT_SP_NV12_8 || f == M2I_FORMAT_PL_YUV420_8;
}

guint
m2i_format_n_channels (M2iFormat f)
{
  if (f == M2I_FORMAT_UNKNOWN || (guint) f >= M2I_FORMAT_LAST)
    return 0;
  return info (f)->order == M2I_ORDER_GRAY ? 1 : 3;
}

guint
m2i_format_pixel_stride (M2iFormat f)
{
  const FormatInfo *fi = info (f);
  if (fi->pixel_bytes)
    return fi->pixel_bytes;
  return m2i_format_bytes_per_sample (f) * (fi->layout == M2I_LAYOUT_INTERLEAVED ? 3 : 1);
}

guint
m2i_format_channel_offset (M2iFormat f)
{
  return info (f)->channel_offset;
}

M2iFormat
m2i_format_compose (M2iLayout layout, M2iDataType dtype, M2iChannelOrder order)
{
  for (guint f = M2I_FORMAT_IL_RGB888; f < M2I_FORMAT_LAST; f++)
    if (formats[f].layout == layout && formats[f].dtype == dtype && formats[f].order == order
        && !formats[f].pixel_bytes)
      return (M2iFormat) f;
  return M2I_FORMAT_UNKNOWN;
}

gboolean
m2i_format_plane_geometry (M2iFormat f, gint width, gint height, guint p,
    gsize *min_row_bytes, gint *rows)
{
  const FormatInfo *fi = info (f);
  if (f == M2I_FORMAT_UNKNOWN || p >= fi->n_planes || width <= 0 || height <= 0)
    return FALSE;
  gsize rb;
  gint nr = height;
  switch (f) {
    case M2I_FORMAT_SP_NV12_8:
      rb = p == 0 ? (gsize) width : (gsize) ((width + 1) / 2) * 2;
      nr = p == 0 ? height : (height + 1) / 2;
      break;
    case M2I_FORMAT_PL_YUV420_8:
      rb = p == 0 ? (gsize) width : (gsize) (width + 1) / 2;
      nr = p == 0 ? height : (height + 1) / 2;
      break;
    default:
      rb = (gsize) width * m2i_format_pixel_stride (f);
      break;
  }
  if (min_row_bytes)
    *min_row_bytes = rb;
  if (rows)
    *rows = nr;
  return TRUE;
}

gboolean
m2i_image_init (M2iImage *img, M2iFormat f, gint width, gint height)
{
  gsize rb;
  if (!m2i_format_plane_geometry (f, width, height, 0, &rb, NULL))
    return FALSE;
  memset (img, 0, sizeof *img);
  img->format = f;
  img->width = width;
  img->height = height;
  for (guint p = 0; p < m2i_format_n_planes (f); p++)
    m2i_format_plane_geometry (f, width, height, p, &img->stride[p], NULL);
  return TRUE;
}

gsize
m2i_image_plane_min_size (const M2iImage *img, guint p)
{
  gsize rb;
  gint rows;
  if (!m2i_format_plane_geometry (img->format, img->width, img->height, p, &rb, &rows))
    return 0;
  return img->stride[p] * (gsize) (rows - 1) + rb;
}

static gsize
chroma_stride (M2iFormat f, gsize row_stride)
{
  return f == M2I_FORMAT_PL_YUV420_8 ? (row_stride + 1) / 2 : row_stride;
}

gsize
m2i_image_wrap_size (M2iFormat f, gint width, gint height, gsize row_stride)
{
  gsize rb0, total = 0;
  if (!m2i_format_plane_geometry (f, width, height, 0, &rb0, NULL))
    return 0;
  if (row_stride == 0)
    row_stride = rb0;
  if (row_stride < rb0)
    return 0;
  for (guint p = 0; p < m2i_format_n_planes (f); p++) {
    gsize rb;
    gint rows;
    m2i_format_plane_geometry (f, width, height, p, &rb, &rows);
    gsize st = p == 0 ? row_stride : chroma_stride (f, row_stride);
    if (st < rb)
      return 0;
    total += st * (gsize) rows;
  }
  return total;
}

gboolean
m2i_image_wrap (M2iImage *img, M2iFormat f, gint width, gint height,
    gpointer buf, gsize buf_size, gsize row_stride, GError **error)
{
  gsize rb0;
  if (!m2i_format_plane_geometry (f, width, height, 0, &rb0, NULL)) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "cannot lay out a %dx%d %s image: unknown format or size not positive",
        width, height, m2i_format_to_string (f));
    return FALSE;
  }
  if (row_stride == 0)
    row_stride = rb0;
  gsize need = m2i_image_wrap_size (f, width, height, row_stride);
  if (need == 0) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "row stride %" G_GSIZE_FORMAT " is smaller than a %s row of width %d (%"
        G_GSIZE_FORMAT " bytes)", row_stride, m2i_format_to_string (f), width, rb0);
    return FALSE;
  }
  if (!buf || buf_size < need) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_BUFFER_TOO_SMALL,
        "a %dx%d %s image with row stride %" G_GSIZE_FORMAT " needs %" G_GSIZE_FORMAT
        " bytes, the buffer has %" G_GSIZE_FORMAT, width, height,
        m2i_format_to_string (f), row_stride, need, buf ? buf_size : 0);
    return FALSE;
  }
  m2i_image_init (img, f, width, height);
  guint8 *at = buf;
  gsize left = buf_size;
  for (guint p = 0; p < m2i_format_n_planes (f); p++) {
    gint rows;
    m2i_format_plane_geometry (f, width, height, p, NULL, &rows);
    img->stride[p] = p == 0 ? row_stride : chroma_stride (f, row_stride);
    img->data[p] = at;
    img->size[p] = left;
    at += img->stride[p] * (gsize) rows;
    left -= img->stride[p] * (gsize) rows;
  }
  return TRUE;
}

gboolean
m2i_image_same_geometry (const M2iImage *a, const M2iImage *b)
{
  if (a->format != b->format || a->width != b->width || a->height != b->height)
    return FALSE;
  for (guint p = 0; p < m2i_format_n_planes (a->format); p++)
    if (a->stride[p] != b->stride[p])
      return FALSE;
  return TRUE;
}

gboolean
m2i_image_check (const M2iImage *img, const char *what, gboolean check_data,
    GError **error)
{
  M2iFormat f = img->format;
  if (f <= M2I_FORMAT_UNKNOWN || f >= M2I_FORMAT_LAST) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "%s: unknown image format %d", what, (int) f);
    return FALSE;
  }
  if (img->width <= 0 || img->height <= 0) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "%s: %s image size %dx%d is not positive", what,
        m2i_format_to_string (f), img->width, img->height);
    return FALSE;
  }
  if (m2i_format_is_yuv (f) && ((img->width | img->height) & 1)) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "%s: %s needs an even width and height (chroma is subsampled 2x2), got %dx%d",
        what, m2i_format_to_string (f), img->width, img->height);
    return FALSE;
  }
  if (img->width > (1 << 16) || img->height > (1 << 16)) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_UNSUPPORTED,
        "%s: image size %dx%d exceeds the M2I limit of 65536x65536", what,
        img->width, img->height);
    return FALSE;
  }
  for (guint p = 0; p < m2i_format_n_planes (f); p++) {
    gsize rb;
    m2i_format_plane_geometry (f, img->width, img->height, p, &rb, NULL);
    if (img->stride[p] < rb) {
      g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
          "%s: plane %u stride %" G_GSIZE_FORMAT " is smaller than its row of %"
          G_GSIZE_FORMAT " bytes (%s, width %d)", what, p, img->stride[p], rb,
          m2i_format_to_string (f), img->width);
      return FALSE;
    }
    guint bps = m2i_format_bytes_per_sample (f);
    if (img->stride[p] % bps || (check_data && (guintptr) img->data[p] % bps)) {
      g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
          "%s: plane %u pointer and stride must be multiples of the %u-byte %s sample",
          what, p, bps, m2i_format_to_string (f));
      return FALSE;
    }
    if (check_data) {
      gsize need = m2i_image_plane_min_size (img, p);
      if (!img->data[p]) {
        g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
            "%s: plane %u has no data pointer", what, p);
        return FALSE;
      }
      if (img->size[p] < need) {
        g_set_error (error, M2I_ERROR, M2I_ERROR_BUFFER_TOO_SMALL,
            "%s: plane %u holds %" G_GSIZE_FORMAT " bytes, a %dx%d %s plane with stride %"
            G_GSIZE_FORMAT " needs %" G_GSIZE_FORMAT, what, p, img->size[p],
            img->width, img->height, m2i_format_to_string (f), img->stride[p], need);
        return FALSE;
      }
    }
  }
  return TRUE;
}
