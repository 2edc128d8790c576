/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The public model set (docs/model-coverage.md): every model of
 * tests/models/model-set.tsv found in the cache ($M2I_MODEL_CACHE, default
 * ~/.cache/m2i-models, made by tests/models/fetch-model-set.sh) is loaded
 * and compiled; one that loads is run on the fixed input of its reference
 * (made by tests/models/model-coverage.py) and its outputs are compared
 * with ONNX Runtime's within the model's tolerance
 * (tests/models/tolerance.tsv). An INT8 model is run twice: as its float
 * emulation (FakeQuantize as its formula, as the ONNX translation computes
 * it) and on integer kernels (docs/int8.md), each within its own tolerance
 * (the file's second and third columns). One that does not load must say, in one
 * message, every op it lacks. Skips when the cache or a model's reference
 * is absent. Each model's verdict is printed as a "model-set:" line (the
 * report model-coverage.py reads). */
#include "ir-test-util.h"
#include <base/m2i-error.h>
#include <ir/ir-private.h>

#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static gchar *
cache_dir (void)
{
  const char *env = g_getenv ("M2I_MODEL_CACHE");
  if (env && *env)
    return g_strdup (env);
  return g_build_filename (g_get_user_cache_dir (), "m2i-models", NULL);
}

static gchar *
source_path (const char *relative)
{
  const char *root = g_getenv ("M2I_SOURCE_ROOT");
  return root ? g_build_filename (root, relative, NULL) : NULL;
}

/* Lines of a tab-separated file, comments and blank lines left out. */
static gchar **
read_lines (const char *path)
{
  gchar *text;
  if (!path || !g_file_get_contents (path, &text, NULL, NULL))
    return NULL;
  gchar **lines = g_strsplit (text, "\n", -1);
  g_free (text);
  return lines;
}

typedef struct {
  gchar *layer;
  gint port;
  gchar *file;
} RefOutput;

typedef struct {
  GPtrArray *inputs;             /* gchar* files, Parameter order */
  GArray *outputs;               /* RefOutput */
} Reference;

static void
reference_free (Reference *r)
{
  g_ptr_array_unref (r->inputs);
  for (guint i = 0; i < r->outputs->len; i++) {
    g_free (g_array_index (r->outputs, RefOutput, i).layer);
    g_free (g_array_index (r->outputs, RefOutput, i).file);
  }
  g_array_free (r->outputs, TRUE);
}

/* DIR/ref/meta.tsv: "input\tFILE" and "output\tLAYER\tPORT\tFILE" lines. */
static gboolean
read_reference (const char *dir, Reference *r)
{
  g_autofree gchar *meta = g_build_filename (dir, "ref", "meta.tsv", NULL);
  g_auto (GStrv) lines = read_lines (meta);
  if (!lines)
    return FALSE;
  r->inputs = g_ptr_array_new_with_free_func (g_free);
  r->outputs = g_array_new (FALSE, FALSE, sizeof (RefOutput));
  for (gchar **l = lines; *l; l++) {
    g_auto (GStrv) f = g_strsplit (*l, "\t", -1);
    guint n = g_strv_length (f);
    if (n == 2 && !strcmp (f[0], "input"))
      g_ptr_array_add (r->inputs, g_build_filename (dir, "ref", f[1], NULL));
    else if (n == 4 && !strcmp (f[0], "output")) {
      RefOutput o = { g_strdup (f[1]), atoi (f[2]), g_build_filename (dir, "ref", f[3], NULL) };
      g_array_append_val (r->outputs, o);
    }
  }
  return TRUE;
}

/* The model with a Result on each reference output too. */
static M2iIrModel *
with_outputs (M2iIrModel *m, const Reference *ref, GError **error)
{
  gint n = m2i_ir_model_get_n_nodes (m);
  g_autofree gint *all = g_new (gint, n);
  g_autofree gint *pairs = g_new (gint, 2 * MAX (ref->outputs->len, 1));
  for (gint i = 0; i < n; i++)
    all[i] = i;
  for (guint k = 0; k < ref->outputs->len; k++) {
    const RefOutput *o = &g_array_index (ref->outputs, RefOutput, k);
    pairs[2 * k] = -1;
    for (gint i = 0; i < n && pairs[2 * k] < 0; i++)
      if (!strcmp (m2i_ir_node_get_name (m2i_ir_model_get_node (m, i)), o->layer))
        pairs[2 * k] = i;
    pairs[2 * k + 1] = o->port;
    if (pairs[2 * k] < 0) {
      g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, "no layer '%s'", o->layer);
      return NULL;
    }
  }
  return m2i_ir_model_extract (m, all, n, pairs, ref->outputs->len, NULL, error);
}

