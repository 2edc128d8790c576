/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* split-npu.c — the program of a compute-engine piece: its sub-model's layers
 * as engine calls on blocked tensors.
 *
 * Built once from the sub-model (the same analysis the partitioner used):
 * each convolution unit becomes one engine convolution (weights blocked,
 * bias and activation fused, int8 weights and requantization taken from
 * the FakeQuantize ranges), pooling / add / PReLU / concat their engine calls,
 * flattening Reshapes and FakeQuantizes already on their grid become views.
 * A Concat's inputs made by convolutions are written straight into channel
 * views of its output. At the boundary each input is converted from the
 * host's NCHW (f32 or f16) into the blocked layout and the piece's type
 * (fp16, or int8 on the input's grid) in one pass, and each output back to
 * f32.
 *
 * The program (steps, packed weights, the arena's layout) is immutable once
 * built and shared by every runner of a plan; what one run writes — every
 * value and the convolutions' padded-input scratch — lives in a state's
 * arena (SplitNpuState, one per runner). Values and scratch share the arena
 * by lifetime (base-arena.h): a value's bytes are reused once its last
 * reader has run, so the arena holds the largest set of tensors alive at
 * once, not every tensor of the piece.
 */
#include "split-private.h"
#include <base/base-arena.h>
#include <base/m2i-align.h>
#include <base/m2i-error.h>
#include <npu/npu-private.h>

#include <math.h>
#include <string.h>

typedef struct {
  gint n, c, h, w;
  gint parent;                 /* channel view of this value, or -1 */
  gint c0;
  gsize offset;                /* in the state's arena (values without a parent) */
  SplitGrid grid;
} PValue;

typedef enum { P_IN, P_OUT, P_CONV, P_POOL, P_ADD, P_PRELU, P_CONCAT } PKind;

typedef struct {
  PKind kind;
  gint a, b, out;              /* value indices */
  gint host;                   /* P_IN, P_OUT: input / output ordinal */
  M2iNpuConv *conv;
  M2iNpuPoolParams pool;
  M2iNpuAddParams add;
  M2iNpuPreluParams prelu;     /* slope: owned */
  GArray *parts;               /* P_CONCAT: (value, c0) pairs still to copy */
  M2iMliType type;             /* P_IN, P_OUT: the blocked side's type */
  M2iMliQuant q;
  gsize scratch_offset;        /* P_CONV: its padded input, in the state's arena */
  guint64 cycles, bytes_read, bytes_written;
} PStep;

struct _SplitNpuProgram {
  M2iSplitEngine engine;
  M2iNpuPrecision prec;
  GArray *values;              /* PValue */
  GArray *steps;               /* PStep */
  gsize arena_bytes;           /* values and scratch, by lifetime */
  gint n_inputs, n_outputs;
  guint64 layers, cycles, bytes_read, bytes_written;
};

struct _SplitNpuState {
  const SplitNpuProgram *prog;
  gint n_threads;
  gpointer arena_raw;
  guint8 *arena;               /* 64-byte aligned */
  M2iNpuTensor *t;             /* per value, into the arena */
  gboolean *skip;              /* per output: nobody reads its data */
};

#define ALIGN 64

#define VAL(prog, i) (&g_array_index ((prog)->values, PValue, (i)))

static gint
new_value (SplitNpuProgram *prog, const gint d[4], const SplitGrid *grid)
{
  PValue v = { d[0], d[1], d[2], d[3], -1, 0 };
  if (grid)
    v.grid = *grid;
  g_array_append_val (prog->values, v);
  return prog->values->len - 1;
}

static PStep *
add_step (SplitNpuProgram *prog, PKind kind)
{
  PStep s = { kind, -1, -1, -1, -1 };
  g_array_append_val (prog->steps, s);
  return &g_array_index (prog->steps, PStep, prog->steps->len - 1);
}

static gsize
elem_size (const SplitNpuProgram *prog)
{
  return prog->prec == M2I_NPU_INT8 ? 1 : 2;
}

static gsize
value_bytes (const SplitNpuProgram *prog, const PValue *v)
{
  return m2i_npu_tensor_bytes (prog->prec, v->n, v->c, v->h, v->w);
}

/* sa8 quantization of a grid: scale as a 31-bit integer over 2^frac. */
static void
grid_quant (const SplitGrid *g, M2iMliQuant *q)
{
  memset (q, 0, sizeof *q);
  q->axis = -1;
  q->zero_point = g->zero_point;
  gint frac = 30 - (gint) floor (log2 (g->scale));
  frac = CLAMP (frac, -32, 63);
  double s = nearbyint (ldexp (g->scale, frac));
  while (s >= 2147483648.0 && frac > -32) {
    frac--;
    s = nearbyint (ldexp (g->scale, frac));
  }
  q->scale = (gint32) MAX (s, 1);
  q->scale_frac_bits = frac;
}

static gboolean
fail_node (const SplitAnalysis *a, gint node, GError **error, const char *why)
{
  m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, m2i_ir_model_get_node (a->model, node),
      "the compute engine cannot run it: %s", why);
  return FALSE;
}

/* The value index of output @port of @node, or -1. */
static gint
lookup (const SplitAnalysis *a, const gint *vmap, gint node, gint port)
{
  return vmap[a->value_base[node] + port];
}

static gint
input_value (const SplitAnalysis *a, const gint *vmap, gint node, gint i)
{
  M2iIrNode *s;
  gint port;
  if (!m2i_ir_node_get_input_source (m2i_ir_model_get_node (a->model, node), i, &s, &port))
    return -1;
  return lookup (a, vmap, m2i_ir_node_get_index (s), port);
}

static gboolean
build_conv (SplitNpuProgram *prog, const SplitAnalysis *a, const SplitUnit *u, gint *vmap,
    GError **error)
{
  const SplitConvDesc *d = u->conv;
  gint anchor = g_array_index (u->nodes, gint, 0);
  gint in = lookup (a, vmap, d->in_node, d->in_port);
  if (in < 0)
    return fail_node (a, anchor, error, "its input is not on the device");
  const M2iNpuConvGeometry *g = &d->g;
  gint O = g->out_channels, per = g->in_channels / g->groups;
  gsize count = m2i_npu_weights_blocked_count (O, per, g->kernel_h, g->kernel_w);
  gsize n_w = (gsize) O * per * g->kernel_h * g->kernel_w;
  M2iNpuConv *conv;
  GError *e = NULL;
  if (prog->prec == M2I_NPU_FP16) {
    m2i_f16 *w16 = g_new (m2i_f16, n_w), *blocked = g_new (m2i_f16, count);
    m2i_f32_to_f16_n (d->weights, w16, n_w);
    m2i_npu_weights_to_blocked (w16, 2, O, per, g->kernel_h, g->kernel_w, blocked);
    conv = m2i_npu_conv_new_fp16 (g, blocked, d->bias, d->act_min, d->act_max, &e);
    if (conv && d->slopes && !m2i_npu_conv_set_prelu (conv, d->slopes, O, &e))
      g_clear_pointer (&conv, m2i_npu_conv_free);
    g_free (w16);
    g_free (blocked);
  } else {
    gint8 *blocked = g_new (gint8, count);
    gint32 *bias = g_new (gint32, O), *mult = g_new (gint32, O);
    gint8 *shift = g_new (gint8, O), *nshift = g_new (gint8, O);
    gint32 *nmult = g_new (gint32, O);
    M2iNpuRequant rq;
    m2i_npu_weights_to_blocked (d->w_codes, 1, O, per, g->kernel_h, g->kernel_w, blocked);
    gboolean ok = m2i_npu_requant_from_scales (d->in_grid.scale, d->w_scale, O,
        d->out_grid.scale, d->out_grid.zero_point, d->relu, mult, shift, &rq, &e);
    /* PReLU: the negative branch requantized by slope · s_in · s_w / s_out */
    if (ok && d->slopes)
      ok = m2i_npu_requant_set_prelu (&rq, d->in_grid.scale, d->w_scale, d->out_grid.scale,
          d->slopes, O, nmult, nshift, &e);
    for (gint o = 0; o < O && ok; o++) {
      double b = nearbyint (d->bias[o] / (d->in_grid.scale * d->w_scale[o]));
      bias[o] = (gint32) CLAMP (b, -1e9, 1e9);
    }
    /* a Clamp: quantize its bounds on the output grid (quantization is
     * monotone, so clamping codes equals quantizing the clamped value) */
    if (ok && isfinite (d->act_min))
      rq.act_min = CLAMP (d->out_grid.zero_point + nearbyint (d->act_min / d->out_grid.scale),
          rq.act_min, 127);
    if (ok && isfinite (d->act_max))
      rq.act_max = CLAMP (d->out_grid.zero_point + nearbyint (d->act_max / d->out_grid.scale),
          rq.act_min, 127);
    conv = ok ? m2i_npu_conv_new_int8 (g, blocked, bias, d->in_grid.zero_point, &rq, &e) : NULL;
    g_free (blocked);
    g_free (bias);
    g_free (mult);
    g_free (shift);
    g_free (nmult);
    g_free (nshift);
  }
  if (!conv) {
    gboolean r = fail_node (a, anchor, error, e->message);
    g_error_free (e);
    return r;
  }
  gint oh, ow;
  m2i_npu_conv_get_output_size (conv, &oh, &ow);
  PValue *vin = VAL (prog, in);
  gint od[4] = { vin->n, O, oh, ow };
  gint out = new_value (prog, od, d->int8 ? &d->out_grid : NULL);
  PStep *s = add_step (prog, P_CONV);
  s->a = in;
  s->out = out;
  s->conv = conv;
  M2iNpuCost cost;
  m2i_npu_conv_get_cost (conv, od[0], &cost);
  s->cycles = cost.cycles;
  s->bytes_read = cost.bytes_in + cost.bytes_weights;
  s->bytes_written = cost.bytes_out;
  for (gint k = 0; k < d->n_pools; k++) {
    gint ph, pw;
    M2iNpuPoolParams p = d->pools[k];
    p.zero_point = d->out_grid.zero_point;
    if (!m2i_npu_pool_output_size (&p, od[2], od[3], &ph, &pw, &e)) {
      gboolean r = fail_node (a, anchor, error, e->message);
      g_error_free (e);
      return r;
    }
    gint pd[4] = { od[0], O, ph, pw };
    gint pv = new_value (prog, pd, &d->out_grid);
    PStep *ps = add_step (prog, P_POOL);
    ps->a = out;
    ps->out = pv;
    ps->pool = p;
    out = pv;
    memcpy (od, pd, sizeof od);
  }
  vmap[a->value_base[d->out_node]] = out;
  return TRUE;
}

/* Whether value @v, made by the step before, may be written straight into
 * channels [c0, c0 + c) of the concat's output. */
static gboolean
can_view (SplitNpuProgram *prog, const SplitAnalysis *a, gint node, gint port, gint v, gint c0,
    gint total)
{
  gint nc;
  split_analysis_consumers (a, node, port, &nc);
  const PValue *pv = VAL (prog, v);
  if (nc != 1 || pv->parent >= 0 || c0 % 8 || ((c0 + pv->c) % 8 && c0 + pv->c != total))
    return FALSE;
  for (guint k = 0; k < prog->steps->len; k++) {
    const PStep *s = &g_array_index (prog->steps, PStep, k);
    if (s->out == v)
      return s->kind == P_CONV || s->kind == P_POOL;
  }
  return FALSE;
}

static gboolean
build_single (SplitNpuProgram *prog, const SplitAnalysis *a, gint node, gint *vmap,
    GError **error)
{
  const M2iIrNode *n = m2i_ir_model_get_node (a->model, node);
  const char *type = m2i_ir_node_get_type (n);
  gint d[4];
  gint in = input_value (a, vmap, node, 0);
  if (in < 0)
    return fail_node (a, node, error, "its input is not on the device");
  if (!strcmp (type, "Reshape") || !strcmp (type, "FakeQuantize")) {
    /* views: a flattening keeps the blocked data; a FakeQuantize on its
     * input's grid changes nothing */
    vmap[a->value_base[node]] = in;
    return TRUE;
  }
  if (!split_analysis_phys (a, node, 0, d))
    return fail_node (a, node, error, "its output is no NCHW or [N, K] float tensor");
  const SplitGrid *grid = split_analysis_grid (a, node, 0);
  if (!strcmp (type, "MaxPool") || !strcmp (type, "AvgPool") || !strcmp (type, "ReduceMean")) {
    const char *why;
    M2iNpuPoolParams p;
    if (!split_pool_params (a, node, &p, &why))
      return fail_node (a, node, error, why);
    p.zero_point = VAL (prog, in)->grid.zero_point;
    gint out = new_value (prog, d, grid);
    PStep *s = add_step (prog, P_POOL);
    s->a = in;
    s->out = out;
    s->pool = p;
    vmap[a->value_base[node]] = out;
  } else if (!strcmp (type, "Add")) {
    gint b = input_value (a, vmap, node, 1);
    if (b < 0)
      return fail_node (a, node, error, "its input is not on the device");
    gint out = new_value (prog, d, NULL);
    PStep *s = add_step (prog, P_ADD);
    s->a = in;
    s->b = b;
    s->out = out;
    s->add.f_min = -INFINITY;
    s->add.f_max = INFINITY;
    s->add.act_min = -128;
    s->add.act_max = 127;
    vmap[a->value_base[node]] = out;
  } else if (!strcmp (type, "PReLU")) {
    float *slopes = split_prelu_slopes (a, node, d[1]);
    if (!slopes || prog->prec != M2I_NPU_FP16) {
      g_free (slopes);
      return fail_node (a, node, error, "PReLU runs on the fp16 engine with a constant slope");
    }
    /* after an Add read by nothing else (a residual block's activation):
     * fused into the add, one pass instead of two */
    PStep *last = prog->steps->len ? &g_array_index (prog->steps, PStep, prog->steps->len - 1)
        : NULL;
    M2iIrNode *src;
    gint port, nc;
    if (last && last->kind == P_ADD && last->out == in && !last->add.f_slope &&
        m2i_ir_node_get_input_source (n, 0, &src, &port)) {
      split_analysis_consumers (a, m2i_ir_node_get_index (src), port, &nc);
      if (nc == 1) {
        last->add.f_slope = slopes;
        last->add.n_slope = d[1];
        vmap[a->value_base[node]] = in;
        return TRUE;
      }
    }
    gint out = new_value (prog, d, NULL);
    PStep *s = add_step (prog, P_PRELU);
    s->a = in;
    s->out = out;
    s->prelu.n = d[1];
    s->prelu.slope = slopes;
    vmap[a->value_base[node]] = out;
  } else if (!strcmp (type, "Concat")) {
    gint out = new_value (prog, d, grid);
    PStep *s = add_step (prog, P_CONCAT);
    s->out = out;
    s->parts = g_array_new (FALSE, FALSE, sizeof (gint));
    gint c0 = 0;
    for (gint i = 0; i < m2i_ir_node_get_n_inputs (n); i++) {
      gint v = input_value (a, vmap, node, i);
      M2iIrNode *src;
      gint port;
      if (v < 0 || !m2i_ir_node_get_input_source (n, i, &src, &port))
        return fail_node (a, node, error, "its input is not on the device");
      if (can_view (prog, a, m2i_ir_node_get_index (src), port, v, c0, d[1])) {
        VAL (prog, v)->parent = out;
        VAL (prog, v)->c0 = c0;
      } else {
        g_array_append_val (s->parts, v);
        g_array_append_val (s->parts, c0);
      }
      c0 += VAL (prog, v)->c;
    }
    vmap[a->value_base[node]] = out;
  } else {
    return fail_node (a, node, error, "no engine kernel");
  }
  return TRUE;
}

/* The grid an int8 piece quantizes input @node with: its own, or that of
 * the FakeQuantize layers reading it. */
static gboolean
input_grid (const SplitAnalysis *a, gint node, SplitGrid *out)
{
  const SplitGrid *g = split_analysis_grid (a, node, 0);
  if (g) {
    *out = *g;
    return TRUE;
  }
  gint nc;
  const gint *c = split_analysis_consumers (a, node, 0, &nc);
  gboolean found = FALSE;
  for (gint k = 0; k < nc; k++) {
    const M2iIrNode *cn = m2i_ir_model_get_node (a->model, c[2 * k]);
    const SplitGrid *cg = split_analysis_grid (a, c[2 * k], 0);
    if (strcmp (m2i_ir_node_get_type (cn), "FakeQuantize") || !cg)
      return FALSE;
    if (found && (cg->zero_point != out->zero_point || fabs (cg->scale - out->scale) > 1e-9 * out->scale))
      return FALSE;
    *out = *cg;
    found = TRUE;
  }
  return found;
}

/* The value whose buffer @v lives in (itself, or the concat it is a view of). */
static gint
root_value (const SplitNpuProgram *prog, gint v)
{
  while (VAL (prog, v)->parent >= 0)
    v = VAL (prog, v)->parent;
  return v;
}

/* Widens the lifetime of @v's buffer to step @k. */
static void
touch (const SplitNpuProgram *prog, BaseArenaBlock *blocks, gint v, gint k)
{
  BaseArenaBlock *b = &blocks[root_value (prog, v)];
  b->first = MIN (b->first, k);
  b->last = MAX (b->last, k);
}

/* Lays out every value and each convolution's scratch in one arena by
 * lifetime: a buffer is alive from the first step writing it (or a view of
 * it) to the last one reading it; a step's scratch only during that step. */
static void
plan_arena (SplitNpuProgram *prog)
{
  gint nv = prog->values->len, ns = prog->steps->len;
  BaseArenaBlock *blocks = g_new (BaseArenaBlock, nv + ns + 1);
  for (gint i = 0; i < nv; i++) {
    const PValue *v = VAL (prog, i);
    blocks[i] = (BaseArenaBlock) { v->parent >= 0 ? 0 : value_bytes (prog, v), 0, G_MAXINT, -1 };
  }
  for (gint k = 0; k < ns; k++) {
    PStep *s = &g_array_index (prog->steps, PStep, k);
    if (s->out >= 0)
      touch (prog, blocks, s->out, k);
    if (s->a >= 0)
      touch (prog, blocks, s->a, k);
    if (s->b >= 0)
      touch (prog, blocks, s->b, k);
    for (guint p = 0; s->parts && p < s->parts->len; p += 2)
      touch (prog, blocks, g_array_index (s->parts, gint, p), k);
    blocks[nv + k] = (BaseArenaBlock) { s->kind == P_CONV ?
        m2i_npu_conv_get_scratch_size (s->conv) : 0, 0, k, s->kind == P_CONV ? k : k - 1 };
  }
  prog->arena_bytes = MAX (base_arena_place (blocks, nv + ns, ALIGN), ALIGN);
  for (gint i = 0; i < nv; i++)
    VAL (prog, i)->offset = blocks[i].offset;
  for (gint k = 0; k < ns; k++)
    g_array_index (prog->steps, PStep, k).scratch_offset = blocks[nv + k].offset;
  g_free (blocks);
}

static gint
cmp_rank (gconstpointer pa, gconstpointer pb, gpointer data)
{
  const gint *rank = data;
  return rank[*(const gint *) pa] - rank[*(const gint *) pb];
}

SplitNpuProgram *
split_npu_program_new (M2iIrModel *sub, M2iSplitEngine engine, SplitGridSeeds *seeds,
    guint64 max_memory, GError **error)
{
  SplitAnalysis *a = split_analyze (sub, NULL, M2I_PROFILE_DEFAULT, seeds, max_memory, error);
  if (!a)
    return NULL;
  SplitNpuProgram *prog = g_new0 (SplitNpuProgram, 1);
  prog->engine = engine;
  prog->prec = engine == M2I_SPLIT_ENGINE_NPU_INT8 ? M2I_NPU_INT8 : M2I_NPU_FP16;
  prog->values = g_array_new (FALSE, TRUE, sizeof (PValue));
  prog->steps = g_array_new (FALSE, TRUE, sizeof (PStep));
  prog->n_inputs = m2i_ir_model_get_n_inputs (sub);
  prog->n_outputs = m2i_ir_model_get_n_outputs (sub);
  gint *vmap = g_new (gint, a->value_base[a->n_nodes] + 1);
  for (gint i = 0; i <= a->value_base[a->n_nodes]; i++)
    vmap[i] = -1;
  gboolean ok = TRUE;
  gboolean int8 = prog->prec == M2I_NPU_INT8;
  for (gint i = 0; i < prog->n_inputs && ok; i++) {
    const M2iIrIoInfo *io = m2i_ir_model_get_input (sub, i);
    gint node = m2i_ir_node_get_index (io->node), d[4];
    SplitGrid g = { 0 };
    if (!split_analysis_phys (a, node, 0, d)) {
      g_set_error (error, M2I_ERROR, M2I_ERROR_UNSUPPORTED,
          "input '%s' is no float NCHW or [N, K] tensor the compute engine holds", io->name);
      ok = FALSE;
      break;
    }
    if (int8 && !input_grid (a, node, &g)) {
      g_set_error (error, M2I_ERROR, M2I_ERROR_UNSUPPORTED,
          "int8 piece: input '%s' has no int8 grid (no quant in graph_infos.json, no "
          "FakeQuantize reading it)", io->name);
      ok = FALSE;
      break;
    }
    gint v = new_value (prog, d, int8 ? &g : NULL);
    PStep *s = add_step (prog, P_IN);
    s->host = i;
    s->out = v;
    s->type = int8 ? M2I_MLI_SA8 : M2I_MLI_FP16;
    if (int8)
      grid_quant (&g, &s->q);
    vmap[a->value_base[node]] = v;
  }
  /* units in a topological order of their first layer */
  gint *rank = g_new (gint, a->n_nodes);
  for (gint t = 0; t < a->n_nodes; t++)
    rank[a->topo[t]] = t;
  GArray *order = g_array_new (FALSE, FALSE, sizeof (gint));
  for (guint u = 0; u < a->units->len; u++) {
    gint first = g_array_index (((SplitUnit *) g_ptr_array_index (a->units, u))->nodes, gint, 0);
    g_array_append_val (order, first);
  }
  g_array_sort_with_data (order, cmp_rank, rank);
  for (guint k = 0; k < order->len && ok; k++) {
    gint first = g_array_index (order, gint, k);
    const SplitUnit *u = g_ptr_array_index (a->units, a->unit_of[first]);
    if (!(u->caps & SPLIT_CAN (engine)))
      ok = fail_node (a, first, error, u->why_not ? u->why_not :
          int8 ? "it runs in fp16, not int8" : "it runs in int8 or on the M2I block, not in fp16");
    else if (u->kind == SPLIT_UNIT_CONV)
      ok = build_conv (prog, a, u, vmap, error);
    else
      ok = build_single (prog, a, first, vmap, error);
  }
  g_array_free (order, TRUE);
  g_free (rank);
  for (gint j = 0; j < prog->n_outputs && ok; j++) {
    const M2iIrIoInfo *io = m2i_ir_model_get_output (sub, j);
    M2iIrNode *src;
    gint port;
    m2i_ir_node_get_input_source (io->node, 0, &src, &port);
    gint v = lookup (a, vmap, m2i_ir_node_get_index (src), port);
    if (v < 0) {
      g_set_error (error, M2I_ERROR, M2I_ERROR_UNSUPPORTED,
          "output '%s' is not computed on the device", io->name);
      ok = FALSE;
      break;
    }
    PStep *s = add_step (prog, P_OUT);
    s->host = j;
    s->a = v;
    s->type = int8 ? M2I_MLI_SA8 : M2I_MLI_FP16;
    if (int8)
      grid_quant (&VAL (prog, v)->grid, &s->q);
  }
  g_free (vmap);
  split_analysis_free (a);
  if (!ok) {
    split_npu_program_free (prog);
    return NULL;
  }
  plan_arena (prog);
  guint64 limit = max_memory ? max_memory : M2I_IR_DEFAULT_MAX_MEMORY;
  if ((guint64) prog->arena_bytes > limit) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_LIMIT, "the device program needs %" G_GSIZE_FORMAT
        " bytes of buffers and scratch, more than the memory limit of %" G_GUINT64_FORMAT
        " bytes (raise max_memory if the model really needs it)", prog->arena_bytes, limit);
    split_npu_program_free (prog);
    return NULL;
  }
  /* the cost model of the steps the engine has none for */
  for (guint k = 0; k < prog->steps->len; k++) {
    PStep *s = &g_array_index (prog->steps, PStep, k);
    const PValue *out = s->out >= 0 ? VAL (prog, s->out) : NULL;
    gint od[4] = { out ? out->n : 0, out ? out->c : 0, out ? out->h : 0, out ? out->w : 0 };
    gsize ob = out ? value_bytes (prog, out) : 0;
    switch (s->kind) {
      case P_POOL: {
        const PValue *in = VAL (prog, s->a);
        gint id[4] = { in->n, in->c, in->h, in->w };
        s->cycles = split_cost_npu_pool (&s->pool, id, od[2], od[3], int8);
        s->bytes_read = value_bytes (prog, in);
        s->bytes_written = ob;
        break;
      }
      case P_ADD:
        s->cycles = split_cost_npu_add (od, int8);
        s->bytes_read = 2 * ob;
        s->bytes_written = ob;
        break;
      case P_PRELU:
        s->cycles = split_cost_npu_prelu (od, int8);
        s->bytes_read = s->bytes_written = ob;
        break;
      case P_CONCAT:
        s->cycles = split_cost_npu_concat (od, int8);
        s->bytes_read = s->bytes_written = ob;
        break;
      default:
        break;
    }
    if (s->kind != P_IN && s->kind != P_OUT) {
      prog->layers++;
      prog->cycles += s->cycles;
      prog->bytes_read += s->bytes_read;
      prog->bytes_written += s->bytes_written;
    }
  }
  return prog;
}

