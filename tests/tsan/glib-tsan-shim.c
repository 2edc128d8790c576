/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* glib-tsan-shim.c — GLib's locks on top of POSIX threads, so that
 * ThreadSanitizer sees them (preloaded into the TSan runs of the threaded
 * tests: .ci/tsan, docs/reliability.md).
 *
 * GLib 2.74 builds GMutex, GCond and GRecMutex on raw futexes, which TSan
 * cannot see: every piece of data a GMutex protects looks unprotected to
 * it, and the reports drown in false races. Every function that touches
 * those types' insides is defined here over pthread_mutex_t, pthread_cond_t
 * and pthread_rwlock_t, whose calls TSan intercepts; and g_once_init_enter
 * and _leave (G_DEFINE_TYPE, our lazily built tables), whose release store
 * would otherwise happen inside uninstrumented libglib.
 *
 * A LD_PRELOADed definition wins for every caller outside libglib. libglib
 * itself calls its own functions directly (it is linked so), so the objects
 * it locks internally (GAsyncQueue, GMainContext, GThreadPool, its own
 * once-variables) stay on its futexes, consistently; what happens inside
 * libglib and GStreamer is left to ignore_noninstrumented_modules (.ci/tsan).
 * Zero-initialised (static) locks are valid: the pthread object is made on
 * first use and published atomically, as GLib's own posix implementation
 * does. The shim is built instrumented, so that TSan sees that publication.
 *
 * Test builds only; never shipped.
 */
#define _GNU_SOURCE
#include <glib.h>

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

static void
fail (const char *what, int err)
{
  g_error ("glib-tsan-shim: %s: %s", what, g_strerror (err));
}

/* The pthread object behind @slot, made on first use. */
#define IMPL(type, slot, make, destroy) \
  type *impl = __atomic_load_n ((type **) (slot), __ATOMIC_ACQUIRE); \
  if (G_UNLIKELY (!impl)) { \
    type *fresh = make (); \
    if (__atomic_compare_exchange_n ((type **) (slot), &impl, fresh, FALSE, __ATOMIC_ACQ_REL, \
            __ATOMIC_ACQUIRE)) \
      impl = fresh; \
    else \
      destroy (fresh); \
  }

/* ---- GMutex ------------------------------------------------------------------ */

static pthread_mutex_t *
mutex_new (void)
{
  pthread_mutex_t *m = malloc (sizeof *m);
  int err = pthread_mutex_init (m, NULL);
  if (err)
    fail ("pthread_mutex_init", err);
  return m;
}

static void
mutex_free (pthread_mutex_t *m)
{
  pthread_mutex_destroy (m);
  free (m);
}

static pthread_mutex_t *
mutex_impl (GMutex *mutex)
{
  IMPL (pthread_mutex_t, &mutex->p, mutex_new, mutex_free);
  return impl;
}

/* An object made by one thread often reaches another through code TSan
 * does not see (GStreamer's, GLib's): the pointer is published with a
 * release store that the other thread's first use acquires. */
#define PUBLISH(slot, value) __atomic_store_n ((gpointer *) (slot), (value), __ATOMIC_RELEASE)
#define TAKE(slot) __atomic_exchange_n ((gpointer *) (slot), NULL, __ATOMIC_ACQ_REL)

void
g_mutex_init (GMutex *mutex)
{
  PUBLISH (&mutex->p, mutex_new ());
}

void
g_mutex_clear (GMutex *mutex)
{
  pthread_mutex_t *m = TAKE (&mutex->p);
  if (m)
    mutex_free (m);
}

void
g_mutex_lock (GMutex *mutex)
{
  int err = pthread_mutex_lock (mutex_impl (mutex));
  if (err)
    fail ("pthread_mutex_lock", err);
}

void
g_mutex_unlock (GMutex *mutex)
{
  int err = pthread_mutex_unlock (mutex_impl (mutex));
  if (err)
    fail ("pthread_mutex_unlock", err);
}

