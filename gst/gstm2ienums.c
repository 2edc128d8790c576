/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gstm2ienums.c — GEnum types of the m2i element properties. */
#include "gstm2ienums.h"

#include "gstm2iinfer.h"

#include <m2i-core/m2i/m2i.h>
#include <m2i-core/infer/m2i-decode.h>
#include <m2i-core/infer/m2i-model-info.h>

#define DEFINE_ENUM(func, TypeName, values)                             \
  GType                                                                 \
  func (void)                                                           \
  {                                                                     \
    static GType type = 0;                                              \
    if (g_once_init_enter (&type)) {                                    \
      GType t = g_enum_register_static (TypeName, values);              \
      gst_type_mark_as_plugin_api (t, 0);                               \
      g_once_init_leave (&type, t);                                     \
    }                                                                   \
    return type;                                                        \
  }

static const GEnumValue profile_values[] = {
  { M2I_PROFILE_DEFAULT, "The seed's M2I block: fuses csc with convert/resize/permute; "
        "no fp32, no interleaved fp output, norm in a task of its own", "default" },
  { M2I_PROFILE_EXTENDED, "The default block plus norm fused into the same task, fp32 "
        "(convertU8F32, resize and norm on fp32) and CPU-finished interleaved fp output",
        "extended" },
  { 0, NULL, NULL },
};
DEFINE_ENUM (gst_m2i_profile_get_type, "GstM2iProfile", profile_values)

static const GEnumValue model_type_values[] = {
  { M2I_MODEL_TYPE_AUTO, "Recognised: the model's metadata (model_info/model_type, "
        "framework/task), else its outputs' shapes", "auto" },
  { M2I_MODEL_TYPE_RAW, "No decoding: the output tensors only", "raw" },
  { M2I_MODEL_TYPE_CLASSIFIER, "Classifier: [1,C] scores or logits, top-k classes",
        "classifier" },
  { M2I_MODEL_TYPE_MULTI_LABEL, "Multi-label classifier: independent sigmoids, every class "
        "above the threshold", "multi-label" },
  { M2I_MODEL_TYPE_SSD, "SSD: DetectionOutput [1,1,N,7]", "ssd" },
  { M2I_MODEL_TYPE_YOLO_V5, "YOLOv5/v7: [1,N,5+C] with objectness", "yolo-v5" },
  { M2I_MODEL_TYPE_YOLO_V8, "YOLOv8/v9/v11: [1,4+C,N] (+ pose keypoints)", "yolo-v8" },
  { M2I_MODEL_TYPE_YOLO_V10, "YOLOv10 / NMS-inside Ultralytics exports: [1,N,6]",
        "yolo-v10" },
  { M2I_MODEL_TYPE_REGION_YOLO, "YOLO v2/v3/v4 heads (RegionYolo)", "region-yolo" },
  { M2I_MODEL_TYPE_DETECTION_NMS, "Detector with NMS inside: boxes + labels (+ scores)",
        "detection-nms" },
  { M2I_MODEL_TYPE_SEGMENTATION, "Semantic segmentation: [1,C,H,W] scores or a class map",
        "segmentation" },
  { M2I_MODEL_TYPE_MULTI_HEAD, "One result per output: classifier, multi-label or "
        "regression heads", "multi-head" },
  { M2I_MODEL_TYPE_OPENPOSE, "OpenPose: heatmaps [1,19,H,W] + part affinity fields "
        "[1,38,H,W], people with 18 COCO keypoints", "openpose" },
  { 0, NULL, NULL },
};
DEFINE_ENUM (gst_m2i_model_type_get_type, "GstM2iModelType", model_type_values)

static const GEnumValue infer_resize_type_values[] = {
  { GST_M2I_INFER_RESIZE_AUTO, "The model's own (model_info/resize_type; an Ultralytics "
        "export: letterbox), else standard", "auto" },
  { M2I_RESIZE_TYPE_STANDARD, "Stretched to the model's size", "standard" },
  { M2I_RESIZE_TYPE_FIT_TO_WINDOW, "Aspect kept, at the top left, padded right and below",
        "fit-to-window" },
  { M2I_RESIZE_TYPE_FIT_TO_WINDOW_LETTERBOX, "Aspect kept, centred, padded around "
        "(Ultralytics' letterbox)", "letterbox" },
  { M2I_RESIZE_TYPE_CROP, "Aspect kept, the centre cut to the model's aspect", "crop" },
  { 0, NULL, NULL },
};
DEFINE_ENUM (gst_m2i_infer_resize_type_get_type, "GstM2iInferResizeType",
    infer_resize_type_values)

