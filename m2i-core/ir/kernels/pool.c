/* MaxPool-1, MaxPool-8 and AvgPool-1 over 1 to 3 spatial axes (NCW, NCHW,
 * NCDHW).
 *
 * Geometry (auto_pad, pads, rounding_type, dilations) is shared with
 * Convolution (kernel-util.c). Pads count as -inf for MaxPool; the second
 * output of MaxPool-8 is the position of the maximum in the input
 * flattened from `axis` on (pads not counted), the first maximum in
 * row-major window order winning ties. AvgPool divides by the kernel size
 * when exclude-pad is false and pads exist (OpenVINO's reference), and by
 * the number of input elements in the window otherwise.
 *
 * Each output row is computed a kernel tap at a time over the whole row, so
 * the inner loops run along contiguous memory and vectorize.
 */
#include "kernels-private.h"
#include <base/m2i-parallel.h>

#include <math.h>
#include <string.h>

typedef struct {
  gboolean is_max;
  gboolean exclude_pad, pads_in_avg;   /* AvgPool */
  M2iElementType type, index_type;
  gint n_outputs;
  gint64 axis;                         /* MaxPool-8 indices, normalized */
  gint64 n, c, d, h, w, od, oh, ow;    /* unit axes fill up to 3 spatial */
  gint64 kd, kh, kw, sd, sh, sw, dd, dh, dw, pd, pt, pl;
  gint slices;
} PoolState;

/* Range of output columns x whose input column x·sw + off lies in [0, w). */
static inline void
valid_columns (const PoolState *s, gint64 off, gint64 *lo, gint64 *hi)
{
  *lo = off >= 0 ? 0 : (-off + s->sw - 1) / s->sw;
  *hi = s->w - 1 - off < 0 ? -1 : (s->w - 1 - off) / s->sw;
  *hi = MIN (*hi, s->ow - 1);
}

/* ---- MaxPool rows ------------------------------------------------------ */

#define MAX_ROW(T) \
  M2I_K_INLINE void \
  max_row_##T##_body (const T *row, gint64 off, gint64 sw, gint64 lo, gint64 hi, \
      T *best, gint32 *idx, gint32 base) \
  { \
    for (gint64 x = lo; x <= hi; x++) { \
      gint64 p = x * sw + off; \
      T v = row[p]; \
      gboolean gt = v > best[x]; \
      best[x] = gt ? v : best[x]; \
      idx[x] = gt ? (gint32) (base + p) : idx[x]; \
    } \
  } \
  M2I_K_SIMD_CLONES (max_row_##T, (const T *row, gint64 off, gint64 sw, gint64 lo, \
      gint64 hi, T *best, gint32 *idx, gint32 base), (row, off, sw, lo, hi, best, idx, base))

typedef float f32;
typedef guint8 u8;
MAX_ROW (f32)
MAX_ROW (gint32)
MAX_ROW (gint64)
MAX_ROW (u8)

/* One output row (od, oy) of one plane. best/idx hold ow entries; idx is
 * the position inside the plane (d·h·w), -1 while nothing beat the start
 * value (the type's lowest). */
