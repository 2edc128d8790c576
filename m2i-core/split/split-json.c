/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* split-json.c — a plan as a folder: AutoSplit's graph_infos.json plus one
 * IR pair per graph.
 *
 *   {
 *     "graph_num": 3, "platform": "openvino", "dynamic": false, "layout": "NCHW",
 *     "graphs": [
 *       { "device": "M2I", "engine": "npu-fp16", "ops": 12,
 *         "inputs": ["input"], "outputs": ["fc2"],
 *         "model_info": { "xml": "graph_0.xml", "bin": "graph_0.bin" } }, ...
 *     ],
 *     "tensors": {
 *       "input": { "shape": [1, 3, 28, 28], "dtype": "f32", "attr": "input" },
 *       "fc2": { "shape": [1, 10], "dtype": "f32", "attr": "intermediate",
 *                "quant": { "scale": 0.05, "zero_point": -3 } }, ...
 *     }
 *   }
 *
 * As AutoSplit's splitter writes it: graphs in a topological order, tensors
 * keyed by name with attr input/output/intermediate, model inputs listed
 * first and outputs in the model's order. "engine", "ops" and "quant" (the
 * int8 grid of a tensor an int8 piece reads or writes) are m2i's additions;
 * a reader that does not know them loses nothing it needs. docs/split.md.
 */
#include "split-private.h"
#include <base/m2i-error.h>

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>
#include <sys/stat.h>

#define GRAPH_INFOS "graph_infos.json"

/* Limits on what a folder may hand the loader (docs/reliability.md): a
 * graph_infos.json is a few KiB, nests 4 levels; json-glib's parser
 * recurses once per level, so the depth is bounded before it sees the
 * text. */
#define MAX_JSON_BYTES (64u << 20)
#define MAX_JSON_DEPTH 64
#define MAX_IR_XML_BYTES ((gsize) 1 << 30)

/* ---- writing -------------------------------------------------------------------- */

