/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gemm.h — the blocked single-precision matrix product under Convolution and
 * MatMul (not installed).
 *
 * C[m × n] = A[m × k] · B[k × n], C row-major. A is packed once (weights at
 * compile time, or a runtime operand into scratch) into panels of MR rows:
 * [panel][k][MR], rows past m zero. B is read one column panel (NR columns)
 * at a time through a row table: row p of the panel is the NR floats at
 * base + off[p]. That covers both a packed panel (off[p] = p·NR) and B read
 * in place — the stride-1 convolution's shifted input rows, where packing
 * would cost as much as the arithmetic on small images (an "indirect"
 * GEMM). Each (A panel, B panel) pair goes to a register-blocked
 * micro-kernel; the instruction set (AVX-512, AVX2+FMA or plain C) is
 * picked once, from m2i_cpu_flags().
 */
#pragma once

#include <glib.h>
#include <base/m2i-cpu.h>

G_BEGIN_DECLS

#define M2I_GEMM_MAX_MR 8
#define M2I_GEMM_MAX_NR 48
#define M2I_GEMM_MAX_KC 1024
/* Columns a tail kernel takes (see M2iGemmArch.tail): a last panel of up
 * to M2I_GEMM_TAIL_MAX columns always; up to M2I_GEMM_WIDE_MAX pixels
 * where whole vectors of columns would leave many lanes idle
 * (ir_gemm_wide_wanted), in chunks of up to M2I_GEMM_TAIL_CHUNK columns
 * per kernel call. */
#define M2I_GEMM_TAIL_MAX 4
/* Columns past whole vectors a last panel's tail kernel call takes
 * (ir_gemm_tail_panel ()): up to half a vector of 16. The micro-kernel
 * would spend a whole vector on them, at most half its lanes used; the
 * tail kernel runs at about three quarters of the micro-kernel's speed
 * (license-plate-recognition's conv2, 128×1×88 from K 1280: the panels
 * 48 and 32 + 8, 0.119–0.124 → 0.111–0.116 ms). More columns than that (16 +
 * 9) were slower so. */
#define M2I_GEMM_TAIL_REM_MAX 8
#define M2I_GEMM_WIDE_MAX 32
#define M2I_GEMM_TAIL_CHUNK 12
/* Rows × K below which the tail kernel's set-up (B packed, the epilogue
 * lane by lane) costs more than the idle lanes it saves: only the
 * M2I_GEMM_TAIL_MAX rule applies there (open-closed-eye's 3→10 layer,
 * K 27, 900 pixels as 18·48 + 32 + 4: 5.3 → 6.2 µs when split). */
#define M2I_GEMM_WIDE_MIN_MACS 16384

typedef enum {
  M2I_GEMM_PLAIN,            /* group g is one full run at run_at[0] + g·step */
  M2I_GEMM_RUNS,             /* anything else */
} M2iGemmLayout;

/* Where one register tile (mr rows × a panel's columns) goes, and what
 * happens to it on the way. The panel's columns come in groups of `step`
 * (one vector each). A group is stored as runs: lane l of run r (bit l of
 * run_mask[r]) goes to C column run_at[r] + l; group g's runs are
 * run_start[g] .. run_start[g + 1] - 1. One full run covers a whole group;
 * a partial last panel drops its lanes past the matrix; the stride-1
 * convolution's padded grid drops the grid's extra columns, a run per
 * output row the group touches — all stored straight into C, with masked
 * stores, without a detour through a buffer. */
typedef struct {
  float *c;                  /* row 0 of the tile, column 0 of C */
  gsize ldc;                 /* row stride of C */
  gint rows;                 /* rows stored, 1 .. mr (the rest pad A) */
  gboolean accumulate;       /* add what C holds (an earlier K block) */
  /* The fused epilogue, given on the last K block only: + col_bias[c] (c
   * the tile column; only with one run per group, at its start), +
   * row_bias[i], then max (·, 0) when relu — the float operations of an
   * Add and a ReLU layer after the product, in that order. */
  const float *row_bias, *col_bias;
  gboolean relu;
  const guint8 *run_start;   /* groups + 1 entries */
  const guint32 *run_mask;
  const gint32 *run_at;
  M2iGemmLayout layout;      /* whole vectors, the kernels' fast case, or not */
} M2iGemmTile;

