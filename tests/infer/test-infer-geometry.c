/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-infer-geometry.c — the plain-C parts of the inference module,
 * against values computed by hand: the geometry from model pixels to
 * source pixels (stretch, letterbox, crop), results and their capacities,
 * model type names, top-k with softmax.
 */
#include "../../m2i-core/infer/decode-private.h"

#include <math.h>
#include <string.h>

static void
test_geometry_stretch (void)
{
  M2iInferGeometry g;
  m2i_infer_geometry_init (&g, 1920, 1080, 640, 640, FALSE);
  g_assert_cmpfloat_with_epsilon (g.scale_x, 1.0 / 3.0, 1e-15);
  g_assert_cmpfloat_with_epsilon (g.scale_y, 640.0 / 1080.0, 1e-15);
  g_assert_cmpfloat (g.pad_x, ==, 0);
  g_assert_cmpfloat (g.pad_y, ==, 0);
  /* model (320, 320)-(640, 640) is source (960, 540)-(1920, 1080) */
  M2iInferDetection d;
  infer_geometry_map_box (&g, 640, 640, 320, 320, &d);
  g_assert_cmpfloat_with_epsilon (d.x_min, 960, 1e-3);
  g_assert_cmpfloat_with_epsilon (d.y_min, 540, 1e-3);
  g_assert_cmpfloat_with_epsilon (d.x_max, 1920, 1e-3);
  g_assert_cmpfloat_with_epsilon (d.y_max, 1080, 1e-3);
}

static void
test_geometry_letterbox (void)
{
  M2iInferGeometry g;
  /* 1920x1080 into 640x640: scale 1/3, picture 640x360, bars of 140 */
  m2i_infer_geometry_init (&g, 1920, 1080, 640, 640, TRUE);
  g_assert_cmpfloat_with_epsilon (g.scale_x, 1.0 / 3.0, 1e-15);
  g_assert_cmpfloat (g.scale_x, ==, g.scale_y);
  g_assert_cmpfloat (g.pad_x, ==, 0);
  g_assert_cmpfloat (g.pad_y, ==, 140);
  M2iInferDetection d;
  /* the picture's corners are the frame's */
  infer_geometry_map_box (&g, 0, 140, 640, 500, &d);
  g_assert_cmpfloat_with_epsilon (d.x_min, 0, 1e-3);
  g_assert_cmpfloat_with_epsilon (d.y_min, 0, 1e-3);
  g_assert_cmpfloat_with_epsilon (d.x_max, 1920, 1e-3);
  g_assert_cmpfloat_with_epsilon (d.y_max, 1080, 1e-3);
  /* a box in the bars is clamped to the frame */
  infer_geometry_map_box (&g, 100, 10, 200, 150, &d);
  g_assert_cmpfloat_with_epsilon (d.x_min, 300, 1e-3);
  g_assert_cmpfloat (d.y_min, ==, 0);
  g_assert_cmpfloat_with_epsilon (d.y_max, 30, 1e-3);

  /* 101x50 into 64x64: scale 64/101 = 0.63366, picture 64 x round(31.68)
   * = 32, pad (64 - 32) / 2 = 16 */
  m2i_infer_geometry_init (&g, 101, 50, 64, 64, TRUE);
  g_assert_cmpfloat_with_epsilon (g.scale_x, 64.0 / 101.0, 1e-15);
  g_assert_cmpfloat (g.pad_x, ==, 0);
  g_assert_cmpfloat (g.pad_y, ==, 16);
  /* 50x101 into 64x48 (tall into wide): scale min(1.28, 0.4752) = 48/101,
   * picture round(23.76) = 24 x 48, pad (64 - 24) / 2 = 20 */
  m2i_infer_geometry_init (&g, 50, 101, 64, 48, TRUE);
  g_assert_cmpfloat_with_epsilon (g.scale_y, 48.0 / 101.0, 1e-15);
  g_assert_cmpfloat (g.pad_x, ==, 20);
  g_assert_cmpfloat (g.pad_y, ==, 0);
  /* an odd border: 10x10 into 13x10, picture 10x10, pad (13 - 10) / 2 = 1
   * (the odd pixel on the right) */
  m2i_infer_geometry_init (&g, 10, 10, 13, 10, TRUE);
  g_assert_cmpfloat (g.scale_x, ==, 1.0);
  g_assert_cmpfloat (g.pad_x, ==, 1);
}

/* A region-of-interest crop: model pixels map into the crop's place in the
 * frame; clamping is to the whole frame. */
static void
test_geometry_crop (void)
{
  M2iInferGeometry g;
  m2i_infer_geometry_init (&g, 1000, 800, 100, 100, FALSE);
  /* the crop (200, 300) 50x25 stretched to 100x100 */
  g.scale_x = 100.0 / 50.0;
  g.scale_y = 100.0 / 25.0;
  g.crop_x = 200;
  g.crop_y = 300;
  M2iInferDetection d;
  infer_geometry_map_box (&g, 10, 20, 90, 100, &d);
  g_assert_cmpfloat_with_epsilon (d.x_min, 205, 1e-3);
  g_assert_cmpfloat_with_epsilon (d.y_min, 305, 1e-3);
  g_assert_cmpfloat_with_epsilon (d.x_max, 245, 1e-3);
  g_assert_cmpfloat_with_epsilon (d.y_max, 325, 1e-3);
  infer_geometry_map_box (&g, -5000, -5000, 20000, 20000, &d);
  g_assert_cmpfloat (d.x_min, ==, 0);
  g_assert_cmpfloat (d.y_min, ==, 0);
  g_assert_cmpfloat (d.x_max, ==, 1000);
  g_assert_cmpfloat (d.y_max, ==, 800);
}

