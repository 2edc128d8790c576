/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ir-infer.c — infer requests: every buffer of an inference allocated at
 * creation, then the compiled steps run in order with no allocation. */
#include "ir-compile.h"
#include "kernels/kernels-private.h"
#include <base/m2i-align.h>
#include <base/m2i-error.h>

#include <string.h>
#include <time.h>

#define ALIGN 64

/* A run-time-shaped value's buffer in one request. */
typedef struct {
  gpointer raw;                  /* g_try_malloc'ed; data is raw 64-byte aligned */
  guint8 *data;
  gsize capacity;
  M2iShape shape;                /* of the last inference */
} DynBuf;

/* What a re-inferred step was last inferred with. */
typedef struct {
  gboolean stale;                /* infer before the next execute() */
  M2iShape *in_shapes;           /* n_inputs */
  guint8 *in_ints;               /* n_inputs × CM_SMALL_INT_BYTES: small integer inputs */
} DynStep;

/* With several threads, an inference runs its layers split over the team
 * or runs whole on the calling thread, whichever has been faster, timed
 * as the request runs (m2i_ir_infer_request_infer). What splitting
 * costs — the hand-over, and more, the layers' data moving between the
 * two cores' caches (a core writing lines the other one read: 7.6 GB/s
 * against 40 where it alone held them, measured on this machine's virtual CPUs) — depends on
 * where the system put the threads, and changes while a program runs
 * (the round trip between the two threads measured 80 ns, then 350 ns, on
 * the same virtual machine minutes apart): gaze-estimation-adas-0002 ran
 * 0.43 ms split on one placement; on the other, 0.89 split and 0.71
 * alone. Layers timed one by one missed that: the next layer pays for the
 * data a split one left in both caches. */
typedef struct {
  guint32 runs;                  /* inferences run with the team */
  gint64 ns[2];                  /* smoothed time alone [0] and split [1]; 0: unknown */
  guint32 explore_at;            /* the run that times the slower way again */
  guint32 interval;              /* runs between those times */
} SplitChoice;

/* The slower way is timed again after this many runs, and the interval
 * doubles, up to SPLIT_EXPLORE_MAX, while it stays the slower one (a way
 * 1.3× slower then costs 2 %, then 0.5 %, of the time; a change of
 * placement is noticed within a hundred inferences). */
#define SPLIT_EXPLORE 16
#define SPLIT_EXPLORE_MAX 64
/* Split runs come SPLIT_PAIR in a row after runs alone, and only the
 * last is timed: the first warms up the caches and the pool's worker
 * (asleep after inferences run alone, woken late for the first split
 * one). Timing alone again takes one run (each costs what splitting
 * gains). The warm-up is two turns of SPLIT_PAIR runs each way. */
#define SPLIT_PAIR 2
#define SPLIT_WARMUP (4 * SPLIT_PAIR)

/* m2i_op_context_set_output_shape() during an inference. */
typedef struct {
  CmDynHost host;
  M2iIrInferRequest *req;
  gint step;
} ReqHost;

struct _M2iIrInferRequest {
  M2iIrCompiledModel *cm;
  gpointer arena_raw, scratch_raw;
  guint8 *arena;                 /* 64-byte aligned */
  guint8 *scratch;
  M2iOpContext *ctxs;            /* one per step */
  M2iTensor *tensors;            /* the contexts' inputs and outputs */
  M2iTensor *inputs;             /* one per Parameter */
  M2iTensor *outputs;            /* one per Result */
  gboolean profiling;
  M2iIrLayerProfile *profile;    /* one per step */
  M2iKTeam *team;                /* the compiled model's threads, or NULL for one */
  SplitChoice split;             /* with a team: how inferences run fastest */
  gboolean alternate;            /* M2I_IR_SPLIT=layers: this inference alternates */
  guint32 alternate_runs;        /* inferences run so */
  DynBuf *dyn;                   /* cm->n_dyn */
  DynStep *dyn_steps;            /* one per step (used by re-inferred steps) */
  gpointer dyn_scratch_raw;      /* scratch of the re-inferred steps, grown */
  gsize dyn_scratch_bytes;
  ReqHost host;
  /* The inference in progress, for run_steps() inside the team. */
  GError **error;
  gboolean ok;
};

