/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* MaxPool-1/8 and AvgPool-1: the examples worked out in the MaxPool-8
 * specification, vectors from a spec-following NumPy loop cross-checked
 * with torch's max_pool2d/avg_pool2d (tests/data/ir-kernels/gen.py),
 * 1-D/3-D inputs, integer types and the error cases. */
#include "kernel-test.h"

static KTest *
pool_new (const M2iOpKernel *k, const char *version, const char *kernel,
    const char *strides, const char *pb, const char *pe)
{
  KTest *t = kt_new (k, version);
  kt_attr (t, "kernel", kernel);
  kt_attr (t, "strides", strides);
  if (pb)
    kt_attr (t, "pads_begin", pb);
  if (pe)
    kt_attr (t, "pads_end", pe);
  return t;
}

static void
check_max (KTest *t, const float *want, const gint64 *want_idx, gsize n)
{
  g_assert_cmpint (m2i_shape_numel (&t->outputs[0].shape), ==, n);
  kt_assert_close ("maxpool values", kt_out_f32 (t, 0), want, n, 0, 0);
  if (!want_idx)
    return;
  const M2iTensor *ind = &t->outputs[1];
  for (gsize i = 0; i < n; i++) {
    gint64 got = ind->type == M2I_ET_I32 ? ((const gint32 *) ind->data)[i]
        : ((const gint64 *) ind->data)[i];
    if (got != want_idx[i])
      g_error ("maxpool index %" G_GSIZE_FORMAT ": %" G_GINT64_FORMAT ", expected %"
          G_GINT64_FORMAT, i, got, want_idx[i]);
  }
}

/* The seven examples of the MaxPool-8 specification. */
static void
test_spec_examples (void)
{
  static const float x33[] = { -1, 2, 3, 4, 5, -6, -7, 8, 9 };
  KTest *t;

  /* 1: explicit pads 1, kernel 2, stride 1. The spec prints -6 (index 5)
   * at row 1, column 3, but that window covers rows 0..1, columns 2..3,
   * i.e. 3 and -6: the maximum is 3 at index 2 (torch.max_pool2d agrees). */
  t = pool_new (&ir_kernel_max_pool, "opset8", "2,2", "1,1", "1,1", "1,1");
  kt_input (t, M2I_ET_F32, SHAPE (1, 1, 3, 3), x33, FALSE);
  kt_run (t, 2);
  {
    static const float y[] = { -1, 2, 3, 3, 4, 5, 5, 3, 4, 8, 9, 9, -7, 8, 9, 9 };
    static const gint64 i[] = { 0, 1, 2, 2, 3, 4, 4, 2, 3, 7, 8, 8, 6, 7, 8, 8 };
    check_max (t, y, i, 16);
  }
  kt_free (t);

  /* 2: 1-D, valid */
  static const float x7[] = { -1, 2, 3, 5, -7, 9, 1 };
  t = pool_new (&ir_kernel_max_pool, "opset8", "3", "1", NULL, NULL);
  kt_attr (t, "auto_pad", "valid");
  kt_input (t, M2I_ET_F32, SHAPE (1, 1, 7), x7, FALSE);
  kt_run (t, 2);
  {
    static const float y[] = { 3, 5, 5, 9, 9 };
    static const gint64 i[] = { 2, 3, 3, 5, 5 };
    check_max (t, y, i, 5);
  }
  kt_free (t);

  /* 3: same_lower */
  t = pool_new (&ir_kernel_max_pool, "opset8", "2,2", "1,1", NULL, NULL);
  kt_attr (t, "auto_pad", "same_lower");
  kt_input (t, M2I_ET_F32, SHAPE (1, 1, 3, 3), x33, FALSE);
  kt_run (t, 2);
  {
    static const float y[] = { -1, 2, 3, 4, 5, 5, 4, 8, 9 };
    static const gint64 i[] = { 0, 1, 2, 3, 4, 4, 3, 7, 8 };
    check_max (t, y, i, 9);
  }
  kt_free (t);

  /* 4: same_upper on two channels, indices from axis 0 */
  static const float x233[] = { -1, 2, 3, 4, 5, -6, -7, 8, 9, 2, -1, 5, 6, -7, 1, 8, 2, -3 };
  t = pool_new (&ir_kernel_max_pool, "opset8", "2,2", "1,1", NULL, NULL);
  kt_attr (t, "auto_pad", "same_upper");
  kt_input (t, M2I_ET_F32, SHAPE (1, 2, 3, 3), x233, FALSE);
  kt_run (t, 2);
  {
    static const float y[] = { 5, 5, 3, 8, 9, 9, 8, 9, 9, 6, 5, 5, 8, 2, 1, 8, 2, -3 };
    static const gint64 i[] = { 4, 4, 2, 7, 8, 8, 7, 8, 8, 12, 11, 11, 15, 16, 14, 15, 16, 17 };
    check_max (t, y, i, 18);
  }
  kt_free (t);

  /* 5: valid with ceil rounding, stride 2 */
  t = pool_new (&ir_kernel_max_pool, "opset8", "2,2", "2,2", NULL, NULL);
  kt_attr (t, "auto_pad", "valid");
  kt_attr (t, "rounding_type", "ceil");
  kt_input (t, M2I_ET_F32, SHAPE (1, 1, 3, 3), x33, FALSE);
  kt_run (t, 2);
  {
    static const float y[] = { 5, 3, 8, 9 };
    static const gint64 i[] = { 4, 2, 7, 8 };
    check_max (t, y, i, 4);
  }
  kt_free (t);

  /* 6: dilations 2 with pads 1 */
  static const float x19[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };
  t = pool_new (&ir_kernel_max_pool, "opset8", "2,2", "1,1", "1,1", "1,1");
  kt_attr (t, "dilations", "2,2");
  kt_input (t, M2I_ET_F32, SHAPE (1, 1, 3, 3), x19, FALSE);
  kt_run (t, 2);
  {
    static const float y[] = { 5, 6, 5, 8, 9, 8, 5, 6, 5 };
    static const gint64 i[] = { 4, 5, 4, 7, 8, 7, 4, 5, 4 };
    check_max (t, y, i, 9);
  }
  kt_free (t);

  /* 7: axis 2, i32 indices */
  static const float x18[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18 };
  t = pool_new (&ir_kernel_max_pool, "opset8", "2,2", "1,1", "0,0", "0,0");
  kt_attr (t, "axis", "2");
  kt_attr (t, "index_element_type", "i32");
  kt_input (t, M2I_ET_F32, SHAPE (1, 2, 3, 3), x18, FALSE);
  kt_run (t, 2);
  g_assert_cmpint (t->outputs[1].type, ==, M2I_ET_I32);
  {
    static const float y[] = { 5, 6, 8, 9, 14, 15, 17, 18 };
    static const gint64 i[] = { 4, 5, 7, 8, 4, 5, 7, 8 };
    check_max (t, y, i, 8);
  }
  kt_free (t);
}

