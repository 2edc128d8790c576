/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gstm2iprops.h — property helpers shared by the elements (private to the
 * plugin): per-channel number properties (mean, std, gamma, ...) of m2inorm
 * and m2iinfer, the device's normalisation coefficients made from mean/std,
 * the read-only "fused" property every element has, and one installer and
 * one get/set helper for each property several elements declare.
 *
 * A per-channel property is a GstValueArray of 1 number (every channel) or 3
 * (one per channel, in memory order): mean="<0.485, 0.456, 0.406>". A value
 * that is not that keeps the previous numbers and is remembered as an error,
 * so that the element refuses to run with a message saying what was wrong
 * instead of silently using the old numbers.
 */
#pragma once

#include <gst/gst.h>
#include <m2i-core/m2i/m2i.h>
#include <m2i-core/infer/m2i-infer.h>
#include "gstm2ienums.h"

G_BEGIN_DECLS

typedef struct {
  gdouble v[3];
  gchar *error;                 /* why the last value set was refused; NULL if it was not */
} GstM2iChannels;

/* Every channel @value, no error. */
void gst_m2i_channels_init (GstM2iChannels *c, gdouble value);
/* Frees the error text. */
void gst_m2i_channels_clear (GstM2iChannels *c);

/* A per-channel property @name: a GstValueArray of doubles, @flags. */
GParamSpec *gst_m2i_param_spec_channels (const char *name, const char *nick,
    const char *blurb, GParamFlags flags);

/* Stores @value (a GstValueArray) in @c: 1 number for every channel or 3.
 * Anything else keeps the numbers and sets @c->error to a message naming
 * property @name; a good value clears it. Returns whether @value was good. */
gboolean gst_m2i_channels_set (GstM2iChannels *c, const char *name, const GValue *value);
/* Appends the three numbers to @value (an initialised GstValueArray). */
void gst_m2i_channels_get (const GstM2iChannels *c, GValue *value);

/* FALSE with @error (M2I_ERROR_INVALID_ARGUMENT, @c->error's text) when the
 * last value set on @c was refused. */
gboolean gst_m2i_channels_check (const GstM2iChannels *c, GError **error);

/* FALSE with @error (M2I_ERROR_INVALID_ARGUMENT) when input-scale @scale
 * is not positive and finite as a float. */
gboolean gst_m2i_input_scale_check (gdouble scale, GError **error);

/*
 * The device coefficients of out = (in * input_scale - mean) / std into @p.
 * FALSE with @error (M2I_ERROR_INVALID_ARGUMENT) when a value set on @mean or
 * @std was refused, @input_scale is not positive and finite, or the
 * coefficients cannot be held as fp16 (the message gives the numbers).
 */
gboolean gst_m2i_norm_params_from_mean_std (M2iNormParams *p, const GstM2iChannels *mean,
    const GstM2iChannels *std, gdouble input_scale, GError **error);

/* Whether @p changes no value (the identity norm, which can be left out). */
gboolean gst_m2i_norm_params_is_identity (const M2iNormParams *p);

/* ---- properties several elements have --------------------------------------- */

/* Defaults of the shared properties. */
#define GST_M2I_DEFAULT_PROFILE M2I_PROFILE_DEFAULT
#define GST_M2I_DEFAULT_N_THREADS 0
#define GST_M2I_DEFAULT_FUSION TRUE
#define GST_M2I_DEFAULT_INPUT_SCALE 1.0
#define GST_M2I_DEFAULT_CHANNEL_ORDER M2I_ORDER_RGB

/* The values of the properties several elements declare (profile,
 * n-threads, fusion, fused, mean, std, input-scale, channel-order); each
 * element uses those it installed. Read and written under the element's
 * object lock. */
typedef struct {
  M2iProfile profile;
  guint n_threads;
  gboolean fusion;
  gchar *fused;                 /* read-only property: see gst_m2i_set_fused */
  GstM2iChannels mean, std;
  gdouble input_scale;
  M2iChannelOrder channel_order;
} GstM2iSharedProps;

/* The defaults (mean 0, std 1). */
void gst_m2i_shared_props_init (GstM2iSharedProps *p);
/* Frees what @p holds. */
void gst_m2i_shared_props_clear (GstM2iSharedProps *p);

/*
 * One installer per shared property: name, nick, type, range and default
 * are here; @blurb says what the property means for this element and
 * @flags when it may change (GST_PARAM_MUTABLE_*; readable, writable and
 * static strings are added). "fused" is read-only.
 */
void gst_m2i_install_profile (GObjectClass *klass, guint id, const char *blurb, GParamFlags flags);
void gst_m2i_install_n_threads (GObjectClass *klass, guint id, const char *blurb,
    GParamFlags flags);
void gst_m2i_install_fusion (GObjectClass *klass, guint id, const char *blurb, GParamFlags flags);
void gst_m2i_install_fused (GObjectClass *klass, guint id, const char *blurb);
void gst_m2i_install_mean (GObjectClass *klass, guint id, const char *blurb, GParamFlags flags);
void gst_m2i_install_std (GObjectClass *klass, guint id, const char *blurb, GParamFlags flags);
void gst_m2i_install_input_scale (GObjectClass *klass, guint id, const char *blurb,
    GParamFlags flags);
void gst_m2i_install_channel_order (GObjectClass *klass, guint id, const char *blurb,
    GParamFlags flags);

/* Stores @value into @p when @pspec is a shared property (the caller holds
 * the object lock); *@changed (may be NULL) says whether its value changed.
 * FALSE for any other property. */
gboolean gst_m2i_shared_props_set (GstM2iSharedProps *p, const GParamSpec *pspec,
    const GValue *value, gboolean *changed);
/* Reads a shared property into @value; FALSE for any other property. */
gboolean gst_m2i_shared_props_get (const GstM2iSharedProps *p, const GParamSpec *pspec,
    GValue *value);

/* An inference session's pre-processing from @p (mean, std, input-scale,
 * channel-order, profile, n-threads) and @resize_mode. FALSE with @error
 * when a value set on mean or std was refused. */
gboolean gst_m2i_shared_props_to_preprocess (const GstM2iSharedProps *p,
    M2iResizeMode resize_mode, M2iInferPreprocess *pp, GError **error);

/* Replaces *@fused, the string behind @element's read-only property
 * "fused", by @text (taken; the old text is freed) under the object lock,
 * logs it in debug category @cat and notifies "fused" (outside the lock). */
void gst_m2i_set_fused (GstDebugCategory *cat, GstObject *element, gchar **fused, gchar *text);

G_END_DECLS
