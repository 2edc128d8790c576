/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* decode-private.h — how a decoder plugs into m2i_decoder_new() (not
 * installed).
 *
 * A decoder is one file, decode-<name>.c, defining one InferDecoderClass
 * (`const InferDecoderClass infer_decoder_<name>`), declared below, and one
 * row in the table of decode.c. The table's order is AUTO's priority: the
 * first decoder whose match() recognises the model's outputs wins; RAW, last,
 * takes everything.
 *
 * The life of a decoder:
 *   match()    once, on the IR model: are these outputs mine? (no state)
 *   prepare()  once, after a match: make the state, say the result capacity
 *   decode()   per inference: outputs -> the (cleared) result; no allocation
 *   free()     the state
 *
 * Options (dec->opts: thresholds, top-k, max detections) may change between
 * decodes (m2i_decoder_set_options): read them in decode(), never copy them
 * into the state. Capacities are fixed at prepare(): a decoder keeps the best
 * results that fit and sets result->truncated.
 */
#pragma once

#include <infer/m2i-decode.h>
#include <infer/m2i-model-info.h>
#include "nms.h"

G_BEGIN_DECLS

/* What m2i_decoder_new_result() makes: the arguments of
 * m2i_infer_result_new(). */
typedef struct {
  guint max_detections, max_keypoints;
  guint n_heads, max_classes, max_values;
  guint mask_width, mask_height;
} InferResultCapacity;

typedef struct _InferDecoderClass InferDecoderClass;

struct _M2iDecoder {
  const InferDecoderClass *klass;
  M2iIrModel *model;               /* referenced */
  M2iDecoderOptions opts;          /* type resolved (never AUTO); labels borrowed */
  gchar *description;              /* "<type name>: <why>" */
  InferResultCapacity capacity;    /* set by prepare() */
  gpointer state;                  /* the decoder's own, freed by klass->free */
};

struct _InferDecoderClass {
  M2iModelType type;
  /*
   * Whether @model's outputs are this decoder's (shapes, element types, the
   * producing layer's type). @named: the user named this type (then explain
   * a mismatch in @error: which output, what was expected, what the model
   * has); FALSE: AUTO asks (claim only what is unmistakable, leave @error
   * alone). On TRUE, *@why gets a g_strdup'd line saying what was
   * recognised ("output 'prob' [1,10] from SoftMax").
   */
  gboolean (*match) (M2iIrModel *model, const M2iDecoderOptions *opts, gboolean named,
      gchar **why, GError **error);
  /* Makes dec->state and fills dec->capacity (both start zeroed). NULL: no
   * state and an empty capacity. FALSE with @error. */
  gboolean (*prepare) (M2iDecoder *dec, GError **error);
  /* Decodes @outputs (the model's, in model order: f32 for float outputs)
   * into @r, already cleared and with @geometry set. Allocates nothing.
   * FALSE with @error when an output is not what match() saw. */
  gboolean (*decode) (M2iDecoder *dec, const M2iTensor *outputs, guint n_outputs,
      const M2iInferGeometry *geometry, M2iInferResult *r, GError **error);
  /* Frees dec->state (called with non-NULL state only). May be NULL. */
  void (*free) (gpointer state);
  /* The decoder's own class names (NULL-terminated), for models without
   * labels; may be NULL. */
  const char *const *labels;
};

/* The decoders (decode-<name>.c). */
extern const InferDecoderClass infer_decoder_classify;
extern const InferDecoderClass infer_decoder_ssd;
extern const InferDecoderClass infer_decoder_yolo_v5;       /* decode-yolo.c */
extern const InferDecoderClass infer_decoder_yolo_v8;
extern const InferDecoderClass infer_decoder_yolo_v10;
extern const InferDecoderClass infer_decoder_region_yolo;   /* decode-region-yolo.c */
extern const InferDecoderClass infer_decoder_detection_nms; /* decode-nms.c */
extern const InferDecoderClass infer_decoder_segmentation;  /* decode-segment.c */
extern const InferDecoderClass infer_decoder_multi_label;   /* decode-heads.c */
extern const InferDecoderClass infer_decoder_multi_head;
extern const InferDecoderClass infer_decoder_openpose;      /* decode-openpose.c */

/* ---- AUTO from the model's metadata (decode-auto.c) -------------------------- */

/* A decoder the model's metadata points to. @strict: claim only what AUTO's
 * shape rules would (the metadata named a family, such as "YOLO"); else
 * match as if the user had named the type. */
typedef struct {
  M2iModelType type;
  gboolean strict;
} InferAutoCandidate;

#define INFER_AUTO_MAX_CANDIDATES 4

