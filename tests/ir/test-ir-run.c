/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* m2i-ir-run, the command-line program: inputs from a PGM image, an idx
 * file, a raw tensor; top-k with labels; detections; the benchmark mode;
 * errors. Expected classes are torch's (tests/data/fashion-mnist). */
#include "ir-test-util.h"

#include <glib/gstdio.h>
#include <string.h>

/* Runs the program under test with the NULL-terminated arguments. */
#define run_tool(status, err, ...) test_run_program (g_getenv ("M2I_IR_RUN"), status, err, __VA_ARGS__)

static void
test_pgm_top_k (void)
{
  g_autofree gchar *model = test_models_path ("fashion-mnist/fashion-mnist.xml");
  g_autofree gchar *labels = test_models_path ("fashion-mnist/labels.txt");
  g_autofree gchar *images = test_data_path ("fashion-mnist/first64.images.u8");
  gchar *pixels;
  gsize len;
  g_assert_true (g_file_get_contents (images, &pixels, &len, NULL));
  /* test image 0 as a PGM; torch says Ankle boot (class 9) */
  GString *pgm = g_string_new ("P5\n# Fashion-MNIST t10k 0\n28 28\n255\n");
  g_string_append_len (pgm, pixels, 784);
  g_autofree gchar *dir = g_dir_make_tmp ("m2i-ir-run-XXXXXX", NULL);
  g_autofree gchar *pgm_path = g_build_filename (dir, "img0.pgm", NULL);
  g_assert_true (g_file_set_contents (pgm_path, pgm->str, pgm->len, NULL));
  gint status;
  g_autofree gchar *err = NULL;
  g_autofree gchar *out = run_tool (&status, &err, model, "-i", pgm_path, "-k", "3", "--labels",
      labels, "--mean", "72.93", "--scale", "90.015", NULL);
  g_test_message ("%s%s", out, err);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  g_assert_nonnull (strstr (out, "model fashion-mnist (IR v11)"));
  g_assert_nonnull (strstr (out, "input  input: f32 [1,3,28,28]"));
  g_assert_nonnull (strstr (out, "top 3:\n      9  "));
  g_assert_nonnull (strstr (out, "Ankle boot\n"));

  /* raw f32: image 4 of first64.input.f32, torch says Shirt (6) */
  g_autofree gchar *inputs = test_data_path ("fashion-mnist/first64.input.f32");
  gchar *f32;
  g_assert_true (g_file_get_contents (inputs, &f32, &len, NULL));
  g_autofree gchar *raw_path = g_build_filename (dir, "img4.f32", NULL);
  g_assert_true (g_file_set_contents (raw_path, f32 + 4 * 9408, 9408, NULL));
  g_autofree gchar *dump_path = g_build_filename (dir, "prob.f32", NULL);
  g_autofree gchar *err2 = NULL;
  g_autofree gchar *out2 = run_tool (&status, &err2, model, "-q", "-i", raw_path, "-k", "1",
      "--labels", labels, "--dump", dump_path, NULL);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  g_assert_nonnull (strstr (out2, "top 1:\n      6  "));
  g_assert_nonnull (strstr (out2, "Shirt"));
  /* --dump writes output 0: torch's probabilities within 1e-4 */
  g_autofree gchar *probs = test_data_path ("fashion-mnist/first64.prob.f32");
  gchar *ref, *dumped;
  g_assert_true (g_file_get_contents (probs, &ref, &len, NULL));
  g_assert_true (g_file_get_contents (dump_path, &dumped, &len, NULL));
  g_assert_cmpuint (len, ==, 40);
  for (gint k = 0; k < 10; k++)
    g_assert_cmpfloat_with_epsilon (((float *) dumped)[k], ((float *) ref)[40 + k], 1e-4);
  g_free (ref);
  g_free (dumped);
  g_free (f32);
  g_free (pixels);
  g_string_free (pgm, TRUE);
  g_unlink (pgm_path);
  g_unlink (raw_path);
  g_unlink (dump_path);
  g_rmdir (dir);
}

