/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ir-compile.c — from a loaded model to a compiled one: kernels bound, shapes
 * inferred and checked against the XML, constants folded, and the memory of
 * one inference planned (buffers reused once their last reader has run). */
#include "ir-compile.h"
#include "kernels/kernels-private.h"
#include <base/m2i-align.h>
#include <base/m2i-error.h>
#include <base/m2i-parallel.h>

#include <stdlib.h>
#include <string.h>

#define ALIGN 64
#define DEFAULT_MAX_FOLDED (64u << 20)
/* Kernels reading past n_inputs/n_outputs find zeroed tensors, not memory
 * that belongs to someone else. */
#define TENSOR_PAD 4


static M2iElementType
computed_type (M2iElementType t)
{
  return t == M2I_ET_F16 ? M2I_ET_F32 : t;
}

static void
step_clear (CmStep *s)
{
  if (s->kernel && s->kernel->free_state && s->ctx.state)
    s->kernel->free_state (s->ctx.state);
  g_free (s->ctx.inputs);
  g_free (s->ctx.outputs);
  g_free (s->in_values);
  g_free (s->out_values);
}

M2iIrCompiledModel *
m2i_ir_compiled_model_ref (M2iIrCompiledModel *cm)
{
  g_return_val_if_fail (cm != NULL, NULL);
  g_atomic_int_inc (&cm->ref_count);
  return cm;
}

void
m2i_ir_compiled_model_unref (M2iIrCompiledModel *cm)
{
  if (!cm || !g_atomic_int_dec_and_test (&cm->ref_count))
    return;
  for (guint i = 0; i < cm->steps->len; i++)
    step_clear (&g_array_index (cm->steps, CmStep, i));
  g_array_free (cm->steps, TRUE);
  for (gint i = 0; i < cm->n_values; i++)
    if (cm->values[i].owned)
      g_aligned_free (cm->values[i].owned);
  g_free (cm->values);
  g_free (cm->value_base);
  g_free (cm->groups);
  g_free (cm->dyn_values);
  g_free (cm->input_values);
  g_free (cm->output_values);
  m2i_op_registry_free (cm->registry_owned);
  m2i_ir_model_unref (cm->model);
  g_free (cm);
}

M2iIrModel *
m2i_ir_compiled_model_get_model (const M2iIrCompiledModel *cm)
{
  return cm->model;
}

const M2iTensor *
m2i_ir_compiled_model_get_value (const M2iIrCompiledModel *cm, gint node, gint port)
{
  M2iIrNode *n = m2i_ir_model_get_node (cm->model, node);
  if (!n || port < 0 || port >= n->n_outputs)
    return NULL;
  return &cm->values[cm->value_base[node] + port].t;
}

gint
m2i_ir_compiled_model_get_n_runtime_nodes (const M2iIrCompiledModel *cm)
{
  return cm->steps->len;
}

gsize
m2i_ir_compiled_model_get_request_bytes (const M2iIrCompiledModel *cm)
{
  return cm->arena_bytes + cm->scratch_bytes;
}

/* ---- binding and inference ------------------------------------------- */

/* Every layer without a kernel, in one message: "3 ops have no kernel:
 * Swish (opset4) ×57, VariadicSplit (opset1) ×10, Mod (opset1) ×1", so a
 * model that needs several learns them all in one run. */
static gboolean
check_kernels (const M2iIrModel *model, M2iOpRegistry *reg, GError **error)
{
  typedef struct {
    const M2iIrNode *first;
    gint count;
  } Missing;
  GArray *missing = g_array_new (FALSE, FALSE, sizeof (Missing));
  gint n_layers = 0;
  for (guint i = 0; i < model->nodes->len; i++) {
    const M2iIrNode *n = g_ptr_array_index (model->nodes, i);
    if (!strcmp (n->type, "Parameter") || !strcmp (n->type, "Const") || !strcmp (n->type, "Result"))
      continue;
    if (!n->has_body && m2i_op_registry_lookup (reg, n->type, n->version))
      continue;
    n_layers++;
    guint k;
    for (k = 0; k < missing->len; k++) {
      Missing *m = &g_array_index (missing, Missing, k);
      if (!strcmp (m->first->type, n->type) && !strcmp (m->first->version, n->version)) {
        m->count++;
        break;
      }
    }
    if (k == missing->len) {
      Missing m = { n, 1 };
      g_array_append_val (missing, m);
    }
  }
  if (!missing->len) {
    g_array_free (missing, TRUE);
    return TRUE;
  }
  GString *msg = g_string_new (NULL);
  gboolean bodies = FALSE;
  /* file:line of the first such layer, as every message about a layer */
  const M2iIrNode *first = g_array_index (missing, Missing, 0).first;
  if (first->line > 0)
    g_string_append_printf (msg, "%s:%d: ", model->xml_path, first->line);
  else
    g_string_append_printf (msg, "%s: ", model->xml_path);
  g_string_append_printf (msg, "%u op%s %s no kernel (%d layer%s):",
      missing->len, missing->len > 1 ? "s" : "", missing->len > 1 ? "have" : "has", n_layers,
      n_layers > 1 ? "s" : "");
  for (guint k = 0; k < missing->len; k++) {
    const Missing *m = &g_array_index (missing, Missing, k);
    g_string_append_printf (msg, "%s %s (%s) \u00d7%d", k ? "," : "", m->first->type,
        m->first->version, m->count);
    if (m->first->has_body) {
      g_string_append (msg, " [ops with sub-graphs (TensorIterator, Loop, If) are not supported]");
      bodies = TRUE;
    } else {
      g_autofree gchar *known = m2i_op_registry_list_opsets (reg, m->first->type);
      if (known)
        g_string_append_printf (msg, " [kernels exist for %s in: %s]", m->first->type, known);
    }
    g_string_append_printf (msg, " (%slayer %" G_GINT64_FORMAT " '%s'", m->count > 1 ?
        "first: " : "", m->first->id, m->first->name);
    if (m->first->line > 0)
      g_string_append_printf (msg, ", line %d", m->first->line);
    g_string_append_c (msg, ')');
  }
  if (!bodies || missing->len > 1)
    g_string_append (msg, ". A custom-op plugin can provide them: a shared library exporting "
        M2I_OP_PLUGIN_REGISTER_SYMBOL "(), passed in M2iIrCompileOptions.plugin_paths or to "
        "m2i-ir-run --plugin (see docs/ir-runtime.md)");
  g_set_error_literal (error, M2I_ERROR, M2I_ERROR_UNSUPPORTED, msg->str);
  g_string_free (msg, TRUE);
  g_array_free (missing, TRUE);
  return FALSE;
}

