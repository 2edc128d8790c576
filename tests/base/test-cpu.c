/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The per-model kernel level table (base/m2i-cpu.c) against the levels its
 * documentation states (the IR runtime's families measured where the table
 * has no entry), the M2I_KERNELS syntax, and that the process's
 * choice never exceeds what m2i_cpu_flags() allows. meson also runs this
 * with M2I_KERNELS=avx2, where every family must be at AVX2 (if the CPU has
 * it). */
#include <base/cpu-private.h>
#include <string.h>

#define ALL (M2I_CPU_AVX2 | M2I_CPU_F16C | M2I_CPU_FMA | M2I_CPU_AVX512F | M2I_CPU_AVX512VBMI)
#define W512 (M2I_CPU_AVX512F | M2I_CPU_AVX512VBMI)

static M2iCpuFlags
level (M2iCpuVendor v, guint fam, guint model, M2iCpuFlags allowed, const char *forced,
    M2iKernelFamily k, const char *expect_name)
{
  const char *name = NULL;
  M2iCpuFlags l = m2i_cpu_level_for (v, fam, model, allowed, forced, k, &name);
  g_assert_cmpstr (name, ==, expect_name);
  return l;
}

static void
test_table (void)
{
  const M2iCpuVendor amd = M2I_CPU_VENDOR_AMD, intel = M2I_CPU_VENDOR_INTEL;
  /* Zen 4 (Genoa 0x11, Raphael 0x61, Phoenix 0x74, Bergamo 0xa0): the
   * full-frame csc with AVX2, the rest at the widest level */
  const guint zen4[] = { 0x10, 0x11, 0x1f, 0x61, 0x74, 0x7f, 0xa0, 0xaf };
  for (gsize i = 0; i < G_N_ELEMENTS (zen4); i++) {
    g_assert_cmpuint (level (amd, 0x19, zen4[i], ALL, NULL, M2I_KERNELS_CSC, "zen4"), ==,
        M2I_CPU_AVX2);
    g_assert_cmpuint (level (amd, 0x19, zen4[i], ALL, NULL, M2I_KERNELS_FUSED, "zen4"), ==, W512);
    g_assert_cmpuint (level (amd, 0x19, zen4[i], ALL, NULL, M2I_KERNELS_RESIZE, "zen4"), ==,
        M2I_CPU_AVX512F);
  }
  /* Zen 3 (family 0x19 models 0x00-0x0f, 0x20-0x5f) is no Zen 4 */
  g_assert_cmpuint (level (amd, 0x19, 0x21, M2I_CPU_AVX2 | M2I_CPU_F16C, NULL, M2I_KERNELS_CSC,
          "other"), ==, M2I_CPU_AVX2);
  g_assert_cmpuint (level (amd, 0x19, 0x01, ALL, NULL, M2I_KERNELS_CSC, "other"), ==, W512);
  /* Zen 5: server/desktop full width, mobile parts like Zen 4 */
  const guint zen5[] = { 0x00, 0x02, 0x11, 0x44, 0x70 };
  for (gsize i = 0; i < G_N_ELEMENTS (zen5); i++)
    for (int k = 0; k < M2I_KERNELS_N_FAMILIES; k++)
      g_assert_cmpuint (level (amd, 0x1a, zen5[i], ALL, NULL, k, "zen5"), ==,
          k == M2I_KERNELS_CSC || k == M2I_KERNELS_FUSED ? W512 : M2I_CPU_AVX512F);
  g_assert_cmpuint (level (amd, 0x1a, 0x24, ALL, NULL, M2I_KERNELS_CSC, "zen5-mobile"), ==,
      M2I_CPU_AVX2);
  g_assert_cmpuint (level (amd, 0x1a, 0x60, ALL, NULL, M2I_KERNELS_FUSED, "zen5-mobile"), ==,
      W512);
  /* Intel and anything unknown: the widest level allowed */
  g_assert_cmpuint (level (intel, 6, 0x8f, ALL, NULL, M2I_KERNELS_CSC, "other"), ==, W512);
  g_assert_cmpuint (level (intel, 6, 0x55, ALL & ~M2I_CPU_AVX512VBMI, NULL, M2I_KERNELS_CSC,
          "other"), ==, M2I_CPU_AVX512F);
  g_assert_cmpuint (level (M2I_CPU_VENDOR_OTHER, 0, 0, 0, NULL, M2I_KERNELS_FUSED, "other"), ==, 0);
  /* never above what is allowed (M2I_CPU_DISABLE) */
  g_assert_cmpuint (level (amd, 0x19, 0x11, M2I_CPU_AVX2, NULL, M2I_KERNELS_FUSED, "zen4"), ==,
      M2I_CPU_AVX2);
  g_assert_cmpuint (level (amd, 0x19, 0x11, 0, NULL, M2I_KERNELS_CSC, "zen4"), ==, 0);
  g_assert_cmpuint (level (amd, 0x1a, 0x02, M2I_CPU_AVX512F | M2I_CPU_AVX2, NULL,
          M2I_KERNELS_CSC, "zen5"), ==, M2I_CPU_AVX512F);
  /* out-of-range family */
  g_assert_cmpuint (level (amd, 0x1a, 0x02, ALL, NULL, M2I_KERNELS_N_FAMILIES, "other"), ==, 0);
}

