/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Writing models: a round trip keeps the graph (ids, ports, names,
 * attributes, rt_info, constants) and the results; sub-graphs extracted
 * and chained compute what the whole model computes, a Const shared across
 * the cut copied into both. */
#include "ir-test-util.h"
#include <base/m2i-error.h>

#include <glib/gstdio.h>
#include <string.h>

static M2iIrModel *
reload (M2iIrModel *m)
{
  GString *xml = g_string_new (NULL);
  GByteArray *bin = g_byte_array_new ();
  GError *error = NULL;
  g_assert_true (m2i_ir_model_serialize (m, xml, bin, &error));
  GBytes *w = g_byte_array_free_to_bytes (bin);
  M2iIrModel *back = m2i_ir_model_load_from_memory (xml->str, xml->len, w, "round-trip.xml", &error);
  if (!back)
    g_error ("%s\n%s", error->message, xml->str);
  g_bytes_unref (w);
  g_string_free (xml, TRUE);
  return back;
}

/* Runs @m on one f32 input filled with i * @scale; returns output 0's data. */
static gpointer
run_once (M2iIrModel *m, const float *const *inputs)
{
  GError *error = NULL;
  M2iIrCompiledModel *cm = m2i_ir_compile (m, NULL, &error);
  g_assert_no_error (error);
  M2iIrInferRequest *req = m2i_ir_infer_request_new (cm, &error);
  for (gint i = 0; i < m2i_ir_model_get_n_inputs (m); i++) {
    M2iTensor *in = m2i_ir_infer_request_get_input (req, i);
    memcpy (in->data, inputs[i], m2i_tensor_nbytes (in));
  }
  g_assert_true (m2i_ir_infer_request_infer (req, &error));
  const M2iTensor *o = m2i_ir_infer_request_get_output (req, 0);
  gpointer copy = g_memdup2 (o->data, m2i_tensor_nbytes (o));
  m2i_ir_infer_request_free (req);
  m2i_ir_compiled_model_unref (cm);
  return copy;
}

/* x(f32 2x3) → A: Transpose → B: Convert i32 → C: Convert f32 → D: Concat(C, T(x)) → Result,
 * with rt_info on a layer and f16 weights in the Concat's second operand path. */
static M2iIrModel *
chain_model (TestIr **builder)
{
  TestIr *b = test_ir_new (11);
  M2iShape s23 = TEST_SHAPE (2, 3), s32 = TEST_SHAPE (3, 2), s34 = TEST_SHAPE (3, 4);
  gint x = test_ir_parameter (b, "x", M2I_ET_F32, &s23);
  gint64 perm[2] = { 1, 0 };
  gint tin[2] = { x, test_ir_const (b, M2I_ET_I64, &TEST_SHAPE (2), perm) };
  gint a = test_ir_op (b, "Transpose", "opset1", NULL, 2, tin, M2I_ET_F32, &s32);
  gint bb = test_ir_op (b, "Convert", "opset1", "destination_type=\"i32\"", 1, &a, M2I_ET_I32, &s32);
  gint c = test_ir_op (b, "Convert", "opset1", "destination_type=\"f32\"", 1, &bb, M2I_ET_F32, &s32);
  guint16 half[6] = { 0x3c00, 0x4000, 0x4200, 0x4400, 0x4500, 0x4600 };   /* 1..6 */
  gint w = test_ir_const (b, M2I_ET_F16, &s32, half);
  gint cat_in[2] = { c, w };
  gint d = test_ir_op (b, "Concat", "opset1", "axis=\"1\"", 2, cat_in, M2I_ET_F32, &s34);
  test_ir_result (b, d);
  GError *error = NULL;
  /* a layer rt_info and a model rt_info to carry over */
  GString *xml = g_string_new (test_ir_xml (b));
  g_string_replace (xml, "<data axis=\"1\"/>",
      "<data axis=\"1\"/>\n      <rt_info><attribute name=\"affinity\" version=\"0\" value=\"CPU\"/></rt_info>", 1);
  g_string_replace (xml, "</edges>\n", "</edges>\n  <rt_info><conversion_parameters><framework value=\"test\"/>"
      "</conversion_parameters><attribute name=\"not a &lt;name&gt;\" value=\"a&amp;b\"/></rt_info>\n", 1);
  M2iIrModel *m = m2i_ir_model_load_from_memory (xml->str, xml->len, test_ir_weights (b), "chain.xml", &error);
  g_assert_no_error (error);
  g_string_free (xml, TRUE);
  *builder = b;
  return m;
}

