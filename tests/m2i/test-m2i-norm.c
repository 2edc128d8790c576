/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* norm against hand-computed values, the coefficient helpers, and the fast
 * norm of plans within one fp16 ulp of the reference over every finite fp16
 * input. */
#include "m2i-test-util.h"
#include <math.h>

/* ImageNet mean/std with input scale 1/255: B = 0.485·255 = 123.675 ->
 * fp16 123.6875 (ulp 1/16 in [64,128)); C = 0.229·255 = 58.395 -> 58.40625
 * (ulp 1/32 in [32,64)). Then for x = 0: -123.6875 / 58.40625 = -2.11771 ->
 * fp16 (ulp 1/512 in [2,4)) -1084/512 = -2.1171875; x = 255: 131.3125 /
 * 58.40625 = 2.24826 -> 1151/512 = 2.248046875; x = 128: 4.3125 / 58.40625 =
 * 0.0738362 -> (ulp 2^-17 in [1/16,1/8)) 9678/2^17 = 0.0738372802734375...
 * rounded: 0.0738525390625 is 0x2cba, the nearest half. */
static void
test_imagenet_values (void)
{
  const float mean[3] = { 0.485f, 0.456f, 0.406f }, std[3] = { 0.229f, 0.224f, 0.225f };
  M2iNormParams n;
  g_assert_true (m2i_norm_params_from_mean_std (&n, mean, std, 1.0f / 255.0f));
  g_assert_cmpfloat (m2i_f16_to_f32 (n.b[0]), ==, 123.6875f);
  g_assert_cmpfloat (m2i_f16_to_f32 (n.c[0]), ==, 58.40625f);
  g_assert_cmpfloat (m2i_f16_to_f32 (n.a[0]), ==, 1.0f);
  g_assert_cmpfloat (m2i_f16_to_f32 (n.d[0]), ==, 0.0f);

  /* a 4x1 planar fp16 image holding 0, 1, 128, 255 in every channel */
  TestImage in, out, fast;
  test_image_alloc_padded (&in, M2I_FORMAT_PL_FP16_RGB, 4, 1, 0, 0);
  test_image_alloc_padded (&out, M2I_FORMAT_PL_FP16_RGB, 4, 1, 0, 0);
  test_image_alloc_padded (&fast, M2I_FORMAT_PL_FP16_RGB, 4, 1, 0, 0);
  const float xs[4] = { 0, 1, 128, 255 };
  for (int c = 0; c < 3; c++)
    for (int i = 0; i < 4; i++)
      ((m2i_f16 *) in.img.data[c])[i] = m2i_f32_to_f16 (xs[i]);
  M2iOpList ops;
  m2i_op_list_init (&ops);
  m2i_op_list_add_norm (&ops, &n);
  GError *err = NULL;
  g_assert_true (m2i_reference_run (&in.img, &ops, &out.img, &err));
  const m2i_f16 *r = (const m2i_f16 *) out.img.data[0];
  g_assert_cmphex (r[0], ==, 0xc03c);     /* -2.1171875 */
  g_assert_cmphex (r[1], ==, 0xc034);     /* -2.1015625: -122.6875/58.40625 = -2.10059 */
  g_assert_cmphex (r[2], ==, 0x2cba);
  g_assert_cmphex (r[3], ==, 0x407f);     /* 2.248046875 */
  g_assert_cmpfloat (m2i_f16_to_f32 (r[0]), ==, -2.1171875f);
  g_assert_cmpfloat (m2i_f16_to_f32 (r[3]), ==, 2.248046875f);
  M2iPlan *plan = m2i_plan_new (&in.img, &ops, &fast.img, NULL, &err);
  g_assert_no_error (err);
  g_assert_true (m2i_plan_run (plan, &in.img, &fast.img, &err));
  g_assert_cmpuint (test_image_max_diff (&out.img, &fast.img), <=, 1);
  m2i_plan_free (plan);
  test_image_free (&in);
  test_image_free (&out);
  test_image_free (&fast);
}

/* BatchNormInference coefficients: C = sqrt(var + eps). gamma 2, beta 0.5,
 * mean 10, var 3.99, eps 0.01: (20 - 10) / 2 · 2 + 0.5 = 10.5 exactly. */
