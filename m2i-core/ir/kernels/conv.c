/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Convolution-1 and GroupConvolution-1 on 1-D and 2-D NC(H)W tensors.
 *
 * Each group is a matrix product: the group's weights as A (C_out/G rows,
 * C_in/G·KH·KW columns, packed once in infer()), the input as B (one column
 * per output pixel, gathered im2col-style one micro-panel at a time straight
 * into the packed layout, so no im2col buffer exists), C the output planes.
 * Layers with a KxK kernel read B in place instead: the input (padded,
 * and for strides over 1 copied into planes of every sh-th row and sw-th
 * column per kernel column, which makes them stride 1) shifted per tap.
 * Work is split over output column panels across the worker pool.
 * Depthwise and small-group layers skip the matrix product and run
 * directly (conv-dw.h); 3×3 stride-1 layers with enough
 * channels and constant weights run as Winograd F(2×2, 3×3)
 * (conv-winograd.h), 16 smaller products instead of this one; stride-1
 * 1×K and K×1 layers keeping the plane run on their own register tiles
 * over the same packed weights (conv-tap.h); layers of a few output
 * pixels run with output channels along the vector (conv-small.h).
 */
#include "kernels-private.h"
#include "gemm.h"
#include "conv-winograd.h"
#include "conv-winocol.h"
#include "conv-int8.h"
#include "conv-dw.h"
#include "conv-edges.h"
#include "conv-tap.h"
#include "conv-small.h"
#include <base/m2i-align.h>
#include <base/m2i-parallel.h>

#include <string.h>

typedef enum {
  CONV_DEPTHWISE,      /* few input channels per group: direct (conv-dw.h) */
  CONV_SHIFTED,        /* B rows read in place from the (padded, phased) input */
  CONV_IM2COL,         /* otherwise: B panels gathered im2col-style */
  CONV_WINOGRAD,       /* 3×3 at stride 1: F(2×2, 3×3) (conv-winograd.h) */
  CONV_WINOCOL,        /* 3×1 and 1×3 at stride 1: F(4, 3) along the kernel (conv-winocol.h) */
  CONV_SMALL,          /* a small output plane: channels along the vector (conv-small.h) */
} ConvMode;

#define MAX_SLOTS 16                   /* row phases × kernel columns */
#define MAX_COPIES 8                   /* column copies (kernels up to 8 wide) */
/* Column copies (stride 1) read each kernel column's B rows from its
 * own plane, where the shifted source shares cache lines between
 * them (and im2col packs them): a column panel's rows then span about
 * kw times more lines. Up to this K the layer runs faster; above it
 * (squeezenet's fire6-fire9 3×3 layers, K 432-576) it ran 4-6 % faster
 * alone but up to 6 % slower inside the network, where the weights
 * stream through the same caches. At K 288 it is a wash for squeezenet's
 * fire4/fire5 and 3 % faster for Fashion-MNIST's conv2. (Strided slots
 * have no such limit: their alternative, gathering, was slower at every
 * K measured.) */
#define MAX_K_PLANES 320
/* Gathered layers of up to this many output pixels read B through a table
 * of offsets per tap (ConvState.gather): a 5×5 output at stride 2 is five
 * runs of five pixels per row of B, and working the runs out was a third
 * of vehicle-attributes-recognition's 128×9×9 stride-2 layer. */
#define GATHER_MAX_PIXELS 256

typedef struct {
  const M2iGemmArch *arch;
  ConvMode mode;
  gint64 batch, c_in, h, w;            /* input; 1-D layers have h = 1 */
  gint64 c_out, oh, ow;
  gint64 kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
  gint64 groups, cin_g, cout_g;
  gint64 k;                            /* cin_g · kh · kw */
  float *packed;                       /* packed A per group (GEMM modes), or NULL */
  gsize packed_group;                  /* floats per group in packed */
  gint slices;
  gsize bbuf_floats, strip_floats;     /* per slice, multiples of 16 */
  /* CONV_SHIFTED: output pixels live on a grid as wide as the source rows
   * (hp × wp, the input plus its pads); B row k = (ci, kh, kw) is that
   * source shifted by off[k]; grid columns past ow are dropped. In the
   * padded copy each row is the image row from column x0 on, then zeros
   * to wp; the zeros at a row's end are also the left pad of the next row
   * (x0 = 0, wp = w + max (pl, pr)) when the pads allow, so a 3×3 layer
   * with pads of 1 computes one extra grid column per row, not two. A
   * guard of `guard` zeros precedes the first plane (read by the first
   * row's left taps). */
  /* Strided layers take the same path through slots: planes of ow
   * columns, slot (pr, kw) holding the padded pixels (pr + sh·i,
   * kw·dw + sw·x), so tap (kh, kw) of output (y, x) is pixel
   * (y + kh·dh / sh, x) of slot (kh·dh mod sh, kw): stride 1 again, rows
   * as wide as the output (whole-vector stores), with no gathering. Only
   * the slots some tap reads are kept (n_slots of them, slot_row[] and
   * slot_col[] = kw·dw). */
  /* Padded layers at stride 1 drop the pad columns instead, when the pads
   * allow: rows keep their width (wp = w = ow), so the output is stored by
   * whole vectors, without runs, and no grid column is wasted (a 14-wide
   * plane's pad column is 7 % of the grid); a tap reading past a row's end
   * wraps into the next (or previous)
   * row, which is right once the columns it wraps onto read as zeros. So
   * each channel is kept as n_copies copies, one per set of columns some
   * taps need zeroed ([copy_z0, copy_z1): the last -j columns for a tap
   * j columns left of its output, the first j for one j right of it, none
   * for the middle taps), each after `gap` zeros (the first and last rows'
   * wrapped reads); tap kw reads copy tap_copy[kw]. */
  M2iKFusion fused;                    /* ir_k_fuse_bias_relu (), _swish () */
  gboolean padded;                     /* the source is a padded copy in scratch */
  gint64 hp, wp, plane;                /* source plane: hp × wp, plane = hp · wp */
  gint64 x0, guard;
  gint64 chan;                         /* floats per source channel (its planes) */
  gint n_slots;
  /* Strided slots of large layers are made a band of output rows at a
   * time (conv_band_rows ()): band_rows output rows, their slot planes
   * band_rows + halo rows high (plane = that · wp), one band buffer per
   * slice; 0 when the whole planes are made at once. */
  gint64 band_rows, halo;
  gint64 slot_row[MAX_SLOTS], slot_col[MAX_SLOTS];
  gint n_copies;                       /* 0: not in column copies */
  gint64 gap;
  gint64 copy_z0[MAX_COPIES], copy_z1[MAX_COPIES];
  gint tap_copy[MAX_COPIES];
  /* CONV_IM2COL on small planes: for tap t = (kh, kw) and output pixel
   * j, the input offset read within its channel's plane, or -1 for a pad
   * (kh·kw × oh·ow entries; NULL on larger planes, which gather runs of
   * output rows). */
  gint32 *gather;
  gint32 *off;                         /* k entries */
  gint32 *off_hi;                      /* max of off[0..k] */
  /* CONV_SHIFTED read in place, the taps that reach a pad copied with
   * those lanes zeroed (conv-edges.h): no padded copy of the input. */
  gboolean edges;
  IrEdgeGeom edge_geom;
  /* Read in place by the direct 1×K / K×1 tiles (conv-tap.h) instead of
   * the GEMM, or NULL. */
  IrTapPanel tap;
  IrTapGeom tap_geom;
  M2iWinograd *wino;                   /* CONV_WINOGRAD */
  IrWinoCol *winocol;                  /* CONV_WINOCOL */
  IrSmallConv *small;                  /* CONV_SMALL */
  IrDwGeom dwg;                        /* CONV_DEPTHWISE */
  IrDwRows dw_rows;
  IrDwPlane dw_plane;                  /* or NULL: rows only */
} ConvState;

static void
conv_state_free (gpointer p)
{
  ConvState *s = p;
  if (!s)
    return;
  g_free (s->packed);
  g_free (s->gather);
  g_free (s->off);
  g_free (s->off_hi);
  g_free (s->fused.bias);
  ir_winograd_free (s->wino);
  ir_winocol_free (s->winocol);
  ir_small_free (s->small);
  ir_dw_geom_clear (&s->dwg);
  g_free (s);
}

/* Packs the weights of every group (layout [G][C_out/G][C_in/G·KH·KW]). */
static void
conv_pack_weights (const ConvState *s, const float *wts, float *dst)
{
  for (gint64 g = 0; g < s->groups; g++)
    ir_gemm_pack_a (s->arch, wts + g * s->cout_g * s->k, s->k, 1,
        (gint) s->cout_g, (gint) s->k, dst + g * s->packed_group);
}

