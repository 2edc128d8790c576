/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ir-serialize.c — writes a model, or a sub-graph of it, as IR v11 text and
 * weights, in the layout OpenVINO's serializer uses (layers with <data>,
 * <rt_info>, <input>, <output>; edges by port id; Consts in the .bin). */
#include "ir-private.h"
#include <base/m2i-error.h>

#include <stdlib.h>
#include <string.h>

typedef struct {
  const M2iIrModel *model;
  const gboolean *selected;      /* per node index */
  GString *xml;
  GByteArray *bin;
  gint64 next_id;
  /* boundary: one Parameter per (producer, port) read from outside */
  GHashTable *params;            /* "node:port" → gint64* new layer id */
  /* "node:port" outputs that leave through a Result; NULL: every output
   * of a selected layer other than a Const read outside the selection */
  GHashTable *leaving;
  gboolean with_rt_info;         /* write the model-level rt_info */
} Writer;

static void
indent (GString *s, gint depth)
{
  for (gint i = 0; i < depth; i++)
    g_string_append_c (s, '\t');
}

static void
attr (GString *s, const char *key, const char *value)
{
  g_autofree gchar *k = g_markup_escape_text (key, -1);
  g_autofree gchar *v = g_markup_escape_text (value, -1);
  g_string_append_printf (s, " %s=\"%s\"", k, v);
}

static gchar *
dims_text (const M2iShape *shape, const char *sep)
{
  GString *s = g_string_new (NULL);
  for (gint i = 0; i < shape->rank; i++)
    g_string_append_printf (s, "%s%" G_GINT64_FORMAT, i ? sep : "", shape->dims[i]);
  return g_string_free (s, FALSE);
}

static gint
cmp_str (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

/* Keys of @table sorted, so the output does not depend on hashing. */
static GPtrArray *
sorted_keys (GHashTable *table)
{
  GPtrArray *keys = g_ptr_array_new ();
  if (table) {
    GHashTableIter it;
    gpointer k;
    g_hash_table_iter_init (&it, table);
    while (g_hash_table_iter_next (&it, &k, NULL))
      g_ptr_array_add (keys, k);
  }
  g_ptr_array_sort (keys, cmp_str);
  return keys;
}

static void
write_rt_info (GString *s, GHashTable *rt, gint depth)
{
  if (!rt || !g_hash_table_size (rt))
    return;
  indent (s, depth);
  g_string_append (s, "<rt_info>\n");
  GPtrArray *keys = sorted_keys (rt);
  for (guint i = 0; i < keys->len; i++) {
    indent (s, depth + 1);
    g_string_append (s, "<attribute");
    attr (s, "name", keys->pdata[i]);
    attr (s, "version", "0");
    attr (s, "value", g_hash_table_lookup (rt, keys->pdata[i]));
    g_string_append (s, "/>\n");
  }
  g_ptr_array_free (keys, TRUE);
  indent (s, depth);
  g_string_append (s, "</rt_info>\n");
}

static void
write_port (GString *s, gint64 id, M2iElementType type, const M2iShape *shape,
    const char *names, GHashTable *rt, gint depth)
{
  indent (s, depth);
  g_string_append_printf (s, "<port id=\"%" G_GINT64_FORMAT "\"", id);
  if (type != M2I_ET_UNDEFINED) {
    g_autofree gchar *up = g_ascii_strup (m2i_element_type_to_string (type), -1);
    /* OpenVINO's spelling: FP32, FP16, BF16, FP64, I64, U8, BOOL */
    const char *prec = type == M2I_ET_F32 ? "FP32" : type == M2I_ET_F16 ? "FP16" :
        type == M2I_ET_F64 ? "FP64" : type == M2I_ET_BOOLEAN ? "BOOL" : up;
    attr (s, "precision", prec);
  }
  if (names)
    attr (s, "names", names);
  g_string_append (s, ">\n");
  for (gint i = 0; i < shape->rank; i++) {
    indent (s, depth + 1);
    g_string_append_printf (s, "<dim>%" G_GINT64_FORMAT "</dim>\n", shape->dims[i]);
  }
  write_rt_info (s, rt, depth + 1);
  indent (s, depth);
  g_string_append (s, "</port>\n");
}

static void
layer_open (GString *s, gint64 id, const char *name, const char *type, const char *version)
{
  indent (s, 2);
  g_string_append_printf (s, "<layer id=\"%" G_GINT64_FORMAT "\"", id);
  attr (s, "name", name);
  attr (s, "type", type);
  attr (s, "version", version);
  g_string_append (s, ">\n");
}

/* The bytes of a Const as the file stored them (f16 stays f16). */
static gboolean
const_bytes (const Writer *w, const M2iIrNode *n, gconstpointer *data, gsize *size,
    GError **error)
{
  gint64 offset = 0, len = 0;
  if (!m2i_ir_node_attr_int (n, "offset", 0, &offset, error) ||
      !m2i_ir_node_attr_int (n, "size", 0, &len, error))
    return FALSE;
  gsize bin_len = w->model->weights ? g_bytes_get_size (w->model->weights) : 0;
  if (offset < 0 || len < 0 || (guint64) offset + (guint64) len > bin_len) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, n, "no weights to write");
    return FALSE;
  }
  *data = (const guint8 *) g_bytes_get_data (w->model->weights, NULL) + offset;
  *size = len;
  return TRUE;
}

