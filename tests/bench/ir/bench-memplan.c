/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-memplan — the IR runtime's memory planner (base-arena.c) beside the
 * greedy planner it replaced, in one run.
 *
 * Usage: bench-memplan [--max-greedy N] [MODEL.xml ...]
 *
 * For ReLU and SoftMax chains of 5,000 to 200,000 layers (made in memory;
 * ReLUs share one buffer in place, SoftMaxes need one each) and for each
 * model given, it prints: the time to load and compile the model (ours),
 * then, on the same compiled buffers, each planner's time and the arena it
 * needs. The peer is "greedy by size" (TFLite's and, before issue 14, ours:
 * each buffer, biggest first, at the lowest offset free during its
 * lifetime), which compares every buffer with every placed one: O(n²); it
 * is skipped above --max-greedy buffers (default 40,000). Both plans are
 * checked: no two buffers alive at the same step share a byte.
 */
#include "test-support.h"

#include <base/m2i-align.h>
#include <ir/m2i-ir.h>
#include <ir/ir-compile.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ALIGN 64

static double
now_s (void)
{
  return g_get_monotonic_time () / 1e6;
}

/* ---- the peer: greedy by size ------------------------------------------- */

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
cmp_size (gconstpointer a, gconstpointer b, gpointer user_data)
{
  const CmGroup *g = user_data;
  const CmGroup *x = &g[*(const gint *) a], *y = &g[*(const gint *) b];
  if (x->size != y->size)
    return x->size > y->size ? -1 : 1;
  return x->first - y->first;
}

static gsize
greedy_place (CmGroup *groups, gint n)
{
  gint *order = g_new (gint, MAX (n, 1));
  for (gint i = 0; i < n; i++)
    order[i] = i;
  g_qsort_with_data (order, n, sizeof (gint), cmp_size, groups);
  Span *busy = g_new (Span, MAX (n, 1));
  gboolean *placed = g_new0 (gboolean, MAX (n, 1));
  gsize arena = 0;
  for (gint oi = 0; oi < n; oi++) {
    CmGroup *g = &groups[order[oi]];
    gint nb = 0;
    for (gint j = 0; j < n; j++) {
      const CmGroup *h = &groups[j];
      if (placed[j] && h->first <= g->last && g->first <= h->last)
        busy[nb++] = (Span) { h->offset, h->offset + h->size };
    }
    qsort (busy, nb, sizeof (Span), cmp_span);
    gsize offset = 0;
    for (gint j = 0; j < nb; j++) {
      if (busy[j].offset >= offset + g->size)
        break;
      offset = MAX (offset, m2i_align_up (busy[j].end, ALIGN));
    }
    g->offset = offset;
    placed[order[oi]] = TRUE;
    arena = MAX (arena, m2i_align_up (offset + g->size, ALIGN));
  }
  g_free (order);
  g_free (busy);
  g_free (placed);
  return arena;
}

/* ---- checking a plan --------------------------------------------------------- */

static gint
cmp_span_data (gconstpointer a, gconstpointer b, gpointer unused)
{
  return cmp_span (a, b);
}

static gint
cmp_first (gconstpointer a, gconstpointer b, gpointer user_data)
{
  const CmGroup *g = user_data;
  return g[*(const gint *) a].first - g[*(const gint *) b].first;
}

/* No two live groups overlap, every group inside the arena: a sweep over
 * the steps with the live groups sorted by offset (O(n log n) per check of
 * the live set; fine for a benchmark). */
static void
check_plan (const CmGroup *g, gint n, gsize arena, const char *who)
{
  gint *order = g_new (gint, MAX (n, 1)), m = 0;
  for (gint i = 0; i < n; i++)
    if (g[i].first >= -1 && g[i].size)
      order[m++] = i;
  g_qsort_with_data (order, m, sizeof (gint), cmp_first, (gpointer) g);
  GTree *live = g_tree_new_full (cmp_span_data, NULL, g_free, NULL);
  GArray *alive = g_array_new (FALSE, FALSE, sizeof (gint));
  for (gint k = 0; k < m; k++) {
    const CmGroup *x = &g[order[k]];
    if (x->offset + x->size > arena)
      g_error ("%s: a buffer ends at %" G_GSIZE_FORMAT ", past the arena", who, x->offset + x->size);
    /* drop the groups that ended before this one starts */
    for (guint j = 0; j < alive->len;) {
      const CmGroup *y = &g[g_array_index (alive, gint, j)];
      if (y->last < x->first) {
        Span key = { y->offset, 0 };
        g_tree_remove (live, &key);
        g_array_remove_index_fast (alive, j);
      } else
        j++;
    }
    Span *s = g_new (Span, 1);
    *s = (Span) { x->offset, x->offset + x->size };
    if (g_tree_lookup (live, s))
      g_error ("%s: two live buffers at offset %" G_GSIZE_FORMAT, who, x->offset);
    g_tree_insert (live, s, s);
    g_array_append_val (alive, order[k]);
    /* neighbours by offset must not overlap */
    Span *prev = NULL, *next = NULL;
    GTreeNode *node = g_tree_lookup_node (live, s);
    GTreeNode *pn = g_tree_node_previous (node), *nn = g_tree_node_next (node);
    if (pn)
      prev = g_tree_node_key (pn);
    if (nn)
      next = g_tree_node_key (nn);
    if ((prev && prev->end > s->offset) || (next && s->end > next->offset))
      g_error ("%s: live buffers overlap at offset %" G_GSIZE_FORMAT, who, x->offset);
  }
  g_tree_unref (live);
  g_array_free (alive, TRUE);
  g_free (order);
}

