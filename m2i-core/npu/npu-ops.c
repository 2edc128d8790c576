/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Pooling, element-wise add and PReLU on blocked tensors (int8 and fp16).
 * The loops run over the 8 lanes of a block, which compilers vectorize;
 * fp16 pooling has F16C kernels (npu-ops-x86.c) that compute the same. */
#include "npu-private.h"

#include <base/m2i-error.h>
#include <base/m2i-parallel.h>
#include <mli/mli-private.h>
#include <math.h>
#include <string.h>

#define NPU_MAX_POOL 4096

/* Writes the representation of 0 into the padding lanes (channels >= c)
 * of @w pixels of the last block. */
static void
zero_padding_lanes (guint8 *block, gint w, gint c, M2iNpuPrecision p, gint8 zero)
{
  gint lanes = c % 8;
  if (lanes == 0)
    return;
  for (gint x = 0; x < w; x++)
    for (gint l = lanes; l < 8; l++) {
      if (p == M2I_NPU_INT8)
        block[x * 8 + l] = (guint8) zero;
      else
        ((m2i_f16 *) block)[x * 8 + l] = 0;
    }
}

/* The first element of block row (n, y, cb) of @t, whose block, row and
 * batch strides (elements) are @s[0], @s[1], @s[2]. */
static inline guint8 *
block_row (const M2iNpuTensor *t, const gint64 s[3], gint n, gint y, gint cb)
{
  gsize es = t->precision == M2I_NPU_FP16 ? 2 : 1;
  return (guint8 *) t->data + (n * s[2] + y * s[1] + cb * s[0]) * (gint64) es;
}

/* Which of @n per-channel values lane @l of channel block @cb takes: the
 * only one when @n is 1, else its channel's (padding lanes: the last). */
static inline gint
channel_value (gint n, gint cb, gint l)
{
  return n == 1 ? 0 : MIN (cb * 8 + l, n - 1);
}

/* ---- pooling ----------------------------------------------------------------- */

static gboolean
pool_check (const M2iNpuPoolParams *p, GError **error)
{
  const char *why = NULL;
  if (!p)
    why = "parameters are NULL";
  else if (p->kind != M2I_NPU_POOL_MAX && p->kind != M2I_NPU_POOL_AVG)
    why = "unknown kind";
  else if (p->kernel_h < 1 || p->kernel_w < 1 || p->kernel_h > NPU_MAX_POOL || p->kernel_w > NPU_MAX_POOL)
    why = "kernel sizes must be in [1, 4096]";
  else if (p->stride_h < 1 || p->stride_w < 1 || p->stride_h > NPU_MAX_POOL || p->stride_w > NPU_MAX_POOL)
    why = "strides must be in [1, 4096]";
  else if (p->pad_top < 0 || p->pad_bottom < 0 || p->pad_left < 0 || p->pad_right < 0
      || p->pad_top >= p->kernel_h || p->pad_bottom >= p->kernel_h
      || p->pad_left >= p->kernel_w || p->pad_right >= p->kernel_w)
    why = "pads must be >= 0 and smaller than the kernel";
  else if (p->round != M2I_MLI_ROUND_HALF_UP && p->round != M2I_MLI_ROUND_HALF_EVEN)
    why = "unknown rounding mode";
  else if (p->zero_point < -128 || p->zero_point > 127)
    why = "zero_point must be in [-128, 127]";
  if (why) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, "pool: %s", why);
    return FALSE;
  }
  return TRUE;
}

static gint
pool_extent (gint in, gint pb, gint pe, gint k, gint s, gboolean ceil_mode)
{
  gint span = in + pb + pe - k;
  if (span < 0)
    return 0;
  gint out = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
  if (ceil_mode && (out - 1) * s >= in + pb)  /* last window would start in the end pad */
    out--;
  return out;
}

gboolean
m2i_npu_pool_output_size (const M2iNpuPoolParams *p, gint in_h, gint in_w,
    gint *out_h, gint *out_w, GError **error)
{
  if (!pool_check (p, error))
    return FALSE;
  gint oh = pool_extent (in_h, p->pad_top, p->pad_bottom, p->kernel_h, p->stride_h, p->ceil_mode);
  gint ow = pool_extent (in_w, p->pad_left, p->pad_right, p->kernel_w, p->stride_w, p->ceil_mode);
  if (in_h < 1 || in_w < 1 || oh < 1 || ow < 1) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "pool: a %dx%d kernel leaves no output on a %dx%d input", p->kernel_h,
        p->kernel_w, in_h, in_w);
    return FALSE;
  }
  *out_h = oh;
  *out_w = ow;
  return TRUE;
}

