/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Add, Subtract, Multiply, Divide (numpy and none broadcasting, f32/i32/i64,
 * Divide's m_pythondivision), ReLU, Clamp, Sigmoid, Exp and PReLU against
 * NumPy/PyTorch vectors, values from the spec by hand, and large shapes
 * (threaded rows) against a plain loop. */
#include "kernel-test.h"

static KTest *
binary (const M2iOpKernel *k, const KtArray *a, const KtArray *b, gboolean b_const)
{
  KTest *t = kt_new (k, "opset1");
  kt_input (t, a->type, a->shape, a->data, FALSE);
  kt_input (t, b->type, b->shape, b->data, b_const);
  return t;
}

static void
test_float_vectors (void)
{
  static const struct { const char *name; const M2iOpKernel *k; } cases[] = {
    { "add_bcast", &ir_kernel_add }, { "sub_chan", &ir_kernel_subtract },
    { "mul_scalar", &ir_kernel_multiply }, { "div_left", &ir_kernel_divide },
    { "div_same", &ir_kernel_divide },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    g_autofree gchar *an = g_strdup_printf ("%s_a", cases[i].name);
    g_autofree gchar *bn = g_strdup_printf ("%s_b", cases[i].name);
    g_autofree gchar *yn = g_strdup_printf ("%s_y", cases[i].name);
    KtArray *a = kt_load (an), *b = kt_load (bn), *y = kt_load (yn);
    for (gint swap = 0; swap < 1 + (cases[i].k != &ir_kernel_divide &&
            cases[i].k != &ir_kernel_subtract); swap++) {
      /* Commutative ops also with the operands swapped. */
      KTest *t = swap ? binary (cases[i].k, b, a, FALSE) : binary (cases[i].k, a, b, TRUE);
      kt_run (t, 1);
      g_assert_true (m2i_shape_equal (&t->outputs[0].shape, &y->shape));
      kt_assert_close (cases[i].name, kt_out_f32 (t, 0), y->data,
          m2i_shape_numel (&y->shape), 0, 0);
      kt_free (t);
    }
    kt_array_free (a);
    kt_array_free (b);
    kt_array_free (y);
  }
}

/* Bias add and friends on a squeezenet-sized tensor: rows split over
 * threads; expected values from a plain loop. */
static void
test_large (void)
{
  const gint64 c = 64, hw = 56 * 56;
  float *a = g_new (float, c * hw), *b = g_new (float, c), *want = g_new (float, c * hw);
  kt_fill (a, c * hw, 3, -4, 4);
  kt_fill (b, c, 4, -1, 1);
  for (gint64 i = 0; i < c * hw; i++)
    want[i] = a[i] + b[i / hw];
  KTest *t = kt_new (&ir_kernel_add, "opset1");
  kt_input (t, M2I_ET_F32, SHAPE (1, c, 56, 56), a, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (1, c, 1, 1), b, TRUE);
  kt_run (t, 1);
  kt_assert_close ("bias add", kt_out_f32 (t, 0), want, c * hw, 0, 0);
  kt_free (t);

  /* One long row (same shapes), split in pieces. */
  float *a2 = g_new (float, c * hw);
  kt_fill (a2, c * hw, 5, 0.5f, 2);
  for (gint64 i = 0; i < c * hw; i++)
    want[i] = a[i] / a2[i];
  t = kt_new (&ir_kernel_divide, "opset1");
  kt_attr (t, "auto_broadcast", "none");
  kt_input (t, M2I_ET_F32, SHAPE (c * hw), a, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (c * hw), a2, FALSE);
  t->ctx.n_threads = 3;
  kt_run (t, 1);
  kt_assert_close ("long divide", kt_out_f32 (t, 0), want, c * hw, 0, 0);
  kt_free (t);

  /* ReLU over the same data, threaded. */
  for (gint64 i = 0; i < c * hw; i++)
    want[i] = a[i] > 0 ? a[i] : 0;
  t = kt_new (&ir_kernel_relu, "opset1");
  kt_input (t, M2I_ET_F32, SHAPE (1, c, 56, 56), a, FALSE);
  kt_run (t, 1);
  kt_assert_close ("relu", kt_out_f32 (t, 0), want, c * hw, 0, 0);
  kt_free (t);
  g_free (a);
  g_free (a2);
  g_free (b);
  g_free (want);
}

static void
test_integers (void)
{
  KtArray *a = kt_load ("idiv_a"), *b = kt_load ("idiv_b");
  KtArray *fl = kt_load ("idiv_floor"), *tr = kt_load ("idiv_trunc");
  for (gint python = 0; python < 4; python++) {
    KTest *t = binary (&ir_kernel_divide, a, b, FALSE);
    /* IR files' spelling (m_pythondiv) and the spec's */
    if (python != 1)
      kt_attr (t, python < 2 ? "m_pythondivision" : "m_pythondiv", python == 3 ? "true" : "false");
    kt_run (t, 1);
    g_assert_cmpmem (t->outputs[0].data, 24 * 4, (python % 2 ? fl : tr)->data, 24 * 4);
    kt_free (t);
  }
  kt_array_free (a);
  kt_array_free (b);
  kt_array_free (fl);
  kt_array_free (tr);

  a = kt_load ("imul64_a");
  b = kt_load ("imul64_b");
  KtArray *y = kt_load ("imul64_y");
  KTest *t = binary (&ir_kernel_multiply, a, b, TRUE);
  kt_run (t, 1);
  g_assert_cmpmem (t->outputs[0].data, 15 * 8, y->data, 15 * 8);
  kt_free (t);
  kt_array_free (a);
  kt_array_free (b);
  kt_array_free (y);

  /* Wrap-around, and MIN / -1 (undefined in C, two's complement here). */
  static const gint32 x[] = { G_MAXINT32, G_MININT32, 7, -7 };
  static const gint32 one[] = { 1, -1, 2, 2 };
  t = kt_new (&ir_kernel_add, "opset1");
  kt_input (t, M2I_ET_I32, SHAPE (4), x, FALSE);
  kt_input (t, M2I_ET_I32, SHAPE (4), one, FALSE);
  kt_run (t, 1);
  const gint32 *r = t->outputs[0].data;
  g_assert_cmpint (r[0], ==, G_MININT32);
  g_assert_cmpint (r[1], ==, G_MAXINT32);
  kt_free (t);
  t = kt_new (&ir_kernel_divide, "opset1");
  kt_input (t, M2I_ET_I32, SHAPE (4), x, FALSE);
  kt_input (t, M2I_ET_I32, SHAPE (4), one, FALSE);
  kt_run (t, 1);
  r = t->outputs[0].data;
  g_assert_cmpint (r[0], ==, G_MAXINT32);
  g_assert_cmpint (r[1], ==, G_MININT32);
  g_assert_cmpint (r[2], ==, 3);
  g_assert_cmpint (r[3], ==, -4);                 /* floor (-3.5) */
  kt_free (t);

  /* Division by zero is a run-time error naming the layer. */
  static const gint32 zero[] = { 1, 0, 1, 1 };
  t = kt_new (&ir_kernel_divide, "opset1");
  kt_input (t, M2I_ET_I32, SHAPE (4), x, FALSE);
  kt_input (t, M2I_ET_I32, SHAPE (4), zero, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "division by zero");
  kt_free (t);
}

static void
test_binary_errors (void)
{
  static float buf[64];
  KTest *t = kt_new (&ir_kernel_add, "opset1");
  kt_input (t, M2I_ET_F32, SHAPE (2, 3), buf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (4, 3), buf, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "do not broadcast");
  kt_free (t);

  t = kt_new (&ir_kernel_multiply, "opset1");
  kt_attr (t, "auto_broadcast", "none");
  kt_input (t, M2I_ET_F32, SHAPE (2, 3), buf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (1, 3), buf, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "equal shapes");
  kt_free (t);

  /* pdpd is supported (test-binary.c); an unknown mode is not. */
  t = kt_new (&ir_kernel_subtract, "opset1");
  kt_attr (t, "auto_broadcast", "bidirectional");
  kt_input (t, M2I_ET_F32, SHAPE (2, 3), buf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (2, 3), buf, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_UNSUPPORTED, "bidirectional");
  kt_free (t);

  t = kt_new (&ir_kernel_add, "opset1");
  kt_input (t, M2I_ET_F32, SHAPE (2, 3), buf, FALSE);
  kt_input (t, M2I_ET_I64, SHAPE (2, 3), buf, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "different element types");
  kt_free (t);

  t = kt_new (&ir_kernel_add, "opset1");
  kt_input (t, M2I_ET_U8, SHAPE (2, 3), buf, FALSE);
  kt_input (t, M2I_ET_U8, SHAPE (2, 3), buf, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_UNSUPPORTED, "element type u8");
  kt_free (t);

  t = kt_new (&ir_kernel_divide, "opset1");
  kt_input (t, M2I_ET_F32, SHAPE (2, 3), buf, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "expects 2 inputs");
  kt_free (t);
}

static void
test_activation_vectors (void)
{
  static const struct { const char *name; const M2iOpKernel *k; double rtol; } cases[] = {
    { "act_sigmoid", &ir_kernel_sigmoid, 2e-7 }, { "act_exp", &ir_kernel_exp, 2e-7 },
    { "act_relu", &ir_kernel_relu, 0 }, { "act_clamp", &ir_kernel_clamp, 0 },
  };
  KtArray *x = kt_load ("act_x");
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    KtArray *y = kt_load (cases[i].name);
    KTest *t = kt_new (cases[i].k, "opset1");
    kt_attr (t, "min", "-1.5");
    kt_attr (t, "max", "2.25");
    kt_input (t, x->type, x->shape, x->data, FALSE);
    kt_run (t, 1);
    kt_assert_close (cases[i].name, kt_out_f32 (t, 0), y->data, m2i_shape_numel (&y->shape),
        0, cases[i].rtol);
    kt_free (t);
    kt_array_free (y);
  }
  kt_array_free (x);
}

