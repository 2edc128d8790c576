/* test-gst-infer.c — m2iinfer (GstHarness).
 *
 * Expected values come from outside the element: torch's outputs and
 * predictions for the Fashion-MNIST test images (tests/data/fashion-mnist),
 * the PrePostProcessor model's reference data (tests/data/ppp), the IR
 * runtime run directly on the same input tensor (the input made by the
 * core's reference path, m2i_reference_run, when the element
 * pre-processes), and arithmetic on tiny models written here (softmax,
 * relu). Covered: known inputs give known labels; the fused chain, the chain
 * with fusion off and the chain broken by identity give identical output
 * tensors; m2iinfer's own pre-processing of video; tensor metas, region
 * metas (classification and detection, letterboxed too) and bus messages;
 * other/tensors input (one and two tensors, fp16 widened); output=tensors;
 * inference-interval; the NV12 PrePostProcessor head; error messages;
 * devices; state changes; gst-inspect documentation.
 */
#include "gst-test-util.h"
#include "gstm2itensormeta.h"

#include <base/m2i-error.h>
#include <gst/video/gstvideometa.h>
#include <ir/m2i-ir.h>
#include <split/m2i-split.h>
#include <glib/gstdio.h>

#define FM_SIDE 28
#define FM_SCALE 4
#define FM_W (FM_SIDE * FM_SCALE)
#define FM_NORM "mean=\"<0.286>\" std=\"<0.353>\" input-scale=0.00392156862745098"
#define NV12_CAPS "video/x-raw,format=NV12,width=112,height=112,framerate=30/1"
#define F32_28_CAPS "other/tensors,format=static,num_tensors=1,types=float32," \
  "dimensions=28:28:3:1,framerate=30/1"

/* ---- data ------------------------------------------------------------------- */

static gchar *
env_path (const char *var, const char *rel)
{
  const char *dir = g_getenv (var);
  fail_unless (dir != NULL, "%s is not set (run through meson test)", var);
  return g_build_filename (dir, rel, NULL);
}

static GBytes *
read_data (const char *rel)
{
  gchar *path = env_path ("M2I_TEST_DATA", rel), *data;
  gsize len;
  GError *err = NULL;
  if (!g_file_get_contents (path, &data, &len, &err))
    fail ("%s", err->message);
  g_free (path);
  return g_bytes_new_take (data, len);
}

static gchar *
fm_model (void)
{
  return env_path ("M2I_MODELS_DIR", "fashion-mnist/fashion-mnist.xml");
}

static gchar *
fm_labels (void)
{
  return env_path ("M2I_MODELS_DIR", "fashion-mnist/labels.txt");
}

/* Fashion-MNIST test image @i (of the first 64) as NV12 FM_W x FM_W: drawn
 * FM_SCALE times larger, Y = round(16 + p*219/255), U = V = 128. */
static void
fm_nv12 (TestImage *t, GBytes *images, guint i)
{
  const guint8 *img = (const guint8 *) g_bytes_get_data (images, NULL) + i * FM_SIDE * FM_SIDE;
  test_image_alloc (t, M2I_FORMAT_SP_NV12_8, FM_W, FM_W);
  for (gint y = 0; y < FM_W; y++)
    for (gint x = 0; x < FM_W; x++) {
      guint p = img[(y / FM_SCALE) * FM_SIDE + x / FM_SCALE];
      t->img.data[0][(gsize) y * t->img.stride[0] + x] = (guint8) ((16 * 255 + p * 219 + 127) / 255);
    }
  memset (t->img.data[1], 128, (gsize) t->img.stride[1] * (FM_W / 2));
}

/* ---- the IR runtime, run directly ------------------------------------------ */

typedef struct {
  M2iIrModel *model;
  M2iIrCompiledModel *cm;
  M2iIrInferRequest *req;
} Direct;

static void
direct_open (Direct *d, const char *xml)
{
  GError *err = NULL;
  d->model = m2i_ir_model_load (xml, NULL, &err);
  fail_unless (d->model != NULL, "%s", err ? err->message : "");
  d->cm = m2i_ir_compile (d->model, NULL, &err);
  fail_unless (d->cm != NULL, "%s", err ? err->message : "");
  d->req = m2i_ir_infer_request_new (d->cm, &err);
  fail_unless (d->req != NULL);
}

static const M2iTensor *
direct_run (Direct *d)
{
  GError *err = NULL;
  fail_unless (m2i_ir_infer_request_infer (d->req, &err), "%s", err ? err->message : "");
  return m2i_ir_infer_request_get_output (d->req, 0);
}

static void
direct_close (Direct *d)
{
  m2i_ir_infer_request_free (d->req);
  m2i_ir_compiled_model_unref (d->cm);
  m2i_ir_model_unref (d->model);
}

/* The model input the element must have fed for an NV12 frame @in: the
 * reference path's planar fp16 result of @ops, widened to f32, planes in
 * channel order @swap ? BGR : as computed. */
static void
reference_input (const TestImage *in, const M2iOpList *ops, gint w, gint h, gboolean swap,
    float *dst)
{
  TestImage ref;
  test_reference (in, ops, M2I_FORMAT_PL_FP16_RGB, w, h, &ref);
  gsize plane = (gsize) w * h;
  for (int c = 0; c < 3; c++)
    m2i_f16_to_f32_n ((const m2i_f16 *) ref.img.data[swap ? 2 - c : c], dst + c * plane, plane);
  test_image_free (&ref);
}

/* csc(order) -> convertU8F16 -> resize(w x h, linear_onnx) -> permute [-> norm] */
static void
preprocess_ops (M2iOpList *ops, M2iChannelOrder order, gboolean yuv, gint w, gint h,
    gboolean fashion_norm)
{
  M2iResizeParams rp;
  m2i_op_list_init (ops);
  if (yuv)
    fail_unless (m2i_op_list_add_csc (ops, order));
  fail_unless (m2i_op_list_add_convert (ops, M2I_DTYPE_F16));
  m2i_resize_params_init (&rp, w, h);
  rp.mode = M2I_RESIZE_LINEAR_ONNX;      /* m2iresize's and m2iinfer's default */
  fail_unless (m2i_op_list_add_resize (ops, &rp));
  fail_unless (m2i_op_list_add_permute (ops));
  if (fashion_norm) {
    M2iNormParams np;
    const float mean[3] = { 0.286f, 0.286f, 0.286f }, std[3] = { 0.353f, 0.353f, 0.353f };
    fail_unless (m2i_norm_params_from_mean_std (&np, mean, std, 1.0f / 255.0f));
    fail_unless (m2i_op_list_add_norm (ops, &np));
  }
}

/* ---- reading results ---------------------------------------------------------- */

static const GstM2iTensor *
output_tensor (GstBuffer *buf, const char *name)
{
  GstM2iTensorMeta *m = gst_buffer_get_m2i_tensor_meta (buf);
  fail_unless (m != NULL, "no tensor meta");
  const GstM2iTensor *t = gst_m2i_tensor_meta_find (m, name);
  fail_unless (t != NULL, "no tensor \"%s\"", name);
  return t;
}

static guint
n_rois (GstBuffer *buf)
{
  return gst_buffer_get_n_meta (buf, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE);
}

static GstVideoRegionOfInterestMeta *
nth_roi (GstBuffer *buf, guint n)
{
  gpointer state = NULL;
  GstMeta *m = NULL;
  for (guint i = 0; i <= n; i++)
    m = gst_buffer_iterate_meta_filtered (buf, &state, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE);
  fail_unless (m != NULL, "no region meta %u", n);
  return (GstVideoRegionOfInterestMeta *) m;
}

static guint
argmax (const float *v, guint n)
{
  guint best = 0;
  for (guint i = 1; i < n; i++)
    if (v[i] > v[best])
      best = i;
  return best;
}

/* Checks the full-frame classification region of @buf: @w x @h, label
 * @label, label_id @id, confidence @conf (exact: a float widened). */
