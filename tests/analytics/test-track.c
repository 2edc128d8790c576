/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-track.c — the tracker (m2i-core/analytics) without GStreamer.
 *
 * References are independent of the code under test:
 *  - the assignment against brute force over every injective row→column map;
 *  - the Kalman filter against a textbook dense 8x8 filter written here
 *    (x = F x, P = F P Fᵀ + Q, K = P Hᵀ (H P Hᵀ + R)⁻¹, ...) with the noise
 *    model m2i-track.h documents;
 *  - ids and boxes against hand-computed sequences (constant-velocity
 *    objects whose true positions are known in closed form).
 */
#include <analytics/m2i-track.h>
#include <analytics/track-private.h>
#include <base/m2i-error.h>
#include <math.h>
#include <string.h>

#include "../alloc-count.h"

static M2iTrackBox
box (float x, float y, float w, float h, gint cls)
{
  return (M2iTrackBox) { .x = x, .y = y, .w = w, .h = h, .class_id = cls, .confidence = 0.9f };
}

static M2iTracker *
tracker_new (guint max_tracks, guint min_hits, guint max_age, float iou, gboolean per_class)
{
  M2iTrackerParams p;
  m2i_tracker_params_init (&p);
  p.max_tracks = max_tracks;
  p.min_hits = min_hits;
  p.max_age = max_age;
  p.iou_threshold = iou;
  p.per_class = per_class;
  GError *error = NULL;
  M2iTracker *t = m2i_tracker_new (&p, &error);
  g_assert_no_error (error);
  return t;
}

/* The id each detection got (0: none). */
static void
update_ids (M2iTracker *t, const M2iTrackBox *dets, guint n, guint64 *ids)
{
  gint slots[16];
  g_assert_cmpuint (n, <=, G_N_ELEMENTS (slots));
  m2i_tracker_update (t, dets, n, slots);
  for (guint i = 0; i < n; i++) {
    const M2iTrack *tr = slots[i] >= 0 ? m2i_tracker_get_track (t, (guint) slots[i]) : NULL;
    ids[i] = tr ? tr->id : 0;
  }
}

static guint64
update_one (M2iTracker *t, M2iTrackBox d)
{
  guint64 id;
  update_ids (t, &d, 1, &id);
  return id;
}

/* The live track with @id, or NULL. */
static const M2iTrack *
find_track (M2iTracker *t, guint64 id)
{
  for (guint s = 0; s < m2i_tracker_get_capacity (t); s++) {
    const M2iTrack *tr = m2i_tracker_get_track (t, s);
    if (tr && tr->id == id)
      return tr;
  }
  return NULL;
}

/* ---- assignment ------------------------------------------------------------ */

static double best_cost;

static void
brute (const float *cost, guint rows, guint cols, guint r, guint used, double sum)
{
  if (r == rows) {
    best_cost = MIN (best_cost, sum);
    return;
  }
  for (guint c = 0; c < cols; c++)
    if (!(used & (1u << c)))
      brute (cost, rows, cols, r + 1, used | (1u << c), sum + cost[r * cols + c]);
}

static void
test_assign_brute_force (void)
{
  TrackAssign *w = analytics_assign_new (8);
  GRand *rand = g_rand_new_with_seed (7);
  float cost[64];
  gint r2c[8];
  for (guint iter = 0; iter < 400; iter++) {
    guint rows = (guint) g_rand_int_range (rand, 1, 7);
    guint cols = (guint) g_rand_int_range (rand, (gint) rows, 8);
    /* some iterations with ties and the tracker's forbidden value 1.0 */
    for (guint i = 0; i < rows * cols; i++)
      cost[i] = (iter % 3 == 0) ? (float) g_rand_int_range (rand, 0, 4) / 4.0f
          : (float) g_rand_double (rand);
    analytics_assign_solve (w, cost, rows, cols, r2c);
    double sum = 0.0;
    guint used = 0;
    for (guint r = 0; r < rows; r++) {
      g_assert_cmpint (r2c[r], >=, 0);
      g_assert_cmpint (r2c[r], <, (gint) cols);
      g_assert_false (used & (1u << r2c[r]));
      used |= 1u << r2c[r];
      sum += cost[r * cols + (guint) r2c[r]];
    }
    best_cost = INFINITY;
    brute (cost, rows, cols, 0, 0, 0.0);
    g_assert_cmpfloat_with_epsilon (sum, best_cost, 1e-5);
  }
  g_rand_free (rand);
  analytics_assign_free (w);
}