/* Special values, by the reference expressions quoted in activation.c. */
static void
test_activation_special (void)
{
  const float x[] = { NAN, INFINITY, -INFINITY, -0.0f, 100.0f, -100.0f };
  KTest *t = kt_new (&ir_kernel_relu, "opset1");
  kt_input (t, M2I_ET_F32, SHAPE (6), x, FALSE);
  kt_run (t, 1);
  const float *y = kt_out_f32 (t, 0);
  g_assert_cmpfloat (y[0], ==, 0.0f);
  g_assert_true (isinf (y[1]) && y[1] > 0);
  g_assert_cmpfloat (y[2], ==, 0.0f);
  kt_free (t);

  t = kt_new (&ir_kernel_clamp, "opset1");
  kt_attr (t, "min", "-1");
  kt_attr (t, "max", "1");
  kt_input (t, M2I_ET_F32, SHAPE (6), x, FALSE);
  kt_run (t, 1);
  y = kt_out_f32 (t, 0);
  g_assert_true (isnan (y[0]));
  g_assert_cmpfloat (y[1], ==, 1.0f);
  g_assert_cmpfloat (y[2], ==, -1.0f);
  kt_free (t);

  t = kt_new (&ir_kernel_sigmoid, "opset1");
  kt_input (t, M2I_ET_F32, SHAPE (6), x, FALSE);
  kt_run (t, 1);
  y = kt_out_f32 (t, 0);
  g_assert_cmpfloat (y[1], ==, 1.0f);
  g_assert_cmpfloat (y[2], ==, 0.0f);
  g_assert_cmpfloat (y[3], ==, 0.5f);
  g_assert_cmpfloat (y[4], ==, 1.0f);
  g_assert_cmpfloat_with_epsilon (y[5], 3.7200760e-44, 1e-45);
  kt_free (t);

  t = kt_new (&ir_kernel_exp, "opset1");
  kt_input (t, M2I_ET_F32, SHAPE (6), x, FALSE);
  kt_run (t, 1);
  y = kt_out_f32 (t, 0);
  g_assert_true (isinf (y[1]));
  g_assert_cmpfloat (y[2], ==, 0.0f);
  g_assert_cmpfloat (y[3], ==, 1.0f);
  g_assert_true (isinf (y[4]));                    /* e^100 overflows f32 */
  kt_free (t);

  /* Integer Clamp rounds the bounds inward: [-1.5, 2.5] -> [-1, 2]. */
  const gint32 xi[] = { -5, -1, 0, 2, 3, G_MAXINT32 };
  t = kt_new (&ir_kernel_clamp, "opset1");
  kt_attr (t, "min", "-1.5");
  kt_attr (t, "max", "2.5");
  kt_input (t, M2I_ET_I32, SHAPE (6), xi, FALSE);
  kt_run (t, 1);
  const gint32 *yi = t->outputs[0].data;
  const gint32 want[] = { -1, -1, 0, 2, 2, 2 };
  g_assert_cmpmem (yi, sizeof want, want, sizeof want);
  kt_free (t);

  const gint64 xl[] = { -5, 0, 7 };
  t = kt_new (&ir_kernel_relu, "opset1");
  kt_input (t, M2I_ET_I64, SHAPE (3), xl, FALSE);
  kt_run (t, 1);
  const gint64 *yl = t->outputs[0].data;
  g_assert_cmpint (yl[0], ==, 0);
  g_assert_cmpint (yl[2], ==, 7);
  kt_free (t);
}

