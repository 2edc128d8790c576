/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-infer.c — frames per second of the demo pipeline (Fashion-MNIST
 * frames through pre-processing and m2iinfer), with the pre-processing done
 * four ways, in one run:
 *
 *   fused     appsrc ! m2icolorconvert ! m2iresize ! m2inorm ! m2iinfer
 *             (one M2I plan per frame writing the model's input)
 *   unfused   the same with fusion=false on every element
 *   own       appsrc ! m2iinfer mean/std (m2iinfer plans the pre-processing)
 *   vcs       appsrc ! videoconvertscale ! video/x-raw,format=RGB,28x28 !
 *             m2iinfer mean/std (GStreamer converts and scales; m2iinfer
 *             only normalises), with n-threads=1 (default) and 2
 *
 * all with the model on the CPU (device=CPU), so that the pre-processing is
 * what differs; a last row runs the fused pipeline with the model split
 * between the simulated device and the CPU (the default, AUTO).
 *
 * Frames: the first 64 Fashion-MNIST test images (tests/data/fashion-mnist)
 * drawn S times larger as NV12 (Y from the grey value, U = V = 128), as the
 * demo does; S = 4 (112x112, the demo) and S = 20 (560x560, where the
 * pre-processing weighs more). Every pipeline also reports its accuracy on
 * those images (the class read from the region meta vs the true label), so
 * a fast but wrong path shows. The rate is measured between the first and
 * the last buffer at the sink (start-up and model loading excluded), best of
 * ROUNDS rounds, with the CPU time per frame over all threads.
 *
 *   build/tests/bench/bench-infer [frames]     (default 3000)
 */
#include "bench-gst-run.h"
#include "m2i-data.h"

#include <gst/video/gstvideometa.h>
#include <stdlib.h>
#include <string.h>

#ifndef M2I_GST_PLUGIN_DIR
#define M2I_GST_PLUGIN_DIR "build/gst"
#endif
#ifndef M2I_SOURCE_ROOT
#define M2I_SOURCE_ROOT "."
#endif

#define SIDE 28
#define N_IMAGES 64
#define ROUNDS 3
#define NORM "mean=\"<0.286>\" std=\"<0.353>\" input-scale=0.00392156862745098"

typedef struct {
  const char *name;
  const char *chain;           /* %s: the model, %s: labels */
} Config;

static const Config configs[] = {
  { "fused    cc ! resize ! norm ! m2iinfer",
    "m2icolorconvert ! m2iresize ! m2inorm " NORM " ! m2iinfer model=%s labels=%s device=CPU" },
  { "unfused  cc ! resize ! norm ! m2iinfer (fusion=false)",
    "m2icolorconvert fusion=false ! m2iresize fusion=false ! m2inorm fusion=false " NORM
    " ! m2iinfer fusion=false model=%s labels=%s device=CPU" },
  { "own      m2iinfer pre-processing itself",
    "m2iinfer " NORM " model=%s labels=%s device=CPU" },
  { "vcs      videoconvertscale ! RGB 28x28 ! m2iinfer",
    "videoconvertscale ! video/x-raw,format=RGB,width=28,height=28 ! m2iinfer " NORM
    " model=%s labels=%s device=CPU" },
  { "vcs      videoconvertscale n-threads=2 ! ... ! m2iinfer",
    "videoconvertscale n-threads=2 ! video/x-raw,format=RGB,width=28,height=28 ! m2iinfer "
    NORM " model=%s labels=%s device=CPU" },
  { "fused    ... ! m2iinfer device=HETERO:M2I,CPU (AUTO)",
    "m2icolorconvert ! m2iresize ! m2inorm " NORM " ! m2iinfer model=%s labels=%s "
    "device=HETERO:M2I,CPU" },
};
#define N_CONFIGS G_N_ELEMENTS (configs)

typedef struct {
  guint correct;
  const guint8 *truth;
} Accuracy;

/* Counts the buffers whose region meta has the image's true class. */
static void
count_correct (GstBuffer *buf, gpointer data)
{
  Accuracy *a = data;
  gpointer state = NULL;
  GstVideoRegionOfInterestMeta *roi = (GstVideoRegionOfInterestMeta *)
      gst_buffer_iterate_meta_filtered (buf, &state, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE);
  gint id;
  if (roi && roi->params && gst_structure_get_int (roi->params->data, "label_id", &id))
    a->correct += id == a->truth[GST_BUFFER_OFFSET (buf) % N_IMAGES];
}

static guint8 *
read_file (const char *rel, gsize want)
{
  gchar *path = g_build_filename (M2I_SOURCE_ROOT, rel, NULL), *data = NULL;
  gsize len = 0;
  if (!g_file_get_contents (path, &data, &len, NULL) || len < want) {
    fprintf (stderr, "bench-infer: cannot read %s\n", path);
    exit (2);
  }
  g_free (path);
  return (guint8 *) data;
}

/* The images drawn @s times larger as NV12, one after another. */
static guint8 *
make_frames (const guint8 *images, gint s, gsize *frame_size)
{
  gint w = SIDE * s;
  gsize sz = (gsize) w * w * 3 / 2;
  guint8 *mem = g_malloc (sz * N_IMAGES);
  for (int f = 0; f < N_IMAGES; f++)
    m2i_data_grey_to_nv12 (images + f * SIDE * SIDE, SIDE, s, mem + sz * f);
  *frame_size = sz;
  return mem;
}

/* Frames per second; *cpu_ms: CPU time (all threads) per frame; *acc: the
 * fraction of frames classified as their label. */
static double
run (const Config *cfg, gint w, guint8 *frames, gsize frame_size, guint n_frames,
    const guint8 *truth, double *cpu_ms, double *acc_out)
{
  gchar *model = g_build_filename (M2I_SOURCE_ROOT, "models/fashion-mnist/fashion-mnist.xml", NULL);
  gchar *labels = g_build_filename (M2I_SOURCE_ROOT, "models/fashion-mnist/labels.txt", NULL);
  gchar *chain = g_strdup_printf (cfg->chain, model, labels);
  gchar *desc = g_strdup_printf ("appsrc name=src format=time is-live=false "
      "caps=video/x-raw,format=NV12,width=%d,height=%d,framerate=1000/1 ! %s post-messages=false "
      "! fakesink name=sink sync=false signal-handoffs=true", w, w, chain);
  g_free (chain);
  g_free (model);
  g_free (labels);
  Accuracy acc = { 0, truth };
  BenchTiming t = { .expected = n_frames, .on_buffer = count_correct, .data = &acc };
  double fps = bench_gst_run (cfg->name, desc, frames, frame_size, N_IMAGES, 1000, &t, cpu_ms);
  g_free (desc);
  *acc_out = fps > 0 ? (double) acc.correct / t.count : 0;
  return fps;
}

int
main (int argc, char **argv)
{
  if (!g_getenv ("GST_PLUGIN_PATH"))
    g_setenv ("GST_PLUGIN_PATH", M2I_GST_PLUGIN_DIR, TRUE);
  gst_init (&argc, &argv);
  guint n = argc > 1 ? (guint) atoi (argv[1]) : 3000;
  if (n < 2 * N_IMAGES)
    n = 2 * N_IMAGES;
  const guint8 *images = read_file ("tests/data/fashion-mnist/first64.images.u8",
      N_IMAGES * SIDE * SIDE);
  guint8 *labels = read_file ("tests/data/fashion-mnist/t10k.labels.u8", N_IMAGES);
  static const gint scales[] = { 4, 20 };
  printf ("Fashion-MNIST demo pipeline: the first %d test images as NV12, %u frames per "
      "pipeline, best of %d rounds, %u cores\n", N_IMAGES, n, ROUNDS, g_get_num_processors ());
  for (guint si = 0; si < G_N_ELEMENTS (scales); si++) {
    gint w = SIDE * scales[si];
    gsize frame_size;
    guint8 *frames = make_frames (images, scales[si], &frame_size);
    double fps[N_CONFIGS] = { 0 }, cpu[N_CONFIGS], acc[N_CONFIGS] = { 0 };
    for (guint i = 0; i < N_CONFIGS; i++)
      cpu[i] = G_MAXDOUBLE;
    for (int round = 0; round < ROUNDS; round++)
      for (guint i = 0; i < N_CONFIGS; i++) {
        double c = G_MAXDOUBLE, a = 0;
        double f = run (&configs[i], w, frames, frame_size, n, labels, &c, &a);
        fps[i] = MAX (fps[i], f);
        cpu[i] = MIN (cpu[i], c);
        acc[i] = MAX (acc[i], a);
      }
    printf ("\nNV12 %dx%d -> 28x28 -> fashion-mnist\n", w, w);
    printf ("  %-56s %9s  %8s  %s\n", "", "frames/s", "CPU ms", "accuracy");
    for (guint i = 0; i < N_CONFIGS; i++)
      printf ("  %-56s %9.0f  %8.3f  %6.2f%%%s\n", configs[i].name, fps[i], cpu[i],
          100.0 * acc[i], fps[i] > 0 ? "" : "  (FAILED)");
    if (fps[0] > 0 && fps[1] > 0 && fps[3] > 0)
      printf ("  fused: %.2fx the unfused rate, %.2fx videoconvertscale's (n-threads=1), "
          "%.2fx (n-threads=2)\n", fps[0] / fps[1], fps[0] / fps[3],
          fps[4] > 0 ? fps[0] / fps[4] : 0.0);
    g_free (frames);
  }
  g_free ((gpointer) images);
  g_free (labels);
  return 0;
}
