/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* split-analyze.c — what each layer of a model is, which layers fuse into one
 * device operation, the int8 grids FakeQuantize layers define, and what the
 * device can run: the capability table of docs/split.md.
 *
 * The same analysis runs on the whole model (to partition it) and on a
 * piece's sub-model (to build its device program), so both agree on every
 * decision.
 */
#include "split-private.h"
#include <base/m2i-error.h>

#include <math.h>
#include <string.h>

#define NPU_MAX_DIM (1 << 20)

static gboolean
is_type (const M2iIrNode *n, const char *type)
{
  return !strcmp (m2i_ir_node_get_type (n), type);
}

static M2iIrNode *
node_at (const SplitAnalysis *a, gint i)
{
  return m2i_ir_model_get_node (a->model, i);
}

const M2iTensor *
split_analysis_value (const SplitAnalysis *a, gint node, gint port)
{
  return m2i_ir_compiled_model_get_value (a->cm, node, port);
}

const SplitGrid *
split_analysis_grid (const SplitAnalysis *a, gint node, gint port)
{
  const SplitGrid *g = &a->grids[a->value_base[node] + port];
  return g->valid ? g : NULL;
}

const gint *
split_analysis_consumers (const SplitAnalysis *a, gint node, gint port, gint *n)
{
  gint v = a->value_base[node] + port;
  *n = (a->cons_start[v + 1] - a->cons_start[v]);
  return a->cons + 2 * a->cons_start[v];
}

/* The producer of input @i of @node. */
static gboolean
source (const SplitAnalysis *a, gint node, gint i, gint *src, gint *port)
{
  M2iIrNode *s;
  if (!m2i_ir_node_get_input_source (node_at (a, node), i, &s, port))
    return FALSE;
  *src = m2i_ir_node_get_index (s);
  return TRUE;
}

gboolean
split_analysis_const_input (const SplitAnalysis *a, gint node, gint i, const M2iTensor **value)
{
  gint src, port;
  if (!source (a, node, i, &src, &port))
    return FALSE;
  const M2iTensor *v = split_analysis_value (a, src, port);
  if (!v || !v->data)
    return FALSE;
  if (value)
    *value = v;
  return TRUE;
}

gchar *
split_tensor_name (const M2iIrNode *n, gint port)
{
  const char *names = m2i_ir_node_get_output_names (n, port);
  if (names && *names) {
    const char *comma = strchr (names, ',');
    return g_strstrip (comma ? g_strndup (names, comma - names) : g_strdup (names));
  }
  return port ? g_strdup_printf ("%s.%d", m2i_ir_node_get_name (n), port) :
      g_strdup (m2i_ir_node_get_name (n));
}

/* The only layer reading output 0 of @node, if it is an op that belongs to
 * no unit yet; -1 otherwise. */
static gint
single_consumer (const SplitAnalysis *a, gint node)
{
  gint n;
  const gint *c = split_analysis_consumers (a, node, 0, &n);
  if (n != 1 || a->kind[c[0]] != SPLIT_NODE_OP || a->unit_of[c[0]] >= 0)
    return -1;
  /* every other output unused (MaxPool-8's indices) */
  for (gint p = 1; p < m2i_ir_node_get_n_outputs (node_at (a, node)); p++) {
    gint m;
    split_analysis_consumers (a, node, p, &m);
    if (m)
      return -1;
  }
  return c[0];
}

/* A constant scalar input as a double. */
static gboolean
const_scalar (const SplitAnalysis *a, gint node, gint i, double *out)
{
  const M2iTensor *v;
  if (!split_analysis_const_input (a, node, i, &v) || m2i_shape_numel (&v->shape) != 1)
    return FALSE;
  switch (v->type) {
    case M2I_ET_F32: *out = *(const float *) v->data; return TRUE;
    case M2I_ET_I64: *out = (double) *(const gint64 *) v->data; return TRUE;
    case M2I_ET_I32: *out = *(const gint32 *) v->data; return TRUE;
    default: return FALSE;
  }
}

static gboolean
close_to (double x, double y)
{
  return fabs (x - y) <= 1e-6 * MAX (1.0, MAX (fabs (x), fabs (y)));
}

/* The grid of a FakeQuantize with 256 levels, per-tensor ranges, output
 * range equal to the input range and real 0 on the grid. */
static gboolean
fq_grid (const SplitAnalysis *a, gint node, SplitGrid *g)
{
  gint64 levels;
  double il, ih, ol, oh;
  if (!m2i_ir_node_attr_int (node_at (a, node), "levels", 0, &levels, NULL) || levels != 256 ||
      !const_scalar (a, node, 1, &il) || !const_scalar (a, node, 2, &ih) ||
      !const_scalar (a, node, 3, &ol) || !const_scalar (a, node, 4, &oh))
    return FALSE;
  if (!(oh > ol) || !close_to (il, ol) || !close_to (ih, oh))
    return FALSE;
  double scale = (oh - ol) / 255.0;
  double zp = -128.0 - ol / scale;
  double r = nearbyint (zp);
  if (fabs (zp - r) > 1e-3 || r < -128 || r > 127)
    return FALSE;
  g->valid = TRUE;
  g->scale = scale;
  g->zero_point = (gint32) r;
  return TRUE;
}

static gboolean
grid_equal (const SplitGrid *x, const SplitGrid *y)
{
  return x && y && x->valid && y->valid && x->zero_point == y->zero_point &&
      close_to (x->scale, y->scale);
}

static const SplitGrid *
input_grid (const SplitAnalysis *a, gint node, gint i)
{
  gint src, port;
  return source (a, node, i, &src, &port) ? split_analysis_grid (a, src, port) : NULL;
}

