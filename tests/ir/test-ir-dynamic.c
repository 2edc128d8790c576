/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Shapes known only at run time (docs/ir-runtime.md, "Shapes known at run
 * time"): NonZero against hand-computed indices (every element type it
 * takes, NaN and -0.0, scalars, nothing non-zero), the layers after it
 * inferred again per inference, a Reshape whose target is computed at run
 * time, inputs with dynamic dims given a shape (m2i_ir_model_reshape),
 * folding a NonZero of a constant, no allocation while shapes stay, and the
 * load-time policies that came with real models: a wrong declared type on
 * an output nobody reads is a warning, every op without a kernel is named
 * in one message, a tensor name given twice stays with one tensor; pooling
 * -14's ceil_torch; constant folding of integers, booleans, both outputs
 * of MaxPool-8 and ShapeOf. */
#include "ir-test-util.h"
#include <base/m2i-error.h>

#include "../alloc-count.h"

#include <math.h>
#include <string.h>

#define DYN M2I_DIM_DYNAMIC

typedef struct {
  M2iIrModel *model;
  M2iIrCompiledModel *cm;
  M2iIrInferRequest *req;
} Run;

static Run
run_new (TestIr *b)
{
  GError *error = NULL;
  Run r = { test_ir_load (b, &error) };
  g_assert_no_error (error);
  r.cm = m2i_ir_compile (r.model, NULL, &error);
  g_assert_no_error (error);
  r.req = m2i_ir_infer_request_new (r.cm, &error);
  g_assert_no_error (error);
  return r;
}

static void
run_free (Run *r)
{
  m2i_ir_infer_request_free (r->req);
  m2i_ir_compiled_model_unref (r->cm);
  m2i_ir_model_unref (r->model);
}

static void
set_input (Run *r, gint i, M2iElementType type, const M2iShape *shape, gconstpointer data)
{
  GError *error = NULL;
  M2iTensor t = { type, *shape, (gpointer) data };
  g_assert_true (m2i_ir_infer_request_set_input (r->req, i, &t, &error));
  g_assert_no_error (error);
}

static const M2iTensor *
infer (Run *r, gint output)
{
  GError *error = NULL;
  gboolean ok = m2i_ir_infer_request_infer (r->req, &error);
  g_assert_no_error (error);
  g_assert_true (ok);
  return m2i_ir_infer_request_get_output (r->req, output);
}

/* Output [rank, count] of NonZero, checked against @expect (rank rows of
 * count indices). */
static void
check_indices (const M2iTensor *o, gint rank, gint64 count, const gint64 *expect)
{
  g_assert_cmpint (o->shape.rank, ==, 2);
  g_assert_cmpint (o->shape.dims[0], ==, rank);
  g_assert_cmpint (o->shape.dims[1], ==, count);
  for (gint64 i = 0; i < rank * count; i++) {
    gint64 v = o->type == M2I_ET_I32 ? ((const gint32 *) o->data)[i] : ((const gint64 *) o->data)[i];
    g_assert_cmpint (v, ==, expect[i]);
  }
}

/* Parameter x (@type @shape) → NonZero → Result, declared [rank, ?]. */
static Run
nonzero_model (M2iElementType type, const M2iShape *shape, const char *attrs, M2iElementType out)
{
  TestIr *b = test_ir_new (11);
  gint x = test_ir_parameter (b, "x", type, shape);
  M2iShape os = TEST_SHAPE (shape->rank, DYN);
  test_ir_result (b, test_ir_op (b, "NonZero", "opset3", attrs, 1, &x, out, &os));
  Run r = run_new (b);
  test_ir_free (b);
  return r;
}

