/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gstm2iinferroi.h — m2iinfer on regions of interest (private to the
 * plugin): inference-region=roi-list runs the model on every region meta of
 * a frame through the core's M2iInferRoi (m2i-core/infer/m2i-infer-roi.h)
 * and attaches each region's results to that region; object-class picks
 * the regions by label; reclassify-interval carries a tracked object's
 * classification between re-runs. gstm2iinfer.c calls this for frames,
 * properties and state changes. See docs/m2iinfer.md, "Regions of
 * interest".
 */
#pragma once

#include "gstm2icaps.h"
#include "gstm2iinferresults.h"

#include <gst/video/video.h>
#include <m2i-core/infer/m2i-infer-roi.h>

G_BEGIN_DECLS

/* inference-region (DL Streamer's names and values). */
typedef enum {
  GST_M2I_INFER_REGION_FULL_FRAME,
  GST_M2I_INFER_REGION_ROI_LIST,
} GstM2iInferRegionKind;

GType gst_m2i_infer_region_get_type (void);
#define GST_TYPE_M2I_INFER_REGION (gst_m2i_infer_region_get_type ())

/* The properties (read and written under the element's object lock). */
typedef struct {
  GstM2iInferRegionKind region;
  gchar *object_class;            /* comma-separated labels; NULL or "": all */
  guint reclassify_interval;
} GstM2iInferRoiProps;

void gst_m2i_infer_roi_props_init (GstM2iInferRoiProps *p);
void gst_m2i_infer_roi_props_clear (GstM2iInferRoiProps *p);

/* Installs inference-region, object-class and reclassify-interval with
 * the ids @prop_region, @prop_region + 1, @prop_region + 2. */
void gst_m2i_infer_roi_install_properties (GObjectClass *klass, guint prop_region);
/* Sets/gets one of them (the caller holds the object lock); FALSE when
 * @pspec is none of them. */
gboolean gst_m2i_infer_roi_props_set (GstM2iInferRoiProps *p, GParamSpec *pspec,
    const GValue *value);
gboolean gst_m2i_infer_roi_props_get (const GstM2iInferRoiProps *p, GParamSpec *pspec,
    GValue *value);

/* The state of roi-list between READY->PAUSED and PAUSED->READY. */
typedef struct _GstM2iInferRoi GstM2iInferRoi;

/* Made at READY->PAUSED over @session (borrowed) with @props (copied: the
 * object classes and the interval apply from then on). NULL with @error
 * when the model takes no image of any size. */
GstM2iInferRoi *gst_m2i_infer_roi_new (M2iInferSession *session,
    const GstM2iInferRoiProps *props, GError **error);
void gst_m2i_infer_roi_free (GstM2iInferRoi *r);

/* Forgets the carried classifications (a flush). */
void gst_m2i_infer_roi_reset (GstM2iInferRoi *r);

/* Keeps only the video caps roi-list takes (plain video/x-raw NV12, I420,
 * RGB, BGR, RGBP, BGRP: the frame the regions' pixels refer to) of @caps
 * (taken); returns the result. */
GstCaps *gst_m2i_infer_roi_restrict_caps (GstCaps *caps);

/*
 * One frame (@buf, writable; @info its caps' frame layout): every region
 * meta present on arrival whose label object-class takes is an object. With
 * @infer (inference-interval says so), the objects without a carried
 * classification due (reclassify-interval) are cropped, pre-processed and
 * inferred (all of them through one M2iInferRoi run); each gets its
 * results: classes as a classification structure on its meta, detections as
 * new region metas whose parent_id is the object's id. Tracked objects
 * (an object_id structure) keep their last classification, which is copied
 * onto them on the frames they are not re-run. @frame counts frames since
 * PAUSED. With @post, an "m2iinfer" element message lists every region's
 * results. FALSE with @error when the frame cannot be read or the model
 * fails.
 */
gboolean gst_m2i_infer_roi_frame (GstM2iInferRoi *r, GstElement *element, GstBuffer *buf,
    const GstM2iCapsInfo *info, const GstM2iResultContext *ctx, guint64 frame,
    gboolean infer, gboolean post, GError **error);

/* What ran ("per region: crop -> csc(RGB) -> ..."), its serial as
 * m2i_infer_roi_describe(). */
const char *gst_m2i_infer_roi_describe (const GstM2iInferRoi *r, guint *serial);

G_END_DECLS
