/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ROIPooling-1 and ROIAlign-3/-9: a fixed-size feature map per region of
 * interest, f32 features [N, C, H, W].
 *
 * ROIPooling, method max: the box [batch, x1, y1, x2, y2] scaled by
 * spatial_scale and rounded, at least 1×1, cut into pooled_h × pooled_w
 * bins (start floor(i·size/pooled), end ceil((i+1)·size/pooled), clipped
 * to the map); each output is its bin's maximum, 0 for an empty bin.
 * Method bilinear: the box in [0, 1] coordinates spans (H-1, W-1); output
 * (i, j) samples the map bilinearly at start + i·size/(pooled-1) (the last
 * at the box's end, a single bin at its centre), 0 outside the map.
 *
 * ROIAlign: the box [x1, y1, x2, y2] of batch batch_indices[r], scaled by
 * spatial_scale (aligned_mode -9: asymmetric x·s, box at least 1×1;
 * half_pixel_for_nn x·s - 0.5; half_pixel (x + 0.5)·s - 0.5), cut into
 * bins of sampling_ratio² points (0: ceil(bin size) per axis) at the
 * centres of a regular grid; each point bilinearly interpolated (points
 * more than one pixel outside the map give 0, coordinates below 0 count as
 * 0, the last row/column repeats), the bin's output their average, or
 * their maximum (mode max). As OpenVINO's reference, except that max
 * starts from -inf, not 0 (the spec asks for the maximum), and adaptive
 * sampling takes at most 4 × the map's size points per axis. Batch
 * indices are data: one out of range stops the inference with an error;
 * NaN or huge box coordinates give zeros, never an overflow.
 */
#include "kernels-private.h"
#include "indices.h"

#include <math.h>
#include <string.h>

typedef struct {
  gint64 batch, channels, h, w, pooled_h, pooled_w, rois;
  float spatial_scale;
  gboolean bilinear;                   /* ROIPooling */
  gint sampling;                       /* ROIAlign */
  gboolean max;                        /* ROIAlign mode */
  gint aligned;                        /* 0 asymmetric, 1 half_pixel_for_nn, 2 half_pixel */
} RoiState;

static gboolean
roi_attrs (M2iOpContext *ctx, RoiState *s, GError **error)
{
  if (!ir_k_require_attrs (ctx, error, "pooled_h", "pooled_w", "spatial_scale", NULL))
    return FALSE;
  double scale;
  if (!m2i_ir_node_attr_int (ctx->node, "pooled_h", 1, &s->pooled_h, error) ||
      !m2i_ir_node_attr_int (ctx->node, "pooled_w", 1, &s->pooled_w, error) ||
      !m2i_ir_node_attr_float (ctx->node, "spatial_scale", 1, &scale, error))
    return FALSE;
  if (s->pooled_h < 1 || s->pooled_w < 1 || s->pooled_h > 1 << 16 || s->pooled_w > 1 << 16 ||
      !(scale > 0)) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "pooled_h %" G_GINT64_FORMAT ", pooled_w %" G_GINT64_FORMAT " and spatial_scale %g must "
        "be positive", s->pooled_h, s->pooled_w, scale);
    return FALSE;
  }
  s->spatial_scale = (float) scale;
  const M2iShape *fs = &ctx->inputs[0].shape;
  s->batch = fs->dims[0];
  s->channels = fs->dims[1];
  s->h = fs->dims[2];
  s->w = fs->dims[3];
  ctx->outputs[0].type = M2I_ET_F32;
  ctx->outputs[0].shape = (M2iShape) { 4, { s->rois, s->channels, s->pooled_h, s->pooled_w } };
  return TRUE;
}

/* A float box coordinate as an integer: NaN is 0 and huge values stop at
 * ±2^40, so hostile boxes cannot overflow the conversion. */
static gint64
coord_int (float v)
{
  if (!(v == v))
    return 0;
  return (gint64) CLAMP (v, -1099511627776.0f, 1099511627776.0f);
}

/* ---- ROIPooling-1 ---------------------------------------------------------- */

