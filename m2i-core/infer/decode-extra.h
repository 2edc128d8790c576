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

typedef struct {
  M2iModelType type;
  /*
   * Reads @model's outputs for this decoder under @opts (thresholds, NMS,
   * top-k, max_detections — 0 there meaning as many as the model can give —
   * and labels, borrowed). @info is the model's metadata (never NULL).
   * Returns the decoder's state, with the result capacities in *@size and
   * one line in @describe saying which outputs it reads and how ("output
   * 'output0' [1,84,8400]: 4 box rows + 80 classes"). NULL with @error
   * (M2I_ERROR_UNSUPPORTED, naming the output, the shape expected and the
   * model's) when the outputs do not fit. The state borrows from @model
   * (output names): the caller keeps a reference while the state lives.
   */
  gpointer (*prepare) (M2iIrModel *model, const M2iModelInfo *info, const M2iDecoderOptions *opts,
      InferResultSize *size, GString *describe, GError **error);
  /*
   * Decodes @outputs (the model's outputs in model order, @n_outputs of
   * them) into @result, which the caller has cleared (counts 0) and made
   * with *size's capacities. Boxes and keypoints go through @geometry into
   * source pixels. Allocates nothing. FALSE with @error when an output is
   * missing or its shape or type is not the one prepare() saw.
   */
  gboolean (*decode) (gpointer state, const M2iTensor *outputs, guint n_outputs,
      const M2iInferGeometry *geometry, M2iInferResult *result, GError **error);
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

G_END_DECLS
