/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-gst-infer-tensors.c — m2iinfer (GstHarness): other/tensors in and
 * out: torch's exact inputs give torch's probabilities and labels; two
 * tensor inputs (one fp16) into a tiny model whose logits are softmax'd
 * here; a model ending in SoftMax with output=tensors; inference-interval
 * and the bus messages.
 *
 * Expected values come from outside the element: torch's outputs and
 * predictions (tests/data/fashion-mnist), reference data (tests/data/ppp),
 * the IR runtime run directly on the input the core's reference path
 * makes, and arithmetic written here.
 */
#include "gst-infer-test-util.h"

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

/* torch's exact model inputs as other/tensors: the probabilities equal
 * torch's within 1e-4 and the IR runtime's bit for bit; labels are torch's
 * predictions. */
GST_START_TEST (test_tensor_input_known_labels)
{
  GBytes *inputs = test_read_data ("fashion-mnist/first64.input.f32");
  GBytes *probs = test_read_data ("fashion-mnist/first64.prob.f32");
  GBytes *preds = test_read_data ("fashion-mnist/t10k.torch-pred.u8");
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
    guint best = test_argmax (p, 10);
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

GST_START_TEST (test_inference_interval)
{
  GBytes *inputs = test_read_data ("fashion-mnist/first64.input.f32");
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

static Suite *
m2i_infer_tensors_suite (void)
{
  Suite *s = suite_create ("m2i-infer-tensors");
  TCase *tc = tcase_create ("general");
  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_tensor_input_known_labels);
  tcase_add_test (tc, test_two_tensor_inputs_logits);
  tcase_add_test (tc, test_output_tensors_softmax);
  tcase_add_test (tc, test_inference_interval);
  return s;
}

GST_CHECK_MAIN (m2i_infer_tensors);
