/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Random requests: random op lists (any order, any length up to the limit),
 * random input formats and sizes (odd and zero included), outputs either
 * what the chain produces or something random. Every request must either be
 * refused with a message or plan; every plan must run and agree with the
 * reference path (u8 exact, fp16 within one ulp, fp32 within 1e-5), under
 * both profiles and 1-3 threads. Run once per SIMD level. */
#include "m2i-test-util.h"

static M2iFormat
random_format (GRand *r)
{
  return (M2iFormat) g_rand_int_range (r, 1, M2I_FORMAT_LAST);
}

/* A sensible input: NV12 or I420 mostly, sometimes the pixel formats of the
 * pixel-chain kernel (4-byte, gray, RGB). */
static M2iFormat
sensible_format (GRand *r)
{
  static const M2iFormat pixels[] = { M2I_FORMAT_IL_RGBX8888, M2I_FORMAT_IL_BGRX8888,
    M2I_FORMAT_IL_XRGB8888, M2I_FORMAT_IL_XBGR8888, M2I_FORMAT_PL_GRAY8, M2I_FORMAT_IL_RGB888,
    M2I_FORMAT_PL_BGR24 };
  if (g_rand_int_range (r, 0, 3))
    return g_rand_boolean (r) ? M2I_FORMAT_SP_NV12_8 : M2I_FORMAT_PL_YUV420_8;
  return pixels[g_rand_int_range (r, 0, G_N_ELEMENTS (pixels))];
}

/* The first op of a sensible chain on @inf. */
static gint
sensible_head (GRand *r, M2iFormat inf)
{
  if (m2i_format_is_yuv (inf))
    return g_rand_int_range (r, 0, 4) ? 0 : 6;
  if (m2i_format_pixel_stride (inf) == 4)
    return g_rand_int_range (r, 0, 3) ? 5 : 6;
  return g_rand_int_range (r, 1, 5);
}

static void
random_ops (GRand *r, M2iOpList *ops, gboolean sensible, M2iFormat inf)
{
  m2i_op_list_init (ops);
  gint n = sensible ? g_rand_int_range (r, 1, 6) : g_rand_int_range (r, 0, M2I_MAX_OPS + 1);
  static const M2iResizeMode modes[] = { M2I_RESIZE_NEAREST, M2I_RESIZE_LINEAR,
    M2I_RESIZE_LINEAR_ONNX, M2I_RESIZE_CUBIC, M2I_RESIZE_BILINEAR_PILLOW,
    M2I_RESIZE_BICUBIC_PILLOW };
  for (gint i = 0; i < n; i++) {
    gint kind = sensible && i == 0 ? sensible_head (r, inf) : g_rand_int_range (r, 0, 7);
    switch (kind) {
      case 0:
        m2i_op_list_add_csc (ops, g_rand_boolean (r) ? M2I_ORDER_BGR : M2I_ORDER_RGB);
        break;
      case 1:
        m2i_op_list_add_convert (ops, g_rand_int_range (r, 0, 3) ? M2I_DTYPE_F16 : M2I_DTYPE_F32);
        break;
      case 2: {
        M2iResizeParams p;
        m2i_resize_params_init (&p, g_rand_int_range (r, 1, 48), g_rand_int_range (r, 1, 40));
        p.mode = modes[g_rand_int_range (r, 0, G_N_ELEMENTS (modes))];
        p.coord = (M2iCoordMode) g_rand_int_range (r, 0, 5);
        p.nearest = (M2iNearestMode) g_rand_int_range (r, 0, 5);
        p.antialias = g_rand_int_range (r, 0, 4) == 0;
        m2i_op_list_add_resize (ops, &p);
        break;
      }
      case 3: {
        const float mean[3] = { 0.4f, 0.5f, 0.6f }, std[3] = { 0.2f, 0.25f, 0.3f };
        M2iNormParams nn;
        m2i_norm_params_from_mean_std (&nn, mean, std, 1.0f / 255.0f);
        m2i_op_list_add_norm (ops, &nn);
        break;
      }
      case 5:
        m2i_op_list_add_drop_alpha (ops);
        break;
      case 6:
        m2i_op_list_add_gray (ops);
        break;
      default:
        m2i_op_list_add_permute (ops);
        break;
    }
  }
}

