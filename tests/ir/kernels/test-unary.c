/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The element-wise unary kernels (unary.c: Swish, HSwish, HSigmoid,
 * HardSigmoid, Mish, Gelu-2/-7, Elu, Selu, SoftPlus, SoftSign, Tanh, Erf,
 * Abs, Negative, Sign, Floor, Ceiling, Round-5, Sqrt, Log and the
 * trigonometric ones) against PyTorch / NumPy float64 values rounded once
 * (tests/data/ir-kernels/gen-ops.py) over a sweep of 700 inputs with the
 * edges of e^x; vmath.h's e^x against double precision over its whole
 * range; Swish and Sigmoid bit for bit vmath.h's scalar functions at this
 * run's level; integers, special values, run-time parameters, threads, in
 * place, and errors. */
#include "kernel-test.h"
#include <ir/kernels/vmath.h>

/* The rows of un_y, in gen-ops.py's UNARY_OPS order. */
typedef struct {
  const char *name;
  const M2iOpKernel *kernel;
  const char *version;
  const char *attr, *value;            /* one attribute, or NULL */
  gint n_params;                       /* constant f32 scalar inputs */
  float params[2];
  double rtol, atol;
} UnaryCase;

/* Tolerances: libm's f32 functions are within an ulp or two (rtol 2.5e-7);
 * the vector exponential within 2 ulp, so the ops built on it within ~4
 * (rtol 5e-7); atol covers results that cancel to nearly 0 in f32
 * (Gelu's 1 + erf/tanh, Elu's e^x − 1 near 0). */
static const UnaryCase cases[] = {
  { "swish", &ir_kernel_swish, "opset4", NULL, NULL, 0, { 0 }, 5e-7, 1e-37 },
  /* β·x rounds in f32 first: its error grows with |βx| (12·2^-24 here) */
  { "swish_b", &ir_kernel_swish, "opset4", NULL, NULL, 1, { 0.75f }, 1.2e-6, 1e-37 },
  { "hswish", &ir_kernel_hswish, "opset4", NULL, NULL, 0, { 0 }, 2.5e-7, 0 },
  { "hsigmoid", &ir_kernel_hsigmoid, "opset5", NULL, NULL, 0, { 0 }, 2.5e-7, 0 },
  { "hard_sigmoid", &ir_kernel_hard_sigmoid, "opset1", NULL, NULL, 2, { 0.2f, 0.5f }, 2.5e-7, 1e-7 },
  { "mish", &ir_kernel_mish, "opset4", NULL, NULL, 0, { 0 }, 6e-7, 1e-37 },
  { "gelu_erf", &ir_kernel_gelu, "opset2", NULL, NULL, 0, { 0 }, 5e-7, 2e-7 },
  { "gelu_tanh", &ir_kernel_gelu, "opset7", "approximation_mode", "tanh", 0, { 0 }, 5e-7, 1e-6 },
  { "elu", &ir_kernel_elu, "opset1", "alpha", "0.7", 0, { 0 }, 5e-7, 1e-7 },
  { "selu", &ir_kernel_selu, "opset1", NULL, NULL, 2, { 1.6732632423543772f, 1.0507009873554805f },
    5e-7, 2e-7 },
  { "softplus", &ir_kernel_softplus, "opset4", NULL, NULL, 0, { 0 }, 2.5e-7, 1e-37 },
  { "softsign", &ir_kernel_softsign, "opset9", NULL, NULL, 0, { 0 }, 2.5e-7, 0 },
  { "tanh", &ir_kernel_tanh, "opset1", NULL, NULL, 0, { 0 }, 2.5e-7, 0 },
  { "erf", &ir_kernel_erf, "opset1", NULL, NULL, 0, { 0 }, 2.5e-7, 0 },
  { "abs", &ir_kernel_abs, "opset1", NULL, NULL, 0, { 0 }, 0, 0 },
  { "negative", &ir_kernel_negative, "opset1", NULL, NULL, 0, { 0 }, 0, 0 },
  { "sign", &ir_kernel_sign, "opset1", NULL, NULL, 0, { 0 }, 0, 0 },
  { "floor", &ir_kernel_floor, "opset1", NULL, NULL, 0, { 0 }, 0, 0 },
  { "ceiling", &ir_kernel_ceiling, "opset1", NULL, NULL, 0, { 0 }, 0, 0 },
  { "round_even", &ir_kernel_round, "opset5", "mode", "half_to_even", 0, { 0 }, 0, 0 },
  { "round_away", &ir_kernel_round, "opset5", "mode", "half_away_from_zero", 0, { 0 }, 0, 0 },
  { "sqrt", &ir_kernel_sqrt, "opset1", NULL, NULL, 0, { 0 }, 0, 0 },
  { "log", &ir_kernel_log, "opset1", NULL, NULL, 0, { 0 }, 2.5e-7, 0 },
  { "sin", &ir_kernel_sin, "opset1", NULL, NULL, 0, { 0 }, 2.5e-7, 0 },
  { "cos", &ir_kernel_cos, "opset1", NULL, NULL, 0, { 0 }, 2.5e-7, 0 },
  { "tan", &ir_kernel_tan, "opset1", NULL, NULL, 0, { 0 }, 2.5e-7, 0 },
  { "asin", &ir_kernel_asin, "opset1", NULL, NULL, 0, { 0 }, 2.5e-7, 0 },
  { "acos", &ir_kernel_acos, "opset1", NULL, NULL, 0, { 0 }, 2.5e-7, 0 },
  { "atan", &ir_kernel_atan, "opset1", NULL, NULL, 0, { 0 }, 2.5e-7, 0 },
  { "sinh", &ir_kernel_sinh, "opset1", NULL, NULL, 0, { 0 }, 2.5e-7, 0 },
  { "cosh", &ir_kernel_cosh, "opset1", NULL, NULL, 0, { 0 }, 2.5e-7, 0 },
  { "asinh", &ir_kernel_asinh, "opset3", NULL, NULL, 0, { 0 }, 2.5e-7, 0 },
  { "acosh", &ir_kernel_acosh, "opset3", NULL, NULL, 0, { 0 }, 2.5e-7, 0 },
  { "atanh", &ir_kernel_atanh, "opset3", NULL, NULL, 0, { 0 }, 2.5e-7, 0 },
};

