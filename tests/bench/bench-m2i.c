/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-m2i — the M2I engine beside libyuv and GstVideoConverter, in one run.
 *
 * (a) NV12 1920x1080 -> IL_RGB888 1920x1080
 * (b) NV12 1920x1080 -> PL_FP16_RGB 224x224 normalized (ImageNet mean/std):
 *     fused as one task, as the default profile's two tasks, and as five
 *     separate tasks (one per op); peers: libyuv NV12Scale + NV12ToRGB24 to
 *     224x224 u8 (less work: no fp16, no norm, no planar) and
 *     GstVideoConverter to RGBP 224x224
 * (c) the same from I420.
 * (d) BGRx 1920x1080 -> PL_FP32_RGB 640x640 / 255 (a YOLO input from a
 *     4-byte camera frame): the extended profile's pixel chain (dropAlpha
 *     -> convertU8F32 -> resize -> permute -> norm as one task), the
 *     default profile's (on the CPU, fp16 out); peers: libyuv ARGBScale to
 *     640x640 BGRA u8 (less work) and GstVideoConverter to RGBP 640x640 u8;
 *     the memory floor: the frame read and the fp32 planes' bytes written.
 * m2i and GstVideoConverter at 1 and 2 threads; libyuv is single-threaded.
 * Contenders of a block are timed in interleaved rounds (7 by default); each
 * figure is the contender's best round (mean us/frame over the round's
 * repetitions).
 * Usage: bench-m2i [seconds-per-figure, default 0.5] [rounds, default 7]
 */
#include "bench-cpu.h"
#include <m2i-core.h>
#include <gst/gst.h>
#include <gst/video/video.h>
#include <libyuv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define W 1920
#define H 1080
#define S 224

static double budget = 0.5;

typedef void (*RunFunc) (gpointer data);

/* The contenders of one block are timed in interleaved rounds (each round
 * times every contender once), and each keeps its best round: load from
 * other processes then hits all of them alike instead of whichever ran at
 * the wrong moment. */
#define MAX_CONTENDERS 8

/* Interleaved rounds per block (second argument, default 7). On a shared
 * machine more, shorter rounds make it likelier that some round of a
 * two-thread contender finds both cores free. */
static int rounds = 7;

typedef struct {
  gchar *name;
  RunFunc fn;
  gpointer data;
  double best, best_cpu;
} Contender;

static Contender contenders[MAX_CONTENDERS];
static int n_contenders;

static void
add (const char *name, RunFunc fn, gpointer data)
{
  Contender *c = &contenders[n_contenders++];
  c->name = g_strdup (name);
  c->fn = fn;
  c->data = data;
  c->best = c->best_cpu = 1e30;
}

static double
time_reps (Contender *c, int reps)
{
  double c0 = bench_cpu_us ();
  gint64 t0 = g_get_monotonic_time ();
  for (int i = 0; i < reps; i++)
    c->fn (c->data);
  double wall = (double) (g_get_monotonic_time () - t0) / reps;
  c->best_cpu = MIN (c->best_cpu, (bench_cpu_us () - c0) / reps);
  return wall;
}

static void
run_block (void)
{
  int reps[MAX_CONTENDERS];
  for (int i = 0; i < n_contenders; i++) {
    Contender *c = &contenders[i];
    double per = time_reps (c, 3);
    reps[i] = MAX (1, (int) (budget * 1e6 / rounds / per));
  }
  for (int r = 0; r < rounds; r++)
    for (int i = 0; i < n_contenders; i++)
      contenders[i].best = MIN (contenders[i].best, time_reps (&contenders[i], reps[i]));
  printf ("  %-56s %9s %7s %9s %7s\n", "", "wall us", "x", "cpu us", "x");
  for (int i = 0; i < n_contenders; i++) {
    Contender *c = &contenders[i];
    printf ("  %-56s %9.1f %6.2fx %9.1f %6.2fx\n", c->name, c->best,
        c->best / contenders[0].best, c->best_cpu, c->best_cpu / contenders[0].best_cpu);
    g_free (c->name);
  }
  n_contenders = 0;
}

/* ---- inputs ---------------------------------------------------------------- */

static guint8 *src_buf[3];
static M2iImage src_img[3];              /* [0] NV12, [1] I420, [2] BGRx */

