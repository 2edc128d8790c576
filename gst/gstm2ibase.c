/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gstm2ibase.c — the common part of the m2i elements, see gstm2ibase.h. */
#include "gstm2ibase.h"
#include "gstm2ienums.h"
#include "gstm2iprops.h"

#include <m2i-core/base/m2i-error.h>
#include <gst/video/gstvideopool.h>
#include <string.h>

GST_DEBUG_CATEGORY_STATIC (gst_m2i_base_debug);
#define GST_CAT_DEFAULT gst_m2i_base_debug

enum {
  PROP_0,
  PROP_PROFILE,
  PROP_N_THREADS,
  PROP_FUSION,
  PROP_FUSED,
};

typedef struct {
  /* properties (object lock): profile, n-threads, fusion, fused */
  GstM2iSharedProps props;
  /* negotiated state (streaming thread) */
  GstM2iCapsInfo in_info, out_info;
  gchar *neighbour;
  M2iPlanCache *cache;             /* the chain up to and including this element */
  M2iPlanCache *split_cache;       /* materialising upstream ops before a split */
  GstBufferPool *split_pool;
  gsize split_size;
  gboolean report;                 /* describe what was fused on the next frame */
  M2iOpList reported_ops;
  GstM2iDeferredFrame work;        /* per-frame scratch; holds no references */
  gchar *refused;                  /* the caps refusal last posted, until caps are accepted */
} GstM2iBasePrivate;

G_DEFINE_ABSTRACT_TYPE_WITH_CODE (GstM2iBase, gst_m2i_base, GST_TYPE_BASE_TRANSFORM,
    G_ADD_PRIVATE (GstM2iBase)
    GST_DEBUG_CATEGORY_INIT (gst_m2i_base_debug, "m2ibase", 0, "m2i elements"));

#define PRIV(self) ((GstM2iBasePrivate *) gst_m2i_base_get_instance_private (self))

/* ---- properties ---------------------------------------------------------- */

void
gst_m2i_base_get_plan_options (GstM2iBase *self, M2iPlanOptions *opts)
{
  GstM2iBasePrivate *priv = PRIV (self);
  m2i_plan_options_init (opts);
  GST_OBJECT_LOCK (self);
  opts->profile = priv->props.profile;
  opts->n_threads = (gint) priv->props.n_threads;
  GST_OBJECT_UNLOCK (self);
}

static gboolean
get_fusion (GstM2iBase *self)
{
  GST_OBJECT_LOCK (self);
  gboolean f = PRIV (self)->props.fusion;
  GST_OBJECT_UNLOCK (self);
  return f;
}

void
gst_m2i_base_reconfigure (GstM2iBase *self)
{
  gst_base_transform_reconfigure_sink (GST_BASE_TRANSFORM (self));
  gst_base_transform_reconfigure_src (GST_BASE_TRANSFORM (self));
}

static void
set_fused (GstM2iBase *self, gchar *text)
{
  gst_m2i_set_fused (GST_CAT_DEFAULT, GST_OBJECT (self), &PRIV (self)->props.fused, text);
}

static void
gst_m2i_base_set_property (GObject *object, guint prop_id, const GValue *value,
    GParamSpec *pspec)
{
  GstM2iBase *self = GST_M2I_BASE (object);
  gboolean changed = FALSE;
  GST_OBJECT_LOCK (self);
  if (!gst_m2i_shared_props_set (&PRIV (self)->props, pspec, value, &changed))
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
  GST_OBJECT_UNLOCK (self);
  /* a profile or fusion change changes the caps */
  if (changed && prop_id != PROP_N_THREADS)
    gst_m2i_base_reconfigure (self);
}

static void
gst_m2i_base_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  GstM2iBase *self = GST_M2I_BASE (object);
  GST_OBJECT_LOCK (self);
  if (!gst_m2i_shared_props_get (&PRIV (self)->props, pspec, value))
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
  GST_OBJECT_UNLOCK (self);
}

/* ---- caps ------------------------------------------------------------------ */

static void
range_value (GValue *v)
{
  g_value_init (v, GST_TYPE_INT_RANGE);
  gst_value_set_int_range (v, 1, GST_M2I_MAX_SIZE);
}

/* Appends to @res the structures @self can make on the other side from
 * structure @i of @caps; returns @res. */
