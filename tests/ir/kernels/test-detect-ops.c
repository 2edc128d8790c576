/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* PriorBox-1/8, RegionYolo-1, ReorgYolo-1, Proposal-1/4, ROIPooling-1,
 * ROIAlign-3/9, CTCGreedyDecoder-1 and CTCGreedyDecoderSeqLen-6 against
 * Python written from their specifications and the algorithms they cite
 * (tests/data/ir-kernels/gen_detect.py): SSD's and MXNet's priors, the
 * max-before/after-aspect order, densities and fixed sizes, clipping,
 * variances of 1 and 4 values; YOLO v2 and v3 heads (torch's sigmoid and
 * softmax), reorg at strides 2 and 3 (i32); Caffe and TensorFlow
 * proposals with both scale layouts, clipping and normalisation; boxes
 * outside, across and inside the map, malformed and empty ones; CTC with
 * ties, merging, empty and full sequences, a custom blank. Then the errors,
 * data errors at run time included. */
#include "case-test.h"

#define C1(name, type, ver, attrs, mask, tol) { name, type, ver, attrs, mask, NULL, 1, tol }
#define C2(name, type, ver, attrs, mask, tol) { name, type, ver, attrs, mask, NULL, 2, tol }

static const KtCase cases[] = {
  C1 ("pb_ssd", "PriorBox", "opset1", "min_size=30;max_size=60;aspect_ratio=2;flip=1;clip=0;"
      "step=8;offset=0.5;variance=0.1,0.1,0.2,0.2", 0x1, 1e-6),
  C1 ("pb_order_clip", "PriorBox", "opset8", "min_size=20,40;max_size=30,70;aspect_ratio=2,3,2;"
      "flip=true;clip=true;step=0;offset=0.5;variance=0.2;min_max_aspect_ratios_order=false",
      0x1, 1e-6),
  C1 ("pb_density", "PriorBox", "opset8", "aspect_ratio=2;step=32;offset=0.5;fixed_size=32,64;"
      "density=2,3;clip=false", 0x3, 1e-6),
  C1 ("pb_fixed_ratio", "PriorBox", "opset8", "step=16;offset=0.25;fixed_size=24;fixed_ratio=4;"
      "density=2", 0x1, 1e-6),
  C1 ("pb_mxnet", "PriorBox", "opset8", "min_size=0.2,0.35;aspect_ratio=2,0.5;flip=0;step=0;"
      "offset=0.5;scale_all_sizes=false", 0x1, 1e-6),
  C1 ("region_v2", "RegionYolo", "opset1", "anchors=1,2,3,4,5,6,7,8,9,10;axis=1;classes=3;"
      "coords=4;do_softmax=1;end_axis=3;num=5", 0, 1e-6),
  C1 ("region_v2_axis", "RegionYolo", "opset1", "axis=-2;classes=3;coords=4;do_softmax=1;"
      "end_axis=-1;num=5", 0, 1e-6),
  C1 ("region_v3", "RegionYolo", "opset1", "anchors=10,14,23,27,37,58;axis=1;classes=6;coords=4;"
      "do_softmax=0;end_axis=3;mask=0,1,2;num=6", 0, 1e-6),
  C1 ("reorg_s2", "ReorgYolo", "opset2", "stride=2", 0, 0),
  C1 ("reorg_s3_i32", "ReorgYolo", "opset2", "stride=3", 0, 0),
#define PROP "base_size=16;pre_nms_topn=60;post_nms_topn=25;nms_thresh=0.6;feat_stride=16;" \
  "min_size=8;ratio=0.5,1;scale=1,2,4"
  C2 ("prop4_caffe", "Proposal", "opset4", PROP, 0, 2e-5),
  C1 ("prop1_caffe", "Proposal", "opset1", PROP ";framework=", 0, 2e-5),
  C2 ("prop4_tf", "Proposal", "opset4", "base_size=16;pre_nms_topn=60;post_nms_topn=80;"
      "nms_thresh=0.6;feat_stride=16;min_size=8;ratio=0.5,1;scale=1,2,4;framework=tensorflow;"
      "clip_before_nms=false;clip_after_nms=true;normalize=true;box_coordinate_scale=10;"
      "box_size_scale=5", 0, 2e-5),
  C1 ("roipool_max", "ROIPooling", "opset2", "pooled_h=3;pooled_w=4;spatial_scale=0.125", 0, 0),
  C1 ("roipool_bilinear", "ROIPooling", "opset2", "pooled_h=3;pooled_w=2;spatial_scale=1;"
      "method=bilinear", 0, 1e-5),
  C1 ("roipool_bilinear_1x1", "ROIPooling", "opset2", "pooled_h=1;pooled_w=1;spatial_scale=1;"
      "method=bilinear", 0, 1e-5),
  C1 ("roialign_avg", "ROIAlign", "opset3", "pooled_h=3;pooled_w=4;sampling_ratio=2;"
      "spatial_scale=0.125;mode=avg", 0, 1e-5),
  C1 ("roialign_adaptive", "ROIAlign", "opset9", "pooled_h=2;pooled_w=3;sampling_ratio=0;"
      "spatial_scale=0.125;mode=avg;aligned_mode=asymmetric", 0, 1e-5),
  C1 ("roialign_max", "ROIAlign", "opset3", "pooled_h=3;pooled_w=3;sampling_ratio=2;"
      "spatial_scale=0.125;mode=max", 0, 1e-5),
  C1 ("roialign9_half", "ROIAlign", "opset9", "pooled_h=2;pooled_w=2;sampling_ratio=2;"
      "spatial_scale=0.125;mode=avg;aligned_mode=half_pixel", 0, 1e-5),
  C1 ("roialign9_nn", "ROIAlign", "opset9", "pooled_h=2;pooled_w=2;sampling_ratio=0;"
      "spatial_scale=0.125;mode=avg;aligned_mode=half_pixel_for_nn", 0, 1e-5),
  C1 ("ctc1_merge1", "CTCGreedyDecoder", "opset1", "ctc_merge_repeated=true", 0, 0),
  C1 ("ctc1_merge0", "CTCGreedyDecoder", "opset1", "ctc_merge_repeated=false", 0, 0),
  C2 ("ctcsl_default", "CTCGreedyDecoderSeqLen", "opset6", "merge_repeated=true", 0, 0),
  C2 ("ctcsl_blank1", "CTCGreedyDecoderSeqLen", "opset6", "merge_repeated=false;"
      "classes_index_type=i64;sequence_length_type=i64", 0, 0),
};

