/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* conv-winograd.h — 3×3 stride-1 convolutions by Winograd's minimal
 * filtering F(2×2, 3×3) (not installed).
 *
 * Each 2×2 block of output pixels (a tile) reads a 4×4 block of input:
 * Y = Aᵀ [(G g Gᵀ) ⊙ (Bᵀ d B)] A. The 16 products of the middle step,
 * summed over input channels, are 16 matrix products (one per position ξ of
 * the 4×4 block): M[ξ] = U[ξ] · V[ξ], U[ξ] the transformed weights
 * (C_out × C_in, packed once) and V[ξ] the transformed input (C_in × tiles).
 * That is 16 multiply-adds per input channel for 4 outputs instead of 36,
 * 2.25 times fewer; the transforms themselves are additions (and halvings
 * of the weights). The results differ from the direct sum by rounding only:
 * the transforms' coefficients are 0, ±1 and ±1/2.
 *
 * Tiles are taken in blocks of one GEMM column panel (arch->nr tiles):
 * each slice copies the input rows its blocks read, zero-bordered, into
 * its own scratch, and each block's V is transformed there, multiplied by
 * blocks of output channels, and transformed back straight into the
 * output, with the fused bias and ReLU, so no full-size V or M exists.
 */
#pragma once

#include "gemm.h"
#include "kernels-private.h"

G_BEGIN_DECLS

typedef struct {
  const M2iGemmArch *arch;
  gint64 c_in, c_out, h, w, pt, pl, oh, ow;
  gint64 th, tw, tiles;                /* tiles: th × tw of 2×2 output pixels */
  gint64 hp, wp;                       /* the zero-bordered input: 2·th + 2 by 2·tw + 2 */
  gint64 blocks;                       /* tile blocks, at most arch->nr tiles each */
  gint64 *block_start;                 /* first tile of each block, then the count */
  gint64 tail;                         /* the last block's tiles past its GEMM columns */
  gint64 vw;                           /* floats per row of V and M */
  gint32 *v_off;                       /* p · vw: V's row table for the GEMM */
  gint64 mb, m_blocks;                 /* output channels per GEMM block, blocks of them */
  gboolean channel_major;              /* split, the output-channel blocks outermost */
  float *u;                            /* 16 packed A, u_stride floats apart */
  gsize u_stride;
  gsize v_stride, m_stride;            /* floats between the 16 matrices of V, of M */
  gsize slice_floats;                  /* scratch per slice: its bordered input, V, M, a strip */
  gboolean avx512;                     /* the transforms with AVX-512, else plain C */
} M2iWinograd;

/* Whether layers may take this path: M2I_CONV_WINOGRAD=0 in the
 * environment (read at first use) turns it off, for every layer compiled
 * after; tests and benchmarks set it to compare with the direct product. */
gboolean ir_winograd_enabled (void);
void ir_winograd_set_enabled (gboolean on);

/* The fewest 2×2 output tiles a layer takes this path with (16 by
 * default); returns the previous value. Tests set 1 to check layers of a
 * tile or a few. */
gint ir_winograd_set_min_tiles (gint tiles);

/* TRUE when F(2×2, 3×3) is enabled, applies to the layer and should beat the direct
 * product: a 3×3 kernel at stride 1 and dilation 1, one group, and enough
 * channels and tiles that the 16 small products stay efficient. */
gboolean ir_winograd_applies (gint64 kh, gint64 kw, gint64 sh, gint64 sw, gint64 dh,
    gint64 dw, gint64 groups, gint64 c_in, gint64 c_out, gint64 oh, gint64 ow);

/* Transforms and packs @weights ([C_out][C_in][3][3]) for a layer on
 * h × w inputs with pads @pt (top) and @pl (left) and an oh × ow output,
 * to run on up to @slices threads. */
M2iWinograd *ir_winograd_new (const M2iGemmArch *arch, const float *weights, gint64 c_out,
    gint64 c_in, gint64 h, gint64 w, gint64 pt, gint64 pl, gint64 oh, gint64 ow, gint slices);

void ir_winograd_free (M2iWinograd *wg);

/* The transforms' instruction set: AVX-512 at a level with M2I_CPU_AVX512F
 * (when the CPU allows it), else plain C. ir_winograd_new() sets
 * ir_k_level (M2I_KERNELS_WINOGRAD). */
void ir_winograd_set_level (M2iWinograd *wg, M2iCpuFlags level);

/* Bytes of scratch ir_winograd_run() needs for up to @slices slices. */
gsize ir_winograd_scratch_bytes (const M2iWinograd *wg, gint slices);

/* One image: @in (C_in × h × w) to @out (C_out × oh × ow), then what
 * @fused says (+ bias[c], max (·, 0) or Swish: the fused Add, ReLU or
 * Swish layers; kernels-private.h), over up to @slices threads.
 * @scratch: ir_winograd_scratch_bytes(), 64-byte aligned. */
void ir_winograd_run (const M2iWinograd *wg, const float *in, float *out,
    const M2iKFusion *fused, gint slices, float *scratch);

/* What the Winograd paths share (this one and conv-winocol.h). The tile
 * blocks of @tiles tiles: each at most a column panel of whole vectors,
 * shared out evenly, up to M2I_GEMM_TAIL_MAX tiles past the last whole
 * vector the last block's *@tail; *@block_start (@blocks + 1 entries,
 * g_free it) the first tile of each, then @tiles. Output channels in
 * blocks of *@mb rows (at most 64; with few tasks, as many blocks as
 * share out evenly over @slices); returns the number of those blocks
 * that share out so (ceil (c_out / mb) may be fewer). */
gint64 ir_winograd_blocks (const M2iGemmArch *arch, gint64 tiles, gint64 c_out, gint slices,
    gint64 *tail, gint64 *blocks, gint64 **block_start, gint64 *mb);

/* Packs the @n_xi matrices of @plain ([ξ][c_out][c_in]) as GEMM A, each
 * at u + ξ·u_stride (u_stride: ir_gemm_packed_a_size (c_out, c_in)). */
void ir_winograd_pack_u (const M2iGemmArch *arch, const float *plain, gint n_xi,
    gint64 c_out, gint64 c_in, float *u, gsize u_stride);

/* The rows of V and M for blocks of output-channel @mb rows: *@vw floats
 * a row (a column panel, and a tail's vector when @tail), *@v_stride and
 * *@m_stride floats between their matrices; returns V's row table (c_in
 * entries p · vw, g_free it). */
gint32 *ir_winograd_v_layout (const M2iGemmArch *arch, gint64 tail, gint64 c_in, gint64 mb,
    gint64 *vw, gsize *v_stride, gsize *m_stride);

/* The @n_xi products M[ξ] = U[ξ] · V[ξ] of one task: output channels
 * [r0, r0 + rows) of the packed U (@u, @u_stride floats apart, rows of
 * c_in) times V (@v_stride floats apart, row p at v + v_off[p]) for
 * @ncols tiles, the last @tail of them by the tail kernel, into M (rows
 * @vw floats apart, @m_stride apart). @strip: ir_gemm_strip_size (). */
void ir_winograd_products (const M2iGemmArch *arch, gint n_xi, const float *u,
    gsize u_stride, gint64 r0, gint64 rows, gint64 c_in, const float *v, gsize v_stride,
    const gint32 *v_off, gint64 vw, float *m, gsize m_stride, gint ncols, gint tail,
    float *strip);

G_END_DECLS