static GstCaps *
transform_structure (GstM2iBase *self, GstPadDirection direction, const GstCaps *caps,
    guint i, gboolean deferred_ok, GstCaps *res)
{
  GstM2iBaseClass *klass = GST_M2I_BASE_GET_CLASS (self);
  const GstStructure *s = gst_caps_get_structure (caps, i);
  guint mask = gst_m2i_structure_formats (s);
  const GValue *fr = gst_structure_get_value (s, "framerate");
  const GValue *par = gst_structure_get_value (s, "pixel-aspect-ratio");
  for (guint cf = 0; cf < GST_M2I_CF_COUNT; cf++) {
    if (!(mask & GST_M2I_CF_BIT (cf)))
      continue;
    if (direction == GST_PAD_SINK && !(klass->input_formats & GST_M2I_CF_BIT (cf)))
      continue;
    GstM2iCapsFormat list[GST_M2I_CF_COUNT];
    guint n = direction == GST_PAD_SINK ? klass->outputs_for_input (self, cf, list)
        : klass->inputs_for_output (self, cf, list);
    GValue w = G_VALUE_INIT, h = G_VALUE_INIT;
    if (klass->size_rule == GST_M2I_SIZE_SAME) {
      gst_m2i_structure_size (s, cf, &w, &h);
    } else {
      range_value (&w);
      range_value (&h);
    }
    for (guint j = 0; j < n; j++) {
      GstM2iCapsFormat o = list[j];
      gboolean video_both = !gst_m2i_caps_format_is_tensor (cf)
          && !gst_m2i_caps_format_is_tensor (o);
      const GValue *opar = klass->size_rule == GST_M2I_SIZE_SAME && video_both ? par : NULL;
      GstStructure *st = gst_m2i_structure_new (o, &w, &h, fr, opar);
      if (deferred_ok)
        res = gst_caps_merge_structure_full (res, gst_structure_copy (st),
            gst_caps_features_new (GST_CAPS_FEATURE_MEMORY_M2I, NULL));
      res = gst_caps_merge_structure_full (res, st, NULL);
    }
    g_value_unset (&w);
    g_value_unset (&h);
  }
  return res;
}

static GstCaps *
gst_m2i_base_transform_caps (GstBaseTransform *trans, GstPadDirection direction,
    GstCaps *caps, GstCaps *filter)
{
  GstM2iBase *self = GST_M2I_BASE (trans);
  GstM2iBaseClass *klass = GST_M2I_BASE_GET_CLASS (self);
  gboolean fusion = get_fusion (self);
  GstCaps *res;
  if (gst_caps_is_any (caps)) {
    GstPad *other = direction == GST_PAD_SINK ? trans->srcpad : trans->sinkpad;
    res = gst_pad_get_pad_template_caps (other);
  } else {
    /* Deferred frames leave on the source pad only towards an m2i neighbour,
     * and enter on the sink pad only when fusion is on. */
    gboolean deferred_ok = fusion && (direction == GST_PAD_SINK
        ? gst_m2i_pad_peer_takes_deferred (trans->srcpad, NULL) : klass->takes_deferred);
    gboolean takes_deferred = fusion && klass->takes_deferred;
    res = gst_caps_new_empty ();
    for (guint i = 0; i < gst_caps_get_size (caps); i++) {
      if (direction == GST_PAD_SINK && gst_m2i_caps_is_deferred (caps, i) && !takes_deferred)
        continue;
      res = transform_structure (self, direction, caps, i, deferred_ok, res);
    }
  }
  if (filter) {
    /* Our order first: it follows the order of @caps, so a chain of m2i
     * elements ranks formats as the element at its end does. */
    GstCaps *tmp = gst_caps_intersect_full (res, filter, GST_CAPS_INTERSECT_FIRST);
    gst_caps_unref (res);
    res = tmp;
  }
  GST_LOG_OBJECT (self, "%s %" GST_PTR_FORMAT " -> %" GST_PTR_FORMAT,
      direction == GST_PAD_SINK ? "sink" : "src", caps, res);
  return res;
}

static void
set_fraction_nearest (GstStructure *s, const char *field, gint n, gint d)
{
  if (!gst_structure_has_field (s, field))
    gst_structure_set (s, field, GST_TYPE_FRACTION, n, d, NULL);
  else
    gst_structure_fixate_field_nearest_fraction (s, field, n, d);
}

/* Fixes structure @s for caps format @cf given the fixed input @in (caps
 * @in_caps). */
