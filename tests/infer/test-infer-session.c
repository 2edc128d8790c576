/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-infer-session.c — the inference session on the project's
 * Fashion-MNIST classifier, without GStreamer.
 *
 * References from outside the session: torch's predictions and
 * probabilities (tests/data/fashion-mnist, made by models/fashion-mnist/
 * export.py), and the IR runtime run directly on the input the engine's
 * reference path computes op by op from the same frame.
 */
#include "infer-test-util.h"

#include <math.h>

/* NV12 112x112 frames (the demo's) through the session on the CPU: the
 * pre-processing runs as one M2I plan into the model's input, whose
 * probabilities equal the runtime's on the reference path's input within
 * one fp16 ulp of the input, and the classes are torch's on all 64 images;
 * labels from the labels file, the geometry of a 4x downscale. */
static void
test_fashion_nv12 (void)
{
  GBytes *images = test_read_data ("fashion-mnist/first64.images.u8");
  GBytes *preds = test_read_data ("fashion-mnist/t10k.torch-pred.u8");
  const guint8 *pred = g_bytes_get_data (preds, NULL);
  gchar *xml = test_models_path ("fashion-mnist/fashion-mnist.xml");
  gchar *labels = test_models_path ("fashion-mnist/labels.txt");
  M2iDecoderOptions dopts;
  m2i_decoder_options_init (&dopts);
  dopts.top_k = 3;
  M2iInferSession *s = open_session (xml, "CPU", labels, &dopts);
  M2iInferPreprocess pp;
  GError *err = NULL;
  fm_preprocess (&pp);
  g_assert_true (m2i_infer_session_set_preprocess (s, &pp, &err));
  g_assert_cmpint (m2i_decoder_get_model_type (m2i_infer_session_get_decoder (s)), ==,
      M2I_MODEL_TYPE_CLASSIFIER);

  TestImage first;
  fm_nv12 (&first, images, 0);
  M2iImage geometry = first.img;
  for (int p = 0; p < M2I_MAX_PLANES; p++)
    geometry.data[p] = NULL;
  g_assert_true (m2i_infer_session_prepare (s, &geometry, NULL, NULL, &err));
  g_assert_no_error (err);
  test_image_free (&first);
  const char *desc = m2i_infer_session_describe (s, NULL);
  g_assert_true (g_str_has_prefix (desc, "csc(RGB) -> convertU8F16 -> resize(28x28"));
  g_assert_nonnull (strstr (desc, "-> model input fp16 widened to fp32 (RGB); model on CPU"));

  Direct d;
  direct_open (&d, xml);
  M2iOpList ops;
  reference_ops (&ops, M2I_ORDER_RGB, TRUE, FM_SIDE, FM_SIDE, TRUE);
  const char *names[] = { "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal",
    "Shirt", "Sneaker", "Bag", "Ankle boot" };
  for (guint i = 0; i < 64; i++) {
    TestImage in;
    fm_nv12 (&in, images, i);
    g_assert_true (m2i_infer_session_run (s, &in.img, NULL, NULL, &err));
    g_assert_no_error (err);
    reference_input (&in.img, &ops, FM_SIDE, FM_SIDE, FALSE,
        m2i_ir_infer_request_get_input (d.req, 0)->data);
    const float *ref = direct_run (&d)->data;
    guint n;
    const M2iTensor *out = m2i_infer_session_get_outputs (s, &n);
    g_assert_cmpuint (n, ==, 1);
    const float *prob = out[0].data;
    for (int c = 0; c < 10; c++)
      g_assert_cmpfloat_with_epsilon (prob[c], ref[c], 2e-3);

    const M2iInferResult *r = m2i_infer_session_get_result (s);
    g_assert_cmpuint (r->n_heads, ==, 1);
    g_assert_cmpuint (r->n_detections, ==, 0);
    const M2iInferHead *h = &r->heads[0];
    g_assert_cmpstr (h->output_name, ==, "prob");
    g_assert_cmpint (h->kind, ==, M2I_INFER_HEAD_CLASSES);
    g_assert_cmpuint (h->n_classes, ==, 3);
    g_assert_cmpint (h->classes[0].class_id, ==, pred[i]);
    g_assert_cmpint (h->classes[0].class_id, ==, test_argmax (ref, 10));
    /* the model ends in SoftMax: its values as they are, best first */
    g_assert_true (h->classes[0].confidence == prob[pred[i]]);
    g_assert_cmpfloat (h->classes[1].confidence, <=, h->classes[0].confidence);
    g_assert_cmpfloat (h->classes[2].confidence, <=, h->classes[1].confidence);
    g_assert_cmpuint (h->n_labels, ==, 10);
    g_assert_cmpstr (h->labels[h->classes[0].class_id], ==, names[pred[i]]);

    const M2iInferGeometry *g = &r->geometry;
    g_assert_cmpint (g->source_width, ==, FM_W);
    g_assert_cmpint (g->source_height, ==, FM_W);
    g_assert_cmpint (g->model_width, ==, FM_SIDE);
    g_assert_cmpfloat (g->scale_x, ==, 0.25);
    g_assert_cmpfloat (g->scale_y, ==, 0.25);
    g_assert_cmpfloat (g->pad_x, ==, 0.0);
    test_image_free (&in);
  }
  /* still the one plan */
  guint serial, serial2;
  m2i_infer_session_describe (s, &serial);
  TestImage in;
  fm_nv12 (&in, images, 1);
  g_assert_true (m2i_infer_session_run (s, &in.img, NULL, NULL, &err));
  m2i_infer_session_describe (s, &serial2);
  g_assert_cmpuint (serial, ==, serial2);
  test_image_free (&in);

  direct_close (&d);
  m2i_infer_session_free (s);
  g_free (xml);
  g_free (labels);
  g_bytes_unref (images);
  g_bytes_unref (preds);
}

