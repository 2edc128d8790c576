/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* MVN-1, MVN-6, NormalizeL2, LRN (normalize.c) and LogSoftmax-5
 * (softmax.c) against NumPy written from the specifications and torch
 * (tests/data/ir-kernels/gen-ops.py): contiguous and strided axes, both
 * eps modes, a zero-variance plane, no axes, even LRN sizes, 2-D LRN
 * windows; large threaded shapes; errors. */
#include "kernel-test.h"

static void
check (const char *what, KTest *t, const char *want_name, double atol, double rtol)
{
  KtArray *want = kt_load (want_name);
  g_assert_true (m2i_shape_equal (&t->outputs[0].shape, &want->shape));
  kt_assert_close (what, kt_out_f32 (t, 0), want->data, m2i_shape_numel (&want->shape), atol,
      rtol);
  kt_array_free (want);
}

static void
test_mvn6 (void)
{
  static const struct {
    const char *name;
    gint n;
    gint64 axes[3];
    const char *variance, *eps, *mode;
  } cases[] = {
    { "nrm_mvn_hw_in", 2, { 2, 3 }, "true", "1e-3", "inside_sqrt" },
    { "nrm_mvn_hw_out", 2, { -1, -2 }, "true", "1e-3", "outside_sqrt" },
    { "nrm_mvn_chw", 3, { 1, 2, 3 }, "true", "1e-9", "inside_sqrt" },
    { "nrm_mvn_c", 1, { 1 }, "true", "1e-5", "inside_sqrt" },
    { "nrm_mvn_n_h", 2, { 0, 2 }, "true", "1e-2", "outside_sqrt" },
    { "nrm_mvn_novar", 2, { 2, 3 }, "false", "1e-9", "inside_sqrt" },
  };
  KtArray *x = kt_load ("nrm_x");
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    for (gint wide = 0; wide < 2; wide++) {
      gint32 a32[3];
      for (gint k = 0; k < cases[i].n; k++)
        a32[k] = (gint32) cases[i].axes[k];
      KTest *t = kt_new (&ir_kernel_mvn, "opset6");
      kt_attr (t, "normalize_variance", cases[i].variance);
      kt_attr (t, "eps", cases[i].eps);
      kt_attr (t, "eps_mode", cases[i].mode);
      kt_input (t, M2I_ET_F32, x->shape, x->data, FALSE);
      kt_input (t, wide ? M2I_ET_I64 : M2I_ET_I32, SHAPE (cases[i].n),
          wide ? (gconstpointer) cases[i].axes : (gconstpointer) a32, TRUE);
      kt_run (t, 1);
      /* a zero-variance plane divides 0 by sqrt(eps): exactly 0 */
      check (cases[i].name, t, cases[i].name, 1e-6, 1e-5);
      kt_free (t);
    }
  }
  kt_array_free (x);
}

static void
test_mvn1 (void)
{
  KtArray *x = kt_load ("nrm_x");
  /* across_channels: axes 1, 2, 3; per channel: 2, 3; or reduction_axes.
   * MVN-1's eps goes inside the square root. */
  static const struct { const char *attr, *value, *want; } cases[] = {
    { "across_channels", "true", "nrm_mvn_chw" }, { "across_channels", "false", "nrm_mvn_hw_in" },
    { "reduction_axes", "2,3", "nrm_mvn_hw_in" }, { "reduction_axes", "-3", "nrm_mvn_c" },
  };
  static const char *const eps[] = { "1e-9", "1e-3", "1e-3", "1e-5" };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    KTest *t = kt_new (&ir_kernel_mvn, "opset2");
    kt_attr (t, cases[i].attr, cases[i].value);
    kt_attr (t, "normalize_variance", "true");
    kt_attr (t, "eps", eps[i]);
    kt_input (t, M2I_ET_F32, x->shape, x->data, FALSE);
    kt_run (t, 1);
    check (cases[i].want, t, cases[i].want, 1e-6, 1e-5);
    kt_free (t);
  }
  kt_array_free (x);
}

static void
test_normalize_l2 (void)
{
  static const struct { const char *name; gint n; gint64 axes[3]; const char *eps, *mode; } cases[] = {
    { "nrm_l2_c_add", 1, { 1 }, "1e-6", "add" }, { "nrm_l2_c_max", 1, { -3 }, "0.5", "max" },
    { "nrm_l2_chw", 3, { 3, 1, 2 }, "1e-10", "add" }, { "nrm_l2_none", 0, { 0 }, "1e-4", "max" },
    { "nrm_l2_last", 1, { -1 }, "0.1", "add" },
  };
  KtArray *x = kt_load ("nrm_x");
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    KTest *t = kt_new (&ir_kernel_normalize_l2, "opset1");
    kt_attr (t, "eps", cases[i].eps);
    kt_attr (t, "eps_mode", cases[i].mode);
    kt_input (t, M2I_ET_F32, x->shape, x->data, FALSE);
    kt_input (t, M2I_ET_I64, SHAPE (cases[i].n), cases[i].axes, TRUE);
    kt_run (t, 1);
    check (cases[i].name, t, cases[i].name, 1e-7, 5e-7);
    kt_free (t);
  }
  kt_array_free (x);
}

