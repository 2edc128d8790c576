/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fp16 convolution and fully-connected layers against references written
 * here from the definition (NCHW, plain loops), within stated tolerances:
 *
 * 1. Against the exact result on the same fp16 inputs (double sums): the
 *    engine accumulates n = Ig·kh·kw products and the bias in fp32 and
 *    rounds once to fp16, so for every output
 *      |got - ref| <= 2^-11·|ref| + (1 + 2^-10)·E + 2^-24,
 *      E = n·2^-24 / (1 - n·2^-24) · (Σ|x·w| + |bias|)
 *    (half an fp16 ulp, the classic fp32 summation bound, subnormal floor).
 * 2. Against the IR runtime's fp32 Convolution kernel (ir/kernels, through
 *    the op API) on the original fp32 data, plus the bias and clamp in fp32
 *    — what the model computes on the CPU: additionally the rounding of x
 *    and w to fp16, |x̃w̃ - xw| <= (2^-10 + 2^-22)|xw|, so
 *      |got - ref32| <= bound 1 + (2^-10 + 2^-22)·Σ|x·w| + fp32's own E.
 * 3. With a PReLU epilogue (v < 0 ? v·slope : v before the clamp), the
 *    pre-activation's error is scaled by at most max(1, |slope|) (also when
 *    a value near 0 changes sides) and the fp32 product adds 2^-24·|v·slope|.
 * meson runs this binary once per M2I_CPU_DISABLE level. */
#include "npu-test-util.h"
#include "ir-conv.h"

typedef struct {
  gint N, C, O, G, H, W, KH, KW, SH, SW, DH, DW, PT, PL, PB, PR;
  float lo, hi;
  gboolean fc;
  gint prelu;                 /* 0: none; 1: a slope per channel; 2: one slope */
} Case;

static gint
out_size (gint in, gint pb, gint pe, gint k, gint d, gint s)
{
  return (in + pb + pe - ((k - 1) * d + 1)) / s + 1;
}

typedef struct {
  double worst_ulp_ratio;     /* max |err| / bound 1 */
  double worst_rel32;         /* max |err vs fp32| / Σ|xw| */
} Stats;

