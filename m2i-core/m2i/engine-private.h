/* engine-private.h — internals of the M2I engine (not installed).
 *
 * csc kernels: the exact integer colour conversion of docs/m2i-engine.md in
 * one plain-C and one AVX2 version behind a table chosen from m2i_cpu_flags().
 * Op kernels: the plain-C one-op-at-a-time implementations shared by the
 * reference path and by tasks that run op by op. Fused kernels: one pass from
 * NV12/I420 to the task's output.
 */
#pragma once

#include <m2i/m2i-format.h>
#include <m2i/m2i-ops.h>
#include <m2i/m2i-plan.h>
#include <m2i/resize-private.h>

G_BEGIN_DECLS

/* ---- csc ---------------------------------------------------------------- */

/* Per-pixel chroma terms (compacted columns; pair kernels keep them in
 * registers): for each output channel, q' (added after the
 * division) and r' (added before it), see m2i_csc_pixel(). Six arrays of
 * `terms_stride` int16 each: qR rR qG rG qB rB. */
enum { CSC_QR, CSC_RR, CSC_QG, CSC_RG, CSC_QB, CSC_RB, CSC_N_TERMS };

/* Chroma (u' = U-128, v' = V-128) to the six terms, exactly; see docs. */
static inline void
m2i_csc_chroma_terms (int u, int v, gint16 t[CSC_N_TERMS])
{
  /* 1596v = 1000(v + floor(v/2)) + (500(v&1) + 96v) */
  int s = 500 * (v & 1) + 96 * v + 13000, q2 = s / 1000;
  t[CSC_QR] = (gint16) (v + (v >> 1) + q2 - 13 - 3);
  t[CSC_RR] = (gint16) (s - 1000 * q2 + 3500);
  /* -813v = -1000v + 187v;  -391u = -1000 floor(u/2) + (109u - 500(u&1)) */
  int sv = 187 * v + 24000, qv = sv / 1000;
  int su = 109 * u - 500 * (u & 1) + 15000, qu = su / 1000;
  t[CSC_QG] = (gint16) (-v + qv - 24 - (u >> 1) + qu - 15 - 3);
  t[CSC_RG] = (gint16) ((sv - 1000 * qv) + (su - 1000 * qu) + 3500);
  /* 2018u = 1000(2u) + 18u */
  int sb = 18 * u + 3000, qb = sb / 1000;
  t[CSC_QB] = (gint16) (2 * u + qb - 3 - 3);
  t[CSC_RB] = (gint16) (sb - 1000 * qb + 3500);
}

/* One channel of one pixel: floor((1164(Y-16) + k·chroma + 500) / 1000)
 * clamped to [0,255], from the precomputed q', r'. The division by 1000 of
 * z in [0, 59074) is (z · 33555) >> 25, exact on that range. */
static inline guint8
m2i_csc_pixel (int y, int q, int r)
{
  int yy = y - 16;
  int z = 164 * yy + r;
  int o = yy + q + ((z * 33555) >> 25);
  return (guint8) (o < 0 ? 0 : o > 255 ? 255 : o);
}

typedef enum {
  CSC_OUT_IL_U8,       /* p[0]: interleaved, channel order per `bgr` */
  CSC_OUT_PL_U8,       /* p[0..2]: R, G, B plane rows */
  CSC_OUT_PL_F16,      /* p[0..2]: R, G, B plane rows, fp16 (+norm) */
  CSC_OUT_PL_F32,      /* p[0..2]: R, G, B plane rows, fp32 (+norm) */
} CscOutMode;

typedef struct {
  CscOutMode mode;
  gboolean bgr;        /* CSC_OUT_IL_U8: write B,G,R */
  gboolean norm;       /* fp modes: y = (x - sub) * mul + add per R,G,B */
  float sub[3], mul[3], add[3];
} CscOutSpec;

enum {
  FP_LOAD_FILL,                /* scalar (the tail; reads that SIMD loads would
                                  take outside the rows) */
  FP_LOAD_GATHER,              /* 4-byte gathers */
  FP_LOAD_PERMUTE,             /* VBMI byte permutes over windows */
};

/* Plan-time tables of the float pair kernels (CscKernels.fpair_rows): n
 * outputs of a two-tap horizontal resize whose taps read adjacent source
 * columns x[i] and x[i] + 1 with weights w0[i], w1[i] (none negative, so the
 * contract's "0.0f +" changes nothing and is left out). csc runs in fp32,
 * exactly (docs/m2i-engine.md, "float pair path"): p = Y·1.164 + K(U, V),
 * out = clamp(floor(p)), K from one or two multiply-adds per channel.
 * Built by m2i_fpair_table_new for the kernels in use. */