static void
test_cases (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    kt_run_case (&cases[i]);
}

/* SSD300's first prior by hand: cell (0, 0), step 8, offset 0.5 → centre
 * (4, 4); min_size 30 on 300×300 → [(4-15)/300, ..., (4+15)/300]. */
static void
test_prior_by_hand (void)
{
  static const gint64 grid[] = { 38, 38 }, img[] = { 300, 300 };
  KTest *t = kt_layer ("PriorBox", "opset1", "min_size=30;max_size=60;aspect_ratio=2;flip=1;"
      "clip=0;step=8;offset=0.5;variance=0.1,0.1,0.2,0.2");
  kt_input (t, M2I_ET_I64, SHAPE (2), grid, TRUE);
  kt_input (t, M2I_ET_I64, SHAPE (2), img, FALSE);
  kt_run (t, 1);
  g_assert_cmpint (t->outputs[0].shape.dims[1], ==, 4 * 38 * 38 * 4);   /* 4 priors per cell */
  const float *o = kt_out_f32 (t, 0);
  g_assert_cmpfloat_with_epsilon (o[0], -11.0f / 300, 1e-7);
  g_assert_cmpfloat_with_epsilon (o[3], 19.0f / 300, 1e-7);
  /* second prior: sqrt(30·60)/2 = 21.2132 */
  g_assert_cmpfloat_with_epsilon (o[6], (4 + sqrtf (1800) / 2) / 300, 1e-7);
  kt_free (t);
}

