/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-decode-segment.c — the segmentation decoder (decode-segment.c).
 *
 * models/tiny-seg (a colour-segmentation network trained by
 * models/tiny-seg/make_seg.py) with torch's reference outputs: the decoder
 * on torch's own logits gives numpy's argmax exactly and torch's softmax
 * probability within 1e-5; run by the IR runtime and decoded, it agrees
 * with numpy's argmax over torch's logits on >= 99.5 % of the pixels.
 * Hand-made tensors: ties, NaN and Inf scores, SoftMax outputs, argmax maps
 * of every number type, refused shapes. */
#include "decode-test-util.h"

#include <math.h>
#include <string.h>

#define SEG_H 48
#define SEG_W 64
#define SEG_C 4

static const char *const cases[] = { "synth0", "synth1", "astronaut" };

static gpointer
read_gz (const char *name, gsize bytes)
{
  GBytes *b = test_read_data (name);
  g_assert_cmpuint (g_bytes_get_size (b), ==, bytes);
  gpointer p = g_memdup2 (g_bytes_get_data (b, NULL), bytes);
  g_bytes_unref (b);
  return p;
}

static M2iIrModel *
tiny_seg (void)
{
  return test_load_project_model ("tiny-seg/tiny-seg.xml");
}

static TestDecoder *
seg_decoder (M2iIrModel *m)
{
  M2iDecoderOptions o;
  test_options_init (&o);
  GError *error = NULL;
  TestDecoder *d = test_decoder_new (&infer_decoder_segmentation, m, &o, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (d->size->mask_width, ==, SEG_W);
  g_assert_cmpuint (d->size->mask_height, ==, SEG_H);
  return d;
}

static void
test_exact_argmax (void)
{
  M2iIrModel *m = tiny_seg ();
  TestDecoder *d = seg_decoder (m);
  M2iInferGeometry g = test_geometry (128, 96, 128, 96, 1, 1, 0, 0);
  for (guint c = 0; c < G_N_ELEMENTS (cases); c++) {
    g_autofree gchar *lf = g_strdup_printf ("infer/tiny-seg.%s.logits.f32.gz", cases[c]);
    g_autofree gchar *af = g_strdup_printf ("infer/tiny-seg.%s.argmax.u8.gz", cases[c]);
    g_autofree gchar *pf = g_strdup_printf ("infer/tiny-seg.%s.prob.f32.gz", cases[c]);
    g_autofree float *logits = read_gz (lf, SEG_C * SEG_H * SEG_W * sizeof (float));
    g_autofree guint8 *argmax = read_gz (af, SEG_H * SEG_W);
    g_autofree float *prob = read_gz (pf, SEG_H * SEG_W * sizeof (float));
    M2iTensor t = { M2I_ET_F32, TEST_SHAPE (1, SEG_C, SEG_H, SEG_W), logits };
    GError *error = NULL;
    g_assert_true (test_decoder_decode (d, &t, 1, &g, &error));
    g_assert_no_error (error);
    const M2iInferMask *mk = &d->result->mask;
    g_assert_true (d->result->has_mask);
    g_assert_true (mk->has_confidence);
    g_assert_cmpuint (mk->width, ==, SEG_W);
    g_assert_cmpuint (mk->height, ==, SEG_H);
    g_assert_cmpuint (mk->n_classes, ==, SEG_C);
    for (guint i = 0; i < SEG_H * SEG_W; i++) {
      g_assert_cmpuint (mk->class_map[i], ==, argmax[i]);
      g_assert_cmpfloat_with_epsilon (mk->confidence[i], prob[i], 1e-5);
    }
  }
  test_decoder_free (d);
  m2i_ir_model_unref (m);
}

static void
test_runtime_vs_torch (void)
{
  M2iIrModel *m = tiny_seg ();
  GError *error = NULL;
  M2iIrCompiledModel *cm = m2i_ir_compile (m, NULL, &error);
  g_assert_no_error (error);
  M2iIrInferRequest *req = m2i_ir_infer_request_new (cm, &error);
  g_assert_no_error (error);
  TestDecoder *d = seg_decoder (m);
  M2iInferGeometry g = test_geometry (128, 96, 128, 96, 1, 1, 0, 0);
  for (guint c = 0; c < G_N_ELEMENTS (cases); c++) {
    g_autofree gchar *inf = g_strdup_printf ("infer/tiny-seg.%s.input.f32.gz", cases[c]);
    g_autofree gchar *af = g_strdup_printf ("infer/tiny-seg.%s.argmax.u8.gz", cases[c]);
    g_autofree float *input = read_gz (inf, 3 * 96 * 128 * sizeof (float));
    g_autofree guint8 *argmax = read_gz (af, SEG_H * SEG_W);
    M2iTensor in = { M2I_ET_F32, TEST_SHAPE (1, 3, 96, 128), input };
    g_assert_true (m2i_ir_infer_request_set_input (req, 0, &in, &error));
    g_assert_true (m2i_ir_infer_request_infer (req, &error));
    g_assert_no_error (error);
    const M2iTensor *out = m2i_ir_infer_request_get_output (req, 0);
    g_assert_true (test_decoder_decode (d, out, 1, &g, &error));
    g_assert_no_error (error);
    guint same = 0;
    for (guint i = 0; i < SEG_H * SEG_W; i++)
      same += d->result->mask.class_map[i] == argmax[i];
    double share = (double) same / (SEG_H * SEG_W);
    g_test_message ("%s: %u of %u pixels as numpy's argmax over torch (%.2f %%)", cases[c], same,
        SEG_H * SEG_W, 100 * share);
    g_assert_cmpfloat (share, >=, 0.995);
  }
  test_decoder_free (d);
  m2i_ir_infer_request_free (req);
  m2i_ir_compiled_model_unref (cm);
  m2i_ir_model_unref (m);
}

static void
test_scores_edges (void)
{
  enum { C = 3, H = 2, W = 4, P = H * W };
  const char *producers[] = { "Add", "SoftMax" };
  for (guint k = 0; k < 2; k++) {
    TestOutput out = { "seg", producers[k], NULL, M2I_ET_F32, TEST_SHAPE (1, C, H, W) };
    M2iIrModel *m = test_model_new (&out, 1, NULL);
    M2iDecoderOptions o;
    test_options_init (&o);
    GError *error = NULL;
    TestDecoder *d = test_decoder_new (&infer_decoder_segmentation, m, &o, &error);
    g_assert_no_error (error);
    /* pixel: 0 plain, 1 tie between 0 and 2 (first wins), 2 NaN in class
     * 1, 3 +Inf in class 2 (skipped), 4 all NaN, 5..7 plain */
    float s[C][P] = {
      { 0.1f, 0.4f, 0.2f, 0.1f, NAN, 0.5f, 0.1f, 0.1f },
      { 0.7f, 0.2f, NAN, 0.3f, NAN, 0.2f, 0.2f, 0.6f },
      { 0.2f, 0.4f, 0.5f, INFINITY, NAN, 0.3f, 0.7f, 0.3f },
    };
    M2iTensor t = { M2I_ET_F32, TEST_SHAPE (1, C, H, W), s };
    M2iInferGeometry g = test_geometry (W, H, W, H, 1, 1, 0, 0);
    g_assert_true (test_decoder_decode (d, &t, 1, &g, &error));
    const M2iInferMask *mk = &d->result->mask;
    const guint16 want[P] = { 1, 0, 2, 1, 0, 0, 2, 1 };
    for (guint i = 0; i < P; i++) {
      g_assert_cmpuint (mk->class_map[i], ==, want[i]);
      float best = s[want[i]][i];
      double expect;
      if (i == 4)
        expect = 0;
      else if (k == 1)
        expect = best;
      else {
        double sum = 0;
        for (guint c = 0; c < C; c++)
          if (isfinite (s[c][i]))
            sum += exp ((double) s[c][i] - best);
        expect = 1 / sum;
      }
      g_assert_cmpfloat_with_epsilon (mk->confidence[i], expect, 1e-6);
    }
    test_decoder_free (d);
    m2i_ir_model_unref (m);
  }
}

static void
test_argmax_maps (void)
{
  enum { H = 2, W = 3, P = H * W };
  M2iElementType types[] = { M2I_ET_I32, M2I_ET_I64, M2I_ET_U8, M2I_ET_F32 };
  M2iShape shapes[] = { TEST_SHAPE (1, H, W), TEST_SHAPE (1, 1, H, W) };
  const double values[P] = { 0, 3, 2, 70000, -1, 1 };
  const guint16 want[P] = { 0, 3, 2, 0, 0, 1 };
  for (guint ti = 0; ti < G_N_ELEMENTS (types); ti++)
    for (guint si = 0; si < 2; si++) {
      TestOutput out = { "argmax", "Squeeze", NULL, types[ti], shapes[si] };
      M2iIrModel *m = test_model_new (&out, 1, NULL);
      M2iDecoderOptions o;
      test_options_init (&o);
      const char *labels[] = { "a", "b", "c", "d", "e", NULL };
      o.labels = labels;
      o.n_labels = 5;
      GError *error = NULL;
      TestDecoder *d = test_decoder_new (&infer_decoder_segmentation, m, &o, &error);
      g_assert_no_error (error);
      guint8 buf[P * 8];
      for (guint i = 0; i < P; i++) {
        double v = values[i];
        switch (types[ti]) {
          case M2I_ET_I32: ((gint32 *) buf)[i] = (gint32) v; break;
          case M2I_ET_I64: ((gint64 *) buf)[i] = (gint64) v; break;
          case M2I_ET_U8: buf[i] = v < 0 || v > 255 ? 255 : (guint8) v; break;
          default: ((float *) buf)[i] = (float) v + (i == 1 ? 0.2f : 0); break;   /* 3.2 rounds to 3 */
        }
      }
      M2iTensor t = { types[ti], shapes[si], buf };
      M2iInferGeometry g = test_geometry (W, H, W, H, 1, 1, 0, 0);
      g_assert_true (test_decoder_decode (d, &t, 1, &g, &error));
      const M2iInferMask *mk = &d->result->mask;
      g_assert_false (mk->has_confidence);
      g_assert_cmpuint (mk->n_classes, ==, 5);
      for (guint i = 0; i < P; i++) {
        guint16 w = types[ti] == M2I_ET_U8 && (i == 3 || i == 4) ? 255 : want[i];
        g_assert_cmpuint (mk->class_map[i], ==, w);
      }
      test_decoder_free (d);
      m2i_ir_model_unref (m);
    }
}

static void
test_refused (void)
{
  M2iShape shapes[] = { TEST_SHAPE (1, 1000), TEST_SHAPE (2, 4, 8, 8), TEST_SHAPE (1, 4, 8, 8, 2),
    TEST_SHAPE (1, 70000, 2, 2), TEST_SHAPE (1, 2, 20000, 20000) };
  M2iDecoderOptions o;
  test_options_init (&o);
  for (guint i = 0; i < G_N_ELEMENTS (shapes); i++) {
    TestOutput out = { "x", "Add", NULL, M2I_ET_F32, shapes[i] };
    M2iIrModel *m = test_model_new (&out, 1, NULL);
    GError *error = NULL;
    g_assert_null (test_decoder_new (&infer_decoder_segmentation, m, &o, &error));
    g_assert_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT);
    g_clear_error (&error);
    m2i_ir_model_unref (m);
  }
  /* integer class scores are no scores */
  TestOutput out = { "x", "Add", NULL, M2I_ET_I32, TEST_SHAPE (1, 4, 8, 8) };
  M2iIrModel *m = test_model_new (&out, 1, NULL);
  GError *error = NULL;
  g_assert_null (test_decoder_new (&infer_decoder_segmentation, m, &o, &error));
  g_clear_error (&error);
  m2i_ir_model_unref (m);
  /* a result without room for the mask */
  out = (TestOutput) { "x", "Add", NULL, M2I_ET_F32, TEST_SHAPE (1, 4, 8, 8) };
  m = test_model_new (&out, 1, NULL);
  TestDecoder *d = test_decoder_new (&infer_decoder_segmentation, m, &o, &error);
  g_assert_no_error (error);
  float s[4 * 64] = { 0 };
  M2iTensor t = { M2I_ET_F32, TEST_SHAPE (1, 4, 8, 8), s };
  d->result->mask.capacity = 63;
  M2iInferGeometry g = test_geometry (8, 8, 8, 8, 1, 1, 0, 0);
  g_assert_false (test_decoder_decode (d, &t, 1, &g, &error));
  g_assert_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  test_decoder_free (d);
  m2i_ir_model_unref (m);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/decode/segment/tiny-seg-exact-argmax", test_exact_argmax);
  g_test_add_func ("/decode/segment/tiny-seg-runtime-vs-torch", test_runtime_vs_torch);
  g_test_add_func ("/decode/segment/scores-edges", test_scores_edges);
  g_test_add_func ("/decode/segment/argmax-maps", test_argmax_maps);
  g_test_add_func ("/decode/segment/refused", test_refused);
  return g_test_run ();
}
