/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ir-registry.c — kernels keyed by op type and opset; custom-op plugins. */
#include "ir-private.h"
#include <base/m2i-error.h>

#include <gmodule.h>
#include <stdlib.h>
#include <string.h>

struct _M2iOpRegistry {
  GMutex lock;
  GHashTable *kernels;           /* "Type\nopsetN" (or "Type\n*") → const M2iOpKernel* */
  M2iOpRegistry *fallback;
};

/*
 * The op versions of the opsets, for the types whose meaning changed: an IR
 * layer says the opset it was written against ("opset11"), and opsetN holds
 * the newest version of each op introduced at or before N. Each row lists
 * the opsets that introduced a new version of the op. Types not listed here
 * resolve to the newest registered kernel opset at or below N.
 */
static const struct {
  const char *type;
  guint8 versions[6];            /* ascending, 0-terminated */
} op_versions[] = {
  { "AvgPool", { 1, 14 } },
  { "BatchNormInference", { 1, 5 } },
  { "Broadcast", { 1, 3 } },
  { "DetectionOutput", { 1, 8 } },
  { "Gather", { 1, 7, 8 } },
  { "GatherND", { 5, 8 } },
  { "Gelu", { 2, 7 } },
  { "Interpolate", { 1, 4, 11 } },
  { "Loop", { 5 } },
  { "MaxPool", { 1, 8, 14 } },
  { "MVN", { 2, 6 } },
  { "NonMaxSuppression", { 1, 3, 4, 5, 9 } },
  { "Pad", { 1, 12 } },
  { "PriorBox", { 1, 8 } },
  { "Proposal", { 1, 4 } },
  { "Range", { 1, 4 } },
  { "ROIAlign", { 3, 9 } },
  { "ScatterElementsUpdate", { 3, 12 } },
  { "ScatterNDUpdate", { 3, 15 } },
  { "ShapeOf", { 1, 3 } },
  { "SoftMax", { 1, 8 } },
  { "Squeeze", { 1, 15 } },
  { "TopK", { 1, 3, 11 } },
};

static gboolean
parse_opset (const char *version, gint *n)
{
  if (!version || strncmp (version, "opset", 5) || !g_ascii_isdigit (version[5]))
    return FALSE;
  char *end;
  long v = strtol (version + 5, &end, 10);
  if (*end || v <= 0 || v > 1000)
    return FALSE;
  *n = (gint) v;
  return TRUE;
}

const char *
ir_opset_resolve (const char *type, const char *version, gchar buf[16])
{
  gint n;
  if (!parse_opset (version, &n))
    return version;
  for (guint i = 0; i < G_N_ELEMENTS (op_versions); i++) {
    if (strcmp (op_versions[i].type, type))
      continue;
    gint best = 0;
    for (gint j = 0; j < 6 && op_versions[i].versions[j]; j++)
      if (op_versions[i].versions[j] <= n)
        best = op_versions[i].versions[j];
    if (!best)
      return version;        /* older than the op: let the lookup fail by name */
    g_snprintf (buf, 16, "opset%d", best);
    return buf;
  }
  return version;
}

static gboolean
type_in_table (const char *type)
{
  for (guint i = 0; i < G_N_ELEMENTS (op_versions); i++)
    if (!strcmp (op_versions[i].type, type))
      return TRUE;
  return FALSE;
}

M2iOpRegistry *
m2i_op_registry_new (M2iOpRegistry *fallback)
{
  M2iOpRegistry *r = g_new0 (M2iOpRegistry, 1);
  g_mutex_init (&r->lock);
  r->kernels = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  r->fallback = fallback;
  return r;
}

void
m2i_op_registry_free (M2iOpRegistry *r)
{
  if (!r || r == m2i_op_registry_get_default ())
    return;
  g_hash_table_unref (r->kernels);
  g_mutex_clear (&r->lock);
  g_free (r);
}

M2iOpRegistry *
m2i_op_registry_get_default (void)
{
  static M2iOpRegistry *def;
  if (g_once_init_enter (&def)) {
    M2iOpRegistry *r = m2i_op_registry_new (NULL);
    ir_register_structural_kernels (r);
    ir_register_compute_kernels (r);
    g_once_init_leave (&def, r);
  }
  return def;
}

void
m2i_op_registry_add (M2iOpRegistry *r, const M2iOpKernel *kernel)
{
  g_return_if_fail (r != NULL && kernel != NULL && kernel->type != NULL);
  g_auto (GStrv) opsets = g_strsplit_set (kernel->opsets ? kernel->opsets : "", " \t", -1);
  g_mutex_lock (&r->lock);
  gboolean any = TRUE;
  for (gchar **it = opsets; *it; it++) {
    if (!**it)
      continue;
    any = FALSE;
    g_hash_table_insert (r->kernels, g_strdup_printf ("%s\n%s", kernel->type, *it),
        (gpointer) kernel);
  }
  if (any)
    g_hash_table_insert (r->kernels, g_strdup_printf ("%s\n*", kernel->type), (gpointer) kernel);
  g_mutex_unlock (&r->lock);
}

