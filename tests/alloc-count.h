/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* alloc-count.h — counts the process's heap allocations for the
 * "no allocation in steady state" tests (IR runtime, kernels, split runner,
 * worker pool).
 *
 * Include it in exactly one file of a test program: it defines malloc,
 * calloc, realloc, aligned_alloc, memalign and posix_memalign, each counting
 * (while counting is on) and forwarding to glibc. A program may define
 * ALLOC_COUNT_BEFORE() before including it to run code first in every
 * allocation (it must not allocate).
 *
 * Under a sanitizer, which owns malloc, nothing is counted:
 * ALLOC_COUNT_SANITIZED is 1 and the tests skip.
 */
#pragma once

#include <glib.h>
#include <malloc.h>
#include <stddef.h>
#include <stdlib.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define ALLOC_COUNT_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define ALLOC_COUNT_SANITIZED 1
#endif
#endif
#ifndef ALLOC_COUNT_SANITIZED
#define ALLOC_COUNT_SANITIZED 0
#endif

#ifndef ALLOC_COUNT_BEFORE
#define ALLOC_COUNT_BEFORE() ((void) 0)
#endif

static gint alloc_count_on, alloc_count_n;

/* Resets the count to zero and starts counting. */
static inline void
alloc_count_start (void)
{
  g_atomic_int_set (&alloc_count_n, 0);
  g_atomic_int_set (&alloc_count_on, 1);
}

/* Stops counting; returns the allocations since alloc_count_start(). */
static inline gint
alloc_count_stop (void)
{
  g_atomic_int_set (&alloc_count_on, 0);
  return g_atomic_int_get (&alloc_count_n);
}

/* Starts counting after checking that the counter sees GLib's allocations
 * (so that a zero afterwards means something). */
static inline void
alloc_count_start_checked (void)
{
  alloc_count_start ();
  g_free (g_malloc (16));
  g_assert_cmpint (g_atomic_int_get (&alloc_count_n), ==, ALLOC_COUNT_SANITIZED ? 0 : 1);
  alloc_count_start ();
}

#if !ALLOC_COUNT_SANITIZED
/* glibc's own entry points, so that the wrappers can forward */
extern void *__libc_malloc (size_t n);
extern void *__libc_calloc (size_t n, size_t size);
extern void *__libc_realloc (void *p, size_t n);
extern void *__libc_memalign (size_t align, size_t n);

static inline void
alloc_count_one (void)
{
  ALLOC_COUNT_BEFORE ();
  if (g_atomic_int_get (&alloc_count_on))
    g_atomic_int_inc (&alloc_count_n);
}

void *malloc (size_t n) { alloc_count_one (); return __libc_malloc (n); }
void *calloc (size_t n, size_t size) { alloc_count_one (); return __libc_calloc (n, size); }
void *realloc (void *p, size_t n) { alloc_count_one (); return __libc_realloc (p, n); }
void *aligned_alloc (size_t align, size_t n) { alloc_count_one (); return __libc_memalign (align, n); }
void *memalign (size_t align, size_t n) { alloc_count_one (); return __libc_memalign (align, n); }
int
posix_memalign (void **out, size_t align, size_t n)
{
  alloc_count_one ();
  *out = __libc_memalign (align, n);
  return *out ? 0 : 12;          /* ENOMEM */
}
#endif
