/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interpolate-1/4/11 against torch.nn.functional.interpolate, Pillow's
 * resize (the *_pillow modes), and a NumPy evaluation of the spec's
 * formulas done element by element over the whole neighbourhood (for the
 * modes and coordinate rules torch lacks: every nearest_mode ×
 * coordinate_transformation_mode, antialiased "linear", pads, scales). */
#include "kernel-test.h"

static const gint64 axes23[] = { 2, 3 };

/* An Interpolate-4/11 layer on @x resizing axes @axes to @sizes. */
static KTest *
interp_new (const char *version, const KtArray *x, const char *mode, const gint64 *sizes,
    const gint64 *axes, gint n_axes)
{
  KTest *t = kt_new (&ir_kernel_interpolate, version);
  kt_attr (t, "mode", mode);
  kt_attr (t, "shape_calculation_mode", "sizes");
  kt_input (t, x->type, x->shape, x->data, FALSE);
  kt_input (t, M2I_ET_I64, SHAPE (n_axes), sizes, TRUE);
  if (!strcmp (version, "opset4")) {
    static const float unused[M2I_MAX_RANK] = { 1, 1, 1, 1, 1, 1, 1, 1 };
    kt_input (t, M2I_ET_F32, SHAPE (n_axes), unused, TRUE);
  }
  if (axes)
    kt_input (t, M2I_ET_I64, SHAPE (n_axes), axes, TRUE);
  return t;
}

static void
run_compare (KTest *t, const char *want_name, double tol)
{
  KtArray *y = kt_load (want_name);
  kt_run (t, 1);
  if (!m2i_shape_equal (&t->outputs[0].shape, &y->shape))
    g_error ("%s: shape %s, expected %s", want_name, ir_k_shape_str (&t->outputs[0].shape, 0),
        ir_k_shape_str (&y->shape, 1));
  kt_assert_close (want_name, kt_out_f32 (t, 0), y->data, m2i_shape_numel (&y->shape), tol, tol);
  kt_array_free (y);
  kt_free (t);
}

static void
test_torch (void)
{
  KtArray *x = kt_load ("interp_x"), *x5 = kt_load ("interp_x5");
  KTest *t;
  static const gint64 s10x12[] = { 10, 12 }, s7x4[] = { 7, 4 }, s8x4[] = { 8, 4 };
  static const gint64 s9x11[] = { 9, 11 }, s9x4[] = { 9, 4 };

  t = interp_new ("opset4", x, "nearest", s10x12, axes23, 2);
  kt_attr (t, "coordinate_transformation_mode", "asymmetric");
  kt_attr (t, "nearest_mode", "floor");
  run_compare (t, "interp_torch_nearest", 0);

  t = interp_new ("opset11", x, "nearest", s7x4, axes23, 2);
  kt_attr (t, "coordinate_transformation_mode", "tf_half_pixel_for_nn");
  kt_attr (t, "nearest_mode", "floor");
  run_compare (t, "interp_torch_nearest_exact", 0);

  /* torch's bilinear is linear_onnx; without antialias the spec's linear
   * (triangle filter, renormalized at the borders) gives the same. */
  t = interp_new ("opset4", x, "linear_onnx", s8x4, axes23, 2);
  run_compare (t, "interp_torch_bilinear", 1e-6);
  t = interp_new ("opset11", x, "linear", s8x4, axes23, 2);
  run_compare (t, "interp_torch_bilinear", 1e-6);

  t = interp_new ("opset4", x, "linear_onnx", s9x11, NULL, 0);
  /* No axes input: all axes, sizes for each. */
  t->ctx.n_inputs = 0;
  {
    static const gint64 all[] = { 1, 2, 9, 11 };
    static const float ones[] = { 1, 1, 1, 1 };
    kt_input (t, x->type, x->shape, x->data, FALSE);
    kt_input (t, M2I_ET_I64, SHAPE (4), all, TRUE);
    kt_input (t, M2I_ET_F32, SHAPE (4), ones, TRUE);
  }
  kt_attr (t, "coordinate_transformation_mode", "align_corners");
  run_compare (t, "interp_torch_bilinear_ac", 1e-6);

  t = interp_new ("opset4", x, "cubic", s9x4, axes23, 2);
  run_compare (t, "interp_torch_bicubic", 2e-6);

  static const gint64 s537[] = { 5, 3, 7 }, axes234[] = { 2, 3, 4 };
  t = interp_new ("opset11", x5, "linear_onnx", s537, axes234, 3);
  run_compare (t, "interp_torch_trilinear", 1e-6);

  /* Interpolate-1: linear + align_corners on NCHW → linear_onnx with
   * align_corners; nearest → "simple" rounding, asymmetric coordinates. */
  t = kt_new (&ir_kernel_interpolate, "opset1");
  kt_attr (t, "axes", "2,3");
  kt_attr (t, "mode", "linear");
  kt_attr (t, "align_corners", "1");
  kt_attr (t, "pads_begin", "0");
  kt_attr (t, "pads_end", "0");
  kt_input (t, x->type, x->shape, x->data, FALSE);
  kt_input (t, M2I_ET_I64, SHAPE (2), s9x11, TRUE);
  run_compare (t, "interp_torch_bilinear_ac", 1e-6);

  t = kt_new (&ir_kernel_interpolate, "opset1");
  kt_attr (t, "axes", "2,3");
  kt_attr (t, "mode", "nearest");
  kt_attr (t, "align_corners", "false");
  kt_input (t, x->type, x->shape, x->data, FALSE);
  kt_input (t, M2I_ET_I64, SHAPE (2), s10x12, TRUE);
  run_compare (t, "interp_torch_nearest", 0);

  kt_array_free (x);
  kt_array_free (x5);
}