/* ---- Kalman filter against a dense textbook filter ---------------------------- */

#define N 8
#define M 4

typedef struct {
  double x[N], P[N][N];
} Dense;

static double
dense_size (const Dense *k, int i)
{
  return (i % 2 == 0) ? k->x[2] : k->x[3];   /* cx, w: width; cy, h: height */
}

static void
dense_init (Dense *k, M2iTrackBox b)
{
  memset (k, 0, sizeof *k);
  double z[M] = { b.x + b.w / 2, b.y + b.h / 2, b.w, b.h };
  for (int i = 0; i < M; i++) {
    k->x[i] = z[i];
    double s = (i % 2 == 0) ? b.w : b.h;
    k->P[i][i] = pow (2 * s / 20, 2);
    k->P[i + 4][i + 4] = pow (10 * s / 160, 2);
  }
}

static void
dense_predict (Dense *k)
{
  double F[N][N] = { { 0 } }, FP[N][N] = { { 0 } }, P[N][N] = { { 0 } }, x[N] = { 0 };
  for (int i = 0; i < N; i++)
    F[i][i] = 1;
  for (int i = 0; i < M; i++)
    F[i][i + 4] = 1;
  double q[N];
  for (int i = 0; i < M; i++) {
    q[i] = pow (dense_size (k, i) / 20, 2);
    q[i + 4] = pow (dense_size (k, i) / 160, 2);
  }
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      x[i] += F[i][j] * k->x[j];
      for (int l = 0; l < N; l++)
        FP[i][j] += F[i][l] * k->P[l][j];
    }
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      for (int l = 0; l < N; l++)
        P[i][j] += FP[i][l] * F[j][l];
      if (i == j)
        P[i][j] += q[i];
    }
  memcpy (k->x, x, sizeof x);
  memcpy (k->P, P, sizeof P);
}

/* Inverts the 4x4 @a into @inv by Gauss-Jordan elimination. */
static void
invert4 (double a[M][M], double inv[M][M])
{
  double m[M][2 * M];
  for (int i = 0; i < M; i++)
    for (int j = 0; j < 2 * M; j++)
      m[i][j] = j < M ? a[i][j] : (j - M == i);
  for (int c = 0; c < M; c++) {
    int piv = c;
    for (int r = c + 1; r < M; r++)
      if (fabs (m[r][c]) > fabs (m[piv][c]))
        piv = r;
    for (int j = 0; j < 2 * M; j++) {
      double t = m[c][j];
      m[c][j] = m[piv][j];
      m[piv][j] = t;
    }
    double d = m[c][c];
    for (int j = 0; j < 2 * M; j++)
      m[c][j] /= d;
    for (int r = 0; r < M; r++)
      if (r != c) {
        double f = m[r][c];
        for (int j = 0; j < 2 * M; j++)
          m[r][j] -= f * m[c][j];
      }
  }
  for (int i = 0; i < M; i++)
    for (int j = 0; j < M; j++)
      inv[i][j] = m[i][j + M];
}

static void
dense_update (Dense *k, M2iTrackBox b)
{
  double z[M] = { b.x + b.w / 2, b.y + b.h / 2, b.w, b.h };
  double S[M][M], Si[M][M], K[N][M] = { { 0 } }, P[N][N];
  /* H selects the first four states: H P Hᵀ is P's top-left block. */
  for (int i = 0; i < M; i++)
    for (int j = 0; j < M; j++)
      S[i][j] = k->P[i][j] + (i == j ? pow (dense_size (k, i) / 20, 2) : 0.0);
  invert4 (S, Si);
  for (int i = 0; i < N; i++)
    for (int j = 0; j < M; j++)
      for (int l = 0; l < M; l++)
        K[i][j] += k->P[i][l] * Si[l][j];
  double y[M];
  for (int i = 0; i < M; i++)
    y[i] = z[i] - k->x[i];
  for (int i = 0; i < N; i++)
    for (int j = 0; j < M; j++)
      k->x[i] += K[i][j] * y[j];
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      P[i][j] = k->P[i][j];
      for (int l = 0; l < M; l++)
        P[i][j] -= K[i][l] * k->P[l][j];
    }
  memcpy (k->P, P, sizeof P);
}

