/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* base-arena.c — where each buffer lives in one arena (the IR runtime's
 * request arena, the compute engine's piece arena); see base-arena.h.
 *
 * The buffers (BaseArenaBlock) have a size and a lifetime [first, last] in steps;
 * two buffers alive at a common step may not share a byte. Two placements
 * are made and the smaller arena kept:
 *
 *  - a sweep over the steps, as an allocator would see them: at the step
 *    where buffers start, every buffer whose last reader ran before it is
 *    freed first, then the new ones are placed, biggest first, into the
 *    smallest free block that holds them (best fit; free neighbours
 *    merge), else on top of the arena. Free blocks are kept in two
 *    balanced trees, by (size, offset) for the best fit and by offset for
 *    merging: O(n log n) for n buffers, whatever the graph;
 *  - greedy by size (TFLite's planner, and ours before): each buffer,
 *    biggest first, at the lowest offset free of the placed buffers alive
 *    with it. It packs tighter, and costs O(P log P) for P pairs of
 *    buffers alive together, which a sweep counts first: it runs only when
 *    P <= 32 n + 65536, so the whole stays O(n log n). (The greedy planner
 *    this replaces compared every buffer with every placed one, O(n²):
 *    26 s for a chain of 40,000 layers.)
 *
 * Self-contained: reads only size, first and last, writes only offset;
 * bench-memplan prints both placements beside the old planner's.
 */
#include "base-arena.h"
#include "m2i-align.h"

#include <string.h>

typedef struct {
  gsize offset, size;
} Block;

static gint
cmp_by_size (gconstpointer a, gconstpointer b, gpointer unused)
{
  const Block *x = a, *y = b;
  if (x->size != y->size)
    return x->size < y->size ? -1 : 1;
  return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static gint
cmp_by_offset (gconstpointer a, gconstpointer b, gpointer unused)
{
  const Block *x = a, *y = b;
  return x->offset < y->offset ? -1 : x->offset > y->offset;
}

typedef struct {
  GTree *by_size, *by_offset;   /* the same free blocks, inside [0, top) */
  gsize top, peak;              /* end of the used part; its high-water mark */
} Arena;

static void
block_insert (Arena *a, gsize offset, gsize size)
{
  Block *b = g_new (Block, 1);
  *b = (Block) { offset, size };
  g_tree_insert (a->by_size, b, b);
  g_tree_insert (a->by_offset, b, b);
}

static void
block_remove (Arena *a, Block *b)
{
  g_tree_remove (a->by_size, b);
  g_tree_remove (a->by_offset, b);
  g_free (b);
}

static gsize
arena_alloc (Arena *a, gsize size)
{
  Block key = { 0, size };
  GTreeNode *fit = g_tree_lower_bound (a->by_size, &key);
  if (fit) {
    Block *b = g_tree_node_key (fit);
    gsize offset = b->offset, rest = b->size - size;
    block_remove (a, b);
    if (rest)
      block_insert (a, offset + size, rest);
    return offset;
  }
  gsize offset = a->top;
  a->top += size;
  a->peak = MAX (a->peak, a->top);
  return offset;
}

static void
arena_free (Arena *a, gsize offset, gsize size)
{
  Block key = { offset, 0 };
  /* the free block just after, and the one just before */
  GTreeNode *next = g_tree_upper_bound (a->by_offset, &key);
  GTreeNode *prev = next ? g_tree_node_previous (next) : g_tree_node_last (a->by_offset);
  if (next) {
    Block *n = g_tree_node_key (next);
    if (n->offset == offset + size) {
      size += n->size;
      block_remove (a, n);
    }
  }
  if (prev) {
    Block *p = g_tree_node_key (prev);
    if (p->offset + p->size == offset) {
      offset = p->offset;
      size += p->size;
      block_remove (a, p);
    }
  }
  if (offset + size == a->top)
    a->top = offset;            /* the top shrinks back: no free block there */
  else
    block_insert (a, offset, size);
}

static gint
cmp_start (gconstpointer pa, gconstpointer pb, gpointer user_data)
{
  const BaseArenaBlock *g = user_data;
  gint i = *(const gint *) pa, j = *(const gint *) pb;
  if (g[i].first != g[j].first)
    return g[i].first < g[j].first ? -1 : 1;
  if (g[i].size != g[j].size)
    return g[i].size > g[j].size ? -1 : 1;
  return i - j;
}

static gint
cmp_end (gconstpointer pa, gconstpointer pb, gpointer user_data)
{
  const BaseArenaBlock *g = user_data;
  gint i = *(const gint *) pa, j = *(const gint *) pb;
  if (g[i].last != g[j].last)
    return g[i].last < g[j].last ? -1 : 1;
  return i - j;
}

/* The sweep: offsets of the @m groups @starts (sorted by cmp_start) into
 * @offset (indexed like @groups); returns the arena's size. */
static gsize
sweep_place (const BaseArenaBlock *groups, const gint *starts, const gint *ends, gint m, gsize align,
    gsize *offset)
{
  Arena a = {
    g_tree_new_full (cmp_by_size, NULL, NULL, NULL),
    g_tree_new_full (cmp_by_offset, NULL, NULL, NULL), 0, 0,
  };
  gint e = 0;
  for (gint k = 0; k < m; k++) {
    const BaseArenaBlock *g = &groups[starts[k]];
    for (; e < m && groups[ends[e]].last < g->first; e++) {
      const BaseArenaBlock *h = &groups[ends[e]];
      arena_free (&a, offset[ends[e]], m2i_align_up (h->size, align));
    }
    offset[starts[k]] = arena_alloc (&a, m2i_align_up (g->size, align));
  }
  /* what is left: free the blocks (the trees own none) */
  GTreeNode *node;
  while ((node = g_tree_node_first (a.by_offset)))
    block_remove (&a, g_tree_node_key (node));
  g_tree_unref (a.by_size);
  g_tree_unref (a.by_offset);
  return a.peak;
}

/* The pairs of groups alive at the same step, as per-group lists (CSR:
 * group i's in list[start[i] .. start[i + 1]]), found by a sweep in start
 * order; FALSE (nothing kept) as soon as there are more than @budget. */
static gboolean
overlaps (const BaseArenaBlock *groups, gint n, const gint *starts, gint m, gsize budget,
    gint **start_out, gint **list_out)
{
  GArray *pairs = g_array_new (FALSE, FALSE, 2 * sizeof (gint));
  g_autofree gint *active = g_new (gint, MAX (m, 1));
  gint n_active = 0;
  for (gint k = 0; k < m; k++) {
    gint i = starts[k];
    for (gint j = 0; j < n_active;) {
      if (groups[active[j]].last < groups[i].first)
        active[j] = active[--n_active];
      else
        j++;
    }
    if (pairs->len + n_active > budget) {
      g_array_free (pairs, TRUE);
      return FALSE;
    }
    for (gint j = 0; j < n_active; j++) {
      gint pair[2] = { i, active[j] };
      g_array_append_val (pairs, pair);
    }
    active[n_active++] = i;
  }
  gint *start = g_new0 (gint, n + 1), *list = g_new (gint, MAX (2 * pairs->len, 1));
  const gint *p = (const gint *) pairs->data;
  for (guint k = 0; k < pairs->len; k++) {
    start[p[2 * k] + 1]++;
    start[p[2 * k + 1] + 1]++;
  }
  for (gint i = 0; i < n; i++)
    start[i + 1] += start[i];
  g_autofree gint *fill = g_memdup2 (start, (n + 1) * sizeof (gint));
  for (guint k = 0; k < pairs->len; k++) {
    list[fill[p[2 * k]]++] = p[2 * k + 1];
    list[fill[p[2 * k + 1]]++] = p[2 * k];
  }
  g_array_free (pairs, TRUE);
  *start_out = start;
  *list_out = list;
  return TRUE;
}

typedef struct {
  gsize offset, end;
} Span;

static gint
cmp_span (gconstpointer a, gconstpointer b)
{
  const Span *x = a, *y = b;
  return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static gint
cmp_size (gconstpointer pa, gconstpointer pb, gpointer user_data)
{
  const BaseArenaBlock *g = user_data;
  gint i = *(const gint *) pa, j = *(const gint *) pb;
  if (g[i].size != g[j].size)
    return g[i].size > g[j].size ? -1 : 1;
  if (g[i].first != g[j].first)
    return g[i].first < g[j].first ? -1 : 1;
  return i - j;
}

/* Greedy by size: each group, biggest first, at the lowest offset free of
 * the placed groups it overlaps (its list), into @offset; returns the
 * arena's size. O(P log P) for P overlapping pairs. */
static gsize
greedy_place (const BaseArenaBlock *groups, gint n, const gint *live, gint m, const gint *start,
    const gint *list, gsize align, gsize *offset)
{
  g_autofree gint *order = g_memdup2 (live, MAX (m, 1) * sizeof (gint));
  g_qsort_with_data (order, m, sizeof (gint), cmp_size, (gpointer) groups);
  g_autofree gboolean *placed = g_new0 (gboolean, MAX (n, 1));
  GArray *busy = g_array_new (FALSE, FALSE, sizeof (Span));
  gsize arena = 0;
  for (gint k = 0; k < m; k++) {
    gint i = order[k];
    g_array_set_size (busy, 0);
    for (gint j = start[i]; j < start[i + 1]; j++) {
      gint h = list[j];
      if (placed[h]) {
        Span sp = { offset[h], offset[h] + groups[h].size };
        g_array_append_val (busy, sp);
      }
    }
    g_array_sort (busy, cmp_span);
    gsize at = 0, size = groups[i].size;
    for (guint j = 0; j < busy->len; j++) {
      const Span *sp = &g_array_index (busy, Span, j);
      if (sp->offset >= at + size)
        break;
      at = MAX (at, m2i_align_up (sp->end, align));
    }
    offset[i] = at;
    arena = MAX (arena, m2i_align_up (at + size, align));
    placed[i] = TRUE;
  }
  g_array_free (busy, TRUE);
  return arena;
}

gsize
base_arena_place (BaseArenaBlock *groups, gint n, gsize align)
{
  g_autofree gint *starts = g_new (gint, MAX (n, 1));
  g_autofree gint *ends = g_new (gint, MAX (n, 1));
  gint m = 0;
  for (gint i = 0; i < n; i++) {
    groups[i].offset = 0;
    /* merged-away (first < -1), never used (first > last) and empty ones
     * take no space */
    if (groups[i].first >= -1 && groups[i].first <= groups[i].last && groups[i].size)
      starts[m++] = i;
  }
  memcpy (ends, starts, m * sizeof (gint));
  g_qsort_with_data (starts, m, sizeof (gint), cmp_start, groups);
  g_qsort_with_data (ends, m, sizeof (gint), cmp_end, groups);
  g_autofree gsize *offset = g_new0 (gsize, MAX (n, 1));
  gsize arena = sweep_place (groups, starts, ends, m, align, offset);
  /* greedy by size packs tighter (squeezenet1.1: 4.5 MiB against 5.1),
   * in time proportional to the pairs of buffers alive together: run when
   * they are few enough to keep the whole O(n log n), keep the smaller */
  gint *start, *list;
  if (overlaps (groups, n, starts, m, 32 * (gsize) m + 65536, &start, &list)) {
    g_autofree gsize *other = g_new0 (gsize, MAX (n, 1));
    gsize greedy = greedy_place (groups, n, starts, m, start, list, align, other);
    if (greedy <= arena) {
      arena = greedy;
      memcpy (offset, other, n * sizeof (gsize));
    }
    g_free (start);
    g_free (list);
  }
  for (gint k = 0; k < m; k++)
    groups[starts[k]].offset = offset[starts[k]];
  return arena;
}