typedef struct {
  gint loaded, matched, failed, skipped;
} Tally;

static void
check_model (const char *name, const char *dir, const char *xml_file, double tol,
    gboolean emulate, Tally *tally)
{
  g_autofree gchar *xml = g_build_filename (dir, xml_file, NULL);
  GError *error = NULL;
  M2iIrModel *m = m2i_ir_model_load (xml, NULL, &error);
  M2iIrCompileOptions opts = { .n_threads = 1, .float_emulation = emulate };
  M2iIrCompiledModel *cm = m ? m2i_ir_compile (m, &opts, &error) : NULL;
  const char *how = emulate ? " (float emulation)" : "";
  if (!cm) {
    /* what it lacks, in one message */
    g_test_message ("model-set:\t%s%s\tfails\t%s", name, how, error->message);
    g_assert_true (error->domain == M2I_ERROR);
    if (error->code == M2I_ERROR_UNSUPPORTED && strstr (error->message, "no kernel"))
      g_assert_null (strstr (strstr (error->message, "no kernel") + 1, "no kernel"));
    g_clear_error (&error);
    tally->failed++;
    if (m)
      m2i_ir_model_unref (m);
    return;
  }
  m2i_ir_compiled_model_unref (cm);
  tally->loaded++;
  Reference ref;
  if (!read_reference (dir, &ref)) {
    g_test_message ("model-set:\t%s%s\tloads\tno reference (run tests/models/model-coverage.py)",
        name, how);
    tally->skipped++;
    m2i_ir_model_unref (m);
    return;
  }
  M2iIrModel *mo = with_outputs (m, &ref, &error);
  g_assert_no_error (error);
  m2i_ir_model_unref (m);
  cm = m2i_ir_compile (mo, &opts, &error);
  g_assert_no_error (error);
  M2iIrInferRequest *req = m2i_ir_infer_request_new (cm, &error);
  g_assert_no_error (error);
  g_assert_cmpint (ref.inputs->len, ==, m2i_ir_model_get_n_inputs (mo));
  for (guint i = 0; i < ref.inputs->len; i++) {
    g_autoptr (GBytes) data = m2i_data_read (g_ptr_array_index (ref.inputs, i), &error);
    g_assert_no_error (error);
    M2iTensor *in = m2i_ir_infer_request_get_input (req, i);
    M2iTensor t = { M2I_ET_F32, in->shape, (gpointer) g_bytes_get_data (data, NULL) };
    if (in->type != M2I_ET_F32)
      t.type = in->type;       /* integer inputs: stored in their own type */
    g_assert_cmpuint (g_bytes_get_size (data), ==, m2i_tensor_nbytes (&t));
    g_assert_true (m2i_ir_infer_request_set_input (req, i, &t, &error));
  }
  g_assert_true (m2i_ir_infer_request_infer (req, &error));
  g_assert_no_error (error);
  double worst_rel = 0, worst_abs = 0, sum_rel = 0;
  gint64 count = 0;
  for (guint k = 0; k < ref.outputs->len; k++) {
    const RefOutput *o = &g_array_index (ref.outputs, RefOutput, k);
    /* the output whose Result reads that layer's port */
    const M2iTensor *out = NULL;
    for (gint i = 0; i < m2i_ir_model_get_n_outputs (mo) && !out; i++) {
      M2iIrNode *src;
      gint port;
      m2i_ir_node_get_input_source (m2i_ir_model_get_output (mo, i)->node, 0, &src, &port);
      if (port == o->port && !strcmp (m2i_ir_node_get_name (src), o->layer))
        out = m2i_ir_infer_request_get_output (req, i);
    }
    g_assert_nonnull (out);
    g_autoptr (GBytes) data = m2i_data_read (o->file, &error);
    g_assert_no_error (error);
    gint64 n = m2i_shape_numel (&out->shape);
    if (g_bytes_get_size (data) != n * sizeof (float)) {
      /* a run-time shape (detections after NMS) that came out otherwise */
      g_test_message ("model-set:\t%s%s\tdiffers\toutput %s.%d has %" G_GINT64_FORMAT
          " elements, ONNX Runtime's %" G_GSIZE_FORMAT, name, how, o->layer, o->port, n,
          g_bytes_get_size (data) / sizeof (float));
      g_test_fail_printf ("%s%s: output %s.%d has %" G_GINT64_FORMAT " elements, ONNX "
          "Runtime's %" G_GSIZE_FORMAT, name, how, o->layer, o->port, n,
          g_bytes_get_size (data) / sizeof (float));
      worst_rel = INFINITY;
      break;
    }
    const float *r = g_bytes_get_data (data, NULL);
    double scale = 1, diff = 0;
    for (gint64 i = 0; i < n; i++)
      scale = MAX (scale, fabs (r[i]));
    for (gint64 i = 0; i < n; i++) {
      double ours;
      ir_convert_elements ((const guint8 *) out->data + i * m2i_element_type_size (out->type),
          out->type, &ours, M2I_ET_F64, 1);
      double d = fabs (ours - r[i]);
      diff = isnan (d) ? INFINITY : MAX (diff, d);
      sum_rel += d / scale;
    }
    count += n;
    worst_abs = MAX (worst_abs, diff);
    worst_rel = MAX (worst_rel, diff / scale);
  }
  gboolean ok = worst_rel <= tol;
  if (isinf (worst_rel))
    tally->failed++;
  else
    g_test_message ("model-set:\t%s%s\t%s\tmax |diff| %.3g, %.3g of the largest |output| "
      "(tolerance %.3g); mean %.2g", name, how, ok ? "matches" : "differs", worst_abs, worst_rel,
      tol, sum_rel / MAX (count, 1));
  if (ok)
    tally->matched++;
  else if (!isinf (worst_rel))
    g_test_fail_printf ("%s%s differs from ONNX Runtime by %.3g of its outputs' range "
        "(tolerance %.3g)", name, how, worst_rel, tol);
  m2i_ir_infer_request_free (req);
  m2i_ir_compiled_model_unref (cm);
  m2i_ir_model_unref (mo);
  reference_free (&ref);
}

