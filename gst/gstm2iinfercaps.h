/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gstm2iinfercaps.h — m2iinfer's caps from its model (private to the
 * plugin): what the sink pad takes, the other/tensors caps of
 * output=tensors, and the check of other/tensors input against the model's
 * inputs (NNStreamer's spelling: dimensions innermost first). */
#pragma once

#include <gst/gst.h>
#include <m2i-core/infer/m2i-infer.h>

G_BEGIN_DECLS

/* Most tensors an other/tensors link carries here. */
#define GST_M2I_INFER_MAX_TENSORS 16

/* Everything the model takes on the sink pad, most preferred first:
 * deferred frames of the model's size (fp16 first: the M2I block's type),
 * deferred frames of any size (m2iinfer adds the resize) when
 * @with_deferred, then plain tensors and plain video. */
GstCaps *gst_m2i_infer_model_caps (M2iInferModel *model, gboolean with_deferred);

/* @caps (taken) with its plain structures restricted to @peer (taken;
 * downstream's caps, through which plain input passes with output=meta);
 * deferred structures stay as they are (they leave as the chain's source
 * video, which downstream cannot restrict here). */
GstCaps *gst_m2i_infer_restrict_plain (GstCaps *caps, GstCaps *peer);

/* The caps of output=tensors: one tensor per model output (f16 outputs as
 * the f32 the runtime delivers). NULL with @error when an output's type has
 * no NNStreamer name. */
GstCaps *gst_m2i_infer_output_caps (M2iInferModel *model, GError **error);

/* Checks plain other/tensors caps @s against the model's inputs (types the
 * model's, or float16/float32 for float inputs; dimensions equal after
 * dropping outer 1s) and fills, per input, the caps' type and the bytes a
 * buffer holds for it. Returns the number of inputs, 0 with @error (what
 * was given, what the model takes, what to give) when they do not fit. */
guint gst_m2i_infer_tensor_input (M2iInferModel *model, const GstStructure *s,
    M2iElementType types[GST_M2I_INFER_MAX_TENSORS], gsize bytes[GST_M2I_INFER_MAX_TENSORS],
    GError **error);

/* Whether @caps are plain other/tensors that go into the model's inputs as
 * they are (a model that takes tensors, or an image model without a
 * pre-processing head). */
gboolean gst_m2i_infer_takes_tensors (M2iInferModel *model, const GstCaps *caps);

/* Sets @error to why @caps, which the caps query did not offer, do not fit
 * the model, and what to give instead (@fusion: the element's property). */
void gst_m2i_infer_caps_refusal (M2iInferModel *model, const GstCaps *caps, gboolean fusion,
    GError **error);


G_END_DECLS