/* A flattening Reshape: [N, C, H, W] → [N, C·H·W]. */
static gboolean
is_flatten (const SplitAnalysis *a, gint node)
{
  if (!is_type (node_at (a, node), "Reshape"))
    return FALSE;
  gint src, port;
  if (!source (a, node, 0, &src, &port))
    return FALSE;
  const M2iTensor *in = split_analysis_value (a, src, port), *out = split_analysis_value (a, node, 0);
  return in->shape.rank == 4 && out->shape.rank == 2 && out->shape.dims[0] == in->shape.dims[0];
}

gboolean
split_analysis_phys (const SplitAnalysis *a, gint node, gint port, gint dims[4])
{
  const M2iTensor *v = split_analysis_value (a, node, port);
  if (!v || v->type != M2I_ET_F32)
    return FALSE;
  const M2iIrNode *n = node_at (a, node);
  gint src, sport;
  if (a->kind[node] == SPLIT_NODE_OP && port == 0 &&
      (is_flatten (a, node) || is_type (n, "FakeQuantize")) && source (a, node, 0, &src, &sport))
    return split_analysis_phys (a, src, sport, dims);
  gint64 d[4];
  if (v->shape.rank == 4)
    memcpy (d, v->shape.dims, sizeof d);
  else if (v->shape.rank == 2) {
    d[0] = v->shape.dims[0];
    d[1] = v->shape.dims[1];
    d[2] = d[3] = 1;
  } else
    return FALSE;
  for (gint i = 0; i < 4; i++) {
    if (d[i] < 1 || d[i] > NPU_MAX_DIM)
      return FALSE;
    dims[i] = (gint) d[i];
  }
  return TRUE;
}

/* ---- classification ---------------------------------------------------------- */

static void
classify (SplitAnalysis *a)
{
  gint n = a->n_nodes;
  gboolean *live = g_new0 (gboolean, n);
  gint *stack = g_new (gint, n), top = 0;
  for (gint i = 0; i < n; i++)
    if (is_type (node_at (a, i), "Result")) {
      live[i] = TRUE;
      stack[top++] = i;
    }
  while (top) {
    gint i = stack[--top];
    for (gint k = 0; k < m2i_ir_node_get_n_inputs (node_at (a, i)); k++) {
      gint s, p;
      if (source (a, i, k, &s, &p) && !live[s]) {
        live[s] = TRUE;
        stack[top++] = s;
      }
    }
  }
  for (gint i = 0; i < n; i++) {
    const M2iIrNode *node = node_at (a, i);
    if (is_type (node, "Parameter") || is_type (node, "Result"))
      a->kind[i] = SPLIT_NODE_IO;
    else if (is_type (node, "Const"))
      a->kind[i] = SPLIT_NODE_CONST;
    else if (!live[i])
      a->kind[i] = SPLIT_NODE_DEAD;
    else {
      gboolean folded = TRUE;
      for (gint p = 0; p < m2i_ir_node_get_n_outputs (node) && folded; p++) {
        const M2iTensor *v = split_analysis_value (a, i, p);
        folded = v && v->data;
      }
      a->kind[i] = folded ? SPLIT_NODE_CONST : SPLIT_NODE_OP;
      if (!folded && is_type (node, "FakeQuantize"))
        a->quantized = TRUE;
    }
  }
  g_free (stack);
  g_free (live);
}

static void
index_consumers (SplitAnalysis *a)
{
  gint n_values = a->value_base[a->n_nodes];
  a->cons_start = g_new0 (gint, n_values + 2);
  gint n_edges = m2i_ir_model_get_n_edges (a->model);
  for (gint e = 0; e < n_edges; e++) {
    gint fn, fp;
    m2i_ir_model_get_edge (a->model, e, &fn, &fp, NULL, NULL);
    a->cons_start[a->value_base[fn] + fp + 1]++;
  }
  for (gint v = 0; v < n_values; v++)
    a->cons_start[v + 1] += a->cons_start[v];
  a->cons_start[n_values + 1] = a->cons_start[n_values];
  a->cons = g_new (gint, 2 * MAX (n_edges, 1));
  gint *fill = g_memdup2 (a->cons_start, sizeof (gint) * (n_values + 1));
  for (gint e = 0; e < n_edges; e++) {
    gint fn, fp, tn, tp;
    m2i_ir_model_get_edge (a->model, e, &fn, &fp, &tn, &tp);
    gint k = fill[a->value_base[fn] + fp]++;
    a->cons[2 * k] = tn;
    a->cons[2 * k + 1] = tp;
  }
  g_free (fill);
}

static void
propagate_grids (SplitAnalysis *a, SplitGridSeeds *seeds)
{
  for (gint t = 0; t < a->n_nodes; t++) {
    gint i = a->topo[t];
    const M2iIrNode *n = node_at (a, i);
    SplitGrid *out = &a->grids[a->value_base[i]];
    if (is_type (n, "Parameter") && seeds) {
      g_autofree gchar *name = split_tensor_name (n, 0);
      const SplitGrid *g = g_hash_table_lookup (seeds, name);
      if (g && g->valid)
        *out = *g;
      continue;
    }
    if (a->kind[i] != SPLIT_NODE_OP)
      continue;
    if (is_type (n, "FakeQuantize")) {
      fq_grid (a, i, out);
    } else if (is_type (n, "MaxPool") || is_type (n, "Reshape") || is_type (n, "Squeeze") ||
        is_type (n, "Unsqueeze") || is_type (n, "ReLU")) {
      const SplitGrid *g = input_grid (a, i, 0);
      if (g)
        *out = *g;
    } else if (is_type (n, "Concat")) {
      const SplitGrid *g0 = input_grid (a, i, 0);
      gboolean same = g0 != NULL;
      for (gint k = 1; k < m2i_ir_node_get_n_inputs (n) && same; k++)
        same = grid_equal (g0, input_grid (a, i, k));
      if (same)
        *out = *g0;
    }
  }
}

