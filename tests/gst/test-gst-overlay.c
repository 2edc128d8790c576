/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-gst-overlay.c — m2ioverlay (GstHarness).
 *
 * Every frame is checked sample by sample against a reference drawing made
 * here, independently of the element: a naive per-sample loop over the
 * whole frame that applies the documented rules (docs/analytics.md) —
 * masks, then box outlines, then labels — with the palette and the colour
 * conversion written from their formulas, and the label text rendered by
 * Pango/Cairo here in one piece (the element composes cached pieces). In
 * every format the element takes (NV12, I420, RGB, BGR, the 4-byte RGB
 * orders), at 320x240 and 1080p; bytes outside the three colour
 * components (x, alpha) stay as they were.
 */
#include "gst-test-util.h"

#include <gst/video/gstvideometa.h>
#include <pango/pangocairo.h>

#define N_PALETTE 24

static const char *all_formats[] = { "NV12", "I420", "RGB", "BGR", "RGBx", "BGRx", "xRGB",
  "xBGR", "RGBA", "BGRA", "ARGB", "ABGR" };

/* ---- the documented rules, written again ------------------------------------------ */

/* HSV (137.508° k mod 360, 0.75, 1) */
static void
palette (guint k, guint8 rgb[3])
{
  double hue = fmod (137.508 * k, 360.0);
  double c = 0.75, m = 1.0 - c;
  double hp = hue / 60.0, x = c * (1.0 - fabs (fmod (hp, 2.0) - 1.0));
  double r = 0, g = 0, b = 0;
  if (hp < 1) { r = c; g = x; }
  else if (hp < 2) { r = x; g = c; }
  else if (hp < 3) { g = c; b = x; }
  else if (hp < 4) { g = x; b = c; }
  else if (hp < 5) { r = x; b = c; }
  else { r = c; b = x; }
  rgb[0] = (guint8) floor ((r + m) * 255 + 0.5);
  rgb[1] = (guint8) floor ((g + m) * 255 + 0.5);
  rgb[2] = (guint8) floor ((b + m) * 255 + 0.5);
}

/* component values of an RGB colour in @finfo's space (BT.601 limited for YUV) */
static void
to_comps (const GstVideoFormatInfo *finfo, const guint8 rgb[3], guint8 out[3])
{
  if (!GST_VIDEO_FORMAT_INFO_IS_YUV (finfo)) {
    memcpy (out, rgb, 3);
    return;
  }
  double R = rgb[0], G = rgb[1], B = rgb[2];
  double Y = 0.299 * R + 0.587 * G + 0.114 * B;
  out[0] = (guint8) floor (16 + 219.0 / 255 * Y + 0.5);
  out[1] = (guint8) floor (128 + 224.0 / 255 * 0.5 * (B - Y) / (1 - 0.114) + 0.5);
  out[2] = (guint8) floor (128 + 224.0 / 255 * 0.5 * (R - Y) / (1 - 0.299) + 0.5);
}

static guint8
mix (guint8 under, guint8 over, guint a)
{
  return (guint8) ((under * (255 - a) + over * a + 127) / 255);
}

typedef struct {
  gint x, y, w, h;
} Rect;

static gboolean
inside (const Rect *r, gint px, gint py)
{
  return px >= r->x && px < r->x + r->w && py >= r->y && py < r->y + r->h;
}

/* whether two rectangles share a pixel (a shortcut: every test below is
 * made pixel by pixel anyway) */
static gboolean
meet (const Rect *a, const Rect *b)
{
  return a->x < b->x + b->w && b->x < a->x + a->w && a->y < b->y + b->h && b->y < a->y + a->h;
}

/* One object of the test scene. */
typedef struct {
  Rect box;
  gint label_id;                /* -1: none */
  const char *label;            /* detection label, NULL: no detection */
  double confidence;
  gint object_id;               /* 0: none */
  const char *classification;   /* a classification's label, or NULL */
  gint class_label_id;
  guint mask_w, mask_h;         /* a mask over the box when > 0 */
} Obj;

typedef struct {
  gint W, H;
  guint thickness, font_px, pad;
  gboolean show_confidence;
  guint mask_alpha;
} Look;

static const guint16 *
mask_data (const Obj *o)
{
  static guint16 map[64];
  for (guint i = 0; i < o->mask_w * o->mask_h; i++)
    map[i] = (guint16) ((i * 7 + 3) % 31);      /* classes up to 30: the palette wraps */
  return map;
}