/* ---- models ------------------------------------------------------------------- */

static void
bench (const char *label, M2iIrModel *m, double load_s, gint max_greedy)
{
  GError *error = NULL;
  M2iIrCompileOptions opts = { .n_threads = 1 };
  double t0 = now_s ();
  M2iIrCompiledModel *cm = m2i_ir_compile (m, &opts, &error);
  double compile_s = now_s () - t0;
  if (!cm) {
    printf ("%-34s skipped: %s\n", label, error->message);
    g_clear_error (&error);
    return;
  }
  gint n = cm->n_groups;
  CmGroup *g = g_memdup2 (cm->groups, MAX (n, 1) * sizeof (CmGroup));
  t0 = now_s ();
  gsize ours = base_arena_place (g, n, ALIGN);
  double ours_s = now_s () - t0;
  check_plan (g, n, ours, "ours");
  printf ("%-34s %8d %9.3f %9.3f | %10.4f %10.2f |", label, n, load_s, compile_s, ours_s * 1e3,
      ours / 1048576.0);
  if (n <= max_greedy) {
    t0 = now_s ();
    gsize peer = greedy_place (g, n);
    double peer_s = now_s () - t0;
    check_plan (g, n, peer, "greedy");
    printf (" %10.4f %10.2f\n", peer_s * 1e3, peer / 1048576.0);
  } else
    printf (" %10s %10s\n", "(skipped)", "");
  fflush (stdout);
  g_free (g);
  m2i_ir_compiled_model_unref (cm);
}

int
main (int argc, char **argv)
{
  gint max_greedy = 40000;
  gchar **models = NULL;
  GOptionEntry entries[] = {
    { "max-greedy", 0, 0, G_OPTION_ARG_INT, &max_greedy,
      "run the greedy peer up to this many buffers (default 40000)", "N" },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &models, NULL, "MODEL.xml" },
    { NULL }
  };
  GError *error = NULL;
  GOptionContext *oc = g_option_context_new ("[MODEL.xml ...]");
  g_option_context_add_main_entries (oc, entries, NULL);
  if (!g_option_context_parse (oc, &argc, &argv, &error)) {
    fprintf (stderr, "bench-memplan: %s\n", error->message);
    return 2;
  }
  g_option_context_free (oc);
  printf ("%-34s %8s %9s %9s | %21s | %21s\n", "", "", "", "", "ours (base-arena.c)",
      "greedy by size (peer)");
  printf ("%-34s %8s %9s %9s | %10s %10s | %10s %10s\n", "model", "buffers", "load s", "compile s",
      "plan ms", "arena MiB", "plan ms", "arena MiB");
  static const gint chains[] = { 5000, 20000, 40000, 200000 };
  for (guint k = 0; k < 2 * G_N_ELEMENTS (chains); k++) {
    gboolean soft = k >= G_N_ELEMENTS (chains);
    gint n = chains[k % G_N_ELEMENTS (chains)];
    gsize len;
    /* ReLU writes over its input, so the chain shares one buffer; SoftMax
     * does not: n buffers, two alive at a time */
    g_autofree gchar *xml = test_chain_xml (soft ? "SoftMax" : "ReLU",
        soft ? "<data axis=\"1\"/>" : "", n, &len);
    double t0 = now_s ();
    M2iIrModel *m = m2i_ir_model_load_from_memory (xml, len, NULL, "chain.xml", &error);
    double load_s = now_s () - t0;
    if (!m)
      g_error ("%s", error->message);
    g_autofree gchar *label = g_strdup_printf ("%s chain of %d", soft ? "SoftMax" : "ReLU", n);
    bench (label, m, load_s, max_greedy);
    m2i_ir_model_unref (m);
  }
  for (gint i = 0; models && models[i]; i++) {
    double t0 = now_s ();
    M2iIrModel *m = m2i_ir_model_load (models[i], NULL, &error);
    double load_s = now_s () - t0;
    if (!m) {
      printf ("%-34s skipped: %s\n", models[i], error->message);
      g_clear_error (&error);
      continue;
    }
    g_autofree gchar *base = g_path_get_basename (models[i]);
    bench (base, m, load_s, max_greedy);
    m2i_ir_model_unref (m);
  }
  g_strfreev (models);
  return 0;
}