typedef struct {
  const M2iNpuPoolParams *p;
  const M2iNpuTensor *in;
  M2iNpuTensor *out;
  gint64 ib, ir, ibt, ob, orow, obt;    /* elements */
  NpuPoolRowFunc f16_row;               /* vector kernel, or NULL */
} PoolJob;

static void
pool_rows (gint begin, gint end, gint slice, gpointer data)
{
  const PoolJob *j = data;
  const M2iNpuPoolParams *p = j->p;
  const M2iNpuTensor *in = j->in;
  M2iNpuTensor *out = j->out;
  gint cbs = CEIL8 (in->c);
  gboolean f16 = in->precision == M2I_NPU_FP16;
  gsize es = f16 ? 2 : 1;
  gint8 zero = (gint8) p->zero_point;
  for (gint item = begin; item < end; item++) {
    gint cb = item % cbs, oy = (item / cbs) % out->h, n = item / cbs / out->h;
    gint y0, y1, vy0, vy1;
    npu_pool_window (oy, p->stride_h, p->pad_top, p->pad_bottom, p->kernel_h, in->h, &y0, &y1,
        &vy0, &vy1);
    const guint8 *src = (const guint8 *) in->data + (n * j->ibt + cb * j->ib) * es;
    guint8 *dst = (guint8 *) out->data + (n * j->obt + oy * j->orow + cb * j->ob) * es;
    if (f16 && j->f16_row) {
      NpuPoolRow row = { p, (const m2i_f16 *) src, j->ir, in->w, vy0, vy1, y1 - y0,
        (m2i_f16 *) dst, out->w };
      j->f16_row (&row);
      if (cb == cbs - 1)
        zero_padding_lanes (dst, out->w, out->c, out->precision, zero);
      continue;
    }
    for (gint ox = 0; ox < out->w; ox++) {
      gint x0, x1, vx0, vx1;
      npu_pool_window (ox, p->stride_w, p->pad_left, p->pad_right, p->kernel_w, in->w, &x0, &x1,
          &vx0, &vx1);
      gint count = p->exclude_pad ? (vy1 - vy0) * (vx1 - vx0) : (y1 - y0) * (x1 - x0);
      if (!f16) {
        gint32 acc[8];
        for (gint l = 0; l < 8; l++)
          acc[l] = p->kind == M2I_NPU_POOL_MAX ? G_MININT32 : 0;
        for (gint y = vy0; y < vy1; y++)
          for (gint x = vx0; x < vx1; x++) {
            const gint8 *v = (const gint8 *) src + y * j->ir + x * 8;
            for (gint l = 0; l < 8; l++)
              acc[l] = p->kind == M2I_NPU_POOL_MAX ? MAX (acc[l], v[l]) : acc[l] + (v[l] - p->zero_point);
          }
        for (gint l = 0; l < 8; l++) {
          gint64 r = p->kind == M2I_NPU_POOL_MAX ? acc[l]
              : p->zero_point + mli_div_round (acc[l], count, p->round);
          ((gint8 *) dst)[ox * 8 + l] = (gint8) CLAMP (r, -128, 127);
        }
      } else {
        float acc[8];
        for (gint l = 0; l < 8; l++)
          acc[l] = p->kind == M2I_NPU_POOL_MAX ? -INFINITY : 0.0f;
        for (gint y = vy0; y < vy1; y++)
          for (gint x = vx0; x < vx1; x++) {
            const m2i_f16 *v = (const m2i_f16 *) src + y * j->ir + x * 8;
            for (gint l = 0; l < 8; l++) {
              float f = m2i_f16_to_f32 (v[l]);
              acc[l] = p->kind == M2I_NPU_POOL_MAX ? (f > acc[l] ? f : acc[l]) : acc[l] + f;
            }
          }
        for (gint l = 0; l < 8; l++)
          ((m2i_f16 *) dst)[ox * 8 + l] = m2i_f32_to_f16 (p->kind == M2I_NPU_POOL_MAX
              ? acc[l] : acc[l] / (float) count);
      }
    }
    if (cb == cbs - 1)
      zero_padding_lanes (dst, out->w, out->c, out->precision, zero);
  }
}

