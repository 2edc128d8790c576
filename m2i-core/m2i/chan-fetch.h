/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* chan-fetch.h — the SIMD row kernels of the pixel-chain task (chan-fused.c)
 * for interleaved u8 pixels (4-byte BGRx/RGBx/xRGB/xBGR/RGBA/BGRA/...,
 * 3-byte RGB/BGR) and one-plane u8 (GRAY8, NV12/I420's Y) under a resize
 * whose horizontal sums are kept in fp32 (no pillow intermediate rounding):
 *
 *   hrow: one source row straight from its pixels to the horizontal sums of
 *         every channel (n_ch planes of np floats): each output column's tap
 *         pixels fetched as dwords (AVX-512: two 32-pixel windows per 16
 *         outputs and a dword permute, AVX2: up to four 8-pixel chunks per 8
 *         outputs; else a gather; near the row end a byte-wise fill),
 *         channels taken out by a byte shuffle, weighted
 *         and summed — no split channel rows, only the needed pixels;
 *   vrow: one output row from the horizontal sums of its source rows: the
 *         vertical sum, the fp16 rounding of a resize on fp16 data, the norm
 *         and the planar fp32 or fp16 store, in one sweep.
 *
 * The sums are evaluated as the resize contract says (resize-private.h:
 * fp32, from 0.0f, taps in table order, no FMA) and the norm as
 * m2i_norm_fast_coeffs's fast form, so every level gives the same bits as
 * the plain-C reference (chan-fetch.c) and the results equal the reference
 * path's (fp32) or lie within the norm's one fp16 ulp. Private to
 * chan-fused.c and the kernel files. */
#pragma once

#include "resize-private.h"

#include <base/m2i-fp16.h>

G_BEGIN_DECLS

/* How the SIMD kernels fetch the tap pixels of one block of 16 outputs. */
enum {
  CF_GATHER,            /* dword gather at the byte offsets */
  CF_PERM,              /* 4-byte pixels: a window per 8 outputs, dword permutes */
  CF_FILL,              /* byte-wise (a dword would reach past the row end) */
};

typedef struct ChanFetch ChanFetch;

typedef struct {
  const char *name;     /* the level: "c", "avx2", "avx512" */
  void (*hrow) (const ChanFetch *t, const guint8 *row, float *dst);
  void (*vrow) (const ChanFetch *t, const float *const *rows, const float *wy, gint T,
      guint8 *const dst[3]);
} ChanFetchKernels;

struct ChanFetch {
  gint n;               /* output columns */
  gint np;              /* n rounded up to 16: plane stride of hrow's sums */
  gint nb;              /* blocks of 16 outputs */
  gint T;               /* horizontal taps */
  guint n_ch;           /* channels (3 or 1) */
  guint coff[3];        /* byte of channel c in a pixel */
  gint row_bytes;       /* in_width * bytes per pixel */
  gint32 *off;          /* T * np: byte offset of tap t's pixel of output i (the last
                         * output's past n) */
  float *w;             /* T * np: its weight (0 past n) */
  guint8 *mode;         /* T * nb: CF_* of each tap and block */
  gint32 *base;         /* T * nb * 2: CF_PERM: first pixel of the window of each 8 outputs */
  guint8 *chunks;       /* T * nb * 2: CF_PERM at AVX2: 8-pixel chunks of that window */
  gint32 *idx;          /* T * np: CF_PERM: the pixel's dword in its window; AVX-512:
                         * + 32 in the second 8 outputs (a permute of two registers
                         * reads bits 0..4) */
  gboolean round16;     /* the resize ran on fp16 data: round the vertical sums to fp16 */
  gboolean out16;       /* fp16 output (else fp32) */
  float sub[3], mul[3], add[3];     /* norm's fast form (identity without norm) */
  const ChanFetchKernels *k;
};

/* Whether the kernels take a resize with @plan: no intermediate rounding. */
gboolean m2i_chan_fetch_supported (const M2iResizePlan *plan);

/* Tables for @plan's horizontal axis on pixels of @px (1..4) bytes whose channel c
 * is byte @coff[c] (@n_ch channels), finishing to fp32 (or fp16 with
 * @out16; @round16: the resize ran on fp16 data) with the norm's fast
 * coefficients (NULL: none). The kernels are the level
 * m2i_cpu_kernel_level (M2I_KERNELS_FUSED) names. Free with
 * m2i_chan_fetch_free(). */
ChanFetch *m2i_chan_fetch_new (const M2iResizePlan *plan, guint px, guint n_ch,
    const guint coff[3], gboolean round16, gboolean out16, const float *sub,
    const float *mul, const float *add);
void m2i_chan_fetch_free (ChanFetch *t);

/* Dwords of the 16 tap pixels of block @b, tap @tap, byte by byte (bytes past
 * the row end read as 0): the CF_FILL fetch every level shares. */
static inline void
m2i_chan_fetch_fill (const ChanFetch *t, const guint8 *row, gint tap, gint b, guint32 l[16])
{
  const gint32 *o = t->off + (gsize) tap * t->np + 16 * b;
  for (int k = 0; k < 16; k++) {
    guint32 v = 0;
    for (guint j = 0; j < 4 && o[k] + (gint) j < t->row_bytes; j++)
      v |= (guint32) row[o[k] + j] << (8 * j);
    l[k] = v;
  }
}

/* The SIMD levels' entry points: their inline bodies called with the
 * channel count (@NCH) and the tap count (@TT, 0: any) as constants for
 * the common cases (3 channels of 1 or 2 taps, one channel of 2). */
#define CHAN_FETCH_SPECIALISE_HROW(body, t, row, dst)                       \
  do {                                                                      \
    if ((t)->n_ch == 3)                                                     \
      (t)->T == 1 ? body (t, row, dst, 3, 1) : (t)->T == 2 ? body (t, row, dst, 3, 2) \
          : body (t, row, dst, 3, 0);                                       \
    else                                                                    \
      (t)->T == 2 ? body (t, row, dst, 1, 2) : body (t, row, dst, 1, 0);   \
  } while (0)
#define CHAN_FETCH_SPECIALISE_VROW(body, t, rows, wy, T, dst)               \
  do {                                                                      \
    if ((T) == 2)                                                           \
      body (t, rows, wy, T, dst, 2);                                        \
    else                                                                    \
      body (t, rows, wy, T, dst, 0);                                        \
  } while (0)

/* ---- per-level kernel tables ---------------------------------------------- */

extern const ChanFetchKernels m2i_chan_fetch_c;
#if defined(__x86_64__) || defined(__i386__)
extern const ChanFetchKernels m2i_chan_fetch_avx2, m2i_chan_fetch_avx512;
#endif

G_END_DECLS