/* torch's exact inputs as tensors (f32, then f16): the probabilities equal
 * torch's within 1e-4 (f32) and the classes its predictions; fp16 inputs
 * are widened. No frame: the geometry is the model's input itself. */
static void
test_fashion_tensors (void)
{
  GBytes *inputs = test_read_data ("fashion-mnist/first64.input.f32");
  GBytes *probs = test_read_data ("fashion-mnist/first64.prob.f32");
  GBytes *preds = test_read_data ("fashion-mnist/t10k.torch-pred.u8");
  const float *in = g_bytes_get_data (inputs, NULL), *torch = g_bytes_get_data (probs, NULL);
  const guint8 *pred = g_bytes_get_data (preds, NULL);
  gchar *xml = test_models_path ("fashion-mnist/fashion-mnist.xml");
  M2iInferSession *s = open_session (xml, "CPU", NULL, NULL);
  GError *err = NULL;
  gsize n_in = 3 * FM_SIDE * FM_SIDE;
  m2i_f16 *half = g_new (m2i_f16, n_in);
  for (guint i = 0; i < 64; i++) {
    M2iTensor t = { .type = M2I_ET_F32, .data = (gpointer) (in + i * n_in) };
    g_assert_true (m2i_infer_session_set_input (s, 0, &t, &err));
    g_assert_true (m2i_infer_session_run_inputs (s, &err));
    g_assert_no_error (err);
    const float *prob = m2i_infer_session_get_outputs (s, NULL)[0].data;
    for (int c = 0; c < 10; c++)
      g_assert_cmpfloat_with_epsilon (prob[c], torch[i * 10 + c], 1e-4);
    const M2iInferResult *r = m2i_infer_session_get_result (s);
    g_assert_cmpint (r->heads[0].classes[0].class_id, ==, pred[i]);
    /* no labels file: the model's own (model_info/labels) */
    g_assert_cmpuint (r->heads[0].n_labels, ==, 10);
    g_assert_cmpstr (r->heads[0].labels[9], ==, "Ankle_boot");
    g_assert_cmpint (r->geometry.source_width, ==, FM_SIDE);
    g_assert_cmpfloat (r->geometry.scale_x, ==, 1.0);

    m2i_f32_to_f16_n (in + i * n_in, half, n_in);
    M2iTensor th = { .type = M2I_ET_F16, .data = half };
    g_assert_true (m2i_infer_session_set_input (s, 0, &th, &err));
    g_assert_true (m2i_infer_session_run_inputs (s, &err));
    g_assert_cmpint (r->heads[0].classes[0].class_id, ==, pred[i]);
  }
  g_assert_nonnull (strstr (m2i_infer_session_describe (s, NULL), "1 input tensor copied in"));
  g_free (half);
  m2i_infer_session_free (s);
  g_free (xml);
  g_bytes_unref (inputs);
  g_bytes_unref (probs);
  g_bytes_unref (preds);
}

