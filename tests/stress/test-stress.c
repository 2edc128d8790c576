/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Stress: the demo chain as a long-running service uses it
 * (docs/reliability.md).
 *
 *   appsrc ! m2icolorconvert ! m2iresize ! m2inorm ! m2iinfer (Fashion-MNIST) ! appsink
 *
 *  /stress/pipelines       P pipelines in one process, each on its own
 *                          thread, sharing the device: every frame's class
 *                          equals the class one pipeline alone gives it
 *  /stress/state-changes   N rounds NULL → PLAYING (one frame through) → NULL
 *  /stress/seeks           N flushing, accurate seeks on a videotestsrc
 *                          stream: the frame after each is the one asked
 *                          for, with the class it had without seeking
 *  /stress/renegotiation   caps changed every 3 frames through appsrc (NV12
 *                          and I420, four sizes): the classes equal those of
 *                          pipelines whose caps never change
 *  /stress/soak            N frames (the 10,000 test images over and over):
 *                          every pass gives the same classes, and the
 *                          resident memory after the last is within 5 % of
 *                          what it was after the warm-up pass
 *
 * The counts come from the command line: the CI runs the small ones
 * (meson test stress), the slow suite the full ones (stress-full: 8
 * pipelines, 1,000 state changes, 1,000 seeks, 100,000 frames). Results
 * are read from the elements' public output only (the region-of-interest
 * meta, DL Streamer's classification structure). Needs Debian's
 * dataset-fashion-mnist (skips without it).
 */
#include "m2i-data.h"
#include "test-support.h"

#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/gst.h>
#include <gst/video/gstvideometa.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define SIDE TEST_FM_SIDE
#define N_IMAGES TEST_FM_T10K

static gint opt_pipelines = 8, opt_frames = 200, opt_state_changes = 50, opt_seeks = 50;
static gint opt_soak = 4000;

static GBytes *images;           /* the 10,000 test images, 28×28 each */
static const guint8 *torch_pred; /* torch's class for each */
static GBytes *torch_bytes;
static gchar *model_path;

/* ---- memory ---------------------------------------------------------------- */

/* Resident memory of this process, in KiB (/proc/self/status VmRSS). */
static guint64
rss_kib (void)
{
  gchar *text = NULL;
  guint64 kib = 0;
  if (g_file_get_contents ("/proc/self/status", &text, NULL, NULL)) {
    const char *p = strstr (text, "VmRSS:");
    if (p)
      kib = g_ascii_strtoull (p + 6, NULL, 10);
  }
  g_free (text);
  return kib;
}

/* ---- a chain ------------------------------------------------------------------ */

typedef struct {
  GstElement *pipeline, *src;
  guint8 *label;                 /* per frame index (buffer offset): class, 255 none */
  gint n_labels;
  gint received;
  GMutex lock;
  GCond cond;
} Chain;

/* The class in the full-frame region's classification structure. */
static gint
buffer_class (GstBuffer *buf)
{
  gpointer state = NULL;
  GstVideoRegionOfInterestMeta *roi = (GstVideoRegionOfInterestMeta *)
      gst_buffer_iterate_meta_filtered (buf, &state, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE);
  for (GList *l = roi ? roi->params : NULL; l; l = l->next) {
    gint id;
    if (g_str_has_prefix (gst_structure_get_name (l->data), "classification_layer_name:") &&
        gst_structure_get_int (l->data, "label_id", &id))
      return id;
  }
  return -1;
}

static GstFlowReturn
on_sample (GstAppSink *sink, gpointer data)
{
  Chain *c = data;
  GstSample *sample = gst_app_sink_pull_sample (sink);
  if (!sample)
    return GST_FLOW_EOS;
  GstBuffer *buf = gst_sample_get_buffer (sample);
  guint64 i = GST_BUFFER_OFFSET (buf);
  gint cls = buffer_class (buf);
  g_mutex_lock (&c->lock);
  if (i < (guint64) c->n_labels && cls >= 0)
    c->label[i] = (guint8) cls;
  c->received++;
  g_cond_broadcast (&c->cond);
  g_mutex_unlock (&c->lock);
  gst_sample_unref (sample);
  return GST_FLOW_OK;
}