static void
test_round_trip (void)
{
  TestIr *b;
  M2iIrModel *m = chain_model (&b);
  M2iIrModel *back = reload (m);
  g_assert_cmpint (m2i_ir_model_get_ir_version (back), ==, 11);
  g_assert_cmpint (m2i_ir_model_get_n_nodes (back), ==, m2i_ir_model_get_n_nodes (m));
  g_assert_cmpint (m2i_ir_model_get_n_edges (back), ==, m2i_ir_model_get_n_edges (m));
  for (gint i = 0; i < m2i_ir_model_get_n_nodes (m); i++) {
    M2iIrNode *n = m2i_ir_model_get_node (m, i);
    M2iIrNode *k = m2i_ir_model_find_node (back, m2i_ir_node_get_id (n));
    g_assert_nonnull (k);
    g_assert_cmpstr (m2i_ir_node_get_name (k), ==, m2i_ir_node_get_name (n));
    g_assert_cmpstr (m2i_ir_node_get_type (k), ==, m2i_ir_node_get_type (n));
    g_assert_cmpstr (m2i_ir_node_get_version (k), ==, m2i_ir_node_get_version (n));
    g_assert_cmpint (m2i_ir_node_get_n_inputs (k), ==, m2i_ir_node_get_n_inputs (n));
    for (gint p = 0; p < m2i_ir_node_get_n_inputs (n); p++) {
      M2iIrNode *s1, *s2;
      gint p1, p2;
      g_assert_true (m2i_ir_node_get_input_source (n, p, &s1, &p1));
      g_assert_true (m2i_ir_node_get_input_source (k, p, &s2, &p2));
      g_assert_cmpint (m2i_ir_node_get_id (s1), ==, m2i_ir_node_get_id (s2));
      g_assert_cmpint (p1, ==, p2);
    }
    for (gint p = 0; p < m2i_ir_node_get_n_outputs (n); p++) {
      g_assert_true (m2i_shape_equal (m2i_ir_node_get_output_shape (k, p), m2i_ir_node_get_output_shape (n, p)));
      g_assert_cmpint (m2i_ir_node_get_output_type (k, p), ==, m2i_ir_node_get_output_type (n, p));
      g_assert_cmpstr (m2i_ir_node_get_output_names (k, p), ==, m2i_ir_node_get_output_names (n, p));
    }
    const M2iTensor *c1 = m2i_ir_node_get_const (n), *c2 = m2i_ir_node_get_const (k);
    if (c1) {
      g_assert_cmpint (c1->type, ==, c2->type);
      g_assert_cmpmem (c1->data, m2i_tensor_nbytes (c1), c2->data, m2i_tensor_nbytes (c2));
    }
    g_assert_cmpstr (m2i_ir_node_get_attr (k, "axis"), ==, m2i_ir_node_get_attr (n, "axis"));
    g_assert_cmpstr (m2i_ir_node_get_rt_info (k, "affinity"), ==, m2i_ir_node_get_rt_info (n, "affinity"));
  }
  g_assert_cmpstr (m2i_ir_node_get_rt_info (m2i_ir_model_find_node (back, 6), "affinity"), ==, "CPU");
  g_assert_cmpstr (m2i_ir_model_get_rt_info (back, "conversion_parameters/framework"), ==, "test");
  g_assert_cmpstr (m2i_ir_model_get_rt_info (m, "not a <name>"), ==, "a&b");
  g_assert_cmpstr (m2i_ir_model_get_rt_info (back, "not a <name>"), ==, "a&b");
  /* the f16 constant is written as f16 again */
  g_assert_cmpint (m2i_ir_node_get_output_type (m2i_ir_model_find_node (back, 5), 0), ==, M2I_ET_F16);

  const float x[6] = { 1.5f, -2.5f, 3, 4.75f, 5, -6 };
  const float *inputs[1] = { x };
  g_autofree float *o1 = run_once (m, inputs);
  g_autofree float *o2 = run_once (back, inputs);
  /* [trunc(xᵀ) | 1..6] */
  const float expect[12] = { 1, 4, 1, 2, -2, 5, 3, 4, 3, -6, 5, 6 };
  g_assert_cmpmem (o1, sizeof expect, expect, sizeof expect);
  g_assert_cmpmem (o2, sizeof expect, expect, sizeof expect);

  /* and through files */
  g_autofree gchar *dir = g_dir_make_tmp ("m2i-ser-XXXXXX", NULL);
  g_autofree gchar *xp = g_build_filename (dir, "m.xml", NULL);
  g_autofree gchar *bp = g_build_filename (dir, "m.bin", NULL);
  GError *error = NULL;
  g_assert_true (m2i_ir_model_save (back, xp, bp, &error));
  M2iIrModel *again = m2i_ir_model_load (xp, NULL, &error);
  g_assert_no_error (error);
  g_autofree float *o3 = run_once (again, inputs);
  g_assert_cmpmem (o3, sizeof expect, expect, sizeof expect);
  m2i_ir_model_unref (again);
  g_assert_false (m2i_ir_model_save (back, "/nonexistent/dir/m.xml", bp, &error));
  g_assert_error (error, M2I_ERROR, M2I_ERROR_IO);
  g_clear_error (&error);
  g_unlink (xp);
  g_unlink (bp);
  g_rmdir (dir);
  m2i_ir_model_unref (back);
  m2i_ir_model_unref (m);
  test_ir_free (b);
}

