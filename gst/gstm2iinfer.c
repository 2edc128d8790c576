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
 * Negotiation and the pads' queries and events: gstm2iinferpads.c.
 */
#include "gstm2iinfer-private.h"
#include "gstm2ienums.h"
#include "gstm2itensormeta.h"
#include "gstm2itensors.h"

#include <m2i-core/base/m2i-error.h>
#include <string.h>

GST_DEBUG_CATEGORY (gst_m2i_infer_debug);
#define GST_CAT_DEFAULT gst_m2i_infer_debug

#define DEFAULT_DEVICE "AUTO"
#define DEFAULT_THRESHOLD 0.5
#define DEFAULT_TOP_K 1
#define DEFAULT_INTERVAL 1
#define DEFAULT_OUTPUT GST_M2I_INFER_OUTPUT_META
#define DEFAULT_POST_MESSAGES TRUE
#define DEFAULT_RESIZE_MODE M2I_RESIZE_LINEAR_ONNX
#define DEFAULT_IOU_THRESHOLD 0.5
#define DEFAULT_CLASS_AGNOSTIC FALSE
#define DEFAULT_MAX_DETECTIONS 300
#define DEFAULT_MODEL_TYPE M2I_MODEL_TYPE_AUTO
#define DEFAULT_RESIZE_TYPE GST_M2I_INFER_RESIZE_AUTO
#define DEFAULT_PAD_VALUE -1
#define MAX_TOP_K 100
#define MAX_DETECTIONS 100000

enum {
  PROP_0, PROP_MODEL, PROP_DEVICE, PROP_LABELS, PROP_THRESHOLD, PROP_TOP_K,
  PROP_INFERENCE_INTERVAL, PROP_N_THREADS, PROP_SPLIT_DIR, PROP_OUTPUT, PROP_POST_MESSAGES,
  PROP_CHANNEL_ORDER, PROP_RESIZE_MODE, PROP_MEAN, PROP_STD, PROP_INPUT_SCALE, PROP_PROFILE,
  PROP_FUSION, PROP_FUSED, PROP_MODEL_TYPE, PROP_IOU_THRESHOLD, PROP_CLASS_AGNOSTIC_NMS,
  PROP_MAX_DETECTIONS, PROP_RESIZE_TYPE, PROP_PAD_VALUE, PROP_EXTRA_INPUTS,
  PROP_INFERENCE_REGION,          /* + object-class, reclassify-interval: gstm2iinferroi.c */
};

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
  gchar *extra = g_strdup (self->extra_inputs);
  mo.n_threads = self->props.n_threads;
  mo.decoder.type = self->model_type;
  mo.decoder.max_detections = self->max_detections;
  gboolean tensors = self->output == GST_M2I_INFER_OUTPUT_TENSORS;
  self->told_caps = FALSE;
  GST_OBJECT_UNLOCK (self);
  mo.device = device;
  mo.split_dir = split_dir;
  M2iInferModel *m = labels_option (labels, &mo, &err) ? m2i_infer_model_load (path, &mo, &err)
      : NULL;
  M2iInferSession *s = m ? m2i_infer_session_new (m, &err) : NULL;
  m2i_infer_model_unref (m);
  if (s && tensors && !(self->output_tensor_caps = gst_m2i_infer_output_caps (m, &err)))
    g_clear_pointer (&s, m2i_infer_session_free);
  /* the model's other inputs: given now, all of them for an image model */
  if (s && (!m2i_infer_session_set_extra_inputs (s, extra, &err)
          || (m2i_infer_model_get_input_kind (m, NULL, NULL) == M2I_INFER_INPUT_IMAGE
              && !m2i_infer_session_check_inputs (s, &err))))
    g_clear_pointer (&s, m2i_infer_session_free);
  if (s && !load_roi (self, s, tensors, &err))
    g_clear_pointer (&s, m2i_infer_session_free);
  if (!s) {
    /* settings (what to set) as they are; the model's troubles with its path */
    if (!path || g_error_matches (err, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT))
      GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS, ("%s: %s", GST_ELEMENT_NAME (self),
              err->message), ("model=%s device=%s", path ? path : "(none)",
              device ? device : DEFAULT_DEVICE));
    else
      GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ, ("%s: cannot use model %s: %s",
              GST_ELEMENT_NAME (self), path, err->message), ("device=%s",
              device ? device : DEFAULT_DEVICE));
    g_clear_error (&err);
  } else {
    gst_m2i_result_context_init (&self->ctx, s);
    GstCaps *with = gst_m2i_infer_model_caps (m, TRUE), *without = gst_m2i_infer_model_caps (m,
        FALSE);
    GST_OBJECT_LOCK (self);
    self->session = s;
    self->model = m;
    self->model_caps = with;
    self->model_caps_plain = without;
    self->pp_changed = TRUE;
    GST_OBJECT_UNLOCK (self);
    gchar *meta = m2i_model_info_describe (m2i_infer_model_get_info (m));
    GST_INFO_OBJECT (self, "model %s (%s) on %s: %s; decoder %s; takes %" GST_PTR_FORMAT
        "; its metadata:\n%s", path, m2i_infer_model_get_name (m),
        m2i_infer_model_get_device (m), m2i_infer_model_describe (m),
        m2i_decoder_describe (m2i_infer_session_get_decoder (s)), with, meta);
    g_free (meta);
    self->n_frames = self->since_flush = 0;
  }
  g_free (path);
  g_free (device);
  g_free (labels);
  g_free (split_dir);
  g_free (extra);
  return s != NULL;
}

