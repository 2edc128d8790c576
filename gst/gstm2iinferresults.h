/* gstm2iinferresults.h — how m2iinfer hands out a session's results
 * (M2iInferResult, m2i-core/infer) (private to the plugin): region-of-interest
 * metas in DL Streamer's conventions and the element message on the bus.
 * See docs/m2iinfer.md, "Results".
 */
#pragma once

#include <gst/gst.h>
#include <infer/m2i-infer.h>

G_BEGIN_DECLS

/* What the metas and the message say besides the result. */
typedef struct {
  const char *model_name;
  const char *const *labels;      /* class names, or NULL ("class-<id>") */
  guint n_labels;
  /* The result's geometry is a frame that leaves the element (else, tensor
   * input to a model that takes no image: no region metas, no pixel boxes). */
  gboolean has_frame;
  /* The decoder gives detections: the message lists objects, even none. */
  gboolean detector;
} GstM2iResultContext;

/* Adds to @buf (writable) the full-frame region meta of the classification
 * (the first head's classes, best first; with more than one its structure
 * also lists them) and one region meta per detection, boxes scaled to the
 * frame. Nothing without a frame. */
void gst_m2i_attach_results (GstBuffer *buf, const GstM2iResultContext *ctx,
    const M2iInferResult *r);

/* The body of the "m2iinfer" element message for one inference (a new
 * structure, the caller owns it): frame index, timestamp, model, and the
 * classes or the detections. */
GstStructure *gst_m2i_result_message (const GstM2iResultContext *ctx, const M2iInferResult *r,
    guint64 frame, GstClockTime pts);

G_END_DECLS
