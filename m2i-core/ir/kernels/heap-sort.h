/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* heap-sort.h — binary heaps and heap sort over arrays of one struct type
 * (not installed), for kernels that rank things at run time (DetectionOutput,
 * TopK, NonMaxSuppression, Proposal) without allocating: glibc's qsort may
 * allocate a merge buffer.
 *
 * M2I_K_HEAP (name, T, cmp) defines, for `int cmp (const T *a, const T *b)`
 * (< 0, 0, > 0 as a < b, a == b, a > b):
 *   name_sift_down (T *c, gint64 root, gint64 n)  restores the heap below root
 *   name_push (T *c, gint64 *n, T v)             adds v (c has room)
 *   name_pop (T *c, gint64 *n)                   removes and returns the top
 *   name_sort (T *c, gint64 n)                   sorts ascending by cmp
 * The top, c[0], is the largest by cmp. With cmp a total order the sort's
 * result is the one a stable sort would give.
 */
#pragma once

#include <glib.h>

#define M2I_K_HEAP(name, T, cmp) \
  G_GNUC_UNUSED static void \
  name##_sift_down (T *c, gint64 root, gint64 n) \
  { \
    for (;;) { \
      gint64 child = 2 * root + 1; \
      if (child >= n) \
        return; \
      if (child + 1 < n && cmp (&c[child], &c[child + 1]) < 0) \
        child++; \
      if (cmp (&c[root], &c[child]) >= 0) \
        return; \
      T t_ = c[root]; \
      c[root] = c[child]; \
      c[child] = t_; \
      root = child; \
    } \
  } \
  G_GNUC_UNUSED static void \
  name##_push (T *c, gint64 *n, T v) \
  { \
    gint64 i = (*n)++; \
    while (i > 0 && cmp (&c[(i - 1) / 2], &v) < 0) { \
      c[i] = c[(i - 1) / 2]; \
      i = (i - 1) / 2; \
    } \
    c[i] = v; \
  } \
  G_GNUC_UNUSED static T \
  name##_pop (T *c, gint64 *n) \
  { \
    T top = c[0]; \
    c[0] = c[--(*n)]; \
    name##_sift_down (c, 0, *n); \
    return top; \
  } \
  G_GNUC_UNUSED static void \
  name##_sort (T *c, gint64 n) \
  { \
    for (gint64 root = n / 2 - 1; root >= 0; root--) \
      name##_sift_down (c, root, n); \
    for (gint64 end = n - 1; end > 0; end--) { \
      T t_ = c[0]; \
      c[0] = c[end]; \
      c[end] = t_; \
      name##_sift_down (c, 0, end); \
    } \
  }
