/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* base-arena.h — laying out buffers with lifetimes in one arena (private to
 * m2i-core: the IR runtime's request arena and the compute engine's piece
 * arena use it; not installed).
 *
 * Each block is alive from step @first to step @last (inclusive); two blocks
 * whose lifetimes overlap never share a byte, others may. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
  gsize size;
  gsize offset;                  /* set by base_arena_place */
  gint first, last;              /* lifetime, in steps (-1: from the start) */
} BaseArenaBlock;

/*
 * Gives each of the @n @blocks an offset (a multiple of @align, a power of
 * two) so that no two blocks whose lifetimes overlap share a byte; blocks
 * merged into others (first < -1), never used (first > last) and empty ones
 * get offset 0 and no space. The smaller of a best-fit sweep and greedy by
 * size (base-arena.c). Returns the arena's size (a multiple of @align; 0
 * for no blocks). O(n log n).
 */
gsize base_arena_place (BaseArenaBlock *blocks, gint n, gsize align);

G_END_DECLS
