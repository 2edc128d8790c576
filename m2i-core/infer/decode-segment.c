/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* decode-segment.c — semantic segmentation: a class per output pixel.
 *
 *   [1,C,H,W] float, C >= 2   class scores: the class map is the argmax over
 *                             C (the first of equal scores, NaN and
 *                             infinite scores skipped); its confidence the
 *                             softmax probability of that class — the score
 *                             itself when the output comes from SoftMax or
 *                             Sigmoid (already probabilities)
 *   [1,1,H,W] or [1,H,W]      a class map (an ArgMax inside the model), any
 *                             number type: values are rounded; those outside
 *                             0..65535 (or NaN) read as class 0; no confidence
 *
 * As OpenVINO's Model API SegmentationModel: fewer than 2 channels means the
 * map is already an argmax. The map stays in the output's resolution. AUTO
 * claims a model's only output when it is at least 8x8 with at most 1024
 * class scores, or an integer class map.
 */
#include "decode-private.h"

#include <base/m2i-error.h>
#include <math.h>
#include <string.h>

#define MAX_SIDE 16384
#define MAX_PIXELS (1u << 24)            /* 4096 x 4096 */
/* AUTO: a map of at least this side, at most this many classes */
#define AUTO_MIN_SIDE 8
#define AUTO_MAX_CLASSES 1024

typedef struct {
  gint out;
  const char *name;
  M2iShape shape;
  gboolean argmax;                /* the output is a class map */
  gboolean probabilities;         /* scores are probabilities already */
  guint n_classes, width, height;
  float *sum;                     /* per pixel: the softmax denominator */
} Segment;

static gboolean
fits (const M2iIrIoInfo *io, gboolean strict, Segment *s)
{
  const M2iShape *sh = &io->shape;
  gint64 c, h, w;
  if (sh->rank == 4 && sh->dims[0] == 1) {
    c = sh->dims[1];
    h = sh->dims[2];
    w = sh->dims[3];
  } else if (sh->rank == 3 && sh->dims[0] == 1) {
    c = 1;
    h = sh->dims[1];
    w = sh->dims[2];
  } else {
    return FALSE;
  }
  if (c < 1 || c > 65535 || h < 1 || w < 1 || h > MAX_SIDE || w > MAX_SIDE || h * w > MAX_PIXELS)
    return FALSE;
  if (c >= 2 && !m2i_element_type_is_float (io->type))
    return FALSE;
  if (io->type == M2I_ET_UNDEFINED || io->type == M2I_ET_BF16)
    return FALSE;
  /* AUTO: a real map, and float maps only as class scores */
  if (strict && (h < AUTO_MIN_SIDE || w < AUTO_MIN_SIDE || c > AUTO_MAX_CLASSES
          || (c < 2 && m2i_element_type_is_float (io->type))))
    return FALSE;
  s->argmax = c < 2;
  s->n_classes = (guint) c;
  s->height = (guint) h;
  s->width = (guint) w;
  return TRUE;
}

/* The output to read: the first that fits (for AUTO, the model's only
 * output besides auxiliary ones). */
static gboolean
find_output (M2iIrModel *model, gboolean named, Segment *s, GError **error)
{
  memset (s, 0, sizeof *s);
  s->out = -1;
  guint candidates = 0;
  for (gint i = 0; i < m2i_ir_model_get_n_outputs (model); i++) {
    const M2iIrIoInfo *io = m2i_ir_model_get_output (model, i);
    if (infer_output_is_auxiliary (io->name))
      continue;
    candidates++;
    /* AUTO leaves detection heads to their decoders */
    const char *producer = infer_output_producer_type (model, i);
    if (!named && (!strcmp (producer, "RegionYolo") || !strcmp (producer, "DetectionOutput")))
      continue;
    Segment t;
    if (s->out < 0 && fits (io, !named, &t)) {
      *s = t;
      s->out = i;
      s->name = io->name;
      s->shape = io->shape;
    }
  }
  if (s->out < 0 || (!named && candidates != 1)) {
    g_autofree gchar *got = infer_output_shape_string (model, 0);
    return infer_no_match (named, error, "no output shaped [1,C,H,W] (float "
        "class scores) or [1,H,W] / [1,1,H,W] (a class map) with H, W up to %d (output 0 is %s)",
        MAX_SIDE, got);
  }
  s->probabilities = !strcmp (infer_output_producer_type (model, s->out), "SoftMax")
      || !strcmp (infer_output_producer_type (model, s->out), "Sigmoid");
  return TRUE;
}

