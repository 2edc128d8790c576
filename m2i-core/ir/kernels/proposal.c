/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Proposal-1 and Proposal-4 (Faster R-CNN's region proposals), f32.
 *
 * Anchors: for each ratio and scale (ratio-major), a box of base_size
 * reshaped to the ratio (width round(sqrt(base² / ratio)), height round(
 * width · ratio); unrounded for framework "tensorflow") and scaled, centred
 * on the base box. Every cell (h, w) of the score map places each anchor
 * at (w, h)·feat_stride (tensorflow: (h, w), boxes clipped to the image
 * first), applies the deltas [dx, dy, dlog w, dlog h] (divided by
 * box_coordinate_scale and box_size_scale) to its centre and size,
 * optionally clips it to the image (clip_before_nms), and scores it with
 * the foreground probability (channels K..2K-1), 0 when smaller than
 * min_size · image scale. The pre_nms_topn best (score descending, then
 * the order h, w, anchor: a stable sort) go through greedy NMS (IOU with
 * the +1 pixel convention except for tensorflow, a box dies above
 * nms_thresh); at most post_nms_topn survive, each written as [batch, x0,
 * y0, x1, y1], optionally clipped (clip_after_nms) and normalised by the
 * image size. Rows past the last are zero, the first of them starting with
 * -1; Proposal-4's second output holds the scores (0 past the last).
 * As OpenVINO's reference. Working memory is scratch sized in infer().
 */
#include "kernels-private.h"
#include "heap-sort.h"

#include <math.h>
#include <string.h>

#define MAX_ANCHOR_PARAMS 64

typedef struct {
  float x0, y0, x1, y1, score;
  gint32 index;              /* h, w, anchor order: ties in score keep it */
} PropBox;

static int
prop_order (const PropBox *a, const PropBox *b)
{
  if (a->score != b->score)
    return a->score > b->score ? -1 : 1;
  return (a->index > b->index) - (a->index < b->index);
}

M2I_K_HEAP (props, PropBox, prop_order)

typedef struct {
  gint64 batch, anchors, h, w, pre_nms, post_nms;
  float *anchor_boxes;                 /* [4][anchors]: x0, y0, x1, y1 */
  float nms_thresh, min_size, feat_stride, coord_scale, size_scale;
  gboolean tf, clip_before, clip_after, normalize, probs;
} PropState;

static void
prop_free (gpointer p)
{
  PropState *s = p;
  if (s)
    g_free (s->anchor_boxes);
  g_free (s);
}

static gboolean
prop_infer (M2iOpContext *ctx, GError **error)
{
  gboolean v4 = ir_k_op_version (ctx) != 1;
  if (!ir_k_check_arity (ctx, 3, 3, 1, v4 ? 2 : 1, error) || !ir_k_check_f32 (ctx, 0, error) ||
      !ir_k_check_f32 (ctx, 1, error) || !ir_k_check_f32 (ctx, 2, error) ||
      !ir_k_check_rank (ctx, 0, 4, 4, error) || !ir_k_check_rank (ctx, 1, 4, 4, error))
    return FALSE;
  if (!ir_k_require_attrs (ctx, error, "base_size", "pre_nms_topn", "post_nms_topn",
          "nms_thresh", "feat_stride", "min_size", "ratio", "scale", NULL))
    return FALSE;
  gint64 base, pre, post;
  double nms, stride, min_size, cscale, sscale;
  float ratio[MAX_ANCHOR_PARAMS], scale[MAX_ANCHOR_PARAMS];
  gint n_ratio, n_scale;
  const char *fw = m2i_ir_node_get_attr (ctx->node, "framework");
  PropState *s = g_new0 (PropState, 1);
  if (!m2i_ir_node_attr_int (ctx->node, "base_size", 0, &base, error) ||
      !m2i_ir_node_attr_int (ctx->node, "pre_nms_topn", 0, &pre, error) ||
      !m2i_ir_node_attr_int (ctx->node, "post_nms_topn", 0, &post, error) ||
      !m2i_ir_node_attr_float (ctx->node, "nms_thresh", 0, &nms, error) ||
      !m2i_ir_node_attr_float (ctx->node, "feat_stride", 0, &stride, error) ||
      !m2i_ir_node_attr_float (ctx->node, "min_size", 0, &min_size, error) ||
      !m2i_ir_node_attr_floats (ctx->node, "ratio", ratio, MAX_ANCHOR_PARAMS, &n_ratio, error) ||
      !m2i_ir_node_attr_floats (ctx->node, "scale", scale, MAX_ANCHOR_PARAMS, &n_scale, error) ||
      !m2i_ir_node_attr_float (ctx->node, "box_coordinate_scale", 1, &cscale, error) ||
      !m2i_ir_node_attr_float (ctx->node, "box_size_scale", 1, &sscale, error) ||
      !m2i_ir_node_attr_bool (ctx->node, "clip_before_nms", TRUE, &s->clip_before, error) ||
      !m2i_ir_node_attr_bool (ctx->node, "clip_after_nms", FALSE, &s->clip_after, error) ||
      !m2i_ir_node_attr_bool (ctx->node, "normalize", FALSE, &s->normalize, error)) {
    prop_free (s);
    return FALSE;
  }
  if (fw && *fw && strcmp (fw, "tensorflow") && strcmp (fw, "caffe")) {
    prop_free (s);
    m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, ctx->node,
        "framework \"%s\" is not supported (\"\", \"caffe\" or \"tensorflow\")", fw);
    return FALSE;
  }
  s->tf = fw && !strcmp (fw, "tensorflow");
  const M2iShape *cs = &ctx->inputs[0].shape, *ds = &ctx->inputs[1].shape;
  gint64 numel_img = m2i_shape_numel (&ctx->inputs[2].shape);
  s->batch = cs->dims[0];
  s->anchors = cs->dims[1] / 2;
  s->h = cs->dims[2];
  s->w = cs->dims[3];
  gboolean ok = base > 0 && pre > 0 && post > 0 && post < G_MAXINT32 / 8 && n_ratio > 0 &&
      n_scale > 0 && stride > 0 && cscale > 0 && sscale > 0;
  if (!ok) {
    prop_free (s);
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "base_size, pre_nms_topn, post_nms_topn, feat_stride and the box scales must be "
        "positive, ratio and scale non-empty");
    return FALSE;
  }
  if (cs->dims[1] != 2 * (gint64) n_ratio * n_scale || ds->dims[0] != s->batch ||
      ds->dims[1] != 4 * s->anchors || ds->dims[2] != s->h || ds->dims[3] != s->w ||
      (numel_img != 3 && numel_img != 4 && numel_img != 3 * s->batch &&
          numel_img != 4 * s->batch)) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "class scores %s, deltas %s and image info %s do not fit %d ratios × %d scales: expected "
        "[N, 2K, H, W], [N, 4K, H, W] and 3 or 4 values", ir_k_shape_str (cs, 0),
        ir_k_shape_str (ds, 1), ir_k_shape_str (&ctx->inputs[2].shape, 2), n_ratio, n_scale);
    prop_free (s);
    return FALSE;
  }
  gint64 proposals = s->anchors * s->h * s->w;
  if (proposals > G_MAXINT32 / 2 || s->batch > G_MAXINT32 / post) {
    prop_free (s);
    m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, ctx->node, "the score map is too large");
    return FALSE;
  }
  s->pre_nms = MIN (pre, proposals);
  s->post_nms = post;
  s->nms_thresh = (float) nms;
  s->min_size = (float) min_size;
  s->feat_stride = (float) stride;
  s->coord_scale = (float) cscale;
  s->size_scale = (float) sscale;
  s->probs = v4 && ctx->n_outputs > 1;
  /* the anchors, ratio-major: [x0...][y0...][x1...][y1...] */
  s->anchor_boxes = g_new (float, 4 * s->anchors);
  float offset = s->tf ? 0.0f : 1.0f;
  float area = (float) (base * base), center = 0.5f * ((float) base - offset);
  for (gint r = 0; r < n_ratio; r++) {
    float rw = sqrtf (area / ratio[r]), rh = rw * ratio[r];
    if (!s->tf) {
      rw = roundf (rw);
      rh = roundf (rw * ratio[r]);
    }
    for (gint c = 0; c < n_scale; c++) {
      gint64 a = (gint64) r * n_scale + c;
      float sw = 0.5f * (rw * scale[c] - offset), sh = 0.5f * (rh * scale[c] - offset);
      float shift = s->tf ? (float) base * 0.5f : 0.0f;
      s->anchor_boxes[a] = center - sw - shift;
      s->anchor_boxes[s->anchors + a] = center - sh - shift;
      s->anchor_boxes[2 * s->anchors + a] = center + sw - shift;
      s->anchor_boxes[3 * s->anchors + a] = center + sh - shift;
    }
  }
  ctx->state = s;
  ctx->scratch_bytes = (gsize) proposals * sizeof (PropBox) + (gsize) s->pre_nms + 4 +
      (gsize) post * sizeof (gint32);
  ctx->outputs[0].type = M2I_ET_F32;
  ctx->outputs[0].shape = (M2iShape) { 2, { s->batch * post, 5 } };
  if (ctx->n_outputs > 1) {
    ctx->outputs[1].type = M2I_ET_F32;
    ctx->outputs[1].shape = (M2iShape) { 1, { s->batch * post } };
  }
  return TRUE;
}

