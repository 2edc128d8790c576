/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Split execution of the four models against independent references:
 *
 * - Fashion-MNIST (models/fashion-mnist): the network on the compute engine
 *   (fp16), SoftMax on the CPU; the 64 reference images against torch's
 *   probabilities (tests/data/fashion-mnist): same class on all 64, within
 *   2e-3 (fp16 storage of every activation and weight; measured 8.8e-4);
 * - the PrePostProcessor model (models/fashion-mnist-ppp): the head lowered
 *   to one M2I op list, the network on the engine, SoftMax on the CPU;
 *   the six frames of tests/data/ppp against the numpy executor's head
 *   output (within 0.02: fp16 storage, the norm's fp16 coefficients 72.9375
 *   and 90.0 for 72.93 and 90.015, and the M2I csc rounding half up where
 *   OpenVINO's float32 reference may fall either side of an exact tie — one
 *   level, 1/90 after the norm, on rare pixels; measured 8e-3) and its
 *   probabilities (same class, within 1e-3; measured 1.7e-4); the head's API: running from a frame image (any
 *   stride) and from an image the caller fills equals running from the
 *   inputs;
 * - squeezenet1.1 and person-detection-retail-0013 from $M2I_SHARED_MODELS
 *   (skipped when absent): ONNX Runtime's reference probabilities (same
 *   top-5, within 2e-3; measured 3.9e-4) and, on a photo, the same detections as the model
 *   unsplit on the CPU (confidence within 0.02, boxes IoU >= 0.95).
 *
 * Every plan is also written as a folder, loaded back and run: the outputs
 * equal those of the plan in memory bit for bit. Forced affinities (options
 * and the layers' rt_info) are respected and the result stays correct. */
#include "split-test-util.h"
#include <base/m2i-error.h>
#include <m2i/m2i-device.h>

#include <math.h>

static M2iIrModel *
load_model (const char *path)
{
  GError *error = NULL;
  M2iIrModel *m = m2i_ir_model_load (path, NULL, &error);
  g_assert_no_error (error);
  return m;
}

static M2iIrModel *
project_model (const char *relative)
{
  g_autofree gchar *path = test_models_path (relative);
  return load_model (path);
}

static M2iSplitPlan *
split (M2iIrModel *m, const char *devices, GHashTable *affinity)
{
  M2iSplitOptions opts;
  m2i_split_options_init (&opts);
  opts.devices = devices;
  opts.affinity = affinity;
  return split_logged (m, &opts);
}

static M2iSplitRunner *
runner (M2iSplitPlan *plan)
{
  GError *error = NULL;
  M2iSplitRunOptions ro = { 0 };
  M2iSplitRunner *r = m2i_split_runner_new (plan, &ro, &error);
  g_assert_no_error (error);
  return r;
}

static void
run (M2iSplitRunner *r)
{
  GError *error = NULL;
  g_assert_true (m2i_split_runner_run (r, &error));
  g_assert_no_error (error);
}

/* The plan written into a temporary folder, read back, and a runner of
 * what was read (reloaded_free removes all three). */
typedef struct {
  gchar *dir;
  M2iSplitPlan *plan;
  M2iSplitRunner *runner;
} Reloaded;

static void
reload (const M2iSplitPlan *plan, Reloaded *rl)
{
  rl->dir = g_dir_make_tmp ("m2i-split-XXXXXX", NULL);
  GError *error = NULL;
  g_assert_true (m2i_split_plan_save (plan, rl->dir, &error));
  g_assert_no_error (error);
  rl->plan = m2i_split_plan_load (rl->dir, &error);
  g_assert_no_error (error);
  rl->runner = runner (rl->plan);
}

static void
reloaded_free (Reloaded *rl)
{
  m2i_split_runner_free (rl->runner);
  m2i_split_plan_unref (rl->plan);
  test_remove_dir (rl->dir);
  g_free (rl->dir);
}

/* ---- Fashion-MNIST --------------------------------------------------------------- */

/* Runs the 64 reference images; returns the largest difference from torch
 * and checks the class of each. @out (64 × 10) receives the outputs. */
static double
fashion_first64 (M2iSplitRunner *r, float *out)
{
  g_autoptr (GBytes) in = test_read_data ("fashion-mnist/first64.input.f32");
  g_autoptr (GBytes) want = test_read_data ("fashion-mnist/first64.prob.f32");
  const float *x = g_bytes_get_data (in, NULL), *p = g_bytes_get_data (want, NULL);
  double worst = 0;
  for (gint k = 0; k < 64; k++) {
    M2iTensor *t = m2i_split_runner_get_input (r, 0);
    memcpy (t->data, x + k * 3 * 28 * 28, m2i_tensor_nbytes (t));
    run (r);
    const float *y = m2i_split_runner_get_output (r, 0)->data;
    g_assert_cmpint (test_argmax (y, 10), ==, test_argmax (p + k * 10, 10));
    for (gint c = 0; c < 10; c++)
      worst = MAX (worst, fabs (y[c] - p[k * 10 + c]));
    if (out)
      memcpy (out + k * 10, y, 10 * sizeof (float));
  }
  return worst;
}

static void
test_fashion (void)
{
  M2iIrModel *m = project_model ("fashion-mnist/fashion-mnist.xml");
  M2iSplitPlan *plan = split (m, NULL, NULL);
  /* the network on the engine, SoftMax (no device kernel) on the CPU */
  g_assert_cmpint (m2i_split_plan_get_n_pieces (plan), ==, 2);
  g_assert_cmpint (engine_of_layer (plan, "conv1/Convolution"), ==, M2I_SPLIT_ENGINE_NPU_FP16);
  g_assert_cmpint (engine_of_layer (plan, "fc2"), ==, M2I_SPLIT_ENGINE_NPU_FP16);
  g_assert_cmpint (engine_of_layer (plan, "prob"), ==, M2I_SPLIT_ENGINE_CPU);
  M2iDevice *dev = m2i_device_get_default ();
  m2i_device_reset_counters (dev);
  M2iSplitRunner *r = runner (plan);
  float got[640], again[640];
  double worst = fashion_first64 (r, got);
  g_test_message ("Fashion-MNIST split vs torch: largest difference %.2e", worst);
  g_assert_cmpfloat (worst, <=, 2e-3);
  /* the device counted the work: six engine layers per inference */
  M2iDeviceCounters c;
  m2i_device_get_counters (dev, &c);
  g_assert_cmpuint (c.tasks_device, >=, 64 * 6);
  g_assert_cmpuint (c.cycles, >, 64 * 50000);
  M2iSplitPieceStats st;
  g_assert_true (m2i_split_runner_get_piece_stats (r, 0, &st));
  g_assert_cmpuint (st.runs, ==, 64);
  g_assert_cmpuint (st.device_layers, ==, 64 * 6);
  /* exactly the engine piece's work, one device run per inference
   * (m2i_device_account_work) */
  g_assert_cmpuint (c.runs, ==, 64);
  g_assert_cmpuint (c.tasks_device, ==, st.device_layers);
  g_assert_cmpuint (c.tasks_cpu, ==, 0);
  g_assert_cmpuint (c.cycles, ==, st.device_cycles);
  g_assert_cmpuint (c.bytes_read % 64, ==, 0);
  g_assert_cmpuint (c.bytes_read, >, 64 * 28 * 28 * 8 * 2);   /* at least the input, blocked fp16 */
  /* written, read back, run: the same outputs */
  Reloaded rl;
  reload (plan, &rl);
  M2iSplitRunner *rb = rl.runner;
  fashion_first64 (rb, again);
  g_assert_cmpmem (got, sizeof got, again, sizeof again);
  reloaded_free (&rl);
  m2i_split_runner_free (r);
  m2i_split_plan_unref (plan);
  m2i_ir_model_unref (m);
}

/* The public accounting call split's runner uses, against its contract. */
static void
test_device_accounting (void)
{
  M2iDevice *dev = m2i_device_get_default ();
  m2i_device_reset_counters (dev);
  m2i_device_account_work (NULL, M2I_DEVICE_TARGET_DEVICE, 3, 100, 50, 1000);
  m2i_device_account_work (dev, M2I_DEVICE_TARGET_CPU, 2, 10, 5, 999);
  m2i_device_account_work (dev, (M2iDeviceTarget) 7, 9, 9, 9, 9);      /* ignored */
  M2iDeviceCounters c;
  m2i_device_get_counters (dev, &c);
  g_assert_cmpuint (c.runs, ==, 2);
  g_assert_cmpuint (c.tasks_total, ==, 5);
  g_assert_cmpuint (c.tasks_device, ==, 3);
  g_assert_cmpuint (c.tasks_cpu, ==, 2);
  g_assert_cmpuint (c.bytes_read, ==, 110);
  g_assert_cmpuint (c.bytes_written, ==, 55);
  g_assert_cmpuint (c.cycles, ==, 1000);             /* CPU work takes no device cycles */
  g_assert_cmpuint (c.failed, ==, 0);
  m2i_device_reset_counters (dev);
}

/* Affinities: from the options (conv2 onto the CPU) and from the layers'
 * rt_info (fc1 onto the CPU, written into the XML). */
static void
test_fashion_affinity (void)
{
  M2iIrModel *m = project_model ("fashion-mnist/fashion-mnist.xml");
  GHashTable *aff = g_hash_table_new (g_str_hash, g_str_equal);
  g_hash_table_insert (aff, "conv2/Convolution", "CPU");
  M2iSplitPlan *plan = split (m, "HETERO:M2I,CPU", aff);
  g_assert_cmpint (engine_of_layer (plan, "conv2/Convolution"), ==, M2I_SPLIT_ENGINE_CPU);
  /* the fused bias and ReLU follow their convolution */
  g_assert_cmpint (engine_of_layer (plan, "conv1/Convolution"), ==, M2I_SPLIT_ENGINE_NPU_FP16);
  M2iSplitRunner *r = runner (plan);
  g_assert_cmpfloat (fashion_first64 (r, NULL), <=, 2e-3);
  m2i_split_runner_free (r);
  m2i_split_plan_unref (plan);
  /* everything on the CPU by list: one piece, the unsplit runtime's result */
  plan = split (m, "CPU", NULL);
  g_assert_cmpint (m2i_split_plan_get_n_pieces (plan), ==, 1);
  r = runner (plan);
  g_assert_cmpfloat (fashion_first64 (r, NULL), <=, 1e-4);
  m2i_split_runner_free (r);
  m2i_split_plan_unref (plan);
  g_hash_table_unref (aff);
  m2i_ir_model_unref (m);

  /* rt_info affinity in the file */
  g_autofree gchar *path = test_models_path ("fashion-mnist/fashion-mnist.xml");
  gchar *xml;
  g_assert_true (g_file_get_contents (path, &xml, NULL, NULL));
  const char *layer = "name=\"fc1/MatMul\" type=\"MatMul\" version=\"opset1\">";
  gchar *at = strstr (xml, layer);
  g_assert_nonnull (at);
  GString *s = g_string_new_len (xml, at - xml + strlen (layer));
  g_string_append (s, "\n\t\t\t<rt_info><attribute name=\"affinity\" version=\"0\" value=\"CPU\"/></rt_info>");
  g_string_append (s, at + strlen (layer));
  g_autofree gchar *bin_path = test_models_path ("fashion-mnist/fashion-mnist.bin");
  GMappedFile *mf = g_mapped_file_new (bin_path, FALSE, NULL);
  GBytes *bin = g_mapped_file_get_bytes (mf);
  GError *error = NULL;
  m = m2i_ir_model_load_from_memory (s->str, s->len, bin, "fashion-mnist+affinity.xml", &error);
  g_assert_no_error (error);
  plan = split (m, NULL, NULL);
  g_assert_cmpint (engine_of_layer (plan, "fc1/MatMul"), ==, M2I_SPLIT_ENGINE_CPU);
  g_assert_cmpint (engine_of_layer (plan, "conv2/Convolution"), ==, M2I_SPLIT_ENGINE_NPU_FP16);
  r = runner (plan);
  g_assert_cmpfloat (fashion_first64 (r, NULL), <=, 2e-3);
  m2i_split_runner_free (r);
  m2i_split_plan_unref (plan);
  m2i_ir_model_unref (m);
  g_bytes_unref (bin);
  g_mapped_file_unref (mf);
  g_string_free (s, TRUE);
  g_free (xml);
}

/* ---- the PrePostProcessor model ------------------------------------------------- */

static const char *ppp_cases[] = { "t10k-0", "t10k-1", "t10k-2", "t10k-4", "gradient", "noise" };

static GBytes *
ppp_file (const char *name, const char *ext)
{
  g_autofree gchar *rel = g_strdup_printf ("ppp/%s.%s", name, ext);
  return test_read_data (rel);
}

/* The head's output (fp16 NCHW) against the executor's. */
static double
head_diff (M2iSplitRunner *r, const float *want)
{
  M2iImage img;
  GError *error = NULL;
  g_assert_true (m2i_split_runner_get_head_image (r, &img, &error));
  g_assert_cmpint (img.format, ==, M2I_FORMAT_PL_FP16_RGB);
  double worst = 0;
  for (gint c = 0; c < 3; c++)
    for (gint y = 0; y < 28; y++)
      for (gint x = 0; x < 28; x++) {
        float v = m2i_f16_to_f32 (((const m2i_f16 *) (img.data[c] + y * img.stride[c]))[x]);
        worst = MAX (worst, fabs (v - want[(c * 28 + y) * 28 + x]));
      }
  return worst;
}

static void
test_ppp (void)
{
  M2iIrModel *m = project_model ("fashion-mnist-ppp/fashion-mnist-ppp.xml");
  M2iSplitPlan *plan = split (m, NULL, NULL);
  g_assert_cmpint (m2i_split_plan_get_n_pieces (plan), ==, 3);
  g_assert_cmpint (engine_of_layer (plan, "input/nv12_to_rgb"), ==, M2I_SPLIT_ENGINE_M2I);
  g_assert_cmpint (engine_of_layer (plan, "input/convert_layout"), ==, M2I_SPLIT_ENGINE_M2I);
  g_assert_cmpint (engine_of_layer (plan, "conv1/Convolution"), ==, M2I_SPLIT_ENGINE_NPU_FP16);
  g_assert_cmpint (engine_of_layer (plan, "prob"), ==, M2I_SPLIT_ENGINE_CPU);
  /* the head: one op list from the NV12 planes to the network's input */
  M2iSplitHead h;
  g_assert_true (m2i_split_plan_get_head (plan, &h));
  g_assert_cmpint (h.piece, ==, 0);
  g_assert_cmpint (h.in_format, ==, M2I_FORMAT_SP_NV12_8);
  g_assert_cmpint (h.in_width, ==, 64);
  g_assert_cmpint (h.in_height, ==, 48);
  g_assert_cmpint (h.out_format, ==, M2I_FORMAT_PL_FP16_RGB);
  g_assert_cmpint (h.out_width, ==, 28);
  g_assert_cmpint (h.out_height, ==, 28);
  g_autofree gchar *ops = m2i_op_list_to_string (&h.ops);
  g_test_message ("head: %s", ops);
  g_assert_cmpint (h.ops.n_ops, ==, 5);
  g_assert_cmpint (h.ops.ops[0].kind, ==, M2I_OP_CSC);
  g_assert_cmpint (h.ops.ops[1].kind, ==, M2I_OP_CONVERT);
  g_assert_cmpint (h.ops.ops[2].kind, ==, M2I_OP_RESIZE);
  g_assert_cmpint (h.ops.ops[2].u.resize.mode, ==, M2I_RESIZE_LINEAR);
  g_assert_cmpint (h.ops.ops[3].kind, ==, M2I_OP_PERMUTE);
  g_assert_cmpint (h.ops.ops[4].kind, ==, M2I_OP_NORM);
  /* Subtract 72.93 then Multiply 1/90.015: A = 1, B = 72.93, C = 90.015, D = 0 (fp16) */
  for (gint c = 0; c < 3; c++) {
    const M2iNormParams *n = &h.ops.ops[4].u.norm;
    g_assert_cmpfloat (m2i_f16_to_f32 (n->a[c]), ==, 1.0f);
    g_assert_cmpfloat (m2i_f16_to_f32 (n->b[c]), ==, 72.9375f);
    g_assert_cmpfloat (m2i_f16_to_f32 (n->c[c]), ==, 90.0f);
    g_assert_cmpfloat (m2i_f16_to_f32 (n->d[c]), ==, 0.0f);
  }
  g_assert_cmpint (h.n_inputs, ==, 2);
  M2iSplitTensorInfo ti;
  m2i_split_plan_get_tensor (plan, h.inputs[0], &ti);
  g_assert_cmpstr (ti.name, ==, "input/y");
  m2i_split_plan_get_tensor (plan, h.output, &ti);
  g_assert_cmpstr (ti.name, ==, "input/convert_layout");

  M2iSplitRunner *r = runner (plan);
  Reloaded rl;
  reload (plan, &rl);
  M2iSplitRunner *rb = rl.runner;
  double worst_head = 0, worst_prob = 0;
  for (guint k = 0; k < G_N_ELEMENTS (ppp_cases); k++) {
    g_autoptr (GBytes) nv12 = ppp_file (ppp_cases[k], "nv12");
    g_autoptr (GBytes) head = ppp_file (ppp_cases[k], "head.f32");
    g_autoptr (GBytes) prob = ppp_file (ppp_cases[k], "prob.f32");
    const guint8 *frame = g_bytes_get_data (nv12, NULL);
    const float *want = g_bytes_get_data (prob, NULL);
    for (int which = 0; which < 2; which++) {
      M2iSplitRunner *rr = which ? rb : r;
      memcpy (m2i_split_runner_get_input (rr, 0)->data, frame, 3072);
      memcpy (m2i_split_runner_get_input (rr, 1)->data, frame + 3072, 1536);
      run (rr);
    }
    const float *y = m2i_split_runner_get_output (r, 0)->data;
    g_assert_cmpmem (y, 40, m2i_split_runner_get_output (rb, 0)->data, 40);
    g_assert_cmpint (test_argmax (y, 10), ==, test_argmax (want, 10));
    for (gint c = 0; c < 10; c++)
      worst_prob = MAX (worst_prob, fabs (y[c] - want[c]));
    worst_head = MAX (worst_head, head_diff (r, g_bytes_get_data (head, NULL)));
    float from_inputs[10];
    memcpy (from_inputs, y, sizeof from_inputs);

    /* the same frame as one NV12 image, tight and with padded rows */
    for (gsize stride = 64; stride <= 80; stride += 16) {
      guint8 *buf = g_malloc0 (stride * 72);
      for (gint row = 0; row < 72; row++)
        memcpy (buf + row * stride, frame + row * 64, 64);
      M2iImage img;
      GError *error = NULL;
      g_assert_true (m2i_image_wrap (&img, M2I_FORMAT_SP_NV12_8, 64, 48, buf, stride * 72, stride,
              &error));
      g_assert_true (m2i_split_runner_run_image (r, &img, &error));
      g_assert_no_error (error);
      g_assert_cmpmem (m2i_split_runner_get_output (r, 0)->data, 40, from_inputs, 40);
      g_free (buf);
    }
    /* the head's output made by the caller: the engine's own fused task */
    M2iImage out;
    GError *error = NULL;
    g_assert_true (m2i_split_runner_get_head_image (r, &out, &error));
    M2iImage in;
    g_assert_true (m2i_image_wrap (&in, M2I_FORMAT_SP_NV12_8, 64, 48, (gpointer) frame, 4608, 0,
            &error));
    M2iPlanOptions po;
    m2i_plan_options_init (&po);
    M2iPlan *mp = m2i_plan_new (&in, &h.ops, &out, &po, &error);
    g_assert_no_error (error);
    memset (out.data[0], 0, 3 * 28 * 28 * 2);
    g_assert_true (m2i_plan_run (mp, &in, &out, &error));
    g_assert_true (m2i_split_runner_run_after_head (r, &error));
    g_assert_no_error (error);
    g_assert_cmpmem (m2i_split_runner_get_output (r, 0)->data, 40, from_inputs, 40);
    m2i_plan_free (mp);
  }
  g_test_message ("PPP split: head within %.2e of the executor, probabilities within %.2e",
      worst_head, worst_prob);
  g_assert_cmpfloat (worst_head, <=, 0.02);
  g_assert_cmpfloat (worst_prob, <=, 1e-3);
  /* a frame of another size is refused */
  M2iImage small;
  guint8 buf[32 * 24 * 3 / 2];
  GError *error = NULL;
  g_assert_true (m2i_image_wrap (&small, M2I_FORMAT_SP_NV12_8, 32, 24, buf, sizeof buf, 0, NULL));
  g_assert_false (m2i_split_runner_run_image (r, &small, &error));
  g_assert_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "64x48"));
  g_clear_error (&error);
  reloaded_free (&rl);
  m2i_split_runner_free (r);
  m2i_split_plan_unref (plan);

  /* the head forced onto the CPU: no head, the network still on the engine */
  GHashTable *aff = g_hash_table_new (g_str_hash, g_str_equal);
  g_hash_table_insert (aff, "input/nv12_to_rgb", "CPU");
  plan = split (m, NULL, aff);
  g_assert_false (m2i_split_plan_get_head (plan, &h));
  g_assert_cmpint (engine_of_layer (plan, "input/nv12_to_rgb"), ==, M2I_SPLIT_ENGINE_CPU);
  g_assert_cmpint (engine_of_layer (plan, "conv2/Convolution"), ==, M2I_SPLIT_ENGINE_NPU_FP16);
  r = runner (plan);
  g_autoptr (GBytes) nv12 = ppp_file ("t10k-0", "nv12");
  g_autoptr (GBytes) prob = ppp_file ("t10k-0", "prob.f32");
  memcpy (m2i_split_runner_get_input (r, 0)->data, g_bytes_get_data (nv12, NULL), 3072);
  memcpy (m2i_split_runner_get_input (r, 1)->data, (const guint8 *) g_bytes_get_data (nv12, NULL) + 3072,
      1536);
  run (r);
  const float *y = m2i_split_runner_get_output (r, 0)->data, *want = g_bytes_get_data (prob, NULL);
  for (gint c = 0; c < 10; c++)
    g_assert_cmpfloat (fabs (y[c] - want[c]), <=, 1e-3);
  g_assert_false (m2i_split_runner_run_after_head (r, &error));
  g_assert_error (error, M2I_ERROR, M2I_ERROR_UNSUPPORTED);
  g_clear_error (&error);
  m2i_split_runner_free (r);
  m2i_split_plan_unref (plan);
  g_hash_table_unref (aff);
  m2i_ir_model_unref (m);
}

