/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* split-plan.c — partitioning a model into pieces (m2i_split_plan_new) and
 * the plan's accessors.
 *
 *  1. analysis: layers, fused units, capabilities (split-analyze.c);
 *  2. each unit gets the first listed device that runs it, or the device
 *     its affinity forces;
 *  3. units of one engine are grouped without cycles (split-dag.c);
 *  4. a device group whose run plus transfers costs more than the CPU's run
 *     of the same layers goes back to the CPU (the worst first, then
 *     everything is grouped again), until none does;
 *  5. each group becomes a sub-model (m2i_ir_model_extract with the
 *     group's crossing tensors as its outputs)
 *     and the tensors crossing between groups are listed.
 */
#include "split-private.h"
#include <base/m2i-error.h>
#include <ir/ir-private.h>

#include <string.h>

const char *
m2i_split_device_to_string (M2iSplitDevice d)
{
  switch (d) {
    case M2I_SPLIT_DEVICE_CPU: return "CPU";
    case M2I_SPLIT_DEVICE_M2I: return "M2I";
  }
  return "?";
}

const char *
m2i_split_engine_to_string (M2iSplitEngine e)
{
  switch (e) {
    case M2I_SPLIT_ENGINE_CPU: return "cpu";
    case M2I_SPLIT_ENGINE_M2I: return "m2i";
    case M2I_SPLIT_ENGINE_NPU_FP16: return "npu-fp16";
    case M2I_SPLIT_ENGINE_NPU_INT8: return "npu-int8";
  }
  return "?";
}

const char *
m2i_split_tensor_attr_to_string (M2iSplitTensorAttr a)
{
  switch (a) {
    case M2I_SPLIT_TENSOR_INPUT: return "input";
    case M2I_SPLIT_TENSOR_OUTPUT: return "output";
    case M2I_SPLIT_TENSOR_INTERMEDIATE: return "intermediate";
  }
  return "?";
}

gboolean
split_device_from_string (const char *s, M2iSplitDevice *out)
{
  if (!g_ascii_strcasecmp (s, "CPU"))
    *out = M2I_SPLIT_DEVICE_CPU;
  else if (!g_ascii_strcasecmp (s, "M2I"))
    *out = M2I_SPLIT_DEVICE_M2I;
  else
    return FALSE;
  return TRUE;
}

gboolean
split_engine_from_string (const char *s, M2iSplitEngine *out)
{
  for (gint e = M2I_SPLIT_ENGINE_CPU; e <= M2I_SPLIT_ENGINE_NPU_INT8; e++)
    if (!g_ascii_strcasecmp (s, m2i_split_engine_to_string (e))) {
      *out = e;
      return TRUE;
    }
  return FALSE;
}

/* Parses a device priority string into @order (M2iSplitDevice values, at
 * most 2); returns the count, or 0 with @error. */
static gint
parse_devices (const char *s, M2iSplitDevice order[2], GError **error)
{
  const char *list = s ? s : "HETERO:M2I,CPU";
  if (!g_ascii_strncasecmp (list, "HETERO:", 7))
    list += 7;
  g_auto (GStrv) names = g_strsplit (list, ",", -1);
  gint n = 0;
  for (gchar **it = names; *it; it++) {
    M2iSplitDevice d;
    gchar *name = g_strstrip (*it);
    if (!split_device_from_string (name, &d)) {
      g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
          "device string \"%s\": unknown device \"%s\" (known: CPU, M2I; e.g. "
          "\"HETERO:M2I,CPU\")", s, name);
      return 0;
    }
    for (gint k = 0; k < n; k++)
      if (order[k] == d) {
        g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
            "device string \"%s\" lists %s twice", s, name);
        return 0;
      }
    order[n++] = d;
  }
  if (n == 0) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "device string \"%s\" lists no device (e.g. \"HETERO:M2I,CPU\")", s);
    return 0;
  }
  return n;
}

void
m2i_split_options_init (M2iSplitOptions *opts)
{
  memset (opts, 0, sizeof *opts);
  opts->m2i_profile = M2I_PROFILE_DEFAULT;
}

/* ---- the plan object ------------------------------------------------------------ */

SplitPiece *
split_piece_new (void)
{
  SplitPiece *p = g_new0 (SplitPiece, 1);
  p->inputs = g_array_new (FALSE, FALSE, sizeof (gint));
  p->outputs = g_array_new (FALSE, FALSE, sizeof (gint));
  p->nodes = g_array_new (FALSE, FALSE, sizeof (gint));
  return p;
}

static gint
cmp_count (gconstpointer a, gconstpointer b, gpointer table)
{
  gint ca = GPOINTER_TO_INT (g_hash_table_lookup (table, *(const char *const *) a));
  gint cb = GPOINTER_TO_INT (g_hash_table_lookup (table, *(const char *const *) b));
  return ca != cb ? cb - ca : strcmp (*(const char *const *) a, *(const char *const *) b);
}

/* Sets @p's op count and op_summary from the layers @nodes of @m. */
static void
piece_count_ops (SplitPiece *p, M2iIrModel *m, const gint *nodes, gint n)
{
  GHashTable *count = g_hash_table_new (g_str_hash, g_str_equal);
  GPtrArray *types = g_ptr_array_new ();
  for (gint k = 0; k < n; k++) {
    const char *t = m2i_ir_node_get_type (m2i_ir_model_get_node (m, nodes[k]));
    gint c = GPOINTER_TO_INT (g_hash_table_lookup (count, t));
    if (!c)
      g_ptr_array_add (types, (gpointer) t);
    g_hash_table_insert (count, (gpointer) t, GINT_TO_POINTER (c + 1));
  }
  g_ptr_array_sort_with_data (types, cmp_count, count);
  GString *s = g_string_new (NULL);
  for (guint k = 0; k < types->len; k++)
    g_string_append_printf (s, "%s%s %d", k ? ", " : "", (const char *) types->pdata[k],
        GPOINTER_TO_INT (g_hash_table_lookup (count, types->pdata[k])));
  g_free (p->op_summary);
  p->op_summary = g_string_free (s, FALSE);
  p->n_ops = n;
  g_ptr_array_free (types, TRUE);
  g_hash_table_unref (count);
}