static gboolean
write_layer (Writer *w, const M2iIrNode *n, GError **error)
{
  GString *s = w->xml;
  gboolean is_const = !strcmp (n->type, "Const");
  layer_open (s, n->id, n->name, n->type, n->version);
  GPtrArray *keys = sorted_keys (n->attrs);
  gboolean any = FALSE;
  for (guint i = 0; i < keys->len; i++) {
    const char *k = keys->pdata[i];
    /* a Const's offsets are rewritten */
    if (is_const && (!strcmp (k, "offset") || !strcmp (k, "size")))
      continue;
    if (!any) {
      indent (s, 3);
      g_string_append (s, "<data");
      any = TRUE;
    }
    attr (s, k, g_hash_table_lookup (n->attrs, k));
  }
  g_ptr_array_free (keys, TRUE);
  if (is_const) {
    gconstpointer data;
    gsize size;
    if (!const_bytes (w, n, &data, &size, error))
      return FALSE;
    while (w->bin->len % 8)      /* aligned constants read in place */
      g_byte_array_append (w->bin, (const guint8 *) "", 1);
    if (!any) {
      indent (s, 3);
      g_string_append (s, "<data");
      any = TRUE;
    }
    g_string_append_printf (s, " offset=\"%u\" size=\"%" G_GSIZE_FORMAT "\"", w->bin->len, size);
    g_byte_array_append (w->bin, data, size);
  }
  if (any)
    g_string_append (s, "/>\n");
  write_rt_info (s, n->rt_info, 3);
  if (n->n_inputs) {
    indent (s, 3);
    g_string_append (s, "<input>\n");
    for (gint i = 0; i < n->n_inputs; i++)
      write_port (s, n->inputs[i].id, n->inputs[i].type, &n->inputs[i].shape, n->inputs[i].names,
          n->inputs[i].rt_info, 4);
    indent (s, 3);
    g_string_append (s, "</input>\n");
  }
  if (n->n_outputs) {
    indent (s, 3);
    g_string_append (s, "<output>\n");
    for (gint i = 0; i < n->n_outputs; i++)
      write_port (s, n->outputs[i].id, n->outputs[i].type, &n->outputs[i].shape,
          n->outputs[i].names, n->outputs[i].rt_info, 4);
    indent (s, 3);
    g_string_append (s, "</output>\n");
  }
  indent (s, 2);
  g_string_append (s, "</layer>\n");
  return TRUE;
}

/* The name a boundary tensor gets: its first tensor name, else the layer's
 * name (".N" for output N > 0), as outputs are named. */
static gchar *
tensor_name (const M2iIrNode *n, gint port)
{
  const char *names = n->outputs[port].names;
  if (names && *names) {
    const char *comma = strchr (names, ',');
    return g_strstrip (comma ? g_strndup (names, comma - names) : g_strdup (names));
  }
  return port ? g_strdup_printf ("%s.%d", n->name, port) : g_strdup (n->name);
}

static gint64
boundary_parameter (Writer *w, const M2iIrNode *src, gint port, GString *edges)
{
  g_autofree gchar *key = g_strdup_printf ("%d:%d", src->index, port);
  gint64 *id = g_hash_table_lookup (w->params, key);
  if (id)
    return *id;
  id = g_new (gint64, 1);
  *id = w->next_id++;
  g_hash_table_insert (w->params, g_strdup (key), id);
  const M2iIrPort *p = &src->outputs[port];
  g_autofree gchar *name = tensor_name (src, port);
  g_autofree gchar *shape = dims_text (&p->shape, ",");
  /* a model input is found by its Parameter's name in the sub-model too
   * (as one of the tensor's names) */
  g_autofree gchar *names = g_strdup (p->names ? p->names : name);
  if (!strcmp (src->type, "Parameter") && strcmp (src->name, name)) {
    g_autofree gchar *old = names;
    names = g_strdup_printf ("%s,%s", old, src->name);
  }
  GString *s = w->xml;
  layer_open (s, *id, name, "Parameter", "opset1");
  indent (s, 3);
  g_string_append (s, "<data");
  attr (s, "shape", shape);
  attr (s, "element_type", m2i_element_type_to_string (p->type));
  g_string_append (s, "/>\n");
  indent (s, 3);
  g_string_append (s, "<output>\n");
  write_port (s, 0, p->type, &p->shape, names, NULL, 4);
  indent (s, 3);
  g_string_append (s, "</output>\n");
  indent (s, 2);
  g_string_append (s, "</layer>\n");
  return *id;
}

