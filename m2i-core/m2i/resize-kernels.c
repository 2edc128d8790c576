/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* resize-kernels.c — the plain C row kernels of a resize, the run-time choice
 * of SIMD variants, and the expanded tables those variants read.
 *
 * The C kernels are the definition of the evaluation order (resize-private.h);
 * every other variant is tested bit-exact against them.
 */
#include "resize-internal.h"

#include <base/m2i-fp16.h>

/* ---- plain C ------------------------------------------------------------ */

/* One horizontal value: output pixel e / C, channel e % C. */
#define HVALUE(plan, src, C, e, acc)                                    \
  do {                                                                  \
    const M2iResizeAxis *ax_ = &(plan)->x;                              \
    gint T_ = ax_->taps, i_ = (e) / (C), c_ = (e) % (C);                \
    const gint32 *ix_ = ax_->index + (gsize) i_ * T_;                   \
    const float *w_ = ax_->weight + (gsize) i_ * T_;                    \
    (acc) = 0.0f;                                                       \
    for (gint t_ = 0; t_ < T_; t_++)                                    \
      (acc) += w_[t_] * LOAD ((src)[(gsize) ix_[t_] * (C) + c_]);       \
  } while (0)

void
m2i_resize_hvalues_u8_c (const M2iResizePlan *plan, const guint8 *src,
    gint channels, float *dst, gint e0, gint e1)
{
#define LOAD(v) ((float) (v))
  for (gint e = e0; e < e1; e++) {
    float acc;
    HVALUE (plan, src, channels, e, acc);
    dst[e] = plan->round_intermediate ? m2i_resize_round_half_away_u8f (acc) : acc;
  }
#undef LOAD
}

void
m2i_resize_hvalues_f16_c (const M2iResizePlan *plan, const guint16 *src,
    gint channels, float *dst, gint e0, gint e1)
{
#define LOAD(v) m2i_f16_to_f32 (v)
  for (gint e = e0; e < e1; e++) {
    float acc;
    HVALUE (plan, src, channels, e, acc);
    dst[e] = plan->round_intermediate ? m2i_f16_to_f32 (m2i_f32_to_f16 (acc)) : acc;
  }
#undef LOAD
}

void
m2i_resize_hvalues_f32_c (const M2iResizePlan *plan, const float *src,
    gint channels, float *dst, gint e0, gint e1)
{
#define LOAD(v) (v)
  for (gint e = e0; e < e1; e++)
    HVALUE (plan, src, channels, e, dst[e]);
#undef LOAD
}

static void
hpass_u8_c (const M2iResizePlan *plan, const guint8 *src, gint channels, float *dst)
{
  m2i_resize_hvalues_u8_c (plan, src, channels, dst, 0, plan->x.out_size * channels);
}

static void
hpass_f16_c (const M2iResizePlan *plan, const guint16 *src, gint channels, float *dst)
{
  m2i_resize_hvalues_f16_c (plan, src, channels, dst, 0, plan->x.out_size * channels);
}

static void
hpass_f32_c (const M2iResizePlan *plan, const float *src, gint channels, float *dst)
{
  m2i_resize_hvalues_f32_c (plan, src, channels, dst, 0, plan->x.out_size * channels);
}

static void
vpass_c (const M2iResizePlan *plan, gint out_y, const float *const *rows, gint n,
    float *dst)
{
  gint T = plan->y.taps;
  const float *w = plan->y.weight + (gsize) out_y * T;
  for (gint e = 0; e < n; e++) {
    float acc = 0.0f;
    for (gint t = 0; t < T; t++)
      acc += w[t] * rows[t][e];
    dst[e] = acc;
  }
}

