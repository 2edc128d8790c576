/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-ir-layers — where an IR model's inference time goes, layer by layer.
 *
 * Usage: bench-ir-layers MODEL.xml [-n THREADS] [--iterations N]
 *
 * For every layer run per inference it prints the median time inside whole
 * inferences ("in net": its inputs were just written by the layers before
 * it, its weights were last touched one inference ago) and the median time
 * of the same layer run alone over and over ("alone": inputs, weights and
 * output hot in cache), with the output's shape. The difference is what the
 * network's cache traffic costs that layer; the sum of the "in net" column
 * against a whole inference's time is what the runtime costs around the
 * kernels. Compare with ONNX Runtime's per-node profile
 * (tests/bench/onnx/ort-run.mjs --profile). M2I_BENCH_CLOCK=thread times
 * with the thread's CPU clock instead (see bench-time.h).
 */
#include <ir/m2i-ir.h>
#include <ir/ir-compile.h>
#include "../bench-time.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The wall clock, or with M2I_BENCH_CLOCK=thread the thread's CPU clock
 * (bench-time.h), and the profile's matching counter. */
static guint64
now_ns (void)
{
  return (guint64) (bench_now_s () * 1e9);
}

static guint64
layer_ns (const M2iIrLayerProfile *p)
{
  return !g_strcmp0 (g_getenv ("M2I_BENCH_CLOCK"), "thread") ? p->cpu_ns : p->total_ns;
}

static gint
cmp_u64 (gconstpointer a, gconstpointer b)
{
  guint64 x = *(const guint64 *) a, y = *(const guint64 *) b;
  return x < y ? -1 : x > y;
}

static double
median_ms (guint64 *v, gint n)
{
  qsort (v, n, sizeof *v, (int (*) (const void *, const void *)) cmp_u64);
  return v[n / 2] / 1e6;
}

int
main (int argc, char **argv)
{
  gint threads = 1, iterations = 200;
  gchar **rest = NULL;
  GOptionEntry entries[] = {
    { "threads", 'n', 0, G_OPTION_ARG_INT, &threads, "threads per inference", "N" },
    { "iterations", 0, 0, G_OPTION_ARG_INT, &iterations, "inferences timed", "N" },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &rest, NULL, "MODEL.xml" },
    { NULL }
  };
  GError *error = NULL;
  GOptionContext *oc = g_option_context_new ("MODEL.xml");
  g_option_context_add_main_entries (oc, entries, NULL);
  if (!g_option_context_parse (oc, &argc, &argv, &error) || !rest || !rest[0]) {
    fprintf (stderr, "bench-ir-layers: %s\n", error ? error->message : "give a model");
    return 2;
  }
  g_option_context_free (oc);
  iterations = MAX (iterations, 3);

  M2iIrModel *model = m2i_ir_model_load (rest[0], NULL, &error);
  M2iIrCompileOptions opts = { .n_threads = threads };
  M2iIrCompiledModel *cm = model ? m2i_ir_compile (model, &opts, &error) : NULL;
  M2iIrInferRequest *req = cm ? m2i_ir_infer_request_new (cm, &error) : NULL;
  if (!req) {
    fprintf (stderr, "bench-ir-layers: %s\n", error->message);
    return 1;
  }
  for (gint i = 0; i < m2i_ir_model_get_n_inputs (model); i++) {
    M2iTensor *in = m2i_ir_infer_request_get_input (req, i);
    if (in->type == M2I_ET_F32) {
      float *d = in->data;
      for (gint64 e = 0; e < m2i_shape_numel (&in->shape); e++)
        d[e] = (float) ((e * 7919) % 1000) / 1000.0f;
    }
  }

  gint n_steps;
  m2i_ir_infer_request_get_profile (req, &n_steps);
  guint64 *net = g_new0 (guint64, (gsize) n_steps * iterations);
  guint64 *whole = g_new0 (guint64, iterations);
  for (gint w = 0; w < 20; w++)
    m2i_ir_infer_request_infer (req, NULL);
  m2i_ir_infer_request_set_profiling (req, TRUE);
  for (gint it = 0; it < iterations; it++) {
    m2i_ir_infer_request_set_profiling (req, TRUE);     /* resets the counters */
    guint64 t0 = now_ns ();
    if (!m2i_ir_infer_request_infer (req, &error)) {
      fprintf (stderr, "bench-ir-layers: %s\n", error->message);
      return 1;
    }
    whole[it] = now_ns () - t0;
    const M2iIrLayerProfile *p = m2i_ir_infer_request_get_profile (req, &n_steps);
    for (gint i = 0; i < n_steps; i++)
      net[(gsize) i * iterations + it] = layer_ns (&p[i]);
  }
  m2i_ir_infer_request_set_profiling (req, FALSE);
  const M2iIrLayerProfile *p = m2i_ir_infer_request_get_profile (req, &n_steps);

  printf ("%-4s %-16s %-34s %-18s %9s %9s\n", "#", "type", "layer", "output", "in net",
      "alone");
  double sum_net = 0, sum_alone = 0;
  guint64 *alone = g_new0 (guint64, iterations);
  for (gint i = 0; i < n_steps; i++) {
    const M2iIrNode *node = p[i].node;
    gint64 reps = 0;
    for (gint it = 0; it < iterations; it++) {
      guint64 t0 = now_ns ();
      ir_infer_request_run_step (req, i, NULL);
      alone[it] = now_ns () - t0;
      reps++;
    }
    double a = median_ms (alone, iterations);
    double t = median_ms (net + (gsize) i * iterations, iterations);
    sum_net += t;
    sum_alone += a;
    g_autofree gchar *shape = m2i_shape_to_string (m2i_ir_node_get_output_shape (node, 0));
    const char *name = m2i_ir_node_get_name (node);
    gsize len = strlen (name);
    printf ("%-4d %-16s %-34s %-18s %9.4f %9.4f\n", i, m2i_ir_node_get_type (node),
        len > 34 ? name + len - 34 : name, shape, t, a);
  }
  printf ("sum of layer medians: in net %.3f ms, alone %.3f ms; whole inference median %.3f ms"
      " (%d threads, %d inferences)\n", sum_net, sum_alone, median_ms (whole, iterations),
      threads, iterations);
  /* The steps run alone left the buffers in some state: nothing to check. */
  g_free (alone);
  g_free (net);
  g_free (whole);
  g_strfreev (rest);
  m2i_ir_infer_request_free (req);
  m2i_ir_compiled_model_unref (cm);
  m2i_ir_model_unref (model);
  return 0;
}