typedef struct {
  gint n;                      /* outputs per row */
  gboolean nv12;               /* chroma: NV12 UV row, or I420 U and V rows */
  gint wy, wc;                 /* luma / chroma row lengths in bytes */
  gint32 *xs;                  /* n + 16 columns (tap 0), padded with the last */
  float *w0, *w1;              /* n + 16 weights, padded with zeros */
  int plane_of[3];             /* ring plane (memory channel) of R, G, B */
  guint8 *load;                /* per block of 16 outputs, how its source bytes
                                  are fetched: FP_LOAD_* */
  /* VBMI byte permutes, per block b of 8 outputs (NULL without VBMI): window
   * starts, and 64-byte indices filling dword lanes 8 (b % 2) .. +7 of the
   * block's 16-output group with Y(x), Y(x + 1) (luma) and U(x), V(x),
   * U(x + 1), V(x + 1) (chroma). */
  gint32 *ybase, *cbase;
  guint8 *yidx, *cidx;
} FPairTable;

typedef struct {
  const char *name;
  gint block;          /* pixels per SIMD block; terms arrays are padded to it */
  /* Terms for n pixels with their own chroma samples (compacted columns). */
  void (*prep_444) (const guint8 *u, const guint8 *v, gint n, gint16 *terms,
      gsize terms_stride);
  /* n pixels of one luma row to the output rows @dst (per @spec). */
  void (*row) (const guint8 *y, const gint16 *terms, gsize terms_stride, gint n,
      guint8 *const dst[3], const CscOutSpec *spec);
  /* Two luma rows (@y1 may be NULL) of n pixels sharing one chroma row:
   * NV12 UV row in @c1 (@c2 NULL) or I420 U, V rows in @c1, @c2. */
  void (*pair) (const guint8 *y0, const guint8 *y1, const guint8 *c1, const guint8 *c2,
      gint n, guint8 *const d0[3], guint8 *const d1[3], const CscOutSpec *spec);
  /* u8 -> fp16 (exact) for n values. */
  void (*u8_to_f16) (const guint8 *src, m2i_f16 *dst, gint n);
  /* Listed columns: cy[k] = y[xs[k]] (skipped if @y is NULL), and when
   * @c1 is set the chroma of column xs[k] from an NV12 UV row (@c2 NULL) or
   * I420 U, V rows; @wy, @wc: luma and chroma row lengths in bytes (reads
   * stay inside them). gather_pairs: columns xs[i] and xs[i] + 1, stored at
   * [i] and [n + i] (plain C at every level: where pairs apply, the SIMD
   * levels run the float pair path instead). */
  void (*gather) (const guint8 *y, gint wy, const guint8 *c1, const guint8 *c2, gint wc,
      const gint32 *xs, gint K, guint8 *cy, guint8 *cu, guint8 *cv);
  void (*gather_pairs) (const guint8 *y, gint wy, const guint8 *c1, const guint8 *c2, gint wc,
      const gint32 *xs, gint n, guint8 *cy, guint8 *cu, guint8 *cv);
  /* Horizontal resize over expanded columns (fused.c explains): @wt the x
   * table's weights tap block after tap block (T blocks of n), @p three
   * planes of K = n*T u8 values in the same order; @dst: 3 planes of n sums. */
  void (*hpass_expanded) (const float *wt, gint T, gint n, const guint8 *p, gint K, float *dst);
  /* out[i] = fp16 ((fp16 (v[i]) - sub[i]) * mul[i] + add[i]), in fp32 with
   * round-to-nearest-even conversions: an fp16 chain's resize result with
   * the fast norm. */
  void (*finish_f16_norm) (const float *v, const float *sub, const float *mul,
      const float *add, gint n, m2i_f16 *out);
  /* Float pair path (NULL in the plain-C set): colour conversion
   * of the columns @t lists in luma rows @y0 and @y1 (NULL: one row) sharing
   * one chroma row (@c1 NV12 UV, or @c1, @c2 I420 U, V), and the two-tap
   * horizontal pass, into @h0 / @h1: three planes of t->n sums in memory
   * channel order — the same values hpass_expanded gives. */
  void (*fpair_rows) (const FPairTable *t, const guint8 *y0, const guint8 *y1,
      const guint8 *c1, const guint8 *c2, float *h0, float *h1);
  /* fpair_rows fetches by byte permutes (the table needs windows). */
  gboolean fpair_permutes;
  /* Vertical two-tap pass, fp16 rounding, optional norm (per plane
   * sub/mul/add, the fast formula) and the planar fp16 store, in one sweep:
   * out[c][i] = fp16 (norm (fp16 (wy0·h0[c·n + i] + wy1·h1[c·n + i]))),
   * the sum evaluated as the resize contract says for weights >= +0. */
  void (*vfinish_f16) (const float *h0, const float *h1, float wy0, float wy1, gint n,
      const float *sub, const float *mul, const float *add, m2i_f16 *const out[3]);
  /* op-by-op norm of fp16 data: out[i] = fp16 ((in[i] - sub) * mul + add). */
  void (*norm_f16) (const m2i_f16 *in, m2i_f16 *out, gint n, float sub, float mul, float add);
} CscKernels;

