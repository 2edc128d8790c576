/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* int8 convolution and fully-connected layers, bit-exact against an integer
 * reference written here from the definition (NCHW, plain loops):
 *   acc = bias[o] + Σ (x[n, g*Ig + i, oy*sh - pt + ky*dh, ox*sw - pl + kx*dw] - zx) * w[o, i, ky, kx]
 * (padding contributes x = zx, i.e. nothing), then
 *   SHIFT:      q = Round(acc / 2^s)      (floor division + remainder)
 *   MULTIPLIER: q = TFLite MultiplyByQuantizedMultiplier(acc, m, shift)
 *   PReLU:      acc < 0 takes the negative branch's multiplier and shift
 *               (any sign: slope · scale), MULTIPLIER only
 *   out = Clamp(q + zo, act_min, act_max).
 * meson runs this binary once per M2I_CPU_DISABLE level, so every kernel
 * path meets the same reference. */
#include "npu-test-util.h"

typedef enum { ACT_NONE, ACT_RELU, ACT_CLAMP, ACT_PRELU } Act;

typedef struct {
  gint N, C, O, G, H, W, KH, KW, SH, SW, DH, DW, PT, PL, PB, PR;
  M2iNpuRequantScheme scheme;
  gboolean per_channel;
  M2iMliRound round;
  Act act;
  gint force_shift;          /* MULTIPLIER: use this exponent (0: from the data) */
  gboolean fc;               /* build with m2i_npu_fc_new_int8 */
} Case;

static gint
out_size (gint in, gint pb, gint pe, gint k, gint d, gint s)
{
  return (in + pb + pe - ((k - 1) * d + 1)) / s + 1;
}

