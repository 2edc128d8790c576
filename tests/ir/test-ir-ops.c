/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The runtime with the kernels of issue 15. Constant folding: a layer whose
 * inputs are all constant runs its kernel's execute() once at compile
 * time, so these subgraphs cost nothing per inference — float
 * activations, reductions and data movement, integer shape arithmetic
 * (YOLOv8's split lengths: ShapeOf → Gather → Divide / Mod → Greater →
 * Convert → Add → Concat), Range, Select; values against hand
 * computations. Fusion: Convolution → Add (bias) → Swish runs as one layer,
 * bit-identical to the three. The real models of ../shared that need these
 * kernels (skipped when it is absent) against ONNX Runtime's reference
 * outputs: yolov5n (Swish, VariadicSplit, Power, Slice-8), yolov8n-int8
 * (also Mod, Greater, MaxPool-14), human-pose-estimation-0001 (Elu). */
#include "ir-test-util.h"
#include <base/m2i-error.h>

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

static const void *
folded (M2iIrCompiledModel *cm, gint layer)
{
  const M2iTensor *v = m2i_ir_compiled_model_get_value (cm, layer, 0);
  g_assert_nonnull (v);
  g_assert_nonnull (v->data);               /* computed when compiling */
  return v->data;
}

/* The chunk(2) split lengths of YOLOv8's head, from the input's shape:
 * dim = shape[1]; first = dim / 2 + (dim % 2 > 0); lengths [first, -1],
 * here feeding a Slice's stop instead of a VariadicSplit. */
static void
test_yolo_shape_arithmetic (void)
{
  TestIr *b = test_ir_new (11);
  M2iShape xs = TEST_SHAPE (1, 65, 2, 2), one = TEST_SHAPE (1), four = TEST_SHAPE (4),
      two = TEST_SHAPE (2), out = TEST_SHAPE (1, 33, 2, 2), scalar = { 0 };
  gint x = test_ir_parameter (b, "x", M2I_ET_F32, &xs);
  gint shape = test_ir_op (b, "ShapeOf", "opset3", "output_type=\"i32\"", 1, &x, M2I_ET_I32, &four);
  gint32 idx = 1, zero = 0, div2 = 2, minus = -1;
  gint gin[3] = { shape, test_ir_const (b, M2I_ET_I32, &one, &idx),
    test_ir_const (b, M2I_ET_I32, &scalar, &zero) };
  gint dim = test_ir_op (b, "Gather", "opset8", "batch_dims=\"0\"", 3, gin, M2I_ET_I32, &one);
  gint c2 = test_ir_const (b, M2I_ET_I32, &scalar, &div2);
  gint din[2] = { dim, c2 };
  gint half = test_ir_op (b, "Divide", "opset1", "m_pythondiv=\"true\"", 2, din, M2I_ET_I32, &one);
  gint mod = test_ir_op (b, "Mod", "opset1", NULL, 2, din, M2I_ET_I32, &one);
  gint gtin[2] = { mod, test_ir_const (b, M2I_ET_I32, &one, &zero) };
  gint odd = test_ir_op (b, "Greater", "opset1", NULL, 2, gtin, M2I_ET_BOOLEAN, &one);
  gint odd_i = test_ir_op (b, "Convert", "opset1", "destination_type=\"i32\"", 1, &odd,
      M2I_ET_I32, &one);
  gint ain[2] = { half, odd_i };
  gint first = test_ir_op (b, "Add", "opset1", NULL, 2, ain, M2I_ET_I32, &one);
  gint cin[2] = { first, test_ir_const (b, M2I_ET_I32, &one, &minus) };
  gint lengths = test_ir_op (b, "Concat", "opset1", "axis=\"0\"", 2, cin, M2I_ET_I32, &two);
  /* x[:, 0:first] by Slice-8 with the first length as stop */
  gint64 start = 0, step = 1, axis = 1;
  gint sin[5] = { x, test_ir_const (b, M2I_ET_I64, &one, &start), first,
    test_ir_const (b, M2I_ET_I64, &one, &step), test_ir_const (b, M2I_ET_I64, &one, &axis) };
  gint slice = test_ir_op (b, "Slice", "opset8", NULL, 5, sin, M2I_ET_F32, &out);
  test_ir_result (b, slice);

  M2iIrModel *m;
  M2iIrCompiledModel *cm = compile (b, &m);
  g_assert_cmpint (m2i_ir_compiled_model_get_n_runtime_nodes (cm), ==, 1);   /* the Slice */
  g_assert_cmpint (*(const gint32 *) folded (cm, mod), ==, 1);
  g_assert_cmpint (*(const guint8 *) folded (cm, odd), ==, 1);
  g_assert_cmpint (*(const gint32 *) folded (cm, first), ==, 33);
  const gint32 *len = folded (cm, lengths);
  g_assert_cmpint (len[0], ==, 33);
  g_assert_cmpint (len[1], ==, -1);

  GError *error = NULL;
  M2iIrInferRequest *req = m2i_ir_infer_request_new (cm, &error);
  float *in = m2i_ir_infer_request_get_input (req, 0)->data;
  for (gint i = 0; i < 65 * 4; i++)
    in[i] = i;
  g_assert_true (m2i_ir_infer_request_infer (req, &error));
  const M2iTensor *o = m2i_ir_infer_request_get_output (req, 0);
  g_assert_true (m2i_shape_equal (&o->shape, &out));
  for (gint i = 0; i < 33 * 4; i++)
    g_assert_cmpfloat (((float *) o->data)[i], ==, i);
  m2i_ir_infer_request_free (req);
  m2i_ir_compiled_model_unref (cm);
  m2i_ir_model_unref (m);
  test_ir_free (b);
}

