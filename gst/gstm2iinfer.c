/* gstm2iinfer.c — m2iinfer: inference inside the pipeline, fused with the
 * pre-processing (see gstm2iinfer.h and docs/m2iinfer.md).
 *
 * Three ways in:
 *  - deferred frames (memory:M2I) from an adjacent m2i chain: the chain's ops
 *    plus whatever the model still needs (resize to its size, convert,
 *    permute, normalisation) run as one M2I plan straight into the model's
 *    input tensor; the frame the chain started from (the source video) is
 *    what leaves the element;
 *  - plain video (NV12, I420, RGB, BGR, RGBP, BGRP): m2iinfer builds that
 *    plan itself from its properties (channel-order, resize-mode, mean, std,
 *    input-scale); models whose input is the NV12/I420 PrePostProcessor head
 *    take the frame's planes as they are;
 *  - other/tensors matching the model's inputs, copied in (fp16 widened).
 * The model runs on one infer request, made when the element goes to
 * PAUSED; nothing is allocated per frame except the result metas and the
 * bus message.
 *
 * The element is a plain GstElement: its output buffer is not made from its
 * input by a fixed rule (a fused chain hands over a deferred tensor and gets
 * the source video back out), which GstBaseTransform does not model.
 */
#include "gstm2iinfer.h"
#include "gstm2icaps.h"
#include "gstm2ienums.h"
#include "gstm2iexec.h"
#include "gstm2iinfermodel.h"
#include "gstm2iinferresults.h"
#include "gstm2iprops.h"
#include "gstm2itensormeta.h"

#include <base/m2i-error.h>
#include <base/m2i-fp16.h>
#include <gst/video/video.h>
#include <math.h>
#include <string.h>

GST_DEBUG_CATEGORY_STATIC (gst_m2i_infer_debug);
#define GST_CAT_DEFAULT gst_m2i_infer_debug

#define DEFAULT_DEVICE "AUTO"
#define DEFAULT_THRESHOLD 0.5
#define DEFAULT_TOP_K 1
#define DEFAULT_INTERVAL 1
#define DEFAULT_N_THREADS 0
#define DEFAULT_OUTPUT GST_M2I_INFER_OUTPUT_META
#define DEFAULT_POST_MESSAGES TRUE
#define DEFAULT_CHANNEL_ORDER M2I_ORDER_RGB
#define DEFAULT_RESIZE_MODE M2I_RESIZE_LINEAR_ONNX
#define DEFAULT_INPUT_SCALE 1.0
#define DEFAULT_PROFILE M2I_PROFILE_DEFAULT
#define DEFAULT_FUSION TRUE
#define DEFAULT_MAX_MEMORY M2I_IR_DEFAULT_MAX_MEMORY
#define MAX_TOP_K 100

enum {
  PROP_0,
  PROP_MODEL,
  PROP_DEVICE,
  PROP_LABELS,
  PROP_THRESHOLD,
  PROP_TOP_K,
  PROP_INFERENCE_INTERVAL,
  PROP_N_THREADS,
  PROP_SPLIT_DIR,
  PROP_OUTPUT,
  PROP_POST_MESSAGES,
  PROP_CHANNEL_ORDER,
  PROP_RESIZE_MODE,
  PROP_MEAN,
  PROP_STD,
  PROP_INPUT_SCALE,
  PROP_PROFILE,
  PROP_FUSION,
  PROP_FUSED,
  PROP_MAX_MEMORY,
};

/* How the negotiated input reaches the model. */
typedef enum {
  INPUT_NONE,
  INPUT_DEFERRED,      /* deferred frames of an m2i chain */
  INPUT_VIDEO,         /* video, pre-processed by our own plan */
  INPUT_PLANES,        /* NV12/I420 planes into a PrePostProcessor head */
  INPUT_TENSORS,       /* other/tensors copied into the inputs */
} InputMode;

#define MAX_TENSORS 16

struct _GstM2iInfer {
  GstElement parent;
  GstPad *sinkpad, *srcpad;

  /* properties (object lock) */
  gchar *model_path, *device, *labels_path, *split_dir;
  gdouble threshold;
  guint top_k, interval, n_threads;
  guint64 max_memory;
  GstM2iInferOutput output;
  gboolean post_messages;
  M2iChannelOrder channel_order;
  M2iResizeMode resize_mode;
  GstM2iChannels mean, std;
  gdouble input_scale;
  M2iProfile profile;
  gboolean fusion;
  gchar *fused;

  /* the model, from READY->PAUSED to PAUSED->READY; the caps it takes
   * (object lock, read by caps queries from any thread) */
  GstM2iInferModel *model;
  GstM2iInputKind input_kind;
  gint model_w, model_h;
  GstCaps *model_caps;            /* with deferred structures */
  GstCaps *model_caps_plain;      /* without */
  GstM2iOutputKind output_kind;
  gint n_classes;
  gboolean softmax;
  gchar **labels;
  gchar *classification_name;
  GstM2iResultContext ctx;
  GstM2iClass *classes;           /* MAX_TOP_K */
  GstM2iDetection *dets;          /* n_classes rows (detectors) */
  M2iTensor *outputs;             /* per inference: the model's outputs */
  const gchar **output_names;
  GstCaps *output_tensor_caps;    /* output=tensors: the caps of the outputs */
  GstBufferPool *tensor_pool;

  /* negotiated (streaming thread) */
  InputMode mode;
  GstM2iCapsInfo in_info;
  gint fps_n, fps_d;
  guint n_in_tensors;
  gsize in_tensor_bytes[MAX_TENSORS];
  M2iElementType in_tensor_type[MAX_TENSORS];
  GstVideoInfo src_vinfo;         /* output=meta with deferred input: the source video */
  gboolean src_is_video;
  M2iNormParams norm;
  gboolean norm_active;
  guint8 *staging;                /* fp16 input tensor when the plan writes fp16 */
  gsize staging_size;
  GstM2iPlanCache cache;
  GstM2iDeferredFrame work;       /* per-frame scratch; holds no reference */
  gboolean report;
  gboolean params_changed;        /* mean/std/input-scale set since the norm was made */
  guint64 n_frames;               /* frames received since PAUSED */
  guint64 since_flush;            /* frames since PAUSED or the last flush:
                                   * inference-interval counts these, so the
                                   * first frame after a seek is inferred */
};

G_DEFINE_TYPE (GstM2iInfer, gst_m2i_infer, GST_TYPE_ELEMENT);
GST_ELEMENT_REGISTER_DEFINE_WITH_CODE (m2iinfer, "m2iinfer", GST_RANK_NONE, GST_TYPE_M2I_INFER,
    GST_DEBUG_CATEGORY_INIT (gst_m2i_infer_debug, "m2iinfer", 0, "m2i inference"));

static const GEnumValue output_values[] = {
  { GST_M2I_INFER_OUTPUT_META, "Push the frame (the source video of a fused m2i chain, else "
        "the input buffer) with a tensor meta, region-of-interest metas and a bus message",
        "meta" },
  { GST_M2I_INFER_OUTPUT_TENSORS, "Push the model's outputs as other/tensors buffers (one "
        "memory per output, NNStreamer's static format)", "tensors" },
  { 0, NULL, NULL },
};

GType
gst_m2i_infer_output_get_type (void)
{
  static GType type = 0;
  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstM2iInferOutput", output_values);
    gst_type_mark_as_plugin_api (t, 0);
    g_once_init_leave (&type, t);
  }
  return type;
}

#define SINK_CAPS \
  GST_M2I_TENSOR_CAPS ("(" GST_CAPS_FEATURE_MEMORY_M2I ")") "; " \
  GST_M2I_VIDEO_CAPS ("(" GST_CAPS_FEATURE_MEMORY_M2I ")", "{ RGBP, BGRP, RGB, BGR }") "; " \
  "other/tensors, format=(string)static, framerate=(fraction)[0/1, 2147483647/1]; " \
  GST_M2I_VIDEO_CAPS ("", "{ NV12, I420, RGB, BGR, RGBP, BGRP }")
#define SRC_CAPS \
  GST_M2I_VIDEO_CAPS ("", "{ NV12, I420, RGB, BGR, RGBP, BGRP }") "; " \
  "other/tensors, format=(string)static, framerate=(fraction)[0/1, 2147483647/1]"

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink", GST_PAD_SINK,
    GST_PAD_ALWAYS, GST_STATIC_CAPS (SINK_CAPS));
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src", GST_PAD_SRC,
    GST_PAD_ALWAYS, GST_STATIC_CAPS (SRC_CAPS));

/* ---- small helpers -------------------------------------------------------- */

static void
set_fused (GstM2iInfer *self, gchar *text)
{
  gst_m2i_set_fused (GST_CAT_DEFAULT, GST_OBJECT (self), &self->fused, text);
}

/* NNStreamer's name of an element type; NULL when it has none. */
static const char *
tensor_type_name (M2iElementType t)
{
  switch (t) {
    case M2I_ET_F32: return "float32";
    case M2I_ET_F16: return "float16";
    case M2I_ET_F64: return "float64";
    case M2I_ET_U8: return "uint8";
    case M2I_ET_I8: return "int8";
    case M2I_ET_U16: return "uint16";
    case M2I_ET_I16: return "int16";
    case M2I_ET_U32: return "uint32";
    case M2I_ET_I32: return "int32";
    case M2I_ET_U64: return "uint64";
    case M2I_ET_I64: return "int64";
    default: return NULL;
  }
}

