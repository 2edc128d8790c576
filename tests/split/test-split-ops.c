/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The capability table case by case: small models whose layers the device
 * runs (or must refuse), each split with every device piece kept and run
 * against the same model unsplit on the CPU (the IR runtime, from the op
 * specifications) within 1e-2 + 1e-2·|x| (fp16 storage). Channel counts
 * are mostly not multiples of 8, so the engine's padding lanes and the
 * lane-by-lane Concat copy are exercised. */
#include "split-test-util.h"

#include <math.h>

static GRand *rng;

static gint
weights (TestIr *b, const M2iShape *shape, float scale)
{
  gint64 n = m2i_shape_numel (shape);
  float *w = g_new (float, MAX (n, 1));
  for (gint64 i = 0; i < n; i++)
    w[i] = g_rand_double_range (rng, -scale, scale);
  gint id = test_ir_const (b, M2I_ET_F32, shape, w);
  g_free (w);
  return id;
}

static gint
op1 (TestIr *b, const char *type, const char *opset, const char *attrs, gint in, const M2iShape *s)
{
  return test_ir_op (b, type, opset, attrs, 1, &in, M2I_ET_F32, s);
}

static gint
op2 (TestIr *b, const char *type, const char *opset, const char *attrs, gint x, gint y,
    const M2iShape *s)
{
  gint in[] = { x, y };
  return test_ir_op (b, type, opset, attrs, 2, in, M2I_ET_F32, s);
}

/* The model @b loaded (into @m) and split with every device piece kept. */
static M2iSplitPlan *
split_keep_all (TestIr *b, M2iIrModel **m)
{
  GError *error = NULL;
  *m = test_ir_load (b, &error);
  g_assert_no_error (error);
  M2iSplitOptions opts;
  m2i_split_options_init (&opts);
  opts.keep_all_device_pieces = TRUE;
  return split_logged (*m, &opts);
}

/* Splits with every device piece kept, checks that each layer of @on_device
 * (names, NULL-terminated) runs on the device and each of @on_cpu on the
 * CPU, then compares the outputs with the unsplit model's. */
static void
check (TestIr *b, const char *const *on_device, const char *const *on_cpu)
{
  GError *error = NULL;
  M2iIrModel *m;
  M2iSplitPlan *plan = split_keep_all (b, &m);
  for (int dev = 0; dev < 2; dev++)
    for (const char *const *n = dev ? on_device : on_cpu; n && *n; n++) {
      M2iSplitPieceInfo pi;
      g_assert_true (m2i_split_plan_get_piece (plan, piece_of_layer (plan, *n), &pi));
      if ((pi.device == M2I_SPLIT_DEVICE_M2I) != dev)
        g_error ("layer %s runs on %s", *n, m2i_split_device_to_string (pi.device));
    }
  M2iSplitRunner *r = m2i_split_runner_new (plan, NULL, &error);
  g_assert_no_error (error);
  M2iIrCompiledModel *cm = m2i_ir_compile (m, NULL, &error);
  g_assert_no_error (error);
  M2iIrInferRequest *req = m2i_ir_infer_request_new (cm, &error);
  for (gint i = 0; i < m2i_ir_model_get_n_inputs (m); i++) {
    M2iTensor *t = m2i_split_runner_get_input (r, i);
    for (gint64 k = 0; k < m2i_shape_numel (&t->shape); k++)
      ((float *) t->data)[k] = g_rand_double_range (rng, -2, 2);
    g_assert_true (m2i_ir_infer_request_set_input (req, i, t, &error));
  }
  g_assert_true (m2i_split_runner_run (r, &error));
  g_assert_no_error (error);
  g_assert_true (m2i_ir_infer_request_infer (req, &error));
  for (gint i = 0; i < m2i_ir_model_get_n_outputs (m); i++) {
    const M2iTensor *x = m2i_split_runner_get_output (r, i), *y = m2i_ir_infer_request_get_output (req, i);
    g_assert_true (m2i_shape_equal (&x->shape, &y->shape));
    double worst = 0;
    for (gint64 k = 0; k < m2i_shape_numel (&x->shape); k++) {
      float a = ((const float *) x->data)[k], c = ((const float *) y->data)[k];
      if (a == c)               /* also equal infinities (a window all padding) */
        continue;
      worst = MAX (worst, fabs (a - c));
      if (!(fabsf (a - c) <= 1e-2f + 1e-2f * fabsf (c)))
        g_error ("output %d element %" G_GINT64_FORMAT ": split %g, unsplit %g", i, k, a, c);
    }
    g_test_message ("output %d: largest difference %.2e", i, worst);
  }
  m2i_ir_infer_request_free (req);
  m2i_ir_compiled_model_unref (cm);
  m2i_split_runner_free (r);
  m2i_split_plan_unref (plan);
  m2i_ir_model_unref (m);
  test_ir_free (b);
}

