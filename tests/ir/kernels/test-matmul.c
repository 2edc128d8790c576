/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* MatMul-1: the blocked kernel against a naive loop over many shapes
 * (transposes, 1-D operands, batch broadcasting, constant and run-time
 * right operands, sizes around the register tiles), against torch.matmul
 * on committed vectors, integer types by hand, and the error cases. Run
 * once per M2I_CPU_DISABLE level. */
#include "kernel-test.h"
#include <ir/kernels/gemm.h>

typedef struct {
  M2iShape a, b;
  gboolean ta, tb;
} MmCase;

/* Naive reference with numpy's rules, written independently of the kernel. */
static M2iShape
ref_matmul (const MmCase *c, const float *a, const float *b, float **out)
{
  M2iShape as = c->a, bs = c->b;
  gboolean ta = c->ta, tb = c->tb, av = as.rank == 1, bv = bs.rank == 1;
  if (av) {
    as = (M2iShape) { 2, { 1, c->a.dims[0] } };
    ta = FALSE;
  }
  if (bv) {
    bs = (M2iShape) { 2, { c->b.dims[0], 1 } };
    tb = FALSE;
  }
  gint64 m = as.dims[as.rank - 2], k = as.dims[as.rank - 1];
  if (ta) {
    m = as.dims[as.rank - 1];
    k = as.dims[as.rank - 2];
  }
  gint64 n = tb ? bs.dims[bs.rank - 2] : bs.dims[bs.rank - 1];
  gint br = MAX (as.rank, bs.rank) - 2;
  M2iShape os = { br };
  for (gint d = 0; d < br; d++) {
    gint ia = d - (br - (as.rank - 2)), ib = d - (br - (bs.rank - 2));
    gint64 da = ia >= 0 ? as.dims[ia] : 1, db = ib >= 0 ? bs.dims[ib] : 1;
    os.dims[d] = MAX (da, db);
  }
  gint64 batches = m2i_shape_numel (&os);
  *out = g_new0 (float, MAX (batches * m * n, 1));
  for (gint64 bi = 0; bi < batches; bi++) {
    /* Unravel the batch index, then ravel it into each operand. */
    gint64 rem = bi, aoff = 0, boff = 0, astr = 1, bstr = 1;
    for (gint d = br - 1; d >= 0; d--) {
      gint64 idx = rem % os.dims[d];
      rem /= os.dims[d];
      gint ia = d - (br - (as.rank - 2)), ib = d - (br - (bs.rank - 2));
      if (ia >= 0) {
        aoff += (as.dims[ia] == 1 ? 0 : idx) * astr;
        astr *= as.dims[ia];
      }
      if (ib >= 0) {
        boff += (bs.dims[ib] == 1 ? 0 : idx) * bstr;
        bstr *= bs.dims[ib];
      }
    }
    const float *A = a + aoff * m * k, *B = b + boff * k * n;
    for (gint64 i = 0; i < m; i++)
      for (gint64 j = 0; j < n; j++) {
        double acc = 0;
        for (gint64 p = 0; p < k; p++)
          acc += (double) (ta ? A[p * m + i] : A[i * k + p]) * (tb ? B[j * k + p] : B[p * n + j]);
        (*out)[(bi * m + i) * n + j] = (float) acc;
      }
  }
  if (!av)
    os.dims[os.rank++] = m;
  if (!bv)
    os.dims[os.rank++] = n;
  return os;
}