static void
fill_fp (TestImage *t, GRand *r)
{
  M2iDataType dt = m2i_format_dtype (t->img.format);
  if (dt == M2I_DTYPE_U8) {
    test_image_randomize (t, r);
  } else if (dt == M2I_DTYPE_F16) {
    for (gsize i = 0; i < t->size / 2; i++)
      ((m2i_f16 *) t->mem)[i] = m2i_f32_to_f16 ((float) g_rand_int_range (r, 0, 256));
  } else {
    for (gsize i = 0; i < t->size / 4; i++)
      ((float *) t->mem)[i] = (float) g_rand_double_range (r, 0, 255);
  }
}

static void
test_random_requests (void)
{
  GRand *r = g_rand_new_with_seed (2024);
  guint planned = 0, refused = 0;
  for (int iter = 0; iter < 4000; iter++) {
    gboolean sensible = iter % 3 != 0;
    M2iFormat inf = sensible ? sensible_format (r) : random_format (r);
    gint w = g_rand_int_range (r, sensible ? 1 : 0, 70), h = g_rand_int_range (r, sensible ? 1 : 0, 50);
    if (sensible && m2i_format_is_yuv (inf)) {
      w = MAX (2, w & ~1);
      h = MAX (2, h & ~1);
    }
    M2iOpList ops;
    random_ops (r, &ops, sensible, inf);
    M2iFormat outf;
    gint ow, oh;
    if (!m2i_op_list_result (&ops, inf, w, h, &outf, &ow, &oh, NULL) || iter % 7 == 0) {
      outf = random_format (r);
      ow = g_rand_int_range (r, 1, 48);
      oh = g_rand_int_range (r, 1, 40);
    }
    M2iImage in_t, out_t;
    memset (&in_t, 0, sizeof in_t);
    memset (&out_t, 0, sizeof out_t);
    if (!m2i_image_init (&in_t, inf, w, h)) {
      in_t.format = inf;
      in_t.width = w;
      in_t.height = h;
    }
    g_assert_true (m2i_image_init (&out_t, outf, ow, oh));
    M2iPlanOptions o = { (M2iProfile) g_rand_int_range (r, 0, 2), g_rand_int_range (r, 1, 4) };
    GError *err = NULL;
    M2iPlan *plan = m2i_plan_new (&in_t, &ops, &out_t, &o, &err);
    if (!plan) {
      g_assert_nonnull (err);
      g_assert_cmpuint (strlen (err->message), >, 10);
      g_clear_error (&err);
      refused++;
      continue;
    }
    g_assert_no_error (err);
    planned++;
    TestImage in, ref, out;
    test_image_alloc_padded (&in, inf, w, h, g_rand_int_range (r, 0, 3) * 2, 0);
    fill_fp (&in, r);
    test_image_alloc_padded (&ref, outf, ow, oh, 0, 0);
    test_image_alloc_padded (&out, outf, ow, oh, 0, 0);
    /* the plan was made for tight strides: use a tight input for the run */
    TestImage tin;
    test_image_alloc_padded (&tin, inf, w, h, 0, 0);
    for (guint p = 0; p < m2i_format_n_planes (inf); p++) {
      gsize rb;
      gint rows;
      m2i_format_plane_geometry (inf, w, h, p, &rb, &rows);
      for (gint y = 0; y < rows; y++)
        memcpy (tin.img.data[p] + y * tin.img.stride[p], in.img.data[p] + y * in.img.stride[p], rb);
    }
    g_assert_true (m2i_reference_run (&tin.img, &ops, &ref.img, &err));
    g_assert_no_error (err);
    g_assert_true (m2i_plan_run (plan, &tin.img, &out.img, &err));
    g_assert_no_error (err);
    guint d = test_image_max_diff (&ref.img, &out.img);
    guint allowed = m2i_format_dtype (outf) == M2I_DTYPE_U8 ? 0
        : m2i_format_dtype (outf) == M2I_DTYPE_F16 ? 1 : 10;
    if (d > allowed) {
      gchar *desc = m2i_plan_to_string (plan), *od = m2i_op_list_to_string (&ops);
      g_printerr ("iteration %d: %s %dx%d, %s -> diff %u\n%s\n", iter,
          m2i_format_to_string (inf), w, h, od, d, desc);
      g_free (desc);
      g_free (od);
    }
    g_assert_cmpuint (d, <=, allowed);
    m2i_plan_free (plan);
    test_image_free (&in);
    test_image_free (&tin);
    test_image_free (&ref);
    test_image_free (&out);
  }
  g_test_message ("%u planned, %u refused", planned, refused);
  /* both kinds must have happened a fair number of times */
  g_assert_cmpuint (planned, >, 600);
  g_assert_cmpuint (refused, >, 600);
  g_rand_free (r);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/m2i/random/requests", test_random_requests);
  return g_test_run ();
}
