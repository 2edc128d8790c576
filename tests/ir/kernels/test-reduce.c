/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceL1, ReduceL2,
 * ReduceProd (f32, i32, i64) and ReduceLogicalAnd/Or (boolean) against
 * NumPy (tests/data/ir-kernels/gen-ops.py) over nine axis lists (negative,
 * unsorted, repeated, leading, trailing, none, all) given as i32 and i64
 * constants, with and without keep_dims; empty reductions; errors. */
#include "kernel-test.h"

/* gen-ops.py's RED_AXES, in order. */
static const struct { const char *name; gint n; gint64 axes[4]; } cases[] = {
  { "a1", 1, { 1 } }, { "neg", 1, { -1 } }, { "a02", 2, { 0, 2 } }, { "trail", 3, { 1, 2, 3 } },
  { "lead", 1, { 0 } }, { "none", 0, { 0 } }, { "unsorted", 2, { 3, 1 } },
  { "rep", 2, { 1, -3 } }, { "all", 4, { 0, 1, 2, 3 } },
};

/* The expected output shape of @in reduced over case @c. */
static M2iShape
reduced_shape (const M2iShape *in, guint c, gboolean keep)
{
  gboolean r[M2I_MAX_RANK] = { FALSE };
  for (gint i = 0; i < cases[c].n; i++)
    r[(cases[c].axes[i] + in->rank) % in->rank] = TRUE;
  M2iShape out = { 0 };
  for (gint d = 0; d < in->rank; d++)
    if (!r[d])
      out.dims[out.rank++] = in->dims[d];
    else if (keep)
      out.dims[out.rank++] = 1;
  return out;
}

/* Runs @k over every case on @x, checking shapes, and appends the outputs
 * (as @type's bytes) to one buffer, as gen-ops.py concatenates them. */
static guint8 *
run_cases (const M2iOpKernel *k, const char *version, const KtArray *x, M2iElementType type,
    gconstpointer data, gsize *bytes)
{
  GByteArray *all = g_byte_array_new ();
  for (guint c = 0; c < G_N_ELEMENTS (cases); c++) {
    gboolean keep = c % 2, wide = c % 3 != 0;
    gint32 a32[4];
    for (gint i = 0; i < cases[c].n; i++)
      a32[i] = (gint32) cases[c].axes[i];
    KTest *t = kt_new (k, version);
    if (keep)
      kt_attr (t, "keep_dims", "true");
    kt_input (t, type, x->shape, data, FALSE);
    kt_input (t, wide ? M2I_ET_I64 : M2I_ET_I32, SHAPE (cases[c].n),
        wide ? (gconstpointer) cases[c].axes : (gconstpointer) a32, TRUE);
    kt_run (t, 1);
    M2iShape want = reduced_shape (&x->shape, c, keep);
    if (!m2i_shape_equal (&t->outputs[0].shape, &want))
      g_error ("%s %s: shape %s, expected %s", k->type, cases[c].name,
          ir_k_shape_str (&t->outputs[0].shape, 0), ir_k_shape_str (&want, 1));
    g_assert_cmpint (t->outputs[0].type, ==, type);
    g_byte_array_append (all, t->outputs[0].data, m2i_tensor_nbytes (&t->outputs[0]));
    kt_free (t);
  }
  *bytes = all->len;
  return g_byte_array_free (all, FALSE);
}

static void
test_float (void)
{
  static const struct { const M2iOpKernel *k; const char *version; double rtol; } ops[] = {
    { &ir_kernel_reduce_sum, "opset1", 2e-7 }, { &ir_kernel_reduce_mean, "opset1", 2e-7 },
    { &ir_kernel_reduce_max, "opset1", 0 }, { &ir_kernel_reduce_min, "opset1", 0 },
    { &ir_kernel_reduce_l1, "opset4", 2e-7 }, { &ir_kernel_reduce_l2, "opset4", 2e-7 },
    { &ir_kernel_reduce_prod, "opset1", 2e-7 },
  };
  KtArray *x = kt_load ("red_x"), *xp = kt_load ("red_xp"), *y = kt_load ("red_y");
  gint64 per_op = y->shape.dims[1];
  for (guint i = 0; i < G_N_ELEMENTS (ops); i++) {
    const KtArray *in = ops[i].k == &ir_kernel_reduce_prod ? xp : x;
    gsize bytes;
    guint8 *got = run_cases (ops[i].k, ops[i].version, in, M2I_ET_F32, in->data, &bytes);
    g_assert_cmpuint (bytes, ==, per_op * sizeof (float));
    /* sums of up to 120 values of ±2: an absolute floor near 0 */
    kt_assert_close (ops[i].k->type, (const float *) got, (const float *) y->data + i * per_op,
        per_op, ops[i].rtol ? 1e-6 : 0, ops[i].rtol);
    g_free (got);
  }
  kt_array_free (x);
  kt_array_free (xp);
  kt_array_free (y);
}

