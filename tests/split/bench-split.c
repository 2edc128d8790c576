/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-split — split execution against the plain CPU runtime, in one run.
 *
 *   build/tests/split/bench-split [--rounds N] [--threads T] [MODEL.xml ...]
 *
 * For each model (default: squeezenet1.1 and person-detection-retail-0013
 * from $M2I_SHARED_MODELS, else ../shared/models/external) it splits the
 * model under "HETERO:M2I,CPU", then times, on the same random input and
 * at 1 and 2 threads, the split runner (m2i_split_runner_run: every piece
 * and boundary conversion, the device emulated on this CPU) and the whole
 * model on the IR runtime (m2i_ir_infer_request_infer). Each figure is the
 * fastest of N rounds (default 7) of enough inferences to take ~0.3 s, so a
 * shared machine's other jobs show less; after the one-thread line, the
 * split run's time per engine (mean over all its runs) and the bytes its
 * boundaries convert. Not a test: figures go to docs/split.md.
 */
#include <base/m2i-fp16.h>
#include <ir/m2i-ir.h>
#include <split/m2i-split.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef gboolean (*RunFunc) (gpointer obj, GError **error);

static gboolean
run_split (gpointer obj, GError **error)
{
  return m2i_split_runner_run (obj, error);
}

static gboolean
run_cpu (gpointer obj, GError **error)
{
  return m2i_ir_infer_request_infer (obj, error);
}

/* Fastest ms per inference over @rounds rounds. */
static double
time_it (RunFunc fn, gpointer obj, gint rounds)
{
  GError *error = NULL;
  gint64 t0 = g_get_monotonic_time ();
  gint calib = 0;
  while (g_get_monotonic_time () - t0 < 50000 || calib < 2) {
    if (!fn (obj, &error))
      g_error ("%s", error->message);
    calib++;
  }
  double per = (double) (g_get_monotonic_time () - t0) / calib;
  gint n = MAX (3, (gint) (300000 / MAX (per, 1.0)));
  double best = G_MAXDOUBLE;
  for (gint r = 0; r < rounds; r++) {
    gint64 s = g_get_monotonic_time ();
    for (gint i = 0; i < n; i++)
      fn (obj, NULL);
    best = MIN (best, (double) (g_get_monotonic_time () - s) / n / 1000.0);
  }
  return best;
}

static void
fill_random (M2iTensor *t, GRand *rng)
{
  gint64 n = m2i_shape_numel (&t->shape);
  for (gint64 i = 0; i < n; i++) {
    if (t->type == M2I_ET_F32)
      ((float *) t->data)[i] = g_rand_double_range (rng, 0, 255);
    else if (t->type == M2I_ET_F16)
      ((m2i_f16 *) t->data)[i] = m2i_f32_to_f16 (g_rand_double_range (rng, 0, 255));
    else if (t->type == M2I_ET_U8)
      ((guint8 *) t->data)[i] = g_rand_int_range (rng, 0, 256);
  }
}

