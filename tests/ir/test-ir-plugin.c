/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Custom-op plugins: a model with an op no built-in kernel has runs once the
 * plugin that provides it is loaded; broken plugins give clear errors. */
#include "ir-test-util.h"
#include <base/m2i-error.h>

#include <string.h>

static M2iIrModel *
cube_model (void)
{
  TestIr *b = test_ir_new (11);
  M2iShape s = TEST_SHAPE (2, 3);
  gint x = test_ir_parameter (b, "x", M2I_ET_F32, &s);
  test_ir_result (b, test_ir_op (b, "Cube", "m2i_test", NULL, 1, &x, M2I_ET_F32, &s));
  GError *error = NULL;
  M2iIrModel *m = test_ir_load (b, &error);
  g_assert_no_error (error);
  test_ir_free (b);
  return m;
}

static void
test_plugin_runs_custom_op (void)
{
  M2iIrModel *m = cube_model ();
  GError *error = NULL;
  /* without the plugin: the unknown-op error points to plugins */
  g_assert_null (m2i_ir_compile (m, NULL, &error));
  g_assert_error (error, M2I_ERROR, M2I_ERROR_UNSUPPORTED);
  g_assert_nonnull (strstr (error->message, "Cube (m2i_test) \u00d71"));
  g_assert_nonnull (strstr (error->message, "custom-op plugin"));
  g_clear_error (&error);

  const char *plugins[] = { g_getenv ("M2I_TEST_PLUGIN"), NULL };
  g_assert_nonnull (plugins[0]);
  M2iIrCompileOptions opts = { .plugin_paths = plugins };
  M2iIrCompiledModel *cm = m2i_ir_compile (m, &opts, &error);
  g_assert_no_error (error);
  M2iIrInferRequest *req = m2i_ir_infer_request_new (cm, &error);
  float x[6] = { -2, -1, 0, 0.5f, 3, 10 };
  M2iTensor t = { M2I_ET_F32, TEST_SHAPE (2, 3), x };
  g_assert_true (m2i_ir_infer_request_set_input (req, 0, &t, &error));
  g_assert_true (m2i_ir_infer_request_infer (req, &error));
  const float expect[6] = { -8, -1, 0, 0.125f, 27, 1000 };
  g_assert_cmpmem (m2i_ir_infer_request_get_output (req, 0)->data, 24, expect, 24);
  m2i_ir_infer_request_free (req);
  m2i_ir_compiled_model_unref (cm);

  /* the plugin served that compile only: the default registry is untouched */
  g_assert_null (m2i_op_registry_lookup (m2i_op_registry_get_default (), "Cube", "m2i_test"));
  /* ... unless loaded into it */
  M2iOpRegistry *r = m2i_op_registry_new (m2i_op_registry_get_default ());
  g_assert_true (m2i_op_registry_load_plugin (r, plugins[0], &error));
  g_assert_nonnull (m2i_op_registry_lookup (r, "Cube", "m2i_test"));
  opts = (M2iIrCompileOptions) { .registry = r };
  cm = m2i_ir_compile (m, &opts, &error);
  g_assert_no_error (error);
  m2i_ir_compiled_model_unref (cm);
  m2i_op_registry_free (r);
  m2i_ir_model_unref (m);
}

static void
test_bad_plugins (void)
{
  M2iIrModel *m = cube_model ();
  GError *error = NULL;
  const char *missing[] = { "/nonexistent/libnothing.so", NULL };
  M2iIrCompileOptions opts = { .plugin_paths = missing };
  g_assert_null (m2i_ir_compile (m, &opts, &error));
  g_assert_error (error, M2I_ERROR, M2I_ERROR_IO);
  g_assert_true (g_str_has_prefix (error->message,
      "cannot load the custom-op plugin '/nonexistent/libnothing.so': "));
  g_clear_error (&error);

  /* a shared library that is not a plugin: the test helper library */
  const char *not_plugin[] = { g_getenv ("M2I_TEST_NOT_PLUGIN"), NULL };
  opts.plugin_paths = not_plugin;
  g_assert_null (m2i_ir_compile (m, &opts, &error));
  g_assert_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "is not an m2i custom-op plugin: it does not export "
      "m2i_op_plugin_register()"));
  g_clear_error (&error);

  const char *refusing[] = { g_getenv ("M2I_TEST_BAD_PLUGIN"), NULL };
  opts.plugin_paths = refusing;
  g_assert_null (m2i_ir_compile (m, &opts, &error));
  g_assert_error (error, M2I_ERROR, M2I_ERROR_FAILED);
  g_assert_nonnull (strstr (error->message, "failed to register its kernels: this plugin always refuses"));
  g_clear_error (&error);
  m2i_ir_model_unref (m);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ir/plugin/custom-op", test_plugin_runs_custom_op);
  g_test_add_func ("/ir/plugin/bad-plugins", test_bad_plugins);
  return g_test_run ();
}
