/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The shared worker pool: every item visited exactly once, from many callers
 * at once, and nested calls do not deadlock. */
#include <base/m2i-parallel.h>
#include <time.h>

typedef struct {
  gint *hits;
  gint nested;
} Ctx;

static void
mark (gint begin, gint end, gint slice, gpointer data)
{
  Ctx *c = data;
  g_assert_cmpint (begin, <, end);
  for (gint i = begin; i < end; i++)
    g_atomic_int_inc (&c->hits[i]);
}

static void
mark_nested (gint begin, gint end, gint slice, gpointer data)
{
  Ctx *c = data;
  for (gint i = begin; i < end; i++) {
    Ctx inner = { c->hits + (gsize) i * 10, 0 };
    m2i_parallel_for (10, 4, 1, mark, &inner);
  }
}

static void
check_once (gint n, gint slices, gint grain)
{
  Ctx c = { g_new0 (gint, n), 0 };
  m2i_parallel_for (n, slices, grain, mark, &c);
  for (gint i = 0; i < n; i++)
    g_assert_cmpint (c.hits[i], ==, 1);
  g_free (c.hits);
}

static void
test_cover (void)
{
  gint sizes[] = { 1, 2, 3, 7, 64, 1000, 1081 };
  for (guint i = 0; i < G_N_ELEMENTS (sizes); i++)
    for (gint s = 0; s <= 9; s++)
      check_once (sizes[i], s, 1 + (gint) i % 3);
  m2i_parallel_for (0, 4, 1, mark, NULL);       /* empty range: no call */
}

static gpointer
hammer (gpointer data)
{
  for (int k = 0; k < 200; k++)
    check_once (97 + k % 13, 1 + k % 5, 1);
  return NULL;
}

static void
test_concurrent_callers (void)
{
  GThread *t[6];
  for (int i = 0; i < 6; i++)
    t[i] = g_thread_new ("caller", hammer, NULL);
  for (int i = 0; i < 6; i++)
    g_thread_join (t[i]);
}

static void
test_nested (void)
{
  Ctx c = { g_new0 (gint, 400), 0 };
  m2i_parallel_for (40, 4, 1, mark_nested, &c);
  for (gint i = 0; i < 400; i++)
    g_assert_cmpint (c.hits[i], ==, 1);
  g_free (c.hits);
}

static double
process_cpu_ms (void)
{
  struct timespec t;
  clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Workers spin a little after a call (so back-to-back calls find them
 * awake), but an idle pool must not burn CPU: 200 ms without calls cost
 * (nearly) no CPU time. */
static void
test_idle_pool_sleeps (void)
{
  for (int k = 0; k < 50; k++)
    check_once (1000, 4, 1);
  g_usleep (10000);
  double c0 = process_cpu_ms ();
  g_usleep (200000);
  double spent = process_cpu_ms () - c0;
  g_assert_cmpfloat (spent, <, 20.0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_assert_cmpint (m2i_parallel_n_cores (), >=, 1);
  g_test_add_func ("/parallel/cover", test_cover);
  g_test_add_func ("/parallel/concurrent", test_concurrent_callers);
  g_test_add_func ("/parallel/nested", test_nested);
  g_test_add_func ("/parallel/idle-pool-sleeps", test_idle_pool_sleeps);
  return g_test_run ();
}