void
split_npu_program_free (SplitNpuProgram *prog)
{
  if (!prog)
    return;
  for (guint k = 0; k < prog->steps->len; k++) {
    PStep *s = &g_array_index (prog->steps, PStep, k);
    m2i_npu_conv_free (s->conv);
    g_free ((gpointer) s->prelu.slope);
    g_free ((gpointer) s->add.f_slope);
    if (s->parts)
      g_array_free (s->parts, TRUE);
  }
  g_array_free (prog->steps, TRUE);
  g_array_free (prog->values, TRUE);
  g_free (prog);
}

gsize
split_npu_program_arena_bytes (const SplitNpuProgram *prog)
{
  return prog->arena_bytes;
}

SplitNpuState *
split_npu_state_new (const SplitNpuProgram *prog, gint n_threads, GError **error)
{
  SplitNpuState *st = g_new0 (SplitNpuState, 1);
  st->prog = prog;
  st->n_threads = n_threads;
  st->arena_raw = g_try_malloc0 (prog->arena_bytes + ALIGN);
  if (!st->arena_raw) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_FAILED,
        "cannot allocate %" G_GSIZE_FORMAT " bytes for the device piece", prog->arena_bytes);
    g_free (st);
    return NULL;
  }
  st->arena = m2i_align_pointer (st->arena_raw, ALIGN);
  gint nv = prog->values->len;
  st->t = g_new0 (M2iNpuTensor, MAX (nv, 1));
  st->skip = g_new0 (gboolean, MAX (prog->n_outputs, 1));
  /* parents before their views: a view's parent is a later value (the
   * concat made after its inputs), so resolve from the end */
  for (gint i = nv - 1; i >= 0; i--) {
    const PValue *v = VAL (prog, i);
    if (v->parent < 0) {
      m2i_npu_tensor_init (&st->t[i], prog->prec, v->n, v->c, v->h, v->w,
          st->arena + v->offset, value_bytes (prog, v));
    } else {
      g_assert (v->parent > i);
      gboolean ok = m2i_npu_tensor_channel_view (&st->t[v->parent], v->c0, v->c, &st->t[i], NULL);
      g_assert (ok);            /* can_view checked the alignment */
    }
  }
  return st;
}