static void
run_case (const Case *k, GRand *r, Stats *st)
{
  gint Ig = k->C / k->G, Og = k->O / k->G;
  gint OH = out_size (k->H, k->PT, k->PB, k->KH, k->DH, k->SH);
  gint OW = out_size (k->W, k->PL, k->PR, k->KW, k->DW, k->SW);
  gsize nx = (gsize) k->N * k->C * k->H * k->W, nw = (gsize) k->O * Ig * k->KH * k->KW;
  float *x32 = g_new (float, nx), *w32 = g_new (float, nw), *bias = g_new (float, k->O);
  m2i_f16 *x = g_new (m2i_f16, nx), *w = g_new (m2i_f16, nw);
  double wscale = 1.0 / sqrt ((double) Ig * k->KH * k->KW);
  for (gsize i = 0; i < nx; i++) {
    x32[i] = (float) g_rand_double_range (r, -2, 2);
    x[i] = m2i_f32_to_f16 (x32[i]);
  }
  for (gsize i = 0; i < nw; i++) {
    w32[i] = (float) (g_rand_double_range (r, -1, 1) * wscale);
    w[i] = m2i_f32_to_f16 (w32[i]);
  }
  for (gint o = 0; o < k->O; o++)
    bias[o] = (float) g_rand_double_range (r, -0.5, 0.5);
  float *slopes = g_new (float, k->O);
  for (gint o = 0; o < k->O; o++)
    slopes[o] = o % 7 == 3 ? 0 : (float) g_rand_double_range (r, -2, 2);

  gsize bx = m2i_npu_tensor_bytes (M2I_NPU_FP16, k->N, k->C, k->H, k->W);
  gsize by = m2i_npu_tensor_bytes (M2I_NPU_FP16, k->N, k->O, OH, OW);
  m2i_f16 *xb = g_malloc (bx), *yb = g_malloc (by);
  m2i_f16 *wb = g_new (m2i_f16, m2i_npu_weights_blocked_count (k->O, Ig, k->KH, k->KW));
  m2i_f16 nan16 = 0x7e00;      /* padding lanes: a NaN that must never leak */
  tu_block (x, xb, 2, k->N, k->C, k->H, k->W, &nan16);
  tu_block_weights (w, wb, 2, k->O, Ig, k->KH, k->KW);
  GError *err = NULL;
  M2iNpuConv *conv;
  if (k->fc)
    conv = m2i_npu_fc_new_fp16 (k->C, k->O, wb, bias, k->lo, k->hi, &err);
  else {
    M2iNpuConvGeometry g = { k->C, k->O, k->G, k->H, k->W, k->KH, k->KW, k->SH, k->SW,
      k->DH, k->DW, k->PT, k->PL, k->PB, k->PR };
    conv = m2i_npu_conv_new_fp16 (&g, wb, bias, k->lo, k->hi, &err);
  }
  g_assert_no_error (err);
  if (k->prelu)
    g_assert_true (m2i_npu_conv_set_prelu (conv, slopes, k->prelu == 1 ? k->O : 1, &err));
  g_assert_no_error (err);
  M2iNpuTensor tin, tout;
  m2i_npu_tensor_init (&tin, M2I_NPU_FP16, k->N, k->C, k->H, k->W, xb, bx);
  m2i_npu_tensor_init (&tout, M2I_NPU_FP16, k->N, k->O, OH, OW, yb, by);
  memset (yb, 0xff, by);
  g_assert_true (m2i_npu_conv_run (conv, &tin, &tout, NULL, 2, &err));
  g_assert_no_error (err);
  TuIrConv *ir = tu_ir_conv_new (k->N, k->C, k->H, k->W, k->O, k->G, k->KH, k->KW,
      k->SH, k->SW, k->DH, k->DW, k->PT, k->PL, k->PB, k->PR, w32, 2, &err);
  g_assert_no_error (err);
  g_assert_true (tu_ir_conv_run (ir, x32, &err));
  g_assert_no_error (err);

  double n = (double) Ig * k->KH * k->KW + 1, u = ldexp (1, -24);
  double gamma = n * u / (1 - n * u);
  for (gint b = 0; b < k->N; b++)
    for (gint o = 0; o < TU_CEIL8 (k->O) * 8; o++)
      for (gint oy = 0; oy < OH; oy++)
        for (gint ox = 0; ox < OW; ox++) {
          m2i_f16 hv = yb[tu_blocked_index (k->O, OH, OW, b, o, oy, ox)];
          if (o >= k->O) {
            g_assert_cmphex (hv, ==, 0);      /* padding lanes hold +0 */
            continue;
          }
          double ref = bias[o], sabs = fabs (bias[o]), sabs16 = sabs;
          gint grp = o / Og;
          for (gint i = 0; i < Ig; i++)
            for (gint ky = 0; ky < k->KH; ky++)
              for (gint kx = 0; kx < k->KW; kx++) {
                gint iy = oy * k->SH - k->PT + ky * k->DH, ix = ox * k->SW - k->PL + kx * k->DW;
                if (iy < 0 || iy >= k->H || ix < 0 || ix >= k->W)
                  continue;
                gsize xi = (((gsize) b * k->C + grp * Ig + i) * k->H + iy) * k->W + ix;
                gsize wi = (((gsize) o * Ig + i) * k->KH + ky) * k->KW + kx;
                double p = (double) m2i_f16_to_f32 (x[xi]) * m2i_f16_to_f32 (w[wi]);
                ref += p;
                sabs16 += fabs (p);
                sabs += fabs ((double) x32[xi] * w32[wi]);
              }
          double got = m2i_f16_to_f32 (hv);
          double s = k->prelu == 0 ? 1 : slopes[k->prelu == 1 ? o : 0];
          double grow = k->prelu ? MAX (1.0, fabs (s)) : 1.0;
          double refp = k->prelu && ref < 0 ? ref * s : ref;
          double refc = CLAMP (refp, (double) k->lo, (double) k->hi);
          double e = gamma * sabs16;
          double bound = ldexp (fabs (refc), -11) + grow * (1 + ldexp (1, -10)) * e + u
              + (k->prelu ? u * fabs (refp) : 0);
          if (!(fabs (got - refc) <= bound))
            g_error ("%s: n %d c %d y %d x %d: got %.8g, exact %.8g, bound %.3g",
                m2i_npu_conv_get_path (conv), b, o, oy, ox, got, refc, bound);
          st->worst_ulp_ratio = MAX (st->worst_ulp_ratio, fabs (got - refc) / bound);
          /* Against the IR runtime's fp32 kernel on the unrounded data. */
          float acc32 = ir->output[(((gsize) b * k->O + o) * OH + oy) * OW + ox] + bias[o];
          float p32 = k->prelu && acc32 < 0 ? acc32 * (float) s : acc32;
          float c32 = CLAMP (p32, k->lo, k->hi);
          double bound32 = bound + grow * ((ldexp (1, -10) + ldexp (1, -22)) * sabs
              + gamma * sabs + u * fabs (acc32)) + u * fabs (p32);
          if (!(fabs (got - c32) <= bound32))
            g_error ("%s vs fp32: n %d c %d y %d x %d: got %.8g, fp32 %.8g, bound %.3g",
                m2i_npu_conv_get_path (conv), b, o, oy, ox, got, c32, bound32);
          st->worst_rel32 = MAX (st->worst_rel32, fabs (got - c32) / sabs);
        }
  m2i_npu_conv_free (conv);
  tu_ir_conv_free (ir);
  g_free (x32);
  g_free (w32);
  g_free (bias);
  g_free (slopes);
  g_free (x);
  g_free (w);
  g_free (xb);
  g_free (yb);
  g_free (wb);
}

