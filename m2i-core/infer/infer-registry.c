/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* infer-registry.c — shared model instances: one loaded model per id in the
 * process (m2i_infer_model_acquire, m2i-infer-queue.h).
 *
 * One mutex guards the table id -> entry. An entry is made "loading" before
 * its model is loaded outside the lock (loads of other ids go on), and
 * acquirers of the same id wait for it. A registered model's reference
 * count only drops under the lock, so a lookup never revives a model that
 * is being freed: the last unref removes the entry first.
 */
#include "infer-private.h"
#include "m2i-infer-queue.h"

#include <base/m2i-error.h>
#include <string.h>

typedef struct {
  M2iInferModel *model;        /* NULL while loading */
  gboolean loading;
} Entry;

static GMutex lock;
static GCond loaded;
static GHashTable *table;      /* id (owned by the model or the loader) -> Entry* */
static guint n_loaded;

guint
m2i_infer_model_get_n_loaded (void)
{
  return g_atomic_int_get (&n_loaded);
}

void
infer_registry_count_load (void)
{
  g_atomic_int_inc (&n_loaded);
}

const char *
m2i_infer_model_get_instance_id (const M2iInferModel *model)
{
  return model->instance_id;
}

/* The settings that make a model what it is, one per line as
 * "property=value", in a fixed order. */
static gchar *
model_key (const char *xml_path, const M2iInferModelOptions *o)
{
  g_autofree gchar *xml = xml_path ? g_canonicalize_filename (xml_path, NULL) : NULL;
  g_autofree gchar *text = o->labels_text ? g_strescape (o->labels_text, NULL) : NULL;
  g_autofree gchar *labels = o->labels_path ? g_canonicalize_filename (o->labels_path, NULL)
      : text ? g_strdup_printf ("\"%s\"", text) : NULL;
  g_autofree gchar *dev = g_ascii_strup (o->device && *o->device ? o->device : "AUTO", -1);
  return g_strdup_printf ("model=%s\ndevice=%s\nlabels=%s\nn-threads=%u\nsplit-dir=%s\n"
      "batch-size=%u\ndecoder=%s\nmax-detections=%u\nmax-memory=%" G_GUINT64_FORMAT "\n",
      xml ? xml : "(none)", dev, labels ? labels : "(none)", o->n_threads,
      o->split_dir ? o->split_dir : "(none)", o->batch, m2i_model_type_name (o->decoder.type),
      o->decoder.max_detections, o->max_memory);
}

/* The first line of @a and @b that differs: "device=CPU" / "device=AUTO". */
static void
first_difference (const char *a, const char *b, gchar **la, gchar **lb)
{
  gchar **x = g_strsplit (a, "\n", -1), **y = g_strsplit (b, "\n", -1);
  guint i = 0;
  while (x[i] && y[i] && !strcmp (x[i], y[i]))
    i++;
  *la = g_strdup (x[i] ? x[i] : "");
  *lb = g_strdup (y[i] ? y[i] : "");
  g_strfreev (x);
  g_strfreev (y);
}

M2iInferModel *
m2i_infer_model_acquire (const char *instance_id, const char *xml_path,
    const M2iInferModelOptions *opts, GError **error)
{
  M2iInferModelOptions defaults;
  if (!opts) {
    m2i_infer_model_options_init (&defaults);
    opts = &defaults;
  }
  if (!instance_id || !*instance_id)
    return m2i_infer_model_load (xml_path, opts, error);
  gchar *key = model_key (xml_path, opts);
  g_mutex_lock (&lock);
  if (!table)
    table = g_hash_table_new (g_str_hash, g_str_equal);
  Entry *e;
  while ((e = g_hash_table_lookup (table, instance_id)) && e->loading)
    g_cond_wait (&loaded, &lock);
  if (e) {
    M2iInferModel *m = e->model;
    if (strcmp (m->key, key)) {
      gchar *have, *want;
      first_difference (m->key, key, &have, &want);
      g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, "model-instance-id=%s is "
          "loaded with %s, this one asks for %s: elements sharing an instance must agree on "
          "model, device, labels, n-threads, split-dir, batch-size, max-memory and the decoder; "
          "set the "
          "same, or another model-instance-id", instance_id, have, want);
      g_free (have);
      g_free (want);
      m = NULL;
    } else {
      g_atomic_int_inc (&m->ref_count);
    }
    g_mutex_unlock (&lock);
    g_free (key);
    return m;
  }
  /* load it, outside the lock */
  gchar *id = g_strdup (instance_id);
  Entry loading = { NULL, TRUE };
  g_hash_table_insert (table, id, &loading);
  g_mutex_unlock (&lock);
  M2iInferModel *m = m2i_infer_model_load (xml_path, opts, error);
  g_mutex_lock (&lock);
  g_hash_table_remove (table, id);
  if (m) {
    m->instance_id = id;
    m->key = key;
    e = g_new (Entry, 1);
    *e = (Entry) { m, FALSE };
    g_hash_table_insert (table, m->instance_id, e);
  } else {
    g_free (id);
    g_free (key);
  }
  g_cond_broadcast (&loaded);
  g_mutex_unlock (&lock);
  return m;
}

gboolean
infer_registry_release (M2iInferModel *m)
{
  g_mutex_lock (&lock);
  gboolean last = g_atomic_int_dec_and_test (&m->ref_count);
  if (last) {
    Entry *e = g_hash_table_lookup (table, m->instance_id);
    g_hash_table_remove (table, m->instance_id);
    g_free (e);
  }
  g_mutex_unlock (&lock);
  return last;
}