/* The decoders @info's model_info/model_type (else framework/task, else
 * model_info/multilabel) names, in the order AUTO tries them before the
 * shape rules, into @out (room for INFER_AUTO_MAX_CANDIDATES); *@key gets
 * the rt_info key that said so. 0 when the metadata names no decoder. */
guint infer_auto_candidates (const M2iModelInfo *info, InferAutoCandidate *out,
    const char **key);

/* ---- helpers for decoders (decode.c, infer-result.c) ------------------------ */

/* The type of the layer producing output @i of @model ("SoftMax",
 * "DetectionOutput", ...); "" when it has none or @i is out of range. */
const char *infer_output_producer_type (M2iIrModel *model, gint i);

/* Sets @error to what output @i of @model is ("output 0 'prob' is f32
 * [1,10] from \"SoftMax\"") followed by @expected (what the decoder
 * wanted): the message of a named decoder that does not fit. */
void infer_output_mismatch (M2iIrModel *model, gint i, const char *expected, GError **error);

/* Checks that output @i of @outputs (@n of them) is f32 with @numel
 * elements; FALSE with @error naming the decoder @what otherwise. */
gboolean infer_output_check_f32 (const M2iTensor *outputs, guint n, guint i, gint64 numel,
    const char *what, GError **error);

/* The @k best of @scores (@n of them), best first, into @out; probabilities
 * through a stable softmax over all @n when @softmax. Ties keep the lower
 * class id first. Returns how many were written (min(k, n)). */
guint infer_top_classes (const float *scores, guint n, gboolean softmax, guint k,
    M2iInferClass *out);

/* Sets @d's corners from a box in model-input pixels, mapped to source
 * pixels through @g (the corners ordered, clamped to the source
 * rectangle). */
void infer_geometry_map_box (const M2iInferGeometry *g, double x0, double y0, double x1,
    double y1, M2iInferDetection *d);

/* ---- helpers for the detection, segmentation and head decoders (decode-util.c) */

/* The layer that produces output @i, or NULL. */
M2iIrNode *infer_output_producer (M2iIrModel *model, gint i);

/* Whether an output named @name is an auxiliary one of OpenVINO Training
 * Extensions' models (feature_vector, saliency_map): never a head or a map. */
gboolean infer_output_is_auxiliary (const char *name);

/* Appends the detection of @b (corners in model pixels) to @r, through @g;
 * the caller has checked the capacity. */
M2iInferDetection *infer_result_add_box (M2iInferResult *r, const M2iInferGeometry *g,
    const InferBox *b);

/* "[1,84,8400]" of output @i, for messages (free with g_free()). */
gchar *infer_output_shape_string (M2iIrModel *model, gint i);

/* Checks that output @index exists among @n_outputs, has data, the type
 * @type (M2I_ET_UNDEFINED: any numeric type) and the shape @shape; FALSE with
 * @error naming the output otherwise. */
gboolean infer_check_output (const M2iTensor *outputs, guint n_outputs, guint index,
    const char *name, M2iElementType type, const M2iShape *shape, GError **error);

/* Element @i of @t (a numeric type) as a double. */
double infer_tensor_get (const M2iTensor *t, gsize i);

/* Checks that @g maps model pixels to source pixels (positive finite
 * scales, a positive source size); FALSE with @error otherwise. */
gboolean infer_check_geometry (const M2iInferGeometry *g, GError **error);

/* Model pixels to source pixels (not clamped). */
static inline float
infer_source_x (const M2iInferGeometry *g, float model_x)
{
  return (float) (g->crop_x + (model_x - g->pad_x) / g->scale_x);
}

static inline float
infer_source_y (const M2iInferGeometry *g, float model_y)
{
  return (float) (g->crop_y + (model_y - g->pad_y) / g->scale_y);
}

/*
 * A list of numbers as the tools write them: "255", "0 0 0", "[0.5, 0.5]",
 * "123.675,116.28,103.53", Model Optimizer's "data[104.0,117.0,123.0]" (an
 * input name before the bracket) and "()" (none); a layer attribute
 * "10,13, 16,30". Only the first bracketed group is read. FALSE for a token
 * that is no finite number, more than @max values or text over 4 KiB.
 */
gboolean infer_parse_numbers (const char *s, double *out, guint max, guint *n);

/* The detections a decoder keeps: @opts->max_detections, at most
 * @available (all @available when max_detections is 0). */
guint infer_max_detections (const M2iDecoderOptions *opts, guint available);

/* A match() that does not fit: when @named, sets @error
 * (M2I_ERROR_INVALID_ARGUMENT) to the message; returns FALSE. */
gboolean infer_no_match (gboolean named, GError **error, const char *fmt, ...)
    G_GNUC_PRINTF (3, 4);

G_END_DECLS
