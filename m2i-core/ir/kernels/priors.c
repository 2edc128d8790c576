/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* PriorBoxClustered-1, PriorBox-1 and PriorBox-8 (SSD anchor boxes), f32
 * output [2, 4·H·W·P]: the boxes, then their variances (one value, four
 * per box, or 0.1). The grid size (input 0) must be constant: it sets the
 * output shape; the image size (input 1) may come at run time.
 *
 * PriorBoxClustered: for each cell (h, w) of the grid and each
 * (width_s, height_s) pair, a box centred at ((w + offset)·step_w,
 * (h + offset)·step_h), normalised by the image size, optionally clipped.
 *
 * PriorBox: the spec describes the op loosely; the box order and the modes
 * follow OpenVINO's reference (Caffe's PriorBox): per cell (h, w), centre
 * ((w + offset)·step, (h + offset)·step) — or ((w + 0.5)·W/w_grid, ...)
 * without a step — then, for each fixed_size: its density grid of boxes
 * (and of fixed_ratio or aspect-ratio boxes), each clipped to [0, 1]; then
 * for each min_size: the square box, the sqrt(min·max) box, and one box per
 * aspect ratio other than 1 (min_max_aspect_ratios_order, -8 only, false
 * puts the max box after the aspect-ratio boxes). Aspect ratios are 1 and
 * each distinct ratio (and its inverse with flip). scale_all_sizes false
 * is MXNet's form: sizes and step relative to the image height, aspect
 * ratios on the last min_size only. clip clamps every value to [0, 1].
 */
#include "kernels-private.h"
#include "indices.h"

#include <math.h>
#include <string.h>

/* ---- shared: variances, grid, output, image size --------------------- */

typedef struct {
  float v[4];
  gint n;                                  /* 1 or 4 */
} PriorVariance;

/* The variance attribute: 0, 1 or 4 values; none means 0.1 (the
 * reference's default). */
static gboolean
prior_variance (const M2iOpContext *ctx, PriorVariance *pv, GError **error)
{
  if (!m2i_ir_node_attr_floats (ctx->node, "variance", pv->v, 4, &pv->n, error))
    return FALSE;
  if (pv->n < 0)
    pv->n = 0;
  if (pv->n != 0 && pv->n != 1 && pv->n != 4) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "attribute variance has %d values; 0, 1 or 4 are allowed", pv->n);
    return FALSE;
  }
  if (pv->n == 0) {
    pv->v[0] = 0.1f;
    pv->n = 1;
  }
  return TRUE;
}

/* The required offset attribute. */
static gboolean
prior_offset (const M2iOpContext *ctx, float *offset, GError **error)
{
  double v;
  if (!ir_k_require_attrs (ctx, error, "offset", NULL) ||
      !m2i_ir_node_attr_float (ctx->node, "offset", 0, &v, error))
    return FALSE;
  *offset = (float) v;
  return TRUE;
}

/* The grid size (constant input 0) and the image size input's form. */
static gboolean
prior_grid (const M2iOpContext *ctx, gint64 *h, gint64 *w, GError **error)
{
  gint64 size[2];
  gint n;
  if (!ir_k_const_ints (ctx, 0, size, 2, &n, error) ||
      !ir_k_check_index_type (ctx, 1, "image_size", error))
    return FALSE;
  if (n != 2 || size[0] < 1 || size[1] < 1 || m2i_shape_numel (&ctx->inputs[1].shape) != 2) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "output_size and image_size must each be two positive integers [height, width]");
    return FALSE;
  }
  *h = size[0];
  *w = size[1];
  return TRUE;
}

/* Sets the output [2, 4·h·w·priors] (refusing sizes past 2^31). */
static gboolean
prior_output (M2iOpContext *ctx, gint64 h, gint64 w, gint64 priors, GError **error)
{
  gint64 cells;                  /* h and w come from the file: any gint64 */
  if (!ir_mul_i64 (h, w, &cells) || cells > G_MAXINT32 / 8 / priors) {
    m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, ctx->node, "too many priors");
    return FALSE;
  }
  ctx->outputs[0].type = M2I_ET_F32;
  ctx->outputs[0].shape = (M2iShape) { 2, { 2, 4 * h * w * priors } };
  return TRUE;
}