typedef struct {
  const char *name;          /* "avx512", "avx2", "c" */
  gint mr, nr;               /* register tile */
  gint kc;                   /* rows of B per block, at most M2I_GEMM_MAX_KC */
  /* The tile C = (accumulate ? C : 0) + a·b, finished and stored as @t
   * says, where a is kc × mr ([p][mr]) and row p of b is the nr floats at
   * b + off[p] (kc may be 0: the tile is then 0 + the epilogue). */
  void (*micro) (gint kc, const float *a, const float *b, const gint32 *off,
      const M2iGemmTile *t);
  /* Narrower kernels for a partly used last panel: narrow[w] computes
   * w·step columns (w = 1 .. nr/step; narrow[nr/step] is micro). */
  gint step;
  void (*narrow[4]) (gint kc, const float *a, const float *b, const gint32 *off,
      const M2iGemmTile *t);
  /* One row (m = 1, a fully connected layer at batch 1): gemv[w] computes
   * c[0..w·step) = (accumulate ? c : 0) + Σ_p a[p·as] · b-row p (its first
   * w·step floats; w = 1 .. nr/step, as narrow[]). A single row would waste
   * mr − 1 rows of the register tile; these keep several partial sums per
   * column instead, so the additions do not wait on each other. */
  void (*gemv[4]) (gint kc, const float *a, gsize as, const float *b, const gint32 *off,
      float *c, gboolean accumulate);
  /* A few columns past whole vectors (a 14×14 plane is 12 vectors and 4
   * columns), output rows along the vector instead, where a vector of
   * columns would be mostly zeros: for @panels (1, 2 or 4) packed A
   * panels, the next at a + a_next each, acc[j·mr·panels + q·mr + i] =
   * (accumulate ? that : 0) + Σ_p a[q·a_next + p·mr + i] · b[p·ldb + j]
   * for j < n <= M2I_GEMM_TAIL_CHUNK (B's columns packed tight, so the
   * panel stays in L1 for every row panel). Each row's sum is the same
   * whichever panels come with it. NULL where not worth it (AVX-512
   * only). */
  void (*tail) (gint kc, const float *a, gsize a_next, gint panels, const float *b, gint ldb,
      gint n, gboolean accumulate, float *acc);
  /* Packs @kc rows of B for the tail kernel: row p (at b + off[p]) keeps
   * the columns g·step + l where bit l of lanes[g] is set (g < groups),
   * in order, @n of them, at t + p·n. May write up to step floats past
   * the last row. NULL: a plain loop does it. */
  void (*tail_pack) (const float *b, const gint32 *off, gint kc, const guint32 *lanes,
      gint groups, gint n, float *t);
  /* gemv[] with B's rows in halves (binary16, the same layout), the same
   * operations in the same order: for a B whose values are all exact in
   * fp16 the results are those of gemv[], with half the memory traffic.
   * Usable when ir_gemm_half_b () says so. */
  void (*gemv_h[4]) (gint kc, const float *a, gsize as, const guint16 *b, const gint32 *off,
      float *c, gboolean accumulate);
} M2iGemmArch;

/* Stores group @g of a tile row (@n results @v, row @i) as @t says, one
 * lane at a time: the scalar form of the vector kernels' epilogue — the
 * same operations in the same order. */
static inline void
ir_gemm_finish_lanes (const float *v, gint n, float *row, gint i, gint g,
    const M2iGemmTile *t)
{
  for (gint r = t->run_start[g]; r < t->run_start[g + 1]; r++)
    for (gint l = 0; l < n; l++) {
      if (!(t->run_mask[r] >> l & 1))
        continue;
      float *d = row + t->run_at[r] + l;
      float x = v[l];
      if (t->accumulate)
        x = x + *d;
      if (t->col_bias)
        x = x + t->col_bias[g * n + l];
      if (t->row_bias)
        x = x + t->row_bias[i];
      if (t->relu)
        x = x > 0.0f ? x : 0.0f;
      *d = x;
    }
}

/* The micro-kernels the level of the GEMM family says on this CPU
 * (ir_k_level (M2I_KERNELS_GEMM): per CPU model, M2I_KERNELS,
 * M2I_CPU_DISABLE, or measured). */
const M2iGemmArch *ir_gemm_arch (void);

/* The micro-kernels of @level (M2I_CPU_AVX512F, M2I_CPU_AVX2, 0: plain C),
 * or the widest below it that this CPU allows. */
const M2iGemmArch *ir_gemm_arch_at (M2iCpuFlags level);

/* The row table of a packed panel: p·nr for p in [0, M2I_GEMM_MAX_KC). */
const gint32 *ir_gemm_packed_offsets (const M2iGemmArch *arch);

/* Floats of a packed A of m × k: ceil(m / mr) · mr · k. */
gsize ir_gemm_packed_a_size (const M2iGemmArch *arch, gint m, gint k);

/* Packs A (element (i, j) at src[i·rs + j·cs]) into @dst. */
void ir_gemm_pack_a (const M2iGemmArch *arch, const float *src, gssize rs,
    gssize cs, gint m, gint k, float *dst);

/* Floats of a packed B of k × n: ceil(n / nr) · nr · k. */
gsize ir_gemm_packed_b_size (const M2iGemmArch *arch, gint k, gint n);

/* Packs B (element (i, j) at src[i·rs + j·cs]) into panels [n / nr][k][nr]
 * with zero columns past n. The panel for columns n0.. and rows k0.. then
 * starts at dst + (n0 / nr) · nr · k + k0 · nr. */
void ir_gemm_pack_b (const M2iGemmArch *arch, const float *src, gssize rs,
    gssize cs, gint k, gint n, float *dst);

/* Packs rows [k0, k0+kc) and columns [n0, n0+ncols) of a strided B into one
 * micro-panel [kc][nr] (zero columns past ncols). */