static void
check_classification (GstBuffer *buf, gint w, gint h, const char *label, gint id, float conf)
{
  fail_unless_equals_int (n_rois (buf), 1);
  GstVideoRegionOfInterestMeta *roi = nth_roi (buf, 0);
  fail_unless_equals_int (roi->x, 0);
  fail_unless_equals_int (roi->y, 0);
  fail_unless_equals_int (roi->w, w);
  fail_unless_equals_int (roi->h, h);
  fail_unless_equals_string (g_quark_to_string (roi->roi_type), label);
  fail_unless_equals_int (g_list_length (roi->params), 1);
  GstStructure *s = roi->params->data;
  fail_unless (g_str_has_prefix (gst_structure_get_name (s), "classification_layer_name:"),
      "%s", gst_structure_get_name (s));
  gint got_id;
  gdouble got_conf;
  fail_unless (gst_structure_get_int (s, "label_id", &got_id));
  fail_unless (gst_structure_get_double (s, "confidence", &got_conf));
  fail_unless_equals_int (got_id, id);
  fail_unless_equals_string (gst_structure_get_string (s, "label"), label);
  fail_unless (got_conf == (double) conf, "confidence %.9g, want %.9g", got_conf, conf);
  fail_unless (gst_structure_get_string (s, "model_name") != NULL);
  fail_unless (gst_structure_get_string (s, "layer_name") != NULL);
}

static gchar **
read_labels (void)
{
  gchar *path = fm_labels (), *text;
  fail_unless (g_file_get_contents (path, &text, NULL, NULL));
  gchar **l = g_strsplit (text, "\n", -1);
  g_free (text);
  g_free (path);
  return l;
}

static GstHarness *
harness (const char *launch, const char *src_caps)
{
  GstHarness *h = gst_harness_new_parse (launch);
  gst_harness_set_src_caps_str (h, src_caps);
  return h;
}

/* Tears down @h and its test bus: the queued messages (which hold the
 * element) are dropped first, or element and bus would keep each other. */
static void
teardown_with_bus (GstHarness *h, GstBus *bus)
{
  gst_bus_set_flushing (bus, TRUE);
  gst_element_set_bus (h->element, NULL);
  gst_object_unref (bus);
  gst_harness_teardown (h);
}

/* ---- known inputs, known labels ------------------------------------------------- */

/* torch's exact model inputs as other/tensors: the probabilities equal
 * torch's within 1e-4 and the IR runtime's bit for bit; labels are torch's
 * predictions. */
GST_START_TEST (test_tensor_input_known_labels)
{
  GBytes *inputs = read_data ("fashion-mnist/first64.input.f32");
  GBytes *probs = read_data ("fashion-mnist/first64.prob.f32");
  GBytes *preds = read_data ("fashion-mnist/t10k.torch-pred.u8");
  gchar *model = fm_model (), *labels = fm_labels ();
  gchar **names = read_labels ();
  gchar *launch = g_strdup_printf ("m2iinfer model=%s labels=%s device=CPU", model, labels);
  GstHarness *h = harness (launch, F32_28_CAPS);
  Direct d;
  direct_open (&d, model);
  const float *in = g_bytes_get_data (inputs, NULL);
  const float *torch = g_bytes_get_data (probs, NULL);
  const guint8 *pred = g_bytes_get_data (preds, NULL);
  gsize n_in = 3 * FM_SIDE * FM_SIDE;
  for (guint i = 0; i < 64; i++) {
    GstBuffer *b = gst_buffer_new_memdup (in + i * n_in, n_in * sizeof (float));
    fail_unless_equals_int (gst_harness_push (h, b), GST_FLOW_OK);
    GstBuffer *o = gst_harness_pull (h);
    const GstM2iTensor *t = output_tensor (o, "prob");
    fail_unless_equals_int (t->type, M2I_ET_F32);
    fail_unless_equals_int (t->n_dims, 2);
    fail_unless_equals_int (t->dims[0], 1);
    fail_unless_equals_int (t->dims[1], 10);
    fail_unless_equals_int (t->size, 40);
    const float *p = t->data;
    for (int c = 0; c < 10; c++)
      fail_unless (fabsf (p[c] - torch[i * 10 + c]) <= 1e-4f, "image %u class %d: %g vs torch %g",
          i, c, p[c], torch[i * 10 + c]);
    memcpy (m2i_ir_infer_request_get_input (d.req, 0)->data, in + i * n_in, n_in * sizeof (float));
    const M2iTensor *ref = direct_run (&d);
    fail_unless (memcmp (p, ref->data, 40) == 0, "image %u: element != runtime", i);
    guint best = argmax (p, 10);
    fail_unless_equals_int (best, pred[i]);
    /* Tensor input to an image model: the region is the tensor's 28x28. */
    check_classification (o, FM_SIDE, FM_SIDE, names[best], (gint) best, p[best]);
    gst_buffer_unref (o);
  }
  direct_close (&d);
  gst_harness_teardown (h);
  g_strfreev (names);
  g_free (launch);
  g_free (model);
  g_free (labels);
  g_bytes_unref (inputs);
  g_bytes_unref (probs);
  g_bytes_unref (preds);
}
GST_END_TEST;

/* ---- fused, unfused, broken ------------------------------------------------------ */

#define N_CHAIN 6

typedef struct {
  float prob[N_CHAIN][10];
  gint label[N_CHAIN];
  gchar *out_caps;
  gchar *fused;
  M2iDeviceCounters counters;
} ChainRun;

static void
run_fm_chain (const char *launch, ChainRun *r)
{
  GBytes *images = read_data ("fashion-mnist/first64.images.u8");
  GstHarness *h = harness (launch, NV12_CAPS);
  M2iDevice *dev = m2i_device_get_default ();
  m2i_device_reset_counters (dev);
  for (guint i = 0; i < N_CHAIN; i++) {
    TestImage in;
    fm_nv12 (&in, images, i);
    fail_unless_equals_int (gst_harness_push (h, test_image_to_buffer (&in, 0)), GST_FLOW_OK);
    GstBuffer *o = gst_harness_pull (h);
    memcpy (r->prob[i], output_tensor (o, "prob")->data, sizeof r->prob[i]);
    GstStructure *s = nth_roi (o, 0)->params->data;
    gst_structure_get_int (s, "label_id", &r->label[i]);
    gst_buffer_unref (o);
    test_image_free (&in);
  }
  m2i_device_get_counters (dev, &r->counters);
  GstCaps *caps = gst_pad_get_current_caps (h->sinkpad);
  r->out_caps = gst_caps_to_string (caps);
  gst_caps_unref (caps);
  r->fused = test_harness_fused (h, "inf");
  gst_harness_teardown (h);
  g_bytes_unref (images);
}

static void
chain_run_clear (ChainRun *r)
{
  g_free (r->out_caps);
  g_free (r->fused);
}

GST_START_TEST (test_fused_unfused_identical)
{
  gchar *model = fm_model ();
  gchar *fused = g_strdup_printf ("m2icolorconvert ! m2iresize ! m2inorm " FM_NORM " ! "
      "m2iinfer name=inf model=%s device=CPU", model);
  gchar *off = g_strdup_printf ("m2icolorconvert fusion=false ! m2iresize fusion=false ! "
      "m2inorm fusion=false " FM_NORM " ! m2iinfer name=inf fusion=false model=%s device=CPU", model);
  gchar *broken = g_strdup_printf ("m2icolorconvert ! m2iresize ! m2inorm " FM_NORM " ! "
      "identity ! m2iinfer name=inf model=%s device=CPU", model);
  /* m2iinfer pre-processing the video itself: csc -> convert -> resize ->
   * permute -> norm, the same plan once permute is moved past the resize. */
  gchar *own = g_strdup_printf ("m2iinfer name=inf model=%s device=CPU " FM_NORM, model);
  ChainRun a, b, c, e;
  run_fm_chain (fused, &a);
  run_fm_chain (off, &b);
  run_fm_chain (broken, &c);
  run_fm_chain (own, &e);
  for (guint i = 0; i < N_CHAIN; i++) {
    fail_unless (memcmp (a.prob[i], b.prob[i], sizeof a.prob[i]) == 0, "frame %u: fused vs "
        "fusion=false", i);
    fail_unless (memcmp (a.prob[i], c.prob[i], sizeof a.prob[i]) == 0, "frame %u: fused vs "
        "identity", i);
    fail_unless (memcmp (a.prob[i], e.prob[i], sizeof a.prob[i]) == 0, "frame %u: fused vs "
        "m2iinfer's own pre-processing", i);
  }
  /* Fused: the source video leaves m2iinfer; one plan run per frame, on the
   * device (the default profile runs norm as a second device task). */
  fail_unless (g_str_has_prefix (a.out_caps, "video/x-raw"), "%s", a.out_caps);
  fail_unless (strstr (a.out_caps, "NV12") != NULL, "%s", a.out_caps);
  fail_unless (g_str_has_prefix (b.out_caps, "other/tensors"), "%s", b.out_caps);
  fail_unless_equals_uint64 (a.counters.runs, N_CHAIN);
  fail_unless_equals_uint64 (a.counters.tasks_device, 2 * N_CHAIN);
  fail_unless_equals_uint64 (a.counters.tasks_cpu, 0);
  fail_unless (strstr (a.fused, "m2icolorconvert0 + m2iresize0 + m2inorm0 + inf: csc(RGB)")
      != NULL, "%s", a.fused);
  fail_unless (strstr (a.fused, "(2 device tasks)") != NULL, "%s", a.fused);
  fail_unless (strstr (b.fused, "1 input tensor copied in") != NULL, "%s", b.fused);
  fail_unless (strstr (e.fused, "inf: csc(RGB) -> convertU8F16 -> resize(28x28") != NULL,
      "%s", e.fused);
  chain_run_clear (&a);
  chain_run_clear (&b);
  chain_run_clear (&c);
  chain_run_clear (&e);
  g_free (fused);
  g_free (off);
  g_free (broken);
  g_free (own);
  g_free (model);
}
GST_END_TEST;

