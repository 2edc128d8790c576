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
 * Which candidates go onto integers is chosen by estimated time
 * (conv-int8-cost.c): each layer in f32 or on integers, reading codes or
 * f32, writing codes, a FakeQuantize's values or f32, and the
 * FakeQuantize passes each choice keeps (a layer left in f32 keeps the
 * pass after it unless all its readers quantize, and makes the layer
 * before write values instead of codes); the assignment with the smallest
 * total is searched from all on and all off. Layers without a vector
 * integer kernel on this CPU stay f32 (ir_k_conv_int8_dw_fast,
 * ir_k_conv_int8_gemm_fast).
 *
 * It runs after the epilogue fusion (bias, ReLU and Swish are in the layer
 * by then) and before the memory plan. M2I_INT8=0 in the environment or
 * M2iIrCompileOptions.float_emulation turn it off; M2I_INT8=all puts every
 * layer that can run on integers there, also the plain-C tile's and where
 * the estimates say f32.
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

/* ---- which candidates go onto integers: the cost of every choice ------- */

/* A candidate's neighbourhood, as the choice sees it. */
typedef struct {
  gint act;                            /* the PReLU / Swish step it takes in, or -1 */
  gint fq_out;                         /* the FakeQuantize step after it, or -1 */
  gint fq_in;                          /* the FakeQuantize its input is the output of, or -1 */
  M2iKF32ConvMode f32_mode;
  double f32_ns;                       /* the layer in f32, its activation pass included */
} Link;

typedef struct {
  const M2iIrCompiledModel *cm;
  const GArray *cands;
  const Link *links;
  const gint *readers;                 /* per value */
  gint *fq_prod;                       /* per step: the candidate writing into it, or -1 */
  gint *fq_cands;                      /* per step: candidates reading its output (input 0) */
  gint *fq_on;                         /* per step: those of them on integers */
  gboolean *on;                        /* per candidate: on integers */
} Choice;

static gint64
fq_numel (const Choice *ch, gint f)
{
  return m2i_shape_numel (&g_array_index (ch->cm->steps, CmStep, f).ctx.outputs[0].shape);
}

/* TRUE when every reader of FakeQuantize @f's output is a candidate on
 * integers. */
static gboolean
fq_all_int8 (const Choice *ch, gint f)
{
  const CmStep *s = &g_array_index (ch->cm->steps, CmStep, f);
  return ch->fq_on[f] == ch->readers[s->out_values[0]];
}

/* The estimated time (ns) of candidate @k as ch->on says, with the
 * FakeQuantize pass after it when that stays. */
static double
cand_cost (const Choice *ch, guint k)
{
  const Candidate *c = &g_array_index (ch->cands, Candidate, k);
  const Link *l = &ch->links[k];
  if (ch->on[k]) {
    gboolean codes_in = l->fq_in >= 0 && ch->fq_prod[l->fq_in] >= 0 &&
        ch->on[ch->fq_prod[l->fq_in]] && fq_all_int8 (ch, l->fq_in);
    M2iKI8OutKind out = l->fq_out < 0 ? M2I_K_I8_OUT_F32 :
        fq_all_int8 (ch, l->fq_out) ? M2I_K_I8_OUT_CODES : M2I_K_I8_OUT_VALUES;
    return ir_k_conv_int8_cost (&c->p.g, codes_in, out);
  }
  /* in f32 the FakeQuantize after it stays, unless all its readers
   * quantize its input themselves */
  double t = l->f32_ns;
  if (l->fq_out >= 0 && !fq_all_int8 (ch, l->fq_out))
    t += ir_k_fq_pass_cost (fq_numel (ch, l->fq_out));
  return t;
}

/* The estimated time of the network's candidates and the FakeQuantize
 * passes they read or write: those no candidate writes (the network's
 * input, after an Add) stay unless every reader is on integers. */
static double
total_cost (const Choice *ch)
{
  double t = 0.0;
  for (guint si = 0; si < ch->cm->steps->len; si++)
    if (ch->fq_cands[si] && ch->fq_prod[si] < 0 && !fq_all_int8 (ch, (gint) si))
      t += ir_k_fq_pass_cost (fq_numel (ch, (gint) si));
  for (guint k = 0; k < ch->cands->len; k++)
    t += cand_cost (ch, k);
  return t;
}

static void
flip (Choice *ch, guint k)
{
  ch->on[k] = !ch->on[k];
  if (ch->links[k].fq_in >= 0)
    ch->fq_on[ch->links[k].fq_in] += ch->on[k] ? 1 : -1;
}

