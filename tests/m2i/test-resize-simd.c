/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Every SIMD level of the resize row kernels gives the plain C kernels' bits.
 *
 * For many plans (every mode, shrinking and growing, widths that are and are
 * not multiples of the vector width, 1..4 channels) and random finite rows
 * of u8, fp16 and fp32, the hpass, vpass and u8 rounding of each level this
 * CPU can run are compared bit for bit with level 0 (plain C). meson runs
 * this test once per M2I_CPU_DISABLE setting, which also checks that the
 * dispatched public functions (m2i_resize_hpass_u8, ...) equal plain C
 * whichever level they picked.
 */
#include <m2i/resize-private.h>
#include "m2i-test-util.h"
#include <base/m2i-fp16.h>
#include <string.h>

static guint32 rng_state = 88172645u;
static guint32
rng (void)
{
  return test_xorshift32 (&rng_state);
}

static void
check_plan (const M2iResizePlan *plan, const M2iResizeKernels *k, const M2iResizeKernels *c)
{
  gint in_w = plan->in_width, out_w = plan->x.out_size;
  for (gint C = 1; C <= 4; C++) {
    gint n_in = in_w * C, n = out_w * C;
    /* Exactly sized heap rows, so ASan sees any read past the row end. */
    guint8 *u8 = g_new (guint8, n_in);
    guint16 *h = g_new (guint16, n_in);
    float *f = g_new (float, n_in);
    for (gint i = 0; i < n_in; i++) {
      u8[i] = rng ();
      guint16 bits = rng () & 0x7bff;      /* finite halves, both signs */
      h[i] = bits | (rng () & 0x8000);
      f[i] = ((gint) (rng () % 2000001) - 1000000) / 3.0f;
    }
    float *a = g_new (float, n), *b = g_new (float, n), *d = g_new (float, n);
    guint8 *ra = g_new (guint8, n), *rb = g_new (guint8, n);

#define SAME(what)                                                          \
    if (memcmp (a, b, (gsize) n * sizeof (float)) != 0)                     \
      g_error ("%s %s differs from C: mode %s %d->%d, %d channels", k->name, what, \
          m2i_resize_mode_to_string (plan->params.mode), in_w, out_w, C)

    c->hpass_u8 (plan, u8, C, a);
    k->hpass_u8 (plan, u8, C, b);
    SAME ("hpass_u8");
    m2i_resize_hpass_u8 (plan, u8, C, d);
    g_assert_cmpmem (a, n * sizeof (float), d, n * sizeof (float));

    c->hpass_f16 (plan, h, C, a);
    k->hpass_f16 (plan, h, C, b);
    SAME ("hpass_f16");
    m2i_resize_hpass_f16 (plan, h, C, d);
    g_assert_cmpmem (a, n * sizeof (float), d, n * sizeof (float));

    c->hpass_f32 (plan, f, C, a);
    k->hpass_f32 (plan, f, C, b);
    SAME ("hpass_f32");
    m2i_resize_hpass_f32 (plan, f, C, d);
    g_assert_cmpmem (a, n * sizeof (float), d, n * sizeof (float));

    /* vpass over random rows (one buffer per tap), for a few output rows. */
    gint T = plan->y.taps;
    float **rows = g_new (float *, T);
    for (gint t = 0; t < T; t++) {
      rows[t] = g_new (float, n);
      for (gint i = 0; i < n; i++)
        rows[t][i] = ((gint) (rng () % 600001) - 100000) / 1000.0f;
    }
    for (gint y = 0; y < plan->y.out_size; y += 1 + plan->y.out_size / 5) {
      c->vpass (plan, y, (const float *const *) rows, n, a);
      k->vpass (plan, y, (const float *const *) rows, n, b);
      SAME ("vpass");
      m2i_resize_vpass (plan, y, (const float *const *) rows, n, d);
      g_assert_cmpmem (a, n * sizeof (float), d, n * sizeof (float));
      /* Rounding, including values outside [0,255] and exact halves. */
      for (gint i = 0; i < n; i += 7)
        a[i] = (gint) (rng () % 600) - 150 + 0.5f;
      c->round_u8 (plan, a, ra, n);
      k->round_u8 (plan, a, rb, n);
      g_assert_cmpmem (ra, n, rb, n);
      m2i_resize_round_u8_row (plan, a, rb, n);
      g_assert_cmpmem (ra, n, rb, n);
    }
    for (gint t = 0; t < T; t++)
      g_free (rows[t]);
    g_free (rows);
    g_free (u8);
    g_free (h);
    g_free (f);
    g_free (a);
    g_free (b);
    g_free (d);
    g_free (ra);
    g_free (rb);
  }
}

static const gint sizes[][2] = {
  /* in, out (width; height uses the pair reversed) */
  { 1, 1 }, { 1, 37 }, { 2, 3 }, { 5, 16 }, { 16, 5 }, { 17, 33 }, { 64, 64 },
  { 100, 29 }, { 29, 100 }, { 1920, 224 }, { 1920, 1280 }, { 224, 1000 }, { 3, 1 },
};

static void
test_levels (gconstpointer data)
{
  M2iCpuFlags level = GPOINTER_TO_UINT (data);
  const M2iResizeKernels *k = m2i_resize_kernels_for_level (level);
  const M2iResizeKernels *c = m2i_resize_kernels_for_level (0);
  g_assert_nonnull (c);
  if (k == NULL) {
    g_test_skip ("this CPU (or M2I_CPU_DISABLE) does not allow this level");
    return;
  }
  gint plans = 0;
  for (gint mode = 0; mode <= M2I_RESIZE_BICUBIC_PILLOW; mode++)
    for (guint s = 0; s < G_N_ELEMENTS (sizes); s++)
      for (gint aa = 0; aa <= 1; aa++) {
        if (aa && mode != M2I_RESIZE_LINEAR)
          continue;
        M2iResizeParams p;
        m2i_resize_params_init (&p, sizes[s][1], 1 + sizes[s][0] % 9);
        p.mode = mode;
        p.antialias = aa;
        p.coord = s % 5;
        p.nearest = (s + 2) % 5;
        GError *err = NULL;
        M2iResizePlan *plan = m2i_resize_plan_new (&p, sizes[s][0], 1 + sizes[s][1] % 9, &err);
        g_assert_no_error (err);
        check_plan (plan, k, c);
        m2i_resize_plan_free (plan);
        plans++;
      }
  g_test_message ("%s: %d plans bit-exact with plain C", k->name, plans);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_message ("CPU: %s", m2i_cpu_flags_string ());
  g_test_add_data_func ("/resize-simd/c", GUINT_TO_POINTER (0), test_levels);
  g_test_add_data_func ("/resize-simd/avx2", GUINT_TO_POINTER (M2I_CPU_AVX2), test_levels);
  g_test_add_data_func ("/resize-simd/avx512", GUINT_TO_POINTER (M2I_CPU_AVX512F),
      test_levels);
  return g_test_run ();
}