/* The fused chain's outputs equal the runtime's on the reference path's
 * tensor for the same frame, and its labels are torch's. */
GST_START_TEST (test_fused_vs_reference)
{
  GBytes *images = read_data ("fashion-mnist/first64.images.u8");
  GBytes *preds = read_data ("fashion-mnist/t10k.torch-pred.u8");
  gchar *model = fm_model ();
  gchar *launch = g_strdup_printf ("m2icolorconvert ! m2iresize ! m2inorm " FM_NORM " ! "
      "m2iinfer name=inf model=%s device=CPU", model);
  ChainRun a;
  run_fm_chain (launch, &a);
  Direct d;
  direct_open (&d, model);
  M2iOpList ops;
  preprocess_ops (&ops, M2I_ORDER_RGB, TRUE, FM_SIDE, FM_SIDE, TRUE);
  for (guint i = 0; i < N_CHAIN; i++) {
    TestImage in;
    fm_nv12 (&in, images, i);
    reference_input (&in, &ops, FM_SIDE, FM_SIDE, FALSE,
        m2i_ir_infer_request_get_input (d.req, 0)->data);
    const float *ref = direct_run (&d)->data;
    /* The fused plan equals the reference path within one fp16 ulp. */
    for (int c = 0; c < 10; c++)
      fail_unless (fabsf (a.prob[i][c] - ref[c]) <= 2e-3f, "frame %u class %d: %g vs %g", i, c,
          a.prob[i][c], ref[c]);
    fail_unless_equals_int (a.label[i], argmax (ref, 10));
    fail_unless_equals_int (a.label[i], ((const guint8 *) g_bytes_get_data (preds, NULL))[i]);
    test_image_free (&in);
  }
  direct_close (&d);
  chain_run_clear (&a);
  g_free (launch);
  g_free (model);
  g_bytes_unref (images);
  g_bytes_unref (preds);
}
GST_END_TEST;

/* ---- tiny models: hand-computed values ----------------------------------------------- */

#define TINY_DIMS(d) "<dim>1</dim><dim>" d "</dim>"

/* Writes a model with inputs a, b ([1,4] f32): out = relu(a + b), or
 * softmax(a) when @softmax (one input). Returns the .xml path (in @dir). */
static gchar *
write_tiny_model (const char *dir, gboolean softmax)
{
  const char *xml = softmax
      ? "<?xml version=\"1.0\"?>\n<net name=\"tiny-softmax\" version=\"11\"><layers>\n"
      "<layer id=\"0\" name=\"a\" type=\"Parameter\" version=\"opset1\"><data shape=\"1,4\" element_type=\"f32\"/>"
      "<output><port id=\"0\" precision=\"FP32\">" TINY_DIMS ("4") "</port></output></layer>\n"
      "<layer id=\"1\" name=\"sm\" type=\"SoftMax\" version=\"opset8\"><data axis=\"1\"/>"
      "<input><port id=\"0\">" TINY_DIMS ("4") "</port></input>"
      "<output><port id=\"1\" precision=\"FP32\" names=\"score\">" TINY_DIMS ("4") "</port></output></layer>\n"
      "<layer id=\"2\" name=\"out\" type=\"Result\" version=\"opset1\">"
      "<input><port id=\"0\">" TINY_DIMS ("4") "</port></input></layer>\n"
      "</layers><edges><edge from-layer=\"0\" from-port=\"0\" to-layer=\"1\" to-port=\"0\"/>"
      "<edge from-layer=\"1\" from-port=\"1\" to-layer=\"2\" to-port=\"0\"/></edges></net>\n"
      : "<?xml version=\"1.0\"?>\n<net name=\"tiny-relu\" version=\"11\"><layers>\n"
      "<layer id=\"0\" name=\"a\" type=\"Parameter\" version=\"opset1\"><data shape=\"1,4\" element_type=\"f32\"/>"
      "<output><port id=\"0\" precision=\"FP32\">" TINY_DIMS ("4") "</port></output></layer>\n"
      "<layer id=\"1\" name=\"b\" type=\"Parameter\" version=\"opset1\"><data shape=\"1,4\" element_type=\"f32\"/>"
      "<output><port id=\"0\" precision=\"FP32\">" TINY_DIMS ("4") "</port></output></layer>\n"
      "<layer id=\"2\" name=\"add\" type=\"Add\" version=\"opset1\"><data auto_broadcast=\"numpy\"/>"
      "<input><port id=\"0\">" TINY_DIMS ("4") "</port><port id=\"1\">" TINY_DIMS ("4") "</port></input>"
      "<output><port id=\"2\" precision=\"FP32\">" TINY_DIMS ("4") "</port></output></layer>\n"
      "<layer id=\"3\" name=\"relu\" type=\"ReLU\" version=\"opset1\">"
      "<input><port id=\"0\">" TINY_DIMS ("4") "</port></input>"
      "<output><port id=\"1\" precision=\"FP32\" names=\"score\">" TINY_DIMS ("4") "</port></output></layer>\n"
      "<layer id=\"4\" name=\"out\" type=\"Result\" version=\"opset1\">"
      "<input><port id=\"0\">" TINY_DIMS ("4") "</port></input></layer>\n"
      "</layers><edges><edge from-layer=\"0\" from-port=\"0\" to-layer=\"2\" to-port=\"0\"/>"
      "<edge from-layer=\"1\" from-port=\"0\" to-layer=\"2\" to-port=\"1\"/>"
      "<edge from-layer=\"2\" from-port=\"2\" to-layer=\"3\" to-port=\"0\"/>"
      "<edge from-layer=\"3\" from-port=\"1\" to-layer=\"4\" to-port=\"0\"/></edges></net>\n";
  gchar *path = g_build_filename (dir, softmax ? "softmax.xml" : "relu.xml", NULL);
  fail_unless (g_file_set_contents (path, xml, -1, NULL));
  return path;
}

static void
remove_dir (gchar *dir)
{
  GDir *d = g_dir_open (dir, 0, NULL);
  const char *n;
  while (d && (n = g_dir_read_name (d))) {
    gchar *p = g_build_filename (dir, n, NULL);
    g_unlink (p);
    g_free (p);
  }
  if (d)
    g_dir_close (d);
  g_rmdir (dir);
  g_free (dir);
}

/* Two other/tensors inputs (one memory each, the second fp16): out =
 * relu(a + b); the model ends without SoftMax, so the confidence is the
 * softmax of the scores, computed here. top-k=3 lists three classes. */