static void
run_case (const Case *k, GRand *r)
{
  gint Ig = k->C / k->G, Og = k->O / k->G;
  gint OH = out_size (k->H, k->PT, k->PB, k->KH, k->DH, k->SH);
  gint OW = out_size (k->W, k->PL, k->PR, k->KW, k->DW, k->SW);
  g_assert_cmpint (OH, >=, 1);
  g_assert_cmpint (OW, >=, 1);
  gsize nx = (gsize) k->N * k->C * k->H * k->W, nw = (gsize) k->O * Ig * k->KH * k->KW;
  gsize ny = (gsize) k->N * k->O * OH * OW;
  gint8 *x = g_malloc (nx), *w = g_malloc (nw);
  gint32 *bias = g_new (gint32, k->O);
  gint64 *acc = g_new (gint64, ny);
  for (gsize i = 0; i < nx; i++)
    x[i] = (gint8) g_rand_int_range (r, -128, 128);
  for (gsize i = 0; i < nw; i++)
    w[i] = (gint8) g_rand_int_range (r, -128, 128);
  for (gint o = 0; o < k->O; o++)
    bias[o] = g_rand_int_range (r, -50000, 50000);
  gint32 zx = g_rand_int_range (r, -128, 128);

  /* The reference accumulators. */
  double sum2 = 0;
  for (gint n = 0; n < k->N; n++)
    for (gint o = 0; o < k->O; o++)
      for (gint oy = 0; oy < OH; oy++)
        for (gint ox = 0; ox < OW; ox++) {
          gint64 a = bias[o];
          gint g = o / Og;
          for (gint i = 0; i < Ig; i++)
            for (gint ky = 0; ky < k->KH; ky++)
              for (gint kx = 0; kx < k->KW; kx++) {
                gint iy = oy * k->SH - k->PT + ky * k->DH, ix = ox * k->SW - k->PL + kx * k->DW;
                if (iy < 0 || iy >= k->H || ix < 0 || ix >= k->W)
                  continue;
                gint64 xv = x[(((gsize) n * k->C + g * Ig + i) * k->H + iy) * k->W + ix];
                a += (xv - zx) * w[(((gsize) o * Ig + i) * k->KH + ky) * k->KW + kx];
              }
          acc[(((gsize) n * k->O + o) * OH + oy) * OW + ox] = a;
          sum2 += (double) a * a;
        }
  double rms = sqrt (sum2 / ny) + 1;

  /* Requantization spreading the outputs over the int8 range. */
  gint nq = k->per_channel ? k->O : 1;
  gint8 *shift = g_new (gint8, nq), *nshift = g_new (gint8, nq);
  gint32 *mult = g_new (gint32, nq), *nmult = g_new (gint32, nq);
  for (gint i = 0; i < nq; i++) {
    /* PReLU: slope · scale, slopes of both signs, some 0 */
    double slope = g_rand_int_range (r, 0, 8) == 0 ? 0 : g_rand_double_range (r, -1.5, 1.5);
    double nreal = slope * 40.0 / rms * g_rand_double_range (r, 0.7, 1.4);
    if (k->force_shift) {
      nmult[i] = g_rand_int_range (r, -G_MAXINT32, G_MAXINT32);
      nshift[i] = (gint8) k->force_shift;
    } else if (nreal == 0) {
      nmult[i] = 0;
      nshift[i] = 0;
    } else {
      tu_quantize (fabs (nreal), &nmult[i], &nshift[i]);
      nmult[i] = nreal < 0 ? -nmult[i] : nmult[i];
    }
    double real = 40.0 / rms * g_rand_double_range (r, 0.7, 1.4);
    if (k->scheme == M2I_NPU_REQUANT_SHIFT) {
      shift[i] = (gint8) CLAMP ((gint) lround (-log2 (real)), 0, 31);
      mult[i] = 0;
    } else if (k->force_shift) {
      mult[i] = g_rand_int_range (r, 1 << 30, G_MAXINT32);
      shift[i] = (gint8) k->force_shift;
    } else
      tu_quantize (real, &mult[i], &shift[i]);
  }
  gint32 zo = g_rand_int_range (r, -20, 21);
  gint32 amin = -128, amax = 127;
  if (k->act == ACT_RELU)
    amin = zo;
  else if (k->act == ACT_CLAMP) {
    amin = zo - 30;
    amax = zo + 40;
  }
  M2iNpuRequant rq = { k->scheme, nq, mult, shift, k->round, zo, amin, amax };
  if (k->act == ACT_PRELU) {
    g_assert_cmpint (k->scheme, ==, M2I_NPU_REQUANT_MULTIPLIER);
    rq.neg_multiplier = nmult;
    rq.neg_shift = nshift;
  }

  gint8 *expect = g_malloc (ny);
  for (gsize i = 0; i < ny; i++) {
    gint o = (i / ((gsize) OH * OW)) % k->O, qi = k->per_channel ? o : 0;
    gint64 q = k->scheme == M2I_NPU_REQUANT_SHIFT ? tu_srs (acc[i], shift[qi], k->round)
        : k->act == ACT_PRELU && acc[i] < 0 ? tu_mbqm (acc[i], nmult[qi], nshift[qi])
        : tu_mbqm (acc[i], mult[qi], shift[qi]);
    expect[i] = (gint8) CLAMP (q + zo, amin, amax);
  }

  /* The engine, on the test's own blocked copies; input padding lanes hold
   * garbage that must not leak into any result. */
  gint8 garbage = 0x5a;
  gsize bx = m2i_npu_tensor_bytes (M2I_NPU_INT8, k->N, k->C, k->H, k->W);
  gsize by = m2i_npu_tensor_bytes (M2I_NPU_INT8, k->N, k->O, OH, OW);
  gint8 *xb = g_malloc (bx), *wb = g_malloc (m2i_npu_weights_blocked_count (k->O, Ig, k->KH, k->KW));
  tu_block (x, xb, 1, k->N, k->C, k->H, k->W, &garbage);
  tu_block_weights (w, wb, 1, k->O, Ig, k->KH, k->KW);
  GError *err = NULL;
  M2iNpuConv *conv;
  if (k->fc)
    conv = m2i_npu_fc_new_int8 (k->C, k->O, wb, bias, zx, &rq, &err);
  else {
    M2iNpuConvGeometry g = { k->C, k->O, k->G, k->H, k->W, k->KH, k->KW, k->SH, k->SW,
      k->DH, k->DW, k->PT, k->PL, k->PB, k->PR };
    conv = m2i_npu_conv_new_int8 (&g, wb, bias, zx, &rq, &err);
  }
  g_assert_no_error (err);
  gint oh, ow;
  m2i_npu_conv_get_output_size (conv, &oh, &ow);
  g_assert_cmpint (oh, ==, OH);
  g_assert_cmpint (ow, ==, OW);

  gsize scratch_size = m2i_npu_conv_get_scratch_size (conv);
  gpointer scratch = g_malloc (scratch_size);
  gint8 *yb = g_malloc (by);
  M2iNpuTensor tin, tout;
  m2i_npu_tensor_init (&tin, M2I_NPU_INT8, k->N, k->C, k->H, k->W, xb, bx);
  m2i_npu_tensor_init (&tout, M2I_NPU_INT8, k->N, k->O, OH, OW, yb, by);
  for (int pass = 0; pass < 3; pass++) {
    memset (yb, 0x77, by);
    /* own scratch on one thread, caller scratch on two, then on four */
    g_assert_true (m2i_npu_conv_run (conv, &tin, &tout, pass ? scratch : NULL,
            pass == 0 ? 1 : pass * 2, &err));
    g_assert_no_error (err);
    gint8 pad_lane = (gint8) CLAMP (zo, amin, amax);
    for (gint n = 0; n < k->N; n++)
      for (gint c = 0; c < TU_CEIL8 (k->O) * 8; c++)
        for (gint oy = 0; oy < OH; oy++)
          for (gint ox = 0; ox < OW; ox++) {
            gint8 got = yb[tu_blocked_index (k->O, OH, OW, n, c, oy, ox)];
            gint8 want = c < k->O ? expect[(((gsize) n * k->O + c) * OH + oy) * OW + ox] : pad_lane;
            if (got != want)
              g_error ("%s: n %d c %d y %d x %d: got %d, expected %d "
                  "(C%d O%d G%d %dx%d k%dx%d s%d,%d d%d,%d p%d,%d,%d,%d scheme %d)",
                  m2i_npu_conv_get_path (conv), n, c, oy, ox, got, want, k->C, k->O,
                  k->G, k->H, k->W, k->KH, k->KW, k->SH, k->SW, k->DH, k->DW, k->PT,
                  k->PL, k->PB, k->PR, k->scheme);
          }
  }
  m2i_npu_conv_free (conv);
  g_free (scratch);
  g_free (yb);
  g_free (xb);
  g_free (wb);
  g_free (expect);
  g_free (shift);
  g_free (mult);
  g_free (nshift);
  g_free (nmult);
  g_free (acc);
  g_free (bias);
  g_free (w);
  g_free (x);
}

