/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-conv — GFLOPS of the Convolution kernel on every convolution shape of
 * squeezenet1.1 and of a small Fashion-MNIST CNN, one and two threads; and
 * YOLOv8n's Conv + bias + Swish blocks with the Swish fused into the
 * convolution and apart.
 *
 * Usage: bench-conv [--min-ms N] [--filter SUBSTRING]
 * The instruction set is the best the CPU allows; run under
 * M2I_CPU_DISABLE=avx512 (or avx2, all) to measure the other paths.
 *
 * Peer: ONNX Runtime's CPU provider on the same layers, same data, one and
 * two intra-op threads, timed in the same run by ort-conv.cjs under node when
 * M2I_ORT_NODE_MODULES names a node_modules folder with onnxruntime-node.
 * Its times include the node binding's per-call cost (tens of µs), which
 * matters only for the smallest layers.
 *
 * GFLOPS count a direct convolution's operations (2·C_out·OH·OW·C_in·K²),
 * whatever the path: layers marked W run as Winograd F(2×2, 3×3)
 * (conv-winograd.h), which does 2.25 times fewer multiply-adds, so they can
 * exceed the micro-kernel's peak. M2I_CONV_WINOGRAD=0 times them as a
 * direct product instead.
 */
#include "kernel-test.h"
#include "bench-time.h"
#include "bench-ort.h"
#include <ir/kernels/gemm.h>
#include <ir/kernels/conv-winograd.h>

typedef struct {
  const char *name;
  gint c_in, h, w, c_out, k, stride, pad, groups;
  gboolean swish;                      /* + bias + Swish (YOLO's Conv blocks) */
  gint kw, pad_w;                      /* kw > 0: a k × kw kernel, pads pad (H) and pad_w (W) */
} Layer;

/* The kernel's width and the left/right pads. */
static gint
layer_kw (const Layer *L)
{
  return L->kw > 0 ? L->kw : L->k;
}

static gint
layer_pw (const Layer *L)
{
  return L->kw > 0 ? L->pad_w : L->pad;
}