static void
check_case (const MmCase *c, gboolean const_b, gint threads)
{
  gsize na = m2i_shape_numel (&c->a), nb = m2i_shape_numel (&c->b);
  float *a = g_new (float, MAX (na, 1)), *b = g_new (float, MAX (nb, 1)), *want;
  kt_fill (a, na, (guint32) na + 11, -1, 1);
  kt_fill (b, nb, (guint32) nb + 5, -1, 1);
  M2iShape os = ref_matmul (c, a, b, &want);
  KTest *t = kt_new (&ir_kernel_matmul, "opset1");
  t->ctx.n_threads = threads;
  kt_attr (t, "transpose_a", c->ta ? "true" : "false");
  kt_attr (t, "transpose_b", c->tb ? "True" : "0");
  kt_input (t, M2I_ET_F32, c->a, a, FALSE);
  kt_input (t, M2I_ET_F32, c->b, b, const_b);
  kt_run (t, 1);
  if (!m2i_shape_equal (&t->outputs[0].shape, &os))
    g_error ("matmul %s x %s: output %s, expected %s", ir_k_shape_str (&c->a, 0),
        ir_k_shape_str (&c->b, 1), ir_k_shape_str (&t->outputs[0].shape, 2),
        ir_k_shape_str (&os, 3));
  g_autofree gchar *what = g_strdup_printf ("matmul %s%s x %s%s",
      ir_k_shape_str (&c->a, 0), c->ta ? "^T" : "", ir_k_shape_str (&c->b, 1), c->tb ? "^T" : "");
  kt_assert_close (what, kt_out_f32 (t, 0), want, m2i_shape_numel (&os), 1e-4, 1e-4);
  kt_free (t);
  g_free (a);
  g_free (b);
  g_free (want);
}

static void
test_shapes (void)
{
  const MmCase cases[] = {
    { SHAPE (1, 3136), SHAPE (128, 3136), FALSE, TRUE },      /* a Linear layer */
    { SHAPE (1, 128), SHAPE (10, 128), FALSE, TRUE },
    { SHAPE (7, 9), SHAPE (9, 50), FALSE, FALSE },
    { SHAPE (9, 7), SHAPE (50, 9), TRUE, TRUE },
    { SHAPE (17, 300), SHAPE (300, 97), FALSE, FALSE },       /* several K blocks */
    { SHAPE (2, 60, 300), SHAPE (300, 200), FALSE, FALSE },   /* threads */
    { SHAPE (2, 3, 5, 4), SHAPE (4, 6), FALSE, FALSE },       /* batch broadcast */
    { SHAPE (3, 1, 4, 5), SHAPE (2, 5, 3), FALSE, FALSE },
    { SHAPE (5), SHAPE (5, 3), FALSE, FALSE },                /* 1-D left */
    { SHAPE (4, 5), SHAPE (5), FALSE, FALSE },                /* 1-D right */
    { SHAPE (5), SHAPE (5), TRUE, TRUE },                     /* dot product */
    { SHAPE (2, 5), SHAPE (3, 5, 1), FALSE, FALSE },
    { SHAPE (1, 1), SHAPE (1, 1), FALSE, FALSE },
    { SHAPE (3, 0), SHAPE (0, 4), FALSE, FALSE },             /* K = 0: zeros */
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    check_case (&cases[i], TRUE, 2);
    check_case (&cases[i], FALSE, 1 + i % 3);
  }
  /* Enough work for 2-3 slices, over panels that do not share out evenly:
   * the slices take vectors of columns, starting inside packed panels
   * (one row, several rows, a last vector partly used). */
  const MmCase split[] = {
    { SHAPE (1, 8192), SHAPE (300, 8192), FALSE, TRUE },
    { SHAPE (1, 8192), SHAPE (440, 8192), FALSE, TRUE },
    { SHAPE (4, 2000), SHAPE (2000, 330), FALSE, FALSE },
  };
  for (guint i = 0; i < G_N_ELEMENTS (split); i++)
    for (gint threads = 2; threads <= 3; threads++) {
      check_case (&split[i], TRUE, threads);
      check_case (&split[i], FALSE, threads);
    }
  GRand *r = g_rand_new_with_seed (77);
  for (gint i = 0; i < 60; i++) {
    gint64 m = g_rand_int_range (r, 1, 40), k = g_rand_int_range (r, 1, 70);
    gint64 n = g_rand_int_range (r, 1, 120), bt = g_rand_int_range (r, 1, 4);
    MmCase c = { .ta = g_rand_boolean (r), .tb = g_rand_boolean (r) };
    c.a = c.ta ? SHAPE (bt, k, m) : SHAPE (bt, m, k);
    c.b = c.tb ? SHAPE (n, k) : SHAPE (k, n);
    check_case (&c, g_rand_boolean (r), 1 + i % 2);
  }
  g_rand_free (r);
}

