/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gstm2iinfercaps.c — m2iinfer's caps from its model, see gstm2iinfercaps.h. */
#include "gstm2iinfercaps.h"
#include "gstm2icaps.h"
#include "gstm2ideferred.h"

#include <m2i-core/base/m2i-error.h>
#include <string.h>

static void
set_int_or_range (GstStructure *s, const char *field, gint v)
{
  if (v > 0)
    gst_structure_set (s, field, G_TYPE_INT, v, NULL);
  else
    gst_structure_set (s, field, GST_TYPE_INT_RANGE, 1, GST_M2I_MAX_SIZE, NULL);
}

/* video/x-raw with @formats (NULL-terminated), @w x @h (0: any). */
static GstStructure *
video_structure (const char *const *formats, gint w, gint h)
{
  GstStructure *s = gst_structure_new_empty ("video/x-raw");
  GValue list = G_VALUE_INIT;
  gst_value_list_init (&list, 16);
  for (const char *const *f = formats; *f; f++) {
    GValue v = G_VALUE_INIT;
    g_value_init (&v, G_TYPE_STRING);
    g_value_set_string (&v, *f);
    gst_value_list_append_and_take_value (&list, &v);
  }
  gst_structure_take_value (s, "format", &list);
  set_int_or_range (s, "width", w);
  set_int_or_range (s, "height", h);
  gst_structure_set (s, "framerate", GST_TYPE_FRACTION_RANGE, 0, 1, G_MAXINT, 1, NULL);
  return s;
}

static void
append_m2i (GstCaps *caps, GstStructure *s, gboolean deferred)
{
  gst_caps_append_structure_full (caps, s,
      deferred ? gst_caps_features_new (GST_CAPS_FEATURE_MEMORY_M2I, NULL) : NULL);
}

/* How io_tensors_structure names element types. */
typedef enum {
  TYPES_DECLARED,          /* as the model declares them */
  TYPES_FLOAT_AS_F16,      /* float inputs offered as fp16 (widened when copied in) */
  TYPES_F16_AS_F32,        /* f16 outputs, which the runtime delivers as f32 */
} TypeMap;

/* other/tensors (static, no framerate) naming every input (or, with
 * @outputs, every output) of @ir with its dimensions and its type mapped by
 * @map. NULL when a type has no NNStreamer name; *@unnamed (when not NULL)
 * is then that tensor. */
static GstStructure *
io_tensors_structure (M2iIrModel *ir, gboolean outputs, TypeMap map,
    const M2iIrIoInfo **unnamed)
{
  gint n = outputs ? m2i_ir_model_get_n_outputs (ir) : m2i_ir_model_get_n_inputs (ir);
  GString *types = g_string_new (NULL), *dims = g_string_new (NULL);
  for (gint i = 0; i < n; i++) {
    const M2iIrIoInfo *io = outputs ? m2i_ir_model_get_output (ir, i)
        : m2i_ir_model_get_input (ir, i);
    M2iElementType t = io->type;
    if (map == TYPES_FLOAT_AS_F16 && m2i_element_type_is_float (t))
      t = M2I_ET_F16;
    else if (map == TYPES_F16_AS_F32 && t == M2I_ET_F16)
      t = M2I_ET_F32;
    const char *name = gst_m2i_tensor_type_name (t);
    if (!name) {
      if (unnamed)
        *unnamed = io;
      g_string_free (types, TRUE);
      g_string_free (dims, TRUE);
      return NULL;
    }
    g_string_append_printf (types, "%s%s", i ? "," : "", name);
    if (i)
      g_string_append_c (dims, ',');
    gst_m2i_tensor_dims_append (dims, &io->shape);
  }
  GstStructure *s = gst_structure_new ("other/tensors", "format", G_TYPE_STRING, "static",
      "num_tensors", G_TYPE_INT, n, "types", G_TYPE_STRING, types->str,
      "dimensions", G_TYPE_STRING, dims->str, NULL);
  g_string_free (types, TRUE);
  g_string_free (dims, TRUE);
  return s;
}

