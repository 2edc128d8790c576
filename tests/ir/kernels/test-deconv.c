/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ConvolutionBackpropData-1 and GroupConvolutionBackpropData-1 against
 * PyTorch's conv_transpose1d/2d/3d (tests/data/ir-kernels/gen_deconv.py:
 * symmetric and asymmetric pads, output_padding, output_shape with every
 * auto_pad, 1-D, 3-D, groups, depthwise, batches) and against a naive loop
 * written from the spec (double accumulation) over random shapes and a
 * real-sized upsampling layer, 1 to 3 threads, weights constant or
 * computed at run time; then the errors. */
#include "kernel-test.h"

/* ---- the spec as a loop ---------------------------------------------------- */

typedef struct {
  gint n;                                  /* spatial axes */
  gint64 batch, groups, cin_g, cout_g;
  gint64 in[3], k[3], s[3], d[3], pb[3], pe[3], opad[3];
  const char *auto_pad;
  gint64 oshape[3];                        /* used when have_oshape */
  gboolean have_oshape;
} Geo;

/* The spec's output size and pads_begin per axis. */
static void
geo_out (const Geo *g, gint64 *out, gint64 *pb)
{
  for (gint i = 0; i < g->n; i++) {
    gint64 full = g->s[i] * (g->in[i] - 1) + g->d[i] * (g->k[i] - 1) + 1;
    gboolean expl = !strcmp (g->auto_pad, "explicit");
    pb[i] = expl ? g->pb[i] : 0;
    if (g->have_oshape) {
      out[i] = g->oshape[i];
      if (!strcmp (g->auto_pad, "same_upper") || !strcmp (g->auto_pad, "same_lower")) {
        gint64 total = MAX (full - out[i] + g->opad[i], 0);
        pb[i] = !strcmp (g->auto_pad, "same_upper") ? total - total / 2 : total / 2;
      }
    } else {
      out[i] = full - pb[i] - (expl ? g->pe[i] : 0) + g->opad[i];
    }
  }
}

/* y[n][g·C_out/G + co][o...] = Σ over input pixels i and taps k with
 * o = i·s + k·d - pb of x[n][g·C_in/G + ci][i...] · W[g][ci][co][k...]. */
static float *
ref_deconv (const Geo *g, const float *x, const float *w, gint64 *numel)
{
  gint64 out[3] = { 1, 1, 1 }, pb[3] = { 0 };
  geo_out (g, out, pb);
  gint64 ip = 1, op = 1, kp = 1;
  for (gint i = 0; i < g->n; i++) {
    ip *= g->in[i];
    op *= out[i];
    kp *= g->k[i];
  }
  gint64 c_out = g->groups * g->cout_g;
  *numel = g->batch * c_out * op;
  double *acc = g_new0 (double, *numel);
  for (gint64 n = 0; n < g->batch; n++)
    for (gint64 gg = 0; gg < g->groups; gg++)
      for (gint64 ci = 0; ci < g->cin_g; ci++)
        for (gint64 p = 0; p < ip; p++)
          for (gint64 co = 0; co < g->cout_g; co++)
            for (gint64 t = 0; t < kp; t++) {
              gint64 rest_p = p, rest_t = t, o = 0;
              gboolean inside = TRUE;
              for (gint i = g->n - 1, mul = 1; i >= 0; i--) {
                gint64 pi = rest_p % g->in[i], ti = rest_t % g->k[i];
                rest_p /= g->in[i];
                rest_t /= g->k[i];
                gint64 oi = pi * g->s[i] + ti * g->d[i] - pb[i];
                inside &= oi >= 0 && oi < out[i];
                o += oi * mul;
                mul *= (gint) out[i];
              }
              if (!inside)
                continue;
              double xv = x[((n * g->groups + gg) * g->cin_g + ci) * ip + p];
              double wv = w[((gg * g->cin_g + ci) * g->cout_g + co) * kp + t];
              acc[((n * g->groups + gg) * g->cout_g + co) * op + o] += xv * wv;
            }
  float *y = g_new (float, *numel);
  for (gint64 i = 0; i < *numel; i++)
    y[i] = (float) acc[i];
  g_free (acc);
  return y;
}

static gchar *
list (const gint64 *v, gint n)
{
  GString *s = g_string_new (NULL);
  for (gint i = 0; i < n; i++)
    g_string_append_printf (s, "%s%" G_GINT64_FORMAT, i ? "," : "", v[i]);
  return g_string_free (s, FALSE);
}

