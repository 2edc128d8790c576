/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-decode-region-yolo.c — the RegionYolo decoder (decode-region-yolo.c)
 * against Model API's YOLO decoding done in numpy by make_region_yolo.py on
 * the same random head outputs (tests/data/infer/region-yolo.*): YOLOv3
 * (masks, two grids), YOLOv2 (no mask, anchors in cells, flattened output)
 * and raw YOLOv4-tiny heads (no RegionYolo layer: sigmoids and default
 * anchors here). Same detections in the same order, scores within 1e-5,
 * corners within 1e-2 pixel. The same raw heads through the IR runtime's
 * RegionYolo layers, decoded as AUTO chooses. Plus the layer attributes it
 * refuses. */
#include "decode-test-util.h"

#include <math.h>
#include <stdio.h>

#define V3_ANCHORS "10,13, 16,30, 33,23, 30,61, 62,45, 59,119"
#define V4_TINY_ANCHORS "10,14,23,27,37,58,81,82,135,169,344,319"
#define V2_ANCHORS "0.57273,0.677385,1.87446,2.06253,3.33843,5.47434,7.88282,3.52778,9.77052,9.16828"

static float *
read_f32 (const char *name, gsize numel)
{
  GBytes *b = test_read_data (name);
  g_assert_cmpuint (g_bytes_get_size (b), ==, numel * sizeof (float));
  float *p = g_memdup2 (g_bytes_get_data (b, NULL), numel * sizeof (float));
  g_bytes_unref (b);
  return p;
}

/* Compares @r's detections with region-yolo.@name.txt (corners offset by
 * @off). */
static void
compare_with_reference (const char *name, const M2iInferResult *r, double off)
{
  g_autofree gchar *ref_name = g_strdup_printf ("infer/region-yolo.%s.txt", name);
  GBytes *ref = test_read_data (ref_name);
  g_autofree gchar *text = g_strndup (g_bytes_get_data (ref, NULL), g_bytes_get_size (ref));
  g_bytes_unref (ref);
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  guint k = 0;
  for (gchar **l = lines; *l; l++) {
    gint cls;
    float s, x1, y1, x2, y2;
    if (**l == '#' || sscanf (*l, "%d %f %f %f %f %f", &cls, &s, &x1, &y1, &x2, &y2) != 6)
      continue;
    g_assert_cmpuint (k, <, r->n_detections);
    const M2iInferDetection *det = &r->detections[k++];
    g_assert_cmpint (det->class_id, ==, cls);
    g_assert_cmpfloat_with_epsilon (det->confidence, s, 1e-5);
    g_assert_cmpfloat_with_epsilon (det->x_min - off, x1, 1e-2);
    g_assert_cmpfloat_with_epsilon (det->y_min - off, y1, 1e-2);
    g_assert_cmpfloat_with_epsilon (det->x_max - off, x2, 1e-2);
    g_assert_cmpfloat_with_epsilon (det->y_max - off, y2, 1e-2);
  }
  g_assert_cmpuint (k, >, 5);
  g_assert_cmpuint (k, ==, r->n_detections);
  g_test_message ("%s: %u detections as Model API's", name, k);
}

/* A geometry whose source is big enough that nothing is clamped: corners
 * are the model's plus 50000. */
static M2iInferGeometry
unclamped (void)
{
  M2iInferGeometry g = test_geometry (64, 64, 64, 64, 1, 1, 0, 0);
  g.source_width = g.source_height = 100000;
  g.crop_x = g.crop_y = 50000;
  return g;
}

