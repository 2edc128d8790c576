/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gstm2ioverlay.c — m2ioverlay: draws the region metas of each frame into
 * the frame, in place: segmentation masks, boxes, pose skeletons, and a
 * label per object ("<id>: <label> <confidence>%" and the labels of its
 * classifications).
 *
 * Pixels are drawn by gstm2idraw (one path for every format, colours
 * converted once per caps); text is rendered by gstm2itext (Pango/Cairo,
 * cached coverage images) and blended over a box in the object's colour.
 * What goes where (docs/analytics.md):
 *  - colour: palette[class % 24], class = the detection's label_id (else
 *    the first classification's, else the label's quark); the palette is
 *    HSV (h = 137.508° k mod 360, s = 0.75, v = 1), k = 0..23;
 *  - box: the region's x, y, w, h, an outline `thickness` pixels wide
 *    inside it (auto: max(1, min(W, H) / 240), 1 px at 320x240, 2 px at
 *    480p, 4 px at 1080p);
 *  - label: font `font` at `font-size` pixels (auto: max(11, round(0.028
 *    min(W, H))), 11 px at 320x240, 30 px at 1080p), on a box in the
 *    object's colour `pad` = max(2, size / 6) pixels wider than the text
 *    on each side and one line tall, text black on light colours
 *    (0.299 R + 0.587 G + 0.114 B > 150) and white on dark ones; placed at
 *    (x & ~1, (y >= h ? y - h : y) & ~1) — above the box, or inside it at
 *    the top of the frame — width and height rounded up to even, moved left
 *    (up) to stay in the frame. Regions without a "detection" that cover
 *    the whole frame (a classifier's) get their label at (0, 0), no box;
 *  - mask: each "semantic_mask" param, stretched over its region, blended
 *    with weight mask-alpha;
 *  - skeleton: each "keypoints" param (a pose model's, positions relative
 *    to the region's box), in the object's colour: a line `thickness` wide
 *    for each pair of its point_connections whose two keypoints are shown,
 *    then a (2 thickness + 1)-pixel square on each shown keypoint; a
 *    keypoint is shown when it was found (finite position) and its
 *    confidence is at least keypoint-threshold (or it has none, < 0).
 * Masks are drawn first, then boxes, then skeletons, then labels. Nothing is allocated per
 * frame once the labels seen are cached.
 */
#include "gstm2ianalytics.h"
#include "gstm2idraw.h"
#include "gstm2iregions.h"
#include "gstm2itext.h"

#include <gst/video/gstvideofilter.h>
#include <math.h>
#include <string.h>

GST_DEBUG_CATEGORY_STATIC (gst_m2i_overlay_debug);
#define GST_CAT_DEFAULT gst_m2i_overlay_debug

#define DEFAULT_THICKNESS 0
#define DEFAULT_FONT "Sans Bold"
#define DEFAULT_FONT_SIZE 0
#define DEFAULT_SHOW_LABELS TRUE
#define DEFAULT_SHOW_CONFIDENCE TRUE
#define DEFAULT_MASK_ALPHA 0.5
#define DEFAULT_KEYPOINT_THRESHOLD 0.3
#define N_PALETTE 24
#define MAX_PIECES 96
#define MAX_CACHED_LABELS 256
#define MAX_LABEL_CHARS 64

enum {
  PROP_0,
  PROP_THICKNESS,
  PROP_FONT,
  PROP_FONT_SIZE,
  PROP_SHOW_LABELS,
  PROP_SHOW_CONFIDENCE,
  PROP_MASK_ALPHA,
  PROP_KEYPOINT_THRESHOLD,
};

typedef struct {
  GstVideoFilter parent;

  /* properties (object lock) */
  guint thickness, font_size;
  gchar *font;
  gboolean show_labels, show_confidence;
  gdouble mask_alpha, keypoint_threshold;

  /* from the caps (streaming thread) */
  GstM2iColor palette[N_PALETTE], text_color[N_PALETTE];
  GstM2iText *text;
  gint line_thickness, pad;
  guint8 *cov;                  /* label coverage scratch: cov_w x text height */
  gint cov_w;
  guint *cols;                  /* mask scratch: frame width */
} GstM2iOverlay;

typedef struct {
  GstVideoFilterClass parent_class;
} GstM2iOverlayClass;

GType gst_m2i_overlay_get_type (void);
G_DEFINE_TYPE (GstM2iOverlay, gst_m2i_overlay, GST_TYPE_VIDEO_FILTER);
GST_ELEMENT_REGISTER_DEFINE (m2ioverlay, "m2ioverlay", GST_RANK_NONE,
    gst_m2i_overlay_get_type ());

#define FORMATS "{ NV12, I420, RGB, BGR, RGBx, BGRx, xRGB, xBGR, RGBA, BGRA, ARGB, ABGR }"

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink", GST_PAD_SINK,
    GST_PAD_ALWAYS, GST_STATIC_CAPS (GST_VIDEO_CAPS_MAKE (FORMATS)));
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src", GST_PAD_SRC,
    GST_PAD_ALWAYS, GST_STATIC_CAPS (GST_VIDEO_CAPS_MAKE (FORMATS)));