static void
check_against_dense (const M2iTrack *tr, const Dense *k)
{
  double want[M] = { k->x[0] - k->x[2] / 2, k->x[1] - k->x[3] / 2, k->x[2], k->x[3] };
  double got[M] = { tr->box.x, tr->box.y, tr->box.w, tr->box.h };
  double vgot[M] = { tr->vx, tr->vy, tr->vw, tr->vh };
  for (int i = 0; i < M; i++) {
    g_assert_cmpfloat (fabs (got[i] - want[i]), <, 1e-3 * MAX (1.0, fabs (want[i])));
    g_assert_cmpfloat (fabs (vgot[i] - k->x[i + 4]), <, 1e-3 * MAX (1.0, fabs (k->x[i + 4])));
  }
}

static void
test_kalman_dense (void)
{
  M2iTracker *t = tracker_new (4, 1, 10, 0.1f, TRUE);
  GRand *rand = g_rand_new_with_seed (3);
  Dense k;
  guint64 id = 0;
  for (int f = 0; f < 40; f++) {
    /* a box growing and moving, detected with noise, skipped 1 frame in 4 */
    M2iTrackBox d = box (50 + 4.0f * f + (float) g_rand_double_range (rand, -2, 2),
        80 - 1.5f * f + (float) g_rand_double_range (rand, -2, 2),
        60 + 0.5f * f + (float) g_rand_double_range (rand, -1, 1),
        120 + 1.0f * f + (float) g_rand_double_range (rand, -1, 1), 0);
    if (f == 0) {
      id = update_one (t, d);
      dense_init (&k, d);
    } else if (f % 4 == 3) {
      m2i_tracker_predict (t);
      dense_predict (&k);
    } else {
      g_assert_cmpuint (update_one (t, d), ==, id);
      dense_predict (&k);
      dense_update (&k, d);
    }
    check_against_dense (find_track (t, id), &k);
  }
  g_rand_free (rand);
  m2i_tracker_free (t);
}

/* ---- hand-computed sequences -------------------------------------------------- */

/* One object at constant velocity (5, 2) px/frame, 100x200: one id; the
 * velocity converges, and a skipped frame's prediction is where the object
 * is. */
static void
test_moving_object (void)
{
  M2iTracker *t = tracker_new (8, 1, 30, 0.3f, TRUE);
  for (int f = 0; f < 20; f++)
    g_assert_cmpuint (update_one (t, box (100 + 5.0f * f, 50 + 2.0f * f, 100, 200, 0)), ==, 1);
  const M2iTrack *tr = find_track (t, 1);
  g_assert_nonnull (tr);
  g_assert_cmpfloat (fabs (tr->vx - 5.0f), <, 0.25f);
  g_assert_cmpfloat (fabs (tr->vy - 2.0f), <, 0.25f);
  g_assert_cmpfloat (fabs (tr->vw), <, 0.25f);
  /* frame 20 skipped: the prediction is at (200, 90) */
  m2i_tracker_predict (t);
  g_assert_cmpfloat (fabs (tr->box.x - 200.0f), <, 1.0f);
  g_assert_cmpfloat (fabs (tr->box.y - 90.0f), <, 1.0f);
  g_assert_cmpfloat (fabs (tr->box.w - 100.0f), <, 1.0f);
  g_assert_cmpfloat (fabs (tr->box.h - 200.0f), <, 1.0f);
  g_assert_cmpuint (tr->misses, ==, 1);
  g_assert_false (tr->lost);
  /* frame 21 detected again */
  g_assert_cmpuint (update_one (t, box (205, 92, 100, 200, 0)), ==, 1);
  g_assert_cmpuint (tr->misses, ==, 0);
  g_assert_cmpuint (m2i_tracker_n_tracks (t), ==, 1);
  m2i_tracker_free (t);
}

/* A 40x80 object moving 12 px/frame, detected on frames 0-3 and then every
 * third frame: between
 * two detections it moves 36 px, IoU (40-36)/(40+36) = 0.053 < 0.3, so only
 * the motion model can keep its id. Without it (a tracker fed only the
 * detection frames, velocity not yet learnt) a second detection 36 px away
 * starts a new track. */