/* No tensor may need more than this: keeps every size sum of the memory
 * plan far from overflowing (and no machine has it anyway). */
#define MAX_TENSOR_BYTES ((guint64) 1 << 40)
#define DEFAULT_MAX_DYNAMIC ((gsize) 1 << 30)

/* What compiling may still allocate: the limit, less what is held. */
typedef struct {
  guint64 limit;
  guint64 folded;                /* bytes of constants folded so far */
} Budget;

/* "1.5 GiB" (plain spaces: g_format_size's are non-breaking). */
static gchar *
format_bytes (guint64 b)
{
  if (b < 1024)
    return g_strdup_printf ("%" G_GUINT64_FORMAT " bytes", b);
  static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
  double v = b / 1024.0;
  guint u = 0;
  for (; v >= 1024 && u + 1 < G_N_ELEMENTS (units); u++)
    v /= 1024;
  return g_strdup_printf ("%.1f %s", v, units[u]);
}

static void
limit_error (GError **error, const M2iIrNode *n, guint64 limit, const char *format, ...)
    G_GNUC_PRINTF (4, 5);

static void
limit_error (GError **error, const M2iIrNode *n, guint64 limit, const char *format, ...)
{
  va_list ap;
  va_start (ap, format);
  g_autofree gchar *what = g_strdup_vprintf (format, ap);
  va_end (ap);
  g_autofree gchar *lim = format_bytes (limit);
  const char *fix = "; if the model really needs it, raise the limit "
      "(M2iIrCompileOptions.max_memory, m2i-ir-run --max-memory, m2iinfer max-memory)";
  if (n)
    m2i_ir_node_set_error (error, M2I_ERROR_LIMIT, n, "%s, more than the memory limit of "
        "%s%s", what, lim, fix);
  else
    g_set_error (error, M2I_ERROR, M2I_ERROR_LIMIT, "%s, more than the memory limit of %s%s",
        what, lim, fix);
}

/* Output @port of @n as a tensor of type @type and static @shape: its dims
 * must address at most 1 TiB even where a zero dim makes it empty (strides
 * and offsets are products of the dims), and its bytes fit @limit. */
static gboolean
check_size (const M2iIrNode *n, gint port, M2iElementType type, const M2iShape *shape,
    guint64 limit, GError **error)
{
  gsize es = MAX (m2i_element_type_size (type), 1);
  gint64 extent = 1;
  gboolean ok = shape->rank >= 0 && shape->rank <= M2I_MAX_RANK;
  for (gint d = 0; ok && d < shape->rank; d++)
    ok = shape->dims[d] >= 0 && ir_mul_i64 (extent, MAX (shape->dims[d], 1), &extent) &&
        (guint64) extent <= MAX_TENSOR_BYTES / es;
  g_autofree gchar *text = m2i_shape_to_string (shape);
  if (!ok) {
    m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, n,
        "output %d (%s %s) is larger than the 1 TiB a tensor may take", port,
        m2i_element_type_to_string (type), text);
    return FALSE;
  }
  guint64 bytes = (guint64) m2i_shape_numel (shape) * es;
  if (bytes > limit) {
    g_autofree gchar *size = format_bytes (bytes);
    limit_error (error, n, limit, "output %d (%s %s) needs %s", port,
        m2i_element_type_to_string (type), text, size);
    return FALSE;
  }
  return TRUE;
}

gboolean
ir_check_outputs (const M2iIrNode *n, const M2iOpContext *ctx, guint64 read_mask,
    GError **error)
{
  for (gint p = 0; p < n->n_outputs; p++) {
    const M2iTensor *t = &ctx->outputs[p];
    const M2iIrPort *port = &n->outputs[p];
    if (t->type == M2I_ET_UNDEFINED || m2i_shape_numel (&t->shape) < 0 ||
        t->shape.rank < 0 || t->shape.rank > M2I_MAX_RANK) {
      m2i_ir_node_set_error (error, M2I_ERROR_FAILED, n,
          "the kernel set no valid type and shape for output %d", p);
      return FALSE;
    }
    if (!check_size (n, p, t->type, &t->shape, G_MAXUINT64, error))
      return FALSE;
    if (!ir_shape_fits (&port->shape, &t->shape)) {
      g_autofree gchar *s1 = m2i_shape_to_string (&port->shape);
      g_autofree gchar *s2 = m2i_shape_to_string (&t->shape);
      m2i_ir_node_set_error (error, M2I_ERROR_MALFORMED, n,
          "shape mismatch on output port %" G_GINT64_FORMAT ": the XML declares %s "
          "but the op computes %s from its inputs", port->id, s1, s2);
      return FALSE;
    }
    if (port->type != M2I_ET_UNDEFINED && computed_type (port->type) != t->type) {
      gboolean read = p >= 64 || (read_mask >> p) & 1;
      if (!read) {
        /* OpenVINO reads such files (Open Model Zoo's MaxPool-8 indices
         * declared f32): nothing can be misread through a port nobody reads */
        g_autofree gchar *where = g_strdup_printf ("layer %" G_GINT64_FORMAT " '%s' (%s, %s)",
            n->id, n->name, n->type, n->version);
        g_message ("warning: %s: output port %" G_GINT64_FORMAT " is declared %s but the op "
            "computes %s; no layer reads it, so it is taken as %s", where, port->id,
            m2i_element_type_to_string (port->type), m2i_element_type_to_string (t->type),
            m2i_element_type_to_string (t->type));
        continue;
      }
      m2i_ir_node_set_error (error, M2I_ERROR_MALFORMED, n,
          "type mismatch on output port %" G_GINT64_FORMAT ": the XML declares %s "
          "but the op computes %s", port->id, m2i_element_type_to_string (port->type),
          m2i_element_type_to_string (t->type));
      return FALSE;
    }
  }
  return TRUE;
}

gboolean
ir_value_visible_to_infer (const CmValue *v)
{
  M2iElementType t = v->t.type;
  return v->is_const || (t >= M2I_ET_U8 && t <= M2I_ET_I64 &&
      m2i_shape_is_static (&v->t.shape) && m2i_tensor_nbytes (&v->t) <= CM_SMALL_INT_BYTES);
}

/* Folding: the outputs were given memory for their bounds already. */
static gboolean
fold_grow (CmDynHost *h, M2iOpContext *ctx, gint p, gsize bytes, gpointer *data, GError **error)
{
  *data = ctx->outputs[p].data;
  return TRUE;
}