static gboolean
segment_match (M2iIrModel *model, const M2iDecoderOptions *opts, gboolean named, gchar **why,
    GError **error)
{
  Segment s;
  if (!find_output (model, named, &s, error))
    return FALSE;
  g_autofree gchar *shape = m2i_shape_to_string (&s.shape);
  if (s.argmax)
    *why = g_strdup_printf ("output '%s' %s: a %ux%u class map (%s)", s.name, shape, s.width,
        s.height, m2i_element_type_to_string (m2i_ir_model_get_output (model, s.out)->type));
  else
    *why = g_strdup_printf ("output '%s' %s: %u class scores a pixel on %ux%u, argmax; "
        "confidence %s%s%s", s.name, shape, s.n_classes, s.width, s.height,
        s.probabilities ? "the score (from " : "by softmax",
        s.probabilities ? infer_output_producer_type (model, s.out) : "",
        s.probabilities ? ")" : "");
  return TRUE;
}

static gboolean
segment_prepare (M2iDecoder *dec, GError **error)
{
  Segment *s = g_new0 (Segment, 1);
  if (!find_output (dec->model, TRUE, s, error)) {
    g_free (s);
    return FALSE;
  }
  if (!s->argmax && !s->probabilities)
    s->sum = g_new (float, (gsize) s->width * s->height);
  dec->state = s;
  dec->capacity.mask_width = s->width;
  dec->capacity.mask_height = s->height;
  return TRUE;
}

static void
segment_free (gpointer state)
{
  Segment *s = state;
  g_free (s->sum);
  g_free (s);
}

static void
decode_scores (const Segment *s, const float *p, guint16 *map, float *best)
{
  gsize plane = (gsize) s->width * s->height;
  for (gsize i = 0; i < plane; i++) {
    map[i] = 0;
    best[i] = p[i] < INFINITY ? p[i] : -INFINITY;    /* NaN, +inf: never the best */
  }
  for (guint c = 1; c < s->n_classes; c++) {
    const float *q = p + c * plane;
    for (gsize i = 0; i < plane; i++)
      if (q[i] > best[i] && q[i] < INFINITY) {
        best[i] = q[i];
        map[i] = (guint16) c;
      }
  }
  if (s->probabilities) {
    for (gsize i = 0; i < plane; i++)
      if (!(best[i] > -INFINITY))
        best[i] = 0.0f;
    return;
  }
  float *sum = s->sum;
  for (gsize i = 0; i < plane; i++)
    sum[i] = 0.0f;
  for (guint c = 0; c < s->n_classes; c++) {
    const float *q = p + c * plane;
    for (gsize i = 0; i < plane; i++) {
      float e = q[i] - best[i];
      if (e <= 0.0f)            /* NaN and the skipped values fail this */
        sum[i] += expf (e);
    }
  }
  for (gsize i = 0; i < plane; i++)
    best[i] = sum[i] > 0.0f ? 1.0f / sum[i] : 0.0f;
}

static void
decode_map (const Segment *s, const M2iTensor *t, guint16 *map)
{
  gsize plane = (gsize) s->width * s->height;
  for (gsize i = 0; i < plane; i++) {
    double v = infer_tensor_get (t, i);
    map[i] = v >= 0.0 && v <= 65535.0 ? (guint16) lrint (v) : 0;
  }
}

static gboolean
segment_decode (M2iDecoder *dec, const M2iTensor *outputs, guint n_outputs,
    const M2iInferGeometry *g, M2iInferResult *r, GError **error)
{
  Segment *s = dec->state;
  const M2iDecoderOptions *opts = &dec->opts;
  if (!infer_check_output (outputs, n_outputs, (guint) s->out, s->name,
          s->argmax ? M2I_ET_UNDEFINED : M2I_ET_F32, &s->shape, error))
    return FALSE;
  if (!r->mask.class_map || (!s->argmax && !r->mask.confidence)
      || r->mask.capacity < (gsize) s->width * s->height) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "segmentation decoder: the result has no %ux%u mask: make it with "
        "m2i_decoder_new_result()",
        s->width, s->height);
    return FALSE;
  }
  M2iInferMask *m = &r->mask;
  if (s->argmax)
    decode_map (s, &outputs[s->out], m->class_map);
  else
    decode_scores (s, outputs[s->out].data, m->class_map, m->confidence);
  m->width = s->width;
  m->height = s->height;
  /* an argmax map's classes are the labels' */
  m->n_classes = s->argmax ? opts->n_labels : s->n_classes;
  m->has_confidence = !s->argmax;
  r->has_mask = TRUE;
  return TRUE;
}

const InferDecoderClass infer_decoder_segmentation = {
  .type = M2I_MODEL_TYPE_SEGMENTATION,
  .match = segment_match,
  .prepare = segment_prepare,
  .decode = segment_decode,
  .free = segment_free,
};