static void
fixate_structure (GstM2iBase *self, const GstM2iCapsInfo *in, const GstCaps *in_caps,
    GstStructure *s, GstM2iCapsFormat cf)
{
  GstM2iBaseClass *klass = GST_M2I_BASE_GET_CLASS (self);
  gboolean tensor = gst_m2i_caps_format_is_tensor (cf);
  gint w = in->width, h = in->height;
  if (klass->size_rule == GST_M2I_SIZE_ANY)
    klass->fixate_size (self, in, s, cf, &w, &h);
  if (tensor) {
    /* Keep the spelling of the dimensions downstream chose ("224:224:3" or
     * "224:224:3:1") when it names this size. */
    GValue wv = G_VALUE_INIT, hv = G_VALUE_INIT;
    gboolean same = gst_structure_has_field (s, "dimensions")
        && gst_m2i_structure_size (s, cf, &wv, &hv) && G_VALUE_HOLDS_INT (&wv)
        && G_VALUE_HOLDS_INT (&hv) && g_value_get_int (&wv) == w && g_value_get_int (&hv) == h;
    if (G_IS_VALUE (&wv))
      g_value_unset (&wv);
    if (G_IS_VALUE (&hv))
      g_value_unset (&hv);
    if (!same) {
      GValue dims = G_VALUE_INIT;
      gst_m2i_tensor_dims_value (cf, w, h, &dims);
      gst_structure_take_value (s, "dimensions", &dims);
    }
    gst_structure_fixate_field (s, "dimensions");
    gst_structure_set (s, "types", G_TYPE_STRING, gst_m2i_caps_format_name (cf),
        "format", G_TYPE_STRING, "static", "num_tensors", G_TYPE_INT, 1, NULL);
  } else {
    gst_structure_set (s, "format", G_TYPE_STRING, gst_m2i_caps_format_name (cf),
        "width", G_TYPE_INT, w, "height", G_TYPE_INT, h, NULL);
    /* Keep the display aspect ratio unless letterboxing keeps the picture's. */
    gint pn = 1, pd = 1;
    if (!gst_m2i_caps_format_is_tensor (in->cf)) {
      pn = GST_VIDEO_INFO_PAR_N (&in->vinfo);
      pd = GST_VIDEO_INFO_PAR_D (&in->vinfo);
    }
    gboolean resized = w != in->width || h != in->height;
    if (klass->size_rule == GST_M2I_SIZE_ANY && resized) {
      gint a, b;
      if (gst_util_fraction_multiply (in->width * pn, in->height * pd, h, w, &a, &b)) {
        pn = a;
        pd = b;
      }
    }
    /* Say nothing when the input said nothing and nothing changes it, so that
     * equal caps allow passthrough. */
    gboolean in_par = !gst_m2i_caps_format_is_tensor (in->cf)
        && gst_structure_has_field (gst_caps_get_structure (in_caps, 0), "pixel-aspect-ratio");
    if (in_par || resized || gst_structure_has_field (s, "pixel-aspect-ratio"))
      set_fraction_nearest (s, "pixel-aspect-ratio", pn, pd);
  }
  set_fraction_nearest (s, "framerate", in->fps_n, in->fps_d);
  gst_structure_fixate (s);
}

static GstCaps *
gst_m2i_base_fixate_caps (GstBaseTransform *trans, GstPadDirection direction, GstCaps *caps,
    GstCaps *othercaps)
{
  GstM2iBase *self = GST_M2I_BASE (trans);
  GstM2iCapsInfo in;
  if (direction != GST_PAD_SINK || !gst_m2i_caps_info_from_caps (&in, caps, NULL))
    return gst_caps_fixate (othercaps);
  M2iPlanOptions opts;
  gst_m2i_base_get_plan_options (self, &opts);
  /* A tensor structure whose size is open has no "dimensions" (a string
   * cannot be a range), so it looks fixed and GstBaseTransform did not ask
   * downstream: ask now. */
  gboolean open_tensor = FALSE;
  for (guint i = 0; i < gst_caps_get_size (othercaps); i++) {
    const GstStructure *s = gst_caps_get_structure (othercaps, i);
    if (gst_structure_has_name (s, "other/tensors") && !gst_structure_has_field (s, "dimensions"))
      open_tensor = TRUE;
  }
  if (open_tensor) {
    GstCaps *peer = gst_pad_peer_query_caps (trans->srcpad, othercaps);
    if (peer && !gst_caps_is_empty (peer) && !gst_caps_is_any (peer)) {
      GstCaps *tmp = gst_caps_intersect_full (peer, othercaps, GST_CAPS_INTERSECT_FIRST);
      gst_caps_unref (othercaps);
      othercaps = tmp;
    }
    gst_clear_caps (&peer);
  }
  /* The first structure (the peers' preference) with a format the profile
   * can produce; failing that the first at all, so that set_caps can say why
   * it is refused. */
  for (int pass = 0; pass < 2; pass++) {
    for (guint i = 0; i < gst_caps_get_size (othercaps); i++) {
      const GstStructure *s = gst_caps_get_structure (othercaps, i);
      guint mask = gst_m2i_structure_formats (s);
      for (guint cf = 0; cf < GST_M2I_CF_COUNT; cf++) {
        const char *why;
        if (!(mask & GST_M2I_CF_BIT (cf))
            || (pass == 0 && !gst_m2i_profile_accepts (opts.profile, cf, &why)))
          continue;
        GstStructure *fs = gst_structure_copy (s);
        GstCapsFeatures *f = gst_caps_get_features (othercaps, i);
        fixate_structure (self, &in, caps, fs, cf);
        GstCaps *res = gst_caps_new_empty ();
        gst_caps_append_structure_full (res, fs, f ? gst_caps_features_copy (f) : NULL);
        gst_caps_unref (othercaps);
        GST_DEBUG_OBJECT (self, "fixated to %" GST_PTR_FORMAT, res);
        return res;
      }
    }
  }
  return gst_caps_fixate (othercaps);
}

