/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* m2i-tensor-print.h — how the command-line programs print an output
 * tensor: the top-k classes of a classifier-shaped output, a summary
 * (shape, min, max, mean, argmax) of any other; and how they write one to
 * a file. A static helper of the tools (not part of libm2icore). */
#pragma once

#include <m2i-core/ir/m2i-ir-types.h>
#include <stdio.h>

G_BEGIN_DECLS

/* TRUE for an f32 output of 2 to 100 000 values along one axis, every
 * other dim 1 ([1,1000], [1,1000,1,1]): class scores. */
gboolean m2i_tool_is_classifier (const M2iTensor *t);

/* "top K:" then one line per class, best first: index, score and its
 * label (@labels: NULL-terminated lines, or NULL). */
void m2i_tool_print_top_k (FILE *f, const M2iTensor *t, gint k, gchar **labels);

/* "output NAME: TYPE [dims]: min A max B mean C argmax I [i,j,...]" (the
 * statistics for numeric types; NaNs are skipped and counted). */
void m2i_tool_print_summary (FILE *f, const char *name, const M2iTensor *t);

/* Writes @t's raw data (its own type) as DIR/NAME.TYPE, NAME made safe for
 * a file name; the path written into *@path (free with g_free) when
 * non-NULL. FALSE with @error when the file cannot be written. */
gboolean m2i_tool_dump (const char *dir, const char *name, const M2iTensor *t, gchar **path,
    GError **error);

G_END_DECLS