static void
piece_free (gpointer data)
{
  SplitPiece *p = data;
  g_free (p->op_summary);
  if (p->cm)
    m2i_ir_compiled_model_unref (p->cm);
  split_npu_program_free (p->prog);
  if (p->model)
    m2i_ir_model_unref (p->model);
  g_array_free (p->inputs, TRUE);
  g_array_free (p->outputs, TRUE);
  g_array_free (p->nodes, TRUE);
  g_free (p);
}

static void
tensor_free (gpointer data)
{
  SplitTensor *t = data;
  g_free (t->name);
  g_array_free (t->consumers, TRUE);
  g_free (t);
}

M2iSplitPlan *
split_plan_alloc (void)
{
  M2iSplitPlan *plan = g_new0 (M2iSplitPlan, 1);
  plan->ref_count = 1;
  plan->pieces = g_ptr_array_new_with_free_func (piece_free);
  plan->tensors = g_ptr_array_new_with_free_func (tensor_free);
  plan->tensor_index = g_hash_table_new (g_str_hash, g_str_equal);
  plan->inputs = g_array_new (FALSE, FALSE, sizeof (gint));
  plan->outputs = g_array_new (FALSE, FALSE, sizeof (gint));
  g_mutex_init (&plan->lock);
  return plan;
}

gint
split_plan_add_tensor (M2iSplitPlan *plan, const char *name, M2iElementType type,
    const M2iShape *shape, M2iSplitTensorAttr attr)
{
  SplitTensor *t = g_new0 (SplitTensor, 1);
  t->name = g_strdup (name);
  t->type = type;
  t->shape = *shape;
  t->attr = attr;
  t->producer = -1;
  t->consumers = g_array_new (FALSE, FALSE, sizeof (gint));
  t->src_node = t->src_port = -1;
  g_ptr_array_add (plan->tensors, t);
  g_hash_table_insert (plan->tensor_index, t->name, GINT_TO_POINTER (plan->tensors->len));
  return plan->tensors->len - 1;
}

void
split_plan_link (M2iSplitPlan *plan)
{
  for (guint i = 0; i < plan->tensors->len; i++) {
    SplitTensor *t = g_ptr_array_index (plan->tensors, i);
    t->producer = -1;
    g_array_set_size (t->consumers, 0);
  }
  for (guint p = 0; p < plan->pieces->len; p++) {
    SplitPiece *pc = g_ptr_array_index (plan->pieces, p);
    for (guint k = 0; k < pc->outputs->len; k++) {
      SplitTensor *t = g_ptr_array_index (plan->tensors, g_array_index (pc->outputs, gint, k));
      t->producer = p;
    }
    for (guint k = 0; k < pc->inputs->len; k++) {
      SplitTensor *t = g_ptr_array_index (plan->tensors, g_array_index (pc->inputs, gint, k));
      gint pp = p;
      g_array_append_val (t->consumers, pp);
    }
  }
}

M2iSplitPlan *
m2i_split_plan_ref (M2iSplitPlan *plan)
{
  g_atomic_int_inc (&plan->ref_count);
  return plan;
}

void
m2i_split_plan_unref (M2iSplitPlan *plan)
{
  if (!plan || !g_atomic_int_dec_and_test (&plan->ref_count))
    return;
  g_ptr_array_free (plan->pieces, TRUE);
  g_hash_table_unref (plan->tensor_index);
  g_ptr_array_free (plan->tensors, TRUE);
  g_array_free (plan->inputs, TRUE);
  g_array_free (plan->outputs, TRUE);
  g_free (plan->node_piece);
  g_free (plan->devices);
  g_free (plan->decisions);
  if (plan->model)
    m2i_ir_model_unref (plan->model);
  g_mutex_clear (&plan->lock);
  g_free (plan);
}

M2iIrModel *
m2i_split_plan_get_model (const M2iSplitPlan *plan)
{
  return plan->model;
}

gint
m2i_split_plan_get_n_pieces (const M2iSplitPlan *plan)
{
  return plan->pieces->len;
}

gboolean
m2i_split_plan_get_piece (const M2iSplitPlan *plan, gint i, M2iSplitPieceInfo *info)
{
  if (i < 0 || (guint) i >= plan->pieces->len)
    return FALSE;
  const SplitPiece *p = g_ptr_array_index (plan->pieces, i);
  info->device = p->device;
  info->engine = p->engine;
  info->n_ops = p->n_ops;
  info->model = p->model;
  info->n_inputs = p->inputs->len;
  info->n_outputs = p->outputs->len;
  info->inputs = (const gint *) p->inputs->data;
  info->outputs = (const gint *) p->outputs->data;
  info->cost_ns = p->cost_ns;
  return TRUE;
}

gint
m2i_split_plan_get_n_tensors (const M2iSplitPlan *plan)
{
  return plan->tensors->len;
}

gboolean
m2i_split_plan_get_tensor (const M2iSplitPlan *plan, gint i, M2iSplitTensorInfo *info)
{
  if (i < 0 || (guint) i >= plan->tensors->len)
    return FALSE;
  const SplitTensor *t = g_ptr_array_index (plan->tensors, i);
  info->name = t->name;
  info->type = t->type;
  info->shape = t->shape;
  info->attr = t->attr;
  info->producer = t->producer;
  info->n_consumers = t->consumers->len;
  info->consumers = (const gint *) t->consumers->data;
  return TRUE;
}

gint
m2i_split_plan_find_tensor (const M2iSplitPlan *plan, const char *name)
{
  return GPOINTER_TO_INT (g_hash_table_lookup (plan->tensor_index, name)) - 1;
}

gint m2i_split_plan_get_n_inputs (const M2iSplitPlan *plan) { return plan->inputs->len; }
gint m2i_split_plan_get_n_outputs (const M2iSplitPlan *plan) { return plan->outputs->len; }

gint
m2i_split_plan_get_input (const M2iSplitPlan *plan, gint i)
{
  return i >= 0 && (guint) i < plan->inputs->len ? g_array_index (plan->inputs, gint, i) : -1;
}

gint
m2i_split_plan_get_output (const M2iSplitPlan *plan, gint i)
{
  return i >= 0 && (guint) i < plan->outputs->len ? g_array_index (plan->outputs, gint, i) : -1;
}

gint
m2i_split_plan_get_node_piece (const M2iSplitPlan *plan, gint node)
{
  return plan->node_piece && node >= 0 && node < plan->n_nodes ? plan->node_piece[node] : -1;
}