static KTest *
unary (const UnaryCase *c, M2iElementType type, M2iShape shape, gconstpointer x)
{
  KTest *t = kt_new (c->kernel, c->version);
  if (c->attr)
    kt_attr (t, c->attr, c->value);
  kt_input (t, type, shape, x, FALSE);
  for (gint k = 0; k < c->n_params; k++)
    kt_input (t, M2I_ET_F32, SCALAR, &c->params[k], TRUE);
  return t;
}

static void
test_vectors (void)
{
  KtArray *x = kt_load ("un_x"), *y = kt_load ("un_y");
  gint64 n = m2i_shape_numel (&x->shape);
  g_assert_cmpint (y->shape.dims[0], ==, G_N_ELEMENTS (cases) + 1);   /* + exp */
  g_assert_cmpint (y->shape.dims[1], ==, n);
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    KTest *t = unary (&cases[i], M2I_ET_F32, x->shape, x->data);
    kt_run (t, 1);
    kt_assert_close (cases[i].name, kt_out_f32 (t, 0), (const float *) y->data + i * n, n,
        cases[i].atol, cases[i].rtol);
    kt_free (t);
  }
  /* The same inputs through the shared exponential. */
  const float *xs = x->data, *want = (const float *) y->data + G_N_ELEMENTS (cases) * n;
  for (gint64 i = 0; i < n; i++) {
    float e = ir_vm_exp (xs[i]);
    kt_assert_close ("ir_vm_exp", &e, &want[i], 1, 0, 2.5e-7);
  }
  kt_array_free (x);
  kt_array_free (y);
}

/* ir_vm_exp on 2^21 points over its whole range, against exp() in double
 * rounded to f32: at most 2 ulp apart (counted in the spacing of f32 at
 * the true value, denormals included). */
static void
test_exp_accuracy (void)
{
  gint worst = 0;
  float at = 0;
  const gint n = 1 << 21;
  for (gint i = 0; i <= n; i++) {
    float x = -104.0f + (88.72f + 104.0f) * (float) i / (float) n;
    double want = exp ((double) x);
    float got = ir_vm_exp (x);
    double ulp = nextafterf ((float) want, INFINITY) - (float) want;
    if (ulp == 0 || isinf (ulp))
      ulp = 1.4e-45;
    gint err = (gint) ceil (fabs (got - want) / ulp - 0.5);
    if (err > worst) {
      worst = err;
      at = x;
    }
  }
  if (worst > 2)
    g_error ("ir_vm_exp is %d ulp off at x = %.9g", worst, at);
  g_assert_cmpfloat (ir_vm_exp (0.0f), ==, 1.0f);
  g_assert_true (isinf (ir_vm_exp (88.8f)));
  g_assert_true (isinf (ir_vm_exp (INFINITY)));
  g_assert_cmpfloat (ir_vm_exp (-104.0f), ==, 0.0f);
  g_assert_cmpfloat (ir_vm_exp (-INFINITY), ==, 0.0f);
  g_assert_true (isnan (ir_vm_exp (NAN)));
  g_assert_cmpfloat (ir_vm_exp (-100.0f), >, 0.0f);        /* a denormal, not 0 */
}