/* ---- palette -------------------------------------------------------------------- */

/* Entry @k of the palette: HSV (137.508° k mod 360, 0.75, 1). */
static void
palette_rgb (guint k, guint8 rgb[3])
{
  double h = fmod (137.508 * k, 360.0) / 60.0, s = 0.75, v = 1.0;
  double c = v * s, x = c * (1.0 - fabs (fmod (h, 2.0) - 1.0)), m = v - c;
  double r, g, b;
  switch ((int) h) {
    case 0: r = c; g = x; b = 0; break;
    case 1: r = x; g = c; b = 0; break;
    case 2: r = 0; g = c; b = x; break;
    case 3: r = 0; g = x; b = c; break;
    case 4: r = x; g = 0; b = c; break;
    default: r = c; g = 0; b = x; break;
  }
  rgb[0] = (guint8) floor ((r + m) * 255.0 + 0.5);
  rgb[1] = (guint8) floor ((g + m) * 255.0 + 0.5);
  rgb[2] = (guint8) floor ((b + m) * 255.0 + 0.5);
}

/* ---- caps ----------------------------------------------------------------------- */

static gboolean
gst_m2i_overlay_set_info (GstVideoFilter *filter, GstCaps *incaps, GstVideoInfo *in_info,
    GstCaps *outcaps, GstVideoInfo *out_info)
{
  GstM2iOverlay *self = (GstM2iOverlay *) filter;
  gint W = GST_VIDEO_INFO_WIDTH (in_info), H = GST_VIDEO_INFO_HEIGHT (in_info);
  gint side = MIN (W, H);
  GST_OBJECT_LOCK (self);
  guint thickness = self->thickness, font_size = self->font_size;
  gchar *font = g_strdup (self->font);
  GST_OBJECT_UNLOCK (self);

  for (guint k = 0; k < N_PALETTE; k++) {
    guint8 rgb[3];
    palette_rgb (k, rgb);
    gst_m2i_color_from_rgb (in_info->finfo, rgb[0], rgb[1], rgb[2], &self->palette[k]);
    guint8 t = 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2] > 150.0 ? 0 : 255;
    gst_m2i_color_from_rgb (in_info->finfo, t, t, t, &self->text_color[k]);
  }
  self->line_thickness = thickness ? (gint) thickness : MAX (1, side / 240);
  gint px = font_size ? (gint) font_size : MAX (11, (side * 28 + 500) / 1000);
  self->pad = MAX (2, px / 6);

  g_clear_pointer (&self->text, gst_m2i_text_free);
  self->text = gst_m2i_text_new (font, px, MAX_CACHED_LABELS);
  if (!self->text) {
    GST_ELEMENT_ERROR (self, LIBRARY, INIT, ("m2ioverlay cannot render text with the font "
            "\"%s\"", font), ("install a font (Debian: fonts-dejavu-core) or set the font "
            "property to one fc-list shows"));
    g_free (font);
    return FALSE;
  }
  g_free (font);
  g_free (self->cov);
  g_free (self->cols);
  self->cov_w = (W + 1) & ~1;
  self->cov = g_malloc ((gsize) self->cov_w * ((gst_m2i_text_height (self->text) + 1) & ~1));
  self->cols = g_new (guint, W);
  GST_DEBUG_OBJECT (self, "%dx%d %s: lines %d px, text %d px (line %d px)", W, H,
      gst_video_format_to_string (GST_VIDEO_INFO_FORMAT (in_info)), self->line_thickness, px,
      gst_m2i_text_height (self->text));
  return TRUE;
}

static gboolean
gst_m2i_overlay_stop (GstBaseTransform *trans)
{
  GstM2iOverlay *self = (GstM2iOverlay *) trans;
  g_clear_pointer (&self->text, gst_m2i_text_free);
  g_clear_pointer (&self->cov, g_free);
  g_clear_pointer (&self->cols, g_free);
  return TRUE;
}