static gpointer
value_data (M2iIrInferRequest *req, gint value)
{
  const CmValue *v = &req->cm->values[value];
  if (v->dyn >= 0)
    return req->dyn[v->dyn].data;
  if (v->is_const || v->group < 0)
    return v->t.data;
  return req->arena + req->cm->groups[v->group].offset + v->offset;
}

/* ---- run-time shapes ------------------------------------------------------ */

/* Makes @b hold at least @bytes (64-byte aligned); allocates only when it
 * grows. */
static gboolean
dyn_reserve (M2iIrInferRequest *req, DynBuf *b, const M2iIrNode *n, gsize bytes, GError **error)
{
  if (bytes <= b->capacity && b->raw)
    return TRUE;
  if (bytes > req->cm->max_dynamic_bytes) {
    m2i_ir_node_set_error (error, M2I_ERROR_FAILED, n, "an output shaped at run time needs %"
        G_GSIZE_FORMAT " bytes, more than the %" G_GSIZE_FORMAT " one may take "
        "(M2iIrCompileOptions.max_dynamic_bytes)", bytes, req->cm->max_dynamic_bytes);
    return FALSE;
  }
  /* grow by half again, so a shape creeping up reallocates rarely */
  gsize want = MAX (bytes, MIN (b->capacity + b->capacity / 2, req->cm->max_dynamic_bytes));
  gpointer raw = g_try_malloc0 (want + ALIGN);
  if (!raw) {
    m2i_ir_node_set_error (error, M2I_ERROR_FAILED, n, "cannot allocate %" G_GSIZE_FORMAT
        " bytes for an output shaped at run time", want);
    return FALSE;
  }
  g_free (b->raw);
  b->raw = raw;
  b->data = m2i_align_pointer (raw, ALIGN);
  b->capacity = want;
  return TRUE;
}

static gboolean
host_grow (CmDynHost *h, M2iOpContext *ctx, gint p, gsize bytes, gpointer *data, GError **error)
{
  ReqHost *rh = (ReqHost *) h;
  const CmStep *s = &g_array_index (rh->req->cm->steps, CmStep, rh->step);
  DynBuf *b = &rh->req->dyn[rh->req->cm->values[s->out_values[p]].dyn];
  if (!dyn_reserve (rh->req, b, ctx->node, bytes, error))
    return FALSE;
  *data = b->data;
  return TRUE;
}

/* Buffers for the run-time-shaped values, as large as the compile-time
 * shapes (bounds) say up to 1 MiB each; larger ones come with the first
 * inference that needs them. */
static gboolean
dyn_new (M2iIrInferRequest *req, GError **error)
{
  const M2iIrCompiledModel *cm = req->cm;
  req->dyn = g_new0 (DynBuf, MAX (cm->n_dyn, 1));
  req->dyn_steps = g_new0 (DynStep, MAX (cm->steps->len, 1));
  req->host.host.grow = host_grow;
  req->host.req = req;
  for (gint i = 0; i < cm->n_dyn; i++) {
    const CmValue *v = &cm->values[cm->dyn_values[i]];
    gsize bytes = m2i_shape_is_static (&v->t.shape) ? m2i_tensor_nbytes (&v->t) : 0;
    req->dyn[i].shape = v->t.shape;
    if (!dyn_reserve (req, &req->dyn[i], NULL, MIN (bytes, (gsize) 1 << 20), error))
      return FALSE;
  }
  return TRUE;
}

/* Whether re-inferred step @i must infer again: its inputs' shapes, or
 * the values of its small integer inputs, changed since it last did. */