void
m2i_split_plan_get_cost (const M2iSplitPlan *plan, guint64 *cpu_only_ns, guint64 *split_ns)
{
  if (cpu_only_ns)
    *cpu_only_ns = plan->cpu_only_ns;
  if (split_ns)
    *split_ns = plan->split_ns;
}

static gsize
tensor_bytes (const SplitTensor *t)
{
  return MAX (m2i_shape_numel (&t->shape), 0) * m2i_element_type_size (t->type);
}

static M2iSplitEngine
producer_engine (const M2iSplitPlan *plan, const SplitTensor *t)
{
  if (t->producer < 0)
    return M2I_SPLIT_ENGINE_CPU;
  return ((SplitPiece *) g_ptr_array_index (plan->pieces, t->producer))->engine;
}

/* Boundary cost estimate of the plan's pieces (split_ns). */
static void
plan_estimate (M2iSplitPlan *plan)
{
  guint64 ns = 0;
  for (guint p = 0; p < plan->pieces->len; p++)
    ns += ((SplitPiece *) g_ptr_array_index (plan->pieces, p))->cost_ns;
  for (guint i = 0; i < plan->tensors->len; i++) {
    const SplitTensor *t = g_ptr_array_index (plan->tensors, i);
    gint64 n = MAX (m2i_shape_numel (&t->shape), 0);
    gsize es = m2i_element_type_size (t->type);
    M2iSplitEngine from = producer_engine (plan, t);
    for (guint k = 0; k < t->consumers->len; k++) {
      const SplitPiece *c = g_ptr_array_index (plan->pieces, g_array_index (t->consumers, gint, k));
      ns += split_cost_boundary (n, es, from, c->engine);
    }
    if (t->attr == M2I_SPLIT_TENSOR_OUTPUT)
      ns += split_cost_boundary (n, es, from, M2I_SPLIT_ENGINE_CPU);
  }
  plan->split_ns = ns;
}

/* ---- partitioning ---------------------------------------------------------------- */

typedef struct {
  SplitAnalysis *a;
  const M2iSplitOptions *opts;
  M2iSplitDevice order[2];
  gint n_order;
  gint n_units;
  gint *label;                 /* per unit: M2iSplitEngine */
  GArray *edges;               /* unit pairs */
  guint64 *cpu_ns;             /* per unit */
  guint64 *dev_ns;             /* per unit, on its label's engine (or the best device engine) */
} Partition;

static SplitUnit *
unit_at (const SplitAnalysis *a, gint u)
{
  return g_ptr_array_index (a->units, u);
}

static const char *
unit_name (const SplitAnalysis *a, gint u)
{
  return m2i_ir_node_get_name (m2i_ir_model_get_node (a->model,
          g_array_index (unit_at (a, u)->nodes, gint, 0)));
}

/* The device engine a unit would use: M2I, then int8, then fp16. */
static gint
device_engine (const SplitUnit *u)
{
  static const M2iSplitEngine pref[] = { M2I_SPLIT_ENGINE_M2I, M2I_SPLIT_ENGINE_NPU_INT8,
    M2I_SPLIT_ENGINE_NPU_FP16 };
  for (guint k = 0; k < G_N_ELEMENTS (pref); k++)
    if (u->caps & SPLIT_CAN (pref[k]))
      return pref[k];
  return -1;
}

static gboolean
choose_labels (Partition *pt, GError **error)
{
  SplitAnalysis *a = pt->a;
  for (gint u = 0; u < pt->n_units; u++) {
    SplitUnit *unit = unit_at (a, u);
    gint dev = device_engine (unit);
    if (unit->forced == M2I_SPLIT_DEVICE_CPU) {
      pt->label[u] = M2I_SPLIT_ENGINE_CPU;
      continue;
    }
    if (unit->forced == M2I_SPLIT_DEVICE_M2I) {
      if (dev < 0) {
        g_set_error (error, M2I_ERROR, M2I_ERROR_UNSUPPORTED,
            "layer '%s' has affinity M2I, but the device cannot run it (%s)",
            unit_name (a, u), unit->why_not ? unit->why_not : "unsupported");
        return FALSE;
      }
      pt->label[u] = dev;
      continue;
    }
    pt->label[u] = -1;
    for (gint k = 0; k < pt->n_order && pt->label[u] < 0; k++) {
      if (pt->order[k] == M2I_SPLIT_DEVICE_CPU)
        pt->label[u] = M2I_SPLIT_ENGINE_CPU;
      else if (dev >= 0)
        pt->label[u] = dev;
    }
    if (pt->label[u] < 0) {
      g_set_error (error, M2I_ERROR, M2I_ERROR_UNSUPPORTED,
          "layer '%s' cannot run on the listed devices (%s); add CPU to the device list, "
          "e.g. \"HETERO:M2I,CPU\"", unit_name (a, u),
          unit->why_not ? unit->why_not : "unsupported");
      return FALSE;
    }
  }
  return TRUE;
}

/* Adds the DFS closure of constant layers feeding @node to @out (when not
 * NULL) and calls @on_value for every run-time value (an op's output or a
 * Parameter) the closure reads. */
static void
const_closure (const SplitAnalysis *a, gint node, GArray *out, gboolean *seen,
    void (*on_value) (gint src, gint port, gpointer data), gpointer data)
{
  const M2iIrNode *n = m2i_ir_model_get_node (a->model, node);
  for (gint i = 0; i < m2i_ir_node_get_n_inputs (n); i++) {
    M2iIrNode *s;
    gint port;
    if (!m2i_ir_node_get_input_source (n, i, &s, &port))
      continue;
    gint si = m2i_ir_node_get_index (s);
    if (a->kind[si] != SPLIT_NODE_CONST) {
      on_value (si, port, data);
      continue;
    }
    if (seen[si])
      continue;
    seen[si] = TRUE;
    if (out)
      g_array_append_val (out, si);
    const_closure (a, si, out, seen, on_value, data);
  }
}

typedef struct {
  Partition *pt;
  gint to_unit;
} EdgeCtx;

static void
add_unit_edge (gint src, gint port, gpointer data)
{
  EdgeCtx *c = data;
  gint from = c->pt->a->unit_of[src];
  if (from >= 0 && from != c->to_unit) {
    g_array_append_val (c->pt->edges, from);
    g_array_append_val (c->pt->edges, c->to_unit);
  }
}

