/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* demo-util.c — see demo-util.h. */
#include "demo-util.h"

#include <gio/gio.h>
#include <stdio.h>

#ifndef M2I_SOURCE_ROOT
#define M2I_SOURCE_ROOT "."
#endif

gchar *
demo_source_path (const char *rel)
{
  return g_build_filename (M2I_SOURCE_ROOT, rel, NULL);
}

gchar *
demo_shared_path (const char *rel)
{
  const char *shared = g_getenv ("M2I_SHARED_MODELS");
  if (shared)
    return g_build_filename (shared, rel, NULL);
  return g_build_filename (M2I_SOURCE_ROOT, "..", "shared", "models", "external", rel, NULL);
}

gchar *
demo_shown_pipeline (const char *launch)
{
  gchar **parts = g_strsplit (launch, M2I_SOURCE_ROOT "/", -1);
  gchar *s = g_strjoinv ("", parts);
  g_strfreev (parts);
  return s;
}

gboolean
demo_wait_eos (GstElement *pipeline, GError **error)
{
  GstBus *bus = gst_element_get_bus (pipeline);
  GstMessage *msg = gst_bus_timed_pop_filtered (bus, GST_CLOCK_TIME_NONE,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  gboolean ok = GST_MESSAGE_TYPE (msg) != GST_MESSAGE_ERROR;
  if (!ok) {
    GError *err = NULL;
    gchar *dbg = NULL;
    gst_message_parse_error (msg, &err, &dbg);
    g_set_error (error, err->domain, err->code, "%s (%s)", err->message, dbg ? dbg : "");
    g_clear_error (&err);
    g_free (dbg);
  }
  gst_message_unref (msg);
  gst_object_unref (bus);
  return ok;
}

gchar *
demo_get_fused (GstElement *pipeline, const char *name)
{
  GstElement *el = gst_bin_get_by_name (GST_BIN (pipeline), name);
  gchar *s = NULL;
  if (el) {
    g_object_get (el, "fused", &s, NULL);
    gst_object_unref (el);
  }
  return s ? s : g_strdup ("(nothing)");
}

gboolean
demo_read_ppm (const char *path, DemoPicture *pic, GError **error)
{
  gchar *data;
  gsize len;
  if (!g_file_get_contents (path, &data, &len, error))
    return FALSE;
  gint w = 0, h = 0, max = 0, used = 0;
  if (sscanf (data, "P6 %d %d %d%n", &w, &h, &max, &used) != 3 || w <= 0 || h <= 0
      || w > 65536 || h > 65536 || max != 255
      || (gsize) used + 1 + (gsize) w * h * 3 > len) {
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "%s is no 8-bit binary PPM", path);
    g_free (data);
    return FALSE;
  }
  pic->width = w;
  pic->height = h;
  pic->rgb = g_memdup2 (data + used + 1, (gsize) w * h * 3);
  g_free (data);
  return TRUE;
}
