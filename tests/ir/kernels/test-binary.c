/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Binary element-wise kernels of issue 15: Maximum, Minimum,
 * SquaredDifference, Mod, FloorMod, Power (eltwise.c) and Equal, NotEqual,
 * Less, LessEqual, Greater, GreaterEqual, LogicalAnd/Or/Xor/Not, Select
 * (compare.c), against NumPy (tests/data/ir-kernels/gen-ops.py): every
 * broadcasting case (same shapes, rank mismatch, size-1 dims on both
 * sides, scalars, one element, empty), pdpd and none, i32 and i64
 * (Python's % and C's fmod on exact integers), special values, errors. */
#include "kernel-test.h"

static const char *const bcast_cases[] = {
  "same", "bcast", "chan", "scalar_b", "scalar_a", "both", "rank", "one", "empty",
};

/* The rows of bin_<case>_y and cmp_<case>_y (gen-ops.py's order). */
static const M2iOpKernel *const arith[] = {
  &ir_kernel_maximum, &ir_kernel_minimum, &ir_kernel_squared_difference, &ir_kernel_mod,
  &ir_kernel_floor_mod, &ir_kernel_power,
};
static const M2iOpKernel *const compare[] = {
  &ir_kernel_equal, &ir_kernel_not_equal, &ir_kernel_less, &ir_kernel_less_equal,
  &ir_kernel_greater, &ir_kernel_greater_equal,
};

static KTest *
binary (const M2iOpKernel *k, const KtArray *a, const KtArray *b, gboolean b_const)
{
  KTest *t = kt_new (k, "opset1");
  kt_input (t, a->type, a->shape, a->data, FALSE);
  kt_input (t, b->type, b->shape, b->data, b_const);
  return t;
}

static KtArray *
load_case (const char *c, const char *what)
{
  g_autofree gchar *name = g_strdup_printf ("%s_%s", c, what);
  return kt_load (name);
}

/* f32: Max, Min, SquaredDifference exactly (one rounding, as NumPy's
 * float32 ops); Mod, FloorMod exactly (fmod is exact, the sign fix-up one
 * rounding, as NumPy's); Power within powf's ulp. Comparisons exactly. */
static void
test_float_vectors (void)
{
  for (guint c = 0; c < G_N_ELEMENTS (bcast_cases); c++) {
    g_autofree gchar *bin = g_strdup_printf ("bin_%s", bcast_cases[c]);
    g_autofree gchar *cmp = g_strdup_printf ("cmp_%s", bcast_cases[c]);
    KtArray *a = load_case (bin, "a"), *b = load_case (bin, "b");
    KtArray *pa = load_case (bin, "pa"), *pb = load_case (bin, "pb");
    KtArray *y = load_case (bin, "y"), *yc = load_case (cmp, "y");
    M2iShape out = y->shape;                   /* the stacked rows drop their first axis */
    out.rank--;
    memmove (out.dims, out.dims + 1, out.rank * sizeof (gint64));
    gint64 n = m2i_shape_numel (&out);
    for (guint k = 0; k < G_N_ELEMENTS (arith); k++) {
      gboolean pow = arith[k] == &ir_kernel_power;
      KTest *t = binary (arith[k], pow ? pa : a, pow ? pb : b, c % 2);
      kt_run (t, 1);
      g_assert_true (m2i_shape_equal (&t->outputs[0].shape, &out));
      g_autofree gchar *what = g_strdup_printf ("%s %s", arith[k]->type, bcast_cases[c]);
      kt_assert_close (what, kt_out_f32 (t, 0), (const float *) y->data + k * n, n, 0,
          pow ? 2.5e-7 : 0);
      kt_free (t);
    }
    for (guint k = 0; k < G_N_ELEMENTS (compare); k++) {
      KTest *t = binary (compare[k], a, b, FALSE);
      kt_run (t, 1);
      g_assert_cmpint (t->outputs[0].type, ==, M2I_ET_BOOLEAN);
      g_assert_true (m2i_shape_equal (&t->outputs[0].shape, &out));
      if (memcmp (t->outputs[0].data, (const guint8 *) yc->data + k * n, n))
        g_error ("%s %s differs from NumPy", compare[k]->type, bcast_cases[c]);
      kt_free (t);
    }
    kt_array_free (a);
    kt_array_free (b);
    kt_array_free (pa);
    kt_array_free (pb);
    kt_array_free (y);
    kt_array_free (yc);
  }
}