static void
test_nonzero (void)
{
  /* f32 [2,3]: NaN counts, -0.0 does not; the same request with ever
   * other counts, including none and all */
  M2iShape s23 = TEST_SHAPE (2, 3);
  Run r = nonzero_model (M2I_ET_F32, &s23, NULL, M2I_ET_I64);
  const M2iIrIoInfo *io = m2i_ir_model_get_output (r.model, 0);
  g_assert_cmpint (io->shape.dims[1], ==, DYN);
  const float a[6] = { 0, 1.5f, -0.0f, NAN, 0, -2 };
  set_input (&r, 0, M2I_ET_F32, &s23, a);
  check_indices (infer (&r, 0), 2, 3, (const gint64[]) { 0, 1, 1, 1, 0, 2 });
  const float none[6] = { 0 };
  set_input (&r, 0, M2I_ET_F32, &s23, none);
  check_indices (infer (&r, 0), 2, 0, NULL);
  const float all[6] = { 1, 2, 3, 4, 5, 6 };
  set_input (&r, 0, M2I_ET_F32, &s23, all);
  check_indices (infer (&r, 0), 2, 6, (const gint64[]) { 0, 0, 0, 1, 1, 1, 0, 1, 2, 0, 1, 2 });
  set_input (&r, 0, M2I_ET_F32, &s23, a);
  check_indices (infer (&r, 0), 2, 3, (const gint64[]) { 0, 1, 1, 1, 0, 2 });
  run_free (&r);

  /* booleans, rank 3, i32 indices */
  M2iShape s222 = TEST_SHAPE (2, 1, 2);
  r = nonzero_model (M2I_ET_BOOLEAN, &s222, "output_type=\"i32\"", M2I_ET_I32);
  const guint8 bits[4] = { 1, 0, 0, 1 };
  set_input (&r, 0, M2I_ET_BOOLEAN, &s222, bits);
  check_indices (infer (&r, 0), 3, 2, (const gint64[]) { 0, 1, 0, 0, 0, 1 });
  run_free (&r);

  /* i64 with a value only its high half holds; a scalar gives [0, count] */
  M2iShape s4 = TEST_SHAPE (4), scalar = { 0 };
  r = nonzero_model (M2I_ET_I64, &s4, NULL, M2I_ET_I64);
  const gint64 ints[4] = { 0, (gint64) 1 << 40, 0, -1 };
  set_input (&r, 0, M2I_ET_I64, &s4, ints);
  check_indices (infer (&r, 0), 1, 2, (const gint64[]) { 1, 3 });
  run_free (&r);
  r = nonzero_model (M2I_ET_U8, &scalar, NULL, M2I_ET_I64);
  const guint8 one = 7;
  set_input (&r, 0, M2I_ET_U8, &scalar, &one);
  check_indices (infer (&r, 0), 0, 1, NULL);
  run_free (&r);
}

/* NonMaxSuppression-9 declared [?,3] (as OpenVINO writes it): exactly the
 * selected rows, a count that follows the data; boxes by hand. */
static void
test_nms_rows (void)
{
  TestIr *b = test_ir_new (11);
  M2iShape bs = TEST_SHAPE (1, 4, 4), ss = TEST_SHAPE (1, 1, 4), scalar = { 0 }, rows = TEST_SHAPE (DYN, 3);
  gint boxes = test_ir_parameter (b, "boxes", M2I_ET_F32, &bs);
  gint scores = test_ir_parameter (b, "scores", M2I_ET_F32, &ss);
  const gint64 max_out = 10;
  const float iou = 0.5f, thr = 0.2f;
  gint in[5] = { boxes, scores, test_ir_const (b, M2I_ET_I64, &scalar, &max_out),
    test_ir_const (b, M2I_ET_F32, &scalar, &iou), test_ir_const (b, M2I_ET_F32, &scalar, &thr) };
  test_ir_result (b, test_ir_op (b, "NonMaxSuppression", "opset9", "box_encoding=\"corner\" "
      "sort_result_descending=\"true\" output_type=\"i64\"", 5, in, M2I_ET_I64, &rows));
  Run r = run_new (b);
  test_ir_free (b);
  const float sc[4] = { 0.9f, 0.8f, 0.7f, 0.1f };
  set_input (&r, 1, M2I_ET_F32, &ss, sc);
  /* box 1 overlaps box 0 (IOU 0.91): suppressed; box 3 scores under 0.2 */
  float bx[16] = { 0, 0, 1, 1, 0, 0, 1, 1.1f, 2, 2, 3, 3, 5, 5, 6, 6 };
  set_input (&r, 0, M2I_ET_F32, &bs, bx);
  const M2iTensor *o = infer (&r, 0);
  g_assert_true (m2i_shape_equal (&o->shape, &TEST_SHAPE (2, 3)));
  g_assert_cmpmem (o->data, 6 * sizeof (gint64), ((const gint64[]) { 0, 0, 0, 0, 0, 2 }), 6 * sizeof (gint64));
  /* box 1 moved away: three rows */
  bx[4] = bx[5] = 10, bx[6] = bx[7] = 11;
  set_input (&r, 0, M2I_ET_F32, &bs, bx);
  o = infer (&r, 0);
  g_assert_true (m2i_shape_equal (&o->shape, &TEST_SHAPE (3, 3)));
  g_assert_cmpmem (o->data, 9 * sizeof (gint64), ((const gint64[]) { 0, 0, 0, 0, 0, 1, 0, 0, 2 }),
      9 * sizeof (gint64));
  run_free (&r);
}

/* NonZero → Transpose → Convert → Reshape([-1]) → Concat with a constant;
 * and ShapeOf of the transposed indices: each layer after the NonZero
 * infers again with the count of this inference. */
