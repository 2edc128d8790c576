/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Split plans of hundreds of random models (seeded): convolutions with bias
 * and ReLU tails, element-wise adds, pools, concats, and layers only the CPU
 * runs (Sigmoid, SoftMax), wired as random DAGs with skip connections, one
 * or two inputs, under random device lists, affinities and the cost rule on
 * or off. Every plan is checked against the model by code written here:
 *  - every layer that computes is in exactly one piece (and one sub-model),
 *    Parameters, Consts and Results in none;
 *  - every edge goes from a piece to the same or a later one: the pieces
 *    are in a topological order, so there is no cycle between them;
 *  - the tensors are exactly the model inputs, the model outputs and the
 *    values that cross pieces, each listed once, with the right attr,
 *    producer and readers, and each piece's sub-model takes and gives them;
 *  - forced affinities hold; the device runs no layer it has no kernel for;
 *  - the plan written as a folder loads back the same (one in three);
 * and one model in four runs split against the unsplit model on the CPU. */
#include "../ir/ir-test-util.h"
#include <base/m2i-error.h>
#include <split/m2i-split.h>

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#define C 8
#define HW 6

typedef struct {
  TestIr *b;
  GRand *r;
  GArray *pool;                /* tensor-producing layer ids */
  GArray *uses;                /* per layer id: readers */
  GPtrArray *op_names;         /* layer names of ops, for affinities */
} Gen;

/* Records layer @id; activations join the pool inputs are picked from. */
static void
note (Gen *g, gint id, gboolean activation)
{
  gint zero = 0;
  while ((gint) g->uses->len <= id)
    g_array_append_val (g->uses, zero);
  if (activation)
    g_array_append_val (g->pool, id);
}

static gint
pick (Gen *g)
{
  gint n = g->pool->len;
  gint k = g_rand_int_range (g->r, 0, 10) < 7 ? n - 1 - g_rand_int_range (g->r, 0, MIN (n, 3)) :
      g_rand_int_range (g->r, 0, n);
  gint id = g_array_index (g->pool, gint, k);
  g_array_index (g->uses, gint, id)++;
  return id;
}

static gint
op (Gen *g, const char *type, const char *opset, const char *attrs, gint n, const gint *in,
    const M2iShape *shape)
{
  gint id = test_ir_op (g->b, type, opset, attrs, n, in, M2I_ET_F32, shape);
  /* only [1, C, HW, HW] values are picked as inputs */
  note (g, id, shape->dims[1] == C);
  g_ptr_array_add (g->op_names, g_strdup_printf ("%s_%d", type, id));
  return id;
}

static gint
weights (Gen *g, gint out, gint in, gint k)
{
  gsize n = (gsize) out * in * k * k;
  float *w = g_new (float, n);
  float a = sqrtf (3.0f / (in * k * k));
  for (gsize i = 0; i < n; i++)
    w[i] = g_rand_double_range (g->r, -a, a);
  gint id = test_ir_const (g->b, M2I_ET_F32, &TEST_SHAPE (out, in, k, k), w);
  note (g, id, FALSE);
  g_free (w);
  return id;
}

static gint
conv (Gen *g, gint x, gint in_c, gint k)
{
  gint w = weights (g, C, in_c, k);
  gint in[] = { x, w };
  g_autofree gchar *attrs = g_strdup_printf ("strides=\"1,1\" dilations=\"1,1\" pads_begin=\"%d,%d\" "
      "pads_end=\"%d,%d\" auto_pad=\"explicit\"", k / 2, k / 2, k / 2, k / 2);
  gint y = op (g, "Convolution", "opset1", attrs, 2, in, &TEST_SHAPE (1, C, HW, HW));
  if (g_rand_boolean (g->r)) {
    float bias[C];
    for (gint i = 0; i < C; i++)
      bias[i] = g_rand_double_range (g->r, -0.5, 0.5);
    gint b = test_ir_const (g->b, M2I_ET_F32, &TEST_SHAPE (1, C, 1, 1), bias);
    note (g, b, FALSE);
    gint ab[] = { y, b };
    y = op (g, "Add", "opset1", NULL, 2, ab, &TEST_SHAPE (1, C, HW, HW));
  }
  if (g_rand_boolean (g->r)) {
    gint in1[] = { y };
    y = op (g, "ReLU", "opset1", NULL, 1, in1, &TEST_SHAPE (1, C, HW, HW));
  }
  return y;
}