/* Sets up column copies (see ConvState) for a stride-1 layer when they
 * apply: pads on the sides no wider than the kernel reaches (every output
 * column then fits in a row of w) and taps less than a row apart. They
 * cost kw copies of the input instead of one, next to kh·kw·C_out
 * multiply-adds per input value: 56×56 planes of squeezenet's 3×3 layers
 * run 7 % faster, 14×14 ones 5 %, the Fashion-MNIST model's first layer 30 %. */
static gboolean
conv_column_copies_apply (const ConvState *s)
{
  gint64 span = (s->kw - 1) * s->dw;
  return (s->pl || s->pr) && s->kw <= MAX_COPIES && s->k <= MAX_K_PLANES &&
      s->pl + s->pr <= span && span < s->w && s->ow <= s->w &&
      s->c_in * s->kw * (span + 16 + (s->h + s->pt + s->pb) * s->w) <= G_MAXINT / 4;
}

static gboolean
conv_column_copies (ConvState *s)
{
  gint64 span = (s->kw - 1) * s->dw;
  if (!conv_column_copies_apply (s))
    return FALSE;
  for (gint64 kx = 0; kx < s->kw; kx++) {
    gint64 j = kx * s->dw - s->pl, z0 = 0, z1 = 0;
    if (j < 0) {
      z0 = s->w + j;
      z1 = s->w;
    } else if (j > 0 && s->ow - 1 + j >= s->w) {
      z1 = j;
    }
    gint c = 0;
    while (c < s->n_copies && (s->copy_z0[c] != z0 || s->copy_z1[c] != z1))
      c++;
    if (c == s->n_copies) {
      s->copy_z0[c] = z0;
      s->copy_z1[c] = z1;
      s->n_copies++;
    }
    s->tap_copy[kx] = c;
  }
  s->padded = TRUE;
  s->hp = s->h + s->pt + s->pb;
  s->wp = s->w;
  s->plane = s->hp * s->wp;
  s->gap = (gint64) m2i_align_up (MAX (s->pl, span - s->pl), 16);
  s->chan = s->n_copies * (s->gap + s->plane);
  s->off = g_new (gint32, s->k);
  for (gint64 kk = 0; kk < s->k; kk++) {
    gint64 ci = kk / (s->kh * s->kw), r = kk % (s->kh * s->kw);
    gint64 kh = r / s->kw, kw = r % s->kw;
    s->off[kk] = (gint32) (ci * s->chan + s->tap_copy[kw] * (s->gap + s->plane) + s->gap +
        kh * s->dh * s->wp + kw * s->dw - s->pl);
  }
  return TRUE;
}

/* Whether reading in place (conv-edges.h) copies fewer floats than the
 * padded source would: the rows of every panel whose tap reaches a pad
 * (or the last panel's, cut short), against the input padded once, or in
 * about kw column copies. On lpr's 64×11×90 planes the 1×3 layer copies
 * a third as much and runs 13 % faster, the 3×1 a fifth and 3-6 %; its
 * 128×1×88 1×13 layer (K 1664) would copy six times as much, the rows of
 * a few input rows blown up thirteen times out of L1, and ran 11 % slower. */
static gboolean
conv_edges_wanted (const ConvState *s, const IrEdgeGeom *g)
{
  gint nr = s->arch->nr;
  gint64 grid = s->oh * s->w, taps = s->kh * s->kw, copied = 0;
  guint64 valid[IR_EDGE_MAX_TAPS], all = nr >= 64 ? ~(guint64) 0 : ((guint64) 1 << nr) - 1;
  for (gint64 n0 = 0; n0 < grid; n0 += nr) {
    ir_edge_tap_lanes (g, n0, (gint) MIN (nr, grid - n0), valid);
    for (gint64 t = 0; t < taps; t++)
      copied += valid[t] != all;
  }
  gint64 floats = copied * nr * s->c_in;         /* every panel has c_in / groups · taps rows */
  gint64 padded = s->c_in * (s->h + s->pt + s->pb) * (s->w + s->pl + s->pr);
  return floats < (conv_column_copies_apply (s) ? s->kw : 1) * padded;
}

/* Sets up the in-place reading of a padded stride-1 layer (conv-edges.h)
 * when it applies: output rows no wider than the input's (grid rows are
 * the input rows), at most IR_EDGE_MAX_TAPS taps, and a grid of at most
 * 2^22 columns (conv_edges_wanted () visits every panel: a hostile plane
 * must not make compiling slow). 1×K and K×1 layers keeping the plane's
 * size are read in place by their direct tiles (conv-tap.h), which copy
 * nothing. */
static gboolean
conv_edges (ConvState *s)
{
  IrEdgeGeom g = { s->h, s->w, s->oh, s->ow, s->kh, s->kw, s->dh, s->dw, s->pt, s->pl };
  gboolean tap = ir_tap_applies (s->h, s->w, s->oh, s->ow, s->kh, s->kw, s->sh, s->sw, s->k);
  if (s->sh != 1 || s->sw != 1 || !(s->pt || s->pb || s->pl || s->pr) || s->ow > s->w ||
      s->oh > s->h || s->kh * s->kw > IR_EDGE_MAX_TAPS || s->arch->nr > 64 ||
      s->oh * s->w > (1 << 22) ||
      (!tap && !conv_edges_wanted (s, &g)))
    return FALSE;
  if (tap) {
    ir_tap_geom_init (&s->tap_geom, &g, s->cin_g, s->arch);
    s->tap = ir_tap_panel_for (s->arch);
  }
  s->edges = TRUE;
  s->edge_geom = g;
  s->hp = s->h;
  s->wp = s->w;
  s->plane = s->chan = s->h * s->w;
  s->off = g_new (gint32, s->k);
  for (gint64 kk = 0; kk < s->k; kk++) {
    gint64 ci = kk / (s->kh * s->kw), r = kk % (s->kh * s->kw);
    s->off[kk] = (gint32) (ci * s->plane + ((r / s->kw) * s->dh - s->pt) * s->w +
        (r % s->kw) * s->dw - s->pl);
  }
  return TRUE;
}

/* Bytes of strided slots above which they are made a band of output
 * rows at a time, and the size of a band's: the band is copied and then
 * multiplied while it is in L2 (1 MiB a core on Zen 5), instead of the
 * whole copy going out to L3 or memory and coming back. A 6×6 stride-2
 * layer on a 416×416 input has 6.2 MiB of slots (3 channels × 12); made
 * whole, it ran 1.8 times slower inside its network than alone. */
#define BAND_MIN_BYTES (512 * 1024)
#define BAND_BYTES (384 * 1024)

/* The output rows of a band of strided slots (ConvState.band_rows), or 0
 * for the whole planes at once: slots over BAND_MIN_BYTES, bands of about
 * BAND_BYTES but at least 8 column panels (each band's last panel is
 * partly empty), their number a multiple of the slices. */
static gint64
conv_band_rows (const ConvState *s)
{
  gint64 row = s->c_in * s->n_slots * s->wp * (gint64) sizeof (float);
  /* On several threads, layers of at least 8 column panels a slice take
   * bands whatever their size: each slice then makes the slots its rows
   * read in its own buffer, where whole planes are made once (on the
   * first thread alone when they have few channels) and read by every
   * core (vehicle-attributes' 7×7 stride-2 stem, 3 channels: the second
   * thread's half of the product took 1.3 times the first's, reading the
   * first core's copy). */
  gint64 panels = (s->oh * s->wp + s->arch->nr - 1) / s->arch->nr;
  if (row * s->hp <= BAND_MIN_BYTES && (s->slices < 2 || panels < 8 * s->slices))
    return 0;
  gint64 rows = MAX (BAND_BYTES / row - s->halo, (8 * s->arch->nr + s->wp - 1) / s->wp);
  rows = MAX (rows, 1);
  gint64 bands = (s->oh + rows - 1) / rows;
  bands = (bands + s->slices - 1) / s->slices * s->slices;
  rows = (s->oh + bands - 1) / bands;
  return rows < s->oh ? rows : 0;
}

/* A padded stride-1 layer whose output fits in one column panel, where
 * the shifted grid (rows as wide as the padded input) takes at least twice
 * the vectors of the output pixels themselves (head-pose-estimation's
 * 4×4 plane: 20 grid columns, two vectors, for 16 pixels, one), and column
 * copies (which keep the rows' width) do not apply: gathered (im2col)
 * instead, which computes only the pixels — 4.7 of its 9.4 MFLOP saved for
 * a few thousand row copies. */
static gboolean
conv_small_padded_plane (const ConvState *s)
{
  gint64 step = s->arch->step, pixels = s->oh * s->ow;
  gint64 grid = s->oh * (s->w + MAX (s->pl, s->pr));
  return s->sh == 1 && s->sw == 1 && (s->pl || s->pr) && s->k > MAX_K_PLANES &&
      pixels <= s->arch->nr &&
      (grid + step - 1) / step >= 2 * ((pixels + step - 1) / step);
}