static GstStateChangeReturn
gst_m2i_infer_change_state (GstElement *element, GstStateChange transition)
{
  GstM2iInfer *self = GST_M2I_INFER (element);
  if (transition == GST_STATE_CHANGE_READY_TO_PAUSED && !load_model (self))
    return GST_STATE_CHANGE_FAILURE;
  GstStateChangeReturn ret = GST_ELEMENT_CLASS (gst_m2i_infer_parent_class)->change_state (
      element, transition);
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
    dec.top_k = MIN (dec.top_k, MAX_TOP_K);
    ok = m2i_infer_session_set_preprocess (self->session, &pp, error);
  }
  GST_OBJECT_LOCK (self);
  if (ok) {
    gboolean same = !g_strcmp0 (text, self->settings);
    self->dec = dec;
    g_free (self->settings);
    self->settings = text;
    text = NULL;
    if (!same) {
      self->report = TRUE;        /* the fused text names them */
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
    ok = m2i_infer_session_run (self->session, &src, &f->ops, &f->letterbox, error);
    gst_buffer_unmap (f->source, &map);
  }
  guint serial;
  const char *desc = m2i_infer_session_describe (self->session, &serial);
  if (ok && (self->report || serial != self->reported)) {
    self->report = FALSE;
    self->reported = serial;
    GST_OBJECT_LOCK (self);
    gchar **lines = g_strsplit (self->settings ? self->settings : "", "\n", -1);
    GST_OBJECT_UNLOCK (self);
    gchar *settings = g_strjoinv ("; ", lines);
    g_strfreev (lines);
    gst_m2i_set_fused (GST_CAT_DEFAULT, GST_OBJECT (self), &self->props.fused,
        g_strdup_printf ("%s%s%s: %s; settings: %s", f->chain, f->chain[0] ? " + " : "",
            GST_ELEMENT_NAME (self), desc, settings));
    g_free (settings);
  }
  return ok;
}

/* output=meta with deferred input: the source video leaves the element
 * (renegotiated when it is not what the caps said: a chain that
 * materialised part of itself hands over another frame), with @inbuf's
 * timestamps. Consumes @inbuf. */
