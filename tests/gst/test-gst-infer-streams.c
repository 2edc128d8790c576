/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-gst-infer-streams.c — m2iinfer with many streams: a shared model
 * instance loaded once across two pipelines; the same metas on the same
 * buffers in the same order with nireq 1 and 4 and with batch-size 1 and 4;
 * EOS and flushes with frames in flight; no-block passing frames without
 * inference; an error in one stream leaving another sharing its batches
 * alone; latency; state changes while frames are in flight.
 *
 * The detector is the tiny SSD the tests write (test-tiny-ssd.h) in batch 1
 * and 4 with the same weights. The reference for every frame is the
 * synchronous element (nireq 1, batch-size 1): its results on this model
 * are the session's, tested against the runtime elsewhere
 * (test-gst-infer-detect.c, tests/infer); what is tested here is that
 * asynchronous and batched inference changes none of them.
 */
#include "gst-infer-test-util.h"

#include <m2i-core/infer/m2i-infer-queue.h>
#include <test-tiny-ssd.h>

#define W 32
#define H 24
#define N 12
#define CAPS "video/x-raw,format=NV12,width=32,height=24,framerate=30/1"

typedef struct {
  gchar *b1, *b4;                 /* the tiny detector in batch 1 and 4 */
} Models;

static void reference (const Models *m, gchar **ref);

/* The two models; with @ref, what the synchronous element gives each frame. */
static void
models_open (Models *m, gchar **ref)
{
  m->b1 = test_tiny_ssd_write (1);
  m->b4 = test_tiny_ssd_write (4);
  if (ref)
    reference (m, ref);
}

static void
models_close (Models *m)
{
  test_remove_model_files (m->b1);
  test_remove_model_files (m->b4);
}

static GstBuffer *
frame (guint i)
{
  TestImage t;
  test_tiny_ssd_frame (&t, W, H, i);
  GstBuffer *b = test_image_to_buffer (&t, 0);
  test_image_free (&t);
  GST_BUFFER_PTS (b) = gst_util_uint64_scale (i, GST_SECOND, 30);
  GST_BUFFER_DURATION (b) = gst_util_uint64_scale (1, GST_SECOND, 30);
  return b;
}

/* Everything the metas of @b say, as text: its timestamp, each region
 * (type, rectangle, structures) and each output tensor (name, dims, a
 * checksum of its data). */
static gchar *
describe (GstBuffer *b)
{
  GString *s = g_string_new (NULL);
  g_string_append_printf (s, "pts %" GST_TIME_FORMAT "\n", GST_TIME_ARGS (GST_BUFFER_PTS (b)));
  for (guint i = 0; i < n_rois (b); i++) {
    GstVideoRegionOfInterestMeta *r = nth_roi (b, i);
    g_string_append_printf (s, "roi %s %u %u %u %u", g_quark_to_string (r->roi_type), r->x,
        r->y, r->w, r->h);
    for (GList *l = r->params; l; l = l->next) {
      gchar *st = gst_structure_to_string (l->data);
      g_string_append_printf (s, " %s", st);
      g_free (st);
    }
    g_string_append_c (s, '\n');
  }
  GstM2iTensorMeta *m = gst_buffer_get_m2i_tensor_meta (b);
  for (guint i = 0; m && i < m->n_tensors; i++) {
    const GstM2iTensor *t = &m->tensors[i];
    gchar *sum = g_compute_checksum_for_data (G_CHECKSUM_SHA1, t->data, t->size);
    g_string_append_printf (s, "tensor %s [", t->name);
    for (guint d = 0; d < t->n_dims; d++)
      g_string_append_printf (s, "%s%" G_GINT64_FORMAT, d ? "," : "", t->dims[d]);
    g_string_append_printf (s, "] %s\n", sum);
    g_free (sum);
  }
  return g_string_free (s, FALSE);
}

static gchar *
launch (const char *model, const char *extra)
{
  return g_strdup_printf ("m2iinfer name=inf model=%s device=CPU channel-order=bgr threshold=0.3 "
      "post-messages=false %s", model, extra);
}

/* The N frames through a harness of @model with @extra properties, EOS
 * after them; what each buffer out carries, in order. */
