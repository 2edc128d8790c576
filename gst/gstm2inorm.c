/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gstm2inorm.c — m2inorm: per-channel normalization (BatchNormInference-5)
 * on the M2I block, producing fp16/fp32 tensors.
 *
 * Coefficients are given as mean/std with an input scale
 * (out = (in * input-scale - mean) / std) or as BatchNormInference's gamma,
 * beta, mean, variance and epsilon; either way the device holds four fp16
 * coefficients per channel (m2i-ops.h). Channels are in the order the data
 * has in memory. u8 input is converted (and made planar) first.
 */
#include "gstm2ibase.h"
#include "gstm2ielements.h"
#include "gstm2ienums.h"
#include "gstm2iprops.h"

#include <m2i-core/base/m2i-error.h>

#define DEFAULT_MODE GST_M2I_NORM_MEAN_STD
#define DEFAULT_EPSILON 0.0

enum {
  PROP_0,
  PROP_MODE,
  PROP_MEAN,
  PROP_STD,
  PROP_INPUT_SCALE,
  PROP_GAMMA,
  PROP_BETA,
  PROP_VARIANCE,
  PROP_EPSILON,
};

typedef struct {
  GstM2iBase parent;
  GstM2iNormMode mode;
  GstM2iSharedProps props;        /* mean, std, input-scale */
  GstM2iChannels gamma, beta, variance;
  gdouble epsilon;
} GstM2iNorm;

typedef struct {
  GstM2iBaseClass parent_class;
} GstM2iNormClass;

G_DEFINE_TYPE (GstM2iNorm, gst_m2i_norm, GST_TYPE_M2I_BASE);
GST_ELEMENT_REGISTER_DEFINE (m2inorm, "m2inorm", GST_RANK_NONE, GST_TYPE_M2I_NORM);

#define SINK_CAPS \
  GST_M2I_TENSOR_CAPS ("(" GST_CAPS_FEATURE_MEMORY_M2I ")") "; " \
  GST_M2I_VIDEO_CAPS ("(" GST_CAPS_FEATURE_MEMORY_M2I ")", "{ RGB, BGR, RGBP, BGRP }") "; " \
  GST_M2I_TENSOR_CAPS ("") "; " \
  GST_M2I_VIDEO_CAPS ("", "{ RGB, BGR, RGBP, BGRP }")
#define SRC_CAPS \
  GST_M2I_TENSOR_CAPS ("(" GST_CAPS_FEATURE_MEMORY_M2I ")") "; " GST_M2I_TENSOR_CAPS ("")

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink", GST_PAD_SINK,
    GST_PAD_ALWAYS, GST_STATIC_CAPS (SINK_CAPS));
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src", GST_PAD_SRC,
    GST_PAD_ALWAYS, GST_STATIC_CAPS (SRC_CAPS));

/* ---- formats ---------------------------------------------------------------- */

static guint
outputs_for_input (GstM2iBase *base, GstM2iCapsFormat in, GstM2iCapsFormat *list)
{
  guint n = 0;
  switch (in) {
    case GST_M2I_CF_RGB:
    case GST_M2I_CF_BGR:
      list[n++] = GST_M2I_CF_F16_PLANAR;
      list[n++] = GST_M2I_CF_F32_PLANAR;
      list[n++] = GST_M2I_CF_F16_INTERLEAVED;
      list[n++] = GST_M2I_CF_F32_INTERLEAVED;
      break;
    case GST_M2I_CF_RGBP:
    case GST_M2I_CF_BGRP:
      list[n++] = GST_M2I_CF_F16_PLANAR;
      list[n++] = GST_M2I_CF_F32_PLANAR;
      break;
    case GST_M2I_CF_F16_INTERLEAVED:
      list[n++] = GST_M2I_CF_F16_PLANAR;
      list[n++] = in;
      break;
    case GST_M2I_CF_F32_INTERLEAVED:
      list[n++] = GST_M2I_CF_F32_PLANAR;
      list[n++] = in;
      break;
    case GST_M2I_CF_F16_PLANAR:
    case GST_M2I_CF_F32_PLANAR:
      list[n++] = in;
      break;
    default:
      break;
  }
  return n;
}

static guint
inputs_for_output (GstM2iBase *base, GstM2iCapsFormat out, GstM2iCapsFormat *list)
{
  guint n = 0;
  switch (out) {
    case GST_M2I_CF_F16_PLANAR:
    case GST_M2I_CF_F32_PLANAR:
      /* Data already of the output type first: the norm has least to do. */
      list[n++] = out;
      list[n++] = out == GST_M2I_CF_F16_PLANAR ? GST_M2I_CF_F16_INTERLEAVED
          : GST_M2I_CF_F32_INTERLEAVED;
      list[n++] = GST_M2I_CF_RGBP;
      list[n++] = GST_M2I_CF_BGRP;
      list[n++] = GST_M2I_CF_RGB;
      list[n++] = GST_M2I_CF_BGR;
      break;
    case GST_M2I_CF_F16_INTERLEAVED:
    case GST_M2I_CF_F32_INTERLEAVED:
      list[n++] = out;
      list[n++] = GST_M2I_CF_RGB;
      list[n++] = GST_M2I_CF_BGR;
      break;
    default:
      break;
  }
  return n;
}

