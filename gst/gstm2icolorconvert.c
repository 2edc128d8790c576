/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gstm2icolorconvert.c — m2icolorconvert: NV12/I420 to RGB, BGR, planar RGB
 * or fp16/fp32 tensors on the M2I block.
 *
 * The element appends csc, then convertU8F16/F32 when the output caps ask for
 * floats, then permute when they ask for planar data; what runs is decided by
 * the planner (alone, or fused with the m2i elements downstream).
 */
#include "gstm2ibase.h"
#include "gstm2ielements.h"
#include "gstm2ienums.h"
#include "gstm2iprops.h"

#include <m2i-core/base/m2i-error.h>

enum {
  PROP_0,
  PROP_CHANNEL_ORDER,
};

typedef struct {
  GstM2iBase parent;
  GstM2iSharedProps props;       /* channel-order (object lock) */
} GstM2iColorConvert;

typedef struct {
  GstM2iBaseClass parent_class;
} GstM2iColorConvertClass;

G_DEFINE_TYPE (GstM2iColorConvert, gst_m2i_color_convert, GST_TYPE_M2I_BASE);
GST_ELEMENT_REGISTER_DEFINE (m2icolorconvert, "m2icolorconvert", GST_RANK_NONE,
    GST_TYPE_M2I_COLOR_CONVERT);

#define SINK_CAPS GST_M2I_VIDEO_CAPS ("", "{ NV12, I420 }")
#define SRC_CAPS \
  GST_M2I_VIDEO_CAPS ("(" GST_CAPS_FEATURE_MEMORY_M2I ")", "{ RGB, BGR, RGBP, BGRP }") "; " \
  GST_M2I_TENSOR_CAPS ("(" GST_CAPS_FEATURE_MEMORY_M2I ")") "; " \
  GST_M2I_VIDEO_CAPS ("", "{ RGB, BGR, RGBP, BGRP }") "; " \
  GST_M2I_TENSOR_CAPS ("")

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink", GST_PAD_SINK,
    GST_PAD_ALWAYS, GST_STATIC_CAPS (SINK_CAPS));
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src", GST_PAD_SRC,
    GST_PAD_ALWAYS, GST_STATIC_CAPS (SRC_CAPS));

static guint
outputs_for_input (GstM2iBase *base, GstM2iCapsFormat in, GstM2iCapsFormat *list)
{
  static const GstM2iCapsFormat outs[] = {
    GST_M2I_CF_RGB, GST_M2I_CF_BGR, GST_M2I_CF_RGBP, GST_M2I_CF_BGRP,
    GST_M2I_CF_F16_PLANAR, GST_M2I_CF_F32_PLANAR,
    GST_M2I_CF_F16_INTERLEAVED, GST_M2I_CF_F32_INTERLEAVED,
  };
  if (!(GST_M2I_CF_BIT (in) & GST_M2I_CF_YUV_MASK))
    return 0;
  for (guint i = 0; i < G_N_ELEMENTS (outs); i++)
    list[i] = outs[i];
  return G_N_ELEMENTS (outs);
}

static guint
inputs_for_output (GstM2iBase *base, GstM2iCapsFormat out, GstM2iCapsFormat *list)
{
  if (GST_M2I_CF_BIT (out) & GST_M2I_CF_YUV_MASK)
    return 0;
  list[0] = GST_M2I_CF_NV12;
  list[1] = GST_M2I_CF_I420;
  return 2;
}

static M2iChannelOrder
output_order (GstM2iBase *base, M2iChannelOrder in)
{
  GstM2iColorConvert *self = (GstM2iColorConvert *) base;
  GST_OBJECT_LOCK (self);
  M2iChannelOrder o = self->props.channel_order;
  GST_OBJECT_UNLOCK (self);
  return o;
}

static gboolean
is_noop (GstM2iBase *base, const GstM2iCapsInfo *in, const GstM2iCapsInfo *out)
{
  return FALSE;
}

static gboolean
append_ops (GstM2iBase *base, const GstM2iStage *in, const GstM2iStage *out,
    GstM2iDeferredFrame *frame, GError **error)
{
  M2iOpList *ops = &frame->ops;
  gboolean ok = m2i_op_list_add_csc (ops, m2i_format_order (out->format));
  M2iDataType dt = m2i_format_dtype (out->format);
  if (ok && dt != M2I_DTYPE_U8)
    ok = m2i_op_list_add_convert (ops, dt);
  if (ok && m2i_format_layout (out->format) == M2I_LAYOUT_PLANAR)
    ok = m2i_op_list_add_permute (ops);
  if (!ok)
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "cannot add csc to %s to the op list", m2i_format_to_string (out->format));
  return ok;
}

static void
gst_m2i_color_convert_set_property (GObject *object, guint prop_id, const GValue *value,
    GParamSpec *pspec)
{
  GstM2iColorConvert *self = (GstM2iColorConvert *) object;
  GST_OBJECT_LOCK (self);
  if (!gst_m2i_shared_props_set (&self->props, pspec, value, NULL))
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
  GST_OBJECT_UNLOCK (self);
}

static void
gst_m2i_color_convert_get_property (GObject *object, guint prop_id, GValue *value,
    GParamSpec *pspec)
{
  GstM2iColorConvert *self = (GstM2iColorConvert *) object;
  GST_OBJECT_LOCK (self);
  if (!gst_m2i_shared_props_get (&self->props, pspec, value))
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
  GST_OBJECT_UNLOCK (self);
}

static void
gst_m2i_color_convert_finalize (GObject *object)
{
  gst_m2i_shared_props_clear (&((GstM2iColorConvert *) object)->props);
  G_OBJECT_CLASS (gst_m2i_color_convert_parent_class)->finalize (object);
}

static void
gst_m2i_color_convert_class_init (GstM2iColorConvertClass *klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstM2iBaseClass *base_class = GST_M2I_BASE_CLASS (klass);

  gobject_class->set_property = gst_m2i_color_convert_set_property;
  gobject_class->get_property = gst_m2i_color_convert_get_property;

  gobject_class->finalize = gst_m2i_color_convert_finalize;
  gst_m2i_install_channel_order (gobject_class, PROP_CHANNEL_ORDER,
      "Channel order of tensor output (other/tensors does not say it); video output "
      "takes it from its format (RGB/RGBP or BGR/BGRP)", GST_PARAM_MUTABLE_PLAYING);

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class, "M2I colour converter",
      "Filter/Converter/Video/Colorspace",
      "Converts NV12/I420 to RGB, BGR, planar RGB/BGR or fp16/fp32 tensors (planar; "
      "interleaved and fp32 with profile=extended) on the M2I block (OpenVINO "
      "NV12toRGB/I420toRGB numerics), fused with adjacent m2i elements",
      "m2i developers");

  base_class->size_rule = GST_M2I_SIZE_SAME;
  base_class->input_formats = GST_M2I_CF_YUV_MASK;
  base_class->takes_deferred = FALSE;
  base_class->value_wise = FALSE;
  base_class->max_ops = 3;
  base_class->outputs_for_input = outputs_for_input;
  base_class->inputs_for_output = inputs_for_output;
  base_class->output_order = output_order;
  base_class->is_noop = is_noop;
  base_class->append_ops = append_ops;
}

static void
gst_m2i_color_convert_init (GstM2iColorConvert *self)
{
  gst_m2i_shared_props_init (&self->props);
}
