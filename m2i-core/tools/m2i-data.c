/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* m2i-data.c — data files for programs, benchmarks and tests, see m2i-data.h. */
#include "m2i-data.h"

#include <gio/gio.h>
#include <string.h>

GBytes *
m2i_data_read (const char *path, GError **error)
{
  gchar *data;
  gsize len;
  if (!g_file_get_contents (path, &data, &len, error))
    return NULL;
  if (len < 2 || (guint8) data[0] != 0x1f || (guint8) data[1] != 0x8b)
    return g_bytes_new_take (data, len);
  GConverter *z = G_CONVERTER (g_zlib_decompressor_new (G_ZLIB_COMPRESSOR_FORMAT_GZIP));
  GInputStream *raw = g_memory_input_stream_new_from_data (data, len, g_free);
  GInputStream *in = g_converter_input_stream_new (raw, z);
  GOutputStream *out = g_memory_output_stream_new_resizable ();
  GBytes *b = NULL;
  if (g_output_stream_splice (out, in, G_OUTPUT_STREAM_SPLICE_CLOSE_TARGET, NULL, error) >= 0)
    b = g_memory_output_stream_steal_as_bytes (G_MEMORY_OUTPUT_STREAM (out));
  else
    g_prefix_error (error, "%s: ", path);
  g_object_unref (out);
  g_object_unref (in);
  g_object_unref (raw);
  g_object_unref (z);
  return b;
}

gboolean
m2i_data_is_idx (const guint8 *data, gsize len, guint n_dims)
{
  return len >= 4 && data[0] == 0 && data[1] == 0 && data[2] == 8 && data[3] == n_dims;
}

GBytes *
m2i_data_idx_samples (GBytes *file, guint n_dims, guint32 *dims, const char *what,
    GError **error)
{
  gsize len;
  const guint8 *d = g_bytes_get_data (file, &len);
  gsize header = 4 + (gsize) 4 * n_dims;
  if (!d || !m2i_data_is_idx (d, len, n_dims) || len < header) {
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "%s is not an idx file of "
        "unsigned bytes with %u dimensions (magic 00 00 08 %02x)", what, n_dims, n_dims);
    return NULL;
  }
  guint64 count = 1;
  for (guint i = 0; i < n_dims; i++) {
    guint32 be;
    memcpy (&be, d + 4 + 4 * i, sizeof be);
    dims[i] = GUINT32_FROM_BE (be);
    count *= dims[i];
    if (count > len)
      break;
  }
  if (count > len - header) {
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "%s is truncated: its counts "
        "say %" G_GUINT64_FORMAT " samples, it holds %" G_GSIZE_FORMAT, what, count,
        len - header);
    return NULL;
  }
  return g_bytes_new_from_bytes (file, header, (gsize) count);
}

void
m2i_data_grey_to_nv12 (const guint8 *grey, gint side, gint scale, guint8 *nv12)
{
  gint w = side * scale;
  for (gint y = 0; y < w; y++)
    for (gint x = 0; x < w; x++) {
      guint p = grey[(y / scale) * side + x / scale];
      nv12[(gsize) y * w + x] = (guint8) ((16 * 255 + p * 219 + 127) / 255);
    }
  memset (nv12 + (gsize) w * w, 128, (gsize) w * w / 2);
}

gboolean
m2i_data_parse_size (const char *text, guint64 *out, GError **error)
{
  gchar *end = NULL;
  double v = text ? g_ascii_strtod (text, &end) : 0;
  double scale = 1;
  if (end && *end) {
    static const char units[] = "KMGT";
    const char *u = strchr (units, g_ascii_toupper (*end));
    if (u) {
      for (const char *k = units; k <= u; k++)
        scale *= 1024;
      end++;
      if (!g_ascii_strcasecmp (end, "iB") || !g_ascii_strcasecmp (end, "B"))
        end += strlen (end);
    } else if (!g_ascii_strcasecmp (end, "B"))
      end++;
  }
  if (!end || end == text || *end || !(v > 0) || v * scale >= 18446744073709551616.0) {
    g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "\"%s\" is no size (bytes, "
        "or a number with K, M, G or T: 512M, 4G)", text ? text : "");
    return FALSE;
  }
  *out = (guint64) (v * scale);
  return TRUE;
}
