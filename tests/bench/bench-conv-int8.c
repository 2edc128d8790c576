/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-conv-int8 — the integer convolution (ir/kernels/conv-int8.h) on
 * layer shapes of the INT8 model set, beside the f32 Convolution kernel on
 * the same shapes in the same run: f32 in and out (the pass's first layer
 * after a FakeQuantize), and codes in and out (a layer between two integer
 * ones), one and two threads.
 *
 * Usage: bench-conv-int8 [--min-ms N] [--filter SUBSTRING]
 * The kernels are the best the CPU allows; M2I_CPU_DISABLE=vnni (AVX2
 * kernels), avx2 or all (plain C) measure the others.
 *
 * GOPS count a direct convolution's operations (2·C_out·OH·OW·C_in/G·K²);
 * the f32 kernel runs 3×3 stride-1 layers as Winograd (W), fewer
 * operations than counted. Each figure is the fastest of ~2 ms batches.
 */
#include "kernel-test.h"
#include "bench-time.h"
#include <ir/kernels/conv-int8.h>

typedef struct {
  const char *name;
  gint c_in, h, w, c_out, k, stride, pad, groups;
} Layer;

static const Layer layers[] = {
  /* yolov8n-int8 at 640×640 */
  { "yolov8n/0", 3, 640, 640, 16, 3, 2, 1, 1 },
  { "yolov8n/1", 16, 320, 320, 32, 3, 2, 1, 1 },
  { "yolov8n/2.cv1", 32, 160, 160, 32, 1, 1, 0, 1 },
  { "yolov8n/2.m.cv1", 16, 160, 160, 16, 3, 1, 1, 1 },
  { "yolov8n/3", 32, 160, 160, 64, 3, 2, 1, 1 },
  { "yolov8n/4.m.cv1", 32, 80, 80, 32, 3, 1, 1, 1 },
  { "yolov8n/6.m.cv1", 64, 40, 40, 64, 3, 1, 1, 1 },
  { "yolov8n/9.cv2", 512, 20, 20, 256, 1, 1, 0, 1 },
  /* face-detection-adas-0001 (384×672), person-detection-retail-0013 */
  { "face-adas/1x1", 64, 96, 168, 128, 1, 1, 0, 1 },
  { "face-adas/dw", 128, 96, 168, 128, 3, 1, 1, 128 },
  { "face-adas/dw-s2", 128, 96, 168, 128, 3, 2, 1, 128 },
  { "pdr-0013/1x1", 32, 80, 136, 128, 1, 1, 0, 1 },
  { "pdr-0013/dw", 128, 80, 136, 128, 3, 1, 1, 128 },
  { "pdr-0013/first", 3, 320, 544, 32, 3, 2, 1, 1 },
  { "pdr-0013/red", 32, 160, 272, 8, 1, 1, 0, 1 },
  { "pdr-0013/inc", 8, 160, 272, 32, 1, 1, 0, 1 },
  /* age-gender-recognition-retail-0013: grids of 15 and 1 columns */
  { "age-gender/conv5", 192, 5, 5, 256, 3, 1, 0, 1 },
  { "age-gender/age1", 256, 3, 3, 256, 3, 1, 0, 1 },
};

typedef struct {
  const M2iKConvInt8 *c;
  gconstpointer in;
  gpointer out, scratch;
  gint threads;
} Int8Run;

static gboolean
run_int8 (gpointer p, GError **error)
{
  Int8Run *r = p;
  ir_k_conv_int8_run (r->c, r->in, r->out, r->scratch, r->threads);
  return TRUE;
}

static gboolean
run_f32 (gpointer t, GError **error)
{
  return kt_execute (t, error);
}