static KTest *
layer (const Geo *g, gboolean grouped, const float *x, const float *w, gboolean w_const,
    const gint64 *oshape_data)
{
  KTest *t = kt_new (grouped ? &ir_kernel_group_convolution_backprop_data :
      &ir_kernel_convolution_backprop_data, "opset1");
  const struct { const char *key; const gint64 *v; } lists[] = {
    { "strides", g->s }, { "dilations", g->d }, { "pads_begin", g->pb }, { "pads_end", g->pe },
    { "output_padding", g->opad },
  };
  for (guint i = 0; i < G_N_ELEMENTS (lists); i++) {
    g_autofree gchar *v = list (lists[i].v, g->n);
    kt_attr (t, lists[i].key, v);
  }
  kt_attr (t, "auto_pad", g->auto_pad);
  M2iShape xs = { g->n + 2, { g->batch, g->groups * g->cin_g } };
  M2iShape ws = { g->n + (grouped ? 3 : 2) };
  gint a = 0;
  if (grouped)
    ws.dims[a++] = g->groups;
  ws.dims[a++] = g->cin_g;
  ws.dims[a++] = g->cout_g;
  for (gint i = 0; i < g->n; i++) {
    xs.dims[2 + i] = g->in[i];
    ws.dims[a++] = g->k[i];
  }
  kt_input (t, M2I_ET_F32, xs, x, FALSE);
  kt_input (t, M2I_ET_F32, ws, w, w_const);
  if (g->have_oshape)
    kt_input (t, M2I_ET_I64, kt_shape_of ((const gint64[]) { g->n }, 1), oshape_data, TRUE);
  return t;
}

static void
check (const char *what, const Geo *g, gboolean grouped, gint threads, gboolean w_const,
    const float *x, const float *w, const float *want, gint64 numel)
{
  KTest *t = layer (g, grouped, x, w, w_const, g->oshape);
  t->ctx.n_threads = threads;
  kt_run (t, 1);
  g_assert_cmpint (m2i_shape_numel (&t->outputs[0].shape), ==, numel);
  kt_assert_close (what, kt_out_f32 (t, 0), want, numel, 1e-5, 1e-5);
  /* a second run: the outputs are zeroed again, not accumulated */
  g_assert_true (kt_execute (t, NULL));
  kt_assert_close (what, kt_out_f32 (t, 0), want, numel, 1e-5, 1e-5);
  kt_free (t);
}

/* ---- PyTorch cases --------------------------------------------------------- */

typedef struct {
  const char *name;
  gboolean grouped;
  gint n;
  gint64 s[3], d[3], pb[3], pe[3], opad[3];
  const char *auto_pad;
  gint64 oshape[3];                        /* {0}: no output_shape input */
} TorchCase;