/* ---- squeezenet1.1 ---------------------------------------------------------------- */

static void
test_squeezenet (void)
{
  g_autofree gchar *path = test_shared_model ("squeezenet1.1/squeezenet1.1.xml");
  if (!path)
    return;
  M2iIrModel *m = load_model (path);
  M2iSplitPlan *plan = split (m, NULL, NULL);
  /* the 26 convolutions, pools and concats on the engine, SoftMax on the CPU */
  g_assert_cmpint (engine_of_layer (plan, "conv1/WithoutBiases"), ==, M2I_SPLIT_ENGINE_NPU_FP16);
  g_assert_cmpint (engine_of_layer (plan, "fire9/concat"), ==, M2I_SPLIT_ENGINE_NPU_FP16);
  g_assert_cmpint (engine_of_layer (plan, "prob"), ==, M2I_SPLIT_ENGINE_CPU);
  M2iSplitRunner *r = runner (plan);
  Reloaded rl;
  reload (plan, &rl);
  M2iSplitRunner *rb = rl.runner;
  const char *images[] = { "chelsea", "coffee" };
  for (guint k = 0; k < G_N_ELEMENTS (images); k++) {
    g_autofree gchar *in_rel = g_strdup_printf ("reference/squeezenet1.1.%s.input.f32", images[k]);
    g_autofree gchar *out_rel = g_strdup_printf ("reference/squeezenet1.1.%s.output.f32", images[k]);
    g_autofree gchar *in_path = test_shared_path (in_rel), *out_path = test_shared_path (out_rel);
    gchar *x, *want;
    gsize n;
    g_assert_true (g_file_get_contents (in_path, &x, &n, NULL));
    g_assert_cmpuint (n, ==, 3 * 227 * 227 * 4);
    g_assert_true (g_file_get_contents (out_path, &want, &n, NULL));
    M2iTensor t = { M2I_ET_F32, { 4, { 1, 3, 227, 227 } }, x };
    GError *error = NULL;
    for (int which = 0; which < 2; which++) {
      g_assert_true (m2i_split_runner_set_input (which ? rb : r, 0, &t, &error));
      g_assert_no_error (error);
      run (which ? rb : r);
    }
    const float *p = m2i_split_runner_get_output (r, 0)->data, *q = (const float *) want;
    g_assert_cmpmem (p, 4000, m2i_split_runner_get_output (rb, 0)->data, 4000);
    gint a[5], b[5];
    test_top_k (p, 1000, 5, a);
    test_top_k (q, 1000, 5, b);
    double worst = 0;
    for (gint i = 0; i < 1000; i++)
      worst = MAX (worst, fabs (p[i] - q[i]));
    g_test_message ("squeezenet %s: top-5 %d %d %d %d %d, largest difference %.2e", images[k],
        a[0], a[1], a[2], a[3], a[4], worst);
    g_assert_cmpmem (a, sizeof a, b, sizeof b);
    g_assert_cmpfloat (worst, <=, 2e-3);
    g_free (x);
    g_free (want);
  }
  reloaded_free (&rl);
  m2i_split_runner_free (r);
  m2i_split_plan_unref (plan);
  m2i_ir_model_unref (m);
}