/* NaN and infinities by the formulas (the sweep has none). */
static void
test_special (void)
{
  const float x[] = { NAN, INFINITY, -INFINITY, -0.0f };
  static const struct { const char *name; float want[4]; } expect[] = {
    /* x / (1 + e^-x): NaN, inf / 1, -inf · 0 = NaN (torch's silu too), -0 */
    { "swish", { NAN, INFINITY, NAN, -0.0f } },
    { "hswish", { NAN, INFINITY, NAN, -0.0f } },
    { "hsigmoid", { NAN, 1.0f, 0.0f, 0.5f } },
    { "mish", { NAN, INFINITY, NAN, -0.0f } },
    { "elu", { NAN, INFINITY, -0.7f, 0.0f } },          /* 0.7·(e^-0 − 1) = +0 */
    { "softplus", { NAN, INFINITY, 0.0f, 0.69314718f } },
    { "softsign", { NAN, NAN, NAN, -0.0f } },
    { "sign", { 0.0f, 1.0f, -1.0f, 0.0f } },          /* (0 < x) − (x < 0) */
    { "abs", { NAN, INFINITY, INFINITY, 0.0f } },
    { "negative", { NAN, -INFINITY, INFINITY, 0.0f } },
  };
  for (guint e = 0; e < G_N_ELEMENTS (expect); e++) {
    const UnaryCase *c = NULL;
    for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
      if (!strcmp (cases[i].name, expect[e].name))
        c = &cases[i];
    g_assert_nonnull (c);
    KTest *t = unary (c, M2I_ET_F32, SHAPE (4), x);
    kt_run (t, 1);
    const float *y = kt_out_f32 (t, 0);
    for (gint k = 0; k < 4; k++) {
      float w = expect[e].want[k];
      if (isnan (w) ? !isnan (y[k]) : !(fabsf (y[k] - w) <= 1e-7f || y[k] == w) ||
          (w == 0 && signbit (w) != signbit (y[k]) && strcmp (c->name, "sign")))
        g_error ("%s(%g) = %g, expected %g", c->name, x[k], y[k], w);
    }
    kt_free (t);
  }
  /* Round-5's halves. */
  const float h[] = { 0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 2.4999998f };
  const float even[] = { 0, 2, 2, -0.0f, -2, -2, 2 }, away[] = { 1, 2, 3, -1, -2, -3, 2 };
  for (gint mode = 0; mode < 2; mode++) {
    KTest *t = kt_new (&ir_kernel_round, "opset5");
    kt_attr (t, "mode", mode ? "half_away_from_zero" : "half_to_even");
    kt_input (t, M2I_ET_F32, SHAPE (7), h, FALSE);
    kt_run (t, 1);
    kt_assert_close ("round", kt_out_f32 (t, 0), mode ? away : even, 7, 0, 0);
    kt_free (t);
  }
}

/* Abs, Negative, Sign, Floor, Ceiling, Round on i32 and i64, MIN included
 * (Abs and Negative wrap to MIN, as two's complement does). */