/* f32 constants through Swish, Maximum, ReduceSum, Tile, Pad, Greater and
 * Select, then added to the input: only the Add runs. */
static void
test_float_chain (void)
{
  TestIr *b = test_ir_new (11);
  M2iShape s23 = TEST_SHAPE (2, 3), s2 = TEST_SHAPE (2), s4 = TEST_SHAPE (4), s5 = TEST_SHAPE (5),
      s1 = TEST_SHAPE (1), scalar = { 0 };
  gint x = test_ir_parameter (b, "x", M2I_ET_F32, &s5);
  const float c[6] = { -2, -1, 0, 1, 2, 3 }, floor_v = -0.25f, half = 0.5f, other = -1;
  gint cst = test_ir_const (b, M2I_ET_F32, &s23, c);
  gint sw = test_ir_op (b, "Swish", "opset4", NULL, 1, &cst, M2I_ET_F32, &s23);
  gint mxin[2] = { sw, test_ir_const (b, M2I_ET_F32, &scalar, &floor_v) };
  gint mx = test_ir_op (b, "Maximum", "opset1", NULL, 2, mxin, M2I_ET_F32, &s23);
  gint64 ax = 1, reps = 2, pb = 1, pe = 0;
  gint rin[2] = { mx, test_ir_const (b, M2I_ET_I64, &s1, &ax) };
  gint sum = test_ir_op (b, "ReduceSum", "opset1", "keep_dims=\"false\"", 2, rin, M2I_ET_F32, &s2);
  gint tin[2] = { sum, test_ir_const (b, M2I_ET_I64, &s1, &reps) };
  gint tile = test_ir_op (b, "Tile", "opset1", NULL, 2, tin, M2I_ET_F32, &s4);
  gint pin[4] = { tile, test_ir_const (b, M2I_ET_I64, &s1, &pb),
    test_ir_const (b, M2I_ET_I64, &s1, &pe), test_ir_const (b, M2I_ET_F32, &scalar, &half) };
  gint pad = test_ir_op (b, "Pad", "opset12", "pad_mode=\"constant\"", 4, pin, M2I_ET_F32, &s5);
  gint gin[2] = { pad, test_ir_const (b, M2I_ET_F32, &scalar, &half) };
  gint gt = test_ir_op (b, "Greater", "opset1", NULL, 2, gin, M2I_ET_BOOLEAN, &s5);
  gint sel_in[3] = { gt, pad, test_ir_const (b, M2I_ET_F32, &scalar, &other) };
  gint sel = test_ir_op (b, "Select", "opset1", NULL, 3, sel_in, M2I_ET_F32, &s5);
  gint add_in[2] = { x, sel };
  gint add = test_ir_op (b, "Add", "opset1", NULL, 2, add_in, M2I_ET_F32, &s5);
  test_ir_result (b, add);

  M2iIrModel *m;
  M2iIrCompiledModel *cm = compile (b, &m);
  g_assert_cmpint (m2i_ir_compiled_model_get_n_runtime_nodes (cm), ==, 1);
  /* swish: x / (1 + e^-x); max with -0.25; row sums */
  double sums[2] = { 0, 0 };
  for (gint i = 0; i < 6; i++) {
    double v = c[i] / (1.0 + exp (-c[i]));
    sums[i / 3] += MAX (v, -0.25);
  }
  const float *p = folded (cm, pad);
  const float want_pad[5] = { 0.5f, (float) sums[0], (float) sums[1], (float) sums[0],
    (float) sums[1] };
  for (gint i = 0; i < 5; i++)
    g_assert_cmpfloat_with_epsilon (p[i], want_pad[i], 1e-6);
  const float *s = folded (cm, sel);
  for (gint i = 0; i < 5; i++)
    g_assert_cmpfloat (s[i], ==, p[i] > 0.5f ? p[i] : -1.0f);
  m2i_ir_compiled_model_unref (cm);
  m2i_ir_model_unref (m);
  test_ir_free (b);
}

