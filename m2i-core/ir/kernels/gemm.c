/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The GEMM driver, packing, and the plain-C micro-kernel (see gemm.h). */
#include "gemm.h"
#include "kernels-private.h"
#include <base/m2i-cpu.h>

#include <string.h>

#define C_MR 4
#define C_NR 8

/* Plain C with GNU vector types (4 floats, SSE2 on x86-64, NEON elsewhere):
 * 4 rows × 8 columns = 8 vector accumulators, which stay in registers. */
typedef float v4sf __attribute__ ((vector_size (16)));

static inline v4sf
load_v4 (const float *p)
{
  v4sf v;
  memcpy (&v, p, sizeof v);
  return v;
}

static void
micro_c (gint kc, const float *a, const float *b, const gint32 *off, const M2iGemmTile *tile)
{
  v4sf t[C_MR][2] = { { { 0 } } };
  for (gint p = 0; p < kc; p++) {
    const float *bp = b + off[p];
    v4sf b0 = load_v4 (bp), b1 = load_v4 (bp + 4);
    for (gint i = 0; i < C_MR; i++) {
      v4sf ai = { a[i], a[i], a[i], a[i] };
      t[i][0] += ai * b0;
      t[i][1] += ai * b1;
    }
    a += C_MR;
  }
  for (gint i = 0; i < tile->rows; i++) {
    float v[C_NR];
    memcpy (v, &t[i][0], sizeof t[i][0]);
    memcpy (v + 4, &t[i][1], sizeof t[i][1]);
    ir_gemm_finish_lanes (v, C_NR, tile->c + i * tile->ldc, i, 0, tile);
  }
}

static void
gemv_c (gint kc, const float *a, gsize as, const float *b, const gint32 *off, float *c,
    gboolean accumulate)
{
  float t[C_NR];
  for (gint j = 0; j < C_NR; j++)
    t[j] = accumulate ? c[j] : 0.0f;
  for (gint p = 0; p < kc; p++) {
    const float *bp = b + off[p];
    float ap = a[p * as];
    for (gint j = 0; j < C_NR; j++)
      t[j] += ap * bp[j];
  }
  memcpy (c, t, sizeof t);
}

static const M2iGemmArch gemm_arch_c = {
  "c", C_MR, C_NR, 256, micro_c, C_NR, { NULL, micro_c }, { NULL, gemv_c }, NULL,
};

const M2iGemmArch *
ir_gemm_arch_at (M2iCpuFlags level)
{
  M2iCpuFlags f = m2i_cpu_flags () & level;
  if (ir_gemm_arch_avx512_ptr && (f & M2I_CPU_AVX512F) && (m2i_cpu_flags () & M2I_CPU_FMA))
    return ir_gemm_arch_avx512_ptr;
  if (ir_gemm_arch_avx2_ptr && (f & M2I_CPU_AVX2) && (m2i_cpu_flags () & M2I_CPU_FMA))
    return ir_gemm_arch_avx2_ptr;
  return &gemm_arch_c;
}

const M2iGemmArch *
ir_gemm_arch (void)
{
  return ir_gemm_arch_at (ir_k_level (M2I_KERNELS_GEMM));
}

const gint32 *
ir_gemm_packed_offsets (const M2iGemmArch *arch)
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
ir_gemm_packed_a_size (const M2iGemmArch *arch, gint m, gint k)
{
  return (gsize) ((m + arch->mr - 1) / arch->mr) * arch->mr * (gsize) k;
}

gboolean
ir_gemm_half_b (const M2iGemmArch *arch)
{
  return arch->gemv_h[1] && (m2i_cpu_flags () & M2I_CPU_F16C);
}

gsize
ir_gemm_strip_size (const M2iGemmArch *arch)
{
  return (gsize) arch->nr;
}

