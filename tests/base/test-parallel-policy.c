/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* When the worker pool splits a call (m2i-parallel.c, "A call is split
 * only when that pays"), seen from the slices the function receives:
 *  - calls that come back to back are split (the second slice runs);
 *  - calls far apart (a frame every 15 ms, 0.3 ms of work each: a source
 *    slower than the pre-processing) run on their caller, whole;
 *  - while as many threads as cores run device jobs, calls run on their
 *    caller (frames side by side, not the slices of one).
 * Decisions, not times, are asserted: they follow from the calls' rhythm
 * however loaded the machine is. */
#include <base/base-parallel.h>
#include <base/m2i-parallel.h>

typedef struct {
  gint calls;                  /* slices run */
  gint whole;                  /* of which the whole range */
} Seen;

static void
busy (gint begin, gint end, gint slice, gpointer data)
{
  Seen *s = data;
  g_atomic_int_inc (&s->calls);
  if (begin == 0 && end == 1000)
    g_atomic_int_inc (&s->whole);
  /* ~0.3 ms of work for the whole range */
  gint64 until = g_get_monotonic_time () + (gint64) (end - begin) * 300 / 1000;
  while (g_get_monotonic_time () < until)
    ;
}

/* @n calls of 1000 items in 2 slices, @gap_us apart; how many ran whole
 * (the last @n - @warm calls counted: the pool learns the rhythm). */
static gint
whole_calls (gint n, gint warm, gint64 gap_us)
{
  gint whole = 0;
  for (gint k = 0; k < n; k++) {
    Seen s = { 0, 0 };
    m2i_parallel_for (1000, 2, 1, busy, &s);
    g_assert_cmpint (s.calls, >=, 1);
    if (k >= warm)
      whole += s.whole;
    if (gap_us)
      g_usleep (gap_us);
  }
  return whole;
}

static void
test_back_to_back_split (void)
{
  if (m2i_parallel_n_cores () < 2) {
    g_test_skip ("one core");
    return;
  }
  g_assert_cmpint (whole_calls (40, 10, 0), <, 30);
}

static void
test_far_apart_whole (void)
{
  if (m2i_parallel_n_cores () < 2) {
    g_test_skip ("one core");
    return;
  }
  g_assert_cmpint (whole_calls (30, 10, 15000), ==, 20);
}

static void
test_frames_side_by_side (void)
{
  gint cores = m2i_parallel_n_cores ();
  for (gint i = 0; i < cores; i++)
    base_parallel_stream_enter ();
  g_assert_cmpint (whole_calls (20, 0, 0), ==, 20);
  for (gint i = 0; i < cores; i++)
    base_parallel_stream_leave ();
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/parallel/policy/back-to-back-split", test_back_to_back_split);
  g_test_add_func ("/parallel/policy/far-apart-whole", test_far_apart_whole);
  g_test_add_func ("/parallel/policy/frames-side-by-side", test_frames_side_by_side);
  return g_test_run ();
}