static void
make_inputs (void)
{
  for (int k = 0; k < 3; k++) {
    M2iFormat f = k == 2 ? M2I_FORMAT_IL_BGRX8888 : k ? M2I_FORMAT_PL_YUV420_8
        : M2I_FORMAT_SP_NV12_8;
    gsize sz = m2i_image_wrap_size (f, W, H, 0);
    src_buf[k] = g_malloc (sz);
    guint32 x = 12345;
    for (gsize i = 0; i < sz; i++) {
      x = x * 1103515245u + 12345u;
      src_buf[k][i] = (guint8) ((i % W) / 8 + (x >> 27));
    }
    m2i_image_wrap (&src_img[k], f, W, H, src_buf[k], sz, 0, NULL);
  }
}

/* ---- m2i ------------------------------------------------------------------- */

typedef struct {
  M2iPlan *plan[5];
  guint n;
  M2iImage img[6];                       /* img[0] input ... img[n] output */
  guint8 *buf[6];
} M2iRun;

static void
m2i_run (gpointer data)
{
  M2iRun *r = data;
  for (guint i = 0; i < r->n; i++)
    if (!m2i_plan_run (r->plan[i], &r->img[i], &r->img[i + 1], NULL))
      g_error ("m2i run failed");
}

static void
alloc_img (M2iRun *r, guint i, M2iFormat f, gint w, gint h)
{
  gsize sz = m2i_image_wrap_size (f, w, h, 0);
  r->buf[i] = g_malloc0 (sz);
  m2i_image_wrap (&r->img[i], f, w, h, r->buf[i], sz, 0, NULL);
}

/* One plan of the whole chain (ops), or one plan per op (separate). */
static M2iRun *
m2i_setup (int src, const M2iOpList *ops, M2iFormat out_fmt, gint ow, gint oh,
    M2iProfile prof, gint threads, gboolean separate)
{
  M2iRun *r = g_new0 (M2iRun, 1);
  r->img[0] = src_img[src];
  M2iPlanOptions o = { prof, threads };
  GError *err = NULL;
  if (!separate) {
    r->n = 1;
    alloc_img (r, 1, out_fmt, ow, oh);
    r->plan[0] = m2i_plan_new (&r->img[0], ops, &r->img[1], &o, &err);
  } else {
    /* the intermediate after each op, as the reference path would have it */
    M2iFormat f = M2I_FORMAT_IL_RGB888;
    gint w = W, h = H;
    r->n = ops->n_ops;
    for (guint i = 0; i < ops->n_ops && !err; i++) {
      const M2iOp *op = &ops->ops[i];
      if (op->kind == M2I_OP_CONVERT)
        f = M2I_FORMAT_IL_FP16_RGB;
      if (op->kind == M2I_OP_PERMUTE)
        f = M2I_FORMAT_PL_FP16_RGB;
      if (op->kind == M2I_OP_RESIZE) {
        w = op->u.resize.out_width;
        h = op->u.resize.out_height;
      }
      alloc_img (r, i + 1, f, w, h);
      M2iOpList one;
      m2i_op_list_init (&one);
      one.ops[one.n_ops++] = *op;
      r->plan[i] = m2i_plan_new (&r->img[i], &one, &r->img[i + 1], &o, &err);
    }
  }
  if (err)
    g_error ("plan: %s", err->message);
  return r;
}

static void
m2i_free_run (M2iRun *r)
{
  for (guint i = 0; i < r->n; i++) {
    m2i_plan_free (r->plan[i]);
    g_free (r->buf[i + 1]);
  }
  g_free (r);
}

/* ---- libyuv ---------------------------------------------------------------- */

typedef struct {
  int src;
  gboolean raw;                          /* R,G,B byte order (RAW) vs B,G,R (RGB24) */
  gboolean scale;
  guint8 *small, *rgb;
} YuvRun;

static void
yuv_run (gpointer data)
{
  YuvRun *r = data;
  const M2iImage *s = &src_img[r->src];
  if (!r->scale) {
    if (r->src == 0)
      (r->raw ? NV12ToRAW : NV12ToRGB24) (s->data[0], W, s->data[1], W, r->rgb, W * 3, W, H);
    else
      (r->raw ? I420ToRAW : I420ToRGB24) (s->data[0], W, s->data[1], W / 2, s->data[2], W / 2,
          r->rgb, W * 3, W, H);
    return;
  }
  guint8 *y = r->small, *c = r->small + S * S;
  if (r->src == 0) {
    NV12Scale (s->data[0], W, s->data[1], W, W, H, y, S, c, S, S, S, kFilterBilinear);
    NV12ToRGB24 (y, S, c, S, r->rgb, S * 3, S, S);
  } else {
    I420Scale (s->data[0], W, s->data[1], W / 2, s->data[2], W / 2, W, H, y, S, c, S / 2,
        c + S * S / 4, S / 2, S, S, kFilterBilinear);
    I420ToRGB24 (y, S, c, S / 2, c + S * S / 4, S / 2, r->rgb, S * 3, S, S);
  }
}

