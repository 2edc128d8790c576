/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* m2i-model-info.h — what a model file says about itself, and class labels.
 *
 * OpenVINO IR files carry settings in their <rt_info>, written by the tools
 * that made them:
 *
 *   model_info/<key>             OpenVINO Model API's keys (model_type, labels,
 *                                mean_values, scale_values, resize_type, ...),
 *                                also written by Ultralytics' OpenVINO export
 *                                and read by DL Streamer;
 *   framework/<key>              the source framework's metadata carried over
 *                                by the converter: Ultralytics' ONNX exports
 *                                (names, imgsz, stride, task, kpt_shape);
 *   conversion_parameters/<key>  how the converter was run (ovc, mo, or
 *                                ov.convert_model); IR v10 files spell it
 *                                meta_data/cli_parameters/<key>.
 *
 * m2i_model_info_new() reads them into one plain struct: each setting with
 * the key it came from, defaults where the model says nothing. Every value is
 * parsed defensively (bounded, checked): a malformed value is skipped with a
 * line in `warnings`, never an error or a crash.
 *
 * The labels parser reads the spellings labels come in: a file with one
 * label a line, a JSON or Python list, a YAML-like list ("- person"), a JSON
 * or Python dict of class ids ("{0: 'person', 1: 'bicycle'}", Ultralytics'
 * names) and Model API's space-separated words.
 */
#pragma once

#include <glib.h>
#include <m2i-core/base/m2i-export.h>
#include <m2i-core/ir/m2i-ir.h>

G_BEGIN_DECLS

/* ---- Labels ------------------------------------------------------------------ */

typedef enum {
  /* Recognised from the text: "[" a JSON/Python list, "{" a JSON/Python
   * dict of class ids, lines all "- x" a YAML list, lines all "N: x" a YAML
   * map of class ids, anything else one label a line. */
  M2I_LABELS_AUTO,
  M2I_LABELS_LINES,               /* one label a line, as they are (trailing blanks dropped) */
  M2I_LABELS_WORDS,               /* whitespace-separated words (Model API's ListValue); "[" / "{" as AUTO */
} M2iLabelsFormat;

/* The most labels a list may hold, and the longest label (bytes). */
#define M2I_LABELS_MAX 100000
#define M2I_LABEL_MAX_BYTES 4096

/*
 * Parses @text (@len bytes, or -1: NUL-terminated) into labels, class 0
 * first. Quoted strings may use ' or " and the escapes of JSON and Python;
 * a dict's missing class ids are named by their number; invalid UTF-8 is
 * replaced. Returns a NULL-terminated array (free with g_strfreev()), or NULL
 * with @error (M2I_ERROR_MALFORMED naming the line and what is wrong) when
 * the text is malformed, holds no label, more than M2I_LABELS_MAX or one
 * longer than M2I_LABEL_MAX_BYTES.
 */
M2I_API gchar **m2i_labels_parse (const char *text, gssize len, M2iLabelsFormat format,
    GError **error);

/* Reads the file @path (at most 16 MiB) and parses it as
 * m2i_labels_parse (..., M2I_LABELS_AUTO). NULL with @error (M2I_ERROR_IO
 * or M2I_ERROR_MALFORMED, the message naming the file). */
M2I_API gchar **m2i_labels_load (const char *path, GError **error);

/* ---- Model metadata ---------------------------------------------------------- */

typedef enum {
  M2I_MODEL_INFO_UNSET = 0,       /* the model says nothing: the field holds the default */
  M2I_MODEL_INFO_MODEL_INFO,      /* rt_info model_info/<key> */
  M2I_MODEL_INFO_FRAMEWORK,       /* rt_info framework/<key> */
  M2I_MODEL_INFO_CONVERSION,      /* rt_info conversion_parameters/<key>, v10 meta_data/cli_parameters/<key> */
} M2iModelInfoSource;

/* Where one setting came from. */
typedef struct {
  M2iModelInfoSource source;
  const char *key;                /* the rt_info key read ("model_info/labels"); NULL when UNSET (static string) */
} M2iModelInfoOrigin;

/* How the frame is fitted to the model input (Model API's resize_type). */
typedef enum {
  M2I_RESIZE_TYPE_STANDARD,               /* "standard": stretched to the input size */
  M2I_RESIZE_TYPE_FIT_TO_WINDOW,          /* "fit_to_window": aspect kept, image at the top left, padded right/bottom */
  M2I_RESIZE_TYPE_FIT_TO_WINDOW_LETTERBOX,/* "fit_to_window_letterbox": aspect kept, centred, padded with pad_value */
  M2I_RESIZE_TYPE_CROP,                   /* "crop": aspect kept, the centre cropped to fill the input */
} M2iResizeType;

/* The Model API spelling, and the reverse (case-insensitive; FALSE for an
 * unknown name, *@type untouched). */
M2I_API const char *m2i_resize_type_name (M2iResizeType type);
M2I_API gboolean m2i_resize_type_from_name (const char *name, M2iResizeType *type);