#define MAX_PLANE_ROW(T, LOWEST) \
  static void \
  max_output_row_##T (const PoolState *s, const T *plane, gint64 od, gint64 oy, T *best, \
      gint32 *idx) \
  { \
    for (gint64 x = 0; x < s->ow; x++) { \
      best[x] = LOWEST; \
      idx[x] = -1; \
    } \
    for (gint64 kz = 0; kz < s->kd; kz++) { \
      gint64 iz = od * s->sd - s->pd + kz * s->dd; \
      if (iz < 0 || iz >= s->d) \
        continue; \
      for (gint64 ky = 0; ky < s->kh; ky++) { \
        gint64 iy = oy * s->sh - s->pt + ky * s->dh; \
        if (iy < 0 || iy >= s->h) \
          continue; \
        gint32 base = (gint32) ((iz * s->h + iy) * s->w); \
        for (gint64 kx = 0; kx < s->kw; kx++) { \
          gint64 off = kx * s->dw - s->pl, lo, hi; \
          valid_columns (s, off, &lo, &hi); \
          max_row_##T (plane + base, off, s->sw, lo, hi, best, idx, base); \
        } \
      } \
    } \
    /* Windows where no element beat LOWEST (all lowest or NaN, or only \
     * pads): the first element of the window decides, as a scan would. */ \
    for (gint64 x = 0; x < s->ow; x++) { \
      if (idx[x] >= 0) \
        continue; \
      for (gint64 kz = 0; kz < s->kd && idx[x] < 0; kz++) \
        for (gint64 ky = 0; ky < s->kh && idx[x] < 0; ky++) \
          for (gint64 kx = 0; kx < s->kw && idx[x] < 0; kx++) { \
            gint64 iz = od * s->sd - s->pd + kz * s->dd; \
            gint64 iy = oy * s->sh - s->pt + ky * s->dh; \
            gint64 ix = x * s->sw - s->pl + kx * s->dw; \
            if (iz < 0 || iz >= s->d || iy < 0 || iy >= s->h || ix < 0 || ix >= s->w) \
              continue; \
            idx[x] = (gint32) ((iz * s->h + iy) * s->w + ix); \
            best[x] = plane[idx[x]]; \
          } \
      if (idx[x] < 0) \
        idx[x] = 0; \
    } \
  }

MAX_PLANE_ROW (f32, -INFINITY)
MAX_PLANE_ROW (gint32, G_MININT32)
MAX_PLANE_ROW (gint64, G_MININT64)
MAX_PLANE_ROW (u8, 0)

/* ---- AvgPool rows ------------------------------------------------------ */

M2I_K_INLINE void
sum_row_body (const float *row, gint64 off, gint64 sw, gint64 lo, gint64 hi, float *acc)
{
  for (gint64 x = lo; x <= hi; x++)
    acc[x] += row[x * sw + off];
}
M2I_K_SIMD_CLONES (sum_row, (const float *row, gint64 off, gint64 sw, gint64 lo,
        gint64 hi, float *acc), (row, off, sw, lo, hi, acc))

/* Number of taps along one axis that land inside [0, size). */
static inline gint64
taps_inside (gint64 start, gint64 k, gint64 size)
{
  return MAX (0, MIN (start + k, size) - MAX (start, 0));
}

static void
avg_output_row (const PoolState *s, const float *plane, gint64 od, gint64 oy, float *out)
{
  memset (out, 0, s->ow * sizeof (float));
  for (gint64 kz = 0; kz < s->kd; kz++) {
    gint64 iz = od * s->sd - s->pd + kz;
    if (iz < 0 || iz >= s->d)
      continue;
    for (gint64 ky = 0; ky < s->kh; ky++) {
      gint64 iy = oy * s->sh - s->pt + ky;
      if (iy < 0 || iy >= s->h)
        continue;
      const float *row = plane + (iz * s->h + iy) * s->w;
      for (gint64 kx = 0; kx < s->kw; kx++) {
        gint64 off = kx - s->pl, lo, hi;
        valid_columns (s, off, &lo, &hi);
        sum_row (row, off, s->sw, lo, hi, out);
      }
    }
  }
  gint64 rows = taps_inside (od * s->sd - s->pd, s->kd, s->d) *
      taps_inside (oy * s->sh - s->pt, s->kh, s->h);
  for (gint64 x = 0; x < s->ow; x++) {
    gint64 count = s->pads_in_avg ? s->kd * s->kh * s->kw
        : rows * taps_inside (x * s->sw - s->pl, s->kw, s->w);
    out[x] = count ? out[x] / (float) count : 0.0f;
  }
}

/* ---- Driver ------------------------------------------------------------ */

typedef struct {
  const PoolState *s;
  const guint8 *in;
  guint8 *out, *indices;
  guint8 *scratch;                     /* per slice: ow values + ow gint32 */
} PoolJob;

static gsize
pool_scratch_per_slice (const PoolState *s)
{
  return ((s->ow * (8 + 4)) + 63) & ~(gsize) 63;
}

