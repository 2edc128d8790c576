/* ir-infer.c — infer requests: every buffer of an inference allocated at
 * creation, then the compiled steps run in order with no allocation. */
#include "ir-compile.h"
#include "kernels/kernels-private.h"
#include <base/m2i-align.h>
#include <base/m2i-error.h>

#include <string.h>
#include <time.h>

#define ALIGN 64

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
  /* The inference in progress, for run_steps() inside the team. */
  GError **error;
  gboolean ok;
};

static gpointer
value_data (M2iIrInferRequest *req, gint value)
{
  const CmValue *v = &req->cm->values[value];
  if (v->is_const || v->group < 0)
    return v->t.data;
  return req->arena + req->cm->groups[v->group].offset + v->offset;
}

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
now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (guint64) ts.tv_sec * 1000000000u + ts.tv_nsec;
}

static void
run_steps (gpointer data)
{
  M2iIrInferRequest *req = data;
  const M2iIrCompiledModel *cm = req->cm;
  for (guint i = 0; i < cm->steps->len; i++) {
    const CmStep *s = &g_array_index (cm->steps, CmStep, i);
    M2iOpContext *ctx = &req->ctxs[i];
    guint64 t0 = req->profiling ? now_ns () : 0;
    if (!s->kernel->execute (ctx, req->error)) {
      if (req->error && !*req->error)
        m2i_ir_node_set_error (req->error, M2I_ERROR_FAILED, ctx->node, "the kernel failed");
      req->ok = FALSE;
      return;
    }
    if (req->profiling) {
      req->profile[i].total_ns += now_ns () - t0;
      req->profile[i].count++;
    }
  }
}

gboolean
m2i_ir_infer_request_infer (M2iIrInferRequest *req, GError **error)
{
  /* The layers run on this thread; with several threads, their slices are
   * shared with the team's helpers, held for the whole inference. */
  req->error = error;
  req->ok = TRUE;
  ir_k_team_run (req->team, run_steps, req);
  req->error = NULL;
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
  const CmStep *s = &g_array_index (cm->steps, CmStep, i);
  return s->kernel->execute (&req->ctxs[i], error);
}

void
m2i_ir_infer_request_set_profiling (M2iIrInferRequest *req, gboolean on)
{
  req->profiling = on;
  for (guint i = 0; i < req->cm->steps->len; i++)
    req->profile[i].total_ns = req->profile[i].count = 0;
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