static void
test_activation_errors (void)
{
  static float buf[8];
  KTest *t = kt_new (&ir_kernel_clamp, "opset1");
  kt_attr (t, "min", "2");
  kt_attr (t, "max", "1");
  kt_input (t, M2I_ET_F32, SHAPE (4), buf, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "min <= max");
  kt_free (t);

  t = kt_new (&ir_kernel_clamp, "opset1");
  kt_attr (t, "max", "1");
  kt_input (t, M2I_ET_F32, SHAPE (4), buf, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "required");
  kt_free (t);

  t = kt_new (&ir_kernel_clamp, "opset1");
  kt_attr (t, "min", "0.2");
  kt_attr (t, "max", "0.7");
  kt_input (t, M2I_ET_I32, SHAPE (4), buf, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "no integer");
  kt_free (t);

  t = kt_new (&ir_kernel_sigmoid, "opset1");
  kt_input (t, M2I_ET_I32, SHAPE (4), buf, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_UNSUPPORTED, "element type i32");
  kt_free (t);

  t = kt_new (&ir_kernel_exp, "opset1");
  kt_input (t, M2I_ET_F32, SHAPE (4), buf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (4), buf, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "expects 1 inputs, has 2");
  kt_free (t);

  t = kt_new (&ir_kernel_prelu, "opset1");
  kt_input (t, M2I_ET_F32, SHAPE (1, 4, 2, 2), buf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (3), buf, TRUE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "does not broadcast");
  kt_free (t);

  /* A slope that would grow the data shape is refused too. */
  t = kt_new (&ir_kernel_prelu, "opset1");
  kt_input (t, M2I_ET_F32, SHAPE (4, 1), buf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (2, 1, 3), buf, TRUE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "does not broadcast");
  kt_free (t);
}