GST_START_TEST (test_two_tensor_inputs_logits)
{
  gchar *dir = g_dir_make_tmp ("m2iinfer-XXXXXX", NULL);
  gchar *model = write_tiny_model (dir, FALSE);
  gchar *launch = g_strdup_printf ("m2iinfer model=%s top-k=3 device=CPU", model);
  GstHarness *h = harness (launch, "other/tensors,format=static,num_tensors=2,"
      "types=(string)\"float32,float16\",dimensions=(string)\"4:1,4:1\",framerate=30/1");
  GstBus *bus = test_harness_bus (h);
  const float a[4] = { 1.0f, -2.0f, 0.5f, 3.0f }, bf[4] = { 0.25f, 1.0f, 2.0f, -4.0f };
  m2i_f16 b[4];
  for (int i = 0; i < 4; i++)
    b[i] = m2i_f32_to_f16 (bf[i]);      /* all exact in fp16 */
  GstBuffer *buf = gst_buffer_new ();
  gpointer ca = g_memdup2 (a, sizeof a), cb = g_memdup2 (b, sizeof b);
  gst_buffer_append_memory (buf, gst_memory_new_wrapped (0, ca, sizeof a, 0, sizeof a, ca, g_free));
  gst_buffer_append_memory (buf, gst_memory_new_wrapped (0, cb, sizeof b, 0, sizeof b, cb, g_free));
  fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_OK);
  GstBuffer *o = gst_harness_pull (h);
  const float want[4] = { 1.25f, 0.0f, 2.5f, 0.0f };
  const GstM2iTensor *t = output_tensor (o, "score");
  fail_unless (memcmp (t->data, want, sizeof want) == 0);
  double e[4], sum = 0;
  for (int i = 0; i < 4; i++)
    sum += e[i] = exp (want[i]);
  /* classes 2 (2.5), 0 (1.25), then 1 and 3 tie at 0: the lower id first */
  GstMessage *msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ELEMENT);
  fail_unless (msg != NULL, "no element message");
  const GstStructure *s = gst_message_get_structure (msg);
  fail_unless (gst_structure_has_name (s, "m2iinfer"));
  gint id;
  gdouble conf;
  fail_unless (gst_structure_get_int (s, "label_id", &id));
  fail_unless (gst_structure_get_double (s, "confidence", &conf));
  fail_unless_equals_int (id, 2);
  fail_unless (fabs (conf - e[2] / sum) < 1e-6, "%g vs %g", conf, e[2] / sum);
  fail_unless_equals_string (gst_structure_get_string (s, "label"), "class-2");
  const GValue *top = gst_structure_get_value (s, "top_labels");
  fail_unless_equals_int (gst_value_array_get_size (top), 3);
  fail_unless_equals_string (g_value_get_string (gst_value_array_get_value (top, 1)), "class-0");
  fail_unless_equals_string (g_value_get_string (gst_value_array_get_value (top, 2)), "class-1");
  const GValue *confs = gst_structure_get_value (s, "top_confidences");
  fail_unless (fabs (g_value_get_double (gst_value_array_get_value (confs, 1)) - e[0] / sum)
      < 1e-6);
  /* Non-image input: no frame, so no region meta. */
  fail_unless_equals_int (n_rois (o), 0);
  gst_message_unref (msg);
  gst_buffer_unref (o);
  teardown_with_bus (h, bus);
  g_free (launch);
  g_free (model);
  remove_dir (dir);
}
GST_END_TEST;

/* A model ending in SoftMax: its output is the confidence as is. Also
 * output=tensors: the pushed buffer is the output tensor. */
GST_START_TEST (test_output_tensors_softmax)
{
  gchar *dir = g_dir_make_tmp ("m2iinfer-XXXXXX", NULL);
  gchar *model = write_tiny_model (dir, TRUE);
  gchar *launch = g_strdup_printf ("m2iinfer model=%s output=tensors device=CPU", model);
  GstHarness *h = harness (launch, "other/tensors,format=static,num_tensors=1,"
      "types=float32,dimensions=(string)4:1,framerate=30/1");
  GstBus *bus = test_harness_bus (h);
  const float a[4] = { 0.0f, 1.0f, 2.0f, 3.0f };
  GstBuffer *in = gst_buffer_new_memdup (a, sizeof a);
  GST_BUFFER_PTS (in) = 42 * GST_MSECOND;
  fail_unless_equals_int (gst_harness_push (h, in), GST_FLOW_OK);
  GstBuffer *o = gst_harness_pull (h);
  GstCaps *caps = gst_pad_get_current_caps (h->sinkpad);
  GstStructure *cs = gst_caps_get_structure (caps, 0);
  fail_unless (gst_structure_has_name (cs, "other/tensors"));
  fail_unless_equals_string (gst_structure_get_string (cs, "types"), "float32");
  fail_unless_equals_string (gst_structure_get_string (cs, "dimensions"), "4:1");
  gst_caps_unref (caps);
  fail_unless_equals_int (GST_BUFFER_PTS (o), 42 * GST_MSECOND);
  fail_unless_equals_int (gst_buffer_get_size (o), sizeof a);
  float got[4];
  gst_buffer_extract (o, 0, got, sizeof got);
  double sum = 0;
  for (int i = 0; i < 4; i++)
    sum += exp (a[i]);
  for (int i = 0; i < 4; i++)
    fail_unless (fabs (got[i] - exp (a[i]) / sum) < 1e-6, "%d: %g", i, got[i]);
  GstMessage *msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ELEMENT);
  fail_unless (msg != NULL);
  gdouble conf;
  gst_structure_get_double (gst_message_get_structure (msg), "confidence", &conf);
  fail_unless (conf == (double) got[3]);
  gst_message_unref (msg);
  gst_buffer_unref (o);
  teardown_with_bus (h, bus);
  g_free (launch);
  g_free (model);
  remove_dir (dir);
}
GST_END_TEST;

/* ---- interval, messages ---------------------------------------------------------- */

GST_START_TEST (test_inference_interval)
{
  GBytes *inputs = read_data ("fashion-mnist/first64.input.f32");
  gchar *model = fm_model ();
  gchar *launch = g_strdup_printf ("m2iinfer model=%s inference-interval=3 device=CPU", model);
  GstHarness *h = harness (launch, F32_28_CAPS);
  GstBus *bus = test_harness_bus (h);
  gsize n_in = 3 * FM_SIDE * FM_SIDE;
  const float *in = g_bytes_get_data (inputs, NULL);
  for (guint i = 0; i < 7; i++) {
    GstBuffer *b = gst_buffer_new_memdup (in + i * n_in, n_in * sizeof (float));
    GST_BUFFER_PTS (b) = i * GST_SECOND;
    fail_unless_equals_int (gst_harness_push (h, b), GST_FLOW_OK);
    GstBuffer *o = gst_harness_pull (h);
    gboolean inferred = i % 3 == 0;
    fail_unless_equals_int (gst_buffer_get_m2i_tensor_meta (o) != NULL, inferred);
    fail_unless_equals_int (n_rois (o), inferred ? 1 : 0);
    gst_buffer_unref (o);
  }
  /* A flushing seek: the interval counts again from the first frame after
   * it (frame 7 is inferred, 8 is not), the frame numbers go on. */
  fail_unless (gst_harness_push_event (h, gst_event_new_flush_start ()));
  fail_unless (gst_harness_push_event (h, gst_event_new_flush_stop (TRUE)));
  GstSegment seg;
  gst_segment_init (&seg, GST_FORMAT_TIME);
  fail_unless (gst_harness_push_event (h, gst_event_new_segment (&seg)));
  for (guint i = 7; i < 9; i++) {
    GstBuffer *b = gst_buffer_new_memdup (in + i * n_in, n_in * sizeof (float));
    GST_BUFFER_PTS (b) = i * GST_SECOND;
    fail_unless_equals_int (gst_harness_push (h, b), GST_FLOW_OK);
    GstBuffer *o = gst_harness_pull (h);
    fail_unless_equals_int (n_rois (o), i == 7 ? 1 : 0);
    gst_buffer_unref (o);
  }
  /* Messages for frames 0, 3, 6 and (after the flush) 7 only, with their
   * timestamps. */
  for (guint k = 0; k < 4; k++) {
    GstMessage *m = gst_bus_pop_filtered (bus, GST_MESSAGE_ELEMENT);
    fail_unless (m != NULL);
    guint64 frame, ts;
    const GstStructure *s = gst_message_get_structure (m);
    fail_unless (gst_structure_get_uint64 (s, "frame", &frame));
    fail_unless (gst_structure_get_uint64 (s, "timestamp", &ts));
    guint64 want = k < 3 ? 3 * k : 7;
    fail_unless_equals_uint64 (frame, want);
    fail_unless_equals_uint64 (ts, want * GST_SECOND);
    gst_message_unref (m);
  }
  fail_unless (gst_bus_pop_filtered (bus, GST_MESSAGE_ELEMENT) == NULL);
  teardown_with_bus (h, bus);
  g_free (launch);
  g_free (model);
  g_bytes_unref (inputs);
}
GST_END_TEST;

/* ---- the PrePostProcessor NV12 head ------------------------------------------------ */

#define PPP_W 64
#define PPP_H 48
#define PPP_CAPS "video/x-raw,format=NV12,width=64,height=48,framerate=30/1"