static const Layer layers[] = {
  /* squeezenet1.1, 227×227 input */
  { "conv1", 3, 227, 227, 64, 3, 2, 0, 1 },
  { "fire2/squeeze1x1", 64, 56, 56, 16, 1, 1, 0, 1 },
  { "fire2/expand1x1", 16, 56, 56, 64, 1, 1, 0, 1 },
  { "fire2/expand3x3", 16, 56, 56, 64, 3, 1, 1, 1 },
  { "fire3/squeeze1x1", 128, 56, 56, 16, 1, 1, 0, 1 },
  { "fire4/squeeze1x1", 128, 28, 28, 32, 1, 1, 0, 1 },
  { "fire4/expand1x1", 32, 28, 28, 128, 1, 1, 0, 1 },
  { "fire4/expand3x3", 32, 28, 28, 128, 3, 1, 1, 1 },
  { "fire5/squeeze1x1", 256, 28, 28, 32, 1, 1, 0, 1 },
  { "fire6/squeeze1x1", 256, 14, 14, 48, 1, 1, 0, 1 },
  { "fire6/expand1x1", 48, 14, 14, 192, 1, 1, 0, 1 },
  { "fire6/expand3x3", 48, 14, 14, 192, 3, 1, 1, 1 },
  { "fire7/squeeze1x1", 384, 14, 14, 48, 1, 1, 0, 1 },
  { "fire8/squeeze1x1", 384, 14, 14, 64, 1, 1, 0, 1 },
  { "fire8/expand1x1", 64, 14, 14, 256, 1, 1, 0, 1 },
  { "fire8/expand3x3", 64, 14, 14, 256, 3, 1, 1, 1 },
  { "fire9/squeeze1x1", 512, 14, 14, 64, 1, 1, 0, 1 },
  { "conv10", 512, 14, 14, 1000, 1, 1, 0, 1 },
  /* small CNN on 28×28 (Fashion-MNIST style) */
  { "mnist/conv1", 3, 28, 28, 32, 3, 1, 1, 1 },
  { "mnist/conv2", 32, 14, 14, 64, 3, 1, 1, 1 },
  { "mnist/conv3", 64, 7, 7, 128, 3, 1, 1, 1 },
  /* depthwise (person-detection-retail-0013 style) */
  { "dw3x3/s1", 64, 80, 136, 64, 3, 1, 1, 64 },
  { "dw3x3/s2", 64, 80, 136, 64, 3, 2, 1, 64 },
  /* depthwise of face-detection-adas-0001 (MobileNet SSD, 384×672 input) */
  { "fda/conv2_1/dw", 24, 192, 336, 24, 3, 1, 1, 24 },
  { "fda/conv2_2/dw", 56, 192, 336, 56, 3, 2, 1, 56 },
  { "fda/conv3_1/dw", 104, 96, 168, 104, 3, 1, 1, 104 },
  { "fda/conv3_2/dw", 120, 96, 168, 120, 3, 2, 1, 120 },
  { "fda/conv4_1/dw", 232, 48, 84, 232, 3, 1, 1, 232 },
  { "fda/conv5_1/dw", 360, 24, 42, 360, 3, 1, 1, 360 },
  { "fda/conv6/dw", 224, 12, 21, 224, 3, 1, 1, 224 },
  /* small planes: person-reidentification-retail-0288, 5x5 */
  { "reid/dw 16x8", 32, 16, 8, 32, 3, 1, 1, 32 },
  /* depthwise of face-detection-retail-0005 (MobileNetV2 SSD, 300×300) */
  { "fdr5/dw 72x150 s2", 72, 150, 150, 72, 3, 2, 1, 72 },
  { "fdr5/dw 108x75", 108, 75, 75, 108, 3, 1, 1, 108 },
  { "fdr5/dw 108x75 s2", 108, 75, 75, 108, 3, 2, 1, 108 },
  { "fdr5/dw 144x38", 144, 38, 38, 144, 3, 1, 1, 144 },
  { "fdr5/dw 144x38 s2", 144, 38, 38, 144, 3, 2, 1, 144 },
  { "fdr5/dw 720x19", 720, 19, 19, 720, 3, 1, 1, 720 },
  { "dw5x5/s1", 96, 40, 40, 96, 5, 1, 2, 96 },
  { "dw5x5/s2", 96, 40, 40, 96, 5, 2, 2, 96 },
  /* small networks (gaze-estimation-adas-0002, head-pose-estimation-adas-0001,
   * vehicle-attributes-recognition-barrier-0039) */
  { "gaze/s2 32x60x60", 32, 60, 60, 16, 3, 2, 1, 1 },
  { "gaze/s2 64x30x30", 64, 30, 30, 32, 3, 2, 1, 1 },
  { "gaze/s2 128x15x15", 128, 15, 15, 64, 3, 2, 1, 1 },
  { "gaze/128x8x8 k3", 128, 8, 8, 64, 3, 2, 0, 1 },
  { "gaze/64x3x3 k3", 64, 3, 3, 256, 3, 1, 1, 1 },
  { "gaze/256x3x3 k3", 256, 3, 3, 512, 3, 1, 0, 1 },
  { "headpose/256x4x4", 256, 4, 4, 512, 3, 1, 0, 1 },
  { "headpose/128x4x4 p1", 128, 4, 4, 256, 3, 1, 1, 1 },
  { "headpose/64x8x8 p1", 64, 8, 8, 128, 3, 1, 1, 1 },
  { "vehicle/conv4 s2", 64, 18, 18, 128, 3, 2, 1, 1 },
  { "vehicle/conv7 s2", 128, 9, 9, 128, 3, 2, 1, 1 },
  { "vehicle/conv8", 128, 5, 5, 128, 3, 1, 1, 1 },
  /* small output planes around the small-plane rule's bounds (conv-small.h) */
  { "small/128x10x10", 128, 10, 10, 128, 3, 1, 1, 1 },
  { "small/128x11x11", 128, 11, 11, 128, 3, 1, 1, 1 },
  { "small/128x12x12", 128, 12, 12, 128, 3, 1, 1, 1 },
  { "small/64x22x22 s2", 64, 22, 22, 128, 3, 2, 1, 1 },
  { "small/64x24x24 s2", 64, 24, 24, 128, 3, 2, 1, 1 },
  { "small/64x28x28 s2", 64, 28, 28, 128, 3, 2, 1, 1 },
  { "small/256x7x7 1x1", 256, 7, 7, 256, 1, 1, 0, 1 },
  { "small/512x10x10 1x1", 512, 10, 10, 128, 1, 1, 0, 1 },
  { "small/64x6x6 ->24", 64, 6, 6, 24, 3, 1, 1, 1 },
  { "small/64x6x6 ->40", 64, 6, 6, 40, 3, 1, 1, 1 },
  { "small/16x9x9 ->32", 16, 9, 9, 32, 3, 1, 1, 1 },
  { "small/8x40 1x3 ->32", 8, 1, 40, 32, 1, 1, 0, 1, FALSE, 3, 1 },
  /* license-plate-recognition-barrier-0001: 1×3 and 3×1 on odd-width planes */
  { "lpr/fire1 3x1", 32, 22, 92, 32, 3, 1, 1, 1, FALSE, 1, 0 },
  { "lpr/fire1 1x3", 32, 22, 92, 32, 1, 1, 0, 1, FALSE, 3, 1 },
  { "lpr/fire2 3x1", 64, 11, 90, 64, 3, 1, 1, 1, FALSE, 1, 0 },
  { "lpr/fire2 1x3", 64, 11, 90, 64, 1, 1, 0, 1, FALSE, 3, 1 },
  { "lpr/fire2 1x1", 64, 11, 90, 256, 1, 1, 0, 1 },
  { "lpr/fire3 1x1", 256, 11, 90, 64, 1, 1, 0, 1 },
  { "lpr/conv2 5x1", 256, 5, 88, 128, 5, 1, 0, 1, FALSE, 1, 0 },
  { "lpr/conv3 1x13", 128, 1, 88, 71, 1, 1, 0, 1, FALSE, 13, 6 },
  { "agegender/conv4", 96, 7, 7, 192, 3, 1, 0, 1 },
  { "agegender/conv5", 192, 5, 5, 256, 3, 1, 0, 1 },
  { "agegender/conv6", 256, 3, 3, 256, 3, 1, 0, 1 },
  { "wino/64x6x6 p1", 64, 6, 6, 128, 3, 1, 1, 1 },
  { "wino/128x10x10 p1", 128, 10, 10, 128, 3, 1, 1, 1 },
  /* small groups (4 input, 4 output channels each) */
  { "group4 3x3", 64, 56, 56, 64, 3, 1, 1, 16 },
  /* YOLOv8n at 640×640: Conv → bias → Swish blocks (the fused epilogue) */
  { "yolov8n/0", 3, 640, 640, 16, 3, 2, 1, 1, TRUE },
  { "yolov8n/1", 16, 320, 320, 32, 3, 2, 1, 1, TRUE },
  { "yolov8n/2.cv1", 32, 160, 160, 32, 1, 1, 0, 1, TRUE },
  { "yolov8n/2.m.cv1", 16, 160, 160, 16, 3, 1, 1, 1, TRUE },
  { "yolov8n/3", 32, 160, 160, 64, 3, 2, 1, 1, TRUE },
  { "yolov8n/4.m.cv1", 32, 80, 80, 32, 3, 1, 1, 1, TRUE },
  { "yolov8n/6.m.cv1", 64, 40, 40, 64, 3, 1, 1, 1, TRUE },
  { "yolov8n/9.cv2", 512, 20, 20, 256, 1, 1, 0, 1, TRUE },
  /* YOLOv5n at 416×416 (its 6×6 stem, stride-2 3×3 and small 1×1 layers) */
  { "yolov5n/0", 3, 416, 416, 16, 6, 2, 2, 1, TRUE },
  { "yolov5n/1", 16, 208, 208, 32, 3, 2, 1, 1, TRUE },
  { "yolov5n/2.cv1", 32, 104, 104, 16, 1, 1, 0, 1, TRUE },
  { "yolov5n/2.m.cv1", 16, 104, 104, 16, 1, 1, 0, 1, TRUE },
  { "yolov5n/2.m.cv2", 16, 104, 104, 16, 3, 1, 1, 1, TRUE },
  { "yolov5n/2.cv3", 32, 104, 104, 32, 1, 1, 0, 1, TRUE },
  { "yolov5n/3", 32, 104, 104, 64, 3, 2, 1, 1, TRUE },
  { "yolov5n/4.cv3", 64, 52, 52, 64, 1, 1, 0, 1, TRUE },
  { "yolov5n/5", 64, 52, 52, 128, 3, 2, 1, 1, TRUE },
  { "yolov5n/7", 128, 26, 26, 256, 3, 2, 1, 1, TRUE },
  { "yolov5n/8.cv3", 256, 13, 13, 256, 1, 1, 0, 1, TRUE },
};

