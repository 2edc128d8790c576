/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gstm2itext.c — label text rendered with Pango/Cairo into cached coverage
 * images, see gstm2itext.h.
 *
 * Why Pango and Cairo: they are the text stack of GNOME and GStreamer's own
 * textoverlay (pango plugin), shipped and maintained by Debian; they shape
 * any script (a label file may hold any language) with fontconfig's
 * fonts, and antialias. A bitmap font would be ASCII-only and pixelated at
 * 1080p; a home-made rasteriser is out of the question.
 */
#include "gstm2itext.h"

#include <pango/pangocairo.h>
#include <string.h>

#define CHARS "0123456789%: "

typedef struct {
  GstM2iTextPiece piece;
  cairo_surface_t *surface;
} Piece;

struct _GstM2iText {
  PangoFontMap *fontmap;
  PangoContext *context;
  PangoLayout *layout;
  gint height;
  guint max_cached;
  GHashTable *cache;            /* string -> Piece */
  Piece chars[sizeof CHARS - 1];
};

static void
piece_clear (Piece *p)
{
  if (p->surface)
    cairo_surface_destroy (p->surface);
  memset (p, 0, sizeof *p);
}

static void
piece_free (gpointer data)
{
  piece_clear (data);
  g_free (data);
}

/* Renders @s into @p: from the leftmost ink (or the pen) to the rightmost
 * ink (or the advance), the line height tall. */
static gboolean
render (GstM2iText *t, const char *s, Piece *p)
{
  pango_layout_set_text (t->layout, s, -1);
  PangoRectangle ink, logical;
  pango_layout_get_pixel_extents (t->layout, &ink, &logical);
  gint left = MIN (0, ink.width > 0 ? ink.x : 0);
  gint right = MAX (logical.width, ink.width > 0 ? ink.x + ink.width : 0);
  gint w = MAX (right - left, 1);
  cairo_surface_t *surface = cairo_image_surface_create (CAIRO_FORMAT_A8, w, t->height);
  if (cairo_surface_status (surface) != CAIRO_STATUS_SUCCESS) {
    cairo_surface_destroy (surface);
    return FALSE;
  }
  cairo_t *cr = cairo_create (surface);
  cairo_move_to (cr, -left, 0);
  pango_cairo_show_layout (cr, t->layout);
  cairo_destroy (cr);
  cairo_surface_flush (surface);
  p->surface = surface;
  p->piece.advance = logical.width;
  p->piece.x = left;
  p->piece.width = w;
  p->piece.height = t->height;
  p->piece.stride = cairo_image_surface_get_stride (surface);
  p->piece.data = cairo_image_surface_get_data (surface);
  return TRUE;
}

GstM2iText *
gst_m2i_text_new (const char *font, gint pixel_size, guint max_cached)
{
  g_return_val_if_fail (pixel_size > 0, NULL);
  GstM2iText *t = g_new0 (GstM2iText, 1);
  /* a font map of our own (not the thread's default, which lives until the
   * thread ends): freed with the renderer */
  t->fontmap = pango_cairo_font_map_new ();
  t->context = pango_font_map_create_context (t->fontmap);
  cairo_font_options_t *opts = cairo_font_options_create ();
  cairo_font_options_set_antialias (opts, CAIRO_ANTIALIAS_GRAY);
  cairo_font_options_set_hint_style (opts, CAIRO_HINT_STYLE_SLIGHT);
  cairo_font_options_set_hint_metrics (opts, CAIRO_HINT_METRICS_ON);
  pango_cairo_context_set_font_options (t->context, opts);
  cairo_font_options_destroy (opts);
  PangoFontDescription *desc = pango_font_description_from_string (font ? font : "Sans");
  pango_font_description_set_absolute_size (desc, (double) pixel_size * PANGO_SCALE);
  t->layout = pango_layout_new (t->context);
  pango_layout_set_font_description (t->layout, desc);
  pango_font_description_free (desc);
  pango_layout_set_text (t->layout, "0", -1);
  PangoRectangle logical;
  pango_layout_get_pixel_extents (t->layout, NULL, &logical);
  t->height = logical.height;
  t->max_cached = MAX (max_cached, 1);
  t->cache = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, piece_free);
  gboolean ok = t->height > 0;
  for (guint i = 0; ok && i < sizeof CHARS - 1; i++) {
    char s[2] = { CHARS[i], 0 };
    ok = render (t, s, &t->chars[i]);
  }
  if (!ok) {
    gst_m2i_text_free (t);
    return NULL;
  }
  return t;
}

void
gst_m2i_text_free (GstM2iText *t)
{
  if (!t)
    return;
  for (guint i = 0; i < G_N_ELEMENTS (t->chars); i++)
    piece_clear (&t->chars[i]);
  if (t->cache)
    g_hash_table_destroy (t->cache);
  g_clear_object (&t->layout);
  g_clear_object (&t->context);
  g_clear_object (&t->fontmap);
  g_free (t);
}

gint
gst_m2i_text_height (const GstM2iText *t)
{
  return t->height;
}

const GstM2iTextPiece *
gst_m2i_text_get (GstM2iText *t, const char *s)
{
  Piece *p = g_hash_table_lookup (t->cache, s);
  if (p)
    return &p->piece;
  if (g_hash_table_size (t->cache) >= t->max_cached)
    g_hash_table_remove_all (t->cache);
  p = g_new0 (Piece, 1);
  if (!render (t, s, p)) {
    g_free (p);
    return NULL;
  }
  g_hash_table_insert (t->cache, g_strdup (s), p);
  return &p->piece;
}

const GstM2iTextPiece *
gst_m2i_text_get_char (const GstM2iText *t, char ch)
{
  const char *at = ch ? strchr (CHARS, ch) : NULL;
  return at ? &t->chars[at - CHARS].piece : NULL;
}