/* other/tensors naming every input of @m exactly, any framerate. NULL when
 * an input type has no NNStreamer name. */
static GstStructure *
model_tensors_structure (M2iInferModel *m, gboolean f16_for_float)
{
  GstStructure *s = io_tensors_structure (m2i_infer_model_get_ir (m), FALSE,
      f16_for_float ? TYPES_FLOAT_AS_F16 : TYPES_DECLARED, NULL);
  if (s)
    gst_structure_set (s, "framerate", GST_TYPE_FRACTION_RANGE, 0, 1, G_MAXINT, 1, NULL);
  return s;
}

/* The video formats an image model takes, most preferred first: for a
 * one-channel input gray first (then the luma of everything else), else
 * the M2I block's YUV, then RGB-like formats, gray last (repeated into the
 * three channels). @even: NV12 and I420 allowed (even sizes). */
static void
image_formats (const M2iInferImageInput *img, gboolean even, const char *fmts[16])
{
  static const char *const rgb[] = { "RGB", "BGR", "RGBP", "BGRP", "BGRx", "RGBx", "BGRA",
    "RGBA", "xRGB", "xBGR", "ARGB", "ABGR", NULL };
  guint n = 0;
  if (img->channels == 1)
    fmts[n++] = "GRAY8";
  if (even) {
    fmts[n++] = "NV12";
    fmts[n++] = "I420";
  }
  for (guint i = 0; rgb[i]; i++)
    fmts[n++] = rgb[i];
  if (img->channels != 1)
    fmts[n++] = "GRAY8";
  fmts[n] = NULL;
}

/* other/tensors naming the model's inputs as declared, then (when it
 * differs) with fp16 for the float inputs. */
static void
append_tensor_structures (GstCaps *caps, M2iInferModel *m)
{
  GstStructure *s = model_tensors_structure (m, FALSE);
  if (s)
    append_m2i (caps, s, FALSE);
  s = model_tensors_structure (m, TRUE);
  if (s && !gst_caps_is_subset_structure (caps, s))
    append_m2i (caps, s, FALSE);
  else if (s)
    gst_structure_free (s);
}