#define SHIFT M2I_NPU_REQUANT_SHIFT
#define MULT M2I_NPU_REQUANT_MULTIPLIER
#define HU M2I_MLI_ROUND_HALF_UP
#define HE M2I_MLI_ROUND_HALF_EVEN

static const Case cases[] = {
  /* N  C   O   G   H   W  KH KW SH SW DH DW PT PL PB PR */
  { 1, 16, 32,  1,  7,  7, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, SHIFT, FALSE, HU, ACT_NONE },   /* 1x1 */
  { 1,  3, 10,  1,  9, 11, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, MULT, TRUE, HU, ACT_RELU },     /* 3x3, C=3 */
  { 1, 13, 21,  1, 17, 15, 5, 5, 2, 2, 1, 1, 2, 2, 2, 2, MULT, TRUE, HU, ACT_NONE },     /* 5x5 s2 */
  { 1,  8, 16,  1, 12, 12, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, SHIFT, TRUE, HE, ACT_NONE },    /* dilation */
  { 1, 12, 20,  2,  8,  9, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, MULT, FALSE, HU, ACT_CLAMP },   /* groups 2 */
  { 1, 19, 19, 19, 10, 13, 3, 3, 2, 2, 1, 1, 1, 0, 1, 2, MULT, TRUE, HU, ACT_RELU },     /* depthwise */
  { 1, 40, 70,  1,  9, 14, 2, 4, 3, 3, 1, 1, 0, 1, 2, 3, SHIFT, TRUE, HU, ACT_NONE },    /* k2x4 s3 */
  { 1,  5,  8,  1, 11,  4, 7, 1, 1, 1, 1, 1, 3, 0, 3, 0, MULT, FALSE, HU, ACT_NONE },    /* 7x1 */
  { 1, 24, 48,  1,  3, 50, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, SHIFT, FALSE, HE, ACT_RELU },   /* wide */
  { 1, 32, 32,  4,  6,  6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, MULT, TRUE, HU, ACT_NONE },     /* groups 4 */
  { 1, 15, 21,  3,  7,  8, 3, 3, 1, 2, 1, 1, 1, 1, 1, 1, MULT, TRUE, HU, ACT_NONE },     /* groups 3, 5->7 */
  { 3, 10, 12,  1,  5,  6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, SHIFT, TRUE, HU, ACT_CLAMP },   /* batch 3 */
  { 1, 30,  9,  1,  4,  4, 4, 4, 1, 1, 1, 1, 0, 0, 0, 0, MULT, FALSE, HU, ACT_NONE },    /* one pixel */
  { 2, 100, 37, 1,  1,  1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, MULT, TRUE, HU, ACT_NONE, 0, TRUE },  /* FC */
  { 1,  9, 17,  1,  6,  7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, MULT, TRUE, HU, ACT_NONE, 2 },  /* left shift */
  { 1,  9, 17,  1,  6,  7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, MULT, FALSE, HU, ACT_NONE, 30 }, /* Sat32 */
  { 1, 70, 130, 1, 10, 10, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, MULT, TRUE, HE, ACT_RELU },     /* wide channels */
  { 1,  6, 64,  2, 29, 31, 3, 3, 2, 2, 1, 1, 0, 0, 0, 0, SHIFT, TRUE, HE, ACT_NONE },    /* groups 2, 3->32 */
  { 1,  3, 24,  1, 19, 23, 5, 5, 2, 2, 2, 2, 3, 1, 2, 4, MULT, TRUE, HU, ACT_NONE },     /* C=3 folded, s2 d2 */
  { 2,  1,  9,  1, 12, 17, 3, 3, 1, 3, 1, 1, 1, 2, 1, 0, SHIFT, TRUE, HE, ACT_RELU },   /* C=1 folded, s(1,3) */
  { 1, 16, 16, 16,  5,  3, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0, MULT, TRUE, HU, ACT_NONE },     /* depthwise, ow = 1 */
  /* PReLU: per channel and shared, depthwise, left shifts and Sat32 */
  { 1, 13, 21,  1,  9, 11, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, MULT, TRUE, HU, ACT_PRELU },
  { 1, 16, 40,  1,  7, 12, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, MULT, FALSE, HU, ACT_PRELU },
  { 1, 24, 24, 24, 11,  9, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, MULT, TRUE, HU, ACT_PRELU },
  { 1,  3, 16,  1, 15, 17, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, MULT, TRUE, HU, ACT_PRELU },
  { 2, 100, 37, 1,  1,  1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, MULT, TRUE, HU, ACT_PRELU, 0, TRUE },
  { 1,  9, 17,  1,  6,  7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, MULT, TRUE, HU, ACT_PRELU, 2 },
  { 1,  9, 17,  1,  6,  7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, MULT, FALSE, HU, ACT_PRELU, 30 },
};

