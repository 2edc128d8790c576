/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* TopK-1/3/11 and NonMaxSuppression-5/9 against NumPy written from their
 * specifications (tests/data/ir-kernels/gen_topk_nms.py): TopK both modes
 * and sorts, ties (stable), NaN, exact i64 order beyond 2^53, u8, k clamped
 * to the axis, negative axes, i32/i64 indices, cross-checked with
 * torch.topk; NMS corner (both diagonals) and center boxes, Soft-NMS,
 * sorted and per-class order, the -1 padding and the count, defaults of
 * missing inputs, no box above the threshold, one box. Then the errors. */
#include "case-test.h"

#define TOPK(name, ver, attrs) { name, "TopK", ver, attrs, 0x2, NULL, 2, 0 }
#define NMS(name, ver, attrs, tol) { name, "NonMaxSuppression", ver, attrs, 0x3c, NULL, 3, tol }

static const KtCase cases[] = {
  TOPK ("topk_max_value", "opset11", "axis=1;mode=max;sort=value;stable=true"),
  TOPK ("topk_min_value", "opset3", "axis=1;mode=min;sort=value"),
  TOPK ("topk_max_index", "opset1", "axis=1;mode=max;sort=index;index_element_type=i64"),
  TOPK ("topk_min_index", "opset11", "axis=-2;mode=min;sort=index;index_element_type=i64"),
  TOPK ("topk_ties_i32", "opset11", "axis=-1;mode=max;sort=value;stable=true"),
  TOPK ("topk_ties_min", "opset11", "axis=0;mode=min;sort=value;stable=true"),
  TOPK ("topk_i64_big", "opset3", "axis=0;mode=max;sort=value"),
  TOPK ("topk_i64_big_min", "opset3", "axis=0;mode=min;sort=value"),
  TOPK ("topk_u8_clamp", "opset11", "axis=2;mode=max;sort=value"),
  TOPK ("topk_nan_max", "opset11", "axis=1;mode=max;sort=value"),
  TOPK ("topk_nan_min", "opset11", "axis=1;mode=min;sort=value"),
  TOPK ("topk_one", "opset1", "axis=0;mode=max;sort=value"),
  TOPK ("topk_classifier", "opset3", "axis=-1;mode=max;sort=value"),
  NMS ("nms9_corner", "opset9", "box_encoding=corner;sort_result_descending=true", 0),
  NMS ("nms9_unsorted", "opset9", "sort_result_descending=false", 0),
  NMS ("nms5_corner", "opset5", "output_type=i32", 0),
  NMS ("nms9_soft", "opset9", "", 1e-6),
  NMS ("nms5_soft", "opset5", "", 1e-6),
  NMS ("nms9_all", "opset9", "", 0),
  { "nms9_three_inputs", "NonMaxSuppression", "opset9", "", 0x4, NULL, 3, 0 },
  NMS ("nms9_center", "opset11", "box_encoding=center", 0),
  NMS ("nms9_none", "opset9", "", 0),
  NMS ("nms9_one", "opset9", "", 0),
};

static void
test_cases (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    kt_run_case (&cases[i]);
}

/* Outputs nobody reads come without memory: the kernel skips them. */
static void
test_unread_outputs (void)
{
  KtArray *x = kt_load ("topk_max_value_in0"), *y = kt_load ("topk_max_value_y0");
  static const gint64 k = 5;
  KTest *t = kt_layer ("TopK", "opset11", "axis=1;mode=max;sort=value");
  kt_input (t, x->type, x->shape, x->data, FALSE);
  kt_input (t, M2I_ET_I64, SCALAR, &k, TRUE);
  GError *error = NULL;
  g_assert_true (kt_infer (t, 2, &error));
  t->outputs[1].data = NULL;
  g_assert_true (kt_execute (t, &error));
  kt_assert_matches ("topk values only", &t->outputs[0], y, 0);
  kt_free (t);
  kt_array_free (x);
  kt_array_free (y);

  KtArray *b = kt_load ("nms9_corner_in0"), *s = kt_load ("nms9_corner_in1");
  KtArray *y0 = kt_load ("nms9_corner_y0");
  static const gint64 max_out = 25;
  static const float iou = 0.3f, thr = 0.2f;
  t = kt_layer ("NonMaxSuppression", "opset9", "");
  kt_input (t, M2I_ET_F32, b->shape, b->data, FALSE);
  kt_input (t, M2I_ET_F32, s->shape, s->data, FALSE);
  kt_input (t, M2I_ET_I64, SCALAR, &max_out, TRUE);
  kt_input (t, M2I_ET_F32, SCALAR, &iou, TRUE);
  kt_input (t, M2I_ET_F32, SCALAR, &thr, TRUE);
  g_assert_true (kt_infer (t, 3, &error));
  t->outputs[1].data = t->outputs[2].data = NULL;
  g_assert_true (kt_execute (t, &error));
  kt_assert_matches ("nms indices only", &t->outputs[0], y0, 0);
  kt_free (t);
  kt_array_free (b);
  kt_array_free (s);
  kt_array_free (y0);
}

/* max_output_boxes_per_class computed at run time: the bound is every box,
 * the rows past the count -1; the selected rows equal the constant case's. */
