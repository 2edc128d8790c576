/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Recurrent layers, f32: LSTMSequence-5, GRUSequence-5, RNNSequence-5 and
 * the cells LSTMCell-1/-4, GRUCell-3, RNNCell-3 (a cell is a sequence of
 * one step, one direction).
 *
 * Gates (W, R, B rows): LSTM f, i, c, o; GRU z, r, h; RNN one. With
 * activations f, g, h (default sigmoid, tanh, tanh; relu, sigmoid, tanh
 * allowed) and pre-activations clipped to [-clip, clip] when clip is set:
 *   LSTM  i, f, o = f(X·Wᵀ + H·Rᵀ + B)   c̃ = g(...)
 *         C' = f ⊙ C + i ⊙ c̃,  H' = o ⊙ h(C')     (LSTMCell-1: peepholes P
 *         [i, f, o] add P ⊙ C to i and f, P ⊙ C' to o)
 *   GRU   z, r = f(X·Wᵀ + H·Rᵀ + B)
 *         h̃ = g(X·W_hᵀ + (r ⊙ H)·R_hᵀ + B_h)                (linear_before_reset 0)
 *         h̃ = g(X·W_hᵀ + Wb_h + r ⊙ (H·R_hᵀ + Rb_h))         (1: B has 4 blocks)
 *         H' = (1 - z) ⊙ h̃ + z ⊙ H
 *   RNN   H' = f(X·Wᵀ + H·Rᵀ + B)
 * Sequences take X [B, T, I], states [B, D, H], lengths [B] (data:
 * checked at run time) and give Y [B, D, T, H] (zeros past a sequence's
 * length), Ho (and Co) [B, D, H]; direction reverse (and the second half of
 * bidirectional) walks each sequence from its own last step back.
 *
 * The input projection X·Wᵀ of every step is one matrix product on the
 * GEMM (gemm.h, Wᵀ packed in infer() when constant), split over threads;
 * each step then multiplies the states by the packed Rᵀ (the GEMM's
 * one-row kernel at batch 1) and applies the gates. Nothing is allocated
 * per run.
 */
#include "kernels-private.h"
#include "gemm.h"
#include "indices.h"

#include <math.h>
#include <string.h>

typedef enum { RNN_LSTM, RNN_GRU, RNN_VANILLA } RnnKind;
typedef enum { ACT_SIGMOID, ACT_TANH, ACT_RELU } RnnAct;

typedef struct {
  RnnKind kind;
  gboolean cell;
  const M2iGemmArch *arch;
  gint64 batch, steps, input, hidden, dirs, gates;     /* gates · hidden = rows of W */
  gint dir0;                           /* 0 forward, 1 reverse (single direction) */
  RnnAct act[3];
  float clip;                          /* 0: none */
  gboolean lbr;                        /* GRU linear_before_reset */
  gboolean peep;                       /* LSTMCell-1 with P */
  /* inputs' positions */
  gint in_h, in_c, in_len, in_w, in_r, in_b, in_p;
  /* packed Wᵀ [input × gates·H] and Rᵀ [H × n1], [H × n2] per direction,
   * or NULL when the weights come at run time */
  float *wp, *rp1, *rp2;
  gsize wp_dir, rp1_dir, rp2_dir;      /* floats per direction */
  gint64 n1, n2;                       /* columns of rp1 (and rp2: GRU's h gate) */
  /* scratch: [packed weights when not constant] packed A (the X rows or
   * the states), the projections, the states, a bbuf and a strip */
  gsize s_w, s_a, s_xw, s_hr, s_state, s_len, s_bbuf, s_strip;
} RnnState;

static void
rnn_state_free (gpointer p)
{
  RnnState *s = p;
  if (!s)
    return;
  g_free (s->wp);
  g_free (s->rp1);
  g_free (s->rp2);
  g_free (s);
}

static gboolean
rnn_acts (const M2iOpContext *ctx, RnnState *s, gint n, GError **error)
{
  static const char *const names[] = { "sigmoid", "tanh", "relu" };
  const char *a = m2i_ir_node_get_attr (ctx->node, "activations");
  s->act[0] = s->kind == RNN_VANILLA ? ACT_TANH : ACT_SIGMOID;
  s->act[1] = s->act[2] = ACT_TANH;
  if (!a || !*a)
    return TRUE;
  g_auto (GStrv) v = g_strsplit (a, ",", -1);
  if ((gint) g_strv_length (v) != n) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "activations=\"%s\" must name %d functions", a, n);
    return FALSE;
  }
  for (gint i = 0; i < n; i++) {
    gchar *name = g_strstrip (v[i]);
    gint k = 0;
    while (k < 3 && g_ascii_strcasecmp (name, names[k]))
      k++;
    if (k == 3) {
      m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, ctx->node,
          "activation \"%s\" is not supported (sigmoid, tanh, relu)", name);
      return FALSE;
    }
    s->act[i] = (RnnAct) k;
  }
  return TRUE;
}