/* A chain whose appsrc takes @caps; @n_labels frames are recorded. */
static Chain *
chain_new (const char *caps, gint n_labels)
{
  Chain *c = g_new0 (Chain, 1);
  g_mutex_init (&c->lock);
  g_cond_init (&c->cond);
  c->n_labels = n_labels;
  c->label = g_malloc (MAX (n_labels, 1));
  memset (c->label, 255, MAX (n_labels, 1));
  gchar *launch = g_strdup_printf ("appsrc name=src format=time block=true max-buffers=4 "
      "caps=%s ! m2icolorconvert ! m2iresize ! m2inorm mean=\"<0.286>\" std=\"<0.353>\" "
      "input-scale=0.00392156862745098 ! m2iinfer model=%s post-messages=false ! "
      "appsink name=sink sync=false max-buffers=4", caps, model_path);
  GError *error = NULL;
  c->pipeline = gst_parse_launch (launch, &error);
  g_assert_no_error (error);
  g_free (launch);
  c->src = gst_bin_get_by_name (GST_BIN (c->pipeline), "src");
  GstElement *sink = gst_bin_get_by_name (GST_BIN (c->pipeline), "sink");
  GstAppSinkCallbacks cb = { .new_sample = on_sample };
  gst_app_sink_set_callbacks (GST_APP_SINK (sink), &cb, c, NULL);
  gst_object_unref (sink);
  return c;
}

static void
chain_free (Chain *c)
{
  gst_element_set_state (c->pipeline, GST_STATE_NULL);
  gst_object_unref (c->src);
  gst_object_unref (c->pipeline);
  g_mutex_clear (&c->lock);
  g_cond_clear (&c->cond);
  g_free (c->label);
  g_free (c);
}

/* Frame @index: image @image drawn @scale times larger, NV12 or I420, in
 * GStreamer's default layout when the chroma rows are a multiple of 4
 * bytes (scales 2, 3 for NV12, 4, 6, 8). */
static GstBuffer *
frame (gint image, gint scale, gboolean i420, gint index)
{
  gint w = SIDE * scale;
  gsize size = (gsize) w * w * 3 / 2;
  GstBuffer *buf = gst_buffer_new_allocate (NULL, size, NULL);
  GstMapInfo map;
  gst_buffer_map (buf, &map, GST_MAP_WRITE);
  const guint8 *pix = g_bytes_get_data (images, NULL);
  m2i_data_grey_to_nv12 (pix + (gsize) (image % N_IMAGES) * SIDE * SIDE, SIDE, scale, map.data);
  /* grey: U = V = 128, so NV12's interleaved chroma is I420's planes too */
  gst_buffer_unmap (buf, &map);
  GST_BUFFER_PTS (buf) = (GstClockTime) index * GST_MSECOND;
  GST_BUFFER_DURATION (buf) = GST_MSECOND;
  GST_BUFFER_OFFSET (buf) = (guint64) index;
  return buf;
}

/* Waits for the end of the stream; fails the test on an error message. */
static void
wait_eos (GstElement *pipeline)
{
  GstBus *bus = gst_element_get_bus (pipeline);
  GstMessage *msg = gst_bus_timed_pop_filtered (bus, 120 * GST_SECOND,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  g_assert_nonnull (msg);
  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
    GError *err = NULL;
    gst_message_parse_error (msg, &err, NULL);
    g_error ("pipeline error: %s", err->message);
  }
  gst_message_unref (msg);
  gst_object_unref (bus);
}

static gchar *
nv12_caps (gint scale, gboolean i420)
{
  return g_strdup_printf ("video/x-raw,format=%s,width=%d,height=%d,framerate=1000/1",
      i420 ? "I420" : "NV12", SIDE * scale, SIDE * scale);
}

/* Runs images @first .. @first + @n - 1 through a chain of fixed caps; the
 * classes into @label. */
static void
run_reference (gint first, gint n, gint scale, gboolean i420, guint8 *label)
{
  gchar *caps = nv12_caps (scale, i420);
  Chain *c = chain_new (caps, n);
  g_free (caps);
  g_assert_cmpint (gst_element_set_state (c->pipeline, GST_STATE_PLAYING), !=,
      GST_STATE_CHANGE_FAILURE);
  for (gint i = 0; i < n; i++)
    g_assert_cmpint (gst_app_src_push_buffer (GST_APP_SRC (c->src),
            frame (first + i, scale, i420, i)), ==, GST_FLOW_OK);
  gst_app_src_end_of_stream (GST_APP_SRC (c->src));
  wait_eos (c->pipeline);
  memcpy (label, c->label, n);
  for (gint i = 0; i < n; i++)
    g_assert_cmpint (label[i], <, 10);
  chain_free (c);
}