static void
test_torch_vectors (void)
{
  static const struct { const char *name; gboolean ta, tb; } cases[] = {
    { "mm_basic", FALSE, FALSE }, { "mm_trans_bcast", TRUE, TRUE },
    { "mm_vec_left", FALSE, FALSE }, { "mm_vec_right", FALSE, TRUE },
    { "mm_vec_vec", FALSE, FALSE }, { "mm_fc", FALSE, TRUE },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    g_autofree gchar *an = g_strdup_printf ("%s_a", cases[i].name);
    g_autofree gchar *bn = g_strdup_printf ("%s_b", cases[i].name);
    g_autofree gchar *yn = g_strdup_printf ("%s_y", cases[i].name);
    KtArray *a = kt_load (an), *b = kt_load (bn), *y = kt_load (yn);
    KTest *t = kt_new (&ir_kernel_matmul, "opset1");
    kt_attr (t, "transpose_a", cases[i].ta ? "true" : "false");
    kt_attr (t, "transpose_b", cases[i].tb ? "true" : "false");
    kt_input (t, a->type, a->shape, a->data, FALSE);
    kt_input (t, b->type, b->shape, b->data, i % 2);
    kt_run (t, 1);
    if (!m2i_shape_equal (&t->outputs[0].shape, &y->shape))
      g_error ("%s: output %s, torch %s", cases[i].name,
          ir_k_shape_str (&t->outputs[0].shape, 0), ir_k_shape_str (&y->shape, 1));
    kt_assert_close (cases[i].name, kt_out_f32 (t, 0), y->data,
        m2i_shape_numel (&y->shape), 1e-5, 1e-5);
    kt_free (t);
    kt_array_free (a);
    kt_array_free (b);
    kt_array_free (y);
  }
}

static void
test_integers (void)
{
  /* [[1,2,3],[4,5,6]] · [[7,8],[9,10],[11,12]] = [[58,64],[139,154]] */
  static const gint32 a32[] = { 1, 2, 3, 4, 5, 6 }, b32[] = { 7, 8, 9, 10, 11, 12 };
  KTest *t = kt_new (&ir_kernel_matmul, "opset1");
  kt_input (t, M2I_ET_I32, SHAPE (2, 3), a32, FALSE);
  kt_input (t, M2I_ET_I32, SHAPE (3, 2), b32, TRUE);
  kt_run (t, 1);
  const gint32 *y = t->outputs[0].data;
  g_assert_cmpint (y[0], ==, 58);
  g_assert_cmpint (y[1], ==, 64);
  g_assert_cmpint (y[2], ==, 139);
  g_assert_cmpint (y[3], ==, 154);
  kt_free (t);

  /* transpose_b with i64 and values beyond 32 bits: [3e9, -1] · [[2, 5]]ᵀ */
  static const gint64 a64[] = { 3000000000LL, -1 }, b64[] = { 2, 5 };
  t = kt_new (&ir_kernel_matmul, "opset1");
  kt_attr (t, "transpose_b", "true");
  kt_input (t, M2I_ET_I64, SHAPE (1, 2), a64, FALSE);
  kt_input (t, M2I_ET_I64, SHAPE (1, 2), b64, FALSE);
  kt_run (t, 1);
  g_assert_cmpint (((const gint64 *) t->outputs[0].data)[0], ==, 5999999995LL);
  kt_free (t);
}

/* A fully connected layer with its bias and ReLU fused gives exactly what
 * MatMul, Add and ReLU give one after the other (one row, several rows,
 * batched, constant and run-time weights, K over one block, a partial
 * last panel). */
