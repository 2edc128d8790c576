/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ir-model.c — lifetime of a loaded model and the accessors that walk it. */
#include "ir-private.h"
#include <base/m2i-error.h>

#include <string.h>

M2iIrModel *
m2i_ir_model_ref (M2iIrModel *model)
{
  g_return_val_if_fail (model != NULL, NULL);
  g_atomic_int_inc (&model->ref_count);
  return model;
}

void
m2i_ir_model_unref (M2iIrModel *m)
{
  if (!m || !g_atomic_int_dec_and_test (&m->ref_count))
    return;
  g_ptr_array_free (m->parameters, TRUE);
  g_ptr_array_free (m->results, TRUE);
  g_hash_table_unref (m->by_id);
  g_ptr_array_free (m->nodes, TRUE);
  g_array_free (m->edges, TRUE);
  g_free (m->topo);
  g_free (m->input_info);
  g_free (m->output_info);
  g_ptr_array_free (m->names, TRUE);
  ir_rt_info_unref (m->rt_info);
  if (m->weights)
    g_bytes_unref (m->weights);
  g_free (m->name);
  g_free (m->xml_path);
  g_free (m->bin_path);
  g_free (m);
}

const char *
m2i_ir_model_get_name (const M2iIrModel *model)
{
  return model->name ? model->name : "";
}

gint
m2i_ir_model_get_ir_version (const M2iIrModel *model)
{
  return model->ir_version;
}

const char *
m2i_ir_model_get_rt_info (const M2iIrModel *model, const char *key)
{
  return ir_rt_info_lookup (model->rt_info, key);
}

void
ir_model_share_rt_info (M2iIrModel *dst, const M2iIrModel *src)
{
  IrRtInfo *info = src->rt_info ? ir_rt_info_ref (src->rt_info) : NULL;
  ir_rt_info_unref (dst->rt_info);
  dst->rt_info = info;
}

gint
m2i_ir_model_get_n_inputs (const M2iIrModel *model)
{
  return model->parameters->len;
}

gint
m2i_ir_model_get_n_outputs (const M2iIrModel *model)
{
  return model->results->len;
}

const M2iIrIoInfo *
m2i_ir_model_get_input (const M2iIrModel *model, gint i)
{
  return i >= 0 && (guint) i < model->parameters->len ? &model->input_info[i] : NULL;
}

const M2iIrIoInfo *
m2i_ir_model_get_output (const M2iIrModel *model, gint i)
{
  return i >= 0 && (guint) i < model->results->len ? &model->output_info[i] : NULL;
}

/* TRUE when @name is one of the comma-separated @names. */
static gboolean
in_name_list (const char *names, const char *name)
{
  if (!names)
    return FALSE;
  g_auto (GStrv) list = g_strsplit (names, ",", -1);
  for (gchar **it = list; *it; it++)
    if (!strcmp (g_strstrip (*it), name))
      return TRUE;
  return FALSE;
}

gint
m2i_ir_model_find_input (const M2iIrModel *model, const char *name)
{
  for (guint i = 0; i < model->parameters->len; i++) {
    const M2iIrNode *n = model->input_info[i].node;
    if (!strcmp (n->name, name) || in_name_list (n->outputs[0].names, name))
      return i;
  }
  return -1;
}

gboolean
m2i_ir_model_reshape (M2iIrModel *model, const char *name, const M2iShape *shape,
    GError **error)
{
  g_return_val_if_fail (model != NULL && name != NULL && shape != NULL, FALSE);
  gint i = m2i_ir_model_find_input (model, name);
  if (i < 0) {
    GString *names = g_string_new (NULL);
    for (guint k = 0; k < model->parameters->len; k++)
      g_string_append_printf (names, "%s'%s'", k ? ", " : "", model->input_info[k].name);
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "model '%s' has no input '%s' (its inputs: %s)", model->name ? model->name : "",
        name, names->str);
    g_string_free (names, TRUE);
    return FALSE;
  }
  M2iIrIoInfo *info = &model->input_info[i];
  const M2iShape *declared = &info->node->outputs[0].shape;
  if (!m2i_shape_is_static (shape) || m2i_shape_numel (shape) < 0 ||
      !ir_shape_fits (declared, shape)) {
    g_autofree gchar *s1 = m2i_shape_to_string (shape);
    g_autofree gchar *s2 = m2i_shape_to_string (declared);
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "input '%s' cannot take the shape %s: the model declares %s (a shape must have "
        "its rank and its static dims; only the dynamic ones, ?, are free)", info->name, s1, s2);
    return FALSE;
  }
  info->shape = *shape;
  return TRUE;
}

