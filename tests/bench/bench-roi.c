/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-roi.c — region-of-interest classification of 10 objects per 1080p
 * NV12 frame: m2iinfer inference-region=roi-list (each crop converted,
 * resized and normalised by its own fused M2I plan, the 10 plans one device
 * submission) against the same crops made the GStreamer way, videocrop !
 * videoconvertscale, feeding the same model; frames per second both ways,
 * in one run.
 *
 *   ours:  appsrc ! m2iinfer inference-region=roi-list model=M ! fakesink
 *          (10 region metas on every frame)
 *   peer:  appsrc ! tee, 10 branches of
 *            queue ! videocrop (the region) ! videoconvertscale
 *            ! video/x-raw,format=RGBP,width=MW,height=MH ! m2iinfer model=M ! fakesink
 *
 * The peer is a tee because that is how a GStreamer pipeline crops several
 * regions of one frame without an application in the loop: one videocrop
 * per region, the branches running in parallel on their queues' threads.
 * Its m2iinfer takes frames of the model's size and only converts and
 * normalises them. Two scenarios: static regions (the same 10 rectangles on
 * every frame, the peer's best case: videocrop never renegotiates) and
 * moving regions (every rectangle moves and changes size by a few pixels
 * each frame, as a tracker's boxes do: the peer's videocrop gets new
 * properties before each buffer, from a pad probe, and renegotiates;
 * m2iinfer plans each new crop size — its cost is in the figure).
 *
 * Two models: the repository's Fashion-MNIST classifier (28x28 input, about
 * 0.08 ms per inference here, so the ten inferences are most of a frame's
 * cost), and a stand-in for a person-attribute classifier made here, input
 * 80x160 like person-attributes-recognition-crossroad-0230 but computing
 * only ReduceMean + SoftMax (3 classes), so that what is measured is the
 * pre-processing of 10 person-sized crops per frame. --model/--width/
 * --height/--extra run another image classifier instead. The rate is
 * measured from the first buffer reaching a sink to the last one, so
 * start-up is not counted; each scenario runs ROUNDS rounds in turn and the
 * best is shown, with the CPU time per frame of all threads. The last line
 * compares the classes both ways found (they differ where the two resizes
 * round differently: videoconvertscale's bilinear and colour matrix are not
 * the M2I block's).
 *
 *   build/tests/bench/bench-roi [frames]
 */
#include "bench-cpu.h"
#include "../ir/ir-test-util.h"

#include <gst/app/gstappsrc.h>
#include <gst/gst.h>
#include <gst/video/gstvideometa.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define W 1920
#define H 1080
#define N_ROI 10
#define N_SOURCE 4
#define ROUNDS 3
#define FM_NORM "mean=\"<0.286>\" std=\"<0.353>\" input-scale=0.00392156862745098"

static gchar *opt_model;
static gint opt_mw = 28, opt_mh = 28;
static gchar *opt_extra;

/* The model of a run: path, input size, m2iinfer properties (both ways). */
typedef struct {
  const char *name;
  gchar *path;
  gint mw, mh;
  const char *props;
} Model;

/* Object-sized rectangles (people at various distances). */
static const gint base_roi[N_ROI][4] = {
  { 101, 211, 96, 224 }, { 341, 180, 150, 330 }, { 603, 397, 61, 143 }, { 801, 99, 240, 520 },
  { 1117, 303, 80, 190 }, { 1289, 451, 177, 401 }, { 1533, 87, 120, 260 },
  { 1701, 555, 66, 150 }, { 455, 701, 200, 300 }, { 1003, 777, 130, 250 },
};

/* Region @i on frame @f: the base rectangle, or (moving) moved by up to
 * +-7 px and resized by up to 6 px, different every frame. */
static void
roi_rect (guint i, guint64 f, gboolean moving, gint r[4])
{
  memcpy (r, base_roi[i], sizeof base_roi[i]);
  if (!moving)
    return;
  gint k = (gint) ((f * 7 + i * 3) % 15) - 7;
  r[0] += k;
  r[1] -= k / 2;
  r[2] += (gint) ((f + i) % 7);
  r[3] += (gint) ((f * 3 + i) % 7);
}

static guint8 *
make_frames (gsize *frame_size)
{
  gsize ysz = (gsize) W * H, sz = ysz * 3 / 2;
  guint8 *mem = g_malloc (sz * N_SOURCE);
  guint32 x = 987654321;
  for (int f = 0; f < N_SOURCE; f++)
    for (gsize i = 0; i < sz; i++) {
      x ^= x << 13;
      x ^= x >> 17;
      x ^= x << 5;
      gsize px = i < ysz ? i % W : (i - ysz) % W, row = i < ysz ? i / W : (i - ysz) / W;
      int v = (int) ((px / 3 + row / 2 + (gsize) f * 30) % 200) + (int) (x >> 27);
      mem[sz * f + i] = (guint8) CLAMP (v, 0, 255);
    }
  *frame_size = sz;
  return mem;
}

typedef struct {
  guint expected, count;
  gint64 first, last;
  double cpu_first, cpu_last;
  gboolean moving;
  gint classes[N_ROI];           /* last frame's classes: ours, per region */
  gint *peer_classes;            /* peer: per branch, the last frame's class */
  GMutex lock;
} Timing;

static void
on_handoff (GstElement *sink, GstBuffer *buf, GstPad *pad, gpointer data)
{
  Timing *t = data;
  gint64 now = g_get_monotonic_time ();
  g_mutex_lock (&t->lock);
  guint i = t->count++;
  if (i == 0) {
    t->first = now;
    t->cpu_first = bench_cpu_us ();
  } else if (i + 1 == t->expected) {
    t->last = now;
    t->cpu_last = bench_cpu_us ();
  }
  /* the classes of the last frame: ours on the regions, the peer's on its
   * branch's full-frame region */
  gint branch = GPOINTER_TO_INT (g_object_get_data (G_OBJECT (sink), "branch"));
  gpointer state = NULL;
  GstMeta *m;
  guint r = 0;
  while ((m = gst_buffer_iterate_meta_filtered (buf, &state,
              GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE)) && r < N_ROI) {
    GstVideoRegionOfInterestMeta *roi = (GstVideoRegionOfInterestMeta *) m;
    for (GList *l = roi->params; l; l = l->next) {
      gint id;
      if (g_str_has_prefix (gst_structure_get_name (l->data), "classification_layer_name:")
          && gst_structure_get_int (l->data, "label_id", &id)) {
        if (branch > 0)
          t->peer_classes[branch - 1] = id;
        else
          t->classes[r] = id;
      }
    }
    r++;
  }
  g_mutex_unlock (&t->lock);
}

/* Before each buffer, branch @i's videocrop gets frame f's rectangle. */
static GstPadProbeReturn
crop_probe (GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
  guint i = GPOINTER_TO_UINT (data);
  GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER (info);
  gint r[4];
  roi_rect (i, GST_BUFFER_OFFSET (buf), TRUE, r);
  GstElement *crop = GST_ELEMENT (gst_pad_get_parent (pad));
  g_object_set (crop, "left", r[0], "top", r[1], "right", W - r[0] - r[2], "bottom",
      H - r[1] - r[3], NULL);
  gst_object_unref (crop);
  return GST_PAD_PROBE_OK;
}

/* Runs one pipeline on @n frames; frames per second (0 on failure) and the
 * CPU milliseconds per frame. */
static double
run (const Model *model, gboolean peer, gboolean moving, guint8 *frames, gsize frame_size,
    guint n, double *cpu_ms, Timing *t)
{
  GString *desc = g_string_new (NULL);
  g_string_printf (desc, "appsrc name=src format=time is-live=false caps=video/x-raw,"
      "format=NV12,width=%d,height=%d,framerate=30/1 ! ", W, H);
  if (!peer) {
    g_string_append_printf (desc, "m2iinfer model=%s %s inference-region=roi-list "
        "post-messages=false ! fakesink name=sink0 sync=false signal-handoffs=true",
        model->path, model->props);
  } else {
    g_string_append (desc, "tee name=t");
    for (guint i = 0; i < N_ROI; i++) {
      gint r[4];
      roi_rect (i, 0, FALSE, r);
      g_string_append_printf (desc, " t. ! queue max-size-buffers=4 ! videocrop name=crop%u "
          "left=%d top=%d right=%d bottom=%d ! videoconvertscale ! video/x-raw,format=RGBP,"
          "width=%d,height=%d ! m2iinfer model=%s %s post-messages=false ! "
          "fakesink name=sink%u sync=false signal-handoffs=true", i, r[0], r[1],
          W - r[0] - r[2], H - r[1] - r[3], model->mw, model->mh, model->path, model->props,
          i + 1);
    }
  }
  GError *err = NULL;
  GstElement *pipe = gst_parse_launch (desc->str, &err);
  g_string_free (desc, TRUE);
  if (!pipe) {
    fprintf (stderr, "bench-roi: %s\n", err->message);
    g_clear_error (&err);
    return 0;
  }
  t->count = 0;
  t->expected = peer ? n * N_ROI : n;
  t->moving = moving;
  for (guint i = 0; i <= (peer ? N_ROI : 0); i++) {
    if (peer && i == 0)
      continue;
    gchar *name = g_strdup_printf ("sink%u", i);
    GstElement *sink = gst_bin_get_by_name (GST_BIN (pipe), name);
    g_object_set_data (G_OBJECT (sink), "branch", GINT_TO_POINTER (i));
    g_signal_connect (sink, "handoff", G_CALLBACK (on_handoff), t);
    gst_object_unref (sink);
    g_free (name);
    if (peer && moving) {
      name = g_strdup_printf ("crop%u", i - 1);
      GstElement *crop = gst_bin_get_by_name (GST_BIN (pipe), name);
      GstPad *pad = gst_element_get_static_pad (crop, "sink");
      gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, crop_probe, GUINT_TO_POINTER (i - 1),
          NULL);
      gst_object_unref (pad);
      gst_object_unref (crop);
      g_free (name);
    }
  }
  GstElement *src = gst_bin_get_by_name (GST_BIN (pipe), "src");
  for (guint f = 0; f < n; f++) {
    guint8 *data = frames + frame_size * (f % N_SOURCE);
    GstBuffer *b = gst_buffer_new_wrapped_full (GST_MEMORY_FLAG_READONLY, data, frame_size, 0,
        frame_size, NULL, NULL);
    GST_BUFFER_PTS (b) = gst_util_uint64_scale (f, GST_SECOND, 30);
    GST_BUFFER_DURATION (b) = gst_util_uint64_scale (1, GST_SECOND, 30);
    GST_BUFFER_OFFSET (b) = f;
    if (!peer)
      for (guint i = 0; i < N_ROI; i++) {
        gint r[4];
        roi_rect (i, f, moving, r);
        GstVideoRegionOfInterestMeta *m = gst_buffer_add_video_region_of_interest_meta (b,
            "person", (guint) r[0], (guint) r[1], (guint) r[2], (guint) r[3]);
        m->id = (gint) i;
      }
    gst_app_src_push_buffer (GST_APP_SRC (src), b);
  }
  gst_app_src_end_of_stream (GST_APP_SRC (src));
  gst_object_unref (src);
  gst_element_set_state (pipe, GST_STATE_PLAYING);
  GstBus *bus = gst_element_get_bus (pipe);
  GstMessage *m = gst_bus_timed_pop_filtered (bus, GST_CLOCK_TIME_NONE,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  gboolean ok = GST_MESSAGE_TYPE (m) == GST_MESSAGE_EOS && t->count == t->expected;
  if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_ERROR) {
    gchar *dbg = NULL;
    gst_message_parse_error (m, &err, &dbg);
    fprintf (stderr, "bench-roi: %s (%s)\n", err->message, dbg ? dbg : "");
    g_clear_error (&err);
    g_free (dbg);
  }
  gst_message_unref (m);
  gst_object_unref (bus);
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (pipe);
  if (!ok || t->last <= t->first)
    return 0;
  double frames_done = (double) (t->count - 1) / (peer ? N_ROI : 1);
  *cpu_ms = (t->cpu_last - t->cpu_first) * 1e-3 / frames_done;
  return frames_done * 1e6 / (double) (t->last - t->first);
}

