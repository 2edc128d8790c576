/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The graph and the runtime: constant folding of shape chains, memory reuse
 * with correct liveness, pruning, f16 inputs, requests on several threads,
 * opset resolution in the registry. */
#include "ir-test-util.h"
#include <base/m2i-error.h>
#include <base/m2i-fp16.h>
#include <ir/ir-compile.h>

#include <math.h>
#include <string.h>

static M2iIrCompiledModel *
compile (TestIr *b, M2iIrModel **model)
{
  GError *error = NULL;
  *model = test_ir_load (b, &error);
  g_assert_no_error (error);
  M2iIrCompiledModel *cm = m2i_ir_compile (*model, NULL, &error);
  g_assert_no_error (error);
  return cm;
}

/* x → ShapeOf → StridedSlice [0:2] → Concat with [-1] → Reshape(x): the
 * person-detection pattern. Everything but the Reshape is evaluated at
 * compile time, and the Reshape only views x. */
static void
test_fold_shape_chain (void)
{
  TestIr *b = test_ir_new (10);
  M2iShape xs = TEST_SHAPE (1, 3, 4, 6), s1 = TEST_SHAPE (1), s2 = TEST_SHAPE (2),
      s3 = TEST_SHAPE (3), s4 = TEST_SHAPE (4), out = TEST_SHAPE (1, 3, 24);
  gint x = test_ir_parameter (b, "x", M2I_ET_F32, &xs);
  gint shape = test_ir_op (b, "ShapeOf", "opset3", "output_type=\"i64\"", 1, &x, M2I_ET_I64, &s4);
  gint64 begin = 0, end = 2, stride = 1, minus_one = -1;
  gint ss_in[4] = { shape, test_ir_const (b, M2I_ET_I64, &s1, &begin),
    test_ir_const (b, M2I_ET_I64, &s1, &end), test_ir_const (b, M2I_ET_I64, &s1, &stride) };
  gint ss = test_ir_op (b, "StridedSlice", "opset1", "begin_mask=\"0\" end_mask=\"0\" "
      "new_axis_mask=\"\" shrink_axis_mask=\"\" ellipsis_mask=\"\"", 4, ss_in, M2I_ET_I64, &s2);
  gint cat_in[2] = { ss, test_ir_const (b, M2I_ET_I64, &s1, &minus_one) };
  gint cat = test_ir_op (b, "Concat", "opset1", "axis=\"0\"", 2, cat_in, M2I_ET_I64, &s3);
  gint rs_in[2] = { x, cat };
  gint rs = test_ir_op (b, "Reshape", "opset1", "special_zero=\"true\"", 2, rs_in, M2I_ET_F32, &out);
  test_ir_result (b, rs);
  M2iIrModel *m;
  M2iIrCompiledModel *cm = compile (b, &m);
  g_assert_cmpint (m2i_ir_compiled_model_get_n_runtime_nodes (cm), ==, 1);
  const M2iTensor *v = m2i_ir_compiled_model_get_value (cm, shape, 0);
  g_assert_nonnull (v->data);
  const gint64 expect_shape[4] = { 1, 3, 4, 6 }, expect_cat[3] = { 1, 3, -1 };
  g_assert_cmpmem (v->data, 32, expect_shape, 32);
  v = m2i_ir_compiled_model_get_value (cm, cat, 0);
  g_assert_cmpmem (v->data, 24, expect_cat, 24);
  g_assert_null (m2i_ir_compiled_model_get_value (cm, rs, 0)->data);   /* computed at run time */
  g_assert_null (m2i_ir_compiled_model_get_value (cm, rs, 1));

  GError *error = NULL;
  M2iIrInferRequest *req = m2i_ir_infer_request_new (cm, &error);
  float *in = m2i_ir_infer_request_get_input (req, 0)->data;
  for (gint i = 0; i < 72; i++)
    in[i] = i * 0.5f;
  g_assert_true (m2i_ir_infer_request_infer (req, &error));
  const M2iTensor *o = m2i_ir_infer_request_get_output (req, 0);
  g_assert_true (m2i_shape_equal (&o->shape, &out));
  for (gint i = 0; i < 72; i++)
    g_assert_cmpfloat (((float *) o->data)[i], ==, i * 0.5f);
  m2i_ir_infer_request_free (req);
  m2i_ir_compiled_model_unref (cm);
  m2i_ir_model_unref (m);
  test_ir_free (b);
}

/* A chain of 12 transposes of a 64×48 matrix, plus a skip connection: the
 * planner reuses buffers (far less memory than one buffer per layer), and
 * the skip's buffer stays alive until the Concat that reads it. */
static void
test_memory_reuse (void)
{
  TestIr *b = test_ir_new (11);
  M2iShape a = TEST_SHAPE (64, 48), t = TEST_SHAPE (48, 64), two = TEST_SHAPE (2),
      cat_shape = TEST_SHAPE (128, 48);
  gint x = test_ir_parameter (b, "x", M2I_ET_F32, &a);
  gint64 perm[2] = { 1, 0 };
  gint p = test_ir_const (b, M2I_ET_I64, &two, perm);
  gint cur = x, skip = -1;
  for (gint i = 0; i < 12; i++) {
    gint in[2] = { cur, p };
    cur = test_ir_op (b, "Transpose", "opset1", NULL, 2, in, M2I_ET_F32, i % 2 ? &a : &t);
    if (i == 1)
      skip = cur;                /* = x, read again at the end */
  }
  gint cat_in[2] = { cur, skip };
  test_ir_result (b, test_ir_op (b, "Concat", "opset1", "axis=\"0\"", 2, cat_in, M2I_ET_F32, &cat_shape));
  M2iIrModel *m;
  M2iIrCompiledModel *cm = compile (b, &m);
  gsize one = 64 * 48 * 4;
  /* 14 values of one buffer each (the Concat's two) without reuse; the plan
   * needs input + result (2) + skip + two ping-pong buffers */
  g_assert_cmpuint (m2i_ir_compiled_model_get_request_bytes (cm), <=, 6 * one);
  GError *error = NULL;
  M2iIrInferRequest *req = m2i_ir_infer_request_new (cm, &error);
  float *in = m2i_ir_infer_request_get_input (req, 0)->data;
  for (gint k = 0; k < 2; k++) {
    for (gint i = 0; i < 64 * 48; i++)
      in[i] = i + k * 1000;
    g_assert_true (m2i_ir_infer_request_infer (req, &error));
    const float *o = m2i_ir_infer_request_get_output (req, 0)->data;
    /* an even number of transposes is the identity: [x; x] */
    for (gint i = 0; i < 64 * 48; i++) {
      g_assert_cmpfloat (o[i], ==, i + k * 1000);
      g_assert_cmpfloat (o[64 * 48 + i], ==, i + k * 1000);
    }
    /* the input survives the inference */
    g_assert_cmpfloat (in[5], ==, 5 + k * 1000);
  }
  m2i_ir_infer_request_free (req);
  m2i_ir_compiled_model_unref (cm);
  m2i_ir_model_unref (m);
  test_ir_free (b);
}