/* ---- units ----------------------------------------------------------------------- */

static SplitUnit *
unit_new (SplitAnalysis *a, SplitUnitKind kind)
{
  SplitUnit *u = g_new0 (SplitUnit, 1);
  u->kind = kind;
  u->nodes = g_array_new (FALSE, FALSE, sizeof (gint));
  u->forced = -1;
  g_ptr_array_add (a->units, u);
  return u;
}

static void
conv_desc_free (SplitConvDesc *d)
{
  if (!d)
    return;
  g_free (d->weights);
  g_free (d->bias);
  g_free (d->slopes);
  g_free (d->w_scale);
  g_free (d->w_codes);
  g_free (d);
}

static void
unit_free (gpointer p)
{
  SplitUnit *u = p;
  g_array_free (u->nodes, TRUE);
  g_free (u->why_not);
  conv_desc_free (u->conv);
  g_free (u);
}

static void
unit_take (SplitAnalysis *a, SplitUnit *u, gint node)
{
  g_array_append_val (u->nodes, node);
  a->unit_of[node] = a->units->len - 1;
}

/* Per-channel constant of @n numbers (or one) read by input @i of @node. */
static const M2iTensor *
per_channel_const (const SplitAnalysis *a, gint node, gint i, gint channels)
{
  const M2iTensor *c;
  if (!split_analysis_const_input (a, node, i, &c) || c->type != M2I_ET_F32)
    return NULL;
  gint64 numel = m2i_shape_numel (&c->shape);
  if (numel == 1)
    return c;
  if (numel != channels)
    return NULL;
  /* the channels on axis 1 of the output once aligned from the right */
  const M2iTensor *out = split_analysis_value (a, node, 0);
  gint axis = c->shape.rank - (out->shape.rank - 1);
  return axis >= 0 && axis < c->shape.rank && c->shape.dims[axis] == channels ? c : NULL;
}

/* The bias Add of a tail: one runtime input (the chain) and a per-channel
 * constant. Returns the constant's input ordinal, or -1. */
static gint
bias_input (const SplitAnalysis *a, gint node, gint channels)
{
  if (!is_type (node_at (a, node), "Add"))
    return -1;
  for (gint i = 0; i < 2; i++)
    if (per_channel_const (a, node, i, channels) && !split_analysis_const_input (a, node, 1 - i, NULL))
      return i;
  return -1;
}

float *
split_prelu_slopes (const SplitAnalysis *a, gint node, gint channels)
{
  const M2iTensor *sl, *x;
  gint src, port;
  if (!is_type (node_at (a, node), "PReLU") || channels < 1 ||
      !split_analysis_const_input (a, node, 1, &sl) || sl->type != M2I_ET_F32 ||
      !source (a, node, 0, &src, &port) || split_analysis_const_input (a, node, 0, NULL))
    return NULL;
  x = split_analysis_value (a, src, port);
  gint64 numel = m2i_shape_numel (&sl->shape);
  /* one slope; a 1-D slope as long as the channel axis (PReLU-1's rule);
   * else numpy broadcasting must put the values on axis 1 */
  gboolean ok = numel == 1 || (numel == channels && x->shape.rank >= 2 &&
      x->shape.dims[1] == channels &&
      ((sl->shape.rank == 1) || per_channel_const (a, node, 1, channels)));
  if (!ok)
    return NULL;
  float *s = g_new (float, channels);
  for (gint c = 0; c < channels; c++)
    s[c] = ((const float *) sl->data)[numel == 1 ? 0 : c];
  return s;
}

static gboolean
is_prelu (const SplitAnalysis *a, gint node, gint channels)
{
  float *s = split_prelu_slopes (a, node, channels);
  g_free (s);
  return s != NULL;
}

static gint
output_channels (const SplitAnalysis *a, gint node)
{
  const M2iTensor *v = split_analysis_value (a, node, 0);
  return v->shape.rank >= 2 ? (gint) v->shape.dims[1] : -1;
}

/* The conv unit anchored at @anchor and its tail. */
static void
build_conv_unit (SplitAnalysis *a, gint anchor, const gint *affinity)
{
  SplitUnit *u = unit_new (a, SPLIT_UNIT_CONV);
  unit_take (a, u, anchor);
  gint forced = affinity ? affinity[anchor] : 0;
  u->forced = forced - 1;
  gint channels = output_channels (a, anchor);
#define NEXT(from) ({ gint _c = single_consumer (a, (from)); \
    _c >= 0 && (affinity ? affinity[_c] : 0) == forced ? _c : -1; })
  gint cur = anchor, c = NEXT (cur);
  if (c >= 0 && bias_input (a, c, channels) >= 0) {
    unit_take (a, u, c);
    cur = c;
    c = NEXT (cur);
  }
  if (c >= 0 && (is_type (node_at (a, c), "ReLU") || is_type (node_at (a, c), "Clamp") ||
          is_prelu (a, c, channels))) {
    unit_take (a, u, c);
    cur = c;
    c = NEXT (cur);
  }
  if (!a->quantized)
    return;
  /* int8: the tail goes on to the FakeQuantize that defines the output grid */
  guint fp16_len = u->nodes->len;
  while (c >= 0 && (is_type (node_at (a, c), "MaxPool") || is_flatten (a, c))) {
    unit_take (a, u, c);
    cur = c;
    c = NEXT (cur);
  }
  SplitGrid g;
  if (c >= 0 && is_type (node_at (a, c), "FakeQuantize") && fq_grid (a, c, &g)) {
    unit_take (a, u, c);
    u->int8_tail = TRUE;
    return;
  }
  for (guint k = fp16_len; k < u->nodes->len; k++)
    a->unit_of[g_array_index (u->nodes, gint, k)] = -1;
  g_array_set_size (u->nodes, fp16_len);