/* A random model; the names of its ops are appended to @op_names. */
static M2iIrModel *
random_model (GRand *r, GPtrArray *op_names)
{
  Gen g = { test_ir_new (11), r, g_array_new (FALSE, FALSE, sizeof (gint)),
    g_array_new (FALSE, FALSE, sizeof (gint)), op_names };
  M2iShape s = TEST_SHAPE (1, C, HW, HW);
  note (&g, test_ir_parameter (g.b, "x", M2I_ET_F32, &s), TRUE);
  gint n_params = 1;
  if (g_rand_boolean (r)) {
    note (&g, test_ir_parameter (g.b, "y", M2I_ET_F32, &s), TRUE);
    n_params++;
  }
  gint n_ops = g_rand_int_range (r, 2, 22);
  for (gint k = 0; k < n_ops; k++) {
    gint kind = g_rand_int_range (r, 0, 9);
    if (kind <= 1) {
      conv (&g, pick (&g), C, kind ? 3 : 1);
    } else if (kind == 2) {
      gint in[] = { pick (&g), pick (&g) };
      op (&g, "Add", "opset1", NULL, 2, in, &s);
    } else if (kind == 3) {
      gint in[] = { pick (&g) };
      op (&g, g_rand_boolean (r) ? "Sigmoid" : "ReLU", "opset1", NULL, 1, in, &s);
    } else if (kind == 4) {
      gint in[] = { pick (&g) };
      op (&g, "SoftMax", "opset8", "axis=\"1\"", 1, in, &s);
    } else if (kind == 5 || kind == 6) {
      gint in[] = { pick (&g) };
      op (&g, kind == 5 ? "MaxPool" : "AvgPool", "opset1", kind == 5 ?
          "kernel=\"3,3\" strides=\"1,1\" pads_begin=\"1,1\" pads_end=\"1,1\" rounding_type=\"floor\"" :
          "kernel=\"3,3\" strides=\"1,1\" pads_begin=\"1,1\" pads_end=\"1,1\" rounding_type=\"floor\" "
          "exclude-pad=\"true\"", 1, in, &s);
    } else {
      gint in[] = { pick (&g), pick (&g) };
      gint cat = op (&g, "Concat", "opset1", "axis=\"1\"", 2, in, &TEST_SHAPE (1, 2 * C, HW, HW));
      conv (&g, cat, 2 * C, 1);
    }
  }
  /* every value nobody reads is an output (an unused input stays unused) */
  for (guint k = 0; k < g.pool->len; k++) {
    gint id = g_array_index (g.pool, gint, k);
    if (id < n_params)
      continue;
    if (!g_array_index (g.uses, gint, id))
      test_ir_result (g.b, id);
  }
  GError *error = NULL;
  M2iIrModel *m = test_ir_load (g.b, &error);
  g_assert_no_error (error);
  g_array_free (g.pool, TRUE);
  g_array_free (g.uses, TRUE);
  test_ir_free (g.b);
  return m;
}

static gboolean
is_op (const M2iIrNode *n)
{
  const char *t = m2i_ir_node_get_type (n);
  return strcmp (t, "Parameter") && strcmp (t, "Const") && strcmp (t, "Result");
}

static gint
find_by_name (const M2iSplitPlan *plan, const char *name)
{
  return m2i_split_plan_find_tensor (plan, name);
}

