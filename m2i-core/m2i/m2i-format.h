/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* m2i-format.h — image formats of the M2I engine and the image descriptor.
 *
 * An image is a format, a size, and per plane a pointer, a row stride in
 * bytes (any padding allowed) and the number of bytes the caller guarantees
 * readable/writable from that pointer. Planes of one image may live in one
 * buffer (NV12 as a decoder writes it, a CHW tensor) or in separate ones.
 */
#pragma once

#include <glib.h>
#include <m2i-core/base/m2i-export.h>

G_BEGIN_DECLS

#define M2I_MAX_PLANES 3

typedef enum {
  M2I_FORMAT_UNKNOWN = 0,
  M2I_FORMAT_SP_NV12_8,       /* Y plane, then interleaved UV (U first), u8 */
  M2I_FORMAT_PL_YUV420_8,     /* I420: Y, U, V planes, u8 */
  M2I_FORMAT_IL_RGB888,       /* interleaved (HWC) u8 */
  M2I_FORMAT_IL_BGR888,
  M2I_FORMAT_PL_RGB24,        /* planar (CHW) u8 */
  M2I_FORMAT_PL_BGR24,
  M2I_FORMAT_PL_FP16_RGB,     /* planar fp16 */
  M2I_FORMAT_PL_FP16_BGR,
  M2I_FORMAT_PL_FP32_RGB,     /* extension: planar fp32 */
  M2I_FORMAT_PL_FP32_BGR,
  M2I_FORMAT_IL_FP16_RGB,     /* interleaved fp16/fp32: expressible so a */
  M2I_FORMAT_IL_FP16_BGR,     /* request can name them; the device does not */
  M2I_FORMAT_IL_FP32_RGB,     /* write them (the CPU does) */
  M2I_FORMAT_IL_FP32_BGR,
  /* 4 bytes per pixel, u8 (GStreamer's RGBx/RGBA, BGRx/BGRA, xRGB/ARGB,
   * xBGR/ABGR): three colour channels and one byte (X: padding or alpha)
   * that no op reads; dropAlpha makes IL_RGB888 / IL_BGR888 of them. */
  M2I_FORMAT_IL_RGBX8888,
  M2I_FORMAT_IL_BGRX8888,
  M2I_FORMAT_IL_XRGB8888,
  M2I_FORMAT_IL_XBGR8888,
  /* One channel (luma, GStreamer's GRAY8; a 1-channel model input), one
   * plane: u8, fp16, fp32. */
  M2I_FORMAT_PL_GRAY8,
  M2I_FORMAT_PL_FP16_GRAY,
  M2I_FORMAT_PL_FP32_GRAY,
  M2I_FORMAT_LAST
} M2iFormat;

/* Element type of a format's samples. */
typedef enum {
  M2I_DTYPE_U8,
  M2I_DTYPE_F16,
  M2I_DTYPE_F32,
} M2iDataType;

/* What the three channels of an RGB-like format are, in memory order. */
typedef enum {
  M2I_ORDER_RGB,
  M2I_ORDER_BGR,
  M2I_ORDER_GRAY,             /* one channel: luma (the *_GRAY formats) */
} M2iChannelOrder;

typedef enum {
  M2I_LAYOUT_YUV,             /* NV12 or I420 */
  M2I_LAYOUT_INTERLEAVED,     /* HWC */
  M2I_LAYOUT_PLANAR,          /* CHW */
} M2iLayout;

typedef struct {
  M2iFormat format;
  gint width, height;
  guint8 *data[M2I_MAX_PLANES];   /* first byte of each plane; not owned */
  gsize stride[M2I_MAX_PLANES];   /* bytes from one row to the next */
  gsize size[M2I_MAX_PLANES];     /* bytes available from data[p] */
} M2iImage;

/* Seed spelling ("SP_NV12_8", "PL_FP16_RGB", ...) of a format; static string,
 * "UNKNOWN" for an out-of-range value. */
M2I_API const char *m2i_format_to_string (M2iFormat f);

/* Parses the seed spelling; returns M2I_FORMAT_UNKNOWN for anything else. */
M2I_API M2iFormat m2i_format_from_string (const char *s);

/* Properties of a format. n_planes: 2 for NV12, 3 for I420 and planar RGB,
 * 1 for interleaved and gray, 0 for an unknown format. bytes_per_sample: 1,
 * 2 or 4.
 * The rest describe M2I_FORMAT_UNKNOWN as a YUV u8 RGB-order format; check
 * the format first. */