/* i64 and i32 (the same values): sums and products wrap in 64 bits, Mean
 * truncates; exact. */
static void
test_integers (void)
{
  static const M2iOpKernel *const ops[] = {
    &ir_kernel_reduce_sum, &ir_kernel_reduce_max, &ir_kernel_reduce_min,
    &ir_kernel_reduce_l1, &ir_kernel_reduce_prod, &ir_kernel_reduce_mean,
  };
  KtArray *x = kt_load ("red_xi"), *y = kt_load ("red_i_y");
  gint64 per_op = y->shape.dims[1], numel = m2i_shape_numel (&x->shape);
  gint32 *x32 = g_new (gint32, numel);
  for (gint64 i = 0; i < numel; i++)
    x32[i] = (gint32) ((gint64 *) x->data)[i];
  for (guint i = 0; i < G_N_ELEMENTS (ops); i++) {
    const gint64 *want = (const gint64 *) y->data + i * per_op;
    gsize bytes;
    guint8 *got = run_cases (ops[i], "opset4", x, M2I_ET_I64, x->data, &bytes);
    g_assert_cmpuint (bytes, ==, per_op * 8);
    if (memcmp (got, want, bytes))
      g_error ("%s on i64 differs from NumPy", ops[i]->type);
    g_free (got);
    if (ops[i] == &ir_kernel_reduce_prod)
      continue;                            /* 60-element products overflow i32 */
    got = run_cases (ops[i], "opset4", x, M2I_ET_I32, x32, &bytes);
    for (gint64 k = 0; k < per_op; k++)
      if (((gint32 *) got)[k] != (gint32) want[k])
        g_error ("%s on i32 element %" G_GINT64_FORMAT ": %d, expected %" G_GINT64_FORMAT,
            ops[i]->type, k, ((gint32 *) got)[k], want[k]);
    g_free (got);
  }
  g_free (x32);
  kt_array_free (x);
  kt_array_free (y);

  /* Logical reductions over [1] then [0, 2] of a [2, 3, 4] boolean. */
  KtArray *b = kt_load ("red_xb");
  static const struct { const M2iOpKernel *k; const char *want; } logic[] = {
    { &ir_kernel_reduce_logical_and, "red_and" }, { &ir_kernel_reduce_logical_or, "red_or" },
  };
  static const gint64 ax1[] = { 1 }, ax02[] = { 0, 2 };
  for (guint i = 0; i < G_N_ELEMENTS (logic); i++) {
    KtArray *want = kt_load (logic[i].want);
    KTest *t = kt_new (logic[i].k, "opset1");
    kt_input (t, b->type, b->shape, b->data, FALSE);
    kt_input (t, M2I_ET_I64, SHAPE (1), ax1, TRUE);
    kt_run (t, 1);
    g_assert_cmpmem (t->outputs[0].data, 8, want->data, 8);
    kt_free (t);
    t = kt_new (logic[i].k, "opset1");
    kt_input (t, b->type, b->shape, b->data, FALSE);
    kt_input (t, M2I_ET_I64, SHAPE (2), ax02, TRUE);
    kt_run (t, 1);
    g_assert_cmpmem (t->outputs[0].data, 3, (guint8 *) want->data + 8, 3);
    kt_free (t);
    kt_array_free (want);
  }
  kt_array_free (b);
}

