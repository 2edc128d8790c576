/* libFuzzer harness over the IR reader and compiler.
 *
 * An input is the .xml text, a NUL byte, then the .bin bytes (no NUL: no
 * weights). Every input must load or fail with a GError, never crash, hang
 * or leak; models that load are compiled (kernels check attributes and
 * shapes) and, when small, run once on zeroed inputs. */
#include <ir/m2i-ir.h>

#include <stdint.h>
#include <string.h>

/* Bounds that keep one input fast: constants folded at compile time, and
 * the memory and layers of a model that is also run. */
#define MAX_FOLDED (1u << 20)
#define MAX_RUN_BYTES (8u << 20)
#define MAX_RUN_LAYERS 64

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

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
    }
    m2i_ir_compiled_model_unref (cm);
  }
  m2i_ir_model_unref (m);
  return 0;
}
