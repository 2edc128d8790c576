/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-npu — the device engine's int8 and fp16 convolution against the IR
 * runtime's fp32 Convolution kernel (ir/kernels, through the op API), on
 * every convolution layer of squeezenet1.1 (227×227 input), one and two
 * threads, in one run.
 *
 * Usage: bench-npu [--min-ms N] [--filter SUBSTRING]
 * GOPS = 2 · (real, unpadded) MACs / time for all three, so the figures
 * compare directly. int8 and fp16 times include the per-run input copy
 * into the padded, kernel-format buffer; fp32 times include the IR kernel's
 * own gathering. Kernel paths follow the CPU (M2I_CPU_DISABLE=... to
 * measure the others). Each figure is the fastest of batches of runs
 * lasting --min-ms (default 200) in total.
 */
#include <npu/m2i-npu.h>
#include <base/m2i-cpu.h>
#include "ir-conv.h"
#include "bench-time.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct {
  const char *name;
  gint c_in, h, w, c_out, k, stride, pad;
  gint repeats;                  /* times the shape occurs in squeezenet1.1 */
  gint groups;                   /* 0 or 1: dense */
} Layer;

/* From squeezenet1.1.xml (OpenVINO IR): every Convolution's input, weights
 * and attributes; fire3/5/7/9 expand layers repeat fire2/4/6/8's shapes. */
static const Layer layers[] = {
  { "conv1", 3, 227, 227, 64, 3, 2, 0, 1 },
  { "fire2/squeeze1x1", 64, 56, 56, 16, 1, 1, 0, 1 },
  { "fire2/expand1x1", 16, 56, 56, 64, 1, 1, 0, 2 },
  { "fire2/expand3x3", 16, 56, 56, 64, 3, 1, 1, 2 },
  { "fire3/squeeze1x1", 128, 56, 56, 16, 1, 1, 0, 1 },
  { "fire4/squeeze1x1", 128, 28, 28, 32, 1, 1, 0, 1 },
  { "fire4/expand1x1", 32, 28, 28, 128, 1, 1, 0, 2 },
  { "fire4/expand3x3", 32, 28, 28, 128, 3, 1, 1, 2 },
  { "fire5/squeeze1x1", 256, 28, 28, 32, 1, 1, 0, 1 },
  { "fire6/squeeze1x1", 256, 14, 14, 48, 1, 1, 0, 1 },
  { "fire6/expand1x1", 48, 14, 14, 192, 1, 1, 0, 2 },
  { "fire6/expand3x3", 48, 14, 14, 192, 3, 1, 1, 2 },
  { "fire7/squeeze1x1", 384, 14, 14, 48, 1, 1, 0, 1 },
  { "fire8/squeeze1x1", 384, 14, 14, 64, 1, 1, 0, 1 },
  { "fire8/expand1x1", 64, 14, 14, 256, 1, 1, 0, 2 },
  { "fire8/expand3x3", 64, 14, 14, 256, 3, 1, 1, 2 },
  { "fire9/squeeze1x1", 512, 14, 14, 64, 1, 1, 0, 1 },
  { "conv10", 512, 14, 14, 1000, 1, 1, 0, 1 },
  /* not squeezenet (repeats 0): depthwise 3x3 layers of the kind
   * person-detection-retail-0013 has (GroupConvolution, one channel per
   * group) */
  { "dw3x3/s1", 64, 80, 136, 64, 3, 1, 1, 0, 64 },
  { "dw3x3/s2", 64, 80, 136, 64, 3, 2, 1, 0, 64 },
};

typedef struct {
  M2iNpuConv *conv;
  M2iNpuTensor in, out;
  gpointer scratch;
  gint threads;
} NpuRun;

static gboolean
npu_run (gpointer p, GError **error)
{
  NpuRun *r = p;
  return m2i_npu_conv_run (r->conv, &r->in, &r->out, r->scratch, r->threads, error);
}

typedef struct {
  TuIrConv *ir;
  const float *input;
} IrRun;