static gboolean
conv_infer_common (M2iOpContext *ctx, gboolean grouped, GError **error)
{
  if (!ir_k_check_arity (ctx, 2, 2, 1, 1, error) ||
      !ir_k_check_f32 (ctx, 0, error) || !ir_k_check_f32 (ctx, 1, error) ||
      !ir_k_check_rank (ctx, 0, 3, 5, error))
    return FALSE;
  const M2iShape *in = &ctx->inputs[0].shape, *ws = &ctx->inputs[1].shape;
  gint spatial = in->rank - 2;
  if (spatial > 2) {
    m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, ctx->node,
        "input %s: only 1-D and 2-D convolutions are supported",
        ir_k_shape_str (in, 0));
    return FALSE;
  }
  gint want_rank = in->rank + (grouped ? 1 : 0);
  if (ws->rank != want_rank) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "filter shape %s does not match input %s: expected rank %d (%s)",
        ir_k_shape_str (ws, 0), ir_k_shape_str (in, 1), want_rank,
        grouped ? "[G, C_out/G, C_in/G, kernel...]" : "[C_out, C_in, kernel...]");
    return FALSE;
  }
  gint64 groups = grouped ? ws->dims[0] : 1;
  gint64 cout_g = ws->dims[grouped ? 1 : 0];
  gint64 cin_g = ws->dims[grouped ? 2 : 1];
  if (groups < 1 || cout_g < 1 || cin_g * groups != in->dims[1]) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "filter shape %s does not match input %s: %" G_GINT64_FORMAT
        " groups of %" G_GINT64_FORMAT " input channels, the input has %" G_GINT64_FORMAT,
        ir_k_shape_str (ws, 0), ir_k_shape_str (in, 1), groups, cin_g, in->dims[1]);
    return FALSE;
  }

  M2iWindow win;
  if (!ir_k_window_attrs (ctx, spatial, TRUE, NULL, &win, error))
    return FALSE;
  gint64 in_sp[2], out_sp[2];
  for (gint i = 0; i < spatial; i++) {
    in_sp[i] = in->dims[2 + i];
    win.kernel[i] = ws->dims[ws->rank - spatial + i];
  }
  if (!ir_k_window_output (ctx, &win, in_sp, out_sp, error))
    return FALSE;

  ConvState *s = g_new0 (ConvState, 1);
  s->arch = ir_gemm_arch ();
  s->batch = in->dims[0];
  s->c_in = in->dims[1];
  s->groups = groups;
  s->cin_g = cin_g;
  s->cout_g = cout_g;
  s->c_out = groups * cout_g;
  gint a = spatial == 2 ? 0 : -1;       /* 1-D: the H axis is a unit one */
  s->h = a < 0 ? 1 : in_sp[0];
  s->w = in_sp[spatial - 1];
  s->oh = a < 0 ? 1 : out_sp[0];
  s->ow = out_sp[spatial - 1];
  s->kh = a < 0 ? 1 : win.kernel[0];
  s->kw = win.kernel[spatial - 1];
  s->sh = a < 0 ? 1 : win.strides[0];
  s->sw = win.strides[spatial - 1];
  s->dh = a < 0 ? 1 : win.dilations[0];
  s->dw = win.dilations[spatial - 1];
  s->pt = a < 0 ? 0 : win.pads_begin[0];
  s->pl = win.pads_begin[spatial - 1];
  s->pb = a < 0 ? 0 : win.pads_end[0];
  s->pr = win.pads_end[spatial - 1];
  s->k = cin_g * s->kh * s->kw;
  /* pads and strides reach 2^24 (ir_k_window_attrs): the padded input is
   * multiplied out checked */
  gint64 padded;
  if (s->oh * s->ow > G_MAXINT / 4 || s->k > G_MAXINT / 4 || s->c_out > G_MAXINT / 4 ||
      !ir_mul_i64 (s->c_in, s->h + s->pt + s->pb, &padded) ||
      !ir_mul_i64 (padded, s->w + s->pl + s->pr, &padded) || padded > G_MAXINT / 4) {
    conv_state_free (s);
    m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, ctx->node,
        "input %s with filter %s is too large", ir_k_shape_str (in, 0),
        ir_k_shape_str (ws, 1));
    return FALSE;
  }
  s->slices = ir_k_threads (ctx);
  if (ir_dw_applies (groups, cin_g, cout_g))
    s->mode = CONV_DEPTHWISE;
  else if (ctx->inputs[1].data && spatial == 2 &&
      ir_winograd_applies (s->kh, s->kw, s->sh, s->sw, s->dh, s->dw, s->groups, s->c_in,
          s->c_out, s->oh, s->ow))
    s->mode = CONV_WINOGRAD;
  else if (ctx->inputs[1].data && spatial == 2 &&
      ir_winocol_applies (s->kh, s->kw, s->sh, s->sw, s->dh, s->dw, s->groups, s->pt, s->pb,
          s->pl, s->pr, s->h, s->w, s->oh, s->ow, s->c_in, s->c_out))
    s->mode = CONV_WINOCOL;
  else if (ctx->inputs[1].data && ir_small_applies (groups, s->c_in, s->h, s->w, s->c_out,
          s->oh, s->ow, s->kh, s->kw, s->sh, s->sw, s->pt, s->pl))
    s->mode = CONV_SMALL;
  else if (s->oh * s->ow <= M2I_GEMM_TAIL_MAX && s->arch->tail &&
      !(s->kh == 1 && s->kw == 1 && s->sh == 1 && s->sw == 1 &&
          !(s->pt || s->pl || s->pb || s->pr)))
    s->mode = CONV_IM2COL;        /* a few pixels: exactly those columns, the tail kernel
                                   * (pointwise: B in place, CONV_SHIFTED, no gathering) */
  else if (conv_small_padded_plane (s))
    s->mode = CONV_IM2COL;        /* a few pixels: a grid as wide as the padded rows would
                                   * compute up to twice the columns */
  else if ((s->sh == 1 && s->sw == 1) ||
      ((s->kh > 1 || s->kw > 1) &&
          MIN (s->sh, s->kh) * s->kw <= MAX_SLOTS &&
          s->c_in * MIN (s->sh, s->kh) * s->kw * s->ow *
          ((s->h + s->pt + s->pb + s->sh - 1) / s->sh) <= G_MAXINT / 4))
    s->mode = CONV_SHIFTED;       /* strided through slots, but not 1×1; at any K (gathered,
                                   * YOLOv5n's 64→128 3×3 stride-2 layer ran 20 % slower in
                                   * its network, 3×3 layers of K 1152 on 13×13 10 %,
                                   * vehicle-attributes' 64×18×18 and 128×9×9 stride-2
                                   * layers 18 % and 10 %) */
  else
    s->mode = CONV_IM2COL;

  if (s->mode == CONV_DEPTHWISE) {
    s->dwg = (IrDwGeom) { s->h, s->w, s->oh, s->ow, s->kh, s->kw, s->sh, s->sw, s->dh, s->dw,
      s->pt, s->pl, cin_g };
    ir_dw_geom_init (&s->dwg);
    s->dw_rows = ir_dw_rows_for (&s->dwg, ir_k_level (M2I_KERNELS_DWCONV));
    s->dw_plane = ir_dw_plane_for (&s->dwg, ir_k_level (M2I_KERNELS_DWCONV));
    ctx->scratch_bytes = s->slices * ir_dw_scratch_floats (&s->dwg) * sizeof (float);
  } else if (s->mode == CONV_WINOGRAD) {
    s->wino = ir_winograd_new (s->arch, ctx->inputs[1].data, s->c_out, s->c_in, s->h, s->w,
        s->pt, s->pl, s->oh, s->ow, s->slices);
    ctx->scratch_bytes = ir_winograd_scratch_bytes (s->wino, s->slices);
  } else if (s->mode == CONV_WINOCOL) {
    s->winocol = ir_winocol_new (s->arch, ctx->inputs[1].data, s->c_out, s->c_in, s->h, s->w,
        s->pt, s->pl, s->oh, s->ow, s->kw == 3, s->slices);
    ctx->scratch_bytes = ir_winocol_scratch_bytes (s->winocol, s->slices);
  } else if (s->mode == CONV_SMALL) {
    s->small = ir_small_new (ir_k_level (M2I_KERNELS_GEMM), ctx->inputs[1].data, s->c_in, s->h,
        s->w, s->c_out, s->oh, s->ow, s->kh, s->kw, s->sh, s->sw, s->dh, s->dw, s->pt, s->pl);
    ctx->scratch_bytes = ir_small_scratch_bytes (s->small);
  } else if (s->mode != CONV_DEPTHWISE) {
    s->packed_group = ir_gemm_packed_a_size (s->arch, (gint) cout_g, (gint) s->k);
    s->bbuf_floats = m2i_align_up ((gsize) s->arch->kc * s->arch->nr, 16);
    s->strip_floats = m2i_align_up (ir_gemm_strip_size (s->arch), 16);
    ctx->scratch_bytes = s->slices * (s->bbuf_floats + s->strip_floats) * sizeof (float);
    if (ctx->inputs[1].data) {
      s->packed = g_new (float, s->packed_group * groups);
      conv_pack_weights (s, ctx->inputs[1].data, s->packed);
    } else {
      /* Weights computed at run time: pack them into scratch each time. */
      ctx->scratch_bytes += s->packed_group * groups * sizeof (float);
    }
  }
  if (s->mode == CONV_IM2COL && s->oh * s->ow <= GATHER_MAX_PIXELS) {
    gint64 ohw = s->oh * s->ow;
    s->gather = g_new (gint32, s->kh * s->kw * ohw);
    for (gint64 t = 0; t < s->kh * s->kw; t++)
      for (gint64 j = 0; j < ohw; j++) {
        gint64 ih = j / s->ow * s->sh - s->pt + t / s->kw * s->dh;
        gint64 iw = j % s->ow * s->sw - s->pl + t % s->kw * s->dw;
        s->gather[t * ohw + j] = ih >= 0 && ih < s->h && iw >= 0 && iw < s->w ?
            (gint32) (ih * s->w + iw) : -1;
      }
  }
  if (s->mode == CONV_SHIFTED && (s->sh > 1 || s->sw > 1)) {
    s->padded = TRUE;
    s->hp = (s->h + s->pt + s->pb + s->sh - 1) / s->sh;
    s->wp = s->ow;
    s->plane = s->hp * s->wp;
    /* Row phases (kh·dh mod sh) take at most min (sh, kh) values: at most
     * MAX_SLOTS slots (checked when the mode was chosen). */
    for (gint64 kk = 0; kk < s->kh * s->kw; kk++) {
      gint64 pr = (kk / s->kw * s->dh) % s->sh, pc = kk % s->kw * s->dw;
      gint p = 0;
      while (p < s->n_slots && (s->slot_row[p] != pr || s->slot_col[p] != pc))
        p++;
      if (p == s->n_slots) {
        s->slot_row[p] = pr;
        s->slot_col[p] = pc;
        s->n_slots++;
      }
    }
    s->halo = (s->kh - 1) * s->dh / s->sh;
    s->band_rows = conv_band_rows (s);
    if (s->band_rows)
      s->plane = (s->band_rows + s->halo) * s->wp;
    s->chan = s->n_slots * s->plane;
    s->off = g_new (gint32, s->k);
    for (gint64 kk = 0; kk < s->k; kk++) {
      gint64 ci = kk / (s->kh * s->kw), r = kk % (s->kh * s->kw);
      gint64 kh = r / s->kw, kw = r % s->kw, pr = (kh * s->dh) % s->sh;
      gint p = 0;
      while (s->slot_row[p] != pr || s->slot_col[p] != kw * s->dw)
        p++;
      s->off[kk] = (gint32) (ci * s->chan + p * s->plane + (kh * s->dh / s->sh) * s->wp);
    }
    ctx->scratch_bytes += (gsize) s->c_in * s->chan * (s->band_rows ? s->slices : 1) *
        sizeof (float);
  } else if (s->mode == CONV_SHIFTED && conv_edges (s)) {
    /* nothing copied: the input is read in place */
  } else if (s->mode == CONV_SHIFTED && conv_column_copies (s)) {
    ctx->scratch_bytes += (gsize) (s->c_in * s->chan + s->gap) * sizeof (float);
  } else if (s->mode == CONV_SHIFTED) {
    s->padded = s->pt || s->pb || s->pl || s->pr;
    s->hp = s->h + s->pt + s->pb;
    /* Shared side pads: a left tap at column -j (j <= pl) reads the zeros
     * at the previous row's end, a right tap at w - 1 + j (j <= pr) those
     * of its own row; both need max (pl, pr) zeros per row. Every output
     * column must then still fit in the row: ow <= wp, i.e. min (pl, pr)
     * <= (kw - 1)·dw (always, unless pads exceed the kernel). */
    gboolean shared = s->padded && MIN (s->pl, s->pr) <= (s->kw - 1) * s->dw;
    s->x0 = shared ? 0 : s->pl;
    s->wp = shared ? s->w + MAX (s->pl, s->pr) : s->w + s->pl + s->pr;
    s->guard = shared ? (gint64) m2i_align_up (s->pl, 16) : 0;
    s->plane = s->chan = s->hp * s->wp;
    s->off = g_new (gint32, s->k);
    for (gint64 kk = 0; kk < s->k; kk++) {
      gint64 ci = kk / (s->kh * s->kw), r = kk % (s->kh * s->kw);
      s->off[kk] = (gint32) (ci * s->plane + (r / s->kw) * s->dh * s->wp +
          (r % s->kw) * s->dw - s->pl + s->x0);
    }
    if (s->padded)
      ctx->scratch_bytes += (gsize) (s->guard + s->c_in * s->plane) * sizeof (float);
  }
  if (s->mode == CONV_SHIFTED) {
    s->off_hi = g_new (gint32, s->k);
    for (gint64 kk = 0; kk < s->k; kk++)
      s->off_hi[kk] = kk ? MAX (s->off_hi[kk - 1], s->off[kk]) : s->off[kk];
  }

  M2iTensor *out = &ctx->outputs[0];
  out->type = M2I_ET_F32;
  out->shape.rank = in->rank;
  out->shape.dims[0] = s->batch;
  out->shape.dims[1] = s->c_out;
  for (gint i = 0; i < spatial; i++)
    out->shape.dims[2 + i] = out_sp[i];
  ctx->state = s;
  return TRUE;
}

