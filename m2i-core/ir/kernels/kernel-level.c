/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* kernel-level.c — the instruction-set level of the IR runtime's kernel
 * families on this CPU: the per-model table of base/m2i-cpu.c (with
 * M2I_KERNELS and M2I_CPU_DISABLE), or, on a CPU the table does not list,
 * the fastest variant measured once, at the first layer that needs the
 * family.
 *
 * The widest instruction set is not always the fastest: a core that runs
 * each 512-bit operation as two 256-bit halves (AMD Zen 4, mobile Zen 5)
 * may do as well or better with AVX2 where loads, permutes or masks
 * dominate (the depthwise rows, the Winograd transforms). What is fastest
 * on a CPU one cannot test is measured there: each candidate level runs
 * the family's own kernel on a small cache-resident problem, interleaved,
 * seven times, timed by the thread's CPU clock (what other processes do
 * with the core is not counted), and the best time of each decides. The
 * wider level keeps its place unless the narrower one is 5 % faster: two
 * levels within noise of each other give the same choice every time.
 */
#include "kernels-private.h"
#include "gemm.h"
#include "conv-dw.h"
#include "conv-winograd.h"
#include "conv-int8.h"
#include <base/cpu-private.h>
#include <base/m2i-align.h>

#include <string.h>
#include <time.h>

#define SAMPLES 7
#define NARROWER_WINS 0.95