static M2iElementType
tensor_type_from_name (const char *s)
{
  static const M2iElementType all[] = { M2I_ET_F32, M2I_ET_F16, M2I_ET_F64, M2I_ET_U8,
    M2I_ET_I8, M2I_ET_U16, M2I_ET_I16, M2I_ET_U32, M2I_ET_I32, M2I_ET_U64, M2I_ET_I64 };
  for (guint i = 0; i < G_N_ELEMENTS (all); i++)
    if (!strcmp (s, tensor_type_name (all[i])))
      return all[i];
  return M2I_ET_UNDEFINED;
}

/* NNStreamer dimensions of @s: innermost first, ':'-separated ("10:1" for
 * [1,10]); a scalar is "1". */
static void
append_dims (GString *out, const M2iShape *s)
{
  if (s->rank == 0)
    g_string_append (out, "1");
  for (gint i = s->rank - 1; i >= 0; i--)
    g_string_append_printf (out, "%s%" G_GINT64_FORMAT, i == s->rank - 1 ? "" : ":",
        s->dims[i]);
}

/* Whether NNStreamer dims @dims (innermost first) name @shape: equal after
 * dropping outer dims of 1 on both sides. */
static gboolean
dims_match (const char *dims, const M2iShape *shape)
{
  gint64 v[16];
  gint n = 0;
  gchar **parts = g_strsplit (dims, ":", -1);
  gboolean ok = TRUE;
  for (gchar **p = parts; *p && ok; p++) {
    gchar *end = NULL;
    gint64 d = g_ascii_strtoll (g_strstrip (*p), &end, 10);
    if (!**p || *end || d <= 0 || n >= 16)
      ok = FALSE;
    else
      v[n++] = d;
  }
  g_strfreev (parts);
  if (!ok)
    return FALSE;
  gint a = n, b = shape->rank;
  while (a > 0 && v[a - 1] == 1)
    a--;
  while (b > 0 && shape->dims[0 + shape->rank - b] == 1)
    b--;
  if (a != b)
    return FALSE;
  for (gint i = 0; i < a; i++)
    if (v[i] != shape->dims[shape->rank - 1 - i])
      return FALSE;
  return TRUE;
}

/* ---- caps the model takes ----------------------------------------------- */

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
  gst_value_list_init (&list, 6);
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
    const char *name = tensor_type_name (t);
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
    append_dims (dims, &io->shape);
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
model_tensors_structure (GstM2iInferModel *m, gboolean f16_for_float)
{
  GstStructure *s = io_tensors_structure (gst_m2i_infer_model_ir (m), FALSE,
      f16_for_float ? TYPES_FLOAT_AS_F16 : TYPES_DECLARED, NULL);
  if (s)
    gst_structure_set (s, "framerate", GST_TYPE_FRACTION_RANGE, 0, 1, G_MAXINT, 1, NULL);
  return s;
}

/* Everything the loaded model takes on the sink pad, most preferred first:
 * deferred frames of the model's size (fp16 first: the M2I block's type),
 * deferred frames of any size (m2iinfer adds the resize), then plain
 * tensors and plain video. */
static GstCaps *
build_model_caps (GstM2iInfer *self, GstM2iInferModel *m, gboolean with_deferred)
{
  static const char *const rgb_formats[] = { "RGBP", "BGRP", "RGB", "BGR", NULL };
  static const char *const video_formats[] = { "NV12", "I420", "RGB", "BGR", "RGBP", "BGRP",
    NULL };
  static const char *const rgb_only[] = { "RGB", "BGR", "RGBP", "BGRP", NULL };
  static const char *const nv12[] = { "NV12", NULL }, *const i420[] = { "I420", NULL };
  gint w, h;
  GstCaps *caps = gst_caps_new_empty ();
  const M2iSplitHead *head = gst_m2i_infer_model_head (m);
  switch (gst_m2i_infer_model_input_kind (m, &w, &h)) {
    case GST_M2I_INPUT_IMAGE:
      if (head) {
        /* The model's own frame first (what its head was made for). */
        const char *const fmt[] = { head->in_format == M2I_FORMAT_SP_NV12_8 ? "NV12" : "I420",
          NULL };
        append_m2i (caps, video_structure (fmt, head->in_width, head->in_height), FALSE);
      }
      if (with_deferred) {
        append_m2i (caps, gst_m2i_structure_new_sized (GST_M2I_CF_F16_PLANAR, w, h), TRUE);
        append_m2i (caps, gst_m2i_structure_new_sized (GST_M2I_CF_F32_PLANAR, w, h), TRUE);
        append_m2i (caps, video_structure (rgb_formats, w, h), TRUE);
        append_m2i (caps, gst_m2i_structure_new_sized (GST_M2I_CF_F16_PLANAR, 0, 0), TRUE);
        append_m2i (caps, gst_m2i_structure_new_sized (GST_M2I_CF_F32_PLANAR, 0, 0), TRUE);
        append_m2i (caps, video_structure (rgb_formats, 0, 0), TRUE);
      }
      /* (with a head, the model's input is the frame, not a tensor) */
      if (!head) {
        append_m2i (caps, gst_m2i_structure_new_sized (GST_M2I_CF_F32_PLANAR, w, h), FALSE);
        append_m2i (caps, gst_m2i_structure_new_sized (GST_M2I_CF_F16_PLANAR, w, h), FALSE);
      }
      /* NV12/I420 need even sizes: offer them at the model's size only if
       * it is even. */
      append_m2i (caps, video_structure (w % 2 || h % 2 ? rgb_only : video_formats, w, h),
          FALSE);
      append_m2i (caps, video_structure (video_formats, 0, 0), FALSE);
      break;
    case GST_M2I_INPUT_NV12:
      append_m2i (caps, video_structure (nv12, w, h), FALSE);
      break;
    case GST_M2I_INPUT_I420:
      append_m2i (caps, video_structure (i420, w, h), FALSE);
      break;
    case GST_M2I_INPUT_TENSORS: {
      GstStructure *s = model_tensors_structure (m, FALSE);
      if (s)
        append_m2i (caps, s, FALSE);
      s = model_tensors_structure (m, TRUE);
      if (s && !gst_caps_is_subset_structure (caps, s))
        append_m2i (caps, s, FALSE);
      else if (s)
        gst_structure_free (s);
      break;
    }
  }
  return caps;
}

/* ---- model lifetime ------------------------------------------------------- */

static void
clear_negotiated (GstM2iInfer *self)
{
  gst_m2i_plan_cache_clear (&self->cache);
  gst_m2i_deferred_frame_init (&self->work);
  g_clear_pointer (&self->staging, g_free);
  self->staging_size = 0;
  self->mode = INPUT_NONE;
  self->report = TRUE;
}

static void
unload_model (GstM2iInfer *self)
{
  clear_negotiated (self);
  if (self->tensor_pool) {
    gst_buffer_pool_set_active (self->tensor_pool, FALSE);
    gst_clear_object (&self->tensor_pool);
  }
  GST_OBJECT_LOCK (self);
  GstM2iInferModel *m = self->model;
  self->model = NULL;
  gst_clear_caps (&self->model_caps);
  gst_clear_caps (&self->model_caps_plain);
  GST_OBJECT_UNLOCK (self);
  gst_m2i_infer_model_free (m);
  gst_clear_caps (&self->output_tensor_caps);
  g_clear_pointer (&self->labels, g_strfreev);
  g_clear_pointer (&self->classification_name, g_free);
  g_clear_pointer (&self->classes, g_free);
  g_clear_pointer (&self->dets, g_free);
  g_clear_pointer (&self->outputs, g_free);
  g_clear_pointer (&self->output_names, g_free);
  memset (&self->ctx, 0, sizeof self->ctx);
}

/* The caps of output=tensors: one tensor per model output. */
static GstCaps *
build_output_tensor_caps (GstM2iInferModel *m, GError **error)
{
  const M2iIrIoInfo *io = NULL;
  GstStructure *s = io_tensors_structure (gst_m2i_infer_model_ir (m), TRUE, TYPES_F16_AS_F32,
      &io);
  if (!s) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_UNSUPPORTED,
        "output \"%s\" is %s, which other/tensors cannot carry; use output=meta", io->name,
        m2i_element_type_to_string (io->type));
    return NULL;
  }
  return gst_caps_new_full (s, NULL);
}

