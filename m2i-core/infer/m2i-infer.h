/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* m2i-infer.h — the inference session: run an OpenVINO IR model on images,
 * with the pre-processing on the M2I block, and read plain-C results.
 * No GStreamer: m2iinfer is caps, properties and metas over this, and an
 * application embedding libm2icore uses it directly.
 *
 *   M2iInferModelOptions mo;
 *   m2i_infer_model_options_init (&mo);
 *   M2iInferModel *model = m2i_infer_model_load ("fashion-mnist.xml", &mo, &error);
 *   M2iInferSession *s = m2i_infer_session_new (model, &error);
 *   M2iInferPreprocess pp;
 *   m2i_infer_preprocess_init (&pp);            // channel order, mean/std, ...
 *   m2i_infer_session_set_preprocess (s, &pp, &error);
 *   m2i_infer_session_prepare (s, &frame_geometry, NULL, NULL, &error);
 *   for each frame:
 *     m2i_infer_session_run (s, &frame, NULL, NULL, &error);
 *     const M2iInferResult *r = m2i_infer_session_get_result (s);
 *
 * A model (M2iInferModel) is loaded once for a device and is immutable
 * afterwards; it is reference-counted so that several sessions can share
 * it. A session owns what one inference at a time needs: the runtime's
 * request, the M2I plan writing the model's input, the decoder and one
 * result, all made when it is created or prepared; running it allocates
 * nothing. A session is used by one thread at a time.
 */
#pragma once

#include <glib.h>
#include <m2i-core/base/m2i-export.h>
#include <m2i-core/ir/m2i-ir.h>
#include <m2i-core/m2i/m2i.h>
#include <m2i-core/split/m2i-split.h>
#include <m2i-core/infer/m2i-infer-results.h>
#include <m2i-core/infer/m2i-decode.h>
#include <m2i-core/infer/m2i-model-info.h>

G_BEGIN_DECLS

/* ---- the model ------------------------------------------------------------ */

typedef struct _M2iInferModel M2iInferModel;

typedef struct {
  /* Where the model runs: "CPU" (the IR runtime), "M2I" (the device alone),
   * "HETERO:M2I,CPU" (split between the device and the CPU, a priority list
   * of M2I and CPU), "AUTO" or NULL (HETERO:M2I,CPU when the model splits,
   * else CPU). Case-insensitive. */
  const char *device;
  guint n_threads;               /* threads per inference; 0: one per core */
  const char *split_dir;         /* M2I/HETERO/AUTO: write the split plan here; NULL: don't */
  /* A labels file (m2i_labels_load(): one label a line, line 1 = class 0,
   * or a JSON / Python list or dict, or a YAML-like "- name" list); NULL:
   * the model's own (rt_info model_info/labels or framework/names), if any. */
  const char *labels_path;
  /* Labels as text instead of a file (m2i_labels_parse(), M2I_LABELS_AUTO:
   * a JSON/Python list or dict, YAML-like lines, one label a line); used
   * when labels_path is NULL. */
  const char *labels_text;
  /* How outputs are decoded (type, thresholds, top-k); its labels are
   * ignored: the model's come from labels_path or its rt_info. Copied. */
  M2iDecoderOptions decoder;
  /* Bytes the model may need once loaded (0: M2I_IR_DEFAULT_MAX_MEMORY,
   * 4 GiB): the compiled model and an inference's buffers, or, split, the
   * runner's; a model whose declared sizes need more is refused
   * (M2I_ERROR_LIMIT) before anything that large is allocated. */
  guint64 max_memory;
  /* Frames per inference: 0 takes the model's input batch as it is (the
   * sessions of m2i_infer_session_new() fill item 0 of a batched input);
   * N requires the model's batch to be N: an image model whose image input
   * is [N,C,H,W] or [N,H,W,C] (a static batch is not reshaped), for N > 1
   * with outputs that have a per-frame part (dims[0] = N, or
   * DetectionOutput's rows by image_id); an image input of another batch
   * makes the model a TENSORS one (m2i_infer_model_get_input_note() says
   * which batch to ask), and N > 1 then fails to load. See
   * m2i-infer-queue.h. */
  guint batch;
} M2iInferModelOptions;

/* Defaults: device AUTO, one thread per core, no split-dir, no labels,
 * m2i_decoder_options_init(), the default memory limit, the model's own
 * batch. */
M2I_API void m2i_infer_model_options_init (M2iInferModelOptions *opts);

