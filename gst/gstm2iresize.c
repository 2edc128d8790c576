/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gstm2iresize.c — m2iresize: OpenVINO Interpolate-4/11 on the M2I block.
 *
 * Every Interpolate mode and option is a property. The output size comes
 * from the downstream caps (like videoscale). With keep-aspect-ratio the
 * picture is scaled to fit and centred, the rest filled with pad-value
 * (letterbox); inside a fused chain the padding travels with the deferred
 * frame and the border is filled by the element that runs the chain.
 */
#include "gstm2ibase.h"
#include "gstm2ielements.h"
#include "gstm2ienums.h"

#include <m2i-core/base/m2i-error.h>

#define DEFAULT_MODE M2I_RESIZE_LINEAR_ONNX
#define DEFAULT_COORD M2I_COORD_HALF_PIXEL
#define DEFAULT_NEAREST M2I_NEAREST_ROUND_PREFER_FLOOR
#define DEFAULT_ANTIALIAS FALSE
#define DEFAULT_CUBE_COEFF -0.75
#define DEFAULT_KEEP_ASPECT_RATIO FALSE
#define DEFAULT_PAD_VALUE 0.0

enum {
  PROP_0,
  PROP_MODE,
  PROP_COORD,
  PROP_NEAREST,
  PROP_ANTIALIAS,
  PROP_CUBE_COEFF,
  PROP_KEEP_ASPECT_RATIO,
  PROP_PAD_VALUE,
};

typedef struct {
  GstM2iBase parent;
  M2iResizeMode mode;
  M2iCoordMode coord;
  M2iNearestMode nearest;
  gboolean antialias;
  gdouble cube_coeff;
  gboolean keep_aspect_ratio;
  gdouble pad_value;
} GstM2iResize;

typedef struct {
  GstM2iBaseClass parent_class;
} GstM2iResizeClass;

G_DEFINE_TYPE (GstM2iResize, gst_m2i_resize, GST_TYPE_M2I_BASE);
GST_ELEMENT_REGISTER_DEFINE (m2iresize, "m2iresize", GST_RANK_NONE, GST_TYPE_M2I_RESIZE);

#define RESIZE_CAPS \
  GST_M2I_VIDEO_CAPS ("(" GST_CAPS_FEATURE_MEMORY_M2I ")", "{ RGB, BGR, RGBP, BGRP }") "; " \
  GST_M2I_TENSOR_CAPS ("(" GST_CAPS_FEATURE_MEMORY_M2I ")") "; " \
  GST_M2I_VIDEO_CAPS ("", "{ RGB, BGR, RGBP, BGRP }") "; " \
  GST_M2I_TENSOR_CAPS ("")

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink", GST_PAD_SINK,
    GST_PAD_ALWAYS, GST_STATIC_CAPS (RESIZE_CAPS));
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src", GST_PAD_SRC,
    GST_PAD_ALWAYS, GST_STATIC_CAPS (RESIZE_CAPS));

static guint
same_format (GstM2iBase *base, GstM2iCapsFormat cf, GstM2iCapsFormat *list)
{
  if (GST_M2I_CF_BIT (cf) & GST_M2I_CF_YUV_MASK)
    return 0;
  list[0] = cf;
  return 1;
}

static gboolean
is_noop (GstM2iBase *base, const GstM2iCapsInfo *in, const GstM2iCapsInfo *out)
{
  return in->width == out->width && in->height == out->height;
}

/* round(a * b / c) for positive sizes, at least 1. */
static gint
scale_size (gint a, gint b, gint c)
{
  gint64 r = ((gint64) a * b * 2 + c) / ((gint64) c * 2);
  return (gint) CLAMP (r, 1, GST_M2I_MAX_SIZE);
}

/* The picture inside a @W x @H canvas for a @w x @h input, keeping the
 * aspect ratio. */
static void
fit_inside (gint w, gint h, gint W, gint H, gint *iw, gint *ih)
{
  if ((gint64) W * h <= (gint64) H * w) {
    *iw = W;
    *ih = MIN (scale_size (h, W, w), H);
  } else {
    *ih = H;
    *iw = MIN (scale_size (w, H, h), W);
  }
}

