/* gstm2iinfermodel.h — the model side of m2iinfer (private to the plugin):
 * loading an IR model for a device, what its input wants, running it, and
 * reading its outputs as classes or detections.
 *
 * No GStreamer here beyond GLib: the element (gstm2iinfer.c) deals with caps,
 * buffers and metas; this file with the model.
 */
#pragma once

#include <glib.h>
#include <ir/m2i-ir.h>
#include <m2i/m2i.h>
#include <split/m2i-split.h>

G_BEGIN_DECLS

/* Where the model runs. */
typedef enum {
  GST_M2I_DEVICE_AUTO,         /* the best that works: HETERO:M2I,CPU, else CPU */
  GST_M2I_DEVICE_CPU,
  GST_M2I_DEVICE_M2I,          /* the device alone (split execution) */
  GST_M2I_DEVICE_HETERO,       /* split between the device and the CPU */
} GstM2iDeviceKind;

/* Parses a device string: "AUTO", "CPU", "M2I", "HETERO:<list>" whose list
 * names M2I and/or CPU in priority order (case-insensitive; a list without
 * M2I is the CPU). @canonical (may be NULL) receives, for M2I and HETERO,
 * the upper-case string to split with (g_free). FALSE with @error naming the
 * accepted spellings otherwise. */
gboolean gst_m2i_device_parse (const char *device, GstM2iDeviceKind *kind, gchar **canonical,
    GError **error);

/* What the model's input is, as m2iinfer feeds it. */
typedef enum {
  /* One input, float, [1,3,H,W] (NCHW, 3 colour channels): an image model.
   * m2iinfer writes planar RGB/BGR into it (pre-processing by M2I). */
  GST_M2I_INPUT_IMAGE,
  /* The PrePostProcessor NV12 head: two u8 inputs [1,H,W,1] (Y) and
   * [1,H/2,W/2,2] (interleaved UV); NV12 frames of H x W go in as they are. */
  GST_M2I_INPUT_NV12,
  /* The I420 head: three u8 inputs [1,H,W,1], [1,H/2,W/2,1] x 2. */
  GST_M2I_INPUT_I420,
  /* Anything else: fed from other/tensors buffers only. */
  GST_M2I_INPUT_TENSORS,
} GstM2iInputKind;

/* What the model's first output is. */
typedef enum {
  GST_M2I_OUTPUT_RAW,          /* no interpretation: tensor meta only */
  GST_M2I_OUTPUT_CLASSES,      /* [1,C] or [1,C,1,1] scores */
  GST_M2I_OUTPUT_DETECTIONS,   /* DetectionOutput [1,1,N,7] */
} GstM2iOutputKind;

typedef struct _GstM2iInferModel GstM2iInferModel;

typedef struct {
  GstM2iDeviceKind device;
  const char *device_string;   /* M2I/HETERO: the priority list to split with
                                * ("HETERO:M2I,CPU"); NULL: the kind's default */
  guint n_threads;             /* 0: one per core */
  const char *split_dir;       /* NULL: do not write the plan */
  guint64 max_memory;          /* bytes the model may need (compile, runner); 0: default */
} GstM2iInferModelOptions;

/*
 * Loads @xml_path (the .bin beside it) and prepares it for @opts->device:
 * CPU compiles it for the IR runtime; M2I and HETERO split it
 * (m2i-core/split) and prepare the split runner, writing the plan into
 * @opts->split_dir when set; AUTO splits for HETERO:M2I,CPU and falls back to
 * the CPU when the partitioner cannot plan the model. Returns a model ready
 * to infer (free with gst_m2i_infer_model_free()), or NULL with @error: the
 * file is missing or malformed (the reader's message: file, line, reason),
 * an op has no kernel, the device cannot run the model, split-dir with
 * device=CPU (the message says what to set instead).
 */
GstM2iInferModel *gst_m2i_infer_model_load (const char *xml_path,
    const GstM2iInferModelOptions *opts, GError **error);
void gst_m2i_infer_model_free (GstM2iInferModel *m);

/* The <net name>; the device string the model runs on ("CPU", ...); a line
 * describing the plan (devices and pieces). Owned by the model. */