static const Case cases[] = {
  /* N  C   O   G   H   W  KH KW SH SW DH DW PT PL PB PR  lo  hi */
  { 1, 16, 32,  1,  7,  7, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, -INFINITY, INFINITY },
  { 1,  3, 10,  1,  9, 11, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, INFINITY },
  { 1, 13, 21,  1, 17, 15, 5, 5, 2, 2, 1, 1, 2, 2, 2, 2, -INFINITY, INFINITY },
  { 1,  8, 16,  1, 12, 12, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 0, 0.75f },
  { 1, 12, 20,  2,  8,  9, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, -INFINITY, INFINITY },
  { 1, 19, 19, 19, 10, 13, 3, 3, 2, 2, 1, 1, 1, 0, 1, 2, 0, 6 },
  { 1, 40, 70,  1,  9, 14, 2, 4, 3, 3, 1, 1, 0, 1, 2, 3, -INFINITY, INFINITY },
  { 1, 24, 48,  1,  3, 50, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, -1, 1 },
  { 3, 10, 12,  1,  5,  6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, -INFINITY, INFINITY },
  { 1, 15, 21,  3,  7,  8, 3, 3, 1, 2, 1, 1, 1, 1, 1, 1, -INFINITY, INFINITY },
  { 2, 100, 37, 1,  1,  1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, -INFINITY, INFINITY, TRUE },
  { 1, 64, 64,  1, 14, 14, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, INFINITY },
  { 1,  3, 24,  1, 19, 23, 5, 5, 2, 2, 2, 2, 3, 1, 2, 4, -INFINITY, INFINITY },
  { 2,  1,  9,  1, 12, 17, 3, 3, 1, 3, 1, 1, 1, 2, 1, 0, 0, INFINITY },
  { 1, 16, 16, 16,  5,  3, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0, -INFINITY, INFINITY },
  /* PReLU (person-detection's bottlenecks: 1x1, depthwise 3x3, stride 2) */
  { 1, 32, 24,  1, 10, 17, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, -INFINITY, INFINITY, FALSE, 1 },
  { 1, 24, 24, 24, 11, 17, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, -INFINITY, INFINITY, FALSE, 2 },
  { 1, 40, 40, 40, 12,  9, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, -INFINITY, INFINITY, FALSE, 1 },
  { 1,  3, 16,  1, 15, 17, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, -INFINITY, INFINITY, FALSE, 1 },
  { 1, 13, 21,  1,  9, 11, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, -0.5f, 0.75f, FALSE, 1 },
  { 2, 100, 37, 1,  1,  1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, -INFINITY, INFINITY, TRUE, 2 },
};

static void
test_table (void)
{
  tu_log_cpu ();
  GRand *r = g_rand_new_with_seed (4);
  Stats st = { 0 };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    run_case (&cases[i], r, &st);
  g_test_message ("worst error / bound: %.3f; worst |fp16 - fp32| / sum|xw|: %.2e",
      st.worst_ulp_ratio, st.worst_rel32);
  g_rand_free (r);
}

