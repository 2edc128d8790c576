/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-infer-errors.c — what the inference module says when something does
 * not fit: a missing or malformed model file, an unknown device, a labels
 * file that cannot be read, a frame the model cannot take, a decoder type
 * the outputs do not fit, wrong inputs. Each fails with a message naming
 * the fault, never a crash.
 */
#include "infer-test-util.h"

#include <base/m2i-error.h>
#include <math.h>

static M2iInferModel *
load (const char *xml, const char *device, const char *labels, GError **err)
{
  M2iInferModelOptions mo;
  m2i_infer_model_options_init (&mo);
  mo.device = device;
  mo.labels_path = labels;
  return m2i_infer_model_load (xml, &mo, err);
}

static void
assert_error (GError **err, gint code, const char *needle)
{
  g_assert_error (*err, M2I_ERROR, code);
  if (!strstr ((*err)->message, needle))
    g_error ("\"%s\" lacks \"%s\"", (*err)->message, needle);
  g_clear_error (err);
}

static void
test_model_errors (void)
{
  GError *err = NULL;
  g_assert_null (load (NULL, NULL, NULL, &err));
  assert_error (&err, M2I_ERROR_INVALID_ARGUMENT, "no model");
  g_assert_null (load ("/nonexistent/model.xml", NULL, NULL, &err));
  assert_error (&err, M2I_ERROR_IO, "\"/nonexistent/model.xml\" does not exist");
  gchar *bad = test_ir_write_files ("<?xml version=\"1.0\"?>\n<net name=\"x\" version=\"11\">\n"
      "<layers>\n<layer id=\"0\" name=\"a\" type=\"Parameter\">\n</net>\n", NULL);
  g_assert_null (load (bad, NULL, NULL, &err));
  g_assert_nonnull (err);
  g_assert_nonnull (strstr (err->message, "model.xml"));
  g_clear_error (&err);
  test_ir_remove_files (bad);

  gchar *xml = test_models_path ("fashion-mnist/fashion-mnist.xml");
  g_assert_null (load (xml, "GPU", NULL, &err));
  assert_error (&err, M2I_ERROR_INVALID_ARGUMENT,
      "unknown device \"GPU\": use CPU, M2I, HETERO:M2I,CPU or AUTO");
  g_assert_null (load (xml, "HETERO:M2I,GPU", NULL, &err));
  assert_error (&err, M2I_ERROR_INVALID_ARGUMENT, "unknown device \"HETERO:M2I,GPU\"");
  g_assert_null (load (xml, "M2I", NULL, &err));
  g_assert_nonnull (strstr (err->message, "cannot run on the listed devices"));
  g_clear_error (&err);
  g_assert_null (load (xml, NULL, "/nonexistent/labels.txt", &err));
  assert_error (&err, M2I_ERROR_IO, "labels file");
  gchar *empty = test_ir_write_files ("\n\n", NULL);
  g_assert_null (load (xml, "CPU", empty, &err));
  assert_error (&err, M2I_ERROR_MALFORMED, "holds no label");
  test_ir_remove_files (empty);

  M2iInferModelOptions mo;
  m2i_infer_model_options_init (&mo);
  mo.device = "CPU";
  mo.split_dir = "/tmp/x";
  g_assert_null (m2i_infer_model_load (xml, &mo, &err));
  assert_error (&err, M2I_ERROR_INVALID_ARGUMENT, "device=CPU does not split");
  /* a decoder the outputs do not fit: the message says what it wanted */
  mo.split_dir = NULL;
  mo.decoder.type = M2I_MODEL_TYPE_SSD;
  M2iInferModel *m = m2i_infer_model_load (xml, &mo, &err);
  g_assert_no_error (err);
  g_assert_null (m2i_infer_session_new (m, &err));
  assert_error (&err, M2I_ERROR_INVALID_ARGUMENT, "SSD's is [1,1,N,7] from DetectionOutput");
  m2i_infer_model_unref (m);
  g_free (xml);
}

