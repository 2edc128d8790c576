/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-gst-infer-errors.c — m2iinfer (GstHarness): error messages (model,
 * caps, devices), state changes and the gst-inspect documentation.
 *
 * Expected values come from outside the element: torch's outputs and
 * predictions (tests/data/fashion-mnist), reference data (tests/data/ppp),
 * the IR runtime run directly on the input the core's reference path
 * makes, and arithmetic written here.
 */
#include "gst-infer-test-util.h"

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
    GstBus *bus;
    GstHarness *h = harness_with_bus (launch, cases[i].caps, &bus);
    GstBuffer *b = gst_buffer_new_allocate (NULL, 16384, NULL);
    fail_unless_equals_int (gst_harness_push (h, b), GST_FLOW_NOT_NEGOTIATED);
    gchar *t = test_bus_error (bus);
    assert_contains (t, cases[i].needle);
    g_free (t);
    teardown_with_bus (h, bus);
  }
  /* in a pipeline: said once, not at every retry of the source */
  gchar *odd = g_strdup_printf ("videotestsrc num-buffers=3 ! video/x-raw,format=NV12,width=57,"
      "height=31 ! m2iinfer name=i model=%s device=CPU ! fakesink", model);
  fail_unless_equals_int (test_pipeline_refusals (odd, "i", "odd width or height"), 1);
  g_free (odd);
  /* mean with two numbers (neither one for all channels nor one each): the
   * element refuses to start instead of running on with the old numbers. */
  gchar *bad_mean = g_strdup_printf ("%s mean=\"<0.5, 0.5>\"", launch);
  GstBus *bus;
  GstHarness *h = harness_with_bus (bad_mean,
      "video/x-raw,format=NV12,width=56,height=42,framerate=30/1", &bus);
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
  h = harness_with_bus (to_video, F32_28_CAPS, &bus);
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
          "resize-mode", "post-messages", "model-type", "iou-threshold", "class-agnostic-nms",
          "max-detections", "resize-type", "pad-value", "extra-inputs", "inference-region",
          "object-class", "reclassify-interval", "model-instance-id", "nireq", "batch-size",
          "batch-timeout", "no-block", "skipped", "max-memory", NULL }; *name; name++)
    fail_unless (g_object_class_find_property (G_OBJECT_GET_CLASS (el), *name) != NULL,
        "no property %s", *name);
  fail_unless_equals_int (own, 35);
  gst_object_unref (el);
}
GST_END_TEST;

static Suite *
m2i_infer_errors_suite (void)
{
  Suite *s = suite_create ("m2i-infer-errors");
  TCase *tc = tcase_create ("general");
  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_model_errors);
  tcase_add_test (tc, test_caps_errors);
  tcase_add_test (tc, test_device_errors);
  tcase_add_test (tc, test_state_changes);
  tcase_add_test (tc, test_documentation_complete);
  return s;
}

GST_CHECK_MAIN (m2i_infer_errors);