#undef NEXT
}

/* ---- capabilities ------------------------------------------------------------------ */

/* strides, dilations, pads of a Convolution/GroupConvolution into @g
 * (kernel and input already set). */
static gboolean
conv_window (const SplitAnalysis *a, gint node, M2iNpuConvGeometry *g, const char **why)
{
  const M2iIrNode *n = node_at (a, node);
  gint64 st[4], di[4], pb[4], pe[4];
  gint nst, ndi, npb, npe;
  if (!m2i_ir_node_attr_ints (n, "strides", st, 4, &nst, NULL) ||
      !m2i_ir_node_attr_ints (n, "dilations", di, 4, &ndi, NULL) ||
      !m2i_ir_node_attr_ints (n, "pads_begin", pb, 4, &npb, NULL) ||
      !m2i_ir_node_attr_ints (n, "pads_end", pe, 4, &npe, NULL) || nst != 2 || ndi != 2) {
    *why = "strides and dilations must list two spatial axes";
    return FALSE;
  }
  const char *ap = m2i_ir_node_get_attr (n, "auto_pad");
  g->stride_h = st[0];
  g->stride_w = st[1];
  g->dilation_h = di[0];
  g->dilation_w = di[1];
  if (!ap || !strcmp (ap, "explicit") || !strcmp (ap, "notset")) {
    if (npb != 2 || npe != 2) {
      *why = "pads must list two spatial axes";
      return FALSE;
    }
    g->pad_top = pb[0];
    g->pad_left = pb[1];
    g->pad_bottom = pe[0];
    g->pad_right = pe[1];
  } else if (!strcmp (ap, "valid")) {
    g->pad_top = g->pad_left = g->pad_bottom = g->pad_right = 0;
  } else if (!strcmp (ap, "same_upper") || !strcmp (ap, "same_lower")) {
    gint in[2] = { g->in_h, g->in_w }, k[2] = { g->kernel_h, g->kernel_w };
    gint s[2] = { g->stride_h, g->stride_w }, d[2] = { g->dilation_h, g->dilation_w };
    gint begin[2], end[2];
    for (gint i = 0; i < 2; i++) {
      gint out = (in[i] + s[i] - 1) / s[i];
      gint total = MAX ((out - 1) * s[i] + (k[i] - 1) * d[i] + 1 - in[i], 0);
      gint small = total / 2, big = total - small;
      begin[i] = ap[5] == 'u' ? small : big;
      end[i] = ap[5] == 'u' ? big : small;
    }
    g->pad_top = begin[0];
    g->pad_left = begin[1];
    g->pad_bottom = end[0];
    g->pad_right = end[1];
  } else {
    *why = "unknown auto_pad";
    return FALSE;
  }
  return TRUE;
}

/* The int8 codes of weights a FakeQuantize made (folded at compile time):
 * per output channel, scale = (oh - ol) / (levels - 1) and every weight an
 * integer multiple of it in [-128, 127]. */
static gboolean
int8_weights (const SplitAnalysis *a, gint anchor, SplitConvDesc *d, const char **why)
{
  gint fq, port;
  if (!source (a, anchor, 1, &fq, &port) || !is_type (node_at (a, fq), "FakeQuantize")) {
    *why = "int8 weights must come from a FakeQuantize";
    return FALSE;
  }
  gint64 levels;
  const M2iTensor *ol, *oh;
  gint O = d->g.out_channels;
  if (!m2i_ir_node_attr_int (node_at (a, fq), "levels", 0, &levels, NULL) || levels < 2 ||
      !split_analysis_const_input (a, fq, 3, &ol) || !split_analysis_const_input (a, fq, 4, &oh) ||
      ol->type != M2I_ET_F32 || oh->type != M2I_ET_F32 ||
      m2i_shape_numel (&ol->shape) != m2i_shape_numel (&oh->shape) ||
      (m2i_shape_numel (&ol->shape) != 1 && m2i_shape_numel (&ol->shape) != O)) {
    *why = "the weights' FakeQuantize needs one range or one per output channel";
    return FALSE;
  }
  gsize per = (gsize) d->g.in_channels / d->g.groups * d->g.kernel_h * d->g.kernel_w;
  d->w_scale = g_new (double, O);
  d->w_codes = g_new (gint8, (gsize) O * per);
  gboolean per_axis = m2i_shape_numel (&ol->shape) != 1;
  for (gint o = 0; o < O; o++) {
    double lo = ((const float *) ol->data)[per_axis ? o : 0];
    double hi = ((const float *) oh->data)[per_axis ? o : 0];
    double s = (hi - lo) / (double) (levels - 1);
    if (!(s > 0)) {
      *why = "the weights' FakeQuantize has an empty range";
      return FALSE;
    }
    d->w_scale[o] = s;
    for (gsize k = 0; k < per; k++) {
      double q = d->weights[o * per + k] / s, r = nearbyint (q);
      if (fabs (q - r) > 1e-3 || r < -128 || r > 127) {
        *why = "the quantized weights are not int8 multiples of their scale (zero point must be 0)";
        return FALSE;
      }
      d->w_codes[o * per + k] = (gint8) r;
    }
  }
  return TRUE;
}

