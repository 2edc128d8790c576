/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* split-runner.c — running a plan: each piece in order on its engine, the
 * tensors between them in host buffers.
 *
 * Host buffers: model inputs (their declared type), the CPU runtime's own
 * output buffers for what CPU pieces make (f32 for float tensors), f32
 * buffers for what compute-engine pieces make, and the head's output as
 * the M2I block writes it (planar fp16 by default). A CPU piece's inputs
 * are copied (converting f16 to f32 where needed) into its infer request;
 * a compute-engine piece converts its inputs into its blocked layout
 * itself. Everything is allocated when the runner is made.
 *
 * What does not change between runs is the plan's, shared by all its
 * runners (several sessions on one model): the CPU pieces' compiled models
 * and the compute-engine pieces' programs (packed weights) are made by the
 * first runner and referenced by the others; a runner owns only what a run
 * writes (infer requests, engine arenas, host tensors).
 *
 * Fewer copies at the boundaries: a tensor whose data only one CPU piece
 * reads — a model input, or what a compute-engine piece writes — lives in
 * that piece's request input buffer (which the runtime leaves untouched),
 * so nothing is copied in; an engine output whose data nobody reads (a
 * tensor CPU pieces read only through ShapeOf) is not converted back.
 */
#include "split-private.h"
#include <base/m2i-error.h>
#include <m2i/m2i-device.h>

#include <string.h>

typedef struct {
  const SplitPiece *pc;
  gint index;
  gint *in_tensor, *out_tensor;    /* sub-model input / output → plan tensor */
  /* CPU */
  M2iIrCompiledModel *cm;
  M2iIrInferRequest *req;
  gboolean *shape_only;            /* per input: only ShapeOf reads it (no copy) */
  /* compute engine (the program is the plan's) */
  const SplitNpuProgram *prog;
  SplitNpuState *npu;
  const M2iTensor **in_ptrs;
  M2iTensor **out_ptrs;
  /* M2I head */
  M2iPlan *mplan, *frame_plan;
  M2iImage in_img, out_img, frame_geom;
  gint n_planes, plane_tensor[3];
  M2iSplitPieceStats stats;
} RPiece;

struct _M2iSplitRunner {
  M2iSplitPlan *plan;
  gint n_threads;
  gint n_pieces;
  RPiece *pieces;
  gint n_tensors;
  M2iTensor *values;           /* per plan tensor: the current host data */
  gpointer *owned;             /* per plan tensor: a buffer the runner owns, or NULL */
  M2iTensor *outputs;          /* per model output */
  gpointer *out_owned;
  gint head_piece;
  guint64 budget;              /* what max_memory still allows */
};

/* Takes @bytes from the runner's budget; FALSE with @error when they are
 * not there (nothing is allocated then). */
static gboolean
take (M2iSplitRunner *r, guint64 bytes, const char *what, GError **error)
{
  if (bytes <= r->budget) {
    r->budget -= bytes;
    return TRUE;
  }
  g_set_error (error, M2I_ERROR, M2I_ERROR_LIMIT, "%s needs %" G_GUINT64_FORMAT " bytes, but "
      "only %" G_GUINT64_FORMAT " of the memory limit are left (raise max_memory if the "
      "model really needs it)", what, bytes, r->budget);
  return FALSE;
}

/* A host buffer of @type and @shape for @t, within the budget. */
static gboolean
alloc_tensor (M2iSplitRunner *r, M2iTensor *t, gpointer *owned, M2iElementType type,
    const M2iShape *shape, const char *name, GError **error)
{
  t->type = type;
  t->shape = *shape;
  g_autofree gchar *what = g_strdup_printf ("tensor '%s'", name);
  if (!take (r, m2i_tensor_nbytes (t), what, error))
    return FALSE;
  *owned = t->data = g_malloc0 (MAX (m2i_tensor_nbytes (t), 1));
  return TRUE;
}

static gint
tensor_of (M2iSplitRunner *r, gint piece, const char *name, GError **error)
{
  gint t = m2i_split_plan_find_tensor (r->plan, name);
  if (t < 0)
    g_set_error (error, M2I_ERROR, M2I_ERROR_MALFORMED,
        "piece %d: its sub-model's '%s' is no tensor of the plan", piece, name);
  return t;
}