/* The model split between the device and the CPU (AUTO picks it), shared
 * by two sessions: the same classes as torch on NV12 frames, and the
 * second session's request is a new one. */
static void
test_fashion_hetero_shared (void)
{
  GBytes *images = test_read_data ("fashion-mnist/first64.images.u8");
  GBytes *preds = test_read_data ("fashion-mnist/t10k.torch-pred.u8");
  const guint8 *pred = g_bytes_get_data (preds, NULL);
  gchar *xml = test_models_path ("fashion-mnist/fashion-mnist.xml");
  M2iInferModelOptions mo;
  GError *err = NULL;
  m2i_infer_model_options_init (&mo);
  M2iInferModel *m = m2i_infer_model_load (xml, &mo, &err);
  g_assert_no_error (err);
  g_assert_cmpstr (m2i_infer_model_get_device (m), ==, "HETERO:M2I,CPU");
  g_assert_cmpstr (m2i_infer_model_describe (m), ==, "HETERO:M2I,CPU: 2 pieces, 1 on the device");
  gint w, h;
  g_assert_cmpint (m2i_infer_model_get_input_kind (m, &w, &h), ==, M2I_INFER_INPUT_IMAGE);
  g_assert_cmpint (w, ==, 28);
  g_assert_cmpint (h, ==, 28);
  M2iInferSession *a = m2i_infer_session_new (m, &err), *b = m2i_infer_session_new (m, &err);
  g_assert_no_error (err);
  m2i_infer_model_unref (m);
  g_assert_true (m2i_infer_session_get_model (a) == m2i_infer_session_get_model (b));
  M2iInferPreprocess pp;
  fm_preprocess (&pp);
  g_assert_true (m2i_infer_session_set_preprocess (a, &pp, NULL));
  g_assert_true (m2i_infer_session_set_preprocess (b, &pp, NULL));
  for (guint i = 0; i < 8; i++) {
    TestImage in;
    fm_nv12 (&in, images, i);
    M2iInferSession *s = i % 2 ? b : a;
    g_assert_true (m2i_infer_session_run (s, &in.img, NULL, NULL, &err));
    g_assert_no_error (err);
    g_assert_cmpint (m2i_infer_session_get_result (s)->heads[0].classes[0].class_id, ==,
        pred[i]);
    test_image_free (&in);
  }
  g_assert_nonnull (strstr (m2i_infer_session_describe (a, NULL), "(2 device tasks)"));
  m2i_infer_session_free (a);
  m2i_infer_session_free (b);
  g_free (xml);
  g_bytes_unref (images);
  g_bytes_unref (preds);
}

/* An upstream chain's ops already queued on the frame (as m2icolorconvert !
 * m2iresize ! m2inorm hand them to m2iinfer): the session adds nothing the
 * chain did, and the one plan gives the same outputs as the session's own
 * pre-processing of the same frame (the plan it makes is the chain's with
 * permute moved past the resize). */
