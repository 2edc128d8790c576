/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* m2i-split — split execution from the command line, with AutoSplit's two
 * verbs:
 *
 *   m2i-split split model.xml -o DIR [--device HETERO:M2I,CPU] [--dot FILE]
 *             [--affinity LAYER=CPU ...] [--keep-all] [--profile extended]
 *   m2i-split run DIR [-i [NAME=]FILE ...] [--random SEED] [--threads N]
 *             [--iterations N] [--compare model.xml] [--top-k K] [--dot FILE]
 *             [--dump DIR]
 *
 * "split" partitions the model, writes graph_infos.json and one IR pair per
 * piece into DIR and prints the plan: pieces, devices, op counts, boundary
 * tensors and their sizes. "run" loads such a folder, feeds the inputs (raw
 * files of the tensor's declared type, or seeded random data), runs it and
 * prints the outputs, what each piece did and the device counters; with
 * --compare it also runs the unsplit model on the CPU and prints the largest
 * difference.
 */
#include "m2i-data.h"
#include "m2i-tensor-print.h"

#include <m2i-core/base/m2i-error.h>
#include <m2i-core/m2i/m2i-device.h>
#include <m2i-core/split/m2i-split.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static gchar *opt_out;
static gchar *opt_device;
static gchar *opt_dot;
static gchar **opt_affinity;
static gboolean opt_keep_all;
static gchar *opt_profile;
static gchar **opt_inputs;
static gint opt_random = -1;
static gint opt_threads;
static gint opt_iterations = 1;
static gchar *opt_compare;
static gint opt_top_k = 5;
static gboolean opt_explain;
static gchar *opt_dump;
static guint64 opt_max_memory;

static gboolean
parse_max_memory (const gchar *name, const gchar *value, gpointer data, GError **error)
{
  return m2i_data_parse_size (value, &opt_max_memory, error);
}

static const GOptionEntry entries[] = {
  { "output", 'o', 0, G_OPTION_ARG_FILENAME, &opt_out, "split: folder to write the plan into", "DIR" },
  { "device", 'd', 0, G_OPTION_ARG_STRING, &opt_device,
    "split: device priority (default HETERO:M2I,CPU; also CPU, M2I)", "DEVICES" },
  { "dot", 0, 0, G_OPTION_ARG_FILENAME, &opt_dot, "Write a DOT picture of the plan", "FILE" },
  { "affinity", 'a', 0, G_OPTION_ARG_STRING_ARRAY, &opt_affinity,
    "split: force a layer onto a device (repeatable)", "LAYER=DEVICE" },
  { "keep-all", 0, 0, G_OPTION_ARG_NONE, &opt_keep_all,
    "split: keep device pieces that do not pay for their transfers", NULL },
  { "profile", 0, 0, G_OPTION_ARG_STRING, &opt_profile,
    "split: M2I block profile of the head (default, extended)", "P" },
  { "input", 'i', 0, G_OPTION_ARG_FILENAME_ARRAY, &opt_inputs,
    "run: raw input (declared type), in input order or NAME=FILE, NAME the tensor's or the "
    "Parameter's name (repeatable)", "[NAME=]FILE" },
  { "random", 0, 0, G_OPTION_ARG_INT, &opt_random, "run: random inputs from SEED", "SEED" },
  { "threads", 'n', 0, G_OPTION_ARG_INT, &opt_threads, "run: threads per piece (default: cores)", "N" },
  { "iterations", 0, 0, G_OPTION_ARG_INT, &opt_iterations, "run: inferences to time (default 1)", "N" },
  { "compare", 'c', 0, G_OPTION_ARG_FILENAME, &opt_compare,
    "run: also run this model unsplit on the CPU and compare", "MODEL.xml" },
  { "explain", 'x', 0, G_OPTION_ARG_NONE, &opt_explain,
    "split: print the cost rule's verdict on every device island", NULL },
  { "top-k", 'k', 0, G_OPTION_ARG_INT, &opt_top_k, "run: classes to print (default 5)", "K" },
  { "dump", 0, 0, G_OPTION_ARG_FILENAME, &opt_dump,
    "run: write each output as raw data into DIR/NAME.TYPE (NAME.f32, ...)", "DIR" },
  { "max-memory", 0, 0, G_OPTION_ARG_CALLBACK, parse_max_memory, "Memory the model (split) or "
    "the runner (run) may need, e.g. 512M (default 4G); more is refused", "SIZE" },
  { NULL }
};

static int
die (GError *error)
{
  fprintf (stderr, "m2i-split: %s\n", error->message);
  g_error_free (error);
  return 1;
}

static gboolean
write_dot (const M2iSplitPlan *plan, GError **error)
{
  if (!opt_dot)
    return TRUE;
  g_autofree gchar *dot = m2i_split_plan_to_dot (plan);
  if (!g_file_set_contents (opt_dot, dot, -1, error))
    return FALSE;
  printf ("DOT picture: %s (render with: dot -Tsvg %s -o plan.svg)\n", opt_dot, opt_dot);
  return TRUE;
}

static int
cmd_split (const char *xml)
{
  GError *error = NULL;
  if (!opt_out) {
    fprintf (stderr, "m2i-split split: give the output folder with -o DIR\n");
    return 2;
  }
  M2iIrModel *model = m2i_ir_model_load (xml, NULL, &error);
  if (!model)
    return die (error);
  M2iSplitOptions opts;
  m2i_split_options_init (&opts);
  opts.devices = opt_device;
  opts.keep_all_device_pieces = opt_keep_all;
  opts.max_memory = opt_max_memory;
  if (opt_profile && !m2i_profile_from_string (opt_profile, &opts.m2i_profile)) {
    fprintf (stderr, "m2i-split: --profile is default or extended\n");
    return 2;
  }
  GHashTable *aff = g_hash_table_new (g_str_hash, g_str_equal);
  for (gchar **a = opt_affinity; a && *a; a++) {
    gchar *eq = strrchr (*a, '=');
    if (!eq) {
      fprintf (stderr, "m2i-split: --affinity takes LAYER=DEVICE, not %s\n", *a);
      return 2;
    }
    *eq = 0;
    g_hash_table_insert (aff, *a, eq + 1);
  }
  opts.affinity = aff;
  M2iSplitPlan *plan = m2i_split_plan_new (model, &opts, &error);
  g_hash_table_unref (aff);
  m2i_ir_model_unref (model);
  if (!plan || !m2i_split_plan_save (plan, opt_out, &error) || !write_dot (plan, &error))
    return die (error);
  g_autofree gchar *text = m2i_split_plan_to_string (plan);
  printf ("%s -> %s\n%s\n", xml, opt_out, text);
  if (opt_explain)
    printf ("cost rule (docs/split.md):\n%s", m2i_split_plan_get_decisions (plan));
  m2i_split_plan_unref (plan);
  return 0;
}

/* Whether input @i of @plan is called @name: its tensor name, or, in a
 * piece that reads it, the Parameter's name or any of its tensor names. */
static gboolean
input_called (const M2iSplitPlan *plan, gint i, const char *name)
{
  M2iSplitTensorInfo t;
  m2i_split_plan_get_tensor (plan, m2i_split_plan_get_input (plan, i), &t);
  if (!strcmp (t.name, name))
    return TRUE;
  for (gint c = 0; c < t.n_consumers; c++) {
    M2iSplitPieceInfo p;
    m2i_split_plan_get_piece (plan, t.consumers[c], &p);
    gint k = p.model ? m2i_ir_model_find_input (p.model, name) : -1;
    if (k >= 0 && m2i_ir_model_find_input (p.model, t.name) == k)
      return TRUE;
  }
  return FALSE;
}

/* Every NAME=FILE of -i names an input of @plan. */
static gboolean
check_input_names (const M2iSplitPlan *plan, GError **error)
{
  for (gint k = 0; opt_inputs && opt_inputs[k]; k++) {
    const char *eq = strchr (opt_inputs[k], '=');
    if (!eq)
      continue;
    g_autofree gchar *name = g_strndup (opt_inputs[k], eq - opt_inputs[k]);
    gboolean found = FALSE;
    GString *names = g_string_new (NULL);
    for (gint i = 0; i < m2i_split_plan_get_n_inputs (plan) && !found; i++) {
      M2iSplitTensorInfo info;
      m2i_split_plan_get_tensor (plan, m2i_split_plan_get_input (plan, i), &info);
      g_string_append_printf (names, "%s'%s'", i ? ", " : "", info.name);
      found = input_called (plan, i, name);
    }
    if (!found)
      g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, "-i %s: the plan has no input "
          "'%s' (its inputs: %s)", opt_inputs[k], name, names->str);
    g_string_free (names, TRUE);
    if (!found)
      return FALSE;
  }
  return TRUE;
}

