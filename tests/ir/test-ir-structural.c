/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The structural ops (Reshape, Squeeze, Unsqueeze, Concat, Transpose,
 * Convert, ShapeOf, StridedSlice, Gather) against numpy: the cases and the
 * expected outputs come from tests/data/ir/make-structural-cases.py. Each
 * case runs twice: input 0 fed at run time, and every input constant (the
 * op is then folded at compile time). */
#include "ir-test-util.h"
#include <base/m2i-error.h>

#include <json-glib/json-glib.h>
#include <string.h>

typedef struct {
  M2iElementType type;
  M2iShape shape;
  gpointer data;
} CaseTensor;

static void
read_tensor (JsonObject *o, CaseTensor *t)
{
  g_assert_true (m2i_element_type_from_string (json_object_get_string_member (o, "type"), &t->type));
  JsonArray *shape = json_object_get_array_member (o, "shape");
  t->shape.rank = json_array_get_length (shape);
  for (gint i = 0; i < t->shape.rank; i++)
    t->shape.dims[i] = json_array_get_int_element (shape, i);
  JsonArray *values = json_object_get_array_member (o, "values");
  gint n = json_array_get_length (values);
  g_assert_cmpint (n, ==, m2i_shape_numel (&t->shape));
  gsize es = m2i_element_type_size (t->type);
  t->data = g_malloc0 (MAX (n * es, 1));
  for (gint i = 0; i < n; i++) {
    JsonNode *v = json_array_get_element (values, i);
    guint8 *p = (guint8 *) t->data + i * es;
    switch (t->type) {
      case M2I_ET_F32: *(float *) p = (float) json_node_get_double (v); break;
      case M2I_ET_F64: *(double *) p = json_node_get_double (v); break;
      case M2I_ET_I64: case M2I_ET_U64: *(gint64 *) p = json_node_get_int (v); break;
      case M2I_ET_I32: case M2I_ET_U32: *(gint32 *) p = (gint32) json_node_get_int (v); break;
      case M2I_ET_I16: case M2I_ET_U16: *(gint16 *) p = (gint16) json_node_get_int (v); break;
      default: *p = (guint8) json_node_get_int (v); break;
    }
  }
}

static void
run_case (JsonObject *c, gboolean all_const)
{
  const char *name = json_object_get_string_member (c, "name");
  JsonArray *inputs = json_object_get_array_member (c, "inputs");
  gint n_in = json_array_get_length (inputs);
  CaseTensor in[8], expect;
  g_assert_cmpint (n_in, <=, 8);
  for (gint i = 0; i < n_in; i++)
    read_tensor (json_array_get_object_element (inputs, i), &in[i]);
  read_tensor (json_object_get_object_member (c, "output"), &expect);

  GString *attrs = g_string_new (NULL);
  JsonObject *ao = json_object_get_object_member (c, "attrs");
  GList *keys = json_object_get_members (ao);
  for (GList *k = keys; k; k = k->next)
    g_string_append_printf (attrs, "%s=\"%s\" ", (const char *) k->data,
        json_object_get_string_member (ao, k->data));
  g_list_free (keys);

  TestIr *b = test_ir_new (11);
  gint ids[8];
  for (gint i = 0; i < n_in; i++)
    ids[i] = i == 0 && !all_const ? test_ir_parameter (b, "x", in[0].type, &in[0].shape) :
        test_ir_const (b, in[i].type, &in[i].shape, in[i].data);
  gint op = test_ir_op (b, json_object_get_string_member (c, "type"),
      json_object_get_string_member (c, "opset"), attrs->str, n_in, ids, expect.type, &expect.shape);
  test_ir_result (b, op);
  GError *error = NULL;
  M2iIrModel *model = test_ir_load (b, &error);
  g_assert_no_error (error);
  M2iIrCompiledModel *cm = m2i_ir_compile (model, NULL, &error);
  if (!cm)
    g_error ("case '%s': %s\n%s", name, error->message, test_ir_xml (b));
  M2iIrInferRequest *req = m2i_ir_infer_request_new (cm, &error);
  g_assert_no_error (error);
  if (!all_const) {
    M2iTensor t = { in[0].type, in[0].shape, in[0].data };
    g_assert_true (m2i_ir_infer_request_set_input (req, 0, &t, &error));
  }
  g_assert_true (m2i_ir_infer_request_infer (req, &error));
  const M2iTensor *out = m2i_ir_infer_request_get_output (req, 0);
  g_autofree gchar *s1 = m2i_shape_to_string (&out->shape);
  g_autofree gchar *s2 = m2i_shape_to_string (&expect.shape);
  if (out->type != expect.type || !m2i_shape_equal (&out->shape, &expect.shape))
    g_error ("case '%s': got %s %s, numpy gives %s %s", name, m2i_element_type_to_string (out->type),
        s1, m2i_element_type_to_string (expect.type), s2);
  if (memcmp (out->data, expect.data, m2i_tensor_nbytes (out)))
    g_error ("case '%s' (%s): values differ from numpy's", name, all_const ? "folded" : "run time");
  if (all_const)
    g_assert_cmpint (m2i_ir_compiled_model_get_n_runtime_nodes (cm), ==, 0);

  m2i_ir_infer_request_free (req);
  m2i_ir_compiled_model_unref (cm);
  m2i_ir_model_unref (model);
  test_ir_free (b);
  g_string_free (attrs, TRUE);
  for (gint i = 0; i < n_in; i++)
    g_free (in[i].data);
  g_free (expect.data);
}

static void
test_cases (gconstpointer all_const)
{
  g_autofree gchar *path = g_build_filename (g_getenv ("M2I_TEST_DATA"), "ir",
      "structural-cases.json", NULL);
  JsonParser *parser = json_parser_new ();
  GError *error = NULL;
  g_assert_true (json_parser_load_from_file (parser, path, &error));
  JsonArray *cases = json_object_get_array_member (json_node_get_object (json_parser_get_root (parser)), "cases");
  g_assert_cmpint (json_array_get_length (cases), >=, 40);
  for (guint i = 0; i < json_array_get_length (cases); i++)
    run_case (json_array_get_object_element (cases, i), GPOINTER_TO_INT (all_const));
  g_object_unref (parser);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_data_func ("/ir/structural/run-time", GINT_TO_POINTER (FALSE), test_cases);
  g_test_add_data_func ("/ir/structural/folded", GINT_TO_POINTER (TRUE), test_cases);
  return g_test_run ();
}
