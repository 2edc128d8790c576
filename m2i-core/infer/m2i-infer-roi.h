/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* m2i-infer-roi.h — inference on regions of a frame (the objects a detector
 * found): each region is cropped from the frame, converted, resized and
 * normalised into the model's input by its own fused M2I plan, all regions
 * of a batch in one submission to the device (m2i_plan_run_batch), then the
 * model runs on each and the session's decoder decodes it. No GStreamer:
 * m2iinfer inference-region=roi-list is metas over this.
 *
 *   M2iInferRoi *roi = m2i_infer_roi_new (session, &error);
 *   M2iInferRegion regions[] = { { 120, 40, 64, 128 }, { 301, 57, 33, 90 } };
 *   m2i_infer_roi_run (roi, &frame, regions, 2, on_result, user_data, &error);
 *   // on_result (i, result, user_data) once per region, in order
 *
 * The crop is a view of the frame (its planes' pointers moved to the
 * region), which the plan takes as its input: the M2I block has no crop
 * operation, and needs none. In 4:2:0 frames (NV12, I420) a chroma sample
 * covers 2 x 2 pixels, so a view must start on an even column and row and
 * have an even size: the crop is the region widened outwards to even
 * coordinates (at most one pixel on each side). RGB and BGR frames
 * (interleaved or planar) are cropped exactly. See docs/m2iinfer.md,
 * "Regions of interest".
 */
#pragma once

#include <glib.h>
#include <m2i-core/base/m2i-export.h>
#include <m2i-core/infer/m2i-infer.h>

G_BEGIN_DECLS

/* A rectangle in the frame's pixels: x, y its top-left corner, any values
 * (the part outside the frame is cut off). */
typedef struct {
  gint x, y, width, height;
} M2iInferRegion;

/*
 * The rectangle m2i_infer_roi_run() crops for @region from a frame of
 * @format, @frame_width x @frame_height: the region clamped to the frame,
 * then for NV12/I420 widened to even coordinates (x and y rounded down, the
 * right and bottom edges rounded up; never past the frame, whose size is
 * even). FALSE (and @crop zeroed) when nothing of the region is inside the
 * frame or its width or height is not positive.
 */
M2I_API gboolean m2i_infer_roi_crop_rect (M2iFormat format, gint frame_width,
    gint frame_height, const M2iInferRegion *region, M2iInferRegion *crop);

typedef struct _M2iInferRoi M2iInferRoi;

/* Called once per region, in the order given, after its inference: @result
 * is the session's result (valid during the call only), its geometry maps
 * the model's input back to the frame (crop_x/crop_y the crop's origin,
 * source_width/height the frame's size), so detections are in frame
 * pixels. @result is NULL for a region with nothing inside the frame
 * (nothing ran). */
typedef void (*M2iInferRoiFunc) (guint index, const M2iInferResult *result, gpointer user_data);

/*
 * Region inference through @session (borrowed: it must outlive the
 * returned object; its model must take images, M2I_INFER_INPUT_IMAGE).
 * Allocates the staging of a batch of model inputs (at most 16 regions and
 * 32 MiB) and an empty table of plans. NULL with @error for a model that
 * takes no image or only frames of its own size (NV12/I420 heads). Free with
 * m2i_infer_roi_free().
 */
M2I_API M2iInferRoi *m2i_infer_roi_new (M2iInferSession *session, GError **error);
M2I_API void m2i_infer_roi_free (M2iInferRoi *roi);

/*
 * Runs the session's model on each of @regions (@n_regions, any number, 0
 * included) of @source (NV12, I420, interleaved or planar RGB/BGR u8, any
 * size and strides; real pixels), with the session's pre-processing
 * settings (channel order, resize mode, mean/std, profile): the regions are
 * taken in batches; each batch's crops are pre-processed by one
 * m2i_plan_run_batch() into the staging, then for each region the staging
 * is copied (widened to fp32 when the model takes fp32) into the model's
 * input, the model runs, the decoder decodes, and @func is called.
 *
 * Plans are kept in a table of 64, least recently used evicted, keyed by
 * the crop's size (and the frame's format and strides, the ops): a region
 * size seen before runs without planning or allocating; a new size makes
 * its plan (a few filter tables), which is what varying object sizes cost.
 * FALSE with @error when the frame cannot be read (format, sizes), an op or
 * the model fails; regions before the failing one were reported.
 */
M2I_API gboolean m2i_infer_roi_run (M2iInferRoi *roi, const M2iImage *source,
    const M2iInferRegion *regions, guint n_regions, M2iInferRoiFunc func, gpointer user_data,
    GError **error);

typedef struct {
  guint64 regions;                /* regions inferred */
  guint64 batches;                /* m2i_plan_run_batch() submissions */
  guint64 plans_made;             /* plans made (a new crop size) */
  guint64 plans_reused;           /* regions whose plan the table held */
} M2iInferRoiStats;

/* Counts since m2i_infer_roi_new(). */
M2I_API void m2i_infer_roi_get_stats (const M2iInferRoi *roi, M2iInferRoiStats *stats);

/* What the last runs did, e.g. "per region: crop -> csc(RGB) ->
 * convertU8F16 -> resize(28x28 linear_onnx half_pixel) -> permute -> norm,
 * up to 16 regions per device submission -> model input fp16 widened to
 * fp32 (RGB); model on CPU: ..."; *@serial (if given) changes with the
 * text. Owned by @roi; "" before the first region. */
M2I_API const char *m2i_infer_roi_describe (const M2iInferRoi *roi, guint *serial);

G_END_DECLS