static void
test_downstream (void)
{
  TestIr *b = test_ir_new (11);
  M2iShape s23 = TEST_SHAPE (2, 3), nz = TEST_SHAPE (2, DYN), tr = TEST_SHAPE (DYN, 2);
  M2iShape flat = TEST_SHAPE (DYN), two = TEST_SHAPE (2), one = TEST_SHAPE (1);
  gint x = test_ir_parameter (b, "x", M2I_ET_F32, &s23);
  gint n = test_ir_op (b, "NonZero", "opset3", NULL, 1, &x, M2I_ET_I64, &nz);
  gint64 perm[2] = { 1, 0 }, minus_one = -1;
  gint in_t[2] = { n, test_ir_const (b, M2I_ET_I64, &two, perm) };
  gint t = test_ir_op (b, "Transpose", "opset1", NULL, 2, in_t, M2I_ET_I64, &tr);
  gint c = test_ir_op (b, "Convert", "opset1", "destination_type=\"f32\"", 1, &t, M2I_ET_F32, &tr);
  gint in_r[2] = { c, test_ir_const (b, M2I_ET_I64, &one, &minus_one) };
  gint rs = test_ir_op (b, "Reshape", "opset1", "special_zero=\"false\"", 2, in_r, M2I_ET_F32, &flat);
  const float tail = 100;
  gint in_c[2] = { rs, test_ir_const (b, M2I_ET_F32, &one, &tail) };
  test_ir_result (b, test_ir_op (b, "Concat", "opset1", "axis=\"0\"", 2, in_c, M2I_ET_F32, &flat));
  test_ir_result (b, test_ir_op (b, "ShapeOf", "opset3", NULL, 1, &t, M2I_ET_I64, &two));
  Run r = run_new (b);
  test_ir_free (b);
  /* the layers after NonZero run (nothing of them was folded) */
  g_assert_cmpint (m2i_ir_compiled_model_get_n_runtime_nodes (r.cm), ==, 6);

  const float a[6] = { 0, 3, 0, 4, 0, 5 };   /* (0,1) (1,0) (1,2) */
  const float b2[6] = { 0, 0, 0, 0, 9, 0 };  /* (1,1) */
  for (gint round = 0; round < 3; round++) {
    gboolean first = round != 1;
    set_input (&r, 0, M2I_ET_F32, &s23, first ? a : b2);
    const M2iTensor *o = infer (&r, 0);
    const M2iTensor *shape = m2i_ir_infer_request_get_output (r.req, 1);
    gint64 count = first ? 3 : 1;
    const float expect_a[7] = { 0, 1, 1, 0, 1, 2, 100 }, expect_b[3] = { 1, 1, 100 };
    g_assert_cmpint (o->shape.rank, ==, 1);
    g_assert_cmpint (o->shape.dims[0], ==, 2 * count + 1);
    g_assert_cmpmem (o->data, (2 * count + 1) * sizeof (float), first ? expect_a : expect_b,
        (2 * count + 1) * sizeof (float));
    g_assert_cmpint (((const gint64 *) shape->data)[0], ==, count);
    g_assert_cmpint (((const gint64 *) shape->data)[1], ==, 2);
  }

  /* same shapes as the last inference: nothing is allocated */
  if (!ALLOC_COUNT_SANITIZED) {
    set_input (&r, 0, M2I_ET_F32, &s23, a);
    infer (&r, 0);
    alloc_count_start_checked ();
    gboolean ok = TRUE;
    for (gint i = 0; i < 10; i++)
      ok &= m2i_ir_infer_request_infer (r.req, NULL);
    gint n_allocs = alloc_count_stop ();
    g_assert_true (ok);
    g_assert_cmpint (n_allocs, ==, 0);
  }
  run_free (&r);
}

/* A Reshape whose target shape is a model input: inferred at each
 * inference with the target's value; a target that contradicts the
 * declared output is an error of that inference only. */