static gboolean
load_model (GstM2iInfer *self)
{
  GError *err = NULL;
  GstM2iInferModelOptions opts;
  GST_OBJECT_LOCK (self);
  gchar *path = g_strdup (self->model_path), *device = g_strdup (self->device);
  gchar *labels = g_strdup (self->labels_path), *split_dir = g_strdup (self->split_dir);
  opts.n_threads = self->n_threads;
  opts.max_memory = self->max_memory;
  GstM2iInferOutput output = self->output;
  GST_OBJECT_UNLOCK (self);
  opts.split_dir = split_dir;

  GstM2iInferModel *m = NULL;
  gchar *canonical = NULL;
  if (!gst_m2i_device_parse (device, &opts.device, &canonical, &err))
    goto settings_error;
  opts.device_string = canonical;
  m = gst_m2i_infer_model_load (path, &opts, &err);
  g_free (canonical);
  if (!m)
    goto model_error;
  if (labels && !(self->labels = gst_m2i_read_labels (labels, &err)))
    goto settings_error;
  self->output_kind = gst_m2i_infer_model_output_kind (m, &self->n_classes, &self->softmax);
  self->ctx.model_name = gst_m2i_infer_model_name (m);
  self->ctx.labels = self->labels;
  self->ctx.n_labels = self->labels ? g_strv_length (self->labels) : 0;
  gint n_out = gst_m2i_infer_model_n_outputs (m);
  self->ctx.output_name = n_out > 0 ? gst_m2i_infer_model_output_name (m, 0) : "";
  self->classification_name = gst_m2i_classification_name (self->ctx.output_name);
  self->ctx.classification_name = self->classification_name;
  if (self->output_kind == GST_M2I_OUTPUT_CLASSES && self->labels
      && self->ctx.n_labels != (guint) self->n_classes)
    GST_WARNING_OBJECT (self, "labels file %s has %u labels, the model %d classes", labels,
        self->ctx.n_labels, self->n_classes);
  self->classes = g_new0 (GstM2iClass, MAX_TOP_K);
  self->dets = g_new0 (GstM2iDetection, MAX (self->n_classes, 1));
  self->outputs = g_new0 (M2iTensor, MAX (n_out, 1));
  self->output_names = g_new0 (const gchar *, MAX (n_out, 1));
  for (gint i = 0; i < n_out; i++)
    self->output_names[i] = gst_m2i_infer_model_output_name (m, i);
  if (output == GST_M2I_INFER_OUTPUT_TENSORS
      && !(self->output_tensor_caps = build_output_tensor_caps (m, &err)))
    goto settings_error;

  GstCaps *with = build_model_caps (self, m, TRUE), *without = build_model_caps (self, m, FALSE);
  GST_OBJECT_LOCK (self);
  self->model = m;
  self->input_kind = gst_m2i_infer_model_input_kind (m, &self->model_w, &self->model_h);
  self->model_caps = with;
  self->model_caps_plain = without;
  GST_OBJECT_UNLOCK (self);
  GST_INFO_OBJECT (self, "model %s (%s) on %s: %s; takes %" GST_PTR_FORMAT, path,
      gst_m2i_infer_model_name (m), gst_m2i_infer_model_device (m),
      gst_m2i_infer_model_describe (m), with);
  self->n_frames = 0;
  self->since_flush = 0;
  g_free (path);
  g_free (device);
  g_free (labels);
  g_free (split_dir);
  return TRUE;

model_error:
  if (!path)                    /* the message says what to set */
    goto settings_error;
  GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ, ("%s: cannot use model %s: %s",
          GST_ELEMENT_NAME (self), path, err->message),
      ("device=%s", device ? device : DEFAULT_DEVICE));
  goto fail;
settings_error:
  GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS, ("%s: %s", GST_ELEMENT_NAME (self),
          err->message), ("model=%s device=%s", path ? path : "(none)",
          device ? device : DEFAULT_DEVICE));
fail:
  g_clear_error (&err);
  gst_m2i_infer_model_free (m);
  g_clear_pointer (&self->labels, g_strfreev);
  g_clear_pointer (&self->classification_name, g_free);
  g_clear_pointer (&self->classes, g_free);
  g_clear_pointer (&self->dets, g_free);
  g_clear_pointer (&self->outputs, g_free);
  g_clear_pointer (&self->output_names, g_free);
  gst_clear_caps (&self->output_tensor_caps);
  g_free (path);
  g_free (device);
  g_free (labels);
  g_free (split_dir);
  return FALSE;
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

/* ---- negotiation ------------------------------------------------------------ */

static gboolean
fusion_on (GstM2iInfer *self)
{
  GST_OBJECT_LOCK (self);
  gboolean f = self->fusion;
  GST_OBJECT_UNLOCK (self);
  return f;
}

/* What the sink pad takes now: the model's caps (or the template before the
 * model is loaded). With output=meta, plain input passes downstream as it
 * is, so downstream's caps restrict it too. */
static GstCaps *
sink_caps (GstM2iInfer *self, GstCaps *filter)
{
  GstCaps *caps = NULL;
  gboolean fusion = fusion_on (self);
  GST_OBJECT_LOCK (self);
  GstCaps *mc = fusion ? self->model_caps : self->model_caps_plain;
  if (mc)
    caps = gst_caps_ref (mc);
  GstM2iInferOutput output = self->output;
  GST_OBJECT_UNLOCK (self);
  if (!caps) {
    caps = gst_pad_get_pad_template_caps (self->sinkpad);
    if (!fusion) {
      GstCaps *plain = gst_caps_new_empty ();
      for (guint i = 0; i < gst_caps_get_size (caps); i++)
        if (!gst_m2i_caps_is_deferred (caps, i))
          gst_caps_append_structure (plain, gst_structure_copy (gst_caps_get_structure (caps,
                      i)));
      gst_caps_unref (caps);
      caps = plain;
    }
  }
  if (output == GST_M2I_INFER_OUTPUT_META) {
    GstCaps *peer = gst_pad_peer_query_caps (self->srcpad, NULL);
    if (peer && !gst_caps_is_any (peer)) {
      /* Deferred structures leave as the chain's source video: downstream
       * cannot restrict them here. */
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
      caps = res;
    }
    gst_clear_caps (&peer);
  }
  if (filter) {
    GstCaps *tmp = gst_caps_intersect_full (caps, filter, GST_CAPS_INTERSECT_FIRST);
    gst_caps_unref (caps);
    caps = tmp;
  }
  return caps;
}

static gboolean
refuse_caps (GstM2iInfer *self, const char *fmt, ...) G_GNUC_PRINTF (2, 3);

static gboolean
refuse_caps (GstM2iInfer *self, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  gchar *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, ("%s: %s", GST_ELEMENT_NAME (self), msg), (NULL));
  g_free (msg);
  return FALSE;
}

/* Describes the model's inputs for messages ("input f32 [1,3,28,28]"). */
static gchar *
describe_inputs (GstM2iInferModel *m)
{
  M2iIrModel *ir = gst_m2i_infer_model_ir (m);
  GString *s = g_string_new (NULL);
  for (gint i = 0; i < m2i_ir_model_get_n_inputs (ir); i++) {
    const M2iIrIoInfo *io = m2i_ir_model_get_input (ir, i);
    gchar *shape = m2i_shape_to_string (&io->shape);
    g_string_append_printf (s, "%s\"%s\" %s %s", i ? ", " : "", io->name,
        m2i_element_type_to_string (io->type), shape);
    g_free (shape);
  }
  return g_string_free (s, FALSE);
}

/* Checks plain other/tensors caps against the model's inputs and records
 * the bytes and type of each tensor in a buffer. */
static gboolean
setup_tensor_input (GstM2iInfer *self, const GstStructure *s)
{
  M2iIrModel *ir = gst_m2i_infer_model_ir (self->model);
  gint n = m2i_ir_model_get_n_inputs (ir), num = 0;
  const char *types = gst_structure_get_string (s, "types");
  const char *dims = gst_structure_get_string (s, "dimensions");
  gchar *want = describe_inputs (self->model);
  gboolean ok = gst_structure_get_int (s, "num_tensors", &num) && num == n && types && dims
      && n <= MAX_TENSORS;
  gchar **tv = ok ? g_strsplit (types, ",", -1) : NULL;
  gchar **dv = ok ? g_strsplit (dims, ",", -1) : NULL;
  ok = ok && g_strv_length (tv) == (guint) n && g_strv_length (dv) == (guint) n;
  for (gint i = 0; ok && i < n; i++) {
    const M2iIrIoInfo *io = m2i_ir_model_get_input (ir, i);
    M2iElementType t = tensor_type_from_name (g_strstrip (tv[i]));
    gboolean type_ok = t == io->type || (t == M2I_ET_F16 && m2i_element_type_is_float (io->type))
        || (t == M2I_ET_F32 && io->type == M2I_ET_F16);
    if (!type_ok || !dims_match (g_strstrip (dv[i]), &io->shape)) {
      ok = FALSE;
      break;
    }
    self->in_tensor_type[i] = t;
    self->in_tensor_bytes[i] = (gsize) m2i_shape_numel (&io->shape) * m2i_element_type_size (t);
  }
  g_strfreev (tv);
  g_strfreev (dv);
  if (!ok) {
    refuse_caps (self, "the input tensors (num_tensors=%d, types=%s, dimensions=%s) do not fit "
        "the model's input%s %s: give other/tensors with those types (float16 is accepted for "
        "float inputs) and dimensions, innermost first as NNStreamer writes them, or video",
        num, types ? types : "(none)", dims ? dims : "(none)", n == 1 ? "" : "s", want);
    g_free (want);
    return FALSE;
  }
  g_free (want);
  self->n_in_tensors = (guint) n;
  self->mode = INPUT_TENSORS;
  return TRUE;
}

/* The tensor the plan writes when its type is not the model input's
 * (fp16 from the M2I block for an f32 input, or fp32 for an f16 one). */
static void
ensure_staging (GstM2iInfer *self)
{
  gsize size = (gsize) 3 * self->model_w * self->model_h * sizeof (float);
  if (self->staging_size != size) {
    g_free (self->staging);
    self->staging = g_malloc (size);
    self->staging_size = size;
  }
}

/* Norm coefficients from mean/std/input-scale; FALSE (with the message)
 * when they cannot be held as fp16. */