static gboolean
neighbours (const Link *l, const Link *m)
{
  return (l->fq_out >= 0 && l->fq_out == m->fq_in) || (m->fq_out >= 0 && m->fq_out == l->fq_in) ||
      (l->fq_in >= 0 && l->fq_in == m->fq_in);
}

/* From the assignment in ch->on, flips one candidate at a time, or two
 * sharing a FakeQuantize, while that lowers the estimated total (the
 * choices interact only through the FakeQuantize between neighbours);
 * returns the total. */
static double
descend (Choice *ch)
{
  guint n = ch->cands->len;
  double best = total_cost (ch);
  for (gint round = 0; round < 8; round++) {
    gboolean better = FALSE;
    for (guint k = 0; k < n; k++) {
      flip (ch, k);
      double t = total_cost (ch);
      gboolean kept = t < best - 1e-6 * best;
      for (guint j = 0; !kept && j < n; j++) {
        if (j == k || !neighbours (&ch->links[k], &ch->links[j]))
          continue;
        flip (ch, j);
        t = total_cost (ch);
        kept = t < best - 1e-6 * best;
        if (!kept)
          flip (ch, j);
      }
      if (kept) {
        best = t;
        better = TRUE;
      } else {
        flip (ch, k);
      }
    }
    if (!better)
      break;
  }
  return best;
}

/* Puts on integers the candidates whose choice makes the network's
 * estimated time smallest: the better of the descents from all on and
 * from all off (ties: more on integers). */