static gboolean
append_ops (GstM2iBase *base, const GstM2iStage *in, const GstM2iStage *out,
    GstM2iDeferredFrame *frame, GError **error)
{
  GstM2iResize *self = (GstM2iResize *) base;
  if (in->width == out->width && in->height == out->height)
    return TRUE;
  M2iResizeParams p;
  m2i_resize_params_init (&p, out->width, out->height);
  GST_OBJECT_LOCK (self);
  p.mode = self->mode;
  p.coord = self->coord;
  p.nearest = self->nearest;
  p.antialias = self->antialias;
  p.cube_coeff = (float) self->cube_coeff;
  gboolean keep = self->keep_aspect_ratio;
  float pad = (float) self->pad_value;
  GST_OBJECT_UNLOCK (self);
  gint iw = out->width, ih = out->height;
  if (keep)
    fit_inside (in->width, in->height, out->width, out->height, &iw, &ih);
  p.out_width = iw;
  p.out_height = ih;
  if ((iw != in->width || ih != in->height) && !m2i_op_list_add_resize (&frame->ops, &p)) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "cannot add resize to %dx%d to the op list", iw, ih);
    return FALSE;
  }
  if (iw != out->width || ih != out->height) {
    /* Letterbox: centred, the odd pixel of the border on the right/bottom. */
    frame->letterbox.active = TRUE;
    frame->letterbox.after_op = frame->ops.n_ops;
    frame->letterbox.x = (out->width - iw) / 2;
    frame->letterbox.y = (out->height - ih) / 2;
    frame->letterbox.width = out->width;
    frame->letterbox.height = out->height;
    frame->letterbox.value = pad;
  }
  return TRUE;
}

/* The value of @v (int, range or list) nearest to @target. */
static gint
nearest_allowed (const GValue *v, gint target)
{
  GstStructure *t = gst_structure_new_empty ("size");
  gst_structure_set_value (t, "v", v);
  gst_structure_fixate_field_nearest_int (t, "v", target);
  gint r = target;
  gst_structure_get_int (t, "v", &r);
  gst_structure_free (t);
  return r;
}

static void
fixate_size (GstM2iBase *base, const GstM2iCapsInfo *in, const GstStructure *s,
    GstM2iCapsFormat cf, gint *width, gint *height)
{
  GstM2iResize *self = (GstM2iResize *) base;
  GValue wv = G_VALUE_INIT, hv = G_VALUE_INIT;
  if (!gst_m2i_structure_size (s, cf, &wv, &hv)) {
    *width = in->width;
    *height = in->height;
    return;
  }
  GST_OBJECT_LOCK (self);
  gboolean keep = self->keep_aspect_ratio;
  GST_OBJECT_UNLOCK (self);
  gboolean wf = G_VALUE_HOLDS_INT (&wv), hf = G_VALUE_HOLDS_INT (&hv);
  gint w = wf ? g_value_get_int (&wv) : in->width;
  gint h = hf ? g_value_get_int (&hv) : in->height;
  /* One side given: the other follows the picture's aspect ratio when asked
   * to keep it (no padding then), else it stays the input's. */
  if (wf && !hf && keep)
    h = scale_size (in->height, w, in->width);
  else if (hf && !wf && keep)
    w = scale_size (in->width, h, in->height);
  if (!wf)
    w = nearest_allowed (&wv, w);
  if (!hf)
    h = nearest_allowed (&hv, h);
  g_value_unset (&wv);
  g_value_unset (&hv);
  *width = w;
  *height = h;
}