static void
check_case (const char *name, const TestOutput *outs, guint n_outs)
{
  M2iIrModel *m = test_model_new (outs, n_outs, NULL);
  M2iDecoderOptions o;
  test_options_init (&o);
  GError *error = NULL;
  TestDecoder *d = test_decoder_new (&infer_decoder_region_yolo, m, &o, &error);
  g_assert_no_error (error);
  M2iTensor t[4];
  for (guint i = 0; i < n_outs; i++) {
    g_autofree gchar *file = g_strdup_printf ("infer/region-yolo.%s.out%u.f32", name, i);
    t[i] = (M2iTensor) { M2I_ET_F32, outs[i].shape,
      read_f32 (file, (gsize) m2i_shape_numel (&outs[i].shape)) };
  }
  M2iInferGeometry g = unclamped ();
  g_assert_true (test_decoder_decode (d, t, n_outs, &g, &error));
  g_assert_no_error (error);
  compare_with_reference (name, d->result, 50000);
  for (guint i = 0; i < n_outs; i++)
    g_free (t[i].data);
  test_decoder_free (d);
  m2i_ir_model_unref (m);
}

static void
test_v3 (void)
{
  TestOutput outs[] = {
    { "conv_13/YoloRegion", "RegionYolo", "anchors=\"" V3_ANCHORS "\" axis=\"1\" classes=\"5\" "
      "coords=\"4\" do_softmax=\"false\" end_axis=\"3\" mask=\"3,4,5\" num=\"6\"", M2I_ET_F32,
      TEST_SHAPE (1, 30, 4, 4), TEST_SHAPE (1, 30, 4, 4) },
    { "conv_26/YoloRegion", "RegionYolo", "anchors=\"" V3_ANCHORS "\" axis=\"1\" classes=\"5\" "
      "coords=\"4\" do_softmax=\"false\" end_axis=\"3\" mask=\"0, 1, 2\" num=\"6\"", M2I_ET_F32,
      TEST_SHAPE (1, 30, 8, 8), TEST_SHAPE (1, 30, 8, 8) },
  };
  check_case ("v3", outs, 2);
}

static void
test_v2 (void)
{
  TestOutput out = { "region", "RegionYolo", "anchors=\"" V2_ANCHORS "\" axis=\"1\" classes=\"3\" "
    "coords=\"4\" do_softmax=\"true\" end_axis=\"3\" num=\"5\"", M2I_ET_F32,
    TEST_SHAPE (1, 5 * 8 * 4 * 4), TEST_SHAPE (1, 40, 4, 4) };
  check_case ("v2", &out, 1);
}

static void
test_v4_raw (void)
{
  TestOutput outs[] = {
    { "conv_small", "Add", NULL, M2I_ET_F32, TEST_SHAPE (1, 27, 4, 4) },
    { "conv_big", "Add", NULL, M2I_ET_F32, TEST_SHAPE (1, 27, 8, 8) },
  };
  check_case ("v4raw", outs, 2);
}

/* The IR runtime's RegionYolo layers on the raw v4-tiny heads (their
 * sigmoids now done by the layer), AUTO choosing the decoder: the same
 * detections as Model API's raw YOLOv4 decoding of those heads. */
static void
test_runtime_layers (void)
{
  TestOutput outs[] = {
    { "yolo_small", "RegionYolo", "anchors=\"" V4_TINY_ANCHORS "\" axis=\"1\" classes=\"4\" "
      "coords=\"4\" do_softmax=\"false\" end_axis=\"3\" mask=\"3,4,5\" num=\"6\"", M2I_ET_F32,
      TEST_SHAPE (1, 27, 4, 4), TEST_SHAPE (1, 27, 4, 4) },
    { "yolo_big", "RegionYolo", "anchors=\"" V4_TINY_ANCHORS "\" axis=\"1\" classes=\"4\" "
      "coords=\"4\" do_softmax=\"false\" end_axis=\"3\" mask=\"1,2,3\" num=\"6\"", M2I_ET_F32,
      TEST_SHAPE (1, 27, 8, 8), TEST_SHAPE (1, 27, 8, 8) },
  };
  M2iIrModel *m = test_model_new (outs, 2, NULL);
  GError *error = NULL;
  M2iIrCompiledModel *cm = m2i_ir_compile (m, NULL, &error);
  g_assert_no_error (error);
  M2iIrInferRequest *req = m2i_ir_infer_request_new (cm, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < 2; i++) {
    g_autofree gchar *file = g_strdup_printf ("infer/region-yolo.v4raw.out%u.f32", i);
    g_autofree float *raw = read_f32 (file, (gsize) m2i_shape_numel (&outs[i].shape));
    M2iTensor in = { M2I_ET_F32, outs[i].in_shape, raw };
    g_assert_true (m2i_ir_infer_request_set_input (req, (gint) i, &in, &error));
  }
  g_assert_true (m2i_ir_infer_request_infer (req, &error));
  g_assert_no_error (error);
  M2iDecoderOptions o;
  test_options_init (&o);
  M2iDecoder *dec = m2i_decoder_new (m, &o, &error);
  g_assert_no_error (error);
  g_assert_cmpint (m2i_decoder_get_model_type (dec), ==, M2I_MODEL_TYPE_REGION_YOLO);
  g_test_message ("%s", m2i_decoder_describe (dec));
  M2iTensor t[2] = { *m2i_ir_infer_request_get_output (req, 0),
    *m2i_ir_infer_request_get_output (req, 1) };
  M2iInferResult *r = m2i_decoder_new_result (dec);
  M2iInferGeometry g = unclamped ();
  g_assert_true (m2i_decoder_decode (dec, t, 2, &g, r, &error));
  g_assert_no_error (error);
  compare_with_reference ("v4raw", r, 50000);
  m2i_infer_result_free (r);
  m2i_decoder_free (dec);
  m2i_ir_infer_request_free (req);
  m2i_ir_compiled_model_unref (cm);
  m2i_ir_model_unref (m);
}

