/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gstm2iinfer.c — m2iinfer: caps, properties, metas and messages over the
 * inference session of m2i-core/infer (m2i-infer.h), as videoconvertscale
 * is over GstVideoConverter; see gstm2iinfer.h and docs/m2iinfer.md.
 *
 * Three ways in: deferred frames (memory:M2I) of an adjacent m2i chain,
 * whose queued ops the session extends and runs as one M2I plan into the
 * model's input (the chain's source video leaves the element); plain video,
 * pre-processed by the session's own plan (or, for an NV12/I420
 * PrePostProcessor head, its planes copied in); other/tensors matching the
 * model's inputs. The element is a plain GstElement: its output is not made
 * from its input by a fixed rule, which GstBaseTransform does not model.
 * Negotiation and the pads' queries and events: gstm2iinferpads.c;
 * properties: gstm2iinferprops.c.
 */
#include "gstm2iinfer-private.h"
#include "gstm2ienums.h"
#include "gstm2itensormeta.h"
#include "gstm2itensors.h"

#include <m2i-core/base/m2i-error.h>
#include <string.h>

GST_DEBUG_CATEGORY (gst_m2i_infer_debug);
#define GST_CAT_DEFAULT gst_m2i_infer_debug


G_DEFINE_TYPE (GstM2iInfer, gst_m2i_infer, GST_TYPE_ELEMENT);
GST_ELEMENT_REGISTER_DEFINE_WITH_CODE (m2iinfer, "m2iinfer", GST_RANK_NONE, GST_TYPE_M2I_INFER,
    GST_DEBUG_CATEGORY_INIT (gst_m2i_infer_debug, "m2iinfer", 0, "m2i inference"));

/* Plain video of any format: the caps query offers what the model takes
 * (NV12, I420, RGB, BGR, RGBP, BGRP, GRAY8, RGBx, BGRx, xRGB, xBGR, RGBA,
 * BGRA, ARGB, ABGR); other formats link, and are refused with a message
 * saying what to put in front instead of a bare not-negotiated. */
#define ANY_VIDEO_CAPS "video/x-raw, width=(int)[1, 65536], height=(int)[1, 65536], " \
  "framerate=(fraction)[0/1, 2147483647/1]"
#define SINK_CAPS \
  GST_M2I_TENSOR_CAPS ("(" GST_CAPS_FEATURE_MEMORY_M2I ")") "; " \
  GST_M2I_VIDEO_CAPS ("(" GST_CAPS_FEATURE_MEMORY_M2I ")", "{ RGBP, BGRP, RGB, BGR }") "; " \
  "other/tensors, format=(string)static, framerate=(fraction)[0/1, 2147483647/1]; " \
  ANY_VIDEO_CAPS
#define SRC_CAPS \
  ANY_VIDEO_CAPS "; " \
  "other/tensors, format=(string)static, framerate=(fraction)[0/1, 2147483647/1]"

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink", GST_PAD_SINK,
    GST_PAD_ALWAYS, GST_STATIC_CAPS (SINK_CAPS));
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src", GST_PAD_SRC,
    GST_PAD_ALWAYS, GST_STATIC_CAPS (SRC_CAPS));

/* ---- model lifetime ------------------------------------------------------- */

void
gst_m2i_infer_clear_negotiated (GstM2iInfer *self)
{
  gst_m2i_deferred_frame_init (&self->work);
  self->mode = INPUT_NONE;
  self->report = TRUE;
}