/* Runs a layer whose inputs are all known now and keeps its outputs as
 * constants. */
static gboolean
fold (M2iIrCompiledModel *cm, CmStep *s, Budget *budget, GError **error)
{
  M2iOpContext *ctx = &s->ctx;
  guint64 need = ctx->scratch_bytes;
  for (gint p = 0; p < ctx->n_outputs; p++)
    need += m2i_tensor_nbytes (&ctx->outputs[p]);
  if (need > budget->limit - MIN (budget->folded, budget->limit)) {
    g_autofree gchar *size = format_bytes (need);
    g_autofree gchar *held = format_bytes (budget->folded);
    limit_error (error, ctx->node, budget->limit, "computing this constant at compile time "
        "needs %s besides the %s of constants computed before", size, held);
    return FALSE;
  }
  budget->folded += need - ctx->scratch_bytes;
  gpointer scratch = ctx->scratch_bytes ? g_aligned_alloc0 (1, ctx->scratch_bytes, ALIGN) : NULL;
  CmDynHost host = { .grow = fold_grow };
  for (gint p = 0; p < ctx->n_outputs; p++) {
    CmValue *v = &cm->values[s->out_values[p]];
    v->owned = g_aligned_alloc0 (1, MAX (m2i_tensor_nbytes (&ctx->outputs[p]), 1), ALIGN);
    ctx->outputs[p].data = v->owned;
    if (p < 32)
      host.bounds[p] = ctx->outputs[p].shape;
  }
  ctx->scratch = scratch;
  ctx->runtime = ctx->dynamic_outputs ? &host : NULL;
  gboolean ok = s->kernel->execute (ctx, error);
  ctx->scratch = NULL;
  ctx->runtime = NULL;
  if (scratch)
    g_aligned_free (scratch);
  if (ok && (host.set & ctx->dynamic_outputs) != ctx->dynamic_outputs) {
    m2i_ir_node_set_error (error, M2I_ERROR_FAILED, ctx->node, "the kernel declared "
        "run-time shapes but set none (m2i_op_context_set_output_shape)");
    ok = FALSE;
  }
  if (!ok) {
    if (error && !*error)
      m2i_ir_node_set_error (error, M2I_ERROR_FAILED, ctx->node, "the kernel failed");
    return FALSE;
  }
  for (gint p = 0; p < ctx->n_outputs; p++) {
    CmValue *v = &cm->values[s->out_values[p]];
    v->t = ctx->outputs[p];
    v->is_const = TRUE;
  }
  return TRUE;
}

/* Which outputs of @n some layer (or Result) reads. */
static guint64
read_mask (const M2iIrCompiledModel *cm, const M2iIrNode *n, const gboolean *read)
{
  guint64 mask = 0;
  for (gint p = 0; p < MIN (n->n_outputs, 64); p++)
    if (read[cm->value_base[n->index] + p])
      mask |= (guint64) 1 << p;
  return mask;
}