static GstFlowReturn
source_buffer (GstM2iInfer *self, GstBuffer *inbuf, GstBuffer **out)
{
  M2iImage src = self->work.source_image;
  GstM2iCapsFormat cf = gst_m2i_caps_format_from_m2i (src.format);
  gboolean same = self->src_is_video && GST_VIDEO_INFO_WIDTH (&self->src_vinfo) == src.width
      && GST_VIDEO_INFO_HEIGHT (&self->src_vinfo) == src.height
      && !g_strcmp0 (gst_video_format_to_string (GST_VIDEO_INFO_FORMAT (&self->src_vinfo)),
      gst_m2i_caps_format_name (cf));
  *out = gst_m2i_deferred_frame_take_source (&self->work, inbuf);
  if (same)
    return GST_FLOW_OK;
  GstStructure *s = gst_m2i_structure_new_sized (cf, src.width, src.height);
  gst_structure_set (s, "framerate", GST_TYPE_FRACTION, self->fps_n, self->fps_d, NULL);
  GST_INFO_OBJECT (self, "the chain's source frame is %s %dx%d: renegotiating",
      m2i_format_to_string (src.format), src.width, src.height);
  return gst_m2i_infer_push_src_caps (self, gst_caps_new_full (s, NULL)) ? GST_FLOW_OK
      : GST_FLOW_NOT_NEGOTIATED;
}

/* What one frame does, read at its start. */
typedef struct {
  guint64 index;                  /* since PAUSED */
  GstClockTime pts;
  gboolean infer;                 /* inference-interval says so */
  gboolean post, tensors;
  M2iDecoderOptions decoder;      /* threshold, top-k */
} Frame;

/* inference-region=roi-list: @inbuf (taken) with each region's results, as
 * *@out. */
static GstFlowReturn
roi_frame (GstM2iInfer *self, GstBuffer *inbuf, const Frame *fr, GstBuffer **out,
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
  if (*desc && (self->report || serial != self->reported)) {
    self->report = FALSE;
    self->reported = serial;
    gst_m2i_set_fused (GST_CAT_DEFAULT, GST_OBJECT (self), &self->props.fused,
        g_strdup_printf ("%s: %s", GST_ELEMENT_NAME (self), desc));
  }
  return GST_FLOW_OK;
}

static void
frame_settings (GstM2iInfer *self, GstBuffer *inbuf, Frame *fr)
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

/* The buffer that leaves for @inbuf (taken): the model's outputs
 * (output=tensors; none on frames not inferred), the chain's source video
 * (deferred input) or @inbuf itself. */
static GstFlowReturn
output_buffer (GstM2iInfer *self, GstBuffer *inbuf, const Frame *fr, GstBuffer **out,
    GError **error)
{
  GstFlowReturn ret = GST_FLOW_OK;
  if (fr->tensors && fr->infer && (ret = gst_m2i_tensors_from_session (self->session,
              self->output_tensor_caps, &self->tensor_pool, out, error)) == GST_FLOW_OK)
    gst_buffer_copy_into (*out, inbuf, GST_BUFFER_COPY_TIMESTAMPS, 0, -1);
  if (fr->tensors)
    gst_buffer_unref (inbuf);
  else if (self->mode == INPUT_DEFERRED)
    ret = source_buffer (self, inbuf, out);
  else
    *out = gst_buffer_make_writable (inbuf);
  return ret;
}

