/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-resize — speed of the resize row kernels, per instruction-set level,
 * next to libyuv (when built with it) in the same run.
 *
 * Scenarios (single thread, best of several runs):
 *  A. RGB 1920x1080 -> 1280x720 u8, linear_onnx: the standalone m2iresize
 *     element. Peer: libyuv RGBScale (kFilterBilinear) and ARGBScale.
 *  B. the resize inside the fused NV12 1920x1080 -> 224x224 task: fp16 RGB
 *     rows 1920 -> 224 (hpass on the 448 source rows the output needs),
 *     vpass, fp16 rounding. Peer: libyuv RGBScale to 224x224 u8 (does less:
 *     u8, and a whole image).
 *  C. antialiased "linear" 1080p -> 224x224 u8 (every source row, 17 taps).
 * Prints ns per row for each kernel and ms per image.
 *
 * Usage: bench-resize [repeats]   (default 20)
 */
#include <m2i/resize-internal.h>
#include <base/m2i-parallel.h>
#include <base/m2i-fp16.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_LIBYUV
#include <libyuv/scale_argb.h>
#include <libyuv/scale_rgb.h>
#endif

static gint repeats = 20;

static double
now_ns (void)
{
  return g_get_monotonic_time () * 1000.0;
}

/* Best time of @repeats runs of @fn, in ns. */
#define BEST(var, body)                                  \
  do {                                                   \
    var = 1e300;                                         \
    for (gint r_ = 0; r_ < repeats; r_++) {              \
      double t0_ = now_ns ();                            \
      body;                                              \
      double t_ = now_ns () - t0_;                       \
      if (t_ < var)                                      \
        var = t_;                                        \
    }                                                    \
  } while (0)

static M2iResizePlan *
plan_for (M2iResizeMode mode, gboolean aa, gint iw, gint ih, gint ow, gint oh)
{
  M2iResizeParams p;
  m2i_resize_params_init (&p, ow, oh);
  p.mode = mode;
  p.antialias = aa;
  GError *err = NULL;
  M2iResizePlan *plan = m2i_resize_plan_new (&p, iw, ih, &err);
  g_assert_no_error (err);
  return plan;
}

/* Whole image with one level's kernels (m2i_resize_image_rows' row cache). */
static void
image_u8 (const M2iResizeKernels *k, const M2iResizePlan *plan, const guint8 *src,
    gint C, guint8 *dst, float *scratch)
{
  gint ow = plan->x.out_size;
  g_assert_true (m2i_resize_image_rows_k (k, plan, M2I_RESIZE_DATA_U8, C, src,
          (gsize) plan->in_width * C, dst, (gsize) ow * C, 0, plan->y.out_size, scratch, NULL));
}

typedef struct {
  const M2iResizePlan *plan;
  const guint8 *src;
  guint8 *dst;
  gint C;
  float *scratch[2];
} Job;

static void
slice (gint y0, gint y1, gint s, gpointer data)
{
  Job *j = data;
  m2i_resize_image_rows (j->plan, M2I_RESIZE_DATA_U8, j->C, j->src,
      (gsize) j->plan->in_width * j->C, j->dst, (gsize) j->plan->x.out_size * j->C, y0, y1,
      j->scratch[s], NULL);
}