static gboolean
inputs_changed (M2iIrInferRequest *req, gint i)
{
  const CmStep *s = &g_array_index (req->cm->steps, CmStep, i);
  const M2iOpContext *ctx = &req->ctxs[i];
  DynStep *d = &req->dyn_steps[i];
  if (d->stale)
    return TRUE;
  for (gint k = 0; k < ctx->n_inputs; k++) {
    const M2iTensor *t = &ctx->inputs[k];
    if (!m2i_shape_equal (&t->shape, &d->in_shapes[k]))
      return TRUE;
    const CmValue *v = &req->cm->values[s->in_values[k]];
    if (!v->is_const && ir_value_visible_to_infer (v) &&
        m2i_tensor_nbytes (t) <= CM_SMALL_INT_BYTES &&
        memcmp (d->in_ints + (gsize) k * CM_SMALL_INT_BYTES, t->data, m2i_tensor_nbytes (t)))
      return TRUE;
  }
  return FALSE;
}

/* Infers re-inferred step @i again with its current inputs. */
static gboolean
reinfer (M2iIrInferRequest *req, gint i, GError **error)
{
  const M2iIrCompiledModel *cm = req->cm;
  const CmStep *s = &g_array_index (cm->steps, CmStep, i);
  M2iOpContext *ctx = &req->ctxs[i];
  DynStep *d = &req->dyn_steps[i];
  if (ctx->state && s->kernel->free_state)
    s->kernel->free_state (ctx->state);
  ctx->state = NULL;
  ctx->scratch_bytes = 0;
  ctx->dynamic_outputs = 0;
  gpointer saved[ctx->n_inputs + 1];
  for (gint k = 0; k < ctx->n_inputs; k++) {
    const CmValue *v = &cm->values[s->in_values[k]];
    saved[k] = ctx->inputs[k].data;
    /* infer() sees the data of constants and of small integer values only,
     * the values whose changes make it infer again */
    if (!v->is_const && !(ir_value_visible_to_infer (v) &&
        m2i_tensor_nbytes (&ctx->inputs[k]) <= CM_SMALL_INT_BYTES))
      ctx->inputs[k].data = NULL;
  }
  for (gint p = 0; p < ctx->n_outputs; p++)
    ctx->outputs[p].type = M2I_ET_UNDEFINED, ctx->outputs[p].shape.rank = 0;
  gboolean ok = s->kernel->infer (ctx, error);
  if (!ok && error && !*error)
    m2i_ir_node_set_error (error, M2I_ERROR_FAILED, ctx->node, "the kernel rejected the layer");
  if (ok)
    ok = ir_check_outputs (ctx->node, ctx, ~(guint64) 0, error);
  for (gint p = 0; ok && p < ctx->n_outputs; p++) {
    const CmValue *v = &cm->values[s->out_values[p]];
    if (v->t.type != M2I_ET_UNDEFINED && v->t.type != ctx->outputs[p].type) {
      m2i_ir_node_set_error (error, M2I_ERROR_FAILED, ctx->node, "output %d is %s at run "
          "time but was %s when compiled", p, m2i_element_type_to_string (ctx->outputs[p].type),
          m2i_element_type_to_string (v->t.type));
      ok = FALSE;
    }
  }
  for (gint k = 0; k < ctx->n_inputs; k++) {
    ctx->inputs[k].data = saved[k];
    d->in_shapes[k] = ctx->inputs[k].shape;
    gsize nb = m2i_tensor_nbytes (&ctx->inputs[k]);
    if (saved[k] && nb <= CM_SMALL_INT_BYTES)
      memcpy (d->in_ints + (gsize) k * CM_SMALL_INT_BYTES, saved[k], nb);
  }
  if (!ok) {
    const M2iIrNode *n = ctx->node;
    if (n->line > 0)
      g_prefix_error (error, "%s:%d: ", cm->model->xml_path, n->line);
    d->stale = TRUE;
    return FALSE;
  }
  d->stale = FALSE;
  if (ctx->scratch_bytes > req->dyn_scratch_bytes) {
    gpointer raw = g_try_malloc (ctx->scratch_bytes + ALIGN);
    if (!raw) {
      m2i_ir_node_set_error (error, M2I_ERROR_FAILED, ctx->node, "cannot allocate %"
          G_GSIZE_FORMAT " bytes of scratch", ctx->scratch_bytes);
      return FALSE;
    }
    g_free (req->dyn_scratch_raw);
    req->dyn_scratch_raw = raw;
    req->dyn_scratch_bytes = ctx->scratch_bytes;
  }
  return TRUE;
}

