/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* m2i-align.h — sizes and addresses rounded up to a multiple.
 *
 * Buffers for SIMD kernels, arenas and packed tensors are laid out in whole
 * vectors or cache lines (16 floats, 64 bytes); these two helpers are the
 * one way the project writes that. Header only: nothing is exported.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* @n rounded up to a multiple of @multiple (> 0; any value, though powers
 * of two compile to a mask). @n + @multiple - 1 must not overflow. */
static inline gsize
m2i_align_up (gsize n, gsize multiple)
{
  return (n + multiple - 1) / multiple * multiple;
}

/* The first address at or after @p that is a multiple of @multiple (a power
 * of two): allocate @multiple - 1 bytes more than needed. */
static inline gpointer
m2i_align_pointer (gconstpointer p, gsize multiple)
{
  return (gpointer) (((guintptr) p + multiple - 1) & ~(guintptr) (multiple - 1));
}

G_END_DECLS