static void
expect_err (KTest *t, gint n_out, gint code, const char *needle)
{
  kt_expect_error (t, n_out, code, needle);
  kt_free (t);
}

static void
test_errors (void)
{
  static const gint64 grid[] = { 2, 2 }, img[] = { 16, 16 }, zero_img[] = { 0, 16 };
  static float buf[4096];
  KTest *t = kt_layer ("PriorBox", "opset8", "min_size=4;step=4");
  kt_input (t, M2I_ET_I64, SHAPE (2), grid, TRUE);
  kt_input (t, M2I_ET_I64, SHAPE (2), img, TRUE);
  expect_err (t, 1, M2I_ERROR_MALFORMED, "offset");

  t = kt_layer ("PriorBox", "opset8", "offset=0.5;fixed_size=24;fixed_ratio=1,4;density=2");
  kt_input (t, M2I_ET_I64, SHAPE (2), grid, TRUE);
  kt_input (t, M2I_ET_I64, SHAPE (2), img, TRUE);
  expect_err (t, 1, M2I_ERROR_INVALID_ARGUMENT, "shape rule");

  t = kt_layer ("PriorBox", "opset8", "offset=0.5;fixed_size=24,32;density=2");
  kt_input (t, M2I_ET_I64, SHAPE (2), grid, TRUE);
  kt_input (t, M2I_ET_I64, SHAPE (2), img, TRUE);
  expect_err (t, 1, M2I_ERROR_INVALID_ARGUMENT, "each fixed size needs a density");

  t = kt_layer ("PriorBox", "opset8", "offset=0.5;min_size=4");
  kt_input (t, M2I_ET_I64, SHAPE (2), grid, FALSE);
  kt_input (t, M2I_ET_I64, SHAPE (2), img, TRUE);
  expect_err (t, 1, M2I_ERROR_UNSUPPORTED, "constant");

  t = kt_layer ("PriorBox", "opset8", "offset=0.5;min_size=4");
  kt_input (t, M2I_ET_I64, SHAPE (2), grid, TRUE);
  kt_input (t, M2I_ET_I64, SHAPE (2), zero_img, FALSE);
  expect_err (t, 1, M2I_ERROR_INVALID_ARGUMENT, "image_size");

  t = kt_layer ("RegionYolo", "opset1", "classes=3;coords=4;num=5;do_softmax=1");
  kt_input (t, M2I_ET_F32, SHAPE (1, 39, 2, 2), buf, FALSE);
  expect_err (t, 1, M2I_ERROR_INVALID_ARGUMENT, "coords + classes + 1");

  t = kt_layer ("RegionYolo", "opset1", "classes=3;coords=4;num=5;do_softmax=0;mask=0,1");
  kt_input (t, M2I_ET_F32, SHAPE (1, 40, 2, 2), buf, FALSE);
  expect_err (t, 1, M2I_ERROR_INVALID_ARGUMENT, "len(mask)");

  t = kt_layer ("ReorgYolo", "opset2", "stride=2");
  kt_input (t, M2I_ET_F32, SHAPE (1, 6, 4, 4), buf, FALSE);
  expect_err (t, 1, M2I_ERROR_INVALID_ARGUMENT, "stride 2");

  t = kt_layer ("Proposal", "opset4", PROP);
  kt_input (t, M2I_ET_F32, SHAPE (1, 10, 2, 2), buf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (1, 24, 2, 2), buf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (3), buf, FALSE);
  expect_err (t, 2, M2I_ERROR_INVALID_ARGUMENT, "do not fit");

  t = kt_layer ("Proposal", "opset4", PROP ";framework=mxnet");
  kt_input (t, M2I_ET_F32, SHAPE (1, 12, 2, 2), buf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (1, 24, 2, 2), buf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (3), buf, FALSE);
  expect_err (t, 2, M2I_ERROR_UNSUPPORTED, "mxnet");

  /* a box's batch index outside the batch is a run-time error */
  static const float bad_roi[] = { 2, 0, 0, 4, 4 };
  t = kt_layer ("ROIPooling", "opset2", "pooled_h=2;pooled_w=2;spatial_scale=1");
  kt_input (t, M2I_ET_F32, SHAPE (2, 1, 4, 4), buf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (1, 5), bad_roi, FALSE);
  expect_err (t, 1, M2I_ERROR_INVALID_ARGUMENT, "batch index 2");

  static const gint32 bad_idx[] = { -1 };
  t = kt_layer ("ROIAlign", "opset9", "pooled_h=2;pooled_w=2;spatial_scale=1;sampling_ratio=2;"
      "mode=avg");
  kt_input (t, M2I_ET_F32, SHAPE (2, 1, 4, 4), buf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (1, 4), buf, FALSE);
  kt_input (t, M2I_ET_I32, SHAPE (1), bad_idx, FALSE);
  expect_err (t, 1, M2I_ERROR_INVALID_ARGUMENT, "batch index -1");

  t = kt_layer ("ROIAlign", "opset9", "pooled_h=2;pooled_w=2;spatial_scale=1;sampling_ratio=2;"
      "mode=avg;aligned_mode=corner");
  kt_input (t, M2I_ET_F32, SHAPE (2, 1, 4, 4), buf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (1, 4), buf, FALSE);
  kt_input (t, M2I_ET_I32, SHAPE (1), bad_idx, FALSE);
  expect_err (t, 1, M2I_ERROR_UNSUPPORTED, "aligned_mode");

  /* hostile boxes (NaN, huge) give numbers, not a crash or a hang */
  static const float wild[] = { NAN, 0, 1e30f, 1e30f, -1e30f, NAN, 3e38f, 1 };
  static const gint32 idx2[] = { 0, 1 };
  t = kt_layer ("ROIAlign", "opset9", "pooled_h=2;pooled_w=2;spatial_scale=1;sampling_ratio=0;"
      "mode=avg");
  kt_input (t, M2I_ET_F32, SHAPE (2, 1, 4, 4), buf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (2, 4), wild, FALSE);
  kt_input (t, M2I_ET_I32, SHAPE (2), idx2, FALSE);
  kt_run (t, 1);
  kt_free (t);
  static const float wild5[] = { 0, NAN, 0, 1e30f, 1e30f };
  t = kt_layer ("ROIPooling", "opset2", "pooled_h=2;pooled_w=2;spatial_scale=1");
  kt_input (t, M2I_ET_F32, SHAPE (1, 1, 4, 4), buf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (1, 5), wild5, FALSE);
  kt_run (t, 1);
  kt_free (t);

  static const gint32 lens[] = { 3, 9 };
  t = kt_layer ("CTCGreedyDecoderSeqLen", "opset6", "");
  kt_input (t, M2I_ET_F32, SHAPE (2, 8, 4), buf, FALSE);
  kt_input (t, M2I_ET_I32, SHAPE (2), lens, FALSE);
  expect_err (t, 2, M2I_ERROR_INVALID_ARGUMENT, "sequence_length[1] = 9");

  t = kt_layer ("CTCGreedyDecoder", "opset1", "");
  kt_input (t, M2I_ET_F32, SHAPE (8, 2, 4), buf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (2, 8), buf, FALSE);
  expect_err (t, 1, M2I_ERROR_INVALID_ARGUMENT, "[T, N]");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/kernels/detect-ops/cases", test_cases);
  g_test_add_func ("/kernels/detect-ops/prior-by-hand", test_prior_by_hand);
  g_test_add_func ("/kernels/detect-ops/errors", test_errors);
  return g_test_run ();
}