/* i64 constants: Range-4 → FloorMod → Negative → Tile → Slice → ReduceMin
 * → Broadcast → Convert, added to the input. */
static void
test_integer_chain (void)
{
  TestIr *b = test_ir_new (11);
  M2iShape scalar = { 0 }, s1 = TEST_SHAPE (1), s2 = TEST_SHAPE (2), s4 = TEST_SHAPE (4),
      s6 = TEST_SHAPE (6), s12 = TEST_SHAPE (12), s22 = TEST_SHAPE (2, 2);
  gint x = test_ir_parameter (b, "x", M2I_ET_F32, &s22);
  gint64 r0 = 0, r6 = 6, r1 = 1, four = 4, reps = 2, st = 1, sp = 12, step = 3, ax0 = 0;
  gint64 target[2] = { 2, 2 };
  gint rin[3] = { test_ir_const (b, M2I_ET_I64, &scalar, &r0),
    test_ir_const (b, M2I_ET_I64, &scalar, &r6), test_ir_const (b, M2I_ET_I64, &scalar, &r1) };
  gint range = test_ir_op (b, "Range", "opset4", "output_type=\"i64\"", 3, rin, M2I_ET_I64, &s6);
  gint min[2] = { range, test_ir_const (b, M2I_ET_I64, &scalar, &four) };
  gint mod = test_ir_op (b, "FloorMod", "opset1", NULL, 2, min, M2I_ET_I64, &s6);
  gint neg = test_ir_op (b, "Negative", "opset1", NULL, 1, &mod, M2I_ET_I64, &s6);
  gint tin[2] = { neg, test_ir_const (b, M2I_ET_I64, &s1, &reps) };
  gint tile = test_ir_op (b, "Tile", "opset1", NULL, 2, tin, M2I_ET_I64, &s12);
  gint sin[4] = { tile, test_ir_const (b, M2I_ET_I64, &s1, &st), test_ir_const (b, M2I_ET_I64, &s1, &sp),
    test_ir_const (b, M2I_ET_I64, &s1, &step) };
  gint slice = test_ir_op (b, "Slice", "opset8", NULL, 4, sin, M2I_ET_I64, &s4);
  gint redin[2] = { slice, test_ir_const (b, M2I_ET_I64, &s1, &ax0) };
  gint rmin = test_ir_op (b, "ReduceMin", "opset1", "keep_dims=\"true\"", 2, redin, M2I_ET_I64, &s1);
  gint bin[2] = { rmin, test_ir_const (b, M2I_ET_I64, &s2, target) };
  gint bc = test_ir_op (b, "Broadcast", "opset3", "mode=\"numpy\"", 2, bin, M2I_ET_I64, &s22);
  gint cv = test_ir_op (b, "Convert", "opset1", "destination_type=\"f32\"", 1, &bc, M2I_ET_F32, &s22);
  gint add_in[2] = { x, cv };
  gint add = test_ir_op (b, "Add", "opset1", NULL, 2, add_in, M2I_ET_F32, &s22);
  test_ir_result (b, add);

  M2iIrModel *m;
  M2iIrCompiledModel *cm = compile (b, &m);
  g_assert_cmpint (m2i_ir_compiled_model_get_n_runtime_nodes (cm), ==, 1);
  /* range 0..5 mod 4 = 0 1 2 3 0 1; negated, tiled twice; [1:12:3] picks
   * elements 1, 4, 7, 10: -1, 0, -1, 0; the minimum -1, broadcast */
  const gint64 want_slice[4] = { -1, 0, -1, 0 }, want_bc[4] = { -1, -1, -1, -1 };
  g_assert_cmpmem (folded (cm, slice), 32, want_slice, 32);
  g_assert_cmpmem (folded (cm, bc), 32, want_bc, 32);

  GError *error = NULL;
  M2iIrInferRequest *req = m2i_ir_infer_request_new (cm, &error);
  float *in = m2i_ir_infer_request_get_input (req, 0)->data;
  for (gint i = 0; i < 4; i++)
    in[i] = 10 * i;
  g_assert_true (m2i_ir_infer_request_infer (req, &error));
  const float *o = m2i_ir_infer_request_get_output (req, 0)->data;
  for (gint i = 0; i < 4; i++)
    g_assert_cmpfloat (o[i], ==, 10 * i - 1);
  m2i_ir_infer_request_free (req);
  m2i_ir_compiled_model_unref (cm);
  m2i_ir_model_unref (m);
  test_ir_free (b);
}

