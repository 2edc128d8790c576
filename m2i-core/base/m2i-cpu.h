/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* m2i-cpu.h — which SIMD extensions fast paths may use, and which level
 * each family of kernels runs at on this CPU.
 *
 * Fast paths are compiled with per-function target attributes and chosen at
 * run time, so one binary runs on any x86-64 (and falls back to plain C
 * elsewhere). The environment variable M2I_CPU_DISABLE (comma separated:
 * "avx512", "vbmi", "vnni", "avx2", "fma", "f16c", "sse4", or "all") hides
 * extensions, so tests can check every path against the reference on one
 * machine.
 *
 * The widest extension is not always the fastest: on cores that split each
 * 512-bit operation into two 256-bit halves (AMD Zen 4, the mobile Zen 5
 * parts) shuffle-heavy kernels run faster with AVX2. m2i_cpu_kernel_level()
 * says which level a kernel family uses, from a table keyed by CPU vendor,
 * family and model (docs/m2i-engine.md, "SIMD dispatch"); the environment
 * variable M2I_KERNELS overrides it.
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
  M2I_CPU_AVX512VBMI = 1 << 6, /* with AVX512F */
} M2iCpuFlags;

/* Kernel families whose instruction-set level is chosen per CPU model. */
typedef enum {
  M2I_KERNELS_CSC,       /* full-frame colour conversion (NV12/I420 -> RGB, no resize) */
  M2I_KERNELS_FUSED,     /* the fused paths' kernels (float pairs, pixel-chain fetch, finishing) */
  M2I_KERNELS_RESIZE,    /* the resize module's row kernels */
  M2I_KERNELS_GEMM,      /* the IR runtime's GEMM micro-kernels (Convolution, MatMul) */
  M2I_KERNELS_WINOGRAD,  /* the IR runtime's Winograd transforms */
  M2I_KERNELS_DWCONV,    /* the IR runtime's depthwise / small-group convolution */
  M2I_KERNELS_INT8,      /* the IR runtime's integer convolution (VNNI at the AVX-512 level) */
  M2I_KERNELS_N_FAMILIES
} M2iKernelFamily;

/* Returns the usable extensions, minus those hidden by M2I_CPU_DISABLE.
 * Computed once; thread-safe. */
M2I_API M2iCpuFlags m2i_cpu_flags (void);

/* Returns a short description such as "avx512 avx2 fma f16c sse4.1". The
 * string is static. */
M2I_API const char *m2i_cpu_flags_string (void);

/* Returns the instruction-set level @family's kernels use on this CPU:
 * M2I_CPU_AVX512F (with M2I_CPU_AVX512VBMI when the CPU has it and the
 * family has such kernels), M2I_CPU_AVX2 or 0 (plain C) — the level the
 * per-model table names for this CPU, else the widest; never more than
 * m2i_cpu_flags() allows. M2I_KERNELS forces levels: "avx2" for every
 * family, or per family "csc=avx2,resize=avx512" (families csc, fused,
 * resize, gemm, winograd, dwconv; levels c, avx2, avx512); a forced level
 * the CPU (or M2I_CPU_DISABLE) does not allow falls back to the widest
 * allowed, unknown words are ignored with a warning. Read once;
 * thread-safe; an unknown @family gives 0.
 *
 * The IR runtime's families (gemm, winograd, dwconv, int8) on a CPU the table
 * does not list (and not forced): this gives the widest level, and the
 * runtime measures its variants up to it once, at the first layer that
 * needs them, and keeps the fastest (docs/ir-kernels.md, "Kernels per
 * CPU"). */
M2I_API M2iCpuFlags m2i_cpu_kernel_level (M2iKernelFamily family);

/* Returns what the level table knows of this CPU and what it chose, e.g.
 * "AMD family 0x1a model 0x02 (zen5): csc avx512-vbmi, fused avx512-vbmi,
 * resize avx512". The string is static. */
M2I_API const char *m2i_cpu_kernels_string (void);

G_END_DECLS
