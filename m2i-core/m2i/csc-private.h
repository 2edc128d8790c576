/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* csc-private.h — the colour conversion kernels' interface (not installed).
 *
 * The exact integer colour conversion of docs/m2i-engine.md and the kernels
 * the fused path runs (csc pairs, the float pair path of two-tap resizes,
 * fp16 finishing), one table of function pointers per instruction-set level:
 * plain C (csc-c.c, the reference), AVX2 (csc-avx2.c), AVX-512 and AVX-512
 * VBMI (csc-avx512.c). csc.c picks the table for this CPU.
 */
#pragma once

#include <m2i/m2i-format.h>
#include <base/m2i-fp16.h>

G_BEGIN_DECLS

/* The integer csc (docs/m2i-engine.md, "csc"): per chroma sample and output
 * channel, a term Q added after the division by 1000 and a term R added
 * before it, so that each channel of a pixel with luma Y is
 *
 *   out = clamp (Y + Q + floor ((164·Y + R) / 1000), 0, 255)
 *
 * — DESIGN's floor ((1164 (Y − 16) + K + 500) / 1000), K the channel's chroma
 * part (1596 (V − 128), −813 (V − 128) − 391 (U − 128) or 2018 (U − 128)),
 * whenever 1000·Q + R = K − 18124 and 0 ≤ R < 17254 (so z = 164·Y + R <
 * 59074, where floor (z / 1000) = (z · 33555) >> 25). Any such Q will do;
 * m2i_csc_chroma_terms picks ones that cost few 16-bit vector operations.
 * Terms arrays (row kernels): six arrays of `terms_stride` int16, in the
 * order below, laid out per CscKernels.block (see there). */
enum { CSC_QR, CSC_RR, CSC_QG, CSC_RG, CSC_QB, CSC_RB, CSC_N_TERMS };

/* The six terms of chroma bytes @u, @v, as every kernel computes them (the
 * SIMD levels with the same operations in 16-bit lanes: ">> 16" is
 * mulhi_epu16 of w = u + 256v, products reduce modulo 2^16 exactly because
 * each R lies in [0, 17254)); test-m2i-csc checks the conditions above for
 * every (u, v). */
static inline void
m2i_csc_chroma_terms (int u, int v, gint16 t[CSC_N_TERMS])
{
  int w = u + 256 * v;
  int a = (w * 409) >> 16;                     /* ≈ 1.596 v */
  t[CSC_QR] = (gint16) (a - 225);
  t[CSC_RR] = (gint16) (1596 * v - 1000 * a + 2588);
  int s = ((w * 208) >> 16) + ((u * 256 * 100) >> 16);  /* ≈ 0.813 v + 0.391 u */
  t[CSC_QG] = (gint16) (127 - s);
  t[CSC_RG] = (gint16) (1000 * s - 813 * v - 391 * u + 8988);
  t[CSC_QB] = (gint16) (2 * u - 277);
  t[CSC_RB] = (gint16) (18 * u + 572);
}