/* A constant subgraph whose kernel fails at compile time (integer Mod by
 * zero) is an error naming the layer, with the file and line. */
static void
test_fold_error (void)
{
  TestIr *b = test_ir_new (11);
  M2iShape s2 = TEST_SHAPE (2);
  const gint32 a[2] = { 5, 6 }, z[2] = { 2, 0 };
  gint in[2] = { test_ir_const (b, M2I_ET_I32, &s2, a), test_ir_const (b, M2I_ET_I32, &s2, z) };
  gint mod = test_ir_op (b, "Mod", "opset1", NULL, 2, in, M2I_ET_I32, &s2);
  test_ir_result (b, mod);
  GError *error = NULL;
  M2iIrModel *m = test_ir_load (b, &error);
  g_assert_no_error (error);
  g_assert_null (m2i_ir_compile (m, NULL, &error));
  g_assert_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "test.xml:"));
  g_assert_nonnull (strstr (error->message, "(Mod, opset1)"));
  g_assert_nonnull (strstr (error->message, "division by zero"));
  g_error_free (error);
  m2i_ir_model_unref (m);
  test_ir_free (b);
}

/* x → Convolution (3×3, 8 → 16 channels) → Add (per-channel bias) →
 * Swish, with beta a constant (fused: one layer) or read from a second
 * Parameter (not fusable: three layers). The outputs are the same bits. */
