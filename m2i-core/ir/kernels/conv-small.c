/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* conv-small.c — the small-plane convolution (conv-small.h): the rule,
 * the packing, the driver, and the plain-C tile (the reference of the
 * AVX2 and AVX-512 ones, and the path at level 0). */
#include "conv-small.h"

#include <string.h>

/* Floats of input a layer may have here: the state keeps as many zeros
 * (pad taps read them a plane apart, as the input). */
#define MAX_INPUT_FLOATS (1 << 20)

/* The plain-C tile: up to C_P pixels × 16 channels, summed in the order
 * of the vector tiles (taps, then input channels), the lanes a loop the
 * compiler may vectorise. */
#define C_P 4
#define C_W 16

static void
tile_c (const IrSmallConv *s, const float *in, gint64 p0, gint np, gint c0, gint nv,
    float *sums, gsize ld)
{
  float acc[C_P][C_W] = { { 0 } };
  gsize ohw = (gsize) (s->oh * s->ow), plane = (gsize) (s->h * s->w);
  const float *wr = s->wts + c0 * s->taps * s->c_in;
  for (gint64 t = 0; t < s->taps; t++) {
    const gint32 *tab = s->tab + t * ohw + p0;
    const float *ip[C_P];
    for (gint p = 0; p < np; p++)
      ip[p] = tab[p] >= 0 ? in + tab[p] : s->zeros;
    for (gint64 ci = 0; ci < s->c_in; ci++, wr += s->group)
      for (gint p = 0; p < np; p++) {
        float b = ip[p][ci * plane];
        for (gint l = 0; l < C_W; l++)
          acc[p][l] += wr[l] * b;
      }
  }
  for (gint p = 0; p < np; p++)
    memcpy (sums + (p0 + p) * ld + c0, acc[p], sizeof acc[p]);
}

static void
put_c (const float *sums, gsize ld, gint64 pixels, gint c0, gint nc, const float *bias,
    gboolean relu, float *out)
{
  for (gint c = c0; c < c0 + nc; c++)
    for (gint64 p = 0; p < pixels; p++) {
      float v = bias ? sums[p * ld + c] + bias[c] : sums[p * ld + c];
      out[c * pixels + p] = relu ? (v > 0.0f ? v : 0.0f) : v;
    }
}

static IrSmallTile
tile_for_c (gint np, gint nv)
{
  return tile_c;
}

static const IrSmallArch arch_c = { C_P, 1, C_W, tile_for_c, put_c };

static const IrSmallArch *
small_arch (M2iCpuFlags level)
{
  const IrSmallArch *a = NULL;
  if (level & M2I_CPU_AVX512F)
    a = ir_small_arch_avx512 ();
  else if (level & M2I_CPU_AVX2)
    a = ir_small_arch_avx2 ();
  return a ? a : &arch_c;
}

static gint enabled = -1;

gboolean
ir_small_enabled (void)
{
  return ir_k_switch_on (&enabled, "M2I_CONV_SMALL");
}

void
ir_small_set_enabled (gboolean on)
{
  ir_k_switch_set (&enabled, on);
}

gboolean
ir_small_applies (gint64 groups, gint64 c_in, gint64 h, gint64 w, gint64 c_out, gint64 oh,
    gint64 ow, gint64 kh, gint64 kw, gint64 sh, gint64 sw, gint64 pt, gint64 pl)
{
  /* Up to 256 pixels: 121 ran 10 % faster than the GEMM, 144 and 196 as
   * fast, gaze-estimation's 64→32 on 15×15 16 % faster. Not: pointwise
   * layers at stride 1 (the GEMM reads B in place, no gathering: 256→256
   * on 7×7 and 512→128 on 10×10 ran as fast either way), a row or a
   * column of more than one pixel (the 1×K / K×1 layers' own tiles,
   * conv-tap.h), fewer than 16 output channels (most of a vector idle). */
  gboolean pointwise = kh == 1 && kw == 1 && sh == 1 && sw == 1 && pt == 0 && pl == 0;
  gboolean line = (oh == 1) != (ow == 1);
  return ir_small_enabled () && groups == 1 && !pointwise && !line &&
      oh * ow <= IR_SMALL_MAX_PIXELS && c_out >= 16 && c_in * h * w <= MAX_INPUT_FLOATS &&
      kh * kw <= 64 && c_in * kh * kw <= (1 << 20);
}

