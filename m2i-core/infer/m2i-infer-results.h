/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* m2i-infer-results.h — what a model's outputs mean, as plain C structs.
 *
 * Decoders (m2i-decode.h) write them; the inference session (m2i-infer.h)
 * hands them out; m2iinfer turns them into GStreamer metas and messages, and
 * an application embedding libm2icore reads them directly. No GStreamer.
 *
 * Ownership: a result and every array it points to belong to whoever made
 * it (the session keeps one per request, sized once when it is prepared, and
 * reuses it for every inference: decoding allocates nothing in steady state).
 * Arrays have a capacity; a decoder that finds more than fits keeps the best
 * ones and sets the `truncated` flag.
 */
#pragma once

#include <glib.h>
#include <m2i-core/base/m2i-export.h>

G_BEGIN_DECLS

/*
 * Where the model's input image came from: maps model-input pixels back to
 * source pixels, through any resize, letterbox or crop:
 *
 *   source_x = crop_x + (model_x - pad_x) / scale_x
 *   source_y = crop_y + (model_y - pad_y) / scale_y
 *
 * A plain resize of a W x H frame to a w x h model input has scale_x = w/W,
 * scale_y = h/H and no pad; a letterbox has scale_x == scale_y and the pad
 * the image was centred with; a region-of-interest crop sets crop_x/crop_y
 * to the region's origin in the frame. Results are clamped to the source
 * rectangle [0, source_width] x [0, source_height] (the whole frame, not
 * only the crop).
 */
typedef struct {
  gint model_width, model_height;     /* the model's input image in pixels */
  gint source_width, source_height;   /* the frame the results refer to */
  double scale_x, scale_y;            /* model pixels per source pixel */
  double pad_x, pad_y;                /* model pixel where the image starts */
  double crop_x, crop_y;              /* the crop's origin in the frame */
} M2iInferGeometry;

/* Fills @g for a @src_w x @src_h frame resized to @model_w x @model_h,
 * keeping the aspect ratio and centring the image when @letterbox (the
 * Ultralytics / Model API "fit_to_window_letterbox" rule: scale =
 * min(model_w/src_w, model_h/src_h), pad = (model - round(src*scale)) / 2),
 * stretching it otherwise. No crop. */
M2I_API void m2i_infer_geometry_init (M2iInferGeometry *g, gint src_w, gint src_h,
    gint model_w, gint model_h, gboolean letterbox);

typedef struct {
  gint class_id;
  float confidence;                   /* probability (or score) in [0, 1] */
} M2iInferClass;

typedef struct {
  float x, y;                         /* source pixels; NaN when the keypoint was not found */
  float confidence;                   /* visibility or score; < 0 when the model gives none
                                       * or the keypoint was not found */
} M2iInferKeypoint;

typedef struct {
  gint class_id;
  float confidence;
  /* corners in source pixels, clamped to the source rectangle */
  float x_min, y_min, x_max, y_max;
  /* this detection's keypoints (pose models): result->keypoints[first
   * .. first + n - 1]; n = 0 for plain detectors */
  guint first_keypoint, n_keypoints;
} M2iInferDetection;

/* A per-pixel class map (semantic segmentation), in the model's output
 * resolution, covering the model input; map it to the frame with the
 * result's geometry (output pixel (u, v) is model pixel ((u + 0.5) *
 * model_width / width, ...)). The arrays are the result's (sized when it
 * was made); width and height say how much of them this inference filled. */
typedef struct {
  guint width, height;
  guint n_classes;                    /* classes the model scores; labels count (or 0) for argmax maps */
  guint16 *class_map;                 /* width * height, row-major */
  float *confidence;                  /* width * height: the class's probability, valid when has_confidence */
  gboolean has_confidence;            /* FALSE for models that output an argmax map only */
  gsize capacity;                     /* pixels each array holds (set when the result is made) */
} M2iInferMask;

typedef enum {
  M2I_INFER_HEAD_CLASSES,             /* a classifier: top classes */
  M2I_INFER_HEAD_MULTI_LABEL,         /* independent sigmoids: every class above the threshold */
  M2I_INFER_HEAD_REGRESSION,          /* values as they are (age, landmarks, embedding) */
} M2iInferHeadKind;

/* One classification or regression result, per named output of a
 * multi-head model (one head for a plain classifier). */
typedef struct {
  const char *output_name;            /* the model output it was read from (owned by the model) */
  M2iInferHeadKind kind;
  M2iInferClass *classes;             /* best first; capacity classes_capacity */
  guint n_classes, classes_capacity;
  float *values;                      /* REGRESSION: the output's values; capacity values_capacity */
  guint n_values, values_capacity;
  const char *const *labels;          /* this head's labels (owned by the model), or NULL */
  guint n_labels;
} M2iInferHead;

typedef struct {
  M2iInferGeometry geometry;

  M2iInferDetection *detections;      /* best first */
  guint n_detections, detections_capacity;
  M2iInferKeypoint *keypoints;
  guint n_keypoints, keypoints_capacity;

  M2iInferHead *heads;
  guint n_heads, heads_capacity;

  gboolean has_mask;
  M2iInferMask mask;                  /* arrays sized by whoever made the result */

  gboolean truncated;                 /* a capacity was too small: the best kept */
} M2iInferResult;

/* A result with room for @max_detections detections, @max_keypoints
 * keypoints, @n_heads heads of @max_classes classes and @max_values values
 * each, and a @mask_w x @mask_h mask (0 x 0: none). Free with
 * m2i_infer_result_free(). Never NULL. */
M2I_API M2iInferResult *m2i_infer_result_new (guint max_detections, guint max_keypoints,
    guint n_heads, guint max_classes, guint max_values, guint mask_w, guint mask_h);
M2I_API void m2i_infer_result_free (M2iInferResult *r);

/* Empties @r (counts to 0, flags cleared, capacities and geometry kept). */
M2I_API void m2i_infer_result_clear (M2iInferResult *r);

G_END_DECLS
