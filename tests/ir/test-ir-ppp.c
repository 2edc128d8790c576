/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The PrePostProcessor model (models/fashion-mnist-ppp: NV12 → NV12toRGB →
 * Convert → Interpolate → Subtract → Multiply → Transpose → network) against
 * the reference data of tests/data/ppp (the project's numpy executor, checked
 * against torch): the probabilities within 1e-4, and — cutting the model with
 * m2i_ir_model_extract() — the head's output within 1e-4 and NV12toRGB's
 * bytes exactly. */
#include "ir-test-util.h"

#include <math.h>
#include <string.h>

static const char *const cases[] = { "t10k-0", "t10k-1", "t10k-2", "t10k-4", "gradient", "noise" };

static GBytes *
case_file (const char *name, const char *ext)
{
  g_autofree gchar *rel = g_strdup_printf ("ppp/%s.%s", name, ext);
  return test_read_data (rel);
}

/* Ancestors of @node (and itself), as node indices. */
static GArray *
ancestors (M2iIrModel *m, gint node)
{
  GArray *out = g_array_new (FALSE, FALSE, sizeof (gint));
  g_autofree gboolean *seen = g_new0 (gboolean, m2i_ir_model_get_n_nodes (m));
  GArray *todo = g_array_new (FALSE, FALSE, sizeof (gint));
  g_array_append_val (todo, node);
  while (todo->len) {
    gint i = g_array_index (todo, gint, todo->len - 1);
    g_array_set_size (todo, todo->len - 1);
    if (seen[i])
      continue;
    seen[i] = TRUE;
    g_array_append_val (out, i);
    M2iIrNode *n = m2i_ir_model_get_node (m, i);
    for (gint p = 0; p < m2i_ir_node_get_n_inputs (n); p++) {
      M2iIrNode *src;
      g_assert_true (m2i_ir_node_get_input_source (n, p, &src, NULL));
      gint j = m2i_ir_node_get_index (src);
      g_array_append_val (todo, j);
    }
  }
  g_array_free (todo, TRUE);
  return out;
}

static gint
find_type (M2iIrModel *m, const char *type)
{
  for (gint i = 0; i < m2i_ir_model_get_n_nodes (m); i++)
    if (!strcmp (m2i_ir_node_get_type (m2i_ir_model_get_node (m, i)), type))
      return i;
  g_error ("no %s layer", type);
}

/* Runs @m on the NV12 frame of @name; returns a copy of output 0. */
static gpointer
run_nv12 (M2iIrModel *m, const char *name)
{
  g_autoptr (GBytes) nv12 = case_file (name, "nv12");
  g_assert_cmpuint (g_bytes_get_size (nv12), ==, 4608);
  const guint8 *d = g_bytes_get_data (nv12, NULL);
  GError *error = NULL;
  M2iIrCompiledModel *cm = m2i_ir_compile (m, NULL, &error);
  g_assert_no_error (error);
  M2iIrInferRequest *req = m2i_ir_infer_request_new (cm, &error);
  gint y = m2i_ir_model_find_input (m, "input/y"), uv = m2i_ir_model_find_input (m, "input/uv");
  g_assert_cmpint (y, >=, 0);
  g_assert_cmpint (uv, >=, 0);
  M2iTensor ty = { M2I_ET_U8, TEST_SHAPE (1, 48, 64, 1), (gpointer) d };
  M2iTensor tuv = { M2I_ET_U8, TEST_SHAPE (1, 24, 32, 2), (gpointer) (d + 3072) };
  g_assert_true (m2i_ir_infer_request_set_input (req, y, &ty, &error));
  g_assert_true (m2i_ir_infer_request_set_input (req, uv, &tuv, &error));
  g_assert_true (m2i_ir_infer_request_infer (req, &error));
  const M2iTensor *o = m2i_ir_infer_request_get_output (req, 0);
  gpointer copy = g_memdup2 (o->data, m2i_tensor_nbytes (o));
  m2i_ir_infer_request_free (req);
  m2i_ir_compiled_model_unref (cm);
  return copy;
}

static double
max_diff (const float *a, const float *b, gint n)
{
  double worst = 0;
  for (gint i = 0; i < n; i++)
    worst = MAX (worst, fabs ((double) a[i] - b[i]));
  return worst;
}

static void
test_ppp (void)
{
  g_autofree gchar *xml = test_models_path ("fashion-mnist-ppp/fashion-mnist-ppp.xml");
  GError *error = NULL;
  M2iIrModel *m = m2i_ir_model_load (xml, NULL, &error);
  g_assert_no_error (error);
  GArray *head_nodes = ancestors (m, find_type (m, "Transpose"));
  M2iIrModel *head = m2i_ir_model_extract (m, (gint *) head_nodes->data, head_nodes->len, NULL, 0,
      "head", &error);
  g_assert_no_error (error);
  GArray *csc_nodes = ancestors (m, find_type (m, "NV12toRGB"));
  M2iIrModel *csc = m2i_ir_model_extract (m, (gint *) csc_nodes->data, csc_nodes->len, NULL, 0,
      "csc", &error);
  g_assert_no_error (error);
  g_assert_cmpint (m2i_ir_model_get_n_inputs (head), ==, 2);
  g_assert_true (m2i_shape_equal (&m2i_ir_model_get_output (head, 0)->shape, &TEST_SHAPE (1, 3, 28, 28)));

  for (guint k = 0; k < G_N_ELEMENTS (cases); k++) {
    g_autoptr (GBytes) prob = case_file (cases[k], "prob.f32");
    g_autoptr (GBytes) head_ref = case_file (cases[k], "head.f32");
    g_autoptr (GBytes) rgb = case_file (cases[k], "rgb.u8");
    g_autofree float *p = run_nv12 (m, cases[k]);
    g_autofree float *h = run_nv12 (head, cases[k]);
    g_autofree guint8 *c = run_nv12 (csc, cases[k]);
    double dp = max_diff (p, g_bytes_get_data (prob, NULL), 10);
    double dh = max_diff (h, g_bytes_get_data (head_ref, NULL), 3 * 28 * 28);
    g_test_message ("%s: max |diff| prob %.3g, head %.3g", cases[k], dp, dh);
    g_assert_cmpfloat (dp, <=, 1e-4);
    g_assert_cmpfloat (dh, <=, 1e-4);
    g_assert_cmpmem (c, 48 * 64 * 3, g_bytes_get_data (rgb, NULL), 48 * 64 * 3);
  }
  g_array_free (head_nodes, TRUE);
  g_array_free (csc_nodes, TRUE);
  m2i_ir_model_unref (csc);
  m2i_ir_model_unref (head);
  m2i_ir_model_unref (m);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ir/ppp/fashion-mnist-ppp", test_ppp);
  return g_test_run ();
}