static gboolean
conv_infer (M2iOpContext *ctx, GError **error)
{
  return conv_infer_common (ctx, FALSE, error);
}

static gboolean
group_conv_infer (M2iOpContext *ctx, GError **error)
{
  return conv_infer_common (ctx, TRUE, error);
}

/* ---- GEMM paths ------------------------------------------------------ */

typedef struct {
  const ConvState *s;
  const float *in;                     /* source channels of this image and group */
  gint64 limit;                        /* floats readable from in (shifted mode) */
  gint width;                          /* columns of a B row the kernel reads */
  gint32 *table;                       /* M2I_GEMM_MAX_KC entries (conv_edges_b) */
} ConvPanel;

#if defined(__x86_64__) && defined(__GNUC__)
#include "row-x86.h"

/* d[t] = row[iw0 + t·sw] (0 outside the row) for t < count, 16 at a time;
 * @avail is how many floats may be read from @row on. */
__attribute__ ((target ("avx512f,avx512vl,avx512bw,avx512dq")))
static void
im2col_run_avx512 (const float *row, gint64 iw0, gint64 sw, gint64 w, gint64 avail,
    float *d, gint count)
{
  gint64 span = sw == 2 ? 32 : 16;
  for (gint t = 0; t < count; t += 16) {
    gint n = MIN (16, count - t);
    __mmask16 m = (__mmask16) ((1u << n) - 1), ok;
    gint64 p0 = iw0 + t * sw;
    gboolean fast = p0 >= 0 && p0 + (n - 1) * sw < w && p0 + span <= avail;
    _mm512_mask_storeu_ps (d + t, m, ir_k_load_row16 (row, p0, sw, w, fast, m, &ok));
  }
}
#endif

/* d[j] = src[ix[j]], or 0 where ix[j] is -1, for j < n (ConvState.gather). */
M2I_K_INLINE void
gather_row_c_body (const float *src, const gint32 *ix, gint n, float *d)
{
  for (gint j = 0; j < n; j++)
    d[j] = ix[j] >= 0 ? src[ix[j]] : 0.0f;
}
M2I_K_SIMD_CLONES (gather_row_c, (const float *src, const gint32 *ix, gint n, float *d),
    (src, ix, n, d))

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__ ((target ("avx512f")))
static void
gather_row_avx512 (const float *src, const gint32 *ix, gint n, float *d)
{
  for (gint j = 0; j < n; j += 16) {
    __mmask16 m = (__mmask16) ((1u << MIN (16, n - j)) - 1);
    __m512i idx = _mm512_maskz_loadu_epi32 (m, ix + j);
    __mmask16 ok = _mm512_mask_cmpge_epi32_mask (m, idx, _mm512_setzero_si512 ());
    _mm512_mask_storeu_ps (d + j, m, _mm512_mask_i32gather_ps (_mm512_setzero_ps (), ok, idx,
            src, 4));
  }
}
#endif