static void
test_prelu (void)
{
  KtArray *x = kt_load ("prelu_x");
  static const struct { const char *slope, *y; } cases[] = {
    { "prelu_slope", "prelu_y" }, { "prelu_full_slope", "prelu_full_y" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    KtArray *s = kt_load (cases[i].slope), *y = kt_load (cases[i].y);
    KTest *t = kt_new (&ir_kernel_prelu, "opset1");
    kt_input (t, x->type, x->shape, x->data, FALSE);
    kt_input (t, s->type, s->shape, s->data, TRUE);
    kt_run (t, 1);
    kt_assert_close (cases[i].y, kt_out_f32 (t, 0), y->data, m2i_shape_numel (&y->shape), 0, 0);
    kt_free (t);
    kt_array_free (s);
    kt_array_free (y);
  }
  kt_array_free (x);

  /* A single slope value of shape [1] (person-detection-retail-0013's
   * layers), hand-computed. */
  const float xs[] = { -2, -0.5f, 0, 3 }, one[] = { 0.25f };
  KTest *t = kt_new (&ir_kernel_prelu, "opset1");
  kt_input (t, M2I_ET_F32, SHAPE (1, 2, 1, 2), xs, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (1), one, TRUE);
  kt_run (t, 1);
  const float want[] = { -0.5f, -0.125f, 0, 3 };
  kt_assert_close ("prelu [1]", kt_out_f32 (t, 0), want, 4, 0, 0);
  kt_free (t);
}

/* The runtime may run element-wise layers in place: the output buffer is an
 * input of the same shape. */
static void
test_in_place (void)
{
  const gint64 c = 5, hw = 37;
  float *a = g_new (float, c * hw), *b = g_new (float, c), *want = g_new (float, c * hw);
  kt_fill (a, c * hw, 21, -3, 3);
  kt_fill (b, c, 22, -1, 1);
  for (gint64 i = 0; i < c * hw; i++) {
    float v = a[i] * b[i / hw];
    want[i] = v > 0 ? v : 0;
  }
  KTest *t = kt_new (&ir_kernel_multiply, "opset1");
  kt_input (t, M2I_ET_F32, SHAPE (1, c, hw), a, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (1, c, 1), b, TRUE);
  GError *error = NULL;
  g_assert_true (kt_infer (t, 1, &error));
  t->outputs[0].data = a;                        /* over input 0 */
  g_assert_true (kt_execute (t, &error));
  kt_free (t);
  t = kt_new (&ir_kernel_relu, "opset1");
  kt_input (t, M2I_ET_F32, SHAPE (1, c, hw), a, FALSE);
  g_assert_true (kt_infer (t, 1, &error));
  t->outputs[0].data = a;
  g_assert_true (kt_execute (t, &error));
  kt_free (t);
  kt_assert_close ("in place", a, want, c * hw, 0, 0);
  g_free (a);
  g_free (b);
  g_free (want);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/eltwise/float", test_float_vectors);
  g_test_add_func ("/eltwise/large", test_large);
  g_test_add_func ("/eltwise/integers", test_integers);
  g_test_add_func ("/eltwise/errors", test_binary_errors);
  g_test_add_func ("/activation/vectors", test_activation_vectors);
  g_test_add_func ("/activation/special", test_activation_special);
  g_test_add_func ("/activation/errors", test_activation_errors);
  g_test_add_func ("/activation/prelu", test_prelu);
  g_test_add_func ("/eltwise/in-place", test_in_place);
  return g_test_run ();
}
