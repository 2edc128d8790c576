/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* NV12toRGB/BGR-8, I420toRGB/BGR-8 (single and separate planes, u8 and
 * f32) against the spec formulas evaluated in NumPy, and FakeQuantize-1
 * (per-channel and scalar ranges) against the spec formula in NumPy, plus
 * hand-computed values and the error cases. */
#include "kernel-test.h"

/* Packs per-image planes into the single-plane layout [N, H·3/2, W, 1]. */
static guint8 *
single_plane (const KtArray *y, const KtArray *c1, const KtArray *c2, gboolean i420,
    gsize elem, gsize *size)
{
  gint64 n = y->shape.dims[0], h = y->shape.dims[1], w = y->shape.dims[2];
  gsize ysz = h * w * elem, csz = (h / 2) * (w / 2) * elem;
  guint8 *buf = g_malloc (n * (ysz + 2 * csz));
  *size = n * (ysz + 2 * csz);
  for (gint64 i = 0; i < n; i++) {
    guint8 *img = buf + i * (ysz + 2 * csz);
    memcpy (img, (guint8 *) y->data + i * ysz, ysz);
    if (i420) {
      memcpy (img + ysz, (guint8 *) c1->data + i * csz, csz);
      memcpy (img + ysz + csz, (guint8 *) c2->data + i * csz, csz);
    } else {
      memcpy (img + ysz, (guint8 *) c1->data + i * 2 * csz, 2 * csz);   /* UV */
    }
  }
  return buf;
}

static float *
to_f32 (const guint8 *p, gsize n)
{
  float *f = g_new (float, n);
  for (gsize i = 0; i < n; i++)
    f[i] = p[i];
  return f;
}

static void
test_vectors (void)
{
  KtArray *y = kt_load ("yuv_y"), *u = kt_load ("yuv_u"), *v = kt_load ("yuv_v");
  KtArray *uv = kt_load ("yuv_uv"), *rgb8 = kt_load ("yuv_rgb_u8"), *rgbf = kt_load ("yuv_rgb_f32");
  gint64 n = y->shape.dims[0], h = y->shape.dims[1], w = y->shape.dims[2];
  gsize out_n = n * h * w * 3;
  const M2iOpKernel *kernels[4] = { &ir_kernel_nv12_to_rgb, &ir_kernel_nv12_to_bgr,
    &ir_kernel_i420_to_rgb, &ir_kernel_i420_to_bgr };
  for (gint k = 0; k < 4; k++) {
    gboolean i420 = k >= 2, bgr = k % 2;
    for (gint f = 0; f < 2; f++) {              /* u8, f32 */
      for (gint single = 0; single < 2; single++) {
        KTest *t = kt_new (kernels[k], "opset8");
        M2iElementType et = f ? M2I_ET_F32 : M2I_ET_U8;
        gpointer owned[3] = { NULL, NULL, NULL };
        if (single) {
          gsize sz;
          guint8 *buf = single_plane (y, i420 ? u : uv, v, i420, 1, &sz);
          owned[0] = f ? (gpointer) to_f32 (buf, sz) : buf;
          if (f)
            g_free (buf);
          kt_input (t, et, SHAPE (n, h * 3 / 2, w, 1), owned[0], FALSE);
        } else {
          const KtArray *planes[3] = { y, i420 ? u : uv, v };
          for (gint p = 0; p < (i420 ? 3 : 2); p++) {
            gsize cnt = m2i_shape_numel (&planes[p]->shape);
            owned[p] = f ? (gpointer) to_f32 (planes[p]->data, cnt) : g_memdup2 (planes[p]->data, cnt);
            kt_input (t, et, planes[p]->shape, owned[p], FALSE);
          }
        }
        kt_run (t, 1);
        g_assert_true (m2i_shape_equal (&t->outputs[0].shape, &rgb8->shape));
        /* Swap R and B of the expectation for the BGR kernels. */
        for (gsize i = 0; i < out_n; i++) {
          gsize src = bgr ? (i / 3) * 3 + (2 - i % 3) : i;
          if (f) {
            float got = kt_out_f32 (t, 0)[i], want = ((const float *) rgbf->data)[src];
            if (got != want)
              g_error ("%s f32 single=%d: element %" G_GSIZE_FORMAT " is %.9g, expected %.9g",
                  kernels[k]->type, single, i, got, want);
          } else {
            guint8 got = ((const guint8 *) t->outputs[0].data)[i];
            guint8 want = ((const guint8 *) rgb8->data)[src];
            if (got != want)
              g_error ("%s u8 single=%d: element %" G_GSIZE_FORMAT " is %u, expected %u",
                  kernels[k]->type, single, i, got, want);
          }
        }
        kt_free (t);
        for (gint p = 0; p < 3; p++)
          g_free (owned[p]);
      }
    }
  }
  kt_array_free (y);
  kt_array_free (u);
  kt_array_free (v);
  kt_array_free (uv);
  kt_array_free (rgb8);
  kt_array_free (rgbf);
}