/* The tensor name a value has in the plan (v11 tensor names "t<id>"). */
static gchar *
value_name (const M2iIrNode *n, gint port)
{
  const char *names = m2i_ir_node_get_output_names (n, port);
  return g_strdup (names ? names : m2i_ir_node_get_name (n));
}

static void
free_string (gpointer s)
{
  g_string_free (s, TRUE);
}

static void
check_plan (M2iIrModel *m, const M2iSplitPlan *plan, GHashTable *affinity)
{
  gint n_nodes = m2i_ir_model_get_n_nodes (m), n_pieces = m2i_split_plan_get_n_pieces (plan);
  g_assert_cmpint (n_pieces, >=, 1);
  /* every op in exactly one piece */
  gint *ops_in_piece = g_new0 (gint, MAX (n_pieces, 1));
  for (gint i = 0; i < n_nodes; i++) {
    const M2iIrNode *n = m2i_ir_model_get_node (m, i);
    gint p = m2i_split_plan_get_node_piece (plan, i);
    if (!is_op (n)) {
      g_assert_cmpint (p, ==, -1);
      continue;
    }
    g_assert_cmpint (p, >=, 0);
    g_assert_cmpint (p, <, n_pieces);
    ops_in_piece[p]++;
    M2iSplitPieceInfo pi;
    g_assert_true (m2i_split_plan_get_piece (plan, p, &pi));
    const char *type = m2i_ir_node_get_type (n);
    if (pi.device == M2I_SPLIT_DEVICE_M2I)
      g_assert_true (!strcmp (type, "Convolution") || !strcmp (type, "Add") ||
          !strcmp (type, "ReLU") || !strcmp (type, "MaxPool") || !strcmp (type, "AvgPool") ||
          !strcmp (type, "Concat"));
    const char *forced = affinity ? g_hash_table_lookup (affinity, m2i_ir_node_get_name (n)) : NULL;
    if (forced)
      g_assert_cmpstr (m2i_split_device_to_string (pi.device), ==, forced);
    /* the layer is in its piece's sub-model, and in no other */
    for (gint q = 0; q < n_pieces; q++) {
      M2iSplitPieceInfo qi;
      m2i_split_plan_get_piece (plan, q, &qi);
      const M2iIrNode *copy = m2i_ir_model_find_node (qi.model, m2i_ir_node_get_id (n));
      gboolean here = copy && !strcmp (m2i_ir_node_get_type (copy), type) &&
          !strcmp (m2i_ir_node_get_name (copy), m2i_ir_node_get_name (n));
      g_assert_cmpint (here, ==, q == p);
    }
  }
  for (gint p = 0; p < n_pieces; p++) {
    M2iSplitPieceInfo pi;
    m2i_split_plan_get_piece (plan, p, &pi);
    g_assert_cmpint (pi.n_ops, ==, ops_in_piece[p]);
    g_assert_cmpint (pi.n_ops, >, 0);
  }
  g_free (ops_in_piece);

  /* the tensors the model implies: name → attr, producer, reader pieces */
  GHashTable *want_attr = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  GHashTable *want_readers = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, free_string);
  for (gint i = 0; i < m2i_ir_model_get_n_inputs (m); i++)
    g_hash_table_insert (want_attr, value_name (m2i_ir_model_get_input (m, i)->node, 0),
        GINT_TO_POINTER (M2I_SPLIT_TENSOR_INPUT + 1));
  for (gint i = 0; i < m2i_ir_model_get_n_outputs (m); i++) {
    M2iIrNode *src;
    gint port;
    m2i_ir_node_get_input_source (m2i_ir_model_get_output (m, i)->node, 0, &src, &port);
    g_hash_table_insert (want_attr, value_name (src, port), GINT_TO_POINTER (M2I_SPLIT_TENSOR_OUTPUT + 1));
  }
  for (gint e = 0; e < m2i_ir_model_get_n_edges (m); e++) {
    gint fn, fp, tn, tp;
    m2i_ir_model_get_edge (m, e, &fn, &fp, &tn, &tp);
    const M2iIrNode *from = m2i_ir_model_get_node (m, fn), *to = m2i_ir_model_get_node (m, tn);
    if (!is_op (to) || !strcmp (m2i_ir_node_get_type (from), "Const"))
      continue;
    gint pf = m2i_split_plan_get_node_piece (plan, fn), pt = m2i_split_plan_get_node_piece (plan, tn);
    if (is_op (from))
      g_assert_cmpint (pf, <=, pt);            /* pieces in a topological order */
    if (is_op (from) && pf == pt)
      continue;
    gchar *name = value_name (from, fp);
    if (!g_hash_table_contains (want_attr, name))
      g_hash_table_insert (want_attr, g_strdup (name), GINT_TO_POINTER (M2I_SPLIT_TENSOR_INTERMEDIATE + 1));
    GString *readers = g_hash_table_lookup (want_readers, name);
    gchar *mark = g_strdup_printf ("[%d]", pt);
    if (!readers) {
      readers = g_string_new (NULL);
      g_hash_table_insert (want_readers, g_strdup (name), readers);
    }
    if (!strstr (readers->str, mark))
      g_string_append (readers, mark);
    g_free (mark);
    g_free (name);
  }
  g_assert_cmpint (m2i_split_plan_get_n_tensors (plan), ==, g_hash_table_size (want_attr));
  for (gint t = 0; t < m2i_split_plan_get_n_tensors (plan); t++) {
    M2iSplitTensorInfo ti;
    g_assert_true (m2i_split_plan_get_tensor (plan, t, &ti));
    g_assert_cmpint (find_by_name (plan, ti.name), ==, t);   /* listed once */
    gint attr = GPOINTER_TO_INT (g_hash_table_lookup (want_attr, ti.name)) - 1;
    g_assert_cmpint (attr, ==, ti.attr);
    g_assert_true (m2i_shape_equal (&ti.shape, &TEST_SHAPE (1, C, HW, HW)) ||
        m2i_shape_equal (&ti.shape, &TEST_SHAPE (1, 2 * C, HW, HW)));
    GString *readers = g_hash_table_lookup (want_readers, ti.name);
    GString *got = g_string_new (NULL);
    for (gint k = 0; k < ti.n_consumers; k++) {
      g_string_append_printf (got, "[%d]", ti.consumers[k]);
      if (k)
        g_assert_cmpint (ti.consumers[k - 1], <, ti.consumers[k]);
      if (ti.producer >= 0)
        g_assert_cmpint (ti.producer, <, ti.consumers[k]);
      /* the reader's sub-model takes the tensor */
      M2iSplitPieceInfo pi;
      m2i_split_plan_get_piece (plan, ti.consumers[k], &pi);
      g_assert_cmpint (m2i_ir_model_find_input (pi.model, ti.name), >=, 0);
    }
    for (gint k = 0; readers && k < ti.n_consumers; k++) {
      g_autofree gchar *mark = g_strdup_printf ("[%d]", ti.consumers[k]);
      g_assert_nonnull (strstr (readers->str, mark));
    }
    g_assert_cmpuint (got->len, ==, readers ? readers->len : 0);
    g_string_free (got, TRUE);
    if (ti.attr == M2I_SPLIT_TENSOR_INPUT) {
      g_assert_cmpint (ti.producer, ==, -1);
    } else {
      /* made by the piece that runs its layer */
      gint id = atoi (ti.name + 1);
      const M2iIrNode *src = m2i_ir_model_find_node (m, id);
      g_assert_cmpint (ti.producer, ==, m2i_split_plan_get_node_piece (plan, m2i_ir_node_get_index (src)));
      M2iSplitPieceInfo pi;
      m2i_split_plan_get_piece (plan, ti.producer, &pi);
      g_assert_cmpint (m2i_ir_model_find_output (pi.model, ti.name), >=, 0);
    }
  }
  /* each piece's sub-model takes and gives exactly its tensors */
  for (gint p = 0; p < n_pieces; p++) {
    M2iSplitPieceInfo pi;
    m2i_split_plan_get_piece (plan, p, &pi);
    g_assert_cmpint (m2i_ir_model_get_n_inputs (pi.model), ==, pi.n_inputs);
    g_assert_cmpint (m2i_ir_model_get_n_outputs (pi.model), ==, pi.n_outputs);
  }
  g_hash_table_unref (want_attr);
  g_hash_table_unref (want_readers);
}