static void
test_table (void)
{
  tu_log_cpu ();
  GRand *r = g_rand_new_with_seed (1);
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    run_case (&cases[i], r);
  g_rand_free (r);
}

static gint
pick_divisor (GRand *r, gint a, gint b)
{
  gint d[64], n = 0;
  for (gint g = 1; g <= MIN (a, b); g++)
    if (a % g == 0 && b % g == 0)
      d[n++] = g;
  return d[g_rand_int_range (r, 0, n)];
}

static void
test_random (void)
{
  GRand *r = g_rand_new_with_seed (2);
  for (int iter = 0; iter < 60; iter++) {
    Case k = { 0 };
    do {
      k.N = g_rand_int_range (r, 1, 3);
      k.C = g_rand_int_range (r, 1, 41);
      k.O = g_rand_int_range (r, 1, 41);
      k.G = g_rand_int_range (r, 0, 3) == 0 ? pick_divisor (r, k.C, k.O) : 1;
      if (g_rand_int_range (r, 0, 6) == 0)
        k.C = k.O = k.G = g_rand_int_range (r, 1, 30);        /* depthwise */
      k.H = g_rand_int_range (r, 1, 16);
      k.W = g_rand_int_range (r, 1, 24);
      k.KH = g_rand_int_range (r, 1, 6);
      k.KW = g_rand_int_range (r, 1, 6);
      k.SH = g_rand_int_range (r, 1, 4);
      k.SW = g_rand_int_range (r, 1, 4);
      k.DH = g_rand_int_range (r, 1, 3);
      k.DW = g_rand_int_range (r, 1, 3);
      k.PT = g_rand_int_range (r, 0, 3);
      k.PL = g_rand_int_range (r, 0, 3);
      k.PB = g_rand_int_range (r, 0, 3);
      k.PR = g_rand_int_range (r, 0, 3);
    } while (k.H + k.PT + k.PB < (k.KH - 1) * k.DH + 1 || k.W + k.PL + k.PR < (k.KW - 1) * k.DW + 1);
    k.scheme = g_rand_boolean (r) ? SHIFT : MULT;
    k.per_channel = g_rand_boolean (r);
    k.round = g_rand_boolean (r) ? HU : HE;
    k.act = g_rand_int_range (r, 0, 4);
    if (k.act == ACT_PRELU)
      k.scheme = MULT;
    run_case (&k, r);
  }
  g_rand_free (r);
}