/* Hand-computed: Y=16, U=V=128 is black; Y=235 gives 1.164·219 = 254.916
 * → 255 (u8); Y=81, U=90, V=240 (a saturated red): R = 75.66 + 178.752 =
 * 254.412 → 254, G = 75.66 + 14.858 − 91.056 = −0.538 → 0, B = 75.66 −
 * 76.684 → 0. */
static void
test_hand (void)
{
  static const guint8 img[] = {
    16, 235, 81, 81,      /* Y row 0 */
    16, 235, 81, 81,      /* Y row 1 */
    128, 128, 90, 240,    /* UV row: (U, V) for x = 0..1, then x = 2..3 */
  };
  KTest *t = kt_new (&ir_kernel_nv12_to_rgb, "opset8");
  kt_input (t, M2I_ET_U8, SHAPE (1, 3, 4, 1), img, FALSE);
  kt_run (t, 1);
  const guint8 *o = t->outputs[0].data;
  g_assert_cmpint (o[0], ==, 0);
  g_assert_cmpint (o[1], ==, 0);
  g_assert_cmpint (o[2], ==, 0);
  g_assert_cmpint (o[3], ==, 255);
  g_assert_cmpint (o[4], ==, 255);
  g_assert_cmpint (o[5], ==, 255);
  g_assert_cmpint (o[6], ==, 254);
  g_assert_cmpint (o[7], ==, 0);
  g_assert_cmpint (o[8], ==, 0);
  kt_free (t);
}

static void
test_color_errors (void)
{
  static guint8 buf[256];
  KTest *t = kt_new (&ir_kernel_nv12_to_rgb, "opset8");
  kt_input (t, M2I_ET_U8, SHAPE (1, 5, 4, 1), buf, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "1.5");
  kt_free (t);

  t = kt_new (&ir_kernel_i420_to_rgb, "opset8");
  kt_input (t, M2I_ET_U8, SHAPE (1, 3, 5, 1), buf, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "must be even");
  kt_free (t);

  t = kt_new (&ir_kernel_nv12_to_bgr, "opset8");
  kt_input (t, M2I_ET_U8, SHAPE (1, 4, 4, 1), buf, FALSE);
  kt_input (t, M2I_ET_U8, SHAPE (1, 2, 2, 1), buf, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "UV plane (input 1) has shape [1,2,2,1]");
  kt_free (t);

  t = kt_new (&ir_kernel_i420_to_bgr, "opset8");
  kt_input (t, M2I_ET_U8, SHAPE (1, 4, 4, 1), buf, FALSE);
  kt_input (t, M2I_ET_U8, SHAPE (1, 2, 2, 1), buf, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "or 3 (separate planes), has 2");
  kt_free (t);

  t = kt_new (&ir_kernel_i420_to_rgb, "opset8");
  kt_input (t, M2I_ET_U8, SHAPE (1, 4, 4, 1), buf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (1, 2, 2, 1), buf, FALSE);
  kt_input (t, M2I_ET_U8, SHAPE (1, 2, 2, 1), buf, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "U plane (input 1) is f32");
  kt_free (t);

  t = kt_new (&ir_kernel_nv12_to_rgb, "opset8");
  kt_input (t, M2I_ET_I32, SHAPE (1, 6, 4, 1), buf, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_UNSUPPORTED, "element type i32");
  kt_free (t);

  t = kt_new (&ir_kernel_nv12_to_rgb, "opset8");
  kt_input (t, M2I_ET_U8, SHAPE (1, 6, 4, 3), buf, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "one channel");
  kt_free (t);
}