static gboolean
map_io (M2iSplitRunner *r, RPiece *rp, GError **error)
{
  M2iIrModel *m = rp->pc->model;
  gint ni = m2i_ir_model_get_n_inputs (m), no = m2i_ir_model_get_n_outputs (m);
  rp->in_tensor = g_new (gint, MAX (ni, 1));
  rp->out_tensor = g_new (gint, MAX (no, 1));
  for (gint i = 0; i < ni; i++)
    if ((rp->in_tensor[i] = tensor_of (r, rp->index, m2i_ir_model_get_input (m, i)->name, error)) < 0)
      return FALSE;
  for (gint j = 0; j < no; j++)
    if ((rp->out_tensor[j] = tensor_of (r, rp->index, m2i_ir_model_get_output (m, j)->name,
                error)) < 0)
      return FALSE;
  return TRUE;
}

/* The compiled model of CPU piece @rp: the plan's (compiled by its first
 * runner), or a private one for another thread count. A new reference. */
static M2iIrCompiledModel *
piece_compiled (M2iSplitRunner *r, RPiece *rp, GError **error)
{
  SplitPiece *pc = g_ptr_array_index (r->plan->pieces, rp->index);
  M2iIrCompileOptions opts = { .n_threads = r->n_threads, .max_memory = MAX (r->budget, 1) };
  g_mutex_lock (&r->plan->lock);
  if (!pc->cm && (pc->cm = m2i_ir_compile (pc->model, &opts, error)))
    pc->cm_threads = r->n_threads;
  M2iIrCompiledModel *cm = !pc->cm ? NULL : pc->cm_threads == r->n_threads ?
      m2i_ir_compiled_model_ref (pc->cm) : m2i_ir_compile (pc->model, &opts, error);
  g_mutex_unlock (&r->plan->lock);
  return cm;
}

static gboolean
prepare_cpu (M2iSplitRunner *r, RPiece *rp, GError **error)
{
  rp->cm = piece_compiled (r, rp, error);
  /* the compile checked against what is left; the request's buffers are taken */
  if (!rp->cm || !take (r, m2i_ir_compiled_model_get_request_bytes (rp->cm), "the CPU piece",
          error) || !(rp->req = m2i_ir_infer_request_new (rp->cm, error)))
    return FALSE;
  for (gint j = 0; j < m2i_ir_model_get_n_outputs (rp->pc->model); j++)
    r->values[rp->out_tensor[j]] = *m2i_ir_infer_request_get_output (rp->req, j);
  /* inputs read only for their shape (PriorBox sizes through ShapeOf,
   * folded at compile time) are not copied in */
  M2iIrModel *m = rp->pc->model;
  gint ni = m2i_ir_model_get_n_inputs (m);
  rp->shape_only = g_new (gboolean, MAX (ni, 1));
  for (gint i = 0; i < ni; i++) {
    gint param = m2i_ir_node_get_index (m2i_ir_model_get_input (m, i)->node);
    rp->shape_only[i] = TRUE;
    for (gint e = 0; e < m2i_ir_model_get_n_edges (m); e++) {
      gint from, to;
      m2i_ir_model_get_edge (m, e, &from, NULL, &to, NULL);
      if (from == param)
        rp->shape_only[i] &= !strcmp (m2i_ir_node_get_type (m2i_ir_model_get_node (m, to)), "ShapeOf");
    }
  }
  return TRUE;
}

/* The program of compute-engine piece @rp: the plan's, built by its first
 * runner. */
static const SplitNpuProgram *
piece_program (M2iSplitRunner *r, RPiece *rp, GError **error)
{
  SplitPiece *pc = g_ptr_array_index (r->plan->pieces, rp->index);
  g_mutex_lock (&r->plan->lock);
  if (!pc->prog) {
    SplitGridSeeds *seeds = split_plan_piece_seeds (r->plan, rp->index);
    pc->prog = split_npu_program_new (pc->model, pc->engine, seeds, MAX (r->budget, 1), error);
    g_hash_table_unref (seeds);
  }
  const SplitNpuProgram *prog = pc->prog;
  g_mutex_unlock (&r->plan->lock);
  return prog;
}