/* The image size (input 1) at run time, checked. */
static gboolean
prior_image_size (const M2iOpContext *ctx, gint64 *h, gint64 *w, GError **error)
{
  *h = ir_k_index_at (&ctx->inputs[1], 0);
  *w = ir_k_index_at (&ctx->inputs[1], 1);
  if (*h < 1 || *w < 1) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "image_size [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "] must be positive", *h, *w);
    return FALSE;
  }
  return TRUE;
}

/* The second row: the variances of every box. */
static void
prior_variance_row (float *out, gint64 total, const PriorVariance *pv)
{
  for (gint64 i = 0; i < total; i++)
    out[total + i] = pv->v[pv->n == 1 ? 0 : i % 4];
}

/* ---- PriorBoxClustered-1 ------------------------------------------------ */

#define MAX_PRIORS 256

typedef struct {
  gint n_priors;
  float widths[MAX_PRIORS], heights[MAX_PRIORS];
  PriorVariance variance;
  gboolean clip;
  float step, step_w, step_h, offset;
  gint64 layer_h, layer_w;
} PbcState;

static gboolean
pbc_infer (M2iOpContext *ctx, GError **error)
{
  if (!ir_k_check_arity (ctx, 2, 2, 1, 1, error))
    return FALSE;
  PbcState s = { 0 };
  gint nw, nh;
  double step, step_w, step_h;
  if (!m2i_ir_node_attr_floats (ctx->node, "width", s.widths, MAX_PRIORS, &nw, error) ||
      !m2i_ir_node_attr_floats (ctx->node, "height", s.heights, MAX_PRIORS, &nh, error) ||
      !prior_variance (ctx, &s.variance, error) || !prior_offset (ctx, &s.offset, error) ||
      !m2i_ir_node_attr_bool (ctx->node, "clip", TRUE, &s.clip, error) ||
      !m2i_ir_node_attr_float (ctx->node, "step", 0, &step, error) ||
      !m2i_ir_node_attr_float (ctx->node, "step_w", 0, &step_w, error) ||
      !m2i_ir_node_attr_float (ctx->node, "step_h", 0, &step_h, error))
    return FALSE;
  if (nw < 0) {
    s.widths[0] = 1.0f;
    nw = 1;
  }
  if (nh < 0) {
    s.heights[0] = 1.0f;
    nh = 1;
  }
  if (nw != nh || nw == 0) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "attributes width and height have %d and %d values; they must pair up", nw, nh);
    return FALSE;
  }
  s.n_priors = nw;
  s.step = (float) step;
  s.step_w = (float) step_w;
  s.step_h = (float) step_h;
  if (!prior_grid (ctx, &s.layer_h, &s.layer_w, error) ||
      !prior_output (ctx, s.layer_h, s.layer_w, s.n_priors, error))
    return FALSE;
  ctx->state = g_memdup2 (&s, sizeof s);
  return TRUE;
}

static gboolean
pbc_execute (M2iOpContext *ctx, GError **error)
{
  const PbcState *s = ctx->state;
  gint64 img_h, img_w;
  if (!prior_image_size (ctx, &img_h, &img_w, error))
    return FALSE;
  float step_w = s->step_w == 0 ? s->step : s->step_w;
  float step_h = s->step_h == 0 ? s->step : s->step_h;
  if (step_w == 0 && step_h == 0) {
    step_w = (float) img_w / (float) s->layer_w;
    step_h = (float) img_h / (float) s->layer_h;
  }
  float *box = ctx->outputs[0].data;
  for (gint64 h = 0; h < s->layer_h; h++)
    for (gint64 w = 0; w < s->layer_w; w++) {
      float cx = ((float) w + s->offset) * step_w, cy = ((float) h + s->offset) * step_h;
      for (gint p = 0; p < s->n_priors; p++) {
        float c[4] = {
          (cx - s->widths[p] / 2.0f) / (float) img_w,
          (cy - s->heights[p] / 2.0f) / (float) img_h,
          (cx + s->widths[p] / 2.0f) / (float) img_w,
          (cy + s->heights[p] / 2.0f) / (float) img_h,
        };
        gint64 at = ((h * s->layer_w + w) * s->n_priors + p) * 4;
        for (gint k = 0; k < 4; k++)
          box[at + k] = s->clip ? MIN (MAX (c[k], 0.0f), 1.0f) : c[k];
      }
    }
  prior_variance_row (box, ctx->outputs[0].shape.dims[1], &s->variance);
  return TRUE;
}

