/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gstm2iprops.c — property helpers shared by the elements, see gstm2iprops.h. */
#include "gstm2iprops.h"

#include <m2i-core/base/m2i-error.h>
#include <math.h>
#include <string.h>

GST_DEBUG_CATEGORY_STATIC (m2i_props_debug);
#define GST_CAT_DEFAULT m2i_props_debug

void
gst_m2i_channels_init (GstM2iChannels *c, gdouble value)
{
  for (int i = 0; i < 3; i++)
    c->v[i] = value;
  c->error = NULL;
}

void
gst_m2i_channels_clear (GstM2iChannels *c)
{
  g_clear_pointer (&c->error, g_free);
}

GParamSpec *
gst_m2i_param_spec_channels (const char *name, const char *nick, const char *blurb,
    GParamFlags flags)
{
  return gst_param_spec_array (name, nick, blurb,
      g_param_spec_double ("value", "Value", "One channel's value", -G_MAXDOUBLE, G_MAXDOUBLE,
          0.0, flags), flags);
}

gboolean
gst_m2i_channels_set (GstM2iChannels *c, const char *name, const GValue *value)
{
  static gsize once = 0;
  if (g_once_init_enter (&once)) {
    GST_DEBUG_CATEGORY_INIT (m2i_props_debug, "m2iprops", 0, "m2i element properties");
    g_once_init_leave (&once, 1);
  }
  guint n = gst_value_array_get_size (value);
  gdouble v[3] = { 0 };
  gboolean numbers = TRUE;
  for (guint i = 0; i < n && i < 3; i++) {
    GValue d = G_VALUE_INIT;
    g_value_init (&d, G_TYPE_DOUBLE);
    numbers &= g_value_transform (gst_value_array_get_value (value, i), &d);
    v[i] = g_value_get_double (&d);
    g_value_unset (&d);
  }
  g_free (c->error);
  c->error = NULL;
  if (!numbers || (n != 1 && n != 3)) {
    GString *got = g_string_new ("<");
    for (guint i = 0; i < n; i++) {
      gchar *e = gst_value_serialize (gst_value_array_get_value (value, i));
      g_string_append_printf (got, "%s%s", i ? ", " : "", e ? e : "?");
      g_free (e);
    }
    g_string_append_c (got, '>');
    c->error = g_strdup_printf ("%s takes 1 number (every channel) or 3 (one per channel), "
        "as in %s=\"<1>\" or %s=\"<1, 2, 3>\"; %s=\"%s\" was refused", name, name, name,
        name, got->str);
    g_string_free (got, TRUE);
    GST_WARNING ("%s", c->error);
    return FALSE;
  }
  for (int i = 0; i < 3; i++)
    c->v[i] = v[n == 1 ? 0 : i];
  return TRUE;
}

void
gst_m2i_channels_get (const GstM2iChannels *c, GValue *value)
{
  for (int i = 0; i < 3; i++) {
    GValue d = G_VALUE_INIT;
    g_value_init (&d, G_TYPE_DOUBLE);
    g_value_set_double (&d, c->v[i]);
    gst_value_array_append_and_take_value (value, &d);
  }
}

gboolean
gst_m2i_channels_check (const GstM2iChannels *c, GError **error)
{
  if (!c->error)
    return TRUE;
  g_set_error_literal (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, c->error);
  return FALSE;
}

gboolean
gst_m2i_input_scale_check (gdouble scale, GError **error)
{
  float s = (float) scale;
  if (!(s > 0.0f) || !isfinite (s)) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "input-scale must be positive and finite (is %g)", scale);
    return FALSE;
  }
  return TRUE;
}

