/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-streams.c — many streams in one process: 1, 2, 4 and 8 pipelines of
 * 1080p NV12 through pre-processing and person-detection-retail-0013 (from
 * ../shared), each configuration in a process of its own (so that its
 * resident memory is its own), all printed in one run:
 *
 *   - the fused m2i chain (m2icolorconvert ! m2iresize ! m2iinfer) with a
 *     model per stream, one shared instance (model-instance-id), the shared
 *     instance with nireq=2, and with batch-size=4 (a batch-4 copy of the
 *     model that tests/bench/make-batch.py writes into a temporary folder);
 *   - the same with GStreamer's videoconvertscale doing the pre-processing
 *     (a model per stream, and shared), the peer;
 *   - one stream with n-threads=1 (one core), the yardstick of the 8-stream
 *     goal;
 *   - resident memory of a model per stream vs a shared instance on the CPU
 *     alone (device=CPU, 3 frames a stream);
 *   - the pre-processing chain alone behind videotestsrc (frames further
 *     apart than the chain takes), default n-threads vs n-threads=1: CPU
 *     and context switches per frame.
 *
 * Each stream is appsrc (pre-made frames, wrapped without copies, all
 * queued before PLAYING) ! <chain> ! fakesink sync=false. frames/s is the
 * aggregate of all streams between the first and the last buffer reaching
 * a sink; CPU is of the whole process over the same span (bench-cpu.h);
 * RSS is VmRSS after the run minus VmRSS before the pipelines were built
 * (GStreamer and the plugin already loaded), peak is VmHWM minus the same;
 * the device columns are M2iDeviceCounters over the run (jobs through the
 * device queue, engine busy time, the deepest the queue got).
 *
 *   GST_PLUGIN_PATH=build/gst build/tests/bench/bench-streams [frames-per-stream]
 */
#include "bench-gst-run.h"
#include <m2i-core/m2i/m2i-device.h>
#include <m2i-core/infer/m2i-infer-queue.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#define W 1920
#define H 1080
#define N_SOURCE_FRAMES 4
#define MAX_STREAMS 8
#define MODEL "person-detection-retail-0013/person-detection-retail-0013.xml"
#define CAPS "video/x-raw,format=NV12,width=1920,height=1080,framerate=30/1"
#define M2I_CHAIN "m2icolorconvert ! m2iresize ! "
#define VCS_CHAIN "videoconvertscale ! video/x-raw,format=BGR,width=544,height=320 ! "

typedef struct {
  const char *name;
  const char *chain;             /* before m2iinfer */
  const char *infer;             /* m2iinfer's properties besides model */
  gboolean batched;              /* the batch-4 copy of the model */
} Config;

static const Config configs[] = {
  { "m2i  model per stream", M2I_CHAIN, "", FALSE },
  { "m2i  shared instance", M2I_CHAIN, "model-instance-id=pd", FALSE },
  { "m2i  shared, nireq=2", M2I_CHAIN, "model-instance-id=pd nireq=2", FALSE },
  { "m2i  shared, batch-size=4", M2I_CHAIN, "model-instance-id=pd batch-size=4", TRUE },
  { "vcs  model per stream", VCS_CHAIN, "", FALSE },
  { "vcs  shared instance", VCS_CHAIN, "model-instance-id=pd", FALSE },
};
#define ONE_THREAD "m2i  1 stream, n-threads=1"

typedef struct {
  double fps, cpu_ms, rss_mb, peak_mb, busy_ms;
  double tasks, sim_ms;          /* device tasks and simulated device ms per frame */
  guint64 jobs, max_depth;
  guint loads;
  gdouble csw;                   /* context switches per frame */
  gboolean ok;
} Result;

/* ---- the child: one configuration ------------------------------------------------ */

static double
vm_kb (const char *key)
{
  gchar *text = NULL;
  double v = 0;
  if (g_file_get_contents ("/proc/self/status", &text, NULL, NULL)) {
    const char *p = strstr (text, key);
    if (p)
      v = g_ascii_strtod (p + strlen (key) + 1, NULL);
  }
  g_free (text);
  return v;
}

