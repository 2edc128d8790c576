/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-tiny-ssd.h — a tiny SSD detector written by the tests, in any batch,
 * for what needs a detector whose input takes several frames (batching)
 * without a real model: 8x8 BGR input, 1x1 convolutions giving box offsets
 * and two class scores per pixel, SoftMax, 64 fixed priors (one per cell,
 * 0.25 wide), DetectionOutput (keep_top_k 10 per image). The same weights
 * in every batch, so a frame gets the same detections whatever its slot.
 * Public m2i-core API only (tests linking the shared library use it too).
 */
#pragma once

#include <glib.h>
#include "test-image.h"

G_BEGIN_DECLS

/* Writes the model of input batch @batch (1..64) as model.xml/model.bin into
 * a new temporary folder; returns the .xml path (free with
 * test_remove_model_files()). */
gchar *test_tiny_ssd_write (gint batch);

/* NV12 frame @i of a sequence for it (@w x @h, even): red and blue stripes
 * that move from frame to frame, so that it finds a few objects in each,
 * different ones. */
void test_tiny_ssd_frame (TestImage *t, gint w, gint h, guint i);

/* Writes @xml (and @bin when non-NULL) as model.xml/model.bin into a new
 * temporary folder; returns the .xml path. */
gchar *test_write_model_files (const char *xml, GBytes *bin);
/* Removes the folder test_write_model_files() made; frees @xml_path. */
void test_remove_model_files (gchar *xml_path);

G_END_DECLS
