/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* DepthToSpace-1, SpaceToDepth-1, ShuffleChannels-1 and ReorgYolo-1:
 * permutations of the elements, any element type (moved as bytes).
 *
 * Each spec defines its op as reshape → transpose → reshape; infer() builds
 * exactly that transpose (the reshaped input's dims and the permutation)
 * as a plan of permute.c, which execute() runs.
 */
#include "kernels-private.h"

#include <string.h>

static gboolean
perm_execute (M2iOpContext *ctx, GError **error)
{
  ir_k_perm_run (ctx, ctx->state, ctx->inputs[0].data, ctx->outputs[0].data);
  return TRUE;
}

/* Builds the plan into ctx->state and sets the output. */
static gboolean
perm_finish (M2iOpContext *ctx, gint rank, const gint64 *dims, const gint *perm,
    const M2iShape *out, GError **error)
{
  IrKPerm *p = g_new0 (IrKPerm, 1);
  ir_k_perm_plan (p, rank, dims, perm, m2i_element_type_size (ctx->inputs[0].type));
  if (p->rows > G_MAXINT) {
    g_free (p);
    m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, ctx->node, "the tensor %s is too large",
        ir_k_shape_str (out, 0));
    return FALSE;
  }
  ctx->state = p;
  ctx->outputs[0].type = ctx->inputs[0].type;
  ctx->outputs[0].shape = *out;
  return TRUE;
}

static gboolean
block_attrs (M2iOpContext *ctx, gint64 *bs, gboolean *blocks_first, GError **error)
{
  static const char *const modes[] = { "blocks_first", "depth_first", NULL };
  gint mode;
  if (!ir_k_check_arity (ctx, 1, 1, 1, 1, error) ||
      !m2i_ir_node_attr_int (ctx->node, "block_size", 1, bs, error))
    return FALSE;
  if (!ir_k_require_attrs (ctx, error, "mode", NULL) ||
      !m2i_ir_node_attr_enum (ctx->node, "mode", "blocks_first", modes, &mode, error))
    return FALSE;
  *blocks_first = mode == 0;
  if (*bs < 1) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "block_size %" G_GINT64_FORMAT " must be positive", *bs);
    return FALSE;
  }
  if (ctx->inputs[0].shape.rank < 3) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "the input %s must have rank 3 or more ([N, C, D1, ...])",
        ir_k_shape_str (&ctx->inputs[0].shape, 0));
    return FALSE;
  }
  return TRUE;
}

/* ---- DepthToSpace-1 ------------------------------------------------------- */

static gboolean
depth_to_space_infer (M2iOpContext *ctx, GError **error)
{
  gint64 bs;
  gboolean blocks_first;
  if (!block_attrs (ctx, &bs, &blocks_first, error))
    return FALSE;
  const M2iShape *in = &ctx->inputs[0].shape;
  gint k = in->rank - 2;
  gint64 blocks = 1;
  for (gint i = 0; i < k && blocks <= G_MAXINT64 / bs; i++)
    blocks *= bs;
  if (in->dims[1] % blocks || blocks > G_MAXINT32) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "the depth %" G_GINT64_FORMAT " of %s does not divide by block_size^%d = %"
        G_GINT64_FORMAT, in->dims[1], ir_k_shape_str (in, 0), k, blocks);
    return FALSE;
  }
  gint64 c = in->dims[1] / blocks;
  gint64 dims[IR_K_PERM_MAX_RANK];
  gint perm[IR_K_PERM_MAX_RANK];
  /* blocks_first: [N, bs..., C', D...]; depth_first: [N, C', bs..., D...] */
  gint c_axis = blocks_first ? k + 1 : 1, b0 = blocks_first ? 1 : 2;
  dims[0] = in->dims[0];
  dims[c_axis] = c;
  for (gint i = 0; i < k; i++) {
    dims[b0 + i] = bs;
    dims[k + 2 + i] = in->dims[2 + i];
  }
  perm[0] = 0;
  perm[1] = c_axis;
  for (gint i = 0; i < k; i++) {
    perm[2 + 2 * i] = k + 2 + i;
    perm[3 + 2 * i] = b0 + i;
  }
  M2iShape out = *in;
  out.dims[1] = c;
  for (gint i = 0; i < k; i++) {
    if (in->dims[2 + i] > G_MAXINT64 / bs) {
      m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, ctx->node, "output too large");
      return FALSE;
    }
    out.dims[2 + i] = in->dims[2 + i] * bs;
  }
  return perm_finish (ctx, 2 * k + 2, dims, perm, &out, error);
}

const M2iOpKernel ir_kernel_depth_to_space = {
  "DepthToSpace", "opset1", depth_to_space_infer, perm_execute, g_free
};

/* ---- SpaceToDepth-1 ------------------------------------------------------- */