static void
pool_slice (gint begin, gint end, gint slice, gpointer data)
{
  const PoolJob *j = data;
  const PoolState *s = j->s;
  gsize es = m2i_element_type_size (s->type);
  gint64 in_plane = s->d * s->h * s->w, out_plane = s->od * s->oh * s->ow;
  guint8 *best = j->scratch + slice * pool_scratch_per_slice (s);
  gint32 *idx = (gint32 *) (best + s->ow * 8);
  for (gint p = begin; p < end; p++) {
    const guint8 *plane = j->in + p * in_plane * es;
    /* MaxPool-8 indices are counted from `axis` on. */
    gint64 shift = s->axis == 0 ? p * in_plane : s->axis == 1 ? (p % s->c) * in_plane : 0;
    for (gint64 od = 0; od < s->od; od++)
      for (gint64 oy = 0; oy < s->oh; oy++) {
        gint64 o = p * out_plane + (od * s->oh + oy) * s->ow;
        guint8 *dst = j->out + o * es;
        if (!s->is_max) {
          avg_output_row (s, (const float *) plane, od, oy, (float *) dst);
          continue;
        }
        switch (s->type) {
          case M2I_ET_F32:
            max_output_row_f32 (s, (const float *) plane, od, oy, (float *) best, idx);
            break;
          case M2I_ET_I32:
            max_output_row_gint32 (s, (const gint32 *) plane, od, oy, (gint32 *) best, idx);
            break;
          case M2I_ET_I64:
            max_output_row_gint64 (s, (const gint64 *) plane, od, oy, (gint64 *) best, idx);
            break;
          default:
            max_output_row_u8 (s, plane, od, oy, best, idx);
            break;
        }
        memcpy (dst, best, s->ow * es);
        if (s->n_outputs < 2)
          continue;
        if (s->index_type == M2I_ET_I32) {
          gint32 *ind = (gint32 *) j->indices + o;
          for (gint64 x = 0; x < s->ow; x++)
            ind[x] = (gint32) (idx[x] + shift);
        } else {
          gint64 *ind = (gint64 *) j->indices + o;
          for (gint64 x = 0; x < s->ow; x++)
            ind[x] = idx[x] + shift;
        }
      }
  }
}