gboolean
m2i_npu_pool_run (const M2iNpuPoolParams *p, const M2iNpuTensor *in,
    M2iNpuTensor *out, gint n_threads, GError **error)
{
  if (!m2i_npu_tensor_check (in, error))
    return FALSE;
  gint oh, ow;
  if (!m2i_npu_pool_output_size (p, in->h, in->w, &oh, &ow, error))
    return FALSE;
  if (!npu_tensor_expect (out, "pool output", in->precision, in->n, in->c, oh, ow, error))
    return FALSE;
  PoolJob j = { p, in, out };
  j.f16_row = in->precision == M2I_NPU_FP16 ? npu_x86_pool_f16_func () : NULL;
  npu_tensor_strides (in, &j.ib, &j.ir, &j.ibt);
  npu_tensor_strides (out, &j.ob, &j.orow, &j.obt);
  m2i_parallel_for (in->n * oh * CEIL8 (in->c), n_threads, 4, pool_rows, &j);
  return TRUE;
}

/* ---- element-wise add -------------------------------------------------------- */

gboolean
m2i_npu_add_params_from_scales (double a_scale, gint32 a_zero_point,
    double b_scale, gint32 b_zero_point, double out_scale,
    gint32 out_zero_point, M2iNpuAddParams *p, GError **error)
{
  if (!p || !(a_scale > 0) || !(b_scale > 0) || !(out_scale > 0)
      || isinf (a_scale) || isinf (b_scale) || isinf (out_scale)
      || a_zero_point < -128 || a_zero_point > 127 || b_zero_point < -128
      || b_zero_point > 127 || out_zero_point < -128 || out_zero_point > 127) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "add: scales must be positive and finite, zero points in [-128, 127]");
    return FALSE;
  }
  memset (p, 0, sizeof *p);
  p->a_zero_point = a_zero_point;
  p->b_zero_point = b_zero_point;
  p->out_zero_point = out_zero_point;
  p->left_shift = 20;
  double twice_max = 2 * MAX (a_scale, b_scale);
  if (!m2i_npu_quantize_multiplier (a_scale / twice_max, &p->a_multiplier, &p->a_shift)
      || !m2i_npu_quantize_multiplier (b_scale / twice_max, &p->b_multiplier, &p->b_shift)
      || !m2i_npu_quantize_multiplier (twice_max / ((1 << 20) * out_scale),
          &p->out_multiplier, &p->out_shift)) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "add: the scale ratios %g / %g / %g cannot be expressed as multipliers",
        a_scale, b_scale, out_scale);
    return FALSE;
  }
  p->act_min = -128;
  p->act_max = 127;
  p->f_min = -INFINITY;
  p->f_max = INFINITY;
  return TRUE;
}

static gboolean
add_check (const M2iNpuAddParams *p, const M2iNpuTensor *a, GError **error)
{
  const char *why = NULL;
  if (!p)
    why = "parameters are NULL";
  else if (p->left_shift < 0 || p->left_shift > 20)
    why = "left_shift must be in [0, 20]";
  else if (p->a_multiplier < 0 || p->b_multiplier < 0 || p->out_multiplier < 0)
    why = "multipliers must be >= 0";
  else if (p->a_shift < -31 || p->a_shift > 30 || p->b_shift < -31 || p->b_shift > 30
      || p->out_shift < -31 || p->out_shift > 30)
    why = "shifts must be in [-31, 30]";
  else if (p->a_zero_point < -128 || p->a_zero_point > 127 || p->b_zero_point < -128
      || p->b_zero_point > 127 || p->out_zero_point < -128 || p->out_zero_point > 127)
    why = "zero points must be in [-128, 127]";
  else if (p->act_min < -128 || p->act_max > 127 || p->act_min > p->act_max)
    why = "need -128 <= act_min <= act_max <= 127";
  else if (isnan (p->f_min) || isnan (p->f_max) || p->f_min > p->f_max)
    why = "f_min..f_max is not a range";
  else if (p->f_slope && (a->precision != M2I_NPU_FP16 || (p->n_slope != 1 && p->n_slope != a->c)))
    why = "a fused PReLU runs in fp16 with 1 or one slope per channel";
  for (gint i = 0; !why && p->f_slope && i < p->n_slope; i++)
    if (!isfinite (p->f_slope[i]))
      why = "PReLU slopes must be finite";
  if (why) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, "add: %s", why);
    return FALSE;
  }
  return TRUE;
}