static void
round_u8_c (const M2iResizePlan *plan, const float *src, guint8 *dst, gint n)
{
  if (plan->u8_round == M2I_RESIZE_ROUND_TRUNCATE) {
    for (gint e = 0; e < n; e++) {
      float v = src[e];
      /* NaN and negatives go to 0, like max (v, 0) in the SIMD variants. */
      dst[e] = !(v > 0.0f) ? 0 : v >= 255.0f ? 255 : (guint8) (gint) v;
    }
  } else {
    for (gint e = 0; e < n; e++)
      dst[e] = (guint8) m2i_resize_round_half_away_u8f (src[e]);
  }
}

static const M2iResizeKernels kernels_c = {
  "c", hpass_u8_c, hpass_f16_c, hpass_f32_c, vpass_c, round_u8_c,
};

/* ---- choice of variant -------------------------------------------------- */

const M2iResizeKernels *
m2i_resize_kernels_for_level (M2iCpuFlags level)
{
  M2iCpuFlags have = m2i_cpu_flags ();
  /* The SIMD variants convert fp16 with F16C, so they need it too. */
  if (level == 0)
    return &kernels_c;
  if (level == M2I_CPU_AVX2 && (have & M2I_CPU_AVX2) && (have & M2I_CPU_F16C))
    return m2i_resize_kernels_avx2 ();
  if (level == M2I_CPU_AVX512F && (have & M2I_CPU_AVX512F) && (have & M2I_CPU_F16C))
    return m2i_resize_kernels_avx512 ();
  return NULL;
}

const M2iResizeKernels *
m2i_resize_kernels_best (void)
{
  static gsize once = 0;
  static const M2iResizeKernels *k;
  if (g_once_init_enter (&once)) {
    /* the level the CPU model table names (m2i-cpu.h), stepping down where
     * a variant needs more than the CPU has (F16C) */
    M2iCpuFlags level = m2i_cpu_kernel_level (M2I_KERNELS_RESIZE);
    const M2iResizeKernels *c = m2i_resize_kernels_for_level (level);
    if (c == NULL && level == M2I_CPU_AVX512F)
      c = m2i_resize_kernels_for_level (M2I_CPU_AVX2);
    if (c == NULL)
      c = &kernels_c;
    k = c;
    g_once_init_leave (&once, 1);
  }
  return k;
}

void
m2i_resize_hpass_u8 (const M2iResizePlan *plan, const guint8 *src, gint channels,
    float *dst)
{
  m2i_resize_kernels_best ()->hpass_u8 (plan, src, channels, dst);
}

void
m2i_resize_hpass_f16 (const M2iResizePlan *plan, const guint16 *src, gint channels,
    float *dst)
{
  m2i_resize_kernels_best ()->hpass_f16 (plan, src, channels, dst);
}

void
m2i_resize_hpass_f32 (const M2iResizePlan *plan, const float *src, gint channels,
    float *dst)
{
  m2i_resize_kernels_best ()->hpass_f32 (plan, src, channels, dst);
}

void
m2i_resize_vpass (const M2iResizePlan *plan, gint out_y, const float *const *rows,
    gint n, float *dst)
{
  m2i_resize_kernels_best ()->vpass (plan, out_y, rows, n, dst);
}

void
m2i_resize_round_u8_row (const M2iResizePlan *plan, const float *src, guint8 *dst,
    gint n)
{
  m2i_resize_kernels_best ()->round_u8 (plan, src, dst, n);
}

void
m2i_resize_round_f16_row (const float *src, guint16 *dst, gint n)
{
  m2i_f32_to_f16_n (src, dst, (gsize) n);
}

/* ---- expanded tables for the SIMD variants ------------------------------ */

M2iResizeSimd *
m2i_resize_simd_new (void)
{
  return g_new0 (M2iResizeSimd, 1);
}

void
m2i_resize_simd_free (M2iResizeSimd *simd)
{
  if (simd == NULL)
    return;
  for (gint c = 1; c <= 4; c++) {
    M2iResizeXTable *t = simd->xt[c];
    if (t) {
      g_free (t->offset);
      g_free (t->weight);
      g_free (t->max_offset);
      g_free (t->lo);
      g_free (t->span);
      g_free (t->pix_offset);
      g_free (t->pix_weight);
      g_free (t->pix_max);
      g_free (t);
    }
  }
  g_free (simd);
}