static GOptionEntry entries[] = {
  { "model", 'm', 0, G_OPTION_ARG_FILENAME, &opt_model, "an image classifier (default the "
    "repository's Fashion-MNIST model)", "XML" },
  { "width", 0, 0, G_OPTION_ARG_INT, &opt_mw, "the model's input width (default 28)", "W" },
  { "height", 0, 0, G_OPTION_ARG_INT, &opt_mh, "the model's input height (default 28)", "H" },
  { "extra", 0, 0, G_OPTION_ARG_STRING, &opt_extra, "more m2iinfer properties, both ways "
    "(e.g. \"channel-order=bgr\")", "PROPS" },
  { NULL }
};

/* A classifier taking @w x @h, computing next to nothing: a Parameter
 * [1,3,h,w], ReduceMean over the image, SoftMax over the 3 channels. The
 * path of its .xml (test_ir_remove_files). */
static gchar *
standin_model (gint w, gint h)
{
  TestIr *b = test_ir_new (11);
  M2iShape in = { .rank = 4, .dims = { 1, 3, h, w } };
  M2iShape as = { .rank = 1, .dims = { 2 } };
  M2iShape o = { .rank = 2, .dims = { 1, 3 } };
  const gint64 axes[2] = { 2, 3 };
  gint inputs[2] = { test_ir_parameter (b, "image", M2I_ET_F32, &in),
    test_ir_const (b, M2I_ET_I64, &as, axes) };
  gint mean = test_ir_op (b, "ReduceMean", "opset1", "keep_dims=\"false\"", 2, inputs,
      M2I_ET_F32, &o);
  gint sm = test_ir_op (b, "SoftMax", "opset8", "axis=\"1\"", 1, &mean, M2I_ET_F32, &o);
  test_ir_result (b, sm);
  gchar *path = test_ir_write_files (test_ir_xml (b), test_ir_weights (b));
  test_ir_free (b);
  return path;
}

