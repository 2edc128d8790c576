/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-infer-queue.c — many streams on one model without GStreamer: shared
 * instances (loaded once, settings that must agree), asynchronous queues
 * (results equal to the synchronous session's, in submission order, a
 * non-blocking submit that reports busy), batches (a model of batch 4 gives
 * each frame the detections the batch-1 model gives it, frames of two
 * queues gathered into one inference), a synchronous run through the device
 * queue, flushing and an error in one frame.
 *
 * The reference for every frame is the synchronous session
 * (m2i_infer_session_run) on the same model with batch 1, itself tested
 * against the runtime and torch (test-infer-session.c, -detect.c).
 */
#include "infer-test-util.h"

#include <m2i-core/infer/m2i-infer-queue.h>
#include <m2i-core/m2i/m2i-device.h>
#include <test-tiny-ssd.h>

#define N_FRAMES 12
#define W 32
#define H 24

static void
make_frame (TestImage *t, guint i)
{
  test_tiny_ssd_frame (t, W, H, i);
}

static void
bgr_preprocess (M2iInferPreprocess *pp)
{
  m2i_infer_preprocess_init (pp);
  pp->channel_order = M2I_ORDER_BGR;
}

/* What a result says, copied out of the session. */
typedef struct {
  guint n;
  M2iInferDetection d[16];
  gboolean failed;
  GError *error;
} Got;

static void
got_copy (Got *g, const M2iInferResult *r)
{
  g->n = MIN (r->n_detections, G_N_ELEMENTS (g->d));
  memcpy (g->d, r->detections, g->n * sizeof (M2iInferDetection));
}

static void
assert_same (const Got *a, const Got *b, guint frame)
{
  if (a->n != b->n)
    g_error ("frame %u: %u detections, the reference has %u", frame, a->n, b->n);
  for (guint k = 0; k < a->n; k++) {
    const M2iInferDetection *x = &a->d[k], *y = &b->d[k];
    if (x->class_id != y->class_id || x->confidence != y->confidence || x->x_min != y->x_min
        || x->y_min != y->y_min || x->x_max != y->x_max || x->y_max != y->y_max)
      g_error ("frame %u detection %u: class %d %.7g (%g,%g)-(%g,%g), the reference class "
          "%d %.7g (%g,%g)-(%g,%g)", frame, k, x->class_id, x->confidence, x->x_min,
          x->y_min, x->x_max, x->y_max, y->class_id, y->confidence, y->x_min, y->y_min,
          y->x_max, y->y_max);
  }
}

/* The reference: every frame through the synchronous session of batch 1. */
static void
reference (Got *ref)
{
  gchar *xml = test_tiny_ssd_write (1);
  M2iInferSession *s = open_session (xml, "CPU", NULL, NULL);
  memset (ref, 0, N_FRAMES * sizeof *ref);
  M2iInferPreprocess pp;
  bgr_preprocess (&pp);
  GError *err = NULL;
  g_assert_true (m2i_infer_session_set_preprocess (s, &pp, &err));
  guint total = 0;
  for (guint i = 0; i < N_FRAMES; i++) {
    TestImage t;
    make_frame (&t, i);
    g_assert_true (m2i_infer_session_run (s, &t.img, NULL, NULL, &err));
    g_assert_no_error (err);
    got_copy (&ref[i], m2i_infer_session_get_result (s));
    total += ref[i].n;
    test_image_free (&t);
  }
  /* a test of something: frames with objects, not all alike */
  g_assert_cmpuint (total, >, N_FRAMES);
  g_assert_true (ref[0].n != ref[1].n || ref[0].d[0].x_min != ref[1].d[0].x_min);
  m2i_infer_session_free (s);
  test_remove_model_files (xml);
}

/* A stream: its frames, what came back, in which order. */
typedef struct {
  TestImage frames[N_FRAMES];
  Got got[N_FRAMES];
  guint order[N_FRAMES];
  guint n_back;
  GMutex lock;
} Stream;

static void
stream_init (Stream *st)
{
  memset (st, 0, sizeof *st);
  g_mutex_init (&st->lock);
  for (guint i = 0; i < N_FRAMES; i++)
    make_frame (&st->frames[i], i);
}

static void
stream_clear (Stream *st)
{
  for (guint i = 0; i < N_FRAMES; i++) {
    test_image_free (&st->frames[i]);
    g_clear_error (&st->got[i].error);
  }
  g_mutex_clear (&st->lock);
}