gboolean
m2i_split_plan_save (const M2iSplitPlan *plan, const char *dir, GError **error)
{
  if (g_mkdir_with_parents (dir, 0755) < 0) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_IO, "cannot create the folder %s: %s", dir,
        g_strerror (errno));
    return FALSE;
  }
  JsonBuilder *b = json_builder_new ();
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "graph_num");
  json_builder_add_int_value (b, plan->pieces->len);
  json_builder_set_member_name (b, "platform");
  json_builder_add_string_value (b, "openvino");
  json_builder_set_member_name (b, "dynamic");
  json_builder_add_boolean_value (b, FALSE);
  json_builder_set_member_name (b, "layout");
  json_builder_add_string_value (b, "NCHW");
  json_builder_set_member_name (b, "m2i_profile");
  json_builder_add_string_value (b, m2i_profile_to_string (plan->m2i_profile));
  json_builder_set_member_name (b, "graphs");
  json_builder_begin_array (b);
  gboolean ok = TRUE;
  for (guint p = 0; p < plan->pieces->len && ok; p++) {
    const SplitPiece *pc = g_ptr_array_index (plan->pieces, p);
    g_autofree gchar *xml = g_strdup_printf ("graph_%u.xml", p);
    g_autofree gchar *bin = g_strdup_printf ("graph_%u.bin", p);
    g_autofree gchar *xml_path = g_build_filename (dir, xml, NULL);
    g_autofree gchar *bin_path = g_build_filename (dir, bin, NULL);
    ok = m2i_ir_model_save (pc->model, xml_path, bin_path, error);
    json_builder_begin_object (b);
    json_builder_set_member_name (b, "device");
    json_builder_add_string_value (b, m2i_split_device_to_string (pc->device));
    json_builder_set_member_name (b, "engine");
    json_builder_add_string_value (b, m2i_split_engine_to_string (pc->engine));
    json_builder_set_member_name (b, "ops");
    json_builder_add_int_value (b, pc->n_ops);
    for (int dir_out = 0; dir_out < 2; dir_out++) {
      GArray *list = dir_out ? pc->outputs : pc->inputs;
      json_builder_set_member_name (b, dir_out ? "outputs" : "inputs");
      json_builder_begin_array (b);
      for (guint k = 0; k < list->len; k++) {
        const SplitTensor *t = g_ptr_array_index (plan->tensors, g_array_index (list, gint, k));
        json_builder_add_string_value (b, t->name);
      }
      json_builder_end_array (b);
    }
    json_builder_set_member_name (b, "model_info");
    json_builder_begin_object (b);
    json_builder_set_member_name (b, "xml");
    json_builder_add_string_value (b, xml);
    json_builder_set_member_name (b, "bin");
    json_builder_add_string_value (b, bin);
    json_builder_end_object (b);
    json_builder_end_object (b);
  }
  json_builder_end_array (b);
  json_builder_set_member_name (b, "tensors");
  json_builder_begin_object (b);
  /* model inputs, model outputs (in the model's order), then the rest */
  GArray *order = g_array_new (FALSE, FALSE, sizeof (gint));
  g_array_append_vals (order, plan->inputs->data, plan->inputs->len);
  for (guint i = 0; i < plan->outputs->len; i++) {
    gint t = g_array_index (plan->outputs, gint, i);
    gboolean dup = FALSE;
    for (guint k = 0; k < order->len; k++)
      dup |= g_array_index (order, gint, k) == t;
    if (!dup)
      g_array_append_val (order, t);
  }
  for (guint i = 0; i < plan->tensors->len; i++) {
    const SplitTensor *t = g_ptr_array_index (plan->tensors, i);
    gint ii = i;
    if (t->attr == M2I_SPLIT_TENSOR_INTERMEDIATE)
      g_array_append_val (order, ii);
  }
  for (guint k = 0; k < order->len; k++) {
    const SplitTensor *t = g_ptr_array_index (plan->tensors, g_array_index (order, gint, k));
    json_builder_set_member_name (b, t->name);
    json_builder_begin_object (b);
    json_builder_set_member_name (b, "shape");
    json_builder_begin_array (b);
    for (gint d = 0; d < t->shape.rank; d++)
      json_builder_add_int_value (b, t->shape.dims[d]);
    json_builder_end_array (b);
    json_builder_set_member_name (b, "dtype");
    json_builder_add_string_value (b, m2i_element_type_to_string (t->type));
    json_builder_set_member_name (b, "attr");
    json_builder_add_string_value (b, m2i_split_tensor_attr_to_string (t->attr));
    if (t->grid.valid) {
      json_builder_set_member_name (b, "quant");
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "scale");
      json_builder_add_double_value (b, t->grid.scale);
      json_builder_set_member_name (b, "zero_point");
      json_builder_add_int_value (b, t->grid.zero_point);
      json_builder_end_object (b);
    }
    json_builder_end_object (b);
  }
  g_array_free (order, TRUE);
  json_builder_end_object (b);
  json_builder_end_object (b);
  if (ok) {
    JsonGenerator *gen = json_generator_new ();
    JsonNode *root = json_builder_get_root (b);
    json_generator_set_root (gen, root);
    json_generator_set_pretty (gen, TRUE);
    json_generator_set_indent (gen, 2);
    g_autofree gchar *path = g_build_filename (dir, GRAPH_INFOS, NULL);
    GError *e = NULL;
    if (!json_generator_to_file (gen, path, &e)) {
      g_set_error (error, M2I_ERROR, M2I_ERROR_IO, "cannot write %s: %s", path, e->message);
      g_error_free (e);
      ok = FALSE;
    }
    json_node_unref (root);
    g_object_unref (gen);
  }
  g_object_unref (b);
  return ok;
}

/* ---- reading ------------------------------------------------------------------------ */

typedef struct {
  const char *path;            /* graph_infos.json, for messages */
  SplitFolder *folder;
  GError **error;
} Loader;

static gboolean
bad (Loader *l, gint code, const char *format, ...) G_GNUC_PRINTF (3, 4);

static gboolean
bad (Loader *l, gint code, const char *format, ...)
{
  va_list ap;
  va_start (ap, format);
  g_autofree gchar *msg = g_strdup_vprintf (format, ap);
  va_end (ap);
  g_set_error (l->error, M2I_ERROR, code, "%s: %s", l->path, msg);
  return FALSE;
}

/* JSON objects may not repeat a key: json-glib keeps the last silently, so
 * the parser's member signal is watched (the first repeat is kept). */
typedef struct {
  GHashTable *seen;            /* JsonObject* → GHashTable of names */
  gchar *dup;                  /* the first repeated key */
  gboolean in_tensors;
} DupWatch;