/* Element-wise layers write over an input nobody reads later: Transpose →
 * Add(bias) → Abs → Multiply share one buffer (Abs: a ReLU would run
 * inside the Add); an input read again later
 * (the skip into the Concat) and the model's input are never overwritten. */
static void
test_in_place (void)
{
  TestIr *b = test_ir_new (11);
  M2iShape a = TEST_SHAPE (2, 3), t = TEST_SHAPE (3, 2), one = TEST_SHAPE (1), cat = TEST_SHAPE (6, 2);
  gint x = test_ir_parameter (b, "x", M2I_ET_F32, &a);
  gint64 perm[2] = { 1, 0 };
  gint tin[2] = { x, test_ir_const (b, M2I_ET_I64, &TEST_SHAPE (2), perm) };
  gint tr = test_ir_op (b, "Transpose", "opset1", NULL, 2, tin, M2I_ET_F32, &t);
  float bias = -2, two = 2;
  gint add_in[2] = { tr, test_ir_const (b, M2I_ET_F32, &one, &bias) };
  gint add = test_ir_op (b, "Add", "opset1", NULL, 2, add_in, M2I_ET_F32, &t);
  gint act = test_ir_op (b, "Abs", "opset1", NULL, 1, &add, M2I_ET_F32, &t);
  gint mul_in[2] = { test_ir_const (b, M2I_ET_F32, &one, &two), act };     /* aliases input 1 */
  gint mul = test_ir_op (b, "Multiply", "opset1", NULL, 2, mul_in, M2I_ET_F32, &t);
  gint x2_in[2] = { x, test_ir_const (b, M2I_ET_I64, &TEST_SHAPE (2), perm) };
  gint tr2 = test_ir_op (b, "Transpose", "opset1", NULL, 2, x2_in, M2I_ET_F32, &t);
  gint add2_in[2] = { tr2, test_ir_const (b, M2I_ET_F32, &one, &bias) };
  gint add2 = test_ir_op (b, "Add", "opset1", NULL, 2, add2_in, M2I_ET_F32, &t);   /* tr2 read later */
  gint cat_in[3] = { mul, add2, tr2 };
  (void) cat;
  test_ir_result (b, test_ir_op (b, "Concat", "opset1", "axis=\"0\"", 3, cat_in, M2I_ET_F32,
      &TEST_SHAPE (9, 2)));
  M2iIrModel *m;
  M2iIrCompiledModel *cm = compile (b, &m);
  GError *error = NULL;
  M2iIrInferRequest *req = m2i_ir_infer_request_new (cm, &error);
  float *in = m2i_ir_infer_request_get_input (req, 0)->data;
  const float xv[6] = { 1, 5, -3, 4, 2, 0 };               /* [[1,5,-3],[4,2,0]] */
  memcpy (in, xv, sizeof xv);
  g_assert_true (m2i_ir_infer_request_infer (req, &error));
  /* xᵀ = [[1,4],[5,2],[-3,0]] */
  const float expect[18] = {
    2, 4, 6, 0, 10, 4,           /* 2·|xᵀ − 2| */
    -1, 2, 3, 0, -5, -2,         /* xᵀ − 2 */
    1, 4, 5, 2, -3, 0,           /* xᵀ */
  };
  g_assert_cmpmem (m2i_ir_infer_request_get_output (req, 0)->data, sizeof expect, expect, sizeof expect);
  g_assert_cmpmem (in, sizeof xv, xv, sizeof xv);           /* the input is intact */
  /* the chain shares one buffer group; tr2, read after add2, does not */
#define GROUP(node) (cm->values[cm->value_base[node]].group)
  g_assert_cmpint (GROUP (tr), >=, 0);
  g_assert_cmpint (GROUP (add), ==, GROUP (tr));
  g_assert_cmpint (GROUP (act), ==, GROUP (tr));
  g_assert_cmpint (GROUP (mul), ==, GROUP (tr));
  g_assert_cmpint (GROUP (add2), !=, GROUP (tr2));
  g_assert_cmpint (GROUP (tr), !=, GROUP (x));
#undef GROUP
  m2i_ir_infer_request_free (req);
  m2i_ir_compiled_model_unref (cm);
  m2i_ir_model_unref (m);
  test_ir_free (b);
}

/* Concat on an axis after 1-dims: producers write straight into their
 * block of the output when it starts on a 64-byte boundary. */