static const GEnumValue resize_mode_values[] = {
  { M2I_RESIZE_NEAREST, "Nearest neighbour (nearest)", "nearest" },
  { M2I_RESIZE_LINEAR, "Triangle filter, N-d (linear)", "linear" },
  { M2I_RESIZE_LINEAR_ONNX, "Bilinear on the 2x2 neighbourhood (linear_onnx)", "linear-onnx" },
  { M2I_RESIZE_CUBIC, "Bicubic with cube-coeff (cubic)", "cubic" },
  { M2I_RESIZE_BILINEAR_PILLOW, "Pillow's bilinear, Interpolate-11 (bilinear_pillow)",
        "bilinear-pillow" },
  { M2I_RESIZE_BICUBIC_PILLOW, "Pillow's bicubic, Interpolate-11 (bicubic_pillow)",
        "bicubic-pillow" },
  { 0, NULL, NULL },
};
DEFINE_ENUM (gst_m2i_resize_mode_get_type, "GstM2iResizeMode", resize_mode_values)

static const GEnumValue coord_mode_values[] = {
  { M2I_COORD_HALF_PIXEL, "half_pixel: in = (out + 0.5) / scale - 0.5", "half-pixel" },
  { M2I_COORD_PYTORCH_HALF_PIXEL, "pytorch_half_pixel: as half_pixel, 0 for a 1-pixel output",
        "pytorch-half-pixel" },
  { M2I_COORD_ASYMMETRIC, "asymmetric: in = out / scale", "asymmetric" },
  { M2I_COORD_TF_HALF_PIXEL_FOR_NN, "tf_half_pixel_for_nn: in = (out + 0.5) / scale",
        "tf-half-pixel-for-nn" },
  { M2I_COORD_ALIGN_CORNERS, "align_corners: in = out * (in_size - 1) / (out_size - 1)",
        "align-corners" },
  { 0, NULL, NULL },
};
DEFINE_ENUM (gst_m2i_coord_mode_get_type, "GstM2iCoordMode", coord_mode_values)

static const GEnumValue nearest_mode_values[] = {
  { M2I_NEAREST_ROUND_PREFER_FLOOR, "round_prefer_floor: round, halves down",
        "round-prefer-floor" },
  { M2I_NEAREST_ROUND_PREFER_CEIL, "round_prefer_ceil: round, halves up", "round-prefer-ceil" },
  { M2I_NEAREST_FLOOR, "floor", "floor" },
  { M2I_NEAREST_CEIL, "ceil", "ceil" },
  { M2I_NEAREST_SIMPLE, "simple: ceil when downscaling, else truncation toward zero", "simple" },
  { 0, NULL, NULL },
};
DEFINE_ENUM (gst_m2i_nearest_mode_get_type, "GstM2iNearestMode", nearest_mode_values)

static const GEnumValue channel_order_values[] = {
  { M2I_ORDER_RGB, "R, G, B", "rgb" },
  { M2I_ORDER_BGR, "B, G, R", "bgr" },
  { 0, NULL, NULL },
};
DEFINE_ENUM (gst_m2i_channel_order_get_type, "GstM2iChannelOrder", channel_order_values)

static const GEnumValue norm_mode_values[] = {
  { GST_M2I_NORM_MEAN_STD, "out = (in * input-scale - mean) / std", "mean-std" },
  { GST_M2I_NORM_BATCH_NORM, "BatchNormInference-5: out = (in * input-scale - mean) / "
        "sqrt(variance + epsilon) * gamma + beta", "batch-norm" },
  { 0, NULL, NULL },
};
DEFINE_ENUM (gst_m2i_norm_mode_get_type, "GstM2iNormMode", norm_mode_values)

static const GEnumValue infer_output_values[] = {
  { GST_M2I_INFER_OUTPUT_META, "Push the frame (the source video of a fused m2i chain, else "
        "the input buffer) with a tensor meta, region-of-interest metas and a bus message",
        "meta" },
  { GST_M2I_INFER_OUTPUT_TENSORS, "Push the model's outputs as other/tensors buffers (one "
        "memory per output, NNStreamer's static format)", "tensors" },
  { 0, NULL, NULL },
};
DEFINE_ENUM (gst_m2i_infer_output_get_type, "GstM2iInferOutput", infer_output_values)

static const GEnumValue tracking_type_values[] = {
  { GST_M2I_TRACKING_ZERO_TERM, "Every frame is a detection frame (the detector runs on all): "
        "ids on the detected regions only", "zero-term" },
  { GST_M2I_TRACKING_SHORT_TERM, "Frames the detector skipped get the tracked objects' "
        "predicted regions (see inference-interval)", "short-term" },
  { 0, NULL, NULL },
};
DEFINE_ENUM (gst_m2i_tracking_type_get_type, "GstM2iTrackingType", tracking_type_values)

static const GEnumValue file_format_values[] = {
  { GST_M2I_FILE_FORMAT_JSON, "The whole file is one JSON array, one element per frame",
        "json" },
  { GST_M2I_FILE_FORMAT_JSON_LINES, "One JSON object per line, one line per frame (JSON "
        "Lines)", "json-lines" },
  { 0, NULL, NULL },
};
DEFINE_ENUM (gst_m2i_file_format_get_type, "GstM2iFileFormat", file_format_values)