/* Squeezenet's repeated shapes (fire3, fire5, fire7, fire9 expands) counted
 * in the network total. */
static gint
squeezenet_multiplicity (const char *name)
{
  if (g_str_has_prefix (name, "fire2/expand") || g_str_has_prefix (name, "fire4/expand") ||
      g_str_has_prefix (name, "fire6/expand") || g_str_has_prefix (name, "fire8/expand"))
    return 2;
  return g_str_has_prefix (name, "fire") || g_str_has_prefix (name, "conv") ? 1 : 0;
}

static gboolean
execute_layer (gpointer t, GError **error)
{
  return kt_execute (t, error);
}

/* A convolution (bias fused) and the Swish layer after it, in place, as
 * the runtime runs them without the Swish fusion. */
typedef struct {
  KTest *conv, *swish;
} Unfused;

static gboolean
execute_unfused (gpointer p, GError **error)
{
  Unfused *u = p;
  return kt_execute (u->conv, error) && kt_execute (u->swish, error);
}

/* Times one YOLO block four ways: conv + bias + Swish fused, the same
 * without the Swish fusion (conv + bias, then the Swish kernel in place),
 * the Swish kernel alone on that output (1 thread), and fused on 2
 * threads. Whichever runs first in a process measures slower (caches,
 * clocks), so the ways are timed in one order and then in the other, and
 * each keeps its best. */