static void
on_member (JsonParser *parser, JsonObject *object, const char *name, gpointer data)
{
  DupWatch *w = data;
  GHashTable *names = g_hash_table_lookup (w->seen, object);
  if (!names) {
    names = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
    g_hash_table_insert (w->seen, object, names);
  }
  if (!g_hash_table_add (names, g_strdup (name)) && !w->dup)
    w->dup = g_strdup (name);
}

static JsonObject *
get_object (Loader *l, JsonObject *o, const char *key, const char *where)
{
  JsonNode *n = json_object_get_member (o, key);
  if (!n || !JSON_NODE_HOLDS_OBJECT (n)) {
    bad (l, M2I_ERROR_MALFORMED, "%s: \"%s\" must be an object", where, key);
    return NULL;
  }
  return json_node_get_object (n);
}

static JsonArray *
get_array (Loader *l, JsonObject *o, const char *key, const char *where)
{
  JsonNode *n = json_object_get_member (o, key);
  if (!n || !JSON_NODE_HOLDS_ARRAY (n)) {
    bad (l, M2I_ERROR_MALFORMED, "%s: \"%s\" must be an array", where, key);
    return NULL;
  }
  return json_node_get_array (n);
}

static const char *
get_string (Loader *l, JsonObject *o, const char *key, const char *where)
{
  JsonNode *n = json_object_get_member (o, key);
  if (!n || !JSON_NODE_HOLDS_VALUE (n) || json_node_get_value_type (n) != G_TYPE_STRING) {
    bad (l, M2I_ERROR_MALFORMED, "%s: \"%s\" must be a string", where, key);
    return NULL;
  }
  return json_node_get_string (n);
}

static gboolean
get_int (Loader *l, JsonObject *o, const char *key, const char *where, gint64 *out)
{
  JsonNode *n = json_object_get_member (o, key);
  if (!n || !JSON_NODE_HOLDS_VALUE (n) || json_node_get_value_type (n) != G_TYPE_INT64)
    return bad (l, M2I_ERROR_MALFORMED, "%s: \"%s\" must be an integer", where, key);
  *out = json_node_get_int (n);
  return TRUE;
}

static gboolean
parse_tensor (Loader *l, M2iSplitPlan *plan, const char *name, JsonNode *node)
{
  g_autofree gchar *where = g_strdup_printf ("tensor '%s'", name);
  if (!JSON_NODE_HOLDS_OBJECT (node))
    return bad (l, M2I_ERROR_MALFORMED, "%s must be an object", where);
  JsonObject *o = json_node_get_object (node);
  JsonArray *shape = get_array (l, o, "shape", where);
  const char *dtype = shape ? get_string (l, o, "dtype", where) : NULL;
  const char *attr = dtype ? get_string (l, o, "attr", where) : NULL;
  if (!attr)
    return FALSE;
  M2iShape s = { 0 };
  if (json_array_get_length (shape) > M2I_MAX_RANK)
    return bad (l, M2I_ERROR_MALFORMED, "%s: rank above %d", where, M2I_MAX_RANK);
  s.rank = json_array_get_length (shape);
  for (gint d = 0; d < s.rank; d++) {
    JsonNode *e = json_array_get_element (shape, d);
    if (!JSON_NODE_HOLDS_VALUE (e) || json_node_get_value_type (e) != G_TYPE_INT64 ||
        json_node_get_int (e) < 0)
      return bad (l, M2I_ERROR_MALFORMED, "%s: shape must list non-negative integers", where);
    s.dims[d] = json_node_get_int (e);
  }
  M2iElementType type;
  if (!m2i_element_type_from_string (dtype, &type))
    return bad (l, M2I_ERROR_MALFORMED, "%s: unknown dtype \"%s\"", where, dtype);
  M2iSplitTensorAttr a;
  if (!strcmp (attr, "input"))
    a = M2I_SPLIT_TENSOR_INPUT;
  else if (!strcmp (attr, "output"))
    a = M2I_SPLIT_TENSOR_OUTPUT;
  else if (!strcmp (attr, "intermediate"))
    a = M2I_SPLIT_TENSOR_INTERMEDIATE;
  else
    return bad (l, M2I_ERROR_MALFORMED,
        "%s: attr \"%s\" is not input, output or intermediate", where, attr);
  gint t = split_plan_add_tensor (plan, name, type, &s, a);
  if (json_object_has_member (o, "quant")) {
    JsonObject *q = get_object (l, o, "quant", where);
    gint64 zp = 0;
    if (!q || !get_int (l, q, "zero_point", where, &zp))
      return FALSE;
    JsonNode *sc = json_object_get_member (q, "scale");
    if (!sc || !JSON_NODE_HOLDS_VALUE (sc) || (json_node_get_value_type (sc) != G_TYPE_DOUBLE &&
            json_node_get_value_type (sc) != G_TYPE_INT64) || !(json_node_get_double (sc) > 0) ||
        zp < -128 || zp > 127)
      return bad (l, M2I_ERROR_MALFORMED,
          "%s: quant needs a positive scale and a zero_point in [-128, 127]", where);
    SplitTensor *st = g_ptr_array_index (plan->tensors, t);
    st->grid.valid = TRUE;
    st->grid.scale = json_node_get_double (sc);
    st->grid.zero_point = zp;
  }
  if (a == M2I_SPLIT_TENSOR_INPUT)
    g_array_append_val (plan->inputs, t);
  else if (a == M2I_SPLIT_TENSOR_OUTPUT)
    g_array_append_val (plan->outputs, t);
  return TRUE;
}