static void
test_max_vectors (void)
{
  static const struct {
    const char *name, *kernel, *strides, *pb, *pe, *dil;
    gboolean ceil;
  } cases[] = {
    { "maxpool_sq", "3,3", "2,2", "0,0", "0,0", "1,1", TRUE },
    { "maxpool_pad_dil", "2,3", "1,2", "1,1", "1,1", "2,1", FALSE },
    { "maxpool_asym", "3,3", "2,2", "0,1", "1,1", "1,1", TRUE },
  };
  KtArray *x = kt_load ("pool_x");
  for (guint c = 0; c < G_N_ELEMENTS (cases); c++) {
    g_autofree gchar *yn = g_strdup_printf ("%s_y", cases[c].name);
    g_autofree gchar *in = g_strdup_printf ("%s_idx", cases[c].name);
    KtArray *y = kt_load (yn), *idx = kt_load (in);
    for (gint v8 = 0; v8 < 2; v8++) {
      if (!v8 && strcmp (cases[c].dil, "1,1"))
        continue;                       /* MaxPool-1 has no dilations */
      KTest *t = pool_new (&ir_kernel_max_pool, v8 ? "opset8" : "opset1", cases[c].kernel,
          cases[c].strides, cases[c].pb, cases[c].pe);
      kt_attr (t, "rounding_type", cases[c].ceil ? "ceil" : "floor");
      if (v8) {
        kt_attr (t, "dilations", cases[c].dil);
        kt_attr (t, "axis", "-2");      /* = 2: per plane, as torch counts */
      }
      kt_input (t, x->type, x->shape, x->data, FALSE);
      t->ctx.n_threads = 1 + c;
      kt_run (t, v8 ? 2 : 1);
      g_assert_true (m2i_shape_equal (&t->outputs[0].shape, &y->shape));
      check_max (t, y->data, v8 ? idx->data : NULL, m2i_shape_numel (&y->shape));
      kt_free (t);
    }
    kt_array_free (y);
    kt_array_free (idx);
  }
  /* Default axis 0: indices over the whole tensor. */
  KtArray *idx = kt_load ("maxpool_axis0_idx");
  KTest *t = pool_new (&ir_kernel_max_pool, "opset8", "2,2", "2,2", "0,0", "0,0");
  kt_input (t, x->type, x->shape, x->data, FALSE);
  kt_run (t, 2);
  const gint64 *got = t->outputs[1].data;
  for (gint64 i = 0; i < m2i_shape_numel (&idx->shape); i++)
    g_assert_cmpint (got[i], ==, ((const gint64 *) idx->data)[i]);
  kt_free (t);
  kt_array_free (idx);
  kt_array_free (x);
}