static void
test_concat_in_place (void)
{
  TestIr *b = test_ir_new (11);
  M2iShape s = TEST_SHAPE (1, 4, 4), s3 = TEST_SHAPE (1, 1, 3), c = TEST_SHAPE (1, 8, 4), c3 = TEST_SHAPE (1, 2, 3);
  gint x = test_ir_parameter (b, "x", M2I_ET_F32, &s);
  gint y = test_ir_parameter (b, "y", M2I_ET_F32, &s3);
  gint64 perm[3] = { 0, 2, 1 };
  gint p = test_ir_const (b, M2I_ET_I64, &TEST_SHAPE (3), perm);
  gint t1_in[2] = { x, p };
  gint t1 = test_ir_op (b, "Transpose", "opset1", NULL, 2, t1_in, M2I_ET_F32, &s);      /* 64 bytes */
  gint r1 = test_ir_op (b, "ReLU", "opset1", NULL, 1, &x, M2I_ET_F32, &s);
  gint cat_in[2] = { t1, r1 };
  gint cat = test_ir_op (b, "Concat", "opset1", "axis=\"1\"", 2, cat_in, M2I_ET_F32, &c);
  test_ir_result (b, cat);
  /* 12-byte blocks: the second would be misaligned, so it is copied */
  gint u1 = test_ir_op (b, "ReLU", "opset1", NULL, 1, &y, M2I_ET_F32, &s3);
  gint u2 = test_ir_op (b, "Sigmoid", "opset1", NULL, 1, &y, M2I_ET_F32, &s3);
  gint cat2_in[2] = { u1, u2 };
  gint cat2 = test_ir_op (b, "Concat", "opset1", "axis=\"-2\"", 2, cat2_in, M2I_ET_F32, &c3);
  test_ir_result (b, cat2);
  M2iIrModel *m;
  M2iIrCompiledModel *cm = compile (b, &m);
#define VALUE(node) (&cm->values[cm->value_base[node]])
  g_assert_cmpint (VALUE (t1)->group, ==, VALUE (cat)->group);
  g_assert_cmpint (VALUE (r1)->group, ==, VALUE (cat)->group);
  g_assert_cmpuint (VALUE (t1)->offset, ==, VALUE (cat)->offset);
  g_assert_cmpuint (VALUE (r1)->offset, ==, VALUE (cat)->offset + 64);
  g_assert_cmpint (VALUE (u1)->group, ==, VALUE (cat2)->group);
  g_assert_cmpint (VALUE (u2)->group, !=, VALUE (cat2)->group);
#undef VALUE
  GError *error = NULL;
  M2iIrInferRequest *req = m2i_ir_infer_request_new (cm, &error);
  float *xd = m2i_ir_infer_request_get_input (req, 0)->data;
  float *yd = m2i_ir_infer_request_get_input (req, 1)->data;
  for (gint i = 0; i < 16; i++)
    xd[i] = i - 8;
  yd[0] = -1, yd[1] = 0, yd[2] = 2;
  g_assert_true (m2i_ir_infer_request_infer (req, &error));
  const float *o = m2i_ir_infer_request_get_output (req, 0)->data;
  for (gint r = 0; r < 4; r++)
    for (gint k = 0; k < 4; k++) {
      g_assert_cmpfloat (o[r * 4 + k], ==, xd[k * 4 + r]);            /* transpose */
      g_assert_cmpfloat (o[16 + r * 4 + k], ==, MAX (xd[r * 4 + k], 0)); /* relu */
    }
  const float *o2 = m2i_ir_infer_request_get_output (req, 1)->data;
  const float expect2[6] = { 0, 0, 2, 1 / (1 + expf (1)), 0.5f, 1 / (1 + expf (-2)) };
  for (gint i = 0; i < 6; i++)
    g_assert_cmpfloat_with_epsilon (o2[i], expect2[i], 1e-6);
  m2i_ir_infer_request_free (req);
  m2i_ir_compiled_model_unref (cm);
  m2i_ir_model_unref (m);
  test_ir_free (b);
}

