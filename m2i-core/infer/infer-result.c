/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* infer-result.c — M2iInferResult (one allocation per result) and the
 * geometry from model-input pixels to source pixels; see
 * m2i-infer-results.h and decode-private.h. */
#include "decode-private.h"

#include <math.h>
#include <string.h>

/* ---- geometry ------------------------------------------------------------- */

void
m2i_infer_geometry_init (M2iInferGeometry *g, gint src_w, gint src_h, gint model_w,
    gint model_h, gboolean letterbox)
{
  memset (g, 0, sizeof *g);
  g->model_width = model_w;
  g->model_height = model_h;
  g->source_width = src_w;
  g->source_height = src_h;
  g->scale_x = g->scale_y = 1.0;
  if (src_w <= 0 || src_h <= 0 || model_w <= 0 || model_h <= 0)
    return;
  if (!letterbox) {
    g->scale_x = (double) model_w / src_w;
    g->scale_y = (double) model_h / src_h;
    return;
  }
  double s = MIN ((double) model_w / src_w, (double) model_h / src_h);
  g->scale_x = g->scale_y = s;
  /* the picture's pixels, rounded; the border split evenly, its odd pixel
   * on the right/bottom */
  gint pw = (gint) MIN (floor (src_w * s + 0.5), (double) model_w);
  gint ph = (gint) MIN (floor (src_h * s + 0.5), (double) model_h);
  g->pad_x = (model_w - pw) / 2;
  g->pad_y = (model_h - ph) / 2;
}

static double
clamp (double v, double hi)
{
  return v < 0.0 ? 0.0 : v > hi ? hi : v;
}

void
infer_geometry_map_box (const M2iInferGeometry *g, double x0, double y0, double x1, double y1,
    M2iInferDetection *d)
{
  double sx0 = g->crop_x + (MIN (x0, x1) - g->pad_x) / g->scale_x;
  double sy0 = g->crop_y + (MIN (y0, y1) - g->pad_y) / g->scale_y;
  double sx1 = g->crop_x + (MAX (x0, x1) - g->pad_x) / g->scale_x;
  double sy1 = g->crop_y + (MAX (y0, y1) - g->pad_y) / g->scale_y;
  d->x_min = (float) clamp (sx0, g->source_width);
  d->y_min = (float) clamp (sy0, g->source_height);
  d->x_max = (float) clamp (sx1, g->source_width);
  d->y_max = (float) clamp (sy1, g->source_height);
}

/* ---- results ---------------------------------------------------------------- */

/* Carves @count elements of @size bytes, 16-byte aligned, from the block at
 * *@at; adds to *@total when @base is NULL (sizing pass). FALSE on
 * overflow. */
static gboolean
carve (guint8 *base, gsize *at, gsize count, gsize size, gpointer *out)
{
  gsize bytes;
  if (!g_size_checked_mul (&bytes, count, size) || !g_size_checked_add (&bytes, bytes, 15))
    return FALSE;
  bytes &= ~(gsize) 15;
  if (out)
    *out = base && count ? base + *at : NULL;
  return g_size_checked_add (at, *at, bytes);
}

/* Lays out a result with the given capacities in @base (NULL: only sizes
 * it); the block's size into *@size. FALSE on overflow. */
static gboolean
layout (guint8 *base, guint max_detections, guint max_keypoints, guint n_heads,
    guint max_classes, guint max_values, guint mask_w, guint mask_h, gsize *size)
{
  M2iInferResult *r = (M2iInferResult *) base;
  gsize at = 0, mask;
  gpointer p;
  if (!carve (base, &at, 1, sizeof (M2iInferResult), NULL)
      || !g_size_checked_mul (&mask, mask_w, mask_h))
    return FALSE;
  gboolean ok = carve (base, &at, max_detections, sizeof (M2iInferDetection), &p);
  if (r)
    r->detections = p;
  ok = ok && carve (base, &at, max_keypoints, sizeof (M2iInferKeypoint), &p);
  if (r)
    r->keypoints = p;
  ok = ok && carve (base, &at, n_heads, sizeof (M2iInferHead), &p);
  if (r)
    r->heads = p;
  for (guint h = 0; ok && h < n_heads; h++) {
    ok = carve (base, &at, max_classes, sizeof (M2iInferClass), &p);
    if (r)
      r->heads[h].classes = p;
    ok = ok && carve (base, &at, max_values, sizeof (float), &p);
    if (r)
      r->heads[h].values = p;
  }
  ok = ok && carve (base, &at, mask, sizeof (guint16), &p);
  if (r)
    r->mask.class_map = p;
  ok = ok && carve (base, &at, mask, sizeof (float), &p);
  if (r)
    r->mask.confidence = p;
  *size = at;
  return ok;
}

M2iInferResult *
m2i_infer_result_new (guint max_detections, guint max_keypoints, guint n_heads,
    guint max_classes, guint max_values, guint mask_w, guint mask_h)
{
  gsize size;
  if (!layout (NULL, max_detections, max_keypoints, n_heads, max_classes, max_values, mask_w,
          mask_h, &size))
    g_error ("m2i_infer_result_new: capacities overflow the address space");
  guint8 *block = g_malloc0 (size);
  M2iInferResult *r = (M2iInferResult *) block;
  layout (block, max_detections, max_keypoints, n_heads, max_classes, max_values, mask_w,
      mask_h, &size);
  r->detections_capacity = max_detections;
  r->keypoints_capacity = max_keypoints;
  r->heads_capacity = n_heads;
  for (guint h = 0; h < n_heads; h++) {
    r->heads[h].classes_capacity = max_classes;
    r->heads[h].values_capacity = max_values;
  }
  r->mask.width = mask_w;
  r->mask.height = mask_h;
  r->mask.capacity = (gsize) mask_w * mask_h;
  return r;
}

void
m2i_infer_result_free (M2iInferResult *r)
{
  g_free (r);                   /* one block holds every array */
}

void
m2i_infer_result_clear (M2iInferResult *r)
{
  r->n_detections = 0;
  r->n_keypoints = 0;
  r->n_heads = 0;
  for (guint h = 0; h < r->heads_capacity; h++) {
    r->heads[h].n_classes = 0;
    r->heads[h].n_values = 0;
  }
  r->has_mask = FALSE;
  r->truncated = FALSE;
}