static gboolean
compute_norm (GstM2iInfer *self, GError **error)
{
  GST_OBJECT_LOCK (self);
  gboolean ok = gst_m2i_norm_params_from_mean_std (&self->norm, &self->mean, &self->std,
      self->input_scale, error);
  GST_OBJECT_UNLOCK (self);
  self->norm_active = ok && !gst_m2i_norm_params_is_identity (&self->norm);
  return ok;
}

/* The caps of the video a fused chain started from: the caps of the
 * nearest link upstream that carries real frames, looking through ghost
 * pads. Source pads are asked: while a caps event travels down the chain,
 * the sink pads it passed have not stored it yet, the source pads have.
 * NULL when there is none. */
static GstCaps *
chain_source_caps (GstPad *sinkpad)
{
  GstPad *pad = gst_object_ref (sinkpad);
  for (int depth = 0; depth < 64 && pad; depth++) {
    GstPad *peer = gst_pad_get_peer (pad);
    gst_object_unref (pad);
    pad = NULL;
    if (!peer)
      break;
    GstCaps *caps = gst_pad_get_current_caps (peer);
    if (caps && !gst_m2i_caps_is_deferred (caps, 0)) {
      gst_object_unref (peer);
      return caps;
    }
    gst_clear_caps (&caps);
    /* Out of a bin: its ghost source pad's target inside. */
    while (peer && GST_IS_GHOST_PAD (peer)) {
      GstPad *t = gst_ghost_pad_get_target (GST_GHOST_PAD (peer));
      gst_object_unref (peer);
      peer = t;
    }
    if (!peer)
      break;
    if (GST_IS_PROXY_PAD (peer)) {
      /* Leaving a bin upstream: the internal pad of its ghost sink pad. */
      pad = GST_PAD (gst_proxy_pad_get_internal (GST_PROXY_PAD (peer)));
      gst_object_unref (peer);
      continue;
    }
    GstElement *el = gst_pad_get_parent_element (peer);
    gst_object_unref (peer);
    if (!el)
      break;
    pad = gst_element_get_static_pad (el, "sink");
    gst_object_unref (el);
  }
  if (pad)
    gst_object_unref (pad);
  return NULL;
}

static gboolean
push_src_caps (GstM2iInfer *self, GstCaps *caps)
{
  self->src_is_video = FALSE;
  if (gst_structure_has_name (gst_caps_get_structure (caps, 0), "video/x-raw"))
    self->src_is_video = gst_video_info_from_caps (&self->src_vinfo, caps);
  GST_DEBUG_OBJECT (self, "src caps %" GST_PTR_FORMAT, caps);
  gboolean ok = gst_pad_push_event (self->srcpad, gst_event_new_caps (caps));
  gst_caps_unref (caps);
  return ok;
}

static gboolean
set_sink_caps (GstM2iInfer *self, GstCaps *caps)
{
  GError *err = NULL;
  clear_negotiated (self);
  if (!self->model)
    return refuse_caps (self, "no model loaded (the element is not PAUSED yet)");
  const GstStructure *s = gst_caps_get_structure (caps, 0);
  gboolean deferred = gst_m2i_caps_is_deferred (caps, 0);
  gboolean plain_tensors = !deferred && gst_structure_has_name (s, "other/tensors")
      && (self->input_kind == GST_M2I_INPUT_TENSORS || (self->input_kind == GST_M2I_INPUT_IMAGE
              && !gst_m2i_infer_model_head (self->model)));
  /* Plain tensors are checked one by one below (any mix of f16 and f32 for
   * float inputs, which the caps query cannot list); the rest must be what
   * the caps query offers. */
  gboolean fits = plain_tensors;
  if (!fits) {
    GstCaps *accepted = sink_caps (self, NULL);
    fits = gst_caps_is_subset (caps, accepted);
    gst_caps_unref (accepted);
  }
  gchar *want = describe_inputs (self->model);
  if (!fits) {
    gchar *got = gst_caps_to_string (caps);
    gboolean ok = refuse_caps (self, "input %s does not fit the model's input%s %s%s", got,
        gst_m2i_infer_model_n_inputs (self->model) == 1 ? "" : "s", want,
        deferred && !fusion_on (self) ? " (deferred frames need fusion=true)"
        : self->input_kind == GST_M2I_INPUT_IMAGE ? ": give video (NV12, I420, RGB, BGR, RGBP, "
        "BGRP) or a planar fp16/fp32 tensor of the model's size"
        : self->input_kind == GST_M2I_INPUT_TENSORS ? ": give other/tensors with the model's "
        "types and dimensions (innermost first)"
        : ": give video of the model's format and size");
    g_free (got);
    g_free (want);
    return ok;
  }
  g_free (want);
  gst_structure_get_fraction (s, "framerate", &self->fps_n, &self->fps_d);
  if (plain_tensors) {
    if (!setup_tensor_input (self, s))
      return FALSE;
  } else {
    if (!gst_m2i_caps_info_from_caps (&self->in_info, caps, &err)) {
      gboolean ok = refuse_caps (self, "%s", err->message);
      g_clear_error (&err);
      return ok;
    }
    if (!gst_m2i_caps_info_check_even (&self->in_info, "input", &err)) {
      gboolean ok = refuse_caps (self, "%s", err->message);
      g_clear_error (&err);
      return ok;
    }
    self->mode = deferred ? INPUT_DEFERRED : self->input_kind == GST_M2I_INPUT_IMAGE
        ? INPUT_VIDEO : INPUT_PLANES;
  }
  if (self->mode == INPUT_DEFERRED || self->mode == INPUT_VIDEO) {
    if (!compute_norm (self, &err)) {
      gboolean ok = refuse_caps (self, "%s", err->message);
      g_clear_error (&err);
      return ok;
    }
    ensure_staging (self);
  }

  GST_OBJECT_LOCK (self);
  GstM2iInferOutput output = self->output;
  GST_OBJECT_UNLOCK (self);
  GstCaps *out;
  if (output == GST_M2I_INFER_OUTPUT_TENSORS) {
    out = gst_caps_copy (self->output_tensor_caps);
    gst_caps_set_simple (out, "framerate", GST_TYPE_FRACTION, self->fps_n, self->fps_d, NULL);
  } else if (deferred) {
    out = chain_source_caps (self->sinkpad);
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
    clear_negotiated (self);
    gboolean tensors = output == GST_M2I_INFER_OUTPUT_TENSORS;
    gboolean ok = refuse_caps (self, "downstream does not accept %s (%s): link an element "
        "that takes them, or set %s", str, tensors ? "the model's outputs, output=tensors"
        : "the frames m2iinfer passes on, output=meta", tensors ? "output=meta to pass the "
        "frames on" : "output=tensors to push the model's outputs instead");
    g_free (str);
    return ok;
  }
  return push_src_caps (self, out);
}

/* ---- pads: queries and events -------------------------------------------- */