static gboolean
roi_pooling_infer (M2iOpContext *ctx, GError **error)
{
  static const char *const methods[] = { "max", "bilinear", NULL };
  if (!ir_k_check_arity (ctx, 2, 2, 1, 1, error) || !ir_k_check_f32 (ctx, 0, error) ||
      !ir_k_check_f32 (ctx, 1, error) || !ir_k_check_rank (ctx, 0, 4, 4, error))
    return FALSE;
  const M2iShape *rs = &ctx->inputs[1].shape;
  if (rs->rank != 2 || rs->dims[1] != 5) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "the boxes %s must be [NUM_ROIS, 5]", ir_k_shape_str (rs, 0));
    return FALSE;
  }
  RoiState s = { .rois = rs->dims[0] };
  gint method;
  if (!m2i_ir_node_attr_enum (ctx->node, "method", "max", methods, &method, error) ||
      !roi_attrs (ctx, &s, error))
    return FALSE;
  s.bilinear = method == 1;
  ctx->state = g_memdup2 (&s, sizeof s);
  return TRUE;
}

/* The box's batch index (a float in ROIPooling's boxes), checked. */
static gboolean
roi_batch (const M2iOpContext *ctx, const RoiState *s, double v, gint64 r, gint64 *out,
    GError **error)
{
  if (!(v >= 0 && v < (double) s->batch)) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "box %" G_GINT64_FORMAT " has batch index %g, outside [0, %" G_GINT64_FORMAT "]", r, v,
        s->batch - 1);
    return FALSE;
  }
  *out = (gint64) v;
  return TRUE;
}

static gboolean
roi_pooling_execute (M2iOpContext *ctx, GError **error)
{
  const RoiState *s = ctx->state;
  const float *fm = ctx->inputs[0].data, *rois = ctx->inputs[1].data;
  float *out = ctx->outputs[0].data;
  gint64 plane = s->h * s->w, ph_n = s->pooled_h, pw_n = s->pooled_w;
  for (gint64 r = 0; r < s->rois; r++) {
    const float *box = rois + r * 5;
    gint64 b;
    if (!roi_batch (ctx, s, box[0], r, &b, error))
      return FALSE;
    float *o = out + r * s->channels * ph_n * pw_n;
    const float *fb = fm + b * s->channels * plane;
    if (!s->bilinear) {
      gint64 ws = coord_int (roundf (box[1] * s->spatial_scale));
      gint64 hs = coord_int (roundf (box[2] * s->spatial_scale));
      gint64 we = coord_int (roundf (box[3] * s->spatial_scale));
      gint64 he = coord_int (roundf (box[4] * s->spatial_scale));
      gint64 rh = MAX (he - hs + 1, 1), rw = MAX (we - ws + 1, 1);
      float bin_h = (float) rh / (float) ph_n, bin_w = (float) rw / (float) pw_n;
      for (gint64 c = 0; c < s->channels; c++)
        for (gint64 i = 0; i < ph_n; i++)
          for (gint64 j = 0; j < pw_n; j++) {
            gint64 h0 = coord_int (floorf ((float) i * bin_h)) + hs;
            gint64 h1 = coord_int (ceilf ((float) (i + 1) * bin_h)) + hs;
            gint64 w0 = coord_int (floorf ((float) j * bin_w)) + ws;
            gint64 w1 = coord_int (ceilf ((float) (j + 1) * bin_w)) + ws;
            h0 = CLAMP (h0, 0, s->h);
            h1 = CLAMP (h1, 0, s->h);
            w0 = CLAMP (w0, 0, s->w);
            w1 = CLAMP (w1, 0, s->w);
            float m = (h1 <= h0 || w1 <= w0) ? 0.0f : -G_MAXFLOAT;
            for (gint64 y = h0; y < h1; y++)
              for (gint64 x = w0; x < w1; x++)
                m = MAX (fb[c * plane + y * s->w + x], m);
            o[(c * ph_n + i) * pw_n + j] = m;
          }
      continue;
    }
    float x1 = box[1], y1 = box[2], x2 = box[3], y2 = box[4];
    float hm1 = (float) (s->h - 1), wm1 = (float) (s->w - 1);
    float rh = (y2 - y1) * hm1, rw = (x2 - x1) * wm1;
    float sh = ph_n > 1 ? rh / (float) (ph_n - 1) : 0, sw = pw_n > 1 ? rw / (float) (pw_n - 1) : 0;
    for (gint64 c = 0; c < s->channels; c++)
      for (gint64 i = 0; i < ph_n; i++)
        for (gint64 j = 0; j < pw_n; j++) {
          float iy = ph_n > 1 ? (i == ph_n - 1 ? hm1 * y2 : (float) i * sh + y1 * hm1) :
              (float) (0.5 * (y1 + y2) * hm1);
          float ix = pw_n > 1 ? (j == pw_n - 1 ? wm1 * x2 : (float) j * sw + x1 * wm1) :
              (float) (0.5 * (x2 + x1) * wm1);
          float *dst = &o[(c * ph_n + i) * pw_n + j];
          if (!(iy >= 0 && iy <= hm1 && ix >= 0 && ix <= wm1)) {
            *dst = 0;
            continue;
          }
          gint64 top = (gint64) floorf (iy), bottom = MIN ((gint64) ceilf (iy), s->h - 1);
          gint64 left = (gint64) floorf (ix), right = MIN ((gint64) ceilf (ix), s->w - 1);
          const float *p = fb + c * plane;
          float tl = p[top * s->w + left], tr = p[top * s->w + right];
          float bl = p[bottom * s->w + left], br = p[bottom * s->w + right];
          float t = tl + (tr - tl) * (ix - (float) left);
          float bo = bl + (br - bl) * (ix - (float) left);
          *dst = t + (bo - t) * (iy - (float) top);
        }
  }
  return TRUE;
}

