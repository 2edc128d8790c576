/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* track.c — the tracker: track life (birth, confirmation, death), matching
 * predictions to detections, ids. See m2i-track.h. */
#include "track-private.h"

#include <base/m2i-error.h>
#include <math.h>
#include <string.h>

typedef struct {
  M2iTrack pub;
  TrackKalman kf;
  gboolean used;
} TrackSlot;

struct _M2iTracker {
  M2iTrackerParams params;
  guint64 next_id;
  guint n_tracks;
  TrackSlot *slots;        /* capacity */
  TrackAssign *assign;
  /* per-frame scratch, capacity entries each (cost: capacity²) */
  float *cost;
  guint *live;             /* slots of the live tracks */
  guint *det_index;        /* the detections taken: their index in the caller's array */
  gint *row_to_col;
  gint *det_slot;          /* slot of the track each taken detection matched, or -1 */
  gboolean *track_matched; /* per live track */
};

void
m2i_tracker_params_init (M2iTrackerParams *p)
{
  p->max_tracks = 256;
  p->min_hits = 1;
  p->max_age = 30;
  p->iou_threshold = 0.3f;
  p->per_class = TRUE;
}

M2iTracker *
m2i_tracker_new (const M2iTrackerParams *p, GError **error)
{
  const char *bad = NULL;
  if (p->max_tracks < 1 || p->max_tracks > M2I_TRACKER_MAX_TRACKS)
    bad = "max_tracks must be 1 .. " G_STRINGIFY (M2I_TRACKER_MAX_TRACKS);
  else if (p->min_hits < 1)
    bad = "min_hits must be at least 1";
  else if (p->max_age < 1)
    bad = "max_age must be at least 1";
  else if (!(p->iou_threshold > 0.0f && p->iou_threshold <= 1.0f))
    bad = "iou_threshold must be in (0, 1]";
  if (bad) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, "tracker: %s", bad);
    return NULL;
  }
  guint cap = p->max_tracks;
  M2iTracker *t = g_new0 (M2iTracker, 1);
  t->params = *p;
  t->next_id = 1;
  t->slots = g_new0 (TrackSlot, cap);
  t->assign = analytics_assign_new (cap);
  t->cost = g_new (float, (gsize) cap * cap);
  t->live = g_new (guint, cap);
  t->det_index = g_new (guint, cap);
  t->row_to_col = g_new (gint, cap);
  t->det_slot = g_new (gint, cap);
  t->track_matched = g_new (gboolean, cap);
  return t;
}

void
m2i_tracker_free (M2iTracker *t)
{
  if (!t)
    return;
  g_free (t->slots);
  analytics_assign_free (t->assign);
  g_free (t->cost);
  g_free (t->live);
  g_free (t->det_index);
  g_free (t->row_to_col);
  g_free (t->det_slot);
  g_free (t->track_matched);
  g_free (t);
}

void
m2i_tracker_reset (M2iTracker *t)
{
  for (guint s = 0; s < t->params.max_tracks; s++)
    t->slots[s].used = FALSE;
  t->n_tracks = 0;
}

guint
m2i_tracker_get_capacity (const M2iTracker *t)
{
  return t->params.max_tracks;
}

const M2iTrack *
m2i_tracker_get_track (const M2iTracker *t, guint slot)
{
  if (slot >= t->params.max_tracks || !t->slots[slot].used)
    return NULL;
  return &t->slots[slot].pub;
}

guint
m2i_tracker_n_tracks (const M2iTracker *t)
{
  return t->n_tracks;
}

float
m2i_track_box_iou (const M2iTrackBox *a, const M2iTrackBox *b)
{
  float iw = MIN (a->x + a->w, b->x + b->w) - MAX (a->x, b->x);
  float ih = MIN (a->y + a->h, b->y + b->h) - MAX (a->y, b->y);
  if (!(iw > 0.0f && ih > 0.0f) || !(a->w > 0.0f && a->h > 0.0f) || !(b->w > 0.0f && b->h > 0.0f))
    return 0.0f;
  float inter = iw * ih;
  return inter / (a->w * a->h + b->w * b->h - inter);
}

/* ---- track life ------------------------------------------------------------ */

static void
slot_sync (TrackSlot *s)
{
  float vel[4];
  analytics_kalman_get (&s->kf, &s->pub.box, vel);
  s->pub.vx = vel[0];
  s->pub.vy = vel[1];
  s->pub.vw = vel[2];
  s->pub.vh = vel[3];
}

static void
slot_free (M2iTracker *t, TrackSlot *s)
{
  s->used = FALSE;
  t->n_tracks--;
}

/* Counts a matched detection frame; confirms the track at min_hits. */
static void
track_hit (M2iTracker *t, TrackSlot *s, const M2iTrackBox *det)
{
  s->pub.box.class_id = det->class_id;
  s->pub.box.confidence = det->confidence;
  s->pub.hits++;
  s->pub.misses = 0;
  s->pub.lost = FALSE;
  if (!s->pub.confirmed && s->pub.hits >= t->params.min_hits) {
    s->pub.confirmed = TRUE;
    s->pub.id = t->next_id++;
  }
}