static void
boundary_result (Writer *w, const M2iIrNode *src, gint port, GString *edges)
{
  const M2iIrPort *p = &src->outputs[port];
  gint64 id = w->next_id++;
  g_autofree gchar *tname = tensor_name (src, port);
  g_autofree gchar *name = g_strdup_printf ("%s/sink_port_%d", tname, port);
  GString *s = w->xml;
  layer_open (s, id, name, "Result", "opset1");
  indent (s, 3);
  g_string_append (s, "<input>\n");
  write_port (s, 0, p->type, &p->shape, NULL, NULL, 4);
  indent (s, 3);
  g_string_append (s, "</input>\n");
  indent (s, 2);
  g_string_append (s, "</layer>\n");
  indent (edges, 2);
  g_string_append_printf (edges, "<edge from-layer=\"%" G_GINT64_FORMAT "\" from-port=\"%"
      G_GINT64_FORMAT "\" to-layer=\"%" G_GINT64_FORMAT "\" to-port=\"0\"/>\n", src->id, p->id, id);
}

static gboolean
write_model (Writer *w, const char *name, GError **error)
{
  const M2iIrModel *m = w->model;
  GString *edges = g_string_new (NULL);
  g_string_append (w->xml, "<?xml version=\"1.0\"?>\n<net");
  attr (w->xml, "name", name);
  g_string_append (w->xml, " version=\"11\">\n\t<layers>\n");
  for (guint i = 0; i < m->nodes->len; i++) {
    const M2iIrNode *n = g_ptr_array_index (m->nodes, i);
    w->next_id = MAX (w->next_id, n->id + 1);
  }
  gboolean ok = TRUE;
  /* the XML order of the model: it keeps the order of inputs and outputs */
  for (guint t = 0; t < m->nodes->len && ok; t++) {
    const M2iIrNode *n = g_ptr_array_index (m->nodes, t);
    if (!w->selected[n->index])
      continue;
    for (gint i = 0; i < n->n_inputs; i++) {
      const M2iIrSource *src = &n->sources[i];
      gint64 from = src->node->id, from_port = src->node->outputs[src->port].id;
      if (!w->selected[src->node->index]) {
        from = boundary_parameter (w, src->node, src->port, edges);
        from_port = 0;
      }
      indent (edges, 2);
      g_string_append_printf (edges, "<edge from-layer=\"%" G_GINT64_FORMAT "\" from-port=\"%"
          G_GINT64_FORMAT "\" to-layer=\"%" G_GINT64_FORMAT "\" to-port=\"%" G_GINT64_FORMAT
          "\"/>\n", from, from_port, n->id, n->inputs[i].id);
    }
    ok = write_layer (w, n, error);
    /* outputs read outside the selection leave through a Result; a Const
     * does not: each side that reads it has its own copy */
    gboolean is_const = !strcmp (n->type, "Const");
    for (gint p = 0; p < n->n_outputs && ok; p++) {
      gboolean outside = FALSE;
      if (w->leaving) {
        g_autofree gchar *key = g_strdup_printf ("%d:%d", n->index, p);
        outside = g_hash_table_contains (w->leaving, key);
      }
      for (guint e = 0; e < m->edges->len && !outside && !w->leaving && !is_const; e++) {
        const M2iIrEdge *edge = &g_array_index (m->edges, M2iIrEdge, e);
        outside = edge->from_node == n->index && edge->from_port == p &&
            !w->selected[edge->to_node];
      }
      if (outside)
        boundary_result (w, n, p, edges);
    }
  }
  g_string_append (w->xml, "\t</layers>\n\t<edges>\n");
  g_string_append (w->xml, edges->str);
  g_string_append (w->xml, "\t</edges>\n");
  if (w->with_rt_info)
    ir_rt_info_write (m->rt_info, w->xml);
  g_string_append (w->xml, "</net>\n");
  g_string_free (edges, TRUE);
  return ok;
}