static void
unload_model (GstM2iInfer *self)
{
  gst_m2i_infer_async_free (self);
  gst_m2i_infer_clear_negotiated (self);
  if (self->tensor_pool) {
    gst_buffer_pool_set_active (self->tensor_pool, FALSE);
    gst_clear_object (&self->tensor_pool);
  }
  GST_OBJECT_LOCK (self);
  M2iInferSession *s = self->session;
  self->session = NULL;
  self->model = NULL;
  gst_clear_caps (&self->model_caps);
  gst_clear_caps (&self->model_caps_plain);
  GST_OBJECT_UNLOCK (self);
  g_clear_pointer (&self->roi, gst_m2i_infer_roi_free);
  g_clear_pointer (&self->caps_refused, g_free);
  m2i_infer_session_free (s);
  gst_clear_caps (&self->output_tensor_caps);
  gst_m2i_result_context_clear (&self->ctx);
  GST_OBJECT_LOCK (self);
  g_clear_pointer (&self->settings, g_free);
  GST_OBJECT_UNLOCK (self);
}

/* labels= names a file, or is a list itself ("[cat, dog]", "{0: cat}",
 * lines, "- cat" lines): which one into @mo. FALSE with @error for a
 * string that is neither. */
static gboolean
labels_option (const char *labels, M2iInferModelOptions *mo, GError **error)
{
  if (!labels)
    return TRUE;
  const char *t = labels;
  while (g_ascii_isspace (*t))
    t++;
  if (g_file_test (labels, G_FILE_TEST_EXISTS))
    mo->labels_path = labels;
  else if (*t == '[' || *t == '{' || strchr (t, '\n') || g_str_has_prefix (t, "- "))
    mo->labels_text = labels;
  else {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, "labels=\"%s\": no such "
        "labels file, and not a list: set labels= to a text file with one label a line (or a "
        "JSON / YAML-like list), or to the list itself, e.g. labels=\"[cat, dog]\"", labels);
    return FALSE;
  }
  return TRUE;
}

gboolean
gst_m2i_infer_roi_list (GstM2iInfer *self)
{
  GST_OBJECT_LOCK (self);
  gboolean roi = self->roi_props.region == GST_M2I_INFER_REGION_ROI_LIST;
  GST_OBJECT_UNLOCK (self);
  return roi;
}

/* inference-region=roi-list: the regions' state over session @s. */
static gboolean
load_roi (GstM2iInfer *self, M2iInferSession *s, gboolean tensors, GError **error)
{
  if (!gst_m2i_infer_roi_list (self))
    return TRUE;
  if (tensors) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, "inference-region=roi-list "
        "attaches each region's results to its region meta: set output=meta");
    return FALSE;
  }
  GST_OBJECT_LOCK (self);
  GstM2iInferRoiProps props = self->roi_props;
  props.object_class = g_strdup (props.object_class);
  GST_OBJECT_UNLOCK (self);
  self->roi = gst_m2i_infer_roi_new (s, &props, error);
  g_free (props.object_class);
  if (self->roi)
    GST_INFO_OBJECT (self, "inference-region=roi-list: takes plain video only (the frame the "
        "regions refer to); an m2i element upstream computes its frames (no memory:M2I)");
  return self->roi != NULL;
}

