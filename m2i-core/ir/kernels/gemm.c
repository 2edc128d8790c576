/* The GEMM driver, packing, and the plain-C micro-kernel (see gemm.h). */
#include "gemm.h"
#include <base/m2i-cpu.h>

#include <string.h>

#define C_MR 4
#define C_NR 16

/* Plain C: the compiler vectorizes the j loop for whatever the baseline
 * is (SSE2 on x86-64). */
static void
micro_c (gint kc, const float *a, const float *b, const gint32 *off, float *c,
    gsize ldc, gboolean accumulate)
{
  float t[C_MR][C_NR];
  memset (t, 0, sizeof t);
  for (gint p = 0; p < kc; p++) {
    const float *bp = b + off[p];
    for (gint i = 0; i < C_MR; i++) {
      float ai = a[i];
      for (gint j = 0; j < C_NR; j++)
        t[i][j] += ai * bp[j];
    }
    a += C_MR;
  }
  for (gint i = 0; i < C_MR; i++) {
    float *row = c + i * ldc;
    if (accumulate)
      for (gint j = 0; j < C_NR; j++)
        row[j] += t[i][j];
    else
      memcpy (row, t[i], sizeof t[i]);
  }
}

const M2iGemmArch m2i_gemm_arch_c = { "c", C_MR, C_NR, 256, micro_c };

const M2iGemmArch *
m2i_gemm_arch (void)
{
  M2iCpuFlags f = m2i_cpu_flags ();
  if (m2i_gemm_arch_avx512_ptr && (f & M2I_CPU_AVX512F) && (f & M2I_CPU_FMA))
    return m2i_gemm_arch_avx512_ptr;
  if (m2i_gemm_arch_avx2_ptr && (f & M2I_CPU_AVX2) && (f & M2I_CPU_FMA))
    return m2i_gemm_arch_avx2_ptr;
  return &m2i_gemm_arch_c;
}

const M2iGemmArch *
m2i_gemm_arch_by_name (const char *name)
{
  M2iCpuFlags f = m2i_cpu_flags ();
  if (!g_strcmp0 (name, "c"))
    return &m2i_gemm_arch_c;
  if (!g_strcmp0 (name, "avx2") && m2i_gemm_arch_avx2_ptr && (f & M2I_CPU_AVX2)
      && (f & M2I_CPU_FMA))
    return m2i_gemm_arch_avx2_ptr;
  if (!g_strcmp0 (name, "avx512") && m2i_gemm_arch_avx512_ptr
      && (f & M2I_CPU_AVX512F) && (f & M2I_CPU_FMA))
    return m2i_gemm_arch_avx512_ptr;
  return NULL;
}

const gint32 *
m2i_gemm_packed_offsets (const M2iGemmArch *arch)
{
  /* One table per panel width in use (16, 24, 48). */
  static gint32 tables[M2I_GEMM_MAX_NR + 1][M2I_GEMM_MAX_KC];
  static gsize once[M2I_GEMM_MAX_NR + 1];
  gint nr = arch->nr;
  g_assert (nr > 0 && nr <= M2I_GEMM_MAX_NR);
  if (g_once_init_enter (&once[nr])) {
    for (gint p = 0; p < M2I_GEMM_MAX_KC; p++)
      tables[nr][p] = p * nr;
    g_once_init_leave (&once[nr], 1);
  }
  return tables[nr];
}

gsize
m2i_gemm_packed_a_size (const M2iGemmArch *arch, gint m, gint k)
{
  return (gsize) ((m + arch->mr - 1) / arch->mr) * arch->mr * (gsize) k;
}

gsize
m2i_gemm_strip_size (const M2iGemmArch *arch, gint m)
{
  return (gsize) ((m + arch->mr - 1) / arch->mr) * arch->mr * arch->nr;
}

void
m2i_gemm_pack_a (const M2iGemmArch *arch, const float *src, gssize rs,
    gssize cs, gint m, gint k, float *dst)
{
  gint mr = arch->mr;
  for (gint i0 = 0; i0 < m; i0 += mr) {
    gint rows = MIN (mr, m - i0);
    for (gint p = 0; p < k; p++) {
      for (gint i = 0; i < rows; i++)
        dst[i] = src[(i0 + i) * rs + p * cs];
      for (gint i = rows; i < mr; i++)
        dst[i] = 0.0f;
      dst += mr;
    }
  }
}

gsize
m2i_gemm_packed_b_size (const M2iGemmArch *arch, gint k, gint n)
{
  return (gsize) ((n + arch->nr - 1) / arch->nr) * arch->nr * (gsize) k;
}

void
m2i_gemm_pack_b_panel (const M2iGemmArch *arch, const float *src, gssize rs,
    gssize cs, gint k0, gint kc, gint n0, gint ncols, float *dst)
{
  gint nr = arch->nr;
  for (gint p = 0; p < kc; p++) {
    const float *row = src + (k0 + p) * rs + n0 * cs;
    if (cs == 1)
      memcpy (dst, row, ncols * sizeof (float));
    else
      for (gint j = 0; j < ncols; j++)
        dst[j] = row[j * cs];
    for (gint j = ncols; j < nr; j++)
      dst[j] = 0.0f;
    dst += nr;
  }
}

void
m2i_gemm_pack_b (const M2iGemmArch *arch, const float *src, gssize rs,
    gssize cs, gint k, gint n, float *dst)
{
  for (gint n0 = 0; n0 < n; n0 += arch->nr) {
    m2i_gemm_pack_b_panel (arch, src, rs, cs, 0, k, n0, MIN (arch->nr, n - n0), dst);
    dst += (gsize) arch->nr * k;
  }
}

void
m2i_gemm_column_panel (const M2iGemmArch *arch, gint m, gint k,
    const float *packed_a, gint n0, gint ncols, M2iGemmPanelB get_b,
    gpointer user, float *bbuf, float *strip, const M2iGemmOut *out)
{
  gint mr = arch->mr, nr = arch->nr;
  g_assert (ncols <= nr);
  /* Row panels go straight into C when the panel is full width and
   * contiguous there; the rest (a partial last row panel, a narrow or
   * mapped panel) go through the strip. */
  gboolean direct = !out->map && ncols == nr;
  gint m_direct = direct ? m / mr * mr : 0;

  for (gint k0 = 0; k0 < MAX (k, 1); k0 += arch->kc) {
    gint kc = MIN (arch->kc, k - k0);
    const gint32 *off = NULL;
    const float *b = kc > 0 ? get_b (user, k0, kc, n0, ncols, bbuf, &off) : NULL;
    for (gint i0 = 0; i0 < m; i0 += mr) {
      float *c = i0 < m_direct ? out->c + i0 * out->ldc + n0 : strip + i0 * nr;
      gsize ldc = i0 < m_direct ? out->ldc : (gsize) nr;
      if (kc > 0) {
        arch->micro (kc, packed_a + (gsize) i0 * k + (gsize) k0 * mr, b, off, c,
            ldc, k0 > 0);
      } else {
        for (gint i = 0; i < mr; i++)
          memset (c + i * ldc, 0, nr * sizeof (float));
      }
    }
  }
  for (gint i = m_direct; i < m; i++) {
    float *dst = out->c + i * out->ldc;
    const float *src = strip + i * nr;
    if (!out->map) {
      memcpy (dst + n0, src, ncols * sizeof (float));
    } else {
      for (gint j = 0; j < ncols; j++)
        if (out->map[j] >= 0)
          dst[out->map[j]] = src[j];
    }
  }
}