/* ---- what a region looks like ---------------------------------------------------- */

/* The first classification structure of @roi, or NULL. */
static GstStructure *
first_classification (GstVideoRegionOfInterestMeta *roi)
{
  for (GList *l = roi->params; l; l = l->next)
    if (gst_m2i_structure_is_classification (l->data))
      return l->data;
  return NULL;
}

static guint
region_color (GstVideoRegionOfInterestMeta *roi, GstStructure *det)
{
  gint id;
  GstStructure *cls;
  if (det && gst_structure_get_int (det, "label_id", &id))
    return (guint) id % N_PALETTE;
  if ((cls = first_classification (roi)) && gst_structure_get_int (cls, "label_id", &id))
    return (guint) id % N_PALETTE;
  return (guint) roi->roi_type % N_PALETTE;
}

static gboolean
is_full_frame (GstVideoRegionOfInterestMeta *roi, const GstVideoInfo *info)
{
  return roi->x == 0 && roi->y == 0 && roi->w >= (guint) GST_VIDEO_INFO_WIDTH (info)
      && roi->h >= (guint) GST_VIDEO_INFO_HEIGHT (info);
}

typedef struct {
  const GstM2iTextPiece *p[MAX_PIECES];
  guint n;
  gint width;                   /* sum of advances */
} Pieces;

static void
pieces_add (Pieces *ps, const GstM2iTextPiece *p)
{
  if (p && ps->n < MAX_PIECES) {
    ps->p[ps->n++] = p;
    ps->width += p->advance;
  }
}

/* The decimal digits of @v, then @suffix. */
static void
pieces_add_number (GstM2iOverlay *self, Pieces *ps, guint v, char suffix)
{
  char digits[16];
  g_snprintf (digits, sizeof digits, "%u%c", v, suffix);
  for (const char *c = digits; *c; c++)
    pieces_add (ps, gst_m2i_text_get_char (self->text, *c));
}

/* The piece of a label string, at most MAX_LABEL_CHARS characters of it
 * (a hostile label cannot make a huge image). */
static const GstM2iTextPiece *
label_piece (GstM2iOverlay *self, const char *label)
{
  if (!g_utf8_validate (label, -1, NULL))
    return NULL;
  if (g_utf8_strlen (label, MAX_LABEL_CHARS * 4 + 1) <= MAX_LABEL_CHARS)
    return gst_m2i_text_get (self->text, label);
  char cut[MAX_LABEL_CHARS * 4 + 1];
  g_utf8_strncpy (cut, label, MAX_LABEL_CHARS);
  return gst_m2i_text_get (self->text, cut);
}

/* "<id>: <label> <confidence>%" then " <label>" per classification. */
static void
region_text (GstM2iOverlay *self, GstVideoRegionOfInterestMeta *roi, GstStructure *det,
    gboolean show_confidence, Pieces *ps)
{
  const GstM2iTextPiece *space = gst_m2i_text_get_char (self->text, ' ');
  gint id;
  ps->n = 0;
  ps->width = 0;
  if (gst_m2i_region_get_object_id (roi, &id)) {
    pieces_add_number (self, ps, (guint) id, ':');
    pieces_add (ps, space);
  }
  if (det) {
    const gchar *label = gst_structure_get_string (det, "label");
    if (!label)
      label = g_quark_to_string (roi->roi_type);
    if (label && *label)
      pieces_add (ps, label_piece (self, label));
    gdouble conf;
    if (show_confidence && gst_structure_get_double (det, "confidence", &conf)
        && isfinite (conf)) {
      if (label && *label)
        pieces_add (ps, space);
      pieces_add_number (self, ps, (guint) CLAMP (floor (conf * 100.0 + 0.5), 0, 100), '%');
    }
  }
  for (GList *l = roi->params; l; l = l->next) {
    if (!gst_m2i_structure_is_classification (l->data))
      continue;
    if (ps->n > 0)
      pieces_add (ps, space);
    pieces_add (ps, label_piece (self, gst_structure_get_string (l->data, "label")));
  }
  if (ps->n > 0 && ps->p[ps->n - 1] == space) {
    ps->n--;
    ps->width -= space->advance;
  }
}

/* Draws the label @ps at the label position of box @bx, @by (see the top of
 * this file) in colour @k. */
