/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gstm2iinferpads.c — m2iinfer's caps negotiation, pad queries and events
 * (see gstm2iinfer-private.h): what the sink pad takes comes from the model
 * (gstm2iinfercaps.c); caps that do not fit are refused with a message
 * saying what would. */
#include "gstm2iinfer-private.h"

#include <m2i-core/base/m2i-error.h>

GST_DEBUG_CATEGORY_EXTERN (gst_m2i_infer_debug);
#define GST_CAT_DEFAULT gst_m2i_infer_debug

static gboolean
refuse_caps (GstM2iInfer *self, const char *fmt, ...) G_GNUC_PRINTF (2, 3);

static gboolean
refuse_caps (GstM2iInfer *self, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  gchar *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  gchar *text = g_strdup_printf ("%s: %s", GST_ELEMENT_NAME (self), msg);
  gst_m2i_caps_refuse_once (GST_ELEMENT (self), &self->caps_refused, text, NULL);
  g_free (text);
  g_free (msg);
  return FALSE;
}

/* Deferred frames taken: fusion=true, and full frames (roi-list crops the
 * frame the regions refer to). */
static gboolean
fusion_on (GstM2iInfer *self)
{
  GST_OBJECT_LOCK (self);
  gboolean f = self->props.fusion;
  GST_OBJECT_UNLOCK (self);
  return f && !gst_m2i_infer_roi_list (self);
}

/* What the sink pad takes now: the model's caps (or the template before the
 * model is loaded). With output=meta, plain input passes downstream as it
 * is, so downstream's caps restrict it too. */
static GstCaps *
sink_caps (GstM2iInfer *self, GstCaps *filter)
{
  gboolean fusion = fusion_on (self);
  GST_OBJECT_LOCK (self);
  GstCaps *mc = fusion ? self->model_caps : self->model_caps_plain;
  GstCaps *caps = mc ? gst_caps_ref (mc) : NULL;
  gboolean meta = self->output == GST_M2I_INFER_OUTPUT_META;
  GST_OBJECT_UNLOCK (self);
  if (!caps)
    caps = gst_m2i_caps_keep_deferred (gst_pad_get_pad_template_caps (self->sinkpad), fusion);
  if (gst_m2i_infer_roi_list (self))
    caps = gst_m2i_infer_roi_restrict_caps (caps);
  GstCaps *peer = meta ? gst_pad_peer_query_caps (self->srcpad, NULL) : NULL;
  if (peer)
    caps = gst_m2i_infer_restrict_plain (caps, peer);
  if (filter) {
    GstCaps *tmp = gst_caps_intersect_full (caps, filter, GST_CAPS_INTERSECT_FIRST);
    gst_caps_unref (caps);
    caps = tmp;
  }
  return caps;
}

gboolean
gst_m2i_infer_push_src_caps (GstM2iInfer *self, GstCaps *caps)
{
  self->src_is_video = FALSE;
  if (gst_structure_has_name (gst_caps_get_structure (caps, 0), "video/x-raw"))
    self->src_is_video = gst_video_info_from_caps (&self->src_vinfo, caps);
  GST_DEBUG_OBJECT (self, "src caps %" GST_PTR_FORMAT, caps);
  gboolean ok = gst_pad_push_event (self->srcpad, gst_event_new_caps (caps));
  gst_caps_unref (caps);
  return ok;
}

/* Sets up the input mode for @caps; FALSE (error posted) when they do not
 * fit the model. */
static gboolean
setup_input (GstM2iInfer *self, GstCaps *caps)
{
  GError *err = NULL;
  M2iInferInputKind kind = m2i_infer_model_get_input_kind (self->model, NULL, NULL);
  /* Plain tensors are checked one by one (any mix of f16 and f32 for float
   * inputs, which the caps query cannot list); the rest must be what the
   * caps query offers. */
  if (gst_m2i_infer_takes_tensors (self->model, caps)) {
    self->n_in_tensors = gst_m2i_infer_tensor_input (self->model, gst_caps_get_structure (caps,
            0), self->in_tensor_type, self->in_tensor_bytes, &err);
    self->mode = self->n_in_tensors ? INPUT_TENSORS : INPUT_NONE;
  } else {
    GstCaps *accepted = sink_caps (self, NULL);
    if (!gst_caps_is_subset (caps, accepted))
      gst_m2i_infer_caps_refusal (self->model, caps, fusion_on (self), &err);
    else if (gst_m2i_caps_info_from_caps (&self->in_info, caps, &err)
        && gst_m2i_caps_info_check_even (&self->in_info, "input", &err))
      self->mode = gst_m2i_caps_is_deferred (caps, 0) ? INPUT_DEFERRED
          : kind == M2I_INFER_INPUT_IMAGE ? INPUT_VIDEO : INPUT_PLANES;
    gst_caps_unref (accepted);
  }
  if ((self->mode == INPUT_DEFERRED || self->mode == INPUT_VIDEO)
      && !gst_m2i_infer_update_preprocess (self, &err))
    self->mode = INPUT_NONE;
  if (err) {
    refuse_caps (self, "%s", err->message);
    g_clear_error (&err);
  }
  return self->mode != INPUT_NONE;
}

