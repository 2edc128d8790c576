/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Formats, plane geometry, image wrapping and checks; op lists. */
#include "m2i-test-util.h"

static void
test_names (void)
{
  for (int f = 1; f < M2I_FORMAT_LAST; f++)
    g_assert_cmpint (m2i_format_from_string (m2i_format_to_string (f)), ==, f);
  g_assert_cmpint (m2i_format_from_string ("NV21"), ==, M2I_FORMAT_UNKNOWN);
  g_assert_cmpstr (m2i_format_to_string (M2I_FORMAT_SP_NV12_8), ==, "SP_NV12_8");
  g_assert_cmpstr (m2i_format_to_string (99), ==, "UNKNOWN");
  g_assert_cmpint (m2i_format_compose (M2I_LAYOUT_PLANAR, M2I_DTYPE_F16, M2I_ORDER_BGR), ==,
      M2I_FORMAT_PL_FP16_BGR);
  g_assert_cmpint (m2i_format_compose (M2I_LAYOUT_INTERLEAVED, M2I_DTYPE_F32, M2I_ORDER_RGB),
      ==, M2I_FORMAT_IL_FP32_RGB);
}

static void
test_geometry (void)
{
  gsize rb;
  gint rows;
  g_assert_true (m2i_format_plane_geometry (M2I_FORMAT_SP_NV12_8, 1920, 1080, 1, &rb, &rows));
  g_assert_cmpuint (rb, ==, 1920);
  g_assert_cmpint (rows, ==, 540);
  g_assert_true (m2i_format_plane_geometry (M2I_FORMAT_PL_YUV420_8, 1920, 1080, 2, &rb, &rows));
  g_assert_cmpuint (rb, ==, 960);
  g_assert_true (m2i_format_plane_geometry (M2I_FORMAT_IL_BGR888, 7, 3, 0, &rb, &rows));
  g_assert_cmpuint (rb, ==, 21);
  g_assert_true (m2i_format_plane_geometry (M2I_FORMAT_PL_FP16_RGB, 224, 224, 2, &rb, &rows));
  g_assert_cmpuint (rb, ==, 448);
  g_assert_false (m2i_format_plane_geometry (M2I_FORMAT_IL_RGB888, 7, 3, 1, &rb, &rows));
  g_assert_false (m2i_format_plane_geometry (M2I_FORMAT_IL_RGB888, 0, 3, 0, &rb, &rows));
  /* NV12 with stride 2048: Y 2048*1080, UV 2048*540 */
  g_assert_cmpuint (m2i_image_wrap_size (M2I_FORMAT_SP_NV12_8, 1920, 1080, 2048), ==,
      2048u * 1080 + 2048u * 540);
  g_assert_cmpuint (m2i_image_wrap_size (M2I_FORMAT_PL_FP32_RGB, 4, 2, 0), ==, 4u * 2 * 4 * 3);
  g_assert_cmpuint (m2i_image_wrap_size (M2I_FORMAT_IL_RGB888, 4, 2, 11), ==, 0);
  M2iImage img;
  g_assert_true (m2i_image_init (&img, M2I_FORMAT_IL_RGB888, 10, 4));
  img.stride[0] = 40;
  g_assert_cmpuint (m2i_image_plane_min_size (&img, 0), ==, 40u * 3 + 30);
}

static void
test_wrap_and_check (void)
{
  guint8 buf[4096];
  M2iImage img;
  GError *err = NULL;
  g_assert_true (m2i_image_wrap (&img, M2I_FORMAT_PL_YUV420_8, 16, 8, buf, sizeof buf, 20, &err));
  g_assert_true (img.data[1] == buf + 160);
  g_assert_cmpuint (img.stride[1], ==, 10);
  g_assert_true (img.data[2] == buf + 160 + 40);
  g_assert_true (m2i_image_check (&img, "input", TRUE, &err));
  g_assert_false (m2i_image_wrap (&img, M2I_FORMAT_IL_RGB888, 100, 100, buf, sizeof buf, 0, &err));
  g_assert_error (err, M2I_ERROR, M2I_ERROR_BUFFER_TOO_SMALL);
  g_assert_nonnull (strstr (err->message, "needs 30000 bytes"));
  g_clear_error (&err);
  g_assert_false (m2i_image_wrap (&img, M2I_FORMAT_IL_RGB888, 10, 10, buf, sizeof buf, 29, &err));
  g_assert_error (err, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT);
  g_clear_error (&err);
  /* misaligned fp16 stride */
  g_assert_true (m2i_image_init (&img, M2I_FORMAT_PL_FP16_RGB, 3, 3));
  img.stride[0] = 7;
  g_assert_false (m2i_image_check (&img, "output", FALSE, &err));
  g_assert_nonnull (strstr (err->message, "multiples of the 2-byte"));
  g_clear_error (&err);
  /* odd NV12 */
  g_assert_true (m2i_image_init (&img, M2I_FORMAT_SP_NV12_8, 5, 4));
  g_assert_false (m2i_image_check (&img, "input", FALSE, &err));
  g_assert_nonnull (strstr (err->message, "even width and height"));
  g_clear_error (&err);
}

static void
test_op_list (void)
{
  M2iOpList a, b;
  M2iResizeParams rp;
  m2i_resize_params_init (&rp, 224, 224);
  rp.mode = M2I_RESIZE_LINEAR;
  rp.coord = M2I_COORD_HALF_PIXEL;
  m2i_op_list_init (&a);
  g_assert_true (m2i_op_list_add_csc (&a, M2I_ORDER_BGR));
  g_assert_true (m2i_op_list_add_convert (&a, M2I_DTYPE_F16));
  g_assert_false (m2i_op_list_add_convert (&a, M2I_DTYPE_U8));
  g_assert_true (m2i_op_list_add_resize (&a, &rp));
  g_assert_true (m2i_op_list_add_permute (&a));
  gchar *s = m2i_op_list_to_string (&a);
  g_assert_cmpstr (s, ==, "csc(BGR) -> convertU8F16 -> resize(224x224 linear half_pixel) -> permute");
  g_free (s);
  /* a copy is equal; appending lists (deferred frames of adjacent elements) */
  b = a;
  g_assert_true (m2i_op_list_equal (&a, &b));
  M2iOpList head, tail;
  m2i_op_list_init (&head);
  m2i_op_list_add_csc (&head, M2I_ORDER_BGR);
  m2i_op_list_init (&tail);
  m2i_op_list_add_convert (&tail, M2I_DTYPE_F16);
  m2i_op_list_add_resize (&tail, &rp);
  m2i_op_list_add_permute (&tail);
  g_assert_true (m2i_op_list_append (&head, &tail));
  g_assert_true (m2i_op_list_equal (&head, &a));
  b.ops[2].u.resize.out_width = 225;
  g_assert_false (m2i_op_list_equal (&a, &b));
  /* full list */
  for (int i = a.n_ops; i < M2I_MAX_OPS; i++)
    g_assert_true (m2i_op_list_add_permute (&a));
  g_assert_false (m2i_op_list_add_permute (&a));
  g_assert_false (m2i_op_list_append (&a, &tail));
  m2i_op_list_init (&a);
  s = m2i_op_list_to_string (&a);
  g_assert_cmpstr (s, ==, "(no ops)");
  g_free (s);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/m2i/format/names", test_names);
  g_test_add_func ("/m2i/format/geometry", test_geometry);
  g_test_add_func ("/m2i/format/wrap-and-check", test_wrap_and_check);
  g_test_add_func ("/m2i/ops/list", test_op_list);
  return g_test_run ();
}