static gboolean
ir_run (gpointer p, GError **error)
{
  IrRun *r = p;
  return tu_ir_conv_run (r->ir, r->input, error);
}

static void
fill_u32 (guint32 *seed, guint8 *p, gsize n)
{
  for (gsize i = 0; i < n; i++) {
    *seed = *seed * 1664525u + 1013904223u;
    p[i] = (guint8) (*seed >> 24);
  }
}

/* Times the int8 (@prec INT8) or fp16 engine on layer @L. */
static double
time_npu (const Layer *L, M2iNpuPrecision prec, gint threads, double min_ms,
    const char **path)
{
  guint32 seed = 7;
  gint oh = (L->h + 2 * L->pad - L->k) / L->stride + 1, ow = (L->w + 2 * L->pad - L->k) / L->stride + 1;
  gint groups = MAX (L->groups, 1);
  M2iNpuConvGeometry g = { L->c_in, L->c_out, groups, L->h, L->w, L->k, L->k, L->stride,
    L->stride, 1, 1, L->pad, L->pad, L->pad, L->pad };
  gsize es = prec == M2I_NPU_INT8 ? 1 : 2;
  gsize nwb = m2i_npu_weights_blocked_count (L->c_out, L->c_in / groups, L->k, L->k);
  guint8 *wb = g_malloc (nwb * es);
  fill_u32 (&seed, wb, nwb * es);
  if (prec == M2I_NPU_FP16)              /* finite halves in [-1, 1) */
    for (gsize i = 0; i < nwb; i++)
      ((m2i_f16 *) wb)[i] &= 0xbbff;
  GError *error = NULL;
  NpuRun r = { 0 };
  r.threads = threads;
  if (prec == M2I_NPU_INT8) {
    gint32 *mult = g_new (gint32, L->c_out);
    gint8 *shift = g_new (gint8, L->c_out);
    for (gint o = 0; o < L->c_out; o++) {
      mult[o] = 1518500250 + o;
      shift[o] = -12;
    }
    M2iNpuRequant rq = { M2I_NPU_REQUANT_MULTIPLIER, L->c_out, mult, shift,
      M2I_MLI_ROUND_HALF_UP, -3, -3, 127 };              /* with a fused ReLU */
    r.conv = m2i_npu_conv_new_int8 (&g, (gint8 *) wb, NULL, 5, &rq, &error);
    g_free (mult);
    g_free (shift);
  } else
    r.conv = m2i_npu_conv_new_fp16 (&g, (m2i_f16 *) wb, NULL, 0, INFINITY, &error);
  if (!r.conv)
    g_error ("%s: %s", L->name, error->message);
  *path = m2i_npu_conv_get_path (r.conv);
  gsize bi = m2i_npu_tensor_bytes (prec, 1, L->c_in, L->h, L->w);
  gsize bo = m2i_npu_tensor_bytes (prec, 1, L->c_out, oh, ow);
  guint8 *in = g_malloc (bi), *out = g_malloc (bo);
  fill_u32 (&seed, in, bi);
  if (prec == M2I_NPU_FP16)
    for (gsize i = 0; i < bi / 2; i++)
      ((m2i_f16 *) in)[i] &= 0xbbff;
  m2i_npu_tensor_init (&r.in, prec, 1, L->c_in, L->h, L->w, in, bi);
  m2i_npu_tensor_init (&r.out, prec, 1, L->c_out, oh, ow, out, bo);
  r.scratch = g_aligned_alloc (1, m2i_npu_conv_get_scratch_size (r.conv), 64);
  double s = bench_time_runs (npu_run, &r, min_ms);
  g_aligned_free (r.scratch);
  m2i_npu_conv_free (r.conv);
  g_free (in);
  g_free (out);
  g_free (wb);
  return s;
}

