#include "m2i-cpu.h"

#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

/* clang 14 has no "f16c" for __builtin_cpu_supports: read CPUID.1:ECX[29]. */
static gboolean
has_f16c (void)
{
  unsigned a, b, c, d;
  return __get_cpuid (1, &a, &b, &c, &d) && (c & (1u << 29));
}
#endif

static M2iCpuFlags
detect (void)
{
  M2iCpuFlags f = 0;
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init ();
  if (__builtin_cpu_supports ("sse4.1"))
    f |= M2I_CPU_SSE4_1;
  if (__builtin_cpu_supports ("avx2"))
    f |= M2I_CPU_AVX2;
  if (__builtin_cpu_supports ("fma"))
    f |= M2I_CPU_FMA;
  if (__builtin_cpu_supports ("avx") && has_f16c ())
    f |= M2I_CPU_F16C;
  if (__builtin_cpu_supports ("avx512f") && __builtin_cpu_supports ("avx512bw")
      && __builtin_cpu_supports ("avx512dq") && __builtin_cpu_supports ("avx512vl"))
    f |= M2I_CPU_AVX512F;
  if ((f & M2I_CPU_AVX512F) && __builtin_cpu_supports ("avx512vnni"))
    f |= M2I_CPU_AVX512VNNI;
#endif
  const char *off = g_getenv ("M2I_CPU_DISABLE");
  if (off) {
    gchar **names = g_strsplit (off, ",", -1);
    for (gchar **n = names; *n; n++) {
      const char *s = g_strstrip (*n);
      if (!strcmp (s, "all"))
        f = 0;
      else if (!strcmp (s, "avx512"))
        f &= ~(M2I_CPU_AVX512F | M2I_CPU_AVX512VNNI);
      else if (!strcmp (s, "avx2"))
        f &= ~(M2I_CPU_AVX2 | M2I_CPU_AVX512F | M2I_CPU_AVX512VNNI);
      else if (!strcmp (s, "fma"))
        f &= ~M2I_CPU_FMA;
      else if (!strcmp (s, "f16c"))
        f &= ~M2I_CPU_F16C;
      else if (!strcmp (s, "sse4"))
        f &= ~M2I_CPU_SSE4_1;
      else if (!strcmp (s, "vnni"))
        f &= ~M2I_CPU_AVX512VNNI;
    }
    g_strfreev (names);
  }
  return f;
}

M2iCpuFlags
m2i_cpu_flags (void)
{
  static gsize once = 0;
  static M2iCpuFlags flags;
  if (g_once_init_enter (&once)) {
    flags = detect ();
    g_once_init_leave (&once, 1);
  }
  return flags;
}

const char *
m2i_cpu_flags_string (void)
{
  static gsize once = 0;
  static char buf[96];
  if (g_once_init_enter (&once)) {
    M2iCpuFlags f = m2i_cpu_flags ();
    g_snprintf (buf, sizeof buf, "%s%s%s%s%s%s",
        (f & M2I_CPU_AVX512F) ? "avx512 " : "",
        (f & M2I_CPU_AVX512VNNI) ? "vnni " : "",
        (f & M2I_CPU_AVX2) ? "avx2 " : "",
        (f & M2I_CPU_FMA) ? "fma " : "",
        (f & M2I_CPU_F16C) ? "f16c " : "",
        (f & M2I_CPU_SSE4_1) ? "sse4.1" : "");
    if (!buf[0])
      g_strlcpy (buf, "generic", sizeof buf);
    g_once_init_leave (&once, 1);
  }
  return buf;
}