/* Writes output @t as DIR/NAME.TYPE (raw, the tensor's own type). */
static gboolean
dump_output (const char *name, const M2iTensor *t, GError **error)
{
  if (g_mkdir_with_parents (opt_dump, 0755) < 0) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_IO, "--dump: cannot make the folder %s", opt_dump);
    return FALSE;
  }
  g_autofree gchar *path = NULL;
  if (!m2i_tool_dump (opt_dump, name, t, &path, error))
    return FALSE;
  printf ("wrote %s\n", path);
  return TRUE;
}

/* Reads or makes input @i of the runner. */
static gboolean
fill_input (M2iSplitRunner *r, const M2iSplitPlan *plan, gint i, GRand *rng, GError **error)
{
  M2iTensor *t = m2i_split_runner_get_input (r, i);
  M2iSplitTensorInfo info;
  m2i_split_plan_get_tensor (plan, m2i_split_plan_get_input (plan, i), &info);
  const char *file = NULL;
  for (gint k = 0; opt_inputs && opt_inputs[k]; k++) {
    const char *eq = strchr (opt_inputs[k], '=');
    if (!eq)
      continue;
    g_autofree gchar *name = g_strndup (opt_inputs[k], eq - opt_inputs[k]);
    if (input_called (plan, i, name))
      file = eq + 1;
  }
  if (!file && opt_inputs && (guint) i < g_strv_length (opt_inputs) && !strchr (opt_inputs[i], '='))
    file = opt_inputs[i];
  gsize want = m2i_tensor_nbytes (t);
  if (file) {
    gchar *data;
    gsize len;
    if (!g_file_get_contents (file, &data, &len, error))
      return FALSE;
    gint64 n = m2i_shape_numel (&t->shape);
    if (t->type == M2I_ET_F16 && len == (gsize) n * 4) {    /* f32 data for an f16 input */
      m2i_f32_to_f16_n ((const float *) data, t->data, n);
      g_free (data);
      return TRUE;
    }
    if (len != want) {
      g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
          "%s has %" G_GSIZE_FORMAT " bytes; input '%s' (%s) needs %" G_GSIZE_FORMAT "%s", file,
          len, info.name, m2i_element_type_to_string (t->type), want,
          t->type == M2I_ET_F16 ? " (or f32 data, twice that)" : "");
      g_free (data);
      return FALSE;
    }
    memcpy (t->data, data, want);
    g_free (data);
    return TRUE;
  }
  if (!rng) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "no data for input '%s': give -i %s=FILE or --random SEED", info.name, info.name);
    return FALSE;
  }
  gint64 n = m2i_shape_numel (&t->shape);
  for (gint64 k = 0; k < n; k++) {
    double v = g_rand_double_range (rng, 0, 255);
    switch (t->type) {
      case M2I_ET_F32: ((float *) t->data)[k] = v; break;
      case M2I_ET_F16: ((m2i_f16 *) t->data)[k] = m2i_f32_to_f16 (v); break;
      case M2I_ET_U8: ((guint8 *) t->data)[k] = (guint8) v; break;
      default: memset (t->data, 0, want); k = n; break;
    }
  }
  return TRUE;
}