static void
test_spec (void)
{
  KtArray *x = kt_load ("interp_x");
  KTest *t;
  static const gint64 s3x4[] = { 3, 4 }, s7x9[] = { 7, 9 }, s8x5[] = { 8, 5 };
  static const gint64 s7x8[] = { 7, 8 }, s3x9[] = { 3, 9 };

  t = interp_new ("opset4", x, "linear", s3x4, axes23, 2);
  kt_attr (t, "antialias", "true");
  run_compare (t, "interp_spec_linear_aa", 1e-6);

  t = interp_new ("opset4", x, "linear", s7x9, axes23, 2);
  kt_attr (t, "coordinate_transformation_mode", "asymmetric");
  run_compare (t, "interp_spec_linear_up", 1e-6);

  t = interp_new ("opset11", x, "cubic", s8x5, axes23, 2);
  kt_attr (t, "coordinate_transformation_mode", "align_corners");
  kt_attr (t, "cube_coeff", "-0.5");
  run_compare (t, "interp_spec_cubic", 2e-6);

  t = interp_new ("opset4", x, "linear_onnx", s7x8, axes23, 2);
  kt_attr (t, "coordinate_transformation_mode", "asymmetric");
  run_compare (t, "interp_spec_onnx_asym", 1e-6);

  static const char *const nearest[] = { "round_prefer_floor", "round_prefer_ceil", "floor",
    "ceil", "simple" };
  static const char *const coords[] = { "half_pixel", "pytorch_half_pixel", "asymmetric",
    "tf_half_pixel_for_nn", "align_corners" };
  for (guint i = 0; i < G_N_ELEMENTS (nearest); i++)
    for (guint j = 0; j < G_N_ELEMENTS (coords); j++) {
      g_autofree gchar *name = g_strdup_printf ("interp_nearest_%s_%s", nearest[i], coords[j]);
      t = interp_new (j % 2 ? "opset11" : "opset4", x, "nearest", s3x9, axes23, 2);
      kt_attr (t, "nearest_mode", nearest[i]);
      kt_attr (t, "coordinate_transformation_mode", coords[j]);
      run_compare (t, name, 0);
    }

  /* scales mode with pads on a resized and a plain axis. */
  static const float sc[] = { 1.5f, 0.5f };
  static const gint64 dummy[] = { 1, 1 };
  t = kt_new (&ir_kernel_interpolate, "opset4");
  kt_attr (t, "mode", "linear_onnx");
  kt_attr (t, "shape_calculation_mode", "scales");
  kt_attr (t, "pads_begin", "0,1,0,0");
  kt_attr (t, "pads_end", "0,0,0,2");
  kt_input (t, x->type, x->shape, x->data, FALSE);
  kt_input (t, M2I_ET_I64, SHAPE (2), dummy, TRUE);
  kt_input (t, M2I_ET_F32, SHAPE (2), sc, TRUE);
  kt_input (t, M2I_ET_I64, SHAPE (2), axes23, TRUE);
  run_compare (t, "interp_spec_pads", 1e-6);
  kt_array_free (x);
}