static double
thread_seconds (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- the families' workloads -------------------------------------------- */

/* One sample of @family's kernel at @level: the seconds per unit of work
 * (the same work for every level of a family). */
typedef double (*Sample) (M2iCpuFlags level, gpointer buffers);

/* GEMM: the micro-kernel on panels that stay in L1 (K = 256), per
 * multiply-add (the tiles of the levels differ). */
static double
sample_gemm (M2iCpuFlags level, gpointer buffers)
{
  const M2iGemmArch *arch = ir_gemm_arch_at (level);
  float *a = buffers, *b = a + M2I_GEMM_MAX_MR * 256, *c = b + M2I_GEMM_MAX_NR * 256;
  const gint32 *off = ir_gemm_packed_offsets (arch);
  guint8 run_start[4] = { 0, 1, 2, 3 };
  guint32 full = arch->step >= 32 ? ~0u : (1u << arch->step) - 1;
  guint32 run_mask[3] = { full, full, full };
  gint32 run_at[3] = { 0, arch->step, 2 * arch->step };
  M2iGemmTile tile = { c, arch->nr, arch->mr, TRUE, NULL, NULL, FALSE, run_start, run_mask,
    run_at, M2I_GEMM_PLAIN };
  double t0 = thread_seconds ();
  for (gint i = 0; i < 64; i++)
    arch->micro (256, a, b, off, &tile);
  return (thread_seconds () - t0) / (64.0 * arch->mr * arch->nr * 256);
}

/* Depthwise: a 3×3 stride-1 and a stride-2 layer's rows, 40 × 70 planes. */
static double
sample_dwconv (M2iCpuFlags level, gpointer buffers)
{
  float *in = buffers, *out = in + 40 * 70, *w = out + 40 * 70;
  IrDwGeom g1 = { 40, 70, 40, 70, 3, 3, 1, 1, 1, 1, 1, 1, 1 };
  IrDwGeom g2 = { 40, 70, 20, 35, 3, 3, 2, 2, 1, 1, 1, 1, 1 };
  ir_dw_geom_init (&g1);
  ir_dw_geom_init (&g2);
  IrDwRows r1 = ir_dw_rows_for (&g1, level), r2 = ir_dw_rows_for (&g2, level);
  double t0 = thread_seconds ();
  for (gint i = 0; i < 8; i++) {
    r1 (&g1, in, 40 * 70, w, NULL, FALSE, out, 0, g1.oh);
    r2 (&g2, in, 40 * 70, w, NULL, TRUE, out, 0, g2.oh);
  }
  return thread_seconds () - t0;
}

/* Winograd: a whole 16 → 16-channel layer on 28 × 28 (transforms and the
 * products; only the transforms' level changes). */
typedef struct {
  M2iWinograd *wg;
  float *in, *out, *scratch;
  gpointer scratch_raw;
} WinogradBuffers;

static double
sample_winograd (M2iCpuFlags level, gpointer buffers)
{
  WinogradBuffers *b = buffers;
  ir_winograd_set_level (b->wg, level);
  double t0 = thread_seconds ();
  for (gint i = 0; i < 4; i++)
    ir_winograd_run (b->wg, b->in, b->out, &(M2iKFusion) { 0 }, 1, b->scratch);
  return thread_seconds () - t0;
}

/* INT8: the GEMM tile (VNNI or AVX2) on panels that stay in L1 (K = 256,
 * 8 × 48 outputs), f32 stores; per multiply-add. */
#define I8_K4 64
static double
sample_int8 (M2iCpuFlags level, gpointer buffers)
{
  M2iKI8Micro micro = ir_k_i8_micro_vnni (level);
  if (!micro)
    micro = ir_k_i8_micro_avx2 (level);
  if (!micro)
    return 1;
  guint8 *b = buffers;
  gpointer a = b + I8_K4 * M2I_K_I8_NR * 4;      /* int8 or int16 weights: zeros */
  float *out = (float *) ((guint8 *) a + I8_K4 * M2I_K_I8_MR * 4 * sizeof (gint16));
  static const gint32 ibias[M2I_K_I8_MR];
  static const float mul[M2I_K_I8_MR] = { 1, 1, 1, 1, 1, 1, 1, 1 }, add[M2I_K_I8_MR];
  static const guint8 run_start[4] = { 0, 1, 2, 3 };
  static const guint16 run_mask[3] = { 0xffff, 0xffff, 0xffff };
  static const gint32 run_at[3] = { 0, 16, 32 };
  gint64 off[I8_K4];
  for (gint p = 0; p < I8_K4; p++)
    off[p] = (gint64) p * M2I_K_I8_NR * 4;
  M2iKI8Out o = { 0 };
  M2iKI8Store st = { out, M2I_K_I8_NR, M2I_K_I8_MR, 0, ibias, mul, add, NULL, NULL, NULL, &o,
    run_start, run_mask, run_at };
  double t0 = thread_seconds ();
  for (gint i = 0; i < 64; i++)
    micro (I8_K4, a, b, off, &st);
  return (thread_seconds () - t0) / (64.0 * M2I_K_I8_MR * M2I_K_I8_NR * I8_K4 * 4);
}

/* ---- measuring ------------------------------------------------------------ */

M2iCpuFlags
ir_k_measure_level (M2iKernelFamily family, M2iCpuFlags bound, double *seconds)
{
  M2iCpuFlags f = m2i_cpu_flags ();
  M2iCpuFlags cand[2];
  gint n = 0;
  if ((bound & M2I_CPU_AVX512F) && (f & M2I_CPU_AVX512F))
    cand[n++] = M2I_CPU_AVX512F;
  if ((bound & (M2I_CPU_AVX512F | M2I_CPU_AVX2)) && (f & M2I_CPU_AVX2) && (f & M2I_CPU_FMA))
    cand[n++] = M2I_CPU_AVX2;
  if (seconds)
    seconds[0] = seconds[1] = 0;
  if (n == 0)
    return 0;
  if (n == 1)
    return cand[0];

  Sample sample = NULL;
  gpointer buffers = NULL;
  WinogradBuffers wb = { NULL };
  if (family == M2I_KERNELS_GEMM) {
    sample = sample_gemm;
    buffers = g_malloc0 ((M2I_GEMM_MAX_MR + M2I_GEMM_MAX_NR) * 256 * sizeof (float) +
        M2I_GEMM_MAX_MR * M2I_GEMM_MAX_NR * sizeof (float));
  } else if (family == M2I_KERNELS_INT8) {
    sample = sample_int8;
    buffers = g_malloc0 (I8_K4 * M2I_K_I8_NR * 4 + I8_K4 * M2I_K_I8_MR * 4 * sizeof (gint16) +
        M2I_K_I8_MR * M2I_K_I8_NR * sizeof (float));
  } else if (family == M2I_KERNELS_DWCONV) {
    sample = sample_dwconv;
    buffers = g_malloc0 ((2 * 40 * 70 + 16) * sizeof (float));
  } else if (family == M2I_KERNELS_WINOGRAD) {
    sample = sample_winograd;
    float *w = g_malloc0 (16 * 16 * 9 * sizeof (float));
    wb.wg = ir_winograd_new (ir_gemm_arch (), w, 16, 16, 28, 28, 1, 1, 28, 28, 1);
    g_free (w);
    wb.in = g_malloc0 (16 * 28 * 28 * sizeof (float));
    wb.out = g_malloc0 (16 * 28 * 28 * sizeof (float));
    wb.scratch_raw = g_malloc0 (ir_winograd_scratch_bytes (wb.wg, 1) + 64);
    wb.scratch = m2i_align_pointer (wb.scratch_raw, 64);
    buffers = &wb;
  } else {
    return cand[0];
  }
  double best[2] = { G_MAXDOUBLE, G_MAXDOUBLE };
  for (gint k = 0; k < n; k++)
    sample (cand[k], buffers);                 /* warm up: caches, first touch */
  for (gint s = 0; s < SAMPLES; s++)
    for (gint k = 0; k < n; k++) {
      gint c = s % 2 ? n - 1 - k : k;          /* the order alternates */
      best[c] = MIN (best[c], sample (cand[c], buffers));
    }
  if (family == M2I_KERNELS_WINOGRAD) {
    g_free (wb.in);
    g_free (wb.out);
    g_free (wb.scratch_raw);
    ir_winograd_free (wb.wg);
  } else {
    g_free (buffers);
  }
  if (seconds) {
    seconds[0] = best[0];
    seconds[1] = best[1];
  }
  return best[1] < NARROWER_WINS * best[0] ? cand[1] : cand[0];
}

M2iCpuFlags
ir_k_level (M2iKernelFamily family)
{
  static gint cached[M2I_KERNELS_N_FAMILIES];   /* level + 1; 0: not yet */
  if ((guint) family >= M2I_KERNELS_N_FAMILIES)
    return 0;
  gint c = g_atomic_int_get (&cached[family]);
  if (c)
    return (M2iCpuFlags) (c - 1);
  M2iCpuFlags bound = m2i_cpu_kernel_level (family), level = bound;
  if (m2i_cpu_kernel_level_measured (family)) {
    double s[2];
    level = ir_k_measure_level (family, bound, s);
    g_debug ("kernel family %d on this CPU: %s (measured: %.3g / %.3g s)", family,
        m2i_cpu_level_name (level), s[0], s[1]);
  }
  /* Two threads measuring at once agree, or nearly: either result is fine. */
  g_atomic_int_set (&cached[family], (gint) level + 1);
  return level;
}