/* Checks input @i has @rank dims equal to @want (-1: any). */
static gboolean
want_shape (const M2iOpContext *ctx, gint i, const char *what, gint rank, const gint64 *want,
    GError **error)
{
  const M2iShape *sh = &ctx->inputs[i].shape;
  gboolean ok = sh->rank == rank;
  for (gint a = 0; ok && a < rank; a++)
    ok = want[a] < 0 || sh->dims[a] == want[a];
  if (!ok) {
    GString *w = g_string_new ("[");
    for (gint a = 0; a < rank; a++)
      g_string_append_printf (w, a ? ", %" G_GINT64_FORMAT : "%" G_GINT64_FORMAT, want[a]);
    g_string_append (w, "]");
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "input %d (%s) has shape %s; expected %s", i, what, ir_k_shape_str (sh, 0), w->str);
    g_string_free (w, TRUE);
    return FALSE;
  }
  return TRUE;
}

/* Packs Wᵀ and Rᵀ of every direction from @w and @r into @wp, @rp1, @rp2. */
static void
rnn_pack (const RnnState *s, const float *w, const float *r, float *wp, float *rp1, float *rp2)
{
  gint64 rows = s->gates * s->hidden;
  for (gint64 d = 0; d < s->dirs; d++) {
    /* Wᵀ: element (i, g) = W[d][g][i] */
    ir_gemm_pack_b (s->arch, w + d * rows * s->input, 1, s->input, (gint) s->input,
        (gint) rows, wp + d * s->wp_dir);
    const float *rd = r + d * rows * s->hidden;
    ir_gemm_pack_b (s->arch, rd, 1, s->hidden, (gint) s->hidden, (gint) s->n1,
        rp1 + d * s->rp1_dir);
    if (s->n2)
      ir_gemm_pack_b (s->arch, rd + s->n1 * s->hidden, 1, s->hidden, (gint) s->hidden,
          (gint) s->n2, rp2 + d * s->rp2_dir);
  }
}

