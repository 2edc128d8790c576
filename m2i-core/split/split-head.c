/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* split-head.c — the PrePostProcessor head of a model lowered to one M2I op
 * list (the seed's compiler lowers the same chain).
 *
 * The chain starts at NV12toRGB/NV12toBGR/I420toRGB/I420toBGR reading model
 * inputs (one buffer, or two or three planes) and follows single-consumer
 * links through Convert (u8 → float), Interpolate (sizes on H and W),
 * per-channel Subtract / Add / Multiply / Divide by constants and
 * BatchNormInference, and Transpose NHWC → NCHW. On the M2I block it
 * becomes csc → convert → resize → permute → norm: the per-channel affine
 * steps commute with the resize (its weights sum to 1) and the permute, so
 * they are composed into the norm's A, B, C, D coefficients
 * (out = (in − B) / C · A + D) wherever they stand in the model. The longest
 * prefix of the chain the planner accepts as device tasks is the head.
 */
#include "split-private.h"

#include <math.h>
#include <string.h>

static gboolean
is_type (const SplitAnalysis *a, gint node, const char *type)
{
  return !strcmp (m2i_ir_node_get_type (m2i_ir_model_get_node (a->model, node)), type);
}

static M2iIrNode *
node_at (const SplitAnalysis *a, gint i)
{
  return m2i_ir_model_get_node (a->model, i);
}

/* out = (in − B) / C · A + D per channel, composed in double. */
typedef struct {
  double A[3], B[3], C[3], D[3];
  gboolean any;
} Affine;

static void
affine_identity (Affine *f)
{
  for (int c = 0; c < 3; c++) {
    f->A[c] = f->C[c] = 1;
    f->B[c] = f->D[c] = 0;
  }
  f->any = FALSE;
}

/* TRUE while f is (x − B) / C: a mean and a std, no gain or offset yet. */
static gboolean
pure_mean_std (const Affine *f, int c)
{
  return f->A[c] == 1 && f->D[c] == 0;
}

/* Applies out' = out · m + k to channel c. */
static void
affine_then (Affine *f, int c, double m, double k)
{
  if (pure_mean_std (f, c) && m != 0) {
    /* ((x − B)/C)·m + k = (x − (B − k·C/m)) / (C/m) */
    f->B[c] -= k * f->C[c] / m;
    f->C[c] /= m;
  } else {
    f->A[c] *= m;
    f->D[c] = f->D[c] * m + k;
  }
  f->any = TRUE;
}

/* The 3 per-channel values (or one, repeated) of constant input @i of
 * @node, whose channels are on @axis of the layer's rank-4 output. */
static gboolean
channel_const (const SplitAnalysis *a, gint node, gint i, gint axis, double v[3])
{
  const M2iTensor *c;
  if (!split_analysis_const_input (a, node, i, &c) || c->type != M2I_ET_F32)
    return FALSE;
  gint64 numel = m2i_shape_numel (&c->shape);
  if (numel != 1 && numel != 3)
    return FALSE;
  if (numel == 3) {
    /* aligned from the right with a rank-4 output */
    gint k = c->shape.rank - (4 - axis);
    if (k < 0 || c->shape.dims[k] != 3)
      return FALSE;
  }
  for (int ch = 0; ch < 3; ch++)
    v[ch] = ((const float *) c->data)[numel == 3 ? ch : 0];
  return TRUE;
}

/* Applies a Subtract/Add/Multiply/Divide/BatchNormInference layer to @f;
 * FALSE when it is no per-channel affine step of the chain value. */
static gboolean
affine_layer (const SplitAnalysis *a, gint node, gint axis, gint chain_input, Affine *f)
{
  double v[3];
  if (is_type (a, node, "BatchNormInference")) {
    double g[3], b[3], m[3], var[3], eps;
    if (axis != 1 || chain_input != 0 || !channel_const (a, node, 1, 1, g) ||
        !channel_const (a, node, 2, 1, b) || !channel_const (a, node, 3, 1, m) ||
        !channel_const (a, node, 4, 1, var) ||
        !m2i_ir_node_attr_float (node_at (a, node), "epsilon", 0, &eps, NULL))
      return FALSE;
    for (int c = 0; c < 3; c++) {
      double sd = sqrt (var[c] + eps);
      if (!(sd > 0))
        return FALSE;
      if (!f->any) {
        f->A[c] = g[c];
        f->B[c] = m[c];
        f->C[c] = sd;
        f->D[c] = b[c];
      } else {
        affine_then (f, c, g[c] / sd, b[c] - m[c] * g[c] / sd);
      }
    }
    f->any = TRUE;
    return TRUE;
  }
  gint ci = 1 - chain_input;
  if (m2i_ir_node_get_n_inputs (node_at (a, node)) != 2 || !channel_const (a, node, ci, axis, v))
    return FALSE;
  for (int c = 0; c < 3; c++) {
    if (is_type (a, node, "Subtract") && chain_input == 0)
      affine_then (f, c, 1, -v[c]);
    else if (is_type (a, node, "Add"))
      affine_then (f, c, 1, v[c]);
    else if (is_type (a, node, "Multiply") && v[c] != 0)
      affine_then (f, c, v[c], 0);
    else if (is_type (a, node, "Divide") && chain_input == 0 && v[c] != 0)
      affine_then (f, c, 1 / v[c], 0);
    else
      return FALSE;
  }
  return TRUE;
}

static gboolean
to_f16 (double v, m2i_f16 *out)
{
  if (!isfinite (v) || fabs (v) > 65504.0)
    return FALSE;
  *out = m2i_f32_to_f16 ((float) v);
  return TRUE;
}

static gboolean
norm_params (const Affine *f, M2iNormParams *p)
{
  for (int c = 0; c < 3; c++)
    if (!to_f16 (f->A[c], &p->a[c]) || !to_f16 (f->B[c], &p->b[c]) ||
        !to_f16 (f->C[c], &p->c[c]) || !to_f16 (f->D[c], &p->d[c]) || p->c[c] == 0)
      return FALSE;
  return TRUE;
}

static gboolean
resize_params (const SplitAnalysis *a, gint node, gint h_axis, M2iResizeParams *rp)
{
  const M2iIrNode *n = node_at (a, node);
  const char *calc = m2i_ir_node_get_attr (n, "shape_calculation_mode");
  if (!calc || strcmp (calc, "sizes"))
    return FALSE;
  gint64 pads[8];
  gint np;
  for (int k = 0; k < 2; k++) {
    if (!m2i_ir_node_attr_ints (n, k ? "pads_end" : "pads_begin", pads, 8, &np, NULL))
      return FALSE;
    for (gint i = 0; i < np; i++)
      if (pads[i])
        return FALSE;
  }
  gint src, port;
  M2iIrNode *s;
  if (!m2i_ir_node_get_input_source (n, 0, &s, &port))
    return FALSE;
  src = m2i_ir_node_get_index (s);
  const M2iTensor *in = split_analysis_value (a, src, port), *out = split_analysis_value (a, node, 0);
  if (in->shape.rank != 4 || out->shape.rank != 4)
    return FALSE;
  for (gint i = 0; i < 4; i++)
    if (i != h_axis && i != h_axis + 1 && in->shape.dims[i] != out->shape.dims[i])
      return FALSE;
  m2i_resize_params_init (rp, out->shape.dims[h_axis + 1], out->shape.dims[h_axis]);
  double cube;
  gboolean aa;
  const char *mode = m2i_ir_node_get_attr (n, "mode");
  const char *coord = m2i_ir_node_get_attr (n, "coordinate_transformation_mode");
  const char *nearest = m2i_ir_node_get_attr (n, "nearest_mode");
  if (!mode || !m2i_resize_mode_from_string (mode, &rp->mode) ||
      (coord && !m2i_coord_mode_from_string (coord, &rp->coord)) ||
      (nearest && !m2i_nearest_mode_from_string (nearest, &rp->nearest)) ||
      !m2i_ir_node_attr_bool (n, "antialias", FALSE, &aa, NULL) ||
      !m2i_ir_node_attr_float (n, "cube_coeff", -0.75, &cube, NULL))
    return FALSE;
  /* the pillow modes are Interpolate-11's */
  if ((rp->mode == M2I_RESIZE_BILINEAR_PILLOW || rp->mode == M2I_RESIZE_BICUBIC_PILLOW) &&
      strcmp (m2i_ir_node_get_version (n), "opset11"))
    return FALSE;
  rp->antialias = aa;
  rp->cube_coeff = cube;
  return TRUE;
}

/* The only op reading output 0 of @node that may join the chain, or -1. */
static gint
next_link (const SplitAnalysis *a, gint node, const gboolean *stop, gint *input)
{
  gint n;
  const gint *c = split_analysis_consumers (a, node, 0, &n);
  if (n != 1 || a->kind[c[0]] != SPLIT_NODE_OP || (stop && stop[c[0]]))
    return -1;
  *input = c[1];
  return c[0];
}

/* Lowers the first @len layers of the chain; FALSE when they do not form a
 * device plan. */
static gboolean
lower_prefix (const SplitAnalysis *a, const gint *nodes, const gint *inputs, gint len,
    M2iProfile profile, SplitHeadInfo *h)
{
  gboolean bgr = is_type (a, nodes[0], "NV12toBGR") || is_type (a, nodes[0], "I420toBGR");
  gboolean convert = FALSE, permute = FALSE, resized = FALSE;
  M2iResizeParams rp;
  Affine f;
  affine_identity (&f);
  for (gint k = 1; k < len; k++) {
    gint node = nodes[k];
    gint axis = permute ? 1 : 3;
    if (is_type (a, node, "Convert")) {
      const char *to = m2i_ir_node_get_attr (node_at (a, node), "destination_type");
      if (k != 1 || !to || (strcmp (to, "f32") && strcmp (to, "f16")))
        return FALSE;
      convert = TRUE;
    } else if (is_type (a, node, "Interpolate")) {
      if (resized || !resize_params (a, node, permute ? 2 : 1, &rp))
        return FALSE;
      resized = TRUE;
    } else if (is_type (a, node, "Transpose")) {
      const M2iTensor *order;
      if (permute || !split_analysis_const_input (a, node, 1, &order) ||
          m2i_shape_numel (&order->shape) != 4 || order->type != M2I_ET_I64)
        return FALSE;
      const gint64 *o = order->data;
      if (o[0] != 0 || o[1] != 3 || o[2] != 1 || o[3] != 2)
        return FALSE;
      permute = TRUE;
    } else if (!convert || !affine_layer (a, node, axis, inputs[k], &f)) {
      return FALSE;
    }
  }
  if (f.any && !permute)
    return FALSE;            /* the block normalizes planar data only */
  M2iOpList ops;
  m2i_op_list_init (&ops);
  m2i_op_list_add_csc (&ops, bgr ? M2I_ORDER_BGR : M2I_ORDER_RGB);
  M2iDataType dtype = M2I_DTYPE_U8;
  if (convert) {
    dtype = profile == M2I_PROFILE_EXTENDED ? M2I_DTYPE_F32 : M2I_DTYPE_F16;
    m2i_op_list_add_convert (&ops, dtype);
  }
  if (resized && !m2i_op_list_add_resize (&ops, &rp))
    return FALSE;
  if (permute)
    m2i_op_list_add_permute (&ops);
  if (f.any) {
    M2iNormParams np;
    if (!norm_params (&f, &np))
      return FALSE;
    m2i_op_list_add_norm (&ops, &np);
  }
  const M2iTensor *out = split_analysis_value (a, nodes[len - 1], 0);
  gint oh = out->shape.dims[permute ? 2 : 1], ow = out->shape.dims[permute ? 3 : 2];
  M2iFormat out_format = m2i_format_compose (permute ? M2I_LAYOUT_PLANAR : M2I_LAYOUT_INTERLEAVED,
      dtype, bgr ? M2I_ORDER_BGR : M2I_ORDER_RGB);
  M2iImage in_img, out_img;
  if (out_format == M2I_FORMAT_UNKNOWN ||
      !m2i_image_init (&in_img, h->in_format, h->in_width, h->in_height) ||
      !m2i_image_init (&out_img, out_format, ow, oh))
    return FALSE;
  M2iPlanOptions opts;
  m2i_plan_options_init (&opts);
  opts.profile = profile;
  opts.n_threads = 1;
  M2iPlan *plan = m2i_plan_new (&in_img, &ops, &out_img, &opts, NULL);
  if (!plan)
    return FALSE;
  gboolean device = TRUE;
  for (guint t = 0; t < m2i_plan_n_tasks (plan); t++) {
    M2iTaskInfo ti;
    m2i_plan_get_task (plan, t, &ti);
    device &= ti.target == M2I_TASK_DEVICE;
  }
  m2i_plan_free (plan);
  if (!device)
    return FALSE;
  h->n_nodes = len;
  memcpy (h->nodes, nodes, len * sizeof (gint));
  h->ops = ops;
  h->out_format = out_format;
  h->out_width = ow;
  h->out_height = oh;
  h->out_node = nodes[len - 1];
  h->out_port = 0;
  return TRUE;
}

/* The frame's format and size from the csc layer's inputs. */
static gboolean
frame_inputs (const SplitAnalysis *a, gint csc, SplitHeadInfo *h)
{
  const M2iIrNode *n = node_at (a, csc);
  gboolean i420 = is_type (a, csc, "I420toRGB") || is_type (a, csc, "I420toBGR");
  gint n_in = m2i_ir_node_get_n_inputs (n);
  if (n_in != 1 && n_in != (i420 ? 3 : 2))
    return FALSE;
  h->n_planes = n_in;
  for (gint i = 0; i < n_in; i++) {
    M2iIrNode *s;
    gint port;
    if (!m2i_ir_node_get_input_source (n, i, &s, &port) ||
        strcmp (m2i_ir_node_get_type (s), "Parameter"))
      return FALSE;
    h->plane_node[i] = m2i_ir_node_get_index (s);
    const M2iTensor *v = split_analysis_value (a, h->plane_node[i], 0);
    if (v->type != M2I_ET_U8 || v->shape.rank != 4 || v->shape.dims[0] != 1)
      return FALSE;
  }
  const M2iTensor *y = split_analysis_value (a, h->plane_node[0], 0);
  gint64 rows = y->shape.dims[1], w = y->shape.dims[2];
  if (y->shape.dims[3] != 1)
    return FALSE;
  h->in_format = i420 ? M2I_FORMAT_PL_YUV420_8 : M2I_FORMAT_SP_NV12_8;
  h->in_width = w;
  h->in_height = n_in == 1 ? rows * 2 / 3 : rows;
  if (n_in == 1 && rows % 3)
    return FALSE;
  const M2iTensor *rgb = split_analysis_value (a, csc, 0);
  return rgb->shape.rank == 4 && rgb->shape.dims[1] == h->in_height &&
      rgb->shape.dims[2] == h->in_width && rgb->shape.dims[3] == 3 &&
      h->in_width > 0 && h->in_height > 0;
}

gboolean
split_head_find (const SplitAnalysis *a, const gboolean *stop, M2iProfile profile,
    SplitHeadInfo *head)
{
  for (gint t = 0; t < a->n_nodes; t++) {
    gint csc = a->topo[t];
    if (a->kind[csc] != SPLIT_NODE_OP || (stop && stop[csc]) ||
        !(is_type (a, csc, "NV12toRGB") || is_type (a, csc, "NV12toBGR") ||
            is_type (a, csc, "I420toRGB") || is_type (a, csc, "I420toBGR")))
      continue;
    SplitHeadInfo h = { 0 };
    if (!frame_inputs (a, csc, &h))
      continue;
    gint nodes[G_N_ELEMENTS (h.nodes)], inputs[G_N_ELEMENTS (h.nodes)], len = 1;
    nodes[0] = csc;
    inputs[0] = 0;
    gint in;
    for (gint nx = next_link (a, csc, stop, &in); nx >= 0 && len < (gint) G_N_ELEMENTS (nodes);
        nx = next_link (a, nx, stop, &in)) {
      nodes[len] = nx;
      inputs[len++] = in;
    }
    for (; len >= 1; len--)
      if (lower_prefix (a, nodes, inputs, len, profile, &h)) {
        *head = h;
        return TRUE;
      }
  }
  return FALSE;
}
