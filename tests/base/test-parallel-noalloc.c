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

#include <malloc.h>
#include <pthread.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_SANITIZER 1
#endif
#endif

static gint counting, n_allocs;
static pthread_t main_thread;
static gint main_set;

#ifndef UNDER_SANITIZER
extern void *__libc_malloc (size_t n);
extern void *__libc_calloc (size_t n, size_t size);
extern void *__libc_realloc (void *p, size_t n);
extern void *__libc_memalign (size_t align, size_t n);

static void
count (void)
{
  if (g_atomic_int_get (&main_set) && !pthread_equal (pthread_self (), main_thread))
    usleep (100000);            /* a late worker (no GLib call: we are inside malloc) */
  if (g_atomic_int_get (&counting))
    g_atomic_int_inc (&n_allocs);
}

void *malloc (size_t n) { count (); return __libc_malloc (n); }
void *calloc (size_t n, size_t s) { count (); return __libc_calloc (n, s); }
void *realloc (void *p, size_t n) { count (); return __libc_realloc (p, n); }
void *aligned_alloc (size_t a, size_t n) { count (); return __libc_memalign (a, n); }
void *memalign (size_t a, size_t n) { count (); return __libc_memalign (a, n); }
int posix_memalign (void **out, size_t a, size_t n)
{
  count ();
  *out = __libc_memalign (a, n);
  return *out ? 0 : 12;
}
#endif

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
#ifdef UNDER_SANITIZER
  g_test_skip ("malloc belongs to the sanitizer");
  return;
#endif
  main_thread = pthread_self ();
  g_atomic_int_set (&main_set, 1);
  gint slices = MAX (2, m2i_parallel_n_cores ());
  m2i_parallel_for (G_N_ELEMENTS (hits), slices, 1, mark, NULL);   /* grows the pool */
  g_atomic_int_set (&n_allocs, 0);
  g_atomic_int_set (&counting, 1);
  for (gint k = 0; k < 20; k++)
    m2i_parallel_for (G_N_ELEMENTS (hits), slices, 1, mark, NULL);
  g_usleep (300000);            /* longer than a late worker's start */
  for (gint k = 0; k < 20; k++)
    m2i_parallel_for (G_N_ELEMENTS (hits), slices, 1, mark, NULL);
  g_atomic_int_set (&counting, 0);
  g_assert_cmpint (g_atomic_int_get (&n_allocs), ==, 0);
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