static gboolean
gst_m2i_infer_sink_query (GstPad *pad, GstObject *parent, GstQuery *query)
{
  GstM2iInfer *self = GST_M2I_INFER (parent);
  if (gst_m2i_query_is_neighbour (query)) {
    gst_m2i_neighbour_query_answer (query, pad, fusion_on (self));
    return TRUE;
  }
  switch (GST_QUERY_TYPE (query)) {
    case GST_QUERY_ACCEPT_CAPS: {
      /* Anything of the template (deferred frames only with fusion): caps
       * that do not fit the model are refused when they arrive, with a
       * message saying why and what would fit. */
      GstCaps *caps, *tmpl = gst_pad_get_pad_template_caps (pad);
      gst_query_parse_accept_caps (query, &caps);
      gboolean ok = gst_caps_is_subset (caps, tmpl)
          && (!gst_m2i_caps_is_deferred (caps, 0) || fusion_on (self));
      gst_caps_unref (tmpl);
      gst_query_set_accept_caps_result (query, ok);
      return TRUE;
    }
    case GST_QUERY_CAPS: {
      GstCaps *filter, *caps;
      gst_query_parse_caps (query, &filter);
      caps = sink_caps (self, filter);
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

static gboolean
gst_m2i_infer_src_query (GstPad *pad, GstObject *parent, GstQuery *query)
{
  if (GST_QUERY_TYPE (query) == GST_QUERY_CAPS) {
    GstCaps *filter, *caps = gst_pad_get_current_caps (pad);
    gst_query_parse_caps (query, &filter);
    if (!caps)
      caps = gst_pad_get_pad_template_caps (pad);
    if (filter) {
      GstCaps *tmp = gst_caps_intersect_full (filter, caps, GST_CAPS_INTERSECT_FIRST);
      gst_caps_unref (caps);
      caps = tmp;
    }
    gst_query_set_caps_result (query, caps);
    gst_caps_unref (caps);
    return TRUE;
  }
  return gst_pad_query_default (pad, parent, query);
}

static gboolean
gst_m2i_infer_sink_event (GstPad *pad, GstObject *parent, GstEvent *event)
{
  GstM2iInfer *self = GST_M2I_INFER (parent);
  if (GST_EVENT_TYPE (event) == GST_EVENT_CAPS) {
    GstCaps *caps;
    gst_event_parse_caps (event, &caps);
    gboolean ok = set_sink_caps (self, caps);
    gst_event_unref (event);
    return ok;
  }
  if (GST_EVENT_TYPE (event) == GST_EVENT_FLUSH_STOP)
    self->since_flush = 0;        /* streaming thread stopped: no race with chain */
  return gst_pad_event_default (pad, parent, event);
}

/* ---- pre-processing ------------------------------------------------------- */

/* Appends the op @op to @ops; FALSE when the list is full. */
static gboolean
add_op (M2iOpList *ops, const M2iOp *op)
{
  if (ops->n_ops >= M2I_MAX_OPS)
    return FALSE;
  ops->ops[ops->n_ops++] = *op;
  return TRUE;
}

/* Appends to @f the ops that turn what it holds (its result) into the
 * model's input: planar float of the model's size, normalised when the data
 * were pixels. With a split plan's pre-processing head those are the head's
 * own ops (the model's csc order, resize and normalisation); otherwise they
 * come from the properties. Pixels become @pixel_type. Fills @out_format. */
static gboolean
append_model_ops (GstM2iInfer *self, GstM2iDeferredFrame *f, M2iDataType pixel_type,
    M2iFormat *out_format, GError **error)
{
  const M2iSplitHead *head = gst_m2i_infer_model_head (self->model);
  GST_OBJECT_LOCK (self);
  M2iChannelOrder order = self->channel_order;
  M2iResizeMode mode = self->resize_mode;
  GST_OBJECT_UNLOCK (self);
  M2iFormat cur = f->result.format;
  gint w = f->result.width, h = f->result.height;
  gboolean pixels = m2i_format_dtype (cur) == M2I_DTYPE_U8;
  gboolean yuv = m2i_format_is_yuv (cur);
  M2iLayout layout = yuv ? M2I_LAYOUT_INTERLEAVED : m2i_format_layout (cur);
  gboolean resize = w != self->model_w || h != self->model_h;
  M2iOpList *ops = &f->ops;
  guint before = ops->n_ops;
  gboolean ok = TRUE;
  M2iOp op;
  if (head && pixels) {
    /* The head's ops, those that apply to what arrives: its csc only for
     * YUV, its resize only when the size differs. */
    for (guint i = 0; ok && i < head->ops.n_ops; i++) {
      const M2iOp *hop = &head->ops.ops[i];
      switch (hop->kind) {
        case M2I_OP_CSC:
          ok = !yuv || add_op (ops, hop);
          break;
        case M2I_OP_RESIZE:
          ok = !resize || add_op (ops, hop);
          resize = FALSE;
          break;
        case M2I_OP_PERMUTE:
          ok = layout != M2I_LAYOUT_INTERLEAVED || add_op (ops, hop);
          layout = M2I_LAYOUT_PLANAR;
          break;
        default:
          ok = add_op (ops, hop);
          break;
      }
    }
    yuv = pixels = FALSE;
  }
  if (ok && yuv)
    ok = m2i_op_list_add_csc (ops, order);
  if (ok && pixels)
    ok = m2i_op_list_add_convert (ops, pixel_type);
  if (ok && resize) {
    /* Before the permute, as the seed's fused pattern has it. */
    M2iResizeParams rp;
    m2i_resize_params_init (&rp, self->model_w, self->model_h);
    rp.mode = mode;
    memset (&op, 0, sizeof op);
    op.kind = M2I_OP_RESIZE;
    op.u.resize = rp;
    ok = add_op (ops, &op);
  }
  if (ok && layout == M2I_LAYOUT_INTERLEAVED)
    ok = m2i_op_list_add_permute (ops);
  if (ok && pixels && self->norm_active)
    ok = m2i_op_list_add_norm (ops, &self->norm);
  if (!ok) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_UNSUPPORTED,
        "the m2i chain upstream already holds %u ops; the model's pre-processing does not "
        "fit into one plan: do part of it upstream (e.g. m2iresize to %dx%d)", before,
        self->model_w, self->model_h);
    return FALSE;
  }
  for (guint i = before; i < ops->n_ops && f->letterbox.active; i++) {
    M2iOpKind k = ops->ops[i].kind;
    if (k == M2I_OP_CSC || k == M2I_OP_RESIZE) {
      g_set_error (error, M2I_ERROR, M2I_ERROR_UNSUPPORTED,
          "the m2i chain upstream letterboxes to %dx%d, but the model takes %dx%d: make "
          "m2iresize produce the model's size", w, h, self->model_w, self->model_h);
      return FALSE;
    }
  }
  gint ow, oh;
  if (!gst_m2i_ops_output (f->source_image.format, f->source_image.width,
          f->source_image.height, ops->ops, ops->n_ops, out_format, &ow, &oh)) {
    gchar *str = m2i_op_list_to_string (ops);
    g_set_error (error, M2I_ERROR, M2I_ERROR_UNSUPPORTED,
        "the pre-processing %s does not apply to a %s frame", str,
        m2i_format_to_string (f->source_image.format));
    g_free (str);
    return FALSE;
  }
  return TRUE;
}

/* Converts the planar image @src into @dst (same size and channel
 * order, fp16 <-> fp32), plane by plane, row by row. */
static void
convert_planes (const M2iImage *src, const M2iImage *dst)
{
  gboolean widen = m2i_format_dtype (src->format) == M2I_DTYPE_F16;
  for (int p = 0; p < 3; p++)
    for (gint y = 0; y < src->height; y++) {
      const guint8 *s = src->data[p] + (gsize) y * src->stride[p];
      guint8 *d = dst->data[p] + (gsize) y * dst->stride[p];
      if (widen)
        m2i_f16_to_f32_n ((const m2i_f16 *) s, (float *) d, (gsize) src->width);
      else
        m2i_f32_to_f16_n ((const float *) s, (m2i_f16 *) d, (gsize) src->width);
    }
}

/* Runs @f's ops (and the model's, appended) into the model's input image:
 * directly when the plan's output type is the input's, through the staging
 * tensor otherwise; planes in the model's channel order (the head's when
 * the split plan has one, else channel-order). */
static gboolean
run_preprocessing (GstM2iInfer *self, GstM2iDeferredFrame *f, GError **error)
{
  M2iImage target;
  if (!gst_m2i_infer_model_image (self->model, &target, error))
    return FALSE;
  const M2iSplitHead *head = gst_m2i_infer_model_head (self->model);
  GST_OBJECT_LOCK (self);
  M2iChannelOrder order = head ? m2i_format_order (head->out_format) : self->channel_order;
  M2iPlanOptions opts;
  m2i_plan_options_init (&opts);
  opts.profile = self->profile;
  opts.n_threads = (gint) self->n_threads;
  GST_OBJECT_UNLOCK (self);
  M2iDataType tdt = m2i_format_dtype (target.format);
  /* u8 pixels become fp16 (the M2I block's type) unless the target is f32
   * and the extended profile can write fp32. */
  M2iDataType pixel_type = tdt == M2I_DTYPE_F32 && opts.profile == M2I_PROFILE_EXTENDED
      ? M2I_DTYPE_F32 : M2I_DTYPE_F16;
  M2iFormat fmt;
  if (!append_model_ops (self, f, pixel_type, &fmt, error))
    return FALSE;
  M2iDataType dt = m2i_format_dtype (fmt);
  if (m2i_format_layout (fmt) != M2I_LAYOUT_PLANAR || (dt != M2I_DTYPE_F16 && dt != M2I_DTYPE_F32)) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_UNSUPPORTED,
        "the pre-processing yields %s, not the planar fp16/fp32 tensor the model takes",
        m2i_format_to_string (fmt));
    return FALSE;
  }
  gboolean direct = dt == tdt;
  M2iImage out;
  if (direct) {
    out = target;
  } else {
    m2i_image_wrap (&out, fmt, self->model_w, self->model_h, self->staging, self->staging_size,
        0, NULL);
  }
  out.format = fmt;
  if (m2i_format_order (fmt) != order) {
    /* Tensor channel c holds the frame's channel 2 - c: swap the planes. */
    guint8 *t = out.data[0];
    gsize ts = out.size[0], st = out.stride[0];
    out.data[0] = out.data[2];
    out.size[0] = out.size[2];
    out.stride[0] = out.stride[2];
    out.data[2] = t;
    out.size[2] = ts;
    out.stride[2] = st;
  }
  gboolean replanned = FALSE;
  if (!gst_m2i_plan_cache_run (&self->cache, f, &out, &opts, &replanned, error))
    return FALSE;
  if (!direct) {
    /* out's planes are in the model's order now, as target's */
    M2iImage staged;
    m2i_image_wrap (&staged, fmt, self->model_w, self->model_h, self->staging,
        self->staging_size, 0, NULL);
    convert_planes (&staged, &target);
  }
  if (replanned || self->report) {
    self->report = FALSE;
    const char *swap = m2i_format_order (fmt) != order ? ", channels swapped" : "";
    set_fused (self, g_strdup_printf ("%s%s%s: %s -> model input %s (%s)%s; model on %s",
            f->chain, f->chain[0] ? " + " : "", GST_ELEMENT_NAME (self),
            self->cache.description, direct ? m2i_format_to_string (fmt)
            : dt == M2I_DTYPE_F16 ? "fp16 widened to fp32" : "fp32 narrowed to fp16",
            order == M2I_ORDER_RGB ? "RGB" : "BGR", swap,
            gst_m2i_infer_model_describe (self->model)));
  }
  return TRUE;
}