gboolean
gst_m2i_norm_params_from_mean_std (M2iNormParams *p, const GstM2iChannels *mean,
    const GstM2iChannels *std, gdouble input_scale, GError **error)
{
  if (!gst_m2i_channels_check (mean, error) || !gst_m2i_channels_check (std, error)
      || !gst_m2i_input_scale_check (input_scale, error))
    return FALSE;
  float m[3], s[3];
  for (int c = 0; c < 3; c++) {
    m[c] = (float) mean->v[c];
    s[c] = (float) std->v[c];
  }
  if (!m2i_norm_params_from_mean_std (p, m, s, (float) input_scale)) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "mean <%g, %g, %g> / std <%g, %g, %g> with input-scale %g cannot be held as fp16 "
        "coefficients (std must be positive, mean/input-scale and std/input-scale within "
        "fp16 range)", mean->v[0], mean->v[1], mean->v[2], std->v[0], std->v[1], std->v[2],
        input_scale);
    return FALSE;
  }
  return TRUE;
}

gboolean
gst_m2i_norm_params_is_identity (const M2iNormParams *p)
{
  M2iNormParams id;
  m2i_norm_params_identity (&id);
  return memcmp (p, &id, sizeof id) == 0;
}

void
gst_m2i_set_fused (GstDebugCategory *cat, GstObject *element, gchar **fused, gchar *text)
{
  GST_CAT_INFO_OBJECT (cat, element, "fused: %s", text);
  GST_OBJECT_LOCK (element);
  g_free (*fused);
  *fused = text;
  GST_OBJECT_UNLOCK (element);
  g_object_notify (G_OBJECT (element), "fused");
}

/* ---- properties several elements have --------------------------------------- */

void
gst_m2i_shared_props_init (GstM2iSharedProps *p)
{
  memset (p, 0, sizeof *p);
  p->profile = GST_M2I_DEFAULT_PROFILE;
  p->n_threads = GST_M2I_DEFAULT_N_THREADS;
  p->fusion = GST_M2I_DEFAULT_FUSION;
  gst_m2i_channels_init (&p->mean, 0.0);
  gst_m2i_channels_init (&p->std, 1.0);
  p->input_scale = GST_M2I_DEFAULT_INPUT_SCALE;
  p->channel_order = GST_M2I_DEFAULT_CHANNEL_ORDER;
}

void
gst_m2i_shared_props_clear (GstM2iSharedProps *p)
{
  g_clear_pointer (&p->fused, g_free);
  gst_m2i_channels_clear (&p->mean);
  gst_m2i_channels_clear (&p->std);
}

#define RW (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS)

void
gst_m2i_install_profile (GObjectClass *klass, guint id, const char *blurb, GParamFlags flags)
{
  g_object_class_install_property (klass, id, g_param_spec_enum ("profile", "Hardware profile",
          blurb, GST_TYPE_M2I_PROFILE, GST_M2I_DEFAULT_PROFILE, flags | RW));
}

void
gst_m2i_install_n_threads (GObjectClass *klass, guint id, const char *blurb, GParamFlags flags)
{
  g_object_class_install_property (klass, id, g_param_spec_uint ("n-threads", "Threads", blurb,
          0, 64, GST_M2I_DEFAULT_N_THREADS, flags | RW));
}

void
gst_m2i_install_fusion (GObjectClass *klass, guint id, const char *blurb, GParamFlags flags)
{
  g_object_class_install_property (klass, id, g_param_spec_boolean ("fusion", "Fusion", blurb,
          GST_M2I_DEFAULT_FUSION, flags | RW));
}