static void
draw_label (GstM2iOverlay *self, GstVideoFrame *frame, const Pieces *ps, gint bx, gint by,
    guint k)
{
  gint W = GST_VIDEO_FRAME_WIDTH (frame), H = GST_VIDEO_FRAME_HEIGHT (frame);
  gint lh = (gst_m2i_text_height (self->text) + 1) & ~1;
  gint lw = (ps->width + 2 * self->pad + 1) & ~1;
  bx = MIN (bx, W);              /* beyond the frame: placed at its edge */
  by = MIN (by, H);
  gint lx = bx & ~1, ly = (by >= lh ? by - lh : by) & ~1;
  if (lx + lw > W)
    lx = MAX (0, (W - lw) & ~1);
  if (ly + lh > H)
    ly = MAX (0, (H - lh) & ~1);
  gint cw = MIN (lw, self->cov_w);
  memset (self->cov, 0, (gsize) cw * lh);
  gint pen = self->pad;
  for (guint i = 0; i < ps->n; i++) {
    const GstM2iTextPiece *p = ps->p[i];
    for (gint y = 0; y < p->height && y < lh; y++) {
      const guint8 *src = p->data + (gsize) y * p->stride;
      guint8 *dst = self->cov + (gsize) y * cw;
      for (gint x = 0; x < p->width; x++) {
        gint cx = pen + p->x + x;
        if (cx < 0 || cx >= cw || !src[x])
          continue;
        guint a = dst[cx], b = src[x];
        dst[cx] = (guint8) (a + b - (a * b + 127) / 255);       /* OVER */
      }
    }
    pen += p->advance;
  }
  gst_m2i_draw_coverage (frame, lx, ly, cw, lh, self->cov, cw, &self->text_color[k],
      &self->palette[k]);
}

/* ---- drawing --------------------------------------------------------------------- */

/* A region coordinate (guint) as a gint, saturated. */
static gint
clamp_int (guint v)
{
  return (gint) MIN (v, (guint) G_MAXINT);
}

/* Keypoint @k of @kv in frame pixels when it is shown (see the top). */
static gboolean
keypoint_shown (const GstM2iKeypointsView *kv, guint k, const double box[4], float threshold,
    double *x, double *y)
{
  float conf;
  return gst_m2i_keypoint_get (kv, k, box, x, y, &conf) && (conf < 0.0f || conf >= threshold);
}

static void
draw_skeleton (GstM2iOverlay *self, GstVideoFrame *frame, GstVideoRegionOfInterestMeta *roi,
    const GstM2iKeypointsView *kv, float threshold)
{
  double box[4];
  gst_m2i_region_box (roi, GST_VIDEO_FRAME_WIDTH (frame), GST_VIDEO_FRAME_HEIGHT (frame), box);
  const GstM2iColor *c = &self->palette[region_color (roi, gst_m2i_region_detection (roi))];
  gint t = self->line_thickness;
  for (guint i = 0; i < gst_m2i_keypoints_n_pairs (kv); i++) {
    guint a, b;
    double xa, ya, xb, yb;
    if (gst_m2i_keypoints_pair (kv, i, &a, &b) && keypoint_shown (kv, a, box, threshold, &xa, &ya)
        && keypoint_shown (kv, b, box, threshold, &xb, &yb))
      gst_m2i_draw_line (frame, xa, ya, xb, yb, t, c);
  }
  for (guint k = 0; k < kv->n; k++) {
    double x, y;
    /* positions far outside the frame: nothing to draw (and no overflow) */
    if (keypoint_shown (kv, k, box, threshold, &x, &y) && fabs (x) < G_MAXINT / 2
        && fabs (y) < G_MAXINT / 2)
      gst_m2i_draw_fill (frame, (gint) floor (x) - t, (gint) floor (y) - t, 2 * t + 1,
          2 * t + 1, c);
  }
}