static void
test_skipped_frames (void)
{
  M2iTracker *t = tracker_new (8, 1, 30, 0.3f, TRUE);
  /* learn the velocity on 4 consecutive frames first */
  for (int f = 0; f < 4; f++)
    g_assert_cmpuint (update_one (t, box (12.0f * f, 10, 40, 80, 0)), ==, 1);
  for (int f = 4; f < 40; f++) {
    if (f % 3 == 0) {
      g_assert_cmpuint (update_one (t, box (12.0f * f, 10, 40, 80, 0)), ==, 1);
    } else {
      m2i_tracker_predict (t);
      const M2iTrack *tr = find_track (t, 1);
      g_assert_nonnull (tr);
      /* the prediction lags while the velocity is learnt, then follows */
      g_assert_cmpfloat (fabs (tr->box.x - 12.0f * f), <, f < 15 ? 10.0f : 1.0f);
      g_assert_cmpfloat (fabs (tr->box.y - 10.0f), <, 0.5f);
    }
  }
  g_assert_cmpuint (m2i_tracker_n_tracks (t), ==, 1);
  g_assert_cmpfloat (fabs (find_track (t, 1)->vx - 12.0f), <, 0.1f);
  m2i_tracker_free (t);

  /* the IoU alone: a new id */
  M2iTrackBox a = box (0, 10, 40, 80, 0), b = box (36, 10, 40, 80, 0);
  g_assert_cmpfloat (fabs (m2i_track_box_iou (&a, &b) - 4.0f / 76.0f), <, 1e-6f);
  t = tracker_new (8, 1, 30, 0.3f, TRUE);
  g_assert_cmpuint (update_one (t, a), ==, 1);
  g_assert_cmpuint (update_one (t, b), ==, 2);
  m2i_tracker_free (t);
}

/* Two people (same class, 40x80) walking towards each other at 6 px/frame
 * from x = 0 and x = 200 cross at frame 16.7; the detections come in either
 * order. The one walking right keeps id 1 all the way, the other id 2. */
static void
test_crossing (void)
{
  M2iTracker *t = tracker_new (8, 1, 30, 0.3f, TRUE);
  for (int f = 0; f < 36; f++) {
    float xa = 6.0f * f, xb = 200 - 6.0f * f;
    M2iTrackBox d[2] = { box (xa, 20, 40, 80, 1), box (xb, 20, 40, 80, 1) };
    guint64 ids[2];
    if (f % 2 == 1) {
      M2iTrackBox s = d[0];
      d[0] = d[1];
      d[1] = s;
    }
    update_ids (t, d, 2, ids);
    guint64 want_a = 1, want_b = 2;
    g_assert_cmpuint (ids[f % 2 == 1 ? 1 : 0], ==, want_a);
    g_assert_cmpuint (ids[f % 2 == 1 ? 0 : 1], ==, want_b);
  }
  g_assert_cmpuint (m2i_tracker_n_tracks (t), ==, 2);
  m2i_tracker_free (t);
}

/* An object moving 4 px/frame is not detected on frames 10..14 (the
 * detector ran and missed it: an occlusion), then found again where it
 * walked to: same id. The track is lost during the gap. */
static void
test_occlusion_gap (void)
{
  M2iTracker *t = tracker_new (8, 1, 30, 0.3f, TRUE);
  for (int f = 0; f < 25; f++) {
    M2iTrackBox d = box (30 + 4.0f * f, 40, 50, 100, 0);
    if (f >= 10 && f < 15) {
      m2i_tracker_update (t, NULL, 0, NULL);
      const M2iTrack *tr = find_track (t, 1);
      g_assert_nonnull (tr);
      g_assert_true (tr->lost);
      g_assert_cmpuint (tr->misses, ==, (guint) (f - 9));
      g_assert_cmpfloat (fabs (tr->box.x - (30 + 4.0f * f)), <, 2.0f);
    } else {
      g_assert_cmpuint (update_one (t, d), ==, 1);
      g_assert_false (find_track (t, 1)->lost);
    }
  }
  m2i_tracker_free (t);
}

/* New objects get the next ids; with min_hits 3 an object gets its id on its
 * third detection in a row, and a detection seen twice then gone (a false
 * positive) never takes one. */
