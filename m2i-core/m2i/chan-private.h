/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* chan-private.h — the pixel-chain kernels of the M2I engine (not
 * installed): tasks that start on u8 pixels other than YUV — RGB/BGR
 * (interleaved or planar), the 4-byte formats (IL_RGBX8888, ...) and gray —
 * run in one pass, as csc-headed tasks do in fused.c:
 *
 *   [dropAlpha | gray] [convert] [resize] [permute] [norm]
 *
 * (norm after a convert; gray may also start on NV12/I420, reading their Y
 * plane). Each needed source row is split into planar u8 channel rows
 * (chan.c: dropAlpha, gray, de-interleaving), resized horizontally into a
 * small ring of rows, and every output row is one vertical pass plus the
 * finishing steps: the reference path's evaluation order, so u8 results
 * equal it bit for bit and fp16 ones within the norm's one ulp. Plain C
 * (the loops vectorize), except the SIMD row kernels of chan-fetch.h where
 * a resize on fp data ends in planes of it; the planner uses it for the
 * extended profile's fused pixel patterns and for CPU tasks of such ops. */
#pragma once

#include <m2i/m2i-format.h>
#include <m2i/m2i-ops.h>

G_BEGIN_DECLS

/* ---- channel rows (chan.c) ------------------------------------------------ */

/* How a source row becomes planar u8 channel rows. */
typedef enum {
  CHAN_PLANES,          /* planar (3 planes or gray): the rows as they are */
  CHAN_SPLIT,           /* interleaved 3 or 4 bytes per pixel: split into planes */
  CHAN_LUMA,            /* RGB-like pixels: Y = (299 R + 587 G + 114 B + 500) / 1000 */
  CHAN_LUMA_PLANE,      /* NV12 / I420: the Y row */
} ChanSource;

typedef struct {
  ChanSource kind;
  guint n_out;          /* channel rows produced: 3 or 1 */
  guint px, off;        /* interleaved: bytes per pixel, offset of channel 0 */
  guint r, g, b;        /* CHAN_LUMA: channel index of R, G and B in memory */
  gboolean planar_in;   /* CHAN_LUMA: the source is planar */
} ChanReader;

/* The reader for u8 pixels of @format, gray (@luma) or not. FALSE when
 * @format is no u8 pixel format it reads (fp data; YUV without @luma). */
gboolean m2i_chan_reader_init (ChanReader *rd, M2iFormat format, gboolean luma);

/* Row @y of @in as rd->n_out planar u8 rows of @n pixels from column @x0:
 * rows[c] points into @in (CHAN_PLANES, CHAN_LUMA_PLANE) or into @scratch
 * (n_out * n bytes). */
void m2i_chan_read_row (const ChanReader *rd, const M2iImage *in, gint y, gint x0, gint n,
    guint8 *scratch, const guint8 *rows[3]);

/* ---- the one-pass task (chan-fused.c) ---------------------------------------- */

typedef struct ChanFused ChanFused;

/* Whether the kernel runs @ops on @in into @out: u8 input (not YUV, unless
 * gray comes first), the ops in the order above with at least two of them
 * or a dropAlpha / gray, and no interleaved fp output. */
gboolean m2i_chan_fused_supported (const M2iImage *in, const M2iOp *ops, guint n_ops,
    const M2iImage *out);
ChanFused *m2i_chan_fused_new (const M2iImage *in, const M2iOp *ops, guint n_ops,
    const M2iImage *out, gint n_threads, GError **error);
void m2i_chan_fused_run (ChanFused *f, const M2iImage *in, M2iImage *out);
void m2i_chan_fused_free (ChanFused *f);
/* The level of the SIMD row kernels (chan-fetch.h) the task runs on: "avx512",
 * "avx2" or "c"; NULL when it splits rows into channel rows instead. */
const char *m2i_chan_fused_kernel (const ChanFused *f);

G_END_DECLS
