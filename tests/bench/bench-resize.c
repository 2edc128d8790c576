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
#include <m2i/resize-private.h>
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

/* Whole image with one level's kernels: each needed source row once. */
static void
image_u8 (const M2iResizeKernels *k, const M2iResizePlan *plan, const guint8 *src,
    gint C, guint8 *dst, float *rows, float *sums)
{
  gint n = plan->x.out_size * C, T = plan->y.taps;
  gint lo = plan->y.first[0], hi = plan->y.last[plan->y.out_size - 1];
  for (gint y = lo; y <= hi; y++)
    k->hpass_u8 (plan, src + (gsize) y * plan->in_width * C, C, rows + (gsize) y * n);
  for (gint y = 0; y < plan->y.out_size; y++) {
    const float *r[T];
    for (gint t = 0; t < T; t++)
      r[t] = rows + (gsize) plan->y.index[y * T + t] * n;
    k->vpass (plan, y, r, n, sums);
    k->round_u8 (plan, sums, dst + (gsize) y * n, n);
  }
}

static void
scenario_a (void)
{
  const gint iw = 1920, ih = 1080, ow = 1280, oh = 720, C = 3;
  M2iResizePlan *plan = plan_for (M2I_RESIZE_LINEAR_ONNX, FALSE, iw, ih, ow, oh);
  guint8 *src = g_new (guint8, (gsize) iw * ih * 4), *dst = g_new (guint8, (gsize) ow * oh * 4);
  for (gsize i = 0; i < (gsize) iw * ih * 4; i++)
    src[i] = (guint8) (i * 2654435761u >> 13);
  float *rows = g_new (float, (gsize) ih * ow * C), *sums = g_new (float, ow * C);
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
            rows + (gsize) y * n));
    const float *r[2] = { rows, rows + n };
    BEST (tv, for (gint y = 0; y < 64; y++) k->vpass (plan, y, r, n, sums));
    BEST (tr, for (gint y = 0; y < 64; y++) k->round_u8 (plan, sums, dst, n));
    BEST (ti, image_u8 (k, plan, src, C, dst, rows, sums));
    printf ("   %-8s %12.0f %12.0f %12.0f %12.3f\n", k->name, th / 64, tv / 64, tr / 64, ti / 1e6);
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
  float *rows = g_new (float, (gsize) ih * ow * C), *sums = g_new (float, ow * C);
  printf ("\nC. RGB %dx%d -> %dx%d u8 linear + antialias (%d x %d taps), 1 thread\n", iw, ih,
      ow, oh, plan->x.taps, plan->y.taps);
  printf ("   %-8s %12s\n", "level", "image ms");
  M2iCpuFlags levels[] = { 0, M2I_CPU_AVX2, M2I_CPU_AVX512F };
  for (guint l = 0; l < G_N_ELEMENTS (levels); l++) {
    const M2iResizeKernels *k = m2i_resize_kernels_for_level (levels[l]);
    if (!k)
      continue;
    double ti;
    BEST (ti, image_u8 (k, plan, src, C, dst, rows, sums));
    printf ("   %-8s %12.3f\n", k->name, ti / 1e6);
  }
#ifdef HAVE_LIBYUV
  double t;
  BEST (t, RGBScale (src, iw * 3, iw, ih, dst, ow * 3, ow, oh, kFilterBox));
  printf ("   %-8s %12.3f   (RGBScale, kFilterBox)\n", "libyuv", t / 1e6);
#endif
  g_free (src);
  g_free (dst);
  g_free (rows);
  g_free (sums);
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