gboolean
g_mutex_trylock (GMutex *mutex)
{
  int err = pthread_mutex_trylock (mutex_impl (mutex));
  if (err && err != EBUSY)
    fail ("pthread_mutex_trylock", err);
  return err == 0;
}

/* ---- GRecMutex ----------------------------------------------------------------- */

static pthread_mutex_t *
rec_mutex_new (void)
{
  pthread_mutexattr_t attr;
  pthread_mutexattr_init (&attr);
  pthread_mutexattr_settype (&attr, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_t *m = malloc (sizeof *m);
  int err = pthread_mutex_init (m, &attr);
  pthread_mutexattr_destroy (&attr);
  if (err)
    fail ("pthread_mutex_init", err);
  return m;
}

static pthread_mutex_t *
rec_mutex_impl (GRecMutex *mutex)
{
  IMPL (pthread_mutex_t, &mutex->p, rec_mutex_new, mutex_free);
  return impl;
}

void
g_rec_mutex_init (GRecMutex *mutex)
{
  PUBLISH (&mutex->p, rec_mutex_new ());
}

void
g_rec_mutex_clear (GRecMutex *mutex)
{
  pthread_mutex_t *m = TAKE (&mutex->p);
  if (m)
    mutex_free (m);
}

void
g_rec_mutex_lock (GRecMutex *mutex)
{
  int err = pthread_mutex_lock (rec_mutex_impl (mutex));
  if (err)
    fail ("pthread_mutex_lock", err);
}

void
g_rec_mutex_unlock (GRecMutex *mutex)
{
  int err = pthread_mutex_unlock (rec_mutex_impl (mutex));
  if (err)
    fail ("pthread_mutex_unlock", err);
}

gboolean
g_rec_mutex_trylock (GRecMutex *mutex)
{
  int err = pthread_mutex_trylock (rec_mutex_impl (mutex));
  if (err && err != EBUSY)
    fail ("pthread_mutex_trylock", err);
  return err == 0;
}

/* ---- GRWLock --------------------------------------------------------------------- */

static pthread_rwlock_t *
rw_lock_new (void)
{
  pthread_rwlock_t *l = malloc (sizeof *l);
  int err = pthread_rwlock_init (l, NULL);
  if (err)
    fail ("pthread_rwlock_init", err);
  return l;
}

static void
rw_lock_free (pthread_rwlock_t *l)
{
  pthread_rwlock_destroy (l);
  free (l);
}

static pthread_rwlock_t *
rw_lock_impl (GRWLock *lock)
{
  IMPL (pthread_rwlock_t, &lock->p, rw_lock_new, rw_lock_free);
  return impl;
}

void
g_rw_lock_init (GRWLock *lock)
{
  PUBLISH (&lock->p, rw_lock_new ());
}

void
g_rw_lock_clear (GRWLock *lock)
{
  pthread_rwlock_t *l = TAKE (&lock->p);
  if (l)
    rw_lock_free (l);
}

void
g_rw_lock_writer_lock (GRWLock *lock)
{
  int err = pthread_rwlock_wrlock (rw_lock_impl (lock));
  if (err)
    fail ("pthread_rwlock_wrlock", err);
}

gboolean
g_rw_lock_writer_trylock (GRWLock *lock)
{
  return pthread_rwlock_trywrlock (rw_lock_impl (lock)) == 0;
}

void
g_rw_lock_writer_unlock (GRWLock *lock)
{
  pthread_rwlock_unlock (rw_lock_impl (lock));
}

void
g_rw_lock_reader_lock (GRWLock *lock)
{
  int err = pthread_rwlock_rdlock (rw_lock_impl (lock));
  if (err)
    fail ("pthread_rwlock_rdlock", err);
}

gboolean
g_rw_lock_reader_trylock (GRWLock *lock)
{
  return pthread_rwlock_tryrdlock (rw_lock_impl (lock)) == 0;
}

void
g_rw_lock_reader_unlock (GRWLock *lock)
{
  pthread_rwlock_unlock (rw_lock_impl (lock));
}

/* ---- GCond (monotonic clock, as g_cond_wait_until's end time) ------------------- */

static pthread_cond_t *
cond_new (void)
{
  pthread_condattr_t attr;
  pthread_condattr_init (&attr);
  pthread_condattr_setclock (&attr, CLOCK_MONOTONIC);
  pthread_cond_t *c = malloc (sizeof *c);
  int err = pthread_cond_init (c, &attr);
  pthread_condattr_destroy (&attr);
  if (err)
    fail ("pthread_cond_init", err);
  return c;
}

static void
cond_free (pthread_cond_t *c)
{
  pthread_cond_destroy (c);
  free (c);
}

static pthread_cond_t *
cond_impl (GCond *cond)
{
  IMPL (pthread_cond_t, &cond->p, cond_new, cond_free);
  return impl;
}

void
g_cond_init (GCond *cond)
{
  PUBLISH (&cond->p, cond_new ());
}

void
g_cond_clear (GCond *cond)
{
  pthread_cond_t *c = TAKE (&cond->p);
  if (c)
    cond_free (c);
}

void
g_cond_wait (GCond *cond, GMutex *mutex)
{
  int err = pthread_cond_wait (cond_impl (cond), mutex_impl (mutex));
  if (err)
    fail ("pthread_cond_wait", err);
}

void
g_cond_signal (GCond *cond)
{
  pthread_cond_signal (cond_impl (cond));
}

void
g_cond_broadcast (GCond *cond)
{
  pthread_cond_broadcast (cond_impl (cond));
}

gboolean
g_cond_wait_until (GCond *cond, GMutex *mutex, gint64 end_time)
{
  struct timespec ts = { end_time / G_USEC_PER_SEC, (end_time % G_USEC_PER_SEC) * 1000 };
  int err = pthread_cond_timedwait (cond_impl (cond), mutex_impl (mutex), &ts);
  if (err && err != ETIMEDOUT)
    fail ("pthread_cond_timedwait", err);
  return err == 0;
}

/* ---- g_once_init_enter / g_once_init_leave -------------------------------------- */

/* (gthread.h makes both macros around the functions) */
#undef g_once_init_enter
#undef g_once_init_leave

/* Locations whose initialisation is running (rarely more than a few at once). */
#define MAX_RUNNING 256

static pthread_mutex_t once_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t once_cond = PTHREAD_COND_INITIALIZER;
static volatile void *running[MAX_RUNNING];

static gint
running_index (volatile void *location)
{
  for (gint i = 0; i < MAX_RUNNING; i++)
    if (running[i] == location)
      return i;
  return -1;
}

gboolean
g_once_init_enter (volatile void *location)
{
  gsize *p = (gsize *) location;
  gboolean mine = FALSE;
  pthread_mutex_lock (&once_lock);
  while (!__atomic_load_n (p, __ATOMIC_ACQUIRE)) {
    if (running_index (location) < 0) {
      gint free_slot = running_index (NULL);
      if (free_slot < 0)
        g_error ("glib-tsan-shim: more than %d initialisations at once", MAX_RUNNING);
      running[free_slot] = location;
      mine = TRUE;
      break;
    }
    pthread_cond_wait (&once_cond, &once_lock);
  }
  pthread_mutex_unlock (&once_lock);
  return mine;
}

void
g_once_init_leave (volatile void *location, gsize result)
{
  pthread_mutex_lock (&once_lock);
  __atomic_store_n ((gsize *) location, result, __ATOMIC_RELEASE);
  gint i = running_index (location);
  if (i >= 0)
    running[i] = NULL;
  pthread_cond_broadcast (&once_cond);
  pthread_mutex_unlock (&once_lock);
}