static void
test_pillow (void)
{
  static const gint64 axes01[] = { 0, 1 };
  KtArray *x = kt_load ("pillow_x");
  static const struct { const char *mode, *name; gint64 size[2]; } cases[] = {
    { "bilinear_pillow", "pillow_bilinear_3x4", { 3, 4 } },
    { "bilinear_pillow", "pillow_bilinear_11x13", { 11, 13 } },
    { "bicubic_pillow", "pillow_bicubic_3x4", { 3, 4 } },
    { "bicubic_pillow", "pillow_bicubic_11x13", { 11, 13 } },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    KTest *t = interp_new ("opset11", x, cases[i].mode, cases[i].size, axes01, 2);
    kt_attr (t, "cube_coeff", "-0.5");
    run_compare (t, cases[i].name, 2e-5);
  }
  kt_array_free (x);

  /* u8: Pillow rounds between its passes and at the end. */
  KtArray *xu = kt_load ("pillow_xu8");
  static const gint64 s4x5[] = { 4, 5 };
  static const char *const modes[] = { "bilinear_pillow", "bicubic_pillow" };
  static const char *const want[] = { "pillow_bilinear_u8", "pillow_bicubic_u8" };
  for (gint m = 0; m < 2; m++) {
    KTest *t = interp_new ("opset11", xu, modes[m], s4x5, axes01, 2);
    kt_attr (t, "cube_coeff", "-0.5");
    kt_run (t, 1);
    KtArray *y = kt_load (want[m]);
    const guint8 *got = t->outputs[0].data, *exp = y->data;
    for (gint k = 0; k < 20; k++)
      if (ABS ((gint) got[k] - (gint) exp[k]) > 1)
        g_error ("%s: element %d is %u, Pillow %u", want[m], k, got[k], exp[k]);
    kt_free (t);
    kt_array_free (y);
  }
  kt_array_free (xu);
}

static void
test_types (void)
{
  /* nearest on i64 is a plain gather: [10, 20, 30] → 6 by doubling */
  static const gint64 v[] = { 10, 20, 30 }, six[] = { 6 }, ax0[] = { 0 };
  KtArray x = { M2I_ET_I64, SHAPE (3), (gpointer) v };
  KTest *t = interp_new ("opset11", &x, "nearest", six, ax0, 1);
  kt_attr (t, "coordinate_transformation_mode", "asymmetric");
  kt_attr (t, "nearest_mode", "floor");
  kt_run (t, 1);
  static const gint64 want[] = { 10, 10, 20, 20, 30, 30 };
  g_assert_cmpmem (t->outputs[0].data, sizeof want, want, sizeof want);
  kt_free (t);

  /* u8 results, as OpenVINO's reference: [0, 255] → 3 samples with
   * align_corners has 127.5 in the middle, which linear_onnx truncates
   * (static_cast) to 127 and linear rounds half away from zero to 128. */
  static const guint8 u[] = { 0, 255 };
  static const gint64 three[] = { 3 };
  KtArray xu = { M2I_ET_U8, SHAPE (2), (gpointer) u };
  static const char *const u8_modes[] = { "linear_onnx", "linear" };
  for (gint m = 0; m < 2; m++) {
    t = interp_new ("opset11", &xu, u8_modes[m], three, ax0, 1);
    kt_attr (t, "coordinate_transformation_mode", "align_corners");
    kt_run (t, 1);
    const guint8 *y = t->outputs[0].data;
    g_assert_cmpint (y[0], ==, 0);
    g_assert_cmpint (y[1], ==, m == 0 ? 127 : 128);
    g_assert_cmpint (y[2], ==, 255);
    kt_free (t);
  }

  /* Identity: same size on every axis copies the data. */
  static const float f[] = { 1, 2, 3, 4 };
  static const gint64 two[] = { 2, 2 }, ax01[] = { 0, 1 };
  KtArray xf = { M2I_ET_F32, SHAPE (2, 2), (gpointer) f };
  t = interp_new ("opset4", &xf, "cubic", two, ax01, 2);
  kt_run (t, 1);
  kt_assert_close ("identity", kt_out_f32 (t, 0), f, 4, 0, 0);
  kt_free (t);
}