static void
test_runtime_max_boxes (void)
{
  KtArray *b = kt_load ("nms9_corner_in0"), *s = kt_load ("nms9_corner_in1");
  KtArray *y0 = kt_load ("nms9_corner_y0"), *y2 = kt_load ("nms9_corner_y2");
  static const gint32 max_out = 25;
  static const float iou = 0.3f, thr = 0.2f;
  KTest *t = kt_layer ("NonMaxSuppression", "opset9", "");
  kt_input (t, M2I_ET_F32, b->shape, b->data, FALSE);
  kt_input (t, M2I_ET_F32, s->shape, s->data, FALSE);
  kt_input (t, M2I_ET_I32, SHAPE (1), &max_out, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (1), &iou, FALSE);
  kt_input (t, M2I_ET_F32, SCALAR, &thr, FALSE);
  kt_run (t, 3);
  g_assert_cmpint (t->outputs[0].shape.dims[0], ==, 2 * 3 * 40);
  gint64 count = ((const gint64 *) t->outputs[2].data)[0];
  g_assert_cmpint (count, ==, ((const gint64 *) y2->data)[0]);
  const gint64 *got = t->outputs[0].data;
  g_assert_cmpint (memcmp (got, y0->data, count * 3 * sizeof (gint64)), ==, 0);
  for (gint64 i = count * 3; i < 2 * 3 * 40 * 3; i++)
    g_assert_cmpint (got[i], ==, -1);
  kt_free (t);
  kt_array_free (b);
  kt_array_free (s);
  kt_array_free (y0);
  kt_array_free (y2);
}

static void
test_errors (void)
{
  static const float buf[64];
  static const gint64 k3 = 3, kneg = -1;
  KTest *t = kt_layer ("TopK", "opset11", "axis=1;mode=max");
  kt_input (t, M2I_ET_F32, SHAPE (2, 4), buf, FALSE);
  kt_input (t, M2I_ET_I64, SCALAR, &k3, TRUE);
  kt_expect_error (t, 2, M2I_ERROR_MALFORMED, "attribute sort is required");
  kt_free (t);

  t = kt_layer ("TopK", "opset11", "axis=2;mode=max;sort=value");
  kt_input (t, M2I_ET_F32, SHAPE (2, 4), buf, FALSE);
  kt_input (t, M2I_ET_I64, SCALAR, &k3, TRUE);
  kt_expect_error (t, 2, M2I_ERROR_INVALID_ARGUMENT, "axis 2");
  kt_free (t);

  t = kt_layer ("TopK", "opset11", "axis=1;mode=largest;sort=value");
  kt_input (t, M2I_ET_F32, SHAPE (2, 4), buf, FALSE);
  kt_input (t, M2I_ET_I64, SCALAR, &k3, TRUE);
  kt_expect_error (t, 2, M2I_ERROR_UNSUPPORTED, "mode");
  kt_free (t);

  t = kt_layer ("TopK", "opset11", "axis=1;mode=max;sort=value");
  kt_input (t, M2I_ET_F32, SHAPE (2, 4), buf, FALSE);
  kt_input (t, M2I_ET_I64, SCALAR, &kneg, TRUE);
  kt_expect_error (t, 2, M2I_ERROR_INVALID_ARGUMENT, "non-negative");
  kt_free (t);

  t = kt_layer ("TopK", "opset11", "axis=1;mode=max;sort=value");
  kt_input (t, M2I_ET_F32, SHAPE (2, 4), buf, FALSE);
  kt_input (t, M2I_ET_I64, SCALAR, &k3, FALSE);
  kt_expect_error (t, 2, M2I_ERROR_UNSUPPORTED, "run time");
  kt_free (t);

  t = kt_layer ("TopK", "opset11", "axis=1;mode=max;sort=value");
  kt_input (t, M2I_ET_BOOLEAN, SHAPE (2, 4), buf, FALSE);
  kt_input (t, M2I_ET_I64, SCALAR, &k3, TRUE);
  kt_expect_error (t, 2, M2I_ERROR_UNSUPPORTED, "boolean");
  kt_free (t);

  t = kt_layer ("NonMaxSuppression", "opset9", "");
  kt_input (t, M2I_ET_F32, SHAPE (1, 5, 4), buf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (1, 2, 4), buf, FALSE);
  kt_expect_error (t, 3, M2I_ERROR_INVALID_ARGUMENT, "[batches, classes, boxes]");
  kt_free (t);

  t = kt_layer ("NonMaxSuppression", "opset9", "box_encoding=diagonal");
  kt_input (t, M2I_ET_F32, SHAPE (1, 5, 4), buf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (1, 2, 5), buf, FALSE);
  kt_expect_error (t, 3, M2I_ERROR_UNSUPPORTED, "box_encoding");
  kt_free (t);

  t = kt_layer ("NonMaxSuppression", "opset9", "");
  kt_input (t, M2I_ET_F32, SHAPE (1, 5, 4), buf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (1, 2, 5), buf, FALSE);
  kt_input (t, M2I_ET_F32, SCALAR, buf, TRUE);
  kt_expect_error (t, 3, M2I_ERROR_INVALID_ARGUMENT, "max_output_boxes_per_class");
  kt_free (t);

  t = kt_layer ("NonMaxSuppression", "opset9", "");
  kt_input (t, M2I_ET_F32, SHAPE (1, 5, 4), buf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (1, 2, 5), buf, FALSE);
  kt_input (t, M2I_ET_I64, SHAPE (2), buf, TRUE);
  kt_expect_error (t, 3, M2I_ERROR_INVALID_ARGUMENT, "one-element");
  kt_free (t);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/kernels/topk-nms/cases", test_cases);
  g_test_add_func ("/kernels/topk-nms/unread-outputs", test_unread_outputs);
  g_test_add_func ("/kernels/topk-nms/runtime-max-boxes", test_runtime_max_boxes);
  g_test_add_func ("/kernels/topk-nms/errors", test_errors);
  return g_test_run ();
}