/* Power by a constant 2 (the x·x fast path) against powf's values. */
static void
test_square (void)
{
  KtArray *a = kt_load ("bin_bcast_a");
  const float two = 2.0f;
  KTest *t = kt_new (&ir_kernel_power, "opset1");
  kt_input (t, a->type, a->shape, a->data, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (1), &two, TRUE);
  kt_run (t, 1);
  gint64 n = m2i_shape_numel (&a->shape);
  for (gint64 i = 0; i < n; i++) {
    float x = ((const float *) a->data)[i], want = powf (x, 2.0f);
    g_assert_cmpfloat (kt_out_f32 (t, 0)[i], ==, want);
  }
  kt_free (t);
  kt_array_free (a);
}

static void
check_ints (const char *what, const KTest *t, const KtArray *want)
{
  gsize bytes = m2i_tensor_nbytes (&t->outputs[0]);
  g_assert_cmpint (t->outputs[0].type, ==, want->type);
  g_assert_cmpuint (bytes, ==, m2i_shape_numel (&want->shape) * m2i_element_type_size (want->type));
  if (memcmp (t->outputs[0].data, want->data, bytes))
    g_error ("%s differs from the reference", what);
}

static void
test_integers (void)
{
  KtArray *a = kt_load ("bin_i32_a"), *b = kt_load ("bin_i32_b"), *e = kt_load ("bin_i32_e");
  static const struct { const M2iOpKernel *k; const char *want; } ops[] = {
    { &ir_kernel_mod, "bin_i32_mod" }, { &ir_kernel_floor_mod, "bin_i32_floormod" },
    { &ir_kernel_maximum, "bin_i32_max" }, { &ir_kernel_minimum, "bin_i32_min" },
    { &ir_kernel_squared_difference, "bin_i32_sqdiff" }, { &ir_kernel_power, "bin_i32_pow" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (ops); i++) {
    KtArray *want = kt_load (ops[i].want);
    KTest *t = binary (ops[i].k, a, ops[i].k == &ir_kernel_power ? e : b, TRUE);
    kt_run (t, 1);
    check_ints (ops[i].want, t, want);
    kt_free (t);
    kt_array_free (want);
  }
  kt_array_free (a);
  kt_array_free (b);
  kt_array_free (e);

  /* i64: Mod and FloorMod on 40-bit values, Greater and LessEqual. */
  a = kt_load ("bin_i64_a");
  b = kt_load ("bin_i64_b");
  KtArray *bs = kt_load ("bin_i64_bs");
  static const struct { const M2iOpKernel *k; const char *want; gboolean scaled; } ops64[] = {
    { &ir_kernel_mod, "bin_i64_mod", FALSE }, { &ir_kernel_floor_mod, "bin_i64_floormod", FALSE },
    { &ir_kernel_greater, "cmp_i64_gt", TRUE }, { &ir_kernel_less_equal, "cmp_i64_le", TRUE },
  };
  for (guint i = 0; i < G_N_ELEMENTS (ops64); i++) {
    KtArray *want = kt_load (ops64[i].want);
    KTest *t = binary (ops64[i].k, a, ops64[i].scaled ? bs : b, FALSE);
    kt_run (t, 1);
    check_ints (ops64[i].want, t, want);
    kt_free (t);
    kt_array_free (want);
  }
  kt_array_free (a);
  kt_array_free (b);
  kt_array_free (bs);

  /* YOLO's shape arithmetic: i32 scalars. dim 4: 4 mod 2 = 0, 0 > 0 is
   * false; 5 mod 2 = 1 > 0. */
  static const gint32 dims[] = { 4, 5, -5 }, two = 2, zero = 0;
  KTest *t = kt_new (&ir_kernel_mod, "opset1");
  kt_input (t, M2I_ET_I32, SHAPE (3), dims, FALSE);
  kt_input (t, M2I_ET_I32, SCALAR, &two, TRUE);
  kt_run (t, 1);
  const gint32 *m = t->outputs[0].data;
  g_assert_cmpint (m[0], ==, 0);
  g_assert_cmpint (m[1], ==, 1);
  g_assert_cmpint (m[2], ==, -1);                    /* C: the dividend's sign */
  KTest *g = kt_new (&ir_kernel_greater, "opset1");
  kt_input (g, M2I_ET_I32, SHAPE (3), m, FALSE);
  kt_input (g, M2I_ET_I32, SHAPE (1), &zero, TRUE);
  kt_run (g, 1);
  const guint8 *gt = g->outputs[0].data;
  g_assert_cmpint (gt[0], ==, 0);
  g_assert_cmpint (gt[1], ==, 1);
  g_assert_cmpint (gt[2], ==, 0);
  kt_free (g);
  kt_free (t);

  /* Edges: MIN mod -1 (would trap in C) is 0; division by zero is an
   * error at run time naming the layer; integer powers wrap; negative
   * exponents truncate. */
  static const gint64 x[] = { G_MININT64, 7, -7, 3 }, y[] = { -1, -3, 3, 0 };
  t = kt_new (&ir_kernel_floor_mod, "opset1");
  kt_input (t, M2I_ET_I64, SHAPE (3), x, FALSE);
  kt_input (t, M2I_ET_I64, SHAPE (3), y, FALSE);
  kt_run (t, 1);
  const gint64 *r = t->outputs[0].data;
  g_assert_cmpint (r[0], ==, 0);
  g_assert_cmpint (r[1], ==, -2);                    /* Python: 7 % -3 */
  g_assert_cmpint (r[2], ==, 2);                     /* Python: -7 % 3 */
  kt_free (t);
  t = kt_new (&ir_kernel_mod, "opset1");
  kt_input (t, M2I_ET_I64, SHAPE (4), x, FALSE);
  kt_input (t, M2I_ET_I64, SHAPE (4), y, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "division by zero");
  kt_free (t);
  static const gint32 base[] = { 3, -1, 2, 1, 0, 65536 }, ex[] = { 4, -3, -1, -5, 3, 2 };
  t = kt_new (&ir_kernel_power, "opset1");
  kt_input (t, M2I_ET_I32, SHAPE (6), base, FALSE);
  kt_input (t, M2I_ET_I32, SHAPE (6), ex, FALSE);
  kt_run (t, 1);
  static const gint32 pw[] = { 81, -1, 0, 1, 0, 0 };  /* 2^-1 → 0; 65536² wraps to 0 */
  g_assert_cmpmem (t->outputs[0].data, sizeof pw, pw, sizeof pw);
  kt_free (t);
}

/* auto_broadcast=pdpd: B onto A from `axis`, trailing 1-dims of B ignored
 * (Subtract, so the operand order matters). */
static void
test_pdpd (void)
{
  KtArray *a = kt_load ("bin_pdpd_a");
  static const struct { const char *name, *axis; } cases[] = {
    { "mid", "1" }, { "mid1", "1" }, { "tail", NULL }, { "lead", "0" }, { "scalar", NULL },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    g_autofree gchar *bn = g_strdup_printf ("bin_pdpd_%s_b", cases[i].name);
    g_autofree gchar *yn = g_strdup_printf ("bin_pdpd_%s_y", cases[i].name);
    KtArray *b = kt_load (bn), *y = kt_load (yn);
    KTest *t = binary (&ir_kernel_subtract, a, b, TRUE);
    kt_attr (t, "auto_broadcast", "pdpd");
    if (cases[i].axis)
      kt_attr (t, "axis", cases[i].axis);
    kt_run (t, 1);
    g_assert_true (m2i_shape_equal (&t->outputs[0].shape, &a->shape));
    kt_assert_close (yn, kt_out_f32 (t, 0), y->data, m2i_shape_numel (&y->shape), 0, 0);
    kt_free (t);
    kt_array_free (b);
    kt_array_free (y);
  }
  /* B may not grow A, nor sit elsewhere than its dims say. */
  static float buf[256];
  KTest *t = kt_new (&ir_kernel_maximum, "opset1");
  kt_attr (t, "auto_broadcast", "pdpd");
  kt_input (t, M2I_ET_F32, SHAPE (8, 1, 6, 1), buf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (7, 1, 5), buf, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "pdpd");
  kt_free (t);
  t = kt_new (&ir_kernel_maximum, "opset1");
  kt_attr (t, "auto_broadcast", "pdpd");
  kt_attr (t, "axis", "0");
  kt_input (t, M2I_ET_F32, SHAPE (2, 3, 4, 5), buf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (3, 4), buf, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "does not match");
  kt_free (t);
  kt_array_free (a);
}

static void
test_logical_select (void)
{
  KtArray *p = kt_load ("cmp_p"), *q = kt_load ("cmp_q");
  static const struct { const M2iOpKernel *k; const char *want; } ops[] = {
    { &ir_kernel_logical_and, "cmp_and" }, { &ir_kernel_logical_or, "cmp_or" },
    { &ir_kernel_logical_xor, "cmp_xor" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (ops); i++) {
    KtArray *want = kt_load (ops[i].want);
    KTest *t = binary (ops[i].k, p, q, FALSE);
    kt_run (t, 1);
    check_ints (ops[i].want, t, want);
    kt_free (t);
    kt_array_free (want);
  }
  /* Equal on booleans; LogicalNot; any non-zero byte is true. */
  KtArray *x = kt_load ("cmp_xor");
  KTest *t = binary (&ir_kernel_equal, p, q, FALSE);
  kt_run (t, 1);
  for (gint64 i = 0; i < m2i_shape_numel (&x->shape); i++)
    g_assert_cmpint (((guint8 *) t->outputs[0].data)[i], ==, !((guint8 *) x->data)[i]);
  kt_free (t);
  static const guint8 bytes[] = { 0, 1, 2, 255 };
  t = kt_new (&ir_kernel_logical_not, "opset1");
  kt_input (t, M2I_ET_BOOLEAN, SHAPE (4), bytes, FALSE);
  kt_run (t, 1);
  static const guint8 nots[] = { 1, 0, 0, 0 };
  g_assert_cmpmem (t->outputs[0].data, 4, nots, 4);
  kt_free (t);
  kt_array_free (x);
  kt_array_free (p);
  kt_array_free (q);

  /* Select: then [3,1,5] and else [4,1] broadcast to [3,4,5], cond [1,5]
   * onto that. */
  KtArray *c = kt_load ("sel_cond"), *th = kt_load ("sel_then"), *el = kt_load ("sel_else");
  KtArray *y = kt_load ("sel_y");
  t = kt_new (&ir_kernel_select, "opset1");
  kt_input (t, c->type, c->shape, c->data, FALSE);
  kt_input (t, th->type, th->shape, th->data, FALSE);
  kt_input (t, el->type, el->shape, el->data, TRUE);
  kt_run (t, 1);
  g_assert_true (m2i_shape_equal (&t->outputs[0].shape, &y->shape));
  kt_assert_close ("select", kt_out_f32 (t, 0), y->data, m2i_shape_numel (&y->shape), 0, 0);
  kt_free (t);
  /* i64 values, scalar else; the condition may not grow the result. */
  static const guint8 cond[] = { 1, 0, 1 };
  static const gint64 then[] = { 10, 20, 30 }, other = -1;
  t = kt_new (&ir_kernel_select, "opset1");
  kt_input (t, M2I_ET_BOOLEAN, SHAPE (3), cond, FALSE);
  kt_input (t, M2I_ET_I64, SHAPE (3), then, FALSE);
  kt_input (t, M2I_ET_I64, SCALAR, &other, FALSE);
  kt_run (t, 1);
  static const gint64 sel[] = { 10, -1, 30 };
  g_assert_cmpmem (t->outputs[0].data, sizeof sel, sel, sizeof sel);
  kt_free (t);
  t = kt_new (&ir_kernel_select, "opset1");
  kt_input (t, M2I_ET_BOOLEAN, SHAPE (2, 3), cond, FALSE);
  kt_input (t, M2I_ET_I64, SHAPE (3), then, FALSE);
  kt_input (t, M2I_ET_I64, SCALAR, &other, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "does not broadcast onto");
  kt_free (t);
  kt_array_free (c);
  kt_array_free (th);
  kt_array_free (el);
  kt_array_free (y);
}

/* NaN and signed zeros by the reference expressions quoted in eltwise.c
 * and compare.c. */
static void
test_special (void)
{
  const float a[] = { NAN, 1.0f, -0.0f, 5.5f, -5.5f, INFINITY };
  const float b[] = { 1.0f, NAN, 0.0f, -2.0f, 2.0f, 3.0f };
  KTest *t = kt_new (&ir_kernel_maximum, "opset1");
  kt_input (t, M2I_ET_F32, SHAPE (6), a, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (6), b, FALSE);
  kt_run (t, 1);
  const float *y = kt_out_f32 (t, 0);
  g_assert_cmpfloat (y[0], ==, 1.0f);                /* NaN > 1 is false: y */
  g_assert_true (isnan (y[1]));
  kt_free (t);
  t = kt_new (&ir_kernel_floor_mod, "opset1");
  kt_input (t, M2I_ET_F32, SHAPE (6), a, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (6), b, FALSE);
  kt_run (t, 1);
  y = kt_out_f32 (t, 0);
  g_assert_true (isnan (y[0]) && isnan (y[1]) && isnan (y[2]) && isnan (y[5]));
  g_assert_cmpfloat (y[3], ==, -0.5f);               /* 5.5 − (−2)·(−3) */
  g_assert_cmpfloat (y[4], ==, 0.5f);
  kt_free (t);
  t = kt_new (&ir_kernel_not_equal, "opset1");
  kt_input (t, M2I_ET_F32, SHAPE (6), a, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (6), a, FALSE);
  kt_run (t, 1);
  static const guint8 ne[] = { 1, 0, 0, 0, 0, 0 };   /* only NaN != NaN */
  g_assert_cmpmem (t->outputs[0].data, 6, ne, 6);
  kt_free (t);
}

static void
test_errors (void)
{
  static float buf[64];
  KTest *t = kt_new (&ir_kernel_greater, "opset1");
  kt_input (t, M2I_ET_F32, SHAPE (2, 3), buf, FALSE);
  kt_input (t, M2I_ET_I32, SHAPE (2, 3), buf, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "different element types");
  kt_free (t);

  t = kt_new (&ir_kernel_less, "opset1");
  kt_input (t, M2I_ET_BOOLEAN, SHAPE (2, 3), buf, FALSE);
  kt_input (t, M2I_ET_BOOLEAN, SHAPE (2, 3), buf, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_UNSUPPORTED, "element type boolean");
  kt_free (t);

  t = kt_new (&ir_kernel_logical_and, "opset1");
  kt_input (t, M2I_ET_F32, SHAPE (2, 3), buf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (2, 3), buf, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_UNSUPPORTED, "element type f32");
  kt_free (t);

  t = kt_new (&ir_kernel_mod, "opset1");
  kt_input (t, M2I_ET_F32, SHAPE (2, 3), buf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (4, 3), buf, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "do not broadcast");
  kt_free (t);

  t = kt_new (&ir_kernel_equal, "opset1");
  kt_attr (t, "auto_broadcast", "none");
  kt_input (t, M2I_ET_F32, SHAPE (2, 3), buf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (1, 3), buf, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "equal shapes");
  kt_free (t);

  t = kt_new (&ir_kernel_power, "opset1");
  kt_attr (t, "auto_broadcast", "sideways");
  kt_input (t, M2I_ET_F32, SHAPE (2, 3), buf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (2, 3), buf, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_UNSUPPORTED, "sideways");
  kt_free (t);

  t = kt_new (&ir_kernel_select, "opset1");
  kt_input (t, M2I_ET_F32, SHAPE (3), buf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (3), buf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (3), buf, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_UNSUPPORTED, "element type f32");
  kt_free (t);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/kernels/binary/float-vectors", test_float_vectors);
  g_test_add_func ("/kernels/binary/square", test_square);
  g_test_add_func ("/kernels/binary/integers", test_integers);
  g_test_add_func ("/kernels/binary/pdpd", test_pdpd);
  g_test_add_func ("/kernels/binary/logical-select", test_logical_select);
  g_test_add_func ("/kernels/binary/special", test_special);
  g_test_add_func ("/kernels/binary/errors", test_errors);
  return g_test_run ();
}