void
gst_m2i_install_fused (GObjectClass *klass, guint id, const char *blurb)
{
  g_object_class_install_property (klass, id, g_param_spec_string ("fused", "Fused", blurb,
          NULL, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
}

void
gst_m2i_install_mean (GObjectClass *klass, guint id, const char *blurb, GParamFlags flags)
{
  g_object_class_install_property (klass, id, gst_m2i_param_spec_channels ("mean", "Mean",
          blurb, flags | RW));
}

void
gst_m2i_install_std (GObjectClass *klass, guint id, const char *blurb, GParamFlags flags)
{
  g_object_class_install_property (klass, id, gst_m2i_param_spec_channels ("std",
          "Standard deviation", blurb, flags | RW));
}

void
gst_m2i_install_input_scale (GObjectClass *klass, guint id, const char *blurb,
    GParamFlags flags)
{
  g_object_class_install_property (klass, id, g_param_spec_double ("input-scale",
          "Input scale", blurb, G_MINDOUBLE, G_MAXDOUBLE, GST_M2I_DEFAULT_INPUT_SCALE,
          flags | RW));
}

void
gst_m2i_install_channel_order (GObjectClass *klass, guint id, const char *blurb,
    GParamFlags flags)
{
  g_object_class_install_property (klass, id, g_param_spec_enum ("channel-order",
          "Channel order", blurb, GST_TYPE_M2I_CHANNEL_ORDER, GST_M2I_DEFAULT_CHANNEL_ORDER,
          flags | RW));
}

gboolean
gst_m2i_shared_props_set (GstM2iSharedProps *p, const GParamSpec *pspec, const GValue *value,
    gboolean *changed)
{
  const char *n = pspec->name;
  gboolean c = TRUE;
  if (!strcmp (n, "profile")) {
    c = p->profile != (M2iProfile) g_value_get_enum (value);
    p->profile = g_value_get_enum (value);
  } else if (!strcmp (n, "n-threads")) {
    c = p->n_threads != g_value_get_uint (value);
    p->n_threads = g_value_get_uint (value);
  } else if (!strcmp (n, "fusion")) {
    c = p->fusion != g_value_get_boolean (value);
    p->fusion = g_value_get_boolean (value);
  } else if (!strcmp (n, "mean")) {
    gst_m2i_channels_set (&p->mean, "mean", value);
  } else if (!strcmp (n, "std")) {
    gst_m2i_channels_set (&p->std, "std", value);
  } else if (!strcmp (n, "input-scale")) {
    c = p->input_scale != g_value_get_double (value);
    p->input_scale = g_value_get_double (value);
  } else if (!strcmp (n, "channel-order")) {
    c = p->channel_order != (M2iChannelOrder) g_value_get_enum (value);
    p->channel_order = g_value_get_enum (value);
  } else {
    return FALSE;
  }
  if (changed)
    *changed = c;
  return TRUE;
}

gboolean
gst_m2i_shared_props_get (const GstM2iSharedProps *p, const GParamSpec *pspec, GValue *value)
{
  const char *n = pspec->name;
  if (!strcmp (n, "profile"))
    g_value_set_enum (value, p->profile);
  else if (!strcmp (n, "n-threads"))
    g_value_set_uint (value, p->n_threads);
  else if (!strcmp (n, "fusion"))
    g_value_set_boolean (value, p->fusion);
  else if (!strcmp (n, "fused"))
    g_value_set_string (value, p->fused);
  else if (!strcmp (n, "mean"))
    gst_m2i_channels_get (&p->mean, value);
  else if (!strcmp (n, "std"))
    gst_m2i_channels_get (&p->std, value);
  else if (!strcmp (n, "input-scale"))
    g_value_set_double (value, p->input_scale);
  else if (!strcmp (n, "channel-order"))
    g_value_set_enum (value, p->channel_order);
  else
    return FALSE;
  return TRUE;
}

gboolean
gst_m2i_shared_props_to_preprocess (const GstM2iSharedProps *p, M2iResizeMode resize_mode,
    M2iInferPreprocess *pp, GError **error)
{
  if (!gst_m2i_channels_check (&p->mean, error) || !gst_m2i_channels_check (&p->std, error))
    return FALSE;
  m2i_infer_preprocess_init (pp);
  for (int c = 0; c < 3; c++) {
    pp->mean[c] = (float) p->mean.v[c];
    pp->std[c] = (float) p->std.v[c];
  }
  pp->input_scale = (float) p->input_scale;
  pp->channel_order = p->channel_order;
  pp->resize_mode = resize_mode;
  pp->profile = p->profile;
  pp->n_threads = (gint) p->n_threads;
  return TRUE;
}
