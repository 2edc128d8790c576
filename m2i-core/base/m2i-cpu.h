/* m2i-cpu.h — which SIMD extensions fast paths may use.
 *
 * Fast paths are compiled with per-function target attributes and chosen at
 * run time, so one binary runs on any x86-64 (and falls back to plain C
 * elsewhere). The environment variable M2I_CPU_DISABLE (comma separated:
 * "avx512", "avx2", "fma", "f16c", "sse4", or "all") hides extensions, so
 * tests can check every path against the reference on one machine.
 */
#pragma once

#include <glib.h>
#include <m2i-core/base/m2i-export.h>

G_BEGIN_DECLS

typedef enum {
  M2I_CPU_SSE4_1   = 1 << 0,
  M2I_CPU_AVX2     = 1 << 1,
  M2I_CPU_FMA      = 1 << 2,
  M2I_CPU_F16C     = 1 << 3,
  M2I_CPU_AVX512F  = 1 << 4,   /* with AVX512BW, DQ and VL */
  M2I_CPU_AVX512VNNI = 1 << 5,
} M2iCpuFlags;

/* Returns the usable extensions, minus those hidden by M2I_CPU_DISABLE.
 * Computed once; thread-safe. */
M2I_API M2iCpuFlags m2i_cpu_flags (void);

/* Returns a short description such as "avx512 avx2 fma f16c sse4.1". The
 * string is static. */
M2I_API const char *m2i_cpu_flags_string (void);

G_END_DECLS