/* The PrePostProcessor model with its NV12 head. */
static gchar *
ppp_model (void)
{
  return env_path ("M2I_MODELS_DIR", "fashion-mnist-ppp/fashion-mnist-ppp.xml");
}

/* Reference case @name of tests/data/ppp: its PPP_W x PPP_H NV12 frame into
 * @frame (allocated here); returns the reference model's 10 class
 * probabilities (caller unrefs). */
static GBytes *
ppp_case (const char *name, TestImage *frame)
{
  gchar *nv = g_strdup_printf ("ppp/%s.nv12", name);
  gchar *pr = g_strdup_printf ("ppp/%s.prob.f32", name);
  GBytes *data = read_data (nv), *prob = read_data (pr);
  test_image_alloc (frame, M2I_FORMAT_SP_NV12_8, PPP_W, PPP_H);
  fail_unless_equals_int (g_bytes_get_size (data), frame->size);
  fail_unless_equals_int (g_bytes_get_size (prob), 10 * sizeof (float));
  memcpy (frame->mem, g_bytes_get_data (data, NULL), frame->size);
  g_bytes_unref (data);
  g_free (nv);
  g_free (pr);
  return prob;
}

GST_START_TEST (test_ppp_nv12_head)
{
  static const char *cases[] = { "t10k-0", "t10k-1", "gradient", "noise" };
  gchar *model = ppp_model ();
  gchar *launch = g_strdup_printf ("m2iinfer name=inf model=%s device=CPU", model);
  GstHarness *h = harness (launch, PPP_CAPS);
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    TestImage t;
    GBytes *prob = ppp_case (cases[i], &t);
    /* Padded strides with a GstVideoMeta: the planes are copied row by row. */
    fail_unless_equals_int (gst_harness_push (h, test_image_to_buffer (&t, i % 2 ? 16 : 0)),
        GST_FLOW_OK);
    GstBuffer *o = gst_harness_pull (h);
    const float *p = output_tensor (o, "prob")->data, *want = g_bytes_get_data (prob, NULL);
    for (int c = 0; c < 10; c++)
      fail_unless (fabsf (p[c] - want[c]) <= 1e-4f, "%s class %d: %g vs %g", cases[i], c, p[c],
          want[c]);
    guint best = argmax (p, 10);
    gchar label[16];
    g_snprintf (label, sizeof label, "class-%u", best);
    check_classification (o, PPP_W, PPP_H, label, (gint) best, p[best]);
    gst_buffer_unref (o);
    test_image_free (&t);
    g_bytes_unref (prob);
  }
  gchar *fused = test_harness_fused (h, "inf");
  fail_unless (strstr (fused, "PrePostProcessor head") != NULL, "%s", fused);
  g_free (fused);
  gst_harness_teardown (h);
  g_free (launch);
  g_free (model);
}
GST_END_TEST;

/* ---- detection ------------------------------------------------------------------ */

typedef struct {
  gint width, height;
  TestImage rgb;             /* IL_RGB888 */
} Photo;

static void
read_photo (Photo *ph)
{
  GBytes *b = read_data ("ir/astronaut-272x160.ppm");
  gsize len;
  const char *d = g_bytes_get_data (b, &len);
  gint used = 0, max = 0;
  fail_unless (sscanf (d, "P6 %d %d %d%n", &ph->width, &ph->height, &max, &used) == 3);
  test_image_alloc (&ph->rgb, M2I_FORMAT_IL_RGB888, ph->width, ph->height);
  fail_unless ((gsize) used + 1 + ph->rgb.size <= len);
  memcpy (ph->rgb.mem, d + used + 1, ph->rgb.size);
  g_bytes_unref (b);
}

/* The path of person-detection-retail-0013 (caller frees), with the photo
 * read into @ph; NULL, with nothing read, when M2I_SHARED_MODELS does not
 * hold the model (the detection tests then pass without checking). */
static gchar *
person_model_and_photo (Photo *ph)
{
  gchar *p = env_path ("M2I_SHARED_MODELS",
      "person-detection-retail-0013/person-detection-retail-0013.xml");
  if (!g_file_test (p, G_FILE_TEST_EXISTS)) {
    GST_INFO ("person-detection-retail-0013 not found under M2I_SHARED_MODELS: skipped");
    g_free (p);
    return NULL;
  }
  read_photo (ph);
  return p;
}

/* Expected pixel rectangle of a detection row, the way the docs define it:
 * corners (clamped to [0,1]) times the frame size, rounded to nearest. */
static void
expected_rect (const float *row, gint w, gint h, guint r[4])
{
  double c[4] = { row[3], row[4], row[5], row[6] };
  for (int i = 0; i < 4; i++)
    c[i] = c[i] < 0 ? 0 : c[i] > 1 ? 1 : c[i];
  double x0 = floor (c[0] * w + 0.5), y0 = floor (c[1] * h + 0.5);
  r[0] = (guint) x0;
  r[1] = (guint) y0;
  r[2] = (guint) (floor (c[2] * w + 0.5) - x0);
  r[3] = (guint) (floor (c[3] * h + 0.5) - y0);
}

/* person-detection-retail-0013 on the photo as RGB video, m2iinfer doing
 * the pre-processing (BGR, 544x320): one region per detection >= threshold
 * scaled to the 272x160 frame, equal to the runtime's rows on the reference
 * path's input; the person is where the photo put her. */
GST_START_TEST (test_detection_regions)
{
  Photo ph;
  gchar *model = person_model_and_photo (&ph);
  if (!model)
    return;
  gchar *launch = g_strdup_printf ("m2iinfer model=%s channel-order=bgr threshold=0.3 device=CPU", model);
  gchar *caps = g_strdup_printf ("video/x-raw,format=RGB,width=%d,height=%d,framerate=1/1",
      ph.width, ph.height);
  GstHarness *h = harness (launch, caps);
  GstBus *bus = test_harness_bus (h);
  fail_unless_equals_int (gst_harness_push (h, test_image_to_buffer (&ph.rgb, 0)), GST_FLOW_OK);
  GstBuffer *o = gst_harness_pull (h);

  Direct d;
  direct_open (&d, model);
  M2iOpList ops;
  preprocess_ops (&ops, M2I_ORDER_RGB, FALSE, 544, 320, FALSE);
  reference_input (&ph.rgb, &ops, 544, 320, TRUE, m2i_ir_infer_request_get_input (d.req, 0)->data);
  const M2iTensor *ref = direct_run (&d);
  const GstM2iTensor *t = output_tensor (o, "detection_out");
  fail_unless_equals_int (t->n_dims, 4);
  fail_unless_equals_int (t->dims[2], 200);
  fail_unless_equals_int (t->dims[3], 7);
  const float *rows = ref->data, *got = t->data;
  guint n = 0;
  for (guint i = 0; i < 200 && rows[i * 7] >= 0; i++) {
    for (int k = 0; k < 7; k++)
      fail_unless (fabsf (got[i * 7 + k] - rows[i * 7 + k]) <= 1e-3f, "row %u col %d: %g vs %g",
          i, k, got[i * 7 + k], rows[i * 7 + k]);
    if (rows[i * 7 + 2] < 0.3f)
      continue;
    guint want[4];
    expected_rect (got + i * 7, ph.width, ph.height, want);
    GstVideoRegionOfInterestMeta *roi = nth_roi (o, n);
    fail_unless_equals_int (roi->x, want[0]);
    fail_unless_equals_int (roi->y, want[1]);
    fail_unless_equals_int (roi->w, want[2]);
    fail_unless_equals_int (roi->h, want[3]);
    fail_unless_equals_string (g_quark_to_string (roi->roi_type), "class-1");
    GstStructure *s = gst_video_region_of_interest_meta_get_param (roi, "detection");
    fail_unless (s != NULL);
    gdouble conf, xmin, ymax;
    gint id;
    gst_structure_get_double (s, "confidence", &conf);
    gst_structure_get_double (s, "x_min", &xmin);
    gst_structure_get_double (s, "y_max", &ymax);
    gst_structure_get_int (s, "label_id", &id);
    fail_unless (conf == (double) got[i * 7 + 2]);
    fail_unless (fabs (xmin - got[i * 7 + 3]) < 1e-6 && fabs (ymax - got[i * 7 + 6]) < 1e-6);
    fail_unless_equals_int (id, (gint) got[i * 7 + 1]);
    n++;
  }
  fail_unless_equals_int (n_rois (o), n);
  fail_unless (n >= 1, "no person found");
  /* The photo's person: a 100x100 square at (86, 30); the box starts at
   * her head and lies across the square (a pedestrian detector draws the
   * whole body, so its bottom may go below the picture's). */
  GstVideoRegionOfInterestMeta *best = nth_roi (o, 0);
  fail_unless (best->x >= 76 && best->x + best->w <= 196 && best->y >= 20 && best->y <= 50
      && best->w >= 40 && best->h >= 80, "box %u,%u %ux%u", best->x, best->y, best->w, best->h);
  /* The message lists the same objects, with pixel boxes. */
  GstMessage *m = gst_bus_pop_filtered (bus, GST_MESSAGE_ELEMENT);
  fail_unless (m != NULL);
  const GstStructure *ms = gst_message_get_structure (m);
  guint n_obj;
  fail_unless (gst_structure_get_uint (ms, "n_objects", &n_obj));
  fail_unless_equals_int (n_obj, n);
  const GValue *objs = gst_structure_get_value (ms, "objects");
  const GstStructure *o0 = gst_value_get_structure (gst_value_list_get_value (objs, 0));
  guint x, w;
  gst_structure_get_uint (o0, "x", &x);
  gst_structure_get_uint (o0, "width", &w);
  fail_unless_equals_int (x, best->x);
  fail_unless_equals_int (w, best->w);
  gst_message_unref (m);

  direct_close (&d);
  gst_buffer_unref (o);
  teardown_with_bus (h, bus);
  test_image_free (&ph.rgb);
  g_free (caps);
  g_free (launch);
  g_free (model);
}
GST_END_TEST;