static void
on_done (M2iInferSession *s, const GError *error, gpointer frame_data, gpointer user_data)
{
  Stream *st = user_data;
  guint i = GPOINTER_TO_UINT (frame_data);
  g_mutex_lock (&st->lock);
  st->order[st->n_back++] = i;
  st->got[i].failed = error != NULL;
  if (error)
    st->got[i].error = g_error_copy (error);
  else
    got_copy (&st->got[i], m2i_infer_session_get_result (s));
  g_mutex_unlock (&st->lock);
}

static M2iInferQueue *
open_queue (M2iInferModel *m, guint n_requests, gint64 timeout_us, Stream *st)
{
  M2iInferQueueOptions qo;
  m2i_infer_queue_options_init (&qo);
  qo.n_requests = n_requests;
  qo.batch_timeout_us = timeout_us;
  GError *err = NULL;
  M2iInferQueue *q = m2i_infer_queue_new (m, &qo, on_done, st, &err);
  g_assert_no_error (err);
  M2iInferPreprocess pp;
  bgr_preprocess (&pp);
  g_assert_true (m2i_infer_queue_set_preprocess (q, &pp, &err));
  return q;
}

static M2iInferModel *
load (const char *id, const char *xml, guint batch)
{
  M2iInferModelOptions mo;
  m2i_infer_model_options_init (&mo);
  mo.device = "CPU";
  mo.batch = batch;
  GError *err = NULL;
  M2iInferModel *m = m2i_infer_model_acquire (id, xml, &mo, &err);
  g_assert_no_error (err);
  return m;
}

static void
assert_stream (Stream *st, const Got *ref)
{
  g_assert_cmpuint (st->n_back, ==, N_FRAMES);
  for (guint i = 0; i < N_FRAMES; i++) {
    g_assert_cmpuint (st->order[i], ==, i);
    g_assert_no_error (st->got[i].error);
    assert_same (&st->got[i], &ref[i], i);
  }
}

/* Batch 1 with 4 requests in flight, and batch 4 with 1 to 8 requests:
 * each frame's detections are the synchronous session's, in order. */
static void
test_queue_equals_session (void)
{
  Got ref[N_FRAMES];
  reference (ref);
  const guint batches[] = { 1, 4 }, nireqs[] = { 1, 4, 8 };
  for (guint bi = 0; bi < G_N_ELEMENTS (batches); bi++) {
    gchar *xml = test_tiny_ssd_write (batches[bi]);
    M2iInferModel *m = load (NULL, xml, batches[bi]);
    g_assert_cmpint (m2i_infer_model_get_batch (m), ==, batches[bi]);
    for (guint ni = 0; ni < G_N_ELEMENTS (nireqs); ni++) {
      Stream st;
      stream_init (&st);
      M2iInferQueue *q = open_queue (m, nireqs[ni], 2000, &st);
      for (guint i = 0; i < N_FRAMES; i++)
        g_assert_cmpint (m2i_infer_queue_submit (q, &st.frames[i].img, NULL, NULL, NULL,
                GUINT_TO_POINTER (i), TRUE), ==, M2I_INFER_SUBMITTED);
      m2i_infer_queue_drain (q);
      g_assert_cmpuint (m2i_infer_queue_get_n_in_flight (q), ==, 0);
      assert_stream (&st, ref);
      m2i_infer_queue_free (q);
      stream_clear (&st);
    }
    m2i_infer_model_unref (m);
    test_remove_model_files (xml);
  }
}

/* m2i_infer_session_run_queued: the session's results, each frame a job
 * of the device queue. */