void
split_npu_state_free (SplitNpuState *st)
{
  if (!st)
    return;
  g_free (st->arena_raw);
  g_free (st->t);
  g_free (st->skip);
  g_free (st);
}

gint split_npu_program_n_inputs (const SplitNpuProgram *prog) { return prog->n_inputs; }
gint split_npu_program_n_outputs (const SplitNpuProgram *prog) { return prog->n_outputs; }

void
split_npu_state_set_output_needed (SplitNpuState *st, gint j, gboolean needed)
{
  if (j >= 0 && j < st->prog->n_outputs)
    st->skip[j] = !needed;
}

void
split_npu_program_cost (const SplitNpuProgram *prog, guint64 *layers, guint64 *cycles,
    guint64 *bytes_read, guint64 *bytes_written)
{
  *layers = prog->layers;
  *cycles = prog->cycles;
  *bytes_read = prog->bytes_read;
  *bytes_written = prog->bytes_written;
}

/* A dense NCHW MLI view of a host tensor with the value's dims. */
static gboolean
host_view (const M2iTensor *t, const PValue *v, M2iMliTensor *m, GError **error)
{
  M2iMliType type;
  if (t->type == M2I_ET_F32)
    type = M2I_MLI_FP32;
  else if (t->type == M2I_ET_F16)
    type = M2I_MLI_FP16;
  else {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "the compute engine reads f32 or f16 host tensors, not %s",
        m2i_element_type_to_string (t->type));
    return FALSE;
  }
  gint64 numel = (gint64) v->n * v->c * v->h * v->w;
  if (m2i_shape_numel (&t->shape) != numel) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "a host tensor of %" G_GINT64_FORMAT " elements where the piece needs %" G_GINT64_FORMAT,
        m2i_shape_numel (&t->shape), numel);
    return FALSE;
  }
  guint32 shape[4] = { v->n, v->c, v->h, v->w };
  m2i_mli_tensor_init (m, type, t->data, numel * m2i_element_type_size (t->type), 4, shape);
  return TRUE;
}

