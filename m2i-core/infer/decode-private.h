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
};

/* The decoders (decode-<name>.c). */
extern const InferDecoderClass infer_decoder_classify;
extern const InferDecoderClass infer_decoder_ssd;

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

G_END_DECLS