/* How many of @n classes (of images @first...) equal torch's. */
static gint
torch_agrees (const guint8 *label, gint first, gint n)
{
  gint same = 0;
  for (gint i = 0; i < n; i++)
    same += label[i] == torch_pred[(first + i) % N_IMAGES];
  return same;
}

/* ---- the tests ---------------------------------------------------------------- */

typedef struct {
  Chain *chain;
  gint first, n;
} PushJob;

static gpointer
push_all (gpointer data)
{
  PushJob *j = data;
  for (gint i = 0; i < j->n; i++)
    if (gst_app_src_push_buffer (GST_APP_SRC (j->chain->src), frame (j->first + i, 4, FALSE, i))
        != GST_FLOW_OK)
      break;
  gst_app_src_end_of_stream (GST_APP_SRC (j->chain->src));
  return NULL;
}

static void
test_pipelines (void)
{
  gint p = opt_pipelines, n = opt_frames;
  /* pipeline k runs images k·n ...: one reference run over all of them */
  guint8 *all = g_malloc ((gsize) p * n);
  run_reference (0, p * n, 4, FALSE, all);
  gchar *caps = nv12_caps (4, FALSE);
  Chain **chains = g_new (Chain *, p);
  PushJob *jobs = g_new (PushJob, p);
  GThread **threads = g_new (GThread *, p);
  for (gint k = 0; k < p; k++) {
    chains[k] = chain_new (caps, n);
    g_assert_cmpint (gst_element_set_state (chains[k]->pipeline, GST_STATE_PLAYING), !=,
        GST_STATE_CHANGE_FAILURE);
  }
  gint64 t0 = g_get_monotonic_time ();
  for (gint k = 0; k < p; k++) {
    jobs[k] = (PushJob) { chains[k], k * n, n };
    threads[k] = g_thread_new ("push", push_all, &jobs[k]);
  }
  for (gint k = 0; k < p; k++) {
    g_thread_join (threads[k]);
    wait_eos (chains[k]->pipeline);
  }
  double s = (g_get_monotonic_time () - t0) / 1e6;
  gint same = 0;
  for (gint k = 0; k < p; k++) {
    for (gint i = 0; i < n; i++)
      if (chains[k]->label[i] != all[k * n + i])
        g_error ("pipeline %d frame %d: class %d, alone %d", k, i, chains[k]->label[i],
            all[k * n + i]);
    same += torch_agrees (chains[k]->label, k * n, n);
    chain_free (chains[k]);
  }
  g_print ("stress: %d pipelines x %d frames at once in %.2f s (%.0f frames/s); every class as "
      "one pipeline alone gives it; %.2f %% as torch\n", p, n, s, p * n / s,
      100.0 * same / (p * n));
  g_assert_cmpfloat (100.0 * same / (p * n), >=, 99.0);
  g_free (all);
  g_free (chains);
  g_free (jobs);
  g_free (threads);
  g_free (caps);
}

static void
test_state_changes (void)
{
  gint n = opt_state_changes;
  guint8 ref[64];
  run_reference (0, 64, 4, FALSE, ref);
  gchar *caps = nv12_caps (4, FALSE);
  Chain *c = chain_new (caps, 1);
  g_free (caps);
  guint64 rss0 = 0;
  gint64 t0 = g_get_monotonic_time ();
  for (gint r = 0; r < n; r++) {
    g_assert_cmpint (gst_element_set_state (c->pipeline, GST_STATE_PLAYING), !=,
        GST_STATE_CHANGE_FAILURE);
    c->label[0] = 255;
    c->received = 0;
    g_assert_cmpint (gst_app_src_push_buffer (GST_APP_SRC (c->src), frame (r % 64, 4, FALSE, 0)),
        ==, GST_FLOW_OK);
    g_mutex_lock (&c->lock);
    gint64 until = g_get_monotonic_time () + 30 * G_TIME_SPAN_SECOND;
    while (!c->received)
      g_assert_true (g_cond_wait_until (&c->cond, &c->lock, until));
    g_mutex_unlock (&c->lock);
    g_assert_cmpint (c->label[0], ==, ref[r % 64]);
    g_assert_cmpint (gst_element_set_state (c->pipeline, GST_STATE_NULL), ==,
        GST_STATE_CHANGE_SUCCESS);
    if (r == MIN (9, n - 1))
      rss0 = rss_kib ();
  }
  double s = (g_get_monotonic_time () - t0) / 1e6;
  guint64 rss1 = rss_kib ();
  g_print ("stress: %d state changes NULL -> PLAYING (a frame through, its class checked) -> "
      "NULL in %.2f s; RSS %" G_GUINT64_FORMAT " KiB after 10, %" G_GUINT64_FORMAT " KiB "
      "after %d\n", n, s, rss0, rss1, n);
  chain_free (c);
}