static gboolean
load_model (GstM2iInfer *self)
{
  GError *err = NULL;
  M2iInferModelOptions mo;
  m2i_infer_model_options_init (&mo);
  GST_OBJECT_LOCK (self);
  gchar *path = g_strdup (self->model_path), *device = g_strdup (self->device);
  gchar *labels = g_strdup (self->labels), *split_dir = g_strdup (self->split_dir);
  gchar *extra = g_strdup (self->extra_inputs), *instance = g_strdup (self->instance_id);
  mo.n_threads = self->props.n_threads;
  mo.batch = self->batch_size;
  mo.max_memory = self->max_memory;
  mo.decoder.type = self->model_type;
  mo.decoder.max_detections = self->max_detections;
  gboolean tensors = self->output == GST_M2I_INFER_OUTPUT_TENSORS;
  gboolean async = gst_m2i_infer_async_wanted (self);
  gboolean async_roi = async && self->roi_props.region == GST_M2I_INFER_REGION_ROI_LIST;
  self->told_caps = FALSE;
  GST_OBJECT_UNLOCK (self);
  mo.device = device;
  mo.split_dir = split_dir;
  M2iInferModel *m = NULL;
  if (async_roi)
    g_set_error (&err, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, "inference-region=roi-list "
        "runs a frame's regions as one batch in the streaming thread: unset nireq, batch-size "
        "and no-block (model-instance-id may stay: the model is shared, the requests are the "
        "element's)");
  else if (labels_option (labels, &mo, &err))
    m = m2i_infer_model_acquire (instance, path, &mo, &err);
  /* asynchronous: the queue's sessions run, the template describes them;
   * synchronous: one session of the element's own */
  M2iInferSession *s = !m ? NULL : async ? gst_m2i_infer_async_new (self, m, &err)
      : m2i_infer_session_new (m, &err);
  m2i_infer_model_unref (m);
  gboolean ok = s != NULL;
  if (ok && tensors)
    ok = (self->output_tensor_caps = gst_m2i_infer_output_caps (m, &err)) != NULL;
  /* the model's other inputs: given now, all of them for an image model
   * (an asynchronous queue takes models whose only input is the image) */
  if (ok && async && extra && *extra) {
    g_set_error (&err, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, "extra-inputs: the model's only "
        "input is the image, and asynchronous inference (nireq, batch-size, no-block, "
        "model-instance-id) fills only that one: unset extra-inputs");
    ok = FALSE;
  }
  if (ok && !async)
    ok = m2i_infer_session_set_extra_inputs (s, extra, &err)
        && (m2i_infer_model_get_input_kind (m, NULL, NULL) != M2I_INFER_INPUT_IMAGE
        || m2i_infer_session_check_inputs (s, &err));
  if (ok && !async)
    ok = load_roi (self, s, tensors, &err);
  if (!ok && s) {
    gst_m2i_infer_async_free (self);
    if (!async)
      m2i_infer_session_free (s);
    s = NULL;
  }
  if (!s) {
    /* settings (what to set) as they are; the model's troubles with its path */
    if (!path || g_error_matches (err, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT))
      GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS, ("%s: %s", GST_ELEMENT_NAME (self),
              err->message), ("model=%s device=%s", path ? path : "(none)",
              device ? device : GST_M2I_INFER_DEFAULT_DEVICE));
    else
      GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ, ("%s: cannot use model %s: %s",
              GST_ELEMENT_NAME (self), path, err->message), ("device=%s",
              device ? device : GST_M2I_INFER_DEFAULT_DEVICE));
    g_clear_error (&err);
  } else {
    gst_m2i_result_context_init (&self->ctx, s);
    GstCaps *with = gst_m2i_infer_model_caps (m, TRUE), *without = gst_m2i_infer_model_caps (m,
        FALSE);
    GST_OBJECT_LOCK (self);
    self->session = async ? NULL : s;
    self->model = m;
    self->model_caps = with;
    self->model_caps_plain = without;
    self->pp_changed = TRUE;
    GST_OBJECT_UNLOCK (self);
    gchar *meta = m2i_model_info_describe (m2i_infer_model_get_info (m));
    GST_INFO_OBJECT (self, "model %s (%s%s%s) on %s: %s; decoder %s; %s; takes %" GST_PTR_FORMAT
        "; its metadata:\n%s", path, m2i_infer_model_get_name (m), instance ? ", instance " : "",
        instance ? instance : "", m2i_infer_model_get_device (m), m2i_infer_model_describe (m),
        m2i_decoder_describe (m2i_infer_session_get_decoder (s)), async ? "asynchronous"
        : "synchronous", with, meta);
    g_free (meta);
    self->n_frames = self->since_flush = 0;
  }
  g_free (path);
  g_free (device);
  g_free (labels);
  g_free (split_dir);
  g_free (instance);
  g_free (extra);
  return s != NULL;
}