const M2iOpKernel ir_kernel_roi_pooling = {
  "ROIPooling", "opset1", roi_pooling_infer, roi_pooling_execute, g_free
};

/* ---- ROIAlign-3, -9 -------------------------------------------------------- */

static gboolean
roi_align_infer (M2iOpContext *ctx, GError **error)
{
  static const char *const modes[] = { "avg", "max", NULL };
  static const char *const aligned[] = { "asymmetric", "half_pixel_for_nn", "half_pixel", NULL };
  if (!ir_k_check_arity (ctx, 3, 3, 1, 1, error) || !ir_k_check_f32 (ctx, 0, error) ||
      !ir_k_check_f32 (ctx, 1, error) || !ir_k_check_rank (ctx, 0, 4, 4, error) ||
      !ir_k_check_index_type (ctx, 2, "batch_indices", error))
    return FALSE;
  const M2iShape *rs = &ctx->inputs[1].shape, *is = &ctx->inputs[2].shape;
  if (rs->rank != 2 || rs->dims[1] != 4 || is->rank != 1 || is->dims[0] != rs->dims[0]) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "the boxes %s and batch indices %s must be [NUM_ROIS, 4] and [NUM_ROIS]",
        ir_k_shape_str (rs, 0), ir_k_shape_str (is, 1));
    return FALSE;
  }
  if (!ir_k_require_attrs (ctx, error, "mode", "sampling_ratio", NULL))
    return FALSE;
  RoiState s = { .rois = rs->dims[0] };
  gint mode, al = 0;
  gint64 sampling;
  if (!m2i_ir_node_attr_enum (ctx->node, "mode", "avg", modes, &mode, error) ||
      !m2i_ir_node_attr_int (ctx->node, "sampling_ratio", 0, &sampling, error) ||
      (ir_k_op_version (ctx) != 3 &&
          !m2i_ir_node_attr_enum (ctx->node, "aligned_mode", "asymmetric", aligned, &al, error)) ||
      !roi_attrs (ctx, &s, error))
    return FALSE;
  if (sampling < 0 || sampling > 1024) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "sampling_ratio %" G_GINT64_FORMAT " must be in [0, 1024]", sampling);
    return FALSE;
  }
  s.sampling = (gint) sampling;
  s.max = mode == 1;
  s.aligned = al;
  ctx->state = g_memdup2 (&s, sizeof s);
  return TRUE;
}

