/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Malformed and inconsistent graph_infos.json folders: each is a valid
 * folder (Fashion-MNIST split into its engine piece, graph 0: input → fc2,
 * and its CPU piece, graph 1: fc2 → prob) with one thing broken, and must
 * give a clear error — the right code and a message naming the culprit —
 * never a crash or a plan. */
#include "split-test-util.h"
#include <base/m2i-error.h>

#include <unistd.h>

static gchar *valid_dir;

static void
copy_dir (const char *from, const char *to)
{
  g_mkdir_with_parents (to, 0755);
  GDir *d = g_dir_open (from, 0, NULL);
  const char *name;
  while ((name = g_dir_read_name (d))) {
    g_autofree gchar *a = g_build_filename (from, name, NULL);
    g_autofree gchar *b = g_build_filename (to, name, NULL);
    gchar *data;
    gsize len;
    g_assert_true (g_file_get_contents (a, &data, &len, NULL));
    g_assert_true (g_file_set_contents (b, data, len, NULL));
    g_free (data);
  }
  g_dir_close (d);
}

/* A copy of the valid folder whose graph_infos.json has @from replaced by
 * @to (all occurrences when @all; else the first, which must exist). */
static gchar *
mutated (const char *from, const char *to, gboolean all)
{
  gchar *dir = g_dir_make_tmp ("m2i-split-bad-XXXXXX", NULL);
  copy_dir (valid_dir, dir);
  g_autofree gchar *path = g_build_filename (dir, "graph_infos.json", NULL);
  gchar *json;
  g_assert_true (g_file_get_contents (path, &json, NULL, NULL));
  GString *s = g_string_new (json);
  if (from) {
    g_assert_nonnull (strstr (json, from));
    g_string_replace (s, from, to, all ? 0 : 1);
  }
  g_assert_true (g_file_set_contents (path, s->str, s->len, NULL));
  g_string_free (s, TRUE);
  g_free (json);
  return dir;
}

static void
expect_error (const char *dir, gint code, const char *const *needles)
{
  GError *error = NULL;
  M2iSplitPlan *plan = m2i_split_plan_load (dir, &error);
  g_assert_null (plan);
  g_assert_nonnull (error);
  g_test_message ("%s", error->message);
  g_assert_true (error->domain == M2I_ERROR);
  g_assert_cmpint (error->code, ==, code);
  for (const char *const *n = needles; *n; n++)
    if (!strstr (error->message, *n))
      g_error ("error \"%s\" does not mention \"%s\"", error->message, *n);
  g_error_free (error);
}

/* Loads @dir, which must give a plan; removes it and frees @dir. */
static void
expect_loads (gchar *dir)
{
  GError *error = NULL;
  M2iSplitPlan *plan = m2i_split_plan_load (dir, &error);
  g_assert_no_error (error);
  m2i_split_plan_unref (plan);
  test_remove_dir (dir);
  g_free (dir);
}

/* Mutates, expects the error, cleans up. */
static void
bad (const char *from, const char *to, gboolean all, gint code, const char *n1, const char *n2)
{
  gchar *dir = mutated (from, to, all);
  const char *needles[] = { n1, n2, NULL };
  expect_error (dir, code, needles);
  test_remove_dir (dir);
  g_free (dir);
}

static void
test_valid (void)
{
  GError *error = NULL;
  M2iSplitPlan *plan = m2i_split_plan_load (valid_dir, &error);
  g_assert_no_error (error);
  g_assert_cmpint (m2i_split_plan_get_n_pieces (plan), ==, 2);
  m2i_split_plan_unref (plan);
  /* the same folder written by hand without m2i's additions ("engine",
   * "ops", "m2i_profile"): the engine is worked out from the sub-model */
  gchar *dir = mutated ("\"engine\" : \"npu-fp16\",", "", FALSE);
  plan = m2i_split_plan_load (dir, &error);
  g_assert_no_error (error);
  M2iSplitPieceInfo pi;
  m2i_split_plan_get_piece (plan, 0, &pi);
  g_assert_cmpint (pi.engine, ==, M2I_SPLIT_ENGINE_NPU_FP16);
  m2i_split_plan_unref (plan);
  test_remove_dir (dir);
  g_free (dir);
}