static void
test_idx_input (void)
{
  g_autofree gchar *idx = test_fashion_mnist_path ("t10k-images-idx3-ubyte.gz");
  if (!idx) {
    g_test_skip (TEST_FM_MISSING);
    return;
  }
  g_autofree gchar *model = test_models_path ("fashion-mnist/fashion-mnist.xml");
  g_autofree gchar *labels = test_models_path ("fashion-mnist/labels.txt");
  g_autofree gchar *spec = g_strdup_printf ("%s:1", idx);       /* torch: Pullover (2) */
  gint status;
  g_autofree gchar *err = NULL;
  g_autofree gchar *out = run_tool (&status, &err, model, "-q", "-i", spec, "-k", "1", "--labels",
      labels, "--mean", "72.93", "--scale", "90.015", NULL);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  g_assert_nonnull (strstr (out, "top 1:\n      2  "));
  g_assert_nonnull (strstr (out, "Pullover"));
}

/* Two inputs, named: the PrePostProcessor model on an NV12 frame split in
 * its Y and UV planes (tests/data/ppp: t10k-0 is an Ankle boot, 0.9991). */
static void
test_named_inputs (void)
{
  g_autofree gchar *model = test_models_path ("fashion-mnist-ppp/fashion-mnist-ppp.xml");
  g_autofree gchar *labels = test_models_path ("fashion-mnist/labels.txt");
  g_autofree gchar *nv12_path = test_data_path ("ppp/t10k-0.nv12");
  gchar *nv12;
  gsize len;
  g_assert_true (g_file_get_contents (nv12_path, &nv12, &len, NULL));
  g_assert_cmpuint (len, ==, 4608);
  g_autofree gchar *dir = g_dir_make_tmp ("m2i-ir-run-XXXXXX", NULL);
  g_autofree gchar *y = g_build_filename (dir, "y.u8", NULL);
  g_autofree gchar *uv = g_build_filename (dir, "uv.u8", NULL);
  g_assert_true (g_file_set_contents (y, nv12, 3072, NULL));
  g_assert_true (g_file_set_contents (uv, nv12 + 3072, 1536, NULL));
  g_autofree gchar *y_spec = g_strdup_printf ("input/y=%s", y);
  g_autofree gchar *uv_spec = g_strdup_printf ("input/uv=%s", uv);
  gint status;
  g_autofree gchar *err = NULL;
  /* given in the other order: the names decide */
  g_autofree gchar *out = run_tool (&status, &err, model, "-q", "-i", uv_spec, "-i", y_spec, "-k", "1",
      "--labels", labels, NULL);
  g_test_message ("%s%s", out, err);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  g_assert_nonnull (strstr (out, "top 1:\n      9  0.999"));
  g_assert_nonnull (strstr (out, "Ankle boot"));
  g_unlink (y);
  g_unlink (uv);
  g_rmdir (dir);
  g_free (nv12);
}

static void
test_benchmark_mode (void)
{
  g_autofree gchar *model = test_models_path ("fashion-mnist/fashion-mnist.xml");
  gint status;
  g_autofree gchar *err = NULL;
  g_autofree gchar *out = run_tool (&status, &err, model, "-q", "-k", "0", "-b", "--iterations",
      "5", "-r", "2", "-n", "1", NULL);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  g_assert_nonnull (strstr (out, "benchmark: 2 requests x 5 inferences, 1 thread per inference\n"));
  g_assert_nonnull (strstr (out, "latency ms: median "));
  g_assert_nonnull (strstr (out, "throughput: "));
}

static void
test_detections (void)
{
  g_autofree gchar *model =
      test_shared_model ("person-detection-retail-0013/person-detection-retail-0013.xml");
  if (!model)
    return;
  g_autofree gchar *photo = test_data_path ("ir/astronaut-272x160.ppm");
  gint status;
  g_autofree gchar *err = NULL;
  g_autofree gchar *out = run_tool (&status, &err, model, "-q", "-i", photo, "-t", "0.5", NULL);
  g_test_message ("%s", out);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  g_assert_nonnull (strstr (out, "detections (confidence >= 0.50):\n  class 1 "));
}

