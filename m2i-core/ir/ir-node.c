/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "ir-private.h"
#include <base/m2i-error.h>

#include <errno.h>
#include <stdarg.h>
#include <string.h>

M2iIrNode *
m2i_ir_node_new (gint64 id, const char *name, const char *type, const char *version)
{
  M2iIrNode *n = g_new0 (M2iIrNode, 1);
  n->id = id;
  n->name = g_strdup (name ? name : "");
  n->type = g_strdup (type ? type : "");
  n->version = g_strdup (version ? version : "");
  n->attrs = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  n->index = -1;
  return n;
}

static void
ports_free (M2iIrPort *ports, gint n)
{
  for (gint i = 0; i < n; i++) {
    g_free (ports[i].names);
    if (ports[i].rt_info)
      g_hash_table_unref (ports[i].rt_info);
  }
  g_free (ports);
}

/* Frees the ports, sources and rt_info of @n. */
static void
clear_graph_fields (M2iIrNode *n)
{
  ports_free (n->inputs, n->n_inputs);
  ports_free (n->outputs, n->n_outputs);
  n->inputs = n->outputs = NULL;
  n->n_inputs = n->n_outputs = 0;
  g_clear_pointer (&n->sources, g_free);
  g_clear_pointer (&n->rt_info, g_hash_table_unref);
  g_clear_pointer (&n->const_owned, g_free);
  memset (&n->const_value, 0, sizeof n->const_value);
}

void
m2i_ir_node_free (M2iIrNode *n)
{
  if (!n)
    return;
  g_free (n->name);
  g_free (n->type);
  g_free (n->version);
  g_hash_table_unref (n->attrs);
  clear_graph_fields (n);
  g_free (n);
}

void
m2i_ir_node_set_attr (M2iIrNode *n, const char *key, const char *value)
{
  g_hash_table_insert (n->attrs, g_strdup (key), g_strdup (value ? value : ""));
}

gint64 m2i_ir_node_get_id (const M2iIrNode *n) { return n->id; }
const char *m2i_ir_node_get_name (const M2iIrNode *n) { return n->name; }
const char *m2i_ir_node_get_type (const M2iIrNode *n) { return n->type; }
const char *m2i_ir_node_get_version (const M2iIrNode *n) { return n->version; }

const char *
m2i_ir_node_get_attr (const M2iIrNode *n, const char *key)
{
  return g_hash_table_lookup (n->attrs, key);
}

void
m2i_ir_node_set_error (GError **error, gint code, const M2iIrNode *n,
    const char *format, ...)
{
  va_list ap;
  va_start (ap, format);
  g_autofree gchar *msg = g_strdup_vprintf (format, ap);
  va_end (ap);
  g_set_error (error, M2I_ERROR, code, "layer %" G_GINT64_FORMAT " '%s' (%s, %s): %s",
      n->id, n->name, n->type, n->version[0] ? n->version : "no version", msg);
}

static gboolean
bad_attr (GError **error, const M2iIrNode *n, const char *key, const char *text,
    const char *what)
{
  m2i_ir_node_set_error (error, M2I_ERROR_MALFORMED, n,
      "attribute %s=\"%s\" is not %s", key, text, what);
  return FALSE;
}

gboolean
m2i_ir_node_attr_int (const M2iIrNode *n, const char *key, gint64 def,
    gint64 *out, GError **error)
{
  const char *s = m2i_ir_node_get_attr (n, key);
  if (!s) {
    *out = def;
    return TRUE;
  }
  char *end;
  errno = 0;
  gint64 v = g_ascii_strtoll (s, &end, 10);
  while (g_ascii_isspace (*end))
    end++;
  if (end == s || *end || errno)
    return bad_attr (error, n, key, s, "an integer");
  *out = v;
  return TRUE;
}