static gboolean
prepare_npu (M2iSplitRunner *r, RPiece *rp, GError **error)
{
  if (!(rp->prog = piece_program (r, rp, error))
      || !take (r, split_npu_program_arena_bytes (rp->prog), "the device program", error)
      || !(rp->npu = split_npu_state_new (rp->prog, r->n_threads, error)))
    return FALSE;
  gint ni = split_npu_program_n_inputs (rp->prog), no = split_npu_program_n_outputs (rp->prog);
  rp->in_ptrs = g_new (const M2iTensor *, MAX (ni, 1));
  rp->out_ptrs = g_new (M2iTensor *, MAX (no, 1));
  for (gint i = 0; i < ni; i++)
    rp->in_ptrs[i] = &r->values[rp->in_tensor[i]];
  for (gint j = 0; j < no; j++) {
    gint t = rp->out_tensor[j];
    const SplitTensor *st = g_ptr_array_index (r->plan->tensors, t);
    if (!alloc_tensor (r, &r->values[t], &r->owned[t], M2I_ET_F32, &st->shape, st->name, error))
      return FALSE;
    rp->out_ptrs[j] = &r->values[t];
  }
  return TRUE;
}

/* The pieces that read the data of tensor @t (CPU pieces reading it only
 * for its shape do not); *cpu_piece / *cpu_input receive the last CPU
 * reader and its input ordinal. */
static gint
data_readers (M2iSplitRunner *r, gint t, gint *cpu_piece, gint *cpu_input)
{
  const SplitTensor *st = g_ptr_array_index (r->plan->tensors, t);
  gint n = 0;
  for (guint k = 0; k < st->consumers->len; k++) {
    RPiece *rp = &r->pieces[g_array_index (st->consumers, gint, k)];
    gint ni = m2i_ir_model_get_n_inputs (rp->pc->model);
    for (gint i = 0; i < ni; i++) {
      if (rp->in_tensor[i] != t)
        continue;
      if (rp->pc->engine == M2I_SPLIT_ENGINE_CPU) {
        if (rp->shape_only[i])
          continue;
        *cpu_piece = rp->index;
        *cpu_input = i;
      }
      n++;
    }
  }
  /* the head reads its planes by tensor, not as sub-model inputs */
  for (gint p = 0; p < r->n_pieces; p++)
    for (gint k = 0; k < r->pieces[p].n_planes; k++)
      n += r->pieces[p].plane_tensor[k] == t;
  return n;
}

/* The boundary copies a plan does not need (see the top of the file). */
static void
link_buffers (M2iSplitRunner *r)
{
  for (gint t = 0; t < r->n_tensors; t++) {
    const SplitTensor *st = g_ptr_array_index (r->plan->tensors, t);
    gboolean model_output = st->attr == M2I_SPLIT_TENSOR_OUTPUT;
    gint cp = -1, ci = -1;
    gint n = data_readers (r, t, &cp, &ci);
    RPiece *prod = st->producer >= 0 ? &r->pieces[st->producer] : NULL;
    if (prod && prod->npu && n == 0 && !model_output)
      for (gint j = 0; j < m2i_ir_model_get_n_outputs (prod->pc->model); j++)
        if (prod->out_tensor[j] == t)
          split_npu_state_set_output_needed (prod->npu, j, FALSE);
    if (n != 1 || cp < 0 || model_output || !r->owned[t])
      continue;
    if (prod && !prod->prog)
      continue;                 /* the head's output: converted when copied */
    M2iTensor *dst = m2i_ir_infer_request_get_input (r->pieces[cp].req, ci);
    if (dst->type != r->values[t].type || !m2i_shape_equal (&dst->shape, &r->values[t].shape))
      continue;
    g_clear_pointer (&r->owned[t], g_free);
    r->values[t].data = dst->data;
  }
}