static GstFlowReturn
gst_m2i_infer_chain (GstPad *pad, GstObject *parent, GstBuffer *inbuf)
{
  GstM2iInfer *self = GST_M2I_INFER (parent);
  GError *err = NULL;
  GstBuffer *out = NULL;
  GstFlowReturn ret = GST_FLOW_ERROR;
  Frame fr;
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
  frame_settings (self, inbuf, &fr);
  if (self->roi)
    ret = roi_frame (self, g_steal_pointer (&inbuf), &fr, &out, &err);
  else if ((self->mode == INPUT_TENSORS || gst_m2i_deferred_frame_borrow (&self->work,
              &self->in_info, inbuf, &err)) && (!fr.infer || infer (self, inbuf, &fr.decoder, &err)))
    ret = output_buffer (self, g_steal_pointer (&inbuf), &fr, &out, &err);
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

/* ---- properties -------------------------------------------------------------------- */

static void
set_string (gchar **field, const GValue *value)
{
  g_free (*field);
  *field = g_value_dup_string (value);
}

/* The M2iInferSettingFlags bit of a shared pre-processing property. */
static guint
shared_setting (const GParamSpec *pspec)
{
  if (!strcmp (pspec->name, "channel-order"))
    return M2I_INFER_SET_CHANNEL_ORDER;
  if (!strcmp (pspec->name, "mean"))
    return M2I_INFER_SET_MEAN;
  if (!strcmp (pspec->name, "std"))
    return M2I_INFER_SET_STD;
  if (!strcmp (pspec->name, "input-scale"))
    return M2I_INFER_SET_INPUT_SCALE;
  return 0;
}

static void
gst_m2i_infer_set_property (GObject *object, guint prop_id, const GValue *value,
    GParamSpec *pspec)
{
  GstM2iInfer *self = GST_M2I_INFER (object);
  GST_OBJECT_LOCK (self);
  /* decoding and pre-processing: resolved again with the model's metadata */
  self->pp_changed = TRUE;
  switch (prop_id) {
    case PROP_MODEL: set_string (&self->model_path, value); break;
    case PROP_DEVICE: set_string (&self->device, value); break;
    case PROP_LABELS: set_string (&self->labels, value); break;
    case PROP_SPLIT_DIR: set_string (&self->split_dir, value); break;
    case PROP_EXTRA_INPUTS: set_string (&self->extra_inputs, value); break;
    case PROP_THRESHOLD:
      self->threshold = g_value_get_double (value);
      self->given |= M2I_INFER_SET_THRESHOLD;
      break;
    case PROP_IOU_THRESHOLD:
      self->iou_threshold = g_value_get_double (value);
      self->given |= M2I_INFER_SET_IOU_THRESHOLD;
      break;
    case PROP_CLASS_AGNOSTIC_NMS:
      self->class_agnostic = g_value_get_boolean (value);
      self->given |= M2I_INFER_SET_CLASS_AGNOSTIC;
      break;
    case PROP_TOP_K:
      self->top_k = g_value_get_uint (value);
      self->given |= M2I_INFER_SET_TOP_K;
      break;
    case PROP_MAX_DETECTIONS: self->max_detections = g_value_get_uint (value); break;
    case PROP_MODEL_TYPE: self->model_type = g_value_get_enum (value); break;
    case PROP_RESIZE_TYPE:
      self->resize_type = g_value_get_enum (value);
      if (self->resize_type == GST_M2I_INFER_RESIZE_AUTO)
        self->given &= ~M2I_INFER_SET_RESIZE_TYPE;
      else
        self->given |= M2I_INFER_SET_RESIZE_TYPE;
      break;
    case PROP_PAD_VALUE:
      self->pad_value = g_value_get_int (value);
      if (self->pad_value < 0)
        self->given &= ~M2I_INFER_SET_PAD_VALUE;
      else
        self->given |= M2I_INFER_SET_PAD_VALUE;
      break;
    case PROP_INFERENCE_INTERVAL: self->interval = g_value_get_uint (value); break;
    case PROP_OUTPUT: self->output = g_value_get_enum (value); break;
    case PROP_POST_MESSAGES: self->post_messages = g_value_get_boolean (value); break;
    case PROP_RESIZE_MODE: self->resize_mode = g_value_get_enum (value); break;
    default:
      if (gst_m2i_shared_props_set (&self->props, pspec, value, NULL))
        self->given |= shared_setting (pspec);
      else if (!gst_m2i_infer_roi_props_set (&self->roi_props, pspec, value))
        G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_m2i_infer_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  GstM2iInfer *self = GST_M2I_INFER (object);
  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_MODEL: g_value_set_string (value, self->model_path); break;
    case PROP_DEVICE: g_value_set_string (value, self->device); break;
    case PROP_LABELS: g_value_set_string (value, self->labels); break;
    case PROP_SPLIT_DIR: g_value_set_string (value, self->split_dir); break;
    case PROP_EXTRA_INPUTS: g_value_set_string (value, self->extra_inputs); break;
    case PROP_THRESHOLD: g_value_set_double (value, self->threshold); break;
    case PROP_IOU_THRESHOLD: g_value_set_double (value, self->iou_threshold); break;
    case PROP_CLASS_AGNOSTIC_NMS: g_value_set_boolean (value, self->class_agnostic); break;
    case PROP_TOP_K: g_value_set_uint (value, self->top_k); break;
    case PROP_MAX_DETECTIONS: g_value_set_uint (value, self->max_detections); break;
    case PROP_MODEL_TYPE: g_value_set_enum (value, self->model_type); break;
    case PROP_RESIZE_TYPE: g_value_set_enum (value, self->resize_type); break;
    case PROP_PAD_VALUE: g_value_set_int (value, self->pad_value); break;
    case PROP_INFERENCE_INTERVAL: g_value_set_uint (value, self->interval); break;
    case PROP_OUTPUT: g_value_set_enum (value, self->output); break;
    case PROP_POST_MESSAGES: g_value_set_boolean (value, self->post_messages); break;
    case PROP_RESIZE_MODE: g_value_set_enum (value, self->resize_mode); break;
    default:
      if (!gst_m2i_shared_props_get (&self->props, pspec, value)
          && !gst_m2i_infer_roi_props_get (&self->roi_props, pspec, value))
        G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
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
  gst_m2i_shared_props_clear (&self->props);
  gst_m2i_infer_roi_props_clear (&self->roi_props);
  G_OBJECT_CLASS (gst_m2i_infer_parent_class)->finalize (object);
}

static void
gst_m2i_infer_class_init (GstM2iInferClass *klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GParamFlags ready = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY;
  GParamFlags playing = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING;

  gobject_class->set_property = gst_m2i_infer_set_property;
  gobject_class->get_property = gst_m2i_infer_get_property;
  gobject_class->finalize = gst_m2i_infer_finalize;
  element_class->change_state = GST_DEBUG_FUNCPTR (gst_m2i_infer_change_state);

  g_object_class_install_property (gobject_class, PROP_MODEL,
      g_param_spec_string ("model", "Model", "Path to an OpenVINO IR model (.xml, IR v10 or "
          "v11; its .bin beside it). Loaded when the element goes to PAUSED; a missing or "
          "malformed model fails that state change with the reader's message", NULL, ready));
  g_object_class_install_property (gobject_class, PROP_DEVICE,
      g_param_spec_string ("device", "Device", "Where the model runs: \"CPU\" (the IR "
          "runtime), \"M2I\" (the device alone), \"HETERO:M2I,CPU\" (split between the "
          "device and the CPU, first listed first: m2i-core/split) or \"AUTO\" (the best that "
          "works: HETERO:M2I,CPU when the model splits, else CPU). A split plan that lowers "
          "the model's PrePostProcessor head to the M2I block makes m2iinfer plan the head's "
          "own ops", DEFAULT_DEVICE, ready));
  g_object_class_install_property (gobject_class, PROP_LABELS,
      g_param_spec_string ("labels", "Labels", "Class names: a file (one label a line, line "
          "1 = class 0, e.g. models/fashion-mnist/labels.txt; or a JSON / Python list or "
          "dict, or YAML-like \"- name\" lines) or the list itself, e.g. "
          "labels=\"[cat, dog]\" or \"{0: cat, 1: dog}\". Without it the model's own "
          "(rt_info model_info/labels, Ultralytics' framework/names), else \"class-<id>\"",
          NULL, ready));
  g_object_class_install_property (gobject_class, PROP_MODEL_TYPE,
      g_param_spec_enum ("model-type", "Model type", "How the outputs are decoded (see "
          "docs/m2iinfer.md, \"Model types\"): auto recognises it from the model's metadata "
          "(model_info/model_type, framework/task), else from its outputs' shapes",
          GST_TYPE_M2I_MODEL_TYPE, DEFAULT_MODEL_TYPE, ready));
  g_object_class_install_property (gobject_class, PROP_THRESHOLD,
      g_param_spec_double ("threshold", "Threshold", "Smallest confidence of a detection "
          "(or of a multi-label class) to report; classifiers always report their top-k "
          "classes. Unset: the model's model_info/confidence_threshold, else 0.5",
          0.0, 1.0, DEFAULT_THRESHOLD, playing));
  g_object_class_install_property (gobject_class, PROP_IOU_THRESHOLD,
      g_param_spec_double ("iou-threshold", "IoU threshold", "Non-maximum suppression: a box "
          "overlapping a better one of its class by more (intersection over union) is "
          "dropped. Unset: the model's model_info/iou_threshold, else 0.5",
          0.0, 1.0, DEFAULT_IOU_THRESHOLD, playing));
  g_object_class_install_property (gobject_class, PROP_CLASS_AGNOSTIC_NMS,
      g_param_spec_boolean ("class-agnostic-nms", "Class-agnostic NMS", "Suppress "
          "overlapping boxes across classes instead of within each class. Unset: the model's "
          "model_info/agnostic_nms, else false", DEFAULT_CLASS_AGNOSTIC, playing));
  g_object_class_install_property (gobject_class, PROP_MAX_DETECTIONS,
      g_param_spec_uint ("max-detections", "Max detections", "Most detections reported per "
          "frame, the best first", 1, MAX_DETECTIONS, DEFAULT_MAX_DETECTIONS, ready));
  g_object_class_install_property (gobject_class, PROP_TOP_K,
      g_param_spec_uint ("top-k", "Top k", "Classes reported per frame by a classifier, best "
          "first (the region meta's label is the best; with k > 1 its structure and the "
          "message also list top_labels/top_label_ids/top_confidences). Unset: the model's "
          "model_info/topk, else 1", 1, MAX_TOP_K, DEFAULT_TOP_K, playing));
  g_object_class_install_property (gobject_class, PROP_RESIZE_TYPE,
      g_param_spec_enum ("resize-type", "Resize type", "How m2iinfer fits a frame of "
          "another aspect ratio to the model's size: stretched (standard), scaled to fit at "
          "the top left (fit-to-window) or centred as Ultralytics' LetterBox (letterbox), "
          "padded with pad-value; or its centre cut to the model's aspect (crop). auto: the "
          "model's model_info/resize_type (an Ultralytics export: letterbox), else standard",
          GST_TYPE_M2I_INFER_RESIZE_TYPE, DEFAULT_RESIZE_TYPE, playing));
  g_object_class_install_property (gobject_class, PROP_PAD_VALUE,
      g_param_spec_int ("pad-value", "Pad value", "Pixel value of the padding of "
          "fit-to-window and letterbox, before the normalisation; -1: the model's "
          "model_info/pad_value (an Ultralytics export: 114), else 0", -1, 255,
          DEFAULT_PAD_VALUE, playing));
  g_object_class_install_property (gobject_class, PROP_EXTRA_INPUTS,
      g_param_spec_string ("extra-inputs", "Extra inputs", "Values of the model's inputs "
          "other than the image, set once at READY->PAUSED: \"name=v1,v2,...;name2=@file\" "
          "(one number for every element or one per element, converted to the input's "
          "type; or a raw little-endian file of exactly the input's bytes). A model whose "
          "other inputs are not all given is refused with their names", NULL, ready));
  g_object_class_install_property (gobject_class, PROP_INFERENCE_INTERVAL,
      g_param_spec_uint ("inference-interval", "Inference interval", "Run the model on every "
          "N-th frame (1 = all): frames 0, N, 2N, ... since PAUSED or the last flushing "
          "seek. Other frames pass through without results or pre-processing (output=meta) "
          "or produce nothing (output=tensors)", 1, G_MAXUINT, DEFAULT_INTERVAL, playing));
  gst_m2i_install_n_threads (gobject_class, PROP_N_THREADS, "Threads of the process-wide "
      "worker pool used per inference and per M2I task (row slices); 0 = one per CPU core",
      ready);
  g_object_class_install_property (gobject_class, PROP_SPLIT_DIR,
      g_param_spec_string ("split-dir", "Split directory", "With device M2I, HETERO or AUTO "
          "(when it splits): write the split plan (AutoSplit's graph_infos.json and one IR "
          "pair per piece) into this folder when the model is loaded; a folder that cannot be "
          "written fails that state change", NULL, ready));
  g_object_class_install_property (gobject_class, PROP_OUTPUT,
      g_param_spec_enum ("output", "Output", "What leaves the element: the frame with "
          "result metas, or the model's outputs as other/tensors", GST_TYPE_M2I_INFER_OUTPUT,
          DEFAULT_OUTPUT, ready));
  g_object_class_install_property (gobject_class, PROP_POST_MESSAGES,
      g_param_spec_boolean ("post-messages", "Post messages", "Post an element message "
          "\"m2iinfer\" with the results of every inferred frame (frame, timestamp, model, "
          "label/label_id/confidence or objects); gst-launch-1.0 -m prints them",
          DEFAULT_POST_MESSAGES, playing));
  gst_m2i_install_channel_order (gobject_class, PROP_CHANNEL_ORDER, "Channel order of the "
      "model's input tensor (OpenVINO model zoo models take bgr). Applied to whatever "
      "arrives: csc output order for YUV, plane order otherwise", playing);
  g_object_class_install_property (gobject_class, PROP_RESIZE_MODE,
      g_param_spec_enum ("resize-mode", "Resize mode", "Interpolation when m2iinfer resizes "
          "frames to the model's size itself (half_pixel coordinates)",
          GST_TYPE_M2I_RESIZE_MODE, DEFAULT_RESIZE_MODE, playing));
  gst_m2i_install_mean (gobject_class, PROP_MEAN, "Per-channel mean m2iinfer subtracts "
      "when it converts pixels itself (video input, or a deferred chain that ends in u8 "
      "pixels), in units of pixel * input-scale, model channel order; 1 value or 3, e.g. "
      "mean=\"<0.485, 0.456, 0.406>\" (default <0, 0, 0>); any other count is refused "
      "with an error. Tensor input is used as is", playing);
  gst_m2i_install_std (gobject_class, PROP_STD, "Per-channel divisor, same units and order "
      "as mean, positive (default <1, 1, 1>)", playing);
  gst_m2i_install_input_scale (gobject_class, PROP_INPUT_SCALE, "Factor on pixel values "
      "before mean is subtracted, e.g. 0.00392156862745098 (1/255)", playing);
  gst_m2i_install_profile (gobject_class, PROP_PROFILE, "The M2I profile m2iinfer plans the "
      "pre-processing with (the whole fused chain's): default is the seed's block "
      "(fp16 output, widened to the model's f32 input); extended fuses norm and writes "
      "the model's f32 input directly when m2iinfer converts pixels itself", playing);
  gst_m2i_install_fusion (gobject_class, PROP_FUSION, "Take deferred frames (memory:M2I) "
      "from an adjacent m2i element, so the chain's pre-processing and the model's run as "
      "one M2I plan into the model's input; false: upstream computes real pixels", ready);
  gst_m2i_install_fused (gobject_class, PROP_FUSED, "What ran for the last frames: the "
      "elements whose ops were fused, the M2I plan (ops and device tasks) writing the "
      "model's input, and the device the model runs on");

  gst_m2i_infer_roi_install_properties (gobject_class, PROP_INFERENCE_REGION);

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
  gst_element_add_pad (GST_ELEMENT (self), self->srcpad);

  self->device = g_strdup (DEFAULT_DEVICE);
  self->threshold = DEFAULT_THRESHOLD;
  self->iou_threshold = DEFAULT_IOU_THRESHOLD;
  self->class_agnostic = DEFAULT_CLASS_AGNOSTIC;
  self->max_detections = DEFAULT_MAX_DETECTIONS;
  self->model_type = DEFAULT_MODEL_TYPE;
  self->resize_type = DEFAULT_RESIZE_TYPE;
  self->pad_value = DEFAULT_PAD_VALUE;
  self->top_k = DEFAULT_TOP_K;
  m2i_decoder_options_init (&self->dec);
  self->pp_changed = TRUE;
  self->interval = DEFAULT_INTERVAL;
  self->output = DEFAULT_OUTPUT;
  self->post_messages = DEFAULT_POST_MESSAGES;
  self->resize_mode = DEFAULT_RESIZE_MODE;
  gst_m2i_shared_props_init (&self->props);
  gst_m2i_infer_roi_props_init (&self->roi_props);
  gst_m2i_deferred_frame_init (&self->work);
  self->report = TRUE;
}
