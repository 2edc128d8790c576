/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* "No allocation per inference": malloc and friends are counted while a
 * compiled model runs (the Fashion-MNIST network and a structural graph, on
 * one and two threads). After the first inference (which may grow the
 * worker pool) the count must stay at zero. Skipped under sanitizers, which
 * own malloc. */
#include "ir-test-util.h"

#include "../alloc-count.h"

static void
check_model (M2iIrModel *m, gint n_threads)
{
  GError *error = NULL;
  M2iIrCompileOptions opts = { .n_threads = n_threads };
  M2iIrCompiledModel *cm = m2i_ir_compile (m, &opts, &error);
  g_assert_no_error (error);
  M2iIrInferRequest *req = m2i_ir_infer_request_new (cm, &error);
  g_assert_no_error (error);
  M2iTensor *in = m2i_ir_infer_request_get_input (req, 0);
  float *x = in->data;
  for (gint64 i = 0; i < m2i_shape_numel (&in->shape); i++)
    x[i] = (float) (i % 17) / 17.0f;
  /* warm-up: the first inferences may grow the worker pool, whose new
   * threads allocate once as they start (asynchronously: give them time) */
  for (gint i = 0; i < 3; i++)
    g_assert_true (m2i_ir_infer_request_infer (req, &error));
  g_usleep (100000);
  alloc_count_start_checked ();
  gboolean ok = TRUE;
  for (gint i = 0; i < 20; i++)
    ok &= m2i_ir_infer_request_infer (req, NULL);
  gint n_allocs = alloc_count_stop ();
  g_test_message ("%s, %d thread(s): %d allocations in 20 inferences",
      m2i_ir_model_get_name (m), n_threads, n_allocs);
  g_assert_cmpint (n_allocs, ==, 0);
  g_assert_true (ok);
  m2i_ir_infer_request_free (req);
  m2i_ir_compiled_model_unref (cm);
}

static void
test_no_allocation (void)
{
if (ALLOC_COUNT_SANITIZED) {
    g_test_skip ("sanitizers own malloc");
    return;
  }
  g_autofree gchar *xml = test_models_path ("fashion-mnist/fashion-mnist.xml");
  GError *error = NULL;
  M2iIrModel *m = m2i_ir_model_load (xml, NULL, &error);
  g_assert_no_error (error);
  check_model (m, 1);
  check_model (m, 2);
  m2i_ir_model_unref (m);

  /* the structural ops: transpose, concat, gather, strided slice, convert */
  TestIr *b = test_ir_new (11);
  M2iShape s = TEST_SHAPE (4, 6), t = TEST_SHAPE (6, 4), two = TEST_SHAPE (2), scalar = { 0 };
  gint x = test_ir_parameter (b, "x", M2I_ET_F32, &s);
  gint64 perm[2] = { 1, 0 }, idx[2] = { 3, 0 }, axis = 1, begin[2] = { 0, 1 }, end[2] = { 6, 3 };
  gint tin[2] = { x, test_ir_const (b, M2I_ET_I64, &two, perm) };
  gint tr = test_ir_op (b, "Transpose", "opset1", NULL, 2, tin, M2I_ET_F32, &t);
  gint gin[3] = { tr, test_ir_const (b, M2I_ET_I64, &two, idx), test_ir_const (b, M2I_ET_I64, &scalar, &axis) };
  gint g = test_ir_op (b, "Gather", "opset8", "batch_dims=\"0\"", 3, gin, M2I_ET_F32, &TEST_SHAPE (6, 2));
  gint sin[3] = { tr, test_ir_const (b, M2I_ET_I64, &two, begin), test_ir_const (b, M2I_ET_I64, &two, end) };
  gint ss = test_ir_op (b, "StridedSlice", "opset1", "begin_mask=\"0,0\" end_mask=\"0,0\"", 3, sin,
      M2I_ET_F32, &TEST_SHAPE (6, 2));
  gint cin[2] = { g, ss };
  gint cat = test_ir_op (b, "Concat", "opset1", "axis=\"1\"", 2, cin, M2I_ET_F32, &t);
  test_ir_result (b, test_ir_op (b, "Convert", "opset1", "destination_type=\"f16\"", 1, &cat, M2I_ET_F16, &t));
  m = test_ir_load (b, &error);
  g_assert_no_error (error);
  check_model (m, 1);
  m2i_ir_model_unref (m);
  test_ir_free (b);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ir/no-allocation-per-inference", test_no_allocation);
  return g_test_run ();
}