IrSmallConv *
ir_small_new (M2iCpuFlags level, const float *weights, gint64 c_in, gint64 h, gint64 w,
    gint64 c_out, gint64 oh, gint64 ow, gint64 kh, gint64 kw, gint64 sh, gint64 sw,
    gint64 dh, gint64 dw, gint64 pt, gint64 pl)
{
  IrSmallConv *s = g_new0 (IrSmallConv, 1);
  gint64 ohw = oh * ow;
  const IrSmallArch *a = small_arch (level);
  gint64 group = a->vectors * a->lanes;
  *s = (IrSmallConv) { c_in, h, w, c_out, oh, ow, kh * kw, group,
    (c_out + group - 1) / group * group };
  s->arch = a;
  s->wts = g_new0 (float, s->taps * c_in * s->cpad);
  for (gint64 co = 0; co < c_out; co++)
    for (gint64 ci = 0; ci < c_in; ci++)
      for (gint64 t = 0; t < s->taps; t++)
        s->wts[((co / group * s->taps + t) * c_in + ci) * group + co % group] =
            weights[(co * c_in + ci) * s->taps + t];
  s->tab = g_new (gint32, s->taps * ohw);
  for (gint64 t = 0; t < s->taps; t++)
    for (gint64 j = 0; j < ohw; j++) {
      gint64 iy = j / ow * sh - pt + t / kw * dh, ix = j % ow * sw - pl + t % kw * dw;
      s->tab[t * ohw + j] = iy >= 0 && iy < h && ix >= 0 && ix < w ? (gint32) (iy * w + ix) : -1;
    }
  s->zeros = g_new0 (float, c_in * h * w);
  return s;
}

void
ir_small_free (IrSmallConv *s)
{
  if (!s)
    return;
  g_free (s->wts);
  g_free (s->tab);
  g_free (s->zeros);
  g_free (s);
}

gsize
ir_small_scratch_bytes (const IrSmallConv *s)
{
  return (gsize) (s->oh * s->ow * s->cpad) * sizeof (float);
}

typedef struct {
  const IrSmallConv *s;
  const float *in;
  float *out, *sums;
  const float *bias;
  gboolean relu;
} SmallJob;

/* Channel groups [begin, end) (a tile's vectors each) over every pixel:
 * the tiles' sums into the slice's columns of the [pixel][cpad] scratch,
 * then those channels written out. */
static void
small_slice (gint begin, gint end, gint slice, gpointer data)
{
  const SmallJob *j = data;
  const IrSmallConv *s = j->s;
  const IrSmallArch *a = s->arch;
  gint64 ohw = s->oh * s->ow;
  gint group = (gint) s->group;
  /* pixel tiles of balanced sizes: 81 pixels in 6 are 11 of 6 and 3 of 5 */
  gint64 n_tiles = (ohw + a->pixels - 1) / a->pixels;
  gint c_begin = begin * group, c_end = (gint) MIN ((gint64) end * group, s->c_out);
  for (gint c0 = c_begin; c0 < c_end; c0 += group) {
    gint nv = (MIN (group, c_end - c0) + a->lanes - 1) / a->lanes;
    for (gint64 i = 0, p0 = 0; i < n_tiles; i++) {
      gint np = (gint) (ohw / n_tiles + (i < ohw % n_tiles));
      a->tile (np, nv) (s, j->in, p0, np, c0, nv, j->sums, (gsize) s->cpad);
      p0 += np;
    }
  }
  a->put (j->sums, (gsize) s->cpad, ohw, c_begin, c_end - c_begin, j->bias, j->relu, j->out);
}

void
ir_small_run (const IrSmallConv *s, const float *in, float *out, const float *bias,
    gboolean relu, gint slices, float *scratch)
{
  SmallJob j = { s, in, out, scratch, bias, relu };
  gint group = (gint) s->group;
  ir_k_parallel_for ((gint) ((s->c_out + group - 1) / group), slices, 1, small_slice, &j);
}