/*
 * Loads @xml_path (its .bin beside it) for @opts->device: CPU compiles it for
 * the IR runtime; M2I and HETERO split it (m2i-core/split), writing the plan
 * into split_dir when set; AUTO splits for HETERO:M2I,CPU and falls back to
 * the CPU when the partitioner cannot plan the model (but a plan that cannot
 * be written into split_dir is an error). One request is prepared here, so
 * that a model that cannot run fails now; the first session takes it.
 * Returns the model (unref with m2i_infer_model_unref()), or NULL with
 * @error: no path, the file is missing or malformed (the reader's message:
 * file, line, reason), an unknown device, an op without a kernel, a model
 * the device cannot run, split_dir with CPU, an unreadable labels file. The
 * messages name options by m2iinfer's property names (model=, device=,
 * split-dir=, labels=).
 */
M2I_API M2iInferModel *m2i_infer_model_load (const char *xml_path,
    const M2iInferModelOptions *opts, GError **error);
M2I_API M2iInferModel *m2i_infer_model_ref (M2iInferModel *model);
M2I_API void m2i_infer_model_unref (M2iInferModel *model);

/* The <net name>; where it runs ("CPU", "HETERO:M2I,CPU", ...); one line
 * describing the plan ("HETERO:M2I,CPU: 2 pieces, 1 on the device"). Owned
 * by the model. */
M2I_API const char *m2i_infer_model_get_name (const M2iInferModel *model);
M2I_API const char *m2i_infer_model_get_device (const M2iInferModel *model);
M2I_API const char *m2i_infer_model_describe (const M2iInferModel *model);

/* The IR model (borrowed): inputs, outputs, layers, rt_info. */
M2I_API M2iIrModel *m2i_infer_model_get_ir (const M2iInferModel *model);

/* What the model's input is, as a session feeds it. */
typedef enum {
  /* One float input [1,3,H,W] (or a split plan that lowered the model's
   * PrePostProcessor head to the M2I block): the session pre-processes
   * frames of any format and size into it. */
  M2I_INFER_INPUT_IMAGE,
  /* The PrePostProcessor NV12 head: u8 inputs [1,H,W,1] (Y) and
   * [1,H/2,W/2,2] (UV); NV12 frames of W x H go in as they are. */
  M2I_INFER_INPUT_NV12,
  /* The I420 head: u8 [1,H,W,1] and [1,H/2,W/2,1] twice. */
  M2I_INFER_INPUT_I420,
  /* Anything else: input tensors only (m2i_infer_session_set_input). */
  M2I_INFER_INPUT_TENSORS,
} M2iInferInputKind;

/* The input kind and, except for TENSORS, the image size the model takes
 * (@width, @height may be NULL). */
M2I_API M2iInferInputKind m2i_infer_model_get_input_kind (const M2iInferModel *model,
    gint *width, gint *height);

/* Frames per inference: the image input's batch dimension (1 for other
 * models). */
M2I_API gint m2i_infer_model_get_batch (const M2iInferModel *model);

/* How an IMAGE model takes the image. */
typedef struct {
  /* The model input the image goes into. A model may have other inputs:
   * they keep what m2i_infer_session_set_input() or
   * m2i_infer_session_set_extra_inputs() put there (zeros before). */
  gint index;
  gint channels;                /* 1 (a gray input) or 3 */
  gboolean nhwc;                /* [1,H,W,C] (TensorFlow's layout) rather than [1,C,H,W] */
  M2iElementType type;          /* f32, f16, u8 or i8 */
} M2iInferImageInput;

/* The image input of an IMAGE model into @img: TRUE; FALSE for the other
 * kinds (and for a split plan's pre-processing head, which takes the image
 * itself: 3 planar channels). */
M2I_API gboolean m2i_infer_model_get_image_input (const M2iInferModel *model,
    M2iInferImageInput *img);

/* For a TENSORS model, why no input takes images (e.g. "model input 'x'
 * [4,3,224,224] takes 4 frames per inference; ..."); NULL for the others.
 * Owned by the model. */
M2I_API const char *m2i_infer_model_get_input_note (const M2iInferModel *model);

/* The model's inputs for messages: "\"input\" f32 [1,3,28,28], ...". g_free. */
M2I_API gchar *m2i_infer_model_describe_inputs (const M2iInferModel *model);

/* What the model's <rt_info> says about itself (m2i-model-info.h), read
 * once at load. Owned by the model. */
M2I_API const M2iModelInfo *m2i_infer_model_get_info (const M2iInferModel *model);

/* The split plan's pre-processing head lowered to the M2I block (its op
 * list is the model's own pre-processing, its input the frame the head was
 * made for), or NULL. Owned by the model. */
M2I_API const M2iSplitHead *m2i_infer_model_get_head (const M2iInferModel *model);

/* The labels (NULL-terminated, owned by the model) and their count: the
 * labels file's, else the model's rt_info's; NULL and 0 without either. */
M2I_API const char *const *m2i_infer_model_get_labels (const M2iInferModel *model,
    guint *n_labels);

/* ---- the session ---------------------------------------------------------- */

typedef struct _M2iInferSession M2iInferSession;