static gboolean
bind_node (M2iIrCompiledModel *cm, M2iOpRegistry *reg, const M2iIrNode *n,
    gsize max_folded, const gboolean *read, Budget *budget, GError **error)
{
  CmValue *out = &cm->values[cm->value_base[n->index]];
  if (!strcmp (n->type, "Parameter")) {
    for (guint i = 0; i < cm->model->parameters->len; i++) {
      if (g_ptr_array_index (cm->model->parameters, i) == n) {
        const M2iIrIoInfo *info = &cm->model->input_info[i];
        if (!m2i_shape_is_static (&info->shape)) {
          g_autofree gchar *s = m2i_shape_to_string (&info->shape);
          m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, n, "input '%s' has dynamic "
              "dimensions %s: give it a shape before compiling (m2i_ir_model_reshape(), "
              "m2i-ir-run --shape %s=N,C,H,W)", info->name, s, info->name);
          return FALSE;
        }
        out->t.type = computed_type (info->type);
        out->t.shape = info->shape;
        cm->input_values[i] = cm->value_base[n->index];
      }
    }
    return check_size (n, 0, out->t.type, &out->t.shape, budget->limit, error);
  }
  if (!strcmp (n->type, "Const")) {
    out->t = n->const_value;
    out->is_const = TRUE;
    /* its bytes are in the .bin (the dims of an empty one still count) */
    return check_size (n, 0, out->t.type, &out->t.shape, G_MAXUINT64, error);
  }
  if (!strcmp (n->type, "Result"))
    return TRUE;
  /* the sizes the XML declares, before a kernel sizes anything on them
   * (dims known only at run time are bounded by max_dynamic_bytes then) */
  for (gint p = 0; p < n->n_outputs; p++)
    if (m2i_shape_is_static (&n->outputs[p].shape) &&
        !check_size (n, p, n->outputs[p].type, &n->outputs[p].shape, budget->limit, error))
      return FALSE;

  const M2iOpKernel *k = m2i_op_registry_lookup (reg, n->type, n->version);
  g_assert (k != NULL);                        /* check_kernels() made sure */
  CmStep s = { .node = n->index, .kernel = k };
  s.ctx.node = n;
  s.ctx.n_inputs = n->n_inputs;
  s.ctx.n_outputs = n->n_outputs;
  s.ctx.inputs = g_new0 (M2iTensor, n->n_inputs + TENSOR_PAD);
  s.ctx.outputs = g_new0 (M2iTensor, n->n_outputs + TENSOR_PAD);
  s.ctx.n_threads = cm->n_threads;
  s.in_values = g_new (gint, MAX (n->n_inputs, 1));
  s.out_values = g_new (gint, MAX (n->n_outputs, 1));
  gboolean all_const = TRUE, dyn_input = FALSE, run_time_ints = FALSE, unknown = FALSE;
  for (gint i = 0; i < n->n_inputs; i++) {
    const M2iIrSource *src = &n->sources[i];
    s.in_values[i] = cm->value_base[src->node->index] + src->port;
    const CmValue *v = &cm->values[s.in_values[i]];
    s.ctx.inputs[i] = v->t;
    if (!v->is_const)
      s.ctx.inputs[i].data = NULL;
    all_const &= v->is_const;
    dyn_input |= v->dyn >= 0;
    run_time_ints |= !v->is_const && ir_value_visible_to_infer (v);
    /* after a deferred layer: no shape to infer from before an inference */
    unknown |= !m2i_shape_is_static (&v->t.shape) || v->t.type == M2I_ET_UNDEFINED;
  }
  for (gint p = 0; p < n->n_outputs; p++)
    s.out_values[p] = cm->value_base[n->index] + p;

  GError *infer_error = NULL;
  if (unknown || !k->infer (&s.ctx, &infer_error)) {
    if (!infer_error && !unknown)
      m2i_ir_node_set_error (&infer_error, M2I_ERROR_FAILED, n, "the kernel rejected the layer");
    else if (!infer_error)
      m2i_ir_node_set_error (&infer_error, M2I_ERROR_MALFORMED, n, "an input has no known "
          "type or shape (it comes from a layer that computes none, e.g. a Result): check "
          "the model's edges");
    if (!dyn_input && !run_time_ints) {
      g_propagate_error (error, infer_error);
      step_clear (&s);
      return FALSE;
    }
    /* it may need values only an inference knows (a shape computed from a
     * run-time shape): it infers then, and errors show then */
    g_clear_error (&infer_error);
    if (k->free_state && s.ctx.state)
      k->free_state (s.ctx.state);
    s.ctx.state = NULL;
    s.deferred = s.reinfer = TRUE;
    for (gint p = 0; p < n->n_outputs; p++)
      s.ctx.outputs[p] = (M2iTensor) { computed_type (n->outputs[p].type), n->outputs[p].shape };
  } else if (!ir_check_outputs (n, &s.ctx, read_mask (cm, n, read), error)) {
    step_clear (&s);
    return FALSE;
  }
  for (gint p = 0; p < n->n_outputs && !s.deferred; p++) {
    const M2iTensor *t = &s.ctx.outputs[p];
    if (m2i_shape_is_static (&t->shape) &&
        !check_size (n, p, t->type, &t->shape, budget->limit, error)) {
      step_clear (&s);
      return FALSE;
    }
  }
  if (!k->execute) {
    m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, n, "the kernel cannot execute");
    step_clear (&s);
    return FALSE;
  }
  for (gint p = 0; p < n->n_outputs; p++)
    out[p].t = s.ctx.outputs[p];

  gsize bytes = 0;
  for (gint p = 0; p < n->n_outputs; p++)
    bytes += m2i_tensor_nbytes (&s.ctx.outputs[p]);
  if (!s.deferred && all_const && n->n_outputs == 1 && !s.ctx.dynamic_outputs &&
      ir_kernel_is_view (k, &s.ctx) && bytes == m2i_tensor_nbytes (&s.ctx.inputs[0])) {
    /* a view of a constant (Reshape of weights, the Convert f16 → f32 of a
     * compressed v11 model once the weights are widened) is that constant */
    out->t.data = s.ctx.inputs[0].data;
    out->is_const = TRUE;
    step_clear (&s);
    return TRUE;
  }
  if (!s.deferred && (all_const || (ir_kernel_is_shape_only (k) && !dyn_input)) &&
      bytes <= max_folded) {
    gboolean ok = fold (cm, &s, budget, error);
    step_clear (&s);
    return ok;
  }
  s.reinfer |= dyn_input;
  if (s.reinfer || s.ctx.dynamic_outputs) {
    /* its outputs' shapes are known at run time: buffers of their own */
    for (gint p = 0; p < n->n_outputs; p++) {
      cm->values[s.out_values[p]].dyn = cm->n_dyn;
      cm->dyn_values = g_renew (gint, cm->dyn_values, cm->n_dyn + 1);
      cm->dyn_values[cm->n_dyn++] = s.out_values[p];
    }
  }
  if (s.reinfer) {
    /* each request infers it again with its actual inputs */
    if (k->free_state && s.ctx.state)
      k->free_state (s.ctx.state);
    s.ctx.state = NULL;
  }
  g_array_append_val (cm->steps, s);
  return TRUE;
}

/* ---- memory planning ---------------------------------------------------- */

/* Element-wise kernels: output element i depends on input element i only
 * (for an input of the output's shape), so they may write over that input.
 * Checked against each kernel's loops (kernels/eltwise.c, activation.c,
 * unary.c, compare.c: LogicalNot and Select). */
static gboolean
is_elementwise (const M2iOpKernel *k)
{
  static const M2iOpKernel *const kernels[] = {
    &ir_kernel_add, &ir_kernel_subtract, &ir_kernel_multiply, &ir_kernel_divide,
    &ir_kernel_relu, &ir_kernel_prelu, &ir_kernel_clamp, &ir_kernel_sigmoid, &ir_kernel_exp,
    &ir_kernel_maximum, &ir_kernel_minimum, &ir_kernel_squared_difference,
    &ir_kernel_mod, &ir_kernel_floor_mod, &ir_kernel_power,
    &ir_kernel_swish, &ir_kernel_hswish, &ir_kernel_hsigmoid, &ir_kernel_hard_sigmoid,
    &ir_kernel_mish, &ir_kernel_gelu, &ir_kernel_elu, &ir_kernel_selu,
    &ir_kernel_softplus, &ir_kernel_softsign, &ir_kernel_tanh, &ir_kernel_erf,
    &ir_kernel_abs, &ir_kernel_negative, &ir_kernel_sign, &ir_kernel_floor,
    &ir_kernel_ceiling, &ir_kernel_round, &ir_kernel_sqrt, &ir_kernel_log,
    &ir_kernel_logical_not, &ir_kernel_select,
  };
  for (guint i = 0; i < G_N_ELEMENTS (kernels); i++)
    if (k == kernels[i])
      return TRUE;
  return FALSE;
}

/* Groups merged into others: each group's parent and its byte offset in
 * the parent (union-find; a root is its own parent at offset 0). */
typedef struct {
  gint *parent;
  gsize *offset;
} GroupAlias;

static gint
group_root (const GroupAlias *a, gint g, gsize *offset)
{
  gsize off = 0;
  while (a->parent[g] != g) {
    off += a->offset[g];
    g = a->parent[g];
  }
  if (offset)
    *offset = off;
  return g;
}

/* Group @child now lives inside @root at byte @offset, from its first use. */
static void
merge_group (M2iIrCompiledModel *cm, GroupAlias *a, gint child, gint root, gsize offset)
{
  CmGroup *r = &cm->groups[root], *c = &cm->groups[child];
  r->first = MIN (r->first, c->first);
  r->last = MAX (r->last, c->last);
  r->size = MAX (r->size, offset + c->size);
  *c = (CmGroup) { 0, 0, -2, -2 };           /* empty, placed nowhere */
  a->parent[child] = root;
  a->offset[child] = offset;
}