static void
test_random (void)
{
  GRand *r = g_rand_new_with_seed (6);
  Stats st = { 0 };
  for (int iter = 0; iter < 40; iter++) {
    Case k = { 0 };
    do {
      k.N = g_rand_int_range (r, 1, 3);
      k.C = g_rand_int_range (r, 1, 33);
      k.O = g_rand_int_range (r, 1, 40);
      k.G = 1;
      if (g_rand_int_range (r, 0, 5) == 0)
        k.C = k.O = k.G = g_rand_int_range (r, 1, 20);
      k.H = g_rand_int_range (r, 1, 14);
      k.W = g_rand_int_range (r, 1, 22);
      k.KH = g_rand_int_range (r, 1, 5);
      k.KW = g_rand_int_range (r, 1, 5);
      k.SH = g_rand_int_range (r, 1, 3);
      k.SW = g_rand_int_range (r, 1, 4);
      k.DH = g_rand_int_range (r, 1, 3);
      k.DW = g_rand_int_range (r, 1, 3);
      k.PT = g_rand_int_range (r, 0, 3);
      k.PL = g_rand_int_range (r, 0, 3);
      k.PB = g_rand_int_range (r, 0, 3);
      k.PR = g_rand_int_range (r, 0, 3);
    } while (k.H + k.PT + k.PB < (k.KH - 1) * k.DH + 1 || k.W + k.PL + k.PR < (k.KW - 1) * k.DW + 1);
    k.lo = g_rand_boolean (r) ? -INFINITY : 0;
    k.hi = g_rand_boolean (r) ? INFINITY : 1;
    k.prelu = g_rand_int_range (r, 0, 3);
    if (k.prelu)
      k.lo = -INFINITY;
    run_case (&k, r, &st);
  }
  g_test_message ("worst error / bound: %.3f; worst |fp16 - fp32| / sum|xw|: %.2e",
      st.worst_ulp_ratio, st.worst_rel32);
  g_rand_free (r);
}

static void
test_errors (void)
{
  m2i_f16 wb[64] = { 0 };
  M2iNpuConvGeometry g = { 8, 8, 1, 4, 4, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0 };
  GError *err = NULL;
  g_assert_null (m2i_npu_conv_new_fp16 (&g, wb, NULL, 1, 0, &err));      /* lo > hi */
  g_assert_error (err, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT);
  g_clear_error (&err);
  g_assert_null (m2i_npu_conv_new_fp16 (&g, wb, NULL, NAN, 0, &err));
  g_clear_error (&err);
  g_assert_null (m2i_npu_fc_new_fp16 (0, 8, wb, NULL, 0, 1, &err));
  g_clear_error (&err);
  M2iNpuConv *c = m2i_npu_conv_new_fp16 (&g, wb, NULL, -INFINITY, INFINITY, &err);
  g_assert_no_error (err);
  g_assert_cmpint (m2i_npu_conv_get_precision (c), ==, M2I_NPU_FP16);
  float slopes[3] = { 0.25f, INFINITY, 1 };
  g_assert_false (m2i_npu_conv_set_prelu (c, slopes, 3, &err));       /* neither 1 nor O */
  g_assert_error (err, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT);
  g_clear_error (&err);
  g_assert_false (m2i_npu_conv_set_prelu (c, &slopes[1], 1, &err));   /* not finite */
  g_clear_error (&err);
  g_assert_false (m2i_npu_conv_set_prelu (c, NULL, 1, &err));
  g_clear_error (&err);
  g_assert_false (m2i_npu_conv_set_prelu (NULL, slopes, 1, &err));
  g_clear_error (&err);
  gint8 in[128 * 2], out[128 * 2];
  M2iNpuTensor ti, to;
  m2i_npu_tensor_init (&ti, M2I_NPU_INT8, 1, 8, 4, 4, in, sizeof in);
  m2i_npu_tensor_init (&to, M2I_NPU_FP16, 1, 8, 4, 4, out, sizeof out);
  g_assert_false (m2i_npu_conv_run (c, &ti, &to, NULL, 1, &err));       /* int8 input */
  g_assert_nonnull (strstr (err->message, "precision"));
  g_clear_error (&err);
  m2i_npu_conv_free (c);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/npu/conv-fp16/table", test_table);
  g_test_add_func ("/npu/conv-fp16/random", test_random);
  g_test_add_func ("/npu/conv-fp16/errors", test_errors);
  return g_test_run ();
}