static void
test_batchnorm_values (void)
{
  const float g[3] = { 2, 2, 2 }, b[3] = { 0.5f, 0.5f, 0.5f }, m[3] = { 10, 10, 10 },
      v[3] = { 3.99f, 3.99f, 3.99f };
  M2iNormParams n;
  g_assert_true (m2i_norm_params_from_batchnorm (&n, g, b, m, v, 0.01f));
  g_assert_cmpfloat (m2i_f16_to_f32 (n.c[1]), ==, 2.0f);
  TestImage in, out;
  test_image_alloc_padded (&in, M2I_FORMAT_PL_FP32_BGR, 1, 1, 0, 0);
  test_image_alloc_padded (&out, M2I_FORMAT_PL_FP32_BGR, 1, 1, 0, 0);
  for (int c = 0; c < 3; c++)
    ((float *) in.img.data[c])[0] = 20.0f;
  M2iOpList ops;
  m2i_op_list_init (&ops);
  m2i_op_list_add_norm (&ops, &n);
  g_assert_true (m2i_reference_run (&in.img, &ops, &out.img, NULL));
  for (int c = 0; c < 3; c++)
    g_assert_cmpfloat (((float *) out.img.data[c])[0], ==, 10.5f);
  /* invalid: var + eps <= 0, std 0, coefficient out of fp16 range */
  const float neg[3] = { -1, -1, -1 }, zero[3] = { 0, 0, 0 }, big[3] = { 1e6f, 1e6f, 1e6f };
  g_assert_false (m2i_norm_params_from_batchnorm (&n, g, b, m, neg, 0.0f));
  g_assert_false (m2i_norm_params_from_mean_std (&n, m, zero, 1.0f));
  g_assert_false (m2i_norm_params_from_mean_std (&n, big, g, 1.0f));
  test_image_free (&in);
  test_image_free (&out);
}

/* Every finite fp16 value (as a 256x256 planar image, same in all planes),
 * through awkward coefficients: plan (fast formula) vs reference <= 1 ulp. */
static void
test_fast_norm_all_halves (void)
{
  TestImage in, ref, out;
  test_image_alloc_padded (&in, M2I_FORMAT_PL_FP16_RGB, 256, 256, 0, 0);
  test_image_alloc_padded (&ref, M2I_FORMAT_PL_FP16_RGB, 256, 256, 0, 0);
  test_image_alloc_padded (&out, M2I_FORMAT_PL_FP16_RGB, 256, 256, 0, 0);
  for (int c = 0; c < 3; c++)
    for (guint i = 0; i < 65536; i++) {
      m2i_f16 h = (m2i_f16) i;
      if ((h & 0x7c00) == 0x7c00)
        h = 0x3c00;                       /* no inf/NaN inputs */
      ((m2i_f16 *) in.img.data[c])[i] = h;
    }
  M2iNormParams n;
  const float A[3] = { 0.7f, -3.1f, 1.0f }, B[3] = { 0.3f, 100.0f, -7.25f },
      C[3] = { 3.0f, 0.017f, 1.0f / 3.0f }, D[3] = { -0.5f, 2.0f, 0.0f };
  for (int c = 0; c < 3; c++) {
    n.a[c] = m2i_f32_to_f16 (A[c]);
    n.b[c] = m2i_f32_to_f16 (B[c]);
    n.c[c] = m2i_f32_to_f16 (C[c]);
    n.d[c] = m2i_f32_to_f16 (D[c]);
  }
  M2iOpList ops;
  m2i_op_list_init (&ops);
  m2i_op_list_add_norm (&ops, &n);
  GError *err = NULL;
  g_assert_true (m2i_reference_run (&in.img, &ops, &ref.img, &err));
  M2iPlan *plan = m2i_plan_new (&in.img, &ops, &out.img, NULL, &err);
  g_assert_true (m2i_plan_run (plan, &in.img, &out.img, &err));
  /* the reference is the formula itself: spot-check it in double */
  for (guint i = 0; i < 65536; i += 97) {
    m2i_f16 h = ((m2i_f16 *) in.img.data[1])[i];
    double x = m2i_f16_to_f32 (h);
    double want = (x - m2i_f16_to_f32 (n.b[1])) / m2i_f16_to_f32 (n.c[1])
        * m2i_f16_to_f32 (n.a[1]) + m2i_f16_to_f32 (n.d[1]);
    float got = m2i_f16_to_f32 (((m2i_f16 *) ref.img.data[1])[i]);
    if (fabs (want) < 65504.0 && fabs (want) > 1e-4)
      g_assert_cmpfloat (fabs (got - want) / fabs (want), <=, 1.0 / 1024);
  }
  g_assert_cmpuint (test_image_max_diff (&ref.img, &out.img), <=, 1);
  m2i_plan_free (plan);
  test_image_free (&in);
  test_image_free (&ref);
  test_image_free (&out);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/m2i/norm/imagenet-values", test_imagenet_values);
  g_test_add_func ("/m2i/norm/batchnorm-values", test_batchnorm_values);
  g_test_add_func ("/m2i/norm/fast-all-halves", test_fast_norm_all_halves);
  return g_test_run ();
}