static void
test_result_capacity (void)
{
  M2iInferResult *r = m2i_infer_result_new (7, 34, 2, 5, 3, 4, 3);
  g_assert_cmpuint (r->detections_capacity, ==, 7);
  g_assert_cmpuint (r->keypoints_capacity, ==, 34);
  g_assert_cmpuint (r->heads_capacity, ==, 2);
  g_assert_cmpuint (r->heads[1].classes_capacity, ==, 5);
  g_assert_cmpuint (r->heads[1].values_capacity, ==, 3);
  g_assert_cmpuint (r->mask.width, ==, 4);
  g_assert_cmpuint (r->mask.height, ==, 3);
  /* every array usable to its capacity (ASan checks the bounds) and apart */
  memset (r->detections, 0xab, 7 * sizeof *r->detections);
  memset (r->keypoints, 0xcd, 34 * sizeof *r->keypoints);
  for (int h = 0; h < 2; h++) {
    memset (r->heads[h].classes, h, 5 * sizeof (M2iInferClass));
    memset (r->heads[h].values, h, 3 * sizeof (float));
  }
  memset (r->mask.class_map, 0x11, 12 * sizeof (guint16));
  memset (r->mask.confidence, 0x22, 12 * sizeof (float));
  g_assert_cmpuint ((guint32) r->detections[6].class_id, ==, 0xababababu);
  g_assert_cmpuint (((guint8 *) r->heads[0].values)[0], ==, 0);
  g_assert_cmpuint (r->mask.class_map[11], ==, 0x1111);
  r->n_detections = 3;
  r->n_heads = 1;
  r->heads[0].n_classes = 2;
  r->has_mask = TRUE;
  r->truncated = TRUE;
  r->geometry.source_width = 99;
  m2i_infer_result_clear (r);
  g_assert_cmpuint (r->n_detections, ==, 0);
  g_assert_cmpuint (r->n_heads, ==, 0);
  g_assert_cmpuint (r->heads[0].n_classes, ==, 0);
  g_assert_false (r->has_mask);
  g_assert_false (r->truncated);
  g_assert_cmpint (r->geometry.source_width, ==, 99);
  g_assert_cmpuint (r->detections_capacity, ==, 7);
  m2i_infer_result_free (r);
  /* nothing at all */
  r = m2i_infer_result_new (0, 0, 0, 0, 0, 0, 0);
  g_assert_null (r->detections);
  g_assert_null (r->heads);
  m2i_infer_result_clear (r);
  m2i_infer_result_free (r);
}

static void
test_model_type_names (void)
{
  M2iModelType t;
  for (int i = M2I_MODEL_TYPE_AUTO; i <= M2I_MODEL_TYPE_MULTI_HEAD; i++) {
    g_assert_true (m2i_model_type_from_name (m2i_model_type_name (i), &t));
    g_assert_cmpint (t, ==, i);
  }
  g_assert_cmpstr (m2i_model_type_name (M2I_MODEL_TYPE_YOLO_V8), ==, "yolo-v8");
  g_assert_true (m2i_model_type_from_name ("YOLOv5", &t));
  g_assert_cmpint (t, ==, M2I_MODEL_TYPE_YOLO_V5);
  g_assert_true (m2i_model_type_from_name ("Classification", &t));
  g_assert_cmpint (t, ==, M2I_MODEL_TYPE_CLASSIFIER);
  g_assert_true (m2i_model_type_from_name ("SSD", &t));
  g_assert_cmpint (t, ==, M2I_MODEL_TYPE_SSD);
  g_assert_false (m2i_model_type_from_name ("transformer", &t));
  g_assert_false (m2i_model_type_from_name (NULL, &t));
  M2iDecoderOptions o;
  m2i_decoder_options_init (&o);
  g_assert_cmpint (o.type, ==, M2I_MODEL_TYPE_AUTO);
  g_assert_cmpfloat (o.confidence_threshold, ==, 0.5f);
  g_assert_cmpfloat (o.iou_threshold, ==, 0.5f);
  g_assert_cmpuint (o.top_k, ==, 1);
  g_assert_cmpuint (o.max_detections, ==, 300);
}

/* top-k against hand-computed softmax values; ties keep the lower id. */
static void
test_top_classes (void)
{
  const float scores[5] = { 1.0f, 3.0f, 0.0f, 3.0f, -1.0f };
  M2iInferClass c[5];
  double sum = exp (1.0) + 2 * exp (3.0) + exp (0.0) + exp (-1.0);
  g_assert_cmpuint (infer_top_classes (scores, 5, TRUE, 3, c), ==, 3);
  g_assert_cmpint (c[0].class_id, ==, 1);
  g_assert_cmpint (c[1].class_id, ==, 3);
  g_assert_cmpint (c[2].class_id, ==, 0);
  g_assert_cmpfloat_with_epsilon (c[0].confidence, exp (3.0) / sum, 1e-7);
  g_assert_cmpfloat_with_epsilon (c[2].confidence, exp (1.0) / sum, 1e-7);
  g_assert_cmpuint (infer_top_classes (scores, 5, FALSE, 9, c), ==, 5);
  g_assert_cmpint (c[4].class_id, ==, 4);
  g_assert_cmpfloat (c[4].confidence, ==, -1.0f);
  g_assert_cmpuint (infer_top_classes (scores, 5, FALSE, 0, c), ==, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/infer/geometry/stretch", test_geometry_stretch);
  g_test_add_func ("/infer/geometry/letterbox", test_geometry_letterbox);
  g_test_add_func ("/infer/geometry/crop", test_geometry_crop);
  g_test_add_func ("/infer/result/capacity", test_result_capacity);
  g_test_add_func ("/infer/decode/type-names", test_model_type_names);
  g_test_add_func ("/infer/decode/top-classes", test_top_classes);
  return g_test_run ();
}