/* Convolution 5 → 12, 3×3, stride 2, same_upper padding, with a bias and
 * Clamp(0, 6) tail; then a depthwise GroupConvolution, same_lower,
 * stride 2, bias and ReLU. */
static void
test_conv_pads_clamp_depthwise (void)
{
  TestIr *b = test_ir_new (11);
  gint x = test_ir_parameter (b, "x", M2I_ET_F32, &TEST_SHAPE (1, 5, 13, 11));
  gint w = weights (b, &TEST_SHAPE (12, 5, 3, 3), 0.3f);
  gint c = op2 (b, "Convolution", "opset1", "strides=\"2,2\" dilations=\"1,1\" pads_begin=\"0,0\" "
      "pads_end=\"0,0\" auto_pad=\"same_upper\"", x, w, &TEST_SHAPE (1, 12, 7, 6));
  gint bias = op2 (b, "Add", "opset1", NULL, c, weights (b, &TEST_SHAPE (1, 12, 1, 1), 1.0f),
      &TEST_SHAPE (1, 12, 7, 6));
  gint cl = op1 (b, "Clamp", "opset1", "min=\"0\" max=\"0.75\"", bias, &TEST_SHAPE (1, 12, 7, 6));
  gint dw = weights (b, &TEST_SHAPE (12, 1, 1, 3, 3), 0.5f);
  gint g = op2 (b, "GroupConvolution", "opset1", "strides=\"2,2\" dilations=\"1,1\" pads_begin=\"0,0\" "
      "pads_end=\"0,0\" auto_pad=\"same_lower\"", cl, dw, &TEST_SHAPE (1, 12, 4, 3));
  gint gb = op2 (b, "Add", "opset1", NULL, g, weights (b, &TEST_SHAPE (1, 12, 1, 1), 0.2f),
      &TEST_SHAPE (1, 12, 4, 3));
  test_ir_result (b, op1 (b, "ReLU", "opset1", NULL, gb, &TEST_SHAPE (1, 12, 4, 3)));
  const char *dev[] = { "Convolution_2", "Add_4", "Clamp_5", "GroupConvolution_7", "Add_9",
    "ReLU_10", NULL };
  check (b, dev, NULL);
}

/* MatMul with the weights as [K, O] (no transpose_b) and a bias; an Add of
 * two [N, K] tensors; ReduceMean over H, W without keep_dims into a MatMul. */
static void
test_matmul_and_reduce (void)
{
  TestIr *b = test_ir_new (11);
  gint x = test_ir_parameter (b, "x", M2I_ET_F32, &TEST_SHAPE (2, 11, 5, 6));
  gint64 axes[] = { 2, 3 };
  gint ax = test_ir_const (b, M2I_ET_I64, &TEST_SHAPE (2), axes);
  gint red = op2 (b, "ReduceMean", "opset1", "keep_dims=\"false\"", x, ax, &TEST_SHAPE (2, 11));
  gint mm = op2 (b, "MatMul", "opset1", "transpose_a=\"false\" transpose_b=\"false\"", red,
      weights (b, &TEST_SHAPE (11, 7), 0.5f), &TEST_SHAPE (2, 7));
  gint mb = op2 (b, "Add", "opset1", NULL, mm, weights (b, &TEST_SHAPE (1, 7), 0.5f),
      &TEST_SHAPE (2, 7));
  gint mm2 = op2 (b, "MatMul", "opset1", "transpose_a=\"false\" transpose_b=\"true\"", red,
      weights (b, &TEST_SHAPE (7, 11), 0.5f), &TEST_SHAPE (2, 7));
  gint sum = op2 (b, "Add", "opset1", NULL, mb, mm2, &TEST_SHAPE (2, 7));
  test_ir_result (b, op1 (b, "SoftMax", "opset8", "axis=\"1\"", sum, &TEST_SHAPE (2, 7)));
  const char *dev[] = { "ReduceMean_2", "MatMul_4", "Add_6", "MatMul_8", "Add_9", NULL };
  const char *cpu[] = { "SoftMax_10", NULL };
  check (b, dev, cpu);
}

/* Concat along channels: of two convolutions with 5 and 7 channels (the
 * lane-by-lane copy), of two with 8 and 16 (written in place into channel
 * views), and of a pool and a convolution. */
