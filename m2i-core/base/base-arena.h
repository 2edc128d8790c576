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
  gint first, last;              /* lifetime, in steps; first > last: placed nowhere */
} BaseArenaBlock;

/*
 * Gives each of the @n @blocks an offset (a multiple of @align, a power of
 * two): greedy by size, each block, biggest first, goes to the lowest offset
 * not used by an already placed block whose lifetime overlaps its own.
 * Returns the arena's size (a multiple of @align; 0 for no blocks).
 */
gsize base_arena_place (BaseArenaBlock *blocks, gint n, gsize align);

G_END_DECLS
