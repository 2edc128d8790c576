/* gstm2iinferresults.h — how m2iinfer hands out results (private to the
 * plugin): region-of-interest metas in DL Streamer's conventions and the
 * element message on the bus. See docs/m2iinfer.md, "Results".
 */
#pragma once

#include <gst/gst.h>
#include "gstm2iinfermodel.h"

G_BEGIN_DECLS

/* Where the model's input image lies in the frame the results refer to:
 * model-normalised coordinates u map to frame-normalised (u - x0) / sx
 * (x0 = 0, sx = 1 unless the pre-processing letterboxed), and the frame is
 * @width x @height pixels (0 x 0: no frame, e.g. tensor input of a non-image
 * model; no region metas then). */
typedef struct {
  gint width, height;
  double x0, y0, sx, sy;
} GstM2iFrameMap;

/* Everything about one inference's results that the metas and the message
 * say. Labels may be NULL (labels "class-<id>"). */
typedef struct {
  const char *model_name;
  const char *output_name;
  const char *classification_name;   /* gst_m2i_classification_name (output_name) */
  gchar **labels;
  guint n_labels;
} GstM2iResultContext;

/* DL Streamer's structure name for a classification of output
 * @output_name: "classification_layer_name:<output>", characters a
 * structure name cannot hold replaced by '_'. Free with g_free. */
gchar *gst_m2i_classification_name (const char *output_name);

/* The label of class @id: the labels file's line, else "class-<id>" written
 * into @buf (@buf_size bytes). */
const char *gst_m2i_result_label (const GstM2iResultContext *ctx, gint id, char *buf,
    gsize buf_size);

/* Adds the full-frame region meta of a classification (@classes[0] is the
 * top-1; with @n > 1 the structure also lists the top-n) to @buf (writable).
 * Nothing when the frame map has no frame or @n is 0. */
void gst_m2i_attach_classification (GstBuffer *buf, const GstM2iResultContext *ctx,
    const GstM2iFrameMap *map, const GstM2iClass *classes, guint n);

/* Adds one region meta per detection, scaled to the frame, to @buf
 * (writable). Boxes are clamped to the frame; a box that leaves no pixel is
 * still reported (width or height 0). */
void gst_m2i_attach_detections (GstBuffer *buf, const GstM2iResultContext *ctx,
    const GstM2iFrameMap *map, const GstM2iDetection *dets, guint n);

/* The body of the "m2iinfer" element message for one inference (a new
 * structure, the caller owns it): frame index, timestamp, model, and the
 * classes or the detections (@classes/@dets may be NULL with @n 0). */
GstStructure *gst_m2i_result_message (const GstM2iResultContext *ctx,
    const GstM2iFrameMap *map, guint64 frame, GstClockTime pts, const GstM2iClass *classes,
    const GstM2iDetection *dets, guint n);

G_END_DECLS