/* One channel of a pixel with luma @y from its terms @q, @r (see above). */
static inline guint8
m2i_csc_pixel (int y, int q, int r)
{
  int z = 164 * y + r;
  int o = y + q + ((z * 33555) >> 25);
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

/* How the float pair kernels fetch the source bytes of a block of outputs. */
enum {
  FP_LOAD_FILL,                /* scalar (the tail; narrow rows; windows that
                                  would not fit) */
  FP_LOAD_SHUF,                /* 16-byte windows and byte shuffles (pshufb),
                                  two outputs per window everywhere */
  FP_LOAD_SHUF_WIDE,           /* the same, one output per window somewhere */
  FP_LOAD_PERMUTE,             /* VBMI byte permutes over 128-byte windows */
};

/* Which fetch tables a kernel level needs (CscKernels.fpair_fetch). */
typedef enum {
  FP_FETCH_SCALAR,             /* plain C: none */
  FP_FETCH_SHUF,               /* AVX2, AVX-512: 16-byte windows */
  FP_FETCH_PERMUTE,            /* AVX-512 VBMI: 128-byte windows, and 16-byte
                                  ones where those do not fit */
} FPairFetch;

/* 16-byte windows of one block of 8 outputs in one row kind (luma, or
 * chroma): `nwin` (4 or 8) window starts; output j's bytes lie in window
 * j / (8 / nwin). The kernels load window k and window k + nwin/2 as the two
 * 128-bit lanes of a 256-bit vector and place the bytes into the dword lanes
 * of their outputs with one pshufb (index `shuf[k]`, 0x80 = zero byte); the
 * nwin/2 results are or-ed. Dword lane j then holds Y(x), Y(x + 1) (bytes 0,
 * 1; luma) or U(x), V(x), U(x + 1), V(x + 1) (chroma; I420: U from the U
 * row by `shuf`, V from the V row at the same starts by `shuf2`). */
typedef struct {
  gint32 off[8];
  gint32 nwin;
  guint8 shuf[4][32];
  guint8 shuf2[4][32];
} FPairShuf;

/* Plan-time tables of the float pair kernels (CscKernels.fpair_rows,
 * fpair_out): n outputs of a two-tap horizontal resize whose taps read
 * adjacent source columns x[i] and x[i] + 1 with weights w0[i], w1[i] (none
 * negative, so the contract's "0.0f +" changes nothing and is left out).
 * The csc runs in fp32, exactly (csc-kernels.h, docs/m2i-engine.md "float
 * pair path"). Built by m2i_fpair_table_new for the kernels in use. */
typedef struct {
  gint n;                      /* outputs per row */
  gboolean nv12;               /* chroma: NV12 UV row, or I420 U and V rows */
  gint wy, wc;                 /* luma / chroma row lengths in bytes */
  gint32 *xs;                  /* n + 16 columns (tap 0), padded with the last */
  float *w0, *w1;              /* n + 16 weights, padded with zeros (64-byte aligned) */
  float *w0m, *w1m;            /* -M·w0, -M·w1 (csc-kernels.h, FP_M), the same */
  gpointer wmem;               /* the memory of the four */
  int plane_of[3];             /* output plane (memory channel) of R, G, B */
  guint8 *load;                /* per block of 16 outputs, how its source bytes
                                  are fetched: FP_LOAD_* */
  /* 16-byte windows per block of 8 outputs (NULL for FP_FETCH_SCALAR) */
  FPairShuf *ysh, *csh;
  /* VBMI byte permutes, per block b of 8 outputs (NULL without VBMI): window
   * starts (64-byte aligned where the block fits), and 64-byte indices
   * filling dword lanes 8 (b % 2) .. +7 of the block's 16-output group with
   * Y(x), Y(x + 1) (luma) and U(x), V(x), U(x + 1), V(x + 1) (chroma). */
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
  /* Float pair path: colour conversion
   * of the columns @t lists in luma rows @y0 and @y1 (NULL: one row) sharing
   * one chroma row (@c1 NV12 UV, or @c1, @c2 I420 U, V), and the two-tap
   * horizontal pass, into @h0 / @h1: three planes of t->n sums in memory
   * channel order — the same values hpass_expanded gives. */
  void (*fpair_rows) (const FPairTable *t, const guint8 *y0, const guint8 *y1,
      const guint8 *c1, const guint8 *c2, float *h0, float *h1);
  /* Which window tables fpair_rows and fpair_out need. */
  FPairFetch fpair_fetch;
  /* Vertical two-tap pass, fp16 rounding, optional norm (per plane
   * sub/mul/add, the fast formula) and the planar fp16 store, in one sweep:
   * out[c][i] = fp16 (norm (fp16 (wy0·h0[c·n + i] + wy1·h1[c·n + i]))),
   * the sum evaluated as the resize contract says for weights >= +0.
   * NULL in the plain-C set (fused.c: the module's vpass, then finishing). */
  void (*vfinish_f16) (const float *h0, const float *h1, float wy0, float wy1, gint n,
      const float *sub, const float *mul, const float *add, m2i_f16 *const out[3]);
  /* Float pair path, one output row in one sweep (fused.c uses it when
   * output rows hardly share source rows, else fpair_rows and
   * vfinish_f16 or the resize module's vpass): source rows @ya
   * (vertical weight @wy0) and @yb (@wy1; may be @ya) with their chroma rows
   * (@ca1, @ca2 and @cb1, @cb2 as for fpair_rows; the same pointers when the
   * two rows share one), each through fpair_rows' csc and horizontal pass,
   * then vfinish_f16's vertical pass, rounding, norm (@sub NULL: none) and
   * planar fp16 store into @out (memory channel order) — the values
   * fpair_rows + vfinish_f16 give, without the rows in between. */
  void (*fpair_out) (const FPairTable *t, const guint8 *ya, const guint8 *ca1,
      const guint8 *ca2, const guint8 *yb, const guint8 *cb1, const guint8 *cb2, float wy0,
      float wy1, const float *sub, const float *mul, const float *add, m2i_f16 *const out[3]);
  /* op-by-op norm of fp16 data: out[i] = fp16 ((in[i] - sub) * mul + add). */
  void (*norm_f16) (const m2i_f16 *in, m2i_f16 *out, gint n, float sub, float mul, float add);
} CscKernels;

/* Tables for CscKernels.fpair_rows over @n outputs: columns @xs (tap 0),
 * weights @w0, @w1; luma row length @wy; NV12 or I420; @bgr: channel order.
 * @fetch: which window tables to build (the kernels' fpair_fetch). */
FPairTable *m2i_fpair_table_new (const gint32 *xs, const float *w0, const float *w1, gint n,
    gint wy, gboolean nv12, gboolean bgr, FPairFetch fetch);
void m2i_fpair_table_free (FPairTable *t);

/* The kernels for this CPU: pair at the level m2i_cpu_kernel_level()
 * gives M2I_KERNELS_CSC, everything else at M2I_KERNELS_FUSED's (both
 * respect M2I_CPU_DISABLE and M2I_KERNELS). Chosen once; static. */
const CscKernels *m2i_csc_kernels (void);

/* Padded terms stride for a row of @n pixels. */
gsize m2i_csc_terms_stride (const CscKernels *k, gint n);

G_END_DECLS
