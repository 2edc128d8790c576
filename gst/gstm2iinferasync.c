/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gstm2iinferasync.c — m2iinfer's asynchronous inference (nireq,
 * batch-size, no-block; see gstm2iinfer-private.h and docs/many-streams.md)
 * over the core's M2iInferQueue (m2i-core/infer/m2i-infer-queue.h).
 *
 * The streaming thread reads a frame's settings, maps its source, puts an
 * entry at the tail of the element's output list and hands the frame to
 * the queue, then returns (it waits only when every request is in flight,
 * or every output slot holds a frame not yet pushed). The queue's done
 * callback (a device engine thread, frames of this element in order)
 * attaches the results to the frame's output buffer — the session is
 * reused once it returns — and marks the entry ready. The source pad's task
 * pushes entries from the head as they become ready, so buffers leave in
 * the order they came, inferred or not (inference-interval, no-block).
 *
 * Serialized events wait until every frame before them has been pushed and
 * then take the synchronous path (caps, segment, EOS: nothing overtakes a
 * buffer). FLUSH_START cancels the frames that have not run and pauses the
 * task; FLUSH_STOP waits for the frames that were running, drops what was
 * not pushed and starts the task again. PAUSED->READY does both.
 */
#include "gstm2iinfer-private.h"

#include <m2i-core/base/m2i-error.h>
#include <m2i-core/infer/m2i-infer-queue.h>

GST_DEBUG_CATEGORY_EXTERN (gst_m2i_infer_debug);
#define GST_CAT_DEFAULT gst_m2i_infer_debug

#define MAX_NIREQ 64
#define MAX_BATCH 64
#define MAX_TIMEOUT_MS 10000
#define EXTRA_ENTRIES 4          /* output slots beyond the frames in flight */

typedef struct _Entry Entry;
struct _Entry {
  Entry *next;                    /* free list or output list */
  GstBuffer *inbuf;               /* in flight: the input (it holds the source) */
  GstM2iDeferredFrame work;       /* the frame, borrowed from inbuf */
  GstMapInfo map;                 /* the source, mapped while in flight */
  M2iImage source;                /* the source frame's geometry (caps check) */
  GstM2iInferFrame fr;
  gint64 submitted;               /* monotonic us */
  gboolean ready;                 /* out is final */
  GstBuffer *out;                 /* to push when ready (NULL: nothing) */
};

struct _GstM2iInferAsync {
  M2iInferQueue *queue;
  Entry *entries;
  guint n_entries;
  GMutex lock;
  GCond cond;                     /* an entry became ready or free, flushing, flow */
  Entry *free_list;
  Entry *head, *tail;             /* to push, in order */
  gboolean pushing;               /* the task pushes the entry it took */
  gboolean flushing;
  GstFlowReturn flow;             /* the last push's when not OK, or ERROR */
  gint64 infer_us;                /* submit to result, smoothed; 0 before the first */
  gboolean block;
  guint n_requests;
  gint64 batch_timeout_us;        /* batched models, else 0 */
};

enum {
  PROP_MODEL_INSTANCE_ID, PROP_NIREQ, PROP_BATCH_SIZE, PROP_BATCH_TIMEOUT, PROP_NO_BLOCK,
  PROP_SKIPPED,
};