/* In place, element-wise: a layer whose input of the output's shape and
 * type is read by nobody after it writes its output into that input's
 * buffer (Conv → Add(bias) → PReLU then touches one buffer, not three).
 * Never over an input of the model (it keeps its contents). */
static void
elementwise_in_place (M2iIrCompiledModel *cm, GroupAlias *a, gint n_steps)
{
  for (gint si = 0; si < n_steps; si++) {
    const CmStep *s = &g_array_index (cm->steps, CmStep, si);
    if (s->ctx.n_outputs != 1 || !is_elementwise (s->kernel))
      continue;
    const CmValue *out = &cm->values[s->out_values[0]];
    if (out->group < 0)
      continue;
    gint og = group_root (a, out->group, NULL);
    for (gint k = 0; k < s->ctx.n_inputs; k++) {
      const CmValue *in = &cm->values[s->in_values[k]];
      if (in->group < 0 || in->t.type != out->t.type || !m2i_shape_equal (&in->t.shape, &out->t.shape))
        continue;
      gint ig = group_root (a, in->group, NULL);
      const CmGroup *g = &cm->groups[ig];
      if (ig == og || g->first < 0 || g->last != si)
        continue;
      merge_group (cm, a, og, ig, 0);
      break;
    }
  }
}

/* In place, Concat: when every dim before the axis is 1, each input is one
 * contiguous block of the output, so its producer can write straight there
 * (squeezenet's fire modules: no copy). Only for an input that fills its
 * own buffer, is read by nobody after the Concat, is no model input, and
 * lands on a 64-byte boundary (kernels may count on aligned outputs). */
static void
concat_in_place (M2iIrCompiledModel *cm, GroupAlias *a, gint n_steps)
{
  for (gint si = 0; si < n_steps; si++) {
    const CmStep *s = &g_array_index (cm->steps, CmStep, si);
    if (!ir_kernel_is_concat (s->kernel) || s->ctx.n_outputs != 1)
      continue;
    const CmValue *out = &cm->values[s->out_values[0]];
    gint axis = GPOINTER_TO_INT (s->ctx.state);
    gboolean contiguous = out->group >= 0;
    for (gint d = 0; d < axis; d++)
      contiguous &= out->t.shape.dims[d] == 1;
    if (!contiguous)
      continue;
    gsize out_off;
    gint og = group_root (a, out->group, &out_off);
    gsize at = 0;                              /* the input's byte offset in the output */
    for (gint k = 0; k < s->ctx.n_inputs; k++) {
      const CmValue *in = &cm->values[s->in_values[k]];
      gsize bytes = m2i_tensor_nbytes (&in->t), in_off;
      gint ig = in->group >= 0 ? group_root (a, in->group, &in_off) : -1;
      if (ig >= 0 && ig != og && in_off == 0 && cm->groups[ig].size == bytes &&
          cm->groups[ig].first >= 0 && cm->groups[ig].last == si && (out_off + at) % ALIGN == 0)
        merge_group (cm, a, ig, og, out_off + at);
      at += bytes;
    }
  }
}

/* Merges buffers that can be shared in place, then gives every value its
 * root group and offset. */
static void
compute_in_place (M2iIrCompiledModel *cm, gint n_steps)
{
  GroupAlias a = { g_new (gint, MAX (cm->n_groups, 1)), g_new0 (gsize, MAX (cm->n_groups, 1)) };
  for (gint g = 0; g < cm->n_groups; g++)
    a.parent[g] = g;
  elementwise_in_place (cm, &a, n_steps);
  concat_in_place (cm, &a, n_steps);
  for (gint v = 0; v < cm->n_values; v++)
    if (cm->values[v].group >= 0)
      cm->values[v].group = group_root (&a, cm->values[v].group, &cm->values[v].offset);
  g_free (a.parent);
  g_free (a.offset);
}

void
ir_compile_keep_steps (M2iIrCompiledModel *cm, const gboolean *keep)
{
  GArray *kept = g_array_new (FALSE, FALSE, sizeof (CmStep));
  for (guint i = 0; i < cm->steps->len; i++) {
    CmStep *s = &g_array_index (cm->steps, CmStep, i);
    if (keep[s->node])
      g_array_append_val (kept, *s);
    else
      step_clear (s);
  }
  g_array_free (cm->steps, TRUE);
  cm->steps = kept;
}

/* ---- epilogue fusion ------------------------------------------------------ */

static gboolean
is_result_value (const M2iIrCompiledModel *cm, gint v)
{
  for (guint i = 0; i < cm->model->results->len; i++)
    if (cm->output_values[i] == v)
      return TRUE;
  return FALSE;
}

gint
ir_compile_only_reader (const M2iIrCompiledModel *cm, gint v, gint from)
{
  if (is_result_value (cm, v))
    return -1;
  gint reader = -1;
  for (guint si = from + 1; si < cm->steps->len; si++) {
    const CmStep *s = &g_array_index (cm->steps, CmStep, si);
    for (gint i = 0; i < s->ctx.n_inputs; i++) {
      if (s->in_values[i] != v)
        continue;
      if (reader >= 0)
        return -1;
      reader = si;
    }
  }
  return reader;
}

/* A constant f32 bias of @channels values that broadcasts along axis @axis
 * of @out only (Convolution: [1,C,1,1] or [C,1,1]; MatMul: [C] or [1,C]). */
static const float *
channel_bias (const CmValue *b, const M2iShape *out, gint axis, gint64 channels)
{
  if (!b->is_const || b->t.type != M2I_ET_F32 || b->t.shape.rank > out->rank ||
      m2i_shape_numel (&b->t.shape) != channels)
    return NULL;
  for (gint d = 0; d < b->t.shape.rank; d++) {
    gint od = out->rank - b->t.shape.rank + d;
    if (b->t.shape.dims[d] != (od == axis ? channels : 1))
      return NULL;
  }
  return b->t.data;
}

/* A Swish step fusable into a convolution: its beta (input 1) absent or a
 * constant f32 scalar. M2I_FUSE_SWISH=0 in the environment keeps every
 * Swish a layer of its own (for measuring the fusion). */
static gboolean
swish_beta (const M2iIrCompiledModel *cm, gint step, float *beta)
{
  const CmStep *s = &g_array_index (cm->steps, CmStep, step);
  const char *env = g_getenv ("M2I_FUSE_SWISH");
  if (s->kernel != &ir_kernel_swish || s->ctx.n_outputs != 1 || (env && !strcmp (env, "0")))
    return FALSE;
  *beta = 1.0f;
  if (s->ctx.n_inputs == 1)
    return TRUE;
  const CmValue *b = &cm->values[s->in_values[1]];
  if (!b->is_const || b->t.type != M2I_ET_F32 || m2i_shape_numel (&b->t.shape) != 1)
    return FALSE;
  *beta = *(const float *) b->t.data;
  return TRUE;
}