void ir_gemm_pack_b_panel (const M2iGemmArch *arch, const float *src,
    gssize rs, gssize cs, gint k0, gint kc, gint n0, gint ncols, float *dst);

/* Rows [k0, k0+kc) of the B panel for columns [n0, n0+ncols): sets *off to
 * a row table of kc entries and returns the base pointer; may fill @buf
 * (kc × nr floats) with a packed panel and return it with
 * ir_gemm_packed_offsets(). */
typedef const float *(*M2iGemmPanelB) (gpointer user, gint k0, gint kc, gint n0,
    gint ncols, float *buf, const gint32 **off);

/* Where a panel's results go. */
typedef struct {
  float *c;                  /* C[0][0] */
  gsize ldc;                 /* row stride of C */
  /* NULL: column j of the panel is C column n0 + j, the first ncols kept.
   * Otherwise the panel's runs, as M2iGemmTile's (groups of arch->step
   * columns). */
  const guint8 *run_start;
  const guint32 *run_mask;
  const gint32 *run_at;
  /* Applied as each result is stored, after the last K block: + row_bias[i]
   * (row i of C), + col_bias[c] (column c of C; not with runs), then
   * max (·, 0) when @relu — the same float operations, in the same order,
   * as a following Add and ReLU layer. NULL / FALSE for none. */
  const float *row_bias, *col_bias;
  gboolean relu;
  /* m = 1 only: get_b's panels are halves (guint16, returned cast to
   * const float *) for arch->gemv_h[] (see ir_gemm_half_b ()). */
  gboolean half_b;
} M2iGemmOut;

/* Computes one column panel of C = A·B (columns [n0, n0 + ncols), ncols <=
 * nr) for all m rows. @a is A packed; when m is 1 it may also be the row
 * itself, element p at a[p · a1_stride] (packed: a1_stride = mr). @bbuf:
 * kc × nr floats; @strip: nr floats (one row's results when m is 1). Both
 * scratch, 64-byte aligned for speed. */
void ir_gemm_column_panel (const M2iGemmArch *arch, gint m, gint k,
    const float *a, gsize a1_stride, gint n0, gint ncols, M2iGemmPanelB get_b,
    gpointer user, float *bbuf, float *strip, const M2iGemmOut *out);

/* Computes a last column panel of at most M2I_GEMM_TAIL_REM_MAX columns as
 * ir_gemm_column_panel() does (@out without runs or column biases), with
 * the arch's tail kernel; FALSE (nothing done) where that does not apply:
 * no tail kernel, more columns, runs. The sums are those of the same
 * products in another order. */
gboolean ir_gemm_tail_panel (const M2iGemmArch *arch, gint m, gint k, const float *a,
    gint n0, gint ncols, M2iGemmPanelB get_b, gpointer user, float *bbuf,
    const M2iGemmOut *out);

/* TRUE when a panel of @ncols columns (at most nr), @pixels of them kept
 * (all, or those of the panel's runs; at most M2I_GEMM_WIDE_MAX), is
 * better computed by the tail kernel, output rows along the vector: up to
 * M2I_GEMM_TAIL_MAX pixels, or where whole vectors of columns would leave
 * at least an eighth of their lanes idle (a 5×5 plane: 25 pixels in two
 * vectors of 16, or in a padded grid of 30 columns). FALSE without a tail
 * kernel. */
gboolean ir_gemm_wide_wanted (const M2iGemmArch *arch, gint ncols, gint pixels);

/* Computes a column panel as ir_gemm_column_panel() does (@out without
 * column biases; runs allowed) with the tail kernel, where it has at most
 * M2I_GEMM_TAIL_MAX columns and no runs, or ir_gemm_wide_wanted() says
 * so and @m · @k is at least M2I_GEMM_WIDE_MIN_MACS; FALSE (nothing done)
 * otherwise. Only the pixels (the runs' lanes)
 * are computed. The sums are those of the same products in another
 * order. */
gboolean ir_gemm_wide_panel (const M2iGemmArch *arch, gint m, gint k, const float *a,
    gint n0, gint ncols, M2iGemmPanelB get_b, gpointer user, float *bbuf,
    const M2iGemmOut *out);

/* The fused bias and ReLU of M2iGemmOut on rows × cols of @c (row stride
 * @ldc): + row_bias[i], + col_bias[j], max (·, 0) — also used on depthwise
 * planes. */
void ir_gemm_epilogue (float *c, gsize ldc, gint rows, gint cols, const float *row_bias,
    const float *col_bias, gboolean relu);

/* TRUE when @arch has one-row kernels for B in halves (gemv_h) and the
 * CPU can run them (F16C). */
gboolean ir_gemm_half_b (const M2iGemmArch *arch);

/* Floats of the strip ir_gemm_column_panel() needs. */
gsize ir_gemm_strip_size (const M2iGemmArch *arch);

/* The micro-kernels (gemm-x86.c); NULL where not compiled. */
extern const M2iGemmArch *const ir_gemm_arch_avx2_ptr;
extern const M2iGemmArch *const ir_gemm_arch_avx512_ptr;

G_END_DECLS