static GstFlowReturn
gst_m2i_overlay_transform_frame_ip (GstVideoFilter *filter, GstVideoFrame *frame)
{
  GstM2iOverlay *self = (GstM2iOverlay *) filter;
  GST_OBJECT_LOCK (self);
  gboolean show_labels = self->show_labels, show_confidence = self->show_confidence;
  guint alpha = (guint) floor (self->mask_alpha * 255.0 + 0.5);
  float kp_threshold = (float) self->keypoint_threshold;
  GST_OBJECT_UNLOCK (self);
  GstBuffer *buf = frame->buffer;
  gpointer state;
  GstMeta *m;

  /* masks */
  state = NULL;
  while (alpha > 0 && (m = gst_buffer_iterate_meta_filtered (buf, &state,
              GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
    GstVideoRegionOfInterestMeta *roi = (GstVideoRegionOfInterestMeta *) m;
    for (GList *l = roi->params; l; l = l->next) {
      GstM2iMaskView mask;
      if (gst_m2i_mask_structure_parse (l->data, &mask))
        gst_m2i_draw_mask (frame, clamp_int (roi->x), clamp_int (roi->y), clamp_int (roi->w),
            clamp_int (roi->h), &mask, self->palette, N_PALETTE, alpha, self->cols);
    }
  }

  /* boxes */
  state = NULL;
  while ((m = gst_buffer_iterate_meta_filtered (buf, &state,
              GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
    GstVideoRegionOfInterestMeta *roi = (GstVideoRegionOfInterestMeta *) m;
    GstStructure *det = gst_m2i_region_detection (roi);
    if (!det && is_full_frame (roi, &frame->info))
      continue;
    gst_m2i_draw_outline (frame, clamp_int (roi->x), clamp_int (roi->y), clamp_int (roi->w),
        clamp_int (roi->h), self->line_thickness, &self->palette[region_color (roi, det)]);
  }

  /* skeletons */
  state = NULL;
  while ((m = gst_buffer_iterate_meta_filtered (buf, &state,
              GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
    GstVideoRegionOfInterestMeta *roi = (GstVideoRegionOfInterestMeta *) m;
    for (GList *l = roi->params; l; l = l->next) {
      GstM2iKeypointsView kv;
      if (gst_m2i_keypoints_structure_parse (l->data, &kv))
        draw_skeleton (self, frame, roi, &kv, kp_threshold);
    }
  }

  /* labels */
  state = NULL;
  while (show_labels && (m = gst_buffer_iterate_meta_filtered (buf, &state,
              GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
    GstVideoRegionOfInterestMeta *roi = (GstVideoRegionOfInterestMeta *) m;
    GstStructure *det = gst_m2i_region_detection (roi);
    Pieces ps;
    region_text (self, roi, det, show_confidence, &ps);
    if (ps.n == 0)
      continue;
    gboolean whole = !det && is_full_frame (roi, &frame->info);
    draw_label (self, frame, &ps, whole ? 0 : clamp_int (roi->x), whole ? 0 : clamp_int (roi->y),
        region_color (roi, det));
  }
  return GST_FLOW_OK;
}

/* ---- properties ------------------------------------------------------------------ */

static void
gst_m2i_overlay_set_property (GObject *object, guint prop_id, const GValue *value,
    GParamSpec *pspec)
{
  GstM2iOverlay *self = (GstM2iOverlay *) object;
  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_THICKNESS:
      self->thickness = g_value_get_uint (value);
      break;
    case PROP_FONT:
      g_free (self->font);
      self->font = g_value_dup_string (value);
      if (!self->font)
        self->font = g_strdup (DEFAULT_FONT);
      break;
    case PROP_FONT_SIZE:
      self->font_size = g_value_get_uint (value);
      break;
    case PROP_SHOW_LABELS:
      self->show_labels = g_value_get_boolean (value);
      break;
    case PROP_SHOW_CONFIDENCE:
      self->show_confidence = g_value_get_boolean (value);
      break;
    case PROP_MASK_ALPHA:
      self->mask_alpha = g_value_get_double (value);
      break;
    case PROP_KEYPOINT_THRESHOLD:
      self->keypoint_threshold = g_value_get_double (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_m2i_overlay_get_property (GObject *object, guint prop_id, GValue *value,
    GParamSpec *pspec)
{
  GstM2iOverlay *self = (GstM2iOverlay *) object;
  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_THICKNESS:
      g_value_set_uint (value, self->thickness);
      break;
    case PROP_FONT:
      g_value_set_string (value, self->font);
      break;
    case PROP_FONT_SIZE:
      g_value_set_uint (value, self->font_size);
      break;
    case PROP_SHOW_LABELS:
      g_value_set_boolean (value, self->show_labels);
      break;
    case PROP_SHOW_CONFIDENCE:
      g_value_set_boolean (value, self->show_confidence);
      break;
    case PROP_MASK_ALPHA:
      g_value_set_double (value, self->mask_alpha);
      break;
    case PROP_KEYPOINT_THRESHOLD:
      g_value_set_double (value, self->keypoint_threshold);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_m2i_overlay_finalize (GObject *object)
{
  GstM2iOverlay *self = (GstM2iOverlay *) object;
  g_free (self->font);
  gst_m2i_text_free (self->text);
  g_free (self->cov);
  g_free (self->cols);
  G_OBJECT_CLASS (gst_m2i_overlay_parent_class)->finalize (object);
}

static void
gst_m2i_overlay_class_init (GstM2iOverlayClass *klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);
  GstVideoFilterClass *filter_class = GST_VIDEO_FILTER_CLASS (klass);
  GParamFlags flags = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS;
  GParamFlags at_once = flags | GST_PARAM_MUTABLE_PLAYING;

  GST_DEBUG_CATEGORY_INIT (gst_m2i_overlay_debug, "m2ioverlay", 0, "m2i overlay");
  gobject_class->set_property = gst_m2i_overlay_set_property;
  gobject_class->get_property = gst_m2i_overlay_get_property;
  gobject_class->finalize = gst_m2i_overlay_finalize;

  g_object_class_install_property (gobject_class, PROP_THICKNESS,
      g_param_spec_uint ("thickness", "Thickness", "Width of the box lines in pixels; 0: "
          "scaled with the frame, max(1, min(width, height) / 240): 1 px at 320x240, 2 px at "
          "480p, 4 px at 1080p. Applies from the next caps", 0, 256, DEFAULT_THICKNESS, flags));
  g_object_class_install_property (gobject_class, PROP_FONT,
      g_param_spec_string ("font", "Font", "Pango font description of the labels, without "
          "size (family and style, e.g. \"Sans Bold\", \"DejaVu Sans Mono\"). Applies from the "
          "next caps", DEFAULT_FONT, flags));
  g_object_class_install_property (gobject_class, PROP_FONT_SIZE,
      g_param_spec_uint ("font-size", "Font size", "Label text size in pixels; 0: scaled with "
          "the frame, max(11, round(0.028 min(width, height))): 11 px at 320x240, 30 px at "
          "1080p. Applies from the next caps", 0, 1024, DEFAULT_FONT_SIZE, flags));
  g_object_class_install_property (gobject_class, PROP_SHOW_LABELS,
      g_param_spec_boolean ("show-labels", "Show labels", "Draw each object's label: "
          "\"<id>: <label> <confidence>%\" and its classifications' labels (false: boxes and "
          "masks only)", DEFAULT_SHOW_LABELS, at_once));
  g_object_class_install_property (gobject_class, PROP_SHOW_CONFIDENCE,
      g_param_spec_boolean ("show-confidence", "Show confidence", "Put the detection's "
          "confidence in percent into the label", DEFAULT_SHOW_CONFIDENCE, at_once));
  g_object_class_install_property (gobject_class, PROP_MASK_ALPHA,
      g_param_spec_double ("mask-alpha", "Mask alpha", "Weight of the class colour where a "
          "segmentation mask (\"semantic_mask\" structure on a region) is blended into the "
          "frame; 0: masks are not drawn", 0.0, 1.0, DEFAULT_MASK_ALPHA, at_once));
  g_object_class_install_property (gobject_class, PROP_KEYPOINT_THRESHOLD,
      g_param_spec_double ("keypoint-threshold", "Keypoint threshold", "Pose skeletons "
          "(\"keypoints\" structure on a region): keypoints whose confidence is below this are "
          "not drawn, nor the limbs they end (keypoints without a confidence always are)", 0.0,
          1.0, DEFAULT_KEYPOINT_THRESHOLD, at_once));

  gst_element_class_set_static_metadata (element_class, "M2I overlay",
      "Filter/Effect/Video", "Draws the region-of-interest metas of each frame into it, in "
      "place: boxes, labels with ids and confidences (Pango/Cairo text), classification "
      "labels, segmentation masks and pose skeletons, a colour per class", "m2i");
  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);

  trans_class->stop = GST_DEBUG_FUNCPTR (gst_m2i_overlay_stop);
  filter_class->set_info = GST_DEBUG_FUNCPTR (gst_m2i_overlay_set_info);
  filter_class->transform_frame_ip = GST_DEBUG_FUNCPTR (gst_m2i_overlay_transform_frame_ip);
}

static void
gst_m2i_overlay_init (GstM2iOverlay *self)
{
  self->thickness = DEFAULT_THICKNESS;
  self->font = g_strdup (DEFAULT_FONT);
  self->font_size = DEFAULT_FONT_SIZE;
  self->show_labels = DEFAULT_SHOW_LABELS;
  self->show_confidence = DEFAULT_SHOW_CONFIDENCE;
  self->mask_alpha = DEFAULT_MASK_ALPHA;
  self->keypoint_threshold = DEFAULT_KEYPOINT_THRESHOLD;
}