/* ---- coefficients ----------------------------------------------------------- */

/* The device coefficients from the properties (object lock held). */
static gboolean
norm_params_locked (GstM2iNorm *self, M2iNormParams *p, GError **error)
{
  if (self->mode == GST_M2I_NORM_MEAN_STD)
    return gst_m2i_norm_params_from_mean_std (p, &self->props.mean, &self->props.std, self->props.input_scale,
        error);
  if (!gst_m2i_channels_check (&self->gamma, error)
      || !gst_m2i_channels_check (&self->beta, error)
      || !gst_m2i_channels_check (&self->props.mean, error)
      || !gst_m2i_channels_check (&self->variance, error)
      || !gst_m2i_input_scale_check (self->props.input_scale, error))
    return FALSE;
  /* (in*s - mean)/sqrt(var + eps) == (in - mean/s)/sqrt(var/s^2 + eps/s^2) */
  float a[3], b[3], mean[3], var[3];
  float eps = (float) (self->epsilon / (self->props.input_scale * self->props.input_scale));
  for (int c = 0; c < 3; c++) {
    a[c] = (float) self->gamma.v[c];
    b[c] = (float) self->beta.v[c];
    mean[c] = (float) (self->props.mean.v[c] / self->props.input_scale);
    var[c] = (float) (self->variance.v[c] / (self->props.input_scale * self->props.input_scale));
  }
  if (!m2i_norm_params_from_batchnorm (p, a, b, mean, var, eps)) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "gamma/beta/mean/variance/epsilon cannot be held as fp16 coefficients (variance + "
        "epsilon must be positive, every coefficient within fp16 range)");
    return FALSE;
  }
  return TRUE;
}

/* norm_params_locked under the object lock. */
static gboolean
norm_params (GstM2iNorm *self, M2iNormParams *p, GError **error)
{
  GST_OBJECT_LOCK (self);
  gboolean ok = norm_params_locked (self, p, error);
  GST_OBJECT_UNLOCK (self);
  return ok;
}

static gboolean
check_caps (GstM2iBase *base, const GstM2iCapsInfo *in, const GstM2iCapsInfo *out,
    GError **error)
{
  GstM2iNorm *self = (GstM2iNorm *) base;
  M2iNormParams p;
  return norm_params (self, &p, error);
}

static gboolean
is_noop (GstM2iBase *base, const GstM2iCapsInfo *in, const GstM2iCapsInfo *out)
{
  GstM2iNorm *self = (GstM2iNorm *) base;
  M2iNormParams p;
  return norm_params (self, &p, NULL) && in->cf == out->cf
      && gst_m2i_norm_params_is_identity (&p);
}

static gboolean
append_ops (GstM2iBase *base, const GstM2iStage *in, const GstM2iStage *out,
    GstM2iDeferredFrame *frame, GError **error)
{
  GstM2iNorm *self = (GstM2iNorm *) base;
  M2iNormParams p;
  if (!norm_params (self, &p, error))
    return FALSE;
  M2iOpList *ops = &frame->ops;
  gboolean ok = TRUE;
  if (m2i_format_dtype (in->format) == M2I_DTYPE_U8)
    ok = m2i_op_list_add_convert (ops, m2i_format_dtype (out->format));
  if (ok && m2i_format_layout (in->format) != m2i_format_layout (out->format))
    ok = m2i_op_list_add_permute (ops);
  /* The identity norm changes no value (but -0 to +0): leave it out. */
  if (ok && !gst_m2i_norm_params_is_identity (&p))
    ok = m2i_op_list_add_norm (ops, &p);
  if (!ok)
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "cannot add norm from %s to %s to the op list", m2i_format_to_string (in->format),
        m2i_format_to_string (out->format));
  return ok;
}

/* ---- properties ------------------------------------------------------------- */