/* Seeks: videotestsrc's moving ball, so every frame differs. */
static void
test_seeks (void)
{
  gint n = opt_seeks, n_frames = 300;
  const char *launch_fmt = "videotestsrc pattern=ball num-buffers=%d ! video/x-raw,format=NV12,"
      "width=112,height=112,framerate=30/1 ! m2icolorconvert ! m2iresize ! m2inorm "
      "mean=\"<0.286>\" std=\"<0.353>\" input-scale=0.00392156862745098 ! m2iinfer model=%s "
      "post-messages=false ! appsink name=sink sync=false max-buffers=2 drop=false";
  /* the class of every frame, straight through */
  guint8 *ref = g_malloc (n_frames);
  gchar *launch = g_strdup_printf (launch_fmt, n_frames, model_path);
  GstElement *p = gst_parse_launch (launch, NULL);
  g_assert_nonnull (p);
  GstElement *sink = gst_bin_get_by_name (GST_BIN (p), "sink");
  gst_element_set_state (p, GST_STATE_PLAYING);
  for (gint i = 0; i < n_frames; i++) {
    GstSample *s = gst_app_sink_pull_sample (GST_APP_SINK (sink));
    g_assert_nonnull (s);
    GstBuffer *b = gst_sample_get_buffer (s);
    g_assert_cmpuint (GST_BUFFER_PTS (b), ==, gst_util_uint64_scale (i, GST_SECOND, 30));
    gint cls = buffer_class (b);
    g_assert_cmpint (cls, >=, 0);
    ref[i] = (guint8) cls;
    gst_sample_unref (s);
  }
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (sink);
  gst_object_unref (p);
  g_free (launch);
  gint distinct = 0;
  for (gint i = 1; i < n_frames; i++)
    distinct += ref[i] != ref[i - 1];

  launch = g_strdup_printf (launch_fmt, -1, model_path);
  p = gst_parse_launch (launch, NULL);
  sink = gst_bin_get_by_name (GST_BIN (p), "sink");
  g_assert_cmpint (gst_element_set_state (p, GST_STATE_PAUSED), !=, GST_STATE_CHANGE_FAILURE);
  g_assert_cmpint (gst_element_get_state (p, NULL, NULL, 30 * GST_SECOND), ==,
      GST_STATE_CHANGE_SUCCESS);
  gst_element_set_state (p, GST_STATE_PLAYING);
  guint64 rss0 = rss_kib ();
  gint64 t0 = g_get_monotonic_time ();
  guint32 x = 14;
  for (gint k = 0; k < n; k++) {
    x = x * 1664525u + 1013904223u;
    gint f = (gint) ((x >> 8) % n_frames);
    GstClockTime pos = gst_util_uint64_scale (f, GST_SECOND, 30);
    g_assert_true (gst_element_seek_simple (p, GST_FORMAT_TIME,
            GST_SEEK_FLAG_FLUSH | GST_SEEK_FLAG_ACCURATE, pos));
    GstSample *s = gst_app_sink_try_pull_sample (GST_APP_SINK (sink), 30 * GST_SECOND);
    g_assert_nonnull (s);
    GstBuffer *b = gst_sample_get_buffer (s);
    if (GST_BUFFER_PTS (b) != pos || buffer_class (b) != ref[f])
      g_error ("seek %d to frame %d: got pts %" GST_TIME_FORMAT " class %d, expected %"
          GST_TIME_FORMAT " class %d", k, f, GST_TIME_ARGS (GST_BUFFER_PTS (b)), buffer_class (b),
          GST_TIME_ARGS (pos), ref[f]);
    gst_sample_unref (s);
  }
  double secs = (g_get_monotonic_time () - t0) / 1e6;
  guint64 rss1 = rss_kib ();
  g_print ("stress: %d flushing seeks in %.2f s, each to the frame asked for with its class "
      "(%d class changes over %d frames); RSS %" G_GUINT64_FORMAT " KiB before, %"
      G_GUINT64_FORMAT " KiB after\n", n, secs, distinct, n_frames, rss0, rss1);
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (sink);
  gst_object_unref (p);
  g_free (launch);
  g_free (ref);
}