static void
test_model_set (void)
{
  g_autofree gchar *cache = cache_dir ();
  g_autofree gchar *manifest = source_path ("tests/models/model-set.tsv");
  g_autofree gchar *tolerances = source_path ("tests/models/tolerance.tsv");
  g_auto (GStrv) lines = read_lines (manifest);
  g_auto (GStrv) tol_lines = read_lines (tolerances);
  if (!lines || !g_file_test (cache, G_FILE_TEST_IS_DIR)) {
    g_test_skip ("the model cache is not here (tests/models/fetch-model-set.sh makes it)");
    return;
  }
  Tally tally = { 0 };
  gint seen = 0;
  for (gchar **l = lines; *l; l++) {
    g_auto (GStrv) f = g_strsplit (*l, "\t", -1);
    if (g_strv_length (f) < 4 || f[0][0] == '#' || !g_str_has_suffix (f[3], ".xml"))
      continue;
    g_autofree gchar *dir = g_build_filename (cache, f[0], NULL);
    g_autofree gchar *base = g_path_get_basename (f[3]);
    g_autofree gchar *xml = g_build_filename (dir, base, NULL);
    if (!g_file_test (xml, G_FILE_TEST_EXISTS))
      continue;
    double tol = 1e-4, tol_int8 = -1;
    for (gchar **t = tol_lines; t && *t; t++) {
      g_auto (GStrv) tf = g_strsplit (*t, "\t", -1);
      if (g_strv_length (tf) >= 2 && !strcmp (tf[0], f[0]))
        tol = g_ascii_strtod (tf[1], NULL);
      if (g_strv_length (tf) >= 3 && !strcmp (tf[0], f[0]))
        tol_int8 = g_ascii_strtod (tf[2], NULL);
    }
    seen++;
    if (tol_int8 < 0) {
      check_model (f[0], dir, base, tol, FALSE, &tally);
      continue;
    }
    /* counted once, by the way the runtime runs it */
    Tally emulation = { 0 };
    check_model (f[0], dir, base, tol, TRUE, &emulation);
    check_model (f[0], dir, base, tol_int8, FALSE, &tally);
  }
  if (!seen) {
    g_test_skip ("no model of the set is in the cache");
    return;
  }
  g_test_message ("model-set: %d models: %d load (%d match ONNX Runtime, %d without a "
      "reference), %d do not load", seen, tally.loaded, tally.matched, tally.skipped, tally.failed);
}

int
main (int argc, char **argv)
{
  setlocale (LC_ALL, "");        /* messages keep their "×" in a UTF-8 locale */
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ir/model-set", test_model_set);
  return g_test_run ();
}
