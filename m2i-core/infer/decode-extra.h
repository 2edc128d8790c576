/* decode-extra.h — private: the decoders of decode-yolo.c,
 * decode-region-yolo.c, decode-nms.c, decode-segment.c and decode-heads.c,
 * one row each for the dispatcher (decode.c), and the helpers they share.
 *
 * A row is an InferDecoderRow: the model type it decodes and three
 * functions. prepare() reads the model once (which outputs, their shapes, the
 * layer attributes) and allocates everything decoding will need; decode()
 * then turns one inference's outputs into a result without allocating;
 * free() releases what prepare() made.
 */
#pragma once

#include <infer/m2i-decode.h>
#include <infer/m2i-model-info.h>

G_BEGIN_DECLS

/* The capacities a decoder's results need (m2i_infer_result_new()'s
 * arguments). */
typedef struct {
  guint max_detections, max_keypoints;
  guint n_heads, max_classes, max_values;
  guint mask_width, mask_height;
} InferResultSize;

/*
 * One decoder, as the dispatcher's table lists it. The functions mirror the
 * dispatcher's decoder class one for one (match; prepare making the state
 * and the capacities; decode; free).
 */
typedef struct {
  M2iModelType type;
  /*
   * Whether @model's outputs are this decoder's. @named: the user (or the
   * model's metadata) named this type: then a mismatch is explained in
   * @error (which output, the shape expected, the model's). FALSE: AUTO
   * asks: claim only what is unmistakable, leave @error alone. On TRUE,
   * *@why gets a g_strdup'd line saying what was recognised ("output
   * 'output0' [1,84,8400]: 8400 anchors of box + 80 classes"). @opts'
   * labels may help split a row (classes, keypoints).
   */
  gboolean (*match) (M2iIrModel *model, const M2iDecoderOptions *opts, gboolean named,
      gchar **why, GError **error);
  /*
   * After a match: the decoder's state (scratch sized for the largest
   * inference, everything decode() needs), the result capacities in *@size
   * (@opts->max_detections caps the detections; 0 there means as many as the
   * model can give). NULL with @error when memory bounds refuse it. The
   * state borrows from @model (output names): the caller keeps a reference
   * while the state lives.
   */
  gpointer (*prepare) (M2iIrModel *model, const M2iDecoderOptions *opts, InferResultSize *size,
      GError **error);
  /*
   * Decodes @outputs (the model's outputs in model order, @n_outputs of
   * them) into @result, which the caller has cleared (counts 0). Thresholds,
   * top-k and max detections are read from @opts here (they may change
   * between inferences; capacities do not). Boxes and keypoints go through
   * @geometry into source pixels. Allocates nothing. FALSE with @error when
   * an output is missing or its shape or type is not the one prepare() saw.
   */
  gboolean (*decode) (gpointer state, const M2iDecoderOptions *opts, const M2iTensor *outputs,
      guint n_outputs, const M2iInferGeometry *geometry, M2iInferResult *result,
      GError **error);
  void (*free) (gpointer state);
} InferDecoderRow;

extern const InferDecoderRow infer_decoder_yolo_v5;       /* decode-yolo.c */
extern const InferDecoderRow infer_decoder_yolo_v8;
extern const InferDecoderRow infer_decoder_yolo_v10;
extern const InferDecoderRow infer_decoder_region_yolo;   /* decode-region-yolo.c */
extern const InferDecoderRow infer_decoder_detection_nms; /* decode-nms.c */
extern const InferDecoderRow infer_decoder_segmentation;  /* decode-segment.c */
extern const InferDecoderRow infer_decoder_multi_label;   /* decode-heads.c */
extern const InferDecoderRow infer_decoder_multi_head;

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

/* ---- shared by the decoders (decode-util.c) --------------------------------- */

/* The layer that produces output @i ("" when none), and its type. */
M2iIrNode *infer_output_producer (M2iIrModel *model, gint i);
const char *infer_output_producer_type (M2iIrModel *model, gint i);

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

/* Fills @d from a box in model pixels: corners through @g, clamped to the
 * source rectangle. No keypoints. */
void infer_detection_from_model_box (M2iInferDetection *d, const M2iInferGeometry *g,
    float x1, float y1, float x2, float y2, gint class_id, float confidence);

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

/* Sets *@error (when @named) to M2I_ERROR_UNSUPPORTED "@what: ..." and
 * returns FALSE: a match() that does not fit. */
gboolean infer_no_match (gboolean named, GError **error, const char *what, const char *fmt, ...)
    G_GNUC_PRINTF (4, 5);

G_END_DECLS