static gboolean
prepare_head (M2iSplitRunner *r, RPiece *rp, GError **error)
{
  SplitAnalysis *a = split_analyze (rp->pc->model, NULL, r->plan->m2i_profile, NULL,
      MAX (r->budget, 1), error);
  if (!a)
    return FALSE;
  gboolean ok = a->head_unit >= 0 && rp->pc->outputs->len == 1;
  if (!ok)
    g_set_error (error, M2I_ERROR, M2I_ERROR_UNSUPPORTED,
        "piece %d: no pre-processing head the M2I block runs", rp->index);
  SplitHeadInfo h = ok ? *(SplitHeadInfo *) a->head : (SplitHeadInfo) { 0 };
  for (gint p = 0; ok && p < h.n_planes; p++) {
    g_autofree gchar *name = split_tensor_name (m2i_ir_model_get_node (a->model, h.plane_node[p]), 0);
    ok = (rp->plane_tensor[p] = tensor_of (r, rp->index, name, error)) >= 0;
  }
  split_analysis_free (a);
  if (!ok)
    return FALSE;
  rp->n_planes = h.n_planes;
  gint t = g_array_index (rp->pc->outputs, gint, 0);
  const SplitTensor *st = g_ptr_array_index (r->plan->tensors, t);
  M2iDataType dt = m2i_format_dtype (h.out_format);
  M2iElementType et = dt == M2I_DTYPE_F16 ? M2I_ET_F16 : dt == M2I_DTYPE_F32 ? M2I_ET_F32 : M2I_ET_U8;
  if (!alloc_tensor (r, &r->values[t], &r->owned[t], et, &st->shape, st->name, error))
    return FALSE;
  if (!m2i_image_wrap (&rp->out_img, h.out_format, h.out_width, h.out_height, r->values[t].data,
          m2i_tensor_nbytes (&r->values[t]), 0, error) ||
      !m2i_image_init (&rp->in_img, h.in_format, h.in_width, h.in_height))
    return FALSE;
  M2iPlanOptions opts;
  m2i_plan_options_init (&opts);
  opts.profile = r->plan->m2i_profile;
  opts.n_threads = r->n_threads;
  rp->mplan = m2i_plan_new (&rp->in_img, &h.ops, &rp->out_img, &opts, error);
  if (!rp->mplan)
    return FALSE;
  r->head_piece = rp->index;
  return TRUE;
}

M2iSplitRunner *
m2i_split_runner_new (M2iSplitPlan *plan, const M2iSplitRunOptions *opts, GError **error)
{
  M2iSplitRunner *r = g_new0 (M2iSplitRunner, 1);
  r->plan = m2i_split_plan_ref (plan);
  r->n_threads = opts ? opts->n_threads : 0;
  r->n_pieces = plan->pieces->len;
  r->pieces = g_new0 (RPiece, MAX (r->n_pieces, 1));
  r->n_tensors = plan->tensors->len;
  r->values = g_new0 (M2iTensor, MAX (r->n_tensors, 1));
  r->owned = g_new0 (gpointer, MAX (r->n_tensors, 1));
  r->outputs = g_new0 (M2iTensor, MAX (plan->outputs->len, 1));
  r->out_owned = g_new0 (gpointer, MAX (plan->outputs->len, 1));
  r->head_piece = -1;
  r->budget = opts && opts->max_memory ? opts->max_memory : M2I_IR_DEFAULT_MAX_MEMORY;
  gboolean ok = TRUE;
  for (guint i = 0; i < plan->inputs->len && ok; i++) {
    gint t = g_array_index (plan->inputs, gint, i);
    const SplitTensor *st = g_ptr_array_index (plan->tensors, t);
    ok = alloc_tensor (r, &r->values[t], &r->owned[t], st->type, &st->shape, st->name, error);
  }
  for (gint p = 0; p < r->n_pieces && ok; p++) {
    RPiece *rp = &r->pieces[p];
    rp->pc = g_ptr_array_index (plan->pieces, p);
    rp->index = p;
    ok = map_io (r, rp, error);
    if (ok) {
      switch (rp->pc->engine) {
        case M2I_SPLIT_ENGINE_CPU: ok = prepare_cpu (r, rp, error); break;
        case M2I_SPLIT_ENGINE_M2I: ok = prepare_head (r, rp, error); break;
        default: ok = prepare_npu (r, rp, error); break;
      }
    }
    if (!ok)
      g_prefix_error (error, "piece %d (%s): ", p, m2i_split_engine_to_string (rp->pc->engine));
  }
  if (ok)
    link_buffers (r);
  for (guint i = 0; i < plan->outputs->len && ok; i++) {
    gint t = g_array_index (plan->outputs, gint, i);
    const SplitTensor *st = g_ptr_array_index (plan->tensors, t);
    if (r->values[t].type == M2I_ET_F16)
      ok = alloc_tensor (r, &r->outputs[i], &r->out_owned[i], M2I_ET_F32, &r->values[t].shape,
          st->name, error);
  }
  if (!ok) {
    m2i_split_runner_free (r);
    return NULL;
  }
  return r;
}

