/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-decode-heads.c — multi-label and multi-head decoders (decode-heads.c)
 * on hand-made outputs: which head kind each output becomes, sigmoids
 * (computed here in double), thresholds, best-first order with class-order
 * ties, NaN, labels, top-k, regression values, refusals. */
#include "decode-test-util.h"

#include <math.h>

static double
sigmoid (double x)
{
  return 1 / (1 + exp (-x));
}

static void
test_multi_label (void)
{
  const char *producers[] = { "Sigmoid", "Add" };
  for (guint k = 0; k < 2; k++) {
    TestOutput out = { "attributes", producers[k], NULL, M2I_ET_F32, TEST_SHAPE (1, 6, 1, 1) };
    M2iIrModel *m = test_model_new (&out, 1, NULL);
    M2iDecoderOptions o;
    test_options_init (&o);
    const char *labels[] = { "hat", "bag", "coat", "glasses", "scarf", "boots", NULL };
    o.labels = labels;
    o.n_labels = 6;
    GError *error = NULL;
    TestDecoder *d = test_decoder_new (&infer_decoder_multi_label, m, &o, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (d->size->n_heads, ==, 1);
    g_assert_cmpuint (d->size->max_classes, ==, 6);
    /* probabilities for the Sigmoid model, logits for the other */
    float p[2][6] = { { 0.7f, 0.2f, 0.9f, 0.7f, NAN, 0.5f },
                      { 0.85f, -1.4f, 2.2f, 0.85f, NAN, 0.0f } };
    M2iTensor t = { M2I_ET_F32, TEST_SHAPE (1, 6, 1, 1), p[k] };
    g_assert_true (test_decoder_decode (d, &t, 1, NULL, &error));
    g_assert_no_error (error);
    const M2iInferResult *r = d->result;
    g_assert_cmpuint (r->n_heads, ==, 1);
    const M2iInferHead *h = &r->heads[0];
    g_assert_cmpint (h->kind, ==, M2I_INFER_HEAD_MULTI_LABEL);
    g_assert_cmpstr (h->output_name, ==, "attributes");
    g_assert_true (h->labels == (const char *const *) labels);
    /* 2 (best), then 0 and 3 equal (class order), then 5 at the threshold */
    const gint want[] = { 2, 0, 3, 5 };
    g_assert_cmpuint (h->n_classes, ==, G_N_ELEMENTS (want));
    for (guint i = 0; i < G_N_ELEMENTS (want); i++) {
      g_assert_cmpint (h->classes[i].class_id, ==, want[i]);
      double expect = k == 0 ? p[0][want[i]] : sigmoid (p[1][want[i]]);
      g_assert_cmpfloat_with_epsilon (h->classes[i].confidence, expect, 1e-6);
    }
    test_decoder_free (d);
    m2i_ir_model_unref (m);
  }
}

static void
test_multi_head (void)
{
  TestOutput outs[] = {
    { "age_conv3", "Convolution", NULL, M2I_ET_F32, TEST_SHAPE (1, 1, 1, 1) },
    { "prob", "SoftMax", NULL, M2I_ET_F32, TEST_SHAPE (1, 2, 1, 1) },
    { "feature_vector", "ReduceMean", NULL, M2I_ET_F32, TEST_SHAPE (1, 64) },
    { "attrs", "Sigmoid", NULL, M2I_ET_F32, TEST_SHAPE (1, 3) },
    { "landmarks", "Add", NULL, M2I_ET_F32, TEST_SHAPE (1, 10) },
    { "colour", "SoftMax", NULL, M2I_ET_F32, TEST_SHAPE (1, 7) },
    { "count", "Convert", NULL, M2I_ET_I64, TEST_SHAPE (1) },
  };
  M2iIrModel *m = test_model_new (outs, G_N_ELEMENTS (outs), NULL);
  M2iDecoderOptions o;
  test_options_init (&o);
  o.top_k = 3;
  o.confidence_threshold = 0.6f;
  const char *labels[] = { "female", "male", NULL };
  o.labels = labels;
  o.n_labels = 2;
  GError *error = NULL;
  TestDecoder *d = test_decoder_new (&infer_decoder_multi_head, m, &o, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (d->size->n_heads, ==, 6);
  g_assert_cmpuint (d->size->max_values, ==, 10);
  g_assert_cmpuint (d->size->max_classes, ==, 7);    /* all of a classifier head: top-k may grow */
  float age = 0.254f, prob[2] = { 0.3f, 0.7f }, fv[64] = { 0 }, attrs[3] = { 0.9f, 0.1f, 0.6f };
  float lm[10] = { 0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f, 0.9f, 1.0f };
  float colour[7] = { 0.05f, 0.1f, 0.4f, 0.05f, 0.3f, 0.05f, 0.05f };
  gint64 count = 42;
  M2iTensor t[] = {
    { M2I_ET_F32, TEST_SHAPE (1, 1, 1, 1), &age },
    { M2I_ET_F32, TEST_SHAPE (1, 2, 1, 1), prob },
    { M2I_ET_F32, TEST_SHAPE (1, 64), fv },
    { M2I_ET_F32, TEST_SHAPE (1, 3), attrs },
    { M2I_ET_F32, TEST_SHAPE (1, 10), lm },
    { M2I_ET_F32, TEST_SHAPE (1, 7), colour },
    { M2I_ET_I64, TEST_SHAPE (1), &count },
  };
  g_assert_true (test_decoder_decode (d, t, G_N_ELEMENTS (t), NULL, &error));
  g_assert_no_error (error);
  const M2iInferResult *r = d->result;
  g_assert_cmpuint (r->n_heads, ==, 6);
  g_assert_false (r->truncated);
  const M2iInferHead *h = r->heads;
  g_assert_cmpstr (h[0].output_name, ==, "age_conv3");
  g_assert_cmpint (h[0].kind, ==, M2I_INFER_HEAD_REGRESSION);
  g_assert_cmpuint (h[0].n_values, ==, 1);
  g_assert_cmpfloat (h[0].values[0], ==, 0.254f);
  g_assert_cmpstr (h[1].output_name, ==, "prob");
  g_assert_cmpint (h[1].kind, ==, M2I_INFER_HEAD_CLASSES);
  g_assert_cmpuint (h[1].n_classes, ==, 2);
  g_assert_cmpint (h[1].classes[0].class_id, ==, 1);
  g_assert_cmpfloat (h[1].classes[0].confidence, ==, 0.7f);
  g_assert_true (h[1].labels == (const char *const *) labels);
  g_assert_cmpstr (h[2].output_name, ==, "attrs");
  g_assert_cmpint (h[2].kind, ==, M2I_INFER_HEAD_MULTI_LABEL);
  g_assert_cmpuint (h[2].n_classes, ==, 2);
  g_assert_cmpint (h[2].classes[1].class_id, ==, 2);
  g_assert_null (h[2].labels);            /* 3 classes, 2 labels */
  g_assert_cmpstr (h[3].output_name, ==, "landmarks");
  g_assert_cmpint (h[3].kind, ==, M2I_INFER_HEAD_REGRESSION);
  g_assert_cmpuint (h[3].n_values, ==, 10);
  for (guint i = 0; i < 10; i++)
    g_assert_cmpfloat (h[3].values[i], ==, lm[i]);
  g_assert_cmpstr (h[4].output_name, ==, "colour");
  g_assert_cmpuint (h[4].n_classes, ==, 3);
  const gint top[] = { 2, 4, 1 };
  for (guint i = 0; i < 3; i++)
    g_assert_cmpint (h[4].classes[i].class_id, ==, top[i]);
  g_assert_cmpint (h[5].kind, ==, M2I_INFER_HEAD_REGRESSION);
  g_assert_cmpfloat (h[5].values[0], ==, 42);
  /* a result with room for fewer heads keeps the first, flagged */
  M2iInferResult *small = m2i_infer_result_new (0, 0, 2, 7, 10, 0, 0);
  M2iInferGeometry g = test_geometry (64, 64, 64, 64, 1, 1, 0, 0);
  g_assert_true (m2i_decoder_decode (d->dec, t, G_N_ELEMENTS (t), &g, small, &error));
  g_assert_cmpuint (small->n_heads, ==, 2);
  g_assert_true (small->truncated);
  m2i_infer_result_free (small);
  /* a missing output */
  g_assert_false (test_decoder_decode (d, t, 4, NULL, &error));
  g_assert_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  test_decoder_free (d);
  m2i_ir_model_unref (m);
}

static void
test_refused (void)
{
  TestOutput outs[] = {
    { "prob", "SoftMax", NULL, M2I_ET_F32, TEST_SHAPE (1, 2) },
    { "map", "Add", NULL, M2I_ET_F32, TEST_SHAPE (1, 3, 8, 8) },
  };
  M2iIrModel *m = test_model_new (outs, 2, NULL);
  M2iDecoderOptions o;
  test_options_init (&o);
  GError *error = NULL;
  g_assert_null (test_decoder_new (&infer_decoder_multi_head, m, &o, &error));
  g_assert_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT);
  g_test_message ("%s", error->message);
  g_clear_error (&error);
  m2i_ir_model_unref (m);
  /* multi-label needs a float vector */
  TestOutput out = { "map", "Add", NULL, M2I_ET_I32, TEST_SHAPE (1, 5) };
  m = test_model_new (&out, 1, NULL);
  g_assert_null (test_decoder_new (&infer_decoder_multi_label, m, &o, &error));
  g_assert_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  m2i_ir_model_unref (m);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/decode/heads/multi-label", test_multi_label);
  g_test_add_func ("/decode/heads/multi-head", test_multi_head);
  g_test_add_func ("/decode/heads/refused", test_refused);
  return g_test_run ();
}
