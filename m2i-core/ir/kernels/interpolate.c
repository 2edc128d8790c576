/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interpolate-1, -4 and -11 on N-D tensors, f32 and u8 (nearest: any type).
 *
 * Every mode of the specification is separable: the spec's "linear" weight
 * is a product of per-axis triangles normalised by the product of per-axis
 * sums, cubic and linear_onnx are products of per-axis coefficients, the
 * pillow modes are two one-axis passes. So each resized axis gets a filter
 * table — for every output index, `taps` (source index, weight) pairs
 * computed exactly as the spec computes coordinates (in float, with its
 * nearest_mode and coordinate_transformation_mode rules) — and the tensor
 * is resized one axis at a time. The one-axis formulas (coordinates,
 * nearest rounding, triangle, cubic weights in double, Pillow's windows)
 * are the M2I engine's (m2i/resize-formulas.c), so both paths below weigh
 * taps alike. Pads (pads_begin/pads_end) are zeros: a
 * tap that lands in them is dropped. u8 results are rounded half away from
 * zero and clamped; the pillow modes round after the horizontal pass too,
 * as Pillow does. Nearest, a copy, is a gather planned from the tables
 * (GatherPlan below), in every layout: no arithmetic, so it gives the
 * engine's bits without the engine.
 *
 * Interpolate-1 is mapped onto the -4 attributes the way OpenVINO's
 * reference does: linear becomes linear_onnx below rank 5, coordinates are
 * asymmetric unless align_corners (or half_pixel for linear without pads
 * outside the NCHW spatial case), nearest rounds "simple"; mode "area" is
 * not supported.
 */
#include "kernels-private.h"
#include <base/m2i-align.h>
#include <base/m2i-parallel.h>
#include <m2i/resize-private.h>

#include <math.h>
#include <string.h>

typedef struct {
  M2iResizeMode mode;
  M2iCoordMode coord;
  M2iNearestMode nearest;
  gboolean antialias;
  float cube_coeff;
  gint64 pads_begin[M2I_MAX_RANK], pads_end[M2I_MAX_RANK];
} Attrs;

/* One axis: out_len outputs, each the weighted sum of `taps` inputs;
 * index -1 is a pad (zero). Axes that are neither resized nor padded have
 * no table. */
typedef struct {
  gint axis;
  gint64 in_len, out_len;
  gint taps;
  gint32 *index;
  float *weight;
  gboolean round_after;                /* pillow on u8: round this pass */
} AxisTable;

/* The 2-D case the M2I engine's resize covers (resize-private.h): two
 * resized axes, H then W, either the last two (planes: NCHW) or the two
 * before a last axis of 1 to 4 interleaved channels (NHWC), no pads, sizes
 * (or scales that are exactly out/in). Going through the engine's tables
 * and row kernels gives the engine's bits, so a model head the device
 * takes over (split execution, PrePostProcessor lowering) computes the same
 * values on either side. */
typedef struct {
  M2iResizePlan *plan;
  M2iResizeData data;
  gint64 images;                       /* planes (NCHW) or images (NHWC) */
  gint channels;                       /* interleaved per pixel */
  gsize in_image, out_image;           /* bytes per plane / image */
  gsize in_row, out_row;               /* bytes per row */
  gint64 out_h;
  gsize scratch_floats;                /* per slice */
} EnginePath;

/* Nearest is a gather, built at infer from the axis tables: for each
 * output index of every axis but the last, the source offset in elements
 * (-1: a pad); along the last axis either the source index table or, when
 * that table is verified to be x / ratio for every x, the integer ratio
 * (1: a plain copy, k: each source element written k times). An output row
 * whose source row is its predecessor's is a copy of that output row. */
typedef struct {
  gint64 *offsets;                     /* one block: */
  gint64 *row_off[M2I_MAX_RANK];       /* per leading axis, out.dims[d] values */
  const gint32 *col;                   /* last-axis table (in tables[]); NULL: ratio */
  gint64 ratio;
  gint64 row_len, src_row_len;         /* output / input elements per row */
} GatherPlan;

typedef struct {
  M2iElementType type;
  M2iShape in, out;
  EnginePath engine;                   /* when engine.plan is set */
  GatherPlan gather;                   /* nearest without the engine */
  gboolean u8_truncate;                /* u8 results: truncate (else round) */
  gboolean nearest;                    /* a gather, any element type */
  gint n_tables;
  AxisTable tables[M2I_MAX_RANK];      /* in the order they are applied */
  gsize stage_floats;                  /* largest intermediate tensor */
  gint slices;
} InterpState;

static void
interp_state_free (gpointer p)
{
  InterpState *s = p;
  if (!s)
    return;
  m2i_resize_plan_free (s->engine.plan);
  g_free (s->gather.offsets);
  for (gint i = 0; i < s->n_tables; i++) {
    g_free (s->tables[i].index);
    g_free (s->tables[i].weight);
  }
  g_free (s);
}

/* ---- Building the tables ----------------------------------------------- */

static void
table_alloc (AxisTable *t, gint taps)
{
  t->taps = taps;
  t->index = g_new (gint32, t->out_len * taps);
  t->weight = g_new0 (float, t->out_len * taps);
  for (gint64 i = 0; i < t->out_len * taps; i++)
    t->index[i] = -1;
}

/* Records tap @k of output @o: padded source @src (dropped when it falls in
 * the pads or outside), weight @w. */
static inline void
table_set (AxisTable *t, gint64 pad_begin, gint64 o, gint k, gint64 src, float w)
{
  gint64 u = src - pad_begin;
  if (u < 0 || u >= t->in_len)
    return;
  t->index[o * t->taps + k] = (gint32) u;
  t->weight[o * t->taps + k] = w;
}

static void
build_table (AxisTable *t, const Attrs *a, gint64 pad_begin, gint64 padded_len, float scale,
    gboolean any_downsample, gboolean resized)
{
  float in_f = (float) padded_len, out_f = (float) t->out_len;
  if (!resized) {                      /* only pads: a shifted copy */
    table_alloc (t, 1);
    for (gint64 o = 0; o < t->out_len; o++)
      table_set (t, pad_begin, o, 0, o, 1.0f);
    return;
  }
  switch (a->mode) {
    case M2I_RESIZE_NEAREST:
      table_alloc (t, 1);
      for (gint64 o = 0; o < t->out_len; o++) {
        float x = m2i_resize_source_coord (a->coord, (float) o, scale, out_f, in_f);
        gint64 p = m2i_resize_nearest_index (a->nearest, x, scale < 1.0f);
        table_set (t, pad_begin, o, 0, CLAMP (p, 0, padded_len - 1), 1.0f);
      }
      break;
    case M2I_RESIZE_LINEAR: {
      gboolean aa = a->antialias && any_downsample;
      float fa = aa ? scale : 1.0f;
      /* taps past the whole axis would read nothing (and must fit a gint) */
      gint64 r = MIN (m2i_resize_linear_radius (scale, fa), MIN (padded_len + 2, G_MAXINT32 / 4));
      table_alloc (t, (gint) (2 * r + 1));
      for (gint64 o = 0; o < t->out_len; o++) {
        float x = m2i_resize_source_coord (a->coord, (float) o, scale, out_f, in_f);
        gint64 xr = (gint64) roundf (x);
        double sum = 0;
        for (gint k = 0; k < t->taps; k++) {
          gint64 src = xr + k - r;
          if (src < 0 || src >= padded_len)
            continue;
          float w = fa * m2i_resize_triangle (fa, x - (float) src);
          sum += w;
          table_set (t, pad_begin, o, k, src, w);
        }
        /* The spec divides by the sum of all weights, pads included. */
        for (gint k = 0; k < t->taps && sum != 0; k++)
          t->weight[o * t->taps + k] = (float) (t->weight[o * t->taps + k] / sum);
      }
      break;
    }
    case M2I_RESIZE_LINEAR_ONNX:
      table_alloc (t, 2);
      for (gint64 o = 0; o < t->out_len; o++) {
        float x = m2i_resize_source_coord (a->coord, (float) o, scale, out_f, in_f);
        x = MAX (0.0f, MIN (x, in_f - 1));
        gint64 i1 = MIN ((gint64) x, padded_len - 1), i2 = MIN (i1 + 1, padded_len - 1);
        float d1 = fabsf (x - (float) i1), d2 = fabsf (x - (float) i2);
        if (i1 == i2)
          d1 = d2 = 0.5f;
        table_set (t, pad_begin, o, 0, i1, d2);
        table_set (t, pad_begin, o, 1, i2, d1);
      }
      break;
    case M2I_RESIZE_CUBIC:
      table_alloc (t, 4);
      for (gint64 o = 0; o < t->out_len; o++) {
        float x = m2i_resize_source_coord (a->coord, (float) o, scale, out_f, in_f);
        gint64 xi = (gint64) floorf (x);
        double c[4];
        m2i_resize_cubic_coeffs (x - (float) xi, a->cube_coeff, c);
        for (gint k = 0; k < 4; k++)
          table_set (t, pad_begin, o, k, CLAMP (xi + k - 1, 0, padded_len - 1), (float) c[k]);
      }
      break;
    default: {                         /* pillow: Pillow's precompute_coeffs */
      double support = MIN (m2i_resize_pillow_support (a->mode, padded_len, t->out_len),
          MIN ((double) padded_len + 2, G_MAXINT32 / 4));
      table_alloc (t, (gint) ceil (support) * 2 + 1);
      double *k = g_new (double, t->taps);
      for (gint64 o = 0; o < t->out_len; o++) {
        M2iResizePillowWindow win;
        m2i_resize_pillow_window (a->mode, padded_len, t->out_len, o, &win);
        gint64 n = MIN (win.count, t->taps);
        double ww = 0.0;
        for (gint64 x = 0; x < n; x++) {
          k[x] = m2i_resize_pillow_filter (a->mode,
              (x + win.first - win.center + 0.5) * win.inv_filterscale, a->cube_coeff);
          ww += k[x];
        }
        for (gint64 x = 0; x < n; x++)
          table_set (t, pad_begin, o, (gint) x, win.first + x,
              (float) (ww != 0.0 ? k[x] / ww : k[x]));
      }
      g_free (k);
      break;
    }
  }
}

/* Fills s->gather from the axis tables (see GatherPlan). */
static void
gather_plan (InterpState *s)
{
  GatherPlan *g = &s->gather;
  const AxisTable *by_axis[M2I_MAX_RANK] = { NULL };
  for (gint i = 0; i < s->n_tables; i++)
    by_axis[s->tables[i].axis] = &s->tables[i];
  gint rank = s->out.rank, last = rank - 1;
  gint64 total = 1;
  for (gint d = 0; d < last; d++)
    total += s->out.dims[d];
  g->offsets = g_new (gint64, total);
  gint64 *o = g->offsets, stride = rank ? s->in.dims[last] : 1;
  for (gint d = last - 1; d >= 0; d--) {
    g->row_off[d] = o;
    for (gint64 i = 0; i < s->out.dims[d]; i++) {
      gint64 src = by_axis[d] ? by_axis[d]->index[i] : i;
      o[i] = src < 0 ? -1 : src * stride;
    }
    o += s->out.dims[d];
    stride *= s->in.dims[d];
  }
  g->row_len = rank ? s->out.dims[last] : 1;
  g->src_row_len = rank ? s->in.dims[last] : 1;
  g->col = rank && by_axis[last] ? by_axis[last]->index : NULL;
  /* The integer ratio only where the table says so, index by index. */
  if (g->src_row_len == 0 || g->row_len % g->src_row_len)
    return;
  gint64 k = g->row_len / g->src_row_len;
  for (gint64 x = 0; x < g->row_len; x++)
    if ((g->col ? g->col[x] : x) != x / k)
      return;
  g->ratio = k;
  g->col = NULL;
}

/* ---- infer ------------------------------------------------------------- */

static gboolean
read_attrs_v4 (M2iOpContext *ctx, gint rank, Attrs *a, GError **error)
{
  gint mode, coord, nearest;
  double cube;
  gboolean v11 = ir_k_op_version (ctx) >= 11;
  if (!m2i_ir_node_attr_enum (ctx->node, "mode", "nearest", m2i_resize_mode_names, &mode, error) ||
      !m2i_ir_node_attr_enum (ctx->node, "coordinate_transformation_mode", "half_pixel",
          m2i_coord_mode_names, &coord, error) ||
      !m2i_ir_node_attr_enum (ctx->node, "nearest_mode", "round_prefer_floor",
          m2i_nearest_mode_names, &nearest, error) ||
      !m2i_ir_node_attr_bool (ctx->node, "antialias", FALSE, &a->antialias, error) ||
      !m2i_ir_node_attr_float (ctx->node, "cube_coeff", -0.75, &cube, error))
    return FALSE;
  if (!m2i_ir_node_get_attr (ctx->node, "mode")) {
    m2i_ir_node_set_error (error, M2I_ERROR_MALFORMED, ctx->node, "attribute mode is required");
    return FALSE;
  }
  if (!v11 && mode >= M2I_RESIZE_BILINEAR_PILLOW) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "mode %s exists from Interpolate-11 on", m2i_resize_mode_names[mode]);
    return FALSE;
  }
  a->mode = mode;
  a->coord = coord;
  a->nearest = nearest;
  a->cube_coeff = (float) cube;
  const char *keys[2] = { "pads_begin", "pads_end" };
  gint64 *dst[2] = { a->pads_begin, a->pads_end };
  for (gint k = 0; k < 2; k++) {
    gint64 v[M2I_MAX_RANK];
    gint n;
    if (!m2i_ir_node_attr_ints (ctx->node, keys[k], v, M2I_MAX_RANK, &n, error))
      return FALSE;
    /* Shorter lists are padded with zeros, as OpenVINO resizes them. */
    for (gint i = 0; i < rank; i++) {
      dst[k][i] = i < n ? v[i] : 0;
      if (dst[k][i] < 0 || dst[k][i] > G_MAXINT32) {
        m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
            "attribute %s has a value out of [0, 2^31)", keys[k]);
        return FALSE;
      }
    }
  }
  return TRUE;
}