static gboolean
pool_infer (M2iOpContext *ctx, gboolean is_max, gboolean v8, GError **error)
{
  static const M2iElementType max_types[] = { M2I_ET_F32, M2I_ET_I32, M2I_ET_I64, M2I_ET_U8 };
  if (!m2i_k_check_arity (ctx, 1, 1, 1, v8 ? 2 : 1, error) ||
      !m2i_k_check_type (ctx, 0, max_types, is_max ? G_N_ELEMENTS (max_types) : 1, error) ||
      !m2i_k_check_rank (ctx, 0, 3, 5, error))
    return FALSE;
  const M2iShape *in = &ctx->inputs[0].shape;
  gint spatial = in->rank - 2;
  M2iWindow win;
  if (!m2i_k_window_attrs (ctx, spatial, v8, "kernel", &win, error))
    return FALSE;
  gint64 in_sp[3], out_sp[3];
  for (gint i = 0; i < spatial; i++)
    in_sp[i] = in->dims[2 + i];
  if (!m2i_k_window_output (ctx, &win, in_sp, out_sp, error))
    return FALSE;
  if (m2i_shape_numel (in) / MAX (in->dims[0] * in->dims[1], 1) > G_MAXINT32) {
    m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, ctx->node,
        "input %s: spatial planes over 2^31 elements are not supported",
        m2i_k_shape_str (in, 0));
    return FALSE;
  }

  PoolState *s = g_new0 (PoolState, 1);
  s->is_max = is_max;
  s->type = ctx->inputs[0].type;
  s->n_outputs = ctx->n_outputs;
  s->n = in->dims[0];
  s->c = in->dims[1];
  /* Spatial axes right-aligned into (d, h, w); missing ones are units. */
  gint64 *dims[3][6] = {
    { &s->d, &s->od, &s->kd, &s->sd, &s->dd, &s->pd },
    { &s->h, &s->oh, &s->kh, &s->sh, &s->dh, &s->pt },
    { &s->w, &s->ow, &s->kw, &s->sw, &s->dw, &s->pl },
  };
  for (gint a = 0; a < 3; a++) {
    gint i = a - (3 - spatial);
    *dims[a][0] = i >= 0 ? in_sp[i] : 1;
    *dims[a][1] = i >= 0 ? out_sp[i] : 1;
    *dims[a][2] = i >= 0 ? win.kernel[i] : 1;
    *dims[a][3] = i >= 0 ? win.strides[i] : 1;
    *dims[a][4] = i >= 0 ? win.dilations[i] : 1;
    *dims[a][5] = i >= 0 ? win.pads_begin[i] : 0;
  }
  gboolean any_pad = FALSE;
  for (gint i = 0; i < spatial; i++)
    any_pad |= win.pads_begin[i] != 0 || win.pads_end[i] != 0;

  if (!is_max) {
    gboolean exclude;
    if (!m2i_ir_node_attr_bool (ctx->node, "exclude-pad", FALSE, &exclude, error)) {
      g_free (s);
      return FALSE;
    }
    s->exclude_pad = exclude;
    s->pads_in_avg = !exclude && any_pad;
  }
  if (v8) {
    static const char *const itypes[] = { "i64", "i32", NULL };
    gint it;
    gint64 axis;
    if (!m2i_ir_node_attr_enum (ctx->node, "index_element_type", "i64", itypes, &it, error) ||
        !m2i_ir_node_attr_int (ctx->node, "axis", 0, &axis, error) ||
        !m2i_k_axis (ctx, axis, in->rank, TRUE, "axis", &s->axis, error)) {
      g_free (s);
      return FALSE;
    }
    s->index_type = it == 0 ? M2I_ET_I64 : M2I_ET_I32;
    if (it == 1 && s->axis == 0 && m2i_shape_numel (in) > G_MAXINT32) {
      m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, ctx->node,
          "indices of input %s do not fit index_element_type i32", m2i_k_shape_str (in, 0));
      g_free (s);
      return FALSE;
    }
  }
  s->slices = m2i_k_threads (ctx);
  ctx->scratch_bytes = is_max ? s->slices * pool_scratch_per_slice (s) : 0;
  for (gint o = 0; o < ctx->n_outputs; o++) {
    ctx->outputs[o].type = o == 0 ? s->type : s->index_type;
    ctx->outputs[o].shape = *in;
    for (gint i = 0; i < spatial; i++)
      ctx->outputs[o].shape.dims[2 + i] = out_sp[i];
  }
  ctx->state = s;
  return TRUE;
}

static gboolean
pool_execute (M2iOpContext *ctx, GError **error)
{
  const PoolState *s = ctx->state;
  PoolJob j = { s, ctx->inputs[0].data, ctx->outputs[0].data,
    ctx->n_outputs > 1 ? ctx->outputs[1].data : NULL, ctx->scratch };
  gint planes = (gint) (s->n * s->c);
  gint64 work = s->n * s->c * s->od * s->oh * s->ow * s->kd * s->kh * s->kw;
  gint slices = work >= 65536 ? MIN (m2i_k_threads (ctx), s->slices) : 1;
  m2i_parallel_for (planes, slices, 1, pool_slice, &j);
  return TRUE;
}

static gboolean max1_infer (M2iOpContext *c, GError **e) { return pool_infer (c, TRUE, FALSE, e); }
static gboolean max8_infer (M2iOpContext *c, GError **e) { return pool_infer (c, TRUE, TRUE, e); }
static gboolean avg_infer (M2iOpContext *c, GError **e) { return pool_infer (c, FALSE, FALSE, e); }

static gboolean
max_infer (M2iOpContext *ctx, GError **error)
{
  /* MaxPool-8 adds dilations, indices, index_element_type and axis. */
  if (!g_strcmp0 (m2i_ir_node_get_version (ctx->node), "opset1"))
    return max1_infer (ctx, error);
  return max8_infer (ctx, error);
}

const M2iOpKernel m2i_kernel_max_pool = {
  "MaxPool", "opset1 opset8", max_infer, pool_execute, g_free,
};

const M2iOpKernel m2i_kernel_avg_pool = {
  "AvgPool", "opset1", avg_infer, pool_execute, g_free,
};
