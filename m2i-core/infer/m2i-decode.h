/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* m2i-decode.h — decoders: a model's output tensors to results
 * (m2i-infer-results.h). Plain C, no GStreamer.
 *
 * A decoder is chosen once per model — from the model type the user or the
 * model's metadata names, or recognised from the model's outputs — and then
 * decodes every inference into a preallocated M2iInferResult without
 * allocating. Boxes, keypoints and masks come out in source pixels through
 * the geometry the pre-processing used (resize, letterbox, crop).
 */
#pragma once

#include <glib.h>
#include <m2i-core/base/m2i-export.h>
#include <m2i-core/ir/m2i-ir.h>
#include <m2i-core/infer/m2i-infer-results.h>

G_BEGIN_DECLS

typedef enum {
  M2I_MODEL_TYPE_AUTO,            /* recognise from metadata, then from the outputs */
  M2I_MODEL_TYPE_RAW,             /* no decoding: raw tensors only */
  M2I_MODEL_TYPE_CLASSIFIER,      /* [1,C] / [1,C,1,1] scores or logits: top-k */
  M2I_MODEL_TYPE_MULTI_LABEL,     /* [1,C] independent sigmoids: every class above the threshold */
  M2I_MODEL_TYPE_SSD,             /* DetectionOutput [1,1,N,7] */
  M2I_MODEL_TYPE_YOLO_V5,         /* [1,N,5+C] with objectness (YOLOv5, v7) */
  M2I_MODEL_TYPE_YOLO_V8,         /* [1,4+C,N] (+ keypoints) without objectness (v8, v9, v11) */
  M2I_MODEL_TYPE_YOLO_V10,        /* [1,N,6] end-to-end, no NMS */
  M2I_MODEL_TYPE_REGION_YOLO,     /* RegionYolo outputs (OMZ yolo-v3/v4) */
  M2I_MODEL_TYPE_DETECTION_NMS,   /* NMS inside: boxes [N,5] + labels [N] */
  M2I_MODEL_TYPE_SEGMENTATION,    /* [1,C,H,W] class scores or [1,H,W] / [1,1,H,W] argmax map */
  M2I_MODEL_TYPE_MULTI_HEAD,      /* one head per named output (age + gender, attributes) */
  M2I_MODEL_TYPE_OPENPOSE,        /* heatmaps [1,19,H,W] + PAFs [1,38,H,W]: people, COCO-18 keypoints */
} M2iModelType;

/* The model type's short name ("yolo-v8", ...) as the model-type property
 * and docs spell it; m2i_model_type_from_name() the reverse (also accepts
 * Model API model_type values such as "YOLO", "YOLOv5", "ssd",
 * "Classification", "Segmentation", case-insensitive). FALSE for an
 * unknown name. */
M2I_API const char *m2i_model_type_name (M2iModelType type);
M2I_API gboolean m2i_model_type_from_name (const char *name, M2iModelType *type);

typedef struct {
  M2iModelType type;              /* AUTO: recognise */
  float confidence_threshold;     /* detections and multi-label classes below are dropped */
  float iou_threshold;            /* NMS: a box overlapping a better one of its class by more is dropped */
  gboolean class_agnostic_nms;    /* NMS across classes instead of per class */
  guint top_k;                    /* classifiers: classes kept per head */
  guint max_detections;           /* at most this many detections per inference */
  const char *const *labels;      /* class names, or NULL (borrowed: must outlive the decoder) */
  guint n_labels;
} M2iDecoderOptions;

/* Defaults: AUTO, confidence 0.5, IoU 0.5, per-class NMS, top-k 1, 300
 * detections, no labels. */
M2I_API void m2i_decoder_options_init (M2iDecoderOptions *opts);

typedef struct _M2iDecoder M2iDecoder;

/*
 * Makes the decoder for @model's outputs under @opts: the type named there,
 * or for AUTO the first decoder that recognises the outputs (shapes, the
 * producing layer's type such as DetectionOutput or RegionYolo). NULL with
 * @error when the named type does not fit the outputs (the message says
 * which output, what shape was expected and what the model has). AUTO never
 * fails: a model nothing recognises decodes as RAW. @model is referenced.
 */
M2I_API M2iDecoder *m2i_decoder_new (M2iIrModel *model, const M2iDecoderOptions *opts,
    GError **error);
M2I_API void m2i_decoder_free (M2iDecoder *dec);

/* Changes the options of later decodes: thresholds, NMS, top-k and max
 * detections (the type and the labels stay those the decoder was made
 * with; top-k and max detections are capped by the result's capacity). */
M2I_API void m2i_decoder_set_options (M2iDecoder *dec, const M2iDecoderOptions *opts);

/* The type chosen (never AUTO) and a line saying why ("yolo-v8: output
 * 'output0' [1,84,8400] is 4 box + 80 class rows"). Owned by the decoder. */
M2I_API M2iModelType m2i_decoder_get_model_type (const M2iDecoder *dec);
M2I_API const char *m2i_decoder_describe (const M2iDecoder *dec);

/* The class names the decoder gives its results when the model and the
 * options give none ("person" for openpose), NULL-terminated, static;
 * NULL (and *@n_labels 0) for decoders without. @n_labels may be NULL. */
M2I_API const char *const *m2i_decoder_get_default_labels (const M2iDecoder *dec,
    guint *n_labels);

/* A result big enough for every inference of this decoder (free with
 * m2i_infer_result_free()). */
M2I_API M2iInferResult *m2i_decoder_new_result (const M2iDecoder *dec);

/*
 * Decodes one inference: @outputs are the model's outputs in model order
 * (@n_outputs of them; f32, or as the runtime returns them), @geometry how
 * the input was made from the source. @result is cleared and filled.
 * Allocates nothing. FALSE with @error when an output's shape or type is not
 * what the decoder was made for.
 */
M2I_API gboolean m2i_decoder_decode (M2iDecoder *dec, const M2iTensor *outputs, guint n_outputs,
    const M2iInferGeometry *geometry, M2iInferResult *result, GError **error);

G_END_DECLS
