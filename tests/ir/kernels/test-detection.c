/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* PriorBoxClustered-1 and DetectionOutput-1/8 against independent Python
 * implementations of the specifications (tests/data/ir-kernels/gen.py):
 * SSD with CENTER_SIZE and shared locations (person-detection-retail-0013's
 * attributes), CORNER with per-class locations and variances in the target,
 * unnormalized priors, MXNet-style NMS, the five-input (ARM) variant; plus
 * hand-computed priors and the error cases. */
#include "kernel-test.h"

static void
test_prior_box_clustered (void)
{
  static const gint64 grid[] = { 3, 4 }, img[] = { 48, 80 };
  KtArray *y = kt_load ("pbc_y");
  KTest *t = kt_new (&ir_kernel_prior_box_clustered, "opset1");
  kt_attr (t, "width", "10.5,30,70");
  kt_attr (t, "height", "12,25.5,60");
  kt_attr (t, "offset", "0.5");
  kt_attr (t, "step", "16");
  kt_attr (t, "clip", "0");
  kt_attr (t, "variance", "0.1,0.1,0.2,0.2");
  kt_input (t, M2I_ET_I64, SHAPE (2), grid, TRUE);
  kt_input (t, M2I_ET_I64, SHAPE (2), img, FALSE);
  kt_run (t, 1);
  g_assert_true (m2i_shape_equal (&t->outputs[0].shape, &y->shape));
  kt_assert_close ("pbc", kt_out_f32 (t, 0), y->data, m2i_shape_numel (&y->shape), 0, 0);
  kt_free (t);
  kt_array_free (y);

  /* No step: derived from the image and grid sizes; one variance value. */
  static const gint32 grid2[] = { 2, 5 }, img2[] = { 40, 90 };
  y = kt_load ("pbc_clip_y");
  t = kt_new (&ir_kernel_prior_box_clustered, "opset1");
  kt_attr (t, "width", "30,60");
  kt_attr (t, "height", "40,10");
  kt_attr (t, "offset", "0.25");
  kt_attr (t, "variance", "0.15");
  kt_input (t, M2I_ET_I32, SHAPE (2), grid2, TRUE);
  kt_input (t, M2I_ET_I32, SHAPE (2), img2, TRUE);
  kt_run (t, 1);
  kt_assert_close ("pbc clip", kt_out_f32 (t, 0), y->data, m2i_shape_numel (&y->shape), 0, 0);
  kt_free (t);
  kt_array_free (y);

  /* person-detection-retail-0013's first prior: cell (0, 0), step 16,
   * offset 0.5 → centre (8, 8); width 11.33, height 34.07 on 544×320. */
  static const gint64 g3[] = { 20, 34 }, i3[] = { 320, 544 };
  t = kt_new (&ir_kernel_prior_box_clustered, "opset1");
  kt_attr (t, "width", "11.329999923706055,17.0");
  kt_attr (t, "height", "34.06999969482422,47.11000061035156");
  kt_attr (t, "clip", "0");
  kt_attr (t, "flip", "1");
  kt_attr (t, "offset", "0.5");
  kt_attr (t, "step", "16.0");
  kt_attr (t, "variance", "0.1,0.1,0.2,0.2");
  kt_input (t, M2I_ET_I64, SHAPE (2), g3, TRUE);
  kt_input (t, M2I_ET_I64, SHAPE (2), i3, TRUE);
  kt_run (t, 1);
  g_assert_cmpint (t->outputs[0].shape.dims[1], ==, 4 * 20 * 34 * 2);
  const float *o = kt_out_f32 (t, 0);
  g_assert_cmpfloat_with_epsilon (o[0], (8 - 11.33f / 2) / 544, 1e-6);
  g_assert_cmpfloat_with_epsilon (o[1], (8 - 34.07f / 2) / 320, 1e-6);
  g_assert_cmpfloat_with_epsilon (o[2], (8 + 11.33f / 2) / 544, 1e-6);
  g_assert_cmpfloat_with_epsilon (o[3], (8 + 34.07f / 2) / 320, 1e-6);
  g_assert_cmpfloat (o[4 * 20 * 34 * 2 + 2], ==, 0.2f);
  kt_free (t);
}

typedef struct {
  const char *key, *value;
} Attr;

static const Attr ssd_attrs[] = {
  { "num_classes", "2" }, { "background_label_id", "0" }, { "top_k", "30" },
  { "keep_top_k", "40" }, { "code_type", "caffe.PriorBoxParameter.CENTER_SIZE" },
  { "share_location", "1" }, { "nms_threshold", "0.44999998807907104" },
  { "confidence_threshold", "0.009999999776482582" }, { "normalized", "1" },
  { "input_height", "1" }, { "input_width", "1" }, { "variance_encoded_in_target", "0" },
  { "eta", "1.0" }, { "visualize", "False" }, { NULL, NULL },
};