/* A file named by the JSON: a relative path inside the folder (the lexical
 * check; split-folder.c refuses links on the way). */
static gboolean
member_name_ok (Loader *l, const char *file, const char *where)
{
  if (!*file || g_path_is_absolute (file) || strstr (file, ".."))
    return bad (l, M2I_ERROR_MALFORMED, "%s: \"%s\" must be a file name inside the folder",
        where, file);
  return TRUE;
}

static gboolean
tensor_list (Loader *l, M2iSplitPlan *plan, JsonObject *g, const char *key, const char *where,
    GArray *out)
{
  JsonArray *arr = get_array (l, g, key, where);
  if (!arr)
    return FALSE;
  for (guint k = 0; k < json_array_get_length (arr); k++) {
    JsonNode *e = json_array_get_element (arr, k);
    if (!JSON_NODE_HOLDS_VALUE (e) || json_node_get_value_type (e) != G_TYPE_STRING)
      return bad (l, M2I_ERROR_MALFORMED, "%s: %s must list tensor names", where, key);
    const char *name = json_node_get_string (e);
    gint t = m2i_split_plan_find_tensor (plan, name);
    if (t < 0)
      return bad (l, M2I_ERROR_MALFORMED, "%s: %s names tensor '%s', which \"tensors\" does not "
          "list", where, key, name);
    for (guint j = 0; j < out->len; j++)
      if (g_array_index (out, gint, j) == t)
        return bad (l, M2I_ERROR_MALFORMED, "%s: tensor '%s' is listed twice in %s", where,
            name, key);
    g_array_append_val (out, t);
  }
  return TRUE;
}

/* The sub-model's Parameters / Results against the graph's tensor lists. */
static gboolean
check_io (Loader *l, M2iSplitPlan *plan, gint p, const char *xml)
{
  SplitPiece *pc = g_ptr_array_index (plan->pieces, p);
  M2iIrModel *m = pc->model;
  for (int out = 0; out < 2; out++) {
    GArray *list = out ? pc->outputs : pc->inputs;
    gint n = out ? m2i_ir_model_get_n_outputs (m) : m2i_ir_model_get_n_inputs (m);
    if (n != (gint) list->len)
      return bad (l, M2I_ERROR_MALFORMED, "graph %d: %s has %d %s, graph_infos.json lists %u",
          p, xml, n, out ? "outputs" : "inputs", list->len);
    for (guint k = 0; k < list->len; k++) {
      const SplitTensor *t = g_ptr_array_index (plan->tensors, g_array_index (list, gint, k));
      gint i = out ? m2i_ir_model_find_output (m, t->name) : m2i_ir_model_find_input (m, t->name);
      if (i < 0)
        return bad (l, M2I_ERROR_MALFORMED, "graph %d: %s has no %s called '%s'", p, xml,
            out ? "output" : "input", t->name);
      const M2iIrIoInfo *io = out ? m2i_ir_model_get_output (m, i) : m2i_ir_model_get_input (m, i);
      if (!m2i_shape_equal (&io->shape, &t->shape)) {
        g_autofree gchar *a = m2i_shape_to_string (&io->shape);
        g_autofree gchar *b = m2i_shape_to_string (&t->shape);
        return bad (l, M2I_ERROR_MALFORMED, "graph %d: %s '%s' has shape %s in %s but %s in "
            "graph_infos.json", p, out ? "output" : "input", t->name, a, xml, b);
      }
      if (io->type != t->type)
        return bad (l, M2I_ERROR_MALFORMED, "graph %d: %s '%s' is %s in %s but %s in "
            "graph_infos.json", p, out ? "output" : "input", t->name,
            m2i_element_type_to_string (io->type), xml, m2i_element_type_to_string (t->type));
    }
  }
  return TRUE;
}

