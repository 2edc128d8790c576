/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The quantized Fashion-MNIST model (models/fashion-mnist-int8, FakeQuantize
 * on the inputs and weights of every Convolution and MatMul): the
 * partitioner runs conv1 … fc1 on the int8 engine, the FakeQuantize ranges
 * folded into sa8 grids (the input's quantization is the boundary
 * conversion), fc2 (no output grid) and SoftMax elsewhere.
 *
 * Accuracy on the first 2000 test images of Debian's dataset-fashion-mnist
 * (skipped when absent) against the true labels: the int8 engine's within
 * one point of the fp32 model's (torch's predictions,
 * tests/data/fashion-mnist); and its classes against an independent int8
 * simulation (the numpy executor's FakeQuantize model,
 * tests/data/split/int8.t10k-pred.u8): the same on at least 99.5% (the
 * engine requantizes with TFLite's rounding half away from zero and 31-bit
 * multipliers where the simulation rounds half to even in f32). On the 64
 * reference images (always here) the split outputs are within 0.02 of the
 * unsplit model's on the CPU (which runs FakeQuantize in f32). */
#include "split-test-util.h"

#include <math.h>

#define N_SUBSET 2000

static M2iSplitPlan *
plan_int8 (M2iIrModel **model)
{
  g_autofree gchar *xml = test_models_path ("fashion-mnist-int8/fashion-mnist-int8.xml");
  GError *error = NULL;
  *model = m2i_ir_model_load (xml, NULL, &error);
  g_assert_no_error (error);
  return split_logged (*model, NULL);
}

static void
test_plan_and_first64 (void)
{
  M2iIrModel *m;
  M2iSplitPlan *plan = plan_int8 (&m);
  const char *int8_layers[] = { "input/fq", "conv1/Convolution", "conv1/MaxPool", "conv1/fq",
    "conv2/Convolution", "flatten", "flatten/fq", "fc1/MatMul", "fc1/ReLU", "fc1/fq" };
  for (guint k = 0; k < G_N_ELEMENTS (int8_layers); k++)
    g_assert_cmpint (engine_of_layer (plan, int8_layers[k]), ==, M2I_SPLIT_ENGINE_NPU_INT8);
  g_assert_cmpint (engine_of_layer (plan, "prob"), ==, M2I_SPLIT_ENGINE_CPU);
  g_assert_cmpint (engine_of_layer (plan, "fc2/MatMul"), !=, M2I_SPLIT_ENGINE_NPU_INT8);

  GError *error = NULL;
  M2iSplitRunner *r = m2i_split_runner_new (plan, NULL, &error);
  g_assert_no_error (error);
  M2iIrCompiledModel *cm = m2i_ir_compile (m, NULL, &error);
  g_assert_no_error (error);
  M2iIrInferRequest *req = m2i_ir_infer_request_new (cm, &error);
  g_autoptr (GBytes) in = test_read_data ("fashion-mnist/first64.input.f32");
  g_autoptr (GBytes) pred8 = test_read_data ("split/int8.t10k-pred.u8");
  const float *x = g_bytes_get_data (in, NULL);
  const guint8 *sim = g_bytes_get_data (pred8, NULL);
  double worst = 0;
  gint same = 0;
  for (gint k = 0; k < 64; k++) {
    M2iTensor *t = m2i_split_runner_get_input (r, 0);
    memcpy (t->data, x + k * 2352, m2i_tensor_nbytes (t));
    g_assert_true (m2i_split_runner_run (r, &error));
    g_assert_true (m2i_ir_infer_request_set_input (req, 0, t, &error));
    g_assert_true (m2i_ir_infer_request_infer (req, &error));
    const float *a = m2i_split_runner_get_output (r, 0)->data;
    const float *b = m2i_ir_infer_request_get_output (req, 0)->data;
    for (gint c = 0; c < 10; c++)
      worst = MAX (worst, fabs (a[c] - b[c]));
    same += test_argmax (a, 10) == sim[k];
  }
  g_test_message ("int8 engine vs the model unsplit on the CPU: largest difference %.2e; "
      "same class as the numpy simulation on %d of 64", worst, same);
  g_assert_cmpfloat (worst, <=, 0.02);
  g_assert_cmpint (same, >=, 63);
  m2i_ir_infer_request_free (req);
  m2i_ir_compiled_model_unref (cm);
  m2i_split_runner_free (r);
  m2i_split_plan_unref (plan);
  m2i_ir_model_unref (m);
}

static void
test_accuracy (void)
{
  g_autoptr (GBytes) images = test_fashion_mnist_t10k ();
  if (!images) {
    g_test_skip (TEST_FM_MISSING);
    return;
  }
  GError *error = NULL;
  const guint8 *d = g_bytes_get_data (images, NULL);
  g_autoptr (GBytes) labels = test_read_data ("fashion-mnist/t10k.labels.u8");
  g_autoptr (GBytes) torch = test_read_data ("fashion-mnist/t10k.torch-pred.u8");
  g_autoptr (GBytes) pred8 = test_read_data ("split/int8.t10k-pred.u8");
  const guint8 *lab = g_bytes_get_data (labels, NULL), *fp32 = g_bytes_get_data (torch, NULL);
  const guint8 *sim = g_bytes_get_data (pred8, NULL);

  M2iIrModel *m;
  M2iSplitPlan *plan = plan_int8 (&m);
  M2iSplitRunner *r = m2i_split_runner_new (plan, NULL, &error);
  g_assert_no_error (error);
  gint right8 = 0, right32 = 0, agree_sim = 0;
  for (gint k = 0; k < N_SUBSET; k++) {
    test_fashion_mnist_input (d + k * TEST_FM_PIXELS, m2i_split_runner_get_input (r, 0)->data);
    g_assert_true (m2i_split_runner_run (r, &error));
    gint c = test_argmax (m2i_split_runner_get_output (r, 0)->data, 10);
    right8 += c == lab[k];
    right32 += fp32[k] == lab[k];
    agree_sim += c == sim[k];
  }
  double acc8 = (double) right8 / N_SUBSET, acc32 = (double) right32 / N_SUBSET;
  g_test_message ("first %d test images: int8 engine %.2f%%, fp32 %.2f%%; the same class as the "
      "numpy int8 simulation on %.2f%%", N_SUBSET, 100 * acc8, 100 * acc32,
      100.0 * agree_sim / N_SUBSET);
  g_assert_cmpfloat (fabs (acc8 - acc32), <=, 0.01);
  g_assert_cmpint (agree_sim, >=, N_SUBSET * 995 / 1000);
  m2i_split_runner_free (r);
  m2i_split_plan_unref (plan);
  m2i_ir_model_unref (m);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/split/int8/plan-and-first64", test_plan_and_first64);
  g_test_add_func ("/split/int8/accuracy", test_accuracy);
  return g_test_run ();
}