#define M2I_MODEL_INFO_MAX_CHANNELS 4
#define M2I_MODEL_INFO_MAX_ANCHORS 128     /* anchor values (pairs) */
#define M2I_MODEL_INFO_MAX_MASKS 64

typedef struct {
  /* model_info/model_type: the Model API wrapper ("YOLO", "ssd",
   * "Classification", "Segmentation", ...) or DL Streamer converter
   * ("yolo_v8", "label", "detection_output"); NULL when absent. */
  gchar *model_type;
  M2iModelInfoOrigin model_type_from;
  /* framework/task: Ultralytics' task ("detect", "pose", "segment",
   * "classify", "obb"); NULL when absent. */
  gchar *task;
  M2iModelInfoOrigin task_from;

  /* Class names, class 0 first (NULL-terminated; NULL when absent):
   * model_info/labels (space-separated words; Ultralytics writes spaces in
   * names as '_'), else framework/names (Ultralytics' dict). */
  gchar **labels;
  guint n_labels;
  M2iModelInfoOrigin labels_from;

  /* Pre-processing the application must do (Model API: out = (in - mean) /
   * scale per channel, in the model's channel order). n = 0: none; 1: the
   * same for every channel. */
  float mean_values[M2I_MODEL_INFO_MAX_CHANNELS];
  guint n_mean_values;
  M2iModelInfoOrigin mean_values_from;
  float scale_values[M2I_MODEL_INFO_MAX_CHANNELS];
  guint n_scale_values;
  M2iModelInfoOrigin scale_values_from;
  /* TRUE: the model takes RGB (Model API: reverse the BGR input's channels).
   * Default FALSE (BGR, OpenCV's order). */
  gboolean reverse_input_channels;
  M2iModelInfoOrigin reverse_input_channels_from;
  M2iResizeType resize_type;              /* default STANDARD */
  M2iModelInfoOrigin resize_type_from;
  gint pad_value;                         /* 0..255, default 0 */
  M2iModelInfoOrigin pad_value_from;
  /* model_info/layout ("NCHW", "images:NHWC") or conversion_parameters/layout;
   * NULL when absent. */
  gchar *layout;
  M2iModelInfoOrigin layout_from;

  /* Decoding. */
  float confidence_threshold;             /* default 0.5 */
  M2iModelInfoOrigin confidence_threshold_from;
  float iou_threshold;                    /* default 0.5 */
  M2iModelInfoOrigin iou_threshold_from;
  gboolean agnostic_nms;                  /* default FALSE */
  M2iModelInfoOrigin agnostic_nms_from;
  gboolean multilabel;                    /* default FALSE */
  M2iModelInfoOrigin multilabel_from;
  gboolean output_raw_scores;             /* default FALSE */
  M2iModelInfoOrigin output_raw_scores_from;
  guint topk;                             /* default 1 */
  M2iModelInfoOrigin topk_from;
  /* YOLO anchors (w, h pairs, input pixels) and masks (anchor pair indices
   * per output, 3 per output) for raw YOLOv4 outputs. */
  float anchors[M2I_MODEL_INFO_MAX_ANCHORS];
  guint n_anchors;
  M2iModelInfoOrigin anchors_from;
  gint masks[M2I_MODEL_INFO_MAX_MASKS];
  guint n_masks;
  M2iModelInfoOrigin masks_from;
  /* Ultralytics: framework/imgsz (height, width), framework/stride (the
   * largest), framework/kpt_shape (keypoints per object, values per
   * keypoint: 2 or 3). 0 when absent. */
  guint imgsz_height, imgsz_width;
  M2iModelInfoOrigin imgsz_from;
  guint stride;
  M2iModelInfoOrigin stride_from;
  guint kpt_count, kpt_dims;
  M2iModelInfoOrigin kpt_shape_from;

  /* What the converter already built into the graph (mo/ovc
   * --mean_values, --scale_values, --reverse_input_channels): for
   * information only — the model does it itself, so pre-processing must NOT
   * apply it again. */
  float converted_mean_values[M2I_MODEL_INFO_MAX_CHANNELS];
  guint n_converted_mean_values;
  float converted_scale_values[M2I_MODEL_INFO_MAX_CHANNELS];
  guint n_converted_scale_values;
  gboolean converted_reverse_input_channels;
  M2iModelInfoOrigin converted_from;      /* the first of the three found */

  /* One line per value present but unreadable (key, value excerpt, what
   * was expected); NULL-terminated, never NULL. */
  gchar **warnings;
} M2iModelInfo;

/*
 * Reads @model's rt_info. Never fails: absent settings keep their defaults
 * (origin UNSET), malformed ones too, with a line in ->warnings. @model may
 * be NULL (every setting at its default). Free with m2i_model_info_free().
 * The result does not reference @model.
 */
M2I_API M2iModelInfo *m2i_model_info_new (const M2iIrModel *model);
M2I_API void m2i_model_info_free (M2iModelInfo *info);

/* A text listing each setting the model gives, one line each as
 * "name = value (from key)", then the warnings; "" when the model gives
 * none. Free with g_free(). */
M2I_API gchar *m2i_model_info_describe (const M2iModelInfo *info);

G_END_DECLS