/* The IR runtime's families: AVX-512 from the table on server Zen 5,
 * measured at first use elsewhere (the level is then the bound), unless
 * M2I_KERNELS forces a level; no VBMI kernels among them. */
static void
test_ir_families (void)
{
  const M2iCpuVendor amd = M2I_CPU_VENDOR_AMD, intel = M2I_CPU_VENDOR_INTEL;
  for (int k = M2I_KERNELS_GEMM; k <= M2I_KERNELS_INT8; k++) {
    g_assert_false (m2i_cpu_level_measured_for (amd, 0x1a, 0x02, NULL, k));
    g_assert_cmpuint (level (amd, 0x1a, 0x02, ALL, NULL, k, "zen5"), ==, M2I_CPU_AVX512F);
    g_assert_true (m2i_cpu_level_measured_for (amd, 0x19, 0x11, NULL, k));
    g_assert_cmpuint (level (amd, 0x19, 0x11, ALL, NULL, k, "zen4"), ==, M2I_CPU_AVX512F);
    g_assert_true (m2i_cpu_level_measured_for (amd, 0x1a, 0x24, NULL, k));
    g_assert_true (m2i_cpu_level_measured_for (intel, 6, 0x8f, NULL, k));
    g_assert_cmpuint (level (intel, 6, 0x8f, M2I_CPU_AVX2 | M2I_CPU_FMA, NULL, k, "other"), ==,
        M2I_CPU_AVX2);
    /* forced: no measurement */
    g_assert_false (m2i_cpu_level_measured_for (amd, 0x19, 0x11, "avx2", k));
    g_assert_cmpuint (level (amd, 0x19, 0x11, ALL, "avx2", k, "zen4"), ==, M2I_CPU_AVX2);
  }
  const char *one = "gemm=avx2,dwconv=c";
  g_assert_cmpuint (level (amd, 0x1a, 0x02, ALL, one, M2I_KERNELS_GEMM, "zen5"), ==, M2I_CPU_AVX2);
  g_assert_cmpuint (level (amd, 0x1a, 0x02, ALL, one, M2I_KERNELS_DWCONV, "zen5"), ==, 0);
  g_assert_cmpuint (level (amd, 0x1a, 0x02, ALL, one, M2I_KERNELS_WINOGRAD, "zen5"), ==,
      M2I_CPU_AVX512F);
  g_assert_false (m2i_cpu_level_measured_for (intel, 6, 0x8f, one, M2I_KERNELS_GEMM));
  g_assert_true (m2i_cpu_level_measured_for (intel, 6, 0x8f, one, M2I_KERNELS_WINOGRAD));
  /* the other families are never measured */
  g_assert_false (m2i_cpu_level_measured_for (intel, 6, 0x8f, NULL, M2I_KERNELS_CSC));
  g_assert_false (m2i_cpu_level_measured_for (amd, 0x19, 0x11, NULL, M2I_KERNELS_RESIZE));
  g_assert_false (m2i_cpu_level_measured_for (amd, 0x19, 0x11, NULL, M2I_KERNELS_N_FAMILIES));
}

