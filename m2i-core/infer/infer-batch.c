/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* infer-batch.c — one frame's part of a batched request: the slice of input
 * 0 its pre-processing writes, the item of each output its decoder reads.
 * See infer-private.h. */
#include "infer-private.h"

#include <string.h>

void
infer_batch_input_slot (const M2iInferModel *m, const M2iTensor *t, gint slot, M2iTensor *dst)
{
  *dst = *t;
  if (m->batch <= 1)
    return;
  gsize item = m2i_tensor_nbytes (t) / (gsize) m->batch;
  dst->shape.dims[0] = 1;
  dst->data = (guint8 *) t->data + item * (gsize) slot;
}

void
infer_batch_output (const M2iInferModel *m, gint i, const M2iTensor *full, gint slot,
    float *rows, M2iTensor *dst)
{
  *dst = *full;
  switch (m->out_kind[i]) {
    case INFER_OUT_WHOLE:
      break;
    case INFER_OUT_SLICE: {
      gsize item = m2i_tensor_nbytes (full) / (gsize) m->batch;
      dst->shape.dims[0] = 1;
      dst->data = (guint8 *) full->data + item * (gsize) slot;
      break;
    }
    case INFER_OUT_DETECTIONS: {
      /* DetectionOutput's rows [image_id, label, conf, x0, y0, x1, y1] of
       * every image, up to the first negative image_id, at most R/batch per
       * image: this item's, as image 0, then the end mark and zeros, as the
       * layer writes them (R rows: what decoders made for the model read;
       * infer_batch_output_done() gives the view a batch of one's shape) */
      gint64 n = m2i_shape_numel (&full->shape) / 7, per = n / m->batch, k = 0;
      const float *src = full->data;
      for (gint64 r = 0; r < n && src[r * 7] >= 0.0f && k < per; r++) {
        if (src[r * 7] != (float) slot)
          continue;
        memcpy (rows + k * 7, src + r * 7, 7 * sizeof (float));
        rows[k * 7] = 0.0f;
        k++;
      }
      memset (rows + k * 7, 0, (gsize) (n - k) * 7 * sizeof (float));
      if (k < per)
        rows[k * 7] = -1.0f;
      dst->data = rows;
      break;
    }
  }
}

void
infer_batch_output_done (const M2iInferModel *m, gint i, M2iTensor *t)
{
  if (m->out_kind[i] == INFER_OUT_DETECTIONS)
    t->shape.dims[2] /= m->batch;
}
