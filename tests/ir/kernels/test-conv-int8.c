/* The integer convolution (ir/kernels/conv-int8.h) against its definition
 * written here as naive loops: each input value quantized by the
 * FakeQuantize-1 formula (f32, as the spec's reference computes it), its
 * real value ol + k·(oh - ol)/(L - 1), weights code · scale, the products
 * summed in double over the padded window (padding = real 0), plus bias,
 * ReLU. The kernel sums integers exactly, so the only difference allowed is
 * the f32 rounding of its epilogue. Run at every instruction-set level
 * (meson: M2I_CPU_DISABLE none, vnni, avx512, avx2, all); the kernel family
 * in use is asserted to follow.
 */
#include "kernel-test.h"
#include <ir/kernels/conv-int8.h>

typedef struct {
  gint64 c_in, c_out, h, w, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr, groups, batch;
  gint levels;
  float lo, hi;                        /* FakeQuantize range (in = out) */
  gboolean relu, bias;
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

/* The spec's FakeQuantize level of x (in = out range). */
static gint
fq_level (float x, float lo, float hi, gint levels)
{
  if (x <= lo)
    return 0;
  if (x > hi)
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
  float *x = g_new (float, n_in);
  gint8 *q = g_new (gint8, k->c_out * per);
  float *sw = g_new (float, k->c_out), *bias = g_new (float, k->c_out);
  double step = ((double) k->hi - k->lo) / (k->levels - 1);
  for (gint64 i = 0; i < n_in; i++)
    x[i] = rnd_f (k->lo - 0.2f * (k->hi - k->lo), k->hi + 0.2f * (k->hi - k->lo));
  /* some values exactly on the grid and at its ends */
  for (gint64 i = 0; i < n_in; i += 7)
    x[i] = (float) (k->lo + step * rnd_int (0, k->levels - 1));
  for (gint64 i = 0; i < k->c_out * per; i++)
    q[i] = (gint8) rnd_int (-128, 127);
  for (gint64 o = 0; o < k->c_out; o++) {
    sw[o] = rnd_f (0.001f, 0.05f);
    bias[o] = rnd_f (-2.0f, 2.0f);
  }
  M2iKConvInt8Params p = { g, q, sw, k->levels, k->lo, k->hi, k->lo, k->hi,
    k->bias ? bias : NULL, k->relu };
  const char *why = NULL;
  M2iKConvInt8 *c = ir_k_conv_int8_new (&p, threads, &why);
  if (!c)
    g_error ("case rejected: %s", why);
  M2iCpuFlags f = m2i_cpu_flags ();
  const char *want = (f & M2I_CPU_AVX512VNNI) ? "vnni" : (f & M2I_CPU_AVX2) ? "avx2" : "c";
  g_assert_cmpstr (ir_k_conv_int8_kernel_name (c), ==, want);

  gsize sb = ir_k_conv_int8_scratch_bytes (c);
  guint8 *scratch = g_aligned_alloc (1, sb, 64);
  memset (scratch, 0xa5, sb);
  float *out = g_new (float, n_out);
  for (gint64 i = 0; i < n_out; i++)
    out[i] = NAN;
  ir_k_conv_int8_run (c, x, out, scratch, threads);

  double z = -(double) k->lo / step;
  for (gint64 n = 0; n < k->batch; n++)
    for (gint64 o = 0; o < k->c_out; o++) {
      gint64 gi = o / cout_g;
      for (gint64 oy = 0; oy < g.oh; oy++)
        for (gint64 ox = 0; ox < g.ow; ox++) {
          double sum = 0, mag = 0, zsum = 0;
          for (gint64 ci = 0; ci < cin_g; ci++)
            for (gint64 ky = 0; ky < k->kh; ky++)
              for (gint64 kx = 0; kx < k->kw; kx++) {
                gint64 iy = oy * k->sh - k->pt + ky * k->dh, ix = ox * k->sw - k->pl + kx * k->dw;
                gint qq = q[(o * cin_g + ci) * k->kh * k->kw + ky * k->kw + kx];
                zsum += qq;
                if (iy < 0 || iy >= k->h || ix < 0 || ix >= k->w)
                  continue;
                gint lv = fq_level (x[((n * k->c_in + gi * cin_g + ci) * k->h + iy) * k->w + ix],
                    k->lo, k->hi, k->levels);
                double real = k->lo + lv * step;
                sum += real * qq * sw[o];
                mag += fabs ((double) lv * qq);
              }
          double m = step * sw[o];
          double ref = sum + (k->bias ? bias[o] : 0);
          if (k->relu)
            ref = ref > 0 ? ref : 0;
          /* f32 epilogue: float(acc)·mul + add, each rounded, and mul and
           * add rounded from their double values */
          double tol = 4.0 * (mag * m + fabs (z * zsum * m) + fabs (bias[o]) + fabs (ref)) *
              (1.0 / 16777216.0) + 1e-30;
          gint64 at = ((n * k->c_out + o) * g.oh + oy) * g.ow + ox;
          if (!(fabs (out[at] - ref) <= tol))
            g_error ("case %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT
                " → %" G_GINT64_FORMAT " k%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT " s%"
                G_GINT64_FORMAT " groups %" G_GINT64_FORMAT ", %d threads: out[%" G_GINT64_FORMAT
                "][%" G_GINT64_FORMAT "][%" G_GINT64_FORMAT "][%" G_GINT64_FORMAT
                "] = %.9g, expected %.9g (tol %.3g)", k->c_in, k->h, k->w, k->c_out, k->kh,
                k->kw, k->sh, k->groups, threads, n, o, oy, ox, out[at], ref, tol);
        }
    }
  ir_k_conv_int8_free (c);
  g_aligned_free (scratch);
  g_free (out);
  g_free (x);
  g_free (q);
  g_free (sw);
  g_free (bias);
}

static void
test_listed (void)
{
  static const Case cases[] = {
    /* c_in c_out h w kh kw sh sw dh dw pt pl pb pr groups batch levels lo hi relu bias */
    { 16, 32, 10, 12, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 256, 0.0f, 6.0f, FALSE, TRUE },
    { 16, 32, 10, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 256, 0.0f, 6.0f, TRUE, TRUE },
    { 3, 16, 17, 19, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 256, -1.28f, 1.27f, FALSE, TRUE },
    { 5, 9, 9, 7, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1, 2, 256, -0.3f, 3.525f, TRUE, TRUE },
    { 8, 8, 12, 12, 5, 5, 2, 2, 1, 1, 2, 2, 2, 2, 1, 1, 255, -2.54f, 2.54f, FALSE, FALSE },
    { 8, 12, 12, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, 256, 0.0f, 1.0f, TRUE, TRUE },
    { 64, 64, 20, 20, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 1, 1, 256, 0.0f, 4.0f, FALSE, TRUE },
    { 12, 20, 1, 50, 1, 3, 1, 1, 1, 1, 0, 1, 0, 1, 1, 1, 256, 0.0f, 2.0f, FALSE, TRUE },
    { 7, 5, 6, 5, 2, 4, 3, 1, 1, 1, 0, 2, 1, 1, 1, 1, 16, 0.0f, 1.5f, TRUE, TRUE },
    { 256, 20, 7, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 256, -0.522f, 14.268f, FALSE, TRUE },
    { 33, 70, 40, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 256, 0.0f, 3.0f, TRUE, TRUE },
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
  for (gint i = 0; i < 60; i++) {
    Case k = { 0 };
    k.groups = rnd_int (0, 4) == 0 ? rnd_int (2, 3) : 1;
    gint64 cin_g = k.groups > 1 ? 4 * rnd_int (1, 4) : rnd_int (1, 40);
    k.c_in = cin_g * k.groups;
    k.c_out = k.groups * rnd_int (1, 24);
    k.kh = rnd_int (1, 4);
    k.kw = rnd_int (1, 4);
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
    /* an integer zero point (padding holds it) */
    gint zp = rnd_int (0, 1) ? 0 : rnd_int (0, k.levels - 1);
    float step = rnd_f (0.005f, 0.1f);
    k.lo = -zp * step;
    k.hi = k.lo + step * (k.levels - 1);
    k.relu = rnd_int (0, 1);
    k.bias = rnd_int (0, 3) != 0;
    run_case (&k, rnd_int (1, 3));
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/conv-int8/listed", test_listed);
  g_test_add_func ("/conv-int8/random", test_random);
  return g_test_run ();
}
