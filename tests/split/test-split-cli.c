/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* m2i-split, spawned as a user would: "split" writes a folder and prints the
 * plan, "run" runs it on a raw input and prints the class torch gives
 * (tests/data/fashion-mnist) and the comparison with the unsplit model;
 * bad arguments fail with a message. */
#include "split-test-util.h"

/* Runs the program under test with the NULL-terminated arguments. */
#define run_tool(status, err, ...) test_run_program (g_getenv ("M2I_SPLIT"), status, err, __VA_ARGS__)

static void
test_split_and_run (void)
{
  g_autofree gchar *model = test_models_path ("fashion-mnist/fashion-mnist.xml");
  g_autofree gchar *tmp = g_dir_make_tmp ("m2i-split-cli-XXXXXX", NULL);
  g_autofree gchar *dir = g_build_filename (tmp, "plan", NULL);
  g_autofree gchar *dot = g_build_filename (tmp, "plan.dot", NULL);
  gint status;
  g_autofree gchar *err = NULL;
  g_autofree gchar *out = run_tool (&status, &err, "split", model, "-o", dir, "--dot", dot,
      "--explain", NULL);
  g_test_message ("%s%s", out, err);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  g_assert_nonnull (strstr (out, "2 pieces, 3 tensors (HETERO:M2I,CPU)"));
  g_assert_nonnull (strstr (out, "piece 0: M2I npu-fp16, 14 ops"));
  g_assert_nonnull (strstr (out, "    ops Add 4, ReLU 3, Convolution 2, MatMul 2, MaxPool 2, Reshape 1\n"));
  g_assert_nonnull (strstr (out, "    in  input [1,3,28,28] f32 9408 B (input)\n"));
  g_assert_nonnull (strstr (out, "    out fc2 [1,10] f32 40 B (intermediate, to piece 1)\n"));
  g_assert_nonnull (strstr (out, "piece 1: CPU cpu, 1 op"));
  g_assert_nonnull (strstr (out, "kept: 14 ops from 'conv1/Convolution' on npu-fp16"));
  g_autofree gchar *json = g_build_filename (dir, "graph_infos.json", NULL);
  g_assert_true (g_file_test (json, G_FILE_TEST_EXISTS));
  gchar *dot_text;
  g_assert_true (g_file_get_contents (dot, &dot_text, NULL, NULL));
  g_assert_true (g_str_has_prefix (dot_text, "digraph split {"));
  g_assert_nonnull (strstr (dot_text, "subgraph cluster_1"));
  g_free (dot_text);

  /* image 4 of first64.input.f32: torch says Shirt (6) */
  g_autofree gchar *inputs = test_data_path ("fashion-mnist/first64.input.f32");
  gchar *f32;
  gsize len;
  g_assert_true (g_file_get_contents (inputs, &f32, &len, NULL));
  g_autofree gchar *raw = g_build_filename (tmp, "img4.f32", NULL);
  g_assert_true (g_file_set_contents (raw, f32 + 4 * 9408, 9408, NULL));
  g_free (f32);
  g_autofree gchar *in_arg = g_strdup_printf ("input=%s", raw);
  g_autofree gchar *err2 = NULL;
  g_autofree gchar *out2 = run_tool (&status, &err2, "run", dir, "-i", in_arg, "--compare", model,
      "--iterations", "3", "-n", "1", NULL);
  g_test_message ("%s%s", out2, err2);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  g_assert_nonnull (strstr (out2, "output prob:\ntop 5:\n      6  "));
  g_assert_nonnull (strstr (out2, "piece 0 M2I npu-fp16"));
  g_assert_nonnull (strstr (out2, "device 6 layers "));
  g_assert_nonnull (strstr (out2, "largest difference from the unsplit model on the CPU: "));

  /* --dump: each output raw, in its own type */
  g_autofree gchar *dump = g_build_filename (tmp, "dump", NULL);
  g_autofree gchar *err6 = NULL;
  g_free (run_tool (&status, &err6, "run", dir, "-i", in_arg, "--dump", dump, NULL));
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  g_autofree gchar *prob_path = g_build_filename (dump, "prob.f32", NULL);
  gchar *prob;
  g_assert_true (g_file_get_contents (prob_path, &prob, &len, NULL));
  g_assert_cmpuint (len, ==, 10 * sizeof (float));
  g_assert_cmpint (test_argmax ((const float *) prob, 10), ==, 6);
  g_free (prob);
  g_unlink (prob_path);
  g_rmdir (dump);

  /* errors: a wrong-sized input, a missing folder, a bad device string,
   * an input name the plan does not have */
  g_autofree gchar *err7 = NULL;
  g_autofree gchar *no_such = g_strdup_printf ("nope=%s", raw);
  g_free (run_tool (&status, &err7, "run", dir, "-i", no_such, NULL));
  g_assert_false (g_spawn_check_wait_status (status, NULL));
  g_assert_nonnull (strstr (err7, "the plan has no input 'nope' (its inputs: 'input')"));
  g_autofree gchar *err3 = NULL;
  g_autofree gchar *bad_in = g_strdup_printf ("input=%s", json);
  g_free (run_tool (&status, &err3, "run", dir, "-i", bad_in, NULL));
  g_assert_false (g_spawn_check_wait_status (status, NULL));
  g_assert_nonnull (strstr (err3, "input 'input' (f32) needs 9408"));
  g_autofree gchar *err4 = NULL;
  g_free (run_tool (&status, &err4, "run", tmp, NULL));
  g_assert_false (g_spawn_check_wait_status (status, NULL));
  g_assert_nonnull (strstr (err4, "no graph_infos.json"));
  g_autofree gchar *err5 = NULL;
  g_free (run_tool (&status, &err5, "split", model, "-o", dir, "--device",
      "HETERO:GPU,CPU", NULL));
  g_assert_false (g_spawn_check_wait_status (status, NULL));
  g_assert_nonnull (strstr (err5, "unknown device \"GPU\""));
  test_remove_dir (dir);
  g_unlink (dot);
  g_unlink (raw);
  g_rmdir (tmp);
}