/* Frames the model cannot take, and inputs that are not the model's. */
static void
test_frame_errors (void)
{
  GError *err = NULL;
  gchar *xml = test_models_path ("fashion-mnist-ppp/fashion-mnist-ppp.xml");
  M2iInferSession *s = open_session (xml, "CPU", NULL, NULL);
  TestImage t;
  /* the NV12 head takes its own 64x48 frames only */
  test_image_alloc_padded (&t, M2I_FORMAT_SP_NV12_8, 66, 48, 0, 0);
  g_assert_false (m2i_infer_session_prepare (s, &t.img, NULL, NULL, &err));
  assert_error (&err, M2I_ERROR_INVALID_ARGUMENT, "SP_NV12_8 PrePostProcessor head of a 64x48 frame");
  g_assert_false (m2i_infer_session_run (s, &t.img, NULL, NULL, &err));
  assert_error (&err, M2I_ERROR_INVALID_ARGUMENT, "got SP_NV12_8 66x48");
  test_image_free (&t);
  /* a frame without data, a wrong index, a type that does not convert */
  test_image_alloc_padded (&t, M2I_FORMAT_SP_NV12_8, 64, 48, 0, 0);
  t.img.data[1] = NULL;
  g_assert_false (m2i_infer_session_run (s, &t.img, NULL, NULL, &err));
  assert_error (&err, M2I_ERROR_INVALID_ARGUMENT, "plane 1 has no data pointer");
  test_image_free (&t);
  M2iTensor in = { .type = M2I_ET_F32 };
  guint8 bytes[8] = { 0 };
  in.data = bytes;
  g_assert_false (m2i_infer_session_set_input (s, 5, &in, &err));
  assert_error (&err, M2I_ERROR_INVALID_ARGUMENT, "the model has no input 5 (it has 2)");
  g_assert_false (m2i_infer_session_set_input (s, 0, &in, &err));
  assert_error (&err, M2I_ERROR_INVALID_ARGUMENT, "input 0 is u8; f32 cannot be copied into it");
  m2i_infer_session_free (s);
  g_free (xml);

  /* an image model: odd NV12, an impossible normalisation, a chain too long */
  xml = test_models_path ("fashion-mnist/fashion-mnist.xml");
  s = open_session (xml, "CPU", NULL, NULL);
  M2iImage odd = { .format = M2I_FORMAT_SP_NV12_8, .width = 57, .height = 31,
    .stride = { 58, 58 } };
  g_assert_false (m2i_infer_session_prepare (s, &odd, NULL, NULL, &err));
  assert_error (&err, M2I_ERROR_INVALID_ARGUMENT, "needs an even width and height");
  M2iInferPreprocess pp;
  m2i_infer_preprocess_init (&pp);
  pp.input_scale = 0;
  g_assert_false (m2i_infer_session_set_preprocess (s, &pp, &err));
  assert_error (&err, M2I_ERROR_INVALID_ARGUMENT, "input-scale must be positive");
  m2i_infer_preprocess_init (&pp);
  pp.std[1] = 0;
  g_assert_false (m2i_infer_session_set_preprocess (s, &pp, &err));
  assert_error (&err, M2I_ERROR_INVALID_ARGUMENT, "cannot be held as fp16");
  M2iImage rgb;
  m2i_image_init (&rgb, M2I_FORMAT_IL_RGB888, 56, 56);
  M2iOpList q;
  m2i_op_list_init (&q);
  for (int i = 0; i < 7; i++) {
    M2iResizeParams rp;
    m2i_resize_params_init (&rp, 40 + i, 40);
    m2i_op_list_add_resize (&q, &rp);
  }
  g_assert_false (m2i_infer_session_prepare (s, &rgb, &q, NULL, &err));
  assert_error (&err, M2I_ERROR_UNSUPPORTED, "already holds 7 ops");
  /* queued ops that do not apply to the frame */
  m2i_op_list_init (&q);
  m2i_op_list_add_permute (&q);
  m2i_op_list_add_permute (&q);
  g_assert_false (m2i_infer_session_prepare (s, &rgb, &q, NULL, &err));
  assert_error (&err, M2I_ERROR_INVALID_ARGUMENT, "the queued ops do not apply");
  m2i_infer_session_free (s);
  g_free (xml);
}

/* A model that takes no image: frames are refused, tensors work. */
static void
test_tensor_model (void)
{
  TestIr *b = test_ir_new (11);
  M2iShape s4 = TEST_SHAPE (1, 4);
  gint a = test_ir_parameter (b, "a", M2I_ET_F32, &s4);
  gint bb = test_ir_parameter (b, "b", M2I_ET_F32, &s4);
  gint add = test_ir_op (b, "Add", "opset1", NULL, 2, (gint[]) { a, bb }, M2I_ET_F32, &s4);
  test_ir_result (b, add);
  gchar *xml = test_ir_write_files (test_ir_xml (b), test_ir_weights (b));
  M2iInferSession *s = open_session (xml, "CPU", NULL, NULL);
  g_assert_cmpint (m2i_infer_model_get_input_kind (m2i_infer_session_get_model (s), NULL, NULL),
      ==, M2I_INFER_INPUT_TENSORS);
  GError *err = NULL;
  M2iImage rgb;
  m2i_image_init (&rgb, M2I_FORMAT_IL_RGB888, 8, 8);
  g_assert_false (m2i_infer_session_prepare (s, &rgb, NULL, NULL, &err));
  assert_error (&err, M2I_ERROR_INVALID_ARGUMENT, "the model takes no image");
  /* out = a + b = [1.5, 2, -1, 4]: classes are logits, softmax'd here */
  const float va[4] = { 1.0f, 2.0f, -3.0f, 0.5f }, vb[4] = { 0.5f, 0.0f, 2.0f, 3.5f };
  M2iTensor ta = { .type = M2I_ET_F32, .data = (gpointer) va };
  M2iTensor tb = { .type = M2I_ET_F32, .data = (gpointer) vb };
  g_assert_true (m2i_infer_session_set_input (s, 0, &ta, &err));
  g_assert_true (m2i_infer_session_set_input (s, 1, &tb, &err));
  g_assert_true (m2i_infer_session_run_inputs (s, &err));
  g_assert_no_error (err);
  const M2iInferResult *r = m2i_infer_session_get_result (s);
  double sum = exp (1.5) + exp (2.0) + exp (-1.0) + exp (4.0);
  g_assert_cmpint (r->heads[0].classes[0].class_id, ==, 3);
  g_assert_cmpfloat_with_epsilon (r->heads[0].classes[0].confidence, exp (4.0) / sum, 1e-6);
  g_assert_cmpint (r->geometry.source_width, ==, 1);
  g_assert_nonnull (strstr (m2i_infer_session_describe (s, NULL), "2 input tensors copied in"));
  m2i_infer_session_free (s);
  test_ir_remove_files (xml);
  test_ir_free (b);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/infer/errors/model", test_model_errors);
  g_test_add_func ("/infer/errors/frame", test_frame_errors);
  g_test_add_func ("/infer/errors/tensor-model", test_tensor_model);
  return g_test_run ();
}