static SplitConvDesc *
conv_desc (const SplitAnalysis *a, const SplitUnit *u, const char **why)
{
  gint anchor = g_array_index (u->nodes, gint, 0);
  const M2iIrNode *n = node_at (a, anchor);
  SplitConvDesc *d = g_new0 (SplitConvDesc, 1);
  gint in[4];
  const M2iTensor *w;
  d->act_min = -INFINITY;
  d->act_max = INFINITY;
  if (!source (a, anchor, 0, &d->in_node, &d->in_port) ||
      !split_analysis_phys (a, d->in_node, d->in_port, in)) {
    *why = "the input is no float NCHW or [N, K] tensor the device holds";
    goto fail;
  }
  if (!split_analysis_const_input (a, anchor, 1, &w) || w->type != M2I_ET_F32) {
    *why = "the weights are not a float constant";
    goto fail;
  }
  M2iNpuConvGeometry *g = &d->g;
  g->in_channels = in[1];
  g->in_h = in[2];
  g->in_w = in[3];
  g->groups = 1;
  gsize n_w = m2i_shape_numel (&w->shape);
  if (is_type (n, "MatMul")) {
    gboolean ta, tb;
    if (!m2i_ir_node_attr_bool (n, "transpose_a", FALSE, &ta, NULL) ||
        !m2i_ir_node_attr_bool (n, "transpose_b", FALSE, &tb, NULL) || ta ||
        split_analysis_value (a, d->in_node, d->in_port)->shape.rank != 2 || w->shape.rank != 2) {
      *why = "MatMul runs on the device as [N, K] × constant [K, O] (no transpose_a)";
      goto fail;
    }
    gint64 K = (gint64) in[1] * in[2] * in[3], O = tb ? w->shape.dims[0] : w->shape.dims[1];
    if ((tb ? w->shape.dims[1] : w->shape.dims[0]) != K) {
      *why = "MatMul's weights do not match its input";
      goto fail;
    }
    g->out_channels = O;
    g->kernel_h = in[2];
    g->kernel_w = in[3];
    g->stride_h = g->stride_w = g->dilation_h = g->dilation_w = 1;
    /* the weights [O, K] are OIYX with K = C·H·W, the flattening order */
    d->weights = g_new (float, n_w);
    const float *src = w->data;
    for (gint64 o = 0; o < O; o++)
      for (gint64 k = 0; k < K; k++)
        d->weights[o * K + k] = tb ? src[o * K + k] : src[k * O + o];
  } else {
    gboolean grouped = is_type (n, "GroupConvolution");
    const M2iTensor *x = split_analysis_value (a, d->in_node, d->in_port);
    if (x->shape.rank != 4 || w->shape.rank != (grouped ? 5 : 4)) {
      *why = "only 2-D convolutions run on the device";
      goto fail;
    }
    const gint64 *wd = w->shape.dims;
    g->groups = grouped ? wd[0] : 1;
    g->out_channels = grouped ? wd[0] * wd[1] : wd[0];
    gint64 ig = grouped ? wd[2] : wd[1];
    g->kernel_h = grouped ? wd[3] : wd[2];
    g->kernel_w = grouped ? wd[4] : wd[3];
    if (ig * g->groups != in[1]) {
      *why = "the weights do not match the input channels";
      goto fail;
    }
    if (!conv_window (a, anchor, g, why))
      goto fail;
    d->weights = g_memdup2 (w->data, n_w * sizeof (float));
  }
  gint oh, ow;
  if (!m2i_npu_conv_geometry_check (g, &oh, &ow, NULL)) {
    *why = "the engine does not take this convolution's geometry";
    goto fail;
  }
  const M2iTensor *y = split_analysis_value (a, anchor, 0);
  gboolean shape_ok = y->shape.rank == 4 ? y->shape.dims[1] == g->out_channels &&
      y->shape.dims[2] == oh && y->shape.dims[3] == ow :
      y->shape.rank == 2 && y->shape.dims[1] == g->out_channels && oh == 1 && ow == 1;
  if (!shape_ok || y->shape.dims[0] != in[0]) {
    *why = "the engine's output size differs from the model's";
    goto fail;
  }
  d->bias = g_new0 (float, g->out_channels);
  d->out_node = anchor;
  for (guint k = 1; k < u->nodes->len; k++) {
    gint t = g_array_index (u->nodes, gint, k);
    const M2iIrNode *tn = node_at (a, t);
    d->out_node = t;
    if (is_type (tn, "Add")) {
      const M2iTensor *b = per_channel_const (a, t, bias_input (a, t, g->out_channels),
          g->out_channels);
      gboolean one = m2i_shape_numel (&b->shape) == 1;
      for (gint o = 0; o < g->out_channels; o++)
        d->bias[o] = ((const float *) b->data)[one ? 0 : o];
    } else if (is_type (tn, "ReLU")) {
      d->relu = TRUE;
      d->act_min = 0;
    } else if (is_type (tn, "Clamp")) {
      double lo, hi;
      if (!m2i_ir_node_attr_float (tn, "min", -INFINITY, &lo, NULL) ||
          !m2i_ir_node_attr_float (tn, "max", INFINITY, &hi, NULL) || !(lo <= hi)) {
        *why = "Clamp's range is invalid";
        goto fail;
      }
      d->act_min = lo;
      d->act_max = hi;
    } else if (is_type (tn, "PReLU")) {
      d->slopes = split_prelu_slopes (a, t, g->out_channels);
      if (!d->slopes) {
        *why = "PReLU's slope is no constant with one value or one per channel";
        goto fail;
      }
    } else if (is_type (tn, "MaxPool")) {
      if (d->n_pools == G_N_ELEMENTS (d->pools) ||
          !split_pool_params (a, t, &d->pools[d->n_pools], why))
        goto fail;
      d->n_pools++;
    }
  }
  if (u->int8_tail) {
    const SplitGrid *gi = split_analysis_grid (a, d->in_node, d->in_port);
    const SplitGrid *go = split_analysis_grid (a, d->out_node, 0);
    if (!gi) {
      *why = "int8: the input has no grid (no FakeQuantize before it)";
      goto fail;
    }
    d->int8 = TRUE;
    d->in_grid = *gi;
    d->out_grid = *go;
    if (!int8_weights (a, anchor, d, why))
      goto fail;
    gint64 bound = (gint64) (g->in_channels / g->groups) * g->kernel_h * g->kernel_w * 255 * 128;
    if (bound >= G_MAXINT32 / 2) {
      *why = "int8: the 32-bit accumulator could overflow";
      goto fail;
    }
  }
  return d;
fail:
  conv_desc_free (d);
  return NULL;
}