/* Add → ReLU, the ReLU the Add's only reader (a residual Add that no
 * convolution took as its bias): the Add applies ReLU as it stores
 * (ir_k_fuse_add_relu, bit-identical), the ReLU step goes and its readers
 * read the Add. TRUE when fused. */
static gboolean
fuse_add_relu (const M2iIrCompiledModel *cm, gint si, gboolean *keep, gint *remap)
{
  CmStep *a = &g_array_index (cm->steps, CmStep, si);
  if (a->reinfer || a->ctx.dynamic_outputs || a->ctx.n_outputs != 1)
    return FALSE;
  gint v = a->out_values[0];
  gint r = ir_compile_only_reader (cm, v, si);
  if (r < 0)
    return FALSE;
  const CmStep *rs = &g_array_index (cm->steps, CmStep, r);
  if (rs->kernel != &ir_kernel_relu || rs->reinfer || rs->ctx.n_outputs != 1 ||
      cm->values[v].t.type != M2I_ET_F32 || cm->values[rs->out_values[0]].t.type != M2I_ET_F32)
    return FALSE;
  GError *e = NULL;
  if (!ir_k_fuse_add_relu (&a->ctx, &e)) {
    g_clear_error (&e);
    return FALSE;
  }
  keep[rs->node] = FALSE;
  remap[rs->out_values[0]] = v;
  return TRUE;
}

/* The maps of a fusion pass: @keep per node (all TRUE), @remap per value
 * (each itself). */
static void
fusion_maps (const M2iIrCompiledModel *cm, gboolean **keep, gint **remap)
{
  gint n_nodes = cm->model->nodes->len;
  *keep = g_new (gboolean, MAX (n_nodes, 1));
  *remap = g_new (gint, MAX (cm->n_values, 1));
  for (gint i = 0; i < n_nodes; i++)
    (*keep)[i] = TRUE;
  for (gint v = 0; v < cm->n_values; v++)
    (*remap)[v] = v;
}

/* Steps @gone (@n of them, -1 for none) are fused into the one whose
 * output is @v: they go, and their readers read @v. */
static void
fusion_gone (const M2iIrCompiledModel *cm, const gint *gone, gint n, gint v, gboolean *keep,
    gint *remap)
{
  for (gint k = 0; k < n; k++) {
    if (gone[k] < 0)
      continue;
    const CmStep *t = &g_array_index (cm->steps, CmStep, gone[k]);
    keep[t->node] = FALSE;
    remap[t->out_values[0]] = v;
  }
}

/* Drops the steps of the nodes @keep says are fused into others; their
 * readers (and Results) read the value @remap names instead. */
static void
drop_fused (M2iIrCompiledModel *cm, const gboolean *keep, const gint *remap)
{
  ir_compile_keep_steps (cm, keep);
  for (guint si = 0; si < cm->steps->len; si++) {
    CmStep *s = &g_array_index (cm->steps, CmStep, si);
    for (gint i = 0; i < s->ctx.n_inputs; i++)
      s->in_values[i] = remap[s->in_values[i]];
  }
  for (guint i = 0; i < cm->model->results->len; i++)
    cm->output_values[i] = remap[cm->output_values[i]];
}

/* Convolution / GroupConvolution / MatMul → Add(per-channel constant) →
 * ReLU (or, for convolutions, Swish), each read only by the next: the layer
 * adds the bias and applies ReLU as it stores (ir_k_fuse_bias_relu,
 * bit-identical to the separate layers) or Swish right after
 * (ir_k_fuse_swish, bit-identical too), the Add and activation steps go,
 * and their readers read the layer's output instead. */
static void
fuse_epilogues (M2iIrCompiledModel *cm)
{
  g_autofree gboolean *keep = NULL;
  g_autofree gint *remap = NULL;
  fusion_maps (cm, &keep, &remap);
  gboolean any = FALSE;
  for (guint si = 0; si < cm->steps->len; si++) {
    CmStep *a = &g_array_index (cm->steps, CmStep, si);
    if (a->kernel == &ir_kernel_add) {
      any |= keep[a->node] && fuse_add_relu (cm, si, keep, remap);
      continue;
    }
    gboolean matmul = a->kernel == &ir_kernel_matmul;
    if ((!matmul && a->kernel != &ir_kernel_convolution &&
        a->kernel != &ir_kernel_group_convolution) || a->reinfer || a->ctx.dynamic_outputs)
      continue;
    gint v = a->out_values[0];
    const M2iShape *out = &cm->values[v].t.shape;
    if (a->ctx.n_outputs != 1 || cm->values[v].t.type != M2I_ET_F32 || out->rank < 2)
      continue;
    gint axis = matmul ? out->rank - 1 : 1;
    const float *bias = NULL;
    gint b = ir_compile_only_reader (cm, v, si), relu_step = -1, swish_step = -1;
    float beta = 1.0f;
    if (b < 0)
      continue;
    const CmStep *bs = &g_array_index (cm->steps, CmStep, b);
    if (bs->reinfer)
      continue;
    if (bs->kernel == &ir_kernel_add && bs->ctx.n_inputs == 2 &&
        m2i_shape_equal (&cm->values[bs->out_values[0]].t.shape, out)) {
      const char *mode = m2i_ir_node_get_attr (bs->ctx.node, "auto_broadcast");
      gint other = bs->in_values[0] == v ? bs->in_values[1] : bs->in_values[0];
      if (!mode || !g_ascii_strcasecmp (mode, "numpy"))
        bias = channel_bias (&cm->values[other], out, axis, out->dims[axis]);
      if (!bias)
        continue;
      gint c = ir_compile_only_reader (cm, bs->out_values[0], b);
      if (c >= 0 && g_array_index (cm->steps, CmStep, c).kernel == &ir_kernel_relu &&
          !g_array_index (cm->steps, CmStep, c).reinfer)
        relu_step = c;
      else if (c >= 0 && !matmul && swish_beta (cm, c, &beta))
        swish_step = c;
    } else if (bs->kernel == &ir_kernel_relu) {
      relu_step = b;
      b = -1;
    } else if (!matmul && swish_beta (cm, b, &beta)) {
      swish_step = b;
      b = -1;
    } else
      continue;
    GError *e = NULL;
    if (!ir_k_fuse_bias_relu (&a->ctx, bias, bias ? out->dims[axis] : 0, relu_step >= 0, &e)) {
      g_clear_error (&e);                      /* not fusable: the layers run */
      continue;
    }
    if (swish_step >= 0 && !ir_k_fuse_swish (&a->ctx, beta, &e)) {
      g_clear_error (&e);                      /* the Swish runs by itself */
      swish_step = -1;
    }
    /* the Add and the activation go; whoever read them reads the layer */
    const gint gone[3] = { b, relu_step, swish_step };
    fusion_gone (cm, gone, 3, v, keep, remap);
    any = TRUE;
  }
  if (any)
    drop_fused (cm, keep, remap);
}