static double
time_ir (const Layer *L, gint threads, double min_ms)
{
  gint groups = MAX (L->groups, 1);
  gsize n_in = (gsize) L->c_in * L->h * L->w;
  gsize n_w = (gsize) L->c_out * (L->c_in / groups) * L->k * L->k;
  float *in = g_new (float, n_in), *w = g_new (float, n_w);
  for (gsize i = 0; i < n_in; i++)
    in[i] = (float) ((i * 7919) % 2001) / 1000.0f - 1.0f;
  for (gsize i = 0; i < n_w; i++)
    w[i] = (float) ((i * 104729) % 2001) / 10000.0f - 0.1f;
  GError *error = NULL;
  IrRun r = { tu_ir_conv_new (1, L->c_in, L->h, L->w, L->c_out, groups, L->k, L->k, L->stride,
        L->stride, 1, 1, L->pad, L->pad, L->pad, L->pad, w, threads, &error), in };
  if (!r.ir)
    g_error ("%s: %s", L->name, error->message);
  double s = bench_time_runs (ir_run, &r, min_ms);
  tu_ir_conv_free (r.ir);
  g_free (in);
  g_free (w);
  return s;
}

int
main (int argc, char **argv)
{
  double min_ms = 200;
  const char *filter = NULL;
  if (!bench_parse_args (argc, argv, &min_ms, &filter))
    return 2;
  printf ("bench-npu: squeezenet1.1 convolutions, GOPS = 2*MACs/time (cpu: %s)\n",
      m2i_cpu_flags_string ());
  const char *p8 = "?", *p16 = "?";
  gboolean header = FALSE;
  double total[6] = { 0 }, total_ops = 0;
  for (guint l = 0; l < G_N_ELEMENTS (layers); l++) {
    const Layer *L = &layers[l];
    if (filter && !strstr (L->name, filter))
      continue;
    gint oh = (L->h + 2 * L->pad - L->k) / L->stride + 1, ow = (L->w + 2 * L->pad - L->k) / L->stride + 1;
    double ops = 2.0 * L->c_out * oh * ow * (L->c_in / MAX (L->groups, 1)) * L->k * L->k;
    double s[6];
    for (gint t = 1; t <= 2; t++) {
      s[t - 1] = time_npu (L, M2I_NPU_INT8, t, min_ms, &p8);
      s[2 + t - 1] = time_npu (L, M2I_NPU_FP16, t, min_ms, &p16);
      s[4 + t - 1] = time_ir (L, t, min_ms);
    }
    if (!header) {
      printf ("int8 engine: %s; fp16 engine: %s; peer: IR runtime fp32 Convolution (ir/kernels)\n",
          p8, p16);
      printf ("%-17s %-15s %6s | %-15s %-15s | %-15s %-15s | %-15s %-15s\n", "layer", "shape",
          "MOP", "int8 1t ms/GOPS", "int8 2t", "fp16 1t", "fp16 2t", "fp32 1t", "fp32 2t");
      header = TRUE;
    }
    gchar shape[32];
    g_snprintf (shape, sizeof shape, "%dx%dx%d k%d s%d%s", L->c_in, L->h, L->w, L->k,
        L->stride, L->groups > 1 ? " dw" : "");
    printf ("%-17s %-15s %6.1f |", L->name, shape, ops / 1e6);
    for (gint i = 0; i < 6; i++) {
      printf (" %6.3f %6.1f  %s", s[i] * 1e3, ops / s[i] / 1e9, i % 2 ? "|" : "");
      total[i] += L->repeats * s[i];
    }
    printf ("\n");
    total_ops += L->repeats * ops;
  }
  if (!filter) {
    printf ("%-17s %-15s %6.0f |", "all 26 convs", "(repeats incl.)", total_ops / 1e6);
    for (gint i = 0; i < 6; i++)
      printf (" %6.3f %6.1f  %s", total[i] * 1e3, total_ops / total[i] / 1e9, i % 2 ? "|" : "");
    printf ("\nspeed-up over fp32, whole network: int8 %.2fx (1t) %.2fx (2t), fp16 %.2fx (1t) %.2fx (2t)\n",
        total[4] / total[0], total[5] / total[1], total[4] / total[2], total[5] / total[3]);
  }
  return 0;
}
