/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The project's Fashion-MNIST model (models/fashion-mnist) against torch:
 * the outputs on the first 64 test images within 1e-4 of torch's, and, over
 * all 10,000 test images of Debian's dataset-fashion-mnist, the same
 * predicted class as torch for every image — hence the same accuracy. */
#include "ir-test-util.h"
#include <base/m2i-error.h>

#include <math.h>
#include <string.h>

#define N_PIXELS TEST_FM_PIXELS
#define N_INPUT (3 * N_PIXELS)

static M2iIrCompiledModel *
compile_model (void)
{
  g_autofree gchar *xml = test_models_path ("fashion-mnist/fashion-mnist.xml");
  GError *error = NULL;
  M2iIrModel *m = m2i_ir_model_load (xml, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (m2i_ir_model_get_input (m, 0)->name, ==, "input");
  g_assert_cmpstr (m2i_ir_model_get_output (m, 0)->name, ==, "prob");
  M2iIrCompiledModel *cm = m2i_ir_compile (m, NULL, &error);
  g_assert_no_error (error);
  m2i_ir_model_unref (m);
  return cm;
}

static void
test_first64 (void)
{
  M2iIrCompiledModel *cm = compile_model ();
  g_autoptr (GBytes) inputs = test_read_data ("fashion-mnist/first64.input.f32");
  g_autoptr (GBytes) probs = test_read_data ("fashion-mnist/first64.prob.f32");
  g_assert_cmpuint (g_bytes_get_size (inputs), ==, 64 * N_INPUT * sizeof (float));
  const float *in = g_bytes_get_data (inputs, NULL), *ref = g_bytes_get_data (probs, NULL);
  GError *error = NULL;
  M2iIrInferRequest *req = m2i_ir_infer_request_new (cm, &error);
  g_assert_no_error (error);
  double worst = 0;
  for (gint i = 0; i < 64; i++) {
    M2iTensor t = { M2I_ET_F32, TEST_SHAPE (1, 3, 28, 28), (gpointer) (in + i * N_INPUT) };
    g_assert_true (m2i_ir_infer_request_set_input (req, 0, &t, &error));
    g_assert_true (m2i_ir_infer_request_infer (req, &error));
    const M2iTensor *o = m2i_ir_infer_request_get_output (req, 0);
    g_assert_true (m2i_shape_equal (&o->shape, &TEST_SHAPE (1, 10)));
    const float *p = o->data;
    for (gint k = 0; k < 10; k++)
      worst = MAX (worst, fabs ((double) p[k] - ref[i * 10 + k]));
    g_assert_cmpint (test_argmax (p, 10), ==, test_argmax (ref + i * 10, 10));
  }
  g_test_message ("max |m2i - torch| over 64 images: %.3g", worst);
  g_assert_cmpfloat (worst, <=, 1e-4);
  m2i_ir_infer_request_free (req);
  m2i_ir_compiled_model_unref (cm);
}

typedef struct {
  M2iIrCompiledModel *cm;
  const guint8 *pixels;          /* 10000 × 784 */
  guint8 *pred;
  gint begin, end;
  gboolean ok;
} Slice;

static gpointer
run_slice (gpointer data)
{
  Slice *s = data;
  M2iIrInferRequest *req = m2i_ir_infer_request_new (s->cm, NULL);
  float *in = m2i_ir_infer_request_get_input (req, 0)->data;
  const float *out = m2i_ir_infer_request_get_output (req, 0)->data;
  s->ok = TRUE;
  for (gint i = s->begin; i < s->end && s->ok; i++) {
    /* torch's normalisation, step by step in f32 (models/fashion-mnist/README.md) */
    test_fashion_mnist_input (s->pixels + (gsize) i * N_PIXELS, in);
    s->ok = m2i_ir_infer_request_infer (req, NULL);
    s->pred[i] = test_argmax (out, 10);
  }
  m2i_ir_infer_request_free (req);
  return NULL;
}

static void
test_full_test_set (void)
{
  g_autoptr (GBytes) images = test_fashion_mnist_t10k ();
  if (!images) {
    g_test_skip (TEST_FM_MISSING);
    return;
  }
  GError *error = NULL;
  g_autoptr (GBytes) torch_pred = test_read_data ("fashion-mnist/t10k.torch-pred.u8");
  g_autoptr (GBytes) labels = test_read_data ("fashion-mnist/t10k.labels.u8");
  const guint8 *tp = g_bytes_get_data (torch_pred, NULL), *lab = g_bytes_get_data (labels, NULL);

  /* one request per thread, one thread per inference: the cores are busy */
  M2iIrModel *m = NULL;
  {
    g_autofree gchar *xml = test_models_path ("fashion-mnist/fashion-mnist.xml");
    m = m2i_ir_model_load (xml, NULL, &error);
    g_assert_no_error (error);
  }
  M2iIrCompileOptions opts = { .n_threads = 1 };
  M2iIrCompiledModel *cm = m2i_ir_compile (m, &opts, &error);
  g_assert_no_error (error);
  guint8 *pred = g_new0 (guint8, 10000);
  enum { N_THREADS = 2 };
  Slice slices[N_THREADS];
  GThread *threads[N_THREADS];
  for (gint t = 0; t < N_THREADS; t++) {
    slices[t] = (Slice) { cm, g_bytes_get_data (images, NULL), pred,
      t * 10000 / N_THREADS, (t + 1) * 10000 / N_THREADS, FALSE };
    threads[t] = g_thread_new ("fmnist", run_slice, &slices[t]);
  }
  for (gint t = 0; t < N_THREADS; t++) {
    g_thread_join (threads[t]);
    g_assert_true (slices[t].ok);
  }
  gint same = 0, correct = 0, torch_correct = 0;
  for (gint i = 0; i < 10000; i++) {
    same += pred[i] == tp[i];
    correct += pred[i] == lab[i];
    torch_correct += tp[i] == lab[i];
  }
  g_test_message ("m2i: %d/10000 correct (%.2f %%), torch %d; same class as torch on %d",
      correct, correct / 100.0, torch_correct, same);
  g_assert_cmpint (torch_correct, ==, 9225);
  g_assert_cmpint (same, ==, 10000);
  g_assert_cmpint (correct, ==, torch_correct);
  g_free (pred);
  m2i_ir_compiled_model_unref (cm);
  m2i_ir_model_unref (m);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ir/fashion-mnist/first64-vs-torch", test_first64);
  g_test_add_func ("/ir/fashion-mnist/full-test-set", test_full_test_set);
  return g_test_run ();
}