/* Rank-4 transpose of @x (shape @s) by @perm into a new buffer. */
static float *
permute4 (const float *x, const M2iShape *s, const gint *perm, M2iShape *out)
{
  out->rank = 4;
  for (gint d = 0; d < 4; d++)
    out->dims[d] = s->dims[perm[d]];
  float *y = g_new (float, m2i_shape_numel (s));
  gint64 st[4] = { s->dims[1] * s->dims[2] * s->dims[3], s->dims[2] * s->dims[3], s->dims[3], 1 };
  gint64 i = 0;
  for (gint64 a = 0; a < out->dims[0]; a++)
    for (gint64 b = 0; b < out->dims[1]; b++)
      for (gint64 c = 0; c < out->dims[2]; c++)
        for (gint64 d = 0; d < out->dims[3]; d++)
          y[i++] = x[a * st[perm[0]] + b * st[perm[1]] + c * st[perm[2]] + d * st[perm[3]]];
  return y;
}

/* Two implementations of the same spec against each other: NCHW and NHWC
 * resizes (axes H, W) go through the M2I engine's resize tables and row
 * kernels (resize-private.h); the same data laid out [N, H, C, W] — axes 1
 * and 3, which the engine cannot take — goes through this file's own
 * per-axis tables. Every mode, coordinate rule and nearest rule, up and
 * down, antialias on and off, f32. (Nearest takes the gather of the
 * tables in every layout; test_nearest_spec checks it against the spec,
 * tests/m2i the engine's nearest.) */
static void
test_engine_vs_tables (void)
{
  static const char *const modes[] = { "nearest", "linear", "linear_onnx", "cubic",
    "bilinear_pillow", "bicubic_pillow" };
  static const char *const coords[] = { "half_pixel", "pytorch_half_pixel", "asymmetric",
    "tf_half_pixel_for_nn", "align_corners" };
  static const char *const nearest[] = { "round_prefer_floor", "round_prefer_ceil", "floor",
    "ceil", "simple" };
  static const gint64 sizes[][2] = { { 11, 6 }, { 4, 13 }, { 3, 3 } };
  const gint nchw_to_nhcw[] = { 0, 2, 1, 3 }, nhcw_to_nchw[] = { 0, 2, 1, 3 };
  const gint nchw_to_nhwc[] = { 0, 2, 3, 1 }, nhwc_to_nchw[] = { 0, 3, 1, 2 };
  M2iShape xs = SHAPE (2, 3, 7, 9);
  float *x = g_new (float, m2i_shape_numel (&xs));
  kt_fill (x, m2i_shape_numel (&xs), 61, -2, 2);
  M2iShape xs_t, xs_l;
  float *x_t = permute4 (x, &xs, nchw_to_nhcw, &xs_t);    /* tables: axes 1, 3 */
  float *x_l = permute4 (x, &xs, nchw_to_nhwc, &xs_l);    /* engine, interleaved */
  static const gint64 ax_nchw[] = { 2, 3 }, ax_nhcw[] = { 1, 3 }, ax_nhwc[] = { 1, 2 };
  gint checked = 0;
  for (guint m = 0; m < G_N_ELEMENTS (modes); m++)
    for (guint c = 0; c < G_N_ELEMENTS (coords); c++)
      for (guint n = 0; n < (m == 0 ? G_N_ELEMENTS (nearest) : 1); n++)
        for (guint z = 0; z < G_N_ELEMENTS (sizes); z++)
          for (gint aa = 0; aa < (m == 1 ? 2 : 1); aa++) {
            KtArray in[3] = { { M2I_ET_F32, xs, x }, { M2I_ET_F32, xs_t, x_t },
              { M2I_ET_F32, xs_l, x_l } };
            const gint64 *axes[3] = { ax_nchw, ax_nhcw, ax_nhwc };
            float *res[3];
            M2iShape rs[3];
            for (gint v = 0; v < 3; v++) {
              KTest *t = interp_new ("opset11", &in[v], modes[m], sizes[z], axes[v], 2);
              kt_attr (t, "coordinate_transformation_mode", coords[c]);
              kt_attr (t, "nearest_mode", nearest[n]);
              kt_attr (t, "antialias", aa ? "true" : "false");
              kt_attr (t, "cube_coeff", m == 5 ? "-0.5" : "-0.75");
              kt_run (t, 1);
              rs[v] = t->outputs[0].shape;
              res[v] = g_memdup2 (t->outputs[0].data, m2i_tensor_nbytes (&t->outputs[0]));
              kt_free (t);
            }
            M2iShape back;
            float *r_t = permute4 (res[1], &rs[1], nhcw_to_nchw, &back);
            float *r_l = permute4 (res[2], &rs[2], nhwc_to_nchw, &back);
            g_autofree gchar *what = g_strdup_printf ("%s %s %s aa=%d %" G_GINT64_FORMAT "x%"
                G_GINT64_FORMAT, modes[m], coords[c], nearest[n], aa, sizes[z][0], sizes[z][1]);
            gsize cnt = m2i_shape_numel (&rs[0]);
            kt_assert_close (what, r_t, res[0], cnt, 2e-5, 2e-5);
            kt_assert_close (what, r_l, res[0], cnt, 0, 0);     /* same engine, same bits */
            for (gint v = 0; v < 3; v++)
              g_free (res[v]);
            g_free (r_t);
            g_free (r_l);
            checked++;
          }
  g_test_message ("%d resize settings compared", checked);
  g_free (x);
  g_free (x_t);
  g_free (x_l);
}