/* The model cut in two (Transpose | Convert, Convert, Concat), the pieces
 * run one after the other, equals the whole. */
static void
test_extract (void)
{
  TestIr *b;
  M2iIrModel *m = chain_model (&b);
  GError *error = NULL;
  gint first[] = { 0, 2 };                   /* x, Transpose (its Const comes along) */
  gint second[] = { 3, 4, 6, 7 };            /* Convert, Convert, Concat, Result */
  M2iIrModel *p1 = m2i_ir_model_extract (m, first, G_N_ELEMENTS (first), NULL, 0, "part1", &error);
  g_assert_no_error (error);
  M2iIrModel *p2 = m2i_ir_model_extract (m, second, G_N_ELEMENTS (second), NULL, 0, "part2", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (m2i_ir_model_get_name (p1), ==, "part1");
  g_assert_cmpint (m2i_ir_model_get_n_inputs (p1), ==, 1);
  g_assert_cmpint (m2i_ir_model_get_n_outputs (p1), ==, 1);
  g_assert_cmpstr (m2i_ir_model_get_output (p1, 0)->name, ==, "t2");      /* the Transpose's tensor */
  g_assert_cmpint (m2i_ir_model_get_n_inputs (p2), ==, 1);
  g_assert_cmpstr (m2i_ir_model_get_input (p2, 0)->name, ==, "t2");
  g_assert_true (m2i_shape_equal (&m2i_ir_model_get_input (p2, 0)->shape, &TEST_SHAPE (3, 2)));
  g_assert_nonnull (m2i_ir_node_get_const (m2i_ir_model_find_node (p2, 5)));   /* f16 weights came along */

  const float x[6] = { 1.5f, -2.5f, 3, 4.75f, 5, -6 };
  const float *in1[1] = { x };
  g_autofree float *whole = run_once (m, in1);
  g_autofree float *mid = run_once (p1, in1);
  const float *in2[1] = { mid };
  g_autofree float *chained = run_once (p2, in2);
  g_assert_cmpmem (chained, 48, whole, 48);

  gint bad[] = { 99 };
  g_assert_null (m2i_ir_model_extract (m, bad, 1, NULL, 0, NULL, &error));
  g_assert_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  m2i_ir_model_unref (p1);
  m2i_ir_model_unref (p2);
  m2i_ir_model_unref (m);
  test_ir_free (b);
}

static gint
index_of (M2iIrModel *m, gint id)
{
  return m2i_ir_node_get_index (m2i_ir_model_find_node (m, id));
}

/* A Const read on both sides of a cut is copied into each sub-model, not
 * passed between them: x → A = Add(x, k) → B = Multiply(A, k) → Result,
 * cut after A. Part 1 has one output (A), part 2 one input (A) and its own
 * k; chained they compute (x + k)·k. With @outputs listed, exactly those
 * leave (and a Const selected explicitly still does not). */
static void
test_extract_shared_const (void)
{
  TestIr *b = test_ir_new (11);
  M2iShape s23 = TEST_SHAPE (2, 3);
  const float kv[6] = { 1, -2, 3, 0.5f, 10, -1 };
  gint x = test_ir_parameter (b, "x", M2I_ET_F32, &s23);
  gint k = test_ir_const (b, M2I_ET_F32, &s23, kv);
  gint ain[2] = { x, k };
  gint a = test_ir_op (b, "Add", "opset1", NULL, 2, ain, M2I_ET_F32, &s23);
  gint min[2] = { a, k };
  gint mul = test_ir_op (b, "Multiply", "opset1", NULL, 2, min, M2I_ET_F32, &s23);
  gint res = test_ir_result (b, mul);
  GError *error = NULL;
  M2iIrModel *m = test_ir_load (b, &error);
  g_assert_no_error (error);
  gint first[] = { index_of (m, x), index_of (m, a) };
  gint first_k[] = { index_of (m, x), index_of (m, a), index_of (m, k) };
  gint second[] = { index_of (m, mul), index_of (m, res) };
  M2iIrModel *p1 = m2i_ir_model_extract (m, first, 2, NULL, 0, "p1", &error);
  g_assert_no_error (error);
  M2iIrModel *p2 = m2i_ir_model_extract (m, second, 2, NULL, 0, "p2", &error);
  g_assert_no_error (error);
  g_assert_cmpint (m2i_ir_model_get_n_outputs (p1), ==, 1);
  g_assert_cmpint (m2i_ir_model_get_n_inputs (p2), ==, 1);
  g_assert_nonnull (m2i_ir_node_get_const (m2i_ir_model_find_node (p1, k)));
  g_assert_nonnull (m2i_ir_node_get_const (m2i_ir_model_find_node (p2, k)));
  const float xv[6] = { 2, 2, -1, 4, 0, 7 };
  const float *in1[1] = { xv };
  g_autofree float *mid = run_once (p1, in1);
  const float *in2[1] = { mid };
  g_autofree float *chained = run_once (p2, in2);
  g_autofree float *whole = run_once (m, in1);
  for (gint i = 0; i < 6; i++) {
    g_assert_cmpfloat (mid[i], ==, xv[i] + kv[i]);
    g_assert_cmpfloat (chained[i], ==, (xv[i] + kv[i]) * kv[i]);
    g_assert_cmpfloat (whole[i], ==, chained[i]);
  }
  /* the Const selected explicitly: still no Result of its own */
  M2iIrModel *p1k = m2i_ir_model_extract (m, first_k, 3, NULL, 0, "p1k", &error);
  g_assert_no_error (error);
  g_assert_cmpint (m2i_ir_model_get_n_outputs (p1k), ==, 1);
  /* listed outputs: exactly those */
  gint outs[] = { index_of (m, a), 0 };
  M2iIrModel *p1o = m2i_ir_model_extract (m, first, 2, outs, 1, "p1o", &error);
  g_assert_no_error (error);
  g_assert_cmpint (m2i_ir_model_get_n_outputs (p1o), ==, 1);
  g_assert_cmpstr (m2i_ir_model_get_output (p1o, 0)->name, ==, m2i_ir_model_get_output (p1, 0)->name);
  gint not_selected[] = { index_of (m, mul), 0 }, bad_port[] = { index_of (m, a), 3 };
  g_assert_null (m2i_ir_model_extract (m, first, 2, not_selected, 1, NULL, &error));
  g_assert_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_null (m2i_ir_model_extract (m, first, 2, bad_port, 1, NULL, &error));
  g_assert_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  m2i_ir_model_unref (p1);
  m2i_ir_model_unref (p2);
  m2i_ir_model_unref (p1k);
  m2i_ir_model_unref (p1o);
  m2i_ir_model_unref (m);
  test_ir_free (b);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ir/serialize/round-trip", test_round_trip);
  g_test_add_func ("/ir/serialize/extract", test_extract);
  g_test_add_func ("/ir/serialize/extract-shared-const", test_extract_shared_const);
  return g_test_run ();
}