static void
bench_model (const char *path, gint rounds, gint max_threads)
{
  GError *error = NULL;
  M2iIrModel *m = m2i_ir_model_load (path, NULL, &error);
  if (!m) {
    g_printerr ("%s\n", error->message);
    exit (1);
  }
  M2iSplitPlan *plan = m2i_split_plan_new (m, NULL, &error);
  if (!plan)
    g_error ("%s", error->message);
  gint n_dev = 0;
  for (gint p = 0; p < m2i_split_plan_get_n_pieces (plan); p++) {
    M2iSplitPieceInfo pi;
    m2i_split_plan_get_piece (plan, p, &pi);
    n_dev += pi.device == M2I_SPLIT_DEVICE_M2I;
  }
  printf ("\n%s: %d pieces (%d on the device)\n", m2i_ir_model_get_name (m),
      m2i_split_plan_get_n_pieces (plan), n_dev);
  printf ("threads  split run ms  CPU runtime ms  split / CPU\n");
  for (gint th = 1; th <= max_threads; th++) {
    M2iSplitRunOptions ro = { th };
    M2iSplitRunner *r = m2i_split_runner_new (plan, &ro, &error);
    if (!r)
      g_error ("%s", error->message);
    M2iIrCompileOptions co = { .n_threads = th };
    M2iIrCompiledModel *cm = m2i_ir_compile (m, &co, &error);
    if (!cm)
      g_error ("%s", error->message);
    M2iIrInferRequest *req = m2i_ir_infer_request_new (cm, &error);
    GRand *rng = g_rand_new_with_seed (1);
    for (gint i = 0; i < m2i_ir_model_get_n_inputs (m); i++) {
      M2iTensor *t = m2i_split_runner_get_input (r, i);
      fill_random (t, rng);
      if (!m2i_ir_infer_request_set_input (req, i, t, &error))
        g_error ("%s", error->message);
    }
    g_rand_free (rng);
    double ts = time_it (run_split, r, rounds), tc = time_it (run_cpu, req, rounds);
    printf ("%7d  %12.3f  %14.3f  %11.2f\n", th, ts, tc, ts / tc);
    if (th == 1) {             /* where the time goes, per engine */
      double ms[4] = { 0 };
      guint64 bytes = 0;
      gint count[4] = { 0 };
      for (gint p = 0; p < m2i_split_plan_get_n_pieces (plan); p++) {
        M2iSplitPieceInfo pi;
        M2iSplitPieceStats st;
        m2i_split_plan_get_piece (plan, p, &pi);
        m2i_split_runner_get_piece_stats (r, p, &st);
        ms[pi.engine] += st.runs ? st.wall_ns / 1e6 / st.runs : 0;
        bytes += st.runs ? st.boundary_bytes / st.runs : 0;
        count[pi.engine]++;
      }
      for (gint e = 0; e < 4; e++)
        if (count[e])
          printf ("         %3d %-8s pieces %8.3f ms/run\n", count[e],
              m2i_split_engine_to_string (e), ms[e]);
      printf ("         boundary conversions: %.2f MB/run\n", bytes / 1e6);
    }
    m2i_ir_infer_request_free (req);
    m2i_ir_compiled_model_unref (cm);
    m2i_split_runner_free (r);
  }
  m2i_split_plan_unref (plan);
  m2i_ir_model_unref (m);
}

int
main (int argc, char **argv)
{
  gint rounds = 7, threads = 2;
  gchar **models = NULL;
  GOptionEntry entries[] = {
    { "rounds", 'r', 0, G_OPTION_ARG_INT, &rounds, "Rounds per figure (the fastest counts)", "N" },
    { "threads", 't', 0, G_OPTION_ARG_INT, &threads, "Largest thread count", "T" },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &models, NULL, "MODEL.xml…" },
    { NULL }
  };
  GOptionContext *ctx = g_option_context_new ("[MODEL.xml…]");
  g_option_context_add_main_entries (ctx, entries, NULL);
  GError *error = NULL;
  if (!g_option_context_parse (ctx, &argc, &argv, &error)) {
    g_printerr ("%s\n", error->message);
    return 2;
  }
  g_option_context_free (ctx);
  if (models) {
    for (gchar **m = models; *m; m++)
      bench_model (*m, MAX (rounds, 1), MAX (threads, 1));
  } else {
    const char *dir = g_getenv ("M2I_SHARED_MODELS");
    const char *names[] = { "squeezenet1.1/squeezenet1.1.xml",
      "person-detection-retail-0013/person-detection-retail-0013.xml" };
    for (guint i = 0; i < G_N_ELEMENTS (names); i++) {
      g_autofree gchar *p = g_build_filename (dir ? dir : "../shared/models/external", names[i], NULL);
      if (!g_file_test (p, G_FILE_TEST_EXISTS)) {
        g_printerr ("%s: not found (set M2I_SHARED_MODELS)\n", p);
        continue;
      }
      bench_model (p, MAX (rounds, 1), MAX (threads, 1));
    }
  }
  g_strfreev (models);
  return 0;
}