int
main (int argc, char **argv)
{
  double min_ms = 200;
  const char *filter = NULL;
  if (!bench_parse_args (argc, argv, &min_ms, &filter))
    return 2;
  printf ("cpu: %s\n", m2i_cpu_flags_string ());
  printf ("%-17s %-20s %6s | %-7s %17s | %17s | %17s\n", "layer", "shape", "MOP", "int8",
      "f32 1t / 2t ms", "int8 1t / 2t ms", "codes 1t / 2t ms");
  double total[6] = { 0 };
  for (guint l = 0; l < G_N_ELEMENTS (layers); l++) {
    const Layer *L = &layers[l];
    if (filter && !strstr (L->name, filter))
      continue;
    gint64 oh = (L->h + 2 * L->pad - L->k) / L->stride + 1;
    gint64 ow = (L->w + 2 * L->pad - L->k) / L->stride + 1;
    gint cin_g = L->c_in / L->groups;
    double ops = 2.0 * L->c_out * oh * ow * cin_g * L->k * L->k;
    gsize n_in = (gsize) L->c_in * L->h * L->w, n_w = (gsize) L->c_out * cin_g * L->k * L->k;
    gsize n_out = (gsize) L->c_out * oh * ow;
    float *in = g_new (float, n_in), *wts = g_new (float, n_w), *out = g_new (float, n_out);
    guint8 *codes = g_new (guint8, n_in), *out8 = g_new (guint8, n_out);
    gint8 *q = g_new (gint8, n_w);
    float *scale = g_new (float, L->c_out), *bias = g_new0 (float, L->c_out);
    kt_fill (in, n_in, 1, 0, 4);
    for (gsize i = 0; i < n_in; i++)
      codes[i] = (guint8) (in[i] * 63);
    for (gsize i = 0; i < n_w; i++) {
      q[i] = (gint8) ((i * 37) % 255 - 127);
      wts[i] = q[i] * 0.01f;
    }
    for (gint o = 0; o < L->c_out; o++)
      scale[o] = 0.01f;
    double ms[6];
    gboolean winograd = FALSE;
    const char *kname = "";
    for (gint threads = 1; threads <= 2; threads++) {
      KTest *t = kt_conv_new (L->c_in, L->h, L->w, L->c_out, L->k, L->stride, L->pad,
          L->groups, in, wts, threads);
      ms[threads - 1] = bench_time_runs (run_f32, t, min_ms) * 1e3;
      winograd = ir_k_conv_uses_winograd (&t->ctx);
      M2iKConvGeom g;
      ir_k_conv_geometry (&t->ctx, &g);
      kt_free (t);
      for (gint codes_io = 0; codes_io < 2; codes_io++) {
        static const float lo = 0.0f, hi = 4.0f, olo = 0.0f, ohi = 3.0f;
        M2iKConvInt8Params p = { g, q, scale, 256, 1, &lo, &hi, &lo, &hi, codes_io, bias,
          M2I_K_I8_ACT_RELU, .codes_out = codes_io, .out_levels = 256, .n_out_ranges = 1,
          .out_lo = &olo, .out_hi = &ohi };
        const char *why = NULL;
        M2iKConvInt8 *c = ir_k_conv_int8_new (&p, threads, &why);
        if (!c)
          g_error ("%s: %s", L->name, why);
        kname = ir_k_conv_int8_kernel_name (c);
        gpointer scratch = g_aligned_alloc (1, ir_k_conv_int8_scratch_bytes (c), 64);
        Int8Run r = { c, codes_io ? (gconstpointer) codes : in,
          codes_io ? (gpointer) out8 : (gpointer) out, scratch, threads };
        ms[2 + 2 * codes_io + threads - 1] = bench_time_runs (run_int8, &r, min_ms) * 1e3;
        g_aligned_free (scratch);
        ir_k_conv_int8_free (c);
      }
    }
    g_autofree gchar *shape = g_strdup_printf ("%dx%dx%d k%d s%d g%d%s", L->c_in, L->h, L->w,
        L->k, L->stride, L->groups, winograd ? " W" : "");
    printf ("%-17s %-20s %6.0f | %-7s %8.3f %8.3f | %8.3f %8.3f | %8.3f %8.3f\n", L->name, shape,
        ops / 1e6, kname, ms[0], ms[1], ms[2], ms[3], ms[4], ms[5]);
    for (gint k = 0; k < 6; k++)
      total[k] += ms[k];
    g_free (in);
    g_free (wts);
    g_free (out);
    g_free (codes);
    g_free (out8);
    g_free (q);
    g_free (scale);
    g_free (bias);
  }
  printf ("%-17s %-20s %6s | %-7s %8.3f %8.3f | %8.3f %8.3f | %8.3f %8.3f\n", "total", "", "", "",
      total[0], total[1], total[2], total[3], total[4], total[5]);
  return 0;
}