static void
test_lrn (void)
{
  KtArray *x = kt_load ("nrm_lrn_x");
  static const struct {
    const char *name, *alpha, *beta, *bias, *size;
    gint n;
    gint64 axes[2];
  } cases[] = {
    /* torch.nn.functional.local_response_norm: across channels, size 5 */
    { "nrm_lrn_torch", "1e-2", "0.75", "2", "5", 1, { 1 } },
    /* the spec's formula in NumPy: a 3×3 window over H, W; an even size */
    { "nrm_lrn_hw", "0.1", "0.6", "1.5", "3", 2, { 2, -1 } },
    { "nrm_lrn_even", "0.05", "0.75", "1", "4", 1, { 1 } },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    KTest *t = kt_new (&ir_kernel_lrn, "opset1");
    kt_attr (t, "alpha", cases[i].alpha);
    kt_attr (t, "beta", cases[i].beta);
    kt_attr (t, "bias", cases[i].bias);
    kt_attr (t, "size", cases[i].size);
    kt_input (t, M2I_ET_F32, x->shape, x->data, FALSE);
    kt_input (t, M2I_ET_I64, SHAPE (cases[i].n), cases[i].axes, TRUE);
    kt_run (t, 1);
    check (cases[i].name, t, cases[i].name, 1e-7, 1e-6);
    kt_free (t);
  }
  kt_array_free (x);
}