/* Sets up s->engine when the layer is the 2-D case of the M2I resize. */
static gboolean
engine_path (InterpState *s, const Attrs *a, const gint64 *axes, gint n_axes,
    gboolean use_scales, const float *axis_scale)
{
  const M2iShape *in = &s->in, *out = &s->out;
  gint r = in->rank;
  if (n_axes != 2 || (s->type != M2I_ET_F32 && s->type != M2I_ET_U8))
    return FALSE;
  for (gint d = 0; d < r; d++)
    if (a->pads_begin[d] || a->pads_end[d])
      return FALSE;
  gint hy = (gint) MIN (axes[0], axes[1]), wx = (gint) MAX (axes[0], axes[1]);
  gboolean planar = r >= 2 && hy == r - 2 && wx == r - 1;
  gboolean interleaved = r >= 3 && hy == r - 3 && wx == r - 2 && in->dims[r - 1] >= 1 &&
      in->dims[r - 1] <= 4;
  if (!planar && !interleaved)
    return FALSE;
  /* Scales mode: the coordinates use the given scale, which must then be
   * exactly the sizes' ratio for the engine (which works from sizes). */
  for (gint i = 0; i < 2 && use_scales; i++) {
    gint d = (gint) axes[i];
    if (axis_scale[d] != (float) out->dims[d] / (float) in->dims[d])
      return FALSE;
  }
  if (in->dims[hy] > M2I_RESIZE_MAX_SIZE || in->dims[wx] > M2I_RESIZE_MAX_SIZE ||
      out->dims[hy] > M2I_RESIZE_MAX_SIZE || out->dims[wx] > M2I_RESIZE_MAX_SIZE)
    return FALSE;
  M2iResizeParams p;
  m2i_resize_params_init (&p, (gint) out->dims[wx], (gint) out->dims[hy]);
  p.mode = a->mode;
  p.coord = a->coord;
  p.nearest = a->nearest;
  p.antialias = a->antialias;
  p.cube_coeff = a->cube_coeff;
  EnginePath *e = &s->engine;
  e->plan = m2i_resize_plan_new (&p, (gint) in->dims[wx], (gint) in->dims[hy], NULL);
  if (!e->plan)
    return FALSE;
  gsize es = m2i_element_type_size (s->type);
  e->data = s->type == M2I_ET_U8 ? M2I_RESIZE_DATA_U8 : M2I_RESIZE_DATA_F32;
  e->channels = interleaved ? (gint) in->dims[r - 1] : 1;
  e->images = m2i_shape_numel (in) / (in->dims[hy] * in->dims[wx] * e->channels);
  e->in_row = in->dims[wx] * e->channels * es;
  e->out_row = out->dims[wx] * e->channels * es;
  e->in_image = e->in_row * in->dims[hy];
  e->out_image = e->out_row * out->dims[hy];
  e->out_h = out->dims[hy];
  e->scratch_floats = m2i_align_up (m2i_resize_scratch_floats (e->plan, e->channels), 16);
  return TRUE;
}

