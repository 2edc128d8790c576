/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ir-lowp.c — the low-precision pass: INT8 layers onto integer kernels
 * (docs/int8.md).
 *
 * An INT8 model (NNCF, POT, Model Optimizer's FP16-INT8) is a float graph
 * with FakeQuantize on the activations and quantized weights (i8/u8
 * constants through Convert, Subtract of a zero point and Multiply by a
 * scale, or a FakeQuantize of levels 255 on them). Run as written, every
 * FakeQuantize is a pass over memory and every convolution an f32 product
 * of values that are integers times a scale. As OpenVINO's low-precision
 * transformations do, this pass finds
 *
 *   FakeQuantize → [Split, Concat, MaxPool, views]* → Convolution or
 *   GroupConvolution (weights: a constant on a per-output-channel integer
 *   grid) [→ bias, ReLU / Swish (fused before) or PReLU] [→ FakeQuantize]
 *
 * and makes the convolution an integer layer (kernels/conv-int8.h): u8
 * activation codes, i8 weight codes, int32 sums. The FakeQuantize after it
 * goes into its epilogue: the layer writes the codes of the integer layers
 * reading it, or the FakeQuantize's values for other readers. A
 * FakeQuantize that no integer layer writes but only integer layers read
 * goes too: they quantize its input as they copy it, to the very levels it
 * would have computed. Anything else stays as it is (FakeQuantize runs as
 * its formula, vectorized).
 *
 * It runs after the epilogue fusion (bias, ReLU and Swish are in the layer
 * by then) and before the memory plan. M2I_INT8=0 in the environment or
 * M2iIrCompileOptions.float_emulation turn it off. Where the f32 kernel is
 * faster on this CPU the layer stays f32: depthwise layers without a
 * vector integer kernel (ir_k_conv_int8_dw_fast), any layer when the
 * integer tile is the plain-C one (ir_k_conv_int8_gemm_fast);
 * M2I_INT8=all folds the latter too.
 */
#include "ir-compile.h"
#include "kernels/conv-int8.h"

#include <math.h>
#include <string.h>

/* The levels of a value: n ranges (1, or one per channel), as
 * FakeQuantize's inputs 1 to 4 — r[0·n ..] input_low, r[1·n ..]
 * input_high, r[2·n ..] output_low (the grid), r[3·n ..] output_high. */
typedef struct {
  gint levels;
  gint64 n;
  float *r;                            /* owned, 4·n */
  gint fq_step;                        /* the FakeQuantize producing the value, or -1 */
} Grid;

typedef struct {
  gint step;
  Grid grid;
  M2iKConvInt8Params p;
  gint8 *codes;                        /* owned */
  float *scales;                       /* owned */
  gboolean read_raw;                   /* reads the FakeQuantize's input */
  float *out_ranges;                   /* owned: the output quantizer's */
} Candidate;

static const char *
step_type (const CmStep *s)
{
  return m2i_ir_node_get_type (s->ctx.node);
}

/* A constant input of a step as f32 values (NULL when not constant f32). */
static const float *
const_f32 (const M2iIrCompiledModel *cm, gint v, gint64 *numel)
{
  const CmValue *cv = &cm->values[v];
  if (!cv->is_const || cv->t.type != M2I_ET_F32 || !cv->t.data)
    return NULL;
  *numel = m2i_shape_numel (&cv->t.shape);
  return cv->t.data;
}

/* A FakeQuantize step with constant ranges, per tensor or along axis 1
 * (one per channel), and at most 256 levels: its levels and ranges. */
static gboolean
fq_params (const M2iIrCompiledModel *cm, const CmStep *s, Grid *g)
{
  if (s->kernel != &ir_kernel_fake_quantize || s->reinfer || s->ctx.n_inputs != 5 ||
      s->ctx.inputs[0].type != M2I_ET_F32)
    return FALSE;
  const M2iShape *x = &s->ctx.inputs[0].shape;
  gint64 channels = x->rank >= 2 ? x->dims[1] : 1, n = 1;
  const float *d[4];
  gint64 nd[4];
  for (gint i = 0; i < 4; i++) {
    d[i] = const_f32 (cm, s->in_values[1 + i], &nd[i]);
    if (!d[i])
      return FALSE;
    if (nd[i] == 1)
      continue;
    /* per channel: its one long axis is x's axis 1 */
    const M2iShape *r = &cm->values[s->in_values[1 + i]].t.shape;
    gint at = 1 - (x->rank - r->rank);
    if (x->rank < 2 || nd[i] != channels || at < 0 || r->dims[at] != channels)
      return FALSE;
    n = channels;
  }
  gint64 levels;
  if (!m2i_ir_node_attr_int (s->ctx.node, "levels", -1, &levels, NULL) || levels < 2 ||
      levels > 256)
    return FALSE;
  g->levels = (gint) levels;
  g->n = n;
  g->r = g_new (float, 4 * n);
  for (gint i = 0; i < 4; i++)
    for (gint64 c = 0; c < n; c++)
      g->r[i * n + c] = d[i][nd[i] == 1 ? 0 : c];
  g->fq_step = -1;
  return TRUE;
}

#define MAX_DEPTH 64

/* The grid of value @v's values: a FakeQuantize's output, or taken
 * through layers that only move or select values of one grid (views,
 * Split, Concat of one grid, MaxPool, nearest Interpolate). */
static gboolean
value_grid (const M2iIrCompiledModel *cm, const gint *producer, gint v, Grid *g, gint depth)
{
  gint si = producer[v];
  if (si < 0 || depth > MAX_DEPTH)
    return FALSE;
  const CmStep *s = &g_array_index (cm->steps, CmStep, si);
  if (s->reinfer || s->ctx.n_inputs < 1)
    return FALSE;
  const char *type = step_type (s);
  if (s->kernel == &ir_kernel_fake_quantize) {
    if (!fq_params (cm, s, g))
      return FALSE;
    g->fq_step = si;
    return TRUE;
  }
  /* past here values move between channels: one range for all */
  static const char *const moves[] = { "Reshape", "Squeeze", "Unsqueeze", "Transpose",
    "VariadicSplit", "Split", "StridedSlice", "Slice", "MaxPool", "Interpolate", NULL };
  gboolean move = FALSE;
  for (gint i = 0; moves[i]; i++)
    move |= !strcmp (type, moves[i]);
  if (move) {
    if (!strcmp (type, "MaxPool") && v != s->out_values[0])
      return FALSE;                    /* its indices */
    if (!strcmp (type, "Interpolate") &&
        g_strcmp0 (m2i_ir_node_get_attr (s->ctx.node, "mode"), "nearest"))
      return FALSE;
    if (!value_grid (cm, producer, s->in_values[0], g, depth + 1))
      return FALSE;
    g->fq_step = -1;
    if (g->n == 1)
      return TRUE;
    g_clear_pointer (&g->r, g_free);
    return FALSE;
  }
  if (!strcmp (type, "Concat")) {
    for (gint i = 0; i < s->ctx.n_inputs; i++) {
      Grid gi;
      if (!value_grid (cm, producer, s->in_values[i], &gi, depth + 1))
        gi.r = NULL;
      else if (gi.n != 1 || (i > 0 && (gi.levels != g->levels || gi.r[2] != g->r[2] ||
          gi.r[3] != g->r[3])))
        g_clear_pointer (&gi.r, g_free);
      if (i > 0)
        g_free (g->r);
      *g = gi;
      if (!gi.r)
        return FALSE;
    }
    g->fq_step = -1;
    return TRUE;
  }
  return FALSE;
}

/* Per output channel, the scale of a weight constant computed by
 * Multiply (codes, scale) or FakeQuantize (levels 255/256) from integer
 * constants: walks up from the layer's weight input through views and
 * Converts. FALSE when the graph does not say. */
static gboolean
graph_scales (const M2iIrCompiledModel *cm, const M2iIrNode *conv, gint64 c_out, float *scale)
{
  const M2iIrSource *src = &conv->sources[1];
  for (gint depth = 0; depth < MAX_DEPTH; depth++) {
    const M2iIrNode *n = src->node;
    const char *t = n->type;
    if ((!strcmp (t, "Reshape") || !strcmp (t, "Squeeze") || !strcmp (t, "Unsqueeze") ||
        !strcmp (t, "Convert")) && n->n_inputs >= 1) {
      src = &n->sources[0];
      continue;
    }
    if (!strcmp (t, "Multiply") && n->n_inputs == 2) {
      gint64 na = 0, nb = 0;
      const float *a = const_f32 (cm, cm->value_base[n->sources[0].node->index] +
          n->sources[0].port, &na);
      const float *b = const_f32 (cm, cm->value_base[n->sources[1].node->index] +
          n->sources[1].port, &nb);
      const float *s = !a ? b : !b ? a : na <= nb ? a : b;
      gint64 ns = s == a ? na : nb;
      if (!s || (ns != 1 && ns != c_out))
        return FALSE;
      for (gint64 o = 0; o < c_out; o++)
        scale[o] = s[ns == 1 ? 0 : o];
      return TRUE;
    }
    if (!strcmp (t, "FakeQuantize") && n->n_inputs == 5) {
      gint64 levels, nl = 0, nh = 0;
      const float *ol = const_f32 (cm, cm->value_base[n->sources[3].node->index] +
          n->sources[3].port, &nl);
      const float *oh = const_f32 (cm, cm->value_base[n->sources[4].node->index] +
          n->sources[4].port, &nh);
      if (!m2i_ir_node_attr_int (n, "levels", -1, &levels, NULL) || levels < 2 || !ol ||
          !oh || (nl != 1 && nl != c_out) || (nh != 1 && nh != c_out))
        return FALSE;
      for (gint64 o = 0; o < c_out; o++)
        scale[o] = (oh[nh == 1 ? 0 : o] - ol[nl == 1 ? 0 : o]) / (float) (levels - 1);
      return TRUE;
    }
    return FALSE;
  }
  return FALSE;
}

/* codes = W / scale per output channel, when every one is an integer in
 * [-128, 127] (up to the rounding of the f32 product that made W). A
 * channel of zeros takes scale 1. */
static gboolean
quantize_weights (const float *w, gint64 c_out, gint64 per, float *scale, gint8 *codes)
{
  for (gint64 o = 0; o < c_out; o++) {
    const float *wo = w + o * per;
    gboolean zeros = TRUE;
    for (gint64 i = 0; i < per; i++)
      zeros &= wo[i] == 0.0f;
    if (zeros) {
      scale[o] = 1.0f;
      memset (codes + o * per, 0, per);
      continue;
    }
    if (!(scale[o] > 0.0f) || !isfinite (scale[o]))
      return FALSE;
    for (gint64 i = 0; i < per; i++) {
      double r = (double) wo[i] / scale[o], k = nearbyint (r);
      if (fabs (r - k) > 1e-3 || k < -128 || k > 127)
        return FALSE;
      codes[o * per + i] = (gint8) k;
    }
  }
  return TRUE;
}

/* The weights' codes and scales: as the graph says, else max |w| / 127
 * per channel (symmetric quantization), checked either way. */
static gboolean
weight_codes (const M2iIrCompiledModel *cm, const M2iIrNode *conv, const float *w,
    gint64 c_out, gint64 per, float *scale, gint8 *codes)
{
  if (graph_scales (cm, conv, c_out, scale) && quantize_weights (w, c_out, per, scale, codes))
    return TRUE;
  for (gint64 o = 0; o < c_out; o++) {
    float m = 0.0f;
    for (gint64 i = 0; i < per; i++)
      m = MAX (m, fabsf (w[o * per + i]));
    scale[o] = m / 127.0f;
  }
  return quantize_weights (w, c_out, per, scale, codes);
}

static void
candidate_clear (Candidate *c)
{
  g_free (c->codes);
  g_free (c->scales);
  g_free (c->grid.r);
  g_free (c->out_ranges);
}

/* M2I_INT8=all: every GEMM layer that can run on integers does, also
 * where the f32 kernel is faster (tests of the integer kernels through
 * the pass at every level). */
static gboolean
fold_forced (void)
{
  return !g_strcmp0 (g_getenv ("M2I_INT8"), "all");
}

/* A Convolution step that can run on integers (and, unless forced, runs
 * faster so): fills @c. */
static gboolean
conv_candidate (const M2iIrCompiledModel *cm, const gint *producer, gint si, Candidate *c)
{
  CmStep *s = &g_array_index (cm->steps, CmStep, si);
  if ((s->kernel != &ir_kernel_convolution && s->kernel != &ir_kernel_group_convolution) ||
      s->reinfer || s->deferred || s->ctx.dynamic_outputs || s->ctx.n_outputs != 1 ||
      s->ctx.n_inputs != 2 || s->ctx.inputs[0].type != M2I_ET_F32)
    return FALSE;
  M2iKConvGeom g;
  gint64 nw;
  const float *w = const_f32 (cm, s->in_values[1], &nw);
  if (!w || !ir_k_conv_geometry (&s->ctx, &g))
    return FALSE;
  memset (c, 0, sizeof *c);
  c->step = si;
  gboolean dw = g.groups > 1 && g.c_in == g.groups && g.c_out == g.groups;
  if (dw && !ir_k_conv_int8_dw_fast (&g)) {
    g_debug ("int8: layer '%s' stays f32: no fast integer depthwise kernel for it on this CPU",
        s->ctx.node->name);
    return FALSE;                      /* the f32 kernel is faster */
  }
  if (!dw && !fold_forced () && !ir_k_conv_int8_gemm_fast ()) {
    g_debug ("int8: layer '%s' stays f32: no vector integer kernel on this CPU",
        s->ctx.node->name);
    return FALSE;                      /* the f32 kernel is faster */
  }
  if (!value_grid (cm, producer, s->in_values[0], &c->grid, 0)) {
    g_debug ("int8: layer '%s' stays f32: its input is not on one FakeQuantize grid",
        s->ctx.node->name);
    return FALSE;
  }
  gint64 per = g.c_in / g.groups * g.kh * g.kw;
  if (nw != g.c_out * per) {
    candidate_clear (c);
    return FALSE;
  }
  c->codes = g_new (gint8, nw);
  c->scales = g_new (float, g.c_out);
  if (!weight_codes (cm, s->ctx.node, w, g.c_out, per, c->scales, c->codes)) {
    g_debug ("int8: layer '%s' stays f32: its weights are not on an int8 grid per channel",
        s->ctx.node->name);
    candidate_clear (c);
    return FALSE;
  }
  gint64 channels;
  const M2iKFusion *f = ir_k_conv_fusion (&s->ctx, &channels);
  /* reading the FakeQuantize's output: its levels over the output range */
  gint64 n = c->grid.n;
  const float *ol = c->grid.r + 2 * n, *oh = c->grid.r + 3 * n;
  c->p = (M2iKConvInt8Params) { g, c->codes, c->scales, c->grid.levels, n, ol, oh, ol, oh,
    FALSE, f->bias, f->relu ? M2I_K_I8_ACT_RELU : f->swish ? M2I_K_I8_ACT_SWISH :
    M2I_K_I8_ACT_NONE, .swish_beta = f->swish_beta };
  const char *why = ir_k_conv_int8_unsupported (&c->p);
  if (why) {
    g_debug ("int8: layer '%s' stays f32: %s", s->ctx.node->name, why);
    candidate_clear (c);
    return FALSE;
  }
  return TRUE;
}

/* Takes the activation step @a (reading value @v, a convolution's output)
 * into @p's epilogue: PReLU with a constant slope (one, or one per channel
 * as the kernel reads it), Swish with beta 1. FALSE when @a is none. */
static gboolean
fuse_activation (const M2iIrCompiledModel *cm, const CmStep *a, gint v, M2iKConvInt8Params *p)
{
  const char *type = step_type (a);
  if (a->reinfer || a->ctx.n_outputs != 1 || a->in_values[0] != v ||
      !m2i_shape_equal (&a->ctx.outputs[0].shape, &cm->values[v].t.shape))
    return FALSE;
  if (!strcmp (type, "PReLU") && a->ctx.n_inputs == 2) {
    gint64 n;
    const float *slope = const_f32 (cm, a->in_values[1], &n);
    const M2iShape *sl = &cm->values[a->in_values[1]].t.shape, *x = &cm->values[v].t.shape;
    if (!slope || (n != 1 && n != p->g.c_out))
      return FALSE;
    if (n > 1 && sl->rank != 1) {
      /* numpy: the slope's long axis must be the channel axis */
      gint at = 1 - (x->rank - sl->rank);
      if (at < 0 || sl->dims[at] != n)
        return FALSE;
    }
    p->act = M2I_K_I8_ACT_PRELU;
    p->slope = slope;
    p->n_slope = n;
    return TRUE;
  }
  if (!strcmp (type, "Swish") && (a->ctx.n_inputs == 1 || a->ctx.n_inputs == 2)) {
    gint64 n;
    const float *beta = a->ctx.n_inputs == 2 ? const_f32 (cm, a->in_values[1], &n) : NULL;
    if (a->ctx.n_inputs == 2 && (!beta || n != 1))
      return FALSE;
    p->act = M2I_K_I8_ACT_SWISH;
    p->swish_beta = beta ? beta[0] : 1.0f;
    return TRUE;
  }
  return FALSE;
}

/* What became of a FakeQuantize after an integer layer. */
enum { NOT_FUSED, FUSED_CODES, FUSED_VALUES };

void
ir_lowp_fold (M2iIrCompiledModel *cm)
{
  gint n_steps = cm->steps->len;
  g_autofree gint *producer = g_new (gint, MAX (cm->n_values, 1));
  g_autofree gint *readers = g_new0 (gint, MAX (cm->n_values, 1));
  for (gint v = 0; v < cm->n_values; v++)
    producer[v] = -1;
  for (gint si = 0; si < n_steps; si++) {
    const CmStep *s = &g_array_index (cm->steps, CmStep, si);
    for (gint p = 0; p < s->ctx.n_outputs; p++)
      producer[s->out_values[p]] = si;
    for (gint i = 0; i < s->ctx.n_inputs; i++)
      readers[s->in_values[i]]++;
  }
  for (guint i = 0; i < cm->model->results->len; i++)
    readers[cm->output_values[i]]++;

  GArray *cands = g_array_new (FALSE, FALSE, sizeof (Candidate));
  for (gint si = 0; si < n_steps; si++) {
    Candidate c;
    if (conv_candidate (cm, producer, si, &c))
      g_array_append_val (cands, c);
  }
  if (!cands->len) {
    g_array_free (cands, TRUE);
    return;
  }

  /* A FakeQuantize read only by integer layers (input 0 of each) goes:
   * they quantize its input with its input range instead. */
  g_autofree gint *int8_readers = g_new0 (gint, MAX (n_steps, 1));
  for (guint k = 0; k < cands->len; k++) {
    const Candidate *c = &g_array_index (cands, Candidate, k);
    if (c->grid.fq_step >= 0)
      int8_readers[c->grid.fq_step]++;
  }
  g_autofree gboolean *keep = g_new (gboolean, MAX (cm->model->nodes->len, 1));
  for (guint i = 0; i < cm->model->nodes->len; i++)
    keep[i] = TRUE;
  g_autofree gint *fq_fused = g_new0 (gint, MAX (n_steps, 1));
  g_autofree gint *out_value = g_new (gint, cands->len);

  /* Epilogues: a layer takes in the PReLU or Swish its output feeds (ReLU
   * is in already), then the FakeQuantize after that: it writes the
   * FakeQuantize's output, as codes when every reader of that is an
   * integer layer (their input), else as the values it computes. */
  for (guint k = 0; k < cands->len; k++) {
    Candidate *c = &g_array_index (cands, Candidate, k);
    const CmStep *s = &g_array_index (cm->steps, CmStep, c->step);
    gint v = s->out_values[0], at = c->step;
    gint r = ir_compile_only_reader (cm, v, at);
    if (r >= 0 && c->p.act == M2I_K_I8_ACT_NONE &&
        fuse_activation (cm, &g_array_index (cm->steps, CmStep, r), v, &c->p)) {
      const CmStep *a = &g_array_index (cm->steps, CmStep, r);
      keep[a->node] = FALSE;
      v = a->out_values[0];
      at = r;
    }
    /* the FakeQuantize: codes when its readers are all integer layers,
     * else its values, as it computes them */
    r = ir_compile_only_reader (cm, v, at);
    Grid fg = { 0 };
    if (r >= 0 && fq_params (cm, &g_array_index (cm->steps, CmStep, r), &fg) &&
        (fg.n == 1 || fg.n == c->p.g.c_out)) {
      const CmStep *f = &g_array_index (cm->steps, CmStep, r);
      gint fv = f->out_values[0];
      gboolean codes = int8_readers[r] && int8_readers[r] == readers[fv];
      c->p.codes_out = codes;
      c->p.grid_out = !codes;
      c->p.out_levels = fg.levels;
      c->p.n_out_ranges = fg.n;
      c->out_ranges = fg.r;             /* input_low, input_high: the quantizer */
      fg.r = NULL;
      c->p.out_lo = c->out_ranges;
      c->p.out_hi = c->out_ranges + fg.n;
      c->p.grid_out_lo = c->out_ranges + 2 * fg.n;
      c->p.grid_out_hi = c->out_ranges + 3 * fg.n;
      keep[f->node] = FALSE;
      fq_fused[r] = codes ? FUSED_CODES : FUSED_VALUES;
      v = fv;
    }
    g_free (fg.r);
    out_value[k] = v;
  }

  /* Inputs: the codes an integer layer wrote, or, from a FakeQuantize read
   * only by integer layers (input 0 of each), its input: they quantize
   * that with its input range instead, and the FakeQuantize goes. */
  for (guint k = 0; k < cands->len; k++) {
    Candidate *c = &g_array_index (cands, Candidate, k);
    gint fq = c->grid.fq_step;
    if (fq < 0)
      continue;
    if (fq_fused[fq] == FUSED_CODES) {
      c->p.codes_in = TRUE;
      continue;
    }
    if (fq_fused[fq] == FUSED_VALUES)
      continue;                        /* the layer before writes its values */
    const CmStep *f = &g_array_index (cm->steps, CmStep, fq);
    if (readers[f->out_values[0]] != int8_readers[fq])
      continue;
    c->read_raw = TRUE;
    c->p.in_lo = c->grid.r;
    c->p.in_hi = c->grid.r + c->grid.n;
    keep[f->node] = FALSE;
  }

  gint n_int8 = 0, n_codes = 0, n_values = 0;
  for (guint k = 0; k < cands->len; k++) {
    Candidate *c = &g_array_index (cands, Candidate, k);
    CmStep *s = &g_array_index (cm->steps, CmStep, c->step);
    const char *why = NULL;
    M2iKConvInt8 *qc = ir_k_conv_int8_new (&c->p, cm->n_threads, &why);
    g_assert (qc != NULL);             /* conv_candidate() asked the same */
    if (s->kernel->free_state && s->ctx.state)
      s->kernel->free_state (s->ctx.state);
    s->kernel = &ir_kernel_conv_int8;
    s->ctx.state = qc;
    s->ctx.scratch_bytes = ir_k_conv_int8_scratch_bytes (qc);
    if (c->read_raw) {
      const CmStep *f = &g_array_index (cm->steps, CmStep, c->grid.fq_step);
      s->in_values[0] = f->in_values[0];
    }
    if (c->p.codes_in)
      s->ctx.inputs[0].type = M2I_ET_U8;
    s->out_values[0] = out_value[k];
    if (c->p.codes_out) {
      s->ctx.outputs[0].type = M2I_ET_U8;
      cm->values[out_value[k]].t.type = M2I_ET_U8;
      n_codes++;
    }
    n_values += c->p.grid_out;
    candidate_clear (c);
    n_int8++;
  }
  g_array_free (cands, TRUE);
  ir_compile_keep_steps (cm, keep);
  g_debug ("int8: %d convolution layers on integer kernels, %d of them writing the next "
      "layers' codes, %d a FakeQuantize's values", n_int8, n_codes, n_values);
}

gboolean
ir_lowp_enabled (const M2iIrCompileOptions *options)
{
  const char *env = g_getenv ("M2I_INT8");
  if (env && !strcmp (env, "0"))
    return FALSE;
  return !options->float_emulation;
}