/* Reducing an axis of length 0: each op's identity; and an empty result. */
static void
test_empty (void)
{
  static float buf[4];
  static const gint64 ax[] = { 1 };
  static const struct { const M2iOpKernel *k; float want; } ops[] = {
    { &ir_kernel_reduce_sum, 0.0f }, { &ir_kernel_reduce_prod, 1.0f },
    { &ir_kernel_reduce_max, -INFINITY }, { &ir_kernel_reduce_min, INFINITY },
    { &ir_kernel_reduce_l2, 0.0f }, { &ir_kernel_reduce_mean, NAN },
  };
  for (guint i = 0; i < G_N_ELEMENTS (ops); i++) {
    KTest *t = kt_new (ops[i].k, "opset4");
    kt_input (t, M2I_ET_F32, SHAPE (3, 0), buf, FALSE);
    kt_input (t, M2I_ET_I64, SHAPE (1), ax, TRUE);
    kt_run (t, 1);
    g_assert_cmpint (t->outputs[0].shape.rank, ==, 1);
    float want[3] = { ops[i].want, ops[i].want, ops[i].want };
    kt_assert_close (ops[i].k->type, kt_out_f32 (t, 0), want, 3, 0, 0);
    kt_free (t);
  }
  static const gint64 ax0[] = { 0 };
  KTest *t = kt_new (&ir_kernel_reduce_sum, "opset1");
  kt_input (t, M2I_ET_F32, SHAPE (3, 0), buf, FALSE);
  kt_input (t, M2I_ET_I64, SHAPE (1), ax0, TRUE);
  kt_run (t, 1);
  g_assert_cmpint (m2i_shape_numel (&t->outputs[0].shape), ==, 0);
  kt_free (t);
}

/* A large strided reduction (the first and last axes) over threads,
 * against a plain loop. */
static void
test_large (void)
{
  const gint64 n = 4, c = 64, hw = 1000;
  float *x = g_new (float, n * c * hw);
  double want[64] = { 0 };
  kt_fill (x, n * c * hw, 9, -1, 1);
  for (gint64 i = 0; i < n * c * hw; i++)
    want[(i / hw) % c] = MAX (want[(i / hw) % c], x[i]);
  static const gint64 ax[] = { 0, 2 };
  KTest *t = kt_new (&ir_kernel_reduce_max, "opset1");
  kt_input (t, M2I_ET_F32, SHAPE (n, c, hw), x, FALSE);
  kt_input (t, M2I_ET_I64, SHAPE (2), ax, TRUE);
  t->ctx.n_threads = 3;
  kt_run (t, 1);
  for (gint k = 0; k < c; k++)
    g_assert_cmpfloat (kt_out_f32 (t, 0)[k], ==, (float) want[k]);
  kt_free (t);
  g_free (x);
}

static void
test_errors (void)
{
  static float buf[8];
  static const gint64 bad[] = { 4 };
  KTest *t = kt_new (&ir_kernel_reduce_sum, "opset1");
  kt_input (t, M2I_ET_F32, SHAPE (2, 2), buf, FALSE);
  kt_input (t, M2I_ET_I64, SHAPE (1), bad, TRUE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "axis 4 is out of range");
  kt_free (t);

  t = kt_new (&ir_kernel_reduce_max, "opset1");
  kt_input (t, M2I_ET_F32, SHAPE (2, 2), buf, FALSE);
  kt_input (t, M2I_ET_I64, SHAPE (1), bad, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_UNSUPPORTED, "must be a constant");
  kt_free (t);

  t = kt_new (&ir_kernel_reduce_l2, "opset4");
  kt_input (t, M2I_ET_I32, SHAPE (2, 2), buf, FALSE);
  kt_input (t, M2I_ET_I64, SHAPE (0), bad, TRUE);
  kt_expect_error (t, 1, M2I_ERROR_UNSUPPORTED, "element type i32");
  kt_free (t);

  t = kt_new (&ir_kernel_reduce_logical_or, "opset1");
  kt_input (t, M2I_ET_F32, SHAPE (2, 2), buf, FALSE);
  kt_input (t, M2I_ET_I64, SHAPE (0), bad, TRUE);
  kt_expect_error (t, 1, M2I_ERROR_UNSUPPORTED, "element type f32");
  kt_free (t);

  t = kt_new (&ir_kernel_reduce_prod, "opset1");
  kt_attr (t, "keep_dims", "maybe");
  kt_input (t, M2I_ET_F32, SHAPE (2, 2), buf, FALSE);
  kt_input (t, M2I_ET_I64, SHAPE (0), bad, TRUE);
  kt_expect_error (t, 1, M2I_ERROR_MALFORMED, "keep_dims");
  kt_free (t);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/kernels/reduce/float", test_float);
  g_test_add_func ("/kernels/reduce/integers", test_integers);
  g_test_add_func ("/kernels/reduce/empty", test_empty);
  g_test_add_func ("/kernels/reduce/large", test_large);
  g_test_add_func ("/kernels/reduce/errors", test_errors);
  return g_test_run ();
}