void
gst_m2i_infer_async_install_properties (GObjectClass *klass, guint first_id)
{
  GParamFlags ready = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY;
  g_object_class_install_property (klass, first_id + PROP_MODEL_INSTANCE_ID,
      g_param_spec_string ("model-instance-id", "Model instance id", "Elements of any "
          "pipelines of the process naming the same id share one loaded model (weights, "
          "compiled kernels, split plan) and its requests; each keeps its own frames, "
          "pre-processing and results; the instance's requests (activations) serve whichever "
          "element's frame runs, so memory grows with the frames in flight, not with the "
          "elements (the inference is asynchronous, as with nireq). model, device, labels, "
          "n-threads, split-dir and batch-size must agree, else the state change fails "
          "saying which differs. Unset: a model of the element's own", NULL, ready));
  g_object_class_install_property (klass, first_id + PROP_NIREQ,
      g_param_spec_uint ("nireq", "Inference requests", "Frames of this element in inference "
          "at once: above 1 the streaming thread hands each frame over and returns, and the "
          "results are attached and the buffers pushed in order from the source pad's task. "
          "0: batch-size (so that one stream fills its batches). With nireq and batch-size "
          "1, no-block false and no model-instance-id, inference runs in the streaming "
          "thread", 0, MAX_NIREQ, 0,
          ready));
  g_object_class_install_property (klass, first_id + PROP_BATCH_SIZE,
      g_param_spec_uint ("batch-size", "Batch size", "Frames per inference: the model's "
          "input batch, which must be this (a model exported with batch N; a static batch is "
          "not reshaped). Frames of every element sharing the model-instance-id are gathered "
          "until batch-size are there or the oldest waited batch-timeout, pre-processed "
          "each into its slice of the input, run as one inference, and each given its own "
          "results", 1, MAX_BATCH, 1, ready));
  g_object_class_install_property (klass, first_id + PROP_BATCH_TIMEOUT,
      g_param_spec_uint ("batch-timeout", "Batch timeout", "With batch-size above 1: the "
          "longest a frame waits for its batch to fill before it runs with fewer frames "
          "(milliseconds); added to the latency the element reports", 0, MAX_TIMEOUT_MS, 30,
          ready));
  g_object_class_install_property (klass, first_id + PROP_NO_BLOCK,
      g_param_spec_boolean ("no-block", "No block", "For live sources: when every request "
          "is busy, pass the frame on without inference (no results on it) instead of "
          "waiting; counted in \"skipped\" and a debug line. Makes the inference "
          "asynchronous", FALSE, ready));
  g_object_class_install_property (klass, first_id + PROP_SKIPPED,
      g_param_spec_uint64 ("skipped", "Skipped", "Frames passed on without inference "
          "because every request was busy (no-block), since the element was created", 0,
          G_MAXUINT64, 0, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
}

gboolean
gst_m2i_infer_async_wanted (GstM2iInfer *self)
{
  /* a shared instance's requests are the instance's, taken per frame (a
   * synchronous session would hold one per element) */
  return self->nireq > 1 || self->batch_size > 1 || self->no_block
      || (self->instance_id && *self->instance_id
          && self->roi_props.region != GST_M2I_INFER_REGION_ROI_LIST);
}

/* ---- the output list ---------------------------------------------------------- */

/* A free entry, waiting for one; NULL (and *@ret) when flushing or after a
 * flow error. */
static Entry *
take_entry (GstM2iInferAsync *a, GstFlowReturn *ret)
{
  g_mutex_lock (&a->lock);
  while (!a->free_list && !a->flushing && a->flow == GST_FLOW_OK)
    g_cond_wait (&a->cond, &a->lock);
  Entry *e = NULL;
  *ret = a->flushing ? GST_FLOW_FLUSHING : a->flow;
  if (*ret == GST_FLOW_OK) {
    e = a->free_list;
    a->free_list = e->next;
    memset (e, 0, sizeof *e);
  }
  g_mutex_unlock (&a->lock);
  return e;
}

/* Appends @e to the output list (ready or not). */
static void
append (GstM2iInferAsync *a, Entry *e)
{
  g_mutex_lock (&a->lock);
  if (a->tail)
    a->tail->next = e;
  else
    a->head = e;
  a->tail = e;
  g_cond_broadcast (&a->cond);
  g_mutex_unlock (&a->lock);
}

static void
set_ready (GstM2iInferAsync *a, Entry *e, GstBuffer *out, GstFlowReturn flow)
{
  g_mutex_lock (&a->lock);
  e->out = out;
  e->ready = TRUE;
  if (flow != GST_FLOW_OK && a->flow == GST_FLOW_OK)
    a->flow = flow;
  g_cond_broadcast (&a->cond);
  g_mutex_unlock (&a->lock);
}

static void
release (GstM2iInferAsync *a, Entry *e)
{
  g_mutex_lock (&a->lock);
  gst_clear_buffer (&e->out);
  e->next = a->free_list;
  a->free_list = e;
  g_cond_broadcast (&a->cond);
  g_mutex_unlock (&a->lock);
}

/* Drops every entry of the output list (all ready: nothing in flight, the
 * streaming thread out of the chain function). */
static void
clear_output (GstM2iInferAsync *a)
{
  g_mutex_lock (&a->lock);
  while (a->head) {
    Entry *e = a->head;
    a->head = e->next;
    g_assert (e->ready);
    gst_clear_buffer (&e->out);
    e->next = a->free_list;
    a->free_list = e;
  }
  a->tail = NULL;
  g_cond_broadcast (&a->cond);
  g_mutex_unlock (&a->lock);
}

/* ---- frames ------------------------------------------------------------------- */

/* The queue's hand-back (frames of this element in order): results onto
 * the output buffer, which is then ready to push. */
static void
frame_done (M2iInferSession *s, const GError *error, gpointer frame_data, gpointer user_data)
{
  GstM2iInfer *self = user_data;
  GstM2iInferAsync *a = self->async;
  Entry *e = frame_data;
  GstBuffer *out = NULL;
  GError *err = NULL;
  GstFlowReturn flow = GST_FLOW_OK;
  gst_buffer_unmap (e->work.source, &e->map);
  if (!error) {
    gst_m2i_infer_report_fused (self, s, e->work.chain);
    flow = gst_m2i_infer_output_buffer (self, s, &e->work, g_steal_pointer (&e->inbuf), &e->fr,
        &out, &err);
    if (flow == GST_FLOW_OK && out)
      gst_m2i_publish_results (GST_ELEMENT (self), e->fr.tensors ? NULL : out, &self->ctx, s,
          e->fr.index, e->fr.pts, e->fr.post);
    gint64 took = g_get_monotonic_time () - e->submitted;
    g_mutex_lock (&a->lock);
    gboolean first = a->infer_us == 0;
    a->infer_us = first ? took : (3 * a->infer_us + took) / 4;
    g_mutex_unlock (&a->lock);
    if (first)                    /* the latency to report is known now */
      gst_element_post_message (GST_ELEMENT (self),
          gst_message_new_latency (GST_OBJECT (self)));
  } else {
    gst_clear_buffer (&e->inbuf);
    if (!g_error_matches (error, M2I_ERROR, M2I_ERROR_CANCELLED))
      err = g_error_copy (error);
  }
  if (err) {
    GST_ELEMENT_ERROR (self, STREAM, FAILED, ("%s: %s", GST_ELEMENT_NAME (self), err->message),
        ("frame %" G_GUINT64_FORMAT, e->fr.index));
    g_clear_error (&err);
    gst_clear_buffer (&out);
    flow = GST_FLOW_ERROR;
  }
  set_ready (a, e, out, flow);
}

/* @e's frame leaves without inference: its output buffer now (the
 * frame's source, or @inbuf; nothing for output=tensors), which cannot
 * fail. */
static void
pass_on (GstM2iInfer *self, Entry *e, GstBuffer *inbuf)
{
  GstBuffer *out = NULL;
  GstM2iInferFrame fr = e->fr;
  fr.infer = FALSE;
  gst_m2i_infer_output_buffer (self, NULL, &e->work, inbuf, &fr, &out, NULL);
  set_ready (self->async, e, out, GST_FLOW_OK);
}

GstFlowReturn
gst_m2i_infer_async_chain (GstM2iInfer *self, GstBuffer *inbuf)
{
  GstM2iInferAsync *a = self->async;
  GstFlowReturn ret;
  Entry *e = take_entry (a, &ret);
  if (!e) {
    gst_buffer_unref (inbuf);
    return ret;
  }
  GError *err = NULL;
  gst_m2i_infer_frame_settings (self, inbuf, &e->fr);
  if (!gst_m2i_deferred_frame_borrow (&e->work, &self->in_info, inbuf, &err)) {
    release (a, e);
    goto failed;
  }
  e->source = e->work.source_image;
  append (a, e);
  if (!e->fr.infer) {
    pass_on (self, e, inbuf);
    return GST_FLOW_OK;
  }
  M2iImage src;
  if (!gst_m2i_deferred_frame_map_source (&e->work, &e->map, &src, &err)) {
    set_ready (a, e, NULL, GST_FLOW_ERROR);
    goto failed;
  }
  e->inbuf = inbuf;
  e->submitted = g_get_monotonic_time ();
  switch (m2i_infer_queue_submit (a->queue, &src, &e->work.ops, &e->work.letterbox,
          &e->fr.decoder, e, a->block)) {
    case M2I_INFER_SUBMITTED:
      break;
    case M2I_INFER_BUSY:
      gst_buffer_unmap (e->work.source, &e->map);
      e->inbuf = NULL;
      GST_OBJECT_LOCK (self);
      guint64 n = ++self->n_skipped;
      GST_OBJECT_UNLOCK (self);
      GST_DEBUG_OBJECT (self, "all %u requests busy: frame %" G_GUINT64_FORMAT " passes "
          "without inference (%" G_GUINT64_FORMAT " so far)", a->n_requests, e->fr.index, n);
      pass_on (self, e, inbuf);
      return GST_FLOW_OK;
    case M2I_INFER_FLUSHING:
      gst_buffer_unmap (e->work.source, &e->map);
      e->inbuf = NULL;
      gst_buffer_unref (inbuf);
      set_ready (a, e, NULL, GST_FLOW_OK);
      return GST_FLOW_FLUSHING;
  }
  g_mutex_lock (&a->lock);
  ret = a->flushing ? GST_FLOW_FLUSHING : a->flow;
  g_mutex_unlock (&a->lock);
  return ret;

failed:
  gst_buffer_unref (inbuf);
  GST_ELEMENT_ERROR (self, STREAM, FAILED, ("%s: %s", GST_ELEMENT_NAME (self), err->message),
      (NULL));
  g_clear_error (&err);
  return GST_FLOW_ERROR;
}

/* ---- the source pad's task ---------------------------------------------------------- */

static void
src_loop (gpointer data)
{
  GstM2iInfer *self = data;
  GstM2iInferAsync *a = self->async;
  g_mutex_lock (&a->lock);
  while (!a->flushing && !(a->head && a->head->ready))
    g_cond_wait (&a->cond, &a->lock);
  if (a->flushing) {
    g_mutex_unlock (&a->lock);
    gst_pad_pause_task (self->srcpad);
    return;
  }
  Entry *e = a->head;
  a->head = e->next;
  if (!a->head)
    a->tail = NULL;
  a->pushing = TRUE;
  GstBuffer *out = g_steal_pointer (&e->out);
  M2iImage source = e->source;
  gboolean check_caps = !e->fr.tensors && self->mode == INPUT_DEFERRED;
  g_mutex_unlock (&a->lock);
  release (a, e);
  GstFlowReturn ret = GST_FLOW_OK;
  if (out && check_caps)
    ret = gst_m2i_infer_source_caps (self, &source);
  if (out && ret == GST_FLOW_OK)
    ret = gst_pad_push (self->srcpad, out);
  else
    gst_clear_buffer (&out);
  g_mutex_lock (&a->lock);
  a->pushing = FALSE;
  if (ret != GST_FLOW_OK && a->flow == GST_FLOW_OK)
    a->flow = ret;
  g_cond_broadcast (&a->cond);
  g_mutex_unlock (&a->lock);
  if (ret == GST_FLOW_OK)
    return;
  GST_DEBUG_OBJECT (self, "pausing the task: %s", gst_flow_get_name (ret));
  if (ret == GST_FLOW_NOT_LINKED || ret < GST_FLOW_EOS)
    GST_ELEMENT_FLOW_ERROR (self, ret);
  gst_pad_pause_task (self->srcpad);
}

/* ---- lifetime -------------------------------------------------------------------------- */

M2iInferSession *
gst_m2i_infer_async_new (GstM2iInfer *self, M2iInferModel *model, GError **error)
{
  GST_OBJECT_LOCK (self);
  guint nireq = self->nireq ? self->nireq : self->batch_size;
  gint64 timeout = self->batch_size > 1 ? (gint64) self->batch_timeout_ms * 1000 : 0;
  gboolean block = !self->no_block;
  GST_OBJECT_UNLOCK (self);
  M2iInferQueueOptions qo;
  m2i_infer_queue_options_init (&qo);
  qo.n_requests = nireq;
  qo.batch_timeout_us = timeout;
  GstM2iInferAsync *a = g_new0 (GstM2iInferAsync, 1);
  a->queue = m2i_infer_queue_new (model, &qo, frame_done, self, error);
  if (!a->queue) {
    g_free (a);
    return NULL;
  }
  a->n_requests = nireq;
  a->batch_timeout_us = timeout;
  a->block = block;
  g_mutex_init (&a->lock);
  g_cond_init (&a->cond);
  a->n_entries = nireq + EXTRA_ENTRIES;
  a->entries = g_new0 (Entry, a->n_entries);
  for (guint i = 0; i < a->n_entries; i++) {
    a->entries[i].next = a->free_list;
    a->free_list = &a->entries[i];
  }
  a->flushing = TRUE;             /* until the task starts */
  self->async = a;
  return m2i_infer_queue_get_template (a->queue);
}

gboolean
gst_m2i_infer_async_start (GstM2iInfer *self)
{
  GstM2iInferAsync *a = self->async;
  if (!a)
    return TRUE;
  g_mutex_lock (&a->lock);
  a->flushing = FALSE;
  a->flow = GST_FLOW_OK;
  g_mutex_unlock (&a->lock);
  m2i_infer_queue_set_flushing (a->queue, FALSE);
  return gst_pad_start_task (self->srcpad, src_loop, self, NULL);
}

/* Cancels what has not run and stops pushing (FLUSH_START, PAUSED->READY). */
static void
flush_start (GstM2iInferAsync *a)
{
  g_mutex_lock (&a->lock);
  a->flushing = TRUE;
  g_cond_broadcast (&a->cond);
  g_mutex_unlock (&a->lock);
  m2i_infer_queue_set_flushing (a->queue, TRUE);
}

/* Waits for the frames that were running, drops what was not pushed. */
static void
flush_stop (GstM2iInferAsync *a)
{
  m2i_infer_queue_drain (a->queue);
  clear_output (a);
}

void
gst_m2i_infer_async_unblock (GstM2iInfer *self)
{
  GstM2iInferAsync *a = self->async;
  if (!a)
    return;
  flush_start (a);
  gst_pad_stop_task (self->srcpad);
}

void
gst_m2i_infer_async_stop (GstM2iInfer *self)
{
  if (self->async)
    flush_stop (self->async);
}

void
gst_m2i_infer_async_free (GstM2iInfer *self)
{
  GstM2iInferAsync *a = self->async;
  if (!a)
    return;
  m2i_infer_queue_free (a->queue);
  clear_output (a);
  g_mutex_clear (&a->lock);
  g_cond_clear (&a->cond);
  g_free (a->entries);
  g_free (a);
  self->async = NULL;
}

gboolean
gst_m2i_infer_async_set_preprocess (GstM2iInfer *self, const M2iInferPreprocess *pp,
    GError **error)
{
  return m2i_infer_queue_set_preprocess (self->async->queue, pp, error);
}

/* ---- events and queries ---------------------------------------------------------------- */

/* Waits until every frame handed over has been pushed, the last push
 * returned included (or pushing stopped: flushing, a flow error), so that
 * an event pushed next follows them. */
static void
wait_pushed (GstM2iInferAsync *a)
{
  m2i_infer_queue_drain (a->queue);
  g_mutex_lock (&a->lock);
  while ((a->head || a->pushing) && !a->flushing && a->flow == GST_FLOW_OK)
    g_cond_wait (&a->cond, &a->lock);
  g_mutex_unlock (&a->lock);
}

gboolean
gst_m2i_infer_async_sink_event (GstM2iInfer *self, GstEvent *event, gboolean *handled)
{
  GstM2iInferAsync *a = self->async;
  *handled = FALSE;
  if (!a)
    return FALSE;
  switch (GST_EVENT_TYPE (event)) {
    case GST_EVENT_FLUSH_START: {
      flush_start (a);
      gboolean ret = gst_pad_push_event (self->srcpad, event);
      gst_pad_pause_task (self->srcpad);
      *handled = TRUE;
      return ret;
    }
    case GST_EVENT_FLUSH_STOP: {
      flush_stop (a);
      g_mutex_lock (&a->lock);
      a->flushing = FALSE;
      a->flow = GST_FLOW_OK;
      g_mutex_unlock (&a->lock);
      m2i_infer_queue_set_flushing (a->queue, FALSE);
      self->since_flush = 0;
      gboolean ret = gst_pad_push_event (self->srcpad, event);
      gst_pad_start_task (self->srcpad, src_loop, self, NULL);
      *handled = TRUE;
      return ret;
    }
    default:
      if (GST_EVENT_IS_SERIALIZED (event))
        wait_pushed (a);
      return FALSE;
  }
}

gboolean
gst_m2i_infer_src_query (GstPad *pad, GstObject *parent, GstQuery *query)
{
  GstM2iInfer *self = GST_M2I_INFER (parent);
  GstM2iInferAsync *a = self->async;
  if (GST_QUERY_TYPE (query) != GST_QUERY_LATENCY || !a)
    return gst_pad_query_default (pad, parent, query);
  if (!gst_pad_peer_query (self->sinkpad, query))
    return FALSE;
  gboolean live;
  GstClockTime min, max;
  gst_query_parse_latency (query, &live, &min, &max);
  g_mutex_lock (&a->lock);
  /* a frame waits for its batch, then for its inference */
  GstClockTime ours = (GstClockTime) (a->batch_timeout_us + a->infer_us) * GST_USECOND;
  g_mutex_unlock (&a->lock);
  /* and holds its place while the others in flight run */
  GstClockTime hold = self->fps_n > 0 ? gst_util_uint64_scale (a->n_requests,
      (guint64) self->fps_d * GST_SECOND, (guint64) self->fps_n) : 0;
  min += ours;
  if (max != GST_CLOCK_TIME_NONE)
    max += ours + hold;
  GST_DEBUG_OBJECT (self, "latency: ours %" GST_TIME_FORMAT ", min %" GST_TIME_FORMAT ", max %"
      GST_TIME_FORMAT, GST_TIME_ARGS (ours), GST_TIME_ARGS (min), GST_TIME_ARGS (max));
  gst_query_set_latency (query, live, min, max);
  return TRUE;
}