/* -i takes the Parameter's name as well as its tensor's; an output that is
 * no class list is summarised. */
static void
test_input_names (void)
{
  TestIr *b = test_ir_new (11);
  M2iShape s = TEST_SHAPE (2, 3);
  gint x = test_ir_parameter (b, "x", M2I_ET_F32, &s);         /* tensor name t0 */
  test_ir_result (b, test_ir_op (b, "ReLU", "opset1", NULL, 1, &x, M2I_ET_F32, &s));
  g_autofree gchar *model = test_ir_write_files (test_ir_xml (b), NULL);
  test_ir_free (b);
  g_autofree gchar *tmp = g_dir_make_tmp ("m2i-split-cli-XXXXXX", NULL);
  g_autofree gchar *dir = g_build_filename (tmp, "plan", NULL);
  gint status;
  g_autofree gchar *err = NULL;
  g_free (run_tool (&status, &err, "split", model, "-o", dir, "--device", "CPU", NULL));
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  g_autofree gchar *raw = g_build_filename (tmp, "x.f32", NULL);
  const float v[6] = { -1, 4, 2, 0.5f, -3, 1.5f };
  g_assert_true (g_file_set_contents (raw, (const gchar *) v, sizeof v, NULL));
  const char *names[] = { "x", "t0" };
  for (guint k = 0; k < G_N_ELEMENTS (names); k++) {
    g_autofree gchar *arg = g_strdup_printf ("%s=%s", names[k], raw);
    g_autofree gchar *err2 = NULL;
    g_autofree gchar *out = run_tool (&status, &err2, "run", dir, "-i", arg, NULL);
    g_test_message ("%s%s", out, err2);
    g_assert_true (g_spawn_check_wait_status (status, NULL));
    g_assert_nonnull (strstr (out, "output t1: f32 [2,3]: min 0 max 4 mean 1.33333 argmax 1 [0,1]\n"));
  }
  test_remove_dir (dir);
  g_unlink (raw);
  g_rmdir (tmp);
  test_ir_remove_files (g_steal_pointer (&model));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/split/cli/split-and-run", test_split_and_run);
  g_test_add_func ("/split/cli/input-names", test_input_names);
  return g_test_run ();
}
