/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A custom-op plugin for the tests (and the worked example of
 * docs/ir-runtime.md): "Cube" (y = x³, f32), an op no built-in kernel has,
 * under the custom version "m2i_test". */
#include <m2i-core/base/m2i-error.h>
#include <m2i-core/ir/m2i-ir-op.h>

#include <gmodule.h>

static gboolean
cube_infer (M2iOpContext *ctx, GError **error)
{
  if (ctx->n_inputs != 1 || ctx->n_outputs != 1 || ctx->inputs[0].type != M2I_ET_F32) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "Cube takes one f32 input and gives one output");
    return FALSE;
  }
  ctx->outputs[0].type = M2I_ET_F32;
  ctx->outputs[0].shape = ctx->inputs[0].shape;
  return TRUE;
}

static gboolean
cube_execute (M2iOpContext *ctx, GError **error)
{
  const float *x = ctx->inputs[0].data;
  float *y = ctx->outputs[0].data;
  gint64 n = m2i_shape_numel (&ctx->inputs[0].shape);
  for (gint64 i = 0; i < n; i++)
    y[i] = x[i] * x[i] * x[i];
  return TRUE;
}

static const M2iOpKernel cube_kernel = {
  .type = "Cube",
  .opsets = "m2i_test",
  .infer = cube_infer,
  .execute = cube_execute,
};

G_MODULE_EXPORT gboolean m2i_op_plugin_register (M2iOpRegistry *r, GError **error);

G_MODULE_EXPORT gboolean
m2i_op_plugin_register (M2iOpRegistry *r, GError **error)
{
#ifdef FAIL_TO_REGISTER
  /* the variant the tests use to check a refusing plugin */
  if (cube_kernel.type) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_UNSUPPORTED, "this plugin always refuses");
    return FALSE;
  }
#endif
  m2i_op_registry_add (r, &cube_kernel);
  return TRUE;
}