static void
label_text (const Obj *o, gboolean show_confidence, GString *s)
{
  g_string_truncate (s, 0);
  if (o->object_id)
    g_string_append_printf (s, "%d: ", o->object_id);
  if (o->label) {
    g_string_append (s, o->label);
    if (show_confidence)
      g_string_append_printf (s, " %d%%", (int) floor (o->confidence * 100 + 0.5));
  }
  if (o->classification)
    g_string_append_printf (s, "%s%s", s->len ? " " : "", o->classification);
}

static guint
obj_color (const Obj *o)
{
  return (guint) (o->label ? o->label_id : o->class_label_id) % N_PALETTE;
}

static gboolean
full_frame (const Obj *o, const Look *lk)
{
  return !o->label && o->box.x == 0 && o->box.y == 0 && o->box.w >= lk->W && o->box.h >= lk->H;
}

/* The label of @o rendered by Pango/Cairo in one piece: its rectangle in
 * the frame and its coverage (lw x lh, caller frees). */
static guint8 *
render_label (const Obj *o, const Look *lk, Rect *r)
{
  GString *text = g_string_new (NULL);
  label_text (o, lk->show_confidence, text);
  PangoFontMap *fm = pango_cairo_font_map_new ();
  PangoContext *ctx = pango_font_map_create_context (fm);
  cairo_font_options_t *opts = cairo_font_options_create ();
  cairo_font_options_set_antialias (opts, CAIRO_ANTIALIAS_GRAY);
  cairo_font_options_set_hint_style (opts, CAIRO_HINT_STYLE_SLIGHT);
  cairo_font_options_set_hint_metrics (opts, CAIRO_HINT_METRICS_ON);
  pango_cairo_context_set_font_options (ctx, opts);
  cairo_font_options_destroy (opts);
  PangoLayout *layout = pango_layout_new (ctx);
  PangoFontDescription *desc = pango_font_description_from_string ("Sans Bold");
  pango_font_description_set_absolute_size (desc, lk->font_px * PANGO_SCALE);
  pango_layout_set_font_description (layout, desc);
  pango_layout_set_text (layout, text->str, -1);
  PangoRectangle logical;
  pango_layout_get_pixel_extents (layout, NULL, &logical);
  gint lh = (logical.height + 1) & ~1, lw = (logical.width + 2 * (gint) lk->pad + 1) & ~1;
  gint bx = full_frame (o, lk) ? 0 : o->box.x, by = full_frame (o, lk) ? 0 : o->box.y;
  r->x = bx & ~1;
  r->y = (by >= lh ? by - lh : by) & ~1;
  if (r->x + lw > lk->W)
    r->x = MAX (0, (lk->W - lw) & ~1);
  if (r->y + lh > lk->H)
    r->y = MAX (0, (lk->H - lh) & ~1);
  r->w = lw;
  r->h = lh;
  cairo_surface_t *surface = cairo_image_surface_create (CAIRO_FORMAT_A8, lw, lh);
  cairo_t *cr = cairo_create (surface);
  cairo_move_to (cr, lk->pad, 0);
  pango_cairo_show_layout (cr, layout);
  cairo_destroy (cr);
  cairo_surface_flush (surface);
  guint8 *cov = g_malloc ((gsize) lw * lh);
  for (gint y = 0; y < lh; y++)
    memcpy (cov + (gsize) y * lw, cairo_image_surface_get_data (surface)
        + (gsize) y * cairo_image_surface_get_stride (surface), lw);
  cairo_surface_destroy (surface);
  pango_font_description_free (desc);
  g_object_unref (layout);
  g_object_unref (ctx);
  g_object_unref (fm);
  g_string_free (text, TRUE);
  return cov;
}

/* Draws the scene into @f (a copy of the input) the naive way: per sample
 * of each component, over the whole frame. */