static void
scenario_a (void)
{
  const gint iw = 1920, ih = 1080, ow = 1280, oh = 720, C = 3;
  M2iResizePlan *plan = plan_for (M2I_RESIZE_LINEAR_ONNX, FALSE, iw, ih, ow, oh);
  guint8 *src = g_new (guint8, (gsize) iw * ih * 4), *dst = g_new (guint8, (gsize) ow * oh * 4);
  for (gsize i = 0; i < (gsize) iw * ih * 4; i++)
    src[i] = (guint8) (i * 2654435761u >> 13);
  float *rows = g_new (float, (gsize) 2 * ow * C), *sums = g_new (float, ow * C);
  float *scratch = g_new (float, m2i_resize_scratch_floats (plan, C));
  gint n = ow * C;

  printf ("A. RGB %dx%d -> %dx%d u8 linear_onnx (standalone resize), 1 thread\n", iw, ih, ow, oh);
  printf ("   %-8s %12s %12s %12s %12s\n", "level", "hpass ns/row", "vpass ns/row",
      "round ns/row", "image ms");
  M2iCpuFlags levels[] = { 0, M2I_CPU_AVX2, M2I_CPU_AVX512F };
  for (guint l = 0; l < G_N_ELEMENTS (levels); l++) {
    const M2iResizeKernels *k = m2i_resize_kernels_for_level (levels[l]);
    if (!k)
      continue;
    double th, tv, tr, ti;
    k->hpass_u8 (plan, src, C, rows);    /* builds the expanded table */
    BEST (th, for (gint y = 0; y < 64; y++) k->hpass_u8 (plan, src + (gsize) y * iw * C, C,
            rows + (gsize) (y & 1) * n));
    const float *r[2] = { rows, rows + n };
    BEST (tv, for (gint y = 0; y < 64; y++) k->vpass (plan, y, r, n, sums));
    BEST (tr, for (gint y = 0; y < 64; y++) k->round_u8 (plan, sums, dst, n));
    BEST (ti, image_u8 (k, plan, src, C, dst, scratch));
    printf ("   %-8s %12.0f %12.0f %12.0f %12.3f\n", k->name, th / 64, tv / 64, tr / 64, ti / 1e6);
  }
  {
    Job j = { plan, src, dst, C, { scratch, g_new (float, m2i_resize_scratch_floats (plan, C)) } };
    double t2;
    BEST (t2, m2i_parallel_for (oh, 2, 16, slice, &j));
    printf ("   %-8s %12s %12s %12s %12.3f   (m2i_resize_image_rows, best level, 2 threads)\n",
        "2 thr", "", "", "", t2 / 1e6);
    g_free (j.scratch[1]);
  }
#ifdef HAVE_LIBYUV
  double t;
  BEST (t, RGBScale (src, iw * 3, iw, ih, dst, ow * 3, ow, oh, kFilterBilinear));
  printf ("   %-8s %12s %12s %12s %12.3f   (RGBScale, kFilterBilinear)\n", "libyuv", "", "", "", t / 1e6);
  BEST (t, ARGBScale (src, iw * 4, iw, ih, dst, ow * 4, ow, oh, kFilterBilinear));
  printf ("   %-8s %12s %12s %12s %12.3f   (ARGBScale, 4 channels, kFilterBilinear)\n", "libyuv",
      "", "", "", t / 1e6);
#else
  printf ("   (libyuv not found at build time: no peer figures)\n");
#endif
  g_free (src);
  g_free (dst);
  g_free (rows);
  g_free (sums);
  g_free (scratch);
  m2i_resize_plan_free (plan);
}