static void
test_errors (void)
{
  gint status;
  g_autofree gchar *err = NULL;
  g_free (run_tool (&status, &err, "/nonexistent.xml", NULL));
  g_assert_false (g_spawn_check_wait_status (status, NULL));
  g_assert_true (g_str_has_prefix (err, "m2i-ir-run: cannot read the model: "));
  g_autofree gchar *model = test_models_path ("fashion-mnist/fashion-mnist.xml");
  g_autofree gchar *labels = test_models_path ("fashion-mnist/labels.txt");
  g_autofree gchar *err2 = NULL;
  g_free (run_tool (&status, &err2, model, "-i", labels, NULL));
  g_assert_false (g_spawn_check_wait_status (status, NULL));
  g_assert_nonnull (strstr (err2, "is neither f32, f16 nor u8 data for 2352 elements"));
  g_autofree gchar *err3 = NULL;
  g_free (run_tool (&status, &err3, NULL));
  g_assert_false (g_spawn_check_wait_status (status, NULL));
  g_assert_nonnull (strstr (err3, "give one MODEL.xml"));
}

/* A model whose input has a dynamic dim: --shape gives it one; an output
 * that is no class list is summarised (shape, min, max, mean, argmax); -i
 * takes the input's tensor name; a name it does not have is an error. */
static void
test_shape_and_summary (void)
{
  TestIr *b = test_ir_new (11);
  M2iShape in = TEST_SHAPE (-1, 3);
  gint x = test_ir_parameter (b, "x", M2I_ET_F32, &in);
  test_ir_result (b, test_ir_op (b, "ReLU", "opset1", NULL, 1, &x, M2I_ET_F32, &in));
  g_autofree gchar *model = test_ir_write_files (test_ir_xml (b), NULL);
  test_ir_free (b);
  g_autofree gchar *dir = g_path_get_dirname (model);
  g_autofree gchar *raw = g_build_filename (dir, "x.f32", NULL);
  const float v[6] = { -1, 4, 2, 0.5f, -3, 1.5f };        /* ReLU: 0 4 2 .5 0 1.5 */
  g_assert_true (g_file_set_contents (raw, (const gchar *) v, sizeof v, NULL));
  g_autofree gchar *spec = g_strdup_printf ("t0=%s", raw);   /* its tensor name */
  gint status;
  g_autofree gchar *err = NULL;
  g_autofree gchar *out = run_tool (&status, &err, model, "-q", "--shape", "x=2,3", "-i", spec, NULL);
  g_test_message ("%s%s", out, err);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  g_assert_nonnull (strstr (out, "output t1: f32 [2,3]: min 0 max 4 mean 1.33333 argmax 1 [0,1]\n"));
  /* without a shape: the message says what to do */
  g_autofree gchar *err2 = NULL;
  g_free (run_tool (&status, &err2, model, "-q", "-i", spec, NULL));
  g_assert_false (g_spawn_check_wait_status (status, NULL));
  g_assert_nonnull (strstr (err2, "input 'x' has dynamic dimensions [?,3]"));
  g_assert_nonnull (strstr (err2, "--shape x="));
  g_autofree gchar *err3 = NULL;
  g_autofree gchar *bad = g_strdup_printf ("y=%s", raw);
  g_free (run_tool (&status, &err3, model, "-q", "--shape", "2,3", "-i", bad, NULL));
  g_assert_false (g_spawn_check_wait_status (status, NULL));
  g_assert_nonnull (strstr (err3, "the model has no input 'y' (its inputs: 'x'"));
  g_unlink (raw);
  test_ir_remove_files (g_steal_pointer (&model));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ir/run/pgm-top-k", test_pgm_top_k);
  g_test_add_func ("/ir/run/shape-and-summary", test_shape_and_summary);
  g_test_add_func ("/ir/run/idx-input", test_idx_input);
  g_test_add_func ("/ir/run/named-inputs", test_named_inputs);
  g_test_add_func ("/ir/run/benchmark-mode", test_benchmark_mode);
  g_test_add_func ("/ir/run/detections", test_detections);
  g_test_add_func ("/ir/run/errors", test_errors);
  return g_test_run ();
}
