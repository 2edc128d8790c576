/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* conv-tap.c — the direct 1×K / K×1 convolution's choice, geometry and
 * plain-C tile kernel (conv-tap.h). */
#include "conv-tap.h"

#include <string.h>

/* Input lines a pass of the tiles reads per column panel: half the
 * first-level cache (48 KiB on Zen 5), the rest for the weights and the
 * panel's sums. bench-conv, license-plate-recognition's 3×1 64×11×90 (two
 * blocks of 32 channels), one thread: 0.090 ms in one block, 0.087–0.090
 * in blocks of 24 KiB, 0.092–0.097 of 12 or 16 KiB (four, five blocks),
 * 0.091–0.093 of 36 KiB. */
#define IR_TAP_BLOCK_BYTES (24 * 1024)

gboolean
ir_tap_applies (gint64 h, gint64 w, gint64 oh, gint64 ow, gint64 kh, gint64 kw,
    gint64 sh, gint64 sw, gint64 k)
{
  gint64 taps = kh * kw;
  return sh == 1 && sw == 1 && oh == h && ow == w && (kh == 1 || kw == 1) &&
      taps >= 2 && taps <= IR_TAP_MAX && k <= M2I_GEMM_MAX_KC;
}

void
ir_tap_geom_init (IrTapGeom *g, const IrEdgeGeom *e, gint64 cin_g, const M2iGemmArch *arch)
{
  memset (g, 0, sizeof *g);
  g->edge = *e;
  g->plane = (gsize) (e->h * e->w);
  g->cin_g = (gint) cin_g;
  g->taps = (gint) (e->kh * e->kw);
  for (gint t = 0; t < g->taps; t++)
    g->toff[t] = (gint32) ((t / e->kw * e->dh - e->pt) * e->w + t % e->kw * e->dw - e->pl);
  g->mr = arch->mr;
  g->nr = arch->nr;
  /* A panel's input lines for one channel: K rows of a panel (K×1), or
   * one row and the taps' spread (1×K), and a line more for alignment.
   * A K×1 layer's 64 channels of 48 pixels are three times 12 KiB, all
   * of the first-level cache: its tiles then read every line from the
   * second, once per row block. Channels in blocks of about
   * IR_TAP_BLOCK_BYTES keep them in the first, at the cost of one pass
   * of the tile's sums through C per block. */
  gint64 line = (gint64) g->nr * 4 + 64;
  gint64 per = e->kh > 1 ? g->taps * line : line + (e->kw - 1) * e->dw * 4;
  gint64 blocks = MAX (1, (cin_g * per + IR_TAP_BLOCK_BYTES - 1) / IR_TAP_BLOCK_BYTES);
  g->cin_block = (gint) ((cin_g + blocks - 1) / blocks);
}

void
ir_tap_panel_c (const IrTapGeom *g, const float *a, gint rows, const float *in,
    gint64 n0, gint ncols, float *out, gsize ldc, const float *bias, gboolean relu)
{
  guint64 valid[IR_EDGE_MAX_TAPS];
  ir_edge_tap_lanes (&g->edge, n0, ncols, valid);
  gsize k = (gsize) g->cin_g * g->taps;
  for (gint i = 0; i < rows; i++) {
    const float *ai = a + (gsize) (i / g->mr) * g->mr * k + i % g->mr;
    for (gint j = 0; j < ncols; j++) {
      float acc = 0.0f;
      for (gint ci = 0; ci < g->cin_g; ci++)
        for (gint t = 0; t < g->taps; t++) {
          float x = valid[t] >> j & 1 ?
              in[(gsize) ci * g->plane + (gsize) (n0 + j + g->toff[t])] : 0.0f;
          acc = acc + ai[((gsize) ci * g->taps + t) * g->mr] * x;
        }
      if (bias)
        acc = acc + bias[i];
      if (relu)
        acc = acc > 0.0f ? acc : 0.0f;
      out[(gsize) i * ldc + (gsize) (n0 + j)] = acc;
    }
  }
}

IrTapPanel
ir_tap_panel_for (const M2iGemmArch *arch)
{
  IrTapPanel p = NULL;
  /* the tiles the instruction-set kernels are written for */
  if (!strcmp (arch->name, "avx512") && arch->mr == 8 && arch->nr == 48)
    p = ir_tap_panel_avx512 ();
  else if (!strcmp (arch->name, "avx2") && arch->mr == 4 && arch->nr == 24)
    p = ir_tap_panel_avx2 ();
  return p ? p : ir_tap_panel_c;
}