static void
test_run_queued (void)
{
  Got ref[N_FRAMES], got;
  reference (ref);
  gchar *xml = test_tiny_ssd_write (1);
  M2iInferSession *s = open_session (xml, "CPU", NULL, NULL);
  M2iInferPreprocess pp;
  bgr_preprocess (&pp);
  GError *err = NULL;
  g_assert_true (m2i_infer_session_set_preprocess (s, &pp, &err));
  M2iDevice *dev = m2i_device_get_default ();
  M2iDeviceCounters before, after;
  m2i_device_get_counters (dev, &before);
  for (guint i = 0; i < N_FRAMES; i++) {
    TestImage t;
    make_frame (&t, i);
    g_assert_true (m2i_infer_session_run_queued (s, &t.img, NULL, NULL, &err));
    g_assert_no_error (err);
    memset (&got, 0, sizeof got);
    got_copy (&got, m2i_infer_session_get_result (s));
    assert_same (&got, &ref[i], i);
    test_image_free (&t);
  }
  m2i_device_get_counters (dev, &after);
  g_assert_cmpuint (after.jobs - before.jobs, ==, N_FRAMES);
  /* a frame the model cannot take: the session's error, through the fence */
  TestImage t;
  make_frame (&t, 0);
  t.img.data[1] = NULL;
  g_assert_false (m2i_infer_session_run_queued (s, &t.img, NULL, NULL, &err));
  g_assert_error (err, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT);
  g_clear_error (&err);
  test_image_free (&t);
  m2i_infer_session_free (s);
  test_remove_model_files (xml);
}

/* Two queues on one shared instance of batch 4 (a long timeout, so only
 * full batches run until the drain): 24 frames in 6 device jobs, each
 * stream's frames in order and right. */
static void
test_two_streams_one_batch (void)
{
  Got ref[N_FRAMES];
  reference (ref);
  gchar *xml = test_tiny_ssd_write (4);
  M2iInferModel *m1 = load ("tiny-b4", xml, 4), *m2 = load ("tiny-b4", xml, 4);
  g_assert_true (m1 == m2);
  Stream a, b;
  stream_init (&a);
  stream_init (&b);
  M2iInferQueue *qa = open_queue (m1, 4, G_USEC_PER_SEC * 10, &a);
  M2iInferQueue *qb = open_queue (m2, 4, G_USEC_PER_SEC * 10, &b);
  M2iDevice *dev = m2i_device_get_default ();
  M2iDeviceCounters before, after;
  m2i_device_get_counters (dev, &before);
  for (guint i = 0; i < N_FRAMES; i++) {
    g_assert_cmpint (m2i_infer_queue_submit (qa, &a.frames[i].img, NULL, NULL, NULL,
            GUINT_TO_POINTER (i), TRUE), ==, M2I_INFER_SUBMITTED);
    g_assert_cmpint (m2i_infer_queue_submit (qb, &b.frames[i].img, NULL, NULL, NULL,
            GUINT_TO_POINTER (i), TRUE), ==, M2I_INFER_SUBMITTED);
  }
  m2i_infer_queue_drain (qa);
  m2i_infer_queue_drain (qb);
  m2i_device_get_counters (dev, &after);
  g_assert_cmpuint (after.jobs - before.jobs, ==, 2 * N_FRAMES / 4);
  g_assert_cmpuint (after.busy_ns, >, before.busy_ns);
  assert_stream (&a, ref);
  assert_stream (&b, ref);
  m2i_infer_queue_free (qa);
  m2i_infer_queue_free (qb);
  m2i_infer_model_unref (m1);
  m2i_infer_model_unref (m2);
  stream_clear (&a);
  stream_clear (&b);
  test_remove_model_files (xml);
}

/* One instance per id, loaded once; settings that differ are refused with
 * both values named; an instance let go is loaded again. */
static void
test_registry (void)
{
  gchar *xml = test_tiny_ssd_write (1);
  guint loads = m2i_infer_model_get_n_loaded ();
  M2iInferModel *a = load ("reg", xml, 0), *b = load ("reg", xml, 0);
  g_assert_true (a == b);
  g_assert_cmpuint (m2i_infer_model_get_n_loaded (), ==, loads + 1);
  g_assert_cmpstr (m2i_infer_model_get_instance_id (a), ==, "reg");
  M2iInferModelOptions mo;
  m2i_infer_model_options_init (&mo);
  mo.device = "AUTO";
  GError *err = NULL;
  g_assert_null (m2i_infer_model_acquire ("reg", xml, &mo, &err));
  g_assert_error (err, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (err->message, "model-instance-id=reg is loaded with device=CPU, "
          "this one asks for device=AUTO"));
  g_clear_error (&err);
  /* another id, or none: a model of its own */
  M2iInferModel *c = load ("other", xml, 0), *d = load (NULL, xml, 0);
  g_assert_true (c != a && d != a && c != d);
  g_assert_cmpuint (m2i_infer_model_get_n_loaded (), ==, loads + 3);
  m2i_infer_model_unref (a);
  m2i_infer_model_unref (b);
  m2i_infer_model_unref (c);
  m2i_infer_model_unref (d);
  a = load ("reg", xml, 0);
  g_assert_cmpuint (m2i_infer_model_get_n_loaded (), ==, loads + 4);
  m2i_infer_model_unref (a);
  /* batch-size other than the model's is refused, saying what would do */
  mo.device = "CPU";
  mo.batch = 4;
  g_assert_null (m2i_infer_model_acquire (NULL, xml, &mo, &err));
  g_assert_error (err, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (err->message, "batch-size=4: model input"));
  g_assert_nonnull (strstr (err->message, "set batch-size=1"));
  g_clear_error (&err);
  test_remove_model_files (xml);
}