void
m2i_split_runner_free (M2iSplitRunner *r)
{
  if (!r)
    return;
  for (gint p = 0; p < r->n_pieces; p++) {
    RPiece *rp = &r->pieces[p];
    g_free (rp->in_tensor);
    g_free (rp->out_tensor);
    g_free (rp->shape_only);
    if (rp->req)
      m2i_ir_infer_request_free (rp->req);
    if (rp->cm)
      m2i_ir_compiled_model_unref (rp->cm);
    split_npu_state_free (rp->npu);
    g_free (rp->in_ptrs);
    g_free (rp->out_ptrs);
    m2i_plan_free (rp->mplan);
    m2i_plan_free (rp->frame_plan);
  }
  for (gint t = 0; t < r->n_tensors; t++)
    g_free (r->owned[t]);
  for (guint i = 0; i < r->plan->outputs->len; i++)
    g_free (r->out_owned[i]);
  g_free (r->pieces);
  g_free (r->values);
  g_free (r->owned);
  g_free (r->outputs);
  g_free (r->out_owned);
  m2i_split_plan_unref (r->plan);
  g_free (r);
}

M2iSplitPlan *
m2i_split_runner_get_plan (const M2iSplitRunner *r)
{
  return r->plan;
}

M2iTensor *
m2i_split_runner_get_input (M2iSplitRunner *r, gint i)
{
  gint t = m2i_split_plan_get_input (r->plan, i);
  return t >= 0 ? &r->values[t] : NULL;
}

gboolean
m2i_split_runner_set_input (M2iSplitRunner *r, gint i, const M2iTensor *t, GError **error)
{
  M2iTensor *dst = m2i_split_runner_get_input (r, i);
  if (!dst) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, "input %d does not exist", i);
    return FALSE;
  }
  if (!m2i_shape_equal (&t->shape, &dst->shape) || !t->data) {
    g_autofree gchar *a = m2i_shape_to_string (&t->shape);
    g_autofree gchar *b = m2i_shape_to_string (&dst->shape);
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "input %d: a tensor of shape %s where the model takes %s", i, a, b);
    return FALSE;
  }
  gsize n = m2i_shape_numel (&t->shape);
  if (t->type == dst->type)
    memcpy (dst->data, t->data, m2i_tensor_nbytes (t));
  else if (t->type == M2I_ET_F32 && dst->type == M2I_ET_F16)
    m2i_f32_to_f16_n (t->data, dst->data, n);
  else {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "input %d is %s; it takes %s data%s", i, m2i_element_type_to_string (dst->type),
        m2i_element_type_to_string (dst->type), dst->type == M2I_ET_F16 ? " or f32" : "");
    return FALSE;
  }
  return TRUE;
}

/* Copies host tensor @src into the request input @dst (same numel). */
static gboolean
copy_in (const M2iTensor *src, M2iTensor *dst, gint piece, GError **error)
{
  gsize n = m2i_shape_numel (&dst->shape);
  if ((gsize) m2i_shape_numel (&src->shape) != n || !src->data) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_FAILED, "piece %d: an input of the wrong size", piece);
    return FALSE;
  }
  if (src->data == dst->data)   /* written in place by its producer (link_buffers) */
    return TRUE;
  if (src->type == dst->type)
    memcpy (dst->data, src->data, m2i_tensor_nbytes (dst));
  else if (src->type == M2I_ET_F16 && dst->type == M2I_ET_F32)
    m2i_f16_to_f32_n (src->data, dst->data, n);
  else if (src->type == M2I_ET_F32 && dst->type == M2I_ET_F16)
    m2i_f32_to_f16_n (src->data, dst->data, n);
  else {
    g_set_error (error, M2I_ERROR, M2I_ERROR_FAILED, "piece %d: cannot convert %s into %s", piece,
        m2i_element_type_to_string (src->type), m2i_element_type_to_string (dst->type));
    return FALSE;
  }
  return TRUE;
}

