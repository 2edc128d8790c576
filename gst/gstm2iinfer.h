/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gstm2iinfer.h — m2iinfer: runs an OpenVINO IR model on each frame, with
 * the pre-processing fused into the M2I plan that writes the model's input,
 * and attaches the results to the buffer (see docs/m2iinfer.md).
 *
 * Results ride on the buffer that leaves the element:
 *  - a GstM2iTensorMeta (gstm2itensormeta.h) with every output tensor;
 *  - classifiers: one full-frame GstVideoRegionOfInterestMeta whose param is
 *    a "classification_layer_name:<output>" structure (label, label_id,
 *    confidence, layer_name, model_name), as DL Streamer's gvaclassify
 *    writes it;
 *  - detectors (DetectionOutput): one region meta per object, in frame
 *    pixels, with a "detection" structure (x_min, y_min, x_max, y_max
 *    normalised, confidence, label_id, label), as DL Streamer's gvadetect;
 *  - an element message "m2iinfer" on the bus (post-messages=true).
 */
#pragma once

#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_TYPE_M2I_INFER (gst_m2i_infer_get_type ())
G_DECLARE_FINAL_TYPE (GstM2iInfer, gst_m2i_infer, GST, M2I_INFER, GstElement)

/* What m2iinfer pushes downstream. */
typedef enum {
  GST_M2I_INFER_OUTPUT_META,      /* the input (or the chain's source video) with metas */
  GST_M2I_INFER_OUTPUT_TENSORS,   /* other/tensors: the model's outputs */
} GstM2iInferOutput;

GType gst_m2i_infer_output_get_type (void);
#define GST_TYPE_M2I_INFER_OUTPUT (gst_m2i_infer_output_get_type ())

GST_ELEMENT_REGISTER_DECLARE (m2iinfer);

G_END_DECLS