static void
test_concat (void)
{
  TestIr *b = test_ir_new (11);
  gint x = test_ir_parameter (b, "x", M2I_ET_F32, &TEST_SHAPE (1, 6, 7, 9));
  const char *k1 = "strides=\"1,1\" dilations=\"1,1\" pads_begin=\"0,0\" pads_end=\"0,0\"";
  gint c5 = op2 (b, "Convolution", "opset1", k1, x, weights (b, &TEST_SHAPE (5, 6, 1, 1), 0.5f),
      &TEST_SHAPE (1, 5, 7, 9));
  gint c7 = op2 (b, "Convolution", "opset1", k1, x, weights (b, &TEST_SHAPE (7, 6, 1, 1), 0.5f),
      &TEST_SHAPE (1, 7, 7, 9));
  gint cat1 = op2 (b, "Concat", "opset1", "axis=\"1\"", c5, c7, &TEST_SHAPE (1, 12, 7, 9));
  gint c8 = op2 (b, "Convolution", "opset1", k1, cat1, weights (b, &TEST_SHAPE (8, 12, 1, 1), 0.5f),
      &TEST_SHAPE (1, 8, 7, 9));
  gint c16 = op2 (b, "Convolution", "opset1", k1, cat1, weights (b, &TEST_SHAPE (16, 12, 1, 1), 0.5f),
      &TEST_SHAPE (1, 16, 7, 9));
  gint cat2 = op2 (b, "Concat", "opset1", "axis=\"1\"", c8, c16, &TEST_SHAPE (1, 24, 7, 9));
  gint pool = op1 (b, "MaxPool", "opset1", "kernel=\"3,3\" strides=\"1,1\" pads_begin=\"1,1\" "
      "pads_end=\"1,1\" rounding_type=\"floor\"", cat2, &TEST_SHAPE (1, 24, 7, 9));
  gint cat3 = op2 (b, "Concat", "opset1", "axis=\"-3\"", pool, c5, &TEST_SHAPE (1, 29, 7, 9));
  test_ir_result (b, cat3);
  const char *dev[] = { "Concat_5", "Concat_10", "Concat_12", "MaxPool_11", NULL };
  check (b, dev, NULL);
}

/* Pools: AvgPool with and without exclude-pad, MaxPool with ceil rounding
 * the engine agrees on; a MaxPool whose ceil rounding keeps a window that
 * starts in the padding (the engine drops it: CPU); a dilated MaxPool-8 (CPU). */
static void
test_pools (void)
{
  TestIr *b = test_ir_new (11);
  gint x = test_ir_parameter (b, "x", M2I_ET_F32, &TEST_SHAPE (1, 10, 9, 8));
  gint a1 = op1 (b, "AvgPool", "opset1", "kernel=\"3,3\" strides=\"2,2\" pads_begin=\"1,1\" "
      "pads_end=\"1,1\" rounding_type=\"floor\" exclude-pad=\"false\"", x, &TEST_SHAPE (1, 10, 5, 4));
  gint a2 = op1 (b, "AvgPool", "opset1", "kernel=\"2,3\" strides=\"1,2\" pads_begin=\"1,1\" "
      "pads_end=\"0,1\" rounding_type=\"floor\" exclude-pad=\"true\"", x, &TEST_SHAPE (1, 10, 9, 4));
  gint m1 = op1 (b, "MaxPool", "opset1", "kernel=\"3,3\" strides=\"2,2\" pads_begin=\"0,0\" "
      "pads_end=\"0,0\" rounding_type=\"ceil\"", x, &TEST_SHAPE (1, 10, 4, 4));
  /* H: 9 + 0 + 1 − 2 = 8 → ceil(8/3) + 1 = 4 outputs, the last starting at
   * 9 = in + pad_begin: in the end padding; W likewise */
  gint m2 = op1 (b, "MaxPool", "opset1", "kernel=\"2,2\" strides=\"3,3\" pads_begin=\"0,0\" "
      "pads_end=\"1,1\" rounding_type=\"ceil\"", x, &TEST_SHAPE (1, 10, 4, 4));
  gint m3 = test_ir_op (b, "MaxPool", "opset8", "kernel=\"2,2\" strides=\"1,1\" dilations=\"2,2\" "
      "pads_begin=\"0,0\" pads_end=\"0,0\" rounding_type=\"floor\"", 1, &x, M2I_ET_F32,
      &TEST_SHAPE (1, 10, 7, 6));
  test_ir_result (b, a1);
  test_ir_result (b, a2);
  test_ir_result (b, m1);
  test_ir_result (b, m2);
  test_ir_result (b, m3);
  const char *dev[] = { "AvgPool_1", "AvgPool_2", "MaxPool_3", NULL };
  const char *cpu[] = { "MaxPool_4", "MaxPool_5", NULL };
  check (b, dev, cpu);
}

