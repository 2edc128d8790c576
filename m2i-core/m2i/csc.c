/* csc.c — which csc kernels run: the table of one instruction-set level
 * (csc-c.c, csc-avx2.c, csc-avx512.c) chosen for this CPU.
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

/* Picked once: M2I_CPU_DISABLE is read at the first call (as m2i_cpu_flags
 * does), so callers may ask for the kernels per run. */
static const CscKernels *
choose_kernels (void)
{
  init_once ();
#ifdef HAVE_X86
  M2iCpuFlags f = m2i_cpu_flags ();
  if ((f & M2I_CPU_AVX512F) && (f & M2I_CPU_F16C) && (f & M2I_CPU_FMA)) {
    /* VBMI is not among m2i_cpu_flags(); "vbmi" in M2I_CPU_DISABLE hides it
     * here so tests can run the plain AVX-512 kernels too. */
    const char *off = g_getenv ("M2I_CPU_DISABLE");
    if (__builtin_cpu_supports ("avx512vbmi") && !(off && strstr (off, "vbmi")))
      return &m2i_csc_kernels_vbmi_table;
    return &m2i_csc_kernels_avx512_table;
  }
  if ((f & M2I_CPU_AVX2) && (f & M2I_CPU_F16C))
    return &m2i_csc_kernels_avx2_table;
#endif
  return &m2i_csc_kernels_c_table;
}

const CscKernels *
m2i_csc_kernels (void)
{
  static const CscKernels *chosen;
  static gsize once = 0;
  if (g_once_init_enter (&once)) {
    chosen = choose_kernels ();
    g_once_init_leave (&once, 1);
  }
  return chosen;
}

