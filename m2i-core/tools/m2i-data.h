/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* m2i-data.h — data files for the command-line programs, the benchmarks and
 * the tests: whole files (gunzipped when they are gzip), the idx format of
 * MNIST-style datasets, and the NV12 frames the Fashion-MNIST demo draws.
 *
 * A static helper library (m2i_data_dep), not part of libm2icore: GLib and
 * GIO only, so that programs that do not link the core can use it too.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The contents of @path, decompressed when they start with the gzip magic
 * (1f 8b). NULL with @error (G_FILE_ERROR when the file cannot be read,
 * G_IO_ERROR when the gzip stream is broken). Free with g_bytes_unref(). */
GBytes *m2i_data_read (const char *path, GError **error);

/* Whether @data (@len bytes) starts as an idx file of unsigned bytes with
 * @n_dims dimensions: 00 00 08 n_dims. */
gboolean m2i_data_is_idx (const guint8 *data, gsize len, guint n_dims);

/* The samples of the idx file @file (unsigned bytes, @n_dims dimensions,
 * each a big-endian 32-bit count after the 4-byte magic): a new GBytes
 * viewing exactly dims[0] x ... x dims[n-1] bytes of @file, the counts into
 * @dims. NULL with @error (G_IO_ERROR_INVALID_DATA) when the magic differs or
 * the file is shorter than its counts say. @what names the file in the
 * message. */
GBytes *m2i_data_idx_samples (GBytes *file, guint n_dims, guint32 *dims, const char *what,
    GError **error);

/* Draws the @side x @side grey image @grey @scale times larger into the
 * tight NV12 frame @nv12 of (side*scale) x (side*scale): each pixel a
 * scale x scale block, Y = round(16 + p*219/255) (limited range), U = V = 128.
 * These are the frames of the Fashion-MNIST demo, its benchmark and tests. */
void m2i_data_grey_to_nv12 (const guint8 *grey, gint side, gint scale, guint8 *nv12);

/* A size as people write it on a command line: bytes, or a number with K,
 * M, G or T (powers of 1024; "KiB", "MB" and the like read the same), e.g.
 * "512M", "1.5G". FALSE with @error (G_OPTION_ERROR_BAD_VALUE) when @text
 * is none, is not positive or does not fit 64 bits. */
gboolean m2i_data_parse_size (const char *text, guint64 *out, GError **error);

G_END_DECLS
