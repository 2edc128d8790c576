/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Hostile models (docs/reliability.md): what an attacker or a careless tool
 * writes into an IR file must give a clear error, or work, in bounded time
 * and memory — never a crash, an abort in g_malloc or undefined behaviour
 * (the ASan/UBSan run of this test checks the latter). Each case was a
 * defect of issue 14. */
#include "ir-test-util.h"
#include <base/m2i-error.h>
#include <ir/ir-compile.h>

#include <string.h>

/* test_ir_v10_model as v11 text, with @extra inserted before </net>. */
static GString *
model_with (const char *extra)
{
  TestIr *b = test_ir_new (11);
  M2iShape s = TEST_SHAPE (1, 4);
  gint x = test_ir_parameter (b, "x", M2I_ET_F32, &s);
  test_ir_result (b, test_ir_op (b, "ReLU", "opset1", NULL, 1, &x, M2I_ET_F32, &s));
  GString *xml = g_string_new (test_ir_xml (b));
  test_ir_free (b);
  g_string_replace (xml, "</net>", extra, 1);
  g_string_append (xml, "</net>\n");
  return xml;
}

/* Model-level rt_info nested @n levels, element k(i mod 10) holding value
 * v(i); *key receives the deepest element's key. */
static GString *
deep_rt_info (gint n, gchar **key)
{
  GString *rt = g_string_new ("<rt_info>");
  GString *k = g_string_new (NULL);
  for (gint i = 0; i < n; i++) {
    g_string_append_printf (rt, "<k%d value=\"v%d\">", i % 10, i);
    g_string_append_printf (k, "%sk%d", i ? "/" : "", i % 10);
  }
  for (gint i = n - 1; i >= 0; i--)
    g_string_append_printf (rt, "</k%d>", i % 10);
  g_string_append (rt, "</rt_info>\n");
  *key = g_string_free (k, FALSE);
  return rt;
}

/* A model-level rt_info nested 1500 levels (a 40 KB file) cost O(N²)
 * memory to read and O(N³) bytes to write (2.1 GB for a split). Now it is
 * kept as read: every level's value is found, and writing it back stays
 * linear in its size (the time and memory bounds: tests/bench/bench-hostile). */
