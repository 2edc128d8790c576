/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* split-dag.c — the partitioner's core: grouping units of equal label into
 * pieces without making a cycle between pieces.
 *
 * Edge contraction, the way TensorFlow's TensorRT segmenter and TVM's region
 * merging reason: an edge A → B between two groups of the same label may be
 * contracted only if it is the only path from A to B. If another path
 * A → X → … → B existed, the merged group would both feed X and read from
 * it: a cycle. Contracting only such edges keeps the group graph a DAG
 * (a contraction of a DAG along an edge with no parallel path is a DAG).
 * Edges are visited in the topological order of their targets, so chains
 * grow from the inputs down, as OpenVINO HETERO grows subgraphs from their
 * roots and ONNX Runtime sweeps its waves in Kahn order.
 */
#include "split-private.h"

#include <string.h>

typedef struct {
  gint n;
  gint *parent;                 /* union-find */
  GHashTable **succ, **pred;    /* per root: set of root indices (as pointers + 1) */
  gint *stamp;
  gint stamp_now;
  gint *stack;
} Groups;

static gint
find (Groups *g, gint u)
{
  while (g->parent[u] != u) {
    g->parent[u] = g->parent[g->parent[u]];
    u = g->parent[u];
  }
  return u;
}

#define KEY(i) GINT_TO_POINTER ((i) + 1)
#define IDX(p) (GPOINTER_TO_INT (p) - 1)

/* TRUE when a path from @a to @b exists other than the direct edge. */
static gboolean
other_path (Groups *g, gint a, gint b)
{
  g->stamp_now++;
  gint top = 0;
  GHashTableIter it;
  gpointer k;
  g_hash_table_iter_init (&it, g->succ[a]);
  while (g_hash_table_iter_next (&it, &k, NULL)) {
    gint s = IDX (k);
    if (s != b && g->stamp[s] != g->stamp_now) {
      g->stamp[s] = g->stamp_now;
      g->stack[top++] = s;
    }
  }
  while (top) {
    gint x = g->stack[--top];
    if (x == b)
      return TRUE;
    g_hash_table_iter_init (&it, g->succ[x]);
    while (g_hash_table_iter_next (&it, &k, NULL)) {
      gint s = IDX (k);
      if (g->stamp[s] != g->stamp_now) {
        g->stamp[s] = g->stamp_now;
        g->stack[top++] = s;
      }
    }
  }
  return FALSE;
}

/* The edges of root @b in one direction (@out[b]: its neighbours that
 * way, @back[n]: the reverse sets) moved to root @a; an edge between @a
 * and @b is dropped rather than becoming a loop. Called once with
 * (succ, pred) and once with (pred, succ). */
static void
move_edges (GHashTable **out, GHashTable **back, gint a, gint b)
{
  GHashTableIter it;
  gpointer k;
  g_hash_table_iter_init (&it, out[b]);
  while (g_hash_table_iter_next (&it, &k, NULL)) {
    gint n = IDX (k);
    g_hash_table_remove (back[n], KEY (b));
    if (n != a) {
      g_hash_table_add (out[a], k);
      g_hash_table_add (back[n], KEY (a));
    }
  }
}

/* Merges root @b into root @a. */
static void
merge (Groups *g, gint a, gint b)
{
  move_edges (g->succ, g->pred, a, b);
  move_edges (g->pred, g->succ, a, b);
  g_hash_table_remove (g->succ[a], KEY (b));
  g_hash_table_remove (g->pred[a], KEY (b));
  g_hash_table_remove_all (g->succ[b]);
  g_hash_table_remove_all (g->pred[b]);
  g->parent[b] = a;
}

typedef struct {
  gint from, to;
  gint rank_to, rank_from;
} Edge;

static gint
cmp_edge (gconstpointer pa, gconstpointer pb)
{
  const Edge *a = pa, *b = pb;
  if (a->rank_to != b->rank_to)
    return a->rank_to < b->rank_to ? -1 : 1;
  if (a->rank_from != b->rank_from)
    return a->rank_from < b->rank_from ? -1 : 1;
  return 0;
}