/* A new tentative track at @det in a free slot; the slot, or -1. */
static gint
track_new (M2iTracker *t, const M2iTrackBox *det)
{
  if (t->n_tracks >= t->params.max_tracks)
    return -1;
  guint slot = 0;
  while (t->slots[slot].used)
    slot++;
  TrackSlot *s = &t->slots[slot];
  memset (s, 0, sizeof *s);
  s->used = TRUE;
  t->n_tracks++;
  analytics_kalman_init (&s->kf, det);
  slot_sync (s);
  track_hit (t, s, det);
  return (gint) slot;
}

/* Every live track one frame ahead. */
static void
predict_all (M2iTracker *t)
{
  for (guint i = 0; i < t->params.max_tracks; i++) {
    TrackSlot *s = &t->slots[i];
    if (!s->used)
      continue;
    analytics_kalman_predict (&s->kf);
    slot_sync (s);
    s->pub.misses++;
  }
}

void
m2i_tracker_predict (M2iTracker *t)
{
  predict_all (t);
  for (guint i = 0; i < t->params.max_tracks; i++) {
    TrackSlot *s = &t->slots[i];
    if (s->used && s->pub.misses > t->params.max_age)
      slot_free (t, s);
  }
}

/* ---- matching --------------------------------------------------------------- */

static gboolean
box_valid (const M2iTrackBox *b)
{
  return isfinite (b->x) && isfinite (b->y) && isfinite (b->w) && isfinite (b->h)
      && b->w > 0.0f && b->h > 0.0f;
}

/* The IoU of a track and a detection when they may match, else -1. */
static float
match_iou (const M2iTracker *t, const TrackSlot *s, const M2iTrackBox *det)
{
  if (t->params.per_class && s->pub.box.class_id != det->class_id)
    return -1.0f;
  float iou = m2i_track_box_iou (&s->pub.box, det);
  return iou >= t->params.iou_threshold ? iou : -1.0f;
}

void
m2i_tracker_update (M2iTracker *t, const M2iTrackBox *dets, guint n_dets, gint *slots)
{
  guint cap = t->params.max_tracks;
  if (slots)
    for (guint i = 0; i < n_dets; i++)
      slots[i] = -1;
  guint nd = 0;
  for (guint i = 0; i < n_dets && nd < cap; i++)
    if (box_valid (&dets[i]))
      t->det_index[nd++] = i;

  predict_all (t);
  guint nl = 0;
  for (guint s = 0; s < cap; s++)
    if (t->slots[s].used)
      t->live[nl++] = s;
  for (guint k = 0; k < nl; k++)
    t->track_matched[k] = FALSE;
  for (guint d = 0; d < nd; d++)
    t->det_slot[d] = -1;

  /* Optimal assignment over cost 1 - IoU, a forbidden pair costing 1 (as
   * much as no overlap): the smaller set is the rows. */
  if (nl > 0 && nd > 0) {
    gboolean tracks_are_rows = nl <= nd;
    guint rows = tracks_are_rows ? nl : nd, cols = tracks_are_rows ? nd : nl;
    for (guint k = 0; k < nl; k++) {
      const TrackSlot *s = &t->slots[t->live[k]];
      for (guint d = 0; d < nd; d++) {
        float iou = match_iou (t, s, &dets[t->det_index[d]]);
        float c = iou < 0.0f ? 1.0f : 1.0f - iou;
        if (tracks_are_rows)
          t->cost[(gsize) k * cols + d] = c;
        else
          t->cost[(gsize) d * cols + k] = c;
      }
    }
    analytics_assign_solve (t->assign, t->cost, rows, cols, t->row_to_col);
    for (guint r = 0; r < rows; r++) {
      gint c = t->row_to_col[r];
      if (c < 0)
        continue;
      guint k = tracks_are_rows ? r : (guint) c, d = tracks_are_rows ? (guint) c : r;
      TrackSlot *s = &t->slots[t->live[k]];
      const M2iTrackBox *det = &dets[t->det_index[d]];
      if (match_iou (t, s, det) < 0.0f)
        continue;
      analytics_kalman_update (&s->kf, det);
      slot_sync (s);
      track_hit (t, s, det);
      t->track_matched[k] = TRUE;
      t->det_slot[d] = (gint) t->live[k];
    }
  }

  /* Tracks without a detection: a tentative one ends, a confirmed one
   * coasts until max_age. */
  for (guint k = 0; k < nl; k++) {
    if (t->track_matched[k])
      continue;
    TrackSlot *s = &t->slots[t->live[k]];
    s->pub.hits = 0;
    s->pub.lost = TRUE;
    if (!s->pub.confirmed || s->pub.misses > t->params.max_age)
      slot_free (t, s);
  }

  /* Detections without a track start one. */
  for (guint d = 0; d < nd; d++) {
    if (t->det_slot[d] < 0)
      t->det_slot[d] = track_new (t, &dets[t->det_index[d]]);
    if (slots)
      slots[t->det_index[d]] = t->det_slot[d];
  }
}