static void
test_files (void)
{
  const char *none[] = { NULL };
  expect_error ("/nonexistent/m2i-split", M2I_ERROR_IO, (const char *[]) { "is no folder", NULL });
  /* no graph_infos.json */
  gchar *dir = g_dir_make_tmp ("m2i-split-bad-XXXXXX", NULL);
  expect_error (dir, M2I_ERROR_IO, (const char *[]) { "no graph_infos.json", NULL });
  g_rmdir (dir);
  g_free (dir);
  (void) none;
  /* a graph's IR missing, or outside the folder */
  dir = mutated (NULL, NULL, FALSE);
  g_autofree gchar *xml = g_build_filename (dir, "graph_1.xml", NULL);
  g_unlink (xml);
  expect_error (dir, M2I_ERROR_IO, (const char *[]) { "graph 1", "graph_1.xml is missing", NULL });
  test_remove_dir (dir);
  g_free (dir);
  bad ("\"xml\" : \"graph_1.xml\"", "\"xml\" : \"../graph_1.xml\"", FALSE, M2I_ERROR_MALFORMED,
      "graph 1", "inside the folder");
  bad ("\"xml\" : \"graph_1.xml\"", "\"xml\" : \"/etc/passwd\"", FALSE, M2I_ERROR_MALFORMED,
      "graph 1", "inside the folder");
  /* an IR that does not parse */
  dir = mutated (NULL, NULL, FALSE);
  g_autofree gchar *xml0 = g_build_filename (dir, "graph_0.xml", NULL);
  g_assert_true (g_file_set_contents (xml0, "<net name=\"x\" version=\"11\"><layers>", -1, NULL));
  expect_error (dir, M2I_ERROR_MALFORMED, (const char *[]) { "graph 0", "graph_0.xml", NULL });
  test_remove_dir (dir);
  g_free (dir);
}

static void
test_json_syntax (void)
{
  bad ("\"graph_num\" : 2,", "\"graph_num\" : 2,,", FALSE, M2I_ERROR_MALFORMED, "graph_infos.json",
      NULL);
  bad ("{\n  \"graph_num\"", "[\n  \"graph_num\"", FALSE, M2I_ERROR_MALFORMED, "graph_infos.json", NULL);
  gchar *dir = mutated (NULL, NULL, FALSE);
  g_autofree gchar *path = g_build_filename (dir, "graph_infos.json", NULL);
  g_assert_true (g_file_set_contents (path, "[1, 2]", -1, NULL));
  expect_error (dir, M2I_ERROR_MALFORMED, (const char *[]) { "top level must be an object", NULL });
  test_remove_dir (dir);
  g_free (dir);
}

static void
test_fields (void)
{
  bad ("\"graph_num\" : 2", "\"graph_count\" : 2", FALSE, M2I_ERROR_MALFORMED, "\"graph_num\"",
      "integer");
  bad ("\"graph_num\" : 2", "\"graph_num\" : 3", FALSE, M2I_ERROR_MALFORMED, "graph_num is 3",
      "lists 2");
  bad ("\"graph_num\" : 2", "\"graph_num\" : \"2\"", FALSE, M2I_ERROR_MALFORMED, "graph_num", NULL);
  bad ("\"platform\" : \"openvino\"", "\"platform\" : \"tensorflow\"", FALSE, M2I_ERROR_UNSUPPORTED,
      "tensorflow", "openvino");
  bad ("\"dynamic\" : false", "\"dynamic\" : true", FALSE, M2I_ERROR_UNSUPPORTED, "dynamic", NULL);
  bad ("\"dynamic\" : false", "\"dynamic\" : 0", FALSE, M2I_ERROR_MALFORMED, "dynamic", NULL);
  bad ("\"layout\" : \"NCHW\"", "\"layout\" : \"NHWC\"", FALSE, M2I_ERROR_UNSUPPORTED, "NHWC", NULL);
  bad ("\"m2i_profile\" : \"default\"", "\"m2i_profile\" : \"turbo\"", FALSE, M2I_ERROR_MALFORMED,
      "turbo", NULL);
  bad ("\"model_info\"", "\"model\"", FALSE, M2I_ERROR_MALFORMED, "graph 0", "\"model_info\"");
  bad ("\"attr\" : \"intermediate\"", "\"attr\" : \"hidden\"", FALSE, M2I_ERROR_MALFORMED, "fc2",
      "\"hidden\"");
  bad ("\"dtype\" : \"f32\",\n      \"attr\" : \"intermediate\"",
      "\"dtype\" : \"q7\",\n      \"attr\" : \"intermediate\"", FALSE, M2I_ERROR_MALFORMED, "fc2", "q7");
}