/* Concat by channel offset: two layers write into views of one tensor and
 * the result equals their separate outputs side by side. */
static void
test_concat_views (void)
{
  GRand *r = g_rand_new_with_seed (5);
  gint C = 11, H = 6, W = 7;
  gint8 x[11 * 6 * 7], w1[16 * 11], w2[5 * 11 * 9];
  for (gsize i = 0; i < sizeof x; i++)
    x[i] = (gint8) g_rand_int_range (r, -128, 128);
  for (gsize i = 0; i < sizeof w1; i++)
    w1[i] = (gint8) g_rand_int_range (r, -128, 128);
  for (gsize i = 0; i < sizeof w2; i++)
    w2[i] = (gint8) g_rand_int_range (r, -128, 128);
  gint8 s = 10;
  M2iNpuRequant rq = { SHIFT, 1, NULL, &s, HU, 3, -128, 127 };
  M2iNpuConvGeometry g1 = { C, 16, 1, H, W, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0 };
  M2iNpuConvGeometry g2 = { C, 5, 1, H, W, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1 };
  gint8 wb1[2 * 2 * 64], wb2[2 * 9 * 64], pad = 0;
  tu_block_weights (w1, wb1, 1, 16, C, 1, 1);
  tu_block_weights (w2, wb2, 1, 5, C, 3, 3);
  GError *err = NULL;
  M2iNpuConv *c1 = m2i_npu_conv_new_int8 (&g1, wb1, NULL, -4, &rq, &err);
  M2iNpuConv *c2 = m2i_npu_conv_new_int8 (&g2, wb2, NULL, -4, &rq, &err);
  g_assert_no_error (err);
  gsize bx = m2i_npu_tensor_bytes (M2I_NPU_INT8, 1, C, H, W);
  gint8 *xb = g_malloc (bx);
  tu_block (x, xb, 1, 1, C, H, W, &pad);
  M2iNpuTensor tin, whole, v1, v2, s1, s2;
  m2i_npu_tensor_init (&tin, M2I_NPU_INT8, 1, C, H, W, xb, bx);
  gsize b21 = m2i_npu_tensor_bytes (M2I_NPU_INT8, 1, 21, H, W);
  gsize b16 = m2i_npu_tensor_bytes (M2I_NPU_INT8, 1, 16, H, W);
  gsize b5 = m2i_npu_tensor_bytes (M2I_NPU_INT8, 1, 5, H, W);
  gint8 *cat = g_malloc (b21), *o1 = g_malloc (b16), *o2 = g_malloc (b5);
  m2i_npu_tensor_init (&whole, M2I_NPU_INT8, 1, 21, H, W, cat, b21);
  m2i_npu_tensor_init (&s1, M2I_NPU_INT8, 1, 16, H, W, o1, b16);
  m2i_npu_tensor_init (&s2, M2I_NPU_INT8, 1, 5, H, W, o2, b5);
  g_assert_true (m2i_npu_tensor_channel_view (&whole, 0, 16, &v1, &err));
  g_assert_true (m2i_npu_tensor_channel_view (&whole, 16, 5, &v2, &err));
  g_assert_true (m2i_npu_conv_run (c1, &tin, &v1, NULL, 2, &err));
  g_assert_true (m2i_npu_conv_run (c2, &tin, &v2, NULL, 2, &err));
  g_assert_true (m2i_npu_conv_run (c1, &tin, &s1, NULL, 1, &err));
  g_assert_true (m2i_npu_conv_run (c2, &tin, &s2, NULL, 1, &err));
  g_assert_no_error (err);
  for (gint c = 0; c < 21; c++)
    for (gint y = 0; y < H; y++)
      for (gint xx = 0; xx < W; xx++) {
        gint8 got = cat[tu_blocked_index (21, H, W, 0, c, y, xx)];
        gint8 want = c < 16 ? o1[tu_blocked_index (16, H, W, 0, c, y, xx)]
            : o2[tu_blocked_index (5, H, W, 0, c - 16, y, xx)];
        g_assert_cmpint (got, ==, want);
      }
  /* Views that would share a block with another view's channels. */
  g_assert_false (m2i_npu_tensor_channel_view (&whole, 4, 8, &v1, &err));
  g_assert_error (err, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT);
  g_clear_error (&err);
  g_assert_false (m2i_npu_tensor_channel_view (&whole, 8, 5, &v1, &err));
  g_clear_error (&err);
  g_assert_false (m2i_npu_tensor_channel_view (&whole, 16, 6, &v1, &err));
  g_clear_error (&err);
  m2i_npu_conv_free (c1);
  m2i_npu_conv_free (c2);
  g_free (xb);
  g_free (cat);
  g_free (o1);
  g_free (o2);
  g_rand_free (r);
}