/* libyuv's ARGBScale of the BGRx frame (libyuv's ARGB is B,G,R,A in memory). */
typedef struct {
  guint8 *small;
  gint w, h;
} ArgbRun;

static void
argb_run (gpointer data)
{
  ArgbRun *r = data;
  ARGBScale (src_img[2].data[0], W * 4, W, H, r->small, r->w * 4, r->w, r->h, kFilterBilinear);
}

/* The memory traffic of (d) alone: every byte of the BGRx frame read, the
 * 640x640 fp32 planes' bytes written (the frame's first 4.9 MB copied by
 * memcpy, the rest read 8 bytes at a time). */
typedef struct {
  guint8 *out;
  gsize n_out;
  guint64 sink;
} FloorRun;

static void
floor_run (gpointer data)
{
  FloorRun *r = data;
  gsize n_in = (gsize) W * H * 4;
  memcpy (r->out, src_img[2].data[0], r->n_out);
  guint64 acc = 0;
  for (gsize i = r->n_out; i + 8 <= n_in; i += 8) {
    guint64 v;
    memcpy (&v, src_img[2].data[0] + i, 8);
    acc ^= v;
  }
  r->sink ^= acc;
}

/* ---- GstVideoConverter ------------------------------------------------------- */

typedef struct {
  GstVideoConverter *conv;
  GstVideoFrame in, out;
  GstBuffer *inbuf, *outbuf;
} GstRun;

static GstRun *
gst_setup (int src, GstVideoFormat outf, gint ow, gint oh, guint threads)
{
  GstRun *r = g_new0 (GstRun, 1);
  GstVideoInfo ii, oi;
  gst_video_info_set_format (&ii, src == 2 ? GST_VIDEO_FORMAT_BGRx : src
      ? GST_VIDEO_FORMAT_I420 : GST_VIDEO_FORMAT_NV12, W, H);
  gst_video_info_set_format (&oi, outf, ow, oh);
  r->inbuf = gst_buffer_new_allocate (NULL, GST_VIDEO_INFO_SIZE (&ii), NULL);
  gst_buffer_fill (r->inbuf, 0, src_buf[src], MIN (GST_VIDEO_INFO_SIZE (&ii),
          m2i_image_wrap_size (src_img[src].format, W, H, 0)));
  r->outbuf = gst_buffer_new_allocate (NULL, GST_VIDEO_INFO_SIZE (&oi), NULL);
  gst_video_frame_map (&r->in, &ii, r->inbuf, GST_MAP_READ);
  gst_video_frame_map (&r->out, &oi, r->outbuf, GST_MAP_WRITE);
  r->conv = gst_video_converter_new (&ii, &oi, gst_structure_new ("options",
          GST_VIDEO_CONVERTER_OPT_THREADS, G_TYPE_UINT, threads, NULL));
  return r;
}

static void
gst_run (gpointer data)
{
  GstRun *r = data;
  gst_video_converter_frame (r->conv, &r->in, &r->out);
}

static void
gst_free_run (GstRun *r)
{
  gst_video_converter_free (r->conv);
  gst_video_frame_unmap (&r->in);
  gst_video_frame_unmap (&r->out);
  gst_buffer_unref (r->inbuf);
  gst_buffer_unref (r->outbuf);
  g_free (r);
}