static void
reference (GstVideoFrame *f, const Obj *objs, guint n, const Look *lk, gboolean labels)
{
  const GstVideoFormatInfo *finfo = f->info.finfo;
  guint8 pal[N_PALETTE][3], text[N_PALETTE][3];
  for (guint k = 0; k < N_PALETTE; k++) {
    guint8 rgb[3];
    palette (k, rgb);
    to_comps (finfo, rgb, pal[k]);
    guint8 t = 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2] > 150 ? 0 : 255;
    guint8 trgb[3] = { t, t, t };
    to_comps (finfo, trgb, text[k]);
  }
  Rect frame = { 0, 0, lk->W, lk->H };
  Rect lab[8];
  guint8 *cov[8] = { NULL };
  for (guint o = 0; o < n && labels; o++)
    cov[o] = render_label (&objs[o], lk, &lab[o]);
  for (guint c = 0; c < 3; c++) {
    guint ws = GST_VIDEO_FORMAT_INFO_W_SUB (finfo, c), hs = GST_VIDEO_FORMAT_INFO_H_SUB (finfo, c);
    gint cw = GST_VIDEO_FRAME_COMP_WIDTH (f, c), ch = GST_VIDEO_FRAME_COMP_HEIGHT (f, c);
    for (gint j = 0; j < ch; j++)
      for (gint i = 0; i < cw; i++) {
        guint8 *p = (guint8 *) GST_VIDEO_FRAME_COMP_DATA (f, c)
            + (gsize) j * GST_VIDEO_FRAME_COMP_STRIDE (f, c) + (gsize) i * GST_VIDEO_FRAME_COMP_PSTRIDE (f, c);
        gint bx0 = i << ws, by0 = j << hs;
        gint bx1 = MIN ((i + 1) << ws, lk->W), by1 = MIN ((j + 1) << hs, lk->H);
        Rect block = { bx0, by0, bx1 - bx0, by1 - by0 };
        /* masks */
        for (guint o = 0; o < n; o++) {
          const Obj *ob = &objs[o];
          if (!ob->mask_w || !lk->mask_alpha || !meet (&block, &ob->box))
            continue;
          gint px = -1, py = -1;
          for (gint y = by0; y < by1 && px < 0; y++)
            for (gint x = bx0; x < bx1 && px < 0; x++)
              if (inside (&ob->box, x, y))
                px = x, py = y;
          if (px < 0)
            continue;
          guint u = (guint) floor ((px - ob->box.x + 0.5) * ob->mask_w / ob->box.w);
          guint v = (guint) floor ((py - ob->box.y + 0.5) * ob->mask_h / ob->box.h);
          *p = mix (*p, pal[mask_data (ob)[v * ob->mask_w + u] % N_PALETTE][c], lk->mask_alpha);
        }
        /* outlines */
        for (guint o = 0; o < n; o++) {
          const Obj *ob = &objs[o];
          if (full_frame (ob, lk) || !meet (&block, &ob->box))
            continue;
          Rect in = { ob->box.x + (gint) lk->thickness, ob->box.y + (gint) lk->thickness,
            ob->box.w - 2 * (gint) lk->thickness, ob->box.h - 2 * (gint) lk->thickness };
          gboolean hit = FALSE;
          for (gint y = by0; y < by1 && !hit; y++)
            for (gint x = bx0; x < bx1 && !hit; x++)
              hit = inside (&ob->box, x, y) && !inside (&in, x, y) && inside (&frame, x, y);
          if (hit)
            *p = pal[obj_color (ob)][c];
        }
        /* labels */
        for (guint o = 0; o < n && labels; o++) {
          if (!meet (&block, &lab[o]))
            continue;
          guint sum = 0, cnt = 0;
          for (gint y = by0; y < by1; y++)
            for (gint x = bx0; x < bx1; x++)
              if (inside (&lab[o], x, y)) {
                sum += cov[o][(gsize) (y - lab[o].y) * lab[o].w + (x - lab[o].x)];
                cnt++;
              }
          if (cnt)
            *p = mix (pal[obj_color (&objs[o])][c], text[obj_color (&objs[o])][c],
                (sum + cnt / 2) / cnt);
        }
      }
  }
  for (guint o = 0; o < n; o++)
    g_free (cov[o]);
}

/* ---- running the element ------------------------------------------------------------ */

