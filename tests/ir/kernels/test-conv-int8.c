/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The integer convolution (ir/kernels/conv-int8.h) against its definition
 * written here as naive loops: each input value quantized by the
 * FakeQuantize-1 formula (f32, as the spec's reference computes it) over
 * the input range, its real value ol + k·(oh - ol)/(L - 1), weights
 * code · scale, the products summed in double over the padded window
 * (padding = real 0, also when the zero point falls between two codes),
 * plus bias, ReLU. The kernel sums integers exactly, so the only difference
 * allowed is the f32 rounding of its epilogue. GEMM layers (groups of a
 * multiple of 4 channels) and depthwise ones (a range per channel), at
 * every instruction-set level (meson: M2I_CPU_DISABLE none, vnni, avx512,
 * avx2, all); the kernel family in use is asserted to follow.
 */
#include "kernel-test.h"
#include <ir/kernels/conv-int8.h>

typedef enum { ZP_ZERO, ZP_CODE, ZP_BETWEEN, ZP_OUTSIDE } ZeroPoint;

typedef struct {
  gint64 c_in, c_out, h, w, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr, groups, batch;
  gint levels;
  ZeroPoint zp;
  gboolean per_channel;                /* a range per channel (depthwise) */
  gboolean in_differs;                 /* input range != output range */
  gboolean relu, bias;
  M2iKI8Act act;                       /* when not relu */
  gboolean codes_in, codes_out;
  gboolean grid_out;                   /* a FakeQuantize's f32 output (not with codes_out) */
} Case;

static guint32 rng_state;

static guint32
rnd (void)
{
  rng_state = rng_state * 1664525u + 1013904223u;
  return rng_state >> 8;
}

static gint
rnd_int (gint lo, gint hi)                     /* [lo, hi] */
{
  return lo + (gint) (rnd () % (guint32) (hi - lo + 1));
}

static float
rnd_f (float lo, float hi)
{
  return lo + (hi - lo) * (rnd () / 16777216.0f);
}

/* The spec's FakeQuantize level of x over [lo, hi]. */
static gint
fq_level (float x, float lo, float hi, gint levels)
{
  if (x <= MIN (lo, hi))
    return 0;
  if (x > MAX (lo, hi))
    return levels - 1;
  return (gint) nearbyintf ((x - lo) / (hi - lo) * (float) (levels - 1));
}

static void
run_case (const Case *k, gint threads)
{
  M2iKConvGeom g = { k->batch, k->c_in, k->h, k->w, k->c_out, 0, 0, k->kh, k->kw, k->sh, k->sw,
    k->dh, k->dw, k->pt, k->pl, k->pb, k->pr, k->groups };
  g.oh = (k->h + k->pt + k->pb - ((k->kh - 1) * k->dh + 1)) / k->sh + 1;
  g.ow = (k->w + k->pl + k->pr - ((k->kw - 1) * k->dw + 1)) / k->sw + 1;
  gint64 cin_g = k->c_in / k->groups, cout_g = k->c_out / k->groups;
  gint64 per = cin_g * k->kh * k->kw;
  gint64 n_in = k->batch * k->c_in * k->h * k->w, n_out = k->batch * k->c_out * g.oh * g.ow;
  gint64 nr = k->per_channel ? k->c_in : 1;
  float *r = g_new (float, 4 * nr);      /* in_lo, in_hi, out_lo, out_hi */
  for (gint64 i = 0; i < nr; i++) {
    float step = rnd_f (0.005f, 0.1f);
    float z = k->zp == ZP_ZERO ? 0.0f : k->zp == ZP_CODE ? (float) rnd_int (1, k->levels - 1) :
        k->zp == ZP_BETWEEN ? rnd_int (0, k->levels - 2) + rnd_f (0.02f, 0.98f) :
        -rnd_f (1.0f, 30.0f);
    r[2 * nr + i] = -z * step;
    r[3 * nr + i] = r[2 * nr + i] + step * (k->levels - 1);
    float a = k->in_differs ? rnd_f (0.5f, 2.0f) : 1.0f, b = k->in_differs ? rnd_f (-1, 1) : 0;
    r[i] = r[2 * nr + i] * a + b;
    r[nr + i] = r[3 * nr + i] * a + b;
  }
  float *x = g_new (float, n_in);
  for (gint64 i = 0; i < n_in; i++) {
    gint64 c = i / (k->h * k->w) % k->c_in, ri = k->per_channel ? c : 0;
    float lo = r[ri], hi = r[nr + ri], span = hi - lo;
    x[i] = i % 7 ? rnd_f (lo - 0.2f * span, hi + 0.2f * span) :
        (float) (lo + span / (k->levels - 1) * rnd_int (0, k->levels - 1));  /* on the grid */
  }
  /* codes_in: the input is the levels themselves */
  guint8 *codes = g_new (guint8, n_in);
  for (gint64 i = 0; i < n_in; i++) {
    gint64 c = i / (k->h * k->w) % k->c_in, ri = k->per_channel ? c : 0;
    codes[i] = (guint8) fq_level (x[i], r[ri], r[nr + ri], k->levels);
  }
  gint8 *q = g_new (gint8, k->c_out * per);
  float *sw = g_new (float, k->c_out), *bias = g_new (float, k->c_out);
  float *slope = g_new (float, k->c_out);
  for (gint64 o = 0; o < k->c_out; o++)
    slope[o] = rnd_f (-0.5f, 1.5f);
  M2iKI8Act act = k->relu ? M2I_K_I8_ACT_RELU : k->act;
  /* codes_out: levels of 256 over a range around the outputs' */
  gint out_levels = 256;
  gint64 n_or = k->per_channel ? k->c_out : 1;
  float *out_r = g_new (float, 2 * n_or), *grid_r = g_new (float, 2 * n_or);
  for (gint64 i = 0; i < n_or; i++) {
    out_r[i] = rnd_f (-3.0f, 0.0f);
    out_r[n_or + i] = out_r[i] + rnd_f (1.0f, 6.0f);
    grid_r[i] = out_r[i] * rnd_f (0.5f, 1.5f);
    grid_r[n_or + i] = out_r[n_or + i] * rnd_f (0.5f, 1.5f);
  }
  for (gint64 i = 0; i < k->c_out * per; i++)
    q[i] = (gint8) rnd_int (-128, 127);
  for (gint64 o = 0; o < k->c_out; o++) {
    sw[o] = rnd_f (0.001f, 0.05f);
    bias[o] = rnd_f (-2.0f, 2.0f);
  }
  gint64 n_slope = rnd_int (0, 1) ? k->c_out : 1;
  float beta = rnd_int (0, 1) ? 1.0f : rnd_f (0.5f, 2.0f);
  M2iKConvInt8Params p = { g, q, sw, k->levels, nr, r, r + nr, r + 2 * nr, r + 3 * nr,
    k->codes_in, k->bias ? bias : NULL, act, slope, n_slope, beta, k->codes_out, out_levels,
    n_or, out_r, out_r + n_or, k->grid_out, grid_r, grid_r + n_or };
  const char *why = NULL;
  M2iKConvInt8 *c = ir_k_conv_int8_new (&p, threads, &why);
  if (!c)
    g_error ("case rejected: %s", why);
  /* the family's level (per-CPU table, M2I_KERNELS) picks the kernels:
   * VNNI only at the AVX-512 level */
  M2iCpuFlags f = m2i_cpu_flags (), level = ir_k_level (M2I_KERNELS_INT8);
  const char *forced = g_getenv ("M2I_KERNELS");
  if (forced && !strcmp (forced, "int8=avx2"))
    g_assert_cmpuint (level, ==, f & M2I_CPU_AVX2);
  gboolean vnni = (level & M2I_CPU_AVX512F) && (f & M2I_CPU_AVX512VNNI);
  gboolean dw = cin_g == 1 && cout_g == 1 && k->groups > 1;
  gboolean avx2 = (level & (M2I_CPU_AVX512F | M2I_CPU_AVX2)) && (f & M2I_CPU_AVX2);
  gboolean dw_vec = k->sw <= 2 && k->dw == 1;
  /* a grid of at most 16 columns (the phase planes' width × output rows):
   * VNNI's narrow tile */
  gboolean narrow = g.oh * ((g.w + g.pl + g.pr + g.sw - 1) / g.sw) <= 16;
  const char *want = dw ? (vnni && dw_vec ? "vnni-dw" : avx2 && dw_vec ? "avx2-dw" : "c-dw") :
      vnni ? (narrow ? "vnni-narrow" : "vnni") : avx2 ? "avx2" : "c";
  g_assert_cmpstr (ir_k_conv_int8_kernel_name (c), ==, want);
  g_assert (ir_k_conv_int8_dw_fast (&g) == (dw && strcmp (want, "c-dw")) || !dw);

  gsize sb = ir_k_conv_int8_scratch_bytes (c);
  guint8 *scratch = g_aligned_alloc (1, sb, 64);
  memset (scratch, 0xa5, sb);
  float *out = g_new (float, n_out);
  guint8 *out8 = g_new (guint8, n_out);
  for (gint64 i = 0; i < n_out; i++)
    out[i] = NAN;
  memset (out8, 0xee, n_out);
  ir_k_conv_int8_run (c, k->codes_in ? (gconstpointer) codes : x, k->codes_out ?
      (gpointer) out8 : (gpointer) out, scratch, threads);

  for (gint64 n = 0; n < k->batch; n++)
    for (gint64 o = 0; o < k->c_out; o++) {
      gint64 gi = o / cout_g;
      for (gint64 oy = 0; oy < g.oh; oy++)
        for (gint64 ox = 0; ox < g.ow; ox++) {
          double sum = 0, mag = 0;
          for (gint64 ci = 0; ci < cin_g; ci++) {
            gint64 ch = gi * cin_g + ci, ri = k->per_channel ? ch : 0;
            double step = ((double) r[3 * nr + ri] - r[2 * nr + ri]) / (k->levels - 1);
            double zr = -(double) r[2 * nr + ri] / step;
            for (gint64 ky = 0; ky < k->kh; ky++)
              for (gint64 kx = 0; kx < k->kw; kx++) {
                gint64 iy = oy * k->sh - k->pt + ky * k->dh, ix = ox * k->sw - k->pl + kx * k->dw;
                gint qq = q[(o * cin_g + ci) * k->kh * k->kw + ky * k->kw + kx];
                /* what the kernel's terms can round: codes, zero point, padding */
                mag += (255.0 + fabs (zr) + 1.0) * abs (qq) * step * sw[o];
                if (iy < 0 || iy >= k->h || ix < 0 || ix >= k->w)
                  continue;
                gint lv = fq_level (x[((n * k->c_in + ch) * k->h + iy) * k->w + ix],
                    r[ri], r[nr + ri], k->levels);
                sum += (r[2 * nr + ri] + lv * step) * qq * sw[o];
              }
          }
          double pre = sum + (k->bias ? bias[o] : 0);
          /* f32 epilogue: float(acc)·mul + add (+ the padding term), each
           * rounded, mul and add rounded from their double values */
          double tol = 6.0 * (mag + fabs (bias[o]) + fabs (pre)) * (1.0 / 16777216.0) + 1e-30;
          double ref = pre, sl = slope[n_slope == 1 ? 0 : o];
          if (act == M2I_K_I8_ACT_RELU)
            ref = pre > 0 ? pre : 0;
          else if (act == M2I_K_I8_ACT_PRELU) {
            ref = pre < 0 ? pre * sl : pre;
            tol = tol * MAX (1.0, fabs (sl)) + fabs (ref) / 16777216.0;
          } else if (act == M2I_K_I8_ACT_SWISH) {
            ref = pre / (1.0 + exp (-beta * pre));
            tol = tol * 1.3 + 8 * fabs (ref) / 16777216.0 + 1e-37;
          }
          gint64 at = ((n * k->c_out + o) * g.oh + oy) * g.ow + ox;
          if (k->grid_out) {
            /* the FakeQuantize output of some value within tol of the
             * reference: a level's value, or the top of the range */
            float olo = out_r[n_or == 1 ? 0 : o], ohi = out_r[n_or + (n_or == 1 ? 0 : o)];
            float glo = grid_r[n_or == 1 ? 0 : o], ghi = grid_r[n_or + (n_or == 1 ? 0 : o)];
            gint lo_lv = fq_level ((float) (ref - tol), olo, ohi, out_levels);
            gint hi_lv = fq_level ((float) (ref + tol), olo, ohi, out_levels);
            gboolean ok = hi_lv == out_levels - 1 && out[at] == ghi;
            for (gint lv = lo_lv; lv <= hi_lv && !ok; lv++)
              ok = out[at] == (float) lv / (float) (out_levels - 1) * (ghi - glo) + glo;
            if (!ok)
              g_error ("grid out: out[%" G_GINT64_FORMAT "] = %.9g, expected levels %d..%d of "
                  "[%g, %g] (%s)", at, out[at], lo_lv, hi_lv, glo, ghi, want);
            continue;
          }
          if (k->codes_out) {
            /* the level of some value within tol of the reference */
            float olo = out_r[n_or == 1 ? 0 : o], ohi = out_r[n_or + (n_or == 1 ? 0 : o)];
            gint lo_lv = fq_level ((float) (ref - tol), olo, ohi, out_levels);
            gint hi_lv = fq_level ((float) (ref + tol), olo, ohi, out_levels);
            if (out8[at] < lo_lv || out8[at] > hi_lv)
              g_error ("codes out: out[%" G_GINT64_FORMAT "] = %d, expected %d..%d (%s, act %d)",
                  at, out8[at], lo_lv, hi_lv, want, act);
            continue;
          }
          if (!(fabs (out[at] - ref) <= tol))
            g_error ("case %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT
                " → %" G_GINT64_FORMAT " k%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT " s%"
                G_GINT64_FORMAT "x%" G_GINT64_FORMAT " pads %" G_GINT64_FORMAT ",%"
                G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT " groups %"
                G_GINT64_FORMAT " zp %d, %d threads (%s): out[%" G_GINT64_FORMAT "][%"
                G_GINT64_FORMAT "][%" G_GINT64_FORMAT "][%" G_GINT64_FORMAT
                "] = %.9g, expected %.9g (tol %.3g)", k->c_in, k->h, k->w, k->c_out, k->kh,
                k->kw, k->sh, k->sw, k->pt, k->pl, k->pb, k->pr, k->groups, k->zp, threads, want,
                n, o, oy, ox, out[at], ref, tol);
        }
    }
  ir_k_conv_int8_free (c);
  g_aligned_free (scratch);
  g_free (out);
  g_free (out8);
  g_free (codes);
  g_free (slope);
  g_free (out_r);
  g_free (grid_r);
  g_free (x);
  g_free (q);
  g_free (sw);
  g_free (bias);
  g_free (r);
}

static void
test_listed (void)
{
  static const Case cases[] = {
    /* c_in c_out h w kh kw sh sw dh dw pt pl pb pr groups batch levels zp per_channel
     * in_differs relu bias */
    { 16, 32, 10, 12, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 256, ZP_ZERO, 0, 0, 0, 1 },
    { 16, 32, 10, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 256, ZP_ZERO, 0, 1, 1, 1 },
    { 3, 16, 17, 19, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 256, ZP_CODE, 0, 0, 0, 1 },
    { 5, 9, 9, 7, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1, 2, 256, ZP_CODE, 0, 0, 1, 1 },
    { 8, 8, 12, 12, 5, 5, 2, 2, 1, 1, 2, 2, 2, 2, 1, 1, 255, ZP_CODE, 0, 1, 0, 0 },
    { 8, 12, 12, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, 256, ZP_ZERO, 0, 0, 1, 1 },
    { 64, 64, 20, 20, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 1, 1, 256, ZP_BETWEEN, 0, 0, 0, 1 },
    { 12, 20, 1, 50, 1, 3, 1, 1, 1, 1, 0, 1, 0, 1, 1, 1, 256, ZP_ZERO, 0, 0, 0, 1 },
    { 7, 5, 6, 5, 2, 4, 3, 1, 1, 1, 0, 2, 1, 1, 1, 1, 16, ZP_CODE, 0, 0, 1, 1 },
    { 256, 20, 7, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 256, ZP_CODE, 0, 0, 0, 1 },
    { 33, 70, 40, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 256, ZP_ZERO, 0, 0, 1, 1 },
    /* zero points between two codes and outside the range, with padding */
    { 16, 24, 14, 14, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 256, ZP_BETWEEN, 0, 0, 1, 1 },
    { 8, 8, 11, 9, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 256, ZP_OUTSIDE, 0, 1, 0, 1 },
    /* depthwise, a range per channel: 3×3 and 5×5, strides 1 and 2 (VNNI),
     * 3 (C), dilation 2 (C), odd widths */
    { 24, 24, 20, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 24, 1, 256, ZP_ZERO, 1, 0, 1, 1 },
    { 24, 24, 21, 37, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 24, 1, 256, ZP_BETWEEN, 1, 1, 1, 1 },
    { 16, 16, 19, 23, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 16, 2, 256, ZP_CODE, 1, 0, 0, 1 },
    { 16, 16, 19, 23, 5, 5, 2, 2, 1, 1, 2, 2, 2, 2, 16, 1, 256, ZP_BETWEEN, 1, 0, 1, 0 },
    { 8, 8, 13, 13, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 8, 1, 256, ZP_BETWEEN, 1, 0, 0, 1 },
    { 8, 8, 13, 13, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 8, 1, 256, ZP_CODE, 0, 0, 1, 1 },
    { 32, 32, 3, 70, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 32, 1, 256, ZP_BETWEEN, 1, 0, 0, 1 },
    { 12, 12, 9, 9, 7, 7, 1, 1, 1, 1, 3, 3, 3, 3, 12, 1, 255, ZP_OUTSIDE, 1, 0, 1, 1 },
    /* activations, codes in and out */
    { 16, 24, 12, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 256, ZP_CODE, 0, 0, 0, 1,
      M2I_K_I8_ACT_PRELU, 0, 0 },
    { 16, 24, 12, 20, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 256, ZP_ZERO, 0, 0, 0, 1,
      M2I_K_I8_ACT_SWISH, 1, 1 },
    { 8, 40, 17, 17, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 2, 256, ZP_BETWEEN, 0, 0, 1, 1,
      M2I_K_I8_ACT_NONE, 1, 1 },
    { 24, 24, 20, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 24, 1, 256, ZP_BETWEEN, 1, 0, 0, 1,
      M2I_K_I8_ACT_PRELU, 1, 1 },
    { 24, 24, 21, 37, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 24, 1, 256, ZP_CODE, 1, 0, 0, 1,
      M2I_K_I8_ACT_SWISH, 0, 1 },
    { 16, 16, 15, 15, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 16, 1, 256, ZP_CODE, 1, 0, 0, 1,
      M2I_K_I8_ACT_SWISH, 1, 0 },
    /* a FakeQuantize's values out */
    { 16, 24, 12, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 256, ZP_CODE, 0, 0, 0, 1,
      M2I_K_I8_ACT_PRELU, 1, 0, 1 },
    { 24, 24, 20, 20, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 24, 1, 256, ZP_BETWEEN, 1, 0, 1, 1,
      M2I_K_I8_ACT_NONE, 0, 0, 1 },
    /* grids of at most 16 columns (VNNI's narrow tile): 1×1 outputs with
     * an odd number of 8-channel blocks, 3×3 with padding between codes,
     * two groups, codes in and out, values out */
    { 256, 40, 3, 3, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 256, ZP_CODE, 0, 0, 1, 1 },
    { 64, 24, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 256, ZP_BETWEEN, 0, 0, 0, 1 },
    { 32, 48, 4, 2, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 2, 1, 256, ZP_ZERO, 0, 1, 0, 1 },
    { 48, 24, 2, 2, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 256, ZP_CODE, 0, 0, 0, 1,
      M2I_K_I8_ACT_SWISH, 1, 1 },
    { 96, 17, 5, 5, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 256, ZP_CODE, 0, 0, 0, 1,
      M2I_K_I8_ACT_PRELU, 1, 0, 1 },
  };
  rng_state = 12345;
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    for (gint t = 1; t <= 3; t++)
      run_case (&cases[i], t);
}

static void
test_random (void)
{
  rng_state = 777;
  for (gint i = 0; i < 80; i++) {
    Case k = { 0 };
    gboolean dw = rnd_int (0, 3) == 0;
    k.groups = dw ? rnd_int (2, 40) : rnd_int (0, 4) == 0 ? rnd_int (2, 3) : 1;
    gint64 cin_g = dw ? 1 : k.groups > 1 ? 4 * rnd_int (1, 4) : rnd_int (1, 40);
    k.c_in = cin_g * k.groups;
    k.c_out = dw ? k.groups : k.groups * rnd_int (1, 24);
    k.kh = rnd_int (1, dw ? 5 : 4);
    k.kw = rnd_int (1, dw ? 5 : 4);
    k.sh = rnd_int (1, 3);
    k.sw = rnd_int (1, 3);
    k.dh = rnd_int (0, 3) ? 1 : 2;
    k.dw = rnd_int (0, 3) ? 1 : 2;
    k.pt = rnd_int (0, 2);
    k.pl = rnd_int (0, 2);
    k.pb = rnd_int (0, 2);
    k.pr = rnd_int (0, 2);
    k.h = (k.kh - 1) * k.dh + 1 + rnd_int (0, 20);
    k.w = (k.kw - 1) * k.dw + 1 + rnd_int (0, 30);
    k.batch = rnd_int (1, 2);
    k.levels = rnd_int (0, 3) ? 256 : rnd_int (2, 255);
    k.zp = (ZeroPoint) rnd_int (0, 3);
    k.per_channel = dw && rnd_int (0, 1);
    k.in_differs = rnd_int (0, 2) == 0;
    k.relu = rnd_int (0, 3) == 0;
    k.act = (M2iKI8Act) rnd_int (0, 3);
    k.codes_in = rnd_int (0, 2) == 0;
    k.codes_out = rnd_int (0, 2) == 0;
    k.grid_out = !k.codes_out && rnd_int (0, 2) == 0;
    k.bias = rnd_int (0, 3) != 0;
    run_case (&k, rnd_int (1, 3));
  }
}

/* ---- each vector kernel against the scalar reference, bit for bit ---------- */

/* An epilogue of random kind for @channels channels: every activation,
 * f32, codes or grid out, ranges that start at 0 (ReLU's direct codes)
 * or not. */
static M2iKI8Out *
random_out (gint64 channels)
{
  M2iKI8Out *o = g_new0 (M2iKI8Out, 1);
  o->act = (M2iKI8Act) rnd_int (0, 3);
  o->beta = rnd_int (0, 1) ? 1.0f : rnd_f (0.5f, 2.0f);
  float *slope = g_new (float, channels);
  for (gint64 c = 0; c < channels; c++)
    slope[c] = rnd_f (-0.5f, 1.5f);
  o->slope = slope;
  gint kind = rnd_int (0, 2);
  o->codes = kind == 1;
  o->grid = kind == 2;
  M2iKI8Quant *oq = g_new (M2iKI8Quant, channels);
  float *glo = g_new (float, channels), *ghi = g_new (float, channels);
  gint levels = rnd_int (0, 2) ? 256 : rnd_int (2, 255);
  for (gint64 c = 0; c < channels; c++) {
    float lo = rnd_int (0, 2) ? 0.0f : rnd_f (-3.0f, 0.0f), hi = lo + rnd_f (0.5f, 6.0f);
    oq[c] = ir_k_i8_quantizer (levels, lo, hi, 0);
    glo[c] = lo * rnd_f (0.5f, 1.5f);
    ghi[c] = hi * rnd_f (0.5f, 1.5f);
  }
  o->oq = oq;
  o->glo = glo;
  o->ghi = ghi;
  return o;
}

/* The GEMM tile of the level (VNNI, AVX2) against the plain sums and
 * ir_k_i8_store_row: random sums, runs, padding terms, epilogues. */
static void
test_exact_tile (void)
{
  M2iCpuFlags level = ir_k_level (M2I_KERNELS_INT8);
  M2iKI8Micro micro = ir_k_i8_micro_vnni (level);
  gboolean wide = FALSE;               /* int16 weights */
  if (!micro && (micro = ir_k_i8_micro_avx2 (level)))
    wide = TRUE;
  if (!micro) {
    g_test_skip ("no vector tile at this level");
    return;
  }
  enum { MR = M2I_K_I8_MR, NR = M2I_K_I8_NR, K4 = 40, LDO = 4 * NR };
  rng_state = 4242;
  gint8 *a = g_new (gint8, K4 * MR * 4);
  gint16 *a16 = g_new (gint16, K4 * MR * 4);
  guint8 *b = g_new (guint8, K4 * (NR + 8) * 4);
  for (gint i = 0; i < K4 * (NR + 8) * 4; i++)
    b[i] = (guint8) rnd_int (0, 255);
  for (gint iter = 0; iter < 300; iter++) {
    gint k4 = rnd_int (1, K4);
    for (gint i = 0; i < K4 * MR * 4; i++)
      a16[i] = a[i] = (gint8) rnd_int (-128, 127);
    gint64 off[K4];
    for (gint p = 0; p < k4; p++)
      off[p] = (gint64) rnd_int (0, K4 - 1) * (NR + 8) * 4 + 4 * rnd_int (0, 8);
    M2iKI8Out *o = random_out (MR + 3);
    gint64 c0 = rnd_int (0, 3);
    gint32 ibias[MR];
    float mul[MR], add[MR], dmul[MR], dadd[MR], fix[MR * NR];
    gboolean direct = TRUE;
    for (gint r = 0; r < MR; r++) {
      ibias[r] = rnd_int (-40000, 40000);
      mul[r] = rnd_f (1e-5f, 2e-3f);
      add[r] = rnd_f (-2.0f, 2.0f);
      direct &= ir_k_i8_direct (o, c0 + r, mul[r], add[r], &dmul[r], &dadd[r]);
    }
    for (gint i = 0; i < MR * NR; i++)
      fix[i] = rnd_int (0, 3) ? 0.0f : rnd_f (-1.0f, 1.0f);
    /* runs: each group of 16 lanes cut into contiguous runs, some lanes
     * dropped; lane n of run q goes to element n + 3q (all distinct) */
    guint8 run_start[4];
    guint16 run_mask[NR];
    gint32 run_at[NR];
    gint n_runs = 0;
    for (gint gi = 0; gi < 3; gi++) {
      run_start[gi] = (guint8) n_runs;
      for (gint l = 0; l < 16;) {
        gint len = rnd_int (1, 16 - l);
        if (rnd_int (0, 4)) {
          run_mask[n_runs] = (guint16) (((1u << len) - 1) << l);
          run_at[n_runs] = gi * 16 + 3 * n_runs;
          n_runs++;
        }
        l += rnd_int (0, 1) ? len : 16;           /* often one full run */
      }
    }
    run_start[3] = (guint8) n_runs;
    gint rows = rnd_int (1, MR);
    gboolean use_fix = rnd_int (0, 1);
    gsize es = o->codes ? 1 : sizeof (float), bytes = (gsize) MR * LDO * es;
    guint8 *got = g_malloc (bytes), *want = g_malloc (bytes);
    memset (got, 0x5a, bytes);
    memset (want, 0x5a, bytes);
    M2iKI8Store st = { got, LDO, rows, c0, ibias, mul, add, direct ? dmul : NULL,
      direct ? dadd : NULL, use_fix ? fix : NULL, o, run_start, run_mask, run_at };
    micro (k4, wide ? (const void *) a16 : (const void *) a, b, off, &st);
    st.out = want;
    for (gint r = 0; r < rows; r++) {
      float v[NR];
      for (gint n = 0; n < NR; n++) {
        gint32 acc = ibias[r];
        for (gint p = 0; p < k4; p++)
          for (gint j = 0; j < 4; j++)
            acc += a[(p * MR + r) * 4 + j] * b[off[p] + n * 4 + j];
        v[n] = (float) acc * mul[r] + add[r];
      }
      ir_k_i8_store_row (v, r, &st);
    }
    if (memcmp (got, want, bytes)) {
      for (gsize i = 0; i < bytes; i += es)
        if (memcmp (got + i, want + i, es))
          g_error ("tile (%s, act %d, codes %d, grid %d, direct %d, fix %d): element %"
              G_GSIZE_FORMAT " = %.9g, the reference %.9g", wide ? "avx2" : "vnni", o->act,
              o->codes, o->grid, direct, use_fix, i / es, es == 1 ? got[i] : *(float *) (got + i),
              es == 1 ? want[i] : *(float *) (want + i));
    }
    g_free (got);
    g_free (want);
    ir_k_i8_out_free (o);
  }
  g_free (a);
  g_free (a16);
  g_free (b);
}

/* VNNI's narrow tile against the plain sums and ir_k_i8_store_row: 16
 * rows (two stores, or one), n columns of 1 to 16, random epilogues and
 * padding terms. */
static void
test_exact_narrow (void)
{
  M2iKI8Narrow narrow = ir_k_i8_narrow_vnni (ir_k_level (M2I_KERNELS_INT8));
  if (!narrow) {
    g_test_skip ("no narrow tile at this level");
    return;
  }
  enum { MR = M2I_K_I8_MR, NR = M2I_K_I8_NR, K4 = 37, LDO = 20 };
  rng_state = 777;
  gint8 *a = g_new (gint8, K4 * 2 * MR * 4);
  guint8 *b = g_new (guint8, K4 * 24 * 4);
  for (gint i = 0; i < K4 * 24 * 4; i++)
    b[i] = (guint8) rnd_int (0, 255);
  for (gint iter = 0; iter < 300; iter++) {
    gint k4 = rnd_int (1, K4), n = rnd_int (1, 16), halves = rnd_int (1, 2);
    for (gint i = 0; i < K4 * 2 * MR * 4; i++)
      a[i] = (gint8) rnd_int (-128, 127);
    gint64 off[K4];
    for (gint p = 0; p < k4; p++)
      off[p] = (gint64) rnd_int (0, K4 - 1) * 24 * 4 + 4 * rnd_int (0, 8);
    M2iKI8Out *o = random_out (2 * MR);
    gint32 ibias[2 * MR];
    float mul[2 * MR], add[2 * MR], dmul[2 * MR], dadd[2 * MR], fix[2 * MR * NR];
    gboolean direct = TRUE;
    for (gint r = 0; r < 2 * MR; r++) {
      ibias[r] = rnd_int (-40000, 40000);
      mul[r] = rnd_f (1e-5f, 2e-3f);
      add[r] = rnd_f (-2.0f, 2.0f);
      direct &= ir_k_i8_direct (o, r, mul[r], add[r], &dmul[r], &dadd[r]);
    }
    for (gint i = 0; i < 2 * MR * NR; i++)
      fix[i] = rnd_int (0, 3) ? 0.0f : rnd_f (-1.0f, 1.0f);
    /* one run of columns 0 .. n - 1 at element 2 of each row */
    guint8 run_start[4] = { 0, 1, 1, 1 };
    guint16 run_mask[1] = { (guint16) ((1u << n) - 1) };
    gint32 run_at[1] = { 2 };
    gint rows1 = rnd_int (1, MR);
    gboolean use_fix = rnd_int (0, 1);
    gsize es = o->codes ? 1 : sizeof (float), bytes = (gsize) 2 * MR * LDO * es;
    guint8 *got = g_malloc (bytes), *want = g_malloc (bytes);
    memset (got, 0x5a, bytes);
    memset (want, 0x5a, bytes);
    M2iKI8Store st[2];
    for (gint h = 0; h < 2; h++)
      st[h] = (M2iKI8Store) { got + (gsize) h * MR * LDO * es, LDO, h ? rows1 : MR, h * MR,
        ibias + h * MR, mul + h * MR, add + h * MR, direct ? dmul + h * MR : NULL,
        direct ? dadd + h * MR : NULL, use_fix ? fix + h * MR * NR : NULL, o, run_start,
        run_mask, run_at };
    narrow (k4, a, b, off, n, &st[0], halves == 2 ? &st[1] : NULL);
    for (gint h = 0; h < halves; h++) {
      st[h].out = want + (gsize) h * MR * LDO * es;
      for (gint r = 0; r < st[h].rows; r++) {
        float v[NR];
        for (gint c = 0; c < NR; c++) {
          gint32 acc = ibias[h * MR + r];
          for (gint p = 0; p < k4 && c < n; p++)
            for (gint j = 0; j < 4; j++)
              acc += a[(p * 2 * MR + h * MR + r) * 4 + j] * b[off[p] + c * 4 + j];
          v[c] = (float) acc * mul[h * MR + r] + add[h * MR + r];
        }
        ir_k_i8_store_row (v, r, &st[h]);
      }
    }
    if (memcmp (got, want, bytes)) {
      for (gsize i = 0; i < bytes; i += es)
        if (memcmp (got + i, want + i, es))
          g_error ("narrow tile (act %d, codes %d, grid %d, direct %d, fix %d, n %d, k4 %d): "
              "element %" G_GSIZE_FORMAT " = %.9g, the reference %.9g", o->act, o->codes,
              o->grid, direct, use_fix, n, k4, i / es, es == 1 ? got[i] : *(float *) (got + i),
              es == 1 ? want[i] : *(float *) (want + i));
    }
    g_free (got);
    g_free (want);
    ir_k_i8_out_free (o);
  }
  g_free (a);
  g_free (b);
}

/* The depthwise rows of the level against ir_k_i8_dw_row_c. */
static void
test_exact_dw_rows (void)
{
  M2iCpuFlags level = ir_k_level (M2I_KERNELS_INT8);
  if (!ir_k_i8_dw_row_vnni (level, 1, 1) && !ir_k_i8_dw_row_avx2 (level, 1, 1)) {
    g_test_skip ("no vector depthwise rows at this level");
    return;
  }
  rng_state = 999;
  enum { WP = 512 };
  guint8 *plane = g_new (guint8, 7 * WP);
  for (gint i = 0; i < 7 * WP; i++)
    plane[i] = (guint8) rnd_int (0, 255);
  for (gint iter = 0; iter < 400; iter++) {
    gint64 sw = rnd_int (1, 2);
    M2iKI8DwRowFunc row = ir_k_i8_dw_row_vnni (level, sw, 1);
    if (!row)
      row = ir_k_i8_dw_row_avx2 (level, sw, 1);
    g_assert_nonnull (row);
    gint kh = rnd_int (1, 7), kw = rnd_int (1, 7), n_g = (kw + 3) / 4;
    gint8 w[7 * 2 * 4] = { 0 };
    for (gint ky = 0; ky < kh; ky++)
      for (gint kx = 0; kx < kw; kx++)
        w[(ky * n_g + kx / 4) * 4 + kx % 4] = (gint8) rnd_int (-128, 127);
    const guint8 *rows[7];
    for (gint ky = 0; ky < kh; ky++)
      rows[ky] = plane + ky * WP + rnd_int (0, 16);
    M2iKI8Out *o = random_out (4);
    gint64 c = rnd_int (0, 3), n = rnd_int (1, 150);
    float fix[160];
    for (gint i = 0; i < n; i++)
      fix[i] = rnd_f (-1.0f, 1.0f);
    M2iKI8DwRow r = { rows, kh, n_g, sw, 1, w, rnd_int (-40000, 40000), rnd_f (1e-5f, 2e-3f),
      rnd_f (-2.0f, 2.0f), FALSE, 0, 0, rnd_int (0, 1) ? fix : NULL, o, c, NULL, n };
    r.direct = ir_k_i8_direct (o, c, r.mul, r.add, &r.dmul, &r.dadd);
    gsize es = o->codes ? 1 : sizeof (float), bytes = (n + 16) * es;
    guint8 *got = g_malloc (bytes), *want = g_malloc (bytes);
    memset (got, 0x5a, bytes);
    memset (want, 0x5a, bytes);
    r.out = got;
    row (&r);
    r.out = want;
    ir_k_i8_dw_row_c (&r);
    for (gsize i = 0; i < bytes; i += es)
      if (memcmp (got + i, want + i, es))
        g_error ("dw row (sw %" G_GINT64_FORMAT ", %dx%d, n %" G_GINT64_FORMAT ", act %d, "
            "codes %d, grid %d, direct %d, fix %d): element %" G_GSIZE_FORMAT " = %.9g, "
            "the reference %.9g", sw, kh, kw, n, o->act, o->codes, o->grid, r.direct,
            r.fix != NULL, i / es, es == 1 ? got[i] : *(float *) (got + i),
            es == 1 ? want[i] : *(float *) (want + i));
    g_free (got);
    g_free (want);
    ir_k_i8_out_free (o);
  }
  g_free (plane);
}

/* The quantizing and copying rows of the level against the C loops:
 * values on and off the grid, out of range, NaN; rows starting left of
 * the image and running past it, strides 1 to 3, padding rows. */
static void
test_exact_rows (void)
{
  M2iCpuFlags level = ir_k_level (M2I_KERNELS_INT8);
  M2iKI8QuantRow quant = ir_k_i8_quant_row_avx512 (level);
  if (!quant)
    quant = ir_k_i8_quant_row_avx2 (level);
  if (!quant) {
    g_test_skip ("no vector rows at this level");
    return;
  }
  rng_state = 31337;
  enum { W = 300 };
  float *x = g_new (float, 4 * W);
  guint8 *codes = g_new (guint8, 4 * W);
  for (gint iter = 0; iter < 300; iter++) {
    gint levels = rnd_int (0, 2) ? 256 : rnd_int (2, 255);
    float lo = rnd_f (-3.0f, 1.0f), hi = lo + rnd_f (0.1f, 5.0f);
    if (rnd_int (0, 5) == 0) {
      float t = lo;                      /* a reversed range */
      lo = hi;
      hi = t;
    }
    M2iKI8Quant q = ir_k_i8_quantizer (levels, lo, hi, rnd_int (0, levels - 1));
    for (gint i = 0; i < 4 * W; i++) {
      gint kind = rnd_int (0, 9);
      x[i] = kind == 0 ? NAN : kind == 1 ? lo + (hi - lo) * rnd_int (0, levels - 1) /
          (levels - 1) : kind == 2 ? lo + (hi - lo) * (rnd_int (0, levels - 2) + 0.5f) /
          (levels - 1) : rnd_f (MIN (lo, hi) - 1.0f, MAX (lo, hi) + 1.0f);
      codes[i] = (guint8) rnd_int (0, 255);
    }
    gint64 n = rnd_int (1, W - 10);
    guint8 got[W * 4 + 64], want[W * 4 + 64];
    memset (got, 0x5a, sizeof got);
    memset (want, 0x5a, sizeof want);
    gint off = rnd_int (0, 3);
    quant (&q, x + off, n, got);
    ir_k_i8_quant_row_c (&q, x + off, n, want);
    if (memcmp (got, want, sizeof got))
      g_error ("quant row differs (n %" G_GINT64_FORMAT ")", n);

    gboolean as_codes = rnd_int (0, 1);
    M2iKI8CopyRow copy = ir_k_i8_copy_row_avx512 (level, as_codes);
    if (!copy)
      copy = ir_k_i8_copy_row_avx2 (level, as_codes);
    g_assert_nonnull (copy);
    gint64 sw = rnd_int (1, 3), w = rnd_int (1, W / 4);
    gint64 x0 = rnd_int (-3, 3), cn = rnd_int (1, (w + 6) / sw + 2);
    gconstpointer rows[4];
    guint8 fill[4];
    for (gint j = 0; j < 4; j++) {
      rows[j] = rnd_int (0, 4) == 0 ? NULL : as_codes ? (gconstpointer) (codes + j * W) :
          (gconstpointer) (x + j * W);
      fill[j] = (guint8) rnd_int (0, 255);
    }
    memset (got, 0x5a, sizeof got);
    memset (want, 0x5a, sizeof want);
    copy (&q, rows, fill, x0, sw, w, cn, got);
    (as_codes ? ir_k_i8_copy_row_codes_c : ir_k_i8_copy_row_c) (&q, rows, fill, x0, sw, w, cn,
        want);
    if (memcmp (got, want, sizeof got))
      g_error ("copy row differs (codes %d, x0 %" G_GINT64_FORMAT ", sw %" G_GINT64_FORMAT
          ", w %" G_GINT64_FORMAT ", n %" G_GINT64_FORMAT ")", as_codes, x0, sw, w, cn);
  }
  g_free (x);
  g_free (codes);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/conv-int8/listed", test_listed);
  g_test_add_func ("/conv-int8/random", test_random);
  g_test_add_func ("/conv-int8/exact/tile", test_exact_tile);
  g_test_add_func ("/conv-int8/exact/narrow", test_exact_narrow);
  g_test_add_func ("/conv-int8/exact/dw-rows", test_exact_dw_rows);
  g_test_add_func ("/conv-int8/exact/rows", test_exact_rows);
  return g_test_run ();
}