static void
test_deep_rt_info (void)
{
  g_autofree gchar *key = NULL;
  GString *rt = deep_rt_info (1500, &key);
  GString *xml = model_with (rt->str);
  GError *error = NULL;
  M2iIrModel *m = m2i_ir_model_load_from_memory (xml->str, xml->len, NULL, "deep.xml", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (m2i_ir_model_get_rt_info (m, key), ==, "v1499");
  g_assert_cmpstr (m2i_ir_model_get_rt_info (m, "k0"), ==, "v0");
  g_assert_cmpstr (m2i_ir_model_get_rt_info (m, "k0/k1/k2"), ==, "v2");
  g_assert_null (m2i_ir_model_get_rt_info (m, "k0/k2"));
  g_assert_null (m2i_ir_model_get_rt_info (m, "k1"));
  GString *text = g_string_new (NULL);
  GByteArray *bin = g_byte_array_new ();
  g_assert_true (m2i_ir_model_serialize (m, text, bin, &error));
  g_test_message ("rt_info of %" G_GSIZE_FORMAT " bytes, model written in %" G_GSIZE_FORMAT,
      rt->len, text->len);
  g_assert_cmpuint (text->len, <, 4 * rt->len + 4096);
  M2iIrModel *back = m2i_ir_model_load_from_memory (text->str, text->len, NULL, "back.xml", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (m2i_ir_model_get_rt_info (back, key), ==, "v1499");
  m2i_ir_model_unref (back);
  g_string_free (text, TRUE);
  g_byte_array_unref (bin);
  m2i_ir_model_unref (m);
  g_string_free (xml, TRUE);
  g_string_free (rt, TRUE);

  /* the keys as before: <attribute name=..> spells the last component,
   * the last of equal keys wins, v10's meta_data keeps its prefix */
  xml = model_with ("<rt_info><a><attribute name=\"x/y\" value=\"1\"/><b value=\"2\"/></a>"
      "<a><b value=\"3\"/></a><c value=\"4\"><attribute value=\"5\"/></c></rt_info>\n");
  m = m2i_ir_model_load_from_memory (xml->str, xml->len, NULL, "keys.xml", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (m2i_ir_model_get_rt_info (m, "a/x/y"), ==, "1");
  g_assert_cmpstr (m2i_ir_model_get_rt_info (m, "a/b"), ==, "3");
  g_assert_cmpstr (m2i_ir_model_get_rt_info (m, "c"), ==, "4");
  g_assert_cmpstr (m2i_ir_model_get_rt_info (m, "c/attribute"), ==, "5");
  g_assert_null (m2i_ir_model_get_rt_info (m, "a"));
  g_assert_null (m2i_ir_model_get_rt_info (m, "a/x"));
  m2i_ir_model_unref (m);
  g_string_free (xml, TRUE);
}

/* Elements nested 100,000 deep: refused at 4096 levels, with the line;
 * 4000 levels of rt_info still load. */
static void
test_deep_xml (void)
{
  GString *deep = g_string_new (NULL);
  for (gint i = 0; i < 100000; i++)
    g_string_append (deep, "<a>");
  for (gint i = 0; i < 100000; i++)
    g_string_append (deep, "</a>");
  g_string_append_c (deep, '\n');
  GString *xml = model_with (deep->str);
  GError *error = NULL;
  g_assert_null (m2i_ir_model_load_from_memory (xml->str, xml->len, NULL, "deep.xml", &error));
  g_assert_error (error, M2I_ERROR, M2I_ERROR_LIMIT);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, "deep.xml:"));
  g_assert_nonnull (strstr (error->message, "nest more than 4096 levels"));
  g_clear_error (&error);
  g_string_free (xml, TRUE);
  g_string_free (deep, TRUE);

  g_autofree gchar *key = NULL;
  GString *rt = deep_rt_info (4000, &key);
  xml = model_with (rt->str);
  M2iIrModel *m = m2i_ir_model_load_from_memory (xml->str, xml->len, NULL, "deep.xml", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (m2i_ir_model_get_rt_info (m, key), ==, "v3999");
  m2i_ir_model_unref (m);
  g_string_free (xml, TRUE);
  g_string_free (rt, TRUE);
}

/* Checks a memory plan the slow way: every pair of groups alive at a
 * common step is disjoint in the arena, every group inside it; returns the
 * largest sum of sizes alive at one step (a lower bound of any plan). */
static gsize
check_plan (const CmGroup *g, gint n, gsize arena, gsize align)
{
  gsize most = 0;
  for (gint i = 0; i < n; i++) {
    if (g[i].first < -1 || !g[i].size)
      continue;
    g_assert_cmpuint (g[i].offset % align, ==, 0);
    g_assert_cmpuint (g[i].offset + g[i].size, <=, arena);
    gsize alive = 0;                 /* at step g[i].first */
    for (gint j = 0; j < n; j++) {
      if (g[j].first < -1 || !g[j].size)
        continue;
      if (g[j].first <= g[i].first && g[i].first <= g[j].last)
        alive += g[j].size;
      if (j == i || g[i].last < g[j].first || g[j].last < g[i].first)
        continue;
      if (g[i].offset < g[j].offset + g[j].size && g[j].offset < g[i].offset + g[i].size)
        g_error ("groups %d [%d,%d] and %d [%d,%d] overlap in the arena", i, g[i].first,
            g[i].last, j, g[j].first, g[j].last);
    }
    most = MAX (most, alive);
  }
  return most;
}

/* The memory planner was O(n²) (a 40,000-layer chain compiled in 26 s;
 * the bounds are measured by tests/stress/slow-bounds). Whatever it does
 * now, its plans must be valid: random lifetimes and sizes (its greedy
 * placement), groups merged away, and 3000 groups alive at once (too many
 * pairs for the greedy placement: the sweep alone, which then needs
 * exactly their sum). */
static void
test_memplan (void)
{
  GRand *rand = g_rand_new_with_seed (14);
  for (gint trial = 0; trial < 40; trial++) {
    gint n = g_rand_int_range (rand, 1, 400), steps = g_rand_int_range (rand, 1, 60);
    CmGroup *g = g_new0 (CmGroup, n);
    for (gint i = 0; i < n; i++) {
      gint a = g_rand_int_range (rand, -1, steps + 1), b = g_rand_int_range (rand, -1, steps + 1);
      g[i] = (CmGroup) { g_rand_int_range (rand, 0, 3) ? g_rand_int_range (rand, 1, 5000) : 0, 7,
        MIN (a, b), MAX (a, b) };
      if (!g_rand_int_range (rand, 0, 10))
        g[i] = (CmGroup) { 0, 0, -2, -2 };      /* merged into another */
    }
    gsize arena = base_arena_place (g, n, 64);
    gsize most = check_plan (g, n, arena, 64);
    g_assert_cmpuint (arena, >=, most);
    g_free (g);
  }
  g_rand_free (rand);

  gint n = 3000;
  CmGroup *g = g_new0 (CmGroup, n);
  gsize sum = 0;
  for (gint i = 0; i < n; i++) {
    g[i] = (CmGroup) { 64 * (1 + i % 7), 0, -1, n };
    sum += g[i].size;
  }
  gsize arena = base_arena_place (g, n, 64);
  check_plan (g, n, arena, 64);
  g_assert_cmpuint (arena, ==, sum);
  g_free (g);
}

/* Compiles @b's model and expects an error of @code whose message holds
 * @needle. */
static void
expect_compile_error (TestIr *b, gint code, const char *needle)
{
  GError *error = NULL;
  M2iIrModel *m = test_ir_load (b, &error);
  g_assert_no_error (error);
  g_assert_null (m2i_ir_compile (m, NULL, &error));
  g_assert_nonnull (error);
  g_test_message ("%s", error->message);
  g_assert_error (error, M2I_ERROR, code);
  if (!strstr (error->message, needle))
    g_error ("\"%s\" does not say \"%s\"", error->message, needle);
  g_clear_error (&error);
  m2i_ir_model_unref (m);
}

/* Interpolate with sizes, scales and pads from the file at the ends of
 * their types: clear errors, no float-to-integer overflow, and no table
 * sized on an output the XML does not declare (a 2^31-row table was
 * allocated before the shape was compared). */
static void
test_interpolate_sizes (void)
{
  M2iShape s4 = TEST_SHAPE (1, 1, 4, 4), s2 = TEST_SHAPE (2), out = TEST_SHAPE (1, 1, 1, 4);
  static const gint64 axes[2] = { 2, 3 };
  static const gint64 huge_sizes[2] = { G_MAXINT32, 4 }, sizes[2] = { 1, 4 };
  static const float huge_scales[2] = { 1e30f, 1.0f }, scales[2] = { 0.25f, 1.0f };
  const struct {
    const gint64 *sizes;
    const float *scales;
    const char *pads;
    gint code;
    const char *needle;
  } cases[] = {
    { huge_sizes, scales, "0", M2I_ERROR_MALFORMED, "declares [1,1,1,4] but the op computes [1,1,2147483647,4]" },
    { sizes, huge_scales, "0", M2I_ERROR_INVALID_ARGUMENT, "cannot resize 4 (with pads) to -1" },
    { sizes, scales, "0,0,4611686018427387904,0", M2I_ERROR_INVALID_ARGUMENT, "out of [0, 2^31)" },
  };
  for (guint k = 0; k < G_N_ELEMENTS (cases); k++) {
    TestIr *b = test_ir_new (11);
    gint in[4] = { test_ir_parameter (b, "x", M2I_ET_F32, &s4),
      test_ir_const (b, M2I_ET_I64, &s2, cases[k].sizes),
      test_ir_const (b, M2I_ET_F32, &s2, cases[k].scales),
      test_ir_const (b, M2I_ET_I64, &s2, axes) };
    gboolean by_scales = cases[k].scales == huge_scales;
    g_autofree gchar *attrs = g_strdup_printf ("mode=\"linear_onnx\" shape_calculation_mode=\"%s\" "
        "pads_begin=\"%s\" pads_end=\"0\" antialias=\"true\"", by_scales ? "scales" : "sizes",
        cases[k].pads);
    test_ir_result (b, test_ir_op (b, "Interpolate", "opset4", attrs, 4, in, M2I_ET_F32, &out));
    expect_compile_error (b, cases[k].code, cases[k].needle);
    test_ir_free (b);
  }
}

/* A model whose declared tensors need more than the memory limit is
 * refused before anything that large is allocated (it used to abort in
 * g_malloc): a declared 8 GiB input (default 4 GiB limit), buffers of one
 * inference over a smaller limit, a constant folded over it. Under the
 * limit the same models compile. */
static void
test_memory_limit (void)
{
  TestIr *b = test_ir_new (11);
  M2iShape big = TEST_SHAPE ((gint64) 1 << 31);
  gint x = test_ir_parameter (b, "x", M2I_ET_F32, &big);
  test_ir_result (b, test_ir_op (b, "ReLU", "opset1", NULL, 1, &x, M2I_ET_F32, &big));
  expect_compile_error (b, M2I_ERROR_LIMIT, "output 0 (f32 [2147483648]) needs 8.0 GiB, more "
      "than the memory limit of 4.0 GiB");
  test_ir_free (b);

  /* input and two values of 400 KiB (the Add writes over the SoftMax's
   * output: 800 KiB) against 700 KiB */
  b = test_ir_new (11);
  M2iShape s = TEST_SHAPE (100, 1024);
  x = test_ir_parameter (b, "x", M2I_ET_F32, &s);
  gint y = test_ir_op (b, "SoftMax", "opset1", "axis=\"1\"", 1, &x, M2I_ET_F32, &s);
  gint in[2] = { x, y };
  test_ir_result (b, test_ir_op (b, "Add", "opset1", NULL, 2, in, M2I_ET_F32, &s));
  GError *error = NULL;
  M2iIrModel *m = test_ir_load (b, &error);
  g_assert_no_error (error);
  M2iIrCompileOptions opts = { .n_threads = 1, .max_memory = 700 << 10 };
  g_assert_null (m2i_ir_compile (m, &opts, &error));
  g_assert_error (error, M2I_ERROR, M2I_ERROR_LIMIT);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, "an inference needs 800.0 KiB of buffers"));
  g_assert_nonnull (strstr (error->message, "more than the memory limit of 700.0 KiB"));
  g_clear_error (&error);
  opts.max_memory = (800 << 10) + 64;          /* and 64 bytes of scratch */
  M2iIrCompiledModel *cm = m2i_ir_compile (m, &opts, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (m2i_ir_compiled_model_get_request_bytes (cm), ==, opts.max_memory);
  m2i_ir_compiled_model_unref (cm);
  m2i_ir_model_unref (m);
  test_ir_free (b);

  /* a constant sub-graph folded at compile time: 2 × 400 KiB of constants */
  b = test_ir_new (11);
  g_autofree float *ones = g_new0 (float, 100 * 1024);
  gint c = test_ir_const (b, M2I_ET_F32, &s, ones);
  gint e = test_ir_op (b, "Exp", "opset1", NULL, 1, &c, M2I_ET_F32, &s);
  gint f = test_ir_op (b, "Exp", "opset1", NULL, 1, &e, M2I_ET_F32, &s);
  x = test_ir_parameter (b, "x", M2I_ET_F32, &s);
  gint sum[2] = { x, f };
  test_ir_result (b, test_ir_op (b, "Add", "opset1", NULL, 2, sum, M2I_ET_F32, &s));
  m = test_ir_load (b, &error);
  g_assert_no_error (error);
  opts.max_memory = 600 << 10;
  g_assert_null (m2i_ir_compile (m, &opts, &error));
  g_assert_error (error, M2I_ERROR, M2I_ERROR_LIMIT);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, "computing this constant at compile time needs "
        "400.0 KiB besides the 400.0 KiB"));
  g_clear_error (&error);
  m2i_ir_model_unref (m);
  test_ir_free (b);
}