static gboolean
interp_infer (M2iOpContext *ctx, GError **error)
{
  gint version = ir_k_op_version (ctx);
  gboolean v1 = version < 4, v11 = version >= 11;
  static const M2iElementType types[] = { M2I_ET_F32, M2I_ET_U8 };
  if (!ir_k_check_arity (ctx, v1 || v11 ? 2 : 3, v1 ? 2 : v11 ? 3 : 4, 1, 1, error))
    return FALSE;
  const M2iShape *in = &ctx->inputs[0].shape;
  gint rank = in->rank;
  Attrs a = { 0 };
  gint64 axes[M2I_MAX_RANK];
  gint n_axes;
  gboolean use_scales = FALSE;
  float scales[M2I_MAX_RANK];
  gint64 sizes[M2I_MAX_RANK];

  if (v1) {
    static const char *const v1_modes[] = { "nearest", "linear", "cubic", "area", NULL };
    gint mode;
    gboolean align;
    if (!m2i_ir_node_attr_enum (ctx->node, "mode", "nearest", v1_modes, &mode, error) ||
        !m2i_ir_node_attr_bool (ctx->node, "align_corners", TRUE, &align, error) ||
        !m2i_ir_node_attr_bool (ctx->node, "antialias", FALSE, &a.antialias, error) ||
        !m2i_ir_node_attr_ints (ctx->node, "axes", axes, M2I_MAX_RANK, &n_axes, error))
      return FALSE;
    if (mode == 3) {
      m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, ctx->node,
          "mode area is not supported (nearest, linear and cubic are)");
      return FALSE;
    }
    if (n_axes < 0) {
      m2i_ir_node_set_error (error, M2I_ERROR_MALFORMED, ctx->node, "attribute axes is required");
      return FALSE;
    }
    gint n;
    if (!ir_k_const_ints (ctx, 1, sizes, M2I_MAX_RANK, &n, error))
      return FALSE;
    if (n != n_axes) {
      m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
          "target_spatial_shape has %d values for %d axes", n, n_axes);
      return FALSE;
    }
    gint64 pb[M2I_MAX_RANK], pe[M2I_MAX_RANK];
    gint npb, npe;
    if (!m2i_ir_node_attr_ints (ctx->node, "pads_begin", pb, M2I_MAX_RANK, &npb, error) ||
        !m2i_ir_node_attr_ints (ctx->node, "pads_end", pe, M2I_MAX_RANK, &npe, error))
      return FALSE;
    gboolean pads = FALSE;
    for (gint i = 0; i < rank; i++) {
      a.pads_begin[i] = i < npb ? pb[i] : 0;
      a.pads_end[i] = i < npe ? pe[i] : 0;
      pads |= a.pads_begin[i] || a.pads_end[i];
    }
    if (pads) {
      m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, ctx->node,
          "Interpolate-1 with pads is not supported");
      return FALSE;
    }
    a.mode = mode == 0 ? M2I_RESIZE_NEAREST : mode == 2 ? M2I_RESIZE_CUBIC
        : rank < 5 ? M2I_RESIZE_LINEAR_ONNX : M2I_RESIZE_LINEAR;
    a.nearest = M2I_NEAREST_SIMPLE;
    a.cube_coeff = -0.75f;
    gboolean nchw_spatial = rank == 4 && n_axes == 2 && axes[0] == 2 && axes[1] == 3;
    if (align)
      a.coord = M2I_COORD_ALIGN_CORNERS;
    else if (a.mode != M2I_RESIZE_NEAREST && a.mode != M2I_RESIZE_CUBIC && !nchw_spatial)
      a.coord = M2I_COORD_HALF_PIXEL;
    else
      a.coord = M2I_COORD_ASYMMETRIC;
  } else {
    if (!read_attrs_v4 (ctx, rank, &a, error))
      return FALSE;
    static const char *const calc[] = { "sizes", "scales", NULL };
    gint sc;
    if (!m2i_ir_node_attr_enum (ctx->node, "shape_calculation_mode", "sizes", calc, &sc, error))
      return FALSE;
    if (!m2i_ir_node_get_attr (ctx->node, "shape_calculation_mode")) {
      m2i_ir_node_set_error (error, M2I_ERROR_MALFORMED, ctx->node,
          "attribute shape_calculation_mode is required");
      return FALSE;
    }
    use_scales = sc == 1;
    gint axes_port = v11 ? 2 : 3;
    if (ctx->n_inputs > axes_port) {
      if (!ir_k_const_ints (ctx, axes_port, axes, M2I_MAX_RANK, &n_axes, error))
        return FALSE;
    } else {
      n_axes = rank;
      for (gint i = 0; i < rank; i++)
        axes[i] = i;
    }
    gint port = v11 ? 1 : use_scales ? 2 : 1, n;
    gboolean ok = use_scales ? ir_k_const_floats (ctx, port, scales, M2I_MAX_RANK, &n, error)
        : ir_k_const_ints (ctx, port, sizes, M2I_MAX_RANK, &n, error);
    if (!ok)
      return FALSE;
    if (n < n_axes) {
      m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
          "input %d has %d %s for %d axes", port, n, use_scales ? "scales" : "sizes", n_axes);
      return FALSE;
    }
  }
  if (a.mode != M2I_RESIZE_NEAREST && !ir_k_check_type (ctx, 0, types, G_N_ELEMENTS (types), error))
    return FALSE;
  if (m2i_element_type_size (ctx->inputs[0].type) == 0) {
    m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, ctx->node,
        "input 0 has element type %s", m2i_element_type_to_string (ctx->inputs[0].type));
    return FALSE;
  }

  /* Axes: in range, not repeated. */
  gint axis_slot[M2I_MAX_RANK];
  for (gint d = 0; d < rank; d++)
    axis_slot[d] = -1;
  for (gint i = 0; i < n_axes; i++) {
    gint64 ax;
    if (!ir_k_axis (ctx, axes[i], rank, FALSE, "axis", &ax, error))
      return FALSE;
    if (axis_slot[ax] >= 0) {
      m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
          "axis %" G_GINT64_FORMAT " is listed twice", ax);
      return FALSE;
    }
    axis_slot[ax] = i;
    axes[i] = ax;
  }
  if (a.mode >= M2I_RESIZE_BILINEAR_PILLOW && n_axes != 2) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "mode %s needs exactly two axes (H, W), got %d", m2i_resize_mode_names[a.mode], n_axes);
    return FALSE;
  }

  /* Output shape and the scale of each resized axis. */
  M2iShape out = *in;
  float axis_scale[M2I_MAX_RANK];
  gboolean any_down = FALSE;
  for (gint d = 0; d < rank; d++) {
    gint64 padded = in->dims[d] + a.pads_begin[d] + a.pads_end[d];
    out.dims[d] = padded;
    axis_scale[d] = 1.0f;
    gint i = axis_slot[d];
    if (i < 0)
      continue;
    if (use_scales) {
      if (!(scales[i] > 0)) {
        m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
            "scale %g for axis %d is not positive", scales[i], d);
        return FALSE;
      }
      /* OpenVINO's shape rule: floor(dim · (scale + 1e-6)), in float; a
       * size past 2^31 is refused below (before it is made an integer) */
      float size = (float) padded * (scales[i] + 1.0e-6f);
      out.dims[d] = scales[i] == 1.0f ? padded : size < 2147483648.0f ? (gint64) size : -1;
      axis_scale[d] = scales[i];
    } else {
      out.dims[d] = sizes[i];
      axis_scale[d] = padded ? (float) sizes[i] / (float) padded : 1.0f;
    }
    if (out.dims[d] < 1 || out.dims[d] > G_MAXINT32 || padded < 1) {
      m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
          "axis %d: cannot resize %" G_GINT64_FORMAT " (with pads) to %" G_GINT64_FORMAT,
          d, padded, out.dims[d]);
      return FALSE;
    }
    any_down |= axis_scale[d] < 1.0f;
  }

  /* the tables below are sized on the output: it must be the declared one */
  if (!ir_k_output_declared (ctx, 0, &out, error))
    return FALSE;
  InterpState *s = g_new0 (InterpState, 1);
  s->type = ctx->inputs[0].type;
  s->in = *in;
  s->out = out;
  s->nearest = a.mode == M2I_RESIZE_NEAREST;
  s->slices = ir_k_threads (ctx);
  /* OpenVINO's reference casts the sums of linear_onnx and cubic to u8
   * (truncation) and rounds the others; so do we, after clamping. */
  s->u8_truncate = a.mode == M2I_RESIZE_LINEAR_ONNX || a.mode == M2I_RESIZE_CUBIC;
  /* nearest is a copy: the gather below gives the engine's bits (the same
   * index formulas) without its filter machinery */
  if (!s->nearest && engine_path (s, &a, axes, n_axes, use_scales, axis_scale)) {
    ctx->scratch_bytes = s->slices * s->engine.scratch_floats * sizeof (float);
    ctx->outputs[0].type = s->type;
    ctx->outputs[0].shape = out;
    ctx->state = s;
    return TRUE;
  }
  /* Tables; pillow does W (the second axis) first, then H, as Pillow. The
   * other modes resize the most shrinking axes first, so later passes
   * touch less data. */
  gint order[M2I_MAX_RANK], n_order = 0;
  for (gint d = 0; d < rank; d++)
    if (axis_slot[d] >= 0 || a.pads_begin[d] || a.pads_end[d])
      order[n_order++] = d;
  if (a.mode >= M2I_RESIZE_BILINEAR_PILLOW) {
    n_order = 0;
    order[n_order++] = (gint) axes[1];
    order[n_order++] = (gint) axes[0];
    for (gint d = 0; d < rank; d++)
      if (axis_slot[d] < 0 && (a.pads_begin[d] || a.pads_end[d]))
        order[n_order++] = d;
  } else {
    for (gint i = 1; i < n_order; i++)
      for (gint j = i; j > 0; j--) {
        gint p = order[j - 1], q = order[j];
        double rp = (double) out.dims[p] / in->dims[p], rq = (double) out.dims[q] / in->dims[q];
        if (rq < rp) {
          order[j - 1] = q;
          order[j] = p;
        }
      }
  }
  M2iShape cur = *in;
  gsize stage = m2i_shape_numel (in);
  for (gint i = 0; i < n_order; i++) {
    gint d = order[i];
    AxisTable *t = &s->tables[s->n_tables++];
    t->axis = d;
    t->in_len = in->dims[d];
    t->out_len = out.dims[d];
    build_table (t, &a, a.pads_begin[d], in->dims[d] + a.pads_begin[d] + a.pads_end[d],
        axis_scale[d], any_down, axis_slot[d] >= 0);
    t->round_after = a.mode >= M2I_RESIZE_BILINEAR_PILLOW && s->type == M2I_ET_U8 && i == 0;
    cur.dims[d] = out.dims[d];
    stage = MAX (stage, (gsize) m2i_shape_numel (&cur));
  }
  s->stage_floats = m2i_align_up (stage, 16);
  if (s->nearest)
    gather_plan (s);
  ctx->scratch_bytes = s->nearest ? 0 : 2 * s->stage_floats * sizeof (float);
  ctx->outputs[0].type = s->type;
  ctx->outputs[0].shape = out;
  ctx->state = s;
  return TRUE;
}