/* PReLU on the engine (PReLU-1: x < 0 ? slope·x : x): fused after a
 * convolution's bias (a 1-D slope per channel), after a depthwise one (one
 * slope), after a residual Add (a [1, C, 1, 1] slope: fused into the add),
 * after a pool (standalone), after a MatMul on [N, K]; a slope numpy
 * broadcasts along W (not per channel) stays on the CPU. */
static void
test_prelu (void)
{
  TestIr *b = test_ir_new (11);
  const gint C = 13;
  gint x = test_ir_parameter (b, "x", M2I_ET_F32, &TEST_SHAPE (1, 6, 9, 10));
  const char *k3 = "strides=\"1,1\" dilations=\"1,1\" pads_begin=\"1,1\" pads_end=\"1,1\"";
  gint c = op2 (b, "Convolution", "opset1", k3, x, weights (b, &TEST_SHAPE (C, 6, 3, 3), 0.4f),
      &TEST_SHAPE (1, C, 9, 10));
  gint cb = op2 (b, "Add", "opset1", NULL, c, weights (b, &TEST_SHAPE (1, C, 1, 1), 0.5f),
      &TEST_SHAPE (1, C, 9, 10));
  gint p1 = op2 (b, "PReLU", "opset1", NULL, cb, weights (b, &TEST_SHAPE (C), 1.0f),
      &TEST_SHAPE (1, C, 9, 10));
  gint dw = op2 (b, "GroupConvolution", "opset1", k3, p1, weights (b, &TEST_SHAPE (C, 1, 1, 3, 3),
          0.5f), &TEST_SHAPE (1, C, 9, 10));
  gint p2 = op2 (b, "PReLU", "opset1", NULL, dw, weights (b, &TEST_SHAPE (1), 0.5f),
      &TEST_SHAPE (1, C, 9, 10));
  gint res = op2 (b, "Add", "opset1", NULL, p1, p2, &TEST_SHAPE (1, C, 9, 10));
  gint p3 = op2 (b, "PReLU", "opset1", NULL, res, weights (b, &TEST_SHAPE (1, C, 1, 1), 1.0f),
      &TEST_SHAPE (1, C, 9, 10));
  gint pool = op1 (b, "MaxPool", "opset1", "kernel=\"2,2\" strides=\"2,2\" pads_begin=\"0,0\" "
      "pads_end=\"0,0\" rounding_type=\"floor\"", p3, &TEST_SHAPE (1, C, 4, 5));
  gint p4 = op2 (b, "PReLU", "opset1", NULL, pool, weights (b, &TEST_SHAPE (C), 1.0f),
      &TEST_SHAPE (1, C, 4, 5));
  gint p5 = op2 (b, "PReLU", "opset1", NULL, p4, weights (b, &TEST_SHAPE (5), 1.0f),
      &TEST_SHAPE (1, C, 4, 5));
  gint64 flat[] = { 1, C * 4 * 5 };
  gint fs = test_ir_const (b, M2I_ET_I64, &TEST_SHAPE (2), flat);
  gint in2[] = { p4, fs };
  gint rs = test_ir_op (b, "Reshape", "opset1", "special_zero=\"false\"", 2, in2, M2I_ET_F32,
      &TEST_SHAPE (1, C * 20));
  gint mm = op2 (b, "MatMul", "opset1", "transpose_a=\"false\" transpose_b=\"true\"", rs,
      weights (b, &TEST_SHAPE (11, C * 20), 0.2f), &TEST_SHAPE (1, 11));
  gint p6 = op2 (b, "PReLU", "opset1", NULL, mm, weights (b, &TEST_SHAPE (11), 1.0f),
      &TEST_SHAPE (1, 11));
  test_ir_result (b, p5);
  test_ir_result (b, p6);
  g_autofree gchar *n1 = g_strdup_printf ("PReLU_%d", p1), *n2 = g_strdup_printf ("PReLU_%d", p2);
  g_autofree gchar *n3 = g_strdup_printf ("PReLU_%d", p3), *n4 = g_strdup_printf ("PReLU_%d", p4);
  g_autofree gchar *n5 = g_strdup_printf ("PReLU_%d", p5), *n6 = g_strdup_printf ("PReLU_%d", p6);
  g_autofree gchar *nr = g_strdup_printf ("Add_%d", res);
  const char *dev[] = { n1, n2, n3, n4, n6, nr, NULL };
  const char *cpu[] = { n5, NULL };
  check (b, dev, cpu);
}