static const Attr corner_attrs[] = {
  { "num_classes", "3" }, { "background_label_id", "-1" }, { "top_k", "5" },
  { "keep_top_k", "-1" }, { "code_type", "caffe.PriorBoxParameter.CORNER" },
  { "share_location", "false" }, { "nms_threshold", "0.45" },
  { "confidence_threshold", "0.01" }, { "normalized", "true" },
  { "variance_encoded_in_target", "true" }, { "clip_after_nms", "true" }, { NULL, NULL },
};

static const Attr unnorm_attrs[] = {
  { "num_classes", "4" }, { "background_label_id", "0" }, { "top_k", "-1" },
  { "keep_top_k", "7" }, { "code_type", "caffe.PriorBoxParameter.CENTER_SIZE" },
  { "nms_threshold", "0.45" }, { "confidence_threshold", "0.01" }, { "normalized", "0" },
  { "input_height", "300" }, { "input_width", "300" }, { "clip_before_nms", "1" },
  { NULL, NULL },
};

static const Attr mxnet_attrs[] = {
  { "num_classes", "4" }, { "background_label_id", "0" }, { "top_k", "15" },
  { "keep_top_k", "6" }, { "code_type", "caffe.PriorBoxParameter.CENTER_SIZE" },
  { "nms_threshold", "0.45" }, { "confidence_threshold", "0.01" }, { "normalized", "1" },
  { "decrease_label_id", "true" }, { NULL, NULL },
};

static const Attr arm_attrs[] = {
  { "num_classes", "3" }, { "background_label_id", "0" }, { "top_k", "20" },
  { "keep_top_k", "8" }, { "code_type", "caffe.PriorBoxParameter.CENTER_SIZE" },
  { "nms_threshold", "0.45" }, { "confidence_threshold", "0.01" }, { "normalized", "1" },
  { "objectness_score", "0.4" }, { NULL, NULL },
};

/* 33 priors of 2 classes, per-class locations (gen.py's do_odd). */
static const Attr odd_attrs[] = {
  { "num_classes", "2" }, { "background_label_id", "0" }, { "top_k", "10" },
  { "keep_top_k", "12" }, { "code_type", "caffe.PriorBoxParameter.CENTER_SIZE" },
  { "share_location", "0" }, { "nms_threshold", "0.45" }, { "confidence_threshold", "0.01" },
  { "normalized", "1" }, { NULL, NULL },
};

/* 300 priors of 3 classes, scores in steps of 1/16: many candidates tie
 * at the top_k cut, every one of them in the output (NMS at 0.9, no
 * keep_top_k; gen.py's do_ties). */
static const Attr ties_attrs[] = {
  { "num_classes", "3" }, { "background_label_id", "0" }, { "top_k", "25" },
  { "keep_top_k", "-1" }, { "code_type", "caffe.PriorBoxParameter.CENTER_SIZE" },
  { "nms_threshold", "0.9" }, { "confidence_threshold", "0.01" }, { "normalized", "1" },
  { NULL, NULL },
};

static const Attr ties_mxnet_attrs[] = {
  { "num_classes", "3" }, { "background_label_id", "0" }, { "top_k", "40" },
  { "keep_top_k", "-1" }, { "code_type", "caffe.PriorBoxParameter.CENTER_SIZE" },
  { "nms_threshold", "0.9" }, { "confidence_threshold", "0.01" }, { "normalized", "1" },
  { "decrease_label_id", "true" }, { NULL, NULL },
};

static void
check_detection (const char *name, const Attr *attrs, const char *version, gboolean arm)
{
  static const char *const parts[] = { "loc", "conf", "priors", "arm_conf", "arm_loc" };
  KtArray *in[5] = { NULL };
  KTest *t = kt_new (&ir_kernel_detection_output, version);
  for (const Attr *a = attrs; a->key; a++)
    if (strcmp (version, "opset8") || strcmp (a->key, "num_classes"))
      kt_attr (t, a->key, a->value);
  for (gint i = 0; i < (arm ? 5 : 3); i++) {
    g_autofree gchar *n = g_strdup_printf ("%s_%s", name, parts[i]);
    in[i] = kt_load (n);
    kt_input (t, in[i]->type, in[i]->shape, in[i]->data, i == 2);
  }
  g_autofree gchar *yn = g_strdup_printf ("%s_y", name);
  KtArray *y = kt_load (yn);
  kt_run (t, 1);
  if (!m2i_shape_equal (&t->outputs[0].shape, &y->shape))
    g_error ("%s: shape %s, expected %s", name, ir_k_shape_str (&t->outputs[0].shape, 0),
        ir_k_shape_str (&y->shape, 1));
  g_autofree gchar *what = g_strdup_printf ("%s (%s)", name, version);
  kt_assert_close (what, kt_out_f32 (t, 0), y->data, m2i_shape_numel (&y->shape), 1e-6, 1e-6);
  /* A second run gives the same rows (scratch reused, nothing left over). */
  g_assert_true (kt_execute (t, NULL));
  kt_assert_close (what, kt_out_f32 (t, 0), y->data, m2i_shape_numel (&y->shape), 1e-6, 1e-6);
  kt_free (t);
  for (gint i = 0; i < 5; i++)
    kt_array_free (in[i]);
  kt_array_free (y);
}