/* Step @si reading @v and a per-channel f32 constant: its kernel is
 * @kernel (Add or Multiply), numpy broadcast, its output shaped as @v. The
 * constant's values, or NULL. */
static const float *
channel_operand (const M2iIrCompiledModel *cm, gint si, gint v, const M2iOpKernel *kernel)
{
  const CmStep *s = &g_array_index (cm->steps, CmStep, si);
  const M2iShape *out = &cm->values[v].t.shape;
  if (s->kernel != kernel || s->reinfer || s->ctx.dynamic_outputs || s->ctx.n_inputs != 2 ||
      s->ctx.n_outputs != 1 || cm->values[s->out_values[0]].t.type != M2I_ET_F32 ||
      !m2i_shape_equal (&cm->values[s->out_values[0]].t.shape, out))
    return NULL;
  const char *mode = m2i_ir_node_get_attr (s->ctx.node, "auto_broadcast");
  if (mode && g_ascii_strcasecmp (mode, "numpy"))
    return NULL;
  gint other = s->in_values[0] == v ? s->in_values[1] : s->in_values[0];
  return channel_bias (&cm->values[other], out, 1, out->dims[1]);
}

/* Add or Multiply (f32, two runtime inputs, or one and a constant) →
 * Multiply (per-channel constant) → Add (per-channel constant, maybe with
 * its ReLU fused), each read only by the next — a batch normalization
 * after a residual sum, or a model's input scaling — or the first two
 * only, or Add or Multiply → Add: the first layer multiplies, adds and
 * applies ReLU as it stores (ir_k_fuse_channel_affine, bit-identical),
 * the others go and their readers read the first. Three passes over the
 * tensor become one (vehicle-attributes-recognition-barrier-0039: three
 * such chains, 8 of its 25 layers). */
static void
fuse_channel_affine (M2iIrCompiledModel *cm)
{
  g_autofree gboolean *keep = NULL;
  g_autofree gint *remap = NULL;
  fusion_maps (cm, &keep, &remap);
  gboolean any = FALSE;
  for (guint si = 0; si < cm->steps->len; si++) {
    CmStep *a = &g_array_index (cm->steps, CmStep, si);
    if ((a->kernel != &ir_kernel_add && a->kernel != &ir_kernel_multiply) || a->reinfer ||
        a->ctx.dynamic_outputs || a->ctx.n_outputs != 1 || !keep[a->node])
      continue;
    gint v = a->out_values[0];
    const M2iShape *out = &cm->values[v].t.shape;
    if (cm->values[v].t.type != M2I_ET_F32 || out->rank < 2 || out->dims[1] < 1)
      continue;
    gint r1 = ir_compile_only_reader (cm, v, si), r2 = -1;
    if (r1 < 0)
      continue;
    const float *scale = channel_operand (cm, r1, v, &ir_kernel_multiply), *shift = NULL;
    gint last = r1;
    if (scale) {
      gint v1 = g_array_index (cm->steps, CmStep, r1).out_values[0];
      r2 = ir_compile_only_reader (cm, v1, r1);
      shift = r2 >= 0 ? channel_operand (cm, r2, v1, &ir_kernel_add) : NULL;
      if (shift)
        last = r2;
      else
        r2 = -1;
    } else {
      shift = channel_operand (cm, r1, v, &ir_kernel_add);
      if (!shift)
        continue;
    }
    const CmStep *ls = &g_array_index (cm->steps, CmStep, last);
    gboolean relu = shift && ir_k_add_applies_relu (&ls->ctx);
    GError *e = NULL;
    if (!ir_k_fuse_channel_affine (&a->ctx, scale, shift, out->dims[1], relu, &e)) {
      g_clear_error (&e);                      /* not fusable: the layers run */
      continue;
    }
    const gint gone[2] = { r1, r2 };
    fusion_gone (cm, gone, 2, v, keep, remap);
    any = TRUE;
  }
  if (any)
    drop_fused (cm, keep, remap);
}

static void
plan_memory (M2iIrCompiledModel *cm, const gboolean *needed, gboolean int8)
{
  /* drop the layers no Result reads, then the ones fused into others */
  ir_compile_keep_steps (cm, needed);
  fuse_epilogues (cm);
  fuse_channel_affine (cm);
  if (int8)
    ir_lowp_fold (cm);
  gint n_steps = cm->steps->len;

  /* values some layer or Result reads */
  g_autofree gboolean *read = g_new0 (gboolean, MAX (cm->n_values, 1));
  for (gint si = 0; si < n_steps; si++) {
    const CmStep *s = &g_array_index (cm->steps, CmStep, si);
    for (gint i = 0; i < s->ctx.n_inputs; i++)
      read[s->in_values[i]] = TRUE;
  }
  for (guint i = 0; i < cm->model->results->len; i++)
    read[cm->output_values[i]] = TRUE;

  /* one buffer group per runtime value; views join their input's group */
  cm->groups = g_new0 (CmGroup, MAX (cm->n_values, 1));
  for (gint v = 0; v < cm->n_values; v++)
    cm->values[v].group = -1;
  for (guint i = 0; i < cm->model->parameters->len; i++) {
    CmValue *v = &cm->values[cm->input_values[i]];
    v->group = cm->n_groups;
    cm->groups[cm->n_groups++] = (CmGroup) { m2i_tensor_nbytes (&v->t), 0, -1, n_steps };
  }
  for (gint si = 0; si < n_steps; si++) {
    CmStep *s = &g_array_index (cm->steps, CmStep, si);
    for (gint i = 0; i < s->ctx.n_inputs; i++) {
      CmValue *v = &cm->values[s->in_values[i]];
      if (v->group >= 0)
        cm->groups[v->group].last = MAX (cm->groups[v->group].last, si);
    }
    gboolean view = s->ctx.n_inputs > 0 && s->ctx.n_outputs == 1 &&
        cm->values[s->in_values[0]].group >= 0 && ir_kernel_is_view (s->kernel, &s->ctx) &&
        m2i_tensor_nbytes (&s->ctx.outputs[0]) == m2i_tensor_nbytes (&s->ctx.inputs[0]);
    for (gint p = 0; p < s->ctx.n_outputs; p++) {
      CmValue *v = &cm->values[s->out_values[p]];
      if (v->dyn >= 0)
        continue;                /* a buffer of its own in each request */
      if (view) {
        v->group = cm->values[s->in_values[0]].group;
        continue;
      }
      if (p > 0 && !read[s->out_values[p]])
        continue;                /* no memory: the kernel skips it (m2i-ir-op.h) */
      v->group = cm->n_groups;
      cm->groups[cm->n_groups++] = (CmGroup) { m2i_tensor_nbytes (&v->t), 0, si, si };
    }
  }
  for (guint i = 0; i < cm->model->results->len; i++) {
    CmValue *v = &cm->values[cm->output_values[i]];
    if (v->group >= 0)
      cm->groups[v->group].last = n_steps;    /* outputs outlive the inference */
  }
  compute_in_place (cm, n_steps);
  cm->arena_bytes = base_arena_place (cm->groups, cm->n_groups, ALIGN);
  cm->scratch_bytes = 0;
  for (gint si = 0; si < n_steps; si++)
    cm->scratch_bytes = MAX (cm->scratch_bytes,
        m2i_align_up (g_array_index (cm->steps, CmStep, si).ctx.scratch_bytes, ALIGN));
}