/* Before a step with run-time shapes runs: inputs from their buffers,
 * inferred again when they changed, outputs given memory. */
static gboolean
prepare_dynamic (M2iIrInferRequest *req, gint i, GError **error)
{
  const M2iIrCompiledModel *cm = req->cm;
  const CmStep *s = &g_array_index (cm->steps, CmStep, i);
  M2iOpContext *ctx = &req->ctxs[i];
  for (gint k = 0; k < ctx->n_inputs; k++) {
    const CmValue *v = &cm->values[s->in_values[k]];
    if (v->dyn >= 0) {
      ctx->inputs[k].shape = req->dyn[v->dyn].shape;
      ctx->inputs[k].data = req->dyn[v->dyn].data;
    }
  }
  if (s->reinfer) {
    if (inputs_changed (req, i) && !reinfer (req, i, error))
      return FALSE;
    ctx->scratch = ctx->scratch_bytes ? m2i_align_pointer (req->dyn_scratch_raw, ALIGN) : NULL;
  }
  req->host.host.set = 0;
  req->host.step = i;
  for (gint p = 0; p < ctx->n_outputs; p++) {
    DynBuf *b = &req->dyn[cm->values[s->out_values[p]].dyn];
    if (p < 32 && (ctx->dynamic_outputs >> p) & 1) {
      req->host.host.bounds[p] = ctx->outputs[p].shape;
    } else if (!dyn_reserve (req, b, ctx->node, m2i_tensor_nbytes (&ctx->outputs[p]), error))
      return FALSE;
    ctx->outputs[p].data = b->data;
  }
  ctx->runtime = ctx->dynamic_outputs ? &req->host.host : NULL;
  return TRUE;
}

/* After it ran: the shapes its outputs now have. */
static gboolean
finish_dynamic (M2iIrInferRequest *req, gint i, GError **error)
{
  const M2iIrCompiledModel *cm = req->cm;
  const CmStep *s = &g_array_index (cm->steps, CmStep, i);
  M2iOpContext *ctx = &req->ctxs[i];
  if ((req->host.host.set & ctx->dynamic_outputs) != ctx->dynamic_outputs) {
    m2i_ir_node_set_error (error, M2I_ERROR_FAILED, ctx->node, "the kernel declared "
        "run-time shapes but set none (m2i_op_context_set_output_shape)");
    return FALSE;
  }
  for (gint p = 0; p < ctx->n_outputs; p++) {
    req->dyn[cm->values[s->out_values[p]].dyn].shape = ctx->outputs[p].shape;
    /* the next inference starts from the bounds again */
    if (p < 32 && (ctx->dynamic_outputs >> p) & 1)
      ctx->outputs[p].shape = req->host.host.bounds[p];
  }
  ctx->runtime = NULL;
  return TRUE;
}