GstCaps *
gst_m2i_infer_model_caps (M2iInferModel *m, gboolean with_deferred)
{
  static const char *const rgb_formats[] = { "RGBP", "BGRP", "RGB", "BGR", NULL };
  static const char *const nv12[] = { "NV12", NULL }, *const i420[] = { "I420", NULL };
  gint w, h;
  GstCaps *caps = gst_caps_new_empty ();
  const M2iSplitHead *head = m2i_infer_model_get_head (m);
  M2iInferImageInput img = { 0, 3, FALSE, M2I_ET_F32 };
  switch (m2i_infer_model_get_input_kind (m, &w, &h)) {
    case M2I_INFER_INPUT_IMAGE: {
      gboolean image = m2i_infer_model_get_image_input (m, &img);
      /* the classic input: one float [1,3,H,W] (what planar tensors fit) */
      gboolean classic = !head && image && !img.nhwc && img.channels == 3
          && m2i_element_type_is_float (img.type)
          && m2i_ir_model_get_n_inputs (m2i_infer_model_get_ir (m)) == 1;
      if (head) {
        /* The model's own frame first (what its head was made for). */
        const char *const fmt[] = { head->in_format == M2I_FORMAT_SP_NV12_8 ? "NV12" : "I420",
          NULL };
        append_m2i (caps, video_structure (fmt, head->in_width, head->in_height), FALSE);
      }
      if (with_deferred) {
        /* (a one-channel input takes its luma from the chain's u8 pixels) */
        gboolean tensors = img.channels == 3;
        if (tensors) {
          append_m2i (caps, gst_m2i_structure_new_sized (GST_M2I_CF_F16_PLANAR, w, h), TRUE);
          append_m2i (caps, gst_m2i_structure_new_sized (GST_M2I_CF_F32_PLANAR, w, h), TRUE);
        }
        append_m2i (caps, video_structure (rgb_formats, w, h), TRUE);
        if (tensors) {
          append_m2i (caps, gst_m2i_structure_new_sized (GST_M2I_CF_F16_PLANAR, 0, 0), TRUE);
          append_m2i (caps, gst_m2i_structure_new_sized (GST_M2I_CF_F32_PLANAR, 0, 0), TRUE);
        }
        append_m2i (caps, video_structure (rgb_formats, 0, 0), TRUE);
      }
      /* (with a head, the model's input is the frame, not a tensor) */
      if (classic) {
        append_m2i (caps, gst_m2i_structure_new_sized (GST_M2I_CF_F32_PLANAR, w, h), FALSE);
        append_m2i (caps, gst_m2i_structure_new_sized (GST_M2I_CF_F16_PLANAR, w, h), FALSE);
      } else if (!head) {
        append_tensor_structures (caps, m);
      }
      /* NV12/I420 need even sizes: offer them at the model's size only if
       * it is even. */
      const char *fmts[16];
      image_formats (&img, !(w % 2 || h % 2), fmts);
      append_m2i (caps, video_structure (fmts, w, h), FALSE);
      image_formats (&img, TRUE, fmts);
      append_m2i (caps, video_structure (fmts, 0, 0), FALSE);
      break;
    }
    case M2I_INFER_INPUT_NV12:
      append_m2i (caps, video_structure (nv12, w, h), FALSE);
      break;
    case M2I_INFER_INPUT_I420:
      append_m2i (caps, video_structure (i420, w, h), FALSE);
      break;
    case M2I_INFER_INPUT_TENSORS:
      append_tensor_structures (caps, m);
      break;
  }
  return caps;
}

GstCaps *
gst_m2i_infer_output_caps (M2iInferModel *m, GError **error)
{
  const M2iIrIoInfo *io = NULL;
  GstStructure *s = io_tensors_structure (m2i_infer_model_get_ir (m), TRUE, TYPES_F16_AS_F32,
      &io);
  if (!s) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_UNSUPPORTED,
        "output \"%s\" is %s, which other/tensors cannot carry; use output=meta", io->name,
        m2i_element_type_to_string (io->type));
    return NULL;
  }
  return gst_caps_new_full (s, NULL);
}

/* Whether NNStreamer dims @dims (innermost first) name @shape: equal after
 * dropping outer dims of 1 on both sides. */
static gboolean
dims_match (const char *dims, const M2iShape *shape)
{
  gint64 v[GST_M2I_MAX_DIMS];
  gint a = (gint) gst_m2i_tensor_dims_parse (dims, G_MAXINT64, v), b = shape->rank;
  if (a == 0)
    return FALSE;
  while (a > 0 && v[a - 1] == 1)
    a--;
  while (b > 0 && shape->dims[shape->rank - b] == 1)
    b--;
  if (a != b)
    return FALSE;
  for (gint i = 0; i < a; i++)
    if (v[i] != shape->dims[shape->rank - 1 - i])
      return FALSE;
  return TRUE;
}