static gboolean
refuse (GstM2iBase *self, const char *text, GError *err)
{
  gst_m2i_caps_refuse_once (GST_ELEMENT (self), &PRIV (self)->refused, text,
      err ? err->message : text);
  g_clear_error (&err);
  return FALSE;
}

static gboolean
check_side (GstM2iBase *self, const GstM2iCapsInfo *info, const char *side, M2iProfile profile)
{
  GError *err = NULL;
  if (!gst_m2i_caps_info_check_even (info, side, &err)) {
    gchar *msg = g_strdup_printf ("%s: %s", GST_ELEMENT_NAME (self), err->message);
    refuse (self, msg, err);
    g_free (msg);
    return FALSE;
  }
  const char *why;
  if (!gst_m2i_profile_accepts (profile, info->cf, &why)) {
    gchar *msg = g_strdup_printf ("%s: cannot %s %s with profile=%s: %s",
        GST_ELEMENT_NAME (self), side[0] == 'i' ? "take" : "produce",
        gst_m2i_caps_format_describe (info->cf), m2i_profile_to_string (profile), why);
    refuse (self, msg, NULL);
    g_free (msg);
    return FALSE;
  }
  return TRUE;
}

static void
reset_negotiated (GstM2iBase *self)
{
  GstM2iBasePrivate *priv = PRIV (self);
  m2i_plan_cache_reset (priv->cache);
  m2i_plan_cache_reset (priv->split_cache);
  if (priv->split_pool) {
    gst_buffer_pool_set_active (priv->split_pool, FALSE);
    gst_clear_object (&priv->split_pool);
  }
  g_clear_pointer (&priv->neighbour, g_free);
  m2i_op_list_init (&priv->reported_ops);
  priv->report = TRUE;
  /* Caps are ranked by the order transform_caps gives (deferred frames
   * first); GstBaseTransform's default would rank unchanged downstream caps
   * first and so never fuse into an element that could pass through. */
  gst_base_transform_set_prefer_passthrough (GST_BASE_TRANSFORM (self), FALSE);
}

static gboolean
gst_m2i_base_set_caps (GstBaseTransform *trans, GstCaps *incaps, GstCaps *outcaps)
{
  GstM2iBase *self = GST_M2I_BASE (trans);
  GstM2iBaseClass *klass = GST_M2I_BASE_GET_CLASS (self);
  GstM2iBasePrivate *priv = PRIV (self);
  GstM2iCapsInfo in, out;
  GError *err = NULL;
  if (!gst_m2i_caps_info_from_caps (&in, incaps, &err)
      || !gst_m2i_caps_info_from_caps (&out, outcaps, &err)) {
    gchar *msg = g_strdup_printf ("%s: %s", GST_ELEMENT_NAME (self), err->message);
    refuse (self, msg, err);
    g_free (msg);
    return FALSE;
  }
  M2iPlanOptions opts;
  gst_m2i_base_get_plan_options (self, &opts);
  if (!check_side (self, &in, "input", opts.profile)
      || !check_side (self, &out, "output", opts.profile))
    return FALSE;
  if (klass->check_caps && !klass->check_caps (self, &in, &out, &err)) {
    gchar *msg = g_strdup_printf ("%s: %s", GST_ELEMENT_NAME (self), err->message);
    refuse (self, msg, err);
    g_free (msg);
    return FALSE;
  }
  reset_negotiated (self);
  g_clear_pointer (&priv->refused, g_free);
  priv->in_info = in;
  priv->out_info = out;
  if (out.deferred && !gst_m2i_pad_peer_takes_deferred (trans->srcpad, &priv->neighbour))
    priv->neighbour = g_strdup ("(an m2i element no longer linked)");
  gboolean passthrough = gst_caps_is_equal (incaps, outcaps) && klass->is_noop (self, &in, &out);
  gst_base_transform_set_passthrough (trans, passthrough);
  GST_DEBUG_OBJECT (self, "%" GST_PTR_FORMAT " -> %" GST_PTR_FORMAT "%s", incaps, outcaps,
      passthrough ? " (passthrough)" : "");
  if (passthrough)
    set_fused (self, g_strdup ("passthrough (nothing to do)"));
  return TRUE;
}