/* Marks the layers some Result depends on. */
static gboolean *
needed_nodes (const M2iIrModel *m)
{
  gint n = m->nodes->len;
  gboolean *needed = g_new0 (gboolean, MAX (n, 1));
  for (gint i = n - 1; i >= 0; i--) {
    const M2iIrNode *node = g_ptr_array_index (m->nodes, m->topo[i]);
    if (!strcmp (node->type, "Result"))
      needed[node->index] = TRUE;
    if (!needed[node->index])
      continue;
    for (gint p = 0; p < node->n_inputs; p++)
      needed[node->sources[p].node->index] = TRUE;
  }
  return needed;
}

M2iIrCompiledModel *
m2i_ir_compile (M2iIrModel *model, const M2iIrCompileOptions *options, GError **error)
{
  g_return_val_if_fail (model != NULL, NULL);
  M2iIrCompileOptions defaults = { 0 };
  if (!options)
    options = &defaults;
  M2iIrCompiledModel *cm = g_new0 (M2iIrCompiledModel, 1);
  cm->ref_count = 1;
  cm->model = m2i_ir_model_ref (model);
  cm->n_threads = options->n_threads > 0 ? options->n_threads : m2i_parallel_n_cores ();
  cm->steps = g_array_new (FALSE, FALSE, sizeof (CmStep));
  M2iOpRegistry *reg = options->registry ? options->registry : m2i_op_registry_get_default ();
  if (options->plugin_paths && options->plugin_paths[0]) {
    cm->registry_owned = reg = m2i_op_registry_new (reg);
    for (gint i = 0; options->plugin_paths[i]; i++) {
      if (!m2i_op_registry_load_plugin (reg, options->plugin_paths[i], error)) {
        m2i_ir_compiled_model_unref (cm);
        return NULL;
      }
    }
  }
  gint n_nodes = model->nodes->len;
  cm->value_base = g_new (gint, MAX (n_nodes, 1));
  for (gint i = 0; i < n_nodes; i++) {
    cm->value_base[i] = cm->n_values;
    cm->n_values += ((M2iIrNode *) g_ptr_array_index (model->nodes, i))->n_outputs;
  }
  cm->values = g_new0 (CmValue, MAX (cm->n_values, 1));
  for (gint v = 0; v < cm->n_values; v++)
    cm->values[v].dyn = -1;
  cm->input_values = g_new0 (gint, MAX (model->parameters->len, 1));
  cm->output_values = g_new0 (gint, MAX (model->results->len, 1));
  gsize max_folded = options->max_folded_bytes ? options->max_folded_bytes : DEFAULT_MAX_FOLDED;
  Budget budget = { options->max_memory ? options->max_memory : M2I_IR_DEFAULT_MAX_MEMORY, 0 };
  cm->max_dynamic_bytes = options->max_dynamic_bytes ? options->max_dynamic_bytes :
      DEFAULT_MAX_DYNAMIC;
  if (!check_kernels (model, reg, error)) {
    m2i_ir_compiled_model_unref (cm);
    return NULL;
  }
  /* values some layer or Result reads, as the file says */
  g_autofree gboolean *read = g_new0 (gboolean, MAX (cm->n_values, 1));
  for (gint i = 0; i < n_nodes; i++) {
    const M2iIrNode *n = g_ptr_array_index (model->nodes, i);
    for (gint p = 0; p < n->n_inputs; p++)
      read[cm->value_base[n->sources[p].node->index] + n->sources[p].port] = TRUE;
  }

  for (gint i = 0; i < n_nodes; i++) {
    const M2iIrNode *n = g_ptr_array_index (model->nodes, model->topo[i]);
    if (!bind_node (cm, reg, n, max_folded, read, &budget, error)) {
      /* kernels name the layer; the file and line say where it is */
      if (n->line > 0)
        g_prefix_error (error, "%s:%d: ", model->xml_path, n->line);
      m2i_ir_compiled_model_unref (cm);
      return NULL;
    }
  }
  for (guint i = 0; i < model->results->len; i++) {
    const M2iIrNode *r = g_ptr_array_index (model->results, i);
    cm->output_values[i] = cm->value_base[r->sources[0].node->index] + r->sources[0].port;
  }
  g_autofree gboolean *needed = needed_nodes (model);
  plan_memory (cm, needed, ir_lowp_enabled (options));
  /* a request allocates its arena and scratch: refused here, not there */
  guint64 request = (guint64) cm->arena_bytes + cm->scratch_bytes;
  if (request > budget.limit - MIN (budget.folded, budget.limit)) {
    g_autofree gchar *a = format_bytes (cm->arena_bytes);
    g_autofree gchar *sc = format_bytes (cm->scratch_bytes);
    g_autofree gchar *f = format_bytes (budget.folded);
    limit_error (error, NULL, budget.limit, "%s: an inference needs %s of buffers and %s of "
        "scratch, besides %s of constants computed at compile time", model->xml_path, a, sc, f);
    m2i_ir_compiled_model_unref (cm);
    return NULL;
  }
  return cm;
}
