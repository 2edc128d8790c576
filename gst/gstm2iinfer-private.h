/* gstm2iinfer-private.h — what the two files of m2iinfer share (private to
 * the plugin): gstm2iinfer.c (the element: model lifetime, frames,
 * properties) and gstm2iinferpads.c (caps negotiation, pad queries and
 * events). */
#pragma once

#include "gstm2iinfer.h"
#include "gstm2icaps.h"
#include "gstm2ideferred.h"
#include "gstm2iinfercaps.h"
#include "gstm2iinferresults.h"
#include "gstm2iinferroi.h"
#include "gstm2iprops.h"

#include <gst/video/video.h>

G_BEGIN_DECLS

#define MAX_TENSORS GST_M2I_INFER_MAX_TENSORS

/* How the negotiated input reaches the model. */
typedef enum {
  INPUT_NONE,
  INPUT_DEFERRED,      /* deferred frames of an m2i chain */
  INPUT_VIDEO,         /* video, pre-processed by the session's plan */
  INPUT_PLANES,        /* NV12/I420 planes into a PrePostProcessor head */
  INPUT_TENSORS,       /* other/tensors copied into the inputs */
} InputMode;

struct _GstM2iInfer {
  GstElement parent;
  GstPad *sinkpad, *srcpad;

  /* properties (object lock) */
  gchar *model_path, *device, *labels, *split_dir, *extra_inputs;
  gdouble threshold, iou_threshold;
  guint top_k, interval, max_detections;
  gboolean class_agnostic;
  M2iModelType model_type;
  gint resize_type;               /* M2iResizeType, or GST_M2I_INFER_RESIZE_AUTO */
  gint pad_value;                 /* -1: the model's, else 0 */
  GstM2iInferOutput output;
  gboolean post_messages;
  M2iResizeMode resize_mode;
  GstM2iSharedProps props;        /* profile, n-threads, fusion, fused, mean, std, ... */
  guint given;                    /* M2iInferSettingFlags the properties set */
  /* pre-processing or decoding set since they were resolved against the
   * model's metadata and handed to the session */
  gboolean pp_changed;
  /* resolved (object lock): the decoding of every frame, and where each
   * setting came from (m2i_infer_settings_resolve; NULL before the model) */
  M2iDecoderOptions dec;
  gchar *settings;
  GstM2iInferRoiProps roi_props;  /* inference-region, object-class, reclassify-interval */

  /* from READY->PAUSED to PAUSED->READY; the caps (object lock: caps queries) */
  M2iInferSession *session;
  M2iInferModel *model;           /* the session's */
  GstCaps *model_caps, *model_caps_plain, *output_tensor_caps;
  GstBufferPool *tensor_pool;
  GstM2iResultContext ctx;
  gboolean told_caps;             /* explained a caps query no video fits (object lock) */
  GstM2iInferRoi *roi;            /* inference-region=roi-list */

  /* negotiated (streaming thread) */
  InputMode mode;
  GstM2iCapsInfo in_info;
  gint fps_n, fps_d;
  guint n_in_tensors;
  gsize in_tensor_bytes[MAX_TENSORS];
  M2iElementType in_tensor_type[MAX_TENSORS];
  GstVideoInfo src_vinfo;         /* output=meta with deferred input: the source video */
  gboolean src_is_video;
  GstM2iDeferredFrame work;       /* per-frame scratch; holds no reference */
  gboolean report;                /* set "fused" on the next frame */
  guint reported;                 /* the session description's serial last set */
  guint64 n_frames;               /* frames received since PAUSED */
  guint64 since_flush;            /* frames since PAUSED or the last flush (the interval's) */
};

/* The caps of the video a fused chain leaves as, or the element's outputs:
 * pushed downstream, remembered for source_buffer's check (the caller's
 * reference is taken). */
gboolean gst_m2i_infer_push_src_caps (GstM2iInfer *self, GstCaps *caps);
/* When a pre-processing or decoding property changed: resolves them
 * against the model's metadata (properties win), hands the pre-processing
 * to the session and keeps the decoding for the next frames. FALSE with
 * @error when mean/std/input-scale are refused (and again on the next
 * call). */
gboolean gst_m2i_infer_update_preprocess (GstM2iInfer *self, GError **error);
/* inference-region=roi-list (settled at READY->PAUSED). */
gboolean gst_m2i_infer_roi_list (GstM2iInfer *self);
/* Forgets the negotiated input (no caps yet). */
void gst_m2i_infer_clear_negotiated (GstM2iInfer *self);

gboolean gst_m2i_infer_sink_query (GstPad *pad, GstObject *parent, GstQuery *query);
gboolean gst_m2i_infer_sink_event (GstPad *pad, GstObject *parent, GstEvent *event);

G_END_DECLS