gboolean
split_pool_params (const SplitAnalysis *a, gint node, M2iNpuPoolParams *p, const char **why)
{
  const M2iIrNode *n = node_at (a, node);
  gint src, port, in[4];
  memset (p, 0, sizeof *p);
  p->round = M2I_MLI_ROUND_HALF_EVEN;
  if (!source (a, node, 0, &src, &port) || !split_analysis_phys (a, src, port, in) ||
      split_analysis_value (a, src, port)->shape.rank != 4) {
    *why = "pooling runs on NCHW float tensors";
    return FALSE;
  }
  const M2iTensor *y = split_analysis_value (a, node, 0);
  if (is_type (n, "ReduceMean")) {
    const M2iTensor *ax;
    gboolean keep;
    if (!split_analysis_const_input (a, node, 1, &ax) || m2i_shape_numel (&ax->shape) != 2 ||
        !m2i_ir_node_attr_bool (n, "keep_dims", FALSE, &keep, NULL)) {
      *why = "ReduceMean runs on the device over H and W only";
      return FALSE;
    }
    gint64 ax0, ax1;
    if (ax->type == M2I_ET_I64) {
      ax0 = ((const gint64 *) ax->data)[0];
      ax1 = ((const gint64 *) ax->data)[1];
    } else if (ax->type == M2I_ET_I32) {
      ax0 = ((const gint32 *) ax->data)[0];
      ax1 = ((const gint32 *) ax->data)[1];
    } else {
      *why = "ReduceMean's axes are not integers";
      return FALSE;
    }
    ax0 = ax0 < 0 ? ax0 + 4 : ax0;
    ax1 = ax1 < 0 ? ax1 + 4 : ax1;
    if (MIN (ax0, ax1) != 2 || MAX (ax0, ax1) != 3) {
      *why = "ReduceMean runs on the device over H and W only";
      return FALSE;
    }
    p->kind = M2I_NPU_POOL_AVG;
    p->kernel_h = p->stride_h = in[2];
    p->kernel_w = p->stride_w = in[3];
    p->exclude_pad = TRUE;
    return TRUE;
  }
  gboolean is_max = is_type (n, "MaxPool");
  if (!is_max && !is_type (n, "AvgPool")) {
    *why = "not a pooling layer";
    return FALSE;
  }
  gint64 k[4];
  gint nk;
  if (!m2i_ir_node_attr_ints (n, "kernel", k, 4, &nk, NULL) || nk != 2) {
    *why = "pooling over two spatial axes only";
    return FALSE;
  }
  if (m2i_ir_node_get_attr (n, "dilations")) {
    gint64 di[4];
    gint nd;
    if (!m2i_ir_node_attr_ints (n, "dilations", di, 4, &nd, NULL) || nd != 2 || di[0] != 1 ||
        di[1] != 1) {
      *why = "the engine pools without dilation";
      return FALSE;
    }
  }
  gint64 st[4], pb[4], pe[4];
  gint nst, npb, npe;
  const char *ap = m2i_ir_node_get_attr (n, "auto_pad");
  if (!m2i_ir_node_attr_ints (n, "strides", st, 4, &nst, NULL) || nst != 2 ||
      !m2i_ir_node_attr_ints (n, "pads_begin", pb, 4, &npb, NULL) ||
      !m2i_ir_node_attr_ints (n, "pads_end", pe, 4, &npe, NULL)) {
    *why = "pooling strides and pads must list two spatial axes";
    return FALSE;
  }
  p->kind = is_max ? M2I_NPU_POOL_MAX : M2I_NPU_POOL_AVG;
  p->kernel_h = k[0];
  p->kernel_w = k[1];
  p->stride_h = st[0];
  p->stride_w = st[1];
  if (ap && (!strcmp (ap, "same_upper") || !strcmp (ap, "same_lower"))) {
    gint inn[2] = { in[2], in[3] }, s[2] = { st[0], st[1] }, kk[2] = { k[0], k[1] };
    for (gint i = 0; i < 2; i++) {
      gint out = (inn[i] + s[i] - 1) / s[i];
      gint total = MAX ((out - 1) * s[i] + kk[i] - inn[i], 0);
      pb[i] = ap[5] == 'u' ? total / 2 : total - total / 2;
      pe[i] = total - pb[i];
    }
  } else if (ap && !strcmp (ap, "valid")) {
    pb[0] = pb[1] = pe[0] = pe[1] = 0;
  } else if (npb != 2 || npe != 2) {
    *why = "pooling pads must list two spatial axes";
    return FALSE;
  }
  p->pad_top = pb[0];
  p->pad_left = pb[1];
  p->pad_bottom = pe[0];
  p->pad_right = pe[1];
  const char *rt = m2i_ir_node_get_attr (n, "rounding_type");
  p->ceil_mode = rt && !g_ascii_strcasecmp (rt, "ceil");
  gboolean exclude = FALSE;
  if (!is_max && !m2i_ir_node_attr_bool (n, "exclude-pad", FALSE, &exclude, NULL)) {
    *why = "exclude-pad is not a boolean";
    return FALSE;
  }
  p->exclude_pad = exclude;
  gint oh, ow;
  if (!m2i_npu_pool_output_size (p, in[2], in[3], &oh, &ow, NULL)) {
    *why = "the engine's pooling takes pads smaller than the kernel only";
    return FALSE;
  }
  if (y->shape.rank != 4 || y->shape.dims[2] != oh || y->shape.dims[3] != ow) {
    *why = "the engine's pooling output size differs from the model's (ceil rounding)";
    return FALSE;
  }
  /* AvgPool without exclude-pad divides by the whole kernel in OpenVINO and
   * by the window clipped to the padded input on the engine: they agree
   * unless a window hangs over the padded input's end */
  if (!is_max && !exclude &&
      ((oh - 1) * p->stride_h + p->kernel_h > in[2] + p->pad_top + p->pad_bottom ||
       (ow - 1) * p->stride_w + p->kernel_w > in[3] + p->pad_left + p->pad_right)) {
    *why = "AvgPool: a window hangs over the padded input (OpenVINO and the engine divide differently)";
    return FALSE;
  }
  return TRUE;
}

