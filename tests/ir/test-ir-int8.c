/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* INT8 models on integer kernels (ir/ir-lowp.c, docs/int8.md): small
 * models written as NNCF, POT and Model Optimizer write them — FakeQuantize
 * on activations, weights as Convert (i8) × scale, Convert (i8) − zero
 * point × scale, or FakeQuantize (levels 255) of Convert (u8) — compiled
 * twice, as the float emulation (FakeQuantize as its formula,
 * M2iIrCompileOptions.float_emulation) and on integer kernels, and
 * compared: a layer whose input is on a FakeQuantize grid computes the
 * same products as the emulation, so a single layer agrees to float
 * rounding; after a layer that writes codes, each code is the emulation's
 * level or a neighbour (the emulation's sum rounds differently), so the
 * result stays within one step of the inner grid times the next weights.
 * Also: which layers the pass takes (steps counted, kernels asserted; the
 * cost rule, M2I_INT8=all), the switches (option, M2I_INT8=0), no
 * allocation per inference. Run at every instruction-set level.
 */
#include "ir-test-util.h"
#include <ir/ir-compile.h>
#include <ir/kernels/conv-int8.h>

#include "../alloc-count.h"

#include <math.h>
#include <string.h>

static guint32 rng = 1;

static float
rnd_f (float lo, float hi)
{
  rng = rng * 1664525u + 1013904223u;
  return lo + (hi - lo) * ((rng >> 8) / 16777216.0f);
}

static gint
rnd_int (gint lo, gint hi)
{
  rng = rng * 1664525u + 1013904223u;
  return lo + (gint) ((rng >> 8) % (guint32) (hi - lo + 1));
}

static gint
scalar (TestIr *b, float v)
{
  return test_ir_const (b, M2I_ET_F32, &TEST_SHAPE (1, 1, 1, 1), &v);
}

/* FakeQuantize (levels, per tensor, in = out = [lo, hi]) of @x. */
static gint
fq (TestIr *b, gint x, const M2iShape *shape, gint levels, float lo, float hi)
{
  gint lo_id = scalar (b, lo), hi_id = scalar (b, hi);
  g_autofree gchar *attrs = g_strdup_printf ("levels=\"%d\" auto_broadcast=\"numpy\"", levels);
  return test_ir_op (b, "FakeQuantize", "opset1", attrs, 5,
      (gint[]) { x, lo_id, hi_id, lo_id, hi_id }, M2I_ET_F32, shape);
}

/* The same with one range per channel ([1, C, 1, 1]). */
static gint
fq_per_channel (TestIr *b, gint x, const M2iShape *shape, gint levels, const float *lo,
    const float *hi)
{
  M2iShape r = TEST_SHAPE (1, shape->dims[1], 1, 1);
  gint lo_id = test_ir_const (b, M2I_ET_F32, &r, lo), hi_id = test_ir_const (b, M2I_ET_F32, &r, hi);
  g_autofree gchar *attrs = g_strdup_printf ("levels=\"%d\"", levels);
  return test_ir_op (b, "FakeQuantize", "opset1", attrs, 5,
      (gint[]) { x, lo_id, hi_id, lo_id, hi_id }, M2I_ET_F32, shape);
}

typedef enum { W_MULTIPLY, W_ZERO_POINT, W_FQ255 } WeightForm;

/* Weights of @shape (output channels first) as @form writes them, with
 * random codes and a scale per output channel; @w gets their real values
 * (for the tests' own bounds). */
static gint
weights (TestIr *b, const M2iShape *shape, WeightForm form, float *w)
{
  gint64 n = m2i_shape_numel (shape), co = shape->dims[0], per = n / co;
  M2iShape sc = *shape;
  for (gint d = 1; d < sc.rank; d++)
    sc.dims[d] = 1;
  g_autofree gint8 *q = g_new (gint8, n);
  g_autofree guint8 *u = g_new (guint8, n);
  g_autofree float *scale = g_new (float, co), *lo = g_new (float, co), *hi = g_new (float, co);
  for (gint64 o = 0; o < co; o++) {
    scale[o] = rnd_f (0.002f, 0.03f);
    lo[o] = -127 * scale[o];
    hi[o] = 127 * scale[o];
  }
  for (gint64 i = 0; i < n; i++) {
    q[i] = (gint8) rnd_int (form == W_FQ255 ? -127 : -128, 127);
    u[i] = (guint8) (q[i] + 127);
    w[i] = q[i] * scale[i / per];
  }
  if (form == W_FQ255) {
    /* u8 codes 0..254 → FakeQuantize (255) over [0, 254] onto [-127 s, 127 s] */
    gint c = test_ir_const (b, M2I_ET_U8, shape, u);
    gint cv = test_ir_op (b, "Convert", "opset1", "destination_type=\"f32\"", 1, (gint[]) { c },
        M2I_ET_F32, shape);
    gint il = scalar (b, 0.0f), ih = scalar (b, 254.0f);
    gint ol = test_ir_const (b, M2I_ET_F32, &sc, lo), oh = test_ir_const (b, M2I_ET_F32, &sc, hi);
    return test_ir_op (b, "FakeQuantize", "opset1", "levels=\"255\"", 5,
        (gint[]) { cv, il, ih, ol, oh }, M2I_ET_F32, shape);
  }
  gint c = test_ir_const (b, M2I_ET_I8, shape, q);
  gint cv = test_ir_op (b, "Convert", "opset1", "destination_type=\"f32\"", 1, (gint[]) { c },
      M2I_ET_F32, shape);
  if (form == W_ZERO_POINT) {
    /* Model Optimizer's: a zero point of f16 noise (±7.6e-6) subtracted */
    g_autofree float *zp = g_new (float, co);
    for (gint64 o = 0; o < co; o++)
      zp[o] = (o % 3 - 1) * 7.62939453125e-06f;
    gint z = test_ir_const (b, M2I_ET_F32, &sc, zp);
    cv = test_ir_op (b, "Subtract", "opset1", NULL, 2, (gint[]) { cv, z }, M2I_ET_F32, shape);
  }
  gint s = test_ir_const (b, M2I_ET_F32, &sc, scale);
  return test_ir_op (b, "Multiply", "opset1", NULL, 2, (gint[]) { cv, s }, M2I_ET_F32, shape);
}

static gint
bias_add (TestIr *b, gint x, const M2iShape *shape)
{
  g_autofree float *bias = g_new (float, shape->dims[1]);
  for (gint64 c = 0; c < shape->dims[1]; c++)
    bias[c] = rnd_f (-0.5f, 0.5f);
  gint bc = test_ir_const (b, M2I_ET_F32, &TEST_SHAPE (1, shape->dims[1], 1, 1), bias);
  return test_ir_op (b, "Add", "opset1", NULL, 2, (gint[]) { x, bc }, M2I_ET_F32, shape);
}

static gint
conv (TestIr *b, gint x, gint w, gint pad, gint stride, const M2iShape *out)
{
  g_autofree gchar *attrs = g_strdup_printf ("strides=\"%d,%d\" dilations=\"1,1\" "
      "pads_begin=\"%d,%d\" pads_end=\"%d,%d\" auto_pad=\"explicit\"", stride, stride, pad, pad,
      pad, pad);
  return test_ir_op (b, "Convolution", "opset1", attrs, 2, (gint[]) { x, w }, M2I_ET_F32, out);
}

/* ---- compiling and running ---------------------------------------------- */

typedef struct {
  M2iIrModel *model;
  M2iIrCompiledModel *cm;
  M2iIrInferRequest *req;
} Run;

static Run
run_new (M2iIrModel *model, gboolean emulate, gint threads)
{
  GError *error = NULL;
  M2iIrCompileOptions o = { .n_threads = threads, .float_emulation = emulate };
  Run r = { m2i_ir_model_ref (model) };
  r.cm = m2i_ir_compile (model, &o, &error);
  g_assert_no_error (error);
  r.req = m2i_ir_infer_request_new (r.cm, &error);
  g_assert_no_error (error);
  return r;
}

static void
run_free (Run *r)
{
  m2i_ir_infer_request_free (r->req);
  m2i_ir_compiled_model_unref (r->cm);
  m2i_ir_model_unref (r->model);
}

static const float *
run_infer (Run *r, const float *in, gint64 n)
{
  GError *error = NULL;
  memcpy (m2i_ir_infer_request_get_input (r->req, 0)->data, in, n * sizeof (float));
  g_assert_true (m2i_ir_infer_request_infer (r->req, &error));
  g_assert_no_error (error);
  return m2i_ir_infer_request_get_output (r->req, 0)->data;
}

/* Integer layers among the steps, and those writing codes. */
static gint
count_int8 (const M2iIrCompiledModel *cm, gint *codes)
{
  gint n = 0;
  *codes = 0;
  for (guint i = 0; i < cm->steps->len; i++) {
    const CmStep *s = &g_array_index (cm->steps, CmStep, i);
    if (s->kernel != &ir_kernel_conv_int8)
      continue;
    n++;
    *codes += s->ctx.outputs[0].type == M2I_ET_U8;
  }
  return n;
}

static float *
random_input (const M2iShape *s, float lo, float hi)
{
  gint64 n = m2i_shape_numel (s);
  float *x = g_new (float, n);
  for (gint64 i = 0; i < n; i++)
    x[i] = rnd_f (lo, hi);
  return x;
}

/* ---- one layer: float rounding apart ---------------------------------------- */

static void
check_single (WeightForm form, gint k, gint stride, gint pad, gboolean relu, float lo, float hi,
    gint threads)
{
  TestIr *b = test_ir_new (11);
  M2iShape in = TEST_SHAPE (1, 16, 13, 17);
  gint64 oh = (13 + 2 * pad - k) / stride + 1, ow = (17 + 2 * pad - k) / stride + 1;
  M2iShape ws = TEST_SHAPE (24, 16, k, k), out = TEST_SHAPE (1, 24, oh, ow);
  g_autofree float *w = g_new (float, m2i_shape_numel (&ws));
  gint x = test_ir_parameter (b, "x", M2I_ET_F32, &in);
  gint f = fq (b, x, &in, 256, lo, hi);
  gint y = bias_add (b, conv (b, f, weights (b, &ws, form, w), pad, stride, &out), &out);
  if (relu)
    y = test_ir_op (b, "ReLU", "opset1", NULL, 1, &y, M2I_ET_F32, &out);
  test_ir_result (b, y);
  GError *error = NULL;
  M2iIrModel *model = test_ir_load (b, &error);
  g_assert_no_error (error);
  Run e = run_new (model, TRUE, threads), q = run_new (model, FALSE, threads);
  gint codes;
  g_assert_cmpint (count_int8 (e.cm, &codes), ==, 0);
  g_assert_cmpint (count_int8 (q.cm, &codes), ==, 1);
  /* the FakeQuantize went into the layer */
  g_assert_cmpint (m2i_ir_compiled_model_get_n_runtime_nodes (q.cm), ==,
      m2i_ir_compiled_model_get_n_runtime_nodes (e.cm) - 1);
  g_autofree float *xin = random_input (&in, lo - 0.3f * (hi - lo), hi + 0.3f * (hi - lo));
  gint64 n = m2i_shape_numel (&out);
  g_autofree float *ref = g_memdup2 (run_infer (&e, xin, m2i_shape_numel (&in)), n * 4);
  const float *got = run_infer (&q, xin, m2i_shape_numel (&in));
  /* the sums: at most 16·k·k terms of |x|·|w|, rounded in f32 by the
   * emulation and in the kernel's epilogue */
  float mag = MAX (fabsf (lo), fabsf (hi)), wmax = 0;
  for (gint64 i = 0; i < m2i_shape_numel (&ws); i++)
    wmax = MAX (wmax, fabsf (w[i]));
  double tol = 16.0 * k * k * mag * wmax * 4e-7 + 4e-6;
  for (gint64 i = 0; i < n; i++)
    if (!(fabs (got[i] - ref[i]) <= tol))
      g_error ("form %d k%d s%d pad %d: out[%" G_GINT64_FORMAT "] = %.9g, emulation %.9g "
          "(tol %.3g)", form, k, stride, pad, i, got[i], ref[i], tol);
  run_free (&e);
  run_free (&q);
  m2i_ir_model_unref (model);
  test_ir_free (b);
}

static void
test_single (void)
{
  /* every weight form; zero points 0, an integer (padding holds it) and
   * between two codes (the padding is corrected) */
  check_single (W_MULTIPLY, 3, 1, 1, TRUE, 0.0f, 5.1f, 1);
  check_single (W_ZERO_POINT, 3, 2, 1, FALSE, -1.28f, 1.27f, 2);
  check_single (W_FQ255, 1, 1, 0, FALSE, -0.4f, 4.7f, 1);
  check_single (W_FQ255, 3, 1, 1, TRUE, -0.4f, 4.7f, 3);
  check_single (W_MULTIPLY, 5, 2, 2, FALSE, -2.0f, 3.0f, 2);
}

/* ---- chains: codes between layers ---------------------------------------------- */

/* x → FQ → Conv 3×3 → bias → act → FQ (mid) → Conv 1×1 → bias → Result:
 * the first layer writes the second's codes. The emulation's and the
 * kernel's first sums differ by float rounding, so a code may be the
 * neighbour of the emulation's level: each output is within one mid step
 * times Σ|w2| of the emulation's (plus rounding), and nearly all agree to
 * rounding. */
static void
check_chain (const char *act, gboolean per_channel_dw, gint threads)
{
  TestIr *b = test_ir_new (11);
  M2iShape in = TEST_SHAPE (1, 8, 20, 24), mid = TEST_SHAPE (1, 32, 20, 24);
  M2iShape out = TEST_SHAPE (1, 16, 20, 24);
  M2iShape w1s = TEST_SHAPE (32, 8, 3, 3), w2s = TEST_SHAPE (16, 32, 1, 1);
  g_autofree float *w1 = g_new (float, m2i_shape_numel (&w1s));
  g_autofree float *w2 = g_new (float, m2i_shape_numel (&w2s));
  gint x = test_ir_parameter (b, "x", M2I_ET_F32, &in);
  gint y = bias_add (b, conv (b, fq (b, x, &in, 256, 0.0f, 2.55f), weights (b, &w1s, W_MULTIPLY,
              w1), 1, 1, &mid), &mid);
  if (!strcmp (act, "PReLU")) {
    float slope[32];
    for (gint c = 0; c < 32; c++)
      slope[c] = rnd_f (0.0f, 0.3f);
    gint s = test_ir_const (b, M2I_ET_F32, &TEST_SHAPE (32), slope);
    y = test_ir_op (b, "PReLU", "opset1", NULL, 2, (gint[]) { y, s }, M2I_ET_F32, &mid);
  } else if (!strcmp (act, "ReLU")) {
    y = test_ir_op (b, "ReLU", "opset1", NULL, 1, &y, M2I_ET_F32, &mid);
  }
  float mid_lo = -1.0f, mid_hi = 3.0f, step = (mid_hi - mid_lo) / 255;
  float los[32], his[32];
  for (gint c = 0; c < 32; c++) {
    los[c] = mid_lo * (1 + c % 5 * 0.1f);
    his[c] = mid_hi * (1 + c % 3 * 0.2f);
    step = MAX (step, (his[c] - los[c]) / 255);
  }
  gint q = per_channel_dw ? fq_per_channel (b, y, &mid, 256, los, his) :
      fq (b, y, &mid, 256, mid_lo, mid_hi);
  float *w2real = w2;
  gint64 per2 = 32;
  if (per_channel_dw) {
    /* a depthwise layer reads the per-channel grid, writes f32 into a
     * per-tensor FakeQuantize read by the 1×1 layer */
    M2iShape dws = TEST_SHAPE (32, 1, 1, 3, 3), dwsf = TEST_SHAPE (32, 1, 3, 3);
    g_autofree float *wd = g_new (float, 32 * 9);
    gint wdi = weights (b, &dwsf, W_FQ255, wd);
    gint shp = test_ir_const (b, M2I_ET_I64, &TEST_SHAPE (5), (gint64[]) { 32, 1, 1, 3, 3 });
    gint wr = test_ir_op (b, "Reshape", "opset1", "special_zero=\"false\"", 2,
        (gint[]) { wdi, shp }, M2I_ET_F32, &dws);
    gint d = test_ir_op (b, "GroupConvolution", "opset1", "strides=\"1,1\" dilations=\"1,1\" "
        "pads_begin=\"1,1\" pads_end=\"1,1\" auto_pad=\"explicit\"", 2, (gint[]) { q, wr },
        M2I_ET_F32, &mid);
    d = bias_add (b, d, &mid);
    q = fq (b, d, &mid, 256, mid_lo, mid_hi);
  }
  y = bias_add (b, conv (b, q, weights (b, &w2s, W_FQ255, w2real), 0, 1, &out), &out);
  test_ir_result (b, y);
  GError *error = NULL;
  M2iIrModel *model = test_ir_load (b, &error);
  g_assert_no_error (error);
  Run e = run_new (model, TRUE, threads), r = run_new (model, FALSE, threads);
  gint codes;
  gint n_int8 = count_int8 (r.cm, &codes);
  gboolean dw_fast = ir_k_conv_int8_dw_fast (&(M2iKConvGeom) { .sw = 1, .dw = 1 });
  g_assert_cmpint (n_int8, ==, per_channel_dw && dw_fast ? 3 : 2);
  /* each integer layer writes the codes of the next, which is one */
  g_assert_cmpint (codes, ==, per_channel_dw && !dw_fast ? 0 : n_int8 - 1);
  g_autofree float *xin = random_input (&in, -0.5f, 3.0f);
  gint64 n = m2i_shape_numel (&out);
  g_autofree float *ref = g_memdup2 (run_infer (&e, xin, m2i_shape_numel (&in)), n * 4);
  const float *got = run_infer (&r, xin, m2i_shape_numel (&in));
  gint64 exact = 0;
  for (gint64 i = 0; i < n; i++) {
    gint64 o = i / (20 * 24);
    double sum = 0;
    for (gint64 c = 0; c < per2; c++)
      sum += fabs (w2real[o * per2 + c]);
    double close = 4e-6 * (1 + fabs (ref[i]));
    double tol = close + (per_channel_dw ? 3 : 1) * step * sum;
    if (!(fabs (got[i] - ref[i]) <= tol))
      g_error ("chain %s%s: out[%" G_GINT64_FORMAT "] = %.9g, emulation %.9g (tol %.3g)", act,
          per_channel_dw ? " + depthwise" : "", i, got[i], ref[i], tol);
    exact += fabs (got[i] - ref[i]) <= close;
  }
  g_assert_cmpint (exact, >=, n * 95 / 100);
  run_free (&e);
  run_free (&r);
  m2i_ir_model_unref (model);
  test_ir_free (b);
}

static void
test_chain (void)
{
  check_chain ("ReLU", FALSE, 1);
  check_chain ("PReLU", FALSE, 2);
  check_chain ("", FALSE, 1);
  check_chain ("ReLU", TRUE, 2);
  check_chain ("PReLU", TRUE, 1);
}

/* ---- the grid through Concat, MaxPool and views; what stays f32 ------------------ */

static void
test_grid (void)
{
  TestIr *b = test_ir_new (11);
  M2iShape half = TEST_SHAPE (1, 8, 12, 12), full = TEST_SHAPE (1, 16, 12, 12);
  M2iShape pooled = TEST_SHAPE (1, 16, 6, 6), out = TEST_SHAPE (1, 12, 6, 6);
  M2iShape ws = TEST_SHAPE (12, 16, 3, 3);
  g_autofree float *w = g_new (float, m2i_shape_numel (&ws));
  gint x = test_ir_parameter (b, "x", M2I_ET_F32, &full);
  gint f = fq (b, x, &full, 256, -0.5f, 2.05f);
  /* the same grid on both halves of a Concat, one of them through a
   * ReLU on the grid (not a mover: it must stop the search) */
  gint a = test_ir_op (b, "StridedSlice", "opset1", "begin_mask=\"1,0\" end_mask=\"1,0\"", 4,
      (gint[]) { f, test_ir_const (b, M2I_ET_I64, &TEST_SHAPE (2), (gint64[]) { 0, 0 }),
        test_ir_const (b, M2I_ET_I64, &TEST_SHAPE (2), (gint64[]) { 0, 8 }),
        test_ir_const (b, M2I_ET_I64, &TEST_SHAPE (2), (gint64[]) { 1, 1 }) },
      M2I_ET_F32, &half);
  gint c = test_ir_op (b, "StridedSlice", "opset1", "begin_mask=\"1,0\" end_mask=\"1,0\"", 4,
      (gint[]) { f, test_ir_const (b, M2I_ET_I64, &TEST_SHAPE (2), (gint64[]) { 0, 8 }),
        test_ir_const (b, M2I_ET_I64, &TEST_SHAPE (2), (gint64[]) { 0, 16 }),
        test_ir_const (b, M2I_ET_I64, &TEST_SHAPE (2), (gint64[]) { 1, 1 }) },
      M2I_ET_F32, &half);
  gint cat = test_ir_op (b, "Concat", "opset1", "axis=\"1\"", 2, (gint[]) { c, a }, M2I_ET_F32,
      &full);
  gint mp = test_ir_op (b, "MaxPool", "opset1", "strides=\"2,2\" pads_begin=\"0,0\" "
      "pads_end=\"0,0\" kernel=\"2,2\" rounding_type=\"floor\" auto_pad=\"explicit\"", 1, &cat,
      M2I_ET_F32, &pooled);
  gint y = conv (b, mp, weights (b, &ws, W_MULTIPLY, w), 1, 1, &out);
  /* a second layer on a ReLU of the grid: not known to be on it */
  gint r = test_ir_op (b, "ReLU", "opset1", NULL, 1, &mp, M2I_ET_F32, &pooled);
  gint y2 = conv (b, r, weights (b, &ws, W_MULTIPLY, w), 1, 1, &out);
  gint sum = test_ir_op (b, "Add", "opset1", NULL, 2, (gint[]) { y, y2 }, M2I_ET_F32, &out);
  test_ir_result (b, sum);
  GError *error = NULL;
  M2iIrModel *model = test_ir_load (b, &error);
  g_assert_no_error (error);
  Run e = run_new (model, TRUE, 2), q = run_new (model, FALSE, 2);
  gint codes;
  g_assert_cmpint (count_int8 (q.cm, &codes), ==, 1);
  g_autofree float *xin = random_input (&full, -1.0f, 2.5f);
  gint64 n = m2i_shape_numel (&out);
  g_autofree float *ref = g_memdup2 (run_infer (&e, xin, m2i_shape_numel (&full)), n * 4);
  const float *got = run_infer (&q, xin, m2i_shape_numel (&full));
  for (gint64 i = 0; i < n; i++)
    g_assert_cmpfloat (fabs (got[i] - ref[i]), <=, 1e-5 * (1 + fabs (ref[i])));
  run_free (&e);
  run_free (&q);

  /* the switches: the option above, and M2I_INT8=0 for every compile */
  g_setenv ("M2I_INT8", "0", TRUE);
  q = run_new (model, FALSE, 2);
  g_assert_cmpint (count_int8 (q.cm, &codes), ==, 0);
  run_free (&q);
  g_setenv ("M2I_INT8", "all", TRUE);

  /* no allocation per inference */
  if (!ALLOC_COUNT_SANITIZED) {
    q = run_new (model, FALSE, 2);
    run_infer (&q, xin, m2i_shape_numel (&full));
    alloc_count_start_checked ();
    for (gint i = 0; i < 3; i++)
      g_assert_true (m2i_ir_infer_request_infer (q.req, NULL));
    g_assert_cmpint (alloc_count_stop (), ==, 0);
    run_free (&q);
  }
  m2i_ir_model_unref (model);
  test_ir_free (b);
}

/* ---- real models (../shared) ------------------------------------------------ */

typedef struct {
  gint cls;
  float score, box[4];                 /* x1 y1 x2 y2, input pixels */
} Det;

static float
iou (const float *a, const float *b)
{
  float w = MIN (a[2], b[2]) - MAX (a[0], b[0]), h = MIN (a[3], b[3]) - MAX (a[1], b[1]);
  float inter = MAX (w, 0) * MAX (h, 0);
  float u = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter;
  return u > 0 ? inter / u : 0;
}

/* Ultralytics' decode of a [4 + classes, anchors] output, as the reference
 * decode (detections.txt) describes it: best class score > 0.25, class-wise
 * NMS at IoU 0.7, best first. */
static GArray *
decode (const float *out, gint classes, gint anchors)
{
  GArray *cand = g_array_new (FALSE, FALSE, sizeof (Det));
  for (gint a = 0; a < anchors; a++) {
    Det d = { 0, -1 };
    for (gint c = 0; c < classes; c++)
      if (out[(4 + c) * anchors + a] > d.score) {
        d.score = out[(4 + c) * anchors + a];
        d.cls = c;
      }
    if (d.score <= 0.25f)
      continue;
    float cx = out[a], cy = out[anchors + a], w = out[2 * anchors + a], h = out[3 * anchors + a];
    d.box[0] = cx - w / 2;
    d.box[1] = cy - h / 2;
    d.box[2] = cx + w / 2;
    d.box[3] = cy + h / 2;
    g_array_append_val (cand, d);
  }
  for (guint i = 0; i < cand->len; i++)            /* by score, best first */
    for (guint j = i + 1; j < cand->len; j++)
      if (g_array_index (cand, Det, j).score > g_array_index (cand, Det, i).score) {
        Det t = g_array_index (cand, Det, i);
        g_array_index (cand, Det, i) = g_array_index (cand, Det, j);
        g_array_index (cand, Det, j) = t;
      }
  GArray *kept = g_array_new (FALSE, FALSE, sizeof (Det));
  for (guint i = 0; i < cand->len; i++) {
    const Det *d = &g_array_index (cand, Det, i);
    gboolean keep = TRUE;
    for (guint j = 0; j < kept->len && keep; j++) {
      const Det *k = &g_array_index (kept, Det, j);
      keep = k->cls != d->cls || iou (k->box, d->box) <= 0.7f;
    }
    if (keep)
      g_array_append_val (kept, *d);
  }
  g_array_free (cand, TRUE);
  return kept;
}

static float *
read_f32 (const char *path, gint64 n)
{
  gchar *data;
  gsize len;
  GError *error = NULL;
  g_assert_true (g_file_get_contents (path, &data, &len, &error));
  g_assert_cmpuint (len, ==, n * sizeof (float));
  return (float *) data;
}

/* Runs @model of ../shared on @input, integer kernels or the emulation;
 * output 0 (@n floats, owned). */
static float *
run_shared_model (const char *model, const char *input, gboolean emulate, gint64 n)
{
  g_autofree gchar *xml = test_shared_path (model);
  g_autofree gchar *in_path = test_shared_path (input);
  GError *error = NULL;
  M2iIrModel *m = m2i_ir_model_load (xml, NULL, &error);
  g_assert_no_error (error);
  /* with VNNI the layers the pass takes by itself (most of them); at the
   * other levels, where its estimates leave many in f32, every layer that
   * can be, to test their kernels on a real model */
  gboolean vnni = ir_k_i8_micro_vnni (ir_k_level (M2I_KERNELS_INT8)) != NULL;
  if (vnni)
    g_unsetenv ("M2I_INT8");
  Run r = run_new (m, emulate, 2);
  g_setenv ("M2I_INT8", "all", TRUE);
  gint codes;
  g_assert_cmpint (count_int8 (r.cm, &codes), >, emulate ? -1 : 50);
  const M2iTensor *in = m2i_ir_infer_request_get_input (r.req, 0);
  gint64 n_in = m2i_shape_numel (&in->shape);
  g_autofree float *x = read_f32 (in_path, n_in);
  float *out = g_memdup2 (run_infer (&r, x, n_in), n * sizeof (float));
  g_assert_cmpint (m2i_shape_numel (&m2i_ir_infer_request_get_output (r.req, 0)->shape), ==, n);
  run_free (&r);
  m2i_ir_model_unref (m);
  return out;
}

/* yolov8n-int8 on the astronaut: the decoded detections equal the
 * reference's (ONNX Runtime's raw output, the same decode): the same
 * classes, scores within 0.01, boxes at IoU >= 0.9 — on integer kernels
 * and as the float emulation. */
static void
test_yolov8n_detections (void)
{
  g_autofree gchar *xml = test_shared_model ("yolov8n-int8/yolov8n.xml");
  if (!xml)
    return;
  g_autofree gchar *ref_path = test_shared_path ("reference/yolov8n-int8.astronaut.output.f32");
  g_autofree float *ref = read_f32 (ref_path, 84 * 8400);
  GArray *want = decode (ref, 80, 8400);
  g_assert_cmpuint (want->len, ==, 1);              /* detections.txt: one person */
  for (gint emulate = 0; emulate < 2; emulate++) {
    g_autofree float *out = run_shared_model ("yolov8n-int8/yolov8n.xml",
        "reference/yolov8n-int8.astronaut.input.f32", emulate, 84 * 8400);
    GArray *got = decode (out, 80, 8400);
    g_assert_cmpuint (got->len, ==, want->len);
    for (guint i = 0; i < got->len; i++) {
      const Det *g = &g_array_index (got, Det, i), *w = &g_array_index (want, Det, i);
      g_test_message ("yolov8n-int8%s: class %d score %.4f (reference %.4f) IoU %.3f",
          emulate ? " (emulation)" : "", g->cls, g->score, w->score, iou (g->box, w->box));
      g_assert_cmpint (g->cls, ==, w->cls);
      g_assert_cmpfloat (fabsf (g->score - w->score), <=, 0.01f);
      g_assert_cmpfloat (iou (g->box, w->box), >=, 0.9f);
    }
    g_array_free (got, TRUE);
  }
  g_array_free (want, TRUE);
}

/* yolov8n-pose-int8 on the same input: the person (best anchor) with its
 * score within 0.01, box at IoU >= 0.9 and visible keypoints (visibility
 * > 0.5 in the reference) within 6 px of ONNX Runtime's. */
static void
test_yolov8n_pose (void)
{
  g_autofree gchar *xml = test_shared_model ("yolov8n-pose-int8/yolov8n-pose.xml");
  if (!xml)
    return;
  g_autofree gchar *ref_path = test_shared_path ("reference/yolov8n-pose-int8.astronaut.output.f32");
  g_autofree float *ref = read_f32 (ref_path, 56 * 8400);
  g_autofree float *out = run_shared_model ("yolov8n-pose-int8/yolov8n-pose.xml",
      "reference/yolov8n-int8.astronaut.input.f32", FALSE, 56 * 8400);
  gint a = 0, b = 0;
  for (gint i = 1; i < 8400; i++) {
    a = out[4 * 8400 + i] > out[4 * 8400 + a] ? i : a;
    b = ref[4 * 8400 + i] > ref[4 * 8400 + b] ? i : b;
  }
  float bg[4], br[4];
  const float *bo[2] = { out, ref };
  float *bb[2] = { bg, br };
  gint an[2] = { a, b };
  for (gint k = 0; k < 2; k++) {
    const float *o = bo[k];
    gint x = an[k];
    bb[k][0] = o[x] - o[2 * 8400 + x] / 2;
    bb[k][1] = o[8400 + x] - o[3 * 8400 + x] / 2;
    bb[k][2] = o[x] + o[2 * 8400 + x] / 2;
    bb[k][3] = o[8400 + x] + o[3 * 8400 + x] / 2;
  }
  g_test_message ("yolov8n-pose-int8: score %.4f (reference %.4f) IoU %.3f", out[4 * 8400 + a],
      ref[4 * 8400 + b], iou (bg, br));
  g_assert_cmpfloat (fabsf (out[4 * 8400 + a] - ref[4 * 8400 + b]), <=, 0.01f);
  g_assert_cmpfloat (iou (bg, br), >=, 0.9f);
  for (gint k = 0; k < 17; k++) {
    if (ref[(7 + 3 * k) * 8400 + b] <= 0.5f)
      continue;
    for (gint c = 0; c < 2; c++)
      g_assert_cmpfloat (fabsf (out[(5 + 3 * k + c) * 8400 + a] - ref[(5 + 3 * k + c) * 8400 + b]),
          <=, 6.0f);
  }
}

/* ---- which layers the pass takes: the cost rule ------------------------------- */

typedef struct {
  gint64 c_in, c_out;
  gint k, stride;
} ChainLayer;

/* x → FQ → conv → FQ → conv → FQ → conv → Result, @n layers of @L on a
 * @h × @w input. */
static M2iIrModel *
chain_model (const ChainLayer *L, gint n, gint64 h, gint64 w)
{
  TestIr *b = test_ir_new (11);
  M2iShape in = TEST_SHAPE (1, L[0].c_in, h, w);
  gint x = test_ir_parameter (b, "x", M2I_ET_F32, &in);
  for (gint i = 0; i < n; i++) {
    gint64 pad = L[i].k / 2;
    gint64 oh = (h + 2 * pad - L[i].k) / L[i].stride + 1;
    gint64 ow = (w + 2 * pad - L[i].k) / L[i].stride + 1;
    M2iShape ws = TEST_SHAPE (L[i].c_out, L[i].c_in, L[i].k, L[i].k);
    M2iShape out = TEST_SHAPE (1, L[i].c_out, oh, ow);
    g_autofree float *wt = g_new (float, m2i_shape_numel (&ws));
    x = conv (b, fq (b, x, &in, 256, 0.0f, 2.55f), weights (b, &ws, W_MULTIPLY, wt), (gint) pad,
        L[i].stride, &out);
    in = out;
    h = oh;
    w = ow;
  }
  test_ir_result (b, x);
  GError *error = NULL;
  M2iIrModel *model = test_ir_load (b, &error);
  g_assert_no_error (error);
  test_ir_free (b);
  return model;
}

/* The convolution steps of @cm in order: their geometry and f32 mode (of
 * an emulation compile), or whether they run on integers. */
static gint
conv_steps (const M2iIrCompiledModel *cm, M2iKConvGeom *g, M2iKF32ConvMode *mode,
    gboolean *int8)
{
  gint n = 0;
  for (guint i = 0; i < cm->steps->len; i++) {
    CmStep *s = &g_array_index (cm->steps, CmStep, i);
    if (s->kernel == &ir_kernel_conv_int8) {
      int8[n++] = TRUE;
    } else if (s->kernel == &ir_kernel_convolution) {
      if (g) {
        g_assert (ir_k_conv_geometry (&s->ctx, &g[n]));
        mode[n] = ir_k_conv_uses_winograd (&s->ctx) ? M2I_K_F32_CONV_WINOGRAD :
            ir_k_conv_uses_direct (&s->ctx) ? M2I_K_F32_CONV_DIRECT : M2I_K_F32_CONV_GEMM;
      }
      int8[n++] = FALSE;
    }
  }
  return n;
}

/* The estimated time of the chain with layer i on integers where bit i of
 * @on is set, written out for a chain: FakeQuantize i (before layer i)
 * runs unless layer i reads its input itself (on integers), or layer
 * i - 1 writes it (on integers: codes when layer i is too, else values). */
static double
chain_cost (const M2iKConvGeom *g, const M2iKF32ConvMode *mode, gint n, guint on)
{
  double t = 0.0;
  for (gint i = 0; i < n; i++) {
    gboolean me = on >> i & 1, prev = i > 0 && (on >> (i - 1) & 1), next = on >> (i + 1) & 1;
    gboolean last = i == n - 1;
    if (!me && !prev)
      t += ir_k_fq_pass_cost (g[i].batch * g[i].c_in * g[i].h * g[i].w);
    if (me)
      t += ir_k_conv_int8_cost (&g[i], prev, last ? M2I_K_I8_OUT_F32 : next ?
          M2I_K_I8_OUT_CODES : M2I_K_I8_OUT_VALUES);
    else
      t += ir_k_conv_f32_cost (&g[i], mode[i]);
  }
  return t;
}

/* Which layers go onto integers is the choice of the smallest estimated
 * time, FakeQuantize passes counted: checked against every choice of
 * chains of thin and wide layers. No layer without a vector tile (the C
 * tile is slower than the f32 kernel everywhere); every layer that can
 * with M2I_INT8=all. */
static void
test_cost_rule (void)
{
  M2iCpuFlags f = m2i_cpu_flags (), level = ir_k_level (M2I_KERNELS_INT8);
  gboolean vector = (level & (M2I_CPU_AVX512F | M2I_CPU_AVX2)) && (f & M2I_CPU_AVX2) &&
      (f & M2I_CPU_FMA);
  static const ChainLayer chains[][3] = {
    { { 32, 8, 1, 1 }, { 8, 32, 1, 1 }, { 32, 32, 1, 1 } },      /* thin, then wide */
    { { 3, 16, 3, 2 }, { 16, 64, 3, 1 }, { 64, 64, 3, 1 } },
    { { 64, 64, 1, 1 }, { 64, 8, 1, 1 }, { 8, 64, 3, 1 } },
    { { 8, 8, 3, 1 }, { 8, 8, 1, 1 }, { 8, 8, 3, 2 } },
  };
  static const gint64 sizes[][2] = { { 24, 28 }, { 96, 80 } };
  for (gint forced = 0; forced < 2; forced++)
    for (guint c = 0; c < G_N_ELEMENTS (chains); c++)
      for (guint z = 0; z < G_N_ELEMENTS (sizes); z++) {
        if (forced)
          g_setenv ("M2I_INT8", "all", TRUE);
        else
          g_unsetenv ("M2I_INT8");
        M2iIrModel *model = chain_model (chains[c], 3, sizes[z][0], sizes[z][1]);
        Run e = run_new (model, TRUE, 1), q = run_new (model, FALSE, 1);
        M2iKConvGeom g[3];
        M2iKF32ConvMode mode[3];
        gboolean int8[3];
        g_assert_cmpint (conv_steps (e.cm, g, mode, int8), ==, 3);
        g_assert_cmpint (conv_steps (q.cm, NULL, NULL, int8), ==, 3);
        guint got = int8[0] | int8[1] << 1 | int8[2] << 2;
        if (forced) {
          g_assert_cmpuint (got, ==, 7);
        } else if (!vector) {
          g_assert_cmpuint (got, ==, 0);
        } else {
          double best = G_MAXDOUBLE;
          for (guint on = 0; on < 8; on++)
            best = MIN (best, chain_cost (g, mode, 3, on));
          double t = chain_cost (g, mode, 3, got);
          if (t > best * (1 + 1e-6))
            g_error ("chain %u at %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT ": layers %u on "
                "integers, estimated %.0f ns; the best choice %.0f ns", c, sizes[z][0],
                sizes[z][1], got, t, best);
        }
        run_free (&e);
        run_free (&q);
        m2i_ir_model_unref (model);
      }
  g_setenv ("M2I_INT8", "all", TRUE);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  /* the small models test the integer kernels through the pass at every
   * level: every layer that can be is folded, also where the f32 kernel
   * would be faster (test_cost_rule checks that choice) */
  g_setenv ("M2I_INT8", "all", TRUE);
  g_test_add_func ("/ir/int8/single-layer", test_single);
  g_test_add_func ("/ir/int8/chain", test_chain);
  g_test_add_func ("/ir/int8/grid", test_grid);
  g_test_add_func ("/ir/int8/cost-rule", test_cost_rule);
  g_test_add_func ("/ir/int8/yolov8n-detections", test_yolov8n_detections);
  g_test_add_func ("/ir/int8/yolov8n-pose", test_yolov8n_pose);
  return g_test_run ();
}