static gboolean
set_sink_caps (GstM2iInfer *self, GstCaps *caps)
{
  gst_m2i_infer_clear_negotiated (self);
  if (!self->model)
    return refuse_caps (self, "no model loaded (the element is not PAUSED yet)");
  GST_OBJECT_LOCK (self);
  self->pp_changed = TRUE;      /* (a refused mean is refused again) */
  GstM2iInferOutput output = self->output;
  GST_OBJECT_UNLOCK (self);
  if (!setup_input (self, caps))
    return FALSE;
  if (self->mode == INPUT_TENSORS && !self->session) {
    /* tensors run synchronously, on a session of their own */
    GError *err = NULL;
    M2iInferSession *s = m2i_infer_session_new (self->model, &err);
    if (!s) {
      refuse_caps (self, "%s", err->message);
      g_clear_error (&err);
      return FALSE;
    }
    GST_OBJECT_LOCK (self);
    self->session = s;
    GST_OBJECT_UNLOCK (self);
  }
  gst_structure_get_fraction (gst_caps_get_structure (caps, 0), "framerate", &self->fps_n,
      &self->fps_d);
  self->ctx.has_frame = self->mode != INPUT_TENSORS
      || m2i_infer_model_get_input_kind (self->model, NULL, NULL) == M2I_INFER_INPUT_IMAGE;
  GstCaps *out;
  if (output == GST_M2I_INFER_OUTPUT_TENSORS) {
    out = gst_caps_copy (self->output_tensor_caps);
    gst_caps_set_simple (out, "framerate", GST_TYPE_FRACTION, self->fps_n, self->fps_d, NULL);
  } else if (self->mode == INPUT_DEFERRED) {
    out = gst_m2i_chain_source_caps (self->sinkpad);
    if (!out)
      return refuse_caps (self, "cannot find the video the m2i chain upstream started from");
  } else {
    out = gst_caps_ref (caps);
  }
  GST_DEBUG_OBJECT (self, "sink caps %" GST_PTR_FORMAT " (mode %d)", caps, self->mode);
  /* Say why when downstream refuses them: otherwise the stream just stops
   * with "not-negotiated". */
  if (gst_pad_is_linked (self->srcpad) && !gst_pad_peer_query_accept_caps (self->srcpad, out)) {
    gchar *str = gst_caps_to_string (out);
    gst_caps_unref (out);
    gst_m2i_infer_clear_negotiated (self);
    gboolean tensors = output == GST_M2I_INFER_OUTPUT_TENSORS;
    refuse_caps (self, "downstream does not accept %s (%s): link an element that takes them, "
        "or set %s", str, tensors ? "the model's outputs, output=tensors" : "the frames "
        "m2iinfer passes on, output=meta", tensors ? "output=meta to pass the frames on"
        : "output=tensors to push the model's outputs instead");
    g_free (str);
    return FALSE;
  }
  g_clear_pointer (&self->caps_refused, g_free);
  return gst_m2i_infer_push_src_caps (self, out);
}

/* An upstream whose every possible video (@filter: the caps query's
 * filter, in system memory) is none the model takes is about to fail with
 * a bare not-negotiated: say what the model needs and what to put in front
 * (once per PAUSED). Filters with anything else (tensors, ANY, deferred
 * frames) are left alone. */