/* RGB -> NV12 with the inverse of the BT.601 limited-range csc (test data,
 * any reasonable conversion will do). */
static void
rgb_to_nv12 (const TestImage *rgb, TestImage *nv)
{
  gint w = rgb->img.width, h = rgb->img.height;
  test_image_alloc (nv, M2I_FORMAT_SP_NV12_8, w, h);
  for (gint y = 0; y < h; y++)
    for (gint x = 0; x < w; x++) {
      const guint8 *p = rgb->img.data[0] + (gsize) y * rgb->img.stride[0] + x * 3;
      double Y = 16 + 0.257 * p[0] + 0.504 * p[1] + 0.098 * p[2];
      nv->img.data[0][(gsize) y * nv->img.stride[0] + x] = (guint8) CLAMP (Y + 0.5, 0, 255);
      if (y % 2 == 0 && x % 2 == 0) {
        double U = 128 - 0.148 * p[0] - 0.291 * p[1] + 0.439 * p[2];
        double V = 128 + 0.439 * p[0] - 0.368 * p[1] - 0.071 * p[2];
        guint8 *uv = nv->img.data[1] + (gsize) (y / 2) * nv->img.stride[1] + x;
        uv[0] = (guint8) CLAMP (U + 0.5, 0, 255);
        uv[1] = (guint8) CLAMP (V + 0.5, 0, 255);
      }
    }
}

/* The first region of the frame @nv through @launch (whose m2iinfer is
 * called "inf"); @fused receives its fused property. */
static void
first_box (const char *launch, const TestImage *nv, guint box[4], gchar **fused)
{
  gchar *caps = g_strdup_printf ("video/x-raw,format=NV12,width=%d,height=%d,framerate=1/1",
      nv->img.width, nv->img.height);
  GstHarness *h = harness (launch, caps);
  fail_unless_equals_int (gst_harness_push (h, test_image_to_buffer (nv, 0)), GST_FLOW_OK);
  GstBuffer *o = gst_harness_pull (h);
  fail_unless (n_rois (o) >= 1, "no detection");
  GstVideoRegionOfInterestMeta *roi = nth_roi (o, 0);
  box[0] = roi->x;
  box[1] = roi->y;
  box[2] = roi->w;
  box[3] = roi->h;
  *fused = test_harness_fused (h, "inf");
  gst_buffer_unref (o);
  gst_harness_teardown (h);
  g_free (caps);
}

/* A letterboxing chain (m2iresize keep-aspect-ratio=true) fused into
 * m2iinfer: the boxes come back in the source frame's pixels. The photo is
 * put on a taller canvas (272x240) so the bars are real: 272x240 becomes a
 * 363x320 picture at x = 90 of 544x320. The box must land where the same
 * chain without letterbox (the frame stretched to 544x320) puts it, within
 * what two different resizes change; not unmapping the letterbox would
 * move it by 40 pixels. */
GST_START_TEST (test_detection_letterbox)
{
  Photo ph;
  gchar *model = person_model_and_photo (&ph);
  if (!model)
    return;
  TestImage tall, nv;
  test_image_alloc (&tall, M2I_FORMAT_IL_RGB888, ph.width, 240);
  memset (tall.mem, 128, tall.size);
  for (gint y = 0; y < ph.height; y++)
    memcpy (tall.img.data[0] + (gsize) (y + 40) * tall.img.stride[0],
        ph.rgb.img.data[0] + (gsize) y * ph.rgb.img.stride[0], (gsize) ph.width * 3);
  rgb_to_nv12 (&tall, &nv);
  gchar *boxed = g_strdup_printf ("m2icolorconvert channel-order=bgr ! m2iresize "
      "keep-aspect-ratio=true pad-value=128 ! m2iinfer name=inf model=%s channel-order=bgr device=CPU",
      model);
  gchar *stretched = g_strdup_printf ("m2icolorconvert channel-order=bgr ! m2iresize ! "
      "m2iinfer name=inf model=%s channel-order=bgr device=CPU", model);
  guint a[4], b[4];
  gchar *fa, *fb;
  first_box (boxed, &nv, a, &fa);
  first_box (stretched, &nv, b, &fb);
  fail_unless (strstr (fa, "letterbox") != NULL && strstr (fa, " + inf: ") != NULL,
      "%s", fa);
  fail_unless (strstr (fb, "letterbox") == NULL, "%s", fb);
  for (int i = 0; i < 4; i++)
    fail_unless (abs ((gint) a[i] - (gint) b[i]) <= 6, "letterboxed %u,%u %ux%u vs stretched "
        "%u,%u %ux%u", a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3]);
  /* and on the person: her square is at (86, 70) in this frame */
  fail_unless (a[0] >= 76 && a[0] + a[2] <= 196 && a[1] >= 60 && a[1] <= 90,
      "box %u,%u %ux%u", a[0], a[1], a[2], a[3]);
  g_free (fa);
  g_free (fb);
  test_image_free (&tall);
  test_image_free (&nv);
  test_image_free (&ph.rgb);
  g_free (boxed);
  g_free (stretched);
  g_free (model);
}
GST_END_TEST;

/* ---- errors, devices, states ------------------------------------------------------------ */

/* Sets a pipeline with @launch to PAUSED and returns the error text (the
 * state change must fail). */
static gchar *
paused_error (const char *launch)
{
  GError *err = NULL;
  GstElement *p = gst_parse_launch (launch, &err);
  fail_unless (p != NULL, "%s", err ? err->message : "");
  GstBus *bus = gst_element_get_bus (p);
  GstStateChangeReturn r = gst_element_set_state (p, GST_STATE_PAUSED);
  if (r == GST_STATE_CHANGE_ASYNC)
    r = gst_element_get_state (p, NULL, NULL, 10 * GST_SECOND);
  fail_unless_equals_int (r, GST_STATE_CHANGE_FAILURE);
  gchar *text = test_bus_error (bus);
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (p);
  return text;
}

static void
assert_contains (const char *text, const char *needle)
{
  fail_unless (strstr (text, needle) != NULL, "\"%s\" lacks \"%s\"", text, needle);
}

/* Asserts that the pipeline made from the printf-style @launch_fmt fails to
 * go to PAUSED with an error whose text contains @needle and, when not
 * NULL, @needle2. */
static void G_GNUC_PRINTF (3, 4)
assert_paused_error (const char *needle, const char *needle2, const char *launch_fmt, ...)
{
  va_list args;
  va_start (args, launch_fmt);
  gchar *launch = g_strdup_vprintf (launch_fmt, args);
  va_end (args);
  gchar *t = paused_error (launch);
  assert_contains (t, needle);
  if (needle2)
    assert_contains (t, needle2);
  g_free (t);
  g_free (launch);
}