static void
build_unit_edges (Partition *pt)
{
  SplitAnalysis *a = pt->a;
  gboolean *seen = g_new0 (gboolean, a->n_nodes);
  for (gint i = 0; i < a->n_nodes; i++) {
    if (a->kind[i] != SPLIT_NODE_OP)
      continue;
    memset (seen, 0, a->n_nodes * sizeof (gboolean));
    EdgeCtx c = { pt, a->unit_of[i] };
    const_closure (a, i, NULL, seen, add_unit_edge, &c);
  }
  g_free (seen);
}

/* Engine of the group holding @node's unit, or the host for non-ops. */
static M2iSplitEngine
engine_of_node (const Partition *pt, gint node)
{
  gint u = pt->a->unit_of[node];
  return u >= 0 ? pt->label[u] : M2I_SPLIT_ENGINE_CPU;
}

/* Boundary cost of the values crossing into and out of group @g when it
 * runs on @engine (the others keep their labels). */
static guint64
group_boundary_cost (const Partition *pt, const gint *group, gint g, M2iSplitEngine engine)
{
  SplitAnalysis *a = pt->a;
  guint64 ns = 0;
  for (gint i = 0; i < a->n_nodes; i++) {
    if (a->kind[i] == SPLIT_NODE_CONST || a->kind[i] == SPLIT_NODE_DEAD)
      continue;
    gint ui = a->unit_of[i];
    gboolean inside = ui >= 0 && group[ui] == g;
    const M2iIrNode *n = m2i_ir_model_get_node (a->model, i);
    for (gint p = 0; p < m2i_ir_node_get_n_outputs (n); p++) {
      gint nc;
      const gint *c = split_analysis_consumers (a, i, p, &nc);
      const M2iTensor *v = split_analysis_value (a, i, p);
      gint64 numel = MAX (m2i_shape_numel (&v->shape), 0);
      gsize es = m2i_element_type_size (v->type);
      /* one transfer per (value, reading group) */
      gint seen_groups[8], n_seen = 0;
      for (gint k = 0; k < nc; k++) {
        gint cn = c[2 * k];
        gint cu = a->kind[cn] == SPLIT_NODE_OP ? a->unit_of[cn] : -1;
        gint cg = cu >= 0 ? group[cu] : -1 - (a->kind[cn] == SPLIT_NODE_IO);
        if (cg == (ui >= 0 ? group[ui] : -3))
          continue;
        gboolean dup = FALSE;
        for (gint s = 0; s < n_seen; s++)
          dup |= seen_groups[s] == cg;
        if (dup)
          continue;
        if (n_seen < 8)
          seen_groups[n_seen++] = cg;
        gboolean c_inside = cu >= 0 && group[cu] == g;
        if (!inside && !c_inside)
          continue;
        M2iSplitEngine from = inside ? engine : engine_of_node (pt, i);
        M2iSplitEngine to = c_inside ? engine :
            cu >= 0 ? (M2iSplitEngine) pt->label[cu] : M2I_SPLIT_ENGINE_CPU;
        ns += split_cost_boundary (numel, es, from, to);
      }
    }
  }
  return ns;
}

/* What each group costs where it is and on the CPU (ns). */
typedef struct {
  guint64 cpu, dev;            /* the layers' own time */
  guint64 on_dev, on_cpu;      /* plus the boundary transfers, each way */
  gboolean forced;             /* a layer forced onto the device */
  gint engine;
  gint first;                  /* its first unit */
  gint n_ops;
} GroupCost;

static GroupCost *
group_costs (Partition *pt, const gint *group, gint n_groups)
{
  GroupCost *gc = g_new0 (GroupCost, MAX (n_groups, 1));
  for (gint g = 0; g < n_groups; g++)
    gc[g].first = -1;
  for (gint u = 0; u < pt->n_units; u++) {
    GroupCost *c = &gc[group[u]];
    c->cpu += pt->cpu_ns[u];
    c->dev += pt->dev_ns[u];
    c->forced |= unit_at (pt->a, u)->forced == M2I_SPLIT_DEVICE_M2I;
    c->engine = pt->label[u];
    c->n_ops += unit_at (pt->a, u)->nodes->len;
    if (c->first < 0)
      c->first = u;
  }
  for (gint g = 0; g < n_groups; g++)
    if (gc[g].engine != M2I_SPLIT_ENGINE_CPU) {
      gc[g].on_dev = gc[g].dev + group_boundary_cost (pt, group, g, gc[g].engine);
      gc[g].on_cpu = gc[g].cpu + group_boundary_cost (pt, group, g, M2I_SPLIT_ENGINE_CPU);
    }
  return gc;
}

static void
log_group (Partition *pt, GString *log, const GroupCost *c, const char *verdict)
{
  g_string_append_printf (log, "%s: %d op%s from '%s' on %s: device %.1f us + transfers %.1f us "
      "%s CPU %.1f us + transfers %.1f us\n", verdict, c->n_ops, c->n_ops == 1 ? "" : "s",
      unit_name (pt->a, c->first), m2i_split_engine_to_string (c->engine), c->dev / 1e3,
      (c->on_dev - c->dev) / 1e3, c->on_dev < c->on_cpu ? "<" : ">=", c->cpu / 1e3,
      (c->on_cpu - c->cpu) / 1e3);
}

/* One round of the cost rule: sends the device group that loses most back
 * to the CPU (logged in @log). TRUE when one was sent back. */
static gboolean
revert_worst_group (Partition *pt, const gint *group, gint n_groups, GString *log)
{
  GroupCost *gc = group_costs (pt, group, n_groups);
  gint worst = -1;
  gint64 worst_loss = -1;
  for (gint g = 0; g < n_groups; g++) {
    if (gc[g].engine == M2I_SPLIT_ENGINE_CPU || gc[g].forced)
      continue;
    gint64 loss = (gint64) gc[g].on_dev - (gint64) gc[g].on_cpu;
    if (loss >= 0 && loss > worst_loss) {
      worst = g;
      worst_loss = loss;
    }
  }
  if (worst >= 0) {
    log_group (pt, log, &gc[worst], "to the CPU");
    for (gint u = 0; u < pt->n_units; u++)
      if (group[u] == worst)
        pt->label[u] = M2I_SPLIT_ENGINE_CPU;
  }
  g_free (gc);
  return worst >= 0;
}