static const M2iOpKernel *
lookup_key (M2iOpRegistry *r, const char *type, const char *opset)
{
  g_autofree gchar *key = g_strdup_printf ("%s\n%s", type, opset);
  g_mutex_lock (&r->lock);
  const M2iOpKernel *k = g_hash_table_lookup (r->kernels, key);
  g_mutex_unlock (&r->lock);
  return k;
}

/* The opsets @type has kernels for in @r and its fallbacks, each once ("*"
 * for a kernel of any version), in no particular order. */
static GPtrArray *
registered_opsets (M2iOpRegistry *r, const char *type)
{
  GPtrArray *found = g_ptr_array_new_with_free_func (g_free);
  gsize tlen = strlen (type);
  for (; r; r = r->fallback) {
    g_mutex_lock (&r->lock);
    GHashTableIter it;
    gpointer key;
    g_hash_table_iter_init (&it, r->kernels);
    while (g_hash_table_iter_next (&it, &key, NULL)) {
      const char *k = key;
      if (strncmp (k, type, tlen) || k[tlen] != '\n')
        continue;
      gboolean dup = FALSE;
      for (guint i = 0; i < found->len; i++)
        dup |= !strcmp (g_ptr_array_index (found, i), k + tlen + 1);
      if (!dup)
        g_ptr_array_add (found, g_strdup (k + tlen + 1));
    }
    g_mutex_unlock (&r->lock);
  }
  return found;
}

/* The highest registered "opsetM" of @type with M <= @n, in the chain. */
static gint
newest_registered_at_most (M2iOpRegistry *r, const char *type, gint n)
{
  gint best = 0;
  GPtrArray *opsets = registered_opsets (r, type);
  for (guint i = 0; i < opsets->len; i++) {
    gint m;
    if (parse_opset (g_ptr_array_index (opsets, i), &m) && m <= n && m > best)
      best = m;
  }
  g_ptr_array_free (opsets, TRUE);
  return best;
}

const M2iOpKernel *
m2i_op_registry_lookup (M2iOpRegistry *r, const char *type, const char *version)
{
  g_return_val_if_fail (r != NULL && type != NULL, NULL);
  gchar buf[16];
  const char *opset = version ? version : "";
  gint n;
  if (type_in_table (type))
    opset = ir_opset_resolve (type, opset, buf);
  else if (parse_opset (opset, &n)) {
    gint m = newest_registered_at_most (r, type, n);
    if (m) {
      g_snprintf (buf, sizeof buf, "opset%d", m);
      opset = buf;
    }
  }
  for (M2iOpRegistry *it = r; it; it = it->fallback) {
    const M2iOpKernel *k = lookup_key (it, type, opset);
    if (!k)
      k = lookup_key (it, type, "*");
    if (k)
      return k;
  }
  return NULL;
}

/* g_ptr_array_sort passes pointers to the elements */
static gint
cmp_str_ptr (gconstpointer a, gconstpointer b)
{
  return g_strcmp0 (*(const gchar *const *) a, *(const gchar *const *) b);
}

gchar *
m2i_op_registry_list_opsets (M2iOpRegistry *r, const char *type)
{
  GPtrArray *found = registered_opsets (r, type);
  for (guint i = 0; i < found->len; i++) {
    if (!strcmp (g_ptr_array_index (found, i), "*")) {
      g_free (found->pdata[i]);
      found->pdata[i] = g_strdup ("any opset");
    }
  }
  if (!found->len) {
    g_ptr_array_free (found, TRUE);
    return NULL;
  }
  g_ptr_array_sort (found, cmp_str_ptr);
  g_ptr_array_add (found, NULL);
  gchar **v = (gchar **) g_ptr_array_free (found, FALSE);
  gchar *s = g_strjoinv (" ", v);
  g_strfreev (v);
  return s;
}

typedef gboolean (*PluginRegisterFunc) (M2iOpRegistry *r, GError **error);

gboolean
m2i_op_registry_load_plugin (M2iOpRegistry *r, const char *path, GError **error)
{
  g_return_val_if_fail (r != NULL && path != NULL, FALSE);
  GModule *module = g_module_open (path, G_MODULE_BIND_LAZY | G_MODULE_BIND_LOCAL);
  if (!module) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_IO, "cannot load the custom-op plugin '%s': %s",
        path, g_module_error ());
    return FALSE;
  }
  PluginRegisterFunc reg = NULL;
  if (!g_module_symbol (module, M2I_OP_PLUGIN_REGISTER_SYMBOL, (gpointer *) &reg) || !reg) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, "'%s' is not an m2i custom-op "
        "plugin: it does not export %s() (see docs/ir-runtime.md)", path,
        M2I_OP_PLUGIN_REGISTER_SYMBOL);
    g_module_close (module);
    return FALSE;
  }
  /* kernels registered below point into the library: it must stay */
  g_module_make_resident (module);
  GError *e = NULL;
  if (!reg (r, &e)) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_FAILED, "the custom-op plugin '%s' failed to "
        "register its kernels: %s", path, e ? e->message : "(no reason given)");
    g_clear_error (&e);
    return FALSE;
  }
  return TRUE;
}
