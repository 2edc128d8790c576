/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* NV12toRGB-8, NV12toBGR-8, I420toRGB-8, I420toBGR-8: NHWC YUV 4:2:0 to
 * NHWC RGB/BGR, u8 or f32 (output type = input type).
 *
 * Inputs are one plane ([N, H·3/2, W, 1]: Y rows, then the chroma rows) or
 * separate planes (NV12: Y [N, H, W, 1] and UV [N, H/2, W/2, 2]; I420: Y,
 * U and V, the latter two [N, H/2, W/2, 1]). Per the spec, in float:
 *   R = 1.164·(Y−16) + 1.596·(V−128)
 *   G = 1.164·(Y−16) − 0.813·(V−128) − 0.391·(U−128)
 *   B = 1.164·(Y−16) + 2.018·(U−128)
 * clipped to [0, 255]; u8 results are rounded half away from zero first
 * (the reference's std::round).
 */
#include "kernels-private.h"
#include <base/m2i-parallel.h>

#include <math.h>

typedef struct {
  gboolean i420, bgr, single, u8;
  gint64 n, h, w;
} ColorState;

/* One output row: chroma sample x/2 at u[x/2 · cs], v[x/2 · cs]. */
#define COLOR_ROW(T, NAME, STORE) \
  M2I_K_INLINE void \
  NAME##_body (const T *y, const T *u, const T *v, gint64 cs, T *out, gint64 w, gint ri, \
      gint bi) \
  { \
    for (gint64 x = 0; x < w; x++) { \
      float c = (float) y[x] - 16.0f; \
      float d = (float) u[(x >> 1) * cs] - 128.0f; \
      float e = (float) v[(x >> 1) * cs] - 128.0f; \
      float r = 1.164f * c + 1.596f * e; \
      float g = 1.164f * c - 0.391f * d - 0.813f * e; \
      float b = 1.164f * c + 2.018f * d; \
      out[3 * x + ri] = STORE (r); \
      out[3 * x + 1] = STORE (g); \
      out[3 * x + bi] = STORE (b); \
    } \
  } \
  M2I_K_SIMD_CLONES (NAME, (const T *y, const T *u, const T *v, gint64 cs, T *out, \
      gint64 w, gint ri, gint bi), (y, u, v, cs, out, w, ri, bi))

static inline guint8
store_u8 (float v)
{
  v = roundf (v);
  return (guint8) (v < 0.0f ? 0.0f : v > 255.0f ? 255.0f : v);
}

static inline float
store_f32 (float v)
{
  return v < 0.0f ? 0.0f : v > 255.0f ? 255.0f : v;
}

COLOR_ROW (guint8, row_u8, store_u8)
COLOR_ROW (float, row_f32, store_f32)

typedef struct {
  const ColorState *s;
  const guint8 *planes[3];
  guint8 *out;
} ColorJob;

static void
color_slice (gint begin, gint end, gint slice, gpointer data)
{
  const ColorJob *j = data;
  const ColorState *s = j->s;
  gsize es = s->u8 ? 1 : 4;
  gint64 h = s->h, w = s->w, cw = w / 2, ch = h / 2;
  for (gint r = begin; r < end; r++) {
    gint64 n = r / h, row = r % h;
    const guint8 *y, *u, *v;
    gint64 cs;
    if (s->single) {
      /* One buffer per image: Y (h·w), then NV12 UV (ch·w) or U, V. */
      const guint8 *img = j->planes[0] + n * (h * w * 3 / 2) * es;
      y = img + row * w * es;
      const guint8 *chroma = img + h * w * es;
      if (s->i420) {
        u = chroma + (row / 2) * cw * es;
        v = chroma + (ch * cw + (row / 2) * cw) * es;
        cs = 1;
      } else {
        u = chroma + (row / 2) * w * es;
        v = u + es;
        cs = 2;
      }
    } else {
      y = j->planes[0] + (n * h + row) * w * es;
      if (s->i420) {
        u = j->planes[1] + (n * ch + row / 2) * cw * es;
        v = j->planes[2] + (n * ch + row / 2) * cw * es;
        cs = 1;
      } else {
        u = j->planes[1] + (n * ch + row / 2) * cw * 2 * es;
        v = u + es;
        cs = 2;
      }
    }
    guint8 *out = j->out + (n * h + row) * w * 3 * es;
    gint ri = s->bgr ? 2 : 0, bi = s->bgr ? 0 : 2;
    if (s->u8)
      row_u8 (y, u, v, cs, out, w, ri, bi);
    else
      row_f32 ((const float *) y, (const float *) u, (const float *) v, cs, (float *) out,
          w, ri, bi);
  }
}