/* The device groups that stay, with their figures. */
static void
log_kept (Partition *pt, const gint *group, gint n_groups, GString *log)
{
  GroupCost *gc = group_costs (pt, group, n_groups);
  for (gint g = 0; g < n_groups; g++)
    if (gc[g].engine != M2I_SPLIT_ENGINE_CPU)
      log_group (pt, log, &gc[g], gc[g].forced ? "forced" : "kept");
  g_free (gc);
}

static gint
group_units (Partition *pt, gint *group)
{
  SplitDag dag = { pt->n_units, pt->label, pt->edges->len / 2, (const gint *) pt->edges->data };
  return split_dag_group (&dag, group);
}

/* Affinities: node → forced device + 1 (0: none). */
static gint *
collect_affinity (M2iIrModel *model, const M2iSplitOptions *opts, const M2iSplitDevice *order,
    gint n_order, GError **error)
{
  gint n = m2i_ir_model_get_n_nodes (model);
  gint *aff = g_new0 (gint, n);
  GHashTable *by_name = g_hash_table_new (g_str_hash, g_str_equal);
  for (gint i = 0; i < n; i++)
    g_hash_table_insert (by_name, (gpointer) m2i_ir_node_get_name (m2i_ir_model_get_node (model, i)),
        GINT_TO_POINTER (i + 1));
  gboolean ok = TRUE;
  if (opts->affinity) {
    GHashTableIter it;
    gpointer k, v;
    g_hash_table_iter_init (&it, opts->affinity);
    while (ok && g_hash_table_iter_next (&it, &k, &v)) {
      gint i = GPOINTER_TO_INT (g_hash_table_lookup (by_name, k)) - 1;
      if (i < 0) {
        g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
            "affinity names layer '%s', which the model does not have", (const char *) k);
        ok = FALSE;
      } else {
        M2iSplitDevice d = M2I_SPLIT_DEVICE_CPU;
        if (!split_device_from_string (v, &d)) {
          g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
              "affinity of layer '%s': unknown device \"%s\" (CPU or M2I)", (const char *) k,
              (const char *) v);
          ok = FALSE;
        }
        aff[i] = d + 1;
      }
    }
  }
  for (gint i = 0; i < n && ok; i++) {
    const M2iIrNode *node = m2i_ir_model_get_node (model, i);
    const char *v = m2i_ir_node_get_rt_info (node, "affinity");
    if (aff[i] || !v)
      continue;
    M2iSplitDevice d = M2I_SPLIT_DEVICE_CPU;
    if (!split_device_from_string (v, &d)) {
      g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
          "layer '%s': rt_info affinity \"%s\" is no device (CPU or M2I)",
          m2i_ir_node_get_name (node), v);
      ok = FALSE;
    }
    aff[i] = d + 1;
  }
  for (gint i = 0; i < n && ok; i++) {
    if (!aff[i])
      continue;
    gboolean listed = FALSE;
    for (gint k = 0; k < n_order; k++)
      listed |= (gint) order[k] == aff[i] - 1;
    if (!listed) {
      g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
          "layer '%s' has affinity %s, which the device list does not name",
          m2i_ir_node_get_name (m2i_ir_model_get_node (model, i)),
          m2i_split_device_to_string (aff[i] - 1));
      ok = FALSE;
    }
  }
  g_hash_table_unref (by_name);
  if (!ok)
    g_clear_pointer (&aff, g_free);
  return aff;
}

static gint
cmp_int (gconstpointer a, gconstpointer b)
{
  return *(const gint *) a - *(const gint *) b;
}

typedef struct {
  const SplitAnalysis *a;
  const gint *node_piece;
  gint piece;
  GHashTable *reads;           /* "node:port" of values read from outside */
  GArray *read_list;           /* pairs */
} ReadCtx;

static void
note_read (gint src, gint port, gpointer data)
{
  ReadCtx *c = data;
  if (c->node_piece[src] == c->piece)
    return;
  gchar *key = g_strdup_printf ("%d:%d", src, port);
  if (g_hash_table_add (c->reads, key)) {
    g_array_append_val (c->read_list, src);
    g_array_append_val (c->read_list, port);
  }
}