/* Every run-time input and output of @node is f32 (f16 models compute in f32). */
static gboolean
float_io (const SplitAnalysis *a, gint node)
{
  const M2iIrNode *n = node_at (a, node);
  for (gint i = 0; i < m2i_ir_node_get_n_inputs (n); i++) {
    gint s, p;
    if (!source (a, node, i, &s, &p))
      return FALSE;
    const M2iTensor *v = split_analysis_value (a, s, p);
    if (!v->data && v->type != M2I_ET_F32)
      return FALSE;
  }
  return split_analysis_value (a, node, 0)->type == M2I_ET_F32;
}

static void
single_caps (SplitAnalysis *a, SplitUnit *u)
{
  gint node = g_array_index (u->nodes, gint, 0);
  const M2iIrNode *n = node_at (a, node);
  const char *type = m2i_ir_node_get_type (n);
  const char *why = NULL;
  gint dims[4], d2[4];
  gint n_in = m2i_ir_node_get_n_inputs (n);
  if (!float_io (a, node)) {
    why = "the device computes float tensors only";
  } else if (!strcmp (type, "MaxPool") || !strcmp (type, "AvgPool") ||
      !strcmp (type, "ReduceMean")) {
    M2iNpuPoolParams p;
    gint m = 0;
    for (gint k = 1; k < m2i_ir_node_get_n_outputs (n); k++) {
      gint c;
      split_analysis_consumers (a, node, k, &c);
      m += c;
    }
    if (m)
      why = "MaxPool's indices output is read";
    else if (split_pool_params (a, node, &p, &why)) {
      u->caps |= SPLIT_CAN (M2I_SPLIT_ENGINE_NPU_FP16);
      if (!strcmp (type, "MaxPool") && input_grid (a, node, 0))
        u->caps |= SPLIT_CAN (M2I_SPLIT_ENGINE_NPU_INT8);
    }
  } else if (!strcmp (type, "Add")) {
    gint s0, p0, s1, p1;
    if (n_in != 2 || split_analysis_const_input (a, node, 0, NULL) ||
        split_analysis_const_input (a, node, 1, NULL) || !source (a, node, 0, &s0, &p0) ||
        !source (a, node, 1, &s1, &p1) || !split_analysis_phys (a, s0, p0, dims) ||
        !split_analysis_phys (a, s1, p1, d2) || memcmp (dims, d2, sizeof dims) ||
        !m2i_shape_equal (&split_analysis_value (a, s0, p0)->shape,
            &split_analysis_value (a, s1, p1)->shape))
      why = "Add runs on the device on two run-time tensors of one shape (a constant bias only after a convolution)";
    else
      u->caps |= SPLIT_CAN (M2I_SPLIT_ENGINE_NPU_FP16);
  } else if (!strcmp (type, "Concat")) {
    gint64 axis;
    const M2iTensor *y = split_analysis_value (a, node, 0);
    gboolean ok = m2i_ir_node_attr_int (n, "axis", 0, &axis, NULL) &&
        (y->shape.rank == 4 || y->shape.rank == 2) &&
        (axis == 1 || axis == 1 - y->shape.rank);
    const SplitGrid *g0 = input_grid (a, node, 0);
    gboolean same_grid = g0 != NULL;
    for (gint i = 0; i < n_in && ok; i++) {
      gint s, p;
      ok = !split_analysis_const_input (a, node, i, NULL) && source (a, node, i, &s, &p) &&
          split_analysis_phys (a, s, p, dims) &&
          split_analysis_value (a, s, p)->shape.rank == y->shape.rank;
      same_grid = same_grid && grid_equal (g0, input_grid (a, node, i));
    }
    if (!ok)
      why = "Concat runs on the device along channels, of run-time tensors";
    else {
      u->caps |= SPLIT_CAN (M2I_SPLIT_ENGINE_NPU_FP16);
      if (same_grid)
        u->caps |= SPLIT_CAN (M2I_SPLIT_ENGINE_NPU_INT8);
    }
  } else if (!strcmp (type, "Reshape")) {
    gboolean ok = is_flatten (a, node);
    gint nc;
    const gint *c = split_analysis_consumers (a, node, 0, &nc);
    for (gint k = 0; k < nc && ok; k++)
      ok = a->kind[c[2 * k]] != SPLIT_NODE_OP || is_type (node_at (a, c[2 * k]), "MatMul") ||
          is_type (node_at (a, c[2 * k]), "FakeQuantize");
    if (!ok)
      why = "Reshape runs on the device only as [N,C,H,W] → [N,C·H·W] before a MatMul";
    else {
      u->caps |= SPLIT_CAN (M2I_SPLIT_ENGINE_NPU_FP16);
      if (input_grid (a, node, 0))
        u->caps |= SPLIT_CAN (M2I_SPLIT_ENGINE_NPU_INT8);
    }
  } else if (!strcmp (type, "FakeQuantize")) {
    const SplitGrid *own = split_analysis_grid (a, node, 0), *in = input_grid (a, node, 0);
    if (!own)
      why = "FakeQuantize: 256 levels, one range, equal input and output ranges, 0 on the grid";
    else if (in && !grid_equal (in, own))
      why = "FakeQuantize would requantize between two grids (no engine kernel)";
    else
      u->caps |= SPLIT_CAN (M2I_SPLIT_ENGINE_NPU_INT8);
  } else if (!strcmp (type, "PReLU")) {
    gint s, p;
    float *slopes = NULL;
    if (!source (a, node, 0, &s, &p) || !split_analysis_phys (a, s, p, dims) ||
        !(slopes = split_prelu_slopes (a, node, dims[1])))
      why = "PReLU runs on the device on an NCHW or [N, K] tensor with a constant slope, one or per channel";
    else
      u->caps |= SPLIT_CAN (M2I_SPLIT_ENGINE_NPU_FP16);
    g_free (slopes);
  } else if (!strcmp (type, "ReLU") || !strcmp (type, "Clamp")) {
    why = "ReLU and Clamp run on the device only fused after a convolution";
  } else {
    why = "no device kernel";
  }
  if (why)
    u->why_not = g_strdup_printf ("%s: %s", type, why);
}