static void
test_new_objects (void)
{
  M2iTracker *t = tracker_new (8, 3, 30, 0.3f, TRUE);
  M2iTrackBox a = box (10, 10, 50, 50, 0), b = box (200, 10, 50, 50, 0),
      fp = box (400, 10, 50, 50, 0), c = box (10, 200, 50, 50, 0);
  guint64 ids[3];
  /* frames 0..2: a alone, confirmed at frame 2 */
  for (int f = 0; f < 3; f++) {
    update_ids (t, &a, 1, ids);
    g_assert_cmpuint (ids[0], ==, f < 2 ? 0 : 1);
  }
  /* frames 3, 4: a, and a false positive */
  for (int f = 3; f < 5; f++) {
    M2iTrackBox d[2] = { a, fp };
    update_ids (t, d, 2, ids);
    g_assert_cmpuint (ids[0], ==, 1);
    g_assert_cmpuint (ids[1], ==, 0);
  }
  /* frames 5..8: a and b (b confirmed at frame 7 as id 2; the false
   * positive's tentative track ended at frame 5) */
  for (int f = 5; f < 9; f++) {
    M2iTrackBox d[2] = { a, b };
    update_ids (t, d, 2, ids);
    g_assert_cmpuint (ids[0], ==, 1);
    g_assert_cmpuint (ids[1], ==, f < 7 ? 0 : 2);
  }
  g_assert_cmpuint (m2i_tracker_n_tracks (t), ==, 2);
  /* frames 9..11: c joins: id 3 */
  for (int f = 9; f < 12; f++) {
    M2iTrackBox d[3] = { c, a, b };
    update_ids (t, d, 3, ids);
    g_assert_cmpuint (ids[0], ==, f < 11 ? 0 : 3);
    g_assert_cmpuint (ids[1], ==, 1);
    g_assert_cmpuint (ids[2], ==, 2);
  }
  m2i_tracker_free (t);
}

/* max_age 5: an object missed for 6 frames is deleted and comes back with a
 * new id; ids are never given twice, not after a reset either; a freed slot
 * is used again. */
static void
test_ids_freed (void)
{
  M2iTracker *t = tracker_new (1, 1, 5, 0.3f, TRUE);
  M2iTrackBox a = box (10, 10, 50, 50, 0), b = box (300, 10, 50, 50, 0);
  gint slot;
  g_assert_cmpuint (update_one (t, a), ==, 1);
  /* capacity 1: a second object has no slot */
  M2iTrackBox d[2] = { a, b };
  gint slots[2];
  m2i_tracker_update (t, d, 2, slots);
  g_assert_cmpint (slots[0], ==, 0);
  g_assert_cmpint (slots[1], ==, -1);
  for (int f = 1; f <= 6; f++) {
    if (f % 2)
      m2i_tracker_update (t, NULL, 0, NULL);
    else
      m2i_tracker_predict (t);
    g_assert_cmpuint (m2i_tracker_n_tracks (t), ==, f <= 5 ? 1 : 0);
  }
  g_assert_null (m2i_tracker_get_track (t, 0));
  m2i_tracker_update (t, &a, 1, &slot);
  g_assert_cmpint (slot, ==, 0);
  g_assert_cmpuint (m2i_tracker_get_track (t, 0)->id, ==, 2);
  m2i_tracker_reset (t);
  g_assert_cmpuint (m2i_tracker_n_tracks (t), ==, 0);
  g_assert_cmpuint (update_one (t, a), ==, 3);
  m2i_tracker_free (t);
}

/* Per class: a person and a bag in the same place are two tracks, and a
 * detection changing class starts a new one; across classes it matches. */
static void
test_per_class (void)
{
  M2iTrackBox person = box (10, 10, 60, 120, 1), bag = box (12, 12, 60, 120, 2);
  guint64 ids[2];
  M2iTracker *t = tracker_new (8, 1, 30, 0.3f, TRUE);
  M2iTrackBox d[2] = { person, bag };
  update_ids (t, d, 2, ids);
  g_assert_cmpuint (ids[0], ==, 1);
  g_assert_cmpuint (ids[1], ==, 2);
  M2iTrackBox swapped[2] = { bag, person };
  update_ids (t, swapped, 2, ids);
  g_assert_cmpuint (ids[0], ==, 2);
  g_assert_cmpuint (ids[1], ==, 1);
  M2iTrackBox as_bag = person;
  as_bag.class_id = 3;
  g_assert_cmpuint (update_one (t, as_bag), ==, 3);
  m2i_tracker_free (t);

  t = tracker_new (8, 1, 30, 0.3f, FALSE);
  g_assert_cmpuint (update_one (t, person), ==, 1);
  g_assert_cmpuint (update_one (t, as_bag), ==, 1);
  g_assert_cmpint (find_track (t, 1)->box.class_id, ==, 3);
  m2i_tracker_free (t);
}