/* Copies the NV12/I420 planes of @buf into the model's u8 inputs. */
static gboolean
feed_planes (GstM2iInfer *self, GstBuffer *buf, GError **error)
{
  GstMapInfo map;
  M2iImage img;
  gsize offs[M2I_MAX_PLANES];
  if (!gst_buffer_map (buf, &map, GST_MAP_READ)) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, "cannot map the input buffer");
    return FALSE;
  }
  gboolean ok = gst_m2i_image_from_buffer (&self->in_info, buf, &map, M2I_ORDER_RGB, &img, offs,
      error) && m2i_image_check (&img, "input", TRUE, error);
  for (guint p = 0; ok && p < m2i_format_n_planes (img.format); p++) {
    gsize row;
    gint rows;
    m2i_format_plane_geometry (img.format, img.width, img.height, p, &row, &rows);
    guint8 *dst = gst_m2i_infer_model_input (self->model, (gint) p)->data;
    for (gint y = 0; y < rows; y++)
      memcpy (dst + (gsize) y * row, img.data[p] + (gsize) y * img.stride[p], row);
  }
  gst_buffer_unmap (buf, &map);
  if (ok && self->report) {
    self->report = FALSE;
    set_fused (self, g_strdup_printf ("%s: %s planes straight into the model's "
            "PrePostProcessor head; model on %s", GST_ELEMENT_NAME (self),
            m2i_format_to_string (img.format), gst_m2i_infer_model_describe (self->model)));
  }
  return ok;
}

/* Copies tensor @i (@src, the caps' type) into the model's input @i. */
static void
copy_tensor (GstM2iInfer *self, guint i, const guint8 *src)
{
  M2iTensor *t = gst_m2i_infer_model_input (self->model, (gint) i);
  gsize bytes = self->in_tensor_bytes[i];
  if (self->in_tensor_type[i] == M2I_ET_F16 && t->type == M2I_ET_F32)
    m2i_f16_to_f32_n ((const m2i_f16 *) src, t->data, bytes / sizeof (m2i_f16));
  else if (self->in_tensor_type[i] == M2I_ET_F32 && t->type == M2I_ET_F16)
    m2i_f32_to_f16_n ((const float *) src, t->data, bytes / sizeof (float));
  else
    memcpy (t->data, src, bytes);   /* setup_tensor_input checked the types */
}

/* Copies the tensors of @buf into the model's inputs (fp16 widened): one
 * memory per tensor (NNStreamer's layout) or all of them one after another. */
static gboolean
feed_tensors (GstM2iInfer *self, GstBuffer *buf, GError **error)
{
  guint n = self->n_in_tensors;
  GstMapInfo map;
  gboolean ok = TRUE;
  if (n > 1 && gst_buffer_n_memory (buf) == n) {
    for (guint i = 0; i < n && ok; i++) {
      GstMemory *mem = gst_buffer_peek_memory (buf, i);
      if (!gst_memory_map (mem, &map, GST_MAP_READ)) {
        g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, "cannot map tensor %u", i);
        return FALSE;
      }
      if (map.size < self->in_tensor_bytes[i]) {
        g_set_error (error, M2I_ERROR, M2I_ERROR_BUFFER_TOO_SMALL,
            "tensor %u of the input buffer holds %" G_GSIZE_FORMAT " bytes, the caps describe %"
            G_GSIZE_FORMAT, i, map.size, self->in_tensor_bytes[i]);
        ok = FALSE;
      } else {
        copy_tensor (self, i, map.data);
      }
      gst_memory_unmap (mem, &map);
    }
  } else {
    gsize total = 0;
    for (guint i = 0; i < n; i++)
      total += self->in_tensor_bytes[i];
    if (!gst_buffer_map (buf, &map, GST_MAP_READ)) {
      g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, "cannot map the input buffer");
      return FALSE;
    }
    if (map.size < total) {
      g_set_error (error, M2I_ERROR, M2I_ERROR_BUFFER_TOO_SMALL,
          "the input buffer holds %" G_GSIZE_FORMAT " bytes, the caps describe %" G_GSIZE_FORMAT,
          map.size, total);
      ok = FALSE;
    }
    gsize off = 0;
    for (guint i = 0; ok && i < n; i++) {
      copy_tensor (self, i, map.data + off);
      off += self->in_tensor_bytes[i];
    }
    gst_buffer_unmap (buf, &map);
  }
  if (ok && self->report) {
    self->report = FALSE;
    set_fused (self, g_strdup_printf ("%s: %u input tensor%s copied in; model on %s",
            GST_ELEMENT_NAME (self), n, n == 1 ? "" : "s",
            gst_m2i_infer_model_describe (self->model)));
  }
  return ok;
}

/* ---- output=tensors buffers ------------------------------------------------- */

/* A pool whose buffers hold one memory per model output (NNStreamer's
 * static other/tensors layout), so that steady state allocates nothing. */
typedef struct {
  GstBufferPool parent;
  guint n;
  gsize sizes[MAX_TENSORS];
} GstM2iTensorsPool;

typedef struct {
  GstBufferPoolClass parent_class;
} GstM2iTensorsPoolClass;

static GType gst_m2i_tensors_pool_get_type (void);
G_DEFINE_TYPE (GstM2iTensorsPool, gst_m2i_tensors_pool, GST_TYPE_BUFFER_POOL);

static GstFlowReturn
tensors_pool_alloc (GstBufferPool *pool, GstBuffer **buffer, GstBufferPoolAcquireParams *params)
{
  GstM2iTensorsPool *self = (GstM2iTensorsPool *) pool;
  GstBuffer *buf = gst_buffer_new ();
  for (guint i = 0; i < self->n; i++)
    gst_buffer_append_memory (buf, gst_allocator_alloc (NULL, self->sizes[i], NULL));
  *buffer = buf;
  return GST_FLOW_OK;
}

static void
gst_m2i_tensors_pool_class_init (GstM2iTensorsPoolClass *klass)
{
  GST_BUFFER_POOL_CLASS (klass)->alloc_buffer = tensors_pool_alloc;
}

static void
gst_m2i_tensors_pool_init (GstM2iTensorsPool *self)
{
}

static gboolean
ensure_tensor_pool (GstM2iInfer *self, GError **error)
{
  if (self->tensor_pool)
    return TRUE;
  gint n = gst_m2i_infer_model_n_outputs (self->model);
  if (n > MAX_TENSORS) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_UNSUPPORTED,
        "the model has %d outputs; output=tensors carries at most %d", n, MAX_TENSORS);
    return FALSE;
  }
  GstM2iTensorsPool *pool = g_object_new (gst_m2i_tensors_pool_get_type (), NULL);
  gst_object_ref_sink (pool);
  gsize total = 0;
  pool->n = (guint) n;
  for (gint i = 0; i < n; i++) {
    pool->sizes[i] = m2i_tensor_nbytes (gst_m2i_infer_model_output (self->model, i));
    total += pool->sizes[i];
  }
  GstStructure *config = gst_buffer_pool_get_config (GST_BUFFER_POOL (pool));
  gst_buffer_pool_config_set_params (config, self->output_tensor_caps, (guint) total, 2, 0);
  if (!gst_buffer_pool_set_config (GST_BUFFER_POOL (pool), config)
      || !gst_buffer_pool_set_active (GST_BUFFER_POOL (pool), TRUE)) {
    gst_object_unref (pool);
    g_set_error (error, M2I_ERROR, M2I_ERROR_FAILED, "cannot set up the output tensor pool");
    return FALSE;
  }
  self->tensor_pool = GST_BUFFER_POOL (pool);
  return TRUE;
}

/* ---- per frame ------------------------------------------------------------------ */

typedef struct {
  guint interval, top_k;
  float threshold;
  gboolean post_messages;
  GstM2iInferOutput output;
} FrameSettings;

static void
get_frame_settings (GstM2iInfer *self, FrameSettings *fs)
{
  GST_OBJECT_LOCK (self);
  fs->interval = MAX (self->interval, 1);
  fs->top_k = self->top_k;
  fs->threshold = (float) self->threshold;
  fs->post_messages = self->post_messages;
  fs->output = self->output;
  GST_OBJECT_UNLOCK (self);
}

/* Where the model's input lies in the frame the results refer to. */
static void
frame_map (GstM2iInfer *self, const GstM2iDeferredFrame *f, GstM2iFrameMap *map)
{
  map->x0 = map->y0 = 0.0;
  map->sx = map->sy = 1.0;
  map->width = map->height = 0;
  switch (self->mode) {
    case INPUT_DEFERRED: {
      map->width = f->source_image.width;
      map->height = f->source_image.height;
      M2iFormat fmt;
      gint pw, ph;
      const GstM2iLetterbox *lb = &f->letterbox;
      if (lb->active && f->result.width > 0 && f->result.height > 0
          && gst_m2i_deferred_frame_ops_output (f, &fmt, &pw, &ph)) {
        map->x0 = (double) lb->x / f->result.width;
        map->y0 = (double) lb->y / f->result.height;
        map->sx = (double) pw / f->result.width;
        map->sy = (double) ph / f->result.height;
      }
      break;
    }
    case INPUT_VIDEO:
    case INPUT_PLANES:
      map->width = self->in_info.width;
      map->height = self->in_info.height;
      break;
    case INPUT_TENSORS:
      if (self->input_kind == GST_M2I_INPUT_IMAGE) {
        map->width = self->model_w;
        map->height = self->model_h;
      }
      break;
    default:
      break;
  }
}