static gboolean
space_to_depth_infer (M2iOpContext *ctx, GError **error)
{
  gint64 bs;
  gboolean blocks_first;
  if (!block_attrs (ctx, &bs, &blocks_first, error))
    return FALSE;
  const M2iShape *in = &ctx->inputs[0].shape;
  gint k = in->rank - 2;
  gint64 dims[IR_K_PERM_MAX_RANK];
  gint perm[IR_K_PERM_MAX_RANK];
  M2iShape out = *in;
  gint64 blocks = 1;
  /* [N, C, D1/bs, bs, D2/bs, bs, ...] */
  dims[0] = in->dims[0];
  dims[1] = in->dims[1];
  for (gint i = 0; i < k; i++) {
    if (in->dims[2 + i] % bs) {
      m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
          "spatial dimension %d of %s does not divide by block_size %" G_GINT64_FORMAT, 2 + i,
          ir_k_shape_str (in, 0), bs);
      return FALSE;
    }
    dims[2 + 2 * i] = in->dims[2 + i] / bs;
    dims[3 + 2 * i] = bs;
    out.dims[2 + i] = in->dims[2 + i] / bs;
    if (blocks > G_MAXINT32 / bs) {
      m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, ctx->node, "block_size^%d is too large",
          k);
      return FALSE;
    }
    blocks *= bs;
  }
  if (in->dims[1] > G_MAXINT64 / blocks) {
    m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, ctx->node, "output too large");
    return FALSE;
  }
  out.dims[1] = in->dims[1] * blocks;
  /* blocks_first: [N, bs..., C, D/bs...]; depth_first: [N, C, bs..., D/bs...] */
  gint n = 0;
  perm[n++] = 0;
  if (!blocks_first)
    perm[n++] = 1;
  for (gint i = 0; i < k; i++)
    perm[n++] = 3 + 2 * i;
  if (blocks_first)
    perm[n++] = 1;
  for (gint i = 0; i < k; i++)
    perm[n++] = 2 + 2 * i;
  return perm_finish (ctx, 2 * k + 2, dims, perm, &out, error);
}

const M2iOpKernel ir_kernel_space_to_depth = {
  "SpaceToDepth", "opset1", space_to_depth_infer, perm_execute, g_free
};

/* ---- ShuffleChannels-1 ---------------------------------------------------- */

static gboolean
shuffle_channels_infer (M2iOpContext *ctx, GError **error)
{
  gint64 axis, group;
  if (!ir_k_check_arity (ctx, 1, 1, 1, 1, error) ||
      !m2i_ir_node_attr_int (ctx->node, "axis", 1, &axis, error) ||
      !m2i_ir_node_attr_int (ctx->node, "group", 1, &group, error))
    return FALSE;
  const M2iShape *in = &ctx->inputs[0].shape;
  if (in->rank < 1) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "the input must have rank 1 or more");
    return FALSE;
  }
  if (!ir_k_axis (ctx, axis, in->rank, TRUE, "axis", &axis, error))
    return FALSE;
  if (group < 1 || group > MAX (in->dims[axis], 1) || in->dims[axis] % group) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "group %" G_GINT64_FORMAT " must be in [1, %" G_GINT64_FORMAT "] and divide dimension %"
        G_GINT64_FORMAT " of %s", group, in->dims[axis], axis, ir_k_shape_str (in, 0));
    return FALSE;
  }
  gint64 dims[4] = { 1, group, in->dims[axis] / group, 1 };
  for (gint a = 0; a < axis; a++)
    dims[0] *= in->dims[a];
  for (gint a = (gint) axis + 1; a < in->rank; a++)
    dims[3] *= in->dims[a];
  static const gint perm[4] = { 0, 2, 1, 3 };
  return perm_finish (ctx, 4, dims, perm, in, error);
}

const M2iOpKernel ir_kernel_shuffle_channels = {
  "ShuffleChannels", "opset1", shuffle_channels_infer, perm_execute, g_free
};

/* ---- ReorgYolo-1 ---------------------------------------------------------- */

/* Darknet's reorg as OpenVINO's reference runs it: the input [N, C, H, W]
 * is read as [N, C/s², H·s, W·s] and written in the output's order, i.e.
 * output element (n, (i·s + j)·C/s² + c, h, w) of the [N, C, H, W]-shaped
 * walk is input (n, c, h·s + i, w·s + j) of the [N, C/s², H·s, W·s] view.
 * As a transpose: the input viewed as [N, C/s², H, s, W, s] (H, W the
 * input's) with the axes in the order n, i, j, c, h, w. */
static gboolean
reorg_yolo_infer (M2iOpContext *ctx, GError **error)
{
  gint64 stride;
  if (!ir_k_check_arity (ctx, 1, 1, 1, 1, error) ||
      !ir_k_check_rank (ctx, 0, 4, 4, error))
    return FALSE;
  if (!ir_k_require_attrs (ctx, error, "stride", NULL) ||
      !m2i_ir_node_attr_int (ctx->node, "stride", 1, &stride, error))
    return FALSE;
  const M2iShape *in = &ctx->inputs[0].shape;
  if (stride < 1 || stride > 4096 || in->dims[1] % (stride * stride) || in->dims[1] == 0 ||
      in->dims[2] % stride || in->dims[3] % stride) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "stride %" G_GINT64_FORMAT " must be positive, its square divide the channels and it "
        "divide the height and width of %s", stride, ir_k_shape_str (in, 0));
    return FALSE;
  }
  gint64 dims[6] = { in->dims[0], in->dims[1] / (stride * stride), in->dims[2], stride,
    in->dims[3], stride };
  static const gint perm[6] = { 0, 3, 5, 1, 2, 4 };
  M2iShape out = { 4, { in->dims[0], in->dims[1] * stride * stride, in->dims[2] / stride,
    in->dims[3] / stride } };
  return perm_finish (ctx, 6, dims, perm, &out, error);
}

const M2iOpKernel ir_kernel_reorg_yolo = {
  "ReorgYolo", "opset1", reorg_yolo_infer, perm_execute, g_free
};