static M2iIrCompiledModel *
conv_swish_model (gboolean beta_input, M2iIrModel **model, TestIr **builder)
{
  TestIr *b = test_ir_new (11);
  M2iShape xs = TEST_SHAPE (1, 8, 12, 10), ws = TEST_SHAPE (16, 8, 3, 3),
      bs = TEST_SHAPE (1, 16, 1, 1), ys = TEST_SHAPE (1, 16, 12, 10), one = TEST_SHAPE (1);
  static float w[16 * 8 * 9], bias[16];
  for (gint i = 0; i < 16 * 8 * 9; i++)
    w[i] = (float) ((i * 37 % 101) - 50) / 400.0f;
  for (gint i = 0; i < 16; i++)
    bias[i] = (float) (i - 8) / 5.0f;
  const float beta = 0.8f;
  gint x = test_ir_parameter (b, "x", M2I_ET_F32, &xs);
  gint beta_id = beta_input ? test_ir_parameter (b, "beta", M2I_ET_F32, &one)
      : test_ir_const (b, M2I_ET_F32, &one, &beta);
  gint cin[2] = { x, test_ir_const (b, M2I_ET_F32, &ws, w) };
  gint conv = test_ir_op (b, "Convolution", "opset1", "strides=\"1,1\" dilations=\"1,1\" "
      "pads_begin=\"1,1\" pads_end=\"1,1\" auto_pad=\"explicit\"", 2, cin, M2I_ET_F32, &ys);
  gint ain[2] = { conv, test_ir_const (b, M2I_ET_F32, &bs, bias) };
  gint add = test_ir_op (b, "Add", "opset1", NULL, 2, ain, M2I_ET_F32, &ys);
  gint sin[2] = { add, beta_id };
  gint sw = test_ir_op (b, "Swish", "opset4", NULL, 2, sin, M2I_ET_F32, &ys);
  test_ir_result (b, sw);
  *builder = b;
  return compile (b, model);
}

static void
test_fused_swish (void)
{
  M2iIrModel *m[2];
  TestIr *b[2];
  M2iIrCompiledModel *cm[2] = { conv_swish_model (FALSE, &m[0], &b[0]),
    conv_swish_model (TRUE, &m[1], &b[1]) };
  g_assert_cmpint (m2i_ir_compiled_model_get_n_runtime_nodes (cm[0]), ==, 1);
  g_assert_cmpint (m2i_ir_compiled_model_get_n_runtime_nodes (cm[1]), ==, 2); /* conv+bias, Swish */
  const float *out[2];
  M2iIrInferRequest *req[2];
  for (gint k = 0; k < 2; k++) {
    GError *error = NULL;
    req[k] = m2i_ir_infer_request_new (cm[k], &error);
    float *in = m2i_ir_infer_request_get_input (req[k], 0)->data;
    for (gint i = 0; i < 8 * 12 * 10; i++)
      in[i] = (float) ((i * 53 % 97) - 48) / 12.0f;
    if (k == 1)
      *(float *) m2i_ir_infer_request_get_input (req[k], 1)->data = 0.8f;
    g_assert_true (m2i_ir_infer_request_infer (req[k], &error));
    out[k] = m2i_ir_infer_request_get_output (req[k], 0)->data;
  }
  g_assert_cmpmem (out[0], 16 * 12 * 10 * 4, out[1], 16 * 12 * 10 * 4);
  for (gint k = 0; k < 2; k++) {
    m2i_ir_infer_request_free (req[k]);
    m2i_ir_compiled_model_unref (cm[k]);
    m2i_ir_model_unref (m[k]);
    test_ir_free (b[k]);
  }
}

/* ---- the real models ------------------------------------------------------- */

static gboolean
have_shared (const char *relative)
{
  g_autofree gchar *path = test_shared_path (relative);
  if (path && g_file_test (path, G_FILE_TEST_EXISTS))
    return TRUE;
  g_test_skip ("../shared/models/external is not here");
  return FALSE;
}

/* Runs ../shared/@model on the raw f32 tensor reference/@input; sets
 * out[k] to a copy of output k (f32, n[k] values, g_free) for k < @n_out,
 * and returns the number of layers run. */