/* A cycle among the graphs (an edge from a tensor's writer to each reader):
 * TRUE with two graphs on it. Iterative depth-first search, O(V + E). */
static gboolean
find_cycle (const M2iSplitPlan *plan, gint *a, gint *b)
{
  gint n = plan->pieces->len;
  GArray **succ = g_new0 (GArray *, MAX (n, 1));
  for (gint p = 0; p < n; p++)
    succ[p] = g_array_new (FALSE, FALSE, sizeof (gint));
  for (guint i = 0; i < plan->tensors->len; i++) {
    const SplitTensor *t = g_ptr_array_index (plan->tensors, i);
    if (t->producer >= 0)
      g_array_append_vals (succ[t->producer], t->consumers->data, t->consumers->len);
  }
  gint *state = g_new0 (gint, MAX (n, 1));      /* 0 new, 1 on the stack, 2 done */
  gint *stack = g_new (gint, MAX (n, 1)), *next = g_new0 (gint, MAX (n, 1));
  gboolean found = FALSE;
  for (gint root = 0; root < n && !found; root++) {
    if (state[root])
      continue;
    gint top = 0;
    stack[top++] = root;
    state[root] = 1;
    while (top && !found) {
      gint p = stack[top - 1];
      if (next[p] == (gint) succ[p]->len) {
        state[p] = 2;
        top--;
        continue;
      }
      gint s = g_array_index (succ[p], gint, next[p]++);
      if (state[s] == 1) {
        *a = s;
        *b = p;
        found = TRUE;
      } else if (state[s] == 0) {
        state[s] = 1;
        stack[top++] = s;
      }
    }
  }
  for (gint p = 0; p < n; p++)
    g_array_free (succ[p], TRUE);
  g_free (succ);
  g_free (state);
  g_free (stack);
  g_free (next);
  return found;
}

/* Producers, consumers, attrs and the graphs' order. */
static gboolean
check_graph (Loader *l, M2iSplitPlan *plan)
{
  gint n_pieces = plan->pieces->len;
  for (guint i = 0; i < plan->tensors->len; i++) {
    SplitTensor *t = g_ptr_array_index (plan->tensors, i);
    t->producer = -1;
  }
  for (gint p = 0; p < n_pieces; p++) {
    SplitPiece *pc = g_ptr_array_index (plan->pieces, p);
    for (guint k = 0; k < pc->outputs->len; k++) {
      SplitTensor *t = g_ptr_array_index (plan->tensors, g_array_index (pc->outputs, gint, k));
      if (t->attr == M2I_SPLIT_TENSOR_INPUT)
        return bad (l, M2I_ERROR_MALFORMED, "graph %d writes tensor '%s', a model input", p,
            t->name);
      if (t->producer >= 0)
        return bad (l, M2I_ERROR_MALFORMED, "tensor '%s' is written by graph %d and graph %d",
            t->name, t->producer, p);
      t->producer = p;
    }
  }
  for (gint p = 0; p < n_pieces; p++) {
    SplitPiece *pc = g_ptr_array_index (plan->pieces, p);
    for (guint k = 0; k < pc->inputs->len; k++) {
      SplitTensor *t = g_ptr_array_index (plan->tensors, g_array_index (pc->inputs, gint, k));
      if (t->attr != M2I_SPLIT_TENSOR_INPUT && t->producer < 0)
        return bad (l, M2I_ERROR_MALFORMED, "graph %d reads tensor '%s', which no graph writes",
            p, t->name);
      if (t->producer == p)
        return bad (l, M2I_ERROR_MALFORMED, "graph %d reads its own output '%s' (a cycle)", p,
            t->name);
    }
  }
  split_plan_link (plan);
  /* a graph reading what a later graph writes: a cycle, or a wrong order */
  gint a = 0, b = 0;
  if (find_cycle (plan, &a, &b))
    return bad (l, M2I_ERROR_MALFORMED, "graphs %d and %d depend on each other (a cycle)",
        MIN (a, b), MAX (a, b));
  for (guint i = 0; i < plan->tensors->len; i++) {
    const SplitTensor *t = g_ptr_array_index (plan->tensors, i);
    for (guint k = 0; t->producer >= 0 && k < t->consumers->len; k++)
      if (g_array_index (t->consumers, gint, k) < t->producer)
        return bad (l, M2I_ERROR_MALFORMED, "graph %d needs the output of graph %d, listed "
            "after it: graphs must be in a topological order",
            g_array_index (t->consumers, gint, k), t->producer);
  }
  for (guint i = 0; i < plan->tensors->len; i++) {
    const SplitTensor *t = g_ptr_array_index (plan->tensors, i);
    if (t->attr != M2I_SPLIT_TENSOR_INPUT && t->producer < 0)
      return bad (l, M2I_ERROR_MALFORMED, "tensor '%s' (%s) is written by no graph", t->name,
          m2i_split_tensor_attr_to_string (t->attr));
    if (t->attr == M2I_SPLIT_TENSOR_INTERMEDIATE && t->consumers->len == 0)
      return bad (l, M2I_ERROR_MALFORMED, "intermediate tensor '%s' is read by no graph "
          "(attr should be \"output\")", t->name);
  }
  return TRUE;
}

