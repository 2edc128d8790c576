/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gstm2iinfer-private.h — what the files of m2iinfer share (private to the
 * plugin): gstm2iinfer.c (the element: model lifetime, frames, properties),
 * gstm2iinferpads.c (caps negotiation, pad queries and events) and
 * gstm2iinferasync.c (nireq, batch-size, no-block: frames handed to an
 * M2iInferQueue, pushed in order by the source pad's task). */
#pragma once

#include "gstm2iinfer.h"
#include "gstm2icaps.h"
#include "gstm2ideferred.h"
#include "gstm2iinfercaps.h"
#include "gstm2iinferresults.h"
#include "gstm2iinferroi.h"
#include "gstm2iprops.h"

#include <gst/video/video.h>
#include <m2i-core/infer/m2i-infer-queue.h>

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

typedef struct _GstM2iInferAsync GstM2iInferAsync;

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
  guint64 max_memory;
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

  /* shared instances and asynchronous inference (object lock) */
  gchar *instance_id;
  guint nireq, batch_size, batch_timeout_ms;
  gboolean no_block;
  guint64 n_skipped;              /* frames passed without inference: requests busy */

  /* from READY->PAUSED to PAUSED->READY; the caps (object lock: caps queries) */
  M2iInferSession *session;       /* synchronous inference, else NULL */
  M2iInferModel *model;           /* the session's or the queue's */
  GstM2iInferAsync *async;        /* asynchronous inference, else NULL */
  GstCaps *model_caps, *model_caps_plain, *output_tensor_caps;
  GstBufferPool *tensor_pool;
  GstM2iResultContext ctx;
  gboolean told_caps;             /* explained a caps query no video fits (object lock) */
  gchar *caps_refused;            /* the caps refusal last posted, until caps are accepted */
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
  gint report;                    /* set "fused" on the next frame (atomic) */
  guint reported;                 /* the session description's serial last set */
  guint64 n_frames;               /* frames received since PAUSED */
  guint64 since_flush;            /* frames since PAUSED or the last flush (the interval's) */
};

/* What one frame does, read at its start. */
typedef struct {
  guint64 index;                  /* since PAUSED */
  GstClockTime pts;
  gboolean infer;                 /* inference-interval says so */
  gboolean post, tensors;
  M2iDecoderOptions decoder;      /* threshold, top-k */
} GstM2iInferFrame;

/* Reads @fr for @inbuf: its index, the interval's verdict, the settings. */
void gst_m2i_infer_frame_settings (GstM2iInfer *self, GstBuffer *inbuf, GstM2iInferFrame *fr);
/* The buffer that leaves for @inbuf (taken): @session's outputs
 * (output=tensors; none on frames not inferred), the source video of the
 * deferred frame @f (emptied), or @inbuf itself. */
GstFlowReturn gst_m2i_infer_output_buffer (GstM2iInfer *self, M2iInferSession *session,
    GstM2iDeferredFrame *f, GstBuffer *inbuf, const GstM2iInferFrame *fr, GstBuffer **out,
    GError **error);
/* output=meta with deferred input: renegotiates when the chain's source
 * frame @src (which leaves the element) is not what the caps say (a chain
 * that materialised part of itself hands over another frame). */
GstFlowReturn gst_m2i_infer_source_caps (GstM2iInfer *self, const M2iImage *src);
/* Sets "fused" from @session's description the first time after caps and
 * whenever it changes; @chain: the fused elements upstream. */
void gst_m2i_infer_report_fused (GstM2iInfer *self, M2iInferSession *session, const char *chain);

/* ---- asynchronous inference (gstm2iinferasync.c) --------------------------- */

/* Whether the properties ask for it (nireq or batch-size above 1,
 * no-block, or a model-instance-id without inference-region=roi-list,
 * whose regions run in the streaming thread); object lock held. */
gboolean gst_m2i_infer_async_wanted (GstM2iInfer *self);
/* Makes the element's queue on @model; returns the queue's template
 * session (owned by the queue), or NULL with @error. */
M2iInferSession *gst_m2i_infer_async_new (GstM2iInfer *self, M2iInferModel *model,
    GError **error);
/* Starts the source pad's task (after READY->PAUSED); FALSE when it cannot. */
gboolean gst_m2i_infer_async_start (GstM2iInfer *self);
/* Before PAUSED->READY (the pads still active): cancels frames that have
 * not run, wakes a chain function that waits, stops the task. */
void gst_m2i_infer_async_unblock (GstM2iInfer *self);
/* After it (no chain function running any more): waits for the frames that
 * were running, drops what was not pushed. */
void gst_m2i_infer_async_stop (GstM2iInfer *self);
/* Frees the queue (unload). */
void gst_m2i_infer_async_free (GstM2iInfer *self);
/* The queue's pre-processing settings. */
gboolean gst_m2i_infer_async_set_preprocess (GstM2iInfer *self, const M2iInferPreprocess *pp,
    GError **error);
/* One buffer: handed to the queue (or passed on, without inference, in
 * order); returns at once unless every request or output slot is busy. */
GstFlowReturn gst_m2i_infer_async_chain (GstM2iInfer *self, GstBuffer *inbuf);
/* Sink events in the asynchronous mode: flushes cancel, serialized events
 * wait until every frame before them has been pushed. FALSE in *@handled
 * (and nothing done) in the synchronous mode. */
gboolean gst_m2i_infer_async_sink_event (GstM2iInfer *self, GstEvent *event,
    gboolean *handled);
/* The source pad's queries: latency adds the batch timeout and the
 * inference time. */
gboolean gst_m2i_infer_src_query (GstPad *pad, GstObject *parent, GstQuery *query);
/* Installs model-instance-id, nireq, batch-size, batch-timeout, no-block
 * and skipped (ids from @first_id in that order). */
void gst_m2i_infer_async_install_properties (GObjectClass *klass, guint first_id);
/* The device property's default; the most classes a classifier reports. */
#define GST_M2I_INFER_DEFAULT_DEVICE "AUTO"
#define GST_M2I_INFER_MAX_TOP_K 100
/* gstm2iinferprops.c: installs m2iinfer's properties (all of them, through
 * the async and roi files' installers too) and its get/set_property. */
void gst_m2i_infer_install_properties (GObjectClass *gobject_class);
/* Sets every property's default on a new element. */
void gst_m2i_infer_props_init (GstM2iInfer *self);

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