static gboolean
gst_m2i_base_transform_size (GstBaseTransform *trans, GstPadDirection direction,
    GstCaps *caps, gsize size, GstCaps *othercaps, gsize *othersize)
{
  GstM2iCapsInfo info;
  if (!gst_m2i_caps_info_from_caps (&info, othercaps, NULL))
    return FALSE;
  *othersize = info.size;
  return TRUE;
}

/* ---- allocation ------------------------------------------------------------- */

static gboolean
gst_m2i_base_decide_allocation (GstBaseTransform *trans, GstQuery *query)
{
  GstCaps *outcaps = NULL;
  GstM2iCapsInfo info;
  gst_query_parse_allocation (query, &outcaps, NULL);
  if (!outcaps || !gst_m2i_caps_info_from_caps (&info, outcaps, NULL))
    return GST_BASE_TRANSFORM_CLASS (gst_m2i_base_parent_class)->decide_allocation (trans, query);

  GstBufferPool *pool = NULL;
  guint size = info.size, min = 0, max = 0;
  if (info.deferred) {
    /* Deferred frames come from our own pool of placeholders. */
    while (gst_query_get_n_allocation_pools (query) > 0)
      gst_query_remove_nth_allocation_pool (query, 0);
    pool = gst_m2i_deferred_pool_new ();
    min = 2;
  } else if (gst_query_get_n_allocation_pools (query) > 0) {
    gst_query_parse_nth_allocation_pool (query, 0, &pool, &size, &min, &max);
    size = MAX (size, (guint) info.size);
  }
  gboolean tensor = gst_m2i_caps_format_is_tensor (info.cf);
  if (!pool)
    pool = tensor ? gst_buffer_pool_new () : gst_video_buffer_pool_new ();
  GstStructure *config = gst_buffer_pool_get_config (pool);
  gst_buffer_pool_config_set_params (config, outcaps, size, min, max);
  if (!info.deferred && !tensor
      && gst_query_find_allocation_meta (query, GST_VIDEO_META_API_TYPE, NULL)
      && gst_buffer_pool_has_option (pool, GST_BUFFER_POOL_OPTION_VIDEO_META))
    gst_buffer_pool_config_add_option (config, GST_BUFFER_POOL_OPTION_VIDEO_META);
  if (!gst_buffer_pool_set_config (pool, config)) {
    /* The peer's pool refused our parameters: use a plain one. */
    gst_object_unref (pool);
    pool = tensor ? gst_buffer_pool_new () : gst_video_buffer_pool_new ();
    config = gst_buffer_pool_get_config (pool);
    gst_buffer_pool_config_set_params (config, outcaps, size, min, max);
    if (!gst_buffer_pool_set_config (pool, config)) {
      gst_object_unref (pool);
      GST_ELEMENT_ERROR (trans, RESOURCE, SETTINGS, ("Failed to configure a buffer pool"),
          ("caps %" GST_PTR_FORMAT, outcaps));
      return FALSE;
    }
  }
  if (gst_query_get_n_allocation_pools (query) > 0)
    gst_query_set_nth_allocation_pool (query, 0, pool, size, min, max);
  else
    gst_query_add_allocation_pool (query, pool, size, min, max);
  gst_object_unref (pool);
  return GST_BASE_TRANSFORM_CLASS (gst_m2i_base_parent_class)->decide_allocation (trans, query);
}

static gboolean
gst_m2i_base_propose_allocation (GstBaseTransform *trans, GstQuery *decide_query,
    GstQuery *query)
{
  if (!GST_BASE_TRANSFORM_CLASS (gst_m2i_base_parent_class)->propose_allocation (trans,
          decide_query, query))
    return FALSE;
  if (!decide_query)
    return TRUE;                /* passthrough: downstream answered */
  GstCaps *caps = NULL;
  GstM2iCapsInfo info;
  gst_query_parse_allocation (query, &caps, NULL);
  if (!caps || !gst_m2i_caps_info_from_caps (&info, caps, NULL) || info.deferred
      || gst_m2i_caps_format_is_tensor (info.cf))
    return TRUE;
  /* We read any strides: offer GstVideoMeta, and a pool. */
  gst_query_add_allocation_meta (query, GST_VIDEO_META_API_TYPE, NULL);
  if (gst_query_get_n_allocation_pools (query) == 0) {
    GstBufferPool *pool = gst_video_buffer_pool_new ();
    GstStructure *config = gst_buffer_pool_get_config (pool);
    gst_buffer_pool_config_set_params (config, caps, info.size, 0, 0);
    gst_buffer_pool_config_add_option (config, GST_BUFFER_POOL_OPTION_VIDEO_META);
    if (gst_buffer_pool_set_config (pool, config))
      gst_query_add_allocation_pool (query, pool, info.size, 0, 0);
    gst_object_unref (pool);
  }
  return TRUE;
}