/* Builds the pieces, tensors and sub-models from the final groups. */
static gboolean
build_pieces (M2iSplitPlan *plan, Partition *pt, const gint *group, gint n_groups, GError **error)
{
  SplitAnalysis *a = pt->a;
  M2iIrModel *model = a->model;
  gint n = a->n_nodes;
  plan->n_nodes = n;
  plan->node_piece = g_new (gint, n);
  for (gint i = 0; i < n; i++)
    plan->node_piece[i] = a->kind[i] == SPLIT_NODE_OP ? group[a->unit_of[i]] : -1;
  for (gint g = 0; g < n_groups; g++) {
    SplitPiece *p = split_piece_new ();
    g_ptr_array_add (plan->pieces, p);
  }
  for (gint u = 0; u < pt->n_units; u++) {
    SplitPiece *p = g_ptr_array_index (plan->pieces, group[u]);
    p->engine = pt->label[u];
    p->device = p->engine == M2I_SPLIT_ENGINE_CPU ? M2I_SPLIT_DEVICE_CPU : M2I_SPLIT_DEVICE_M2I;
    p->cost_ns += p->engine == M2I_SPLIT_ENGINE_CPU ? pt->cpu_ns[u] : pt->dev_ns[u];
    const SplitUnit *unit = unit_at (a, u);
    g_array_append_vals (p->nodes, unit->nodes->data, unit->nodes->len);
  }
  for (gint g = 0; g < n_groups; g++) {
    SplitPiece *p = g_ptr_array_index (plan->pieces, g);
    piece_count_ops (p, model, (const gint *) p->nodes->data, p->nodes->len);
  }
  /* tensors: model inputs, model outputs, then what crosses between pieces */
  GHashTable *value_tensor = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  gboolean ok = TRUE;
#define VALUE_KEY(node, port) g_strdup_printf ("%d:%d", (node), (port))
  for (gint i = 0; i < m2i_ir_model_get_n_inputs (model); i++) {
    const M2iIrIoInfo *io = m2i_ir_model_get_input (model, i);
    gint node = m2i_ir_node_get_index (io->node);
    g_autofree gchar *name = split_tensor_name (io->node, 0);
    gint t = split_plan_add_tensor (plan, name, io->type, &io->shape, M2I_SPLIT_TENSOR_INPUT);
    ((SplitTensor *) g_ptr_array_index (plan->tensors, t))->src_node = node;
    g_array_append_val (plan->inputs, t);
    g_hash_table_insert (value_tensor, VALUE_KEY (node, 0), GINT_TO_POINTER (t + 1));
  }
  for (gint i = 0; i < m2i_ir_model_get_n_outputs (model) && ok; i++) {
    const M2iIrIoInfo *io = m2i_ir_model_get_output (model, i);
    M2iIrNode *src;
    gint port;
    m2i_ir_node_get_input_source (io->node, 0, &src, &port);
    gint sn = m2i_ir_node_get_index (src);
    if (a->kind[sn] != SPLIT_NODE_OP) {
      g_set_error (error, M2I_ERROR, M2I_ERROR_UNSUPPORTED,
          "output '%s' is a %s, not computed by any layer: nothing to split", io->name,
          a->kind[sn] == SPLIT_NODE_IO ? "model input" : "constant");
      ok = FALSE;
      break;
    }
    gchar *key = VALUE_KEY (sn, port);
    gint t = GPOINTER_TO_INT (g_hash_table_lookup (value_tensor, key)) - 1;
    if (t < 0) {
      g_autofree gchar *name = split_tensor_name (src, port);
      t = split_plan_add_tensor (plan, name, m2i_ir_node_get_output_type (src, port),
          m2i_ir_node_get_output_shape (src, port), M2I_SPLIT_TENSOR_OUTPUT);
      SplitTensor *st = g_ptr_array_index (plan->tensors, t);
      st->src_node = sn;
      st->src_port = port;
      g_hash_table_insert (value_tensor, key, GINT_TO_POINTER (t + 1));
    } else {
      g_free (key);
    }
    g_array_append_val (plan->outputs, t);
  }
  gboolean *seen = g_new0 (gboolean, n);
  for (gint g = 0; g < n_groups && ok; g++) {
    SplitPiece *p = g_ptr_array_index (plan->pieces, g);
    g_array_sort (p->nodes, cmp_int);
    ReadCtx rc = { a, plan->node_piece, g, g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
          NULL), g_array_new (FALSE, FALSE, sizeof (gint)) };
    memset (seen, 0, n * sizeof (gboolean));
    for (guint k = 0; k < p->nodes->len; k++)
      const_closure (a, g_array_index (p->nodes, gint, k), NULL, seen, note_read, &rc);
    for (guint k = 0; k < rc.read_list->len && ok; k += 2) {
      gint sn = g_array_index (rc.read_list, gint, k), sp = g_array_index (rc.read_list, gint, k + 1);
      gchar *key = VALUE_KEY (sn, sp);
      gint t = GPOINTER_TO_INT (g_hash_table_lookup (value_tensor, key)) - 1;
      if (t < 0) {
        M2iIrNode *src = m2i_ir_model_get_node (model, sn);
        g_autofree gchar *name = split_tensor_name (src, sp);
        t = split_plan_add_tensor (plan, name, m2i_ir_node_get_output_type (src, sp),
            m2i_ir_node_get_output_shape (src, sp), M2I_SPLIT_TENSOR_INTERMEDIATE);
        SplitTensor *st = g_ptr_array_index (plan->tensors, t);
        st->src_node = sn;
        st->src_port = sp;
        g_hash_table_insert (value_tensor, key, GINT_TO_POINTER (t + 1));
      } else {
        g_free (key);
      }
      g_array_append_val (p->inputs, t);
    }
    g_hash_table_unref (rc.reads);
    g_array_free (rc.read_list, TRUE);
  }
  g_free (seen);
#undef VALUE_KEY
  /* tensor names must be unique: sub-models name their inputs by them */
  if (ok && g_hash_table_size (plan->tensor_index) != plan->tensors->len) {
    GHashTable *names = g_hash_table_new (g_str_hash, g_str_equal);
    for (guint i = 0; i < plan->tensors->len && ok; i++) {
      SplitTensor *t = g_ptr_array_index (plan->tensors, i);
      if (!g_hash_table_add (names, t->name)) {
        g_set_error (error, M2I_ERROR, M2I_ERROR_UNSUPPORTED,
            "two tensors that cross pieces are both called '%s'; give the layers unique "
            "names to split this model", t->name);
        ok = FALSE;
      }
    }
    g_hash_table_unref (names);
  }
  /* buffers between pieces are sized when the plan is made */
  for (guint i = 0; i < plan->tensors->len && ok; i++) {
    SplitTensor *t = g_ptr_array_index (plan->tensors, i);
    if (!m2i_shape_is_static (&t->shape)) {
      g_autofree gchar *dims = m2i_shape_to_string (&t->shape);
      g_set_error (error, M2I_ERROR, M2I_ERROR_UNSUPPORTED, "tensor '%s' has the shape %s, "
          "known only at run time; split execution needs static shapes between pieces and at "
          "the model's inputs and outputs (give inputs a shape with m2i_ir_model_reshape(); "
          "run models whose outputs depend on the data, such as NonMaxSuppression, unsplit)",
          t->name, dims);
      ok = FALSE;
    }
  }
  /* outputs of each piece: tensors it produces */
  for (guint i = 0; i < plan->tensors->len && ok; i++) {
    SplitTensor *t = g_ptr_array_index (plan->tensors, i);
    if (t->attr == M2I_SPLIT_TENSOR_INPUT)
      continue;
    gint p = plan->node_piece[t->src_node];
    gint ii = i;
    g_array_append_val (((SplitPiece *) g_ptr_array_index (plan->pieces, p))->outputs, ii);
    const SplitGrid *grid = split_analysis_grid (a, t->src_node, t->src_port);
    if (grid)
      t->grid = *grid;
  }
  for (guint i = 0; i < plan->tensors->len; i++) {
    SplitTensor *t = g_ptr_array_index (plan->tensors, i);
    if (t->attr == M2I_SPLIT_TENSOR_INPUT) {
      const SplitGrid *grid = split_analysis_grid (a, t->src_node, 0);
      if (grid)
        t->grid = *grid;
    }
  }
  g_hash_table_unref (value_tensor);
  return ok;
}

/* The sub-model of piece @g: its ops, the constant sub-graphs they read,
 * and a Result for each tensor it produces. */