gboolean
m2i_op_context_set_output_shape (M2iOpContext *ctx, gint p, const M2iShape *shape,
    GError **error)
{
  CmDynHost *h = ctx->runtime;
  if (p < 0 || p >= ctx->n_outputs || p >= 32 || !((ctx->dynamic_outputs >> p) & 1) || !h) {
    m2i_ir_node_set_error (error, M2I_ERROR_FAILED, ctx->node, "output %d was not declared "
        "dynamic by infer() (M2iOpContext.dynamic_outputs)", p);
    return FALSE;
  }
  const M2iShape *bound = &h->bounds[p];
  gboolean ok = shape->rank == bound->rank;
  for (gint d = 0; ok && d < shape->rank; d++)
    ok = shape->dims[d] >= 0 && shape->dims[d] <= bound->dims[d];
  if (!ok) {
    g_autofree gchar *s1 = m2i_shape_to_string (shape);
    g_autofree gchar *s2 = m2i_shape_to_string (bound);
    m2i_ir_node_set_error (error, M2I_ERROR_FAILED, ctx->node, "output %d: run-time shape %s "
        "exceeds the bound %s its infer() gave", p, s1, s2);
    return FALSE;
  }
  M2iTensor t = { ctx->outputs[p].type, *shape, NULL };
  gpointer data;
  if (!h->grow (h, ctx, p, m2i_tensor_nbytes (&t), &data, error))
    return FALSE;
  ctx->outputs[p].shape = *shape;
  ctx->outputs[p].data = data;
  h->set |= 1u << p;
  return TRUE;
}

/* ---- requests ------------------------------------------------------------ */

M2iIrInferRequest *
m2i_ir_infer_request_new (M2iIrCompiledModel *cm, GError **error)
{
  g_return_val_if_fail (cm != NULL, NULL);
  M2iIrInferRequest *req = g_new0 (M2iIrInferRequest, 1);
  req->cm = m2i_ir_compiled_model_ref (cm);
  req->arena_raw = g_try_malloc0 (cm->arena_bytes + ALIGN);
  req->scratch_raw = cm->scratch_bytes ? g_try_malloc (cm->scratch_bytes + ALIGN) : NULL;
  if (!req->arena_raw || (cm->scratch_bytes && !req->scratch_raw)) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_FAILED, "cannot allocate the %" G_GSIZE_FORMAT
        " bytes an inference of model '%s' needs", cm->arena_bytes + cm->scratch_bytes,
        m2i_ir_model_get_name (cm->model));
    m2i_ir_infer_request_free (req);
    return NULL;
  }
  req->team = cm->n_threads > 1 ? ir_k_team_new (cm->n_threads) : NULL;
  /* each thread's slices keep their temporaries in a place of their own
   * (without it, they use the steps' scratch, as at one thread) */
  if (req->team)
    ir_k_team_set_slice_scratch (req->team, cm->scratch_bytes);
  if (!dyn_new (req, error)) {
    m2i_ir_infer_request_free (req);
    return NULL;
  }
  req->arena = m2i_align_pointer (req->arena_raw, ALIGN);
  req->scratch = req->scratch_raw ? m2i_align_pointer (req->scratch_raw, ALIGN) : NULL;
  gint n_steps = cm->steps->len, n_tensors = 0;
  for (gint i = 0; i < n_steps; i++) {
    const CmStep *s = &g_array_index (cm->steps, CmStep, i);
    n_tensors += s->ctx.n_inputs + s->ctx.n_outputs;
  }
  req->ctxs = g_new0 (M2iOpContext, MAX (n_steps, 1));
  req->profile = g_new0 (M2iIrLayerProfile, MAX (n_steps, 1));
  req->tensors = g_new0 (M2iTensor, MAX (n_tensors, 1));
  M2iTensor *t = req->tensors;
  for (gint i = 0; i < n_steps; i++) {
    const CmStep *s = &g_array_index (cm->steps, CmStep, i);
    M2iOpContext *ctx = &req->ctxs[i];
    *ctx = s->ctx;
    ctx->inputs = t;
    t += s->ctx.n_inputs;
    ctx->outputs = t;
    t += s->ctx.n_outputs;
    for (gint k = 0; k < ctx->n_inputs; k++) {
      ctx->inputs[k] = s->ctx.inputs[k];
      ctx->inputs[k].data = value_data (req, s->in_values[k]);
    }
    for (gint k = 0; k < ctx->n_outputs; k++) {
      ctx->outputs[k] = s->ctx.outputs[k];
      ctx->outputs[k].data = value_data (req, s->out_values[k]);
    }
    ctx->scratch = s->ctx.scratch_bytes ? req->scratch : NULL;
    req->profile[i].node = s->ctx.node;
    if (s->reinfer) {
      /* inferred again by this request (its own state) before it first runs */
      ctx->state = NULL;
      req->dyn_steps[i].stale = TRUE;
      req->dyn_steps[i].in_shapes = g_new0 (M2iShape, MAX (ctx->n_inputs, 1));
      req->dyn_steps[i].in_ints = g_malloc0 ((gsize) MAX (ctx->n_inputs, 1) * CM_SMALL_INT_BYTES);
    }
  }
  gint n_in = cm->model->parameters->len, n_out = cm->model->results->len;
  req->inputs = g_new0 (M2iTensor, MAX (n_in, 1));
  req->outputs = g_new0 (M2iTensor, MAX (n_out, 1));
  for (gint i = 0; i < n_in; i++) {
    req->inputs[i] = cm->values[cm->input_values[i]].t;
    req->inputs[i].data = value_data (req, cm->input_values[i]);
  }
  for (gint i = 0; i < n_out; i++) {
    req->outputs[i] = cm->values[cm->output_values[i]].t;
    req->outputs[i].data = value_data (req, cm->output_values[i]);
  }
  return req;
}