/* ---- person-detection-retail-0013 ----------------------------------------------- */

static double
iou (const float *a, const float *b)
{
  double w = MIN (a[2], b[2]) - MAX (a[0], b[0]), h = MIN (a[3], b[3]) - MAX (a[1], b[1]);
  if (w <= 0 || h <= 0)
    return 0;
  double inter = w * h;
  return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter);
}

/* Detections with confidence >= 0.3 in @a each match one in @b (same
 * class, confidence within 0.02, IoU >= 0.95), and the other way round. */
static gint
same_detections (const float *a, const float *b)
{
  gint n = 0;
  for (int pass = 0; pass < 2; pass++) {
    const float *x = pass ? b : a, *y = pass ? a : b;
    for (gint i = 0; i < 200 && x[i * 7] != -1; i++) {
      if (x[i * 7 + 2] < 0.3f)
        continue;
      gboolean found = FALSE;
      for (gint j = 0; j < 200 && y[j * 7] != -1 && !found; j++)
        found = y[j * 7 + 1] == x[i * 7 + 1] && fabs (y[j * 7 + 2] - x[i * 7 + 2]) <= 0.02 &&
            iou (x + i * 7 + 3, y + j * 7 + 3) >= 0.95;
      g_assert_true (found);
      n += !pass;
    }
  }
  return n;
}