static gboolean
parse_graph (Loader *l, M2iSplitPlan *plan, gint p, JsonNode *node)
{
  g_autofree gchar *where = g_strdup_printf ("graph %d", p);
  if (!JSON_NODE_HOLDS_OBJECT (node))
    return bad (l, M2I_ERROR_MALFORMED, "%s must be an object", where);
  JsonObject *g = json_node_get_object (node);
  SplitPiece *pc = split_piece_new ();
  g_ptr_array_add (plan->pieces, pc);
  const char *device = get_string (l, g, "device", where);
  if (!device)
    return FALSE;
  if (!split_device_from_string (device, &pc->device))
    return bad (l, M2I_ERROR_UNSUPPORTED, "%s: unknown device \"%s\" (known: CPU, M2I)", where,
        device);
  if (json_object_has_member (g, "engine")) {
    const char *engine = get_string (l, g, "engine", where);
    if (!engine)
      return FALSE;
    if (!split_engine_from_string (engine, &pc->engine))
      return bad (l, M2I_ERROR_UNSUPPORTED, "%s: unknown engine \"%s\" (cpu, m2i, npu-fp16, "
          "npu-int8)", where, engine);
    if ((pc->engine == M2I_SPLIT_ENGINE_CPU) != (pc->device == M2I_SPLIT_DEVICE_CPU))
      return bad (l, M2I_ERROR_MALFORMED, "%s: engine %s does not run on device %s", where,
          engine, device);
  } else {
    pc->engine = pc->device == M2I_SPLIT_DEVICE_CPU ? M2I_SPLIT_ENGINE_CPU : -1;
  }
  if (!tensor_list (l, plan, g, "inputs", where, pc->inputs) ||
      !tensor_list (l, plan, g, "outputs", where, pc->outputs))
    return FALSE;
  if (!pc->outputs->len)
    return bad (l, M2I_ERROR_MALFORMED, "%s writes no tensor", where);
  JsonObject *info = get_object (l, g, "model_info", where);
  const char *xml = info ? get_string (l, info, "xml", where) : NULL;
  const char *bin = xml ? get_string (l, info, "bin", where) : NULL;
  if (!bin)
    return FALSE;
  if (!member_name_ok (l, xml, where) || !member_name_ok (l, bin, where))
    return FALSE;
  GError *e = NULL;
  GBytes *text = split_folder_read (l->folder, xml, MAX_IR_XML_BYTES, &e);
  GBytes *weights = text ? split_folder_map (l->folder, bin, &e) : NULL;
  if (weights) {
    g_autofree gchar *origin = g_build_filename (l->folder->path, xml, NULL);
    gsize len;
    const char *data = g_bytes_get_data (text, &len);
    pc->model = m2i_ir_model_load_from_memory (data, len, weights, origin, &e);
  }
  g_clear_pointer (&text, g_bytes_unref);
  g_clear_pointer (&weights, g_bytes_unref);
  if (!pc->model) {
    bad (l, e->code, "%s: %s", where, e->message);
    g_error_free (e);
    return FALSE;
  }
  return TRUE;
}