static gint
run_shared (const char *model, const char *input, gint n_out, float **out, gint64 *n)
{
  g_autofree gchar *xml = test_shared_path (model);
  g_autofree gchar *in_rel = g_strdup_printf ("reference/%s", input);
  g_autofree gchar *in_path = test_shared_path (in_rel);
  GError *error = NULL;
  M2iIrModel *m = m2i_ir_model_load (xml, NULL, &error);
  g_assert_no_error (error);
  M2iIrCompiledModel *cm = m2i_ir_compile (m, NULL, &error);
  g_assert_no_error (error);
  gint layers = m2i_ir_compiled_model_get_n_runtime_nodes (cm);
  M2iIrInferRequest *req = m2i_ir_infer_request_new (cm, &error);
  g_assert_no_error (error);
  gchar *data;
  gsize len;
  g_assert_true (g_file_get_contents (in_path, &data, &len, &error));
  /* f32 data, whatever the input's type (an f16 input converts it) */
  M2iTensor t = { M2I_ET_F32, m2i_ir_infer_request_get_input (req, 0)->shape, data };
  g_assert_cmpuint (len, ==, m2i_tensor_nbytes (&t));
  g_assert_true (m2i_ir_infer_request_set_input (req, 0, &t, &error));
  g_free (data);
  g_assert_true (m2i_ir_infer_request_infer (req, &error));
  for (gint k = 0; k < n_out; k++) {
    const M2iTensor *o = m2i_ir_infer_request_get_output (req, k);
    n[k] = m2i_shape_numel (&o->shape);
    out[k] = g_memdup2 (o->data, n[k] * 4);
  }
  m2i_ir_infer_request_free (req);
  m2i_ir_compiled_model_unref (cm);
  m2i_ir_model_unref (m);
  return layers;
}

static float *
reference (const char *name, gint64 n)
{
  g_autofree gchar *rel = g_strdup_printf ("reference/%s", name);
  g_autofree gchar *path = test_shared_path (rel);
  gchar *data;
  gsize len;
  GError *error = NULL;
  g_assert_true (g_file_get_contents (path, &data, &len, &error));
  g_assert_cmpuint (len, ==, n * 4);
  return (float *) data;
}

static double
max_abs_diff (const float *a, const float *b, gint64 n)
{
  double m = 0;
  for (gint64 i = 0; i < n; i++)
    m = MAX (m, fabs ((double) a[i] - b[i]));
  return m;
}

/* yolov5n (FP16 weights, f32 compute): every output within 5e-3 of ONNX
 * Runtime's (measured: 9e-4; box coordinates are in pixels, up to 416),
 * its 57 Swish layers fused into their convolutions. */
static void
test_yolov5n (void)
{
  if (!have_shared ("yolov5n/yolov5n.xml"))
    return;
  gint64 n;
  float *out;
  gint layers = run_shared ("yolov5n/yolov5n.xml", "yolov5n.chelsea.input.f32", 1, &out, &n);
  g_assert_cmpint (n, ==, 10647 * 85);
  float *want = reference ("yolov5n.chelsea.output.f32", n);
  double d = max_abs_diff (out, want, n);
  g_test_message ("yolov5n: %d layers run, max |diff| %.3g", layers, d);
  g_assert_cmpfloat (d, <, 5e-3);
  g_assert_cmpint (layers, <, 176 - 57 + 1);          /* the Swish layers are gone */
  g_free (out);
  g_free (want);
}

/* yolov8n-int8: the best detection (the reference's one person) within
 * 0.02 in score and 2 px in box. FakeQuantize makes raw outputs step where
 * the arithmetic differs by a rounding (our own AVX-512 and plain-C paths
 * differ the same way), so the raw tensors are not compared. */
