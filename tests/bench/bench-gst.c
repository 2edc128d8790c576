/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-gst.c — frames per second of the m2i element chain, fused and not,
 * next to GStreamer's videoconvertscale, in one run.
 *
 * Every pipeline is appsrc (a fixed set of pre-generated NV12 1920x1080
 * frames, wrapped without copies) ! <pre-processing> ! fakesink sync=false.
 * The rate is measured between the first and the last buffer reaching the
 * sink, so pipeline start-up, planning and pool allocation are not counted.
 * The pipelines run in turn, five rounds; each one's best round is shown
 * (other processes on the machine only ever make a round slower), with the
 * CPU time per frame summed over all threads (less sensitive to a loaded
 * machine than the rate).
 *
 *   GST_PLUGIN_PATH=build/gst build/tests/bench/bench-gst [frames]
 *
 * (the plugin directory of the build is used when GST_PLUGIN_PATH is unset).
 */
#include "bench-gst-run.h"
#include <m2i-core/m2i/m2i.h>
#include <test-support.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define W 1920
#define H 1080
#define N_SOURCE_FRAMES 8
#define ROUNDS 5
#define NORM "mean=\"<0.485, 0.456, 0.406>\" std=\"<0.229, 0.224, 0.225>\" " \
  "input-scale=0.00392156862745098"
#define TENSOR_224 "other/tensors,format=static,num_tensors=1,types=float16,dimensions=224:224:3:1"
#define RGBP_224 "video/x-raw,format=RGBP,width=224,height=224"

typedef struct {
  const char *name;
  const char *chain;
} Config;

/* configs[] in this order */
enum { FUSED, FUSED_1T, FUSED_EXT, UNFUSED, RGBP, RGBP_UNFUSED, VCS_1T, VCS_2T };

static const Config configs[] = {
  { "m2i fused   cc ! resize ! norm  (default profile)",
    "m2icolorconvert ! m2iresize ! m2inorm " NORM " ! " TENSOR_224 },
  { "m2i fused   cc ! resize ! norm  (default, n-threads=1)",
    "m2icolorconvert ! m2iresize ! m2inorm n-threads=1 " NORM " ! " TENSOR_224 },
  { "m2i fused   cc ! resize ! norm  (extended profile)",
    "m2icolorconvert profile=extended ! m2iresize profile=extended ! m2inorm profile=extended "
    NORM " ! " TENSOR_224 },
  { "m2i unfused cc ! resize ! norm  (fusion=false)",
    "m2icolorconvert fusion=false ! m2iresize fusion=false ! m2inorm fusion=false " NORM
    " ! " TENSOR_224 },
  { "m2i fused   cc ! resize -> RGBP 224x224",
    "m2icolorconvert ! m2iresize ! " RGBP_224 },
  { "m2i unfused cc ! resize -> RGBP 224x224",
    "m2icolorconvert fusion=false ! m2iresize fusion=false ! " RGBP_224 },
  { "videoconvertscale -> RGBP 224x224 (default, n-threads=1)",
    "videoconvertscale ! " RGBP_224 },
  { "videoconvertscale -> RGBP 224x224 (n-threads=2)",
    "videoconvertscale n-threads=2 ! " RGBP_224 },
};

/* Frames per second; *cpu_ms: CPU time (all threads) per frame. */
static double
run (const Config *cfg, guint8 *frames, gsize frame_size, guint n_frames, gboolean *ok,
    double *cpu_ms)
{
  gchar *desc = g_strdup_printf ("appsrc name=src format=time is-live=false "
      "caps=video/x-raw,format=NV12,width=%d,height=%d,framerate=30/1 ! %s ! "
      "fakesink name=sink sync=false signal-handoffs=true", W, H, cfg->chain);
  BenchTiming t = { .expected = n_frames };
  double fps = bench_gst_run (cfg->name, desc, frames, frame_size, N_SOURCE_FRAMES, 30, &t,
      cpu_ms);
  g_free (desc);
  *ok = fps > 0;
  return fps;
}

int
main (int argc, char **argv)
{
  if (!g_getenv ("GST_PLUGIN_PATH"))
    g_setenv ("GST_PLUGIN_PATH", M2I_GST_PLUGIN_DIR, TRUE);
  gst_init (&argc, &argv);
  guint n = argc > 1 ? (guint) atoi (argv[1]) : 300;
  if (n < 10)
    n = 10;
  gsize frame_size;
  guint8 *frames = bench_nv12_frames (W, H, N_SOURCE_FRAMES, &frame_size);
  double fps[G_N_ELEMENTS (configs)] = { 0 }, cpu[G_N_ELEMENTS (configs)];
  gboolean ok[G_N_ELEMENTS (configs)];
  printf ("NV12 %dx%d -> 224x224, %u frames per pipeline, best of %d rounds, %u cores\n", W, H,
      n, ROUNDS, g_get_num_processors ());
  for (guint i = 0; i < G_N_ELEMENTS (configs); i++)
    cpu[i] = G_MAXDOUBLE;
  for (int round = 0; round < ROUNDS; round++)
    for (guint i = 0; i < G_N_ELEMENTS (configs); i++) {
      double c = G_MAXDOUBLE;
      double f = run (&configs[i], frames, frame_size, n, &ok[i], &c);
      fps[i] = MAX (fps[i], f);
      cpu[i] = MIN (cpu[i], c);
    }
  printf ("  %-58s %9s  %s\n", "", "frames/s", "CPU ms/frame (all threads)");
  for (guint i = 0; i < G_N_ELEMENTS (configs); i++)
    printf ("  %-58s %9.1f  %6.3f%s\n", configs[i].name, fps[i], cpu[i],
        ok[i] ? "" : "  (FAILED)");
  if (fps[FUSED] > 0 && fps[UNFUSED] > 0 && fps[VCS_1T] > 0 && fps[VCS_2T] > 0) {
    printf ("fused (default profile) vs videoconvertscale: %.2fx the rate (n-threads=1), %.2fx "
        "(n-threads=2), %.2fx less CPU per frame\n", fps[FUSED] / fps[VCS_1T],
        fps[FUSED] / fps[VCS_2T], cpu[VCS_1T] / cpu[FUSED]);
    printf ("fused vs unfused: %.2fx the rate (default profile), %.2fx (extended), %.2fx less "
        "CPU per frame\n", fps[FUSED] / fps[UNFUSED], fps[FUSED_EXT] / fps[UNFUSED],
        cpu[UNFUSED] / cpu[FUSED]);
  }
  if (fps[FUSED_1T] > 0 && fps[VCS_1T] > 0)
    printf ("fused, one thread each, vs videoconvertscale n-threads=1: %.2fx the rate, %.2fx "
        "less CPU per frame\n", fps[FUSED_1T] / fps[VCS_1T], cpu[VCS_1T] / cpu[FUSED_1T]);
  g_free (frames);
  return 0;
}