static void
test_errors (void)
{
  gint8 wb[64 * 9] = { 0 }, s = 4;
  M2iNpuRequant rq = { SHIFT, 1, NULL, &s, HU, 0, -128, 127 };
  M2iNpuConvGeometry g = { 8, 8, 1, 5, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1 };
  GError *err = NULL;
  struct { M2iNpuConvGeometry g; } bad[] = {
    { { 0, 8, 1, 5, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1 } },    /* no channels */
    { { 8, 8, 3, 5, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1 } },    /* groups do not divide */
    { { 8, 8, 1, 5, 5, 3, 3, 0, 1, 1, 1, 1, 1, 1, 1 } },    /* stride 0 */
    { { 8, 8, 1, 2, 2, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0 } },    /* kernel larger than input */
    { { 8, 8, 1, 5, 5, 3, 3, 1, 1, 1, 1, -1, 1, 1, 1 } },   /* negative pad */
  };
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++) {
    g_assert_null (m2i_npu_conv_new_int8 (&bad[i].g, wb, NULL, 0, &rq, &err));
    g_assert_error (err, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT);
    g_clear_error (&err);
  }
  g_assert_null (m2i_npu_conv_new_int8 (&g, NULL, NULL, 0, &rq, &err));
  g_clear_error (&err);
  g_assert_null (m2i_npu_conv_new_int8 (&g, wb, NULL, 128, &rq, &err));
  g_clear_error (&err);
  g_assert_null (m2i_npu_conv_new_int8 (&g, wb, NULL, 0, NULL, &err));
  g_clear_error (&err);
  M2iNpuRequant r2 = rq;
  r2.act_min = 10;
  r2.act_max = 5;
  g_assert_null (m2i_npu_conv_new_int8 (&g, wb, NULL, 0, &r2, &err));
  g_clear_error (&err);
  r2 = rq;
  r2.n = 3;
  g_assert_null (m2i_npu_conv_new_int8 (&g, wb, NULL, 0, &r2, &err));
  g_clear_error (&err);
  gint8 s40 = 40;
  r2 = rq;
  r2.shift = &s40;
  g_assert_null (m2i_npu_conv_new_int8 (&g, wb, NULL, 0, &r2, &err));
  g_clear_error (&err);
  r2 = rq;
  r2.scheme = MULT;                  /* without multipliers */
  g_assert_null (m2i_npu_conv_new_int8 (&g, wb, NULL, 0, &r2, &err));
  g_clear_error (&err);

  /* Run-time mismatches leave the output untouched. */
  M2iNpuConv *c = m2i_npu_conv_new_int8 (&g, wb, NULL, 0, &rq, &err);
  g_assert_no_error (err);
  gint8 in[200], out[200];
  memset (out, 0x33, sizeof out);
  M2iNpuTensor ti, to;
  m2i_npu_tensor_init (&ti, M2I_NPU_INT8, 1, 8, 5, 5, in, sizeof in);
  m2i_npu_tensor_init (&to, M2I_NPU_INT8, 1, 8, 5, 4, out, sizeof out);
  g_assert_false (m2i_npu_conv_run (c, &ti, &to, NULL, 1, &err));          /* shape */
  g_assert_error (err, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT);
  g_clear_error (&err);
  m2i_npu_tensor_init (&to, M2I_NPU_INT8, 1, 8, 5, 5, out, 199);
  g_assert_false (m2i_npu_conv_run (c, &ti, &to, NULL, 1, &err));          /* capacity */
  g_assert_error (err, M2I_ERROR, M2I_ERROR_BUFFER_TOO_SMALL);
  g_clear_error (&err);
  m2i_npu_tensor_init (&to, M2I_NPU_FP16, 1, 8, 5, 5, out, sizeof out);
  g_assert_false (m2i_npu_conv_run (c, &ti, &to, NULL, 1, &err));          /* precision */
  g_clear_error (&err);
  m2i_npu_tensor_init (&to, M2I_NPU_INT8, 1, 8, 5, 5, NULL, sizeof out);
  g_assert_false (m2i_npu_conv_run (c, &ti, &to, NULL, 1, &err));          /* no data */
  g_clear_error (&err);
  m2i_npu_tensor_init (&to, M2I_NPU_INT8, 1, 8, 5, 5, out, sizeof out);
  to.block_stride = 7;
  g_assert_false (m2i_npu_conv_run (c, &ti, &to, NULL, 1, &err));          /* strides */
  g_clear_error (&err);
  m2i_npu_tensor_init (&to, M2I_NPU_INT8, 3, 8, 5, 5, out, G_MAXSIZE);
  to.batch_stride = (gint64) 1 << 62;                                      /* overflow */
  g_assert_false (m2i_npu_conv_run (c, &ti, &to, NULL, 1, &err));
  g_clear_error (&err);
  for (gsize i = 0; i < sizeof out; i++)
    g_assert_cmpint (out[i], ==, 0x33);
  g_assert_false (m2i_npu_conv_run (NULL, &ti, &to, NULL, 1, &err));
  g_clear_error (&err);
  m2i_npu_conv_free (c);
  m2i_npu_conv_free (NULL);
}

