/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-decode-match.c — what each decoder of decode-private.h claims when
 * AUTO asks (match with named = FALSE): the real models of ../shared
 * (skipped when absent), the project's tiny-seg, and hand-made outputs.
 * Each model is claimed by the decoder it should be, and by no other of
 * them (the classifier and SSD are the dispatcher's own rows). */
#include "decode-test-util.h"

#include <string.h>

static const InferDecoderClass *const rows[] = {
  &infer_decoder_yolo_v5, &infer_decoder_yolo_v8, &infer_decoder_yolo_v10,
  &infer_decoder_region_yolo, &infer_decoder_detection_nms, &infer_decoder_segmentation,
  &infer_decoder_multi_label, &infer_decoder_multi_head, &infer_decoder_openpose,
};

/* The rows that claim @m; checks it is exactly @want (NULL: none), and that
 * the dispatcher's AUTO picks @auto_type. */
static void
check_claims (M2iIrModel *m, const char *what, const InferDecoderClass *want,
    M2iModelType auto_type)
{
  M2iDecoderOptions o;
  test_options_init (&o);
  for (guint i = 0; i < G_N_ELEMENTS (rows); i++) {
    gchar *why = NULL;
    GError *error = NULL;
    gboolean claimed = rows[i]->match (m, &o, FALSE, &why, &error);
    g_assert_no_error (error);          /* AUTO leaves the error alone */
    if (claimed)
      g_test_message ("%s: claimed by type %d: %s", what, rows[i]->type, why);
    if (claimed != (rows[i] == want))
      g_error ("%s: type %d %s", what, rows[i]->type, claimed ? "claims it" : "does not claim it");
    g_free (why);
  }
  GError *error = NULL;
  M2iDecoder *dec = m2i_decoder_new (m, &o, &error);
  g_assert_no_error (error);
  g_test_message ("%s: AUTO: %s", what, m2i_decoder_describe (dec));
  if (m2i_decoder_get_model_type (dec) != auto_type)
    g_error ("%s: AUTO chose %s, not %s", what, m2i_model_type_name (m2i_decoder_get_model_type (dec)),
        m2i_model_type_name (auto_type));
  m2i_decoder_free (dec);
}

static void
check_outputs (const char *what, const TestOutput *outs, guint n, const InferDecoderClass *want,
    M2iModelType auto_type)
{
  M2iIrModel *m = test_model_new (outs, n, NULL);
  check_claims (m, what, want, auto_type);
  m2i_ir_model_unref (m);
}

static void
test_real_models (void)
{
  static const struct {
    const char *path;
    const InferDecoderClass *want;
    M2iModelType auto_type;
  } models[] = {
    { "yolov8n-int8/yolov8n.xml", &infer_decoder_yolo_v8, M2I_MODEL_TYPE_YOLO_V8 },
    { "yolov8n-pose-int8/yolov8n-pose.xml", &infer_decoder_yolo_v8, M2I_MODEL_TYPE_YOLO_V8 },
    { "yolov5n/yolov5n.xml", &infer_decoder_yolo_v5, M2I_MODEL_TYPE_YOLO_V5 },
    { "person-detection-retail-0013/person-detection-retail-0013.xml", NULL, M2I_MODEL_TYPE_SSD },
    { "squeezenet1.1/squeezenet1.1.xml", NULL, M2I_MODEL_TYPE_CLASSIFIER },
    { "human-pose-estimation-0001/human-pose-estimation-0001.xml", &infer_decoder_openpose,
      M2I_MODEL_TYPE_OPENPOSE },
  };
  for (guint i = 0; i < G_N_ELEMENTS (models); i++) {
    M2iIrModel *m = test_load_shared_model (models[i].path);
    if (!m) {
      g_test_skip ("../shared/models/external is not here");
      return;
    }
    check_claims (m, models[i].path, models[i].want, models[i].auto_type);
    m2i_ir_model_unref (m);
  }
}

static void
test_tiny_seg (void)
{
  M2iIrModel *m = test_load_project_model ("tiny-seg/tiny-seg.xml");
  check_claims (m, "tiny-seg", &infer_decoder_segmentation, M2I_MODEL_TYPE_SEGMENTATION);
  m2i_ir_model_unref (m);
}

#define ONE(name, type, et, ...) \
  ((TestOutput[]) { { name, type, NULL, et, TEST_SHAPE (__VA_ARGS__) } })

static void
test_shapes (void)
{
  const M2iElementType F = M2I_ET_F32, I = M2I_ET_I32;
  check_outputs ("v10 [1,300,6]", ONE ("out", "Concat", F, 1, 300, 6), 1, &infer_decoder_yolo_v10, M2I_MODEL_TYPE_YOLO_V10);
  check_outputs ("v10 pose [1,300,57]", ONE ("out", "Concat", F, 1, 300, 57), 1,
      &infer_decoder_yolo_v10, M2I_MODEL_TYPE_YOLO_V10);
  check_outputs ("v5 [1,25200,85]", ONE ("out", "Concat", F, 1, 25200, 85), 1,
      &infer_decoder_yolo_v5, M2I_MODEL_TYPE_YOLO_V5);
  check_outputs ("v5 one class [1,6300,6]", ONE ("out", "Concat", F, 1, 6300, 6), 1,
      &infer_decoder_yolo_v5, M2I_MODEL_TYPE_YOLO_V5);
  check_outputs ("v8 [1,6,8400]", ONE ("out", "Concat", F, 1, 6, 8400), 1,
      &infer_decoder_yolo_v8, M2I_MODEL_TYPE_YOLO_V8);
  check_outputs ("[1,3,4] small", ONE ("out", "Concat", F, 1, 3, 4), 1, NULL, M2I_MODEL_TYPE_RAW);
  check_outputs ("rows7 not from DetectionOutput", ONE ("out", "Concat", F, 1, 1, 100, 7), 1,
      &infer_decoder_detection_nms, M2I_MODEL_TYPE_DETECTION_NMS);
  check_outputs ("rows7 from DetectionOutput", ONE ("out", "DetectionOutput", F, 1, 1, 100, 7), 1,
      NULL, M2I_MODEL_TYPE_SSD);
  check_outputs ("scores [1,21,512,512]", ONE ("out", "Add", F, 1, 21, 512, 512), 1,
      &infer_decoder_segmentation, M2I_MODEL_TYPE_SEGMENTATION);
  check_outputs ("class map i32 [1,512,512]", ONE ("out", "ArgMax", I, 1, 512, 512), 1,
      &infer_decoder_segmentation, M2I_MODEL_TYPE_SEGMENTATION);
  check_outputs ("f32 [1,512,512] (a depth map?)", ONE ("out", "Add", F, 1, 512, 512), 1, NULL,
      M2I_MODEL_TYPE_RAW);
  check_outputs ("heat map [1,4,4,4] too small", ONE ("out", "Add", F, 1, 4, 4, 4), 1, NULL,
      M2I_MODEL_TYPE_RAW);
  check_outputs ("multi-label [1,40] Sigmoid", ONE ("out", "Sigmoid", F, 1, 40), 1,
      &infer_decoder_multi_label, M2I_MODEL_TYPE_MULTI_LABEL);
  check_outputs ("classifier [1,1000] SoftMax", ONE ("out", "SoftMax", F, 1, 1000), 1, NULL,
      M2I_MODEL_TYPE_CLASSIFIER);
  check_outputs ("classifier [1,1000,1,1] logits", ONE ("out", "Add", F, 1, 1000, 1, 1), 1, NULL,
      M2I_MODEL_TYPE_CLASSIFIER);

  TestOutput age_gender[] = {
    { "age_conv3", "Convolution", NULL, F, TEST_SHAPE (1, 1, 1, 1) },
    { "prob", "SoftMax", NULL, F, TEST_SHAPE (1, 2, 1, 1) },
  };
  check_outputs ("age + gender", age_gender, 2, &infer_decoder_multi_head, M2I_MODEL_TYPE_MULTI_HEAD);
  TestOutput boxes_labels[] = {
    { "boxes", "Concat", NULL, F, TEST_SHAPE (100, 5) },
    { "labels", "Concat", NULL, M2I_ET_I64, TEST_SHAPE (100) },
  };
  check_outputs ("boxes + labels", boxes_labels, 2, &infer_decoder_detection_nms, M2I_MODEL_TYPE_DETECTION_NMS);
  TestOutput region[] = {
    { "r13", "RegionYolo", "classes=\"80\" coords=\"4\" num=\"9\" mask=\"6,7,8\" anchors=\"10,13,"
      "16,30,33,23,30,61,62,45,59,119,116,90,156,198,373,326\"", F, TEST_SHAPE (1, 255, 13, 13),
      TEST_SHAPE (1, 255, 13, 13) },
  };
  check_outputs ("RegionYolo", region, 1, &infer_decoder_region_yolo, M2I_MODEL_TYPE_REGION_YOLO);
  TestOutput mixed[] = {
    { "map", "Add", NULL, F, TEST_SHAPE (1, 4, 8, 8) },
    { "prob", "SoftMax", NULL, F, TEST_SHAPE (1, 2) },
  };
  check_outputs ("a map and a vector", mixed, 2, NULL, M2I_MODEL_TYPE_RAW);
  TestOutput openpose[] = {
    { "pafs", "Add", NULL, F, TEST_SHAPE (1, 38, 46, 46) },
    { "heatmaps", "Add", NULL, F, TEST_SHAPE (1, 19, 46, 46) },
  };
  check_outputs ("OpenPose PAFs + heatmaps", openpose, 2, &infer_decoder_openpose,
      M2I_MODEL_TYPE_OPENPOSE);
  TestOutput heat_only[] = {
    { "heatmaps", "Add", NULL, F, TEST_SHAPE (1, 19, 46, 46) },
  };
  check_outputs ("heatmaps alone", heat_only, 1, &infer_decoder_segmentation,
      M2I_MODEL_TYPE_SEGMENTATION);
}

static void
check_metadata (const char *rt_info, const M2iModelType *want, guint n_want, gboolean strict)
{
  TestOutput out = { "x", "Add", NULL, M2I_ET_F32, TEST_SHAPE (1, 10) };
  M2iIrModel *m = test_model_new (&out, 1, rt_info);
  M2iModelInfo *info = m2i_model_info_new (m);
  InferAutoCandidate c[INFER_AUTO_MAX_CANDIDATES];
  const char *key = NULL;
  guint n = infer_auto_candidates (info, c, &key);
  g_assert_cmpuint (n, ==, n_want);
  for (guint i = 0; i < n; i++) {
    g_assert_cmpint (c[i].type, ==, want[i]);
    g_assert_cmpint (c[i].strict, ==, strict);
  }
  if (n)
    g_assert_nonnull (key);
  m2i_model_info_free (info);
  m2i_ir_model_unref (m);
}

#define TYPES(...) ((const M2iModelType[]) { __VA_ARGS__ }), \
  sizeof ((M2iModelType[]) { __VA_ARGS__ }) / sizeof (M2iModelType)

static void
test_metadata (void)
{
  /* Ultralytics' and Model API's "YOLO": the family, by AUTO's shape rules */
  check_metadata ("<model_info><model_type value=\"YOLO\"/></model_info>",
      TYPES (M2I_MODEL_TYPE_REGION_YOLO, M2I_MODEL_TYPE_YOLO_V10, M2I_MODEL_TYPE_YOLO_V5,
          M2I_MODEL_TYPE_YOLO_V8), TRUE);
  check_metadata ("<framework><task value=\"pose\"/></framework>",
      TYPES (M2I_MODEL_TYPE_REGION_YOLO, M2I_MODEL_TYPE_YOLO_V10, M2I_MODEL_TYPE_YOLO_V5,
          M2I_MODEL_TYPE_YOLO_V8), TRUE);
  check_metadata ("<model_info><model_type value=\"yolo_v8\"/></model_info>",
      TYPES (M2I_MODEL_TYPE_YOLO_V8), FALSE);
  check_metadata ("<model_info><model_type value=\"YOLOV4\"/></model_info>",
      TYPES (M2I_MODEL_TYPE_REGION_YOLO), FALSE);
  check_metadata ("<model_info><model_type value=\"ssd\"/></model_info>",
      TYPES (M2I_MODEL_TYPE_SSD), FALSE);
  check_metadata ("<model_info><model_type value=\"Segmentation\"/></model_info>",
      TYPES (M2I_MODEL_TYPE_SEGMENTATION), FALSE);
  check_metadata ("<model_info><model_type value=\"Classification\"/></model_info>",
      TYPES (M2I_MODEL_TYPE_CLASSIFIER), FALSE);
  check_metadata ("<model_info><model_type value=\"Classification\"/><multilabel "
      "value=\"True\"/></model_info>", TYPES (M2I_MODEL_TYPE_MULTI_LABEL), FALSE);
  check_metadata ("<model_info><multilabel value=\"True\"/></model_info>",
      TYPES (M2I_MODEL_TYPE_MULTI_LABEL), FALSE);
  check_metadata ("<model_info><model_type value=\"OpenPose\"/></model_info>",
      TYPES (M2I_MODEL_TYPE_OPENPOSE), FALSE);
  /* the dispatcher: a family picks its variant by shape; a named type that
   * does not fit leaves the shapes to decide, and says so */
  static const struct {
    const char *rt;
    M2iShape shape;
    M2iModelType type;
    const char *said;
  } cases[] = {
    { "<model_info><model_type value=\"YOLO\"/></model_info>", TEST_SHAPE (1, 84, 8400),
      M2I_MODEL_TYPE_YOLO_V8, "(named by model_info/model_type)" },
    { "<model_info><model_type value=\"YOLO\"/></model_info>", TEST_SHAPE (1, 300, 6),
      M2I_MODEL_TYPE_YOLO_V10, "(named by model_info/model_type)" },
    { "<model_info><model_type value=\"yolo_v5\"/></model_info>", TEST_SHAPE (1, 84, 8400),
      M2I_MODEL_TYPE_YOLO_V8, "model_info/model_type names yolo-v5, which does not fit" },
    { "<model_info><model_type value=\"Segmentation\"/></model_info>", TEST_SHAPE (1, 64, 64),
      M2I_MODEL_TYPE_SEGMENTATION, "(named by model_info/model_type)" },
    { "<model_info><multilabel value=\"True\"/></model_info>", TEST_SHAPE (1, 12),
      M2I_MODEL_TYPE_MULTI_LABEL, "(named by model_info/multilabel)" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    TestOutput out = { "out", "Add", NULL, M2I_ET_F32, cases[i].shape };
    M2iIrModel *m = test_model_new (&out, 1, cases[i].rt);
    M2iDecoderOptions o;
    test_options_init (&o);
    GError *error = NULL;
    M2iDecoder *dec = m2i_decoder_new (m, &o, &error);
    g_assert_no_error (error);
    g_test_message ("%s", m2i_decoder_describe (dec));
    g_assert_cmpint (m2i_decoder_get_model_type (dec), ==, cases[i].type);
    g_assert_nonnull (strstr (m2i_decoder_describe (dec), cases[i].said));
    m2i_decoder_free (dec);
    m2i_ir_model_unref (m);
  }
  /* names with no decoder here, and no metadata: the shapes decide */
  check_metadata ("<model_info><model_type value=\"MaskRCNN\"/></model_info>", NULL, 0, FALSE);
  check_metadata (NULL, NULL, 0, FALSE);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/decode/match/real-models", test_real_models);
  g_test_add_func ("/decode/match/tiny-seg", test_tiny_seg);
  g_test_add_func ("/decode/match/shapes", test_shapes);
  g_test_add_func ("/decode/match/metadata", test_metadata);
  return g_test_run ();
}
