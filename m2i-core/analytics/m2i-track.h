/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* m2i-track.h — multi-object tracking by detection (SORT-style), plain C.
 *
 * A tracker follows the objects a detector finds, frame after frame, and
 * gives each a stable id. Per frame the detector ran on, it is fed the
 * detected boxes (m2i_tracker_update): it predicts every track one frame
 * ahead with a constant-velocity Kalman filter (state: centre x, centre y,
 * width, height and their velocities), matches the predictions to the
 * detections by intersection over union (optimal assignment, Hungarian
 * algorithm, pairs below the IoU threshold — or of another class when
 * tracking per class — never match), corrects matched tracks with their
 * detection and starts a tentative track for each unmatched detection.
 * A track is confirmed — and gets its id — once it was matched on min_hits
 * detection frames in a row; a tentative track that misses a detection
 * frame is dropped; a confirmed one survives max_age frames without a match
 * (an occlusion) and is deleted after that. Frames the detector skipped are
 * fed with m2i_tracker_predict(), which moves every track along its motion.
 *
 * Ids start at 1 and grow by one per confirmed track; a tracker never gives
 * an id twice (m2i_tracker_reset included). At most max_tracks tracks live
 * at once; every array is allocated by m2i_tracker_new(): updating and
 * predicting allocate nothing.
 *
 * Units are the caller's (pixels, normally); the filter's noise is
 * proportional to the box size, so the units do not matter.
 */
#pragma once

#include <glib.h>
#include <m2i-core/base/m2i-export.h>

G_BEGIN_DECLS

/* The largest max_tracks: the assignment's cost matrix is max_tracks²
 * floats (4 MiB at this bound). */
#define M2I_TRACKER_MAX_TRACKS 1024

typedef struct _M2iTracker M2iTracker;

/* A box: top-left corner, width and height. */
typedef struct {
  float x, y, w, h;
  gint class_id;
  float confidence;
} M2iTrackBox;

/* What the tracker knows of one track. */
typedef struct {
  guint64 id;           /* 0 while tentative, then 1, 2, ... */
  gboolean confirmed;
  M2iTrackBox box;      /* the filter's estimate after the latest frame;
                         * class_id and confidence of the last matched detection */
  float vx, vy, vw, vh; /* estimated velocity of centre and size, units per frame */
  guint hits;           /* detection frames matched in a row */
  guint misses;         /* frames since the last match, skipped frames included (0: matched on the latest frame) */
  gboolean lost;        /* the latest detection frame did not match it */
} M2iTrack;

typedef struct {
  guint max_tracks;     /* 1 .. M2I_TRACKER_MAX_TRACKS: tracks alive at once and detections
                         * taken per frame (the first ones given) */
  guint min_hits;       /* >= 1: consecutive matched detection frames that confirm a track */
  guint max_age;        /* >= 1: frames a confirmed track lives without a match */
  float iou_threshold;  /* (0, 1]: the smallest IoU of a match */
  gboolean per_class;   /* a detection only matches a track of its class_id */
} M2iTrackerParams;

/* Fills @p with the defaults: 256 tracks, min_hits 1, max_age 30,
 * iou_threshold 0.3 (SORT's), per_class TRUE (DL Streamer's gvatrack). */
M2I_API void m2i_tracker_params_init (M2iTrackerParams *p);

/* A tracker with @p's parameters and no track. Returns NULL with @error
 * (M2I_ERROR_INVALID_ARGUMENT, naming the parameter) when a parameter is out
 * of range. Free with m2i_tracker_free(). */
M2I_API M2iTracker *m2i_tracker_new (const M2iTrackerParams *p, GError **error);

M2I_API void m2i_tracker_free (M2iTracker *t);

/* Forgets every track (a new scene, a seek). Ids keep counting. */
M2I_API void m2i_tracker_reset (M2iTracker *t);

/*
 * One frame the detector ran on, with its @n_dets detections @dets. Every
 * track is predicted one frame ahead and matched; see the top of this file.
 * When @slots is not NULL it receives @n_dets entries: the slot
 * (m2i_tracker_get_track) of the track each detection now belongs to — the
 * matched track, or the tentative track it started — or -1 when it was
 * dropped: a box without area or not finite, a detection after the first
 * max_tracks valid ones (detectors list theirs best first), or no free slot
 * for a new track.
 */
M2I_API void m2i_tracker_update (M2iTracker *t, const M2iTrackBox *dets, guint n_dets,
    gint *slots);

/* One frame the detector skipped: every track moves one frame along its
 * estimated motion (its box becomes the prediction), and confirmed tracks
 * older than max_age frames without a match are deleted. */
M2I_API void m2i_tracker_predict (M2iTracker *t);

/* The number of slots (max_tracks). */
M2I_API guint m2i_tracker_get_capacity (const M2iTracker *t);

/* The track in @slot (< capacity), or NULL when the slot is free. Owned by
 * the tracker, valid until the next update, predict or reset. A track keeps
 * its slot for its whole life. */
M2I_API const M2iTrack *m2i_tracker_get_track (const M2iTracker *t, guint slot);

/* The number of live tracks (tentative and confirmed). */
M2I_API guint m2i_tracker_n_tracks (const M2iTracker *t);

/* Intersection over union of two boxes (0 when either has no area). */
M2I_API float m2i_track_box_iou (const M2iTrackBox *a, const M2iTrackBox *b);

G_END_DECLS
