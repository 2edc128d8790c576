/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* nms.h — private: the one non-maximum suppression every detection decoder
 * uses.
 *
 * A decoder adds its candidate boxes (infer_nms_add), then runs the
 * suppression once (infer_nms_run). The candidate store holds at most its
 * capacity: once full, a better candidate replaces the worst one (a min-heap
 * on the store), so the best `capacity` candidates always enter the
 * suppression — as Ultralytics' max_nms does. Order is total and stable:
 * score descending, then the candidate's index ascending, whatever order the
 * candidates were added in. Nothing is allocated after infer_nms_init().
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
  float x1, y1, x2, y2;           /* corners (any unit; the decoder's) */
  float score;
  gint class_id;
  guint index;                    /* where it came from (anchor, row): the tie-break and the caller's key */
} InferBox;

typedef struct {
  InferBox *boxes;                /* the candidates, then the kept boxes (best first) */
  InferBox *scratch;              /* the sort's */
  float *area;                    /* per kept box */
  guint capacity, n;
  gboolean heap;                  /* the store is full and ordered as a min-heap */
  gboolean dropped;               /* a candidate was dropped (or replaced) for lack of room */
} InferNms;

/* The most candidates a store keeps (Ultralytics' max_nms). */
#define INFER_NMS_MAX_CANDIDATES 30000u

/* Room for min(@capacity, INFER_NMS_MAX_CANDIDATES) candidates (at least 1). */
void infer_nms_init (InferNms *nms, guint capacity);
void infer_nms_clear (InferNms *nms);

/* Empties the store (before each inference's candidates). */
void infer_nms_reset (InferNms *nms);

/* Adds a candidate. The caller has checked that its score and corners are
 * finite. */
void infer_nms_add (InferNms *nms, const InferBox *box);

/*
 * Sorts the candidates best first and keeps each one unless a box kept
 * before it (of the same class, or any class when @agnostic) overlaps it by
 * IoU > @iou_threshold (IoU = intersection / union of the two areas; a pair
 * with an empty union does not overlap; @iou_threshold >= 1 keeps every
 * box). Stops after @max_keep kept boxes. The kept boxes are nms->boxes[0 ..
 * return value), best first. *@truncated (may be NULL) is set when another
 * box would have been kept.
 */
guint infer_nms_run (InferNms *nms, float iou_threshold, gboolean agnostic, guint max_keep,
    gboolean *truncated);

/* IoU of two boxes as infer_nms_run() computes it (0 for an empty union). */
float infer_nms_iou (const InferBox *a, const InferBox *b);

G_END_DECLS
