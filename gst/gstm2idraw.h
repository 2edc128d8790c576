/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gstm2idraw.h — drawing into video frames in place (private to the
 * plugin; m2ioverlay's pixels).
 *
 * One code path for every format: the frame is addressed per component
 * (comp 0, 1, 2 = Y, U, V or R, G, B; alpha and padding bytes are left
 * alone) through GStreamer's component description (plane, offset, pixel
 * stride, subsampling). A colour is its three component values in the
 * frame's colour space, converted once. In a subsampled component (the
 * chroma of NV12 and I420) a sample covers a 2x2 block of pixels:
 *  - filling a rectangle sets every sample whose block touches it;
 *  - blending a coverage mask averages the mask over the block;
 *  - a segmentation mask takes the class of the block's first (top-left)
 *    pixel inside the drawn rectangle.
 */
#pragma once

#include <gst/video/video.h>
#include "gstm2iregions.h"

G_BEGIN_DECLS

typedef struct {
  guint8 c[3];                  /* Y, U, V or R, G, B */
} GstM2iColor;

/* @r, @g, @b in the components of @finfo: as they are for RGB formats;
 * for YUV formats BT.601 limited range (the inverse of the csc's matrix,
 * docs/m2i-engine.md), rounded to nearest:
 *   Y = 16 + 219/255 (0.299 R + 0.587 G + 0.114 B)
 *   U = 128 + 224/255 (B - Y') / 1.772,  V = 128 + 224/255 (R - Y') / 1.402
 * with Y' = 0.299 R + 0.587 G + 0.114 B. */
void gst_m2i_color_from_rgb (const GstVideoFormatInfo *finfo, guint8 r, guint8 g, guint8 b,
    GstM2iColor *out);

/* Sets the pixels of the rectangle @x, @y, @w x @h (clipped to the frame)
 * to @c. */
void gst_m2i_draw_fill (GstVideoFrame *f, gint x, gint y, gint w, gint h, const GstM2iColor *c);

/* The outline of the rectangle @x, @y, @w x @h, @t pixels thick, inside
 * it: the pixels of the rectangle less than @t from its border. */
void gst_m2i_draw_outline (GstVideoFrame *f, gint x, gint y, gint w, gint h, gint t,
    const GstM2iColor *c);

/* A line @t pixels thick from (@x0, @y0) to (@x1, @y1) (frame pixels,
 * continuous: pixel (i, j) spans [i, i + 1) x [j, j + 1)): the segment is
 * clipped to the frame, then sampled at n + 1 evenly spaced points from end
 * to end, n = ceil(max(|dx|, |dy|)) of the clipped segment, each setting
 * the t x t square with top-left (floor(sx) - (t - 1) / 2, floor(sy) - (t -
 * 1) / 2). Nothing for a non-finite end or a segment outside the frame. */
void gst_m2i_draw_line (GstVideoFrame *f, double x0, double y0, double x1, double y1, gint t,
    const GstM2iColor *c);

/* Paints the rectangle @x, @y, @w x @h (clipped to the frame; even @x, @y,
 * @w and @h keep chroma blocks whole) with @bg and @fg mixed by the 8-bit
 * coverage @alpha (@w x @h, @stride bytes a row; 0 = bg, 255 = fg):
 * out = (bg (255 - a) + fg a + 127) / 255, a averaged (rounded) over a
 * subsampled component's block. */
void gst_m2i_draw_coverage (GstVideoFrame *f, gint x, gint y, gint w, gint h,
    const guint8 *alpha, gint stride, const GstM2iColor *fg, const GstM2iColor *bg);

/* Blends the class map @m stretched over the rectangle @x, @y, @w x @h
 * (the region it belongs to; only its part inside the frame is drawn) with
 * weight @alpha (0..255): out = (in (255 - alpha) + colour alpha + 127) /
 * 255, colour = @palette[class % @n_palette]. Pixel (px, py) shows class
 * map[floor((py - y + 0.5) H / h)][floor((px - x + 0.5) W / w)] (see
 * gstm2iregions.h). @cols is scratch of at least the frame's width. */
void gst_m2i_draw_mask (GstVideoFrame *f, gint x, gint y, gint w, gint h,
    const GstM2iMaskView *m, const GstM2iColor *palette, guint n_palette, guint alpha,
    guint *cols);

G_END_DECLS