static void
gather_row (const float *src, const gint32 *ix, gint n, float *d)
{
#if defined(__x86_64__) && defined(__GNUC__)
  if (m2i_cpu_flags () & M2I_CPU_AVX512F) {
    gather_row_avx512 (src, ix, n, d);
    return;
  }
#endif
  gather_row_c (src, ix, n, d);
}

/* CONV_IM2COL: gathers rows [k0, k0+kc) of the implicit im2col matrix,
 * columns (output pixels) [n0, n0+ncols), into a [kc][nr] micro-panel. */
static const float *
conv_im2col_b (gpointer user, gint k0, gint kc, gint n0, gint ncols, float *buf,
    const gint32 **off)
{
  const ConvPanel *cp = user;
  const ConvState *s = cp->s;
  gint nr = s->arch->nr;
  gsize plane = (gsize) s->h * s->w;

  if (s->gather) {
    gint64 khw = s->kh * s->kw, ohw = s->oh * s->ow;
    for (gint p = 0; p < kc; p++) {
      gint64 kk = k0 + p;
      gather_row (cp->in + kk / khw * plane, s->gather + kk % khw * ohw + n0, ncols,
          buf + (gsize) p * nr);
      memset (buf + (gsize) p * nr + ncols, 0, (cp->width - ncols) * sizeof (float));
    }
    *off = ir_gemm_packed_offsets (s->arch);
    return buf;
  }

  /* The panel's pixels as runs along output rows. */
  struct { gint64 oh, ow0; gint j0, count; } runs[M2I_GEMM_MAX_NR];
  gint n_runs = 0;
  for (gint j = 0; j < ncols;) {
    gint64 p = n0 + j;
    gint64 oh = p / s->ow, ow0 = p % s->ow;
    gint count = (gint) MIN (ncols - j, s->ow - ow0);
    runs[n_runs].oh = oh;
    runs[n_runs].ow0 = ow0;
    runs[n_runs].j0 = j;
    runs[n_runs].count = count;
    n_runs++;
    j += count;
  }

  gint64 khw = s->kh * s->kw;
#if defined(__x86_64__) && defined(__GNUC__)
  gboolean avx512 = (m2i_cpu_flags () & M2I_CPU_AVX512F) != 0;
#endif
  for (gint p = 0; p < kc; p++) {
    gint64 kk = k0 + p;
    gint64 ci = kk / khw, r = kk % khw;
    gint64 kh = r / s->kw, kw = r % s->kw;
    const float *src = cp->in + ci * plane;
    float *dst = buf + (gsize) p * nr;
    for (gint q = 0; q < n_runs; q++) {
      float *d = dst + runs[q].j0;
      gint count = runs[q].count;
      gint64 ih = runs[q].oh * s->sh - s->pt + kh * s->dh;
      if (ih < 0 || ih >= s->h) {
        memset (d, 0, count * sizeof (float));
        continue;
      }
      const float *row = src + ih * s->w;
      gint64 iw0 = runs[q].ow0 * s->sw - s->pl + kw * s->dw;
#if defined(__x86_64__) && defined(__GNUC__)
      if (avx512) {
        im2col_run_avx512 (row, iw0, s->sw, s->w, (gint64) plane - ih * s->w, d, count);
        continue;
      }
#endif
      for (gint t = 0; t < count; t++) {
        gint64 iw = iw0 + t * s->sw;
        d[t] = iw >= 0 && iw < s->w ? row[iw] : 0.0f;
      }
    }
    /* the columns past ncols the kernel reads (none for the tail kernel) */
    memset (dst + ncols, 0, (cp->width - ncols) * sizeof (float));
  }
  *off = ir_gemm_packed_offsets (s->arch);
  return buf;
}

/* CONV_SHIFTED: row k of the panel is the source at in + n0 + off[k]. Only a
 * panel that would read past the source (the grid's last columns) is copied
 * into @buf, with zeros past the end; those columns are dropped anyway. */
static const float *
conv_shifted_b (gpointer user, gint k0, gint kc, gint n0, gint ncols, float *buf,
    const gint32 **off)
{
  const ConvPanel *cp = user;
  const ConvState *s = cp->s;
  gint nr = s->arch->nr;
  if (n0 + (gint64) s->off_hi[k0 + kc - 1] + cp->width <= cp->limit) {
    *off = s->off + k0;
    return cp->in + n0;
  }
  for (gint p = 0; p < kc; p++) {
    gint64 start = n0 + (gint64) s->off[k0 + p];
    gint64 avail = CLAMP (cp->limit - start, 0, nr);
    float *dst = buf + (gsize) p * nr;
    memcpy (dst, cp->in + start, avail * sizeof (float));
    memset (dst + avail, 0, (nr - avail) * sizeof (float));
  }
  *off = ir_gemm_packed_offsets (s->arch);
  return buf;
}

/* CONV_SHIFTED in place (ConvState.edges): row k of the panel is the
 * input at in + n0 + off[k] where all the panel's lanes of its tap read
 * inside the image; the other rows are copied into @buf with their pad
 * lanes (and those of dropped grid columns, or past the panel) zeroed.
 * The row table mixes both when @buf lies within 2^31 floats of the input,
 * else every row is copied. */
static const float *
conv_edges_b (gpointer user, gint k0, gint kc, gint n0, gint ncols, float *buf,
    const gint32 **off)
{
  const ConvPanel *cp = user;
  const ConvState *s = cp->s;
  gint nr = s->arch->nr;
  gint64 taps = s->kh * s->kw;
  guint64 valid[IR_EDGE_MAX_TAPS];
  ir_edge_tap_lanes (&s->edge_geom, n0, MIN (ncols, cp->width), valid);
  guint64 all = cp->width >= 64 ? ~(guint64) 0 : ((guint64) 1 << cp->width) - 1;
  const float *base = cp->in + n0;
  guint64 every = all;
  for (gint64 t = 0; t < taps; t++)
    every &= valid[t];
  if (every == all) {
    /* no tap reaches a pad (most panels) */
    *off = s->off + k0;
    return base;
  }
  gint64 dist = ((gint64) (guintptr) buf - (gint64) (guintptr) base) / (gint64) sizeof (float);
  gboolean mixed = dist > G_MININT32 / 2 && dist < G_MAXINT32 / 2;
  for (gint p = 0, t = (gint) (k0 % taps); p < kc; p++) {
    guint64 v = valid[t];
    if (++t == taps)
      t = 0;
    if (mixed && v == all) {
      cp->table[p] = s->off[k0 + p];
      continue;
    }
    ir_edge_copy_lanes (cp->in, n0 + (gint64) s->off[k0 + p], v, cp->width,
        buf + (gsize) p * nr);
    cp->table[p] = (gint32) ((mixed ? dist : 0) + p * nr);
  }
  *off = cp->table;
  return mixed ? base : buf;
}

typedef struct {
  const ConvState *s;
  const float *src;                    /* source of the current image(s) */
  const float *packed;
  float *out, *scratch;
  gint64 panels;                       /* column panels per (image, group) */
  gint64 grid;                         /* output columns computed per plane */
  gint64 images;                       /* images in this call */
  gint64 block_rows;                   /* output channels of a row block */
  /* A band of strided slots (conv_band_slice): its panels' widths depend
   * on the band rows, hence on the thread count, so only the tail kernel's
   * few columns take another path (a model's results must not depend on
   * its threads). */
  gboolean band;
} ConvJob;

/* Pixels [p0, p1) of @rows output channels from @c (plane stride ohw)
 * stored but not yet passed through the fused Swish. */
typedef struct {
  float *c;
  gint64 rows, p0, p1;
} SwishPending;

static void
swish_pending (const ConvState *s, const SwishPending *p, gsize ohw)
{
  for (gint64 r = 0; p->c && r < p->rows; r++)
    ir_k_fusion_swish (&s->fused, p->c + r * ohw + p->p0, p->p1 - p->p0);
}