static M2iResizeXTable *
xtable_build (const M2iResizeAxis *ax, gint C)
{
  M2iResizeXTable *xt = g_new0 (M2iResizeXTable, 1);
  gint T = ax->taps, B = M2I_RESIZE_BLOCK;
  xt->channels = C;
  xt->n = ax->out_size * C;
  xt->taps = T;
  xt->blocks = (xt->n + B - 1) / B;
  gsize len = (gsize) xt->blocks * T * B;
  xt->offset = g_new0 (gint32, len);
  xt->weight = g_new0 (float, len);
  xt->max_offset = g_new0 (gint32, xt->blocks);
  xt->lo = g_new (gint32, 2 * xt->blocks);
  xt->span = g_new (gint32, 2 * xt->blocks);
  for (gint b = 0; b < xt->blocks; b++) {
    for (gint lane = 0; lane < B; lane++) {
      /* Lanes past the end repeat the last value with weight 0, so they
       * stay inside its window. */
      gint e = MIN (b * B + lane, xt->n - 1);
      gint i = e / C, c = e % C;
      for (gint t = 0; t < T; t++) {
        gsize k = ((gsize) b * T + t) * B + lane;
        gint32 off = ax->index[(gsize) i * T + t] * C + c;
        xt->offset[k] = off;
        xt->weight[k] = b * B + lane < xt->n ? ax->weight[(gsize) i * T + t] : 0.0f;
        xt->max_offset[b] = MAX (xt->max_offset[b], off);
      }
    }
    for (gint h = 0; h < 2; h++) {
      gint32 lo = G_MAXINT32, hi = 0;
      for (gint t = 0; t < T; t++)
        for (gint lane = h * 8; lane < h * 8 + 8; lane++) {
          gint32 off = xt->offset[((gsize) b * T + t) * B + lane];
          lo = MIN (lo, off);
          hi = MAX (hi, off);
        }
      xt->lo[2 * b + h] = lo;
      xt->span[2 * b + h] = hi - lo + 1;
    }
  }

  gint narrow = 0;
  for (gint b = 0; b < xt->blocks; b++) {
    gint32 lo = MIN (xt->lo[2 * b], xt->lo[2 * b + 1]);
    gint32 hi = MAX (xt->lo[2 * b] + xt->span[2 * b], xt->lo[2 * b + 1] + xt->span[2 * b + 1]);
    narrow += hi - lo <= 32;
  }
  if (C >= 3) {
    xt->groups = ax->out_size / 4;
    xt->pix_offset = g_new (gint32, (gsize) xt->groups * T * 4);
    xt->pix_weight = g_new (float, (gsize) xt->groups * T * 4);
    xt->pix_max = g_new0 (gint32, xt->groups);
    for (gint g = 0; g < xt->groups; g++)
      for (gint t = 0; t < T; t++)
        for (gint p = 0; p < 4; p++) {
          gint i = g * 4 + p;
          gsize k = ((gsize) g * T + t) * 4 + p;
          xt->pix_offset[k] = ax->index[(gsize) i * T + t] * C;
          xt->pix_weight[k] = ax->weight[(gsize) i * T + t];
          xt->pix_max[g] = MAX (xt->pix_max[g], xt->pix_offset[k]);
        }
    xt->prefer_pixels = narrow * 2 < xt->blocks;
  }
  return xt;
}

const M2iResizeXTable *
m2i_resize_xtable (const M2iResizePlan *plan, gint channels)
{
  M2iResizeSimd *s = plan->simd;
  g_assert (channels >= 1 && channels <= 4);
  if (g_once_init_enter (&s->once[channels])) {
    s->xt[channels] = xtable_build (&plan->x, channels);
    g_once_init_leave (&s->once[channels], 1);
  }
  return s->xt[channels];
}