GST_START_TEST (test_model_errors)
{
  assert_paused_error ("no model: set model=path/to/model.xml", NULL,
      "fakesrc ! m2iinfer ! fakesink");
  assert_paused_error ("\"/nonexistent/model.xml\" does not exist", NULL,
      "fakesrc ! m2iinfer model=/nonexistent/model.xml ! fakesink");

  gchar *dir = g_dir_make_tmp ("m2iinfer-XXXXXX", NULL);
  gchar *bad = g_build_filename (dir, "bad.xml", NULL);
  fail_unless (g_file_set_contents (bad, "<?xml version=\"1.0\"?>\n<net name=\"x\" "
          "version=\"11\">\n<layers>\n<layer id=\"0\" name=\"a\" type=\"Parameter\">\n</net>\n",
          -1, NULL));
  assert_paused_error ("cannot use model", "bad.xml", "fakesrc ! m2iinfer model=%s ! fakesink",
      bad);
  g_free (bad);

  gchar *model = fm_model ();
  assert_paused_error ("unknown device \"GPU\": use CPU, M2I, HETERO:M2I,CPU or AUTO", NULL,
      "fakesrc ! m2iinfer model=%s device=GPU ! fakesink", model);
  assert_paused_error ("labels file", "set labels= to a text file",
      "fakesrc ! m2iinfer model=%s labels=/nonexistent/labels.txt ! fakesink", model);
  /* more memory than max-memory allows: refused before it is allocated */
  assert_paused_error ("more than the memory limit of 97.7 KiB", "m2iinfer max-memory",
      "fakesrc ! m2iinfer model=%s device=CPU max-memory=100000 ! fakesink", model);
  assert_paused_error ("memory limit", "max_memory",
      "fakesrc ! m2iinfer model=%s device=HETERO:M2I,CPU max-memory=100000 ! fakesink", model);
  g_free (model);
  remove_dir (dir);
}
GST_END_TEST;

/* Caps that do not fit the model: not-negotiated, and a message naming the
 * model's input and what to give instead. */
GST_START_TEST (test_caps_errors)
{
  gchar *model = fm_model ();
  gchar *launch = g_strdup_printf ("m2iinfer model=%s device=CPU", model);
  static const struct {
    const char *caps, *needle;
  } cases[] = {
    { "other/tensors,format=static,num_tensors=1,types=float32,dimensions=32:32:3:1,"
          "framerate=30/1", "\"input\" f32 [1,3,28,28]" },
    { "other/tensors,format=static,num_tensors=1,types=uint8,dimensions=28:28:3:1,"
          "framerate=30/1", "types=uint8, dimensions=28:28:3:1) do not fit the model's input" },
    { "video/x-raw,format=NV12,width=57,height=31,framerate=30/1", "odd width or height" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    GstHarness *h = harness (launch, cases[i].caps);
    GstBus *bus = test_harness_bus (h);
    GstBuffer *b = gst_buffer_new_allocate (NULL, 16384, NULL);
    fail_unless_equals_int (gst_harness_push (h, b), GST_FLOW_NOT_NEGOTIATED);
    gchar *t = test_bus_error (bus);
    assert_contains (t, cases[i].needle);
    g_free (t);
    teardown_with_bus (h, bus);
  }
  /* mean with two numbers (neither one for all channels nor one each): the
   * element refuses to start instead of running on with the old numbers. */
  gchar *bad_mean = g_strdup_printf ("%s mean=\"<0.5, 0.5>\"", launch);
  GstHarness *h = harness (bad_mean, "video/x-raw,format=NV12,width=56,height=42,framerate=30/1");
  GstBus *bus = test_harness_bus (h);
  fail_unless_equals_int (gst_harness_push (h, gst_buffer_new_allocate (NULL, 56 * 42 * 3 / 2,
              NULL)), GST_FLOW_NOT_NEGOTIATED);
  gchar *t = test_bus_error (bus);
  assert_contains (t, "mean takes 1 number (every channel) or 3 (one per channel)");
  assert_contains (t, "mean=\"<0.5, 0.5>\" was refused");
  g_free (t);
  teardown_with_bus (h, bus);
  g_free (bad_mean);
  /* output=tensors into something that takes video only: the message says
   * that downstream refuses the outputs (the stream once just stopped with
   * "not-negotiated"). */
  gchar *to_video = g_strdup_printf ("%s output=tensors ! capsfilter caps=video/x-raw", launch);
  h = harness (to_video, F32_28_CAPS);
  bus = test_harness_bus (h);
  fail_unless_equals_int (gst_harness_push (h, gst_buffer_new_allocate (NULL, 9408, NULL)),
      GST_FLOW_NOT_NEGOTIATED);
  t = test_bus_error (bus);
  assert_contains (t, "downstream does not accept other/tensors");
  assert_contains (t, "types=(string)float32, dimensions=(string)10:1");
  assert_contains (t, "set output=meta");
  g_free (t);
  teardown_with_bus (h, bus);
  g_free (to_video);
  /* A buffer shorter than its tensor caps: a stream error, no crash. */
  h = harness (launch, F32_28_CAPS);
  bus = test_harness_bus (h);
  fail_unless_equals_int (gst_harness_push (h, gst_buffer_new_allocate (NULL, 100, NULL)),
      GST_FLOW_ERROR);
  t = test_bus_error (bus);
  assert_contains (t, "the input buffer holds 100 bytes, the caps describe 9408");
  g_free (t);
  teardown_with_bus (h, bus);
  g_free (launch);
  g_free (model);
}
GST_END_TEST;

/* Runs torch's 64 inputs through m2iinfer on @device; the probabilities
 * into @prob, the fused text into @fused. */
static void
run_fm_tensors (const char *device, const char *extra, float prob[64][10], gchar **fused)
{
  GBytes *inputs = read_data ("fashion-mnist/first64.input.f32");
  gchar *model = fm_model ();
  gchar *launch = g_strdup_printf ("m2iinfer name=inf model=%s device=%s %s", model, device,
      extra);
  GstHarness *h = harness (launch, F32_28_CAPS);
  const float *in = g_bytes_get_data (inputs, NULL);
  for (guint i = 0; i < 64; i++) {
    GstBuffer *b = gst_buffer_new_memdup (in + i * 2352, 9408);
    fail_unless_equals_int (gst_harness_push (h, b), GST_FLOW_OK);
    GstBuffer *o = gst_harness_pull (h);
    memcpy (prob[i], output_tensor (o, "prob")->data, sizeof prob[i]);
    gst_buffer_unref (o);
  }
  *fused = test_harness_fused (h, "inf");
  gst_harness_teardown (h);
  g_free (launch);
  g_free (model);
  g_bytes_unref (inputs);
}

/* CPU vs split between the device and the CPU (HETERO:M2I,CPU, and AUTO,
 * which picks it): the same top-1 on all 64 images, probabilities close
 * (the device computes in fp16), and torch's labels. The plan is written
 * with split-dir and loads back. */
GST_START_TEST (test_devices_cpu_vs_hetero)
{
  static float cpu[64][10], het[64][10], aut[64][10];
  GBytes *preds = read_data ("fashion-mnist/t10k.torch-pred.u8");
  const guint8 *pred = g_bytes_get_data (preds, NULL);
  gchar *dir = g_dir_make_tmp ("m2iinfer-split-XXXXXX", NULL);
  gchar *extra = g_strdup_printf ("split-dir=%s", dir);
  gchar *fc, *fh, *fa;
  run_fm_tensors ("CPU", "", cpu, &fc);
  run_fm_tensors ("HETERO:M2I,CPU", extra, het, &fh);
  run_fm_tensors ("AUTO", "", aut, &fa);
  assert_contains (fc, "model on CPU");
  assert_contains (fh, "model on HETERO:M2I,CPU: 2 pieces, 1 on the device");
  assert_contains (fa, "model on HETERO:M2I,CPU");
  for (guint i = 0; i < 64; i++) {
    fail_unless_equals_int (argmax (het[i], 10), argmax (cpu[i], 10));
    fail_unless_equals_int (argmax (het[i], 10), pred[i]);
    fail_unless (memcmp (het[i], aut[i], sizeof het[i]) == 0, "image %u: AUTO != HETERO", i);
    for (int c = 0; c < 10; c++)
      fail_unless (fabsf (het[i][c] - cpu[i][c]) <= 1e-2f, "image %u class %d: %g vs %g", i, c,
          het[i][c], cpu[i][c]);
  }
  GError *err = NULL;
  M2iSplitPlan *plan = m2i_split_plan_load (dir, &err);
  fail_unless (plan != NULL, "%s", err ? err->message : "");
  fail_unless_equals_int (m2i_split_plan_get_n_pieces (plan), 2);
  m2i_split_plan_unref (plan);
  g_free (fc);
  g_free (fh);
  g_free (fa);
  g_free (extra);
  remove_dir (dir);
  g_bytes_unref (preds);
}
GST_END_TEST;

/* The PrePostProcessor model split: its head runs as the M2I task m2iinfer
 * plans (the model's own csc, resize and mean/scale), the network on the
 * device; results close to the reference data and the same class. A frame
 * twice the head's size goes through the same head ops (resize from
 * 128x96) and gives the same class. */
GST_START_TEST (test_ppp_head_on_device)
{
  static const char *cases[] = { "t10k-0", "t10k-1", "t10k-2", "t10k-4" };
  gchar *model = ppp_model ();
  gchar *launch = g_strdup_printf ("m2iinfer name=inf model=%s device=HETERO:M2I,CPU", model);
  GstHarness *h = harness (launch, PPP_CAPS);
  GstHarness *h2 = harness (launch, "video/x-raw,format=NV12,width=128,height=96,framerate=30/1");
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    TestImage t, big;
    GBytes *prob = ppp_case (cases[i], &t);
    const guint8 *f = t.mem;
    /* 2x nearest: each Y sample and each UV pair twice across and down */
    test_image_alloc (&big, M2I_FORMAT_SP_NV12_8, 128, 96);
    for (gint y = 0; y < 96; y++)
      for (gint x = 0; x < 128; x++)
        big.img.data[0][y * 128 + x] = f[(y / 2) * 64 + x / 2];
    for (gint y = 0; y < 48; y++)
      for (gint x = 0; x < 64; x++)
        big.img.data[1][y * 128 + 2 * x + 0] = f[3072 + (y / 2) * 64 + (x / 2) * 2],
        big.img.data[1][y * 128 + 2 * x + 1] = f[3072 + (y / 2) * 64 + (x / 2) * 2 + 1];
    fail_unless_equals_int (gst_harness_push (h, test_image_to_buffer (&t, 0)), GST_FLOW_OK);
    fail_unless_equals_int (gst_harness_push (h2, test_image_to_buffer (&big, 0)), GST_FLOW_OK);
    GstBuffer *o = gst_harness_pull (h), *o2 = gst_harness_pull (h2);
    const float *p = output_tensor (o, "prob")->data, *want = g_bytes_get_data (prob, NULL);
    const float *p2 = output_tensor (o2, "prob")->data;
    for (int c = 0; c < 10; c++)
      fail_unless (fabsf (p[c] - want[c]) <= 1e-2f, "%s class %d: %g vs %g", cases[i], c, p[c],
          want[c]);
    fail_unless_equals_int (argmax (p, 10), argmax (want, 10));
    fail_unless_equals_int (argmax (p2, 10), argmax (want, 10));
    gst_buffer_unref (o);
    gst_buffer_unref (o2);
    test_image_free (&t);
    test_image_free (&big);
    g_bytes_unref (prob);
  }
  gchar *fused = test_harness_fused (h, "inf");
  assert_contains (fused, "pre-processing head on the M2I block");
  assert_contains (fused, "inf: csc(RGB) -> convertU8F16 -> resize(28x28");
  g_free (fused);
  gst_harness_teardown (h);
  gst_harness_teardown (h2);
  g_free (launch);
  g_free (model);
}
GST_END_TEST;

