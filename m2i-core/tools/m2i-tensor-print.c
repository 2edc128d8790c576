/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* m2i-tensor-print.c — printing output tensors for the command-line
 * programs (m2i-tensor-print.h). */
#include "m2i-tensor-print.h"

#include <math.h>
#include <string.h>

gboolean
m2i_tool_is_classifier (const M2iTensor *t)
{
  gint64 n = m2i_shape_numel (&t->shape), largest = 0;
  for (gint d = 0; d < t->shape.rank; d++)
    largest = MAX (largest, t->shape.dims[d]);
  return t->type == M2I_ET_F32 && n > 1 && n <= 100000 && n == largest;
}

void
m2i_tool_print_top_k (FILE *f, const M2iTensor *t, gint k, gchar **labels)
{
  gint64 n = m2i_shape_numel (&t->shape);
  const float *p = t->data;
  k = (gint) MIN (k, n);
  g_autofree gint *best = g_new (gint, MAX (k, 1));
  for (gint j = 0; j < k; j++) {
    gint arg = -1;
    for (gint64 i = 0; i < n; i++) {
      gboolean taken = FALSE;
      for (gint s = 0; s < j; s++)
        taken |= best[s] == i;
      if (!taken && (arg < 0 || p[i] > p[arg]))
        arg = (gint) i;
    }
    best[j] = arg;
  }
  guint n_labels = labels ? g_strv_length (labels) : 0;
  fprintf (f, "top %d:\n", k);
  for (gint j = 0; j < k; j++) {
    gchar buf[32];
    const char *label = (guint) best[j] < n_labels && labels[best[j]][0] ? labels[best[j]] :
        (g_snprintf (buf, sizeof buf, "class %d", best[j]), buf);
    fprintf (f, "  %5d  %.6f  %s\n", best[j], p[best[j]], label);
  }
}

/* Element @i of @t as a double (numeric types other than f16/bf16). */
static double
value_at (const M2iTensor *t, gint64 i)
{
  const void *p = (const guint8 *) t->data + i * m2i_element_type_size (t->type);
  switch (t->type) {
    case M2I_ET_BOOLEAN: case M2I_ET_U8: return *(const guint8 *) p;
    case M2I_ET_I8: return *(const gint8 *) p;
    case M2I_ET_U16: return *(const guint16 *) p;
    case M2I_ET_I16: return *(const gint16 *) p;
    case M2I_ET_U32: return *(const guint32 *) p;
    case M2I_ET_I32: return *(const gint32 *) p;
    case M2I_ET_U64: return (double) *(const guint64 *) p;
    case M2I_ET_I64: return (double) *(const gint64 *) p;
    case M2I_ET_F32: return *(const float *) p;
    case M2I_ET_F64: return *(const double *) p;
    default: return NAN;
  }
}

void
m2i_tool_print_summary (FILE *f, const char *name, const M2iTensor *t)
{
  g_autofree gchar *shape = m2i_shape_to_string (&t->shape);
  fprintf (f, "output %s: %s %s", name, m2i_element_type_to_string (t->type), shape);
  gint64 n = m2i_shape_numel (&t->shape);
  if (n <= 0 || t->type == M2I_ET_UNDEFINED || t->type == M2I_ET_F16 || t->type == M2I_ET_BF16) {
    fprintf (f, "\n");
    return;
  }
  double lo = INFINITY, hi = -INFINITY, sum = 0;
  gint64 arg = -1, nans = 0;
  for (gint64 i = 0; i < n; i++) {
    double v = value_at (t, i);
    if (isnan (v)) {
      nans++;
      continue;
    }
    if (arg < 0 || v > hi)
      arg = i, hi = v;
    lo = MIN (lo, v);
    sum += v;
  }
  if (arg < 0) {
    fprintf (f, ": all %" G_GINT64_FORMAT " values are NaN\n", n);
    return;
  }
  fprintf (f, ": min %.6g max %.6g mean %.6g argmax %" G_GINT64_FORMAT " [", lo, hi,
      sum / (n - nans), arg);
  gint64 rest = arg, idx[M2I_MAX_RANK];
  for (gint d = t->shape.rank - 1; d >= 0; d--) {
    idx[d] = rest % t->shape.dims[d];
    rest /= t->shape.dims[d];
  }
  for (gint d = 0; d < t->shape.rank; d++)
    fprintf (f, d ? ",%" G_GINT64_FORMAT : "%" G_GINT64_FORMAT, idx[d]);
  fprintf (f, "]");
  if (nans)
    fprintf (f, ", %" G_GINT64_FORMAT " NaN", nans);
  fprintf (f, "\n");
}

gboolean
m2i_tool_dump (const char *dir, const char *name, const M2iTensor *t, gchar **path,
    GError **error)
{
  g_autofree gchar *safe = g_strdup (name);
  g_strcanon (safe, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-", '_');
  g_autofree gchar *file = g_strdup_printf ("%s.%s", safe, m2i_element_type_to_string (t->type));
  gchar *full = g_build_filename (dir, file, NULL);
  gboolean ok = g_file_set_contents (full, t->data, m2i_tensor_nbytes (t), error);
  if (path)
    *path = full;
  else
    g_free (full);
  return ok;
}