static void
test_log_softmax (void)
{
  KtArray *x = kt_load ("nrm_x");
  static const struct { const char *axis, *want; } cases[] = {
    { "1", "nrm_logsm_1" }, { "-1", "nrm_logsm_neg" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    KTest *t = kt_new (&ir_kernel_log_softmax, "opset5");
    kt_attr (t, "axis", cases[i].axis);
    kt_input (t, M2I_ET_F32, x->shape, x->data, FALSE);
    kt_run (t, 1);
    check (cases[i].want, t, cases[i].want, 1e-6, 5e-7);
    kt_free (t);
  }
  kt_array_free (x);
}

/* Strided MVN (axes 0 and 2), then MVN and NormalizeL2 over contiguous
 * groups, on a large tensor over threads, against plain loops in double. */
static void
test_large (void)
{
  const gint64 n = 2, c = 32, hw = 3000, total = n * c * hw;
  float *x = g_new (float, total), *want = g_new (float, total);
  kt_fill (x, total, 13, -3, 5);
  for (gint64 k = 0; k < c; k++) {
    double sum = 0, sq = 0;
    for (gint64 b = 0; b < n; b++)
      for (gint64 i = 0; i < hw; i++)
        sum += x[(b * c + k) * hw + i];
    double mean = sum / (n * hw);
    for (gint64 b = 0; b < n; b++)
      for (gint64 i = 0; i < hw; i++) {
        double d = x[(b * c + k) * hw + i] - mean;
        sq += d * d;
      }
    double div = sqrt (sq / (n * hw) + 1e-4);
    for (gint64 b = 0; b < n; b++)
      for (gint64 i = 0; i < hw; i++)
        want[(b * c + k) * hw + i] = (float) ((x[(b * c + k) * hw + i] - mean) / div);
  }
  static const gint64 ax[] = { 0, 2 };
  KTest *t = kt_new (&ir_kernel_mvn, "opset6");
  kt_attr (t, "normalize_variance", "true");
  kt_attr (t, "eps", "1e-4");
  kt_attr (t, "eps_mode", "inside_sqrt");
  kt_input (t, M2I_ET_F32, SHAPE (n, c, hw), x, FALSE);
  kt_input (t, M2I_ET_I64, SHAPE (2), ax, TRUE);
  t->ctx.n_threads = 3;
  kt_run (t, 1);
  kt_assert_close ("strided mvn", kt_out_f32 (t, 0), want, total, 1e-6, 1e-5);
  kt_free (t);

  /* Contiguous groups of 3000 (the vector partial sums and their tail),
   * far from zero (mean ~101): MVN over axis 2 and NormalizeL2 over it. */
  for (gint64 i = 0; i < total; i++)
    x[i] += 100.0f;
  for (gint l2 = 0; l2 < 2; l2++) {
    for (gint64 g = 0; g < n * c; g++) {
      const float *xg = x + g * hw;
      double sum = 0, sq = 0;
      for (gint64 i = 0; i < hw; i++)
        sum += xg[i];
      double mean = l2 ? 0.0 : sum / hw;
      for (gint64 i = 0; i < hw; i++)
        sq += (xg[i] - mean) * (xg[i] - mean);
      double div = l2 ? sqrt (sq + 1e-4) : sqrt (sq / hw + 1e-4);
      for (gint64 i = 0; i < hw; i++)
        want[g * hw + i] = (float) ((xg[i] - mean) / div);
    }
    static const gint64 last[] = { 2 };
    t = kt_new (l2 ? &ir_kernel_normalize_l2 : &ir_kernel_mvn, l2 ? "opset1" : "opset6");
    kt_attr (t, "eps", "1e-4");
    if (l2) {
      kt_attr (t, "eps_mode", "add");
    } else {
      kt_attr (t, "normalize_variance", "true");
      kt_attr (t, "eps_mode", "inside_sqrt");
    }
    kt_input (t, M2I_ET_F32, SHAPE (n, c, hw), x, FALSE);
    kt_input (t, M2I_ET_I64, SHAPE (1), last, TRUE);
    t->ctx.n_threads = 2;
    kt_run (t, 1);
    kt_assert_close (l2 ? "contiguous l2" : "contiguous mvn", kt_out_f32 (t, 0), want, total,
        l2 ? 1e-7 : 1e-5, 1e-5);
    kt_free (t);
  }
  g_free (x);
  g_free (want);
}

static void
test_errors (void)
{
  static float buf[16];
  static const gint64 ax1[] = { 1 }, twice[] = { 1, -3 };
  KTest *t = kt_new (&ir_kernel_mvn, "opset6");
  kt_attr (t, "normalize_variance", "true");
  kt_attr (t, "eps_mode", "inside_sqrt");
  kt_input (t, M2I_ET_F32, SHAPE (1, 2, 2, 2), buf, FALSE);
  kt_input (t, M2I_ET_I64, SHAPE (1), ax1, TRUE);
  kt_expect_error (t, 1, M2I_ERROR_MALFORMED, "attribute eps is required");
  kt_free (t);

  t = kt_new (&ir_kernel_mvn, "opset6");
  kt_attr (t, "eps", "1e-3");
  kt_attr (t, "eps_mode", "inside");
  kt_input (t, M2I_ET_F32, SHAPE (1, 2, 2, 2), buf, FALSE);
  kt_input (t, M2I_ET_I64, SHAPE (1), ax1, TRUE);
  kt_expect_error (t, 1, M2I_ERROR_UNSUPPORTED, "inside");
  kt_free (t);

  t = kt_new (&ir_kernel_mvn, "opset2");
  kt_attr (t, "eps", "1e-3");
  kt_attr (t, "across_channels", "true");
  kt_attr (t, "reduction_axes", "2,3");
  kt_input (t, M2I_ET_F32, SHAPE (1, 2, 2, 2), buf, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "cannot both be given");
  kt_free (t);

  t = kt_new (&ir_kernel_normalize_l2, "opset1");
  kt_attr (t, "eps", "1e-3");
  kt_attr (t, "eps_mode", "add");
  kt_input (t, M2I_ET_F32, SHAPE (1, 2, 2, 2), buf, FALSE);
  kt_input (t, M2I_ET_I64, SHAPE (2), twice, TRUE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "given twice");
  kt_free (t);

  t = kt_new (&ir_kernel_lrn, "opset1");
  kt_attr (t, "alpha", "1e-4");
  kt_attr (t, "beta", "0.75");
  kt_attr (t, "bias", "1");
  kt_attr (t, "size", "0");
  kt_input (t, M2I_ET_F32, SHAPE (1, 2, 2, 2), buf, FALSE);
  kt_input (t, M2I_ET_I64, SHAPE (1), ax1, TRUE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "size=\"0\"");
  kt_free (t);

  t = kt_new (&ir_kernel_log_softmax, "opset5");
  kt_attr (t, "axis", "4");
  kt_input (t, M2I_ET_F32, SHAPE (1, 2, 2, 2), buf, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "axis 4 is out of range");
  kt_free (t);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/kernels/normalize/mvn6", test_mvn6);
  g_test_add_func ("/kernels/normalize/mvn1", test_mvn1);
  g_test_add_func ("/kernels/normalize/normalize-l2", test_normalize_l2);
  g_test_add_func ("/kernels/normalize/lrn", test_lrn);
  g_test_add_func ("/kernels/normalize/log-softmax", test_log_softmax);
  g_test_add_func ("/kernels/normalize/large", test_large);
  g_test_add_func ("/kernels/normalize/errors", test_errors);
  return g_test_run ();
}