static void
conv_gemm_slice (gint begin, gint end, gint slice, gpointer data)
{
  const ConvJob *j = data;
  const ConvState *s = j->s;
  gint nr = s->arch->nr;
  gboolean shifted = s->mode == CONV_SHIFTED;
  gsize src_plane = shifted ? (gsize) s->chan : (gsize) s->h * s->w;
  gsize ohw = (gsize) s->oh * s->ow;
  gsize per = s->bbuf_floats + s->strip_floats;
  float *bbuf = ir_k_slice_scratch (j->scratch + slice * per, per * sizeof (float));
  float *strip = bbuf + s->bbuf_floats;
  guint8 run_start[M2I_GEMM_MAX_NR + 1];
  guint32 run_mask[M2I_GEMM_MAX_NR];
  gint32 run_at[M2I_GEMM_MAX_NR];
  gint32 table[M2I_GEMM_MAX_KC];
  gint step = s->arch->step;
  gint64 per_block = j->images * s->groups * j->panels;
  SwishPending pend = { NULL };
  for (gint t = begin; t < end; t++) {
    /* Tasks: row blocks outermost (each slice then needs only its part
     * of the weights), then images, groups, column panels. */
    gint64 r0 = (t / per_block) * j->block_rows, rest = t % per_block;
    gint64 panel = rest % j->panels, ng = rest / j->panels;
    gint64 g = ng % s->groups, n = ng / s->groups;
    gint64 rows = MIN (j->block_rows, s->cout_g - r0);
    gint64 first = n * s->c_in + g * s->cin_g;        /* first source channel */
    gint n0 = (gint) (panel * nr);
    gint ncols = (gint) MIN (nr, j->grid - n0);
    ConvPanel cp = { s, j->src + first * src_plane,
      (gint64) ((n + 1) * s->c_in - first) * (gint64) src_plane, nr, table };
    M2iGemmOut o = { j->out + (n * s->c_out + g * s->cout_g + r0) * ohw, ohw, NULL, NULL, NULL,
      s->fused.bias ? s->fused.bias + g * s->cout_g + r0 : NULL, NULL, s->fused.relu };
    if (shifted && s->wp != s->ow) {
      /* Grid column q is output pixel (q / wp, q % wp) when q % wp < ow:
       * a group of lanes is stored as one run per grid row it touches
       * (lane l of a run goes to pixel at + l), its extra columns
       * dropped. (y, x) of q is stepped along, not divided out. */
      gint n_runs = 0;
      gint64 y = n0 / s->wp, x = n0 % s->wp;
      for (gint c0 = 0; c0 < ncols; c0 += step) {
        run_start[c0 / step] = (guint8) n_runs;
        gint group_runs = n_runs;
        for (gint c = c0; c < MIN (c0 + step, ncols); c++) {
          if (x < s->ow) {
            gint32 at = (gint32) (y * s->ow + x - (c - c0));
            if (n_runs == group_runs || run_at[n_runs - 1] != at) {
              run_mask[n_runs] = 0;
              run_at[n_runs++] = at;
            }
            run_mask[n_runs - 1] |= 1u << (c - c0);
          }
          if (++x == s->wp) {
            x = 0;
            y++;
          }
        }
      }
      run_start[(ncols + step - 1) / step] = (guint8) n_runs;
      o.run_start = run_start;
      o.run_mask = run_mask;
      o.run_at = run_at;
    }
    const float *a = j->packed + g * s->packed_group + r0 * s->k;
    M2iGemmPanelB get_b = s->edges ? conv_edges_b : shifted ? conv_shifted_b : conv_im2col_b;
    /* A panel whose pixels would leave an eighth of its vectors' lanes
     * idle (a 14×14 plane's last 4 columns; a 5×5 plane: 25 in two
     * vectors; a 3×3 one: 9 in one) by the tail kernel, output rows along
     * the vector, which reads only those columns of B. A last panel of
     * whole vectors and up to M2I_GEMM_TAIL_REM_MAX columns more (a 9×9
     * plane: 48 columns, then 32 + 1; an 88-wide one: 48, then 32 + 8)
     * takes the vectors by the micro-kernel and the rest by the tail
     * kernel, not in a vector of mostly idle lanes (which costs as much
     * as a full one). More columns than that (16 + 9) were slower so:
     * the tail kernel reads all the weights again. */
    cp.width = ncols;
    if (s->tap) {
      s->tap (&s->tap_geom, a, (gint) rows, cp.in, n0, ncols, o.c, ohw, o.row_bias, o.relu);
    } else if (j->band ? ncols > M2I_GEMM_TAIL_MAX || !ir_gemm_tail_panel (s->arch,
            (gint) rows, (gint) s->k, a, n0, ncols, get_b, &cp, bbuf, &o) :
        !ir_gemm_wide_panel (s->arch, (gint) rows, (gint) s->k, a, n0, ncols, get_b, &cp,
            bbuf, &o)) {
      gint rem = ncols % step, cols = ncols;
      cp.width = rem;
      if (!j->band && ncols > rem && rem > 0 && !o.run_start &&
          rows * s->k >= M2I_GEMM_WIDE_MIN_MACS &&
          ir_gemm_tail_panel (s->arch, (gint) rows, (gint) s->k, a, n0 + ncols - rem, rem,
              get_b, &cp, bbuf, &o))
        cols = ncols - rem;
      cp.width = nr;
      ir_gemm_column_panel (s->arch, (gint) rows, (gint) s->k, a, s->arch->mr, n0, cols,
          get_b, &cp, bbuf, strip, &o);
    }
    if (s->fused.swish) {
      /* The panel's results: one run of pixels per output channel (grid
       * columns map to consecutive pixels, pad columns aside), [p0, p1).
       * Consecutive panels of one row block continue each other's runs:
       * they are passed through Swish together, up to 512 pixels (still
       * in cache), so the calls are not many short rows. */
      gint64 p0 = n0, p1 = n0 + ncols;
      if (o.run_start) {
        gint last = o.run_start[(ncols + step - 1) / step] - 1;
        if (last < 0)
          continue;
        p0 = o.run_at[0] + __builtin_ctz (o.run_mask[0]);
        p1 = o.run_at[last] + 32 - __builtin_clz (o.run_mask[last]);
      }
      if (pend.c != o.c || pend.rows != rows || pend.p1 != p0) {
        swish_pending (s, &pend, ohw);
        pend = (SwishPending) { o.c, rows, p0, p0 };
      }
      pend.p1 = p1;
      if (pend.p1 - pend.p0 >= 512) {
        swish_pending (s, &pend, ohw);
        pend.p0 = pend.p1;
      }
    }
  }
  swish_pending (s, &pend, ohw);
}

typedef struct {
  const ConvState *s;
  const float *in;
  float *dst;
} PadJob;

/* Row i of slot (pr, pc) of one channel: d[j] = the image's pixel
 * (pr + sh·i - pt, pc + sw·j - pl) for j < wp, 0 outside it (compiled per
 * instruction set; stride 2 on its own, so the compiler knows it). */
M2I_K_INLINE void
phase_row_c_body (const ConvState *s, const float *img, gint64 pr, gint64 pc, gint64 i, float *d)
{
  gint64 y = pr + s->sh * i - s->pt;
  gint64 c0 = pc - s->pl, sw = s->sw;
  if (y < 0 || y >= s->h) {
    for (gint64 j = 0; j < s->wp; j++)
      d[j] = 0.0f;
    return;
  }
  const float *row = img + y * s->w;
  /* Columns c0 + sw·j inside [0, w) for j in [lo, hi). */
  gint64 lo = c0 >= 0 ? 0 : (-c0 + sw - 1) / sw;
  gint64 hi = c0 >= s->w ? 0 : MIN (s->wp, (s->w - 1 - c0) / sw + 1);
  lo = MIN (lo, hi);
  for (gint64 j = 0; j < lo; j++)
    d[j] = 0.0f;
  if (sw == 2) {
    for (gint64 j = lo; j < hi; j++)
      d[j] = row[c0 + 2 * j];
  } else {
    for (gint64 j = lo; j < hi; j++)
      d[j] = row[c0 + sw * j];
  }
  for (gint64 j = hi; j < s->wp; j++)
    d[j] = 0.0f;
}
M2I_K_SIMD_CLONES (phase_row_c, (const ConvState *s, const float *img, gint64 pr, gint64 pc,
        gint64 i, float *d), (s, img, pr, pc, i, d))

#if defined(__x86_64__) && defined(__GNUC__)
/* A whole plane of slot (pr, pc) with AVX-512, 16 outputs a step: at
 * stride 2 two loads and a permute, the loads masked to the row (larger
 * strides gather, row-x86.h). The compiled row above gathers stride-2
 * columns one at a time and is called per row: the copy was half the time
 * of a strided layer with few output channels (gaze-estimation's 32→16
 * 3×3 stride 2 on 60×60). */