static GstStateChangeReturn
gst_m2i_infer_change_state (GstElement *element, GstStateChange transition)
{
  GstM2iInfer *self = GST_M2I_INFER (element);
  if (transition == GST_STATE_CHANGE_READY_TO_PAUSED && !load_model (self))
    return GST_STATE_CHANGE_FAILURE;
  if (transition == GST_STATE_CHANGE_PAUSED_TO_READY)
    gst_m2i_infer_async_unblock (self);
  GstStateChangeReturn ret = GST_ELEMENT_CLASS (gst_m2i_infer_parent_class)->change_state (
      element, transition);
  if (transition == GST_STATE_CHANGE_PAUSED_TO_READY)
    gst_m2i_infer_async_stop (self);
  if (transition == GST_STATE_CHANGE_READY_TO_PAUSED && ret != GST_STATE_CHANGE_FAILURE
      && !gst_m2i_infer_async_start (self))
    ret = GST_STATE_CHANGE_FAILURE;
  if (transition == GST_STATE_CHANGE_PAUSED_TO_READY
      || (transition == GST_STATE_CHANGE_READY_TO_PAUSED && ret == GST_STATE_CHANGE_FAILURE))
    unload_model (self);
  return ret;
}

/* ---- pre-processing settings ------------------------------------------------- */

gboolean
gst_m2i_infer_update_preprocess (GstM2iInfer *self, GError **error)
{
  M2iInferPreprocess pp;
  M2iDecoderOptions dec;
  m2i_decoder_options_init (&dec);
  GST_OBJECT_LOCK (self);
  gboolean changed = self->pp_changed;
  gboolean ok = !changed || gst_m2i_shared_props_to_preprocess (&self->props, self->resize_mode,
      &pp, error);
  guint given = self->given;
  if (changed && ok) {
    if (self->resize_type != GST_M2I_INFER_RESIZE_AUTO)
      pp.resize_type = (M2iResizeType) self->resize_type;
    pp.pad_value = self->pad_value >= 0 ? (float) self->pad_value : 0.0f;
    dec.confidence_threshold = (float) self->threshold;
    dec.iou_threshold = (float) self->iou_threshold;
    dec.class_agnostic_nms = self->class_agnostic;
    dec.top_k = self->top_k;
    dec.max_detections = self->max_detections;
  }
  self->pp_changed = FALSE;
  GST_OBJECT_UNLOCK (self);
  if (!changed)
    return TRUE;
  gchar *text = NULL;
  if (ok) {
    /* the model's metadata for what no property set */
    text = m2i_infer_settings_resolve (self->model, given, &pp, &dec);
    dec.top_k = MIN (dec.top_k, GST_M2I_INFER_MAX_TOP_K);
    ok = self->async ? gst_m2i_infer_async_set_preprocess (self, &pp, error)
        : m2i_infer_session_set_preprocess (self->session, &pp, error);
  }
  GST_OBJECT_LOCK (self);
  if (ok) {
    gboolean same = !g_strcmp0 (text, self->settings);
    self->dec = dec;
    g_free (self->settings);
    self->settings = text;
    text = NULL;
    if (!same) {
      g_atomic_int_set (&self->report, TRUE);     /* the fused text names them */
      GST_INFO_OBJECT (self, "settings (property / model metadata key / default):\n%s",
          self->settings);
    }
  } else {
    self->pp_changed = TRUE;
  }
  GST_OBJECT_UNLOCK (self);
  g_free (text);
  return ok;
}

/* ---- per frame ------------------------------------------------------------------ */

/* Runs the session on @inbuf (its frame in self->work), decodes, and says
 * what ran in "fused". */