static gboolean
wait_all (GstElement **p, guint n)
{
  gboolean ok = TRUE;
  for (guint i = 0; i < n; i++) {
    GstBus *bus = gst_element_get_bus (p[i]);
    GstMessage *m = gst_bus_timed_pop_filtered (bus, 600 * GST_SECOND,
        GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
    if (!m || GST_MESSAGE_TYPE (m) == GST_MESSAGE_ERROR) {
      GError *err = NULL;
      if (m)
        gst_message_parse_error (m, &err, NULL);
      fprintf (stderr, "stream %u: %s\n", i, err ? err->message : "no EOS within 600 s");
      g_clear_error (&err);
      ok = FALSE;
    }
    if (m)
      gst_message_unref (m);
    gst_object_unref (bus);
  }
  return ok;
}

/* @n pipelines "appsrc ! @chain ! fakesink", @frames frames each; prints
 * the child's line. */
static int
child_run (const char *chain, guint n, guint frames)
{
  gsize frame_size;
  guint8 *src = bench_nv12_frames (W, H, N_SOURCE_FRAMES, &frame_size);
  GstElement *p[MAX_STREAMS];
  BenchTiming t = { .expected = n * frames };
  M2iDevice *dev = m2i_device_get_default ();
  double rss0 = vm_kb ("VmRSS:");
  guint loads0 = m2i_infer_model_get_n_loaded ();
  for (guint s = 0; s < n; s++) {
    gchar *desc = g_strdup_printf ("appsrc name=src format=time is-live=false caps=" CAPS
        " ! %s ! fakesink name=sink sync=false signal-handoffs=true", chain);
    GError *err = NULL;
    p[s] = gst_parse_launch (desc, &err);
    if (!p[s]) {
      fprintf (stderr, "%s: %s\n", desc, err->message);
      return 1;
    }
    g_free (desc);
    GstElement *sink = gst_bin_get_by_name (GST_BIN (p[s]), "sink");
    g_signal_connect (sink, "handoff", G_CALLBACK (bench_on_handoff), &t);
    gst_object_unref (sink);
    GstElement *app = gst_bin_get_by_name (GST_BIN (p[s]), "src");
    for (guint i = 0; i < frames; i++) {
      guint8 *data = src + frame_size * ((i + s) % N_SOURCE_FRAMES);
      GstBuffer *b = gst_buffer_new_wrapped_full (GST_MEMORY_FLAG_READONLY, data, frame_size, 0,
          frame_size, NULL, NULL);
      GST_BUFFER_PTS (b) = gst_util_uint64_scale (i, GST_SECOND, 30);
      GST_BUFFER_DURATION (b) = gst_util_uint64_scale (1, GST_SECOND, 30);
      gst_app_src_push_buffer (GST_APP_SRC (app), b);
    }
    gst_app_src_end_of_stream (GST_APP_SRC (app));
    gst_object_unref (app);
  }
  /* models load in PAUSED: all before the clock starts */
  for (guint s = 0; s < n; s++)
    gst_element_set_state (p[s], GST_STATE_PAUSED);
  for (guint s = 0; s < n; s++)
    gst_element_get_state (p[s], NULL, NULL, 600 * GST_SECOND);
  M2iDeviceCounters c0, c1;
  m2i_device_reset_counters (dev);
  m2i_device_get_counters (dev, &c0);
  struct rusage ru0, ru1;
  getrusage (RUSAGE_SELF, &ru0);
  for (guint s = 0; s < n; s++)
    gst_element_set_state (p[s], GST_STATE_PLAYING);
  gboolean ok = wait_all (p, n) && t.count == t.expected && t.last > t.first;
  getrusage (RUSAGE_SELF, &ru1);
  m2i_device_get_counters (dev, &c1);
  double rss = vm_kb ("VmRSS:"), hwm = vm_kb ("VmHWM:");
  guint loads = m2i_infer_model_get_n_loaded () - loads0;
  for (guint s = 0; s < n; s++) {
    gst_element_set_state (p[s], GST_STATE_NULL);
    gst_object_unref (p[s]);
  }
  double csw = (double) (ru1.ru_nvcsw + ru1.ru_nivcsw - ru0.ru_nvcsw - ru0.ru_nivcsw);
  if (!ok) {
    printf ("FAILED (%u of %u buffers)\n", t.count, t.expected);
    return 1;
  }
  printf ("%.3f %.4f %.1f %.1f %" G_GUINT64_FORMAT " %.1f %u %u %.2f %.1f %.3f\n",
      (t.count - 1) * 1e6 / (double) (t.last - t.first),
      (t.cpu_last - t.cpu_first) * 1e-3 / (t.count - 1), (rss - rss0) / 1024, (hwm - rss0) / 1024,
      c1.jobs - c0.jobs, (c1.busy_ns - c0.busy_ns) / 1e6, c1.max_queue_depth, loads,
      csw / t.count, (double) (c1.tasks_total - c0.tasks_total) / t.count,
      (double) (c1.cycles - c0.cycles) * 1e3 / M2I_DEVICE_CLOCK_HZ / t.count);
  g_free (src);
  return 0;
}

/* The pre-processing chain alone behind videotestsrc (which takes longer
 * to draw a frame than the chain to run it): CPU ms and context switches
 * per frame. */
static int
child_preprocess (const char *n_threads, guint frames)
{
  gchar *desc = g_strdup_printf ("videotestsrc num-buffers=%u ! " CAPS " ! m2icolorconvert ! "
      "m2iresize ! m2inorm mean=\"<0.485, 0.456, 0.406>\" std=\"<0.229, 0.224, 0.225>\" "
      "input-scale=0.00392156862745098 %s ! other/tensors,format=static,num_tensors=1,"
      "types=float16,dimensions=224:224:3:1 ! fakesink", frames, n_threads);
  GError *err = NULL;
  GstElement *p = gst_parse_launch (desc, &err);
  if (!p) {
    fprintf (stderr, "%s\n", err->message);
    return 1;
  }
  struct rusage ru0, ru1;
  getrusage (RUSAGE_SELF, &ru0);
  double cpu0 = bench_cpu_us ();
  gint64 t0 = g_get_monotonic_time ();
  gst_element_set_state (p, GST_STATE_PLAYING);
  gboolean ok = wait_all (&p, 1);
  gint64 t1 = g_get_monotonic_time ();
  double cpu1 = bench_cpu_us ();
  getrusage (RUSAGE_SELF, &ru1);
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (p);
  g_free (desc);
  if (!ok)
    return 1;
  double csw = (double) (ru1.ru_nvcsw + ru1.ru_nivcsw - ru0.ru_nvcsw - ru0.ru_nivcsw);
  printf ("%.3f %.4f 0 0 0 0 0 0 %.2f 0 0\n", frames * 1e6 / (double) (t1 - t0),
      (cpu1 - cpu0) * 1e-3 / frames, csw / frames);
  return 0;
}

/* ---- the parent: every configuration, one child each ---------------------------------- */

static guint rounds = 3;

/* The 1-minute load average (other processes: the figures' context). */
static double
load_average (void)
{
  gchar *text = NULL;
  double v = -1;
  if (g_file_get_contents ("/proc/loadavg", &text, NULL, NULL))
    v = g_ascii_strtod (text, NULL);
  g_free (text);
  return v;
}

static Result
spawn_once (const char *self, const char *mode, const char *arg, guint n, guint frames)
{
  Result r = { 0 };
  gchar *sn = g_strdup_printf ("%u", n), *sf = g_strdup_printf ("%u", frames);
  const gchar *argv[] = { self, "--child", mode, arg, sn, sf, NULL };
  gchar *out = NULL;
  gint status = 0;
  GError *err = NULL;
  if (!g_spawn_sync (NULL, (gchar **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, NULL,
          &status, &err)) {
    fprintf (stderr, "%s\n", err->message);
    g_clear_error (&err);
  } else if (g_spawn_check_wait_status (status, NULL)) {
    r.ok = sscanf (out, "%lf %lf %lf %lf %" G_GUINT64_FORMAT " %lf %" G_GUINT64_FORMAT
        " %u %lf %lf %lf", &r.fps, &r.cpu_ms, &r.rss_mb, &r.peak_mb, &r.jobs, &r.busy_ms,
        &r.max_depth, &r.loads, &r.csw, &r.tasks, &r.sim_ms) == 11;
  }
  g_free (out);
  g_free (sn);
  g_free (sf);
  return r;
}

/* The best of @rounds runs. */
static Result
spawn (const char *self, const char *mode, const char *arg, guint n, guint frames)
{
  Result best = spawn_once (self, mode, arg, n, frames);
  for (guint k = 1; k < rounds; k++) {
    Result r = spawn_once (self, mode, arg, n, frames);
    if (!r.ok)
      continue;
    if (!best.ok) {
      best = r;
      continue;
    }
    best.fps = MAX (best.fps, r.fps);
    best.cpu_ms = MIN (best.cpu_ms, r.cpu_ms);
    best.csw = MIN (best.csw, r.csw);
  }
  return best;
}

static void
print_row (guint n, const char *name, const Result *r)
{
  if (!r->ok) {
    printf ("  %u  %-28s  FAILED\n", n, name);
    return;
  }
  printf ("  %u  %-28s %8.2f %8.2f %8.1f %8.1f %6u %6" G_GUINT64_FORMAT " %9.0f %5" G_GUINT64_FORMAT
      " %7.0f %7.2f\n", n, name, r->fps, r->cpu_ms, r->rss_mb, r->peak_mb, r->loads, r->jobs,
      r->busy_ms, r->max_depth, r->tasks, r->sim_ms);
}

/* "appsrc ! chain ! m2iinfer model=... properties" for configuration @c. */
static gchar *
chain (const char *chain, const char *model, const char *infer, const char *device)
{
  return g_strdup_printf ("%sm2iinfer model=%s channel-order=bgr post-messages=false %s%s",
      chain, model, infer, device);
}

int
main (int argc, char **argv)
{
  if (!g_getenv ("GST_PLUGIN_PATH"))
    g_setenv ("GST_PLUGIN_PATH", M2I_GST_PLUGIN_DIR, TRUE);
  gst_init (&argc, &argv);
  if (argc == 6 && !strcmp (argv[1], "--child")) {
    guint n = (guint) atoi (argv[4]), frames = (guint) atoi (argv[5]);
    return !strcmp (argv[2], "pre") ? child_preprocess (argv[3], frames)
        : child_run (argv[3], MIN (n, MAX_STREAMS), frames);
  }
  guint frames = argc > 1 ? (guint) atoi (argv[1]) : 16;
  frames = MAX (4, frames / 4 * 4);
  if (argc > 2)
    rounds = (guint) CLAMP (atoi (argv[2]), 1, 20);
  if (!g_getenv ("M2I_SHARED_MODELS"))
    g_setenv ("M2I_SHARED_MODELS", M2I_SHARED_MODELS_DIR, TRUE);
  gchar *model = test_shared_path (MODEL);
  if (!model || !g_file_test (model, G_FILE_TEST_EXISTS)) {
    printf ("skipped: %s not found (../shared)\n", MODEL);
    return 0;
  }
  /* the batch-4 copy of the model */
  gchar *dir = g_dir_make_tmp ("m2i-bench-b4-XXXXXX", NULL);
  gchar *script = g_build_filename (M2I_SOURCE_ROOT, "tests", "bench", "make-batch.py", NULL);
  gchar *b4 = g_build_filename (dir, "model.xml", NULL);
  gchar *cmd = g_strdup_printf ("/usr/bin/python3 %s %s 4 %s", script, model, dir);
  gint st;
  if (!g_spawn_command_line_sync (cmd, NULL, NULL, &st, NULL) || !g_spawn_check_wait_status (st,
          NULL))
    fprintf (stderr, "%s failed: no batch-size=4 runs\n", cmd);
  printf ("1080p NV12 -> person-detection-retail-0013 (544x320, device AUTO: split between the "
      "M2I device and the CPU), %u frames per stream, %u cores; a process per run, best of %u "
      "runs; load average %.2f\n", frames, g_get_num_processors (), rounds, load_average ());
  printf ("  n  %-28s %8s %8s %8s %8s %6s %6s %9s %5s %7s %7s\n", "streams/pre-processing",
      "frames/s", "CPU ms", "RSS MB", "peak MB", "loads", "jobs", "busy ms", "depth", "tasks",
      "sim ms");
  printf ("     (CPU ms, tasks and sim ms per frame; jobs, busy ms (engine threads) and the queue's "
      "deepest over the run)\n");
  const guint counts[] = { 1, 2, 4, 8 };
  Result res[G_N_ELEMENTS (counts)][G_N_ELEMENTS (configs)];
  for (guint ci = 0; ci < G_N_ELEMENTS (counts); ci++)
    for (guint k = 0; k < G_N_ELEMENTS (configs); k++) {
      const Config *c = &configs[k];
      gchar *ch = chain (c->chain, c->batched ? b4 : model, c->infer, "");
      res[ci][k] = spawn (argv[0], "run", ch, counts[ci], frames);
      print_row (counts[ci], c->name, &res[ci][k]);
      g_free (ch);
    }
  gchar *ch = chain (M2I_CHAIN, model, "n-threads=1", "");
  Result one = spawn (argv[0], "run", ch, 1, frames);
  g_free (ch);
  print_row (1, ONE_THREAD, &one);

  printf ("device=CPU (the IR runtime alone), 3 frames per stream: resident memory\n");
  Result cpu[2][2];
  const guint cpu_counts[] = { 1, 8 };
  for (guint ci = 0; ci < 2; ci++)
    for (guint k = 0; k < 2; k++) {
      ch = chain (M2I_CHAIN, model, k ? "model-instance-id=pd " : "", " device=CPU");
      cpu[ci][k] = spawn (argv[0], "run", ch, cpu_counts[ci], 4);
      print_row (cpu_counts[ci], k ? "cpu  shared instance" : "cpu  model per stream", &cpu[ci][k]);
      g_free (ch);
    }

  printf ("pre-processing alone behind videotestsrc (1080p NV12 -> 224x224 fp16), 300 "
      "frames:\n");
  Result pre[2];
  const char *threads[] = { "", "n-threads=1" };
  for (guint k = 0; k < 2; k++) {
    pre[k] = spawn (argv[0], "pre", threads[k], 1, 300);
    if (pre[k].ok)
      printf ("  %-32s %8.1f frames/s %8.4f CPU ms/frame %8.2f context switches/frame\n",
          k ? "n-threads=1" : "n-threads default (2)", pre[k].fps, pre[k].cpu_ms, pre[k].csw);
  }

  /* the goals */
  const Result *sep1 = &res[0][0], *sep8 = &res[3][0], *sh1 = &res[0][1], *sh8 = &res[3][1];
  if (sep1->ok && sep8->ok && sh1->ok && sh8->ok)
    printf ("RSS from 1 to 8 streams: +%.1f MB with a model per stream (%.1f MB a stream), "
        "+%.1f MB shared (%.1f MB a stream)\n", sep8->rss_mb - sep1->rss_mb,
        (sep8->rss_mb - sep1->rss_mb) / 7, sh8->rss_mb - sh1->rss_mb,
        (sh8->rss_mb - sh1->rss_mb) / 7);
  if (cpu[0][0].ok && cpu[1][0].ok && cpu[0][1].ok && cpu[1][1].ok)
    printf ("device=CPU, from 1 to 8 streams: +%.1f MB with a model per stream, +%.1f MB "
        "shared\n", cpu[1][0].rss_mb - cpu[0][0].rss_mb, cpu[1][1].rss_mb - cpu[0][1].rss_mb);
  double best8 = 0;
  for (guint k = 0; k < G_N_ELEMENTS (configs); k++)
    if (res[3][k].ok && g_str_has_prefix (configs[k].name, "m2i"))
      best8 = MAX (best8, res[3][k].fps);
  if (one.ok && best8 > 0)
    printf ("8 streams (best m2i row) / 1 stream with n-threads=1: %.2fx the frames/s (goal "
        ">= 1.8)\n", best8 / one.fps);
  /* what the cores could do: frames/s = cores / CPU per frame (the measured
   * rates depend on what else runs on the machine) */
  double cpu8 = G_MAXDOUBLE;
  for (guint k = 0; k < G_N_ELEMENTS (configs); k++)
    if (res[3][k].ok && g_str_has_prefix (configs[k].name, "m2i"))
      cpu8 = MIN (cpu8, res[3][k].cpu_ms);
  if (one.ok && cpu8 < G_MAXDOUBLE)
    printf ("CPU per frame: 8 streams %.2f ms (best m2i row), 1 stream n-threads=1 %.2f ms: on "
        "%u free cores 8 streams would run %.2fx the frames/s of one stream on one core\n", cpu8,
        one.cpu_ms, g_get_num_processors (), g_get_num_processors () * one.cpu_ms / cpu8);
  for (guint ci = 0; ci < G_N_ELEMENTS (counts); ci++)
    if (res[ci][0].ok && res[ci][4].ok)
      printf ("%u stream%s: m2i pre-processing %.2fx the frames/s of videoconvertscale's, "
          "%.2fx less CPU per frame\n", counts[ci], counts[ci] > 1 ? "s" : "",
          res[ci][0].fps / res[ci][4].fps, res[ci][4].cpu_ms / res[ci][0].cpu_ms);
  if (pre[0].ok && pre[1].ok)
    printf ("pre-processing behind videotestsrc: default n-threads / n-threads=1: %.2fx the CPU "
        "per frame (goal <= 1), %.2fx the context switches\n", pre[0].cpu_ms / pre[1].cpu_ms,
        pre[0].csw / MAX (pre[1].csw, 1e-9));
  printf ("load average at the end %.2f\n", load_average ());
  g_unlink (b4);
  gchar *bin = g_build_filename (dir, "model.bin", NULL);
  g_unlink (bin);
  g_rmdir (dir);
  g_free (bin);
  g_free (b4);
  g_free (dir);
  g_free (cmd);
  g_free (script);
  g_free (model);
  return 0;
}