guint
gst_m2i_infer_tensor_input (M2iInferModel *m, const GstStructure *s,
    M2iElementType types[GST_M2I_INFER_MAX_TENSORS], gsize bytes[GST_M2I_INFER_MAX_TENSORS],
    GError **error)
{
  M2iIrModel *ir = m2i_infer_model_get_ir (m);
  gint n = m2i_ir_model_get_n_inputs (ir), num = 0;
  const char *tstr = gst_structure_get_string (s, "types");
  const char *dstr = gst_structure_get_string (s, "dimensions");
  gboolean ok = gst_structure_get_int (s, "num_tensors", &num) && num == n && tstr && dstr
      && n <= GST_M2I_INFER_MAX_TENSORS;
  gchar **tv = ok ? g_strsplit (tstr, ",", -1) : NULL;
  gchar **dv = ok ? g_strsplit (dstr, ",", -1) : NULL;
  ok = ok && g_strv_length (tv) == (guint) n && g_strv_length (dv) == (guint) n;
  for (gint i = 0; ok && i < n; i++) {
    const M2iIrIoInfo *io = m2i_ir_model_get_input (ir, i);
    M2iElementType t = gst_m2i_tensor_type_from_name (g_strstrip (tv[i]));
    gboolean type_ok = t == io->type || (t == M2I_ET_F16 && m2i_element_type_is_float (io->type))
        || (t == M2I_ET_F32 && io->type == M2I_ET_F16);
    if (!type_ok || !dims_match (g_strstrip (dv[i]), &io->shape)) {
      ok = FALSE;
      break;
    }
    types[i] = t;
    bytes[i] = (gsize) m2i_shape_numel (&io->shape) * m2i_element_type_size (t);
  }
  g_strfreev (tv);
  g_strfreev (dv);
  if (!ok) {
    gchar *want = m2i_infer_model_describe_inputs (m);
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, "the input tensors "
        "(num_tensors=%d, types=%s, dimensions=%s) do not fit the model's input%s %s: give "
        "other/tensors with those types (float16 is accepted for float inputs) and "
        "dimensions, innermost first as NNStreamer writes them, or video", num,
        tstr ? tstr : "(none)", dstr ? dstr : "(none)", n == 1 ? "" : "s", want);
    g_free (want);
    return 0;
  }
  return (guint) n;
}

GstCaps *
gst_m2i_infer_restrict_plain (GstCaps *caps, GstCaps *peer)
{
  if (gst_caps_is_any (peer)) {
    gst_caps_unref (peer);
    return caps;
  }
  GstCaps *res = gst_caps_new_empty ();
  for (guint i = 0; i < gst_caps_get_size (caps); i++) {
    GstCaps *one = gst_caps_copy_nth (caps, i);
    if (!gst_m2i_caps_is_deferred (caps, i)) {
      GstCaps *tmp = gst_caps_intersect_full (one, peer, GST_CAPS_INTERSECT_FIRST);
      gst_caps_unref (one);
      one = tmp;
    }
    res = gst_caps_merge (res, one);
  }
  gst_caps_unref (caps);
  gst_caps_unref (peer);
  return res;
}

gboolean
gst_m2i_infer_takes_tensors (M2iInferModel *m, const GstCaps *caps)
{
  M2iInferInputKind kind = m2i_infer_model_get_input_kind (m, NULL, NULL);
  return !gst_m2i_caps_is_deferred (caps, 0)
      && gst_structure_has_name (gst_caps_get_structure (caps, 0), "other/tensors")
      && (kind == M2I_INFER_INPUT_TENSORS
      || (kind == M2I_INFER_INPUT_IMAGE && !m2i_infer_model_get_head (m)));
}

/* What arrived, shortly: video as "video/x-raw,format=YUY2" (with the size
 * when fixed), anything else as its caps. g_free. */
static gchar *
describe_got (const GstCaps *caps)
{
  const GstStructure *s = gst_caps_get_structure (caps, 0);
  const char *format = gst_structure_get_string (s, "format");
  gint w, h;
  if (!gst_structure_has_name (s, "video/x-raw") || !format)
    return gst_caps_to_string (caps);
  if (gst_structure_get_int (s, "width", &w) && gst_structure_get_int (s, "height", &h))
    return g_strdup_printf ("video/x-raw%s,format=%s,width=%d,height=%d",
        gst_m2i_caps_is_deferred (caps, 0) ? "(memory:M2I)" : "", format, w, h);
  return g_strdup_printf ("video/x-raw%s,format=%s",
      gst_m2i_caps_is_deferred (caps, 0) ? "(memory:M2I)" : "", format);
}