static void
test_fused_bias_relu (void)
{
  const struct { M2iShape a, b; gboolean tb, const_b; } cases[] = {
    { SHAPE (1, 300), SHAPE (70, 300), TRUE, TRUE },
    { SHAPE (13, 40), SHAPE (40, 50), FALSE, FALSE },
    { SHAPE (2, 3, 20), SHAPE (20, 33), FALSE, TRUE },
    { SHAPE (11, 300), SHAPE (300, 70), FALSE, TRUE },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    gsize na = m2i_shape_numel (&cases[i].a), nb = m2i_shape_numel (&cases[i].b);
    gint64 n = cases[i].tb ? cases[i].b.dims[0] : cases[i].b.dims[cases[i].b.rank - 1];
    float *a = g_new (float, na), *b = g_new (float, nb), *bias = g_new (float, n);
    kt_fill (a, na, 51 + i, -1, 1);
    kt_fill (b, nb, 52 + i, -1, 1);
    kt_fill (bias, n, 53 + i, -1, 1);
    KTest *mm = kt_new (&ir_kernel_matmul, "opset1");
    kt_attr (mm, "transpose_b", cases[i].tb ? "true" : "false");
    kt_input (mm, M2I_ET_F32, cases[i].a, a, FALSE);
    kt_input (mm, M2I_ET_F32, cases[i].b, b, cases[i].const_b);
    kt_run (mm, 1);
    M2iShape os = mm->outputs[0].shape;
    KTest *add = kt_new (&ir_kernel_add, "opset1");
    kt_input (add, M2I_ET_F32, os, mm->outputs[0].data, FALSE);
    kt_input (add, M2I_ET_F32, SHAPE (n), bias, TRUE);
    kt_run (add, 1);
    KTest *act = kt_new (&ir_kernel_relu, "opset1");
    kt_input (act, M2I_ET_F32, os, add->outputs[0].data, FALSE);
    kt_run (act, 1);
    KTest *fused = kt_new (&ir_kernel_matmul, "opset1");
    kt_attr (fused, "transpose_b", cases[i].tb ? "true" : "false");
    kt_input (fused, M2I_ET_F32, cases[i].a, a, FALSE);
    kt_input (fused, M2I_ET_F32, cases[i].b, b, cases[i].const_b);
    GError *error = NULL;
    g_assert_true (kt_infer (fused, 1, &error));
    g_assert_true (ir_k_fuse_bias_relu (&fused->ctx, bias, n, TRUE, &error));
    g_assert_true (kt_execute (fused, &error));
    gsize bytes = m2i_tensor_nbytes (&act->outputs[0]);
    g_assert_cmpmem (fused->outputs[0].data, bytes, act->outputs[0].data, bytes);
    kt_free (mm);
    kt_free (add);
    kt_free (act);
    kt_free (fused);
    g_free (a);
    g_free (b);
    g_free (bias);
  }
}

/* One row against large constant weights that are exact in fp16 (a
 * float16 model's), kept as halves where the CPU has one-row kernels for
 * them: within the naive loop's tolerance, and bit-identical to the f32
 * kernels (the weights kept as floats: switched off, or one value not
 * exact in fp16, where A is 0), with bias and ReLU fused; K over several blocks, a
 * partial last panel, one and two threads. */
