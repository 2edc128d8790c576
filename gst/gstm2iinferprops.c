/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gstm2iinferprops.c — m2iinfer's properties: their specs and defaults, and
 * setting and reading them (the element's fields in gstm2iinfer-private.h;
 * what each does: docs/m2iinfer.md). Settings that change the model apply
 * from the next READY->PAUSED; the others at once. */
#include "gstm2iinfer-private.h"
#include "gstm2ienums.h"

#include <string.h>

#define DEFAULT_DEVICE GST_M2I_INFER_DEFAULT_DEVICE
#define DEFAULT_THRESHOLD 0.5
#define DEFAULT_TOP_K 1
#define DEFAULT_INTERVAL 1
#define DEFAULT_OUTPUT GST_M2I_INFER_OUTPUT_META
#define DEFAULT_POST_MESSAGES TRUE
#define DEFAULT_RESIZE_MODE M2I_RESIZE_LINEAR_ONNX
#define DEFAULT_NIREQ 0
#define DEFAULT_BATCH_SIZE 1
#define DEFAULT_BATCH_TIMEOUT 30
#define DEFAULT_NO_BLOCK FALSE
#define DEFAULT_MAX_MEMORY M2I_IR_DEFAULT_MAX_MEMORY
#define DEFAULT_IOU_THRESHOLD 0.5
#define DEFAULT_CLASS_AGNOSTIC FALSE
#define DEFAULT_MAX_DETECTIONS 300
#define DEFAULT_MODEL_TYPE M2I_MODEL_TYPE_AUTO
#define DEFAULT_RESIZE_TYPE GST_M2I_INFER_RESIZE_AUTO
#define DEFAULT_PAD_VALUE -1
#define MAX_TOP_K GST_M2I_INFER_MAX_TOP_K
#define MAX_DETECTIONS 100000

enum {
  PROP_0, PROP_MODEL, PROP_DEVICE, PROP_LABELS, PROP_THRESHOLD, PROP_TOP_K,
  PROP_INFERENCE_INTERVAL, PROP_N_THREADS, PROP_SPLIT_DIR, PROP_OUTPUT, PROP_POST_MESSAGES,
  PROP_CHANNEL_ORDER, PROP_RESIZE_MODE, PROP_MEAN, PROP_STD, PROP_INPUT_SCALE, PROP_PROFILE,
  PROP_FUSION, PROP_FUSED, PROP_MODEL_TYPE, PROP_IOU_THRESHOLD, PROP_CLASS_AGNOSTIC_NMS,
  PROP_MAX_DETECTIONS, PROP_RESIZE_TYPE, PROP_PAD_VALUE, PROP_EXTRA_INPUTS, PROP_MAX_MEMORY,
  /* installed by gstm2iinferasync.c, in this order */
  PROP_MODEL_INSTANCE_ID, PROP_NIREQ, PROP_BATCH_SIZE, PROP_BATCH_TIMEOUT, PROP_NO_BLOCK,
  PROP_SKIPPED,
  PROP_INFERENCE_REGION,          /* + object-class, reclassify-interval: gstm2iinferroi.c */
};

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
    case PROP_MAX_MEMORY: self->max_memory = g_value_get_uint64 (value); break;
    case PROP_OUTPUT: self->output = g_value_get_enum (value); break;
    case PROP_POST_MESSAGES: self->post_messages = g_value_get_boolean (value); break;
    case PROP_MODEL_INSTANCE_ID: set_string (&self->instance_id, value); break;
    case PROP_NIREQ: self->nireq = g_value_get_uint (value); break;
    case PROP_BATCH_SIZE: self->batch_size = g_value_get_uint (value); break;
    case PROP_BATCH_TIMEOUT: self->batch_timeout_ms = g_value_get_uint (value); break;
    case PROP_NO_BLOCK: self->no_block = g_value_get_boolean (value); break;
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
    case PROP_MAX_MEMORY: g_value_set_uint64 (value, self->max_memory); break;
    case PROP_OUTPUT: g_value_set_enum (value, self->output); break;
    case PROP_POST_MESSAGES: g_value_set_boolean (value, self->post_messages); break;
    case PROP_RESIZE_MODE: g_value_set_enum (value, self->resize_mode); break;
    case PROP_MODEL_INSTANCE_ID: g_value_set_string (value, self->instance_id); break;
    case PROP_NIREQ: g_value_set_uint (value, self->nireq); break;
    case PROP_BATCH_SIZE: g_value_set_uint (value, self->batch_size); break;
    case PROP_BATCH_TIMEOUT: g_value_set_uint (value, self->batch_timeout_ms); break;
    case PROP_NO_BLOCK: g_value_set_boolean (value, self->no_block); break;
    case PROP_SKIPPED: g_value_set_uint64 (value, self->n_skipped); break;
    default:
      if (!gst_m2i_shared_props_get (&self->props, pspec, value)
          && !gst_m2i_infer_roi_props_get (&self->roi_props, pspec, value))
        G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

/* ---- installing and defaults -------------------------------------------------- */

void
gst_m2i_infer_install_properties (GObjectClass *gobject_class)
{
  GParamFlags ready = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY;
  GParamFlags playing = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING;

  gobject_class->set_property = gst_m2i_infer_set_property;
  gobject_class->get_property = gst_m2i_infer_get_property;
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
  gst_m2i_infer_async_install_properties (gobject_class, PROP_MODEL_INSTANCE_ID);

  gst_m2i_infer_roi_install_properties (gobject_class, PROP_INFERENCE_REGION);
}

void
gst_m2i_infer_props_init (GstM2iInfer *self)
{
  self->device = g_strdup (DEFAULT_DEVICE);
  self->threshold = DEFAULT_THRESHOLD;
  self->iou_threshold = DEFAULT_IOU_THRESHOLD;
  self->class_agnostic = DEFAULT_CLASS_AGNOSTIC;
  self->max_detections = DEFAULT_MAX_DETECTIONS;
  self->model_type = DEFAULT_MODEL_TYPE;
  self->resize_type = DEFAULT_RESIZE_TYPE;
  self->pad_value = DEFAULT_PAD_VALUE;
  self->top_k = DEFAULT_TOP_K;
  self->interval = DEFAULT_INTERVAL;
  self->max_memory = DEFAULT_MAX_MEMORY;
  self->output = DEFAULT_OUTPUT;
  self->post_messages = DEFAULT_POST_MESSAGES;
  self->resize_mode = DEFAULT_RESIZE_MODE;
  self->nireq = DEFAULT_NIREQ;
  self->batch_size = DEFAULT_BATCH_SIZE;
  self->batch_timeout_ms = DEFAULT_BATCH_TIMEOUT;
  self->no_block = DEFAULT_NO_BLOCK;
  gst_m2i_shared_props_init (&self->props);
  gst_m2i_infer_roi_props_init (&self->roi_props);
}