static GstBuffer *
scene_buffer (const GstVideoInfo *info, const Obj *objs, guint n, guint32 seed)
{
  GstBuffer *buf = gst_buffer_new_allocate (NULL, GST_VIDEO_INFO_SIZE (info), NULL);
  GstMapInfo map;
  gst_buffer_map (buf, &map, GST_MAP_WRITE);
  guint32 x = seed * 2654435761u + 1;
  for (gsize i = 0; i < map.size; i++) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    map.data[i] = (guint8) (x >> 24);
  }
  gst_buffer_unmap (buf, &map);
  for (guint i = 0; i < n; i++) {
    const Obj *o = &objs[i];
    GstVideoRegionOfInterestMeta *roi = gst_buffer_add_video_region_of_interest_meta (buf,
        o->label ? o->label : o->classification, o->box.x, o->box.y, o->box.w, o->box.h);
    if (o->label)
      gst_video_region_of_interest_meta_add_param (roi, gst_structure_new ("detection",
              "x_min", G_TYPE_DOUBLE, (double) o->box.x / info->width,
              "x_max", G_TYPE_DOUBLE, (double) (o->box.x + o->box.w) / info->width,
              "y_min", G_TYPE_DOUBLE, (double) o->box.y / info->height,
              "y_max", G_TYPE_DOUBLE, (double) (o->box.y + o->box.h) / info->height,
              "confidence", G_TYPE_DOUBLE, o->confidence, "label_id", G_TYPE_INT, o->label_id,
              "label", G_TYPE_STRING, o->label, NULL));
    if (o->object_id)
      gst_video_region_of_interest_meta_add_param (roi, gst_structure_new ("object_id",
              "id", G_TYPE_INT, o->object_id, NULL));
    if (o->classification)
      gst_video_region_of_interest_meta_add_param (roi,
          gst_structure_new ("classification_layer_name:color", "label", G_TYPE_STRING,
              o->classification, "label_id", G_TYPE_INT, o->class_label_id, "confidence",
              G_TYPE_DOUBLE, 0.9, "layer_name", G_TYPE_STRING, "color", "model_name",
              G_TYPE_STRING, "test-model", NULL));
    if (o->mask_w) {
      const guint16 *map16 = mask_data (o);
      GVariant *v = g_variant_new_fixed_array (G_VARIANT_TYPE_BYTE, map16,
          o->mask_w * o->mask_h * 2, 1);
      gst_video_region_of_interest_meta_add_param (roi, gst_structure_new ("semantic_mask",
              "format", G_TYPE_STRING, "semantic_mask", "width", G_TYPE_UINT, o->mask_w,
              "height", G_TYPE_UINT, o->mask_h, "n_classes", G_TYPE_UINT, 31,
              "precision", G_TYPE_STRING, "U16", "data_buffer", G_TYPE_VARIANT, v, NULL));
    }
  }
  return buf;
}

/* The scene at @W x @H (positions scaled by @s). */
static guint
scene (Obj *objs, gint W, gint H, gint s)
{
  objs[0] = (Obj) { { 30 * s, 40 * s, 100 * s, 150 * s }, 1, "person", 0.87, 7, NULL, 0, 5, 4 };
  objs[1] = (Obj) { { 181 * s, 5 * s, 90 * s, 60 * s }, 2, "car", 0.5, 0, "red", 3, 0, 0 };
  /* partly outside the frame on the right: clipped */
  objs[2] = (Obj) { { W - 20 * s, 150 * s, 60 * s, 40 * s }, 30, "bag", 0.333, 12, NULL, 0, 0, 0 };
  objs[3] = (Obj) { { 0, 0, W, H }, -1, NULL, 0, 0, "indoor", 5, 0, 0 };
  return 4;
}

static Look
auto_look (gint W, gint H)
{
  gint side = MIN (W, H);
  Look lk = { W, H, MAX (1, side / 240), MAX (11, (side * 28 + 500) / 1000), 0, TRUE,
    128 };
  lk.pad = MAX (2, lk.font_px / 6);
  return lk;
}

/* Runs @launch on the scene in @format at @W x @H and compares with the
 * reference drawn with @lk. */
