/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ReduceMean-1, SoftMax-1/8 and BatchNormInference-1/5 against torch.mean,
 * torch.softmax and F.batch_norm vectors, integer means by hand, SoftMax-8
 * and LogSoftmax-5 along short last axes against the spec's loop, and the
 * error cases. */
#include "kernel-test.h"

static KTest *
reduce_new (const KtArray *x, const gint64 *axes, gint n_axes, gboolean keep)
{
  KTest *t = kt_new (&ir_kernel_reduce_mean, "opset1");
  kt_attr (t, "keep_dims", keep ? "true" : "false");
  kt_input (t, x->type, x->shape, x->data, FALSE);
  kt_input (t, M2I_ET_I64, SHAPE (n_axes), axes, TRUE);
  return t;
}

static void
test_reduce_mean (void)
{
  KtArray *x = kt_load ("norm_x");
  static const struct {
    const char *name;
    gint64 axes[4];
    gint n;
    gboolean keep;
  } cases[] = {
    { "rmean_23_keep", { 2, 3 }, 2, TRUE },
    { "rmean_neg", { -1, 0, -1 }, 3, FALSE },        /* repeats merge */
    { "rmean_all", { 0, 1, 2, 3 }, 4, FALSE },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    KtArray *y = kt_load (cases[i].name);
    KTest *t = reduce_new (x, cases[i].axes, cases[i].n, cases[i].keep);
    kt_run (t, 1);
    if (!m2i_shape_equal (&t->outputs[0].shape, &y->shape))
      g_error ("%s: shape %s, torch %s", cases[i].name,
          ir_k_shape_str (&t->outputs[0].shape, 0), ir_k_shape_str (&y->shape, 1));
    kt_assert_close (cases[i].name, kt_out_f32 (t, 0), y->data, m2i_shape_numel (&y->shape),
        1e-6, 1e-6);
    kt_free (t);
    kt_array_free (y);
  }
  /* Means over trailing axes (global average pools): many rows, runs
   * that are not a multiple of 8, two threads, against a plain double
   * sum. */
  const struct { M2iShape shape; gint64 axes[2]; gint n; } runs[] = {
    { SHAPE (1, 1000, 13, 15), { 2, 3 }, 2 },
    { SHAPE (37, 301), { 1 }, 1 },
    { SHAPE (3, 5, 1, 7), { 3, 2 }, 2 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (runs); i++) {
    gint64 numel = m2i_shape_numel (&runs[i].shape);
    gint64 count = 1;
    for (gint a = 0; a < runs[i].n; a++)
      count *= runs[i].shape.dims[runs[i].axes[a]];
    KtArray xa = { M2I_ET_F32, runs[i].shape, g_new (float, numel) };
    kt_fill (xa.data, numel, 60 + i, -2, 3);
    float *want = g_new (float, numel / count);
    for (gint64 r = 0; r < numel / count; r++) {
      double sum = 0;
      for (gint64 e = 0; e < count; e++)
        sum += ((const float *) xa.data)[r * count + e];
      want[r] = (float) (sum / count);
    }
    KTest *tb = reduce_new (&xa, runs[i].axes, runs[i].n, FALSE);
    tb->ctx.n_threads = 2;
    kt_run (tb, 1);
    g_assert_cmpint (m2i_shape_numel (&tb->outputs[0].shape), ==, numel / count);
    kt_assert_close ("mean over trailing axes", kt_out_f32 (tb, 0), want, numel / count, 1e-6, 1e-6);
    kt_free (tb);
    g_free (want);
    g_free (xa.data);
  }

  /* Empty axes: the data itself. */
  KTest *t = reduce_new (x, NULL, 0, FALSE);
  kt_run (t, 1);
  g_assert_true (m2i_shape_equal (&t->outputs[0].shape, &x->shape));
  kt_assert_close ("rmean_none", kt_out_f32 (t, 0), x->data, m2i_shape_numel (&x->shape), 0, 0);
  kt_free (t);
  kt_array_free (x);

  /* Integers: sum, then truncating division. [[1, 2, 4], [-1, -2, -4]] over
   * axis 1 → 7/3 = 2, -7/3 = -2. */
  static const gint32 xi[] = { 1, 2, 4, -1, -2, -4 };
  static const gint32 ax32[] = { 1 };
  t = kt_new (&ir_kernel_reduce_mean, "opset1");
  kt_input (t, M2I_ET_I32, SHAPE (2, 3), xi, FALSE);
  kt_input (t, M2I_ET_I32, SHAPE (1), ax32, TRUE);
  kt_run (t, 1);
  g_assert_cmpint (((const gint32 *) t->outputs[0].data)[0], ==, 2);
  g_assert_cmpint (((const gint32 *) t->outputs[0].data)[1], ==, -2);
  kt_free (t);

  static const gint64 xl[] = { 5000000000LL, 7000000000LL };
  static const gint64 ax0[] = { 0 };
  t = kt_new (&ir_kernel_reduce_mean, "opset1");
  kt_attr (t, "keep_dims", "True");
  kt_input (t, M2I_ET_I64, SHAPE (2), xl, FALSE);
  kt_input (t, M2I_ET_I64, SCALAR, ax0, TRUE);
  kt_run (t, 1);
  g_assert_cmpint (t->outputs[0].shape.rank, ==, 1);
  g_assert_cmpint (((const gint64 *) t->outputs[0].data)[0], ==, 6000000000LL);
  kt_free (t);

  /* squeezenet's pool10: 1000×14×14 → 1000×1×1 */
  float *big = g_new (float, 1000 * 196);
  kt_fill (big, 1000 * 196, 2, 0, 1);
  static const gint64 hw[] = { 2, 3 };
  t = kt_new (&ir_kernel_reduce_mean, "opset1");
  kt_attr (t, "keep_dims", "True");
  kt_input (t, M2I_ET_F32, SHAPE (1, 1000, 14, 14), big, FALSE);
  kt_input (t, M2I_ET_I64, SHAPE (2), hw, TRUE);
  kt_run (t, 1);
  for (gint c = 0; c < 1000; c += 111) {
    double sum = 0;
    for (gint i = 0; i < 196; i++)
      sum += big[c * 196 + i];
    g_assert_cmpfloat_with_epsilon (kt_out_f32 (t, 0)[c], sum / 196, 1e-6);
  }
  kt_free (t);
  g_free (big);
}

static void
test_softmax (void)
{
  KtArray *x = kt_load ("norm_x");
  static const struct { const char *name, *version, *axis; } cases[] = {
    { "softmax_1", "opset1", NULL },                 /* default axis 1 */
    { "softmax_neg1", "opset8", "-1" },
    { "softmax_0", "opset8", "0" },
    { "softmax_neg1", "opset1", "3" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    KtArray *y = kt_load (cases[i].name);
    KTest *t = kt_new (&ir_kernel_softmax, cases[i].version);
    if (cases[i].axis)
      kt_attr (t, "axis", cases[i].axis);
    kt_input (t, x->type, x->shape, x->data, FALSE);
    kt_run (t, 1);
    kt_assert_close (cases[i].name, kt_out_f32 (t, 0), y->data, m2i_shape_numel (&y->shape),
        1e-7, 1e-6);
    kt_free (t);
    kt_array_free (y);
  }
  kt_array_free (x);

  /* Large inputs do not overflow: softmax([1000, 1000]) = [0.5, 0.5]. */
  static const float big[] = { 1000, 1000, -1000, 0 };
  KTest *t = kt_new (&ir_kernel_softmax, "opset8");
  kt_attr (t, "axis", "-1");
  kt_input (t, M2I_ET_F32, SHAPE (2, 2), big, FALSE);
  kt_run (t, 1);
  g_assert_cmpfloat (kt_out_f32 (t, 0)[0], ==, 0.5f);
  g_assert_cmpfloat (kt_out_f32 (t, 0)[2], ==, 0.0f);
  g_assert_cmpfloat (kt_out_f32 (t, 0)[3], ==, 1.0f);
  kt_free (t);
}

/* SoftMax-8 and LogSoftmax-5 along the last axis of [1, rows, n], the
 * spec's formula as a loop in double: y = e^(x - max) / Σ e^(x - max),
 * log: (x - max) - ln Σ e^(x - max). Short axes (n <= 16) run as blocks
 * of rows transposed, in vectors across rows: row counts around the
 * block of 64 and past it, one row, n of 1 to 17 (17 takes the row by
 * row path), on 1 to 3 threads, enough rows for the layer to be split. */
static void
test_softmax_last_axis (void)
{
  static const gint64 ns[] = { 1, 2, 3, 7, 16, 17 };
  static const gint64 rows[] = { 1, 63, 64, 65, 9001 };
  GRand *rnd = g_rand_new_with_seed (19);
  for (gint is_log = 0; is_log < 2; is_log++)
    for (guint a = 0; a < G_N_ELEMENTS (ns); a++)
      for (guint b = 0; b < G_N_ELEMENTS (rows); b++)
        for (gint threads = 1; threads <= 3; threads++) {
          gint64 n = ns[a], r = rows[b], total = n * r;
          float *x = g_new (float, total), *want = g_new (float, total);
          for (gint64 i = 0; i < total; i++)
            x[i] = (float) g_rand_double_range (rnd, -8, 8);
          for (gint64 i = 0; i < r; i++) {
            const float *xi = x + i * n;
            double mx = xi[0], sum = 0;
            for (gint64 k = 1; k < n; k++)
              mx = MAX (mx, xi[k]);
            for (gint64 k = 0; k < n; k++)
              sum += exp (xi[k] - mx);
            for (gint64 k = 0; k < n; k++)
              want[i * n + k] = (float) (is_log ? (xi[k] - mx) - log (sum) :
                  exp (xi[k] - mx) / sum);
          }
          KTest *t = is_log ? kt_new (&ir_kernel_log_softmax, "opset5") :
              kt_new (&ir_kernel_softmax, "opset8");
          kt_attr (t, "axis", "-1");
          t->ctx.n_threads = threads;
          kt_input (t, M2I_ET_F32, SHAPE (1, r, n), x, FALSE);
          kt_run (t, 1);
          g_autofree gchar *what = g_strdup_printf ("%s [1,%" G_GINT64_FORMAT ",%"
              G_GINT64_FORMAT "], %d threads", is_log ? "LogSoftmax" : "SoftMax", r, n, threads);
          kt_assert_close (what, kt_out_f32 (t, 0), want, total, 1e-6, 1e-6);
          kt_free (t);
          g_free (x);
          g_free (want);
        }
  g_rand_free (rnd);
}

static void
test_batch_norm (void)
{
  KtArray *x = kt_load ("norm_x"), *y = kt_load ("bn_y");
  KtArray *p[4] = { kt_load ("bn_gamma"), kt_load ("bn_beta"), kt_load ("bn_mean"),
    kt_load ("bn_var") };
  for (gint v5 = 0; v5 < 2; v5++) {
    KTest *t = kt_new (&ir_kernel_batch_norm, v5 ? "opset5" : "opset1");
    kt_attr (t, "epsilon", "0.001");
    if (v5)
      kt_input (t, x->type, x->shape, x->data, FALSE);
    kt_input (t, p[0]->type, p[0]->shape, p[0]->data, TRUE);
    kt_input (t, p[1]->type, p[1]->shape, p[1]->data, TRUE);
    if (!v5)
      kt_input (t, x->type, x->shape, x->data, FALSE);      /* opset1: data is third */
    kt_input (t, p[2]->type, p[2]->shape, p[2]->data, TRUE);
    kt_input (t, p[3]->type, p[3]->shape, p[3]->data, FALSE);
    kt_run (t, 1);
    kt_assert_close (v5 ? "bn-5" : "bn-1", kt_out_f32 (t, 0), y->data,
        m2i_shape_numel (&y->shape), 1e-6, 1e-6);
    kt_free (t);
  }
  for (gint i = 0; i < 4; i++)
    kt_array_free (p[i]);
  kt_array_free (x);
  kt_array_free (y);
}

static void
test_errors (void)
{
  static float buf[64];
  static const gint64 ax[] = { 5 };
  KTest *t = kt_new (&ir_kernel_reduce_mean, "opset1");
  kt_input (t, M2I_ET_F32, SHAPE (2, 3), buf, FALSE);
  kt_input (t, M2I_ET_I64, SHAPE (1), ax, TRUE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "axis 5 is out of range");
  kt_free (t);

  t = kt_new (&ir_kernel_reduce_mean, "opset1");
  kt_input (t, M2I_ET_F32, SHAPE (2, 3), buf, FALSE);
  kt_input (t, M2I_ET_I64, SHAPE (1), ax, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_UNSUPPORTED, "must be a constant");
  kt_free (t);

  t = kt_new (&ir_kernel_reduce_mean, "opset1");
  kt_input (t, M2I_ET_F32, SHAPE (2, 3), buf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (1), buf, TRUE);
  kt_expect_error (t, 1, M2I_ERROR_UNSUPPORTED, "integer type");
  kt_free (t);

  t = kt_new (&ir_kernel_softmax, "opset1");
  kt_attr (t, "axis", "-1");
  kt_input (t, M2I_ET_F32, SHAPE (2, 3), buf, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "out of range [0, 1]");
  kt_free (t);

  t = kt_new (&ir_kernel_softmax, "opset8");
  kt_attr (t, "axis", "-3");
  kt_input (t, M2I_ET_F32, SHAPE (2, 3), buf, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "out of range [-2, 1]");
  kt_free (t);

  t = kt_new (&ir_kernel_softmax, "opset8");
  kt_input (t, M2I_ET_I32, SHAPE (2, 3), buf, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_UNSUPPORTED, "element type i32");
  kt_free (t);

  t = kt_new (&ir_kernel_batch_norm, "opset5");
  kt_attr (t, "epsilon", "0.001");
  kt_input (t, M2I_ET_F32, SHAPE (1, 4, 2, 2), buf, FALSE);
  for (gint i = 0; i < 4; i++)
    kt_input (t, M2I_ET_F32, SHAPE (i == 2 ? 3 : 4), buf, TRUE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "mean (input 3) has shape [3]");
  kt_free (t);

  /* opset1 order: the data is input 2, so a [4] tensor first is gamma. */
  t = kt_new (&ir_kernel_batch_norm, "opset1");
  kt_attr (t, "epsilon", "0.001");
  kt_input (t, M2I_ET_F32, SHAPE (1, 4, 2, 2), buf, FALSE);
  for (gint i = 0; i < 4; i++)
    kt_input (t, M2I_ET_F32, SHAPE (4), buf, TRUE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "expected rank 2 to 8");
  kt_free (t);

  t = kt_new (&ir_kernel_batch_norm, "opset5");
  kt_input (t, M2I_ET_F32, SHAPE (1, 4, 2, 2), buf, FALSE);
  for (gint i = 0; i < 4; i++)
    kt_input (t, M2I_ET_F32, SHAPE (4), buf, TRUE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "epsilon is required");
  kt_free (t);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/reduce-mean", test_reduce_mean);
  g_test_add_func ("/softmax", test_softmax);
  g_test_add_func ("/softmax-last-axis", test_softmax_last_axis);
  g_test_add_func ("/batch-norm", test_batch_norm);
  g_test_add_func ("/errors", test_errors);
  return g_test_run ();
}