/* Reads the last inference's outputs and hands them out: tensor meta and
 * region metas on @buf (when not NULL), bus message. */
static void
publish_results (GstM2iInfer *self, GstBuffer *buf, const GstM2iFrameMap *map,
    const FrameSettings *fs, guint64 index, GstClockTime pts)
{
  gint n_out = gst_m2i_infer_model_n_outputs (self->model);
  for (gint i = 0; i < n_out; i++)
    self->outputs[i] = *gst_m2i_infer_model_output (self->model, i);
  if (buf)
    gst_buffer_add_m2i_tensor_meta (buf, self->ctx.model_name, (guint) n_out, self->outputs,
        self->output_names);
  const GstM2iClass *classes = NULL;
  const GstM2iDetection *dets = NULL;
  guint n = 0;
  if (n_out > 0 && self->outputs[0].type == M2I_ET_F32) {
    const float *data = self->outputs[0].data;
    if (self->output_kind == GST_M2I_OUTPUT_CLASSES) {
      n = gst_m2i_top_classes (data, (guint) self->n_classes, self->softmax,
          MIN (fs->top_k, MAX_TOP_K), self->classes);
      classes = self->classes;
      if (buf)
        gst_m2i_attach_classification (buf, &self->ctx, map, classes, n);
    } else if (self->output_kind == GST_M2I_OUTPUT_DETECTIONS) {
      n = gst_m2i_parse_detections (data, (guint) self->n_classes, fs->threshold, self->dets,
          (guint) self->n_classes);
      dets = self->dets;
      if (buf)
        gst_m2i_attach_detections (buf, &self->ctx, map, dets, n);
    }
  }
  if (fs->post_messages) {
    GstStructure *s = gst_m2i_result_message (&self->ctx, map, index, pts, classes, dets, n);
    gst_element_post_message (GST_ELEMENT (self), gst_message_new_element (GST_OBJECT (self), s));
  }
}

/* output=meta with deferred input: the source video leaves the element;
 * renegotiate when it is not what the caps said (a chain that materialised
 * part of itself hands over another frame). */
static gboolean
check_source_caps (GstM2iInfer *self, const M2iImage *src)
{
  GstM2iCapsFormat cf = gst_m2i_caps_format_from_m2i (src->format);
  if (self->src_is_video && GST_VIDEO_INFO_WIDTH (&self->src_vinfo) == src->width
      && GST_VIDEO_INFO_HEIGHT (&self->src_vinfo) == src->height
      && !g_strcmp0 (gst_video_format_to_string (GST_VIDEO_INFO_FORMAT (&self->src_vinfo)),
          gst_m2i_caps_format_name (cf)))
    return TRUE;
  GstStructure *s = gst_m2i_structure_new_sized (cf, src->width, src->height);
  gst_structure_set (s, "framerate", GST_TYPE_FRACTION, self->fps_n, self->fps_d, NULL);
  GstCaps *caps = gst_caps_new_full (s, NULL);
  GST_INFO_OBJECT (self, "the chain's source frame is %s %dx%d: renegotiating",
      m2i_format_to_string (src->format), src->width, src->height);
  return push_src_caps (self, caps);
}

static GstFlowReturn
gst_m2i_infer_chain (GstPad *pad, GstObject *parent, GstBuffer *inbuf)
{
  GstM2iInfer *self = GST_M2I_INFER (parent);
  GstM2iDeferredFrame *f = &self->work;
  GError *err = NULL;
  FrameSettings fs;
  get_frame_settings (self, &fs);
  if (self->mode == INPUT_NONE) {
    gst_buffer_unref (inbuf);
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, ("%s: a buffer before any caps",
            GST_ELEMENT_NAME (self)), (NULL));
    return GST_FLOW_NOT_NEGOTIATED;
  }
  guint64 index = self->n_frames++;
  gboolean infer = self->since_flush++ % fs.interval == 0;

  gst_m2i_deferred_frame_init (f);
  if ((self->mode == INPUT_DEFERRED || self->mode == INPUT_VIDEO)
      && !gst_m2i_deferred_frame_borrow (f, &self->in_info, inbuf, &err))
    goto failed;
  GstM2iFrameMap map;
  frame_map (self, f, &map);

  if (infer) {
    gboolean ok;
    if (self->params_changed) {
      self->params_changed = FALSE;
      if (!compute_norm (self, &err))
        goto failed;
    }
    switch (self->mode) {
      case INPUT_DEFERRED:
      case INPUT_VIDEO:
        ok = run_preprocessing (self, f, &err);
        break;
      case INPUT_PLANES:
        ok = feed_planes (self, inbuf, &err);
        break;
      default:
        ok = feed_tensors (self, inbuf, &err);
        break;
    }
    if (!ok || !gst_m2i_infer_model_infer (self->model, &err))
      goto failed;
  }

  GstClockTime pts = GST_BUFFER_PTS (inbuf);
  if (fs.output == GST_M2I_INFER_OUTPUT_TENSORS) {
    if (!infer) {
      /* Results only on inferred frames: nothing to push. */
      gst_m2i_deferred_frame_init (f);
      gst_buffer_unref (inbuf);
      return GST_FLOW_OK;
    }
    GstBuffer *out = NULL;
    if (!ensure_tensor_pool (self, &err))
      goto failed;
    if (gst_buffer_pool_acquire_buffer (self->tensor_pool, &out, NULL) != GST_FLOW_OK) {
      gst_m2i_deferred_frame_init (f);
      gst_buffer_unref (inbuf);
      return GST_FLOW_FLUSHING;
    }
    for (guint i = 0; i < gst_buffer_n_memory (out); i++) {
      GstMapInfo mi;
      const M2iTensor *t = gst_m2i_infer_model_output (self->model, (gint) i);
      gst_buffer_map_range (out, i, 1, &mi, GST_MAP_WRITE);
      memcpy (mi.data, t->data, MIN (mi.size, m2i_tensor_nbytes (t)));
      gst_buffer_unmap (out, &mi);
    }
    gst_buffer_copy_into (out, inbuf, GST_BUFFER_COPY_TIMESTAMPS, 0, -1);
    publish_results (self, NULL, &map, &fs, index, pts);
    gst_m2i_deferred_frame_init (f);
    gst_buffer_unref (inbuf);
    return gst_pad_push (self->srcpad, out);
  }

  /* output=meta: the frame itself leaves, with the results. */
  GstBuffer *out;
  gboolean deferred = self->mode == INPUT_DEFERRED;
  M2iImage src_geometry = f->source_image;
  if (deferred) {
    out = gst_buffer_ref (f->source);
    gst_m2i_deferred_frame_init (f);
    GstClockTime dts = GST_BUFFER_DTS (inbuf), dur = GST_BUFFER_DURATION (inbuf);
    guint64 off = GST_BUFFER_OFFSET (inbuf), off_end = GST_BUFFER_OFFSET_END (inbuf);
    /* Dropping the deferred frame drops its reference to the source, which
     * is then usually ours alone: writable without a copy. */
    gst_buffer_unref (inbuf);
    out = gst_buffer_make_writable (out);
    GST_BUFFER_PTS (out) = pts;
    GST_BUFFER_DTS (out) = dts;
    GST_BUFFER_DURATION (out) = dur;
    GST_BUFFER_OFFSET (out) = off;
    GST_BUFFER_OFFSET_END (out) = off_end;
    if (!check_source_caps (self, &src_geometry)) {
      gst_buffer_unref (out);
      return GST_FLOW_NOT_NEGOTIATED;
    }
  } else {
    gst_m2i_deferred_frame_init (f);
    out = gst_buffer_make_writable (inbuf);
  }
  if (infer)
    publish_results (self, out, &map, &fs, index, pts);
  return gst_pad_push (self->srcpad, out);

failed:
  gst_m2i_deferred_frame_init (f);
  gst_buffer_unref (inbuf);
  GST_ELEMENT_ERROR (self, STREAM, FAILED, ("%s: %s", GST_ELEMENT_NAME (self), err->message),
      (NULL));
  g_clear_error (&err);
  return GST_FLOW_ERROR;
}

/* ---- properties -------------------------------------------------------------------- */

