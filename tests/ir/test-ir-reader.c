/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The reader: IR v10 and v11, port ids mapped to ordinals, names, rt_info,
 * both shape spellings, every element type, the model walking API. */
#include "ir-test-util.h"
#include <base/m2i-error.h>
#include <base/m2i-fp16.h>

#include <string.h>

/* v11: tensor names on ports, a scalar Const (shape ""), model rt_info. */
static const char v11_model[] =
  "<?xml version=\"1.0\"?>\n"
  "<net name=\"demo11\" version=\"11\">\n"
  "  <layers>\n"
  "    <layer id=\"0\" name=\"in\" type=\"Parameter\" version=\"opset1\">\n"
  "      <data shape=\"2,2\" element_type=\"i32\"/>\n"
  "      <output><port id=\"0\" precision=\"I32\" names=\"input_t, alias_in\">\n"
  "        <dim>2</dim><dim>2</dim>\n"
  "        <rt_info><attribute name=\"layout\" version=\"0\" layout=\"[N,C]\" value=\"NC\"/></rt_info>\n"
  "      </port></output>\n"
  "    </layer>\n"
  "    <layer id=\"1\" name=\"axes\" type=\"Const\" version=\"opset1\">\n"
  "      <data element_type=\"i64\" shape=\"\" offset=\"0\" size=\"8\"/>\n"
  "      <output><port id=\"0\" precision=\"I64\"/></output>\n"
  "    </layer>\n"
  "    <layer id=\"2\" name=\"unsq\" type=\"Unsqueeze\" version=\"opset1\">\n"
  "      <input>\n"
  "        <port id=\"0\" precision=\"I32\"><dim>2</dim><dim>2</dim></port>\n"
  "        <port id=\"1\" precision=\"I64\"/>\n"
  "      </input>\n"
  "      <output><port id=\"2\" precision=\"I32\" names=\"out_t,alias_out\"><dim>2</dim><dim>1</dim><dim>2</dim></port></output>\n"
  "    </layer>\n"
  "    <layer id=\"3\" name=\"out/sink_port_0\" type=\"Result\" version=\"opset1\">\n"
  "      <input><port id=\"0\"><dim>2</dim><dim>1</dim><dim>2</dim></port></input>\n"
  "    </layer>\n"
  "  </layers>\n"
  "  <edges>\n"
  "    <edge from-layer=\"0\" from-port=\"0\" to-layer=\"2\" to-port=\"0\"/>\n"
  "    <edge from-layer=\"1\" from-port=\"0\" to-layer=\"2\" to-port=\"1\"/>\n"
  "    <edge from-layer=\"2\" from-port=\"2\" to-layer=\"3\" to-port=\"0\"/>\n"
  "  </edges>\n"
  "  <rt_info>\n"
  "    <Runtime_version value=\"2024.0.0\"/>\n"
  "    <conversion_parameters><framework value=\"pytorch\"/><is_python_object value=\"True\"/></conversion_parameters>\n"
  "  </rt_info>\n"
  "</net>\n";

