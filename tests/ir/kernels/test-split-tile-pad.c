/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Split, VariadicSplit, Tile, Broadcast-1/-3, Pad-1/-12, Slice-8 and
 * Range-1/-4 against NumPy (np.split, np.tile, np.broadcast_to, np.pad,
 * Python slicing, arange; tests/data/ir-kernels/gen-ops.py), the worked
 * examples of the Pad-12 and Slice-8 specifications, other element types
 * (bytes, i64), empty and one-element tensors, and errors. */
#include "kernel-test.h"

static void
check_f32 (const char *what, KTest *t, gint out, const char *want_name)
{
  KtArray *want = kt_load (want_name);
  if (!m2i_shape_equal (&t->outputs[out].shape, &want->shape))
    g_error ("%s: shape %s, expected %s", what, ir_k_shape_str (&t->outputs[out].shape, 0),
        ir_k_shape_str (&want->shape, 1));
  kt_assert_close (what, kt_out_f32 (t, out), want->data, m2i_shape_numel (&want->shape), 0, 0);
  kt_array_free (want);
}

static void
test_split (void)
{
  KtArray *x = kt_load ("mv_x");
  static const gint64 axis1 = 1;
  KTest *t = kt_new (&ir_kernel_split, "opset1");
  kt_attr (t, "num_splits", "3");
  kt_input (t, x->type, x->shape, x->data, FALSE);
  kt_input (t, M2I_ET_I64, SCALAR, &axis1, TRUE);
  kt_run (t, 3);
  check_f32 ("split 0", t, 0, "mv_split3_0");
  check_f32 ("split 1", t, 1, "mv_split3_1");
  check_f32 ("split 2", t, 2, "mv_split3_2");
  kt_free (t);

  /* lengths 1, 0, -1 (→ 3), 0 on axis -1 (an i32 [1] axis) */
  static const gint32 axis_last[] = { -1 };
  static const gint64 lengths[] = { 1, 0, -1, 0 };
  t = kt_new (&ir_kernel_variadic_split, "opset1");
  kt_input (t, x->type, x->shape, x->data, FALSE);
  kt_input (t, M2I_ET_I32, SHAPE (1), axis_last, TRUE);
  kt_input (t, M2I_ET_I64, SHAPE (4), lengths, TRUE);
  kt_run (t, 4);
  for (gint k = 0; k < 4; k++) {
    g_autofree gchar *name = g_strdup_printf ("mv_vsplit_%d", k);
    check_f32 (name, t, k, name);
  }
  kt_free (t);

  /* An output nobody reads has no memory: it is skipped. */
  static const gint64 halves[] = { 3, 3 };
  t = kt_new (&ir_kernel_variadic_split, "opset1");
  kt_input (t, x->type, x->shape, x->data, FALSE);
  kt_input (t, M2I_ET_I64, SCALAR, &axis1, TRUE);
  kt_input (t, M2I_ET_I64, SHAPE (2), halves, TRUE);
  GError *error = NULL;
  g_assert_true (kt_infer (t, 2, &error));
  t->outputs[1].data = NULL;
  g_assert_true (kt_execute (t, &error));
  const float *first = kt_out_f32 (t, 0), *src = x->data;
  for (gint64 b = 0; b < 2; b++)               /* [2, 3 of 6, 3, 4]: one block per batch */
    g_assert_cmpmem (first + b * 36, 36 * 4, src + b * 72, 36 * 4);
  kt_free (t);

  /* Bytes move as they are (u8). */
  static const guint8 bytes[] = { 1, 2, 3, 4, 5, 6 };
  static const gint64 axis0 = 0;
  t = kt_new (&ir_kernel_split, "opset1");
  kt_attr (t, "num_splits", "2");
  kt_input (t, M2I_ET_U8, SHAPE (2, 3), bytes, FALSE);
  kt_input (t, M2I_ET_I64, SCALAR, &axis0, TRUE);
  kt_run (t, 2);
  g_assert_cmpmem (t->outputs[1].data, 3, bytes + 3, 3);
  kt_free (t);
  kt_array_free (x);
}