gint
m2i_ir_model_find_output (const M2iIrModel *model, const char *name)
{
  for (guint i = 0; i < model->results->len; i++) {
    const M2iIrNode *n = model->output_info[i].node;
    const M2iIrSource *s = &n->sources[0];
    if (!strcmp (model->output_info[i].name, name) || !strcmp (n->name, name) ||
        in_name_list (s->node->outputs[s->port].names, name))
      return i;
  }
  return -1;
}

gint
m2i_ir_model_get_n_nodes (const M2iIrModel *model)
{
  return model->nodes->len;
}

M2iIrNode *
m2i_ir_model_get_node (const M2iIrModel *model, gint i)
{
  return i >= 0 && (guint) i < model->nodes->len ? g_ptr_array_index (model->nodes, i) : NULL;
}

M2iIrNode *
m2i_ir_model_find_node (const M2iIrModel *model, gint64 id)
{
  return g_hash_table_lookup (model->by_id, &id);
}

const gint *
m2i_ir_model_get_topological_order (const M2iIrModel *model, gint *n_out)
{
  if (n_out)
    *n_out = model->nodes->len;
  return model->topo;
}

gint
m2i_ir_model_get_n_edges (const M2iIrModel *model)
{
  return model->edges->len;
}

gboolean
m2i_ir_model_get_edge (const M2iIrModel *model, gint i, gint *from_node,
    gint *from_port, gint *to_node, gint *to_port)
{
  if (i < 0 || (guint) i >= model->edges->len)
    return FALSE;
  const M2iIrEdge *e = &g_array_index (model->edges, M2iIrEdge, i);
  if (from_node)
    *from_node = e->from_node;
  if (from_port)
    *from_port = e->from_port;
  if (to_node)
    *to_node = e->to_node;
  if (to_port)
    *to_port = e->to_port;
  return TRUE;
}

gint m2i_ir_node_get_index (const M2iIrNode *n) { return n->index; }
gint m2i_ir_node_get_n_inputs (const M2iIrNode *n) { return n->n_inputs; }
gint m2i_ir_node_get_n_outputs (const M2iIrNode *n) { return n->n_outputs; }

const M2iShape *
m2i_ir_node_get_input_shape (const M2iIrNode *n, gint i)
{
  return i >= 0 && i < n->n_inputs ? &n->inputs[i].shape : NULL;
}

const M2iShape *
m2i_ir_node_get_output_shape (const M2iIrNode *n, gint i)
{
  return i >= 0 && i < n->n_outputs ? &n->outputs[i].shape : NULL;
}

M2iElementType
m2i_ir_node_get_input_type (const M2iIrNode *n, gint i)
{
  return i >= 0 && i < n->n_inputs ? n->inputs[i].type : M2I_ET_UNDEFINED;
}

M2iElementType
m2i_ir_node_get_output_type (const M2iIrNode *n, gint i)
{
  return i >= 0 && i < n->n_outputs ? n->outputs[i].type : M2I_ET_UNDEFINED;
}

const char *
m2i_ir_node_get_output_names (const M2iIrNode *n, gint i)
{
  return i >= 0 && i < n->n_outputs ? n->outputs[i].names : NULL;
}

gboolean
m2i_ir_node_get_input_source (const M2iIrNode *n, gint i, M2iIrNode **src, gint *src_port)
{
  if (i < 0 || i >= n->n_inputs || !n->sources || !n->sources[i].node)
    return FALSE;
  if (src)
    *src = n->sources[i].node;
  if (src_port)
    *src_port = n->sources[i].port;
  return TRUE;
}

const char *
m2i_ir_node_get_rt_info (const M2iIrNode *n, const char *name)
{
  return n->rt_info ? g_hash_table_lookup (n->rt_info, name) : NULL;
}

const M2iTensor *
m2i_ir_node_get_const (const M2iIrNode *n)
{
  return strcmp (n->type, "Const") || n->const_value.type == M2I_ET_UNDEFINED ?
      NULL : &n->const_value;
}