static gboolean
gst_m2i_base_query (GstBaseTransform *trans, GstPadDirection direction, GstQuery *query)
{
  GstM2iBase *self = GST_M2I_BASE (trans);
  if (direction == GST_PAD_SINK && gst_m2i_query_is_neighbour (query)) {
    gst_m2i_neighbour_query_answer (query, trans->sinkpad,
        get_fusion (self) && GST_M2I_BASE_GET_CLASS (self)->takes_deferred);
    return TRUE;
  }
  return GST_BASE_TRANSFORM_CLASS (gst_m2i_base_parent_class)->query (trans, direction, query);
}

static gboolean
gst_m2i_base_transform_meta (GstBaseTransform *trans, GstBuffer *outbuf, GstMeta *meta,
    GstBuffer *inbuf)
{
  /* An input deferred frame is consumed here, never copied along. */
  if (meta->info->api == GST_M2I_DEFERRED_META_API_TYPE)
    return FALSE;
  return GST_BASE_TRANSFORM_CLASS (gst_m2i_base_parent_class)->transform_meta (trans, outbuf,
      meta, inbuf);
}

/* ---- per frame -------------------------------------------------------------- */

/* Fills @frame (borrowing, holding no reference) with what @inbuf stands for,
 * and @in with the input stage. */
static gboolean
frame_from_input (GstM2iBase *self, GstBuffer *inbuf, GstM2iDeferredFrame *frame,
    GstM2iStage *in, GError **error)
{
  const GstM2iCapsInfo *info = &PRIV (self)->in_info;
  if (!gst_m2i_deferred_frame_borrow (frame, info, inbuf, error))
    return FALSE;
  in->format = frame->result.format;
  in->width = frame->result.width;
  in->height = frame->result.height;
  if (gst_m2i_caps_format_to_m2i (info->cf, m2i_format_order (in->format)) != in->format
      || in->width != info->width || in->height != info->height) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "the input frame is %s %dx%d, but the caps say %s %dx%d",
        m2i_format_to_string (in->format), in->width, in->height,
        gst_m2i_caps_format_name (info->cf), info->width, info->height);
    return FALSE;
  }
  return TRUE;
}

/* Computes @frame (the chain received so far) into a buffer of our own and
 * makes @frame a plain frame of it: needed when this element's ops cannot
 * join the chain (they would follow letterbox padding, or overflow the op
 * list). @scratch receives the buffer (the caller unrefs it). */
static gboolean
split_chain (GstM2iBase *self, GstM2iDeferredFrame *frame, const GstM2iStage *in,
    const M2iPlanOptions *opts, GstBuffer **scratch, GError **error)
{
  GstM2iBasePrivate *priv = PRIV (self);
  gsize size = m2i_image_wrap_size (in->format, in->width, in->height, 0);
  if (!priv->split_pool || priv->split_size != size) {
    if (priv->split_pool) {
      gst_buffer_pool_set_active (priv->split_pool, FALSE);
      gst_object_unref (priv->split_pool);
    }
    priv->split_pool = gst_buffer_pool_new ();
    priv->split_size = size;
    GstStructure *config = gst_buffer_pool_get_config (priv->split_pool);
    gst_buffer_pool_config_set_params (config, NULL, (guint) size, 2, 0);
    gst_buffer_pool_set_config (priv->split_pool, config);
    gst_buffer_pool_set_active (priv->split_pool, TRUE);
  }
  GstBuffer *buf = NULL;
  if (gst_buffer_pool_acquire_buffer (priv->split_pool, &buf, NULL) != GST_FLOW_OK) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_FAILED, "no buffer to split the chain into");
    return FALSE;
  }
  GstMapInfo map;
  M2iImage img;
  gst_buffer_map (buf, &map, GST_MAP_WRITE);
  m2i_image_wrap (&img, in->format, in->width, in->height, map.data, map.size, 0, NULL);
  gboolean ok = gst_m2i_deferred_frame_run (frame, priv->split_cache, &img, opts, NULL, error);
  gst_buffer_unmap (buf, &map);
  if (!ok) {
    gst_buffer_unref (buf);
    return FALSE;
  }
  GST_DEBUG_OBJECT (self, "split the chain before this element: %s",
      m2i_plan_cache_describe (priv->split_cache));
  gchar chain[sizeof frame->chain];
  g_strlcpy (chain, frame->chain, sizeof chain);
  gst_m2i_deferred_frame_init (frame);
  frame->source = buf;
  frame->source_image = img;
  for (guint p = 0; p < m2i_format_n_planes (img.format); p++) {
    frame->source_offset[p] = (gsize) (img.data[p] - map.data);
    frame->source_image.data[p] = NULL;
    frame->source_image.size[p] = 0;
  }
  g_snprintf (frame->chain, sizeof frame->chain, "%s (split)", chain);
  *scratch = buf;
  return TRUE;
}