static void
test_avg_vectors (void)
{
  static const struct {
    const char *name, *kernel, *strides, *pb, *pe;
    gboolean ceil, exclude;
  } cases[] = {
    { "avgpool_incl", "3,3", "2,2", "1,1", "1,1", FALSE, FALSE },
    { "avgpool_excl", "3,3", "2,2", "1,1", "1,1", FALSE, TRUE },
    { "avgpool_ceil", "2,2", "2,2", "0,0", "0,0", TRUE, FALSE },
    { "avgpool_ceil_pad", "3,3", "2,2", "1,0", "1,0", TRUE, FALSE },
  };
  KtArray *x = kt_load ("pool_x");
  for (guint c = 0; c < G_N_ELEMENTS (cases); c++) {
    g_autofree gchar *yn = g_strdup_printf ("%s_y", cases[c].name);
    KtArray *y = kt_load (yn);
    KTest *t = pool_new (&ir_kernel_avg_pool, "opset1", cases[c].kernel, cases[c].strides,
        cases[c].pb, cases[c].pe);
    kt_attr (t, "rounding_type", cases[c].ceil ? "ceil" : "floor");
    kt_attr (t, "exclude-pad", cases[c].exclude ? "true" : "false");
    kt_input (t, x->type, x->shape, x->data, FALSE);
    kt_run (t, 1);
    g_assert_true (m2i_shape_equal (&t->outputs[0].shape, &y->shape));
    kt_assert_close (cases[c].name, kt_out_f32 (t, 0), y->data, m2i_shape_numel (&y->shape),
        1e-6, 1e-6);
    kt_free (t);
    kt_array_free (y);
  }
  kt_array_free (x);
}

/* AvgPool windows that all lie inside the plane (no pads, or end pads no
 * window reaches, floor rounding): 2×2 stride 2 (even and odd planes, the
 * last row and column dropped), 3×3 at strides 1 and 2, 1×3, a 1×1 output,
 * against the spec's sum over the window divided by its size, summed in
 * row-major tap order as the kernel does — bit for bit. */