const char *gst_m2i_infer_model_name (const GstM2iInferModel *m);
const char *gst_m2i_infer_model_device (const GstM2iInferModel *m);
const char *gst_m2i_infer_model_describe (const GstM2iInferModel *m);

/* The underlying IR model (borrowed): inputs, outputs, layers. */
M2iIrModel *gst_m2i_infer_model_ir (const GstM2iInferModel *m);

/* The input kind and, for IMAGE/NV12/I420, the frame size the model takes. */
GstM2iInputKind gst_m2i_infer_model_input_kind (const GstM2iInferModel *m, gint *width,
    gint *height);

/* Input @i's tensor to write into; NULL when out of range. Its type: on the
 * CPU what the runtime computes (f32 for float inputs), split the declared
 * type (f16 stays f16). Owned by the model, stable until it is freed. */
M2iTensor *gst_m2i_infer_model_input (GstM2iInferModel *m, gint i);

/* The split plan's pre-processing head lowered to the M2I block (its op
 * list is the model's own pre-processing), or NULL when there is none.
 * Owned by the model. */
const M2iSplitHead *gst_m2i_infer_model_head (const GstM2iInferModel *m);

/* For GST_M2I_INPUT_IMAGE: the planar image the pre-processing writes,
 * planes in the model's channel order, data set (the model's input 0, or
 * the head's output buffer of a split plan): PL_FP32_RGB or PL_FP16_RGB
 * (or the head's format), the model's width and height. FALSE with @error
 * for other models. */
gboolean gst_m2i_infer_model_image (GstM2iInferModel *m, M2iImage *img, GError **error);

/* Runs one inference on the current inputs (with a head, on the image of
 * gst_m2i_infer_model_image()). Allocates nothing. FALSE with @error when a
 * kernel or piece fails. */
gboolean gst_m2i_infer_model_infer (GstM2iInferModel *m, GError **error);

/* Output @i of the last inference (f32 for float outputs), valid until the
 * next inference; its name. NULL when out of range. */
const M2iTensor *gst_m2i_infer_model_output (GstM2iInferModel *m, gint i);
const char *gst_m2i_infer_model_output_name (const GstM2iInferModel *m, gint i);
gint gst_m2i_infer_model_n_inputs (const GstM2iInferModel *m);
gint gst_m2i_infer_model_n_outputs (const GstM2iInferModel *m);

/* How output 0 is read: as classes (@n_classes scores; @softmax TRUE when
 * the model does not end in SoftMax, so scores are logits that m2iinfer
 * turns into probabilities) or detections (at most @n_classes rows, here the
 * row count N). */
GstM2iOutputKind gst_m2i_infer_model_output_kind (const GstM2iInferModel *m, gint *n_classes,
    gboolean *softmax);

/* ---- results -------------------------------------------------------------- */

typedef struct {
  gint class_id;
  float confidence;
} GstM2iClass;

/* The @k best classes of scores @scores (@n of them), best first, into
 * @out; probabilities through a stable softmax when @softmax. Ties keep the
 * lower class id first. Returns how many were written (min(k, n)). */
guint gst_m2i_top_classes (const float *scores, guint n, gboolean softmax, guint k,
    GstM2iClass *out);

typedef struct {
  gint class_id;
  float confidence;
  /* normalised [0,1] corners, clamped, in the model's input image */
  float x_min, y_min, x_max, y_max;
} GstM2iDetection;

/* The rows of a DetectionOutput tensor @rows ([.., N, 7]: image_id, label,
 * confidence, x_min, y_min, x_max, y_max) with confidence >= @threshold,
 * up to the first row whose image_id is negative, into @out (at most @max).
 * Returns the count. */
guint gst_m2i_parse_detections (const float *rows, guint n_rows, float threshold,
    GstM2iDetection *out, guint max);

/* Labels from @path: one a line, line 1 = class 0; trailing blanks and a
 * final empty line dropped. NULL with @error when the file cannot be read
 * or holds no label. Free with g_strfreev. */
gchar **gst_m2i_read_labels (const char *path, GError **error);

G_END_DECLS