static void
test_devices (void)
{
  bad ("\"device\" : \"M2I\"", "\"device\" : \"GPU\"", FALSE, M2I_ERROR_UNSUPPORTED, "graph 0",
      "unknown device \"GPU\"");
  bad ("\"engine\" : \"npu-fp16\"", "\"engine\" : \"tpu\"", FALSE, M2I_ERROR_UNSUPPORTED, "graph 0",
      "unknown engine \"tpu\"");
  bad ("\"engine\" : \"npu-fp16\"", "\"engine\" : \"cpu\"", FALSE, M2I_ERROR_MALFORMED, "graph 0",
      "does not run on device M2I");
  /* the engine cannot run the graph: SoftMax on the device, fp16 layers in int8 */
  bad ("\"device\" : \"CPU\",\n      \"engine\" : \"cpu\"", "\"device\" : \"M2I\"", FALSE,
      M2I_ERROR_UNSUPPORTED, "graph 1", "SoftMax");
  bad ("\"engine\" : \"npu-fp16\"", "\"engine\" : \"npu-int8\"", FALSE, M2I_ERROR_UNSUPPORTED,
      "graph 0", "not int8");
  bad ("\"engine\" : \"npu-fp16\"", "\"engine\" : \"m2i\"", FALSE, M2I_ERROR_UNSUPPORTED, "graph 0",
      "pre-processing head");
}

static void
test_tensors (void)
{
  /* a tensor listed twice in "tensors" */
  bad ("\"tensors\" : {", "\"tensors\" : {\n    \"fc2\" : { \"shape\" : [1, 10], \"dtype\" : \"f32\", "
      "\"attr\" : \"intermediate\" },", FALSE, M2I_ERROR_MALFORMED, "\"fc2\"", "twice");
  /* twice in one graph's list */
  bad ("\"outputs\" : [\n        \"fc2\"\n      ]", "\"outputs\" : [\n        \"fc2\", \"fc2\"\n      ]",
      FALSE, M2I_ERROR_MALFORMED, "graph 0", "'fc2' is listed twice");
  /* a graph names a tensor "tensors" does not list */
  bad ("\"inputs\" : [\n        \"fc2\"\n      ]", "\"inputs\" : [\n        \"logits\"\n      ]", FALSE,
      M2I_ERROR_MALFORMED, "graph 1", "'logits'");
  /* written by two graphs */
  bad ("\"outputs\" : [\n        \"prob\"\n      ]", "\"outputs\" : [\n        \"prob\", \"fc2\"\n      ]",
      FALSE, M2I_ERROR_MALFORMED, "'fc2'", "graph 0 and graph 1");
  /* a graph writes a model input */
  bad ("\"outputs\" : [\n        \"fc2\"\n      ]", "\"outputs\" : [\n        \"fc2\", \"input\"\n      ]",
      FALSE, M2I_ERROR_MALFORMED, "'input'", "model input");
  /* nobody writes it */
  bad ("\"outputs\" : [\n        \"fc2\"\n      ]", "\"outputs\" : [ ]", FALSE, M2I_ERROR_MALFORMED,
      "graph 0", "writes no tensor");
  bad ("\"tensors\" : {", "\"tensors\" : {\n    \"ghost\" : { \"shape\" : [1], \"dtype\" : \"f32\", "
      "\"attr\" : \"output\" },", FALSE, M2I_ERROR_MALFORMED, "'ghost'", "written by no graph");
  /* an intermediate nobody reads */
  bad ("\"inputs\" : [\n        \"fc2\"\n      ]", "\"inputs\" : [ ]", FALSE, M2I_ERROR_MALFORMED,
      "'fc2'", "read by no graph");
  /* shapes and types that do not match the IR */
  bad ("\"shape\" : [\n        1,\n        10\n      ],\n      \"dtype\" : \"f32\",\n      \"attr\" : "
      "\"intermediate\"", "\"shape\" : [1, 11],\n      \"dtype\" : \"f32\",\n      \"attr\" : "
      "\"intermediate\"", FALSE, M2I_ERROR_MALFORMED, "'fc2' has shape [1,10] in graph_", "[1,11]");
  bad ("\"dtype\" : \"f32\",\n      \"attr\" : \"intermediate\"",
      "\"dtype\" : \"f16\",\n      \"attr\" : \"intermediate\"", FALSE, M2I_ERROR_MALFORMED, "'fc2' is f32",
      "f16");
  bad ("\"shape\" : [\n        1,\n        10\n      ],\n      \"dtype\" : \"f32\",\n      \"attr\" : "
      "\"intermediate\"", "\"shape\" : [1, -10],\n      \"dtype\" : \"f32\",\n      \"attr\" : "
      "\"intermediate\"", FALSE, M2I_ERROR_MALFORMED, "fc2", "non-negative");
  bad ("\"attr\" : \"intermediate\"", "\"attr\" : \"intermediate\", \"quant\" : { \"scale\" : -1, "
      "\"zero_point\" : 0 }", FALSE, M2I_ERROR_MALFORMED, "fc2", "quant");
}