int
main (int argc, char **argv)
{
  gst_init (&argc, &argv);
  if (argc > 1)
    budget = atof (argv[1]);
  if (argc > 2)
    rounds = CLAMP (atoi (argv[2]), 1, 1000);
  make_inputs ();
  printf ("bench-m2i: CPU %s, %d cores; libyuv %d; GStreamer %s\nkernels: %s\n",
      m2i_cpu_flags_string (), m2i_parallel_n_cores (), LIBYUV_VERSION, gst_version_string (),
      m2i_cpu_kernels_string ());
  printf ("x: this time / the block's first line (m2i, 1 thread); above 1 means "
      "slower than m2i.\nwall: best round's wall time per frame; cpu: process CPU time "
      "per frame (all threads), steadier on a busy machine; best of %d rounds\n", rounds);

  M2iResizeParams rp;
  m2i_resize_params_init (&rp, S, S);
  rp.mode = M2I_RESIZE_LINEAR;
  rp.coord = M2I_COORD_HALF_PIXEL;
  M2iNormParams norm;
  const float mean[3] = { 0.485f, 0.456f, 0.406f }, std[3] = { 0.229f, 0.224f, 0.225f };
  m2i_norm_params_from_mean_std (&norm, mean, std, 1.0f / 255.0f);

  for (int src = 0; src < 2; src++) {
    const char *sn = src ? "I420" : "NV12";
    /* (a) */
    printf ("\n(%s) %s 1920x1080 -> RGB 1920x1080\n",
        src ? "c" : "a", sn);
    M2iOpList csc;
    m2i_op_list_init (&csc);
    m2i_op_list_add_csc (&csc, M2I_ORDER_RGB);
    M2iRun *m1 = m2i_setup (src, &csc, M2I_FORMAT_IL_RGB888, W, H, M2I_PROFILE_DEFAULT, 1, FALSE);
    M2iRun *m2 = m2i_setup (src, &csc, M2I_FORMAT_IL_RGB888, W, H, M2I_PROFILE_DEFAULT, 2, FALSE);
    YuvRun yraw = { src, TRUE, FALSE, NULL, g_malloc (W * H * 3) };
    YuvRun y24 = { src, FALSE, FALSE, NULL, g_malloc (W * H * 3) };
    GstRun *g1 = gst_setup (src, GST_VIDEO_FORMAT_RGB, W, H, 1);
    GstRun *g2 = gst_setup (src, GST_VIDEO_FORMAT_RGB, W, H, 2);
    add ("m2i IL_RGB888, 1 thread", m2i_run, m1);
    add ("m2i IL_RGB888, 2 threads", m2i_run, m2);
    add (src ? "libyuv I420ToRAW (R,G,B order)" : "libyuv NV12ToRAW (R,G,B order)", yuv_run, &yraw);
    add (src ? "libyuv I420ToRGB24 (B,G,R order)" : "libyuv NV12ToRGB24 (B,G,R order)", yuv_run, &y24);
    add ("GstVideoConverter -> RGB, n-threads 1", gst_run, g1);
    add ("GstVideoConverter -> RGB, n-threads 2", gst_run, g2);
    run_block ();
    m2i_free_run (m1);
    m2i_free_run (m2);
    gst_free_run (g1);
    gst_free_run (g2);
    g_free (yraw.rgb);
    g_free (y24.rgb);

    /* (b) */
    printf ("\n(%s) %s 1920x1080 -> PL_FP16_RGB 224x224 normalized (linear, half_pixel)\n",
        src ? "c" : "b", sn);
    M2iOpList chain;
    m2i_op_list_init (&chain);
    m2i_op_list_add_csc (&chain, M2I_ORDER_RGB);
    m2i_op_list_add_convert (&chain, M2I_DTYPE_F16);
    m2i_op_list_add_resize (&chain, &rp);
    m2i_op_list_add_permute (&chain);
    m2i_op_list_add_norm (&chain, &norm);
    M2iRun *f1 = m2i_setup (src, &chain, M2I_FORMAT_PL_FP16_RGB, S, S, M2I_PROFILE_EXTENDED, 1, FALSE);
    M2iRun *f2 = m2i_setup (src, &chain, M2I_FORMAT_PL_FP16_RGB, S, S, M2I_PROFILE_EXTENDED, 2, FALSE);
    M2iRun *d1 = m2i_setup (src, &chain, M2I_FORMAT_PL_FP16_RGB, S, S, M2I_PROFILE_DEFAULT, 1, FALSE);
    M2iRun *s1 = m2i_setup (src, &chain, M2I_FORMAT_PL_FP16_RGB, S, S, M2I_PROFILE_EXTENDED, 1, TRUE);
    YuvRun ys = { src, FALSE, TRUE, g_malloc (S * S * 2), g_malloc (S * S * 3) };
    GstRun *h1 = gst_setup (src, GST_VIDEO_FORMAT_RGBP, S, S, 1);
    GstRun *h2 = gst_setup (src, GST_VIDEO_FORMAT_RGBP, S, S, 2);
    add ("m2i fused, one task (extended), 1 thread", m2i_run, f1);
    add ("m2i fused, one task (extended), 2 threads", m2i_run, f2);
    add ("m2i default profile, 2 tasks (norm apart), 1 thread", m2i_run, d1);
    add ("m2i unfused, 5 separate tasks, 1 thread", m2i_run, s1);
    add (src ? "libyuv I420Scale + I420ToRGB24 224x224 u8" : "libyuv NV12Scale + NV12ToRGB24 224x224 u8",
        yuv_run, &ys);
    add ("GstVideoConverter -> RGBP 224x224 u8, n-threads 1", gst_run, h1);
    add ("GstVideoConverter -> RGBP 224x224 u8, n-threads 2", gst_run, h2);
    run_block ();
    m2i_free_run (f1);
    m2i_free_run (f2);
    m2i_free_run (d1);
    m2i_free_run (s1);
    gst_free_run (h1);
    gst_free_run (h2);
    g_free (ys.small);
    g_free (ys.rgb);
  }
  /* (d) */
  printf ("\n(d) BGRx 1920x1080 -> PL_FP32_BGR 640x640 / 255 (linear, half_pixel; an RGB input takes the planes swapped)\n");
  {
    M2iResizeParams yp;
    m2i_resize_params_init (&yp, 640, 640);
    yp.mode = M2I_RESIZE_LINEAR;
    const float zero[3] = { 0, 0, 0 }, one[3] = { 1, 1, 1 };
    M2iNormParams scale;
    m2i_norm_params_from_mean_std (&scale, zero, one, 1.0f / 255.0f);
    M2iOpList c32, c16;
    for (int k = 0; k < 2; k++) {
      M2iOpList *c = k ? &c16 : &c32;
      m2i_op_list_init (c);
      m2i_op_list_add_drop_alpha (c);
      m2i_op_list_add_convert (c, k ? M2I_DTYPE_F16 : M2I_DTYPE_F32);
      m2i_op_list_add_resize (c, &yp);
      m2i_op_list_add_permute (c);
      m2i_op_list_add_norm (c, &scale);
    }
    M2iRun *e1 = m2i_setup (2, &c32, M2I_FORMAT_PL_FP32_BGR, 640, 640, M2I_PROFILE_EXTENDED, 1,
        FALSE);
    M2iRun *e2 = m2i_setup (2, &c32, M2I_FORMAT_PL_FP32_BGR, 640, 640, M2I_PROFILE_EXTENDED, 2,
        FALSE);
    M2iRun *d16 = m2i_setup (2, &c16, M2I_FORMAT_PL_FP16_BGR, 640, 640, M2I_PROFILE_DEFAULT, 1,
        FALSE);
    ArgbRun ar = { g_malloc (640 * 640 * 4), 640, 640 };
    GstRun *v1 = gst_setup (2, GST_VIDEO_FORMAT_RGBP, 640, 640, 1);
    GstRun *v2 = gst_setup (2, GST_VIDEO_FORMAT_RGBP, 640, 640, 2);
    add ("m2i pixel chain, one task (extended), 1 thread", m2i_run, e1);
    add ("m2i pixel chain, one task (extended), 2 threads", m2i_run, e2);
    add ("m2i default profile (CPU task, fp16 out), 1 thread", m2i_run, d16);
    add ("libyuv ARGBScale 640x640 BGRA u8", argb_run, &ar);
    FloorRun fr = { g_malloc (640 * 640 * 12), 640 * 640 * 12, 0 };
    add ("memory floor: read the frame, write 640x640 fp32 planes", floor_run, &fr);
    add ("GstVideoConverter -> RGBP 640x640 u8, n-threads 1", gst_run, v1);
    add ("GstVideoConverter -> RGBP 640x640 u8, n-threads 2", gst_run, v2);
    run_block ();
    m2i_free_run (e1);
    m2i_free_run (e2);
    m2i_free_run (d16);
    gst_free_run (v1);
    gst_free_run (v2);
    g_free (ar.small);
    g_free (fr.out);
  }
  for (int k = 0; k < 3; k++)
    g_free (src_buf[k]);
  return 0;
}