const M2iOpKernel ir_kernel_prior_box_clustered = {
  "PriorBoxClustered", "opset1", pbc_infer, pbc_execute, g_free,
};

/* ---- PriorBox-1, -8 ------------------------------------------------------ */

#define PB_MAX 64

typedef struct {
  float min_size[PB_MAX], max_size[PB_MAX], ratios[2 * PB_MAX + 1], density[PB_MAX];
  float fixed_ratio[PB_MAX], fixed_size[PB_MAX];
  gint n_min, n_max, n_ratios, n_density, n_fixed_ratio, n_fixed_size;
  PriorVariance variance;
  gboolean clip, scale_all, min_max_order;
  float step, offset;
  gint64 layer_h, layer_w, priors;
} PbState;

/* Writes the boxes of one cell centred at (cx, cy) into @d (NULL: only
 * counts them) and returns how many; sizes are in pixels, @iw/@ih are 1 /
 * the image size. */
static gint64
cell_boxes (const PbState *s, const float *min_size, float cx, float cy, float iw, float ih,
    float *d)
{
  gint64 n = 0;
#define BOX(x, y, bw, bh, clip_box) do { \
    if (d) { \
      float *b_ = d + 4 * n; \
      b_[0] = ((x) - (bw)) * iw; \
      b_[1] = ((y) - (bh)) * ih; \
      b_[2] = ((x) + (bw)) * iw; \
      b_[3] = ((y) + (bh)) * ih; \
      if (clip_box) { \
        b_[0] = MAX (b_[0], 0.0f); \
        b_[1] = MAX (b_[1], 0.0f); \
        b_[2] = MIN (b_[2], 1.0f); \
        b_[3] = MIN (b_[3], 1.0f); \
      } \
    } \
    n++; \
  } while (0)
  for (gint f = 0; f < s->n_fixed_size; f++) {
    /* the reference's integer steps: the size truncated, its half and the
     * shift between density centres rounded down */
    gint64 fs = (gint64) s->fixed_size[f];
    gint64 density = (gint64) s->density[f];
    gint64 shift = (gint64) (s->fixed_size[f] / (float) density);
    float half = (float) fs * 0.5f;
#define DENSITY_GRID(bw, bh) \
    for (gint64 r = 0; r < density; r++) \
      for (gint64 c = 0; c < density; c++) \
        BOX (cx - (float) (fs / 2) + (float) shift / 2.0f + (float) (c * shift), \
            cy - (float) (fs / 2) + (float) shift / 2.0f + (float) (r * shift), bw, bh, TRUE)
    if (s->n_fixed_ratio > 0) {
      for (gint a = 0; a < s->n_fixed_ratio; a++) {
        float ar = sqrtf (s->fixed_ratio[a]);
        float bw = s->fixed_size[f] * 0.5f * ar, bh = s->fixed_size[f] * 0.5f / ar;
        DENSITY_GRID (bw, bh);
      }
    } else {
      if (s->n_density > 0)
        DENSITY_GRID (half, half);
      for (gint a = 0; a < s->n_ratios; a++) {
        if (fabsf (s->ratios[a] - 1.0f) < 1e-6f)
          continue;
        float ar = sqrtf (s->ratios[a]);
        float bw = s->fixed_size[f] * 0.5f * ar, bh = s->fixed_size[f] * 0.5f / ar;
        DENSITY_GRID (bw, bh);
      }
    }
#undef DENSITY_GRID
  }
  for (gint m = 0; m < s->n_min; m++) {
    float half = min_size[m] * 0.5f;
    BOX (cx, cy, half, half, FALSE);
    gboolean ratios_here = s->scale_all || m == s->n_min - 1;
    gint si = s->scale_all ? m : 0;
    gboolean max_box = s->n_max > m;
    float max_half = max_box ? sqrtf (min_size[m] * s->max_size[m]) * 0.5f : 0;
    if (s->min_max_order && max_box)
      BOX (cx, cy, max_half, max_half, FALSE);
    if (ratios_here)
      for (gint a = 0; a < s->n_ratios; a++) {
        if (fabsf (s->ratios[a] - 1.0f) < 1e-6f)
          continue;
        float ar = sqrtf (s->ratios[a]);
        BOX (cx, cy, min_size[si] * 0.5f * ar, min_size[si] * 0.5f / ar, FALSE);
      }
    if (!s->min_max_order && max_box)
      BOX (cx, cy, max_half, max_half, FALSE);
  }