static void
check_format (const char *launch, const char *format, gint W, gint H, const Look *lk,
    gboolean labels)
{
  gchar *caps = g_strdup_printf ("video/x-raw,format=%s,width=%d,height=%d,framerate=30/1",
      format, W, H);
  GstVideoInfo info;
  GstCaps *c = gst_caps_from_string (caps);
  fail_unless (gst_video_info_from_caps (&info, c));
  Obj objs[4];
  guint n = scene (objs, W, H, W / 320);
  GstBuffer *in = scene_buffer (&info, objs, n, 11);
  GstBuffer *want = gst_buffer_copy_deep (in);

  GstHarness *h = gst_harness_new_parse (launch);
  gst_harness_set_src_caps_str (h, caps);
  fail_unless_equals_int (gst_harness_push (h, gst_buffer_ref (in)), GST_FLOW_OK);
  GstBuffer *out = gst_harness_pull (h);

  GstVideoFrame fw, fo, fi;
  fail_unless (gst_video_frame_map (&fw, &info, want, GST_MAP_READWRITE));
  reference (&fw, objs, n, lk, labels);
  fail_unless (gst_video_frame_map (&fo, &info, out, GST_MAP_READ));
  fail_unless (gst_video_frame_map (&fi, &info, in, GST_MAP_READ));
  guint changed = 0;
  for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES (&fo); p++) {
    const guint8 *a = GST_VIDEO_FRAME_PLANE_DATA (&fw, p), *b = GST_VIDEO_FRAME_PLANE_DATA (&fo, p);
    const guint8 *o = GST_VIDEO_FRAME_PLANE_DATA (&fi, p);
    gint stride = GST_VIDEO_FRAME_PLANE_STRIDE (&fo, p);
    gint rows = GST_VIDEO_FRAME_COMP_HEIGHT (&fo, p == 0 ? 0 : (GST_VIDEO_FRAME_N_PLANES (&fo) == 2 ? 1 : p));
    gint bytes = GST_VIDEO_FRAME_COMP_WIDTH (&fo, p == 0 ? 0 : 1) * GST_VIDEO_FRAME_COMP_PSTRIDE (&fo, p == 0 ? 0 : 1);
    if (GST_VIDEO_FRAME_N_PLANES (&fo) == 1)
      bytes = W * GST_VIDEO_FRAME_COMP_PSTRIDE (&fo, 0);
    for (gint y = 0; y < rows; y++)
      for (gint x = 0; x < bytes; x++) {
        gsize at = (gsize) y * stride + x;
        if (a[at] != b[at])        /* (fail_unless marks a point per call: slow) */
          fail ("%s %dx%d (%s): plane %u row %d byte %d: %u, want %u (input %u)", format, W, H,
              launch, p, y, x, b[at], a[at], o[at]);
        changed += b[at] != o[at];
      }
  }
  fail_unless (changed > 100, "%s: almost nothing drawn", format);
  gst_video_frame_unmap (&fw);
  gst_video_frame_unmap (&fo);
  gst_video_frame_unmap (&fi);
  gst_buffer_unref (out);
  gst_buffer_unref (in);
  gst_buffer_unref (want);
  gst_harness_teardown (h);
  gst_caps_unref (c);
  g_free (caps);
}

/* ---- tests ------------------------------------------------------------------------- */

/* The palette formula gives what was worked out by hand for its first
 * entries: HSV(0, .75, 1) = (255, 64, 64); HSV(137.508, .75, 1) = (64, 255,
 * 120); and the element draws them: class 0's box in RGB is (255, 64, 64). */
GST_START_TEST (test_palette)
{
  guint8 rgb[3];
  palette (0, rgb);
  fail_unless (rgb[0] == 255 && rgb[1] == 64 && rgb[2] == 64);
  palette (1, rgb);
  fail_unless (rgb[0] == 64 && rgb[1] == 255 && rgb[2] == 120, "%u %u %u", rgb[0], rgb[1], rgb[2]);

  GstVideoInfo info;
  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_RGB, 64, 48);
  Obj o = { { 10, 10, 20, 20 }, 0, "x", 0.5, 0, NULL, 0, 0, 0 };
  GstHarness *h = gst_harness_new_parse ("m2ioverlay show-labels=false");
  gst_harness_set_src_caps_str (h, "video/x-raw,format=RGB,width=64,height=48,framerate=1/1");
  fail_unless_equals_int (gst_harness_push (h, scene_buffer (&info, &o, 1, 3)), GST_FLOW_OK);
  GstBuffer *out = gst_harness_pull (h);
  GstMapInfo map;
  gst_buffer_map (out, &map, GST_MAP_READ);
  const guint8 *px = map.data + 10 * GST_VIDEO_INFO_PLANE_STRIDE (&info, 0) + 15 * 3;
  fail_unless (px[0] == 255 && px[1] == 64 && px[2] == 64);
  gst_buffer_unmap (out, &map);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}
GST_END_TEST;

/* Every format at 320x240 (1 px lines, 11 px text). */
GST_START_TEST (test_formats_qvga)
{
  Look lk = auto_look (320, 240);
  fail_unless_equals_int (lk.thickness, 1);
  fail_unless_equals_int (lk.font_px, 11);
  for (guint i = 0; i < G_N_ELEMENTS (all_formats); i++)
    check_format ("m2ioverlay", all_formats[i], 320, 240, &lk, TRUE);
}
GST_END_TEST;

/* 1080p (4 px lines, 30 px text), YUV and RGB. */
GST_START_TEST (test_formats_1080p)
{
  Look lk = auto_look (1920, 1080);
  fail_unless_equals_int (lk.thickness, 4);
  fail_unless_equals_int (lk.font_px, 30);
  check_format ("m2ioverlay", "NV12", 1920, 1080, &lk, TRUE);
  check_format ("m2ioverlay", "I420", 1920, 1080, &lk, TRUE);
  check_format ("m2ioverlay", "BGRx", 1920, 1080, &lk, TRUE);
}
GST_END_TEST;

