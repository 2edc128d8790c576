/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* decode-auto.c — what a model's metadata says about its decoder, for AUTO
 * (see decode-private.h).
 *
 * model_info/model_type is a Model API wrapper name ("YOLO", "ssd",
 * "Classification", "Segmentation", ...), a DL Streamer converter name
 * ("yolo_v8", "label", "detection_output") or what Ultralytics' exporter
 * writes ("YOLO" for every task but classify, which has no model_type of
 * its own beyond its label list); Ultralytics' ONNX metadata carried into
 * framework/task names the task. A name that stands for one layout gives
 * that decoder as if the user had named it; a family ("YOLO": Model API's
 * RegionYolo wrapper and Ultralytics' v5..v11 alike) gives its decoders in
 * order, each claiming only what AUTO's shape rules would. A name with no
 * decoder here (Model API's MaskRCNN, YOLOX, anomaly, ...) gives none:
 * the shapes decide.
 */
#include "decode-private.h"

#include <string.h>

#define YOLO_FAMILY(strict) \
  { M2I_MODEL_TYPE_REGION_YOLO, strict }, { M2I_MODEL_TYPE_YOLO_V10, strict }, \
  { M2I_MODEL_TYPE_YOLO_V5, strict }, { M2I_MODEL_TYPE_YOLO_V8, strict }

static const struct {
  const char *name;
  InferAutoCandidate candidates[4];
  guint n;
} names[] = {
  { "yolo", { YOLO_FAMILY (TRUE) }, 4 },
  { "yolov3", { { M2I_MODEL_TYPE_REGION_YOLO, FALSE } }, 1 },
  { "yolo_v3", { { M2I_MODEL_TYPE_REGION_YOLO, FALSE } }, 1 },
  { "yolov4", { { M2I_MODEL_TYPE_REGION_YOLO, FALSE } }, 1 },
  { "yolo_v4", { { M2I_MODEL_TYPE_REGION_YOLO, FALSE } }, 1 },
  { "yolov5", { { M2I_MODEL_TYPE_YOLO_V5, FALSE } }, 1 },
  { "yolo_v5", { { M2I_MODEL_TYPE_YOLO_V5, FALSE } }, 1 },
  { "yolov7", { { M2I_MODEL_TYPE_YOLO_V5, FALSE } }, 1 },
  { "yolo_v7", { { M2I_MODEL_TYPE_YOLO_V5, FALSE } }, 1 },
  { "yolov8", { { M2I_MODEL_TYPE_YOLO_V8, FALSE } }, 1 },
  { "yolo_v8", { { M2I_MODEL_TYPE_YOLO_V8, FALSE } }, 1 },
  { "yolov9", { { M2I_MODEL_TYPE_YOLO_V8, FALSE } }, 1 },
  { "yolo_v9", { { M2I_MODEL_TYPE_YOLO_V8, FALSE } }, 1 },
  { "yolo11", { { M2I_MODEL_TYPE_YOLO_V8, FALSE } }, 1 },
  { "yolov11", { { M2I_MODEL_TYPE_YOLO_V8, FALSE } }, 1 },
  { "yolo_v11", { { M2I_MODEL_TYPE_YOLO_V8, FALSE } }, 1 },
  { "yolov10", { { M2I_MODEL_TYPE_YOLO_V10, FALSE } }, 1 },
  { "yolo_v10", { { M2I_MODEL_TYPE_YOLO_V10, FALSE } }, 1 },
  { "ssd", { { M2I_MODEL_TYPE_SSD, FALSE } }, 1 },
  { "detection_output", { { M2I_MODEL_TYPE_SSD, FALSE } }, 1 },
  { "classification", { { M2I_MODEL_TYPE_CLASSIFIER, FALSE } }, 1 },
  { "label", { { M2I_MODEL_TYPE_CLASSIFIER, FALSE } }, 1 },
  { "segmentation", { { M2I_MODEL_TYPE_SEGMENTATION, FALSE } }, 1 },
  { "openpose", { { M2I_MODEL_TYPE_OPENPOSE, FALSE } }, 1 },
  { "open_pose", { { M2I_MODEL_TYPE_OPENPOSE, FALSE } }, 1 },
  { "human_pose_estimation", { { M2I_MODEL_TYPE_OPENPOSE, FALSE } }, 1 },
  /* Ultralytics' framework/task */
  { "detect", { YOLO_FAMILY (TRUE) }, 4 },
  { "pose", { YOLO_FAMILY (TRUE) }, 4 },
  { "segment", { YOLO_FAMILY (TRUE) }, 4 },
  { "classify", { { M2I_MODEL_TYPE_CLASSIFIER, FALSE } }, 1 },
};

guint
infer_auto_candidates (const M2iModelInfo *info, InferAutoCandidate *out, const char **key)
{
  const char *name = info->model_type ? info->model_type : info->task;
  *key = info->model_type ? info->model_type_from.key : info->task_from.key;
  for (guint i = 0; name && i < G_N_ELEMENTS (names); i++) {
    if (g_ascii_strcasecmp (name, names[i].name))
      continue;
    memcpy (out, names[i].candidates, names[i].n * sizeof *out);
    /* a classifier of independent sigmoids */
    if (names[i].candidates[0].type == M2I_MODEL_TYPE_CLASSIFIER && info->multilabel)
      out[0].type = M2I_MODEL_TYPE_MULTI_LABEL;
    return names[i].n;
  }
  /* no type named, but multilabel said */
  if (info->multilabel) {
    *key = info->multilabel_from.key;
    out[0] = (InferAutoCandidate) { M2I_MODEL_TYPE_MULTI_LABEL, FALSE };
    return 1;
  }
  return 0;
}