static gboolean
infer (GstM2iInfer *self, GstBuffer *inbuf, const M2iDecoderOptions *dopts, GError **error)
{
  GstM2iDeferredFrame *f = &self->work;
  gboolean ok;
  m2i_decoder_set_options (m2i_infer_session_get_decoder (self->session), dopts);
  if (self->mode == INPUT_TENSORS) {
    ok = gst_m2i_tensors_to_session (inbuf, self->n_in_tensors, self->in_tensor_type,
        self->in_tensor_bytes, self->session, error)
        && m2i_infer_session_run_inputs (self->session, error);
  } else {
    GstMapInfo map;
    M2iImage src;
    if (!gst_m2i_deferred_frame_map_source (f, &map, &src, error))
      return FALSE;
    /* through the process-wide device queue, as every pipeline's inference */
    ok = m2i_infer_session_run_queued (self->session, &src, &f->ops, &f->letterbox, error);
    gst_buffer_unmap (f->source, &map);
  }
  if (ok)
    gst_m2i_infer_report_fused (self, self->session, f->chain);
  return ok;
}

void
gst_m2i_infer_report_fused (GstM2iInfer *self, M2iInferSession *session, const char *chain)
{
  guint serial;
  const char *desc = m2i_infer_session_describe (session, &serial);
  if (!g_atomic_int_compare_and_exchange (&self->report, TRUE, FALSE) && serial == self->reported)
    return;
  self->reported = serial;
  GST_OBJECT_LOCK (self);
  gchar **lines = g_strsplit (self->settings ? self->settings : "", "\n", -1);
  GST_OBJECT_UNLOCK (self);
  gchar *settings = g_strjoinv ("; ", lines);
  g_strfreev (lines);
  gst_m2i_set_fused (GST_CAT_DEFAULT, GST_OBJECT (self), &self->props.fused,
      g_strdup_printf ("%s%s%s: %s; settings: %s", chain, chain[0] ? " + " : "",
          GST_ELEMENT_NAME (self), desc, settings));
  g_free (settings);
}

GstFlowReturn
gst_m2i_infer_source_caps (GstM2iInfer *self, const M2iImage *src)
{
  GstM2iCapsFormat cf = gst_m2i_caps_format_from_m2i (src->format);
  gboolean same = self->src_is_video && GST_VIDEO_INFO_WIDTH (&self->src_vinfo) == src->width
      && GST_VIDEO_INFO_HEIGHT (&self->src_vinfo) == src->height
      && !g_strcmp0 (gst_video_format_to_string (GST_VIDEO_INFO_FORMAT (&self->src_vinfo)),
      gst_m2i_caps_format_name (cf));
  if (same)
    return GST_FLOW_OK;
  GstStructure *s = gst_m2i_structure_new_sized (cf, src->width, src->height);
  gst_structure_set (s, "framerate", GST_TYPE_FRACTION, self->fps_n, self->fps_d, NULL);
  GST_INFO_OBJECT (self, "the chain's source frame is %s %dx%d: renegotiating",
      m2i_format_to_string (src->format), src->width, src->height);
  return gst_m2i_infer_push_src_caps (self, gst_caps_new_full (s, NULL)) ? GST_FLOW_OK
      : GST_FLOW_NOT_NEGOTIATED;
}

void
gst_m2i_infer_frame_settings (GstM2iInfer *self, GstBuffer *inbuf, GstM2iInferFrame *fr)
{
  GST_OBJECT_LOCK (self);
  guint interval = MAX (self->interval, 1);
  fr->decoder = self->dec;
  fr->post = self->post_messages;
  fr->tensors = self->output == GST_M2I_INFER_OUTPUT_TENSORS;
  GST_OBJECT_UNLOCK (self);
  fr->index = self->n_frames++;
  fr->pts = GST_BUFFER_PTS (inbuf);
  fr->infer = self->since_flush++ % interval == 0;
}