/* ---- nearest against the spec's pseudo-code ------------------------------ */

/* The spec's get_original_coordinate, in fp32; an axis whose scale is 1 keeps
 * its coordinate, as OpenVINO's reference does. */
static float
spec_coord (const char *mode, float x, float scale, float out_len, float in_len)
{
  if (scale == 1.0f)
    return x;
  if (!strcmp (mode, "half_pixel"))
    return (x + 0.5f) / scale - 0.5f;
  if (!strcmp (mode, "pytorch_half_pixel"))
    return out_len > 1 ? (x + 0.5f) / scale - 0.5f : 0.0f;
  if (!strcmp (mode, "asymmetric"))
    return x / scale;
  if (!strcmp (mode, "tf_half_pixel_for_nn"))
    return (x + 0.5f) / scale;
  g_assert_cmpstr (mode, ==, "align_corners");
  return out_len == 1 ? 0.0f : x * (in_len - 1) / (out_len - 1);
}

/* The spec's get_nearest_pixel (round is std::round: halves away from 0). */
static gint64
spec_nearest (const char *mode, float c, gboolean downsample)
{
  if (!strcmp (mode, "round_prefer_floor"))
    return c == floorf (c) + 0.5f ? (gint64) floorf (c) : (gint64) roundf (c);
  if (!strcmp (mode, "round_prefer_ceil"))
    return (gint64) roundf (c);
  if (!strcmp (mode, "floor"))
    return (gint64) floorf (c);
  if (!strcmp (mode, "ceil"))
    return (gint64) ceilf (c);
  g_assert_cmpstr (mode, ==, "simple");
  return downsample ? (gint64) ceilf (c) : (gint64) c;
}

typedef struct {
  gint rank;
  gint64 in[5];
  gint n_axes;                         /* 0: no axes input, all axes */
  gint64 axes[5];
  gint64 sizes[5];                     /* sizes mode */
  float scales[5];                     /* scales mode when scales[0] > 0 */
  gint64 pads_begin[5], pads_end[5];
} NearestCase;

/* The spec's nearest_interpolation one output element at a time: the input
 * padded with zeros, each resized axis mapped back and rounded, clamped
 * into the padded axis. Elements of @es bytes; returns the output. */