/* Kahn's order of the units (ties by index); rank[u] = position. */
static void
unit_ranks (const SplitDag *dag, gint *rank)
{
  gint n = dag->n;
  gint *indeg = g_new0 (gint, n);
  GArray **out = g_new0 (GArray *, n);
  for (gint e = 0; e < dag->n_edges; e++) {
    gint f = dag->edges[2 * e], t = dag->edges[2 * e + 1];
    if (!out[f])
      out[f] = g_array_new (FALSE, FALSE, sizeof (gint));
    g_array_append_val (out[f], t);
    indeg[t]++;
  }
  /* a min-heap of ready units would be nicer; n is small */
  gboolean *done = g_new0 (gboolean, n);
  for (gint r = 0; r < n; r++) {
    gint pick = -1;
    for (gint u = 0; u < n && pick < 0; u++)
      if (!done[u] && indeg[u] == 0)
        pick = u;
    if (pick < 0) {             /* a cycle: the caller promised a DAG */
      for (gint u = 0; u < n; u++)
        if (!done[u]) {
          pick = u;
          break;
        }
    }
    done[pick] = TRUE;
    rank[pick] = r;
    for (guint k = 0; out[pick] && k < out[pick]->len; k++)
      indeg[g_array_index (out[pick], gint, k)]--;
  }
  for (gint u = 0; u < n; u++)
    if (out[u])
      g_array_free (out[u], TRUE);
  g_free (out);
  g_free (done);
  g_free (indeg);
}

gint
split_dag_group (const SplitDag *dag, gint *group)
{
  gint n = dag->n;
  if (n == 0)
    return 0;
  Groups g = { n, g_new (gint, n), g_new (GHashTable *, n), g_new (GHashTable *, n),
    g_new0 (gint, n), 0, g_new (gint, n) };
  for (gint u = 0; u < n; u++) {
    g.parent[u] = u;
    g.succ[u] = g_hash_table_new (NULL, NULL);
    g.pred[u] = g_hash_table_new (NULL, NULL);
  }
  gint *rank = g_new (gint, n);
  unit_ranks (dag, rank);
  GArray *edges = g_array_new (FALSE, FALSE, sizeof (Edge));
  for (gint e = 0; e < dag->n_edges; e++) {
    gint f = dag->edges[2 * e], t = dag->edges[2 * e + 1];
    if (f == t)
      continue;
    g_hash_table_add (g.succ[f], KEY (t));
    g_hash_table_add (g.pred[t], KEY (f));
    Edge ed = { f, t, rank[t], rank[f] };
    g_array_append_val (edges, ed);
  }
  g_array_sort (edges, cmp_edge);
  for (guint e = 0; e < edges->len; e++) {
    const Edge *ed = &g_array_index (edges, Edge, e);
    if (dag->label[ed->from] != dag->label[ed->to])
      continue;
    gint a = find (&g, ed->from), b = find (&g, ed->to);
    if (a == b || other_path (&g, a, b))
      continue;
    merge (&g, a, b);
  }

  /* number the groups in a topological order of the group graph */
  gint *min_unit = g_new (gint, n), *indeg = g_new0 (gint, n), *number = g_new (gint, n);
  for (gint u = 0; u < n; u++)
    min_unit[u] = G_MAXINT;
  for (gint u = 0; u < n; u++) {
    gint r = find (&g, u);
    min_unit[r] = MIN (min_unit[r], u);
    number[u] = -1;
  }
  gint n_roots = 0;
  for (gint u = 0; u < n; u++)
    if (g.parent[u] == u) {
      indeg[u] = g_hash_table_size (g.pred[u]);
      n_roots++;
    }
  for (gint k = 0; k < n_roots; k++) {
    gint pick = -1;
    for (gint u = 0; u < n; u++)
      if (g.parent[u] == u && number[u] < 0 && indeg[u] == 0 &&
          (pick < 0 || min_unit[u] < min_unit[pick]))
        pick = u;
    g_assert (pick >= 0);       /* the group graph is a DAG by construction */
    number[pick] = k;
    GHashTableIter it;
    gpointer key;
    g_hash_table_iter_init (&it, g.succ[pick]);
    while (g_hash_table_iter_next (&it, &key, NULL))
      indeg[IDX (key)]--;
  }
  for (gint u = 0; u < n; u++)
    group[u] = number[find (&g, u)];

  for (gint u = 0; u < n; u++) {
    g_hash_table_unref (g.succ[u]);
    g_hash_table_unref (g.pred[u]);
  }
  g_array_free (edges, TRUE);
  g_free (min_unit);
  g_free (indeg);
  g_free (number);
  g_free (rank);
  g_free (g.parent);
  g_free (g.succ);
  g_free (g.pred);
  g_free (g.stamp);
  g_free (g.stack);
  return n_roots;
}