static void
test_order (void)
{
  /* graph 0 also reads what graph 1 writes: a cycle */
  bad ("\"inputs\" : [\n        \"input\"\n      ]", "\"inputs\" : [\n        \"input\", \"prob\"\n      ]",
      FALSE, M2I_ERROR_MALFORMED, "graphs 0 and 1", "cycle");
  /* a graph reading its own output */
  bad ("\"inputs\" : [\n        \"fc2\"\n      ]", "\"inputs\" : [\n        \"fc2\", \"prob\"\n      ]",
      FALSE, M2I_ERROR_MALFORMED, "graph 1", "its own output");
  /* the graphs swapped: the CPU graph first */
  gchar *dir = mutated (NULL, NULL, FALSE);
  g_autofree gchar *path = g_build_filename (dir, "graph_infos.json", NULL);
  gchar *json;
  g_assert_true (g_file_get_contents (path, &json, NULL, NULL));
  gchar *g0 = strstr (json, "    {\n      \"device\" : \"M2I\""), *g1 = strstr (json, "    {\n      \"device\" : \"CPU\"");
  gchar *end = strstr (g1, "\n  ],");
  g_assert_true (g0 && g1 && end && g0 < g1);
  GString *s = g_string_new_len (json, g0 - json);
  g_string_append_len (s, g1, end - g1);
  g_string_append (s, ",\n");
  g_string_append_len (s, g0, g1 - g0 - 2);       /* without ",\n" */
  g_string_append (s, end);
  g_assert_true (g_file_set_contents (path, s->str, s->len, NULL));
  expect_error (dir, M2I_ERROR_MALFORMED,
      (const char *[]) { "graph 0 needs the output of graph 1", "topological order", NULL });
  g_string_free (s, TRUE);
  g_free (json);
  test_remove_dir (dir);
  g_free (dir);
}

/* A member nested 100,000 arrays deep (a 200 KB file): json-glib's
 * recursive parser overflowed the stack (SIGSEGV) from ~80,000 levels. The
 * depth is refused before the parser sees the text; 64 levels still load. */