/* ---- execute ----------------------------------------------------------- */

typedef struct {
  const AxisTable *t;
  const float *src;
  float *dst;
  gint64 inner;
} PassJob;

/* dst[o][x] = Σ_k w[o][k] · src[index[o][k]][x] for rows (outer, o). */
M2I_K_INLINE void
pass_row_body (const float *src, float *dst, gint64 inner, const gint32 *idx,
    const float *w, gint taps)
{
  for (gint64 x = 0; x < inner; x++)
    dst[x] = 0.0f;
  for (gint k = 0; k < taps; k++) {
    if (idx[k] < 0)
      continue;
    const float *s = src + idx[k] * inner;
    float wk = w[k];
    for (gint64 x = 0; x < inner; x++)
      dst[x] += wk * s[x];
  }
}
M2I_K_SIMD_CLONES (pass_row, (const float *src, float *dst, gint64 inner,
        const gint32 *idx, const float *w, gint taps), (src, dst, inner, idx, w, taps))

static void
pass_slice (gint begin, gint end, gint slice, gpointer data)
{
  const PassJob *j = data;
  const AxisTable *t = j->t;
  for (gint r = begin; r < end; r++) {
    gint64 outer = r / t->out_len, o = r % t->out_len;
    pass_row (j->src + outer * t->in_len * j->inner, j->dst + (outer * t->out_len + o) * j->inner,
        j->inner, t->index + o * t->taps, t->weight + o * t->taps, t->taps);
  }
}

