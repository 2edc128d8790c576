/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The partitioner's core (split_dag_group) on many random DAGs, and a few
 * drawn by hand. Each grouping is checked by independent code:
 *  - every unit is in exactly one group, and a group holds one label;
 *  - the groups' numbering is a topological order of the group graph
 *    (every edge goes from a group to the same or a later one), so no two
 *    groups depend on each other;
 *  - a depth-first search finds no cycle in the group graph either;
 *  - grouping is maximal along edges: two groups of one label joined by an
 *    edge are also joined by a path through another group (merging them
 *    would make a cycle);
 *  - the result does not depend on the call (deterministic). */
#include <split/split-private.h>

#include <string.h>

typedef struct {
  gint n, n_edges;
  gint *label, *edges;
} Dag;

static Dag
random_dag (GRand *r, gint n, gint n_labels)
{
  Dag d = { n, 0, g_new (gint, n), g_new (gint, 2 * n * 4) };
  for (gint v = 0; v < n; v++) {
    /* CPU (0) about a third of the time, the rest spread over device labels */
    d.label[v] = g_rand_int_range (r, 0, 3) == 0 ? 0 : g_rand_int_range (r, 0, n_labels);
    gint k = v ? g_rand_int_range (r, 1, MIN (v, 3) + 1) : 0;
    for (gint i = 0; i < k; i++) {
      /* mostly recent producers, sometimes far back (skip connections) */
      gint u = g_rand_int_range (r, 0, 4) ? v - 1 - g_rand_int_range (r, 0, MIN (v, 3)) :
          g_rand_int_range (r, 0, v);
      d.edges[2 * d.n_edges] = u;
      d.edges[2 * d.n_edges + 1] = v;
      d.n_edges++;
    }
  }
  return d;
}

/* TRUE when group b is reachable from group a in the group graph without
 * using a direct edge a → b. */
static gboolean
reach_indirect (const gboolean *adj, gint ng, gint a, gint b)
{
  gboolean *seen = g_new0 (gboolean, ng);
  gint *stack = g_new (gint, ng), top = 0;
  for (gint s = 0; s < ng; s++)
    if (adj[a * ng + s] && s != b && s != a && !seen[s]) {
      seen[s] = TRUE;
      stack[top++] = s;
    }
  gboolean found = FALSE;
  while (top && !found) {
    gint x = stack[--top];
    if (x == b)
      found = TRUE;
    for (gint s = 0; s < ng && !found; s++)
      if (adj[x * ng + s] && !seen[s] && s != x) {
        seen[s] = TRUE;
        stack[top++] = s;
      }
  }
  g_free (seen);
  g_free (stack);
  return found;
}

static gboolean
has_cycle_from (const gboolean *adj, gint ng, gint x, gint *state)
{
  state[x] = 1;
  for (gint s = 0; s < ng; s++) {
    if (!adj[x * ng + s] || s == x)
      continue;
    if (state[s] == 1 || (state[s] == 0 && has_cycle_from (adj, ng, s, state)))
      return TRUE;
  }
  state[x] = 2;
  return FALSE;
}

static void
check_grouping (const Dag *d, const gint *group, gint ng)
{
  SplitDag dag = { d->n, d->label, d->n_edges, d->edges };
  g_assert_cmpint (ng, >=, d->n ? 1 : 0);
  gint *label_of = g_new (gint, MAX (ng, 1));
  gint *size = g_new0 (gint, MAX (ng, 1));
  for (gint g = 0; g < ng; g++)
    label_of[g] = -1;
  for (gint u = 0; u < d->n; u++) {
    g_assert_cmpint (group[u], >=, 0);
    g_assert_cmpint (group[u], <, ng);
    if (label_of[group[u]] < 0)
      label_of[group[u]] = d->label[u];
    g_assert_cmpint (label_of[group[u]], ==, d->label[u]);
    size[group[u]]++;
  }
  for (gint g = 0; g < ng; g++)
    g_assert_cmpint (size[g], >, 0);
  gboolean *adj = g_new0 (gboolean, (gsize) MAX (ng, 1) * MAX (ng, 1));
  for (gint e = 0; e < d->n_edges; e++) {
    gint a = group[d->edges[2 * e]], b = group[d->edges[2 * e + 1]];
    g_assert_cmpint (a, <=, b);
    if (a != b)
      adj[a * ng + b] = TRUE;
  }
  gint *state = g_new0 (gint, MAX (ng, 1));
  for (gint g = 0; g < ng; g++)
    if (!state[g])
      g_assert_false (has_cycle_from (adj, ng, g, state));
  for (gint e = 0; e < d->n_edges; e++) {
    gint u = d->edges[2 * e], v = d->edges[2 * e + 1];
    if (d->label[u] == d->label[v] && group[u] != group[v])
      g_assert_true (reach_indirect (adj, ng, group[u], group[v]));
  }
  gint *again = g_new (gint, MAX (d->n, 1));
  g_assert_cmpint (split_dag_group (&dag, again), ==, ng);
  g_assert_cmpmem (again, d->n * sizeof (gint), group, d->n * sizeof (gint));
  g_free (again);
  g_free (state);
  g_free (adj);
  g_free (label_of);
  g_free (size);
}

