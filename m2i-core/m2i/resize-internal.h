/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* resize-internal.h — shared by the resize sources only (not by the engine).
 *
 * The SIMD kernels gather across output values. For that they use the
 * horizontal table expanded per channel count: output value e = i*C + c
 * reads source value index[i,t]*C + c with weight[i,t]. Values are grouped
 * in blocks of 16 (one AVX-512 vector, two AVX2 vectors) and each block
 * stores, tap after tap, 16 offsets and 16 weights, so a kernel streams
 * through the table. Lanes past the row end read offset 0 with weight 0.
 */
#pragma once

#include "resize-private.h"

G_BEGIN_DECLS

#define M2I_RESIZE_BLOCK 16

typedef struct {
  gint channels;
  gint n;                        /* out_width * channels values */
  gint taps;
  gint blocks;                   /* ceil (n / 16) */
  gint32 *offset;                /* blocks * taps * 16 source value offsets */
  float *weight;                 /* blocks * taps * 16 */
  gint32 *max_offset;            /* blocks: largest offset read by the block */
  /* Windows: per half block of 8 values, the smallest offset read and the
   * span (largest - smallest + 1). A kernel loads a window of source values
   * once and permutes it per tap instead of gathering, when it is short. */
  gint32 *lo;                    /* 2 * blocks */
  gint32 *span;                  /* 2 * blocks */
  /* For 3 and 4 channels, pixel groups: 4 output pixels at a time, per tap
   * the 4 source pixels' first offsets and weights, so a kernel can gather
   * whole pixels (one 32/64-bit element per pixel) when the blocks above
   * are too sparse for windows. */
  gint groups;                   /* out_width / 4 (whole groups only) */
  gint32 *pix_offset;            /* groups * taps * 4 */
  float *pix_weight;             /* groups * taps * 4 */
  gint32 *pix_max;               /* groups: largest pixel offset */
  gboolean prefer_pixels;        /* most blocks are too wide for a window */
} M2iResizeXTable;

struct _M2iResizeSimd {
  gsize once[5];                 /* g_once guards, by channel count */
  M2iResizeXTable *xt[5];
};

M2iResizeSimd *m2i_resize_simd_new (void);
void m2i_resize_simd_free (M2iResizeSimd *simd);

/* The expanded table of @plan for @channels (1..4), built on first use
 * (thread-safe). Owned by the plan. */
const M2iResizeXTable *m2i_resize_xtable (const M2iResizePlan *plan, gint channels);

/* Plain C evaluation of horizontal output values [e0, e1) of one row; the
 * SIMD kernels use it for blocks whose gathers could read past the row. */
void m2i_resize_hvalues_u8_c (const M2iResizePlan *plan, const guint8 *src,
    gint channels, float *dst, gint e0, gint e1);
void m2i_resize_hvalues_f16_c (const M2iResizePlan *plan, const guint16 *src,
    gint channels, float *dst, gint e0, gint e1);
void m2i_resize_hvalues_f32_c (const M2iResizePlan *plan, const float *src,
    gint channels, float *dst, gint e0, gint e1);

/* Pillow's intermediate rounding of u8 sums: clamp to [0,255], round half
 * away from zero, keep as float. */
static inline float
m2i_resize_round_half_away_u8f (float v)
{
  if (!(v > 0.0f))
    return 0.0f;
  if (v >= 255.0f)
    return 255.0f;
  float t = (float) (gint) v;
  return v - t >= 0.5f ? t + 1.0f : t;
}

/* Parameter validation shared by the plan builder and the spec reference. */
gboolean m2i_resize_params_check (const M2iResizeParams *p, gint in_width,
    gint in_height, GError **error);

/* Argument checks shared by m2i_resize_image_rows and the spec reference. */
gboolean m2i_resize_image_args_check (gint in_w, gint in_h, gint out_w,
    gint out_h, M2iResizeData type, gint channels, const void *src,
    gsize src_stride, void *dst, gsize dst_stride, GError **error);

/* The kernels the public row functions use (the level
 * m2i_cpu_kernel_level (M2I_KERNELS_RESIZE) names). */
const M2iResizeKernels *m2i_resize_kernels_best (void);

/* m2i_resize_image_rows with the given level's kernels (benchmarks). */
gboolean m2i_resize_image_rows_k (const M2iResizeKernels *k, const M2iResizePlan *plan,
    M2iResizeData type, gint channels, const void *src, gsize src_stride, void *dst,
    gsize dst_stride, gint y0, gint y1, float *scratch, GError **error);

/* Instruction-set variants (NULL where not compiled for x86-64). */
const M2iResizeKernels *m2i_resize_kernels_avx2 (void);
const M2iResizeKernels *m2i_resize_kernels_avx512 (void);

G_END_DECLS