static void
test_run_time_target (void)
{
  for (gint declared_dynamic = 0; declared_dynamic < 2; declared_dynamic++) {
    TestIr *b = test_ir_new (11);
    M2iShape s4 = TEST_SHAPE (4), s2 = TEST_SHAPE (2), s22 = TEST_SHAPE (2, 2), dd = TEST_SHAPE (DYN, DYN);
    gint x = test_ir_parameter (b, "x", M2I_ET_F32, &s4);
    gint target = test_ir_parameter (b, "shape", M2I_ET_I64, &s2);
    gint in[2] = { x, target };
    gint rs = test_ir_op (b, "Reshape", "opset1", "special_zero=\"false\"", 2, in,
        M2I_ET_F32, declared_dynamic ? &dd : &s22);
    /* and a layer after it, whose input has no shape before an inference */
    test_ir_result (b, test_ir_op (b, "ReLU", "opset1", NULL, 1, &rs, M2I_ET_F32,
        declared_dynamic ? &dd : &s22));
    Run r = run_new (b);
    test_ir_free (b);
    const float v[4] = { 1, 2, 3, 4 };
    set_input (&r, 0, M2I_ET_F32, &s4, v);
    const gint64 t22[2] = { 2, 2 }, t14[2] = { 1, 4 };
    set_input (&r, 1, M2I_ET_I64, &s2, t22);
    const M2iTensor *o = infer (&r, 0);
    g_assert_true (m2i_shape_equal (&o->shape, &s22));
    g_assert_cmpmem (o->data, sizeof v, v, sizeof v);
    set_input (&r, 1, M2I_ET_I64, &s2, t14);
    GError *error = NULL;
    gboolean ok = m2i_ir_infer_request_infer (r.req, &error);
    if (declared_dynamic) {
      g_assert_no_error (error);
      o = m2i_ir_infer_request_get_output (r.req, 0);
      g_assert_true (m2i_shape_equal (&o->shape, &TEST_SHAPE (1, 4)));
      g_assert_cmpmem (o->data, sizeof v, v, sizeof v);
    } else {
      g_assert_false (ok);
      g_assert_error (error, M2I_ERROR, M2I_ERROR_MALFORMED);
      g_assert_nonnull (strstr (error->message, "test.xml:"));
      g_assert_nonnull (strstr (error->message, "(Reshape, opset1): shape mismatch on output port"));
      g_assert_nonnull (strstr (error->message, "declares [2,2] but the op computes [1,4]"));
      g_clear_error (&error);
    }
    /* and back */
    set_input (&r, 1, M2I_ET_I64, &s2, t22);
    o = infer (&r, 0);
    g_assert_true (m2i_shape_equal (&o->shape, &s22));
    run_free (&r);
  }
}

/* An input with dynamic dims is given its shape before compiling. */
static void
test_reshape_input (void)
{
  TestIr *b = test_ir_new (11);
  M2iShape in = TEST_SHAPE (DYN, 3), out = TEST_SHAPE (DYN, 3);
  gint x = test_ir_parameter (b, "x", M2I_ET_F32, &in);
  test_ir_result (b, test_ir_op (b, "ReLU", "opset1", NULL, 1, &x, M2I_ET_F32, &out));
  GError *error = NULL;
  M2iIrModel *m = test_ir_load (b, &error);
  g_assert_no_error (error);
  test_ir_free (b);
  const M2iIrIoInfo *io = m2i_ir_model_get_input (m, 0);
  g_assert_cmpint (io->shape.dims[0], ==, DYN);
  g_autofree gchar *text = m2i_shape_to_string (&io->shape);
  g_assert_cmpstr (text, ==, "[?,3]");

  g_assert_null (m2i_ir_compile (m, NULL, &error));
  g_assert_error (error, M2I_ERROR, M2I_ERROR_UNSUPPORTED);
  g_assert_nonnull (strstr (error->message, "input 'x' has dynamic dimensions [?,3]"));
  g_assert_nonnull (strstr (error->message, "m2i_ir_model_reshape()"));
  g_clear_error (&error);

  /* shapes that do not fit: rank, a static dim, a dynamic one, no such input */
  g_assert_false (m2i_ir_model_reshape (m, "x", &TEST_SHAPE (2, 3, 1), &error));
  g_assert_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "cannot take the shape [2,3,1]: the model declares [?,3]"));
  g_clear_error (&error);
  g_assert_false (m2i_ir_model_reshape (m, "x", &TEST_SHAPE (2, 4), &error));
  g_clear_error (&error);
  g_assert_false (m2i_ir_model_reshape (m, "x", &TEST_SHAPE (DYN, 3), &error));
  g_clear_error (&error);
  g_assert_false (m2i_ir_model_reshape (m, "y", &TEST_SHAPE (2, 3), &error));
  g_assert_nonnull (strstr (error->message, "has no input 'y' (its inputs: 'x')"));
  g_clear_error (&error);

  g_assert_true (m2i_ir_model_reshape (m, "x", &TEST_SHAPE (2, 3), &error));
  g_assert_true (m2i_shape_equal (&m2i_ir_model_get_input (m, 0)->shape, &TEST_SHAPE (2, 3)));
  M2iIrCompiledModel *cm = m2i_ir_compile (m, NULL, &error);
  g_assert_no_error (error);
  M2iIrInferRequest *req = m2i_ir_infer_request_new (cm, &error);
  float *xin = m2i_ir_infer_request_get_input (req, 0)->data;
  for (gint i = 0; i < 6; i++)
    xin[i] = i - 2.5f;
  g_assert_true (m2i_ir_infer_request_infer (req, &error));
  const M2iTensor *o = m2i_ir_infer_request_get_output (req, 0);
  g_assert_true (m2i_shape_equal (&o->shape, &TEST_SHAPE (2, 3)));
  for (gint i = 0; i < 6; i++)
    g_assert_cmpfloat (((const float *) o->data)[i], ==, MAX (i - 2.5f, 0));
  m2i_ir_infer_request_free (req);
  m2i_ir_compiled_model_unref (cm);
  /* a second shape for a second compile */
  g_assert_true (m2i_ir_model_reshape (m, "x", &TEST_SHAPE (5, 3), &error));
  cm = m2i_ir_compile (m, NULL, &error);
  g_assert_no_error (error);
  m2i_ir_compiled_model_unref (cm);
  m2i_ir_model_unref (m);
}

