/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* split-dot.c — a Graphviz picture of a plan, drawn from the pieces'
 * sub-models (so a loaded plan draws as well as a fresh one): every layer
 * but Consts, filled with its engine's colour, each piece a cluster, model
 * inputs and outputs as ellipses, and the edges between pieces bold and
 * labelled with the tensor's shape.
 */
#include "split-private.h"

#include <string.h>

static const char *
engine_colour (M2iSplitEngine e)
{
  switch (e) {
    case M2I_SPLIT_ENGINE_CPU: return "#9ecae1";
    case M2I_SPLIT_ENGINE_M2I: return "#a1d99b";
    case M2I_SPLIT_ENGINE_NPU_FP16: return "#fdae6b";
    case M2I_SPLIT_ENGINE_NPU_INT8: return "#f16913";
  }
  return "#ffffff";
}

static gchar *
quote (const char *s)
{
  GString *q = g_string_new ("\"");
  for (const char *p = s; *p; p++) {
    if (*p == '"' || *p == '\\')
      g_string_append_c (q, '\\');
    g_string_append_c (q, *p);
  }
  g_string_append_c (q, '"');
  return g_string_free (q, FALSE);
}

static gboolean
is_type (const M2iIrNode *n, const char *t)
{
  return !strcmp (m2i_ir_node_get_type (n), t);
}

gchar *
m2i_split_plan_to_dot (const M2iSplitPlan *plan)
{
  GString *s = g_string_new ("digraph split {\n  rankdir=TB;\n  node [shape=box, style=\"filled,rounded\", "
      "fontname=\"Helvetica\", fontsize=10];\n  edge [fontname=\"Helvetica\", fontsize=8];\n");
  /* where each tensor is produced: "p<piece>_<layer id>" */
  GHashTable *producer = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, g_free);
  for (guint p = 0; p < plan->pieces->len; p++) {
    const SplitPiece *pc = g_ptr_array_index (plan->pieces, p);
    for (gint i = 0; i < m2i_ir_model_get_n_outputs (pc->model); i++) {
      const M2iIrIoInfo *io = m2i_ir_model_get_output (pc->model, i);
      M2iIrNode *src;
      gint port;
      if (!m2i_ir_node_get_input_source (io->node, 0, &src, &port))
        continue;
      gint t = m2i_split_plan_find_tensor (plan, io->name);
      if (t >= 0)
        g_hash_table_insert (producer, ((SplitTensor *) g_ptr_array_index (plan->tensors, t))->name,
            g_strdup_printf ("p%u_%" G_GINT64_FORMAT, p, m2i_ir_node_get_id (src)));
    }
  }
  for (guint i = 0; i < plan->inputs->len; i++) {
    const SplitTensor *t = g_ptr_array_index (plan->tensors, g_array_index (plan->inputs, gint, i));
    g_autofree gchar *shape = m2i_shape_to_string (&t->shape);
    g_autofree gchar *label = g_strdup_printf ("%s\n%s %s", t->name, shape,
        m2i_element_type_to_string (t->type));
    g_autofree gchar *ql = quote (label);
    g_string_append_printf (s, "  in%u [shape=ellipse, style=filled, fillcolor=\"#eeeeee\", label=%s];\n",
        i, ql);
    g_hash_table_insert (producer, t->name, g_strdup_printf ("in%u", i));
  }
  for (guint i = 0; i < plan->outputs->len; i++) {
    const SplitTensor *t = g_ptr_array_index (plan->tensors, g_array_index (plan->outputs, gint, i));
    g_autofree gchar *ql = quote (t->name);
    g_string_append_printf (s, "  out%u [shape=ellipse, style=filled, fillcolor=\"#eeeeee\", label=%s];\n",
        i, ql);
    const char *from = g_hash_table_lookup (producer, t->name);
    if (from)
      g_string_append_printf (s, "  %s -> out%u;\n", from, i);
  }
  for (guint p = 0; p < plan->pieces->len; p++) {
    const SplitPiece *pc = g_ptr_array_index (plan->pieces, p);
    M2iIrModel *m = pc->model;
    g_string_append_printf (s, "  subgraph cluster_%u {\n    label=\"piece %u: %s %s, %d op%s\";\n"
        "    style=dashed; color=\"#888888\"; fontname=\"Helvetica\"; fontsize=11;\n", p, p,
        m2i_split_device_to_string (pc->device), m2i_split_engine_to_string (pc->engine),
        pc->n_ops, pc->n_ops == 1 ? "" : "s");
    for (gint i = 0; i < m2i_ir_model_get_n_nodes (m); i++) {
      const M2iIrNode *n = m2i_ir_model_get_node (m, i);
      if (is_type (n, "Const") || is_type (n, "Parameter") || is_type (n, "Result"))
        continue;
      g_autofree gchar *label = g_strdup_printf ("%s\n%s", m2i_ir_node_get_name (n),
          m2i_ir_node_get_type (n));
      g_autofree gchar *ql = quote (label);
      g_string_append_printf (s, "    p%u_%" G_GINT64_FORMAT " [label=%s, fillcolor=\"%s\"];\n", p,
          m2i_ir_node_get_id (n), ql, engine_colour (pc->engine));
    }
    g_string_append (s, "  }\n");
    for (gint i = 0; i < m2i_ir_model_get_n_nodes (m); i++) {
      const M2iIrNode *n = m2i_ir_model_get_node (m, i);
      if (is_type (n, "Const") || is_type (n, "Parameter") || is_type (n, "Result"))
        continue;
      for (gint k = 0; k < m2i_ir_node_get_n_inputs (n); k++) {
        M2iIrNode *src;
        gint port;
        if (!m2i_ir_node_get_input_source (n, k, &src, &port) || is_type (src, "Const"))
          continue;
        if (!is_type (src, "Parameter")) {
          g_string_append_printf (s, "  p%u_%" G_GINT64_FORMAT " -> p%u_%" G_GINT64_FORMAT ";\n",
              p, m2i_ir_node_get_id (src), p, m2i_ir_node_get_id (n));
          continue;
        }
        g_autofree gchar *tname = split_tensor_name (src, 0);
        gint t = m2i_split_plan_find_tensor (plan, tname);
        const char *from = t >= 0 ? g_hash_table_lookup (producer,
            ((SplitTensor *) g_ptr_array_index (plan->tensors, t))->name) : NULL;
        if (!from)
          continue;
        const SplitTensor *st = g_ptr_array_index (plan->tensors, t);
        g_autofree gchar *shape = m2i_shape_to_string (&st->shape);
        g_string_append_printf (s, "  %s -> p%u_%" G_GINT64_FORMAT " [%slabel=\"%s\"];\n", from, p,
            m2i_ir_node_get_id (n), st->attr == M2I_SPLIT_TENSOR_INPUT ? "" : "penwidth=2, ",
            shape);
      }
    }
  }
  g_string_append (s, "}\n");
  g_hash_table_unref (producer);
  return g_string_free (s, FALSE);
}