static gboolean
extract_piece (M2iSplitPlan *plan, const SplitAnalysis *a, gint g, GError **error)
{
  SplitPiece *p = g_ptr_array_index (plan->pieces, g);
  gboolean *seen = g_new0 (gboolean, a->n_nodes);
  GArray *selection = g_array_new (FALSE, FALSE, sizeof (gint));
  g_array_append_vals (selection, p->nodes->data, p->nodes->len);
  ReadCtx rc = { a, plan->node_piece, g, g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
        NULL), g_array_new (FALSE, FALSE, sizeof (gint)) };
  for (guint k = 0; k < p->nodes->len; k++)
    const_closure (a, g_array_index (p->nodes, gint, k), selection, seen, note_read, &rc);
  g_hash_table_unref (rc.reads);
  g_array_free (rc.read_list, TRUE);
  gint *outs = g_new (gint, 2 * MAX (p->outputs->len, 1));
  for (guint k = 0; k < p->outputs->len; k++) {
    const SplitTensor *t = g_ptr_array_index (plan->tensors, g_array_index (p->outputs, gint, k));
    outs[2 * k] = t->src_node;
    outs[2 * k + 1] = t->src_port;
  }
  g_autofree gchar *name = g_strdup_printf ("%s/graph_%d", m2i_ir_model_get_name (a->model), g);
  p->model = m2i_ir_model_extract (a->model, (const gint *) selection->data,
      selection->len, outs, p->outputs->len, name, error);
  g_free (outs);
  g_free (seen);
  g_array_free (selection, TRUE);
  if (!p->model) {
    g_prefix_error (error, "piece %d: ", g);
    return FALSE;
  }
  return TRUE;
}

M2iSplitPlan *
m2i_split_plan_new (M2iIrModel *model, const M2iSplitOptions *options, GError **error)
{
  M2iSplitOptions defaults;
  m2i_split_options_init (&defaults);
  const M2iSplitOptions *opts = options ? options : &defaults;
  Partition pt = { 0 };
  pt.opts = opts;
  pt.n_order = parse_devices (opts->devices, pt.order, error);
  if (!pt.n_order)
    return NULL;
  gint *aff = collect_affinity (model, opts, pt.order, pt.n_order, error);
  if (!aff)
    return NULL;
  pt.a = split_analyze (model, aff, opts->m2i_profile, NULL, opts->max_memory, error);
  g_free (aff);
  if (!pt.a)
    return NULL;
  SplitAnalysis *a = pt.a;
  pt.n_units = a->units->len;
  pt.label = g_new (gint, MAX (pt.n_units, 1));
  pt.cpu_ns = g_new0 (guint64, MAX (pt.n_units, 1));
  pt.dev_ns = g_new0 (guint64, MAX (pt.n_units, 1));
  pt.edges = g_array_new (FALSE, FALSE, sizeof (gint));
  M2iSplitPlan *plan = NULL;
  gint *group = g_new (gint, MAX (pt.n_units, 1));
  if (!choose_labels (&pt, error))
    goto out;
  guint64 cpu_only = 0;
  for (gint u = 0; u < pt.n_units; u++) {
    const SplitUnit *unit = unit_at (a, u);
    for (guint k = 0; k < unit->nodes->len; k++)
      pt.cpu_ns[u] += split_cost_cpu_node (a, g_array_index (unit->nodes, gint, k));
    cpu_only += pt.cpu_ns[u];
    if (pt.label[u] != M2I_SPLIT_ENGINE_CPU)
      pt.dev_ns[u] = split_cost_device_unit (a, u, pt.label[u], opts->m2i_profile);
  }
  build_unit_edges (&pt);
  gboolean cpu_listed = FALSE;
  for (gint k = 0; k < pt.n_order; k++)
    cpu_listed |= pt.order[k] == M2I_SPLIT_DEVICE_CPU;
  gint n_groups = group_units (&pt, group);
  GString *log = g_string_new (NULL);
  while (cpu_listed && !opts->keep_all_device_pieces &&
      revert_worst_group (&pt, group, n_groups, log))
    n_groups = group_units (&pt, group);
  log_kept (&pt, group, n_groups, log);

  plan = split_plan_alloc ();
  plan->model = m2i_ir_model_ref (model);
  plan->devices = g_strdup (opts->devices ? opts->devices : "HETERO:M2I,CPU");
  plan->m2i_profile = opts->m2i_profile;
  plan->max_memory = opts->max_memory;
  plan->cpu_only_ns = cpu_only;
  plan->decisions = g_string_free (log, FALSE);
  gboolean ok = build_pieces (plan, &pt, group, n_groups, error);
  for (gint g = 0; g < n_groups && ok; g++)
    ok = extract_piece (plan, a, g, error);
  if (!ok) {
    g_clear_pointer (&plan, m2i_split_plan_unref);
    goto out;
  }
  split_plan_link (plan);
  plan_estimate (plan);
  /* the model's rt_info (labels, model type, conversion parameters: what
   * reads its results needs it) goes with the piece that writes output 0,
   * once, shared rather than copied */
  const SplitTensor *out0 = plan->outputs->len ?
      g_ptr_array_index (plan->tensors, g_array_index (plan->outputs, gint, 0)) : NULL;
  if (out0 && out0->producer >= 0)
    ir_model_share_rt_info (((SplitPiece *) g_ptr_array_index (plan->pieces,
                out0->producer))->model, model);
out:
  g_free (group);
  g_free (pt.label);
  g_free (pt.cpu_ns);
  g_free (pt.dev_ns);
  g_array_free (pt.edges, TRUE);
  split_analysis_free (a);
  return plan;
}

SplitGridSeeds *
split_plan_piece_seeds (const M2iSplitPlan *plan, gint p)
{
  const SplitPiece *pc = g_ptr_array_index (plan->pieces, p);
  GHashTable *seeds = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint k = 0; k < pc->inputs->len; k++) {
    SplitTensor *t = g_ptr_array_index (plan->tensors, g_array_index (pc->inputs, gint, k));
    if (t->grid.valid)
      g_hash_table_insert (seeds, t->name, &t->grid);
  }
  return seeds;
}