static gboolean
rnn_infer_common (M2iOpContext *ctx, RnnKind kind, gboolean cell, GError **error)
{
  static const char *const dirs[] = { "forward", "reverse", "bidirectional", NULL };
  RnnState *s = g_new0 (RnnState, 1);
  s->kind = kind;
  s->cell = cell;
  s->arch = ir_gemm_arch ();
  s->gates = kind == RNN_LSTM ? 4 : kind == RNN_GRU ? 3 : 1;
  gboolean lstm = kind == RNN_LSTM;
  gint version = ir_k_op_version (ctx);
  /* input positions */
  gint next = 1;
  s->in_h = next++;
  s->in_c = lstm ? next++ : -1;
  s->in_len = cell ? -1 : next++;
  s->in_w = next++;
  s->in_r = next++;
  s->in_b = next++;
  gint max_in = next;
  s->in_p = -1;
  if (lstm && cell && version == 1)
    max_in = next + 1;               /* LSTMCell-1: optional peepholes */
  gint min_in = cell ? next - 1 : next;   /* cells: B optional */
  gint n_out = lstm ? (cell ? 2 : 3) : (cell ? 1 : 2);
  if (!ir_k_check_arity (ctx, min_in, max_in, 1, n_out, error))
    goto fail;
  for (gint i = 0; i < ctx->n_inputs; i++)
    if (i != s->in_len && !ir_k_check_f32 (ctx, i, error))
      goto fail;
  if (ctx->n_inputs > next) {
    s->in_p = next;
    s->peep = TRUE;
  }
  if (ctx->n_inputs < next)
    s->in_b = -1;
  gint64 hidden, direction = 0;
  double clip;
  if (!ir_k_require_attrs (ctx, error, "hidden_size", NULL))
    goto fail;
  gint dir_i = 0;
  if (!m2i_ir_node_attr_int (ctx->node, "hidden_size", 0, &hidden, error) ||
      !m2i_ir_node_attr_float (ctx->node, "clip", 0, &clip, error) ||
      !rnn_acts (ctx, s, lstm ? 3 : kind == RNN_GRU ? 2 : 1, error) ||
      (kind == RNN_GRU &&
          !m2i_ir_node_attr_bool (ctx->node, "linear_before_reset", FALSE, &s->lbr, error)) ||
      (!cell && !m2i_ir_node_attr_enum (ctx->node, "direction", "forward", dirs, &dir_i, error)))
    goto fail;
  if (lstm && cell && version == 1) {
    gboolean input_forget;
    const char *wf = m2i_ir_node_get_attr (ctx->node, "weights_format");
    if (!m2i_ir_node_attr_bool (ctx->node, "input_forget", FALSE, &input_forget, error))
      goto fail;
    if (input_forget || (wf && strcmp (wf, "fico"))) {
      m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, ctx->node,
          "input_forget and weights_format other than fico are not supported");
      goto fail;
    }
  }
  direction = dir_i;
  s->clip = clip > 0 && isfinite (clip) ? (float) clip : 0;
  s->dirs = direction == 2 ? 2 : 1;
  s->dir0 = direction == 1;
  const M2iShape *xs = &ctx->inputs[0].shape;
  if (xs->rank != (cell ? 2 : 3) || hidden < 1 || hidden > 1 << 20) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "X %s must be %s and hidden_size %" G_GINT64_FORMAT " positive",
        ir_k_shape_str (xs, 0), cell ? "[batch, input]" : "[batch, steps, input]", hidden);
    goto fail;
  }
  s->batch = xs->dims[0];
  s->steps = cell ? 1 : xs->dims[1];
  s->input = xs->dims[cell ? 1 : 2];
  s->hidden = hidden;
  gint64 rows = s->gates * hidden;
  gint64 b_rows = kind == RNN_GRU && s->lbr ? 4 * hidden : rows;
  gint64 D = s->dirs, B = s->batch, H = hidden;
  if (cell) {
    if (!want_shape (ctx, s->in_h, "initial_hidden_state", 2, (gint64[]) { B, H }, error) ||
        (lstm && !want_shape (ctx, s->in_c, "initial_cell_state", 2, (gint64[]) { B, H }, error)) ||
        !want_shape (ctx, s->in_w, "W", 2, (gint64[]) { rows, s->input }, error) ||
        !want_shape (ctx, s->in_r, "R", 2, (gint64[]) { rows, H }, error) ||
        (s->in_b >= 0 && !want_shape (ctx, s->in_b, "B", 1, (gint64[]) { b_rows }, error)) ||
        (s->peep && !want_shape (ctx, s->in_p, "P", 1, (gint64[]) { 3 * H }, error)))
      goto fail;
  } else {
    if (!want_shape (ctx, s->in_h, "initial_hidden_state", 3, (gint64[]) { B, D, H }, error) ||
        (lstm && !want_shape (ctx, s->in_c, "initial_cell_state", 3, (gint64[]) { B, D, H },
            error)) ||
        !want_shape (ctx, s->in_len, "sequence_lengths", 1, (gint64[]) { B }, error) ||
        !ir_k_check_index_type (ctx, s->in_len, "sequence_lengths", error) ||
        !want_shape (ctx, s->in_w, "W", 3, (gint64[]) { D, rows, s->input }, error) ||
        !want_shape (ctx, s->in_r, "R", 3, (gint64[]) { D, rows, H }, error) ||
        !want_shape (ctx, s->in_b, "B", 2, (gint64[]) { D, b_rows }, error))
      goto fail;
  }
  if (B * s->steps > G_MAXINT32 / 8 || rows * MAX (s->input, H) > G_MAXINT32 / 8) {
    m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, ctx->node, "the layer is too large");
    goto fail;
  }
  s->n1 = kind == RNN_GRU && !s->lbr ? 2 * H : rows;
  s->n2 = rows - s->n1;
  s->wp_dir = ir_gemm_packed_b_size (s->arch, (gint) s->input, (gint) rows);
  s->rp1_dir = ir_gemm_packed_b_size (s->arch, (gint) H, (gint) s->n1);
  s->rp2_dir = s->n2 ? ir_gemm_packed_b_size (s->arch, (gint) H, (gint) s->n2) : 0;
  gsize wfloats = D * (s->wp_dir + s->rp1_dir + s->rp2_dir);
  if (ctx->inputs[s->in_w].data && ctx->inputs[s->in_r].data) {
    s->wp = g_new (float, D * s->wp_dir);
    s->rp1 = g_new (float, D * s->rp1_dir);
    s->rp2 = s->n2 ? g_new (float, D * s->rp2_dir) : NULL;
    rnn_pack (s, ctx->inputs[s->in_w].data, ctx->inputs[s->in_r].data, s->wp, s->rp1, s->rp2);
  } else {
    s->s_w = (wfloats + 15) & ~(gsize) 15;
  }
  gint64 xrows = B * s->steps;
  s->s_a = (ir_gemm_packed_a_size (s->arch, (gint) MAX (xrows, B),
      (gint) MAX (s->input, H)) + 15) & ~(gsize) 15;
  s->s_xw = ((gsize) xrows * rows + 15) & ~(gsize) 15;
  s->s_hr = ((gsize) B * rows + 15) & ~(gsize) 15;
  s->s_state = ((gsize) B * H * 3 + 15) & ~(gsize) 15;     /* H, C, r ⊙ H */
  s->s_len = ((gsize) B * 2 + 15) & ~(gsize) 15;        /* B gint64 lengths */
  s->s_bbuf = ((gsize) s->arch->kc * s->arch->nr + 15) & ~(gsize) 15;
  s->s_strip = (ir_gemm_strip_size (s->arch) + 15) & ~(gsize) 15;
  ctx->scratch_bytes = (s->s_w + s->s_a + s->s_xw + s->s_hr + s->s_state + s->s_len +
      ir_k_threads (ctx) * (s->s_bbuf + s->s_strip)) * sizeof (float);
  ctx->state = s;
  /* outputs */
  if (cell) {
    for (gint o = 0; o < ctx->n_outputs; o++) {
      ctx->outputs[o].type = M2I_ET_F32;
      ctx->outputs[o].shape = (M2iShape) { 2, { B, H } };
    }
  } else {
    ctx->outputs[0].type = M2I_ET_F32;
    ctx->outputs[0].shape = (M2iShape) { 4, { B, D, s->steps, H } };
    for (gint o = 1; o < ctx->n_outputs; o++) {
      ctx->outputs[o].type = M2I_ET_F32;
      ctx->outputs[o].shape = (M2iShape) { 3, { B, D, H } };
    }
  }
  return TRUE;