static void
time_swish_layer (const Layer *L, const float *in, const float *wts, const float *bias,
    double min_ms, double ms[4], gboolean *winograd)
{
  g_autofree gchar *pad = g_strdup_printf ("%d,%d", L->pad, L->pad);
  g_autofree gchar *stride = g_strdup_printf ("%d,%d", L->stride, L->stride);
  for (gint k = 0; k < 4; k++)
    ms[k] = G_MAXDOUBLE;
  for (gint pass = 0; pass < 6; pass++) {
    gint v = pass < 3 ? pass : 5 - pass;
    KTest *t = kt_new (&ir_kernel_convolution, "opset1");
    t->ctx.n_threads = v == 2 ? 2 : 1;
    kt_attr (t, "strides", stride);
    kt_attr (t, "dilations", "1,1");
    kt_attr (t, "pads_begin", pad);
    kt_attr (t, "pads_end", pad);
    kt_input (t, M2I_ET_F32, SHAPE (1, L->c_in, L->h, L->w), in, FALSE);
    kt_input (t, M2I_ET_F32, SHAPE (L->c_out, L->c_in, L->k, L->k), wts, TRUE);
    GError *error = NULL;
    if (!kt_infer (t, 1, &error) || !ir_k_fuse_bias_relu (&t->ctx, bias, L->c_out, FALSE,
            &error) || (v != 1 && !ir_k_fuse_swish (&t->ctx, 1.0f, &error)))
      g_error ("%s", error->message);
    *winograd = ir_k_conv_uses_winograd (&t->ctx);
    if (v == 1) {
      Unfused u = { t, kt_new (&ir_kernel_swish, "opset4") };
      u.swish->ctx.n_threads = t->ctx.n_threads;           /* one thread too */
      kt_input (u.swish, M2I_ET_F32, t->outputs[0].shape, t->outputs[0].data, FALSE);
      if (!kt_infer (u.swish, 1, &error))
        g_error ("%s", error->message);
      u.swish->outputs[0].data = t->outputs[0].data;        /* in place */
      ms[v] = MIN (ms[v], bench_time_runs (execute_unfused, &u, min_ms / 2) * 1e3);
      ms[3] = MIN (ms[3], bench_time_runs (execute_layer, u.swish, min_ms / 2) * 1e3);
      kt_free (u.swish);
    } else {
      ms[v] = MIN (ms[v], bench_time_runs (execute_layer, t, min_ms / 2) * 1e3);
    }
    kt_free (t);
  }
}

/* Times every selected layer on ONNX Runtime; fills ort_ms[layer][thread]
 * (-1 where unknown). Returns the peer's description, or NULL. */