static void
test_integers (void)
{
  static const gint32 x32[] = { G_MININT32, -7, -1, 0, 1, 9, G_MAXINT32 };
  static const gint64 x64[] = { G_MININT64, -7, -1, 0, 1, 9, G_MAXINT64 };
  static const struct {
    const M2iOpKernel *k;
    const char *version;
    gint64 want[7];
  } ops[] = {
    { &ir_kernel_abs, "opset1", { G_MININT64, 7, 1, 0, 1, 9, G_MAXINT64 } },
    { &ir_kernel_negative, "opset1", { G_MININT64, 7, 1, 0, -1, -9, -G_MAXINT64 } },
    { &ir_kernel_sign, "opset1", { -1, -1, -1, 0, 1, 1, 1 } },
    { &ir_kernel_floor, "opset1", { G_MININT64, -7, -1, 0, 1, 9, G_MAXINT64 } },
    { &ir_kernel_ceiling, "opset1", { G_MININT64, -7, -1, 0, 1, 9, G_MAXINT64 } },
    { &ir_kernel_round, "opset5", { G_MININT64, -7, -1, 0, 1, 9, G_MAXINT64 } },
  };
  for (guint i = 0; i < G_N_ELEMENTS (ops); i++) {
    for (gint wide = 0; wide < 2; wide++) {
      KTest *t = kt_new (ops[i].k, ops[i].version);
      kt_input (t, wide ? M2I_ET_I64 : M2I_ET_I32, SHAPE (7), wide ? (gconstpointer) x64 :
          (gconstpointer) x32, FALSE);
      kt_run (t, 1);
      g_assert_cmpint (t->outputs[0].type, ==, wide ? M2I_ET_I64 : M2I_ET_I32);
      for (gint k = 0; k < 7; k++) {
        gint64 got = wide ? ((gint64 *) t->outputs[0].data)[k] : ((gint32 *) t->outputs[0].data)[k];
        gint64 want = ops[i].want[k];
        if (!wide)   /* the i32 column: MIN and MAX are the 32-bit ones */
          want = k == 0 ? (i == 2 ? -1 : G_MININT32) :
              k == 6 ? (i == 2 ? 1 : i == 1 ? -G_MAXINT32 : G_MAXINT32) : want;
        if (got != want)
          g_error ("%s on %s element %d: %" G_GINT64_FORMAT ", expected %" G_GINT64_FORMAT,
              ops[i].k->type, wide ? "i64" : "i32", k, got, want);
      }
      kt_free (t);
    }
  }
}

/* Swish's beta known only at run time; a large tensor over threads; in
 * place (output = input). */
static void
test_runtime_and_threads (void)
{
  const gint64 n = 3 * 70000;
  float *x = g_new (float, n), *want = g_new (float, n);
  kt_fill (x, n, 7, -9, 9);
  const float beta = 1.7f;
  /* the spec's formula in f32's product β·x, the rest in double */
  for (gint64 i = 0; i < n; i++)
    want[i] = (float) ((double) x[i] / (1.0 + exp (-(double) (beta * x[i]))));
  KTest *t = kt_new (&ir_kernel_swish, "opset4");
  kt_input (t, M2I_ET_F32, SHAPE (3, n / 3), x, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (1), &beta, FALSE);         /* not constant */
  t->ctx.n_threads = 3;
  kt_run (t, 1);
  kt_assert_close ("swish beta at run time", kt_out_f32 (t, 0), want, n, 1e-37, 5e-7);
  kt_free (t);

  /* HSwish in place over threads, against a plain loop. */
  for (gint64 i = 0; i < n; i++)
    want[i] = x[i] * fminf (fmaxf (x[i] + 3.0f, 0.0f), 6.0f) / 6.0f;
  t = kt_new (&ir_kernel_hswish, "opset4");
  kt_input (t, M2I_ET_F32, SHAPE (n), x, FALSE);
  GError *error = NULL;
  g_assert_true (kt_infer (t, 1, &error));
  t->outputs[0].data = x;
  t->ctx.n_threads = 2;
  g_assert_true (kt_execute (t, &error));
  kt_assert_close ("hswish in place", x, want, n, 0, 0);
  kt_free (t);

  /* Empty and one-element tensors. */
  const float one = -2.0f;
  t = kt_new (&ir_kernel_mish, "opset4");
  kt_input (t, M2I_ET_F32, SHAPE (0, 4), x, FALSE);
  kt_run (t, 1);
  g_assert_cmpint (m2i_shape_numel (&t->outputs[0].shape), ==, 0);
  kt_free (t);
  t = kt_new (&ir_kernel_mish, "opset4");
  kt_input (t, M2I_ET_F32, SCALAR, &one, FALSE);
  kt_run (t, 1);
  const float mish2 = (float) (-2.0 * tanh (log1p (exp (-2.0))));
  kt_assert_close ("mish scalar", kt_out_f32 (t, 0), &mish2, 1, 0, 5e-7);
  kt_free (t);
  g_free (x);
  g_free (want);
}

