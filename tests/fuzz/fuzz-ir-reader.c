/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer harness over the IR reader, writer, compiler and partitioner.
 *
 * An input is the .xml text, a NUL byte, then the .bin bytes (no NUL: no
 * weights). Every input must load or fail with a GError, never crash, hang
 * or leak; a model that loads must serialize and load back to the same
 * graph, compile or fail with a GError (kernels check attributes and
 * shapes), and, when small, run once on zeroed inputs, then be split
 * between the device and the CPU (or fail with a GError) and run so. */
#include <ir/m2i-ir.h>
#include <split/m2i-split.h>

#include <stdint.h>
#include <string.h>

/* Bounds that keep one input fast: constants folded at compile time, and
 * the memory and layers of a model that is also run. */
#define MAX_FOLDED (1u << 20)
#define MAX_RUN_BYTES (8u << 20)
#define MAX_RUN_LAYERS 64

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* Splits @m between the device and the CPU and runs the plan once on
 * zeroed inputs; either may fail with a GError. */
static void
split_and_run (M2iIrModel *m)
{
  M2iSplitOptions so;
  m2i_split_options_init (&so);
  so.max_memory = MAX_RUN_BYTES * 4;
  GError *error = NULL;
  M2iSplitPlan *plan = m2i_split_plan_new (m, &so, &error);
  if (!plan) {
    g_assert (error != NULL && error->message != NULL);
    g_error_free (error);
    return;
  }
  M2iSplitRunOptions ro = { .n_threads = 1, .max_memory = MAX_RUN_BYTES * 4 };
  M2iSplitRunner *r = m2i_split_runner_new (plan, &ro, &error);
  if (r && !m2i_split_runner_run (r, &error))
    g_assert (error != NULL);
  g_clear_error (&error);
  if (r)
    m2i_split_runner_free (r);
  m2i_split_plan_unref (plan);
}

static void
quiet_log (const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer user_data)
{
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static gboolean init;
  if (!init) {
    g_log_set_default_handler (quiet_log, NULL);
    init = TRUE;
  }
  const uint8_t *nul = memchr (data, 0, size);
  gsize xml_len = nul ? (gsize) (nul - data) : size;
  GBytes *weights = nul ? g_bytes_new (nul + 1, size - xml_len - 1) : NULL;
  GError *error = NULL;
  M2iIrModel *m = m2i_ir_model_load_from_memory ((const char *) data, xml_len, weights,
      "fuzz.xml", &error);
  if (weights)
    g_bytes_unref (weights);
  if (!m) {
    g_assert (error != NULL && error->message != NULL);
    g_error_free (error);
    return 0;
  }
  /* a model that loads writes out and loads back to the same graph */
  GString *text = g_string_new (NULL);
  GByteArray *bin = g_byte_array_new ();
  if (!m2i_ir_model_serialize (m, text, bin, &error))
    g_error ("a loaded model failed to serialize: %s", error->message);
  GBytes *w = g_byte_array_free_to_bytes (bin);
  M2iIrModel *back = m2i_ir_model_load_from_memory (text->str, text->len, w, "round-trip.xml", &error);
  if (!back)
    g_error ("a serialized model failed to load: %s\n%s", error->message, text->str);
  g_assert (m2i_ir_model_get_n_nodes (back) == m2i_ir_model_get_n_nodes (m));
  g_assert (m2i_ir_model_get_n_edges (back) == m2i_ir_model_get_n_edges (m));
  g_assert (m2i_ir_model_get_n_outputs (back) == m2i_ir_model_get_n_outputs (m));
  for (gint i = 0; i < m2i_ir_model_get_n_outputs (m); i++)
    g_assert (!strcmp (m2i_ir_model_get_output (back, i)->name, m2i_ir_model_get_output (m, i)->name));
  g_assert (m2i_ir_model_get_n_inputs (back) == m2i_ir_model_get_n_inputs (m));
  for (gint i = 0; i < m2i_ir_model_get_n_inputs (m); i++)
    g_assert (!strcmp (m2i_ir_model_get_input (back, i)->name, m2i_ir_model_get_input (m, i)->name));
  m2i_ir_model_unref (back);
  g_bytes_unref (w);
  g_string_free (text, TRUE);

  M2iIrCompileOptions opts = { .n_threads = 1, .max_folded_bytes = MAX_FOLDED };
  M2iIrCompiledModel *cm = m2i_ir_compile (m, &opts, &error);
  if (!cm) {
    g_assert (error != NULL && error->message != NULL);
    g_error_free (error);
  } else {
    if (m2i_ir_compiled_model_get_request_bytes (cm) <= MAX_RUN_BYTES &&
        m2i_ir_compiled_model_get_n_runtime_nodes (cm) <= MAX_RUN_LAYERS) {
      M2iIrInferRequest *req = m2i_ir_infer_request_new (cm, NULL);
      if (req) {
        if (!m2i_ir_infer_request_infer (req, &error))
          g_clear_error (&error);
        m2i_ir_infer_request_free (req);
      }
      split_and_run (m);
    }
    m2i_ir_compiled_model_unref (cm);
  }
  m2i_ir_model_unref (m);
  return 0;
}