/* The multiplier helper against its definition. */
static void
test_quantize_multiplier (void)
{
  static const double reals[] = { 0.5, 0.75, 1e-3, 0.999999999, 1.0, 3.25, 1e-9, 12345.678 };
  for (guint i = 0; i < G_N_ELEMENTS (reals); i++) {
    gint32 m;
    gint8 s;
    g_assert_true (m2i_npu_quantize_multiplier (reals[i], &m, &s));
    g_assert_cmpint (m, >=, 1 << 30);
    double back = ldexp ((double) m, s - 31);
    g_assert_cmpfloat (fabs (back - reals[i]), <=, ldexp (reals[i], -30));
  }
  gint32 m;
  gint8 s;
  g_assert_true (m2i_npu_quantize_multiplier (0, &m, &s));
  g_assert_cmpint (m, ==, 0);
  g_assert_false (m2i_npu_quantize_multiplier (-1, &m, &s));
  g_assert_false (m2i_npu_quantize_multiplier (NAN, &m, &s));
  g_assert_false (m2i_npu_quantize_multiplier (ldexp (1, 40), &m, &s));
}

/* Requantization parameters from real scales: the multipliers express
 * in·w/out to 31 bits, and a conv using them tracks the real-valued
 * result to within one output step. */
static void
test_requant_from_scales (void)
{
  double ws[3] = { 0.002, 0.0005, 0.01 };
  gint32 mult[3];
  gint8 shift[3];
  M2iNpuRequant rq;
  GError *err = NULL;
  g_assert_true (m2i_npu_requant_from_scales (0.05, ws, 3, 0.1, -5, TRUE, mult, shift, &rq, &err));
  g_assert_no_error (err);
  g_assert_cmpint (rq.scheme, ==, M2I_NPU_REQUANT_MULTIPLIER);
  g_assert_cmpint (rq.n, ==, 3);
  g_assert_true (rq.multiplier == mult && rq.shift == shift);
  g_assert_cmpint (rq.act_min, ==, -5);
  g_assert_cmpint (rq.act_max, ==, 127);
  for (int i = 0; i < 3; i++) {
    double real = 0.05 * ws[i] / 0.1;
    g_assert_cmpfloat (fabs (ldexp (mult[i], shift[i] - 31) - real), <=, ldexp (real, -30));
  }
  /* 1x1 conv, 1 input channel: out = Round(x·w·in·ws/out) + zo */
  M2iNpuConvGeometry g = { 1, 3, 1, 1, 4, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0 };
  gint8 w[3] = { 100, -120, 90 }, wb[64] = { 0 }, x[4] = { 127, -128, 50, -3 };
  gint8 xb[32] = { 0 }, yb[32];
  gint8 pad = 0;
  tu_block_weights (w, wb, 1, 3, 1, 1, 1);
  tu_block (x, xb, 1, 1, 1, 1, 4, &pad);
  g_assert_true (m2i_npu_requant_from_scales (0.05, ws, 3, 0.1, -5, FALSE, mult, shift, &rq, &err));
  M2iNpuConv *c = m2i_npu_conv_new_int8 (&g, wb, NULL, 0, &rq, &err);
  g_assert_no_error (err);
  M2iNpuTensor ti, to;
  m2i_npu_tensor_init (&ti, M2I_NPU_INT8, 1, 1, 1, 4, xb, sizeof xb);
  m2i_npu_tensor_init (&to, M2I_NPU_INT8, 1, 3, 1, 4, yb, sizeof yb);
  g_assert_true (m2i_npu_conv_run (c, &ti, &to, NULL, 1, &err));
  for (int o = 0; o < 3; o++)
    for (int i = 0; i < 4; i++) {
      double real = x[i] * 0.05 * w[o] * ws[o] / 0.1 - 5;
      g_assert_cmpfloat (fabs (yb[i * 8 + o] - CLAMP (real, -128, 127)), <=, 0.5 + 1e-6);
    }
  m2i_npu_conv_free (c);
  double bad[1] = { -1 };
  g_assert_false (m2i_npu_requant_from_scales (0.05, bad, 1, 0.1, 0, FALSE, mult, shift, &rq, &err));
  g_assert_error (err, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT);
  g_clear_error (&err);
}