/* The engine of a device graph written without one: the head, the int8
 * engine for a quantized sub-model, else fp16. */
static gboolean
infer_engine (Loader *l, M2iSplitPlan *plan, gint p)
{
  SplitPiece *pc = g_ptr_array_index (plan->pieces, p);
  if ((gint) pc->engine >= 0)
    return TRUE;
  static const M2iSplitEngine tries[] = { M2I_SPLIT_ENGINE_M2I, M2I_SPLIT_ENGINE_NPU_INT8,
    M2I_SPLIT_ENGINE_NPU_FP16 };
  GError *first = NULL;
  for (guint k = 0; k < G_N_ELEMENTS (tries); k++) {
    pc->engine = tries[k];
    GError *e = NULL;
    if (split_plan_check_piece (plan, p, &e)) {
      g_clear_error (&first);
      return TRUE;
    }
    if (tries[k] == M2I_SPLIT_ENGINE_NPU_FP16 && !first)
      first = e;
    else
      g_error_free (e);
  }
  bad (l, M2I_ERROR_UNSUPPORTED, "%s", first->message);
  g_error_free (first);
  return FALSE;
}

/* The deepest nesting of arrays and objects in JSON @text: FALSE (with the
 * line) as soon as it passes @max. Strings are skipped, escapes included. */
static gboolean
json_depth_ok (const char *text, gsize len, gint max, gint *line)
{
  gint depth = 0;
  gboolean in_string = FALSE;
  *line = 1;
  for (gsize i = 0; i < len; i++) {
    char c = text[i];
    if (c == '\n')
      (*line)++;
    if (in_string) {
      if (c == '\\')
        i++;
      else if (c == '"')
        in_string = FALSE;
    } else if (c == '"')
      in_string = TRUE;
    else if ((c == '[' || c == '{') && ++depth > max)
      return FALSE;
    else if (c == ']' || c == '}')
      depth--;
  }
  return TRUE;
}