/* The properties: thickness, font-size, show-confidence, mask-alpha,
 * show-labels. */
GST_START_TEST (test_properties)
{
  Look lk = auto_look (320, 240);
  lk.thickness = 5;
  lk.font_px = 16;
  lk.pad = MAX (2, lk.font_px / 6);
  lk.show_confidence = FALSE;
  lk.mask_alpha = 255;
  check_format ("m2ioverlay thickness=5 font-size=16 show-confidence=false mask-alpha=1.0",
      "I420", 320, 240, &lk, TRUE);
  check_format ("m2ioverlay thickness=5 font-size=16 show-confidence=false mask-alpha=1.0",
      "RGBA", 320, 240, &lk, TRUE);
  lk = auto_look (320, 240);
  lk.mask_alpha = 0;
  check_format ("m2ioverlay mask-alpha=0 show-labels=false", "NV12", 320, 240, &lk, FALSE);
}
GST_END_TEST;

static void
assert_same_bytes (GstBuffer *x, GstBuffer *y)
{
  GstMapInfo a, b;
  gst_buffer_map (x, &a, GST_MAP_READ);
  gst_buffer_map (y, &b, GST_MAP_READ);
  fail_unless (a.size == b.size && memcmp (a.data, b.data, a.size) == 0, "the frame changed");
  gst_buffer_unmap (x, &a);
  gst_buffer_unmap (y, &b);
}

/* A frame without regions passes unchanged. */
GST_START_TEST (test_no_regions)
{
  GstVideoInfo info;
  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_NV12, 64, 48);
  GstHarness *h = gst_harness_new_parse ("m2ioverlay");
  gst_harness_set_src_caps_str (h, "video/x-raw,format=NV12,width=64,height=48,framerate=1/1");
  GstBuffer *in = scene_buffer (&info, NULL, 0, 5);
  GstBuffer *copy = gst_buffer_copy_deep (in);
  fail_unless_equals_int (gst_harness_push (h, in), GST_FLOW_OK);
  GstBuffer *out = gst_harness_pull (h);
  assert_same_bytes (out, copy);
  gst_buffer_unref (out);
  gst_buffer_unref (copy);
  gst_harness_teardown (h);
}
GST_END_TEST;

/* Hostile regions draw nothing wrong and crash nothing: far outside the
 * frame (coordinates near G_MAXUINT), empty, a 10000-character label, a
 * region label that is no UTF-8, label_id G_MININT, confidence 1e300,
 * masks whose data do not match their size. A frame whose only region is a
 * full-frame one with bad masks and no label comes out unchanged. */
GST_START_TEST (test_hostile_regions)
{
  GstVideoInfo info;
  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_NV12, 64, 48);
  gchar *long_label = g_strnfill (10000, 'x');
  const char *labels[] = { long_label, NULL, "ok" };   /* NULL: the region's, not UTF-8 */
  guint boxes[][4] = { { G_MAXUINT, G_MAXUINT, G_MAXUINT, G_MAXUINT }, { 5, 5, 0, 0 },
    { 60, 40, G_MAXUINT / 2, 30 } };
  for (int bad_mask_only = 0; bad_mask_only < 2; bad_mask_only++) {
    GstHarness *h = gst_harness_new_parse ("m2ioverlay");
    gst_harness_set_src_caps_str (h, "video/x-raw,format=NV12,width=64,height=48,framerate=1/1");
    GstBuffer *in = scene_buffer (&info, NULL, 0, 5);
    for (guint i = 0; i < G_N_ELEMENTS (boxes) && !bad_mask_only; i++) {
      GstVideoRegionOfInterestMeta *roi = gst_buffer_add_video_region_of_interest_meta (in,
          "\xff\xfe bad", boxes[i][0], boxes[i][1], boxes[i][2], boxes[i][3]);
      GstStructure *det = gst_structure_new ("detection",
          "x_min", G_TYPE_DOUBLE, 0.0, "x_max", G_TYPE_DOUBLE, 1.0, "y_min", G_TYPE_DOUBLE,
          0.0, "y_max", G_TYPE_DOUBLE, 1.0, "confidence", G_TYPE_DOUBLE, 1e300,
          "label_id", G_TYPE_INT, G_MININT, NULL);
      if (labels[i])
        gst_structure_set (det, "label", G_TYPE_STRING, labels[i], NULL);
      gst_video_region_of_interest_meta_add_param (roi, det);
      gst_video_region_of_interest_meta_add_param (roi, gst_structure_new ("object_id",
              "id", G_TYPE_INT, G_MAXINT, NULL));
    }
    GstVideoRegionOfInterestMeta *roi = gst_buffer_add_video_region_of_interest_meta (in,
        "seg", 0, 0, 64, 48);
    guint16 map[4] = { 1, 2, 3, 4 };
    guint sizes[][2] = { { 4, 4 }, { 0, 2 }, { G_MAXUINT, G_MAXUINT } };
    for (guint i = 0; i < G_N_ELEMENTS (sizes); i++)
      gst_video_region_of_interest_meta_add_param (roi, gst_structure_new ("semantic_mask",
              "format", G_TYPE_STRING, "semantic_mask", "width", G_TYPE_UINT, sizes[i][0],
              "height", G_TYPE_UINT, sizes[i][1], "n_classes", G_TYPE_UINT, 5, "precision",
              G_TYPE_STRING, "U16", "data_buffer", G_TYPE_VARIANT,
              g_variant_new_fixed_array (G_VARIANT_TYPE_BYTE, map, sizeof map, 1), NULL));
    GstBuffer *copy = gst_buffer_copy_deep (in);
    fail_unless_equals_int (gst_harness_push (h, in), GST_FLOW_OK);
    GstBuffer *out = gst_harness_pull (h);
    if (bad_mask_only)
      assert_same_bytes (out, copy);
    gst_buffer_unref (out);
    gst_buffer_unref (copy);
    gst_harness_teardown (h);
  }
  g_free (long_label);
}
GST_END_TEST;