static void
test_person_detection (void)
{
  g_autofree gchar *path =
      test_shared_model ("person-detection-retail-0013/person-detection-retail-0013.xml");
  if (!path)
    return;
  M2iIrModel *m = load_model (path);
  M2iSplitPlan *plan = split (m, NULL, NULL);
  gint n_dev = 0;
  for (gint p = 0; p < m2i_split_plan_get_n_pieces (plan); p++) {
    M2iSplitPieceInfo pi;
    m2i_split_plan_get_piece (plan, p, &pi);
    n_dev += pi.device == M2I_SPLIT_DEVICE_M2I;
  }
  g_test_message ("person-detection: %d pieces, %d on the device",
      m2i_split_plan_get_n_pieces (plan), n_dev);
  /* with the engine's PReLU the backbone is one device piece (the input's
   * scale and shift before it, the SSD head after it on the CPU) */
  g_assert_cmpint (m2i_split_plan_get_n_pieces (plan), <=, 4);
  g_assert_cmpint (n_dev, ==, 1);
  gint n_prelu = 0;
  for (gint i = 0; i < m2i_ir_model_get_n_nodes (m); i++) {
    M2iIrNode *node = m2i_ir_model_get_node (m, i);
    if (strcmp (m2i_ir_node_get_type (node), "PReLU"))
      continue;
    g_assert_cmpint (engine_of_layer (plan, m2i_ir_node_get_name (node)), ==,
        M2I_SPLIT_ENGINE_NPU_FP16);
    n_prelu++;
  }
  g_assert_cmpint (n_prelu, ==, 108);
  /* DetectionOutput has no device kernel */
  g_assert_cmpint (engine_of_layer (plan, "detection_out"), ==, M2I_SPLIT_ENGINE_CPU);
  g_assert_cmpint (engine_of_layer (plan, "init_block1/dim_inc/conv"), ==, M2I_SPLIT_ENGINE_NPU_FP16);
  float *x = g_new (float, 3 * 320 * 544);
  test_person_photo_bgr (x);
  M2iTensor t = { M2I_ET_F32, { 4, { 1, 3, 320, 544 } }, x };
  GError *error = NULL;
  M2iIrCompiledModel *cm = m2i_ir_compile (m, NULL, &error);
  g_assert_no_error (error);
  M2iIrInferRequest *req = m2i_ir_infer_request_new (cm, &error);
  g_assert_true (m2i_ir_infer_request_set_input (req, 0, &t, &error));
  g_assert_true (m2i_ir_infer_request_infer (req, &error));
  const float *want = m2i_ir_infer_request_get_output (req, 0)->data;

  M2iSplitRunner *r = runner (plan);
  g_assert_true (m2i_split_runner_set_input (r, 0, &t, &error));
  run (r);
  gint n = same_detections (m2i_split_runner_get_output (r, 0)->data, want);
  g_test_message ("person-detection: %d detection(s) above 0.3, as unsplit on the CPU", n);
  g_assert_cmpint (n, >=, 1);
  Reloaded rl;
  reload (plan, &rl);
  M2iSplitRunner *rb = rl.runner;
  g_assert_true (m2i_split_runner_set_input (rb, 0, &t, &error));
  run (rb);
  g_assert_cmpmem (m2i_split_runner_get_output (r, 0)->data, 200 * 7 * 4,
      m2i_split_runner_get_output (rb, 0)->data, 200 * 7 * 4);
  reloaded_free (&rl);
  m2i_split_runner_free (r);
  m2i_split_plan_unref (plan);

  /* forced: the first convolution onto the CPU, a later one onto the device
   * even under a CPU-first list */
  GHashTable *aff = g_hash_table_new (g_str_hash, g_str_equal);
  g_hash_table_insert (aff, "init_block1/dim_inc/conv", "CPU");
  g_hash_table_insert (aff, "bottleneck1_1/dim_red/conv", "M2I");
  plan = split (m, "HETERO:CPU,M2I", aff);
  g_assert_cmpint (engine_of_layer (plan, "init_block1/dim_inc/conv"), ==, M2I_SPLIT_ENGINE_CPU);
  g_assert_cmpint (engine_of_layer (plan, "bottleneck1_1/dim_red/conv"), ==, M2I_SPLIT_ENGINE_NPU_FP16);
  g_assert_cmpint (engine_of_layer (plan, "bottleneck1_2/dim_red/conv"), ==, M2I_SPLIT_ENGINE_CPU);
  r = runner (plan);
  g_assert_true (m2i_split_runner_set_input (r, 0, &t, &error));
  run (r);
  same_detections (m2i_split_runner_get_output (r, 0)->data, want);
  m2i_split_runner_free (r);
  m2i_split_plan_unref (plan);
  g_hash_table_unref (aff);
  m2i_ir_infer_request_free (req);
  m2i_ir_compiled_model_unref (cm);
  g_free (x);
  m2i_ir_model_unref (m);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/split/models/device-accounting", test_device_accounting);
  g_test_add_func ("/split/models/fashion-mnist", test_fashion);
  g_test_add_func ("/split/models/fashion-mnist-affinity", test_fashion_affinity);
  g_test_add_func ("/split/models/ppp", test_ppp);
  g_test_add_func ("/split/models/squeezenet1.1", test_squeezenet);
  g_test_add_func ("/split/models/person-detection-retail-0013", test_person_detection);
  return g_test_run ();
}