M2I_API guint m2i_format_n_planes (M2iFormat f);
M2I_API M2iLayout m2i_format_layout (M2iFormat f);
M2I_API M2iDataType m2i_format_dtype (M2iFormat f);
M2I_API M2iChannelOrder m2i_format_order (M2iFormat f);   /* RGB for YUV formats */
M2I_API guint m2i_format_bytes_per_sample (M2iFormat f);
M2I_API gboolean m2i_format_is_yuv (M2iFormat f);
/* The channels the data holds: 1 for the *_GRAY formats, 3 for every other
 * format (YUV as the RGB it stands for; the 4-byte formats' X byte is no
 * channel); 0 for an unknown format. */
M2I_API guint m2i_format_n_channels (M2iFormat f);
/* Interleaved formats: bytes from one pixel to the next (3 or 4 for u8, 6
 * or 12 for fp) and the byte offset of the first colour channel within a
 * pixel (1 for xRGB/xBGR, else 0); planar and YUV formats: the sample size
 * and 0. */
M2I_API guint m2i_format_pixel_stride (M2iFormat f);
M2I_API guint m2i_format_channel_offset (M2iFormat f);

/* The format with the given layout (interleaved or planar), type and
 * channel order (3 bytes per u8 pixel for interleaved RGB/BGR; GRAY is
 * planar); M2I_FORMAT_UNKNOWN when there is none. */
M2I_API M2iFormat m2i_format_compose (M2iLayout layout, M2iDataType dtype,
    M2iChannelOrder order);

/* Minimum row bytes and number of rows of plane @p for a @width × @height image of format @f. Return FALSE (and
 * leave the outputs alone) for an unknown format, a plane it does not have,
 * or sizes <= 0. */
M2I_API gboolean m2i_format_plane_geometry (M2iFormat f, gint width, gint height,
    guint p, gsize *min_row_bytes, gint *rows);

/* Fills @img for a @width × @height image of format @f with tight strides
 * (each row exactly its minimum bytes) and NULL data, sizes 0. Returns FALSE
 * for an unknown format or non-positive sizes. */
M2I_API gboolean m2i_image_init (M2iImage *img, M2iFormat f, gint width, gint height);

/* Bytes plane @p needs with @img's stride: stride × (rows − 1) + row bytes
 * (the last row needs no padding). 0 if @p is not a plane of the format. */
M2I_API gsize m2i_image_plane_min_size (const M2iImage *img, guint p);

/* Lays all planes of @img one after another in @buf (@buf_size bytes), each
 * plane's rows @row_stride bytes apart (0: tight) and each plane starting
 * stride × rows after the previous one — the layout of NV12 and I420 as
 * decoders write them and of a CHW tensor. Fills data, stride and size.
 * Returns FALSE with M2I_ERROR_INVALID_ARGUMENT if @row_stride is too small
 * for the widest plane row, or M2I_ERROR_BUFFER_TOO_SMALL if @buf_size cannot
 * hold the planes. @buf stays the caller's. For NV12/I420 the chroma planes
 * use @row_stride (I420: @row_stride / 2 rounded up, at least the row). */
M2I_API gboolean m2i_image_wrap (M2iImage *img, M2iFormat f, gint width, gint height,
    gpointer buf, gsize buf_size, gsize row_stride, GError **error);

/* Bytes m2i_image_wrap() needs for a buffer with that geometry. 0 on an
 * invalid request. */
M2I_API gsize m2i_image_wrap_size (M2iFormat f, gint width, gint height, gsize row_stride);

/* TRUE when @a and @b have the same format, size and plane strides (what a
 * plan made for one also runs on the other); data pointers and plane sizes
 * are not compared. */
M2I_API gboolean m2i_image_same_geometry (const M2iImage *a, const M2iImage *b);

/* Checks that @img is usable: known format, positive size, even width and
 * height for NV12/I420, every stride at least the row bytes, and when
 * @check_data every plane pointer non-NULL and its size at least
 * m2i_image_plane_min_size(). Returns FALSE with a GError naming @what
 * ("input", "output") and the reason. */
M2I_API gboolean m2i_image_check (const M2iImage *img, const char *what,
    gboolean check_data, GError **error);

G_END_DECLS