/* Device errors: unknown names, M2I alone for a model with an op the device
 * cannot run (split's message), split-dir without splitting. */
GST_START_TEST (test_device_errors)
{
  gchar *model = fm_model ();
  assert_paused_error ("cannot run on the listed devices", "add CPU to the device list",
      "fakesrc ! m2iinfer model=%s device=M2I ! fakesink", model);
  assert_paused_error ("device=CPU does not split: set device=HETERO:M2I,CPU", NULL,
      "fakesrc ! m2iinfer model=%s device=CPU split-dir=/tmp/x ! fakesink", model);
  assert_paused_error ("unknown device \"HETERO:M2I,GPU\"", NULL,
      "fakesrc ! m2iinfer model=%s device=HETERO:M2I,GPU ! fakesink", model);
  /* A split-dir that cannot be made (under a file) with AUTO: an error, not
   * a quiet fall back to the CPU without the plan written. */
  gchar *dir = g_dir_make_tmp ("m2iinfer-XXXXXX", NULL);
  gchar *file = g_build_filename (dir, "file", NULL);
  fail_unless (g_file_set_contents (file, "", 0, NULL));
  assert_paused_error ("split-dir=", "file/plan: cannot create the folder",
      "fakesrc ! m2iinfer model=%s split-dir=%s/plan ! fakesink", model, file);
  g_free (file);
  remove_dir (dir);
  g_free (model);
}
GST_END_TEST;

/* NULL -> PLAYING -> NULL twice (the model is loaded and freed each time),
 * EOS passes. */
GST_START_TEST (test_state_changes)
{
  gchar *model = fm_model ();
  gchar *launch = g_strdup_printf ("videotestsrc num-buffers=3 ! "
      "video/x-raw,format=I420,width=56,height=42 ! m2iinfer model=%s " FM_NORM " ! fakesink",
      model);
  for (int round = 0; round < 2; round++) {
    GstElement *p = gst_parse_launch (launch, NULL);
    GstBus *bus = gst_element_get_bus (p);
    fail_unless (gst_element_set_state (p, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
    guint n = 0;
    for (;;) {
      /* (popping with a filter would drop the element messages) */
      GstMessage *m = gst_bus_timed_pop_filtered (bus, 30 * GST_SECOND,
          GST_MESSAGE_EOS | GST_MESSAGE_ERROR | GST_MESSAGE_ELEMENT);
      fail_unless (m != NULL && GST_MESSAGE_TYPE (m) != GST_MESSAGE_ERROR);
      GstMessageType type = GST_MESSAGE_TYPE (m);
      if (type == GST_MESSAGE_ELEMENT)
        n += gst_structure_has_name (gst_message_get_structure (m), "m2iinfer");
      gst_message_unref (m);
      if (type == GST_MESSAGE_EOS)
        break;
    }
    fail_unless_equals_int (n, 3);
    gst_element_set_state (p, GST_STATE_NULL);
    gst_object_unref (bus);
    gst_object_unref (p);
  }
  g_free (launch);
  g_free (model);
}
GST_END_TEST;

GST_START_TEST (test_documentation_complete)
{
  guint own = test_assert_documented ("m2iinfer");
  GstElement *el = gst_element_factory_make ("m2iinfer", NULL);
  fail_unless (el != NULL);
  /* the properties of the brief, each present */
  for (const char *const *name = (const char *const[]) { "model", "device", "labels",
          "threshold", "top-k", "inference-interval", "n-threads", "split-dir", "output",
          "profile", "fusion", "fused", "channel-order", "mean", "std", "input-scale",
          "resize-mode", "post-messages", "max-memory", NULL }; *name; name++)
    fail_unless (g_object_class_find_property (G_OBJECT_GET_CLASS (el), *name) != NULL,
        "no property %s", *name);
  fail_unless_equals_int (own, 19);
  gst_object_unref (el);
}
GST_END_TEST;

static Suite *
m2i_infer_suite (void)
{
  Suite *s = suite_create ("m2i-infer");
  TCase *tc = tcase_create ("general");
  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_tensor_input_known_labels);
  tcase_add_test (tc, test_fused_unfused_identical);
  tcase_add_test (tc, test_fused_vs_reference);
  tcase_add_test (tc, test_two_tensor_inputs_logits);
  tcase_add_test (tc, test_output_tensors_softmax);
  tcase_add_test (tc, test_inference_interval);
  tcase_add_test (tc, test_ppp_nv12_head);
  tcase_add_test (tc, test_detection_regions);
  tcase_add_test (tc, test_detection_letterbox);
  tcase_add_test (tc, test_model_errors);
  tcase_add_test (tc, test_caps_errors);
  tcase_add_test (tc, test_devices_cpu_vs_hetero);
  tcase_add_test (tc, test_ppp_head_on_device);
  tcase_add_test (tc, test_device_errors);
  tcase_add_test (tc, test_state_changes);
  tcase_add_test (tc, test_documentation_complete);
  return s;
}

GST_CHECK_MAIN (m2i_infer);