static void
unit_caps (SplitAnalysis *a, SplitUnit *u)
{
  u->caps = SPLIT_CAN (M2I_SPLIT_ENGINE_CPU);
  const char *why = NULL;
  switch (u->kind) {
    case SPLIT_UNIT_HEAD:
      u->caps |= SPLIT_CAN (M2I_SPLIT_ENGINE_M2I);
      break;
    case SPLIT_UNIT_CONV:
      u->conv = conv_desc (a, u, &why);
      if (u->conv)
        u->caps |= SPLIT_CAN (u->conv->int8 ? M2I_SPLIT_ENGINE_NPU_INT8 : M2I_SPLIT_ENGINE_NPU_FP16);
      else
        u->why_not = g_strdup_printf ("%s: %s", m2i_ir_node_get_type (node_at (a,
                    g_array_index (u->nodes, gint, 0))), why);
      break;
    case SPLIT_UNIT_SINGLE:
      single_caps (a, u);
      break;
  }
}

SplitAnalysis *
split_analyze (M2iIrModel *model, const gint *affinity, M2iProfile profile,
    SplitGridSeeds *seeds, guint64 max_memory, GError **error)
{
  M2iIrCompileOptions copts = { .n_threads = 1, .max_memory = max_memory };
  M2iIrCompiledModel *cm = m2i_ir_compile (model, &copts, error);
  if (!cm)
    return NULL;
  SplitAnalysis *a = g_new0 (SplitAnalysis, 1);
  a->model = m2i_ir_model_ref (model);
  a->cm = cm;
  a->n_nodes = m2i_ir_model_get_n_nodes (model);
  a->kind = g_new0 (SplitNodeKind, a->n_nodes);
  a->unit_of = g_new (gint, a->n_nodes);
  a->value_base = g_new0 (gint, a->n_nodes + 1);
  for (gint i = 0; i < a->n_nodes; i++) {
    a->unit_of[i] = -1;
    a->value_base[i + 1] = a->value_base[i] + m2i_ir_node_get_n_outputs (node_at (a, i));
  }
  a->grids = g_new0 (SplitGrid, a->value_base[a->n_nodes] + 1);
  a->units = g_ptr_array_new_with_free_func (unit_free);
  a->head_unit = -1;
  a->topo = m2i_ir_model_get_topological_order (model, NULL);
  classify (a);
  index_consumers (a);
  propagate_grids (a, seeds);

  /* the head: stops before layers forced onto the CPU */
  gboolean *stop = g_new0 (gboolean, a->n_nodes);
  for (gint i = 0; affinity && i < a->n_nodes; i++)
    stop[i] = affinity[i] == M2I_SPLIT_DEVICE_CPU + 1;
  SplitHeadInfo *head = g_new0 (SplitHeadInfo, 1);
  if (split_head_find (a, stop, profile, head)) {
    SplitUnit *u = unit_new (a, SPLIT_UNIT_HEAD);
    for (gint k = 0; k < head->n_nodes; k++) {
      unit_take (a, u, head->nodes[k]);
      if (affinity && affinity[head->nodes[k]] == M2I_SPLIT_DEVICE_M2I + 1)
        u->forced = M2I_SPLIT_DEVICE_M2I;
    }
    a->head_unit = a->units->len - 1;
    a->head = head;
  } else {
    g_free (head);
  }
  g_free (stop);
  for (gint t = 0; t < a->n_nodes; t++) {
    gint i = a->topo[t];
    const M2iIrNode *n = node_at (a, i);
    if (a->kind[i] == SPLIT_NODE_OP && a->unit_of[i] < 0 && (is_type (n, "Convolution") ||
            is_type (n, "GroupConvolution") || is_type (n, "MatMul")))
      build_conv_unit (a, i, affinity);
  }
  for (gint t = 0; t < a->n_nodes; t++) {
    gint i = a->topo[t];
    if (a->kind[i] == SPLIT_NODE_OP && a->unit_of[i] < 0) {
      SplitUnit *u = unit_new (a, SPLIT_UNIT_SINGLE);
      unit_take (a, u, i);
      u->forced = affinity ? affinity[i] - 1 : -1;
    }
  }
  for (guint k = 0; k < a->units->len; k++)
    unit_caps (a, g_ptr_array_index (a->units, k));
  return a;
}

void
split_analysis_free (SplitAnalysis *a)
{
  if (!a)
    return;
  g_ptr_array_free (a->units, TRUE);
  m2i_ir_compiled_model_unref (a->cm);
  m2i_ir_model_unref (a->model);
  g_free (a->kind);
  g_free (a->unit_of);
  g_free (a->value_base);
  g_free (a->grids);
  g_free (a->cons_start);
  g_free (a->cons);
  g_free (a->head);
  g_free (a);
}