static void
append_chain_name (GstM2iBase *self, GstM2iDeferredFrame *frame)
{
  if (frame->chain[0])
    g_strlcat (frame->chain, " + ", sizeof frame->chain);
  g_strlcat (frame->chain, GST_ELEMENT_NAME (self), sizeof frame->chain);
}

/* Says (property and debug line) what this element deferred, when it
 * changed: @own are its ops of this frame. */
static void
report_deferral (GstM2iBase *self, const M2iOpList *own)
{
  GstM2iBasePrivate *priv = PRIV (self);
  if (!priv->report && m2i_op_list_equal (own, &priv->reported_ops))
    return;
  priv->report = FALSE;
  priv->reported_ops = *own;
  gchar *ops = own->n_ops ? m2i_op_list_to_string (own) : g_strdup ("nothing to do");
  set_fused (self, g_strdup_printf ("%s: deferred to %s", ops, priv->neighbour));
  g_free (ops);
}

static GstFlowReturn
gst_m2i_base_transform (GstBaseTransform *trans, GstBuffer *inbuf, GstBuffer *outbuf)
{
  GstM2iBase *self = GST_M2I_BASE (trans);
  GstM2iBaseClass *klass = GST_M2I_BASE_GET_CLASS (self);
  GstM2iBasePrivate *priv = PRIV (self);
  GstM2iDeferredFrame *frame = &priv->work;
  GstBuffer *scratch = NULL;
  GError *err = NULL;
  M2iPlanOptions opts;
  GstM2iStage in, out;
  gst_m2i_base_get_plan_options (self, &opts);

  if (!frame_from_input (self, inbuf, frame, &in, &err))
    goto failed;
  out.format = gst_m2i_caps_format_to_m2i (priv->out_info.cf,
      klass->output_order ? klass->output_order (self, m2i_format_order (in.format))
      : m2i_format_order (in.format));
  out.width = priv->out_info.width;
  out.height = priv->out_info.height;

  if ((frame->letterbox.active && !klass->value_wise)
      || frame->ops.n_ops + klass->max_ops > M2I_MAX_OPS) {
    if (!split_chain (self, frame, &in, &opts, &scratch, &err))
      goto failed;
  }
  guint first_own = frame->ops.n_ops;
  if (!klass->append_ops (self, &in, &out, frame, &err))
    goto failed;

  if (priv->out_info.deferred) {
    const GstM2iCapsInfo *oi = &priv->out_info;
    frame->result = oi->layout;
    frame->result.format = out.format;
    memcpy (frame->result_offset, oi->offset, sizeof frame->result_offset);
    frame->result_size = oi->size;
    append_chain_name (self, frame);
    if (!gst_m2i_deferred_buffer_set_frame (outbuf, frame)) {
      g_set_error (&err, M2I_ERROR, M2I_ERROR_FAILED,
          "the output buffer is not a deferred frame of this element's pool");
      goto failed;
    }
    M2iOpList own;
    m2i_op_list_init (&own);
    for (guint i = first_own; i < frame->ops.n_ops; i++)
      own.ops[own.n_ops++] = frame->ops.ops[i];
    report_deferral (self, &own);
  } else {
    GstMapInfo map;
    M2iImage img;
    gsize offs[M2I_MAX_PLANES];
    gboolean replanned = FALSE, ok;
    if (!gst_buffer_map (outbuf, &map, GST_MAP_WRITE)) {
      g_set_error (&err, M2I_ERROR, M2I_ERROR_FAILED, "cannot map the output buffer");
      goto failed;
    }
    ok = gst_m2i_image_from_buffer (&priv->out_info, outbuf, &map, m2i_format_order (out.format),
        &img, offs, &err)
        && gst_m2i_deferred_frame_run (frame, priv->cache, &img, &opts, &replanned, &err);
    gst_buffer_unmap (outbuf, &map);
    if (!ok)
      goto failed;
    if (replanned || priv->report) {
      priv->report = FALSE;
      if (priv->in_info.deferred)
        set_fused (self, g_strdup_printf ("%s + %s: %s", frame->chain, GST_ELEMENT_NAME (self),
                m2i_plan_cache_describe (priv->cache)));
      else
        set_fused (self, g_strdup (m2i_plan_cache_describe (priv->cache)));
    }
  }
  if (scratch)
    gst_buffer_unref (scratch);
  gst_m2i_deferred_frame_init (frame);
  return GST_FLOW_OK;

failed:
  if (scratch)
    gst_buffer_unref (scratch);
  gst_m2i_deferred_frame_init (frame);
  GST_ELEMENT_ERROR (self, STREAM, FAILED, ("%s: %s", GST_ELEMENT_NAME (self), err->message),
      (NULL));
  g_clear_error (&err);
  return GST_FLOW_ERROR;
}

