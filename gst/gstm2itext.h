/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gstm2itext.h — label text for m2ioverlay, rendered with Pango and Cairo
 * (private to the plugin).
 *
 * Text is rendered once per string into an 8-bit coverage image (Cairo A8
 * surface: how much of each pixel the glyphs cover, no colour), cached, and
 * blended by the caller in any colour into any frame format. Labels are
 * cached whole; the characters of numbers ("0".."9", "%", ":", " ") are
 * rendered once each, so ids and confidences that change every frame cost
 * no rendering and no allocation: a label is a row of pieces placed side by
 * side, each advancing the pen by its logical width (ink reaching past it
 * is kept: overlapping pieces combine as Cairo's OVER).
 *
 * Rendering options are fixed so a test can reproduce them: grey
 * antialiasing, slight hinting, hinted metrics, the font description
 * "<font> <size>px" (absolute pixel size).
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* A rendered string: its coverage image starts @x pixels right of the pen
 * (x <= 0 when a glyph reaches left of it) and is @width x @height (the
 * line height); the next piece starts @advance pixels right of the pen. */
typedef struct {
  gint advance;
  gint x, width, height, stride;
  const guint8 *data;           /* coverage, height rows of stride bytes */
} GstM2iTextPiece;

typedef struct _GstM2iText GstM2iText;

/* A renderer for @font (a Pango font description without size, e.g.
 * "Sans Bold") at @pixel_size pixels (> 0), keeping up to @max_cached
 * strings. NULL when Pango finds no font at all. */
GstM2iText *gst_m2i_text_new (const char *font, gint pixel_size, guint max_cached);
void gst_m2i_text_free (GstM2iText *t);

/* The height of every piece (the font's line height) in pixels. */
gint gst_m2i_text_height (const GstM2iText *t);

/* @s rendered (cached; a full cache is emptied first). Owned by @t, valid
 * until the next call that renders. */
const GstM2iTextPiece *gst_m2i_text_get (GstM2iText *t, const char *s);

/* The pre-rendered character @ch, one of "0123456789%: "; NULL otherwise. */
const GstM2iTextPiece *gst_m2i_text_get_char (const GstM2iText *t, char ch);

G_END_DECLS