static void
test_detection_output (void)
{
  check_detection ("do_ssd", ssd_attrs, "opset1", FALSE);
  check_detection ("do_ssd", ssd_attrs, "opset8", FALSE);
  check_detection ("do_corner_perclass", corner_attrs, "opset1", FALSE);
  check_detection ("do_unnormalized", unnorm_attrs, "opset1", FALSE);
  check_detection ("do_mxnet", mxnet_attrs, "opset8", FALSE);
  check_detection ("do_arm", arm_attrs, "opset1", TRUE);
  check_detection ("do_odd", odd_attrs, "opset1", FALSE);
  check_detection ("do_ties", ties_attrs, "opset1", FALSE);
  check_detection ("do_ties_mxnet", ties_mxnet_attrs, "opset8", FALSE);
}

/* A PriorBoxClustered layer with @offset (NULL: none) on a 2×2 grid. */
static KTest *
pbc_new (const char *offset, gboolean grid_const, const gint64 *img)
{
  static const gint64 grid[] = { 2, 2 };
  KTest *t = kt_new (&ir_kernel_prior_box_clustered, "opset1");
  if (offset)
    kt_attr (t, "offset", offset);
  kt_input (t, M2I_ET_I64, SHAPE (2), grid, grid_const);
  kt_input (t, M2I_ET_I64, SHAPE (2), img, FALSE);
  return t;
}

/* A DetectionOutput layer with @attrs and box logits, class predictions and
 * priors of the given widths. */
static KTest *
do_new (const Attr *attrs, gint64 loc, gint64 conf, gint64 priors)
{
  static float buf[4096];
  KTest *t = kt_new (&ir_kernel_detection_output, "opset1");
  for (const Attr *a = attrs; a->key; a++)
    kt_attr (t, a->key, a->value);
  kt_input (t, M2I_ET_F32, SHAPE (1, loc), buf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (1, conf), buf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (1, 2, priors), buf, TRUE);
  return t;
}

static void
test_errors (void)
{
  static const gint64 img[] = { 8, 8 }, zero_img[] = { 0, 8 };
  KTest *t = pbc_new ("0.5", TRUE, img);
  kt_attr (t, "width", "1,2");
  kt_attr (t, "height", "1");
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "pair up");
  kt_free (t);

  t = pbc_new ("0.5", FALSE, img);
  kt_expect_error (t, 1, M2I_ERROR_UNSUPPORTED, "input 0 must be a constant");
  kt_free (t);

  t = pbc_new ("0.5", TRUE, img);
  kt_attr (t, "variance", "0.1,0.2");
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "0, 1 or 4");
  kt_free (t);

  t = pbc_new (NULL, TRUE, img);
  kt_expect_error (t, 1, M2I_ERROR_MALFORMED, "offset is required");
  kt_free (t);

  t = pbc_new ("0.5", TRUE, zero_img);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "image_size");
  kt_free (t);

  /* DetectionOutput: shapes that disagree, missing or unknown attributes. */
  static const Attr bare[] = { { "num_classes", "2" }, { NULL, NULL } };
  t = do_new (ssd_attrs, 40, 20, 44);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "do not agree");
  kt_free (t);

  t = do_new (bare, 40, 20, 40);
  kt_expect_error (t, 1, M2I_ERROR_MALFORMED, "nms_threshold and keep_top_k are required");
  kt_free (t);

  t = do_new (ssd_attrs, 40, 20, 40);
  kt_attr (t, "code_type", "caffe.PriorBoxParameter.CORNER_SIZE");
  kt_expect_error (t, 1, M2I_ERROR_UNSUPPORTED, "code_type");
  kt_free (t);

  t = do_new (ssd_attrs, 40, 20, 40);
  kt_input (t, M2I_ET_F32, SHAPE (1, 20), t->input_data[1], FALSE);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "3 or 5 inputs, has 4");
  kt_free (t);

  /* Sizes from the file whose products overflowed (issue 14; UBSan):
   * 2^36 priors of 2^30 - 1 classes, a 2^62 × 2^62 prior grid. */
  static const Attr many[] = { { "num_classes", "1073741823" }, { "keep_top_k", "1" },
    { "nms_threshold", "0.5" }, { "normalized", "1" }, { NULL, NULL } };
  t = do_new (many, (gint64) 1 << 38, (gint64) 1 << 38, (gint64) 1 << 38);
  kt_expect_error (t, 1, M2I_ERROR_UNSUPPORTED, "more than 2^31 candidates");
  kt_free (t);
  static const gint64 huge[] = { (gint64) 1 << 62, (gint64) 1 << 62 };
  t = kt_new (&ir_kernel_prior_box_clustered, "opset1");
  kt_attr (t, "offset", "0.5");
  kt_input (t, M2I_ET_I64, SHAPE (2), huge, TRUE);
  kt_input (t, M2I_ET_I64, SHAPE (2), img, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_UNSUPPORTED, "too many priors");
  kt_free (t);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/prior-box-clustered", test_prior_box_clustered);
  g_test_add_func ("/detection-output", test_detection_output);
  g_test_add_func ("/errors", test_errors);
  return g_test_run ();
}