static gchar *
run_ort_peer (const gboolean *selected, double (*ort_ms)[2], double min_ms)
{
  GString *req = g_string_new (NULL);
  for (guint l = 0; l < G_N_ELEMENTS (layers); l++) {
    const Layer *L = &layers[l];
    for (gint threads = 1; threads <= 2 && selected[l]; threads++)
      g_string_append_printf (req, "%u %d %d %d %d %d %d %d %d %d %g %d %d %d\n", l, L->c_in,
          L->h, L->w, L->c_out, L->k, L->stride, L->pad, L->groups, threads, min_ms, L->swish,
          layer_kw (L), layer_pw (L));
  }
  gchar *version = bench_ort_peer ("ort-conv.cjs", req->str, ort_ms, G_N_ELEMENTS (layers));
  g_string_free (req, TRUE);
  return version;
}

/* GFLOPS of the micro-kernel alone on panels that stay in L1 (kc = 256):
 * the ceiling the layers are measured against, in the same run (the clock
 * of a shared machine wanders). */
static double
micro_peak_gflops (void)
{
  const M2iGemmArch *arch = ir_gemm_arch ();
  gint kc = 256;
  float *a = g_new0 (float, (gsize) arch->mr * kc), *b = g_new0 (float, (gsize) arch->nr * kc);
  float *c = g_new0 (float, (gsize) arch->mr * arch->nr);
  const gint32 *off = ir_gemm_packed_offsets (arch);
  guint8 run_start[4] = { 0, 1, 2, 3 };
  guint32 run_mask[3] = { ~0u >> (32 - arch->step), ~0u >> (32 - arch->step),
    ~0u >> (32 - arch->step) };
  gint32 run_at[3] = { 0, arch->step, 2 * arch->step };
  M2iGemmTile tile = { c, arch->nr, arch->mr, TRUE, NULL, NULL, FALSE, run_start, run_mask,
    run_at, M2I_GEMM_PLAIN };
  double best = G_MAXDOUBLE;
  for (gint round = 0; round < 50; round++) {
    double t0 = bench_now_s ();
    for (gint i = 0; i < 1000; i++)
      arch->micro (kc, a, b, off, &tile);
    best = MIN (best, bench_now_s () - t0);
  }
  g_free (a);
  g_free (b);
  g_free (c);
  return 2.0 * arch->mr * arch->nr * kc * 1000 / best / 1e9;
}