/* NonZero of a constant is folded: its shape is then static. */
static void
test_fold_nonzero (void)
{
  TestIr *b = test_ir_new (11);
  M2iShape s5 = TEST_SHAPE (5), nz = TEST_SHAPE (1, DYN);
  const gint32 v[5] = { 0, 4, 0, 0, 9 };
  gint c = test_ir_const (b, M2I_ET_I32, &s5, v);
  test_ir_result (b, test_ir_op (b, "NonZero", "opset3", NULL, 1, &c, M2I_ET_I64, &nz));
  Run r = run_new (b);
  test_ir_free (b);
  g_assert_cmpint (m2i_ir_compiled_model_get_n_runtime_nodes (r.cm), ==, 0);
  const M2iTensor *folded = m2i_ir_compiled_model_get_value (r.cm, 1, 0);
  g_assert_true (m2i_shape_equal (&folded->shape, &TEST_SHAPE (1, 2)));
  check_indices (infer (&r, 0), 1, 2, (const gint64[]) { 1, 4 });
  run_free (&r);
}

/* MaxPool-8 whose indices port declares f32 (as an Open Model Zoo file
 * does): a warning while nothing reads it, an error once a Result does. */
static const char maxpool_model[] =
  "<?xml version=\"1.0\"?>\n"
  "<net name=\"mp\" version=\"11\">\n"
  "  <layers>\n"
  "    <layer id=\"0\" name=\"x\" type=\"Parameter\" version=\"opset1\">\n"
  "      <data shape=\"1,1,2,2\" element_type=\"f32\"/>\n"
  "      <output><port id=\"0\" precision=\"FP32\"><dim>1</dim><dim>1</dim><dim>2</dim><dim>2</dim></port></output>\n"
  "    </layer>\n"
  "    <layer id=\"1\" name=\"pool\" type=\"MaxPool\" version=\"opset8\">\n"
  "      <data strides=\"2,2\" dilations=\"1,1\" pads_begin=\"0,0\" pads_end=\"0,0\" kernel=\"2,2\" "
  "rounding_type=\"floor\" auto_pad=\"explicit\" index_element_type=\"i64\" axis=\"0\"/>\n"
  "      <input><port id=\"0\"><dim>1</dim><dim>1</dim><dim>2</dim><dim>2</dim></port></input>\n"
  "      <output><port id=\"1\" precision=\"FP32\"><dim>1</dim><dim>1</dim><dim>1</dim><dim>1</dim></port>\n"
  "        <port id=\"2\" precision=\"FP32\"><dim>1</dim><dim>1</dim><dim>1</dim><dim>1</dim></port></output>\n"
  "    </layer>\n"
  "    <layer id=\"2\" name=\"out\" type=\"Result\" version=\"opset1\">\n"
  "      <input><port id=\"0\"><dim>1</dim><dim>1</dim><dim>1</dim><dim>1</dim></port></input>\n"
  "    </layer>\n"
  "%s"
  "  </layers>\n"
  "  <edges>\n"
  "    <edge from-layer=\"0\" from-port=\"0\" to-layer=\"1\" to-port=\"0\"/>\n"
  "    <edge from-layer=\"1\" from-port=\"1\" to-layer=\"2\" to-port=\"0\"/>\n"
  "%s"
  "  </edges>\n"
  "</net>\n";