/* The plan read back from a folder has the same pieces and tensors. */
static M2iSplitPlan *
round_trip (const M2iSplitPlan *plan)
{
  g_autofree gchar *dir = g_dir_make_tmp ("m2i-split-XXXXXX", NULL);
  GError *error = NULL;
  g_assert_true (m2i_split_plan_save (plan, dir, &error));
  g_assert_no_error (error);
  M2iSplitPlan *back = m2i_split_plan_load (dir, &error);
  g_assert_no_error (error);
  g_assert_cmpint (m2i_split_plan_get_n_pieces (back), ==, m2i_split_plan_get_n_pieces (plan));
  g_assert_cmpint (m2i_split_plan_get_n_tensors (back), ==, m2i_split_plan_get_n_tensors (plan));
  for (gint p = 0; p < m2i_split_plan_get_n_pieces (plan); p++) {
    M2iSplitPieceInfo a, b;
    m2i_split_plan_get_piece (plan, p, &a);
    m2i_split_plan_get_piece (back, p, &b);
    g_assert_cmpint (a.device, ==, b.device);
    g_assert_cmpint (a.engine, ==, b.engine);
    g_assert_cmpint (a.n_ops, ==, b.n_ops);
    g_assert_cmpint (a.n_inputs, ==, b.n_inputs);
    g_assert_cmpint (a.n_outputs, ==, b.n_outputs);
    for (gint k = 0; k < a.n_inputs + a.n_outputs; k++) {
      M2iSplitTensorInfo ta, tb;
      m2i_split_plan_get_tensor (plan, k < a.n_inputs ? a.inputs[k] : a.outputs[k - a.n_inputs], &ta);
      m2i_split_plan_get_tensor (back, k < a.n_inputs ? b.inputs[k] : b.outputs[k - a.n_inputs], &tb);
      g_assert_cmpstr (ta.name, ==, tb.name);
      g_assert_cmpint (ta.attr, ==, tb.attr);
      g_assert_true (m2i_shape_equal (&ta.shape, &tb.shape));
      g_assert_cmpint (ta.producer, ==, tb.producer);
    }
  }
  for (gint i = 0; i < m2i_split_plan_get_n_outputs (plan); i++) {
    M2iSplitTensorInfo ta, tb;
    m2i_split_plan_get_tensor (plan, m2i_split_plan_get_output (plan, i), &ta);
    m2i_split_plan_get_tensor (back, m2i_split_plan_get_output (back, i), &tb);
    g_assert_cmpstr (ta.name, ==, tb.name);
  }
  for (gint p = 0; p < m2i_split_plan_get_n_pieces (plan); p++) {
    g_autofree gchar *x = g_strdup_printf ("%s/graph_%d.xml", dir, p);
    g_autofree gchar *b = g_strdup_printf ("%s/graph_%d.bin", dir, p);
    g_unlink (x);
    g_unlink (b);
  }
  g_autofree gchar *j = g_build_filename (dir, "graph_infos.json", NULL);
  g_unlink (j);
  g_rmdir (dir);
  return back;
}