fail:
  rnn_state_free (s);
  return FALSE;
}

#define RNN_INFER(name, kind, cell) \
  static gboolean name (M2iOpContext *ctx, GError **error) \
  { return rnn_infer_common (ctx, kind, cell, error); }
RNN_INFER (lstm_seq_infer, RNN_LSTM, FALSE)
RNN_INFER (gru_seq_infer, RNN_GRU, FALSE)
RNN_INFER (rnn_seq_infer, RNN_VANILLA, FALSE)
RNN_INFER (lstm_cell_infer, RNN_LSTM, TRUE)
RNN_INFER (gru_cell_infer, RNN_GRU, TRUE)
RNN_INFER (rnn_cell_infer, RNN_VANILLA, TRUE)

/* ---- products ------------------------------------------------------------- */

typedef struct {
  const RnnState *s;
  const float *a;                      /* packed A, or the single row */
  gsize a1;                            /* a1_stride for m == 1 */
  gint m, k, n;
  const float *bp;                     /* packed B (k × n) */
  float *c;                            /* m × n, row stride n */
  float *scratch;                      /* per slice: bbuf, strip */
} RnnGemm;

static const float *
rnn_b_panel (gpointer user, gint k0, gint kc, gint n0, gint ncols, float *buf,
    const gint32 **off)
{
  const RnnGemm *g = user;
  *off = ir_gemm_packed_offsets (g->s->arch);
  return g->bp + (gsize) n0 * g->k + (gsize) k0 * g->s->arch->nr;
}