static void
print_output (const char *name, const M2iTensor *t)
{
  if (m2i_tool_is_classifier (t) && opt_top_k > 0) {
    printf ("output %s:\n", name);
    m2i_tool_print_top_k (stdout, t, opt_top_k, NULL);
  } else
    m2i_tool_print_summary (stdout, name, t);
}

static double
compare (M2iSplitRunner *r, const M2iSplitPlan *plan, GError **error)
{
  M2iIrModel *model = m2i_ir_model_load (opt_compare, NULL, error);
  if (!model)
    return -1;
  M2iIrCompileOptions copts = { .n_threads = opt_threads, .max_memory = opt_max_memory };
  M2iIrCompiledModel *cm = m2i_ir_compile (model, &copts, error);
  M2iIrInferRequest *req = cm ? m2i_ir_infer_request_new (cm, error) : NULL;
  double worst = -1;
  if (req) {
    gboolean ok = TRUE;
    for (gint i = 0; i < m2i_ir_model_get_n_inputs (model) && ok; i++)
      ok = m2i_ir_infer_request_set_input (req, i, m2i_split_runner_get_input (r, i), error);
    if (ok && m2i_ir_infer_request_infer (req, error)) {
      worst = 0;
      for (gint i = 0; i < m2i_split_plan_get_n_outputs (plan); i++) {
        const M2iTensor *a = m2i_split_runner_get_output (r, i);
        const M2iTensor *b = m2i_ir_infer_request_get_output (req, i);
        if (a->type != M2I_ET_F32 || b->type != M2I_ET_F32)
          continue;
        for (gint64 k = 0; k < m2i_shape_numel (&a->shape); k++)
          worst = MAX (worst, fabs (((const float *) a->data)[k] - ((const float *) b->data)[k]));
      }
    }
    m2i_ir_infer_request_free (req);
  }
  if (cm)
    m2i_ir_compiled_model_unref (cm);
  m2i_ir_model_unref (model);
  return worst;
}

