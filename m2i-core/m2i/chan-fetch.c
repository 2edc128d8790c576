/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* chan-fetch.c — tables of the pixel-chain row kernels (chan-fetch.h) and
 * their plain-C reference, the evaluation order every SIMD level keeps. */
#include "chan-fetch.h"

#include <base/m2i-cpu.h>

gboolean
m2i_chan_fetch_supported (const M2iResizePlan *plan)
{
  return !plan->round_intermediate;
}

void
m2i_chan_fetch_free (ChanFetch *t)
{
  if (!t)
    return;
  g_free (t->off);
  g_free (t->w);
  g_free (t->mode);
  g_free (t->base);
  g_free (t->chunks);
  g_free (t->idx);
  g_free (t);
}

/* 4-byte pixels: block b of tap @tap from one window per 8 outputs: at
 * AVX-512 (@avx512) 32 pixels (128 bytes) for a two-register dword permute,
 * starting 16-pixel aligned (its loads within cache lines) where its pixels
 * fit so; at AVX2 as few 8-pixel chunks as hold them (at most 4), from the
 * first pixel. FALSE if they do not fit. */
static gboolean
perm_windows (ChanFetch *t, gint in_w, gint tap, gint b, gboolean avx512)
{
  const gint32 *o = t->off + (gsize) tap * t->np + 16 * b;
  gint32 *idx = t->idx + (gsize) tap * t->np + 16 * b;
  for (int h = 0; h < 2; h++) {
    gint lo = G_MAXINT, hi = 0;
    for (int k = 8 * h; k < 8 * h + 8; k++) {
      lo = MIN (lo, o[k] / 4);
      hi = MAX (hi, o[k] / 4);
    }
    gint chunks = avx512 ? 4 : (hi - lo) / 8 + 1, span = 8 * chunks;
    if (in_w < span || hi - lo >= 32)
      return FALSE;
    gint base = avx512 ? lo & ~15 : lo;
    if (hi - base >= span || base + span > in_w)
      base = MIN (lo, in_w - span);
    if (hi - base >= span || lo < base)
      return FALSE;
    gsize bh = ((gsize) tap * t->nb + b) * 2 + h;
    t->base[bh] = base;
    t->chunks[bh] = (guint8) chunks;
    for (int k = 8 * h; k < 8 * h + 8; k++)
      idx[k] = o[k] / 4 - base + (avx512 ? 32 * h : 0);
  }
  return TRUE;
}

ChanFetch *
m2i_chan_fetch_new (const M2iResizePlan *plan, guint px, guint n_ch, const guint coff[3],
    gboolean round16, gboolean out16, const float *sub, const float *mul, const float *add)
{
  g_return_val_if_fail (m2i_chan_fetch_supported (plan) && n_ch >= 1 && n_ch <= 3, NULL);
  const M2iResizeAxis *ax = &plan->x;
  ChanFetch *t = g_new0 (ChanFetch, 1);
  t->n = ax->out_size;
  t->nb = (t->n + 15) / 16;
  t->np = 16 * t->nb;
  t->T = ax->taps;
  t->n_ch = n_ch;
  t->row_bytes = plan->in_width * (gint) px;
  t->round16 = round16;
  t->out16 = out16;
  for (guint c = 0; c < n_ch; c++) {
    t->coff[c] = coff[c];
    t->sub[c] = sub ? sub[c] : 0.0f;
    t->mul[c] = mul ? mul[c] : 1.0f;
    t->add[c] = add ? add[c] : 0.0f;
  }
  gsize tn = (gsize) t->T * t->np;
  t->off = g_new (gint32, tn);
  t->w = g_new0 (float, tn);
  t->idx = g_new0 (gint32, tn);
  t->mode = g_new (guint8, (gsize) t->T * t->nb);
  t->base = g_new0 (gint32, (gsize) t->T * t->nb * 2);
  t->chunks = g_new0 (guint8, (gsize) t->T * t->nb * 2);
  for (gint tap = 0; tap < t->T; tap++)
    for (gint i = 0; i < t->np; i++) {
      gint j = MIN (i, t->n - 1);
      t->off[tap * t->np + i] = ax->index[(gsize) j * t->T + tap] * (gint) px;
      if (i < t->n)
        t->w[tap * t->np + i] = ax->weight[(gsize) j * t->T + tap];
    }
  M2iCpuFlags level = m2i_cpu_kernel_level (M2I_KERNELS_FUSED);
  t->k = &m2i_chan_fetch_c;
#if defined(__x86_64__) || defined(__i386__)
  if (level & M2I_CPU_AVX512F)
    t->k = &m2i_chan_fetch_avx512;
  else if ((level & M2I_CPU_AVX2) && (m2i_cpu_flags () & M2I_CPU_F16C))
    t->k = &m2i_chan_fetch_avx2;
#endif
  gboolean avx512 = (level & M2I_CPU_AVX512F) != 0;      /* the AVX-512 kernels run */
  for (gint tap = 0; tap < t->T; tap++)
    for (gint b = 0; b < t->nb; b++) {
      const gint32 *o = t->off + (gsize) tap * t->np + 16 * b;
      guint8 m = CF_GATHER;
      for (int k = 0; k < 16; k++)
        if (o[k] + 4 > t->row_bytes)
          m = CF_FILL;
      if (m == CF_GATHER && px == 4 && t->k != &m2i_chan_fetch_c
          && perm_windows (t, plan->in_width, tap, b, avx512))
        m = CF_PERM;
      t->mode[tap * t->nb + b] = m;
    }
  return t;
}

/* ---- plain C ---------------------------------------------------------------- */

static void
hrow_c (const ChanFetch *t, const guint8 *row, float *dst)
{
  for (guint c = 0; c < t->n_ch; c++) {
    const guint8 *r = row + t->coff[c];
    float *d = dst + (gsize) c * t->np;
    for (gint i = 0; i < t->np; i++) {
      float acc = 0.0f;
      for (gint tap = 0; tap < t->T; tap++)
        acc += t->w[tap * t->np + i] * (float) r[t->off[tap * t->np + i]];
      d[i] = acc;
    }
  }
}

static void
vrow_c (const ChanFetch *t, const float *const *rows, const float *wy, gint T,
    guint8 *const dst[3])
{
  for (guint c = 0; c < t->n_ch; c++) {
    float *d32 = (float *) dst[c];
    m2i_f16 *d16 = (m2i_f16 *) dst[c];
    for (gint i = 0; i < t->n; i++) {
      float acc = 0.0f;
      for (gint k = 0; k < T; k++)
        acc += wy[k] * rows[k][(gsize) c * t->np + i];
      if (t->round16)
        acc = m2i_f16_to_f32 (m2i_f32_to_f16 (acc));
      acc = (acc - t->sub[c]) * t->mul[c] + t->add[c];
      if (t->out16)
        d16[i] = m2i_f32_to_f16 (acc);
      else
        d32[i] = acc;
    }
  }
}

const ChanFetchKernels m2i_chan_fetch_c = { "c", hrow_c, vrow_c };