/* A pose skeleton on an RGB 64x48 black frame, thickness 1, no labels:
 * the box (4, 4)-(60, 44) outlined; keypoints at pixel centres (10.5,
 * 10.5), (40.5, 10.5), (40.5, 30.5) (score 0.9), (10.5, 30.5) (score 0.1)
 * and one not found (NaN), the skeleton a square 0-1-2-3-0 plus 0-4. With
 * keypoint-threshold 0.3 the limbs 0-1 (row 10, x 10..40) and 1-2 (column
 * 40, y 10..30) and 3x3 squares on keypoints 0, 1, 2 are drawn in the
 * class's colour, nothing else; with 0 the limbs 2-3, 3-0 and keypoint 3
 * too. Every pixel is checked. */
static void
check_skeleton (double threshold)
{
  gchar *launch = g_strdup_printf ("m2ioverlay thickness=1 show-labels=false "
      "keypoint-threshold=%g", threshold);
  GstHarness *h = gst_harness_new_parse (launch);
  gst_harness_set_src_caps_str (h, "video/x-raw,format=RGB,width=64,height=48,framerate=1/1");
  GstBuffer *in = gst_buffer_new_allocate (NULL, 64 * 48 * 3, NULL);
  gst_buffer_memset (in, 0, 0, 64 * 48 * 3);
  GstVideoRegionOfInterestMeta *roi = gst_buffer_add_video_region_of_interest_meta (in,
      "person", 4, 4, 56, 40);
  gst_video_region_of_interest_meta_add_param (roi, gst_structure_new ("detection",
          "x_min", G_TYPE_DOUBLE, 4 / 64.0, "x_max", G_TYPE_DOUBLE, 60 / 64.0,
          "y_min", G_TYPE_DOUBLE, 4 / 48.0, "y_max", G_TYPE_DOUBLE, 44 / 48.0,
          "confidence", G_TYPE_DOUBLE, 0.9, "label_id", G_TYPE_INT, 3, NULL));
  const double px[5] = { 10.5, 40.5, 40.5, 10.5, NAN }, py[5] = { 10.5, 10.5, 30.5, 30.5, NAN };
  float rel[10];
  for (int k = 0; k < 5; k++) {
    rel[2 * k] = (float) ((px[k] - 4) / 56);
    rel[2 * k + 1] = (float) ((py[k] - 4) / 40);
  }
  const float conf[5] = { 0.9f, 0.9f, 0.9f, 0.1f, -1.0f };
  const guint pairs[] = { 0, 1, 1, 2, 2, 3, 3, 0, 0, 4 };
  gst_video_region_of_interest_meta_add_param (roi, test_keypoints_structure (5, rel,
          sizeof rel, conf, NULL, pairs, 5));
  fail_unless_equals_int (gst_harness_push (h, in), GST_FLOW_OK);
  GstBuffer *out = gst_harness_pull (h);
  guint8 col[3];
  palette (3, col);
  gboolean all = threshold <= 0.1;
  GstMapInfo map;
  gst_buffer_map (out, &map, GST_MAP_READ);
  for (gint y = 0; y < 48; y++)
    for (gint x = 0; x < 64; x++) {
      gboolean box = x >= 4 && x < 60 && y >= 4 && y < 44
          && (x == 4 || x == 59 || y == 4 || y == 43);
      gboolean limb = (y == 10 && x >= 10 && x <= 40) || (x == 40 && y >= 10 && y <= 30)
          || (all && ((y == 30 && x >= 10 && x <= 40) || (x == 10 && y >= 10 && y <= 30)));
      gboolean dot = FALSE;
      for (int k = 0; k < 4; k++)
        if ((k != 3 || all) && abs (x - (gint) px[k]) <= 1 && abs (y - (gint) py[k]) <= 1)
          dot = TRUE;
      const guint8 *p = map.data + (y * 64 + x) * 3;
      gboolean lit = box || limb || dot;
      for (int c = 0; c < 3; c++)
        fail_unless_equals_int (p[c], lit ? col[c] : 0);
    }
  gst_buffer_unmap (out, &map);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
  g_free (launch);
}

