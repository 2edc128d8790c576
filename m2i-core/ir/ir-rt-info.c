/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ir-rt-info.c — a model's rt_info (v11 <rt_info>, v10 <meta_data>) kept
 * as it was read: one entry per element, in document order, each knowing
 * its parent. Memory and writing are linear in the text, however deep it
 * nests (a path-keyed table costs the square of the depth to hold and its
 * cube to write back); lookups walk the parents of candidate entries. The
 * tree is immutable once read and shared between models by reference. */
#include "ir-private.h"

#include <string.h>

typedef struct {
  gchar *element;                /* element name */
  gchar *name;                   /* its name="" (<attribute name=..>), or NULL */
  gchar *value;                  /* its value="", or NULL */
  gint parent;                   /* enclosing entry, -1 at the top */
  gboolean legacy;               /* inside v10's <meta_data> */
} Entry;

struct _IrRtInfo {
  gint ref_count;
  GArray *entries;               /* Entry, document order */
};

/* Written indentation stops growing here: deep trees stay linear to write. */
#define MAX_INDENT 16

static void
entry_clear (gpointer p)
{
  Entry *e = p;
  g_free (e->element);
  g_free (e->name);
  g_free (e->value);
}

IrRtInfo *
ir_rt_info_new (void)
{
  IrRtInfo *info = g_new0 (IrRtInfo, 1);
  info->ref_count = 1;
  info->entries = g_array_new (FALSE, FALSE, sizeof (Entry));
  g_array_set_clear_func (info->entries, entry_clear);
  return info;
}

IrRtInfo *
ir_rt_info_ref (IrRtInfo *info)
{
  g_atomic_int_inc (&info->ref_count);
  return info;
}

void
ir_rt_info_unref (IrRtInfo *info)
{
  if (!info || !g_atomic_int_dec_and_test (&info->ref_count))
    return;
  g_array_free (info->entries, TRUE);
  g_free (info);
}

gint
ir_rt_info_add (IrRtInfo *info, gint parent, const char *element, const char *name,
    const char *value)
{
  g_return_val_if_fail (parent < (gint) info->entries->len, -1);
  Entry e = {
    g_strdup (element), g_strdup (name), g_strdup (value), parent,
    parent >= 0 ? g_array_index (info->entries, Entry, parent).legacy :
        !strcmp (element, "meta_data"),
  };
  g_array_append_val (info->entries, e);
  return info->entries->len - 1;
}

/* The label an entry contributes to a key: <attribute name="x"> spells the
 * last component as its name, every other element by its element name. */
static const char *
label (const Entry *e, gboolean last)
{
  return last && e->name && !strcmp (e->element, "attribute") ? e->name : e->element;
}

/* Whether the labels from the top down to entry @i, joined by '/', are
 * @key (@end its end): compared from the end, one parent at a time. */
static gboolean
key_matches (const IrRtInfo *info, gint i, const char *key, const char *end)
{
  for (gboolean last = TRUE; i >= 0; last = FALSE) {
    const Entry *e = &g_array_index (info->entries, Entry, i);
    const char *l = label (e, last);
    gsize len = strlen (l);
    if ((gsize) (end - key) < len || memcmp (end - len, l, len))
      return FALSE;
    end -= len;
    i = e->parent;
    if (i < 0)
      return end == key;
    if (end == key || end[-1] != '/')
      return FALSE;
    end--;
  }
  return FALSE;
}

const char *
ir_rt_info_lookup (const IrRtInfo *info, const char *key)
{
  if (!info || !key)
    return NULL;
  const char *end = key + strlen (key);
  /* the last of equal keys wins, as when each overwrote the one before */
  for (gint i = info->entries->len - 1; i >= 0; i--) {
    const Entry *e = &g_array_index (info->entries, Entry, i);
    if (e->value && key_matches (info, i, key, end))
      return e->value;
  }
  return NULL;
}

static void
indent (GString *s, gint depth)
{
  for (gint i = 0; i < MIN (depth, MAX_INDENT); i++)
    g_string_append_c (s, '\t');
}

static void
attr (GString *s, const char *key, const char *value)
{
  g_autofree gchar *v = g_markup_escape_text (value, -1);
  g_string_append_printf (s, " %s=\"%s\"", key, v);
}

void
ir_rt_info_write (const IrRtInfo *info, GString *s)
{
  if (!info)
    return;
  gint n = info->entries->len;
  GArray *open = g_array_new (FALSE, FALSE, sizeof (gint));    /* entries not closed yet */
  gboolean any = FALSE;
  for (gint i = 0; i < n; i++) {
    const Entry *e = &g_array_index (info->entries, Entry, i);
    if (e->legacy)
      continue;                  /* v10's <meta_data> is not carried into v11 */
    if (!any) {
      indent (s, 1);
      g_string_append (s, "<rt_info>\n");
      any = TRUE;
    }
    while (open->len && g_array_index (open, gint, open->len - 1) != e->parent) {
      gint c = g_array_index (open, gint, open->len - 1);
      g_array_set_size (open, open->len - 1);
      indent (s, 2 + open->len);
      g_string_append_printf (s, "</%s>\n", g_array_index (info->entries, Entry, c).element);
    }
    indent (s, 2 + open->len);
    g_string_append_printf (s, "<%s", e->element);
    if (e->name)
      attr (s, "name", e->name);
    if (e->value)
      attr (s, "value", e->value);
    if (i + 1 < n && g_array_index (info->entries, Entry, i + 1).parent == i) {
      g_string_append (s, ">\n");
      g_array_append_val (open, i);
    } else
      g_string_append (s, "/>\n");
  }
  while (open->len) {
    gint c = g_array_index (open, gint, open->len - 1);
    g_array_set_size (open, open->len - 1);
    indent (s, 2 + open->len);
    g_string_append_printf (s, "</%s>\n", g_array_index (info->entries, Entry, c).element);
  }
  if (any) {
    indent (s, 1);
    g_string_append (s, "</rt_info>\n");
  }
  g_array_free (open, TRUE);
}
