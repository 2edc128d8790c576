/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* nms.c — candidate store, stable sort and greedy suppression (see nms.h). */
#include "nms.h"

#include <string.h>

/* The total order: higher score first, then lower index. */
static inline gboolean
better (const InferBox *a, const InferBox *b)
{
  return a->score > b->score || (a->score == b->score && a->index < b->index);
}

void
infer_nms_init (InferNms *nms, guint capacity)
{
  memset (nms, 0, sizeof *nms);
  nms->capacity = CLAMP (capacity, 1u, INFER_NMS_MAX_CANDIDATES);
  nms->boxes = g_new (InferBox, nms->capacity);
  nms->scratch = g_new (InferBox, nms->capacity);
  nms->area = g_new (float, nms->capacity);
}

void
infer_nms_clear (InferNms *nms)
{
  g_free (nms->boxes);
  g_free (nms->scratch);
  g_free (nms->area);
  memset (nms, 0, sizeof *nms);
}

void
infer_nms_reset (InferNms *nms)
{
  nms->n = 0;
  nms->heap = FALSE;
  nms->dropped = FALSE;
}

/* Min-heap on the order: the worst candidate at the root. */
static void
sift_down (InferBox *h, guint n, guint i)
{
  InferBox x = h[i];
  for (;;) {
    guint c = 2 * i + 1;
    if (c >= n)
      break;
    if (c + 1 < n && better (&h[c], &h[c + 1]))
      c++;                        /* the worse child */
    if (!better (&x, &h[c]))
      break;
    h[i] = h[c];
    i = c;
  }
  h[i] = x;
}

void
infer_nms_add (InferNms *nms, const InferBox *box)
{
  if (nms->n < nms->capacity) {
    nms->boxes[nms->n++] = *box;
    return;
  }
  nms->dropped = TRUE;
  if (!nms->heap) {
    for (guint i = nms->n / 2; i-- > 0;)
      sift_down (nms->boxes, nms->n, i);
    nms->heap = TRUE;
  }
  if (better (box, &nms->boxes[0])) {
    nms->boxes[0] = *box;
    sift_down (nms->boxes, nms->n, 0);
  }
}

/* Stable merge sort, best first: insertion-sorted runs of 16, then
 * bottom-up merges between the boxes and the scratch. */
static void
sort_boxes (InferNms *nms)
{
  InferBox *a = nms->boxes, *b = nms->scratch;
  guint n = nms->n;
  const guint run = 16;
  for (guint s = 0; s < n; s += run) {
    guint e = MIN (s + run, n);
    for (guint i = s + 1; i < e; i++) {
      InferBox x = a[i];
      guint j = i;
      while (j > s && better (&x, &a[j - 1])) {
        a[j] = a[j - 1];
        j--;
      }
      a[j] = x;
    }
  }
  for (guint w = run; w < n; w *= 2) {
    for (guint s = 0; s < n; s += 2 * w) {
      guint m = MIN (s + w, n), e = MIN (s + 2 * w, n), i = s, j = m, k = s;
      while (i < m && j < e)
        b[k++] = better (&a[j], &a[i]) ? a[j++] : a[i++];
      while (i < m)
        b[k++] = a[i++];
      while (j < e)
        b[k++] = a[j++];
    }
    InferBox *t = a;
    a = b;
    b = t;
  }
  if (a != nms->boxes)
    memcpy (nms->boxes, a, n * sizeof *a);
}

static inline float
box_area (const InferBox *b)
{
  return MAX (b->x2 - b->x1, 0.0f) * MAX (b->y2 - b->y1, 0.0f);
}

static inline float
iou_with_areas (const InferBox *a, float area_a, const InferBox *b, float area_b)
{
  float w = MIN (a->x2, b->x2) - MAX (a->x1, b->x1);
  float h = MIN (a->y2, b->y2) - MAX (a->y1, b->y1);
  if (w <= 0.0f || h <= 0.0f)
    return 0.0f;
  float inter = w * h, uni = area_a + area_b - inter;
  return uni > 0.0f ? inter / uni : 0.0f;
}

float
infer_nms_iou (const InferBox *a, const InferBox *b)
{
  return iou_with_areas (a, box_area (a), b, box_area (b));
}

guint
infer_nms_run (InferNms *nms, float iou_threshold, gboolean agnostic, guint max_keep,
    gboolean *truncated)
{
  if (truncated)
    *truncated = FALSE;
  sort_boxes (nms);
  gboolean suppress = iou_threshold < 1.0f;
  guint kept = 0;
  for (guint i = 0; i < nms->n; i++) {
    InferBox b = nms->boxes[i];
    float area = box_area (&b);
    gboolean keep = TRUE;
    for (guint k = 0; suppress && k < kept; k++) {
      const InferBox *o = &nms->boxes[k];
      if ((agnostic || o->class_id == b.class_id)
          && iou_with_areas (o, nms->area[k], &b, area) > iou_threshold) {
        keep = FALSE;
        break;
      }
    }
    if (!keep)
      continue;
    if (kept == max_keep) {
      if (truncated)
        *truncated = TRUE;
      break;
    }
    nms->boxes[kept] = b;
    nms->area[kept] = area;
    kept++;
  }
  nms->n = kept;
  return kept;
}