static void
gst_m2i_norm_set_property (GObject *object, guint prop_id, const GValue *value,
    GParamSpec *pspec)
{
  GstM2iNorm *self = (GstM2iNorm *) object;
  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_MODE:
      self->mode = g_value_get_enum (value);
      break;
    case PROP_GAMMA:
      gst_m2i_channels_set (&self->gamma, "gamma", value);
      break;
    case PROP_BETA:
      gst_m2i_channels_set (&self->beta, "beta", value);
      break;
    case PROP_VARIANCE:
      gst_m2i_channels_set (&self->variance, "variance", value);
      break;
    case PROP_EPSILON:
      self->epsilon = g_value_get_double (value);
      break;
    default:
      if (!gst_m2i_shared_props_set (&self->props, pspec, value, NULL))
        G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_m2i_norm_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  GstM2iNorm *self = (GstM2iNorm *) object;
  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_MODE:
      g_value_set_enum (value, self->mode);
      break;
    case PROP_GAMMA:
      gst_m2i_channels_get (&self->gamma, value);
      break;
    case PROP_BETA:
      gst_m2i_channels_get (&self->beta, value);
      break;
    case PROP_VARIANCE:
      gst_m2i_channels_get (&self->variance, value);
      break;
    case PROP_EPSILON:
      g_value_set_double (value, self->epsilon);
      break;
    default:
      if (!gst_m2i_shared_props_get (&self->props, pspec, value))
        G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_m2i_norm_finalize (GObject *object)
{
  GstM2iNorm *self = (GstM2iNorm *) object;
  gst_m2i_shared_props_clear (&self->props);
  gst_m2i_channels_clear (&self->gamma);
  gst_m2i_channels_clear (&self->beta);
  gst_m2i_channels_clear (&self->variance);
  G_OBJECT_CLASS (gst_m2i_norm_parent_class)->finalize (object);
}

static void
gst_m2i_norm_class_init (GstM2iNormClass *klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstM2iBaseClass *base_class = GST_M2I_BASE_CLASS (klass);
  GParamFlags flags = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING;

  gobject_class->set_property = gst_m2i_norm_set_property;
  gobject_class->get_property = gst_m2i_norm_get_property;
  gobject_class->finalize = gst_m2i_norm_finalize;

  g_object_class_install_property (gobject_class, PROP_MODE,
      g_param_spec_enum ("mode", "Mode", "Which properties give the coefficients: mean-std "
          "uses mean, std and input-scale; batch-norm uses gamma, beta, mean, variance, "
          "epsilon and input-scale", GST_TYPE_M2I_NORM_MODE, DEFAULT_MODE, flags));
  gst_m2i_install_mean (gobject_class, PROP_MEAN, "Per-channel mean, in the units of "
      "input * input-scale, channels in memory order; 1 value (all channels) or 3, e.g. "
      "mean=\"<0.485, 0.456, 0.406>\" (default <0, 0, 0>). Any other count is refused "
      "with an error when the element starts", flags);
  gst_m2i_install_std (gobject_class, PROP_STD, "Per-channel divisor in "
      "mode=mean-std, same units and order as mean, positive, e.g. "
      "std=\"<0.229, 0.224, 0.225>\" (default <1, 1, 1>)", flags);
  gst_m2i_install_input_scale (gobject_class, PROP_INPUT_SCALE,
      "Factor applied to the input values before mean is subtracted, e.g. 0.00392156862745098 "
      "(1/255) for mean/std given in [0,1] units; folded into the coefficients", flags);
  g_object_class_install_property (gobject_class, PROP_GAMMA,
      gst_m2i_param_spec_channels ("gamma", "Gamma", "Per-channel scale in mode=batch-norm "
          "(default <1, 1, 1>)", flags));
  g_object_class_install_property (gobject_class, PROP_BETA,
      gst_m2i_param_spec_channels ("beta", "Beta", "Per-channel offset in mode=batch-norm "
          "(default <0, 0, 0>)", flags));
  g_object_class_install_property (gobject_class, PROP_VARIANCE,
      gst_m2i_param_spec_channels ("variance", "Variance", "Per-channel variance in "
          "mode=batch-norm, units of (input * input-scale)^2 (default <1, 1, 1>)", flags));
  g_object_class_install_property (gobject_class, PROP_EPSILON,
      g_param_spec_double ("epsilon", "Epsilon", "Added to the variance in mode=batch-norm",
          0.0, G_MAXDOUBLE, DEFAULT_EPSILON, flags));

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class, "M2I normalization",
      "Filter/Converter/Video",
      "Normalizes RGB/BGR video (interleaved or planar) or fp16/fp32 tensors per channel on "
      "the M2I block (BatchNormInference-5 with fp16 coefficients) into fp16/fp32 tensors "
      "(planar; interleaved and fp32 with profile=extended), fused with adjacent m2i "
      "elements", "m2i developers");

  base_class->size_rule = GST_M2I_SIZE_SAME;
  base_class->input_formats = GST_M2I_CF_RGB8_MASK | GST_M2I_CF_TENSOR_MASK;
  base_class->takes_deferred = TRUE;
  base_class->value_wise = TRUE;
  base_class->max_ops = 3;
  base_class->outputs_for_input = outputs_for_input;
  base_class->inputs_for_output = inputs_for_output;
  base_class->check_caps = check_caps;
  base_class->is_noop = is_noop;
  base_class->append_ops = append_ops;
}

static void
gst_m2i_norm_init (GstM2iNorm *self)
{
  self->mode = DEFAULT_MODE;
  self->epsilon = DEFAULT_EPSILON;
  gst_m2i_shared_props_init (&self->props);
  gst_m2i_channels_init (&self->gamma, 1.0);
  gst_m2i_channels_init (&self->beta, 0.0);
  gst_m2i_channels_init (&self->variance, 1.0);
}