static void
rnn_gemm_slice (gint begin, gint end, gint slice, gpointer data)
{
  const RnnGemm *g = data;
  const RnnState *s = g->s;
  gint nr = s->arch->nr;
  float *bbuf = g->scratch + slice * (s->s_bbuf + s->s_strip);
  M2iGemmOut o = { g->c, (gsize) g->n };
  for (gint p = begin; p < end; p++) {
    gint n0 = p * nr, ncols = MIN (nr, g->n - n0);
    ir_gemm_column_panel (s->arch, g->m, g->k, g->a, g->a1, n0, ncols, rnn_b_panel,
        (gpointer) g, bbuf, bbuf + s->s_bbuf, &o);
  }
}

/* c[m × n] = rows of @a (row stride @lda, k wide) · packed B. */
static void
rnn_gemm (const RnnState *s, const float *a, gsize lda, gint m, gint k, const float *bp, gint n,
    float *c, float *pack, float *scratch, gint slices)
{
  RnnGemm g = { s, a, 1, m, k, n, bp, c, scratch };
  if (m > 1) {
    ir_gemm_pack_a (s->arch, a, lda, 1, m, k, pack);
    g.a = pack;
    g.a1 = s->arch->mr;
  }
  gint panels = (n + s->arch->nr - 1) / s->arch->nr;
  if (k == 0) {
    memset (c, 0, (gsize) m * n * sizeof (float));
    return;
  }
  ir_k_parallel_for (panels, MIN (slices, panels), 1, rnn_gemm_slice, &g);
}

/* The time step batch row @b handles at @step: its sequences run from
 * their own last step back when @reverse; -1 past the row's length. */
static inline gint64
step_time (const gint64 *lens, gint64 b, gint64 step, gboolean reverse)
{
  if (step >= lens[b])
    return -1;
  return reverse ? lens[b] - 1 - step : step;
}

/* ---- the cell ----------------------------------------------------------------- */

/* sigmoid and tanh through one expf of -|x| each (glibc's tanhf goes
 * through expm1f, several times slower, and the cells spend most of their
 * element-wise time here): within 2 ulp of the exact values for sigmoid,
 * and within 1e-7 absolute for tanh. */
static inline float
act (RnnAct a, float x)
{
  switch (a) {
    case ACT_SIGMOID: {
      float e = expf (-fabsf (x));
      return x >= 0 ? 1.0f / (1.0f + e) : e / (1.0f + e);
    }
    case ACT_TANH: {
      float e = expf (-2.0f * fabsf (x));
      float t = (1.0f - e) / (1.0f + e);
      return x >= 0 ? t : -t;
    }
    default: return x > 0 ? x : 0;
  }
}

static inline float
clipf (const RnnState *s, float x)
{
  return s->clip > 0 ? CLAMP (x, -s->clip, s->clip) : x;
}