static gboolean
roi_align_execute (M2iOpContext *ctx, GError **error)
{
  const RoiState *s = ctx->state;
  const float *fm = ctx->inputs[0].data, *rois = ctx->inputs[1].data;
  float *out = ctx->outputs[0].data;
  gint64 plane = s->h * s->w, ph_n = s->pooled_h, pw_n = s->pooled_w;
  float src_off = s->aligned == 2 ? 0.5f : 0.0f, dst_off = s->aligned ? -0.5f : 0.0f;
  float fw = (float) s->w, fh = (float) s->h;
  for (gint64 r = 0; r < s->rois; r++) {
    gint64 b;
    if (!ir_k_norm_index (ctx, ir_k_index_at (&ctx->inputs[2], r), s->batch, FALSE,
            "batch index", r, &b, error))
      return FALSE;
    const float *box = rois + r * 4;
    float x1 = (box[0] + src_off) * s->spatial_scale + dst_off;
    float y1 = (box[1] + src_off) * s->spatial_scale + dst_off;
    float x2 = (box[2] + src_off) * s->spatial_scale + dst_off;
    float y2 = (box[3] + src_off) * s->spatial_scale + dst_off;
    float rw = x2 - x1, rh = y2 - y1;
    if (!s->aligned) {
      rw = MAX (rw, 1.0f);
      rh = MAX (rh, 1.0f);
    }
    float bin_w = rw / (float) pw_n, bin_h = rh / (float) ph_n;
    /* adaptive: ceil (bin size) points per axis, at most 4 × the map's
     * size (a box four times larger than the map) so that no box makes
     * the loop unbounded */
    gint64 sx = s->sampling ? s->sampling : CLAMP (coord_int (ceilf (bin_w)), 0, 4 * (s->w + 1));
    gint64 sy = s->sampling ? s->sampling : CLAMP (coord_int (ceilf (bin_h)), 0, 4 * (s->h + 1));
    float dx = bin_w / (float) sx, dy = bin_h / (float) sy;
    gint64 samples = sx * sy;
    for (gint64 c = 0; c < s->channels; c++) {
      const float *p = fm + (b * s->channels + c) * plane;
      for (gint64 i = 0; i < ph_n; i++)
        for (gint64 j = 0; j < pw_n; j++) {
          float acc = s->max ? -INFINITY : 0.0f;
          for (gint64 yi = 0; yi < sy; yi++) {
            float y = y1 + (float) i * bin_h + dy * ((float) yi + 0.5f);
            for (gint64 xi = 0; xi < sx; xi++) {
              float x = x1 + (float) j * bin_w + dx * ((float) xi + 0.5f);
              float v = 0;
              if (x >= -1.0f && x <= fw && y >= -1.0f && y <= fh) {
                float yy = MAX (y, 0.0f), xx = MAX (x, 0.0f);
                gint64 ylo = (gint64) yy, xlo = (gint64) xx, yhi, xhi;
                if (ylo >= s->h - 1) {
                  yhi = ylo = s->h - 1;
                  yy = (float) ylo;
                } else {
                  yhi = ylo + 1;
                }
                if (xlo >= s->w - 1) {
                  xhi = xlo = s->w - 1;
                  xx = (float) xlo;
                } else {
                  xhi = xlo + 1;
                }
                float ly = yy - (float) ylo, lx = xx - (float) xlo;
                float hy = 1.0f - ly, hx = 1.0f - lx;
                v = hy * hx * p[ylo * s->w + xlo] + hy * lx * p[ylo * s->w + xhi] +
                    ly * hx * p[yhi * s->w + xlo] + ly * lx * p[yhi * s->w + xhi];
              }
              if (s->max)
                acc = MAX (acc, v);
              else
                acc += v / (float) samples;
            }
          }
          out[((r * s->channels + c) * ph_n + i) * pw_n + j] = samples ? acc : 0.0f;
        }
    }
  }
  return TRUE;
}

const M2iOpKernel ir_kernel_roi_align = {
  "ROIAlign", "opset3 opset9", roi_align_infer, roi_align_execute, g_free
};
