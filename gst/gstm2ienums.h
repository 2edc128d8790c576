/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gstm2ienums.h — GEnum types of the m2i element properties. The values are
 * the engine's enums (m2i-plan.h, m2i-resize.h, m2i-format.h); the nicks are
 * the specification's spellings with dashes ("linear-onnx", "half-pixel"). */
#pragma once

#include <gst/gst.h>

G_BEGIN_DECLS

/* M2iProfile: "default", "extended". */
GType gst_m2i_profile_get_type (void);
#define GST_TYPE_M2I_PROFILE (gst_m2i_profile_get_type ())

/* M2iResizeMode: "nearest", "linear", "linear-onnx", "cubic",
 * "bilinear-pillow", "bicubic-pillow". */
GType gst_m2i_resize_mode_get_type (void);
#define GST_TYPE_M2I_RESIZE_MODE (gst_m2i_resize_mode_get_type ())

/* M2iCoordMode: "half-pixel", "pytorch-half-pixel", "asymmetric",
 * "tf-half-pixel-for-nn", "align-corners". */
GType gst_m2i_coord_mode_get_type (void);
#define GST_TYPE_M2I_COORD_MODE (gst_m2i_coord_mode_get_type ())

/* M2iNearestMode: "round-prefer-floor", "round-prefer-ceil", "floor",
 * "ceil", "simple". */
GType gst_m2i_nearest_mode_get_type (void);
#define GST_TYPE_M2I_NEAREST_MODE (gst_m2i_nearest_mode_get_type ())

/* M2iChannelOrder: "rgb", "bgr". */
GType gst_m2i_channel_order_get_type (void);
#define GST_TYPE_M2I_CHANNEL_ORDER (gst_m2i_channel_order_get_type ())

/* M2iModelType (m2i-decode.h): "auto", "raw", "classifier", "multi-label",
 * "ssd", "yolo-v5", "yolo-v8", "yolo-v10", "region-yolo", "detection-nms",
 * "segmentation", "multi-head" (m2i_model_type_name's spellings). */
GType gst_m2i_model_type_get_type (void);
#define GST_TYPE_M2I_MODEL_TYPE (gst_m2i_model_type_get_type ())

/* m2iinfer's resize-type: M2iResizeType (m2i-model-info.h) or AUTO, the
 * model's own (model_info/resize_type). */
typedef enum {
  GST_M2I_INFER_RESIZE_AUTO = -1,
} GstM2iInferResizeTypeAuto;

GType gst_m2i_infer_resize_type_get_type (void);
#define GST_TYPE_M2I_INFER_RESIZE_TYPE (gst_m2i_infer_resize_type_get_type ())

/* How m2inorm's coefficients are given. */
typedef enum {
  GST_M2I_NORM_MEAN_STD,
  GST_M2I_NORM_BATCH_NORM,
} GstM2iNormMode;

GType gst_m2i_norm_mode_get_type (void);
#define GST_TYPE_M2I_NORM_MODE (gst_m2i_norm_mode_get_type ())

/* m2itrack's tracking-type. */
typedef enum {
  GST_M2I_TRACKING_ZERO_TERM,
  GST_M2I_TRACKING_SHORT_TERM,
} GstM2iTrackingType;

GType gst_m2i_tracking_type_get_type (void);
#define GST_TYPE_M2I_TRACKING_TYPE (gst_m2i_tracking_type_get_type ())

/* m2imetapublish's file-format (values as gvametapublish's). */
typedef enum {
  GST_M2I_FILE_FORMAT_JSON = 1,
  GST_M2I_FILE_FORMAT_JSON_LINES = 2,
} GstM2iFileFormat;

GType gst_m2i_file_format_get_type (void);
#define GST_TYPE_M2I_FILE_FORMAT (gst_m2i_file_format_get_type ())

G_END_DECLS