static void
gst_m2i_resize_set_property (GObject *object, guint prop_id, const GValue *value,
    GParamSpec *pspec)
{
  GstM2iResize *self = (GstM2iResize *) object;
  gboolean renegotiate = FALSE;
  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_MODE:
      self->mode = g_value_get_enum (value);
      break;
    case PROP_COORD:
      self->coord = g_value_get_enum (value);
      break;
    case PROP_NEAREST:
      self->nearest = g_value_get_enum (value);
      break;
    case PROP_ANTIALIAS:
      self->antialias = g_value_get_boolean (value);
      break;
    case PROP_CUBE_COEFF:
      self->cube_coeff = g_value_get_double (value);
      break;
    case PROP_KEEP_ASPECT_RATIO:
      renegotiate = self->keep_aspect_ratio != g_value_get_boolean (value);
      self->keep_aspect_ratio = g_value_get_boolean (value);
      break;
    case PROP_PAD_VALUE:
      self->pad_value = g_value_get_double (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
  if (renegotiate)
    gst_m2i_base_reconfigure (GST_M2I_BASE (self));
}

static void
gst_m2i_resize_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  GstM2iResize *self = (GstM2iResize *) object;
  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_MODE:
      g_value_set_enum (value, self->mode);
      break;
    case PROP_COORD:
      g_value_set_enum (value, self->coord);
      break;
    case PROP_NEAREST:
      g_value_set_enum (value, self->nearest);
      break;
    case PROP_ANTIALIAS:
      g_value_set_boolean (value, self->antialias);
      break;
    case PROP_CUBE_COEFF:
      g_value_set_double (value, self->cube_coeff);
      break;
    case PROP_KEEP_ASPECT_RATIO:
      g_value_set_boolean (value, self->keep_aspect_ratio);
      break;
    case PROP_PAD_VALUE:
      g_value_set_double (value, self->pad_value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_m2i_resize_class_init (GstM2iResizeClass *klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstM2iBaseClass *base_class = GST_M2I_BASE_CLASS (klass);
  GParamFlags flags = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING;

  gobject_class->set_property = gst_m2i_resize_set_property;
  gobject_class->get_property = gst_m2i_resize_get_property;

  g_object_class_install_property (gobject_class, PROP_MODE,
      g_param_spec_enum ("mode", "Mode", "Interpolate mode (OpenVINO Interpolate-4/11 "
          "attribute \"mode\")", GST_TYPE_M2I_RESIZE_MODE, DEFAULT_MODE, flags));
  g_object_class_install_property (gobject_class, PROP_COORD,
      g_param_spec_enum ("coordinate-transformation-mode", "Coordinate transformation mode",
          "How output pixel coordinates map to input coordinates (Interpolate attribute "
          "\"coordinate_transformation_mode\")", GST_TYPE_M2I_COORD_MODE, DEFAULT_COORD,
          flags));
  g_object_class_install_property (gobject_class, PROP_NEAREST,
      g_param_spec_enum ("nearest-mode", "Nearest mode",
          "Rounding of the input coordinate in mode=nearest (Interpolate attribute "
          "\"nearest_mode\")", GST_TYPE_M2I_NEAREST_MODE, DEFAULT_NEAREST, flags));
  g_object_class_install_property (gobject_class, PROP_ANTIALIAS,
      g_param_spec_boolean ("antialias", "Antialias",
          "Widen the filter when downscaling (Interpolate attribute \"antialias\"; the "
          "pillow modes always do)", DEFAULT_ANTIALIAS, flags));
  g_object_class_install_property (gobject_class, PROP_CUBE_COEFF,
      g_param_spec_double ("cube-coeff", "Cube coefficient",
          "Parameter a of the cubic kernel in mode=cubic (Interpolate attribute "
          "\"cube_coeff\"; bicubic-pillow uses -0.5 itself); held as a float",
          -G_MAXFLOAT, G_MAXFLOAT, DEFAULT_CUBE_COEFF, flags));
  g_object_class_install_property (gobject_class, PROP_KEEP_ASPECT_RATIO,
      g_param_spec_boolean ("keep-aspect-ratio", "Keep aspect ratio",
          "Scale the picture to fit the output size without distortion, centred, and fill "
          "the rest with pad-value (letterbox: the border is split evenly, its odd pixel "
          "on the right/bottom). When downstream fixes only the width or the height, the "
          "other side follows the aspect ratio instead (no padding)",
          DEFAULT_KEEP_ASPECT_RATIO, flags));
  g_object_class_install_property (gobject_class, PROP_PAD_VALUE,
      g_param_spec_double ("pad-value", "Pad value",
          "Value of the letterbox border, in pixel units (0-255) of the data being resized, "
          "the same for every channel; ops after the resize (m2inorm) apply to it as to "
          "the picture", 0.0, 255.0, DEFAULT_PAD_VALUE, flags));

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class, "M2I resize",
      "Filter/Converter/Video/Scaler",
      "Resizes RGB/BGR video (interleaved or planar) and fp16/fp32 tensors (planar; "
      "interleaved and fp32 with profile=extended) on the M2I block with OpenVINO "
      "Interpolate-4/11 numerics (every mode and option), optionally letterboxed, fused "
      "with adjacent m2i elements", "m2i developers");

  base_class->size_rule = GST_M2I_SIZE_ANY;
  base_class->input_formats = GST_M2I_CF_RGB8_MASK | GST_M2I_CF_TENSOR_MASK;
  base_class->takes_deferred = TRUE;
  base_class->value_wise = FALSE;
  base_class->max_ops = 1;
  base_class->outputs_for_input = same_format;
  base_class->inputs_for_output = same_format;
  base_class->is_noop = is_noop;
  base_class->append_ops = append_ops;
  base_class->fixate_size = fixate_size;
}

static void
gst_m2i_resize_init (GstM2iResize *self)
{
  self->mode = DEFAULT_MODE;
  self->coord = DEFAULT_COORD;
  self->nearest = DEFAULT_NEAREST;
  self->antialias = DEFAULT_ANTIALIAS;
  self->cube_coeff = DEFAULT_CUBE_COEFF;
  self->keep_aspect_ratio = DEFAULT_KEEP_ASPECT_RATIO;
  self->pad_value = DEFAULT_PAD_VALUE;
}
