/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* chan.c — u8 pixel rows to planar channel rows: dropAlpha's and the
 * permute's de-interleaving, gray's luma, NV12/I420's Y plane (see
 * chan-private.h). Plain C written so the compiler vectorizes it. */
#include "chan-private.h"

#include <string.h>

gboolean
m2i_chan_reader_init (ChanReader *rd, M2iFormat format, gboolean luma)
{
  memset (rd, 0, sizeof *rd);
  if (m2i_format_dtype (format) != M2I_DTYPE_U8 || format == M2I_FORMAT_UNKNOWN
      || (guint) format >= M2I_FORMAT_LAST)
    return FALSE;
  gboolean planar = m2i_format_layout (format) == M2I_LAYOUT_PLANAR;
  rd->px = m2i_format_pixel_stride (format);
  rd->off = m2i_format_channel_offset (format);
  if (m2i_format_is_yuv (format)) {
    if (!luma)
      return FALSE;
    rd->kind = CHAN_LUMA_PLANE;
    rd->n_out = 1;
    return TRUE;
  }
  if (luma && m2i_format_n_channels (format) == 3) {
    gboolean bgr = m2i_format_order (format) == M2I_ORDER_BGR;
    rd->kind = CHAN_LUMA;
    rd->n_out = 1;
    rd->r = bgr ? 2 : 0;
    rd->g = 1;
    rd->b = bgr ? 0 : 2;
    rd->planar_in = planar;
    return TRUE;
  }
  if (luma)
    return FALSE;                 /* gray of gray */
  rd->kind = planar ? CHAN_PLANES : CHAN_SPLIT;
  rd->n_out = m2i_format_n_channels (format);
  return TRUE;
}

static inline guint8
luma (guint r, guint g, guint b)
{
  return (guint8) ((299 * r + 587 * g + 114 * b + 500) / 1000);
}

void
m2i_chan_read_row (const ChanReader *rd, const M2iImage *in, gint y, gint x0, gint n,
    guint8 *scratch, const guint8 *rows[3])
{
  switch (rd->kind) {
    case CHAN_PLANES:
      for (guint c = 0; c < rd->n_out; c++)
        rows[c] = in->data[c] + (gsize) y * in->stride[c] + x0;
      return;
    case CHAN_LUMA_PLANE:
      rows[0] = in->data[0] + (gsize) y * in->stride[0] + x0;
      return;
    case CHAN_SPLIT: {
      const guint8 *s = in->data[0] + (gsize) y * in->stride[0] + (gsize) x0 * rd->px + rd->off;
      guint8 *p0 = scratch, *p1 = scratch + n, *p2 = scratch + 2 * (gsize) n;
      if (rd->px == 4) {
        for (gint i = 0; i < n; i++) {
          p0[i] = s[4 * i];
          p1[i] = s[4 * i + 1];
          p2[i] = s[4 * i + 2];
        }
      } else {
        for (gint i = 0; i < n; i++) {
          p0[i] = s[3 * i];
          p1[i] = s[3 * i + 1];
          p2[i] = s[3 * i + 2];
        }
      }
      rows[0] = p0;
      rows[1] = p1;
      rows[2] = p2;
      return;
    }
    case CHAN_LUMA: {
      const guint8 *r, *g, *b;
      gsize step;
      if (rd->planar_in) {
        r = in->data[rd->r] + (gsize) y * in->stride[rd->r] + x0;
        g = in->data[rd->g] + (gsize) y * in->stride[rd->g] + x0;
        b = in->data[rd->b] + (gsize) y * in->stride[rd->b] + x0;
        step = 1;
      } else {
        const guint8 *s = in->data[0] + (gsize) y * in->stride[0] + (gsize) x0 * rd->px + rd->off;
        r = s + rd->r;
        g = s + rd->g;
        b = s + rd->b;
        step = rd->px;
      }
      for (gint i = 0; i < n; i++)
        scratch[i] = luma (r[i * step], g[i * step], b[i * step]);
      rows[0] = scratch;
      return;
    }
  }
}