static void
test_queued_ops (void)
{
  GBytes *images = test_read_data ("fashion-mnist/first64.images.u8");
  gchar *xml = test_models_path ("fashion-mnist/fashion-mnist.xml");
  M2iInferSession *own = open_session (xml, "CPU", NULL, NULL);
  M2iInferSession *chain = open_session (xml, "CPU", NULL, NULL);
  M2iInferPreprocess pp;
  GError *err = NULL;
  fm_preprocess (&pp);
  g_assert_true (m2i_infer_session_set_preprocess (own, &pp, NULL));
  /* the chain: csc -> convert -> permute -> resize -> norm, ending in a
   * planar fp16 tensor of the model's size */
  M2iOpList q;
  M2iResizeParams rp;
  M2iNormParams np;
  const float mean[3] = { 0.286f, 0.286f, 0.286f }, std[3] = { 0.353f, 0.353f, 0.353f };
  m2i_op_list_init (&q);
  m2i_op_list_add_csc (&q, M2I_ORDER_RGB);
  m2i_op_list_add_convert (&q, M2I_DTYPE_F16);
  m2i_op_list_add_permute (&q);
  m2i_resize_params_init (&rp, FM_SIDE, FM_SIDE);
  m2i_op_list_add_resize (&q, &rp);
  m2i_norm_params_from_mean_std (&np, mean, std, 1.0f / 255.0f);
  m2i_op_list_add_norm (&q, &np);
  for (guint i = 0; i < 4; i++) {
    TestImage in;
    fm_nv12 (&in, images, i);
    g_assert_true (m2i_infer_session_run (own, &in.img, NULL, NULL, &err));
    g_assert_true (m2i_infer_session_run (chain, &in.img, &q, NULL, &err));
    g_assert_no_error (err);
    g_assert_cmpmem (m2i_infer_session_get_outputs (own, NULL)[0].data, 40,
        m2i_infer_session_get_outputs (chain, NULL)[0].data, 40);
    test_image_free (&in);
  }
  gchar *want = m2i_op_list_to_string (&q);
  g_assert_true (g_str_has_prefix (m2i_infer_session_describe (chain, NULL), want));
  g_free (want);
  m2i_infer_session_free (own);
  m2i_infer_session_free (chain);
  g_free (xml);
  g_bytes_unref (images);
}

/* The PrePostProcessor model: NV12 planes go into its head as they are;
 * the probabilities are the reference model's (tests/data/ppp). */
static void
test_ppp_planes (void)
{
  gchar *xml = test_models_path ("fashion-mnist-ppp/fashion-mnist-ppp.xml");
  M2iInferSession *s = open_session (xml, "CPU", NULL, NULL);
  gint w, h;
  g_assert_cmpint (m2i_infer_model_get_input_kind (m2i_infer_session_get_model (s), &w, &h), ==,
      M2I_INFER_INPUT_NV12);
  g_assert_cmpint (w, ==, 64);
  g_assert_cmpint (h, ==, 48);
  static const char *cases[] = { "t10k-0", "t10k-1", "gradient", "noise" };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    gchar *nv = g_strdup_printf ("ppp/%s.nv12", cases[i]);
    gchar *pr = g_strdup_printf ("ppp/%s.prob.f32", cases[i]);
    GBytes *frame = test_read_data (nv), *prob = test_read_data (pr);
    TestImage t;
    /* padded rows: copied row by row */
    test_image_alloc_padded (&t, M2I_FORMAT_SP_NV12_8, 64, 48, i % 2 ? 16 : 0, 0);
    const guint8 *f = g_bytes_get_data (frame, NULL);
    for (gint y = 0; y < 48; y++)
      memcpy (t.img.data[0] + y * t.img.stride[0], f + y * 64, 64);
    for (gint y = 0; y < 24; y++)
      memcpy (t.img.data[1] + y * t.img.stride[1], f + 3072 + y * 64, 64);
    GError *err = NULL;
    g_assert_true (m2i_infer_session_run (s, &t.img, NULL, NULL, &err));
    g_assert_no_error (err);
    const float *p = m2i_infer_session_get_outputs (s, NULL)[0].data;
    const float *want = g_bytes_get_data (prob, NULL);
    for (int c = 0; c < 10; c++)
      g_assert_cmpfloat_with_epsilon (p[c], want[c], 1e-4);
    const M2iInferResult *r = m2i_infer_session_get_result (s);
    g_assert_cmpint (r->heads[0].classes[0].class_id, ==, test_argmax (want, 10));
    g_assert_cmpint (r->geometry.source_width, ==, 64);
    test_image_free (&t);
    g_bytes_unref (frame);
    g_bytes_unref (prob);
    g_free (nv);
    g_free (pr);
  }
  g_assert_nonnull (strstr (m2i_infer_session_describe (s, NULL),
          "SP_NV12_8 planes straight into the model's PrePostProcessor head"));
  m2i_infer_session_free (s);
  g_free (xml);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/infer/session/fashion-nv12", test_fashion_nv12);
  g_test_add_func ("/infer/session/fashion-tensors", test_fashion_tensors);
  g_test_add_func ("/infer/session/fashion-hetero-shared", test_fashion_hetero_shared);
  g_test_add_func ("/infer/session/queued-ops", test_queued_ops);
  g_test_add_func ("/infer/session/ppp-planes", test_ppp_planes);
  return g_test_run ();
}
