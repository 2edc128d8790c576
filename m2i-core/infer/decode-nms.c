/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* decode-nms.c — detectors with NMS inside the model (the output is the
 * final list), in the spellings OpenVINO's Model API reads:
 *
 *   boxes [N,5] or [1,N,5]   x1, y1, x2, y2, score in model-input pixels,
 *   + labels [N] or [1,N]    class ids (any number type); mmdetection /
 *                            OpenVINO Training Extensions exports
 *   boxes [1,N,4] or [N,4]   x1, y1, x2, y2 normalised to 0..1,
 *   + labels, + scores [1,N] three outputs
 *   [1,1,N,7], [1,N,7], [N,7] image_id, label, score, x1, y1, x2, y2
 *                            normalised, from a layer other than
 *                            DetectionOutput (an image_id < 0 ends the list)
 *
 * Outputs are told apart by name ("boxes", "labels", "scores" inside it, as
 * Model API does), else by shape. Rows scoring below the confidence
 * threshold, with a negative or non-finite label or box, or covering less
 * than one source pixel after clamping (Model API's rule) are dropped; the
 * best max_detections are kept, best first.
 */
#include "decode-private.h"

#include <base/m2i-error.h>
#include <math.h>
#include <string.h>

#define MAX_ROWS (1u << 24)

typedef enum { FORMAT_BOXES_LABELS, FORMAT_BOXES_LABELS_SCORES, FORMAT_ROWS7 } Format;

typedef struct {
  Format format;
  gint boxes, labels, scores;     /* output indices (-1: none) */
  const char *boxes_name, *labels_name, *scores_name;
  M2iShape boxes_shape, labels_shape, scores_shape;
  guint n, row;                   /* rows, values a row of the boxes output */
  guint capacity;                 /* detections */
  InferNms nms;
} NmsInside;

/* Rows and values a row of a [N,D] / [1,N,D] / [1,1,N,D] shape. */
static gboolean
rows_of (const M2iShape *s, guint *n, guint *d)
{
  if (s->rank < 2 || s->rank > 4)
    return FALSE;
  for (gint i = 0; i < s->rank - 2; i++)
    if (s->dims[i] != 1)
      return FALSE;
  gint64 rows = s->dims[s->rank - 2], cols = s->dims[s->rank - 1];
  if (rows < 1 || rows > MAX_ROWS || cols < 1 || cols > 1024)
    return FALSE;
  *n = (guint) rows;
  *d = (guint) cols;
  return TRUE;
}

/* [N] or [1,N]: *@n. */
static gboolean
vector_of (const M2iShape *s, guint *n)
{
  gint64 v = s->rank == 1 ? s->dims[0] : s->rank == 2 && s->dims[0] == 1 ? s->dims[1] : -1;
  if (v < 1 || v > MAX_ROWS)
    return FALSE;
  *n = (guint) v;
  return TRUE;
}

static gboolean
name_has (const char *name, const char *word)
{
  return name && strstr (name, word) != NULL;
}

/* Which outputs are the boxes, labels and scores; FALSE (with @error when
 * @named) when the model has no such outputs. */
static gboolean
find_outputs (M2iIrModel *model, gboolean named, NmsInside *d, GError **error)
{
  memset (d, 0, sizeof *d);
  d->boxes = d->labels = d->scores = -1;
  gint n_out = m2i_ir_model_get_n_outputs (model);
  guint rows = 0, row = 0, vn = 0;
  /* by name first */
  for (gint i = 0; i < n_out; i++) {
    const M2iIrIoInfo *io = m2i_ir_model_get_output (model, i);
    if (d->boxes < 0 && name_has (io->name, "boxes") && rows_of (&io->shape, &rows, &row))
      d->boxes = i;
    else if (d->labels < 0 && name_has (io->name, "labels") && vector_of (&io->shape, &vn))
      d->labels = i;
    else if (d->scores < 0 && name_has (io->name, "scores") && vector_of (&io->shape, &vn))
      d->scores = i;
  }
  /* else by shape: rows of 4, 5 or 7 values, and vectors of as many */
  for (gint i = 0; i < n_out && d->boxes < 0; i++) {
    const M2iIrIoInfo *io = m2i_ir_model_get_output (model, i);
    if (m2i_element_type_is_float (io->type) && rows_of (&io->shape, &rows, &row)
        && (row == 4 || row == 5 || row == 7) && strcmp (infer_output_producer_type (model, i),
            "DetectionOutput"))
      d->boxes = i;
  }
  if (d->boxes >= 0) {
    const M2iIrIoInfo *bo = m2i_ir_model_get_output (model, d->boxes);
    rows_of (&bo->shape, &d->n, &d->row);
    for (gint i = 0; i < n_out && d->row != 7; i++) {
      const M2iIrIoInfo *io = m2i_ir_model_get_output (model, i);
      if (i == d->boxes || i == d->labels || i == d->scores || !vector_of (&io->shape, &vn)
          || vn != d->n)
        continue;
      /* integer vectors are labels; of two float ones, scores come second */
      if (d->labels < 0 && (!m2i_element_type_is_float (io->type) || d->row == 5))
        d->labels = i;
      else if (d->scores < 0 && m2i_element_type_is_float (io->type))
        d->scores = i;
      else if (d->labels < 0)
        d->labels = i;
    }
  }
  const M2iIrIoInfo *bo = d->boxes >= 0 ? m2i_ir_model_get_output (model, d->boxes) : NULL;
  gboolean ok = bo && m2i_element_type_is_float (bo->type);
  if (ok && d->row == 7)
    d->format = FORMAT_ROWS7;
  else if (ok && d->row == 5 && d->labels >= 0)
    d->format = FORMAT_BOXES_LABELS;
  else if (ok && d->row == 4 && d->labels >= 0 && d->scores >= 0)
    d->format = FORMAT_BOXES_LABELS_SCORES;
  else
    ok = FALSE;
  for (gint *o = &d->labels; ok && o <= &d->scores; o++) {
    guint m;
    if (*o >= 0 && (!vector_of (&m2i_ir_model_get_output (model, *o)->shape, &m) || m != d->n))
      ok = FALSE;
  }
  if (ok && d->scores >= 0 && !m2i_element_type_is_float (m2i_ir_model_get_output (model,
              d->scores)->type))
    ok = FALSE;
  if (!ok) {
    g_autofree gchar *got = infer_output_shape_string (model, 0);
    return infer_no_match (named, error, "needs boxes [N,5] + labels [N], "
        "boxes [1,N,4] + labels [1,N] + scores [1,N], or rows [1,1,N,7] (not from "
        "DetectionOutput); the model has %d output%s, output 0 %s", n_out, n_out == 1 ? "" : "s",
        got);
  }
  d->boxes_name = bo->name;
  d->boxes_shape = bo->shape;
  if (d->labels >= 0) {
    d->labels_name = m2i_ir_model_get_output (model, d->labels)->name;
    d->labels_shape = m2i_ir_model_get_output (model, d->labels)->shape;
  }
  if (d->scores >= 0) {
    d->scores_name = m2i_ir_model_get_output (model, d->scores)->name;
    d->scores_shape = m2i_ir_model_get_output (model, d->scores)->shape;
  }
  return TRUE;
}

static gboolean
nms_inside_match (M2iIrModel *model, const M2iDecoderOptions *opts, gboolean named, gchar **why,
    GError **error)
{
  NmsInside d;
  if (!find_outputs (model, named, &d, error))
    return FALSE;
  g_autofree gchar *bs = m2i_shape_to_string (&d.boxes_shape);
  if (d.format == FORMAT_ROWS7)
    *why = g_strdup_printf ("'%s' %s: rows of image, label, score, box (0..1); NMS inside the "
        "model", d.boxes_name, bs);
  else if (d.format == FORMAT_BOXES_LABELS)
    *why = g_strdup_printf ("'%s' %s: boxes + score (input pixels), labels '%s'; NMS inside the "
        "model", d.boxes_name, bs, d.labels_name);
  else
    *why = g_strdup_printf ("'%s' %s: boxes (0..1), labels '%s', scores '%s'; NMS inside the "
        "model", d.boxes_name, bs, d.labels_name, d.scores_name);
  return TRUE;
}

static gboolean
nms_inside_prepare (M2iDecoder *dec, GError **error)
{
  NmsInside *d = g_new0 (NmsInside, 1);
  if (!find_outputs (dec->model, TRUE, d, error)) {
    g_free (d);
    return FALSE;
  }
  d->capacity = infer_max_detections (&dec->opts, d->n);
  infer_nms_init (&d->nms, d->n);
  dec->state = d;
  dec->capacity.max_detections = d->capacity;
  return TRUE;
}

static void
nms_inside_free (gpointer state)
{
  NmsInside *d = state;
  infer_nms_clear (&d->nms);
  g_free (d);
}

/* Adds row @i unless it is to be dropped (see the top of the file). */
static void
add_row (NmsInside *d, const M2iInferGeometry *g, float conf, guint i, float x1, float y1,
    float x2, float y2, double score, double label)
{
  if (!(score >= conf && score < INFINITY) || !(label >= 0 && label < 65536.0)
      || !(isfinite (x1) && isfinite (y1) && isfinite (x2) && isfinite (y2)))
    return;
  M2iInferDetection det;
  infer_geometry_map_box (g, x1, y1, x2, y2, &det);
  if ((det.x_max - det.x_min) * (det.y_max - det.y_min) < 1.0f)
    return;
  InferBox b = { MIN (x1, x2), MIN (y1, y2), MAX (x1, x2), MAX (y1, y2), (float) score,
    (gint) lrint (label), i };
  infer_nms_add (&d->nms, &b);
}

static gboolean
nms_inside_decode (M2iDecoder *dec, const M2iTensor *outputs, guint n_outputs,
    const M2iInferGeometry *g, M2iInferResult *r, GError **error)
{
  NmsInside *d = dec->state;
  const M2iDecoderOptions *opts = &dec->opts;
  if (!infer_check_geometry (g, error)
      || !infer_check_output (outputs, n_outputs, (guint) d->boxes, d->boxes_name, M2I_ET_F32,
          &d->boxes_shape, error)
      || (d->labels >= 0 && !infer_check_output (outputs, n_outputs, (guint) d->labels,
              d->labels_name, M2I_ET_UNDEFINED, &d->labels_shape, error))
      || (d->scores >= 0 && !infer_check_output (outputs, n_outputs, (guint) d->scores,
              d->scores_name, M2I_ET_F32, &d->scores_shape, error)))
    return FALSE;
  const float *bx = outputs[d->boxes].data;
  float sx = d->format == FORMAT_BOXES_LABELS ? 1.0f : (float) g->model_width;
  float sy = d->format == FORMAT_BOXES_LABELS ? 1.0f : (float) g->model_height;
  float conf = opts->confidence_threshold;
  infer_nms_reset (&d->nms);
  for (guint i = 0; i < d->n; i++) {
    const float *b = bx + (gsize) i * d->row;
    switch (d->format) {
      case FORMAT_ROWS7:
        if (b[0] < 0.0f)
          goto done;
        add_row (d, g, conf, i, b[3] * sx, b[4] * sy, b[5] * sx, b[6] * sy, b[2], b[1]);
        break;
      case FORMAT_BOXES_LABELS:
        add_row (d, g, conf, i, b[0], b[1], b[2], b[3], b[4], infer_tensor_get (&outputs[d->labels], i));
        break;
      case FORMAT_BOXES_LABELS_SCORES:
        add_row (d, g, conf, i, b[0] * sx, b[1] * sy, b[2] * sx, b[3] * sy,
            ((const float *) outputs[d->scores].data)[i], infer_tensor_get (&outputs[d->labels], i));
        break;
    }
  }
done:;
  gboolean truncated;
  guint kept = infer_nms_run (&d->nms, 2.0f, TRUE,
      MIN (infer_max_detections (opts, d->capacity), r->detections_capacity), &truncated);
  r->truncated |= truncated;
  for (guint i = 0; i < kept; i++)
    infer_result_add_box (r, g, &d->nms.boxes[i]);
  return TRUE;
}

const InferDecoderClass infer_decoder_detection_nms = {
  .type = M2I_MODEL_TYPE_DETECTION_NMS,
  .match = nms_inside_match,
  .prepare = nms_inside_prepare,
  .decode = nms_inside_decode,
  .free = nms_inside_free,
};
