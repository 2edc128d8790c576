/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* csc.c — which csc kernels run: per kernel family, the table of the
 * instruction-set level m2i_cpu_kernel_level() names for this CPU (csc-c.c,
 * csc-avx2.c, csc-avx512.c).
 */
#include "csc-kernels.h"

#include <base/m2i-align.h>
#include <base/m2i-cpu.h>

gsize
m2i_csc_terms_stride (const CscKernels *k, gint n)
{
  return m2i_align_up (n, k->block);
}

static void
init_once (void)
{
  static gsize once = 0;
  if (g_once_init_enter (&once)) {
    m2i_csc_init_tables ();
#ifdef HAVE_X86
    m2i_csc_init_avx512 ();
#endif
    g_once_init_leave (&once, 1);
  }
}

/* The table of @level (see m2i_cpu_kernel_level), NULL if the CPU cannot
 * run it. */
static const CscKernels *
kernels_for_level (M2iCpuFlags level)
{
  init_once ();
#ifdef HAVE_X86
  M2iCpuFlags f = m2i_cpu_flags ();
  /* the SIMD levels convert with F16C; the AVX-512 ones use FMA */
  if (level & M2I_CPU_AVX512F)
    return (f & M2I_CPU_AVX512F) && (f & M2I_CPU_F16C) && (f & M2I_CPU_FMA)
        ? (level & f & M2I_CPU_AVX512VBMI) ? &m2i_csc_kernels_vbmi_table
        : &m2i_csc_kernels_avx512_table : NULL;
  if (level & M2I_CPU_AVX2)
    return (f & M2I_CPU_AVX2) && (f & M2I_CPU_F16C) ? &m2i_csc_kernels_avx2_table : NULL;
#endif
  return level ? NULL : &m2i_csc_kernels_c_table;
}

/* The table of a family's level; a level whose kernels need more than the
 * CPU has (F16C, FMA) steps down. */
static const CscKernels *
family_kernels (M2iKernelFamily family)
{
  M2iCpuFlags level = m2i_cpu_kernel_level (family);
  const CscKernels *k = kernels_for_level (level);
  if (!k && (level & M2I_CPU_AVX512F))
    k = kernels_for_level (M2I_CPU_AVX2);
  return k ? k : kernels_for_level (0);
}

/* Picked once (M2I_CPU_DISABLE and M2I_KERNELS are read at the first call),
 * so callers may ask for the kernels per run: the fused path's kernels at
 * the level of M2I_KERNELS_FUSED, the full-frame pair kernel at the level of
 * M2I_KERNELS_CSC. */
const CscKernels *
m2i_csc_kernels (void)
{
  static CscKernels mixed;
  static char name[48];
  static const CscKernels *chosen;
  static gsize once = 0;
  if (g_once_init_enter (&once)) {
    const CscKernels *fused = family_kernels (M2I_KERNELS_FUSED);
    const CscKernels *csc = family_kernels (M2I_KERNELS_CSC);
    chosen = fused;
    if (csc != fused) {
      mixed = *fused;
      g_snprintf (name, sizeof name, "%s, pairs %s", fused->name, csc->name);
      mixed.name = name;
      mixed.pair = csc->pair;
      chosen = &mixed;
    }
    g_once_init_leave (&once, 1);
  }
  return chosen;
}