/* Split and unsplit outputs on the same random input. fp16 on the device:
 * within 1e-2 + 1e-2·|x| (a few fp16 roundings over some ten layers). */
static void
compare_runs (M2iIrModel *m, M2iSplitPlan *plan, GRand *r)
{
  GError *error = NULL;
  M2iSplitRunOptions ro = { 1 };
  M2iSplitRunner *run = m2i_split_runner_new (plan, &ro, &error);
  g_assert_no_error (error);
  M2iIrCompiledModel *cm = m2i_ir_compile (m, NULL, &error);
  g_assert_no_error (error);
  M2iIrInferRequest *req = m2i_ir_infer_request_new (cm, &error);
  for (gint i = 0; i < m2i_ir_model_get_n_inputs (m); i++) {
    M2iTensor *t = m2i_split_runner_get_input (run, i);
    for (gint64 k = 0; k < m2i_shape_numel (&t->shape); k++)
      ((float *) t->data)[k] = g_rand_double_range (r, -1, 1);
    g_assert_true (m2i_ir_infer_request_set_input (req, i, t, &error));
  }
  g_assert_true (m2i_split_runner_run (run, &error));
  g_assert_no_error (error);
  g_assert_true (m2i_ir_infer_request_infer (req, &error));
  for (gint i = 0; i < m2i_ir_model_get_n_outputs (m); i++) {
    const M2iTensor *a = m2i_split_runner_get_output (run, i);
    const M2iTensor *b = m2i_ir_infer_request_get_output (req, i);
    g_assert_true (m2i_shape_equal (&a->shape, &b->shape));
    for (gint64 k = 0; k < m2i_shape_numel (&a->shape); k++) {
      float x = ((const float *) a->data)[k], y = ((const float *) b->data)[k];
      if (!(fabsf (x - y) <= 1e-2f + 1e-2f * fabsf (y)))
        g_error ("output %d element %" G_GINT64_FORMAT ": split %g, unsplit %g", i, k, x, y);
    }
  }
  m2i_ir_infer_request_free (req);
  m2i_ir_compiled_model_unref (cm);
  m2i_split_runner_free (run);
}