static void
test_unread_port_type (void)
{
  for (gint read = 0; read < 2; read++) {
    g_autofree gchar *xml = g_strdup_printf (maxpool_model, read ?
        "    <layer id=\"3\" name=\"idx\" type=\"Result\" version=\"opset1\">\n"
        "      <input><port id=\"0\"><dim>1</dim><dim>1</dim><dim>1</dim><dim>1</dim></port></input>\n"
        "    </layer>\n" : "",
        read ? "    <edge from-layer=\"1\" from-port=\"2\" to-layer=\"3\" to-port=\"0\"/>\n" : "");
    GError *error = NULL;
    M2iIrModel *m = m2i_ir_model_load_from_memory (xml, strlen (xml), NULL, "mp.xml", &error);
    g_assert_no_error (error);
    if (!read)
      g_test_expect_message ("m2i", G_LOG_LEVEL_MESSAGE, "warning: layer 1 'pool' (MaxPool, "
          "opset8): output port 2 is declared f32 but the op computes i64; no layer reads it*");
    M2iIrCompiledModel *cm = m2i_ir_compile (m, NULL, &error);
    if (!read) {
      g_test_assert_expected_messages ();
      g_assert_no_error (error);
      M2iIrInferRequest *req = m2i_ir_infer_request_new (cm, &error);
      float *x = m2i_ir_infer_request_get_input (req, 0)->data;
      x[0] = 1, x[1] = 7, x[2] = 3, x[3] = 2;
      g_assert_true (m2i_ir_infer_request_infer (req, &error));
      g_assert_cmpfloat (*(const float *) m2i_ir_infer_request_get_output (req, 0)->data, ==, 7);
      m2i_ir_infer_request_free (req);
      m2i_ir_compiled_model_unref (cm);
    } else {
      g_assert_null (cm);
      g_assert_error (error, M2I_ERROR, M2I_ERROR_MALFORMED);
      g_assert_nonnull (strstr (error->message, "type mismatch on output port 2: the XML "
          "declares f32 but the op computes i64"));
      g_clear_error (&error);
    }
    m2i_ir_model_unref (m);
  }
}

/* Every op without a kernel, counted, in one message. */
static void
test_missing_ops (void)
{
  TestIr *b = test_ir_new (11);
  M2iShape s = TEST_SHAPE (2, 2);
  gint x = test_ir_parameter (b, "x", M2I_ET_F32, &s);
  gint y = x;
  for (gint i = 0; i < 3; i++)
    y = test_ir_op (b, "Swoosh", "opset4", NULL, 1, &y, M2I_ET_F32, &s);
  y = test_ir_op (b, "ReLU", "opset1", NULL, 1, &y, M2I_ET_F32, &s);
  y = test_ir_op (b, "Zap", "opset1", NULL, 1, &y, M2I_ET_F32, &s);
  y = test_ir_op (b, "Swoosh", "opset4", NULL, 1, &y, M2I_ET_F32, &s);
  y = test_ir_op (b, "Concat", "opset99x", "axis=\"0\"", 1, &y, M2I_ET_F32, &s);
  test_ir_result (b, y);
  GError *error = NULL;
  M2iIrModel *m = test_ir_load (b, &error);
  g_assert_no_error (error);
  test_ir_free (b);
  g_assert_null (m2i_ir_compile (m, NULL, &error));
  g_assert_error (error, M2I_ERROR, M2I_ERROR_UNSUPPORTED);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, "3 ops have no kernel (6 layers): Swoosh (opset4) "
      "\u00d74 (first: layer 1 'Swoosh_1', line "));
  g_assert_nonnull (strstr (error->message, ", Zap (opset1) \u00d71 (layer 5 'Zap_5', line "));
  g_assert_nonnull (strstr (error->message, ", Concat (opset99x) \u00d71 [kernels exist for "
      "Concat in: opset1] (layer 7"));
  g_assert_nonnull (strstr (error->message, "custom-op plugin"));
  g_clear_error (&error);
  m2i_ir_model_unref (m);
}

/* Two tensors of one name (as Model Optimizer sometimes wrote the input
 * and the scaled input after it): the model output keeps the name. */