#undef BOX
  return n;
}

/* The reference's own count (op::v8::PriorBox::number_of_priors), which
 * sets the output shape in OpenVINO: the boxes written must match it. */
static gint64
count_formula (const PbState *s, const float *aspect, gint n_aspect, gboolean flip)
{
  /* distinct ratios, rounded to 1e-6, with inverses and 1 */
  float uniq[2 * PB_MAX + 1];
  gint nu = 0;
  for (gint i = 0; i <= 2 * n_aspect; i++) {
    double r = i == 2 * n_aspect ? 1.0 : i % 2 ? (flip ? 1.0 / aspect[i / 2] : NAN) :
        aspect[i / 2];
    if (isnan (r))
      continue;
    float v = (float) (round (r * 1e6) / 1e6);
    gboolean dup = FALSE;
    for (gint j = 0; j < nu; j++)
      dup |= uniq[j] == v;
    if (!dup)
      uniq[nu++] = v;
  }
  gint64 n = s->scale_all ? (gint64) nu * s->n_min + s->n_max : nu + s->n_min - 1;
  if (s->n_fixed_size > 0)
    n = (gint64) nu * s->n_fixed_size;
  for (gint i = 0; i < s->n_density; i++) {
    gint64 d = (gint64) s->density[i];
    n += (s->n_fixed_ratio > 0 ? s->n_fixed_ratio : nu) * (d * d - 1);
  }
  return n;
}

static gboolean
floats_attr (const M2iOpContext *ctx, const char *key, float *out, gint *n, GError **error)
{
  if (!m2i_ir_node_attr_floats (ctx->node, key, out, PB_MAX, n, error))
    return FALSE;
  if (*n < 0)
    *n = 0;
  return TRUE;
}