static void
bench_model (const Model *model, guint8 *frames, gsize frame_size, guint n)
{
  static const char *names[4] = {
    "m2iinfer inference-region=roi-list, static regions",
    "tee + 10 x videocrop ! videoconvertscale, static",
    "m2iinfer inference-region=roi-list, moving regions",
    "tee + 10 x videocrop ! videoconvertscale, moving",
  };
  double fps[4] = { 0 }, cpu[4] = { G_MAXDOUBLE, G_MAXDOUBLE, G_MAXDOUBLE, G_MAXDOUBLE };
  Timing t[4];
  gint peer_classes[4][N_ROI];
  for (int k = 0; k < 4; k++) {
    memset (&t[k], 0, sizeof t[k]);
    g_mutex_init (&t[k].lock);
    t[k].peer_classes = peer_classes[k];
  }
  for (int round = 0; round < ROUNDS; round++)
    for (int k = 0; k < 4; k++) {
      double c = G_MAXDOUBLE;
      double f = run (model, k % 2, k >= 2, frames, frame_size, n, &c, &t[k]);
      fps[k] = MAX (fps[k], f);
      cpu[k] = MIN (cpu[k], c);
    }
  printf ("\n%s, %dx%d input:\n  %-52s %9s  %s\n", model->name, model->mw, model->mh, "",
      "frames/s", "CPU ms/frame (all threads)");
  for (int k = 0; k < 4; k++)
    printf ("  %-52s %9.1f  %7.2f%s\n", names[k], fps[k], cpu[k], fps[k] > 0 ? "" : "  (FAILED)");
  for (int s = 0; s < 2; s++)
    if (fps[2 * s] > 0 && fps[2 * s + 1] > 0)
      printf ("  %s regions: m2iinfer roi-list %.2fx the frame rate, %.2fx less CPU per frame\n",
          s ? "moving" : "static", fps[2 * s] / fps[2 * s + 1], cpu[2 * s + 1] / cpu[2 * s]);
  guint same = 0;
  for (int i = 0; i < N_ROI; i++)
    same += t[0].classes[i] == peer_classes[1][i];
  printf ("  same class both ways on %u of the %d regions of the last static frame\n", same,
      N_ROI);
  for (int k = 0; k < 4; k++)
    g_mutex_clear (&t[k].lock);
}