static void
test_v10 (void)
{
  /* bytes 0..3 are padding: the Const starts at offset 4 */
  float bin[4] = { 99, 0.5f, -1.5f, 2.25f };
  g_autoptr (GBytes) weights = g_bytes_new (bin, sizeof bin);
  gchar *path = test_ir_write_files (test_ir_v10_model, weights);
  GError *error = NULL;
  /* no bin path: model.bin beside model.xml */
  M2iIrModel *m = m2i_ir_model_load (path, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (m2i_ir_model_get_name (m), ==, "demo10");
  g_assert_cmpint (m2i_ir_model_get_ir_version (m), ==, 10);
  g_assert_cmpstr (m2i_ir_model_get_rt_info (m, "meta_data/MO_version"), ==, "2021.1");
  g_assert_cmpstr (m2i_ir_model_get_rt_info (m, "meta_data/cli_parameters/data_type"), ==, "FP32");

  g_assert_cmpint (m2i_ir_model_get_n_inputs (m), ==, 1);
  const M2iIrIoInfo *in = m2i_ir_model_get_input (m, 0);
  g_assert_cmpstr (in->name, ==, "in");
  g_assert_cmpint (in->type, ==, M2I_ET_F32);
  g_assert_true (m2i_shape_equal (&in->shape, &TEST_SHAPE (1, 2, 3)));
  const M2iIrIoInfo *out = m2i_ir_model_get_output (m, 0);
  g_assert_cmpstr (out->name, ==, "cat");           /* v10: the producing layer's name */
  g_assert_true (m2i_shape_equal (&out->shape, &TEST_SHAPE (1, 3, 3)));
  g_assert_cmpint (m2i_ir_model_find_output (m, "cat"), ==, 0);
  g_assert_cmpint (m2i_ir_model_find_output (m, "nothing"), ==, -1);
  g_assert_null (m2i_ir_model_get_input (m, 1));

  /* walking: nodes in XML order, edges as ordinals */
  g_assert_cmpint (m2i_ir_model_get_n_nodes (m), ==, 4);
  M2iIrNode *cat = m2i_ir_model_find_node (m, 5);
  g_assert_cmpint (m2i_ir_node_get_index (cat), ==, 2);
  g_assert_cmpstr (m2i_ir_node_get_rt_info (cat, "fused_names"), ==, "cat,cat2");
  M2iIrNode *src;
  gint port;
  g_assert_true (m2i_ir_node_get_input_source (cat, 0, &src, &port));
  g_assert_cmpstr (m2i_ir_node_get_name (src), ==, "w");
  g_assert_true (m2i_ir_node_get_input_source (cat, 1, &src, &port));
  g_assert_cmpstr (m2i_ir_node_get_name (src), ==, "in");
  g_assert_false (m2i_ir_node_get_input_source (cat, 2, &src, &port));
  gint fn, fp, tn, tp;
  g_assert_cmpint (m2i_ir_model_get_n_edges (m), ==, 3);
  g_assert_true (m2i_ir_model_get_edge (m, 1, &fn, &fp, &tn, &tp));
  g_assert_cmpint (fn, ==, 1);
  g_assert_cmpint (fp, ==, 0);
  g_assert_cmpint (tn, ==, 2);
  g_assert_cmpint (tp, ==, 0);
  gint n_topo;
  const gint *topo = m2i_ir_model_get_topological_order (m, &n_topo);
  g_assert_cmpint (n_topo, ==, 4);
  g_assert_cmpint (topo[3], ==, 3);                  /* the Result last */
  const M2iTensor *w = m2i_ir_node_get_const (m2i_ir_model_find_node (m, 3));
  g_assert_nonnull (w);
  g_assert_cmpfloat (((const float *) w->data)[2], ==, 2.25f);
  g_assert_null (m2i_ir_node_get_const (cat));

  /* run: output = [w; x] */
  M2iIrCompiledModel *cm = m2i_ir_compile (m, NULL, &error);
  g_assert_no_error (error);
  M2iIrInferRequest *req = m2i_ir_infer_request_new (cm, &error);
  g_assert_no_error (error);
  M2iTensor *x = m2i_ir_infer_request_get_input (req, 0);
  for (gint i = 0; i < 6; i++)
    ((float *) x->data)[i] = 10 + i;                   /* zero-copy input */
  g_assert_true (m2i_ir_infer_request_infer (req, &error));
  const float expect[9] = { 0.5f, -1.5f, 2.25f, 10, 11, 12, 13, 14, 15 };
  const M2iTensor *o = m2i_ir_infer_request_get_output (req, 0);
  g_assert_cmpmem (o->data, sizeof expect, expect, sizeof expect);
  m2i_ir_infer_request_free (req);
  m2i_ir_compiled_model_unref (cm);
  m2i_ir_model_unref (m);
  test_ir_remove_files (path);
}

static void
test_v11 (void)
{
  gint64 axis = -2;
  g_autoptr (GBytes) weights = g_bytes_new (&axis, sizeof axis);
  GError *error = NULL;
  M2iIrModel *m = m2i_ir_model_load_from_memory (v11_model, sizeof v11_model - 1, weights,
      "v11.xml", &error);
  g_assert_no_error (error);
  g_assert_cmpint (m2i_ir_model_get_ir_version (m), ==, 11);
  g_assert_cmpstr (m2i_ir_model_get_rt_info (m, "Runtime_version"), ==, "2024.0.0");
  g_assert_cmpstr (m2i_ir_model_get_rt_info (m, "conversion_parameters/framework"), ==, "pytorch");
  g_assert_cmpint (m2i_ir_model_find_input (m, "alias_in"), ==, 0);
  g_assert_cmpint (m2i_ir_model_find_input (m, "in"), ==, 0);
  /* v11: the output is named by the first tensor name of its producer */
  g_assert_cmpstr (m2i_ir_model_get_output (m, 0)->name, ==, "out_t");
  g_assert_cmpint (m2i_ir_model_find_output (m, "alias_out"), ==, 0);
  M2iIrNode *axes = m2i_ir_model_find_node (m, 1);
  const M2iTensor *c = m2i_ir_node_get_const (axes);
  g_assert_cmpint (c->shape.rank, ==, 0);             /* shape="" is a scalar */
  g_assert_cmpint (*(const gint64 *) c->data, ==, -2);
  M2iIrNode *unsq = m2i_ir_model_find_node (m, 2);
  g_assert_cmpint (m2i_ir_node_get_input_type (unsq, 1), ==, M2I_ET_I64);
  g_assert_cmpint (m2i_ir_node_get_input_shape (unsq, 1)->rank, ==, 0);
  g_assert_cmpstr (m2i_ir_node_get_output_names (unsq, 0), ==, "out_t,alias_out");

  M2iIrCompiledModel *cm = m2i_ir_compile (m, NULL, &error);
  g_assert_no_error (error);
  M2iIrInferRequest *req = m2i_ir_infer_request_new (cm, &error);
  gint32 data[4] = { 1, -2, 3, -4 };
  M2iTensor t = { M2I_ET_I32, TEST_SHAPE (2, 2), data };
  g_assert_true (m2i_ir_infer_request_set_input (req, 0, &t, &error));
  g_assert_true (m2i_ir_infer_request_infer (req, &error));
  const M2iTensor *o = m2i_ir_infer_request_get_output (req, 0);
  g_assert_true (m2i_shape_equal (&o->shape, &TEST_SHAPE (2, 1, 2)));
  g_assert_cmpmem (o->data, sizeof data, data, sizeof data);
  /* the Unsqueeze is a view: it shares the input's buffer */
  g_assert_true (o->data == m2i_ir_infer_request_get_input (req, 0)->data);
  m2i_ir_infer_request_free (req);
  m2i_ir_compiled_model_unref (cm);
  m2i_ir_model_unref (m);
}

/* Every element type a Const can hold, in the v10 and v11 spellings,
 * converted to f64 by Convert-1: values are chosen at each type's edges
 * and written as the IEEE / two's complement bytes by hand. */
static void
test_element_types (gconstpointer version)
{
  static const guint8 boolean[] = { 0, 1, 1 };
  static const guint8 u8[] = { 0, 200, 255 };
  static const gint8 i8[] = { -128, -1, 127 };
  static const guint16 u16[] = { 0, 65535, 7 };
  static const gint16 i16[] = { -32768, 5, 32767 };
  static const guint32 u32[] = { 0, 4294967295u, 9 };
  static const gint32 i32[] = { G_MININT32, 1, G_MAXINT32 };
  static const guint64 u64[] = { 0, G_GUINT64_CONSTANT (9007199254740992), 5 };
  static const gint64 i64[] = { -G_GINT64_CONSTANT (9007199254740992), 0, 42 };
  static const guint16 f16[] = { 0x3c00, 0xc000, 0x3555 };      /* 1, -2, 0.333251953125 */
  static const guint16 bf16[] = { 0x3f80, 0xc040, 0x4049 };     /* 1, -3, 3.140625 */
  static const float f32[] = { 1.5f, -2.25f, 1e10f };
  static const double f64[] = { 0.1, -1e300, 3 };
  static const struct {
    M2iElementType type;
    gconstpointer data;
    double expect[3];
  } cases[] = {
    { M2I_ET_BOOLEAN, boolean, { 0, 1, 1 } },
    { M2I_ET_U8, u8, { 0, 200, 255 } },
    { M2I_ET_I8, i8, { -128, -1, 127 } },
    { M2I_ET_U16, u16, { 0, 65535, 7 } },
    { M2I_ET_I16, i16, { -32768, 5, 32767 } },
    { M2I_ET_U32, u32, { 0, 4294967295.0, 9 } },
    { M2I_ET_I32, i32, { -2147483648.0, 1, 2147483647.0 } },
    { M2I_ET_U64, u64, { 0, 9007199254740992.0, 5 } },
    { M2I_ET_I64, i64, { -9007199254740992.0, 0, 42 } },
    { M2I_ET_F16, f16, { 1, -2, 0.333251953125 } },
    { M2I_ET_BF16, bf16, { 1, -3, 3.140625 } },
    { M2I_ET_F32, f32, { 1.5, -2.25, 1e10 } },
    { M2I_ET_F64, f64, { 0.1, -1e300, 3 } },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    TestIr *b = test_ir_new (GPOINTER_TO_INT (version));
    M2iShape s = TEST_SHAPE (3);
    gint c = test_ir_const (b, cases[i].type, &s, cases[i].data);
    gint conv = test_ir_op (b, "Convert", "opset1", "destination_type=\"f64\"", 1, &c, M2I_ET_F64, &s);
    test_ir_result (b, conv);
    GError *error = NULL;
    M2iIrModel *m = test_ir_load (b, &error);
    g_assert_no_error (error);
    const M2iTensor *value = m2i_ir_node_get_const (m2i_ir_model_get_node (m, 0));
    /* f16 constants are widened to f32 at load, others keep their type */
    g_assert_cmpint (value->type, ==, cases[i].type == M2I_ET_F16 ? M2I_ET_F32 : cases[i].type);
    M2iIrCompiledModel *cm = m2i_ir_compile (m, NULL, &error);
    g_assert_no_error (error);
    M2iIrInferRequest *req = m2i_ir_infer_request_new (cm, &error);
    g_assert_true (m2i_ir_infer_request_infer (req, &error));
    const double *o = m2i_ir_infer_request_get_output (req, 0)->data;
    for (gint k = 0; k < 3; k++)
      if (o[k] != cases[i].expect[k])
        g_error ("%s element %d: %.17g, expected %.17g", m2i_element_type_to_string (cases[i].type),
            k, o[k], cases[i].expect[k]);
    m2i_ir_infer_request_free (req);
    m2i_ir_compiled_model_unref (cm);
    m2i_ir_model_unref (m);
    test_ir_free (b);
  }
}

/* "1,3,8,8", "1, 3, 8, 8" and "" parse alike wherever shapes are spelt. */
static void
test_shape_spellings (void)
{
  M2iShape a, b, s;
  g_assert_true (m2i_shape_parse ("1,3,8,8", &a, NULL));
  g_assert_true (m2i_shape_parse ("1, 3, 8, 8", &b, NULL));
  g_assert_true (m2i_shape_equal (&a, &b));
  g_assert_true (m2i_shape_parse ("", &s, NULL));
  g_assert_cmpint (s.rank, ==, 0);
  /* dynamic dimensions and malformed text */
  const char *dynamic[] = { "1,3,?,?", "1,-1", "1..8,3", "1,2..4" };
  for (guint i = 0; i < G_N_ELEMENTS (dynamic); i++) {
    GError *e = NULL;
    g_assert_false (m2i_shape_parse (dynamic[i], &s, &e));
    g_assert_error (e, M2I_ERROR, M2I_ERROR_UNSUPPORTED);
    g_assert_nonnull (strstr (e->message, "not supported"));
    g_clear_error (&e);
  }
  const char *malformed[] = { "1,,3", "1,3,", "a", "1 3" };
  for (guint i = 0; i < G_N_ELEMENTS (malformed); i++) {
    GError *e = NULL;
    g_assert_false (m2i_shape_parse (malformed[i], &s, &e));
    g_assert_error (e, M2I_ERROR, M2I_ERROR_MALFORMED);
    g_clear_error (&e);
  }
  for (gint spaced = 0; spaced < 2; spaced++) {
    TestIr *t = test_ir_new (11);
    M2iShape shape = TEST_SHAPE (1, 3, 8, 8);
    test_ir_result (t, test_ir_parameter (t, "x", M2I_ET_F32, &shape));
    g_autofree gchar *xml = g_strdup (test_ir_xml (t));
    if (spaced) {
      gchar *p = strstr (xml, "shape=\"1,3,8,8\"");
      g_assert_nonnull (p);
      GString *g = g_string_new (xml);
      g_string_replace (g, "shape=\"1,3,8,8\"", "shape=\"1, 3, 8, 8\"", 1);
      g_free (xml);
      xml = g_string_free (g, FALSE);
    }
    GError *error = NULL;
    M2iIrModel *m = m2i_ir_model_load_from_memory (xml, strlen (xml), NULL, "s.xml", &error);
    g_assert_no_error (error);
    g_assert_true (m2i_shape_equal (&m2i_ir_model_get_input (m, 0)->shape, &shape));
    m2i_ir_model_unref (m);
    test_ir_free (t);
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ir/reader/v10", test_v10);
  g_test_add_func ("/ir/reader/v11", test_v11);
  g_test_add_data_func ("/ir/reader/element-types/v10", GINT_TO_POINTER (10), test_element_types);
  g_test_add_data_func ("/ir/reader/element-types/v11", GINT_TO_POINTER (11), test_element_types);
  g_test_add_func ("/ir/reader/shape-spellings", test_shape_spellings);
  return g_test_run ();
}