int
main (int argc, char **argv)
{
  double min_ms = 200;
  const char *filter = NULL;
  if (!bench_parse_args (argc, argv, &min_ms, &filter))
    return 2;
  gboolean selected[G_N_ELEMENTS (layers)];
  double ort_ms[G_N_ELEMENTS (layers)][2];
  for (guint l = 0; l < G_N_ELEMENTS (layers); l++) {
    selected[l] = !filter || strstr (layers[l].name, filter);
    ort_ms[l][0] = ort_ms[l][1] = -1;
  }
  g_autofree gchar *ort = run_ort_peer (selected, ort_ms, min_ms);
  printf ("m2i Convolution: gemm micro-kernel %s (cpu: %s)\n",
      ir_gemm_arch ()->name, m2i_cpu_flags_string ());
  printf ("peer: %s\n", ort ? ort :
      "none (set M2I_ORT_NODE_MODULES to a node_modules folder with onnxruntime-node)");
  printf ("micro-kernel peak (L1-resident panels, 1 thread): %.1f GFLOPS\n", micro_peak_gflops ());
  printf ("%-18s %-22s %7s | %9s %9s | %9s %9s | %9s %9s\n", "layer", "shape", "MFLOP",
      "m2i 1t ms", "GFLOPS", "m2i 2t ms", "GFLOPS", "ort 1t ms", "ort 2t ms");

  double total[4] = { 0 };
  for (guint l = 0; l < G_N_ELEMENTS (layers); l++) {
    const Layer *L = &layers[l];
    if (!selected[l] || L->swish)
      continue;
    gint kw = layer_kw (L), pw = layer_pw (L);
    gint64 oh = (L->h + 2 * L->pad - L->k) / L->stride + 1;
    gint64 ow = (L->w + 2 * pw - kw) / L->stride + 1;
    gint cin_g = L->c_in / L->groups;
    double flop = 2.0 * L->c_out * oh * ow * cin_g * L->k * kw;
    gsize n_in = (gsize) L->c_in * L->h * L->w, n_w = (gsize) L->c_out * cin_g * L->k * kw;
    float *in = g_new (float, n_in), *wts = g_new (float, n_w);
    kt_fill (in, n_in, 1, -1, 1);
    kt_fill (wts, n_w, 2, -0.1f, 0.1f);
    g_autofree gchar *pad = g_strdup_printf ("%d,%d", L->pad, L->pad);
    g_autofree gchar *stride = g_strdup_printf ("%d,%d", L->stride, L->stride);
    double ms[4] = { -1, -1, -1, -1 };
    gboolean winograd = FALSE;
    for (gint threads = 1; threads <= 2; threads++) {
      KTest *t = kt_conv_rect_new (L->c_in, L->h, L->w, L->c_out, L->k, kw, L->stride, L->pad,
          pw, L->groups, in, wts, threads);
      ms[threads - 1] = bench_time_runs (execute_layer, t, min_ms) * 1e3;
      winograd = ir_k_conv_uses_winograd (&t->ctx);
      kt_free (t);
      ms[2 + threads - 1] = ort_ms[l][threads - 1];
    }
    g_autofree gchar *kernel = kw == L->k ? g_strdup_printf ("%d", L->k) :
        g_strdup_printf ("%dx%d", L->k, kw);
    g_autofree gchar *shape = g_strdup_printf ("%dx%dx%d k%s s%d g%d%s", L->c_in, L->h, L->w,
        kernel, L->stride, L->groups, winograd ? " W" : "");
    printf ("%-18s %-22s %7.1f | %9.3f %9.1f | %9.3f %9.1f | %9.3f %9.3f\n", L->name, shape,
        flop / 1e6, ms[0], flop / ms[0] / 1e6, ms[1], flop / ms[1] / 1e6, ms[2], ms[3]);
    gint mult = squeezenet_multiplicity (L->name);
    for (gint i = 0; i < 4; i++)
      total[i] += mult * ms[i];
    g_free (in);
    g_free (wts);
  }
  printf ("(W: Winograd F(2x2,3x3); GFLOPS count the direct convolution's operations)\n");
  if (!filter)
    printf ("%-18s %-22s %7s | %9.3f %9s | %9.3f %9s | %9.3f %9.3f\n",
        "squeezenet convs", "(sum, repeats counted)", "", total[0], "", total[1], "",
        ort ? total[2] : -1.0, ort ? total[3] : -1.0);

  /* YOLO blocks: Conv + bias + Swish, fused and not; ONNX Runtime's
   * Conv + Sigmoid + Mul. */
  gboolean header = FALSE;
  for (guint l = 0; l < G_N_ELEMENTS (layers); l++) {
    const Layer *L = &layers[l];
    if (!selected[l] || !L->swish)
      continue;
    if (!header) {
      printf ("\nConv + bias + Swish: m2i with the Swish fused into the convolution, and "
          "without (a Swish layer after it, in place); ORT: Conv + Sigmoid + Mul\n");
      printf ("%-18s %-22s | %11s %11s %6s %9s %7s | %11s | %9s %9s\n", "layer", "shape",
          "fused 1t ms", "apart 1t ms", "saved", "Swish ms", "ns/elt", "fused 2t ms",
          "ort 1t ms", "ort 2t ms");
      header = TRUE;
    }
    gsize n_in = (gsize) L->c_in * L->h * L->w, n_w = (gsize) L->c_out * L->c_in * L->k * L->k;
    float *in = g_new (float, n_in), *wts = g_new (float, n_w), *bias = g_new (float, L->c_out);
    kt_fill (in, n_in, 1, -1, 1);
    kt_fill (wts, n_w, 2, -0.1f, 0.1f);
    kt_fill (bias, L->c_out, 3, -1, 1);
    double ms[4];
    gboolean winograd = FALSE;
    time_swish_layer (L, in, wts, bias, min_ms, ms, &winograd);
    gint64 oh = (L->h + 2 * L->pad - L->k) / L->stride + 1;
    gint64 ow = (L->w + 2 * L->pad - L->k) / L->stride + 1;
    g_autofree gchar *shape = g_strdup_printf ("%dx%dx%d k%d s%d%s", L->c_in, L->h, L->w,
        L->k, L->stride, winograd ? " W" : "");
    printf ("%-18s %-22s | %11.3f %11.3f %5.0f%% %9.3f %7.3f | %11.3f | %9.3f %9.3f\n",
        L->name, shape, ms[0], ms[1], 100 * (1 - ms[0] / ms[1]), ms[3],
        ms[3] * 1e6 / (L->c_out * oh * ow), ms[2], ort_ms[l][0], ort_ms[l][1]);
    g_free (in);
    g_free (wts);
    g_free (bias);
  }
  return 0;
}