typedef struct {
  const M2iNpuAddParams *p;
  const M2iNpuTensor *a, *b;
  M2iNpuTensor *out;
  gint64 s[3][3];               /* block, row, batch strides of a, b, out */
  NpuAddF16Func f16_fast;       /* vector kernel, or NULL */
} AddJob;

static inline gint32
mbqm_exp (gint32 x, gint32 m, gint shift)
{
  return npu_mbqm (x, m, MAX (shift, 0), MAX (-shift, 0));
}

static void
add_rows (gint begin, gint end, gint slice, gpointer data)
{
  const AddJob *j = data;
  const M2iNpuAddParams *p = j->p;
  const M2iNpuTensor *out = j->out;
  gint cbs = CEIL8 (out->c);
  gboolean f16 = out->precision == M2I_NPU_FP16;
  gint64 len = (gint64) out->w * 8;
  gint8 zero = (gint8) CLAMP (p->out_zero_point, p->act_min, p->act_max);
  for (gint item = begin; item < end; item++) {
    gint cb = item % cbs, y = (item / cbs) % out->h, n = item / cbs / out->h;
    const guint8 *row[2] = { block_row (j->a, j->s[0], n, y, cb),
      block_row (j->b, j->s[1], n, y, cb) };
    guint8 *dst = block_row (out, j->s[2], n, y, cb);
    if (!f16) {
      const gint8 *a = (const gint8 *) row[0], *b = (const gint8 *) row[1];
      for (gint64 i = 0; i < len; i++) {
        gint32 sa = mbqm_exp ((a[i] - p->a_zero_point) * (1 << p->left_shift),
            p->a_multiplier, p->a_shift);
        gint32 sb = mbqm_exp ((b[i] - p->b_zero_point) * (1 << p->left_shift),
            p->b_multiplier, p->b_shift);
        gint32 r = mbqm_exp (sa + sb, p->out_multiplier, p->out_shift);
        r = CLAMP (r, -512, 512) + p->out_zero_point;
        ((gint8 *) dst)[i] = (gint8) CLAMP (r, p->act_min, p->act_max);
      }
    } else {
      float slope[8] = { 1, 1, 1, 1, 1, 1, 1, 1 };
      for (gint l = 0; p->f_slope && l < 8; l++)
        slope[l] = p->f_slope[channel_value (p->n_slope, cb, l)];
      const float *s8 = p->f_slope ? slope : NULL;
      if (j->f16_fast) {
        j->f16_fast ((const m2i_f16 *) row[0], (const m2i_f16 *) row[1], (m2i_f16 *) dst,
            out->w, p->f_min, p->f_max, s8);
      } else {
        const m2i_f16 *ha = (const m2i_f16 *) row[0], *hb = (const m2i_f16 *) row[1];
        for (gint64 i = 0; i < len; i++) {
          float v = m2i_f16_to_f32 (ha[i]) + m2i_f16_to_f32 (hb[i]);
          if (s8 && v < 0.0f)
            v = v * s8[i % 8];
          v = v < p->f_min ? p->f_min : v > p->f_max ? p->f_max : v;
          ((m2i_f16 *) dst)[i] = m2i_f32_to_f16 (v);
        }
      }
    }
    if (cb == cbs - 1)
      zero_padding_lanes (dst, out->w, out->c, out->precision, zero);
  }
}

