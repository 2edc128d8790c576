/* infer-labels.c — the labels file: one label a line; see infer-private.h. */
#include "infer-private.h"

#include <base/m2i-error.h>
#include <glib/gstdio.h>

/* More than any label set needs (ImageNet-21k's names are ~0.5 MB). */
#define MAX_LABELS_BYTES (16u << 20)

gchar **
infer_labels_load (const char *path, GError **error)
{
  gchar *text = NULL;
  gsize len = 0;
  GError *io = NULL;
  GStatBuf st;
  if (g_stat (path, &st) == 0 && st.st_size > (goffset) MAX_LABELS_BYTES) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_MALFORMED, "labels file \"%s\" is %" G_GINT64_FORMAT
        " bytes, more than the %u a labels file may have", path, (gint64) st.st_size,
        MAX_LABELS_BYTES);
    return NULL;
  }
  if (!g_file_get_contents (path, &text, &len, &io)) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_IO, "labels file: %s; set labels= to a text file "
        "with one label a line", io->message);
    g_error_free (io);
    return NULL;
  }
  gchar **lines = g_strsplit (text, "\n", -1);
  g_free (text);
  guint n = g_strv_length (lines);
  for (guint i = 0; i < n; i++)
    g_strchomp (lines[i]);
  while (n > 0 && lines[n - 1][0] == '\0') {
    g_free (lines[n - 1]);
    lines[--n] = NULL;
  }
  if (n == 0) {
    g_strfreev (lines);
    g_set_error (error, M2I_ERROR, M2I_ERROR_MALFORMED,
        "labels file \"%s\" holds no label (one label a line, line 1 = class 0)", path);
    return NULL;
  }
  return lines;
}
