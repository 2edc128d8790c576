/* base-arena.c — buffers with lifetimes in one arena; see base-arena.h. */
#include "base-arena.h"
#include "m2i-align.h"

#include <stdlib.h>

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
cmp_block_size (gconstpointer a, gconstpointer b, gpointer user_data)
{
  const BaseArenaBlock *g = user_data;
  const BaseArenaBlock *x = &g[*(const gint *) a], *y = &g[*(const gint *) b];
  if (x->size != y->size)
    return x->size > y->size ? -1 : 1;
  return x->first - y->first;
}

gsize
base_arena_place (BaseArenaBlock *blocks, gint n, gsize align)
{
  g_autofree gint *order = g_new (gint, MAX (n, 1));
  for (gint i = 0; i < n; i++)
    order[i] = i;
  g_qsort_with_data (order, n, sizeof (gint), cmp_block_size, blocks);
  g_autofree Span *busy = g_new (Span, MAX (n, 1));
  g_autofree gboolean *placed = g_new0 (gboolean, MAX (n, 1));
  gsize arena = 0;
  for (gint oi = 0; oi < n; oi++) {
    BaseArenaBlock *g = &blocks[order[oi]];
    gint nb = 0;
    for (gint j = 0; j < n; j++) {
      const BaseArenaBlock *h = &blocks[j];
      if (placed[j] && h->first <= g->last && g->first <= h->last)
        busy[nb++] = (Span) { h->offset, h->offset + h->size };
    }
    qsort (busy, nb, sizeof (Span), cmp_span);
    gsize offset = 0;
    for (gint j = 0; j < nb; j++) {
      if (busy[j].offset >= offset + g->size)
        break;
      offset = MAX (offset, m2i_align_up (busy[j].end, align));
    }
    g->offset = offset;
    placed[order[oi]] = TRUE;
    if (g->first <= g->last)
      arena = MAX (arena, m2i_align_up (offset + g->size, align));
  }
  return arena;
}