static void
test_random (void)
{
  GRand *r = g_rand_new_with_seed (20240611);
  gint merged = 0, kept_apart = 0;
  for (gint it = 0; it < 600; it++) {
    gint n = g_rand_int_range (r, 1, 80);
    Dag d = random_dag (r, n, it % 3 + 2);
    SplitDag dag = { d.n, d.label, d.n_edges, d.edges };
    gint *group = g_new (gint, n);
    gint ng = split_dag_group (&dag, group);
    check_grouping (&d, group, ng);
    merged += n - ng;
    for (gint e = 0; e < d.n_edges; e++)
      kept_apart += d.label[d.edges[2 * e]] == d.label[d.edges[2 * e + 1]] &&
          group[d.edges[2 * e]] != group[d.edges[2 * e + 1]];
    g_free (group);
    g_free (d.label);
    g_free (d.edges);
  }
  /* the generator exercises both outcomes */
  g_assert_cmpint (merged, >, 1000);
  g_assert_cmpint (kept_apart, >, 50);
  g_rand_free (r);
}

/* a → b → c with b another label, and a → c: a and c cannot share a group
 * (a piece {a, c} would feed b and read it). */
static void
test_diamond (void)
{
  gint label[] = { 1, 0, 1 };
  gint edges[] = { 0, 1, 1, 2, 0, 2 };
  SplitDag dag = { 3, label, 3, edges };
  gint group[3];
  g_assert_cmpint (split_dag_group (&dag, group), ==, 3);
  g_assert_cmpint (group[0], ==, 0);
  g_assert_cmpint (group[1], ==, 1);
  g_assert_cmpint (group[2], ==, 2);
}

/* squeezenet's fire module: squeeze → expand1x1, expand3x3 → concat, all on
 * the device: one group. And a chain CPU → dev → dev → CPU → dev: three. */
static void
test_fire_and_chain (void)
{
  gint label[] = { 2, 2, 2, 2 };
  gint edges[] = { 0, 1, 0, 2, 1, 3, 2, 3 };
  SplitDag dag = { 4, label, 4, edges };
  gint group[5];
  g_assert_cmpint (split_dag_group (&dag, group), ==, 1);
  gint label2[] = { 0, 2, 2, 0, 2 };
  gint edges2[] = { 0, 1, 1, 2, 2, 3, 3, 4 };
  SplitDag chain = { 5, label2, 4, edges2 };
  g_assert_cmpint (split_dag_group (&chain, group), ==, 4);
  g_assert_cmpint (group[1], ==, group[2]);
  g_assert_cmpint (group[0], <, group[1]);
  g_assert_cmpint (group[2], <, group[3]);
  g_assert_cmpint (group[3], <, group[4]);
}

/* Two independent device branches of one label that meet only at a CPU
 * join stay apart (no edge between them), each in its own group. */
static void
test_parallel_branches (void)
{
  gint label[] = { 0, 1, 1, 0 };
  gint edges[] = { 0, 1, 0, 2, 1, 3, 2, 3 };
  SplitDag dag = { 4, label, 4, edges };
  gint group[4];
  g_assert_cmpint (split_dag_group (&dag, group), ==, 4);
  g_assert_cmpint (group[1], !=, group[2]);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/split/dag/random", test_random);
  g_test_add_func ("/split/dag/diamond", test_diamond);
  g_test_add_func ("/split/dag/fire-and-chain", test_fire_and_chain);
  g_test_add_func ("/split/dag/parallel-branches", test_parallel_branches);
  return g_test_run ();
}
