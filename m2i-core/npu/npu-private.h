/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* npu-private.h — internals of the compute engine (not installed; split/
 * uses the blocked-tensor helpers).
 *
 * Convolution runs in two steps per batch item:
 *  1. the input is copied into a padded buffer in the kernel's element
 *     format (u8 = x+128 for VNNI, s16 = x-z for AVX2 and C, f32 for fp16),
 *     with the padding value written explicitly and, for stride sx > 1, the
 *     columns split into sx phases so that consecutive output pixels read
 *     consecutive buffer pixels for every tap;
 *  2. micro-kernels compute tiles of M output pixels × one tile of output
 *     channels from the padded buffer and packed weights, then requantize
 *     and store into the blocked output.
 * Padded buffer: [ph][cb_in][pw][8], pw = sx * pws.
 */
#pragma once

#include <npu/m2i-npu.h>

G_BEGIN_DECLS

/* Channel blocks of eight: how many hold @x channels. */
#define CEIL8(x) (((x) + 7) / 8)

typedef enum {
  NPU_PATH_C = 0,          /* plain C, one output block per tile */
  NPU_PATH_DEPTHWISE,      /* plain C (vectorizable), groups == channels */
  NPU_PATH_AVX2,           /* int8: vpmaddwd on s16; fp16: FMA on f32 */
  NPU_PATH_AVX512,         /* int8: vpdpbusd on u8 (VNNI); fp16: zmm FMA */
} NpuPath;

/* Element formats of the padded buffer. */
typedef enum { NPU_PAD_U8, NPU_PAD_S16, NPU_PAD_F32 } NpuPadFormat;

typedef struct {
  gint ob0, nb;            /* first output block and block count */
  gint nz;                 /* vector registers per pixel */
  gint cb0, ncb;           /* input blocks the tile reads */
  gsize w_offset;          /* bytes into packed */
} NpuTile;

struct _M2iNpuConv {
  M2iNpuPrecision precision;
  M2iNpuConvGeometry g;    /* the layer, as the caller described it */
  /* The geometry the kernels compute: g, or for a layer with few input
   * channels the "folded" one, where the kernel's columns become channels
   * (channel kx*C + c of virtual pixel x is input pixel x*sx + kx*dx - pl)
   * and the kernel is kh × 1 on a virtual input ow wide. */
  M2iNpuConvGeometry kg;
  gboolean fold;
  gint oh, ow;
  gint ig, og;             /* channels per group */
  gint cb_in, cb_out, taps;
  NpuPath path;
  NpuPath dw_isa;          /* depthwise layers: AVX512, AVX2 or C kernels */
  NpuPadFormat pad_format;
  gsize pad_elem;          /* bytes per padded-buffer element */

  gint n_tiles;
  NpuTile *tiles;
  gint lanes;              /* output channels per vector (16 zmm, 8 ymm / C) */
  guint8 *packed;
  gsize packed_bytes;

  /* Per output channel, padded to the tiles' full width. */
  gint32 *bias;            /* int8; VNNI folds -(z + 128)·Σw in */
  gint32 *mult, *lshift, *rshift;   /* MULTIPLIER; SHIFT uses rshift */
  gint32 *nmult, *nlshift, *nrshift;  /* PReLU: the negative branch (int8) */
  float *fbias;
  float *fslope;           /* PReLU: slopes (fp16 layers) */
  gboolean prelu;          /* a PReLU epilogue: nmult… (int8) or fslope (fp16) */
  M2iNpuRequantScheme scheme;
  gboolean any_lshift;     /* some MULTIPLIER shift (either branch) is > 0 */
  M2iMliRound round;
  gint32 in_zero, out_zero, act_min, act_max;
  float f_min, f_max;

  /* Padded buffer geometry (elements) and tap offsets (bytes). */
  gint ph, pws, pw;
  gint64 cb_pitch, row_pitch;
  gint64 *tap_off;
  gint M;                  /* output pixels per micro-tile */
  /* Smallest slices worth a worker thread (items of pad_rows / conv_rows). */
  gint pad_grain, conv_grain;

  gsize scratch_bytes;
  gpointer own_scratch;
};

/* What one micro-kernel call computes and where it stores. */
typedef struct {
  const M2iNpuConv *conv;
  const guint8 *a;         /* tile origin in the padded buffer */
  gint64 cb_pitch;         /* bytes */
  gint ncb;
  const void *w;           /* the tile's packed weights */
  const gint32 *bias, *mult, *lshift, *rshift;   /* from the tile's first channel */
  const gint32 *nmult, *nlshift, *nrshift;        /* PReLU (int8), or NULL */
  const float *fbias;
  const float *fslope;     /* PReLU (fp16), or NULL */
  guint8 *out;             /* output element (b, oy, first block, ox0) */
  gint64 out_block;        /* bytes between output blocks */
  gint nb;                 /* blocks to store */
  gint m;                  /* pixels to store (<= the kernel's M) */
} NpuTileArgs;

typedef void (*NpuTileFunc) (const NpuTileArgs *args);

/* x86 kernels (npu-conv-x86.c). Returns NULL when @path has no kernel for
 * this precision, @M or @nz. Max M per path: */
