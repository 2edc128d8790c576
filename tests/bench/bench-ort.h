/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-ort.h — runs a benchmark's ONNX Runtime peer (a node script beside
 * the benchmark) and reads its figures (bench-conv, bench-ops). */
#pragma once

#include <gio/gio.h>
#include <stdio.h>

/* Sends @request to `node M2I_BENCH_DIR/@script` on stdin when
 * M2I_ORT_NODE_MODULES is set, and reads its answer: "version V", then
 * "LAYER THREADS MS" lines, stored in ort_ms[LAYER][THREADS - 1] (1 or 2
 * threads, LAYER < @n_layers; other entries are left alone). Returns the
 * peer's description, or NULL when there is none or it failed (said on
 * stderr). Free with g_free(). */
static inline gchar *
bench_ort_peer (const char *script, const char *request, double (*ort_ms)[2], guint n_layers)
{
  if (!g_getenv ("M2I_ORT_NODE_MODULES"))
    return NULL;
  GError *error = NULL;
  gchar *out = NULL;
  g_autofree gchar *path = g_build_filename (M2I_BENCH_DIR, script, NULL);
  GSubprocess *p = g_subprocess_new (G_SUBPROCESS_FLAGS_STDIN_PIPE |
      G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error, "node", path, NULL);
  if (!p || !g_subprocess_communicate_utf8 (p, request, NULL, &out, NULL, &error) ||
      !g_subprocess_get_successful (p)) {
    fprintf (stderr, "ONNX Runtime peer failed: %s\n", error ? error->message : "node exited");
    g_clear_error (&error);
    g_clear_object (&p);
    g_free (out);
    return NULL;
  }
  gchar *version = NULL;
  gchar **lines = g_strsplit (out, "\n", -1);
  for (gchar **line = lines; *line; line++) {
    guint l;
    gint threads;
    double ms;
    char v[64];
    if (sscanf (*line, "version %63s", v) == 1)
      version = g_strdup_printf ("ONNX Runtime %s (CPU provider, via onnxruntime-node)", v);
    else if (sscanf (*line, "%u %d %lf", &l, &threads, &ms) == 3 && l < n_layers &&
        threads >= 1 && threads <= 2)
      ort_ms[l][threads - 1] = ms;
  }
  g_strfreev (lines);
  g_free (out);
  g_object_unref (p);
  return version;
}