/* How a session pre-processes images for an IMAGE model (ignored for the
 * others). A split plan's pre-processing head overrides channel order,
 * resize and normalisation with the model's own. */
typedef struct {
  M2iChannelOrder channel_order;  /* the model input's channel order */
  M2iResizeMode resize_mode;      /* when the session resizes to the model's size */
  /* out = (pixel * input_scale - mean) / std, per channel in the model's
   * order, applied to pixels the session converts from u8 itself (data
   * that arrive as float are used as they are); held as the M2I block's
   * fp16 coefficients. */
  float mean[3], std[3], input_scale;
  M2iProfile profile;             /* hardware profile of the M2I plan */
  gint n_threads;                 /* row slices per M2I task; <= 0: one per core */
  /* How a frame of another aspect ratio is fitted to the model's size
   * (Model API's resize_type): stretched (STANDARD), scaled to fit and
   * placed at the top left (FIT_TO_WINDOW) or centred as Ultralytics'
   * LetterBox does (FIT_TO_WINDOW_LETTERBOX: left = round((W - w) / 2 -
   * 0.1), top likewise), the rest filled with pad_value (pixel units,
   * before the normalisation); or its centre cut to the model's aspect
   * (CROP). Not applied to a frame whose upstream chain letterboxes. */
  M2iResizeType resize_type;
  float pad_value;
} M2iInferPreprocess;

/* Defaults: RGB, linear_onnx, mean 0, std 1, scale 1, the default profile,
 * one slice per core, STANDARD, pad 0. */
M2I_API void m2i_infer_preprocess_init (M2iInferPreprocess *pp);

/* Settings an application (an element's properties) chose itself. */
typedef enum {
  M2I_INFER_SET_CHANNEL_ORDER = 1 << 0,
  M2I_INFER_SET_MEAN = 1 << 1,
  M2I_INFER_SET_STD = 1 << 2,
  M2I_INFER_SET_INPUT_SCALE = 1 << 3,
  M2I_INFER_SET_RESIZE_TYPE = 1 << 4,
  M2I_INFER_SET_PAD_VALUE = 1 << 5,
  M2I_INFER_SET_THRESHOLD = 1 << 6,
  M2I_INFER_SET_IOU_THRESHOLD = 1 << 7,
  M2I_INFER_SET_CLASS_AGNOSTIC = 1 << 8,
  M2I_INFER_SET_TOP_K = 1 << 9,
} M2iInferSettingFlags;

/*
 * Completes @pp and @dec (holding the application's values, defaults for
 * the rest) from @model's metadata (m2i_infer_model_get_info()): every
 * setting whose M2iInferSettingFlags bit is not in @given takes the value
 * the model gives — model_info/reverse_input_channels (True: RGB, False:
 * BGR; else conversion_parameters' reversal: BGR), mean_values and
 * scale_values as mean and std (pixel units, times pp->input_scale),
 * resize_type, pad_value, confidence_threshold, iou_threshold,
 * agnostic_nms, topk; for an Ultralytics export without model_info
 * (framework/names with stride, imgsz or task) its fixed pre-processing:
 * RGB, std 255, fit_to_window_letterbox, pad 114; for an OpenPose model
 * (@dec's type openpose, or AUTO and its outputs are OpenPose's) without
 * either, what Model API's OpenPose wrapper gives it: BGR, fit_to_window
 * (the frame at the top left). The converter's
 * mean/scale (conversion_parameters, IR v10 cli_parameters) is inside the
 * graph and never applied. Returns one line per setting with where it came
 * from — "channel order = RGB (model_info/reverse_input_channels)", "mean =
 * <0, 0, 0> (default)", "threshold = 0.3 (set)" — then the labels' origin
 * and the metadata's warnings (g_free).
 */
M2I_API gchar *m2i_infer_settings_resolve (const M2iInferModel *model, guint given,
    M2iInferPreprocess *pp, M2iDecoderOptions *dec);

/*
 * A session on @model (referenced): the runtime's request (the model's
 * prepared one the first time), the decoder the model's options name (see
 * m2i_decoder_new()) and a result sized for it. NULL with @error when the
 * request cannot be made or the named decoder does not fit the outputs.
 * Free with m2i_infer_session_free().
 */
M2I_API M2iInferSession *m2i_infer_session_new (M2iInferModel *model, GError **error);
M2I_API void m2i_infer_session_free (M2iInferSession *s);

M2I_API M2iInferModel *m2i_infer_session_get_model (const M2iInferSession *s);

/* Sets the pre-processing of later runs (the plan is made again on the
 * next one). FALSE with @error (the previous settings kept) when input_scale
 * is not positive and finite or the normalisation cannot be held as fp16. */
M2I_API gboolean m2i_infer_session_set_preprocess (M2iInferSession *s,
    const M2iInferPreprocess *pp, GError **error);