/* Clamped to [0, 255], then rounded half away from zero or truncated. */
static inline float
round_u8 (float v, gboolean truncate)
{
  v = CLAMP (v, 0.0f, 255.0f);
  return truncate ? truncf (v) : floorf (v + 0.5f);
}

typedef struct {
  const InterpState *s;
  const guint8 *src;
  guint8 *dst;
  gsize es;
} GatherJob;

/* One output row of the gather from source row @src (the plan's fields in
 * locals: stores through @dst could otherwise alias them, which keeps the
 * compiler from vectorizing). */
#define GATHER_ROW(T) do { \
    const T *s_ = (const T *) src; \
    T *d_ = (T *) dst; \
    if (col) { \
      for (gint64 x = 0; x < n_out; x++) \
        d_[x] = col[x] < 0 ? (T) 0 : s_[col[x]]; \
    } else if (k == 2) { \
      for (gint64 x = 0; x < n_in; x++) \
        d_[2 * x] = d_[2 * x + 1] = s_[x]; \
    } else { \
      for (gint64 x = 0; x < n_in; x++) \
        for (gint64 i = 0; i < k; i++) \
          d_[x * k + i] = s_[x]; \
    } \
  } while (0)

static void
gather_row (const GatherPlan *g, const guint8 *src, guint8 *dst, gsize es)
{
  const gint32 *col = g->col;
  gint64 k = g->ratio, n_in = g->src_row_len, n_out = g->row_len;
  if (k == 1) {
    memcpy (dst, src, n_out * es);
    return;
  }
  switch (es) {
    case 1: GATHER_ROW (guint8); return;
    case 2: GATHER_ROW (guint16); return;
    case 4: GATHER_ROW (guint32); return;
    case 8: GATHER_ROW (guint64); return;
    default:
      for (gint64 x = 0; x < n_out; x++) {
        gint64 i = col ? col[x] : x / k;
        if (i < 0)
          memset (dst + x * es, 0, es);
        else
          memcpy (dst + x * es, src + i * es, es);
      }
  }
}