static int
cmd_run (const char *dir)
{
  GError *error = NULL;
  M2iSplitPlan *plan = m2i_split_plan_load (dir, &error);
  if (!plan || !write_dot (plan, &error))
    return die (error);
  g_autofree gchar *text = m2i_split_plan_to_string (plan);
  printf ("%s\n%s\n", dir, text);
  M2iSplitRunOptions ropts = { opt_threads, opt_max_memory };
  M2iSplitRunner *r = m2i_split_runner_new (plan, &ropts, &error);
  if (!r)
    return die (error);
  if (!check_input_names (plan, &error))
    return die (error);
  GRand *rng = opt_random >= 0 ? g_rand_new_with_seed (opt_random) : NULL;
  for (gint i = 0; i < m2i_split_plan_get_n_inputs (plan); i++)
    if (!fill_input (r, plan, i, rng, &error))
      return die (error);
  if (rng)
    g_rand_free (rng);
  m2i_device_reset_counters (m2i_device_get_default ());
  gint64 t0 = g_get_monotonic_time ();
  for (gint it = 0; it < MAX (opt_iterations, 1); it++)
    if (!m2i_split_runner_run (r, &error))
      return die (error);
  double ms = (g_get_monotonic_time () - t0) / 1000.0 / MAX (opt_iterations, 1);
  for (gint i = 0; i < m2i_split_plan_get_n_outputs (plan); i++) {
    M2iSplitTensorInfo info;
    m2i_split_plan_get_tensor (plan, m2i_split_plan_get_output (plan, i), &info);
    print_output (info.name, m2i_split_runner_get_output (r, i));
    if (opt_dump && !dump_output (info.name, m2i_split_runner_get_output (r, i), &error))
      return die (error);
  }
  printf ("%.3f ms per inference on this machine (%d run%s)\n", ms, MAX (opt_iterations, 1),
      opt_iterations > 1 ? "s" : "");
  for (gint p = 0; p < m2i_split_plan_get_n_pieces (plan); p++) {
    M2iSplitPieceInfo pi;
    M2iSplitPieceStats st;
    m2i_split_plan_get_piece (plan, p, &pi);
    m2i_split_runner_get_piece_stats (r, p, &st);
    printf ("piece %d %-3s %-8s %.3f ms/run", p, m2i_split_device_to_string (pi.device),
        m2i_split_engine_to_string (pi.engine), st.wall_ns / 1e6 / MAX (st.runs, 1));
    if (pi.device != M2I_SPLIT_DEVICE_CPU)
      printf (", device %" G_GUINT64_FORMAT " layers %" G_GUINT64_FORMAT " cycles/run",
          st.device_layers / MAX (st.runs, 1), st.device_cycles / MAX (st.runs, 1));
    printf (", %" G_GUINT64_FORMAT " boundary bytes/run\n", st.boundary_bytes / MAX (st.runs, 1));
  }
  M2iDeviceCounters c;
  m2i_device_get_counters (m2i_device_get_default (), &c);
  printf ("device counters: %" G_GUINT64_FORMAT " runs, %" G_GUINT64_FORMAT " device tasks, %"
      G_GUINT64_FORMAT " cycles (%.3f ms at %g GHz per inference), %" G_GUINT64_FORMAT
      " bytes read, %" G_GUINT64_FORMAT " written\n", c.runs, c.tasks_device, c.cycles,
      c.cycles / (M2I_DEVICE_CLOCK_HZ / 1e3) / MAX (opt_iterations, 1),
      M2I_DEVICE_CLOCK_HZ / 1e9, c.bytes_read, c.bytes_written);
  int rc = 0;
  if (opt_compare) {
    double d = compare (r, plan, &error);
    if (d < 0)
      rc = die (error);
    else
      printf ("largest difference from the unsplit model on the CPU: %.3g\n", d);
  }
  m2i_split_runner_free (r);
  m2i_split_plan_unref (plan);
  return rc;
}

int
main (int argc, char **argv)
{
  GOptionContext *ctx = g_option_context_new ("split MODEL.xml -o DIR | run DIR");
  g_option_context_set_summary (ctx, "Split a model between the M2I device and the CPU "
      "(AutoSplit's graph_infos.json folders), or run such a folder.");
  g_option_context_add_main_entries (ctx, entries, NULL);
  GError *error = NULL;
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    return die (error);
  int rc = 2;
  if (argc == 3 && !strcmp (argv[1], "split"))
    rc = cmd_split (argv[2]);
  else if (argc == 3 && !strcmp (argv[1], "run"))
    rc = cmd_run (argv[2]);
  else {
    g_autofree gchar *help = g_option_context_get_help (ctx, TRUE, NULL);
    fprintf (stderr, "%s", help);
  }
  g_option_context_free (ctx);
  return rc;
}