#define NPU_AVX512_MAX_M 14
#define NPU_AVX2_MAX_M 6
NpuTileFunc npu_x86_tile_func (NpuPath path, M2iNpuPrecision p, gint M, gint nz);
/* Converts @n input pixels (8 lanes, @step input elements apart) into the
 * padded buffer's format; NULL when the CPU lacks AVX2 + F16C. */
typedef void (*NpuConvertFunc) (const M2iNpuConv *c, guint8 *d, const guint8 *s,
    gint64 step, gint64 n);
NpuConvertFunc npu_x86_convert_func (void);

/* Depthwise kernels (any number of pixels), or NULL for @isa C. */
NpuTileFunc npu_x86_dw_func (NpuPath isa, M2iNpuPrecision p);

/* Pooling window of output index @o along one axis: padded-area [lo, hi)
 * and the part inside the input [vlo, vhi). */
static inline void
npu_pool_window (gint o, gint s, gint pb, gint pe, gint k, gint in, gint *lo, gint *hi,
    gint *vlo, gint *vhi)
{
  *lo = o * s - pb;
  *hi = MIN (*lo + k, in + pe);
  *vlo = MAX (*lo, 0);
  *vhi = MIN (*hi, in);
}

/* One output row of one channel block of an fp16 pooling: @src is the
 * block's first input element (pixel (y, x) at src + y*in_row + x*8),
 * [vy0, vy1) the rows inside the input and wy the window's padded height.
 * The vector kernels compute exactly what the scalar loops of npu-ops.c do:
 * MAX keeps f > acc ? f : acc from -inf, AVG adds in window order in fp32
 * and divides by the count, one rounding to fp16. */
typedef struct {
  const M2iNpuPoolParams *p;
  const m2i_f16 *src;
  gint64 in_row;
  gint in_w;
  gint vy0, vy1, wy;
  m2i_f16 *dst;
  gint ow;
} NpuPoolRow;

typedef void (*NpuPoolRowFunc) (const NpuPoolRow *r);
/* The fp16 pooling row kernel for this CPU (AVX-512 or AVX2 with F16C), or
 * NULL for the plain-C loops. */
NpuPoolRowFunc npu_x86_pool_f16_func (void);

/* fp16 PReLU of @n_px pixels (8 lanes each, dense; @dst may be @src) with
 * the block's 8 slopes; NULL without AVX2 + F16C. Same results as the C
 * loop (x < 0 ? x·slope : x in fp32, one rounding). */
typedef void (*NpuPreluF16Func) (const m2i_f16 *src, m2i_f16 *dst, gint64 n_px,
    const float *slope8);
NpuPreluF16Func npu_x86_prelu_f16_func (void);

/* fp16 add of @n_px pixels: v = a + b, PReLU with the block's 8 slopes
 * when @slope8 is not NULL, clamp to [lo, hi], one rounding; NULL without
 * AVX2 + F16C. Same results as the C loop of npu-ops.c. */
typedef void (*NpuAddF16Func) (const m2i_f16 *a, const m2i_f16 *b, m2i_f16 *dst, gint64 n_px,
    float lo, float hi, const float *slope8);
NpuAddF16Func npu_x86_add_f16_func (void);

/* One row of one channel block converted between NCHW (f32 or f16, W
 * contiguous, channel rows @plane elements apart) and an fp16 blocked row
 * (@w pixels of 8): to blocked, lanes >= @lanes get +0; back, only @lanes
 * rows are written. f32 → f16 rounds to nearest even (m2i_f32_to_f16),
 * f16 → f32 is exact, f16 → f16 copies. */
typedef struct {
  gboolean to_blocked;
  gboolean f32;              /* the NCHW side's type: f32, else f16 */
  gpointer nchw;             /* channel 0 of the block, row y */
  gint64 plane;              /* elements between channel rows */
  m2i_f16 *blocked;          /* pixel 0 of the block's row y */
  gint lanes, w;
} NpuLayoutRow;

typedef void (*NpuLayoutRowFunc) (const NpuLayoutRow *r);
/* Pixels [x0, w) of @r, one element at a time (the C path, and the vector
 * kernel's tail). */
void npu_layout_row_tail (const NpuLayoutRow *r, gint x0);
/* The F16C kernel, or NULL without AVX2 + F16C. */
NpuLayoutRowFunc npu_x86_layout_row_func (void);

/* Scalar requantization (multiplier, left and right shift; docs/npu.md),
 * shared by the C kernels and the element-wise ops. */
gint32 npu_mbqm (gint32 x, gint32 multiplier, gint lshift, gint rshift);
/* m2i_npu_quantize_multiplier for any sign: the multiplier carries the sign
 * of @real; |real| < 2^-32 gives 0. FALSE for non-finite or too large. */
gboolean npu_quantize_signed (double real, gint32 *multiplier, gint8 *shift);

/* Shared checks (npu_tensor_strides: element strides of a blocked tensor,
 * 0 = dense as m2i-npu.h defines; split execution uses it too). */
gboolean npu_tensor_expect (const M2iNpuTensor *t, const char *what,
    M2iNpuPrecision p, gint n, gint c, gint h, gint w, GError **error);
void npu_tensor_strides (const M2iNpuTensor *t, gint64 *block, gint64 *row,
    gint64 *batch);
gsize npu_precision_size (M2iNpuPrecision p);

G_END_DECLS