static const TorchCase torch_cases[] = {
  { "dc_basic", FALSE, 2, { 2, 2 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, "explicit" },
  { "dc_asym", FALSE, 2, { 2, 3 }, { 1, 2 }, { 0, 2 }, { 1, 0 }, { 0, 0 }, "explicit" },
  { "dc_oshape_upper", FALSE, 2, { 2, 2 }, { 1, 1 }, { 0, 0 }, { 0, 0 }, { 0, 0 }, "same_upper",
    { 8, 10 } },
  { "dc_oshape_lower", FALSE, 2, { 2, 2 }, { 1, 1 }, { 0, 0 }, { 0, 0 }, { 0, 0 }, "same_lower",
    { 7, 9 } },
  { "dc_oshape_valid", FALSE, 2, { 2, 2 }, { 1, 1 }, { 0, 0 }, { 0, 0 }, { 0, 0 }, "valid",
    { 11, 12 } },
  { "dc_oshape_explicit", FALSE, 2, { 2, 2 }, { 1, 1 }, { 1, 0 }, { 0, 0 }, { 0, 0 }, "explicit",
    { 8, 9 } },
  { "dc_same_noshape", FALSE, 2, { 2, 1 }, { 1, 1 }, { 3, 3 }, { 3, 3 }, { 0, 0 }, "same_upper" },
  { "dc_1d", FALSE, 1, { 3 }, { 2 }, { 1 }, { 2 }, { 1 }, "explicit" },
  { "dc_3d", FALSE, 3, { 2, 1, 2 }, { 1, 1, 1 }, { 0, 1, 1 }, { 1, 0, 0 }, { 0, 0, 0 },
    "explicit" },
  { "gdc_groups", TRUE, 2, { 2, 2 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 0, 0 }, "explicit" },
  { "gdc_depthwise", TRUE, 2, { 2, 2 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 0, 0 }, "explicit" },
};

static void
test_torch (void)
{
  for (guint c = 0; c < G_N_ELEMENTS (torch_cases); c++) {
    const TorchCase *tc = &torch_cases[c];
    g_autofree gchar *xn = g_strdup_printf ("%s_x", tc->name);
    g_autofree gchar *wn = g_strdup_printf ("%s_w", tc->name);
    g_autofree gchar *yn = g_strdup_printf ("%s_y", tc->name);
    KtArray *x = kt_load (xn), *w = kt_load (wn), *y = kt_load (yn);
    Geo g = { tc->n, x->shape.dims[0], tc->grouped ? w->shape.dims[0] : 1 };
    gint wa = tc->grouped ? 1 : 0;
    g.cin_g = w->shape.dims[wa];
    g.cout_g = w->shape.dims[wa + 1];
    g.auto_pad = tc->auto_pad;
    g.have_oshape = tc->oshape[0] != 0;
    for (gint i = 0; i < tc->n; i++) {
      g.in[i] = x->shape.dims[2 + i];
      g.k[i] = w->shape.dims[wa + 2 + i];
      g.s[i] = tc->s[i];
      g.d[i] = tc->d[i];
      g.pb[i] = tc->pb[i];
      g.pe[i] = tc->pe[i];
      g.opad[i] = tc->opad[i];
      g.oshape[i] = tc->oshape[i];
    }
    gint64 numel = m2i_shape_numel (&y->shape);
    for (gint wc = 0; wc < 2; wc++) {
      KTest *t = layer (&g, tc->grouped, x->data, w->data, wc, g.oshape);
      kt_run (t, 1);
      if (!m2i_shape_equal (&t->outputs[0].shape, &y->shape))
        g_error ("%s: shape %s, expected %s", tc->name, ir_k_shape_str (&t->outputs[0].shape, 0),
            ir_k_shape_str (&y->shape, 1));
      kt_assert_close (tc->name, kt_out_f32 (t, 0), y->data, numel, 1e-5, 1e-5);
      kt_free (t);
    }
    /* and the loop agrees with torch (the reference of the random cases) */
    gint64 rn;
    float *ref = ref_deconv (&g, x->data, w->data, &rn);
    g_assert_cmpint (rn, ==, numel);
    kt_assert_close (tc->name, ref, y->data, numel, 1e-5, 1e-5);
    g_free (ref);
    kt_array_free (x);
    kt_array_free (w);
    kt_array_free (y);
  }
}

/* ---- random shapes against the loop --------------------------------------- */

static void
test_random (void)
{
  static const char *const pads[] = { "explicit", "valid", "same_upper", "same_lower" };
  GRand *r = g_rand_new_with_seed (15);
  for (gint c = 0; c < 120; c++) {
    Geo g = { g_rand_int_range (r, 1, 4), g_rand_int_range (r, 1, 3), 1 };
    gboolean grouped = g_rand_boolean (r);
    if (grouped)
      g.groups = g_rand_int_range (r, 1, 4);
    g.cin_g = g_rand_int_range (r, 1, 12);
    g.cout_g = g_rand_int_range (r, 1, 12);
    g.auto_pad = pads[g_rand_int_range (r, 0, 4)];
    g.have_oshape = g_rand_int_range (r, 0, 3) == 0;
    for (gint i = 0; i < g.n; i++) {
      g.in[i] = g_rand_int_range (r, 1, g.n == 3 ? 5 : 11);
      g.k[i] = g_rand_int_range (r, 1, 5);
      g.s[i] = g_rand_int_range (r, 1, 4);
      g.d[i] = g_rand_int_range (r, 1, 3);
      g.pb[i] = g_rand_int_range (r, 0, 3);
      g.pe[i] = g_rand_int_range (r, 0, 3);
      g.opad[i] = g_rand_int_range (r, 0, MAX (g.s[i], g.d[i]));
      gint64 full = g.s[i] * (g.in[i] - 1) + g.d[i] * (g.k[i] - 1) + 1;
      g.oshape[i] = MAX (1, full + g_rand_int_range (r, -2, 3));
    }
    gint64 out[3], pb[3];
    geo_out (&g, out, pb);
    gboolean ok = TRUE;
    for (gint i = 0; i < g.n; i++)
      ok &= out[i] >= 1;
    if (!ok)
      continue;
    gint64 xn = g.batch * g.groups * g.cin_g, wn = g.groups * g.cin_g * g.cout_g;
    for (gint i = 0; i < g.n; i++) {
      xn *= g.in[i];
      wn *= g.k[i];
    }
    float *x = g_new (float, xn), *w = g_new (float, wn);
    kt_fill (x, xn, c, -1, 1);
    kt_fill (w, wn, c + 1000, -1, 1);
    gint64 numel;
    float *want = ref_deconv (&g, x, w, &numel);
    g_autofree gchar *what = g_strdup_printf ("random case %d (%dD, %s%s)", c, g.n, g.auto_pad,
        g.have_oshape ? ", output_shape" : "");
    check (what, &g, grouped, 1 + c % 3, c % 4 != 0, x, w, want, numel);
    g_free (x);
    g_free (w);
    g_free (want);
  }
  g_rand_free (r);
}

/* An upsampling layer of real size (a segmentation decoder's 2× step),
 * 1 and 2 threads. */
static void
test_large (void)
{
  Geo g = { 2, 1, 1, 64, 32, { 24, 40 }, { 4, 4 }, { 2, 2 }, { 1, 1 }, { 1, 1 }, { 1, 1 },
    { 0, 0 }, "explicit" };
  gint64 xn = 64 * 24 * 40, wn = 64 * 32 * 16, numel;
  float *x = g_new (float, xn), *w = g_new (float, wn);
  kt_fill (x, xn, 1, -1, 1);
  kt_fill (w, wn, 2, -0.2f, 0.2f);
  float *want = ref_deconv (&g, x, w, &numel);
  g_assert_cmpint (numel, ==, 32 * 48 * 80);
  for (gint threads = 1; threads <= 2; threads++)
    check ("upsampling 64→32 k4 s2", &g, FALSE, threads, TRUE, x, w, want, numel);
  g_free (x);
  g_free (w);
  g_free (want);
}

/* ---- errors ------------------------------------------------------------------ */

static void
test_errors (void)
{
  static float buf[4096];
  static const gint64 os3[] = { 5, 5, 5 }, os2[] = { 5, 5 };
  Geo g = { 2, 1, 1, 4, 3, { 5, 5 }, { 3, 3 }, { 2, 2 }, { 1, 1 }, { 0, 0 }, { 0, 0 }, { 0, 0 },
    "explicit" };
  /* C_in of the filter differs from the input's channels */
  KTest *t = kt_new (&ir_kernel_convolution_backprop_data, "opset1");
  kt_attr (t, "strides", "1,1");
  kt_attr (t, "pads_begin", "0,0");
  kt_attr (t, "pads_end", "0,0");
  kt_input (t, M2I_ET_F32, SHAPE (1, 4, 5, 5), buf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (3, 2, 3, 3), buf, TRUE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "[C_in, C_out, kernel...]");
  kt_free (t);

  g.opad[0] = 2;                       /* output_padding >= stride */
  t = layer (&g, FALSE, buf, buf, TRUE, NULL);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "output_padding 2");
  kt_free (t);
  g.opad[0] = 0;

  g.pb[0] = g.pe[0] = 8;               /* pads eat the whole output */
  t = layer (&g, FALSE, buf, buf, TRUE, NULL);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "give an output of");
  kt_free (t);
  g.pb[0] = g.pe[0] = 0;

  g.have_oshape = TRUE;                /* output_shape with 3 values for 2 axes */
  t = kt_new (&ir_kernel_convolution_backprop_data, "opset1");
  kt_attr (t, "strides", "2,2");
  kt_attr (t, "pads_begin", "0,0");
  kt_attr (t, "pads_end", "0,0");
  kt_input (t, M2I_ET_F32, SHAPE (1, 4, 5, 5), buf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (4, 3, 3, 3), buf, TRUE);
  kt_input (t, M2I_ET_I64, SHAPE (3), os3, TRUE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "output_shape has 3 values");
  kt_free (t);

  t = kt_new (&ir_kernel_convolution_backprop_data, "opset1");   /* computed output_shape */
  kt_attr (t, "strides", "2,2");
  kt_attr (t, "pads_begin", "0,0");
  kt_attr (t, "pads_end", "0,0");
  kt_input (t, M2I_ET_F32, SHAPE (1, 4, 5, 5), buf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (4, 3, 3, 3), buf, TRUE);
  kt_input (t, M2I_ET_I64, SHAPE (2), os2, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_UNSUPPORTED, "constant");
  kt_free (t);

  t = kt_new (&ir_kernel_group_convolution_backprop_data, "opset1");  /* G · C_in/G != C */
  kt_attr (t, "strides", "1,1");
  kt_attr (t, "pads_begin", "0,0");
  kt_attr (t, "pads_end", "0,0");
  kt_input (t, M2I_ET_F32, SHAPE (1, 6, 5, 5), buf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (4, 2, 3, 3, 3), buf, TRUE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "[G, C_in/G, C_out/G, kernel...]");
  kt_free (t);

  t = kt_new (&ir_kernel_convolution_backprop_data, "opset1");   /* missing strides */
  kt_attr (t, "pads_begin", "0,0");
  kt_attr (t, "pads_end", "0,0");
  kt_input (t, M2I_ET_F32, SHAPE (1, 4, 5, 5), buf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (4, 3, 3, 3), buf, TRUE);
  kt_expect_error (t, 1, M2I_ERROR_MALFORMED, "strides");
  kt_free (t);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/kernels/deconv/torch", test_torch);
  g_test_add_func ("/kernels/deconv/random", test_random);
  g_test_add_func ("/kernels/deconv/large", test_large);
  g_test_add_func ("/kernels/deconv/errors", test_errors);
  return g_test_run ();
}
