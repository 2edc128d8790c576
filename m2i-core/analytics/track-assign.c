/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* track-assign.c — minimum-cost assignment (the Hungarian algorithm in its
 * O(n² m) form with row and column potentials, Kuhn-Munkres as refined by
 * Jonker-Volgenant's shortest augmenting paths): each row gets a distinct
 * column, the sum of the chosen costs is the smallest possible.
 *
 * Rows are added one at a time; each addition grows a shortest augmenting
 * path (Dijkstra over reduced costs cost - u[row] - v[col] >= 0) from the
 * new row to a free column and flips it. Indices are 1-based inside, column
 * 0 being the virtual start of each path.
 */
#include "track-private.h"

#include <math.h>

struct _TrackAssign {
  guint max_n;
  double *u, *v, *minv;    /* row potentials [max_n+1], column potentials and path lengths [max_n+1] */
  gint *p, *way;           /* row assigned to each column; previous column on the path */
  gboolean *used;
};

TrackAssign *
analytics_assign_new (guint max_n)
{
  TrackAssign *w = g_new0 (TrackAssign, 1);
  w->max_n = max_n;
  w->u = g_new0 (double, max_n + 1);
  w->v = g_new0 (double, max_n + 1);
  w->minv = g_new0 (double, max_n + 1);
  w->p = g_new0 (gint, max_n + 1);
  w->way = g_new0 (gint, max_n + 1);
  w->used = g_new0 (gboolean, max_n + 1);
  return w;
}

void
analytics_assign_free (TrackAssign *w)
{
  if (!w)
    return;
  g_free (w->u);
  g_free (w->v);
  g_free (w->minv);
  g_free (w->p);
  g_free (w->way);
  g_free (w->used);
  g_free (w);
}

void
analytics_assign_solve (TrackAssign *w, const float *cost, guint rows, guint cols,
    gint *row_to_col)
{
  g_return_if_fail (rows <= cols && cols <= w->max_n);
  guint n = rows, m = cols;
  for (guint j = 0; j <= m; j++) {
    w->v[j] = 0.0;
    w->p[j] = 0;
    w->way[j] = 0;
  }
  for (guint i = 0; i <= n; i++)
    w->u[i] = 0.0;
  for (guint i = 1; i <= n; i++) {
    w->p[0] = (gint) i;
    guint j0 = 0;
    for (guint j = 0; j <= m; j++) {
      w->minv[j] = INFINITY;
      w->used[j] = FALSE;
    }
    do {
      w->used[j0] = TRUE;
      guint i0 = (guint) w->p[j0], j1 = 0;
      double delta = INFINITY;
      const float *row = cost + (gsize) (i0 - 1) * cols;
      for (guint j = 1; j <= m; j++) {
        if (w->used[j])
          continue;
        double cur = (double) row[j - 1] - w->u[i0] - w->v[j];
        if (cur < w->minv[j]) {
          w->minv[j] = cur;
          w->way[j] = (gint) j0;
        }
        if (w->minv[j] < delta) {
          delta = w->minv[j];
          j1 = j;
        }
      }
      for (guint j = 0; j <= m; j++) {
        if (w->used[j]) {
          w->u[w->p[j]] += delta;
          w->v[j] -= delta;
        } else {
          w->minv[j] -= delta;
        }
      }
      j0 = j1;
    } while (w->p[j0] != 0);
    do {
      guint j1 = (guint) w->way[j0];
      w->p[j0] = w->p[j1];
      j0 = j1;
    } while (j0 != 0);
  }
  for (guint i = 0; i < n; i++)
    row_to_col[i] = -1;
  for (guint j = 1; j <= m; j++)
    if (w->p[j] != 0)
      row_to_col[w->p[j] - 1] = (gint) (j - 1);
}