static void
test_forced (void)
{
  const M2iCpuVendor amd = M2I_CPU_VENDOR_AMD;
  for (int k = 0; k < M2I_KERNELS_N_FAMILIES; k++) {
    g_assert_cmpuint (level (amd, 0x1a, 0x02, ALL, "avx2", k, "zen5"), ==, M2I_CPU_AVX2);
    g_assert_cmpuint (level (amd, 0x1a, 0x02, ALL, " c ", k, "zen5"), ==, 0);
    /* forcing AVX-512 where it is not allowed gives the widest allowed */
    g_assert_cmpuint (level (amd, 0x1a, 0x02, M2I_CPU_AVX2, "avx512", k, "zen5"), ==,
        M2I_CPU_AVX2);
  }
  const char *mixed = "csc=c, resize = avx2";
  g_assert_cmpuint (level (amd, 0x1a, 0x02, ALL, mixed, M2I_KERNELS_CSC, "zen5"), ==, 0);
  g_assert_cmpuint (level (amd, 0x1a, 0x02, ALL, mixed, M2I_KERNELS_FUSED, "zen5"), ==, W512);
  g_assert_cmpuint (level (amd, 0x1a, 0x02, ALL, mixed, M2I_KERNELS_RESIZE, "zen5"), ==,
      M2I_CPU_AVX2);
  /* Zen 4's AVX2 choice can be overridden */
  g_assert_cmpuint (level (amd, 0x19, 0x11, ALL, "csc=avx512", M2I_KERNELS_CSC, "zen4"), ==, W512);
  /* words that are not understood change nothing */
  const char *bad[] = { "", "sse", "gpu=avx2", "csc=fast", "csc=", "=avx2,", "avx2x" };
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    g_assert_cmpuint (level (amd, 0x19, 0x11, ALL, bad[i], M2I_KERNELS_CSC, "zen4"), ==,
        M2I_CPU_AVX2);
}

/* This process's choice: within m2i_cpu_flags(), described by the string,
 * and all AVX2 under M2I_KERNELS=avx2. */
static void
test_this_cpu (void)
{
  M2iCpuFlags have = m2i_cpu_flags ();
  const char *forced = g_getenv ("M2I_KERNELS");
  const char *s = m2i_cpu_kernels_string ();
  g_test_message ("%s; flags: %s", s, m2i_cpu_flags_string ());
  g_assert_nonnull (strstr (s, "csc "));
  for (int k = 0; k < M2I_KERNELS_N_FAMILIES; k++) {
    M2iCpuFlags l = m2i_cpu_kernel_level (k);
    g_assert_cmpuint (l & ~have, ==, 0);
    g_assert_nonnull (strstr (s, m2i_cpu_level_name (l)));
    if (forced && !strcmp (forced, "avx2"))
      g_assert_cmpuint (l, ==, have & M2I_CPU_AVX2);
  }
  g_assert_cmpuint (m2i_cpu_kernel_level (M2I_KERNELS_N_FAMILIES), ==, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/base/cpu/level-table", test_table);
  g_test_add_func ("/base/cpu/forced-levels", test_forced);
  g_test_add_func ("/base/cpu/ir-families", test_ir_families);
  g_test_add_func ("/base/cpu/this-cpu", test_this_cpu);
  return g_test_run ();
}