M2iSplitPlan *
m2i_split_plan_load (const char *dir, GError **error)
{
  g_autofree gchar *path = g_build_filename (dir, GRAPH_INFOS, NULL);
  SplitFolder folder = { -1, NULL };
  Loader l = { path, &folder, error };
  if (!split_folder_open (&folder, dir, error))
    return NULL;
  struct stat st;
  if (fstatat (folder.fd, GRAPH_INFOS, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_IO, "%s: no " GRAPH_INFOS " in the folder (write "
        "one with m2i-split split)", dir);
    split_folder_close (&folder);
    return NULL;
  }
  JsonParser *parser = json_parser_new ();
  DupWatch watch = { g_hash_table_new_full (NULL, NULL, NULL, (GDestroyNotify) g_hash_table_unref) };
  g_signal_connect (parser, "object-member", G_CALLBACK (on_member), &watch);
  GError *e = NULL;
  M2iSplitPlan *plan = NULL;
  GBytes *json = split_folder_read (&folder, GRAPH_INFOS, MAX_JSON_BYTES, &e);
  gsize json_len = 0;
  const char *json_text = json ? g_bytes_get_data (json, &json_len) : NULL;
  gint line = 0;
  if (!json) {
    g_propagate_error (error, e);
    goto out;
  }
  if (!json_depth_ok (json_text, json_len, MAX_JSON_DEPTH, &line)) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_LIMIT, "%s:%d: arrays and objects nest more than "
        "%d levels deep (graph_infos.json needs 4): refused before parsing", path, line,
        MAX_JSON_DEPTH);
    goto out;
  }
  if (!json_parser_load_from_data (parser, json_text ? json_text : "", json_len, &e)) {
    /* json-glib names the text "<data>": the file's name replaces it */
    gboolean at = g_str_has_prefix (e->message, "<data>:");
    g_set_error (error, M2I_ERROR, M2I_ERROR_MALFORMED, "%s:%s%s", path, at ? "" : " ",
        at ? e->message + 7 : e->message);
    g_error_free (e);
    goto out;
  }
  if (watch.dup) {
    bad (&l, M2I_ERROR_MALFORMED, "\"%s\" is listed twice in one object (each tensor and "
        "field once)", watch.dup);
    goto out;
  }
  JsonNode *root = json_parser_get_root (parser);
  if (!root || !JSON_NODE_HOLDS_OBJECT (root)) {
    bad (&l, M2I_ERROR_MALFORMED, "the top level must be an object");
    goto out;
  }
  JsonObject *top = json_node_get_object (root);
  plan = split_plan_alloc ();
  gint64 graph_num = 0;
  const char *platform, *layout;
  JsonNode *dyn = json_object_get_member (top, "dynamic");
  JsonObject *tensors;
  JsonArray *graphs;
  gboolean ok = get_int (&l, top, "graph_num", "top level", &graph_num) &&
      (platform = get_string (&l, top, "platform", "top level")) &&
      (layout = get_string (&l, top, "layout", "top level")) &&
      (graphs = get_array (&l, top, "graphs", "top level")) &&
      (tensors = get_object (&l, top, "tensors", "top level"));
  if (ok && strcmp (platform, "openvino"))
    ok = bad (&l, M2I_ERROR_UNSUPPORTED, "platform \"%s\": only \"openvino\" (IR) graphs run "
        "here", platform);
  if (ok && (!dyn || !JSON_NODE_HOLDS_VALUE (dyn) ||
          json_node_get_value_type (dyn) != G_TYPE_BOOLEAN))
    ok = bad (&l, M2I_ERROR_MALFORMED, "top level: \"dynamic\" must be true or false");
  if (ok && json_node_get_boolean (dyn))
    ok = bad (&l, M2I_ERROR_UNSUPPORTED, "dynamic shapes are not supported");
  if (ok && strcmp (layout, "NCHW"))
    ok = bad (&l, M2I_ERROR_UNSUPPORTED, "layout \"%s\": only NCHW", layout);
  if (ok && json_object_has_member (top, "m2i_profile")) {
    const char *prof = get_string (&l, top, "m2i_profile", "top level");
    ok = prof != NULL;
    if (ok && !m2i_profile_from_string (prof, &plan->m2i_profile))
      ok = bad (&l, M2I_ERROR_MALFORMED, "m2i_profile \"%s\" is not default or extended", prof);
  }
  if (ok && (graph_num < 1 || graph_num != json_array_get_length (graphs)))
    ok = bad (&l, M2I_ERROR_MALFORMED, "graph_num is %" G_GINT64_FORMAT " but \"graphs\" lists %u",
        graph_num, json_array_get_length (graphs));
  if (ok) {
    GList *names = json_object_get_members (tensors);
    for (GList *it = names; it && ok; it = it->next)
      ok = parse_tensor (&l, plan, it->data, json_object_get_member (tensors, it->data));
    g_list_free (names);
  }
  for (gint p = 0; ok && p < graph_num; p++)
    ok = parse_graph (&l, plan, p, json_array_get_element (graphs, p));
  ok = ok && check_graph (&l, plan);
  for (gint p = 0; ok && p < graph_num; p++) {
    const SplitPiece *pc = g_ptr_array_index (plan->pieces, p);
    g_autofree gchar *xml = g_path_get_basename (json_object_get_string_member (
            json_object_get_object_member (json_array_get_object_element (graphs, p), "model_info"),
            "xml"));
    ok = check_io (&l, plan, p, xml) && infer_engine (&l, plan, p);
    GError *ce = NULL;
    if (ok && pc->device != M2I_SPLIT_DEVICE_CPU && !split_plan_check_piece (plan, p, &ce)) {
      ok = bad (&l, ce->code, "%s", ce->message);
      g_error_free (ce);
    }
  }
  if (ok) {
    GError *ce = NULL;
    if (!split_plan_cost_pieces (plan, &ce)) {
      ok = bad (&l, ce->code, "%s", ce->message);
      g_error_free (ce);
    }
  }
  if (!ok)
    g_clear_pointer (&plan, m2i_split_plan_unref);
out:
  if (json)
    g_bytes_unref (json);
  split_folder_close (&folder);
  g_hash_table_unref (watch.seen);
  g_free (watch.dup);
  g_object_unref (parser);
  return plan;
}