/* Tables for CscKernels.fpair_rows over @n outputs: columns @xs (tap 0),
 * weights @w0, @w1; luma row length @wy; NV12 or I420; @bgr: channel order.
 * With @vbmi, the byte-permute windows too. */
FPairTable *m2i_fpair_table_new (const gint32 *xs, const float *w0, const float *w1, gint n,
    gint wy, gboolean nv12, gboolean bgr, gboolean vbmi);
void m2i_fpair_table_free (FPairTable *t);

/* The kernels for this CPU (respects M2I_CPU_DISABLE). */
const CscKernels *m2i_csc_kernels (void);

/* Padded terms stride for a row of @n pixels. */
gsize m2i_csc_terms_stride (const CscKernels *k, gint n);

/* Zeroed memory for a whole image or intermediate; NULL with
 * M2I_ERROR_FAILED ("cannot allocate ...") instead of aborting when a huge
 * request cannot be met. Free with g_free. */
gpointer m2i_try_alloc0 (gsize size, const char *what, GError **error);

/* ---- op-by-op kernels (reference) --------------------------------------- */

/* What each op of a chain produces: the format and size after op i. */
typedef struct {
  M2iFormat format[M2I_MAX_OPS];
  gint width[M2I_MAX_OPS], height[M2I_MAX_OPS];
} ChainShapes;

/* Checks @ops applied to @in and, when @out is non-NULL, that the result is
 * @out's format and size. Fills @shapes. FALSE with a user-facing error. */
gboolean m2i_chain_validate (const M2iImage *in, const M2iOp *ops, guint n_ops,
    const M2iImage *out, ChainShapes *shapes, GError **error);

typedef struct OpsExec OpsExec;

/* Prepares running @ops one at a time from @in's geometry to @out's:
 * allocates the intermediate images and resize tables. @fast: convert,
 * permute and norm run a row at a time with bulk conversions (norm within one
 * fp16 ulp of the reference formula) instead of the per-sample reference. */
OpsExec *m2i_ops_exec_new (const M2iImage *in, const M2iOp *ops, guint n_ops,
    const M2iImage *out, gboolean fast, GError **error);
void m2i_ops_exec_run (OpsExec *ex, const M2iImage *in, M2iImage *out);
void m2i_ops_exec_free (OpsExec *ex);

/* ---- fused kernels ------------------------------------------------------ */

typedef struct Fused Fused;

/* Whether the one-pass kernel can run @ops (csc first, then optionally
 * convert, resize, permute, norm in the order docs/m2i-engine.md lists). */
gboolean m2i_fused_supported (const M2iImage *in, const M2iOp *ops, guint n_ops,
    const M2iImage *out);
Fused *m2i_fused_new (const M2iImage *in, const M2iOp *ops, guint n_ops,
    const M2iImage *out, gint n_threads, GError **error);
void m2i_fused_run (Fused *f, const M2iImage *in, M2iImage *out);
void m2i_fused_free (Fused *f);
/* Source rows and columns the fused kernel reads (for the cost model). */
void m2i_fused_source_extent (const Fused *f, gint *rows, gint *cols);

/* Norm in the fast paths: (x - B) * (A / C) + D in fp32, within one fp16 ulp
 * of the reference formula. */
static inline void
m2i_norm_fast_coeffs (const M2iNormParams *n, int c, float *sub, float *mul, float *add)
{
  *sub = m2i_f16_to_f32 (n->b[c]);
  *mul = m2i_f16_to_f32 (n->a[c]) / m2i_f16_to_f32 (n->c[c]);
  *add = m2i_f16_to_f32 (n->d[c]);
}

/* ---- device accounting (m2i-device.c) ----------------------------------- */

void m2i_device_account (guint n_device, guint n_cpu, guint64 bytes_read,
    guint64 bytes_written, guint64 cycles, gboolean failed);

/* Runs the plan's tasks (plan lock held by the caller). */
void m2i_plan_execute (M2iPlan *plan, const M2iImage *in, M2iImage *out);
/* Checks run-time images against the plan's geometry. */
gboolean m2i_plan_check_images (M2iPlan *plan, const M2iImage *in,
    const M2iImage *out, GError **error);
GMutex *m2i_plan_lock (M2iPlan *plan);
void m2i_plan_account (M2iPlan *plan);

G_END_DECLS