static gboolean
serialize (const M2iIrModel *model, const gboolean *selected, GHashTable *leaving,
    gboolean with_rt_info, const char *name, GString *xml, GByteArray *bin, GError **error)
{
  Writer w = { model, selected, xml, bin, 0,
    g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free), leaving, with_rt_info };
  gboolean ok = write_model (&w, name, error);
  g_hash_table_unref (w.params);
  return ok;
}

gboolean
m2i_ir_model_serialize (const M2iIrModel *model, GString *xml, GByteArray *bin, GError **error)
{
  g_autofree gboolean *all = g_new (gboolean, MAX (model->nodes->len, 1));
  for (guint i = 0; i < model->nodes->len; i++)
    all[i] = TRUE;
  return serialize (model, all, NULL, TRUE, m2i_ir_model_get_name (model), xml, bin, error);
}

gboolean
m2i_ir_model_save (const M2iIrModel *model, const char *xml_path, const char *bin_path,
    GError **error)
{
  GString *xml = g_string_new (NULL);
  GByteArray *bin = g_byte_array_new ();
  GError *e = NULL;
  gboolean ok = m2i_ir_model_serialize (model, xml, bin, error) &&
      g_file_set_contents (xml_path, xml->str, xml->len, &e) &&
      g_file_set_contents (bin_path, (const gchar *) bin->data, bin->len, &e);
  if (e) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_IO, "cannot write the model: %s", e->message);
    g_error_free (e);
  }
  g_string_free (xml, TRUE);
  g_byte_array_unref (bin);
  return ok;
}

static M2iIrModel *
extract (const M2iIrModel *model, const gint *nodes, gint n_nodes, GHashTable *leaving,
    const char *name, GError **error)
{
  gint n = model->nodes->len;
  g_autofree gboolean *selected = g_new0 (gboolean, MAX (n, 1));
  for (gint i = 0; i < n_nodes; i++) {
    if (nodes[i] < 0 || nodes[i] >= n) {
      g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
          "node index %d is outside the model's %d layers", nodes[i], n);
      return NULL;
    }
    selected[nodes[i]] = TRUE;
  }
  /* constants travel with the layers that read them */
  for (gint i = 0; i < n; i++) {
    const M2iIrNode *node = g_ptr_array_index (model->nodes, i);
    for (gint p = 0; selected[i] && p < node->n_inputs; p++)
      if (!strcmp (node->sources[p].node->type, "Const"))
        selected[node->sources[p].node->index] = TRUE;
  }
  GString *xml = g_string_new (NULL);
  GByteArray *bin = g_byte_array_new ();
  const char *sub_name = name ? name : m2i_ir_model_get_name (model);
  M2iIrModel *sub = NULL;
  /* the model-level rt_info describes the whole model: not copied */
  if (serialize (model, selected, leaving, FALSE, sub_name, xml, bin, error)) {
    GBytes *weights = g_byte_array_free_to_bytes (bin);
    bin = NULL;
    g_autofree gchar *origin = g_strdup_printf ("%s (extract)", model->xml_path);
    sub = m2i_ir_model_load_from_memory (xml->str, xml->len, weights, origin, error);
    g_bytes_unref (weights);
  }
  if (bin)
    g_byte_array_unref (bin);
  g_string_free (xml, TRUE);
  return sub;
}

M2iIrModel *
m2i_ir_model_extract (const M2iIrModel *model, const gint *nodes, gint n_nodes,
    const gint *outputs, gint n_outputs, const char *name, GError **error)
{
  if (!outputs)
    return extract (model, nodes, n_nodes, NULL, name, error);
  GHashTable *leaving = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  gboolean ok = TRUE;
  for (gint i = 0; i < n_outputs && ok; i++) {
    const M2iIrNode *n = m2i_ir_model_get_node (model, outputs[2 * i]);
    gint port = outputs[2 * i + 1];
    gboolean listed = FALSE;
    for (gint k = 0; n && k < n_nodes && !listed; k++)
      listed = nodes[k] == outputs[2 * i];
    if (!n || port < 0 || port >= n->n_outputs || !listed) {
      g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
          "output %d (node %d, port %d) is no output of a selected layer", i,
          outputs[2 * i], port);
      ok = FALSE;
    } else {
      g_hash_table_add (leaving, g_strdup_printf ("%d:%d", outputs[2 * i], port));
    }
  }
  M2iIrModel *sub = ok ? extract (model, nodes, n_nodes, leaving, name, error) : NULL;
  g_hash_table_unref (leaving);
  return sub;
}