static void
choose (Choice *ch)
{
  guint n = ch->cands->len;
  for (guint k = 0; k < n; k++)
    if (ch->on[k])
      flip (ch, k);
  double off = descend (ch);
  g_autofree gboolean *from_off = g_memdup2 (ch->on, n * sizeof (gboolean));
  for (guint k = 0; k < n; k++)
    if (!ch->on[k])
      flip (ch, k);
  double on = descend (ch);
  if (off < on - 1e-6 * on)
    for (guint k = 0; k < n; k++)
      if (ch->on[k] != from_off[k])
        flip (ch, k);
}

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

  /* Each candidate's neighbourhood: the PReLU or Swish its output feeds
   * (ReLU is in already), then the FakeQuantize after that. */
  g_autofree Link *links = g_new (Link, cands->len);
  g_autofree gint *fq_prod = g_new (gint, MAX (n_steps, 1));
  g_autofree gint *fq_cands = g_new0 (gint, MAX (n_steps, 1));
  for (gint si = 0; si < n_steps; si++)
    fq_prod[si] = -1;
  for (guint k = 0; k < cands->len; k++) {
    Candidate *c = &g_array_index (cands, Candidate, k);
    const CmStep *s = &g_array_index (cm->steps, CmStep, c->step);
    Link *l = &links[k];
    l->act = l->fq_out = -1;
    l->fq_in = c->grid.fq_step;
    if (l->fq_in >= 0)
      fq_cands[l->fq_in]++;
    gint v = s->out_values[0], at = c->step;
    gint r = ir_compile_only_reader (cm, v, at);
    if (r >= 0 && c->p.act == M2I_K_I8_ACT_NONE &&
        fuse_activation (cm, &g_array_index (cm->steps, CmStep, r), v, &c->p)) {
      l->act = r;
      v = g_array_index (cm->steps, CmStep, r).out_values[0];
      at = r;
    }
    r = ir_compile_only_reader (cm, v, at);
    Grid fg = { 0 };
    if (r >= 0 && fq_params (cm, &g_array_index (cm->steps, CmStep, r), &fg) &&
        (fg.n == 1 || fg.n == c->p.g.c_out)) {
      l->fq_out = r;
      fq_prod[r] = (gint) k;
      c->p.out_levels = fg.levels;
      c->p.n_out_ranges = fg.n;
      c->out_ranges = fg.r;             /* input_low, input_high: the quantizer */
      fg.r = NULL;
    }
    g_free (fg.r);
    l->f32_mode = ir_k_conv_uses_winograd (&s->ctx) ? M2I_K_F32_CONV_WINOGRAD :
        ir_k_conv_uses_direct (&s->ctx) ? M2I_K_F32_CONV_DIRECT : M2I_K_F32_CONV_GEMM;
    l->f32_ns = ir_k_conv_f32_cost (&c->p.g, l->f32_mode);
    if (l->act >= 0)
      l->f32_ns += ir_k_act_pass_cost (m2i_shape_numel (&s->ctx.outputs[0].shape));
  }

  /* Which go onto integers: all of them when forced, else those the
   * estimates say are faster so, FakeQuantize passes counted. */
  g_autofree gboolean *on = g_new0 (gboolean, cands->len);
  g_autofree gint *fq_on = g_new0 (gint, MAX (n_steps, 1));
  Choice ch = { cm, cands, links, readers, fq_prod, fq_cands, fq_on, on };
  if (fold_forced ()) {
    for (guint k = 0; k < cands->len; k++)
      flip (&ch, k);
  } else {
    choose (&ch);
  }
  for (guint k = 0; k < cands->len; k++) {
    const Candidate *c = &g_array_index (cands, Candidate, k);
    const CmStep *s = &g_array_index (cm->steps, CmStep, c->step);
    M2iKI8Work w;
    ir_k_conv_int8_work (&c->p.g, &w);
    const Link *l = &links[k];
    g_debug ("int8: layer '%s' %s (estimates: f32 %.1f us, integers %.1f us; work: macs %.0f "
        "padded %.0f in %.0f out %.0f quad %.0f weights %.0f f32-mode %d act %d fq-in %d "
        "fq-out %d)", s->ctx.node->name, on[k] ? "on integers" :
        "stays f32: faster with its FakeQuantize passes counted", l->f32_ns / 1e3,
        ir_k_conv_int8_cost (&c->p.g, FALSE, M2I_K_I8_OUT_F32) / 1e3, w.macs, w.padded_macs,
        w.in, w.out, w.quad_bytes, w.weights, l->f32_mode, l->act >= 0, l->fq_in >= 0,
        l->fq_out >= 0);
  }
  /* the candidates staying f32 leave */
  {
    guint kept = 0;
    for (guint k = 0; k < cands->len; k++) {
      Candidate *c = &g_array_index (cands, Candidate, k);
      if (!on[k]) {
        candidate_clear (c);
        continue;
      }
      links[kept] = links[k];
      g_array_index (cands, Candidate, kept++) = *c;
    }
    g_array_set_size (cands, kept);
  }
  if (!cands->len) {
    g_array_free (cands, TRUE);
    return;
  }

  g_autofree gint *int8_readers = g_new0 (gint, MAX (n_steps, 1));
  for (guint k = 0; k < cands->len; k++)
    if (links[k].fq_in >= 0)
      int8_readers[links[k].fq_in]++;
  g_autofree gboolean *keep = g_new (gboolean, MAX (cm->model->nodes->len, 1));
  for (guint i = 0; i < cm->model->nodes->len; i++)
    keep[i] = TRUE;
  g_autofree gint *fq_fused = g_new0 (gint, MAX (n_steps, 1));
  g_autofree gint *out_value = g_new (gint, cands->len);

  /* Epilogues: the layer takes in its PReLU or Swish, then writes the
   * FakeQuantize's output, as codes when every reader of that is an
   * integer layer (their input), else as the values it computes. */
  for (guint k = 0; k < cands->len; k++) {
    Candidate *c = &g_array_index (cands, Candidate, k);
    const CmStep *s = &g_array_index (cm->steps, CmStep, c->step);
    gint v = s->out_values[0];
    if (links[k].act >= 0) {
      const CmStep *a = &g_array_index (cm->steps, CmStep, links[k].act);
      keep[a->node] = FALSE;
      v = a->out_values[0];
    }
    gint r = links[k].fq_out;
    if (r >= 0) {
      const CmStep *f = &g_array_index (cm->steps, CmStep, r);
      gint fv = f->out_values[0];
      gboolean codes = int8_readers[r] && int8_readers[r] == readers[fv];
      gint64 n = c->p.n_out_ranges;
      c->p.codes_out = codes;
      c->p.grid_out = !codes;
      c->p.out_lo = c->out_ranges;
      c->p.out_hi = c->out_ranges + n;
      c->p.grid_out_lo = c->out_ranges + 2 * n;
      c->p.grid_out_hi = c->out_ranges + 3 * n;
      keep[f->node] = FALSE;
      fq_fused[r] = codes ? FUSED_CODES : FUSED_VALUES;
      v = fv;
    }
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
    g_debug ("int8: layer '%s' reads %s, writes %s", s->ctx.node->name,
        c->p.codes_in ? "codes" : "f32", c->p.codes_out ? "codes" : c->p.grid_out ?
        "a FakeQuantize's values" : "f32");
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