static void
test_yolov8n_int8 (void)
{
  if (!have_shared ("yolov8n-int8/yolov8n.xml"))
    return;
  gint64 n;
  float *out;
  run_shared ("yolov8n-int8/yolov8n.xml", "yolov8n-int8.astronaut.input.f32", 1, &out, &n);
  g_assert_cmpint (n, ==, 84 * 8400);
  gint best = 0, cls = 0;
  float score = -1;
  for (gint a = 0; a < 8400; a++)
    for (gint c = 0; c < 80; c++)
      if (out[(4 + c) * 8400 + a] > score) {
        score = out[(4 + c) * 8400 + a];
        best = a;
        cls = c;
      }
  float cx = out[best], cy = out[8400 + best], w = out[2 * 8400 + best], h = out[3 * 8400 + best];
  const float box[4] = { cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2 };
  const float want[4] = { 7.91f, 16.40f, 455.46f, 640.05f };       /* detections.txt */
  g_test_message ("yolov8n-int8: class %d score %.4f box %.2f %.2f %.2f %.2f", cls, score,
      box[0], box[1], box[2], box[3]);
  g_assert_cmpint (cls, ==, 0);
  g_assert_cmpfloat (fabsf (score - 0.6999f), <, 0.02f);
  for (gint k = 0; k < 4; k++)
    g_assert_cmpfloat (fabsf (box[k] - want[k]), <, 2.0f);
  g_free (out);
}

/* human-pose-estimation-0001 (FP16-INT8, Elu): the part affinity fields
 * within 0.1 of the reference (its sensitivity to 1e-4 input noise: 0.053;
 * measured 0.034), and the heatmaps' peaks at the reference's cells. */
static void
test_human_pose (void)
{
  if (!have_shared ("human-pose-estimation-0001/human-pose-estimation-0001.xml"))
    return;
  static const char *const model = "human-pose-estimation-0001/human-pose-estimation-0001.xml";
  gint64 n[2];
  float *out[2];
  run_shared (model, "human-pose-estimation-0001.astronaut.input.f32", 2, out, n);
  float *paf = out[0], *heat = out[1];
  gint64 n0 = n[0], n1 = n[1];
  float *want0 = reference ("human-pose-estimation-0001.astronaut.output.0.f32", n0);
  float *want1 = reference ("human-pose-estimation-0001.astronaut.output.1.f32", n1);
  double d0 = max_abs_diff (paf, want0, n0), d1 = max_abs_diff (heat, want1, n1);
  g_test_message ("human-pose-estimation-0001: max |diff| %.3g (PAFs), %.3g (heatmaps)", d0, d1);
  g_assert_cmpfloat (d0, <, 0.1);
  g_assert_cmpfloat (d1, <, 0.1);
  gint64 plane = 32 * 57;
  for (gint k = 0; k < 18; k++) {
    gint64 got = 0, ref = 0;
    for (gint64 i = 1; i < plane; i++) {
      if (heat[k * plane + i] > heat[k * plane + got])
        got = i;
      if (want1[k * plane + i] > want1[k * plane + ref])
        ref = i;
    }
    /* a peak may move to a neighbouring cell only where two are close */
    if (got != ref)
      g_assert_cmpfloat (fabsf (want1[k * plane + got] - want1[k * plane + ref]), <, 0.05f);
  }
  g_free (paf);
  g_free (heat);
  g_free (want0);
  g_free (want1);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ir/ops/fold/yolo-shape-arithmetic", test_yolo_shape_arithmetic);
  g_test_add_func ("/ir/ops/fold/float-chain", test_float_chain);
  g_test_add_func ("/ir/ops/fold/integer-chain", test_integer_chain);
  g_test_add_func ("/ir/ops/fold/error", test_fold_error);
  g_test_add_func ("/ir/ops/fused-swish", test_fused_swish);
  g_test_add_func ("/ir/ops/external/yolov5n", test_yolov5n);
  g_test_add_func ("/ir/ops/external/yolov8n-int8", test_yolov8n_int8);
  g_test_add_func ("/ir/ops/external/human-pose-estimation-0001", test_human_pose);
  return g_test_run ();
}
