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

/* One compared output: ours (its shape) and ONNX Runtime's, as doubles. */
typedef struct {
  gchar *what;                   /* LAYER.PORT */
  M2iShape shape;
  gint64 n, n_ref;
  double *ours, *ref;
  double scale;                  /* the largest |value| of ref, at least 1 */
} Compared;

typedef struct {
  gboolean ok;                   /* FALSE: unlike beyond any tolerance */
  double worst_rel;              /* the largest |diff| / the output's largest |value| */
  gchar *text;                   /* the report line's detail */
} Verdict;

/* Outputs of the same sizes, element by element, within @tol. */
static Verdict
compare_elements (const Compared *cmp, guint n_out, double tol)
{
  double worst_rel = 0, worst_abs = 0, sum_rel = 0;
  gint64 count = 0;
  for (guint k = 0; k < n_out; k++) {
    const Compared *c = &cmp[k];
    double diff = 0;
    for (gint64 i = 0; i < c->n; i++) {
      double d = fabs (c->ours[i] - c->ref[i]);
      diff = isnan (d) ? INFINITY : MAX (diff, d);
      sum_rel += d / c->scale;
    }
    count += c->n;
    worst_abs = MAX (worst_abs, diff);
    worst_rel = MAX (worst_rel, diff / c->scale);
  }
  return (Verdict) { TRUE, worst_rel, g_strdup_printf ("max |diff| %.3g, %.3g of the largest "
          "|output| (tolerance %.3g); mean %.2g", worst_abs, worst_rel, tol,
          sum_rel / MAX (count, 1)) };
}

static double
box_iou (const double *a, const double *b)
{
  double w = MIN (a[2], b[2]) - MAX (a[0], b[0]), h = MIN (a[3], b[3]) - MAX (a[1], b[1]);
  double inter = MAX (w, 0) * MAX (h, 0);
  double u = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter;
  return u > 0 ? inter / u : 0;
}

/* Detections with a run-time count (NMS inside the graph), in whatever
 * number and order they came out: a set, not a sequence. The boxes output (N rows of x1,
 * y1, x2, y2, score) pairs each of ONNX Runtime's rows, best score first,
 * with our unpaired row of the same values in the other outputs of N rows
 * (labels) and the largest IoU, at least 0.5; paired rows are compared
 * value by value (within @tol of each output's largest |value|), and a row
 * left unpaired on either side must score within @tol of the top score
 * above the lowest score of both sides — a box that only crosses the
 * model's score threshold one way or the other. */