/* Device cost of a squeezenet fire2/expand3x3 layer from the model's
 * definition: 56·56 pixels × 9 taps × (8 out × 2 in) blocks × 64 MACs. */
static void
test_cost (void)
{
  M2iNpuConvGeometry g = { 16, 64, 1, 56, 56, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1 };
  gint8 *wb = g_malloc0 (m2i_npu_weights_blocked_count (64, 16, 3, 3));
  gint8 s = 8;
  M2iNpuRequant rq = { SHIFT, 1, NULL, &s, HU, 0, -128, 127 };
  M2iNpuConv *c = m2i_npu_conv_new_int8 (&g, wb, NULL, 0, &rq, NULL);
  M2iNpuCost cost;
  m2i_npu_conv_get_cost (c, 1, &cost);
  g_assert_cmpuint (cost.macs, ==, 56ull * 56 * 9 * 16 * 64);
  g_assert_cmpuint (cost.bytes_in, ==, 56ull * 56 * 16);
  g_assert_cmpuint (cost.bytes_out, ==, 56ull * 56 * 64);
  g_assert_cmpuint (cost.bytes_weights, ==, 64ull * 16 * 9);
  g_assert_cmpuint (cost.cycles, ==, cost.macs / 256 + 64);
  m2i_npu_conv_free (c);
  g_free (wb);

  /* conv1 (3 channels, 3x3, stride 2): the kernel's columns fold into 9
   * channels, 2 blocks, so 3 taps × 2 input blocks × 8 output blocks. */
  M2iNpuConvGeometry g1 = { 3, 64, 1, 227, 227, 3, 3, 2, 2, 1, 1, 0, 0, 0, 0 };
  wb = g_malloc0 (m2i_npu_weights_blocked_count (64, 3, 3, 3));
  c = m2i_npu_conv_new_int8 (&g1, wb, NULL, 0, &rq, NULL);
  m2i_npu_conv_get_cost (c, 1, &cost);
  g_assert_cmpuint (cost.macs, ==, 113ull * 113 * 3 * 2 * 8 * 64);
  g_assert_cmpuint (cost.bytes_in, ==, 227ull * 227 * 8);
  g_assert_cmpuint (cost.bytes_weights, ==, 8ull * 9 * 64);
  m2i_npu_conv_free (c);
  g_free (wb);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/npu/conv-int8/table", test_table);
  g_test_add_func ("/npu/conv-int8/random", test_random);
  g_test_add_func ("/npu/conv-int8/concat-views", test_concat_views);
  g_test_add_func ("/npu/conv-int8/errors", test_errors);
  g_test_add_func ("/npu/conv-int8/quantize-multiplier", test_quantize_multiplier);
  g_test_add_func ("/npu/conv-int8/requant-from-scales", test_requant_from_scales);
  g_test_add_func ("/npu/conv-int8/cost", test_cost);
  return g_test_run ();
}