/* Copies the channels of @src into @dst from channel @c0 on: whole blocks
 * when aligned, lane by lane for the last, partial one. */
static void
copy_channels (const M2iNpuTensor *src, M2iNpuTensor *dst, gint c0, gsize es)
{
  gint64 sb, sr, sn, db, dr, dn;
  npu_tensor_strides (src, &sb, &sr, &sn);
  npu_tensor_strides (dst, &db, &dr, &dn);
  const guint8 *s = src->data;
  guint8 *d = dst->data;
  for (gint n = 0; n < src->n; n++)
    for (gint y = 0; y < src->h; y++)
      for (gint c = 0; c < src->c; c++) {
        gint dc = c0 + c;
        if (c % 8 == 0 && dc % 8 == 0 && c + 8 <= src->c) {
          memcpy (d + (n * dn + y * dr + dc / 8 * db) * es, s + (n * sn + y * sr + c / 8 * sb) * es,
              (gsize) src->w * 8 * es);
          c += 7;
          continue;
        }
        for (gint x = 0; x < src->w; x++)
          memcpy (d + (n * dn + y * dr + dc / 8 * db + x * 8 + dc % 8) * es,
              s + (n * sn + y * sr + c / 8 * sb + x * 8 + c % 8) * es, es);
      }
}