static void
gst_m2i_infer_set_property (GObject *object, guint prop_id, const GValue *value,
    GParamSpec *pspec)
{
  GstM2iInfer *self = GST_M2I_INFER (object);
  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_MODEL:
      g_free (self->model_path);
      self->model_path = g_value_dup_string (value);
      break;
    case PROP_DEVICE:
      g_free (self->device);
      self->device = g_value_dup_string (value);
      break;
    case PROP_LABELS:
      g_free (self->labels_path);
      self->labels_path = g_value_dup_string (value);
      break;
    case PROP_THRESHOLD:
      self->threshold = g_value_get_double (value);
      break;
    case PROP_TOP_K:
      self->top_k = g_value_get_uint (value);
      break;
    case PROP_INFERENCE_INTERVAL:
      self->interval = g_value_get_uint (value);
      break;
    case PROP_MAX_MEMORY:
      self->max_memory = g_value_get_uint64 (value);
      break;
    case PROP_N_THREADS:
      self->n_threads = g_value_get_uint (value);
      break;
    case PROP_SPLIT_DIR:
      g_free (self->split_dir);
      self->split_dir = g_value_dup_string (value);
      break;
    case PROP_OUTPUT:
      self->output = g_value_get_enum (value);
      break;
    case PROP_POST_MESSAGES:
      self->post_messages = g_value_get_boolean (value);
      break;
    case PROP_CHANNEL_ORDER:
      self->channel_order = g_value_get_enum (value);
      break;
    case PROP_RESIZE_MODE:
      self->resize_mode = g_value_get_enum (value);
      break;
    case PROP_MEAN:
      gst_m2i_channels_set (&self->mean, "mean", value);
      self->params_changed = TRUE;
      break;
    case PROP_STD:
      gst_m2i_channels_set (&self->std, "std", value);
      self->params_changed = TRUE;
      break;
    case PROP_INPUT_SCALE:
      self->input_scale = g_value_get_double (value);
      self->params_changed = TRUE;
      break;
    case PROP_PROFILE:
      self->profile = g_value_get_enum (value);
      break;
    case PROP_FUSION:
      self->fusion = g_value_get_boolean (value);
      break;
    default:
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
    case PROP_MODEL:
      g_value_set_string (value, self->model_path);
      break;
    case PROP_DEVICE:
      g_value_set_string (value, self->device);
      break;
    case PROP_LABELS:
      g_value_set_string (value, self->labels_path);
      break;
    case PROP_THRESHOLD:
      g_value_set_double (value, self->threshold);
      break;
    case PROP_TOP_K:
      g_value_set_uint (value, self->top_k);
      break;
    case PROP_INFERENCE_INTERVAL:
      g_value_set_uint (value, self->interval);
      break;
    case PROP_MAX_MEMORY:
      g_value_set_uint64 (value, self->max_memory);
      break;
    case PROP_N_THREADS:
      g_value_set_uint (value, self->n_threads);
      break;
    case PROP_SPLIT_DIR:
      g_value_set_string (value, self->split_dir);
      break;
    case PROP_OUTPUT:
      g_value_set_enum (value, self->output);
      break;
    case PROP_POST_MESSAGES:
      g_value_set_boolean (value, self->post_messages);
      break;
    case PROP_CHANNEL_ORDER:
      g_value_set_enum (value, self->channel_order);
      break;
    case PROP_RESIZE_MODE:
      g_value_set_enum (value, self->resize_mode);
      break;
    case PROP_MEAN:
      gst_m2i_channels_get (&self->mean, value);
      break;
    case PROP_STD:
      gst_m2i_channels_get (&self->std, value);
      break;
    case PROP_INPUT_SCALE:
      g_value_set_double (value, self->input_scale);
      break;
    case PROP_PROFILE:
      g_value_set_enum (value, self->profile);
      break;
    case PROP_FUSION:
      g_value_set_boolean (value, self->fusion);
      break;
    case PROP_FUSED:
      g_value_set_string (value, self->fused);
      break;
    default:
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
  g_free (self->labels_path);
  g_free (self->split_dir);
  g_free (self->fused);
  gst_m2i_channels_clear (&self->mean);
  gst_m2i_channels_clear (&self->std);
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
      g_param_spec_string ("labels", "Labels", "Text file with one label a line, line 1 = "
          "class 0 (e.g. models/fashion-mnist/labels.txt); without it labels read "
          "\"class-<id>\"", NULL, ready));
  g_object_class_install_property (gobject_class, PROP_THRESHOLD,
      g_param_spec_double ("threshold", "Threshold", "Smallest confidence of a detection "
          "to report (detection models); classifiers always report their top-k classes",
          0.0, 1.0, DEFAULT_THRESHOLD, playing));
  g_object_class_install_property (gobject_class, PROP_TOP_K,
      g_param_spec_uint ("top-k", "Top k", "Classes reported per frame by a classifier, best "
          "first (the region meta's label is the best; with k > 1 its structure and the "
          "message also list top_labels/top_label_ids/top_confidences)", 1, MAX_TOP_K,
          DEFAULT_TOP_K, playing));
  g_object_class_install_property (gobject_class, PROP_INFERENCE_INTERVAL,
      g_param_spec_uint ("inference-interval", "Inference interval", "Run the model on every "
          "N-th frame (1 = all): frames 0, N, 2N, ... since PAUSED or the last flushing "
          "seek. Other "
          "frames pass through without results or pre-processing (output=meta) or produce "
          "nothing (output=tensors)", 1, G_MAXUINT, DEFAULT_INTERVAL, playing));
  g_object_class_install_property (gobject_class, PROP_N_THREADS,
      g_param_spec_uint ("n-threads", "Threads", "Threads of the process-wide worker pool "
          "used per inference and per M2I task (row slices); 0 = one per CPU core", 0, 64,
          DEFAULT_N_THREADS, ready));
  g_object_class_install_property (gobject_class, PROP_MAX_MEMORY,
      g_param_spec_uint64 ("max-memory", "Maximum memory", "Bytes the model may need once "
          "loaded: constants computed when it is compiled, the buffers and scratch of an "
          "inference, and with split execution every piece's and device program's; a model "
          "whose declared tensor sizes need more fails the state change with a message "
          "(raise this if it really needs it)", 1, G_MAXUINT64, DEFAULT_MAX_MEMORY, ready));
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
  g_object_class_install_property (gobject_class, PROP_CHANNEL_ORDER,
      g_param_spec_enum ("channel-order", "Channel order", "Channel order of the model's "
          "input tensor (OpenVINO model zoo models take bgr). Applied to whatever arrives: "
          "csc output order for YUV, plane order otherwise", GST_TYPE_M2I_CHANNEL_ORDER,
          DEFAULT_CHANNEL_ORDER, playing));
  g_object_class_install_property (gobject_class, PROP_RESIZE_MODE,
      g_param_spec_enum ("resize-mode", "Resize mode", "Interpolation when m2iinfer resizes "
          "frames to the model's size itself (half_pixel coordinates)",
          GST_TYPE_M2I_RESIZE_MODE, DEFAULT_RESIZE_MODE, playing));
  g_object_class_install_property (gobject_class, PROP_MEAN,
      gst_m2i_param_spec_channels ("mean", "Mean", "Per-channel mean m2iinfer subtracts "
          "when it converts pixels itself (video input, or a deferred chain that ends in u8 "
          "pixels), in units of pixel * input-scale, model channel order; 1 value or 3, e.g. "
          "mean=\"<0.485, 0.456, 0.406>\" (default <0, 0, 0>); any other count is refused "
          "with an error. Tensor input is used as is", playing));
  g_object_class_install_property (gobject_class, PROP_STD,
      gst_m2i_param_spec_channels ("std", "Standard deviation", "Per-channel divisor, same "
          "units and order as mean, positive (default <1, 1, 1>)", playing));
  g_object_class_install_property (gobject_class, PROP_INPUT_SCALE,
      g_param_spec_double ("input-scale", "Input scale", "Factor on pixel values before "
          "mean is subtracted, e.g. 0.00392156862745098 (1/255)", G_MINDOUBLE, G_MAXDOUBLE,
          DEFAULT_INPUT_SCALE, playing));
  g_object_class_install_property (gobject_class, PROP_PROFILE,
      g_param_spec_enum ("profile", "Hardware profile", "The M2I profile m2iinfer plans the "
          "pre-processing with (the whole fused chain's): default is the seed's block "
          "(fp16 output, widened to the model's f32 input); extended fuses norm and writes "
          "the model's f32 input directly when m2iinfer converts pixels itself",
          GST_TYPE_M2I_PROFILE, DEFAULT_PROFILE, playing));
  g_object_class_install_property (gobject_class, PROP_FUSION,
      g_param_spec_boolean ("fusion", "Fusion", "Take deferred frames (memory:M2I) from an "
          "adjacent m2i element, so the chain's pre-processing and the model's run as one "
          "M2I plan into the model's input; false: upstream computes real pixels",
          DEFAULT_FUSION, ready));
  g_object_class_install_property (gobject_class, PROP_FUSED,
      g_param_spec_string ("fused", "Fused", "What ran for the last frames: the elements "
          "whose ops were fused, the M2I plan (ops and device tasks) writing the model's "
          "input, and the device the model runs on", NULL,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));

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
  gst_pad_set_query_function (self->srcpad, GST_DEBUG_FUNCPTR (gst_m2i_infer_src_query));
  gst_pad_use_fixed_caps (self->srcpad);
  gst_element_add_pad (GST_ELEMENT (self), self->srcpad);

  self->device = g_strdup (DEFAULT_DEVICE);
  self->threshold = DEFAULT_THRESHOLD;
  self->top_k = DEFAULT_TOP_K;
  self->interval = DEFAULT_INTERVAL;
  self->n_threads = DEFAULT_N_THREADS;
  self->max_memory = DEFAULT_MAX_MEMORY;
  self->output = DEFAULT_OUTPUT;
  self->post_messages = DEFAULT_POST_MESSAGES;
  self->channel_order = DEFAULT_CHANNEL_ORDER;
  self->resize_mode = DEFAULT_RESIZE_MODE;
  self->input_scale = DEFAULT_INPUT_SCALE;
  self->profile = DEFAULT_PROFILE;
  self->fusion = DEFAULT_FUSION;
  gst_m2i_channels_init (&self->mean, 0.0);
  gst_m2i_channels_init (&self->std, 1.0);
  gst_m2i_plan_cache_init (&self->cache);
  gst_m2i_deferred_frame_init (&self->work);
  self->report = TRUE;
}