/* A FakeQuantize of @x onto the grid [lo, hi] (256 levels; one range, or
 * one per output channel with shape [O, 1, 1, 1]). */
static gint
fake_quantize (TestIr *b, gint x, const M2iShape *range_shape, const float *lo, const float *hi,
    const M2iShape *out)
{
  gint l = test_ir_const (b, M2I_ET_F32, range_shape, lo);
  gint h = test_ir_const (b, M2I_ET_F32, range_shape, hi);
  gint in[] = { x, l, h, l, h };
  return test_ir_op (b, "FakeQuantize", "opset1", "levels=\"256\" auto_broadcast=\"numpy\"", 5,
      in, M2I_ET_F32, out);
}

/* int8: Convolution → Add → PReLU → FakeQuantize runs on the int8 engine,
 * the negative branch requantized by slope · s_in · s_w / s_out; against
 * the CPU's f32 FakeQuantize simulation within the tolerance (one output
 * step, 0.008, is inside it). */
static void
test_prelu_int8 (void)
{
  TestIr *b = test_ir_new (11);
  const gint C = 11;
  gint x = test_ir_parameter (b, "x", M2I_ET_F32, &TEST_SHAPE (1, 6, 8, 9));
  float ilo = -128 * 0.02f, ihi = 127 * 0.02f;
  gint xq = fake_quantize (b, x, &TEST_SHAPE (1), &ilo, &ihi, &TEST_SHAPE (1, 6, 8, 9));
  /* weights: integer codes times a per-channel scale */
  float w[11 * 6 * 9], wlo[11], whi[11];
  for (gint o = 0; o < C; o++) {
    float sw = 0.0004f * (o + 3);
    wlo[o] = -128 * sw;
    whi[o] = 127 * sw;
    for (gint k = 0; k < 6 * 9; k++)
      w[o * 54 + k] = g_rand_int_range (rng, -127, 128) * sw;
  }
  gint wc = test_ir_const (b, M2I_ET_F32, &TEST_SHAPE (C, 6, 3, 3), w);
  gint wq = fake_quantize (b, wc, &TEST_SHAPE (C, 1, 1, 1), wlo, whi, &TEST_SHAPE (C, 6, 3, 3));
  gint c = op2 (b, "Convolution", "opset1", "strides=\"1,1\" dilations=\"1,1\" pads_begin=\"1,1\" "
      "pads_end=\"1,1\"", xq, wq, &TEST_SHAPE (1, C, 8, 9));
  gint cb = op2 (b, "Add", "opset1", NULL, c, weights (b, &TEST_SHAPE (1, C, 1, 1), 0.3f),
      &TEST_SHAPE (1, C, 8, 9));
  gint p = op2 (b, "PReLU", "opset1", NULL, cb, weights (b, &TEST_SHAPE (C), 1.5f),
      &TEST_SHAPE (1, C, 8, 9));
  float olo = -128 * 0.008f, ohi = 127 * 0.008f;
  test_ir_result (b, fake_quantize (b, p, &TEST_SHAPE (1), &olo, &ohi, &TEST_SHAPE (1, C, 8, 9)));
  g_autofree gchar *np = g_strdup_printf ("PReLU_%d", p), *nc = g_strdup_printf ("Convolution_%d", c);
  const char *dev[] = { nc, np, NULL };
  M2iIrModel *m;
  M2iSplitPlan *plan = split_keep_all (b, &m);
  gboolean int8 = FALSE;
  for (gint i = 0; i < m2i_split_plan_get_n_pieces (plan); i++) {
    M2iSplitPieceInfo pi;
    m2i_split_plan_get_piece (plan, i, &pi);
    int8 |= pi.engine == M2I_SPLIT_ENGINE_NPU_INT8;
  }
  g_assert_true (int8);
  m2i_split_plan_unref (plan);
  m2i_ir_model_unref (m);
  check (b, dev, NULL);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  rng = g_rand_new_with_seed (11);
  g_test_add_func ("/split/ops/conv-pads-clamp-depthwise", test_conv_pads_clamp_depthwise);
  g_test_add_func ("/split/ops/matmul-and-reduce", test_matmul_and_reduce);
  g_test_add_func ("/split/ops/concat", test_concat);
  g_test_add_func ("/split/ops/pools", test_pools);
  g_test_add_func ("/split/ops/prelu", test_prelu);
  g_test_add_func ("/split/ops/prelu-int8", test_prelu_int8);
  int rc = g_test_run ();
  g_rand_free (rng);
  return rc;
}