static gboolean
check_plane (M2iOpContext *ctx, gint i, gint64 n, gint64 h, gint64 w, gint64 c,
    const char *what, GError **error)
{
  const M2iShape *s = &ctx->inputs[i].shape;
  if (s->rank != 4 || s->dims[0] != n || s->dims[1] != h || s->dims[2] != w || s->dims[3] != c) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "%s plane (input %d) has shape %s; expected [%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT
        ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT "]", what, i, ir_k_shape_str (s, 0),
        n, h, w, c);
    return FALSE;
  }
  if (ctx->inputs[i].type != ctx->inputs[0].type) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "%s plane (input %d) is %s, the Y plane %s", what, i,
        m2i_element_type_to_string (ctx->inputs[i].type),
        m2i_element_type_to_string (ctx->inputs[0].type));
    return FALSE;
  }
  return TRUE;
}

static gboolean
color_infer (M2iOpContext *ctx, gboolean i420, gboolean bgr, GError **error)
{
  static const M2iElementType types[] = { M2I_ET_U8, M2I_ET_F32 };
  gint planes = i420 ? 3 : 2;
  if (!ir_k_check_arity (ctx, 1, planes, 1, 1, error) ||
      !ir_k_check_type (ctx, 0, types, G_N_ELEMENTS (types), error) ||
      !ir_k_check_rank (ctx, 0, 4, 4, error))
    return FALSE;
  if (ctx->n_inputs != 1 && ctx->n_inputs != planes) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "expects 1 input (one plane) or %d (separate planes), has %d", planes, ctx->n_inputs);
    return FALSE;
  }
  const M2iShape *y = &ctx->inputs[0].shape;
  ColorState s = { i420, bgr, ctx->n_inputs == 1, ctx->inputs[0].type == M2I_ET_U8,
    y->dims[0], y->dims[1], y->dims[2] };
  if (y->dims[3] != 1) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "input 0 has shape %s; the Y plane has one channel (NHWC, C = 1)", ir_k_shape_str (y, 0));
    return FALSE;
  }
  if (s.single) {
    if (s.h % 3) {
      m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
          "single-plane input %s: the height must be 1.5× the image height", ir_k_shape_str (y, 0));
      return FALSE;
    }
    s.h = s.h * 2 / 3;
  }
  if (s.h % 2 || s.w % 2 || s.h == 0 || s.w == 0) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "image %" G_GINT64_FORMAT "×%" G_GINT64_FORMAT " (from input %s): width and height "
        "must be even and non-zero for 4:2:0 chroma", s.w, s.h, ir_k_shape_str (y, 0));
    return FALSE;
  }
  if (!s.single) {
    if (i420) {
      if (!check_plane (ctx, 1, s.n, s.h / 2, s.w / 2, 1, "U", error) ||
          !check_plane (ctx, 2, s.n, s.h / 2, s.w / 2, 1, "V", error))
        return FALSE;
    } else if (!check_plane (ctx, 1, s.n, s.h / 2, s.w / 2, 2, "UV", error)) {
      return FALSE;
    }
  }
  ctx->outputs[0].type = ctx->inputs[0].type;
  ctx->outputs[0].shape = (M2iShape) { 4, { s.n, s.h, s.w, 3 } };
  ctx->state = g_memdup2 (&s, sizeof s);
  return TRUE;
}

static gboolean
color_execute (M2iOpContext *ctx, GError **error)
{
  const ColorState *s = ctx->state;
  ColorJob j = { s, { ctx->inputs[0].data, ctx->n_inputs > 1 ? ctx->inputs[1].data : NULL,
    ctx->n_inputs > 2 ? ctx->inputs[2].data : NULL }, ctx->outputs[0].data };
  gint64 rows = s->n * s->h;
  gint slices = rows * s->w >= 65536 ? ir_k_threads (ctx) : 1;
  ir_k_parallel_for ((gint) rows, slices, 2, color_slice, &j);
  return TRUE;
}

static gboolean nv12_rgb (M2iOpContext *c, GError **e) { return color_infer (c, FALSE, FALSE, e); }
static gboolean nv12_bgr (M2iOpContext *c, GError **e) { return color_infer (c, FALSE, TRUE, e); }
static gboolean i420_rgb (M2iOpContext *c, GError **e) { return color_infer (c, TRUE, FALSE, e); }
static gboolean i420_bgr (M2iOpContext *c, GError **e) { return color_infer (c, TRUE, TRUE, e); }

const M2iOpKernel ir_kernel_nv12_to_rgb = { "NV12toRGB", "opset8", nv12_rgb, color_execute, g_free };
const M2iOpKernel ir_kernel_nv12_to_bgr = { "NV12toBGR", "opset8", nv12_bgr, color_execute, g_free };
const M2iOpKernel ir_kernel_i420_to_rgb = { "I420toRGB", "opset8", i420_rgb, color_execute, g_free };
const M2iOpKernel ir_kernel_i420_to_bgr = { "I420toBGR", "opset8", i420_bgr, color_execute, g_free };