static guint8 *
spec_nearest_run (const NearestCase *c, const char *nearest, const char *coord,
    const guint8 *x, gsize es, M2iShape *out)
{
  gint r = c->rank;
  gint64 padded[5], scale_of[5];
  float scale[5];
  out->rank = r;
  for (gint d = 0; d < r; d++) {
    padded[d] = c->in[d] + c->pads_begin[d] + c->pads_end[d];
    out->dims[d] = padded[d];
    scale[d] = 1.0f;
    scale_of[d] = 0;
  }
  for (gint i = 0; i < (c->n_axes ? c->n_axes : r); i++) {
    gint d = c->n_axes ? (gint) c->axes[i] : i;
    scale_of[d] = 1;
    if (c->scales[0] > 0) {
      scale[d] = c->scales[i];
      out->dims[d] = (gint64) floorf ((float) padded[d] * (c->scales[i] + 1e-6f));
    } else {
      out->dims[d] = c->sizes[i];
      scale[d] = (float) c->sizes[i] / (float) padded[d];
    }
  }
  gint64 n = m2i_shape_numel (out);
  guint8 *y = g_malloc (n * es);
  for (gint64 k = 0; k < n; k++) {
    gint64 rem = k, src = 0, stride = 1;
    gboolean pad = FALSE;
    for (gint d = r - 1; d >= 0; d--) {
      gint64 o = rem % out->dims[d], p = o;
      rem /= out->dims[d];
      if (scale_of[d]) {
        float xo = spec_coord (coord, (float) o, scale[d], (float) out->dims[d], (float) padded[d]);
        p = spec_nearest (nearest, xo, scale[d] < 1.0f);
        p = MAX (0, MIN (p, padded[d] - 1));
      }
      gint64 u = p - c->pads_begin[d];
      pad |= u < 0 || u >= c->in[d];
      src += u * stride;
      stride *= c->in[d];
    }
    if (pad)
      memset (y + k * es, 0, es);
    else
      memcpy (y + k * es, x + src * es, es);
  }
  return y;
}

/* Every nearest_mode × coordinate_transformation_mode on integer ratios (the
 * ×2 of YOLO's upsampling, ×3, on every axis without an axes input as
 * yolov5 has it), non-integer ones up and down, scales mode, 1-element
 * axes, pads, ranks 1 to 4, elements of 1, 2, 4 and 8 bytes, and one tensor
 * large enough to be split over threads: the bytes must be the spec's. */