/* Writes the padding lanes of @t's last channel block with the code of 0
 * (@zero: the int8 zero point), as the engine's kernels do: copied channels
 * leave them as the arena's previous tenant left them. */
static void
clear_padding_lanes (const SplitNpuProgram *prog, M2iNpuTensor *t, gint32 zero)
{
  if (t->c % 8 == 0)
    return;
  gsize es = elem_size (prog);
  gint64 sb, sr, sn;
  npu_tensor_strides (t, &sb, &sr, &sn);
  guint8 *d = t->data;
  for (gint n = 0; n < t->n; n++)
    for (gint y = 0; y < t->h; y++)
      for (gint x = 0; x < t->w; x++) {
        guint8 *px = d + (n * sn + y * sr + (t->c / 8) * sb + x * 8) * es;
        if (es == 1)
          memset (px + t->c % 8, (gint8) zero, 8 - t->c % 8);
        else
          memset (px + (t->c % 8) * es, 0, (8 - t->c % 8) * es);
      }
}

gboolean
split_npu_program_run (const SplitNpuProgram *prog, SplitNpuState *st, const M2iTensor *const *in,
    M2iTensor *const *out, M2iSplitPieceStats *stats, GError **error)
{
  gint th = st->n_threads;
  M2iNpuTensor *t = st->t;
  for (guint k = 0; k < prog->steps->len; k++) {
    const PStep *s = &g_array_index (prog->steps, PStep, k);
    gboolean ok = TRUE;
    switch (s->kind) {
      case P_IN: {
        M2iMliTensor m;
        ok = host_view (in[s->host], VAL (prog, s->out), &m, error) &&
            m2i_npu_convert_to_blocked (&m, s->type, &s->q, &t[s->out], M2I_MLI_ROUND_HALF_EVEN,
            th, error);
        stats->boundary_bytes += m.capacity;
        break;
      }
      case P_OUT: {
        if (st->skip[s->host])
          break;
        M2iMliTensor m;
        ok = host_view (out[s->host], VAL (prog, s->a), &m, error) &&
            m2i_npu_convert_from_blocked (&t[s->a], s->type, &s->q, &m, M2I_MLI_ROUND_HALF_EVEN,
            th, error);
        stats->boundary_bytes += m.capacity;
        break;
      }
      case P_CONV:
        ok = m2i_npu_conv_run (s->conv, &t[s->a], &t[s->out], st->arena + s->scratch_offset, th,
            error);
        break;
      case P_POOL:
        ok = m2i_npu_pool_run (&s->pool, &t[s->a], &t[s->out], th, error);
        break;
      case P_ADD:
        ok = m2i_npu_add_run (&s->add, &t[s->a], &t[s->b], &t[s->out], th, error);
        break;
      case P_PRELU:
        ok = m2i_npu_prelu_run (&s->prelu, &t[s->a], &t[s->out], th, error);
        break;
      case P_CONCAT:
        for (guint p = 0; p < s->parts->len; p += 2)
          copy_channels (&t[g_array_index (s->parts, gint, p)], &t[s->out],
              g_array_index (s->parts, gint, p + 1), elem_size (prog));
        clear_padding_lanes (prog, &t[s->out], VAL (prog, s->out)->grid.zero_point);
        break;
    }
    if (!ok)
      return FALSE;
  }
  stats->device_cycles += prog->cycles;
  stats->device_layers += prog->layers;
  return TRUE;
}