static void
test_random_models (void)
{
  GRand *r = g_rand_new_with_seed (77);
  gint n_device = 0, n_pieces = 0, n_runs = 0;
  for (gint it = 0; it < 300; it++) {
    GPtrArray *names = g_ptr_array_new_with_free_func (g_free);
    M2iIrModel *m = random_model (r, names);
    static const char *devices[] = { "HETERO:M2I,CPU", "HETERO:M2I,CPU", "HETERO:M2I,CPU",
      "HETERO:CPU,M2I", "CPU" };
    M2iSplitOptions opts;
    m2i_split_options_init (&opts);
    opts.devices = devices[g_rand_int_range (r, 0, G_N_ELEMENTS (devices))];
    opts.keep_all_device_pieces = g_rand_int_range (r, 0, 10) < 8;
    GHashTable *aff = g_hash_table_new (g_str_hash, g_str_equal);
    for (guint k = 0; k < names->len; k++) {
      const char *name = names->pdata[k];
      gint roll = g_rand_int_range (r, 0, 100);
      gboolean capable = g_str_has_prefix (name, "Convolution") ||
          g_str_has_prefix (name, "MaxPool") || g_str_has_prefix (name, "AvgPool");
      if (roll < 10)
        g_hash_table_insert (aff, (gpointer) name, "CPU");
      else if (roll < 20 && capable && strcmp (opts.devices, "CPU"))
        g_hash_table_insert (aff, (gpointer) name, "M2I");
    }
    opts.affinity = aff;
    GError *error = NULL;
    M2iSplitPlan *plan = m2i_split_plan_new (m, &opts, &error);
    g_assert_no_error (error);
    check_plan (m, plan, aff);
    /* folders cost file-system time: one plan in three goes through one */
    M2iSplitPlan *back = it % 3 == 0 ? round_trip (plan) : m2i_split_plan_ref (plan);
    for (gint p = 0; p < m2i_split_plan_get_n_pieces (plan); p++) {
      M2iSplitPieceInfo pi;
      m2i_split_plan_get_piece (plan, p, &pi);
      n_device += pi.device == M2I_SPLIT_DEVICE_M2I;
    }
    n_pieces += m2i_split_plan_get_n_pieces (plan);
    if (it % 4 == 0) {
      compare_runs (m, g_rand_boolean (r) ? plan : back, r);
      n_runs++;
    }
    m2i_split_plan_unref (back);
    m2i_split_plan_unref (plan);
    g_hash_table_unref (aff);
    g_ptr_array_unref (names);
    m2i_ir_model_unref (m);
  }
  g_test_message ("%d pieces, %d on the device, %d models run", n_pieces, n_device, n_runs);
  g_assert_cmpint (n_device, >, 200);
  g_assert_cmpint (n_pieces, >, 2 * n_device);
  g_rand_free (r);
}