gboolean
split_plan_check_piece (const M2iSplitPlan *plan, gint p, GError **error)
{
  const SplitPiece *pc = g_ptr_array_index (plan->pieces, p);
  if (pc->engine == M2I_SPLIT_ENGINE_CPU)
    return TRUE;
  SplitGridSeeds *seeds = split_plan_piece_seeds (plan, p);
  SplitAnalysis *a = split_analyze (pc->model, NULL, plan->m2i_profile, seeds, plan->max_memory,
      error);
  g_hash_table_unref (seeds);
  if (!a) {
    g_prefix_error (error, "graph %d: ", p);
    return FALSE;
  }
  gboolean ok = TRUE;
  for (gint i = 0; i < a->n_nodes && ok; i++) {
    if (a->kind[i] != SPLIT_NODE_OP)
      continue;
    const SplitUnit *u = g_ptr_array_index (a->units, a->unit_of[i]);
    if (u->caps & SPLIT_CAN (pc->engine))
      continue;
    const M2iIrNode *n = m2i_ir_model_get_node (a->model, i);
    g_set_error (error, M2I_ERROR, M2I_ERROR_UNSUPPORTED,
        "graph %d runs on %s (%s), but layer '%s' cannot: %s", p,
        m2i_split_device_to_string (pc->device), m2i_split_engine_to_string (pc->engine),
        m2i_ir_node_get_name (n), pc->engine == M2I_SPLIT_ENGINE_M2I ?
        "the M2I block runs a pre-processing head only" : u->why_not ? u->why_not :
        u->caps & SPLIT_CAN (M2I_SPLIT_ENGINE_NPU_FP16) ? "it runs in fp16, not int8" :
        u->caps & SPLIT_CAN (M2I_SPLIT_ENGINE_NPU_INT8) ? "it runs in int8, not fp16" :
        "unsupported");
    ok = FALSE;
  }
  split_analysis_free (a);
  return ok;
}

gboolean
split_plan_cost_pieces (M2iSplitPlan *plan, GError **error)
{
  plan->cpu_only_ns = 0;
  for (guint p = 0; p < plan->pieces->len; p++) {
    SplitPiece *pc = g_ptr_array_index (plan->pieces, p);
    SplitGridSeeds *seeds = split_plan_piece_seeds (plan, p);
    SplitAnalysis *a = split_analyze (pc->model, NULL, plan->m2i_profile, seeds,
        plan->max_memory, error);
    g_hash_table_unref (seeds);
    if (!a) {
      g_prefix_error (error, "graph %u: ", p);
      return FALSE;
    }
    pc->cost_ns = 0;
    GArray *ops = g_array_new (FALSE, FALSE, sizeof (gint));
    for (guint u = 0; u < a->units->len; u++) {
      const SplitUnit *unit = g_ptr_array_index (a->units, u);
      guint64 cpu = 0;
      for (guint k = 0; k < unit->nodes->len; k++)
        cpu += split_cost_cpu_node (a, g_array_index (unit->nodes, gint, k));
      plan->cpu_only_ns += cpu;
      g_array_append_vals (ops, unit->nodes->data, unit->nodes->len);
      pc->cost_ns += pc->engine == M2I_SPLIT_ENGINE_CPU ? cpu :
          split_cost_device_unit (a, u, pc->engine, plan->m2i_profile);
    }
    piece_count_ops (pc, pc->model, (const gint *) ops->data, ops->len);
    g_array_free (ops, TRUE);
    split_analysis_free (a);
  }
  plan_estimate (plan);
  return TRUE;
}

/* ---- describing ------------------------------------------------------------------------- */

static void
append_bytes (GString *s, gsize b)
{
  if (b >= 10 * 1024 * 1024)
    g_string_append_printf (s, "%.1f MiB", b / 1048576.0);
  else if (b >= 10 * 1024)
    g_string_append_printf (s, "%.1f KiB", b / 1024.0);
  else
    g_string_append_printf (s, "%" G_GSIZE_FORMAT " B", b);
}

static void
append_ns (GString *s, guint64 ns)
{
  if (ns >= 1000000)
    g_string_append_printf (s, "%.2f ms", ns / 1e6);
  else
    g_string_append_printf (s, "%.1f us", ns / 1e3);
}

static void
append_tensor (GString *s, const SplitTensor *t)
{
  g_autofree gchar *shape = m2i_shape_to_string (&t->shape);
  g_string_append_printf (s, "%s %s %s ", t->name, shape, m2i_element_type_to_string (t->type));
  append_bytes (s, tensor_bytes (t));
}

const char *
m2i_split_plan_get_decisions (const M2iSplitPlan *plan)
{
  return plan->decisions ? plan->decisions : "";
}

gchar *
m2i_split_plan_to_string (const M2iSplitPlan *plan)
{
  GString *s = g_string_new (NULL);
  g_string_append_printf (s, "%u piece%s, %u tensors (%s)\n", plan->pieces->len,
      plan->pieces->len == 1 ? "" : "s",
      plan->tensors->len, plan->devices ? plan->devices : "loaded");
  for (guint p = 0; p < plan->pieces->len; p++) {
    const SplitPiece *pc = g_ptr_array_index (plan->pieces, p);
    g_string_append_printf (s, "piece %u: %s %s, %d op%s, ~", p,
        m2i_split_device_to_string (pc->device), m2i_split_engine_to_string (pc->engine),
        pc->n_ops, pc->n_ops == 1 ? "" : "s");
    append_ns (s, pc->cost_ns);
    g_string_append_printf (s, "\n    ops %s\n", pc->op_summary ? pc->op_summary : "");
    for (int dir = 0; dir < 2; dir++) {
      GArray *list = dir ? pc->outputs : pc->inputs;
      for (guint k = 0; k < list->len; k++) {
        const SplitTensor *t = g_ptr_array_index (plan->tensors, g_array_index (list, gint, k));
        g_string_append (s, dir ? "    out " : "    in  ");
        append_tensor (s, t);
        g_string_append_printf (s, " (%s", m2i_split_tensor_attr_to_string (t->attr));
        if (dir && t->consumers->len) {
          g_string_append (s, ", to piece");
          for (guint c = 0; c < t->consumers->len; c++)
            g_string_append_printf (s, " %d", g_array_index (t->consumers, gint, c));
        } else if (!dir && t->producer >= 0) {
          g_string_append_printf (s, ", from piece %d", t->producer);
        }
        g_string_append (s, ")\n");
      }
    }
  }
  g_string_append (s, "estimate: all on the CPU ~");
  append_ns (s, plan->cpu_only_ns);
  g_string_append (s, ", split ~");
  append_ns (s, plan->split_ns);
  g_string_append (s, " (pieces and boundary transfers; docs/split.md)");
  return g_string_free (s, FALSE);
}
