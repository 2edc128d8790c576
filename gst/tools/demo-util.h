/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* demo-util.h — what the demos of m2i-infer-demo share (gst/tools):
 * paths in the source tree and ../shared, running a pipeline to its end,
 * an element's "fused" text, binary PPM photos. */
#pragma once

#include <gst/gst.h>

G_BEGIN_DECLS

/* @rel inside the source tree (g_free). */
gchar *demo_source_path (const char *rel);

/* @rel inside the external models: $M2I_SHARED_MODELS, else
 * ../shared/models/external beside the source tree (g_free). */
gchar *demo_shared_path (const char *rel);

/* @launch (or a path) as shown to the user: paths relative to the source
 * tree (g_free). */
gchar *demo_shown_pipeline (const char *launch);

/* Waits for the end of the stream or an error of @pipeline; FALSE with
 * @error (the element's message and its details) on an error. */
gboolean demo_wait_eos (GstElement *pipeline, GError **error);

/* The "fused" property of the element @name of @pipeline (g_free);
 * "(nothing)" when unset. */
gchar *demo_get_fused (GstElement *pipeline, const char *name);

/* An 8-bit binary PPM (P6) photo, RGB, tight rows. */
typedef struct {
  gint width, height;
  guint8 *rgb;
} DemoPicture;

/* Reads @path into @pic (free pic->rgb with g_free); FALSE with @error
 * when it cannot be read or is no 8-bit binary PPM. */
gboolean demo_read_ppm (const char *path, DemoPicture *pic, GError **error);

G_END_DECLS