static Verdict
compare_detections (const Compared *cmp, guint n_out, double tol)
{
  const Compared *boxes = NULL;
  for (guint k = 0; k < n_out && !boxes; k++)
    if (cmp[k].shape.rank == 2 && cmp[k].shape.dims[1] >= 5)
      boxes = &cmp[k];
  if (!boxes)
    return (Verdict) { FALSE, INFINITY, g_strdup ("outputs of other sizes than ONNX Runtime's, "
            "and no N x 5 boxes among them") };
  gint64 d = boxes->shape.dims[1], na = boxes->shape.dims[0], nb = boxes->n_ref / d;
  /* the outputs of one value (or row) per box */
  for (guint k = 0; k < n_out; k++)
    if (cmp[k].n != cmp[k].n_ref && (cmp[k].shape.rank < 1 || cmp[k].shape.dims[0] != na ||
            cmp[k].n_ref * na != cmp[k].n * nb))
      return (Verdict) { FALSE, INFINITY, g_strdup_printf ("output %s has %" G_GINT64_FORMAT
              " elements, ONNX Runtime's %" G_GINT64_FORMAT ", not one row per box",
              cmp[k].what, cmp[k].n, cmp[k].n_ref) };
  g_autofree gint64 *order = g_new (gint64, MAX (nb, 1));
  g_autofree gint64 *pair = g_new (gint64, MAX (nb, 1));          /* ours for theirs, or -1 */
  g_autofree gboolean *taken = g_new0 (gboolean, MAX (na, 1));
  for (gint64 j = 0; j < nb; j++)
    order[j] = j;
  for (gint64 j = 1; j < nb; j++)          /* by score, best first (few rows) */
    for (gint64 i = j; i > 0 && boxes->ref[order[i] * d + 4] > boxes->ref[order[i - 1] * d + 4];
        i--) {
      gint64 t = order[i];
      order[i] = order[i - 1];
      order[i - 1] = t;
    }
  gint64 paired = 0;
  for (gint64 jj = 0; jj < nb; jj++) {
    gint64 j = order[jj], best = -1;
    double best_iou = 0.5;
    for (gint64 i = 0; i < na; i++) {
      if (taken[i])
        continue;
      gboolean same = TRUE;      /* the same label (rows of the other outputs) */
      for (guint k = 0; k < n_out && same; k++) {
        const Compared *c = &cmp[k];
        gint64 w = c->n / MAX (na, 1);
        if (c == boxes || c->n == c->n_ref)
          continue;
        for (gint64 e = 0; e < w && same; e++)
          same = fabs (c->ours[i * w + e] - c->ref[j * w + e]) <= tol * c->scale;
      }
      double iou = box_iou (boxes->ours + i * d, boxes->ref + j * d);
      if (same && iou >= best_iou) {
        best_iou = iou;
        best = i;
      }
    }
    pair[j] = best;
    if (best >= 0) {
      taken[best] = TRUE;
      paired++;
    }
  }
  double lo = INFINITY, hi = -INFINITY;
  for (gint64 i = 0; i < na; i++) {
    lo = MIN (lo, boxes->ours[i * d + 4]);
    hi = MAX (hi, boxes->ours[i * d + 4]);
  }
  for (gint64 j = 0; j < nb; j++) {
    lo = MIN (lo, boxes->ref[j * d + 4]);
    hi = MAX (hi, boxes->ref[j * d + 4]);
  }
  double margin = tol * hi, worst_unpaired = -INFINITY;
  for (gint64 i = 0; i < na; i++)
    if (!taken[i])
      worst_unpaired = MAX (worst_unpaired, boxes->ours[i * d + 4]);
  for (gint64 j = 0; j < nb; j++)
    if (pair[j] < 0)
      worst_unpaired = MAX (worst_unpaired, boxes->ref[j * d + 4]);
  /* the paired rows value by value; outputs not per box element by element */
  double worst_rel = 0;
  for (guint k = 0; k < n_out; k++) {
    const Compared *c = &cmp[k];
    if (c != boxes && c->n == c->n_ref) {
      Verdict e = compare_elements (c, 1, tol);
      worst_rel = MAX (worst_rel, e.worst_rel);
      g_free (e.text);
      continue;
    }
    gint64 w = c->n / MAX (na, 1);
    for (gint64 j = 0; j < nb; j++)
      if (pair[j] >= 0)
        for (gint64 e = 0; e < w; e++) {
          double diff = fabs (c->ours[pair[j] * w + e] - c->ref[j * w + e]);
          worst_rel = MAX (worst_rel, isnan (diff) ? INFINITY : diff / c->scale);
        }
  }
  gboolean ok = worst_unpaired <= lo + margin;
  return (Verdict) { ok, worst_rel, g_strdup_printf ("detections: %" G_GINT64_FORMAT " and ONNX "
          "Runtime's %" G_GINT64_FORMAT " boxes, %" G_GINT64_FORMAT " paired (IoU >= 0.5, same "
          "label), paired values within %.3g of the largest |output| (tolerance %.3g); the "
          "unpaired score at most %.3g, the lowest %.3g (allowed: up to %.3g above it)", na, nb,
          paired, worst_rel, tol, worst_unpaired, lo, margin) };
}

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
  /* every compared output as doubles, ours and ONNX Runtime's */
  guint n_out = ref.outputs->len;
  g_autofree Compared *cmp = g_new0 (Compared, n_out);
  /* a run-time count (a dynamic dim declared on a Result, NMS inside the
   * graph) makes the outputs a set of detections even when both sides
   * happen to give the same number of rows in another order */
  gboolean same_sizes = TRUE, runtime_count = FALSE;
  for (guint k = 0; k < n_out; k++) {
    const RefOutput *o = &g_array_index (ref.outputs, RefOutput, k);
    /* the output whose Result reads that layer's port */
    const M2iTensor *out = NULL;
    for (gint i = 0; i < m2i_ir_model_get_n_outputs (mo) && !out; i++) {
      M2iIrNode *src;
      gint port;
      m2i_ir_node_get_input_source (m2i_ir_model_get_output (mo, i)->node, 0, &src, &port);
      if (port == o->port && !strcmp (m2i_ir_node_get_name (src), o->layer)) {
        out = m2i_ir_infer_request_get_output (req, i);
        runtime_count = runtime_count || !m2i_shape_is_static (&m2i_ir_model_get_output (mo,
                i)->shape);
      }
    }
    g_assert_nonnull (out);
    g_autoptr (GBytes) data = m2i_data_read (o->file, &error);
    g_assert_no_error (error);
    Compared *c = &cmp[k];
    c->what = g_strdup_printf ("%s.%d", o->layer, o->port);
    c->shape = out->shape;
    c->n = m2i_shape_numel (&out->shape);
    c->n_ref = g_bytes_get_size (data) / sizeof (float);
    c->ours = g_new (double, MAX (c->n, 1));
    ir_convert_elements (out->data, out->type, c->ours, M2I_ET_F64, c->n);
    c->ref = g_new (double, MAX (c->n_ref, 1));
    const float *r = g_bytes_get_data (data, NULL);
    c->scale = 1;
    for (gint64 i = 0; i < c->n_ref; i++) {
      c->ref[i] = r[i];
      c->scale = MAX (c->scale, fabs (r[i]));
    }
    same_sizes = same_sizes && c->n == c->n_ref;
  }
  Verdict v = same_sizes && !runtime_count ? compare_elements (cmp, n_out, tol) :
      compare_detections (cmp, n_out, tol);
  gboolean ok = v.ok && v.worst_rel <= tol;
  g_test_message ("model-set:\t%s%s\t%s\t%s", name, how, ok ? "matches" : "differs", v.text);
  if (ok)
    tally->matched++;
  else
    g_test_fail_printf ("%s%s differs from ONNX Runtime: %s", name, how, v.text);
  g_free (v.text);
  for (guint k = 0; k < n_out; k++) {
    g_free (cmp[k].what);
    g_free (cmp[k].ours);
    g_free (cmp[k].ref);
  }
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