GstFlowReturn
gst_m2i_infer_output_buffer (GstM2iInfer *self, M2iInferSession *session,
    GstM2iDeferredFrame *f, GstBuffer *inbuf, const GstM2iInferFrame *fr, GstBuffer **out,
    GError **error)
{
  GstFlowReturn ret = GST_FLOW_OK;
  if (fr->tensors && fr->infer && (ret = gst_m2i_tensors_from_session (session,
              self->output_tensor_caps, &self->tensor_pool, out, error)) == GST_FLOW_OK)
    gst_buffer_copy_into (*out, inbuf, GST_BUFFER_COPY_TIMESTAMPS, 0, -1);
  if (fr->tensors)
    gst_buffer_unref (inbuf);
  else if (self->mode == INPUT_DEFERRED)
    *out = gst_m2i_deferred_frame_take_source (f, inbuf);
  else
    *out = gst_buffer_make_writable (inbuf);
  return ret;
}

/* inference-region=roi-list: @inbuf (taken) with each region's results, as
 * *@out. */
static GstFlowReturn
roi_frame (GstM2iInfer *self, GstBuffer *inbuf, const GstM2iInferFrame *fr, GstBuffer **out,
    GError **error)
{
  *out = gst_buffer_make_writable (inbuf);
  m2i_decoder_set_options (m2i_infer_session_get_decoder (self->session), &fr->decoder);
  if ((fr->infer && !gst_m2i_infer_update_preprocess (self, error))
      || !gst_m2i_infer_roi_frame (self->roi, GST_ELEMENT (self), *out, &self->in_info,
          &self->ctx, fr->index, fr->infer, fr->post, error))
    return GST_FLOW_ERROR;
  guint serial;
  const char *desc = gst_m2i_infer_roi_describe (self->roi, &serial);
  if (*desc && (g_atomic_int_compare_and_exchange (&self->report, TRUE, FALSE)
          || serial != self->reported)) {
    self->reported = serial;
    gst_m2i_set_fused (GST_CAT_DEFAULT, GST_OBJECT (self), &self->props.fused,
        g_strdup_printf ("%s: %s", GST_ELEMENT_NAME (self), desc));
  }
  return GST_FLOW_OK;
}

static GstFlowReturn
gst_m2i_infer_chain (GstPad *pad, GstObject *parent, GstBuffer *inbuf)
{
  GstM2iInfer *self = GST_M2I_INFER (parent);
  GError *err = NULL;
  GstBuffer *out = NULL;
  GstFlowReturn ret = GST_FLOW_ERROR;
  GstM2iInferFrame fr;
  if (self->mode == INPUT_NONE) {
    gst_buffer_unref (inbuf);
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, ("%s: a buffer before any caps",
            GST_ELEMENT_NAME (self)), (NULL));
    return GST_FLOW_NOT_NEGOTIATED;
  }
  if (!gst_m2i_infer_update_preprocess (self, &err)) {
    gst_buffer_unref (inbuf);
    GST_ELEMENT_ERROR (self, STREAM, FAILED, ("%s: %s", GST_ELEMENT_NAME (self), err->message),
        (NULL));
    g_clear_error (&err);
    return GST_FLOW_ERROR;
  }
  if (self->async && self->mode != INPUT_TENSORS)
    return gst_m2i_infer_async_chain (self, inbuf);
  gst_m2i_infer_frame_settings (self, inbuf, &fr);
  M2iImage source;
  if (self->roi)
    ret = roi_frame (self, g_steal_pointer (&inbuf), &fr, &out, &err);
  else if ((self->mode == INPUT_TENSORS || gst_m2i_deferred_frame_borrow (&self->work,
              &self->in_info, inbuf, &err)) && (!fr.infer || infer (self, inbuf, &fr.decoder, &err))) {
    source = self->work.source_image;
    ret = gst_m2i_infer_output_buffer (self, self->session, &self->work,
        g_steal_pointer (&inbuf), &fr, &out, &err);
    if (ret == GST_FLOW_OK && !fr.tensors && self->mode == INPUT_DEFERRED)
      ret = gst_m2i_infer_source_caps (self, &source);
  }
  gst_m2i_deferred_frame_init (&self->work);
  gst_clear_buffer (&inbuf);
  /* (roi-list: the results are on the regions already) */
  if (ret == GST_FLOW_OK && out && fr.infer && !self->roi)
    gst_m2i_publish_results (GST_ELEMENT (self), fr.tensors ? NULL : out, &self->ctx,
        self->session, fr.index, fr.pts, fr.post);
  if (err) {
    GST_ELEMENT_ERROR (self, STREAM, FAILED, ("%s: %s", GST_ELEMENT_NAME (self), err->message),
        (NULL));
    g_clear_error (&err);
  }
  if (ret != GST_FLOW_OK || !out) {
    gst_clear_buffer (&out);
    return ret;
  }
  return gst_pad_push (self->srcpad, out);
}