static gboolean
pb_infer (M2iOpContext *ctx, GError **error)
{
  if (!ir_k_check_arity (ctx, 2, 2, 1, 1, error))
    return FALSE;
  PbState s = { 0 };
  float aspect[PB_MAX];
  gint n_aspect;
  gboolean flip;
  double step;
  if (!floats_attr (ctx, "min_size", s.min_size, &s.n_min, error) ||
      !floats_attr (ctx, "max_size", s.max_size, &s.n_max, error) ||
      !floats_attr (ctx, "aspect_ratio", aspect, &n_aspect, error) ||
      !floats_attr (ctx, "density", s.density, &s.n_density, error) ||
      !floats_attr (ctx, "fixed_ratio", s.fixed_ratio, &s.n_fixed_ratio, error) ||
      !floats_attr (ctx, "fixed_size", s.fixed_size, &s.n_fixed_size, error) ||
      !prior_variance (ctx, &s.variance, error) || !prior_offset (ctx, &s.offset, error) ||
      !m2i_ir_node_attr_bool (ctx->node, "flip", FALSE, &flip, error) ||
      !m2i_ir_node_attr_bool (ctx->node, "clip", FALSE, &s.clip, error) ||
      !m2i_ir_node_attr_bool (ctx->node, "scale_all_sizes", TRUE, &s.scale_all, error) ||
      !m2i_ir_node_attr_float (ctx->node, "step", 0, &step, error))
    return FALSE;
  s.min_max_order = TRUE;
  if (ir_k_op_version (ctx) != 1 &&
      !m2i_ir_node_attr_bool (ctx->node, "min_max_aspect_ratios_order", TRUE, &s.min_max_order,
          error))
    return FALSE;
  if (s.n_fixed_size > 0 && s.n_density < s.n_fixed_size) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "fixed_size has %d values but density only %d: each fixed size needs a density",
        s.n_fixed_size, s.n_density);
    return FALSE;
  }
  for (gint i = 0; i < s.n_density; i++)
    if (s.density[i] < 1 || s.density[i] > 64) {
      m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
          "density %g is outside [1, 64]", s.density[i]);
      return FALSE;
    }
  for (gint i = 0; i < n_aspect; i++)
    if (!(aspect[i] > 0)) {
      m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
          "aspect_ratio %g is not positive", aspect[i]);
      return FALSE;
    }
  /* the reference's list: 1, then each new ratio (and its inverse) */
  s.ratios[s.n_ratios++] = 1.0f;
  for (gint i = 0; i < n_aspect; i++) {
    gboolean exists = FALSE;
    for (gint j = 0; j < s.n_ratios; j++)
      exists |= fabsf (aspect[i] - s.ratios[j]) < 1e-6f;
    if (exists)
      continue;
    s.ratios[s.n_ratios++] = aspect[i];
    if (flip)
      s.ratios[s.n_ratios++] = 1.0f / aspect[i];
  }
  s.step = (float) step;
  if (!prior_grid (ctx, &s.layer_h, &s.layer_w, error))
    return FALSE;
  float zeros[PB_MAX] = { 0 };
  s.priors = cell_boxes (&s, zeros, 0, 0, 1, 1, NULL);
  gint64 formula = count_formula (&s, aspect, n_aspect, flip);
  if (s.priors != formula || s.priors < 1) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "the attributes give %" G_GINT64_FORMAT " boxes per cell where OpenVINO's shape rule "
        "counts %" G_GINT64_FORMAT " (repeated aspect ratios?)", s.priors, formula);
    return FALSE;
  }
  if (!prior_output (ctx, s.layer_h, s.layer_w, s.priors, error))
    return FALSE;
  ctx->state = g_memdup2 (&s, sizeof s);
  return TRUE;
}

static gboolean
pb_execute (M2iOpContext *ctx, GError **error)
{
  const PbState *s = ctx->state;
  gint64 img_h, img_w;
  if (!prior_image_size (ctx, &img_h, &img_w, error))
    return FALSE;
  float step = s->step;
  float min_size[PB_MAX];
  memcpy (min_size, s->min_size, sizeof min_size);
  if (!s->scale_all) {
    /* MXNet's form: step and sizes relative to the image height */
    step = step == -1 ? (float) img_h / (float) s->layer_h : step * (float) img_h;
    for (gint i = 0; i < s->n_min; i++)
      min_size[i] *= (float) img_h;
  }
  float iw = 1.0f / (float) img_w, ih = 1.0f / (float) img_h;
  float step_x = step == 0 ? (float) img_w / (float) s->layer_w : step;
  float step_y = step == 0 ? (float) img_h / (float) s->layer_h : step;
  float *out = ctx->outputs[0].data;
  gint64 total = 4 * s->layer_h * s->layer_w * s->priors;
  float *d = out;
  for (gint64 h = 0; h < s->layer_h; h++)
    for (gint64 w = 0; w < s->layer_w; w++) {
      float cx, cy;
      if (step == 0) {
        cx = ((float) w + 0.5f) * step_x;
        cy = ((float) h + 0.5f) * step_y;
      } else {
        cx = (s->offset + (float) w) * step;
        cy = (s->offset + (float) h) * step;
      }
      d += 4 * cell_boxes (s, min_size, cx, cy, iw, ih, d);
    }
  if (s->clip)
    for (gint64 i = 0; i < total; i++)
      out[i] = MIN (MAX (out[i], 0.0f), 1.0f);
  prior_variance_row (out, total, &s->variance);
  return TRUE;
}

const M2iOpKernel ir_kernel_prior_box = {
  "PriorBox", "opset1 opset8", pb_infer, pb_execute, g_free
};