static void
test_avg_full_windows (void)
{
  static const struct {
    gint64 c, h, w;
    const char *kernel, *strides, *pe;
    gint64 kh, kw, sh, sw;
  } cases[] = {
    { 5, 64, 32, "2,2", "2,2", "0,0", 2, 2, 2, 2 },
    { 3, 9, 7, "2,2", "2,2", "0,0", 2, 2, 2, 2 },
    /* the 16-output steps of the AVX-512 2×2 path: 10 outputs (the odd
     * columns' vector part-filled), 22 (a whole step and a partial one) */
    { 2, 5, 20, "2,2", "2,2", "0,0", 2, 2, 2, 2 },
    { 2, 6, 45, "2,2", "2,2", "0,0", 2, 2, 2, 2 },
    { 2, 11, 13, "3,3", "1,1", "0,0", 3, 3, 1, 1 },
    { 2, 11, 13, "3,3", "2,2", "1,1", 3, 3, 2, 2 },
    { 4, 6, 37, "1,3", "1,2", "0,0", 1, 3, 1, 2 },
    { 3, 2, 2, "2,2", "2,2", "0,0", 2, 2, 2, 2 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    gint64 c = cases[i].c, h = cases[i].h, w = cases[i].w;
    gint64 kh = cases[i].kh, kw = cases[i].kw, sh = cases[i].sh, sw = cases[i].sw;
    gint64 oh = (h - kh) / sh + 1, ow = (w - kw) / sw + 1;
    float *x = g_new (float, c * h * w), *want = g_new (float, c * oh * ow);
    kt_fill (x, c * h * w, 5 + i, -3, 3);
    for (gint64 ch = 0; ch < c; ch++)
      for (gint64 y = 0; y < oh; y++)
        for (gint64 z = 0; z < ow; z++) {
          float sum = 0.0f;
          for (gint64 ky = 0; ky < kh; ky++)
            for (gint64 kx = 0; kx < kw; kx++)
              sum += x[(ch * h + y * sh + ky) * w + z * sw + kx];
          want[(ch * oh + y) * ow + z] = sum / (float) (kh * kw);
        }
    for (gint exclude = 0; exclude < 2; exclude++) {
      KTest *t = pool_new (&ir_kernel_avg_pool, "opset1", cases[i].kernel, cases[i].strides,
          "0,0", cases[i].pe);
      kt_attr (t, "exclude-pad", exclude ? "true" : "false");
      kt_input (t, M2I_ET_F32, SHAPE (1, c, h, w), x, FALSE);
      kt_run (t, 1);
      g_assert_cmpint (t->outputs[0].shape.dims[2], ==, oh);
      g_assert_cmpint (t->outputs[0].shape.dims[3], ==, ow);
      g_assert_cmpmem (kt_out_f32 (t, 0), c * oh * ow * sizeof (float), want,
          c * oh * ow * sizeof (float));
      kt_free (t);
    }
    g_free (x);
    g_free (want);
  }
}

/* 3-D pooling and integer inputs, by hand. */
static void
test_other_ranks_types (void)
{
  /* A 2×2×2 cube of 1..8 and the global 2×2×2 window. */
  static const float cube[] = { 1, 2, 3, 4, 5, 6, 7, 8 };
  KTest *t = pool_new (&ir_kernel_avg_pool, "opset1", "2,2,2", "1,1,1", "0,0,0", "0,0,0");
  kt_input (t, M2I_ET_F32, SHAPE (1, 1, 2, 2, 2), cube, FALSE);
  kt_run (t, 1);
  g_assert_cmpfloat (kt_out_f32 (t, 0)[0], ==, 4.5f);
  kt_free (t);

  t = pool_new (&ir_kernel_max_pool, "opset8", "2,1,2", "1,1,1", "0,0,0", "0,0,0");
  kt_input (t, M2I_ET_F32, SHAPE (1, 1, 2, 2, 2), cube, FALSE);
  kt_run (t, 2);
  {
    static const float y[] = { 6, 8 };
    static const gint64 i[] = { 5, 7 };
    check_max (t, y, i, 2);
  }
  kt_free (t);

  static const gint32 xi[] = { 3, -9, 7, 7, 1, 0 };
  t = pool_new (&ir_kernel_max_pool, "opset1", "2", "2", "0", "0");
  kt_input (t, M2I_ET_I32, SHAPE (1, 2, 3), xi, FALSE);
  kt_attr (t, "rounding_type", "ceil");
  kt_run (t, 1);
  const gint32 *yi = t->outputs[0].data;
  g_assert_cmpint (yi[0], ==, 3);
  g_assert_cmpint (yi[1], ==, 7);
  g_assert_cmpint (yi[2], ==, 7);
  g_assert_cmpint (yi[3], ==, 0);
  kt_free (t);

  static const guint8 xu[] = { 10, 200, 30, 40 };
  t = pool_new (&ir_kernel_max_pool, "opset8", "2", "2", "0", "0");
  kt_input (t, M2I_ET_U8, SHAPE (1, 1, 4), xu, FALSE);
  kt_run (t, 2);
  const guint8 *yu = t->outputs[0].data;
  g_assert_cmpint (yu[0], ==, 200);
  g_assert_cmpint (yu[1], ==, 40);
  g_assert_cmpint (((const gint64 *) t->outputs[1].data)[1], ==, 3);
  kt_free (t);

  /* NaN and -inf only windows still point at an element of the window. */
  static const float odd[] = { -INFINITY, -INFINITY, NAN, 1 };
  t = pool_new (&ir_kernel_max_pool, "opset8", "2", "2", "0", "0");
  kt_input (t, M2I_ET_F32, SHAPE (1, 1, 4), odd, FALSE);
  kt_run (t, 2);
  g_assert_true (isinf (kt_out_f32 (t, 0)[0]));
  g_assert_cmpfloat (kt_out_f32 (t, 0)[1], ==, 1.0f);
  g_assert_cmpint (((const gint64 *) t->outputs[1].data)[0], ==, 0);
  g_assert_cmpint (((const gint64 *) t->outputs[1].data)[1], ==, 3);
  kt_free (t);
}

/* A squeezenet-sized MaxPool, threaded, against a plain loop. */
static void
test_large (void)
{
  const gint64 c = 64, h = 113, w = 113, oh = 56, ow = 56;
  float *x = g_new (float, c * h * w), *want = g_new (float, c * oh * ow);
  kt_fill (x, c * h * w, 9, -3, 3);
  for (gint64 ch = 0; ch < c; ch++)
    for (gint64 i = 0; i < oh; i++)
      for (gint64 j = 0; j < ow; j++) {
        float m = -INFINITY;
        for (gint64 a = 0; a < 3; a++)
          for (gint64 b = 0; b < 3; b++) {
            gint64 y = i * 2 + a, xx = j * 2 + b;
            if (y < h && xx < w && x[(ch * h + y) * w + xx] > m)
              m = x[(ch * h + y) * w + xx];
          }
        want[(ch * oh + i) * ow + j] = m;
      }
  KTest *t = pool_new (&ir_kernel_max_pool, "opset1", "3,3", "2,2", "0,0", "0,0");
  kt_attr (t, "rounding_type", "ceil");
  kt_input (t, M2I_ET_F32, SHAPE (1, c, h, w), x, FALSE);
  kt_run (t, 1);
  g_assert_cmpint (t->outputs[0].shape.dims[2], ==, oh);
  kt_assert_close ("squeezenet pool1", kt_out_f32 (t, 0), want, c * oh * ow, 0, 0);
  kt_free (t);

  /* MaxPool-8 whose indices output has no memory (nobody reads it). */
  t = pool_new (&ir_kernel_max_pool, "opset8", "3,3", "2,2", "0,0", "0,0");
  kt_attr (t, "rounding_type", "ceil");
  kt_input (t, M2I_ET_F32, SHAPE (1, c, h, w), x, FALSE);
  GError *error = NULL;
  g_assert_true (kt_infer (t, 2, &error));
  t->outputs[1].data = NULL;
  g_assert_true (kt_execute (t, &error));
  kt_assert_close ("pool1 without indices", kt_out_f32 (t, 0), want, c * oh * ow, 0, 0);
  kt_free (t);
  g_free (x);
  g_free (want);
}

/* The window scan of the MaxPool-8 spec, written plainly: the first element
 * greater than everything before it (from -inf; NaN never is) wins; a
 * window where none is (only -inf, NaN or pads) gives its first element
 * inside the input. Output shape from the kernel under test (its rules
 * are checked by the vectors above). */
static void
naive_max2d (const float *x, gint64 c, gint64 h, gint64 w, gint64 oh, gint64 ow,
    const gint64 *k, const gint64 *st, const gint64 *dl, const gint64 *pb, float *y,
    gint64 *idx)
{
  for (gint64 ch = 0; ch < c; ch++)
    for (gint64 oy = 0; oy < oh; oy++)
      for (gint64 ox = 0; ox < ow; ox++) {
        float best = -INFINITY;
        gint64 at = -1, first = -1;
        for (gint64 ky = 0; ky < k[0]; ky++)
          for (gint64 kx = 0; kx < k[1]; kx++) {
            gint64 iy = oy * st[0] - pb[0] + ky * dl[0], ix = ox * st[1] - pb[1] + kx * dl[1];
            if (iy < 0 || iy >= h || ix < 0 || ix >= w)
              continue;
            float v = x[(ch * h + iy) * w + ix];
            if (first < 0)
              first = iy * w + ix;
            if (v > best) {
              best = v;
              at = iy * w + ix;
            }
          }
        if (at < 0) {
          at = MAX (first, 0);
          best = first >= 0 ? x[ch * h * w + first] : -INFINITY;
        }
        y[(ch * oh + oy) * ow + ox] = best;
        idx[(ch * oh + oy) * ow + ox] = at;
      }
}

/* 2-D f32 MaxPool on random shapes against naive_max2d: every path of the
 * kernel (the separable one for strides 1 and 2, the per-tap one with
 * indices, dilations or other strides, the plain loops under
 * M2I_CPU_DISABLE), row ends inside and across 16- and 32-column chunks,
 * pads, ceil overhang, windows of only NaN, -inf or pads, 1–2 threads. */
static void
test_max_random (void)
{
  GRand *r = g_rand_new_with_seed (20261121);
  gint checked = 0;
  for (gint iter = 0; iter < 400; iter++) {
    gint64 c = g_rand_int_range (r, 1, 4), h = g_rand_int_range (r, 1, 30),
        w = g_rand_int_range (r, 1, 75);
    gint64 k[2] = { g_rand_int_range (r, 1, 5), g_rand_int_range (r, 1, 5) };
    if (g_rand_int_range (r, 0, 8) == 0)
      k[1] = g_rand_int_range (r, 14, 19);      /* around the 16-tap limit */
    gint64 st[2] = { g_rand_int_range (r, 1, 4), g_rand_int_range (r, 1, 4) };
    if (g_rand_int_range (r, 0, 3))
      st[1] = g_rand_int_range (r, 1, 3);       /* mostly the separable strides */
    gboolean v8 = g_rand_boolean (r);
    gint64 dl[2] = { 1, 1 };
    if (v8 && g_rand_int_range (r, 0, 4) == 0) {
      dl[0] = g_rand_int_range (r, 1, 3);
      dl[1] = g_rand_int_range (r, 1, 3);
    }
    gint64 pb[2], pe[2];
    for (gint a = 0; a < 2; a++) {
      pb[a] = g_rand_int_range (r, 0, (gint32) k[a]);
      pe[a] = g_rand_int_range (r, 0, (gint32) k[a]);
    }
    gboolean ceil_mode = g_rand_boolean (r);
    if ((k[0] - 1) * dl[0] + 1 > h + pb[0] + pe[0] || (k[1] - 1) * dl[1] + 1 > w + pb[1] + pe[1])
      continue;
    gsize n = c * h * w;
    float *x = g_new (float, n);
    kt_fill (x, n, iter + 1, -4, 4);
    static const float specials[] = { NAN, -INFINITY, INFINITY, -0.0f, 0.0f };
    for (gsize i = 0; i < n; i++)
      if (g_rand_int_range (r, 0, 100) < 6)
        x[i] = specials[g_rand_int_range (r, 0, G_N_ELEMENTS (specials))];
    if (g_rand_boolean (r)) {
      /* A block of NaN and -inf: windows with nothing above -inf. */
      gint64 y0 = g_rand_int_range (r, 0, (gint32) h), x0 = g_rand_int_range (r, 0, (gint32) w);
      for (gint64 y = y0; y < MIN (h, y0 + 4); y++)
        for (gint64 xx = x0; xx < MIN (w, x0 + 5); xx++)
          x[y * w + xx] = (y + xx) % 3 ? -INFINITY : NAN;
    }
    g_autofree gchar *ks = g_strdup_printf ("%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT, k[0], k[1]);
    g_autofree gchar *ss = g_strdup_printf ("%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT, st[0], st[1]);
    g_autofree gchar *bs = g_strdup_printf ("%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT, pb[0], pb[1]);
    g_autofree gchar *es = g_strdup_printf ("%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT, pe[0], pe[1]);
    g_autofree gchar *ds = g_strdup_printf ("%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT, dl[0], dl[1]);
    /* MaxPool-8 runs twice: with indices, and with its indices output
     * left without memory (what the runtime does when nobody reads it). */
    for (gint with_idx = 0; with_idx < (v8 ? 2 : 1); with_idx++) {
      KTest *t = pool_new (&ir_kernel_max_pool, v8 ? "opset8" : "opset1", ks, ss, bs, es);
      kt_attr (t, "rounding_type", ceil_mode ? "ceil" : "floor");
      if (v8) {
        kt_attr (t, "dilations", ds);
        kt_attr (t, "axis", "2");
      }
      kt_input (t, M2I_ET_F32, SHAPE (1, c, h, w), x, FALSE);
      t->ctx.n_threads = 1 + iter % 2;
      GError *error = NULL;
      if (!kt_infer (t, v8 ? 2 : 1, &error))
        g_error ("case %d: %s", iter, error->message);
      if (v8 && !with_idx)
        t->outputs[1].data = NULL;
      g_assert_true (kt_execute (t, &error));
      gint64 oh = t->outputs[0].shape.dims[2], ow = t->outputs[0].shape.dims[3];
      float *want = g_new (float, c * oh * ow);
      gint64 *want_idx = g_new (gint64, c * oh * ow);
      naive_max2d (x, c, h, w, oh, ow, k, st, dl, pb, want, want_idx);
      g_autofree gchar *what = g_strdup_printf ("case %d: %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT
          "x%" G_GINT64_FORMAT " k %s s %s d %s pads %s/%s %s%s", iter, c, h, w, ks, ss, ds, bs, es,
          ceil_mode ? "ceil" : "floor", with_idx ? " indices" : "");
      kt_assert_close (what, kt_out_f32 (t, 0), want, c * oh * ow, 0, 0);
      if (with_idx)
        for (gint64 i = 0; i < c * oh * ow; i++)
          if (((const gint64 *) t->outputs[1].data)[i] != want_idx[i])
            g_error ("%s: index %" G_GINT64_FORMAT " is %" G_GINT64_FORMAT ", expected %"
                G_GINT64_FORMAT, what, i, ((const gint64 *) t->outputs[1].data)[i], want_idx[i]);
      g_free (want);
      g_free (want_idx);
      kt_free (t);
      checked++;
    }
    g_free (x);
  }
  g_assert_cmpint (checked, >, 300);
  g_rand_free (r);
}

/* license-plate-recognition's three 3×3 MaxPools (row strides 1 and 2,
 * column stride 1, rows of 90–94: two output rows at a time on AVX-512),
 * plus odd output heights and the 3×3 stride-2 windows, against
 * naive_max2d; with NaN, -inf and signed zeros, and windows of only NaN
 * and -inf in the first and the second row of a pair. */
static void
test_max_row_pairs (void)
{
  static const gint64 cases[][5] = {     /* c, h, w, row stride, column stride */
    { 3, 24, 94, 1, 1 }, { 2, 22, 92, 2, 1 }, { 2, 11, 90, 2, 1 }, { 2, 9, 37, 1, 1 },
    { 2, 10, 37, 2, 1 }, { 2, 13, 41, 2, 2 }, { 2, 8, 40, 1, 2 },
  };
  static const float specials[] = { NAN, -INFINITY, INFINITY, -0.0f, 0.0f };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    gint64 c = cases[i][0], h = cases[i][1], w = cases[i][2];
    gint64 k[2] = { 3, 3 }, st[2] = { cases[i][3], cases[i][4] }, dl[2] = { 1, 1 },
        pb[2] = { 0, 0 };
    gsize n = c * h * w;
    float *x = g_new (float, n);
    kt_fill (x, n, 40 + i, -4, 4);
    for (gsize j = 0; j < n; j += 7 + j % 5)
      x[j] = specials[j % G_N_ELEMENTS (specials)];
    /* nothing above -inf in the windows of outputs (1, 4..6) of plane 0
     * (a pair's second row) and (2, 20..22) of plane 1 (at row stride 1,
     * a pair's first row) */
    static const gint64 stuck[2][3] = { { 1, 4, 6 }, { 2, 20, 22 } };  /* oy, ox from, to */
    for (gint64 p = 0; p < c && p < 2; p++)
      for (gint64 y = stuck[p][0] * st[0]; y < stuck[p][0] * st[0] + 3; y++)
        for (gint64 xx = stuck[p][1] * st[1]; xx < MIN (w, stuck[p][2] * st[1] + 3); xx++)
          x[(p * h + y) * w + xx] = (y + xx) % 2 ? -INFINITY : NAN;
    g_autofree gchar *ss = g_strdup_printf ("%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT, st[0], st[1]);
    KTest *t = pool_new (&ir_kernel_max_pool, "opset1", "3,3", ss, "0,0", "0,0");
    kt_attr (t, "rounding_type", "floor");
    kt_input (t, M2I_ET_F32, SHAPE (1, c, h, w), x, FALSE);
    kt_run (t, 1);
    gint64 oh = t->outputs[0].shape.dims[2], ow = t->outputs[0].shape.dims[3];
    g_assert_cmpint (oh, ==, (h - 3) / st[0] + 1);
    float *want = g_new (float, c * oh * ow);
    gint64 *want_idx = g_new (gint64, c * oh * ow);
    naive_max2d (x, c, h, w, oh, ow, k, st, dl, pb, want, want_idx);
    g_autofree gchar *what = g_strdup_printf ("%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT "x%"
        G_GINT64_FORMAT " stride %s", c, h, w, ss);
    kt_assert_close (what, kt_out_f32 (t, 0), want, c * oh * ow, 0, 0);
    kt_free (t);
    g_free (want);
    g_free (want_idx);
    g_free (x);
  }
}

static void
test_errors (void)
{
  static float buf[64];
  KTest *t;

  t = pool_new (&ir_kernel_max_pool, "opset1", "2,2", "1,1", "0,0", "0,0");
  kt_input (t, M2I_ET_F32, SHAPE (4, 4), buf, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "expected rank 3 to 5");
  kt_free (t);

  t = pool_new (&ir_kernel_max_pool, "opset8", "2,2,2", "1,1", "0,0", "0,0");
  kt_input (t, M2I_ET_F32, SHAPE (1, 1, 4, 4), buf, FALSE);
  kt_expect_error (t, 2, M2I_ERROR_INVALID_ARGUMENT, "kernel");
  kt_free (t);

  t = pool_new (&ir_kernel_max_pool, "opset8", "2,2", "1,1", "0,0", "0,0");
  kt_attr (t, "axis", "4");
  kt_input (t, M2I_ET_F32, SHAPE (1, 1, 4, 4), buf, FALSE);
  kt_expect_error (t, 2, M2I_ERROR_INVALID_ARGUMENT, "axis 4 is out of range");
  kt_free (t);

  t = pool_new (&ir_kernel_max_pool, "opset8", "2,2", "1,1", "0,0", "0,0");
  kt_attr (t, "index_element_type", "u8");
  kt_input (t, M2I_ET_F32, SHAPE (1, 1, 4, 4), buf, FALSE);
  kt_expect_error (t, 2, M2I_ERROR_UNSUPPORTED, "index_element_type");
  kt_free (t);

  t = pool_new (&ir_kernel_max_pool, "opset1", "2,2", "1,1", "0,0", "0,0");
  kt_input (t, M2I_ET_F32, SHAPE (1, 1, 4, 4), buf, FALSE);
  kt_expect_error (t, 2, M2I_ERROR_INVALID_ARGUMENT, "expects 1 outputs, has 2");
  kt_free (t);

  t = pool_new (&ir_kernel_avg_pool, "opset1", "5,5", "1,1", "0,0", "0,0");
  kt_input (t, M2I_ET_F32, SHAPE (1, 1, 4, 4), buf, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "does not fit");
  kt_free (t);

  t = pool_new (&ir_kernel_avg_pool, "opset1", "2,2", "1,1", "0,0", "0,0");
  kt_input (t, M2I_ET_I32, SHAPE (1, 1, 4, 4), buf, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_UNSUPPORTED, "element type i32");
  kt_free (t);

  t = pool_new (&ir_kernel_avg_pool, "opset1", "2,2", "1,1", "0,0", "0,0");
  kt_attr (t, "rounding_type", "round");
  kt_input (t, M2I_ET_F32, SHAPE (1, 1, 4, 4), buf, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_UNSUPPORTED, "rounding_type");
  kt_free (t);

  t = kt_new (&ir_kernel_avg_pool, "opset1");
  kt_attr (t, "strides", "1,1");
  kt_attr (t, "pads_begin", "0,0");
  kt_attr (t, "pads_end", "0,0");
  kt_input (t, M2I_ET_F32, SHAPE (1, 1, 4, 4), buf, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_MALFORMED, "kernel is required");
  kt_free (t);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/pool/spec-examples", test_spec_examples);
  g_test_add_func ("/pool/max-vectors", test_max_vectors);
  g_test_add_func ("/pool/avg-vectors", test_avg_vectors);
  g_test_add_func ("/pool/avg-full-windows", test_avg_full_windows);
  g_test_add_func ("/pool/ranks-types", test_other_ranks_types);
  g_test_add_func ("/pool/large", test_large);
  g_test_add_func ("/pool/max-random", test_max_random);
  g_test_add_func ("/pool/max-row-pairs", test_max_row_pairs);
  g_test_add_func ("/pool/errors", test_errors);
  return g_test_run ();
}