void
m2i_ir_infer_request_free (M2iIrInferRequest *req)
{
  if (!req)
    return;
  g_free (req->arena_raw);
  g_free (req->scratch_raw);
  for (guint i = 0; req->ctxs && i < req->cm->steps->len; i++) {
    const CmStep *s = &g_array_index (req->cm->steps, CmStep, i);
    if (s->reinfer && req->ctxs[i].state && s->kernel->free_state)
      s->kernel->free_state (req->ctxs[i].state);
  }
  for (guint i = 0; req->dyn_steps && i < req->cm->steps->len; i++) {
    g_free (req->dyn_steps[i].in_shapes);
    g_free (req->dyn_steps[i].in_ints);
  }
  g_free (req->dyn_steps);
  for (gint i = 0; req->dyn && i < req->cm->n_dyn; i++)
    g_free (req->dyn[i].raw);
  g_free (req->dyn);
  g_free (req->dyn_scratch_raw);
  g_free (req->ctxs);
  g_free (req->profile);
  g_free (req->tensors);
  g_free (req->inputs);
  g_free (req->outputs);
  ir_k_team_free (req->team);
  m2i_ir_compiled_model_unref (req->cm);
  g_free (req);
}

M2iTensor *
m2i_ir_infer_request_get_input (M2iIrInferRequest *req, gint i)
{
  return i >= 0 && (guint) i < req->cm->model->parameters->len ? &req->inputs[i] : NULL;
}

gboolean
m2i_ir_infer_request_set_input (M2iIrInferRequest *req, gint i, const M2iTensor *t,
    GError **error)
{
  M2iTensor *in = m2i_ir_infer_request_get_input (req, i);
  if (!in) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "input %d does not exist (the model has %d)", i, m2i_ir_model_get_n_inputs (req->cm->model));
    return FALSE;
  }
  const M2iIrIoInfo *info = m2i_ir_model_get_input (req->cm->model, i);
  if (!m2i_shape_equal (&t->shape, &in->shape)) {
    g_autofree gchar *s1 = m2i_shape_to_string (&t->shape);
    g_autofree gchar *s2 = m2i_shape_to_string (&in->shape);
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "input '%s' has shape %s, the tensor given has %s", info->name, s2, s1);
    return FALSE;
  }
  if (t->type != in->type && t->type != info->type) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "input '%s' takes %s data, the tensor given is %s", info->name,
        m2i_element_type_to_string (info->type), m2i_element_type_to_string (t->type));
    return FALSE;
  }
  ir_convert_elements (t->data, t->type, in->data, in->type, m2i_shape_numel (&in->shape));
  return TRUE;
}

static guint64
now_ns (clockid_t clock)
{
  struct timespec ts;
  clock_gettime (clock, &ts);
  return (guint64) ts.tv_sec * 1000000000u + ts.tv_nsec;
}