GST_START_TEST (test_skeleton)
{
  check_skeleton (0.3);
  check_skeleton (0.0);
}
GST_END_TEST;

/* A diagonal limb and one reaching far outside the frame: the diagonal
 * sets one pixel per column from end to end (the samples of the documented
 * rule), the far one is clipped at the frame's edge without a hang. */
GST_START_TEST (test_skeleton_clipped)
{
  GstHarness *h = gst_harness_new_parse ("m2ioverlay thickness=1 show-labels=false");
  gst_harness_set_src_caps_str (h, "video/x-raw,format=RGB,width=64,height=48,framerate=1/1");
  GstBuffer *in = gst_buffer_new_allocate (NULL, 64 * 48 * 3, NULL);
  gst_buffer_memset (in, 0, 0, 64 * 48 * 3);
  /* a region without a detection: its box is its x, y, w, h (its outline,
   * rows and columns 0 and 31, is away from the pixels checked) */
  GstVideoRegionOfInterestMeta *roi = gst_buffer_add_video_region_of_interest_meta (in,
      "p", 0, 0, 32, 32);
  /* (4.5, 4.5) -> (24.5, 24.5): the diagonal; (24.5, 24.5) -> (1e9, 24.5) */
  const float rel[6] = { 4.5f / 32, 4.5f / 32, 24.5f / 32, 24.5f / 32, 1e9f / 32, 24.5f / 32 };
  const float conf[3] = { 1, 1, 1 };
  const guint pairs[] = { 0, 1, 1, 2 };
  gst_video_region_of_interest_meta_add_param (roi, test_keypoints_structure (3, rel,
          sizeof rel, conf, NULL, pairs, 2));
  fail_unless_equals_int (gst_harness_push (h, in), GST_FLOW_OK);
  GstBuffer *out = gst_harness_pull (h);
  GstMapInfo map;
  gst_buffer_map (out, &map, GST_MAP_READ);
  for (gint i = 6; i <= 22; i++) {
    fail_unless (map.data[(i * 64 + i) * 3] != 0, "diagonal pixel %d", i);
    fail_unless (map.data[(i * 64 + i + 2) * 3] == 0 && map.data[((i + 2) * 64 + i) * 3] == 0,
        "off the diagonal at %d", i);
  }
  for (gint x = 26; x < 64; x++)
    fail_unless (map.data[(24 * 64 + x) * 3] != 0, "the clipped limb at x %d", x);
  gst_buffer_unmap (out, &map);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}
GST_END_TEST;

GST_START_TEST (test_documented)
{
  fail_unless_equals_int (test_assert_documented ("m2ioverlay"), 7);
}
GST_END_TEST;

static Suite *
m2i_overlay_suite (void)
{
  Suite *s = suite_create ("m2i-overlay");
  TCase *tc = tcase_create ("general");
  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_palette);
  tcase_add_test (tc, test_formats_qvga);
  tcase_add_test (tc, test_formats_1080p);
  tcase_add_test (tc, test_properties);
  tcase_add_test (tc, test_no_regions);
  tcase_add_test (tc, test_hostile_regions);
  tcase_add_test (tc, test_skeleton);
  tcase_add_test (tc, test_skeleton_clipped);
  tcase_add_test (tc, test_documented);
  return s;
}

GST_CHECK_MAIN (m2i_overlay);
