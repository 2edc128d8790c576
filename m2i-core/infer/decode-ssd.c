/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* decode-ssd.c — SSD: output 0 comes from DetectionOutput, [1,1,N,7] rows
 * of image_id, label, confidence, x_min, y_min, x_max, y_max (corners
 * normalised to the model's input). Rows up to the first with a negative
 * image_id, confidence >= the threshold, in the model's order; boxes
 * mapped to source pixels through the geometry. */
#include "decode-private.h"

#include <base/m2i-error.h>
#include <string.h>

/* The row count N of output 0 when it is DetectionOutput's [..,N,7]; 0
 * otherwise. */
static gint64
row_count (M2iIrModel *model)
{
  if (m2i_ir_model_get_n_outputs (model) < 1)
    return 0;
  const M2iIrIoInfo *io = m2i_ir_model_get_output (model, 0);
  const M2iShape *s = &io->shape;
  if (!m2i_element_type_is_float (io->type)
      || strcmp (infer_output_producer_type (model, 0), "DetectionOutput")
      || s->rank != 4 || s->dims[3] != 7 || s->dims[0] != 1 || s->dims[1] != 1
      || s->dims[2] < 1 || s->dims[2] > G_MAXINT)
    return 0;
  return s->dims[2];
}

static gboolean
ssd_match (M2iIrModel *model, const M2iDecoderOptions *opts, gboolean named, gchar **why,
    GError **error)
{
  gint64 n = row_count (model);
  const M2iIrIoInfo *io = m2i_ir_model_get_output (model, 0);
  if (!n) {
    if (named)
      infer_output_mismatch (model, 0, "SSD's is [1,1,N,7] from DetectionOutput", error);
    return FALSE;
  }
  *why = g_strdup_printf ("output '%s' [1,1,%" G_GINT64_FORMAT ",7] from DetectionOutput",
      io->name, n);
  return TRUE;
}

static gboolean
ssd_prepare (M2iDecoder *dec, GError **error)
{
  guint *rows = g_new (guint, 1);
  *rows = (guint) row_count (dec->model);
  dec->state = rows;
  dec->capacity.max_detections = MIN (*rows, MAX (dec->opts.max_detections, 1));
  return TRUE;
}

static float
clamp01 (float v)
{
  return v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v;
}

static gboolean
ssd_decode (M2iDecoder *dec, const M2iTensor *outputs, guint n_outputs,
    const M2iInferGeometry *g, M2iInferResult *r, GError **error)
{
  guint n_rows = *(const guint *) dec->state;
  if (!infer_output_check_f32 (outputs, n_outputs, 0, (gint64) n_rows * 7, "SSD", error))
    return FALSE;
  const float *rows = outputs[0].data;
  guint max = MIN (dec->opts.max_detections, r->detections_capacity);
  float threshold = dec->opts.confidence_threshold;
  for (guint i = 0; i < n_rows; i++) {
    const float *row = rows + (gsize) i * 7;
    if (row[0] < 0.0f)
      break;
    if (!(row[2] >= threshold))
      continue;
    if (r->n_detections == max) {
      r->truncated = TRUE;
      break;
    }
    M2iInferDetection *d = &r->detections[r->n_detections++];
    /* (a label out of int range, or NaN, is no class) */
    d->class_id = row[1] >= -1.0f && row[1] < 2147483520.0f ? (gint) row[1] : -1;
    d->confidence = row[2];
    d->first_keypoint = d->n_keypoints = 0;
    infer_geometry_map_box (g, clamp01 (row[3]) * (double) g->model_width,
        clamp01 (row[4]) * (double) g->model_height, clamp01 (row[5]) * (double) g->model_width,
        clamp01 (row[6]) * (double) g->model_height, d);
  }
  return TRUE;
}

const InferDecoderClass infer_decoder_ssd = {
  .type = M2I_MODEL_TYPE_SSD,
  .match = ssd_match,
  .prepare = ssd_prepare,
  .decode = ssd_decode,
  .free = g_free,
};