static void
test_deep_nesting (void)
{
  for (gint k = 0; k < 2; k++) {
    gint n = k ? 100000 : 63;              /* under the top-level object */
    GString *deep = g_string_new ("{\n  \"x\" : ");
    for (gint i = 0; i < n; i++)
      g_string_append_c (deep, '[');
    for (gint i = 0; i < n; i++)
      g_string_append_c (deep, ']');
    g_string_append (deep, ",\n  \"graph_num\"");
    gchar *dir = mutated ("{\n  \"graph_num\"", deep->str, FALSE);
    if (k) {
      expect_error (dir, M2I_ERROR_LIMIT,
          (const char *[]) { "graph_infos.json:2:", "nest more than 64 levels", NULL });
      test_remove_dir (dir);
      g_free (dir);
    } else
      expect_loads (dir);
    g_string_free (deep, TRUE);
  }
  /* brackets inside strings do not count */
  GString *s = g_string_new ("{\n  \"x\" : \"");
  for (gint i = 0; i < 1000; i++)
    g_string_append (s, "[{\\\"");
  g_string_append (s, "\",\n  \"graph_num\"");
  expect_loads (mutated ("{\n  \"graph_num\"", s->str, FALSE));
  g_string_free (s, TRUE);
}

/* Symbolic links in a plan folder are not followed: a link to / with a
 * piece named through it, a piece or its .bin linked to a model outside
 * the folder, graph_infos.json itself a link; a FIFO is refused, not
 * blocked on. Pieces in a real sub-folder still load. */
static void
test_symlinks (void)
{
  gchar *dir = mutated ("\"xml\" : \"graph_1.xml\"", "\"xml\" : \"root/etc/passwd\"", FALSE);
  g_autofree gchar *root = g_build_filename (dir, "root", NULL);
  g_assert_cmpint (symlink ("/", root), ==, 0);
  expect_error (dir, M2I_ERROR_IO, (const char *[]) { "graph 1", "/root is a symbolic link",
        "without following links", NULL });
  test_remove_dir (dir);
  g_free (dir);

  gchar *outside = g_dir_make_tmp ("m2i-split-outside-XXXXXX", NULL);
  copy_dir (valid_dir, outside);
  const char *const files[] = { "graph_1.xml", "graph_1.bin", "graph_infos.json" };
  for (guint k = 0; k < G_N_ELEMENTS (files); k++) {
    dir = mutated (NULL, NULL, FALSE);
    g_autofree gchar *link = g_build_filename (dir, files[k], NULL);
    g_autofree gchar *target = g_build_filename (outside, files[k], NULL);
    g_assert_cmpint (g_unlink (link), ==, 0);
    g_assert_cmpint (symlink (target, link), ==, 0);
    g_autofree gchar *says = g_strdup_printf ("%s is a symbolic link", files[k]);
    expect_error (dir, M2I_ERROR_IO, (const char *[]) { says, NULL });
    test_remove_dir (dir);
    g_free (dir);
  }
  test_remove_dir (outside);
  g_free (outside);

  dir = mutated (NULL, NULL, FALSE);
  g_autofree gchar *xml = g_build_filename (dir, "graph_1.xml", NULL);
  g_assert_cmpint (g_unlink (xml), ==, 0);
  g_assert_cmpint (mkfifo (xml, 0600), ==, 0);
  expect_error (dir, M2I_ERROR_IO, (const char *[]) { "graph_1.xml is not a regular file", NULL });
  test_remove_dir (dir);
  g_free (dir);

  dir = mutated ("\"xml\" : \"graph_1.xml\"", "\"xml\" : \"sub/graph_1.xml\"", FALSE);
  g_autofree gchar *sub = g_build_filename (dir, "sub", NULL);
  g_autofree gchar *moved = g_build_filename (sub, "graph_1.xml", NULL);
  g_autofree gchar *xml_here = g_build_filename (dir, "graph_1.xml", NULL);
  g_assert_cmpint (g_mkdir (sub, 0755), ==, 0);
  g_assert_cmpint (g_rename (xml_here, moved), ==, 0);
  expect_loads (dir);
}

/* The model's rt_info goes with one piece, the one writing output 0, in
 * memory and in the folder (every piece used to copy all of it: a deep
 * rt_info cost O(pieces × N³) bytes to write). */
