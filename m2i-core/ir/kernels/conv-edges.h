/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* conv-edges.h — a padded stride-1 convolution's B read in place, its
 * edges masked (not installed).
 *
 * The GEMM convolution (conv.c) reads row k = (ci, kh, kw) of a column
 * panel of B as the input shifted: grid column q of a plane w wide is the
 * output pixel (q / w, q % w), and tap (kh, kw) reads the input at q +
 * (kh·dh − pt)·w + kw·dw − pl. Inside the image that is the right pixel;
 * where the tap falls on a pad it is a pixel of another row (or channel),
 * which must read as 0. Rather than a zero-bordered copy of the whole
 * input, each panel is checked per tap: a tap whose lanes all read inside
 * the image is read in place; the others (the first and last rows' taps
 * above and below, the taps left and right of a row's ends) are copied
 * into the panel buffer with their pad lanes zeroed — a fraction of the
 * rows of a few panels, in L1, instead of a pass over the input.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Taps (kh·kw) a layer may have for the in-place reading. */
#define IR_EDGE_MAX_TAPS 64

/* One layer's geometry: input plane h × w, output width ow (<= w; grid
 * columns from ow to w are dropped), output rows oh, kernel kh × kw,
 * dilations, top and left pads. */
typedef struct {
  gint64 h, w, oh, ow;
  gint64 kh, kw, dh, dw, pt, pl;
} IrEdgeGeom;

/* For grid columns [n0, n0 + lanes) (lanes <= 64): valid[t] gets bit j set
 * when tap t = kh·kw_count + kw of column n0 + j is an output pixel
 * (column < ow, row < oh) reading inside the image. */
void ir_edge_tap_lanes (const IrEdgeGeom *g, gint64 n0, gint lanes, guint64 *valid);

/* dst[j] = src[at + j] where bit j of @valid is set, else 0, for j < @width
 * (<= 64); reads only the valid lanes. */
void ir_edge_copy_lanes (const float *src, gint64 at, guint64 valid, gint width, float *dst);

G_END_DECLS