static gboolean
run_cpu (M2iSplitRunner *r, RPiece *rp, GError **error)
{
  M2iIrModel *m = rp->pc->model;
  for (gint i = 0; i < m2i_ir_model_get_n_inputs (m); i++) {
    M2iTensor *dst = m2i_ir_infer_request_get_input (rp->req, i);
    if (rp->shape_only[i])
      continue;
    if (!copy_in (&r->values[rp->in_tensor[i]], dst, rp->index, error))
      return FALSE;
    rp->stats.boundary_bytes += m2i_tensor_nbytes (dst);
  }
  if (!m2i_ir_infer_request_infer (rp->req, error))
    return FALSE;
  for (gint j = 0; j < m2i_ir_model_get_n_outputs (m); j++)
    r->values[rp->out_tensor[j]] = *m2i_ir_infer_request_get_output (rp->req, j);
  return TRUE;
}

static gboolean
run_npu (M2iSplitRunner *r, RPiece *rp, GError **error)
{
  if (!split_npu_program_run (rp->prog, rp->npu, rp->in_ptrs, rp->out_ptrs, &rp->stats, error))
    return FALSE;
  guint64 layers, cycles, br, bw;
  split_npu_program_cost (rp->prog, &layers, &cycles, &br, &bw);
  m2i_device_account_work (NULL, M2I_DEVICE_TARGET_DEVICE, layers, br, bw, cycles);
  return TRUE;
}

/* The frame the head reads, from the model's plane inputs. */
static gboolean
frame_from_inputs (M2iSplitRunner *r, RPiece *rp, M2iImage *img, GError **error)
{
  *img = rp->in_img;
  if (rp->n_planes == 1) {
    M2iTensor *t = &r->values[rp->plane_tensor[0]];
    return m2i_image_wrap (img, img->format, img->width, img->height, t->data,
        m2i_tensor_nbytes (t), 0, error);
  }
  for (gint p = 0; p < rp->n_planes; p++) {
    M2iTensor *t = &r->values[rp->plane_tensor[p]];
    img->data[p] = t->data;
    img->size[p] = m2i_tensor_nbytes (t);
  }
  return TRUE;
}

static gboolean
run_head (M2iSplitRunner *r, RPiece *rp, const M2iImage *frame, GError **error)
{
  M2iImage img;
  M2iPlan *plan = rp->mplan;
  if (frame) {
    if (frame->format != rp->in_img.format || frame->width != rp->in_img.width ||
        frame->height != rp->in_img.height) {
      g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
          "the head takes %s %dx%d frames, not %s %dx%d",
          m2i_format_to_string (rp->in_img.format), rp->in_img.width, rp->in_img.height,
          m2i_format_to_string (frame->format), frame->width, frame->height);
      return FALSE;
    }
    img = *frame;
    if (!m2i_image_same_geometry (frame, &rp->in_img)) {
      /* other strides: a plan for them, kept while they stay */
      if (!rp->frame_plan || !m2i_image_same_geometry (frame, &rp->frame_geom)) {
        m2i_plan_free (rp->frame_plan);
        M2iPlanOptions opts;
        m2i_plan_options_init (&opts);
        opts.profile = r->plan->m2i_profile;
        opts.n_threads = r->n_threads;
        rp->frame_plan = m2i_plan_new (frame, m2i_plan_get_ops (rp->mplan), &rp->out_img, &opts,
            error);
        if (!rp->frame_plan)
          return FALSE;
        rp->frame_geom = *frame;
      }
      plan = rp->frame_plan;
    }
  } else if (!frame_from_inputs (r, rp, &img, error)) {
    return FALSE;
  }
  if (!m2i_plan_run (plan, &img, &rp->out_img, error))
    return FALSE;
  for (guint t = 0; t < m2i_plan_n_tasks (plan); t++) {
    M2iTaskInfo ti;
    m2i_plan_get_task (plan, t, &ti);
    rp->stats.device_cycles += ti.cycles;
    rp->stats.device_layers++;
  }
  return TRUE;
}