/* ---- class ----------------------------------------------------------------------- */

static void
gst_m2i_infer_finalize (GObject *object)
{
  GstM2iInfer *self = GST_M2I_INFER (object);
  unload_model (self);
  g_free (self->model_path);
  g_free (self->device);
  g_free (self->labels);
  g_free (self->extra_inputs);
  g_free (self->split_dir);
  g_free (self->instance_id);
  gst_m2i_shared_props_clear (&self->props);
  gst_m2i_infer_roi_props_clear (&self->roi_props);
  G_OBJECT_CLASS (gst_m2i_infer_parent_class)->finalize (object);
}

static void
gst_m2i_infer_class_init (GstM2iInferClass *klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);

  gobject_class->finalize = gst_m2i_infer_finalize;
  element_class->change_state = GST_DEBUG_FUNCPTR (gst_m2i_infer_change_state);

  gst_m2i_infer_install_properties (gobject_class);

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class, "M2I inference",
      "Filter/Analyzer/Video",
      "Runs an OpenVINO IR model (v10/v11) on video frames or other/tensors, on the CPU or "
      "split between the M2I device and the CPU, with the pre-processing (colour conversion, "
      "resize, normalisation, including that of adjacent m2i elements) fused into the M2I "
      "plan that writes the model's input; attaches the outputs (tensor meta), classes and "
      "detections (region-of-interest metas, DL Streamer style) and posts them on the bus, "
      "or pushes the outputs as other/tensors", "m2i developers");
  gst_type_mark_as_plugin_api (GST_TYPE_M2I_INFER_OUTPUT, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_M2I_MODEL_TYPE, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_M2I_INFER_RESIZE_TYPE, 0);
  /* Register the meta now, so readers can find it by name. */
  gst_m2i_tensor_meta_get_info ();
}

static void
gst_m2i_infer_init (GstM2iInfer *self)
{
  self->sinkpad = gst_pad_new_from_static_template (&sink_template, "sink");
  gst_pad_set_chain_function (self->sinkpad, GST_DEBUG_FUNCPTR (gst_m2i_infer_chain));
  gst_pad_set_event_function (self->sinkpad, GST_DEBUG_FUNCPTR (gst_m2i_infer_sink_event));
  gst_pad_set_query_function (self->sinkpad, GST_DEBUG_FUNCPTR (gst_m2i_infer_sink_query));
  gst_element_add_pad (GST_ELEMENT (self), self->sinkpad);
  self->srcpad = gst_pad_new_from_static_template (&src_template, "src");
  gst_pad_use_fixed_caps (self->srcpad);   /* caps query: the current caps or the template */
  gst_pad_set_query_function (self->srcpad, GST_DEBUG_FUNCPTR (gst_m2i_infer_src_query));
  gst_element_add_pad (GST_ELEMENT (self), self->srcpad);

  gst_m2i_infer_props_init (self);
  /* the decoder's options and pre-processing: resolved from the properties
   * and the model's metadata when the model loads */
  m2i_decoder_options_init (&self->dec);
  self->pp_changed = TRUE;
  gst_m2i_deferred_frame_init (&self->work);
  self->report = TRUE;
}