static void
explain_empty_caps (GstM2iInfer *self, GstCaps *filter)
{
  if (gst_caps_is_any (filter) || gst_caps_is_empty (filter))
    return;
  for (guint i = 0; i < gst_caps_get_size (filter); i++)
    if (!gst_structure_has_name (gst_caps_get_structure (filter, i), "video/x-raw")
        || gst_m2i_caps_is_deferred (filter, i))
      return;
  GST_OBJECT_LOCK (self);
  M2iInferModel *m = self->model ? m2i_infer_model_ref (self->model) : NULL;
  gboolean told = self->told_caps;
  self->told_caps = TRUE;
  GST_OBJECT_UNLOCK (self);
  if (m && !told) {
    GError *err = NULL;
    GstCaps *one = gst_caps_copy_nth (filter, 0);
    gst_m2i_infer_caps_refusal (m, one, fusion_on (self), &err);
    refuse_caps (self, "%s", err->message);
    g_error_free (err);
    gst_caps_unref (one);
  }
  m2i_infer_model_unref (m);
}

/* ---- pads: queries and events -------------------------------------------- */

gboolean
gst_m2i_infer_sink_query (GstPad *pad, GstObject *parent, GstQuery *query)
{
  GstM2iInfer *self = GST_M2I_INFER (parent);
  if (gst_m2i_query_is_neighbour (query)) {
    gst_m2i_neighbour_query_answer (query, pad, fusion_on (self));
    return TRUE;
  }
  switch (GST_QUERY_TYPE (query)) {
    case GST_QUERY_ACCEPT_CAPS: {
      /* Any video or tensors (deferred frames only with fusion): caps that
       * do not fit the model are refused when they arrive, with a message
       * saying why and what to put in front. */
      GstCaps *caps;
      gst_query_parse_accept_caps (query, &caps);
      gboolean ok = gst_caps_get_size (caps) > 0;
      for (guint i = 0; ok && i < gst_caps_get_size (caps); i++) {
        const GstStructure *s = gst_caps_get_structure (caps, i);
        ok = (gst_structure_has_name (s, "video/x-raw")
            || gst_structure_has_name (s, "other/tensors"))
            && (!gst_m2i_caps_is_deferred (caps, i) || fusion_on (self));
      }
      gst_query_set_accept_caps_result (query, ok);
      return TRUE;
    }
    case GST_QUERY_CAPS: {
      GstCaps *filter, *caps;
      gst_query_parse_caps (query, &filter);
      caps = sink_caps (self, filter);
      if (gst_caps_is_empty (caps) && filter)
        explain_empty_caps (self, filter);
      gst_query_set_caps_result (query, caps);
      gst_caps_unref (caps);
      return TRUE;
    }
    case GST_QUERY_ALLOCATION: {
      GstCaps *caps = NULL;
      gst_query_parse_allocation (query, &caps, NULL);
      if (!caps || gst_m2i_caps_is_deferred (caps, 0))
        return TRUE;            /* the m2i element upstream uses its own pool */
      GST_OBJECT_LOCK (self);
      gboolean meta = self->output == GST_M2I_INFER_OUTPUT_META;
      GST_OBJECT_UNLOCK (self);
      /* output=meta: the buffer goes on downstream, which decides. */
      if (meta && gst_pad_peer_query (self->srcpad, query))
        return TRUE;
      /* We read any strides. */
      if (gst_structure_has_name (gst_caps_get_structure (caps, 0), "video/x-raw"))
        gst_query_add_allocation_meta (query, GST_VIDEO_META_API_TYPE, NULL);
      return TRUE;
    }
    default:
      return gst_pad_query_default (pad, parent, query);
  }
}

gboolean
gst_m2i_infer_sink_event (GstPad *pad, GstObject *parent, GstEvent *event)
{
  GstM2iInfer *self = GST_M2I_INFER (parent);
  gboolean handled, ret = gst_m2i_infer_async_sink_event (self, event, &handled);
  if (handled)
    return ret;
  if (GST_EVENT_TYPE (event) == GST_EVENT_CAPS) {
    GstCaps *caps;
    gst_event_parse_caps (event, &caps);
    gboolean ok = set_sink_caps (self, caps);
    gst_event_unref (event);
    return ok;
  }
  if (GST_EVENT_TYPE (event) == GST_EVENT_FLUSH_STOP) {
    self->since_flush = 0;        /* streaming thread stopped: no race with chain */
    if (self->roi)
      gst_m2i_infer_roi_reset (self->roi);
  }
  return gst_pad_event_default (pad, parent, event);
}