gboolean
m2i_ir_node_attr_float (const M2iIrNode *n, const char *key, double def,
    double *out, GError **error)
{
  const char *s = m2i_ir_node_get_attr (n, key);
  if (!s) {
    *out = def;
    return TRUE;
  }
  char *end;
  errno = 0;
  double v = g_ascii_strtod (s, &end);
  while (g_ascii_isspace (*end))
    end++;
  if (end == s || *end || errno == ERANGE)
    return bad_attr (error, n, key, s, "a number");
  *out = v;
  return TRUE;
}

gboolean
m2i_ir_node_attr_bool (const M2iIrNode *n, const char *key, gboolean def,
    gboolean *out, GError **error)
{
  const char *s = m2i_ir_node_get_attr (n, key);
  if (!s) {
    *out = def;
    return TRUE;
  }
  if (!g_ascii_strcasecmp (s, "true") || !strcmp (s, "1"))
    *out = TRUE;
  else if (!g_ascii_strcasecmp (s, "false") || !strcmp (s, "0"))
    *out = FALSE;
  else
    return bad_attr (error, n, key, s, "true or false");
  return TRUE;
}

/* Splits a comma list; calls @parse on each item. Returns the count or -1. */
static gint
parse_list (const M2iIrNode *n, const char *key, const char *s, gint max,
    gboolean (*parse) (const char *item, gint index, gpointer out), gpointer out,
    const char *what, GError **error)
{
  gint count = 0;
  const char *p = s;
  while (g_ascii_isspace (*p))
    p++;
  if (!*p)
    return 0;
  g_auto (GStrv) items = g_strsplit (s, ",", -1);
  for (gchar **it = items; *it; it++) {
    gchar *item = g_strstrip (*it);
    if (count == max) {
      m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, n,
          "attribute %s=\"%s\" has more than %d values", key, s, max);
      return -1;
    }
    if (!parse (item, count, out)) {
      bad_attr (error, n, key, s, what);
      return -1;
    }
    count++;
  }
  return count;
}

static gboolean
parse_int_item (const char *item, gint i, gpointer out)
{
  char *end;
  errno = 0;
  gint64 v = g_ascii_strtoll (item, &end, 10);
  if (end == item || *end || errno)
    return FALSE;
  ((gint64 *) out)[i] = v;
  return TRUE;
}

static gboolean
parse_float_item (const char *item, gint i, gpointer out)
{
  char *end;
  errno = 0;
  double v = g_ascii_strtod (item, &end);
  if (end == item || *end || errno == ERANGE)
    return FALSE;
  ((float *) out)[i] = (float) v;
  return TRUE;
}

gboolean
m2i_ir_node_attr_ints (const M2iIrNode *n, const char *key, gint64 *out,
    gint max, gint *n_out, GError **error)
{
  const char *s = m2i_ir_node_get_attr (n, key);
  if (!s) {
    *n_out = -1;
    return TRUE;
  }
  gint c = parse_list (n, key, s, max, parse_int_item, out, "a list of integers", error);
  if (c < 0)
    return FALSE;
  *n_out = c;
  return TRUE;
}

gboolean
m2i_ir_node_attr_floats (const M2iIrNode *n, const char *key, float *out,
    gint max, gint *n_out, GError **error)
{
  const char *s = m2i_ir_node_get_attr (n, key);
  if (!s) {
    *n_out = -1;
    return TRUE;
  }
  gint c = parse_list (n, key, s, max, parse_float_item, out, "a list of numbers", error);
  if (c < 0)
    return FALSE;
  *n_out = c;
  return TRUE;
}

gboolean
m2i_ir_node_attr_enum (const M2iIrNode *n, const char *key, const char *def,
    const char *const *allowed, gint *out, GError **error)
{
  const char *s = m2i_ir_node_get_attr (n, key);
  const char *want = s ? s : def;
  for (gint i = 0; allowed[i]; i++) {
    if (!g_ascii_strcasecmp (want, allowed[i])) {
      *out = i;
      return TRUE;
    }
  }
  g_autofree gchar *list = g_strjoinv (", ", (gchar **) allowed);
  m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, n,
      "attribute %s=\"%s\" is not one of: %s", key, want, list);
  return FALSE;
}