/* Runs step @i (its shapes first, when they are known at run time). */
static gboolean
run_one (M2iIrInferRequest *req, gint i, GError **error)
{
  const CmStep *s = &g_array_index (req->cm->steps, CmStep, i);
  M2iOpContext *ctx = &req->ctxs[i];
  gboolean dynamic = s->reinfer || ctx->dynamic_outputs;
  if (dynamic && !prepare_dynamic (req, i, error))
    return FALSE;
  if (!s->kernel->execute (ctx, error)) {
    if (error && !*error)
      m2i_ir_node_set_error (error, M2I_ERROR_FAILED, ctx->node, "the kernel failed");
    ctx->runtime = NULL;
    return FALSE;
  }
  return !dynamic || finish_dynamic (req, i, error);
}

/* The faster way so far; split while the time alone is unknown. */
static gint
split_best (const SplitChoice *c)
{
  return c->ns[0] && (!c->ns[1] || c->ns[0] <= c->ns[1]) ? 0 : 1;
}

/* Runs that time the slower way again from explore_at. */
static guint32
explore_runs (const SplitChoice *c)
{
  return split_best (c) == 0 ? SPLIT_PAIR : 1;
}

/* Whether the inference runs split (1) or alone (0) this time: each way
 * in turn for the warm-up runs, then the faster one, except from
 * explore_at, which times the other again. */
static gint
split_way (SplitChoice *c)
{
  guint32 r = c->runs++;
  if (r < SPLIT_WARMUP)
    return r / SPLIT_PAIR % 2 == 0;
  gint best = split_best (c);
  return r >= c->explore_at && r < c->explore_at + explore_runs (c) ? 1 - best : best;
}

/* Whether run @r (counted from 0) is timed: the last of each turn. */
static gboolean
split_timed (const SplitChoice *c, guint32 r)
{
  if (r < SPLIT_WARMUP)
    return r >= SPLIT_WARMUP / 2 && r % SPLIT_PAIR == SPLIT_PAIR - 1;
  return r < c->explore_at || r >= c->explore_at + explore_runs (c) - 1;
}

/* M2I_IR_SPLIT, read once, to measure each way: "alone" runs every
 * inference alone, "split" every one split, "layers" (2) every one split
 * but every other layer alone, alternating (the profile's alone_ns);
 * -1 (unset): as measured. */
static gint
split_forced (void)
{
  static gint forced = -2;
  gint f = g_atomic_int_get (&forced);
  if (f == -2) {
    const char *e = g_getenv ("M2I_IR_SPLIT");
    f = !g_strcmp0 (e, "split") ? 1 : !g_strcmp0 (e, "alone") ? 0 :
        !g_strcmp0 (e, "layers") ? 2 : -1;
    g_atomic_int_set (&forced, f);
  }
  return f;
}

/* Smooths @ns into the estimate of way @way; a run far longer than the
 * estimate (a thread was descheduled) counts as twice it. Then sets when
 * the slower way is timed next. */
static void
split_note (SplitChoice *c, gint way, gint64 ns)
{
  guint32 r = c->runs - 1;
  if (!split_timed (c, r))
    return;
  gint best = split_best (c);
  guint32 last = c->explore_at + explore_runs (c) - 1;
  gint64 *e = &c->ns[way];
  /* a faster run is the new estimate (noise only ever makes a run
   * slower: one descheduled run timed in the warm-up kept gaze-estimation
   * alone for hundreds of runs when it counted for half), a slower one
   * counts for a quarter */
  *e = !*e || ns < *e ? MAX (ns, 1) : (3 * *e + MIN (ns, 2 * *e)) / 4;
  if (r + 1 == SPLIT_WARMUP || (r >= SPLIT_WARMUP && r == last)) {
    /* longer while the slower way stays slower */
    gboolean same = c->interval && split_best (c) == best;
    c->interval = same ? MIN (2 * c->interval, SPLIT_EXPLORE_MAX) : SPLIT_EXPLORE;
    c->explore_at = r + 1 + c->interval;
  }
}