static void
test_fake_quantize (void)
{
  KtArray *a[6] = { kt_load ("fq_x"), kt_load ("fq_il"), kt_load ("fq_ih"), kt_load ("fq_ol"),
    kt_load ("fq_oh"), kt_load ("fq_y") };
  KTest *t = kt_new (&ir_kernel_fake_quantize, "opset1");
  kt_attr (t, "levels", "255");
  for (gint i = 0; i < 5; i++)
    kt_input (t, a[i]->type, a[i]->shape, a[i]->data, i > 0);
  kt_run (t, 1);
  kt_assert_close ("fake quantize", kt_out_f32 (t, 0), a[5]->data,
      m2i_shape_numel (&a[5]->shape), 0, 0);
  kt_free (t);
  for (gint i = 0; i < 6; i++)
    kt_array_free (a[i]);

  /* levels 2 (binarization) with il == ih: x <= 0 → -1, else 1. And the
   * rounding is half to even: levels 3 over [0, 1] maps 0.25 → round(0.5)
   * = 0 → 0, 0.75 → round(1.5) = 2 → 1. */
  static const float x[] = { -0.5f, 0.0f, 0.25f, 0.75f, 2.0f };
  static const float zero[] = { 0 }, one[] = { 1 }, mone[] = { -1 };
  t = kt_new (&ir_kernel_fake_quantize, "opset1");
  kt_attr (t, "levels", "2");
  kt_input (t, M2I_ET_F32, SHAPE (5), x, FALSE);
  kt_input (t, M2I_ET_F32, SCALAR, zero, TRUE);
  kt_input (t, M2I_ET_F32, SCALAR, zero, TRUE);
  kt_input (t, M2I_ET_F32, SCALAR, mone, TRUE);
  kt_input (t, M2I_ET_F32, SCALAR, one, TRUE);
  kt_run (t, 1);
  static const float bin[] = { -1, -1, 1, 1, 1 };
  kt_assert_close ("binarization", kt_out_f32 (t, 0), bin, 5, 0, 0);
  kt_free (t);

  t = kt_new (&ir_kernel_fake_quantize, "opset1");
  kt_attr (t, "levels", "3");
  kt_attr (t, "auto_broadcast", "numpy");
  kt_input (t, M2I_ET_F32, SHAPE (5), x, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (1), zero, TRUE);
  kt_input (t, M2I_ET_F32, SHAPE (1), one, TRUE);
  kt_input (t, M2I_ET_F32, SHAPE (1), zero, TRUE);
  kt_input (t, M2I_ET_F32, SHAPE (1), one, TRUE);
  kt_run (t, 1);
  static const float tern[] = { 0, 0, 0, 1, 1 };
  kt_assert_close ("half to even", kt_out_f32 (t, 0), tern, 5, 0, 0);
  kt_free (t);

  static float buf[64];
  t = kt_new (&ir_kernel_fake_quantize, "opset1");
  kt_attr (t, "levels", "1");
  for (gint i = 0; i < 5; i++)
    kt_input (t, M2I_ET_F32, SHAPE (2), buf, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "levels");
  kt_free (t);

  t = kt_new (&ir_kernel_fake_quantize, "opset1");
  kt_attr (t, "levels", "256");
  kt_input (t, M2I_ET_F32, SHAPE (2, 3), buf, FALSE);
  for (gint i = 0; i < 4; i++)
    kt_input (t, M2I_ET_F32, SHAPE (i == 2 ? 2 : 3), buf, TRUE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "output_low (input 3) has shape [2]");
  kt_free (t);

  t = kt_new (&ir_kernel_fake_quantize, "opset1");
  kt_attr (t, "levels", "256");
  kt_attr (t, "auto_broadcast", "none");
  kt_input (t, M2I_ET_F32, SHAPE (2, 3), buf, FALSE);
  for (gint i = 0; i < 4; i++)
    kt_input (t, M2I_ET_F32, SHAPE (3), buf, TRUE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "auto_broadcast=none");
  kt_free (t);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/color/vectors", test_vectors);
  g_test_add_func ("/color/hand", test_hand);
  g_test_add_func ("/color/errors", test_color_errors);
  g_test_add_func ("/fake-quantize", test_fake_quantize);
  return g_test_run ();
}
