/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* track-private.h — the tracker's parts (private to m2i-core/analytics):
 * the Kalman filter of one track and the assignment solver. */
#pragma once

#include "m2i-track.h"

G_BEGIN_DECLS

/* Standard deviations of the motion model, as fractions of the box size
 * (width for x and width, height for y and height), ByteTrack/BoT-SORT's:
 * position 1/20, velocity 1/160. A new track's position is twice as
 * uncertain and its velocity ten times. */
#define TRACK_STD_POSITION (1.0 / 20.0)
#define TRACK_STD_VELOCITY (1.0 / 160.0)

/* One coordinate and its velocity, with their covariance [[a, b], [b, c]].
 * With diagonal noise the filter of (cx, cy, w, h, and velocities) is four
 * independent filters of this shape. */
typedef struct {
  double p, v;
  double a, b, c;
} TrackAxis;

/* Axes: centre x, centre y, width, height. */
typedef struct {
  TrackAxis ax[4];
} TrackKalman;

/* A filter at @box (x, y, w, h > 0), velocity 0. */
void analytics_kalman_init (TrackKalman *k, const M2iTrackBox *box);

/* One frame ahead (constant velocity, process noise from the current
 * size). A size whose velocity would make it shrink to nothing stops
 * shrinking (its velocity becomes 0), as SORT does. */
void analytics_kalman_predict (TrackKalman *k);

/* Corrects the prediction with the measured @box (noise from the predicted
 * size). */
void analytics_kalman_update (TrackKalman *k, const M2iTrackBox *box);

/* The estimate as a box (x, y, w, h; class and confidence untouched) and
 * the velocities. */
void analytics_kalman_get (const TrackKalman *k, M2iTrackBox *box, float vel[4]);

/* Working memory of the assignment solver, for up to @max_n rows and
 * columns. */
typedef struct _TrackAssign TrackAssign;

TrackAssign *analytics_assign_new (guint max_n);
void analytics_assign_free (TrackAssign *w);

/* The assignment of each of @rows rows to a distinct one of @cols columns
 * (rows <= cols <= max_n) of smallest total @cost (row-major, rows x cols,
 * finite values): the Hungarian algorithm with potentials, O(rows² cols).
 * Writes row_to_col[rows]. Allocates nothing. */
void analytics_assign_solve (TrackAssign *w, const float *cost, guint rows, guint cols,
    gint *row_to_col);

G_END_DECLS