/* Bad boxes are dropped, bad parameters refused with a message. */
static void
test_bad_input (void)
{
  M2iTracker *t = tracker_new (4, 1, 30, 0.3f, TRUE);
  M2iTrackBox d[4] = { box (0, 0, 0, 10, 0), box (NAN, 0, 10, 10, 0), box (0, 0, 10, INFINITY, 0),
    box (0, 0, 10, 10, 0) };
  gint slots[4];
  m2i_tracker_update (t, d, 4, slots);
  g_assert_cmpint (slots[0], ==, -1);
  g_assert_cmpint (slots[1], ==, -1);
  g_assert_cmpint (slots[2], ==, -1);
  g_assert_cmpint (slots[3], >=, 0);
  m2i_tracker_free (t);

  /* more detections than tracks: the first max_tracks valid ones are taken */
  t = tracker_new (2, 1, 30, 0.3f, TRUE);
  M2iTrackBox many[4] = { box (0, 0, 0, 10, 0), box (0, 0, 10, 10, 0), box (100, 0, 10, 10, 0),
    box (200, 0, 10, 10, 0) };
  m2i_tracker_update (t, many, 4, slots);
  g_assert_cmpint (slots[0], ==, -1);
  g_assert_cmpint (slots[1], >=, 0);
  g_assert_cmpint (slots[2], >=, 0);
  g_assert_cmpint (slots[3], ==, -1);
  m2i_tracker_free (t);

  M2iTrackerParams p;
  const char *msgs[] = { "max_tracks", "max_tracks", "min_hits", "max_age", "iou_threshold",
    "iou_threshold" };
  for (guint i = 0; i < G_N_ELEMENTS (msgs); i++) {
    m2i_tracker_params_init (&p);
    switch (i) {
      case 0: p.max_tracks = 0; break;
      case 1: p.max_tracks = M2I_TRACKER_MAX_TRACKS + 1; break;
      case 2: p.min_hits = 0; break;
      case 3: p.max_age = 0; break;
      case 4: p.iou_threshold = 0.0f; break;
      default: p.iou_threshold = NAN; break;
    }
    GError *error = NULL;
    g_assert_null (m2i_tracker_new (&p, &error));
    g_assert_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT);
    g_assert_nonnull (strstr (error->message, msgs[i]));
    g_error_free (error);
  }
}

/* Updating and predicting allocate nothing. */
static void
test_no_allocation (void)
{
  if (ALLOC_COUNT_SANITIZED) {
    g_test_skip ("malloc belongs to the sanitizer");
    return;
  }
  M2iTracker *t = tracker_new (64, 2, 10, 0.3f, TRUE);
  M2iTrackBox d[12];
  gint slots[12];
  alloc_count_start_checked ();
  for (int f = 0; f < 200; f++) {
    guint n = 0;
    for (int o = 0; o < 12; o++)
      if ((f / 20 + o) % 5 != 0)           /* objects come and go */
        d[n++] = box (50.0f * o + 2.0f * (f % 20), 30.0f * (o % 3), 40, 80, o % 2);
    if (f % 3 == 2)
      m2i_tracker_predict (t);
    else
      m2i_tracker_update (t, d, n, slots);
  }
  g_assert_cmpint (alloc_count_stop (), ==, 0);
  m2i_tracker_free (t);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/track/assign/brute-force", test_assign_brute_force);
  g_test_add_func ("/track/kalman/dense-reference", test_kalman_dense);
  g_test_add_func ("/track/moving-object", test_moving_object);
  g_test_add_func ("/track/skipped-frames", test_skipped_frames);
  g_test_add_func ("/track/crossing", test_crossing);
  g_test_add_func ("/track/occlusion-gap", test_occlusion_gap);
  g_test_add_func ("/track/new-objects", test_new_objects);
  g_test_add_func ("/track/ids-freed", test_ids_freed);
  g_test_add_func ("/track/per-class", test_per_class);
  g_test_add_func ("/track/bad-input", test_bad_input);
  g_test_add_func ("/track/no-allocation", test_no_allocation);
  return g_test_run ();
}