static void
test_tile_broadcast (void)
{
  KtArray *s = kt_load ("mv_small"), *c = kt_load ("mv_c");
  static const gint64 reps[] = { 2, 2, 3, 1 }, short_reps[] = { 1, 3 };
  KTest *t = kt_new (&ir_kernel_tile, "opset1");
  kt_input (t, s->type, s->shape, s->data, FALSE);
  kt_input (t, M2I_ET_I64, SHAPE (4), reps, TRUE);
  kt_run (t, 1);
  check_f32 ("tile", t, 0, "mv_tile_2231");
  kt_free (t);
  t = kt_new (&ir_kernel_tile, "opset1");
  kt_input (t, s->type, s->shape, s->data, FALSE);
  kt_input (t, M2I_ET_I64, SHAPE (2), short_reps, TRUE);
  kt_run (t, 1);
  check_f32 ("tile, short repeats", t, 0, "mv_tile_short");
  kt_free (t);

  static const gint64 numpy[] = { 2, 3, 4, 2 }, expl[] = { 2, 3, 2, 2 }, map[] = { 1 },
      bidir[] = { 4, 1, 5, 1 };
  const struct {
    const char *version, *mode;
    const KtArray **data;
    const gint64 *target;
    gint n;
    const char *want;
  } cases[] = {
    { "opset1", NULL, (const KtArray **) &s, numpy, 4, "mv_bcast_numpy" },
    { "opset3", "numpy", (const KtArray **) &s, numpy, 4, "mv_bcast_numpy" },
    { "opset3", "explicit", (const KtArray **) &c, expl, 4, "mv_bcast_explicit" },
    { "opset3", "bidirectional", (const KtArray **) &s, bidir, 4, "mv_bcast_bidir" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    const KtArray *d = *cases[i].data;
    t = kt_new (&ir_kernel_broadcast, cases[i].version);
    if (cases[i].mode)
      kt_attr (t, "mode", cases[i].mode);
    kt_input (t, d->type, d->shape, d->data, FALSE);
    kt_input (t, M2I_ET_I64, SHAPE (cases[i].n), cases[i].target, TRUE);
    if (d == c)
      kt_input (t, M2I_ET_I64, SHAPE (1), map, TRUE);
    kt_run (t, 1);
    check_f32 (cases[i].want, t, 0, cases[i].want);
    kt_free (t);
  }
  /* pdpd: [3, 1] onto [2, 3, 4] from axis 1 (its trailing 1 ignored);
   * explicit [2, 3] to [2, 2, 3, 2] through axes 1 and 2 (the spec's
   * [H, W] → [N, H, W, C] example). By hand. */
  static const float d31[] = { 1, 2, 3 }, d23[] = { 1, 2, 3, 4, 5, 6 };
  static const gint64 to234[] = { 2, 3, 4 }, to2232[] = { 2, 2, 3, 2 }, map12[] = { 1, 2 };
  t = kt_new (&ir_kernel_broadcast, "opset1");
  kt_attr (t, "mode", "pdpd");
  kt_attr (t, "axis", "1");
  kt_input (t, M2I_ET_F32, SHAPE (3, 1), d31, FALSE);
  kt_input (t, M2I_ET_I64, SHAPE (3), to234, TRUE);
  kt_run (t, 1);
  for (gint k = 0; k < 24; k++)
    g_assert_cmpfloat (kt_out_f32 (t, 0)[k], ==, d31[(k / 4) % 3]);
  kt_free (t);
  t = kt_new (&ir_kernel_broadcast, "opset3");
  kt_attr (t, "mode", "explicit");
  kt_input (t, M2I_ET_F32, SHAPE (2, 3), d23, FALSE);
  kt_input (t, M2I_ET_I64, SHAPE (4), to2232, TRUE);
  kt_input (t, M2I_ET_I64, SHAPE (2), map12, TRUE);
  kt_run (t, 1);
  for (gint k = 0; k < 24; k++)
    g_assert_cmpfloat (kt_out_f32 (t, 0)[k], ==, d23[(k / 2) % 6]);
  kt_free (t);

  /* A scalar to [2, 3] (i64); an empty target dim. */
  static const gint64 v = 42, to23[] = { 2, 3 }, to03[] = { 0, 3 };
  t = kt_new (&ir_kernel_broadcast, "opset3");
  kt_input (t, M2I_ET_I64, SCALAR, &v, FALSE);
  kt_input (t, M2I_ET_I64, SHAPE (2), to23, TRUE);
  kt_run (t, 1);
  for (gint k = 0; k < 6; k++)
    g_assert_cmpint (((gint64 *) t->outputs[0].data)[k], ==, 42);
  kt_free (t);
  t = kt_new (&ir_kernel_broadcast, "opset3");
  kt_input (t, M2I_ET_I64, SCALAR, &v, FALSE);
  kt_input (t, M2I_ET_I64, SHAPE (2), to03, TRUE);
  kt_run (t, 1);
  g_assert_cmpint (m2i_shape_numel (&t->outputs[0].shape), ==, 0);
  kt_free (t);
  kt_array_free (s);
  kt_array_free (c);
}

/* The four modes with positive pads, and with mixed (cropping) pads, on
 * the 3×4 matrix; a 4-D reflect. Also the spec's worked examples. */
static void
test_pad (void)
{
  KtArray *p = kt_load ("mv_p"), *x = kt_load ("mv_x");
  static const char *const modes[] = { "constant", "edge", "reflect", "symmetric" };
  static const gint64 pb[] = { 2, 1 }, pe[] = { 1, 3 }, nb[] = { -1, 2 }, ne[] = { 1, -2 };
  const float value = 7.5f;
  for (guint m = 0; m < G_N_ELEMENTS (modes); m++) {
    for (gint neg = 0; neg < 2; neg++) {
      KTest *t = kt_new (&ir_kernel_pad, "opset12");
      kt_attr (t, "pad_mode", modes[m]);
      kt_input (t, p->type, p->shape, p->data, FALSE);
      kt_input (t, M2I_ET_I64, SHAPE (2), neg ? nb : pb, TRUE);
      kt_input (t, M2I_ET_I64, SHAPE (2), neg ? ne : pe, TRUE);
      if (m == 0)   /* the pad value: constant, then known only at run time */
        kt_input (t, M2I_ET_F32, SCALAR, &value, !neg);
      kt_run (t, 1);
      g_autofree gchar *name = g_strdup_printf ("mv_pad_%s%s", modes[m], neg ? "_neg" : "");
      check_f32 (name, t, 0, name);
      kt_free (t);
    }
  }
  static const gint64 b4[] = { 0, 1, 0, 2 }, e4[] = { 1, 0, 2, 1 };
  KTest *t = kt_new (&ir_kernel_pad, "opset1");
  kt_attr (t, "pad_mode", "reflect");
  kt_input (t, x->type, x->shape, x->data, FALSE);
  kt_input (t, M2I_ET_I64, SHAPE (4), b4, TRUE);
  kt_input (t, M2I_ET_I64, SHAPE (4), e4, TRUE);
  kt_run (t, 1);
  check_f32 ("pad 4-D reflect", t, 0, "mv_pad4");
  kt_free (t);

  /* Pad-12's "mixed pads" example, symmetric, on i32 (given by hand). */
  static const gint32 data[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };
  static const gint32 mb[] = { 2, -1 };          /* i32 and i64 pads */
  static const gint64 me[] = { -1, 3 };
  static const gint32 sym[] = { 6, 7, 8, 8, 7, 6, 2, 3, 4, 4, 3, 2, 2, 3, 4, 4, 3, 2,
    6, 7, 8, 8, 7, 6 };
  t = kt_new (&ir_kernel_pad, "opset12");
  kt_attr (t, "pad_mode", "symmetric");
  kt_input (t, M2I_ET_I32, SHAPE (3, 4), data, FALSE);
  kt_input (t, M2I_ET_I32, SHAPE (2), mb, TRUE);
  kt_input (t, M2I_ET_I64, SHAPE (2), me, TRUE);
  kt_run (t, 1);
  g_assert_cmpint (t->outputs[0].shape.dims[0], ==, 4);
  g_assert_cmpint (t->outputs[0].shape.dims[1], ==, 6);
  g_assert_cmpmem (t->outputs[0].data, sizeof sym, sym, sizeof sym);
  kt_free (t);

  /* Cropping everything away gives an empty tensor. */
  static const gint64 all_b[] = { -2, 0 }, all_e[] = { -1, 0 };
  t = kt_new (&ir_kernel_pad, "opset12");
  kt_attr (t, "pad_mode", "edge");
  kt_input (t, M2I_ET_I32, SHAPE (3, 4), data, FALSE);
  kt_input (t, M2I_ET_I64, SHAPE (2), all_b, TRUE);
  kt_input (t, M2I_ET_I64, SHAPE (2), all_e, TRUE);
  kt_run (t, 1);
  g_assert_cmpint (t->outputs[0].shape.dims[0], ==, 0);
  kt_free (t);
  kt_array_free (p);
  kt_array_free (x);
}

static void
test_slice (void)
{
  KtArray *x = kt_load ("mv_x");
  static const struct {
    const char *name;
    gint n;
    gint64 start[2], stop[2], step[2], axes[2];
  } cases[] = {
    { "basic", 2, { 1, 0 }, { 5, 3 }, { 2, 1 }, { 1, 3 } },
    { "neg", 2, { -1, 10 }, { -100, -5 }, { -2, -3 }, { -3, 2 } },
    { "big", 1, { 0 }, { G_GINT64_CONSTANT (1) << 62 }, { 1 }, { -1 } },
    { "empty", 1, { 3 }, { 1 }, { 1 }, { 1 } },
    { "rev", 1, { G_GINT64_CONSTANT (1) << 62 }, { -(G_GINT64_CONSTANT (1) << 62) }, { -1 }, { 0 } },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    KTest *t = kt_new (&ir_kernel_slice, "opset8");
    kt_input (t, x->type, x->shape, x->data, FALSE);
    kt_input (t, M2I_ET_I64, SHAPE (cases[i].n), cases[i].start, TRUE);
    kt_input (t, M2I_ET_I64, SHAPE (cases[i].n), cases[i].stop, TRUE);
    kt_input (t, M2I_ET_I64, SHAPE (cases[i].n), cases[i].step, TRUE);
    kt_input (t, M2I_ET_I64, SHAPE (cases[i].n), cases[i].axes, TRUE);
    kt_run (t, 1);
    g_autofree gchar *name = g_strdup_printf ("mv_slice_%s", cases[i].name);
    check_f32 (name, t, 0, name);
    kt_free (t);
  }
  kt_array_free (x);

  /* The spec's examples on [0..9] (i32 steps, default axes). */
  static const gint64 ten[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 };
  static const struct { gint32 start, stop, step; gint n; gint64 want[10]; } ex[] = {
    { 1, 8, 1, 7, { 1, 2, 3, 4, 5, 6, 7 } }, { 1, 8, 2, 4, { 1, 3, 5, 7 } },
    { -100, 100, 1, 10, { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 } },
    { 9, -11, -1, 10, { 9, 8, 7, 6, 5, 4, 3, 2, 1, 0 } }, { 9, 0, -1, 9, { 9, 8, 7, 6, 5, 4, 3, 2, 1 } },
    { 9, -10, -1, 9, { 9, 8, 7, 6, 5, 4, 3, 2, 1 } }, { 9, -11, -2, 5, { 9, 7, 5, 3, 1 } },
    { 100, -100, -1, 10, { 9, 8, 7, 6, 5, 4, 3, 2, 1, 0 } },
  };
  for (guint i = 0; i < G_N_ELEMENTS (ex); i++) {
    KTest *t = kt_new (&ir_kernel_slice, "opset8");
    kt_input (t, M2I_ET_I64, SHAPE (10), ten, FALSE);
    kt_input (t, M2I_ET_I32, SHAPE (1), &ex[i].start, TRUE);
    kt_input (t, M2I_ET_I32, SHAPE (1), &ex[i].stop, TRUE);
    kt_input (t, M2I_ET_I32, SHAPE (1), &ex[i].step, TRUE);
    kt_run (t, 1);
    g_assert_cmpint (t->outputs[0].shape.dims[0], ==, ex[i].n);
    g_assert_cmpmem (t->outputs[0].data, ex[i].n * 8, ex[i].want, ex[i].n * 8);
    kt_free (t);
  }
}

static void
test_range (void)
{
  /* Range-4 f32 from f32 inputs: 1.5, 1.2, ... > -2 (NumPy in double). */
  const float start = 1.5f, stop = -2.0f, step = -0.3f;
  KTest *t = kt_new (&ir_kernel_range, "opset4");
  kt_attr (t, "output_type", "f32");
  kt_input (t, M2I_ET_F32, SCALAR, &start, TRUE);
  kt_input (t, M2I_ET_F32, SCALAR, &stop, TRUE);
  kt_input (t, M2I_ET_F32, SCALAR, &step, TRUE);
  kt_run (t, 1);
  KtArray *want = kt_load ("mv_range_f");
  g_assert_true (m2i_shape_equal (&t->outputs[0].shape, &want->shape));
  /* the generator's start/step are the decimal ones; ours the f32 inputs */
  kt_assert_close ("range f32", kt_out_f32 (t, 0), want->data, m2i_shape_numel (&want->shape),
      1e-6, 1e-6);
  kt_array_free (want);
  kt_free (t);

  /* The spec's examples: i32 2..23 step 3 (Range-1); 23..2 step -3 as
   * i64 from f32 inputs (cast toward zero: 23.9 → 23, -3.7 → -3). */
  static const gint32 a = 2, b = 23, c = 3;
  t = kt_new (&ir_kernel_range, "opset1");
  kt_input (t, M2I_ET_I32, SCALAR, &a, TRUE);
  kt_input (t, M2I_ET_I32, SCALAR, &b, TRUE);
  kt_input (t, M2I_ET_I32, SCALAR, &c, TRUE);
  kt_run (t, 1);
  static const gint32 up[] = { 2, 5, 8, 11, 14, 17, 20 };
  g_assert_cmpint (t->outputs[0].shape.dims[0], ==, 7);
  g_assert_cmpmem (t->outputs[0].data, sizeof up, up, sizeof up);
  kt_free (t);
  const float fa = 23.9f, fb = 2.0f, fc = -3.7f;
  t = kt_new (&ir_kernel_range, "opset4");
  kt_attr (t, "output_type", "i64");
  kt_input (t, M2I_ET_F32, SCALAR, &fa, TRUE);
  kt_input (t, M2I_ET_F32, SCALAR, &fb, TRUE);
  kt_input (t, M2I_ET_F32, SCALAR, &fc, TRUE);
  kt_run (t, 1);
  static const gint64 down[] = { 23, 20, 17, 14, 11, 8, 5 };
  g_assert_cmpint (t->outputs[0].shape.dims[0], ==, 7);
  g_assert_cmpmem (t->outputs[0].data, sizeof down, down, sizeof down);
  kt_free (t);
  /* An empty range. */
  t = kt_new (&ir_kernel_range, "opset1");
  kt_input (t, M2I_ET_I32, SCALAR, &b, TRUE);
  kt_input (t, M2I_ET_I32, SCALAR, &a, TRUE);
  kt_input (t, M2I_ET_I32, SCALAR, &c, TRUE);
  kt_run (t, 1);
  g_assert_cmpint (t->outputs[0].shape.dims[0], ==, 0);
  kt_free (t);
}

static void
test_errors (void)
{
  static float buf[64];
  static const gint64 axis1 = 1, bad_len[] = { 2, 2 }, two_minus[] = { -1, -1 };
  KTest *t = kt_new (&ir_kernel_split, "opset1");
  kt_attr (t, "num_splits", "4");
  kt_input (t, M2I_ET_F32, SHAPE (2, 6), buf, FALSE);
  kt_input (t, M2I_ET_I64, SCALAR, &axis1, TRUE);
  kt_expect_error (t, 4, M2I_ERROR_INVALID_ARGUMENT, "num_splits=\"4\"");
  kt_free (t);

  for (gint k = 0; k < 2; k++) {
    t = kt_new (&ir_kernel_variadic_split, "opset1");
    kt_input (t, M2I_ET_F32, SHAPE (2, 6), buf, FALSE);
    kt_input (t, M2I_ET_I64, SCALAR, &axis1, TRUE);
    kt_input (t, M2I_ET_I64, SHAPE (2), k ? two_minus : bad_len, TRUE);
    kt_expect_error (t, 2, M2I_ERROR_INVALID_ARGUMENT, "do not cut axis 1");
    kt_free (t);
  }

  t = kt_new (&ir_kernel_variadic_split, "opset1");
  kt_input (t, M2I_ET_F32, SHAPE (2, 6), buf, FALSE);
  kt_input (t, M2I_ET_I64, SCALAR, &axis1, FALSE);
  kt_input (t, M2I_ET_I64, SHAPE (2), bad_len, TRUE);
  kt_expect_error (t, 2, M2I_ERROR_UNSUPPORTED, "must be a constant");
  kt_free (t);

  static const gint64 pads[] = { 3, 0 }, zero[] = { 0, 0 }, neg[] = { -1, 0 };
  t = kt_new (&ir_kernel_pad, "opset12");
  kt_attr (t, "pad_mode", "reflect");
  kt_input (t, M2I_ET_F32, SHAPE (3, 4), buf, FALSE);
  kt_input (t, M2I_ET_I64, SHAPE (2), pads, TRUE);
  kt_input (t, M2I_ET_I64, SHAPE (2), zero, TRUE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "reflect needs pads of at most dim - 1");
  kt_free (t);

  t = kt_new (&ir_kernel_pad, "opset1");
  kt_attr (t, "pad_mode", "constant");
  kt_input (t, M2I_ET_F32, SHAPE (3, 4), buf, FALSE);
  kt_input (t, M2I_ET_I64, SHAPE (2), neg, TRUE);
  kt_input (t, M2I_ET_I64, SHAPE (2), zero, TRUE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "Pad-1 takes no negative pads");
  kt_free (t);

  t = kt_new (&ir_kernel_pad, "opset12");
  kt_attr (t, "pad_mode", "constant");
  kt_input (t, M2I_ET_F32, SHAPE (3, 4), buf, FALSE);
  kt_input (t, M2I_ET_I64, SHAPE (2), zero, TRUE);
  kt_input (t, M2I_ET_I64, SHAPE (2), zero, TRUE);
  kt_input (t, M2I_ET_I32, SCALAR, buf, TRUE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "pad_value (input 3) must be one f32");
  kt_free (t);

  static const gint64 s0[] = { 0 }, s5[] = { 5 }, st0[] = { 0 };
  t = kt_new (&ir_kernel_slice, "opset8");
  kt_input (t, M2I_ET_F32, SHAPE (8), buf, FALSE);
  kt_input (t, M2I_ET_I64, SHAPE (1), s0, TRUE);
  kt_input (t, M2I_ET_I64, SHAPE (1), s5, TRUE);
  kt_input (t, M2I_ET_I64, SHAPE (1), st0, TRUE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "step 0");
  kt_free (t);

  static const gint64 tgt[] = { 2, 4 };
  t = kt_new (&ir_kernel_broadcast, "opset3");
  kt_input (t, M2I_ET_F32, SHAPE (3), buf, FALSE);
  kt_input (t, M2I_ET_I64, SHAPE (2), tgt, TRUE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "do not broadcast");
  kt_free (t);

  t = kt_new (&ir_kernel_broadcast, "opset1");
  kt_attr (t, "mode", "bidirectional");
  kt_input (t, M2I_ET_F32, SHAPE (4), buf, FALSE);
  kt_input (t, M2I_ET_I64, SHAPE (2), tgt, TRUE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "Broadcast-3's");
  kt_free (t);

  static const gint64 rep_neg[] = { -1 };
  t = kt_new (&ir_kernel_tile, "opset1");
  kt_input (t, M2I_ET_F32, SHAPE (4), buf, FALSE);
  kt_input (t, M2I_ET_I64, SHAPE (1), rep_neg, TRUE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "negative value -1");
  kt_free (t);

  static const gint32 r0 = 0, r5 = 5;
  t = kt_new (&ir_kernel_range, "opset1");
  kt_input (t, M2I_ET_I32, SCALAR, &r0, TRUE);
  kt_input (t, M2I_ET_I32, SCALAR, &r5, TRUE);
  kt_input (t, M2I_ET_I32, SCALAR, &r0, TRUE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "step is 0");
  kt_free (t);

  t = kt_new (&ir_kernel_range, "opset4");
  kt_attr (t, "output_type", "i32");
  kt_input (t, M2I_ET_I32, SCALAR, &r0, TRUE);
  kt_input (t, M2I_ET_I32, SCALAR, &r5, FALSE);
  kt_input (t, M2I_ET_I32, SCALAR, &r5, TRUE);
  kt_expect_error (t, 1, M2I_ERROR_UNSUPPORTED, "stop (input 1) must be a constant");
  kt_free (t);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/kernels/split-tile-pad/split", test_split);
  g_test_add_func ("/kernels/split-tile-pad/tile-broadcast", test_tile_broadcast);
  g_test_add_func ("/kernels/split-tile-pad/pad", test_pad);
  g_test_add_func ("/kernels/split-tile-pad/slice", test_slice);
  g_test_add_func ("/kernels/split-tile-pad/range", test_range);
  g_test_add_func ("/kernels/split-tile-pad/errors", test_errors);
  return g_test_run ();
}