/* Nearest: output rows [begin, end), each gathered from its source row, a
 * copy of the previous output row when that had the same source, or zeros
 * when it lies in the pads. */
static void
gather_slice (gint begin, gint end, gint slice, gpointer data)
{
  const GatherJob *j = data;
  const GatherPlan *g = &j->s->gather;
  const gint64 *dims = j->s->out.dims;
  gint last = j->s->out.rank - 1;
  gint64 idx[M2I_MAX_RANK], rem = begin, prev = -1;
  for (gint d = last - 1; d >= 0; d--) {
    idx[d] = rem % dims[d];
    rem /= dims[d];
  }
  gsize row_bytes = g->row_len * j->es;
  for (gint64 r = begin; r < end; r++) {
    gint64 off = 0;
    for (gint d = 0; d < last && off >= 0; d++)
      off = g->row_off[d][idx[d]] < 0 ? -1 : off + g->row_off[d][idx[d]];
    guint8 *dst = j->dst + r * row_bytes;
    if (off < 0)
      memset (dst, 0, row_bytes);
    else if (off == prev)
      memcpy (dst, dst - row_bytes, row_bytes);
    else
      gather_row (g, j->src + off * j->es, dst, j->es);
    prev = off;
    for (gint d = last - 1; d >= 0 && ++idx[d] == dims[d]; d--)
      idx[d] = 0;
  }
}

