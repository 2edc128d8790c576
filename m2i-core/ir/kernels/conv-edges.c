/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A padded stride-1 convolution's B panels read in place (conv-edges.h). */
#include "conv-edges.h"
#include "kernels-private.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

/* Bits [a, b) of a 64-bit mask (0 <= a <= b <= 64). */
static guint64
lane_bits (gint64 a, gint64 b)
{
  if (a >= b)
    return 0;
  guint64 upto_b = b >= 64 ? ~(guint64) 0 : ((guint64) 1 << b) - 1;
  return upto_b & ~(((guint64) 1 << a) - 1);
}

void
ir_edge_tap_lanes (const IrEdgeGeom *g, gint64 n0, gint lanes, guint64 *valid)
{
  gint64 n1 = n0 + lanes;
  gint64 y0 = n0 / g->w, y1 = MIN ((n1 - 1) / g->w, g->oh - 1);
  for (gint64 t = 0; t < g->kh * g->kw; t++) {
    gint64 dy = t / g->kw * g->dh - g->pt, dx = t % g->kw * g->dw - g->pl;
    /* output columns whose tap reads inside the row */
    gint64 xlo = MAX (0, -dx), xhi = MIN (g->ow, g->w - dx);
    guint64 m = 0;
    for (gint64 y = MAX (y0, -dy); y <= y1 && y + dy < g->h && xlo < xhi; y++)
      m |= lane_bits (MAX (y * g->w + xlo, n0) - n0, MIN (y * g->w + xhi, n1) - n0);
    valid[t] = m;
  }
}

M2I_K_INLINE void
copy_lanes_c_body (const float *src, gint64 at, guint64 valid, gint width, float *dst)
{
  for (gint j = 0; j < width; j++)
    dst[j] = valid >> j & 1 ? src[at + j] : 0.0f;
}
M2I_K_SIMD_CLONES (copy_lanes_c, (const float *src, gint64 at, guint64 valid, gint width,
        float *dst), (src, at, valid, width, dst))

#if defined(__x86_64__) && defined(__GNUC__)
/* 16 lanes a step: a masked load (the pad lanes are not read) and store. */
__attribute__ ((target ("avx512f")))
static void
copy_lanes_avx512 (const float *src, gint64 at, guint64 valid, gint width, float *dst)
{
  for (gint j = 0; j < width; j += 16) {
    __mmask16 keep = (__mmask16) (valid >> j), store = (__mmask16) ((1u << MIN (16, width - j)) - 1);
    _mm512_mask_storeu_ps (dst + j, store, _mm512_maskz_loadu_ps (keep & store, src + at + j));
  }
}
#endif

void
ir_edge_copy_lanes (const float *src, gint64 at, guint64 valid, gint width, float *dst)
{
#if defined(__x86_64__) && defined(__GNUC__)
  if (m2i_cpu_flags () & M2I_CPU_AVX512F) {
    copy_lanes_avx512 (src, at, valid, width, dst);
    return;
  }
#endif
  copy_lanes_c (src, at, valid, width, dst);
}