static gboolean
rnn_execute (M2iOpContext *ctx, GError **error)
{
  const RnnState *s = ctx->state;
  gint64 B = s->batch, T = s->steps, H = s->hidden, I = s->input, D = s->dirs;
  gint64 rows = s->gates * H;
  float *scr = ctx->scratch;
  float *wp_all = s->wp, *rp1_all = s->rp1, *rp2_all = s->rp2;
  if (!wp_all) {
    wp_all = scr;
    rp1_all = wp_all + D * s->wp_dir;
    rp2_all = rp1_all + D * s->rp1_dir;
    rnn_pack (s, ctx->inputs[s->in_w].data, ctx->inputs[s->in_r].data, wp_all, rp1_all, rp2_all);
  }
  float *pack = scr + s->s_w, *xw = pack + s->s_a, *hr = xw + s->s_xw, *st = hr + s->s_hr;
  gint64 *lens = (gint64 *) (st + s->s_state);
  float *gemm_scr = st + s->s_state + s->s_len;
  float *hs = st, *cs = st + B * H, *rh = st + 2 * B * H;
  const float *x = ctx->inputs[0].data;
  const float *bias = s->in_b >= 0 ? ctx->inputs[s->in_b].data : NULL;
  const float *peep = s->peep ? ctx->inputs[s->in_p].data : NULL;
  gint slices = MIN (ir_k_slices_for (ctx, B * T * I * rows), ir_k_threads (ctx));
  gint step_slices = MIN (ir_k_slices_for (ctx, B * H * rows), ir_k_threads (ctx));
  /* lengths: data, checked */
  for (gint64 b = 0; b < B; b++) {
    gint64 l = s->cell ? 1 : ir_k_index_at (&ctx->inputs[s->in_len], b);
    if (l < 0 || l > T) {
      m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
          "sequence_lengths[%" G_GINT64_FORMAT "] = %" G_GINT64_FORMAT " is outside [0, %"
          G_GINT64_FORMAT "]", b, l, T);
      return FALSE;
    }
    lens[b] = l;
  }
  /* outputs: sequences Y, Ho, Co; cells Ho, Co (unread ones have no memory) */
  gint o_h = s->cell ? 0 : 1, o_c = o_h + 1;
  float *y = s->cell ? NULL : ctx->outputs[0].data;
  float *ho = ctx->n_outputs > o_h ? ctx->outputs[o_h].data : NULL;
  float *co = s->kind == RNN_LSTM && ctx->n_outputs > o_c ? ctx->outputs[o_c].data : NULL;
  if (y)
    memset (y, 0, (gsize) B * D * T * H * sizeof (float));
  for (gint64 d = 0; d < D; d++) {
    gboolean reverse = D == 2 ? d == 1 : s->dir0;
    /* the input projection of every (batch, step) row */
    if (B * T > 0)
      rnn_gemm (s, x, I, (gint) (B * T), (gint) I, wp_all + d * s->wp_dir, (gint) rows, xw, pack,
          gemm_scr, slices);
    const float *bd = bias ? bias + d * (s->kind == RNN_GRU && s->lbr ? 4 * H : rows) : NULL;
    /* initial states */
    const float *h0 = ctx->inputs[s->in_h].data, *c0 = s->in_c >= 0 ?
        ctx->inputs[s->in_c].data : NULL;
    for (gint64 b = 0; b < B; b++) {
      memcpy (hs + b * H, h0 + (b * D + d) * H, H * sizeof (float));
      if (c0)
        memcpy (cs + b * H, c0 + (b * D + d) * H, H * sizeof (float));
    }
    for (gint64 step = 0; step < T; step++) {
      rnn_gemm (s, hs, H, (gint) B, (gint) H, rp1_all + d * s->rp1_dir, (gint) s->n1, hr, pack,
          gemm_scr, step_slices);
      for (gint64 b = 0; b < B; b++) {
        gint64 t = step_time (lens, b, step, reverse);
        if (t < 0)
          continue;
        const float *xg = xw + (b * T + t) * rows;
        const float *rg = hr + b * s->n1;
        float *hb = hs + b * H, *cb = cs + b * H;
        if (s->kind == RNN_LSTM) {
          for (gint64 j = 0; j < H; j++) {
            float g4[4];
            for (gint q = 0; q < 4; q++)
              g4[q] = xg[q * H + j] + rg[q * H + j] + (bd ? bd[q * H + j] : 0.0f);
            float cprev = cb[j];
            if (peep) {
              g4[1] += peep[j] * cprev;               /* i */
              g4[0] += peep[H + j] * cprev;           /* f */
            }
            float f = act (s->act[0], clipf (s, g4[0]));
            float i = act (s->act[0], clipf (s, g4[1]));
            float c = act (s->act[1], clipf (s, g4[2]));
            float cn = f * cprev + i * c;
            if (peep)
              g4[3] += peep[2 * H + j] * cn;          /* o */
            float o = act (s->act[0], clipf (s, g4[3]));
            cb[j] = cn;
            hb[j] = o * act (s->act[2], cn);
          }
        } else if (s->kind == RNN_VANILLA) {
          for (gint64 j = 0; j < H; j++)
            hb[j] = act (s->act[0], clipf (s, xg[j] + rg[j] + (bd ? bd[j] : 0.0f)));
        } else {
          /* z and r now; the h gate needs r first (or, linear before
           * reset, H·R_hᵀ from this product) */
          float *zr = rh + b * H;          /* holds z, then used below */
          for (gint64 j = 0; j < H; j++) {
            float z = act (s->act[0], clipf (s, xg[j] + rg[j] + (bd ? bd[j] : 0.0f)));
            float r = act (s->act[0], clipf (s, xg[H + j] + rg[H + j] + (bd ? bd[H + j] : 0.0f)));
            if (s->lbr) {
              float hh = xg[2 * H + j] + (bd ? bd[2 * H + j] : 0.0f) +
                  r * (rg[2 * H + j] + (bd ? bd[3 * H + j] : 0.0f));
              float ht = act (s->act[1], clipf (s, hh));
              zr[j] = (1.0f - z) * ht + z * hb[j];   /* the new state, written below */
            } else {
              zr[j] = z;
              cb[j] = r * hb[j];                     /* r ⊙ H (cs is free for GRU) */
            }
          }
          if (s->lbr)
            memcpy (hb, zr, H * sizeof (float));
        }
      }
      if (s->kind == RNN_GRU && !s->lbr) {
        /* (r ⊙ H)·R_hᵀ for every batch row at once, into hr's h block */
        float *hh = hr + B * s->n1;          /* B × H, after the z/r products */
        rnn_gemm (s, cs, H, (gint) B, (gint) H, rp2_all + d * s->rp2_dir, (gint) H, hh, pack,
            gemm_scr, step_slices);
        for (gint64 b = 0; b < B; b++) {
          gint64 t = step_time (lens, b, step, reverse);
          if (t < 0)
            continue;
          const float *xg = xw + (b * T + t) * rows;
          float *hb = hs + b * H;
          const float *z = rh + b * H;
          for (gint64 j = 0; j < H; j++) {
            float pre = xg[2 * H + j] + hh[b * H + j] + (bd ? bd[2 * H + j] : 0.0f);
            float ht = act (s->act[1], clipf (s, pre));
            hb[j] = (1.0f - z[j]) * ht + z[j] * hb[j];
          }
        }
      }
      if (y)
        for (gint64 b = 0; b < B; b++) {
          gint64 t = step_time (lens, b, step, reverse);
          if (t < 0)
            continue;
          memcpy (y + ((b * D + d) * T + t) * H, hs + b * H, H * sizeof (float));
        }
    }
    for (gint64 b = 0; b < B; b++) {
      if (ho)
        memcpy (ho + (b * D + d) * H, hs + b * H, H * sizeof (float));
      if (co)
        memcpy (co + (b * D + d) * H, cs + b * H, H * sizeof (float));
    }
  }
  return TRUE;
}

const M2iOpKernel ir_kernel_lstm_sequence = {
  "LSTMSequence", "opset1 opset5", lstm_seq_infer, rnn_execute, rnn_state_free
};
const M2iOpKernel ir_kernel_gru_sequence = {
  "GRUSequence", "opset5", gru_seq_infer, rnn_execute, rnn_state_free
};
const M2iOpKernel ir_kernel_rnn_sequence = {
  "RNNSequence", "opset5", rnn_seq_infer, rnn_execute, rnn_state_free
};
const M2iOpKernel ir_kernel_lstm_cell = {
  "LSTMCell", "opset1 opset4", lstm_cell_infer, rnn_execute, rnn_state_free
};
const M2iOpKernel ir_kernel_gru_cell = {
  "GRUCell", "opset3", gru_cell_infer, rnn_execute, rnn_state_free
};
const M2iOpKernel ir_kernel_rnn_cell = {
  "RNNCell", "opset3", rnn_cell_infer, rnn_execute, rnn_state_free
};