/* Swish and Sigmoid at this run's instruction set (AVX-512 intrinsics,
 * vmath-avx512.h, or vmath.h's loops compiled per level) give vmath.h's
 * scalar results bit for bit — which the fused Swish of a convolution
 * relies on — over a sweep of every 2039th bit pattern: NaNs, infinities,
 * denormals, both signs, and the range where e^x is denormal. */
static void
test_bits (void)
{
  const gint64 n = (G_GINT64_CONSTANT (1) << 32) / 2039 + 1;
  float *x = g_new (float, n), *want = g_new (float, n);
  for (gint64 i = 0; i < n; i++) {
    guint32 u = (guint32) (i * 2039);
    memcpy (&x[i], &u, sizeof u);
  }
  const float betas[] = { 1.0f, 0.75f, -1.5f };
  for (guint b = 0; b <= G_N_ELEMENTS (betas); b++) {
    gboolean sigmoid = b == G_N_ELEMENTS (betas);
    for (gint64 i = 0; i < n; i++)
      want[i] = sigmoid ? ir_vm_sigmoid (x[i]) : ir_vm_swish (x[i], betas[b]);
    KTest *t = kt_new (sigmoid ? &ir_kernel_sigmoid : &ir_kernel_swish, sigmoid ? "opset1" : "opset4");
    kt_input (t, M2I_ET_F32, SHAPE (n), x, FALSE);
    if (!sigmoid)
      kt_input (t, M2I_ET_F32, SCALAR, &betas[b], TRUE);
    kt_run (t, 1);
    const float *y = kt_out_f32 (t, 0);
    for (gint64 i = 0; i < n; i++)
      if (memcmp (&y[i], &want[i], sizeof (float)) && !(isnan (y[i]) && isnan (want[i])))
        g_error ("%s (%a) = %a, vmath.h's scalar function gives %a",
            sigmoid ? "sigmoid" : "swish", (double) x[i], (double) y[i], (double) want[i]);
    kt_free (t);
  }
  g_free (x);
  g_free (want);
}

static void
test_errors (void)
{
  static float buf[8];
  KTest *t = kt_new (&ir_kernel_elu, "opset1");
  kt_input (t, M2I_ET_F32, SHAPE (4), buf, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_MALFORMED, "attribute alpha is required");
  kt_free (t);

  t = kt_new (&ir_kernel_swish, "opset4");
  kt_input (t, M2I_ET_F32, SHAPE (4), buf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (2), buf, TRUE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "beta (input 1) must hold one value");
  kt_free (t);

  t = kt_new (&ir_kernel_swish, "opset4");
  kt_input (t, M2I_ET_I32, SHAPE (4), buf, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_UNSUPPORTED, "element type i32");
  kt_free (t);

  t = kt_new (&ir_kernel_round, "opset5");
  kt_attr (t, "mode", "half_up");
  kt_input (t, M2I_ET_F32, SHAPE (4), buf, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_UNSUPPORTED, "half_up");
  kt_free (t);

  t = kt_new (&ir_kernel_gelu, "opset7");
  kt_attr (t, "approximation_mode", "sigmoid");
  kt_input (t, M2I_ET_F32, SHAPE (4), buf, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_UNSUPPORTED, "sigmoid");
  kt_free (t);

  t = kt_new (&ir_kernel_selu, "opset1");
  kt_input (t, M2I_ET_F32, SHAPE (4), buf, FALSE);
  kt_input (t, M2I_ET_F32, SCALAR, buf, TRUE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "expects 3 inputs");
  kt_free (t);

  t = kt_new (&ir_kernel_selu, "opset1");
  kt_input (t, M2I_ET_F32, SHAPE (4), buf, FALSE);
  kt_input (t, M2I_ET_F32, SCALAR, buf, FALSE);
  kt_input (t, M2I_ET_F32, SCALAR, buf, TRUE);
  kt_expect_error (t, 1, M2I_ERROR_UNSUPPORTED, "alpha (input 1) must be a constant");
  kt_free (t);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/kernels/unary/vectors", test_vectors);
  g_test_add_func ("/kernels/unary/exp-accuracy", test_exp_accuracy);
  g_test_add_func ("/kernels/unary/special", test_special);
  g_test_add_func ("/kernels/unary/integers", test_integers);
  g_test_add_func ("/kernels/unary/runtime-threads", test_runtime_and_threads);
  g_test_add_func ("/kernels/unary/bits", test_bits);
  g_test_add_func ("/kernels/unary/errors", test_errors);
  return g_test_run ();
}