typedef struct {
  const InterpState *s;
  const guint8 *src;
  guint8 *dst;
  float *scratch;
} EngineJob;

/* Slices of (image, band of output rows) through the engine's kernels. */
#define ENGINE_BAND 16

static void
engine_slice (gint begin, gint end, gint slice, gpointer data)
{
  const EngineJob *j = data;
  const EnginePath *e = &j->s->engine;
  gint64 bands = (e->out_h + ENGINE_BAND - 1) / ENGINE_BAND;
  for (gint t = begin; t < end; t++) {
    gint64 img = t / bands, y0 = (t % bands) * ENGINE_BAND;
    m2i_resize_image_rows (e->plan, e->data, e->channels, j->src + img * e->in_image,
        e->in_row, j->dst + img * e->out_image, e->out_row, (gint) y0,
        (gint) MIN (y0 + ENGINE_BAND, e->out_h), j->scratch + slice * e->scratch_floats, NULL);
  }
}

static gboolean
interp_execute (M2iOpContext *ctx, GError **error)
{
  const InterpState *s = ctx->state;
  gint64 out_numel = m2i_shape_numel (&s->out);
  if (out_numel == 0)
    return TRUE;
  gint slices = out_numel >= 32768 ? MIN (ir_k_threads (ctx), s->slices) : 1;
  if (s->engine.plan) {
    EngineJob j = { s, ctx->inputs[0].data, ctx->outputs[0].data, ctx->scratch };
    gint64 bands = (s->engine.out_h + ENGINE_BAND - 1) / ENGINE_BAND;
    ir_k_parallel_for ((gint) (s->engine.images * bands), slices, 1, engine_slice, &j);
    return TRUE;
  }
  if (s->nearest) {
    GatherJob j = { s, ctx->inputs[0].data, ctx->outputs[0].data,
      m2i_element_type_size (s->type) };
    gint64 rows = s->out.rank ? out_numel / s->out.dims[s->out.rank - 1] : 1;
    /* a copied element weighs like four multiply-adds, as in permute.c */
    ir_k_parallel_for ((gint) rows, MIN (ir_k_slices_for (ctx, out_numel * 4), s->slices), 1,
        gather_slice, &j);
    return TRUE;
  }
  float *buf[2] = { ctx->scratch, (float *) ctx->scratch + s->stage_floats };
  gint64 in_numel = m2i_shape_numel (&s->in);
  const float *src;
  if (s->type == M2I_ET_U8) {
    const guint8 *u = ctx->inputs[0].data;
    for (gint64 i = 0; i < in_numel; i++)
      buf[1][i] = u[i];
    src = buf[1];
  } else {
    src = ctx->inputs[0].data;
  }
  M2iShape cur = s->in;
  for (gint i = 0; i < s->n_tables; i++) {
    const AxisTable *t = &s->tables[i];
    gboolean last = i == s->n_tables - 1;
    float *dst = last && s->type == M2I_ET_F32 ? ctx->outputs[0].data : buf[i % 2];
    if (src == dst)
      dst = buf[(i + 1) % 2];
    gint64 outer = 1, inner = 1;
    for (gint d = 0; d < cur.rank; d++) {
      if (d < t->axis)
        outer *= cur.dims[d];
      else if (d > t->axis)
        inner *= cur.dims[d];
    }
    PassJob j = { t, src, dst, inner };
    ir_k_parallel_for ((gint) (outer * t->out_len), slices, 1, pass_slice, &j);
    cur.dims[t->axis] = t->out_len;
    if (t->round_after) {
      gint64 n = m2i_shape_numel (&cur);
      for (gint64 k = 0; k < n; k++)
        dst[k] = round_u8 (dst[k], FALSE);
    }
    src = dst;
  }
  if (s->n_tables == 0 && s->type == M2I_ET_F32)
    memcpy (ctx->outputs[0].data, src, out_numel * sizeof (float));
  if (s->type == M2I_ET_U8) {
    guint8 *o = ctx->outputs[0].data;
    for (gint64 k = 0; k < out_numel; k++)
      o[k] = (guint8) round_u8 (src[k], s->u8_truncate);
  }
  return TRUE;
}

const M2iOpKernel ir_kernel_interpolate = {
  "Interpolate", "opset1 opset4 opset11", interp_infer, interp_execute, interp_state_free,
};