#define PHASE_ROWS 16
__attribute__ ((target ("avx512f,avx512vl,avx512bw,avx512dq")))
static void
phase_plane_avx512 (const ConvState *s, const float *img, gint64 pr, gint64 pc, gint64 r0,
    gint64 rows, float *dst)
{
  const __m512i even = _mm512_setr_epi32 (0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26,
      28, 30);
  gint64 span = s->sw == 2 ? 32 : 16, c0 = pc - s->pl;
  /* Rows whose image row exists: [i0, i1) (zeros above and below),
   * counted from r0. */
  gint64 i0 = CLAMP ((s->pt - pr + s->sh - 1) / s->sh - r0, 0, rows);
  gint64 i1 = CLAMP ((s->h + s->pt - pr + s->sh - 1) / s->sh - r0, i0, rows);
  memset (dst, 0, i0 * s->wp * sizeof (float));
  memset (dst + i1 * s->wp, 0, (rows - i1) * s->wp * sizeof (float));
  const float *img_row0 = img + (pr + s->sh * (r0 + i0) - s->pt) * s->w;
  gint64 img_step = s->sh * s->w;
  /* Column chunks outside, rows inside: the masks of a chunk are the same
   * for every row, and small planes (an 8×8 output: one chunk of eight
   * per row) were mostly that arithmetic. In blocks of PHASE_ROWS rows,
   * which stay in L1 for all the chunks: down a whole wide plane, every
   * chunk read two new cache lines a row (a 6×6 stride-2 layer's copy of
   * a 416×416 input took twice as long). */
  for (gint64 b0 = i0; b0 < i1; b0 += PHASE_ROWS) {
    gint64 b1 = MIN (b0 + PHASE_ROWS, i1);
    for (gint64 j = 0; j < s->wp; j += 16) {
      gint64 n = MIN (16, s->wp - j), p0 = c0 + s->sw * j;
      __mmask16 m = (__mmask16) ((1u << n) - 1), ok;
      float *d = dst + b0 * s->wp + j;
      const float *row = img_row0 + (b0 - i0) * img_step;
      if (s->sw <= 2) {
        /* raw elements p0 + [lo, hi) lie inside the row */
        gint64 lo = CLAMP (-p0, 0, span), hi = CLAMP (s->w - p0, 0, span);
        guint32 raw = hi <= lo ? 0 :
            (guint32) ((((guint64) 1 << hi) - 1) & ~(((guint64) 1 << lo) - 1));
        __mmask16 k0 = (__mmask16) raw, k1 = (__mmask16) (raw >> 16);
        if (s->sw == 1) {
          for (gint64 i = b0; i < b1; i++, d += s->wp, row += img_step)
            _mm512_mask_storeu_ps (d, m, _mm512_maskz_loadu_ps (k0, row + p0));
        } else {
          for (gint64 i = b0; i < b1; i++, d += s->wp, row += img_step)
            _mm512_mask_storeu_ps (d, m, _mm512_permutex2var_ps (_mm512_maskz_loadu_ps (k0,
                        row + p0), even, _mm512_maskz_loadu_ps (k1, row + p0 + 16)));
        }
      } else {
        for (gint64 i = b0; i < b1; i++, d += s->wp, row += img_step)
          _mm512_mask_storeu_ps (d, m, ir_k_load_row16 (row, p0, s->sw, s->w, FALSE, m, &ok));
      }
    }
  }
}
#endif

/* Rows [r0, r0 + rows) of slot (pr, pc) of one channel (phase_row_c). */
static void
phase_plane (const ConvState *s, const float *img, gint64 pr, gint64 pc, gint64 r0,
    gint64 rows, float *dst)
{
#if defined(__x86_64__) && defined(__GNUC__)
  if (m2i_cpu_flags () & M2I_CPU_AVX512F) {
    phase_plane_avx512 (s, img, pr, pc, r0, rows, dst);
    return;
  }
#endif
  for (gint64 i = 0; i < rows; i++)
    phase_row_c (s, img, pr, pc, r0 + i, dst + i * s->wp);
}

/* Copies channels [begin, end) of one image into the zero-bordered source. */
static void
pad_slice (gint begin, gint end, gint slice, gpointer data)
{
  const PadJob *j = data;
  const ConvState *s = j->s;
  if (s->n_copies) {
    for (gint c = begin; c < end; c++)
      for (gint p = 0; p < s->n_copies; p++) {
        const float *src = j->in + (gsize) c * s->h * s->w;
        float *dst = j->dst + (gsize) c * s->chan + (gsize) p * (s->gap + s->plane);
        memset (dst, 0, (s->gap + s->pt * s->w) * sizeof (float));
        dst += s->gap + s->pt * s->w;
        for (gint64 y = 0; y < s->h; y++, dst += s->w) {
          memcpy (dst, src + y * s->w, s->w * sizeof (float));
          for (gint64 x = s->copy_z0[p]; x < s->copy_z1[p]; x++)
            dst[x] = 0.0f;
        }
        memset (dst, 0, s->pb * s->w * sizeof (float));
      }
    return;
  }
  if (s->sh > 1 || s->sw > 1) {
    for (gint c = begin; c < end; c++)
      for (gint p = 0; p < s->n_slots; p++) {
        gint64 pr = s->slot_row[p], pc = s->slot_col[p];
        phase_plane (s, j->in + (gsize) c * s->h * s->w, pr, pc, 0, s->hp,
            j->dst + (gsize) c * s->chan + (gsize) p * s->plane);
      }
    return;
  }
  for (gint c = begin; c < end; c++) {
    const float *src = j->in + (gsize) c * s->h * s->w;
    float *dst = j->dst + (gsize) c * s->plane;
    memset (dst, 0, s->pt * s->wp * sizeof (float));
    dst += s->pt * s->wp;
    for (gint64 y = 0; y < s->h; y++) {
      /* Side pads are a pixel or two: plain stores beat memset calls. */
      for (gint64 x = 0; x < s->x0; x++)
        dst[x] = 0.0f;
      memcpy (dst + s->x0, src + y * s->w, s->w * sizeof (float));
      for (gint64 x = s->x0 + s->w; x < s->wp; x++)
        dst[x] = 0.0f;
      dst += s->wp;
    }
    memset (dst, 0, s->pb * s->wp * sizeof (float));
  }
}

typedef struct {
  ConvJob j;                           /* src, out: image 0's */
  const float *in;
  float *bands;                        /* a band buffer per slice */
  gint64 n_bands;
} BandJob;

/* Where a slice's own padded copy or band buffer starts in its area:
 * after its GEMM temporaries (conv_gemm_slice takes them at the area's start). */
static gsize
own_copy_at (const ConvState *s)
{
  return m2i_align_up (s->bbuf_floats + s->strip_floats, 16);
}

/* Bands of strided slots (ConvState.band_rows), each made in the slice's
 * own band buffer and then multiplied: all its column panels and row
 * blocks, by this slice. The buffer is in the slice's own area when it
 * has one (a team's member's: the bands' lines stay in its cache, where
 * the kernel's scratch is every layer's and its lines another core's),
 * else the kernel's buffer for this slice. */
static void
conv_band_slice (gint begin, gint end, gint slice, gpointer data)
{
  const BandJob *b = data;
  const ConvState *s = b->j.s;
  gsize at = own_copy_at (s), floats = (gsize) s->c_in * s->chan;
  float *area = ir_k_slice_scratch (NULL, (at + floats) * sizeof (float));
  float *buf = area ? area + at : b->bands + (gsize) slice * floats;
  for (gint t = begin; t < end; t++) {
    gint64 n = t / b->n_bands, y0 = t % b->n_bands * s->band_rows;
    gint64 rows = MIN (s->band_rows, s->oh - y0);
    const float *img = b->in + n * s->c_in * s->h * s->w;
    for (gint64 c = 0; c < s->c_in; c++)
      for (gint p = 0; p < s->n_slots; p++)
        phase_plane (s, img + c * s->h * s->w, s->slot_row[p], s->slot_col[p], y0,
            rows + s->halo, buf + c * s->chan + p * s->plane);
    ConvJob j = b->j;
    j.src = buf;
    j.out = b->j.out + n * s->c_out * s->oh * s->ow + y0 * s->ow;
    j.grid = rows * s->wp;
    j.band = TRUE;
    j.panels = (j.grid + s->arch->nr - 1) / s->arch->nr;
    j.images = 1;
    j.block_rows = s->cout_g;
    conv_gemm_slice (0, (gint) (s->groups * j.panels), slice, &j);
  }
}

/* Where a team's hand-over takes OWN_COPY_HANDOVER_NS or more, a padded
 * copy up to OWN_COPY_MAX bytes is made whole by every slice of a split
 * layer, in its own area, before its part of the product
 * (pad_gemm_slice), instead of by a job of its own cut by channels after
 * which every slice reads the channels the other cores wrote. On this
 * project's 2-vCPU VM with the vCPUs placed far apart (hand-over ~400 ns,
 * a line written by the other core 8 ns), that took vehicle-attributes
 * 0.435 -> 0.413 ms and head-pose 0.446 -> 0.418 at two threads, and
 * gaze-estimation's 64×30×30 stride-2 layers' 262 KB copies 0.685 ->
 * 0.626 (copies up to 256 KB, then 512 KB: half this core's L2); placed
 * near (70-100 ns), copying twice as much cost more than it saved
 * (vehicle-attributes 0.305 -> 0.313), so there the copy stays a job. */
#define OWN_COPY_MAX (512 * 1024)
#define OWN_COPY_HANDOVER_NS 200

typedef struct {
  ConvJob j;                           /* src: set by each slice */
  const float *in;                     /* the image */
  float *fallback;                     /* the copy when a slice has no area */
} OwnCopyJob;

