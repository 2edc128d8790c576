/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* After the call that grew the pool, nothing in the process allocates: not
 * the calls, and not the new workers either. A worker allocates as it
 * starts (GLib's thread setup); if the scheduler starts it late, that
 * allocation fell into the caller's steady state (kernels-noalloc failed
 * so, once, under load). Here every allocation made off the main thread
 * first waits 100 ms, a worker started as late as a busy machine may start
 * it, and only then asks whether counting is on: it is counted unless the
 * call that created the worker waited for it to start.
 * Skipped under sanitizers, which own malloc. */
#include <base/m2i-parallel.h>

#include <pthread.h>
#include <unistd.h>

static pthread_t main_thread;
static gint main_set;

/* a late worker: every allocation off the main thread waits first (no GLib
 * call: this runs inside malloc) */
#define ALLOC_COUNT_BEFORE() \
  ((g_atomic_int_get (&main_set) && !pthread_equal (pthread_self (), main_thread)) \
      ? (void) usleep (100000) : (void) 0)
#include "../alloc-count.h"

static gint hits[4096];

static void
mark (gint begin, gint end, gint slice, gpointer data)
{
  for (gint i = begin; i < end; i++)
    g_atomic_int_inc (&hits[i]);
}

static void
test_late_worker (void)
{
if (ALLOC_COUNT_SANITIZED) {
    g_test_skip ("malloc belongs to the sanitizer");
    return;
  }
  main_thread = pthread_self ();
  g_atomic_int_set (&main_set, 1);
  gint slices = MAX (2, m2i_parallel_n_cores ());
  m2i_parallel_for (G_N_ELEMENTS (hits), slices, 1, mark, NULL);   /* grows the pool */
  alloc_count_start ();
  for (gint k = 0; k < 20; k++)
    m2i_parallel_for (G_N_ELEMENTS (hits), slices, 1, mark, NULL);
  g_usleep (300000);            /* longer than a late worker's start */
  for (gint k = 0; k < 20; k++)
    m2i_parallel_for (G_N_ELEMENTS (hits), slices, 1, mark, NULL);
  g_assert_cmpint (alloc_count_stop (), ==, 0);
  for (guint i = 0; i < G_N_ELEMENTS (hits); i++)
    g_assert_cmpint (hits[i], ==, 41);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/parallel/no-allocation-after-growth", test_late_worker);
  return g_test_run ();
}