gboolean
m2i_npu_add_run (const M2iNpuAddParams *p, const M2iNpuTensor *a,
    const M2iNpuTensor *b, M2iNpuTensor *out, gint n_threads, GError **error)
{
  if (!m2i_npu_tensor_check (a, error) || !add_check (p, a, error))
    return FALSE;
  if (!npu_tensor_expect (b, "add input b", a->precision, a->n, a->c, a->h, a->w, error)
      || !npu_tensor_expect (out, "add output", a->precision, a->n, a->c, a->h, a->w, error))
    return FALSE;
  AddJob j = { p, a, b, out };
  j.f16_fast = a->precision == M2I_NPU_FP16 ? npu_x86_add_f16_func () : NULL;
  const M2iNpuTensor *t[3] = { a, b, out };
  for (int k = 0; k < 3; k++)
    npu_tensor_strides (t[k], &j.s[k][0], &j.s[k][1], &j.s[k][2]);
  m2i_parallel_for (a->n * a->h * CEIL8 (a->c), n_threads, 4, add_rows, &j);
  return TRUE;
}

/* ---- PReLU ----------------------------------------------------------------- */

gboolean
m2i_npu_prelu_params_from_scales (double in_scale, gint32 in_zero_point, double out_scale,
    gint32 out_zero_point, const float *slopes, gint n_slopes, gint32 *neg_mult,
    gint8 *neg_shift, M2iNpuPreluParams *p, GError **error)
{
  gboolean ok = p && slopes && neg_mult && neg_shift && n_slopes >= 1 && in_scale > 0 &&
      out_scale > 0 && isfinite (in_scale) && isfinite (out_scale) &&
      in_zero_point >= -128 && in_zero_point <= 127 &&
      out_zero_point >= -128 && out_zero_point <= 127;
  double ratio = ldexp (in_scale / out_scale, -20);
  if (ok) {
    memset (p, 0, sizeof *p);
    p->left_shift = 20;
    ok = npu_quantize_signed (ratio, &p->pos_multiplier, &p->pos_shift);
  }
  for (gint i = 0; ok && i < n_slopes; i++)
    ok = npu_quantize_signed (slopes[i] * ratio, &neg_mult[i], &neg_shift[i]);
  if (!ok) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "PReLU from scales: scales must be positive and finite, zero points in [-128, 127], "
        "slopes finite, and |slope|·in/out below 2^30");
    return FALSE;
  }
  p->n = n_slopes;
  p->slope = slopes;
  p->in_zero_point = in_zero_point;
  p->out_zero_point = out_zero_point;
  p->neg_multiplier = neg_mult;
  p->neg_shift = neg_shift;
  p->act_min = -128;
  p->act_max = 127;
  return TRUE;
}

static gboolean
prelu_check (const M2iNpuPreluParams *p, const M2iNpuTensor *in, GError **error)
{
  const char *why = NULL;
  if (!p)
    why = "parameters are NULL";
  else if (p->n != 1 && p->n != in->c)
    why = "n must be 1 or the channel count";
  else if (in->precision == M2I_NPU_FP16) {
    if (!p->slope)
      why = "fp16 needs slopes";
    for (gint i = 0; !why && i < p->n; i++)
      if (!isfinite (p->slope[i]))
        why = "slopes must be finite";
  } else if (!p->neg_multiplier || !p->neg_shift)
    why = "int8 needs neg_multiplier and neg_shift";
  else if (p->in_zero_point < -128 || p->in_zero_point > 127 || p->out_zero_point < -128 ||
      p->out_zero_point > 127)
    why = "zero points must be in [-128, 127]";
  else if (p->left_shift < 0 || p->left_shift > 22)
    why = "left_shift must be in [0, 22]";
  else if (p->pos_multiplier < 0 || p->pos_shift < -31 || p->pos_shift > 30)
    why = "pos_multiplier must be >= 0 and pos_shift in [-31, 30]";
  else if (p->act_min < -128 || p->act_max > 127 || p->act_min > p->act_max)
    why = "need -128 <= act_min <= act_max <= 127";
  else
    for (gint i = 0; !why && i < p->n; i++)
      if (p->neg_multiplier[i] == G_MININT32 || p->neg_shift[i] < -31 || p->neg_shift[i] > 30)
        why = "neg_multiplier must be > -2^31 and neg_shift in [-31, 30]";
  if (why) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, "prelu: %s", why);
    return FALSE;
  }
  return TRUE;
}

typedef struct {
  const M2iNpuPreluParams *p;
  const M2iNpuTensor *in;
  M2iNpuTensor *out;
  gint64 s[2][3];               /* block, row, batch strides of in, out */
  NpuPreluF16Func f16_fast;     /* vector kernel, or NULL */
} PreluJob;

