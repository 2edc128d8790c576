/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gstm2iregions.h — reading and writing the region metas the analytics
 * elements share (private to the plugin).
 *
 * The layout is DL Streamer's (gvadetect, gvaclassify, gvatrack), which
 * m2iinfer writes (docs/m2iinfer.md, "Results"): each object is a
 * GstVideoRegionOfInterestMeta (roi_type = label, x/y/w/h in frame pixels)
 * whose params hold
 *   "detection": x_min, y_min, x_max, y_max (double, normalised to the
 *       frame), confidence (double), label_id (int), label (string);
 *   "classification_layer_name:<output>" (any structure with a string
 *       "label" and a string "model_name"): label, label_id, confidence,
 *       layer_name, model_name;
 *   "object_id": id (int, > 0), written by m2itrack (as gvatrack does);
 *       m2itrack adds predicted (boolean);
 *   "semantic_mask" (format "semantic_mask"): a class map, see below;
 *   "keypoints" (type "keypoints"): a pose model's points, see below.
 */
#pragma once

#include <gst/gst.h>
#include <gst/video/video.h>

G_BEGIN_DECLS

/* The frame size of the video @caps into *@width, *@height (the frame the
 * metas' pixels refer to); FALSE with an element error on @el when @caps
 * are no video caps with a size. */
gboolean gst_m2i_caps_frame_size (GstElement *el, GstCaps *caps, gint *width, gint *height);

/* The "detection" structure of @roi, or NULL. Owned by the meta. */
GstStructure *gst_m2i_region_detection (GstVideoRegionOfInterestMeta *roi);

/* The box of @roi in pixels of a @width x @height frame, as
 * [x_min, y_min, x_max, y_max]: the detection's normalised corners times
 * the frame size when it has them (sub-pixel), else the meta's x, y, w, h. */
void gst_m2i_region_box (GstVideoRegionOfInterestMeta *roi, gint width, gint height,
    double box[4]);

/* The object id m2itrack (or gvatrack) gave @roi: TRUE and *@id when its
 * "object_id" structure has an int "id" > 0. */
gboolean gst_m2i_region_get_object_id (GstVideoRegionOfInterestMeta *roi, gint *id);

/* Sets @roi's "object_id" structure to id = @id, predicted = @predicted
 * (adding it when missing). */
void gst_m2i_region_set_object_id (GstVideoRegionOfInterestMeta *roi, gint id,
    gboolean predicted);

/* TRUE when @s is a classification result: a string "label" and a string
 * "model_name" (the test DL Streamer's gvametaconvert applies). */
gboolean gst_m2i_structure_is_classification (const GstStructure *s);

/*
 * Semantic segmentation masks. A mask rides as a param of a region meta
 * (a full-frame region for a segmenter that sees the whole frame) and
 * covers that region's rectangle:
 *
 *   semantic_mask, format=(string)semantic_mask, width=(uint)W, height=(uint)H,
 *     n_classes=(uint)C, precision=(string)U16, data_buffer=(GVariant "ay")
 *
 * data_buffer holds W x H class ids, guint16 in host byte order, row-major
 * — M2iInferMask's class_map (m2i-core/infer/m2i-infer-results.h). Mask
 * sample (u, v) covers the region's pixels whose centre falls in it: pixel
 * (x, y) of the region (0-based within it, region w x h) shows class
 * map[floor((y + 0.5) * H / h)][floor((x + 0.5) * W / w)]. (m2iinfer, when
 * it attaches a segmenter's M2iInferMask, writes this structure.)
 */
typedef struct {
  guint width, height, n_classes;
  const guint16 *class_map;     /* width * height, owned by the structure */
} GstM2iMaskView;

/* Reads a mask structure: TRUE and @view filled when @s is one and is
 * consistent (sizes > 0, data of exactly width * height * 2 bytes, aligned);
 * FALSE otherwise. */
gboolean gst_m2i_mask_structure_parse (const GstStructure *s, GstM2iMaskView *view);

/*
 * Keypoints (DL Streamer's layout, as m2iinfer writes a pose model's):
 *
 *   keypoints, type=(string)keypoints, format=(string)body-pose/coco-17 |
 *     body-pose/coco-18 | keypoints, dims=<N, 2>, data_buffer=(GVariant "ay"),
 *     confidence=<N floats>, point_names=<N strings>, point_connections=<uint pairs>
 *
 * data_buffer holds N (x, y) float pairs relative to the region's box (0..1
 * across it; NaN: the keypoint was not found); confidence is -1 where the
 * model gives none or the keypoint was not found; point_names and
 * point_connections (the skeleton: pairs of keypoint indices) are there for
 * the named formats.
 */
typedef struct {
  guint n;
  const guint8 *xy;             /* n (x, y) float pairs (unaligned), owned by the structure */
  const GValue *confidence;     /* n floats, or NULL */
  const GValue *names;          /* n strings, or NULL */
  const GValue *connections;    /* uint pairs, or NULL */
  const gchar *format;
} GstM2iKeypointsView;

/* Reads a keypoints structure: TRUE and @view filled when @s is one and is
 * consistent (dims N x 2 with N <= 4096, data of exactly N * 8 bytes; the
 * arrays, when there, of the right lengths and types); FALSE otherwise. */
gboolean gst_m2i_keypoints_structure_parse (const GstStructure *s, GstM2iKeypointsView *view);

/* Keypoint @k of @view in the pixels of the region box @box ([x_min,
 * y_min, x_max, y_max], gst_m2i_region_box()) into *@x, *@y and its
 * confidence (-1 when none) into *@confidence; FALSE when it was not found
 * (its position is not finite). */
gboolean gst_m2i_keypoint_get (const GstM2iKeypointsView *view, guint k, const double box[4],
    double *x, double *y, float *confidence);

/* The skeleton's pairs of @view (0 without a skeleton), and pair @i into
 * *@a, *@b: FALSE when @i is out of range or the pair names a keypoint the
 * view does not have. */
guint gst_m2i_keypoints_n_pairs (const GstM2iKeypointsView *view);
gboolean gst_m2i_keypoints_pair (const GstM2iKeypointsView *view, guint i, guint *a, guint *b);

G_END_DECLS