/* Forcing onto the device a layer it cannot run, or onto a device the list
 * does not name, or naming a layer the model lacks: clear errors. */
static void
test_bad_affinity (void)
{
  GRand *r = g_rand_new_with_seed (5);
  TestIr *b = test_ir_new (11);
  M2iShape s = TEST_SHAPE (1, C, HW, HW);
  gint x = test_ir_parameter (b, "x", M2I_ET_F32, &s);
  gint in[] = { x };
  gint sg = test_ir_op (b, "Sigmoid", "opset1", NULL, 1, in, M2I_ET_F32, &s);
  test_ir_result (b, sg);
  M2iIrModel *m = test_ir_load (b, NULL);
  M2iSplitOptions opts;
  m2i_split_options_init (&opts);
  GHashTable *aff = g_hash_table_new (g_str_hash, g_str_equal);
  opts.affinity = aff;
  GError *error = NULL;
  g_hash_table_insert (aff, "Sigmoid_1", "M2I");
  g_assert_null (m2i_split_plan_new (m, &opts, &error));
  g_assert_error (error, M2I_ERROR, M2I_ERROR_UNSUPPORTED);
  g_assert_nonnull (strstr (error->message, "Sigmoid_1"));
  g_assert_nonnull (strstr (error->message, "no device kernel"));
  g_clear_error (&error);
  opts.devices = "CPU";
  g_assert_null (m2i_split_plan_new (m, &opts, &error));
  g_assert_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "does not name"));
  g_clear_error (&error);
  g_hash_table_remove_all (aff);
  g_hash_table_insert (aff, "nope", "CPU");
  g_assert_null (m2i_split_plan_new (m, &opts, &error));
  g_assert_nonnull (strstr (error->message, "'nope'"));
  g_clear_error (&error);
  g_hash_table_remove_all (aff);
  g_hash_table_insert (aff, "Sigmoid_1", "GPU");
  g_assert_null (m2i_split_plan_new (m, &opts, &error));
  g_assert_nonnull (strstr (error->message, "GPU"));
  g_clear_error (&error);
  g_hash_table_remove_all (aff);
  opts.devices = "HETERO:M2I,NPU";
  g_assert_null (m2i_split_plan_new (m, &opts, &error));
  g_assert_nonnull (strstr (error->message, "unknown device \"NPU\""));
  g_clear_error (&error);
  /* only the device, and a layer it cannot run */
  opts.devices = "M2I";
  g_assert_null (m2i_split_plan_new (m, &opts, &error));
  g_assert_nonnull (strstr (error->message, "add CPU to the device list"));
  g_clear_error (&error);
  g_hash_table_unref (aff);
  m2i_ir_model_unref (m);
  test_ir_free (b);
  g_rand_free (r);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/split/random/models", test_random_models);
  g_test_add_func ("/split/random/bad-affinity", test_bad_affinity);
  return g_test_run ();
}