static void
prelu_rows (gint begin, gint end, gint slice, gpointer data)
{
  const PreluJob *j = data;
  const M2iNpuPreluParams *p = j->p;
  const M2iNpuTensor *out = j->out;
  gint cbs = CEIL8 (out->c);
  gboolean f16 = out->precision == M2I_NPU_FP16;
  gint64 len = (gint64) out->w * 8;
  gint8 zero = (gint8) CLAMP (p->out_zero_point, p->act_min, p->act_max);
  for (gint item = begin; item < end; item++) {
    gint cb = item % cbs, y = (item / cbs) % out->h, n = item / cbs / out->h;
    const guint8 *src = block_row (j->in, j->s[0], n, y, cb);
    guint8 *dst = block_row (out, j->s[1], n, y, cb);
    /* the block's 8 slopes (padding lanes: any; they are rewritten) */
    if (f16) {
      float slope[8];
      for (gint l = 0; l < 8; l++)
        slope[l] = p->slope[channel_value (p->n, cb, l)];
      if (j->f16_fast) {
        j->f16_fast ((const m2i_f16 *) src, (m2i_f16 *) dst, out->w, slope);
      } else {
        const m2i_f16 *sh = (const m2i_f16 *) src;
        m2i_f16 *dh = (m2i_f16 *) dst;
        for (gint64 px = 0; px < out->w; px++)
          for (gint l = 0; l < 8; l++) {
            float v = m2i_f16_to_f32 (sh[px * 8 + l]);
            dh[px * 8 + l] = m2i_f32_to_f16 (v < 0.0f ? v * slope[l] : v);
          }
      }
    } else {
      gint32 nm[8], nl[8], nr[8];
      gint pl = MAX (p->pos_shift, 0), pr = MAX (-p->pos_shift, 0);
      for (gint l = 0; l < 8; l++) {
        gint k = channel_value (p->n, cb, l);
        nm[l] = p->neg_multiplier[k];
        nl[l] = MAX (p->neg_shift[k], 0);
        nr[l] = MAX (-p->neg_shift[k], 0);
      }
      const gint8 *a = (const gint8 *) src;
      for (gint64 i = 0; i < len; i++) {
        gint32 d = (a[i] - p->in_zero_point) * (1 << p->left_shift), l = i % 8;
        gint32 q = d >= 0 ? npu_mbqm (d, p->pos_multiplier, pl, pr)
            : npu_mbqm (d, nm[l], nl[l], nr[l]);
        q = CLAMP (q, -512, 512) + p->out_zero_point;
        ((gint8 *) dst)[i] = (gint8) CLAMP (q, p->act_min, p->act_max);
      }
    }
    if (cb == cbs - 1)
      zero_padding_lanes (dst, out->w, out->c, out->precision, zero);
  }
}

gboolean
m2i_npu_prelu_run (const M2iNpuPreluParams *p, const M2iNpuTensor *in, M2iNpuTensor *out,
    gint n_threads, GError **error)
{
  if (!m2i_npu_tensor_check (in, error) || !prelu_check (p, in, error))
    return FALSE;
  if (!npu_tensor_expect (out, "prelu output", in->precision, in->n, in->c, in->h, in->w, error))
    return FALSE;
  PreluJob j = { p, in, out };
  j.f16_fast = in->precision == M2I_NPU_FP16 ? npu_x86_prelu_f16_func () : NULL;
  npu_tensor_strides (in, &j.s[0][0], &j.s[0][1], &j.s[0][2]);
  npu_tensor_strides (out, &j.s[1][0], &j.s[1][1], &j.s[1][2]);
  if (in->data != out->data && ((const guint8 *) in->data < (const guint8 *) out->data +
          out->capacity && (const guint8 *) out->data < (const guint8 *) in->data + in->capacity)) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "prelu: the output overlaps the input without being it");
    return FALSE;
  }
  if (in->data == out->data && memcmp (j.s[0], j.s[1], sizeof j.s[0])) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "prelu: in place needs the same strides");
    return FALSE;
  }
  m2i_parallel_for (in->n * in->h * CEIL8 (in->c), n_threads, 4, prelu_rows, &j);
  return TRUE;
}
