/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* RegionYolo-1: the activations of YOLO v2 ("region", do_softmax true) and
 * YOLO v3 ("yolo", do_softmax false) output layers, f32 [N, C, H, W].
 *
 * The channels hold, per region, coords box entries, an objectness entry
 * and `classes` class entries, each an H×W plane. Both forms apply the
 * logistic sigmoid 1 / (1 + e^-x) to the box's x and y (entries 0 and 1)
 * and to the objectness; v3 also to every class entry, v2 replaces the
 * class entries by their softmax over the classes (per pixel, the maximum
 * subtracted first). Other entries are copied. v2 counts `num` regions and
 * flattens axes [axis, end_axis] of the output; v3 counts len(mask)
 * regions and keeps the shape. As OpenVINO's reference, in f32.
 */
#include "kernels-private.h"

#include <math.h>
#include <string.h>

typedef struct {
  gint64 batch, regions, coords, classes, plane;
  gboolean softmax;
} RegionState;

static gboolean
region_infer (M2iOpContext *ctx, GError **error)
{
  if (!ir_k_check_arity (ctx, 1, 1, 1, 1, error) || !ir_k_check_f32 (ctx, 0, error) ||
      !ir_k_check_rank (ctx, 0, 4, 4, error))
    return FALSE;
  if (!ir_k_require_attrs (ctx, error, "coords", "classes", "num", NULL))
    return FALSE;
  gint64 coords, classes, num, axis, end_axis, mask[256];
  gint n_mask;
  gboolean softmax;
  if (!m2i_ir_node_attr_int (ctx->node, "coords", 4, &coords, error) ||
      !m2i_ir_node_attr_int (ctx->node, "classes", 0, &classes, error) ||
      !m2i_ir_node_attr_int (ctx->node, "num", 1, &num, error) ||
      !m2i_ir_node_attr_int (ctx->node, "axis", 1, &axis, error) ||
      !m2i_ir_node_attr_int (ctx->node, "end_axis", 3, &end_axis, error) ||
      !m2i_ir_node_attr_bool (ctx->node, "do_softmax", TRUE, &softmax, error) ||
      !m2i_ir_node_attr_ints (ctx->node, "mask", mask, G_N_ELEMENTS (mask), &n_mask, error))
    return FALSE;
  const M2iShape *in = &ctx->inputs[0].shape;
  gint64 regions = softmax ? num : MAX (n_mask, 0);
  if (coords < 2 || classes < 0 || coords > 1024 || classes > 1 << 20 || regions < 1 ||
      regions > 1 << 20 || in->dims[1] != regions * (coords + classes + 1)) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "the input %s must have %s × (coords + classes + 1) channels (coords %" G_GINT64_FORMAT
        ", classes %" G_GINT64_FORMAT ", %s %" G_GINT64_FORMAT ")", ir_k_shape_str (in, 0),
        softmax ? "num" : "len(mask)", coords, classes, softmax ? "num" : "len(mask)", regions);
    return FALSE;
  }
  RegionState s = { in->dims[0], regions, coords, classes, in->dims[2] * in->dims[3], softmax };
  M2iShape out = *in;
  if (softmax) {
    if (!ir_k_axis (ctx, axis, 4, TRUE, "axis", &axis, error) ||
        !ir_k_axis (ctx, end_axis, 4, TRUE, "end_axis", &end_axis, error))
      return FALSE;
    if (end_axis < axis) {
      m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
          "end_axis %" G_GINT64_FORMAT " comes before axis %" G_GINT64_FORMAT, end_axis, axis);
      return FALSE;
    }
    out.rank = 0;
    for (gint a = 0; a < 4; a++) {
      if (a > axis && a <= end_axis)
        out.dims[out.rank - 1] *= in->dims[a];
      else
        out.dims[out.rank++] = in->dims[a];
    }
  }
  ctx->outputs[0].type = M2I_ET_F32;
  ctx->outputs[0].shape = out;
  ctx->state = g_memdup2 (&s, sizeof s);
  return TRUE;
}

static void
sigmoid_run (float *p, gint64 n)
{
  for (gint64 i = 0; i < n; i++)
    p[i] = 1.0f / (1.0f + expf (-p[i]));
}

static gboolean
region_execute (M2iOpContext *ctx, GError **error)
{
  const RegionState *s = ctx->state;
  const float *in = ctx->inputs[0].data;
  float *out = ctx->outputs[0].data;
  gint64 entries = s->coords + s->classes + 1, plane = s->plane;
  memcpy (out, in, m2i_tensor_nbytes (&ctx->inputs[0]));
  for (gint64 b = 0; b < s->batch; b++)
    for (gint64 r = 0; r < s->regions; r++) {
      float *reg = out + (b * s->regions + r) * entries * plane;
      sigmoid_run (reg, 2 * plane);                       /* x, y */
      /* objectness, and for v3 the classes after it */
      sigmoid_run (reg + s->coords * plane, (s->softmax ? 1 : 1 + s->classes) * plane);
      if (!s->softmax)
        continue;
      const float *src = in + (b * s->regions + r) * entries * plane + (s->coords + 1) * plane;
      float *dst = reg + (s->coords + 1) * plane;
      for (gint64 i = 0; i < plane; i++) {
        float max = src[i];
        for (gint64 c = 0; c < s->classes; c++)
          max = MAX (max, src[c * plane + i]);
        float sum = 0;
        for (gint64 c = 0; c < s->classes; c++) {
          dst[c * plane + i] = expf (src[c * plane + i] - max);
          sum += dst[c * plane + i];
        }
        for (gint64 c = 0; c < s->classes; c++)
          dst[c * plane + i] /= sum;
      }
    }
  return TRUE;
}

const M2iOpKernel ir_kernel_region_yolo = {
  "RegionYolo", "opset1", region_infer, region_execute, g_free
};