/* The model input(s) a refusal names: the image input of an image model,
 * every input otherwise. g_free. */
static gchar *
refused_inputs (M2iInferModel *m)
{
  M2iInferImageInput img;
  M2iIrModel *ir = m2i_infer_model_get_ir (m);
  if (!m2i_infer_model_get_image_input (m, &img))
    return m2i_infer_model_describe_inputs (m);
  const M2iIrIoInfo *io = m2i_ir_model_get_input (ir, img.index);
  gchar *shape = m2i_shape_to_string (&io->shape);
  gchar *d = g_strdup_printf ("\"%s\" %s %s", io->name, m2i_element_type_to_string (io->type),
      shape);
  g_free (shape);
  return d;
}

void
gst_m2i_infer_caps_refusal (M2iInferModel *m, const GstCaps *caps, gboolean fusion,
    GError **error)
{
  gint w, h;
  M2iInferInputKind kind = m2i_infer_model_get_input_kind (m, &w, &h);
  const GstStructure *st = gst_caps_get_structure (caps, 0);
  gboolean video = gst_structure_has_name (st, "video/x-raw");
  gboolean tensors = gst_structure_has_name (st, "other/tensors");
  gboolean deferred = gst_m2i_caps_is_deferred (caps, 0);
  gchar *got = describe_got (caps), *want = refused_inputs (m), *needs = NULL;
  const char *front;
  M2iIrModel *ir = m2i_infer_model_get_ir (m);
  gint n_in = m2i_ir_model_get_n_inputs (ir);
  M2iInferImageInput img;
  switch (kind) {
    case M2I_INFER_INPUT_IMAGE:
      if (m2i_infer_model_get_image_input (m, &img))
        needs = g_strdup_printf ("video (%sNV12, I420, RGB, BGR, RGBP, BGRP, RGBx, BGRx, xRGB, "
            "xBGR, RGBA, BGRA, ARGB, ABGR%s; any size; fitted to %dx%d here) or other/tensors "
            "naming the model's input%s", img.channels == 1 ? "GRAY8, " : "",
            img.channels == 1 ? "" : ", GRAY8", w, h, n_in == 1 ? "" : "s");
      else
        needs = g_strdup_printf ("video (NV12 or I420; any size; its pre-processing head runs "
            "on the M2I block)");
      break;
    case M2I_INFER_INPUT_NV12:
    case M2I_INFER_INPUT_I420:
      needs = g_strdup_printf ("%s video of exactly %dx%d (its PrePostProcessor head)",
          kind == M2I_INFER_INPUT_NV12 ? "NV12" : "I420", w, h);
      break;
    default: {
      const char *note = m2i_infer_model_get_input_note (m);
      needs = g_strdup_printf ("other/tensors with the model's types and dimensions "
          "(innermost first)%s%s", note ? " — " : "", note ? note : "");
      break;
    }
  }
  if (deferred && !fusion)
    front = "deferred frames need fusion=true";
  else if (video && kind == M2I_INFER_INPUT_TENSORS)
    front = "convert the frames to tensors upstream (e.g. NNStreamer's tensor_converter)";
  else if (video && (kind == M2I_INFER_INPUT_NV12 || kind == M2I_INFER_INPUT_I420))
    front = "put videoconvert ! videoscale (or m2iresize) in front, or a capsfilter with that "
        "format and size";
  else if (video)
    front = "put videoconvert in front";
  else if (tensors)
    front = "give tensors of those types and dimensions (float16 is accepted for float inputs)";
  else
    front = "m2iinfer takes video or other/tensors";
  g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
      "model input%s %s needs %s; got %s: %s", n_in == 1 || kind == M2I_INFER_INPUT_IMAGE
      ? "" : "s", want, needs, got, front);
  g_free (got);
  g_free (want);
  g_free (needs);
}