static float
clampf (float v, float lo, float hi)
{
  return MAX (lo, MIN (v, hi));
}

static gboolean
prop_execute (M2iOpContext *ctx, GError **error)
{
  const PropState *s = ctx->state;
  const M2iTensor *info = &ctx->inputs[2];
  const float *im = info->data;
  gint64 n_info = m2i_shape_numel (&info->shape) / (m2i_shape_numel (&info->shape) > 4 ?
      s->batch : 1);
  gint64 plane = s->h * s->w, proposals = s->anchors * plane;
  PropBox *boxes = ctx->scratch;
  guint8 *dead = (guint8 *) (boxes + proposals);
  gint32 *kept = (gint32 *) (((guintptr) (dead + s->pre_nms) + 3) & ~(guintptr) 3);
  float offset = s->tf ? 0.0f : 1.0f;
  float *rois = ctx->outputs[0].data;
  float *probs = s->probs && ctx->outputs[1].data ? ctx->outputs[1].data : NULL;
  for (gint64 b = 0; b < s->batch; b++) {
    const float *imb = im + (m2i_shape_numel (&info->shape) > 4 ? b * n_info : 0);
    float img_h = imb[0], img_w = imb[1];
    float scale_h = imb[2], scale_w = n_info > 3 ? imb[3] : imb[2];
    float min_h = s->min_size * scale_h, min_w = s->min_size * scale_w;
    const float *score = (const float *) ctx->inputs[0].data + (b * 2 + 1) * proposals;
    const float *delta = (const float *) ctx->inputs[1].data + b * 4 * proposals;
    for (gint64 h = 0; h < s->h; h++)
      for (gint64 w = 0; w < s->w; w++)
        for (gint64 a = 0; a < s->anchors; a++) {
          float x = (float) ((s->tf ? h : w)) * s->feat_stride;
          float y = (float) ((s->tf ? w : h)) * s->feat_stride;
          gint64 p = h * s->w + w;
          float dx = delta[(a * 4 + 0) * plane + p] / s->coord_scale;
          float dy = delta[(a * 4 + 1) * plane + p] / s->coord_scale;
          float dw = delta[(a * 4 + 2) * plane + p] / s->size_scale;
          float dh = delta[(a * 4 + 3) * plane + p] / s->size_scale;
          float x0 = x + s->anchor_boxes[a], y0 = y + s->anchor_boxes[s->anchors + a];
          float x1 = x + s->anchor_boxes[2 * s->anchors + a];
          float y1 = y + s->anchor_boxes[3 * s->anchors + a];
          if (s->tf) {
            x0 = clampf (x0, 0, img_w);
            y0 = clampf (y0, 0, img_h);
            x1 = clampf (x1, 0, img_w);
            y1 = clampf (y1, 0, img_h);
          }
          float ww = x1 - x0 + offset, hh = y1 - y0 + offset;
          float cx = x0 + 0.5f * ww, cy = y0 + 0.5f * hh;
          float pcx = dx * ww + cx, pcy = dy * hh + cy;
          float pw = expf (dw) * ww, ph = expf (dh) * hh;
          x0 = pcx - 0.5f * pw;
          y0 = pcy - 0.5f * ph;
          x1 = pcx + 0.5f * pw;
          y1 = pcy + 0.5f * ph;
          if (s->clip_before) {
            x0 = clampf (x0, 0, img_w - offset);
            y0 = clampf (y0, 0, img_h - offset);
            x1 = clampf (x1, 0, img_w - offset);
            y1 = clampf (y1, 0, img_h - offset);
          }
          float bw = x1 - x0 + offset, bh = y1 - y0 + offset;
          gint64 i = p * s->anchors + a;
          boxes[i] = (PropBox) { x0, y0, x1, y1,
            (min_w <= bw && min_h <= bh) ? score[a * plane + p] : 0.0f, (gint32) i };
        }
    /* best first; NMS looks at the first pre_nms_topn */
    props_sort (boxes, proposals);
    memset (dead, 0, s->pre_nms);
    gint64 n_kept = 0;
    for (gint64 i = 0; i < s->pre_nms && n_kept < s->post_nms; i++) {
      if (dead[i])
        continue;
      kept[n_kept++] = (gint32) i;
      if (n_kept == s->post_nms)
        break;
      const PropBox *bi = &boxes[i];
      for (gint64 j = i + 1; j < s->pre_nms; j++) {
        const PropBox *bj = &boxes[j];
        float res = 0;
        if (bi->x0 <= bj->x1 && bi->y0 <= bj->y1 && bj->x0 <= bi->x1 && bj->y0 <= bi->y1) {
          float iw = MAX (0.0f, MIN (bi->x1, bj->x1) - MAX (bi->x0, bj->x0) + offset);
          float ih = MAX (0.0f, MIN (bi->y1, bj->y1) - MAX (bi->y0, bj->y0) + offset);
          float inter = iw * ih;
          float ai = (bi->x1 - bi->x0 + offset) * (bi->y1 - bi->y0 + offset);
          float aj = (bj->x1 - bj->x0 + offset) * (bj->y1 - bj->y0 + offset);
          res = inter / (ai + aj - inter);
        }
        if (s->nms_thresh < res)
          dead[j] = 1;
      }
    }
    float *r = rois + b * s->post_nms * 5;
    float *pr = probs ? probs + b * s->post_nms : NULL;
    for (gint64 k = 0; k < s->post_nms; k++) {
      if (k >= n_kept) {
        memset (r + k * 5, 0, 5 * sizeof (float));
        if (pr)
          pr[k] = 0;
        continue;
      }
      const PropBox *bx = &boxes[kept[k]];
      float x0 = bx->x0, y0 = bx->y0, x1 = bx->x1, y1 = bx->y1;
      if (s->clip_after) {
        x0 = clampf (x0, 0, img_w);
        y0 = clampf (y0, 0, img_h);
        x1 = clampf (x1, 0, img_w);
        y1 = clampf (y1, 0, img_h);
      }
      if (s->normalize) {
        x0 /= img_w;
        y0 /= img_h;
        x1 /= img_w;
        y1 /= img_h;
      }
      float *row = r + k * 5;
      row[0] = (float) b;
      row[1] = x0;
      row[2] = y0;
      row[3] = x1;
      row[4] = y1;
      if (pr)
        pr[k] = bx->score;
    }
    if (n_kept < s->post_nms)
      r[n_kept * 5] = -1.0f;
  }
  return TRUE;
}

const M2iOpKernel ir_kernel_proposal = {
  "Proposal", "opset1 opset4", prop_infer, prop_execute, prop_free
};