static void
run (const char *model, const char *extra, gchar **out)
{
  gchar *l = launch (model, extra);
  GstHarness *h = harness (l, CAPS);
  for (guint i = 0; i < N; i++)
    fail_unless_equals_int (gst_harness_push (h, frame (i)), GST_FLOW_OK);
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  for (guint i = 0; i < N; i++) {
    GstBuffer *b = gst_harness_pull (h);
    fail_unless (b != NULL);
    out[i] = describe (b);
    gst_buffer_unref (b);
  }
  fail_unless (gst_harness_try_pull (h) == NULL);
  gst_harness_teardown (h);
  g_free (l);
}

static void
reference (const Models *m, gchar **ref)
{
  run (m->b1, "", ref);
  /* a test of something: frames with detections, not all alike */
  guint with = 0;
  for (guint i = 0; i < N; i++)
    with += strstr (ref[i], "roi ") != NULL;
  fail_unless (with >= N / 2, "only %u frames with detections", with);
  fail_unless (strcmp (strchr (ref[0], '\n'), strchr (ref[1], '\n')) != 0);
}

/* Fails (the texts on stderr: check's message is short) when buffer @i's
 * description @got is not @want. */
static void
assert_desc (const char *got, const char *want, const char *what, guint i)
{
  if (!strcmp (got, want))
    return;
  g_printerr ("%s, buffer %u:\n%s\nthe synchronous element's:\n%s\n", what, i, got, want);
  fail ("%s: buffer %u has other metas than the synchronous element's (see stderr)", what, i);
}

static void
assert_same (gchar **got, gchar **ref, const char *what)
{
  for (guint i = 0; i < N; i++)
    assert_desc (got[i], ref[i], what, i);
}

static void
free_strings (gchar **s, guint n)
{
  for (guint i = 0; i < n; i++)
    g_free (s[i]);
}

/* nireq 4; batch-size 4 with nireq 0 (4 in flight), 8, and 2 (batches
 * that run at the timeout): the synchronous element's metas, buffer for
 * buffer. */
GST_START_TEST (test_nireq_and_batch_identical)
{
  Models m;
  gchar *ref[N], *got[N];
  models_open (&m, ref);
  run (m.b1, "nireq=4", got);
  assert_same (got, ref, "nireq=4");
  free_strings (got, N);
  const char *batched[] = { "batch-size=4", "batch-size=4 nireq=8",
    "batch-size=4 nireq=2 batch-timeout=1" };
  for (guint k = 0; k < G_N_ELEMENTS (batched); k++) {
    run (m.b4, batched[k], got);
    assert_same (got, ref, batched[k]);
    free_strings (got, N);
  }
  free_strings (ref, N);
  models_close (&m);
}
GST_END_TEST;

