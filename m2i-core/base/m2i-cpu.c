/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "m2i-cpu.h"
#include "cpu-private.h"

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
  if ((f & M2I_CPU_AVX512F) && __builtin_cpu_supports ("avx512vbmi"))
    f |= M2I_CPU_AVX512VBMI;
#endif
  const char *off = g_getenv ("M2I_CPU_DISABLE");
  if (off) {
    gchar **names = g_strsplit (off, ",", -1);
    for (gchar **n = names; *n; n++) {
      const char *s = g_strstrip (*n);
      if (!strcmp (s, "all"))
        f = 0;
      else if (!strcmp (s, "avx512"))
        f &= ~(M2I_CPU_AVX512F | M2I_CPU_AVX512VNNI | M2I_CPU_AVX512VBMI);
      else if (!strcmp (s, "avx2"))
        f &= ~(M2I_CPU_AVX2 | M2I_CPU_AVX512F | M2I_CPU_AVX512VNNI | M2I_CPU_AVX512VBMI);
      else if (!strcmp (s, "fma"))
        f &= ~M2I_CPU_FMA;
      else if (!strcmp (s, "f16c"))
        f &= ~M2I_CPU_F16C;
      else if (!strcmp (s, "sse4"))
        f &= ~M2I_CPU_SSE4_1;
      else if (!strcmp (s, "vnni"))
        f &= ~M2I_CPU_AVX512VNNI;
      else if (!strcmp (s, "vbmi"))
        f &= ~M2I_CPU_AVX512VBMI;
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
    g_snprintf (buf, sizeof buf, "%s%s%s%s%s%s%s",
        (f & M2I_CPU_AVX512F) ? "avx512 " : "",
        (f & M2I_CPU_AVX512VBMI) ? "vbmi " : "",
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

/* ---- kernel levels per CPU model ------------------------------------------ */

/* What a table entry asks for: the widest level the CPU allows, or AVX2,
 * or a measurement at first use by the family's own code (the widest is
 * then the bound of what it measures). */
typedef enum {
  PREFER_WIDEST,
  PREFER_AVX2,
  PREFER_C,                    /* only by M2I_KERNELS */
  PREFER_MEASURE,
} Prefer;

/* Models whose best level differs from the widest for some family. AMD's
 * Zen 4 and the mobile Zen 5 parts run each 512-bit operation as two 256-bit
 * halves: there the full-frame csc (shuffle-bound: packs, pshufb, lane
 * permutes) is as fast or faster with AVX2, while the fused path's float
 * pair kernels gain from AVX-512's masks and VBMI permutes (issue 19: 0.85x
 * libyuv on Zen 4 with VBMI). Server and desktop Zen 5 have full-width
 * 512-bit units: the widest level wins in every family (bench-m2i, docs/
 * benchmarks.md). Entries are searched in order. */
/* The IR runtime's families (gemm, winograd, dwconv, int8) were measured on
 * server Zen 5 only (bench-conv and bench-conv-int8 at both levels: AVX-512
 * ahead in each, docs/ir-kernels.md); elsewhere their kernels are measured
 * at first use (PREFER_MEASURE, also the default for CPUs not listed). */
#define IR_MEASURE PREFER_MEASURE, PREFER_MEASURE, PREFER_MEASURE, PREFER_MEASURE
static const struct {
  M2iCpuVendor vendor;
  guint family, model_lo, model_hi;
  const char *name;
  Prefer prefer[M2I_KERNELS_N_FAMILIES];     /* csc, fused, resize, gemm, winograd, dwconv, int8 */
} models[] = {
  { M2I_CPU_VENDOR_AMD, 0x19, 0x10, 0x1f, "zen4", { PREFER_AVX2, PREFER_WIDEST, PREFER_WIDEST, IR_MEASURE } },
  { M2I_CPU_VENDOR_AMD, 0x19, 0x60, 0x7f, "zen4", { PREFER_AVX2, PREFER_WIDEST, PREFER_WIDEST, IR_MEASURE } },
  { M2I_CPU_VENDOR_AMD, 0x19, 0xa0, 0xaf, "zen4", { PREFER_AVX2, PREFER_WIDEST, PREFER_WIDEST, IR_MEASURE } },
  { M2I_CPU_VENDOR_AMD, 0x1a, 0x20, 0x2f, "zen5-mobile", { PREFER_AVX2, PREFER_WIDEST, PREFER_WIDEST, IR_MEASURE } },
  { M2I_CPU_VENDOR_AMD, 0x1a, 0x60, 0x6f, "zen5-mobile", { PREFER_AVX2, PREFER_WIDEST, PREFER_WIDEST, IR_MEASURE } },
  { M2I_CPU_VENDOR_AMD, 0x1a, 0x00, 0xff, "zen5", { PREFER_WIDEST, PREFER_WIDEST, PREFER_WIDEST,
      PREFER_WIDEST, PREFER_WIDEST, PREFER_WIDEST, PREFER_WIDEST } },
};

/* CPUs the table does not list. */
static const Prefer unlisted[M2I_KERNELS_N_FAMILIES] = {
  PREFER_WIDEST, PREFER_WIDEST, PREFER_WIDEST, IR_MEASURE
};

static const char *const family_names[M2I_KERNELS_N_FAMILIES] = {
  "csc", "fused", "resize", "gemm", "winograd", "dwconv", "int8"
};

/* Families with kernels that use VBMI. */
static const gboolean family_vbmi[M2I_KERNELS_N_FAMILIES] = { TRUE, TRUE, FALSE, FALSE, FALSE,
  FALSE, FALSE };

/* M2I_KERNELS: "level" or "family=level", comma separated. Fills @prefer
 * and @set per family; FALSE if a word was not understood. */
static gboolean
parse_forced (const char *text, Prefer prefer[M2I_KERNELS_N_FAMILIES],
    gboolean set[M2I_KERNELS_N_FAMILIES])
{
  gboolean ok = TRUE;
  for (int k = 0; k < M2I_KERNELS_N_FAMILIES; k++)
    set[k] = FALSE;
  if (!text)
    return TRUE;
  gchar **items = g_strsplit (text, ",", -1);
  for (gchar **it = items; *it; it++) {
    gchar *item = g_strstrip (*it), *eq = strchr (item, '=');
    const char *level = eq ? g_strstrip (eq + 1) : item;
    if (eq) {
      *eq = 0;
      g_strstrip (item);
    }
    Prefer p;
    if (!strcmp (level, "avx512"))
      p = PREFER_WIDEST;
    else if (!strcmp (level, "avx2"))
      p = PREFER_AVX2;
    else if (!strcmp (level, "c"))
      p = PREFER_C;
    else {
      ok = ok && !*item;             /* empty items are fine */
      continue;
    }
    gboolean known = !eq;
    for (int k = 0; k < M2I_KERNELS_N_FAMILIES; k++)
      if (!eq || !strcmp (item, family_names[k])) {
        prefer[k] = p;
        set[k] = TRUE;
        known = TRUE;
      }
    ok = ok && known;
  }
  g_strfreev (items);
  return ok;
}

static M2iCpuFlags
level_of (Prefer p, M2iCpuFlags allowed)
{
  if (p == PREFER_C)
    return 0;
  if ((p == PREFER_WIDEST || p == PREFER_MEASURE) && (allowed & M2I_CPU_AVX512F))
    return M2I_CPU_AVX512F | (allowed & M2I_CPU_AVX512VBMI);
  return allowed & M2I_CPU_AVX2;
}

/* What the table (or M2I_KERNELS) asks of @kfamily on that CPU. */
static Prefer
prefer_for (M2iCpuVendor vendor, guint family, guint model, const char *forced,
    M2iKernelFamily kfamily, const char **model_name)
{
  *model_name = "other";
  Prefer p = unlisted[kfamily];
  for (gsize i = 0; i < G_N_ELEMENTS (models); i++)
    if (models[i].vendor == vendor && models[i].family == family
        && model >= models[i].model_lo && model <= models[i].model_hi) {
      *model_name = models[i].name;
      p = models[i].prefer[kfamily];
      break;
    }
  Prefer fp[M2I_KERNELS_N_FAMILIES];
  gboolean set[M2I_KERNELS_N_FAMILIES];
  parse_forced (forced, fp, set);
  return set[kfamily] ? fp[kfamily] : p;
}

M2iCpuFlags
m2i_cpu_level_for (M2iCpuVendor vendor, guint family, guint model, M2iCpuFlags allowed,
    const char *forced, M2iKernelFamily kfamily, const char **model_name)
{
  *model_name = "other";
  if ((guint) kfamily >= M2I_KERNELS_N_FAMILIES)
    return 0;
  M2iCpuFlags level = level_of (prefer_for (vendor, family, model, forced, kfamily, model_name),
      allowed);
  if (!family_vbmi[kfamily])
    level &= ~M2I_CPU_AVX512VBMI;        /* no VBMI kernels in this family */
  return level;
}

gboolean
m2i_cpu_level_measured_for (M2iCpuVendor vendor, guint family, guint model, const char *forced,
    M2iKernelFamily kfamily)
{
  const char *name;
  return (guint) kfamily < M2I_KERNELS_N_FAMILIES &&
      prefer_for (vendor, family, model, forced, kfamily, &name) == PREFER_MEASURE;
}

const char *
m2i_cpu_level_name (M2iCpuFlags level)
{
  if (level & M2I_CPU_AVX512F)
    return (level & M2I_CPU_AVX512VBMI) ? "avx512-vbmi" : "avx512";
  return (level & M2I_CPU_AVX2) ? "avx2" : "c";
}

typedef struct {
  M2iCpuVendor vendor;
  guint family, model;
  const char *name;
  M2iCpuFlags level[M2I_KERNELS_N_FAMILIES];
  gboolean measured[M2I_KERNELS_N_FAMILIES];
  char text[256];
} KernelChoice;

static void
read_cpu_id (M2iCpuVendor *vendor, guint *family, guint *model)
{
  *vendor = M2I_CPU_VENDOR_OTHER;
  *family = *model = 0;
#if defined(__x86_64__) || defined(__i386__)
  unsigned a, b, c, d;
  if (!__get_cpuid (0, &a, &b, &c, &d))
    return;
  char v[13];
  memcpy (v, &b, 4);
  memcpy (v + 4, &d, 4);
  memcpy (v + 8, &c, 4);
  v[12] = 0;
  if (!strcmp (v, "AuthenticAMD"))
    *vendor = M2I_CPU_VENDOR_AMD;
  else if (!strcmp (v, "GenuineIntel"))
    *vendor = M2I_CPU_VENDOR_INTEL;
  if (!__get_cpuid (1, &a, &b, &c, &d))
    return;
  guint base_family = (a >> 8) & 0xf, base_model = (a >> 4) & 0xf;
  *family = base_family == 0xf ? base_family + ((a >> 20) & 0xff) : base_family;
  *model = base_family == 0xf || base_family == 0x6 ? (((a >> 16) & 0xf) << 4) | base_model
      : base_model;
#endif
}

static const KernelChoice *
kernel_choice (void)
{
  static gsize once = 0;
  static KernelChoice kc;
  if (g_once_init_enter (&once)) {
    const char *forced = g_getenv ("M2I_KERNELS");
    Prefer fp[M2I_KERNELS_N_FAMILIES];
    gboolean set[M2I_KERNELS_N_FAMILIES];
    if (!parse_forced (forced, fp, set))
      g_warning ("M2I_KERNELS=\"%s\": words other than [family=]level ignored (families "
          "csc, fused, resize, gemm, winograd, dwconv; levels c, avx2, avx512)", forced);
    read_cpu_id (&kc.vendor, &kc.family, &kc.model);
    for (int k = 0; k < M2I_KERNELS_N_FAMILIES; k++) {
      kc.level[k] = m2i_cpu_level_for (kc.vendor, kc.family, kc.model, m2i_cpu_flags (), forced,
          (M2iKernelFamily) k, &kc.name);
      kc.measured[k] = m2i_cpu_level_measured_for (kc.vendor, kc.family, kc.model, forced, k);
    }
    GString *t = g_string_new (NULL);
    g_string_printf (t, "%s family 0x%x model 0x%02x (%s):", kc.vendor == M2I_CPU_VENDOR_AMD ?
        "AMD" : kc.vendor == M2I_CPU_VENDOR_INTEL ? "Intel" : "CPU", kc.family, kc.model, kc.name);
    for (int k = 0; k < M2I_KERNELS_N_FAMILIES; k++)
      g_string_append_printf (t, "%s %s %s%s", k ? "," : "", family_names[k],
          m2i_cpu_level_name (kc.level[k]), kc.measured[k] ? " or less (measured)" : "");
    if (forced)
      g_string_append (t, " (M2I_KERNELS)");
    g_strlcpy (kc.text, t->str, sizeof kc.text);
    g_string_free (t, TRUE);
    g_once_init_leave (&once, 1);
  }
  return &kc;
}

M2iCpuFlags
m2i_cpu_kernel_level (M2iKernelFamily family)
{
  if ((guint) family >= M2I_KERNELS_N_FAMILIES)
    return 0;
  return kernel_choice ()->level[family];
}

gboolean
m2i_cpu_kernel_level_measured (M2iKernelFamily family)
{
  return (guint) family < M2I_KERNELS_N_FAMILIES && kernel_choice ()->measured[family];
}

const char *
m2i_cpu_kernels_string (void)
{
  return kernel_choice ()->text;
}
