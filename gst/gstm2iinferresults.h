/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gstm2iinferresults.h — how m2iinfer hands out a session's results
 * (M2iInferResult, m2i-core/infer) (private to the plugin): region-of-interest
 * metas in DL Streamer's conventions and the element message on the bus.
 * See docs/m2iinfer.md, "Results".
 */
#pragma once

#include <gst/gst.h>
#include <gst/video/gstvideometa.h>
#include <m2i-core/infer/m2i-infer.h>

G_BEGIN_DECLS

/* What the metas and the message say besides the result. */
typedef struct {
  const char *model_name;
  const char *const *labels;      /* class names, or NULL ("class-<id>") */
  guint n_labels;
  const gchar **output_names;     /* the model's outputs, for the tensor meta (owned) */
  /* The decoder gives detections: the message lists objects, even none. */
  gboolean detector;
  /* The result's geometry is a frame that leaves the element (else, tensor
   * input to a model that takes no image: no region metas, no pixel boxes). */
  gboolean has_frame;
} GstM2iResultContext;

/* Fills @ctx for @session's model (has_frame TRUE); clear with
 * gst_m2i_result_context_clear(). */
void gst_m2i_result_context_init (GstM2iResultContext *ctx, M2iInferSession *session);
void gst_m2i_result_context_clear (GstM2iResultContext *ctx);

/*
 * Hands out @session's last results: on @buf (writable; NULL: none) a
 * GstM2iTensorMeta with every output, the full-frame region meta of the
 * classification (the first head's classes, best first; with more than one
 * its structure also lists them) and one region meta per detection, boxes
 * scaled to the frame (no region metas without a frame); and, when @post,
 * the "m2iinfer" element message from @element: frame index @frame,
 * timestamp @pts, model, and the classes or the detections.
 */
void gst_m2i_publish_results (GstElement *element, GstBuffer *buf,
    const GstM2iResultContext *ctx, M2iInferSession *session, guint64 frame,
    GstClockTime pts, gboolean post);

/* Adds to @roi one classification structure per head of @r with a result
 * (a classifier's or multi-label head's classes, a regression head's
 * values): a full-frame classifier's region or a region-of-interest's
 * result. FALSE (nothing added) when no head has one. */
gboolean gst_m2i_results_classify_region (GstVideoRegionOfInterestMeta *roi,
    const GstM2iResultContext *ctx, const M2iInferResult *r);

/* Adds one region meta per detection of @r to @buf (writable), in frame
 * pixels, with ids @first_id, @first_id + 1, ... and parent @parent_id
 * (the region a detector ran on; 0 for a full frame, GStreamer's default),
 * each with its "detection" structure and a pose model's "keypoints". */
void gst_m2i_results_add_detections (GstBuffer *buf, const GstM2iResultContext *ctx,
    const M2iInferResult *r, gint first_id, gint parent_id);

G_END_DECLS