/* A tensor with a zero dim is empty, but its other dims still make its
 * strides: [0, 2^62, 4] overflowed a Transpose's strides. Its dims must
 * address at most 1 TiB, as a tensor's bytes must. */
static void
test_empty_huge_dims (void)
{
  TestIr *b = test_ir_new (11);
  M2iShape s = TEST_SHAPE (0, (gint64) 1 << 62, 4), t = TEST_SHAPE (4, (gint64) 1 << 62, 0),
      two = TEST_SHAPE (3);
  static const gint64 perm[3] = { 2, 1, 0 };
  gint in[2] = { test_ir_parameter (b, "x", M2I_ET_F32, &s),
    test_ir_const (b, M2I_ET_I64, &two, perm) };
  test_ir_result (b, test_ir_op (b, "Transpose", "opset1", NULL, 2, in, M2I_ET_F32, &t));
  expect_compile_error (b, M2I_ERROR_UNSUPPORTED, "output 0 (f32 [0,4611686018427387904,4]) "
      "is larger than the 1 TiB a tensor may take");
  test_ir_free (b);

  /* Tile: an empty [0, 2^18, 2^18] tiled 2^24 × 2^24 times (a declared
   * output that large is refused before any kernel runs: here the file
   * declares a small one, so Tile's own check speaks) */
  b = test_ir_new (11);
  M2iShape e = TEST_SHAPE (0, 1 << 18, 1 << 18), three = TEST_SHAPE (3),
      big = TEST_SHAPE (0, 1, 1);
  static const gint64 reps[3] = { 1, 1 << 24, 1 << 24 };
  gint tin[2] = { test_ir_parameter (b, "x", M2I_ET_F32, &e),
    test_ir_const (b, M2I_ET_I64, &three, reps) };
  test_ir_result (b, test_ir_op (b, "Tile", "opset1", NULL, 2, tin, M2I_ET_F32, &big));
  expect_compile_error (b, M2I_ERROR_INVALID_ARGUMENT, "more elements than can be counted");
  test_ir_free (b);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ir/hostile/deep-rt-info", test_deep_rt_info);
  g_test_add_func ("/ir/hostile/deep-xml", test_deep_xml);
  g_test_add_func ("/ir/hostile/memplan", test_memplan);
  g_test_add_func ("/ir/hostile/interpolate-sizes", test_interpolate_sizes);
  g_test_add_func ("/ir/hostile/memory-limit", test_memory_limit);
  g_test_add_func ("/ir/hostile/empty-huge-dims", test_empty_huge_dims);
  return g_test_run ();
}
