/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* track-kalman.c — the constant-velocity Kalman filter of one track.
 *
 * State (cx, cy, w, h, vcx, vcy, vw, vh); transition x += v per frame;
 * measurement (cx, cy, w, h). Process and measurement noise are diagonal
 * with standard deviations proportional to the box size (track-private.h),
 * so the 8x8 covariance stays made of four 2x2 blocks, one per axis
 * (position, velocity), and each axis is filtered on its own:
 *
 *   predict:  p += v;  [[a b][b c]] = F P F' + Q = [[a+2b+c+qp, b+c], [b+c, c+qv]]
 *   update:   s = a + r;  k = (a/s, b/s);  y = z - p
 *             p += k0 y;  v += k1 y;  P = (I - K H) P = [[a r/s, b r/s], [b r/s, c - b²/s]]
 */
#include "track-private.h"

/* The size an axis's noise is proportional to: width for cx and w,
 * height for cy and h. */
static double
axis_size (const TrackKalman *k, int i)
{
  return (i == 0 || i == 2) ? k->ax[2].p : k->ax[3].p;
}

void
analytics_kalman_init (TrackKalman *k, const M2iTrackBox *box)
{
  double z[4] = { box->x + box->w * 0.5, box->y + box->h * 0.5, box->w, box->h };
  for (int i = 0; i < 4; i++) {
    double size = (i == 0 || i == 2) ? box->w : box->h;
    double sp = 2.0 * TRACK_STD_POSITION * size, sv = 10.0 * TRACK_STD_VELOCITY * size;
    k->ax[i] = (TrackAxis) { .p = z[i], .v = 0.0, .a = sp * sp, .b = 0.0, .c = sv * sv };
  }
}

void
analytics_kalman_predict (TrackKalman *k)
{
  /* A size that would reach zero or less stops changing. */
  for (int i = 2; i < 4; i++)
    if (k->ax[i].p + k->ax[i].v <= 0.0)
      k->ax[i].v = 0.0;
  double size[4];
  for (int i = 0; i < 4; i++)
    size[i] = axis_size (k, i);
  for (int i = 0; i < 4; i++) {
    TrackAxis *x = &k->ax[i];
    double qp = TRACK_STD_POSITION * size[i], qv = TRACK_STD_VELOCITY * size[i];
    double a = x->a + 2.0 * x->b + x->c + qp * qp;
    double b = x->b + x->c;
    double c = x->c + qv * qv;
    x->p += x->v;
    x->a = a;
    x->b = b;
    x->c = c;
  }
}

void
analytics_kalman_update (TrackKalman *k, const M2iTrackBox *box)
{
  double z[4] = { box->x + box->w * 0.5, box->y + box->h * 0.5, box->w, box->h };
  double size[4];
  for (int i = 0; i < 4; i++)
    size[i] = axis_size (k, i);
  for (int i = 0; i < 4; i++) {
    TrackAxis *x = &k->ax[i];
    double sr = TRACK_STD_POSITION * size[i];
    double r = sr * sr;
    double s = x->a + r;
    double y = z[i] - x->p;
    double k0 = x->a / s, k1 = x->b / s;
    x->p += k0 * y;
    x->v += k1 * y;
    double a = x->a * r / s, b = x->b * r / s, c = x->c - x->b * x->b / s;
    x->a = a;
    x->b = b;
    x->c = c;
  }
}

void
analytics_kalman_get (const TrackKalman *k, M2iTrackBox *box, float vel[4])
{
  box->w = (float) k->ax[2].p;
  box->h = (float) k->ax[3].p;
  box->x = (float) (k->ax[0].p - k->ax[2].p * 0.5);
  box->y = (float) (k->ax[1].p - k->ax[3].p * 0.5);
  for (int i = 0; i < 4; i++)
    vel[i] = (float) k->ax[i].v;
}
