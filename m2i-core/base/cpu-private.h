/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cpu-private.h — the per-model level table of m2i-cpu.c, for tests (not
 * installed). */
#pragma once

#include <base/m2i-cpu.h>

G_BEGIN_DECLS

typedef enum {
  M2I_CPU_VENDOR_OTHER,
  M2I_CPU_VENDOR_AMD,
  M2I_CPU_VENDOR_INTEL,
} M2iCpuVendor;

/* The level @kfamily uses on a CPU of @vendor, display @family and @model
 * (CPUID leaf 1 with the extended fields added in) that allows @allowed,
 * with @forced the M2I_KERNELS text (NULL: none). Sets *@model_name to the
 * table's name for the model ("zen4", ..., "other"; static). See
 * m2i_cpu_kernel_level(). */
M2iCpuFlags m2i_cpu_level_for (M2iCpuVendor vendor, guint family, guint model,
    M2iCpuFlags allowed, const char *forced, M2iKernelFamily kfamily, const char **model_name);

/* TRUE when, on that CPU and with that M2I_KERNELS text, @kfamily's level
 * is left to a measurement at first use (the table has no entry for it
 * there and nothing forces it); m2i_cpu_level_for() then gives the bound. */
gboolean m2i_cpu_level_measured_for (M2iCpuVendor vendor, guint family, guint model,
    const char *forced, M2iKernelFamily kfamily);

/* The same for this process's CPU and M2I_KERNELS. */
gboolean m2i_cpu_kernel_level_measured (M2iKernelFamily family);

/* "avx512-vbmi", "avx512", "avx2" or "c" for a level. */
const char *m2i_cpu_level_name (M2iCpuFlags level);

G_END_DECLS