void
ir_gemm_pack_a (const M2iGemmArch *arch, const float *src, gssize rs,
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
ir_gemm_packed_b_size (const M2iGemmArch *arch, gint k, gint n)
{
  return (gsize) ((n + arch->nr - 1) / arch->nr) * arch->nr * (gsize) k;
}

void
ir_gemm_pack_b_panel (const M2iGemmArch *arch, const float *src, gssize rs,
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
ir_gemm_pack_b (const M2iGemmArch *arch, const float *src, gssize rs,
    gssize cs, gint k, gint n, float *dst)
{
  for (gint n0 = 0; n0 < n; n0 += arch->nr) {
    ir_gemm_pack_b_panel (arch, src, rs, cs, 0, k, n0, MIN (arch->nr, n - n0), dst);
    dst += (gsize) arch->nr * k;
  }
}

/* The fused bias and ReLU on rows × cols of c (see M2iGemmOut). */
M2I_K_INLINE void
epilogue_body (float *c, gsize ldc, gint rows, gint cols, const float *row_bias,
    const float *col_bias, gboolean relu)
{
  for (gint i = 0; i < rows; i++) {
    float *r = c + i * ldc;
    if (col_bias)
      for (gint j = 0; j < cols; j++)
        r[j] = r[j] + col_bias[j];
    if (row_bias) {
      float rb = row_bias[i];
      for (gint j = 0; j < cols; j++)
        r[j] = r[j] + rb;
    }
    if (relu)
      for (gint j = 0; j < cols; j++)
        r[j] = r[j] > 0.0f ? r[j] : 0.0f;
  }
}
M2I_K_SIMD_CLONES (epilogue, (float *c, gsize ldc, gint rows, gint cols,
        const float *row_bias, const float *col_bias, gboolean relu),
    (c, ldc, rows, cols, row_bias, col_bias, relu))

void
ir_gemm_epilogue (float *c, gsize ldc, gint rows, gint cols, const float *row_bias,
    const float *col_bias, gboolean relu)
{
  epilogue (c, ldc, rows, cols, row_bias, col_bias, relu);
}

/* Rows of B a tail pass takes at once: the columns of every K block of
 * the pass are gathered first (up to TAIL_KC · M2I_GEMM_TAIL_MAX floats,
 * 64 KiB on the stack; wider panels take fewer rows), then each row panel
 * runs through all of them in one kernel call. A row panel's weights are
 * then read once, from start to end, and the panels one after the other:
 * A streams through in order (4.7 MB for head-pose-estimation's 2×2-pixel
 * 3×3 layer, K 2304), where K blocks of arch->kc rows read 24 KiB runs
 * 73 KiB apart, with their partial sums through C between the blocks. */
#define TAIL_KC 4096
/* Sums a tail panel of several passes keeps between them (16 KiB: 128
 * rows of 32 pixels). */
#define TAIL_KEPT 4096

/* The pixels of a tail panel: column col[j] of the panel (B's column n0 +
 * col[j]) goes to C column dst[j], j < n; lanes[g] has bit l set when
 * column g·step + l is one of them. */
typedef struct {
  gint n, groups;
  guint32 lanes[M2I_GEMM_MAX_NR];
  gint32 col[M2I_GEMM_MAX_NR], dst[M2I_GEMM_MAX_NR];
} TailCols;

/* The panel's columns that are pixels: all @ncols from n0, or the lanes
 * of @out's runs. */
static void
tail_cols (const M2iGemmArch *arch, gint n0, gint ncols, const M2iGemmOut *out, TailCols *tc)
{
  gint step = arch->step;
  tc->n = 0;
  tc->groups = (ncols + step - 1) / step;
  for (gint g = 0; g < tc->groups; g++) {
    tc->lanes[g] = 0;
    if (!out->run_start) {
      gint w = MIN (step, ncols - g * step);
      tc->lanes[g] = w >= 32 ? ~0u : (1u << w) - 1;
      for (gint l = 0; l < w; l++) {
        tc->col[tc->n] = g * step + l;
        tc->dst[tc->n++] = n0 + g * step + l;
      }
      continue;
    }
    for (gint r = out->run_start[g]; r < out->run_start[g + 1]; r++)
      for (gint l = 0; l < step; l++)
        if (out->run_mask[r] >> l & 1) {
          tc->lanes[g] |= 1u << l;
          tc->col[tc->n] = g * step + l;
          tc->dst[tc->n++] = out->run_at[r] + l;
        }
  }
}

static gboolean
tail_panel (const M2iGemmArch *arch, gint m, gint k, const float *packed_a,
    gint n0, gint ncols, M2iGemmPanelB get_b, gpointer user, float *bbuf,
    const M2iGemmOut *out, const TailCols *tc)
{
  gint mr = arch->mr, n = tc->n;
  if (n < 1)
    return TRUE;
  /* B is made (gathered, for im2col) a K block at a time, as
   * ir_gemm_column_panel () does, each block once for all row panels. */
  gint kmax = MIN (arch->kc, TAIL_KC * M2I_GEMM_TAIL_MAX / n);
  gint blocks = MAX (1, (k + kmax - 1) / kmax);
  gint kb = MAX ((k + blocks - 1) / blocks, 1);
  gint pass = MAX (TAIL_KC * M2I_GEMM_TAIL_MAX / n / kb, 1) * kb;
  /* The pass's pixels packed tight: read by every row panel, they stay
   * in L1 or L2 (kc rows of a packed panel are kc cache lines). The
   * packing may write a vector past the last row. */
  float tight[TAIL_KC * M2I_GEMM_TAIL_MAX + 16];
  float kept[TAIL_KEPT];
  gboolean keep = pass < k && (gsize) (m + 4 * mr) * n <= TAIL_KEPT;
  for (gint k0 = 0; k0 < k; k0 += pass) {
    gint kp = MIN (pass, k - k0);
    gboolean last = k0 + kp >= k;
    for (gint q = 0; q < kp; q += kb) {
      gint kc = MIN (kb, kp - q);
      const gint32 *off = NULL;
      const float *b = get_b (user, k0 + q, kc, n0, ncols, bbuf, &off);
      float *t = tight + (gsize) q * n;
      if (arch->tail_pack) {
        arch->tail_pack (b, off, kc, tc->lanes, tc->groups, n, t);
        continue;
      }
      for (gint p = 0; p < kc; p++)
        for (gint j = 0; j < n; j++)
          t[p * n + j] = b[off[p] + tc->col[j]];
    }
    /* Row panels four at a time where four remain (two 512-bit vectors
     * per column), else two where two remain (one), the pixels in chunks
     * of up to M2I_GEMM_TAIL_CHUNK, cut by their count alone (a row's
     * sums then do not depend on the row panels it came with). */
    gint chunks = (n + M2I_GEMM_TAIL_CHUNK - 1) / M2I_GEMM_TAIL_CHUNK;
    for (gint i0 = 0; i0 < m;) {
      gint panels = m - i0 >= 4 * mr ? 4 : m - i0 > mr ? 2 : 1, w = panels * mr;
      gint rows = MIN (w, m - i0);
      for (gint ch = 0; ch < chunks; ch++) {
        gint j0 = n * ch / chunks, nj = n * (ch + 1) / chunks - j0;
        const gint32 *dst = tc->dst + j0;
        float local[M2I_GEMM_TAIL_CHUNK * 4 * M2I_GEMM_MAX_MR];
        /* The sums of the passes before the last stay in @kept when all
         * of them fit (no round trip through C), else go through C. */
        float *acc = keep ? kept + (gsize) i0 * n + (gsize) j0 * w : local;
        if (k0 > 0 && !keep)
          for (gint i = 0; i < rows; i++)
            for (gint j = 0; j < nj; j++)
              acc[j * w + i] = out->c[(gsize) (i0 + i) * out->ldc + dst[j]];
        arch->tail (kp, packed_a + (gsize) i0 * k + (gsize) k0 * mr, (gsize) mr * k, panels,
            tight + j0, n, nj, k0 > 0, acc);
        if (keep && !last)
          continue;
        /* The epilogue's operations, in its order (ir_gemm_finish_lanes),
         * after the last pass. */
        for (gint i = 0; i < rows; i++) {
          float *row = out->c + (gsize) (i0 + i) * out->ldc;
          float rb = last && out->row_bias ? out->row_bias[i0 + i] : 0.0f;
          gboolean relu = last && out->relu;
          for (gint j = 0; j < nj; j++) {
            float x = acc[j * w + i];
            if (last && out->row_bias)
              x = x + rb;
            if (relu)
              x = x > 0.0f ? x : 0.0f;
            row[dst[j]] = x;
          }
        }
      }
      i0 += w;
    }
  }
  return TRUE;
}

gboolean
ir_gemm_tail_panel (const M2iGemmArch *arch, gint m, gint k, const float *packed_a,
    gint n0, gint ncols, M2iGemmPanelB get_b, gpointer user, float *bbuf,
    const M2iGemmOut *out)
{
  if (!arch->tail || ncols < 1 || ncols > M2I_GEMM_TAIL_REM_MAX || arch->mr > M2I_GEMM_MAX_MR ||
      out->run_start || out->col_bias)
    return FALSE;
  TailCols tc;
  tail_cols (arch, n0, ncols, out, &tc);
  return tail_panel (arch, m, k, packed_a, n0, ncols, get_b, user, bbuf, out, &tc);
}

gboolean
ir_gemm_wide_wanted (const M2iGemmArch *arch, gint ncols, gint pixels)
{
  if (!arch->tail || pixels < 1 || pixels > M2I_GEMM_WIDE_MAX || ncols > arch->nr)
    return FALSE;
  gint lanes = (ncols + arch->step - 1) / arch->step * arch->step;
  return pixels <= M2I_GEMM_TAIL_MAX || (lanes - pixels) * 8 >= lanes;
}

gboolean
ir_gemm_wide_panel (const M2iGemmArch *arch, gint m, gint k, const float *packed_a,
    gint n0, gint ncols, M2iGemmPanelB get_b, gpointer user, float *bbuf,
    const M2iGemmOut *out)
{
  if (!out->run_start && ncols <= M2I_GEMM_TAIL_MAX)
    return ir_gemm_tail_panel (arch, m, k, packed_a, n0, ncols, get_b, user, bbuf, out);
  if (!arch->tail || ncols < 1 || ncols > arch->nr || arch->mr > M2I_GEMM_MAX_MR ||
      out->col_bias || (gint64) m * k < M2I_GEMM_WIDE_MIN_MACS)
    return FALSE;
  TailCols tc;
  tail_cols (arch, n0, ncols, out, &tc);
  if (!ir_gemm_wide_wanted (arch, ncols, tc.n))
    return FALSE;
  return tail_panel (arch, m, k, packed_a, n0, ncols, get_b, user, bbuf, out, &tc);
}

void
ir_gemm_column_panel (const M2iGemmArch *arch, gint m, gint k,
    const float *packed_a, gsize a1_stride, gint n0, gint ncols, M2iGemmPanelB get_b,
    gpointer user, float *bbuf, float *strip, const M2iGemmOut *out)
{
  gint mr = arch->mr, step = arch->step;
  g_assert (ncols <= arch->nr && !(out->run_start && out->col_bias));
  gint groups = (ncols + step - 1) / step;
  /* The narrowest kernel that covers the panel's columns. */
  void (*micro) (gint, const float *, const float *, const gint32 *, const M2iGemmTile *) =
      arch->narrow[groups];
  guint8 run_start[M2I_GEMM_MAX_NR + 1];
  guint32 run_mask[M2I_GEMM_MAX_NR];
  gint32 run_at[M2I_GEMM_MAX_NR];
  M2iGemmTile tile = { NULL, out->ldc, 0, FALSE, NULL, NULL, FALSE,
    out->run_start, out->run_mask, out->run_at, M2I_GEMM_RUNS };
  if (!out->run_start) {
    /* Consecutive columns from n0: one run per group, the last cut at
     * ncols. */
    for (gint g = 0; g < groups; g++) {
      gint lanes = MIN (step, ncols - g * step);
      run_start[g] = (guint8) g;
      run_mask[g] = lanes >= 32 ? ~0u : (1u << lanes) - 1;
      run_at[g] = n0 + g * step;
    }
    run_start[groups] = (guint8) groups;
    tile.run_start = run_start;
    tile.run_mask = run_mask;
    tile.run_at = run_at;
    if (ncols == groups * step)
      tile.layout = M2I_GEMM_PLAIN;
  }

  /* K blocks of equal size (288 = 144 + 144, not 256 + 32): a short block
   * would pay the tile's load and store for little arithmetic. */
  gint blocks = MAX (1, (k + arch->kc - 1) / arch->kc);
  gint kb = MAX ((k + blocks - 1) / blocks, 1);
  for (gint k0 = 0;; k0 += kb) {
    gint kc = MIN (kb, k - k0);
    gboolean last = k0 + kc >= k;
    const gint32 *off = NULL;
    const float *b = kc > 0 ? get_b (user, k0, kc, n0, ncols, bbuf, &off) : NULL;
    tile.accumulate = k0 > 0;
    tile.col_bias = last && out->col_bias ? out->col_bias + n0 : NULL;
    tile.relu = last && out->relu;
    if (m == 1) {
      /* One row: partial sums per column in the strip (accumulated there
       * over the K blocks), then stored like a tile row. */
      const float *a = packed_a + (gsize) k0 * a1_stride;
      if (kc > 0 && out->half_b)
        arch->gemv_h[groups] (kc, a, a1_stride, (const guint16 *) b, off, strip, k0 > 0);
      else if (kc > 0)
        arch->gemv[groups] (kc, a, a1_stride, b, off, strip, k0 > 0);
      else
        memset (strip, 0, arch->nr * sizeof (float));
      if (last) {
        tile.accumulate = FALSE;
        tile.row_bias = out->row_bias;
        for (gint g = 0; g < groups; g++)
          ir_gemm_finish_lanes (strip + g * step, step, out->c, 0, g, &tile);
      }
    } else {
      for (gint i0 = 0; i0 < m; i0 += mr) {
        tile.c = out->c + (gsize) i0 * out->ldc;
        tile.rows = MIN (mr, m - i0);
        tile.row_bias = last && out->row_bias ? out->row_bias + i0 : NULL;
        micro (kc, packed_a + (gsize) i0 * k + (gsize) k0 * mr, b, off, &tile);
      }
    }
    if (last)
      break;
  }
}