static void
test_half_weights (void)
{
  const struct { M2iShape a, b; gboolean tb; } cases[] = {
    { SHAPE (1, 6248), SHAPE (6248, 128), FALSE },    /* license-plate-recognition's */
    { SHAPE (1, 2000), SHAPE (300, 2000), TRUE },
  };
  gboolean can = ir_gemm_half_b (ir_gemm_arch ());
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    for (gint threads = 1; threads <= 2; threads++) {
      MmCase c = { cases[i].a, cases[i].b, FALSE, cases[i].tb };
      gsize na = m2i_shape_numel (&c.a), nb = m2i_shape_numel (&c.b);
      gint64 n = c.tb ? c.b.dims[0] : c.b.dims[1];
      float *a = g_new (float, na), *b = g_new (float, nb), *bias = g_new (float, n), *want;
      kt_fill (a, na, 61 + i, -1, 1);
      kt_fill (b, nb, 62 + i, -1, 1);
      kt_fill (bias, n, 63 + i, -0.1, 0.1);
      for (gsize q = 0; q < nb; q++)
        b[q] = m2i_f16_to_f32 (m2i_f32_to_f16 (b[q]));
      /* Weight nb / 2, made inexact in the third run, meets a zero of A:
       * the sums do not change. */
      gint64 k = c.a.dims[1];
      a[c.tb ? (gint64) (nb / 2) % k : (gint64) (nb / 2) / n] = 0.0f;
      ref_matmul (&c, a, b, &want);
      for (gint64 j = 0; j < n; j++)
        want[j] = MAX (want[j] + bias[j], 0.0f);
      /* Halves; floats (switched off); floats (one weight not exact). */
      float *got[3];
      for (gint v = 0; v < 3; v++) {
        ir_k_matmul_half_set_enabled (v != 1);
        float keep = b[nb / 2];
        if (v == 2)
          b[nb / 2] = 1.0f / 3.0f;
        KTest *t = kt_new (&ir_kernel_matmul, "opset1");
        t->ctx.n_threads = threads;
        kt_attr (t, "transpose_b", c.tb ? "true" : "false");
        kt_input (t, M2I_ET_F32, c.a, a, FALSE);
        kt_input (t, M2I_ET_F32, c.b, b, TRUE);
        GError *error = NULL;
        g_assert_true (kt_infer (t, 1, &error));
        g_assert_true (ir_k_fuse_bias_relu (&t->ctx, bias, n, TRUE, &error));
        g_assert_true (kt_execute (t, &error));
        g_assert_cmpint (ir_k_matmul_half_b (&t->ctx), ==, v == 0 && can);
        got[v] = g_memdup2 (kt_out_f32 (t, 0), n * sizeof (float));
        kt_free (t);
        b[nb / 2] = keep;
      }
      ir_k_matmul_half_set_enabled (TRUE);
      kt_assert_close ("matmul, weights in halves", got[0], want, n, 1e-4, 1e-4);
      g_assert_cmpmem (got[0], n * sizeof (float), got[1], n * sizeof (float));
      g_assert_cmpmem (got[0], n * sizeof (float), got[2], n * sizeof (float));
      for (gint v = 0; v < 3; v++)
        g_free (got[v]);
      g_free (a);
      g_free (b);
      g_free (bias);
      g_free (want);
    }
}

static void
test_errors (void)
{
  static float buf[64];
  KTest *t = kt_new (&ir_kernel_matmul, "opset1");
  kt_input (t, M2I_ET_F32, SHAPE (2, 3), buf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (4, 2), buf, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "inner dimensions differ");
  kt_free (t);

  t = kt_new (&ir_kernel_matmul, "opset1");
  kt_input (t, M2I_ET_F32, SHAPE (2, 2, 3), buf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (3, 3, 2), buf, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "batch axes");
  kt_free (t);

  t = kt_new (&ir_kernel_matmul, "opset1");
  kt_input (t, M2I_ET_F32, SHAPE (2, 3), buf, FALSE);
  kt_input (t, M2I_ET_I32, SHAPE (3, 2), buf, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "different element types");
  kt_free (t);

  t = kt_new (&ir_kernel_matmul, "opset1");
  kt_input (t, M2I_ET_U8, SHAPE (2, 3), buf, FALSE);
  kt_input (t, M2I_ET_U8, SHAPE (3, 2), buf, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_UNSUPPORTED, "element type u8");
  kt_free (t);

  t = kt_new (&ir_kernel_matmul, "opset1");
  kt_input (t, M2I_ET_F32, SCALAR, buf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (3, 2), buf, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "scalars");
  kt_free (t);

  t = kt_new (&ir_kernel_matmul, "opset1");
  kt_attr (t, "transpose_a", "yes");
  kt_input (t, M2I_ET_F32, SHAPE (2, 3), buf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (3, 2), buf, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_MALFORMED, "transpose_a");
  kt_free (t);

  t = kt_new (&ir_kernel_matmul, "opset1");
  kt_input (t, M2I_ET_F32, SHAPE (2, 3), buf, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "expects 2 inputs, has 1");
  kt_free (t);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/matmul/shapes", test_shapes);
  g_test_add_func ("/matmul/torch", test_torch_vectors);
  g_test_add_func ("/matmul/integers", test_integers);
  g_test_add_func ("/matmul/errors", test_errors);
  g_test_add_func ("/matmul/fused-bias-relu", test_fused_bias_relu);
  g_test_add_func ("/matmul/half-weights", test_half_weights);
  return g_test_run ();
}