/* The decoder (owned by the session): its type, m2i_decoder_set_options()
 * for thresholds and top-k between runs. */
M2I_API M2iDecoder *m2i_infer_session_get_decoder (M2iInferSession *s);

/*
 * Prepares for source frames of @source's geometry (format, size, strides;
 * data not used), onto which the ops @queued (NULL: none) are already
 * queued — an upstream m2i chain's, with its @letterbox (NULL: none) — and
 * makes the M2I plan that writes the model's input: @queued followed by what
 * the model still needs (csc to the model's channel order for YUV, convert
 * u8, resize to the model's size, permute interleaved data, the
 * normalisation of pixels; a split head's own ops instead when the model
 * has one), as one plan. For NV12/I420 models the frame must be that format
 * and size, with nothing queued. FALSE with @error saying what does not fit
 * (a TENSORS model, a format the model cannot take, a chain that letterboxes
 * to another size than the model's, too many ops for one plan, ...).
 * Optional: m2i_infer_session_run() prepares when the geometry or the queued
 * ops change; preparing first keeps the allocation out of the first frame
 * and reports errors early.
 */
M2I_API gboolean m2i_infer_session_prepare (M2iInferSession *s, const M2iImage *source,
    const M2iOpList *queued, const M2iLetterbox *letterbox, GError **error);

/*
 * One inference on @source (real pixels; any strides), with @queued and
 * @letterbox as for m2i_infer_session_prepare(): pre-processes it into the
 * model's input as one M2I plan (NV12/I420 models: copies the planes in),
 * runs the model and decodes the outputs into the session's result, whose
 * geometry maps the model's input back to @source's pixels. Allocates
 * nothing unless the geometry, the queued ops or the settings changed.
 * FALSE with @error when the frame does not fit (see prepare), a buffer is
 * too small, or a kernel, a piece or the decoder fails.
 */
M2I_API gboolean m2i_infer_session_run (M2iInferSession *s, const M2iImage *source,
    const M2iOpList *queued, const M2iLetterbox *letterbox, GError **error);

/*
 * Sets the model's inputs other than the image from @spec (NULL: none):
 * "name=values;name2=@file", each item an input's name (or tensor name) and
 * either numbers separated by commas (one for every element, or one per
 * element in row-major order; converted to the input's type, integers
 * rounded and saturated) or '@' and a file holding exactly the input's
 * bytes (its element type, little-endian, row-major). Inputs keep their
 * values for every later run; an image run fails while one of them has
 * none. FALSE with @error naming the item, the input (with the model's
 * inputs when there is none of that name) and what is wrong; items before
 * it are set.
 */
M2I_API gboolean m2i_infer_session_set_extra_inputs (M2iInferSession *s, const char *spec,
    GError **error);

/* TRUE when every input of an image model besides the image has a value
 * (m2i_infer_session_set_input, _set_extra_inputs); else FALSE with @error
 * naming the first without one, its type and shape, and how to give it. */
M2I_API gboolean m2i_infer_session_check_inputs (const M2iInferSession *s, GError **error);

/*
 * Copies @src into the model's input @i (any model kind): @src->data holds
 * the input's element count (its declared shape) of @src->type, which must
 * be the input's type or, for float inputs, f16 or f32 (converted). FALSE
 * with @error for a wrong index or type. Then m2i_infer_session_run_inputs().
 */
M2I_API gboolean m2i_infer_session_set_input (M2iInferSession *s, gint i, const M2iTensor *src,
    GError **error);

/* One inference on the inputs set with m2i_infer_session_set_input(), decoded
 * into the result (an IMAGE model's input is taken as a frame of its own
 * size; other models have no frame: a 1 x 1 source, boxes normalised). FALSE
 * with @error when a kernel, a piece or the decoder fails. */
M2I_API gboolean m2i_infer_session_run_inputs (M2iInferSession *s, GError **error);

/* The last run's decoded result (owned by the session, valid until the
 * next run). */
M2I_API const M2iInferResult *m2i_infer_session_get_result (const M2iInferSession *s);

/* The model's outputs of the last run, in model order (f32 for float
 * outputs), owned by the session and valid until the next run; their
 * count. */
M2I_API const M2iTensor *m2i_infer_session_get_outputs (const M2iInferSession *s,
    guint *n_outputs);

/*
 * What the last runs did, e.g. "csc(RGB) -> convertU8F16 -> resize(28x28
 * linear_onnx half_pixel) -> permute (1 device task) -> model input fp16
 * widened to fp32 (RGB); model on CPU: 9 layers per inference". *@serial
 * (if given) changes whenever the text does (a new plan, another input
 * path). Owned by the session; "" before the first run.
 */
M2I_API const char *m2i_infer_session_describe (const M2iInferSession *s, guint *serial);

G_END_DECLS