static void
test_nearest_spec (void)
{
  static const NearestCase cases[] = {
    { 4, { 1, 3, 5, 7 }, 0, { 0 }, { 1, 3, 10, 14 } },
    { 4, { 2, 2, 5, 4 }, 2, { 2, 3 }, { 10, 12 } },
    { 4, { 1, 2, 5, 3 }, 2, { 2, 3 }, { 8, 7 } },
    { 4, { 1, 2, 9, 7 }, 2, { 2, 3 }, { 4, 3 } },
    { 4, { 1, 1, 1, 5 }, 2, { 2, 3 }, { 3, 10 } },
    { 4, { 1, 3, 4, 1 }, 2, { 3, 2 }, { 4, 4 } },
    { 4, { 1, 2, 5, 6 }, 2, { 2, 3 }, { 0 }, { 2.0f, 1.7f } },
    { 4, { 1, 2, 5, 6 }, 2, { 3, 2 }, { 0 }, { 0.6f, 2.5f } },
    { 4, { 1, 2, 4, 5 }, 2, { 2, 3 }, { 9, 14 }, { 0 }, { 0, 1, 1, 0 }, { 0, 0, 0, 2 } },
    { 3, { 3, 4, 5 }, 1, { 2 }, { 10 } },
    { 3, { 3, 4, 5 }, 1, { 1 }, { 11 } },
    { 1, { 5 }, 1, { 0 }, { 15 } },
  };
  static const char *const nearest[] = { "round_prefer_floor", "round_prefer_ceil", "floor",
    "ceil", "simple" };
  static const char *const coords[] = { "half_pixel", "pytorch_half_pixel", "asymmetric",
    "tf_half_pixel_for_nn", "align_corners" };
  static const M2iElementType types[] = { M2I_ET_F32, M2I_ET_U8, M2I_ET_F16, M2I_ET_I64 };
  static const NearestCase big = { 4, { 2, 3, 101, 250 }, 0, { 0 }, { 2, 3, 202, 500 } };
  gint checked = 0;
  for (guint k = 0; k <= G_N_ELEMENTS (cases); k++) {
    const NearestCase *c = k < G_N_ELEMENTS (cases) ? &cases[k] : &big;
    gint64 numel = 1;
    for (gint d = 0; d < c->rank; d++)
      numel *= c->in[d];
    for (guint ty = 0; ty < (k == 0 || k == 2 || k == 8 ? G_N_ELEMENTS (types) : 1); ty++) {
      gsize es = m2i_element_type_size (types[ty]);
      guint8 *x = g_malloc (numel * es);
      for (gint64 i = 0; i < (gint64) (numel * es); i++)
        x[i] = (guint8) g_test_rand_int ();
      for (guint i = 0; i < G_N_ELEMENTS (nearest); i++)
        for (guint j = 0; j < G_N_ELEMENTS (coords); j++) {
          if (c == &big && (i || j != 2))
            continue;                  /* YOLO's floor, asymmetric only */
          M2iShape want_shape;
          g_autofree guint8 *want = spec_nearest_run (c, nearest[i], coords[j], x, es,
              &want_shape);
          gint n_axes = c->n_axes ? c->n_axes : c->rank;
          gboolean scales = c->scales[0] > 0;
          const char *version = (i + j) % 2 ? "opset4" : "opset11";
          KTest *t = kt_new (&ir_kernel_interpolate, version);
          kt_attr (t, "mode", "nearest");
          kt_attr (t, "shape_calculation_mode", scales ? "scales" : "sizes");
          kt_attr (t, "nearest_mode", nearest[i]);
          kt_attr (t, "coordinate_transformation_mode", coords[j]);
          g_autofree gchar *pb = g_strdup_printf ("%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%"
              G_GINT64_FORMAT ",%" G_GINT64_FORMAT, c->pads_begin[0], c->pads_begin[1],
              c->pads_begin[2], c->pads_begin[3]);
          g_autofree gchar *pe = g_strdup_printf ("%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%"
              G_GINT64_FORMAT ",%" G_GINT64_FORMAT, c->pads_end[0], c->pads_end[1],
              c->pads_end[2], c->pads_end[3]);
          kt_attr (t, "pads_begin", pb);
          kt_attr (t, "pads_end", pe);
          kt_input (t, types[ty], kt_shape_of (c->in, c->rank), x, FALSE);
          if (!strcmp (version, "opset4")) {
            static const float ones[5] = { 1, 1, 1, 1, 1 };
            static const gint64 unused[5] = { 1, 1, 1, 1, 1 };
            kt_input (t, M2I_ET_I64, SHAPE (n_axes), scales ? unused : c->sizes, TRUE);
            kt_input (t, M2I_ET_F32, SHAPE (n_axes), scales ? c->scales : ones, TRUE);
          } else if (scales) {
            kt_input (t, M2I_ET_F32, SHAPE (n_axes), c->scales, TRUE);
          } else {
            kt_input (t, M2I_ET_I64, SHAPE (n_axes), c->sizes, TRUE);
          }
          if (c->n_axes)
            kt_input (t, M2I_ET_I64, SHAPE (n_axes), c->axes, TRUE);
          kt_run (t, 1);
          g_autofree gchar *what = g_strdup_printf ("case %u, %s, %s, %s, %s", k,
              m2i_element_type_to_string (types[ty]), nearest[i], coords[j], version);
          if (!m2i_shape_equal (&t->outputs[0].shape, &want_shape))
            g_error ("%s: shape %s, the spec's %s", what,
                ir_k_shape_str (&t->outputs[0].shape, 0), ir_k_shape_str (&want_shape, 1));
          const guint8 *got = t->outputs[0].data;
          for (gint64 e = 0; e < (gint64) (m2i_shape_numel (&want_shape) * es); e++)
            if (got[e] != want[e])
              g_error ("%s: byte %" G_GINT64_FORMAT " of the output is %u, the spec's %u",
                  what, e, got[e], want[e]);
          kt_free (t);
          checked++;
        }
      g_free (x);
    }
  }
  g_test_message ("%d nearest resizes compared", checked);
}