static gboolean
run_pieces (M2iSplitRunner *r, gboolean skip_head, const M2iImage *frame, GError **error)
{
  for (gint p = 0; p < r->n_pieces; p++) {
    RPiece *rp = &r->pieces[p];
    if (skip_head && p == r->head_piece)
      continue;
    gint64 t0 = g_get_monotonic_time ();
    gboolean ok;
    switch (rp->pc->engine) {
      case M2I_SPLIT_ENGINE_CPU: ok = run_cpu (r, rp, error); break;
      case M2I_SPLIT_ENGINE_M2I: ok = run_head (r, rp, frame, error); break;
      default: ok = run_npu (r, rp, error); break;
    }
    if (!ok) {
      g_prefix_error (error, "piece %d (%s): ", p, m2i_split_engine_to_string (rp->pc->engine));
      return FALSE;
    }
    rp->stats.runs++;
    rp->stats.wall_ns += (guint64) (g_get_monotonic_time () - t0) * 1000;
  }
  for (guint i = 0; i < r->plan->outputs->len; i++) {
    const M2iTensor *v = &r->values[g_array_index (r->plan->outputs, gint, i)];
    if (r->out_owned[i])
      m2i_f16_to_f32_n (v->data, r->outputs[i].data, m2i_shape_numel (&v->shape));
    else
      r->outputs[i] = *v;
  }
  return TRUE;
}

gboolean
m2i_split_runner_run (M2iSplitRunner *r, GError **error)
{
  return run_pieces (r, FALSE, NULL, error);
}

const M2iTensor *
m2i_split_runner_get_output (M2iSplitRunner *r, gint i)
{
  return i >= 0 && (guint) i < r->plan->outputs->len ? &r->outputs[i] : NULL;
}

static gboolean
need_head (M2iSplitRunner *r, GError **error)
{
  if (r->head_piece >= 0)
    return TRUE;
  g_set_error (error, M2I_ERROR, M2I_ERROR_UNSUPPORTED,
      "the plan runs no pre-processing head on the M2I block");
  return FALSE;
}

gboolean
m2i_split_runner_run_image (M2iSplitRunner *r, const M2iImage *frame, GError **error)
{
  return need_head (r, error) && run_pieces (r, FALSE, frame, error);
}

gboolean
m2i_split_runner_get_head_image (M2iSplitRunner *r, M2iImage *image, GError **error)
{
  if (!need_head (r, error))
    return FALSE;
  *image = r->pieces[r->head_piece].out_img;
  return TRUE;
}

gboolean
m2i_split_runner_run_after_head (M2iSplitRunner *r, GError **error)
{
  return need_head (r, error) && run_pieces (r, TRUE, NULL, error);
}

gboolean
m2i_split_runner_get_piece_stats (const M2iSplitRunner *r, gint i, M2iSplitPieceStats *stats)
{
  if (i < 0 || i >= r->n_pieces)
    return FALSE;
  *stats = r->pieces[i].stats;
  return TRUE;
}

gboolean
m2i_split_plan_get_head (const M2iSplitPlan *plan, M2iSplitHead *head)
{
  for (guint p = 0; p < plan->pieces->len; p++) {
    const SplitPiece *pc = g_ptr_array_index (plan->pieces, p);
    if (pc->engine != M2I_SPLIT_ENGINE_M2I)
      continue;
    SplitAnalysis *a = split_analyze (pc->model, NULL, plan->m2i_profile, NULL,
        plan->max_memory, NULL);
    gboolean ok = a && a->head_unit >= 0 && pc->outputs->len == 1;
    if (ok) {
      const SplitHeadInfo *h = a->head;
      M2iSplitHead out = { p, h->in_format, h->in_width, h->in_height, h->ops, h->out_format,
        h->out_width, h->out_height, h->n_planes, { -1, -1, -1 },
        g_array_index (pc->outputs, gint, 0) };
      for (gint k = 0; k < h->n_planes; k++) {
        g_autofree gchar *name = split_tensor_name (m2i_ir_model_get_node (a->model,
                h->plane_node[k]), 0);
        out.inputs[k] = m2i_split_plan_find_tensor (plan, name);
      }
      *head = out;
    }
    split_analysis_free (a);
    return ok;
  }
  return FALSE;
}