static void
test_renegotiation (void)
{
  static const struct {
    gint scale;
    gboolean i420;
  } configs[] = { { 4, FALSE }, { 2, TRUE }, { 3, FALSE }, { 6, TRUE } };
  gint nc = G_N_ELEMENTS (configs), per = 3, rounds = 8, n = nc * per * rounds;
  /* frame i: image i, config (i / per) % nc; the references run each
   * config's frames through a pipeline of fixed caps */
  guint8 *ref = g_malloc (n), *tmp = g_malloc (n);
  for (gint c = 0; c < nc; c++) {
    /* images of config c, in order */
    for (gint r = 0; r < rounds; r++) {
      gint first = (r * nc + c) * per;
      run_reference (first, per, configs[c].scale, configs[c].i420, tmp);
      memcpy (ref + first, tmp, per);
    }
  }
  gchar *caps = nv12_caps (configs[0].scale, configs[0].i420);
  Chain *ch = chain_new (caps, n);
  g_free (caps);
  gst_element_set_state (ch->pipeline, GST_STATE_PLAYING);
  for (gint i = 0; i < n; i++) {
    gint c = (i / per) % nc;
    if (i % per == 0) {
      caps = nv12_caps (configs[c].scale, configs[c].i420);
      GstCaps *gc = gst_caps_from_string (caps);
      g_object_set (ch->src, "caps", gc, NULL);
      gst_caps_unref (gc);
      g_free (caps);
    }
    g_assert_cmpint (gst_app_src_push_buffer (GST_APP_SRC (ch->src),
            frame (i, configs[c].scale, configs[c].i420, i)), ==, GST_FLOW_OK);
  }
  gst_app_src_end_of_stream (GST_APP_SRC (ch->src));
  wait_eos (ch->pipeline);
  for (gint i = 0; i < n; i++)
    if (ch->label[i] != ref[i])
      g_error ("frame %d (config %d): class %d, with fixed caps %d", i, (i / per) % nc,
          ch->label[i], ref[i]);
  g_print ("stress: caps renegotiated %d times (every %d frames: NV12 112x112, I420 56x56, NV12 84x84, "
      "I420 168x168), %d frames, every class as with fixed caps\n", n / per - 1, per, n);
  chain_free (ch);
  g_free (ref);
  g_free (tmp);
}