static void
test_errors (void)
{
  static float buf[64];
  static const gint64 s2[] = { 2, 2 }, s3[] = { 2, 2, 2 }, rep[] = { 2, 2 };
  KtArray x = { M2I_ET_F32, SHAPE (1, 1, 4, 4), buf };
  KTest *t;

  t = interp_new ("opset4", &x, "bilinear", s2, axes23, 2);
  kt_expect_error (t, 1, M2I_ERROR_UNSUPPORTED, "attribute mode=\"bilinear\"");
  kt_free (t);

  t = interp_new ("opset4", &x, "bilinear_pillow", s2, axes23, 2);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "from Interpolate-11 on");
  kt_free (t);

  static const gint64 axes123[] = { 1, 2, 3 };
  t = interp_new ("opset11", &x, "bicubic_pillow", s3, axes123, 3);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "exactly two axes");
  kt_free (t);

  t = interp_new ("opset11", &x, "linear", s2, rep, 2);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "listed twice");
  kt_free (t);

  static const gint64 far[] = { 2, 7 };
  t = interp_new ("opset11", &x, "linear", s2, far, 2);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "axis 7 is out of range");
  kt_free (t);

  static const gint64 one[] = { 4 };
  t = interp_new ("opset11", &x, "linear", one, axes23, 2);
  t->inputs[1].shape = SHAPE (1);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "1 sizes for 2 axes");
  kt_free (t);

  t = interp_new ("opset11", &x, "linear", s2, axes23, 2);
  t->input_const[1] = FALSE;
  kt_expect_error (t, 1, M2I_ERROR_UNSUPPORTED, "must be a constant");
  kt_free (t);

  static const gint64 zero[] = { 0, 3 };
  t = interp_new ("opset11", &x, "linear", zero, axes23, 2);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "cannot resize");
  kt_free (t);

  static const float neg[] = { -1, 2 };
  t = kt_new (&ir_kernel_interpolate, "opset11");
  kt_attr (t, "mode", "nearest");
  kt_attr (t, "shape_calculation_mode", "scales");
  kt_input (t, M2I_ET_F32, x.shape, buf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (2), neg, TRUE);
  kt_input (t, M2I_ET_I64, SHAPE (2), axes23, TRUE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "not positive");
  kt_free (t);

  t = kt_new (&ir_kernel_interpolate, "opset1");
  kt_attr (t, "axes", "2,3");
  kt_attr (t, "mode", "area");
  kt_input (t, M2I_ET_F32, x.shape, buf, FALSE);
  kt_input (t, M2I_ET_I64, SHAPE (2), s2, TRUE);
  kt_expect_error (t, 1, M2I_ERROR_UNSUPPORTED, "area");
  kt_free (t);

  t = interp_new ("opset4", &x, "cubic", s2, axes23, 2);
  t->inputs[0].type = M2I_ET_I32;
  t->ctx.n_inputs = 4;
  kt_expect_error (t, 1, M2I_ERROR_UNSUPPORTED, "element type i32");
  kt_free (t);

  t = kt_new (&ir_kernel_interpolate, "opset4");
  kt_attr (t, "mode", "nearest");
  kt_input (t, M2I_ET_F32, x.shape, buf, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "expects 3 to 4 inputs");
  kt_free (t);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/interpolate/torch", test_torch);
  g_test_add_func ("/interpolate/spec", test_spec);
  g_test_add_func ("/interpolate/pillow", test_pillow);
  g_test_add_func ("/interpolate/types", test_types);
  g_test_add_func ("/interpolate/errors", test_errors);
  g_test_add_func ("/interpolate/engine-vs-tables", test_engine_vs_tables);
  g_test_add_func ("/interpolate/nearest-spec", test_nearest_spec);
  return g_test_run ();
}