static void
run_steps (gpointer data)
{
  M2iIrInferRequest *req = data;
  const M2iIrCompiledModel *cm = req->cm;
  for (guint i = 0; i < cm->steps->len; i++) {
    guint64 t0 = 0, c0 = 0;
    gboolean alone = req->alternate && ((i + req->alternate_runs) & 1);
    if (req->alternate)
      ir_k_team_set_alone (alone);
    if (req->profiling) {
      t0 = now_ns (CLOCK_MONOTONIC);
      c0 = now_ns (CLOCK_THREAD_CPUTIME_ID);
    }
    if (!run_one (req, i, req->error)) {
      req->ok = FALSE;
      break;
    }
    if (req->profiling) {
      guint64 ns = now_ns (CLOCK_MONOTONIC) - t0;
      req->profile[i].cpu_ns += now_ns (CLOCK_THREAD_CPUTIME_ID) - c0;
      if (alone) {
        req->profile[i].alone_ns += ns;
        req->profile[i].alone_count++;
      } else {
        req->profile[i].total_ns += ns;
        req->profile[i].count++;
      }
    }
  }
  if (req->alternate) {
    ir_k_team_set_alone (FALSE);
    req->alternate_runs++;
  }
}

gboolean
m2i_ir_infer_request_infer (M2iIrInferRequest *req, GError **error)
{
  /* The layers run on this thread; with several threads, their slices are
   * shared with the team's helpers, held for the whole inference — or,
   * where that has been slower (split_way), the inference runs alone and
   * leaves the other cores free. Inside another team's run (a model run
   * from a kernel's slice) the loops run as that run's do. */
  req->error = error;
  req->ok = TRUE;
  req->alternate = FALSE;
  SplitChoice *c = req->team && !ir_k_team_active () && !ir_k_team_inline () ?
      &req->split : NULL;
  if (c) {
    gint forced = split_forced ();
    gint way = forced >= 0 ? MIN (forced, 1) : split_way (c);
    req->alternate = forced == 2;
    guint64 start = now_ns (CLOCK_MONOTONIC);
    if (way)
      ir_k_team_run (req->team, run_steps, req);
    else
      ir_k_team_run_alone (req->team, run_steps, req);
    if (req->ok)
      split_note (c, way, (gint64) (now_ns (CLOCK_MONOTONIC) - start));
  } else {
    ir_k_team_run (req->team, run_steps, req);
  }
  req->error = NULL;
  /* outputs shaped at run time: this inference's shape and buffer */
  for (guint i = 0; req->cm->n_dyn && i < req->cm->model->results->len; i++) {
    const CmValue *v = &req->cm->values[req->cm->output_values[i]];
    if (v->dyn >= 0) {
      req->outputs[i].shape = req->dyn[v->dyn].shape;
      req->outputs[i].data = req->dyn[v->dyn].data;
    }
  }
  return req->ok;
}

gboolean
ir_infer_request_run_step (M2iIrInferRequest *req, gint i, GError **error)
{
  const M2iIrCompiledModel *cm = req->cm;
  if (i < 0 || (guint) i >= cm->steps->len) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, "step %d does not exist", i);
    return FALSE;
  }
  return run_one (req, i, error);
}

void
m2i_ir_infer_request_set_profiling (M2iIrInferRequest *req, gboolean on)
{
  req->profiling = on;
  for (guint i = 0; i < req->cm->steps->len; i++)
    req->profile[i].total_ns = req->profile[i].count = req->profile[i].cpu_ns =
        req->profile[i].alone_ns = req->profile[i].alone_count = 0;
}

const M2iIrLayerProfile *
m2i_ir_infer_request_get_profile (M2iIrInferRequest *req, gint *n_out)
{
  *n_out = req->cm->steps->len;
  return req->profile;
}

const M2iTensor *
m2i_ir_infer_request_get_output (M2iIrInferRequest *req, gint i)
{
  return i >= 0 && (guint) i < req->cm->model->results->len ? &req->outputs[i] : NULL;
}