static void
test_soak (void)
{
  gint n = opt_soak, pass = MIN (n, N_IMAGES), warm = MIN (1000, n);
  gchar *caps = nv12_caps (4, FALSE);
  Chain *c = chain_new (caps, n);
  g_free (caps);
  gst_element_set_state (c->pipeline, GST_STATE_PLAYING);
  /* frames from a pool, as a camera would give them */
  gsize size = (gsize) 112 * 112 * 3 / 2;
  GstBufferPool *pool = gst_buffer_pool_new ();
  GstStructure *config = gst_buffer_pool_get_config (pool);
  gst_buffer_pool_config_set_params (config, NULL, (guint) size, 6, 0);
  gst_buffer_pool_set_config (pool, config);
  gst_buffer_pool_set_active (pool, TRUE);
  const guint8 *pix = g_bytes_get_data (images, NULL);
  guint64 rss_warm = 0;
  gint64 t0 = g_get_monotonic_time ();
  for (gint i = 0; i < n; i++) {
    GstBuffer *buf;
    g_assert_cmpint (gst_buffer_pool_acquire_buffer (pool, &buf, NULL), ==, GST_FLOW_OK);
    GstMapInfo map;
    gst_buffer_map (buf, &map, GST_MAP_WRITE);
    m2i_data_grey_to_nv12 (pix + (gsize) (i % N_IMAGES) * SIDE * SIDE, SIDE, 4, map.data);
    gst_buffer_unmap (buf, &map);
    GST_BUFFER_PTS (buf) = (GstClockTime) i * GST_MSECOND;
    GST_BUFFER_OFFSET (buf) = (guint64) i;
    g_assert_cmpint (gst_app_src_push_buffer (GST_APP_SRC (c->src), buf), ==, GST_FLOW_OK);
    if (i + 1 == warm) {
      /* what the warm-up frames left behind is the steady state */
      g_mutex_lock (&c->lock);
      while (c->received < warm - 8)
        g_cond_wait (&c->cond, &c->lock);
      g_mutex_unlock (&c->lock);
      rss_warm = rss_kib ();
    }
  }
  gst_app_src_end_of_stream (GST_APP_SRC (c->src));
  wait_eos (c->pipeline);
  double s = (g_get_monotonic_time () - t0) / 1e6;
  guint64 rss_end = rss_kib ();
  g_assert_cmpint (c->received, ==, n);
  for (gint i = 0; i < n; i++) {
    g_assert_cmpint (c->label[i], <, 10);
    if (c->label[i] != c->label[i % pass])
      g_error ("frame %d: class %d, %d the first time", i, c->label[i], c->label[i % pass]);
  }
  gint same = torch_agrees (c->label, 0, pass);
  double growth = 100.0 * ((double) rss_end - (double) rss_warm) / (double) rss_warm;
  g_print ("stress: soak of %d frames in %.1f s (%.0f frames/s); RSS %" G_GUINT64_FORMAT
      " KiB after %d frames, %" G_GUINT64_FORMAT " KiB after %d (%+.2f %%); passes agree, "
      "%.2f %% as torch\n", n, s, n / s, rss_warm, warm, rss_end, n, growth,
      100.0 * same / pass);
  /* a leak grows; shrinking (the allocator returning warm-up pages, ASan's
   * quarantine draining) is no finding */
  g_assert_cmpfloat (growth, <=, 5.0);
  g_assert_cmpfloat (100.0 * same / pass, >=, 99.0);
  gst_buffer_pool_set_active (pool, FALSE);
  gst_object_unref (pool);
  chain_free (c);
}

int
main (int argc, char **argv)
{
  GOptionEntry entries[] = {
    { "pipelines", 0, 0, G_OPTION_ARG_INT, &opt_pipelines, "pipelines at once", "P" },
    { "frames", 0, 0, G_OPTION_ARG_INT, &opt_frames, "frames per pipeline", "N" },
    { "state-changes", 0, 0, G_OPTION_ARG_INT, &opt_state_changes, "NULL-PLAYING rounds", "N" },
    { "seeks", 0, 0, G_OPTION_ARG_INT, &opt_seeks, "flushing seeks", "N" },
    { "soak", 0, 0, G_OPTION_ARG_INT, &opt_soak, "frames of the soak", "N" },
    { NULL }
  };
  g_test_init (&argc, &argv, NULL);
  GOptionContext *oc = g_option_context_new (NULL);
  g_option_context_add_main_entries (oc, entries, NULL);
  g_option_context_set_ignore_unknown_options (oc, TRUE);
  GError *error = NULL;
  if (!g_option_context_parse (oc, &argc, &argv, &error))
    g_error ("%s", error->message);
  g_option_context_free (oc);
  gst_init (&argc, &argv);
  images = test_fashion_mnist_t10k ();
  if (!images) {
    g_test_skip (TEST_FM_MISSING);
    return g_test_run ();
  }
  torch_bytes = test_read_data ("fashion-mnist/t10k.torch-pred.u8");
  torch_pred = g_bytes_get_data (torch_bytes, NULL);
  model_path = test_models_path ("fashion-mnist/fashion-mnist.xml");
  g_test_add_func ("/stress/pipelines", test_pipelines);
  g_test_add_func ("/stress/state-changes", test_state_changes);
  g_test_add_func ("/stress/seeks", test_seeks);
  g_test_add_func ("/stress/renegotiation", test_renegotiation);
  g_test_add_func ("/stress/soak", test_soak);
  int rc = g_test_run ();
  g_bytes_unref (images);
  g_bytes_unref (torch_bytes);
  g_free (model_path);
  return rc;
}