static void
test_refused (void)
{
  static const char *const attrs[] = {
    "classes=\"5\" coords=\"4\" num=\"6\" mask=\"0,1,9\" anchors=\"" V3_ANCHORS "\"",  /* mask past anchors */
    "classes=\"5\" coords=\"4\" num=\"6\" mask=\"0,1,2\" anchors=\"10,13,16\"",      /* odd anchors */
    "classes=\"0\" coords=\"4\" num=\"6\" mask=\"0,1,2\" anchors=\"" V3_ANCHORS "\"",  /* no class */
    "classes=\"5\" coords=\"x\" num=\"6\" mask=\"0,1,2\" anchors=\"" V3_ANCHORS "\"",  /* garbage */
    "classes=\"6\" coords=\"4\" num=\"6\" mask=\"0,1,2\" anchors=\"" V3_ANCHORS "\"",  /* wrong size */
    "classes=\"5\" coords=\"4\" num=\"6\" mask=\"0,1,1e999\" anchors=\"" V3_ANCHORS "\"",
  };
  M2iDecoderOptions o;
  test_options_init (&o);
  for (guint i = 0; i < G_N_ELEMENTS (attrs); i++) {
    TestOutput out = { "region", "RegionYolo", attrs[i], M2I_ET_F32, TEST_SHAPE (1, 30, 4, 4),
      TEST_SHAPE (1, 30, 4, 4) };
    M2iIrModel *m = test_model_new (&out, 1, NULL);
    GError *error = NULL;
    g_assert_null (test_decoder_new (&infer_decoder_region_yolo, m, &o, &error));
    g_assert_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT);
    g_test_message ("%s", error->message);
    g_clear_error (&error);
    m2i_ir_model_unref (m);
  }
  /* no RegionYolo and nothing raw-YOLO-shaped */
  TestOutput out = { "prob", "SoftMax", NULL, M2I_ET_F32, TEST_SHAPE (1, 1000) };
  M2iIrModel *m = test_model_new (&out, 1, NULL);
  GError *error = NULL;
  g_assert_null (test_decoder_new (&infer_decoder_region_yolo, m, &o, &error));
  g_assert_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  m2i_ir_model_unref (m);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/decode/region-yolo/v3-as-model-api", test_v3);
  g_test_add_func ("/decode/region-yolo/v2-as-model-api", test_v2);
  g_test_add_func ("/decode/region-yolo/v4-raw-as-model-api", test_v4_raw);
  g_test_add_func ("/decode/region-yolo/runtime-layers-as-model-api", test_runtime_layers);
  g_test_add_func ("/decode/region-yolo/refused", test_refused);
  return g_test_run ();
}