static void
wait_eos (GstElement *p)
{
  GstBus *bus = gst_element_get_bus (p);
  GstMessage *msg = gst_bus_timed_pop_filtered (bus, 60 * GST_SECOND,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless (msg != NULL, "no EOS within 60 s");
  fail_unless_equals_int (GST_MESSAGE_TYPE (msg), GST_MESSAGE_EOS);
  gst_message_unref (msg);
  gst_object_unref (bus);
}

/* Counts the buffers reaching the sink in @data[0], those with results in
 * @data[1]. */
static void
count_metas (GstElement *sink, GstBuffer *buf, GstPad *pad, gpointer data)
{
  g_atomic_int_inc ((gint *) data);
  if (gst_buffer_get_m2i_tensor_meta (buf))
    g_atomic_int_inc ((gint *) data + 1);
}

static GstElement *
pipeline (const char *model, const char *extra, guint n, gint with_meta[2])
{
  gchar *desc = g_strdup_printf ("videotestsrc num-buffers=%u pattern=ball ! " CAPS " ! "
      "m2iinfer model=%s device=CPU channel-order=bgr post-messages=false %s ! "
      "fakesink name=sink signal-handoffs=true sync=false", n, model, extra);
  GError *err = NULL;
  GstElement *p = gst_parse_launch (desc, &err);
  fail_unless (p != NULL, "%s", err ? err->message : "");
  g_free (desc);
  GstElement *sink = gst_bin_get_by_name (GST_BIN (p), "sink");
  g_signal_connect (sink, "handoff", G_CALLBACK (count_metas), with_meta);
  gst_object_unref (sink);
  return p;
}

/* Two pipelines naming one model-instance-id (one asynchronous, one
 * synchronous) load the model once and both run every frame; a third
 * asking for another device under the same id is refused, naming the
 * setting and both values; once they are gone the id loads anew. */
GST_START_TEST (test_shared_instance_loaded_once)
{
  Models m;
  models_open (&m, NULL);
  guint loads = m2i_infer_model_get_n_loaded ();
  gint with_a[2] = { 0 }, with_b[2] = { 0 };
  GstElement *a = pipeline (m.b1, "model-instance-id=shared nireq=2", 20, with_a);
  GstElement *b = pipeline (m.b1, "model-instance-id=shared", 20, with_b);
  fail_unless (gst_element_set_state (a, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
  fail_unless (gst_element_set_state (b, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
  wait_eos (a);
  wait_eos (b);
  fail_unless_equals_int (m2i_infer_model_get_n_loaded (), loads + 1);
  fail_unless_equals_int (g_atomic_int_get (&with_a[1]), 20);
  fail_unless_equals_int (g_atomic_int_get (&with_b[1]), 20);
  gchar *l = g_strdup_printf ("videotestsrc ! " CAPS " ! m2iinfer model=%s device=AUTO "
      "model-instance-id=shared ! fakesink", m.b1);
  gchar *err = paused_error (l);
  assert_contains (err, "model-instance-id=shared is loaded with device=CPU, this one asks "
      "for device=AUTO");
  g_free (err);
  g_free (l);
  gst_element_set_state (a, GST_STATE_NULL);
  gst_element_set_state (b, GST_STATE_NULL);
  gst_object_unref (a);
  gst_object_unref (b);
  gint with_c[2] = { 0 };
  GstElement *c = pipeline (m.b1, "model-instance-id=shared", 2, with_c);
  gst_element_set_state (c, GST_STATE_PLAYING);
  wait_eos (c);
  gst_element_set_state (c, GST_STATE_NULL);
  gst_object_unref (c);
  fail_unless_equals_int (m2i_infer_model_get_n_loaded (), loads + 2);
  models_close (&m);
}
GST_END_TEST;

/* EOS while 3 frames wait for a batch that would fill only in 10 s: they
 * run at once and leave, with their results, before EOS. A flush with 3
 * frames waiting returns at once and drops them; frames after it run. */
GST_START_TEST (test_eos_and_flush_in_flight)
{
  Models m;
  gchar *ref[N];
  models_open (&m, ref);
  gchar *l = launch (m.b4, "batch-size=4 batch-timeout=10000");
  GstHarness *h = harness (l, CAPS);
  gint64 t0 = g_get_monotonic_time ();
  for (guint i = 0; i < 3; i++)
    fail_unless_equals_int (gst_harness_push (h, frame (i)), GST_FLOW_OK);
  fail_unless (gst_harness_try_pull (h) == NULL);
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  for (guint i = 0; i < 3; i++) {
    GstBuffer *b = gst_harness_pull (h);
    gchar *d = describe (b);
    assert_desc (d, ref[i], "after EOS", i);
    g_free (d);
    gst_buffer_unref (b);
  }
  GstEvent *ev;
  gboolean eos = FALSE;
  while ((ev = gst_harness_try_pull_event (h))) {
    eos |= GST_EVENT_TYPE (ev) == GST_EVENT_EOS;
    gst_event_unref (ev);
  }
  fail_unless (eos);
  fail_unless (g_get_monotonic_time () - t0 < 5 * G_USEC_PER_SEC);
  gst_harness_teardown (h);

  h = harness (l, CAPS);
  for (guint i = 0; i < 3; i++)
    fail_unless_equals_int (gst_harness_push (h, frame (i)), GST_FLOW_OK);
  t0 = g_get_monotonic_time ();
  fail_unless (gst_harness_push_event (h, gst_event_new_flush_start ()));
  fail_unless (gst_harness_push_event (h, gst_event_new_flush_stop (TRUE)));
  fail_unless (g_get_monotonic_time () - t0 < 5 * G_USEC_PER_SEC);
  GstSegment seg;
  gst_segment_init (&seg, GST_FORMAT_TIME);
  fail_unless (gst_harness_push_event (h, gst_event_new_segment (&seg)));
  fail_unless (gst_harness_try_pull (h) == NULL);
  for (guint i = 4; i < 8; i++)
    fail_unless_equals_int (gst_harness_push (h, frame (i)), GST_FLOW_OK);
  for (guint i = 4; i < 8; i++) {
    GstBuffer *b = gst_harness_pull (h);
    gchar *d = describe (b);
    assert_desc (d, ref[i], "after the flush", i);
    g_free (d);
    gst_buffer_unref (b);
  }
  gst_harness_teardown (h);
  g_free (l);
  free_strings (ref, N);
  models_close (&m);
}
GST_END_TEST;

/* Flushing seeks on a running pipeline with 4 requests in flight (back to
 * the start each time: videotestsrc's num-buffers counts on, so the stream
 * ends after 200 buffers in all): no deadlock, EOS, and every buffer that
 * reached the sink was inferred. */
GST_START_TEST (test_flushing_seek)
{
  Models m;
  models_open (&m, NULL);
  gint with[2] = { 0 };
  GstElement *p = pipeline (m.b1, "nireq=4", 200, with);
  fail_unless (gst_element_set_state (p, GST_STATE_PAUSED) != GST_STATE_CHANGE_FAILURE);
  fail_unless_equals_int (gst_element_get_state (p, NULL, NULL, 30 * GST_SECOND),
      GST_STATE_CHANGE_SUCCESS);
  gst_element_set_state (p, GST_STATE_PLAYING);
  for (gint k = 0; k < 3; k++) {
    while (g_atomic_int_get (&with[0]) < 20 * (k + 1))
      g_usleep (1000);
    fail_unless (gst_element_seek_simple (p, GST_FORMAT_TIME, GST_SEEK_FLAG_FLUSH, 0));
  }
  wait_eos (p);
  fail_unless (g_atomic_int_get (&with[0]) >= 60);
  fail_unless_equals_int (g_atomic_int_get (&with[1]), g_atomic_int_get (&with[0]));
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (p);
  models_close (&m);
}
GST_END_TEST;

/* no-block with 2 requests and a batch that waits 10 s: frames 0 and 1 are
 * taken, 2 to 5 pass on at once without inference (counted in "skipped");
 * after EOS all six leave in order, 0 and 1 with their results. */
GST_START_TEST (test_no_block)
{
  Models m;
  gchar *ref[N];
  models_open (&m, ref);
  gchar *l = launch (m.b4, "batch-size=4 nireq=2 batch-timeout=10000 no-block=true");
  GstHarness *h = harness (l, CAPS);
  for (guint i = 0; i < 6; i++)
    fail_unless_equals_int (gst_harness_push (h, frame (i)), GST_FLOW_OK);
  guint64 skipped = 0;
  GstElement *inf = gst_bin_get_by_name (GST_BIN (h->element), "inf");
  inf = inf ? inf : gst_object_ref (h->element);
  g_object_get (inf, "skipped", &skipped, NULL);
  fail_unless_equals_int (skipped, 4);
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  for (guint i = 0; i < 6; i++) {
    GstBuffer *b = gst_harness_pull (h);
    fail_unless_equals_uint64 (GST_BUFFER_PTS (b), gst_util_uint64_scale (i, GST_SECOND, 30));
    gchar *d = describe (b);
    if (i < 2)
      assert_desc (d, ref[i], "no-block", i);
    else
      fail_unless (gst_buffer_get_m2i_tensor_meta (b) == NULL && n_rois (b) == 0,
          "buffer %u passed on has results", i);
    g_free (d);
    gst_buffer_unref (b);
  }
  gst_object_unref (inf);
  gst_harness_teardown (h);
  g_free (l);
  free_strings (ref, N);
  models_close (&m);
}
GST_END_TEST;

/* Two streams share a batch-4 instance; one gets a buffer shorter than its
 * caps: it fails with the message, the other keeps getting every frame's
 * results. */
GST_START_TEST (test_error_in_one_stream)
{
  Models m;
  gchar *ref[N];
  models_open (&m, ref);
  gchar *l = launch (m.b4, "model-instance-id=err batch-size=4 batch-timeout=5");
  GstHarness *good = harness (l, CAPS), *bad = harness (l, CAPS);
  GstBus *bus = test_harness_bus (bad);
  GstFlowReturn bad_ret = GST_FLOW_OK;
  for (guint i = 0; i < N; i++) {
    fail_unless_equals_int (gst_harness_push (good, frame (i)), GST_FLOW_OK);
    if (bad_ret == GST_FLOW_OK)
      bad_ret = gst_harness_push (bad, i == 3 ? gst_buffer_new_allocate (NULL, 100, NULL)
          : frame (i));
  }
  fail_unless_equals_int (bad_ret, GST_FLOW_ERROR);
  gchar *err = test_bus_error (bus);
  assert_contains (err, "holds 100 bytes");
  g_free (err);
  fail_unless (gst_harness_push_event (good, gst_event_new_eos ()));
  for (guint i = 0; i < N; i++) {
    GstBuffer *b = gst_harness_pull (good);
    gchar *d = describe (b);
    assert_desc (d, ref[i], "the stream without error", i);
    g_free (d);
    gst_buffer_unref (b);
  }
  teardown_with_bus (bad, bus);
  gst_harness_teardown (good);
  g_free (l);
  free_strings (ref, N);
  models_close (&m);
}
GST_END_TEST;

/* The latency query adds the batch timeout (and, once known, the time of
 * an inference) to upstream's. */
GST_START_TEST (test_latency)
{
  Models m;
  models_open (&m, NULL);
  gchar *l = launch (m.b4, "batch-size=4 batch-timeout=50");
  GstHarness *h = harness (l, CAPS);
  gst_harness_set_upstream_latency (h, 10 * GST_MSECOND);
  GstClockTime lat = gst_harness_query_latency (h);
  fail_unless (lat >= 60 * GST_MSECOND && lat < 70 * GST_MSECOND, "latency %" GST_TIME_FORMAT,
      GST_TIME_ARGS (lat));
  for (guint i = 0; i < 4; i++)
    fail_unless_equals_int (gst_harness_push (h, frame (i)), GST_FLOW_OK);
  for (guint i = 0; i < 4; i++)
    gst_buffer_unref (gst_harness_pull (h));
  fail_unless (gst_harness_query_latency (h) > 60 * GST_MSECOND);
  gst_harness_teardown (h);
  g_free (l);
  models_close (&m);
}
GST_END_TEST;

/* PLAYING -> READY -> PLAYING -> NULL while frames are in flight, three
 * times: no deadlock, no leak (valgrind/ASan runs), EOS at the end. */
GST_START_TEST (test_state_changes)
{
  Models m;
  models_open (&m, NULL);
  for (gint k = 0; k < 3; k++) {
    gint with[2] = { 0 };
    GstElement *p = pipeline (m.b4, "batch-size=4 nireq=8 batch-timeout=2", 40, with);
    gst_element_set_state (p, GST_STATE_PLAYING);
    while (g_atomic_int_get (&with[1]) < 4)
      g_usleep (500);
    fail_unless (gst_element_set_state (p, GST_STATE_READY) == GST_STATE_CHANGE_SUCCESS);
    /* an EOS of the first run (fast enough to end) is not the second's */
    GstBus *bus = gst_element_get_bus (p);
    gst_bus_set_flushing (bus, TRUE);
    gst_bus_set_flushing (bus, FALSE);
    gst_object_unref (bus);
    with[0] = with[1] = 0;
    gst_element_set_state (p, GST_STATE_PLAYING);
    wait_eos (p);
    fail_unless_equals_int (g_atomic_int_get (&with[0]), 40);
    fail_unless_equals_int (g_atomic_int_get (&with[1]), 40);
    gst_element_set_state (p, GST_STATE_NULL);
    gst_object_unref (p);
  }
  models_close (&m);
}
GST_END_TEST;

static Suite *
m2i_infer_streams_suite (void)
{
  Suite *s = suite_create ("m2i-infer-streams");
  TCase *tc = tcase_create ("general");
  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_nireq_and_batch_identical);
  tcase_add_test (tc, test_shared_instance_loaded_once);
  tcase_add_test (tc, test_eos_and_flush_in_flight);
  tcase_add_test (tc, test_flushing_seek);
  tcase_add_test (tc, test_no_block);
  tcase_add_test (tc, test_error_in_one_stream);
  tcase_add_test (tc, test_latency);
  tcase_add_test (tc, test_state_changes);
  return s;
}

GST_CHECK_MAIN (m2i_infer_streams);