int
main (int argc, char **argv)
{
  if (!g_getenv ("GST_PLUGIN_PATH"))
    g_setenv ("GST_PLUGIN_PATH", M2I_GST_PLUGIN_DIR, TRUE);
  GOptionContext *octx = g_option_context_new ("[FRAMES]");
  g_option_context_add_main_entries (octx, entries, NULL);
  g_option_context_add_group (octx, gst_init_get_option_group ());
  GError *error = NULL;
  if (!g_option_context_parse (octx, &argc, &argv, &error)) {
    fprintf (stderr, "bench-roi: %s\n", error->message);
    return 2;
  }
  g_option_context_free (octx);
  guint n = argc > 1 ? (guint) atoi (argv[1]) : 60;
  n = MAX (n, 4);
  Model models[2];
  guint n_models = 0;
  gchar *standin = NULL;
  if (opt_model) {
    models[n_models++] = (Model) { "the given model", opt_model, opt_mw, opt_mh,
      opt_extra ? opt_extra : "" };
  } else {
    models[n_models++] = (Model) { "Fashion-MNIST classifier (models/fashion-mnist)",
      g_build_filename (M2I_SOURCE_ROOT, "models", "fashion-mnist", "fashion-mnist.xml", NULL),
      28, 28, FM_NORM };
    standin = standin_model (80, 160);
    models[n_models++] = (Model) { "stand-in person-attribute classifier, 80x160 input, "
      "ReduceMean + SoftMax", standin, 80, 160, "channel-order=bgr" };
  }
  gsize frame_size;
  guint8 *frames = make_frames (&frame_size);
  printf ("NV12 %dx%d, %d regions per frame (61x143 to 240x520), %u frames per pipeline, best "
      "of %d rounds, %u cores\n", W, H, N_ROI, n, ROUNDS, g_get_num_processors ());
  for (guint mi = 0; mi < n_models; mi++)
    bench_model (&models[mi], frames, frame_size, n);
  g_free (frames);
  if (standin) {
    g_free (models[0].path);
    test_ir_remove_files (standin);
  }
  return 0;
}