static gboolean
gst_m2i_base_stop (GstBaseTransform *trans)
{
  reset_negotiated (GST_M2I_BASE (trans));
  g_clear_pointer (&PRIV (GST_M2I_BASE (trans))->refused, g_free);
  return TRUE;
}

/* ---- class -------------------------------------------------------------------- */

static void
gst_m2i_base_finalize (GObject *object)
{
  GstM2iBase *self = GST_M2I_BASE (object);
  GstM2iBasePrivate *priv = PRIV (self);
  reset_negotiated (self);
  g_free (priv->refused);
  m2i_plan_cache_free (priv->cache);
  m2i_plan_cache_free (priv->split_cache);
  gst_m2i_shared_props_clear (&priv->props);
  G_OBJECT_CLASS (gst_m2i_base_parent_class)->finalize (object);
}

static void
gst_m2i_base_class_init (GstM2iBaseClass *klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstBaseTransformClass *bt = GST_BASE_TRANSFORM_CLASS (klass);

  gobject_class->set_property = gst_m2i_base_set_property;
  gobject_class->get_property = gst_m2i_base_get_property;
  gobject_class->finalize = gst_m2i_base_finalize;

  GParamFlags flags = GST_PARAM_MUTABLE_PLAYING;
  gst_m2i_install_profile (gobject_class, PROP_PROFILE,
      "What the M2I block can do: \"default\" is the seed's block (csc fused with "
      "convert/resize/permute; fp16 only, planar fp output only, norm in a task of its "
      "own); \"extended\" also fuses norm, has fp32 and lets the CPU finish interleaved "
      "fp output. A format the profile cannot produce fails negotiation with a message. "
      "The last element of a fused chain plans the whole chain with its own profile", flags);
  gst_m2i_install_n_threads (gobject_class, PROP_N_THREADS,
      "Row slices each M2I task is cut into, run on the process-wide worker pool "
      "(0 = one per CPU core). The last element of a fused chain decides for the chain", flags);
  gst_m2i_install_fusion (gobject_class, PROP_FUSION,
      "Fuse with adjacent m2i elements: hand deferred frames (caps feature memory:M2I) "
      "to an m2i element directly downstream instead of computing, and accept them "
      "from upstream. Off: this element computes its own output from real pixels", flags);
  gst_m2i_install_fused (gobject_class, PROP_FUSED,
      "What this element did with the last frames: the ops it ran and the device tasks "
      "of the plan (with the names of the upstream elements whose ops it fused), or "
      "\"<its ops>: deferred to <element>\" when a downstream m2i element computes them");

  bt->transform_caps = GST_DEBUG_FUNCPTR (gst_m2i_base_transform_caps);
  bt->fixate_caps = GST_DEBUG_FUNCPTR (gst_m2i_base_fixate_caps);
  bt->set_caps = GST_DEBUG_FUNCPTR (gst_m2i_base_set_caps);
  bt->transform_size = GST_DEBUG_FUNCPTR (gst_m2i_base_transform_size);
  bt->decide_allocation = GST_DEBUG_FUNCPTR (gst_m2i_base_decide_allocation);
  bt->propose_allocation = GST_DEBUG_FUNCPTR (gst_m2i_base_propose_allocation);
  bt->query = GST_DEBUG_FUNCPTR (gst_m2i_base_query);
  bt->transform_meta = GST_DEBUG_FUNCPTR (gst_m2i_base_transform_meta);
  bt->transform = GST_DEBUG_FUNCPTR (gst_m2i_base_transform);
  bt->stop = GST_DEBUG_FUNCPTR (gst_m2i_base_stop);
  bt->passthrough_on_same_caps = FALSE;

  klass->max_ops = 1;
  gst_type_mark_as_plugin_api (GST_TYPE_M2I_BASE, 0);
}

static void
gst_m2i_base_init (GstM2iBase *self)
{
  GstM2iBasePrivate *priv = PRIV (self);
  gst_m2i_shared_props_init (&priv->props);
  priv->cache = m2i_plan_cache_new ();
  priv->split_cache = m2i_plan_cache_new ();
  gst_m2i_deferred_frame_init (&priv->work);
  m2i_op_list_init (&priv->reported_ops);
  priv->report = TRUE;
  /* Caps are ranked by the order transform_caps gives (deferred frames
   * first); GstBaseTransform's default would rank unchanged downstream caps
   * first and so never fuse into an element that could pass through. */
  gst_base_transform_set_prefer_passthrough (GST_BASE_TRANSFORM (self), FALSE);
}