/* Tasks [begin, end) of the product on a padded copy of the whole image
 * this slice makes in its own area first (the same copy, so the same
 * bits, as pad_slice's). */
static void
pad_gemm_slice (gint begin, gint end, gint slice, gpointer data)
{
  const OwnCopyJob *oj = data;
  const ConvState *s = oj->j.s;
  gsize at = own_copy_at (s);
  gsize copy = (gsize) (s->guard + s->c_in * s->chan + s->gap);
  float *area = ir_k_slice_scratch (NULL, (at + copy) * sizeof (float));
  float *dst = area ? area + at : oj->fallback;
  memset (dst, 0, s->guard * sizeof (float));
  dst += s->guard;
  memset (dst + s->c_in * s->chan, 0, s->gap * sizeof (float));
  PadJob pj = { s, oj->in, dst };
  pad_slice (0, (gint) s->c_in, 0, &pj);
  ConvJob j = oj->j;
  j.src = dst;
  conv_gemm_slice (begin, end, slice, &j);
}

static void
conv_gemm (const M2iOpContext *ctx, const ConvState *s, gint slices)
{
  const float *in = ctx->inputs[0].data, *wts = ctx->inputs[1].data;
  float *scratch = ctx->scratch;
  float *extra = scratch + s->slices * (s->bbuf_floats + s->strip_floats);
  const float *packed = s->packed;
  if (!packed) {
    conv_pack_weights (s, wts, extra);
    packed = extra;
    extra += s->packed_group * s->groups;
  }
  gint64 grid = s->mode == CONV_SHIFTED ? s->oh * s->wp : s->oh * s->ow;
  gint64 panels = (grid + s->arch->nr - 1) / s->arch->nr;
  gint64 images = s->padded ? 1 : s->batch;
  /* Column panels are the tasks; when they are few and do not share out
   * evenly (a 14×14 plane is 5 panels), the output channels are cut into
   * one block per slice as well. */
  gint64 tasks = images * s->groups * panels, blocks = 1;
  gint mr = s->arch->mr;
  if (slices > 1 && tasks % slices && tasks < 8 * slices && s->cout_g >= 2 * mr * slices)
    blocks = slices;
  gint64 block_rows = (gint64) m2i_align_up ((s->cout_g + blocks - 1) / blocks, mr);
  blocks = (s->cout_g + block_rows - 1) / block_rows;
  ConvJob j = { s, in, packed, ctx->outputs[0].data, scratch, panels, grid, images, block_rows };
  if (s->band_rows) {
    BandJob b = { j, in, extra, (s->oh + s->band_rows - 1) / s->band_rows };
    ir_k_parallel_for ((gint) (s->batch * b.n_bands), slices, 1, conv_band_slice, &b);
    return;
  }
  if (!s->padded) {
    ir_k_parallel_for ((gint) (blocks * tasks), slices, 1, conv_gemm_slice, &j);
    return;
  }
  /* Padded source: one image at a time through the padded copy, after
   * its guard of zeros. Small copies are made by each slice in its own
   * area (pad_gemm_slice). */
  gsize copy = (gsize) (s->guard + s->c_in * s->chan + s->gap);
  if (slices > 1 && copy * sizeof (float) <= OWN_COPY_MAX &&
      ir_k_team_handover_ns () >= OWN_COPY_HANDOVER_NS &&
      (own_copy_at (s) + copy) * sizeof (float) <= ir_k_team_slice_scratch_bytes ()) {
    for (gint64 n = 0; n < s->batch; n++) {
      OwnCopyJob oj = { j, in + n * s->c_in * s->h * s->w, extra };
      oj.j.out = (float *) ctx->outputs[0].data + n * s->c_out * s->oh * s->ow;
      ir_k_parallel_for ((gint) (blocks * tasks), slices, 1, pad_gemm_slice, &oj);
    }
    return;
  }
  memset (extra, 0, s->guard * sizeof (float));
  extra += s->guard;
  /* Column copies: the zeros after the last one. */
  memset (extra + s->c_in * s->chan, 0, s->gap * sizeof (float));
  for (gint64 n = 0; n < s->batch; n++) {
    PadJob pj = { s, in + n * s->c_in * s->h * s->w, extra };
    ir_k_parallel_for ((gint) s->c_in, slices, 16, pad_slice, &pj);
    /* The slices see a batch of one: the copy of image n, its output. */
    j.src = extra;
    j.out = (float *) ctx->outputs[0].data + n * s->c_out * s->oh * s->ow;
    ir_k_parallel_for ((gint) (blocks * tasks), slices, 1, conv_gemm_slice, &j);
  }
}

static gboolean
conv_execute (M2iOpContext *ctx, GError **error)
{
  const ConvState *s = ctx->state;
  gint64 macs = s->batch * s->c_out * s->oh * s->ow * s->k;
  gint slices = MIN (ir_k_slices_for (ctx, macs), s->slices);
  if (s->mode == CONV_DEPTHWISE) {
    ir_dw_run (&s->dwg, s->dw_rows, s->dw_plane, ctx->inputs[0].data, ctx->inputs[1].data,
        &s->fused, ctx->outputs[0].data, s->batch, s->c_in, s->c_out, s->cout_g, slices,
        ctx->scratch);
  } else if (s->mode == CONV_WINOGRAD) {
    const float *in = ctx->inputs[0].data;
    float *out = ctx->outputs[0].data;
    for (gint64 n = 0; n < s->batch; n++)
      ir_winograd_run (s->wino, in + n * s->c_in * s->h * s->w,
          out + n * s->c_out * s->oh * s->ow, &s->fused, slices,
          ctx->scratch);
  } else if (s->mode == CONV_WINOCOL) {
    const float *in = ctx->inputs[0].data;
    float *out = ctx->outputs[0].data;
    for (gint64 n = 0; n < s->batch; n++)
      ir_winocol_run (s->winocol, in + n * s->c_in * s->h * s->w,
          out + n * s->c_out * s->oh * s->ow, &s->fused, slices, ctx->scratch);
  } else if (s->mode == CONV_SMALL) {
    gsize in_n = s->c_in * s->h * s->w, out_n = s->c_out * s->oh * s->ow;
    for (gint64 n = 0; n < s->batch; n++) {
      float *out = (float *) ctx->outputs[0].data + n * out_n;
      ir_small_run (s->small, (const float *) ctx->inputs[0].data + n * in_n, out,
          s->fused.bias, s->fused.relu, slices, ctx->scratch);
      ir_k_fusion_swish (&s->fused, out, out_n);
    }
  } else {
    conv_gemm (ctx, s, slices);
  }
  return TRUE;
}

M2iKFusion *
ir_k_conv_fusion (M2iOpContext *ctx, gint64 *channels)
{
  ConvState *s = ctx->state;
  *channels = s->c_out;
  return &s->fused;
}

gboolean
ir_k_conv_geometry (const M2iOpContext *ctx, M2iKConvGeom *g)
{
  const ConvState *s = ctx->state;
  if (!s)
    return FALSE;
  *g = (M2iKConvGeom) { s->batch, s->c_in, s->h, s->w, s->c_out, s->oh, s->ow, s->kh, s->kw,
    s->sh, s->sw, s->dh, s->dw, s->pt, s->pl, s->pb, s->pr, s->groups };
  return TRUE;
}

gboolean
ir_k_conv_uses_winograd (const M2iOpContext *ctx)
{
  const ConvState *s = ctx->state;
  return s && s->mode == CONV_WINOGRAD;
}

gboolean
ir_k_conv_uses_winocol (const M2iOpContext *ctx)
{
  const ConvState *s = ctx->state;
  return s && s->mode == CONV_WINOCOL;
}

gboolean
ir_k_conv_uses_direct (const M2iOpContext *ctx)
{
  const ConvState *s = ctx->state;
  return s && s->mode == CONV_DEPTHWISE;
}

gboolean
ir_k_conv_uses_dw_plane (const M2iOpContext *ctx)
{
  const ConvState *s = ctx->state;
  return s && s->mode == CONV_DEPTHWISE && s->dw_plane;
}

gboolean
ir_k_conv_reads_in_place (const M2iOpContext *ctx)
{
  const ConvState *s = ctx->state;
  return s && s->edges;
}

gboolean
ir_k_conv_uses_small (const M2iOpContext *ctx)
{
  const ConvState *s = ctx->state;
  return s && s->mode == CONV_SMALL;
}

gboolean
ir_k_conv_uses_taps (const M2iOpContext *ctx)
{
  const ConvState *s = ctx->state;
  return s && s->tap;
}

const M2iOpKernel ir_kernel_convolution = {
  "Convolution", "opset1", conv_infer, conv_execute, conv_state_free,
};

const M2iOpKernel ir_kernel_group_convolution = {
  "GroupConvolution", "opset1", group_conv_infer, conv_execute, conv_state_free,
};