static void
scenario_b (void)
{
  const gint iw = 1920, ih = 1080, ow = 224, oh = 224, C = 3;
  M2iResizePlan *plan = plan_for (M2I_RESIZE_LINEAR_ONNX, FALSE, iw, ih, ow, oh);
  guint16 *src = g_new (guint16, (gsize) iw * ih * C);
  for (gsize i = 0; i < (gsize) iw * ih * C; i++)
    src[i] = m2i_f32_to_f16 ((float) ((i * 2654435761u >> 13) & 255));
  gint n = ow * C, T = plan->y.taps;
  float *rows = g_new (float, (gsize) ih * n), *sums = g_new (float, n);
  guint16 *dst = g_new (guint16, (gsize) oh * n);
  /* Source rows the output needs. */
  gboolean *need = g_new0 (gboolean, ih);
  gint needed = 0;
  for (gint i = 0; i < oh * T; i++)
    if (plan->y.weight[i] != 0.0f && !need[plan->y.index[i]]) {
      need[plan->y.index[i]] = TRUE;
      needed++;
    }

  printf ("\nB. the resize of the fused NV12 %dx%d -> PL_FP16 %dx%d task (fp16 RGB rows, "
      "linear_onnx), 1 thread; %d source rows needed\n", iw, ih, ow, oh, needed);
  printf ("   %-8s %12s %12s %12s %12s\n", "level", "hpass ns/row", "vpass ns/row",
      "f16 ns/row", "resize us");
  M2iCpuFlags levels[] = { 0, M2I_CPU_AVX2, M2I_CPU_AVX512F };
  for (guint l = 0; l < G_N_ELEMENTS (levels); l++) {
    const M2iResizeKernels *k = m2i_resize_kernels_for_level (levels[l]);
    if (!k)
      continue;
    double th, tv, tr, ti;
    k->hpass_f16 (plan, src, C, rows);
    BEST (th, for (gint y = 0; y < 64; y++) k->hpass_f16 (plan, src + (gsize) y * iw * C, C,
            rows + (gsize) y * n));
    const float *r[2] = { rows, rows + n };
    BEST (tv, for (gint y = 0; y < 64; y++) k->vpass (plan, y, r, n, sums));
    BEST (tr, for (gint y = 0; y < 64; y++) m2i_resize_round_f16_row (sums, dst, n));
    BEST (ti, {
      for (gint y = 0; y < ih; y++)
        if (need[y])
          k->hpass_f16 (plan, src + (gsize) y * iw * C, C, rows + (gsize) y * n);
      for (gint y = 0; y < oh; y++) {
        const float *rr[T];
        for (gint t = 0; t < T; t++)
          rr[t] = rows + (gsize) plan->y.index[y * T + t] * n;
        k->vpass (plan, y, rr, n, sums);
        m2i_resize_round_f16_row (sums, dst + (gsize) y * n, n);
      }
    });
    printf ("   %-8s %12.0f %12.0f %12.0f %12.1f\n", k->name, th / 64, tv / 64, tr / 64, ti / 1e3);
  }
#ifdef HAVE_LIBYUV
  guint8 *s8 = g_new (guint8, (gsize) iw * ih * 3), *d8 = g_new (guint8, ow * oh * 3);
  memset (s8, 77, (gsize) iw * ih * 3);
  double t;
  BEST (t, RGBScale (s8, iw * 3, iw, ih, d8, ow * 3, ow, oh, kFilterBilinear));
  printf ("   %-8s %12s %12s %12s %12.1f   (RGBScale u8 1080p -> 224x224, kFilterBilinear)\n",
      "libyuv", "", "", "", t / 1e3);
  g_free (s8);
  g_free (d8);
#endif
  g_free (need);
  g_free (src);
  g_free (dst);
  g_free (rows);
  g_free (sums);
  m2i_resize_plan_free (plan);
}

static void
scenario_c (void)
{
  const gint iw = 1920, ih = 1080, ow = 224, oh = 224, C = 3;
  M2iResizePlan *plan = plan_for (M2I_RESIZE_LINEAR, TRUE, iw, ih, ow, oh);
  guint8 *src = g_new (guint8, (gsize) iw * ih * C), *dst = g_new (guint8, ow * oh * C);
  for (gsize i = 0; i < (gsize) iw * ih * C; i++)
    src[i] = (guint8) (i * 2654435761u >> 13);
  float *scratch = g_new (float, m2i_resize_scratch_floats (plan, C));
  printf ("\nC. RGB %dx%d -> %dx%d u8 linear + antialias (%d x %d taps), 1 thread\n", iw, ih,
      ow, oh, plan->x.taps, plan->y.taps);
  printf ("   %-8s %12s\n", "level", "image ms");
  M2iCpuFlags levels[] = { 0, M2I_CPU_AVX2, M2I_CPU_AVX512F };
  for (guint l = 0; l < G_N_ELEMENTS (levels); l++) {
    const M2iResizeKernels *k = m2i_resize_kernels_for_level (levels[l]);
    if (!k)
      continue;
    double ti;
    BEST (ti, image_u8 (k, plan, src, C, dst, scratch));
    printf ("   %-8s %12.3f\n", k->name, ti / 1e6);
  }
#ifdef HAVE_LIBYUV
  double t;
  BEST (t, RGBScale (src, iw * 3, iw, ih, dst, ow * 3, ow, oh, kFilterBox));
  printf ("   %-8s %12.3f   (RGBScale, kFilterBox)\n", "libyuv", t / 1e6);
#endif
  g_free (src);
  g_free (dst);
  g_free (scratch);
  m2i_resize_plan_free (plan);
}

int
main (int argc, char **argv)
{
  if (argc > 1)
    repeats = MAX (1, atoi (argv[1]));
  printf ("bench-resize: CPU %s, best of %d runs\n\n", m2i_cpu_flags_string (), repeats);
  scenario_a ();
  scenario_b ();
  scenario_c ();
  return 0;
}