/* Without blocking, a queue with every request in flight says busy and
 * takes nothing; flushing hands frames still gathering back cancelled at
 * once (a 10 s batch timeout never expires), later submits are refused
 * until it is cleared; a drain runs a batch that is not full at once; a
 * frame that cannot be pre-processed fails alone, the others of its batch
 * get their results. */
static void
test_busy_flush_error (void)
{
  Got ref[N_FRAMES];
  reference (ref);
  gchar *xml = test_tiny_ssd_write (4);
  M2iInferModel *m = load (NULL, xml, 4);
  Stream st;
  stream_init (&st);
  M2iInferQueue *q = open_queue (m, 3, G_USEC_PER_SEC * 10, &st);
  for (guint i = 0; i < 3; i++)
    g_assert_cmpint (m2i_infer_queue_submit (q, &st.frames[i].img, NULL, NULL, NULL,
            GUINT_TO_POINTER (i), FALSE), ==, M2I_INFER_SUBMITTED);
  g_assert_cmpint (m2i_infer_queue_submit (q, &st.frames[3].img, NULL, NULL, NULL,
          GUINT_TO_POINTER (3), FALSE), ==, M2I_INFER_BUSY);
  g_assert_cmpuint (m2i_infer_queue_get_n_in_flight (q), ==, 3);
  gint64 t0 = g_get_monotonic_time ();
  m2i_infer_queue_set_flushing (q, TRUE);
  g_assert_cmpint (m2i_infer_queue_submit (q, &st.frames[3].img, NULL, NULL, NULL,
          GUINT_TO_POINTER (3), TRUE), ==, M2I_INFER_FLUSHING);
  m2i_infer_queue_drain (q);
  g_assert_cmpint (g_get_monotonic_time () - t0, <, G_USEC_PER_SEC * 5);
  g_assert_cmpuint (st.n_back, ==, 3);
  for (guint i = 0; i < 3; i++) {
    g_assert_cmpuint (st.order[i], ==, i);
    g_assert_error (st.got[i].error, M2I_ERROR, M2I_ERROR_CANCELLED);
    g_clear_error (&st.got[i].error);
  }
  m2i_infer_queue_set_flushing (q, FALSE);
  /* 3 frames, the second without its chroma plane: one batch, run by the
   * drain */
  st.n_back = 0;
  M2iImage broken = st.frames[1].img;
  broken.data[1] = NULL;
  t0 = g_get_monotonic_time ();
  for (guint i = 0; i < 3; i++)
    g_assert_cmpint (m2i_infer_queue_submit (q, i == 1 ? &broken : &st.frames[i].img, NULL,
            NULL, NULL, GUINT_TO_POINTER (i), TRUE), ==, M2I_INFER_SUBMITTED);
  m2i_infer_queue_drain (q);
  g_assert_cmpint (g_get_monotonic_time () - t0, <, G_USEC_PER_SEC * 5);
  g_assert_cmpuint (st.n_back, ==, 3);
  g_assert_error (st.got[1].error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT);
  for (guint i = 0; i < 3; i++)
    if (i != 1) {
      g_assert_no_error (st.got[i].error);
      assert_same (&st.got[i], &ref[i], i);
    }
  m2i_infer_queue_free (q);
  stream_clear (&st);
  m2i_infer_model_unref (m);
  test_remove_model_files (xml);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/infer/queue/equals-session", test_queue_equals_session);
  g_test_add_func ("/infer/queue/run-queued", test_run_queued);
  g_test_add_func ("/infer/queue/two-streams-one-batch", test_two_streams_one_batch);
  g_test_add_func ("/infer/queue/registry", test_registry);
  g_test_add_func ("/infer/queue/busy-flush-error", test_busy_flush_error);
  return g_test_run ();
}