static void
test_rt_info_once (void)
{
  g_autofree gchar *xml_path = test_models_path ("fashion-mnist/fashion-mnist.xml");
  g_autofree gchar *bin_path = test_models_path ("fashion-mnist/fashion-mnist.bin");
  gchar *text;
  g_assert_true (g_file_get_contents (xml_path, &text, NULL, NULL));
  GString *xml = g_string_new (text);
  g_free (text);
  g_string_replace (xml, "</net>", "<rt_info><model_info><model_type value=\"Classification\"/>"
      "</model_info></rt_info></net>", 1);
  GMappedFile *bin = g_mapped_file_new (bin_path, FALSE, NULL);
  GBytes *weights = g_mapped_file_get_bytes (bin);
  GError *error = NULL;
  M2iIrModel *m = m2i_ir_model_load_from_memory (xml->str, xml->len, weights, "fm.xml", &error);
  g_assert_no_error (error);
  M2iSplitPlan *plan = m2i_split_plan_new (m, NULL, &error);
  g_assert_no_error (error);
  gchar *dir = g_dir_make_tmp ("m2i-split-rt-XXXXXX", NULL);
  g_assert_true (m2i_split_plan_save (plan, dir, &error));
  M2iSplitPlan *back = m2i_split_plan_load (dir, &error);
  g_assert_no_error (error);
  M2iSplitTensorInfo out0;
  g_assert_true (m2i_split_plan_get_tensor (plan, m2i_split_plan_get_output (plan, 0), &out0));
  g_assert_cmpint (m2i_split_plan_get_n_pieces (plan), ==, 2);
  for (gint p = 0; p < 2; p++) {
    M2iSplitPieceInfo a, b;
    g_assert_true (m2i_split_plan_get_piece (plan, p, &a));
    g_assert_true (m2i_split_plan_get_piece (back, p, &b));
    const char *want = p == out0.producer ? "Classification" : NULL;
    g_assert_cmpstr (m2i_ir_model_get_rt_info (a.model, "model_info/model_type"), ==, want);
    g_assert_cmpstr (m2i_ir_model_get_rt_info (b.model, "model_info/model_type"), ==, want);
    g_autofree gchar *name = g_strdup_printf ("graph_%d.xml", p);
    g_autofree gchar *path = g_build_filename (dir, name, NULL);
    g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
    g_assert_cmpint (strstr (text, "<model_type value=\"Classification\"/>") != NULL, ==,
        want != NULL);
    g_free (text);
  }
  m2i_split_plan_unref (back);
  m2i_split_plan_unref (plan);
  m2i_ir_model_unref (m);
  test_remove_dir (dir);
  g_free (dir);
  g_bytes_unref (weights);
  g_mapped_file_unref (bin);
  g_string_free (xml, TRUE);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_autofree gchar *xml = test_models_path ("fashion-mnist/fashion-mnist.xml");
  GError *error = NULL;
  M2iIrModel *m = m2i_ir_model_load (xml, NULL, &error);
  g_assert_no_error (error);
  M2iSplitPlan *plan = m2i_split_plan_new (m, NULL, &error);
  g_assert_no_error (error);
  valid_dir = g_dir_make_tmp ("m2i-split-valid-XXXXXX", NULL);
  g_assert_true (m2i_split_plan_save (plan, valid_dir, &error));
  m2i_split_plan_unref (plan);
  m2i_ir_model_unref (m);
  g_test_add_func ("/split/json/valid", test_valid);
  g_test_add_func ("/split/json/files", test_files);
  g_test_add_func ("/split/json/syntax", test_json_syntax);
  g_test_add_func ("/split/json/fields", test_fields);
  g_test_add_func ("/split/json/devices", test_devices);
  g_test_add_func ("/split/json/tensors", test_tensors);
  g_test_add_func ("/split/json/order", test_order);
  g_test_add_func ("/split/json/deep-nesting", test_deep_nesting);
  g_test_add_func ("/split/json/symlinks", test_symlinks);
  g_test_add_func ("/split/json/rt-info-once", test_rt_info_once);
  int rc = g_test_run ();
  test_remove_dir (valid_dir);
  g_free (valid_dir);
  return rc;
}