/* MaxPool-8's indices, read by nobody, get no memory (and are not computed). */
static void
test_unread_output (void)
{
  GString *xml = g_string_new (
    "<?xml version=\"1.0\"?>\n<net name=\"pool\" version=\"11\"><layers>\n"
    "<layer id=\"0\" name=\"x\" type=\"Parameter\" version=\"opset1\"><data shape=\"1,1,2,4\" element_type=\"f32\"/>"
    "<output><port id=\"0\" precision=\"FP32\"><dim>1</dim><dim>1</dim><dim>2</dim><dim>4</dim></port></output></layer>\n"
    "<layer id=\"1\" name=\"pool\" type=\"MaxPool\" version=\"opset8\"><data strides=\"2,2\" dilations=\"1,1\" "
    "pads_begin=\"0,0\" pads_end=\"0,0\" kernel=\"2,2\" rounding_type=\"floor\" auto_pad=\"explicit\" "
    "index_element_type=\"i64\" axis=\"0\"/>"
    "<input><port id=\"0\"><dim>1</dim><dim>1</dim><dim>2</dim><dim>4</dim></port></input>"
    "<output><port id=\"1\" precision=\"FP32\"><dim>1</dim><dim>1</dim><dim>1</dim><dim>2</dim></port>"
    "<port id=\"2\" precision=\"I64\"><dim>1</dim><dim>1</dim><dim>1</dim><dim>2</dim></port></output></layer>\n"
    "<layer id=\"2\" name=\"out\" type=\"Result\" version=\"opset1\">"
    "<input><port id=\"0\"><dim>1</dim><dim>1</dim><dim>1</dim><dim>2</dim></port></input></layer>\n"
    "</layers><edges><edge from-layer=\"0\" from-port=\"0\" to-layer=\"1\" to-port=\"0\"/>"
    "<edge from-layer=\"1\" from-port=\"1\" to-layer=\"2\" to-port=\"0\"/></edges></net>\n");
  GError *error = NULL;
  M2iIrModel *m = m2i_ir_model_load_from_memory (xml->str, xml->len, NULL, "pool.xml", &error);
  g_assert_no_error (error);
  M2iIrCompiledModel *cm = m2i_ir_compile (m, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (cm->values[cm->value_base[1] + 1].group, ==, -1);
  g_assert_cmpint (cm->values[cm->value_base[1]].group, >=, 0);
  M2iIrInferRequest *req = m2i_ir_infer_request_new (cm, &error);
  const float x[8] = { 1, 7, 2, 3, -4, 0, 9, -1 };
  memcpy (m2i_ir_infer_request_get_input (req, 0)->data, x, sizeof x);
  g_assert_true (m2i_ir_infer_request_infer (req, &error));
  const float expect[2] = { 7, 9 };
  g_assert_cmpmem (m2i_ir_infer_request_get_output (req, 0)->data, 8, expect, 8);
  m2i_ir_infer_request_free (req);
  m2i_ir_compiled_model_unref (cm);
  m2i_ir_model_unref (m);
  g_string_free (xml, TRUE);
}

/* A layer with many ports: 20000 inputs of one Concat load, compile and run
 * quickly (port lookups are not quadratic). */
static void
test_many_ports (void)
{
  enum { N = 20000 };
  GString *xml = g_string_new ("<?xml version=\"1.0\"?>\n<net name=\"wide\" version=\"11\"><layers>\n"
      "<layer id=\"0\" name=\"x\" type=\"Parameter\" version=\"opset1\"><data shape=\"1\" element_type=\"f32\"/>"
      "<output><port id=\"0\" precision=\"FP32\"><dim>1</dim></port></output></layer>\n"
      "<layer id=\"1\" name=\"cat\" type=\"Concat\" version=\"opset1\"><data axis=\"0\"/><input>");
  for (gint i = 0; i < N; i++)
    g_string_append_printf (xml, "<port id=\"%d\"><dim>1</dim></port>", 2 * i + 1);   /* odd ids */
  g_string_append_printf (xml, "</input><output><port id=\"0\" precision=\"FP32\"><dim>%d</dim></port>"
      "</output></layer>\n<layer id=\"2\" name=\"out\" type=\"Result\" version=\"opset1\"><input>"
      "<port id=\"0\"><dim>%d</dim></port></input></layer>\n</layers><edges>", N, N);
  for (gint i = N - 1; i >= 0; i--)
    g_string_append_printf (xml, "<edge from-layer=\"0\" from-port=\"0\" to-layer=\"1\" to-port=\"%d\"/>", 2 * i + 1);
  g_string_append (xml, "<edge from-layer=\"1\" from-port=\"0\" to-layer=\"2\" to-port=\"0\"/></edges></net>\n");
  gint64 t0 = g_get_monotonic_time ();
  GError *error = NULL;
  M2iIrModel *m = m2i_ir_model_load_from_memory (xml->str, xml->len, NULL, "wide.xml", &error);
  g_assert_no_error (error);
  M2iIrCompiledModel *cm = m2i_ir_compile (m, NULL, &error);
  g_assert_no_error (error);
  M2iIrInferRequest *req = m2i_ir_infer_request_new (cm, &error);
  *(float *) m2i_ir_infer_request_get_input (req, 0)->data = 2.5f;
  g_assert_true (m2i_ir_infer_request_infer (req, &error));
  const float *o = m2i_ir_infer_request_get_output (req, 0)->data;
  for (gint i = 0; i < N; i++)
    g_assert_cmpfloat (o[i], ==, 2.5f);
  g_test_message ("%d ports: %.0f ms", N, (g_get_monotonic_time () - t0) / 1e3);
  m2i_ir_infer_request_free (req);
  m2i_ir_compiled_model_unref (cm);
  m2i_ir_model_unref (m);
  g_string_free (xml, TRUE);
}

/* v11 weight compression: Const(f16) → Convert(f32) → Reshape. The f16 data
 * is widened once at load; the Convert and the Reshape of it are the same
 * constant, not copies. */
static void
test_const_views (void)
{
  TestIr *b = test_ir_new (11);
  M2iShape s = TEST_SHAPE (2, 2), flat = TEST_SHAPE (4);
  guint16 half[4] = { 0x3c00, 0x4000, 0x4200, 0x4400 };        /* 1 2 3 4 */
  gint w = test_ir_const (b, M2I_ET_F16, &s, half);
  gint cv = test_ir_op (b, "Convert", "opset1", "destination_type=\"f32\"", 1, &w, M2I_ET_F32, &s);
  gint64 four = 4;
  gint rin[2] = { cv, test_ir_const (b, M2I_ET_I64, &TEST_SHAPE (1), &four) };
  gint rs = test_ir_op (b, "Reshape", "opset1", NULL, 2, rin, M2I_ET_F32, &flat);
  gint x = test_ir_parameter (b, "x", M2I_ET_F32, &flat);
  gint add_in[2] = { x, rs };
  test_ir_result (b, test_ir_op (b, "Add", "opset1", NULL, 2, add_in, M2I_ET_F32, &flat));
  M2iIrModel *m;
  M2iIrCompiledModel *cm = compile (b, &m);
  const M2iTensor *wv = m2i_ir_compiled_model_get_value (cm, w, 0);
  g_assert_true (m2i_ir_compiled_model_get_value (cm, cv, 0)->data == wv->data);
  g_assert_true (m2i_ir_compiled_model_get_value (cm, rs, 0)->data == wv->data);
  g_assert_cmpint (m2i_ir_compiled_model_get_n_runtime_nodes (cm), ==, 1);
  GError *error = NULL;
  M2iIrInferRequest *req = m2i_ir_infer_request_new (cm, &error);
  const float xv[4] = { 10, 20, 30, 40 }, expect[4] = { 11, 22, 33, 44 };
  memcpy (m2i_ir_infer_request_get_input (req, 0)->data, xv, sizeof xv);
  g_assert_true (m2i_ir_infer_request_infer (req, &error));
  g_assert_cmpmem (m2i_ir_infer_request_get_output (req, 0)->data, 16, expect, 16);
  m2i_ir_infer_request_free (req);
  m2i_ir_compiled_model_unref (cm);
  m2i_ir_model_unref (m);
  test_ir_free (b);
}

/* Convolution → Add(per-channel bias) → ReLU runs as one layer (the kernel's
 * fused epilogue); a bias that broadcasts along another axis, or a
 * convolution whose output is read twice, keeps its Add. Values by hand:
 * a 1×1 convolution of 2 channels is a 2×2 matrix per pixel. */
static void
test_fuse_bias_relu (void)
{
  M2iShape xs = TEST_SHAPE (1, 2, 1, 2), ws = TEST_SHAPE (2, 2, 1, 1), cb = TEST_SHAPE (1, 2, 1, 1),
      wb = TEST_SHAPE (2);
  const float w[4] = { 1, 2, -3, 1 };        /* out0 = x0 + 2 x1, out1 = -3 x0 + x1 */
  const float bias[2] = { 0.5f, -1 }, wbias[2] = { 100, 200 };
  const float x[4] = { 1, -2, 3, 4 };        /* x0 = (1, -2), x1 = (3, 4) per pixel */
  /* conv: out0 = (7, 6), out1 = (0, 10) */
  const float fused[4] = { 7.5f, 6.5f, 0, 9 };             /* relu (conv + [0.5, -1] per channel) */
  const float along_w[4] = { 107, 206, 100, 210 };         /* conv + [100, 200] along W, no ReLU */
  for (gint variant = 0; variant < 3; variant++) {
    TestIr *b = test_ir_new (11);
    gint xin = test_ir_parameter (b, "x", M2I_ET_F32, &xs);
    gint cin[2] = { xin, test_ir_const (b, M2I_ET_F32, &ws, w) };
    gint conv = test_ir_op (b, "Convolution", "opset1", "strides=\"1,1\" dilations=\"1,1\" "
        "pads_begin=\"0,0\" pads_end=\"0,0\" auto_pad=\"explicit\"", 2, cin, M2I_ET_F32, &xs);
    gint ain[2] = { conv, variant == 1 ? test_ir_const (b, M2I_ET_F32, &wb, wbias) :
        test_ir_const (b, M2I_ET_F32, &cb, bias) };
    gint add = test_ir_op (b, "Add", "opset1", NULL, 2, ain, M2I_ET_F32, &xs);
    gint last = variant == 1 ? add : test_ir_op (b, "ReLU", "opset1", NULL, 1, &add, M2I_ET_F32, &xs);
    test_ir_result (b, last);
    if (variant == 2)
      test_ir_result (b, conv);              /* the convolution's output is read twice */
    M2iIrModel *m;
    M2iIrCompiledModel *cm = compile (b, &m);
    /* variant 2: the Add stays, with the ReLU inside it (Add → ReLU) */
    g_assert_cmpint (m2i_ir_compiled_model_get_n_runtime_nodes (cm), ==, variant == 0 ? 1 : 2);
    GError *error = NULL;
    M2iIrInferRequest *req = m2i_ir_infer_request_new (cm, &error);
    memcpy (m2i_ir_infer_request_get_input (req, 0)->data, x, sizeof x);
    g_assert_true (m2i_ir_infer_request_infer (req, &error));
    g_assert_cmpmem (m2i_ir_infer_request_get_output (req, 0)->data, 16, variant == 1 ? along_w : fused, 16);
    if (variant == 2) {
      const float conv_out[4] = { 7, 6, 0, 10 };
      g_assert_cmpmem (m2i_ir_infer_request_get_output (req, 1)->data, 16, conv_out, 16);
    }
    m2i_ir_infer_request_free (req);
    m2i_ir_compiled_model_unref (cm);
    m2i_ir_model_unref (m);
    test_ir_free (b);
  }
}

/* A request of @cm run on inputs @x and @y (@bytes each). */
static M2iIrInferRequest *
infer_two (M2iIrCompiledModel *cm, const float *x, const float *y, gsize bytes)
{
  GError *error = NULL;
  M2iIrInferRequest *req = m2i_ir_infer_request_new (cm, &error);
  g_assert_no_error (error);
  memcpy (m2i_ir_infer_request_get_input (req, 0)->data, x, bytes);
  memcpy (m2i_ir_infer_request_get_input (req, 1)->data, y, bytes);
  g_assert_true (m2i_ir_infer_request_infer (req, &error));
  g_assert_no_error (error);
  return req;
}

/* Add → ReLU (a residual Add: two runtime inputs) runs as one layer, the
 * Add applying ReLU as it stores; an Add read by something else too keeps
 * its ReLU. Values by hand, with a NaN and a negative zero (ReLU gives 0
 * for both, as the ReLU layer does). */
static void
test_fuse_add_relu (void)
{
  M2iShape xs = TEST_SHAPE (1, 2, 1, 3);
  const float x[6] = { 1, -2, 3, NAN, -0.0f, 0.5f }, y[6] = { 2, 1, -4, 1, 0, -0.25f };
  const float relu[6] = { 3, 0, 0, 0, 0, 0.25f };
  for (gint variant = 0; variant < 2; variant++) {
    TestIr *b = test_ir_new (11);
    gint in[2] = { test_ir_parameter (b, "x", M2I_ET_F32, &xs),
      test_ir_parameter (b, "y", M2I_ET_F32, &xs) };
    gint add = test_ir_op (b, "Add", "opset1", NULL, 2, in, M2I_ET_F32, &xs);
    test_ir_result (b, test_ir_op (b, "ReLU", "opset1", NULL, 1, &add, M2I_ET_F32, &xs));
    if (variant == 1)
      test_ir_result (b, add);               /* the sum is read twice */
    M2iIrModel *m;
    M2iIrCompiledModel *cm = compile (b, &m);
    g_assert_cmpint (m2i_ir_compiled_model_get_n_runtime_nodes (cm), ==, variant + 1);
    M2iIrInferRequest *req = infer_two (cm, x, y, sizeof x);
    const float *got = m2i_ir_infer_request_get_output (req, 0)->data;
    for (gint i = 0; i < 6; i++) {
      g_assert_cmpfloat (got[i], ==, relu[i]);
      g_assert_false (signbit (got[i]));
    }
    if (variant == 1) {
      const float *sum = m2i_ir_infer_request_get_output (req, 1)->data;
      g_assert_cmpfloat (sum[0], ==, 3);
      g_assert_cmpfloat (sum[1], ==, -1);
      g_assert_true (isnan (sum[3]));
    }
    m2i_ir_infer_request_free (req);
    m2i_ir_compiled_model_unref (cm);
    m2i_ir_model_unref (m);
    test_ir_free (b);
  }
}

/* Add → Multiply (per-channel constant) → Add (per-channel constant) →
 * ReLU, each read only by the next, runs as one layer (the Add's fused
 * epilogue); so do Multiply → Add (a model's input scaling) and the chain
 * without its ReLU; a Multiply whose output is also a Result keeps the
 * Add after it. The expected values are the layers' expressions in
 * their order, written here (with a NaN and a negative zero: ReLU gives 0
 * for both). */
static void
test_fuse_channel_affine (void)
{
  M2iShape xs = TEST_SHAPE (1, 2, 1, 3), cs = TEST_SHAPE (1, 2, 1, 1);
  const float x[6] = { 1, -2, 3, NAN, -0.0f, 0.5f }, y[6] = { 2, 1, -4, 1, 0, -0.25f };
  const float sc[2] = { 0.5f, -3 }, sh[2] = { -1, 0.25f };
  for (gint variant = 0; variant < 4; variant++) {
    TestIr *b = test_ir_new (11);
    gint in[2] = { test_ir_parameter (b, "x", M2I_ET_F32, &xs),
      test_ir_parameter (b, "y", M2I_ET_F32, &xs) };
    gint first;
    if (variant == 2) {
      gint min[2] = { in[0], test_ir_const (b, M2I_ET_F32, &cs, sc) };
      first = test_ir_op (b, "Multiply", "opset1", NULL, 2, min, M2I_ET_F32, &xs);
    } else {
      first = test_ir_op (b, "Add", "opset1", NULL, 2, in, M2I_ET_F32, &xs);
    }
    gint mul = first;
    if (variant != 2) {
      gint min[2] = { test_ir_const (b, M2I_ET_F32, &cs, sc), first };
      mul = test_ir_op (b, "Multiply", "opset1", NULL, 2, min, M2I_ET_F32, &xs);
    }
    gint ain[2] = { mul, test_ir_const (b, M2I_ET_F32, &cs, sh) };
    gint add = test_ir_op (b, "Add", "opset1", NULL, 2, ain, M2I_ET_F32, &xs);
    gboolean relu = variant != 1;
    test_ir_result (b, relu ? test_ir_op (b, "ReLU", "opset1", NULL, 1, &add, M2I_ET_F32, &xs)
        : add);
    if (variant == 3)
      test_ir_result (b, mul);               /* the scaled sum is read twice */
    M2iIrModel *m;
    M2iIrCompiledModel *cm = compile (b, &m);
    g_assert_cmpint (m2i_ir_compiled_model_get_n_runtime_nodes (cm), ==, variant == 3 ? 2 : 1);
    M2iIrInferRequest *req = infer_two (cm, x, y, sizeof x);
    const float *got = m2i_ir_infer_request_get_output (req, 0)->data;
    for (gint i = 0; i < 6; i++) {
      gint c = i / 3;
      float v = variant == 2 ? x[i] : x[i] + y[i];
      float scaled = sc[c] * v, want = scaled + sh[c];
      if (relu)
        want = want > 0.0f ? want : 0.0f;
      if (isnan (want)) {
        g_assert_true (isnan (got[i]));
      } else {
        g_assert_cmpfloat (got[i], ==, want);
        g_assert_true (signbit (got[i]) == signbit (want));
      }
      if (variant == 3) {
        const float *mid = m2i_ir_infer_request_get_output (req, 1)->data;
        g_assert_true (isnan (scaled) ? isnan (mid[i]) : mid[i] == scaled);
      }
    }
    m2i_ir_infer_request_free (req);
    m2i_ir_compiled_model_unref (cm);
    m2i_ir_model_unref (m);
    test_ir_free (b);
  }
  /* A batch of two, 1200 pixels a channel: the Add's one row of 7200
   * crosses channel planes and is taken in pieces; on two threads. */
  M2iShape bs = TEST_SHAPE (2, 3, 30, 40), bc = TEST_SHAPE (3, 1, 1);
  const float bsc[3] = { 2, -0.5f, 1.5f }, bsh[3] = { 0.125f, -4, 3 };
  gsize n = 2 * 3 * 30 * 40;
  g_autofree float *bx = g_new (float, n), *by = g_new (float, n);
  for (gsize i = 0; i < n; i++) {
    bx[i] = (float) ((i * 37) % 101) / 7.0f - 7;
    by[i] = (float) ((i * 11) % 53) / 5.0f - 5;
  }
  TestIr *b = test_ir_new (11);
  gint in[2] = { test_ir_parameter (b, "x", M2I_ET_F32, &bs),
    test_ir_parameter (b, "y", M2I_ET_F32, &bs) };
  gint sum = test_ir_op (b, "Add", "opset1", NULL, 2, in, M2I_ET_F32, &bs);
  gint min[2] = { sum, test_ir_const (b, M2I_ET_F32, &bc, bsc) };
  gint mul = test_ir_op (b, "Multiply", "opset1", NULL, 2, min, M2I_ET_F32, &bs);
  gint ain[2] = { mul, test_ir_const (b, M2I_ET_F32, &bc, bsh) };
  test_ir_result (b, test_ir_op (b, "Add", "opset1", NULL, 2, ain, M2I_ET_F32, &bs));
  M2iIrModel *m = test_ir_load (b, NULL);
  M2iIrCompileOptions opts = { .n_threads = 2 };
  GError *error = NULL;
  M2iIrCompiledModel *cm = m2i_ir_compile (m, &opts, &error);
  g_assert_no_error (error);
  g_assert_cmpint (m2i_ir_compiled_model_get_n_runtime_nodes (cm), ==, 1);
  M2iIrInferRequest *req = infer_two (cm, bx, by, n * sizeof (float));
  const float *got = m2i_ir_infer_request_get_output (req, 0)->data;
  for (gsize i = 0; i < n; i++) {
    gint c = (gint) (i / 1200 % 3);
    float v = bx[i] + by[i], scaled = v * bsc[c], want = scaled + bsh[c];
    g_assert_cmpfloat (got[i], ==, want);
  }
  m2i_ir_infer_request_free (req);
  m2i_ir_compiled_model_unref (cm);
  m2i_ir_model_unref (m);
  test_ir_free (b);
}

/* A branch no Result reads is checked but not run. */
static void
test_prune (void)
{
  TestIr *b = test_ir_new (11);
  M2iShape s = TEST_SHAPE (4);
  gint x = test_ir_parameter (b, "x", M2I_ET_F32, &s);
  gint used = test_ir_op (b, "Convert", "opset1", "destination_type=\"i32\"", 1, &x, M2I_ET_I32, &s);
  test_ir_op (b, "Convert", "opset1", "destination_type=\"i64\"", 1, &x, M2I_ET_I64, &s);
  test_ir_result (b, used);
  M2iIrModel *m;
  M2iIrCompiledModel *cm = compile (b, &m);
  g_assert_cmpint (m2i_ir_compiled_model_get_n_runtime_nodes (cm), ==, 1);
  m2i_ir_compiled_model_unref (cm);
  m2i_ir_model_unref (m);
  test_ir_free (b);
}

/* f16 input and output: computed in f32; the input takes f16 or f32 data. */
static void
test_f16_io (void)
{
  TestIr *b = test_ir_new (10);
  M2iShape s = TEST_SHAPE (4), two = TEST_SHAPE (2, 2);
  gint x = test_ir_parameter (b, "x", M2I_ET_F16, &s);
  gint64 target[2] = { 2, 2 };
  gint in[2] = { x, test_ir_const (b, M2I_ET_I64, &TEST_SHAPE (2), target) };
  test_ir_result (b, test_ir_op (b, "Reshape", "opset1", NULL, 2, in, M2I_ET_F16, &two));
  M2iIrModel *m;
  M2iIrCompiledModel *cm = compile (b, &m);
  g_assert_cmpint (m2i_ir_model_get_input (m, 0)->type, ==, M2I_ET_F16);
  g_assert_cmpint (m2i_ir_model_get_output (m, 0)->type, ==, M2I_ET_F16);
  GError *error = NULL;
  M2iIrInferRequest *req = m2i_ir_infer_request_new (cm, &error);
  g_assert_cmpint (m2i_ir_infer_request_get_input (req, 0)->type, ==, M2I_ET_F32);
  m2i_f16 h[4] = { 0x3c00, 0xc000, 0x3555, 0x7bff };  /* 1, -2, 0.333251953125, 65504 */
  M2iTensor t = { M2I_ET_F16, s, h };
  g_assert_true (m2i_ir_infer_request_set_input (req, 0, &t, &error));
  g_assert_true (m2i_ir_infer_request_infer (req, &error));
  const M2iTensor *o = m2i_ir_infer_request_get_output (req, 0);
  g_assert_cmpint (o->type, ==, M2I_ET_F32);
  const float expect[4] = { 1, -2, 0.333251953125f, 65504 };
  g_assert_cmpmem (o->data, 16, expect, 16);
  float f[4] = { 4, 3, 2, 1 };
  t = (M2iTensor) { M2I_ET_F32, s, f };
  g_assert_true (m2i_ir_infer_request_set_input (req, 0, &t, &error));
  g_assert_true (m2i_ir_infer_request_infer (req, &error));
  g_assert_cmpmem (o->data, 16, f, 16);
  /* wrong type, wrong shape */
  gint32 i32[4] = { 0 };
  t = (M2iTensor) { M2I_ET_I32, s, i32 };
  g_assert_false (m2i_ir_infer_request_set_input (req, 0, &t, &error));
  g_assert_cmpstr (error->message, ==, "input 'x' takes f16 data, the tensor given is i32");
  g_clear_error (&error);
  t = (M2iTensor) { M2I_ET_F32, two, f };
  g_assert_false (m2i_ir_infer_request_set_input (req, 0, &t, &error));
  g_assert_cmpstr (error->message, ==, "input 'x' has shape [4], the tensor given has [2,2]");
  g_clear_error (&error);
  g_assert_false (m2i_ir_infer_request_set_input (req, 3, &t, &error));
  g_clear_error (&error);
  m2i_ir_infer_request_free (req);
  m2i_ir_compiled_model_unref (cm);
  m2i_ir_model_unref (m);
  test_ir_free (b);
}

typedef struct {
  M2iIrCompiledModel *cm;
  gint seed;
  gboolean ok;
} ThreadJob;

static gpointer
thread_main (gpointer data)
{
  ThreadJob *j = data;
  M2iIrInferRequest *req = m2i_ir_infer_request_new (j->cm, NULL);
  float *in = m2i_ir_infer_request_get_input (req, 0)->data;
  j->ok = TRUE;
  for (gint it = 0; it < 200 && j->ok; it++) {
    for (gint i = 0; i < 64 * 48; i++)
      in[i] = (float) (j->seed * 100000 + it * 7 + i);
    j->ok = m2i_ir_infer_request_infer (req, NULL);
    const float *o = m2i_ir_infer_request_get_output (req, 0)->data;
    /* output = transpose(x) */
    for (gint r = 0; r < 48 && j->ok; r++)
      for (gint c = 0; c < 64 && j->ok; c++)
        j->ok = o[r * 64 + c] == in[c * 48 + r];
  }
  m2i_ir_infer_request_free (req);
  return NULL;
}

/* One compiled model, one request per thread, run at the same time. */
static void
test_threads (void)
{
  TestIr *b = test_ir_new (11);
  M2iShape a = TEST_SHAPE (64, 48), t = TEST_SHAPE (48, 64);
  gint64 perm[2] = { 1, 0 };
  gint in[2] = { test_ir_parameter (b, "x", M2I_ET_F32, &a),
    test_ir_const (b, M2I_ET_I64, &TEST_SHAPE (2), perm) };
  test_ir_result (b, test_ir_op (b, "Transpose", "opset1", NULL, 2, in, M2I_ET_F32, &t));
  M2iIrModel *m;
  M2iIrCompiledModel *cm = compile (b, &m);
  ThreadJob jobs[3];
  GThread *threads[3];
  for (gint i = 0; i < 3; i++) {
    jobs[i] = (ThreadJob) { cm, i + 1, FALSE };
    threads[i] = g_thread_new ("req", thread_main, &jobs[i]);
  }
  for (gint i = 0; i < 3; i++) {
    g_thread_join (threads[i]);
    g_assert_true (jobs[i].ok);
  }
  m2i_ir_compiled_model_unref (cm);
  m2i_ir_model_unref (m);
  test_ir_free (b);
}

static gboolean
dummy_infer (M2iOpContext *ctx, GError **error)
{
  return TRUE;
}

/* opsetN holds the newest version of each op introduced at or before N. */
static void
test_opset_resolution (void)
{
  static const M2iOpKernel foo1 = { "Foo", "opset1", dummy_infer };
  static const M2iOpKernel foo5 = { "Foo", "opset5", dummy_infer };
  static const M2iOpKernel any = { "Bar", NULL, dummy_infer };
  static const M2iOpKernel maxpool = { "MaxPool", "opset1 opset8", dummy_infer };
  static const M2iOpKernel child_foo = { "Foo", "opset1", dummy_infer };
  M2iOpRegistry *r = m2i_op_registry_new (NULL);
  m2i_op_registry_add (r, &foo1);
  m2i_op_registry_add (r, &foo5);
  m2i_op_registry_add (r, &any);
  m2i_op_registry_add (r, &maxpool);
  g_assert_true (m2i_op_registry_lookup (r, "Foo", "opset1") == &foo1);
  g_assert_true (m2i_op_registry_lookup (r, "Foo", "opset4") == &foo1);
  g_assert_true (m2i_op_registry_lookup (r, "Foo", "opset5") == &foo5);
  g_assert_true (m2i_op_registry_lookup (r, "Foo", "opset13") == &foo5);
  g_assert_null (m2i_op_registry_lookup (r, "Foo", "custom"));
  g_assert_true (m2i_op_registry_lookup (r, "Bar", "whatever") == &any);
  /* MaxPool-8 came in opset8 and MaxPool-14 in opset14 */
  g_assert_true (m2i_op_registry_lookup (r, "MaxPool", "opset7") == &maxpool);
  g_assert_true (m2i_op_registry_lookup (r, "MaxPool", "opset11") == &maxpool);
  gchar buf[16];
  g_assert_cmpstr (ir_opset_resolve ("MaxPool", "opset11", buf), ==, "opset8");
  g_assert_cmpstr (ir_opset_resolve ("MaxPool", "opset7", buf), ==, "opset1");
  g_assert_cmpstr (ir_opset_resolve ("Interpolate", "opset10", buf), ==, "opset4");
  g_assert_cmpstr (ir_opset_resolve ("SoftMax", "opset8", buf), ==, "opset8");
  g_assert_null (m2i_op_registry_lookup (r, "MaxPool", "opset14"));
  g_autofree gchar *list = m2i_op_registry_list_opsets (r, "Foo");
  g_assert_cmpstr (list, ==, "opset1 opset5");
  g_assert_null (m2i_op_registry_list_opsets (r, "Nope"));
  /* a child registry overrides and falls back */
  M2iOpRegistry *child = m2i_op_registry_new (r);
  m2i_op_registry_add (child, &child_foo);
  g_assert_true (m2i_op_registry_lookup (child, "Foo", "opset3") == &child_foo);
  g_assert_true (m2i_op_registry_lookup (child, "Foo", "opset6") == &foo5);
  g_assert_true (m2i_op_registry_lookup (child, "Bar", "x") == &any);
  m2i_op_registry_free (child);
  m2i_op_registry_free (r);
  /* the default registry has the structural ops */
  g_assert_nonnull (m2i_op_registry_lookup (m2i_op_registry_get_default (), "Gather", "opset8"));
  g_assert_nonnull (m2i_op_registry_lookup (m2i_op_registry_get_default (), "ShapeOf", "opset3"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ir/graph/fold-shape-chain", test_fold_shape_chain);
  g_test_add_func ("/ir/graph/memory-reuse", test_memory_reuse);
  g_test_add_func ("/ir/graph/prune", test_prune);
  g_test_add_func ("/ir/graph/in-place", test_in_place);
  g_test_add_func ("/ir/graph/unread-output", test_unread_output);
  g_test_add_func ("/ir/graph/concat-in-place", test_concat_in_place);
  g_test_add_func ("/ir/graph/many-ports", test_many_ports);
  g_test_add_func ("/ir/graph/const-views", test_const_views);
  g_test_add_func ("/ir/graph/fuse-bias-relu", test_fuse_bias_relu);
  g_test_add_func ("/ir/graph/fuse-add-relu", test_fuse_add_relu);
  g_test_add_func ("/ir/graph/fuse-channel-affine", test_fuse_channel_affine);
  g_test_add_func ("/ir/graph/f16-io", test_f16_io);
  g_test_add_func ("/ir/graph/threads", test_threads);
  g_test_add_func ("/ir/graph/opset-resolution", test_opset_resolution);
  return g_test_run ();
}