static void
test_duplicate_tensor_names (void)
{
  TestIr *b = test_ir_new (11);
  M2iShape s = TEST_SHAPE (2);
  gint x = test_ir_parameter (b, "x", M2I_ET_F32, &s);            /* tensor t0 */
  test_ir_result (b, test_ir_op (b, "ReLU", "opset1", NULL, 1, &x, M2I_ET_F32, &s));   /* t1 */
  g_autofree gchar *xml = g_strdup (test_ir_xml (b));
  test_ir_free (b);
  gchar *t1 = strstr (xml, "names=\"t1\"");
  g_assert_nonnull (t1);
  t1[8] = '0';                                                       /* now t0 too */
  GError *error = NULL;
  M2iIrModel *m = m2i_ir_model_load_from_memory (xml, strlen (xml), NULL, "dup.xml", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (m2i_ir_model_get_output (m, 0)->name, ==, "t0");
  g_assert_cmpint (m2i_ir_model_find_output (m, "t0"), ==, 0);
  g_assert_cmpint (m2i_ir_model_find_input (m, "t0"), ==, -1);
  g_assert_cmpint (m2i_ir_model_find_input (m, "x"), ==, 0);
  g_assert_null (m2i_ir_node_get_output_names (m2i_ir_model_get_input (m, 0)->node, 0));
  m2i_ir_model_unref (m);
}

/* Constant folding through the kernels: integer and boolean values, every
 * output of a multi-output op, ShapeOf of a static shape; none of those
 * layers runs per inference. Values by hand. */
static void
test_fold_types (void)
{
  TestIr *b = test_ir_new (11);
  M2iShape s4 = TEST_SHAPE (4), pool_in = TEST_SHAPE (1, 1, 2, 2), pool_out = TEST_SHAPE (1, 1, 1, 1);
  M2iShape s6 = TEST_SHAPE (6);
  gint x = test_ir_parameter (b, "x", M2I_ET_F32, &s6);
  /* i32 arithmetic, then to boolean and back (0 → false, anything else → true) */
  const gint32 a[4] = { 7, -3, 0, 2 }, c[4] = { -7, 3, 5, 0 };
  gint in_add[2] = { test_ir_const (b, M2I_ET_I32, &s4, a), test_ir_const (b, M2I_ET_I32, &s4, c) };
  gint sum = test_ir_op (b, "Add", "opset1", NULL, 2, in_add, M2I_ET_I32, &s4);        /* 0 0 5 2 */
  gint flags = test_ir_op (b, "Convert", "opset1", "destination_type=\"boolean\"", 1, &sum,
      M2I_ET_BOOLEAN, &s4);                                                              /* 0 0 1 1 */
  gint ff = test_ir_op (b, "Convert", "opset1", "destination_type=\"f32\"", 1, &flags, M2I_ET_F32, &s4);
  /* MaxPool-8 of a constant: both outputs, the indices i64 */
  const float p[4] = { 1, 9, 4, 2 };
  gint pc = test_ir_const (b, M2I_ET_F32, &pool_in, p);
  gint pool = test_ir_op (b, "MaxPool", "opset8", "strides=\"2,2\" dilations=\"1,1\" "
      "pads_begin=\"0,0\" pads_end=\"0,0\" kernel=\"2,2\" rounding_type=\"floor\" "
      "auto_pad=\"explicit\" index_element_type=\"i64\" axis=\"0\"", 1, &pc, M2I_ET_F32, &pool_out);
  /* ShapeOf of the parameter (static), gathered and converted */
  gint shape = test_ir_op (b, "ShapeOf", "opset3", "output_type=\"i32\"", 1, &x, M2I_ET_I32, &TEST_SHAPE (1));
  gint sf = test_ir_op (b, "Convert", "opset1", "destination_type=\"f32\"", 1, &shape, M2I_ET_F32,
      &TEST_SHAPE (1));
  gint pr_shape[2] = { pool, test_ir_const (b, M2I_ET_I64, &TEST_SHAPE (1), (gint64[]) { 1 }) };
  gint pflat = test_ir_op (b, "Reshape", "opset1", "special_zero=\"false\"", 2, pr_shape, M2I_ET_F32,
      &TEST_SHAPE (1));
  gint cat_in[3] = { ff, pflat, sf };
  gint cat = test_ir_op (b, "Concat", "opset1", "axis=\"0\"", 3, cat_in, M2I_ET_F32, &s6);
  gint add_in[2] = { x, cat };
  test_ir_result (b, test_ir_op (b, "Add", "opset1", NULL, 2, add_in, M2I_ET_F32, &s6));
  g_autofree gchar *xml = g_strdup (test_ir_xml (b));
  g_autoptr (GBytes) w = g_bytes_ref (test_ir_weights (b));
  test_ir_free (b);
  /* the MaxPool's second output (indices) as the XML writes it */
  gchar *pool_port = strstr (xml, "type=\"MaxPool\"");
  g_assert_nonnull (pool_port);
  gchar *out_end = strstr (pool_port, "</output>");
  GString *x2 = g_string_new_len (xml, out_end - xml);
  g_string_append (x2, "<port id=\"9\" precision=\"I64\"><dim>1</dim><dim>1</dim><dim>1</dim><dim>1</dim></port>");
  g_string_append (x2, out_end);
  GError *error = NULL;
  M2iIrModel *m = m2i_ir_model_load_from_memory (x2->str, x2->len, w, "fold.xml", &error);
  g_assert_no_error (error);
  g_string_free (x2, TRUE);
  M2iIrCompiledModel *cm = m2i_ir_compile (m, NULL, &error);
  g_assert_no_error (error);
  /* only the last Add runs */
  g_assert_cmpint (m2i_ir_compiled_model_get_n_runtime_nodes (cm), ==, 1);
  const M2iTensor *idx = m2i_ir_compiled_model_get_value (cm, pool, 1);
  g_assert_nonnull (idx->data);
  g_assert_cmpint (idx->type, ==, M2I_ET_I64);
  g_assert_cmpint (*(const gint64 *) idx->data, ==, 1);          /* 9 is element 1 */
  const M2iTensor *fl = m2i_ir_compiled_model_get_value (cm, flags, 0);
  g_assert_cmpint (fl->type, ==, M2I_ET_BOOLEAN);
  g_assert_cmpmem (fl->data, 4, ((const guint8[]) { 0, 0, 1, 1 }), 4);
  M2iIrInferRequest *req = m2i_ir_infer_request_new (cm, &error);
  float *xin = m2i_ir_infer_request_get_input (req, 0)->data;
  for (gint i = 0; i < 6; i++)
    xin[i] = 10 * i;
  g_assert_true (m2i_ir_infer_request_infer (req, &error));
  const float expect[6] = { 0, 10, 21, 31, 49, 56 };   /* + [0,0,1,1, 9, 6] */
  g_assert_cmpmem (m2i_ir_infer_request_get_output (req, 0)->data, sizeof expect, expect, sizeof expect);
  m2i_ir_infer_request_free (req);
  m2i_ir_compiled_model_unref (cm);
  m2i_ir_model_unref (m);
}

/* MaxPool-14 / AvgPool-14 (the YOLO exports' SPPF): rounding_type
 * ceil_torch drops a last window that would start in the right padding;
 * values by hand from PyTorch's rule (ceil_mode=True). */
static void
test_pool14 (void)
{
  for (gint avg = 0; avg < 2; avg++) {
    TestIr *b = test_ir_new (11);
    M2iShape in = TEST_SHAPE (1, 1, 4, 4), out = TEST_SHAPE (1, 1, 2, 2);
    gint x = test_ir_parameter (b, "x", M2I_ET_F32, &in);
    test_ir_result (b, test_ir_op (b, avg ? "AvgPool" : "MaxPool", "opset14", avg ?
        "strides=\"2,2\" pads_begin=\"0,0\" pads_end=\"1,1\" kernel=\"2,2\" "
        "rounding_type=\"ceil_torch\" auto_pad=\"explicit\" exclude-pad=\"true\"" :
        "strides=\"2,2\" dilations=\"1,1\" pads_begin=\"0,0\" pads_end=\"1,1\" kernel=\"2,2\" "
        "rounding_type=\"ceil_torch\" auto_pad=\"explicit\" index_element_type=\"i64\" axis=\"0\"",
        1, &x, M2I_ET_F32, &out));
    Run r = run_new (b);
    test_ir_free (b);
    float v[16];
    for (gint i = 0; i < 16; i++)
      v[i] = i;
    set_input (&r, 0, M2I_ET_F32, &in, v);
    const M2iTensor *o = infer (&r, 0);
    g_assert_true (m2i_shape_equal (&o->shape, &out));
    const float max_expect[4] = { 5, 7, 13, 15 }, avg_expect[4] = { 2.5f, 4.5f, 10.5f, 12.5f };
    g_assert_cmpmem (o->data, sizeof max_expect, avg ? avg_expect : max_expect, sizeof max_expect);
    run_free (&r);
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ir/dynamic/nonzero", test_nonzero);
  g_test_add_func ("/ir/dynamic/downstream", test_downstream);
  g_test_add_func ("/ir/dynamic/nms-rows", test_nms_rows);
  g_test_add_func ("/ir/dynamic/run-time-target", test_run_time_target);
  g_test_add_func ("/ir/dynamic/reshape-input", test_reshape_input);
  g_test_add_func ("/ir/dynamic/fold-nonzero", test_fold_nonzero);
  g_test_add_func ("/ir/load/unread-port-type", test_unread_port_type);
  g_test_add_func ("/ir/load/missing-ops", test_missing_ops);
  g_test_add_func ("/ir/load/duplicate-tensor-names", test_duplicate_tensor_names);
  g_test_add_func ("/ir/load/pool-14", test_pool14);
  g_test_add_func ("/ir/fold/types", test_fold_types);
  return g_test_run ();
}
